/* Stats across ranks: the per-name reports of `gputrace stats` split by rank, process, GPU or
 * host, over the per-rank files of a job or one trace of many processes; each group's GPU time
 * broken down into compute, communication, copies and idle; and, per training step, each
 * rank's duration and compute time, the slowest and fastest rank, the stragglers, and how
 * much communication overlapped compute. Fed one trace at a time (each read twice: once for its
 * steps, once for the rest), then written as a table, CSV or JSON. Runs in the CLI. Memory
 * grows with groups x names and groups x steps, never with the number of events. Rules:
 * docs/stats.md, "Across ranks". */
#ifndef GPUTRACE_EXPORTERS_RANKSTATS_H
#define GPUTRACE_EXPORTERS_RANKSTATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "busy.h"
#include "gputrace/trace.h"

/* What the groups are. */
enum gt_rankstats_by {
	GT_RANKSTATS_BY_RANK = 0, /* the launcher's rank; a process without one is its own group */
	GT_RANKSTATS_BY_PROCESS,  /* (host, pid) */
	GT_RANKSTATS_BY_DEVICE,   /* a GPU (its uuid) */
	GT_RANKSTATS_BY_HOST,     /* the host name */
	GT_RANKSTATS_BY_MAX
};

/* Reports (flags). */
enum gt_rankstats_report {
	GT_RANKSTATS_REPORT_BREAKDOWN = 1u
	                                << 0, /* GPU time: compute, communication, copies, idle */
	GT_RANKSTATS_REPORT_STEPS = 1u << 1,  /* per step: slowest, fastest, spread; per rank */
	GT_RANKSTATS_REPORT_STRAGGLERS = 1u << 2, /* ranks by how often and how much slowest */
	GT_RANKSTATS_REPORT_KERNELS = 1u << 3,
	GT_RANKSTATS_REPORT_API = 1u << 4,
	GT_RANKSTATS_REPORT_MEMCPY = 1u << 5,
	GT_RANKSTATS_REPORT_MEMSET = 1u << 6,
	GT_RANKSTATS_REPORT_NVTX = 1u << 7,
	GT_RANKSTATS_REPORT_ALL = (1u << 8) - 1,
};

/* A step's slowest rank is a straggler there when its compute time exceeds the median of the
 * others' by at least this share of it (percent): below, it is noise (docs/stats.md). */
#define GT_RANKSTATS_MIN_LAG_PCT 5.0
#define GT_RANKSTATS_STEP_LIST   10 /* steps named per straggler */

struct gt_rankstats_options {
	unsigned by;           /* enum gt_rankstats_by */
	double min_lag_pct;    /* see GT_RANKSTATS_MIN_LAG_PCT (the default when opts is NULL) */
	unsigned reports;      /* enum gt_rankstats_report bits; 0 = all */
	unsigned format;       /* enum gt_stats_format */
	unsigned limit;        /* table format: rows per group in the per-name reports; 0 = all */
	bool mangled;          /* keep kernel names as CUPTI reported them */
	const char *step_name; /* --step NAME; NULL: detect (exporters/model/steps.h); borrowed */
};

/* A group: a rank (or process, GPU, host) and everything of it. */
struct gt_rankstats_group {
	uint32_t index; /* 0, 1, ... in order of appearance */
	int32_t rank;   /* -1: none (or mixed, by device and host) */
	uint32_t pid;   /* the first process's */
	char *host;     /* owned; "" when unknown */
	int64_t gpu;    /* by device: "GPU n" of its (first) trace; else -1 */
	char uuid[48];  /* by device: "GPU-...", or "" */
	uint32_t processes;
	uint32_t gpus;    /* GPUs (per input) with activity of this group */
	bool active;      /* any kernel, copy, memset, graph, API call or NVTX range */
	uint64_t lost;    /* records lost by its processes */
	uint64_t kernels; /* kernel records */
	struct gt_busy_totals busy;

	/* its steps, sorted by start: range, and the GPU time within it (busy.h) */
	struct gt_busy_window *steps; /* owned */
	int64_t *step_numbers;        /* owned: the steps' numbers (steps.h) */
	size_t nsteps;
	uint32_t step_pid;   /* the process whose steps they are */
	uint32_t step_input; /* in which input */

