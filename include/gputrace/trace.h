/* The .gtrace file: a header, self-contained zstd chunks of encoded records, a footer index.
 * Writer and streaming reader; used by the CLI and, in standalone mode, inside the traced
 * application. Byte layout: docs/format.md. Installed, with libgputrace.so and gputrace.pc:
 * `pkg-config --cflags --libs gputrace` (docs/library.md). */
#ifndef GPUTRACE_TRACE_H
#define GPUTRACE_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gputrace/record.h"

#define GT_TRACE_MAGIC   "GTRACE\r\n" /* 8 bytes, no NUL */
#define GT_TRACE_VERSION 1u

/* What the header says about the run. Strings are owned by whoever filled the struct. */
struct gt_trace_info {
	uint32_t clock_id;          /* enum gt_clock_id of every timestamp in the file */
	uint64_t start_realtime_ns; /* wall clock when the trace started */
	uint64_t start_trace_ns;    /* trace clock at the same moment */
	const char *hostname;
	const char *cmdline;      /* what was traced */
	const char *tool_version; /* gputrace version that wrote it */
	const char *cuda_version; /* e.g. "13.0"; NULL or "" if unknown */
	const char *cupti_version;
	const char *driver_version;
};

/* Record types that every window of a trace needs, whatever its time: definitions later
 * records refer to (strings, processes, threads, devices, contexts, streams, clock anchors,
 * and a merged trace's inputs and origins) and the state of GPU memory, which carries over
 * time (allocations and memory pools). The writer puts them in chunks of their own, in the
 * order written, so that a windowed read passes over the event chunks outside its window yet
 * reads all of these (docs/format.md, "Footer"). */
#define GT_TRACE_STATE_TYPES                                                                       \
	((1ull << GT_REC_STRING) | (1ull << GT_REC_PROCESS) | (1ull << GT_REC_THREAD) |            \
	 (1ull << GT_REC_DEVICE) | (1ull << GT_REC_CONTEXT) | (1ull << GT_REC_STREAM) |            \
	 (1ull << GT_REC_MEMORY) | (1ull << GT_REC_MEMORY_POOL) | (1ull << GT_REC_CLOCK) |         \
	 (1ull << GT_REC_INPUT) | (1ull << GT_REC_ORIGIN) | (1ull << GT_REC_STACK) |               \
	 (1ull << GT_REC_MODULE) | (1ull << GT_REC_GPU_METRIC) | (1ull << GT_REC_PYCODE) |       \
	 (1ull << GT_REC_PYLINE))

/* Per-file totals kept by the writer and stored in the footer. */
struct gt_trace_counts {
	uint64_t records[GT_REC_MAX]; /* by enum gt_rec_type */
	uint64_t first_ts_ns;         /* smallest timestamp seen; UINT64_MAX if none */
	uint64_t last_ts_ns;          /* largest */
	uint64_t chunks;
};

/* libgputrace's API, exported from libgputrace.so (see record.h) */
#pragma GCC visibility push(default)

struct gt_writer;

struct gt_writer_options {
	int zstd_level;     /* 0 = default (1) */
	size_t chunk_bytes; /* uncompressed bytes per chunk; 0 = default (1 MiB) */
	/* > 0: chunks are written by a thread of the writer from a queue of compressed
	 * chunks; gt_writer_full() says when this many bytes wait (the caller then stops
	 * adding records until there is room: gt_writer_wait_space, gt_writer_wake_fd).
	 * 0: each chunk is written by the caller, in gt_writer_write. */
	size_t queue_bytes;
	/* With a queue: gt_writer_wait_space and gt_writer_close give up (-ETIMEDOUT) once no
	 * write or sync has returned for this long; 0 = wait as long as it takes. */
	uint64_t stall_ns;
	/* A close that fails leaves PATH.tmp-<pid> in place (readable: the reader recovers
	 * its complete chunks) instead of removing it. */
	bool keep_partial;
	/* > 0: the chunks are compressed by this many threads of the writer's own (at most
	 * GT_WRITER_COMPRESS_THREADS_MAX), up to one chunk more than threads at once, and
	 * written in the order they were filled: the file is the same, byte for byte, at
	 * the cost of about 3 MiB per chunk in flight (with 1 MiB chunks). 0: each chunk is
	 * compressed by the caller, in gt_writer_write and gt_writer_flush. */
	unsigned compress_threads;
};

