/* Chrome trace (Trace Event Format JSON) exporter, laid out like PyTorch's profiler output
 * so Perfetto, chrome://tracing and Holistic Trace Analysis read it. Streams record by
 * record with flat memory; splits into numbered files with --max-size, or into one file per
 * rank (chrome-split.c). Runs in the CLI. Layout and rules: docs/exporters.md. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stacks.h"
#include "chrome-int.h"
#include "exporter.h"
#include "labels.h"
#include "outbuf.h"
#include "output.h"
#include "text.h"
#include "timeline.h"
#include "torchops.h"

/* GPUs are pseudo-processes (GT_GPU_PID_BASE + n, above Linux's largest pid, so they never
 * collide with a traced process and sort after all of them, as Kineto sorts GPUs last);
 * lanes are threads with the synthetic ids of gt_lanes_ids(). */
#define GPU_PID_BASE GT_GPU_PID_BASE
/* Viewers start failing above this (Perfetto UI, chrome://tracing). */
#define WARN_BYTES (500ull << 20)
/* Room kept at the end of a split file for the closing metadata. */
#define TRAILER_RESERVE (64u * 1024)

#define LIT(p, s) (memcpy((p), (s), sizeof(s) - 1), (p) + sizeof(s) - 1)

struct chrome {
	struct gt_stacks *stacks; /* borrowed; NULL: none */
	const struct gt_torchops *ops; /* borrowed; NULL: no PyTorch operators */
	uint32_t rec_pid;              /* the trace pid of the record being drawn */
	char stack_json[8192];    /* the "stack" arg being written (stack_arg()) */
	uint64_t python_ids;      /* "Python id"s given so far */
	struct gt_timeline m;
	struct gt_outbuf out;
	struct gt_reader *r;
	const struct gt_export_options *opts;
	int64_t base_ns;      /* subtracted from every timestamp: the trace's zero */
	bool first;           /* no event written yet in this file */
	unsigned file;        /* 0, 1, ... */
	uint64_t file_events; /* events in this file */
	uint64_t events;      /* events in all files */
	uint64_t counters;    /* of those, counter values */
	uint64_t bytes_done;  /* bytes of the files already closed */
	uint64_t largest;     /* largest file */
	char *path;           /* current output path; owned */
	const char *errmsg;
	char *out_path;               /* the first file's path; owned */
	const struct gt_steps *steps; /* borrowed; NULL: no ProfilerStep#N */
	const struct gt_ranks *ranks; /* borrowed; NULL: no distributedInfo */
	int32_t rank;                 /* the file of this rank; -1: a whole trace */
	uint64_t steps_written;       /* NVTX ranges written as ProfilerStep#N, all files */
	uint64_t file_steps;          /* the same in this file */
	/* the whole trace's zero, span and wall clock (docs/cli.md, "Time") */
	struct gt_trace_times times;
};

/* The handle of chrome-int.h. */
struct gt_chrome {
	struct chrome c;
	bool have_timeline; /* c.m was set up: gt_chrome_free() finishes it */
};

static char errbuf[512];
static char warnbuf[256];

/* ------------------------------------------------------------------------------------ */
/* Small writers                                                                          */

/* Separator before an event: the first in a file has none. */
static char *ev_begin(struct chrome *c, size_t need)
{
	char *p = gt_outbuf_space(&c->out, need + 4);

	if (!c->first)
		*p++ = ',';
	*p++ = '\n';
	c->first = false;
	return p;
}

static char *put_ts(char *p, const struct chrome *c, uint64_t ns)
{
	return gt_fmt_us3(p, (int64_t)(ns - (uint64_t)c->base_ns));
}

static char *put_pid_tid(char *p, uint32_t pid, uint32_t tid)
{
	p = LIT(p, "\"pid\":");
	p = gt_fmt_u64(p, pid);
	p = LIT(p, ",\"tid\":");
	return gt_fmt_u64(p, tid);
}

/* Escaped text of a string id (cached). */
static const char *text(struct chrome *c, uint32_t id, bool kernel, size_t *len)
{
	const char *s = gt_names_get(&c->m.names, id, kernel, len, NULL, NULL);

	if (!s) {
		*len = 0;
		return "";
	}
	return s;
}

/* {"ph":"M","name":WHAT,"pid":P,"tid":T,"args":{"KEY":"VAL"}} with VAL already escaped */
static void meta_str(struct chrome *c, const char *what, uint32_t pid, uint32_t tid,
                     const char *key, const char *val, size_t vlen)
{
	char *p = ev_begin(c, 256 + vlen);

	p = LIT(p, "{\"ph\":\"M\",\"name\":\"");
	memcpy(p, what, strlen(what));
	p += strlen(what);
	p = LIT(p, "\",");
	p = put_pid_tid(p, pid, tid);
	p = LIT(p, ",\"args\":{\"");
	memcpy(p, key, strlen(key));
	p += strlen(key);
	p = LIT(p, "\":\"");
	memcpy(p, val, vlen);
	p += vlen;
	p = LIT(p, "\"}}");
	gt_outbuf_commit(&c->out, p);
}

static void meta_sort(struct chrome *c, const char *what, uint32_t pid, uint32_t tid, uint64_t idx)
{
	char *p = ev_begin(c, 160);

	p = LIT(p, "{\"ph\":\"M\",\"name\":\"");
	memcpy(p, what, strlen(what));
	p += strlen(what);
	p = LIT(p, "\",");
	p = put_pid_tid(p, pid, tid);
	p = LIT(p, ",\"args\":{\"sort_index\":");
	p = gt_fmt_u64(p, idx);
	p = LIT(p, "}}");
	gt_outbuf_commit(&c->out, p);
}

/* ------------------------------------------------------------------------------------ */
/* Metadata, written the first time something is used in a file                         */

static void announce_proc(struct chrome *c, struct gt_timeline_proc *pr)
{
	char name[GT_LABELS_PROCESS_MAX];
	char *n;

	if (pr->announced && !pr->info_changed)
		return;
	n = gt_labels_process(&c->m, pr, name, true);
	meta_str(c, "process_name", pr->pid, 0, "name", name, (size_t)(n - name));
	meta_sort(c, "process_sort_index", pr->pid, 0, pr->pid);
	pr->announced = true;
	pr->info_changed = false;
}

static void announce_gpu(struct chrome *c, struct gt_timeline_gpu *g)
{
	char name[32];
	char *n = name;
	uint32_t pid = gt_lanes_gpu_pid(&c->m, g);

	if (g->announced && !g->info_changed)
		return;
	n = gt_labels_gpu(n, g);
	meta_str(c, "process_name", pid, 0, "name", name, (size_t)(n - name));
	/* after every traced process, whatever its pid, as Kineto sorts GPUs */
	meta_sort(c, "process_sort_index", pid, 0, GPU_PID_BASE + g->cat->number);
	if (g->cat->name_id) {
		size_t len;
		const char *dn = text(c, g->cat->name_id, false, &len);

		meta_str(c, "process_labels", pid, 0, "labels", dn, len);
	}
	g->announced = true;
	g->info_changed = false;
}

/* Chrome pid and tid of a lane: the model's, shared with perfetto. */
static void lane_ids(const struct chrome *c, const struct gt_track *t, unsigned lane, uint32_t *pid,
                     uint32_t *tid)
{
	gt_lanes_ids(&c->m, t, lane, pid, tid);
}

static void announce_lane(struct chrome *c, struct gt_track *t, unsigned lane)
{
	struct gt_lane *l = &t->lanes[lane];
	char name[GT_LANE_NAME_MAX];
	char *n;
	uint32_t pid, tid;
	uint64_t sort;

	if (l->announced && !t->name_changed)
		return;
	if (t->kind == GT_TRACK_STREAM)
		announce_gpu(c, c->m.gpus[t->gpu]);
	else
		announce_proc(c, c->m.procs[t->proc]);
	lane_ids(c, t, lane, &pid, &tid);
	n = gt_lanes_name(&c->m, t, lane, name, true);
	switch (t->kind) {
	case GT_TRACK_THREAD:
	case GT_TRACK_SYNC:
		sort = t->id;
		break;
	case GT_TRACK_STREAM:
		sort = tid & ((1u << GT_LANE_SHIFT) - 1);
		break;
	case GT_TRACK_NVTX:
		sort = GT_LANE_NVTX_TID;
		break;
	default:
		sort = GT_LANE_OVERHEAD_TID;
		break;
	}
	meta_str(c, "thread_name", pid, tid, "name", name, (size_t)(n - name));
	meta_sort(c, "thread_sort_index", pid, tid,
	          sort * 2 * GT_LANES_MAX + (t->kind == GT_TRACK_SYNC ? GT_LANES_MAX : 0) + lane);
	l->announced = true;
	/* a late thread name: describe the other lanes again too */
	if (t->name_changed) {
		t->name_changed = false;
		for (unsigned k = 0; k < t->nlanes; k++)
			if (k != lane && t->lanes[k].announced) {
				t->lanes[k].announced = false;
				announce_lane(c, t, k);
			}
	}
}

