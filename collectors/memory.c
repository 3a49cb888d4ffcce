/* Memory collector: allocations and frees (CUPTI_ACTIVITY_KIND_MEMORY2, stream-ordered
 * cudaMallocAsync/cudaFreeAsync included) -> GT_REC_MEMORY, and memory pools
 * (CUPTI_ACTIVITY_KIND_MEMORY_POOL) -> GT_REC_MEMORY_POOL.
 * Runs inside the traced application, on CUPTI's buffer-completion thread. */
#include <cupti.h>

#include "collector.h"
#include "emit.h"

static void memory2(const CUpti_ActivityMemory4 *m)
{
	struct gt_rec_memory r = {0};

	if (m->memoryOperationType != CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION &&
	    m->memoryOperationType != CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE)
		return;
	gt_hdr(&r.hdr, GT_REC_MEMORY, sizeof(r));
	r.ts_ns = m->timestamp;
	r.address = m->address;
	r.bytes = m->bytes;
	if (m->memoryPoolConfig.memoryPoolType != CUPTI_ACTIVITY_MEMORY_POOL_TYPE_INVALID)
		r.pool_address = m->memoryPoolConfig.address;
	r.correlation_id = m->correlationId;
	r.device_id = m->deviceId;
	r.context_id = m->contextId;
	r.stream_id = m->isAsync ? m->streamId : 0;
	r.op = m->memoryOperationType == CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION
	               ? GT_MEMORY_ALLOC
	               : GT_MEMORY_FREE;
	r.mem_kind = gt_mem_kind_from_cupti(m->memoryKind);
	if (m->isAsync)
		r.flags |= GT_MEMORY_ASYNC;
	gt_emit_wait(&r.hdr);
}

static void memory_pool(const CUpti_ActivityMemoryPool3 *p)
{
	struct gt_rec_memory_pool r = {0};

	gt_hdr(&r.hdr, GT_REC_MEMORY_POOL, sizeof(r));
	r.ts_ns = p->timestamp;
	r.address = p->address;
	r.reserved_bytes = p->size;
	r.release_threshold_bytes = p->releaseThreshold;
	r.correlation_id = p->correlationId;
	r.device_id = p->deviceId;
	switch (p->memoryPoolOperationType) {
	case CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_CREATED:
		r.op = GT_POOL_CREATED;
		break;
	case CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_DESTROYED:
		r.op = GT_POOL_DESTROYED;
		break;
	case CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_TRIMMED:
		r.op = GT_POOL_TRIMMED;
		break;
	default:
		return;
	}
	r.pool_type = p->memoryPoolType;
	gt_emit_wait(&r.hdr);
}

static void memory_activity(const void *rec)
{
	const CUpti_Activity *a = rec;

	if (a->kind == CUPTI_ACTIVITY_KIND_MEMORY2)
		memory2(rec);
	else
		memory_pool(rec);
}

static const int memory_kinds[] = {CUPTI_ACTIVITY_KIND_MEMORY2, CUPTI_ACTIVITY_KIND_MEMORY_POOL, 0};

const struct gt_collector gt_collector_memory = {
        .name = "memory",
        .trace_bit = GT_TRACE_MEMORY,
        .kinds = memory_kinds,
        .activity = memory_activity,
};
