/* mktrace: write a synthetic .gtrace (tests/trace-synth.h) for CLI tests and benchmarks.
 * Runs as a test helper. Deterministic: the same options give the same bytes.
 *   mktrace -o FILE [--kernels N] [--names K] [--processes P] [--seed S] [--api] [--memcpy]
 *           [--losses N] [--chunk-bytes B] [--no-footer] [--cupti-notices] [--nccl] [--steps]
 *           [--host NAME] [--pid P] [--rank R] [--world W] [--clock-offset NS]
 *           [--wall-error NS] [--nccl-every N] [--nccl-jitter NS]
 *           [--device-zero] [--memory] [--slow-name K] [--rename K] [--straggler P:S,S...]
 *           [--sync-steps]
 *   mktrace -o FILE --reused-pid
 *   mktrace -o FILE --torch-ops
 * --no-footer leaves the file as a killed writer would: every chunk, no footer.
 * --cupti-notices leaves the header's CUPTI version out and has each process report the
 * CUPTI it loaded in a notice instead, as under gputrace run: process p reports
 * 130001 - 100 * (p % 2). --nccl names one kernel of every step after NCCL's all-reduce;
 * --steps puts an NVTX range "step" around each step's launches.
 * --device-zero: every process sees its own GPU (its own uuid) as device 0, as ranks run with
 * CUDA_VISIBLE_DEVICES=<rank> do. --memory: process p allocates p + 1 blocks of 256 MiB of
 * device memory before its kernels and frees them at its end (its GPU's peak: p + 1 blocks).
 * For gputrace merge, one host of several: --host names it (header and processes), --pid the
 * first pid, --rank the first rank (--world the world size); --clock-offset NS runs this
 * host's trace clock NS from the true time (the header's anchor knows it: the wall clock
 * maps it back exactly) and --wall-error NS puts the host's wall clock NS off (as NTP
 * leaves it: the anchor then maps NS wrong); --nccl-every N makes every N-th kernel of a
 * process an NCCL collective that ends at the same true time on every rank, --nccl-jitter
 * NS spreads those ends by up to 2 NS either way.
 * Known differences, for gputrace diff: --slow-name K makes kernel name K run twice as long,
 * --rename K calls it "<name>_renamed" (everything else stays as it was, to the nanosecond).
 * Known stragglers, for stats across ranks: --straggler P:S,... makes process P's kernels run
 * three times as long in its steps S (counted from 0, below 64); --sync-steps ends each step
 * range when the step's GPU work has ended, as after torch.cuda.synchronize().
 * --reused-pid writes instead a small merged trace of two hosts whose processes both have
 * pid 4100 and keep it (as gputrace merge would write it if it did not rename one; every
 * output must still show two processes): its INPUT and ORIGIN records, then node-a's
 * process (rank 0, GPU uuid 0xaa.., 3 launches and kernels, 1 MiB of device memory at
 * 0x7f0000000000 never freed), then node-b's (rank 1, GPU uuid 0xbb.., 2 launches and
 * kernels with correlation ids 1 and 2 again, 2 MiB at the same address, then freed), each
 * whole in the file; the times of the two overlap.
 * --torch-ops writes instead one process (pid 4200, rank 0) whose NVTX ranges are those PyTorch's
 * emit_nvtx(record_shapes=True) pushes: on thread 4200 a range "forward" (not an operator)
 * holding aten::linear (aten::t and aten::addmm in it), aten::relu and aten::addmm, and on
 * thread 4201 AddmmBackward0; seven calls with GPU work (correlation ids 1 to 7; 4 outside
 * every operator, 6 a copy, 3's kernel written before its call). The times are in
 * write_torch_ops; tests/cli-pytorch.sh checks the outputs against them. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gputrace/trace.h"
#include "trace-synth.h"

/* The header every synthetic trace carries; tests/test-info.sh expects these values. */
static const struct gt_trace_info info = {
        .clock_id = GT_CLOCK_MONOTONIC,
        .start_realtime_ns = 1714564800000000000ull, /* 2024-05-01T12:00:00Z */
        .start_trace_ns = SYNTH_START_NS,
        .hostname = "gpu-node-17",
        .cmdline = "python train.py --epochs 1 --batch-size 64",
        .tool_version = GT_VERSION,
        .cuda_version = "13.0",
        .cupti_version = "13.0.48",
        .driver_version = "580.65.06",
};