/* ------------------------------------------------------------------------------------ */
/* Events                                                                                 */

/* Start an "X" slice on a lane up to the opening of "args" (inclusive). */
static char *slice_head(struct chrome *c, struct gt_track *t, unsigned lane, const char *cat,
                        const char *name, size_t nlen, uint64_t start, uint64_t end, size_t extra)
{
	uint32_t pid, tid;
	char *p;

	announce_lane(c, t, lane);
	lane_ids(c, t, lane, &pid, &tid);
	p = ev_begin(c, 256 + nlen + extra);
	p = LIT(p, "{\"ph\":\"X\",\"cat\":\"");
	memcpy(p, cat, strlen(cat));
	p += strlen(cat);
	p = LIT(p, "\",\"name\":\"");
	memcpy(p, name, nlen);
	p += nlen;
	p = LIT(p, "\",");
	p = put_pid_tid(p, pid, tid);
	p = LIT(p, ",\"ts\":");
	p = put_ts(p, c, start);
	p = LIT(p, ",\"dur\":");
	p = gt_fmt_milli(p, end > start ? end - start : 0);
	p = LIT(p, ",\"args\":{");
	return p;
}

static char *arg_u64(char *p, const char *key, size_t klen, uint64_t v)
{
	*p++ = '"';
	memcpy(p, key, klen);
	p += klen;
	p = LIT(p, "\":");
	return gt_fmt_u64(p, v);
}

#define ARG(p, key, v) arg_u64((p), (key), sizeof(key) - 1, (v))

static char *arg_dim3(char *p, const char *key, size_t klen, uint32_t x, uint32_t y, uint32_t z)
{
	*p++ = '"';
	memcpy(p, key, klen);
	p += klen;
	p = LIT(p, "\":[");
	p = gt_fmt_u64(p, x);
	*p++ = ',';
	p = gt_fmt_u64(p, y);
	*p++ = ',';
	p = gt_fmt_u64(p, z);
	*p++ = ']';
	return p;
}

static void end_event(struct chrome *c, char *p)
{
	p = LIT(p, "}}");
	gt_outbuf_commit(&c->out, p);
	c->events++;
	c->file_events++;
}

/* The arrow `id` from a launching API call (its start on lane alane of track at) to its GPU
 * work (started at gpu_ts on lane glane of track gt), written as a pair once both ends are
 * known: the model decided it (gt_flows_api, gt_flows_gpu), the same as for perfetto. */
static void flow_pair(struct chrome *c, uint64_t id, struct gt_track *at, unsigned alane,
                      uint64_t api_ts, struct gt_track *gt, unsigned glane, uint64_t gpu_ts)
{
	uint32_t pid, tid;
	char *p;

	announce_lane(c, at, alane);
	lane_ids(c, at, alane, &pid, &tid);
	p = ev_begin(c, 512);
	p = LIT(p, "{\"ph\":\"s\",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"id\":");
	p = gt_fmt_u64(p, id);
	*p++ = ',';
	p = put_pid_tid(p, pid, tid);
	p = LIT(p, ",\"ts\":");
	p = put_ts(p, c, api_ts);
	p = LIT(p, "},\n{\"ph\":\"f\",\"bp\":\"e\",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"id\":");
	p = gt_fmt_u64(p, id);
	*p++ = ',';
	lane_ids(c, gt, glane, &pid, &tid);
	p = put_pid_tid(p, pid, tid);
	p = LIT(p, ",\"ts\":");
	p = put_ts(p, c, gpu_ts);
	*p++ = '}';
	gt_outbuf_commit(&c->out, p);
}

static void gpu_flow(struct chrome *c, const struct gt_gpu_span *s, uint32_t pid,
                     struct gt_track *t, unsigned lane)
{
	const struct gt_flow_slot *api;
	uint64_t id;

	if (!s->correlation_id)
		return;
	api = gt_flows_gpu(&c->m, pid, s->correlation_id, s->start_ns, t->index, lane, &id);
	if (api)
		flow_pair(c, id, c->m.tracks[api->track], api->lane, api->ts_ns, t, lane,
		          s->start_ns);
}

static struct gt_track *stream_track(struct chrome *c, uint32_t pid, const struct gt_gpu_span *s)
{
	struct gt_track *t = gt_timeline_track(&c->m, GT_TRACK_STREAM, pid, s->stream_id);
	struct gt_timeline_gpu *g;

	if (!t)
		return NULL;
	if (t->nlanes == 0) {
		g = gt_timeline_gpu(&c->m, pid, s->device_id);
		if (!g)
			return NULL;
		for (uint32_t i = 0; i < c->m.ngpus; i++)
			if (c->m.gpus[i] == g)
				t->gpu = i;
	}
	return t;
}

/* ,"External id":N of the operator that launched (pid, corr), as Kineto gives kernels and
 * launches the id of their cpu_op; nothing when none did. */
static char *op_arg(const struct chrome *c, char *p, uint32_t pid, uint32_t corr)
{
	uint64_t op = gt_torchops_of_launch(c->ops, pid, corr);

	if (!op)
		return p;
	p = LIT(p, ",\"External id\":");
	return gt_fmt_u64(p, op);
}

static char *span_args(const struct chrome *c, char *p, const struct gt_gpu_span *s)
{
	p = ARG(p, "device", s->device_id);
	*p++ = ',';
	p = ARG(p, "context", s->context_id);
	*p++ = ',';
	p = ARG(p, "stream", s->stream_id);
	*p++ = ',';
	p = ARG(p, "correlation", s->correlation_id);
	return op_arg(c, p, c->rec_pid, s->correlation_id);
}

/* Open the slice of GPU-side work (or a host wait) on track t: place it in a lane that keeps
 * the track nested, write the head and the span's args. *lane gets the lane, for the flow. */
static char *span_slice(struct chrome *c, struct gt_track *t, const struct gt_gpu_span *s,
                        const char *cat, const char *name, size_t nlen, size_t extra,
                        unsigned *lane)
{
	char *p;

	*lane = gt_lanes_place(&c->m, t, s->start_ns, s->end_ns);
	p = slice_head(c, t, *lane, cat, name, nlen, s->start_ns, s->end_ns, extra);
	return span_args(c, p, s);
}

static uint64_t span_dur_ns(const struct gt_gpu_span *s)
{
	return s->end_ns > s->start_ns ? s->end_ns - s->start_ns : 0;
}

/* Copy a NUL-terminated string without its NUL; returns the end. */
static char *put_str(char *p, const char *str)
{
	size_t len = strlen(str);

	memcpy(p, str, len);
	return p + len;
}

/* ",\"blocks per SM\":B,\"warps per SM\":W" as Kineto computes them (blocks of the grid over
 * the GPU's SMs; that times the block's threads over 32), when the GPU's SM count is known. */
static char *put_sm_load(char *p, const struct gt_rec_kernel *k, uint32_t sm_count)
{
	double blocks, warps;

	if (!sm_count)
		return p;
	blocks = (double)k->grid_x * k->grid_y * k->grid_z / sm_count;
	warps = blocks * ((double)k->block_x * k->block_y * k->block_z) / 32.0;
	if (!(warps < 1e15) || !(blocks < 1e15))
		return p;
	p = LIT(p, ",\"blocks per SM\":");
	p = gt_fmt_milli(p, (uint64_t)(blocks * 1000.0 + 0.5));
	p = LIT(p, ",\"warps per SM\":");
	return gt_fmt_milli(p, (uint64_t)(warps * 1000.0 + 0.5));
}

