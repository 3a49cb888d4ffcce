/* A cheap reading of the trace clock for the NVTX handlers: the CPU's invariant time-stamp
 * counter scaled to CLOCK_MONOTONIC nanoseconds, about a third of clock_gettime's cost. The
 * flush thread re-anchors it every period by slewing (never stepping), so it stays continuous
 * and monotonic and within about a microsecond of CLOCK_MONOTONIC. Falls back to
 * clock_gettime when the TSC is not trustworthy or nobody re-anchors it.
 * Runs inside the traced application: reads on any thread, updates on the flush thread. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "emit.h"
#include "tsc.h"

struct gt_tsc_conv gt_tsc;

/* The anchoring thread's own state: the long baseline the rate is measured over. */
static struct {
	uint64_t first_tsc, first_ns;
	uint64_t last_anchor_ns;
} tsc;

_Atomic int gt_tsc_enabled;

#if GT_HAVE_TSC
/* 1 if the first CPU's "flags" line in /proc/cpuinfo lists every one of `flags`. */
static bool cpu_has_flags(const char *const *flags)
{
	char buf[8192], word[40];
	char *line, *end;
	ssize_t n;
	int fd;

	fd = open("/proc/cpuinfo", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	line = strstr(buf, "\nflags");
	if (!line || !(line = strchr(line, ':')))
		return false;
	end = strchr(line, '\n');
	if (end)
		*end = ' '; /* every flag, the last one too, is followed by a space */
	for (; *flags; flags++) {
		snprintf(word, sizeof(word), " %s ", *flags);
		if (!strstr(line, word))
			return false;
	}
	return true;
}

/* The kernel keeps time with the TSC: it has checked that it is invariant and synchronized
 * across CPUs (virtual machines often hide the CPUID bit that says so, not the clocksource).
 * Under KVM the guest's clock is kvm-clock, itself computed from the TSC; there the TSC is
 * used when the CPU says it is constant and non-stop (the hypervisor keeps the vCPUs' TSCs in
 * step), since clock_gettime through kvm-clock costs several times an rdtsc (measured on the
 * H200 machines: an NVTX push+pop costs about 90 ns with two such reads). */
static bool tsc_trustworthy(void)
{
	static const char *const invariant[] = {"constant_tsc", "nonstop_tsc", NULL};
	char cs[32] = {0};
	FILE *f;

	f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "re");
	if (!f)
		return false;
	if (!fgets(cs, sizeof(cs), f))
		cs[0] = '\0';
	fclose(f);
	if (strncmp(cs, "tsc", 3) == 0)
		return true;
	return strncmp(cs, "kvm-clock", 9) == 0 && cpu_has_flags(invariant);
}

/* A (tsc, ns) pair read as close together as possible: the tightest of a few tries. */
static void pair_now(uint64_t *t, uint64_t *ns)
{
	uint64_t best = UINT64_MAX;
	int i;

	for (i = 0; i < 5; i++) {
		uint64_t t0 = __rdtsc(), n = gt_now_ns(), t1 = __rdtsc();

		if (t1 - t0 < best) {
			best = t1 - t0;
			*t = t0 + (t1 - t0) / 2;
			*ns = n;
		}
	}
}
#endif

static void publish(uint64_t bt, uint64_t bn, uint64_t m)
{
	uint32_t s = atomic_load_explicit(&gt_tsc.seq, memory_order_relaxed);

	atomic_store_explicit(&gt_tsc.seq, s + 1, memory_order_relaxed);
	/* release: the odd seq is visible before the new fields (pairs with readers' fence) */
	atomic_thread_fence(memory_order_release);
	atomic_store_explicit(&gt_tsc.base_tsc, bt, memory_order_relaxed);
	atomic_store_explicit(&gt_tsc.base_ns, bn, memory_order_relaxed);
	atomic_store_explicit(&gt_tsc.mult, m, memory_order_relaxed);
	/* release: pairs with the readers' acquire load of seq */
	atomic_store_explicit(&gt_tsc.seq, s + 2, memory_order_release);
}

void gt_tsc_init(void)
{
#if GT_HAVE_TSC
	uint64_t t0, n0, t1, n1;

	if (!tsc_trustworthy())
		return;
	pair_now(&t0, &n0);
	/* ~2 ms of baseline for the first rate; the flush thread refines it */
	do {
		pair_now(&t1, &n1);
	} while (n1 - n0 < 2000000u);
	if (t1 <= t0)
		return;
	tsc.first_tsc = t0;
	tsc.first_ns = n0;
	tsc.last_anchor_ns = n1;
	publish(t1, n1, (uint64_t)(((gt_u128)(n1 - n0) << 32) / (t1 - t0)));
	atomic_store(&gt_tsc_enabled, 1);
	gt_debug("NVTX clock: TSC, %.4f ns per tick", (double)(n1 - n0) / (double)(t1 - t0));
#endif
}

void gt_tsc_anchor(void)
{
#if GT_HAVE_TSC
	uint64_t t, n, bt, fn, rate, period, ticks, target;
	int64_t err, limit;

	if (!atomic_load(&gt_tsc_enabled))
		return;
	pair_now(&t, &n);
	period = n - tsc.last_anchor_ns;
	if (period < 1000000u || t <= tsc.first_tsc)
		return;
	tsc.last_anchor_ns = n;
	/* the long-run rate, from the first anchor to now */
	rate = (uint64_t)(((gt_u128)(n - tsc.first_ns) << 32) / (t - tsc.first_tsc));
	/* continue from where the current conversion is now, and slew so that the error is
	 * gone by the next anchor (one period ahead): never a step, never backwards */
	bt = atomic_load(&gt_tsc.base_tsc);
	/* a TSC behind the base (moved back, as a migrated VM's may be) reads as the base */
	fn = atomic_load(&gt_tsc.base_ns) +
	     (t > bt ? (uint64_t)(((gt_u128)(t - bt) * atomic_load(&gt_tsc.mult)) >> 32) : 0);
	err = (int64_t)(n - fn);
	limit = (int64_t)(period / 4);
	if (err > limit)
		err = limit;
	if (err < -limit)
		err = -limit;
	ticks = (uint64_t)(((gt_u128)period << 32) / rate);
	target = (uint64_t)((int64_t)period + err);
	if (!ticks)
		return;
	publish(t, fn, (uint64_t)(((gt_u128)target << 32) / ticks));
#endif
}
