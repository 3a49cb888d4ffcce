/* The stats exporter's single pass over a trace: per-name aggregates with log-linear
 * histograms, copies by kind, memory in use per GPU; processes, GPUs and losses in the
 * catalog every output shares. Runs in the CLI;
 * memory grows with distinct names and live allocations, not with events. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "stats-int.h"
#include "strtab.h"

/* Largest string id cached in a flat array; ids above it (a hostile file) use the hash. */
#define BY_ID_MAX (1u << 20)

/* ---- histogram and series ---- */

static void hist_index(uint64_t v, unsigned *block, unsigned *sub)
{
	unsigned e;

	if (v < GT_HIST_SUB) {
		*block = 0;
		*sub = (unsigned)v;
		return;
	}
	e = 63u - (unsigned)__builtin_clzll(v); /* >= GT_HIST_SUB_BITS */
	*block = e - GT_HIST_SUB_BITS + 1u;
	*sub = (unsigned)(v >> (e - GT_HIST_SUB_BITS)) - GT_HIST_SUB;
}

/* The middle of a bucket: within half a bucket width of every value in it. */
static uint64_t hist_value(unsigned block, unsigned sub)
{
	unsigned shift;
	uint64_t low;

	if (block == 0)
		return sub;
	shift = block - 1u;
	low = (uint64_t)(GT_HIST_SUB + sub) << shift;
	return low + (((uint64_t)1 << shift) - 1u) / 2u;
}

int gt_stats_series_add(struct gt_series *s, uint64_t v)
{
	unsigned block, sub;
	double delta;

	hist_index(v, &block, &sub);
	if (!s->hist.block[block]) {
		s->hist.block[block] = calloc(GT_HIST_SUB, sizeof(uint64_t));
		if (!s->hist.block[block])
			return -ENOMEM;
	}
	s->hist.block[block][sub]++;
	if (s->count == 0) {
		s->min = v;
		s->max = v;
	} else {
		if (v < s->min)
			s->min = v;
		if (v > s->max)
			s->max = v;
	}
	s->count++;
	s->total += v;
	/* Welford: a running sum of squares would overflow 64 bits for second-long kernels */
	delta = (double)v - s->mean;
	s->mean += delta / (double)s->count;
	s->m2 += delta * ((double)v - s->mean);
	return 0;
}

uint64_t gt_stats_series_rank(const struct gt_series *s, uint64_t k)
{
	uint64_t seen = 0;

	if (s->count == 0)
		return 0;
	/* the extremes are known exactly */
	if (k <= 1)
		return s->min;
	if (k >= s->count)
		return s->max;
	for (unsigned b = 0; b < GT_HIST_BLOCKS; b++) {
		if (!s->hist.block[b])
			continue;
		for (unsigned i = 0; i < GT_HIST_SUB; i++) {
			seen += s->hist.block[b][i];
			if (seen >= k) {
				uint64_t v = hist_value(b, i);

				return v < s->min ? s->min : v > s->max ? s->max : v;
			}
		}
	}
	return s->max;
}

double gt_stats_series_median(const struct gt_series *s)
{
	if (s->count == 0)
		return 0;
	if (s->count % 2)
		return (double)gt_stats_series_rank(s, (s->count + 1) / 2);
	return ((double)gt_stats_series_rank(s, s->count / 2) +
	        (double)gt_stats_series_rank(s, s->count / 2 + 1)) /
	       2.0;
}

uint64_t gt_stats_series_p99(const struct gt_series *s)
{
	/* nearest rank: the smallest value with at least 99% of the values at or below it */
	return gt_stats_series_rank(s, (s->count * 99 + 99) / 100);
}

double gt_stats_series_stddev(const struct gt_series *s)
{
	if (s->count < 2)
		return 0;
	return sqrt(s->m2 / (double)(s->count - 1));
}

double gt_stats_series_avg(const struct gt_series *s)
{
	return s->count ? (double)s->total / (double)s->count : 0;
}

