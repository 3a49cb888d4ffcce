/* `gputrace diff`, the writing side: a warning first when a trace lost records, then the
 * comparison and its gate, the two traces, the headline, and the rows that changed, appeared
 * and vanished, through the stats emitter (table, CSV or JSON). Runs in the CLI. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "diff.h"
#include "steps.h"
#include "text.h"

static const char *const side_names[GT_DIFF_SIDE_MAX] = {"BASE", "NEW"};

/* A trace that lost records, or whose file was damaged, makes the comparison incomplete. */
static bool incomplete(const struct gt_diff_totals *t)
{
	return t->lost || gt_catalog_damaged(&t->damage);
}

static void warning(const struct gt_diff *d, FILE *out)
{
	char n[32], dt[GT_CATALOG_DAMAGE_TEXT];

	fputs("WARNING: incomplete traces, the comparison may be off by what they lost:", out);
	for (unsigned s = 0; s < GT_DIFF_SIDE_MAX; s++) {
		const struct gt_diff_totals *t = &d->t[s];

		if (!incomplete(t))
			continue;
		fprintf(out, " %s (%s)", side_names[s], t->name);
		if (t->lost)
			fprintf(out, " lost %s records%s", gt_fmt_count(t->lost, n, sizeof(n)),
			        gt_catalog_damaged(&t->damage) ? " and" : "");
		if (gt_catalog_damaged(&t->damage))
			fprintf(out, " is damaged: %s",
			        gt_catalog_damage_text(&t->damage, dt, sizeof(dt)));
		fputc(';', out);
	}
	fputs(" see `gputrace stats -r losses`.\n\n", out);
}

static int section_comparison(const struct gt_diff *d, struct gt_emit *e)
{
	static const struct gt_col cols[] = {
	        {"incomplete", "Incomplete", GT_COL_BOOL},
	        {"base_lost_records", "BASE lost", GT_COL_U64},
	        {"new_lost_records", "NEW lost", GT_COL_U64},
	        {"gate_metric", "Gate", GT_COL_STR},
	        {"gate_limit_pct", "Limit %", GT_COL_PCT},
	        {"gate_change_pct", "Change %", GT_COL_PCT_DELTA},
	        {"regressed", "Regressed", GT_COL_BOOL},
	};
	const struct gt_diff_gate *g = &d->gate;
	struct gt_cell c[7];

	gt_stats_emit_begin(e, "comparison", "Comparison", cols, 7, GT_EMIT_SINGLE);
	c[0] = gt_cell_b(incomplete(&d->t[GT_DIFF_BASE]) || incomplete(&d->t[GT_DIFF_NEW]));
	c[1] = gt_cell_u(d->t[GT_DIFF_BASE].lost);
	c[2] = gt_cell_u(d->t[GT_DIFF_NEW].lost);
	c[3] = g->enabled ? gt_cell_s(g->metric) : gt_cell_null();
	c[4] = g->enabled ? gt_cell_d(d->opts.fail_above_pct) : gt_cell_null();
	/* +inf (from nothing to something) has no number: null, and "regressed" says it */
	c[5] = g->enabled && isfinite(g->change_pct) ? gt_cell_d(g->change_pct) : gt_cell_null();
	c[6] = g->enabled ? gt_cell_b(g->regressed) : gt_cell_null();
	gt_stats_emit_row(e, c);
	return gt_stats_emit_end(e, NULL);
}

static int section_traces(const struct gt_diff *d, struct gt_emit *e)
{
	static const struct gt_col cols[] = {
	        {"side", "Side", GT_COL_STR},
	        {"trace", "Trace", GT_COL_STR},
	        {"host", "Host", GT_COL_STR},
	        {"command", "Command", GT_COL_STR},
	        {"lost_records", "Lost", GT_COL_U64},
	        {"chunks_skipped", "Chunks skipped", GT_COL_U64},
	        {"damage", "Damaged file", GT_COL_STR},
	        {"recovered", "Recovered", GT_COL_BOOL},
	        {"step_family", "Steps found as", GT_COL_STR},
	};
	struct gt_cell c[9];
	int ret = 0;

	gt_stats_emit_begin(e, "traces", "Traces", cols, 9, 0);
	for (unsigned s = 0; s < GT_DIFF_SIDE_MAX && ret == 0; s++) {
		const struct gt_diff_totals *t = &d->t[s];
		char dt[GT_CATALOG_DAMAGE_TEXT];

		c[0] = gt_cell_s(side_names[s]);
		c[1] = gt_cell_s(t->name);
		c[2] = gt_cell_s(t->host);
		c[3] = gt_cell_s(t->command);
		c[4] = gt_cell_u(t->lost);
		c[5] = gt_cell_u(t->damage.chunks);
		c[6] = gt_catalog_damaged(&t->damage)
		               ? gt_cell_s(gt_catalog_damage_text(&t->damage, dt, sizeof(dt)))
		               : gt_cell_null();
		c[7] = gt_cell_b(t->recovered);
		c[8] = t->step_family ? gt_cell_s(gt_steps_family_name(
		                                (enum gt_steps_family)t->step_family))
		                      : gt_cell_null();
		ret = gt_stats_emit_row(e, c);
	}
	return ret ? ret : gt_stats_emit_end(e, NULL);
}

