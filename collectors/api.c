/* API collector: runtime and driver API calls with correlation ids and return codes
 * -> GT_REC_API. The filter (launch/all/none) is applied inside CUPTI, one callback id at a
 * time, so filtered-out calls cost nothing. Records come from CUPTI's RUNTIME/DRIVER activity
 * records (default, measured cheaper: docs/collectors.md) or, with a capture range, from the
 * callback API with our own timestamps. Runs inside the traced application: callbacks on the
 * calling thread, activity parsing on CUPTI's buffer-completion thread. */
#include <stdlib.h>
#include <string.h>

#include <cupti.h>

#include "clock.h"
#include "collector.h"
#include "cupti-glue.h"
#include "cuptilib.h"
#include "emit.h"
#include "stack.h"

#define RT_SIZE  CUPTI_RUNTIME_TRACE_CBID_SIZE
#define DRV_SIZE CUPTI_DRIVER_TRACE_CBID_SIZE

/* Which callback ids are recorded, and their interned names (filled on first use). */
static bool want_rt[RT_SIZE], want_drv[DRV_SIZE];
static _Atomic uint32_t name_rt[RT_SIZE], name_drv[DRV_SIZE];
static bool use_callbacks;
/* Calls whose stack is recorded (GPUTRACE_BACKTRACE): a callback at their exit unwinds. */
static bool bt_rt[RT_SIZE], bt_drv[DRV_SIZE];

/* With activity records, the stack is taken in the call's exit callback and its record comes
 * later, on CUPTI's buffer thread: the stack id waits here, by correlation id. A slot is
 * overwritten by the call GT_API_STACKS correlation ids later, long after its record came. */
#define GT_API_STACKS 8192 /* power of two */
static _Atomic uint64_t corr_stack[GT_API_STACKS]; /* correlation id << 32 | stack id */

static uint32_t stack_of(uint32_t correlation_id)
{
	uint64_t v = atomic_load_explicit(&corr_stack[correlation_id & (GT_API_STACKS - 1)],
	                                  memory_order_relaxed);

	return v >> 32 == correlation_id ? (uint32_t)v : 0;
}

/* Runtime calls open on this thread: the runtime implements itself with driver calls, which
 * CUPTI reports too; those are the runtime call's internals, not calls of the application. */
static _Thread_local unsigned runtime_depth;

static bool *want_of(unsigned domain, unsigned cbid)
{
	if (domain == CUPTI_CB_DOMAIN_RUNTIME_API && cbid < RT_SIZE)
		return &want_rt[cbid];
	if (domain == CUPTI_CB_DOMAIN_DRIVER_API && cbid < DRV_SIZE)
		return &want_drv[cbid];
	return NULL;
}

static uint32_t name_of(unsigned domain, unsigned cbid, const char *known)
{
	_Atomic uint32_t *slot =
	        domain == CUPTI_CB_DOMAIN_RUNTIME_API ? &name_rt[cbid] : &name_drv[cbid];
	uint32_t id = atomic_load_explicit(slot, memory_order_relaxed);
	const char *name = known;

	if (id)
		return id;
	if (!name && gt_cupti.cuptiGetCallbackName((CUpti_CallbackDomain)domain, cbid, &name) !=
	                     CUPTI_SUCCESS)
		return GT_STRING_NONE;
	if (known) {
		id = gt_intern(name);
	} else {
		/* cuptiGetCallbackName names the versioned entry point ("cudaLaunchKernel_v7000",
		 * "cuMemAlloc_v2"): keep the name the application called, as callbacks report it,
		 * but keep a driver "_v2" (cuMemAlloc_v2 is a function of its own) */
		size_t len = strlen(name);
		const char *v = strrchr(name, '_');

		if (v && v[1] == 'v' && v[2] >= '0' && v[2] <= '9' &&
		    strspn(v + 2, "0123456789") == strlen(v + 2) && strlen(v + 2) >= 4)
			len = (size_t)(v - name);
		id = gt_intern_len(name, len);
	}
	/* racing threads intern the same string and get the same id: a plain store is enough */
	atomic_store_explicit(slot, id, memory_order_relaxed);
	return id;
}

/* Application thread, inside the CUDA call, guard held; outside capture ranges too. Called for
 * every runtime and driver callback our subscriber gets, capture.c's included. */
