/* The GPU metric sets of PM sampling (docs/gpu-metrics.md): per GPU architecture, which CUPTI
 * metrics make up each of our metrics, in which unit. Pure data and lookups: runs inside the
 * traced application (the sampler thread) and in the tests that check the sets against
 * CUPTI's profiler host API. */
#ifndef GT_COLLECTORS_GPUMETRICS_SETS_H
#define GT_COLLECTORS_GPUMETRICS_SETS_H

#include <stddef.h>
#include <stdint.h>

#include "envconf.h" /* enum gt_gm_set */

struct gt_gm_def {
	const char *name; /* "SMs Active" */
	const char
	        *metric;  /* CUPTI's name, "sm__cycles_active.avg.pct_of_peak_sustained_elapsed" */
	const char *unit; /* "%" or "bytes/s" */
	uint32_t scale;   /* raw value = CUPTI's value * scale, rounded */
};

/* The architecture a chip name ("GH100", from cuptiDeviceGetChipName) belongs to:
 * "Hopper", "Ampere", "Ada", "Blackwell"; NULL when we have no set for it. */
const char *gt_gm_arch(const char *chip);

/* The metrics of `set` for `chip`, up to max of them into defs; returns how many (0: none
 * for this chip). */
size_t gt_gm_set_for_chip(const char *chip, unsigned set, const struct gt_gm_def **defs,
                          size_t max);

/* Why a CUPTI result (CUptiResult's number) keeps a GPU from being sampled: enum
 * gt_gpu_metrics_reason. */
unsigned gt_gm_reason_of(int cupti_result);

/* The notice's text for device dev not sampled for `reason`: "GPU metrics of device 0 not
 * sampled: <reason> (<what>: <cupti_error>)", and for no permission how to allow it. For
 * GT_GM_REFUSED, what names the metrics left out: "GPU metrics of device 0 sampled without
 * <what>: <reason> (cuptiProfilerHostConfigAddMetrics: <cupti_error>)". what and cupti_error
 * may be NULL. Into buf (bytes > 0); returns buf. */
char *gt_gm_notice_text(char *buf, size_t bytes, uint32_t dev, unsigned reason, const char *what,
                        const char *cupti_error);

#endif /* GT_COLLECTORS_GPUMETRICS_SETS_H */
