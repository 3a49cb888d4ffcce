/* The nvtx-gpu report of `gputrace stats`: GPU time per NVTX range name (nvtx_gpu_proj_sum's
 * columns), each range instance with --instances (nvtx_gpu_proj_trace's), and what the
 * projection saw, through the stats emitter. Runs in the CLI. */
#include <errno.h>
#include <stdlib.h>

#include "nvtx-gpu.h"
#include "stats-int.h"

#define NCOLS(c) (sizeof(c) / sizeof((c)[0]))

static const struct gt_col name_cols[] = {
        {"proj_total_ns", "Total proj", GT_COL_NS},
        {"instances", "Instances", GT_COL_U64},
        {"proj_avg_ns", "Proj avg", GT_COL_NS_F},
        {"proj_median_ns", "Proj med", GT_COL_NS_F},
        {"proj_min_ns", "Proj min", GT_COL_NS},
        {"proj_max_ns", "Proj max", GT_COL_NS},
        {"proj_stddev_ns", "Proj stddev", GT_COL_NS_F},
        {"busy_total_ns", "Total busy", GT_COL_NS},
        {"busy_avg_ns", "Busy avg", GT_COL_NS_F},
        {"busy_median_ns", "Busy med", GT_COL_NS_F},
        {"busy_min_ns", "Busy min", GT_COL_NS},
        {"busy_max_ns", "Busy max", GT_COL_NS},
        {"busy_stddev_ns", "Busy stddev", GT_COL_NS_F},
        {"range_total_ns", "Total range", GT_COL_NS},
        {"gpu_ops", "GPU ops", GT_COL_U64},
        {"style", "Style", GT_COL_STR},
        {"domain", "Domain", GT_COL_STR},
        {"range", "Range", GT_COL_STR},
};

static const struct gt_col instance_cols[] = {
        {"start_ns", "Start", GT_COL_NS},
        {"duration_ns", "Duration", GT_COL_NS},
        {"proj_start_ns", "Proj start", GT_COL_NS},
        {"proj_ns", "Proj", GT_COL_NS},
        {"busy_ns", "Busy", GT_COL_NS},
        {"gpu_ops", "GPU ops", GT_COL_U64},
        {"level", "Lvl", GT_COL_I64},
        {"pid", "PID", GT_COL_U64},
        {"tid", "TID", GT_COL_U64},
        {"style", "Style", GT_COL_STR},
        {"domain", "Domain", GT_COL_STR},
        {"range", "Range", GT_COL_STR},
};

static const struct gt_col total_cols[] = {
        {"ranges", "NVTX ranges", GT_COL_U64},
        {"projected_ranges", "With GPU work", GT_COL_U64},
        {"cross_thread_ranges", "Ended on another thread", GT_COL_U64},
        {"gpu_ops", "GPU ops", GT_COL_U64},
        {"gpu_ops_in_ranges", "Launched in a range", GT_COL_U64},
        {"unmatched_ops", "Launch not found", GT_COL_U64},
        {"late_ops", "Late", GT_COL_U64},
};

static void series_cells(struct gt_cell *c, const struct gt_nvtx_gpu_series *s)
{
	c[0] = gt_cell_d(s->avg_ns);
	c[1] = gt_cell_d(s->median_ns);
	c[2] = gt_cell_u(s->min_ns);
	c[3] = gt_cell_u(s->max_ns);
	c[4] = gt_cell_d(s->stddev_ns);
}

static void name_cells(struct gt_cell *c, const struct gt_nvtx_gpu_name *n)
{
	c[0] = gt_cell_s(n->style == GT_NVTX_START_END ? "StartEnd" : "PushPop");
	/* the default domain has no name: null, as in the nvtx report */
	c[1] = gt_cell_s(n->domain);
	c[2] = gt_cell_s(n->message);
}

