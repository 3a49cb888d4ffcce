/* CUPTI plumbing: subscription, the one callback that fans out to the collectors' callback
 * hooks, the preallocated activity-buffer pool, buffer completion (parse and dispatch by kind
 * to the collectors' activity hooks), dropped-record accounting, the trace clock for CUPTI
 * timestamps and the periodic flush thread (the collectors' flush hooks). Every collector is
 * reached through the table in collector.c.
 * Runs inside the traced application: CUPTI's buffer thread, application threads (buffer
 * requests, callbacks) and our flush thread. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "collector.h"
#include "cupti-glue.h"
#include "cuptilib.h"
#include "emit.h"
#include "selfcost.h"
#include "tsc.h"

/* Pool geometry: 16 x 2 MiB holds about 100k kernel records in flight, enough for a million
 * launches per second at the default 100 ms flush period; pages are touched only by CUPTI. */
#define GT_BUF_BYTES (2u << 20)
#define GT_BUF_COUNT 16u
/* When the pool is empty (the buffer thread fell far behind) we allocate a few more rather than
 * drop; past this many the request is refused and CUPTI counts the records it drops. */
#define GT_BUF_OVERFLOW_MAX 64
#define GT_BUF_ALIGN        8u

/* Free buffers as a lock-free stack of indices; the tag in the upper half defeats ABA. */
static uint8_t *pool_mem;               /* GT_BUF_COUNT * GT_BUF_BYTES, owned, never freed */
static int32_t pool_next[GT_BUF_COUNT]; /* next free index, -1 ends the list */
static _Atomic uint64_t pool_head;      /* (tag << 32) | (index + 1); 0 = empty */
static _Atomic int pool_overflow;       /* overflow buffers currently allocated */
static _Atomic uint64_t pool_refused;   /* requests answered with no buffer */

#define GT_CB_DOMAINS 8u    /* CUpti_CallbackDomain values below this are dispatched */
#define GT_CB_HOOKS   4u    /* collectors' callbacks per domain */
#define GT_END_HOOKS  7u    /* collectors' buffer-end hooks */
#define GT_CBID_BITS  1024u /* callback ids a collector's switch-on can be undone for */
#define GT_KIND_WORDS ((CUPTI_ACTIVITY_KIND_COUNT + 63u) / 64u)
_Static_assert(CUPTI_RUNTIME_TRACE_CBID_SIZE <= GT_CBID_BITS, "runtime callback ids");
_Static_assert(CUPTI_DRIVER_TRACE_CBID_SIZE <= GT_CBID_BITS, "driver callback ids");

typedef void buffer_end_fn(void);

static CUpti_SubscriberHandle subscriber;
static const struct gt_collector *by_kind[CUPTI_ACTIVITY_KIND_COUNT];
/* The collectors' hooks: NULL-terminated lists read without locks. gt_cupti_start fills them
 * for every collector that is on before it switches anything on (CUPTI may call a hook as
 * soon as any callback is on), and their length never changes after; a collector left out
 * then has its entries replaced, each in one store, by hooks that do nothing. */
static _Atomic(gt_callback_fn *) cb_hooks[GT_CB_DOMAINS][GT_CB_HOOKS + 1];
static _Atomic(buffer_end_fn *) buffer_end_hooks[GT_END_HOOKS + 1];

/* What collectors switched on inside CUPTI (through the gt_cupti_enable_* calls): `kept` for
 * those that are on, `mine` for the one whose enable runs, so that a collector left out
 * switches its part off again, but not what another collector that is on needs. Only the
 * thread in gt_cupti_start (the one calling cuInit). */
struct switched_on {
	uint64_t cb[GT_CB_DOMAINS][GT_CBID_BITS / 64]; /* cuptiEnableCallback */
	uint32_t domains;                              /* cuptiEnableDomain: 1u << domain */
	uint64_t api[2][GT_CBID_BITS / 64]; /* cuptiActivityEnableRuntimeApi, ...DriverApi */
	uint64_t kinds[GT_KIND_WORDS];      /* cuptiActivityEnable */
};
static struct switched_on kept, mine;
/* The activity kinds that tracing collectors (trace_bit != 0) switched on themselves, through
 * gt_cupti_enable_kind: they follow capture ranges, as the kinds the collectors declare. */
static uint64_t self_kinds[GT_KIND_WORDS];

