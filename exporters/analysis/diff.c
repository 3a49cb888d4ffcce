/* `gputrace diff`, the comparing side: each trace's aggregates (stats-collect.c) and steps
 * (steps.c) from one pass, folded into one table of display names per side; the two tables
 * joined, ordered, and the CI gate evaluated. Runs in the CLI; memory grows with distinct
 * names (one histogram each, docs/stats.md) and steps. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "demangle.h"
#include "diff.h"
#include "steps.h"

struct diff_priv {
	struct gt_stat_table names[GT_DIFF_SIDE_MAX]; /* (display name, category) -> series */
	struct gt_diff_row *rows;                     /* all of them, for the three lists */
	char *metric;                                 /* owned copies of the options' strings */
	char *step_name;
};

static const char *const category_names[GT_DIFF_CATEGORY_MAX] = {"kernel", "api", "memcpy",
                                                                 "memset", "nvtx"};

const char *gt_diff_category_name(unsigned category)
{
	return category < GT_DIFF_CATEGORY_MAX ? category_names[category] : "unknown";
}

int gt_diff_new(const struct gt_diff_options *opts, struct gt_diff **ret)
{
	static const struct gt_diff_options defaults = {.fail_above_pct = -1};
	struct gt_diff *d;
	struct diff_priv *pv;

	if (!opts)
		opts = &defaults;
	if (opts->format >= GT_STATS_FORMAT_MAX || isnan(opts->fail_above_pct))
		return -EINVAL;
	d = calloc(1, sizeof(*d));
	pv = calloc(1, sizeof(*pv));
	if (!d || !pv) {
		free(d);
		free(pv);
		return -ENOMEM;
	}
	d->priv = pv;
	d->opts = *opts;
	d->opts.metric = NULL;
	d->opts.step_name = NULL;
	if ((opts->metric && !(pv->metric = strdup(opts->metric))) ||
	    (opts->step_name && !(pv->step_name = strdup(opts->step_name)))) {
		gt_diff_free(d);
		return -ENOMEM;
	}
	d->opts.metric = pv->metric;
	d->opts.step_name = pv->step_name;
	*ret = d;
	return 0;
}

void gt_diff_free(struct gt_diff *d)
{
	struct diff_priv *pv;

	if (!d)
		return;
	pv = d->priv;
	for (unsigned s = 0; s < GT_DIFF_SIDE_MAX; s++) {
		free(d->t[s].name);
		free(d->t[s].host);
		free(d->t[s].command);
		gt_stats_table_fini(&pv->names[s]);
	}
	free(pv->rows);
	free(pv->metric);
	free(pv->step_name);
	free(pv);
	free(d);
}

/* ---- one side ---- */

/* Add series s under (name, category) of this side's table. Returns 0 or -ENOMEM. */
static int fold(struct gt_stat_table *t, const char *name, unsigned category,
                const struct gt_series *s)
{
	struct gt_stat_entry *e;

	if (s->count == 0)
		return 0;
	e = gt_stats_table_get(t, name, strlen(name), 0, category);
	return e ? gt_stats_series_merge(&e->time, s) : -ENOMEM;
}

/* The display name of an NVTX message: the message, "[domain] message" in a named domain;
 * the ranges that are this trace's steps as one row, their number replaced by N
 * ("ProfilerStep#N"): the headline times the steps, one row per step would bury the rest. */
static void nvtx_name(const struct gt_diff *d, const struct gt_stat_entry *e, int family, char *buf,
                      size_t bytes)
{
	const char *msg = e->key + e->split + 1;
	size_t len = e->key_len - e->split - 1, cut = len;
	int64_t number;

	if (family && (int)gt_steps_match(d->opts.step_name, msg, len, &number) == family &&
	    number >= 0) {
		while (cut > 0 && msg[cut - 1] >= '0' && msg[cut - 1] <= '9')
			cut--;
	}
	snprintf(buf, bytes, "%s%s%s%.*s%s", e->split ? "[" : "", e->split ? e->key : "",
	         e->split ? "] " : "", (int)cut, msg, cut < len ? "N" : "");
}

/* The stats exporter's tables, by display name: kernels demangled (two mangled names that
 * read the same are one row), NVTX ranges of both styles together, the steps as one. */