static void api_callback(unsigned domain, unsigned cbid, const void *data)
{
	const CUpti_CallbackData *cb = data;
	bool *w = want_of(domain, cbid);
	bool bt = gt_stack_on && (domain == CUPTI_CB_DOMAIN_RUNTIME_API ? bt_rt[cbid] : bt_drv[cbid]);
	uint32_t stack_id = 0;
	struct gt_rec_api r;

	if (!w || !*w || (!use_callbacks && !bt))
		return;
	if (domain == CUPTI_CB_DOMAIN_DRIVER_API) {
		if (runtime_depth)
			return;
	} else if (cb->callbackSite == CUPTI_API_ENTER) {
		runtime_depth++;
	} else if (runtime_depth) {
		runtime_depth--;
	}
	/* the nesting above is kept outside capture ranges too, so it stays balanced */
	if (!atomic_load_explicit(&gt_inj.capturing, memory_order_relaxed))
		return;
	if (cb->callbackSite == CUPTI_API_ENTER) {
		/* correlationData is CUPTI's per-call scratch word, handed back at exit */
		*cb->correlationData = gt_now_ns();
		return;
	}
	r.end_ns = gt_now_ns();
	r.start_ns = *cb->correlationData;
	if (!r.start_ns)
		return; /* entered before tracing started (capture range) */
	if (bt && r.end_ns - r.start_ns >= gt_inj.cfg.backtrace_min_ns)
		stack_id = gt_stack_capture();
	if (!use_callbacks) {
		if (stack_id)
			atomic_store_explicit(&corr_stack[cb->correlationId & (GT_API_STACKS - 1)],
			                      (uint64_t)cb->correlationId << 32 | stack_id,
			                      memory_order_relaxed);
		return;
	}
	gt_hdr(&r.hdr, GT_REC_API, sizeof(r));
	r.tid = gt_thread_id();
	r.correlation_id = cb->correlationId;
	r.cbid = cbid;
	r.name_id = name_of(domain, cbid, cb->functionName);
	/* cudaError_t and CUresult are both int-sized enums */
	r.return_code = cb->functionReturnValue ? *(const int *)cb->functionReturnValue : 0;
	r.domain = domain == CUPTI_CB_DOMAIN_RUNTIME_API ? GT_API_RUNTIME : GT_API_DRIVER;
	r.stack_id = stack_id;
	r._pad = 0;
	gt_emit_nowait(&r.hdr);
}

/* Activity records: CUPTI reports, besides each runtime call, the driver calls the runtime
 * makes inside it (cudaLaunchKernel -> cuLaunchKernel), each with its own record. A call's
 * record is written when it returns, so a nested driver record comes before its runtime
 * record in the same buffer. Driver records wait here until the next runtime record of their
 * thread, which drops those inside its interval, or until the end of the buffer; a driver call
 * the application made itself (Triton launches with cuLaunchKernel) is kept. Buffers are parsed
 * one at a time per thread, so the queue is per thread and needs no lock. */
#define GT_API_PENDING 32 /* power of two */

struct api_pending {
	struct gt_rec_api rec[GT_API_PENDING];
	unsigned head, count; /* oldest slot, slots in use */
};
/* Allocated on a buffer thread's first driver record (CUPTI's threads, not the application's):
 * as a thread-local array it would take the static TLS that a dlopen()ed library is short of. */
static _Thread_local struct api_pending *pending;

static void pending_emit_oldest(void)
{
	struct gt_rec_api *r = &pending->rec[pending->head];

	if (r->hdr.type == GT_REC_API) /* cleared when dropped as nested */
		gt_emit_wait(&r->hdr);
	pending->head = (pending->head + 1) & (GT_API_PENDING - 1);
	pending->count--;
}

/* End of an activity buffer: emit the driver API records held back while looking for the
 * runtime call they were made inside (CUPTI's buffer thread). */
static void api_buffer_end(void)
{
	while (pending && pending->count)
		pending_emit_oldest();
}

static void pending_add(struct gt_rec_api *r)
{
	if (!pending && !(pending = calloc(1, sizeof(*pending)))) {
		gt_emit_wait(&r->hdr); /* kept, though it may be a runtime call's internals */
		return;
	}
	if (pending->count == GT_API_PENDING)
		pending_emit_oldest();
	pending->rec[(pending->head + pending->count) & (GT_API_PENDING - 1)] = *r;
	pending->count++;
}

/* Drop the queued driver records of the same thread inside a runtime call's interval. */
static void pending_drop_nested(const struct gt_rec_api *rt)
{
	unsigned i;

	for (i = 0; pending && i < pending->count; i++) {
		struct gt_rec_api *d = &pending->rec[(pending->head + i) & (GT_API_PENDING - 1)];

		if (d->hdr.type == GT_REC_API && d->tid == rt->tid && d->start_ns >= rt->start_ns &&
		    d->end_ns <= rt->end_ns)
			d->hdr.type = GT_REC_NONE;
	}
}