	void *priv; /* the per-name tables (rankstats.c) */
};

/* Per step number, over the groups that have it. */
struct gt_rankstats_step_row {
	int64_t number;
	uint32_t ranks;            /* groups with this step */
	uint32_t slowest, fastest; /* group indexes: the most and the least compute time */
	uint64_t slowest_compute_ns, fastest_compute_ns;
	uint64_t spread_ns;              /* slowest - fastest */
	uint64_t lag_ns;                 /* slowest's compute time - the median of the others' */
	double lag_pct;                  /* lag_ns over that median, percent (inf when it is 0) */
	bool straggler;                  /* two ranks or more, lag_pct >= min_lag_pct, lag_ns > 0 */
	uint64_t dur_min_ns, dur_max_ns; /* the step's duration on its quickest and slowest rank */
};

/* One group in the straggler table. */
struct gt_rankstats_straggler {
	uint32_t group;
	uint32_t slowest;  /* steps in which it was the straggler (step_row.straggler) */
	uint32_t most;     /* steps in which it had the most compute time, by any margin */
	uint32_t compared; /* steps it had that at least one other group had too */
	uint64_t lag_ns;   /* over its straggler steps: its compute - the median of the others' */
	uint64_t max_lag_ns;
	int64_t worst_step; /* where the lag was largest; -1 when never a straggler */
	int64_t steps[GT_RANKSTATS_STEP_LIST]; /* its first straggler steps, ascending */
	uint64_t compute_ns;                   /* mean compute time per step */
	uint64_t dur_ns;                       /* mean step duration */
};

/* One input trace as its header describes it. */
struct gt_rankstats_input {
	char *name;                     /* owned: the path given */
	char *host, *command, *version; /* owned, from the header ("" when absent) */
	uint64_t span_ns;               /* the trace's span (gt_reader_times, docs/cli.md "Time") */
	uint64_t lost;                  /* records the producers lost (not damaged_file's) */
	uint64_t chunks_skipped, records_skipped; /* a damaged file's: recorded in it or skipped */
	bool recovered;
	int step_family; /* enum gt_steps_family found in it */
};

struct gt_rankstats {
	struct gt_rankstats_options opts; /* step_name copied */
	struct gt_rankstats_group **groups;
	size_t ngroups, capgroups;
	struct gt_rankstats_input *inputs;
	size_t ninputs, capinputs;
	struct gt_rankstats_step_row *steps; /* after finish: ascending number */
	size_t nsteps;
	struct gt_rankstats_straggler *stragglers; /* after finish: the table's order */
	size_t nstragglers;
	bool split_gpu; /* one GPU's activity came in several inputs: their unions were summed */
	void *priv;     /* the maps (rankstats.c) */
};

/* opts may be NULL (by rank, everything, table). Returns 0, -EINVAL (unknown by, report or
 * format) or -ENOMEM. */
int gt_rankstats_new(const struct gt_rankstats_options *opts, struct gt_rankstats **ret);

/* Accepts NULL. */
void gt_rankstats_free(struct gt_rankstats *rs);

/* Read one trace (rewound and read twice) and add it. name: how outputs call it (copied).
 * Returns 0 or -errno (-ENOMEM, or the reader's) with *errmsg. */
int gt_rankstats_add(struct gt_rankstats *rs, struct gt_reader *r, const char *name,
                     const char **errmsg);

/* Every trace was added: compare the steps across groups. Returns 0 or -ENOMEM. */
int gt_rankstats_finish(struct gt_rankstats *rs);

/* The reports, after finish. Returns 0, -ENOMEM or -EIO with *errmsg. */
int gt_rankstats_write(struct gt_rankstats *rs, FILE *out, const char **errmsg);

/* "rank", "process", "device" or "host". Returns 0 or -EINVAL. */
int gt_rankstats_parse_by(const char *name, unsigned *by);
const char *gt_rankstats_by_name(unsigned by);

/* A comma list of breakdown, steps, stragglers, kernels, api, memcpy, memset, nvtx, all.
 * Returns 0 or -EINVAL. */
int gt_rankstats_parse_reports(const char *list, unsigned *reports);

#endif /* GPUTRACE_EXPORTERS_RANKSTATS_H */
