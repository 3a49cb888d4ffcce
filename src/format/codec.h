/* Private to the trace file code (writer.c, reader.c, codec.c, crc32c.c): the byte layout
 * of the .gtrace file and the record codec. Runs wherever the writer or reader runs (the CLI,
 * and the standalone drainer thread of the injection library). docs/format.md is the spec. */
#ifndef GPUTRACE_CODEC_H
#define GPUTRACE_CODEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "gputrace/record.h"
#include "gputrace/trace.h"

/* ---- fixed layout ------------------------------------------------------------------ */

#define GT_CHUNK_MAGIC   "GTCK"     /* 4 bytes at the start of every chunk header */
#define GT_FOOTER_MAGIC  "GTFT"     /* 4 bytes at the start of the footer */
#define GT_TRAILER_MAGIC "GTFOOTER" /* 8 bytes at the start of the trailer */

#define GT_HEADER_FIXED_BYTES 40u        /* magic .. start_trace_ns, before the strings */
#define GT_HEADER_MAX_BYTES   (1u << 20) /* readers refuse longer headers */
#define GT_HEADER_NSTRINGS    6u
#define GT_CHUNK_HDR_BYTES    40u
#define GT_INDEX_ENTRY_BYTES  48u /* what this writer writes: with the chunk's types */
#define GT_INDEX_ENTRY_MIN    40u /* the shortest a reader accepts: before the types */
#define GT_TRAILER_BYTES      32u

/* Largest uncompressed chunk payload a writer produces and a reader accepts. */
#define GT_CHUNK_MAX_RAW     (64u << 20)
#define GT_CHUNK_DEFAULT_RAW (1u << 20)

/* A decoded chunk header (GT_CHUNK_HDR_BYTES on disk). */
struct gt_chunk_hdr {
	uint32_t comp_bytes; /* zstd frame that follows the header */
	uint32_t raw_bytes;  /* decompressed payload */
	uint32_t records;    /* records encoded in the payload */
	uint32_t crc;        /* crc32c of the compressed bytes */
	uint64_t first_ts_ns;
	uint64_t last_ts_ns;
};

/* ---- little-endian helpers ---------------------------------------------------------- */

static inline void gt_put_le32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

static inline void gt_put_le64(uint8_t *p, uint64_t v)
{
	gt_put_le32(p, (uint32_t)v);
	gt_put_le32(p + 4, (uint32_t)(v >> 32));
}

static inline uint32_t gt_get_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t gt_get_le64(const uint8_t *p)
{
	return (uint64_t)gt_get_le32(p) | (uint64_t)gt_get_le32(p + 4) << 32;
}

/* Encode/decode a chunk header; decode returns false if the magic or its checksum is wrong. */
void gt_chunk_hdr_encode(uint8_t out[GT_CHUNK_HDR_BYTES], const struct gt_chunk_hdr *h);
bool gt_chunk_hdr_decode(const uint8_t in[GT_CHUNK_HDR_BYTES], struct gt_chunk_hdr *h);

/* CRC-32C (Castagnoli), as used by iSCSI and ext4: crc32c("123456789") == 0xe3069283.
 * Pass 0 as crc to start; feed the result back in to continue. */
uint32_t gt_crc32c(uint32_t crc, const void *buf, size_t len);
/* The table-driven path alone, so tests cover it on CPUs that have the instruction. */
uint32_t gt_crc32c_sw(uint32_t crc, const void *buf, size_t len);

/* Append bytes already encoded as records to the pending chunk (tests use it to plant
 * record kinds this writer does not know; a chunk copier could too). The bytes must decode
 * on their own from the delta state at a chunk start: call gt_writer_flush() first. They go
 * into the chunk's record count but into no per-type count.
 * Returns 0, -EINVAL if len exceeds a chunk, -errno from I/O. */
struct gt_writer;
int gt_writer_append_encoded(struct gt_writer *w, const void *bytes, size_t len, uint32_t records);

/* ---- record codec -------------------------------------------------------------------- */

