/* GPU time per NVTX range (nvtx-gpu.h): the first pass keeps every push/pop and start/end
 * range, grouped by thread and indexed for "which ranges contain this call"; the second
 * pairs each piece of GPU work with its launching call by correlation id, in fixed caches,
 * and applies it to the call's ranges in start order. Runs in the CLI. */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "idmap.h"
#include "nvtx-gpu.h"
#include "stats-int.h"

#define WAYS 8u

/* A range of pass 1, and what pass 2 projects onto it. */
struct range {
	uint64_t start_ns, end_ns;
	uint64_t seq;
	struct gt_stat_entry *name; /* in g->names_tab */
	uint32_t proc;              /* catalog index */
	uint32_t pid;               /* out_pid */
	uint32_t tid;
	uint32_t level;
	uint64_t gpu_start, gpu_end, busy, ops;
	uint64_t cur_end;    /* end of the stretch of busy time being merged */
	uint64_t last_start; /* latest start applied */
};

/* A launching call, cached by key = process index << 32 | correlation id. */
struct call {
	uint64_t key; /* 0: empty */
	uint64_t start_ns, end_ns;
	uint32_t tid;
	uint32_t in_range; /* lies inside at least one range of its thread */
};

/* GPU work waiting for its call: a ring of them, chained per key through `prev`. */
struct wait {
	uint64_t key;
	uint64_t start_ns, end_ns;
	uint64_t seq;  /* 1, 2, ...; 0: empty or taken */
	uint64_t prev; /* seq of the previous piece of this key, 0: none */
};

/* The latest waiting piece of a key. */
struct wait_head {
	uint64_t key; /* 0: empty */
	uint64_t seq;
};

/* GPU work paired with a call inside some range, waiting in the heap for start order. */
struct piece {
	uint64_t start_ns, end_ns;
	uint64_t call_start, call_end;
	uint32_t proc, tid;
};

struct thr {
	uint32_t lo, hi; /* its ranges in g->order */
};

struct gt_nvtx_gpu_pass {
	struct gt_reader *r;
	struct gt_nvtx_gpu *out;
	struct gt_stat_table names_tab;

	struct range *ranges;
	size_t nranges, capranges;
	uint32_t *order;  /* ranges by (proc, tid, start, end descending) */
	uint64_t *maxend; /* the implicit search tree over order: the largest end below a node */
	struct thr *thrs;
	uint32_t nthrs;
	struct gt_idmap thr_map; /* (proc, tid) -> thr + 1 */

	struct call *calls;      /* GT_NVTX_GPU_CALLS, in sets of WAYS */
	uint8_t *calls_next;     /* per set: the way it replaces next */
	struct wait *waits;      /* GT_NVTX_GPU_WAITING, a ring */
	struct wait_head *heads; /* GT_NVTX_GPU_WAITING, in sets of WAYS */
	uint8_t *heads_next;
	uint64_t wait_seq; /* the last seq given */
	uint64_t nwaiting; /* pieces in the ring not yet taken or overwritten */

	struct gt_catalog cat; /* the second pass's */
	bool have_cat;
	struct piece *heap;
	size_t nheap;
	bool late; /* the piece being applied came late to one of its ranges */
};

/* ---- pass 1: the ranges ------------------------------------------------------------ */

static int add_range(struct gt_nvtx_gpu_pass *g, const struct gt_rec_nvtx *n, uint64_t seq,
                     const struct gt_catalog_process *cp)
{
	struct range *x;

	if (g->nranges == g->capranges) {
		size_t cap = g->capranges ? g->capranges * 2 : 256;
		struct range *nr = realloc(g->ranges, cap * sizeof(*nr));

		if (!nr)
			return -ENOMEM;
		g->ranges = nr;
		g->capranges = cap;
	}
	x = &g->ranges[g->nranges];
	memset(x, 0, sizeof(*x));
	x->name = gt_stats_nvtx_get(&g->names_tab, g->r, n);
	if (!x->name)
		return -ENOMEM;
	x->start_ns = n->start_ns;
	x->end_ns = n->end_ns;
	x->seq = seq;
	x->proc = cp->index;
	x->pid = cp->out_pid;
	x->tid = n->tid;
	x->level = n->kind == GT_NVTX_PUSH_POP ? n->depth : 0;
	g->nranges++;
	return 0;
}

