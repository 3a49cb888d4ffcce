/* Waits that last as long as something moves: one rule for every wait on the trace's writing
 * (the writer's queue, src/format/writeq.c; the standalone close, src/session/client-standalone.c).
 * A wait gives up only once a progress count has not changed for limit_ns. Runs in the CLI and in
 * the traced application (the standalone drainer and the thread that exits). */
#ifndef GPUTRACE_SRC_STALL_H
#define GPUTRACE_SRC_STALL_H

#include <stdbool.h>
#include <stdint.h>

#include "clock.h"

struct gt_stall {
	uint64_t limit_ns; /* give up after this long without progress; 0: never */
	uint64_t seen;     /* the progress count when it last changed */
	uint64_t since_ns; /* trace clock then */
};

/* Start watching `progress` (a count that only grows: calls returned, passes made). */
static inline void gt_stall_init(struct gt_stall *s, uint64_t limit_ns, uint64_t progress)
{
	s->limit_ns = limit_ns;
	s->seen = progress;
	s->since_ns = gt_now_ns();
}

/* Look at the count again: true once it has not changed for limit_ns (never with limit 0). */
static inline bool gt_stall_expired(struct gt_stall *s, uint64_t progress)
{
	uint64_t now = gt_now_ns();

	if (progress != s->seen) {
		s->seen = progress;
		s->since_ns = now;
		return false;
	}
	return s->limit_ns && now - s->since_ns >= s->limit_ns;
}

/* How long to sleep before looking again: step_ns, or less when the limit is shorter. */
static inline uint64_t gt_stall_step_ns(const struct gt_stall *s, uint64_t step_ns)
{
	return s->limit_ns && s->limit_ns < step_ns ? s->limit_ns : step_ns;
}

#endif /* GPUTRACE_SRC_STALL_H */
