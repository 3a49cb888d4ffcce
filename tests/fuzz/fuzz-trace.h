/* Turning fuzz input into a .gtrace file, for the targets that read traces (fuzz-reader,
 * fuzz-export). The first input byte picks how the rest becomes a file, so that mutations
 * get past the checksums that would otherwise reject almost everything at the first byte
 * changed:
 *   0 raw     the bytes are the file as they are;
 *   1 fixup   the bytes are a file whose header, chunk, index and footer checksums are
 *             recomputed wherever the layout can be followed;
 *   2 built   a valid header, then each piece of the input (split at FUZZ_SEP) becomes the
 *             decompressed payload of one chunk, so the record decoder sees arbitrary bytes;
 *             bit 0 of the second byte adds a footer index.
 * Header-only; runs in the fuzz programs. */
#ifndef GPUTRACE_FUZZ_TRACE_H
#define GPUTRACE_FUZZ_TRACE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "codec.h"
#include "fuzz-common.h"

#define FUZZ_SEP                                                                                   \
	"\xff"                                                                                     \
	"CHK" /* chunk separator in "built" inputs */
#define FUZZ_MAX_CHUNKS 64u

enum {
	FUZZ_MODE_RAW,
	FUZZ_MODE_FIXUP,
	FUZZ_MODE_BUILT,
	FUZZ_MODE_MAX
};

static uint8_t *buf; /* the file being assembled; grows */
static size_t buf_cap;

static bool reserve(size_t need)
{
	uint8_t *p;

	if (need <= buf_cap)
		return true;
	p = realloc(buf, need);
	if (!p)
		return false;
	buf = p;
	buf_cap = need;
	return true;
}

/* ---- fixup: recompute checksums along the layout ------------------------------------ */

static void fix_chunks(uint8_t *f, size_t start, size_t end)
{
	size_t pos = start;

	while (pos + GT_CHUNK_HDR_BYTES <= end) {
		uint32_t comp;

		if (memcmp(f + pos, GT_CHUNK_MAGIC, 4) != 0) {
			pos++;
			continue;
		}
		comp = gt_get_le32(f + pos + 4);
		if (comp <= end - pos - GT_CHUNK_HDR_BYTES)
			gt_put_le32(f + pos + 32, gt_crc32c(0, f + pos + GT_CHUNK_HDR_BYTES, comp));
		gt_put_le32(f + pos + 36, gt_crc32c(0, f + pos, 36));
		if (comp > end - pos - GT_CHUNK_HDR_BYTES)
			return;
		pos += GT_CHUNK_HDR_BYTES + comp;
	}
}

static void fixup(uint8_t *f, size_t n)
{
	size_t start = 0, end = n;
	uint32_t hlen;

	if (n < 16 || memcmp(f, GT_TRACE_MAGIC, 8) != 0)
		return;
	hlen = gt_get_le32(f + 12);
	if (hlen >= 8 && hlen <= n) {
		gt_put_le32(f + hlen - 4, gt_crc32c(0, f, hlen - 4u));
		start = hlen;
	}
	if (n >= start + GT_TRAILER_BYTES &&
	    memcmp(f + n - GT_TRAILER_BYTES, GT_TRAILER_MAGIC, 8) == 0) {
		uint8_t *t = f + n - GT_TRAILER_BYTES;
		uint64_t off = gt_get_le64(t + 8), len = gt_get_le64(t + 16);

		if (off >= start && len <= n && off + len == n - GT_TRAILER_BYTES) {
			uint64_t count = len >= 16 ? gt_get_le64(f + off + 8) : 0;

			end = (size_t)off;
			fix_chunks(f, start, end);
			/* Index entries carry a copy of their chunk's checksum: keep it in step
			 * with the chunk, so mutated payloads are decoded in index mode too. */
			for (uint64_t k = 0; len >= 16 && k < count && 16 + (k + 1) * 40 <= len;
			     k++) {
				uint8_t *e = f + off + 16 + k * 40;
				uint64_t at = gt_get_le64(e);

				if (at >= start && end >= GT_CHUNK_HDR_BYTES &&
				    at <= end - GT_CHUNK_HDR_BYTES &&
				    memcmp(f + at, GT_CHUNK_MAGIC, 4) == 0)
					memcpy(e + 20, f + at + 32, 4);
			}
			gt_put_le32(t + 24, gt_crc32c(0, f + off, (size_t)len));
			gt_put_le32(t + 28, gt_crc32c(0, t, 28));
			return;
		}
		end = n - GT_TRAILER_BYTES;
	}
	fix_chunks(f, start, end);
}

/* ---- built: a valid header and chunks around arbitrary payloads ------------------------ */

