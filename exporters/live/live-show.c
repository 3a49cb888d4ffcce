/* The reader's side of the live aggregates (gputrace run --live): rates over an interval from
 * two snapshots, the order of the kernel and range tables, and kernel names fitted to a
 * terminal's width. Runs in the CLI, on the view's thread. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "live.h"

#define GT_LIVE_NAME_MAX 4096 /* longer names are cut, not folded */

/* Room for n elements in two arrays that share a capacity, new elements zeroed. */
static int grow2(void **a, size_t asize, void **b, size_t bsize, size_t *cap, size_t n)
{
	size_t c = *cap ? *cap : 16;
	void *p;

	if (n <= *cap)
		return 0;
	while (c < n)
		c *= 2;
	p = realloc(*a, c * asize);
	if (!p)
		return -ENOMEM;
	memset((char *)p + *cap * asize, 0, (c - *cap) * asize);
	*a = p;
	p = realloc(*b, c * bsize);
	if (!p)
		return -ENOMEM; /* *a is bigger and *cap unchanged: the next call grows *b again */
	memset((char *)p + *cap * bsize, 0, (c - *cap) * bsize);
	*b = p;
	*cap = c;
	return 0;
}

#define GROW2(d, a, b, cap, n)                                                                     \
	grow2((void **)&(d)->a, sizeof(*(d)->a), (void **)&(d)->b, sizeof(*(d)->b), &(d)->cap, (n))

static double per_s(uint64_t now, uint64_t before, double sec)
{
	return sec > 0 && now > before ? (double)(now - before) / sec : 0.0;
}

static void interval(struct gt_live_count *out, struct gt_live_count *prev,
                     const struct gt_live_stat *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		out[i].count = s[i].count - prev[i].count;
		out[i].ns = s[i].total_ns - prev[i].ns;
		prev[i].count = s[i].count;
		prev[i].ns = s[i].total_ns;
	}
}

int gt_live_delta_update(struct gt_live_delta *d, const struct gt_live_snapshot *s)
{
	double sec;

	if (s->seq == 0 || s->seq == d->seq)
		return 0;
	if (GROW2(d, gpus, prev_gpus, cap_gpus, s->ngpus) < 0 ||
	    GROW2(d, kernels, prev_kernels, cap_kernels, s->nkernels) < 0 ||
	    GROW2(d, ranges, prev_ranges_n, cap_ranges, s->nranges) < 0 ||
	    GROW2(d, steps_per_s, prev_steps, cap_threads, s->nthreads) < 0)
		return -ENOMEM;
	if (!d->seq)
		d->prev_ts_ns = s->start_ns;
	d->dt_ns = s->ts_ns > d->prev_ts_ns ? s->ts_ns - d->prev_ts_ns : 0;
	sec = (double)d->dt_ns / 1e9;
	for (size_t i = 0; i < s->ngpus; i++) {
		const struct gt_live_gpu *g = &s->gpus[i];
		struct gt_live_gpu *p = &d->prev_gpus[i];
		struct gt_live_gpu_rate *r = &d->gpus[i];

		r->busy_pct = d->dt_ns && g->busy_ns > p->busy_ns
		                      ? 100.0 * (double)(g->busy_ns - p->busy_ns) / (double)d->dt_ns
		                      : 0.0;
		if (r->busy_pct > 100.0)
			r->busy_pct = 100.0;
		r->kernels_per_s = per_s(g->kernels, p->kernels, sec);
		for (unsigned c = 0; c < GT_LIVE_COPY_MAX; c++)
			r->copy_bytes_per_s[c] = per_s(g->copy_bytes[c], p->copy_bytes[c], sec);
		r->memsets_per_s = per_s(g->memsets, p->memsets, sec);
		*p = *g;
	}
	interval(d->kernels, d->prev_kernels, s->kernels, s->nkernels);
	interval(d->ranges, d->prev_ranges_n, s->ranges, s->nranges);
	for (size_t i = 0; i < s->nthreads; i++) {
		d->steps_per_s[i] = per_s(s->threads[i].steps, d->prev_steps[i], sec);
		d->prev_steps[i] = s->threads[i].steps;
	}
	d->api_per_s = per_s(s->api_calls, d->prev_api, sec);
	d->records_per_s = per_s(s->records, d->prev_records, sec);
	d->ranges_per_s = per_s(s->nvtx_ranges, d->prev_ranges, sec);
	d->prev_api = s->api_calls;
	d->prev_records = s->records;
	d->prev_ranges = s->nvtx_ranges;
	d->prev_ts_ns = s->ts_ns;
	d->seq = s->seq;
	return 1;
}

void gt_live_delta_fini(struct gt_live_delta *d)
{
	if (!d)
		return;
	free(d->gpus);
	free(d->prev_gpus);
	free(d->kernels);
	free(d->prev_kernels);
	free(d->ranges);
	free(d->prev_ranges_n);
	free(d->steps_per_s);
	free(d->prev_steps);
	memset(d, 0, sizeof(*d));
}

/* ---- order ---- */

