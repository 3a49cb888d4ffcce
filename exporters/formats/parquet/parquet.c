/* The Parquet file writer of the Parquet export (parquet.h). Runs in the CLI. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
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
	ENC_DELTA_BINARY_PACKED = 5,
	ENC_RLE_DICTIONARY = 8,
	CODEC_UNCOMPRESSED = 0,
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
#define NO_KIND        INT32_MIN /* a struct col's curkind or plainkind: no pq_val matches */
#define RUN_NULL       0x80000000u /* a run's length: a run of nulls */
#define RUNS_MIN       64u /* runs a column keeps before it may turn plain */
#define HYB_PEND       512u /* values the hybrid encoder holds for bit-packing */
#define DELTA_BLOCK    128u /* DELTA_BINARY_PACKED: values per block, */
#define DELTA_MINI     4u   /* in miniblocks of 32 */
#define ZSTD_LEVEL     1
#define STORE_RATIO    0.90 /* a chunk ZSTD shrinks by less than a tenth is stored as it is, */
#define STORE_RETRY    16u  /* the column's next chunks, trying ZSTD every 16th row group */
#define STORE_MIN      4096u /* (chunks of fewer bytes compressed, never judged) */
#define WBUF           (256u << 10) /* the file's bytes go out in writes of about this many */
#define MAGIC          "PAR1"

/* A column's values of the row group being built. Each starts the row group as runs of
 * equal values (or of nulls): ids, launch shapes and flags change seldom, and a run costs
 * a comparison per row. A column whose runs are short (timestamps) turns plain: a value
 * and a level per row. */
struct col {
	/* what every value looks at first, in one cache line */
	int64_t cur;
	uint32_t curn;
	int32_t curkind;   /* the pq_val kind whose u.i equal to cur is the open run's value;
	                    * NO_KIND while none is */
	int32_t fastkind;  /* the pq_val kind stored as it is: INT in INT64, FLOAT in DOUBLE */
	int32_t plainkind; /* plain: fastkind, which goes straight in; else NO_KIND */
	bool curnull;
	bool plain;
	bool optional;
	bool store; /* ZSTD gained nothing on its last chunk: the next ones UNCOMPRESSED */
	bool fixed; /* the same value in every row (pq_const): cur and curnull, set once */
	enum pq_type type;
	/* plain: */
	uint8_t *defl; /* optional: 1 value, 0 null, per row */
	int64_t *v;    /* int64/double bits; strings: dictionary index */
	size_t nv;     /* values (non-null) */
	/* runs: value and length (| RUN_NULL), the open run in cur and curn */
	int64_t *rv;
	uint32_t *rn;
	uint32_t nruns, rcap;
	/* strings: dictionary of this row group's values, PLAIN (4-byte length, bytes) */
	struct pq_buf dict;
	uint32_t *doff; /* offset in dict of each entry */
	uint32_t ndict, dcap;
	uint32_t *slot; /* hash table: entry + 1; 0 empty */
	uint32_t smask;
	struct pq_col def;
};

/* A chunk's statistics, taken when it is written. */
struct stats {
	size_t nv;
	uint64_t nulls;
	int64_t imin, imax;
	double dmin, dmax;
};

struct pq_file {
	int fd;
	uint64_t off; /* the file's size, wb's bytes counted */
	uint8_t *wb;  /* WBUF bytes not yet written, wn of them used */
	size_t wn;
	struct col *c;
	unsigned ncols, cur;
	struct act { /* the columns pq_put_row fills: those not fixed */
		struct col *c;
		unsigned i;
	} *act;
	unsigned nact;
	uint32_t rg_rows, nrows, cap; /* cap: rows the columns' arrays hold */
	uint64_t rows;
	int err;
	struct pq_buf rgs; /* serialized RowGroups */
	uint32_t nrgs;
	struct pq_buf page, zbuf, lvb;
	int64_t *tmp; /* PAGE_ROWS values of a page taken from runs */
	ZSTD_CCtx *z;
	bool store; /* the chunk being written: pages as they are (UNCOMPRESSED) */
	/* a number column's dictionary, when it has one (num_dict) */
	uint32_t *ix;                   /* cap: each value's (or run's) index */
	int64_t dvals[NUM_DICT_MAX];    /* the distinct values, in order of appearance */
	uint32_t dslot[NUM_DICT_SLOTS]; /* hash table: index + 1; 0 empty */
};

static int grow(struct pq_file *f);

/* ---- The RLE / bit-packed hybrid, fed runs ------------------------------------------- */

