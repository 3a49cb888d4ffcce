/* Lanes: nesting slices on displayed tracks, and the ids and names of lanes (see lanes.h).
 * Runs in the CLI. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lanes.h"
#include "names.h"
#include "text.h"
#include "timeline.h"

/* Would [s, e] nest on lane l? On success *pi, *pj: the blocks [i, j) it contains. */
static bool lane_fits(const struct gt_lane *l, uint64_t s, uint64_t e, bool strict, uint32_t *pi,
                      uint32_t *pj)
{
	const struct gt_lane_block *b = l->blk;
	uint32_t n = l->n, i, j;

	if (l->folded && s < l->floor_end_ns) {
		/* only a slice containing everything folded can reach back past the floor;
		 * with strict ties it must not start where a folded block started */
		if (s > l->floor_start_ns || e < l->floor_end_ns)
			return false;
		if (strict && s == l->floor_start_ns)
			return false;
	}
	if (n == 0 || s >= b[n - 1].end_ns) {
		*pi = *pj = n;
		return true;
	}
	/* records mostly arrive in end order: the blocks this one contains are at the tail */
	i = n;
	while (i > 0 && b[i - 1].end_ns > s)
		i--;
	if (i < n && b[i].start_ns < s)
		return false; /* starts strictly inside a block */
	j = i;
	while (j < n && b[j].start_ns < e)
		j++;
	if (j > i && b[j - 1].end_ns > e)
		return false; /* a block sticks out past the end */
	if (strict) {
		/* at equal timestamps Perfetto keeps file order, and this slice is written
		 * after the blocks already there */
		if (j > i && b[i].start_ns == s && b[i].end_ns > s)
			return false;
		for (uint32_t k = j; s < e && k < n && b[k].start_ns == e; k++)
			if (b[k].end_ns > e)
				return false;
	}
	*pi = i;
	*pj = j;
	return true;
}

/* Fold the oldest half of a full lane into its floor. */
static void lane_fold(struct gt_lane *l)
{
	uint32_t half = l->n / 2;
	uint64_t fs = l->blk[0].start_ns, fe = l->blk[half - 1].end_ns;

	if (l->folded) {
		if (l->floor_start_ns < fs)
			fs = l->floor_start_ns;
		if (l->floor_end_ns > fe)
			fe = l->floor_end_ns;
	}
	l->floor_start_ns = fs;
	l->floor_end_ns = fe;
	l->folded = true;
	memmove(l->blk, l->blk + half, (l->n - half) * sizeof(*l->blk));
	l->n -= half;
}

static int lane_insert(struct gt_lane *l, uint64_t s, uint64_t e, uint32_t i, uint32_t j)
{
	if (l->folded && s <= l->floor_start_ns && e >= l->floor_end_ns)
		l->folded = false; /* the new block stands for everything folded */
	if (i == j) {
		if (l->n == l->cap) {
			uint32_t ncap = l->cap ? l->cap * 2 : 16;
			struct gt_lane_block *nb = realloc(l->blk, ncap * sizeof(*nb));

			if (!nb)
				return -ENOMEM;
			l->blk = nb;
			l->cap = ncap;
		}
		memmove(l->blk + i + 1, l->blk + i, (l->n - i) * sizeof(*l->blk));
		l->n++;
	} else if (j > i + 1) {
		memmove(l->blk + i + 1, l->blk + j, (l->n - j) * sizeof(*l->blk));
		l->n -= j - i - 1;
	}
	l->blk[i].start_ns = s;
	l->blk[i].end_ns = e;
	return 0;
}

unsigned gt_lanes_place(struct gt_timeline *m, struct gt_track *t, uint64_t s, uint64_t e)
{
	uint32_t i, j;

	if (e < s)
		e = s;
	for (unsigned k = 0; k < t->nlanes; k++) {
		struct gt_lane *l = &t->lanes[k];

		if (l->n >= GT_LANE_BLOCKS)
			lane_fold(l);
		if (lane_fits(l, s, e, m->strict_ties, &i, &j) && lane_insert(l, s, e, i, j) == 0)
			return k;
	}
	if (t->nlanes < GT_LANES_MAX) {
		unsigned k = t->nlanes++;

		lane_fits(&t->lanes[k], s, e, m->strict_ties, &i, &j);
		lane_insert(&t->lanes[k], s, e, i, j);
		return k;
	}
	/* Every lane is taken: pathological input (thousands of overlapping slices). Put it
	 * on the last lane and count it; the documentation says these may overlap. */
	t->forced++;
	m->lanes_forced++;
	return GT_LANES_MAX - 1;
}

