/* `gputrace diff BASE NEW`: two traces' aggregates compared - per kernel name (demangled), API
 * function, copy kind, memset kind and NVTX range: count, total, mean and median on each side,
 * the change; names that appeared or vanished apart; a headline (GPU time, time per step,
 * launches, API calls, losses), incomplete traces flagged first, and a gate for CI (--fail-above
 * PCT --metric M). Each trace is read once, with the stats exporter's aggregates (memory grows
 * with distinct names, not events). Runs in the CLI. Rules: docs/stats.md, "Comparing two
 * traces". */
#ifndef GPUTRACE_EXPORTERS_DIFF_H
#define GPUTRACE_EXPORTERS_DIFF_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "stats-int.h"

enum gt_diff_side {
	GT_DIFF_BASE = 0,
	GT_DIFF_NEW,
	GT_DIFF_SIDE_MAX
};

/* What a row is; also the order rows of equal change come in. */
enum gt_diff_category {
	GT_DIFF_KERNEL = 0,
	GT_DIFF_API,
	GT_DIFF_MEMCPY, /* by copy kind: "HtoD" ... */
	GT_DIFF_MEMSET, /* by memory kind: "device" ... */
	GT_DIFF_NVTX,   /* push/pop and start/end ranges: "message", "[domain] message" */
	GT_DIFF_CATEGORY_MAX
};

struct gt_diff_options {
	unsigned format;       /* enum gt_stats_format */
	unsigned limit;        /* table format: rows per section; 0 = all */
	bool mangled;          /* kernel names as CUPTI reported them */
	const char *step_name; /* --step NAME; NULL: detect; borrowed */
	/* the gate: fail when NEW's metric is more than fail_above_pct percent above BASE's;
	 * negative = no gate */
	double fail_above_pct;
	const char *metric; /* "gpu-time" (NULL too), "step-time", a row's name, or the base name
	                     * of one kernel (demangle.h); borrowed */
};

/* One trace's headline. */
struct gt_diff_totals {
	char *name, *host, *command; /* owned: the path given, and from the header */
	uint64_t gpu_ns;   /* kernels, copies, memsets and graph launches, their durations summed */
	uint64_t launches; /* kernels run (kernel records) */
	uint64_t api_calls;                       /* API records */
	uint64_t lost; /* records the producers lost, all sources (not damaged_file's) */
	struct gt_catalog_damage damage; /* a damaged file's: recorded in it or skipped reading */
	bool recovered;                  /* no footer */
	uint64_t steps;                           /* step numbers (steps.h) */
	uint64_t step_median_ns, step_mean_ns; /* per step number, its slowest process's duration */
	int step_family;                       /* enum gt_steps_family */
};

/* One name on both sides. */
struct gt_diff_row {
	unsigned category;                              /* enum gt_diff_category */
	const char *name;                               /* display name; owned by the diff */
	const struct gt_series *side[GT_DIFF_SIDE_MAX]; /* count 0 on the side that lacks it */
	int64_t delta_ns;                               /* NEW total - BASE total */
};

struct gt_diff_gate {
	bool enabled;
	const char *metric; /* as given ("gpu-time" when none was) */
	unsigned category;  /* for a row's name: the category it was found in */
	double base, new_;  /* ns */
	double change_pct;  /* (new - base) / base; +inf when base is 0 and new is not */
	bool regressed;     /* change_pct > fail_above_pct */
};

struct gt_diff {
	struct gt_diff_options opts;
	struct gt_diff_totals t[GT_DIFF_SIDE_MAX];
	bool have[GT_DIFF_SIDE_MAX];
	/* after finish: rows on both sides by |delta_ns| descending (then category, name); rows
	 * only in NEW and only in BASE, by their total descending */
	struct gt_diff_row *changed, *appeared, *vanished;
	size_t nchanged, nappeared, nvanished;
	struct gt_diff_gate gate;
	void *priv; /* the name tables (diff.c) */
};

/* opts may be NULL (table, demangled, no gate). Returns 0, -EINVAL or -ENOMEM. */
int gt_diff_new(const struct gt_diff_options *opts, struct gt_diff **ret);

/* Accepts NULL. */
void gt_diff_free(struct gt_diff *d);

/* Read one side's trace (rewound, read once). name: how outputs call it (copied). Each side
 * needs a reader of its own, even for one file: a reader keeps the strings it has read across
 * a rewind, so a second pass names what the first could not yet. Returns 0 or -errno with
 * *errmsg (-ENOMEM, the reader's, -EINVAL for a side read twice). */
int gt_diff_add(struct gt_diff *d, unsigned side, struct gt_reader *r, const char *name,
                const char **errmsg);

/* Both sides were read: rows compared and ordered, the gate evaluated. Returns 0, -ENOMEM, or
 * -ENOENT with *errmsg when the gate's metric is in neither trace (a name) or a trace has
 * no steps (step-time). */
int gt_diff_finish(struct gt_diff *d, const char **errmsg);

/* Incomplete traces first, then the headline, the gate, and the rows. Returns 0, -ENOMEM or
 * -EIO with *errmsg. */
int gt_diff_write(const struct gt_diff *d, FILE *out, const char **errmsg);

/* "kernel", "api", "memcpy", "memset", "nvtx". */
const char *gt_diff_category_name(unsigned category);

#endif /* GPUTRACE_EXPORTERS_DIFF_H */
