/* Exporters turn a .gtrace into another format, streaming record by record.
 * Runs in the CLI. A new format is one file in exporters/ plus one table entry. */
#ifndef GPUTRACE_EXPORTER_H
#define GPUTRACE_EXPORTER_H

#include <stdint.h>
#include <stdio.h>

#include "gputrace/trace.h"

/* How the chrome exporter divides a trace among files. */
enum gt_export_split {
	GT_EXPORT_SPLIT_NONE = 0, /* one file (cut by size with max_bytes) */
	GT_EXPORT_SPLIT_RANKS, /* output is a directory: one file per rank, rank-N.pt.trace.json */
	GT_EXPORT_SPLIT_MAX
};

struct gt_export_options {
	const char *output; /* path, or "-" for stdout; a directory with GT_EXPORT_SPLIT_RANKS */
	uint64_t max_bytes; /* split output above this size (0: never); chrome splits its own,
	                     * perfetto through gt_export_window */
	int demangle;       /* 1: demangle kernel names */
	void (*progress)(void *ctx, uint64_t done, uint64_t total); /* may be NULL */
	void *progress_ctx;
	unsigned split;        /* enum gt_export_split; chrome only */
	const char *step_name; /* chrome: the NVTX range that marks a training step; NULL:
	                        * detect one (docs/exporters.md, "Steps") */
	int no_steps;          /* chrome: 1: no ProfilerStep#N, NVTX ranges as they are */
	/* gt_export_window: each file written, with the time range [from_ns, to_ns) it holds
	 * (0, 0: the whole window); may be NULL */
	void (*on_file)(void *ctx, const char *path, uint64_t from_ns, uint64_t to_ns);
	void *file_ctx;
};

struct gt_export_result {
	uint64_t events;     /* events written: slices, instants and counter values */
	uint64_t counters;   /* timeline formats: of those events, the counter values */
	uint64_t flows;      /* timeline formats: CPU->GPU arrows drawn */
	uint64_t lanes;      /* timeline formats: lanes drawn, each shown as a thread */
	uint64_t bytes;      /* bytes written, all files */
	unsigned files;      /* output files written */
	unsigned ranks;      /* chrome: ranks in the trace (with GT_EXPORT_SPLIT_RANKS: files) */
	uint64_t steps;      /* chrome: NVTX ranges written as ProfilerStep#N */
	unsigned left_out;   /* chrome, split by ranks: processes without a rank, left out */
	uint64_t left_out_records; /* and their records */
	const char *warning; /* on success: something the CLI should print (e.g. a JSON file
	                      * too large for viewers), static or owned by the exporter; NULL
	                      * if none */
};

struct gt_exporter_ops {
	const char *name;      /* "chrome", "perfetto", "csv" */
	const char *extension; /* ".json", ".pftrace", ".csv" */
	const char *help;      /* one line */
	/* Read every record from `r` and write the output. Returns 0 or -errno; on failure
	 * *errmsg (static or owned by the exporter until the next call) says what went wrong. */
	int (*run)(struct gt_reader *r, const struct gt_export_options *opts,
	           struct gt_export_result *res, const char **errmsg);
};

struct gt_window;
struct gt_window_stats;

/* Run exporter e on what window w keeps of r (gputrace/window.h; NULL: all of it), from the
 * start of r. With opts->max_bytes, perfetto output is cut by time into pieces that each stay
 * below it, OUT then OUT.1.pftrace, OUT.2.pftrace ..., each a whole trace of its own (every
 * piece is an export of its own window; slices crossing a cut are cut, their arrows left
 * out); res then sums the pieces and res->files counts them. Chrome splits its own output.
 * wst (may be NULL) gets what the window did. Returns 0 or -errno with *errmsg. */
int gt_export_window(const struct gt_exporter_ops *e, struct gt_reader *r,
                     const struct gt_window *w, const struct gt_export_options *opts,
                     struct gt_export_result *res, const char **errmsg,
                     struct gt_window_stats *wst);

/* The exporter named `name`, or NULL. */
const struct gt_exporter_ops *gt_exporter_find(const char *name);

/* All exporters, NULL-terminated. */
const struct gt_exporter_ops *const *gt_exporter_list(void);

#endif /* GPUTRACE_EXPORTER_H */
