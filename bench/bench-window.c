/* Window benchmark: a 1-second window from the middle of a long trace, exported through the
 * chunk index (seeking), against a full scan of the same trace, and the same window read by a
 * scan (the trace without its footer). Writes the trace first when it is missing: a training
 * loop of RANKS processes whose GPU keeps up with the CPU (each kernel starts after its launch
 * and after the one before it on its stream), steps of 100 ms in NVTX ranges ProfilerStep#K,
 * an allocation and a free per step. Runs by hand (docs/performance.md, "Windows"):
 *   bench-window [--records N] [--seconds S] [--ranks R] [--rounds K] [--regen] FILE
 * Exports go to /dev/null. FILE.nofooter is made and removed for the scan of the window. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "exporter.h"
#include "gputrace/trace.h"
#include "window.h"

#define NS_PER_S  1000000000ull
#define STEP_NS   (100 * 1000000ull)
#define T0        1000000000000ull
#define NAMES     300u
#define MAX_RANKS 8u
#define BATCH     32u /* kernels are written in batches, after their launches, as CUPTI's */

enum {
	S_EXE = 1,
	S_LAUNCH,
	S_MAIN,
	S_DEVICE,
	S_KERNEL0,                   /* kernel name k: S_KERNEL0 + k */
	S_STEP0 = S_KERNEL0 + NAMES, /* "ProfilerStep#k": S_STEP0 + k */
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t mix(uint64_t x)
{
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static int put(struct gt_writer *w, void *rec, unsigned type, size_t size, uint32_t pid)
{
	struct gt_rec_hdr *h = rec;

	h->type = (uint16_t)type;
	h->size = (uint16_t)size;
	h->pid = pid;
	return gt_writer_write(w, h);
}

/* The trace: `records` records over `seconds`, `ranks` processes. */
static int generate(const char *path, uint64_t records, unsigned seconds, unsigned ranks)
{
	static const struct gt_trace_info info = {
	        .clock_id = GT_CLOCK_MONOTONIC,
	        .start_realtime_ns = 1714564800000000000ull,
	        .start_trace_ns = T0,
	        .hostname = "bench",
	        .cmdline = "torchrun --nproc-per-node 2 train.py",
	        .tool_version = "bench-window",
	};
	uint64_t steps = (uint64_t)seconds * NS_PER_S / STEP_NS;
	/* per step and rank: launches (API + kernel), the step's range, an alloc and a free */
	uint64_t launches = (records / steps / ranks - 3) / 2;
	uint64_t gap = STEP_NS * 9 / 10 / launches, corr[MAX_RANKS] = {0};
	uint64_t gpu_free[MAX_RANKS] = {0};
	struct gt_writer *w;
	char name[128];
	int r;

	if (!launches || gap < 2000) {
		fprintf(stderr, "bench-window: %llu records in %u s is too dense\n",
		        (unsigned long long)records, seconds);
		return -EINVAL;
	}
	r = gt_writer_open(path, &info, NULL, &w);
	if (r < 0)
		return r;
	gt_writer_string(w, 100, S_EXE, "/usr/bin/python3", 16);
	gt_writer_string(w, 100, S_LAUNCH, "cudaLaunchKernel", 16);
	gt_writer_string(w, 100, S_MAIN, "pt_main_thread", 14);
	gt_writer_string(w, 100, S_DEVICE, "NVIDIA H200", 11);
	for (unsigned k = 0; k < NAMES; k++) {
		int n = snprintf(name, sizeof(name),
		                 "void at::native::kernel_%u<float>(float*, int)", k);

		gt_writer_string(w, 100, S_KERNEL0 + k, name, (size_t)n);
	}
	for (unsigned p = 0; p < ranks; p++) {
		uint32_t pid = 100 + p;
		struct gt_rec_process pr = {.start_ns = T0,
		                            .exe_id = S_EXE,
		                            .rank = (int32_t)p,
		                            .local_rank = (int32_t)p,
		                            .world_size = (int32_t)ranks};
		struct gt_rec_thread th = {.tid = pid, .name_id = S_MAIN};
		struct gt_rec_device dv = {.device_id = p, .name_id = S_DEVICE, .sm_count = 132};
		struct gt_rec_context cx = {.context_id = 1, .device_id = p};
		struct gt_rec_stream st = {.stream_id = 7, .context_id = 1, .device_id = p};

		dv.uuid[0] = (uint8_t)(p + 1);
		put(w, &pr, GT_REC_PROCESS, sizeof(pr), pid);
		put(w, &th, GT_REC_THREAD, sizeof(th), pid);
		put(w, &dv, GT_REC_DEVICE, sizeof(dv), pid);
		put(w, &cx, GT_REC_CONTEXT, sizeof(cx), pid);
		put(w, &st, GT_REC_STREAM, sizeof(st), pid);
	}
	for (uint64_t k = 0; k < steps && r == 0; k++) {
		int n = snprintf(name, sizeof(name), "ProfilerStep#%llu", (unsigned long long)k);

		r = gt_writer_string(w, 100, (uint32_t)(S_STEP0 + k), name, (size_t)n);
		for (unsigned p = 0; p < ranks && r == 0; p++) {
			uint32_t pid = 100 + p;
			uint64_t step = T0 + k * STEP_NS + p * 20000; /* ranks 20 us apart */
			struct gt_rec_kernel kb[BATCH];
			struct gt_rec_api a = {.tid = pid, .cbid = 211, .name_id = S_LAUNCH};
			struct gt_rec_nvtx nv = {.tid = pid,
			                         .end_tid = pid,
			                         .message_id = (uint32_t)(S_STEP0 + k),
			                         .kind = GT_NVTX_PUSH_POP};
			struct gt_rec_memory m = {.address =
			                                  0x7f0000000000ull + (k % 2) * (1u << 30),
			                          .bytes = 256u << 20,
			                          .device_id = p,
			                          .mem_kind = GT_MEM_DEVICE};
			unsigned nb = 0;

			m.ts_ns = step + 1000;
			m.op = GT_MEMORY_ALLOC;
			r = put(w, &m, GT_REC_MEMORY, sizeof(m), pid);
			for (uint64_t i = 0; i < launches && r == 0; i++) {
				uint64_t h = mix(k * 1000003 + i * 31 + p),
				         t = step + 10000 + i * gap;
				struct gt_rec_kernel *kr = &kb[nb++];

				a.start_ns = t;
				a.end_ns = t + 3000 + h % 2000;
				a.correlation_id = (uint32_t)++corr[p];
				r = put(w, &a, GT_REC_API, sizeof(a), pid);
				memset(kr, 0, sizeof(*kr));
				kr->span.start_ns = a.end_ns + 5000 > gpu_free[p] ? a.end_ns + 5000
				                                                  : gpu_free[p];
				kr->span.end_ns = kr->span.start_ns + gap / 2 + h % (gap / 3);
				kr->span.correlation_id = a.correlation_id;
				kr->span.device_id = p;
				kr->span.context_id = 1;
				kr->span.stream_id = 7;
				kr->name_id = S_KERNEL0 + (uint32_t)(i % NAMES);
				kr->grid_x = 132;
				kr->grid_y = kr->grid_z = 1;
				kr->block_x = 256;
				kr->block_y = kr->block_z = 1;
				kr->registers = 32;
				gpu_free[p] = kr->span.end_ns;
				if (nb == BATCH || i + 1 == launches) {
					for (unsigned j = 0; j < nb && r == 0; j++)
						r = put(w, &kb[j], GT_REC_KERNEL, sizeof(kb[j]),
						        pid);
					nb = 0;
				}
			}
			m.ts_ns = step + STEP_NS * 95 / 100;
			m.op = GT_MEMORY_FREE;
			if (r == 0)
				r = put(w, &m, GT_REC_MEMORY, sizeof(m), pid);
			nv.start_ns = step;
			nv.end_ns = step + STEP_NS * 95 / 100;
			if (r == 0)
				r = put(w, &nv, GT_REC_NVTX, sizeof(nv), pid);
		}
	}
	if (r < 0) {
		gt_writer_discard(w);
		return r;
	}
	return gt_writer_close(w);
}

/* The file up to its last chunk: what a killed writer leaves, read by a scan. */
static int strip_footer(const char *path, const char *out)
{
	struct gt_reader *r;
	struct gt_chunk_info c;
	uint64_t end = 0, done = 0;
	char *buf = malloc(1u << 20);
	int in, fd, ret;

	ret = gt_reader_open(path, &r, NULL);
	if (ret < 0 || !buf) {
		free(buf);
		return ret < 0 ? ret : -ENOMEM;
	}
	for (uint64_t k = 0; gt_reader_chunk_info(r, k, &c) == 1; k++)
		end = c.offset + 40 + c.comp_bytes;
	gt_reader_close(r);
	in = open(path, O_RDONLY);
	fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	while (in >= 0 && fd >= 0 && done < end) {
		size_t want = end - done < (1u << 20) ? (size_t)(end - done) : (1u << 20);
		ssize_t n = read(in, buf, want);

		if (n <= 0 || write(fd, buf, (size_t)n) != n)
			break;
		done += (uint64_t)n;
	}
	if (in >= 0)
		close(in);
	if (fd >= 0)
		close(fd);
	free(buf);
	return done == end ? 0 : -EIO;
}

struct timing {
	double s;
	uint64_t events, records;
	struct gt_window_stats wst;
};

/* Export `path` (through window w, NULL: whole) to perfetto in /dev/null. */
static int export_once(const char *path, const struct gt_window *w, struct timing *t)
{
	struct gt_export_options o = {.output = "/dev/null", .demangle = 1};
	struct gt_export_result res = {0};
	struct gt_reader *r;
	const char *err = NULL;
	double t0 = now_s();
	int ret = gt_reader_open(path, &r, &err);

	if (ret < 0) {
		fprintf(stderr, "bench-window: %s: %s\n", path, err ? err : strerror(-ret));
		return ret;
	}
	ret = gt_export_window(gt_exporter_find("perfetto"), r, w, &o, &res, &err, &t->wst);
	gt_reader_close(r);
	t->s = now_s() - t0;
	t->events = res.events;
	if (ret < 0)
		fprintf(stderr, "bench-window: export: %s\n", err ? err : strerror(-ret));
	return ret;
}

static int scan_once(const char *path, struct timing *t)
{
	const union gt_record *rec;
	struct gt_reader *r;
	double t0 = now_s();
	int ret = gt_reader_open(path, &r, NULL);

	if (ret < 0)
		return ret;
	t->records = 0;
	while ((ret = gt_reader_next(r, &rec)) > 0)
		t->records++;
	gt_reader_close(r);
	t->s = now_s() - t0;
	return ret;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void report(const char *what, double *s, unsigned n, const char *extra)
{
	qsort(s, n, sizeof(*s), cmp_double);
	printf("%-34s median %8.3f s  (min %.3f, max %.3f, %u rounds)%s\n", what, s[n / 2], s[0],
	       s[n - 1], n, extra);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
	        {"records", required_argument, NULL, 'n'},
	        {"seconds", required_argument, NULL, 's'},
	        {"ranks", required_argument, NULL, 'r'},
	        {"rounds", required_argument, NULL, 'k'},
	        {"regen", no_argument, NULL, 'g'},
	        {NULL, 0, NULL, 0},
	};
	uint64_t records = 100000000ull;
	unsigned seconds = 600, ranks = 2, rounds = 3;
	bool regen = false;
	struct gt_window w = {0};
	struct gt_nvtx_spec spec;
	struct gt_nvtx_found found;
	struct gt_reader *r;
	const char *path;
	char nofooter[4200], extra[256];
	double scan[16], full[16], win[16], winscan[16], nvtx[16];
	struct timing t = {0};
	struct stat st;
	int c, ret;

	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 'n':
			records = strtoull(optarg, NULL, 10);
			break;
		case 's':
			seconds = (unsigned)strtoul(optarg, NULL, 10);
			break;
		case 'r':
			ranks = (unsigned)strtoul(optarg, NULL, 10);
			break;
		case 'k':
			rounds = (unsigned)strtoul(optarg, NULL, 10);
			break;
		case 'g':
			regen = true;
			break;
		default:
			return 64;
		}
	}
	if (optind + 1 != argc || !ranks || ranks > MAX_RANKS || !rounds || rounds > 16 ||
	    !seconds) {
		fprintf(stderr, "usage: bench-window [--records N] [--seconds S] [--ranks R] "
		                "[--rounds K<=16] [--regen] FILE\n");
		return 64;
	}
	path = argv[optind];
	if (regen || stat(path, &st) < 0) {
		double t0 = now_s();

		ret = generate(path, records, seconds, ranks);
		if (ret < 0) {
			fprintf(stderr, "bench-window: writing %s: %s\n", path, strerror(-ret));
			return 1;
		}
		printf("wrote %s in %.1f s\n", path, now_s() - t0);
	}
	if (stat(path, &st) < 0 || gt_reader_open(path, &r, NULL) < 0) {
		fprintf(stderr, "bench-window: cannot read %s\n", path);
		return 1;
	}
	{
		const struct gt_trace_counts *fc = gt_reader_footer_counts(r);
		struct gt_trace_times tt = {0};
		uint64_t n = 0, origin;

		gt_reader_times(r, &tt);
		origin = tt.zero_ns;

		for (unsigned i = 0; fc && i < GT_REC_MAX; i++)
			n += fc->records[i];
		printf("trace: %s, %.1f MB, %llu records in %llu chunks, %.1f s\n", path,
		       (double)st.st_size / 1e6, (unsigned long long)n,
		       fc ? (unsigned long long)fc->chunks : 0ull,
		       fc ? (double)(fc->last_ts_ns - fc->first_ts_ns) / 1e9 : 0.0);
		/* one second from the middle */
		w.from_ns = origin + (fc ? (fc->last_ts_ns - origin) / 2 : 0);
		w.to_ns = w.from_ns + NS_PER_S;
	}
	gt_reader_close(r);

