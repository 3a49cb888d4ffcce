/* Record codec of the .gtrace chunk payload: each record as varint(type), varint(length),
 * then its pid and fields as varints, delta or zigzag coded per record.c's field table.
 * Runs in the writer and reader (CLI, standalone drainer thread). Layout: docs/format.md. */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "codec.h"

/* Op bits: the low two give the width (1 << code bytes). */
enum {
	OP_WIDTH = 3u,
	OP_SIGNED = 1u << 2,
	OP_DELTA = 1u << 3,
	OP_TIME = 1u << 4,
};

static int width_code(unsigned width)
{
	switch (width) {
	case 1:
		return 0;
	case 2:
		return 1;
	case 4:
		return 2;
	case 8:
		return 3;
	default:
		return -1;
	}
}

int gt_codec_init(struct gt_codec *c)
{
	memset(c, 0, sizeof(*c));
	for (unsigned type = 1; type < GT_REC_MAX; type++) {
		const struct gt_record_desc *d = gt_record_desc(type);
		struct gt_codec_prog *prog = &c->progs[type];

		if (!d || d->nfields + 1u > GT_CODEC_MAX_FIELDS)
			return -EINVAL;
		prog->size = d->size;
		/* the header's pid travels as the first field: delta coded, so it costs one
		 * byte when consecutive records of a type come from the same process */
		prog->ops[0] = (struct gt_codec_op){offsetof(struct gt_rec_hdr, pid),
		                                    (uint8_t)(2u | OP_DELTA), 0};
		for (unsigned i = 0; i < d->nfields; i++) {
			const struct gt_field *f = &d->fields[i];
			int wc = width_code(f->width);
			unsigned op;

			if (wc < 0 || f->offset + f->width > d->size)
				return -EINVAL;
			op = (unsigned)wc;
			if (f->flags & GT_FIELD_SIGNED)
				op |= OP_SIGNED;
			if (f->flags & GT_FIELD_DELTA)
				op |= OP_DELTA;
			if (f->flags & GT_FIELD_TIME)
				op |= OP_TIME;
			prog->ops[i + 1] =
			        (struct gt_codec_op){f->offset, (uint8_t)op, (uint8_t)(i + 1)};
		}
		prog->nops = (uint16_t)(d->nfields + 1u);
	}
	gt_codec_reset(c);
	return 0;
}

void gt_codec_reset(struct gt_codec *c)
{
	memset(c->prev, 0, sizeof(c->prev));
	c->first_ts_ns = UINT64_MAX;
	c->last_ts_ns = 0;
}

static inline uint64_t load(const uint8_t *p, unsigned op)
{
	switch (op & (OP_WIDTH | OP_SIGNED)) {
	case 0:
		return *p;
	case 1: {
		uint16_t v;

		memcpy(&v, p, 2);
		return v;
	}
	case 2: {
		uint32_t v;

		memcpy(&v, p, 4);
		return v;
	}
	case 4:
		return (uint64_t)(int64_t)(int8_t)*p;
	case 5: {
		int16_t v;

		memcpy(&v, p, 2);
		return (uint64_t)(int64_t)v;
	}
	case 6: {
		int32_t v;

		memcpy(&v, p, 4);
		return (uint64_t)(int64_t)v;
	}
	default: {
		uint64_t v;

		memcpy(&v, p, 8);
		return v;
	}
	}
}

static inline void store(uint8_t *p, unsigned op, uint64_t v)
{
	switch (op & OP_WIDTH) {
	case 0:
		*p = (uint8_t)v;
		break;
	case 1: {
		uint16_t x = (uint16_t)v;

		memcpy(p, &x, 2);
		break;
	}
	case 2: {
		uint32_t x = (uint32_t)v;

		memcpy(p, &x, 4);
		break;
	}
	default:
		memcpy(p, &v, 8);
		break;
	}
}

static inline void track_time(struct gt_codec *c, uint64_t v)
{
	/* zero means "not set" (an end time not yet known), not the epoch */
	if (v && v < c->first_ts_ns)
		c->first_ts_ns = v;
	if (v > c->last_ts_ns)
		c->last_ts_ns = v;
}

