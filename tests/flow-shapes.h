/* Small synthetic traces, one per order in which the two records of a launch (the API call
 * and its GPU work) can reach a trace: API first, GPU first (as CUPTI hands over PyTorch's
 * buffers), interleaved across processes and threads, split across chunks, CUDA graph
 * launches at graph and node level, partners missing, partners evicted from the exporters'
 * caches. Each says how many CPU->GPU arrows both timeline formats must draw. Used by
 * tests/test-chrome.c, tests/test-perfetto.c and tests/perfetto-import.c. Header-only;
 * runs in test programs. */
#ifndef GPUTRACE_TESTS_FLOW_SHAPES_H
#define GPUTRACE_TESTS_FLOW_SHAPES_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "gputrace/record.h"
#include "gputrace/trace.h"

#define SHP_PID       3000u
#define SHP_T0        5000000000ull
#define SHP_LAUNCH_NS 10000ull /* one launch every 10 us on a thread */
#define SHP_GPU_NS    20000ull /* one GPU activity every 20 us on a stream */

enum {
	SHP_S_EXE = 1,
	SHP_S_HOST,
	SHP_S_DEVICE,
	SHP_S_MAIN,
	SHP_S_WORKER,
	SHP_S_LAUNCH,
	SHP_S_CULAUNCH,
	SHP_S_MEMCPY,
	SHP_S_MEMSET,
	SHP_S_GRAPHLAUNCH,
	SHP_S_GETDEVICE,
	SHP_S_KERNEL_A,
	SHP_S_KERNEL_B,
	SHP_S_MAX
};

struct shp_writer {
	struct gt_writer *w;
	int err;
	unsigned flush_every; /* > 0: flush the chunk after that many records */
	unsigned since_flush;
	uint64_t launches[8]; /* per process index: launches written, for its clocks */
};

static inline void shp_put(struct shp_writer *sw, void *rec)
{
	if (sw->err)
		return;
	sw->err = gt_writer_write(sw->w, (const struct gt_rec_hdr *)rec);
	if (!sw->err && sw->flush_every && ++sw->since_flush == sw->flush_every) {
		sw->since_flush = 0;
		sw->err = gt_writer_flush(sw->w);
	}
}

#define SHP_HDR(r, t, p)                                                                           \
	do {                                                                                       \
		memset(&(r), 0, sizeof(r));                                                        \
		(r).hdr.type = (t);                                                                \
		(r).hdr.size = sizeof(r);                                                          \
		(r).hdr.pid = (p);                                                                 \
	} while (0)

/* One launch: its API call and the GPU work it started, not yet written. */
struct shp_launch {
	uint32_t pid, tid, corr;
	uint64_t api_start, api_end;
	uint32_t api_name;
	unsigned kind;  /* 0 kernel, 1 memcpy, 2 memset, 3 graph (GRAPH record) */
	unsigned nodes; /* kernels of a graph launched at node level (kind 0); 0 or 1: one */
	uint32_t stream;
	uint64_t gpu_start; /* of the first node; each next one SHP_GPU_NS / 4 later */
	uint64_t gpu_end;
	bool driver_child; /* a cuLaunchKernel inside the call (its own correlation id) */
	bool child_tie;    /* ... starting at the same nanosecond as the call */
};

static inline void shp_api(struct shp_writer *sw, uint32_t pid, uint32_t tid, uint64_t s,
                           uint64_t e, uint32_t corr, uint32_t name, unsigned domain)
{
	struct gt_rec_api a;

	SHP_HDR(a, GT_REC_API, pid);
	a.start_ns = s;
	a.end_ns = e;
	a.tid = tid;
	a.correlation_id = corr;
	a.cbid = 211;
	a.name_id = name;
	a.domain = domain;
	shp_put(sw, &a);
}

/* The API side of a launch: a driver child first (children end first), then the call. */
static inline void shp_write_api(struct shp_writer *sw, const struct shp_launch *l)
{
	if (l->driver_child) {
		uint64_t s = l->child_tie ? l->api_start : l->api_start + 300;

		shp_api(sw, l->pid, l->tid, s, l->api_end - 300, l->corr + 1, SHP_S_CULAUNCH,
		        GT_API_DRIVER);
	}
	shp_api(sw, l->pid, l->tid, l->api_start, l->api_end, l->corr, l->api_name, GT_API_RUNTIME);
}

