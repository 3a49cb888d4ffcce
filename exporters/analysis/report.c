/* gputrace report: read each trace for the page - what it holds, GPU busy time and device
 * memory in use per time bucket and GPU, the top kernels, GPU time per NVTX range - and hand
 * it to stats across ranks (the steps) and advise (the findings). Runs in the CLI. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "demangle.h"
#include "nvtx-gpu.h"
#include "report-int.h"
#include "stats-int.h"

int gt_report_new(const struct gt_report_options *opts, struct gt_report **ret)
{
	struct gt_report *rep = calloc(1, sizeof(*rep));
	struct gt_rankstats_options ro = {0};
	struct gt_advise_options ao = {0};
	int err;

	*ret = NULL;
	if (!rep)
		return -ENOMEM;
	if (opts)
		rep->opts = *opts;
	ro.by = GT_RANKSTATS_BY_RANK;
	ro.min_lag_pct = GT_RANKSTATS_MIN_LAG_PCT;
	ro.mangled = rep->opts.mangled;
	ro.step_name = rep->opts.step_name;
	ao.step_name = rep->opts.step_name;
	ao.mangled = rep->opts.mangled;
	ao.all_steps = rep->opts.all_steps;
	err = gt_rankstats_new(&ro, &rep->rs);
	if (err == 0)
		err = gt_advise_new(&ao, &rep->adv);
	if (err == 0)
		err = gt_busy_scratch_new(&rep->scratch);
	if (err < 0) {
		gt_report_free(rep);
		return err;
	}
	*ret = rep;
	return 0;
}

static void names_free(struct rep_name *v, size_t n)
{
	for (size_t i = 0; v && i < n; i++) {
		free(v[i].name);
		free(v[i].label);
	}
	free(v);
}

static void gpus_free(struct rep_gpu *g, size_t n)
{
	for (size_t i = 0; g && i < n; i++) {
		gt_busy_free(g[i].busy);
		free(g[i].win);
		free(g[i].mem);
		free(g[i].mem_seen);
	}
	free(g);
}

void gt_report_free(struct gt_report *rep)
{
	if (!rep)
		return;
	for (size_t i = 0; i < rep->ntraces; i++) {
		struct rep_trace *t = &rep->traces[i];

		free(t->name);
		gpus_free(t->gpus, t->ngpu_rows);
		names_free(t->top_kernels, t->ntop_kernels);
		names_free(t->top_nvtx, t->ntop_nvtx);
	}
	free(rep->traces);
	gt_rankstats_free(rep->rs);
	gt_advise_free(rep->adv);
	gt_busy_scratch_free(rep->scratch);
	free(rep);
}

/* The row of catalog GPU index, created with its buckets. NULL only on -ENOMEM. */
static struct rep_gpu *gpu_row(struct gt_report *rep, struct rep_trace *t, uint32_t index)
{
	struct rep_gpu *g;

	if (index >= t->ngpu_rows) {
		size_t n = (size_t)index + 1;

		g = realloc(t->gpus, n * sizeof(*g));
		if (!g)
			return NULL;
		memset(g + t->ngpu_rows, 0, (n - t->ngpu_rows) * sizeof(*g));
		t->gpus = g;
		t->ngpu_rows = n;
	}
	g = &t->gpus[index];
	if (g->win)
		return g;
	g->index = index;
	g->win = calloc(t->nbuckets, sizeof(*g->win));
	g->mem = calloc(t->nbuckets, sizeof(*g->mem));
	g->mem_seen = calloc(t->nbuckets, sizeof(*g->mem_seen));
	if (!g->win || !g->mem || !g->mem_seen)
		goto nomem;
	for (uint32_t b = 0; b < t->nbuckets; b++) {
		g->win[b].start_ns = t->plot_from_ns + b * t->bucket_ns;
		g->win[b].end_ns =
		        b + 1 == t->nbuckets ? t->plot_to_ns : g->win[b].start_ns + t->bucket_ns;
	}
	if (gt_busy_new(g->win, t->nbuckets, rep->scratch, &g->busy) < 0)
		goto nomem;
	return g;
nomem:
	free(g->win);
	free(g->mem);
	free(g->mem_seen);
	g->win = NULL;
	g->mem = NULL;
	g->mem_seen = NULL;
	return NULL;
}

static uint32_t bucket_of(const struct rep_trace *t, uint64_t ts)
{
	uint64_t b = ts > t->plot_from_ns ? (ts - t->plot_from_ns) / t->bucket_ns : 0;

	return b < t->nbuckets ? (uint32_t)b : t->nbuckets - 1;
}