int gt_stats_series_merge(struct gt_series *dst, const struct gt_series *src)
{
	double n1 = (double)dst->count, n2 = (double)src->count, delta;

	if (src->count == 0)
		return 0;
	for (unsigned b = 0; b < GT_HIST_BLOCKS; b++) {
		if (!src->hist.block[b])
			continue;
		if (!dst->hist.block[b]) {
			dst->hist.block[b] = calloc(GT_HIST_SUB, sizeof(uint64_t));
			if (!dst->hist.block[b])
				return -ENOMEM;
		}
		for (unsigned i = 0; i < GT_HIST_SUB; i++)
			dst->hist.block[b][i] += src->hist.block[b][i];
	}
	if (dst->count == 0 || src->min < dst->min)
		dst->min = src->min;
	if (dst->count == 0 || src->max > dst->max)
		dst->max = src->max;
	/* Chan et al.'s pairwise update of the mean and the sum of squared deviations */
	delta = src->mean - dst->mean;
	dst->mean += delta * n2 / (n1 + n2);
	dst->m2 += src->m2 + delta * delta * n1 * n2 / (n1 + n2);
	dst->count += src->count;
	dst->total += src->total;
	return 0;
}

void gt_stats_series_fini(struct gt_series *s)
{
	for (unsigned b = 0; b < GT_HIST_BLOCKS; b++) {
		free(s->hist.block[b]);
		s->hist.block[b] = NULL;
	}
}

/* ---- name tables ---- */

static uint64_t hash_key(const char *key, size_t len, int64_t tag)
{
	return gt_hash_bytes(key, len) ^ (uint64_t)tag * 0x9e3779b97f4a7c15ull;
}

static int table_grow(struct gt_stat_table *t)
{
	size_t nslots = t->nslots ? t->nslots * 2 : 64;
	uint32_t *slots = calloc(nslots, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i < t->n; i++) {
		const struct gt_stat_entry *e = t->entries[i];
		size_t j = hash_key(e->key, e->key_len, e->tag) & (nslots - 1);

		while (slots[j])
			j = (j + 1) & (nslots - 1);
		slots[j] = (uint32_t)(i + 1);
	}
	free(t->slots);
	t->slots = slots;
	t->nslots = nslots;
	return 0;
}

/* Find or add the entry for (key, tag). Returns NULL only on -ENOMEM. */
static struct gt_stat_entry *table_get_at(struct gt_stat_table *t, const char *key, size_t len,
                                          size_t split, int64_t tag, uint32_t *index)
{
	struct gt_stat_entry *e;
	size_t j;

	if ((t->n + 1) * 4 > t->nslots * 3 && table_grow(t) < 0)
		return NULL;
	j = hash_key(key, len, tag) & (t->nslots - 1);
	while (t->slots[j]) {
		e = t->entries[t->slots[j] - 1];
		if (e->tag == tag && e->key_len == len && memcmp(e->key, key, len) == 0) {
			*index = t->slots[j] - 1;
			return e;
		}
		j = (j + 1) & (t->nslots - 1);
	}
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 32;
		struct gt_stat_entry **n = realloc(t->entries, cap * sizeof(*n));

		if (!n)
			return NULL;
		t->entries = n;
		t->cap = cap;
	}
	e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	e->key = malloc(len + 1);
	if (!e->key) {
		free(e);
		return NULL;
	}
	memcpy(e->key, key, len);
	e->key[len] = '\0';
	e->key_len = len;
	e->split = split;
	e->tag = tag;
	t->entries[t->n++] = e;
	t->slots[j] = (uint32_t)t->n;
	*index = (uint32_t)(t->n - 1);
	return e;
}

struct gt_stat_entry *gt_stats_table_get(struct gt_stat_table *t, const char *key, size_t len,
                                         size_t split, int64_t tag)
{
	uint32_t index;

	return table_get_at(t, key, len, split, tag, &index);
}

/* The id -> entry cache saves a string hash per event on the hot kinds (kernels, API
 * calls). */
