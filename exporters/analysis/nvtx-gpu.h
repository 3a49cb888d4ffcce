/* GPU time per NVTX range, as Nsight Systems' nvtx_gpu_proj_sum and nvtx_gpu_proj_trace
 * project it: the kernels, copies, memsets and graph launches whose launching API call lies
 * inside a range on the range's own thread, projected onto that range (earliest start to
 * latest end), with the union of their busy intervals beside it. Two passes over a trace
 * through its reader (and whatever window is set on it); runs in the CLI. The rules and
 * their source: docs/stats.md, "GPU time per NVTX range". */
#ifndef GPUTRACE_NVTX_GPU_H
#define GPUTRACE_NVTX_GPU_H

#include <stddef.h>
#include <stdint.h>

#include "gputrace/record.h"
#include "gputrace/trace.h"

/* A launching call and its GPU work are paired by (process, correlation id) in fixed caches
 * of this many calls and of this many pieces of work waiting for their call; work that
 * waits longer, or whose call never comes, is counted in ops_unmatched. */
#define GT_NVTX_GPU_CALLS   (1u << 16)
#define GT_NVTX_GPU_WAITING (1u << 16)
/* Work is applied to its ranges in start order through a heap of this many entries; a piece
 * that comes after a later-starting piece of one of its ranges was applied is counted in
 * ops_late, and its part of that range's busy time may be short. */
#define GT_NVTX_GPU_REORDER (1u << 13)

/* Statistics of one quantity over the instances of a name. */
struct gt_nvtx_gpu_series {
	uint64_t total_ns, min_ns, max_ns;
	double avg_ns, median_ns, stddev_ns; /* median exact; stddev of a sample (n - 1), 0
	                                      * below two instances */
};

/* A range name: (style, domain, message), the instances of it that launched GPU work. */
struct gt_nvtx_gpu_name {
	char *domain;                   /* NULL for the default domain; owned */
	char *message;                  /* owned */
	unsigned style;                 /* GT_NVTX_PUSH_POP or GT_NVTX_START_END */
	uint64_t instances;             /* Nsight Systems' "Range Instances" */
	uint64_t range_total_ns;        /* their CPU durations summed ("Total Range Time") */
	struct gt_nvtx_gpu_series proj; /* projected time: last end - first start of its work */
	struct gt_nvtx_gpu_series busy; /* the union of its work's intervals */
	uint64_t ops;                   /* GPU operations, all instances ("Total GPU Ops") */
};

/* One range instance that launched GPU work. */
struct gt_nvtx_gpu_instance {
	const struct gt_nvtx_gpu_name *name;
	uint64_t seq;      /* its NVTX record's place among the NVTX records (marks included)
	                    * the reader handed out, from 0, in file order */
	uint32_t pid;      /* as every output shows it (the catalog's out_pid) */
	uint32_t process;  /* the catalog's index of its process */
	uint32_t tid;      /* the thread that opened and closed it */
	uint32_t level;    /* push/pop: nesting depth on the thread, 0 outermost; start/end: 0 */
	uint64_t start_ns; /* the range on the CPU, trace clock */
	uint64_t end_ns;
	uint64_t gpu_start_ns; /* earliest start of its GPU work, trace clock */
	uint64_t gpu_end_ns;   /* latest end */
	uint64_t busy_ns;      /* the union of its work's intervals (<= gpu_end - gpu_start) */
	uint64_t ops;          /* kernels, copies, memsets, graph launches */
};

struct gt_nvtx_gpu {
	/* by total projected time, most first; ties by style, domain, message */
	struct gt_nvtx_gpu_name *names;
	size_t nnames;
	/* in file order (seq) */
	struct gt_nvtx_gpu_instance *instances;
	size_t ninstances;

	uint64_t ranges;        /* push/pop and start/end ranges read */
	uint64_t cross_thread;  /* start/end ranges ended on another thread: not projected */
	uint64_t ops;           /* kernels, copies, memsets and graph launches read */
	uint64_t ops_in_ranges; /* of those, launched inside at least one range */
	uint64_t ops_unmatched; /* whose launching call was not found (no correlation id, API
	                         * calls not traced or outside the window, beyond the caches) */
	uint64_t ops_late;      /* applied out of start order to a range (see above) */
	struct gt_reader_status status; /* the reader's, after the second pass */
};

/* Read r twice (rewinding it first; a window set on r applies) and project every push/pop
 * and start/end range. Returns 0 and *ret (free with gt_nvtx_gpu_free), -ENOMEM, or the
 * reader's -errno; *errmsg then says which. */
int gt_nvtx_gpu_collect(struct gt_reader *r, struct gt_nvtx_gpu **ret, const char **errmsg);

/* NULL is accepted. */
void gt_nvtx_gpu_free(struct gt_nvtx_gpu *g);

/* The same for a consumer that reads the trace itself (the SQLite export): begin reads the
 * ranges (a pass of its own) and rewinds r; feed then takes every record of the consumer's
 * pass over r, in file order; end gives the result, with the reader's status then, and frees
 * the pass. Each returns 0, -ENOMEM, or (begin) the reader's -errno, with *errmsg; after a
 * failure of feed, gt_nvtx_gpu_pass_free() (NULL accepted). */
struct gt_nvtx_gpu_pass;
int gt_nvtx_gpu_begin(struct gt_reader *r, struct gt_nvtx_gpu_pass **ret, const char **errmsg);
int gt_nvtx_gpu_feed(struct gt_nvtx_gpu_pass *p, const union gt_record *rec);
int gt_nvtx_gpu_end(struct gt_nvtx_gpu_pass *p, struct gt_nvtx_gpu **ret, const char **errmsg);
void gt_nvtx_gpu_pass_free(struct gt_nvtx_gpu_pass *p);

#endif /* GPUTRACE_NVTX_GPU_H */
