/* Windows of a trace: a time range (given in seconds from the start, as wall-clock time, or
 * as the Nth to Mth occurrences of an NVTX range) and filters by process, rank, device and
 * stream, put between a gt_reader and whatever consumes it (every exporter), so that a window
 * from the middle of a long trace reads only the chunks it needs. Runs in the CLI.
 * The rules (what is kept, how slices at an edge are cut): docs/cli.md, "Windows". */
#ifndef GPUTRACE_WINDOW_H
#define GPUTRACE_WINDOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gputrace/trace.h"

#define GT_WINDOW_MAX_IDS 64u /* pids, ranks, devices or streams one window lists */

/* What a window keeps. All zero: everything. */
struct gt_window {
	uint64_t from_ns; /* trace clock; 0: from the start */
	uint64_t to_ns;   /* trace clock, not included; 0: to the end */
	uint32_t pids[GT_WINDOW_MAX_IDS];
	unsigned npids; /* 0: every process */
	int32_t ranks[GT_WINDOW_MAX_IDS];
	unsigned nranks; /* 0: every rank (processes without a rank too) */
	uint32_t devices[GT_WINDOW_MAX_IDS];
	unsigned ndevices; /* 0: every device */
	uint32_t streams[GT_WINDOW_MAX_IDS];
	unsigned nstreams; /* 0: every stream */
};

/* A window has a time range. */
static inline bool gt_window_timed(const struct gt_window *w)
{
	return w->from_ns || (w->to_ns && w->to_ns != UINT64_MAX);
}

/* A window keeps less than the whole trace. */
bool gt_window_any(const struct gt_window *w);

/* What a window kept, for the closing line and the tests. */
struct gt_window_stats {
	uint64_t kept;      /* records handed on */
	uint64_t dropped;   /* records left out */
	uint64_t clipped;   /* slices cut at an edge of the time range */
	uint64_t carried;   /* memory records from before the window moved to its start */
	unsigned rank_pids; /* processes the ranks asked for matched */
	uint64_t chunks_read;
	uint64_t chunks_passed; /* chunks the index let it pass over, never read */
};

/* What a trace holds that a window's filters can name (select.c): every process (pid), the
 * ranks of those that have one, CUDA devices and streams, in order of appearance. Lists
 * longer than GT_WINDOW_SELECTABLE_MAX are cut there, with more_* set. */
#define GT_WINDOW_SELECTABLE_MAX 1024u
struct gt_window_selectable {
	uint32_t pids[GT_WINDOW_SELECTABLE_MAX];
	uint32_t ranks[GT_WINDOW_SELECTABLE_MAX];
	uint32_t devices[GT_WINDOW_SELECTABLE_MAX];
	uint32_t streams[GT_WINDOW_SELECTABLE_MAX];
	unsigned npids, nranks, ndevices, nstreams;
	bool more_pids, more_ranks, more_devices, more_streams;
};

/* Read them from r's definitions (its state chunks when it has an index). Rewinds r.
 * Returns 0 and *ret (free with gt_window_selectable_free), -ENOMEM or the reader's
 * -errno. */
int gt_window_selectable(struct gt_reader *r, struct gt_window_selectable **ret);
void gt_window_selectable_free(struct gt_window_selectable *s);

/* What window w keeps, written down the same way every time (for an export that records
 * which window it holds): "@FROM..@TO pid=1,2 rank=0 device=0 stream=7", the time range on the
 * trace clock; empty for the whole trace. */
void gt_window_describe(const struct gt_window *w, char *buf, size_t bytes);

/* The names of r's NVTX ranges (push/pop and start/end) as --nvtx names them (NAME#K under
 * NAME), the most frequent first, at most max of them, as "forward (240), ProfilerStep#0..11
 * (12), step (20) and 3 more" into buf (empty when none). Rewinds r. Returns the number of
 * distinct names, or -errno. */
int gt_window_nvtx_names(struct gt_reader *r, char *buf, size_t bytes, unsigned max);

struct gt_window_filter;

/* Put window w on reader r: every gt_reader_next of r (an exporter's too) then returns only
 * what the window keeps, cut at its edges, and reads only the chunks it needs when the file
 * has an index with chunk types (docs/format.md); other files are read whole and filtered.
 * Ranks are resolved first, from the processes' records (a pass over the state chunks).
 * Rewinds r. The filter borrows r: close it before r. Returns 0 and *ret, -ENOMEM, or the
 * reader's -errno. */
int gt_window_open(struct gt_reader *r, const struct gt_window *w, struct gt_window_filter **ret);

/* The window's counts so far (chunks: the reader's, since it was opened or rewound). */
void gt_window_stats(const struct gt_window_filter *f, struct gt_window_stats *st);

/* Take the window off its reader and free it. NULL is accepted. */
void gt_window_close(struct gt_window_filter *f);

/* The two halves of the filter, for a consumer that reads chunks or records on its own (a
 * transform): whether chunk c can hold anything the window keeps; and the record to hand
 * on for rec (rec, or a copy cut at the window's edges, valid until the next call), NULL to
 * leave it out. */