/* ---- the headline ---- */

enum unit {
	U_NS,
	U_COUNT
};

struct line {
	const char *key, *title;
	enum unit unit;
	bool have[GT_DIFF_SIDE_MAX];
	uint64_t v[GT_DIFF_SIDE_MAX];
};

static const char *human(enum unit u, double v, char *buf, size_t bytes)
{
	return u == U_NS ? gt_fmt_ns(v, buf, bytes) : gt_fmt_count((uint64_t)v, buf, bytes);
}

static int section_headline(const struct gt_diff *d, struct gt_emit *e, bool table)
{
	static const struct gt_col tcols[] = {
	        {"metric", "", GT_COL_STR},
	        {"base", "BASE", GT_COL_STR},
	        {"new", "NEW", GT_COL_STR},
	        {"change", "Change", GT_COL_STR},
	        {"change_pct", "%", GT_COL_PCT_DELTA},
	};
	static const struct gt_col mcols[] = {
	        {"metric", "metric", GT_COL_STR}, {"unit", "unit", GT_COL_STR},
	        {"base", "base", GT_COL_U64},     {"new", "new", GT_COL_U64},
	        {"change", "change", GT_COL_I64}, {"change_pct", "change_pct", GT_COL_PCT_DELTA},
	};
	const struct gt_diff_totals *b = &d->t[GT_DIFF_BASE], *n = &d->t[GT_DIFF_NEW];
	const struct line lines[] = {
	        {"gpu_time_ns", "GPU time", U_NS, {true, true}, {b->gpu_ns, n->gpu_ns}},
	        {"steps", "Steps", U_COUNT, {true, true}, {b->steps, n->steps}},
	        {"step_time_median_ns",
	         "Time per step (median)",
	         U_NS,
	         {b->steps > 0, n->steps > 0},
	         {b->step_median_ns, n->step_median_ns}},
	        {"step_time_mean_ns",
	         "Time per step (mean)",
	         U_NS,
	         {b->steps > 0, n->steps > 0},
	         {b->step_mean_ns, n->step_mean_ns}},
	        {"kernel_launches",
	         "Kernel launches",
	         U_COUNT,
	         {true, true},
	         {b->launches, n->launches}},
	        {"api_calls", "API calls", U_COUNT, {true, true}, {b->api_calls, n->api_calls}},
	        {"lost_records", "Lost records", U_COUNT, {true, true}, {b->lost, n->lost}},
	};
	struct gt_cell c[6];
	char s[3][48];
	int ret = 0;

	gt_stats_emit_begin(e, "headline", "Headline", table ? tcols : mcols, table ? 5 : 6, 0);
	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]) && ret == 0; i++) {
		const struct line *l = &lines[i];
		bool both = l->have[0] && l->have[1];
		int64_t delta = (int64_t)(l->v[1] - l->v[0]);
		struct gt_cell pct = both && l->v[0]
		                             ? gt_cell_d(100.0 * (double)delta / (double)l->v[0])
		                             : gt_cell_null();
		size_t j = 0;

		if (table) {
			c[j++] = gt_cell_s(l->title);
			for (unsigned k = 0; k < 2; k++)
				c[j++] = l->have[k] ? gt_cell_s(human(l->unit, (double)l->v[k],
				                                      s[k], 48))
				                    : gt_cell_null();
			if (both) {
				s[2][0] = delta < 0 ? '-' : '+';
				human(l->unit, delta < 0 ? -(double)delta : (double)delta, s[2] + 1,
				      47);
			}
			c[j++] = both ? gt_cell_s(s[2]) : gt_cell_null();
		} else {
			c[j++] = gt_cell_s(l->key);
			c[j++] = gt_cell_s(l->unit == U_NS ? "ns" : "count");
			c[j++] = l->have[0] ? gt_cell_u(l->v[0]) : gt_cell_null();
			c[j++] = l->have[1] ? gt_cell_u(l->v[1]) : gt_cell_null();
			c[j++] = both ? gt_cell_i(delta) : gt_cell_null();
		}
		c[j++] = pct;
		ret = gt_stats_emit_row(e, c);
	}
	return ret ? ret : gt_stats_emit_end(e, NULL);
}

/* ---- rows ---- */