/* Most compress_threads a writer starts. */
#define GT_WRITER_COMPRESS_THREADS_MAX 16u

/* Default queue_bytes of gputrace run and the standalone writer. */
#define GT_WRITE_QUEUE_DEFAULT_BYTES (64u << 20)

/* Create PATH.tmp-<pid>; gt_writer_close() renames it to PATH. opts may be NULL.
 * Returns 0 and *ret, or -errno (-EEXIST never: the caller decides about overwriting). */
int gt_writer_open(const char *path, const struct gt_trace_info *info,
                   const struct gt_writer_options *opts, struct gt_writer **ret);

/* Append one record (any type, strings included). The record is copied.
 * Returns 0, -EINVAL for a malformed record, or -errno from I/O. */
int gt_writer_write(struct gt_writer *w, const struct gt_rec_hdr *rec);

/* Convenience: append a GT_REC_STRING. */
int gt_writer_string(struct gt_writer *w, uint32_t pid, uint32_t id, const char *s, size_t len);

/* Compress and write (or queue) the pending chunk now (bounds what a crash of the writer can
 * lose). Never waits for the queue. */
int gt_writer_flush(struct gt_writer *w);

/* With a queue: true while it holds queue_bytes or more; a drain stops reading rings then
 * (the rings hold the records, or count what they drop) until there is room. Always false
 * without a queue. Any thread. */
bool gt_writer_full(const struct gt_writer *w);

/* Wait until the queue has room (returns at once without a queue). Returns 0, the writer's
 * error, or -ETIMEDOUT when its writes stalled for stall_ns (sticky, as write errors are). */
int gt_writer_wait_space(struct gt_writer *w);

/* An fd that polls readable after the writer thread wrote something (read it to re-arm);
 * -1 without a queue. Owned by the writer. */
int gt_writer_wake_fd(const struct gt_writer *w);

/* Write and sync calls that returned so far, by any thread: the writer's sign of life.
 * Any thread. */
uint64_t gt_writer_progress(const struct gt_writer *w);

const struct gt_trace_counts *gt_writer_counts(const struct gt_writer *w);

/* Flush, write the footer, wait for the writer thread to write everything, fsync, rename to
 * the final path, free. Returns 0 or -errno; the writer is freed either way. On an error the
 * temporary file is removed (unless keep_partial); on -ETIMEDOUT (stall_ns passed without a
 * write or sync returning) it stays, with its writer thread, which closes it if its call
 * ever returns and writes nothing more. NULL is accepted. */
int gt_writer_close(struct gt_writer *w);

/* Drop everything: stop the writer thread (bounded by stall_ns), remove the temporary file
 * and free. NULL is accepted. */
void gt_writer_discard(struct gt_writer *w);

struct gt_reader;

/* Header of an open file, owned by the reader. */
struct gt_trace_header {
	uint32_t version;
	struct gt_trace_info info; /* strings point into the reader */
};

/* How the reader got through the file: what it read and, exactly, what it skipped
 * (docs/format.md, "Reading, and what a reader does with damage"). A chunk is skipped when
 * its checksum, its zstd frame or its chunk header fails, or the file ends inside it; its
 * bytes are those it took in the file (without an index: up to the next chunk header that
 * checks), never the footer's. */