static int on_span(struct gt_report *rep, struct rep_trace *t, struct gt_stats *st, uint32_t pid,
                   const struct gt_gpu_span *span, bool buckets)
{
	const struct gt_catalog_gpu *cg;
	struct rep_gpu *g;

	if (!buckets) {
		/* the first pass: the extent of the GPU activity */
		if (span->end_ns > span->start_ns) {
			if (span->start_ns < t->plot_from_ns)
				t->plot_from_ns = span->start_ns;
			if (span->end_ns > t->plot_to_ns)
				t->plot_to_ns = span->end_ns;
		}
		return 0;
	}

	cg = gt_catalog_gpu(&st->cat, pid, span->device_id);
	g = cg ? gpu_row(rep, t, cg->index) : NULL;
	if (!g)
		return -ENOMEM;
	/* every kind as one: the union is the time anything ran */
	return gt_busy_add(g->busy, span->start_ns, span->end_ns, GT_BUSY_COMPUTE);
}

static int on_memory(struct gt_report *rep, struct rep_trace *t, struct gt_stats *st,
                     const struct gt_rec_memory *m)
{
	const struct gt_catalog_gpu *cg;
	struct rep_gpu *g;
	uint32_t b;

	if (m->mem_kind == GT_MEM_PINNED || m->mem_kind == GT_MEM_PAGEABLE)
		return 0;
	if (m->op != GT_MEMORY_ALLOC && m->op != GT_MEMORY_FREE)
		return 0;
	cg = gt_catalog_gpu(&st->cat, m->hdr.pid, m->device_id);
	g = cg ? gpu_row(rep, t, cg->index) : NULL;
	if (!g)
		return -ENOMEM;
	for (size_t i = 0; i < st->nmem; i++) {
		if (st->mem[i].gpu != cg->index)
			continue;
		b = bucket_of(t, m->ts_ns);
		g->mem[b] = st->mem[i].in_use;
		g->mem_seen[b] = true;
		g->has_mem = true;
		if (st->mem[i].in_use > g->mem_peak)
			g->mem_peak = st->mem[i].in_use;
	}
	return 0;
}

/* Pass over r: the stats' aggregates and catalog, the buckets beside them. */
static int read_pass(struct gt_report *rep, struct rep_trace *t, struct gt_reader *r,
                     struct gt_stats *st, bool buckets, const char **errmsg)
{
	const union gt_record *rec;
	int ret = gt_stats_begin(st, r);

	*errmsg = "out of memory while reading the trace";
	if (ret < 0)
		return ret;
	ret = gt_reader_rewind(r);
	if (ret < 0) {
		*errmsg = "cannot rewind the trace";
		return ret;
	}
	while ((ret = gt_reader_next(r, &rec)) > 0) {
		ret = gt_stats_feed(st, rec);
		if (ret == 0) {
			switch (rec->hdr.type) {
			case GT_REC_KERNEL:
				ret = on_span(rep, t, st, rec->hdr.pid, &rec->kernel.span, buckets);
				break;
			case GT_REC_MEMCPY:
				ret = on_span(rep, t, st, rec->hdr.pid, &rec->memcpy.span, buckets);
				break;
			case GT_REC_MEMSET:
				ret = on_span(rep, t, st, rec->hdr.pid, &rec->memset.span, buckets);
				break;
			case GT_REC_GRAPH:
				ret = on_span(rep, t, st, rec->hdr.pid, &rec->graph.span, buckets);
				break;
			case GT_REC_MEMORY:
				ret = buckets ? on_memory(rep, t, st, &rec->memory) : 0;
				break;
			default:
				break;
			}
		}
		if (ret < 0)
			return ret;
	}
	if (ret < 0) {
		*errmsg = "the trace could not be read to the end";
		return ret;
	}
	gt_stats_end(st);
	return 0;
}

static void append(char *buf, size_t size, const char *s)
{
	size_t len = strlen(buf), n = strlen(s);

	if (len && len + 2 < size) {
		memcpy(buf + len, ", ", 2);
		len += 2;
	}
	if (len + n + 1 > size)
		n = size > len + 1 ? size - len - 1 : 0; /* cut: the header's lists are a glance */
	memcpy(buf + len, s, n);
	buf[len + n] = '\0';
}

