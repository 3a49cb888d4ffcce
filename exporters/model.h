/* Plumbing shared by the exporters: a buffered output file with hand-written number
 * formatting, and the small state model built while streaming a trace (processes, threads,
 * GPUs, streams, names, lanes that keep slices nested, CPU->GPU flow matching).
 * Runs in the CLI. Memory is bounded by the number of distinct processes, threads, streams
 * and strings in the trace, never by the number of events. */
#ifndef GPUTRACE_EXPORTERS_MODEL_H
#define GPUTRACE_EXPORTERS_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "gputrace/record.h"
#include "gputrace/trace.h"

/* ------------------------------------------------------------------------------------ */
/* Buffered output                                                                       */

#define GT_XOUT_BUF_BYTES (1u << 20)

struct gt_xout {
	int fd;         /* -1 when closed */
	bool owns_fd;   /* false for stdout */
	int err;        /* first -errno seen; sticky, every later write is a no-op */
	char *buf;      /* GT_XOUT_BUF_BYTES, owned */
	size_t len;     /* bytes pending in buf */
	uint64_t bytes; /* bytes written to this file so far, pending ones included */
};

/* Create (truncate) path, or use stdout for "-". Returns 0 or -errno. */
int gt_xout_open(struct gt_xout *o, const char *path);

/* Write out the pending bytes. Returns 0 or the sticky -errno. */
int gt_xout_flush(struct gt_xout *o);

/* Flush and close (stdout is flushed, not closed). Returns 0 or the first -errno.
 * Safe on a closed or zeroed struct. */
int gt_xout_close(struct gt_xout *o);

/* Make room for n bytes and return where to write them; commit with gt_xout_commit().
 * n must be at most GT_XOUT_BUF_BYTES. */
static inline char *gt_xout_space(struct gt_xout *o, size_t n)
{
	if (GT_XOUT_BUF_BYTES - o->len < n)
		gt_xout_flush(o);
	return o->buf + o->len;
}

static inline void gt_xout_commit(struct gt_xout *o, char *end)
{
	size_t n = (size_t)(end - (o->buf + o->len));

	o->len += n;
	o->bytes += n;
}

/* Any length; large blocks bypass the buffer. */
void gt_xout_write(struct gt_xout *o, const void *p, size_t n);

static inline void gt_xout_str(struct gt_xout *o, const char *s)
{
	gt_xout_write(o, s, strlen(s));
}

/* Decimal digits of v at p; returns the end. At most 20 bytes. */
char *gt_fmt_u64(char *p, uint64_t v);
/* At most 20 bytes. */
char *gt_fmt_i64(char *p, int64_t v);
/* "0x" and lowercase hex digits of v, no leading zeros; at most 18 bytes. */
char *gt_fmt_hex(char *p, uint64_t v);
/* ns as microseconds with exactly three decimals ("-12.345"); at most 22 bytes. */
char *gt_fmt_us3(char *p, int64_t ns);
/* v / 1000 with exactly three decimals, for a value already scaled by 1000. */
char *gt_fmt_milli(char *p, uint64_t v_milli);

/* ------------------------------------------------------------------------------------ */
/* Text clean-up                                                                          */

/* Copy s[0..len) as the body of a JSON string (no quotes): '"' and '\\' escaped, control
 * characters as \u00XX, invalid UTF-8 replaced by U+FFFD. dst needs 6 * len bytes.
 * Returns the end of what was written. */
char *gt_json_escape(char *dst, const char *s, size_t len);

/* Copy s[0..len) replacing invalid UTF-8 by U+FFFD (and NUL by U+FFFD, so the result is
 * a C string too). dst needs 3 * len bytes. Returns the end. */
char *gt_utf8_sanitize(char *dst, const char *s, size_t len);

/* CSV field per RFC 4180: quoted when it holds a comma, quote, CR or LF (quotes doubled);
 * invalid UTF-8 replaced. dst needs 6 * len + 2 bytes. Returns the end. */
char *gt_csv_field(char *dst, const char *s, size_t len);

/* ------------------------------------------------------------------------------------ */
/* Lanes: how slices stay strictly nested on every track                                 */