/* Fields per record type, pid included; record.c's tables must stay within this. */
#define GT_CODEC_MAX_FIELDS 32u
/* Bytes a varint may take (64-bit values). */
#define GT_VARINT_MAX 10u
/* Bytes one encoded non-string record can take: type, length and every field. */
#define GT_CODEC_MAX_FIXED (2u * GT_VARINT_MAX + GT_CODEC_MAX_FIELDS * GT_VARINT_MAX)
/* Bytes one encoded record of any type can take. */
#define GT_CODEC_MAX_RECORD (GT_CODEC_MAX_FIXED + GT_STRING_MAX)
/* Zero bytes a reader keeps after a payload. The decoder reads a run of fields without a
 * bounds check per field and checks once after the run: past the payload's end it can read
 * one varint that started inside (10 bytes), then a byte per remaining field of the run
 * (zeros are one-byte varints), plus the 8-byte load of the fast varint path. */
#define GT_CODEC_PAD (GT_VARINT_MAX + GT_CODEC_MAX_FIELDS + 8u)

/* One field of a type's program; its delta state is prev[type][index of the op]. */
struct gt_codec_op {
	uint16_t offset; /* bytes from the start of the record */
	uint8_t kind;    /* codec.c's enum op_kind: the common shapes get a case of their own */
	uint8_t bits;    /* width code and GT_FIELD_* flags, for the generic case */
};

/* Delta fields usually come first (pid, times, correlation id): the decoder saves this many
 * delta states per record, or all of them for a type with a later delta field. */
#define GT_CODEC_EARLY 8u

/* Consecutive ops of one kind, handled by one tight loop (a kernel record's 24 fields are
 * six runs), so the codec dispatches per run rather than per field. */
struct gt_codec_run {
	uint8_t kind;  /* of every op in the run */
	uint8_t first; /* index of its first op */
	uint8_t end;   /* index past its last op */
};

struct gt_codec_prog {
	uint16_t size; /* sizeof the struct (strings: the fixed part) */
	uint16_t nops; /* pid first, then the fields of gt_record_desc in order */
	uint16_t nruns;
	bool late_delta; /* a delta field after the first GT_CODEC_EARLY ops */
	bool straight;   /* codec.c has straight-line code matching this table */
	struct gt_codec_op ops[GT_CODEC_MAX_FIELDS];
	struct gt_codec_run runs[GT_CODEC_MAX_FIELDS];
};

/* Codec state: one per writer or reader. The delta state restarts at every chunk. */
struct gt_codec {
	struct gt_codec_prog progs[GT_REC_MAX];
	uint64_t prev[GT_REC_MAX][GT_CODEC_MAX_FIELDS]; /* last value of each delta field */
	uint64_t first_ts_ns; /* smallest non-zero time field encoded since reset (writer only) */
	uint64_t last_ts_ns;  /* largest (writer only) */
};

/* Build the per-type programs from record.c's tables. Returns 0 or -EINVAL if a table
 * does not fit (more than GT_CODEC_MAX_FIELDS fields, or a bad width). */
int gt_codec_init(struct gt_codec *c);

/* Forget the delta state and the time range (at each chunk start). */
void gt_codec_reset(struct gt_codec *c);

/* Encode one validated record (gt_record_validate) into out, which has room for
 * GT_CODEC_MAX_RECORD bytes. Returns the bytes written. */
size_t gt_codec_encode(struct gt_codec *c, const struct gt_rec_hdr *rec, uint8_t *out);

/* Encode a string record from its parts (len <= GT_STRING_MAX). */
size_t gt_codec_encode_string(struct gt_codec *c, uint32_t pid, uint32_t id, const char *s,
                              size_t len, uint8_t *out);

enum gt_decode_result {
	GT_DECODE_OK = 1,      /* *out holds a record */
	GT_DECODE_SKIPPED = 0, /* unknown type or malformed body: skipped, go on */
	GT_DECODE_BROKEN = -1, /* the record's length runs past the payload: stop the chunk */
};

/* Decode the record at *pp (payload ends at end, followed by GT_CODEC_PAD readable bytes).
 * Fixed-size records are written to recs[type] (whose padding the caller keeps zeroed);
 * strings to str (room for a gt_rec_string + GT_STRING_MAX + 1 bytes, NUL-terminated).
 * Advances *pp past the record unless BROKEN. *out points at the decoded record. */
int gt_codec_decode(struct gt_codec *c, const uint8_t **pp, const uint8_t *end,
                    union gt_record *recs, struct gt_rec_string *str, const union gt_record **out);

static inline uint8_t *gt_put_varint(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

static inline uint64_t gt_zigzag(int64_t v)
{
	return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static inline int64_t gt_unzigzag(uint64_t v)
{
	return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

#endif /* GPUTRACE_CODEC_H */