static int pass_ranges(struct gt_nvtx_gpu_pass *g)
{
	struct gt_catalog cat;
	const union gt_record *rec;
	uint64_t seq = 0;
	int ret = gt_catalog_init(&cat, g->r);

	if (ret == 0)
		ret = gt_reader_rewind(g->r);
	while (ret == 0 && (ret = gt_reader_next(g->r, &rec)) > 0) {
		const struct gt_rec_nvtx *n = &rec->nvtx;
		const struct gt_catalog_process *cp;

		ret = gt_catalog_observe(&cat, rec);
		if (ret < 0 || rec->hdr.type != GT_REC_NVTX)
			continue;
		seq++;
		if (n->kind != GT_NVTX_PUSH_POP && n->kind != GT_NVTX_START_END)
			continue;
		g->out->ranges++;
		/* Nsight Systems: "only ranges that start and end on the same thread" */
		if (n->kind == GT_NVTX_START_END && n->tid != n->end_tid) {
			g->out->cross_thread++;
			continue;
		}
		cp = gt_catalog_process(&cat, rec->hdr.pid);
		ret = cp ? add_range(g, n, seq - 1, cp) : -ENOMEM;
	}
	gt_catalog_fini(&cat);
	return ret;
}

static int cmp_order(const void *pa, const void *pb, void *ctx)
{
	const struct range *ranges = ctx;
	const struct range *a = &ranges[*(const uint32_t *)pa];
	const struct range *b = &ranges[*(const uint32_t *)pb];

	if (a->proc != b->proc)
		return a->proc < b->proc ? -1 : 1;
	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	if (a->start_ns != b->start_ns)
		return a->start_ns < b->start_ns ? -1 : 1;
	if (a->end_ns != b->end_ns)
		return a->end_ns > b->end_ns ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* maxend[mid] of [lo, hi): the largest end of the ranges there; returns it. */
static uint64_t build_tree(struct gt_nvtx_gpu_pass *g, uint32_t lo, uint32_t hi)
{
	uint32_t mid;
	uint64_t m, l, r;

	if (lo >= hi)
		return 0;
	mid = lo + (hi - lo) / 2;
	m = g->ranges[g->order[mid]].end_ns;
	l = build_tree(g, lo, mid);
	r = build_tree(g, mid + 1, hi);
	m = l > m ? l : m;
	m = r > m ? r : m;
	g->maxend[mid] = m;
	return m;
}

static int index_ranges(struct gt_nvtx_gpu_pass *g)
{
	uint32_t n = (uint32_t)g->nranges;
	int ret;

	if (g->nranges > UINT32_MAX - 1)
		return -ENOMEM;
	g->order = malloc((n ? n : 1) * sizeof(*g->order));
	g->maxend = malloc((n ? n : 1) * sizeof(*g->maxend));
	g->thrs = malloc((n ? n : 1) * sizeof(*g->thrs));
	if (!g->order || !g->maxend || !g->thrs)
		return -ENOMEM;
	ret = gt_idmap_init(&g->thr_map, 64);
	if (ret < 0)
		return ret;
	for (uint32_t i = 0; i < n; i++)
		g->order[i] = i;
	qsort_r(g->order, n, sizeof(*g->order), cmp_order, g->ranges);
	for (uint32_t i = 0; i < n;) {
		const struct range *x = &g->ranges[g->order[i]];
		uint32_t j = i + 1;

		while (j < n && g->ranges[g->order[j]].proc == x->proc &&
		       g->ranges[g->order[j]].tid == x->tid)
			j++;
		g->thrs[g->nthrs] = (struct thr){i, j};
		ret = gt_idmap_put(&g->thr_map, x->proc, x->tid, ++g->nthrs);
		if (ret < 0)
			return ret;
		build_tree(g, i, j);
		i = j;
	}
	return 0;
}

/* ---- pass 2: the GPU work ---------------------------------------------------------- */

/* A piece of work [s, e) applied to range x, in start order as far as the heap keeps it. */
static void apply_one(struct gt_nvtx_gpu_pass *g, struct range *x, uint64_t s, uint64_t e)
{
	if (x->ops++ == 0) {
		x->gpu_start = s;
		x->gpu_end = e;
		x->busy = e - s;
		x->cur_end = e;
		x->last_start = s;
		return;
	}
	x->gpu_start = s < x->gpu_start ? s : x->gpu_start;
	x->gpu_end = e > x->gpu_end ? e : x->gpu_end;
	if (s < x->last_start)
		g->late = true; /* the gaps before cur_end are forgotten */
	else
		x->last_start = s;
	if (s >= x->cur_end) {
		x->busy += e - s;
		x->cur_end = e;
	} else if (e > x->cur_end) {
		x->busy += e - x->cur_end;
		x->cur_end = e;
	}
}

/* The ranges of thread [lo, hi) that contain the call [a, b]; applies p to each when p is
 * not NULL. Returns how many. */
static uint64_t stab(struct gt_nvtx_gpu_pass *g, uint32_t lo, uint32_t hi, uint64_t a, uint64_t b,
                     const struct piece *p)
{
	uint64_t found = 0;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		struct range *x = &g->ranges[g->order[mid]];

		if (g->maxend[mid] < b)
			break;
		found += stab(g, lo, mid, a, b, p);
		if (x->start_ns > a)
			break; /* every range after mid starts later still */
		if (x->end_ns >= b) {
			found++;
			if (p)
				apply_one(g, x, p->start_ns, p->end_ns);
		}
		lo = mid + 1;
	}
	return found;
}