bool gt_window_chunk(struct gt_window_filter *f, const struct gt_chunk_info *c);
const union gt_record *gt_window_record(struct gt_window_filter *f, const union gt_record *rec);

/* ---- times -------------------------------------------------------------------------- */

/* A time on the trace clock from what a user typed, with zero_ns the trace's zero
 * (gt_reader_times, docs/cli.md "Time"):
 *   "90", "2.5", "90s", "1m30s", "1h", "250ms", "10us", "5ns"  seconds (or units) after zero
 *   "+2s"            that long after `base_ns` (for --to: after --from); base_ns 0: zero
 *   "@1000000000000" trace-clock nanoseconds, as `gputrace info` shows them
 *   "2024-05-01T12:00:03.5Z", "2024-05-01 14:00:03+02:00", "2024-05-01T12:00:03" wall-clock
 *                    time (the last in the local time zone), through the header's anchor
 * Returns 0 and *ret_ns (a wall-clock time before the trace's clock began gives 0),
 * -EINVAL (not a time), or -ERANGE (too large). */
int gt_window_parse_time(const char *s, const struct gt_trace_header *h, uint64_t zero_ns,
                         uint64_t base_ns, uint64_t *ret_ns);

/* A comma-separated list of numbers ("3", "0,2,5") appended to ids (at most
 * GT_WINDOW_MAX_IDS in all). Returns 0, -EINVAL, or -E2BIG. */
int gt_window_parse_ids(const char *s, bool is_signed, void *ids, unsigned *n);

/* ---- NVTX ranges ---------------------------------------------------------------------- */

/* "NAME", "NAME:N" or "NAME:N..M" (N, M >= 0; "NAME:N.." to the last one). */
struct gt_nvtx_spec {
	char name[256];
	uint64_t first, last; /* ordinals, both included; 0 and UINT64_MAX: all */
};

/* Returns 0, or -EINVAL (with no name, a bad range, or a name of 256 bytes or more). */
int gt_window_parse_nvtx(const char *s, struct gt_nvtx_spec *spec);

/* What a search for NVTX ranges found. */
struct gt_nvtx_found {
	uint64_t from_ns, to_ns;          /* earliest start, latest end of the ranges selected */
	uint64_t ranges;                  /* ranges selected */
	unsigned processes;               /* processes they were found in */
	uint64_t first, last;             /* smallest and largest ordinal selected */
	uint64_t named;                   /* ranges of that name, selected or not */
	uint64_t named_first, named_last; /* their smallest and largest ordinal */
};

/* Find the ranges of spec in r, in the processes `scope` keeps (its pids and ranks; its
 * time is not used; NULL: every process). A range matches when its message is NAME, or NAME
 * then '#' and a number (PyTorch's "ProfilerStep#12"); its ordinal is that number, else its
 * place among the ranges of that name in its process, counting from 0. Push/pop and
 * start/end ranges count; marks do not. Reads the chunks that hold NVTX ranges or state
 * (the whole file without an index), then rewinds r. Returns 0 (found->ranges may be 0) or
 * the reader's -errno. */
int gt_window_find_nvtx(struct gt_reader *r, const struct gt_window *scope,
                        const struct gt_nvtx_spec *spec, struct gt_nvtx_found *found);

/* Put a filter on r that reads only the chunks holding NVTX ranges or state, and hands out
 * only NVTX ranges, strings and processes (for step detection, exporters/model/steps.c, without
 * the rest of the trace); rewinds r. Remove it with gt_reader_set_filter(r, NULL). Returns 0
 * or -errno. */
int gt_window_nvtx_only(struct gt_reader *r);

/* ---- sizes ---------------------------------------------------------------------------- */

/* Records of r in window w, estimated from the index without reading a chunk: state chunks
 * whole, event chunks by how much of their time range the window covers. Returns 0 and
 * *records, or -ENODATA when the file has no index (a trace cut short). */
int gt_window_estimate(struct gt_reader *r, const struct gt_window *w, uint64_t *records);

/* Records of r that window w keeps, exactly (strings and the metadata of processes, threads,
 * devices, contexts, streams and clocks not counted), by reading what the window reads; it
 * stops once past `limit` (*records is then limit + 1). Rewinds r. Returns 0 or -errno. */
int gt_window_count(struct gt_reader *r, const struct gt_window *w, uint64_t limit,
                    uint64_t *records);

/* Time ranges that cut [from_ns, to_ns) into pieces of about `records` records each (at
 * least one), from the index as gt_window_estimate; at most max pieces are written to
 * bounds (bounds[0] = from_ns, bounds[n] = to_ns). Returns n >= 1, or -ENODATA, -E2BIG. */
int gt_window_cut(struct gt_reader *r, const struct gt_window *w, uint64_t records,
                  uint64_t *bounds, unsigned max);

#endif /* GPUTRACE_WINDOW_H */
