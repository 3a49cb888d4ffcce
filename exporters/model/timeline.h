/* The timeline model both timeline formats (chrome, perfetto) draw from while streaming a
 * trace: processes, GPUs, tracks and their lanes, the name cache, CPU->GPU flows, memory in
 * use per GPU, and the dispatch of each drawn record to a format's function for its kind.
 * Runs in the CLI. Memory is bounded by the number of distinct processes, threads, streams
 * and strings in the trace, never by the number of events. */
#ifndef GPUTRACE_EXPORTERS_TIMELINE_H
#define GPUTRACE_EXPORTERS_TIMELINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "catalog.h"
#include "gpumetrics.h"
#include "flows.h"
#include "gputrace/record.h"
#include "gputrace/trace.h"
#include "idmap.h"
#include "lanes.h"
#include "names.h"

/* A process as the timeline shows it: what the trace says about it is its catalog entry. */
struct gt_timeline_proc {
	const struct gt_catalog_process *cat; /* owned by the timeline's catalog */
	uint32_t pid;                         /* the pid it is shown under: cat->out_pid */
	uint32_t index;    /* 1, 2, ... in order of appearance on the timeline; flow ids use it */
	bool announced;    /* the exporter described this process */
	bool info_changed; /* PROCESS record arrived after it was announced */
	uint64_t uuid;     /* perfetto: process track uuid */
};

/* A GPU as the timeline shows it ("GPU n", cat->number): what the trace says about it, and
 * its memory in use, is its catalog entry. */
struct gt_timeline_gpu {
	const struct gt_catalog_gpu *cat; /* owned by the timeline's catalog */
	uint32_t first_pid;    /* first process drawn on it: its streams keep their plain ids */
	int64_t pool_reserved; /* bytes its memory pools reserve, from MEMORY_POOL records */
	bool announced;
	bool info_changed;    /* DEVICE record arrived after it was announced */
	uint64_t uuid_track;  /* perfetto: "GPU n" track */
	uint64_t uuid_memory; /* perfetto: its memory counter track */
	uint64_t uuid_pool;   /* perfetto: its memory pool counter track */
	bool memory_announced;
	bool pool_announced;
	uint64_t uuid_metric[GT_GPU_METRICS_MAX]; /* perfetto: its GPU metric counter tracks,
	                                           * 0 until announced */
};

struct gt_timeline {
	struct gt_reader *reader; /* borrowed */
	bool small_gpu_pids;      /* GPU n is pid n, as in Kineto's JSON (files of one rank whose
	                           * processes all have pids of GT_GPU_SMALL_PID_MAX or more) */
	bool strict_ties;         /* slices whose order at equal timestamps would depend on
	                           * file order go to another lane (both timeline formats set
	                           * it, so that their lanes, and so their threads, agree) */
	struct gt_names names;    /* every name drawn, transformed by the format's function */
	struct gt_catalog cat;    /* what the trace holds: processes, GPUs, threads, losses */
	struct gt_gm gm;          /* which metrics GPU samples hold (gpumetrics.h) */

	struct gt_timeline_proc **procs; /* in order of appearance on the timeline; owned */
	uint32_t nprocs, cap_procs;
	struct gt_timeline_gpu **gpus;
	uint32_t ngpus, cap_gpus;
	struct gt_track **tracks;
	uint32_t ntracks, cap_tracks;
	struct gt_timeline_proc **proc_of; /* by catalog index; NULL until drawn */
	uint32_t cap_proc_of;
	struct gt_timeline_gpu **gpu_of; /* by catalog index; NULL until drawn */
	uint32_t cap_gpu_of;

	struct gt_idmap track_map; /* (kind, pid, id) -> track */
	/* memory pools: (pid << 32 | GPU number, pool address) -> index in pool_bytes + 1; each
	 * pool's reserved bytes as last recorded */
	struct gt_idmap pool_map;
	uint64_t *pool_bytes;
	uint32_t npools, cap_pools;
	struct gt_track *last_track[GT_TRACK_KIND_MAX]; /* most recently used, per kind: the
	                                                 * next record is usually on it */

	struct gt_flow_cache api_flows; /* API calls waiting for their GPU work */
	struct gt_flow_cache gpu_flows; /* GPU work that arrived before its API call */

	uint64_t flows;        /* CPU->GPU arrows: pairs the caches matched */
	uint64_t lanes_forced; /* slices that had to overlap (lanes exhausted) */
};

