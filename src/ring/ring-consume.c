/* The ring's consumer half: validate and copy out committed records, skip torn and corrupt
 * slots, publish the tail, sleep and wake. Runs in the gputrace CLI's drainer, or, traced
 * without the CLI, on the application's standalone drainer thread. Trusts nothing it reads
 * from the ring. Layout and memory ordering: docs/ring.md. */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "clock.h"
#include "ring-int.h"

/* How often the consumer publishes `tail` while it reads (a fraction of the data area):
 * fewer stores to the consumer's line, which every producer reads in reserve. */
#define PUBLISH_SHIFT 3

/* The consumer's sleep steps while it waits at an uncommitted slot (gt_ring_consume). */
#define STALL_STEP_MIN_NS 10000u
#define STALL_STEP_MAX_NS 1000000u

void gt_ring_set_torn_timeout(struct gt_ring *ring, uint64_t ns)
{
	ring->torn_timeout_ns = ns;
}

static void publish_tail(struct gt_ring *ring)
{
	if (ring->published == ring->ctail)
		return;
	/* Release pairs with the producers' acquire load of tail in gt_ring_reserve(): our
	 * reads of the consumed bytes happen before anyone overwrites them. */
	atomic_store_explicit(&ring->hdr->tail, ring->ctail, memory_order_release);
	ring->published = ring->ctail;
}

uint64_t gt_ring_used_bytes(const struct gt_ring *ring)
{
	return atomic_load_explicit(&ring->hdr->head, memory_order_relaxed) - ring->ctail;
}

bool gt_ring_sleep_begin(struct gt_ring *ring)
{
	uint64_t head;

	publish_tail(ring);
	atomic_store_explicit(&ring->hdr->consumer_sleeping, 1, memory_order_relaxed);
	/* Pairs with the fence in gt_ring_reserve() (see there). */
	atomic_thread_fence(memory_order_seq_cst);
	head = atomic_load_explicit(&ring->hdr->head, memory_order_relaxed);
	return head - ring->ctail < ring->data_bytes / 2;
}

void gt_ring_sleep_end(struct gt_ring *ring)
{
	atomic_store_explicit(&ring->hdr->consumer_sleeping, 0, memory_order_relaxed);
}

/* The first position in [from, head) holding a committed or pending word for itself, or
 * head: where reading resumes after a torn or corrupt slot. */
static uint64_t scan_forward(const struct gt_ring *ring, uint64_t from, uint64_t head)
{
	uint64_t q;

	for (q = from; q < head; q += 8) {
		/* Acquire pairs with the producers' release stores of commit words. */
		uint64_t w = atomic_load_explicit(word_at(ring, q), memory_order_acquire);

		if (word_classify(q, w) != WORD_INVALID)
			break;
	}
	return q < head ? q : head;
}

/* Records the uncommitted slot at pos, whose word w the consumer gave up on, was to hold:
 * those of its type that fit a pending packed slot's body, else one (a single record, a
 * string of any size, a word that is not its own, or a size no slot can have). */
static uint64_t torn_records(const struct gt_ring *ring, uint64_t pos, uint64_t w, uint64_t head)
{
	unsigned wtype = (unsigned)(w >> W_TYPE_SHIFT) & W_TYPE_MASK;
	const struct gt_record_desc *d = gt_record_desc(wtype & ~W_PACKED);
	uint64_t slot = (w >> W_UNITS_SHIFT) * 8, each;

	if (word_classify(pos, w) != WORD_PENDING || !(wtype & W_PACKED) || !d ||
	    wtype == (GT_REC_STRING | W_PACKED) || d->size < sizeof(struct gt_rec_hdr) ||
	    slot > head - pos || slot > ring->data_bytes - (pos & ring->mask) ||
	    slot > SLOT_HDR_BYTES + RECORD_MAX_BYTES)
		return 1;
	each = gt_record_align(d->size);
	return (slot - SLOT_HDR_BYTES) / each > 1 ? (slot - SLOT_HDR_BYTES) / each : 1;
}

/* Resume after the uncommitted slot (word w) the consumer gave up on: count its records
 * torn. */
static void skip_torn(struct gt_ring *ring, uint64_t head, uint64_t w)
{
	ring->stats.torn += torn_records(ring, ring->ctail, w, head);
	ring->ctail = scan_forward(ring, ring->ctail + SLOT_HDR_BYTES, head);
	ring->stalled = false;
}

/* A word passed its check but describes an impossible slot: resynchronize by scanning. */
static void skip_corrupt(struct gt_ring *ring, uint64_t head)
{
	uint64_t pos = ring->ctail;

	ring->ctail = scan_forward(ring, pos + SLOT_HDR_BYTES, head);
	ring->stats.corrupt++;
	ring->stats.corrupt_bytes += ring->ctail - pos;
}

static uint64_t load_head(const struct gt_ring *ring)
{
	/* Only a bound for reading: each slot is published by its own commit word. */
	return atomic_load_explicit(&ring->hdr->head, memory_order_relaxed);
}

/* The records of a slot's body, copied to ring->buf, from byte off to bytes: one record that
 * fills it (off 0), or with `packed` records back to back. Each is validated (its type the word's,
 * its size within the body) and handed to fn; the first that fails ends the slot, whose rest is
 * counted corrupt. When fn stops (< 0) inside a packed slot, the records after that one wait
 * in buf for the next call. Returns fn's error, else 0. */
