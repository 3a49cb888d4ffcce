/* GPU busy time by kind: intervals are collected in a small buffer, merged in start order
 * with the segments still open into disjoint segments labelled by what ran, and the oldest
 * segments are summed (and attributed to windows) and forgotten. Runs in the CLI; memory
 * bounded by GT_BUSY_PENDING + GT_BUSY_KEEP intervals per GPU (about 200 KiB at most). */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "busy.h"

#define C (1u << GT_BUSY_COMPUTE)
#define N (1u << GT_BUSY_COMM)
#define M (1u << GT_BUSY_MEMORY)

struct seg {
	uint64_t start, end; /* ns, end exclusive */
	uint32_t mask;       /* kinds that ran (bits of enum gt_busy_kind) */
	uint32_t _pad;
};

/* An interval open during the sweep: its end and kinds. */
struct active {
	uint64_t end;
	uint32_t mask;
	uint32_t _pad;
};

/* What a merge works in, shared by the GPUs of one reading (a merge runs at a time). */
struct gt_busy_scratch {
	struct seg *out; /* the merge's output */
	size_t capout;
	struct active *heap; /* the sweep's open intervals, a min-heap by end */
	size_t capheap;
};

struct gt_busy {
	struct gt_busy_window *win; /* borrowed, sorted by start */
	size_t nwin, wfirst;        /* wfirst: no window before it ends after what is summed */

	struct seg *live; /* merged, disjoint, sorted; owned */
	size_t nlive, caplive;
	struct seg *pend; /* not merged yet, any order; owned, GT_BUSY_PENDING once used */
	size_t npend;
	struct gt_busy_scratch *scratch; /* borrowed, or own_scratch */
	struct gt_busy_scratch own_scratch;
	uint64_t floor; /* everything before it has been summed */
	struct gt_busy_totals t;
};

int gt_busy_scratch_new(struct gt_busy_scratch **ret)
{
	*ret = calloc(1, sizeof(**ret));
	return *ret ? 0 : -ENOMEM;
}

void gt_busy_scratch_free(struct gt_busy_scratch *sc)
{
	if (!sc)
		return;
	free(sc->out);
	free(sc->heap);
	free(sc);
}

int gt_busy_new(struct gt_busy_window *windows, size_t n, struct gt_busy_scratch *scratch,
                struct gt_busy **ret)
{
	struct gt_busy *b = calloc(1, sizeof(*b));

	/* the buffers come with the first interval, and grow with use: a GPU with little
	 * activity costs little */
	if (!b)
		return -ENOMEM;
	b->scratch = scratch ? scratch : &b->own_scratch;
	b->win = windows;
	b->nwin = windows ? n : 0;
	b->t.first_ns = UINT64_MAX;
	*ret = b;
	return 0;
}

void gt_busy_free(struct gt_busy *b)
{
	if (!b)
		return;
	free(b->live);
	free(b->pend);
	free(b->own_scratch.out);
	free(b->own_scratch.heap);
	free(b);
}

/* ---- summing ---- */

static uint64_t min64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

static uint64_t max64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

/* Segment s is final: sum it and give the windows it falls in their share. Segments are
 * summed in time order, so a window that ends before one can be skipped for good. */
static void retire(struct gt_busy *b, const struct seg *s)
{
	b->t.by_mask[s->mask] += s->end - s->start;
	b->floor = s->end;
	while (b->wfirst < b->nwin && b->win[b->wfirst].end_ns <= s->start)
		b->wfirst++;
	for (size_t k = b->wfirst; k < b->nwin && b->win[k].start_ns < s->end; k++) {
		struct gt_busy_window *w = &b->win[k];
		uint64_t lo = max64(s->start, w->start_ns), hi = min64(s->end, w->end_ns);

		if (hi <= lo)
			continue;
		if (s->mask & C)
			w->compute_ns += hi - lo;
		if (s->mask & N)
			w->comm_ns += hi - lo;
		if ((s->mask & (C | N)) == (C | N))
			w->overlap_ns += hi - lo;
		if (s->mask & M)
			w->memory_ns += hi - lo;
	}
}

/* ---- merging ---- */

