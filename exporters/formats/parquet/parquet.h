/* A Parquet file writer for flat tables: INT64, DOUBLE and UTF-8 string columns, REQUIRED
 * or OPTIONAL; PLAIN values, strings dictionary-encoded (a PLAIN dictionary page, then
 * RLE_DICTIONARY data pages), and so are the INT64 column chunks of at most 1,024 distinct
 * values (ids, launch shapes: a row group's values hashed once when it is written; a chunk of
 * one value costs a few bytes); data pages (v1) compressed with ZSTD; row groups of a bounded
 * number of rows, each column chunk with its min/max statistics and null count. Rows are
 * added a value at a time (pq_put_*, one per column in order, then pq_row_end). The format:
 * apache/parquet-format, parquet.thrift and Encodings.md. Runs in the CLI. */
#ifndef GPUTRACE_PARQUET_H
#define GPUTRACE_PARQUET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "thrift.h"

enum pq_type {
	PQ_INT64 = 0,
	PQ_DOUBLE,
	PQ_STRING,
};

struct pq_col {
	char name[48];
	enum pq_type type;
	bool optional;
};

struct pq_file;

/* A writer of the table cols[0..ncols) to fd (written from its current offset 0, not
 * closed), row groups of at most rg_rows rows (0: a default bound by memory). Returns 0
 * and *ret, or -ENOMEM. */
int pq_open(int fd, const struct pq_col *cols, unsigned ncols, uint32_t rg_rows,
            struct pq_file **ret);
/* The next value of the current row (columns in order). A NULL in a REQUIRED column is
 * -EINVAL at pq_row_end(). */
void pq_put_i64(struct pq_file *f, int64_t v);
void pq_put_f64(struct pq_file *f, double v);
void pq_put_str(struct pq_file *f, const char *s, size_t len);
void pq_put_null(struct pq_file *f);
/* The row complete; a full row group is written. Returns 0 or -errno. */
int pq_row_end(struct pq_file *f);
/* The last row group and the footer written. Returns 0 or -errno; *bytes: the file's size. */
int pq_finish(struct pq_file *f, uint64_t *bytes);
uint64_t pq_rows(const struct pq_file *f);
void pq_free(struct pq_file *f);

/* The RLE / bit-packed hybrid of v[0..n) at bit width bw (1..32), without a length
 * prefix: runs of 8 or more equal values from a group boundary as RLE runs, the rest
 * bit-packed in groups of 8 (the last padded with zeros). Exposed for its unit test. */
void pq_rle_hybrid(struct pq_buf *b, const uint32_t *v, size_t n, unsigned bw);

#endif /* GPUTRACE_PARQUET_H */
