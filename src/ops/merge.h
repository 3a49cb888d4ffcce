/* gputrace merge: several traces (the per-rank files of one job, from one host or many) into
 * one, on one timeline. A streaming k-way merge: memory grows with the number of inputs
 * (a reader and its current chunk each), not with their length. docs/merge.md says how the
 * clocks are aligned and what the merged file holds. Runs in the CLI. */
#ifndef GPUTRACE_MERGE_H
#define GPUTRACE_MERGE_H

#include <stddef.h>
#include <stdint.h>

#include "gputrace/trace.h"

/* How the inputs' clocks are put on one timeline. */
enum gt_merge_align_mode {
	GT_MERGE_ALIGN_WALL_CLOCK = 0, /* each header's wall-clock anchor */
	GT_MERGE_ALIGN_NCCL,           /* the anchors, corrected by NCCL collectives' ends */
	GT_MERGE_ALIGN_MODE_MAX
};

/* The slack gputrace merge uses (docs/merge.md): records of different inputs may be this
 * far out of timestamp order, which makes the merged file smaller and faster to write. */
#define GT_MERGE_SLACK_DEFAULT_NS 1000000ull

/* Pids a merge gives to processes whose pid another input already used: from here up, above
 * every Linux pid (at most 2^22) and the exporters' GPU pseudo-processes (5,000,000 + n). */
#define GT_MERGE_PID_BASE (1u << 28)

struct gt_merge_options {
	unsigned align;                  /* enum gt_merge_align_mode */
	const char *cmdline;             /* the merged header's command line; NULL: none */
	struct gt_writer_options writer; /* chunk size, compression level of the output */
	/* An input's records go on while they are at most this much later than the next
	 * input's (0: the strict merge order): longer runs from one input, which encode
	 * smaller and faster. */
	uint64_t slack_ns;
	/* Threads the merge uses; the output is the same, byte for byte, with any number.
	 * 0 or 1: this one does everything. 2: a writer thread encodes, compresses and
	 * writes the merged file while this one reads and merges. 3 and more: of the
	 * threads past 2, (threads - 1) / 2 decompress and decode every input ahead of the
	 * merge (two batches of about 256 KiB per input), and (threads - 2) / 2 compress
	 * the merged file's chunks (writer.compress_threads, unless that is set). */
	unsigned threads;
};

/* What the merge learned about one input; valid until gt_merge_free(). */
struct gt_merge_input {
	const char *path; /* as given */
	uint32_t version; /* its format version */
	uint32_t clock_id;
	uint64_t start_realtime_ns; /* its header's anchor */
	uint64_t start_trace_ns;
	const char *hostname; /* its header's strings, copied */
	const char *cmdline;

	/* after gt_merge_align() */
	unsigned align;         /* enum gt_input_align */
	int64_t wall_offset_ns; /* the header anchors' offset from the first input's */
	int64_t offset_ns;      /* added to its timestamps: wall_offset_ns + the NCCL correction */
	uint64_t collectives;   /* NCCL collectives paired with the reference's (--align nccl) */
	int64_t spread_lo_ns;   /* 10th and 90th percentile of the per-collective estimates, */
	int64_t spread_hi_ns;   /*   minus offset_ns (how far they scatter) */
	uint64_t unpaired;      /* its NCCL collectives with no partner in the reference */

	/* after gt_merge_write() */
	uint64_t records; /* records read */
	uint64_t records_by_type[GT_REC_MAX];
	uint64_t chunks_skipped; /* damaged or cut chunks: counted as a damaged_file loss */
	uint64_t bytes_skipped;
	uint64_t records_skipped; /* unknown kinds (a newer writer) or malformed */
	bool recovered;           /* no footer: its chunks were found by scanning */
	uint32_t processes;       /* distinct pids */
	uint32_t renamed;         /* of those, given a new pid (another input had it) */
};

/* Why a call failed: which input (an index into the paths, or SIZE_MAX for none) and a
 * static or per-merge one-line reason. `other` is the earlier input a duplicate repeats. */
struct gt_merge_error {
	size_t input;
	size_t other;
	const char *msg;
};

struct gt_merge;

/* Open every input (paths[0..n-1], n >= 1) and check that none is given twice. Each input
 * holds an open file until gt_merge_write() has read it to its end.
 * Returns 0 and *ret, or -errno with *err filled (err may be NULL):
 *   the reader's error for an unreadable input (-ENOENT, -EINVAL, -EPROTONOSUPPORT, -EMFILE
 *   when the process may not open that many files, ...);
 *   -EEXIST when input `input` is input `other` again: the same file (device and inode) or
 *   a copy of it (the same header, to the nanosecond of its start, and the same size);
 *   -EINVAL for n == 0 or an unknown align mode; -ENOMEM. */
int gt_merge_open(const char *const *paths, size_t n, const struct gt_merge_options *opts,
                  struct gt_merge **ret, struct gt_merge_error *err);

/* Work out each input's clock offset (gt_merge_input()'s align fields). With
 * GT_MERGE_ALIGN_NCCL this reads every input once more (docs/merge.md).
 * Returns 0; -ENODATA when NCCL alignment was asked for and no input holds an NCCL collective;
 * a reader's -errno naming the input; -ENOMEM. */
int gt_merge_align(struct gt_merge *m, struct gt_merge_error *err);

/* Write the merged trace to `path` (through PATH.tmp-<pid>, renamed when complete), reading
 * each input once, and close the inputs. Calls gt_merge_align() first if it was not called.
 * Returns 0 or -errno (err names the input for a read error, none for a write error). */
int gt_merge_write(struct gt_merge *m, const char *path, struct gt_merge_error *err);

size_t gt_merge_count(const struct gt_merge *m);
const struct gt_merge_input *gt_merge_input(const struct gt_merge *m, size_t i);

/* Index of the input the NCCL offsets are relative to, or SIZE_MAX (no NCCL alignment). */
size_t gt_merge_nccl_reference(const struct gt_merge *m);

/* Counts of the written file (per record type, first/last timestamp); NULL before
 * gt_merge_write() succeeded. */
const struct gt_trace_counts *gt_merge_counts(const struct gt_merge *m);

/* "wall clock", "nccl", "none" (enum gt_input_align); "unknown" otherwise. */
const char *gt_merge_align_name(unsigned align);

/* Does this kernel name belong to an NCCL collective? NCCL's kernels as the exporters know
 * them (the name, or a mangled global function's after "_Z<digits>", starts with "nccl", or
 * it holds "ncclKernel" or "ncclDevKernel"), but not SendRecv kernels (docs/merge.md). */
bool gt_merge_is_collective(const char *name, size_t len);

/* Free everything and close the inputs still open. NULL is accepted. */
void gt_merge_free(struct gt_merge *m);

#endif /* GPUTRACE_MERGE_H */
