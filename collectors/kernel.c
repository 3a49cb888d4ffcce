/* Kernel collector: CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL records (never KIND_KERNEL, which
 * serializes kernels) -> GT_REC_KERNEL, with the mangled name interned as CUPTI reports it.
 * Runs inside the traced application, on CUPTI's buffer-completion thread. */
#include <cupti.h>

#include "collector.h"
#include "emit.h"

static void kernel_activity(const void *rec)
{
	const CUpti_ActivityKernel10 *k = rec;
	struct gt_rec_kernel r = {0};

	gt_hdr(&r.hdr, GT_REC_KERNEL, sizeof(r));
	r.span.start_ns = k->start;
	r.span.end_ns = k->end;
	r.span.correlation_id = k->correlationId;
	r.span.device_id = k->deviceId;
	r.span.context_id = k->contextId;
	r.span.stream_id = k->streamId;
	r.graph_node_id = k->graphNodeId;
	r.name_id = gt_intern(k->name);
	/* CUPTI reports dimensions as int32_t; they are never negative */
	r.grid_x = (uint32_t)k->gridX;
	r.grid_y = (uint32_t)k->gridY;
	r.grid_z = (uint32_t)k->gridZ;
	r.block_x = (uint32_t)k->blockX;
	r.block_y = (uint32_t)k->blockY;
	r.block_z = (uint32_t)k->blockZ;
	r.cluster_x = k->clusterX;
	r.cluster_y = k->clusterY;
	r.cluster_z = k->clusterZ;
	r.registers = k->registersPerThread;
	r.static_smem_bytes = (uint32_t)k->staticSharedMemory;
	r.dynamic_smem_bytes = (uint32_t)k->dynamicSharedMemory;
	r.local_mem_bytes = k->localMemoryPerThread;
	r.graph_id = k->graphId;
	if (k->launchType == CUPTI_ACTIVITY_LAUNCH_TYPE_COOPERATIVE_SINGLE_DEVICE ||
	    k->launchType == CUPTI_ACTIVITY_LAUNCH_TYPE_COOPERATIVE_MULTI_DEVICE)
		r.flags |= GT_KERNEL_COOPERATIVE;
	gt_emit_wait(&r.hdr);
}

static const int kernel_kinds[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, 0};

const struct gt_collector gt_collector_kernel = {
        .name = "kernel",
        .trace_bit = GT_TRACE_KERNEL,
        .kinds = kernel_kinds,
        .activity = kernel_activity,
};
