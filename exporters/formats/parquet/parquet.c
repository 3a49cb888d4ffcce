/* The Parquet file writer of the Parquet export (parquet.h). Runs in the CLI. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <zstd.h>

#include "parquet.h"

/* Parquet's enums (parquet.thrift) */
enum {
	PT_INT64 = 2,
	PT_DOUBLE = 5,
	PT_BYTE_ARRAY = 6,
	REP_REQUIRED = 0,
	REP_OPTIONAL = 1,
	CONV_UTF8 = 0,
	ENC_PLAIN = 0,
	ENC_RLE = 3,
	ENC_RLE_DICTIONARY = 8,
	CODEC_ZSTD = 6,
	PAGE_DATA = 0,
	PAGE_DICTIONARY = 2,
};

#define PAGE_ROWS 65536u
#define RG_BYTES                                                                                   \
	(8u << 20) /* a row group's buffered values: faults and cache misses grow with it */
#define RG_MAX_ROWS  (1u << 20)
#define STAT_MAX_LEN 256 /* longer strings: no min/max for the chunk */
#define NUM_DICT_MAX 1024u /* a number column of at most this many values in a row group is
                            * dictionary-encoded: ids, launch shapes, sizes */
#define NUM_DICT_SLOTS 4096u
#define ZSTD_LEVEL   1
#define MAGIC        "PAR1"

/* A column's values of the row group being built. */
struct col {
	struct pq_col def;
	uint8_t *defl; /* optional: 1 value, 0 null, per row */
	int64_t *v;    /* int64/double bits; strings: dictionary index */
	size_t nv;     /* values (non-null) */
	int64_t imin, imax;
	double dmin, dmax;
	/* strings: dictionary of this row group's values, PLAIN (4-byte length, bytes) */
	struct pq_buf dict;
	uint32_t *doff; /* offset in dict of each entry */
	uint32_t ndict, dcap;
	uint32_t *slot; /* hash table: entry + 1; 0 empty */
	uint32_t smask;
	uint64_t nulls;
};

struct pq_file {
	int fd;
	uint64_t off;
	struct col *c;
	unsigned ncols, cur;
	uint32_t rg_rows, nrows, cap; /* cap: rows the columns' arrays hold */
	uint64_t rows;
	int err;
	struct pq_buf rgs; /* serialized RowGroups */
	uint32_t nrgs;
	struct pq_buf page, zbuf;
	uint32_t *lv; /* PAGE_ROWS levels or indexes */
	ZSTD_CCtx *z;
	/* a number column's dictionary, when it has one (num_dict) */
	uint32_t *ix;                    /* cap: each value's index */
	int64_t dvals[NUM_DICT_MAX];     /* the distinct values, in order of appearance */
	uint32_t dslot[NUM_DICT_SLOTS];  /* hash table: index + 1; 0 empty */
};

static int grow(struct pq_file *f);

void pq_rle_hybrid(struct pq_buf *b, const uint32_t *v, size_t n, unsigned bw)
{
	size_t p = 0, i = 0; /* bit-packed pending from p; i: a group boundary from p */
	unsigned vbytes = (bw + 7) / 8;

	while (i <= n) {
		size_t r = 0;
		bool end = i == n;

		if (!end) {
			while (i + r < n && v[i + r] == v[i])
				r++;
		}
		if (end || r >= 8) {
			if (i > p) { /* bit-packed groups [p, i), the last padded at the end */
				size_t groups = (i - p + 7) / 8;

				th_varint(b, (uint64_t)groups << 1 | 1);
				for (size_t g = 0; g < groups; g++) {
					uint64_t acc = 0;
					unsigned nb = 0;

					for (size_t k = 0; k < 8; k++) {
						size_t j = p + g * 8 + k;
						uint64_t x = j < i ? v[j] : 0;

						acc |= x << nb;
						nb += bw;
						while (nb >= 8) {
							pq_buf_byte(b, (uint8_t)acc);
							acc >>= 8;
							nb -= 8;
						}
					}
				}
			}
			if (end)
				break;
			th_varint(b, (uint64_t)r << 1);
			for (unsigned k = 0; k < vbytes; k++)
				pq_buf_byte(b, (uint8_t)(v[i] >> (8 * k)));
			i += r;
			p = i;
		} else {
			i = i + 8 < n ? i + 8 : n;
		}
	}
}