static int emit_kernel(void *ctx, const struct gt_rec_kernel *k)
{
	struct chrome *c = ctx;
	struct gt_track *t = stream_track(c, k->hdr.pid, &k->span);
	size_t nlen;
	const char *name;
	unsigned lane;
	char *p;

	if (!t)
		return -ENOMEM;
	lane = gt_lanes_place(&c->m, t, k->span.start_ns, k->span.end_ns);
	/* describe the lane before taking the name: caching the names a description needs
	 * may move the cache, and with it a name taken before */
	announce_lane(c, t, lane);
	name = text(c, k->name_id, true, &nlen);
	p = slice_head(c, t, lane, "kernel", name, nlen, k->span.start_ns, k->span.end_ns, 700);
	p = span_args(c, p, &k->span);
	p = LIT(p, ",");
	p = arg_dim3(p, "grid", 4, k->grid_x, k->grid_y, k->grid_z);
	p = LIT(p, ",");
	p = arg_dim3(p, "block", 5, k->block_x, k->block_y, k->block_z);
	p = LIT(p, ",");
	p = ARG(p, "registers per thread", k->registers);
	p = LIT(p, ",");
	p = ARG(p, "shared memory", (uint64_t)k->static_smem_bytes + k->dynamic_smem_bytes);
	p = LIT(p, ",");
	p = ARG(p, "static shared memory", k->static_smem_bytes);
	p = LIT(p, ",");
	p = ARG(p, "dynamic shared memory", k->dynamic_smem_bytes);
	p = LIT(p, ",");
	p = ARG(p, "local memory per thread", k->local_mem_bytes);
	if (k->cluster_x) {
		p = LIT(p, ",");
		p = arg_dim3(p, "cluster", 7, k->cluster_x, k->cluster_y, k->cluster_z);
	}
	if (k->graph_id) {
		p = LIT(p, ",");
		p = ARG(p, "graph id", k->graph_id);
		p = LIT(p, ",");
		p = ARG(p, "graph node id", k->graph_node_id);
	}
	p = put_sm_load(p, k, c->m.gpus[t->gpu]->cat->sm_count);
	end_event(c, p);
	gpu_flow(c, &k->span, k->hdr.pid, t, lane);
	return 0;
}

static char *put_bandwidth(char *p, uint64_t bytes, uint64_t dur_ns)
{
	double gbps;

	if (dur_ns == 0)
		return p;
	/* bytes per ns is GB/s */
	gbps = (double)bytes / (double)dur_ns;
	if (gbps > 1e12)
		return p;
	p = LIT(p, ",\"memory bandwidth (GB/s)\":");
	return gt_fmt_milli(p, (uint64_t)(gbps * 1000.0 + 0.5));
}

static int emit_memcpy(void *ctx, const struct gt_rec_memcpy *r)
{
	struct chrome *c = ctx;
	struct gt_track *t = stream_track(c, r->hdr.pid, &r->span);
	char name[GT_LABELS_COPY_MAX];
	char *n;
	unsigned lane;
	char *p;

	if (!t)
		return -ENOMEM;
	n = gt_labels_memcpy(name, r->copy_kind, r->src_kind, r->dst_kind);
	p = span_slice(c, t, &r->span, "gpu_memcpy", name, (size_t)(n - name), 400, &lane);
	p = LIT(p, ",");
	p = ARG(p, "bytes", r->bytes);
	p = LIT(p, ",\"kind\":\"");
	p = put_str(p, gt_memcpy_kind_name(r->copy_kind));
	*p++ = '"';
	p = put_bandwidth(p, r->bytes, span_dur_ns(&r->span));
	if (r->copy_kind == GT_MEMCPY_PTOP) {
		p = LIT(p, ",");
		p = ARG(p, "src device", r->src_device);
		p = LIT(p, ",");
		p = ARG(p, "dst device", r->dst_device);
	}
	end_event(c, p);
	gpu_flow(c, &r->span, r->hdr.pid, t, lane);
	return 0;
}

static int emit_memset(void *ctx, const struct gt_rec_memset *r)
{
	struct chrome *c = ctx;
	struct gt_track *t = stream_track(c, r->hdr.pid, &r->span);
	char name[GT_LABELS_COPY_MAX];
	char *n;
	unsigned lane;
	char *p;

	if (!t)
		return -ENOMEM;
	n = gt_labels_memset(name, r->mem_kind);
	p = span_slice(c, t, &r->span, "gpu_memset", name, (size_t)(n - name), 300, &lane);
	p = LIT(p, ",");
	p = ARG(p, "bytes", r->bytes);
	p = LIT(p, ",");
	p = ARG(p, "value", r->value);
	p = put_bandwidth(p, r->bytes, span_dur_ns(&r->span));
	end_event(c, p);
	gpu_flow(c, &r->span, r->hdr.pid, t, lane);
	return 0;
}

static int emit_graph(void *ctx, const struct gt_rec_graph *r)
{
	struct chrome *c = ctx;
	struct gt_track *t = stream_track(c, r->hdr.pid, &r->span);
	char name[48];
	char *n = name;
	unsigned lane;
	char *p;

	if (!t)
		return -ENOMEM;
	n = LIT(n, "CUDA graph ");
	n = gt_fmt_u64(n, r->graph_id);
	p = span_slice(c, t, &r->span, "cuda_graph", name, (size_t)(n - name), 300, &lane);
	p = LIT(p, ",");
	p = ARG(p, "graph id", r->graph_id);
	end_event(c, p);
	gpu_flow(c, &r->span, r->hdr.pid, t, lane);
	return 0;
}

/* "stack":["inner (app)",...] for stack `id` of process pid, innermost first, into
 * c->stack_json; its length, 0 when there is none. */
static size_t stack_arg(struct chrome *c, uint32_t pid, uint32_t id)
{
	const struct gt_stack_sym *s;
	char *p = c->stack_json, *end = p + sizeof(c->stack_json) - 8;
	unsigned n = 0;

	if (!c->stacks || !id || !(s = gt_stacks_get(c->stacks, pid, id, &n)))
		return 0;
	p = LIT(p, "\"stack\":[");
	for (unsigned i = 0; i < n; i++) {
		const char *base = strrchr(s[i].module, '/');
		char frame[1024];
		int w = snprintf(frame, sizeof(frame), "%s (%s)", s[i].symbol,
		                 base ? base + 1 : s[i].module);

		if (w < 0 || p + w + 4 > end)
			break;
		if (i)
			*p++ = ',';
		*p++ = '"';
		for (const char *f = frame; *f; f++)
			*p++ = *f == '"' || *f == '\\' || (unsigned char)*f < 0x20 ? '?' : *f;
		*p++ = '"';
	}
	*p++ = ']';
	return (size_t)(p - c->stack_json);
}

/* The Python frames of stack `id` of process pid as python_function events of [start, end]
 * on lane `lane` of t, outermost first, written before the event they stand above so that
 * viewers nest them over it; named and linked as PyTorch's profiler writes them ("FILE(LINE):
 * FUNCTION", "Python id", "Python parent id"). */
static void python_events(struct chrome *c, struct gt_track *t, unsigned lane, uint32_t pid,
                          uint32_t id, uint64_t start, uint64_t end)
{
	const struct gt_stack_sym *s;
	unsigned n = 0;
	uint64_t parent = 0;

	if (!c->stacks || !id || !(s = gt_stacks_get(c->stacks, pid, id, &n)))
		return;
	for (unsigned i = n; i-- > 0;) {
		char name[1024], *p;
		int w;
		size_t len;

		if (!s[i].python)
			continue;
		w = snprintf(name, sizeof(name), "%s(%d): %s", s[i].module, (int)s[i].line,
		             s[i].symbol);
		len = w < 0 ? 0 : (size_t)w < sizeof(name) ? (size_t)w : sizeof(name) - 1;
		for (size_t k = 0; k < len; k++)
			if (name[k] == '"' || name[k] == '\\' || (unsigned char)name[k] < 0x20)
				name[k] = '?';
		p = slice_head(c, t, lane, "python_function", name, len, start, end, 96);
		p = ARG(p, "Python id", ++c->python_ids);
		if (parent) {
			p = LIT(p, ",");
			p = ARG(p, "Python parent id", parent);
		}
		end_event(c, p);
		parent = c->python_ids;
	}
}

