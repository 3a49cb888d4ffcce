/* Live aggregates for `gputrace run --live`: totals kept from the records the session's drain
 * writes (its tap), published as snapshots through three buffers so that the drain never
 * waits for the view's thread and the view never sees half an update. What the trace holds -
 * processes, GPUs by uuid, device memory, losses - is the catalog's (exporters/model/catalog.c), as
 * for every other output. The drain's side runs on the CLI's main thread (the session's poll
 * loop); the reader's side on the view's thread. */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "busy.h"
#include "catalog.h"
#include "clock.h"
#include "idmap.h"
#include "live.h"
#include "stats-int.h"

#define LIVE_FRESH 4u /* in `middle`: the buffer there was published, unread */
#define LIVE_INDEX 3u

/* What happened on a GPU, by the catalog's GPU index. */
struct live_gpu {
	uint64_t kernels, kernel_ns;
	struct gt_busy *busy; /* the union of the kernels' intervals; owned, made with the first */
	uint64_t copies[GT_LIVE_COPY_MAX], copy_bytes[GT_LIVE_COPY_MAX];
	uint64_t memsets, memset_bytes;
	/* GPU metrics: 1 + the index of SMs Active, DRAM read and write in the samples (0: not
	 * sampled), their scales, and the latest sample's values */
	uint8_t sm_idx, dram_r_idx, dram_w_idx;
	uint32_t sm_scale, dram_r_scale, dram_w_scale;
	bool metrics;
	double sm_pct, dram_bytes_per_s;
};

