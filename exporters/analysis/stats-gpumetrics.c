/* The GPU metrics sections of stats (docs/gpu-metrics.md): per GPU, the mean and peak of each
 * sampled metric over the run, while kernels ran and per training step; how busy the GPU was
 * beside how active its SMs were then; the notices of what was not sampled. Three passes over
 * the trace of their own (what the samples hold; when kernels ran, at a quarter of the
 * sampling interval; the samples). Runs in the CLI. Memory: a bit per quarter interval of the
 * trace's span per sampled GPU. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gpumetrics.h"
#include "stats-int.h"
#include "steps.h"

#define SUB      4u           /* bits per sampling interval */
#define MAX_BITS (1ull << 32) /* beyond: "while kernels ran" is left out (null) */

struct acc {
	uint64_t n;
	double sum, peak;
};

struct gpu_acc {
	struct acc run[GT_GPU_METRICS_MAX];
	struct acc busy[GT_GPU_METRICS_MAX]; /* samples whose interval saw a kernel */
	struct acc *steps;                   /* nsteps * GT_GPU_METRICS_MAX; owned */
	uint64_t *bits;                      /* a kernel ran in quarter-interval k; owned */
	uint64_t nbits;
	uint64_t res_ns; /* a bit's time: the interval / SUB, >= 1 */
	uint64_t samples, samples_busy;
	int sm_index; /* the metric named "SMs Active"; -1: none */
};

struct gm_stats {
	struct gt_stats *st;
	struct gt_catalog cat;
	struct gt_gm gm;
	struct gpu_acc *acc; /* by catalog GPU index; owned */
	uint32_t nacc;
	struct gt_steps *steps;
	const struct gt_step *step; /* the steps the table shows, *nstep of them */
	size_t nstep;
	struct gt_rec_notice *notices; /* GPU_METRICS warnings, in trace order; owned */
	size_t nnotices, notices_cap;
};

/* A warning that a GPU, or some of its metrics, was not sampled: kept for the notices table
 * (informational ones, another process sampling the GPU, are not). */