struct gt_stat_entry *gt_stats_table_get_id(struct gt_stat_table *t, const struct gt_reader *r,
                                            uint32_t id)
{
	struct gt_stat_entry *e;
	const char *s;
	size_t len = 0;
	uint32_t index;
	char tmp[32];

	if (id < t->nby_id && t->by_id[id])
		return t->entries[t->by_id[id] - 1];
	s = id ? gt_reader_string(r, id, &len) : NULL;
	if (!s) {
		/* not (yet) defined: group under a placeholder, and do not cache it */
		len = (size_t)snprintf(tmp, sizeof(tmp), "<string %u>", id);
		return gt_stats_table_get(t, tmp, len, 0, 0);
	}
	e = table_get_at(t, s, len, 0, 0, &index);
	if (!e || id >= BY_ID_MAX)
		return e;
	if (gt_strtab_dense_reserve(&t->by_id, &t->nby_id, id, 256) < 0)
		return e; /* the cache is an optimization only */
	t->by_id[id] = index + 1;
	return e;
}

void gt_stats_table_forget_ids(struct gt_stat_table *t)
{
	free(t->by_id);
	t->by_id = NULL;
	t->nby_id = 0;
}

void gt_stats_table_fini(struct gt_stat_table *t)
{
	for (size_t i = 0; i < t->n; i++) {
		gt_stats_series_fini(&t->entries[i]->time);
		free(t->entries[i]->key);
		free(t->entries[i]);
	}
	free(t->entries);
	free(t->slots);
	free(t->by_id);
	memset(t, 0, sizeof(*t));
}

/* Ties are broken by key, then tag, so the order never depends on the hash layout. */
static int entry_tiebreak(const struct gt_stat_entry *x, const struct gt_stat_entry *y)
{
	size_t n = x->key_len < y->key_len ? x->key_len : y->key_len;
	int c = memcmp(x->key, y->key, n);

	if (c)
		return c;
	if (x->key_len != y->key_len)
		return x->key_len < y->key_len ? -1 : 1;
	return x->tag < y->tag ? -1 : x->tag > y->tag;
}

static int entry_cmp_time(const void *a, const void *b)
{
	const struct gt_stat_entry *x = *(struct gt_stat_entry *const *)a;
	const struct gt_stat_entry *y = *(struct gt_stat_entry *const *)b;

	if (x->time.total != y->time.total)
		return x->time.total > y->time.total ? -1 : 1;
	return entry_tiebreak(x, y);
}

static int entry_cmp_count(const void *a, const void *b)
{
	const struct gt_stat_entry *x = *(struct gt_stat_entry *const *)a;
	const struct gt_stat_entry *y = *(struct gt_stat_entry *const *)b;

	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return entry_tiebreak(x, y);
}

struct gt_stat_entry **gt_stats_table_sorted(const struct gt_stat_table *t, int count_order)
{
	struct gt_stat_entry **v = malloc((t->n ? t->n : 1) * sizeof(*v));

	if (!v)
		return NULL;
	if (t->n)
		memcpy(v, t->entries, t->n * sizeof(*v));
	qsort(v, t->n, sizeof(*v), count_order ? entry_cmp_count : entry_cmp_time);
	return v;
}

const char *gt_stats_string(const struct gt_stats *st, uint32_t id, char *buf, size_t bytes)
{
	const char *s = id ? gt_reader_string(st->r, id, NULL) : NULL;

	if (s)
		return s;
	snprintf(buf, bytes, id ? "<string %u>" : "", id);
	return buf;
}

/* ---- memory ---- */

static uint64_t live_hash(uint32_t pid, uint64_t address)
{
	uint64_t h = address ^ ((uint64_t)pid << 40) ^ pid;

	h ^= h >> 30;
	h *= 0xbf58476d1ce4e5b9ull;
	h ^= h >> 27;
	h *= 0x94d049bb133111ebull;
	return h ^ (h >> 31);
}