struct gt_reader_status {
	bool recovered;           /* no valid footer: chunks were found by scanning */
	uint64_t chunks_read;     /* valid chunks decoded so far */
	uint64_t chunks_skipped;  /* damaged chunks passed over */
	uint64_t bytes_skipped;   /* the bytes they took in the file */
	uint64_t records_skipped; /* unknown or malformed records inside valid chunks; after a
	                           * length that runs past the payload, every record the chunk
	                           * header counts from there on */
	uint64_t chunks_passed;   /* chunks a filter's chunk function passed over, never read */
	uint64_t records_dropped; /* records a filter's record function dropped */
	/* appended: the records the skipped chunks held, as the index or their own header says
	 * (none for a chunk whose header is damaged in a file without an index) */
	uint64_t chunk_records_skipped;
};

/* One chunk as the footer's index describes it. */
struct gt_chunk_info {
	uint64_t offset;      /* of its chunk header in the file */
	uint32_t comp_bytes;  /* its zstd frame */
	uint32_t raw_bytes;   /* its payload, decompressed */
	uint32_t records;     /* records in it */
	uint64_t first_ts_ns; /* smallest non-zero time field of its records (0: none); every
	                       * time field of every record in it is in [first, last] */
	uint64_t last_ts_ns;  /* largest */
	uint64_t types;       /* bit t set: holds a record of type t; bit 0: records the writer
	                       * did not classify. All bits set when have_types is false. */
	bool have_types;      /* the index says which types (format.md: index entries of 48
	                       * bytes); files from before say nothing, so any type may be there */
};

/* A filter between the file and gt_reader_next: a windowed read. */
struct gt_reader_filter {
	/* Asked for each chunk before it is read, when the file has an index: false passes
	 * over the chunk without reading it (counted in status.chunks_passed). Without an
	 * index (a file cut short) every chunk is read. NULL: every chunk. */
	bool (*chunk)(void *ctx, const struct gt_chunk_info *c);
	/* Asked for each record decoded (strings are entered into the string table first):
	 * returns the record to hand out, rec itself or a copy it owns until its next call,
	 * or NULL to drop it (counted in status.records_dropped). NULL: every record. */
	const union gt_record *(*record)(void *ctx, const union gt_record *rec);
	void *ctx; /* passed to both; borrowed */
};

/* Open and validate the header (and footer, if present). On failure returns -errno and,
 * if errmsg is non-NULL, a static one-line description ("not a gputrace file (bad magic)",
 * "written by a newer gputrace (format 3, this reader knows 1)", "truncated header", ...).
 * -EINVAL bad magic/corrupt, -EPROTONOSUPPORT newer version, -EIO/-ENOENT/... from the OS. */
int gt_reader_open(const char *path, struct gt_reader **ret, const char **errmsg);

const struct gt_trace_header *gt_reader_header(const struct gt_reader *r);

/* Next record in file order. Returns 1 and *rec (valid until the next call), 0 at the end,
 * or -errno. String records are returned too, and also entered into the reader's table.
 * Unknown record types are skipped and counted in status.records_skipped; damaged chunks are
 * skipped and counted in status (gt_reader_status). */
int gt_reader_next(struct gt_reader *r, const union gt_record **rec);

/* The next records of the types set in `types` (bit t: enum gt_rec_type t), in file order,
 * copied into buf as the record structs of record.h, one every `stride` bytes (header
 * included; the bytes of a slot after its record are zeroed): room for cap of them. Records
 * of other types are read past; string records still enter the string table, so
 * gt_reader_string knows every id the copied records name. For bindings that view a batch as
 * arrays (Python's numpy: one structured view per type, selected by hdr.type). Returns the
 * records copied (0 at the end; fewer than cap only at the end), -EINVAL when types is 0 or
 * holds GT_REC_NONE, GT_REC_STRING (not of fixed size) or an unknown type, when stride is not
 * a multiple of 8 or smaller than one of the types' gt_record_desc()->size, or buf is NULL
 * with cap > 0; or -errno from reading (that batch is then lost). */
int gt_reader_next_batch(struct gt_reader *r, uint64_t types, void *buf, size_t stride, size_t cap);

/* Look up a string seen so far. Returns NULL if unknown. len may be NULL.
 * The pointer stays valid until gt_reader_close(). */
