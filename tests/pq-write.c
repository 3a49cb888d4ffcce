/* Writes the Parquet file that tests/parquet-writer.py reads back with DuckDB: 200,000 rows
 * of 15 columns, each a pattern that takes one of the writer's paths (one value, runs that
 * cross pages, runs of nulls, runs turning plain, dictionaries from runs and from values,
 * DELTA_BINARY_PACKED from runs and from values with wraps, doubles and strings as runs and
 * plain, two columns of one value set by pq_const), in row groups of 150,000 rows (pages of
 * 65,536). Every 1,000th row goes in a
 * value at a time (pq_put_*), the others whole (pq_put_row). parquet-writer.py computes the
 * same values. Usage: pq-write FILE */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "parquet.h"

#define ROWS   200000
#define NCOLS  15

static const struct pq_col cols[NCOLS] = {
        {"id", PQ_INT64, false},         {"one", PQ_INT64, false},
        {"runs", PQ_INT64, false},       {"many_runs", PQ_INT64, false},
        {"opt_runs", PQ_INT64, true},    {"alt", PQ_INT64, true},
        {"big", PQ_INT64, false},        {"d_runs", PQ_DOUBLE, true},
        {"d_plain", PQ_DOUBLE, false},   {"s_runs", PQ_STRING, true},
        {"s_alt", PQ_STRING, false},     {"negs", PQ_INT64, false},
        {"late", PQ_INT64, true},        {"c_null", PQ_INT64, true},
        {"c_seven", PQ_INT64, false},
};

static struct pq_val ival(int64_t v)
{
	return (struct pq_val){{.i = v}, 0, PQ_VAL_INT};
}

static struct pq_val dval(double d)
{
	return (struct pq_val){{.d = d}, 0, PQ_VAL_FLOAT};
}

static const struct pq_val null_val = {{.i = 0}, 0, PQ_VAL_NULL};

/* A pseudo-random number of i (splitmix64's finalizer), ZSTD-proof. */
static uint64_t mix(uint64_t i)
{
	uint64_t z = (i + 1) * 0x9e3779b97f4a7c15ull;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Row i's values; text in buf (two strings of at most 32 bytes). */
static void row(int64_t i, struct pq_val *v, char buf[2][32])
{
	v[0] = ival(i);
	v[1] = ival(42);
	v[2] = ival(i / 1000);
	v[3] = ival(i / 10 * 1000003);
	v[4] = (i / 5000) % 3 == 0 ? null_val : ival(i / 7000);
	v[5] = i % 3 == 0 ? null_val : ival(i % 5);
	v[6] = ival(i % 2 ? INT64_MAX - i : INT64_MIN + i);
	v[7] = i % 100000 < 50 ? null_val : dval((double)(i / 3000) * 0.5);
	v[8] = dval((double)i * 0.25);
	snprintf(buf[0], 32, "name-%" PRId64, i / 9000);
	v[9] = (i / 20000) % 2 ? null_val : (struct pq_val){{.s = buf[0]}, -1, PQ_VAL_TEXT};
	snprintf(buf[1], 32, "k%" PRId64, i % 3);
	v[10] = (struct pq_val){{.s = buf[1]}, (int32_t)strlen(buf[1]), PQ_VAL_TEXT};
	v[11] = ival(-(int64_t)(mix((uint64_t)i) >> 1));
	v[12] = i < 140000 ? null_val : ival(i);
	v[13] = ival(i); /* pq_const's columns: what they are given here is not taken */
	v[14] = ival(-i);
}

int main(int argc, char **argv)
{
	struct pq_file *f;
	struct pq_val v[NCOLS];
	const struct pq_val *src[NCOLS];
	char buf[2][32];
	uint64_t bytes;
	int fd, ret = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: pq-write FILE\n");
		return 2;
	}
	fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || pq_open(fd, cols, NCOLS, 150000, &f) < 0) {
		perror(argv[1]);
		return 1;
	}
	for (int c = 0; c < NCOLS; c++)
		src[c] = &v[c];
	/* two columns of one value each; a value pq_put_row would convert is refused */
	if (pq_const(f, 13, &null_val) < 0 || pq_const(f, 14, &(struct pq_val){{.i = 7}, 0,
	                                                                        PQ_VAL_INT}) < 0 ||
	    pq_const(f, 10, &(struct pq_val){{.i = 1}, 0, PQ_VAL_INT}) != -EINVAL ||
	    pq_const(f, 1, &null_val) != -EINVAL) {
		fprintf(stderr, "pq-write: pq_const\n");
		return 1;
	}
	for (int64_t i = 0; i < ROWS && ret == 0; i++) {
		row(i, v, buf);
		if (i % 1000 != 999) {
			ret = pq_put_row(f, src);
			continue;
		}
		for (int c = 0; c < NCOLS; c++) {
			if (v[c].kind == PQ_VAL_NULL)
				pq_put_null(f);
			else if (v[c].kind == PQ_VAL_FLOAT)
				pq_put_f64(f, v[c].u.d);
			else if (v[c].kind == PQ_VAL_TEXT)
				pq_put_str(f, v[c].u.s, strlen(v[c].u.s));
			else
				pq_put_i64(f, v[c].u.i);
		}
		ret = pq_row_end(f);
	}
	if (ret == 0)
		ret = pq_finish(f, &bytes);
	pq_free(f);
	if (ret < 0 || close(fd) < 0) {
		fprintf(stderr, "pq-write: %s\n", strerror(ret < 0 ? -ret : 5));
		return 1;
	}
	return 0;
}