static uint64_t ranges_of(struct gt_nvtx_gpu_pass *g, uint32_t proc, uint32_t tid, uint64_t a,
                          uint64_t b, const struct piece *p)
{
	uint32_t t = gt_idmap_get(&g->thr_map, proc, tid);

	if (!t)
		return 0;
	return stab(g, g->thrs[t - 1].lo, g->thrs[t - 1].hi, a, b < a ? a : b, p);
}

static void apply(struct gt_nvtx_gpu_pass *g, const struct piece *p)
{
	g->late = false;
	ranges_of(g, p->proc, p->tid, p->call_start, p->call_end, p);
	if (g->late)
		g->out->ops_late++;
}

static void heap_pop(struct gt_nvtx_gpu_pass *g, struct piece *top)
{
	struct piece last;
	size_t i = 0;

	*top = g->heap[0];
	last = g->heap[--g->nheap];
	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= g->nheap)
			break;
		if (c + 1 < g->nheap && g->heap[c + 1].start_ns < g->heap[c].start_ns)
			c++;
		if (g->heap[c].start_ns >= last.start_ns)
			break;
		g->heap[i] = g->heap[c];
		i = c;
	}
	if (g->nheap)
		g->heap[i] = last;
}

static void heap_push(struct gt_nvtx_gpu_pass *g, const struct piece *p)
{
	size_t i;

	if (g->nheap == GT_NVTX_GPU_REORDER) {
		struct piece top;

		heap_pop(g, &top);
		apply(g, &top);
	}
	for (i = g->nheap++; i > 0 && g->heap[(i - 1) / 2].start_ns > p->start_ns; i = (i - 1) / 2)
		g->heap[i] = g->heap[(i - 1) / 2];
	g->heap[i] = *p;
}

/* Work [start, end) of the call c, which lies inside a range. */
static void matched(struct gt_nvtx_gpu_pass *g, const struct call *c, uint64_t start, uint64_t end)
{
	struct piece p = {
	        .start_ns = start,
	        .end_ns = end < start ? start : end, /* a reversed span (damage) counts 0 */
	        .call_start = c->start_ns,
	        .call_end = c->end_ns,
	        .proc = (uint32_t)(c->key >> 32),
	        .tid = c->tid,
	};

	if (!c->in_range)
		return;
	g->out->ops_in_ranges++;
	heap_push(g, &p);
}

