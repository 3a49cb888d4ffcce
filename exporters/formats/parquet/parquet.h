/* A Parquet file writer for flat tables: INT64, DOUBLE and UTF-8 string columns, REQUIRED
 * or OPTIONAL. Strings are dictionary-encoded (a PLAIN dictionary page, then RLE_DICTIONARY
 * data pages), and so are the INT64 column chunks of at most 1,024 distinct values (ids,
 * launch shapes: a chunk of one value costs a few bytes); other INT64 chunks are
 * DELTA_BINARY_PACKED (timestamps and growing ids take a few bits a value), doubles PLAIN.
 * Data pages (v1) are compressed with ZSTD (a column whose last chunk ZSTD shrank by less
 * than a tenth is stored UNCOMPRESSED, ZSTD tried again every 16th row group); row groups hold a bounded number of rows, each
 * column chunk with its min/max statistics and null count. Rows are added a value at a time
 * (pq_put_*, one per column in order, then pq_row_end); a column holds its row group's
 * values as runs of equal values until its runs turn out short. The format:
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
/* A value of the SQL layer (exporters/formats/sqlite/sqlite.c's, laid out alike): kinds
 * as SQLite numbers them. */
enum {
	PQ_VAL_INT = 1,
	PQ_VAL_FLOAT = 2,
	PQ_VAL_TEXT = 3,
	PQ_VAL_NULL = 5,
};

struct pq_val {
	union {
		int64_t i;
		const char *s;
		double d;
	} u;
	int32_t len; /* text bytes, -1: up to the NUL */
	int32_t kind;
};

/* Column col the value v in every row, before the first: pq_put_row passes it over (its src
 * entry is not read). Only a NULL (in an OPTIONAL column), an integer in an INT64 column or a
 * real in a DOUBLE one; else -EINVAL. pq_put_* still take a value for it, and drop it. */
int pq_const(struct pq_file *f, unsigned col, const struct pq_val *v);
/* A whole row at once: column c's value is *src[c]. An integer in a string column is its
 * decimal text, in a double column a double; a real or a text elsewhere is -EINVAL. Then
 * as pq_row_end(). */
int pq_put_row(struct pq_file *f, const struct pq_val *const *src);
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
/* v[0..n) DELTA_BINARY_PACKED: blocks of 128 deltas (modulo 2^64) in 4 miniblocks of 32,
 * each at the bit width of its largest delta above the block's least. Exposed for its
 * unit test. */
void pq_delta_binary(struct pq_buf *b, const int64_t *v, size_t n);

#endif /* GPUTRACE_PARQUET_H */