static inline void shp_span(struct gt_gpu_span *sp, const struct shp_launch *l, uint64_t s,
                            uint64_t e)
{
	sp->start_ns = s;
	sp->end_ns = e;
	sp->correlation_id = l->corr;
	sp->device_id = 0;
	sp->context_id = 1;
	sp->stream_id = l->stream;
}

/* GPU records of a launch, nodes [from, to) of it (to = UINT32_MAX: all). */
static inline void shp_write_gpu(struct shp_writer *sw, const struct shp_launch *l, unsigned from,
                                 unsigned to)
{
	unsigned n = l->nodes ? l->nodes : 1;

	for (unsigned k = from; k < n && k < to; k++) {
		uint64_t s = l->gpu_start + k * (SHP_GPU_NS / 4);
		uint64_t e = l->nodes ? s + SHP_GPU_NS / 8 : l->gpu_end;

		if (l->kind == 0) {
			struct gt_rec_kernel r;

			SHP_HDR(r, GT_REC_KERNEL, l->pid);
			shp_span(&r.span, l, s, e);
			r.name_id = k % 2 ? SHP_S_KERNEL_B : SHP_S_KERNEL_A;
			r.grid_x = 64 + k;
			r.grid_y = 2;
			r.grid_z = 1;
			r.block_x = 256;
			r.block_y = r.block_z = 1;
			r.registers = 32;
			r.static_smem_bytes = 1024;
			if (l->nodes) {
				r.graph_id = 2;
				r.graph_node_id = k + 1;
			}
			shp_put(sw, &r);
		} else if (l->kind == 1) {
			struct gt_rec_memcpy r;

			SHP_HDR(r, GT_REC_MEMCPY, l->pid);
			shp_span(&r.span, l, s, e);
			r.bytes = 1u << 20;
			r.copy_kind = GT_MEMCPY_HTOD;
			r.src_kind = GT_MEM_PINNED;
			r.dst_kind = GT_MEM_DEVICE;
			r.flags = GT_COPY_ASYNC;
			shp_put(sw, &r);
		} else if (l->kind == 2) {
			struct gt_rec_memset r;

			SHP_HDR(r, GT_REC_MEMSET, l->pid);
			shp_span(&r.span, l, s, e);
			r.bytes = 4096;
			r.mem_kind = GT_MEM_DEVICE;
			shp_put(sw, &r);
		} else {
			struct gt_rec_graph r;

			SHP_HDR(r, GT_REC_GRAPH, l->pid);
			shp_span(&r.span, l, s, e);
			r.graph_id = 2;
			shp_put(sw, &r);
		}
	}
}

/* Launch i of process p (index 0..7) on thread tid and stream `stream`: clocks advance per
 * process, so that calls on a thread and work on a stream never overlap. */
static inline struct shp_launch shp_launch(struct shp_writer *sw, unsigned p, uint32_t tid,
                                           uint32_t stream, unsigned kind)
{
	uint64_t i = sw->launches[p]++;
	struct shp_launch l = {
	        .pid = SHP_PID + p,
	        .tid = tid,
	        .corr = (uint32_t)(10 + 3 * i), /* +1 is the driver child's */
	        .api_start = SHP_T0 + i * SHP_LAUNCH_NS,
	        .api_end = SHP_T0 + i * SHP_LAUNCH_NS + 4000,
	        .kind = kind,
	        .stream = stream,
	        .gpu_start = SHP_T0 + 5000 + i * SHP_GPU_NS,
	        .gpu_end = SHP_T0 + 5000 + i * SHP_GPU_NS + SHP_GPU_NS / 2,
	};

	l.api_name = kind == 1   ? SHP_S_MEMCPY
	             : kind == 2 ? SHP_S_MEMSET
	             : kind == 3 ? SHP_S_GRAPHLAUNCH
	                         : SHP_S_LAUNCH;
	return l;
}

/* Strings and the metadata of processes 0..nprocs-1 (threads pid and pid + 1, streams 7 and
 * 13 on device 0). */