static uint32_t set_of(uint64_t key, uint32_t slots)
{
	return (gt_idmap_hash(key, 0) & (slots / WAYS - 1)) * WAYS;
}

static struct call *call_find(struct gt_nvtx_gpu_pass *g, uint64_t key)
{
	uint32_t base = set_of(key, GT_NVTX_GPU_CALLS);

	for (unsigned k = 0; k < WAYS; k++)
		if (g->calls[base + k].key == key)
			return &g->calls[base + k];
	return NULL;
}

static struct call *call_put(struct gt_nvtx_gpu_pass *g, uint64_t key)
{
	uint32_t base = set_of(key, GT_NVTX_GPU_CALLS), way = WAYS;

	for (unsigned k = 0; k < WAYS && way == WAYS; k++)
		if (g->calls[base + k].key == key || g->calls[base + k].key == 0)
			way = k;
	if (way == WAYS) {
		uint8_t *next = &g->calls_next[base / WAYS];

		way = *next;
		*next = (uint8_t)((way + 1) % WAYS);
	}
	return &g->calls[base + way];
}

static struct wait_head *head_find(struct gt_nvtx_gpu_pass *g, uint64_t key, bool put)
{
	uint32_t base = set_of(key, GT_NVTX_GPU_WAITING), way = WAYS;

	for (unsigned k = 0; k < WAYS; k++)
		if (g->heads[base + k].key == key)
			return &g->heads[base + k];
	if (!put)
		return NULL;
	for (unsigned k = 0; k < WAYS && way == WAYS; k++)
		if (g->heads[base + k].key == 0)
			way = k;
	if (way == WAYS) {
		uint8_t *next = &g->heads_next[base / WAYS];

		way = *next; /* its pieces stay in the ring, never found: unmatched */
		*next = (uint8_t)((way + 1) % WAYS);
	}
	g->heads[base + way] = (struct wait_head){key, 0};
	return &g->heads[base + way];
}

/* The waiting piece of seq, or NULL when it was taken or overwritten since. */
static struct wait *wait_at(struct gt_nvtx_gpu_pass *g, uint64_t seq)
{
	struct wait *w = &g->waits[seq % GT_NVTX_GPU_WAITING];

	return seq && w->seq == seq ? w : NULL;
}

static void wait_add(struct gt_nvtx_gpu_pass *g, uint64_t key, uint64_t start, uint64_t end)
{
	struct wait_head *h = head_find(g, key, true);
	struct wait *w = &g->waits[++g->wait_seq % GT_NVTX_GPU_WAITING];

	if (w->seq)
		g->out->ops_unmatched++; /* waited a whole lap of the ring */
	else
		g->nwaiting++;
	*w = (struct wait){key, start, end, g->wait_seq, wait_at(g, h->seq) ? h->seq : 0};
	h->seq = g->wait_seq;
}

static void on_call(struct gt_nvtx_gpu_pass *g, uint32_t proc, const struct gt_rec_api *a)
{
	uint64_t key = (uint64_t)proc << 32 | a->correlation_id;
	struct call *c = call_put(g, key);
	struct wait_head *h;

	c->key = key;
	c->start_ns = a->start_ns;
	c->end_ns = a->end_ns < a->start_ns ? a->start_ns : a->end_ns;
	c->tid = a->tid;
	c->in_range = ranges_of(g, proc, a->tid, c->start_ns, c->end_ns, NULL) > 0;
	h = g->nwaiting ? head_find(g, key, false) : NULL;
	if (!h)
		return;
	for (struct wait *w = wait_at(g, h->seq); w; w = wait_at(g, w->prev)) {
		w->seq = 0;
		g->nwaiting--;
		matched(g, c, w->start_ns, w->end_ns);
	}
	h->key = 0;
}