/* n values v as one RLE run of the hybrid encoding at bit width bw (nothing for n 0). */
static void rle_run(struct pq_buf *b, uint32_t v, size_t n, unsigned bw)
{
	if (!n)
		return;
	th_varint(b, (uint64_t)n << 1);
	for (unsigned k = 0; k < (bw + 7) / 8; k++)
		pq_buf_byte(b, (uint8_t)(v >> (8 * k)));
}

int pq_open(int fd, const struct pq_col *cols, unsigned ncols, uint32_t rg_rows,
            struct pq_file **ret)
{
	struct pq_file *f = calloc(1, sizeof(*f));

	if (!f)
		return -ENOMEM;
	f->fd = fd;
	f->ncols = ncols;
	f->c = calloc(ncols ? ncols : 1, sizeof(*f->c));
	f->lv = malloc(PAGE_ROWS * sizeof(*f->lv));
	f->z = ZSTD_createCCtx();
	if (!rg_rows) {
		rg_rows = RG_BYTES / (9u * (ncols ? ncols : 1));
		if (rg_rows > RG_MAX_ROWS)
			rg_rows = RG_MAX_ROWS;
	}
	f->rg_rows = rg_rows;
	if (!f->c || !f->lv || !f->z)
		goto nomem;
	for (unsigned i = 0; i < ncols; i++) {
		struct col *c = &f->c[i];

		c->def = cols[i];
	}
	if (grow(f) < 0)
		goto nomem;
	f->off = 4;
	if (write(fd, MAGIC, 4) != 4) {
		pq_free(f);
		return -errno ? -errno : -EIO;
	}
	*ret = f;
	return 0;
nomem:
	pq_free(f);
	return -ENOMEM;
}

/* Room for twice the rows (at most a row group's) in every column. */
static int grow(struct pq_file *f)
{
	uint32_t cap = f->cap ? f->cap * 2 : 1024;

	if (cap > f->rg_rows)
		cap = f->rg_rows;
	for (unsigned i = 0; i < f->ncols; i++) {
		struct col *c = &f->c[i];
		int64_t *v = realloc(c->v, (size_t)cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		c->v = v;
		if (c->def.optional) {
			uint8_t *d = realloc(c->defl, cap);

			if (!d)
				return -ENOMEM;
			c->defl = d;
		}
	}
	{
		uint32_t *ix = realloc(f->ix, (size_t)cap * sizeof(*ix));

		if (!ix)
			return -ENOMEM;
		f->ix = ix;
	}
	f->cap = cap;
	return 0;
}

/* A dictionary of the values of number column c in the current row group, into f->dvals
 * and each value's index into f->ix, when it has at most NUM_DICT_MAX distinct values (a
 * column of timestamps gives up after the first thousand or so). Returns the dictionary's
 * size, or 0. */
static uint32_t num_dict(struct pq_file *f, const struct col *c)
{
	uint32_t n = 0;

	memset(f->dslot, 0, sizeof(f->dslot));
	for (size_t i = 0; i < c->nv; i++) {
		int64_t v = c->v[i];
		uint32_t k = (uint32_t)(((uint64_t)v * 0x9e3779b97f4a7c15ull) >> 52);

		for (;; k = (k + 1) & (NUM_DICT_SLOTS - 1)) {
			uint32_t e = f->dslot[k];

			if (e && f->dvals[e - 1] == v) {
				f->ix[i] = e - 1;
				break;
			}
			if (!e) {
				if (n == NUM_DICT_MAX)
					return 0;
				f->dvals[n] = v;
				f->dslot[k] = ++n;
				f->ix[i] = n - 1;
				break;
			}
		}
	}
	return n;
}

static uint64_t str_hash(const char *s, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < n; i++)
		h = (h ^ (uint8_t)s[i]) * 0x100000001b3ull;
	return h;
}