	for (unsigned i = 0; i < rounds; i++) {
		if (scan_once(path, &t) < 0)
			return 1;
		scan[i] = t.s;
	}
	snprintf(extra, sizeof(extra), ", %llu records", (unsigned long long)t.records);
	report("full scan (reader alone)", scan, rounds, extra);
	for (unsigned i = 0; i < rounds; i++) {
		if (export_once(path, NULL, &t) < 0)
			return 1;
		full[i] = t.s;
	}
	snprintf(extra, sizeof(extra), ", %llu events", (unsigned long long)t.events);
	report("full export, perfetto", full, rounds, extra);
	for (unsigned i = 0; i < rounds; i++) {
		if (export_once(path, &w, &t) < 0)
			return 1;
		win[i] = t.s;
	}
	snprintf(extra, sizeof(extra), ", %llu events, %llu of %llu chunks read",
	         (unsigned long long)t.events, (unsigned long long)t.wst.chunks_read,
	         (unsigned long long)(t.wst.chunks_read + t.wst.chunks_passed));
	report("1 s window, perfetto, index", win, rounds, extra);

	snprintf(nofooter, sizeof(nofooter), "%s.nofooter", path);
	if (strip_footer(path, nofooter) < 0) {
		fprintf(stderr, "bench-window: cannot write %s\n", nofooter);
		return 1;
	}
	for (unsigned i = 0; i < rounds; i++) {
		if (export_once(nofooter, &w, &t) < 0)
			break;
		winscan[i] = t.s;
	}
	unlink(nofooter);
	snprintf(extra, sizeof(extra), ", %llu events, %llu chunks read",
	         (unsigned long long)t.events, (unsigned long long)t.wst.chunks_read);
	report("1 s window, perfetto, scan", winscan, rounds, extra);

	gt_window_parse_nvtx("ProfilerStep:3000", &spec);
	for (unsigned i = 0; i < rounds; i++) {
		double t0 = now_s();

		if (gt_reader_open(path, &r, NULL) < 0)
			return 1;
		ret = gt_window_find_nvtx(r, NULL, &spec, &found);
		gt_reader_close(r);
		nvtx[i] = now_s() - t0;
		if (ret < 0)
			return 1;
	}
	snprintf(extra, sizeof(extra), ", %llu ranges in %u processes",
	         (unsigned long long)found.ranges, found.processes);
	report("--nvtx ProfilerStep:3000 lookup", nvtx, rounds, extra);
	return 0;
}