/* Activity kinds toggled by capture ranges. */
static int capture_kinds[32];
static unsigned n_capture_kinds;

static pthread_t flush_thread;
static bool flush_running;
static pthread_mutex_t flush_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t flush_cond;
static bool flush_stop;

const char *gt_cupti_result_name(int res)
{
	const char *s = NULL;

	if (gt_cupti.cuptiGetResultString &&
	    gt_cupti.cuptiGetResultString((CUptiResult)res, &s) == CUPTI_SUCCESS && s)
		return s;
	return "CUPTI_ERROR_UNKNOWN";
}

static void pool_push(int32_t idx)
{
	uint64_t old = atomic_load_explicit(&pool_head, memory_order_relaxed);
	uint64_t new;

	do {
		pool_next[idx] = (int32_t)(old & 0xffffffffu) - 1;
		new = ((old >> 32) + 1) << 32 | (uint64_t)(idx + 1);
		/* release: pairs with the acquire in pool_pop, publishing pool_next[idx] */
	} while (!atomic_compare_exchange_weak_explicit(&pool_head, &old, new, memory_order_release,
	                                                memory_order_relaxed));
}

static int32_t pool_pop(void)
{
	/* acquire: pairs with the release in pool_push, so pool_next[] of the top is visible */
	uint64_t old = atomic_load_explicit(&pool_head, memory_order_acquire);
	uint64_t new;
	int32_t idx;

	do {
		idx = (int32_t)(old & 0xffffffffu) - 1;
		if (idx < 0)
			return -1;
		new = ((old >> 32) + 1) << 32 | (uint64_t)(pool_next[idx] + 1);
	} while (!atomic_compare_exchange_weak_explicit(&pool_head, &old, new, memory_order_acquire,
	                                                memory_order_acquire));
	return idx;
}

/* CUPTI asks for a buffer: on application threads, inside a launch. No allocation while the
 * pool has buffers. */
static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
	int32_t idx = pool_pop();

	*max_records = 0;
	if (idx >= 0) {
		*buffer = pool_mem + (size_t)idx * GT_BUF_BYTES;
		*size = GT_BUF_BYTES;
		return;
	}
	if (atomic_fetch_add(&pool_overflow, 1) < GT_BUF_OVERFLOW_MAX) {
		*buffer = aligned_alloc(GT_BUF_ALIGN, GT_BUF_BYTES);
		if (*buffer) {
			*size = GT_BUF_BYTES;
			return;
		}
	}
	atomic_fetch_sub(&pool_overflow, 1);
	atomic_fetch_add(&pool_refused, 1);
	*buffer = NULL;
	*size = 0;
}

static void buffer_release(uint8_t *buf)
{
	if (buf >= pool_mem && buf < pool_mem + (size_t)GT_BUF_COUNT * GT_BUF_BYTES) {
		pool_push((int32_t)((size_t)(buf - pool_mem) / GT_BUF_BYTES));
	} else if (buf) {
		free(buf);
		atomic_fetch_sub(&pool_overflow, 1);
	}
}

/* CUPTI's buffer thread (or a thread inside cuptiActivityFlushAll): parse and dispatch. */
static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream_id, uint8_t *buffer,
                                      size_t size, size_t valid)
{
	CUpti_Activity *rec = NULL;
	size_t dropped = 0;
	uint64_t refused, records = 0, start_ns = gt_now_ns();
	buffer_end_fn *end;

	(void)size;
	if (atomic_load_explicit(&gt_inj.active, memory_order_relaxed) && buffer && valid) {
		while (gt_cupti.cuptiActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS) {
			const struct gt_collector *c =
			        (unsigned)rec->kind < CUPTI_ACTIVITY_KIND_COUNT ? by_kind[rec->kind]
			                                                        : NULL;

			records++;
			if (c)
				c->activity(rec);
		}
		/* relaxed: as in on_callback */
		for (unsigned n = 0;
		     (end = atomic_load_explicit(&buffer_end_hooks[n], memory_order_relaxed)); n++)
			end();
	}
	if (gt_cupti.cuptiActivityGetNumDroppedRecords(ctx, stream_id, &dropped) == CUPTI_SUCCESS &&
	    dropped) {
		gt_debug("CUPTI dropped %zu records (context %p, stream %u)", dropped, (void *)ctx,
		         stream_id);
		if (atomic_load_explicit(&gt_inj.active, memory_order_relaxed))
			gt_emit_loss_wait(GT_LOSS_CUPTI_DROPPED, dropped, GT_REC_NONE);
	}
	refused = atomic_exchange(&pool_refused, 0);
	if (refused && atomic_load_explicit(&gt_inj.active, memory_order_relaxed))
		gt_emit_loss_wait(GT_LOSS_BUFFER_POOL, refused, GT_REC_NONE);
	buffer_release(buffer);
	gt_self_buffer(start_ns, gt_now_ns(), records);
}

