/* String interning: an open-addressing hash table from content to dense ids 1..n, with an
 * id-indexed array for the way back. Runs in the CLI (drainer, exporters) and in the
 * standalone drainer thread of the injection library; never on an application hot path. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "strtab.h"

/* One interned string. The bytes follow the struct, NUL-terminated, in the same allocation. */
struct gt_str {
	size_t len;    /* bytes, without the trailing NUL */
	uint64_t hash; /* full hash, so probes and rehashing never re-read the bytes */
	char bytes[];
};

struct gt_strtab {
	/* Slots hold ids (0 = empty); linear probing; capacity a power of two, at most 1/2 full
	 * so probe sequences stay short and every probe loop finds an empty slot. */
	uint32_t *slots;
	size_t mask;          /* capacity - 1 */
	struct gt_str **strs; /* strs[id - 1]; owned */
	uint32_t count;
	uint32_t cap_strs;
};

#define INITIAL_SLOTS 64u

int gt_strtab_new(struct gt_strtab **ret)
{
	struct gt_strtab *t = calloc(1, sizeof(*t));

	if (!t)
		return -ENOMEM;
	t->slots = calloc(INITIAL_SLOTS, sizeof(*t->slots));
	if (!t->slots) {
		free(t);
		return -ENOMEM;
	}
	t->mask = INITIAL_SLOTS - 1;
	*ret = t;
	return 0;
}

void gt_strtab_free(struct gt_strtab *t)
{
	if (!t)
		return;
	for (uint32_t i = 0; i < t->count; i++)
		free(t->strs[i]);
	free(t->strs);
	free(t->slots);
	free(t);
}

/* Double the slot array and reinsert every id; uses the stored hashes. */
static int grow_slots(struct gt_strtab *t)
{
	size_t cap = (t->mask + 1) * 2;
	uint32_t *slots = calloc(cap, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (uint32_t id = 1; id <= t->count; id++) {
		size_t i = (size_t)t->strs[id - 1]->hash & (cap - 1);

		while (slots[i])
			i = (i + 1) & (cap - 1);
		slots[i] = id;
	}
	free(t->slots);
	t->slots = slots;
	t->mask = cap - 1;
	return 0;
}

int gt_strtab_intern(struct gt_strtab *t, const char *s, size_t len, uint32_t *id)
{
	uint64_t h = gt_hash_bytes(s, len);
	size_t i = (size_t)h & t->mask;
	struct gt_str *str;
	int r;

	for (; t->slots[i]; i = (i + 1) & t->mask) {
		const struct gt_str *e = t->strs[t->slots[i] - 1];

		if (e->hash == h && e->len == len && memcmp(e->bytes, s, len) == 0) {
			*id = t->slots[i];
			return 0;
		}
	}
	/* ids are u32 and 0 is reserved: refuse rather than wrap */
	if (t->count == UINT32_MAX - 1 || len > SIZE_MAX - sizeof(*str) - 1)
		return -ENOMEM;
	if (t->count == t->cap_strs) {
		uint32_t cap = t->cap_strs ? t->cap_strs * 2 : 64;
		struct gt_str **strs;

		if (cap < t->cap_strs) /* overflow past 2^31 strings */
			cap = UINT32_MAX;
		strs = realloc(t->strs, (size_t)cap * sizeof(*strs));
		if (!strs)
			return -ENOMEM;
		t->strs = strs;
		t->cap_strs = cap;
	}
	str = malloc(sizeof(*str) + len + 1);
	if (!str)
		return -ENOMEM;
	str->len = len;
	str->hash = h;
	if (len)
		memcpy(str->bytes, s, len);
	str->bytes[len] = '\0';
	t->strs[t->count++] = str;
	t->slots[i] = t->count;
	*id = t->count;
	/* keep the load factor at most 1/2 */
	if ((size_t)t->count * 2 > t->mask + 1) {
		r = grow_slots(t);
		if (r < 0) {
			/* still consistent: the slot array is only fuller than we like, but it
			 * must keep one empty slot, so undo the insertion if it was the last */
			if ((size_t)t->count > t->mask) {
				t->slots[i] = 0;
				free(t->strs[--t->count]);
				return r;
			}
		}
	}
	return 1;
}

const char *gt_strtab_get(const struct gt_strtab *t, uint32_t id, size_t *len)
{
	const struct gt_str *s;

	if (!t || id == 0 || id > t->count)
		return NULL;
	s = t->strs[id - 1];
	if (len)
		*len = s->len;
	return s->bytes;
}

int gt_strtab_dense_reserve(uint32_t **tab, size_t *cap, size_t id, size_t first)
{
	size_t n = *cap ? *cap : first;
	uint32_t *a;

	if (id < *cap)
		return 0;
	while (n <= id)
		n *= 2;
	a = realloc(*tab, n * sizeof(*a));
	if (!a)
		return -ENOMEM;
	memset(a + *cap, 0, (n - *cap) * sizeof(*a));
	*tab = a;
	*cap = n;
	return 0;
}

uint32_t gt_strtab_count(const struct gt_strtab *t)
{
	return t ? t->count : 0;
}