static void slot_rebuild(struct pq_file *f, struct col *c)
{
	uint32_t cap = c->smask ? (c->smask + 1) * 2 : 1024;
	uint32_t *s = calloc(cap, sizeof(*s));

	if (!s) {
		f->err = -ENOMEM;
		return;
	}
	free(c->slot);
	c->slot = s;
	c->smask = cap - 1;
	for (uint32_t e = 0; e < c->ndict; e++) {
		uint32_t len;

		memcpy(&len, c->dict.p + c->doff[e], 4);
		uint64_t h = str_hash((const char *)c->dict.p + c->doff[e] + 4, len);

		for (uint32_t k = (uint32_t)h & c->smask;; k = (k + 1) & c->smask) {
			if (!s[k]) {
				s[k] = e + 1;
				break;
			}
		}
	}
}

static void put(struct pq_file *f, struct col *c, int64_t v, bool null)
{
	uint32_t row = f->nrows;

	if (c->def.optional)
		c->defl[row] = !null;
	if (null) {
		c->nulls++;
		if (!c->def.optional && !f->err)
			f->err = -EINVAL;
		return;
	}
	c->v[c->nv++] = v;
}

void pq_put_i64(struct pq_file *f, int64_t v)
{
	struct col *c;

	if (f->c[f->cur].def.type == PQ_DOUBLE) {
		pq_put_f64(f, (double)v);
		return;
	}
	c = &f->c[f->cur++];
	if (c->nv == 0 || v < c->imin)
		c->imin = v;
	if (c->nv == 0 || v > c->imax)
		c->imax = v;
	put(f, c, v, false);
}

void pq_put_f64(struct pq_file *f, double d)
{
	struct col *c = &f->c[f->cur++];
	int64_t bits;

	memcpy(&bits, &d, 8);
	if (c->nv == 0 || d < c->dmin)
		c->dmin = d;
	if (c->nv == 0 || d > c->dmax)
		c->dmax = d;
	put(f, c, bits, false);
}

void pq_put_null(struct pq_file *f)
{
	put(f, &f->c[f->cur++], 0, true);
}

void pq_put_str(struct pq_file *f, const char *s, size_t len)
{
	struct col *c = &f->c[f->cur++];
	uint64_t h;
	uint32_t k, e, l32 = (uint32_t)len;

	if (c->ndict * 2 >= c->smask) {
		slot_rebuild(f, c);
		if (f->err)
			return;
	}
	h = str_hash(s, len);
	for (k = (uint32_t)h & c->smask; c->slot[k]; k = (k + 1) & c->smask) {
		uint32_t el;

		e = c->slot[k] - 1;
		memcpy(&el, c->dict.p + c->doff[e], 4);
		if (el == l32 && memcmp(c->dict.p + c->doff[e] + 4, s, len) == 0) {
			put(f, c, e, false);
			return;
		}
	}
	if (c->ndict == c->dcap) {
		uint32_t cap = c->dcap ? c->dcap * 2 : 256;
		uint32_t *n = realloc(c->doff, cap * sizeof(*n));

		if (!n) {
			f->err = -ENOMEM;
			return;
		}
		c->doff = n;
		c->dcap = cap;
	}
	e = c->ndict++;
	c->doff[e] = (uint32_t)c->dict.n;
	pq_buf_put(&c->dict, &l32, 4);
	pq_buf_put(&c->dict, s, len);
	if (c->dict.oom)
		f->err = -ENOMEM;
	c->slot[k] = e + 1;
	put(f, c, e, false);
}

static int out(struct pq_file *f, const void *p, size_t n)
{
	const uint8_t *b = p;

	while (n) {
		ssize_t w = write(f->fd, b, n);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		b += w;
		n -= (size_t)w;
		f->off += (uint64_t)w;
	}
	return 0;
}

/* A page of src[0..n): compressed, its header and body written.
 * *raw gets the uncompressed bytes with header, *comp the written ones. */