static int cmp_start(const void *pa, const void *pb)
{
	const struct gt_nvtx_gpu_instance *a = *(const struct gt_nvtx_gpu_instance *const *)pa;
	const struct gt_nvtx_gpu_instance *b = *(const struct gt_nvtx_gpu_instance *const *)pb;

	if (a->start_ns != b->start_ns)
		return a->start_ns < b->start_ns ? -1 : 1;
	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static uint64_t since(uint64_t t, uint64_t zero_ns)
{
	return t > zero_ns ? t - zero_ns : 0;
}

static int instances(struct gt_emit *e, const struct gt_nvtx_gpu *g, uint64_t zero_ns)
{
	const struct gt_nvtx_gpu_instance **v = malloc((g->ninstances + 1) * sizeof(*v));
	struct gt_cell c[NCOLS(instance_cols)];
	int ret = 0;

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < g->ninstances; i++)
		v[i] = &g->instances[i];
	qsort(v, g->ninstances, sizeof(*v), cmp_start);
	gt_stats_emit_begin(e, "nvtx_gpu_instances", "NVTX range instances projected onto the GPU",
	                    instance_cols, NCOLS(instance_cols), GT_EMIT_LIMITED);
	for (size_t i = 0; i < g->ninstances && ret == 0; i++) {
		const struct gt_nvtx_gpu_instance *x = v[i];

		c[0] = gt_cell_u(since(x->start_ns, zero_ns));
		c[1] = gt_cell_u(gt_stats_span_dur(x->start_ns, x->end_ns));
		c[2] = gt_cell_u(since(x->gpu_start_ns, zero_ns));
		c[3] = gt_cell_u(x->gpu_end_ns - x->gpu_start_ns);
		c[4] = gt_cell_u(x->busy_ns);
		c[5] = gt_cell_u(x->ops);
		c[6] = x->name->style == GT_NVTX_PUSH_POP ? gt_cell_i(x->level) : gt_cell_null();
		c[7] = gt_cell_u(x->pid);
		c[8] = gt_cell_u(x->tid);
		name_cells(c + 9, x->name);
		ret = gt_stats_emit_row(e, c);
	}
	free(v);
	return ret ? ret : gt_stats_emit_end(e, "no NVTX range launched GPU work");
}

int gt_stats_report_nvtx_gpu(struct gt_emit *e, const struct gt_nvtx_gpu *g, bool with_instances,
                             uint64_t zero_ns)
{
	struct gt_cell c[NCOLS(name_cols)];
	int ret = 0;

	gt_stats_emit_begin(e, "nvtx_gpu", "GPU time per NVTX range (projected)", name_cols,
	                    NCOLS(name_cols), GT_EMIT_LIMITED);
	for (size_t i = 0; i < g->nnames && ret == 0; i++) {
		const struct gt_nvtx_gpu_name *n = &g->names[i];

		c[0] = gt_cell_u(n->proj.total_ns);
		c[1] = gt_cell_u(n->instances);
		series_cells(c + 2, &n->proj);
		c[7] = gt_cell_u(n->busy.total_ns);
		series_cells(c + 8, &n->busy);
		c[13] = gt_cell_u(n->range_total_ns);
		c[14] = gt_cell_u(n->ops);
		name_cells(c + 15, n);
		ret = gt_stats_emit_row(e, c);
	}
	if (ret || (ret = gt_stats_emit_end(e, "no NVTX range launched GPU work")))
		return ret;
	if (with_instances && (ret = instances(e, g, zero_ns)))
		return ret;
	gt_stats_emit_begin(e, "nvtx_gpu_totals", "GPU work and NVTX ranges", total_cols,
	                    NCOLS(total_cols), GT_EMIT_SINGLE);
	c[0] = gt_cell_u(g->ranges);
	c[1] = gt_cell_u(g->ninstances);
	c[2] = gt_cell_u(g->cross_thread);
	c[3] = gt_cell_u(g->ops);
	c[4] = gt_cell_u(g->ops_in_ranges);
	c[5] = gt_cell_u(g->ops_unmatched);
	c[6] = gt_cell_u(g->ops_late);
	if ((ret = gt_stats_emit_row(e, c)))
		return ret;
	return gt_stats_emit_end(e, NULL);
}
