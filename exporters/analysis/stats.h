/* Run summaries in the spirit of `nsys stats`: per kernel, API function, copy kind, memset,
 * NVTX range, memory, failed calls and losses, as a table, CSV or JSON. Streams the trace
 * once with memory proportional to distinct names, not events. Runs in the CLI. */
#ifndef GPUTRACE_STATS_H
#define GPUTRACE_STATS_H

#include <stdbool.h>
#include <stdio.h>

#include "gputrace/trace.h"

/* Which reports to print (flags). */
enum gt_stats_report {
	GT_STATS_REPORT_KERNELS = 1u << 0, /* GPU kernels by name */
	GT_STATS_REPORT_API = 1u << 1,     /* runtime/driver API calls by function */
	GT_STATS_REPORT_MEMCPY = 1u << 2,  /* copies by kind: time, bytes, bandwidth */
	GT_STATS_REPORT_MEMSET = 1u << 3,  /* memsets by memory kind */
	GT_STATS_REPORT_NVTX = 1u << 4,    /* NVTX ranges by domain and message */
	GT_STATS_REPORT_MEMORY = 1u << 5,  /* peak in use per device, never freed, largest */
	GT_STATS_REPORT_ERRORS = 1u << 6,  /* API calls that returned an error */
	GT_STATS_REPORT_LOSSES = 1u << 7,  /* every loss counter and reader skips */
	GT_STATS_REPORT_ALL = (1u << 8) - 1, /* the reports above: "all", and the default */
	/* GPU time projected onto NVTX ranges (nvtx-gpu.h): asked for by name only, since it
	 * reads the trace twice more and keeps every range */
	GT_STATS_REPORT_NVTX_GPU = 1u << 8,
	/* GPU metrics (PM sampling): mean and peak per GPU and metric, over the run, while
	 * kernels ran and per step; GPU busy beside SMs active. In the default reports when the
	 * trace holds GPU metric samples. */
	GT_STATS_REPORT_GPU_METRICS = 1u << 9,
	/* PyTorch operators (torchops.h): GPU time, calls and API time per operator name, and
	 * per name and input dims; asked for by name only, since it reads the trace three
	 * times more */
	GT_STATS_REPORT_OPERATORS = 1u << 10,
	GT_STATS_REPORT_ANY = (1u << 11) - 1,
};

enum gt_stats_format {
	GT_STATS_FORMAT_TABLE = 0, /* aligned columns, human units */
	GT_STATS_FORMAT_CSV,       /* RFC 4180, integer nanoseconds and bytes */
	GT_STATS_FORMAT_JSON,      /* one JSON object, integer nanoseconds and bytes */
	GT_STATS_FORMAT_MAX
};

struct gt_stats_options {
	unsigned reports; /* enum gt_stats_report bits; 0 means all */
	unsigned format;  /* enum gt_stats_format */
	bool mangled;     /* keep kernel names as CUPTI reported them (no demangling) */
	bool base_names;  /* kernels by base name ("k" of "void ns::k<int>(float*)"), the
	                   * instantiations of one function as one row, as Nsight Systems'
	                   * ":base" reports */
	unsigned limit;   /* rows per report in table format, 0 = all; csv/json list all */
	bool nvtx_instances; /* nvtx-gpu: every range instance too (nvtx_gpu_instances) */
};

/* Names longer than this many characters are cut (ending in "...") in table format; CSV and
 * JSON hold them whole. */
#define GT_STATS_TABLE_TEXT_MAX 160u

/* The short summary `gputrace run` prints when the program ends: top kernels by GPU time,
 * copies by kind, API calls, peak memory per device, losses, and the traced processes with
 * how they ended. When no CUDA activity at all was recorded it says so, gives the likely
 * reasons (and any notice the injection library left) and suggests `gputrace doctor`.
 *
 * r: an open reader; it is rewound first, so it may have been read before.
 * Returns 0, -ENOMEM, -EIO when writing to `out` failed, or the reader's -errno.
 * On failure *errmsg (if errmsg is non-NULL) is a static one-line description. */
int gt_stats_summary(struct gt_reader *r, FILE *out, const char **errmsg);

/* The reports of `gputrace stats` and `gputrace run --stats`. opts may be NULL (all
 * reports, table, demangled). Returns as gt_stats_summary(), plus -EINVAL for an unknown
 * format or report bit. Precision: count, total, min, max and avg are exact; median and
 * p99 come from a log-linear histogram and are within 0.4% of the exact value (exact below
 * 128 ns); see docs/stats.md. */
int gt_stats_report(struct gt_reader *r, FILE *out, const struct gt_stats_options *opts,
                    const char **errmsg);

/* Parse a comma-separated list of report names ("kernels,api", "all") into *reports.
 * Names: kernels api memcpy memset nvtx memory errors losses nvtx-gpu gpu-metrics operators
 * all ("all": every one but nvtx-gpu, gpu-metrics and operators). Returns 0 or -EINVAL. */
int gt_stats_parse_reports(const char *list, unsigned *reports);

/* The bits of a comma-separated list of names (bit i for names[i], `all` for "all"): what
 * gt_stats_parse_reports and gt_rankstats_parse_reports share. 0, or -EINVAL for an unknown
 * name, an empty list or a trailing comma. */
int gt_stats_parse_names(const char *list, const char *const *names, unsigned n, unsigned all,
                         unsigned *bits);

/* Parse "table", "csv" or "json" into *format. Returns 0 or -EINVAL. */
int gt_stats_parse_format(const char *name, unsigned *format);

/* Name of one report bit ("kernels"), or "unknown". */
const char *gt_stats_report_name(unsigned report);

#endif /* GPUTRACE_STATS_H */