/* The "stack" arg, after a comma when args came before it. */
static char *put_stack(struct chrome *c, char *p, size_t len)
{
	if (!len)
		return p;
	if (p[-1] != '{')
		*p++ = ',';
	memcpy(p, c->stack_json, len);
	return p + len;
}

static int emit_api(void *ctx, const struct gt_rec_api *r)
{
	struct chrome *c = ctx;
	struct gt_track *t = gt_timeline_track(&c->m, GT_TRACK_THREAD, r->hdr.pid, r->tid);
	const struct gt_flow_slot *gpu = NULL;
	size_t nlen, slen;
	const char *name;
	unsigned lane;
	char *p;

	if (!t)
		return -ENOMEM;
	lane = gt_lanes_place(&c->m, t, r->start_ns, r->end_ns);
	announce_lane(c, t, lane); /* before the name: see emit_kernel */
	python_events(c, t, lane, r->hdr.pid, r->stack_id, r->start_ns, r->end_ns);
	name = text(c, r->name_id, false, &nlen);
	slen = stack_arg(c, r->hdr.pid, r->stack_id);
	p = slice_head(c, t, lane, r->domain == GT_API_DRIVER ? "cuda_driver" : "cuda_runtime",
	               name, nlen, r->start_ns, r->end_ns, 200 + slen);
	p = ARG(p, "correlation", r->correlation_id);
	p = op_arg(c, p, r->hdr.pid, r->correlation_id);
	p = LIT(p, ",");
	p = ARG(p, "cbid", r->cbid);
	if (r->return_code) {
		p = LIT(p, ",\"return code\":");
		p = gt_fmt_i64(p, r->return_code);
	}
	p = put_stack(c, p, slen);
	end_event(c, p);
	if (r->correlation_id) {
		uint64_t id;

		gpu = gt_flows_api(&c->m, r->hdr.pid, r->correlation_id, r->start_ns, t->index,
		                   lane, &id);
		/* the GPU work came first: draw the arrow now */
		if (gpu)
			flow_pair(c, id, t, lane, r->start_ns, c->m.tracks[gpu->track], gpu->lane,
			          gpu->ts_ns);
	}
	return 0;
}

static char *nvtx_args(struct chrome *c, char *p, const struct gt_rec_nvtx *r)
{
	bool comma = false;

	if (r->domain_id) {
		size_t len;
		const char *d = text(c, r->domain_id, false, &len);

		p = LIT(p, "\"domain\":\"");
		memcpy(p, d, len);
		p += len;
		*p++ = '"';
		comma = true;
	}
	if (r->color) {
		static const char hex[] = "0123456789abcdef";

		if (comma)
			*p++ = ',';
		p = LIT(p, "\"color\":\"#");
		for (int sh = 28; sh >= 0; sh -= 4)
			*p++ = hex[(r->color >> sh) & 15];
		*p++ = '"';
		comma = true;
	}
	if (r->category) {
		if (comma)
			*p++ = ',';
		p = ARG(p, "category", r->category);
		comma = true;
	}
	if (r->kind == GT_NVTX_START_END) {
		if (comma)
			*p++ = ',';
		p = ARG(p, "start tid", r->tid);
		*p++ = ',';
		p = ARG(p, "end tid", r->end_tid);
	}
	return p;
}

/* The message of an NVTX record (returned, *nlen bytes) and the length of its domain. After
 * its lane is described (see emit_kernel), and the domain first, so that caching the message
 * cannot move it: the two stay valid until the next name is cached. */
static const char *nvtx_names(struct chrome *c, const struct gt_rec_nvtx *r, size_t *nlen,
                              size_t *dlen)
{
	*dlen = 0;
	if (r->domain_id)
		text(c, r->domain_id, false, dlen);
	return text(c, r->message_id, false, nlen);
}

/* A PyTorch operator (torchops.h) as the PyTorch profiler writes it: a cpu_op named after
 * the operator, with the args HTA and TensorBoard read. msg: its NVTX message, escaped. */
static int emit_op(struct chrome *c, const struct gt_rec_nvtx *r, struct gt_track *t,
                   unsigned lane, uint64_t op, const char *msg, size_t mlen)
{
	struct gt_torchop_fields f;
	size_t slen;
	char *p;

	if (!gt_torchop_parse(msg, mlen, &f))
		return -EINVAL; /* the model parsed the same message */
	slen = stack_arg(c, r->hdr.pid, r->stack_id);
	p = slice_head(c, t, lane, "cpu_op", f.name, f.name_len, r->start_ns, r->end_ns,
	               200 + f.sizes_len + slen);
	p = LIT(p, "\"External id\":");
	p = gt_fmt_u64(p, op);
	if (f.seq >= 0) {
		p = LIT(p, ",\"Sequence number\":");
		p = gt_fmt_i64(p, f.seq);
	}
	if (f.op_id) {
		p = LIT(p, ",\"Record function id\":");
		p = gt_fmt_i64(p, f.op_id);
	}
	if (f.sizes) {
		p = LIT(p, ",\"Input Dims\":");
		memcpy(p, f.sizes, f.sizes_len);
		p += f.sizes_len;
	}
	p = put_stack(c, p, slen);
	end_event(c, p);
	return 0;
}

static int emit_nvtx(void *ctx, const struct gt_rec_nvtx *r)
{
	struct chrome *c = ctx;
	const struct gt_step *step = NULL;
	struct gt_track *t;
	uint64_t op;
	size_t nlen, dlen = 0, mlen = 0, slen;
	const char *name, *msg = NULL;
	char step_name[48];
	unsigned lane;
	char *p;

	if (r->kind == GT_NVTX_MARK) {
		uint32_t pid, tid;

		t = gt_timeline_track(&c->m, GT_TRACK_THREAD, r->hdr.pid, r->tid);
		if (!t)
			return -ENOMEM;
		if (t->nlanes == 0)
			t->nlanes = 1; /* instants need no lane of their own */
		announce_lane(c, t, 0);
		python_events(c, t, 0, r->hdr.pid, r->stack_id, r->start_ns, r->start_ns);
		name = nvtx_names(c, r, &nlen, &dlen);
		lane_ids(c, t, 0, &pid, &tid);
		slen = stack_arg(c, r->hdr.pid, r->stack_id);
		p = ev_begin(c, 512 + nlen + dlen + slen);
		p = LIT(p, "{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"user_annotation\",\"name\":\"");
		memcpy(p, name, nlen);
		p += nlen;
		p = LIT(p, "\",");
		p = put_pid_tid(p, pid, tid);
		p = LIT(p, ",\"ts\":");
		p = put_ts(p, c, r->start_ns);
		p = LIT(p, ",\"args\":{");
		p = nvtx_args(c, p, r);
		p = put_stack(c, p, slen);
		end_event(c, p);
		return 0;
	}
	if (r->kind == GT_NVTX_START_END)
		t = gt_timeline_track(&c->m, GT_TRACK_NVTX, r->hdr.pid, 0);
	else
		t = gt_timeline_track(&c->m, GT_TRACK_THREAD, r->hdr.pid, r->tid);
	if (!t)
		return -ENOMEM;
	lane = gt_lanes_place(&c->m, t, r->start_ns, r->end_ns);
	announce_lane(c, t, lane);
	python_events(c, t, lane, r->hdr.pid, r->stack_id, r->start_ns, r->end_ns);
	name = nvtx_names(c, r, &nlen, &dlen);
	mlen = nlen;
	if (c->ops && (op = gt_torchops_of_range(c->ops, r)) != 0)
		return emit_op(c, r, t, lane, op, name, nlen);
	if (c->steps)
		step = gt_steps_find(c->steps, r->hdr.pid, r->message_id, r->start_ns, r->end_ns);
	if (step) {
		/* a training step, named as PyTorch's profiler names it; the NVTX message
		 * stays in the args when it was another */
		char *sn = LIT(step_name, "ProfilerStep#");

		sn = gt_fmt_i64(sn, step->number);
		if (nlen != (size_t)(sn - step_name) || memcmp(name, step_name, nlen) != 0)
			msg = name;
		name = step_name;
		nlen = (size_t)(sn - step_name);
		c->steps_written++;
		c->file_steps++;
	}
	slen = stack_arg(c, r->hdr.pid, r->stack_id);
	p = slice_head(c, t, lane, "user_annotation", name, nlen, r->start_ns, r->end_ns,
	               400 + dlen + (msg ? mlen + 24 : 0) + slen);
	p = nvtx_args(c, p, r);
	if (msg) {
		if (p[-1] != '{')
			*p++ = ',';
		p = LIT(p, "\"nvtx message\":\"");
		memcpy(p, msg, mlen);
		p += mlen;
		*p++ = '"';
	}
	p = put_stack(c, p, slen);
	end_event(c, p);
	return 0;
}

