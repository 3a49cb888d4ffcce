/* A synthetic trace for the exporter tests and bench/bench-export.c: every record kind an
 * exporter draws, in the order the collectors produce them (API and NVTX records when the
 * call or range ends, GPU activity later in batches), with hostile names (quotes,
 * backslashes, control characters, invalid UTF-8, a template name that demangles to
 * 15 KB). Counts are exact functions of the options (fx_expect). Header-only; runs in test
 * and benchmark programs. */
#ifndef GPUTRACE_TESTS_EXPORT_FIXTURE_H
#define GPUTRACE_TESTS_EXPORT_FIXTURE_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gputrace/record.h"
#include "gputrace/trace.h"

struct fx_opts {
	unsigned procs;     /* 1..8 */
	unsigned iters;     /* training steps per process */
	unsigned gpu_batch; /* GPU records are written every gpu_batch steps */
	unsigned kernels;   /* kernels per step (>= 1) */
	unsigned names;     /* 0: the hostile names below; N: N ordinary kernel names, as a
	                     * real trace has (half mangled, half plain) */
	uint64_t t0;        /* trace clock at the start; 0: FX_T0 */
};

/* What the exporters must show. */
struct fx_expect {
	uint64_t kernels, memcpys, memsets, syncs;
	uint64_t runtime, driver;
	uint64_t nvtx_ranges; /* push/pop + start/end */
	uint64_t nvtx_marks;
	uint64_t memory; /* alloc + free counter samples */
	uint64_t flows;  /* launch -> GPU arrows */
	uint64_t losses; /* LOSS records */
	uint64_t lost;   /* records they count */
	uint64_t notices, ends;
	uint64_t events; /* everything above but flows */
};

#define FX_PID0     1000u
#define FX_T0       1000000000000ull
#define FX_START(o) ((o)->t0 ? (o)->t0 : FX_T0)
#define FX_STEP_NS  100000ull
#define FX_STREAM   7u

enum {
	FX_S_EXE = 1,
	FX_S_CMD,
	FX_S_HOST,
	FX_S_DEV,
	FX_S_MAIN,
	FX_S_WORKER,
	FX_S_LAUNCH,
	FX_S_CULAUNCH,
	FX_S_MEMCPY,
	FX_S_MEMSET,
	FX_S_SYNC,
	FX_S_STEP,
	FX_S_LOAD,
	FX_S_PREFETCH,
	FX_S_MARK,
	FX_S_DOMAIN,
	FX_S_NOTICE,
	FX_S_K0, /* kernel names follow */
};

/* Kernel names: plain, demangled, hostile. The last is filled in by fx_long_name(). */
static const char *const fx_kernel_names[] = {
        "_Z6kernelPf", "ampere_sgemm_128x64_nn", "quote\"kernel",
        "back\\slash", "ctl\x01\x1f\tchars",     "bad\xff\xfe utf8 \xe2\x82",
        NULL,
};
#define FX_NKERNEL_NAMES 7u
#define FX_LONG_REPS     120u /* template arguments after the first */
#define FX_LONG_ID       99u  /* length of the class name they all repeat */

/* The class name repeated by the long template: 99 characters. */
static inline void fx_long_class(char *buf)
{
	static const char part[] = "VeryLongTemplateArgument";

	for (unsigned i = 0; i < FX_LONG_ID; i++)
		buf[i] = part[i % (sizeof(part) - 1)];
	buf[FX_LONG_ID] = '\0';
}

/* "_Z1fI99<class>S0_S0_...EvT_": 470 bytes mangled, and demangled
 * "void f<C, C, ..., C>(C)" with 121 C's of 99 characters: 12 KB. */
static inline size_t fx_long_name(char *buf)
{
	char *p = buf;

	memcpy(p, "_Z1fI99", 7);
	p += 7;
	fx_long_class(p);
	p += FX_LONG_ID;
	for (unsigned i = 0; i < FX_LONG_REPS; i++) {
		memcpy(p, "S0_", 3);
		p += 3;
	}
	memcpy(p, "EvT_", 4);
	p += 4;
	*p = '\0';
	return (size_t)(p - buf);
}