static int fold_stats(struct gt_diff *d, struct gt_stat_table *t, const struct gt_stats *st,
                      int family)
{
	char buf[GT_DEMANGLE_BUF_BYTES], nv[2 * GT_STRING_MAX + 8];
	int ret = 0;

	for (size_t i = 0; i < st->kernels.n && ret == 0; i++) {
		const struct gt_stat_entry *e = st->kernels.entries[i];

		ret = fold(t, d->opts.mangled ? e->key : gt_demangle(e->key, buf, sizeof(buf)),
		           GT_DIFF_KERNEL, &e->time);
	}
	for (size_t i = 0; i < st->api.n && ret == 0; i++)
		ret = fold(t, st->api.entries[i]->key, GT_DIFF_API, &st->api.entries[i]->time);
	for (unsigned k = 0; k < GT_MEMCPY_MAX && ret == 0; k++)
		ret = fold(t, gt_memcpy_kind_name(k), GT_DIFF_MEMCPY, &st->memcpy[k].time);
	for (unsigned k = 0; k < GT_MEM_MAX && ret == 0; k++)
		ret = fold(t, gt_mem_kind_name(k), GT_DIFF_MEMSET, &st->memset[k].time);
	for (size_t i = 0; i < st->nvtx.n && ret == 0; i++) {
		nvtx_name(d, st->nvtx.entries[i], family, nv, sizeof(nv));
		ret = fold(t, nv, GT_DIFF_NVTX, &st->nvtx.entries[i]->time);
	}
	return ret;
}