/* A lane is one displayed track. A slice goes on the first lane of its logical track
 * (thread, stream, ...) where it nests with everything already placed there; otherwise a
 * new lane is opened. The lane remembers the disjoint outermost intervals ("blocks") it
 * holds: a new slice must either contain a block entirely or be disjoint from it, and
 * may not start strictly inside one (whose children we no longer know). At most
 * GT_XLANE_BLOCKS blocks are kept; the oldest half is then folded into a floor: a later
 * slice must start at or after the floor's end, or contain all that was folded. This is
 * exact for the order the collectors produce (per thread and per stream, records arrive
 * in end order) and conservative otherwise: it may open an extra lane, never overlap. */
#define GT_XLANE_BLOCKS 4096u
#define GT_XLANES_MAX   16u

struct gt_xblock {
	uint64_t start_ns;
	uint64_t end_ns;
};

struct gt_xlane {
	struct gt_xblock *blk; /* sorted by start, disjoint; owned */
	uint32_t n, cap;
	bool folded;             /* some blocks were folded into the floor */
	uint64_t floor_start_ns; /* earliest start of the folded blocks */
	uint64_t floor_end_ns;   /* latest end of the folded blocks */
	bool announced;          /* the exporter described this lane in its output */
	uint64_t uuid;           /* perfetto: track uuid of the lane */
};

enum gt_xtrack_kind {
	GT_XT_THREAD = 0, /* API calls and NVTX push/pop of one CPU thread */
	GT_XT_SYNC,       /* synchronization waits of one CPU thread: CUPTI delivers them
	                   * late, inside the API call that waited, so they get their own */
	GT_XT_STREAM,     /* GPU work of one stream */
	GT_XT_NVTX,       /* NVTX start/end ranges of one process (they may cross threads) */
	GT_XT_OVERHEAD,   /* CUPTI overhead of one process */
	GT_XT_KIND_MAX
};

struct gt_xtrack {
	uint8_t kind;      /* enum gt_xtrack_kind */
	uint8_t nlanes;    /* lanes opened so far */
	bool name_changed; /* thread name arrived after lanes were announced */
	uint32_t index;    /* in gt_xmodel.tracks */
	uint32_t pid;
	uint32_t id;      /* tid, stream id, or 0 */
	uint32_t proc;    /* index in gt_xmodel.procs */
	uint32_t gpu;     /* streams: index in gt_xmodel.gpus */
	uint32_t name_id; /* threads: string id of the thread name, 0 if unknown */
	uint32_t forced;  /* slices put on the last lane although they overlap there */
	struct gt_xlane lanes[GT_XLANES_MAX];
};

struct gt_xproc {
	uint32_t pid, ppid;
	uint32_t index; /* 1, 2, ... in order of appearance; flow ids use it */
	uint32_t exe_id, cmdline_id, host_id; /* strings, 0 if unknown */
	int32_t rank, local_rank, world_size; /* -1 if unknown */
	bool have_info;                       /* a PROCESS record was seen */
	bool announced;                       /* the exporter described this process */
	bool info_changed;                    /* PROCESS record arrived after it was announced */
	uint64_t uuid;                        /* perfetto: process track uuid */
};

struct gt_xgpu {
	uint32_t number;    /* shown as "GPU n": the CUDA device ordinal when free */
	uint32_t device_id; /* ordinal in the first process that used it */
	uint8_t uuid[16];
	bool have_uuid;
	uint32_t name_id; /* device name string, 0 if unknown */
	uint32_t sm_count, cc_major, cc_minor;
	uint64_t global_mem_bytes;
	uint32_t first_pid;    /* first process seen on it: its streams keep their plain ids */
	int64_t mem_in_use;    /* bytes allocated minus freed, from MEMORY records */
	int64_t pool_reserved; /* bytes its memory pools reserve, from MEMORY_POOL records */
	bool announced;
	bool info_changed;    /* DEVICE record arrived after it was announced */
	uint64_t uuid_track;  /* perfetto: "GPU n" track */
	uint64_t uuid_memory; /* perfetto: its memory counter track */
	uint64_t uuid_pool;   /* perfetto: its memory pool counter track */
	bool memory_announced;
	bool pool_announced;
};

