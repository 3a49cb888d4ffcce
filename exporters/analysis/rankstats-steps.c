/* Stats across ranks, the steps compared: per step number, the group that did the most and
 * the least GPU work, the spread and the slowest one's lag; per group, how often and by how
 * much it was the slowest (the straggler table). Runs in the CLI; memory grows with groups x
 * steps. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rankstats-int.h"

/* One group's step. */
struct entry {
	int64_t number;
	uint32_t group;
	uint32_t _pad;
	uint64_t work, dur;
};

static int entry_cmp(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;

	if (x->number != y->number)
		return x->number < y->number ? -1 : 1;
	return x->group < y->group ? -1 : x->group > y->group;
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Median of v[0..n) sorted, without the one value v[skip]; n >= 2. */
static uint64_t median_without(const uint64_t *v, size_t n, size_t skip)
{
	size_t m = n - 1, lo = (m - 1) / 2, hi = m / 2;
	uint64_t a = v[lo >= skip ? lo + 1 : lo], b = v[hi >= skip ? hi + 1 : hi];

	/* the mean of the two middle values, without overflow */
	return a / 2 + b / 2 + (a % 2 + b % 2) / 2;
}

/* The straggler table's order: most often the straggler, then by the most lag, then most
 * often the most compute by any margin, then first seen. */
static int straggler_cmp(const void *a, const void *b)
{
	const struct gt_rankstats_straggler *x = a, *y = b;

	if (x->slowest != y->slowest)
		return x->slowest > y->slowest ? -1 : 1;
	if (x->lag_ns != y->lag_ns)
		return x->lag_ns > y->lag_ns ? -1 : 1;
	if (x->most != y->most)
		return x->most > y->most ? -1 : 1;
	return x->group < y->group ? -1 : x->group > y->group;
}

int gt_rankstats_finish(struct gt_rankstats *rs)
{
	struct entry *e = NULL;
	uint64_t *works = NULL;
	uint32_t *slot = NULL;  /* group -> straggler row + 1 */
	uint64_t *steps = NULL; /* straggler row -> its steps */
	size_t n = 0, k = 0, nrows = 0, maxrun = 0;
	int ret = -ENOMEM;

	for (size_t i = 0; i < rs->ngroups; i++)
		n += rs->groups[i]->nsteps;
	e = malloc((n ? n : 1) * sizeof(*e));
	slot = calloc(rs->ngroups ? rs->ngroups : 1, sizeof(*slot));
	steps = calloc(rs->ngroups ? rs->ngroups : 1, sizeof(*steps));
	if (!e || !slot || !steps)
		goto out;
	for (size_t i = 0; i < rs->ngroups; i++) {
		const struct gt_rankstats_group *g = rs->groups[i];

		for (size_t j = 0; j < g->nsteps; j++) {
			const struct gt_busy_window *w = &g->steps[j];

			e[k++] = (struct entry){g->step_numbers[j], g->index, 0, w->compute_ns,
			                        w->end_ns - w->start_ns};
		}
	}
	if (k)
		qsort(e, k, sizeof(*e), entry_cmp);
	/* a group has each number once (steps.h numbers a process's steps uniquely); were
	 * there two, the first one counts */
	n = 0;
	for (size_t i = 0; i < k; i++)
		if (n == 0 || e[n - 1].number != e[i].number || e[n - 1].group != e[i].group)
			e[n++] = e[i];
	for (size_t i = 0, run = 0; i < n; i++) {
		run = i > 0 && e[i].number == e[i - 1].number ? run + 1 : 1;
		if (run == 1)
			nrows++;
		if (run > maxrun)
			maxrun = run;
	}
	free(rs->steps);
	free(rs->stragglers);
	rs->nsteps = rs->nstragglers = 0;
	rs->steps = calloc(nrows ? nrows : 1, sizeof(*rs->steps));
	rs->stragglers = calloc(rs->ngroups ? rs->ngroups : 1, sizeof(*rs->stragglers));
	works = malloc((maxrun ? maxrun : 1) * sizeof(*works));
	if (!rs->steps || !rs->stragglers || !works)
		goto out;
	/* every group with steps has a row, slowest or not */
	for (size_t i = 0; i < n; i++) {
		struct gt_rankstats_straggler *s;

		if (!slot[e[i].group]) {
			s = &rs->stragglers[rs->nstragglers++];
			s->group = e[i].group;
			s->worst_step = -1;
			slot[e[i].group] = (uint32_t)rs->nstragglers;
		}
		s = &rs->stragglers[slot[e[i].group] - 1];
		s->compute_ns += e[i].work; /* sums for now, means below */
		s->dur_ns += e[i].dur;
		steps[slot[e[i].group] - 1]++;
	}
	for (size_t i = 0; i < rs->nstragglers; i++) {
		rs->stragglers[i].compute_ns /= steps[i];
		rs->stragglers[i].dur_ns /= steps[i];
	}
	for (size_t i = 0; i < n;) {
		struct gt_rankstats_step_row *row = &rs->steps[rs->nsteps++];
		size_t j = i, m, hi = i, lo = i, skip = 0;

		while (j < n && e[j].number == e[i].number)
			j++;
		m = j - i;
		row->number = e[i].number;
		row->ranks = (uint32_t)m;
		row->dur_min_ns = UINT64_MAX;
		for (size_t x = i; x < j; x++) {
			/* ties go to the group seen first */
			if (e[x].work > e[hi].work)
				hi = x;
			if (e[x].work < e[lo].work)
				lo = x;
			if (e[x].dur < row->dur_min_ns)
				row->dur_min_ns = e[x].dur;
			if (e[x].dur > row->dur_max_ns)
				row->dur_max_ns = e[x].dur;
			works[x - i] = e[x].work;
		}
		row->slowest = e[hi].group;
		row->fastest = e[lo].group;
		row->slowest_compute_ns = e[hi].work;
		row->fastest_compute_ns = e[lo].work;
		row->spread_ns = e[hi].work - e[lo].work;
		if (m >= 2) {
			struct gt_rankstats_straggler *s = &rs->stragglers[slot[e[hi].group] - 1];
			uint64_t median;

			qsort(works, m, sizeof(*works), u64_cmp);
			while (skip + 1 < m && works[skip] != e[hi].work)
				skip++;
			median = median_without(works, m, skip);
			row->lag_ns = e[hi].work - median;
			row->lag_pct = median        ? 100.0 * (double)row->lag_ns / (double)median
			               : row->lag_ns ? HUGE_VAL
			                             : 0;
			row->straggler = row->lag_ns > 0 && row->lag_pct >= rs->opts.min_lag_pct;
			if (row->lag_ns > 0)
				s->most++;
			if (row->straggler) {
				if (s->slowest < GT_RANKSTATS_STEP_LIST)
					s->steps[s->slowest] = row->number;
				s->slowest++;
				s->lag_ns += row->lag_ns;
				if (s->worst_step < 0 || row->lag_ns > s->max_lag_ns) {
					s->max_lag_ns = row->lag_ns;
					s->worst_step = row->number;
				}
			}
			for (size_t x = i; x < j; x++)
				rs->stragglers[slot[e[x].group] - 1].compared++;
		}
		i = j;
	}
	if (rs->nstragglers)
		qsort(rs->stragglers, rs->nstragglers, sizeof(*rs->stragglers), straggler_cmp);
	ret = 0;
out:
	free(e);
	free(works);
	free(slot);
	free(steps);
	return ret;
}
