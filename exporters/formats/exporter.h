/* Exporters turn a .gtrace into another format, streaming record by record.
 * Runs in the CLI. A new format is one file in exporters/ plus one table entry. */
#ifndef GPUTRACE_EXPORTER_H
#define GPUTRACE_EXPORTER_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "gputrace/trace.h"

/* How the chrome exporter divides a trace among files. */
enum gt_export_split {
	GT_EXPORT_SPLIT_NONE = 0, /* one file (cut by size with max_bytes) */
	GT_EXPORT_SPLIT_RANKS, /* output is a directory: one file per rank, rank-N.pt.trace.json */
	GT_EXPORT_SPLIT_MAX
};

struct gt_output;
struct gt_output_error;

struct gt_export_options {
	const char *output; /* path, or "-" for stdout; a directory with GT_EXPORT_SPLIT_RANKS */
	/* the output every file is created through (src/output/output.h), opened on `output`
	 * and committed by the caller once the export succeeded; NULL: the exporter opens one
	 * of its own and commits it itself */
	struct gt_output *out;
	uint64_t max_bytes; /* split output above this size (0: never); chrome splits its own,
	                     * perfetto through gt_export_window */
	int demangle;       /* 1: demangle kernel names */
	void (*progress)(void *ctx, uint64_t done, uint64_t total); /* may be NULL */
	void *progress_ctx;
	unsigned split;        /* enum gt_export_split; chrome only */
	const char *step_name; /* chrome, perfetto: the NVTX range that marks a training step;
	                        * NULL: detect one (docs/exporters.md, "Steps") */
	int no_steps;          /* 1: no ProfilerStep#N, NVTX ranges as they are */
	/* the training steps of the whole trace (steps.h), found before a window was put on
	 * the reader, so that a window's steps keep their numbers; NULL: the exporter finds
	 * them itself (gt_export_window sets it for a window) */
	const struct gt_steps *steps;
	/* what the export is of (gt_export_identity), recorded in it so that a cache of it is
	 * reused only for this very trace and window (perfetto: the trace's uuid; sqlite:
	 * META_DATA_EXPORT's GPUTRACE_SOURCE); NULL: nothing recorded */
	const char *identity;
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
	/* Read every record from `r` and write the output through opts->out (never NULL here:
	 * callers go through gt_export_run or gt_export_window). Returns 0 or -errno; on
	 * failure *errmsg (static or owned by the exporter until the next call) says what went
	 * wrong. */
	int (*write)(struct gt_reader *r, const struct gt_export_options *opts,
	             struct gt_export_result *res, const char **errmsg);
	/* How the output must be opened (enum gt_output_flags) for these options; NULL: 0. */
	unsigned (*output_flags)(const struct gt_export_options *opts);
	/* Why "-" is refused when those flags say GT_OUTPUT_NO_STDOUT. */
	const char *stdout_refused;
	/* Which names beside (or, for a folder, inside) the output an earlier export of the same
	 * output may have left that this one does not write: matched by name; NULL: none. */
	bool (*stale)(const struct gt_export_options *opts, const char *name);
};

/* Open the output that opts->output names for exporter e, refusing the inputs[0..n) as
 * targets, with e's flags and its sweep of stale files (src/output/output.h). Returns 0 and
 * *ret, or -errno with err. */
int gt_export_output_open(const struct gt_exporter_ops *e, const struct gt_export_options *opts,
                          const char *const *inputs, unsigned ninputs, struct gt_output **ret,
                          struct gt_output_error *err);

/* Run exporter e on every record of r (from where r stands). Its files go through
 * opts->out; when that is NULL, through an output of its own opened on opts->output and
 * committed only when the export succeeded. Returns 0 or -errno with *errmsg. */
int gt_export_run(const struct gt_exporter_ops *e, struct gt_reader *r,
                  const struct gt_export_options *opts, struct gt_export_result *res,
                  const char **errmsg);

struct gt_window;
struct gt_window_stats;

/* Run exporter e on what window w keeps of r (window.h; NULL: all of it), from the start of
 * r, through opts->out as gt_export_run does. With opts->max_bytes, perfetto output is cut by time into pieces that each stay
 * below it, OUT then OUT.1.pftrace, OUT.2.pftrace ..., each a whole trace of its own (every
 * piece is an export of its own window; slices crossing a cut are cut, their arrows left
 * out); res then sums the pieces and res->files counts them. Chrome splits its own output.
 * wst (may be NULL) gets what the window did. Returns 0 or -errno with *errmsg. */
