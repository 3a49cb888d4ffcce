/* libFuzzer target: the ring consumer against a hostile producer. The input is a small
 * program run against a fresh ring (gt_ring_create): real reservations with arbitrary
 * bodies, forged commit words that pass the position check, raw bytes poked into the data
 * area, header fields overwritten before or after gt_ring_attach(), and consume passes.
 * The consumer must never crash, never loop (libFuzzer's -timeout catches that), and hand
 * its callback only records that validate. Runs as a fuzz program.
 *
 * Input: byte 0 picks the data size, then operations, each an opcode byte and its operands
 * (see the OP_* list); missing operand bytes read as zero. Batches (OP_BATCH) go through
 * gt_ring_write_batch. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "../ring-word.h"
#include "fuzz-common.h"
#include "gputrace/record.h"
#include "ring.h"

#define SLOT_HDR_BYTES 8u /* docs/ring.md: the commit word before each record */

enum {
	OP_WRITE,   /* type u8, bytes u16, flags u8 (bit 0: leave uncommitted, bit 1: keep the
	             * body's own header), then the body */
	OP_FORGE,   /* back u16 (units of 8 before head), units u16, type u8, bits u8 (bit 0:
	             * pending, bit 1: packed) */
	OP_POKE,    /* offset u24, len u8, bytes: raw overwrite of the data area */
	OP_HEADER,  /* field u8, value u64: overwrite a header field */
	OP_ATTACH,  /* the consumer maps the ring now */
	OP_CONSUME, /* flags u8: bit 0 producers dead, bit 1 wait 50 us, bit 2 stop early */
	OP_TORN,    /* torn timeout u8 (microseconds) */
	OP_BATCH,   /* count u8 (1-64), type u8, bytes u16 (8-512), then one body for all */
	OP_MAX
};

static const uint64_t sizes[] = {4u << 10, 8u << 10, 64u << 10, 128u << 10, 1u << 20};

struct input {
	const uint8_t *p, *end;
};

static uint64_t take(struct input *in, unsigned bytes)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < bytes; i++)
		v |= (uint64_t)(in->p < in->end ? *in->p++ : 0) << (8 * i);
	return v;
}

struct consumed {
	uint64_t records;
	uint64_t stop_after; /* return -ECANCELED after this many (0: never) */
	uint64_t sum;        /* every byte of every record, so ASan sees each read */
};

static int on_record(void *ctx, const struct gt_rec_hdr *rec)
{
	struct consumed *c = ctx;
	const uint8_t *b = (const uint8_t *)rec;

	FUZZ_CHECK(rec->type != GT_REC_NONE && rec->type < GT_REC_MAX, "type %u delivered",
	           rec->type);
	FUZZ_CHECK(gt_record_validate(rec, rec->size) == 0, "%s record of %u bytes delivered",
	           gt_record_name(rec->type), rec->size);
	for (unsigned i = 0; i < rec->size; i++)
		c->sum += b[i];
	c->records++;
	return c->stop_after && c->records >= c->stop_after ? -ECANCELED : 0;
}

