/* The .gtrace streaming reader: validates the header, uses the footer's chunk index when it
 * is intact and otherwise scans for chunks (a writer that was killed), decodes one chunk at a
 * time so memory stays flat. Trusts nothing in the file. Runs in the CLI process.
 * Layout: docs/format.md. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "codec.h"
#include "gputrace/trace.h"

#define FOOTER_HEAD_BYTES 16u         /* magic, entry size, chunk count */
#define FOOTER_TAIL_MIN   32u         /* type count, reserved, first/last ts, chunks (no types) */
#define INDEX_CACHE       256u        /* index entries read per pread */
#define SCAN_BYTES        (64u << 10) /* window when searching for the next chunk magic */

/* One interned string: the reader's id -> bytes map. Ids come from the file, so they are
 * looked up in a hash table rather than used as indices. */
struct rstr {
	uint32_t id; /* 0: empty slot */
	uint32_t len;
	char *s; /* owned, NUL-terminated; never moves until close */
};

struct gt_reader {
	int fd;
	uint64_t file_size;
	uint64_t data_start; /* end of the header: the first chunk */

	struct gt_trace_header header;
	char *header_strings; /* owned; header.info's strings point here */

	/* footer, when intact */
	bool have_footer;
	uint64_t footer_offset;
	uint64_t nchunks;     /* entries in the index */
	uint32_t entry_bytes; /* bytes per index entry */
	struct gt_trace_counts footer_counts;
	uint64_t trailer_footer; /* where a trailer that checks puts a footer that does not;
	                          * 0: none (the scan stops there: no chunk is damaged) */

	/* position */
	uint64_t next_entry; /* footer mode: index entry to read next */
	uint64_t pos;        /* scan mode: file offset to look at next */
	uint64_t done;       /* bytes consumed, for progress */
	uint8_t *idx_raw;    /* INDEX_CACHE entries as the file has them; owned */
	struct gt_chunk_info idx[INDEX_CACHE];
	uint64_t idx_first, idx_count; /* entries cached in idx */

	struct gt_reader_filter filter; /* all NULL: none */

	/* the current chunk */
	ZSTD_DCtx *dctx;
	uint8_t *comp; /* owned */
	size_t comp_cap;
	uint8_t *raw; /* owned; the payload and GT_CODEC_PAD zero bytes */
	size_t raw_cap;
	const uint8_t *p, *end;
	uint32_t chunk_records; /* records its header says it holds */
	uint32_t chunk_seen;    /* records of it decoded or skipped so far */

	struct gt_codec codec;
	union gt_record *recs;     /* GT_REC_MAX decoded records, one per type; owned */
	struct gt_rec_string *str; /* decoded string record; owned */

	struct rstr *strs; /* open addressing, linear probing, at most half full */
	size_t strs_mask, strs_count;

	struct gt_reader_status status;

	/* a file without footer: the time range of its chunk headers, once scanned */
	bool have_scan_times;
	uint64_t scan_first_ns, scan_last_ns;
};

/* errmsg for OS errors and the formatted ones; one per thread, overwritten by the next open. */
static _Thread_local char errbuf[128];

