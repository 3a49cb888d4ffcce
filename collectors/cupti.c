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
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "collector.h"
#include "cupti-glue.h"
#include "cuptilib.h"
#include "emit.h"
#include "gputrace/clock.h"
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

#define GT_CB_DOMAINS 8u /* CUpti_CallbackDomain values below this are dispatched */
#define GT_CB_HOOKS   4u /* collectors' callbacks per domain */

static CUpti_SubscriberHandle subscriber;
static const struct gt_collector *by_kind[CUPTI_ACTIVITY_KIND_COUNT];
/* The collectors' hooks that are on, filled by gt_cupti_start before CUPTI can call them (a
 * hook is added before the enable call that lets its callbacks fire) and never changed
 * after: NULL-terminated lists, read without locks. */
static gt_callback_fn *cb_hooks[GT_CB_DOMAINS][GT_CB_HOOKS + 1];
static void (*buffer_end_hooks[8])(void);

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
	uint64_t refused;
	void (**end)(void);

	(void)size;
	if (atomic_load_explicit(&gt_inj.active, memory_order_relaxed) && buffer && valid) {
		while (gt_cupti.cuptiActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS) {
			const struct gt_collector *c =
			        (unsigned)rec->kind < CUPTI_ACTIVITY_KIND_COUNT ? by_kind[rec->kind]
			                                                        : NULL;

			if (c)
				c->activity(rec);
		}
		for (end = buffer_end_hooks; *end; end++)
			(*end)();
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
	gt_callback_fn **h;

	(void)userdata;
	if (!atomic_load_explicit(&gt_inj.active, memory_order_relaxed))
		return;
	if ((unsigned)domain >= GT_CB_DOMAINS || !gt_guard_enter())
		return;
	for (h = cb_hooks[domain]; *h; h++)
		(*h)(domain, cbid, data);
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

void gt_cupti_set_capturing(bool on)
{
	unsigned i;

	if (!on) {
		for (i = 0; i < n_capture_kinds; i++)
			activity_enable(capture_kinds[i], false);
		/* what the range produced reaches the ring before we say it ended */
		gt_cupti_flush(true);
		atomic_store(&gt_inj.capturing, 0);
	} else {
		atomic_store(&gt_inj.capturing, 1);
		for (i = 0; i < n_capture_kinds; i++)
			activity_enable(capture_kinds[i], true);
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
			pthread_mutex_unlock(&flush_lock);
			/* non-forced: completes full buffers and those with finished records only
			 */
			gt_cupti_flush(false);
			gt_collectors_flush(GT_FLUSH_PERIOD);
			gt_tsc_anchor();
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

/* Append c's callback and buffer-end hooks to the dispatch lists; false if a list is full. */
static bool hooks_add(const struct gt_collector *c)
{
	size_t n;

	for (unsigned d = 0; c->callback && d < GT_CB_DOMAINS; d++) {
		if (!(c->callback_domains & (1u << d)))
			continue;
		for (n = 0; cb_hooks[d][n]; n++)
			;
		if (n == GT_CB_HOOKS)
			return false;
		cb_hooks[d][n] = c->callback;
	}
	if (c->buffer_end) {
		for (n = 0; buffer_end_hooks[n]; n++)
			;
		if (n + 1 == sizeof(buffer_end_hooks) / sizeof(buffer_end_hooks[0]))
			return false;
		buffer_end_hooks[n] = c->buffer_end;
	}
	return true;
}

/* Take c's hooks off the dispatch lists again (its enable failed). */
static void hooks_remove(const struct gt_collector *c)
{
	for (unsigned d = 0; d < GT_CB_DOMAINS; d++)
		for (size_t n = 0; cb_hooks[d][n]; n++)
			if (cb_hooks[d][n] == c->callback) {
				for (; cb_hooks[d][n]; n++)
					cb_hooks[d][n] = cb_hooks[d][n + 1];
				break;
			}
	for (size_t n = 0; buffer_end_hooks[n]; n++)
		if (buffer_end_hooks[n] == c->buffer_end) {
			for (; buffer_end_hooks[n]; n++)
				buffer_end_hooks[n] = buffer_end_hooks[n + 1];
			break;
		}
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

	for (const struct gt_collector *const *cp = gt_collectors; *cp; cp++) {
		const struct gt_collector *c = *cp;
		const int *k;

		if (!gt_collector_on(c, cfg))
			continue;
		/* hooks before enable: CUPTI may call them as soon as it switches them on */
		if (!hooks_add(c)) {
			gt_debug("collector %s: no room for its hooks; left out", c->name);
			hooks_remove(c);
			continue;
		}
		if (c->enable) {
			/* > 0: CUPTI refused this collector, which is left out (the others still
			 * trace) unless it is required; < 0: the configuration does not need it */
			ret = c->enable(cfg);
			if (ret > 0 && c->required) {
				hooks_remove(c);
				*what = c->required;
				res = (CUptiResult)ret;
				goto fail;
			}
			if (ret > 0)
				gt_debug("collector %s: %s", c->name, gt_cupti_result_name(ret));
			if (ret != 0) {
				hooks_remove(c);
				continue;
			}
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
	if (cfg->capture == GT_CAPTURE_NONE)
		gt_cupti_set_capturing(true);
	else
		atomic_store(&gt_inj.capturing, 0);

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

int gt_cupti_enable_callback(unsigned domain, unsigned cbid, bool on)
{
	CUptiResult res = gt_cupti.cuptiEnableCallback(on ? 1u : 0u, subscriber,
	                                               (CUpti_CallbackDomain)domain, cbid);

	return res == CUPTI_SUCCESS ? 0 : (int)res;
}

int gt_cupti_enable_domain(unsigned domain, bool on)
{
	CUptiResult res =
	        gt_cupti.cuptiEnableDomain(on ? 1u : 0u, subscriber, (CUpti_CallbackDomain)domain);

	return res == CUPTI_SUCCESS ? 0 : (int)res;
}