/* CLOCK_MONOTONIC itself, not the NVTX handlers' TSC reading: API records from callbacks,
 * notices and the session's records read it directly, and a kernel must never appear to start
 * before its launch call, which the TSC reading (calibrated over 2 ms, then slewed) cannot
 * promise in its first flush period. Tried in the third session: the saving did not show
 * above the launch benchmark's noise. */
static uint64_t CUPTIAPI trace_clock(void)
{
	return gt_now_ns();
}

/* The one subscriber callback: the domain's hooks, in table order. Application threads,
 * inside CUDA calls. */
static void CUPTIAPI on_callback(void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                 const void *data)
{
	gt_callback_fn *h;

	(void)userdata;
	if (!atomic_load_explicit(&gt_inj.active, memory_order_relaxed))
		return;
	if ((unsigned)domain >= GT_CB_DOMAINS || !gt_guard_enter())
		return;
	/* relaxed: each entry is a whole pointer, either the collector's hook or, once it was
	 * left out, skip_callback; both stay valid */
	for (unsigned n = 0; (h = atomic_load_explicit(&cb_hooks[domain][n], memory_order_relaxed));
	     n++)
		h(domain, cbid, data);
	gt_guard_leave();
}

/* Enable or disable one activity kind; failures are remembered in the trace. */
static int activity_enable(int kind, bool on)
{
	CUptiResult res = on ? gt_cupti.cuptiActivityEnable((CUpti_ActivityKind)kind)
	                     : gt_cupti.cuptiActivityDisable((CUpti_ActivityKind)kind);

	if (res != CUPTI_SUCCESS)
		gt_debug("cuptiActivity%s(%d): %s", on ? "Enable" : "Disable", kind,
		         gt_cupti_result_name(res));
	return res == CUPTI_SUCCESS ? 0 : (int)res;
}

static bool bit(const uint64_t *set, unsigned i)
{
	return set[i / 64] >> (i % 64) & 1u;
}

/* The kinds that tracing collectors switched on themselves follow a capture range (the API
 * collector's RUNTIME and DRIVER kinds, for the "all" filter). API calls switched on one by
 * one cannot: CUPTI honours cuptiActivityEnableRuntimeApi/DriverApi only before the first
 * context exists (probe on the H200, bench/probe/api-toggle.cu: a call switched on later
 * never gets a record), so those stay on, and their records are kept when the call started
 * inside a range (gt_cupti_in_capture). */
static void self_kinds_switch(bool on)
{
	if (gt_inj.cfg.capture == GT_CAPTURE_NONE)
		return;
	for (unsigned k = 0; k < CUPTI_ACTIVITY_KIND_COUNT; k++)
		if (bit(self_kinds, k))
			activity_enable((int)k, on);
}

/* The last capture ranges, by their start and stop times (stop UINT64_MAX while open):
 * written by gt_cupti_set_capturing, whose callers serialize (capture.c's lock), read by
 * CUPTI's buffer thread. A record is judged against the last GT_CAPTURE_WINDOWS ranges:
 * buffers reach us within a flush period, far fewer ranges than that. */
#define GT_CAPTURE_WINDOWS 64u
static struct {
	_Atomic uint64_t start, stop;
} windows[GT_CAPTURE_WINDOWS];
static _Atomic unsigned n_windows;

static void window_mark(bool on)
{
	unsigned n = atomic_load_explicit(&n_windows, memory_order_relaxed);

	if (on) {
		atomic_store_explicit(&windows[n % GT_CAPTURE_WINDOWS].stop, UINT64_MAX,
		                      memory_order_relaxed);
		atomic_store_explicit(&windows[n % GT_CAPTURE_WINDOWS].start, gt_now_ns(),
		                      memory_order_relaxed);
		/* release: pairs with the acquire in gt_cupti_in_capture */
		atomic_store_explicit(&n_windows, n + 1, memory_order_release);
	} else if (n) {
		atomic_store_explicit(&windows[(n - 1) % GT_CAPTURE_WINDOWS].stop, gt_now_ns(),
		                      memory_order_release);
	}
}

