/* The hash map of idmap.h: creation, growth, insertion; the entry arrays. Runs in the CLI. */
#include <errno.h>
#include <stdlib.h>

#include "idmap.h"

int gt_idmap_init(struct gt_idmap *m, uint32_t slots)
{
	m->e = calloc(slots, sizeof(*m->e));
	if (!m->e)
		return -ENOMEM;
	m->mask = slots - 1;
	m->used = 0;
	return 0;
}

void gt_idmap_fini(struct gt_idmap *m)
{
	free(m->e);
	m->e = NULL;
	m->mask = 0;
	m->used = 0;
}

int gt_idmap_put(struct gt_idmap *m, uint64_t a, uint64_t b, uint32_t v)
{
	if ((m->used + 1) * 2 > m->mask + 1) {
		struct gt_idmap bigger;

		if (gt_idmap_init(&bigger, (m->mask + 1) * 2) < 0)
			return -ENOMEM;
		for (uint32_t i = 0; i <= m->mask; i++)
			if (m->e[i].v)
				gt_idmap_put(&bigger, m->e[i].a, m->e[i].b, m->e[i].v);
		free(m->e);
		*m = bigger;
	}
	for (uint32_t i = gt_idmap_hash(a, b) & m->mask;; i = (i + 1) & m->mask) {
		struct gt_idmap_entry *e = &m->e[i];

		if (e->v == 0) {
			e->a = a;
			e->b = b;
			e->v = v;
			m->used++;
			return 0;
		}
		if (e->a == a && e->b == b) {
			e->v = v;
			return 0;
		}
	}
}

int gt_idmap_append(void ***arr, uint32_t *n, uint32_t *cap, void *p)
{
	if (*n == *cap) {
		uint32_t ncap = *cap ? *cap * 2 : 16;
		void **a = realloc(*arr, ncap * sizeof(**arr));

		if (!a)
			return -ENOMEM;
		*arr = a;
		*cap = ncap;
	}
	(*arr)[(*n)++] = p;
	return 0;
}
