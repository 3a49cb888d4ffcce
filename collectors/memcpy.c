/* Memcpy collector: CUPTI_ACTIVITY_KIND_MEMCPY (every copy kind) and MEMCPY2 (peer-to-peer,
 * with source and destination devices) -> GT_REC_MEMCPY.
 * Runs inside the traced application, on CUPTI's buffer-completion thread. */
#include <cupti.h>

#include "collector.h"
#include "emit.h"

/* CUPTI's enums are mapped one by one: our values are a file format, theirs may grow. */
static uint32_t copy_kind(unsigned k)
{
	switch (k) {
	case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
		return GT_MEMCPY_HTOD;
	case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
		return GT_MEMCPY_DTOH;
	case CUPTI_ACTIVITY_MEMCPY_KIND_HTOA:
		return GT_MEMCPY_HTOA;
	case CUPTI_ACTIVITY_MEMCPY_KIND_ATOH:
		return GT_MEMCPY_ATOH;
	case CUPTI_ACTIVITY_MEMCPY_KIND_ATOA:
		return GT_MEMCPY_ATOA;
	case CUPTI_ACTIVITY_MEMCPY_KIND_ATOD:
		return GT_MEMCPY_ATOD;
	case CUPTI_ACTIVITY_MEMCPY_KIND_DTOA:
		return GT_MEMCPY_DTOA;
	case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
		return GT_MEMCPY_DTOD;
	case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH:
		return GT_MEMCPY_HTOH;
	case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP:
		return GT_MEMCPY_PTOP;
	default:
		return GT_MEMCPY_UNKNOWN;
	}
}

uint32_t gt_mem_kind_from_cupti(unsigned k)
{
	switch (k) {
	case CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE:
		return GT_MEM_PAGEABLE;
	case CUPTI_ACTIVITY_MEMORY_KIND_PINNED:
		return GT_MEM_PINNED;
	case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE:
		return GT_MEM_DEVICE;
	case CUPTI_ACTIVITY_MEMORY_KIND_ARRAY:
		return GT_MEM_ARRAY;
	case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED:
		return GT_MEM_MANAGED;
	case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE_STATIC:
		return GT_MEM_DEVICE_STATIC;
	case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED_STATIC:
		return GT_MEM_MANAGED_STATIC;
	default:
		return GT_MEM_UNKNOWN;
	}
}

static void memcpy_activity(const void *rec)
{
	const CUpti_Activity *a = rec;
	struct gt_rec_memcpy r = {0};

	gt_hdr(&r.hdr, GT_REC_MEMCPY, sizeof(r));
	if (a->kind == CUPTI_ACTIVITY_KIND_MEMCPY) {
		const CUpti_ActivityMemcpy6 *m = rec;

		r.span.start_ns = m->start;
		r.span.end_ns = m->end;
		r.span.correlation_id = m->correlationId;
		r.span.device_id = m->deviceId;
		r.span.context_id = m->contextId;
		r.span.stream_id = m->streamId;
		r.bytes = m->bytes;
		r.graph_node_id = m->graphNodeId;
		r.copy_kind = copy_kind(m->copyKind);
		r.src_kind = gt_mem_kind_from_cupti(m->srcKind);
		r.dst_kind = gt_mem_kind_from_cupti(m->dstKind);
		r.src_device = m->deviceId;
		r.dst_device = m->deviceId;
		r.graph_id = m->graphId;
		if (m->flags & CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC)
			r.flags |= GT_COPY_ASYNC;
	} else {
		const CUpti_ActivityMemcpyPtoP4 *m = rec;

		r.span.start_ns = m->start;
		r.span.end_ns = m->end;
		r.span.correlation_id = m->correlationId;
		r.span.device_id = m->deviceId;
		r.span.context_id = m->contextId;
		r.span.stream_id = m->streamId;
		r.bytes = m->bytes;
		r.graph_node_id = m->graphNodeId;
		r.copy_kind = GT_MEMCPY_PTOP;
		r.src_kind = gt_mem_kind_from_cupti(m->srcKind);
		r.dst_kind = gt_mem_kind_from_cupti(m->dstKind);
		r.src_device = m->srcDeviceId;
		r.dst_device = m->dstDeviceId;
		r.graph_id = m->graphId;
		if (m->flags & CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC)
			r.flags |= GT_COPY_ASYNC;
	}
	gt_emit_wait(&r.hdr);
}

static const int memcpy_kinds[] = {CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMCPY2, 0};

const struct gt_collector gt_collector_memcpy = {
        .name = "memcpy",
        .trace_bit = GT_TRACE_MEMCPY,
        .kinds = memcpy_kinds,
        .activity = memcpy_activity,
};
