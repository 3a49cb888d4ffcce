/* gputrace report: one self-contained HTML page over one trace or the per-rank traces of a
 * job - what the traces hold, GPU busy time and device memory in use over time per GPU, the
 * time of each step per rank, the top kernels, GPU time per NVTX range and advise's findings -
 * with inline SVG plots and no resource from outside the file. Memory grows with GPUs x time
 * buckets, distinct names, steps and NVTX range instances, never with the number of events.
 * Runs in the CLI. Rules: docs/report.md. */
#ifndef GPUTRACE_REPORT_H
#define GPUTRACE_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "gputrace/trace.h"

#define GT_REPORT_BUCKETS 200u /* time buckets of the busy and memory plots, per trace */
#define GT_REPORT_TOP     20u  /* kernels and NVTX ranges shown, per trace */

struct gt_report_options {
	const char *step_name; /* --step NAME; NULL: detect (exporters/model/steps.h); borrowed */
	bool mangled;          /* keep kernel names as CUPTI reported them */
	bool all_steps;        /* a window cut the traces: advise counts their first step too */
};

struct gt_report;

/* opts may be NULL (defaults). Returns 0 or -ENOMEM. */
int gt_report_new(const struct gt_report_options *opts, struct gt_report **ret);

/* Accepts NULL. */
void gt_report_free(struct gt_report *rep);

/* Read one trace (rewound and read several times; a window set on r applies) and add it.
 * name: how the page calls it (copied). Returns 0 or -errno (-ENOMEM, or the reader's) with
 * *errmsg. */
int gt_report_add(struct gt_report *rep, struct gt_reader *r, const char *name,
                  const char **errmsg);

/* Every trace was added: compare the ranks, rank the findings. Returns 0 or -ENOMEM. */
int gt_report_finish(struct gt_report *rep);

/* Steps found in the traces, all ranks (after finish). */
size_t gt_report_steps(const struct gt_report *rep);

/* The page, after finish. Returns 0 or -EIO when writing failed. */
int gt_report_write_html(const struct gt_report *rep, FILE *out);

#endif /* GPUTRACE_REPORT_H */
