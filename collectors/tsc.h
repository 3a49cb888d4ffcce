/* The NVTX handlers' clock (tsc.c): the trace clock read from the TSC. The reader is inline,
 * since an NVTX push+pop reads it twice and a call would cost as much as the rest of the
 * conversion. Runs inside the traced application. */
#ifndef GPUTRACE_COLLECTORS_TSC_H
#define GPUTRACE_COLLECTORS_TSC_H

#include <stdatomic.h>
#include <stdint.h>

#include "clock.h"

#if defined(__x86_64__)
#include <x86intrin.h>
#define GT_HAVE_TSC 1
#else
#define GT_HAVE_TSC 0
#endif

__extension__ typedef unsigned __int128 gt_u128;

/* Conversion tsc -> ns: base_ns + ((tsc - base_tsc) * mult) >> 32. Written only by
 * gt_tsc_anchor (one thread); readers retry while seq is odd or changed (a seqlock). */
struct gt_tsc_conv {
	_Atomic uint32_t seq;
	_Atomic uint64_t base_tsc;
	_Atomic uint64_t base_ns;
	_Atomic uint64_t mult; /* ns per tick << 32 */
};
extern struct gt_tsc_conv gt_tsc;
extern _Atomic int gt_tsc_enabled;

/* Calibrate (about 2 ms) and enable the TSC clock if the kernel and CPU trust the TSC. */
void gt_tsc_init(void);
/* Re-anchor to CLOCK_MONOTONIC by slewing; from one thread (the flush thread), each period. */
void gt_tsc_anchor(void);

/* Trace-clock nanoseconds from the TSC; only while gt_tsc_enabled (never set where there is
 * no TSC). Any thread, lock-free, async-signal-safe. */
static inline uint64_t gt_tsc_ns(void)
{
#if GT_HAVE_TSC
	uint32_t s0, s1;
	uint64_t bt, bn, m, t;

	do {
		/* acquire: pairs with the release stores of seq in gt_tsc_anchor */
		s0 = atomic_load_explicit(&gt_tsc.seq, memory_order_acquire);
		bt = atomic_load_explicit(&gt_tsc.base_tsc, memory_order_relaxed);
		bn = atomic_load_explicit(&gt_tsc.base_ns, memory_order_relaxed);
		m = atomic_load_explicit(&gt_tsc.mult, memory_order_relaxed);
		/* inside the loop: a thread stopped here while the anchor moves must not
		 * convert a reading from after the new anchor with the old rate */
		t = __rdtsc();
		atomic_thread_fence(memory_order_acquire);
		s1 = atomic_load_explicit(&gt_tsc.seq, memory_order_relaxed);
	} while ((s0 & 1u) || s0 != s1);
	/* a reading just before the base (another core, a hair behind) counts as the base */
	return bn + (t > bt ? (uint64_t)(((gt_u128)(t - bt) * m) >> 32) : 0);
#else
	return gt_now_ns();
#endif
}

/* Trace-clock nanoseconds, from the TSC when gt_tsc_enabled, else clock_gettime. Any thread,
 * lock-free, async-signal-safe. Used by the NVTX handlers only: everything else reads
 * CLOCK_MONOTONIC itself. */
static inline uint64_t gt_fast_ns(void)
{
	if (atomic_load_explicit(&gt_tsc_enabled, memory_order_relaxed))
		return gt_tsc_ns();
	return gt_now_ns();
}

#endif /* GPUTRACE_COLLECTORS_TSC_H */
