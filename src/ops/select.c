/* What a trace holds that the filters of a window can name - its processes, ranks, CUDA
 * devices and streams - read from its state chunks, so that a command can refuse a window
 * that selects nothing and say what there is instead. Runs in the CLI. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "window.h"

/* Chunks that may hold definitions: the index says so, or cannot say. */
static bool definitions_cb(void *ctx, const struct gt_chunk_info *c)
{
	(void)ctx;
	return !c->have_types || (c->types & ((1ull << GT_REC_PROCESS) | (1ull << GT_REC_DEVICE) |
	                                      (1ull << GT_REC_STREAM) | (1ull << GT_REC_CONTEXT)));
}

/* Add id to ids[0..*n) (cap GT_WINDOW_SELECTABLE_MAX) unless there; *more when full. */
static void add(uint32_t *ids, unsigned *n, bool *more, uint32_t id)
{
	for (unsigned i = 0; i < *n; i++)
		if (ids[i] == id)
			return;
	if (*n == GT_WINDOW_SELECTABLE_MAX) {
		*more = true;
		return;
	}
	ids[(*n)++] = id;
}

int gt_window_selectable(struct gt_reader *r, struct gt_window_selectable **ret)
{
	struct gt_reader_filter only = {.chunk = definitions_cb};
	struct gt_window_selectable *s = calloc(1, sizeof(*s));
	const union gt_record *rec;
	bool unused = false;
	int err;

	if (!s)
		return -ENOMEM;
	err = gt_reader_set_filter(r, &only);
	if (err == 0)
		err = gt_reader_rewind(r);
	while (err == 0 && (err = gt_reader_next(r, &rec)) > 0) {
		err = 0;
		switch (rec->hdr.type) {
		case GT_REC_PROCESS:
			add(s->pids, &s->npids, &s->more_pids, rec->hdr.pid);
			if (rec->process.rank >= 0)
				add(s->ranks, &s->nranks, &unused, (uint32_t)rec->process.rank);
			break;
		case GT_REC_DEVICE:
			add(s->devices, &s->ndevices, &unused, rec->device.device_id);
			break;
		case GT_REC_STREAM:
			add(s->streams, &s->nstreams, &s->more_streams, rec->stream.stream_id);
			break;
		default:
			break;
		}
	}
	gt_reader_set_filter(r, NULL);
	if (err == 0)
		err = gt_reader_rewind(r);
	if (err < 0) {
		free(s);
		return err;
	}
	s->more_ranks = s->more_devices = unused;
	*ret = s;
	return 0;
}

void gt_window_selectable_free(struct gt_window_selectable *s)
{
	free(s);
}

/* ---- the NVTX range names a trace holds ------------------------------------------------- */

struct name_count {
	uint32_t id; /* string id in the reader */
	uint64_t count;
};

/* The names as --nvtx matches them: NAME, and NAME#K for each number K, under NAME. */
struct name_group {
	const char *base; /* borrowed from the reader's strings */
	size_t len;       /* of base, without "#K" */
	uint64_t count, numbered;
	uint64_t lo, hi; /* the numbers K seen */
};

static int by_count(const void *a, const void *b)
{
	const struct name_group *x = a, *y = b;
	int c;

	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	c = strncmp(x->base, y->base, x->len < y->len ? x->len : y->len);
	return c ? c : (x->len > y->len) - (x->len < y->len);
}

static bool nvtx_chunks(void *ctx, const struct gt_chunk_info *c)
{
	(void)ctx;
	return !c->have_types || (c->types & ((1ull << GT_REC_NVTX) | (1ull << GT_REC_STRING)));
}

/* The length of s without a trailing "#K" (digits), and K into *k; slen when it has none. */
static size_t base_len(const char *s, size_t slen, uint64_t *k, bool *numbered)
{
	size_t i = slen;

	*numbered = false;
	while (i > 0 && s[i - 1] >= '0' && s[i - 1] <= '9')
		i--;
	if (i == slen || i < 2 || s[i - 1] != '#' || slen - i > 18)
		return slen;
	*k = strtoull(s + i, NULL, 10);
	*numbered = true;
	return i - 1;
}

/* Fold the counts of v[0..n) into groups by base name; *ngroups of them, into g (n long). */
static void group_names(struct gt_reader *r, const struct name_count *v, size_t n,
                        struct name_group *g, size_t *ngroups)
{
	size_t ng = 0;

	for (size_t i = 0; i < n; i++) {
		size_t slen = 0, len, j;
		const char *s = gt_reader_string(r, v[i].id, &slen);
		uint64_t k = 0;
		bool numbered;

		if (!s)
			s = "?", slen = 1;
		len = base_len(s, slen, &k, &numbered);
		for (j = 0; j < ng && !(g[j].len == len && memcmp(g[j].base, s, len) == 0); j++)
			;
		if (j == ng)
			g[ng++] = (struct name_group){.base = s, .len = len, .lo = UINT64_MAX};
		g[j].count += v[i].count;
		if (numbered) {
			g[j].numbered += v[i].count;
			g[j].lo = k < g[j].lo ? k : g[j].lo;
			g[j].hi = k > g[j].hi ? k : g[j].hi;
		}
	}
	*ngroups = ng;
}