static void api_activity(const void *rec)
{
	const CUpti_ActivityAPI *a = rec;
	unsigned domain = a->kind == CUPTI_ACTIVITY_KIND_RUNTIME ? CUPTI_CB_DOMAIN_RUNTIME_API
	                                                         : CUPTI_CB_DOMAIN_DRIVER_API;
	bool *w = want_of(domain, a->cbid);
	struct gt_rec_api r;

	if (!w || !*w)
		return;
	/* with a capture range: the calls that started inside one (their records may reach us
	 * after it stopped, and CUPTI writes them outside it too) */
	if (gt_inj.cfg.capture != GT_CAPTURE_NONE && !gt_cupti_in_capture(a->start))
		return;
	gt_meta_thread_seen(a->threadId);
	gt_hdr(&r.hdr, GT_REC_API, sizeof(r));
	r.start_ns = a->start;
	r.end_ns = a->end;
	r.tid = a->threadId;
	r.correlation_id = a->correlationId;
	r.cbid = a->cbid;
	r.name_id = name_of(domain, a->cbid, NULL);
	r.return_code = (int32_t)a->returnValue;
	r.domain = domain == CUPTI_CB_DOMAIN_RUNTIME_API ? GT_API_RUNTIME : GT_API_DRIVER;
	r.stack_id = gt_stack_on ? stack_of(a->correlationId) : 0;
	r._pad = 0;
	if (r.domain == GT_API_DRIVER) {
		pending_add(&r);
		return;
	}
	pending_drop_nested(&r);
	gt_emit_wait(&r.hdr);
}

/* Decide per callback id and switch it on inside CUPTI. */
static int enable_domain(const struct gt_envconf *cfg, unsigned domain, unsigned size,
                         unsigned *n_on)
{
	unsigned cbid;
	int ret = 0;

	for (cbid = 1; cbid < size; cbid++) {
		const char *name = NULL;
		bool on, bt;

		if (gt_cupti.cuptiGetCallbackName((CUpti_CallbackDomain)domain, cbid, &name) !=
		            CUPTI_SUCCESS ||
		    !name)
			continue;
		on = cfg->api_filter == GT_API_FILTER_ALL ||
		     (cfg->api_filter == GT_API_FILTER_LAUNCH && gt_envconf_api_is_launch(name));
		*want_of(domain, cbid) = on;
		if (!on)
			continue;
		(*n_on)++;
		bt = cfg->backtrace != GT_BACKTRACE_NONE &&
		     (cfg->backtrace_kinds & gt_envconf_backtrace_kind(name));
		if (domain == CUPTI_CB_DOMAIN_RUNTIME_API)
			bt_rt[cbid] = bt;
		else
			bt_drv[cbid] = bt;
		if (cfg->api_source == GT_API_SOURCE_CALLBACK || bt)
			ret = gt_cupti_enable_callback(domain, cbid, true);
		if (!ret && cfg->api_source != GT_API_SOURCE_CALLBACK &&
		    cfg->api_filter != GT_API_FILTER_ALL)
			ret = gt_cupti_enable_api_activity(domain, cbid);
		if (ret)
			return ret;
	}
	return 0;
}

static int api_enable(const struct gt_envconf *cfg)
{
	unsigned n_rt = 0, n_drv = 0;
	int ret;

	if (cfg->api_filter == GT_API_FILTER_NONE)
		return -1;
	use_callbacks = cfg->api_source == GT_API_SOURCE_CALLBACK;
	ret = enable_domain(cfg, CUPTI_CB_DOMAIN_RUNTIME_API, RT_SIZE, &n_rt);
	if (!ret)
		ret = enable_domain(cfg, CUPTI_CB_DOMAIN_DRIVER_API, DRV_SIZE, &n_drv);
	if (!ret && !use_callbacks && cfg->api_filter == GT_API_FILTER_ALL) {
		ret = gt_cupti_enable_kind(CUPTI_ACTIVITY_KIND_RUNTIME);
		if (!ret)
			ret = gt_cupti_enable_kind(CUPTI_ACTIVITY_KIND_DRIVER);
	}
	gt_debug("api: %u runtime and %u driver calls traced through %s", n_rt, n_drv,
	         use_callbacks ? "callbacks" : "activity records");
	return ret;
}

/* Negative kinds: dispatched to us, but enabled above per callback id, never as a whole. */
static const int api_kinds[] = {-CUPTI_ACTIVITY_KIND_RUNTIME, -CUPTI_ACTIVITY_KIND_DRIVER, 0};

const struct gt_collector gt_collector_api = {
        .name = "api",
        .trace_bit = GT_TRACE_API,
        .kinds = api_kinds,
        .enable = api_enable,
        .activity = api_activity,
        .buffer_end = api_buffer_end,
        .callback_domains = 1u << CUPTI_CB_DOMAIN_RUNTIME_API | 1u << CUPTI_CB_DOMAIN_DRIVER_API,
        .callback = api_callback,
};
