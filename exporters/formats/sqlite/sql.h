/* SQL over a trace: the SQLite export in Nsight Systems' documented schema (plus GPUTRACE_
 * tables of our own), and the queries `gputrace sql` runs on it. Runs in the CLI.
 * The schema, table by table, and how it differs from Nsight Systems': docs/sql.md. */
#ifndef GPUTRACE_SQL_H
#define GPUTRACE_SQL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "gputrace/trace.h"

/* Bumped whenever the exported tables change; `gputrace sql` re-exports a cached database
 * whose META_DATA_EXPORT row GPUTRACE_SCHEMA_VERSION differs. */
#define GT_SQL_SCHEMA_VERSION "6"

/* The version of Nsight Systems' schema the standard tables follow (its
 * META_DATA_EXPORT EXPORT_SCHEMA_VERSION; the 2026.4 release documents 3.28.1). */
#define GT_SQL_NSYS_SCHEMA_VERSION "3.28.1"

struct gt_sql_export_options {
	int demangle;  /* 1: demangledName/shortName hold demangled names (mangledName always
	                * holds the name as CUPTI reported it) */
	int cache_mib; /* SQLite page cache while loading, MiB; 0: 16. The index builds
	                * sort in twice as much and cache a quarter of it */
	void (*progress)(void *ctx, uint64_t done, uint64_t total); /* may be NULL */
	void *progress_ctx;
	/* the output the database is created through (src/output/output.h), opened on path and
	 * committed by the caller; NULL: one of its own, committed when the export succeeded */
	struct gt_output *out;
	/* what the database is an export of (exporter.h, gt_export_identity), stored as
	 * META_DATA_EXPORT's GPUTRACE_SOURCE for gt_sql_db_fresh; NULL: none */
	const char *identity;
};

struct gt_sql_export_result {
	uint64_t rows;         /* rows inserted, every table */
	uint64_t bytes;        /* size of the database */
	uint64_t records;      /* trace records read */
	uint64_t lost_chunks;  /* damaged chunks the reader skipped (also in GPUTRACE_LOSSES) */
	uint64_t lost_records; /* malformed records the reader skipped (likewise) */
	uint64_t load_cpu_ns;  /* CPU time reading and inserting (this thread) */
	uint64_t index_cpu_ns; /* CPU time building the indexes afterwards (this thread) */
};

/* Export every record `r` yields into a new SQLite database at `path`. The database is
 * built as "<path>.tmp-<pid>" and renamed over `path` only when complete, so `path` is
 * either the old file or a whole new one; on failure the temporary file is removed.
 * A truncated or damaged trace exports what the reader recovers; what it skipped goes into
 * GPUTRACE_LOSSES (source 'damaged_file').
 *
 * opts may be NULL (demangled names, 16 MiB cache). res may be NULL.
 * Returns 0, or -errno: -EINVAL for "-" as the path, -ENOMEM, -EIO/-ENOSPC/... from
 * SQLite or the file system, or the reader's -errno. On failure *errmsg (if errmsg is
 * non-NULL) says what went wrong; it stays valid until the next call from this thread. */
int gt_sql_export(struct gt_reader *r, const char *path, const struct gt_sql_export_options *opts,
                  struct gt_sql_export_result *res, const char **errmsg);

enum gt_sql_format {
	GT_SQL_FORMAT_TABLE = 0, /* aligned columns for people; long values cut at 80 chars */
	GT_SQL_FORMAT_CSV,       /* RFC 4180, a header row, NULL as an empty field */
	GT_SQL_FORMAT_JSON,      /* a JSON array of one object per row, NULL as null */
	GT_SQL_FORMAT_MAX
};

/* Parse "table", "csv" or "json". Returns 0 or -EINVAL. */
int gt_sql_parse_format(const char *name, unsigned *format);

/* What SQLite said about a query it rejected. */
struct gt_sql_error {
	char message[512]; /* SQLite's own message */
	int offset;        /* byte offset into the query where SQLite found the error; -1 if
	                    * it does not say (SQLite < 3.38, or an error while running) */
};

/* Run every statement of `sql` on the database at db_path (opened read-write: Nsight
 * Systems' own recipes ALTER and UPDATE tables) and print each result set to `out` in
 * `format`: CSV sets are separated by an empty line, JSON sets each make one array.
 * Table output measures its columns on the first 1000 rows and streams the rest, so
 * memory stays flat however many rows come back.
 *
 * Returns the number of statements run (>= 0), -EBADMSG when SQLite rejected a statement
 * (err filled; the statements before it ran), -ENOENT when there is no database, -EIO when
 * writing to `out` failed, -EINVAL for a bad format, -ENOMEM. */
int gt_sql_query(const char *db_path, const char *sql, FILE *out, unsigned format,
                 struct gt_sql_error *err);

/* Print the database's tables, one per line with its row count, as `format`.
 * Returns 0, -ENOENT, -EBADMSG (err filled: not a database), -EIO, -ENOMEM. */
int gt_sql_tables(const char *db_path, FILE *out, unsigned format, struct gt_sql_error *err);

/* Whether db_path holds an export of trace_path that `gputrace sql` may reuse: it exists,
 * was modified after the trace, was written by this schema version and, with identity
 * non-NULL, records that it is an export of exactly that (GPUTRACE_SOURCE: this trace file,
 * this window, this gputrace; a window's export is not the whole trace's).
 * Returns 1 (reuse), 0 (export again), or -errno from stat() of the trace. */
int gt_sql_db_fresh(const char *trace_path, const char *db_path, const char *identity);

/* True when `path` starts with SQLite's file header ("SQLite format 3"). */
bool gt_sql_is_database(const char *path);

#endif /* GPUTRACE_SQL_H */