/* The writer's string ids of --reused-pid */
enum {
	RP_HOST_A = 1,
	RP_HOST_B,
	RP_EXE,
	RP_CMDLINE,
	RP_DEVICE,
	RP_KERNEL,
	RP_LAUNCH,
	RP_THREAD,
	RP_PATH_A,
	RP_PATH_B,
	RP_STRINGS
};

static int rp_put(struct gt_writer *w, void *rec, unsigned type, size_t size, uint32_t pid)
{
	struct gt_rec_hdr *h = rec;

	h->type = (uint16_t)type;
	h->size = (uint16_t)size;
	h->pid = pid;
	return gt_writer_write(w, h);
}

/* One host's process 4100 of --reused-pid: input `input` (1 or 2) on host host_id. */
static int rp_process(struct gt_writer *w, uint32_t input, uint32_t host_id, unsigned launches,
                      uint64_t mem_bytes, bool mem_free)
{
	const uint32_t pid = 4100;
	const uint64_t t0 = SYNTH_START_NS;
	struct gt_rec_origin o = {.input = input, .orig_pid = pid, .host_id = host_id};
	struct gt_rec_process p = {.start_ns = t0,
	                           .ppid = 1,
	                           .exe_id = RP_EXE,
	                           .cmdline_id = RP_CMDLINE,
	                           .host_id = host_id,
	                           .rank = (int32_t)input - 1,
	                           .local_rank = 0,
	                           .world_size = 2};
	struct gt_rec_thread t = {.tid = pid, .name_id = RP_THREAD};
	struct gt_rec_device d = {.global_mem_bytes = 150109880320ull,
	                          .name_id = RP_DEVICE,
	                          .sm_count = 132,
	                          .cc_major = 9,
	                          .max_threads_per_block = 1024,
	                          .max_shared_mem_per_block = 49152,
	                          .mem_clock_khz = 3201000,
	                          .clock_khz = 1980000,
	                          .mem_bus_width = 6144};
	struct gt_rec_context c = {.context_id = 1};
	struct gt_rec_stream st = {.stream_id = 7, .context_id = 1};
	struct gt_rec_memory m = {.ts_ns = t0 + 500,
	                          .address = 0x7f0000000000ull,
	                          .bytes = mem_bytes,
	                          .context_id = 1,
	                          .op = GT_MEMORY_ALLOC,
	                          .mem_kind = GT_MEM_DEVICE};
	struct gt_rec_process_end e = {.ts_ns = t0 + 100000, .how = GT_END_EXIT};
	int r;

	memset(d.uuid, input == 1 ? 0xaa : 0xbb, sizeof(d.uuid));
	if ((r = rp_put(w, &o, GT_REC_ORIGIN, sizeof(o), pid)) < 0 ||
	    (r = rp_put(w, &p, GT_REC_PROCESS, sizeof(p), pid)) < 0 ||
	    (r = rp_put(w, &t, GT_REC_THREAD, sizeof(t), pid)) < 0 ||
	    (r = rp_put(w, &d, GT_REC_DEVICE, sizeof(d), pid)) < 0 ||
	    (r = rp_put(w, &c, GT_REC_CONTEXT, sizeof(c), pid)) < 0 ||
	    (r = rp_put(w, &st, GT_REC_STREAM, sizeof(st), pid)) < 0 ||
	    (r = rp_put(w, &m, GT_REC_MEMORY, sizeof(m), pid)) < 0)
		return r;
	for (unsigned i = 0; i < launches; i++) {
		uint64_t at = t0 + 1000 + 10000 * i;
		struct gt_rec_api a = {.start_ns = at,
		                       .end_ns = at + 2000,
		                       .tid = pid,
		                       .correlation_id = i + 1,
		                       .cbid = SYNTH_CBID_LAUNCH,
		                       .name_id = RP_LAUNCH,
		                       .domain = GT_API_RUNTIME};
		struct gt_rec_kernel k = {.span = {.start_ns = at + 3000,
		                                   .end_ns = at + 8000 + 1000 * input,
		                                   .correlation_id = i + 1,
		                                   .context_id = 1,
		                                   .stream_id = 7},
		                          .name_id = RP_KERNEL,
		                          .grid_x = 1,
		                          .grid_y = 1,
		                          .grid_z = 1,
		                          .block_x = 128,
		                          .block_y = 1,
		                          .block_z = 1};

		if ((r = rp_put(w, &a, GT_REC_API, sizeof(a), pid)) < 0 ||
		    (r = rp_put(w, &k, GT_REC_KERNEL, sizeof(k), pid)) < 0)
			return r;
	}
	if (mem_free) {
		m.ts_ns = t0 + 90000;
		m.op = GT_MEMORY_FREE;
		if ((r = rp_put(w, &m, GT_REC_MEMORY, sizeof(m), pid)) < 0)
			return r;
	}
	return rp_put(w, &e, GT_REC_PROCESS_END, sizeof(e), pid);
}

