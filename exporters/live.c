/* Live aggregates for `gputrace run --live`: totals kept from the records the session's drain
 * writes (its tap), published as snapshots through three buffers so that the drain never
 * waits for the view's thread and the view never sees half an update. The drain's side runs on
 * the CLI's main thread (the session's poll loop); the reader's side on the view's thread. */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "gputrace/clock.h"
#include "gputrace/live.h"

#define LIVE_PENDING_MAX (1u << 14) /* kernel intervals per GPU waiting for the union */
#define LIVE_FRESH       4u         /* in `middle`: the buffer there was published, unread */
#define LIVE_INDEX       3u

/* An open-addressing map of (a, b) -> (v, w); linear probing, deletion by backward shift. */
struct map_ent {
	uint64_t a, b; /* key */
	uint64_t v;    /* value */
	uint32_t w;    /* value */
	uint32_t used;
};

struct map {
	struct map_ent *e;
	size_t cap, n; /* cap: a power of two, or 0 */
};

struct interval {
	uint64_t start_ns, end_ns;
};

struct live_gpu {
	struct gt_live_gpu pub; /* name left NULL: name_id resolves it at publication */
	uint32_t name_id;
	bool named; /* a DEVICE record gave its uuid */
	struct interval *pending;
	size_t npending, cap_pending;
	bool unsorted; /* a pending interval starts before the one pended before it */
};

struct live_stat {
	uint32_t name_id;
	uint64_t count, total_ns;
};

struct frame {
	uint32_t name_id;
	bool known; /* false: a range still open, not in the trace yet */
	uint64_t start_ns, end_ns;
};

struct live_thread {
	uint32_t pid, tid, name_id;
	uint32_t depth;
	struct frame f[GT_LIVE_STACK_MAX];
	uint32_t cand_id; /* the last outermost range, before steps were found */
	uint32_t step_id; /* the last step; 0: none */
	uint64_t steps, step_ns;
};

struct live_proc {
	struct gt_live_process pub; /* exe left NULL: exe_id resolves it */
	uint32_t exe_id;
	uint64_t ring_dropped; /* not yet in a LOSS record */
};

struct devmap {
	uint32_t pid, device_id, gpu;
};

/* One of the three snapshot buffers, with the capacity of its arrays. */
struct live_buf {
	struct gt_live_snapshot s;
	size_t cap_gpus, cap_kernels, cap_ranges, cap_threads, cap_procs;
};

struct gt_live {
	/* ---- the drain's side: touched by the drain's thread only ---- */
	uint64_t start_ns;
	char **strs; /* by global string id; owned, immutable once set */
	size_t cap_strs;
	struct live_gpu *gpus;
	size_t ngpus, cap_gpus;
	struct devmap *devmap;
	size_t ndevmap, cap_devmap;
	size_t last_devmap; /* the entry found last: consecutive records mostly share it */
	struct live_stat *kernels, *ranges;
	size_t nkernels, cap_kernels, nranges, cap_ranges;
	uint32_t *kernel_of, *range_of; /* by string id: index + 1, 0 none */
	size_t cap_kernel_of, cap_range_of;
	struct live_thread *threads;
	size_t nthreads, cap_threads;
	size_t last_thread; /* the thread found last */
	struct live_proc *procs;
	size_t nprocs, cap_procs;
	struct map thread_map, proc_map, alloc_map;
	uint64_t records, api_calls, api_failed, lost_written, nvtx_ranges, nvtx_marks;
	uint32_t failed_name_id, failed_domain;
	int32_t failed_code;
	bool incomplete;
	uint64_t seq;
	unsigned back; /* the buffer being filled */
	struct gt_drain_tap tap;

	/* ---- shared ---- */
	struct live_buf buf[3];
	/* The buffer last published (| LIVE_FRESH until the reader takes it). The drain
	 * swaps its filled `back` in (release: the reader's acquire sees the contents); the
	 * reader swaps its read `front` in (release: the drain's acquire reuses it only after
	 * the reader is done with it). */
	_Atomic unsigned middle;
	_Atomic bool want; /* the reader asked for a publication */
	_Atomic bool on;   /* false once the reader is gone for good */
	int wake_fd;       /* eventfd, or -1 */

	/* ---- the reader's side ---- */
	unsigned front; /* the buffer being read */
};