static int keep_notice(struct gm_stats *g, const struct gt_rec_notice *n)
{
	if (n->code != GT_NOTICE_GPU_METRICS || n->severity < GT_NOTICE_WARNING)
		return 0;
	if (g->nnotices == g->notices_cap) {
		size_t cap = g->notices_cap ? 2 * g->notices_cap : 8;
		struct gt_rec_notice *p = realloc(g->notices, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		g->notices = p;
		g->notices_cap = cap;
	}
	g->notices[g->nnotices++] = *n;
	return 0;
}

static void acc_add(struct acc *a, double v)
{
	if (!a->n || v > a->peak)
		a->peak = v;
	a->n++;
	a->sum += v;
}

static int pass(struct gm_stats *g, int which)
{
	const union gt_record *rec;
	int ret;

	gt_catalog_fini(&g->cat);
	ret = gt_catalog_init(&g->cat, g->st->r);
	if (ret < 0 || (ret = gt_reader_rewind(g->st->r)) < 0)
		return ret;
	while ((ret = gt_reader_next(g->st->r, &rec)) > 0) {
		const struct gt_catalog_gpu *cg = NULL;
		struct gt_gm_gpu *mg;
		struct gpu_acc *a;

		if (gt_catalog_observe(&g->cat, rec) < 0)
			return -ENOMEM;
		if (which == 0) {
			if (gt_gm_observe(&g->gm, &g->cat, rec) < 0 ||
			    (g->steps && gt_steps_feed(g->steps, g->st->r, rec) < 0) ||
			    (rec->hdr.type == GT_REC_NOTICE && keep_notice(g, &rec->notice) < 0))
				return -ENOMEM;
			continue;
		}
		if (which == 1 && rec->hdr.type == GT_REC_KERNEL) {
			const struct gt_rec_kernel *k = &rec->kernel;
			uint64_t origin = g->st->first_ns, b0, b1;

			mg = gt_gm_gpu(&g->gm, &g->cat, k->hdr.pid, k->span.device_id, &cg);
			if (!mg || cg->index >= g->nacc || k->span.end_ns <= k->span.start_ns ||
			    k->span.start_ns < origin)
				continue;
			a = &g->acc[cg->index];
			if (!a->bits)
				continue;
			b0 = (k->span.start_ns - origin) / a->res_ns;
			b1 = (k->span.end_ns - 1 - origin) / a->res_ns;
			for (uint64_t b = b0; b <= b1 && b < a->nbits; b++)
				a->bits[b / 64] |= 1ull << (b % 64);
		} else if (which == 2 && rec->hdr.type == GT_REC_GPU_SAMPLE) {
			const struct gt_rec_gpu_sample *s = &rec->gpu_sample;
			uint64_t origin = g->st->first_ns, iv;
			bool busy = false;
			size_t step = SIZE_MAX;

			mg = gt_gm_gpu(&g->gm, &g->cat, s->hdr.pid, s->device_id, &cg);
			if (!mg || cg->index >= g->nacc)
				continue;
			a = &g->acc[cg->index];
			iv = a->res_ns * SUB;
			if (a->bits && s->ts_ns > origin) {
				uint64_t from = s->ts_ns - origin > iv ? s->ts_ns - origin - iv : 0;

				for (uint64_t b = from / a->res_ns;
				     b <= (s->ts_ns - 1 - origin) / a->res_ns && b < a->nbits; b++)
					if (a->bits[b / 64] & (1ull << (b % 64)))
						busy = true;
			}
			for (size_t i = 0; i < g->nstep; i++)
				if (s->ts_ns > g->step[i].start_ns && s->ts_ns <= g->step[i].end_ns)
					step = i;
			a->samples++;
			a->samples_busy += busy;
			for (unsigned i = 0; i < mg->nmetrics; i++) {
				double v;

				if (!gt_gm_value(mg, s, i, &v))
					continue;
				acc_add(&a->run[i], v);
				if (busy)
					acc_add(&a->busy[i], v);
				if (step != SIZE_MAX && a->steps)
					acc_add(&a->steps[step * GT_GPU_METRICS_MAX + i], v);
			}
		}
	}
	return ret;
}

/* After pass 0: an accumulator per sampled GPU, its bits, its steps. */
static int setup(struct gm_stats *g)
{
	uint64_t span = g->st->last_ns > g->st->first_ns ? g->st->last_ns - g->st->first_ns : 0;

	g->nacc = g->gm.cap;
	g->acc = calloc(g->nacc ? g->nacc : 1, sizeof(*g->acc));
	if (!g->acc)
		return -ENOMEM;
	if (g->steps && gt_steps_finish(g->steps) == 0 && gt_steps_processes(g->steps)) {
		uint32_t pid;

		g->step = gt_steps_at(g->steps, 0, &pid, &g->nstep);
	}
	for (uint32_t i = 0; i < g->nacc; i++) {
		struct gt_gm_gpu *mg = g->gm.gpus[i];
		struct gpu_acc *a = &g->acc[i];

		a->sm_index = -1;
		if (!mg)
			continue;
		for (unsigned k = 0; k < mg->nmetrics; k++) {
			const char *n;
			size_t len = 0;

			n = gt_reader_string(g->st->r, mg->m[k].name_id, &len);
			if (n && len == 10 && memcmp(n, "SMs Active", 10) == 0)
				a->sm_index = (int)k;
			if (!a->res_ns && mg->m[k].interval_ns)
				a->res_ns =
				        mg->m[k].interval_ns / SUB ? mg->m[k].interval_ns / SUB : 1;
		}
		if (!a->res_ns)
			a->res_ns = 1;
		a->nbits = span / a->res_ns + 1;
		if (a->nbits <= MAX_BITS) {
			a->bits = calloc((size_t)((a->nbits + 63) / 64), sizeof(uint64_t));
			if (!a->bits)
				return -ENOMEM;
		}
		if (g->nstep) {
			a->steps = calloc(g->nstep * GT_GPU_METRICS_MAX, sizeof(*a->steps));
			if (!a->steps)
				return -ENOMEM;
		}
	}
	return 0;
}

static const struct gt_col metric_cols[] = {
        {"gpu", "GPU", GT_COL_I64},         {"metric", "Metric", GT_COL_STR},
        {"unit", "Unit", GT_COL_STR},       {"scope", "Over", GT_COL_STR},
        {"samples", "Samples", GT_COL_U64}, {"mean", "Mean", GT_COL_PCT},
        {"peak", "Peak", GT_COL_PCT},       {"sampled_by_pid", "Sampled by", GT_COL_U64},
};

static const struct gt_col busy_cols[] = {
        {"gpu", "GPU", GT_COL_I64},
        {"samples", "Samples", GT_COL_U64},
        {"gpu_busy_pct", "GPU busy %", GT_COL_PCT},
        {"sm_active_pct", "SMs active %", GT_COL_PCT},
        {"sm_active_busy_pct", "SMs active while kernels ran %", GT_COL_PCT},
};

static const struct gt_col notice_cols[] = {
        {"pid", "Pid", GT_COL_U64},
        {"reason", "Reason", GT_COL_STR},
        {"message", "Message", GT_COL_TEXT},
};

static int metric_row(struct gt_emit *e, uint32_t number, const char *name, const char *unit,
                      const char *scope, const struct acc *a, uint32_t pid)
{
	struct gt_cell c[8];

	c[0] = gt_cell_i(number);
	c[1] = gt_cell_s(name);
	c[2] = gt_cell_s(unit);
	c[3] = gt_cell_s(scope);
	c[4] = gt_cell_u(a->n);
	c[5] = a->n ? gt_cell_d(a->sum / (double)a->n) : gt_cell_null();
	c[6] = a->n ? gt_cell_d(a->peak) : gt_cell_null();
	c[7] = gt_cell_u(pid);
	return gt_stats_emit_row(e, c);
}

/* GPUs in the order every output lists them: by number. */
static int by_number(const void *x, const void *y)
{
	const struct gt_catalog_gpu *a = *(const struct gt_catalog_gpu *const *)x;
	const struct gt_catalog_gpu *b = *(const struct gt_catalog_gpu *const *)y;

	return a->number < b->number ? -1 : a->number > b->number;
}

static int emit(struct gt_emit *e, struct gm_stats *g)
{
	const struct gt_catalog_gpu **order = calloc(g->nacc ? g->nacc : 1, sizeof(*order));
	uint32_t n = 0;
	int ret = 0;

	if (!order)
		return -ENOMEM;
	for (uint32_t i = 0; i < g->nacc && i < g->cat.ngpus; i++)
		if (g->gm.gpus[i] && g->cat.gpus[i]->index == i && !g->cat.gpus[i]->merged_into)
			order[n++] = g->cat.gpus[i];
	qsort(order, n, sizeof(*order), by_number);
	gt_stats_emit_begin(e, "gpu_metrics", "GPU metrics", metric_cols,
	                    sizeof(metric_cols) / sizeof(metric_cols[0]), 0);
	for (uint32_t k = 0; k < n && ret == 0; k++) {
		const struct gt_catalog_gpu *cg = order[k];
		struct gt_gm_gpu *mg = g->gm.gpus[cg->index];
		struct gpu_acc *a = &g->acc[cg->index];

		for (unsigned i = 0; i < mg->nmetrics && ret == 0; i++) {
			char nb[128], ub[32], scope[48];
			const char *name, *unit;

			if (!mg->m[i].name_id)
				continue;
			name = gt_stats_string(g->st, mg->m[i].name_id, nb, sizeof(nb));
			unit = gt_stats_string(g->st, mg->m[i].unit_id, ub, sizeof(ub));
			ret = metric_row(e, cg->number, name, unit, "run", &a->run[i],
			                 mg->m[i].sampler_pid);
			if (ret == 0 && a->bits)
				ret = metric_row(e, cg->number, name, unit, "kernels running",
				                 &a->busy[i], mg->m[i].sampler_pid);
			for (size_t s = 0; s < g->nstep && a->steps && ret == 0; s++) {
				snprintf(scope, sizeof(scope), "step %lld",
				         (long long)g->step[s].number);
				ret = metric_row(e, cg->number, name, unit, scope,
				                 &a->steps[s * GT_GPU_METRICS_MAX + i],
				                 mg->m[i].sampler_pid);
			}
		}
	}
	if (ret == 0)
		ret = gt_stats_emit_end(e, "no GPU metrics in this trace");
	if (ret == 0)
		gt_stats_emit_begin(e, "gpu_busy", "GPU busy and SMs active", busy_cols,
		                    sizeof(busy_cols) / sizeof(busy_cols[0]), 0);
	for (uint32_t k = 0; k < n && ret == 0; k++) {
		const struct gt_catalog_gpu *cg = order[k];
		struct gpu_acc *a = &g->acc[cg->index];
		struct gt_cell c[5];

		c[0] = gt_cell_i(cg->number);
		c[1] = gt_cell_u(a->samples);
		c[2] = a->bits ? gt_cell_pct(a->samples_busy, a->samples) : gt_cell_null();
		c[3] = a->sm_index >= 0 && a->run[a->sm_index].n
		               ? gt_cell_d(a->run[a->sm_index].sum / (double)a->run[a->sm_index].n)
		               : gt_cell_null();
		c[4] = a->sm_index >= 0 && a->busy[a->sm_index].n
		               ? gt_cell_d(a->busy[a->sm_index].sum /
		                           (double)a->busy[a->sm_index].n)
		               : gt_cell_null();
		ret = gt_stats_emit_row(e, c);
	}
	if (ret == 0)
		ret = gt_stats_emit_end(e, "no GPU metrics in this trace");
	if (ret == 0)
		gt_stats_emit_begin(e, "gpu_metrics_notices", "GPU metrics not sampled (notices)",
		                    notice_cols, sizeof(notice_cols) / sizeof(notice_cols[0]), 0);
	for (size_t i = 0; i < g->nnotices && ret == 0; i++) {
		const struct gt_rec_notice *nt = &g->notices[i];
		char mb[512];
		struct gt_cell c[3];

		c[0] = gt_cell_u(nt->hdr.pid);
		c[1] = gt_cell_s(gt_gpu_metrics_reason_name((unsigned)nt->detail));
		c[2] = gt_cell_s(gt_stats_string(g->st, nt->message_id, mb, sizeof(mb)));
		ret = gt_stats_emit_row(e, c);
	}
	if (ret == 0)
		ret = gt_stats_emit_end(e, "no GPU metrics notices");
	free(order);
	return ret;
}

int gt_stats_report_gpu_metrics(struct gt_emit *e, struct gt_stats *st)
{
	struct gm_stats g = {.st = st};
	int ret;

	gt_gm_init(&g.gm);
	ret = gt_catalog_init(&g.cat, st->r);
	if (ret == 0)
		ret = gt_steps_new(NULL, &g.steps);
	if (ret == 0)
		ret = pass(&g, 0);
	if (ret == 0)
		ret = setup(&g);
	if (ret == 0)
		ret = pass(&g, 1);
	if (ret == 0)
		ret = pass(&g, 2);
	if (ret == 0)
		ret = emit(e, &g);
	for (uint32_t i = 0; i < g.nacc; i++) {
		free(g.acc[i].bits);
		free(g.acc[i].steps);
	}
	free(g.acc);
	free(g.notices);
	gt_steps_free(g.steps);
	gt_gm_fini(&g.gm);
	gt_catalog_fini(&g.cat);
	gt_reader_rewind(st->r);
	return ret;
}

void gt_stats_summary_gpu_metrics(FILE *out, struct gt_stats *st)
{
	struct gm_stats g = {.st = st};
	bool first = true;

	if (!st->cat.records[GT_REC_GPU_METRIC])
		return;
	gt_gm_init(&g.gm);
	if (gt_catalog_init(&g.cat, st->r) == 0 && pass(&g, 0) == 0) {
		for (uint32_t i = 0; i < g.gm.cap && i < g.cat.ngpus; i++) {
			const struct gt_gm_gpu *mg = g.gm.gpus[i];
			const struct gt_catalog_gpu *cg = g.cat.gpus[i];

			if (!mg || !mg->nmetrics || cg->merged_into)
				continue;
			if (first)
				fputs("GPU metrics:\n", out);
			first = false;
			fprintf(out,
			        "  GPU %u: %u metrics sampled by pid %u every %.1f us, %llu "
			        "samples\n",
			        cg->number, mg->nmetrics, mg->m[0].sampler_pid,
			        (double)mg->m[0].interval_ns / 1000.0,
			        (unsigned long long)mg->samples);
		}
	}
	free(g.notices);
	gt_gm_fini(&g.gm);
	gt_catalog_fini(&g.cat);
	gt_reader_rewind(st->r);
}