/* --torch-ops: see the top of the file. Returns the records written or -errno. */
enum {
	TO_EXE = 1,
	TO_CMDLINE,
	TO_DEVICE,
	TO_THREAD,
	TO_LAUNCH,
	TO_MEMCPY,
	TO_GEMM,
	TO_BIAS,
	TO_RELU,
	TO_OTHER,
	TO_FORWARD,
	TO_LINEAR,
	TO_T,
	TO_ADDMM1,
	TO_RELU_OP,
	TO_ADDMM2,
	TO_BACKWARD,
	TO_STRINGS
};

static int64_t write_torch_ops(struct gt_writer *w)
{
	static const char *const strings[TO_STRINGS] = {
	        [TO_EXE] = "/usr/bin/python3",
	        [TO_CMDLINE] = "python3 model.py",
	        [TO_DEVICE] = "NVIDIA H200",
	        [TO_THREAD] = "MainThread",
	        [TO_LAUNCH] = "cudaLaunchKernel",
	        [TO_MEMCPY] = "cudaMemcpyAsync",
	        [TO_GEMM] = "sm90_gemm",
	        [TO_BIAS] = "bias_add",
	        [TO_RELU] = "relu_kernel",
	        [TO_OTHER] = "other_kernel",
	        [TO_FORWARD] = "forward",
	        [TO_LINEAR] = "aten::linear, seq = 3, op_id = 10, sizes = [[64, 128], [32, 128], "
	                      "[32]], input_op_ids = [(7,0), (8,0), (9,0)]",
	        [TO_T] = "aten::t, op_id = 11, sizes = [[32, 128]]",
	        [TO_ADDMM1] = "aten::addmm, seq = 4, op_id = 12, sizes = [[32], [64, 128], [128, "
	                      "32], [], []]",
	        [TO_RELU_OP] = "aten::relu, seq = 5, op_id = 13, sizes = [[64, 32]]",
	        [TO_ADDMM2] = "aten::addmm, seq = 6, op_id = 14, sizes = [[32], [16, 128], [128, "
	                      "32], [], []]",
	        [TO_BACKWARD] = "AddmmBackward0, seq = 4, op_id = 20",
	};
	/* relative to t0: range [start, end), thread, depth, message */
	static const struct {
		uint32_t start, end, tid, depth, msg;
	} ranges[] = {
	        {1100, 1500, 4200, 2, TO_T},        {2000, 8000, 4200, 2, TO_ADDMM1},
	        {1000, 9000, 4200, 1, TO_LINEAR},   {10000, 12000, 4200, 1, TO_RELU_OP},
	        {14000, 16000, 4200, 1, TO_ADDMM2}, {0, 20000, 4200, 0, TO_FORWARD},
	        {18000, 19500, 4201, 0, TO_BACKWARD},
	};
	/* calls: start, end, thread, name; their GPU work: start, end, kernel name (0: a
	 * copy); correlation id = index + 1 */
	static const struct {
		uint32_t start, end, tid, name, gstart, gend, kernel;
	} calls[] = {
	        {3000, 3500, 4200, TO_LAUNCH, 4000, 6000, TO_GEMM},
	        {5000, 5500, 4200, TO_LAUNCH, 6000, 6500, TO_BIAS},
	        {10500, 11000, 4200, TO_LAUNCH, 11000, 11800, TO_RELU},
	        {12500, 13000, 4200, TO_LAUNCH, 13000, 13500, TO_OTHER},
	        {14500, 15000, 4200, TO_LAUNCH, 15000, 17000, TO_GEMM},
	        {15200, 15400, 4200, TO_MEMCPY, 17000, 17500, 0},
	        {18500, 18800, 4201, TO_LAUNCH, 19000, 21000, TO_GEMM},
	};
	const uint32_t pid = 4200;
	const uint64_t t0 = SYNTH_START_NS + 1000;
	struct gt_rec_process p = {.start_ns = SYNTH_START_NS,
	                           .ppid = 1,
	                           .exe_id = TO_EXE,
	                           .cmdline_id = TO_CMDLINE,
	                           .rank = 0,
	                           .local_rank = 0,
	                           .world_size = 1};
	struct gt_rec_thread t = {.tid = pid, .name_id = TO_THREAD};
	struct gt_rec_device d = {.global_mem_bytes = 150109880320ull,
	                          .name_id = TO_DEVICE,
	                          .sm_count = 132,
	                          .cc_major = 9};
	struct gt_rec_context c = {.context_id = 1};
	struct gt_rec_stream st = {.stream_id = 7, .context_id = 1};
	struct gt_rec_process_end e = {.ts_ns = t0 + 30000, .how = GT_END_EXIT};
	int64_t n = TO_STRINGS - 1;
	int r;

	memset(d.uuid, 0xcc, sizeof(d.uuid));
	for (uint32_t i = 1; i < TO_STRINGS; i++) {
		r = gt_writer_string(w, 0, i, strings[i], strlen(strings[i]));
		if (r < 0)
			return r;
	}
	if ((r = rp_put(w, &p, GT_REC_PROCESS, sizeof(p), pid)) < 0 ||
	    (r = rp_put(w, &t, GT_REC_THREAD, sizeof(t), pid)) < 0 ||
	    (r = rp_put(w, &d, GT_REC_DEVICE, sizeof(d), pid)) < 0 ||
	    (r = rp_put(w, &c, GT_REC_CONTEXT, sizeof(c), pid)) < 0 ||
	    (r = rp_put(w, &st, GT_REC_STREAM, sizeof(st), pid)) < 0)
		return r;
	n += 5;
	/* the ranges as NVTX records them, at their pops: inner first */
	for (size_t i = 0; i < sizeof(ranges) / sizeof(ranges[0]); i++) {
		struct gt_rec_nvtx v = {.start_ns = t0 + ranges[i].start,
		                        .end_ns = t0 + ranges[i].end,
		                        .tid = ranges[i].tid,
		                        .end_tid = ranges[i].tid,
		                        .message_id = ranges[i].msg,
		                        .kind = GT_NVTX_PUSH_POP,
		                        .depth = ranges[i].depth};

		if ((r = rp_put(w, &v, GT_REC_NVTX, sizeof(v), pid)) < 0)
			return r;
		n++;
	}
	/* each call, then its GPU work; the third's kernel comes first */
	for (uint32_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++) {
		struct gt_rec_api a = {.start_ns = t0 + calls[i].start,
		                       .end_ns = t0 + calls[i].end,
		                       .tid = calls[i].tid,
		                       .correlation_id = i + 1,
		                       .cbid = calls[i].kernel ? SYNTH_CBID_LAUNCH : 41,
		                       .name_id = calls[i].name,
		                       .domain = GT_API_RUNTIME};
		struct gt_gpu_span span = {.start_ns = t0 + calls[i].gstart,
		                           .end_ns = t0 + calls[i].gend,
		                           .correlation_id = i + 1,
		                           .context_id = 1,
		                           .stream_id = 7};
		struct gt_rec_kernel k = {.span = span,
		                          .name_id = calls[i].kernel,
		                          .grid_x = 1,
		                          .grid_y = 1,
		                          .grid_z = 1,
		                          .block_x = 128,
		                          .block_y = 1,
		                          .block_z = 1};
		struct gt_rec_memcpy m = {.span = span,
		                          .bytes = 1u << 20,
		                          .copy_kind = GT_MEMCPY_HTOD,
		                          .flags = GT_COPY_ASYNC};

		if (i != 2 && (r = rp_put(w, &a, GT_REC_API, sizeof(a), pid)) < 0)
			return r;
		if (calls[i].kernel)
			r = rp_put(w, &k, GT_REC_KERNEL, sizeof(k), pid);
		else
			r = rp_put(w, &m, GT_REC_MEMCPY, sizeof(m), pid);
		if (r < 0 || (i == 2 && (r = rp_put(w, &a, GT_REC_API, sizeof(a), pid)) < 0))
			return r;
		n += 2;
	}
	if ((r = rp_put(w, &e, GT_REC_PROCESS_END, sizeof(e), pid)) < 0)
		return r;
	return n + 1;
}