bool gt_cupti_in_capture(uint64_t ts_ns)
{
	unsigned n, i;

	if (gt_inj.cfg.capture == GT_CAPTURE_NONE)
		return true;
	/* acquire: pairs with the release in window_mark */
	n = atomic_load_explicit(&n_windows, memory_order_acquire);
	for (i = n > GT_CAPTURE_WINDOWS ? n - GT_CAPTURE_WINDOWS : 0; i < n; i++) {
		unsigned w = i % GT_CAPTURE_WINDOWS;

		if (ts_ns >= atomic_load_explicit(&windows[w].start, memory_order_relaxed) &&
		    ts_ns <= atomic_load_explicit(&windows[w].stop, memory_order_acquire))
			return true;
	}
	return false;
}

void gt_cupti_set_capturing(bool on)
{
	unsigned i;

	if (!on) {
		for (i = 0; i < n_capture_kinds; i++)
			activity_enable(capture_kinds[i], false);
		self_kinds_switch(false);
		window_mark(false);
		/* what the range produced reaches the ring before we say it ended */
		gt_cupti_flush(true);
		atomic_store(&gt_inj.capturing, 0);
	} else {
		window_mark(true);
		atomic_store(&gt_inj.capturing, 1);
		for (i = 0; i < n_capture_kinds; i++)
			activity_enable(capture_kinds[i], true);
		self_kinds_switch(true);
	}
}

void gt_cupti_flush(bool forced)
{
	if (!gt_inj.cupti_on)
		return;
	gt_cupti.cuptiActivityFlushAll(forced ? CUPTI_ACTIVITY_FLAG_FLUSH_FORCED : 0);
}

static void *flush_main(void *arg)
{
	struct timespec deadline;
	unsigned ms = gt_inj.cfg.flush_ms;

	(void)arg;
	pthread_mutex_lock(&flush_lock);
	while (!flush_stop) {
		clock_gettime(CLOCK_MONOTONIC, &deadline);
		deadline.tv_sec += ms / 1000u;
		deadline.tv_nsec += (long)(ms % 1000u) * 1000000L;
		if (deadline.tv_nsec >= 1000000000L) {
			deadline.tv_sec++;
			deadline.tv_nsec -= 1000000000L;
		}
		if (pthread_cond_timedwait(&flush_cond, &flush_lock, &deadline) == ETIMEDOUT &&
		    !flush_stop) {
			uint64_t start_ns = gt_now_ns();

			pthread_mutex_unlock(&flush_lock);
			/* non-forced: completes full buffers and those with finished records only
			 */
			gt_cupti_flush(false);
			gt_collectors_flush(GT_FLUSH_PERIOD);
			gt_tsc_anchor();
			gt_self_flush(start_ns, gt_now_ns());
			pthread_mutex_lock(&flush_lock);
		}
	}
	pthread_mutex_unlock(&flush_lock);
	return NULL;
}

int gt_flush_start(void)
{
	pthread_condattr_t ca;
	pthread_attr_t attr;
	sigset_t all, old;
	int ret;

	if (!gt_inj.cfg.flush_ms)
		return 0;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&flush_cond, &ca);
	pthread_condattr_destroy(&ca);
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 256u << 10);
	/* the application's signals must never be delivered to our thread */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	ret = pthread_create(&flush_thread, &attr, flush_main, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (ret)
		return -ret;
	pthread_setname_np(flush_thread, "gputrace-flush");
	flush_running = true;
	return 0;
}

void gt_flush_stop(void)
{
	struct timespec deadline;

	if (!flush_running)
		return;
	pthread_mutex_lock(&flush_lock);
	flush_stop = true;
	pthread_cond_signal(&flush_cond);
	pthread_mutex_unlock(&flush_lock);
	/* bounded: a flush stuck inside CUPTI must not hang the application's exit (a deadline
	 * on CLOCK_MONOTONIC, which a step of the wall clock does not move) */
	clock_gettime(CLOCK_MONOTONIC, &deadline);
	deadline.tv_sec += 2;
	if (pthread_clockjoin_np(flush_thread, NULL, CLOCK_MONOTONIC, &deadline) != 0)
		gt_debug("flush thread did not stop within 2 s; leaving it");
	flush_running = false;
}

