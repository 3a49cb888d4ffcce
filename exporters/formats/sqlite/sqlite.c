/* SQLite exporter: streams a trace through gt_reader_next() into prepared INSERTs inside
 * one transaction, in Nsight Systems' documented schema plus GPUTRACE_ tables
 * (sqlite-schema.c), then builds the indexes. Processes, GPUs and threads are the catalog's
 * (exporters/model/catalog.c), as in every other output. Memory grows with distinct
 * strings, processes, devices and contexts, and NVTX ranges (GPU time per range keeps them),
 * never with other events; SQLite's page cache is bounded by PRAGMA cache_size. Runs in the
 * CLI. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <sqlite3.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "catalog.h"
#include "demangle.h"
#include "gpumetrics.h"
#include "exporter.h"
#include "hash.h"
#include "nvtx-gpu.h"
#include "output.h"
#include "parquet.h"
#include "sql.h"
#include "sqlite-int.h"
#include "stacks.h"
#include "strtab.h"

#define PROGRESS_EVERY   0xffffu /* records between progress calls, minus one */
#define PID_BITS         0xffffffull
#define MAX_HW_ID        127u /* keeps globalPid positive in SQLite's signed integers */
#define MAX_VM_ID        255u
#define DEFAULT_CACHE_MB 16
#define SID_DIRECT       (1u << 20) /* string ids below it are found by index, not by hash */
#define SQ_BATCH         32u        /* rows per multi-row INSERT of the busy tables */
#define SQ_LANES         8u         /* lanes of a table whose rows go by process */

/* errmsg for the caller; one per thread, overwritten by the next call */
static _Thread_local char errbuf[768];

/* ---- a u64 -> u32 map (open addressing; key 0 is stored as 1 + key) ---------------- */

struct map {
	uint64_t *keys; /* key + 1; 0: empty */
	uint32_t *vals;
	size_t mask, n;
};

static inline size_t map_hash(uint64_t k, size_t mask)
{
	return (size_t)((k * 0x9e3779b97f4a7c15ull) >> 29) & mask;
}

static uint32_t *map_find(const struct map *m, uint64_t key)
{
	if (!m->keys)
		return NULL;
	for (size_t j = map_hash(key, m->mask);; j = (j + 1) & m->mask) {
		if (m->keys[j] == key + 1)
			return &m->vals[j];
		if (!m->keys[j])
			return NULL;
	}
}

static int map_put(struct map *m, uint64_t key, uint32_t val)
{
	size_t j;

	if (!m->keys || (m->n + 1) * 2 > m->mask + 1) {
		size_t cap = m->keys ? (m->mask + 1) * 2 : 64;
		uint64_t *k = calloc(cap, sizeof(*k));
		uint32_t *v = calloc(cap, sizeof(*v));

		if (!k || !v) {
			free(k);
			free(v);
			return -ENOMEM;
		}
		for (size_t i = 0; m->keys && i <= m->mask; i++) {
			if (!m->keys[i])
				continue;
			for (j = map_hash(m->keys[i] - 1, cap - 1); k[j]; j = (j + 1) & (cap - 1))
				;
			k[j] = m->keys[i];
			v[j] = m->vals[i];
		}
		free(m->keys);
		free(m->vals);
		m->keys = k;
		m->vals = v;
		m->mask = cap - 1;
	}
	for (j = map_hash(key, m->mask); m->keys[j]; j = (j + 1) & m->mask) {
		if (m->keys[j] == key + 1) {
			m->vals[j] = val;
			return 0;
		}
	}
	m->keys[j] = key + 1;
	m->vals[j] = val;
	m->n++;
	return 0;
}

static void map_fini(struct map *m)
{
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}

/* ---- state ------------------------------------------------------------------------- */

/* One interned text: StringIds row `id`, bytes at arena + off. */
struct text {
	uint64_t hash; /* 0: empty slot */
	uint32_t off, len;
	uint32_t id;
};

/* Per trace string id: its StringIds ids, resolved once. */
struct names {
	uint32_t raw;    /* the text as recorded */
	uint32_t dem;    /* demangled (kernels) */
	uint32_t base;   /* base name (kernels) */
	bool kernel;     /* dem and base are filled */
	uint32_t domain; /* NVTX domainId when this string names a domain; 0 if not yet */
};

/* What the export adds to a catalog process (q->procs[its index]). */
struct proc {
	uint32_t pid;   /* the pid columns: its pid on its host (a merge may have renamed it) */
	uint32_t index; /* the catalog's: the high half of correlation ids */
	uint64_t gpid;  /* serialized globalPid */
	bool used;      /* gpid went into a row: its host bits are fixed */
	bool capturing;
	uint64_t capture_start;
};

struct ctx {
	uint32_t proc, context_id, device_id; /* proc: catalog index */
};

/* Rows of a table waiting for its INSERT, with the multi-row INSERT they go through. Row r
 * of a batch is vals[r * (ncols + 1)]: its element 0 holds in u.i the columns set to a value
 * that `many` does not hold in that row's parameters (bit c for column c), elements
 * 1..ncols the values, which are also what `many` holds there once the batch is flushed
 * (row_set()). */
struct lane {
	sqlite3_stmt *many; /* `batch` rows in one statement; NULL when batch is 1 */
	unsigned n;         /* rows pending */
	struct val *vals;   /* batch * (ncols + 1); owned */
};

/* A table's INSERTs and the rows waiting for them: the API calls in a lane per process
 * (index % SQ_LANES), each with its own multi-row INSERT, the others in one. */
struct tab {
	sqlite3_stmt *one; /* one row */
	int ncols;         /* values per row (< 64) */
	unsigned batch;    /* rows per multi-row INSERT */
	unsigned nlanes;   /* 1 or SQ_LANES */
	struct val *bound; /* ncols values bound to `one` now; kind 0: nothing bound yet; owned */
	struct lane lane[SQ_LANES];
};

struct pq_sink;

struct sq {
	sqlite3 *db;
	struct pq_sink *pq; /* the Parquet export: rows go to its writers, db is NULL */
	const char *identity; /* GPUTRACE_SOURCE, or NULL; borrowed */
	int cache_mib; /* page cache, MiB; 0: DEFAULT_CACHE_MB */
	struct tab tab[SQ_TABLE_MAX];
	struct gt_reader *r;
	bool demangle;
	struct gt_stacks *stacks; /* the STACK and MODULE records seen; NULL until the first */

	/* StringIds */
	struct text *texts;
	size_t texts_mask, ntexts;
	char *arena;
	size_t arena_len, arena_cap;

	/* trace string id -> names index */
	struct map by_sid;   /* the ids from SID_DIRECT on */
	uint32_t *sid_names; /* names index + 1 of trace string ids below SID_DIRECT; 0: none
	                      * yet; owned */
	size_t sid_cap;      /* entries of sid_names */
	struct names *names;
	size_t nnames, names_cap;

	/* processes, GPUs, threads: the catalog's, and what the export adds to them */
	struct gt_catalog cat;
	struct gt_gm gm; /* GPU metrics: what each GPU's samples hold */
	struct proc *procs; /* by catalog index */
	size_t nprocs, procs_cap;
	uint32_t hosts[MAX_HW_ID]; /* StringIds id of each host seen, by hwId */
	unsigned nhosts;

	struct ctx *ctxs;
	size_t nctxs;
	struct map null_stream;    /* (process << 32 | context) -> stream id */
	struct map streams;        /* (process << 32 | stream) -> 1: one row per stream */
	struct map domain_created; /* (process << 32 | domainId) -> 1 */
	uint32_t ndomains;

	unsigned lane; /* lane of the current record's process: its index % SQ_LANES */
	uint64_t first_ns, last_ns;
	uint64_t rows, records, nvtx_id;

	/* GPU time per NVTX range: the ranges read in a pass before the load, the GPU work fed
	 * from the load's own pass; a row per projected instance at the end, with the eventId
	 * that its NVTX record (the seq-th of the load) got */
	struct gt_nvtx_gpu_pass *proj;
	uint64_t *nvtx_ids; /* eventId of each NVTX record of the load, in file order; owned */
	size_t nnvtx, capnvtx;
	char demangled[GT_DEMANGLE_BUF_BYTES];
	const char *errmsg;
	int err;
};

/* ---- SQLite plumbing --------------------------------------------------------------- */

static int sq_errno(sqlite3 *db, int rc)
{
	int e = db ? sqlite3_system_errno(db) : 0;

	if (e > 0)
		return -e;
	switch (rc & 0xff) {
	case SQLITE_NOMEM:
		return -ENOMEM;
	case SQLITE_FULL:
		return -ENOSPC;
	case SQLITE_CANTOPEN:
	case SQLITE_PERM:
	case SQLITE_READONLY:
		return -EACCES;
	default:
		return -EIO;
	}
}

static int sq_fail(struct sq *q, const char *what, int rc)
{
	if (!q->err) {
		snprintf(errbuf, sizeof(errbuf), "%s: %s", what,
		         q->db ? sqlite3_errmsg(q->db) : sqlite3_errstr(rc));
		q->errmsg = errbuf;
		q->err = sq_errno(q->db, rc);
	}
	return q->err;
}

static int sq_exec(struct sq *q, const char *sql)
{
	int rc = sqlite3_exec(q->db, sql, NULL, NULL, NULL);

	return rc == SQLITE_OK ? 0 : sq_fail(q, sql, rc);
}

/* One value of a pending row; text must stay valid until the row's batch is flushed (the
 * reader's strings and static names do; anything else goes to a table of batch 1). 16
 * bytes without padding: bind_row() compares two values as two words. */
struct val {
	union {
		int64_t i;     /* SQLITE_INTEGER; 0 for SQLITE_NULL */
		const char *s; /* SQLITE_TEXT */
		double d;      /* SQLITE_FLOAT */
	} u;
	int32_t len;  /* text bytes, -1: up to the NUL; 0 for the others */
	int32_t kind; /* SQLITE_NULL, SQLITE_INTEGER, SQLITE_FLOAT or SQLITE_TEXT; VAL_REBIND
	               * in `bound` */
};

_Static_assert(sizeof(struct val) == 16, "struct val: compared as its 16 bytes");

/* what `bound` says of a text parameter: equal to no row's value, bound again every time */
#define VAL_REBIND (-1)

/* Column i (from 1) of a row from row_begin(): bindings outlive sqlite3_reset(), so an
 * integer or NULL equal to what the row's parameter of `many` holds is not bound again:
 * most of a kernel row's columns (device, context, process, launch shape, NULL graph ids)
 * repeat from one batch to the next, and a bind costs more than the VDBE op that reads it.
 * Compared here, as the row is filled, so that flush() visits only the columns to bind. */
static inline void row_set(struct val *row, int i, int64_t v, int32_t kind)
{
	if (row[i].u.i != v || row[i].kind != kind || row[i].len != 0) {
		row[i] = (struct val){{.i = v}, 0, kind};
		row[0].u.i |= (int64_t)(1ull << i);
	}
}

static inline void b_i64(struct val *row, int i, int64_t v)
{
	row_set(row, i, v, SQLITE_INTEGER);
}

static inline void b_u64(struct val *row, int i, uint64_t v)
{
	row_set(row, i, (int64_t)v, SQLITE_INTEGER);
}

static inline void b_null(struct val *row, int i)
{
	row_set(row, i, 0, SQLITE_NULL);
}

static inline void b_f64(struct val *row, int i, double v)
{
	int64_t bits;

	memcpy(&bits, &v, sizeof(bits));
	row_set(row, i, bits, SQLITE_FLOAT);
}

/* v, or NULL when v is 0 (the records' "none") */
static inline void b_nz(struct val *row, int i, uint64_t v)
{
	row_set(row, i, (int64_t)v, v ? SQLITE_INTEGER : SQLITE_NULL);
}

/* s[0..len), len -1: up to the NUL. Text is always bound: the pointer bound last time may
 * be gone. */
static inline void b_textn(struct val *row, int i, const char *s, int32_t len)
{
	row[i] = (struct val){{.s = s}, len, SQLITE_TEXT};
	row[0].u.i |= (int64_t)(1ull << i);
}

static inline void b_text(struct val *row, int i, const char *s)
{
	if (s)
		b_textn(row, i, s, -1);
	else
		b_null(row, i);
}

/* Bind v to parameter `param` of st. */
static inline void bind_val(sqlite3_stmt *st, int param, const struct val *v)
{
	switch (v->kind) {
	case SQLITE_INTEGER:
		sqlite3_bind_int64(st, param, v->u.i);
		break;
	case SQLITE_TEXT:
		sqlite3_bind_text(st, param, v->u.s, v->len, SQLITE_STATIC);
		break;
	case SQLITE_FLOAT:
		sqlite3_bind_double(st, param, v->u.d);
		break;
	default:
		sqlite3_bind_null(st, param);
		break;
	}
}

/* Bind a row's values (row[1..ncols]) to `one`, each that differs from what `bound`
 * says it holds. */
static void bind_row(sqlite3_stmt *st, const struct val *row, struct val *bound, int ncols)
{
	for (int c = 0; c < ncols; c++) {
		if (memcmp(&row[c + 1], &bound[c], sizeof(bound[c])) == 0)
			continue;
		bound[c] = row[c + 1];
		if (bound[c].kind == SQLITE_TEXT)
			bound[c].kind = VAL_REBIND;
		bind_val(st, c + 1, &row[c + 1]);
	}
}

static int prepare_ordered(struct sq *q, enum sq_table t, unsigned rows, sqlite3_stmt **ret);

static int run(struct sq *q, sqlite3_stmt *st, enum sq_table t)
{
	int rc = sqlite3_step(st);

	sqlite3_reset(st);
	if (rc != SQLITE_DONE) {
		char what[96];

		snprintf(what, sizeof(what), "inserting into %s", gt_sq_tables[t].name);
		return sq_fail(q, what, rc);
	}
	return 0;
}

/* The lane of table t that the current record's rows go to (row_begin() and row_end() of
 * one row run within one record's handler, so they find the same one). */
static inline struct lane *lane_of(struct sq *q, enum sq_table t)
{
	struct tab *b = &q->tab[t];

	return &b->lane[b->nlanes > 1 ? q->lane : 0];
}

