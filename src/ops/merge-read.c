/* gputrace merge, reading ahead: a pool of threads decompresses and decodes each input's next
 * records into a batch while the merging thread merges the batch before it, two batches per
 * input, so memory stays bounded by the inputs (not their length) and the threads are fixed
 * in number however many inputs there are. Runs in the CLI process. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "merge-int.h"

/* Decode the input's next records into b[fill]: up to GT_MERGE_AHEAD_BYTES, or to its end
 * or its error, which the batch keeps after its records. Runs on a pool thread (or on the
 * merging thread, when it waits for a job no thread took yet). */
static void ahead_run(struct gt_workpool_job *job)
{
	struct ahead *a = (struct ahead *)job;
	struct ahead_batch *b = &a->b[a->fill];

	b->len = 0;
	b->end = 0;
	while (b->len < GT_MERGE_AHEAD_BYTES) {
		const union gt_record *rec;
		int r = gt_reader_next(a->r, &rec);
		size_t size;

		if (r <= 0) {
			b->end = r < 0 ? r : 1;
			if (r == 0) {
				/* its file, zstd context and chunk go now, not when the merge
				 * reaches the end: 2,000 small inputs are read to their ends at
				 * once */
				a->status = *gt_reader_status(a->r);
				gt_reader_close(a->r);
				a->r = NULL;
			}
			return;
		}
		size = gt_record_align(rec->hdr.size);
		if (b->len + size > b->cap) {
			size_t cap = b->cap ? b->cap * 2 : 16384;
			uint8_t *p;

			while (cap < b->len + size)
				cap *= 2;
			p = realloc(b->buf, cap);
			if (!p) {
				b->end = -ENOMEM;
				return;
			}
			b->buf = p;
			b->cap = cap;
		}
		memcpy(b->buf + b->len, rec, rec->hdr.size);
		b->len += size;
	}
}

/* After a job: a reader it closed is closed for the input too. */
static void ahead_sync(struct gt_merge *m, const struct ahead *a)
{
	if (!a->r)
		m->in[a - m->ahead].r = NULL;
}

static void ahead_queue(struct gt_merge *m, struct ahead *a)
{
	a->fill = a->cur ^ 1u;
	a->queued = true;
	gt_workpool_submit(m->pool, &a->job);
}

int gt_merge_read_start(struct gt_merge *m, unsigned threads)
{
	int r;

	m->ahead = calloc(m->n, sizeof(*m->ahead));
	if (!m->ahead)
		return -ENOMEM;
	r = gt_workpool_new(threads, &m->pool);
	if (r < 0) {
		free(m->ahead);
		m->ahead = NULL;
		return r;
	}
	/* every input's first batch queued at once, in the order the merge needs them */
	for (size_t i = 0; i < m->n; i++) {
		struct ahead *a = &m->ahead[i];

		a->job.run = ahead_run;
		a->r = m->in[i].r;
		a->cur = 1; /* empty: the first call waits for b[0] */
		m->in[i].ahead = a;
		ahead_queue(m, a);
	}
	return 0;
}

int gt_merge_read_refill(struct gt_merge *m, struct ahead *a, const union gt_record **rec)
{
	for (;;) {
		const struct ahead_batch *b = &a->b[a->cur];

		if (a->pos < b->len) {
			*rec = (const union gt_record *)(b->buf + a->pos);
			a->pos += gt_record_align((*rec)->hdr.size);
			return 1;
		}
		if (b->end)
			return b->end > 0 ? 0 : b->end;
		if (!a->queued)
			return -EINVAL; /* cannot happen: a batch without an end has a successor */
		gt_workpool_wait(m->pool, &a->job);
		a->queued = false;
		ahead_sync(m, a);
		a->cur ^= 1u;
		a->pos = 0;
		/* the batch just taken is merged while the pool decodes the one after */
		if (!a->b[a->cur].end)
			ahead_queue(m, a);
	}
}

void gt_merge_read_done(struct ahead *a)
{
	if (!a || a->queued)
		return;
	for (unsigned k = 0; k < 2; k++) {
		free(a->b[k].buf);
		memset(&a->b[k], 0, sizeof(a->b[k]));
		a->b[k].end = 1;
	}
	a->r = NULL;
}

void gt_merge_read_stop(struct gt_merge *m)
{
	if (!m->ahead)
		return;
	for (size_t i = 0; i < m->n; i++) {
		struct ahead *a = &m->ahead[i];

		/* a job still queued or running uses the reader and the batch: wait for it */
		if (a->queued)
			gt_workpool_wait(m->pool, &a->job);
		a->queued = false;
		ahead_sync(m, a);
		gt_merge_read_done(a);
		m->in[i].ahead = NULL;
	}
	/* the queue is empty now */
	gt_workpool_free(m->pool);
	m->pool = NULL;
	free(m->ahead);
	m->ahead = NULL;
}
