/* The Thrift compact protocol writer of the Parquet export (thrift.h). Runs in the CLI. */
#include <stdlib.h>
#include <string.h>

#include "thrift.h"

uint8_t *pq_buf_room(struct pq_buf *b, size_t n)
{
	uint8_t *at;

	if (b->oom)
		return NULL;
	if (b->n + n > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		uint8_t *np;

		while (cap < b->n + n)
			cap *= 2;
		np = realloc(b->p, cap);
		if (!np) {
			b->oom = true;
			return NULL;
		}
		b->p = np;
		b->cap = cap;
	}
	at = b->p + b->n;
	b->n += n;
	return at;
}

void pq_buf_put(struct pq_buf *b, const void *p, size_t n)
{
	uint8_t *at = n ? pq_buf_room(b, n) : NULL;

	if (at)
		memcpy(at, p, n);
}

void pq_buf_byte(struct pq_buf *b, uint8_t v)
{
	pq_buf_put(b, &v, 1);
}

void pq_buf_free(struct pq_buf *b)
{
	free(b->p);
	*b = (struct pq_buf){0};
}

void th_init(struct th *t, struct pq_buf *b)
{
	*t = (struct th){.b = b};
}

void th_varint(struct pq_buf *b, uint64_t v)
{
	uint8_t out[10];
	size_t n = 0;

	while (v >= 0x80) {
		out[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	out[n++] = (uint8_t)v;
	pq_buf_put(b, out, n);
}

uint64_t th_zigzag(int64_t v)
{
	return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

void th_field(struct th *t, int16_t id, uint8_t type)
{
	int16_t delta = (int16_t)(id - t->last[t->depth]);

	if (delta > 0 && delta <= 15) {
		pq_buf_byte(t->b, (uint8_t)(delta << 4 | type));
	} else {
		pq_buf_byte(t->b, type);
		th_varint(t->b, th_zigzag(id));
	}
	t->last[t->depth] = id;
}

void th_i32(struct th *t, int16_t id, int32_t v)
{
	th_field(t, id, TH_I32);
	th_varint(t->b, th_zigzag(v));
}

void th_i64(struct th *t, int16_t id, int64_t v)
{
	th_field(t, id, TH_I64);
	th_varint(t->b, th_zigzag(v));
}

void th_bool(struct th *t, int16_t id, bool v)
{
	th_field(t, id, v ? TH_TRUE : TH_FALSE);
}

void th_binary(struct th *t, int16_t id, const void *p, size_t n)
{
	if (id)
		th_field(t, id, TH_BINARY);
	th_varint(t->b, n);
	pq_buf_put(t->b, p, n);
}

void th_string(struct th *t, int16_t id, const char *s)
{
	th_binary(t, id, s, strlen(s));
}

void th_list(struct th *t, int16_t id, uint8_t type, uint32_t n)
{
	if (id)
		th_field(t, id, TH_LIST);
	if (n < 15) {
		pq_buf_byte(t->b, (uint8_t)(n << 4 | type));
	} else {
		pq_buf_byte(t->b, (uint8_t)(0xf0 | type));
		th_varint(t->b, n);
	}
}

void th_begin(struct th *t, int16_t id)
{
	if (id)
		th_field(t, id, TH_STRUCT);
	if (t->depth + 1 < TH_DEPTH)
		t->last[++t->depth] = 0;
	else
		t->b->oom = true;
}

void th_end(struct th *t)
{
	pq_buf_byte(t->b, 0);
	if (t->depth > 0)
		t->depth--;
}