/* Flow matching: the launching API call and the GPU activity are paired by (pid,
 * correlation id) through two caches (calls waiting for their work, work waiting for its
 * call) of GT_XFLOW_SLOTS entries in sets of GT_XFLOW_WAYS, so pairing costs O(1) and
 * memory is fixed. A new entry replaces the one its set took first, so a partner is lost
 * only when GT_XFLOW_SLOTS launches of its process came in between (correlation ids run on)
 * or, rarely, when launches of other processes filled its set; it then gets no arrow. The
 * model alone decides which pairs get an arrow, whatever order their records come in; both
 * timeline formats draw exactly those (docs/exporters.md, "Flows"). */
#define GT_XFLOW_SLOTS (1u << 16)
#define GT_XFLOW_WAYS  8u

/* Flow ids: (process index << 32) | correlation id, below 2^52; with this bit set, the id
 * of GPU work whose launch has not been seen yet ("pending"). Both stay below 2^53, exact
 * in JavaScript's doubles. */
#define GT_XFLOW_PENDING (1ull << 52)

struct gt_xflow_slot {
	uint32_t pid;
	uint32_t corr;
	uint64_t ts_ns; /* start of the API call or GPU activity */
	uint32_t track; /* index in gt_xmodel.tracks */
	uint8_t lane;
	uint8_t state; /* 1 waiting for its partner, 2 paired */
};

struct gt_xflow_cache {
	uint64_t *key;              /* GT_XFLOW_SLOTS: pid << 32 | correlation id, 0 = empty */
	struct gt_xflow_slot *slot; /* GT_XFLOW_SLOTS, beside their keys */
	uint8_t *next;              /* per set: the way it replaces next (first in, first out) */
};

#define GT_XNAME_DIRECT (1u << 22)

/* Name cache: string id -> text transformed once (demangled, escaped for JSON, ...). */
typedef char *(*gt_xname_fn)(char *dst, const char *s, size_t len);

struct gt_xmap_entry {
	uint64_t a, b;
	uint32_t v; /* 0 = empty slot, else index + 1 */
};

struct gt_xmap {
	struct gt_xmap_entry *e;
	uint32_t mask; /* slots - 1 */
	uint32_t used;
};

struct gt_xmodel {
	struct gt_reader *reader; /* borrowed */
	bool demangle;            /* demangle kernel names */
	bool small_gpu_pids;      /* GPU n is pid n, as in Kineto's JSON (files of one rank whose
	                           * processes all have pids above GT_XGPU_SMALL_MAX) */
	bool strict_ties;         /* slices whose order at equal timestamps would depend on
	                           * file order go to another lane (both timeline formats set
	                           * it, so that their lanes, and so their threads, agree) */
	gt_xname_fn name_fn;      /* how names are stored in the cache */
	size_t name_expand;       /* worst-case output bytes per input byte of name_fn */

	struct gt_xproc **procs;
	uint32_t nprocs, cap_procs;
	struct gt_xgpu **gpus;
	uint32_t ngpus, cap_gpus;
	struct gt_xtrack **tracks;
	uint32_t ntracks, cap_tracks;

	struct gt_xmap proc_map;  /* pid -> proc */
	struct gt_xmap gpu_map;   /* (pid, device id) -> gpu */
	struct gt_xmap track_map; /* (kind, pid, id) -> track */
	struct gt_xmap ctx_map;   /* (pid, context id) -> device id */
	/* memory pools: (pid << 32 | GPU number, pool address) -> index in pool_bytes + 1; each
	 * pool's reserved bytes as last recorded */
	struct gt_xmap pool_map;
	uint64_t *pool_bytes;
	uint32_t npools, cap_pools;
	struct gt_xmap name_map;                      /* (id, demangled) -> name */
	struct gt_xtrack *last_track[GT_XT_KIND_MAX]; /* most recently used, per kind: the next
	                                               * record is usually on it */
	uint32_t *name_direct;                        /* (id * 2 + demangled) -> name, for ids below
	                                               * GT_XNAME_DIRECT; 0 = not cached. Ids are dense. */
	uint32_t name_direct_cap;                     /* entries allocated */

