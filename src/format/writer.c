/* The .gtrace writer: header, records encoded into self-contained zstd chunks, footer index
 * and trailer; written under a temporary name and renamed into place on close. Chunks are
 * compressed by the caller (the drain) or by a pool of the writer's own (compress_threads:
 * gputrace merge) and written, in order, by the caller or, with a queue, by the writer
 * thread of writeq.c. Runs in the CLI's drainer and in the standalone drainer thread of
 * the injection library (never on an application thread but at exit). Layout: docs/format.md. */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#include "codec.h"
#include "gputrace/trace.h"
#include "workpool.h"
#include "writeq.h"

/* Longest header string kept; longer ones (a huge command line) are cut. */
#define HEADER_STRING_MAX (64u << 10)

/* What the footer's chunk index says about one chunk. */
struct index_entry {
	uint64_t offset; /* file offset of the chunk header */
	struct gt_chunk_hdr hdr;
	uint64_t types; /* bit t: the chunk holds a record of type t (bit 0: unclassified) */
};

/* Records go to one of two pending chunks, so that what every window of the trace needs
 * (GT_TRACE_STATE_TYPES: strings, processes, devices, memory ...) sits in chunks of its
 * own, and a windowed reader skips the event chunks outside its window. */
enum pending_class {
	PENDING_EVENTS,
	PENDING_STATE,
	PENDING_MAX
};

/* One chunk compressed by the writer's pool (compress_threads): its payload, swapped in from a
 * pending chunk, and its header and frame once run. */
struct zjob {
	struct gt_workpool_job job; /* first: zjob_run's cast */
	ZSTD_CCtx *cctx;            /* owned */
	int level;
	uint8_t *raw; /* payload; chunk_bytes + GT_CODEC_MAX_RECORD, owned */
	size_t raw_len;
	uint8_t *out; /* chunk header + zstd frame; out_cap bytes, owned */
	size_t out_cap;
	struct gt_chunk_hdr h; /* all but comp_bytes and crc when queued; all when run */
	uint64_t types;
	int error; /* of the compression: -ENOMEM */
};

struct pending {
	struct gt_codec codec; /* its own delta state and time range */
	uint8_t *raw;          /* payload; chunk_bytes + GT_CODEC_MAX_RECORD, owned */
	size_t raw_len;        /* bytes used in raw */
	uint32_t raw_records;
	uint64_t types; /* record types in raw, as the index entry's bits */
};

struct gt_writer {
	int fd;
	char *path;      /* final name; owned */
	char *tmp_path;  /* path.tmp-<pid>; owned */
	int level;       /* zstd level */
	int error;       /* first write error (-errno); sticky: later calls return it */
	uint64_t offset; /* bytes written to the file so far (or handed to the queue) */
	bool keep_partial;
	struct gt_writeq *q;       /* the writer thread's queue; NULL: written here */
	_Atomic uint64_t progress; /* write() calls returned here (without a queue) */

	ZSTD_CCtx *cctx; /* reused for every chunk */

	struct pending pend[PENDING_MAX];
	size_t chunk_bytes; /* compress a pending chunk once its raw_len reaches this */
	uint8_t *out;       /* chunk header + zstd frame, written with one write() */
	size_t out_cap;

	/* chunks compressed by the pool (compress_threads), in a ring: jobs[(jnext - jbusy) %
	 * njobs] is the oldest not yet written; written in the order they were queued */
	struct gt_workpool *pool; /* owned; NULL: compressed here */
	struct zjob *jobs;        /* owned */
	unsigned njobs, jnext, jbusy;

	struct index_entry *index; /* one per chunk written; owned */
	size_t nindex, index_cap;
	struct gt_trace_counts counts;
};

/* The sticky error, taking up one the writer thread met. */
static int writer_error(struct gt_writer *w)
{
	if (!w->error && w->q)
		w->error = gt_writeq_error(w->q);
	return w->error;
}

static int write_all(struct gt_writer *w, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	if (w->error)
		return w->error;
	while (len) {
		/* a call per GT_WRITE_MAX_BYTES at most: each returned one is progress */
		ssize_t n = write(w->fd, p, len < GT_WRITE_MAX_BYTES ? len : GT_WRITE_MAX_BYTES);

		atomic_fetch_add_explicit(&w->progress, 1, memory_order_relaxed);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			w->error = -errno;
			return w->error;
		}
		p += n;
		len -= (size_t)n;
		w->offset += (uint64_t)n;
	}
	return 0;
}