/* One record: how long it kept the GPU busy (summed, not a union). */
static uint64_t gpu_ns(const union gt_record *rec)
{
	switch (rec->hdr.type) {
	case GT_REC_KERNEL:
		return gt_stats_span_dur(rec->kernel.span.start_ns, rec->kernel.span.end_ns);
	case GT_REC_MEMCPY:
		return gt_stats_span_dur(rec->memcpy.span.start_ns, rec->memcpy.span.end_ns);
	case GT_REC_MEMSET:
		return gt_stats_span_dur(rec->memset.span.start_ns, rec->memset.span.end_ns);
	case GT_REC_GRAPH:
		return gt_stats_span_dur(rec->graph.span.start_ns, rec->graph.span.end_ns);
	default:
		return 0;
	}
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* A step number's duration is its slowest process's (the job waits for it); the median and
 * the mean over the numbers. */
struct num_dur {
	int64_t number;
	uint64_t dur;
};

static int num_dur_cmp(const void *a, const void *b)
{
	const struct num_dur *x = a, *y = b;

	if (x->number != y->number)
		return x->number < y->number ? -1 : 1;
	return x->dur > y->dur ? -1 : x->dur < y->dur; /* the longest first */
}

static int step_times(struct gt_diff_totals *t, const struct gt_steps *s)
{
	size_t n = gt_steps_count(s), k = 0, m = 0;
	struct num_dur *v = malloc((n ? n : 1) * sizeof(*v));
	uint64_t *durs = malloc((n ? n : 1) * sizeof(*durs));
	uint64_t sum = 0;
	uint32_t pid;

	if (!v || !durs) {
		free(v);
		free(durs);
		return -ENOMEM;
	}
	for (size_t i = 0; i < gt_steps_processes(s); i++) {
		size_t np;
		const struct gt_step *st = gt_steps_at(s, i, &pid, &np);

		for (size_t j = 0; j < np; j++)
			v[k++] = (struct num_dur){st[j].number, st[j].end_ns - st[j].start_ns};
	}
	if (k)
		qsort(v, k, sizeof(*v), num_dur_cmp);
	for (size_t i = 0; i < k; i++)
		if (i == 0 || v[i].number != v[i - 1].number)
			durs[m++] = v[i].dur;
	if (m) {
		qsort(durs, m, sizeof(*durs), u64_cmp);
		for (size_t i = 0; i < m; i++)
			sum += durs[i];
		t->step_mean_ns = sum / m;
		t->step_median_ns = m % 2 ? durs[m / 2]
		                          : durs[m / 2 - 1] / 2 + durs[m / 2] / 2 +
		                                    (durs[m / 2 - 1] % 2 + durs[m / 2] % 2) / 2;
	}
	t->steps = m;
	free(v);
	free(durs);
	return 0;
}

int gt_diff_add(struct gt_diff *d, unsigned side, struct gt_reader *r, const char *name,
                const char **errmsg)
{
	struct diff_priv *pv = d->priv;
	const struct gt_trace_header *h = gt_reader_header(r);
	struct gt_diff_totals *t;
	struct gt_steps *steps = NULL;
	const union gt_record *rec;
	struct gt_stats st;
	int ret;

	*errmsg = "out of memory while reading the traces";
	if (side >= GT_DIFF_SIDE_MAX || d->have[side]) {
		*errmsg = "that side was read already";
		return -EINVAL;
	}
	t = &d->t[side];
	t->name = strdup(name ? name : "");
	t->host = strdup(h && h->info.hostname ? h->info.hostname : "");
	t->command = strdup(h && h->info.cmdline ? h->info.cmdline : "");
	ret = gt_stats_begin(&st, r);
	if (!t->name || !t->host || !t->command || ret < 0 ||
	    gt_steps_new(d->opts.step_name, &steps) < 0) {
		ret = -ENOMEM;
		goto out;
	}
	ret = gt_reader_rewind(r);
	if (ret < 0) {
		*errmsg = "cannot rewind the trace";
		goto out;
	}
	while ((ret = gt_reader_next(r, &rec)) > 0) {
		t->gpu_ns += gpu_ns(rec);
		if ((ret = gt_stats_feed(&st, rec)) < 0 || (ret = gt_steps_feed(steps, r, rec)) < 0)
			goto out;
	}
	if (ret < 0) {
		*errmsg = "the trace could not be read to the end";
		goto out;
	}
	gt_stats_end(&st);
	if ((ret = gt_steps_finish(steps)) < 0 || (ret = step_times(t, steps)) < 0)
		goto out;
	t->step_family = gt_steps_family(steps);
	if ((ret = fold_stats(d, &pv->names[side], &st, t->step_family)) < 0)
		goto out;
	t->launches = st.cat.records[GT_REC_KERNEL];
	t->api_calls = st.cat.records[GT_REC_API];
	/* a damaged file's chunks, those this read skipped and those the trace records (merge,
	 * --reindex), are chunks, not records */
	t->lost = gt_catalog_lost_records(&st.cat);
	gt_catalog_damage(&st.cat, &t->damage);
	t->recovered = st.status.recovered;
	d->have[side] = true;
out:
	gt_steps_free(steps);
	gt_stats_fini(&st);
	return ret;
}

/* ---- comparing ---- */

static int key_cmp(const struct gt_diff_row *x, const struct gt_diff_row *y)
{
	int c;

	if (x->category != y->category)
		return x->category < y->category ? -1 : 1;
	c = strcmp(x->name, y->name);
	return c;
}

static int changed_cmp(const void *a, const void *b)
{
	const struct gt_diff_row *x = a, *y = b;
	uint64_t dx = x->delta_ns < 0 ? -(uint64_t)x->delta_ns : (uint64_t)x->delta_ns;
	uint64_t dy = y->delta_ns < 0 ? -(uint64_t)y->delta_ns : (uint64_t)y->delta_ns;

	if (dx != dy)
		return dx > dy ? -1 : 1;
	return key_cmp(x, y);
}

/* Appeared and vanished rows: by the total of the side that has them. */
static int total_cmp(const void *a, const void *b)
{
	const struct gt_diff_row *x = a, *y = b;
	uint64_t tx = x->side[0]->total + x->side[1]->total;
	uint64_t ty = y->side[0]->total + y->side[1]->total;

	if (tx != ty)
		return tx > ty ? -1 : 1;
	return key_cmp(x, y);
}

static _Thread_local char gate_err[512];

/* The kernel row whose base name ("k" of "void ns::k<int>(float*)", demangle.h) is m, when
 * exactly one row has it. Returns 0 (*found NULL: none has it), or -ENOENT with *errmsg when
 * several do. */
static int by_base_name(const struct gt_diff *d, const char *m, const struct gt_diff_row **found,
                        const char **errmsg)
{
	const struct gt_diff_row *lists[] = {d->changed, d->appeared, d->vanished};
	const size_t counts[] = {d->nchanged, d->nappeared, d->nvanished};
	const struct gt_diff_row *first = NULL, *second = NULL;
	size_t n = 0, b, e;

	for (size_t l = 0; l < 3; l++) {
		for (size_t i = 0; i < counts[l]; i++) {
			const char *name = lists[l][i].name;

			if (lists[l][i].category != GT_DIFF_KERNEL)
				continue;
			gt_demangle_base_range(name, strlen(name), &b, &e);
			if (e - b != strlen(m) || strncmp(name + b, m, e - b) != 0)
				continue;
			if (n == 0)
				first = &lists[l][i];
			else if (n == 1)
				second = &lists[l][i];
			n++;
		}
	}
	if (n > 1) {
		snprintf(gate_err, sizeof(gate_err),
		         "%zu kernels have the base name %s (e.g. %.180s and %.180s): give the "
		         "whole name",
		         n, m, first->name, second->name);
		*errmsg = gate_err;
		return -ENOENT;
	}
	*found = first;
	return 0;
}

/* The gate's metric on both sides. Returns 0 or -ENOENT with *errmsg. */
static int gate(struct gt_diff *d, const char **errmsg)
{
	struct gt_diff_gate *g = &d->gate;
	const char *m = d->opts.metric ? d->opts.metric : "gpu-time";

	g->enabled = d->opts.fail_above_pct >= 0;
	g->metric = m;
	if (strcmp(m, "gpu-time") == 0) {
		g->base = (double)d->t[GT_DIFF_BASE].gpu_ns;
		g->new_ = (double)d->t[GT_DIFF_NEW].gpu_ns;
	} else if (strcmp(m, "step-time") == 0) {
		if (!d->t[GT_DIFF_BASE].steps || !d->t[GT_DIFF_NEW].steps) {
			*errmsg = !d->t[GT_DIFF_BASE].steps ? "BASE has no steps to time"
			                                    : "NEW has no steps to time";
			return g->enabled ? -ENOENT : 0;
		}
		g->base = (double)d->t[GT_DIFF_BASE].step_median_ns;
		g->new_ = (double)d->t[GT_DIFF_NEW].step_median_ns;
	} else {
		/* a row's name: the first category that has it */
		const struct gt_diff_row *found = NULL;
		const struct gt_diff_row *lists[] = {d->changed, d->appeared, d->vanished};
		const size_t counts[] = {d->nchanged, d->nappeared, d->nvanished};

		for (size_t l = 0; l < 3; l++)
			for (size_t i = 0; i < counts[l]; i++)
				if (strcmp(lists[l][i].name, m) == 0 &&
				    (!found || lists[l][i].category < found->category))
					found = &lists[l][i];
		if (!found) {
			int r = by_base_name(d, m, &found, errmsg);

			if (r < 0)
				return g->enabled ? r : 0;
		}
		if (!found) {
			*errmsg = "no kernel, API function, copy or memset kind or NVTX range of "
			          "either trace has that name";
			return g->enabled ? -ENOENT : 0;
		}
		g->category = found->category;
		g->base = (double)found->side[GT_DIFF_BASE]->total;
		g->new_ = (double)found->side[GT_DIFF_NEW]->total;
	}
	g->change_pct = g->base > 0   ? 100.0 * (g->new_ - g->base) / g->base
	                : g->new_ > 0 ? HUGE_VAL
	                              : 0;
	g->regressed = g->enabled && g->change_pct > d->opts.fail_above_pct;
	return 0;
}

int gt_diff_finish(struct gt_diff *d, const char **errmsg)
{
	struct diff_priv *pv = d->priv;
	struct gt_stat_table *b = &pv->names[GT_DIFF_BASE], *n = &pv->names[GT_DIFF_NEW];
	size_t total, k = 0;

	*errmsg = "out of memory while comparing the traces";
	/* both tables get every name (the side without it an empty series) */
	for (size_t i = 0; i < b->n; i++)
		if (!gt_stats_table_get(n, b->entries[i]->key, b->entries[i]->key_len, 0,
		                        b->entries[i]->tag))
			return -ENOMEM;
	for (size_t i = 0; i < n->n; i++)
		if (!gt_stats_table_get(b, n->entries[i]->key, n->entries[i]->key_len, 0,
		                        n->entries[i]->tag))
			return -ENOMEM;
	total = b->n;
	free(pv->rows);
	pv->rows = calloc(total ? total : 1, sizeof(*pv->rows));
	if (!pv->rows)
		return -ENOMEM;
	for (size_t i = 0; i < total; i++) {
		const struct gt_stat_entry *x = b->entries[i];
		const struct gt_stat_entry *y =
		        gt_stats_table_get(n, x->key, x->key_len, 0, x->tag); /* finds it */

		if (!y)
			return -ENOMEM;
		pv->rows[i] = (struct gt_diff_row){(unsigned)x->tag,
		                                   x->key,
		                                   {&x->time, &y->time},
		                                   (int64_t)(y->time.total - x->time.total)};
	}
	/* changed first, then appeared, then vanished, each contiguous */
	d->nchanged = d->nappeared = d->nvanished = 0;
	for (size_t i = 0; i < total; i++)
		if (pv->rows[i].side[0]->count && pv->rows[i].side[1]->count) {
			struct gt_diff_row t = pv->rows[k];

			pv->rows[k++] = pv->rows[i];
			pv->rows[i] = t;
		}
	d->nchanged = k;
	for (size_t i = k; i < total; i++)
		if (pv->rows[i].side[1]->count) {
			struct gt_diff_row t = pv->rows[k];

			pv->rows[k++] = pv->rows[i];
			pv->rows[i] = t;
		}
	d->nappeared = k - d->nchanged;
	d->nvanished = total - k;
	d->changed = pv->rows;
	d->appeared = pv->rows + d->nchanged;
	d->vanished = d->appeared + d->nappeared;
	qsort(d->changed, d->nchanged, sizeof(*d->changed), changed_cmp);
	qsort(d->appeared, d->nappeared, sizeof(*d->appeared), total_cmp);
	qsort(d->vanished, d->nvanished, sizeof(*d->vanished), total_cmp);
	return gate(d, errmsg);
}
