/* The exporters' name cache (see names.h). Runs in the CLI. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "demangle.h"
#include "gputrace/record.h"
#include "names.h"
#include "strtab.h"
#include "text.h"

#define SCRATCH_DEMANGLE (64u * 1024u)

int gt_names_init(struct gt_names *nc, struct gt_reader *reader, bool demangle, gt_names_fn fn,
                  size_t expand)
{
	memset(nc, 0, sizeof(*nc));
	nc->reader = reader;
	nc->demangle = demangle;
	nc->fn = fn;
	nc->expand = expand ? expand : 1;
	if (gt_idmap_init(&nc->map, 1024) < 0)
		return -ENOMEM;
	nc->scratch_cap = SCRATCH_DEMANGLE * (1 + nc->expand) + GT_STRING_MAX + 64;
	nc->scratch = malloc(nc->scratch_cap);
	if (!nc->scratch) {
		gt_names_fini(nc);
		return -ENOMEM;
	}
	return 0;
}

void gt_names_fini(struct gt_names *nc)
{
	gt_idmap_fini(&nc->map);
	free(nc->direct);
	free(nc->text);
	free(nc->off);
	free(nc->lens);
	free(nc->scratch);
	memset(nc, 0, sizeof(*nc));
}

/* Store out[0..len) as cached name number n + 1 under (a, b). */
static const char *name_store(struct gt_names *nc, uint64_t a, uint64_t b, const char *out,
                              size_t need, size_t *len, uint32_t *iid, bool *fresh)
{
	if (nc->n == nc->cap) {
		uint32_t ncap = nc->cap ? nc->cap * 2 : 256;
		uint32_t *no = realloc(nc->off, ncap * sizeof(*no));

		if (!no)
			return NULL;
		nc->off = no;
		uint32_t *nl = realloc(nc->lens, ncap * sizeof(*nl));

		if (!nl)
			return NULL;
		nc->lens = nl;
		nc->cap = ncap;
	}
	if (nc->text_len + need + 1 > nc->text_cap) {
		size_t ncap = nc->text_cap ? nc->text_cap * 2 : 64 * 1024;
		char *nn;

		while (ncap < nc->text_len + need + 1)
			ncap *= 2;
		nn = realloc(nc->text, ncap);
		if (!nn)
			return NULL;
		nc->text = nn;
		nc->text_cap = ncap;
	}
	memcpy(nc->text + nc->text_len, out, need);
	nc->text[nc->text_len + need] = '\0';
	nc->off[nc->n] = (uint32_t)nc->text_len;
	nc->lens[nc->n] = (uint32_t)need;
	nc->text_len += need + 1;
	nc->n++;
	if (gt_idmap_put(&nc->map, a, b, nc->n) < 0)
		return NULL;
	*len = need;
	if (iid)
		*iid = nc->n;
	if (fresh)
		*fresh = true;
	return nc->text + nc->off[nc->n - 1];
}

static const char *name_cached(struct gt_names *nc, uint32_t v, size_t *len, uint32_t *iid,
                               bool *fresh)
{
	*len = nc->lens[v - 1];
	if (iid)
		*iid = v;
	if (fresh)
		*fresh = false;
	return nc->text + nc->off[v - 1];
}

/* Remember name v under (id, dm) in the direct table when the id is small. */
static void name_direct_put(struct gt_names *nc, uint32_t id, bool dm, uint32_t v)
{
	uint32_t k = id * 2 + dm;

	if (id >= GT_NAMES_DIRECT)
		return;
	if (gt_strtab_dense_reserve(&nc->direct, &nc->direct_cap, k, 1024) < 0)
		return; /* the hash map still has it */
	nc->direct[k] = v;
}

const char *gt_names_get(struct gt_names *nc, uint32_t id, bool kernel, size_t *len, uint32_t *iid,
                         bool *fresh)
{
	bool dm = kernel && nc->demangle;
	uint32_t k = id * 2 + dm;
	uint32_t v = id < GT_NAMES_DIRECT && k < nc->direct_cap ? nc->direct[k] : 0;
	const char *src = NULL, *ret;
	size_t slen = 0;
	char *in, *out, *end;

	if (v)
		return name_cached(nc, v, len, iid, fresh);
	v = gt_idmap_get(&nc->map, id, dm);
	if (v) {
		name_direct_put(nc, id, dm, v);
		return name_cached(nc, v, len, iid, fresh);
	}
	in = nc->scratch;
	if (nc->reader)
		src = gt_reader_string(nc->reader, id, &slen);
	if (!src) {
		char *p = in;

		memcpy(p, "<unknown string ", 16);
		p = gt_fmt_u64(p + 16, id);
		*p++ = '>';
		slen = (size_t)(p - in);
	} else {
		if (slen > GT_STRING_MAX)
			slen = GT_STRING_MAX;
		memcpy(in, src, slen);
	}
	in[slen] = '\0';
	src = in;
	if (dm && slen > 2 && in[0] == '_' && in[1] == 'Z' && strlen(in) == slen) {
		char *dbuf = in + GT_STRING_MAX + 1;

		src = gt_demangle(in, dbuf, SCRATCH_DEMANGLE);
		slen = strlen(src);
	}
	out = nc->scratch + GT_STRING_MAX + 1 + SCRATCH_DEMANGLE;
	end = nc->fn ? nc->fn(out, src, slen) : (memcpy(out, src, slen), out + slen);
	ret = name_store(nc, id, dm, out, (size_t)(end - out), len, iid, fresh);
	if (ret)
		name_direct_put(nc, id, dm, nc->n);
	return ret;
}

const char *gt_names_key2(struct gt_names *nc, uint64_t a, uint64_t b, const char *s, size_t slen,
                          size_t *len, uint32_t *iid, bool *fresh)
{
	uint32_t v = gt_idmap_get(&nc->map, a, b);
	char *out, *end;

	if (v)
		return name_cached(nc, v, len, iid, fresh);
	if (slen > GT_STRING_MAX)
		slen = GT_STRING_MAX;
	out = nc->scratch + GT_STRING_MAX + 1 + SCRATCH_DEMANGLE;
	end = nc->fn ? nc->fn(out, s, slen) : (memcpy(out, s, slen), out + slen);
	return name_store(nc, a, b, out, (size_t)(end - out), len, iid, fresh);
}

const char *gt_names_key(struct gt_names *nc, uint64_t key, const char *s, size_t slen, size_t *len,
                         uint32_t *iid, bool *fresh)
{
	return gt_names_key2(nc, key, 2, s, slen, len, iid, fresh);
}

const char *gt_names_text(const struct gt_names *nc, uint32_t iid, size_t *len)
{
	if (iid == 0 || iid > nc->n)
		return NULL;
	*len = nc->lens[iid - 1];
	return nc->text + nc->off[iid - 1];
}