static void on_work(struct gt_nvtx_gpu_pass *g, uint32_t proc, const struct gt_gpu_span *s)
{
	uint64_t key = (uint64_t)proc << 32 | s->correlation_id;
	const struct call *c;

	g->out->ops++;
	if (!s->correlation_id) {
		g->out->ops_unmatched++;
		return;
	}
	c = call_find(g, key);
	if (c)
		matched(g, c, s->start_ns, s->end_ns);
	else
		wait_add(g, key, s->start_ns, s->end_ns);
}

static const struct gt_gpu_span *span_of(const union gt_record *rec)
{
	switch (rec->hdr.type) {
	case GT_REC_KERNEL:
		return &rec->kernel.span;
	case GT_REC_MEMCPY:
		return &rec->memcpy.span;
	case GT_REC_MEMSET:
		return &rec->memset.span;
	case GT_REC_GRAPH:
		return &rec->graph.span;
	default:
		return NULL;
	}
}

/* The second pass's caches, and its catalog (the first pass had its own). */
static int work_begin(struct gt_nvtx_gpu_pass *g)
{
	g->calls = calloc(GT_NVTX_GPU_CALLS, sizeof(*g->calls));
	g->calls_next = calloc(GT_NVTX_GPU_CALLS / WAYS, 1);
	g->waits = calloc(GT_NVTX_GPU_WAITING, sizeof(*g->waits));
	g->heads = calloc(GT_NVTX_GPU_WAITING, sizeof(*g->heads));
	g->heads_next = calloc(GT_NVTX_GPU_WAITING / WAYS, 1);
	g->heap = malloc(GT_NVTX_GPU_REORDER * sizeof(*g->heap));
	if (!g->calls || !g->calls_next || !g->waits || !g->heads || !g->heads_next || !g->heap)
		return -ENOMEM;
	g->have_cat = true;
	return gt_catalog_init(&g->cat, g->r);
}

static int work_feed(struct gt_nvtx_gpu_pass *g, const union gt_record *rec)
{
	const struct gt_gpu_span *s = span_of(rec);
	const struct gt_catalog_process *cp;
	int ret = gt_catalog_observe(&g->cat, rec);

	if (ret < 0 || (!s && (rec->hdr.type != GT_REC_API || !rec->api.correlation_id)))
		return ret;
	cp = gt_catalog_process(&g->cat, rec->hdr.pid);
	if (!cp)
		return -ENOMEM;
	if (s)
		on_work(g, cp->index, s);
	else
		on_call(g, cp->index, &rec->api);
	return 0;
}

static void work_end(struct gt_nvtx_gpu_pass *g)
{
	while (g->nheap) {
		struct piece top;

		heap_pop(g, &top);
		apply(g, &top);
	}
	/* what still waits never met its call */
	for (size_t i = 0; i < GT_NVTX_GPU_WAITING; i++)
		g->out->ops_unmatched += g->waits[i].seq != 0;
}

/* ---- the names and their statistics ------------------------------------------------ */

static int cmp_u64(const void *pa, const void *pb)
{
	uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;

	return a < b ? -1 : a > b;
}

/* v[0..n) sorted in place; n > 0. */
static void series_of(uint64_t *v, size_t n, struct gt_nvtx_gpu_series *s)
{
	double sum = 0, sq = 0;

	qsort(v, n, sizeof(*v), cmp_u64);
	s->min_ns = v[0];
	s->max_ns = v[n - 1];
	s->total_ns = 0;
	for (size_t i = 0; i < n; i++)
		s->total_ns += v[i];
	s->avg_ns = (double)s->total_ns / (double)n;
	s->median_ns = n % 2 ? (double)v[n / 2] : ((double)v[n / 2 - 1] + (double)v[n / 2]) / 2;
	for (size_t i = 0; i < n; i++) {
		double d = (double)v[i] - s->avg_ns;

		sum += d;
		sq += d * d;
	}
	/* the two-pass sum of squares, corrected by the rounding of the mean */
	s->stddev_ns = n > 1 ? sqrt((sq - sum * sum / (double)n) / (double)(n - 1)) : 0;
}

