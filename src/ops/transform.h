/* Trace transforms: a reader -> filter -> writer pipeline. Every record of one trace is handed,
 * in file order, to a filter callback that keeps or drops it; the kept ones are written into a
 * new trace. `gputrace run --delay` trims with it (gt_transform_window); merging several
 * traces and windowed exports are meant to reuse it. Streams: memory stays flat whatever the
 * trace's size (the reader's and writer's buffers). Runs in the CLI.
 *
 *   struct gt_transform_window w = {.from_ns = start + delay};
 *   gt_transform_file("run.gtrace", "run.gtrace", gt_transform_window, &w, NULL, &res, &msg);
 */
#ifndef GPUTRACE_TRANSFORM_H
#define GPUTRACE_TRANSFORM_H

#include <stdint.h>

#include "gputrace/record.h"
#include "gputrace/trace.h"

/* What a filter answers for a record. */
enum gt_transform_verdict {
	GT_TRANSFORM_DROP = 0,
	GT_TRANSFORM_KEEP = 1,
};

/* A filter: called once per record, in file order (strings included). Returns
 * GT_TRANSFORM_KEEP, GT_TRANSFORM_DROP, or -errno to stop the transform with that error. The
 * record is valid only during the call. */
typedef int (*gt_transform_fn)(void *ctx, const union gt_record *rec);

struct gt_transform_options {
	const struct gt_trace_info *info;       /* output header; NULL: the input's */
	const struct gt_writer_options *writer; /* NULL: the writer's defaults */
};

struct gt_transform_result {
	uint64_t read;    /* records read from the input */
	uint64_t kept;    /* written to the output */
	uint64_t dropped; /* the filter dropped */
};

/* Run the pipeline from an open reader (read from where it is; rewind it first to start
 * over) into a new trace at out_path, written as PATH.tmp-<pid> and renamed when complete, so
 * out_path may be the input's own path. opts and res may be NULL. Returns 0; or -errno from
 * the reader, the writer or the filter, the output then discarded (no file is left). */
int gt_transform_run(struct gt_reader *in, const char *out_path, gt_transform_fn filter, void *ctx,
                     const struct gt_transform_options *opts, struct gt_transform_result *res);

/* The same from a path: opens in_path, runs, closes. *errmsg (may be NULL) is the reader's
 * reason when in_path cannot be opened, else NULL. */
int gt_transform_file(const char *in_path, const char *out_path, gt_transform_fn filter, void *ctx,
                      const struct gt_transform_options *opts, struct gt_transform_result *res,
                      const char **errmsg);

/* A time window, for gt_transform_window. */
struct gt_transform_window {
	uint64_t from_ns; /* trace clock: activity that ended before it is dropped; 0: no bound */
	uint64_t to_ns;   /* activity that began after it is dropped; 0: no bound */
};

/* The filter of a time window (ctx: struct gt_transform_window): drops the activity records -
 * kernels, copies, memsets, API calls, NVTX ranges, synchronization, graph launches, CUPTI
 * overhead - that lie wholly outside [from_ns, to_ns]; keeps everything else: strings,
 * processes, threads, devices, contexts, streams, the memory timeline (allocations before the
 * window are what is in use inside it), memory pools, losses, notices, clock anchors. */
int gt_transform_window(void *ctx, const union gt_record *rec);

#endif /* GPUTRACE_TRANSFORM_H */
