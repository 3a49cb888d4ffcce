/* What a trace holds that the filters of a window can name - its processes, ranks, CUDA
 * devices and streams - read from its state chunks, so that a command can refuse a window
 * that selects nothing and say what there is instead. Runs in the CLI. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

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

static int by_count(const void *a, const void *b)
{
	const struct name_count *x = a, *y = b;

	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

static bool nvtx_chunks(void *ctx, const struct gt_chunk_info *c)
{
	(void)ctx;
	return !c->have_types || (c->types & ((1ull << GT_REC_NVTX) | (1ull << GT_REC_STRING)));
}

int gt_window_nvtx_names(struct gt_reader *r, char *buf, size_t bytes, unsigned max)
{
	struct gt_reader_filter only = {.chunk = nvtx_chunks};
	struct name_count *v = NULL;
	const union gt_record *rec;
	size_t n = 0, cap = 0, len = 0;
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
	if (err == 0)
		qsort(v, n, sizeof(*v), by_count);
	for (size_t i = 0; err == 0 && i < n && i < max && len + 1 < bytes; i++) {
		size_t slen = 0;
		const char *s = gt_reader_string(r, v[i].id, &slen);

		len += (size_t)snprintf(buf + len, bytes - len, "%s%.*s (%llu)", i ? ", " : "",
		                        (int)(slen > 80 ? 80 : slen), s ? s : "?",
		                        (unsigned long long)v[i].count);
	}
	if (err == 0 && n > max && len + 1 < bytes)
		snprintf(buf + len, bytes - len, " and %zu more", n - max);
	free(v);
	if (err == 0)
		err = gt_reader_rewind(r);
	return err < 0 ? err : (int)(n > INT32_MAX ? INT32_MAX : n);
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
