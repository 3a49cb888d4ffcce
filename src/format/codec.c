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

/* Every field in record.c's tables has one of the first shapes; each gets a case of its
 * own so the per-field work is one predictable jump and straight-line code. */
enum op_kind {
	K_U32,     /* plain 32-bit */
	K_U64,     /* plain 64-bit */
	K_S32,     /* signed 32-bit: zigzag */
	K_D32,     /* delta 32-bit (zero-extended, so wrapping costs nothing special) */
	K_D64,     /* delta 64-bit */
	K_U64T,    /* plain 64-bit timestamp */
	K_D64T,    /* delta 64-bit timestamp */
	K_GENERIC, /* anything else: decided from bits at run time */
};

static uint8_t kind_of(unsigned bits)
{
	switch (bits) {
	case 2:
		return K_U32;
	case 3:
		return K_U64;
	case 2 | OP_SIGNED:
		return K_S32;
	case 2 | OP_DELTA:
		return K_D32;
	case 3 | OP_DELTA:
		return K_D64;
	case 3 | OP_TIME:
		return K_U64T;
	case 3 | OP_DELTA | OP_TIME:
		return K_D64T;
	default:
		return K_GENERIC;
	}
}

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

/* Little-endian hosts with GCC builtins take the branch-light varint paths. */
#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define GT_LE_FAST 1
#else
#define GT_LE_FAST 0
#endif

/* The varint helpers sit in every field of the straight-line codecs: inlined always (GCC
 * otherwise calls some of them out of line, a call per field). */
#if defined(__GNUC__)
#define GT_INLINE    inline __attribute__((always_inline))
#define GT_COLD      __attribute__((noinline, cold))
#define GT_LIKELY(x) __builtin_expect(!!(x), 1)
#else
#define GT_INLINE inline
#define GT_COLD
#define GT_LIKELY(x) (x)
#endif

static inline uint64_t ld32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static inline uint64_t ld64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

static inline void st32(uint8_t *p, uint64_t v)
{
	uint32_t x = (uint32_t)v;

	memcpy(p, &x, 4);
}

static inline void st64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

/* Bytes of the varint of a value whose highest set bit is bit i: i / 7 + 1 (a load instead
 * of a division). */
static const uint8_t varint_bytes[64] = {1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 3, 3,
                                         3, 3, 3, 3, 3, 4, 4, 4, 4, 4, 4, 4, 5, 5, 5, 5,
                                         5, 5, 5, 6, 6, 6, 6, 6, 6, 6, 7, 7, 7, 7, 7, 7,
                                         7, 8, 8, 8, 8, 8, 8, 8, 9, 9, 9, 9, 9, 9, 9, 10};

/* The continuation bits of an n-byte varint (n <= 8): every byte's but the last. */
static const uint64_t varint_cont[9] = {0,
                                        0,
                                        0x80ull,
                                        0x8080ull,
                                        0x808080ull,
                                        0x80808080ull,
                                        0x8080808080ull,
                                        0x808080808080ull,
                                        0x80808080808080ull};

/* Write a varint; needs 10 writable bytes at p (8 are stored even for shorter values). */
static GT_INLINE uint8_t *put_varint_fast(uint8_t *p, uint64_t v)
{
	if (v < 0x80) {
		*p = (uint8_t)v;
		return p + 1;
	}
#if GT_LE_FAST
	if (v < (1ull << 28)) {
		/* two to four bytes (time deltas, sizes, dimensions): the same on 32 bits, half
		 * the operations */
		unsigned n = varint_bytes[63 - __builtin_clzll(v)];
		uint32_t x = (uint32_t)v;
		uint32_t w = (x & 0x7f) | ((x << 1) & 0x7f00u) | ((x << 2) & 0x7f0000u) |
		             ((x << 3) & 0x7f000000u);

		w |= (uint32_t)varint_cont[n];
		memcpy(p, &w, 4);
		return p + n;
	}
	if (v < (1ull << 56)) {
		/* spread 7-bit groups over bytes and set the continuation bits, no loop */
		unsigned n = varint_bytes[63 - __builtin_clzll(v)];
		uint64_t w = (v & 0x7f) | ((v << 1) & 0x7f00ull) | ((v << 2) & 0x7f0000ull) |
		             ((v << 3) & 0x7f000000ull) | ((v << 4) & 0x7f00000000ull) |
		             ((v << 5) & 0x7f0000000000ull) | ((v << 6) & 0x7f000000000000ull) |
		             ((v << 7) & 0x7f00000000000000ull);

		w |= varint_cont[n];
		memcpy(p, &w, 8);
		return p + n;
	}
#endif
	return gt_put_varint(p, v);
}