static inline __attribute__((always_inline)) int deliver(struct gt_ring *ring, unsigned type,
                                                         bool packed, uint64_t off, uint64_t bytes,
                                                         gt_ring_record_fn fn, void *ctx,
                                                         long *count)
{
	const struct gt_rec_hdr *rec;

	if (!packed) {
		/* the common case, kept straight: one record the size of the body (which the slot
		 * checks have made at least a header) */
		rec = (const struct gt_rec_hdr *)(void *)ring->buf;
		if (rec->type != type || gt_record_align(rec->size) != bytes ||
		    gt_record_validate(rec, bytes) < 0) {
			ring->stats.corrupt++;
			ring->stats.corrupt_bytes += bytes + SLOT_HDR_BYTES;
			return 0;
		}
		ring->stats.consumed++;
		(*count)++;
		return fn(ctx, rec);
	}
	while (off < bytes) {
		uint64_t left = bytes - off, size = 0;
		int r;

		rec = (const struct gt_rec_hdr *)(void *)(ring->buf + off);
		if (left >= sizeof(*rec))
			size = gt_record_align(rec->size);
		if (size < sizeof(*rec) || rec->type != type || size > left ||
		    gt_record_validate(rec, size) < 0) {
			ring->stats.corrupt++;
			ring->stats.corrupt_bytes += left + (off ? 0 : SLOT_HDR_BYTES);
			return 0;
		}
		ring->stats.consumed++;
		(*count)++;
		r = fn(ctx, rec);
		off += size;
		if (r < 0) {
			if (off < bytes) {
				ring->rest_type = type;
				ring->rest_off = off;
				ring->rest_end = bytes;
			}
			return r;
		}
	}
	return 0;
}

long gt_ring_consume(struct gt_ring *ring, gt_ring_record_fn fn, void *ctx, uint64_t wait_ns,
                     bool producers_dead)
{
	const uint64_t n = ring->data_bytes;
	uint64_t head = load_head(ring), step = STALL_STEP_MIN_NS;
	long count = 0;
	int r;

	if (ring->rest_end) {
		uint64_t off = ring->rest_off, end = ring->rest_end;

		ring->rest_end = 0;
		r = deliver(ring, ring->rest_type, true, off, end, fn, ctx, &count);
		if (r < 0)
			return r;
	}
	/* head is shared and untrusted: it can never be behind us or a lap ahead, and it
	 * moves in slots of 8 bytes (an unaligned one would lead ctail to a word that
	 * straddles the end of the data area). */
	if (head - ring->ctail > n || head % 8)
		return -EBADMSG;
	while (ring->ctail != head) {
		const uint64_t pos = ring->ctail, idx = pos & ring->mask;
		/* Acquire pairs with the release store in gt_ring_commit() (or of a padding
		 * word in gt_ring_reserve()): the body is complete once the word says so. */
		const uint64_t w = atomic_load_explicit(word_at(ring, pos), memory_order_acquire);
		const uint64_t slot = (w >> W_UNITS_SHIFT) * 8;
		const unsigned wtype = (unsigned)(w >> W_TYPE_SHIFT) & W_TYPE_MASK;
		const unsigned type = wtype & ~W_PACKED;
		const bool packed = wtype & W_PACKED;
		uint64_t now, waited;

		if (word_classify(pos, w) != WORD_COMMITTED) {
			if (producers_dead) {
				skip_torn(ring, head, w);
				continue;
			}
			now = gt_now_ns();
			if (!ring->stalled || ring->stall_pos != pos) {
				ring->stalled = true;
				ring->stall_pos = pos;
				ring->stall_since_ns = now;
			}
			waited = now - ring->stall_since_ns;
			if (waited < wait_ns) {
				uint64_t left = wait_ns - waited;

				publish_tail(ring);
				sleep_ns(step < left ? step : left);
				step = step * 2 < STALL_STEP_MAX_NS ? step * 2 : STALL_STEP_MAX_NS;
				head = load_head(ring);
				if (head - ring->ctail > n || head % 8) {
					publish_tail(ring);
					return -EBADMSG;
				}
				continue;
			}
			if (wait_ns || (ring->torn_timeout_ns && waited >= ring->torn_timeout_ns)) {
				skip_torn(ring, head, w);
				continue;
			}
			break;
		}
		ring->stalled = false;
		/* A slot larger than any record would overflow ring->buf: the word's check is
		 * computable, so a hostile producer can forge one (tests/fuzz/crashes). */
		if (slot > n - idx || slot > head - pos ||
		    (type != GT_REC_NONE && (slot < SLOT_HDR_BYTES + sizeof(struct gt_rec_hdr) ||
		                             slot > SLOT_HDR_BYTES + RECORD_MAX_BYTES)) ||
		    (type == GT_REC_NONE && (packed || idx + slot != n))) {
			skip_corrupt(ring, head);
			continue;
		}
		ring->ctail += slot;
		if (type == GT_REC_NONE)
			continue;
		/* Copy first, then validate the copy: the producer cannot change what we
		 * checked. */
		memcpy(ring->buf, ring->data + idx + SLOT_HDR_BYTES, slot - SLOT_HDR_BYTES);
		if (ring->ctail - ring->published >= n >> PUBLISH_SHIFT)
			publish_tail(ring);
		r = deliver(ring, type, packed, 0, slot - SLOT_HDR_BYTES, fn, ctx, &count);
		if (r < 0) {
			publish_tail(ring);
			return r;
		}
	}
	publish_tail(ring);
	return count;
}

void gt_ring_stats(const struct gt_ring *ring, struct gt_ring_stats *out)
{
	*out = ring->stats;
}

void gt_ring_retire(struct gt_ring *ring)
{
	void *m;

	if (!ring || ring->fd < 0)
		return;
	/* In one step, so the range is mapped throughout: a writer still using the ring finds
	 * zero pages (an empty ring) and writes into memory no one reads. */
	m = mmap(ring->hdr, ring->map_bytes, PROT_READ | PROT_WRITE,
	         MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0);
	if (m == MAP_FAILED)
		return; /* the ring's memory stays */
	close(ring->fd);
	ring->fd = -1;
}