struct sort_ctx {
	const struct gt_live_stat *total;
	const struct gt_live_count *interval;
	enum gt_live_sort key;
};

static double key_of(enum gt_live_sort key, uint64_t count, uint64_t ns)
{
	switch (key) {
	case GT_LIVE_SORT_COUNT:
		return (double)count;
	case GT_LIVE_SORT_MEAN:
		return count ? (double)ns / (double)count : 0.0;
	default:
		return (double)ns;
	}
}

static int cmp_desc(double a, double b)
{
	return a > b ? -1 : a < b;
}

static int cmp_rows(const void *pa, const void *pb, void *arg)
{
	const struct sort_ctx *c = arg;
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
	int r = 0;

	if (c->interval)
		r = cmp_desc(key_of(c->key, c->interval[a].count, c->interval[a].ns),
		             key_of(c->key, c->interval[b].count, c->interval[b].ns));
	if (!r)
		r = cmp_desc(key_of(c->key, c->total[a].count, c->total[a].total_ns),
		             key_of(c->key, c->total[b].count, c->total[b].total_ns));
	return r ? r : (a > b) - (a < b);
}

void gt_live_sort(const struct gt_live_stat *total, const struct gt_live_count *interval, size_t n,
                  enum gt_live_sort key, uint32_t *order)
{
	struct sort_ctx c = {total, interval, key};

	for (size_t i = 0; i < n; i++)
		order[i] = (uint32_t)i;
	qsort_r(order, n, sizeof(*order), cmp_rows, &c);
}

const char *gt_live_sort_name(enum gt_live_sort key)
{
	static const char *const names[GT_LIVE_SORT_MAX] = {"time", "count", "mean"};

	return key < GT_LIVE_SORT_MAX ? names[key] : "time";
}

/* ---- kernel names that fit ---- */

/* Nesting change of character c: +1 for ( < [, -1 for ) > ], 0 else. */
static int nest(char c)
{
	return (c == '(' || c == '<' || c == '[') - (c == ')' || c == '>' || c == ']');
}

/* Without the parameter list at the end ("(float*, int)") and the return type before the
 * name ("void "): both are outside every bracket. */
static void strip_signature(char *s)
{
	size_t len = strlen(s), start = 0;
	int depth = 0;

	if (len && s[len - 1] == ')') {
		for (size_t i = len; i-- > 0;) {
			depth += nest(s[i]) * -1;
			/* walking backwards: ')' opens, '(' closes */
			if (depth == 0 && s[i] == '(') {
				s[i] = '\0';
				len = i;
				break;
			}
		}
	}
	depth = 0;
	for (size_t i = 0; i < len; i++) {
		depth += nest(s[i]);
		if (depth == 0 && s[i] == ' ')
			start = i + 1;
	}
	memmove(s, s + start, len - start + 1);
}

/* in with every outermost template argument list longer than "<...>" folded to it, into out:
 * never longer than in. */
static void fold_templates(const char *in, char *out)
{
	size_t o = 0, i = 0;

	while (in[i]) {
		size_t j = i + 1;
		int depth = 1;

		if (in[i] != '<') {
			out[o++] = in[i++];
			continue;
		}
		for (; in[j] && depth; j++)
			depth += (in[j] == '<') - (in[j] == '>');
		/* [i, j) is the list, brackets included (or the rest, when unbalanced) */
		if (depth == 0 && j - i > 5) {
			memcpy(out + o, "<...>", 5);
			o += 5;
		} else {
			memcpy(out + o, in + i, j - i);
			o += j - i;
		}
		i = j;
	}
	out[o] = '\0';
}

/* Without its first "namespace::" outside brackets; false when it has none. */
static bool drop_namespace(char *s)
{
	int depth = 0;

	for (size_t i = 0; s[i]; i++) {
		depth += nest(s[i]);
		if (depth == 0 && s[i] == ':' && s[i + 1] == ':') {
			memmove(s, s + i + 2, strlen(s + i + 2) + 1);
			return true;
		}
	}
	return false;
}

char *gt_live_shorten(const char *name, size_t width, char *buf, size_t buf_bytes)
{
	char work[GT_LIVE_NAME_MAX];
	size_t len;

	if (!buf_bytes)
		return buf;
	if (width >= buf_bytes)
		width = buf_bytes - 1;
	if (!name)
		name = "";
	len = strlen(name);
	if (len <= width) {
		memcpy(buf, name, len + 1);
		return buf;
	}
	/* the steps below only shorten, so working in buf needs the whole name there */
	if (len < buf_bytes && len < sizeof(work)) {
		memcpy(work, name, len + 1);
		strip_signature(work);
		if (strlen(work) > width)
			fold_templates(work, buf);
		else
			memcpy(buf, work, strlen(work) + 1);
		while (strlen(buf) > width && drop_namespace(buf))
			;
		if (strlen(buf) <= width)
			return buf;
		name = buf;
	}
	if (width >= 4) {
		memmove(buf, name, width - 3);
		memcpy(buf + width - 3, "...", 4);
	} else {
		memmove(buf, name, width);
		buf[width] = '\0';
	}
	return buf;
}