static int seg_cmp(const void *a, const void *b)
{
	const struct seg *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static void heap_push(struct active *h, size_t *n, struct active a)
{
	size_t i = (*n)++;

	while (i > 0 && h[(i - 1) / 2].end > a.end) {
		h[i] = h[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h[i] = a;
}

static struct active heap_pop(struct active *h, size_t *n)
{
	struct active top = h[0], last = h[--*n];
	size_t i = 0;

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= *n)
			break;
		if (c + 1 < *n && h[c + 1].end < h[c].end)
			c++;
		if (h[c].end >= last.end)
			break;
		h[i] = h[c];
		i = c;
	}
	if (*n)
		h[i] = last;
	return top;
}

/* Append [start, end) with mask to out, joined to the previous segment when they touch and
 * the same kinds ran. */
static void emit(struct seg *out, size_t *nout, uint64_t start, uint64_t end, uint32_t mask)
{
	if (end <= start || !mask)
		return;
	if (*nout && out[*nout - 1].end == start && out[*nout - 1].mask == mask) {
		out[*nout - 1].end = end;
		return;
	}
	out[(*nout)++] = (struct seg){start, end, mask, 0};
}

static uint32_t mask_of(const uint32_t *count)
{
	uint32_t m = 0;

	for (unsigned k = 0; k < GT_BUSY_KIND_MAX; k++)
		if (count[k])
			m |= 1u << k;
	return m;
}

/* Room for n elements of `size` bytes in *p (capacity *cap). Returns 0 or -ENOMEM. */
static int reserve(void **p, size_t *cap, size_t n, size_t size)
{
	void *q;

	if (n <= *cap)
		return 0;
	q = realloc(*p, n * size);
	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = n;
	return 0;
}

/* Runs of intervals in start order up to which the pending ones are merged run by run;
 * more, and they are sorted whole. */
#define MAX_RUNS 32u

/* Sort v[0, n) by start into v, with tmp (n long) to work in. Intervals mostly come as a few
 * runs already in order (streams, or processes, delivered in turn): those are merged pairwise,
 * in log2(runs) passes; any order of equal starts gives the same segments. */
static void sort_by_start(struct seg *v, size_t n, struct seg *tmp)
{
	size_t end[MAX_RUNS], nruns = 0; /* end[r]: where run r ends */
	struct seg *src = v, *dst = tmp;

	for (size_t k = 1; k < n; k++) {
		if (v[k].start >= v[k - 1].start)
			continue;
		if (nruns == MAX_RUNS - 1) {
			qsort(v, n, sizeof(*v), seg_cmp);
			return;
		}
		end[nruns++] = k;
	}
	if (!nruns)
		return;
	end[nruns++] = n;
	while (nruns > 1) {
		size_t r = 0, lo = 0, kept = 0;

		for (; r < nruns; r += 2) {
			size_t mid = end[r], hi = r + 1 < nruns ? end[r + 1] : mid;
			size_t x = lo, y = mid, o = lo;

			while (x < mid && y < hi)
				dst[o++] = src[y].start < src[x].start ? src[y++] : src[x++];
			memcpy(dst + o, src + x, (mid - x) * sizeof(*v));
			memcpy(dst + o + mid - x, src + y, (hi - y) * sizeof(*v));
			end[kept++] = hi;
			lo = hi;
		}
		nruns = kept;
		src = dst;
		dst = dst == v ? tmp : v;
	}
	if (src != v)
		memcpy(v, src, n * sizeof(*v));
}

/* How many open segments end before t: they are disjoint and sorted, so their ends are too. */
static size_t ending_before(const struct gt_busy *b, uint64_t t)
{
	size_t lo = 0, hi = b->nlive;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (b->live[mid].end < t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The next of the open segments from i and the pending intervals from j, in start order;
 * NULL when both are done. *live: whether it is an open segment. */
static const struct seg *next_of(const struct gt_busy *b, size_t i, size_t j, bool *live)
{
	*live = i < b->nlive && (j == b->npend || b->live[i].start <= b->pend[j].start);
	if (*live)
		return &b->live[i];
	return j < b->npend ? &b->pend[j] : NULL;
}

/* Merge the pending intervals with the open segments into disjoint labelled segments
 * (a sweep in start order with a heap of open ends), then sum all but the newest `keep`.
 * The open segments that end before the first pending interval starts would come out of the
 * sweep as they went in (disjoint, and never joined to what follows, which starts later or
 * differs in kinds): they stay where they are, and the sweep begins after them. */
static int merge(struct gt_busy *b, size_t keep)
{
	size_t i, j = 0, nout = 0, nheap = 0, need = b->nlive + b->npend, skip, nsum, from_live,
	          from_out;
	struct gt_busy_scratch *sc = b->scratch;
	uint32_t count[GT_BUSY_KIND_MAX] = {0};
	uint64_t now = 0;
	const struct seg *next;
	bool next_live;
	struct active *heap;
	struct seg *out;

	/* n intervals and k segments make at most 2 (n + k) - 1 segments; out is also where
	 * the pending intervals are sorted */
	if (reserve((void **)&sc->heap, &sc->capheap, need, sizeof(*sc->heap)) < 0 ||
	    reserve((void **)&sc->out, &sc->capout, 2 * need, sizeof(*sc->out)) < 0)
		return -ENOMEM;
	heap = sc->heap;
	out = sc->out;
	sort_by_start(b->pend, b->npend, out);
	skip = b->npend ? ending_before(b, b->pend[0].start) : b->nlive;
	i = skip;
	next = next_of(b, i, j, &next_live);
	for (;;) {
		const struct seg *cur;

		if (nheap && (!next || heap[0].end <= next->start)) {
			/* the earliest end comes first: close everything ending then */
			uint64_t t = heap[0].end;

			emit(out, &nout, now, t, mask_of(count));
			now = t;
			while (nheap && heap[0].end == t) {
				struct active a = heap_pop(heap, &nheap);

				for (unsigned k = 0; k < GT_BUSY_KIND_MAX; k++)
					if (a.mask & (1u << k))
						count[k]--;
			}
			continue;
		}
		if (!next)
			break;
		cur = next;
		i += next_live;
		j += !next_live;
		next = next_of(b, i, j, &next_live);
		if (!nheap && (!next || cur->end <= next->start)) {
			/* nothing open and nothing starts before it ends: the sweep would push it
			 * and close it at once */
			emit(out, &nout, cur->start, cur->end, cur->mask);
			continue;
		}
		if (nheap)
			emit(out, &nout, now, cur->start, mask_of(count));
		now = cur->start;
		heap_push(heap, &nheap, (struct active){cur->end, cur->mask, 0});
		for (unsigned k = 0; k < GT_BUSY_KIND_MAX; k++)
			if (cur->mask & (1u << k))
				count[k]++;
	}
	b->npend = 0;
	/* the segments in time order are live[0, skip) then out[0, nout): the oldest are
	 * final, the newest `keep` stay open */
	nsum = skip + nout > keep ? skip + nout - keep : 0;
	from_live = nsum < skip ? nsum : skip;
	from_out = nsum - from_live;
	for (size_t k = 0; k < from_live; k++)
		retire(b, &b->live[k]);
	for (size_t k = 0; k < from_out; k++)
		retire(b, &out[k]);
	if (reserve((void **)&b->live, &b->caplive, skip - from_live + nout - from_out,
	            sizeof(*b->live)) < 0)
		return -ENOMEM;
	if (from_live && skip > from_live)
		memmove(b->live, b->live + from_live, (skip - from_live) * sizeof(*b->live));
	if (nout > from_out)
		memcpy(b->live + skip - from_live, out + from_out,
		       (nout - from_out) * sizeof(*b->live));
	b->nlive = skip - from_live + nout - from_out;
	return 0;
}

int gt_busy_add(struct gt_busy *b, uint64_t start_ns, uint64_t end_ns, unsigned kind)
{
	if (kind >= GT_BUSY_KIND_MAX)
		return -EINVAL;
	if (end_ns <= start_ns)
		return 0;
	b->t.spans++;
	b->t.first_ns = min64(b->t.first_ns, start_ns);
	b->t.last_ns = max64(b->t.last_ns, end_ns);
	b->t.span_ns = b->t.last_ns - b->t.first_ns;
	if (start_ns < b->floor) {
		/* its time before the floor was summed already, with whatever else ran then */
		b->t.late_spans++;
		b->t.late_ns += min64(end_ns, b->floor) - start_ns;
		if (end_ns <= b->floor)
			return 0;
		start_ns = b->floor;
	}
	if (!b->pend && !(b->pend = malloc(GT_BUSY_PENDING * sizeof(*b->pend))))
		return -ENOMEM;
	b->pend[b->npend++] = (struct seg){start_ns, end_ns, 1u << kind, 0};
	if (b->npend == GT_BUSY_PENDING)
		return merge(b, GT_BUSY_KEEP);
	return 0;
}

int gt_busy_finish(struct gt_busy *b)
{
	return merge(b, 0);
}

int gt_busy_fold(struct gt_busy *b)
{
	int ret = merge(b, 0);

	/* nothing is summed any more: what comes next starts afresh, windows included */
	b->floor = 0;
	b->wfirst = 0;
	return ret;
}

const struct gt_busy_totals *gt_busy_totals(const struct gt_busy *b)
{
	return &b->t;
}

void gt_busy_totals_add(struct gt_busy_totals *into, const struct gt_busy_totals *b)
{
	for (unsigned m = 0; m < GT_BUSY_MASKS; m++)
		into->by_mask[m] += b->by_mask[m];
	into->first_ns = min64(into->first_ns, b->first_ns);
	into->last_ns = max64(into->last_ns, b->last_ns);
	into->span_ns += b->span_ns;
	into->late_ns += b->late_ns;
	into->late_spans += b->late_spans;
	into->spans += b->spans;
}

static uint64_t sum_where(const struct gt_busy_totals *t, uint32_t all, uint32_t none)
{
	uint64_t s = 0;

	for (uint32_t m = 1; m < GT_BUSY_MASKS; m++)
		if ((m & all) == all && !(m & none))
			s += t->by_mask[m];
	return s;
}

uint64_t gt_busy_compute_ns(const struct gt_busy_totals *t)
{
	return sum_where(t, C, 0);
}

uint64_t gt_busy_comm_ns(const struct gt_busy_totals *t)
{
	return sum_where(t, N, C);
}

uint64_t gt_busy_memory_ns(const struct gt_busy_totals *t)
{
	return t->by_mask[M];
}

uint64_t gt_busy_any_ns(const struct gt_busy_totals *t)
{
	return sum_where(t, 0, 0);
}

uint64_t gt_busy_idle_ns(const struct gt_busy_totals *t)
{
	uint64_t any = gt_busy_any_ns(t);

	return t->span_ns > any ? t->span_ns - any : 0;
}

uint64_t gt_busy_overlap_ns(const struct gt_busy_totals *t)
{
	return sum_where(t, C | N, 0);
}

uint64_t gt_busy_comm_all_ns(const struct gt_busy_totals *t)
{
	return sum_where(t, N, 0);
}