static inline void fx_expect(const struct fx_opts *o, struct fx_expect *e)
{
	uint64_t steps = (uint64_t)o->procs * o->iters;
	uint64_t marks = 0;

	for (unsigned i = 0; i < o->iters; i++)
		marks += i % 10 == 0;
	memset(e, 0, sizeof(*e));
	e->kernels = steps * o->kernels;
	e->memcpys = steps;
	e->memsets = steps;
	e->syncs = steps;
	e->runtime = steps * (o->kernels + 3); /* launches, memcpy, memset, sync */
	e->driver = steps;                     /* one cuLaunchKernel under the first launch */
	e->nvtx_ranges = steps * 3;            /* step (push/pop), load and prefetch */
	e->nvtx_marks = marks * o->procs;
	e->memory = steps * 2;
	e->flows = e->kernels + e->memcpys + e->memsets;
	e->losses = o->procs;
	e->lost = 5ull * o->procs;
	e->notices = o->procs;
	e->ends = o->procs;
	e->events = e->kernels + e->memcpys + e->memsets + e->syncs + e->runtime + e->driver +
	            e->nvtx_ranges + e->nvtx_marks + e->memory + e->losses + e->notices + e->ends;
}

struct fx_writer {
	struct gt_writer *w;
	int err;
};

static inline void fx_put(struct fx_writer *fw, const void *rec)
{
	if (!fw->err)
		fw->err = gt_writer_write(fw->w, (const struct gt_rec_hdr *)rec);
}

static inline void fx_str(struct fx_writer *fw, uint32_t id, const char *s, size_t len)
{
	if (!fw->err)
		fw->err = gt_writer_string(fw->w, FX_PID0, id, s, len);
}

#define FX_HDR(r, t, p)                                                                            \
	do {                                                                                       \
		memset(&(r), 0, sizeof(r));                                                        \
		(r).hdr.type = (t);                                                                \
		(r).hdr.size = sizeof(r);                                                          \
		(r).hdr.pid = (p);                                                                 \
	} while (0)

static inline void fx_api(struct fx_writer *fw, uint32_t pid, uint32_t tid, uint64_t s, uint64_t e,
                          uint32_t corr, uint32_t name, unsigned domain, int32_t rc)
{
	struct gt_rec_api a;

	FX_HDR(a, GT_REC_API, pid);
	a.start_ns = s;
	a.end_ns = e;
	a.tid = tid;
	a.correlation_id = corr;
	a.cbid = 211;
	a.name_id = name;
	a.return_code = rc;
	a.domain = domain;
	fx_put(fw, &a);
}

static inline void fx_span(struct gt_gpu_span *sp, uint64_t s, uint64_t e, uint32_t corr)
{
	sp->start_ns = s;
	sp->end_ns = e;
	sp->correlation_id = corr;
	sp->device_id = 0;
	sp->context_id = 1;
	sp->stream_id = FX_STREAM;
}