/* ---- the map ---- */

static size_t map_hash(uint64_t a, uint64_t b)
{
	uint64_t h =
	        a * 0x9e3779b97f4a7c15ull ^ (b + 0x632be59bd9b4e019ull) * 0xbf58476d1ce4e5b9ull;

	return (size_t)(h ^ h >> 31);
}

static struct map_ent *map_find(const struct map *m, uint64_t a, uint64_t b)
{
	if (!m->cap)
		return NULL;
	for (size_t i = map_hash(a, b) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		struct map_ent *e = &m->e[i];

		if (!e->used)
			return NULL;
		if (e->a == a && e->b == b)
			return e;
	}
}

static int map_grow(struct map *m)
{
	size_t cap = m->cap ? m->cap * 2 : 64;
	struct map_ent *e = calloc(cap, sizeof(*e)), *old = m->e;

	if (!e)
		return -ENOMEM;
	for (size_t i = 0; i < m->cap; i++) {
		size_t j;

		if (!old[i].used)
			continue;
		for (j = map_hash(old[i].a, old[i].b) & (cap - 1); e[j].used;
		     j = (j + 1) & (cap - 1))
			;
		e[j] = old[i];
	}
	free(old);
	m->e = e;
	m->cap = cap;
	return 0;
}

/* The entry for (a, b), made (zeroed values) if missing. NULL: out of memory. */
static struct map_ent *map_put(struct map *m, uint64_t a, uint64_t b)
{
	struct map_ent *e = map_find(m, a, b);
	size_t i;

	if (e)
		return e;
	if ((m->n + 1) * 4 > m->cap * 3 && map_grow(m) < 0)
		return NULL;
	for (i = map_hash(a, b) & (m->cap - 1); m->e[i].used; i = (i + 1) & (m->cap - 1))
		;
	m->e[i] = (struct map_ent){.a = a, .b = b, .used = 1};
	m->n++;
	return &m->e[i];
}

static void map_del(struct map *m, struct map_ent *e)
{
	size_t mask = m->cap - 1, i = (size_t)(e - m->e), j = i;

	/* backward shift: pull later entries of the run into the hole they could occupy */
	for (;;) {
		size_t home;

		j = (j + 1) & mask;
		if (!m->e[j].used)
			break;
		home = map_hash(m->e[j].a, m->e[j].b) & mask;
		/* j's entry may move to i when its home is not in (i, j] cyclically */
		if (i <= j ? (home <= i || home > j) : (home <= i && home > j)) {
			m->e[i] = m->e[j];
			i = j;
		}
	}
	m->e[i].used = 0;
	m->n--;
}

static void map_free(struct map *m)
{
	free(m->e);
	m->e = NULL;
	m->cap = m->n = 0;
}

/* ---- arrays ---- */

/* Room for n + 1 elements of size `size` in *p (capacity *cap). */
static int grow(void **p, size_t *cap, size_t n, size_t size)
{
	size_t c = *cap ? *cap : 16;
	void *q;

	if (n < *cap)
		return 0;
	while (c <= n)
		c *= 2;
	q = realloc(*p, c * size);
	if (!q)
		return -ENOMEM;
	memset((char *)q + *cap * size, 0, (c - *cap) * size);
	*p = q;
	*cap = c;
	return 0;
}

#define GROW(l, arr, n, cap) grow((void **)&(l)->arr, &(l)->cap, (n), sizeof(*(l)->arr))

static const char *str(const struct gt_live *l, uint32_t id)
{
	return id && id < l->cap_strs ? l->strs[id] : NULL;
}

/* ---- making and freeing ---- */

int gt_live_new(uint64_t start_ns, bool wake, struct gt_live **ret)
{
	struct gt_live *l = calloc(1, sizeof(*l));

	if (!l)
		return -ENOMEM;
	l->start_ns = start_ns;
	l->wake_fd = -1;
	if (wake) {
		l->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (l->wake_fd < 0) {
			int e = -errno;

			free(l);
			return e;
		}
	}
	for (unsigned i = 0; i < 3; i++)
		l->buf[i].s.start_ns = l->buf[i].s.ts_ns = start_ns;
	l->back = 0;
	atomic_init(&l->middle, 1u);
	l->front = 2;
	atomic_init(&l->want, false);
	atomic_init(&l->on, true);
	l->tap.ctx = l;
	*ret = l;
	return 0;
}

