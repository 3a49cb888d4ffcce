/* The table of collectors, and the flush and fork hooks run through it. A new collector is
 * its file, its line in collectors/meson.build and its entry here (and in collector.h).
 * Runs inside the traced application: the flush thread, the exit flush, a fork()ed child. */
#include <stddef.h>

#include "collector.h"
#include "emit.h"

/* The order hooks run in: metadata first (its kinds are enabled before any other), capture
 * before api (a capture range's switch is seen by the API callback of the same call). */
const struct gt_collector *const gt_collectors[] = {
        &gt_collector_meta,   &gt_collector_capture,  &gt_collector_kernel, &gt_collector_memcpy,
        &gt_collector_memset, &gt_collector_memory,   &gt_collector_api,    &gt_collector_sync,
        &gt_collector_graph,  &gt_collector_overhead, &gt_collector_nvtx,
        &gt_collector_gpumetrics, NULL,
};

bool gt_collector_on(const struct gt_collector *c, const struct gt_envconf *cfg)
{
	return !c->trace_bit || (cfg->trace & c->trace_bit);
}

void gt_collectors_flush(enum gt_flush_why why)
{
	for (const struct gt_collector *const *c = gt_collectors; *c; c++)
		if ((*c)->flush && gt_collector_on(*c, &gt_inj.cfg))
			(*c)->flush(why);
}

void gt_collectors_fork_child(void)
{
	for (const struct gt_collector *const *c = gt_collectors; *c; c++)
		if ((*c)->fork_child)
			(*c)->fork_child();
}
