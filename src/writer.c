/* The .gtrace writer: header, records encoded into self-contained zstd chunks, footer index
 * and trailer; written under a temporary name and renamed into place on close. Chunks are
 * compressed by the caller (the drain) and written by the caller or, with a queue, by the
 * writer thread of writeq.c. Runs in the CLI's drainer and in the standalone drainer thread of
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

static void writer_free(struct gt_writer *w)
{
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

/* Compress and write (or queue) pending chunk p as one chunk. */
static int flush_pending(struct gt_writer *w, struct pending *p)
{
	struct gt_chunk_hdr h;
	uint64_t offset;
	size_t comp;
	int r;

	if (!p->raw_len)
		return 0;
	comp = ZSTD_compressCCtx(w->cctx, w->out + GT_CHUNK_HDR_BYTES,
	                         w->out_cap - GT_CHUNK_HDR_BYTES, p->raw, p->raw_len, w->level);
	if (ZSTD_isError(comp)) {
		/* only a bad level or no memory can fail here; the output is large enough */
		w->error = -ENOMEM;
		return w->error;
	}
	h.comp_bytes = (uint32_t)comp;
	h.raw_bytes = (uint32_t)p->raw_len;
	h.records = p->raw_records;
	h.crc = gt_crc32c(0, w->out + GT_CHUNK_HDR_BYTES, comp);
	if (p->codec.first_ts_ns == UINT64_MAX) {
		h.first_ts_ns = 0;
		h.last_ts_ns = 0;
	} else {
		h.first_ts_ns = p->codec.first_ts_ns;
		h.last_ts_ns = p->codec.last_ts_ns;
		if (h.first_ts_ns < w->counts.first_ts_ns)
			w->counts.first_ts_ns = h.first_ts_ns;
		if (h.last_ts_ns > w->counts.last_ts_ns)
			w->counts.last_ts_ns = h.last_ts_ns;
	}
	gt_chunk_hdr_encode(w->out, &h);
	offset = w->offset;
	r = push_index(w, offset, &h, p->types);
	if (r < 0) {
		w->error = r;
		return r;
	}
	r = emit(w, w->out, GT_CHUNK_HDR_BYTES + comp);
	if (r < 0)
		return r;
	w->counts.chunks++;
	p->raw_len = 0;
	p->raw_records = 0;
	p->types = 0;
	/* the next chunk must decode on its own */
	gt_codec_reset(&p->codec);
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
	if (!w)
		return -EINVAL;
	if (writer_error(w))
		return w->error;
	return flush_class(w, PENDING_EVENTS);
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
