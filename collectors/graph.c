/* Graph collector: by default one GT_REC_GRAPH per CUDA graph launch
 * (CUPTI_ACTIVITY_KIND_GRAPH_TRACE); with GPUTRACE_GRAPH=node the graph-level kind stays off
 * and every node arrives as its own kernel/memcpy/memset record carrying graph and node ids.
 * Runs inside the traced application, on CUPTI's buffer-completion thread. */
#include <cupti.h>

#include "collector.h"
#include "emit.h"

static void graph_activity(const void *rec)
{
	const CUpti_ActivityGraphTrace2 *g = rec;
	struct gt_rec_graph r = {0};

	gt_hdr(&r.hdr, GT_REC_GRAPH, sizeof(r));
	r.span.start_ns = g->start;
	r.span.end_ns = g->end;
	r.span.correlation_id = g->correlationId;
	r.span.device_id = g->deviceId;
	r.span.context_id = g->contextId;
	r.span.stream_id = g->streamId;
	r.graph_id = g->graphId;
	gt_emit_wait(&r.hdr);
}

static const int graph_kinds[] = {CUPTI_ACTIVITY_KIND_GRAPH_TRACE, 0};

/* Node level: GRAPH_TRACE stays off, so CUPTI reports each node through the other collectors. */
static int graph_enable(const struct gt_envconf *cfg)
{
	return cfg->graph_nodes ? -1 : 0;
}

const struct gt_collector gt_collector_graph = {
        .name = "graph",
        .trace_bit = GT_TRACE_GRAPH,
        .kinds = graph_kinds,
        .enable = graph_enable,
        .activity = graph_activity,
};