/* The next row of table t to fill (b_* with 1-based columns); row_end() adds it. */
static inline struct val *row_begin(struct sq *q, enum sq_table t)
{
	struct lane *l = lane_of(q, t);
	struct val *row = l->vals + (size_t)l->n * (size_t)(q->tab[t].ncols + 1);

	row[0].u.i = 0;
	return row;
}

/* Insert the pending rows of lane l of table t: a full batch through the lane's multi-row
 * INSERT, binding the columns row_set() marked, fewer one at a time. */
static int flush_lane(struct sq *q, enum sq_table t, struct lane *l)
{
	struct tab *b = &q->tab[t];
	size_t stride = (size_t)b->ncols + 1;
	int ret = 0;

	if (l->n == b->batch && b->batch > 1) {
		if (!l->many) {
			ret = prepare_ordered(q, t, b->batch, &l->many);
			if (ret < 0)
				return ret;
		}
		for (unsigned r = 0; r < l->n; r++) {
			const struct val *row = l->vals + r * stride;
			uint64_t set = (uint64_t)row[0].u.i;

			while (set) {
				int c = __builtin_ctzll(set);

				set &= set - 1;
				bind_val(l->many, (int)(r * (size_t)b->ncols) + c, &row[c]);
			}
		}
		ret = run(q, l->many, t);
	} else {
		for (unsigned r = 0; r < l->n && ret == 0; r++) {
			struct val *row = l->vals + r * stride;

			bind_row(b->one, row, b->bound, b->ncols);
			ret = run(q, b->one, t);
			/* `many` does not hold these values: whatever comes next in the row's
			 * place is bound to it */
			for (int c = 1; c <= b->ncols; c++)
				row[c].kind = VAL_REBIND;
		}
	}
	if (ret == 0)
		q->rows += l->n;
	l->n = 0;
	return ret;
}

static int flush(struct sq *q, enum sq_table t)
{
	struct tab *b = &q->tab[t];

	for (unsigned i = 0; i < b->nlanes; i++) {
		int ret = flush_lane(q, t, &b->lane[i]);

		if (ret < 0)
			return ret;
	}
	return 0;
}

static int pq_sink_row(struct sq *q, enum sq_table t, const struct val *row);

static inline int row_end(struct sq *q, enum sq_table t)
{
	struct lane *l = lane_of(q, t);

	if (q->pq) /* Parquet: each row to its table's writer as it is made (batch 1) */
		return pq_sink_row(q, t, l->vals);
	if (++l->n < q->tab[t].batch)
		return 0;
	return flush_lane(q, t, l);
}

/* ---- strings ----------------------------------------------------------------------- */

static uint64_t text_hash(const char *s, size_t len)
{
	return gt_hash_bytes(s, len) | 1; /* never 0, the empty-slot mark */
}

static int texts_grow(struct sq *q)
{
	size_t cap = q->texts ? (q->texts_mask + 1) * 2 : 1024;
	struct text *t = calloc(cap, sizeof(*t));

	if (!t)
		return -ENOMEM;
	for (size_t i = 0; q->texts && i <= q->texts_mask; i++) {
		size_t j;

		if (!q->texts[i].hash)
			continue;
		for (j = q->texts[i].hash & (cap - 1); t[j].hash; j = (j + 1) & (cap - 1))
			;
		t[j] = q->texts[i];
	}
	free(q->texts);
	q->texts = t;
	q->texts_mask = cap - 1;
	return 0;
}

/* The StringIds id of s[0..len), inserting the row the first time. 0 on failure. */
static uint32_t intern(struct sq *q, const char *s, size_t len)
{
	uint64_t h = text_hash(s, len);
	struct text *t;
	size_t j;

	if (len > UINT32_MAX / 2)
		len = UINT32_MAX / 2;
	if (!q->texts || (q->ntexts + 1) * 2 > q->texts_mask + 1) {
		if (texts_grow(q) < 0)
			goto nomem;
	}
	for (j = h & q->texts_mask; q->texts[j].hash; j = (j + 1) & q->texts_mask) {
		t = &q->texts[j];
		if (t->hash == h && t->len == len && memcmp(q->arena + t->off, s, len) == 0)
			return t->id;
	}
	if (q->arena_len + len + 1 > q->arena_cap || q->arena_len + len + 1 > UINT32_MAX) {
		size_t cap = q->arena_cap ? q->arena_cap * 2 : 1u << 16;
		char *a;

		while (cap < q->arena_len + len + 1)
			cap *= 2;
		if (cap > UINT32_MAX)
			goto nomem;
		a = realloc(q->arena, cap);
		if (!a)
			goto nomem;
		q->arena = a;
		q->arena_cap = cap;
	}
	t = &q->texts[j];
	t->hash = h;
	t->off = (uint32_t)q->arena_len;
	t->len = (uint32_t)len;
	t->id = (uint32_t)++q->ntexts;
	memcpy(q->arena + q->arena_len, s, len);
	q->arena[q->arena_len + len] = '\0';
	q->arena_len += len + 1;
	{
		struct val *row = row_begin(q, SQ_STRING_IDS); /* batch 1: s may be a buffer */

		b_i64(row, 1, t->id);
		b_textn(row, 2, s, (int32_t)len);
		if (row_end(q, SQ_STRING_IDS) < 0)
			return 0;
	}
	return t->id;
nomem:
	if (!q->err) {
		q->err = -ENOMEM;
		q->errmsg = "out of memory";
	}
	return 0;
}

/* The names entry of trace string `sid`, resolving what `kernel` needs. NULL on failure;
 * *tmp receives a placeholder for strings the trace never defined (not cached). */
static const struct names *names_of(struct sq *q, uint32_t sid, bool kernel, struct names *tmp)
{
	uint32_t idx = UINT32_MAX; /* names index; UINT32_MAX: none yet */
	struct names *n;
	const char *s;
	size_t len = 0;

	if (sid < q->sid_cap) {
		idx = q->sid_names[sid] - 1;
	} else if (sid >= SID_DIRECT) {
		const uint32_t *slot = map_find(&q->by_sid, sid);

		idx = slot ? *slot : UINT32_MAX;
	}
	if (idx != UINT32_MAX) {
		n = &q->names[idx];
		if (!kernel || n->kernel)
			return n;
	} else {
		s = sid ? gt_reader_string(q->r, sid, &len) : NULL;
		if (!s) {
			char ph[32];
			int l = snprintf(ph, sizeof(ph), "<string %u>", sid);

			memset(tmp, 0, sizeof(*tmp));
			tmp->raw = tmp->dem = tmp->base = intern(q, ph, (size_t)l);
			tmp->kernel = true;
			return tmp->raw ? tmp : NULL;
		}
		if (q->nnames == q->names_cap) {
			size_t cap = q->names_cap ? q->names_cap * 2 : 256;
			struct names *nn = realloc(q->names, cap * sizeof(*nn));

			if (!nn)
				goto nomem;
			q->names = nn;
			q->names_cap = cap;
		}
		n = &q->names[q->nnames];
		memset(n, 0, sizeof(*n));
		n->raw = intern(q, s, len);
		if (!n->raw)
			goto nomem;
		if (sid >= SID_DIRECT) {
			if (map_put(&q->by_sid, sid, (uint32_t)q->nnames) < 0)
				goto nomem;
		} else {
			if (gt_strtab_dense_reserve(&q->sid_names, &q->sid_cap, sid, 256) < 0)
				goto nomem;
			q->sid_names[sid] = (uint32_t)q->nnames + 1;
		}
		q->nnames++;
		if (!kernel)
			return n;
	}
	s = gt_reader_string(q->r, sid, &len);
	{
		const char *d =
		        q->demangle ? gt_demangle(s, q->demangled, sizeof(q->demangled)) : s;
		size_t dlen = d == s ? len : strlen(d), b, e;

		n->dem = d == s ? n->raw : intern(q, d, dlen);
		if (q->demangle) {
			/* from the mangled name: a demangled one over 4 KiB is cut, its base
			 * name is not (demangle.h) */
			const char *bn = gt_demangle_base(s, q->demangled, sizeof(q->demangled));

			n->base = intern(q, bn, strlen(bn)); /* the same text, the same id */
		} else {
			gt_demangle_base_range(s, len, &b, &e);
			n->base = (b == 0 && e == len) ? n->dem : intern(q, s + b, e - b);
		}
	}
	if (!n->dem || !n->base)
		goto nomem;
	n->kernel = true;
	return n;
nomem:
	if (!q->err) {
		q->err = -ENOMEM;
		q->errmsg = "out of memory";
	}
	return NULL;
}

static uint32_t name_id(struct sq *q, uint32_t sid)
{
	struct names tmp;
	const struct names *n = names_of(q, sid, false, &tmp);

	return n ? n->raw : 0;
}

/* ---- processes --------------------------------------------------------------------- */

/* hwId of host string `host_id` (0: unknown): hosts numbered in order of appearance, the
 * text compared (as StringIds rows). MAX_HW_ID beyond the first MAX_HW_ID hosts; 0 on
 * failure (q->err set). */
static uint32_t host_hw(struct sq *q, uint32_t host_id)
{
	const char *host = host_id ? gt_reader_string(q->r, host_id, NULL) : NULL;
	uint32_t id;
	unsigned h;

	if (!host)
		return 0;
	id = intern(q, host, strlen(host));
	if (!id)
		return 0;
	for (h = 0; h < q->nhosts && q->hosts[h] != id; h++)
		;
	if (h == q->nhosts && q->nhosts < MAX_HW_ID)
		q->hosts[q->nhosts++] = id;
	return h < MAX_HW_ID ? h : MAX_HW_ID;
}

/* The serialized globalPid of catalog process cp, on host hwId hw: hwId << 56 | vmId << 48 |
 * pid << 24, where vmId counts the earlier processes with the same host and pid (a pid
 * reused), so that every process has its own. */
static void proc_set_gpid(struct sq *q, struct proc *p, const struct gt_catalog_process *cp,
                          uint32_t hw)
{
	uint64_t base = (uint64_t)hw << 56 | ((uint64_t)cp->orig_pid & PID_BITS) << 24;
	uint64_t vm = 0;

	for (size_t i = 0; i < cp->index && i < q->nprocs; i++)
		if ((q->procs[i].gpid & ~(0xffull << 48)) == base && vm < MAX_VM_ID)
			vm++;
	p->pid = cp->orig_pid;
	p->gpid = base | vm << 48;
}

static __attribute__((noinline)) struct proc *proc_new(struct sq *q,
                                                       const struct gt_catalog_process *cp)
{
	struct proc *p;

	if (cp->index >= q->procs_cap) {
		size_t cap = q->procs_cap ? q->procs_cap * 2 : 16;
		struct proc *np;

		while (cap <= cp->index)
			cap *= 2;
		np = realloc(q->procs, cap * sizeof(*np));
		if (!np)
			return NULL;
		q->procs = np;
		q->procs_cap = cap;
	}
	while (q->nprocs <= cp->index) {
		p = &q->procs[q->nprocs];
		memset(p, 0, sizeof(*p));
		p->index = (uint32_t)q->nprocs++;
		proc_set_gpid(q, p, q->cat.procs[p->index], 0);
	}
	return &q->procs[cp->index];
}

/* The export's state of catalog process cp, created (host unknown) on first sight. */
static inline struct proc *proc_of(struct sq *q, const struct gt_catalog_process *cp)
{
	return cp->index < q->nprocs ? &q->procs[cp->index] : proc_new(q, cp);
}

static inline int64_t gtid(const struct proc *p, uint32_t tid)
{
	return (int64_t)(p->gpid | ((uint64_t)tid & PID_BITS));
}

/* Correlation ids count from 1 in every process: the process's index goes above them so
 * that a join on correlationId alone never pairs two processes' records. */
static inline void b_corr(struct val *st, int i, const struct proc *p, uint32_t corr)
{
	b_nz(st, i, corr ? ((uint64_t)p->index << 32) | corr : 0);
}

static void see(struct sq *q, uint64_t start, uint64_t end)
{
	if (start && start < q->first_ns)
		q->first_ns = start;
	if (end > q->last_ns)
		q->last_ns = end;
}

/* ---- records ----------------------------------------------------------------------- */

static inline void b_span(struct val *st, const struct gt_gpu_span *s, const struct proc *p)
{
	b_u64(st, 1, s->start_ns);
	b_u64(st, 2, s->end_ns);
	b_i64(st, 3, s->device_id);
	b_i64(st, 4, s->context_id);
	b_i64(st, 5, s->stream_id);
	b_corr(st, 6, p, s->correlation_id);
	b_i64(st, 7, (int64_t)p->gpid);
}

static int on_kernel(struct sq *q, const struct gt_rec_kernel *k, const struct proc *p)
{
	struct val *st = row_begin(q, SQ_KERNEL);
	struct names tmp;
	const struct names *n = names_of(q, k->name_id, true, &tmp);

	if (!n)
		return q->err;
	see(q, k->span.start_ns, k->span.end_ns);
	b_span(st, &k->span, p);
	b_i64(st, 8, n->dem);
	b_i64(st, 9, n->base);
	b_i64(st, 10, n->raw);
	b_i64(st, 11, k->flags & GT_KERNEL_COOPERATIVE ? SQ_LAUNCH_COOPERATIVE : SQ_LAUNCH_REGULAR);
	b_i64(st, 12, k->registers);
	b_i64(st, 13, k->grid_x);
	b_i64(st, 14, k->grid_y);
	b_i64(st, 15, k->grid_z);
	b_i64(st, 16, k->block_x);
	b_i64(st, 17, k->block_y);
	b_i64(st, 18, k->block_z);
	b_i64(st, 19, k->static_smem_bytes);
	b_i64(st, 20, k->dynamic_smem_bytes);
	b_i64(st, 21, k->local_mem_bytes);
	b_nz(st, 22, k->graph_node_id);
	b_nz(st, 23, k->graph_id);
	b_i64(st, 24, k->cluster_x);
	b_i64(st, 25, k->cluster_y);
	b_i64(st, 26, k->cluster_z);
	return row_end(q, SQ_KERNEL);
}