/* --reused-pid: see the top of the file. Returns the records written or -errno. */
static int64_t write_reused_pid(struct gt_writer *w)
{
	static const char *const strings[RP_STRINGS] = {
	        [RP_HOST_A] = "node-a",           [RP_HOST_B] = "node-b",
	        [RP_EXE] = "/usr/bin/python3",    [RP_CMDLINE] = "python3 train.py",
	        [RP_DEVICE] = "NVIDIA H200",      [RP_KERNEL] = "gemm_kernel",
	        [RP_LAUNCH] = "cudaLaunchKernel", [RP_THREAD] = "MainThread",
	        [RP_PATH_A] = "a.gtrace",         [RP_PATH_B] = "b.gtrace",
	};
	int r;

	for (uint32_t i = 1; i < RP_STRINGS; i++) {
		r = gt_writer_string(w, 0, i, strings[i], strlen(strings[i]));
		if (r < 0)
			return r;
	}
	/* node-a's process whole in the file before node-b's: the records of a pid belong to
	 * its latest process, and the writer puts state records (process, device, memory ...)
	 * ahead of the events it holds, so the flush keeps node-a's events before node-b's
	 * PROCESS record */
	if ((r = rp_process(w, 1, RP_HOST_A, 3, 1u << 20, false)) < 0 ||
	    (r = gt_writer_flush(w)) < 0 ||
	    (r = rp_process(w, 2, RP_HOST_B, 2, 2u << 20, true)) < 0)
		return r;
	for (uint32_t i = 1; i <= 2; i++) {
		struct gt_rec_input in = {.start_realtime_ns = info.start_realtime_ns,
		                          .start_trace_ns = SYNTH_START_NS,
		                          .records = i == 1 ? 14 : 13,
		                          .index = i,
		                          .version = 1,
		                          .clock_id = GT_CLOCK_MONOTONIC,
		                          .path_id = i == 1 ? RP_PATH_A : RP_PATH_B,
		                          .hostname_id = i == 1 ? RP_HOST_A : RP_HOST_B,
		                          .cmdline_id = RP_CMDLINE};

		r = rp_put(w, &in, GT_REC_INPUT, sizeof(in), 0);
		if (r < 0)
			return r;
	}
	return RP_STRINGS - 1 + 14 + 13 + 2;
}