void gt_live_free(struct gt_live *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->cap_strs; i++)
		free(l->strs[i]);
	free(l->strs);
	for (size_t i = 0; i < l->ngpus; i++)
		free(l->gpus[i].pending);
	free(l->gpus);
	free(l->devmap);
	free(l->kernels);
	free(l->ranges);
	free(l->kernel_of);
	free(l->range_of);
	free(l->threads);
	free(l->procs);
	map_free(&l->thread_map);
	map_free(&l->proc_map);
	map_free(&l->alloc_map);
	for (unsigned i = 0; i < 3; i++) {
		struct gt_live_snapshot *s = &l->buf[i].s;

		free(s->gpus);
		free(s->kernels);
		free(s->ranges);
		free(s->threads);
		free(s->procs);
	}
	if (l->wake_fd >= 0)
		close(l->wake_fd);
	free(l);
}

/* ---- the drain's side ---- */

static void tap_record(void *ctx, const struct gt_rec_hdr *rec)
{
	gt_live_record(ctx, rec);
}

static void tap_string(void *ctx, uint32_t pid, uint32_t id, const char *s, size_t len)
{
	(void)pid;
	gt_live_string(ctx, id, s, len);
}

static void tap_pass(void *ctx, uint32_t pid, uint64_t ring_dropped)
{
	struct gt_live *l = ctx;

	gt_live_ring_dropped(l, pid, ring_dropped);
	/* relaxed first: most passes find nobody asking, for the price of one load */
	if (atomic_load_explicit(&l->want, memory_order_relaxed))
		gt_live_publish(l, gt_now_ns());
}

const struct gt_drain_tap *gt_live_tap(struct gt_live *l)
{
	l->tap.record = tap_record;
	l->tap.string = tap_string;
	l->tap.pass = tap_pass;
	return &l->tap;
}

void gt_live_string(struct gt_live *l, uint32_t id, const char *s, size_t len)
{
	char *c;

	if (!atomic_load_explicit(&l->on, memory_order_relaxed))
		return;
	l->records++;
	if (id == GT_STRING_NONE)
		return;
	if (id >= l->cap_strs && GROW(l, strs, id, cap_strs) < 0) {
		l->incomplete = true;
		return;
	}
	if (l->strs[id])
		return; /* the first content of an id is the trace's (see drain.c) */
	c = malloc(len + 1);
	if (!c) {
		l->incomplete = true;
		return;
	}
	memcpy(c, s, len);
	c[len] = '\0';
	l->strs[id] = c;
}

/* The GPU that (pid, device_id) names; a new unnamed one if none. -1: out of memory. */
static long gpu_of(struct gt_live *l, uint32_t pid, uint32_t device_id)
{
	struct live_gpu *g;

	if (l->ndevmap && l->devmap[l->last_devmap].pid == pid &&
	    l->devmap[l->last_devmap].device_id == device_id)
		return l->devmap[l->last_devmap].gpu;
	for (size_t i = 0; i < l->ndevmap; i++) {
		if (l->devmap[i].pid == pid && l->devmap[i].device_id == device_id) {
			l->last_devmap = i;
			return l->devmap[i].gpu;
		}
	}
	if (GROW(l, gpus, l->ngpus, cap_gpus) < 0 || GROW(l, devmap, l->ndevmap, cap_devmap) < 0)
		return -1;
	g = &l->gpus[l->ngpus];
	memset(g, 0, sizeof(*g));
	g->pub.pid = pid;
	g->pub.device_id = device_id;
	l->devmap[l->ndevmap++] = (struct devmap){pid, device_id, (uint32_t)l->ngpus};
	return (long)l->ngpus++;
}