static int on_memcpy(struct sq *q, const struct gt_rec_memcpy *c, const struct proc *p)
{
	struct val *st = row_begin(q, SQ_MEMCPY);

	see(q, c->span.start_ns, c->span.end_ns);
	b_span(st, &c->span, p);
	b_u64(st, 8, c->bytes);
	b_i64(st, 9, c->copy_kind < GT_MEMCPY_MAX ? c->copy_kind : GT_MEMCPY_UNKNOWN);
	b_i64(st, 10, gt_sq_mem_kind(c->src_kind));
	b_i64(st, 11, gt_sq_mem_kind(c->dst_kind));
	b_i64(st, 12, c->src_device);
	b_i64(st, 13, c->dst_device);
	b_nz(st, 14, c->graph_node_id);
	return row_end(q, SQ_MEMCPY);
}

static int on_memset(struct sq *q, const struct gt_rec_memset *m, const struct proc *p)
{
	struct val *st = row_begin(q, SQ_MEMSET);

	see(q, m->span.start_ns, m->span.end_ns);
	b_span(st, &m->span, p);
	b_i64(st, 8, m->value);
	b_u64(st, 9, m->bytes);
	b_nz(st, 10, m->graph_node_id);
	b_i64(st, 11, gt_sq_mem_kind(m->mem_kind));
	return row_end(q, SQ_MEMSET);
}

static int on_sync(struct sq *q, const struct gt_rec_sync *y, const struct proc *p)
{
	struct val *st = row_begin(q, SQ_SYNC);

	see(q, y->span.start_ns, y->span.end_ns);
	b_span(st, &y->span, p);
	b_i64(st, 8, y->kind < GT_SYNC_KIND_MAX ? y->kind : GT_SYNC_UNKNOWN);
	b_i64(st, 9, y->event_id);
	return row_end(q, SQ_SYNC);
}

static int on_graph(struct sq *q, const struct gt_rec_graph *g, const struct proc *p)
{
	struct val *st = row_begin(q, SQ_GRAPH_TRACE);

	see(q, g->span.start_ns, g->span.end_ns);
	b_span(st, &g->span, p);
	b_i64(st, 8, g->graph_id);
	return row_end(q, SQ_GRAPH_TRACE);
}

/* CUDA_CALLCHAINS id of stack `id` of process p: stack ids are a process's own */
static uint64_t callchain_id(const struct proc *p, uint32_t id)
{
	return ((uint64_t)p->index << 16) + id;
}

/* A STACK, MODULE, PYCODE or PYLINE record; the last record of a stack writes its CUDA_CALLCHAINS rows. */
static int on_stack(struct sq *q, const union gt_record *rec, const struct proc *p)
{
	const struct gt_rec_stack *s = &rec->stack;
	const struct gt_stack_sym *f;
	unsigned n = 0;
	int ret;

	if (!q->stacks && gt_stacks_new(&q->stacks) < 0)
		goto nomem;
	if (gt_stacks_add(q->stacks, q->r, rec) < 0)
		goto nomem;
	if (rec->hdr.type != GT_REC_STACK || s->first + GT_STACK_FRAMES_PER_REC < s->depth)
		return 0;
	f = gt_stacks_get(q->stacks, s->hdr.pid, s->stack_id, &n);
	for (unsigned i = 0; f && i < n; i++) {
		struct val *st = row_begin(q, SQ_CALLCHAINS);
		uint32_t sym = intern(q, f[i].symbol, strlen(f[i].symbol));
		uint32_t mod = intern(q, f[i].module, strlen(f[i].module));

		if (!sym || !mod)
			return q->err;
		b_u64(st, 1, callchain_id(p, s->stack_id));
		b_i64(st, 2, i);
		b_i64(st, 3, sym);
		b_i64(st, 4, mod);
		b_u64(st, 5, f[i].pc);
		b_i64(st, 6, f[i].unresolved);
		b_nz(st, 7, f[i].python && f[i].line > 0 ? (uint64_t)f[i].line : 0);
		ret = row_end(q, SQ_CALLCHAINS);
		if (ret < 0)
			return ret;
	}
	return 0;
nomem:
	q->err = -ENOMEM;
	q->errmsg = "out of memory";
	return q->err;
}

static int on_api(struct sq *q, const struct gt_rec_api *a, const struct proc *p)
{
	struct val *st = row_begin(q, SQ_RUNTIME);
	uint32_t name = name_id(q, a->name_id);

	if (!name)
		return q->err;
	see(q, a->start_ns, a->end_ns);
	b_u64(st, 1, a->start_ns);
	b_u64(st, 2, a->end_ns);
	b_i64(st, 3, a->domain == GT_API_DRIVER ? SQ_CLASS_CUDA_DRIVER : SQ_CLASS_CUDA_RUNTIME);
	b_i64(st, 4, gtid(p, a->tid));
	b_corr(st, 5, p, a->correlation_id);
	b_i64(st, 6, name);
	b_i64(st, 7, a->return_code);
	b_nz(st, 8, a->stack_id ? callchain_id(p, a->stack_id) : 0);
	return row_end(q, SQ_RUNTIME);
}

/* NVTX domainId of trace string `sid` (0: the default domain), with the process's
 * NvtxDomainCreate row the first time it uses the domain, as Nsight Systems writes one. */
static int nvtx_domain(struct sq *q, const struct gt_rec_nvtx *n, const struct proc *p,
                       uint32_t *ret)
{
	struct names tmp;
	const struct names *nm;
	struct names *mut;
	struct val *st = row_begin(q, SQ_NVTX);
	uint64_t key;

	*ret = 0;
	if (!n->domain_id)
		return 0;
	nm = names_of(q, n->domain_id, false, &tmp);
	if (!nm)
		return q->err;
	if (nm == &tmp)
		return 0; /* undefined string: no domain to name */
	mut = (struct names *)nm;
	if (!mut->domain)
		mut->domain = ++q->ndomains;
	*ret = mut->domain;
	key = ((uint64_t)p->index << 32) | mut->domain;
	if (map_find(&q->domain_created, key))
		return 0;
	if (map_put(&q->domain_created, key, 1) < 0) {
		q->err = -ENOMEM;
		q->errmsg = "out of memory";
		return q->err;
	}
	b_u64(st, 1, n->start_ns);
	b_null(st, 2);
	b_i64(st, 3, SQ_EVENT_NVTX_DOMAIN_CREATE);
	b_null(st, 4);
	b_null(st, 5);
	b_null(st, 6);
	b_text(st, 7, gt_reader_string(q->r, n->domain_id, NULL));
	b_i64(st, 8, gtid(p, n->tid));
	b_null(st, 9);
	b_i64(st, 10, mut->raw);
	b_i64(st, 11, mut->domain);
	b_u64(st, 12, ++q->nvtx_id);
	b_null(st, 13);
	return row_end(q, SQ_NVTX);
}

/* The NVTX record just written got eventId q->nvtx_id: kept for its projection's row. */
static int on_projection(struct sq *q)
{
	if (!q->proj)
		return 0;
	if (q->nnvtx == q->capnvtx) {
		size_t cap = q->capnvtx ? q->capnvtx * 2 : 1024;
		uint64_t *n = realloc(q->nvtx_ids, cap * sizeof(*n));

		if (!n) {
			q->err = -ENOMEM;
			q->errmsg = "out of memory";
			return q->err;
		}
		q->nvtx_ids = n;
		q->capnvtx = cap;
	}
	q->nvtx_ids[q->nnvtx++] = q->nvtx_id;
	return 0;
}

/* GPUTRACE_NVTX_GPU_PROJECTION: a row per range instance that launched GPU work. The
 * projection read the same records in the same order as the load (gt_nvtx_gpu_begin and the
 * load each rewind the reader), so an instance's seq is the place of its NVTX record among
 * the load's. */
static int put_projection(struct sq *q)
{
	struct gt_nvtx_gpu *g = NULL;
	const char *msg = NULL;
	int ret = gt_nvtx_gpu_end(q->proj, &g, &msg);

	q->proj = NULL;
	if (ret < 0) {
		q->err = ret;
		q->errmsg = msg;
		return ret;
	}
	for (size_t i = 0; i < g->ninstances && ret == 0; i++) {
		const struct gt_nvtx_gpu_instance *x = &g->instances[i];
		struct val *st;

		/* cannot be: the two passes read the same records, and so the same processes */
		if (x->seq >= q->nnvtx || x->process >= q->nprocs)
			break;
		st = row_begin(q, SQ_GT_NVTX_GPU);
		b_u64(st, 1, q->nvtx_ids[x->seq]);
		b_i64(st, 2, gtid(&q->procs[x->process], x->tid));
		b_u64(st, 3, x->gpu_start_ns);
		b_u64(st, 4, x->gpu_end_ns);
		b_u64(st, 5, x->gpu_end_ns - x->gpu_start_ns);
		b_u64(st, 6, x->busy_ns);
		b_u64(st, 7, x->ops);
		if (x->name->style == GT_NVTX_PUSH_POP)
			b_i64(st, 8, x->level);
		else
			b_null(st, 8);
		ret = row_end(q, SQ_GT_NVTX_GPU);
	}
	gt_nvtx_gpu_free(g);
	return ret;
}

static int on_nvtx(struct sq *q, const struct gt_rec_nvtx *n, const struct proc *p)
{
	struct val *st;
	uint32_t domain, text = 0;
	const char *s = NULL;
	int type, ret;

	ret = nvtx_domain(q, n, p, &domain);
	if (ret < 0)
		return ret;
	if (n->message_id) {
		text = name_id(q, n->message_id);
		if (!text)
			return q->err;
		s = gt_reader_string(q->r, n->message_id, NULL); /* NULL if never defined */
	}
	switch (n->kind) {
	case GT_NVTX_MARK:
		type = SQ_EVENT_NVTX_MARK;
		break;
	case GT_NVTX_START_END:
		type = SQ_EVENT_NVTX_START_END;
		break;
	default:
		type = SQ_EVENT_NVTX_PUSH_POP;
		break;
	}
	see(q, n->start_ns, n->end_ns);
	st = row_begin(q, SQ_NVTX); /* after nvtx_domain(), which may add a row first */
	b_u64(st, 1, n->start_ns);
	if (type == SQ_EVENT_NVTX_MARK)
		b_null(st, 2);
	else
		b_u64(st, 2, n->end_ns);
	b_i64(st, 3, type);
	if (type == SQ_EVENT_NVTX_START_END)
		b_u64(st, 4, n->range_id);
	else
		b_null(st, 4);
	b_i64(st, 5, n->category);
	b_nz(st, 6, n->color);
	b_text(st, 7, s);
	b_i64(st, 8, gtid(p, n->tid));
	if (type == SQ_EVENT_NVTX_START_END)
		b_i64(st, 9, gtid(p, n->end_tid));
	else
		b_null(st, 9);
	b_nz(st, 10, text);
	b_i64(st, 11, domain);
	b_u64(st, 12, ++q->nvtx_id);
	b_nz(st, 13, n->stack_id ? callchain_id(p, n->stack_id) : 0);
	ret = row_end(q, SQ_NVTX);
	if (ret < 0)
		return ret;
	return on_projection(q);
}

static int on_memory(struct sq *q, const struct gt_rec_memory *m, const struct proc *p)
{
	struct val *st = row_begin(q, SQ_MEMORY_USAGE);

	see(q, m->ts_ns, m->ts_ns);
	b_u64(st, 1, m->ts_ns);
	b_i64(st, 2, (int64_t)p->gpid);
	b_i64(st, 3, m->device_id);
	b_i64(st, 4, m->context_id);
	b_u64(st, 5, m->address);
	b_u64(st, 6, m->bytes);
	b_i64(st, 7, gt_sq_mem_kind(m->mem_kind));
	b_i64(st, 8, m->op == GT_MEMORY_FREE ? 1 : 0);
	b_corr(st, 9, p, m->correlation_id);
	b_nz(st, 10, m->stream_id);
	b_nz(st, 11, m->pool_address);
	return row_end(q, SQ_MEMORY_USAGE);
}

static int on_pool(struct sq *q, const struct gt_rec_memory_pool *m, const struct proc *p)
{
	struct val *st = row_begin(q, SQ_MEMORY_POOL);
	int ret;

	b_u64(st, 1, m->ts_ns);
	b_i64(st, 2, (int64_t)p->gpid);
	b_i64(st, 3, m->device_id);
	b_u64(st, 4, m->address);
	b_i64(st, 5, m->op < GT_POOL_OP_MAX ? (int64_t)m->op + 1 : 0);
	b_i64(st, 6, m->pool_type);
	b_corr(st, 7, p, m->correlation_id);
	b_u64(st, 8, m->release_threshold_bytes);
	b_u64(st, 9, m->reserved_bytes);
	ret = row_end(q, SQ_MEMORY_POOL);
	if (ret < 0)
		return ret;
	st = row_begin(q, SQ_GT_MEMORY_POOLS);
	b_u64(st, 1, m->ts_ns);
	b_i64(st, 2, (int64_t)p->gpid);
	b_i64(st, 3, p->pid);
	b_i64(st, 4, m->device_id);
	b_u64(st, 5, m->address);
	b_text(st, 6, gt_pool_op_name(m->op));
	b_text(st, 7, gt_pool_type_name(m->pool_type));
	b_u64(st, 8, m->reserved_bytes);
	b_u64(st, 9, m->release_threshold_bytes);
	b_corr(st, 10, p, m->correlation_id);
	return row_end(q, SQ_GT_MEMORY_POOLS);
}

static uint32_t host_of(const struct proc *p)
{
	return (uint32_t)(p->gpid >> 56);
}

static uint32_t vm_of(const struct proc *p)
{
	return (uint32_t)(p->gpid >> 48) & 0xffu;
}

/* A process's CUDA device, as its DEVICE record describes it: the catalog's GPU, "GPU n" as
 * every output names it (gpuId = TARGET_INFO_GPU.id). */
