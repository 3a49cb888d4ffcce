/* Memset collector: CUPTI_ACTIVITY_KIND_MEMSET -> GT_REC_MEMSET.
 * Runs inside the traced application, on CUPTI's buffer-completion thread. */
#include <cupti.h>

#include "collector.h"
#include "emit.h"

static void memset_activity(const void *rec)
{
	const CUpti_ActivityMemset4 *m = rec;
	struct gt_rec_memset r = {0};

	gt_hdr(&r.hdr, GT_REC_MEMSET, sizeof(r));
	r.span.start_ns = m->start;
	r.span.end_ns = m->end;
	r.span.correlation_id = m->correlationId;
	r.span.device_id = m->deviceId;
	r.span.context_id = m->contextId;
	r.span.stream_id = m->streamId;
	r.bytes = m->bytes;
	r.graph_node_id = m->graphNodeId;
	r.value = m->value;
	r.mem_kind = gt_mem_kind_from_cupti(m->memoryKind);
	r.graph_id = m->graphId;
	if (m->flags & CUPTI_ACTIVITY_FLAG_MEMSET_ASYNC)
		r.flags |= GT_COPY_ASYNC;
	gt_emit_wait(&r.hdr);
}

static const int memset_kinds[] = {CUPTI_ACTIVITY_KIND_MEMSET, 0};

const struct gt_collector gt_collector_memset = {
        .name = "memset",
        .trace_bit = GT_TRACE_MEMSET,
        .kinds = memset_kinds,
        .activity = memset_activity,
};
