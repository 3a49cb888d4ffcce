/* gputrace's own work inside the traced process, measured as it happens: which threads handled
 * CUPTI's completed buffers, how many records they walked and for how long, and what the
 * periodic flushes took. Said once, at exit, in an informational notice (GT_NOTICE_SELF_COST),
 * so that a trace tells what recording cost the process's threads (docs/collectors.md, "What
 * recording cost the process").
 * Runs inside the traced application: CUPTI's buffer thread and application threads in a
 * forced flush (gt_self_buffer), our flush thread (gt_self_flush), the exit path (the report).
 * Two clock reads and a few relaxed atomics per buffer of up to 2 MiB. */
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "selfcost.h"

/* Threads told apart; any further thread counts in the last slot. CUPTI hands buffers to one
 * worker thread of its own and, in a flush, to the flushing thread. */
#define SELF_THREADS 4u

struct self_slot {
	_Atomic uint32_t tid; /* 0: free; UINT32_MAX: the slot of every further thread */
	_Atomic uint64_t buffers, records, ns, max_ns;
	char name[16]; /* the thread's name when it took the slot */
};

static struct self_slot slots[SELF_THREADS + 1] = {[SELF_THREADS] = {.tid = UINT32_MAX}};
static __thread struct self_slot *mine __attribute__((tls_model("initial-exec")));
static _Atomic uint64_t flushes, flush_ns, flush_max_ns;

static void raise_max(_Atomic uint64_t *max, uint64_t v)
{
	uint64_t old = atomic_load_explicit(max, memory_order_relaxed);

	while (v > old && !atomic_compare_exchange_weak_explicit(max, &old, v, memory_order_relaxed,
	                                                         memory_order_relaxed))
		;
}

static struct self_slot *slot_of_thread(void)
{
	uint32_t tid;

	if (mine)
		return mine;
	tid = (uint32_t)syscall(SYS_gettid);
	for (unsigned i = 0; i < SELF_THREADS; i++) {
		uint32_t free_tid = 0;

		if (atomic_compare_exchange_strong(&slots[i].tid, &free_tid, tid)) {
			char name[17] = {0};

			if (prctl(PR_GET_NAME, name, 0, 0, 0) == 0)
				memcpy(slots[i].name, name, sizeof(slots[i].name) - 1);
			return mine = &slots[i];
		}
	}
	return mine = &slots[SELF_THREADS];
}

void gt_self_buffer(uint64_t start_ns, uint64_t end_ns, uint64_t records)
{
	struct self_slot *s = slot_of_thread();
	uint64_t ns = end_ns > start_ns ? end_ns - start_ns : 0;

	atomic_fetch_add_explicit(&s->buffers, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&s->records, records, memory_order_relaxed);
	atomic_fetch_add_explicit(&s->ns, ns, memory_order_relaxed);
	raise_max(&s->max_ns, ns);
}

void gt_self_flush(uint64_t start_ns, uint64_t end_ns)
{
	uint64_t ns = end_ns > start_ns ? end_ns - start_ns : 0;

	atomic_fetch_add_explicit(&flushes, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&flush_ns, ns, memory_order_relaxed);
	raise_max(&flush_max_ns, ns);
}

/* ns as milliseconds with three decimals: the unit the summary line uses */
static int ms(char *buf, size_t size, uint64_t ns)
{
	return snprintf(buf, size, "%" PRIu64 ".%03" PRIu64 " ms", ns / 1000000u,
	                ns / 1000u % 1000u);
}

/* Append s to buf[*len..size), cut to fit; buf stays NUL-terminated. */
static void put(char *buf, size_t size, size_t *len, const char *s)
{
	size_t n = strlen(s);

	if (*len + 1 >= size)
		return;
	if (n > size - 1 - *len)
		n = size - 1 - *len;
	memcpy(buf + *len, s, n);
	*len += n;
	buf[*len] = '\0';
}

uint64_t gt_self_report(char *buf, size_t size)
{
	uint64_t buffers = 0, records = 0, ns = 0, max = 0;
	char part[160], t[2][32];
	size_t len = 0;
	unsigned shown = 0;

	if (!size)
		return 0;
	buf[0] = '\0';
	for (unsigned i = 0; i <= SELF_THREADS; i++) {
		buffers += atomic_load(&slots[i].buffers);
		records += atomic_load(&slots[i].records);
		ns += atomic_load(&slots[i].ns);
		if (atomic_load(&slots[i].max_ns) > max)
			max = atomic_load(&slots[i].max_ns);
	}
	/* a process without CUPTI's buffers (NVTX alone) has nothing to say: whether its flush
	 * thread ran once before exit is a matter of timing */
	if (!buffers)
		return 0;
	ms(t[0], sizeof(t[0]), ns);
	ms(t[1], sizeof(t[1]), max);
	snprintf(part, sizeof(part),
	         "gputrace's own work: %" PRIu64 " CUPTI buffers, %" PRIu64
	         " records, handled in %s (the longest %s)",
	         buffers, records, t[0], t[1]);
	put(buf, size, &len, part);
	for (unsigned i = 0; i <= SELF_THREADS; i++) {
		uint64_t b = atomic_load(&slots[i].buffers);
		uint32_t tid = atomic_load(&slots[i].tid);

		if (!b)
			continue;
		ms(t[0], sizeof(t[0]), atomic_load(&slots[i].ns));
		if (tid == UINT32_MAX)
			snprintf(part, sizeof(part), "%s%" PRIu64 " in %s on other threads",
			         shown++ ? ", " : ": ", b, t[0]);
		else
			snprintf(part, sizeof(part),
			         "%s%" PRIu64 " in %s on thread %" PRIu32 " (%s)",
			         shown++ ? ", " : ": ", b, t[0], tid,
			         slots[i].name[0] ? slots[i].name : "unnamed");
		put(buf, size, &len, part);
	}
	if (atomic_load(&flushes)) {
		ms(t[0], sizeof(t[0]), atomic_load(&flush_ns));
		ms(t[1], sizeof(t[1]), atomic_load(&flush_max_ns));
		snprintf(part, sizeof(part),
		         "; %" PRIu64
		         " periodic flushes in %s (the longest %s), buffers handled in "
		         "them included",
		         atomic_load(&flushes), t[0], t[1]);
		put(buf, size, &len, part);
	}
	return ns;
}
