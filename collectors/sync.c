/* Synchronization collector: CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (stream, event and context
 * synchronization, stream waits) -> GT_REC_SYNC, the host-side wait interval.
 * Runs inside the traced application, on CUPTI's buffer-completion thread. */
#include <cupti.h>

#include "collector.h"
#include "emit.h"

static void sync_activity(const void *rec)
{
	const CUpti_ActivitySynchronization2 *s = rec;
	struct gt_rec_sync r = {0};

	gt_hdr(&r.hdr, GT_REC_SYNC, sizeof(r));
	r.span.start_ns = s->start;
	r.span.end_ns = s->end;
	r.span.correlation_id = s->correlationId;
	r.span.context_id = s->contextId;
	r.span.device_id = gt_meta_context_device(s->contextId);
	/* CUPTI uses all ones for "no stream" (context synchronization) */
	r.span.stream_id = s->streamId == UINT32_MAX ? 0 : s->streamId;
	switch (s->type) {
	case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE:
		r.kind = GT_SYNC_EVENT;
		break;
	case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT:
		r.kind = GT_SYNC_STREAM_WAIT;
		break;
	case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE:
		r.kind = GT_SYNC_STREAM;
		break;
	case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE:
		r.kind = GT_SYNC_CONTEXT;
		break;
	default:
		r.kind = GT_SYNC_UNKNOWN;
		break;
	}
	r.event_id = s->cudaEventId == UINT32_MAX ? 0 : s->cudaEventId;
	/* CUPTI's record carries no thread; stats join it to the API call by correlation id */
	r.tid = 0;
	gt_emit_wait(&r.hdr);
}

static const int sync_kinds[] = {CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, 0};

const struct gt_collector gt_collector_sync = {
        .name = "sync",
        .trace_bit = GT_TRACE_SYNC,
        .kinds = sync_kinds,
        .activity = sync_activity,
};