static int on_device(struct sq *q, const struct gt_rec_device *d, const struct proc *p)
{
	const struct gt_catalog_gpu *g = gt_catalog_gpu(&q->cat, d->hdr.pid, d->device_id);
	struct val *st = row_begin(q, SQ_CUDA_DEVICE); /* batch 1: uuid is on the stack */
	char uuid[48];

	if (!g) {
		q->err = -ENOMEM;
		q->errmsg = "out of memory";
		return q->err;
	}
	g = gt_catalog_gpu_final(&q->cat, g);
	b_i64(st, 1, g->number);
	b_i64(st, 2, d->device_id);
	b_i64(st, 3, p->pid);
	b_text(st, 4, g->have_uuid ? gt_catalog_uuid(g, uuid) : NULL);
	b_i64(st, 5, d->sm_count);
	return row_end(q, SQ_CUDA_DEVICE);
}

static int on_stream(struct sq *q, const struct gt_rec_stream *s, const struct proc *p)
{
	struct val *st = row_begin(q, SQ_CUDA_STREAM);
	bool null_stream = s->flags & GT_STREAM_DEFAULT;
	uint64_t key = ((uint64_t)p->index << 32) | s->stream_id;

	if (map_find(&q->streams, key))
		return 0; /* described again (a context reset, a second flush) */
	if (map_put(&q->streams, key, 1) < 0 ||
	    (null_stream && map_put(&q->null_stream, ((uint64_t)p->index << 32) | s->context_id,
	                            s->stream_id) < 0)) {
		q->err = -ENOMEM;
		q->errmsg = "out of memory";
		return q->err;
	}
	b_i64(st, 1, s->stream_id);
	b_i64(st, 2, host_of(p));
	b_i64(st, 3, vm_of(p));
	b_i64(st, 4, p->pid);
	b_i64(st, 5, s->context_id);
	b_i64(st, 6, s->priority);
	b_i64(st, 7, null_stream ? SQ_STREAM_NULL : SQ_STREAM_DEFAULT);
	return row_end(q, SQ_CUDA_STREAM);
}

/* A damaged file's loss (docs/sql.md): a row per unit that is not 0 - chunks, the bytes
 * they took, the records they held, malformed records - of the process p at ts (a LOSS
 * record's), or of none (p NULL: what this export's reader skipped). */
static int put_damage(struct sq *q, const struct gt_catalog_damage *d, uint64_t ts,
                      const struct proc *p)
{
	static const char *const units[] = {"chunks", "bytes", "records", "malformed records"};
	uint64_t counts[] = {d->chunks, d->bytes, d->records, d->malformed};

	for (unsigned i = 0; i < 4; i++) {
		struct val *st;

		if (!counts[i])
			continue;
		st = row_begin(q, SQ_GT_LOSSES);
		if (p) {
			b_u64(st, 1, ts);
			b_i64(st, 2, (int64_t)p->gpid);
			b_i64(st, 3, p->pid);
		} else {
			for (int c = 1; c <= 3; c++)
				b_null(st, c);
		}
		b_i64(st, 4, GT_LOSS_FILE);
		b_text(st, 5, gt_loss_source_name(GT_LOSS_FILE));
		b_null(st, 6);
		b_null(st, 7);
		b_u64(st, 8, counts[i]);
		b_text(st, 9, units[i]);
		if (row_end(q, SQ_GT_LOSSES) < 0)
			return q->err;
	}
	return 0;
}

static int on_loss(struct sq *q, const struct gt_rec_loss *l, const struct proc *p)
{
	struct val *st;

	if (l->source == GT_LOSS_FILE) {
		/* counts chunks, not records (merge, info --reindex) */
		struct gt_catalog_damage d;

		gt_catalog_damage_of_loss(l, &d);
		return put_damage(q, &d, l->ts_ns, p);
	}
	st = row_begin(q, SQ_GT_LOSSES);

	b_u64(st, 1, l->ts_ns);
	b_i64(st, 2, (int64_t)p->gpid);
	b_i64(st, 3, p->pid);
	b_i64(st, 4, l->source);
	b_text(st, 5, gt_loss_source_name(l->source));
	if (l->kind != GT_REC_NONE) {
		b_i64(st, 6, l->kind);
		b_text(st, 7, gt_record_name(l->kind));
	} else {
		b_null(st, 6);
		b_null(st, 7);
	}
	b_u64(st, 8, l->count);
	b_text(st, 9, "records");
	return row_end(q, SQ_GT_LOSSES);
}

static int on_notice(struct sq *q, const struct gt_rec_notice *n, struct proc *p)
{
	struct val *st = row_begin(q, SQ_GT_NOTICES);
	const char *msg = n->message_id ? gt_reader_string(q->r, n->message_id, NULL) : NULL;

	if (n->code == GT_NOTICE_CAPTURE_START && !p->capturing) {
		p->capturing = true;
		p->capture_start = n->ts_ns;
	} else if (n->code == GT_NOTICE_CAPTURE_STOP && p->capturing) {
		struct val *c = row_begin(q, SQ_GT_CAPTURE);

		p->capturing = false;
		b_i64(c, 1, (int64_t)p->gpid);
		b_i64(c, 2, p->pid);
		b_u64(c, 3, p->capture_start);
		b_u64(c, 4, n->ts_ns);
		if (row_end(q, SQ_GT_CAPTURE) < 0)
			return q->err;
	}
	b_u64(st, 1, n->ts_ns);
	b_i64(st, 2, (int64_t)p->gpid);
	b_i64(st, 3, p->pid);
	b_i64(st, 4, n->severity);
	b_text(st, 5, gt_sq_severity_name(n->severity));
	b_i64(st, 6, n->code);
	b_text(st, 7, gt_sq_notice_code_name(n->code));
	b_text(st, 8, msg);
	b_i64(st, 9, n->detail);
	return row_end(q, SQ_GT_NOTICES);
}

static int on_overhead(struct sq *q, const struct gt_rec_overhead *o, const struct proc *p)
{
	struct val *st = row_begin(q, SQ_GT_OVERHEAD);

	b_u64(st, 1, o->start_ns);
	b_u64(st, 2, o->end_ns);
	b_i64(st, 3, (int64_t)p->gpid);
	b_i64(st, 4, o->kind);
	b_text(st, 5, gt_sq_overhead_name(o->kind));
	b_text(st, 6, o->object_kind == 1 ? "thread" : o->object_kind == 2 ? "device" : NULL);
	b_i64(st, 7, o->object_id);
	if (o->object_kind == 1)
		b_i64(st, 8, gtid(p, o->object_id));
	else
		b_null(st, 8);
	return row_end(q, SQ_GT_OVERHEAD);
}

static int on_clock(struct sq *q, const struct gt_rec_clock *c, const struct proc *p)
{
	struct val *st = row_begin(q, SQ_GT_CLOCKS);

	b_i64(st, 1, (int64_t)p->gpid);
	b_i64(st, 2, p->pid);
	b_u64(st, 3, c->trace_ns);
	b_u64(st, 4, c->realtime_ns);
	b_i64(st, 5, c->clock_id);
	b_text(st, 6, gt_sq_clock_name(c->clock_id));
	return row_end(q, SQ_GT_CLOCKS);
}

/* A PROCESS or ORIGIN record named the host of catalog process cp: it becomes the hwId of
 * the process's serialized ids, unless a row has used them already (the records of a
 * process normally come after these). */
static int on_host(struct sq *q, const struct gt_catalog_process *cp, struct proc *p)
{
	uint32_t hw;

	if (p->used || !cp->host_id)
		return 0;
	hw = host_hw(q, cp->host_id);
	if (q->err)
		return q->err;
	proc_set_gpid(q, p, cp, hw);
	return 0;
}

/* A GPU metric described: its TARGET_INFO_GPU_METRICS row, "SMs Active [%]". */
static int on_gpu_metric(struct sq *q, const struct gt_rec_gpu_metric *m)
{
	const struct gt_catalog_gpu *g = NULL;
	char name[200], type[64];
	const char *s, *u;
	size_t slen = 0, ulen = 0;
	struct val *st;

	if (gt_gm_observe(&q->gm, &q->cat, (const union gt_record *)m) < 0 ||
	    !gt_gm_gpu(&q->gm, &q->cat, m->hdr.pid, m->device_id, &g) ||
	    m->index >= GT_GPU_METRICS_MAX)
		return q->err ? q->err : 0;
	s = gt_reader_string(q->r, m->name_id, &slen);
	u = gt_reader_string(q->r, m->unit_id, &ulen);
	snprintf(name, sizeof(name), "%.*s [%.*s]", s ? (int)(slen < 120 ? slen : 120) : 0,
	         s ? s : "", u ? (int)(ulen < 32 ? ulen : 32) : 0, u ? u : "");
	snprintf(type, sizeof(type), "GPU %u metrics", g->number);
	st = row_begin(q, SQ_TARGET_GPU_METRICS); /* batch 1: the names are on the stack */
	b_i64(st, 1, g->number);
	b_i64(st, 2, g->number);
	b_text(st, 3, type);
	b_i64(st, 4, m->index);
	b_text(st, 5, name);
	return row_end(q, SQ_TARGET_GPU_METRICS);
}

/* A GPU metrics sample: a GPU_METRICS row per metric it holds a value of. */
static int on_gpu_sample(struct sq *q, const struct gt_rec_gpu_sample *r)
{
	const struct gt_catalog_gpu *g = NULL;
	struct gt_gm_gpu *gg = gt_gm_gpu(&q->gm, &q->cat, r->hdr.pid, r->device_id, &g);

	if (!gg)
		return 0;
	gg->samples++;
	see(q, r->ts_ns, r->ts_ns);
	for (unsigned i = 0; i < gg->nmetrics; i++) {
		struct val *st;
		double v;
		int ret;

		if (!gt_gm_value(gg, r, i, &v))
			continue;
		st = row_begin(q, SQ_GPU_METRICS);
		b_u64(st, 1, r->ts_ns);
		b_u64(st, 2, r->ts_ns);
		b_i64(st, 3, g->number);
		b_i64(st, 4, i);
		if (v == (double)(int64_t)v)
			b_i64(st, 5, (int64_t)v);
		else
			b_f64(st, 5, v);
		ret = row_end(q, SQ_GPU_METRICS);
		if (ret < 0)
			return ret;
	}
	return 0;
}

_Static_assert(GT_REC_MAX <= 32, "on_record: record types as bits of a uint32_t");

static int on_record(struct sq *q, const union gt_record *rec)
{
	const struct gt_catalog_process *cp;
	struct proc *p;
	int ret;

	if (rec->hdr.type == GT_REC_STRING)
		return 0;
	ret = gt_catalog_observe(&q->cat, rec);
	if (ret < 0)
		goto nomem;
	if (rec->hdr.type == GT_REC_INPUT)
		return 0; /* a merged trace's input: no process's */
	cp = gt_catalog_process(&q->cat, rec->hdr.pid);
	p = cp ? proc_of(q, cp) : NULL;
	if (!p)
		goto nomem;
	q->lane = p->index % SQ_LANES;
	/* the rows of all but these carry the process's serialized ids: fixed from here on */
	if (!((1u << rec->hdr.type) &
	      ((1u << GT_REC_PROCESS) | (1u << GT_REC_ORIGIN) | (1u << GT_REC_THREAD) |
	       (1u << GT_REC_DEVICE) | (1u << GT_REC_CONTEXT) | (1u << GT_REC_PROCESS_END))))
		p->used = true;
	switch (rec->hdr.type) {
	case GT_REC_KERNEL:
		return on_kernel(q, &rec->kernel, p);
	case GT_REC_MEMCPY:
		return on_memcpy(q, &rec->memcpy, p);
	case GT_REC_MEMSET:
		return on_memset(q, &rec->memset, p);
	case GT_REC_SYNC:
		return on_sync(q, &rec->sync, p);
	case GT_REC_GRAPH:
		return on_graph(q, &rec->graph, p);
	case GT_REC_API:
		return on_api(q, &rec->api, p);
	case GT_REC_NVTX:
		return on_nvtx(q, &rec->nvtx, p);
	case GT_REC_MEMORY:
		return on_memory(q, &rec->memory, p);
	case GT_REC_MEMORY_POOL:
		return on_pool(q, &rec->memory_pool, p);
	case GT_REC_THREAD:
		/* ThreadNames is written at the end, a row per thread; its name is a string of
		 * StringIds from here on */
		return name_id(q, rec->thread.name_id) ? 0 : q->err;
	case GT_REC_DEVICE:
		return on_device(q, &rec->device, p);
	case GT_REC_CONTEXT: {
		struct ctx *c = realloc(q->ctxs, (q->nctxs + 1) * sizeof(*c));

		if (!c)
			goto nomem;
		q->ctxs = c;
		c[q->nctxs++] =
		        (struct ctx){p->index, rec->context.context_id, rec->context.device_id};
		return 0;
	}
	case GT_REC_STREAM:
		return on_stream(q, &rec->stream, p);
	case GT_REC_PROCESS:
	case GT_REC_ORIGIN:
		return on_host(q, cp, p);
	case GT_REC_OVERHEAD:
		return on_overhead(q, &rec->overhead, p);
	case GT_REC_LOSS:
		return on_loss(q, &rec->loss, p);
	case GT_REC_CLOCK:
		return on_clock(q, &rec->clock, p);
	case GT_REC_NOTICE:
		return on_notice(q, &rec->notice, p);
	case GT_REC_STACK:
	case GT_REC_MODULE:
	case GT_REC_PYCODE:
	case GT_REC_PYLINE:
		return on_stack(q, rec, p);
	case GT_REC_GPU_METRIC:
		return on_gpu_metric(q, &rec->gpu_metric);
	case GT_REC_GPU_SAMPLE:
		return on_gpu_sample(q, &rec->gpu_sample);
	default:
		return 0;
	}
nomem:
	if (!q->err) {
		q->err = -ENOMEM;
		q->errmsg = "out of memory";
	}
	return q->err;
}

/* ---- the rows written at the end --------------------------------------------------- */

static int put_meta(struct sq *q, const char *name, const char *value)
{
	struct val *st = row_begin(q, SQ_META_DATA_EXPORT);

	b_text(st, 1, name);
	b_text(st, 2, value);
	return row_end(q, SQ_META_DATA_EXPORT);
}

