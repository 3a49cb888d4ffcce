/* Stats across ranks, the writing side: the analysis, the traces read, the GPU time breakdown,
 * the steps compared, the straggler table and the per-name reports split by group, through
 * the stats emitter (table, CSV or JSON). Runs in the CLI. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "demangle.h"
#include "rankstats-int.h"
#include "steps.h"

#define MAXCOLS 32

struct out {
	struct gt_rankstats *rs;
	struct gt_emit *e;
	bool table;
	unsigned by;
	bool multi_host;
	const struct gt_rankstats_group **order; /* active groups, in output order */
	size_t n;
};

/* ---- groups ---- */

/* Output order: ranks ascending, then processes without a rank by host and pid; GPUs by
 * number and uuid; hosts by name. */
static int group_cmp(const void *a, const void *b, void *ctx)
{
	const struct gt_rankstats_group *x = *(const struct gt_rankstats_group *const *)a;
	const struct gt_rankstats_group *y = *(const struct gt_rankstats_group *const *)b;
	const unsigned *by = ctx;
	int c;

	if (*by == GT_RANKSTATS_BY_DEVICE) {
		if (x->gpu != y->gpu)
			return x->gpu < y->gpu ? -1 : 1;
		if ((c = strcmp(x->uuid, y->uuid)))
			return c;
	}
	if (*by == GT_RANKSTATS_BY_RANK && (x->rank >= 0 || y->rank >= 0) && x->rank != y->rank) {
		if (x->rank < 0 || y->rank < 0)
			return x->rank < 0 ? 1 : -1;
		return x->rank < y->rank ? -1 : 1;
	}
	if ((c = strcmp(x->host, y->host)))
		return c;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

static const char *label(const struct out *o, const struct gt_rankstats_group *g, char *buf,
                         size_t bytes)
{
	switch (o->by) {
	case GT_RANKSTATS_BY_RANK:
		if (g->rank >= 0)
			snprintf(buf, bytes, "%" PRId32, g->rank);
		else if (o->multi_host)
			snprintf(buf, bytes, "pid %" PRIu32 " on %s", g->pid, g->host);
		else
			snprintf(buf, bytes, "pid %" PRIu32, g->pid);
		break;
	case GT_RANKSTATS_BY_PROCESS:
		if (o->multi_host)
			snprintf(buf, bytes, "%s:%" PRIu32, g->host, g->pid);
		else
			snprintf(buf, bytes, "%" PRIu32, g->pid);
		break;
	case GT_RANKSTATS_BY_DEVICE:
		if (o->multi_host)
			snprintf(buf, bytes, "GPU %" PRId64 " on %s", g->gpu, g->host);
		else
			snprintf(buf, bytes, "GPU %" PRId64, g->gpu);
		break;
	default:
		snprintf(buf, bytes, "%s", g->host);
		break;
	}
	return buf;
}

static const char *const group_title[GT_RANKSTATS_BY_MAX] = {"Rank", "PID", "GPU", "Host"};

/* The columns that name a group: its label in a table, typed keys in CSV and JSON. prefix
 * ("slowest_") names another group in a row. Returns how many. */
static size_t group_cols(const struct out *o, struct gt_col *c, const char *prefix,
                         const char *title, char (*keys)[32])
{
	static const char *const rank_keys[] = {"rank", "pid", "host"};
	static const char *const proc_keys[] = {"pid", "host", "rank"};
	static const char *const dev_keys[] = {"gpu", "uuid", "host"};
	static const char *const host_keys[] = {"host"};
	static const unsigned rank_types[] = {GT_COL_I64, GT_COL_U64, GT_COL_STR};
	static const unsigned proc_types[] = {GT_COL_U64, GT_COL_STR, GT_COL_I64};
	static const unsigned dev_types[] = {GT_COL_I64, GT_COL_STR, GT_COL_STR};
	static const unsigned host_types[] = {GT_COL_STR};
	const char *const *k;
	const unsigned *t;
	size_t n;

	if (o->table) {
		c[0] = (struct gt_col){"group", title ? title : group_title[o->by], GT_COL_STR};
		return 1;
	}
	switch (o->by) {
	case GT_RANKSTATS_BY_RANK:
		k = rank_keys, t = rank_types, n = 3;
		break;
	case GT_RANKSTATS_BY_PROCESS:
		k = proc_keys, t = proc_types, n = 3;
		break;
	case GT_RANKSTATS_BY_DEVICE:
		k = dev_keys, t = dev_types, n = 3;
		break;
	default:
		k = host_keys, t = host_types, n = 1;
		break;
	}
	for (size_t i = 0; i < n; i++) {
		snprintf(keys[i], sizeof(keys[i]), "%s%s", prefix ? prefix : "", k[i]);
		c[i] = (struct gt_col){keys[i], keys[i], t[i]};
	}
	return n;
}

static size_t group_cells(const struct out *o, const struct gt_rankstats_group *g,
                          struct gt_cell *c, char *buf, size_t bytes)
{
	struct gt_cell rank = g->rank >= 0 ? gt_cell_i(g->rank) : gt_cell_null();

	if (o->table) {
		c[0] = gt_cell_s(label(o, g, buf, bytes));
		return 1;
	}
	switch (o->by) {
	case GT_RANKSTATS_BY_RANK:
		c[0] = rank, c[1] = gt_cell_u(g->pid), c[2] = gt_cell_s(g->host);
		return 3;
	case GT_RANKSTATS_BY_PROCESS:
		c[0] = gt_cell_u(g->pid), c[1] = gt_cell_s(g->host), c[2] = rank;
		return 3;
	case GT_RANKSTATS_BY_DEVICE:
		c[0] = gt_cell_i(g->gpu), c[1] = g->uuid[0] ? gt_cell_s(g->uuid) : gt_cell_null(),
		c[2] = gt_cell_s(g->host);
		return 3;
	default:
		c[0] = gt_cell_s(g->host);
		return 1;
	}
}

/* ---- sections ---- */

static int section_analysis(struct out *o)
{
	static const struct gt_col cols[] = {
	        {"by", "By", GT_COL_STR},
	        {"traces", "Traces", GT_COL_U64},
	        {"groups", "Groups", GT_COL_U64},
	        {"step_family", "Steps found as", GT_COL_STR},
	        {"steps", "Steps", GT_COL_U64},
	        {"gpu_split_across_traces", "A GPU in several traces", GT_COL_BOOL},
	};
	struct gt_rankstats *rs = o->rs;
	struct gt_cell c[6];
	int family = 0;

	for (size_t i = 0; i < rs->ninputs; i++)
		if (rs->inputs[i].step_family && (!family || rs->inputs[i].step_family < family))
			family = rs->inputs[i].step_family;
	gt_stats_emit_begin(o->e, "analysis", "Across ranks", cols, 6, GT_EMIT_SINGLE);
	c[0] = gt_cell_s(gt_rankstats_by_name(o->by));
	c[1] = gt_cell_u(rs->ninputs);
	c[2] = gt_cell_u(o->n);
	c[3] = family ? gt_cell_s(gt_steps_family_name((enum gt_steps_family)family))
	              : gt_cell_null();
	c[4] = gt_cell_u(rs->nsteps);
	c[5] = gt_cell_b(rs->split_gpu);
	gt_stats_emit_row(o->e, c);
	return gt_stats_emit_end(o->e, NULL);
}

static int section_inputs(struct out *o)
{
	static const struct gt_col cols[] = {
	        {"trace", "Trace", GT_COL_STR},
	        {"host", "Host", GT_COL_STR},
	        {"command", "Command", GT_COL_STR},
	        {"gputrace_version", "gputrace", GT_COL_STR},
	        {"span_ns", "Span", GT_COL_NS},
	        {"lost_records", "Lost", GT_COL_U64},
	        {"chunks_skipped", "Chunks skipped", GT_COL_U64},
	        {"recovered", "Recovered", GT_COL_BOOL},
	};
	struct gt_cell c[8];
	int ret = 0;

	gt_stats_emit_begin(o->e, "traces", "Traces", cols, 8, 0);
	for (size_t i = 0; i < o->rs->ninputs && ret == 0; i++) {
		const struct gt_rankstats_input *in = &o->rs->inputs[i];

		c[0] = gt_cell_s(in->name);
		c[1] = gt_cell_s(in->host);
		c[2] = gt_cell_s(in->command);
		c[3] = gt_cell_s(in->version);
		c[4] = gt_cell_u(in->span_ns);
		c[5] = gt_cell_u(in->lost);
		c[6] = gt_cell_u(in->chunks_skipped);
		c[7] = gt_cell_b(in->recovered);
		ret = gt_stats_emit_row(o->e, c);
	}
	return ret ? ret : gt_stats_emit_end(o->e, "no trace");
}

static int section_breakdown(struct out *o)
{
	static const struct gt_col tail[] = {
	        {"gpus", "GPUs", GT_COL_U64},
	        /* each GPU's first to last activity, summed: not the trace's span */
	        {"active_ns", "Active", GT_COL_NS},
	        {"compute_ns", "Compute", GT_COL_NS},
	        {"compute_pct", "%", GT_COL_PCT},
	        {"comm_ns", "Comm (exposed)", GT_COL_NS},
	        {"comm_pct", "%", GT_COL_PCT},
	        {"memory_ns", "Copies only", GT_COL_NS},
	        {"memory_pct", "%", GT_COL_PCT},
	        {"idle_ns", "Idle", GT_COL_NS},
	        {"idle_pct", "%", GT_COL_PCT},
	        {"comm_overlap_pct", "Comm overlapped %", GT_COL_PCT},
	        {"kernels", "Kernels", GT_COL_U64},
	        {"lost_records", "Lost", GT_COL_U64},
	        {"late_ns", "Late", GT_COL_NS},
	};
	const size_t ntail = sizeof(tail) / sizeof(tail[0]);
	struct gt_col cols[MAXCOLS];
	struct gt_cell c[MAXCOLS];
	char keys[4][32], buf[320];
	size_t k = group_cols(o, cols, NULL, NULL, keys);
	int ret = 0;

	memcpy(cols + k, tail, sizeof(tail));
	gt_stats_emit_begin(o->e, "breakdown",
	                    "GPU time (per GPU, from its first to its last activity: compute, else "
	                    "communication, else copies, else idle)",
	                    cols, k + ntail, 0);
	for (size_t i = 0; i < o->n && ret == 0; i++) {
		const struct gt_rankstats_group *g = o->order[i];
		const struct gt_busy_totals *t = &g->busy;
		uint64_t span = t->span_ns, comm = gt_busy_comm_all_ns(t);

		group_cells(o, g, c, buf, sizeof(buf));
		c[k] = gt_cell_u(g->gpus);
		c[k + 1] = gt_cell_u(span);
		c[k + 2] = gt_cell_u(gt_busy_compute_ns(t));
		c[k + 3] = gt_cell_pct(gt_busy_compute_ns(t), span);
		c[k + 4] = gt_cell_u(gt_busy_comm_ns(t));
		c[k + 5] = gt_cell_pct(gt_busy_comm_ns(t), span);
		c[k + 6] = gt_cell_u(gt_busy_memory_ns(t));
		c[k + 7] = gt_cell_pct(gt_busy_memory_ns(t), span);
		c[k + 8] = gt_cell_u(gt_busy_idle_ns(t));
		c[k + 9] = gt_cell_pct(gt_busy_idle_ns(t), span);
		c[k + 10] = gt_cell_pct(gt_busy_overlap_ns(t), comm);
		c[k + 11] = gt_cell_u(g->kernels);
		c[k + 12] = gt_cell_u(g->lost);
		c[k + 13] = gt_cell_u(t->late_ns);
		ret = gt_stats_emit_row(o->e, c);
	}
	return ret ? ret : gt_stats_emit_end(o->e, "no GPU activity in these traces");
}

/* The columns naming the slowest and fastest group of a step. */
static size_t ref_cols(const struct out *o, struct gt_col *c, const char *prefix, const char *title,
                       char (*keys)[32])
{
	if (o->table) {
		c[0] = (struct gt_col){prefix, title, GT_COL_STR};
		return 1;
	}
	/* by rank: rank and pid; by process: pid and host */
	snprintf(keys[0], sizeof(keys[0]), "%s%s", prefix,
	         o->by == GT_RANKSTATS_BY_RANK ? "rank" : "pid");
	snprintf(keys[1], sizeof(keys[1]), "%s%s", prefix,
	         o->by == GT_RANKSTATS_BY_RANK ? "pid" : "host");
	c[0] = (struct gt_col){keys[0], keys[0],
	                       o->by == GT_RANKSTATS_BY_RANK ? GT_COL_I64 : GT_COL_U64};
	c[1] = (struct gt_col){keys[1], keys[1],
	                       o->by == GT_RANKSTATS_BY_RANK ? GT_COL_U64 : GT_COL_STR};
	return 2;
}

static size_t ref_cells(const struct out *o, const struct gt_rankstats_group *g, struct gt_cell *c,
                        char *buf, size_t bytes)
{
	if (o->table) {
		c[0] = gt_cell_s(label(o, g, buf, bytes));
		return 1;
	}
	if (o->by == GT_RANKSTATS_BY_RANK) {
		c[0] = g->rank >= 0 ? gt_cell_i(g->rank) : gt_cell_null();
		c[1] = gt_cell_u(g->pid);
	} else {
		c[0] = gt_cell_u(g->pid);
		c[1] = gt_cell_s(g->host);
	}
	return 2;
}

static int section_steps(struct out *o)
{
	struct gt_col cols[MAXCOLS];
	struct gt_cell c[MAXCOLS];
	char keys[8][32], b1[320], b2[320];
	size_t k = 0, ks, kf;
	int ret = 0;

	cols[k++] = (struct gt_col){"step", "Step", GT_COL_I64};
	cols[k++] = (struct gt_col){"ranks", "Ranks", GT_COL_U64};
	ks = k;
	k += ref_cols(o, cols + k, "slowest_", "Slowest", keys);
	cols[k++] = (struct gt_col){"slowest_compute_ns", "Its compute", GT_COL_NS};
	kf = k;
	k += ref_cols(o, cols + k, "fastest_", "Fastest", keys + 2);
	cols[k++] = (struct gt_col){"fastest_compute_ns", "Its compute", GT_COL_NS};
	cols[k++] = (struct gt_col){"spread_ns", "Spread", GT_COL_NS};
	cols[k++] = (struct gt_col){"lag_ns", "Lag", GT_COL_NS};
	cols[k++] = (struct gt_col){"lag_pct", "Lag %", GT_COL_PCT};
	cols[k++] = (struct gt_col){"straggler", "Straggler", GT_COL_BOOL};
	cols[k++] = (struct gt_col){"min_duration_ns", "Shortest step", GT_COL_NS};
	cols[k++] = (struct gt_col){"max_duration_ns", "Longest step", GT_COL_NS};
	gt_stats_emit_begin(
	        o->e, "steps",
	        "Steps across ranks (slowest: the most compute-kernel time in the step; "
	        "a straggler when the lag is at least the threshold)",
	        cols, k, GT_EMIT_LIMITED);
	for (size_t i = 0; i < o->rs->nsteps && ret == 0; i++) {
		const struct gt_rankstats_step_row *s = &o->rs->steps[i];
		size_t j = 0;

		c[j++] = gt_cell_i(s->number);
		c[j++] = gt_cell_u(s->ranks);
		j = ks + ref_cells(o, o->rs->groups[s->slowest], c + ks, b1, sizeof(b1));
		c[j++] = gt_cell_u(s->slowest_compute_ns);
		j = kf + ref_cells(o, o->rs->groups[s->fastest], c + kf, b2, sizeof(b2));
		c[j++] = gt_cell_u(s->fastest_compute_ns);
		c[j++] = gt_cell_u(s->spread_ns);
		c[j++] = s->ranks >= 2 ? gt_cell_u(s->lag_ns) : gt_cell_null();
		/* infinite when the others did no compute: null */
		c[j++] = s->ranks >= 2 && s->lag_pct < HUGE_VAL ? gt_cell_d(s->lag_pct)
		                                                : gt_cell_null();
		c[j++] = gt_cell_b(s->straggler);
		c[j++] = gt_cell_u(s->dur_min_ns);
		c[j++] = gt_cell_u(s->dur_max_ns);
		ret = gt_stats_emit_row(o->e, c);
	}
	return ret ? ret
	           : gt_stats_emit_end(o->e, "no steps found (NVTX ranges named ProfilerStep#N, "
	                                     "step, train_step or iteration; or --step NAME)");
}

/* One group's step, for the per-rank listing. */
struct step_ref {
	int64_t number;
	uint32_t pos; /* group's position in the output order */
	uint32_t j;   /* index in its steps */
};

static int step_ref_cmp(const void *a, const void *b)
{
	const struct step_ref *x = a, *y = b;

	if (x->number != y->number)
		return x->number < y->number ? -1 : 1;
	if (x->pos != y->pos)
		return x->pos < y->pos ? -1 : 1;
	return x->j < y->j ? -1 : x->j > y->j;
}

static int section_step_ranks(struct out *o)
{
	struct gt_col cols[MAXCOLS];
	struct gt_cell c[MAXCOLS];
	struct step_ref *v;
	char keys[4][32], buf[320];
	size_t k = 0, n = 0, row = 0;
	int ret = 0;

	for (size_t i = 0; i < o->n; i++)
		n += o->order[i]->nsteps;
	v = malloc((n ? n : 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	n = 0;
	for (size_t i = 0; i < o->n; i++)
		for (size_t j = 0; j < o->order[i]->nsteps; j++)
			v[n++] = (struct step_ref){o->order[i]->step_numbers[j], (uint32_t)i,
			                           (uint32_t)j};
	if (n)
		qsort(v, n, sizeof(*v), step_ref_cmp);
	cols[k++] = (struct gt_col){"step", "Step", GT_COL_I64};
	k += group_cols(o, cols + k, NULL, NULL, keys);
	cols[k++] = (struct gt_col){"duration_ns", "Duration", GT_COL_NS};
	cols[k++] = (struct gt_col){"compute_ns", "Compute", GT_COL_NS};
	cols[k++] = (struct gt_col){"memory_ns", "Copies", GT_COL_NS};
	cols[k++] = (struct gt_col){"comm_ns", "Comm", GT_COL_NS};
	cols[k++] = (struct gt_col){"overlap_ns", "Comm with compute", GT_COL_NS};
	cols[k++] = (struct gt_col){"comm_overlap_pct", "Overlap %", GT_COL_PCT};
	cols[k++] = (struct gt_col){"straggler", "Straggler", GT_COL_BOOL};
	gt_stats_emit_begin(o->e, "step_ranks", "Each rank's steps", cols, k, GT_EMIT_LIMITED);
	for (size_t i = 0; i < n && ret == 0; i++) {
		const struct gt_rankstats_group *g = o->order[v[i].pos];
		const struct gt_busy_window *w = &g->steps[v[i].j];
		size_t j = 0;

		/* the step's summary row, for "slowest" (rows of a number come together) */
		while (row < o->rs->nsteps && o->rs->steps[row].number < v[i].number)
			row++;
		if (i > 0 && v[i - 1].number == v[i].number && v[i - 1].pos == v[i].pos)
			continue; /* a second step of one number: only the first counts */
		c[j++] = gt_cell_i(v[i].number);
		j += group_cells(o, g, c + j, buf, sizeof(buf));
		c[j++] = gt_cell_u(w->end_ns - w->start_ns);
		c[j++] = gt_cell_u(w->compute_ns);
		c[j++] = gt_cell_u(w->memory_ns);
		c[j++] = gt_cell_u(w->comm_ns);
		c[j++] = gt_cell_u(w->overlap_ns);
		c[j++] = gt_cell_pct(w->overlap_ns, w->comm_ns);
		c[j++] = gt_cell_b(row < o->rs->nsteps && o->rs->steps[row].straggler &&
		             o->rs->steps[row].slowest == g->index);
		ret = gt_stats_emit_row(o->e, c);
	}
	free(v);
	return ret ? ret : gt_stats_emit_end(o->e, "no steps found");
}

/* "4, 8" - the first of a straggler's steps, and how many more. */
static const char *step_list(const struct gt_rankstats_straggler *s, char *buf, size_t bytes)
{
	size_t o = 0, n = s->slowest < GT_RANKSTATS_STEP_LIST ? s->slowest : GT_RANKSTATS_STEP_LIST;

	buf[0] = '\0';
	for (size_t i = 0; i < n && o < bytes; i++)
		o += (size_t)snprintf(buf + o, bytes - o, "%s%" PRId64, i ? ", " : "", s->steps[i]);
	if (s->slowest > n && o < bytes)
		snprintf(buf + o, bytes - o, " and %" PRIu32 " more", s->slowest - (uint32_t)n);
	return buf;
}

static int section_stragglers(struct out *o)
{
	struct gt_col cols[MAXCOLS];
	struct gt_cell c[MAXCOLS];
	char keys[4][32], buf[320], list[256], title[256];
	size_t k = 0;
	int ret = 0;

	k += group_cols(o, cols + k, NULL, NULL, keys);
	cols[k++] = (struct gt_col){"straggler_steps", "Straggler in", GT_COL_U64};
	cols[k++] = (struct gt_col){"steps", "Steps", GT_COL_STR};
	cols[k++] = (struct gt_col){"compared_steps", "Of", GT_COL_U64};
	cols[k++] = (struct gt_col){"lag_ns", "Total lag", GT_COL_NS};
	cols[k++] = (struct gt_col){"max_lag_ns", "Max lag", GT_COL_NS};
	cols[k++] = (struct gt_col){"worst_step", "In step", GT_COL_I64};
	cols[k++] = (struct gt_col){"most_compute_steps", "Most compute in", GT_COL_U64};
	cols[k++] = (struct gt_col){"mean_compute_ns", "Mean compute", GT_COL_NS};
	cols[k++] = (struct gt_col){"mean_duration_ns", "Mean step", GT_COL_NS};
	cols[k++] = (struct gt_col){"comm_overlap_pct", "Comm overlapped %", GT_COL_PCT};
	snprintf(title, sizeof(title),
	         "Stragglers (the most compute-kernel time in a step, at least %g%% more than the "
	         "others' median; by how often, then by how much)",
	         o->rs->opts.min_lag_pct);
	gt_stats_emit_begin(o->e, "stragglers", title, cols, k, GT_EMIT_LIMITED);
	for (size_t i = 0; i < o->rs->nstragglers && ret == 0; i++) {
		const struct gt_rankstats_straggler *s = &o->rs->stragglers[i];
		const struct gt_rankstats_group *g = o->rs->groups[s->group];
		size_t j = group_cells(o, g, c, buf, sizeof(buf));

		c[j++] = gt_cell_u(s->slowest);
		c[j++] = s->slowest ? gt_cell_s(step_list(s, list, sizeof(list))) : gt_cell_null();
		c[j++] = gt_cell_u(s->compared);
		c[j++] = gt_cell_u(s->lag_ns);
		c[j++] = gt_cell_u(s->max_lag_ns);
		c[j++] = s->worst_step >= 0 ? gt_cell_i(s->worst_step) : gt_cell_null();
		c[j++] = gt_cell_u(s->most);
		c[j++] = gt_cell_u(s->compute_ns);
		c[j++] = gt_cell_u(s->dur_ns);
		c[j++] = gt_cell_pct(gt_busy_overlap_ns(&g->busy), gt_busy_comm_all_ns(&g->busy));
		ret = gt_stats_emit_row(o->e, c);
	}
	return ret ? ret : gt_stats_emit_end(o->e, "no steps found");
}

/* ---- the per-name reports, split by group ---- */

enum named {
	NAMED_KERNELS,
	NAMED_API,
	NAMED_NVTX
};

static uint64_t table_total(const struct gt_stat_table *t)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < t->n; i++)
		sum += t->entries[i]->time.total;
	return sum;
}

/* In a table, one section per group (title "GPU kernels: rank 1"); in CSV and JSON one
 * section with the group's columns first. */
static int section_named(struct out *o, enum named what)
{
	static const struct gt_col kcols[] = {GT_STATS_TIME_COLS("instances", "Instances"),
	                                      {"name", "Name", GT_COL_STR}};
	static const struct gt_col acols[] = {GT_STATS_TIME_COLS("calls", "Calls"),
	                                      {"name", "Name", GT_COL_STR}};
	static const struct gt_col ncols[] = {GT_STATS_TIME_COLS("instances", "Instances"),
	                                      {"style", "Style", GT_COL_STR},
	                                      {"domain", "Domain", GT_COL_STR},
	                                      {"range", "Range", GT_COL_STR}};
	static const char *const names[] = {"kernels", "api", "nvtx"};
	static const char *const titles[] = {"GPU kernels", "CUDA API calls", "NVTX ranges"};
	static const char *const empty[] = {"no GPU kernels", "no API calls", "no NVTX ranges"};
	const struct gt_col *rc = what == NAMED_KERNELS ? kcols : what == NAMED_API ? acols : ncols;
	size_t nrc = what == NAMED_NVTX ? GT_STATS_NTIME + 3 : GT_STATS_NTIME + 1;
	struct gt_col cols[MAXCOLS];
	struct gt_cell c[MAXCOLS];
	char keys[4][32], buf[320], title[400], dm[GT_DEMANGLE_BUF_BYTES];
	size_t k = o->table ? 0 : group_cols(o, cols, NULL, NULL, keys), printed = 0;
	int ret = 0;

	memcpy(cols + k, rc, nrc * sizeof(*rc));
	if (!o->table)
		gt_stats_emit_begin(o->e, names[what], titles[what], cols, k + nrc, 0);
	for (size_t i = 0; i < o->n && ret == 0; i++) {
		const struct gt_rankstats_group *g = o->order[i];
		const struct rs_tables *t = g->priv;
		const struct gt_stat_table *tab = what == NAMED_KERNELS ? &t->kernels
		                                  : what == NAMED_API   ? &t->api
		                                                        : &t->nvtx;
		struct gt_stat_entry **v;
		uint64_t all = table_total(tab);

		if (o->table && tab->n == 0)
			continue; /* a group without any: no table of its own */
		v = gt_stats_table_sorted(tab, 0);
		if (!v)
			return -ENOMEM;
		printed++;
		if (o->table) {
			snprintf(title, sizeof(title), "%s: %s%s", titles[what],
			         o->by == GT_RANKSTATS_BY_RANK && g->rank >= 0 ? "rank "
			         : o->by == GT_RANKSTATS_BY_PROCESS            ? "pid "
			                                                       : "",
			         label(o, g, buf, sizeof(buf)));
			gt_stats_emit_begin(o->e, names[what], title, cols, nrc, GT_EMIT_LIMITED);
		}
		for (size_t r = 0; r < tab->n && ret == 0; r++) {
			const struct gt_stat_entry *x = v[r];
			size_t j = o->table ? 0 : group_cells(o, g, c, buf, sizeof(buf));

			gt_stats_time_cells(c + j, &x->time, all);
			j += GT_STATS_NTIME;
			if (what == NAMED_NVTX) {
				c[j++] = gt_cell_s(x->tag == GT_NVTX_START_END ? "StartEnd"
				                                               : "PushPop");
				c[j++] = x->split ? gt_cell_s(x->key) : gt_cell_null();
				c[j++] = gt_cell_s(x->key + x->split + 1);
			} else if (what == NAMED_KERNELS && !o->rs->opts.mangled) {
				c[j++] = gt_cell_s(gt_demangle(x->key, dm, sizeof(dm)));
			} else {
				c[j++] = gt_cell_s(x->key);
			}
			ret = gt_stats_emit_row(o->e, c);
		}
		free(v);
		if (o->table && ret == 0)
			ret = gt_stats_emit_end(o->e, empty[what]);
	}
	if ((!o->table || !printed) && ret == 0) {
		if (o->table)
			gt_stats_emit_begin(o->e, names[what], titles[what], cols, nrc, 0);
		ret = gt_stats_emit_end(o->e, empty[what]);
	}
	return ret;
}

static int section_xfer(struct out *o, bool copies)
{
	static const struct gt_col mcols[] = {GT_STATS_XFER_COLS, {"kind", "Kind", GT_COL_STR}};
	static const struct gt_col scols[] = {GT_STATS_XFER_COLS, {"memory", "Memory", GT_COL_STR}};
	const size_t nrc = GT_STATS_NXFER + 1;
	const char *name = copies ? "memcpy" : "memset";
	const char *what = copies ? "Memory copies by kind" : "Memsets by memory kind";
	struct gt_col cols[MAXCOLS];
	struct gt_cell c[MAXCOLS];
	char keys[4][32], buf[320], title[400];
	size_t k = o->table ? 0 : group_cols(o, cols, NULL, NULL, keys), printed = 0;
	int ret = 0;

	memcpy(cols + k, copies ? mcols : scols, nrc * sizeof(*mcols));
	if (!o->table)
		gt_stats_emit_begin(o->e, name, what, cols, k + nrc, 0);
	for (size_t i = 0; i < o->n && ret == 0; i++) {
		const struct gt_rankstats_group *g = o->order[i];
		const struct rs_tables *t = g->priv;
		const struct gt_xfer_stats *x = copies ? t->memcpy : t->memset;
		unsigned order[(unsigned)GT_MEMCPY_MAX + (unsigned)GT_MEM_MAX];
		uint64_t all;
		size_t n = gt_stats_xfer_order(x, copies ? GT_MEMCPY_MAX : GT_MEM_MAX, order, &all);

		if (o->table) {
			if (n == 0)
				continue; /* a group without copies: no table of its own */
			snprintf(title, sizeof(title), "%s: %s%s", what,
			         o->by == GT_RANKSTATS_BY_RANK && g->rank >= 0 ? "rank "
			         : o->by == GT_RANKSTATS_BY_PROCESS            ? "pid "
			                                                       : "",
			         label(o, g, buf, sizeof(buf)));
			gt_stats_emit_begin(o->e, name, title, cols, nrc, 0);
			printed++;
		}
		for (size_t r = 0; r < n && ret == 0; r++) {
			size_t j = o->table ? 0 : group_cells(o, g, c, buf, sizeof(buf));

			gt_stats_xfer_cells(c + j, &x[order[r]], all);
			j += GT_STATS_NXFER;
			c[j] = gt_cell_s(copies ? gt_memcpy_kind_name(order[r])
			                  : gt_mem_kind_name(order[r]));
			ret = gt_stats_emit_row(o->e, c);
		}
		if (o->table && ret == 0)
			ret = gt_stats_emit_end(o->e, NULL);
	}
	if ((!o->table || !printed) && ret == 0) {
		if (o->table)
			gt_stats_emit_begin(o->e, name, what, cols, nrc, 0);
		ret = gt_stats_emit_end(o->e, copies ? "no memory copies" : "no memsets");
	}
	return ret;
}

/* ---- the document ---- */

/* The reports that apply to the grouping: steps are a rank's (or a process's), and API calls
 * and NVTX ranges belong to no GPU. */
static unsigned reports_for(const struct gt_rankstats *rs)
{
	unsigned r = rs->opts.reports;

	if (rs->opts.by == GT_RANKSTATS_BY_DEVICE || rs->opts.by == GT_RANKSTATS_BY_HOST)
		r &= ~(unsigned)(GT_RANKSTATS_REPORT_STEPS | GT_RANKSTATS_REPORT_STRAGGLERS);
	if (rs->opts.by == GT_RANKSTATS_BY_DEVICE)
		r &= ~(unsigned)(GT_RANKSTATS_REPORT_API | GT_RANKSTATS_REPORT_NVTX);
	return r;
}

int gt_rankstats_write(struct gt_rankstats *rs, FILE *out, const char **errmsg)
{
	struct rs_priv *pv = rs->priv;
	unsigned reports = reports_for(rs), nsections = 2;
	struct out o = {.rs = rs, .by = rs->opts.by};
	int ret;

	*errmsg = "out of memory while writing the report";
	o.table = rs->opts.format == GT_STATS_FORMAT_TABLE;
	o.multi_host = pv->nhosts > 1;
	o.order = malloc((rs->ngroups ? rs->ngroups : 1) * sizeof(*o.order));
	if (!o.order)
		return -ENOMEM;
	for (size_t i = 0; i < rs->ngroups; i++)
		if (rs->groups[i]->active)
			o.order[o.n++] = rs->groups[i];
	if (o.n)
		qsort_r(o.order, o.n, sizeof(*o.order), group_cmp, &o.by);
	for (unsigned b = 0; b < 8; b++)
		if (reports & (1u << b))
			nsections += (1u << b) == GT_RANKSTATS_REPORT_STEPS ? 2 : 1;
	ret = gt_stats_emit_new(out, rs->opts.format, nsections, rs->opts.limit, &o.e);
	if (ret < 0)
		goto out;
	if ((ret = section_analysis(&o)) || (ret = section_inputs(&o)))
		goto out;
	if ((reports & GT_RANKSTATS_REPORT_BREAKDOWN) && (ret = section_breakdown(&o)))
		goto out;
	if ((reports & GT_RANKSTATS_REPORT_STEPS) &&
	    ((ret = section_steps(&o)) || (ret = section_step_ranks(&o))))
		goto out;
	if ((reports & GT_RANKSTATS_REPORT_STRAGGLERS) && (ret = section_stragglers(&o)))
		goto out;
	if ((reports & GT_RANKSTATS_REPORT_KERNELS) && (ret = section_named(&o, NAMED_KERNELS)))
		goto out;
	if ((reports & GT_RANKSTATS_REPORT_API) && (ret = section_named(&o, NAMED_API)))
		goto out;
	if ((reports & GT_RANKSTATS_REPORT_MEMCPY) && (ret = section_xfer(&o, true)))
		goto out;
	if ((reports & GT_RANKSTATS_REPORT_MEMSET) && (ret = section_xfer(&o, false)))
		goto out;
	if ((reports & GT_RANKSTATS_REPORT_NVTX) && (ret = section_named(&o, NAMED_NVTX)))
		goto out;
	ret = gt_stats_emit_close(o.e);
	o.e = NULL;
	if (ret < 0)
		*errmsg = "could not write the report";
out:
	gt_stats_emit_close(o.e);
	free(o.order);
	return ret;
}