static void usage(FILE *out)
{
	fputs("Usage: mktrace -o FILE [--kernels N] [--names K] [--processes P] [--seed S]\n"
	      "               [--api] [--memcpy] [--losses N] [--chunk-bytes B] [--no-footer]\n"
	      "               [--cupti-notices] [--nccl] [--steps] [--host NAME] [--pid P]\n"
	      "               [--rank R] [--world W] [--clock-offset NS] [--wall-error NS]\n"
	      "               [--nccl-every N] [--nccl-jitter NS] [--device-zero] [--memory]\n"
	      "               [--slow-name K] [--rename K] [--straggler P:S,S...] [--sync-steps]\n"
	      "       mktrace -o FILE --reused-pid\n"
	      "       mktrace -o FILE --torch-ops\n"
	      "Write a synthetic trace shaped like a training loop.\n",
	      out);
}

static int number(const char *opt, const char *s, uint64_t max, uint64_t *ret)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || *end || v > max || s[0] == '-') {
		fprintf(stderr, "mktrace: %s takes a number up to %llu, not '%s'\n", opt,
		        (unsigned long long)max, s);
		return -1;
	}
	*ret = v;
	return 0;
}

/* "P:S,S,...": process P's kernels run 3x as long in its steps S. */
static int straggler(const char *arg, struct synth_opts *o)
{
	char *end;
	unsigned long p = strtoul(arg, &end, 10);

	if (end == arg || *end != ':' || p >= 64)
		goto bad;
	o->straggler = (unsigned)p + 1;
	do {
		unsigned long step = strtoul(end + 1, &end, 10);

		if (step >= 64 || (*end && *end != ','))
			goto bad;
		o->straggler_steps |= 1ull << step;
	} while (*end);
	return 0;
bad:
	fprintf(stderr, "mktrace: --straggler takes PROCESS:STEP,STEP... (below 64), not '%s'\n",
	        arg);
	return -1;
}