static inline void shp_meta(struct shp_writer *sw, unsigned nprocs)
{
	static const char *const str[SHP_S_MAX] = {
	        NULL,
	        "/usr/bin/shape-app",
	        "shape-host",
	        "NVIDIA H200",
	        "main",
	        "worker",
	        "cudaLaunchKernel",
	        "cuLaunchKernel",
	        "cudaMemcpyAsync",
	        "cudaMemsetAsync",
	        "cudaGraphLaunch",
	        "cudaGetDevice",
	        "kernel_a",
	        "_Z8kernel_bPf",
	};

	for (uint32_t id = 1; id < SHP_S_MAX && !sw->err; id++)
		sw->err = gt_writer_string(sw->w, SHP_PID, id, str[id], strlen(str[id]));
	for (unsigned p = 0; p < nprocs; p++) {
		uint32_t pid = SHP_PID + p;
		struct gt_rec_process pr;
		struct gt_rec_thread th;
		struct gt_rec_device dv;
		struct gt_rec_context cx;
		struct gt_rec_stream st;

		SHP_HDR(pr, GT_REC_PROCESS, pid);
		pr.start_ns = SHP_T0;
		pr.ppid = 1;
		pr.exe_id = SHP_S_EXE;
		pr.host_id = SHP_S_HOST;
		pr.rank = nprocs > 1 ? (int32_t)p : -1;
		pr.local_rank = pr.rank;
		pr.world_size = nprocs > 1 ? (int32_t)nprocs : -1;
		shp_put(sw, &pr);
		SHP_HDR(th, GT_REC_THREAD, pid);
		th.tid = pid;
		th.name_id = SHP_S_MAIN;
		shp_put(sw, &th);
		th.tid = pid + 1;
		th.name_id = SHP_S_WORKER;
		shp_put(sw, &th);
		SHP_HDR(dv, GT_REC_DEVICE, pid);
		dv.uuid[0] = 0xc0;
		dv.uuid[15] = (uint8_t)p; /* each process on its own GPU, all "device 0" */
		dv.name_id = SHP_S_DEVICE;
		dv.sm_count = 132;
		dv.cc_major = 9;
		dv.global_mem_bytes = 150000000000ull;
		shp_put(sw, &dv);
		SHP_HDR(cx, GT_REC_CONTEXT, pid);
		cx.context_id = 1;
		shp_put(sw, &cx);
		for (unsigned s = 0; s < 2; s++) {
			SHP_HDR(st, GT_REC_STREAM, pid);
			st.stream_id = s ? 13 : 7;
			st.context_id = 1;
			shp_put(sw, &st);
		}
	}
}

/* ---- the shapes; each returns the arrows both formats must draw ---- */

#define SHP_BATCH 8u

/* 64 kernels on one thread, in batches of 8: the calls, then their kernels (how the
 * collectors write them: an API record when the call returns, GPU work later). */
static inline uint64_t shp_api_first(struct shp_writer *sw)
{
	struct shp_launch l[SHP_BATCH];

	shp_meta(sw, 1);
	for (unsigned b = 0; b < 8; b++) {
		for (unsigned i = 0; i < SHP_BATCH; i++) {
			l[i] = shp_launch(sw, 0, SHP_PID, 7, 0);
			shp_write_api(sw, &l[i]);
		}
		for (unsigned i = 0; i < SHP_BATCH; i++)
			shp_write_gpu(sw, &l[i], 0, UINT32_MAX);
	}
	return 64;
}

/* The same with each batch's kernels before their calls, as CUPTI's buffers put them in
 * PyTorch traces recorded on an H200. */
static inline uint64_t shp_gpu_first(struct shp_writer *sw)
{
	struct shp_launch l[SHP_BATCH];

	shp_meta(sw, 1);
	for (unsigned b = 0; b < 8; b++) {
		for (unsigned i = 0; i < SHP_BATCH; i++) {
			l[i] = shp_launch(sw, 0, SHP_PID, 7, 0);
			shp_write_gpu(sw, &l[i], 0, UINT32_MAX);
		}
		for (unsigned i = 0; i < SHP_BATCH; i++)
			shp_write_api(sw, &l[i]);
	}
	return 64;
}

/* Two processes, two threads and two streams each; kernels, copies and memsets; per launch
 * one of four orders (call then work at once, work then call at once, call now and work
 * three launches later, work now and call three launches later), the processes' records
 * alternating; every other call has a driver call inside it, every eighth one starting at
 * the same nanosecond. */