uint64_t gt_lanes_count(const struct gt_timeline *m)
{
	uint64_t n = 0;

	for (uint32_t i = 0; i < m->ntracks; i++)
		n += m->tracks[i]->nlanes;
	return n;
}

void gt_lanes_ids(const struct gt_timeline *m, const struct gt_track *t, unsigned lane,
                  uint32_t *pid, uint32_t *tid)
{
	const uint32_t low = (1u << GT_LANE_SHIFT) - 1;

	switch (t->kind) {
	case GT_TRACK_THREAD:
		*pid = t->pid;
		*tid = (t->id & low) | (uint32_t)lane << GT_LANE_SHIFT;
		return;
	case GT_TRACK_SYNC:
		*pid = t->pid;
		*tid = (t->id & low) | (uint32_t)(GT_LANES_MAX + lane) << GT_LANE_SHIFT;
		return;
	case GT_TRACK_STREAM: {
		const struct gt_timeline_gpu *g = m->gpus[t->gpu];
		uint32_t base = t->id & 0xfffffu;

		/* a second process's streams on the same GPU: its index above the stream id */
		if (t->pid != g->first_pid)
			base |= (m->procs[t->proc]->index & 0x1fu) << 20;
		*pid = gt_lanes_gpu_pid(m, g);
		*tid = base | (uint32_t)lane << GT_LANE_SHIFT;
		return;
	}
	case GT_TRACK_NVTX:
		*pid = t->pid;
		*tid = GT_LANE_NVTX_TID + lane;
		return;
	default:
		*pid = t->pid;
		*tid = GT_LANE_OVERHEAD_TID + lane;
		return;
	}
}

uint32_t gt_lanes_gpu_pid(const struct gt_timeline *m, const struct gt_timeline_gpu *g)
{
	if (m->small_gpu_pids && g->cat->number < GT_GPU_SMALL_PID_MAX)
		return g->cat->number;
	return GT_GPU_PID_BASE + g->cat->number;
}

char *gt_lanes_name(struct gt_timeline *m, const struct gt_track *t, unsigned lane, char *n,
                    bool json)
{
	switch (t->kind) {
	case GT_TRACK_THREAD:
	case GT_TRACK_SYNC: {
		const struct gt_track *th = t;

		if (t->kind == GT_TRACK_SYNC)
			th = gt_timeline_track_of(m, GT_TRACK_THREAD, t, t->id);
		if (th && th->name_id) {
			size_t len = 0;
			const char *tn =
			        gt_names_get(&m->names, th->name_id, false, &len, NULL, NULL);

			if (tn) {
				len = gt_text_cut(tn, len, 1024, json);
				memcpy(n, tn, len);
				n += len;
			}
		} else {
			n = stpcpy(n, "thread ");
			n = gt_fmt_u64(n, t->id);
		}
		if (t->kind == GT_TRACK_SYNC)
			n = stpcpy(n, " sync");
		break;
	}
	case GT_TRACK_STREAM:
		n = stpcpy(n, "stream ");
		n = gt_fmt_u64(n, t->id);
		if (t->pid != m->gpus[t->gpu]->first_pid) {
			n = stpcpy(n, " (pid ");
			n = gt_fmt_u64(n, t->pid);
			*n++ = ')';
		}
		break;
	case GT_TRACK_NVTX:
		n = stpcpy(n, "NVTX ranges");
		break;
	default:
		n = stpcpy(n, "CUPTI overhead");
		break;
	}
	if (lane > 0) {
		n = stpcpy(n, " (overlap ");
		n = gt_fmt_u64(n, lane);
		*n++ = ')';
	}
	return n;
}