static int cmp_names(const void *pa, const void *pb, void *ctx)
{
	const struct gt_nvtx_gpu_name *names = ctx;
	const struct gt_nvtx_gpu_name *a = &names[*(const uint32_t *)pa];
	const struct gt_nvtx_gpu_name *b = &names[*(const uint32_t *)pb];
	int c;

	if (a->proj.total_ns != b->proj.total_ns)
		return a->proj.total_ns > b->proj.total_ns ? -1 : 1;
	if (a->style != b->style)
		return a->style < b->style ? -1 : 1;
	if (!a->domain != !b->domain)
		return a->domain ? 1 : -1;
	if (a->domain && (c = strcmp(a->domain, b->domain)))
		return c;
	return strcmp(a->message, b->message);
}

static int finish(struct gt_nvtx_gpu_pass *g)
{
	struct gt_nvtx_gpu *o = g->out;
	size_t nt = g->names_tab.n, ni = 0, np = 0;
	struct gt_nvtx_gpu_name *tmp = calloc(nt ? nt : 1, sizeof(*tmp));
	size_t *first = calloc(nt + 1, sizeof(*first)), *fill = calloc(nt + 1, sizeof(*fill));
	uint32_t *perm = calloc(nt ? nt : 1, sizeof(*perm)), *where = NULL;
	uint64_t *vals = NULL;
	int ret = -ENOMEM;

	if (!tmp || !first || !fill || !perm)
		goto out;
	for (size_t i = 0; i < nt; i++)
		g->names_tab.entries[i]->count = i; /* the entry's index, from here on */
	for (size_t i = 0; i < g->nranges; i++) {
		const struct range *x = &g->ranges[i];
		struct gt_nvtx_gpu_name *n = &tmp[x->name->count];

		if (!x->ops)
			continue;
		ni++;
		n->instances++;
		n->range_total_ns += gt_stats_span_dur(x->start_ns, x->end_ns);
		n->ops += x->ops;
		first[x->name->count + 1]++;
	}
	for (size_t i = 0; i < nt; i++)
		first[i + 1] += first[i];
	vals = malloc((ni ? ni : 1) * 2 * sizeof(*vals));
	o->instances = calloc(ni ? ni : 1, sizeof(*o->instances));
	o->names = calloc(nt ? nt : 1, sizeof(*o->names));
	where = calloc(nt ? nt : 1, sizeof(*where));
	if (!vals || !o->instances || !o->names || !where)
		goto out;
	for (size_t i = 0; i < g->nranges; i++) {
		const struct range *x = &g->ranges[i];
		size_t k;

		if (!x->ops)
			continue;
		k = first[x->name->count] + fill[x->name->count]++;
		vals[k] = x->gpu_end - x->gpu_start;
		vals[ni + k] = x->busy;
	}
	for (size_t i = 0; i < nt; i++) {
		const struct gt_stat_entry *e = g->names_tab.entries[i];
		struct gt_nvtx_gpu_name *n = &tmp[i];

		if (!n->instances)
			continue;
		perm[np++] = (uint32_t)i;
		series_of(vals + first[i], n->instances, &n->proj);
		series_of(vals + ni + first[i], n->instances, &n->busy);
		n->style = (unsigned)e->tag;
		n->domain = e->split ? strndup(e->key, e->split) : NULL;
		n->message = strdup(e->key + e->split + 1);
		if ((e->split && !n->domain) || !n->message)
			goto out;
	}
	qsort_r(perm, np, sizeof(*perm), cmp_names, tmp);
	for (size_t i = 0; i < np; i++) {
		where[perm[i]] = (uint32_t)o->nnames;
		o->names[o->nnames++] = tmp[perm[i]];
		memset(&tmp[perm[i]], 0, sizeof(tmp[perm[i]])); /* moved */
	}
	for (size_t i = 0; i < g->nranges; i++) {
		const struct range *x = &g->ranges[i];

		if (!x->ops)
			continue;
		o->instances[o->ninstances++] = (struct gt_nvtx_gpu_instance){
		        .name = &o->names[where[x->name->count]],
		        .seq = x->seq,
		        .pid = x->pid,
		        .process = x->proc,
		        .tid = x->tid,
		        .level = x->level,
		        .start_ns = x->start_ns,
		        .end_ns = x->end_ns,
		        .gpu_start_ns = x->gpu_start,
		        .gpu_end_ns = x->gpu_end,
		        .busy_ns = x->busy,
		        .ops = x->ops,
		};
	}
	ret = 0;
out:
	for (size_t i = 0; tmp && i < nt; i++) {
		free(tmp[i].domain);
		free(tmp[i].message);
	}
	free(tmp);
	free(first);
	free(fill);
	free(perm);
	free(where);
	free(vals);
	return ret;
}

