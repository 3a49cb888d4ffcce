/* The exporters' name cache: each trace string (or name an exporter makes, such as
 * "Memcpy HtoD (Pageable -> Device)") transformed once - demangled, escaped for JSON,
 * cleaned for UTF-8 - and kept with a dense id, so the drawing of an event costs a table
 * lookup. Memory grows with the number of distinct names. Runs in the CLI. */
#ifndef GPUTRACE_EXPORTERS_NAMES_H
#define GPUTRACE_EXPORTERS_NAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gputrace/trace.h"
#include "idmap.h"

/* Ids below this are looked up in a flat table (ids are dense); larger ones in the map. */
#define GT_NAMES_DIRECT (1u << 22)

/* How names are stored: writes the transformed s[0..len) at dst, returns the end. */
typedef char *(*gt_names_fn)(char *dst, const char *s, size_t len);

struct gt_names {
	struct gt_reader *reader; /* borrowed: where string ids are looked up; may be NULL */
	bool demangle;            /* demangle kernel names */
	gt_names_fn fn;           /* NULL: stored as they are */
	size_t expand;            /* worst-case output bytes per input byte of fn */

	struct gt_idmap map; /* (id, demangled) or a caller's key -> name */
	uint32_t *direct;    /* (id * 2 + demangled) -> name, for ids below GT_NAMES_DIRECT;
	                      * 0 = not cached */
	size_t direct_cap;   /* entries allocated */
	char *text;          /* arena of cached names, NUL-separated; owned */
	size_t text_len, text_cap;
	uint32_t *off;   /* per cached name: offset in text */
	uint32_t *lens;  /* per cached name: bytes */
	uint32_t n, cap; /* cached names */
	char *scratch;   /* demangle and transform buffer; owned */
	size_t scratch_cap;
};

/* reader may be NULL (every id is then unknown). Returns 0 or -ENOMEM. */
int gt_names_init(struct gt_names *nc, struct gt_reader *reader, bool demangle, gt_names_fn fn,
                  size_t expand);
void gt_names_fini(struct gt_names *nc);

/* Cached text of string `id` (demangled first when `kernel` and demangling is on),
 * transformed by fn. Unknown ids give "<unknown string N>". NULL only on -ENOMEM.
 * Valid until the next call. *iid: a dense id for this name (1, 2, ...), *fresh: true the
 * first time (perfetto interns it then); both may be NULL. */
const char *gt_names_get(struct gt_names *nc, uint32_t id, bool kernel, size_t *len, uint32_t *iid,
                         bool *fresh);

/* Same for a name made by the exporter ("Memcpy HtoD (Pageable -> Device)"), cached under
 * `key` (the caller's choice, any 64-bit value): s is used only the first time. */
const char *gt_names_key(struct gt_names *nc, uint64_t key, const char *s, size_t slen, size_t *len,
                         uint32_t *iid, bool *fresh);

/* Same with a 128-bit key whose second half is at least 2^32 (ids and the keys above use
 * smaller ones), e.g. a grid's three dimensions. */
const char *gt_names_key2(struct gt_names *nc, uint64_t a, uint64_t b, const char *s, size_t slen,
                          size_t *len, uint32_t *iid, bool *fresh);

/* The cached name with dense id iid (as *iid above gave it), where it is now: a pointer
 * taken before another name was cached may point where the arena was. NULL for an unknown
 * iid. */
const char *gt_names_text(const struct gt_names *nc, uint32_t iid, size_t *len);

#endif /* GPUTRACE_EXPORTERS_NAMES_H */