static int preadn(int fd, void *buf, size_t len, uint64_t off)
{
	uint8_t *p = buf;

	while (len) {
		ssize_t n = pread(fd, p, len, (off_t)off);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EIO; /* the file shrank under us */
		p += n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

/* ---- strings ---------------------------------------------------------------------------- */

static inline size_t id_hash(uint32_t id, size_t mask)
{
	return (size_t)((id * 0x9e3779b97f4a7c15ull) >> 32) & mask;
}

static int strs_grow(struct gt_reader *r)
{
	size_t cap = r->strs ? (r->strs_mask + 1) * 2 : 256;
	struct rstr *t = calloc(cap, sizeof(*t));

	if (!t)
		return -ENOMEM;
	for (size_t i = 0; r->strs && i <= r->strs_mask; i++) {
		size_t j;

		if (!r->strs[i].id)
			continue;
		for (j = id_hash(r->strs[i].id, cap - 1); t[j].id; j = (j + 1) & (cap - 1))
			;
		t[j] = r->strs[i];
	}
	free(r->strs);
	r->strs = t;
	r->strs_mask = cap - 1;
	return 0;
}

/* Enter a string. The first definition of an id wins: ids are unique within a trace, so a
 * second one is damage or a producer bug, and keeping the first keeps memory bounded and
 * earlier pointers stable. */
static int strs_put(struct gt_reader *r, const struct gt_rec_string *s)
{
	size_t j;
	char *copy;
	int ret;

	if (!r->strs || (r->strs_count + 1) * 2 > r->strs_mask + 1) {
		ret = strs_grow(r);
		if (ret < 0)
			return ret;
	}
	for (j = id_hash(s->id, r->strs_mask); r->strs[j].id; j = (j + 1) & r->strs_mask)
		if (r->strs[j].id == s->id)
			return 0;
	copy = malloc((size_t)s->len + 1);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, s->str, s->len);
	copy[s->len] = '\0';
	r->strs[j] = (struct rstr){s->id, s->len, copy};
	r->strs_count++;
	return 0;
}

const char *gt_reader_string(const struct gt_reader *r, uint32_t id, size_t *len)
{
	if (!r || !r->strs || id == GT_STRING_NONE)
		return NULL;
	for (size_t j = id_hash(id, r->strs_mask); r->strs[j].id; j = (j + 1) & r->strs_mask) {
		if (r->strs[j].id == id) {
			if (len)
				*len = r->strs[j].len;
			return r->strs[j].s;
		}
	}
	return NULL;
}

/* ---- header and footer -------------------------------------------------------------- */

static int fail(const char **errmsg, const char *msg, int err)
{
	if (errmsg)
		*errmsg = msg;
	return err;
}

static int read_header(struct gt_reader *r, const char **errmsg)
{
	uint8_t fixed[GT_HEADER_FIXED_BYTES], *buf = NULL, *p, *crcpos;
	const char **dst[GT_HEADER_NSTRINGS] = {
	        &r->header.info.hostname,      &r->header.info.cmdline,
	        &r->header.info.tool_version,  &r->header.info.cuda_version,
	        &r->header.info.cupti_version, &r->header.info.driver_version,
	};
	uint32_t version, len;
	size_t have = r->file_size < sizeof(fixed) ? (size_t)r->file_size : sizeof(fixed);
	char *sp;
	int ret;

	if (r->file_size == 0)
		return fail(errmsg, "empty file", -EINVAL);
	ret = preadn(r->fd, fixed, have, 0);
	if (ret < 0)
		return fail(errmsg, "cannot read the header", ret);
	if (memcmp(fixed, GT_TRACE_MAGIC, have < 8 ? have : 8) != 0)
		return fail(errmsg, "not a gputrace file (bad magic)", -EINVAL);
	if (have < 16)
		return fail(errmsg, "truncated header", -EINVAL);
	version = gt_get_le32(fixed + 8);
	len = gt_get_le32(fixed + 12);
	if (version == 0)
		return fail(errmsg, "corrupt header (format version 0)", -EINVAL);
	if (version > GT_TRACE_VERSION) {
		snprintf(errbuf, sizeof(errbuf),
		         "written by a newer gputrace (format %u, this reader knows %u)", version,
		         GT_TRACE_VERSION);
		return fail(errmsg, errbuf, -EPROTONOSUPPORT);
	}
	if (len < GT_HEADER_FIXED_BYTES + 4u * GT_HEADER_NSTRINGS + 4 || len > GT_HEADER_MAX_BYTES)
		return fail(errmsg, "corrupt header (bad length)", -EINVAL);
	if (len > r->file_size)
		return fail(errmsg, "truncated header", -EINVAL);
	buf = malloc(len);
	r->header_strings = malloc(len); /* the strings and their NULs fit in len bytes */
	if (!buf || !r->header_strings) {
		ret = fail(errmsg, "out of memory", -ENOMEM);
		goto out;
	}
	ret = preadn(r->fd, buf, len, 0);
	if (ret < 0) {
		fail(errmsg, "cannot read the header", ret);
		goto out;
	}
	crcpos = buf + len - 4;
	if (gt_get_le32(crcpos) != gt_crc32c(0, buf, len - 4u)) {
		ret = fail(errmsg, "corrupt header (checksum mismatch)", -EINVAL);
		goto out;
	}
	r->header.version = version;
	r->header.info.clock_id = gt_get_le32(buf + 16);
	r->header.info.start_realtime_ns = gt_get_le64(buf + 24);
	r->header.info.start_trace_ns = gt_get_le64(buf + 32);
	p = buf + GT_HEADER_FIXED_BYTES;
	sp = r->header_strings;
	for (unsigned i = 0; i < GT_HEADER_NSTRINGS; i++) {
		uint32_t n;

		if ((size_t)(crcpos - p) < 4) {
			ret = fail(errmsg, "corrupt header (bad string length)", -EINVAL);
			goto out;
		}
		n = gt_get_le32(p);
		p += 4;
		if (n > (size_t)(crcpos - p)) {
			ret = fail(errmsg, "corrupt header (bad string length)", -EINVAL);
			goto out;
		}
		memcpy(sp, p, n);
		sp[n] = '\0';
		*dst[i] = sp;
		sp += n + 1;
		p += n;
	}
	/* bytes between the last string and the checksum: fields of a newer minor revision */
	r->data_start = len;
	ret = 0;
out:
	free(buf);
	return ret;
}

/* Validate the trailer and footer; on success fill the footer fields. Any damage just means
 * "no footer": the caller falls back to scanning. Returns 1 valid, 0 absent/bad, -errno. */
static int read_footer(struct gt_reader *r)
{
	uint8_t t[GT_TRAILER_BYTES], head[FOOTER_HEAD_BYTES], *buf = NULL;
	uint64_t off, len, n, tail_off, tail_len, ntypes;
	uint32_t crc = 0;
	int ret;

	if (r->file_size < r->data_start + FOOTER_HEAD_BYTES + FOOTER_TAIL_MIN + GT_TRAILER_BYTES)
		return 0;
	ret = preadn(r->fd, t, sizeof(t), r->file_size - GT_TRAILER_BYTES);
	if (ret < 0)
		return ret;
	if (memcmp(t, GT_TRAILER_MAGIC, 8) != 0 || gt_get_le32(t + 28) != gt_crc32c(0, t, 28))
		return 0;
	off = gt_get_le64(t + 8);
	len = gt_get_le64(t + 16);
	if (off >= r->data_start && off < r->file_size)
		r->trailer_footer = off; /* the footer's place, should it not check */
	if (off < r->data_start || len < FOOTER_HEAD_BYTES + FOOTER_TAIL_MIN ||
	    len > r->file_size || off != r->file_size - GT_TRAILER_BYTES - len)
		return 0;
	/* checksum the whole footer in pieces so a huge index costs no memory */
	buf = malloc(SCAN_BYTES);
	if (!buf)
		return -ENOMEM;
	for (uint64_t done = 0; done < len;) {
		size_t piece = len - done < SCAN_BYTES ? (size_t)(len - done) : SCAN_BYTES;

		ret = preadn(r->fd, buf, piece, off + done);
		if (ret < 0)
			goto out;
		crc = done ? gt_crc32c(crc, buf, piece) : gt_crc32c(0, buf, piece);
		done += piece;
	}
	ret = 0;
	if (crc != gt_get_le32(t + 24))
		goto out;
	ret = preadn(r->fd, head, sizeof(head), off);
	if (ret < 0)
		goto out;
	r->entry_bytes = gt_get_le32(head + 4);
	n = gt_get_le64(head + 8);
	if (memcmp(head, GT_FOOTER_MAGIC, 4) != 0 || r->entry_bytes < GT_INDEX_ENTRY_MIN ||
	    r->entry_bytes > 4096 ||
	    n > (len - FOOTER_HEAD_BYTES - FOOTER_TAIL_MIN) / r->entry_bytes)
		goto out;
	tail_off = FOOTER_HEAD_BYTES + n * r->entry_bytes;
	tail_len = len - tail_off;
	ret = preadn(r->fd, buf, 8, off + tail_off);
	if (ret < 0)
		goto out;
	ntypes = gt_get_le32(buf);
	if (8 + ntypes * 8 + 24 > tail_len || 8 + ntypes * 8 + 24 > SCAN_BYTES)
		goto out;
	ret = preadn(r->fd, buf, (size_t)(8 + ntypes * 8 + 24), off + tail_off);
	if (ret < 0)
		goto out;
	memset(&r->footer_counts, 0, sizeof(r->footer_counts));
	/* a newer writer may count types this reader does not know: those are dropped */
	for (uint64_t i = 0; i < ntypes && i < GT_REC_MAX; i++)
		r->footer_counts.records[i] = gt_get_le64(buf + 8 + 8 * i);
	r->footer_counts.first_ts_ns = gt_get_le64(buf + 8 + 8 * ntypes);
	r->footer_counts.last_ts_ns = gt_get_le64(buf + 16 + 8 * ntypes);
	r->footer_counts.chunks = gt_get_le64(buf + 24 + 8 * ntypes);
	r->footer_offset = off;
	r->nchunks = n;
	ret = 1;
out:
	free(buf);
	return ret;
}

static void rewind_state(struct gt_reader *r)
{
	r->next_entry = 0;
	r->pos = r->data_start;
	r->done = r->data_start;
	r->idx_count = 0;
	r->p = r->end = NULL;
	r->status.chunks_read = 0;
	r->status.chunks_skipped = 0;
	r->status.bytes_skipped = 0;
	r->status.records_skipped = 0;
	r->status.chunks_passed = 0;
	r->status.records_dropped = 0;
	r->status.chunk_records_skipped = 0;
}

int gt_reader_open(const char *path, struct gt_reader **ret, const char **errmsg)
{
	struct gt_reader *r;
	struct stat st;
	int err;

	if (!path || !ret)
		return fail(errmsg, "invalid argument", -EINVAL);
	r = calloc(1, sizeof(*r));
	if (!r)
		return fail(errmsg, "out of memory", -ENOMEM);
	r->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (r->fd < 0) {
		err = -errno;
		fail(errmsg, strerror(-err), err);
		goto out;
	}
	if (fstat(r->fd, &st) < 0) {
		err = -errno;
		fail(errmsg, strerror(-err), err);
		goto out;
	}
	if (S_ISDIR(st.st_mode)) {
		err = fail(errmsg, "is a directory", -EISDIR);
		goto out;
	}
	r->file_size = (uint64_t)st.st_size;
	err = read_header(r, errmsg);
	if (err < 0)
		goto out;
	err = read_footer(r);
	if (err < 0) {
		fail(errmsg, "cannot read the footer", err);
		goto out;
	}
	r->have_footer = err == 1;
	r->status.recovered = !r->have_footer;
	if (r->have_footer) {
		r->idx_raw = malloc((size_t)INDEX_CACHE * r->entry_bytes);
		if (!r->idx_raw) {
			err = fail(errmsg, "out of memory", -ENOMEM);
			goto out;
		}
	}
	if (!r->have_footer && r->file_size == r->data_start) {
		err = fail(errmsg,
		           "no data: the file ends after its header (the writer stopped early)",
		           -EINVAL);
		goto out;
	}
	err = gt_codec_init(&r->codec);
	if (err < 0) {
		fail(errmsg, "internal error: record tables do not fit the codec", err);
		goto out;
	}
	r->dctx = ZSTD_createDCtx();
	r->str = malloc(sizeof(*r->str) + GT_STRING_MAX + 1);
	/* zeroed once: decoding writes every field, so padding stays zero */
	r->recs = calloc(GT_REC_MAX, sizeof(*r->recs));
	if (!r->dctx || !r->str || !r->recs) {
		err = fail(errmsg, "out of memory", -ENOMEM);
		goto out;
	}
	rewind_state(r);
	*ret = r;
	return 0;
out:
	gt_reader_close(r);
	return err;
}

/* ---- chunks ----------------------------------------------------------------------------- */

static bool chunk_sane(const struct gt_chunk_hdr *h)
{
	return h->raw_bytes <= GT_CHUNK_MAX_RAW && h->comp_bytes > 0 &&
	       h->comp_bytes <= ZSTD_compressBound(h->raw_bytes);
}

static int grow(uint8_t **buf, size_t *cap, size_t need)
{
	uint8_t *p;

	if (need <= *cap)
		return 0;
	p = realloc(*buf, need);
	if (!p)
		return -ENOMEM;
	*buf = p;
	*cap = need;
	return 0;
}

/* Read, check and decompress the chunk whose payload starts at off. Returns 1 loaded,
 * 0 damaged (checksum or zstd rejected it), -errno. */
static int load_chunk(struct gt_reader *r, const struct gt_chunk_hdr *h, uint64_t off)
{
	size_t n;
	int ret;

	ret = grow(&r->comp, &r->comp_cap, h->comp_bytes);
	if (ret < 0)
		return ret;
	ret = grow(&r->raw, &r->raw_cap, (size_t)h->raw_bytes + GT_CODEC_PAD);
	if (ret < 0)
		return ret;
	ret = preadn(r->fd, r->comp, h->comp_bytes, off);
	if (ret < 0)
		return ret;
	if (gt_crc32c(0, r->comp, h->comp_bytes) != h->crc)
		return 0;
	n = ZSTD_decompressDCtx(r->dctx, r->raw, h->raw_bytes, r->comp, h->comp_bytes);
	if (ZSTD_isError(n) || n != h->raw_bytes)
		return 0;
	memset(r->raw + n, 0, GT_CODEC_PAD);
	r->p = r->raw;
	r->end = r->raw + n;
	r->chunk_records = h->records;
	r->chunk_seen = 0;
	gt_codec_reset(&r->codec);
	return 1;
}

/* Entry k of the index (k < nchunks), through a cache of INDEX_CACHE entries. */
static int index_entry(struct gt_reader *r, uint64_t k, const struct gt_chunk_info **ci)
{
	if (k < r->idx_first || k >= r->idx_first + r->idx_count) {
		uint64_t n = r->nchunks - k < INDEX_CACHE ? r->nchunks - k : INDEX_CACHE;
		int ret;

		r->idx_count = 0;
		ret = preadn(r->fd, r->idx_raw, (size_t)n * r->entry_bytes,
		             r->footer_offset + FOOTER_HEAD_BYTES + k * r->entry_bytes);
		if (ret < 0)
			return ret;
		for (uint64_t i = 0; i < n; i++) {
			const uint8_t *e = r->idx_raw + i * r->entry_bytes;
			struct gt_chunk_info *c = &r->idx[i];

			c->offset = gt_get_le64(e);
			c->comp_bytes = gt_get_le32(e + 8);
			c->raw_bytes = gt_get_le32(e + 12);
			c->records = gt_get_le32(e + 16);
			/* e + 20: the frame's crc, checked against the chunk header's below */
			c->first_ts_ns = gt_get_le64(e + 24);
			c->last_ts_ns = gt_get_le64(e + 32);
			/* a newer writer may make entries longer still: the rest is skipped */
			c->have_types = r->entry_bytes >= GT_INDEX_ENTRY_BYTES;
			c->types = c->have_types ? gt_get_le64(e + 40) : UINT64_MAX;
		}
		r->idx_first = k;
		r->idx_count = n;
	}
	*ci = &r->idx[k - r->idx_first];
	return 0;
}

int gt_reader_chunk_info(struct gt_reader *r, uint64_t k, struct gt_chunk_info *out)
{
	const struct gt_chunk_info *ci;
	int ret;

	if (!r || !out)
		return -EINVAL;
	if (!r->have_footer || k >= r->nchunks)
		return 0;
	ret = index_entry(r, k, &ci);
	if (ret < 0)
		return ret;
	*out = *ci;
	return 1;
}

/* A damaged chunk: its bytes in the file, and the records it held when its header or the
 * index says (0 when neither can be trusted). */
static void skip_chunk(struct gt_reader *r, uint64_t bytes, uint64_t records)
{
	r->status.chunks_skipped++;
	r->status.bytes_skipped += bytes;
	r->status.chunk_records_skipped += records;
}

/* Footer mode: the index says where every chunk is. */
static int next_chunk_indexed(struct gt_reader *r)
{
	while (r->next_entry < r->nchunks) {
		uint8_t hb[GT_CHUNK_HDR_BYTES];
		const struct gt_chunk_info *ci;
		struct gt_chunk_hdr ix, h;
		uint64_t off, k = r->next_entry++;
		int ret;

		ret = index_entry(r, k, &ci);
		if (ret < 0)
			return ret;
		off = ci->offset;
		ix.comp_bytes = ci->comp_bytes;
		ix.raw_bytes = ci->raw_bytes;
		ix.records = ci->records;
		ix.crc = gt_get_le32(r->idx_raw + (k - r->idx_first) * r->entry_bytes + 20);
		ix.first_ts_ns = ci->first_ts_ns;
		ix.last_ts_ns = ci->last_ts_ns;
		if (r->filter.chunk && !r->filter.chunk(r->filter.ctx, ci)) {
			r->status.chunks_passed++;
			if (off <= r->footer_offset)
				r->done = off;
			continue;
		}
		if (!chunk_sane(&ix) || off < r->data_start || off > r->footer_offset ||
		    GT_CHUNK_HDR_BYTES + (uint64_t)ix.comp_bytes > r->footer_offset - off) {
			/* the footer's checksum held, so this is a writer bug; pass over it, with
			 * the bytes it claims that lie between the header and the footer */
			uint64_t bytes = 0;

			if (off >= r->data_start && off < r->footer_offset) {
				bytes = GT_CHUNK_HDR_BYTES + (uint64_t)ix.comp_bytes;
				if (bytes > r->footer_offset - off)
					bytes = r->footer_offset - off;
			}
			skip_chunk(r, bytes, ix.records);
			continue;
		}
		r->done = off + GT_CHUNK_HDR_BYTES + ix.comp_bytes;
		ret = preadn(r->fd, hb, sizeof(hb), off);
		if (ret < 0)
			return ret;
		if (!gt_chunk_hdr_decode(hb, &h) || h.comp_bytes != ix.comp_bytes ||
		    h.raw_bytes != ix.raw_bytes || h.crc != ix.crc) {
			skip_chunk(r, GT_CHUNK_HDR_BYTES + ix.comp_bytes, ix.records);
			continue;
		}
		ret = load_chunk(r, &ix, off + GT_CHUNK_HDR_BYTES);
		if (ret < 0)
			return ret;
		if (ret == 0) {
			skip_chunk(r, GT_CHUNK_HDR_BYTES + ix.comp_bytes, ix.records);
			continue;
		}
		r->status.chunks_read++;
		return 1;
	}
	r->done = r->file_size;
	return 0;
}

/* Offset of the next chunk magic at or after `from`, or the file size if none. */
static int find_magic(struct gt_reader *r, uint64_t from, uint64_t *at)
{
	uint8_t *buf;
	int ret = 0;

	ret = grow(&r->comp, &r->comp_cap, SCAN_BYTES);
	if (ret < 0)
		return ret;
	buf = r->comp;
	while (from + 4 <= r->file_size) {
		uint64_t left = r->file_size - from;
		size_t n = left < SCAN_BYTES ? (size_t)left : SCAN_BYTES;
		const uint8_t *m;

		ret = preadn(r->fd, buf, n, from);
		if (ret < 0)
			return ret;
		m = memmem(buf, n, GT_CHUNK_MAGIC, 4);
		if (m) {
			*at = from + (uint64_t)(m - buf);
			return 0;
		}
		/* windows overlap by 3 bytes so a magic across a boundary is not missed */
		from += n - 3;
	}
	*at = r->file_size;
	return 0;
}

/* Whether the n bytes at b (n < 4: all that is left of the file) are where a footer starts:
 * a file whose trailer is damaged, or that was cut inside its footer. */
static bool footer_starts(const uint8_t *b, uint64_t n)
{
	return memcmp(b, GT_FOOTER_MAGIC, n < 4 ? (size_t)n : 4) == 0;
}

/* Scan mode (no footer): walk chunk headers; past damage, look for the next magic. Where a
 * chunk should start, whatever is not one is a damaged chunk (up to the next chunk header
 * that checks, or the end) unless it is where the footer starts. */
static int next_chunk_scan(struct gt_reader *r)
{
	while (r->pos < r->file_size) {
		uint8_t hb[GT_CHUNK_HDR_BYTES];
		struct gt_chunk_hdr h;
		uint64_t next, left = r->file_size - r->pos;
		size_t have = left < sizeof(hb) ? (size_t)left : sizeof(hb);
		bool decoded;
		int ret;

		ret = preadn(r->fd, hb, have, r->pos);
		if (ret < 0)
			return ret;
		if (r->pos == r->trailer_footer || footer_starts(hb, have))
			break; /* the footer, damaged or cut off: no chunk after it */
		if (left < GT_CHUNK_HDR_BYTES) {
			/* the writer stopped in the middle of this chunk's header */
			skip_chunk(r, left, 0);
			break;
		}
		decoded = gt_chunk_hdr_decode(hb, &h);
		if (!decoded || !chunk_sane(&h)) {
			/* a damaged chunk header: nothing in it can be trusted, not even how many
			 * records the chunk held; lengths out of bounds under a checksum that held
			 * are a writer's bug, and its count is what that writer said */
			ret = find_magic(r, r->pos + 1, &next);
			if (ret < 0)
				return ret;
			skip_chunk(r, next - r->pos, decoded ? h.records : 0);
			r->pos = next;
			r->done = next;
			continue;
		}
		if (h.comp_bytes > left - GT_CHUNK_HDR_BYTES) {
			/* the writer stopped in the middle of this chunk */
			skip_chunk(r, left, h.records);
			break;
		}
		r->pos += GT_CHUNK_HDR_BYTES + h.comp_bytes;
		r->done = r->pos;
		ret = load_chunk(r, &h, r->pos - h.comp_bytes);
		if (ret < 0)
			return ret;
		if (ret == 0) {
			skip_chunk(r, GT_CHUNK_HDR_BYTES + h.comp_bytes, h.records);
			continue;
		}
		r->status.chunks_read++;
		return 1;
	}
	r->pos = r->file_size;
	r->done = r->file_size;
	return 0;
}

/* gt_reader_next()'s less frequent work, kept out of its loop so that the loop stays small:
 * what a decoded string or a record filter needs. Returns 1 to hand the record on, 0 when
 * the filter dropped it, -errno. */
static __attribute__((noinline)) int next_extra(struct gt_reader *r, const union gt_record **rec)
{
	int ret;

	if ((*rec)->hdr.type == GT_REC_STRING) {
		ret = strs_put(r, &(*rec)->string);
		if (ret < 0)
			return ret;
	}
	if (r->filter.record) {
		const union gt_record *kept = r->filter.record(r->filter.ctx, *rec);

		if (!kept) {
			r->status.records_dropped++;
			return 0;
		}
		*rec = kept;
	}
	return 1;
}

/* A record gt_codec_decode() did not return: counted, and after a bad length the rest of
 * the chunk given up. */
static __attribute__((noinline)) void next_damage(struct gt_reader *r, int d)
{
	if (d == GT_DECODE_BROKEN) {
		/* nothing after a bad length can be trusted: this record and every one the
		 * chunk header counts after it are lost */
		r->status.records_skipped +=
		        r->chunk_records >= r->chunk_seen
		                ? (uint64_t)r->chunk_records - r->chunk_seen + 1
		                : 1;
		r->p = r->end;
		return;
	}
	r->status.records_skipped++;
}

static __attribute__((noinline)) int next_chunk(struct gt_reader *r)
{
	return r->have_footer ? next_chunk_indexed(r) : next_chunk_scan(r);
}

#define NEXT_NOTHING 2 /* next_slow(): no decoded record pending */

/* gt_reader_next() past its common case: d is what gt_codec_decode() said of the record
 * just decoded, or NEXT_NOTHING. */
static __attribute__((noinline)) int next_slow(struct gt_reader *r, const union gt_record **rec,
                                               int d)
{
	int ret;

	for (;;) {
		if (d == GT_DECODE_OK) {
			ret = next_extra(r, rec);
			if (ret != 0)
				return ret;
		} else if (d != NEXT_NOTHING) {
			next_damage(r, d);
		}
		while (r->p >= r->end) {
			ret = next_chunk(r);
			if (ret <= 0)
				return ret;
		}
		r->chunk_seen++;
		d = gt_codec_decode(&r->codec, &r->p, r->end, r->recs, r->str, rec);
	}
}

int gt_reader_next(struct gt_reader *r, const union gt_record **rec)
{
	int d;

	/* the common case in line: a record of the current chunk, not a string, no filter */
	if (r->p < r->end && !r->filter.record) {
		r->chunk_seen++;
		d = gt_codec_decode(&r->codec, &r->p, r->end, r->recs, r->str, rec);
		if (d == GT_DECODE_OK && (*rec)->hdr.type != GT_REC_STRING)
			return 1;
		return next_slow(r, rec, d);
	}
	return next_slow(r, rec, NEXT_NOTHING);
}

int gt_reader_next_batch(struct gt_reader *r, uint64_t types, void *buf, size_t stride, size_t cap)
{
	const union gt_record *rec;
	unsigned char *out = buf;
	size_t n = 0;
	int ret = 0;

	if (!r || !types || (types & (1ull << GT_REC_NONE | 1ull << GT_REC_STRING)) ||
	    (GT_REC_MAX < 64 && (types >> GT_REC_MAX)) || stride % 8 || (cap && !buf))
		return -EINVAL;
	for (unsigned t = 0; t < GT_REC_MAX; t++) {
		const struct gt_record_desc *d = gt_record_desc(t);

		if ((types >> t & 1) && (!d || d->size > stride))
			return -EINVAL;
	}
	if (cap > (size_t)INT_MAX)
		cap = INT_MAX; /* the count must fit the return value */
	/* records of other types are read past (strings still enter the table) */
	while (n < cap && (ret = gt_reader_next(r, &rec)) > 0) {
		size_t size;

		if (rec->hdr.type >= 64 || !(types >> rec->hdr.type & 1))
			continue;
		size = gt_record_desc(rec->hdr.type)->size;
		memcpy(out + n * stride, rec, size);
		memset(out + n * stride + size, 0, stride - size);
		n++;
	}
	if (n < cap && ret < 0)
		return ret;
	return (int)n;
}

const struct gt_trace_header *gt_reader_header(const struct gt_reader *r)
{
	return &r->header;
}

const struct gt_trace_counts *gt_reader_footer_counts(const struct gt_reader *r)
{
	return r->have_footer ? &r->footer_counts : NULL;
}

/* The smallest first_ts_ns and largest last_ts_ns of every chunk header that checks, found by
 * walking the headers as the scan does (past damage, to the next magic), without reading the
 * chunks. A chunk whose frame is damaged or cut short still counts: its header says what the
 * whole trace held. */
static int scan_times(struct gt_reader *r)
{
	uint64_t pos = r->data_start, first = UINT64_MAX, last = 0;

	while (pos < r->file_size && r->file_size - pos >= GT_CHUNK_HDR_BYTES) {
		uint8_t hb[GT_CHUNK_HDR_BYTES];
		struct gt_chunk_hdr h;
		int ret = preadn(r->fd, hb, sizeof(hb), pos);

		if (ret < 0)
			return ret;
		if (!gt_chunk_hdr_decode(hb, &h) || !chunk_sane(&h)) {
			ret = find_magic(r, pos + 1, &pos);
			if (ret < 0)
				return ret;
			continue;
		}
		if (h.first_ts_ns && h.first_ts_ns < first)
			first = h.first_ts_ns;
		if (h.last_ts_ns > last)
			last = h.last_ts_ns;
		pos += GT_CHUNK_HDR_BYTES + (uint64_t)h.comp_bytes;
	}
	r->scan_first_ns = first;
	r->scan_last_ns = last;
	r->have_scan_times = true;
	return 0;
}

int gt_reader_times(struct gt_reader *r, struct gt_trace_times *t)
{
	const struct gt_trace_info *h;
	uint64_t first, last, zero;

	if (!r || !t)
		return -EINVAL;
	h = &r->header.info;
	if (r->have_footer) {
		first = r->footer_counts.first_ts_ns ? r->footer_counts.first_ts_ns : UINT64_MAX;
		last = r->footer_counts.last_ts_ns;
	} else {
		if (!r->have_scan_times) {
			int ret = scan_times(r);

			if (ret < 0)
				return ret;
		}
		first = r->scan_first_ns;
		last = r->scan_last_ns;
	}
	if (first == UINT64_MAX)
		last = 0;
	zero = h->start_trace_ns;
	if (first != UINT64_MAX && (!zero || first < zero))
		zero = first;
	t->zero_ns = zero;
	t->first_ns = first;
	t->last_ns = last;
	t->span_ns = last > zero ? last - zero : 0;
	t->zero_realtime_ns = 0;
	if (h->start_realtime_ns && h->start_trace_ns) {
		/* the same moment on both clocks: zero is at most the header's start */
		uint64_t back = h->start_trace_ns > zero ? h->start_trace_ns - zero : 0;

		t->zero_realtime_ns = h->start_realtime_ns > back ? h->start_realtime_ns - back : 0;
	}
	return 0;
}

const struct gt_reader_status *gt_reader_status(const struct gt_reader *r)
{
	return &r->status;
}

int gt_reader_set_filter(struct gt_reader *r, const struct gt_reader_filter *f)
{
	if (!r)
		return -EINVAL;
	if (f)
		r->filter = *f;
	else
		memset(&r->filter, 0, sizeof(r->filter));
	return 0;
}

int gt_reader_rewind(struct gt_reader *r)
{
	if (!r)
		return -EINVAL;
	rewind_state(r);
	return 0;
}

void gt_reader_progress(const struct gt_reader *r, uint64_t *done, uint64_t *total)
{
	if (done)
		*done = r->done;
	if (total)
		*total = r->file_size;
}

void gt_reader_close(struct gt_reader *r)
{
	if (!r)
		return;
	if (r->fd >= 0)
		close(r->fd);
	for (size_t i = 0; r->strs && i <= r->strs_mask; i++)
		free(r->strs[i].s);
	free(r->strs);
	ZSTD_freeDCtx(r->dctx);
	free(r->comp);
	free(r->raw);
	free(r->str);
	free(r->recs);
	free(r->header_strings);
	free(r->idx_raw);
	free(r);
}