static int section_changed(const struct gt_diff *d, struct gt_emit *e)
{
	static const struct gt_col cols[] = {
	        {"change_ns", "Change", GT_COL_NS_DELTA},
	        {"change_pct", "%", GT_COL_PCT_DELTA},
	        {"base_total_ns", "BASE total", GT_COL_NS},
	        {"new_total_ns", "NEW total", GT_COL_NS},
	        {"base_count", "BASE count", GT_COL_U64},
	        {"new_count", "NEW count", GT_COL_U64},
	        {"base_mean_ns", "BASE mean", GT_COL_NS_F},
	        {"new_mean_ns", "NEW mean", GT_COL_NS_F},
	        {"base_median_ns", "BASE median", GT_COL_NS_F},
	        {"new_median_ns", "NEW median", GT_COL_NS_F},
	        {"mean_change_pct", "Mean %", GT_COL_PCT_DELTA},
	        {"what", "What", GT_COL_STR},
	        {"name", "Name", GT_COL_STR},
	};
	struct gt_cell c[13];
	int ret = 0;

	gt_stats_emit_begin(e, "changed", "In both, by the change in total time", cols, 13,
	                    GT_EMIT_LIMITED);
	for (size_t i = 0; i < d->nchanged && ret == 0; i++) {
		const struct gt_diff_row *r = &d->changed[i];
		const struct gt_series *b = r->side[GT_DIFF_BASE], *n = r->side[GT_DIFF_NEW];
		double mb = gt_stats_series_avg(b), mn = gt_stats_series_avg(n);

		c[0] = gt_cell_i(r->delta_ns);
		c[1] = b->total ? gt_cell_d(100.0 * (double)r->delta_ns / (double)b->total)
		                : gt_cell_null();
		c[2] = gt_cell_u(b->total);
		c[3] = gt_cell_u(n->total);
		c[4] = gt_cell_u(b->count);
		c[5] = gt_cell_u(n->count);
		c[6] = gt_cell_d(mb);
		c[7] = gt_cell_d(mn);
		c[8] = gt_cell_d(gt_stats_series_median(b));
		c[9] = gt_cell_d(gt_stats_series_median(n));
		c[10] = mb > 0 ? gt_cell_d(100.0 * (mn - mb) / mb) : gt_cell_null();
		c[11] = gt_cell_s(gt_diff_category_name(r->category));
		c[12] = gt_cell_s(r->name);
		ret = gt_stats_emit_row(e, c);
	}
	return ret ? ret : gt_stats_emit_end(e, "nothing in common");
}

static int section_only(struct gt_emit *e, const char *name, const char *title,
                        const struct gt_diff_row *rows, size_t n, unsigned side, const char *empty)
{
	static const struct gt_col cols[] = {
	        {"total_ns", "Total", GT_COL_NS}, {"count", "Count", GT_COL_U64},
	        {"mean_ns", "Mean", GT_COL_NS_F}, {"median_ns", "Median", GT_COL_NS_F},
	        {"what", "What", GT_COL_STR},     {"name", "Name", GT_COL_STR},
	};
	struct gt_cell c[6];
	int ret = 0;

	gt_stats_emit_begin(e, name, title, cols, 6, GT_EMIT_LIMITED);
	for (size_t i = 0; i < n && ret == 0; i++) {
		const struct gt_series *s = rows[i].side[side];

		c[0] = gt_cell_u(s->total);
		c[1] = gt_cell_u(s->count);
		c[2] = gt_cell_d(gt_stats_series_avg(s));
		c[3] = gt_cell_d(gt_stats_series_median(s));
		c[4] = gt_cell_s(gt_diff_category_name(rows[i].category));
		c[5] = gt_cell_s(rows[i].name);
		ret = gt_stats_emit_row(e, c);
	}
	return ret ? ret : gt_stats_emit_end(e, empty);
}

int gt_diff_write(const struct gt_diff *d, FILE *out, const char **errmsg)
{
	bool table = d->opts.format == GT_STATS_FORMAT_TABLE;
	struct gt_emit *e = NULL;
	int ret;

	*errmsg = "out of memory while writing the comparison";
	if (table && (incomplete(&d->t[GT_DIFF_BASE]) || incomplete(&d->t[GT_DIFF_NEW])))
		warning(d, out);
	ret = gt_stats_emit_new(out, d->opts.format, 6, d->opts.limit, &e);
	if (ret < 0)
		return ret;
	if ((ret = section_comparison(d, e)) || (ret = section_traces(d, e)) ||
	    (ret = section_headline(d, e, table)) || (ret = section_changed(d, e)) ||
	    (ret = section_only(e, "appeared", "Only in NEW (appeared)", d->appeared, d->nappeared,
	                        GT_DIFF_NEW, "nothing new")) ||
	    (ret = section_only(e, "vanished", "Only in BASE (vanished)", d->vanished, d->nvanished,
	                        GT_DIFF_BASE, "nothing gone")))
		goto out;
	ret = gt_stats_emit_close(e);
	e = NULL;
	if (ret < 0)
		*errmsg = "could not write the comparison";
out:
	gt_stats_emit_close(e);
	return ret;
}