static struct gt_mem_live *live_find(struct gt_stats *st, uint32_t pid, uint64_t address)
{
	size_t mask = st->caplive - 1, j;

	if (!st->caplive)
		return NULL;
	for (j = live_hash(pid, address) & mask; st->live[j].address; j = (j + 1) & mask)
		if (st->live[j].address == address && st->live[j].pid == pid)
			return &st->live[j];
	return NULL;
}

bool gt_stats_still_live(const struct gt_stats *st, const struct gt_mem_live *a)
{
	const struct gt_mem_live *l = live_find((struct gt_stats *)st, a->pid, a->address);

	/* the same address may have been freed and handed out again: compare the time too */
	return l && l->ts_ns == a->ts_ns && l->bytes == a->bytes;
}

static int live_insert(struct gt_stats *st, const struct gt_mem_live *a)
{
	size_t mask, j;

	if ((st->nlive + 1) * 2 > st->caplive) {
		size_t cap = st->caplive ? st->caplive * 2 : 256;
		struct gt_mem_live *n = calloc(cap, sizeof(*n));

		if (!n)
			return -ENOMEM;
		for (size_t i = 0; i < st->caplive; i++) {
			if (!st->live[i].address)
				continue;
			for (j = live_hash(st->live[i].pid, st->live[i].address) & (cap - 1);
			     n[j].address; j = (j + 1) & (cap - 1))
				;
			n[j] = st->live[i];
		}
		free(st->live);
		st->live = n;
		st->caplive = cap;
	}
	mask = st->caplive - 1;
	for (j = live_hash(a->pid, a->address) & mask; st->live[j].address; j = (j + 1) & mask)
		;
	st->live[j] = *a;
	st->nlive++;
	return 0;
}

/* Backward-shift deletion keeps probe chains intact without tombstones. */
static void live_remove(struct gt_stats *st, struct gt_mem_live *slot)
{
	size_t mask = st->caplive - 1;
	size_t i = (size_t)(slot - st->live), j = i;

	for (;;) {
		size_t home;

		j = (j + 1) & mask;
		if (!st->live[j].address)
			break;
		home = live_hash(st->live[j].pid, st->live[j].address) & mask;
		/* move j back into the hole at i unless its home lies cyclically in (i, j] */
		if ((j > i && (home <= i || home > j)) || (j < i && home <= i && home > j)) {
			st->live[i] = st->live[j];
			i = j;
		}
	}
	st->live[i].address = 0;
	st->nlive--;
}

static struct gt_mem_device *mem_device(struct gt_stats *st, uint32_t gpu)
{
	for (size_t i = 0; i < st->nmem; i++)
		if (st->mem[i].gpu == gpu)
			return &st->mem[i];
	if (st->nmem == st->capmem) {
		size_t cap = st->capmem ? st->capmem * 2 : 8;
		struct gt_mem_device *n = realloc(st->mem, cap * sizeof(*n));

		if (!n)
			return NULL;
		st->mem = n;
		st->capmem = cap;
	}
	memset(&st->mem[st->nmem], 0, sizeof(st->mem[0]));
	st->mem[st->nmem].gpu = gpu;
	return &st->mem[st->nmem++];
}

/* The row of an allocation: its GPU as the catalog knows it now (a GPU found to be another
 * one: that one), or the host's. */
static struct gt_mem_device *mem_row(struct gt_stats *st, uint32_t gpu)
{
	if (gpu != GT_STATS_HOST)
		gpu = gt_catalog_gpu_final(&st->cat, st->cat.gpus[gpu])->index;
	return mem_device(st, gpu);
}

static void keep_largest(struct gt_stats *st, const struct gt_mem_live *a)
{
	size_t i;

	if (st->nlargest == GT_STATS_TOP && a->bytes <= st->largest[GT_STATS_TOP - 1].bytes)
		return;
	if (st->nlargest < GT_STATS_TOP)
		st->nlargest++;
	/* insertion into a short sorted array; ties keep the earlier allocation first */
	for (i = st->nlargest - 1; i > 0 && st->largest[i - 1].bytes < a->bytes; i--)
		st->largest[i] = st->largest[i - 1];
	st->largest[i] = *a;
}