/* GPU records of step i of process pid (corr0: its first correlation id). */
static inline void fx_gpu_step(struct fx_writer *fw, const struct fx_opts *o, uint32_t pid,
                               unsigned i, uint32_t corr0)
{
	uint64_t t = FX_START(o) + (uint64_t)pid * 7 + (uint64_t)i * FX_STEP_NS;
	uint64_t g = t + 10000;
	struct gt_rec_kernel k;
	struct gt_rec_memcpy c;
	struct gt_rec_memset s;
	struct gt_rec_sync y;

	for (unsigned j = 0; j < o->kernels; j++) {
		FX_HDR(k, GT_REC_KERNEL, pid);
		fx_span(&k.span, g, g + 20000 / o->kernels, corr0 + 2 + j);
		k.name_id =
		        FX_S_K0 + (i * o->kernels + j) % (o->names ? o->names : FX_NKERNEL_NAMES);
		k.grid_x = 128;
		k.grid_y = 2;
		k.grid_z = 1;
		k.block_x = 256;
		k.block_y = 1;
		k.block_z = 1;
		k.registers = 32;
		k.static_smem_bytes = 1024;
		k.dynamic_smem_bytes = 4096;
		fx_put(fw, &k);
		g += 20000 / o->kernels;
	}
	g = t + 31000;
	FX_HDR(c, GT_REC_MEMCPY, pid);
	fx_span(&c.span, g, g + 10000, corr0 + 2 + o->kernels);
	c.bytes = 1u << 20;
	c.copy_kind = GT_MEMCPY_HTOD;
	c.src_kind = GT_MEM_PAGEABLE;
	c.dst_kind = GT_MEM_DEVICE;
	fx_put(fw, &c);
	FX_HDR(s, GT_REC_MEMSET, pid);
	fx_span(&s.span, g + 10000, g + 11000, corr0 + 3 + o->kernels); /* touches the copy */
	s.bytes = 4096;
	s.mem_kind = GT_MEM_DEVICE;
	fx_put(fw, &s);
	FX_HDR(y, GT_REC_SYNC, pid);
	fx_span(&y.span, t + 50000, t + 60000, corr0 + 4 + o->kernels);
	y.tid = pid;
	y.kind = GT_SYNC_STREAM;
	fx_put(fw, &y);
}

/* Correlation ids a step uses. */
static inline uint32_t fx_corr_per_step(const struct fx_opts *o)
{
	return o->kernels + 8;
}