/* An encoder of the hybrid at bit width bw: values come as runs (hyb_put), equal
 * neighbours merge; a run of 8 or more from a group boundary is an RLE run, the rest waits
 * in pend and is bit-packed in groups of 8 (the last group padded at the end). */
struct hyb {
	struct pq_buf *b;
	unsigned bw;
	uint32_t v;
	size_t n; /* the open run */
	uint32_t pend[HYB_PEND + 8]; /* + 8: the last group's padding */
	size_t np;
};

/* Groups of pend[0..n) (n a multiple of 8, or all at the end: the last group padded) as one
 * bit-packed run; what is left moves to the front. */
static void hyb_pack(struct hyb *h, size_t n)
{
	size_t groups = (n + 7) / 8;
	uint8_t *o;

	th_varint(h->b, (uint64_t)groups << 1 | 1);
	o = pq_buf_room(h->b, groups * h->bw + 8); /* 8 more: a group written as a word */
	if (!o)
		return;
	h->b->n -= 8;
	for (size_t j = n; j < groups * 8; j++) /* the last group padded with 0 */
		h->pend[j] = 0;
	if (h->bw <= 8) { /* a group in one little-endian word, of which bw bytes count */
		for (size_t g = 0; g < groups; g++, o += h->bw) {
			const uint32_t *p = h->pend + g * 8;
			uint64_t acc = 0;

			for (unsigned k = 0; k < 8; k++)
				acc |= (uint64_t)p[k] << (k * h->bw);
			memcpy(o, &acc, 8);
		}
	} else { /* wider: LSB first through a word, 4 bytes out at a time */
		uint64_t acc = 0;
		unsigned nb = 0;

		for (size_t j = 0; j < groups * 8; j++) {
			acc |= (uint64_t)h->pend[j] << nb;
			nb += h->bw;
			if (nb >= 32) {
				memcpy(o, &acc, 4); /* (little-endian, as the rest of the writer) */
				o += 4;
				acc >>= 32;
				nb -= 32;
			}
		}
		memcpy(o, &acc, 8); /* the last nb / 8 bytes count; the room has 8 more */
	}
	memmove(h->pend, h->pend + n, (h->np - n) * sizeof(*h->pend));
	h->np -= n;
}

static void hyb_wait(struct hyb *h, uint32_t v, size_t n)
{
	if (h->np + n > HYB_PEND)
		hyb_pack(h, h->np & ~(size_t)7);
	for (size_t k = 0; k < n; k++)
		h->pend[h->np++] = v;
}

/* The open run out: first to the next group boundary of what waits, then as an RLE run. */
static void hyb_flush_run(struct hyb *h)
{
	size_t n = h->n, fill = h->np % 8 ? 8 - h->np % 8 : 0;

	h->n = 0;
	if (fill > n)
		fill = n;
	hyb_wait(h, h->v, fill);
	n -= fill;
	if (n < 8) {
		hyb_wait(h, h->v, n);
		return;
	}
	if (h->np)
		hyb_pack(h, h->np);
	th_varint(h->b, (uint64_t)n << 1);
	for (unsigned k = 0; k < (h->bw + 7) / 8; k++)
		pq_buf_byte(h->b, (uint8_t)(h->v >> (8 * k)));
}

static void hyb_init(struct hyb *h, struct pq_buf *b, unsigned bw)
{
	h->b = b;
	h->bw = bw;
	h->n = 0;
	h->np = 0;
}

static inline void hyb_put(struct hyb *h, uint32_t v, size_t n)
{
	if (h->n && v == h->v) {
		h->n += n;
		return;
	}
	if (h->n < 8 && h->np + h->n <= HYB_PEND) { /* a short run waits, as hyb_flush_run */
		for (size_t k = 0; k < h->n; k++)    /* would put it */
			h->pend[h->np + k] = h->v;
		h->np += h->n;
	} else if (h->n) {
		hyb_flush_run(h);
	}
	h->v = v;
	h->n = n;
}

static void hyb_end(struct hyb *h)
{
	if (h->n)
		hyb_flush_run(h);
	if (h->np)
		hyb_pack(h, h->np);
}