/* Bytes after the header: written here, or queued for the writer thread. */
static int emit(struct gt_writer *w, const void *buf, size_t len)
{
	int r;

	if (!w->q)
		return write_all(w, buf, len);
	r = writer_error(w);
	if (r == 0)
		r = gt_writeq_push(w->q, buf, len);
	if (r < 0) {
		w->error = r;
		return r;
	}
	w->offset += len;
	return 0;
}

static size_t hstr_len(const char *s)
{
	size_t n = s ? strlen(s) : 0;

	return n > HEADER_STRING_MAX ? HEADER_STRING_MAX : n;
}

static uint8_t *put_hstr(uint8_t *p, const char *s)
{
	size_t n = hstr_len(s);

	gt_put_le32(p, (uint32_t)n);
	if (n)
		memcpy(p + 4, s, n);
	return p + 4 + n;
}

static int write_header(struct gt_writer *w, const struct gt_trace_info *info)
{
	const char *strs[GT_HEADER_NSTRINGS] = {
	        info->hostname,     info->cmdline,       info->tool_version,
	        info->cuda_version, info->cupti_version, info->driver_version,
	};
	size_t len = GT_HEADER_FIXED_BYTES + 4;
	uint8_t *buf, *p;
	int r;

	for (unsigned i = 0; i < GT_HEADER_NSTRINGS; i++)
		len += 4 + hstr_len(strs[i]);
	buf = malloc(len);
	if (!buf)
		return -ENOMEM;
	memcpy(buf, GT_TRACE_MAGIC, 8);
	gt_put_le32(buf + 8, GT_TRACE_VERSION);
	gt_put_le32(buf + 12, (uint32_t)len);
	gt_put_le32(buf + 16, info->clock_id);
	gt_put_le32(buf + 20, 0); /* flags: none defined */
	gt_put_le64(buf + 24, info->start_realtime_ns);
	gt_put_le64(buf + 32, info->start_trace_ns);
	p = buf + GT_HEADER_FIXED_BYTES;
	for (unsigned i = 0; i < GT_HEADER_NSTRINGS; i++)
		p = put_hstr(p, strs[i]);
	gt_put_le32(p, gt_crc32c(0, buf, (size_t)(p - buf)));
	r = write_all(w, buf, len);
	free(buf);
	return r;
}

static void jobs_free(struct gt_writer *w)
{
	for (unsigned i = 0; i < w->njobs; i++) {
		/* no job may run on buffers about to go: wait for those queued (an idle one
		 * returns at once) */
		gt_workpool_wait(w->pool, &w->jobs[i].job);
		ZSTD_freeCCtx(w->jobs[i].cctx);
		free(w->jobs[i].raw);
		free(w->jobs[i].out);
	}
	free(w->jobs);
	w->jobs = NULL;
	w->njobs = w->jbusy = w->jnext = 0;
	/* the queue is empty: every job was waited for */
	gt_workpool_free(w->pool);
	w->pool = NULL;
}

static void writer_free(struct gt_writer *w)
{
	jobs_free(w);
	/* a queue still here was never started on, or was stopped */
	if (w->fd >= 0)
		close(w->fd);
	ZSTD_freeCCtx(w->cctx);
	for (unsigned c = 0; c < PENDING_MAX; c++)
		free(w->pend[c].raw);
	free(w->out);
	free(w->index);
	free(w->path);
	free(w->tmp_path);
	free(w);
}

static int start_pool(struct gt_writer *w, unsigned threads);