static int put_enums(struct sq *q)
{
	char sql[256];

	for (const struct sq_enum_def *e = gt_sq_enums; e->table; e++) {
		sqlite3_stmt *st;
		int rc;

		snprintf(sql, sizeof(sql),
		         "CREATE TABLE %s (id INTEGER NOT NULL PRIMARY KEY, name TEXT, label TEXT)",
		         e->table);
		if (sq_exec(q, sql) < 0)
			return q->err;
		snprintf(sql, sizeof(sql), "INSERT INTO %s (id, name, label) VALUES (?,?,?)",
		         e->table);
		rc = sqlite3_prepare_v2(q->db, sql, -1, &st, NULL);
		if (rc != SQLITE_OK)
			return sq_fail(q, sql, rc);
		for (unsigned i = 0; i < e->nrows; i++) {
			sqlite3_bind_int(st, 1, e->rows[i].id);
			sqlite3_bind_text(st, 2, e->rows[i].name, -1, SQLITE_STATIC);
			sqlite3_bind_text(st, 3, e->rows[i].label, -1, SQLITE_STATIC);
			rc = sqlite3_step(st);
			sqlite3_reset(st);
			if (rc != SQLITE_DONE) {
				sqlite3_finalize(st); /* pairs with the prepare above */
				return sq_fail(q, sql, rc);
			}
			q->rows++;
		}
		sqlite3_finalize(st); /* pairs with the prepare above */
	}
	return 0;
}

static const char *str_of(struct sq *q, uint32_t id)
{
	return id ? gt_reader_string(q->r, id, NULL) : NULL;
}

/* NULL for the catalog's "unknown" (-1) */
static void b_known(struct val *st, int i, int32_t v)
{
	if (v >= 0)
		b_i64(st, i, v);
	else
		b_null(st, i);
}

/* A row per catalog process: PROCESSES, GPUTRACE_PROCESSES, GPUTRACE_RANKS (when its PROCESS
 * record came), MPI_RANKS (when it has a rank), and its capture range still open. */
static int put_process(struct sq *q, const struct gt_catalog_process *cp, struct proc *p)
{
	const char *exe = cp->have_info ? str_of(q, cp->exe_id) : NULL;
	const char *host = str_of(q, cp->host_id);
	const char *cmd = cp->have_info ? str_of(q, cp->cmdline_id) : NULL;
	const char *base = exe ? strrchr(exe, '/') : NULL;
	struct val *st = row_begin(q, SQ_PROCESSES);

	b_i64(st, 1, (int64_t)p->gpid);
	b_i64(st, 2, p->pid);
	b_text(st, 3, base ? base + 1 : exe);
	if (row_end(q, SQ_PROCESSES) < 0)
		return q->err;

	st = row_begin(q, SQ_GT_PROCESSES);
	b_i64(st, 1, (int64_t)p->gpid);
	b_i64(st, 2, p->pid);
	if (cp->have_info) {
		b_i64(st, 3, cp->ppid);
		b_u64(st, 7, cp->start_ns);
		b_i64(st, 11, (cp->flags & GT_PROCESS_STANDALONE) != 0);
	} else {
		b_null(st, 3);
		b_null(st, 7);
		b_null(st, 11);
	}
	b_text(st, 4, host);
	b_text(st, 5, exe);
	b_text(st, 6, cmd);
	if (cp->ended) {
		b_u64(st, 8, cp->end_ns);
		b_text(st, 9, gt_process_end_name(cp->end_how));
		b_i64(st, 10, cp->end_code);
	} else {
		b_null(st, 8);
		b_null(st, 9);
		b_null(st, 10);
	}
	if (row_end(q, SQ_GT_PROCESSES) < 0)
		return q->err;

	if (cp->have_info) {
		st = row_begin(q, SQ_GT_RANKS);
		b_i64(st, 1, (int64_t)p->gpid);
		b_i64(st, 2, p->pid);
		b_text(st, 3, host);
		b_known(st, 4, cp->rank);
		b_known(st, 5, cp->local_rank);
		b_known(st, 6, cp->world_size);
		if (row_end(q, SQ_GT_RANKS) < 0)
			return q->err;
	}
	if (cp->have_info && cp->rank >= 0) {
		/* the process's main thread (tid == pid) stands for it */
		st = row_begin(q, SQ_MPI_RANKS);
		b_i64(st, 1, gtid(p, p->pid));
		b_i64(st, 2, cp->rank);
		if (row_end(q, SQ_MPI_RANKS) < 0)
			return q->err;
	}
	if (p->capturing) {
		st = row_begin(q, SQ_GT_CAPTURE);
		b_i64(st, 1, (int64_t)p->gpid);
		b_i64(st, 2, p->pid);
		b_u64(st, 3, p->capture_start);
		b_null(st, 4);
		if (row_end(q, SQ_GT_CAPTURE) < 0)
			return q->err;
	}
	return 0;
}

/* ThreadNames: a row per named thread (globalTid), with the name it was given last. */
static int put_threads(struct sq *q)
{
	for (uint32_t i = 0; i < q->cat.nthreads; i++) {
		const struct gt_catalog_thread *t = q->cat.threads[i];
		struct val *st;
		uint32_t name;

		if (!t->name_id || t->process >= q->nprocs)
			continue;
		name = name_id(q, t->name_id);
		if (!name)
			return q->err;
		st = row_begin(q, SQ_THREAD_NAMES);
		b_i64(st, 1, name);
		b_i64(st, 2, gtid(&q->procs[t->process], t->tid));
		if (row_end(q, SQ_THREAD_NAMES) < 0)
			return q->err;
	}
	return 0;
}

/* TARGET_INFO_GPU: a row per GPU of the catalog (by uuid), "GPU n" its id; GPUTRACE_DEVICES:
 * which GPU each process's CUDA devices are. */
static int put_gpus(struct sq *q)
{
	const struct gt_catalog *c = &q->cat;
	uint32_t *procs = NULL, *ordinals = NULL, cap = 0;
	int ret = 0;

	for (uint32_t i = 0; i < c->ngpus && ret == 0; i++) {
		const struct gt_catalog_gpu *g = c->gpus[i];
		const struct gt_catalog_gpu *f = gt_catalog_gpu_final(c, g);
		uint32_t n = gt_catalog_gpu_users(c, g, NULL, NULL, 0);
		char uuid[48];
		struct val *st;

		if (n > cap) {
			uint32_t *a = realloc(procs, n * sizeof(*a));
			uint32_t *b = a ? realloc(ordinals, n * sizeof(*b)) : NULL;

			if (a)
				procs = a;
			if (b)
				ordinals = b;
			if (!a || !b) {
				ret = -ENOMEM;
				break;
			}
			cap = n;
		}
		gt_catalog_gpu_users(c, g, procs, ordinals, n);
		for (uint32_t k = 0; k < n && ret == 0; k++) {
			const struct proc *p = procs[k] < q->nprocs ? &q->procs[procs[k]] : NULL;

			if (!p)
				continue;
			st = row_begin(q, SQ_GT_DEVICES); /* batch 1: uuid is on the stack */
			b_i64(st, 1, (int64_t)p->gpid);
			b_i64(st, 2, p->pid);
			b_i64(st, 3, ordinals[k]);
			b_i64(st, 4, f->number);
			b_text(st, 5, f->have_uuid ? gt_catalog_uuid(f, uuid) : NULL);
			ret = row_end(q, SQ_GT_DEVICES);
		}
		if (ret < 0 || g->merged_into)
			continue;
		st = row_begin(q, SQ_GPU); /* batch 1 */
		b_i64(st, 1,
		      g->process < q->nprocs
		              ? (int64_t)((uint64_t)host_of(&q->procs[g->process]) << 56)
		              : 0);
		b_i64(st, 2, g->number);
		b_text(st, 3, g->have_info ? str_of(q, g->name_id) : NULL);
		if (g->have_info) {
			/* Nsight Systems' units: bytes, bytes per second; the memory is double
			 * data rate, two transfers per clock */
			uint64_t bw =
			        (uint64_t)g->mem_clock_khz * 1000u * 2u * (g->mem_bus_width / 8u);

			b_u64(st, 4, g->global_mem_bytes);
			b_nz(st, 5, bw);
			b_i64(st, 6, g->sm_count);
			b_i64(st, 9, g->max_shared_mem_per_block);
			b_i64(st, 10, g->max_threads_per_block);
			b_i64(st, 11, g->cc_major);
			b_i64(st, 12, g->cc_minor);
			/* Hz, as Nsight Systems writes it; NULL where the trace predates the field */
			b_nz(st, 13, (uint64_t)g->clock_khz * 1000u);
		} else {
			for (int col = 4; col <= 13; col++)
				b_null(st, col);
		}
		b_text(st, 7, g->have_uuid ? gt_catalog_uuid(g, uuid) : NULL);
		b_i64(st, 8, g->device_id);
		ret = row_end(q, SQ_GPU);
	}
	free(procs);
	free(ordinals);
	if (ret == -ENOMEM && !q->err) {
		q->err = ret;
		q->errmsg = "out of memory";
	}
	return ret < 0 ? q->err : 0;
}

static int put_processes(struct sq *q)
{
	for (uint32_t i = 0; i < q->cat.nprocs; i++) {
		struct proc *p = proc_of(q, q->cat.procs[i]);

		if (!p)
			return -ENOMEM;
		if (put_process(q, q->cat.procs[i], p) < 0)
			return q->err;
	}
	if (put_threads(q) < 0 || put_gpus(q) < 0)
		return q->err;
	for (size_t i = 0; i < q->nctxs; i++) {
		const struct proc *p = &q->procs[q->ctxs[i].proc];
		struct val *st = row_begin(q, SQ_CUDA_CONTEXT);
		const uint32_t *null_stream = map_find(
		        &q->null_stream, ((uint64_t)p->index << 32) | q->ctxs[i].context_id);

		b_i64(st, 1, null_stream ? *null_stream : 0);
		b_i64(st, 2, host_of(p));
		b_i64(st, 3, vm_of(p));
		b_i64(st, 4, p->pid);
		b_i64(st, 5, q->ctxs[i].device_id);
		b_i64(st, 6, q->ctxs[i].context_id);
		if (row_end(q, SQ_CUDA_CONTEXT) < 0)
			return q->err;
	}
	return 0;
}

/* What this export's reader skipped, as the catalog has it once the trace was read. */
static int put_reader_losses(struct sq *q, const struct gt_reader_status *rs)
{
	gt_catalog_read_done(&q->cat, rs);
	return put_damage(q, &q->cat.damage_read, 0, NULL);
}

/* The CUPTI version: the header's, else those the processes loaded (their notices, as
 * under gputrace run), comma-separated in the order they came; NULL if neither says. */
static const char *cupti_version(const struct sq *q, const struct gt_trace_header *h, char *buf,
                                 size_t size)
{
	size_t n = 0;

	if (h->info.cupti_version && h->info.cupti_version[0])
		return h->info.cupti_version;
	buf[0] = '\0';
	for (uint32_t i = 0; i < q->cat.ncupti && n < size; i++)
		n += (size_t)snprintf(buf + n, size - n, "%s%" PRId32, i ? "," : "",
		                      q->cat.cupti[i]);
	return buf[0] ? buf : NULL;
}

static int put_trace(struct sq *q)
{
	const struct gt_trace_header *h = gt_reader_header(q->r);
	const struct gt_reader_status *rs = gt_reader_status(q->r);
	struct val *st = row_begin(q, SQ_GT_TRACE); /* batch 1: cupti is on the stack */
	char utc[64] = "", cupti[GT_CATALOG_CUPTI * 12 + 1];
	struct gt_trace_times tt;
	time_t secs = (time_t)(h->info.start_realtime_ns / 1000000000u);
	struct tm tm;
	int ret;

	b_i64(st, 1, h->version);
	b_i64(st, 2, h->info.clock_id);
	b_text(st, 3, gt_sq_clock_name(h->info.clock_id));
	b_u64(st, 4, h->info.start_realtime_ns);
	b_u64(st, 5, h->info.start_trace_ns);
	b_text(st, 6, h->info.hostname);
	b_text(st, 7, h->info.cmdline);
	b_text(st, 8, h->info.tool_version);
	b_text(st, 9, h->info.cuda_version);
	b_text(st, 10, cupti_version(q, h, cupti, sizeof(cupti)));
	b_text(st, 11, h->info.driver_version);
	b_i64(st, 12, rs->recovered);
	b_u64(st, 13, rs->chunks_read);
	b_u64(st, 14, rs->chunks_skipped);
	b_u64(st, 15, rs->bytes_skipped);
	b_u64(st, 16, rs->records_skipped);
	b_u64(st, 17, q->records);
	/* the trace's zero (docs/cli.md, "Time"): what the relative times of the docs' recipes
	 * count from */
	ret = gt_reader_times(q->r, &tt);
	if (ret < 0)
		return ret;
	b_u64(st, 18, tt.zero_ns);
	ret = row_end(q, SQ_GT_TRACE);
	if (ret < 0)
		return ret;
	ret = put_reader_losses(q, rs);
	if (ret < 0)
		return ret;

	if (gmtime_r(&secs, &tm))
		strftime(utc, sizeof(utc), "%Y-%m-%dT%H:%M:%SZ", &tm);
	st = row_begin(q, SQ_SESSION_START);
	b_u64(st, 1, h->info.start_realtime_ns);
	b_text(st, 2, utc[0] ? utc : NULL);
	b_u64(st, 3, h->info.start_trace_ns);
	ret = row_end(q, SQ_SESSION_START);
	if (ret < 0)
		return ret;

	if (q->first_ns > q->last_ns)
		q->first_ns = q->last_ns = h->info.start_trace_ns;
	st = row_begin(q, SQ_ANALYSIS_DETAILS);
	b_u64(st, 1, q->last_ns - q->first_ns);
	b_u64(st, 2, q->first_ns);
	b_u64(st, 3, q->last_ns);
	ret = row_end(q, SQ_ANALYSIS_DETAILS);
	if (ret < 0)
		return ret;

	if (put_meta(q, "EXPORT_PRODUCT_NAME", "gputrace") < 0 ||
	    put_meta(q, "EXPORT_PRODUCT_VERSION", GT_VERSION) < 0 ||
	    put_meta(q, "EXPORT_SCHEMA_VERSION", GT_SQL_NSYS_SCHEMA_VERSION) < 0 ||
	    put_meta(q, "GPUTRACE_SCHEMA_VERSION", GT_SQL_SCHEMA_VERSION) < 0 ||
	    (q->identity && put_meta(q, "GPUTRACE_SOURCE", q->identity) < 0))
		return q->err;
	return 0;
}