static int add_kind(int kind, const struct gt_collector *c)
{
	by_kind[kind] = c;
	if (n_capture_kinds < sizeof(capture_kinds) / sizeof(capture_kinds[0]))
		capture_kinds[n_capture_kinds++] = kind;
	return 0;
}

/* Free entries of each list c has hooks on; false (nothing added) if one is full. Only
 * before anything is switched on. */
static bool hooks_add(const struct gt_collector *c)
{
	unsigned n[GT_CB_DOMAINS] = {0}, e = 0, d;

	for (d = 0; d < GT_CB_DOMAINS; d++) {
		while (atomic_load(&cb_hooks[d][n[d]]))
			n[d]++;
		if (c->callback && (c->callback_domains & (1u << d)) && n[d] == GT_CB_HOOKS)
			return false;
	}
	while (atomic_load(&buffer_end_hooks[e]))
		e++;
	if (c->buffer_end && e == GT_END_HOOKS)
		return false;
	for (d = 0; d < GT_CB_DOMAINS; d++)
		if (c->callback && (c->callback_domains & (1u << d)))
			atomic_store(&cb_hooks[d][n[d]], c->callback);
	if (c->buffer_end)
		atomic_store(&buffer_end_hooks[e], c->buffer_end);
	return true;
}

/* Whether every hook of c is on its lists (hooks_add succeeded). */
static bool hooks_listed(const struct gt_collector *c)
{
	unsigned n, d;

	for (d = 0; c->callback && d < GT_CB_DOMAINS; d++) {
		if (!(c->callback_domains & (1u << d)))
			continue;
		for (n = 0; atomic_load(&cb_hooks[d][n]) != c->callback; n++)
			if (!atomic_load(&cb_hooks[d][n]))
				return false;
	}
	for (n = 0; c->buffer_end && atomic_load(&buffer_end_hooks[n]) != c->buffer_end; n++)
		if (!atomic_load(&buffer_end_hooks[n]))
			return false;
	return true;
}

static void skip_callback(unsigned domain, unsigned cbid, const void *data)
{
	(void)domain;
	(void)cbid;
	(void)data;
}

static void skip_buffer_end(void)
{
}

/* c is left out: its entries do nothing from now on (the lists keep their length, so a
 * thread walking one meanwhile is safe). */
static void hooks_skip(const struct gt_collector *c)
{
	unsigned n, d;

	for (d = 0; d < GT_CB_DOMAINS; d++)
		for (n = 0; atomic_load(&cb_hooks[d][n]); n++)
			if (atomic_load(&cb_hooks[d][n]) == c->callback)
				atomic_store(&cb_hooks[d][n], skip_callback);
	for (n = 0; atomic_load(&buffer_end_hooks[n]); n++)
		if (atomic_load(&buffer_end_hooks[n]) == c->buffer_end)
			atomic_store(&buffer_end_hooks[n], skip_buffer_end);
}

/* The collector whose enable failed is left out: what it switched on inside CUPTI goes off
 * again, except what a collector that is on switched on too. */
static void switch_off_mine(void)
{
	unsigned d, i;

	for (d = 0; d < GT_CB_DOMAINS; d++) {
		bool whole = mine.domains & ~kept.domains & (1u << d);

		if (whole)
			gt_cupti.cuptiEnableDomain(0, subscriber, (CUpti_CallbackDomain)d);
		for (i = 0; i < GT_CBID_BITS; i++) {
			/* (a domain a collector that is on switched on whole stays whole) */
			if (bit(mine.cb[d], i) && !bit(kept.cb[d], i) &&
			    !(kept.domains & (1u << d)))
				gt_cupti.cuptiEnableCallback(0, subscriber, (CUpti_CallbackDomain)d,
				                             i);
			/* switching the domain off took the others' callbacks in it too */
			if (whole && bit(kept.cb[d], i))
				gt_cupti.cuptiEnableCallback(1, subscriber, (CUpti_CallbackDomain)d,
				                             i);
		}
	}
	for (i = 0; i < GT_CBID_BITS; i++) {
		if (bit(mine.api[0], i) && !bit(kept.api[0], i))
			gt_cupti.cuptiActivityEnableRuntimeApi(i, 0);
		if (bit(mine.api[1], i) && !bit(kept.api[1], i))
			gt_cupti.cuptiActivityEnableDriverApi(i, 0);
	}
	for (i = 0; i < CUPTI_ACTIVITY_KIND_COUNT; i++)
		if (bit(mine.kinds, i) && !bit(kept.kinds, i))
			gt_cupti.cuptiActivityDisable((CUpti_ActivityKind)i);
}

