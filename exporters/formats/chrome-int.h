/* Internal to the chrome exporter: one JSON output (a file, or a series of files cut by
 * size) fed record by record, so that chrome.c writes a whole trace and chrome-split.c one
 * file per rank. Runs in the CLI. */
#ifndef GPUTRACE_EXPORTERS_CHROME_INT_H
#define GPUTRACE_EXPORTERS_CHROME_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "exporter.h"
#include "gputrace/trace.h"
#include "ranks.h"
#include "steps.h"

/* The name of a rank's file in the folder of --split ranks: rank-N.pt.trace.json. */
#define GT_CHROME_SPLIT_SUFFIX ".pt.trace.json"

struct gt_chrome;

struct gt_stacks;
struct gt_torchops;

struct gt_chrome_setup {
	struct gt_reader *reader;             /* borrowed: names and header */
	const struct gt_export_options *opts; /* borrowed: demangling, max_bytes */
	const char *path;                     /* the output (the first file when cut); copied */
	struct gt_trace_times times;          /* the whole trace's (gt_reader_times): every
	                                       * timestamp counts from times.zero_ns */
	const struct gt_steps *steps;         /* borrowed; NULL: NVTX ranges as they are */
	const struct gt_ranks *ranks;         /* borrowed; read when the header and trailer
	                                       * are written; NULL: no distributedInfo */
	int32_t rank;        /* the file of one rank: its distributedInfo opens the file; -1: a
	                      * whole trace, whose trailer names its rank if it holds only one */
	bool small_gpu_pids; /* GPU n as pid n, as Kineto writes it (gt_lanes_gpu_pid) */
	struct gt_stacks *stacks; /* borrowed; NULL: no "stack" args */
	const struct gt_torchops *ops; /* borrowed; NULL: NVTX ranges stay NVTX ranges */
};

/* Open the output and write its head. Returns 0 or -errno; on failure *errmsg says why. */
int gt_chrome_open(const struct gt_chrome_setup *setup, struct gt_chrome **ret,
                   const char **errmsg);

/* Draw one record (after the model has seen it). Returns 0 or -errno (then
 * gt_chrome_errmsg() says why). */
int gt_chrome_record(struct gt_chrome *c, const union gt_record *rec);

/* Finish the output, and add what was written to *res (events, counters, flows, lanes,
 * bytes, files, steps). Returns 0 or -errno. */
int gt_chrome_close(struct gt_chrome *c, struct gt_export_result *res);

/* Closes what is still open (an unfinished file stays as it is). Accepts NULL. */
void gt_chrome_free(struct gt_chrome *c);

/* Why the last call failed: static or owned by c, valid until the next call. */
const char *gt_chrome_errmsg(const struct gt_chrome *c);

/* Write `rank` as Kineto's distributedInfo object, "\"distributedInfo\": {...}" with a space
 * after each colon as Python's json writes it (HTA finds a file's rank with a regular
 * expression that needs it). buf needs GT_CHROME_DIST_MAX bytes. Returns the end. */
#define GT_CHROME_DIST_MAX 256u
char *gt_chrome_dist_info(char *buf, const struct gt_rank_info *info);

/* --split ranks: one file per rank in the directory opts->output (chrome-split.c), steps
 * found as opts say. Returns 0 or -errno with *errmsg. */
int gt_chrome_split_ranks(struct gt_reader *r, const struct gt_export_options *opts,
                          struct gt_export_result *res, const char **errmsg);

#endif /* GPUTRACE_EXPORTERS_CHROME_INT_H */