static int on_memory(struct gt_stats *st, const struct gt_rec_memory *m)
{
	/* by process: a reused pid's two processes each have their own blocks */
	uint32_t pid = gt_catalog_out_pid(&st->cat, m->hdr.pid);
	struct gt_mem_live *old = m->address ? live_find(st, pid, m->address) : NULL;
	struct gt_mem_device *row;

	if (m->op == GT_MEMORY_ALLOC) {
		struct gt_mem_live a = {m->address,    m->bytes,    m->ts_ns, pid,
		                        GT_STATS_HOST, m->mem_kind, 0};

		if (m->mem_kind != GT_MEM_PINNED && m->mem_kind != GT_MEM_PAGEABLE) {
			const struct gt_catalog_gpu *g =
			        gt_catalog_gpu(&st->cat, m->hdr.pid, m->device_id);

			if (!g)
				return -ENOMEM;
			a.gpu = g->index;
		}
		if (old) {
			/* the free of the previous block at this address was lost: retire it */
			row = mem_row(st, old->gpu);
			if (!row)
				return -ENOMEM;
			row->in_use -= old->bytes < row->in_use ? old->bytes : row->in_use;
			live_remove(st, old);
		}
		row = mem_row(st, a.gpu);
		if (!row)
			return -ENOMEM;
		row->allocs++;
		row->alloc_bytes += m->bytes;
		row->in_use += m->bytes;
		if (row->in_use > row->peak) {
			row->peak = row->in_use;
			row->peak_ts_ns = m->ts_ns;
		}
		keep_largest(st, &a);
		if (m->address && live_insert(st, &a) < 0)
			return -ENOMEM;
		return 0;
	}
	if (m->op != GT_MEMORY_FREE)
		return 0;
	if (!old) {
		/* allocated before tracing started, or its record was lost */
		st->frees_unmatched++;
		return 0;
	}
	row = mem_row(st, old->gpu);
	if (!row)
		return -ENOMEM;
	row->frees++;
	row->in_use -= old->bytes < row->in_use ? old->bytes : row->in_use;
	live_remove(st, old);
	return 0;
}

/* GPUs by the number every output shows them under, the host row last. */
static int mem_cmp(const void *a, const void *b, void *ctx)
{
	const struct gt_stats *st = ctx;
	const struct gt_mem_device *x = a, *y = b;
	uint64_t kx = x->gpu == GT_STATS_HOST ? UINT64_MAX : st->cat.gpus[x->gpu]->number;
	uint64_t ky = y->gpu == GT_STATS_HOST ? UINT64_MAX : st->cat.gpus[y->gpu]->number;

	return kx < ky ? -1 : kx > ky;
}

void gt_stats_mem_rows(struct gt_stats *st)
{
	size_t n = 0;

	/* a GPU found to be another one after it had rows: its numbers go to that one's row
	 * (its peak counts as that row's when higher: the two were never summed over time) */
	for (size_t i = 0; i < st->nmem; i++) {
		struct gt_mem_device *m = &st->mem[i];
		const struct gt_catalog_gpu *g =
		        m->gpu == GT_STATS_HOST ? NULL : st->cat.gpus[m->gpu];
		size_t j = 0;

		if (!g || !g->merged_into)
			continue;
		m->gpu = gt_catalog_gpu_final(&st->cat, g)->index;
		while (j < st->nmem && (j == i || st->mem[j].gpu != m->gpu))
			j++;
		if (j == st->nmem)
			continue; /* no row of its own: this one becomes it */
		st->mem[j].in_use += m->in_use;
		st->mem[j].peak = st->mem[j].peak > m->peak ? st->mem[j].peak : m->peak;
		st->mem[j].allocs += m->allocs;
		st->mem[j].frees += m->frees;
		st->mem[j].alloc_bytes += m->alloc_bytes;
		m->allocs = UINT64_MAX; /* folded: dropped below */
	}
	for (size_t i = 0; i < st->nmem; i++)
		if (st->mem[i].allocs != UINT64_MAX)
			st->mem[n++] = st->mem[i];
	st->nmem = n;
	if (st->nmem) /* qsort with a NULL base is undefined even for 0 elements */
		qsort_r(st->mem, st->nmem, sizeof(st->mem[0]), mem_cmp, st);
}

