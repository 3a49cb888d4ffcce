/* GPU metrics of a trace (PM sampling, docs/gpu-metrics.md): which metrics each GPU was
 * sampled for, in which unit, by which process, learnt from GPU_METRIC records, so that every
 * output reads a GPU_SAMPLE record's values alike. Runs in the CLI; memory grows with the
 * number of GPUs, never with the number of samples. */
#ifndef GPUTRACE_EXPORTERS_GPUMETRICS_H
#define GPUTRACE_EXPORTERS_GPUMETRICS_H

#include <stdbool.h>
#include <stdint.h>

#include "catalog.h"
#include "gputrace/record.h"

struct gt_gm_metric {
	uint32_t name_id;     /* string: "SMs Active"; 0: the metric is not described */
	uint32_t metric_id;   /* string: CUPTI's name */
	uint32_t unit_id;     /* string: "%" or "bytes/s" */
	uint32_t scale;       /* value = raw / scale; >= 1 */
	uint32_t sampler_pid; /* the process that sampled it, as the trace records it */
	uint64_t interval_ns;
};

/* One GPU's metrics, by catalog GPU index. */
struct gt_gm_gpu {
	struct gt_gm_metric m[GT_GPU_METRICS_MAX];
	uint32_t nmetrics; /* 1 + the highest index described; 0: none */
	uint64_t samples;  /* GPU_SAMPLE records read for it */
};

struct gt_gm {
	struct gt_gm_gpu **gpus; /* by catalog GPU index; NULL entries: never sampled; owned */
	uint32_t cap;
};

void gt_gm_init(struct gt_gm *gm);
void gt_gm_fini(struct gt_gm *gm);

/* Learn from a record after the catalog observed it: GPU_METRIC describes a metric,
 * GPU_SAMPLE counts a sample; others are ignored. Returns 0 or -ENOMEM. */
int gt_gm_observe(struct gt_gm *gm, struct gt_catalog *cat, const union gt_record *rec);

/* The GPU a sample or metric record of pid's device belongs to, with its metrics; NULL when
 * none was described for it (or -ENOMEM in the catalog). *gpu_out gets the catalog GPU. */
struct gt_gm_gpu *gt_gm_gpu(struct gt_gm *gm, struct gt_catalog *cat, uint32_t pid,
                            uint32_t device_id, const struct gt_catalog_gpu **gpu_out);

/* Value of metric i of a sample in its unit; false when the metric is not described or the
 * sample has no value i. */
bool gt_gm_value(const struct gt_gm_gpu *g, const struct gt_rec_gpu_sample *s, unsigned i,
                 double *value);

/* Write metric i's value of sample s at p, exactly ("42.125": the raw value divided by a
 * power-of-ten scale, trailing zeros dropped; otherwise %.6g); p has room for 32 bytes.
 * Returns the end, or p when the sample has no such value. */
char *gt_gm_fmt(char *p, const struct gt_gm_gpu *g, const struct gt_rec_gpu_sample *s, unsigned i);

#endif /* GPUTRACE_EXPORTERS_GPUMETRICS_H */