static GT_INLINE void track_time(struct gt_codec *c, uint64_t v)
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

/* finish_length's rare case: a body of 128 bytes or more (strings, long records). */
static uint8_t *finish_long_length(uint8_t *lenpos, uint8_t *end)
{
	size_t len = (size_t)(end - (lenpos + 1));
	size_t n = varint_len(len);

	memmove(lenpos + n, lenpos + 1, len);
	gt_put_varint(lenpos, len);
	return lenpos + n + len;
}

/* Write the body length in front of the body that starts at lenpos + 1, moving the body
 * when the length needs more than the one byte reserved for it. Returns the record end. */
static GT_INLINE uint8_t *finish_length(uint8_t *lenpos, uint8_t *end)
{
	size_t len = (size_t)(end - (lenpos + 1));

	if (len < 0x80) {
		*lenpos = (uint8_t)len;
		return end;
	}
	return finish_long_length(lenpos, end);
}

/* Read a varint. The caller guarantees 8 readable bytes at *pp (the payload's zero padding
 * does that); an over-long varint just yields a wrong value and a position past the record's
 * end, which the caller rejects. */
static GT_INLINE uint64_t get_varint(const uint8_t **pp)
{
	const uint8_t *p = *pp;
	uint64_t b = *p, v, w, m;

	/* most fields are small: their one byte is decoded in line, the rest out of it */
	if (GT_LIKELY(b < 0x80)) {
		*pp = p + 1;
		return b;
	}
#if GT_LE_FAST
	v = p[1];
	if (v < 0x80) {
		/* two bytes (sizes, dimensions, short time deltas): b's top bit is set */
		*pp = p + 2;
		return b - 0x80 + (v << 7);
	}
	/* up to 8 bytes at once: find the terminating byte, then squeeze out the top bits */
	memcpy(&w, p, 8);
	if (!(w & 0x800000)) {
		/* three bytes (most kernel time deltas) */
		*pp = p + 3;
		return (w & 0x7f) | ((w >> 1) & 0x3f80u) | ((w >> 2) & 0x1fc000u);
	}
	m = ~w & 0x8080808080808080ull;
	if (m & 0x80808080u) {
		/* four bytes: squeezed on 32 bits, half the operations */
		unsigned n = (unsigned)__builtin_ctzll(m) / 8 + 1;
		uint32_t x = (uint32_t)(w & ((1ull << (8 * n)) - 1));

		*pp = p + n;
		return (x & 0x7f) | ((x >> 1) & 0x3f80u) | ((x >> 2) & 0x1fc000u) |
		       ((x >> 3) & 0xfe00000u);
	}
	if (m) {
		unsigned n = (unsigned)__builtin_ctzll(m) / 8 + 1;

		if (n < 8)
			w &= (1ull << (8 * n)) - 1;
		v = (w & 0x7f) | ((w >> 1) & 0x3f80ull) | ((w >> 2) & 0x1fc000ull) |
		    ((w >> 3) & 0xfe00000ull) | ((w >> 4) & 0x7f0000000ull) |
		    ((w >> 5) & 0x3f800000000ull) | ((w >> 6) & 0x1fc0000000000ull) |
		    ((w >> 7) & 0xfe000000000000ull);
		*pp = p + n;
		return v;
	}
#else
	(void)w;
	(void)m;
#endif
	v = 0;
	for (unsigned shift = 0; shift < 64; shift += 7) {
		b = *p++;
		v |= (b & 0x7f) << shift;
		if (b < 0x80)
			break;
	}
	*pp = p;
	return v;
}

