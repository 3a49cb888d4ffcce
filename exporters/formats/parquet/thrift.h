/* The Thrift compact protocol, as much of it as a Parquet footer and page headers need:
 * varints, zigzag integers, field headers with id deltas, binaries, lists and nested
 * structs, written to a growing buffer. Runs in the CLI (the Parquet export). */
#ifndef GPUTRACE_PARQUET_THRIFT_H
#define GPUTRACE_PARQUET_THRIFT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A growing byte buffer; `oom` set once a growth failed (every later write is dropped). */
struct pq_buf {
	uint8_t *p;
	size_t n, cap;
	bool oom;
};

void pq_buf_put(struct pq_buf *b, const void *p, size_t n);
/* n more bytes at the end, to be written by the caller; NULL once out of memory. */
uint8_t *pq_buf_room(struct pq_buf *b, size_t n);
void pq_buf_byte(struct pq_buf *b, uint8_t v);
void pq_buf_free(struct pq_buf *b);

/* Compact protocol element types. */
enum {
	TH_TRUE = 1,
	TH_FALSE = 2,
	TH_BYTE = 3,
	TH_I16 = 4,
	TH_I32 = 5,
	TH_I64 = 6,
	TH_DOUBLE = 7,
	TH_BINARY = 8,
	TH_LIST = 9,
	TH_STRUCT = 12,
};

#define TH_DEPTH 8

/* A writer: the last field id of each open struct. */
struct th {
	struct pq_buf *b;
	int16_t last[TH_DEPTH];
	int depth;
};

void th_init(struct th *t, struct pq_buf *b);
void th_varint(struct pq_buf *b, uint64_t v);
uint64_t th_zigzag(int64_t v);
/* A field header: the id as a delta from the previous field's when 1..15, else in full. */
void th_field(struct th *t, int16_t id, uint8_t type);
void th_i32(struct th *t, int16_t id, int32_t v);
void th_i64(struct th *t, int16_t id, int64_t v);
void th_bool(struct th *t, int16_t id, bool v);
void th_binary(struct th *t, int16_t id, const void *p, size_t n);
void th_string(struct th *t, int16_t id, const char *s);
/* A list header of n elements of `type` (a field: id >= 1; an element of a list: id 0). */
void th_list(struct th *t, int16_t id, uint8_t type, uint32_t n);
/* A struct: field id (0: an element of a list), its fields, then th_end(). */
void th_begin(struct th *t, int16_t id);
void th_end(struct th *t);

#endif /* GPUTRACE_PARQUET_THRIFT_H */
