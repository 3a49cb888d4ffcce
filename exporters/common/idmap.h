/* A small hash map from a pair of 64-bit keys to a 32-bit value (an index + 1), open
 * addressing with linear probing, doubling at half full; and the arrays of entries it indexes.
 * The timeline model, the name cache and the catalog find their entries with it. Runs in the
 * CLI. */
#ifndef GPUTRACE_EXPORTERS_IDMAP_H
#define GPUTRACE_EXPORTERS_IDMAP_H

#include <stdint.h>

struct gt_idmap_entry {
	uint64_t a, b;
	uint32_t v; /* 0 = empty slot, else index + 1 */
};

struct gt_idmap {
	struct gt_idmap_entry *e; /* mask + 1 slots; owned */
	uint32_t mask;            /* slots - 1 */
	uint32_t used;
};

/* slots: a power of two. Returns 0 or -ENOMEM. */
int gt_idmap_init(struct gt_idmap *m, uint32_t slots);
void gt_idmap_fini(struct gt_idmap *m);

/* Set (a, b) -> v (v > 0), replacing an existing value. Returns 0 or -ENOMEM. */
int gt_idmap_put(struct gt_idmap *m, uint64_t a, uint64_t b, uint32_t v);

static inline uint32_t gt_idmap_hash(uint64_t a, uint64_t b)
{
	uint64_t x = a * 0x9e3779b97f4a7c15ull + b;

	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	x ^= x >> 31;
	return (uint32_t)x;
}

/* Append p to a growable array of pointers *arr of *n entries (room for *cap; 16 at first,
 * then doubling): the entry tables whose indexes the maps hold. Returns 0 or -ENOMEM (the
 * array unchanged). */
int gt_idmap_append(void ***arr, uint32_t *n, uint32_t *cap, void *p);

/* The value of (a, b), 0 if absent. Inline: the exporters look up once per record. */
static inline uint32_t gt_idmap_get(const struct gt_idmap *m, uint64_t a, uint64_t b)
{
	for (uint32_t i = gt_idmap_hash(a, b) & m->mask;; i = (i + 1) & m->mask) {
		const struct gt_idmap_entry *e = &m->e[i];

		if (e->v == 0)
			return 0;
		if (e->a == a && e->b == b)
			return e->v;
	}
}

#endif /* GPUTRACE_EXPORTERS_IDMAP_H */