/* Write the whole trace to path. Returns 0 or -errno. */
static inline int fx_write(const char *path, const struct fx_opts *o)
{
	static const uint8_t uuid0[16] = {0xaa, 1, 2, 3};
	struct gt_trace_info info = {
	        .clock_id = GT_CLOCK_MONOTONIC,
	        .start_realtime_ns = 1700000000000000000ull,
	        .start_trace_ns = 0,
	        .hostname = "fixture-host",
	        .cmdline = "python3 train.py --say \"hi\"",
	        .tool_version = "test",
	};
	struct fx_writer fw = {0};
	char *longname = malloc(3 * FX_LONG_REPS + FX_LONG_ID + 16);
	int ret;

	if (!longname)
		return -12;
	info.start_trace_ns = FX_START(o);
	fx_long_name(longname);
	ret = gt_writer_open(path, &info, NULL, &fw.w);
	if (ret < 0) {
		free(longname);
		return ret;
	}
	fx_str(&fw, FX_S_EXE, "/usr/bin/python3", 16);
	fx_str(&fw, FX_S_CMD, "python3 train.py", 16);
	fx_str(&fw, FX_S_HOST, "fixture-host", 12);
	fx_str(&fw, FX_S_DEV, "NVIDIA H200", 11);
	fx_str(&fw, FX_S_MAIN, "main \"loop\"", 11);
	fx_str(&fw, FX_S_WORKER, "work\\er\x01\xff", 10);
	fx_str(&fw, FX_S_LAUNCH, "cudaLaunchKernel", 16);
	fx_str(&fw, FX_S_CULAUNCH, "cuLaunchKernel", 14);
	fx_str(&fw, FX_S_MEMCPY, "cudaMemcpyAsync", 15);
	fx_str(&fw, FX_S_MEMSET, "cudaMemsetAsync", 15);
	fx_str(&fw, FX_S_SYNC, "cudaStreamSynchronize", 21);
	fx_str(&fw, FX_S_STEP, "step", 4);
	fx_str(&fw, FX_S_LOAD, "load", 4);
	fx_str(&fw, FX_S_PREFETCH, "prefetch", 8);
	fx_str(&fw, FX_S_MARK, "checkpoint", 10);
	fx_str(&fw, FX_S_DOMAIN, "my domain", 9);
	fx_str(&fw, FX_S_NOTICE, "CUPTI said \"no\"", 15);
	for (unsigned k = 0; !o->names && k < FX_NKERNEL_NAMES; k++) {
		const char *n = fx_kernel_names[k] ? fx_kernel_names[k] : longname;

		fx_str(&fw, FX_S_K0 + k, n, strlen(n));
	}
	for (unsigned k = 0; k < o->names; k++) {
		char n[160];
		int len;

		/* "elementwise_kernel_00042(float*, float const*, int)" or a CUTLASS name */
		if (k % 2)
			len = snprintf(n, sizeof(n), "_Z24elementwise_kernel_%05uPfPKfi", k);
		else
			len = snprintf(
			        n, sizeof(n),
			        "ampere_fp16_s16816gemm_fp16_128x128_ldg8_f2f_stages_64x3_nn_%u",
			        k);
		fx_str(&fw, FX_S_K0 + k, n, (size_t)len);
	}

	for (unsigned p = 0; p < o->procs; p++) {
		uint32_t pid = FX_PID0 + p;
		struct gt_rec_process pr;
		struct gt_rec_thread th;
		struct gt_rec_device dv;
		struct gt_rec_context cx;
		struct gt_rec_stream st;

		FX_HDR(pr, GT_REC_PROCESS, pid);
		pr.start_ns = FX_START(o);
		pr.ppid = 1;
		pr.exe_id = FX_S_EXE;
		pr.cmdline_id = FX_S_CMD;
		pr.host_id = FX_S_HOST;
		pr.rank = (int32_t)p;
		pr.local_rank = (int32_t)p;
		pr.world_size = (int32_t)o->procs;
		fx_put(&fw, &pr);
		FX_HDR(th, GT_REC_THREAD, pid);
		th.tid = pid;
		th.name_id = FX_S_MAIN;
		fx_put(&fw, &th);
		th.tid = pid + 1;
		th.name_id = FX_S_WORKER;
		fx_put(&fw, &th);
		FX_HDR(dv, GT_REC_DEVICE, pid);
		memcpy(dv.uuid, uuid0, 16);
		dv.uuid[15] = (uint8_t)p; /* each rank sees its own GPU as device 0 */
		dv.device_id = 0;
		dv.name_id = FX_S_DEV;
		dv.sm_count = 132;
		dv.cc_major = 9;
		dv.global_mem_bytes = 150000000000ull;
		fx_put(&fw, &dv);
		FX_HDR(cx, GT_REC_CONTEXT, pid);
		cx.context_id = 1;
		fx_put(&fw, &cx);
		FX_HDR(st, GT_REC_STREAM, pid);
		st.stream_id = FX_STREAM;
		st.context_id = 1;
		fx_put(&fw, &st);
	}

	for (unsigned i = 0; i < o->iters; i++) {
		for (unsigned p = 0; p < o->procs; p++) {
			uint32_t pid = FX_PID0 + p, tid = pid;
			uint64_t t = FX_START(o) + (uint64_t)pid * 7 + (uint64_t)i * FX_STEP_NS;
			uint32_t c = 1 + i * fx_corr_per_step(o);
			uint64_t at = t + 1000;
			struct gt_rec_memory m;
			struct gt_rec_nvtx n;

			FX_HDR(m, GT_REC_MEMORY, pid);
			m.ts_ns = t + 500;
			m.address = 0x7f0000000000ull + i * 4096;
			m.bytes = 1u << 20;
			m.op = GT_MEMORY_ALLOC;
			m.mem_kind = GT_MEM_DEVICE;
			fx_put(&fw, &m);
			/* the driver call ends before the runtime call around it */
			fx_api(&fw, pid, tid, at + 1500 / o->kernels, at + 3000 / o->kernels, c + 1,
			       FX_S_CULAUNCH, GT_API_DRIVER, 0);
			for (unsigned j = 0; j < o->kernels; j++) {
				uint64_t dt = 6000 / o->kernels;

				fx_api(&fw, pid, tid, at, at + dt - 10, c + 2 + j, FX_S_LAUNCH,
				       GT_API_RUNTIME, 0);
				at += dt;
			}
			fx_api(&fw, pid, tid, t + 7000, t + 9000, c + 2 + o->kernels, FX_S_MEMCPY,
			       GT_API_RUNTIME, 0);
			fx_api(&fw, pid, tid, t + 9500, t + 9900, c + 3 + o->kernels, FX_S_MEMSET,
			       GT_API_RUNTIME, i == 3 ? 700 : 0);
			fx_api(&fw, pid, tid, t + 50000, t + 60000, c + 4 + o->kernels, FX_S_SYNC,
			       GT_API_RUNTIME, 0);
			if (i % 10 == 0) {
				FX_HDR(n, GT_REC_NVTX, pid);
				n.start_ns = n.end_ns = t + 45000;
				n.tid = n.end_tid = tid;
				n.message_id = FX_S_MARK;
				n.kind = GT_NVTX_MARK;
				fx_put(&fw, &n);
			}
			m.ts_ns = t + 80000;
			m.op = GT_MEMORY_FREE;
			fx_put(&fw, &m);
			/* push/pop around all of it, written at the pop */
			FX_HDR(n, GT_REC_NVTX, pid);
			n.start_ns = t;
			n.end_ns = t + 90000;
			n.tid = n.end_tid = tid;
			n.domain_id = FX_S_DOMAIN;
			n.message_id = FX_S_STEP;
			n.color = 0xff00ff00u;
			n.kind = GT_NVTX_PUSH_POP;
			fx_put(&fw, &n);
			/* two start/end ranges that cross each other and threads */
			n.start_ns = t + 20000;
			n.end_ns = t + 70000;
			n.end_tid = tid + 1;
			n.domain_id = 0;
			n.color = 0;
			n.message_id = FX_S_LOAD;
			n.range_id = 2ull * i + 1;
			n.kind = GT_NVTX_START_END;
			fx_put(&fw, &n);
			n.start_ns = t + 40000;
			n.end_ns = t + 95000;
			n.message_id = FX_S_PREFETCH;
			n.range_id = 2ull * i + 2;
			fx_put(&fw, &n);
		}
		if ((i + 1) % o->gpu_batch == 0 || i + 1 == o->iters) {
			unsigned first =
			        i + 1 -
			        ((i + 1) % o->gpu_batch ? (i + 1) % o->gpu_batch : o->gpu_batch);

			for (unsigned p = 0; p < o->procs; p++)
				for (unsigned s = first; s <= i; s++)
					fx_gpu_step(&fw, o, FX_PID0 + p, s,
					            1 + s * fx_corr_per_step(o));
		}
	}

	for (unsigned p = 0; p < o->procs; p++) {
		uint32_t pid = FX_PID0 + p;
		uint64_t t = FX_START(o) + (uint64_t)o->iters * FX_STEP_NS + 1000;
		struct gt_rec_loss l;
		struct gt_rec_notice nt;
		struct gt_rec_process_end pe;

		FX_HDR(l, GT_REC_LOSS, pid);
		l.ts_ns = t;
		l.count = 5;
		l.source = GT_LOSS_RING_FULL;
		l.kind = GT_REC_API;
		fx_put(&fw, &l);
		FX_HDR(nt, GT_REC_NOTICE, pid);
		nt.ts_ns = t + 1;
		nt.severity = GT_NOTICE_WARNING;
		nt.code = GT_NOTICE_CUPTI_ERROR;
		nt.message_id = FX_S_NOTICE;
		nt.detail = -3;
		fx_put(&fw, &nt);
		FX_HDR(pe, GT_REC_PROCESS_END, pid);
		pe.ts_ns = t + 2;
		pe.how = GT_END_EXIT;
		pe.code = 0;
		fx_put(&fw, &pe);
	}
	free(longname);
	if (fw.err) {
		gt_writer_discard(fw.w);
		return fw.err;
	}
	return gt_writer_close(fw.w);
}

#endif /* GPUTRACE_TESTS_EXPORT_FIXTURE_H */
