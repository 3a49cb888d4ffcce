/* How long a GPU was busy, for the live aggregates: kernel intervals kept per stream, merged
 * by their start at each fold into one union. Runs in the CLI, on the drain's thread. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "live-busy.h"

static int cmp_start(const void *a, const void *b)
{
	const struct gt_live_interval *x = a, *y = b;

	return x->start_ns < y->start_ns ? -1 : x->start_ns > y->start_ns;
}

/* Room for one more stream: the streams and the fold's two arrays grow together. */
static int grow_streams(struct gt_live_busy *b)
{
	size_t cap = b->cap_streams ? b->cap_streams * 2 : 4;
	void *p;

	p = realloc(b->streams, cap * sizeof(*b->streams));
	if (!p)
		return -ENOMEM;
	b->streams = p;
	p = realloc(b->heap, cap * sizeof(*b->heap));
	if (!p)
		return -ENOMEM;
	b->heap = p;
	p = realloc(b->pos, cap * sizeof(*b->pos));
	if (!p)
		return -ENOMEM;
	b->pos = p;
	b->cap_streams = cap;
	return 0;
}

/* The list of (pid, stream), made when new; past GT_LIVE_BUSY_STREAMS, the last list kept is
 * shared (its intervals may then come out of order, which the fold sorts). NULL: -ENOMEM. */
static struct gt_live_busy_stream *stream_of(struct gt_live_busy *b, uint32_t pid, uint32_t stream)
{
	struct gt_live_busy_stream *s;

	if (b->nstreams && b->streams[b->last].pid == pid && b->streams[b->last].stream == stream)
		return &b->streams[b->last];
	for (size_t i = 0; i < b->nstreams; i++) {
		if (b->streams[i].pid == pid && b->streams[i].stream == stream) {
			b->last = i;
			return &b->streams[i];
		}
	}
	if (b->nstreams == GT_LIVE_BUSY_STREAMS)
		return &b->streams[b->nstreams - 1];
	if (b->nstreams == b->cap_streams && grow_streams(b) < 0)
		return NULL;
	s = &b->streams[b->nstreams];
	memset(s, 0, sizeof(*s));
	s->pid = pid;
	s->stream = stream;
	b->last = b->nstreams++;
	return s;
}

int gt_live_busy_add(struct gt_live_busy *b, uint32_t pid, uint32_t stream, uint64_t start_ns,
                     uint64_t end_ns)
{
	struct gt_live_busy_stream *s = stream_of(b, pid, stream);

	if (!s)
		return -ENOMEM;
	if (s->n) {
		struct gt_live_interval *last = &s->v[s->n - 1];

		if (start_ns >= last->start_ns && start_ns <= last->end_ns) {
			/* in order and overlapping the last one: one interval covers both */
			if (end_ns > last->end_ns)
				last->end_ns = end_ns;
			return 0;
		}
	}
	if (b->pending >= GT_LIVE_BUSY_PENDING)
		gt_live_busy_fold(b); /* s stays valid: a fold empties the lists, keeps them */
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 64;
		struct gt_live_interval *v = realloc(s->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		s->v = v;
		s->cap = cap;
	}
	s->unsorted |= s->n && start_ns < s->v[s->n - 1].start_ns;
	s->v[s->n++] = (struct gt_live_interval){start_ns, end_ns};
	b->pending++;
	return 0;
}

/* The merge's heap of stream indices, ordered by the start of each stream's next interval. */
static bool before(const struct gt_live_busy *b, size_t x, size_t y)
{
	return b->streams[x].v[b->pos[x]].start_ns < b->streams[y].v[b->pos[y]].start_ns;
}

static void sift_down(struct gt_live_busy *b, size_t n, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i, t;

		if (l < n && before(b, b->heap[l], b->heap[m]))
			m = l;
		if (r < n && before(b, b->heap[r], b->heap[m]))
			m = r;
		if (m == i)
			return;
		t = b->heap[i];
		b->heap[i] = b->heap[m];
		b->heap[m] = t;
		i = m;
	}
}

void gt_live_busy_fold(struct gt_live_busy *b)
{
	uint64_t cs = 0, ce = 0; /* the stretch of the union being built */
	bool open = false;
	size_t n = 0;

	if (!b->pending)
		return;
	for (size_t i = 0; i < b->nstreams; i++) {
		struct gt_live_busy_stream *s = &b->streams[i];

		if (!s->n)
			continue;
		if (s->unsorted)
			qsort(s->v, s->n, sizeof(*s->v), cmp_start);
		s->unsorted = false;
		b->pos[i] = 0;
		b->heap[n++] = i;
	}
	for (size_t i = n / 2; i-- > 0;)
		sift_down(b, n, i);
	while (n) {
		size_t top = b->heap[0];
		const struct gt_live_interval *iv = &b->streams[top].v[b->pos[top]];

		if (!open) {
			cs = iv->start_ns;
			ce = iv->end_ns;
			open = true;
		} else if (iv->start_ns > ce) {
			b->busy_ns += ce - cs;
			cs = iv->start_ns;
			ce = iv->end_ns;
		} else if (iv->end_ns > ce) {
			ce = iv->end_ns;
		}
		if (++b->pos[top] == b->streams[top].n)
			b->heap[0] = b->heap[--n];
		if (n)
			sift_down(b, n, 0);
	}
	if (open)
		b->busy_ns += ce - cs;
	for (size_t i = 0; i < b->nstreams; i++)
		b->streams[i].n = 0;
	b->pending = 0;
}

void gt_live_busy_fini(struct gt_live_busy *b)
{
	for (size_t i = 0; i < b->nstreams; i++)
		free(b->streams[i].v);
	free(b->streams);
	free(b->heap);
	free(b->pos);
	memset(b, 0, sizeof(*b));
}