/* "forward (240)", "ProfilerStep#3 (1)" or "ProfilerStep#0..11 (12)" into buf at len. */
static size_t put_group(char *buf, size_t len, size_t bytes, const struct name_group *g, bool first)
{
	int w = (int)(g->len > 80 ? 80 : g->len);

	if (g->numbered && g->numbered == g->count && g->lo == g->hi)
		return len + (size_t)snprintf(buf + len, bytes - len, "%s%.*s#%llu (%llu)",
		                              first ? "" : ", ", w, g->base,
		                              (unsigned long long)g->lo,
		                              (unsigned long long)g->count);
	if (g->numbered && g->numbered == g->count)
		return len + (size_t)snprintf(buf + len, bytes - len, "%s%.*s#%llu..%llu (%llu)",
		                              first ? "" : ", ", w, g->base,
		                              (unsigned long long)g->lo, (unsigned long long)g->hi,
		                              (unsigned long long)g->count);
	return len + (size_t)snprintf(buf + len, bytes - len, "%s%.*s (%llu)", first ? "" : ", ",
	                              w, g->base, (unsigned long long)g->count);
}

int gt_window_nvtx_names(struct gt_reader *r, char *buf, size_t bytes, unsigned max)
{
	struct gt_reader_filter only = {.chunk = nvtx_chunks};
	struct name_count *v = NULL;
	struct name_group *g = NULL;
	const union gt_record *rec;
	size_t n = 0, cap = 0, len = 0, ng = 0;
	int err;

	buf[0] = '\0';
	err = gt_reader_set_filter(r, &only);
	if (err == 0)
		err = gt_reader_rewind(r);
	while (err == 0 && (err = gt_reader_next(r, &rec)) > 0) {
		size_t i;

		err = 0;
		if (rec->hdr.type != GT_REC_NVTX || rec->nvtx.kind == GT_NVTX_MARK)
			continue;
		/* a few hundred distinct names at most in a real trace: a linear look-up */
		for (i = 0; i < n && v[i].id != rec->nvtx.message_id; i++)
			;
		if (i == n) {
			if (n == cap) {
				struct name_count *nv;

				cap = cap ? cap * 2 : 64;
				nv = realloc(v, cap * sizeof(*v));
				if (!nv) {
					err = -ENOMEM;
					break;
				}
				v = nv;
			}
			v[n++] = (struct name_count){rec->nvtx.message_id, 0};
		}
		v[i].count++;
	}
	gt_reader_set_filter(r, NULL);
	if (err == 0 && n) {
		g = malloc(n * sizeof(*g));
		if (!g)
			err = -ENOMEM;
	}
	if (err == 0 && n) {
		group_names(r, v, n, g, &ng);
		qsort(g, ng, sizeof(*g), by_count);
	}
	for (size_t i = 0; err == 0 && i < ng && i < max && len + 1 < bytes; i++)
		len = put_group(buf, len, bytes, &g[i], i == 0);
	if (err == 0 && ng > max && len + 1 < bytes)
		snprintf(buf + len, bytes - len, " and %zu more", ng - max);
	free(g);
	free(v);
	if (err == 0)
		err = gt_reader_rewind(r);
	return err < 0 ? err : (int)(ng > INT32_MAX ? INT32_MAX : ng);
}

/* ---- a window, written down ------------------------------------------------------------ */

static size_t list_ids(char *buf, size_t len, size_t bytes, const char *what, const void *ids,
                       unsigned n, bool is_signed)
{
	for (unsigned i = 0; i < n && len < bytes; i++) {
		long long v = is_signed ? (long long)((const int32_t *)ids)[i]
		                        : (long long)((const uint32_t *)ids)[i];

		len += (size_t)snprintf(buf + len, bytes - len, "%s%s%lld", i ? "," : " ",
		                        i ? "" : what, v);
	}
	return len;
}

void gt_window_describe(const struct gt_window *w, char *buf, size_t bytes)
{
	size_t len = 0;

	buf[0] = '\0';
	if (!w || !gt_window_any(w))
		return;
	if (gt_window_timed(w))
		len = (size_t)snprintf(buf, bytes, "@%llu..@%llu", (unsigned long long)w->from_ns,
		                       (unsigned long long)w->to_ns);
	len = list_ids(buf, len, bytes, "pid=", w->pids, w->npids, false);
	len = list_ids(buf, len, bytes, "rank=", w->ranks, w->nranks, true);
	len = list_ids(buf, len, bytes, "device=", w->devices, w->ndevices, false);
	list_ids(buf, len, bytes, "stream=", w->streams, w->nstreams, false);
}
