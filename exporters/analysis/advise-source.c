/* Where in the code a finding comes from (advise.h): when a trace has stacks (run --backtrace),
 * each instance whose call carries one is charged to that stack, per rule and process; once the
 * trace is read, each stack is put in words - the frame of the program's own that
 * gt_stacks_user_frame picks: a Python line, else a native function - and the costs are
 * summed per place across every trace, so a finding can name the places that cost it most.
 * Runs in the CLI. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "advise-int.h"
#include "stacks.h"
#include "text.h"

/* One (rule, process, stack) of the trace being read, or one place of a rule across traces. */
struct adv_src {
	uint64_t cost_ns;
	uint64_t count;
	uint32_t rule, pid, stack;
	char where[GT_ADVISE_WHERE_BYTES]; /* across traces only */
};

bool adv_source(struct adv_trace *t, uint32_t pid, uint32_t stack, char *buf, size_t bytes)
{
	const struct gt_stack_sym *f;
	unsigned n = 0, k;

	if (!stack || !t->stacks)
		return false;
	f = gt_stacks_get(t->stacks, pid, stack, &n);
	if (!f || !n)
		return false;
	k = gt_stacks_user_frame(f, n);
	if (f[k].python)
		snprintf(buf, bytes, "%s(%d): %s", f[k].module, (int)f[k].line, f[k].symbol);
	else if (f[k].module[0])
		snprintf(buf, bytes, "%s (%s)", f[k].symbol, gt_text_basename(f[k].module));
	else
		snprintf(buf, bytes, "%s", f[k].symbol);
	return true;
}

int adv_source_note(struct adv_trace *t, unsigned rule, uint32_t pid, uint32_t stack,
                    uint64_t cost_ns)
{
	uint64_t key = (uint64_t)rule << 32 | pid;
	uint32_t v = gt_idmap_get(&t->src_map, key, stack);
	struct adv_src *s;

	if (!v) {
		if (t->nsrc == t->capsrc) {
			size_t cap = t->capsrc ? 2 * t->capsrc : 16;
			struct adv_src *p = realloc(t->src, cap * sizeof(*p));

			if (!p)
				return -ENOMEM;
			t->src = p;
			t->capsrc = cap;
		}
		if (gt_idmap_put(&t->src_map, key, stack, (uint32_t)t->nsrc + 1) < 0)
			return -ENOMEM;
		s = &t->src[t->nsrc++];
		memset(s, 0, sizeof(*s));
		s->rule = rule;
		s->pid = pid;
		s->stack = stack;
	} else {
		s = &t->src[v - 1];
	}
	s->cost_ns += cost_ns;
	s->count++;
	return 0;
}

static uint64_t fnv(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return h;
}

/* Add cost and count to place `where` of rule in p. Returns 0 or -ENOMEM. */
static int place_add(struct adv_priv *p, unsigned rule, const char *where, uint64_t cost_ns,
                     uint64_t count)
{
	uint64_t h = fnv(where);
	uint32_t v = gt_idmap_get(&p->place_map, rule, h);
	struct adv_src *s;

	if (v && strcmp(p->places[v - 1].where, where) != 0) {
		/* two places of one hash: find it the slow way */
		v = 0;
		for (size_t i = 0; i < p->nplaces && !v; i++)
			if (p->places[i].rule == rule && strcmp(p->places[i].where, where) == 0)
				v = (uint32_t)i + 1;
	}
	if (!v) {
		if (p->nplaces == p->capplaces) {
			size_t cap = p->capplaces ? 2 * p->capplaces : 16;
			struct adv_src *q = realloc(p->places, cap * sizeof(*q));

			if (!q)
				return -ENOMEM;
			p->places = q;
			p->capplaces = cap;
		}
		s = &p->places[p->nplaces];
		memset(s, 0, sizeof(*s));
		s->rule = rule;
		snprintf(s->where, sizeof(s->where), "%s", where);
		if (!gt_idmap_get(&p->place_map, rule, h) &&
		    gt_idmap_put(&p->place_map, rule, h, (uint32_t)p->nplaces + 1) < 0)
			return -ENOMEM;
		v = (uint32_t)++p->nplaces;
	}
	s = &p->places[v - 1];
	s->cost_ns += cost_ns;
	s->count += count;
	return 0;
}

int adv_source_trace_done(struct gt_advise *a, struct adv_trace *t)
{
	struct adv_priv *p = a->priv;
	char where[GT_ADVISE_WHERE_BYTES];

	for (size_t i = 0; i < t->nsrc; i++) {
		const struct adv_src *s = &t->src[i];

		if (!adv_source(t, s->pid, s->stack, where, sizeof(where)))
			continue;
		if (place_add(p, s->rule, where, s->cost_ns, s->count) < 0)
			return -ENOMEM;
	}
	return 0;
}

static int cmp_place(const void *x, const void *y)
{
	const struct adv_src *a = x, *b = y;

	if (a->rule != b->rule)
		return a->rule < b->rule ? -1 : 1;
	if (a->cost_ns != b->cost_ns)
		return a->cost_ns > b->cost_ns ? -1 : 1;
	if (a->count != b->count)
		return a->count > b->count ? -1 : 1;
	return strcmp(a->where, b->where);
}

void adv_source_finish(struct gt_advise *a)
{
	struct adv_priv *p = a->priv;

	adv_sort(p->places, p->nplaces, sizeof(*p->places), cmp_place);
	for (size_t i = 0; i < p->nplaces; i++) {
		const struct adv_src *s = &p->places[i];
		struct gt_advise_finding *f = &p->acc[s->rule];
		struct gt_advise_source *o;

		f->located += s->count;
		f->nplaces++;
		if (f->nsources >= GT_ADVISE_SOURCES)
			continue;
		o = &f->sources[f->nsources++];
		o->cost_ns = s->cost_ns;
		o->count = s->count;
		snprintf(o->where, sizeof(o->where), "%s", s->where);
	}
}

void adv_source_free(struct adv_priv *p)
{
	free(p->places);
	gt_idmap_fini(&p->place_map);
}

void adv_source_trace_fini(struct adv_trace *t)
{
	gt_stacks_free(t->stacks);
	free(t->src);
	gt_idmap_fini(&t->src_map);
}