const struct gt_catalog_gpu *gt_stats_gpu(const struct gt_stats *st, uint32_t gpu)
{
	if (gpu == GT_STATS_HOST || gpu >= st->cat.ngpus)
		return NULL;
	return gt_catalog_gpu_final(&st->cat, st->cat.gpus[gpu]);
}

/* ---- the pass ---- */

static void see_ts(struct gt_stats *st, uint64_t a, uint64_t b)
{
	if (a && a < st->first_ns)
		st->first_ns = a;
	if (b > st->last_ns)
		st->last_ns = b;
}

int gt_stats_xfer_add(struct gt_xfer_stats *x, const struct gt_gpu_span *span, uint64_t bytes)
{
	if (x->time.count == 0) {
		x->bytes_min = bytes;
		x->bytes_max = bytes;
	}
	if (bytes < x->bytes_min)
		x->bytes_min = bytes;
	if (bytes > x->bytes_max)
		x->bytes_max = bytes;
	x->bytes_total += bytes;
	return gt_stats_series_add(&x->time, gt_stats_span_dur(span->start_ns, span->end_ns));
}

struct gt_stat_entry *gt_stats_nvtx_get(struct gt_stat_table *t, const struct gt_reader *r,
                                        const struct gt_rec_nvtx *n)
{
	char key[2 * GT_STRING_MAX + 2];
	const char *dom = n->domain_id ? gt_reader_string(r, n->domain_id, NULL) : "";
	const char *msg = n->message_id ? gt_reader_string(r, n->message_id, NULL) : "";
	size_t dl, ml;

	dom = dom ? dom : "<unknown domain>";
	msg = msg ? msg : "<unknown message>";
	dl = strnlen(dom, GT_STRING_MAX);
	ml = strnlen(msg, GT_STRING_MAX);
	memcpy(key, dom, dl);
	key[dl] = '\0';
	memcpy(key + dl + 1, msg, ml);
	return gt_stats_table_get(t, key, dl + 1 + ml, dl,
	                          n->kind < GT_NVTX_KIND_MAX ? n->kind : GT_NVTX_PUSH_POP);
}

static int on_nvtx(struct gt_stats *st, const struct gt_rec_nvtx *n)
{
	struct gt_stat_entry *e;

	if (n->kind == GT_NVTX_MARK) {
		st->nvtx_marks++;
		return 0;
	}
	e = gt_stats_nvtx_get(&st->nvtx, st->r, n);
	if (!e)
		return -ENOMEM;
	return gt_stats_series_add(&e->time, gt_stats_span_dur(n->start_ns, n->end_ns));
}

static int on_api(struct gt_stats *st, const struct gt_rec_api *a)
{
	struct gt_stat_entry *e = gt_stats_table_get_id(&st->api, st->r, a->name_id);
	int ret;

	if (!e)
		return -ENOMEM;
	ret = gt_stats_series_add(&e->time, gt_stats_span_dur(a->start_ns, a->end_ns));
	if (ret < 0 || a->return_code == 0)
		return ret;
	/* 600 is cudaErrorNotReady / CUDA_ERROR_NOT_READY: a poll's answer, not a failure */
	if (a->return_code != 600)
		st->api_failed++;
	e = gt_stats_table_get(&st->errors, e->key, e->key_len, 0, a->return_code);
	if (!e)
		return -ENOMEM;
	e->domain = a->domain;
	e->count++;
	return 0;
}