static inline uint64_t shp_interleaved(struct shp_writer *sw)
{
	enum {
		N = 48,
		LAG = 3
	};
	struct shp_launch l[2][N];

	shp_meta(sw, 2);
	for (unsigned i = 0; i < N; i++)
		for (unsigned p = 0; p < 2; p++) {
			uint32_t pid = SHP_PID + p;

			l[p][i] = shp_launch(sw, p, i % 2 ? pid + 1 : pid, i % 3 ? 7 : 13, i % 3);
			l[p][i].driver_child = i % 2 == 0;
			l[p][i].child_tie = i % 8 == 0;
		}
	for (unsigned i = 0; i < N + LAG; i++)
		for (unsigned p = 0; p < 2; p++) {
			if (i < N) {
				switch (i % 4) {
				case 0:
					shp_write_api(sw, &l[p][i]);
					shp_write_gpu(sw, &l[p][i], 0, UINT32_MAX);
					break;
				case 1:
					shp_write_gpu(sw, &l[p][i], 0, UINT32_MAX);
					shp_write_api(sw, &l[p][i]);
					break;
				case 2:
					shp_write_api(sw, &l[p][i]);
					break;
				default:
					shp_write_gpu(sw, &l[p][i], 0, UINT32_MAX);
					break;
				}
			}
			if (i >= LAG && (i - LAG) % 4 == 2)
				shp_write_gpu(sw, &l[p][i - LAG], 0, UINT32_MAX);
			if (i >= LAG && (i - LAG) % 4 == 3)
				shp_write_api(sw, &l[p][i - LAG]);
		}
	return 2 * N;
}

/* The interleaved shape with a chunk every 5 records (and 256-byte chunks): both ends of
 * most launches sit in different chunks. */
static inline uint64_t shp_chunks(struct shp_writer *sw)
{
	sw->flush_every = 5;
	return shp_interleaved(sw);
}

/* CUDA graphs. Graph level: 8 launches, each one GRAPH record, call first for even ones,
 * work first for odd. Node level: 12 launches of 4 kernel nodes sharing the launch's
 * correlation id: the call then the nodes, the nodes then the call, two nodes, the call
 * and two nodes. One arrow per launch, to the node written first. */
static inline uint64_t shp_graph(struct shp_writer *sw)
{
	shp_meta(sw, 1);
	for (unsigned i = 0; i < 8; i++) {
		struct shp_launch l = shp_launch(sw, 0, SHP_PID, 7, 3);

		if (i % 2 == 0)
			shp_write_api(sw, &l);
		shp_write_gpu(sw, &l, 0, UINT32_MAX);
		if (i % 2 == 1)
			shp_write_api(sw, &l);
	}
	for (unsigned i = 0; i < 12; i++) {
		struct shp_launch l = shp_launch(sw, 0, SHP_PID, 13, 0);

		l.api_name = SHP_S_GRAPHLAUNCH;
		l.nodes = 4;
		switch (i % 3) {
		case 0:
			shp_write_api(sw, &l);
			shp_write_gpu(sw, &l, 0, 4);
			break;
		case 1:
			shp_write_gpu(sw, &l, 0, 4);
			shp_write_api(sw, &l);
			break;
		default:
			shp_write_gpu(sw, &l, 0, 2);
			shp_write_api(sw, &l);
			shp_write_gpu(sw, &l, 2, 4);
			break;
		}
	}
	return 8 + 12;
}

/* Partners missing: 10 complete launches (5 each order); 6 kernels whose call was not
 * recorded (API tracing filtered it out); 6 cudaGetDevice calls with a correlation id and
 * no GPU work; 4 kernels and 3 calls without a correlation id. */
static inline uint64_t shp_missing(struct shp_writer *sw)
{
	shp_meta(sw, 1);
	for (unsigned i = 0; i < 10; i++) {
		struct shp_launch l = shp_launch(sw, 0, SHP_PID, 7, 0);

		if (i % 2 == 0)
			shp_write_api(sw, &l);
		shp_write_gpu(sw, &l, 0, UINT32_MAX);
		if (i % 2 == 1)
			shp_write_api(sw, &l);
	}
	for (unsigned i = 0; i < 6; i++) {
		struct shp_launch l = shp_launch(sw, 0, SHP_PID, 7, 0);

		shp_write_gpu(sw, &l, 0, UINT32_MAX);
		l = shp_launch(sw, 0, SHP_PID, 7, 0);
		l.api_name = SHP_S_GETDEVICE;
		shp_write_api(sw, &l);
	}
	for (unsigned i = 0; i < 4; i++) {
		struct shp_launch l = shp_launch(sw, 0, SHP_PID, 7, 0);

		l.corr = 0;
		shp_write_gpu(sw, &l, 0, UINT32_MAX);
		if (i < 3)
			shp_write_api(sw, &l);
	}
	return 10;
}