static void on_device(struct gt_live *l, const struct gt_rec_device *d)
{
	long gi = -1;
	struct live_gpu *g;

	for (size_t i = 0; i < l->ngpus && gi < 0; i++)
		if (l->gpus[i].named && memcmp(l->gpus[i].pub.uuid, d->uuid, 16) == 0)
			gi = (long)i;
	if (gi >= 0) {
		/* a GPU another process named already: this process's number maps to it */
		bool mapped = false;

		for (size_t i = 0; i < l->ndevmap; i++) {
			if (l->devmap[i].pid == d->hdr.pid &&
			    l->devmap[i].device_id == d->device_id) {
				/* activity before the DEVICE record made an unnamed GPU; from now
				 * on the number goes to the named one */
				l->devmap[i].gpu = (uint32_t)gi;
				mapped = true;
			}
		}
		if (!mapped) {
			if (GROW(l, devmap, l->ndevmap, cap_devmap) < 0) {
				l->incomplete = true;
				return;
			}
			l->devmap[l->ndevmap++] =
			        (struct devmap){d->hdr.pid, d->device_id, (uint32_t)gi};
		}
		return;
	}
	gi = gpu_of(l, d->hdr.pid, d->device_id);
	if (gi < 0) {
		l->incomplete = true;
		return;
	}
	g = &l->gpus[gi];
	if (g->named)
		return; /* the same process named its device twice with two uuids: keep the first */
	g->named = true;
	memcpy(g->pub.uuid, d->uuid, 16);
	g->name_id = d->name_id;
	g->pub.mem_total_bytes = d->global_mem_bytes;
}

static struct live_gpu *gpu(struct gt_live *l, uint32_t pid, uint32_t device_id)
{
	long gi;

	if (l->ndevmap && l->devmap[l->last_devmap].pid == pid &&
	    l->devmap[l->last_devmap].device_id == device_id)
		return &l->gpus[l->devmap[l->last_devmap].gpu];
	gi = gpu_of(l, pid, device_id);

	if (gi < 0) {
		l->incomplete = true;
		return NULL;
	}
	return &l->gpus[gi];
}

static int cmp_interval(const void *a, const void *b)
{
	const struct interval *x = a, *y = b;

	return x->start_ns < y->start_ns ? -1 : x->start_ns > y->start_ns;
}

/* Fold the pending kernel intervals into busy_ns: their union, once. */
static void fold_busy(struct live_gpu *g)
{
	uint64_t s, e;

	if (!g->npending)
		return;
	/* kernels of one stream arrive in order: most batches need no sort */
	if (g->unsorted)
		qsort(g->pending, g->npending, sizeof(*g->pending), cmp_interval);
	g->unsorted = false;
	s = g->pending[0].start_ns;
	e = g->pending[0].end_ns;
	for (size_t i = 1; i < g->npending; i++) {
		if (g->pending[i].start_ns > e) {
			g->pub.busy_ns += e - s;
			s = g->pending[i].start_ns;
			e = g->pending[i].end_ns;
		} else if (g->pending[i].end_ns > e) {
			e = g->pending[i].end_ns;
		}
	}
	g->pub.busy_ns += e - s;
	g->npending = 0;
}

/* A kernel's interval, for the next fold. */
static void pend(struct gt_live *l, struct live_gpu *g, uint64_t start_ns, uint64_t end_ns)
{
	struct interval *last = g->npending ? &g->pending[g->npending - 1] : NULL;

	if (last && start_ns >= last->start_ns && start_ns <= last->end_ns) {
		/* in order and overlapping the last one: one interval covers both */
		if (end_ns > last->end_ns)
			last->end_ns = end_ns;
		return;
	}
	if (g->npending == LIVE_PENDING_MAX)
		fold_busy(g);
	if (g->npending == g->cap_pending &&
	    grow((void **)&g->pending, &g->cap_pending, g->npending, sizeof(*g->pending)) < 0) {
		l->incomplete = true;
		return;
	}
	g->unsorted |= g->npending && start_ns < g->pending[g->npending - 1].start_ns;
	g->pending[g->npending++] = (struct interval){start_ns, end_ns};
}