int gt_writer_open(const char *path, const struct gt_trace_info *info,
                   const struct gt_writer_options *opts, struct gt_writer **ret)
{
	struct gt_writer *w;
	size_t raw_cap;
	int r;

	if (!path || !*path || !info || !ret)
		return -EINVAL;
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->fd = -1;
	w->level = opts && opts->zstd_level ? opts->zstd_level : 1;
	w->chunk_bytes = opts && opts->chunk_bytes ? opts->chunk_bytes : GT_CHUNK_DEFAULT_RAW;
	if (w->chunk_bytes > GT_CHUNK_MAX_RAW - GT_CODEC_MAX_RECORD)
		w->chunk_bytes = GT_CHUNK_MAX_RAW - GT_CODEC_MAX_RECORD;
	w->counts.first_ts_ns = UINT64_MAX;
	for (unsigned c = 0; c < PENDING_MAX; c++) {
		r = gt_codec_init(&w->pend[c].codec);
		if (r < 0)
			goto out;
	}
	r = -ENOMEM;
	w->path = strdup(path);
	if (!w->path || asprintf(&w->tmp_path, "%s.tmp-%ld", path, (long)getpid()) < 0) {
		w->tmp_path = NULL;
		goto out;
	}
	raw_cap = w->chunk_bytes + GT_CODEC_MAX_RECORD;
	for (unsigned c = 0; c < PENDING_MAX; c++) {
		w->pend[c].raw = malloc(raw_cap);
		if (!w->pend[c].raw)
			goto out;
	}
	w->out_cap = GT_CHUNK_HDR_BYTES + ZSTD_compressBound(raw_cap);
	w->out = malloc(w->out_cap);
	w->cctx = ZSTD_createCCtx();
	if (!w->out || !w->cctx)
		goto out;
	w->fd = open(w->tmp_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (w->fd < 0) {
		r = -errno;
		goto out;
	}
	r = write_header(w, info);
	/* without the threads (none could start), the chunks are compressed here: the same */
	if (r == 0 && opts && opts->compress_threads)
		start_pool(w, opts->compress_threads);
	if (r == 0 && opts && opts->queue_bytes)
		r = gt_writeq_new(w->fd, opts->queue_bytes, opts->stall_ns, &w->q);
	if (r < 0) {
		unlink(w->tmp_path);
		goto out;
	}
	w->keep_partial = opts && opts->keep_partial;
	*ret = w;
	return 0;
out:
	writer_free(w);
	return r;
}

static int push_index(struct gt_writer *w, uint64_t offset, const struct gt_chunk_hdr *h,
                      uint64_t types)
{
	if (w->nindex == w->index_cap) {
		size_t cap = w->index_cap ? w->index_cap * 2 : 256;
		struct index_entry *ix = realloc(w->index, cap * sizeof(*ix));

		if (!ix)
			return -ENOMEM;
		w->index = ix;
		w->index_cap = cap;
	}
	w->index[w->nindex++] = (struct index_entry){offset, *h, types};
	return 0;
}

/* The header of pending chunk p, but its sizes and checksum; the trace's time range. */
static void chunk_begin(struct gt_writer *w, const struct pending *p, struct gt_chunk_hdr *h)
{
	h->raw_bytes = (uint32_t)p->raw_len;
	h->records = p->raw_records;
	if (p->codec.first_ts_ns == UINT64_MAX) {
		h->first_ts_ns = 0;
		h->last_ts_ns = 0;
	} else {
		h->first_ts_ns = p->codec.first_ts_ns;
		h->last_ts_ns = p->codec.last_ts_ns;
		if (h->first_ts_ns < w->counts.first_ts_ns)
			w->counts.first_ts_ns = h->first_ts_ns;
		if (h->last_ts_ns > w->counts.last_ts_ns)
			w->counts.last_ts_ns = h->last_ts_ns;
	}
}

/* Index and write (or queue) a compressed chunk: out holds its header and frame. */
static int chunk_put(struct gt_writer *w, const uint8_t *out, const struct gt_chunk_hdr *h,
                     uint64_t types)
{
	int r = push_index(w, w->offset, h, types);

	if (r < 0) {
		w->error = r;
		return r;
	}
	r = emit(w, out, GT_CHUNK_HDR_BYTES + h->comp_bytes);
	if (r < 0)
		return r;
	w->counts.chunks++;
	return 0;
}

static void pending_reset(struct pending *p)
{
	p->raw_len = 0;
	p->raw_records = 0;
	p->types = 0;
	/* the next chunk must decode on its own */
	gt_codec_reset(&p->codec);
}

/* Compress into out (room for the chunk header first) and fill the header's sizes and
 * checksum, then the header itself. Returns 0 or -ENOMEM. */
static int compress_chunk(ZSTD_CCtx *cctx, int level, const uint8_t *raw, size_t raw_len,
                          uint8_t *out, size_t out_cap, struct gt_chunk_hdr *h)
{
	size_t comp = ZSTD_compressCCtx(cctx, out + GT_CHUNK_HDR_BYTES,
	                                out_cap - GT_CHUNK_HDR_BYTES, raw, raw_len, level);

	/* only a bad level or no memory can fail here; the output is large enough */
	if (ZSTD_isError(comp))
		return -ENOMEM;
	h->comp_bytes = (uint32_t)comp;
	h->crc = gt_crc32c(0, out + GT_CHUNK_HDR_BYTES, comp);
	gt_chunk_hdr_encode(out, h);
	return 0;
}

static void zjob_run(struct gt_workpool_job *job)
{
	struct zjob *j = (struct zjob *)job;

	j->error = compress_chunk(j->cctx, j->level, j->raw, j->raw_len, j->out, j->out_cap, &j->h);
}

/* Wait for the oldest job queued and write its chunk. Returns 0 or -errno (sticky). */
static int collect_oldest(struct gt_writer *w)
{
	struct zjob *j = &w->jobs[(w->jnext + w->njobs - w->jbusy) % w->njobs];

	gt_workpool_wait(w->pool, &j->job);
	w->jbusy--;
	if (w->error)
		return w->error;
	if (j->error) {
		w->error = j->error;
		return w->error;
	}
	return chunk_put(w, j->out, &j->h, j->types);
}

/* Write every chunk the pool still holds, in order. Returns 0 or the first error. */
static int collect_all(struct gt_writer *w)
{
	int r = 0;

	while (w->jbusy) {
		int e = collect_oldest(w);

		if (r == 0)
			r = e;
	}
	return r;
}

/* Hand pending chunk p to the pool: its payload swaps buffers with the next free job's. */
static int queue_pending(struct gt_writer *w, struct pending *p)
{
	struct zjob *j;
	uint8_t *raw;
	int r;

	/* the chunks done by now go out first; then wait for the oldest if every job is busy */
	while (w->jbusy &&
	       (w->jbusy == w->njobs ||
	        gt_workpool_ready(w->pool,
	                          &w->jobs[(w->jnext + w->njobs - w->jbusy) % w->njobs].job))) {
		r = collect_oldest(w);
		if (r < 0)
			return r;
	}
	j = &w->jobs[w->jnext];
	w->jnext = (w->jnext + 1) % w->njobs;
	w->jbusy++;
	raw = j->raw;
	j->raw = p->raw;
	p->raw = raw;
	j->raw_len = p->raw_len;
	j->types = p->types;
	chunk_begin(w, p, &j->h);
	pending_reset(p);
	gt_workpool_submit(w->pool, &j->job);
	return 0;
}

/* Compress and write (or queue) pending chunk p as one chunk. */
static int flush_pending(struct gt_writer *w, struct pending *p)
{
	struct gt_chunk_hdr h;
	int r;

	if (!p->raw_len)
		return 0;
	if (w->pool)
		return queue_pending(w, p);
	chunk_begin(w, p, &h);
	r = compress_chunk(w->cctx, w->level, p->raw, p->raw_len, w->out, w->out_cap, &h);
	if (r < 0) {
		w->error = r;
		return r;
	}
	r = chunk_put(w, w->out, &h, p->types);
	if (r < 0)
		return r;
	pending_reset(p);
	return 0;
}

/* Compress chunks by `threads` threads of the writer's own, and as many chunks at once and one
 * more (the writer's caller compresses the oldest when it must wait for it). Returns 0 or
 * -errno; the writer then compresses on its own. */
static int start_pool(struct gt_writer *w, unsigned threads)
{
	size_t raw_cap = w->chunk_bytes + GT_CODEC_MAX_RECORD;
	unsigned inflight;
	int r;

	if (threads > GT_WRITER_COMPRESS_THREADS_MAX)
		threads = GT_WRITER_COMPRESS_THREADS_MAX;
	inflight = threads + 1;
	w->jobs = calloc(inflight, sizeof(*w->jobs));
	if (!w->jobs)
		return -ENOMEM;
	r = gt_workpool_new(threads, &w->pool);
	if (r < 0) {
		free(w->jobs);
		w->jobs = NULL;
		return r;
	}
	w->njobs = inflight;
	for (unsigned i = 0; i < inflight; i++) {
		struct zjob *j = &w->jobs[i];

		j->job.run = zjob_run;
		j->level = w->level;
		j->out_cap = w->out_cap;
		j->cctx = ZSTD_createCCtx();
		j->raw = malloc(raw_cap);
		j->out = malloc(j->out_cap);
		if (!j->cctx || !j->raw || !j->out) {
			jobs_free(w);
			return -ENOMEM;
		}
	}
	return 0;
}

/* Write pending chunk c, after the state chunk: records refer to strings and processes that
 * must come earlier in the file. */
static int flush_class(struct gt_writer *w, enum pending_class c)
{
	int r = 0;

	if (c != PENDING_STATE)
		r = flush_pending(w, &w->pend[PENDING_STATE]);
	return r < 0 ? r : flush_pending(w, &w->pend[c]);
}

int gt_writer_flush(struct gt_writer *w)
{
	int r, q;

	if (!w)
		return -EINVAL;
	if (writer_error(w))
		return w->error;
	r = flush_class(w, PENDING_EVENTS);
	/* what the pool holds is written too, even after an error: no job stays queued */
	q = collect_all(w);
	return r < 0 ? r : q;
}

static enum pending_class class_of(unsigned type)
{
	return (GT_TRACE_STATE_TYPES >> type) & 1 ? PENDING_STATE : PENDING_EVENTS;
}

int gt_writer_write(struct gt_writer *w, const struct gt_rec_hdr *rec)
{
	enum pending_class c;
	struct pending *p;

	if (!w || !rec || gt_record_validate(rec, rec->size) < 0)
		return -EINVAL;
	if (writer_error(w))
		return w->error;
	c = class_of(rec->type);
	p = &w->pend[c];
	p->raw_len += gt_codec_encode(&p->codec, rec, p->raw + p->raw_len);
	p->raw_records++;
	p->types |= 1ull << rec->type;
	w->counts.records[rec->type]++;
	if (p->raw_len >= w->chunk_bytes)
		return flush_class(w, c);
	return 0;
}

int gt_writer_string(struct gt_writer *w, uint32_t pid, uint32_t id, const char *s, size_t len)
{
	struct pending *p;

	if (!w || id == GT_STRING_NONE || len > GT_STRING_MAX || (len && !s))
		return -EINVAL;
	if (writer_error(w))
		return w->error;
	p = &w->pend[PENDING_STATE];
	p->raw_len += gt_codec_encode_string(&p->codec, pid, id, s, len, p->raw + p->raw_len);
	p->raw_records++;
	p->types |= 1ull << GT_REC_STRING;
	w->counts.records[GT_REC_STRING]++;
	if (p->raw_len >= w->chunk_bytes)
		return flush_class(w, PENDING_STATE);
	return 0;
}

int gt_writer_append_encoded(struct gt_writer *w, const void *bytes, size_t len, uint32_t records)
{
	struct pending *p;
	int r;

	if (!w || (len && !bytes) || len > w->chunk_bytes + GT_CODEC_MAX_RECORD)
		return -EINVAL;
	if (writer_error(w))
		return w->error;
	p = &w->pend[PENDING_EVENTS];
	if (p->raw_len + len > w->chunk_bytes + GT_CODEC_MAX_RECORD) {
		r = gt_writer_flush(w);
		if (r < 0)
			return r;
	}
	if (len)
		memcpy(p->raw + p->raw_len, bytes, len);
	p->raw_len += len;
	p->raw_records += records;
	/* whatever they are, a windowed reader must not pass over them */
	p->types |= 1ull << 0;
	if (p->raw_len >= w->chunk_bytes)
		return gt_writer_flush(w);
	return 0;
}

const struct gt_trace_counts *gt_writer_counts(const struct gt_writer *w)
{
	return w ? &w->counts : NULL;
}

/* Footer (chunk index, per-type counts, time range) followed by the fixed trailer. */
static int write_footer(struct gt_writer *w)
{
	size_t len = 16 + w->nindex * GT_INDEX_ENTRY_BYTES + 8 + 8u * GT_REC_MAX + 24;
	uint64_t footer_offset = w->offset;
	uint8_t *buf = malloc(len + GT_TRAILER_BYTES), *p, *t;
	int r;

	if (!buf)
		return -ENOMEM;
	memcpy(buf, GT_FOOTER_MAGIC, 4);
	gt_put_le32(buf + 4, GT_INDEX_ENTRY_BYTES);
	gt_put_le64(buf + 8, w->nindex);
	p = buf + 16;
	for (size_t i = 0; i < w->nindex; i++, p += GT_INDEX_ENTRY_BYTES) {
		const struct index_entry *e = &w->index[i];

		gt_put_le64(p, e->offset);
		gt_put_le32(p + 8, e->hdr.comp_bytes);
		gt_put_le32(p + 12, e->hdr.raw_bytes);
		gt_put_le32(p + 16, e->hdr.records);
		gt_put_le32(p + 20, e->hdr.crc);
		gt_put_le64(p + 24, e->hdr.first_ts_ns);
		gt_put_le64(p + 32, e->hdr.last_ts_ns);
		gt_put_le64(p + 40, e->types);
	}
	gt_put_le32(p, GT_REC_MAX);
	gt_put_le32(p + 4, 0);
	p += 8;
	for (unsigned i = 0; i < GT_REC_MAX; i++, p += 8)
		gt_put_le64(p, w->counts.records[i]);
	gt_put_le64(p, w->counts.first_ts_ns);
	gt_put_le64(p + 8, w->counts.last_ts_ns);
	gt_put_le64(p + 16, w->counts.chunks);
	t = buf + len;
	memcpy(t, GT_TRAILER_MAGIC, 8);
	gt_put_le64(t + 8, footer_offset);
	gt_put_le64(t + 16, len);
	gt_put_le32(t + 24, gt_crc32c(0, buf, len));
	gt_put_le32(t + 28, gt_crc32c(0, t, 28));
	r = emit(w, buf, len + GT_TRAILER_BYTES);
	free(buf);
	return r;
}

bool gt_writer_full(const struct gt_writer *w)
{
	return w && w->q && gt_writeq_full(w->q);
}

int gt_writer_wait_space(struct gt_writer *w)
{
	int r;

	if (!w)
		return -EINVAL;
	if (writer_error(w) || !w->q)
		return w->error;
	r = gt_writeq_wait_space(w->q);
	if (r < 0)
		w->error = r;
	return r;
}

int gt_writer_wake_fd(const struct gt_writer *w)
{
	return w && w->q ? gt_writeq_wake_fd(w->q) : -1;
}

uint64_t gt_writer_progress(const struct gt_writer *w)
{
	if (!w)
		return 0;
	return atomic_load_explicit(&w->progress, memory_order_relaxed) +
	       (w->q ? gt_writeq_progress(w->q) : 0);
}

/* Stop the writer thread: after writing and syncing everything (finish) or at once. A
 * stalled thread keeps the file descriptor (see gt_writeq_finish). */
static int stop_queue(struct gt_writer *w, bool finish)
{
	int r;

	if (!w->q)
		return 0;
	/* a queue that stalled before gives up at once */
	r = finish ? gt_writeq_finish(w->q) : gt_writeq_cancel(w->q);
	if (r == -ETIMEDOUT)
		w->fd = -1;
	w->q = NULL;
	return r;
}

int gt_writer_close(struct gt_writer *w)
{
	bool queued;
	int r, q;

	if (!w)
		return 0;
	queued = w->q != NULL;
	r = gt_writer_flush(w);
	if (r == 0)
		r = write_footer(w);
	/* the thread writes what is queued, then syncs */
	q = stop_queue(w, r == 0);
	r = r < 0 ? r : q;
	if (r < 0)
		goto out;
	/* EINVAL: a file that cannot be synced (a FIFO): nothing to wait for */
	if (!queued && fsync(w->fd) < 0 && errno != EINVAL) {
		r = -errno;
		goto out;
	}
	r = close(w->fd);
	w->fd = -1;
	if (r < 0) {
		r = -errno;
		goto out;
	}
	if (rename(w->tmp_path, w->path) < 0)
		r = -errno;
out:
	/* a file that is not complete never appears under the final name; a stalled one
	 * cannot be removed from under its writer */
	if (r < 0 && r != -ETIMEDOUT && !w->keep_partial)
		unlink(w->tmp_path);
	writer_free(w);
	return r;
}

void gt_writer_discard(struct gt_writer *w)
{
	if (!w)
		return;
	stop_queue(w, false);
	unlink(w->tmp_path);
	writer_free(w);
}