static int signed_number(const char *opt, const char *s, int64_t *ret)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || end == s || *end) {
		fprintf(stderr, "mktrace: %s takes a signed number of nanoseconds, not '%s'\n", opt,
		        s);
		return -1;
	}
	*ret = v;
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
	        {"output", required_argument, NULL, 'o'},
	        {"kernels", required_argument, NULL, 'k'},
	        {"names", required_argument, NULL, 'n'},
	        {"processes", required_argument, NULL, 'p'},
	        {"seed", required_argument, NULL, 's'},
	        {"api", no_argument, NULL, 'a'},
	        {"memcpy", no_argument, NULL, 'm'},
	        {"losses", required_argument, NULL, 'l'},
	        {"chunk-bytes", required_argument, NULL, 'c'},
	        {"no-footer", no_argument, NULL, 'F'},
	        {"cupti-notices", no_argument, NULL, 'C'},
	        {"nccl", no_argument, NULL, 'N'},
	        {"steps", no_argument, NULL, 'S'},
	        {"host", required_argument, NULL, 'H'},
	        {"pid", required_argument, NULL, 'P'},
	        {"rank", required_argument, NULL, 'R'},
	        {"world", required_argument, NULL, 'W'},
	        {"clock-offset", required_argument, NULL, 'O'},
	        {"wall-error", required_argument, NULL, 'E'},
	        {"nccl-every", required_argument, NULL, 'V'},
	        {"nccl-jitter", required_argument, NULL, 'J'},
	        {"device-zero", no_argument, NULL, 'Z'},
	        {"memory", no_argument, NULL, 'M'},
	        {"slow-name", required_argument, NULL, 'L'},
	        {"rename", required_argument, NULL, 'X'},
	        {"straggler", required_argument, NULL, 'T'},
	        {"sync-steps", no_argument, NULL, 'Y'},
	        {"reused-pid", no_argument, NULL, 'U'},
	        {"torch-ops", no_argument, NULL, 'G'},
	        {"help", no_argument, NULL, 'h'},
	        {NULL, 0, NULL, 0},
	};
	struct synth_opts o = {.kernels = 1000, .names = 100, .processes = 1, .seed = 1};
	struct gt_writer_options wo = {0};
	const char *path = NULL;
	bool footer = true, cupti_notices = false, reused_pid = false, torch_ops = false;
	struct gt_trace_info hinfo = info;
	struct gt_writer *w;
	union synth_buf b;
	struct synth s;
	uint64_t v, n = 0;
	int64_t sv;
	char tmp[4096];
	int c, r;

	while ((c = getopt_long(argc, argv, "o:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			path = optarg;
			break;
		case 'k':
			if (number("--kernels", optarg, UINT64_MAX / 2, &o.kernels) < 0)
				return 64;
			break;
		case 'n':
			if (number("--names", optarg, 1000000, &v) < 0 || !v)
				return 64;
			o.names = (unsigned)v;
			break;
		case 'p':
			if (number("--processes", optarg, 64, &v) < 0 || !v)
				return 64;
			o.processes = (unsigned)v;
			break;
		case 's':
			if (number("--seed", optarg, UINT64_MAX, &o.seed) < 0)
				return 64;
			break;
		case 'a':
			o.api = true;
			break;
		case 'm':
			o.memcpy = true;
			break;
		case 'l':
			if (number("--losses", optarg, UINT64_MAX, &o.losses) < 0)
				return 64;
			break;
		case 'c':
			if (number("--chunk-bytes", optarg, 64u << 20, &v) < 0)
				return 64;
			wo.chunk_bytes = (size_t)v;
			break;
		case 'F':
			footer = false;
			break;
		case 'C':
			cupti_notices = true;
			hinfo.cupti_version = NULL;
			break;
		case 'N':
			o.nccl = true;
			break;
		case 'S':
			o.steps = true;
			break;
		case 'H':
			o.host = optarg;
			hinfo.hostname = optarg;
			break;
		case 'P':
			if (number("--pid", optarg, UINT32_MAX - 64 * 7, &v) < 0 || !v)
				return 64;
			o.pid0 = (uint32_t)v;
			break;
		case 'R':
			if (number("--rank", optarg, INT32_MAX - 64, &v) < 0)
				return 64;
			o.rank0 = (int32_t)v;
			if (!o.world)
				o.world = 1;
			break;
		case 'W':
			if (number("--world", optarg, INT32_MAX, &v) < 0 || !v)
				return 64;
			o.world = (unsigned)v;
			break;
		case 'O':
			if (signed_number("--clock-offset", optarg, &sv) < 0)
				return 64;
			o.clock_offset_ns = sv;
			break;
		case 'E':
			if (signed_number("--wall-error", optarg, &sv) < 0)
				return 64;
			o.wall_error_ns = sv;
			break;
		case 'V':
			if (number("--nccl-every", optarg, UINT32_MAX, &v) < 0)
				return 64;
			o.nccl_every = (unsigned)v;
			break;
		case 'J':
			if (number("--nccl-jitter", optarg, 1000000000, &v) < 0)
				return 64;
			o.nccl_jitter_ns = v;
			break;
		case 'Z':
			o.device_zero = true;
			break;
		case 'M':
			o.memory = true;
			break;
		case 'L':
			if (number("--slow-name", optarg, 999999, &v) < 0)
				return 64;
			o.slow_name = (unsigned)v + 1;
			break;
		case 'X':
			if (number("--rename", optarg, 999999, &v) < 0)
				return 64;
			o.rename = (unsigned)v + 1;
			break;
		case 'T':
			if (straggler(optarg, &o) < 0)
				return 64;
			break;
		case 'Y':
			o.sync_steps = true;
			break;
		case 'U':
			reused_pid = true;
			hinfo.hostname = "node-a,node-b";
			hinfo.cmdline = "gputrace merge -o job.gtrace a.gtrace b.gtrace";
			break;
		case 'G':
			torch_ops = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 64;
		}
	}
	if (!path || optind != argc) {
		usage(stderr);
		return 64;
	}
	hinfo.start_trace_ns += (uint64_t)o.clock_offset_ns;
	hinfo.start_realtime_ns += (uint64_t)o.wall_error_ns;
	r = gt_writer_open(path, &hinfo, &wo, &w);
	if (r < 0) {
		fprintf(stderr, "mktrace: %s: %s\n", path, strerror(-r));
		return 73;
	}
	if (reused_pid) {
		int64_t rn = write_reused_pid(w);

		if (rn < 0) {
			r = (int)rn;
			goto fail;
		}
		n = (uint64_t)rn;
		o.kernels = 5;
		o.processes = 0; /* no CUPTI notices below */
	}
	if (torch_ops) {
		int64_t rn = write_torch_ops(w);

		if (rn < 0) {
			r = (int)rn;
			goto fail;
		}
		n = (uint64_t)rn;
		o.kernels = 6;
		o.processes = 0;
		reused_pid = true; /* no synthesis below */
	}
	if (!reused_pid)
		synth_init(&s, &o);
	while (!reused_pid && synth_next(&s, &b)) {
		r = gt_writer_write(w, &b.rec.hdr);
		if (r < 0)
			goto fail;
		n++;
	}
	for (unsigned p = 0; cupti_notices && p < o.processes; p++) {
		struct gt_rec_notice nr = {{GT_REC_NOTICE, sizeof(nr), synth_pid_of(&o, p)}};
		char text[96];
		int len;

		nr.ts_ns = SYNTH_START_NS + (uint64_t)o.clock_offset_ns + 1000;
		nr.severity = GT_NOTICE_INFO;
		nr.code = GT_NOTICE_CUPTI_LOADED;
		nr.detail = 130001 - 100 * (int)(p % 2);
		nr.message_id = 900000 + p; /* above every id the synthesis uses */
		len = snprintf(text, sizeof(text),
		               "CUPTI %d from /usr/local/cuda/lib64/libcupti.so.13", nr.detail);
		r = gt_writer_string(w, nr.hdr.pid, nr.message_id, text, (size_t)len);
		if (r < 0 || (r = gt_writer_write(w, &nr.hdr)) < 0)
			goto fail;
		n += 2;
	}
	if (footer) {
		r = gt_writer_close(w);
		if (r < 0) {
			fprintf(stderr, "mktrace: %s: %s\n", path, strerror(-r));
			return 74;
		}
	} else {
		/* what a killed writer leaves: the chunks written so far, no footer */
		r = gt_writer_flush(w);
		if (r < 0)
			goto fail;
		snprintf(tmp, sizeof(tmp), "%s.tmp-%ld", path, (long)getpid());
		unlink(path);
		if (link(tmp, path) < 0) {
			r = -errno;
			goto fail;
		}
		gt_writer_discard(w);
	}
	printf("%s: %llu records (%llu kernels)%s\n", path, (unsigned long long)n,
	       (unsigned long long)o.kernels, footer ? "" : ", no footer");
	return 0;
fail:
	fprintf(stderr, "mktrace: %s: %s\n", path, strerror(-r));
	gt_writer_discard(w);
	return 74;
}
