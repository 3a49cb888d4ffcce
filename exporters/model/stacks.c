/* A trace's call stacks: STACK records joined per (process, stack id), MODULE records kept per
 * process, and each stack's native frames symbolized on first use (symbolize.c). Runs in the
 * CLI. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "idmap.h"
#include "stacks.h"
#include "symbolize.h"

struct mod {
	uint32_t pid;
	uint64_t start, end, bias;
	char *path, *build_id; /* owned */
};

struct stk {
	uint32_t pid, id, depth;
	bool resolved;
	uint64_t pc[GT_STACK_DEPTH_MAX];
	struct gt_stack_sym sym[GT_STACK_DEPTH_MAX];
	char *text[GT_STACK_DEPTH_MAX]; /* owned symbol strings */
};

struct gt_stacks {
	struct gt_idmap map; /* (pid, id) -> index + 1 */
	struct stk **stk;
	uint32_t n, cap;
	struct mod *mods;
	size_t nmods, capmods;
	struct gt_symbolizer *sym;
};

int gt_stacks_new(struct gt_stacks **ret)
{
	struct gt_stacks *s = calloc(1, sizeof(*s));

	if (!s || gt_idmap_init(&s->map, 64) < 0 || gt_symbolizer_new(&s->sym) < 0) {
		if (s)
			gt_idmap_fini(&s->map);
		free(s);
		return -ENOMEM;
	}
	*ret = s;
	return 0;
}

void gt_stacks_free(struct gt_stacks *s)
{
	if (!s)
		return;
	for (uint32_t i = 0; i < s->n; i++) {
		for (unsigned k = 0; k < GT_STACK_DEPTH_MAX; k++)
			free(s->stk[i]->text[k]);
		free(s->stk[i]);
	}
	free(s->stk);
	for (size_t i = 0; i < s->nmods; i++) {
		free(s->mods[i].path);
		free(s->mods[i].build_id);
	}
	free(s->mods);
	gt_idmap_fini(&s->map);
	gt_symbolizer_free(s->sym);
	free(s);
}

static char *dup_string(const struct gt_reader *r, uint32_t id)
{
	const char *t = id ? gt_reader_string(r, id, NULL) : NULL;

	return strdup(t ? t : "");
}

static int add_module(struct gt_stacks *s, const struct gt_reader *r,
                      const struct gt_rec_module *m)
{
	struct mod *x;

	if (s->nmods == s->capmods) {
		size_t cap = s->capmods ? 2 * s->capmods : 16;
		struct mod *n = realloc(s->mods, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		s->mods = n;
		s->capmods = cap;
	}
	x = &s->mods[s->nmods];
	*x = (struct mod){m->hdr.pid, m->start, m->end, m->bias, dup_string(r, m->path_id),
	                  dup_string(r, m->build_id)};
	if (!x->path || !x->build_id) {
		free(x->path);
		free(x->build_id);
		return -ENOMEM;
	}
	s->nmods++;
	return 0;
}

static int add_stack(struct gt_stacks *s, const struct gt_rec_stack *st)
{
	uint32_t v = gt_idmap_get(&s->map, st->hdr.pid, st->stack_id);
	struct stk *k;

	if (!st->stack_id || st->depth > GT_STACK_DEPTH_MAX || st->first >= GT_STACK_DEPTH_MAX)
		return 0; /* not one this reader can hold */
	if (v) {
		k = s->stk[v - 1];
	} else {
		k = calloc(1, sizeof(*k));
		if (!k || gt_idmap_append((void ***)&s->stk, &s->n, &s->cap, k) < 0 ||
		    gt_idmap_put(&s->map, st->hdr.pid, st->stack_id, s->n) < 0) {
			free(k);
			return -ENOMEM;
		}
		k->pid = st->hdr.pid;
		k->id = st->stack_id;
		k->depth = st->depth;
	}
	for (unsigned i = 0; i < GT_STACK_FRAMES_PER_REC && st->first + i < k->depth; i++)
		k->pc[st->first + i] = st->frames[i].pc;
	return 0;
}

int gt_stacks_add(struct gt_stacks *s, const struct gt_reader *r, const union gt_record *rec)
{
	if (rec->hdr.type == GT_REC_MODULE)
		return add_module(s, r, &rec->module);
	if (rec->hdr.type == GT_REC_STACK)
		return add_stack(s, &rec->stack);
	return 0;
}

int gt_stacks_load(struct gt_stacks *s, struct gt_reader *r)
{
	const struct gt_trace_counts *c = gt_reader_footer_counts(r);
	const union gt_record *rec;
	int ret;

	if (c && !c->records[GT_REC_STACK])
		return 0;
	while ((ret = gt_reader_next(r, &rec)) > 0) {
		ret = gt_stacks_add(s, r, rec);
		if (ret < 0)
			return ret;
	}
	if (ret < 0)
		return ret;
	return gt_reader_rewind(r);
}

static const struct mod *module_of(const struct gt_stacks *s, uint32_t pid, uint64_t pc)
{
	/* the latest first: a range unmapped and mapped again holds its newest file */
	for (size_t i = s->nmods; i-- > 0;)
		if (s->mods[i].pid == pid && pc >= s->mods[i].start && pc < s->mods[i].end)
			return &s->mods[i];
	return NULL;
}

static void resolve(struct gt_stacks *s, struct stk *k)
{
	char buf[4096];

	for (unsigned i = 0; i < k->depth; i++) {
		const struct mod *m = module_of(s, k->pid, k->pc[i]);
		const char *name = NULL;
		bool unresolved;

		/* a return address: the call is the instruction before it */
		if (m && k->pc[i])
			name = gt_symbolize(s->sym, m->path, m->build_id, k->pc[i] - 1 - m->bias,
			                    buf, sizeof(buf));
		unresolved = !name;
		if (!name) {
			snprintf(buf, sizeof(buf), "0x%" PRIx64, k->pc[i]);
			name = buf;
		}
		k->text[i] = strdup(name);
		k->sym[i] = (struct gt_stack_sym){k->pc[i], k->text[i] ? k->text[i] : "",
		                                  m ? m->path : "", unresolved};
	}
	k->resolved = true;
}

const struct gt_stack_sym *gt_stacks_get(struct gt_stacks *s, uint32_t pid, uint32_t id,
                                         unsigned *n)
{
	uint32_t v = id ? gt_idmap_get(&s->map, pid, id) : 0;
	struct stk *k;

	if (!v)
		return NULL;
	k = s->stk[v - 1];
	if (!k->resolved)
		resolve(s, k);
	*n = k->depth;
	return k->sym;
}

uint32_t gt_stacks_count(const struct gt_stacks *s)
{
	return s->n;
}