static void or_words(uint64_t *to, const uint64_t *from, size_t n)
{
	for (size_t i = 0; i < n; i++)
		to[i] |= from[i];
}

/* The collector's enable succeeded: what it switched on is kept on. */
static void keep_mine(void)
{
	for (unsigned d = 0; d < GT_CB_DOMAINS; d++)
		or_words(kept.cb[d], mine.cb[d], GT_CBID_BITS / 64);
	kept.domains |= mine.domains;
	or_words(kept.api[0], mine.api[0], GT_CBID_BITS / 64);
	or_words(kept.api[1], mine.api[1], GT_CBID_BITS / 64);
	or_words(kept.kinds, mine.kinds, GT_KIND_WORDS);
}

/* The trace says why a collector's records are missing. */
static void notice_left_out(const struct gt_collector *c, int res)
{
	struct gt_rec_notice r;
	char msg[256];

	if (res)
		snprintf(msg, sizeof(msg),
		         "CUPTI refused the %s collector (%s): its records are missing from this "
		         "trace",
		         c->name, gt_cupti_result_name(res));
	else
		snprintf(msg, sizeof(msg),
		         "the %s collector was left out (no room for its hooks): its records are "
		         "missing from this trace",
		         c->name);
	gt_debug("%s", msg);
	gt_notice_fill(&r, GT_NOTICE_WARNING, GT_NOTICE_CUPTI_ERROR, res, msg);
	gt_emit_wait(&r.hdr);
}

int gt_cupti_start(const char **what)
{
	const struct gt_envconf *cfg = &gt_inj.cfg;
	CUptiResult res;
	size_t i;
	int ret;

	res = gt_cupti.cuptiSubscribe(&subscriber, on_callback, NULL);
	if (res != CUPTI_SUCCESS) {
		*what = "cuptiSubscribe";
		return (int)res;
	}
	/* one clock for CPU and GPU records: must be set before any activity is enabled */
	res = gt_cupti.cuptiActivityRegisterTimestampCallback(trace_clock);
	if (res != CUPTI_SUCCESS) {
		*what = "cuptiActivityRegisterTimestampCallback";
		goto fail;
	}
	/* thread ids in API records are kernel tids, like ours */
	gt_cupti.cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);

	pool_mem = aligned_alloc(GT_BUF_ALIGN, (size_t)GT_BUF_COUNT * GT_BUF_BYTES);
	if (!pool_mem) {
		*what = "activity buffer pool allocation";
		res = CUPTI_ERROR_OUT_OF_MEMORY;
		goto fail;
	}
	for (i = GT_BUF_COUNT; i-- > 0;)
		pool_push((int32_t)i);
	res = gt_cupti.cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed);
	if (res != CUPTI_SUCCESS) {
		*what = "cuptiActivityRegisterCallbacks";
		goto fail;
	}
	gt_inj.cupti_on = true;

	/* Every hook in its list before anything is switched on: CUPTI may call one as soon as
	 * any callback is on, and the lists never change length after. */
	for (const struct gt_collector *const *cp = gt_collectors; *cp; cp++)
		if (gt_collector_on(*cp, cfg) && !hooks_add(*cp))
			notice_left_out(*cp, 0);
	for (const struct gt_collector *const *cp = gt_collectors; *cp; cp++) {
		const struct gt_collector *c = *cp;
		const int *k;

		if (!gt_collector_on(c, cfg) || !hooks_listed(c))
			continue;
		if (c->enable) {
			/* > 0: CUPTI refused this collector, which is left out (the others still
			 * trace) unless it is required; < 0: the configuration does not need it */
			memset(&mine, 0, sizeof(mine));
			ret = c->enable(cfg);
			if (ret > 0 && c->required) {
				*what = c->required;
				res = (CUptiResult)ret;
				goto fail;
			}
			if (ret != 0) {
				/* what it switched on before the refusal would cost the program
				 * and record nothing */
				switch_off_mine();
				hooks_skip(c);
				if (ret > 0)
					notice_left_out(c, ret);
				continue;
			}
			keep_mine();
			if (c->trace_bit)
				or_words(self_kinds, mine.kinds, GT_KIND_WORDS);
		}
		for (k = c->kinds; k && *k; k++) {
			if (*k < 0) {
				/* negative: dispatched here but enabled by the collector itself */
				by_kind[-*k] = c;
				continue;
			}
			if (c->trace_bit == 0) {
				/* metadata: always on, outside capture ranges too */
				by_kind[*k] = c;
				activity_enable(*k, true);
				continue;
			}
			add_kind(*k, c);
		}
	}
	if (cfg->capture == GT_CAPTURE_NONE) {
		gt_cupti_set_capturing(true);
	} else {
		/* the kinds collectors switched on themselves wait for the range too */
		self_kinds_switch(false);
		atomic_store(&gt_inj.capturing, 0);
	}

	return 0;