const char *gt_reader_string(const struct gt_reader *r, uint32_t id, size_t *len);

/* Totals from the footer; NULL if the file has none (recovered). */
const struct gt_trace_counts *gt_reader_footer_counts(const struct gt_reader *r);

/* The trace's time base: the one zero every relative time counts from and the span, as
 * docs/cli.md ("Time") defines them for every command and export. */
struct gt_trace_times {
	uint64_t zero_ns;  /* the trace's zero, on the trace clock: the earlier of the header's
	                    * start_trace_ns (when not 0) and first_ns */
	uint64_t first_ns; /* smallest non-zero time field of any record; UINT64_MAX: none */
	uint64_t last_ns;  /* largest time field of any record: where the last one ends; 0: none */
	uint64_t span_ns;  /* the trace's span: from zero_ns to last_ns (0 without records) */
	uint64_t zero_realtime_ns; /* the wall clock (ns since the Unix epoch) at zero_ns,
	                            * through the header's anchor; 0 when the header has none */
};

/* The time base of the whole file r reads, whatever filter is set on it: from the footer, or
 * in a file without one (recovered), from its chunk headers (each checked by its own crc;
 * read once and kept, the chunks themselves are not read), so that a cut-short trace counts
 * from the zero its whole trace had as long as its earliest chunk's header survived. May be
 * called at any time, also between gt_reader_next calls. Returns 0 and *t, or -errno from
 * reading the file. */
int gt_reader_times(struct gt_reader *r, struct gt_trace_times *t);

const struct gt_reader_status *gt_reader_status(const struct gt_reader *r);

/* Put a filter between the file and gt_reader_next (a copy of *f is kept; NULL removes it),
 * from the next chunk on; call it before the first gt_reader_next or after a rewind. A filter
 * stays across gt_reader_rewind. Returns 0 or -EINVAL. */
int gt_reader_set_filter(struct gt_reader *r, const struct gt_reader_filter *f);

/* Entry k (0, 1, ...) of the footer's chunk index, in file order, without reading the chunk.
 * Returns 1 and *ci, 0 past the last entry or when the file has no index, or -errno. */
int gt_reader_chunk_info(struct gt_reader *r, uint64_t k, struct gt_chunk_info *ci);

/* Rewind to the first record (for two-pass consumers). Returns 0 or -errno. */
int gt_reader_rewind(struct gt_reader *r);

/* Bytes of the file consumed so far and in total, for progress bars. */
void gt_reader_progress(const struct gt_reader *r, uint64_t *done, uint64_t *total);

void gt_reader_close(struct gt_reader *r);

/* What gt_trace_reindex found and did. */
struct gt_reindex_result {
	bool had_index;           /* the file had a valid footer */
	bool had_types;           /* ... whose entries say which record types each chunk holds */
	uint64_t records;         /* records written again */
	uint64_t records_dropped; /* records read that the writer refused (malformed) */
	uint64_t chunks_read;     /* chunks of the old file read */
	uint64_t chunks_skipped;  /* damaged chunks of the old file, lost */
	uint64_t chunks;          /* chunks of the new file */
	uint64_t bytes_before, bytes_after;
};

/* Give the trace at path a complete index with chunk types (docs/format.md, "Footer"), so that
 * windows of it read only the chunks they need: every record is read (a file without a footer
 * is recovered, chunk by chunk), written again into state and event chunks under a new
 * footer in PATH.tmp-<pid>, and that file is renamed over path; until then path is left as
 * it was. Records keep their order, but for state records moved to before the event records
 * written with them. Returns 0, the reader's error (*errmsg says which), -EPROTO when some
 * records could not be read (types of a newer gputrace, or damage: the file is left as it
 * was), or -errno from writing. */
int gt_trace_reindex(const char *path, struct gt_reindex_result *res, const char **errmsg);

#pragma GCC visibility pop

#endif /* GPUTRACE_TRACE_H */
