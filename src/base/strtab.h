/* String interning: content -> dense id (1, 2, ...) and back. Not thread-safe; used by the
 * drainer (one table per trace) and by exporters. Runs in the CLI (and the standalone
 * drainer thread). */
#ifndef GPUTRACE_STRTAB_H
#define GPUTRACE_STRTAB_H

#include <stddef.h>
#include <stdint.h>

struct gt_strtab;

/* Returns 0 and *ret, or -ENOMEM. */
int gt_strtab_new(struct gt_strtab **ret);
void gt_strtab_free(struct gt_strtab *t);

/* Intern len bytes of s (need not be NUL-terminated). Writes the id to *id.
 * Returns 1 if the string was new, 0 if it was already there, -ENOMEM. */
int gt_strtab_intern(struct gt_strtab *t, const char *s, size_t len, uint32_t *id);

/* Bytes of string `id` (NUL-terminated copy), or NULL if unknown. len may be NULL. */
const char *gt_strtab_get(const struct gt_strtab *t, uint32_t id, size_t *len);

/* Number of strings interned; ids are 1..count. */
uint32_t gt_strtab_count(const struct gt_strtab *t);

/* Make entry `id` of *tab exist: a table indexed by string id whose entries are 0 until set
 * (the readers' and exporters' caches of what an id maps to). The table doubles from `first`
 * entries (*cap 0, *tab NULL: none yet) and its new entries are zeroed. Returns 0, or -ENOMEM
 * with the table unchanged. */
int gt_strtab_dense_reserve(uint32_t **tab, size_t *cap, size_t id, size_t first);

#endif /* GPUTRACE_STRTAB_H */