	char *names; /* arena of cached names, NUL-separated; owned */
	size_t names_len, names_cap;
	uint32_t *name_off; /* per cached name: offset in names */
	uint32_t *name_len;
	uint32_t nnames, cap_names;
	char *scratch; /* demangle and transform buffer; owned */
	size_t scratch_cap;

	struct gt_xflow_cache api_flows; /* API calls waiting for their GPU work */
	struct gt_xflow_cache gpu_flows; /* GPU work that arrived before its API call */

	uint64_t flows;                      /* CPU->GPU arrows: pairs the caches matched */
	uint64_t losses[GT_LOSS_SOURCE_MAX]; /* records lost, by source */
	uint64_t loss_records;               /* LOSS records seen */
	uint64_t lanes_forced;               /* slices that had to overlap (lanes exhausted) */
};

/* reader may be NULL (unit tests of the lanes). Returns 0 or -ENOMEM. */
int gt_xmodel_init(struct gt_xmodel *m, struct gt_reader *reader, bool demangle,
                   gt_xname_fn name_fn, size_t name_expand);
void gt_xmodel_fini(struct gt_xmodel *m);

/* Find or create. Return NULL only on -ENOMEM. */
struct gt_xproc *gt_xmodel_proc(struct gt_xmodel *m, uint32_t pid);
struct gt_xgpu *gt_xmodel_gpu(struct gt_xmodel *m, uint32_t pid, uint32_t device_id);
struct gt_xtrack *gt_xmodel_track(struct gt_xmodel *m, enum gt_xtrack_kind kind, uint32_t pid,
                                  uint32_t id);
uint32_t gt_xmodel_track_index(const struct gt_xmodel *m, const struct gt_xtrack *t);

/* Learn from a metadata record (process, thread, device, context, memory, loss): names,
 * memory in use, loss totals. What an exporter already announced and must describe again
 * is flagged (info_changed, name_changed). Returns 0 or -ENOMEM. */
int gt_xmodel_observe(struct gt_xmodel *m, const union gt_record *rec);

/* Device of a context, for records that only carry a context; UINT32_MAX if unknown. */
uint32_t gt_xmodel_context_device(const struct gt_xmodel *m, uint32_t pid, uint32_t ctx);

/* Place [start, end] on track t (see "Lanes"). Returns the lane index. */
unsigned gt_xtrack_place(struct gt_xmodel *m, struct gt_xtrack *t, uint64_t start_ns,
                         uint64_t end_ns);

/* Cached text of string `id` (demangled first when `kernel` and demangling is on),
 * transformed by name_fn. Unknown ids give "<unknown string N>". NULL only on -ENOMEM.
 * Valid until the next call. *iid: a dense id for this name (1, 2, ...), *fresh: true the
 * first time (perfetto interns it then). */
const char *gt_xmodel_name(struct gt_xmodel *m, uint32_t id, bool kernel, size_t *len,
                           uint32_t *iid, bool *fresh);

/* Same for a name made by the exporter ("Memcpy HtoD (Pageable -> Device)"), cached under
 * `key` (the caller's choice, any 64-bit value): s is used only the first time. */
const char *gt_xmodel_name_key(struct gt_xmodel *m, uint64_t key, const char *s, size_t slen,
                               size_t *len, uint32_t *iid, bool *fresh);

/* Same with a 128-bit key whose second half is at least 2^32 (ids and the keys above use
 * smaller ones), e.g. a grid's three dimensions. */
const char *gt_xmodel_name_key2(struct gt_xmodel *m, uint64_t a, uint64_t b, const char *s,
                                size_t slen, size_t *len, uint32_t *iid, bool *fresh);

/* Flow id of a launch: (process index << 32) | correlation id. */
static inline uint64_t gt_xflow_id(const struct gt_xproc *p, uint32_t corr)
{
	return ((uint64_t)(p->index & 0xfffffu) << 32) | corr;
}

/* An API call with a correlation id was drawn on lane `lane` of track `track`, starting at
 * ts_ns. *flow_id gets the id its slice carries (perfetto: flow_ids). If GPU work of this
 * launch was drawn before it and still waits, the pair is complete: returns that GPU slot
 * (the caller draws the arrow now; *flow_id is the pending id that GPU slice carries) and
 * counts it in m->flows. Otherwise remembers the call and returns NULL (*flow_id is the
 * launch's gt_xflow_id, which GPU work drawn later may end). */