static int emit_sync(void *ctx, const struct gt_rec_sync *r)
{
	struct chrome *c = ctx;
	const char *name = gt_labels_sync(r->kind);
	struct gt_track *t = gt_timeline_track(&c->m, GT_TRACK_SYNC, r->hdr.pid, r->tid);
	unsigned lane;
	char *p;

	if (!t)
		return -ENOMEM;
	p = span_slice(c, t, &r->span, "cuda_sync", name, strlen(name), 300, &lane);
	if (r->kind == GT_SYNC_EVENT || r->kind == GT_SYNC_STREAM_WAIT) {
		p = LIT(p, ",");
		p = ARG(p, "event", r->event_id);
	}
	end_event(c, p);
	return 0;
}

static int emit_overhead(void *ctx, const struct gt_rec_overhead *r)
{
	struct chrome *c = ctx;
	const char *name = gt_labels_overhead(r->kind);
	struct gt_track *t = gt_timeline_track(&c->m, GT_TRACK_OVERHEAD, r->hdr.pid, 0);
	unsigned lane;
	char *p;

	if (!t)
		return -ENOMEM;
	lane = gt_lanes_place(&c->m, t, r->start_ns, r->end_ns);
	p = slice_head(c, t, lane, "overhead", name, strlen(name), r->start_ns, r->end_ns, 200);
	p = ARG(p, r->object_kind == 2 ? "device" : "thread", r->object_id);
	end_event(c, p);
	return 0;
}

/* A value of one of GPU g's byte counters, `name` a literal. */
static void counter_event(struct chrome *c, const struct gt_timeline_gpu *g, const char *name,
                          uint64_t ts, int64_t bytes)
{
	char *p = ev_begin(c, 200);

	p = LIT(p, "{\"ph\":\"C\",\"name\":\"");
	p = stpcpy(p, name);
	p = LIT(p, "\",");
	p = put_pid_tid(p, gt_lanes_gpu_pid(&c->m, g), 0);
	p = LIT(p, ",\"ts\":");
	p = put_ts(p, c, ts);
	p = LIT(p, ",\"args\":{\"bytes\":");
	p = gt_fmt_i64(p, bytes);
	end_event(c, p);
	c->counters++;
}

static int emit_memory(void *ctx, const struct gt_rec_memory *r)
{
	struct chrome *c = ctx;
	struct gt_timeline_gpu *g = gt_timeline_gpu(&c->m, r->hdr.pid, r->device_id);

	if (!g)
		return -ENOMEM;
	announce_gpu(c, g);
	counter_event(c, g, "memory in use", r->ts_ns, g->cat->mem_in_use);
	return 0;
}

/* A GPU metrics sample: a counter event per metric on its GPU's row, named as the metric,
 * its value under the metric's unit ("SMs Active", {"%": 42.5}). */
static int emit_gpu_sample(void *ctx, const struct gt_rec_gpu_sample *r)
{
	struct chrome *c = ctx;
	struct gt_gm_gpu *gm = gt_gm_gpu(&c->m.gm, &c->m.cat, r->hdr.pid, r->device_id, NULL);
	struct gt_timeline_gpu *g;

	if (!gm)
		return 0; /* no GPU_METRIC record said what its values are */
	g = gt_timeline_gpu(&c->m, r->hdr.pid, r->device_id);
	if (!g)
		return -ENOMEM;
	announce_gpu(c, g);
	for (unsigned i = 0; i < gm->nmetrics; i++) {
		size_t nlen = 0, ulen = 0;
		const char *n, *u;
		char *p;

		if (!gt_gm_value(gm, r, i, &(double){0}))
			continue;
		n = text(c, gm->m[i].name_id, false, &nlen);
		u = text(c, gm->m[i].unit_id, false, &ulen);
		p = ev_begin(c, 200 + nlen + ulen);
		p = LIT(p, "{\"ph\":\"C\",\"cat\":\"gpu_metrics\",\"name\":\"");
		memcpy(p, n, nlen); /* text() escaped it */
		p += nlen;
		p = LIT(p, "\",");
		p = put_pid_tid(p, gt_lanes_gpu_pid(&c->m, g), 0);
		p = LIT(p, ",\"ts\":");
		p = put_ts(p, c, r->ts_ns);
		p = LIT(p, ",\"args\":{\"");
		memcpy(p, u, ulen);
		p += ulen;
		p = LIT(p, "\":");
		p = gt_gm_fmt(p, gm, r, i);
		end_event(c, p);
		c->counters++;
	}
	return 0;
}

/* A memory pool created, trimmed or destroyed: an instant across its GPU's rows, and the
 * bytes its GPU's pools now reserve as a counter. */
static int emit_memory_pool(void *ctx, const struct gt_rec_memory_pool *r)
{
	struct chrome *c = ctx;
	struct gt_timeline_gpu *g = gt_timeline_gpu(&c->m, r->hdr.pid, r->device_id);
	char *p;

	if (!g)
		return -ENOMEM;
	announce_gpu(c, g);
	p = ev_begin(c, 400);
	p = LIT(p, "{\"ph\":\"i\",\"s\":\"p\",\"cat\":\"memory_pool\",\"name\":\"memory pool ");
	p = put_str(p, gt_pool_op_name(r->op));
	p = LIT(p, "\",");
	p = put_pid_tid(p, gt_lanes_gpu_pid(&c->m, g), 0);
	p = LIT(p, ",\"ts\":");
	p = put_ts(p, c, r->ts_ns);
	p = LIT(p, ",\"args\":{\"address\":\"");
	p = gt_fmt_hex(p, r->address);
	p = LIT(p, "\",\"reserved bytes\":");
	p = gt_fmt_u64(p, r->reserved_bytes);
	p = LIT(p, ",\"release threshold bytes\":");
	p = gt_fmt_u64(p, r->release_threshold_bytes);
	p = LIT(p, ",\"pool type\":\"");
	p = put_str(p, gt_pool_type_name(r->pool_type));
	p = LIT(p, "\",\"correlation\":");
	p = gt_fmt_u64(p, r->correlation_id);
	end_event(c, p);
	counter_event(c, g, "memory pool reserved", r->ts_ns, g->pool_reserved);
	return 0;
}

/* Process-scoped or global instant on a process's main row. */
static char *instant_head(struct chrome *c, uint32_t pid, const char *scope, const char *cat,
                          const char *name, size_t nlen, uint64_t ts, size_t extra)
{
	struct gt_timeline_proc *pr = gt_timeline_proc(&c->m, pid);
	char *p;

	announce_proc(c, pr);
	pid = pr->pid; /* the pid it is shown under (a reused pid's own) */
	p = ev_begin(c, 300 + nlen + extra);
	p = LIT(p, "{\"ph\":\"i\",\"s\":\"");
	memcpy(p, scope, strlen(scope));
	p += strlen(scope);
	p = LIT(p, "\",\"cat\":\"");
	memcpy(p, cat, strlen(cat));
	p += strlen(cat);
	p = LIT(p, "\",\"name\":\"");
	memcpy(p, name, nlen);
	p += nlen;
	p = LIT(p, "\",");
	p = put_pid_tid(p, pid, pid);
	p = LIT(p, ",\"ts\":");
	p = put_ts(p, c, ts);
	p = LIT(p, ",\"args\":{");
	return p;
}

