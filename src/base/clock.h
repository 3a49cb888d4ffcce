/* The trace clock: CLOCK_MONOTONIC in nanoseconds, used by every record (CUPTI's timestamp
 * callback returns it too, so CPU and GPU times share one clock). Runs in both processes. */
#ifndef GPUTRACE_CLOCK_H
#define GPUTRACE_CLOCK_H

#include <stdint.h>
#include <time.h>

#define GT_TRACE_CLOCK CLOCK_MONOTONIC

static inline uint64_t gt_clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Trace clock now. Async-signal-safe, no allocation. */
static inline uint64_t gt_now_ns(void)
{
	return gt_clock_ns(GT_TRACE_CLOCK);
}

#endif /* GPUTRACE_CLOCK_H */