struct live_stat {
	uint32_t name_id;
	uint64_t count, total_ns;
	char *label; /* ranges: "NAME#*" for the row of every "NAME#<digits>"; else NULL */
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

/* One of the three snapshot buffers, with the capacity of its arrays. */
struct live_buf {
	struct gt_live_snapshot s;
	size_t cap_gpus, cap_kernels, cap_ranges, cap_threads, cap_procs;
};

struct gt_live {
	/* ---- the drain's side: touched by the drain's thread only ---- */
	uint64_t start_ns;
	struct gt_catalog cat; /* processes, GPUs, device memory, losses */
	char **strs;           /* by global string id; owned, immutable once set */
	size_t cap_strs;
	struct live_gpu *gpus; /* by the catalog's GPU index */
	size_t cap_gpus;
	struct gt_busy_scratch *busy_scratch; /* the GPUs' busy unions merge in it */
	/* the last (pid << 32 | CUDA ordinal) looked up and its GPU index; forgotten at every
	 * record that may change what a device is (all but kernels, API calls, NVTX) */
	uint64_t gpu_key;
	uint32_t gpu_index;
	bool gpu_key_valid;
	uint64_t *ring_dropped; /* by the catalog's process index: drops not in a LOSS record yet */
	size_t cap_ring_dropped;
	struct live_stat *kernels, *ranges;
	size_t nkernels, cap_kernels, nranges, cap_ranges;
	uint32_t *kernel_of, *range_of; /* by string id: index + 1, 0 none */
	size_t cap_kernel_of, cap_range_of;
	/* by string id: ranges counted before their name came (the drainer writes a STRING
	 * after records that use it when producers race); a row once the name is known, which
	 * decides whether it is a NAME#* row */
	struct live_stat *range_unnamed;
	size_t cap_range_unnamed;
	struct live_thread *threads;
	size_t nthreads, cap_threads;
	size_t last_thread;         /* the thread found last */
	struct gt_idmap thread_map; /* (pid, tid) -> index + 1 */
	uint64_t records, api_calls, api_failed, nvtx_ranges, nvtx_marks;
	uint32_t failed_name_id, failed_domain;
	int32_t failed_code;
	bool incomplete;
	uint64_t seq;
	unsigned back; /* the buffer being filled */
	unsigned since_check; /* records since tap_record last looked at `want` */
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
	/* no reader: host names compare by string id, and one session is one host */
	if (gt_catalog_init(&l->cat, NULL) < 0 || gt_idmap_init(&l->thread_map, 64) < 0 ||
	    gt_busy_scratch_new(&l->busy_scratch) < 0) {
		gt_live_free(l);
		return -ENOMEM;
	}
	if (wake) {
		l->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (l->wake_fd < 0) {
			int e = -errno;

			gt_live_free(l);
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
	for (size_t i = 0; i < l->cap_gpus; i++)
		gt_busy_free(l->gpus[i].busy);
	free(l->gpus);
	gt_busy_scratch_free(l->busy_scratch);
	free(l->ring_dropped);
	free(l->kernels);
	for (size_t i = 0; i < l->nranges; i++)
		free(l->ranges[i].label);
	free(l->ranges);
	free(l->kernel_of);
	free(l->range_of);
	free(l->range_unnamed);
	free(l->threads);
	gt_idmap_fini(&l->thread_map);
	gt_catalog_fini(&l->cat);
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

/* A pass lasts as long as its ring has records: under a producer as fast as the drain, that
 * is the whole run. So a publication asked for is also made within a pass, every
 * LIVE_PUBLISH_CHECK records (one relaxed load each time). */
#define LIVE_PUBLISH_CHECK 1024u

static void tap_record(void *ctx, const struct gt_rec_hdr *rec)
{
	struct gt_live *l = ctx;

	gt_live_record(l, rec);
	if (++l->since_check < LIVE_PUBLISH_CHECK)
		return;
	l->since_check = 0;
	if (atomic_load_explicit(&l->want, memory_order_relaxed))
		gt_live_publish(l, gt_now_ns());
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

/* Between passes, and with no process left: what is asked for is published all the same. */
static void tap_idle(void *ctx)
{
	struct gt_live *l = ctx;

	if (atomic_load_explicit(&l->want, memory_order_relaxed))
		gt_live_publish(l, gt_now_ns());
}

const struct gt_drain_tap *gt_live_tap(struct gt_live *l)
{
	l->tap.record = tap_record;
	l->tap.string = tap_string;
	l->tap.pass = tap_pass;
	l->tap.idle = tap_idle;
	return &l->tap;
}

static void range_named(struct gt_live *l, uint32_t id);

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
	if (id < l->cap_range_unnamed && l->range_unnamed[id].count)
		range_named(l, id);
}

/* The activity of the GPU that device_id of pid is (the catalog's, which has seen the record
 * already). NULL: out of memory. */
static struct live_gpu *gpu(struct gt_live *l, uint32_t pid, uint32_t device_id)
{
	uint64_t key = (uint64_t)pid << 32 | device_id;
	struct gt_catalog_gpu *g;

	if (l->gpu_key_valid && l->gpu_key == key)
		return &l->gpus[l->gpu_index];
	g = gt_catalog_gpu(&l->cat, pid, device_id);
	if (!g || (g->index >= l->cap_gpus && GROW(l, gpus, g->index, cap_gpus) < 0)) {
		l->incomplete = true;
		return NULL;
	}
	l->gpu_key = key;
	l->gpu_index = g->index;
	l->gpu_key_valid = true;
	return &l->gpus[g->index];
}

static __attribute__((noinline)) void on_kernel(struct gt_live *l, const struct gt_rec_kernel *k)
{
	struct live_gpu *g = gpu(l, k->hdr.pid, k->span.device_id);
	uint64_t dur = k->span.end_ns > k->span.start_ns ? k->span.end_ns - k->span.start_ns : 0;
	uint32_t id = k->name_id;
	struct live_stat *st;

	if (!g)
		return;
	g->kernels++;
	g->kernel_ns += dur;
	if (dur && ((!g->busy && gt_busy_new(NULL, 0, l->busy_scratch, &g->busy) < 0) ||
	            gt_busy_add(g->busy, k->span.start_ns, k->span.end_ns, GT_BUSY_COMPUTE) < 0))
		l->incomplete = true;
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

static struct live_thread *thread(struct gt_live *l, uint32_t pid, uint32_t tid)
{
	struct live_thread *t;
	uint32_t v;

	if (l->nthreads && l->threads[l->last_thread].pid == pid &&
	    l->threads[l->last_thread].tid == tid)
		return &l->threads[l->last_thread];
	v = gt_idmap_get(&l->thread_map, pid, tid);
	if (v) {
		l->last_thread = v - 1;
		return &l->threads[v - 1];
	}
	if (GROW(l, threads, l->nthreads, cap_threads) < 0 ||
	    gt_idmap_put(&l->thread_map, pid, tid, (uint32_t)l->nthreads + 1) < 0) {
		l->incomplete = true;
		return NULL;
	}
	t = &l->threads[l->nthreads];
	memset(t, 0, sizeof(*t));
	t->pid = pid;
	t->tid = tid;
	l->last_thread = l->nthreads++;
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

/* The stem of a numbered range, "NAME#" of "NAME#<digits>" (PyTorch's ProfilerStep#N, one
 * range name per step): its length, or 0 for any other name. */
static size_t numbered_stem(const char *name)
{
	size_t len = name ? strlen(name) : 0, stem = gt_live_stem_len(name, len);

	return stem > 1 && stem < len && name[stem - 1] == '#' ? stem : 0;
}

/* The table row of range name `id`, seen for the first time: every "NAME#<digits>" shares
 * one row, labelled "NAME#*"; other names get their own. -ENOMEM. */
static int range_row(struct gt_live *l, uint32_t id)
{
	const char *name = str(l, id);
	size_t stem = numbered_stem(name);
	char *label = NULL;

	if (stem) {
		for (size_t i = 0; i < l->nranges; i++) {
			const char *lb = l->ranges[i].label;

			if (lb && strlen(lb) == stem + 1 && memcmp(lb, name, stem) == 0) {
				l->range_of[id] = (uint32_t)i + 1;
				return 0;
			}
		}
		label = malloc(stem + 2);
		if (!label)
			return -ENOMEM;
		memcpy(label, name, stem);
		memcpy(label + stem, "*", 2);
	}
	if (GROW(l, ranges, l->nranges, cap_ranges) < 0) {
		free(label);
		return -ENOMEM;
	}
	l->ranges[l->nranges] = (struct live_stat){.name_id = id, .label = label};
	l->range_of[id] = (uint32_t)++l->nranges;
	return 0;
}

/* Range name `id` has just got its content: the ranges counted before it came go to the
 * row the name decides (rows are only ever added: the view's rates go by row index). */
static void range_named(struct gt_live *l, uint32_t id)
{
	struct live_stat *u = &l->range_unnamed[id], *st;

	if (id >= l->cap_range_of && GROW(l, range_of, id, cap_range_of) < 0) {
		l->incomplete = true;
		return;
	}
	if (!l->range_of[id] && range_row(l, id) < 0) {
		l->incomplete = true;
		return;
	}
	st = &l->ranges[l->range_of[id] - 1];
	st->count += u->count;
	st->total_ns += u->total_ns;
	u->count = u->total_ns = 0;
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
	if (!l->range_of[id] && id != GT_STRING_NONE && !str(l, id)) {
		/* the name decides the row: counted aside until it comes (range_named) */
		if (id >= l->cap_range_unnamed &&
		    GROW(l, range_unnamed, id, cap_range_unnamed) < 0) {
			l->incomplete = true;
			return;
		}
		st = &l->range_unnamed[id];
	} else if (!l->range_of[id] && range_row(l, id) < 0) {
		l->incomplete = true;
		return;
	} else {
		st = &l->ranges[l->range_of[id] - 1];
	}
	st->count++;
	st->total_ns += n->end_ns > n->start_ns ? n->end_ns - n->start_ns : 0;
	if (n->kind == GT_NVTX_PUSH_POP)
		on_range(l, n);
}

/* Every record but the three frequent ones (kernels, API calls, NVTX ranges), out of line so
 * that the frequent ones' path stays short. */
static __attribute__((noinline)) void on_other(struct gt_live *l, const union gt_record *r)
{
	struct gt_catalog_process *p;
	struct live_gpu *g;
	struct live_thread *t;

	l->gpu_key_valid = false;
	switch (r->hdr.type) {
	case GT_REC_MEMCPY:
		g = gpu(l, r->hdr.pid, r->memcpy.span.device_id);
		if (g) {
			g->copies[copy_dir(r->memcpy.copy_kind)]++;
			g->copy_bytes[copy_dir(r->memcpy.copy_kind)] += r->memcpy.bytes;
		}
		break;
	case GT_REC_MEMSET:
		g = gpu(l, r->hdr.pid, r->memset.span.device_id);
		if (g) {
			g->memsets++;
			g->memset_bytes += r->memset.bytes;
		}
		break;
	case GT_REC_THREAD:
		t = thread(l, r->hdr.pid, r->thread.tid);
		/* the first name: one the program gave (nvtxNameOsThread) comes before the
		 * collector's later look at the thread's comm */
		if (t && !t->name_id)
			t->name_id = r->thread.name_id;
		break;
	case GT_REC_GPU_METRIC: {
		const struct gt_rec_gpu_metric *m = &r->gpu_metric;
		const char *name = str(l, m->name_id);
		uint32_t scale = m->scale ? m->scale : 1;

		g = gpu(l, r->hdr.pid, m->device_id);
		if (!g || !name || m->index >= GT_GPU_METRICS_MAX)
			break;
		if (strcmp(name, "SMs Active") == 0) {
			g->sm_idx = (uint8_t)(m->index + 1);
			g->sm_scale = scale;
		} else if (strcmp(name, "DRAM Read Bandwidth") == 0) {
			g->dram_r_idx = (uint8_t)(m->index + 1);
			g->dram_r_scale = scale;
		} else if (strcmp(name, "DRAM Write Bandwidth") == 0) {
			g->dram_w_idx = (uint8_t)(m->index + 1);
			g->dram_w_scale = scale;
		}
		break;
	}
	case GT_REC_GPU_SAMPLE: {
		const struct gt_rec_gpu_sample *sm = &r->gpu_sample;

		g = gpu(l, r->hdr.pid, sm->device_id);
		if (!g)
			break;
		g->metrics = true;
		if (g->sm_idx && g->sm_idx <= sm->count)
			g->sm_pct = (double)sm->values[g->sm_idx - 1] / g->sm_scale;
		g->dram_bytes_per_s = 0;
		if (g->dram_r_idx && g->dram_r_idx <= sm->count)
			g->dram_bytes_per_s +=
			        (double)sm->values[g->dram_r_idx - 1] / g->dram_r_scale;
		if (g->dram_w_idx && g->dram_w_idx <= sm->count)
			g->dram_bytes_per_s +=
			        (double)sm->values[g->dram_w_idx - 1] / g->dram_w_scale;
		break;
	}
	case GT_REC_PROCESS_END:
		/* its ring's drops are in the LOSS records written just before */
		p = gt_catalog_process(&l->cat, r->hdr.pid);
		if (p && p->index < l->cap_ring_dropped)
			l->ring_dropped[p->index] = 0;
		break;
	default:
		break; /* processes, devices, memory, losses: the catalog's */
	}
}

void gt_live_record(struct gt_live *l, const struct gt_rec_hdr *rec)
{
	const union gt_record *r = (const union gt_record *)rec;

	if (!atomic_load_explicit(&l->on, memory_order_relaxed))
		return;
	l->records++;
	if (gt_catalog_observe(&l->cat, r) < 0)
		l->incomplete = true;
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
	struct gt_catalog_process *p;

	if (!atomic_load_explicit(&l->on, memory_order_relaxed))
		return;
	p = gt_catalog_process(&l->cat, pid);
	if (!p || (p->index >= l->cap_ring_dropped &&
	           GROW(l, ring_dropped, p->index, cap_ring_dropped) < 0)) {
		l->incomplete = true;
		return;
	}
	l->ring_dropped[p->index] = ring_dropped;
}

static uint32_t state_of(const struct gt_catalog_process *p)
{
	if (!p->ended)
		return GT_LIVE_RUNNING;
	switch (p->end_how) {
	case GT_END_EXIT:
		return GT_LIVE_EXITED;
	case GT_END_SIGNAL:
		return GT_LIVE_KILLED;
	case GT_END_DETACHED:
		return GT_LIVE_DETACHED;
	default:
		return GT_LIVE_ENDED;
	}
}

/* GPU i of the catalog as a row: what the catalog knows and what happened on it. */
static void gpu_row(struct gt_live *l, uint32_t i, struct gt_live_gpu *o)
{
	const struct gt_catalog_gpu *g = l->cat.gpus[i];
	struct live_gpu *a = i < l->cap_gpus ? &l->gpus[i] : NULL;

	memset(o, 0, sizeof(*o));
	memcpy(o->uuid, g->uuid, sizeof(o->uuid));
	o->number = g->number;
	o->merged = g->merged_into != 0;
	o->pid = g->process < l->cat.nprocs ? l->cat.procs[g->process]->pid : 0;
	o->device_id = g->device_id;
	o->name = str(l, g->name_id);
	o->mem_total_bytes = g->global_mem_bytes;
	o->mem_bytes = g->mem_in_use > 0 ? (uint64_t)g->mem_in_use : 0;
	o->mem_peak_bytes = g->mem_peak > 0 ? (uint64_t)g->mem_peak : 0;
	if (!a)
		return;
	if (a->busy && gt_busy_fold(a->busy) < 0)
		l->incomplete = true;
	o->kernels = a->kernels;
	o->kernel_ns = a->kernel_ns;
	o->busy_ns = a->busy ? gt_busy_any_ns(gt_busy_totals(a->busy)) : 0;
	memcpy(o->copies, a->copies, sizeof(o->copies));
	memcpy(o->copy_bytes, a->copy_bytes, sizeof(o->copy_bytes));
	o->memsets = a->memsets;
	o->memset_bytes = a->memset_bytes;
	o->metrics = a->metrics;
	o->sm_active_pct = a->sm_pct;
	o->dram_bytes_per_s = a->dram_bytes_per_s;
}

/* A GPU seen before its process's DEVICE record said which it was: its activity shows in the
 * GPU it turned out to be (the catalog folds it the same way). */
static void fold_merged(struct gt_live *l, struct gt_live_gpu *rows)
{
	for (uint32_t i = 0; i < l->cat.ngpus; i++) {
		const struct gt_catalog_gpu *f = gt_catalog_gpu_final(&l->cat, l->cat.gpus[i]);
		struct gt_live_gpu *from = &rows[i], *to = &rows[f->index];

		if (f->index == i)
			continue;
		to->kernels += from->kernels;
		to->kernel_ns += from->kernel_ns;
		to->busy_ns += from->busy_ns;
		for (unsigned c = 0; c < GT_LIVE_COPY_MAX; c++) {
			to->copies[c] += from->copies[c];
			to->copy_bytes[c] += from->copy_bytes[c];
		}
		to->memsets += from->memsets;
		to->memset_bytes += from->memset_bytes;
	}
}

/* Fill buffer b with the totals; its arrays grow as needed (the reader never holds b). */
static int fill(struct gt_live *l, struct live_buf *b, uint64_t now_ns)
{
	struct gt_live_snapshot *s = &b->s;
	uint64_t lost = gt_catalog_lost_total(&l->cat);

	if (grow((void **)&s->gpus, &b->cap_gpus, l->cat.ngpus, sizeof(*s->gpus)) < 0 ||
	    grow((void **)&s->kernels, &b->cap_kernels, l->nkernels, sizeof(*s->kernels)) < 0 ||
	    grow((void **)&s->ranges, &b->cap_ranges, l->nranges, sizeof(*s->ranges)) < 0 ||
	    grow((void **)&s->threads, &b->cap_threads, l->nthreads, sizeof(*s->threads)) < 0 ||
	    grow((void **)&s->procs, &b->cap_procs, l->cat.nprocs, sizeof(*s->procs)) < 0)
		return -ENOMEM;
	for (uint32_t i = 0; i < l->cat.ngpus; i++)
		gpu_row(l, i, &s->gpus[i]);
	fold_merged(l, s->gpus);
	for (size_t i = 0; i < l->nkernels; i++)
		s->kernels[i] = (struct gt_live_stat){str(l, l->kernels[i].name_id),
		                                      l->kernels[i].count, l->kernels[i].total_ns};
	for (size_t i = 0; i < l->nranges; i++)
		s->ranges[i] = (struct gt_live_stat){
		        l->ranges[i].label ? l->ranges[i].label : str(l, l->ranges[i].name_id),
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
	for (uint32_t i = 0; i < l->cat.nprocs; i++) {
		const struct gt_catalog_process *p = l->cat.procs[i];
		struct gt_live_process *o = &s->procs[i];

		o->pid = p->pid;
		o->ppid = p->ppid;
		o->rank = p->rank;
		o->local_rank = p->local_rank;
		o->world_size = p->world_size;
		o->exe = str(l, p->exe_id);
		o->state = state_of(p);
		o->code = p->end_code;
		if (i < l->cap_ring_dropped && !p->ended)
			lost += l->ring_dropped[i];
	}
	s->ngpus = l->cat.ngpus;
	s->nkernels = l->nkernels;
	s->nranges = l->nranges;
	s->nthreads = l->nthreads;
	s->nprocs = l->cat.nprocs;
	s->seq = ++l->seq;
	s->start_ns = l->start_ns;
	s->ts_ns = now_ns;
	s->records = l->records;
	s->api_calls = l->api_calls;
	s->api_failed = l->api_failed;
	s->failed_name = l->api_failed ? str(l, l->failed_name_id) : NULL;
	s->failed_code = l->failed_code;
	s->failed_domain = l->failed_domain;
	s->failed_error =
	        l->api_failed ? gt_stats_error_name(l->failed_domain, l->failed_code) : NULL;
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