int gt_export_window(const struct gt_exporter_ops *e, struct gt_reader *r,
                     const struct gt_window *w, const struct gt_export_options *opts,
                     struct gt_export_result *res, const char **errmsg,
                     struct gt_window_stats *wst);

/* For gt_export_window and gt_export_run: when opts->out is NULL, open an output of its
 * own into *own and point *use (a copy of *opts) at it; else *use = *opts, *own = NULL.
 * gt_export_own_end() then commits *own when ret is 0, removes it otherwise, and frees it.
 * Both return 0 or -errno with *errmsg. */
int gt_export_own_begin(const struct gt_exporter_ops *e, const struct gt_export_options *opts,
                        struct gt_export_options *use, struct gt_output **own,
                        const char **errmsg);
int gt_export_own_end(struct gt_output *own, int ret, const char **errmsg);

/* Whether an export of r with opts writes steps as ProfilerStep#N (chrome and perfetto): not
 * with no_steps, nor for a trace whose footer counts no NVTX range. */
bool gt_export_want_steps(struct gt_reader *r, const struct gt_export_options *opts);

/* The steps an exporter names ProfilerStep#N: opts->steps, or, when that is NULL and it
 * wants steps, a scan of r into *own (free it). *ret NULL: none. Returns 0 or -errno with
 * *errmsg. */
int gt_export_steps(struct gt_reader *r, const struct gt_export_options *opts,
                    const struct gt_steps **ret, struct gt_steps **own, const char **errmsg);

/* gt_export_steps, and in the same pass the trace's PyTorch operators (torchops.h) into *ops
 * (free it; NULL: none), for the timeline formats. A trace whose footer counts no NVTX range
 * is not read; one without operators is read once, as for its steps alone. Returns 0 or
 * -errno with *errmsg. */
struct gt_torchops;
int gt_export_prescan(struct gt_reader *r, const struct gt_export_options *opts,
                      const struct gt_steps **ret, struct gt_steps **own,
                      struct gt_torchops **ops, const char **errmsg);

/* Whether name is "BASE<sep>TAIL<ext>" for the output's file name BASE<ext> (or BASE, when
 * output does not end in ext): the formats' way to find what an earlier export of the same
 * output left, with TAIL all digits (numbered pieces: "run.3.json") or any (csv's tables). */
bool gt_export_sibling(const char *output, const char *ext, char sep, bool digits,
                       const char *name);

/* stale() of the formats cut into numbered pieces (perfetto by --max-size). */
bool gt_export_stale_pieces(const struct gt_export_options *opts, const char *name);

/* What an export of the trace at path through window w (NULL: all of it) is of: this build's
 * version, the trace file's device, inode, size and modification time, and the window
 * (gt_window_describe), as one line into buf. Returns 0 or -errno from stat. */
int gt_export_identity(const char *path, const struct gt_window *w, char *buf, size_t bytes);

/* Whether the .pftrace at path is a complete export whose identity is `identity` (the uuid its
 * first packet carries; a file cut short has no valid end and is not). */
bool gt_perfetto_is_export_of(const char *path, const char *identity);

/* The hive partition a trace takes in a folder of several traces' Parquet exports
 * (docs/sql.md, "A job in one folder"). */
struct gt_export_partition {
	char key[320];  /* "rank=N", or "host=H/pid=P" (H with characters other than letters,
	                 * digits, '-', '.' and '_' as '_'; P the pid of its first process) */
	int32_t rank;   /* -1: none */
	uint32_t nranks; /* 0 none, 1, or 2: several (rank_min to rank_max) */
	int32_t rank_min, rank_max;
};

/* The partition of the trace at path, from its PROCESS records (only the chunks that hold
 * them are read): rank=N when its processes with a rank all have rank N, else host=H/pid=P of
 * its first process. Returns 0, or -errno with *errmsg (naming path). */
int gt_export_partition_of(const char *path, struct gt_export_partition *p, const char **errmsg);

/* The partitions of the traces paths[0..n) into parts[0..n), checked to make one table: a
 * trace of several ranks (-EDOM), some traces with a rank and some without (-EINVAL), two
 * traces of one partition (-EEXIST); *errmsg names the traces. Returns 0 or -errno. */
int gt_export_partitions(const char *const *paths, unsigned n, struct gt_export_partition *parts,
                         const char **errmsg);

/* The exporter named `name`, or NULL. */
const struct gt_exporter_ops *gt_exporter_find(const char *name);

/* All exporters, NULL-terminated. */
const struct gt_exporter_ops *const *gt_exporter_list(void);

#endif /* GPUTRACE_EXPORTER_H */
