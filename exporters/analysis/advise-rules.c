/* The rules of advise over one trace's GPU activities joined to their launch calls: pageable
 * and synchronous copies and memsets, GPU idle time by cause, kernels shorter than their
 * launch, slow steps, memory near capacity. Thresholds and definitions: docs/advise.md. Runs
 * in the CLI. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "advise-int.h"
#include "text.h"

static const char *const copy_kinds[GT_MEMCPY_MAX] = {
        [GT_MEMCPY_UNKNOWN] = "copy", [GT_MEMCPY_HTOD] = "HtoD", [GT_MEMCPY_DTOH] = "DtoH",
        [GT_MEMCPY_HTOA] = "HtoA",    [GT_MEMCPY_ATOH] = "AtoH", [GT_MEMCPY_ATOA] = "AtoA",
        [GT_MEMCPY_ATOD] = "AtoD",    [GT_MEMCPY_DTOA] = "DtoA", [GT_MEMCPY_DTOD] = "DtoD",
        [GT_MEMCPY_HTOH] = "HtoH",    [GT_MEMCPY_PTOP] = "PtoP",
};

static const char *copy_kind(uint32_t k)
{
	return k < GT_MEMCPY_MAX ? copy_kinds[k] : "copy";
}

static uint64_t dur(uint64_t start, uint64_t end)
{
	return end > start ? end - start : 0;
}

/* ---- copies and memsets ------------------------------------------------------------------- */

int adv_rules_copies(struct gt_advise *a, struct adv_trace *t)
{
	char what[160], size[32];

	for (size_t i = 0; i < t->nacts; i++) {
		const struct act *x = &t->acts[i];
		bool called = x->call_end_ns != 0;

		if (x->kind != ACT_MEMCPY && x->kind != ACT_MEMSET)
			continue;
		gt_fmt_bytes((double)x->bytes, size, sizeof(size));
		if (x->flags & ACT_PAGEABLE) {
			/* the copy's own time: staged through a pinned buffer, at a fraction of
			 * the bandwidth, and it holds the host (docs/advise.md) */
			snprintf(what, sizeof(what), "%s %s, pageable host memory",
			         copy_kind(x->copy_kind), size);
			adv_note(a, t, GT_ADVISE_PAGEABLE_MEMCPY, x->start_ns, x->end_ns,
			         dur(x->start_ns, x->end_ns), x->pid, x->gpu, x->stream, x->stack, what);
			((struct adv_priv *)a->priv)->acc[GT_ADVISE_PAGEABLE_MEMCPY].bytes +=
			        x->bytes;
		}
		/* device to device copies do not hold the host (CUDA's "API synchronization
		 * behavior") */
		if ((x->flags & ACT_SYNC) &&
		    !(x->kind == ACT_MEMCPY && x->copy_kind == GT_MEMCPY_DTOD)) {
			unsigned rule = x->kind == ACT_MEMCPY ? GT_ADVISE_SYNC_MEMCPY
			                                      : GT_ADVISE_SYNC_MEMSET;
			uint64_t s = called ? x->call_start_ns : x->start_ns;
			uint64_t e = called ? x->call_end_ns : x->end_ns;

			if (x->kind == ACT_MEMCPY)
				snprintf(what, sizeof(what), "%s %s, the host blocked %s",
				         copy_kind(x->copy_kind), size,
				         called ? "in the call" : "(its call not traced)");
			else
				snprintf(what, sizeof(what), "memset %s, the host blocked %s", size,
				         called ? "in the call" : "(its call not traced)");
			adv_note(a, t, rule, s, e, dur(s, e), x->pid, x->gpu, x->stream, x->stack, what);
			((struct adv_priv *)a->priv)->acc[rule].bytes += x->bytes;
		}
	}
	return 0;
}

/* ---- GPU idle time, by cause -------------------------------------------------------------- */

static int cmp_stream(const void *p, const void *q)
{
	const struct act *a = p, *b = q;

	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	if (a->gpu != b->gpu)
		return a->gpu < b->gpu ? -1 : 1;
	if (a->stream != b->stream)
		return a->stream < b->stream ? -1 : 1;
	return a->start_ns < b->start_ns ? -1 : a->start_ns > b->start_ns;
}