/* ---- the export -------------------------------------------------------------------- */

/* Rows per INSERT: the tables with a row per event take SQ_BATCH rows a statement, which
 * keeps SQLite's write cursor open across them (about 1.5x the rows per second). */
static unsigned batch_of(enum sq_table t)
{
	switch (t) {
	case SQ_KERNEL:
	case SQ_MEMCPY:
	case SQ_MEMSET:
	case SQ_SYNC:
	case SQ_GRAPH_TRACE:
	case SQ_RUNTIME:
	case SQ_MEMORY_USAGE:
	case SQ_NVTX:
	case SQ_GPU_METRICS:
		return SQ_BATCH;
	default:
		return 1;
	}
}

/* Append to buf (cap bytes, *len of them used) as snprintf would; false when it did not fit. */
__attribute__((format(printf, 4, 5))) static bool put(char *buf, size_t cap, size_t *len,
                                                      const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf + *len, cap - *len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= cap - *len)
		return false;
	*len += (size_t)n;
	return true;
}

/* An INSERT of gt_sq_tables rewritten in the table's column order, up to its last named
 * column: "INSERT INTO T (c, a) VALUES (?,0)" on T (a, b, c) becomes
 * "INSERT INTO T (a, b, c) VALUES (0,NULL,?1)", `rows` tuples, the k-th `?` of row r
 * numbered r * ncols + k + 1 as the exporter binds it. With its column list a prefix of the
 * table's, in order, SQLite builds each row straight in the registers of the record; out
 * of order or with gaps it copies every value once more (an OP_SCopy per column and row:
 * 3 % of the bench's instructions, docs/performance.md). Columns after the last named one
 * stay out: their NULL is set once per statement. */
enum {
	SQ_MAX_COLS = 64,
	SQ_NAME_BYTES = 48,
	SQ_VALUE_BYTES = 8
};

static bool loads_loose(enum sq_table t);

/* An INSERT of gt_sq_tables: its values, as text, and the columns they go to ("" for each
 * when it names none: "INSERT INTO T VALUES (...)" gives every column, in order). */
struct sq_insert {
	char name[SQ_MAX_COLS][SQ_NAME_BYTES], val[SQ_MAX_COLS][SQ_VALUE_BYTES];
	int n;
	bool named;
};

static bool insert_parse(const char *ins, struct sq_insert *in)
{
	const char *cols = strchr(ins, '('), *vals = strstr(ins, " VALUES (");

	if (!cols || !vals)
		return false;
	in->named = cols < vals;
	in->n = 0;
	for (const char *c = in->named ? cols + 1 : NULL, *v = vals + 9; *v != ')';) {
		size_t vl = strcspn(v, ",)");

		if (in->n == SQ_MAX_COLS || vl >= SQ_VALUE_BYTES || *v == '\0')
			return false;
		in->name[in->n][0] = '\0';
		if (c) {
			size_t cl = strcspn(c, ",)");

			if (*c == ')' || cl >= SQ_NAME_BYTES)
				return false;
			memcpy(in->name[in->n], c, cl);
			in->name[in->n][cl] = '\0';
			c += cl;
			if (*c == ',')
				c += 2; /* ", " */
		}
		memcpy(in->val[in->n], v, vl);
		in->val[in->n][vl] = '\0';
		in->n++;
		v += vl;
		if (*v == ',')
			v++;
	}
	return true;
}

/* Which value of in goes to column col (len bytes); -1: none. */
static int insert_find(const struct sq_insert *in, const char *col, size_t len)
{
	for (int j = 0; j < in->n; j++)
		if (strlen(in->name[j]) == len && strncmp(in->name[j], col, len) == 0)
			return j;
	return -1;
}

static int prepare_ordered(struct sq *q, enum sq_table t, unsigned rows, sqlite3_stmt **ret)
{
	const char *ins = gt_sq_tables[t].insert;
	struct sq_insert in;
	char tcol[SQ_MAX_COLS][SQ_NAME_BYTES]; /* the table's columns */
	int param[SQ_MAX_COLS], of[SQ_MAX_COLS];
	int nparams = 0, ncols = 0, nfound = 0, last = -1, rc;
	bool numbered = false;
	sqlite3_stmt *st;
	char *sql = NULL;
	size_t len = 0;
	bool ok;
	size_t cap;

	if (!insert_parse(ins, &in))
		return sq_fail(q, ins, SQLITE_INTERNAL);
	for (int j = 0; j < in.n; j++)
		param[j] = strcmp(in.val[j], "?") == 0 ? ++nparams : 0;
	/* the table's columns, in order: which named one each is (-1: none) */
	{
		char pragma[128];

		snprintf(pragma, sizeof(pragma), "SELECT name FROM pragma_table_info('%s')",
		         gt_sq_tables[t].name);
		rc = sqlite3_prepare_v2(q->db, pragma, -1, &st, NULL);
		while (rc == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW) {
			const char *n = (const char *)sqlite3_column_text(st, 0);
			int j;

			if (ncols == SQ_MAX_COLS || !n || strlen(n) >= SQ_NAME_BYTES) {
				rc = SQLITE_INTERNAL;
				break;
			}
			strcpy(tcol[ncols], n);
			/* unnamed: the values are the columns in order */
			j = in.named ? insert_find(&in, n, strlen(n)) : ncols < in.n ? ncols : -1;
			of[ncols] = j;
			if (j >= 0) {
				/* a loose table has the literals after its last parameter as
				 * defaults (loose_defaults()) */
				if (!loads_loose(t) || param[j])
					last = ncols;
				nfound++;
			}
			ncols++;
		}
		sqlite3_finalize(st); /* pairs with sqlite3_prepare_v2 above */
		if (rc == SQLITE_OK && nfound != in.n)
			rc = SQLITE_INTERNAL; /* a value for no column of the table */
		if (rc != SQLITE_OK)
			return sq_fail(q, ins, rc);
	}
	cap = strlen(gt_sq_tables[t].name) + 32 + (size_t)(last + 1) * SQ_NAME_BYTES +
	      (size_t)rows * ((size_t)(last + 1) * 16 + 4);
	sql = malloc(cap);
	if (!sql) {
		q->err = -ENOMEM;
		q->errmsg = "out of memory";
		return q->err;
	}
	ok = put(sql, cap, &len, "INSERT INTO %s (", gt_sq_tables[t].name);
	for (int i = 0; ok && i <= last; i++)
		ok = put(sql, cap, &len, "%s\"%s\"", i ? "," : "", tcol[i]);
	ok = ok && put(sql, cap, &len, ") VALUES ");
	/* plain `?` where the values keep their order: SQLite looks up the name of every
	 * numbered one when it compiles it (quadratic in the parameters of the statement) */
	for (int i = 0, k = 0; i <= last; i++) {
		if (of[i] >= 0 && param[of[i]] && param[of[i]] != ++k)
			numbered = true;
	}
	for (unsigned r = 0; ok && r < rows; r++) {
		ok = put(sql, cap, &len, r ? ",(" : "(");
		for (int i = 0; ok && i <= last; i++) {
			int j = of[i];
			const char *sep = i ? "," : "";

			if (j < 0)
				ok = put(sql, cap, &len, "%sNULL", sep);
			else if (param[j] && !numbered)
				ok = put(sql, cap, &len, "%s?", sep);
			else if (param[j])
				ok = put(sql, cap, &len, "%s?%u", sep,
				         r * (unsigned)nparams + (unsigned)param[j]);
			else
				ok = put(sql, cap, &len, "%s%s", sep, in.val[j]);
		}
		ok = ok && put(sql, cap, &len, ")");
	}
	if (!ok) {
		free(sql);
		return sq_fail(q, ins, SQLITE_INTERNAL);
	}
	rc = sqlite3_prepare_v3(q->db, sql, -1, SQLITE_PREPARE_PERSISTENT, ret, NULL);
	free(sql);
	return rc == SQLITE_OK ? 0 : sq_fail(q, ins, rc);
}

/* Tables loaded "loose": created without their columns' declared types and NOT NULL
 * constraints, then given Nsight Systems' exact CREATE statement once their rows are in
 * (set_schema()). A declared type and NOT NULL change how SQLite checks and converts a
 * value on insert, never how the row is stored: these tables get only integers, their
 * one text column a literal '', and NULL only where the schema allows it, which store the
 * same bytes either way. Loose, SQLite skips an OP_HaltIfNull per NOT NULL column and the
 * affinity pass per row: 12 % of the load's instructions (docs/performance.md). */
static bool loads_loose(enum sq_table t)
{
	switch (t) {
	case SQ_KERNEL:
	case SQ_MEMCPY:
	case SQ_MEMSET:
	case SQ_SYNC:
	case SQ_GRAPH_TRACE:
	case SQ_RUNTIME:
		return true;
	default:
		return false;
	}
}

/* The columns of buf (a CREATE TABLE) after the last one that `ins` binds a parameter to
 * given the literal that `ins` puts there as their DEFAULT, into out (size bytes):
 * prepare_ordered() leaves them out of a loose table's INSERT, and SQLite then sets them
 * once per statement instead of once per row (kernels: four NULLs and a ''). */
static int loose_defaults(const char *buf, const char *ins, char *out, size_t size)
{
	const char *start = strchr(buf, '('), *p;
	const char *last = NULL; /* end of the name of the last column with a parameter */
	struct sq_insert in;
	size_t n = 0;
	int j;

	if (!start || !insert_parse(ins, &in))
		return -EINVAL;
	for (p = start + 1; *p;) {
		size_t len = strcspn(p, " ,)");

		j = insert_find(&in, p, len);
		if (j >= 0 && strcmp(in.val[j], "?") == 0)
			last = p + len;
		p += strcspn(p, ",)");
		if (*p != ',')
			break;
		p += 2; /* ", " */
	}
	for (p = buf; *p;) {
		size_t len, vlen;

		if (n + 1 >= size)
			return -ENAMETOOLONG;
		out[n++] = *p;
		if (!last || p < last || (*p != '(' && *p != ' ') || (*p == ' ' && p[-1] != ',')) {
			p++;
			continue;
		}
		p++; /* the start of a column after the last with a parameter */
		len = strcspn(p, " ,)");
		if (n + len >= size)
			return -ENAMETOOLONG;
		memcpy(out + n, p, len);
		n += len;
		j = insert_find(&in, p, len);
		if (j >= 0) {
			vlen = strlen(in.val[j]);
			if (n + 9 + vlen >= size)
				return -ENAMETOOLONG;
			memcpy(out + n, " DEFAULT ", 9);
			memcpy(out + n + 9, in.val[j], vlen);
			n += 9 + vlen;
		}
		p += len;
	}
	out[n] = '\0';
	return 0;
}

/* create without " INTEGER", " TEXT" and " NOT NULL" after a column name, into buf */
static int loose_create(const char *create, char *buf, size_t size)
{
	static const char *const drop[] = {" INTEGER", " TEXT", " NOT NULL"};
	size_t n = 0;

	while (*create) {
		size_t skip = 0;

		for (unsigned i = 0; i < sizeof(drop) / sizeof(drop[0]) && !skip; i++) {
			size_t len = strlen(drop[i]);

			if (strncmp(create, drop[i], len) == 0 &&
			    (create[len] == ',' || create[len] == ')' || create[len] == ' '))
				skip = len;
		}
		if (skip) {
			create += skip;
			continue;
		}
		if (n + 1 >= size)
			return -ENAMETOOLONG;
		buf[n++] = *create++;
	}
	buf[n] = '\0';
	return 0;
}

/* The loose tables' CREATE statements in sqlite_master replaced by the exact ones, as
 * SQLite's "ALTER TABLE" page describes for changes that leave the stored rows as they are
 * (writable_schema, then a new schema_version). The connection keeps the loose
 * definitions in memory: gt_sql_export's new connection reads the new ones before the
 * indexes are built. sqlite_master, not sqlite_schema: that name needs SQLite 3.33. */
static int set_schema(struct sq *q)
{
	sqlite3_stmt *st = NULL;
	int64_t version = -1;
	char sql[64];
	int rc, ret;

#ifdef SQLITE_DBCONFIG_DEFENSIVE
	/* a SQLite built with SQLITE_DEFAULT_DEFENSIVE ignores writable_schema otherwise */
	rc = sqlite3_db_config(q->db, SQLITE_DBCONFIG_DEFENSIVE, 0, (int *)NULL);
	if (rc != SQLITE_OK)
		return sq_fail(q, "setting the tables' schema", rc);
#endif
	ret = sq_exec(q, "PRAGMA writable_schema=ON");
	if (ret < 0)
		return ret;
	rc = sqlite3_prepare_v2(
	        q->db, "UPDATE sqlite_master SET sql = ?1 WHERE type = 'table' AND name = ?2", -1,
	        &st, NULL);
	for (unsigned t = 0; t < SQ_TABLE_MAX && rc == SQLITE_OK; t++) {
		if (!loads_loose(t))
			continue;
		sqlite3_bind_text(st, 1, gt_sq_tables[t].create, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 2, gt_sq_tables[t].name, -1, SQLITE_STATIC);
		rc = sqlite3_step(st);
		if (rc == SQLITE_DONE)
			rc = sqlite3_changes(q->db) == 1 ? SQLITE_OK : SQLITE_INTERNAL;
		sqlite3_reset(st);
	}
	sqlite3_finalize(st); /* pairs with sqlite3_prepare_v2 above */
	if (rc != SQLITE_OK)
		return sq_fail(q, "setting the tables' schema", rc);
	rc = sqlite3_prepare_v2(q->db, "PRAGMA schema_version", -1, &st, NULL);
	if (rc == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
		version = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st); /* pairs with sqlite3_prepare_v2 above */
	if (version < 0)
		return sq_fail(q, "reading the schema version",
		               rc == SQLITE_OK ? SQLITE_ERROR : rc);
	snprintf(sql, sizeof(sql), "PRAGMA schema_version=%lld", (long long)version + 1);
	ret = sq_exec(q, sql);
	if (ret == 0)
		ret = sq_exec(q, "PRAGMA writable_schema=OFF");
	return ret;
}