static __attribute__((noinline)) void on_kernel(struct gt_live *l, const struct gt_rec_kernel *k)
{
	struct live_gpu *g = gpu(l, k->hdr.pid, k->span.device_id);
	uint64_t dur = k->span.end_ns > k->span.start_ns ? k->span.end_ns - k->span.start_ns : 0;
	uint32_t id = k->name_id;
	struct live_stat *st;

	if (!g)
		return;
	g->pub.kernels++;
	g->pub.kernel_ns += dur;
	if (dur)
		pend(l, g, k->span.start_ns, k->span.end_ns);
	if (id >= l->cap_kernel_of && GROW(l, kernel_of, id, cap_kernel_of) < 0) {
		l->incomplete = true;
		return;
	}
	if (!l->kernel_of[id]) {
		if (GROW(l, kernels, l->nkernels, cap_kernels) < 0) {
			l->incomplete = true;
			return;
		}
		l->kernels[l->nkernels] = (struct live_stat){.name_id = id};
		l->kernel_of[id] = (uint32_t)++l->nkernels;
	}
	st = &l->kernels[l->kernel_of[id] - 1];
	st->count++;
	st->total_ns += dur;
}

static enum gt_live_copy copy_dir(uint32_t kind)
{
	switch (kind) {
	case GT_MEMCPY_HTOD:
	case GT_MEMCPY_HTOA:
		return GT_LIVE_HTOD;
	case GT_MEMCPY_DTOH:
	case GT_MEMCPY_ATOH:
		return GT_LIVE_DTOH;
	case GT_MEMCPY_DTOD:
	case GT_MEMCPY_ATOA:
	case GT_MEMCPY_ATOD:
	case GT_MEMCPY_DTOA:
		return GT_LIVE_DTOD;
	case GT_MEMCPY_PTOP:
		return GT_LIVE_PTOP;
	default:
		return GT_LIVE_COPY_OTHER;
	}
}

static void on_memory(struct gt_live *l, const struct gt_rec_memory *m)
{
	struct map_ent *e;
	struct live_gpu *g;

	/* host memory (pinned, pageable) is no GPU's */
	if (m->mem_kind == GT_MEM_PINNED || m->mem_kind == GT_MEM_PAGEABLE || !m->address)
		return;
	e = map_find(&l->alloc_map, m->hdr.pid, m->address);
	if (e) {
		/* a free, or an alloc whose block's free was lost: retire the old block */
		struct gt_live_gpu *og = &l->gpus[e->w].pub;

		og->mem_bytes -= e->v < og->mem_bytes ? e->v : og->mem_bytes;
		map_del(&l->alloc_map, e);
	}
	if (m->op != GT_MEMORY_ALLOC)
		return;
	g = gpu(l, m->hdr.pid, m->device_id);
	if (!g)
		return;
	e = map_put(&l->alloc_map, m->hdr.pid, m->address);
	if (!e) {
		l->incomplete = true;
		return;
	}
	e->v = m->bytes;
	e->w = (uint32_t)(g - l->gpus);
	g->pub.mem_bytes += m->bytes;
	if (g->pub.mem_bytes > g->pub.mem_peak_bytes)
		g->pub.mem_peak_bytes = g->pub.mem_bytes;
}

static struct live_thread *thread(struct gt_live *l, uint32_t pid, uint32_t tid)
{
	struct map_ent *e;
	struct live_thread *t;

	if (l->nthreads && l->threads[l->last_thread].pid == pid &&
	    l->threads[l->last_thread].tid == tid)
		return &l->threads[l->last_thread];
	e = map_find(&l->thread_map, pid, tid);
	if (e) {
		l->last_thread = e->w;
		return &l->threads[e->w];
	}
	if (GROW(l, threads, l->nthreads, cap_threads) < 0 ||
	    !(e = map_put(&l->thread_map, pid, tid))) {
		l->incomplete = true;
		return NULL;
	}
	t = &l->threads[l->nthreads];
	memset(t, 0, sizeof(*t));
	t->pid = pid;
	t->tid = tid;
	e->w = (uint32_t)l->nthreads++;
	return t;
}

size_t gt_live_stem_len(const char *name, size_t len)
{
	while (len && name[len - 1] >= '0' && name[len - 1] <= '9')
		len--;
	return len;
}

/* Do ranges named a and b count as steps of one kind? */
static bool same_stem(const struct gt_live *l, uint32_t a, uint32_t b)
{
	const char *x = str(l, a), *y = str(l, b);
	size_t nx, ny;

	if (a == b)
		return true;
	if (!x || !y)
		return false;
	nx = gt_live_stem_len(x, strlen(x));
	ny = gt_live_stem_len(y, strlen(y));
	return nx == ny && memcmp(x, y, nx) == 0;
}