static int emit_loss(void *ctx, const struct gt_rec_loss *r)
{
	struct chrome *c = ctx;
	const char *src = gt_loss_source_name(r->source);
	char name[GT_CATALOG_DAMAGE_TEXT + 32];
	char *n = name, *p;

	if (!gt_timeline_proc(&c->m, r->hdr.pid))
		return -ENOMEM;
	if (r->source == GT_LOSS_FILE) {
		/* what merge or --reindex could not read, in the one wording */
		struct gt_catalog_damage d;

		gt_catalog_damage_of_loss(r, &d);
		n = LIT(n, "damaged file: ");
		gt_catalog_damage_text(&d, n, sizeof(name) - (size_t)(n - name));
		n += strlen(n);
	} else {
		n = LIT(n, "lost ");
		n = gt_fmt_u64(n, r->count);
		n = LIT(n, " records (");
		memcpy(n, src, strlen(src));
		n += strlen(src);
		*n++ = ')';
	}
	p = instant_head(c, r->hdr.pid, "g", "loss", name, (size_t)(n - name), r->ts_ns, 300);
	p = ARG(p, "count", r->count);
	p = LIT(p, ",\"source\":\"");
	memcpy(p, src, strlen(src));
	p += strlen(src);
	p = LIT(p, "\",\"kind\":\"");
	memcpy(p, gt_record_name(r->kind), strlen(gt_record_name(r->kind)));
	p += strlen(gt_record_name(r->kind));
	*p++ = '"';
	if (r->source == GT_LOSS_FILE) {
		*p++ = ',';
		p = ARG(p, "bytes", r->bytes);
		*p++ = ',';
		p = ARG(p, "records", r->records);
		*p++ = ',';
		p = ARG(p, "malformed records", r->malformed);
	}
	end_event(c, p);
	return 0;
}

static int emit_notice(void *ctx, const struct gt_rec_notice *r)
{
	struct chrome *c = ctx;
	size_t nlen;
	const char *msg = text(c, r->message_id, false, &nlen);
	char *p;

	if (!gt_timeline_proc(&c->m, r->hdr.pid))
		return -ENOMEM;
	p = instant_head(c, r->hdr.pid, "p", "notice", msg, nlen, r->ts_ns, 200);
	p = LIT(p, "\"severity\":\"");
	p = stpcpy(p, gt_labels_severity(r->severity));
	p = LIT(p, "\",");
	p = ARG(p, "code", r->code);
	p = LIT(p, ",\"detail\":");
	p = gt_fmt_i64(p, r->detail);
	end_event(c, p);
	return 0;
}

static int emit_process_end(void *ctx, const struct gt_rec_process_end *r)
{
	struct chrome *c = ctx;
	char name[96];
	char *n = name, *p;

	if (!gt_timeline_proc(&c->m, r->hdr.pid))
		return -ENOMEM;
	n = LIT(n, "process ");
	n = stpcpy(n, gt_process_end_name(r->how));
	if (r->how == GT_END_EXIT || r->how == GT_END_SIGNAL) {
		*n++ = ' ';
		n = gt_fmt_i64(n, r->code);
	}
	p = instant_head(c, r->hdr.pid, "p", "process", name, (size_t)(n - name), r->ts_ns, 100);
	p = LIT(p, "\"how\":\"");
	p = stpcpy(p, gt_process_end_name(r->how));
	p = LIT(p, "\",\"code\":");
	p = gt_fmt_i64(p, r->code);
	end_event(c, p);
	return 0;
}

/* ------------------------------------------------------------------------------------ */
/* Files                                                                                 */

/* "\"distributedInfo\": {...}" of the rank this output shows, if it shows one: the file of
 * a rank, or a whole trace whose ranked processes all have one rank. Returns the end. */
static char *put_dist_info(const struct chrome *c, char *p)
{
	struct gt_rank_info info;
	int32_t rank = c->rank;

	if (!c->ranks)
		return p;
	if (rank < 0 && gt_ranks_list(c->ranks, &rank, 1) != 1)
		return p;
	if (gt_ranks_info(c->ranks, rank, &info) < 0)
		return p;
	return gt_chrome_dist_info(p, &info);
}

/* A global instant "trace start" at the trace's zero (ts 0), first in every file: viewers
 * start their ruler at the earliest event, so every export of the trace, whole, windowed or
 * split, then counts from the same zero (docs/cli.md, "Time"). Not counted among the
 * events. */
static void write_zero_marker(struct chrome *c)
{
	char *p = ev_begin(c, 256);

	p = LIT(p, "{\"ph\":\"i\",\"s\":\"g\",\"cat\":\"trace\",\"name\":\"trace start\","
	           "\"pid\":0,\"tid\":0,\"ts\":");
	p = put_ts(p, c, c->times.zero_ns);
	p = LIT(p, ",\"args\":{\"date\":\"");
	gt_fmt_date(c->times.zero_realtime_ns, p, 48);
	p += strlen(p);
	p = LIT(p, "\",\"trace clock ns\":");
	p = gt_fmt_u64(p, c->times.zero_ns);
	p = LIT(p, "}}");
	gt_outbuf_commit(&c->out, p);
}

static void write_header(struct chrome *c)
{
	/* a rank's own file says which rank it is first, where HTA looks for it */
	if (c->rank >= 0) {
		char *p = gt_outbuf_space(&c->out, GT_CHROME_DIST_MAX + 16), *start = p;

		*p++ = '{';
		p = put_dist_info(c, p);
		if (p - start > 1)
			p = LIT(p, ",\n");
		gt_outbuf_commit(&c->out, p);
		gt_outbuf_str(&c->out, "\"traceEvents\":[");
	} else {
		gt_outbuf_str(&c->out, "{\"traceEvents\":[");
	}
	c->file_steps = 0;
	c->first = true;
	c->file_events = 0;
	write_zero_marker(c);
	/* everything is described again in each file, so each opens on its own */
	for (uint32_t i = 0; i < c->m.nprocs; i++)
		c->m.procs[i]->announced = false;
	for (uint32_t i = 0; i < c->m.ngpus; i++)
		c->m.gpus[i]->announced = false;
	for (uint32_t i = 0; i < c->m.ntracks; i++)
		for (unsigned k = 0; k < c->m.tracks[i]->nlanes; k++)
			c->m.tracks[i]->lanes[k].announced = false;
}

static char *put_json_str(struct chrome *c, char *p, const char *s)
{
	size_t len = s ? strlen(s) : 0;

	(void)c;
	*p++ = '"';
	p = gt_text_json_escape(p, s ? s : "", len);
	*p++ = '"';
	return p;
}