const struct gt_xflow_slot *gt_xflow_api(struct gt_xmodel *m, uint32_t pid, uint32_t corr,
                                         uint64_t ts_ns, uint32_t track, unsigned lane,
                                         uint64_t *flow_id);

/* GPU work with a correlation id was drawn. *flow_id gets the id its slice ends (perfetto:
 * terminating_flow_ids), 0 for none. If its API call was drawn before it and waits, the
 * pair is complete: returns that API slot (the caller draws the arrow now), counted in
 * m->flows. Else, if it is the first GPU work of its launch, remembers it under a pending
 * id (GT_XFLOW_PENDING set) that its API call will start when it comes, and returns NULL.
 * Later GPU work of a launch (the nodes of a CUDA graph) gets no arrow: one per launch. */
const struct gt_xflow_slot *gt_xflow_gpu(struct gt_xmodel *m, uint32_t pid, uint32_t corr,
                                         uint64_t ts_ns, uint32_t track, unsigned lane,
                                         uint64_t *flow_id);

/* GPUs are shown as processes with these pids (above Linux's largest pid, 2^22), "GPU n"
 * at GT_XGPU_PID_BASE + n, in both timeline formats. */
#define GT_XGPU_PID_BASE 5000000u

/* With small_gpu_pids, GPUs numbered below this are pids 0 .. GT_XGPU_SMALL_MAX - 1 (and the
 * processes drawn beside them must all have larger pids). */
#define GT_XGPU_SMALL_MAX 256u

/* The pid that shows GPU g as a process. */
uint32_t gt_xgpu_pid(const struct gt_xmodel *m, const struct gt_xgpu *g);

/* Synthetic thread ids of lanes: real tids stay below 2^22; lane k of thread T is
 * T | k << GT_XLANE_SHIFT, its sync lanes T | (16 + k) << GT_XLANE_SHIFT; NVTX start/end
 * ranges GT_XNVTX_TID + k, CUPTI overhead GT_XOVERHEAD_TID + k. */
#define GT_XLANE_SHIFT   25
#define GT_XNVTX_TID     0x7e000000u
#define GT_XOVERHEAD_TID 0x7d000000u

/* The (pid, tid) that shows lane `lane` of track t as a thread, the same in both timeline
 * formats: CPU-side lanes are threads of their process, stream lanes threads of their GPU's
 * process (GT_XGPU_PID_BASE + GPU number). */
void gt_xlane_ids(const struct gt_xmodel *m, const struct gt_xtrack *t, unsigned lane,
                  uint32_t *pid, uint32_t *tid);

/* Name of lane `lane` of track t into buf (at least GT_XLANE_NAME_MAX bytes), as the model's
 * name function writes names ("main", "thread 12 sync", "stream 7 (overlap 1)", "NVTX
 * ranges"); json: cut thread names on JSON escapes. Returns the end. */
#define GT_XLANE_NAME_MAX 1100u
char *gt_xlane_name(struct gt_xmodel *m, const struct gt_xtrack *t, unsigned lane, char *buf,
                    bool json);

/* Lanes opened on every track: each is shown as a thread. */
uint64_t gt_xmodel_lanes(const struct gt_xmodel *m);

/* Base name of a path ("/usr/bin/python3" -> "python3"). */
const char *gt_xbasename(const char *path);

/* How much of a name text (len bytes, as the model's name function wrote it: valid UTF-8, and
 * with `json` JSON-escaped) fits in max bytes without cutting a character or, with json, an
 * escape: a name cut there stays valid UTF-8 and valid JSON. len when it fits. */
size_t gt_xcut(const char *s, size_t len, size_t max, bool json);

/* Whether a record appears on the timeline at all. Not drawn: GPU work CUPTI gave no times
 * for (the kernel that hit an illegal address; counted in the trace, not drawn at time zero),
 * and pinned or pageable host allocations, which are not GPU memory and so stay off a GPU's
 * "memory in use" counter (stats reports them on a host row of its own). */
bool gt_xmodel_drawn(const union gt_record *rec);