static size_t put_header(uint8_t *f)
{
	static const char *const strs[GT_HEADER_NSTRINGS] = {"fuzzhost", "fuzz --cmd", "0.1.0",
	                                                     "13.0",     "",           "580.1"};
	uint8_t *p = f + GT_HEADER_FIXED_BYTES;

	memcpy(f, GT_TRACE_MAGIC, 8);
	gt_put_le32(f + 8, GT_TRACE_VERSION);
	gt_put_le32(f + 16, 0);
	gt_put_le32(f + 20, 0);
	gt_put_le64(f + 24, 1700000000000000000ull);
	gt_put_le64(f + 32, 1000);
	for (unsigned i = 0; i < GT_HEADER_NSTRINGS; i++) {
		size_t n = strlen(strs[i]);

		gt_put_le32(p, (uint32_t)n);
		memcpy(p + 4, strs[i], n);
		p += 4 + n;
	}
	gt_put_le32(f + 12, (uint32_t)(p - f + 4));
	gt_put_le32(p, gt_crc32c(0, f, (size_t)(p - f)));
	return (size_t)(p - f) + 4;
}

static size_t build(const uint8_t *in, size_t n)
{
	static ZSTD_CCtx *cctx;
	struct {
		uint64_t off;
		struct gt_chunk_hdr h;
	} ix[FUZZ_MAX_CHUNKS];
	bool footer = n > 0 && (in[0] & 1);
	size_t len, nix = 0;
	uint8_t *p;

	if (n)
		in++, n--;
	if (!cctx)
		cctx = ZSTD_createCCtx();
	if (!cctx || !reserve(1024 + FUZZ_MAX_CHUNKS * (GT_CHUNK_HDR_BYTES + 64) +
	                      ZSTD_compressBound(n) + FUZZ_MAX_CHUNKS * 40 + 8 * GT_REC_MAX))
		return 0;
	len = put_header(buf);
	while (nix < FUZZ_MAX_CHUNKS) {
		const uint8_t *sep = memmem(in, n, FUZZ_SEP, 4);
		size_t piece = sep ? (size_t)(sep - in) : n;
		size_t comp = ZSTD_compressCCtx(cctx, buf + len + GT_CHUNK_HDR_BYTES,
		                                buf_cap - len - GT_CHUNK_HDR_BYTES, in, piece, 1);
		struct gt_chunk_hdr h = {0};

		if (ZSTD_isError(comp))
			return 0;
		h.comp_bytes = (uint32_t)comp;
		h.raw_bytes = (uint32_t)piece;
		h.crc = gt_crc32c(0, buf + len + GT_CHUNK_HDR_BYTES, comp);
		gt_chunk_hdr_encode(buf + len, &h);
		ix[nix].off = len;
		ix[nix++].h = h;
		len += GT_CHUNK_HDR_BYTES + comp;
		if (!sep)
			break;
		in = sep + 4;
		n -= piece + 4;
	}
	if (!footer)
		return len;
	p = buf + len;
	memcpy(p, GT_FOOTER_MAGIC, 4);
	gt_put_le32(p + 4, GT_INDEX_ENTRY_BYTES);
	gt_put_le64(p + 8, nix);
	p += 16;
	for (size_t i = 0; i < nix; i++, p += GT_INDEX_ENTRY_BYTES) {
		gt_put_le64(p, ix[i].off);
		gt_put_le32(p + 8, ix[i].h.comp_bytes);
		gt_put_le32(p + 12, ix[i].h.raw_bytes);
		gt_put_le32(p + 16, 0);
		gt_put_le32(p + 20, ix[i].h.crc);
		gt_put_le64(p + 24, 0);
		gt_put_le64(p + 32, 0);
	}
	gt_put_le32(p, GT_REC_MAX);
	gt_put_le32(p + 4, 0);
	p += 8;
	memset(p, 0, 8 * GT_REC_MAX + 24);
	p += 8 * GT_REC_MAX + 24;
	{
		uint64_t foff = len, flen = (uint64_t)(p - (buf + len));

		memcpy(p, GT_TRAILER_MAGIC, 8);
		gt_put_le64(p + 8, foff);
		gt_put_le64(p + 16, flen);
		gt_put_le32(p + 24, gt_crc32c(0, buf + foff, (size_t)flen));
		gt_put_le32(p + 28, gt_crc32c(0, p, 28));
	}
	return (size_t)(p + GT_TRAILER_BYTES - buf);
}

/* The file for `data` (mode byte first), in a memfd; its path, and its length in *len.
 * NULL when the input makes no file (empty, or no memory). */
static inline const char *fuzz_trace_file(const uint8_t *data, size_t size, size_t *len)
{
	if (size < 1)
		return NULL;
	switch (data[0] % FUZZ_MODE_MAX) {
	case FUZZ_MODE_RAW:
		*len = size - 1;
		return fuzz_memfile(data + 1, size - 1);
	case FUZZ_MODE_FIXUP:
		if (!reserve(size))
			return NULL;
		memcpy(buf, data + 1, size - 1);
		fixup(buf, size - 1);
		*len = size - 1;
		return fuzz_memfile(buf, size - 1);
	default:
		*len = build(data + 1, size - 1);
		return *len ? fuzz_memfile(buf, *len) : NULL;
	}
}

#endif /* GPUTRACE_FUZZ_TRACE_H */