/* Open (or create) the database at path with the settings of the export. */
static int sq_connect(struct sq *q, const char *path, int flags)
{
	char sql[128];
	int rc;

	/* NOMUTEX: one thread uses this connection; its mutexes cost ~7% of the load */
	rc = sqlite3_open_v2(path, &q->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | flags,
	                     NULL);
	if (rc != SQLITE_OK)
		return sq_fail(q, "cannot create the database", rc);
	/* nothing to roll back to: a failed export is deleted whole */
	if (sq_exec(q, "PRAGMA journal_mode=OFF") < 0 || sq_exec(q, "PRAGMA synchronous=OFF") < 0 ||
	    sq_exec(q, "PRAGMA locking_mode=EXCLUSIVE") < 0 ||
	    sq_exec(q, "PRAGMA page_size=16384") < 0 || sq_exec(q, "PRAGMA secure_delete=OFF") < 0)
		return q->err;
	snprintf(sql, sizeof(sql), "PRAGMA cache_size=-%d",
	         (q->cache_mib > 0 ? q->cache_mib : DEFAULT_CACHE_MB) * 1024);
	return sq_exec(q, sql);
}

/* The connection that builds the indexes: the export's database attached as "gt" to an
 * empty in-memory main database. SQLite sizes a sort's memory by the main database's
 * cache_size, and the page cache of the index's own database by that database's: the sorts
 * get twice the load's cache (32 MiB: the indexes of 2 M records sort almost without
 * temporary files, those of 10 M in fewer runs) and the pages a quarter of it, all they
 * need to read the table and append the index. One cache_size for both, 32 or 48 MiB, took
 * the peak RSS over 64 MB at 10 M records (docs/performance.md). */
static int sq_connect_indexes(struct sq *q, const char *path)
{
	int mib = q->cache_mib > 0 ? q->cache_mib : DEFAULT_CACHE_MB;
	sqlite3_stmt *st = NULL;
	char sql[256];
	int rc;

	/* not SQLITE_OPEN_MEMORY: ATTACH opens with the connection's flags */
	rc = sqlite3_open_v2(":memory:", &q->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL);
	if (rc != SQLITE_OK)
		return sq_fail(q, "cannot open a connection", rc);
	/* the sorts write their runs in blocks of main's page size */
	snprintf(sql, sizeof(sql), "PRAGMA page_size=16384; PRAGMA cache_size=-%d", mib * 2 * 1024);
	if (sq_exec(q, sql) < 0)
		return q->err;
	rc = sqlite3_prepare_v2(q->db, "ATTACH DATABASE ?1 AS gt", -1, &st, NULL);
	if (rc == SQLITE_OK) {
		sqlite3_bind_text(st, 1, path, -1, SQLITE_STATIC);
		rc = sqlite3_step(st);
		rc = rc == SQLITE_DONE ? SQLITE_OK : rc;
	}
	sqlite3_finalize(st); /* pairs with sqlite3_prepare_v2 above */
	if (rc != SQLITE_OK)
		return sq_fail(q, "cannot open the database", rc);
	snprintf(sql, sizeof(sql),
	         "PRAGMA gt.journal_mode=OFF; PRAGMA gt.synchronous=OFF; "
	         "PRAGMA gt.locking_mode=EXCLUSIVE; PRAGMA gt.secure_delete=OFF; "
	         "PRAGMA gt.cache_size=-%d",
	         (mib >= 4 ? mib / 4 : 1) * 1024);
	return sq_exec(q, sql);
}

static int sq_open(struct sq *q, const char *tmp)
{
	char loose[4096], dflt[4096];
	int rc;

	if (sq_connect(q, tmp, SQLITE_OPEN_CREATE) < 0)
		return q->err;
	for (unsigned t = 0; t < SQ_TABLE_MAX; t++) {
		const char *create = gt_sq_tables[t].create;

		if (loads_loose(t)) {
			rc = loose_create(create, loose, sizeof(loose));
			if (rc == 0)
				rc = loose_defaults(loose, gt_sq_tables[t].insert, dflt,
				                    sizeof(dflt));
			if (rc < 0)
				return sq_fail(q, create, SQLITE_INTERNAL);
			create = dflt;
		}
		if (sq_exec(q, create) < 0)
			return q->err;
	}
	if (put_enums(q) < 0)
		return q->err;
	for (unsigned t = 0; t < SQ_TABLE_MAX; t++) {
		struct tab *b = &q->tab[t];

		rc = prepare_ordered(q, t, 1, &b->one);
		if (rc < 0)
			return rc;
		b->ncols = sqlite3_bind_parameter_count(b->one);
		b->batch = batch_of(t);
		b->nlanes = t == SQ_RUNTIME ? SQ_LANES : 1;
		if (b->ncols >= 64)
			return sq_fail(q, gt_sq_tables[t].insert, SQLITE_INTERNAL);
		b->bound = calloc((size_t)(b->ncols ? b->ncols : 1), sizeof(*b->bound));
		if (!b->bound)
			goto nomem;
		for (unsigned i = 0; i < b->nlanes; i++) {
			b->lane[i].vals = calloc((size_t)b->batch * (size_t)(b->ncols + 1),
			                         sizeof(struct val));
			if (!b->lane[i].vals)
				goto nomem;
		}
	}
	return 0;
nomem:
	q->err = -ENOMEM;
	q->errmsg = "out of memory";
	return q->err;
}

/* The INSERTs finalized and the connection closed; 0 or the close's failure. */
static int sq_close(struct sq *q)
{
	int rc = SQLITE_OK;

	for (unsigned t = 0; t < SQ_TABLE_MAX; t++) {
		/* pair with sqlite3_prepare_v3 in prepare_ordered() */
		sqlite3_finalize(q->tab[t].one);
		q->tab[t].one = NULL;
		for (unsigned i = 0; i < SQ_LANES; i++) {
			sqlite3_finalize(q->tab[t].lane[i].many);
			q->tab[t].lane[i].many = NULL;
		}
	}
	if (q->db)
		/* pairs with sqlite3_open_v2 in sq_connect or sq_connect_indexes */
		rc = sqlite3_close(q->db);
	q->db = NULL;
	return rc == SQLITE_OK ? 0 : sq_fail(q, "closing the database", rc);
}

static void sq_free(struct sq *q)
{
	sq_close(q);
	for (unsigned t = 0; t < SQ_TABLE_MAX; t++) {
		for (unsigned i = 0; i < SQ_LANES; i++)
			free(q->tab[t].lane[i].vals);
		free(q->tab[t].bound);
		memset(&q->tab[t], 0, sizeof(q->tab[t]));
	}
	free(q->texts);
	free(q->arena);
	free(q->names);
	free(q->procs);
	free(q->ctxs);
	map_fini(&q->by_sid);
	free(q->sid_names);
	gt_gm_fini(&q->gm);
	gt_catalog_fini(&q->cat);
	map_fini(&q->null_stream);
	map_fini(&q->streams);
	map_fini(&q->domain_created);
	gt_nvtx_gpu_pass_free(q->proj);
	free(q->nvtx_ids);
	gt_stacks_free(q->stacks);
}

static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Indexes after the rows: one sort each instead of a B-tree update per row. Out of line so
 * that a profile (valgrind --tool=callgrind) shows their cost apart from the load's. */
static __attribute__((noinline)) int build_indexes(struct sq *q)
{
	for (const char *const *ix = gt_sq_indexes; *ix; ix++) {
		static const char create[] = "CREATE INDEX ";
		char sql[256];
		int ret;

		/* "CREATE INDEX name ..." -> "CREATE INDEX gt.name ...": the index goes to the
		 * attached database of its table (sq_connect_indexes) */
		if (strncmp(*ix, create, sizeof(create) - 1) != 0 ||
		    snprintf(sql, sizeof(sql), "%sgt.%s", create, *ix + sizeof(create) - 1) >=
		            (int)sizeof(sql))
			return sq_fail(q, *ix, SQLITE_INTERNAL);
		ret = sq_exec(q, sql);
		if (ret < 0)
			return ret;
	}
	/* Statistics for the query planner (sqlite_stat1), from the first 400 entries of each
	 * index (milliseconds). Without them SQLite scans the kernels in the runtime-kernel
	 * join and builds a throw-away index on the runtime's correlationId for every query,
	 * rather than scan the calls and search GPUTRACE_IDX_KERNEL_CORRELATION. */
	if (sq_exec(q, "PRAGMA analysis_limit=400") < 0 || sq_exec(q, "ANALYZE gt") < 0)
		return q->err;
	return 0;
}