/* What the catalog says: processes, ranks, hosts, GPUs, losses, damage. */
static void describe(struct rep_trace *t, struct gt_stats *st)
{
	struct gt_catalog *c = &st->cat;
	struct gt_catalog_damage d;
	char buf[256];

	t->nprocs = c->nprocs;
	for (uint32_t i = 0; i < c->nprocs; i++) {
		const struct gt_catalog_process *p = c->procs[i];

		if (p->rank >= 0) {
			snprintf(buf, sizeof(buf), "%d", p->rank);
			append(t->ranks, sizeof(t->ranks), buf);
			t->nranks++;
		}
		if (p->host_id) {
			const char *h = gt_stats_string(st, p->host_id, buf, sizeof(buf));

			if (!strstr(t->hosts, h))
				append(t->hosts, sizeof(t->hosts), h);
		}
	}
	t->ngpus = gt_catalog_gpu_count(c);
	for (size_t i = 0; i < t->ngpu_rows; i++) {
		struct rep_gpu *g = &t->gpus[i];
		const struct gt_catalog_gpu *cg =
		        i < c->ngpus ? gt_catalog_gpu_final(c, c->gpus[i]) : NULL;

		if (!g->win || !cg)
			continue;
		g->number = cg->number;
		g->final = cg->index;
		if (cg->name_id)
			snprintf(g->name, sizeof(g->name), "%s",
			         gt_stats_string(st, cg->name_id, buf, sizeof(buf)));
	}
	gt_catalog_losses_text(c, t->losses, sizeof(t->losses));
	gt_catalog_damage(c, &d);
	if (gt_catalog_damaged(&d))
		gt_catalog_damage_text(&d, t->damage, sizeof(t->damage));
	t->kernels = c->records[GT_REC_KERNEL];
}

/* A GPU that turned out to be another (one uuid, two processes): its buckets added to that
 * one's, each bucket's busy time at most its width. */
static void fold_gpus(struct rep_trace *t)
{
	for (size_t i = 0; i < t->ngpu_rows; i++) {
		struct rep_gpu *g = &t->gpus[i], *to;

		if (!g->win || g->final == g->index || g->final >= t->ngpu_rows)
			continue;
		to = &t->gpus[g->final];
		if (!to->win)
			continue;
		for (uint32_t b = 0; b < t->nbuckets; b++) {
			uint64_t w = to->win[b].end_ns - to->win[b].start_ns;
			uint64_t sum = to->win[b].compute_ns + g->win[b].compute_ns;

			to->win[b].compute_ns = sum < w ? sum : w;
			if (g->mem_seen[b]) {
				to->mem[b] += g->mem[b];
				to->mem_seen[b] = true;
			}
		}
		to->has_mem = to->has_mem || g->has_mem;
		to->mem_peak = to->mem_peak > g->mem_peak ? to->mem_peak : g->mem_peak;
		g->final = UINT32_MAX; /* folded: not drawn */
	}
}

static int top_kernels(struct gt_report *rep, struct rep_trace *t, struct gt_stats *st)
{
	struct gt_stat_entry **v = gt_stats_table_sorted(&st->kernels, 0);
	char buf[1024];
	size_t n;

	if (!v && st->kernels.n)
		return -ENOMEM;
	t->nkernel_names = st->kernels.n;
	for (size_t i = 0; i < st->kernels.n; i++)
		t->kernel_ns += v[i]->time.total;
	n = st->kernels.n < GT_REPORT_TOP ? st->kernels.n : GT_REPORT_TOP;
	t->top_kernels = n ? calloc(n, sizeof(*t->top_kernels)) : NULL;
	if (n && !t->top_kernels) {
		free(v);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		const char *name =
		        rep->opts.mangled ? v[i]->key : gt_demangle(v[i]->key, buf, sizeof(buf));

		t->top_kernels[i].name = strdup(name);
		if (!rep->opts.mangled)
			t->top_kernels[i].label =
			        strdup(gt_demangle_base(v[i]->key, buf, sizeof(buf)));
		if (!t->top_kernels[i].name || (!rep->opts.mangled && !t->top_kernels[i].label)) {
			free(v);
			return -ENOMEM;
		}
		t->ntop_kernels++;
		t->top_kernels[i].count = v[i]->time.count;
		t->top_kernels[i].total_ns = v[i]->time.total;
	}
	free(v);
	return 0;
}