/* reader may be NULL (unit tests of the lanes); demangle, name_fn and name_expand set up
 * the name cache (names.h). Returns 0 or -ENOMEM. */
int gt_timeline_init(struct gt_timeline *m, struct gt_reader *reader, bool demangle,
                     gt_names_fn name_fn, size_t name_expand);
void gt_timeline_fini(struct gt_timeline *m);

/* Find or create: the timeline's entry for pid's current catalog process, for the catalog GPU
 * that device_id of that process is, for a track. Return NULL only on -ENOMEM. */
struct gt_timeline_proc *gt_timeline_proc(struct gt_timeline *m, uint32_t pid);
struct gt_timeline_gpu *gt_timeline_gpu(struct gt_timeline *m, uint32_t pid, uint32_t device_id);
struct gt_track *gt_timeline_track(struct gt_timeline *m, enum gt_track_kind kind, uint32_t pid,
                                   uint32_t id);
/* Find or create: the track (kind, id) of the process that track `of` belongs to. */
struct gt_track *gt_timeline_track_of(struct gt_timeline *m, enum gt_track_kind kind,
                                      const struct gt_track *of, uint32_t id);

/* The pid that the current process of trace pid `pid` is shown under (the catalog's
 * out_pid: a reused pid's later process has one of its own); tracks, flows and the
 * formats' pids use it. pid itself only on -ENOMEM. */
static inline uint32_t gt_timeline_pid(struct gt_timeline *m, uint32_t pid)
{
	const struct gt_catalog_process *p = gt_catalog_process(&m->cat, pid);

	return p ? p->out_pid : pid;
}
uint32_t gt_timeline_track_index(const struct gt_timeline *m, const struct gt_track *t);

/* Learn from a record (the catalog learns from every one: processes, GPUs, memory in use,
 * losses; the timeline from thread names and memory pools). What an exporter already
 * announced and must describe again is flagged (info_changed, name_changed). Call it for
 * every record, in file order, before gt_timeline_dispatch(). Returns 0 or -ENOMEM. */
int gt_timeline_observe(struct gt_timeline *m, const union gt_record *rec);

/* Device of a context, for records that only carry a context; UINT32_MAX if unknown. */
uint32_t gt_timeline_context_device(const struct gt_timeline *m, uint32_t pid, uint32_t ctx);

/* Whether a record appears on the timeline at all. Not drawn: GPU work CUPTI gave no times
 * for (the kernel that hit an illegal address; counted in the trace, not drawn at time zero),
 * and pinned or pageable host allocations, which are not GPU memory and so stay off a GPU's
 * "memory in use" counter (stats reports them on a host row of its own). */
bool gt_timeline_drawn(const union gt_record *rec);

/* A timeline format's drawing functions, one per record kind that has a shape on the
 * timeline; ctx is the exporter's own state. Each returns 0 or -errno. */
struct gt_timeline_sink {
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
	/* A sample of a GPU's metrics (m->gm describes them); NULL: not drawn */
	int (*gpu_sample)(void *ctx, const struct gt_rec_gpu_sample *r);
	/* A PROCESS record arrived (the model has read it): describe the process again if the
	 * format needs to. */
	void (*process_info)(void *ctx, uint32_t pid);
	/* Describe a lane or a GPU again: its name changed after it was first described. */
	void (*announce_lane)(void *ctx, struct gt_track *t, unsigned lane);
	void (*announce_gpu)(void *ctx, struct gt_timeline_gpu *g);
};

/* Hand one record, after gt_timeline_observe(), to the format's function for its kind; names
 * learnt late (a thread named, a device described) re-announce what was already drawn.
 * Records not drawn (gt_timeline_drawn) are skipped. Returns 0 or the function's -errno.
 * Inline, so that with an exporter's constant ops table the calls are direct. */
static inline int gt_timeline_dispatch(struct gt_timeline *m, const struct gt_timeline_sink *ops,
                                       void *ctx, const union gt_record *rec)
{
	if (!gt_timeline_drawn(rec))
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
	case GT_REC_GPU_SAMPLE:
		return ops->gpu_sample ? ops->gpu_sample(ctx, &rec->gpu_sample) : 0;
	case GT_REC_PROCESS:
		ops->process_info(ctx, rec->hdr.pid);
		return 0;
	case GT_REC_THREAD: {
		struct gt_track *t =
		        gt_timeline_track(m, GT_TRACK_THREAD, rec->hdr.pid, rec->thread.tid);

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

#endif /* GPUTRACE_EXPORTERS_TIMELINE_H */
