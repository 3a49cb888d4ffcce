/* Capture ranges: with GPUTRACE_CAPTURE_RANGE=cudaProfilerApi, GPU activity is recorded only
 * between cudaProfilerStart and cudaProfilerStop (or their driver twins); with nvtx:NAME, only
 * inside NVTX ranges whose message is NAME. Also the forced flush at cudaDeviceReset, which
 * would otherwise take the context's unflushed records with it.
 * Runs inside the traced application, on the threads that make those calls. */
#include <pthread.h>
#include <string.h>

#include <cupti.h>

#include "clock.h"
#include "collector.h"
#include "cupti-glue.h"
#include "emit.h"

/* Serializes range transitions (rare: never on a launch path). */
static pthread_mutex_t capture_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned nvtx_open; /* nesting of NAME ranges, under capture_lock */
/* 1 while this thread holds capture_lock: an NVTX call from a signal handler that interrupts
 * it must not wait for the lock its own thread holds */
static __thread bool in_capture __attribute__((tls_model("initial-exec")));

/* Take capture_lock, unless this thread is already taking, holding or releasing it (a signal
 * handler interrupted it there): false then, and the caller changes nothing. The flag covers
 * the lock and unlock calls themselves: a handler inside either must not lock. */
static bool capture_enter(void)
{
	if (in_capture)
		return false;
	in_capture = true;
	atomic_signal_fence(memory_order_seq_cst);
	pthread_mutex_lock(&capture_lock);
	return true;
}

static void capture_leave(void)
{
	pthread_mutex_unlock(&capture_lock);
	atomic_signal_fence(memory_order_seq_cst);
	in_capture = false;
}

static void notice(unsigned code)
{
	struct gt_rec_notice r;

	gt_notice_fill(&r, GT_NOTICE_INFO, code, 0,
	               code == GT_NOTICE_CAPTURE_START ? "capture range started"
	                                               : "capture range stopped");
	gt_emit_nowait(&r.hdr);
}

static void set_capture(bool on)
{
	/* nothing to switch once tracing has ended (exit, detach) or in a fork()ed child */
	if (!atomic_load(&gt_inj.active) || !!atomic_load(&gt_inj.capturing) == on)
		return;
	if (on) {
		gt_cupti_set_capturing(true);
		notice(GT_NOTICE_CAPTURE_START);
	} else {
		notice(GT_NOTICE_CAPTURE_STOP);
		gt_cupti_set_capturing(false);
	}
}

/* The callbacks capture ranges need: device reset always, profiler start/stop for
 * cudaProfilerApi. 0 or the CUptiResult. */
static int capture_enable(const struct gt_envconf *cfg)
{
	static const unsigned profiler_rt[] = {CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000,
	                                       CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000};
	static const unsigned profiler_drv[] = {CUPTI_DRIVER_TRACE_CBID_cuProfilerStart,
	                                        CUPTI_DRIVER_TRACE_CBID_cuProfilerStop};
	unsigned i;
	int ret;

	ret = gt_cupti_enable_callback(CUPTI_CB_DOMAIN_RUNTIME_API,
	                               CUPTI_RUNTIME_TRACE_CBID_cudaDeviceReset_v3020, true);
	if (ret)
		return ret;
	if (cfg->capture != GT_CAPTURE_PROFILER_API)
		return 0;
	for (i = 0; i < 2; i++) {
		ret = gt_cupti_enable_callback(CUPTI_CB_DOMAIN_RUNTIME_API, profiler_rt[i], true);
		if (!ret)
			ret = gt_cupti_enable_callback(CUPTI_CB_DOMAIN_DRIVER_API, profiler_drv[i],
			                               true);
		if (ret)
			return ret;
	}
	return 0;
}

/* Application thread, inside a CUDA call, guard held. */
static void capture_callback(unsigned domain, unsigned cbid, const void *data)
{
	const CUpti_CallbackData *cb = data;
	bool rt = domain == CUPTI_CB_DOMAIN_RUNTIME_API;

	if (rt && cbid == CUPTI_RUNTIME_TRACE_CBID_cudaDeviceReset_v3020) {
		if (cb->callbackSite == CUPTI_API_ENTER)
			gt_cupti_flush(true);
		return;
	}
	if (gt_inj.cfg.capture != GT_CAPTURE_PROFILER_API)
		return;
	if ((rt && cbid == CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000) ||
	    (!rt && cbid == CUPTI_DRIVER_TRACE_CBID_cuProfilerStart)) {
		if (cb->callbackSite == CUPTI_API_EXIT && capture_enter()) {
			set_capture(true);
			capture_leave();
		}
	} else if ((rt && cbid == CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000) ||
	           (!rt && cbid == CUPTI_DRIVER_TRACE_CBID_cuProfilerStop)) {
		if (cb->callbackSite == CUPTI_API_ENTER && capture_enter()) {
			set_capture(false);
			capture_leave();
		}
	}
}

/* NVTX handler thread: a range was opened or closed; cheap unless the message matches. True
 * when the range counted in the capture's nesting (its close must then be reported too);
 * false when tracing has ended, or for a signal handler's range that interrupted its own
 * thread's transition. */
bool gt_capture_nvtx(const char *message, bool open)
{
	if (gt_inj.cfg.capture != GT_CAPTURE_NVTX || !message ||
	    strcmp(message, gt_inj.cfg.capture_name) != 0 || !atomic_load(&gt_inj.active) ||
	    !capture_enter())
		return false;
	if (open) {
		if (nvtx_open++ == 0)
			set_capture(true);
	} else if (nvtx_open > 0 && --nvtx_open == 0) {
		set_capture(false);
	}
	capture_leave();
	return true;
}

/* In a fork()ed child: another thread of the parent may have held the lock at the fork. The
 * child records nothing (tracing is off there), so the lock and nesting start afresh. */
static void capture_fork_child(void)
{
	pthread_mutex_init(&capture_lock, NULL);
	nvtx_open = 0;
	in_capture = false;
}

const struct gt_collector gt_collector_capture = {
        .name = "capture",
        .trace_bit = 0, /* always on: the forced flush at cudaDeviceReset is needed by all */
        .enable = capture_enable,
        .required = "cuptiEnableCallback(capture)",
        .callback_domains = 1u << CUPTI_CB_DOMAIN_RUNTIME_API | 1u << CUPTI_CB_DOMAIN_DRIVER_API,
        .callback = capture_callback,
        .fork_child = capture_fork_child,
};