fail:
	/* the kinds enabled so far (metadata, and those a collector enables itself): an
	 * untraced application must not keep paying for them */
	for (i = 0; i < CUPTI_ACTIVITY_KIND_COUNT; i++)
		if (by_kind[i])
			gt_cupti.cuptiActivityDisable((CUpti_ActivityKind)i);
	gt_inj.cupti_on = false;
	if (subscriber) {
		gt_cupti.cuptiUnsubscribe(subscriber);
		subscriber = NULL;
	}
	return (int)res;
}

void gt_cupti_stop(void)
{
	size_t dropped = 0;

	gt_flush_stop();
	if (!gt_inj.cupti_on)
		return;
	gt_cupti_flush(true);
	/* records dropped in the global queue (not tied to a context's completed buffer) */
	if (gt_cupti.cuptiActivityGetNumDroppedRecords(NULL, 0, &dropped) == CUPTI_SUCCESS &&
	    dropped)
		gt_emit_loss_wait(GT_LOSS_CUPTI_DROPPED, dropped, GT_REC_NONE);
}

static void set_bit(uint64_t *set, unsigned i)
{
	set[i / 64] |= 1ull << (i % 64);
}

int gt_cupti_enable_callback(unsigned domain, unsigned cbid, bool on)
{
	CUptiResult res;

	/* (what cannot be switched off again on a refusal is not switched on) */
	if (domain >= GT_CB_DOMAINS || cbid >= GT_CBID_BITS)
		return CUPTI_ERROR_INVALID_PARAMETER;
	res = gt_cupti.cuptiEnableCallback(on ? 1u : 0u, subscriber, (CUpti_CallbackDomain)domain,
	                                   cbid);
	if (res == CUPTI_SUCCESS && on)
		set_bit(mine.cb[domain], cbid);
	return res == CUPTI_SUCCESS ? 0 : (int)res;
}

int gt_cupti_enable_domain(unsigned domain, bool on)
{
	CUptiResult res;

	if (domain >= GT_CB_DOMAINS)
		return CUPTI_ERROR_INVALID_PARAMETER;
	res = gt_cupti.cuptiEnableDomain(on ? 1u : 0u, subscriber, (CUpti_CallbackDomain)domain);
	if (res == CUPTI_SUCCESS && on)
		mine.domains |= 1u << domain;
	return res == CUPTI_SUCCESS ? 0 : (int)res;
}

int gt_cupti_enable_api_activity(unsigned domain, unsigned cbid)
{
	bool rt = domain == CUPTI_CB_DOMAIN_RUNTIME_API;
	CUptiResult res;

	if ((!rt && domain != CUPTI_CB_DOMAIN_DRIVER_API) || cbid >= GT_CBID_BITS)
		return CUPTI_ERROR_INVALID_PARAMETER;
	res = rt ? gt_cupti.cuptiActivityEnableRuntimeApi(cbid, 1)
	         : gt_cupti.cuptiActivityEnableDriverApi(cbid, 1);
	if (res == CUPTI_SUCCESS)
		set_bit(mine.api[rt ? 0 : 1], cbid);
	return res == CUPTI_SUCCESS ? 0 : (int)res;
}

int gt_cupti_enable_kind(int kind)
{
	CUptiResult res;

	if (kind <= 0 || kind >= CUPTI_ACTIVITY_KIND_COUNT)
		return CUPTI_ERROR_INVALID_PARAMETER;
	res = gt_cupti.cuptiActivityEnable((CUpti_ActivityKind)kind);
	if (res == CUPTI_SUCCESS)
		set_bit(mine.kinds, (unsigned)kind);
	return res == CUPTI_SUCCESS ? 0 : (int)res;
}