int gt_stats_feed(struct gt_stats *st, const union gt_record *rec)
{
	unsigned type = rec->hdr.type;
	struct gt_stat_entry *e;
	int ret = gt_catalog_observe(&st->cat, rec);

	if (ret < 0)
		return ret;
	switch (type) {
	case GT_REC_KERNEL:
		see_ts(st, rec->kernel.span.start_ns, rec->kernel.span.end_ns);
		e = gt_stats_table_get_id(&st->kernels, st->r, rec->kernel.name_id);
		if (!e)
			return -ENOMEM;
		return gt_stats_series_add(
		        &e->time, gt_stats_span_dur(rec->kernel.span.start_ns, rec->kernel.span.end_ns));
	case GT_REC_MEMCPY:
		see_ts(st, rec->memcpy.span.start_ns, rec->memcpy.span.end_ns);
		return gt_stats_xfer_add(
		        &st->memcpy[rec->memcpy.copy_kind < GT_MEMCPY_MAX ? rec->memcpy.copy_kind
		                                                          : GT_MEMCPY_UNKNOWN],
		        &rec->memcpy.span, rec->memcpy.bytes);
	case GT_REC_MEMSET:
		see_ts(st, rec->memset.span.start_ns, rec->memset.span.end_ns);
		return gt_stats_xfer_add(&st->memset[rec->memset.mem_kind < GT_MEM_MAX ? rec->memset.mem_kind
		                                                             : GT_MEM_UNKNOWN],
		               &rec->memset.span, rec->memset.bytes);
	case GT_REC_MEMORY:
		see_ts(st, rec->memory.ts_ns, rec->memory.ts_ns);
		return on_memory(st, &rec->memory);
	case GT_REC_API:
		see_ts(st, rec->api.start_ns, rec->api.end_ns);
		return on_api(st, &rec->api);
	case GT_REC_NVTX:
		see_ts(st, rec->nvtx.start_ns, rec->nvtx.end_ns);
		return on_nvtx(st, &rec->nvtx);
	default:
		return 0;
	}
}

int gt_stats_begin(struct gt_stats *st, struct gt_reader *r)
{
	memset(st, 0, sizeof(*st));
	st->r = r;
	st->first_ns = UINT64_MAX;
	return gt_catalog_init(&st->cat, r);
}

void gt_stats_end(struct gt_stats *st)
{
	const struct gt_reader_status *status = gt_reader_status(st->r);

	if (status) {
		st->status = *status;
		gt_catalog_read_done(&st->cat, status); /* the losses hold the file's damage */
	}
}

int gt_stats_collect(struct gt_stats *st, struct gt_reader *r, const char **errmsg)
{
	const union gt_record *rec;
	int ret;

	ret = gt_stats_begin(st, r);
	if (ret < 0) {
		*errmsg = "out of memory while summarizing the trace";
		return ret;
	}
	ret = gt_reader_rewind(r);
	if (ret < 0) {
		*errmsg = "cannot rewind the trace";
		return ret;
	}
	while ((ret = gt_reader_next(r, &rec)) > 0) {
		ret = gt_stats_feed(st, rec);
		if (ret < 0) {
			*errmsg = "out of memory while summarizing the trace";
			return ret;
		}
	}
	if (ret < 0) {
		*errmsg = "the trace could not be read to the end";
		return ret;
	}
	gt_stats_end(st);
	return 0;
}

void gt_stats_fini(struct gt_stats *st)
{
	if (!st)
		return;
	gt_stats_table_fini(&st->kernels);
	gt_stats_table_fini(&st->api);
	gt_stats_table_fini(&st->nvtx);
	gt_stats_table_fini(&st->errors);
	for (unsigned i = 0; i < GT_MEMCPY_MAX; i++)
		gt_stats_series_fini(&st->memcpy[i].time);
	for (unsigned i = 0; i < GT_MEM_MAX; i++)
		gt_stats_series_fini(&st->memset[i].time);
	free(st->mem);
	free(st->live);
	gt_catalog_fini(&st->cat);
	memset(st, 0, sizeof(*st));
}