static bool within(uint64_t s, uint64_t e, const struct frame *outer)
{
	return outer->known && s >= outer->start_ns && e <= outer->end_ns;
}

/* A push/pop range ended on its thread: the thread's stack and steps. Ranges of a thread end
 * innermost first, so the ranges deeper than this one that are still known are its last
 * descendants, and those above it are still open. */
static void on_range(struct gt_live *l, const struct gt_rec_nvtx *n)
{
	struct live_thread *t = thread(l, n->hdr.pid, n->tid);
	struct frame self = {n->message_id, true, n->start_ns, n->end_ns};
	uint32_t d = n->depth, keep;

	if (!t)
		return;
	if (d < GT_LIVE_STACK_MAX) {
		for (keep = d + 1; keep < t->depth; keep++) {
			const struct frame *parent = keep == d + 1 ? &self : &t->f[keep - 1];

			if (!t->f[keep].known ||
			    !within(t->f[keep].start_ns, t->f[keep].end_ns, parent))
				break;
		}
		for (uint32_t k = 0; k < d; k++)
			if (k >= t->depth || !within(n->start_ns, n->end_ns, &t->f[k]))
				t->f[k].known = false;
		t->f[d] = self;
		t->depth = keep;
	}
	if (d != 0)
		return;
	if (t->step_id && same_stem(l, t->step_id, n->message_id)) {
		t->steps++;
	} else if (!t->step_id && t->cand_id && same_stem(l, t->cand_id, n->message_id)) {
		t->steps = 2;
	} else {
		if (!t->step_id)
			t->cand_id = n->message_id;
		return;
	}
	t->step_id = n->message_id;
	t->step_ns = n->end_ns > n->start_ns ? n->end_ns - n->start_ns : 0;
}

static __attribute__((noinline)) void on_nvtx(struct gt_live *l, const struct gt_rec_nvtx *n)
{
	uint32_t id = n->message_id;
	struct live_stat *st;

	if (n->kind == GT_NVTX_MARK) {
		l->nvtx_marks++;
		return;
	}
	l->nvtx_ranges++;
	if (id >= l->cap_range_of && GROW(l, range_of, id, cap_range_of) < 0) {
		l->incomplete = true;
		return;
	}
	if (!l->range_of[id]) {
		if (GROW(l, ranges, l->nranges, cap_ranges) < 0) {
			l->incomplete = true;
			return;
		}
		l->ranges[l->nranges] = (struct live_stat){.name_id = id};
		l->range_of[id] = (uint32_t)++l->nranges;
	}
	st = &l->ranges[l->range_of[id] - 1];
	st->count++;
	st->total_ns += n->end_ns > n->start_ns ? n->end_ns - n->start_ns : 0;
	if (n->kind == GT_NVTX_PUSH_POP)
		on_range(l, n);
}

static struct live_proc *proc(struct gt_live *l, uint32_t pid)
{
	struct map_ent *e = map_find(&l->proc_map, pid, 0);
	struct live_proc *p;

	if (e)
		return &l->procs[e->w];
	if (GROW(l, procs, l->nprocs, cap_procs) < 0 || !(e = map_put(&l->proc_map, pid, 0))) {
		l->incomplete = true;
		return NULL;
	}
	p = &l->procs[l->nprocs];
	memset(p, 0, sizeof(*p));
	p->pub.pid = pid;
	p->pub.rank = p->pub.local_rank = p->pub.world_size = -1;
	e->w = (uint32_t)l->nprocs++;
	return p;
}

static void on_process_end(struct gt_live *l, const struct gt_rec_process_end *e)
{
	struct live_proc *p = proc(l, e->hdr.pid);

	if (!p)
		return;
	switch (e->how) {
	case GT_END_EXIT:
		p->pub.state = GT_LIVE_EXITED;
		break;
	case GT_END_SIGNAL:
		p->pub.state = GT_LIVE_KILLED;
		break;
	case GT_END_DETACHED:
		p->pub.state = GT_LIVE_DETACHED;
		break;
	default:
		p->pub.state = GT_LIVE_ENDED;
		break;
	}
	p->pub.code = e->code;
	/* its ring's drops are in the LOSS records written just before */
	p->ring_dropped = 0;
}

/* Every record but the three frequent ones (kernels, API calls, NVTX ranges), out of line so
 * that the frequent ones' path stays short. */