static void write_trailer(struct chrome *c, bool last)
{
	const struct gt_trace_header *h = gt_reader_header(c->r);
	const struct gt_reader_status *st = gt_reader_status(c->r);
	struct gt_catalog_damage d;
	char words[GT_CATALOG_LOSSES_TEXT];
	uint64_t total;
	char *p;
	bool comma = false;

	/* the losses, this read's damage with them (so far: all of it in the last file) */
	gt_catalog_read_done(&c->m.cat, st);
	gt_catalog_damage(&c->m.cat, &d);
	gt_catalog_losses_text(&c->m.cat, words, sizeof(words));
	total = gt_catalog_lost_records(&c->m.cat);
	p = gt_outbuf_space(&c->out, 8192 + 6 * 2000 + 64 * 1600);
	p = LIT(p, "\n],\n\"displayTimeUnit\":\"ms\",\n\"baseTimeNanoseconds\":");
	p = gt_fmt_i64(p, c->base_ns);
	p = LIT(p, ",\n\"deviceProperties\":[");
	for (uint32_t i = 0; i < c->m.ngpus && i < 64; i++) {
		const struct gt_timeline_gpu *g = c->m.gpus[i];
		size_t len = 0;
		const char *dn = g->cat->name_id ? text(c, g->cat->name_id, false, &len) : "";

		if (i)
			*p++ = ',';
		p = LIT(p, "{\"id\":");
		p = gt_fmt_u64(p, g->cat->number);
		p = LIT(p, ",\"name\":\"");
		len = gt_text_cut(dn, len, 256, true);
		memcpy(p, dn, len);
		p += len;
		p = LIT(p, "\",\"totalGlobalMem\":");
		p = gt_fmt_u64(p, g->cat->global_mem_bytes);
		p = LIT(p, ",\"computeMajor\":");
		p = gt_fmt_u64(p, g->cat->cc_major);
		p = LIT(p, ",\"computeMinor\":");
		p = gt_fmt_u64(p, g->cat->cc_minor);
		p = LIT(p, ",\"numSms\":");
		p = gt_fmt_u64(p, g->cat->sm_count);
		*p++ = '}';
	}
	p = LIT(p, "],\n");
	/* a whole trace names its rank at the end, once every process was seen (as Kineto
	 * does when it learns the rank late) */
	if (c->rank < 0) {
		char *q = put_dist_info(c, p);

		if (q != p)
			p = LIT(q, ",\n");
	}
	p = LIT(p, "\"gputrace\":{\"version\":\"" GT_VERSION "\",\"base_time_ns\":");
	p = gt_fmt_i64(p, c->base_ns);
	p = LIT(p, ",\"base_realtime_ns\":");
	p = gt_fmt_u64(p, c->times.zero_realtime_ns);
	p = LIT(p, ",\"base_date\":\"");
	gt_fmt_date(c->times.zero_realtime_ns, p, 48);
	p += strlen(p);
	p = LIT(p, "\",\"span_ns\":");
	p = gt_fmt_u64(p, c->times.span_ns);
	p = LIT(p, ",\"file\":");
	p = gt_fmt_u64(p, c->file);
	p = LIT(p, ",\"last_file\":");
	p = last ? LIT(p, "true") : LIT(p, "false");
	p = LIT(p, ",\"events\":");
	p = gt_fmt_u64(p, c->file_events);
	p = LIT(p, ",\"hostname\":");
	p = put_json_str(c, p, h && h->info.hostname ? h->info.hostname : "");
	p = LIT(p, ",\"losses\":{\"summary\":");
	p = put_json_str(c, p, words);
	p = LIT(p, ",\"total\":");
	p = gt_fmt_u64(p, total);
	p = LIT(p, ",\"by_source\":{");
	for (unsigned i = 0; i <= GT_LOSS_SOURCE_MAX; i++) {
		/* records; a damaged file's chunks are damaged_file's, below */
		uint64_t lost = i == GT_LOSS_FILE ? 0 : gt_catalog_lost(&c->m.cat, i);

		if (!lost)
			continue;
		if (comma)
			*p++ = ',';
		*p++ = '"';
		p = stpcpy(p, i < GT_LOSS_SOURCE_MAX ? gt_loss_source_name(i) : "unknown");
		p = LIT(p, "\":");
		p = gt_fmt_u64(p, lost);
		comma = true;
	}
	p = LIT(p, "},\"damaged_file\":{\"chunks\":");
	p = gt_fmt_u64(p, d.chunks);
	p = LIT(p, ",\"bytes\":");
	p = gt_fmt_u64(p, d.bytes);
	p = LIT(p, ",\"records\":");
	p = gt_fmt_u64(p, d.records);
	p = LIT(p, ",\"malformed_records\":");
	p = gt_fmt_u64(p, d.malformed);
	p = LIT(p, ",\"recorded_chunks\":");
	p = gt_fmt_u64(p, c->m.cat.damage_recorded.chunks);
	p = LIT(p, "},\"recovered\":");
	p = st && st->recovered ? LIT(p, "true") : LIT(p, "false");
	p = LIT(p, ",\"chunks_skipped\":");
	p = gt_fmt_u64(p, st ? st->chunks_skipped : 0);
	p = LIT(p, ",\"bytes_skipped\":");
	p = gt_fmt_u64(p, st ? st->bytes_skipped : 0);
	p = LIT(p, ",\"records_skipped\":");
	p = gt_fmt_u64(p, st ? st->records_skipped : 0);
	p = LIT(p, "},\"overlapping_slices\":");
	p = gt_fmt_u64(p, c->m.lanes_forced);
	p = LIT(p, ",\"profiler_steps\":");
	p = gt_fmt_u64(p, c->file_steps);
	if (c->steps && gt_steps_family(c->steps) != GT_STEPS_NONE) {
		p = LIT(p, ",\"steps_from\":\"");
		p = stpcpy(p, gt_steps_family_name(gt_steps_family(c->steps)));
		*p++ = '"';
	}
	if (c->rank >= 0) {
		p = LIT(p, ",\"split\":\"ranks\",\"rank_file\":");
		p = gt_fmt_i64(p, c->rank);
	}
	p = LIT(p, ",\"cmdline\":\"");
	if (h && h->info.cmdline) {
		/* bounded: the trailer must fit the room kept for it in split files */
		size_t len = strlen(h->info.cmdline);

		p = gt_text_json_escape(p, h->info.cmdline, len > 2000 ? 2000 : len);
	}
	p = LIT(p, "\"}}\n");
	gt_outbuf_commit(&c->out, p);
}

/* Path of file k: OUT for k = 0, else OUT without ".json" + ".k.json". */
static int file_path(struct chrome *c, unsigned k)
{
	const char *out = c->out_path;
	size_t len = strlen(out);
	char *p;

	free(c->path);
	c->path = malloc(len + 32);
	if (!c->path)
		return -ENOMEM;
	if (k == 0) {
		memcpy(c->path, out, len + 1);
		return 0;
	}
	if (len > 5 && strcmp(out + len - 5, ".json") == 0)
		len -= 5;
	memcpy(c->path, out, len);
	p = c->path + len;
	*p++ = '.';
	p = gt_fmt_u64(p, k);
	strcpy(p, ".json");
	return 0;
}

static int open_file(struct chrome *c, unsigned k)
{
	int ret = file_path(c, k);

	if (ret < 0)
		return ret;
	ret = gt_outbuf_open(&c->out, c->opts->out, c->path, &c->errmsg);
	if (ret < 0)
		return ret;
	c->file = k;
	write_header(c);
	return 0;
}

static int close_file(struct chrome *c, bool last)
{
	int ret;

	write_trailer(c, last);
	if (c->out.bytes > c->largest)
		c->largest = c->out.bytes;
	c->bytes_done += c->out.bytes;
	ret = gt_outbuf_close(&c->out);
	if (ret < 0) {
		snprintf(errbuf, sizeof(errbuf), "writing %s: %s", c->path, strerror(-ret));
		c->errmsg = errbuf;
	}
	return ret;
}

static int maybe_split(struct chrome *c)
{
	uint64_t max = c->opts->max_bytes;
	int ret;

	if (!max || strcmp(c->out_path, "-") == 0 || c->file_events == 0 ||
	    c->out.bytes + TRAILER_RESERVE < max)
		return 0;
	ret = close_file(c, false);
	if (ret < 0)
		return ret;
	return open_file(c, c->file + 1);
}

/* ------------------------------------------------------------------------------------ */

static void chrome_process_info(void *ctx, uint32_t pid)
{
	struct chrome *c = ctx;
	struct gt_timeline_proc *p;

	/* described with its first event; described again once its details arrive */
	if (!c->m.procs || !c->m.nprocs)
		return;
	p = gt_timeline_proc(&c->m, pid);
	if (p && p->announced)
		announce_proc(c, p);
}

static void chrome_announce_lane(void *ctx, struct gt_track *t, unsigned lane)
{
	announce_lane(ctx, t, lane);
}

static void chrome_announce_gpu(void *ctx, struct gt_timeline_gpu *g)
{
	announce_gpu(ctx, g);
}

static const struct gt_timeline_sink chrome_sink = {
        .kernel = emit_kernel,
        .memcpy = emit_memcpy,
        .memset = emit_memset,
        .api = emit_api,
        .nvtx = emit_nvtx,
        .sync = emit_sync,
        .graph = emit_graph,
        .overhead = emit_overhead,
        .memory = emit_memory,
        .memory_pool = emit_memory_pool,
        .gpu_sample = emit_gpu_sample,
        .loss = emit_loss,
        .notice = emit_notice,
        .process_end = emit_process_end,
        .process_info = chrome_process_info,
        .announce_lane = chrome_announce_lane,
        .announce_gpu = chrome_announce_gpu,
};

char *gt_chrome_dist_info(char *p, const struct gt_rank_info *info)
{
	bool comma = false;

	p = LIT(p, "\"distributedInfo\": {");
	if (info->backend) {
		p = LIT(p, "\"backend\": \"");
		p = stpcpy(p, info->backend);
		*p++ = '"';
		comma = true;
	}
	if (comma)
		p = LIT(p, ", ");
	p = LIT(p, "\"rank\": ");
	p = gt_fmt_i64(p, info->rank);
	if (info->world_size >= 0) {
		p = LIT(p, ", \"world_size\": ");
		p = gt_fmt_i64(p, info->world_size);
	}
	if (info->local_rank >= 0) {
		p = LIT(p, ", \"local_rank\": ");
		p = gt_fmt_i64(p, info->local_rank);
	}
	*p++ = '}';
	return p;
}