/* ---- straight-line codecs for the frequent types --------------------------------------
 * The run loops above serve any table; the types that make up nearly all of a trace also
 * get straight-line code (constant offsets, no loop, no dispatch), which decodes about a
 * third faster. Each list below must equal record.c's table for its type (pid first):
 * gt_codec_init() compares them and, if they differ (a field was appended to record.c and
 * not here), that type quietly uses the run loops, so the file format never depends on it. */

#define SPAN_FIELDS(X)                                                                             \
	X(D64T, span.start_ns)                                                                     \
	X(D64T, span.end_ns)                                                                       \
	X(D32, span.correlation_id)                                                                \
	X(U32, span.device_id)                                                                     \
	X(U32, span.context_id)                                                                    \
	X(U32, span.stream_id)

#define KERNEL_FIELDS(X)                                                                           \
	X(D32, hdr.pid)                                                                            \
	SPAN_FIELDS(X)                                                                             \
	X(U64, graph_node_id)                                                                      \
	X(U32, name_id)                                                                            \
	X(U32, grid_x)                                                                             \
	X(U32, grid_y)                                                                             \
	X(U32, grid_z)                                                                             \
	X(U32, block_x)                                                                            \
	X(U32, block_y)                                                                            \
	X(U32, block_z)                                                                            \
	X(U32, cluster_x)                                                                          \
	X(U32, cluster_y)                                                                          \
	X(U32, cluster_z)                                                                          \
	X(U32, registers)                                                                          \
	X(U32, static_smem_bytes)                                                                  \
	X(U32, dynamic_smem_bytes)                                                                 \
	X(U32, local_mem_bytes)                                                                    \
	X(U32, graph_id)                                                                           \
	X(U32, flags)

#define MEMCPY_FIELDS(X)                                                                           \
	X(D32, hdr.pid)                                                                            \
	SPAN_FIELDS(X)                                                                             \
	X(U64, bytes)                                                                              \
	X(U64, graph_node_id)                                                                      \
	X(U32, copy_kind)                                                                          \
	X(U32, src_kind)                                                                           \
	X(U32, dst_kind)                                                                           \
	X(U32, src_device)                                                                         \
	X(U32, dst_device)                                                                         \
	X(U32, graph_id)                                                                           \
	X(U32, flags)

#define MEMSET_FIELDS(X)                                                                           \
	X(D32, hdr.pid)                                                                            \
	SPAN_FIELDS(X)                                                                             \
	X(U64, bytes)                                                                              \
	X(U64, graph_node_id)                                                                      \
	X(U32, value)                                                                              \
	X(U32, mem_kind)                                                                           \
	X(U32, graph_id)                                                                           \
	X(U32, flags)

#define MEMORY_FIELDS(X)                                                                           \
	X(D32, hdr.pid)                                                                            \
	X(D64T, ts_ns)                                                                             \
	X(U64, address)                                                                            \
	X(U64, bytes)                                                                              \
	X(U64, pool_address)                                                                       \
	X(D32, correlation_id)                                                                     \
	X(U32, device_id)                                                                          \
	X(U32, context_id)                                                                         \
	X(U32, stream_id)                                                                          \
	X(U32, op)                                                                                 \
	X(U32, mem_kind)                                                                           \
	X(U32, flags)

#define API_FIELDS(X)                                                                              \
	X(D32, hdr.pid)                                                                            \
	X(D64T, start_ns)                                                                          \
	X(D64T, end_ns)                                                                            \
	X(U32, tid)                                                                                \
	X(D32, correlation_id)                                                                     \
	X(U32, cbid)                                                                               \
	X(U32, name_id)                                                                            \
	X(S32, return_code)                                                                        \
	X(U32, domain)                                                                             \
	X(U32, stack_id)

#define NVTX_FIELDS(X)                                                                             \
	X(D32, hdr.pid)                                                                            \
	X(D64T, start_ns)                                                                          \
	X(D64T, end_ns)                                                                            \
	X(U64, range_id)                                                                           \
	X(U32, tid)                                                                                \
	X(U32, end_tid)                                                                            \
	X(U32, domain_id)                                                                          \
	X(U32, message_id)                                                                         \
	X(U32, category)                                                                           \
	X(U32, color)                                                                              \
	X(U32, kind)                                                                               \
	X(U32, depth)                                                                              \
	X(U32, stack_id)