void pq_rle_hybrid(struct pq_buf *b, const uint32_t *v, size_t n, unsigned bw)
{
	struct hyb h;

	hyb_init(&h, b, bw);
	for (size_t i = 0; i < n; i++)
		hyb_put(&h, v[i], 1);
	hyb_end(&h);
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

/* ---- DELTA_BINARY_PACKED ------------------------------------------------------------- */

/* 32 values d at bit width bw (0..64), LSB first: 4 * bw bytes at o. */
static void pack32(uint8_t *o, const uint64_t *d, unsigned bw)
{
	uint64_t acc = 0, mask = bw == 64 ? ~0ull : (1ull << bw) - 1;
	unsigned nb = 0;

	if (!bw)
		return;
	for (unsigned i = 0; i < 32; i++) {
		uint64_t x = d[i] & mask;

		acc |= x << nb;
		if (nb + bw >= 64) {
			unsigned used = 64 - nb;

			memcpy(o, &acc, 8);
			o += 8;
			acc = used < 64 ? x >> used : 0;
			nb = nb + bw - 64;
		} else {
			nb += bw;
		}
	}
	memcpy(o, &acc, nb / 8);
}

void pq_delta_binary(struct pq_buf *b, const int64_t *v, size_t n)
{
	uint64_t d[DELTA_BLOCK];

	th_varint(b, DELTA_BLOCK);
	th_varint(b, DELTA_MINI);
	th_varint(b, n);
	th_varint(b, th_zigzag(n ? v[0] : 0));
	for (size_t i = 1; i < n; i += DELTA_BLOCK) {
		size_t m = n - i < DELTA_BLOCK ? n - i : DELTA_BLOCK;
		unsigned minis = (unsigned)((m + 31) / 32), bw[DELTA_MINI] = {0};
		int64_t min = INT64_MAX;
		uint8_t *o;

		for (size_t k = 0; k < m; k++) { /* the deltas modulo 2^64, and their least */
			int64_t x = (int64_t)((uint64_t)v[i + k] - (uint64_t)v[i + k - 1]);

			d[k] = (uint64_t)x;
			if (x < min)
				min = x;
		}
		for (size_t k = 0; k < DELTA_BLOCK; k++) /* each above the least; padding 0 */
			d[k] = k < m ? d[k] - (uint64_t)min : 0;
		for (unsigned j = 0; j < minis; j++) {
			uint64_t any = 0;

			for (unsigned k = 0; k < 32; k++)
				any |= d[j * 32 + k];
			bw[j] = any ? 64 - (unsigned)__builtin_clzll(any) : 0;
		}
		th_varint(b, th_zigzag(min));
		o = pq_buf_room(b, DELTA_MINI);
		if (!o)
			return;
		for (unsigned j = 0; j < DELTA_MINI; j++)
			o[j] = (uint8_t)bw[j];
		for (unsigned j = 0; j < minis; j++) {
			o = pq_buf_room(b, 4 * bw[j]);
			if (!o)
				return;
			pack32(o, d + j * 32, bw[j]);
		}
	}
}

/* ---- Rows in --------------------------------------------------------------------------- */

int pq_open(int fd, const struct pq_col *cols, unsigned ncols, uint32_t rg_rows,
            struct pq_file **ret)
{
	struct pq_file *f = calloc(1, sizeof(*f));

	if (!f)
		return -ENOMEM;
	f->fd = fd;
	f->ncols = ncols;
	f->c = calloc(ncols ? ncols : 1, sizeof(*f->c));
	f->act = calloc(ncols ? ncols : 1, sizeof(*f->act));
	f->tmp = malloc(PAGE_ROWS * sizeof(*f->tmp));
	f->wb = malloc(WBUF);
	f->z = ZSTD_createCCtx();
	if (!rg_rows) {
		rg_rows = RG_BYTES / (9u * (ncols ? ncols : 1));
		if (rg_rows > RG_MAX_ROWS)
			rg_rows = RG_MAX_ROWS;
	}
	f->rg_rows = rg_rows;
	if (!f->c || !f->act || !f->tmp || !f->wb || !f->z)
		goto nomem;
	for (unsigned i = 0; i < ncols; i++) {
		struct col *c = &f->c[i];

		c->def = cols[i];
		c->optional = cols[i].optional;
		c->type = cols[i].type;
		c->fastkind = c->type == PQ_INT64    ? PQ_VAL_INT
		              : c->type == PQ_DOUBLE ? PQ_VAL_FLOAT
		                                     : -1;
		c->curkind = c->plainkind = NO_KIND;
		f->act[f->nact++] = (struct act){c, i};
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
		if (c->optional) {
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

/* The open run of c appended to its runs. */
static void run_close(struct pq_file *f, struct col *c)
{
	if (!c->curn)
		return;
	if (c->nruns == c->rcap) {
		uint32_t cap = c->rcap ? c->rcap * 2 : 64;
		int64_t *rv = realloc(c->rv, (size_t)cap * sizeof(*rv));
		uint32_t *rn = rv ? realloc(c->rn, (size_t)cap * sizeof(*rn)) : NULL;

		if (rv)
			c->rv = rv;
		if (!rn) {
			f->err = -ENOMEM;
			return;
		}
		c->rn = rn;
		c->rcap = cap;
	}
	c->rv[c->nruns] = c->cur;
	c->rn[c->nruns++] = c->curn | (c->curnull ? RUN_NULL : 0);
	c->curn = 0;
	c->curkind = NO_KIND;
}

/* c's runs so far (rows 0..f->nrows) as a value and a level per row. */
static void to_plain(struct pq_file *f, struct col *c)
{
	uint32_t row = 0;

	run_close(f, c);
	c->nv = 0;
	for (uint32_t r = 0; r < c->nruns; r++) {
		uint32_t n = c->rn[r] & ~RUN_NULL;
		bool null = c->rn[r] & RUN_NULL;

		if (c->optional)
			memset(c->defl + row, !null, n);
		for (uint32_t k = 0; !null && k < n; k++)
			c->v[c->nv++] = c->rv[r];
		row += n;
	}
	c->nruns = 0;
	c->plain = true;
	c->plainkind = c->fastkind;
}

/* put()'s rare cases: a null where none may be, a new run, a column turning plain. */
__attribute__((noinline)) static void put_slow(struct pq_file *f, struct col *c, int64_t v,
                                               bool null)
{
	if (null && !c->optional && !f->err)
		f->err = -EINVAL;
	if (!c->plain) {
		run_close(f, c);
		c->curkind = NO_KIND;
		if (c->nruns < RUNS_MIN || c->nruns * 4 <= f->nrows) {
			c->cur = v;
			c->curnull = null;
			c->curn = 1;
			return;
		}
		to_plain(f, c); /* short runs: a value per row from now on */
	}
	if (c->optional)
		c->defl[f->nrows] = !null;
	if (!null)
		c->v[c->nv++] = v;
}

static inline void put(struct pq_file *f, struct col *c, int64_t v, bool null)
{
	if (c->plain && (c->optional || !null)) {
		if (c->optional)
			c->defl[f->nrows] = !null;
		if (!null)
			c->v[c->nv++] = v;
		return;
	}
	if (!c->plain && c->curn && c->cur == v && c->curnull == null) {
		c->curn++;
		return;
	}
	put_slow(f, c, v, null);
}

static inline void put_f64(struct pq_file *f, struct col *c, double d)
{
	int64_t bits;

	memcpy(&bits, &d, 8);
	put(f, c, bits, false);
}

void pq_put_i64(struct pq_file *f, int64_t v)
{
	struct col *c = &f->c[f->cur];

	if (c->fixed) { /* its value is pq_const's */
		f->cur++;
		return;
	}
	if (c->type == PQ_DOUBLE) {
		pq_put_f64(f, (double)v);
		return;
	}
	f->cur++;
	put(f, c, v, false);
}

void pq_put_f64(struct pq_file *f, double d)
{
	struct col *c = &f->c[f->cur++];

	if (!c->fixed)
		put_f64(f, c, d);
}

void pq_put_null(struct pq_file *f)
{
	struct col *c = &f->c[f->cur++];

	if (!c->fixed)
		put(f, c, 0, true);
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

/* Whether dictionary entry e of c is the string s. */
static bool dict_is(const struct col *c, uint32_t e, const char *s, size_t len)
{
	uint32_t el;

	memcpy(&el, c->dict.p + c->doff[e], 4);
	return el == len && memcmp(c->dict.p + c->doff[e] + 4, s, len) == 0;
}

static void put_str(struct pq_file *f, struct col *c, const char *s, size_t len)
{
	uint64_t h;
	uint32_t k, e, l32 = (uint32_t)len;

	/* the string of the open run: no hashing */
	if (!c->plain && c->curn && !c->curnull && dict_is(c, (uint32_t)c->cur, s, len)) {
		c->curn++;
		return;
	}
	if (c->ndict * 2 >= c->smask) {
		slot_rebuild(f, c);
		if (f->err)
			return;
	}
	h = str_hash(s, len);
	for (k = (uint32_t)h & c->smask; c->slot[k]; k = (k + 1) & c->smask) {
		e = c->slot[k] - 1;
		if (dict_is(c, e, s, len)) {
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

void pq_put_str(struct pq_file *f, const char *s, size_t len)
{
	struct col *c = &f->c[f->cur++];

	if (!c->fixed)
		put_str(f, c, s, len);
}

int pq_const(struct pq_file *f, unsigned col, const struct pq_val *v)
{
	struct col *c = &f->c[col];
	bool null = v->kind != PQ_VAL_INT && v->kind != PQ_VAL_FLOAT && v->kind != PQ_VAL_TEXT;

	if (f->rows || f->nrows || (null && !c->optional) ||
	    (!null && v->kind != c->fastkind)) /* a value pq_put_row would convert */
		return -EINVAL;
	c->fixed = true;
	c->cur = null ? 0 : v->u.i;
	c->curnull = null;
	f->nact = 0;
	for (unsigned i = 0; i < f->ncols; i++)
		if (!f->c[i].fixed)
			f->act[f->nact++] = (struct act){&f->c[i], i};
	return 0;
}

int pq_put_row(struct pq_file *f, const struct pq_val *const *src)
{
	char num[24];
	uint32_t row = f->nrows;

	for (const struct act *a = f->act, *end = a + f->nact; a < end; a++) {
		struct col *c = a->c;
		const struct pq_val *v = src[a->i];
		int n;

		if (v->kind == c->plainkind) { /* a number of its own type, plain */
			size_t nv = c->nv;

			if (c->optional)
				c->defl[row] = 1;
			c->v[nv] = v->u.i;
			c->nv = nv + 1;
			continue;
		}
		if (v->kind == c->curkind && v->u.i == c->cur) { /* the open run's */
			c->curn++;
			continue;
		}
		switch (v->kind) {
		case PQ_VAL_INT:
			if (c->type == PQ_INT64) {
				put(f, c, v->u.i, false);
			} else if (c->type == PQ_DOUBLE) {
				put_f64(f, c, (double)v->u.i);
			} else { /* TEXT affinity: its decimal text */
				n = snprintf(num, sizeof(num), "%" PRId64, v->u.i);
				put_str(f, c, num, (size_t)n);
			}
			break;
		case PQ_VAL_FLOAT: /* only REAL columns take reals */
			if (c->type != PQ_DOUBLE)
				return f->err = -EINVAL;
			put_f64(f, c, v->u.d);
			break;
		case PQ_VAL_TEXT:
			if (c->type != PQ_STRING)
				return f->err = -EINVAL;
			put_str(f, c, v->u.s, v->len < 0 ? strlen(v->u.s) : (size_t)v->len);
			break;
		default:
			put(f, c, 0, true);
			break;
		}
		/* the next equal value takes the test above */
		if (c->curn && (c->curnull ? v->u.i == 0
		                           : (v->kind == PQ_VAL_INT && c->type == PQ_INT64) ||
		                                     (v->kind == PQ_VAL_FLOAT &&
		                                      c->type == PQ_DOUBLE)))
			c->curkind = v->kind;
	}
	return pq_row_end(f);
}

/* ---- Row groups out ------------------------------------------------------------------- */

static int write_all(int fd, const void *p, size_t n)
{
	const uint8_t *b = p;

	while (n) {
		ssize_t w = write(fd, b, n);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		b += w;
		n -= (size_t)w;
	}
	return 0;
}

/* n bytes at the file's end: gathered in wb (a page's header and body, small pages), so
 * that the file goes out in few large writes; a body larger than half of wb directly. */
static int out(struct pq_file *f, const void *p, size_t n)
{
	int ret;

	f->off += n;
	if (f->wn + n <= WBUF) {
		memcpy(f->wb + f->wn, p, n);
		f->wn += n;
		return 0;
	}
	ret = write_all(f->fd, f->wb, f->wn);
	f->wn = 0;
	if (ret < 0 || n > WBUF / 2)
		return ret < 0 ? ret : write_all(f->fd, p, n);
	memcpy(f->wb, p, n);
	f->wn = n;
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
	if (f->store) { /* the chunk is UNCOMPRESSED */
		zn = n;
	} else {
		zn = ZSTD_compressCCtx(f->z, f->zbuf.p, bound, src, n, ZSTD_LEVEL);
		if (ZSTD_isError(zn))
			return -EIO;
	}
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
		ret = out(f, f->store ? src : f->zbuf.p, zn);
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

/* A dictionary of the n values v (runs: with their lengths rn, whose null runs are passed
 * over) into f->dvals and each value's index into f->ix, when they have at most
 * NUM_DICT_MAX distinct values (a column of timestamps gives up after the first thousand or
 * so). Returns the dictionary's size, or 0. */
static uint32_t num_dict(struct pq_file *f, const int64_t *vals, const uint32_t *rn, size_t n)
{
	uint32_t nd = 0;

	memset(f->dslot, 0, sizeof(f->dslot));
	for (size_t i = 0; i < n; i++) {
		int64_t v = vals[i];
		uint32_t k;

		if (rn) { /* runs: nulls passed over */
			if (rn[i] & RUN_NULL)
				continue;
			if (i && vals[i - 1] == v && !(rn[i - 1] & RUN_NULL)) {
				f->ix[i] = f->ix[i - 1];
				continue;
			}
		} else if (i && vals[i - 1] == v) { /* values: a neighbour's index */
			f->ix[i] = f->ix[i - 1];
			continue;
		}
		k = (uint32_t)(((uint64_t)v * 0x9e3779b97f4a7c15ull) >> 52);
		for (;; k = (k + 1) & (NUM_DICT_SLOTS - 1)) {
			uint32_t e = f->dslot[k];

			if (e && f->dvals[e - 1] == v) {
				f->ix[i] = e - 1;
				break;
			}
			if (!e) {
				if (nd == NUM_DICT_MAX)
					return 0;
				f->dvals[nd] = v;
				f->dslot[k] = ++nd;
				f->ix[i] = nd - 1;
				break;
			}
		}
	}
	return nd;
}

/* Column c's statistics: values, nulls, and the least and greatest number. */
static void col_stats(const struct pq_file *f, const struct col *c, struct stats *st)
{
	bool dbl = c->type == PQ_DOUBLE;
	const int64_t *v = c->plain ? c->v : c->rv;
	size_t n = c->plain ? c->nv : c->nruns, first = 0;

	*st = (struct stats){0};
	if (!c->plain) { /* runs: count them; the values of the others as plain ones */
		for (size_t i = 0; i < n; i++)
			if (c->rn[i] & RUN_NULL)
				st->nulls += c->rn[i] & ~RUN_NULL;
			else
				st->nv += c->rn[i];
		for (first = 0; first < n && c->rn[first] & RUN_NULL; first++)
			;
	} else {
		st->nv = c->nv;
		st->nulls = f->nrows - c->nv;
	}
	if (first == n)
		return;
	if (dbl) {
		memcpy(&st->dmin, &v[first], 8);
		st->dmax = st->dmin;
	} else {
		st->imin = st->imax = v[first];
	}
	if (!c->plain) {
		for (size_t i = first + 1; i < n; i++) {
			double d;

			if (c->rn[i] & RUN_NULL)
				continue;
			memcpy(&d, &v[i], 8);
			if (dbl) {
				st->dmin = d < st->dmin ? d : st->dmin;
				st->dmax = d > st->dmax ? d : st->dmax;
			} else {
				st->imin = v[i] < st->imin ? v[i] : st->imin;
				st->imax = v[i] > st->imax ? v[i] : st->imax;
			}
		}
	} else if (dbl) {
		for (size_t i = first + 1; i < n; i++) {
			double d;

			memcpy(&d, &v[i], 8);
			st->dmin = d < st->dmin ? d : st->dmin;
			st->dmax = d > st->dmax ? d : st->dmax;
		}
	} else { /* the common case, a loop the compiler makes wide */
		int64_t lo = st->imin, hi = st->imax;

		for (size_t i = first + 1; i < n; i++) {
			lo = v[i] < lo ? v[i] : lo;
			hi = v[i] > hi ? v[i] : hi;
		}
		st->imin = lo;
		st->imax = hi;
	}
}

/* A position in a column's runs: run i, row off of it. */
struct rcur {
	uint32_t i, off;
};

/* The part of the run at *cur that lies within the next `left` rows; *cur moves past it. */
static uint32_t rcur_take(const struct col *c, struct rcur *cur, uint32_t left)
{
	uint32_t len = c->rn[cur->i] & ~RUN_NULL, take = len - cur->off;

	if (take > left)
		take = left;
	cur->off += take;
	if (cur->off == len)
		*cur = (struct rcur){cur->i + 1, 0};
	return take;
}

static void rcur_skip(const struct col *c, struct rcur *cur, uint32_t n)
{
	while (n)
		n -= rcur_take(c, cur, n);
}

/* The levels of rows [r0, r0 + nr) of c into f->lvb, as the hybrid at bit width 1 (no
 * length prefix). Returns the values among them. */
static size_t page_levels(struct pq_file *f, const struct col *c, uint32_t r0, uint32_t nr,
                          struct rcur cur)
{
	struct hyb h;
	size_t nv = 0;

	f->lvb.n = 0;
	hyb_init(&h, &f->lvb, 1);
	if (c->plain) {
		for (uint32_t r = 0; r < nr; r++)
			nv += c->defl[r0 + r];
		if (nv == 0 || nv == nr) /* no value, or no null: one run */
			rle_run(&f->lvb, nv != 0, nr, 1);
		else
			for (uint32_t r = 0; r < nr; r++)
				hyb_put(&h, c->defl[r0 + r], 1);
	} else {
		for (uint32_t left = nr; left;) {
			bool null = c->rn[cur.i] & RUN_NULL;
			uint32_t take = rcur_take(c, &cur, left);

			hyb_put(&h, !null, take);
			nv += null ? 0 : take;
			left -= take;
		}
	}
	hyb_end(&h);
	return nv;
}

/* The page's values of rows [r0, r0 + nr) of c (nv of them, from value vi, or from the runs
 * at *cur, which moves past them): dictionary indexes (ix: the values' or the runs' indexes
 * when given, else the values themselves), at bit width bw, into f->page; or, with bw 0,
 * the values themselves, returned (f->tmp when taken from runs). */
static const int64_t *page_values(struct pq_file *f, const struct col *c, uint32_t nr, size_t vi,
                                  size_t nv, struct rcur *cur, const uint32_t *ix, unsigned bw)
{
	struct hyb h;

	if (bw) {
		pq_buf_byte(&f->page, (uint8_t)bw);
		hyb_init(&h, &f->page, bw);
	}
	if (c->plain) {
		if (!bw)
			return c->v + vi;
		for (size_t k = 0; k < nv; k++)
			hyb_put(&h, ix ? ix[vi + k] : (uint32_t)c->v[vi + k], 1);
		hyb_end(&h);
		return NULL;
	}
	nv = 0;
	for (uint32_t left = nr; left;) {
		uint32_t r = cur->i, take = rcur_take(c, cur, left);

		if (!(c->rn[r] & RUN_NULL)) {
			if (bw)
				hyb_put(&h, ix ? ix[r] : (uint32_t)c->rv[r], take);
			else
				for (uint32_t k = 0; k < take; k++)
					f->tmp[nv++] = c->rv[r];
		}
		left -= take;
	}
	if (!bw)
		return f->tmp;
	hyb_end(&h);
	return NULL;
}

/* The column chunk of column i of the current row group: its pages written, its
 * ColumnChunk serialized to rg. */
static int chunk_out(struct pq_file *f, unsigned i, struct th *rg, uint64_t *raw_all)
{
	struct col *c = &f->c[i];
	uint64_t raw = 0, comp = 0, start = f->off, dict_off = 0, data_off;
	bool str = c->type == PQ_STRING, num = c->type == PQ_INT64;
	struct stats st;
	bool one, dict;
	uint32_t ndict;
	unsigned bw;
	int enc;
	const uint8_t *smin = NULL, *smax = NULL;
	uint32_t lmin = 0, lmax = 0;
	struct rcur cur = {0, 0};
	size_t vi = 0;
	int ret;

	if (c->fixed) /* one run of every row */
		c->curn = f->nrows;
	if (!c->plain)
		run_close(f, c);
	if (f->err)
		return f->err;
	col_stats(f, c, &st);
	/* a number column of one value in this row group (ids, launch shapes, flags): a
	 * dictionary of that value and pages of indexes 0, a few bytes, instead of its values */
	one = num && st.nv && st.imin == st.imax;
	/* one of few values (ids, launch shapes, sizes): a dictionary of them */
	ndict = num && st.nv && !one
	                ? num_dict(f, c->plain ? c->v : c->rv, c->plain ? NULL : c->rn,
	                           c->plain ? c->nv : c->nruns)
	                : 0;
	/* a string column of nulls only has no dictionary, and its pages no values */
	dict = (str && c->ndict) || one || ndict;
	bw = str ? bits_for(c->ndict) : one ? 1 : ndict ? bits_for(ndict) : 0;
	/* other numbers: as deltas (timestamps, ids that grow), doubles PLAIN */
	enc = dict ? ENC_RLE_DICTIONARY : num && st.nv ? ENC_DELTA_BINARY_PACKED : ENC_PLAIN;

	f->store = c->store && f->nrgs % STORE_RETRY != 0;
	if (str && c->ndict) {
		if (c->dict.oom)
			return -ENOMEM;
		ret = page_out(f, c->dict.p, c->dict.n, PAGE_DICTIONARY, c->ndict, ENC_PLAIN, &raw,
		               &comp);
		if (ret < 0)
			return ret;
		dict_off = start;
	} else if (one || ndict) {
		ret = one ? page_out(f, &st.imin, 8, PAGE_DICTIONARY, 1, ENC_PLAIN, &raw, &comp)
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
		const int64_t *vals;

		f->page.n = 0;
		if (c->optional) {
			uint32_t len;

			nv = page_levels(f, c, r0, nr, cur);
			len = (uint32_t)f->lvb.n;
			pq_buf_put(&f->page, &len, 4);
			pq_buf_put(&f->page, f->lvb.p, f->lvb.n);
			if (f->lvb.oom)
				f->page.oom = true;
		}
		if (one) { /* every index 0: one run */
			pq_buf_byte(&f->page, (uint8_t)bw);
			rle_run(&f->page, 0, nv, bw);
			if (!c->plain)
				rcur_skip(c, &cur, nr);
			vals = NULL;
		} else {
			vals = page_values(f, c, nr, vi, nv, &cur, ndict ? f->ix : NULL, dict ? bw : 0);
		}
		if (vals && enc == ENC_DELTA_BINARY_PACKED)
			pq_delta_binary(&f->page, vals, nv);
		else if (vals && (c->optional || !c->plain))
			pq_buf_put(&f->page, vals, nv * 8);
		if (f->page.oom)
			return -ENOMEM;
		/* a required double: the values as they are, without a copy */
		if (vals && !num && !c->optional && c->plain)
			ret = page_out(f, vals, nv * 8, PAGE_DATA, nr, enc, &raw, &comp);
		else
			ret = page_out(f, f->page.p, f->page.n, PAGE_DATA, nr, enc, &raw, &comp);
		vi += nv;
		if (ret < 0)
			return ret;
	}
	*raw_all += raw;
	if (!f->store && raw >= STORE_MIN) /* timestamps' deltas: ZSTD finds little in them */
		c->store = (double)comp > STORE_RATIO * (double)raw;

	th_begin(rg, 0); /* ColumnChunk */
	th_i64(rg, 2, (int64_t)start);
	th_begin(rg, 3); /* ColumnMetaData */
	th_i32(rg, 1, str ? PT_BYTE_ARRAY : c->type == PQ_DOUBLE ? PT_DOUBLE : PT_INT64);
	th_list(rg, 2, TH_I32, 2 + (enc != ENC_PLAIN));
	th_varint(rg->b, th_zigzag(ENC_PLAIN));
	th_varint(rg->b, th_zigzag(ENC_RLE));
	if (enc != ENC_PLAIN)
		th_varint(rg->b, th_zigzag(enc));
	th_list(rg, 3, TH_BINARY, 1);
	th_binary(rg, 0, c->def.name, strlen(c->def.name));
	th_i32(rg, 4, f->store ? CODEC_UNCOMPRESSED : CODEC_ZSTD);
	th_i64(rg, 5, f->nrows);
	th_i64(rg, 6, (int64_t)raw);
	th_i64(rg, 7, (int64_t)comp);
	th_i64(rg, 9, (int64_t)data_off);
	if (dict_off)
		th_i64(rg, 11, (int64_t)dict_off);
	th_begin(rg, 12); /* Statistics */
	th_i64(rg, 3, (int64_t)st.nulls);
	if (st.nv && num) {
		stat_bin(rg, 5, &st.imax, 8);
		stat_bin(rg, 6, &st.imin, 8);
	} else if (st.nv && c->type == PQ_DOUBLE) {
		stat_bin(rg, 5, &st.dmax, 8);
		stat_bin(rg, 6, &st.dmin, 8);
	} else if (st.nv && str) {
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

		c->plain = false;
		c->plainkind = NO_KIND;
		c->nv = 0;
		c->nruns = 0;
		c->curn = 0;
		c->curkind = NO_KIND;
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
	if (ret == 0)
		ret = write_all(f->fd, f->wb, f->wn);
	f->wn = 0;
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
		free(f->c[i].rv);
		free(f->c[i].rn);
		pq_buf_free(&f->c[i].dict);
		free(f->c[i].doff);
		free(f->c[i].slot);
	}
	free(f->c);
	free(f->act);
	free(f->tmp);
	free(f->wb);
	pq_buf_free(&f->lvb);
	free(f->ix);
	pq_buf_free(&f->rgs);
	pq_buf_free(&f->page);
	pq_buf_free(&f->zbuf);
	ZSTD_freeCCtx(f->z);
	free(f);
}