/* ---- the calls --------------------------------------------------------------------- */

static void pass_free(struct gt_nvtx_gpu_pass *g)
{
	if (!g)
		return;
	gt_stats_table_fini(&g->names_tab);
	free(g->ranges);
	free(g->order);
	free(g->maxend);
	free(g->thrs);
	gt_idmap_fini(&g->thr_map);
	free(g->calls);
	free(g->calls_next);
	free(g->waits);
	free(g->heads);
	free(g->heads_next);
	free(g->heap);
	if (g->have_cat)
		gt_catalog_fini(&g->cat);
	gt_nvtx_gpu_free(g->out);
	free(g);
}

static const char *err_text(int err)
{
	return err == -ENOMEM ? "out of memory while projecting the NVTX ranges"
	                      : "the trace could not be read to the end";
}

int gt_nvtx_gpu_begin(struct gt_reader *r, struct gt_nvtx_gpu_pass **ret, const char **errmsg)
{
	struct gt_nvtx_gpu_pass *g = calloc(1, sizeof(*g));
	int err = -ENOMEM;

	if (!g)
		goto out;
	g->r = r;
	g->out = calloc(1, sizeof(*g->out));
	if (!g->out)
		goto out;
	err = pass_ranges(g);
	if (err == 0)
		err = index_ranges(g);
	if (err == 0)
		err = work_begin(g);
	if (err == 0)
		err = gt_reader_rewind(r);
out:
	if (err < 0) {
		*errmsg = err_text(err);
		pass_free(g);
		return err;
	}
	*ret = g;
	return 0;
}

int gt_nvtx_gpu_feed(struct gt_nvtx_gpu_pass *g, const union gt_record *rec)
{
	return work_feed(g, rec);
}

int gt_nvtx_gpu_end(struct gt_nvtx_gpu_pass *g, struct gt_nvtx_gpu **ret, const char **errmsg)
{
	int err;

	work_end(g);
	err = finish(g);
	if (err < 0) {
		*errmsg = err_text(err);
		pass_free(g);
		return err;
	}
	g->out->status = *gt_reader_status(g->r);
	*ret = g->out;
	g->out = NULL;
	pass_free(g);
	return 0;
}

void gt_nvtx_gpu_pass_free(struct gt_nvtx_gpu_pass *g)
{
	pass_free(g);
}

int gt_nvtx_gpu_collect(struct gt_reader *r, struct gt_nvtx_gpu **ret, const char **errmsg)
{
	struct gt_nvtx_gpu_pass *g = NULL;
	const union gt_record *rec;
	int err = gt_nvtx_gpu_begin(r, &g, errmsg);

	if (err < 0)
		return err;
	while ((err = gt_reader_next(r, &rec)) > 0) {
		err = gt_nvtx_gpu_feed(g, rec);
		if (err < 0)
			break;
	}
	if (err < 0) {
		*errmsg = err_text(err);
		gt_nvtx_gpu_pass_free(g);
		return err;
	}
	return gt_nvtx_gpu_end(g, ret, errmsg);
}

void gt_nvtx_gpu_free(struct gt_nvtx_gpu *g)
{
	if (!g)
		return;
	for (size_t i = 0; i < g->nnames; i++) {
		free(g->names[i].domain);
		free(g->names[i].message);
	}
	free(g->names);
	free(g->instances);
	free(g);
}