static void set_header(struct gt_ring_header *h, unsigned field, uint64_t v)
{
	switch (field % 10) {
	case 0:
		h->magic = v;
		break;
	case 1:
		h->version = (uint32_t)v;
		break;
	case 2:
		h->header_bytes = (uint32_t)v;
		break;
	case 3:
		h->data_offset = v;
		break;
	case 4:
		h->data_bytes = v;
		break;
	case 5:
		atomic_store(&h->head, v);
		break;
	case 6:
		atomic_store(&h->tail, v);
		break;
	case 7:
		/* small moves of head: a producer that reserved and never wrote */
		atomic_fetch_add(&h->head, (v & 0xffff) * 8);
		break;
	case 8:
		atomic_store(&h->consumer_sleeping, (uint32_t)v);
		break;
	default:
		atomic_store(&h->dropped[v % GT_REC_MAX], v >> 8);
		break;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct input in = {data, data + size};
	struct gt_ring *prod = NULL, *cons = NULL;
	struct consumed c = {0};
	struct gt_ring_header *h;
	uint64_t n;
	uint8_t *area;
	int fd;

	if (size < 1)
		return 0;
	n = sizes[take(&in, 1) % (sizeof(sizes) / sizeof(sizes[0]))];
	if (gt_ring_create(n, 1234, &prod) < 0)
		return 0;
	h = gt_ring_header(prod);
	area = (uint8_t *)h + h->data_offset;

	while (in.p < in.end) {
		unsigned op = (unsigned)take(&in, 1) % OP_MAX;

		switch (op) {
		case OP_WRITE: {
			unsigned type = (unsigned)take(&in, 1) % (GT_REC_MAX + 2);
			size_t bytes = (size_t)take(&in, 2);
			unsigned flags = (unsigned)take(&in, 1);
			size_t have = (size_t)(in.end - in.p);
			uint8_t *slot;

			/* Producers only ever move head in slots of 8 bytes; one that finds it
			 * otherwise is looking at its own process's memory corruption, which
			 * is not the consumer's to survive. */
			if (atomic_load(&h->head) % 8)
				break;
			slot = gt_ring_reserve(prod, type, bytes, 0);
			if (!slot)
				break;
			memset(slot, 0, bytes);
			memcpy(slot, in.p, have < bytes ? have : bytes);
			in.p += have < bytes ? have : bytes;
			if (!(flags & 2)) {
				struct gt_rec_hdr rh = {(uint16_t)type, (uint16_t)bytes, 1234};

				memcpy(slot, &rh, sizeof(rh));
			}
			if (!(flags & 1))
				gt_ring_commit(prod, slot);
			break;
		}
		case OP_FORGE: {
			uint64_t head = atomic_load(&h->head);
			uint64_t back = take(&in, 2) * 8;
			unsigned units = (unsigned)take(&in, 2);
			unsigned type = (unsigned)take(&in, 1) & 0x7fffu;
			unsigned bits = (unsigned)take(&in, 1);
			bool pending = bits & 1;
			uint64_t pos = head - back;
			uint64_t w = ring_word(pos, type | (bits & 2 ? RING_WORD_PACKED : 0), units,
			                       pending);

			memcpy(area + (pos & (n - 1) & ~7ull), &w, sizeof(w));
			break;
		}
		case OP_POKE: {
			uint64_t off = take(&in, 3) & (n - 1);
			size_t len = (size_t)take(&in, 1), have = (size_t)(in.end - in.p);

			if (len > have)
				len = have;
			if (len > n - off)
				len = (size_t)(n - off);
			memcpy(area + off, in.p, len);
			in.p += len;
			break;
		}
		case OP_HEADER: {
			unsigned field = (unsigned)take(&in, 1);

			set_header(h, field, take(&in, 8));
			break;
		}
		case OP_ATTACH:
			if (cons)
				break;
			fd = dup(gt_ring_fd(prod));
			if (fd < 0)
				break;
			if (gt_ring_attach(fd, &cons, NULL) < 0) {
				close(fd);
				cons = NULL;
			}
			break;
		case OP_CONSUME: {
			unsigned flags = (unsigned)take(&in, 1);

			if (!cons)
				break;
			uint64_t tail = atomic_load(&h->tail);

			c.stop_after = (flags & 4) ? c.records + 1 : 0;
			(void)gt_ring_consume(cons, on_record, &c, (flags & 2) ? 50000 : 0,
			                      flags & 1);
			/* The consumer's position moves by whole slots: an unaligned one reads a
			 * word across the end of the data area. */
			FUZZ_CHECK(atomic_load(&h->tail) == tail || atomic_load(&h->tail) % 8 == 0,
			           "consumer published tail %llu",
			           (unsigned long long)atomic_load(&h->tail));
			break;
		}
		case OP_TORN:
			if (cons)
				gt_ring_set_torn_timeout(cons, take(&in, 1) * 1000u);
			break;
		case OP_BATCH: {
			static uint8_t recs[64 * 512];
			unsigned count = (unsigned)take(&in, 1) % 64 + 1;
			unsigned type = (unsigned)take(&in, 1) % (GT_REC_MAX + 2);
			size_t bytes = (size_t)take(&in, 2) % 505 + 8;
			size_t have = (size_t)(in.end - in.p), body = have < bytes ? have : bytes;

			if (atomic_load(&h->head) % 8)
				break;
			for (unsigned i = 0; i < count; i++) {
				uint8_t *r = recs + i * bytes;
				struct gt_rec_hdr rh = {(uint16_t)type, (uint16_t)bytes, 1234};

				memset(r, 0, bytes);
				memcpy(r, in.p, body);
				memcpy(r, &rh, sizeof(rh));
			}
			in.p += body;
			(void)gt_ring_write_batch(prod, recs, bytes, count, 0);
			break;
		}
		}
	}

	/* The end of a process: whatever is left, with the producers gone. */
	if (!cons) {
		fd = dup(gt_ring_fd(prod));
		if (fd >= 0 && gt_ring_attach(fd, &cons, NULL) < 0) {
			close(fd);
			cons = NULL;
		}
	}
	if (cons) {
		struct gt_ring_stats st;
		long r;

		c.stop_after = 0;
		r = gt_ring_consume(cons, on_record, &c, 0, false);
		FUZZ_CHECK(r >= 0 || r == -EBADMSG, "consume returned %ld", r);
		r = gt_ring_consume(cons, on_record, &c, 0, true);
		FUZZ_CHECK(r >= 0 || r == -EBADMSG, "consume returned %ld", r);
		gt_ring_stats(cons, &st);
		FUZZ_CHECK(st.consumed == c.records, "stats say %llu consumed, callback saw %llu",
		           (unsigned long long)st.consumed, (unsigned long long)c.records);
		(void)gt_ring_used_bytes(cons);
	}
	gt_ring_free(cons);
	gt_ring_free(prod);
	return 0;
}
