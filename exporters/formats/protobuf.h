/* A minimal protobuf wire-format encoder (and a field reader for tests), written for the
 * perfetto exporter: it writes straight into a caller's buffer, nested messages reserve
 * one length byte and are shifted only when they grow past 127 bytes. Runs in the CLI. */
#ifndef GPUTRACE_EXPORTERS_PROTOBUF_H
#define GPUTRACE_EXPORTERS_PROTOBUF_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

enum gt_pb_wire {
	GT_PB_VARINT = 0,
	GT_PB_I64 = 1,
	GT_PB_LEN = 2,
	GT_PB_I32 = 5,
};

/* Room a nested message may need beyond its body once its length is known. */
#define GT_PB_NEST_SLACK 4u

static inline char *gt_pb_varint(char *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (char)(v | 0x80);
		v >>= 7;
	}
	*p++ = (char)v;
	return p;
}

static inline unsigned gt_pb_varint_size(uint64_t v)
{
	unsigned n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

static inline char *gt_pb_tag(char *p, uint32_t field, enum gt_pb_wire wt)
{
	return gt_pb_varint(p, ((uint64_t)field << 3) | wt);
}

static inline char *gt_pb_uint(char *p, uint32_t field, uint64_t v)
{
	return gt_pb_varint(gt_pb_tag(p, field, GT_PB_VARINT), v);
}

/* int32/int64 fields: negative values are ten bytes, as the format says */
static inline char *gt_pb_int(char *p, uint32_t field, int64_t v)
{
	return gt_pb_varint(gt_pb_tag(p, field, GT_PB_VARINT), (uint64_t)v);
}

static inline char *gt_pb_fixed64(char *p, uint32_t field, uint64_t v)
{
	p = gt_pb_tag(p, field, GT_PB_I64);
	for (int i = 0; i < 8; i++)
		*p++ = (char)(v >> (8 * i));
	return p;
}

static inline char *gt_pb_double(char *p, uint32_t field, double d)
{
	uint64_t v;

	memcpy(&v, &d, sizeof(v));
	return gt_pb_fixed64(p, field, v);
}

static inline char *gt_pb_bytes(char *p, uint32_t field, const void *s, size_t n)
{
	p = gt_pb_varint(gt_pb_tag(p, field, GT_PB_LEN), n);
	memcpy(p, s, n);
	return p + n;
}

/* Open a nested message: *mark remembers where its length goes. */
static inline char *gt_pb_open(char *p, uint32_t field, char **mark)
{
	p = gt_pb_tag(p, field, GT_PB_LEN);
	*mark = p;
	return p + 1;
}

/* Slow path of gt_pb_close: the body is 128 bytes or more. */
char *gt_pb_close_long(char *p, char *mark);

/* Close the message opened at mark; returns the new end (it moves when the length needs
 * more than one byte). */
static inline char *gt_pb_close(char *p, char *mark)
{
	size_t len = (size_t)(p - mark - 1);

	if (len < 0x80) {
		*mark = (char)len;
		return p;
	}
	return gt_pb_close_long(p, mark);
}

/* Reading, for tests and tools: one field at a time, bounds-checked. */
struct gt_pb_field {
	uint32_t field;
	enum gt_pb_wire wire;
	uint64_t value;      /* varint, i64 and i32 values */
	const uint8_t *data; /* GT_PB_LEN: the bytes */
	size_t len;
};

/* Read the field at *p (before end). Returns 1 and advances *p, 0 at end, -EBADMSG on
 * malformed input (truncated, bad wire type, varint longer than ten bytes). */
int gt_pb_next(const uint8_t **p, const uint8_t *end, struct gt_pb_field *f);

#endif /* GPUTRACE_EXPORTERS_PROTOBUF_H */