int gt_chrome_open(const struct gt_chrome_setup *setup, struct gt_chrome **ret, const char **errmsg)
{
	struct gt_chrome *g = calloc(1, sizeof(*g)); /* gt_chrome_free() on failure, else the
	                                              * caller's */
	struct chrome *c;
	int err = -ENOMEM;

	*errmsg = "out of memory";
	if (!g)
		return -ENOMEM;
	c = &g->c;
	c->r = setup->reader;
	c->opts = setup->opts;
	c->out.fd = -1;
	c->errmsg = "out of memory";
	c->times = setup->times;
	c->base_ns = (int64_t)setup->times.zero_ns;
	c->steps = setup->steps;
	c->stacks = setup->stacks;
	c->ops = setup->ops;
	c->ranks = setup->ranks;
	c->rank = setup->rank;
	c->out_path = strdup(setup->path);
	if (!c->out_path)
		goto out;
	err = gt_timeline_init(&c->m, setup->reader, setup->opts->demangle != 0,
	                       gt_text_json_escape, 6);
	if (err < 0)
		goto out; /* the timeline cleaned up after itself */
	g->have_timeline = true;
	/* the same lanes as perfetto's, so both show the same threads */
	c->m.strict_ties = true;
	c->m.small_gpu_pids = setup->small_gpu_pids;
	err = open_file(c, 0);
	if (err < 0)
		*errmsg = c->errmsg;
out:
	if (err < 0) {
		gt_chrome_free(g);
		return err;
	}
	*ret = g;
	return 0;
}

int gt_chrome_record(struct gt_chrome *g, const union gt_record *rec)
{
	struct chrome *c = &g->c;
	int ret;

	c->errmsg = "out of memory";
	c->rec_pid = rec->hdr.pid;
	ret = gt_timeline_observe(&c->m, rec);
	if (ret < 0)
		return ret;
	ret = gt_timeline_dispatch(&c->m, &chrome_sink, c, rec);
	if (ret < 0)
		return ret;
	if (c->opts->max_bytes) {
		ret = maybe_split(c);
		if (ret < 0)
			return ret;
	}
	if (c->out.err) {
		snprintf(errbuf, sizeof(errbuf), "writing %s: %s", c->path, strerror(-c->out.err));
		c->errmsg = errbuf;
		return c->out.err;
	}
	return 0;
}

int gt_chrome_close(struct gt_chrome *g, struct gt_export_result *res)
{
	struct chrome *c = &g->c;
	int ret = close_file(c, true);

	if (ret < 0)
		return ret;
	res->events += c->events;
	res->counters += c->counters;
	res->flows += c->m.flows;
	res->lanes += gt_lanes_count(&c->m);
	res->bytes += c->bytes_done;
	res->files += c->file + 1;
	res->steps += c->steps_written;
	if (c->largest > WARN_BYTES && strcmp(c->out_path, "-") != 0) {
		char size[32];

		snprintf(warnbuf, sizeof(warnbuf),
		         "the JSON is %s; viewers often fail above 500 MiB: use -f perfetto, "
		         "or --max-size to split it",
		         gt_fmt_bytes((double)c->largest, size, sizeof(size)));
		res->warning = warnbuf;
	}
	return 0;
}

void gt_chrome_free(struct gt_chrome *g)
{
	if (!g)
		return;
	gt_outbuf_abort(&g->c.out);
	free(g->c.path);
	free(g->c.out_path);
	if (g->have_timeline)
		gt_timeline_fini(&g->c.m);
	free(g);
}

const char *gt_chrome_errmsg(const struct gt_chrome *g)
{
	return g->c.errmsg;
}

static int chrome_run(struct gt_reader *r, const struct gt_export_options *opts,
                      struct gt_export_result *res, const char **errmsg)
{
	struct gt_chrome_setup setup = {
	        .reader = r, .opts = opts, .path = opts->output, .rank = -1};
	const union gt_record *rec;
	const struct gt_steps *steps = NULL;
	struct gt_steps *own_steps = NULL;
	struct gt_ranks *ranks = NULL;
	struct gt_chrome *g = NULL;
	struct gt_stacks *stacks = NULL;
	struct gt_torchops *ops = NULL;
	uint64_t n = 0;
	int ret;

	memset(res, 0, sizeof(*res));
	*errmsg = "out of memory";
	if (opts->split == GT_EXPORT_SPLIT_RANKS)
		return gt_chrome_split_ranks(r, opts, res, errmsg);
	ret = gt_export_prescan(r, opts, &steps, &own_steps, &ops, errmsg);
	if (ret < 0)
		goto out;
	ret = gt_ranks_new(&ranks);
	if (ret < 0)
		goto out;
	ret = gt_reader_times(r, &setup.times);
	if (ret < 0) {
		snprintf(errbuf, sizeof(errbuf), "reading the trace: %s", strerror(-ret));
		*errmsg = errbuf;
		goto out;
	}
	setup.steps = steps;
	setup.ranks = ranks;
	if (!gt_reader_footer_counts(r) || gt_reader_footer_counts(r)->records[GT_REC_STACK]) {
		ret = gt_stacks_new(&stacks);
		if (ret == 0)
			ret = gt_stacks_load(stacks, r);
		if (ret < 0) {
			snprintf(errbuf, sizeof(errbuf), "reading the trace's stacks: %s",
			         strerror(-ret));
			*errmsg = errbuf;
			goto out;
		}
		setup.stacks = stacks;
	}
	setup.ops = ops;
	ret = gt_chrome_open(&setup, &g, errmsg);
	if (ret < 0)
		goto out;
	while ((ret = gt_reader_next(r, &rec)) > 0) {
		ret = gt_ranks_feed(ranks, r, rec);
		if (ret >= 0)
			ret = gt_chrome_record(g, rec);
		if (ret < 0) {
			*errmsg = gt_chrome_errmsg(g);
			goto out;
		}
		if (opts->progress && (++n & 0xffff) == 0) {
			uint64_t done, total;

			gt_reader_progress(r, &done, &total);
			opts->progress(opts->progress_ctx, done, total);
		}
	}
	if (ret < 0) {
		snprintf(errbuf, sizeof(errbuf), "reading the trace: %s", strerror(-ret));
		*errmsg = errbuf;
		goto out;
	}
	ret = gt_chrome_close(g, res);
	if (ret < 0) {
		*errmsg = gt_chrome_errmsg(g);
		goto out;
	}
	res->ranks = (unsigned)gt_ranks_list(ranks, NULL, 0);
out:
	gt_chrome_free(g);
	gt_ranks_free(ranks);
	gt_steps_free(own_steps);
	gt_stacks_free(stacks);
	gt_torchops_free(ops);
	return ret < 0 ? ret : 0;
}

static unsigned chrome_output_flags(const struct gt_export_options *opts)
{
	return opts->split == GT_EXPORT_SPLIT_RANKS ? GT_OUTPUT_DIR | GT_OUTPUT_NO_STDOUT : 0;
}

/* The numbered files of an earlier --max-size export (OUT.1.json ...), or, in the folder of
 * --split ranks, an earlier export's rank-N.pt.trace.json. */
static bool chrome_stale(const struct gt_export_options *opts, const char *name)
{
	const char *p = name + 5;

	if (opts->split != GT_EXPORT_SPLIT_RANKS)
		return gt_export_sibling(opts->output, ".json", '.', true, name);
	if (strncmp(name, "rank-", 5) != 0)
		return false;
	p += *p == '-';
	if (*p < '0' || *p > '9')
		return false;
	while (*p >= '0' && *p <= '9')
		p++;
	return strcmp(p, GT_CHROME_SPLIT_SUFFIX) == 0;
}

const struct gt_exporter_ops gt_exporter_chrome = {
        .name = "chrome",
        .extension = ".json",
        .help = "Chrome trace JSON (Perfetto UI, chrome://tracing, Holistic Trace Analysis)",
        .write = chrome_run,
        .output_flags = chrome_output_flags,
        .stdout_refused = "--split ranks writes a directory, not standard output",
        .stale = chrome_stale,
};
