/* The CUPTI glue (cupti.c, cuptilib.c) as the rest of the library sees it: loading CUPTI,
 * subscribing and dispatching to the collectors, flushing, capture-range switching, and
 * switching a callback or a callback domain on. (Not "cupti.h", which would hide the
 * toolkit's header of that name.) Runs inside the traced application. */
#ifndef GT_COLLECTORS_CUPTI_GLUE_H
#define GT_COLLECTORS_CUPTI_GLUE_H

#include <stdbool.h>
#include <stdint.h>

/* Load libcupti (dlopen with a search list). Returns 0, or -ENOENT with *why describing where
 * it looked. */
int gt_cupti_load(const char **why);

/* Subscribe, register buffers and the timestamp clock, enable every collector that is on
 * (collector.h), start dispatching to them. Returns 0, or the failing CUptiResult as a
 * positive number with *what naming the call. The thread calling cuInit. */
int gt_cupti_start(const char **what);

/* Forced (or not) flush of every CUPTI buffer. Any thread but CUPTI's. */
void gt_cupti_flush(bool forced);

/* The periodic flush thread (GPUTRACE_FLUSH_MS): CUPTI's buffers, the collectors' flush hooks,
 * the TSC clock's anchor. Start once the client is open: returns 0 (also when the period is
 * 0) or -errno. Stop is bounded and idempotent. */
int gt_flush_start(void);
void gt_flush_stop(void);

/* Stop the flush thread, forced flush, dropped-record accounting. At exit. */
void gt_cupti_stop(void);

/* Enable or disable every configured activity kind (capture ranges). */
void gt_cupti_set_capturing(bool on);
/* Whether ts_ns (trace clock) lies inside a capture range; always true without one. CUPTI's
 * buffer thread: for records that CUPTI cannot switch with the range. */
bool gt_cupti_in_capture(uint64_t ts_ns);

/* Enable or disable one callback, or a whole callback domain, on our subscriber. Returns 0
 * or the CUptiResult. From a collector's enable hook (or a capture-range switch). What a
 * collector's enable switches on through these calls is switched off again if that enable
 * fails (the collector is left out). */
int gt_cupti_enable_callback(unsigned domain, unsigned cbid, bool on);
int gt_cupti_enable_domain(unsigned domain, bool on);

/* Switch on API activity records for one callback id of the runtime or driver domain
 * (cuptiActivityEnableRuntimeApi/DriverApi), or a whole activity kind. 0 or the CUptiResult;
 * from a collector's enable hook, undone as above. */
int gt_cupti_enable_api_activity(unsigned domain, unsigned cbid);
int gt_cupti_enable_kind(int kind);

/* Name of a CUptiResult (never NULL). */
const char *gt_cupti_result_name(int res);

#endif /* GT_COLLECTORS_CUPTI_GLUE_H */
