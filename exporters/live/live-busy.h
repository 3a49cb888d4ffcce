/* How long a GPU was busy: the union of its kernels' [start, end] intervals, so that kernels
 * on concurrent streams count once. Kernels arrive in batches, in order within each stream
 * (mostly) but interleaved across streams, so they are kept per stream and merged at each fold:
 * no sort unless a stream's own kernels came out of order. Used by the live aggregates
 * (live.c) on the drain's thread. Runs in the CLI. */
#ifndef GPUTRACE_EXPORTERS_LIVE_BUSY_H
#define GPUTRACE_EXPORTERS_LIVE_BUSY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GT_LIVE_BUSY_PENDING 16384u /* intervals kept before a fold is forced */
#define GT_LIVE_BUSY_STREAMS 64u    /* streams kept apart; the rest share one list */

struct gt_live_interval {
	uint64_t start_ns, end_ns;
};

struct gt_live_busy_stream {
	uint32_t pid, stream;
	bool unsorted; /* an interval starts before the one added before it */
	struct gt_live_interval *v;
	size_t n, cap;
};

struct gt_live_busy {
	uint64_t busy_ns; /* the union of the intervals of every fold so far */
	struct gt_live_busy_stream *streams;
	size_t nstreams, cap_streams, last; /* last: the stream added to last */
	size_t pending;                     /* intervals in all streams */
	size_t *heap;                       /* fold's merge: stream indices; cap_streams long */
	size_t *pos;                        /* fold's merge: next interval of each stream */
};

/* Add a kernel's interval (end > start) on `stream` of process `pid`. An interval that starts
 * inside the last one of its stream only extends it. Folds first when GT_LIVE_BUSY_PENDING
 * intervals wait. Returns 0 or -ENOMEM (the interval is not counted). */
int gt_live_busy_add(struct gt_live_busy *b, uint32_t pid, uint32_t stream, uint64_t start_ns,
                     uint64_t end_ns);

/* busy_ns += the union of the intervals added since the last fold; they are forgotten. */
void gt_live_busy_fold(struct gt_live_busy *b);

/* Free what b holds; it is then empty (zeroed). */
void gt_live_busy_fini(struct gt_live_busy *b);

#endif /* GPUTRACE_EXPORTERS_LIVE_BUSY_H */