static int fsync_path(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret = 0;

	if (fd < 0)
		return -errno;
	if (fsync(fd) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

/* An export's state before its load, for either container. */
static void sq_init(struct sq *q, struct gt_reader *r, int demangle, const char *identity)
{
	q->r = r;
	q->demangle = demangle;
	q->identity = identity;
	q->first_ns = UINT64_MAX;
	q->errmsg = "out of memory";
}

/* The load that both containers share: the rows of every table from q->r through q's sink
 * (SQLite's INSERTs, or the Parquet files): GPU time per NVTX range in a pass of its own when
 * the trace may hold NVTX ranges (its footer counts some; a trace without a footer may), then
 * open(q, ctx) once the reader is rewound, every record, and the rows made at the end.
 * progress (may be NULL) is called every PROGRESS_EVERY + 1 records. Returns 0 or -errno
 * with q->errmsg. */
static int load(struct sq *q, int (*open)(struct sq *q, const void *ctx), const void *ctx,
                void (*progress)(void *ctx, uint64_t done, uint64_t total), void *progress_ctx)
{
	const struct gt_trace_counts *fc = gt_reader_footer_counts(q->r);
	const union gt_record *rec;
	int ret;

	if (!fc || fc->records[GT_REC_NVTX]) {
		ret = gt_nvtx_gpu_begin(q->r, &q->proj, &q->errmsg);
		if (ret < 0)
			return ret;
	}
	ret = gt_reader_rewind(q->r);
	if (ret < 0)
		return ret;
	ret = open(q, ctx);
	if (ret < 0)
		return ret;
	while ((ret = gt_reader_next(q->r, &rec)) > 0) {
		q->records++;
		ret = on_record(q, rec);
		if (ret == 0 && q->proj && (ret = gt_nvtx_gpu_feed(q->proj, rec)) < 0)
			q->errmsg = "out of memory";
		if (ret < 0)
			return ret;
		if (progress && (q->records & PROGRESS_EVERY) == 0) {
			uint64_t done, total;

			gt_reader_progress(q->r, &done, &total);
			progress(progress_ctx, done, total);
		}
	}
	if (ret < 0) {
		snprintf(errbuf, sizeof(errbuf), "reading the trace: %s", strerror(-ret));
		q->errmsg = errbuf;
		return ret;
	}
	if ((q->proj && put_projection(q) < 0) || put_processes(q) < 0 || put_trace(q) < 0)
		return q->err;
	return 0;
}

/* load()'s open for SQLite: the database at the temporary path ctx, in one transaction. */
static int sq_load_open(struct sq *q, const void *ctx)
{
	int ret = sq_open(q, ctx);

	return ret < 0 ? ret : sq_exec(q, "BEGIN");
}

int gt_sql_export(struct gt_reader *r, const char *path, const struct gt_sql_export_options *opts,
                  struct gt_sql_export_result *res, const char **errmsg)
{
	struct sq q = {0};
	struct gt_output *own = NULL, *out = opts ? opts->out : NULL;
	struct gt_output_error oerr;
	const char *tmp = NULL;
	uint64_t t0 = cpu_ns(), t1 = 0, t2 = 0;
	struct stat st;
	int ret;

	sq_init(&q, r, !opts || opts->demangle, opts ? opts->identity : NULL);
	if (!r || !path || !*path || strcmp(path, "-") == 0) {
		ret = -EINVAL;
		q.errmsg = "a SQLite database is a file: give it a name with -o";
		goto out;
	}
	ret = gt_catalog_init(&q.cat, r);
	if (ret < 0)
		goto out;
	if (!out) {
		ret = gt_output_open(path, NULL, 0, GT_OUTPUT_NO_STDOUT, &own, &oerr);
		if (ret < 0)
			goto refused;
		out = own;
	}
	ret = gt_output_create_path(out, strcmp(gt_output_path(out), path) == 0 ? NULL : path, &tmp,
	                            &oerr);
	if (ret < 0)
		goto refused;
	q.cache_mib = opts ? opts->cache_mib : 0;
	ret = load(&q, sq_load_open, tmp, opts ? opts->progress : NULL,
	           opts ? opts->progress_ctx : NULL);
	if (ret < 0)
		goto out;
	for (unsigned t = 0; t < SQ_TABLE_MAX; t++) {
		ret = flush(&q, t);
		if (ret < 0)
			goto out;
	}
	ret = set_schema(&q);
	if (ret < 0)
		goto out;
	ret = sq_exec(&q, "COMMIT");
	if (ret < 0)
		goto out;
	/* a new connection reads the exact schema that set_schema() wrote */
	ret = sq_close(&q);
#ifdef __GLIBC__
	/* the load's page cache, freed, back to the system before the sorts take theirs */
	malloc_trim(0);
#endif
	if (ret == 0)
		ret = sq_connect_indexes(&q, tmp);
	if (ret < 0)
		goto out;
	t1 = cpu_ns();
	ret = build_indexes(&q);
	if (ret < 0)
		goto out;
	t2 = cpu_ns();
	ret = sq_close(&q);
	if (ret < 0)
		goto out;
	ret = fsync_path(tmp);
	if (ret < 0) {
		snprintf(errbuf, sizeof(errbuf), "cannot finish %s: %s", path, strerror(-ret));
		q.errmsg = errbuf;
		goto out;
	}
	if (own) {
		ret = gt_output_commit(own, &oerr);
		if (ret < 0)
			goto refused;
	}
	if (res) {
		const struct gt_reader_status *rs = gt_reader_status(r);

		res->rows = q.rows;
		res->records = q.records;
		res->bytes = stat(own ? path : tmp, &st) == 0 ? (uint64_t)st.st_size : 0;
		res->lost_chunks = rs->chunks_skipped;
		res->lost_records = rs->records_skipped;
		res->load_cpu_ns = t1 - t0;
		res->index_cpu_ns = t2 - t1;
	}
	ret = 0;
	goto out;
refused:
	snprintf(errbuf, sizeof(errbuf), "%s", oerr.msg[0] ? oerr.msg : strerror(-ret));
	q.errmsg = errbuf;
out:
	sq_free(&q);
	if (ret < 0 && errmsg)
		*errmsg = q.errmsg;
	gt_output_free(own); /* removes the temporary unless committed */
	return ret;
}

/* ---- The Parquet export: the same rows, to one Parquet file per table ---------------- */

/* A table's Parquet file: each column of its CREATE statement, with where its value comes
 * from (a value of the row, or the literal its INSERT gives). */
struct pq_tab {
	struct pq_file *f;
	int fd;
	unsigned ncols;
	struct pq_col col[SQ_MAX_COLS];
	int param[SQ_MAX_COLS]; /* value 1.. of the row; 0: lit */
	struct val lit[SQ_MAX_COLS];
	const struct pq_val *src[SQ_MAX_COLS]; /* each column's: in the lane's row, or lit */
	char text[SQ_MAX_COLS][SQ_VALUE_BYTES]; /* literal strings, unquoted */
};

struct pq_sink {
	struct pq_tab tab[SQ_TABLE_MAX];
	const char *dir; /* the output directory's final name */
	struct gt_output *out;
	uint64_t bytes;
	unsigned files;
};

static int pq_fail(struct sq *q, const char *what, int err)
{
	if (!q->err) {
		snprintf(errbuf, sizeof(errbuf), "%.600s: %s", what, strerror(-err));
		q->errmsg = errbuf;
		q->err = err;
	}
	return q->err;
}

/* The Parquet writer takes the rows' values as they are (pq_put_row). */
_Static_assert(sizeof(struct val) == sizeof(struct pq_val) &&
                       offsetof(struct val, len) == offsetof(struct pq_val, len) &&
                       offsetof(struct val, kind) == offsetof(struct pq_val, kind) &&
                       SQLITE_INTEGER == PQ_VAL_INT && SQLITE_FLOAT == PQ_VAL_FLOAT &&
                       SQLITE_TEXT == PQ_VAL_TEXT && SQLITE_NULL == PQ_VAL_NULL,
               "struct val is laid out as struct pq_val");

static int pq_sink_row(struct sq *q, enum sq_table t, const struct val *row)
{
	struct pq_tab *pt = &q->pq->tab[t];
	int ret;

	(void)row; /* pt->src points into it: the table's one lane */
	ret = pq_put_row(pt->f, pt->src);

	if (ret < 0)
		return pq_fail(q, gt_sq_tables[t].name, ret);
	q->rows++;
	return 0;
}

/* The columns of a CREATE TABLE ("name TYPE[ NOT NULL][ PRIMARY KEY], ...") into cols. */
static int pq_parse_create(const char *create, struct pq_col *cols, unsigned *ncols)
{
	const char *p = strchr(create, '(');
	unsigned n = 0;

	if (!p)
		return -EINVAL;
	for (p++; *p && *p != ')';) {
		size_t len = strcspn(p, ",)"), nl = strcspn(p, " ,)");
		char def[128];

		if (n == SQ_MAX_COLS || nl >= sizeof(cols[n].name) || len >= sizeof(def))
			return -EINVAL;
		memcpy(def, p, len);
		def[len] = '\0';
		memcpy(cols[n].name, p, nl);
		cols[n].name[nl] = '\0';
		cols[n].type = strstr(def, " TEXT") ? PQ_STRING
		               : strstr(def, " REAL") ? PQ_DOUBLE
		                                      : PQ_INT64;
		cols[n].optional = !strstr(def, " NOT NULL");
		n++;
		p += len;
		if (*p == ',')
			p += 1 + (p[1] == ' ');
	}
	*ncols = n;
	return 0;
}

/* Table t's columns and where each value comes from; the row buffer of its one lane. */
static int pq_tab_init(struct sq *q, enum sq_table t)
{
	struct pq_tab *pt = &q->pq->tab[t];
	struct tab *b = &q->tab[t];
	struct sq_insert in;
	int nparams = 0, param[SQ_MAX_COLS];

	if (pq_parse_create(gt_sq_tables[t].create, pt->col, &pt->ncols) < 0 ||
	    !insert_parse(gt_sq_tables[t].insert, &in))
		return pq_fail(q, gt_sq_tables[t].name, -EINVAL);
	for (int j = 0; j < in.n; j++)
		param[j] = strcmp(in.val[j], "?") == 0 ? ++nparams : 0;
	for (unsigned c = 0; c < pt->ncols; c++) {
		const char *name = pt->col[c].name;
		int j = in.named ? insert_find(&in, name, strlen(name))
		        : (int)c < in.n ? (int)c
		                        : -1;
		const char *lv = j >= 0 ? in.val[j] : "NULL";

		pt->param[c] = j >= 0 ? param[j] : 0;
		if (pt->param[c])
			continue;
		if (strcmp(lv, "NULL") == 0) {
			pt->lit[c] = (struct val){{.i = 0}, 0, SQLITE_NULL};
		} else if (lv[0] == '\'') {
			size_t l = strlen(lv);

			snprintf(pt->text[c], sizeof(pt->text[c]), "%.*s", (int)(l >= 2 ? l - 2 : 0),
			         lv + 1);
			pt->lit[c] = (struct val){{.s = pt->text[c]}, -1, SQLITE_TEXT};
		} else {
			pt->lit[c] = (struct val){{.i = strtoll(lv, NULL, 10)}, 0, SQLITE_INTEGER};
		}
	}
	b->ncols = nparams;
	b->batch = 1;
	b->nlanes = 1;
	b->lane[0].vals = calloc((size_t)nparams + 1, sizeof(struct val));
	if (!b->lane[0].vals)
		return pq_fail(q, "out of memory", -ENOMEM);
	for (unsigned c = 0; c < pt->ncols; c++)
		pt->src[c] = (const struct pq_val *)(pt->param[c] ? &b->lane[0].vals[pt->param[c]]
		                                                  : &pt->lit[c]);
	return 0;
}

/* A new file DIR/name.parquet of the output for cols[0..ncols). */
static int pq_create(struct sq *q, const char *name, const struct pq_col *cols, unsigned ncols,
                     struct pq_file **f, int *fd)
{
	struct gt_output_error oerr = {0};
	char path[4096];
	int ret;

	if (snprintf(path, sizeof(path), "%s/%s.parquet", q->pq->dir, name) >= (int)sizeof(path))
		return pq_fail(q, q->pq->dir, -ENAMETOOLONG);
	ret = gt_output_create(q->pq->out, path, fd, &oerr);
	if (ret < 0) {
		snprintf(errbuf, sizeof(errbuf), "%s", oerr.msg[0] ? oerr.msg : strerror(-ret));
		q->errmsg = errbuf;
		return q->err = ret;
	}
	ret = pq_open(*fd, cols, ncols, 0, f);
	return ret < 0 ? pq_fail(q, path, ret) : 0;
}

/* The last row group and footer of f, and fd closed. */
static int pq_close_file(struct sq *q, const char *name, struct pq_file **f, int *fd)
{
	uint64_t bytes = 0;
	int ret = pq_finish(*f, &bytes);

	if (ret == 0 && close(*fd) < 0)
		ret = -errno;
	else if (ret < 0)
		close(*fd);
	*fd = -1;
	pq_free(*f);
	*f = NULL;
	if (ret < 0)
		return pq_fail(q, name, ret);
	q->pq->bytes += bytes;
	q->pq->files++;
	return 0;
}

/* The ENUM_ tables, each a file of its own. */
static int pq_enums(struct sq *q)
{
	static const struct pq_col cols[] = {
	        {"id", PQ_INT64, false}, {"name", PQ_STRING, true}, {"label", PQ_STRING, true}};

	for (const struct sq_enum_def *e = gt_sq_enums; e->table; e++) {
		struct pq_file *f = NULL;
		int fd = -1;

		if (pq_create(q, e->table, cols, 3, &f, &fd) < 0) {
			if (fd >= 0)
				close(fd);
			return q->err;
		}
		for (unsigned i = 0; i < e->nrows; i++) {
			pq_put_i64(f, e->rows[i].id);
			pq_put_str(f, e->rows[i].name, strlen(e->rows[i].name));
			pq_put_str(f, e->rows[i].label, strlen(e->rows[i].label));
			if (pq_row_end(f) < 0)
				break;
			q->rows++;
		}
		if (pq_close_file(q, e->table, &f, &fd) < 0)
			return q->err;
	}
	return 0;
}

static void pq_sink_free(struct sq *q)
{
	if (!q->pq)
		return;
	for (unsigned t = 0; t < SQ_TABLE_MAX; t++) {
		pq_free(q->pq->tab[t].f);
		if (q->pq->tab[t].fd >= 0)
			close(q->pq->tab[t].fd);
	}
	free(q->pq);
	q->pq = NULL;
}

/* load()'s open for Parquet: a file per table, and the ENUM_ tables written. */
static int pq_load_open(struct sq *q, const void *ctx)
{
	(void)ctx;
	for (unsigned t = 0; t < SQ_TABLE_MAX; t++) {
		struct pq_tab *pt = &q->pq->tab[t];
		int ret = pq_tab_init(q, t);

		if (ret == 0)
			ret = pq_create(q, gt_sq_tables[t].name, pt->col, pt->ncols, &pt->f, &pt->fd);
		if (ret < 0)
			return ret;
		/* a literal of the INSERT (NULL, 0): the writer fills the column itself */
		for (unsigned c = 0; c < pt->ncols; c++)
			if (!pt->param[c])
				(void)pq_const(pt->f, c, (const struct pq_val *)&pt->lit[c]);
	}
	return pq_enums(q);
}

static int parquet_run(struct gt_reader *r, const struct gt_export_options *opts,
                       struct gt_export_result *res, const char **errmsg)
{
	struct sq q = {0};
	int ret;

	sq_init(&q, r, opts->demangle, opts->identity);
	ret = -ENOMEM;
	q.pq = calloc(1, sizeof(*q.pq));
	if (!q.pq)
		goto out;
	for (unsigned t = 0; t < SQ_TABLE_MAX; t++)
		q.pq->tab[t].fd = -1;
	q.pq->dir = opts->output;
	q.pq->out = opts->out;
	ret = gt_catalog_init(&q.cat, r);
	if (ret < 0)
		goto out;
	ret = load(&q, pq_load_open, NULL, opts->progress, opts->progress_ctx);
	if (ret < 0)
		goto out;
	for (unsigned t = 0; t < SQ_TABLE_MAX; t++) {
		struct pq_tab *pt = &q.pq->tab[t];

		ret = pq_close_file(&q, gt_sq_tables[t].name, &pt->f, &pt->fd);
		if (ret < 0)
			goto out;
	}
	res->events = q.rows;
	res->bytes = q.pq->bytes;
	res->files = q.pq->files;
	res->warning = NULL;
	ret = 0;
out:
	pq_sink_free(&q);
	sq_free(&q);
	if (ret < 0 && errmsg)
		*errmsg = q.errmsg;
	return ret;
}

static unsigned parquet_output_flags(const struct gt_export_options *opts)
{
	(void)opts;
	return GT_OUTPUT_DIR | GT_OUTPUT_NO_STDOUT;
}

/* What an earlier export to the same folder left: its tables, and the folders of a job's
 * partitions ("rank=N/", "host=H/", "pid=P/": gt_export_partition_of). */
static bool parquet_stale(const struct gt_export_options *opts, const char *name)
{
	size_t n = strlen(name);

	(void)opts;
	if (n > 1 && name[n - 1] == '/')
		return strncmp(name, "rank=", 5) == 0 || strncmp(name, "host=", 5) == 0 ||
		       strncmp(name, "pid=", 4) == 0;
	return n > 8 && strcmp(name + n - 8, ".parquet") == 0;
}

const struct gt_exporter_ops gt_exporter_parquet = {
        .name = "parquet",
        .extension = ".parquet",
        .help = "a folder of Parquet files, one per table of the SQLite export (docs/sql.md)",
        .write = parquet_run,
        .output_flags = parquet_output_flags,
        .stdout_refused = "a Parquet export is a folder: give it a name with -o",
        .stale = parquet_stale,
};

static unsigned sqlite_output_flags(const struct gt_export_options *opts)
{
	(void)opts;
	return GT_OUTPUT_NO_STDOUT;
}

static int sqlite_run(struct gt_reader *r, const struct gt_export_options *opts,
                      struct gt_export_result *res, const char **errmsg)
{
	struct gt_sql_export_options so = {
	        .demangle = opts->demangle,
	        .progress = opts->progress,
	        .progress_ctx = opts->progress_ctx,
	        .out = opts->out,
	        .identity = opts->identity,
	};
	struct gt_sql_export_result sr = {0};
	int ret = gt_sql_export(r, opts->output, &so, &sr, errmsg);

	if (ret < 0)
		return ret;
	res->events = sr.rows;
	res->bytes = sr.bytes;
	res->files = 1;
	res->warning = NULL;
	return 0;
}

const struct gt_exporter_ops gt_exporter_sqlite = {
        .name = "sqlite",
        .extension = ".sqlite",
        .help = "SQLite database in Nsight Systems' export schema (docs/sql.md)",
        .write = sqlite_run,
        .output_flags = sqlite_output_flags,
        .stdout_refused = "a SQLite database is a file: give it a name with -o",
};