#define SYNC_FIELDS(X)                                                                             \
	X(D32, hdr.pid)                                                                            \
	SPAN_FIELDS(X)                                                                             \
	X(U32, tid)                                                                                \
	X(U32, kind)                                                                               \
	X(U32, event_id)

/* One field: encode reads r->f, decode writes it; i is the op index (delta state slot). */
#define ENC_U32(i, v) p = put_varint_fast(p, (v))
#define ENC_U64(i, v) p = put_varint_fast(p, (v))
#define ENC_S32(i, v) p = put_varint_fast(p, gt_zigzag((int32_t)(v)))
#define ENC_D32(i, v)                                                                              \
	do {                                                                                       \
		uint64_t x_ = (v);                                                                 \
		p = put_varint_fast(p, gt_zigzag((int64_t)(x_ - prev[i])));                        \
		prev[i] = x_;                                                                      \
	} while (0)
#define ENC_D64T(i, v)                                                                             \
	do {                                                                                       \
		uint64_t x_ = (v);                                                                 \
		track_time(c, x_);                                                                 \
		p = put_varint_fast(p, gt_zigzag((int64_t)(x_ - prev[i])));                        \
		prev[i] = x_;                                                                      \
	} while (0)
/* The decoder keeps new delta states in nprev and stores them into prev only once the record
 * proved whole, so a short record is decoded again from prev untouched. Time fields do not
 * feed the codec's time range when decoding: that range is the writer's, for chunk headers. */
#define DEC_U32(i, lv) lv = (uint32_t)get_varint(&p)
#define DEC_U64(i, lv) lv = get_varint(&p)
#define DEC_S32(i, lv) lv = (int32_t)gt_unzigzag(get_varint(&p))
#define DEC_D32(i, lv)                                                                             \
	do {                                                                                       \
		nprev[i] = prev[i] + (uint64_t)gt_unzigzag(get_varint(&p));                        \
		lv = (uint32_t)nprev[i];                                                           \
	} while (0)
#define DEC_D64T(i, lv)                                                                            \
	do {                                                                                       \
		nprev[i] = prev[i] + (uint64_t)gt_unzigzag(get_varint(&p));                        \
		lv = nprev[i];                                                                     \
	} while (0)
#define KEEP_U32(i)
#define KEEP_U64(i)
#define KEEP_S32(i)
#define KEEP_D32(i)  prev[i] = nprev[i]
#define KEEP_D64T(i) prev[i] = nprev[i]

#define ENC_FIELD(k, f)                                                                            \
	ENC_##k(i, r->f);                                                                          \
	i++;
#define DEC_FIELD(k, f)                                                                            \
	DEC_##k(i, r->f);                                                                          \
	i++;
#define KEEP_FIELD(k, f)                                                                           \
	KEEP_##k(i);                                                                               \
	i++;

static int decode_again(struct gt_codec *c, unsigned type, const uint8_t *p, const uint8_t *rec_end,
                        uint8_t *base);

/* Encoder and decoder of one type; i is a constant after unrolling. The decoder reads every
 * field without a bounds check (the payload's zero padding keeps that in bounds) and checks
 * once at the end. Returns GT_DECODE_OK, or decode_again()'s verdict for a record that ran
 * short. */
#define STRAIGHT(name, rtype, st, FIELDS)                                                          \
	static uint8_t *enc_##name(struct gt_codec *c, const st *r, uint64_t *prev, uint8_t *p)    \
	{                                                                                          \
		unsigned i = 0;                                                                    \
		FIELDS(ENC_FIELD)                                                                  \
		(void)i;                                                                           \
		return p;                                                                          \
	}                                                                                          \
	static GT_INLINE int dec_##name(struct gt_codec *c, st *r, const uint8_t *p,               \
	                                const uint8_t *rec_end)                                    \
	{                                                                                          \
		uint64_t *prev = c->prev[rtype], nprev[GT_CODEC_MAX_FIELDS];                       \
		const uint8_t *start = p;                                                          \
		unsigned i = 0;                                                                    \
		FIELDS(DEC_FIELD)                                                                  \
		if (p > rec_end)                                                                   \
			return decode_again(c, rtype, start, rec_end, (uint8_t *)r);               \
		i = 0;                                                                             \
		FIELDS(KEEP_FIELD)                                                                 \
		(void)i;                                                                           \
		r->hdr.type = rtype;                                                               \
		r->hdr.size = sizeof(st);                                                          \
		return GT_DECODE_OK;                                                               \
	}

