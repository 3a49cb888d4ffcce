/* Internal to stats across ranks (rankstats.c collects, rankstats-output.c writes): a group's
 * per-name tables and the maps that find groups. Runs in the CLI. */
#ifndef GPUTRACE_EXPORTERS_RANKSTATS_INT_H
#define GPUTRACE_EXPORTERS_RANKSTATS_INT_H

#include "idmap.h"
#include "rankstats.h"
#include "stats-int.h"

/* What `gputrace stats` keeps per name, for one group. */
struct rs_tables {
	struct gt_stat_table kernels, api, nvtx; /* kernels: by name as recorded (mangled) */
	struct gt_xfer_stats memcpy[GT_MEMCPY_MAX];
	struct gt_xfer_stats memset[GT_MEM_MAX];
};

struct rs_priv {
	struct gt_idmap groups; /* group key -> index + 1 (rankstats.c's KEY_*) */
	char **hosts;           /* distinct host names, owned */
	size_t nhosts, caphosts;
	struct gt_idmap gpus; /* uuid (or input and GPU without one) -> global GPU + 1 */
	uint32_t ngpus;       /* global GPUs */
	struct gt_idmap
	        set_inputs; /* (group, global GPU) -> the input its busy time came from + 1 */
	char *step_name;    /* owned copy of opts.step_name */
};

#endif /* GPUTRACE_EXPORTERS_RANKSTATS_INT_H */