static int cmp_gpu(const void *p, const void *q)
{
	const struct act *a = p, *b = q;

	if (a->gpu != b->gpu)
		return a->gpu < b->gpu ? -1 : 1;
	if (a->start_ns != b->start_ns)
		return a->start_ns < b->start_ns ? -1 : 1;
	return a->end_ns < b->end_ns ? -1 : a->end_ns > b->end_ns;
}

static int cmp_wait(const void *p, const void *q)
{
	const struct wait *a = p, *b = q;

	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	if (a->stream != b->stream)
		return a->stream < b->stream ? -1 : 1;
	return a->ts_ns < b->ts_ns ? -1 : a->ts_ns > b->ts_ns;
}

/* Whether stream (pid, stream) was told to wait on an event in [from, to]. */
static bool waited(const struct adv_trace *t, uint32_t pid, uint32_t stream, uint64_t from,
                   uint64_t to)
{
	size_t lo = 0, hi = t->nwaits;
	struct wait key = {.ts_ns = from, .pid = pid, .stream = stream};

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (cmp_wait(&t->waits[mid], &key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < t->nwaits && t->waits[lo].pid == pid && t->waits[lo].stream == stream &&
	       t->waits[lo].ts_ns <= to;
}

static const char *act_name(const struct gt_advise *a, const struct adv_trace *t,
                            const struct act *x, char *buf, size_t bytes)
{
	switch (x->kind) {
	case ACT_KERNEL:
		return adv_kernel_name(a, t, x->name_id, buf, bytes);
	case ACT_MEMCPY:
		snprintf(buf, bytes, "%s copy", copy_kind(x->copy_kind));
		return buf;
	case ACT_MEMSET:
		return "memset";
	default:
		return "graph launch";
	}
}

/* The gap [g0, g1) of GPU x->gpu before activity x. */
static void gap(struct gt_advise *a, struct adv_trace *t, const struct act *x, uint64_t g0,
                uint64_t g1)
{
	char name[96], what[160];
	uint64_t host_end = g0;

	if (t->have_steps) {
		const struct gt_step *s;

		if (!adv_steady(t, x->pid, x->start_ns, &s))
			return;
		if (g0 < s->start_ns)
			g0 = host_end = s->start_ns;
		if (g0 >= g1)
			return;
	}
	act_name(a, t, x, name, sizeof(name));
	/* the host had not launched it yet: until its launch call returned */
	if (x->call_end_ns > g0) {
		host_end = x->call_end_ns < g1 ? x->call_end_ns : g1;
		snprintf(what, sizeof(what), "before %s", name);
		adv_note(a, t, GT_ADVISE_IDLE_HOST, g0, host_end, host_end - g0, x->pid, x->gpu,
		         x->stream, x->stack, what);
	}
	if (host_end >= g1)
		return;
	snprintf(what, sizeof(what), "before %s", name);
	if (x->call_end_ns && waited(t, x->pid, x->stream, x->prev_call_end_ns, x->call_start_ns))
		adv_note(a, t, GT_ADVISE_IDLE_EVENT, host_end, g1, g1 - host_end, x->pid, x->gpu,
		         x->stream, x->stack, what);
	else
		adv_note(a, t, GT_ADVISE_IDLE_OTHER, host_end, g1, g1 - host_end, x->pid, x->gpu,
		         x->stream, x->stack, what);
}

/* The time of [start, end) that no span of u[0..n) (disjoint, ascending) covers. */
static uint64_t uncovered(const struct span *u, size_t n, uint64_t start, uint64_t end)
{
	size_t lo = 0, hi = n;
	uint64_t left = end - start;

	/* the first span that ends after start */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (u[mid].end_ns <= start)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < n && u[i].start_ns < end; i++) {
		uint64_t s = u[i].start_ns > start ? u[i].start_ns : start;
		uint64_t e = u[i].end_ns < end ? u[i].end_ns : end;
		left -= e - s;
	}
	return left;
}

/* Copies between host and GPU, in the steady state, for the time no kernel of their GPU ran:
 * on a stream of their own, from pinned memory, they could run under the compute. Activities
 * sorted by GPU and start. */
static int copies_exposed(struct gt_advise *a, struct adv_trace *t)
{
	struct span *u = NULL;
	size_t nu = 0, cap = 0;
	char what[160], size[32];

	for (size_t first = 0, last; first < t->nacts; first = last) {
		for (last = first; last < t->nacts && t->acts[last].gpu == t->acts[first].gpu;
		     last++)
			;
		/* the union of this GPU's kernels (and graph launches) */
		nu = 0;
		for (size_t i = first; i < last; i++) {
			const struct act *x = &t->acts[i];

			if (x->kind != ACT_KERNEL && x->kind != ACT_GRAPH)
				continue;
			if (nu && x->start_ns <= u[nu - 1].end_ns) {
				if (x->end_ns > u[nu - 1].end_ns)
					u[nu - 1].end_ns = x->end_ns;
				continue;
			}
			if (nu == cap) {
				size_t c = cap ? 2 * cap : 1024;
				struct span *q = realloc(u, c * sizeof(*u));
				if (!q) {
					free(u);
					return -ENOMEM;
				}
				u = q;
				cap = c;
			}
			u[nu++] = (struct span){x->start_ns, x->end_ns};
		}
		for (size_t i = first; i < last; i++) {
			const struct act *x = &t->acts[i];
			const struct gt_step *s;
			uint64_t left;

			if (x->kind != ACT_MEMCPY ||
			    (x->copy_kind != GT_MEMCPY_HTOD && x->copy_kind != GT_MEMCPY_DTOH) ||
			    !adv_steady(t, x->pid, x->start_ns, &s))
				continue;
			left = uncovered(u, nu, x->start_ns, x->end_ns);
			if (!left)
				continue;
			snprintf(what, sizeof(what), "%s %s, %s of it under no kernel",
			         copy_kind(x->copy_kind),
			         gt_fmt_bytes((double)x->bytes, size, sizeof(size)),
			         left == x->end_ns - x->start_ns ? "all" : "part");
			adv_note(a, t, GT_ADVISE_COPY_EXPOSED, x->start_ns, x->end_ns, left, x->pid,
			         x->gpu, x->stream, x->stack, what);
			((struct adv_priv *)a->priv)->acc[GT_ADVISE_COPY_EXPOSED].bytes += x->bytes;
		}
	}
	free(u);
	return 0;
}

/* ---- small kernels serialized on one stream ------------------------------------------------ */

/* Kernels of one stream that ran one after another with the GPU otherwise empty. */
struct serial_run {
	const struct act *first;
	uint64_t start_ns, end_ns; /* the first's start, the last's end */
	uint64_t sum_ns;           /* their durations */
	double work_ns;            /* durations weighted by the share of SMs their grid used */
	uint64_t longest_ns;
	uint32_t n, max_blocks;
	bool shared; /* another kernel ran on the GPU meanwhile */
};

/* Whether kernel x may be part of a run: a grid smaller than the GPU, outside graphs (whose
 * order the graph sets), in the steady state. */
static bool serial_candidate(const struct adv_trace *t, const struct act *x, uint32_t sm)
{
	const struct gt_step *s;

	return x->kind == ACT_KERNEL && x->blocks && x->blocks < sm &&
	       !(x->flags & ACT_IN_GRAPH) && adv_steady(t, x->pid, x->start_ns, &s);
}

static void serial_close(struct gt_advise *a, struct adv_trace *t, struct serial_run *r,
                         uint32_t sm)
{
	uint64_t packed, cost;
	char name[96], what[160];

	if (!r->first)
		return;
	/* what the run would take with its kernels side by side: as long as its longest
	 * kernel, or as its SM-time spread over every SM, whichever is more */
	packed = (uint64_t)(r->work_ns + 0.5);
	if (packed < r->longest_ns)
		packed = r->longest_ns;
	cost = r->sum_ns > packed ? r->sum_ns - packed : 0;
	if (r->n >= 2 && !r->shared && cost) {
		snprintf(what, sizeof(what), "%u kernels in a row, none on more than %u of %u SMs "
		         "(first: %s)",
		         r->n, r->max_blocks, sm,
		         adv_kernel_name(a, t, r->first->name_id, name, sizeof(name)));
		adv_note(a, t, GT_ADVISE_SERIALIZED, r->start_ns, r->end_ns, cost, r->first->pid,
		         r->first->gpu, r->first->stream, r->first->stack, what);
	}
	r->first = NULL;
}

static void serial_start(struct serial_run *r, const struct act *x, uint64_t busy_other,
                         uint32_t sm)
{
	uint64_t d = x->end_ns - x->start_ns;

	*r = (struct serial_run){
	        .first = x,
	        .start_ns = x->start_ns,
	        .end_ns = x->end_ns,
	        .sum_ns = d,
	        .work_ns = (double)d * x->blocks / sm,
	        .longest_ns = d,
	        .n = 1,
	        .max_blocks = x->blocks,
	        .shared = busy_other > x->start_ns,
	};
}

/* Runs of kernels on one stream, each launched before the one ahead of it ended (the stream's
 * order, not the host, kept them apart), each on fewer thread blocks than the GPU has SMs,
 * with no other kernel on the GPU meanwhile: if they are independent, side by side on
 * several streams they would take the time of the longest, or of their SM-time spread over
 * all SMs; the difference is the cost. Activities sorted by GPU and start. */
static void serialized(struct gt_advise *a, struct adv_trace *t)
{
	for (size_t first = 0, last; first < t->nacts; first = last) {
		uint32_t gpu = t->acts[first].gpu;
		const struct gt_catalog_gpu *g = gpu < t->cat.ngpus ? t->cat.gpus[gpu] : NULL;
		uint32_t sm = g ? g->sm_count : 0;
		struct serial_run r = {0};
		uint64_t busy_other = 0; /* the latest end of a kernel outside the run */

		for (last = first; last < t->nacts && t->acts[last].gpu == gpu; last++)
			;
		if (!sm)
			continue;
		for (size_t i = first; i < last; i++) {
			const struct act *x = &t->acts[i];
			bool compute = x->kind == ACT_KERNEL || x->kind == ACT_GRAPH;
			bool mine = r.first && x->pid == r.first->pid && x->stream == r.first->stream;

			if (mine && serial_candidate(t, x, sm) && x->call_end_ns &&
			    x->call_end_ns <= r.end_ns && x->start_ns >= r.end_ns) {
				uint64_t d = x->end_ns - x->start_ns;

				r.end_ns = x->end_ns;
				r.sum_ns += d;
				r.work_ns += (double)d * x->blocks / sm;
				if (d > r.longest_ns)
					r.longest_ns = d;
				if (x->blocks > r.max_blocks)
					r.max_blocks = x->blocks;
				r.n++;
				r.shared |= busy_other > r.start_ns;
				continue;
			}
			if (r.first && !mine && compute && x->start_ns < r.end_ns)
				r.shared = true;
			if (r.first && (mine || x->start_ns >= r.end_ns)) {
				if (r.end_ns > busy_other)
					busy_other = r.end_ns;
				serial_close(a, t, &r, sm);
			}
			if (!r.first && serial_candidate(t, x, sm)) {
				serial_start(&r, x, busy_other, sm);
				continue;
			}
			if (compute && x->end_ns > busy_other)
				busy_other = x->end_ns;
		}
		serial_close(a, t, &r, sm);
	}
}

int adv_rules_idle(struct gt_advise *a, struct adv_trace *t)
{
	uint64_t busy_end = 0;
	int ret;

	/* each activity learns when the one before it on its stream was launched */
	adv_sort(t->acts, t->nacts, sizeof(*t->acts), cmp_stream);
	for (size_t i = 1; i < t->nacts; i++) {
		struct act *x = &t->acts[i], *p = &t->acts[i - 1];
		if (p->pid == x->pid && p->gpu == x->gpu && p->stream == x->stream)
			x->prev_call_end_ns = p->call_end_ns;
	}
	adv_sort(t->waits, t->nwaits, sizeof(*t->waits), cmp_wait);
	adv_sort(t->acts, t->nacts, sizeof(*t->acts), cmp_gpu);
	for (size_t i = 0; i < t->nacts; i++) {
		const struct act *x = &t->acts[i];

		if (i == 0 || t->acts[i - 1].gpu != x->gpu) {
			busy_end = x->end_ns;
			continue;
		}
		if (x->start_ns > busy_end)
			gap(a, t, x, busy_end, x->start_ns);
		if (x->end_ns > busy_end)
			busy_end = x->end_ns;
	}

	ret = copies_exposed(a, t);
	if (ret < 0)
		return ret;
	serialized(a, t);

	/* kernels that ran shorter than the call that launched them */
	for (size_t i = 0; i < t->nacts; i++) {
		const struct act *x = &t->acts[i];
		uint64_t k = dur(x->start_ns, x->end_ns), c = dur(x->call_start_ns, x->call_end_ns);
		char name[96], what[160], kb[32], cb[32];
		const struct gt_step *s;

		if (x->kind != ACT_KERNEL || (x->flags & ACT_IN_GRAPH) || !x->call_end_ns ||
		    k >= c || !adv_steady(t, x->pid, x->start_ns, &s))
			continue;
		snprintf(what, sizeof(what), "%s: ran %s, its launch took %s",
		         adv_kernel_name(a, t, x->name_id, name, sizeof(name)),
		         gt_fmt_ns((double)k, kb, sizeof(kb)),
		         gt_fmt_ns((double)c, cb, sizeof(cb)));
		adv_note(a, t, GT_ADVISE_SHORT_KERNELS, x->start_ns, x->end_ns, c - k, x->pid,
		         x->gpu, x->stream, x->stack, what);
	}
	return 0;
}

/* ---- steps -------------------------------------------------------------------------------- */

static int cmp_u64(const void *p, const void *q)
{
	uint64_t a = *(const uint64_t *)p, b = *(const uint64_t *)q;

	return a < b ? -1 : a > b;
}

int adv_rules_steps(struct gt_advise *a, struct adv_trace *t)
{
	struct adv_priv *p = a->priv;
	size_t np = t->have_steps ? gt_steps_processes(t->steps) : 0;

	for (size_t i = 0; i < np; i++) {
		uint32_t pid;
		size_t n;
		const struct gt_step *s = gt_steps_at(t->steps, i, &pid, &n);
		uint64_t *d, median;
		char what[160], db[32], mb[32];
		size_t k0 = t->first_step;

		/* the first step warms up (allocations, autotuning, lazy loading): left out, it
		 * would be a finding in every trace (unless a window cut it off) */
		if (n < k0 + 2)
			continue;
		d = malloc((n - k0) * sizeof(*d));
		if (!d)
			return -ENOMEM;
		for (size_t k = k0; k < n; k++)
			d[k - k0] = dur(s[k].start_ns, s[k].end_ns);
		qsort(d, n - k0, sizeof(*d), cmp_u64);
		/* the lower median of an even count: a slow half cannot hide itself */
		median = d[(n - k0 - 1) / 2];
		free(d);
		gt_fmt_ns((double)median, mb, sizeof(mb));
		/* one process: its median; several: each instance names its own */
		snprintf(p->acc[GT_ADVISE_SLOW_STEPS].detail,
		         sizeof(p->acc[GT_ADVISE_SLOW_STEPS].detail), "%s",
		         p->medians++ ? "each step against its process's median" : "");
		if (p->medians == 1)
			snprintf(p->acc[GT_ADVISE_SLOW_STEPS].detail,
			         sizeof(p->acc[GT_ADVISE_SLOW_STEPS].detail), "median step %s", mb);
		for (size_t k = k0; k < n; k++) {
			uint64_t sd = dur(s[k].start_ns, s[k].end_ns);

			if (sd * 100 < median * (100 + GT_ADVISE_SLOW_STEP_PCT) || sd == median)
				continue;
			snprintf(what, sizeof(what), "step %lld took %s, the median %s",
			         (long long)s[k].number, gt_fmt_ns((double)sd, db, sizeof(db)), mb);
			adv_note(a, t, GT_ADVISE_SLOW_STEPS, s[k].start_ns, s[k].end_ns,
			         sd - median, pid, UINT32_MAX, -1, 0, what);
		}
	}
	return 0;
}

/* ---- memory ------------------------------------------------------------------------------- */

static int cmp_mem(const void *p, const void *q)
{
	const struct memev *a = p, *b = q;

	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	return a->ts_ns < b->ts_ns ? -1 : a->ts_ns > b->ts_ns;
}

/* Device memory a process holds at the end of each of its steps after the first: growing at
 * every one of three or more, it leaks or caches without bound. */
static void memory_growth(struct gt_advise *a, struct adv_trace *t)
{
	struct adv_priv *p = a->priv;
	size_t np = t->have_steps ? gt_steps_processes(t->steps) : 0;

	adv_sort(t->mem, t->nmem, sizeof(*t->mem), cmp_mem);
	for (size_t i = 0; i < np; i++) {
		uint32_t pid;
		size_t n, m = 0;
		const struct gt_step *s = gt_steps_at(t->steps, i, &pid, &n);
		uint64_t in_use = 0; /* wraps below 0 on a damaged trace: compared signed */
		int64_t first = 0, prev = 0;
		size_t k0 = t->first_step;
		bool grows = n >= k0 + 3;
		char what[160], b1[32], b2[32], b3[32];

		while (m < t->nmem && t->mem[m].pid < pid)
			m++;
		for (size_t k = 0; k < n && grows; k++) {
			while (m < t->nmem && t->mem[m].pid == pid && t->mem[m].ts_ns < s[k].end_ns)
				in_use += t->mem[m++].delta;
			if (k == k0)
				first = (int64_t)in_use;
			else if (k > k0 && (int64_t)in_use <= prev)
				grows = false;
			prev = (int64_t)in_use;
		}
		if (!grows)
			continue;
		snprintf(what, sizeof(what), "%s more after each of %zu steps: %s, then %s",
		         gt_fmt_bytes((double)((uint64_t)prev - (uint64_t)first) /
		                              (double)(n - k0 - 1),
		                      b1, sizeof(b1)),
		         n - k0 - 1, gt_fmt_bytes((double)first, b2, sizeof(b2)),
		         gt_fmt_bytes((double)prev, b3, sizeof(b3)));
		adv_note(a, t, GT_ADVISE_MEMORY_GROWTH, s[k0].start_ns, s[n - 1].end_ns, 0, pid,
		         UINT32_MAX, -1, 0, what);
		p->acc[GT_ADVISE_MEMORY_GROWTH].bytes += (uint64_t)prev - (uint64_t)first;
	}
}

int adv_rules_memory(struct gt_advise *a, struct adv_trace *t)
{
	struct adv_priv *p = a->priv;

	for (uint32_t i = 0; i < t->cat.ngpus; i++) {
		const struct gt_catalog_gpu *g = t->cat.gpus[i];
		char what[160], pb[32], cb[32];
		uint64_t peak = g->mem_peak > 0 ? (uint64_t)g->mem_peak : 0;
		uint32_t pid;

		if (g->merged_into || !g->global_mem_bytes ||
		    peak * 100 < g->global_mem_bytes * GT_ADVISE_MEMORY_FULL_PCT)
			continue;
		snprintf(what, sizeof(what), "%s in use of %s (%.1f%%)",
		         gt_fmt_bytes((double)peak, pb, sizeof(pb)),
		         gt_fmt_bytes((double)g->global_mem_bytes, cb, sizeof(cb)),
		         100.0 * (double)peak / (double)g->global_mem_bytes);
		pid = g->process < t->cat.nprocs ? t->cat.procs[g->process]->pid : 0;
		adv_note(a, t, GT_ADVISE_MEMORY_FULL, g->mem_peak_ts_ns, g->mem_peak_ts_ns, 0, pid,
		         i, -1, 0, what);
		if (peak > p->acc[GT_ADVISE_MEMORY_FULL].bytes)
			p->acc[GT_ADVISE_MEMORY_FULL].bytes = peak;
	}
	memory_growth(a, t);
	return 0;
}