/* Bytes of a varint holding v. */
static inline size_t varint_len(uint64_t v)
{
	size_t n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

/* Write the body length in front of the body that starts at lenpos + 1, moving the body
 * when the length needs more than the one byte reserved for it. Returns the record end. */
static uint8_t *finish_length(uint8_t *lenpos, uint8_t *end)
{
	size_t len = (size_t)(end - (lenpos + 1));
	size_t n;

	if (len < 0x80) {
		*lenpos = (uint8_t)len;
		return end;
	}
	n = varint_len(len);
	memmove(lenpos + n, lenpos + 1, len);
	gt_put_varint(lenpos, len);
	return lenpos + n + len;
}

size_t gt_codec_encode(struct gt_codec *c, const struct gt_rec_hdr *rec, uint8_t *out)
{
	const struct gt_rec_string *s;
	const struct gt_codec_prog *prog;
	const uint8_t *base = (const uint8_t *)rec;
	uint64_t *prev;
	uint8_t *p = out, *lenpos;

	if (rec->type == GT_REC_STRING) {
		s = (const struct gt_rec_string *)rec;
		return gt_codec_encode_string(c, rec->pid, s->id, s->str, s->len, out);
	}
	prog = &c->progs[rec->type];
	prev = c->prev[rec->type];
	p = gt_put_varint(p, rec->type);
	lenpos = p++;
	for (unsigned i = 0; i < prog->nops; i++) {
		unsigned op = prog->ops[i].op;
		uint64_t v = load(base + prog->ops[i].offset, op);

		if (op & OP_TIME)
			track_time(c, v);
		if (op & OP_DELTA) {
			uint64_t d = v - prev[prog->ops[i].slot];

			prev[prog->ops[i].slot] = v;
			v = gt_zigzag((int64_t)d);
		} else if (op & OP_SIGNED) {
			v = gt_zigzag((int64_t)v);
		}
		p = gt_put_varint(p, v);
	}
	return (size_t)(finish_length(lenpos, p) - out);
}

size_t gt_codec_encode_string(struct gt_codec *c, uint32_t pid, uint32_t id, const char *s,
                              size_t len, uint8_t *out)
{
	uint64_t *prev = c->prev[GT_REC_STRING];
	uint8_t *p = out, *lenpos;

	p = gt_put_varint(p, GT_REC_STRING);
	lenpos = p++;
	p = gt_put_varint(p, gt_zigzag((int64_t)((uint64_t)pid - prev[0])));
	prev[0] = pid;
	p = gt_put_varint(p, id);
	p = gt_put_varint(p, len);
	if (len)
		memcpy(p, s, len);
	p += len;
	return (size_t)(finish_length(lenpos, p) - out);
}

/* Read a varint. The caller guarantees GT_VARINT_MAX readable bytes at *pp (the payload's
 * zero padding does that); an over-long varint just yields a wrong value and a position past
 * the record's end, which the caller rejects. */
static inline uint64_t get_varint(const uint8_t **pp)
{
	const uint8_t *p = *pp;
	uint64_t b = *p++, v;

	if (b < 0x80) {
		*pp = p;
		return b;
	}
	v = b & 0x7f;
	for (unsigned shift = 7; shift < 64; shift += 7) {
		b = *p++;
		v |= (b & 0x7f) << shift;
		if (b < 0x80)
			break;
	}
	*pp = p;
	return v;
}

static int decode_string(struct gt_codec *c, const uint8_t *p, const uint8_t *rec_end,
                         struct gt_rec_string *str)
{
	uint64_t *prev = c->prev[GT_REC_STRING];
	uint64_t pid, id, len;

	if (p >= rec_end)
		return GT_DECODE_SKIPPED;
	pid = prev[0] + (uint64_t)gt_unzigzag(get_varint(&p));
	prev[0] = pid;
	if (p >= rec_end)
		return GT_DECODE_SKIPPED;
	id = get_varint(&p);
	if (p >= rec_end)
		return GT_DECODE_SKIPPED;
	len = get_varint(&p);
	if (p > rec_end || id == GT_STRING_NONE || id > UINT32_MAX || len > GT_STRING_MAX ||
	    len > (uint64_t)(rec_end - p))
		return GT_DECODE_SKIPPED;
	str->hdr.type = GT_REC_STRING;
	str->hdr.size = (uint16_t)gt_record_align(sizeof(*str) + len);
	str->hdr.pid = (uint32_t)pid;
	str->id = (uint32_t)id;
	str->len = (uint32_t)len;
	memcpy(str->str, p, len);
	str->str[len] = '\0';
	return GT_DECODE_OK;
}

int gt_codec_decode(struct gt_codec *c, const uint8_t **pp, const uint8_t *end,
                    union gt_record *recs, struct gt_rec_string *str, const union gt_record **out)
{
	const uint8_t *p = *pp, *rec_end;
	const struct gt_codec_prog *prog;
	uint64_t type, len, *prev;
	uint8_t *base;
	int r;

	type = get_varint(&p);
	if (p >= end)
		return GT_DECODE_BROKEN;
	len = get_varint(&p);
	if (p > end || len > (uint64_t)(end - p))
		return GT_DECODE_BROKEN;
	rec_end = p + len;
	*pp = rec_end;
	if (type == GT_REC_NONE || type >= GT_REC_MAX)
		return GT_DECODE_SKIPPED;
	if (type == GT_REC_STRING) {
		r = decode_string(c, p, rec_end, str);
		*out = (const union gt_record *)str;
		return r;
	}
	prog = &c->progs[type];
	prev = c->prev[type];
	base = (uint8_t *)&recs[type];
	for (unsigned i = 0; i < prog->nops; i++) {
		unsigned op = prog->ops[i].op;
		uint64_t v;

		if (p >= rec_end) {
			/* written before this field existed: it reads as zero */
			store(base + prog->ops[i].offset, op, 0);
			continue;
		}
		v = get_varint(&p);
		if (op & OP_DELTA) {
			v = prev[prog->ops[i].slot] + (uint64_t)gt_unzigzag(v);
			prev[prog->ops[i].slot] = v;
		} else if (op & OP_SIGNED) {
			v = (uint64_t)gt_unzigzag(v);
		}
		if (op & OP_TIME)
			track_time(c, v);
		store(base + prog->ops[i].offset, op, v);
	}
	/* bytes left over were written by a newer writer that appended fields: ignored */
	if (p > rec_end)
		return GT_DECODE_SKIPPED;
	recs[type].hdr.type = (uint16_t)type;
	recs[type].hdr.size = prog->size;
	*out = &recs[type];
	return GT_DECODE_OK;
}

void gt_chunk_hdr_encode(uint8_t out[GT_CHUNK_HDR_BYTES], const struct gt_chunk_hdr *h)
{
	memcpy(out, GT_CHUNK_MAGIC, 4);
	gt_put_le32(out + 4, h->comp_bytes);
	gt_put_le32(out + 8, h->raw_bytes);
	gt_put_le32(out + 12, h->records);
	gt_put_le64(out + 16, h->first_ts_ns);
	gt_put_le64(out + 24, h->last_ts_ns);
	gt_put_le32(out + 32, h->crc);
	gt_put_le32(out + 36, gt_crc32c(0, out, 36));
}

bool gt_chunk_hdr_decode(const uint8_t in[GT_CHUNK_HDR_BYTES], struct gt_chunk_hdr *h)
{
	if (memcmp(in, GT_CHUNK_MAGIC, 4) != 0 || gt_get_le32(in + 36) != gt_crc32c(0, in, 36))
		return false;
	h->comp_bytes = gt_get_le32(in + 4);
	h->raw_bytes = gt_get_le32(in + 8);
	h->records = gt_get_le32(in + 12);
	h->first_ts_ns = gt_get_le64(in + 16);
	h->last_ts_ns = gt_get_le64(in + 24);
	h->crc = gt_get_le32(in + 32);
	return true;
}