/* Partners evicted: 65600 calls, then their kernels; then 65600 kernels, then their calls.
 * The exporters' caches hold 65536 launches per side, so in each half the first 64 launches'
 * partners are gone when they come: 2 * 65536 arrows. */
#define SHP_EVICT_N 65600u
static inline uint64_t shp_evicted(struct shp_writer *sw)
{
	shp_meta(sw, 1);
	for (unsigned half = 0; half < 2; half++) {
		uint64_t first = sw->launches[0];

		for (unsigned i = 0; i < SHP_EVICT_N; i++) {
			struct shp_launch l = shp_launch(sw, 0, SHP_PID, 7, 0);

			l.corr = (uint32_t)(1 + sw->launches[0]); /* consecutive */
			if (half == 0)
				shp_write_api(sw, &l);
			else
				shp_write_gpu(sw, &l, 0, UINT32_MAX);
		}
		sw->launches[0] = first;
		for (unsigned i = 0; i < SHP_EVICT_N; i++) {
			struct shp_launch l = shp_launch(sw, 0, SHP_PID, 7, 0);

			l.corr = (uint32_t)(1 + sw->launches[0]);
			if (half == 0)
				shp_write_gpu(sw, &l, 0, UINT32_MAX);
			else
				shp_write_api(sw, &l);
		}
	}
	return 2 * 65536;
}

/* Eight ranks in one trace, each with its 4,000 kernels written before their 4,000 calls:
 * 32,000 launches wait at once, of eight processes whose correlation ids overlap. Every
 * launch gets its arrow (the caches' sets of 8 keep them; direct-mapped caches lost about
 * one in six). */
static inline uint64_t shp_ranks(struct shp_writer *sw)
{
	enum {
		P = 8,
		N = 4000
	};

	shp_meta(sw, P);
	for (unsigned p = 0; p < P; p++)
		for (unsigned i = 0; i < N; i++) {
			struct shp_launch l = shp_launch(sw, p, SHP_PID + p, 7, 0);

			shp_write_gpu(sw, &l, 0, UINT32_MAX);
		}
	for (unsigned p = 0; p < P; p++) {
		sw->launches[p] = 0;
		for (unsigned i = 0; i < N; i++) {
			struct shp_launch l = shp_launch(sw, p, SHP_PID + p, 7, 0);

			shp_write_api(sw, &l);
		}
	}
	return P * N;
}

struct shp_shape {
	const char *name;
	uint64_t (*write)(struct shp_writer *sw);
	size_t chunk_bytes; /* 0: the writer's default */
	bool large;         /* too large for Perfetto's importer on every test run */
};

static const struct shp_shape shp_shapes[] = {
        {"api-first", shp_api_first, 0, false},
        {"gpu-first", shp_gpu_first, 0, false},
        {"interleaved", shp_interleaved, 0, false},
        {"chunks", shp_chunks, 256, false},
        {"graph", shp_graph, 0, false},
        {"missing", shp_missing, 0, false},
        {"evicted", shp_evicted, 0, true},
        {"ranks", shp_ranks, 0, true},
};
#define SHP_SHAPES (sizeof(shp_shapes) / sizeof(shp_shapes[0]))

/* Write shape s to path; *flows gets the arrows both formats must draw. 0 or -errno. */
static inline int shp_write(const struct shp_shape *s, const char *path, uint64_t *flows)
{
	struct gt_trace_info info = {
	        .clock_id = GT_CLOCK_MONOTONIC,
	        .start_realtime_ns = 1700000000000000000ull,
	        .start_trace_ns = SHP_T0,
	        .hostname = "shape-host",
	        .cmdline = "shape-app",
	        .tool_version = "test",
	};
	struct gt_writer_options wo = {.chunk_bytes = s->chunk_bytes};
	struct shp_writer sw = {0};
	int ret = gt_writer_open(path, &info, &wo, &sw.w);

	if (ret < 0)
		return ret;
	*flows = s->write(&sw);
	if (sw.err) {
		gt_writer_discard(sw.w);
		return sw.err;
	}
	return gt_writer_close(sw.w);
}

#endif /* GPUTRACE_TESTS_FLOW_SHAPES_H */