static __attribute__((noinline)) void on_other(struct gt_live *l, const union gt_record *r)
{
	struct live_gpu *g;
	struct live_proc *p;
	struct live_thread *t;

	switch (r->hdr.type) {
	case GT_REC_MEMCPY:
		g = gpu(l, r->hdr.pid, r->memcpy.span.device_id);
		if (g) {
			g->pub.copies[copy_dir(r->memcpy.copy_kind)]++;
			g->pub.copy_bytes[copy_dir(r->memcpy.copy_kind)] += r->memcpy.bytes;
		}
		break;
	case GT_REC_MEMSET:
		g = gpu(l, r->hdr.pid, r->memset.span.device_id);
		if (g) {
			g->pub.memsets++;
			g->pub.memset_bytes += r->memset.bytes;
		}
		break;
	case GT_REC_MEMORY:
		on_memory(l, &r->memory);
		break;
	case GT_REC_THREAD:
		t = thread(l, r->hdr.pid, r->thread.tid);
		/* the first name: one the program gave (nvtxNameOsThread) comes before the
		 * collector's later look at the thread's comm */
		if (t && !t->name_id)
			t->name_id = r->thread.name_id;
		break;
	case GT_REC_DEVICE:
		on_device(l, &r->device);
		break;
	case GT_REC_PROCESS:
		p = proc(l, r->hdr.pid);
		if (p) {
			p->pub.ppid = r->process.ppid;
			p->pub.rank = r->process.rank;
			p->pub.local_rank = r->process.local_rank;
			p->pub.world_size = r->process.world_size;
			p->exe_id = r->process.exe_id;
		}
		break;
	case GT_REC_PROCESS_END:
		on_process_end(l, &r->process_end);
		break;
	case GT_REC_LOSS:
		l->lost_written += r->loss.count;
		break;
	default:
		break;
	}
}

void gt_live_record(struct gt_live *l, const struct gt_rec_hdr *rec)
{
	const union gt_record *r = (const union gt_record *)rec;

	if (!atomic_load_explicit(&l->on, memory_order_relaxed))
		return;
	l->records++;
	switch (rec->type) {
	case GT_REC_KERNEL:
		on_kernel(l, &r->kernel);
		break;
	case GT_REC_API:
		l->api_calls++;
		/* 600: cudaErrorNotReady / CUDA_ERROR_NOT_READY, a poll's answer (as stats) */
		if (r->api.return_code != 0 && r->api.return_code != 600) {
			l->api_failed++;
			l->failed_name_id = r->api.name_id;
			l->failed_code = r->api.return_code;
			l->failed_domain = r->api.domain;
		}
		break;
	case GT_REC_NVTX:
		on_nvtx(l, &r->nvtx);
		break;
	default:
		on_other(l, r);
		break;
	}
}

void gt_live_ring_dropped(struct gt_live *l, uint32_t pid, uint64_t ring_dropped)
{
	struct map_ent *e;

	if (!atomic_load_explicit(&l->on, memory_order_relaxed))
		return;
	e = map_find(&l->proc_map, pid, 0);
	if (e)
		l->procs[e->w].ring_dropped = ring_dropped;
}

