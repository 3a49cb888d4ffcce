/* GPU busy time: the union of a GPU's activity intervals, by what ran - compute kernels,
 * communication (NCCL) kernels, copies and memsets - fed in file order, which is not time
 * order, and summed as it goes. Gives the time during which each combination of kinds ran
 * (so compute, exposed communication, copies only, idle, and communication overlapped by
 * compute), over the whole trace and within given windows (training steps). Runs in the CLI
 * (stats across ranks; the live view's busy time, through gt_busy_fold). Memory is bounded: at
 * most GT_BUSY_PENDING intervals wait to be merged and GT_BUSY_KEEP merged segments stay open,
 * whatever the trace's length (about 75 KiB per GPU, and the merge's scratch); rules and
 * precision: docs/stats.md, "Across ranks". */
#ifndef GPUTRACE_EXPORTERS_BUSY_H
#define GPUTRACE_EXPORTERS_BUSY_H

#include <stddef.h>
#include <stdint.h>

/* What ran: one bit each. */
enum gt_busy_kind {
	GT_BUSY_COMPUTE = 0, /* kernels that are not communication; CUDA graph launches */
	GT_BUSY_COMM,        /* NCCL's kernels */
	GT_BUSY_MEMORY,      /* copies and memsets */
	GT_BUSY_KIND_MAX
};
#define GT_BUSY_MASKS (1u << GT_BUSY_KIND_MAX) /* combinations, 0 (nothing) included */

/* Intervals waiting to be merged, and merged segments (stretches of time during which the
 * same kinds ran) kept open after each merge. An interval is summed exactly when it arrives
 * before GT_BUSY_KEEP newer segments of its GPU have been merged; otherwise its time before
 * what was summed is counted in late_ns and left out. */
#define GT_BUSY_PENDING 1024u
#define GT_BUSY_KEEP    2048u

/* A window (a training step) and the time within it. */
struct gt_busy_window {
	uint64_t start_ns, end_ns; /* trace clock; end exclusive */
	uint64_t compute_ns;       /* a compute kernel ran */
	uint64_t comm_ns;          /* a communication kernel ran */
	uint64_t overlap_ns;       /* a communication and a compute kernel ran together */
	uint64_t memory_ns;        /* a copy or memset ran */
};

struct gt_busy_totals {
	uint64_t by_mask[GT_BUSY_MASKS]; /* ns during which exactly these kinds ran (bits of
	                                  * enum gt_busy_kind); [0] stays 0 */
	uint64_t first_ns;               /* earliest start fed; UINT64_MAX when none */
	uint64_t last_ns;                /* latest end fed */
	uint64_t span_ns;                /* last - first of each GPU, summed (gt_busy_totals_add) */
	uint64_t late_ns;                /* time that arrived after it had been summed: left out */
	uint64_t late_spans;             /* intervals that lost time so */
	uint64_t spans;                  /* intervals fed (zero-length and reversed ones aside) */
};

struct gt_busy;

/* The buffers a merge works in (a few hundred KiB at most), which the busy times of one
 * reading may share: only the open segments and the waiting intervals are each GPU's own.
 * Returns 0 or -ENOMEM. */
struct gt_busy_scratch;
int gt_busy_scratch_new(struct gt_busy_scratch **ret);
void gt_busy_scratch_free(struct gt_busy_scratch *sc); /* accepts NULL */

/* windows: n windows sorted by start (they may nest or overlap), borrowed until
 * gt_busy_free(); their times are added to (several gt_busy may share them: a rank with two
 * GPUs). NULL with n = 0 for none. scratch: borrowed until gt_busy_free(), used by one
 * thread; NULL for the busy time's own. Returns 0 or -ENOMEM. */
int gt_busy_new(struct gt_busy_window *windows, size_t n, struct gt_busy_scratch *scratch,
                struct gt_busy **ret);

/* Accepts NULL. */
void gt_busy_free(struct gt_busy *b);

/* One interval [start_ns, end_ns) of kind (enum gt_busy_kind). Zero-length and reversed
 * intervals are ignored. Returns 0, -EINVAL for an unknown kind, or -ENOMEM. */
int gt_busy_add(struct gt_busy *b, uint64_t start_ns, uint64_t end_ns, unsigned kind);

/* Merge and sum everything still open; later intervals count as late. Returns 0 or -ENOMEM. */
int gt_busy_finish(struct gt_busy *b);

/* Merge and sum everything still open, and forget it: later intervals are summed on their own
 * (none is late for what was summed before, and time they share with it counts again), and
 * windows take their share from them again: the live view's union since its last publication.
 * Returns 0 or -ENOMEM. */
int gt_busy_fold(struct gt_busy *b);

/* The sums so far (complete after gt_busy_finish). */
const struct gt_busy_totals *gt_busy_totals(const struct gt_busy *b);

/* Add b's sums to *into (first_ns the smaller, last_ns the larger, spans summed: the idle
 * time of two GPUs is the sum of each one's). *into starts zeroed with first_ns UINT64_MAX. */
void gt_busy_totals_add(struct gt_busy_totals *into, const struct gt_busy_totals *b);

/* Derived figures of a total; they add up to span_ns:
 * compute + exposed communication + copies only + idle. */
uint64_t gt_busy_compute_ns(const struct gt_busy_totals *t); /* a compute kernel ran */
uint64_t gt_busy_comm_ns(const struct gt_busy_totals *t);    /* communication, no compute */
uint64_t gt_busy_memory_ns(const struct gt_busy_totals *t);  /* only copies or memsets */
uint64_t gt_busy_any_ns(const struct gt_busy_totals *t);     /* anything ran */
uint64_t gt_busy_idle_ns(const struct gt_busy_totals *t);    /* span_ns - any */
/* Communication together with compute; over all communication time it is the overlap share. */
uint64_t gt_busy_overlap_ns(const struct gt_busy_totals *t);
uint64_t gt_busy_comm_all_ns(const struct gt_busy_totals *t); /* a communication kernel ran */

#endif /* GPUTRACE_EXPORTERS_BUSY_H */
