/* Internal to the ring (src/ring/ring.c, ring-produce.c, ring-consume.c): the layout of a slot's
 * commit word, the ring's private state, and the helpers both sides use. The producer half runs
 * in the traced application, the consumer half in the CLI (or the application's standalone
 * drainer thread). Layout and memory ordering: docs/ring.md. */
#ifndef GPUTRACE_SRC_RING_INT_H
#define GPUTRACE_SRC_RING_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "ring.h"

/*
 * Every record in the data area is a slot: an 8-byte commit word followed by the record
 * (struct gt_rec_hdr first), padded to 8 bytes. The commit word is
 *
 *   bits 63..48  units: slot bytes / 8, commit word included (>= 1)
 *   bit  47      pending: set while the producer writes the body
 *   bit  46      packed: the slot holds several records of the type back to back
 *   bits 45..32  type: enum gt_rec_type; GT_REC_NONE for a padding slot to the end
 *   bits 31..0   check: slot_check(absolute position, type with packed, units)
 *
 * A word is accepted only when its check matches the position it is read at, so bytes left
 * over from an earlier lap, a dead producer's half-written slot and garbage never pass.
 * The reservation writes the word with `pending` set (it carries the check to commit, and
 * lets a consumer scanning past a torn slot stop at a live reservation); the commit clears
 * `pending` with a release store.
 */
#define SLOT_HDR_BYTES 8u
#define W_UNITS_SHIFT  48
#define W_TYPE_SHIFT   32
#define W_TYPE_MASK    0x7fffu /* the type with the packed bit */
#define W_PACKED       0x4000u /* in the type field: bit 46 of the word */
#define W_PENDING      (1ull << 47)

/* Data starts on its own page; the header must fit before it. */
#define DATA_OFFSET 4096u

/* Largest record a slot can carry: gt_rec_hdr.size is 16 bits and a multiple of 8. */
#define RECORD_MAX_BYTES 65528u

struct gt_ring {
	struct gt_ring_header *hdr; /* mapping start; shared */
	uint8_t *data;              /* hdr + data_offset */
	uint64_t data_bytes;        /* private copy, validated at create/attach */
	uint64_t mask;              /* data_bytes - 1 */
	size_t map_bytes;
	int fd;        /* the memfd; owned */
	int wakeup_fd; /* eventfd producers write; borrowed, -1 if none */

	/* Consumer-private state: never read from the shared header after attach. */
	uint64_t ctail;          /* next position to read */
	uint64_t published;      /* last value stored to hdr->tail */
	uint64_t stall_pos;      /* position of the uncommitted slot we wait at */
	uint64_t stall_since_ns; /* trace clock when we first found it */
	bool stalled;
	uint64_t torn_timeout_ns;
	struct gt_ring_stats stats;
	uint8_t *buf; /* private copy of the record being delivered, RECORD_MAX_BYTES */
	/* Records of a packed slot in buf, [rest_off, rest_end), not yet delivered because the
	 * callback stopped before them: the next call delivers them first (rest_end 0: none). */
	uint64_t rest_off, rest_end;
	unsigned rest_type;

	/* Producer-private, for GT_RING_WAIT: the tail at which a wait last gave up (UINT64_MAX:
	 * none yet) and when a reservation last probed a consumer that had not moved since
	 * (trace clock, 0: never). */
	_Atomic uint64_t wait_gave_up_tail;
	_Atomic uint64_t wait_probe_ns;
};

static inline uint32_t slot_check(uint64_t pos, unsigned type, unsigned units)
{
	/* A 64-bit mix (splitmix64's finalizer) of position, type and size; the high half is
	 * the check. Positions a lap apart differ in their check. */
	uint64_t x = pos ^ ((uint64_t)((type << 16) | units) * 0x9e3779b97f4a7c15ull);

	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	x ^= x >> 31;
	return (uint32_t)(x >> 32);
}

static inline uint64_t make_word(uint64_t pos, unsigned type, unsigned units)
{
	return ((uint64_t)units << W_UNITS_SHIFT) | ((uint64_t)type << W_TYPE_SHIFT) |
	       slot_check(pos, type, units);
}

enum word_state {
	WORD_INVALID = 0, /* stale, torn or garbage */
	WORD_PENDING,     /* a reservation whose producer is writing (or died writing) */
	WORD_COMMITTED,
};

static inline enum word_state word_classify(uint64_t pos, uint64_t w)
{
	unsigned units = (unsigned)(w >> W_UNITS_SHIFT);
	unsigned type = (unsigned)(w >> W_TYPE_SHIFT) & W_TYPE_MASK;

	if (units == 0 || (uint32_t)w != slot_check(pos, type, units))
		return WORD_INVALID;
	return (w & W_PENDING) ? WORD_PENDING : WORD_COMMITTED;
}

static inline _Atomic uint64_t *word_at(const struct gt_ring *ring, uint64_t pos)
{
	return (_Atomic uint64_t *)(void *)(ring->data + (pos & ring->mask));
}

static inline void sleep_ns(uint64_t ns)
{
	struct timespec ts = {.tv_sec = (time_t)(ns / 1000000000u),
	                      .tv_nsec = (long)(ns % 1000000000u)};

	nanosleep(&ts, NULL);
}

#endif /* GPUTRACE_SRC_RING_INT_H */