/* Fill buffer b with the totals; its arrays grow as needed (the reader never holds b). */
static int fill(struct gt_live *l, struct live_buf *b, uint64_t now_ns)
{
	struct gt_live_snapshot *s = &b->s;
	uint64_t lost = l->lost_written;

	if (grow((void **)&s->gpus, &b->cap_gpus, l->ngpus, sizeof(*s->gpus)) < 0 ||
	    grow((void **)&s->kernels, &b->cap_kernels, l->nkernels, sizeof(*s->kernels)) < 0 ||
	    grow((void **)&s->ranges, &b->cap_ranges, l->nranges, sizeof(*s->ranges)) < 0 ||
	    grow((void **)&s->threads, &b->cap_threads, l->nthreads, sizeof(*s->threads)) < 0 ||
	    grow((void **)&s->procs, &b->cap_procs, l->nprocs, sizeof(*s->procs)) < 0)
		return -ENOMEM;
	for (size_t i = 0; i < l->ngpus; i++) {
		fold_busy(&l->gpus[i]);
		s->gpus[i] = l->gpus[i].pub;
		s->gpus[i].name = str(l, l->gpus[i].name_id);
	}
	for (size_t i = 0; i < l->nkernels; i++)
		s->kernels[i] = (struct gt_live_stat){str(l, l->kernels[i].name_id),
		                                      l->kernels[i].count, l->kernels[i].total_ns};
	for (size_t i = 0; i < l->nranges; i++)
		s->ranges[i] = (struct gt_live_stat){str(l, l->ranges[i].name_id),
		                                     l->ranges[i].count, l->ranges[i].total_ns};
	for (size_t i = 0; i < l->nthreads; i++) {
		const struct live_thread *t = &l->threads[i];
		struct gt_live_thread *o = &s->threads[i];

		memset(o, 0, sizeof(*o));
		o->pid = t->pid;
		o->tid = t->tid;
		o->name = str(l, t->name_id);
		o->depth = t->depth;
		for (uint32_t k = 0; k < t->depth; k++)
			o->stack[k] = t->f[k].known ? str(l, t->f[k].name_id) : NULL;
		o->step = t->step_id ? str(l, t->step_id) : NULL;
		o->step_len = o->step ? (uint32_t)gt_live_stem_len(o->step, strlen(o->step)) : 0;
		o->steps = t->steps;
		o->step_ns = t->step_ns;
	}
	for (size_t i = 0; i < l->nprocs; i++) {
		s->procs[i] = l->procs[i].pub;
		s->procs[i].exe = str(l, l->procs[i].exe_id);
		lost += l->procs[i].ring_dropped;
	}
	s->ngpus = l->ngpus;
	s->nkernels = l->nkernels;
	s->nranges = l->nranges;
	s->nthreads = l->nthreads;
	s->nprocs = l->nprocs;
	s->seq = ++l->seq;
	s->start_ns = l->start_ns;
	s->ts_ns = now_ns;
	s->records = l->records;
	s->api_calls = l->api_calls;
	s->api_failed = l->api_failed;
	s->failed_name = l->api_failed ? str(l, l->failed_name_id) : NULL;
	s->failed_code = l->failed_code;
	s->failed_domain = l->failed_domain;
	s->lost = lost;
	s->nvtx_ranges = l->nvtx_ranges;
	s->nvtx_marks = l->nvtx_marks;
	s->incomplete = l->incomplete;
	return 0;
}

int gt_live_publish(struct gt_live *l, uint64_t now_ns)
{
	uint64_t one = 1;
	unsigned prev;
	ssize_t n;

	/* acquire: pairs with the release in gt_live_request */
	if (!atomic_exchange_explicit(&l->want, false, memory_order_acquire))
		return 0;
	if (fill(l, &l->buf[l->back], now_ns) < 0)
		return -ENOMEM;
	/* release: the reader's acquire exchange in gt_live_acquire sees the filled buffer;
	 * acquire: the buffer we get back was released by the reader when it took another */
	prev = atomic_exchange_explicit(&l->middle, l->back | LIVE_FRESH, memory_order_acq_rel);
	l->back = prev & LIVE_INDEX;
	if (l->wake_fd >= 0) {
		n = write(l->wake_fd, &one, sizeof(one));
		(void)n; /* a full eventfd is readable already */
	}
	return 1;
}

/* ---- the reader's side ---- */

void gt_live_request(struct gt_live *l)
{
	/* release: pairs with the acquire exchange in gt_live_publish */
	atomic_store_explicit(&l->want, true, memory_order_release);
}

int gt_live_wake_fd(const struct gt_live *l)
{
	return l->wake_fd;
}

const struct gt_live_snapshot *gt_live_acquire(struct gt_live *l)
{
	if (atomic_load_explicit(&l->middle, memory_order_relaxed) & LIVE_FRESH) {
		/* acquire: pairs with the release exchange in gt_live_publish (the contents);
		 * release: hands our old buffer back, read to the end */
		unsigned prev =
		        atomic_exchange_explicit(&l->middle, l->front, memory_order_acq_rel);

		l->front = prev & LIVE_INDEX;
	}
	return &l->buf[l->front].s;
}

void gt_live_stop(struct gt_live *l)
{
	atomic_store_explicit(&l->on, false, memory_order_relaxed);
}