static int top_nvtx(struct rep_trace *t, struct gt_reader *r, const char **errmsg)
{
	struct gt_nvtx_gpu *g = NULL;
	size_t n;
	int ret = gt_nvtx_gpu_collect(r, &g, errmsg);

	if (ret < 0)
		return ret;
	t->nnvtx_names = g->nnames;
	t->nvtx_ranges = g->ranges;
	t->nvtx_ops = g->ops;
	t->nvtx_ops_in_ranges = g->ops_in_ranges;
	n = g->nnames < GT_REPORT_TOP ? g->nnames : GT_REPORT_TOP;
	t->top_nvtx = n ? calloc(n, sizeof(*t->top_nvtx)) : NULL;
	if (n && !t->top_nvtx)
		goto nomem;
	for (size_t i = 0; i < n; i++) {
		const struct gt_nvtx_gpu_name *nm = &g->names[i];
		size_t len = strlen(nm->message) + (nm->domain ? strlen(nm->domain) + 2 : 0) + 1;
		char *s = malloc(len);

		if (!s)
			goto nomem;
		if (nm->domain)
			snprintf(s, len, "%s: %s", nm->domain, nm->message);
		else
			snprintf(s, len, "%s", nm->message);
		t->top_nvtx[i].name = s;
		t->top_nvtx[i].count = nm->instances;
		t->top_nvtx[i].total_ns = nm->proj.total_ns;
		t->top_nvtx[i].busy_ns = nm->busy.total_ns;
		t->ntop_nvtx++;
	}
	gt_nvtx_gpu_free(g);
	return 0;
nomem:
	gt_nvtx_gpu_free(g);
	*errmsg = "out of memory while projecting GPU time onto NVTX ranges";
	return -ENOMEM;
}

int gt_report_add(struct gt_report *rep, struct gt_reader *r, const char *name, const char **errmsg)
{
	struct gt_trace_times tt;
	struct gt_stats st;
	struct rep_trace *t;
	uint64_t len;
	int ret;

	t = realloc(rep->traces, (rep->ntraces + 1) * sizeof(*t));
	if (!t) {
		*errmsg = "out of memory";
		return -ENOMEM;
	}
	rep->traces = t;
	t = &rep->traces[rep->ntraces];
	memset(t, 0, sizeof(*t));
	t->name = strdup(name);
	if (!t->name) {
		*errmsg = "out of memory";
		return -ENOMEM;
	}
	rep->ntraces++;
	ret = gt_reader_times(r, &tt);
	if (ret < 0) {
		*errmsg = "cannot read the trace's time base";
		return ret;
	}
	t->zero_ns = tt.zero_ns;
	t->span_ns = tt.span_ns;

	/* first the extent of the records and of the GPU activity (a window's, when one is
	 * set), then the buckets over the GPU activity */
	t->plot_from_ns = UINT64_MAX;
	ret = read_pass(rep, t, r, &st, false, errmsg);
	t->first_ns = st.first_ns;
	t->last_ns = st.last_ns;
	gt_stats_fini(&st);
	if (ret < 0)
		return ret;
	if (t->first_ns == UINT64_MAX)
		t->first_ns = t->last_ns = t->zero_ns;
	if (t->plot_from_ns >= t->plot_to_ns) {
		t->plot_from_ns = t->first_ns;
		t->plot_to_ns = t->last_ns;
	}
	if (t->plot_to_ns <= t->plot_from_ns) {
		t->plot_to_ns = t->plot_from_ns;
		t->nbuckets = 1;
		t->bucket_ns = 1;
	} else {
		len = t->plot_to_ns - t->plot_from_ns;
		t->nbuckets = len < GT_REPORT_BUCKETS ? (uint32_t)len : GT_REPORT_BUCKETS;
		t->bucket_ns = (len + t->nbuckets - 1) / t->nbuckets;
		/* the last bucket ends at plot_to_ns: no bucket may start after it */
		while ((uint64_t)(t->nbuckets - 1) * t->bucket_ns >= len)
			t->nbuckets--;
	}
	ret = read_pass(rep, t, r, &st, true, errmsg);
	for (size_t i = 0; ret == 0 && i < t->ngpu_rows; i++)
		if (t->gpus[i].busy && gt_busy_finish(t->gpus[i].busy) < 0) {
			*errmsg = "out of memory while summing GPU busy time";
			ret = -ENOMEM;
		}
	if (ret == 0) {
		describe(t, &st);
		fold_gpus(t);
		ret = top_kernels(rep, t, &st);
		if (ret < 0)
			*errmsg = "out of memory while summing kernels";
	}
	gt_stats_fini(&st);
	if (ret == 0)
		ret = top_nvtx(t, r, errmsg);
	if (ret == 0)
		ret = gt_rankstats_add(rep->rs, r, name, errmsg);
	if (ret == 0)
		ret = gt_advise_add(rep->adv, r, name, errmsg);
	return ret;
}

int gt_report_finish(struct gt_report *rep)
{
	int ret = gt_rankstats_finish(rep->rs);

	return ret < 0 ? ret : gt_advise_finish(rep->adv);
}

size_t gt_report_steps(const struct gt_report *rep)
{
	size_t n = 0;

	for (size_t i = 0; i < rep->rs->ngroups; i++)
		n += rep->rs->groups[i]->nsteps;
	return n;
}
