/* What a trace holds that the filters of a window can name - its processes, ranks, CUDA
 * devices and streams - read from its state chunks, so that a command can refuse a window
 * that selects nothing and say what there is instead. Runs in the CLI. */
#include <errno.h>
#include <stdlib.h>

#include "window.h"

/* Chunks that may hold definitions: the index says so, or cannot say. */
static bool definitions_cb(void *ctx, const struct gt_chunk_info *c)
{
	(void)ctx;
	return !c->have_types ||
	       (c->types & ((1ull << GT_REC_PROCESS) | (1ull << GT_REC_DEVICE) |
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