static int page_out(struct pq_file *f, const void *src, size_t n, int type, uint32_t nvals, int enc,
                    uint64_t *raw, uint64_t *comp)
{
	size_t bound = ZSTD_compressBound(n), zn;
	int ret;
	struct pq_buf hdr = {0};
	struct th t;

	f->zbuf.n = 0;
	if (f->zbuf.cap < bound) {
		uint8_t *np = realloc(f->zbuf.p, bound);

		if (!np)
			return -ENOMEM;
		f->zbuf.p = np;
		f->zbuf.cap = bound;
	}
	zn = ZSTD_compressCCtx(f->z, f->zbuf.p, bound, src, n, ZSTD_LEVEL);
	if (ZSTD_isError(zn))
		return -EIO;
	th_init(&t, &hdr);
	th_i32(&t, 1, type);
	th_i32(&t, 2, (int32_t)n);
	th_i32(&t, 3, (int32_t)zn);
	if (type == PAGE_DATA) {
		th_begin(&t, 5);
		th_i32(&t, 1, (int32_t)nvals);
		th_i32(&t, 2, enc);
		th_i32(&t, 3, ENC_RLE);
		th_i32(&t, 4, ENC_RLE);
		th_end(&t);
	} else {
		th_begin(&t, 7);
		th_i32(&t, 1, (int32_t)nvals);
		th_i32(&t, 2, ENC_PLAIN);
		th_end(&t);
	}
	th_end(&t);
	*raw += hdr.n + n;
	*comp += hdr.n + zn;
	ret = hdr.oom ? -ENOMEM : out(f, hdr.p, hdr.n);
	if (ret == 0)
		ret = out(f, f->zbuf.p, zn);
	pq_buf_free(&hdr);
	return ret;
}

static unsigned bits_for(uint32_t n)
{
	unsigned b = 1;

	while (b < 32 && (1ull << b) < n)
		b++;
	return b;
}

static void stat_bin(struct th *t, int16_t id, const void *p, size_t n)
{
	th_binary(t, id, p, n);
}

/* The column chunk of column i of the current row group: its pages written, its
 * ColumnChunk serialized to rg. */