STRAIGHT(kernel, GT_REC_KERNEL, struct gt_rec_kernel, KERNEL_FIELDS)
STRAIGHT(memcpy, GT_REC_MEMCPY, struct gt_rec_memcpy, MEMCPY_FIELDS)
STRAIGHT(memset, GT_REC_MEMSET, struct gt_rec_memset, MEMSET_FIELDS)
STRAIGHT(memory, GT_REC_MEMORY, struct gt_rec_memory, MEMORY_FIELDS)
STRAIGHT(api, GT_REC_API, struct gt_rec_api, API_FIELDS)
STRAIGHT(nvtx, GT_REC_NVTX, struct gt_rec_nvtx, NVTX_FIELDS)
STRAIGHT(sync, GT_REC_SYNC, struct gt_rec_sync, SYNC_FIELDS)

/* What each list says, as ops, for the comparison with record.c's tables. */
#define OP_OF(st, k, f)  {(uint16_t)offsetof(st, f), K_##k, 0},
#define OPS_KERNEL(k, f) OP_OF(struct gt_rec_kernel, k, f)
#define OPS_MEMCPY(k, f) OP_OF(struct gt_rec_memcpy, k, f)
#define OPS_MEMSET(k, f) OP_OF(struct gt_rec_memset, k, f)
#define OPS_MEMORY(k, f) OP_OF(struct gt_rec_memory, k, f)
#define OPS_API(k, f)    OP_OF(struct gt_rec_api, k, f)
#define OPS_NVTX(k, f)   OP_OF(struct gt_rec_nvtx, k, f)
#define OPS_SYNC(k, f)   OP_OF(struct gt_rec_sync, k, f)

static const struct gt_codec_op kernel_ops[] = {KERNEL_FIELDS(OPS_KERNEL)};
static const struct gt_codec_op memcpy_ops[] = {MEMCPY_FIELDS(OPS_MEMCPY)};
static const struct gt_codec_op memset_ops[] = {MEMSET_FIELDS(OPS_MEMSET)};
static const struct gt_codec_op memory_ops[] = {MEMORY_FIELDS(OPS_MEMORY)};
static const struct gt_codec_op api_ops[] = {API_FIELDS(OPS_API)};
static const struct gt_codec_op nvtx_ops[] = {NVTX_FIELDS(OPS_NVTX)};
static const struct gt_codec_op sync_ops[] = {SYNC_FIELDS(OPS_SYNC)};

static const struct {
	const struct gt_codec_op *ops;
	unsigned nops;
	unsigned size; /* of the struct the decoder writes */
} straight[GT_REC_MAX] = {
#define S_(type, arr, st) [type] = {arr, sizeof(arr) / sizeof(arr[0]), sizeof(st)}
        S_(GT_REC_KERNEL, kernel_ops, struct gt_rec_kernel),
        S_(GT_REC_MEMCPY, memcpy_ops, struct gt_rec_memcpy),
        S_(GT_REC_MEMSET, memset_ops, struct gt_rec_memset),
        S_(GT_REC_MEMORY, memory_ops, struct gt_rec_memory),
        S_(GT_REC_API, api_ops, struct gt_rec_api),
        S_(GT_REC_NVTX, nvtx_ops, struct gt_rec_nvtx),
        S_(GT_REC_SYNC, sync_ops, struct gt_rec_sync),
#undef S_
};