/* A timeline format's drawing functions, one per record kind that has a shape on the
 * timeline; ctx is the exporter's own state. Each returns 0 or -errno. */
struct gt_xsink_ops {
	int (*kernel)(void *ctx, const struct gt_rec_kernel *r);
	int (*memcpy)(void *ctx, const struct gt_rec_memcpy *r);
	int (*memset)(void *ctx, const struct gt_rec_memset *r);
	int (*api)(void *ctx, const struct gt_rec_api *r);
	int (*nvtx)(void *ctx, const struct gt_rec_nvtx *r);
	int (*sync)(void *ctx, const struct gt_rec_sync *r);
	int (*graph)(void *ctx, const struct gt_rec_graph *r);
	int (*overhead)(void *ctx, const struct gt_rec_overhead *r);
	int (*memory)(void *ctx, const struct gt_rec_memory *r);
	int (*memory_pool)(void *ctx, const struct gt_rec_memory_pool *r);
	int (*loss)(void *ctx, const struct gt_rec_loss *r);
	int (*notice)(void *ctx, const struct gt_rec_notice *r);
	int (*process_end)(void *ctx, const struct gt_rec_process_end *r);
	/* A PROCESS record arrived (the model has read it): describe the process again if the
	 * format needs to. */
	void (*process_info)(void *ctx, uint32_t pid);
	/* Describe a lane or a GPU again: its name changed after it was first described. */
	void (*announce_lane)(void *ctx, struct gt_xtrack *t, unsigned lane);
	void (*announce_gpu)(void *ctx, struct gt_xgpu *g);
};

/* Hand one record, after gt_xmodel_observe(), to the format's function for its kind; names
 * learnt late (a thread named, a device described) re-announce what was already drawn.
 * Records not drawn (gt_xmodel_drawn) are skipped. Returns 0 or the function's -errno.
 * Inline, so that with an exporter's constant ops table the calls are direct. */
static inline int gt_xmodel_dispatch(struct gt_xmodel *m, const struct gt_xsink_ops *ops, void *ctx,
                                     const union gt_record *rec)
{
	if (!gt_xmodel_drawn(rec))
		return 0;
	switch (rec->hdr.type) {
	case GT_REC_KERNEL:
		return ops->kernel(ctx, &rec->kernel);
	case GT_REC_MEMCPY:
		return ops->memcpy(ctx, &rec->memcpy);
	case GT_REC_MEMSET:
		return ops->memset(ctx, &rec->memset);
	case GT_REC_API:
		return ops->api(ctx, &rec->api);
	case GT_REC_NVTX:
		return ops->nvtx(ctx, &rec->nvtx);
	case GT_REC_SYNC:
		return ops->sync(ctx, &rec->sync);
	case GT_REC_GRAPH:
		return ops->graph(ctx, &rec->graph);
	case GT_REC_OVERHEAD:
		return ops->overhead(ctx, &rec->overhead);
	case GT_REC_MEMORY:
		return ops->memory(ctx, &rec->memory);
	case GT_REC_MEMORY_POOL:
		return ops->memory_pool(ctx, &rec->memory_pool);
	case GT_REC_LOSS:
		return ops->loss(ctx, &rec->loss);
	case GT_REC_NOTICE:
		return ops->notice(ctx, &rec->notice);
	case GT_REC_PROCESS_END:
		return ops->process_end(ctx, &rec->process_end);
	case GT_REC_PROCESS:
		ops->process_info(ctx, rec->hdr.pid);
		return 0;
	case GT_REC_THREAD: {
		struct gt_xtrack *t =
		        gt_xmodel_track(m, GT_XT_THREAD, rec->hdr.pid, rec->thread.tid);

		if (t && t->name_changed)
			for (unsigned k = 0; k < t->nlanes; k++)
				if (t->lanes[k].announced) {
					ops->announce_lane(ctx, t, k);
					break;
				}
		return 0;
	}
	case GT_REC_DEVICE:
		for (uint32_t i = 0; i < m->ngpus; i++)
			if (m->gpus[i]->info_changed)
				ops->announce_gpu(ctx, m->gpus[i]);
		return 0;
	default:
		return 0;
	}
}

#endif /* GPUTRACE_EXPORTERS_MODEL_H */