static int chunk_out(struct pq_file *f, unsigned i, struct th *rg, uint64_t *raw_all)
{
	struct col *c = &f->c[i];
	uint64_t raw = 0, comp = 0, start = f->off, dict_off = 0, data_off;
	bool str = c->def.type == PQ_STRING;
	/* a number column of one value in this row group (ids, launch shapes, flags): a
	 * dictionary of that value and pages of indexes 0, a few bytes, instead of its values */
	bool one = c->def.type == PQ_INT64 && c->nv && c->imin == c->imax;
	/* one of few values (ids, launch shapes, sizes): a dictionary of them */
	uint32_t ndict = c->def.type == PQ_INT64 && c->nv && !one ? num_dict(f, c) : 0;
	/* a string column of nulls only has no dictionary, and its pages no values */
	bool dict = (str && c->ndict) || one || ndict;
	unsigned bw = str ? bits_for(c->ndict) : one ? 1 : ndict ? bits_for(ndict) : 0;
	const uint8_t *smin = NULL, *smax = NULL;
	uint32_t lmin = 0, lmax = 0;
	size_t vi = 0;
	int ret;

	if (str && c->ndict) {
		if (c->dict.oom)
			return -ENOMEM;
		ret = page_out(f, c->dict.p, c->dict.n, PAGE_DICTIONARY, c->ndict, ENC_PLAIN, &raw,
		               &comp);
		if (ret < 0)
			return ret;
		dict_off = start;
	} else if (one || ndict) {
		ret = one ? page_out(f, &c->imin, 8, PAGE_DICTIONARY, 1, ENC_PLAIN, &raw, &comp)
		          : page_out(f, f->dvals, (size_t)ndict * 8, PAGE_DICTIONARY, ndict,
		                     ENC_PLAIN, &raw, &comp);
		if (ret < 0)
			return ret;
		dict_off = start;
	}
	data_off = f->off;
	for (uint32_t r0 = 0; r0 < f->nrows; r0 += PAGE_ROWS) {
		uint32_t nr = f->nrows - r0 < PAGE_ROWS ? f->nrows - r0 : PAGE_ROWS;
		size_t nv = nr;

		f->page.n = 0;
		if (c->def.optional) {
			struct pq_buf lv = {0};
			uint32_t len;

			nv = 0;
			for (uint32_t r = 0; r < nr; r++)
				nv += c->defl[r0 + r];
			if (nv == 0 || nv == nr) { /* no value, or no null: one run */
				rle_run(&lv, nv != 0, nr, 1);
			} else {
				for (uint32_t r = 0; r < nr; r++)
					f->lv[r] = c->defl[r0 + r];
				pq_rle_hybrid(&lv, f->lv, nr, 1);
			}
			len = (uint32_t)lv.n;
			pq_buf_put(&f->page, &len, 4);
			pq_buf_put(&f->page, lv.p, lv.n);
			if (lv.oom)
				f->page.oom = true;
			pq_buf_free(&lv);
		}
		if (dict && one) { /* every index 0: one run */
			pq_buf_byte(&f->page, (uint8_t)bw);
			rle_run(&f->page, 0, nv, bw);
		} else if (dict) {
			for (size_t k = 0; k < nv; k++)
				f->lv[k] = ndict ? f->ix[vi + k] : (uint32_t)c->v[vi + k];
			pq_buf_byte(&f->page, (uint8_t)bw);
			pq_rle_hybrid(&f->page, f->lv, nv, bw);
		} else if (c->def.optional) {
			pq_buf_put(&f->page, c->v + vi, nv * 8);
		}
		if (f->page.oom)
			return -ENOMEM;
		/* a required number: the values as they are, without a copy */
		if (!dict && !c->def.optional)
			ret = page_out(f, c->v + vi, nv * 8, PAGE_DATA, nr, ENC_PLAIN, &raw, &comp);
		else
			ret = page_out(f, f->page.p, f->page.n, PAGE_DATA, nr,
			               dict ? ENC_RLE_DICTIONARY : ENC_PLAIN, &raw, &comp);
		vi += nv;
		if (ret < 0)
			return ret;
	}
	*raw_all += raw;

	th_begin(rg, 0); /* ColumnChunk */
	th_i64(rg, 2, (int64_t)start);
	th_begin(rg, 3); /* ColumnMetaData */
	th_i32(rg, 1, str ? PT_BYTE_ARRAY : c->def.type == PQ_DOUBLE ? PT_DOUBLE : PT_INT64);
	th_list(rg, 2, TH_I32, dict ? 3 : 2);
	th_varint(rg->b, th_zigzag(ENC_PLAIN));
	th_varint(rg->b, th_zigzag(ENC_RLE));
	if (dict)
		th_varint(rg->b, th_zigzag(ENC_RLE_DICTIONARY));
	th_list(rg, 3, TH_BINARY, 1);
	th_binary(rg, 0, c->def.name, strlen(c->def.name));
	th_i32(rg, 4, CODEC_ZSTD);
	th_i64(rg, 5, f->nrows);
	th_i64(rg, 6, (int64_t)raw);
	th_i64(rg, 7, (int64_t)comp);
	th_i64(rg, 9, (int64_t)data_off);
	if (dict_off)
		th_i64(rg, 11, (int64_t)dict_off);
	th_begin(rg, 12); /* Statistics */
	th_i64(rg, 3, (int64_t)c->nulls);
	if (c->nv && c->def.type == PQ_INT64) {
		stat_bin(rg, 5, &c->imax, 8);
		stat_bin(rg, 6, &c->imin, 8);
	} else if (c->nv && c->def.type == PQ_DOUBLE) {
		stat_bin(rg, 5, &c->dmax, 8);
		stat_bin(rg, 6, &c->dmin, 8);
	} else if (c->nv && str) {
		bool ok = true;

		for (uint32_t e = 0; e < c->ndict && ok; e++) {
			const uint8_t *p = c->dict.p + c->doff[e] + 4;
			uint32_t l;

			memcpy(&l, p - 4, 4);
			if (l > STAT_MAX_LEN) {
				ok = false;
				break;
			}
			if (!smin || memcmp(p, smin, l < lmin ? l : lmin) < 0 ||
			    (memcmp(p, smin, l < lmin ? l : lmin) == 0 && l < lmin)) {
				smin = p;
				lmin = l;
			}
			if (!smax || memcmp(p, smax, l < lmax ? l : lmax) > 0 ||
			    (memcmp(p, smax, l < lmax ? l : lmax) == 0 && l > lmax)) {
				smax = p;
				lmax = l;
			}
		}
		if (ok) {
			stat_bin(rg, 5, smax, lmax);
			stat_bin(rg, 6, smin, lmin);
		}
	}
	th_end(rg); /* Statistics */
	th_end(rg); /* ColumnMetaData */
	th_end(rg); /* ColumnChunk */
	return 0;
}