/* Does the straight-line list of `type` say exactly what record.c's table says? */
static bool straight_matches(const struct gt_codec_prog *prog, unsigned type)
{
	if (!straight[type].ops || straight[type].nops != prog->nops ||
	    straight[type].size != prog->size)
		return false;
	for (unsigned i = 0; i < prog->nops; i++)
		if (straight[type].ops[i].offset != prog->ops[i].offset ||
		    straight[type].ops[i].kind != prog->ops[i].kind)
			return false;
	return true;
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
	if (prog->straight) {
		switch (rec->type) {
		case GT_REC_KERNEL:
			p = enc_kernel(c, (const struct gt_rec_kernel *)rec, prev, p);
			goto done;
		case GT_REC_MEMCPY:
			p = enc_memcpy(c, (const struct gt_rec_memcpy *)rec, prev, p);
			goto done;
		case GT_REC_MEMSET:
			p = enc_memset(c, (const struct gt_rec_memset *)rec, prev, p);
			goto done;
		case GT_REC_MEMORY:
			p = enc_memory(c, (const struct gt_rec_memory *)rec, prev, p);
			goto done;
		case GT_REC_API:
			p = enc_api(c, (const struct gt_rec_api *)rec, prev, p);
			goto done;
		case GT_REC_NVTX:
			p = enc_nvtx(c, (const struct gt_rec_nvtx *)rec, prev, p);
			goto done;
		case GT_REC_SYNC:
			p = enc_sync(c, (const struct gt_rec_sync *)rec, prev, p);
			goto done;
		default:
			break;
		}
	}
	for (unsigned r = 0; r < prog->nruns; r++) {
		const struct gt_codec_run *run = &prog->runs[r];
		const struct gt_codec_op *ops = prog->ops;
		unsigned i;
		uint64_t x;

		switch (run->kind) {
		case K_U32:
			for (i = run->first; i < run->end; i++)
				p = put_varint_fast(p, ld32(base + ops[i].offset));
			break;
		case K_U64:
			for (i = run->first; i < run->end; i++)
				p = put_varint_fast(p, ld64(base + ops[i].offset));
			break;
		case K_S32:
			for (i = run->first; i < run->end; i++)
				p = put_varint_fast(p,
				                    gt_zigzag((int32_t)ld32(base + ops[i].offset)));
			break;
		case K_D32:
			for (i = run->first; i < run->end; i++) {
				x = ld32(base + ops[i].offset);
				p = put_varint_fast(p, gt_zigzag((int64_t)(x - prev[i])));
				prev[i] = x;
			}
			break;
		case K_D64:
			for (i = run->first; i < run->end; i++) {
				x = ld64(base + ops[i].offset);
				p = put_varint_fast(p, gt_zigzag((int64_t)(x - prev[i])));
				prev[i] = x;
			}
			break;
		case K_U64T:
			for (i = run->first; i < run->end; i++) {
				x = ld64(base + ops[i].offset);
				track_time(c, x);
				p = put_varint_fast(p, x);
			}
			break;
		case K_D64T:
			for (i = run->first; i < run->end; i++) {
				x = ld64(base + ops[i].offset);
				track_time(c, x);
				p = put_varint_fast(p, gt_zigzag((int64_t)(x - prev[i])));
				prev[i] = x;
			}
			break;
		default:
			for (i = run->first; i < run->end; i++) {
				unsigned op = ops[i].bits;
				uint64_t v = load(base + ops[i].offset, op);

				if (op & OP_TIME)
					track_time(c, v);
				if (op & OP_DELTA) {
					x = v;
					v = gt_zigzag((int64_t)(x - prev[i]));
					prev[i] = x;
				} else if (op & OP_SIGNED) {
					v = gt_zigzag((int64_t)v);
				}
				p = put_varint_fast(p, v);
			}
			break;
		}
	}
done:
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

static void decode_generic(const struct gt_codec_op *o, uint64_t v, uint64_t *prev, uint8_t *base)
{
	unsigned op = o->bits;

	if (op & OP_DELTA) {
		v = *prev + (uint64_t)gt_unzigzag(v);
		*prev = v;
	} else if (op & OP_SIGNED) {
		v = (uint64_t)gt_unzigzag(v);
	}
	store(base + o->offset, op, v);
}

/* The careful path for a record that may stop early: fields present are decoded one by one,
 * fields missing read as zero. */
static void decode_tail(const struct gt_codec_prog *prog, const uint8_t **pp,
                        const uint8_t *rec_end, uint64_t *prev, uint8_t *base)
{
	for (unsigned i = 0; i < prog->nops; i++) {
		const struct gt_codec_op *o = &prog->ops[i];

		if (*pp >= rec_end)
			store(base + o->offset, o->bits, 0);
		else
			decode_generic(o, get_varint(pp), &prev[i], base);
	}
}

/* A record the fast pass read past the end of (written before some fields existed, or
 * malformed), from the delta state as it was before it: again, field by field. */
static GT_COLD int decode_again(struct gt_codec *c, unsigned type, const uint8_t *p,
                                const uint8_t *rec_end, uint8_t *base)
{
	const struct gt_codec_prog *prog = &c->progs[type];

	decode_tail(prog, &p, rec_end, c->prev[type], base);
	/* bytes left over were written by a newer writer that appended fields: ignored */
	if (p > rec_end)
		return GT_DECODE_SKIPPED;
	((struct gt_rec_hdr *)base)->type = (uint16_t)type;
	((struct gt_rec_hdr *)base)->size = prog->size;
	return GT_DECODE_OK;
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

/* Types without straight-line code, through their runs. Decodes assuming every field is there
 * and checks once at the end: memory-safe even when the record is short, since past the
 * payload's end the reads land in the zero padding (GT_CODEC_PAD). A short record is then
 * decoded again field by field, from the delta state saved here (fixed-size copies, so no
 * memcpy call per record). */
static int decode_runs(struct gt_codec *c, unsigned type, const uint8_t *p, const uint8_t *rec_end,
                       uint8_t *base)
{
	const struct gt_codec_prog *prog = &c->progs[type];
	const struct gt_codec_op *ops = prog->ops;
	uint64_t saved[GT_CODEC_MAX_FIELDS], *prev = c->prev[type];
	const uint8_t *start = p;

	if (prog->late_delta)
		memcpy(saved, prev, sizeof(saved));
	else
		memcpy(saved, prev, GT_CODEC_EARLY * sizeof(*prev));
	for (unsigned ri = 0; ri < prog->nruns; ri++) {
		const struct gt_codec_run *run = &prog->runs[ri];
		unsigned i;
		uint64_t v;

		switch (run->kind) {
		case K_U32:
			for (i = run->first; i < run->end; i++)
				st32(base + ops[i].offset, get_varint(&p));
			break;
		case K_U64:
		case K_U64T:
			for (i = run->first; i < run->end; i++)
				st64(base + ops[i].offset, get_varint(&p));
			break;
		case K_S32:
			for (i = run->first; i < run->end; i++)
				st32(base + ops[i].offset, (uint64_t)gt_unzigzag(get_varint(&p)));
			break;
		case K_D32:
			for (i = run->first; i < run->end; i++) {
				v = prev[i] + (uint64_t)gt_unzigzag(get_varint(&p));
				prev[i] = v;
				st32(base + ops[i].offset, v);
			}
			break;
		case K_D64:
		case K_D64T:
			for (i = run->first; i < run->end; i++) {
				v = prev[i] + (uint64_t)gt_unzigzag(get_varint(&p));
				prev[i] = v;
				st64(base + ops[i].offset, v);
			}
			break;
		default:
			for (i = run->first; i < run->end; i++)
				decode_generic(&ops[i], get_varint(&p), &prev[i], base);
			break;
		}
	}
	if (p <= rec_end) {
		((struct gt_rec_hdr *)base)->type = (uint16_t)type;
		((struct gt_rec_hdr *)base)->size = prog->size;
		return GT_DECODE_OK;
	}
	if (prog->late_delta)
		memcpy(prev, saved, sizeof(saved));
	else
		memcpy(prev, saved, GT_CODEC_EARLY * sizeof(*prev));
	return decode_again(c, type, start, rec_end, base);
}

int gt_codec_decode(struct gt_codec *c, const uint8_t **pp, const uint8_t *end,
                    union gt_record *recs, struct gt_rec_string *str, const union gt_record **out)
{
	const uint8_t *p = *pp, *rec_end;
	uint64_t type, len;
	uint8_t *base;
	int ret;

	if (GT_LIKELY(!(p[0] & 0x80) && !(p[1] & 0x80))) {
		/* a type and a length of one byte each (any record under 128 bytes) */
		type = p[0];
		len = p[1];
		p += 2;
	} else {
		type = get_varint(&p);
		if (p >= end)
			return GT_DECODE_BROKEN;
		len = get_varint(&p);
	}
	if (p > end || len > (uint64_t)(end - p))
		return GT_DECODE_BROKEN;
	rec_end = p + len;
	*pp = rec_end;
	if (type == GT_REC_NONE || type >= GT_REC_MAX)
		return GT_DECODE_SKIPPED;
	base = (uint8_t *)&recs[type];
	/* the straight-line decoders set the header themselves */
	switch (type) {
	case GT_REC_KERNEL:
		if (!c->progs[type].straight)
			break;
		ret = dec_kernel(c, (struct gt_rec_kernel *)base, p, rec_end);
		goto done;
	case GT_REC_API:
		if (!c->progs[type].straight)
			break;
		ret = dec_api(c, (struct gt_rec_api *)base, p, rec_end);
		goto done;
	case GT_REC_MEMCPY:
		if (!c->progs[type].straight)
			break;
		ret = dec_memcpy(c, (struct gt_rec_memcpy *)base, p, rec_end);
		goto done;
	case GT_REC_MEMSET:
		if (!c->progs[type].straight)
			break;
		ret = dec_memset(c, (struct gt_rec_memset *)base, p, rec_end);
		goto done;
	case GT_REC_MEMORY:
		if (!c->progs[type].straight)
			break;
		ret = dec_memory(c, (struct gt_rec_memory *)base, p, rec_end);
		goto done;
	case GT_REC_NVTX:
		if (!c->progs[type].straight)
			break;
		ret = dec_nvtx(c, (struct gt_rec_nvtx *)base, p, rec_end);
		goto done;
	case GT_REC_SYNC:
		if (!c->progs[type].straight)
			break;
		ret = dec_sync(c, (struct gt_rec_sync *)base, p, rec_end);
		goto done;
	case GT_REC_STRING:
		*out = (const union gt_record *)str;
		return decode_string(c, p, rec_end, str);
	default:
		break;
	}
	if (!c->progs[type].nops)
		return GT_DECODE_SKIPPED; /* a type this build does not know */
	ret = decode_runs(c, (unsigned)type, p, rec_end, base);
done:
	if (ret == GT_DECODE_OK)
		*out = &recs[type];
	return ret;
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

int gt_codec_init(struct gt_codec *c)
{
	memset(c, 0, sizeof(*c));
	for (unsigned type = 1; type < GT_REC_MAX; type++) {
		const struct gt_record_desc *d = gt_record_desc(type);
		struct gt_codec_prog *prog = &c->progs[type];

		if (!d)
			continue; /* a value left unused: its records are skipped (nops 0) */
		if (d->nfields + 1u > GT_CODEC_MAX_FIELDS)
			return -EINVAL;
		prog->size = d->size;
		/* the header's pid travels as the first field: delta coded, so it costs one
		 * byte when consecutive records of a type come from the same process */
		prog->ops[0] = (struct gt_codec_op){offsetof(struct gt_rec_hdr, pid), K_D32,
		                                    (uint8_t)(2u | OP_DELTA)};
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
			        (struct gt_codec_op){f->offset, kind_of(op), (uint8_t)op};
		}
		prog->nops = (uint16_t)(d->nfields + 1u);
		for (unsigned i = GT_CODEC_EARLY; i < prog->nops; i++)
			if (prog->ops[i].bits & OP_DELTA)
				prog->late_delta = true;
		prog->straight = straight_matches(prog, type);
		for (unsigned i = 0; i < prog->nops; i++) {
			struct gt_codec_run *run = &prog->runs[prog->nruns];

			if (prog->nruns && run[-1].kind == prog->ops[i].kind &&
			    run[-1].kind != K_GENERIC) {
				run[-1].end = (uint8_t)(i + 1);
				continue;
			}
			*run = (struct gt_codec_run){prog->ops[i].kind, (uint8_t)i,
			                             (uint8_t)(i + 1)};
			prog->nruns++;
		}
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
