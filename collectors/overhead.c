/* Overhead collector: CUPTI's own overhead (CUPTI_ACTIVITY_KIND_OVERHEAD: buffer flushes,
 * instrumentation, lazy loading ...) -> GT_REC_OVERHEAD. Off by default (GPUTRACE_TRACE).
 * Runs inside the traced application, on CUPTI's buffer-completion thread. */
#include <cupti.h>

#include "collector.h"
#include "emit.h"

static uint32_t overhead_kind(unsigned k)
{
	switch (k) {
	case CUPTI_ACTIVITY_OVERHEAD_DRIVER_COMPILER:
		return GT_OVERHEAD_DRIVER_COMPILER;
	case CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH:
		return GT_OVERHEAD_BUFFER_FLUSH;
	case CUPTI_ACTIVITY_OVERHEAD_CUPTI_INSTRUMENTATION:
		return GT_OVERHEAD_INSTRUMENTATION;
	case CUPTI_ACTIVITY_OVERHEAD_CUPTI_RESOURCE:
		return GT_OVERHEAD_RESOURCE;
	case CUPTI_ACTIVITY_OVERHEAD_RUNTIME_TRIGGERED_MODULE_LOADING:
		return GT_OVERHEAD_RUNTIME_TRIGGERED_MODULE_LOADING;
	case CUPTI_ACTIVITY_OVERHEAD_LAZY_FUNCTION_LOADING:
		return GT_OVERHEAD_LAZY_FUNCTION_LOADING;
	case CUPTI_ACTIVITY_OVERHEAD_COMMAND_BUFFER_FULL:
		return GT_OVERHEAD_COMMAND_BUFFER_FULL;
	case CUPTI_ACTIVITY_OVERHEAD_ACTIVITY_BUFFER_REQUEST:
		return GT_OVERHEAD_ACTIVITY_BUFFER_REQUEST;
	default:
		return GT_OVERHEAD_UNKNOWN;
	}
}

static void overhead_activity(const void *rec)
{
	const CUpti_ActivityOverhead3 *o = rec;
	struct gt_rec_overhead r = {0};

	gt_hdr(&r.hdr, GT_REC_OVERHEAD, sizeof(r));
	r.start_ns = o->start;
	r.end_ns = o->end;
	r.kind = overhead_kind(o->overheadKind);
	if (o->objectKind == CUPTI_ACTIVITY_OBJECT_THREAD ||
	    o->objectKind == CUPTI_ACTIVITY_OBJECT_PROCESS) {
		r.object_kind = 1;
		r.object_id = o->objectId.pt.threadId;
	} else {
		r.object_kind = 2;
		r.object_id = o->objectId.dcs.deviceId;
	}
	gt_emit_wait(&r.hdr);
}

static const int overhead_kinds[] = {CUPTI_ACTIVITY_KIND_OVERHEAD, 0};

const struct gt_collector gt_collector_overhead = {
        .name = "overhead",
        .trace_bit = GT_TRACE_OVERHEAD,
        .kinds = overhead_kinds,
        .activity = overhead_activity,
};