static int rowgroup_out(struct pq_file *f)
{
	uint64_t raw = 0, start = f->off;
	struct th rg;
	int ret = 0;

	th_init(&rg, &f->rgs);
	th_begin(&rg, 0); /* RowGroup */
	th_list(&rg, 1, TH_STRUCT, f->ncols);
	for (unsigned i = 0; i < f->ncols && ret == 0; i++)
		ret = chunk_out(f, i, &rg, &raw);
	if (ret < 0)
		return ret;
	th_i64(&rg, 2, (int64_t)raw);
	th_i64(&rg, 3, f->nrows);
	th_i64(&rg, 5, (int64_t)start);
	th_i64(&rg, 6, (int64_t)(f->off - start));
	th_field(&rg, 7, TH_I16);
	th_varint(rg.b, th_zigzag(f->nrgs));
	th_end(&rg);
	if (f->rgs.oom)
		return -ENOMEM;
	f->nrgs++;
	f->rows += f->nrows;
	f->nrows = 0;
	for (unsigned i = 0; i < f->ncols; i++) {
		struct col *c = &f->c[i];

		c->nv = 0;
		c->nulls = 0;
		c->ndict = 0;
		c->dict.n = 0;
		if (c->slot)
			memset(c->slot, 0, (c->smask + 1) * sizeof(*c->slot));
	}
	return 0;
}

int pq_row_end(struct pq_file *f)
{
	f->cur = 0;
	if (f->err)
		return f->err;
	if (++f->nrows < f->rg_rows) {
		if (f->nrows == f->cap && grow(f) < 0)
			return f->err = -ENOMEM;
		return 0;
	}
	return f->err = rowgroup_out(f);
}

uint64_t pq_rows(const struct pq_file *f)
{
	return f->rows + f->nrows;
}

int pq_finish(struct pq_file *f, uint64_t *bytes)
{
	struct pq_buf meta = {0};
	struct th t;
	uint32_t len;
	int ret;

	if (f->err)
		return f->err;
	if (f->nrows) {
		ret = rowgroup_out(f);
		if (ret < 0)
			return f->err = ret;
	}
	th_init(&t, &meta);
	th_i32(&t, 1, 1);
	th_list(&t, 2, TH_STRUCT, f->ncols + 1);
	th_begin(&t, 0);
	th_string(&t, 4, "schema");
	th_i32(&t, 5, (int32_t)f->ncols);
	th_end(&t);
	for (unsigned i = 0; i < f->ncols; i++) {
		const struct pq_col *d = &f->c[i].def;

		th_begin(&t, 0);
		th_i32(&t, 1,
		       d->type == PQ_STRING   ? PT_BYTE_ARRAY
		       : d->type == PQ_DOUBLE ? PT_DOUBLE
		                              : PT_INT64);
		th_i32(&t, 3, d->optional ? REP_OPTIONAL : REP_REQUIRED);
		th_string(&t, 4, d->name);
		if (d->type == PQ_STRING) {
			th_i32(&t, 6, CONV_UTF8);
			th_begin(&t, 10); /* LogicalType: STRING */
			th_begin(&t, 1);
			th_end(&t);
			th_end(&t);
		}
		th_end(&t);
	}
	th_i64(&t, 3, (int64_t)f->rows);
	th_list(&t, 4, TH_STRUCT, f->nrgs);
	pq_buf_put(&meta, f->rgs.p, f->rgs.n);
	t.last[t.depth] = 4;
	th_string(&t, 6, "gputrace");
	th_end(&t);
	len = (uint32_t)meta.n;
	pq_buf_put(&meta, &len, 4);
	pq_buf_put(&meta, MAGIC, 4);
	ret = meta.oom ? -ENOMEM : out(f, meta.p, meta.n);
	pq_buf_free(&meta);
	if (ret == 0 && bytes)
		*bytes = f->off;
	return ret < 0 ? (f->err = ret) : 0;
}

void pq_free(struct pq_file *f)
{
	if (!f)
		return;
	for (unsigned i = 0; f->c && i < f->ncols; i++) {
		free(f->c[i].defl);
		free(f->c[i].v);
		pq_buf_free(&f->c[i].dict);
		free(f->c[i].doff);
		free(f->c[i].slot);
	}
	free(f->c);
	free(f->lv);
	free(f->ix);
	pq_buf_free(&f->rgs);
	pq_buf_free(&f->page);
	pq_buf_free(&f->zbuf);
	ZSTD_freeCCtx(f->z);
	free(f);
}
