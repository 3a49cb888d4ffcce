/* The ring's producer half: reserve, commit, batched writes and drop counts. Runs inside the
 * traced application, on every thread that records (application threads, CUPTI's buffer
 * thread): no allocation, no lock, bounded waits only (GT_RING_WAIT). Layout and memory
 * ordering: docs/ring.md. */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "ring-int.h"

/* How a GT_RING_WAIT producer sleeps while it waits for space. */
#define WAIT_STEP_MIN_NS 20000u
#define WAIT_STEP_MAX_NS 2000000u
/* A probe of a consumer that freed nothing since a wait gave up: a kick and this long. */
#define WAIT_PROBE_NS (50u * 1000u * 1000u)

/* How far ahead of its slot a producer asks for the next lines in exclusive state. The lines
 * a producer writes were last read by the consumer on another core (or have left the caches
 * after a lap); without this each record's first store misses, and the next reservation's
 * locked compare-exchange waits for that store to drain. */
#define PREFETCH_AHEAD_BYTES 1024u

/* A hint to fetch the line at p for writing; never faults. PREFETCHW decodes as a NOP on x86
 * processors that lack it. */
static inline void prefetch_for_write(const void *p)
{
#if defined(__x86_64__)
	__asm__ volatile("prefetchw %0" : : "m"(*(const char *)p));
#else
	__builtin_prefetch(p, 1, 3);
#endif
}

void gt_ring_kick(struct gt_ring *ring)
{
	uint64_t one = 1;

	if (ring && ring->wakeup_fd >= 0) {
		/* A full eventfd counter (EAGAIN) already means "wake up": ignore the result. */
		ssize_t r = write(ring->wakeup_fd, &one, sizeof(one));
		(void)r;
	}
}

static void count_drops(struct gt_ring *ring, unsigned type, uint64_t n)
{
	atomic_fetch_add_explicit(&ring->hdr->dropped[type < GT_REC_MAX ? type : GT_REC_NONE], n,
	                          memory_order_relaxed);
}

/* Claim `span` bytes (whole slots) at head, after a padding slot to the end of the data area
 * when they would straddle it. Returns the position of the first byte, or UINT64_MAX when
 * there is no room (after a bounded wait with GT_RING_WAIT); the caller counts the drop. */
static uint64_t claim(struct gt_ring *ring, uint64_t span, unsigned flags)
{
	struct gt_ring_header *h = ring->hdr;
	const uint64_t n = ring->data_bytes, half = n / 2;
	uint64_t head, tail, idx, pad, need, deadline = 0, next_kick = 0;
	uint64_t step = WAIT_STEP_MIN_NS;

	head = atomic_load_explicit(&h->head, memory_order_relaxed);
	for (;;) {
		/* Acquire pairs with the consumer's release store of tail (publish_tail): the
		 * consumer has finished reading every byte before tail, so we may overwrite. */
		tail = atomic_load_explicit(&h->tail, memory_order_acquire);
		idx = head & ring->mask;
		/* Records never straddle the end: the same CAS takes the rest of the area as
		 * a padding slot and the record starts at offset 0. */
		pad = idx + span > n ? n - idx : 0;
		need = pad + span;
		/* Unsigned: a tail ahead of head (corrupt) also reads as full. */
		if (need > n || head - tail > n - need) {
			uint64_t now, fresh;

			/* Our head may be stale: the consumer may since have read past it and
			 * published a tail ahead of it, which reads as full. Look again; the
			 * retry is bounded, since a new head means another producer progressed. */
			fresh = atomic_load_explicit(&h->head, memory_order_relaxed);
			if (fresh != head) {
				head = fresh;
				continue;
			}
			if (!(flags & GT_RING_WAIT))
				return UINT64_MAX;
			now = gt_now_ns();
			if (!deadline) {
				uint64_t limit = GT_RING_WAIT_MAX_NS, last;

				/* Nothing freed since a wait last gave up: the consumer is gone
				 * or stuck. Probe it (a kick, a short wait) at most once per
				 * GT_RING_WAIT_MAX_NS and otherwise drop at once, so a dead
				 * consumer costs CUPTI's thread a few waits, not one per record.
				 * Relaxed: these are hints private to this process. */
				if (tail == atomic_load_explicit(&ring->wait_gave_up_tail,
				                                 memory_order_relaxed)) {
					last = atomic_load_explicit(&ring->wait_probe_ns,
					                            memory_order_relaxed);
					if (last && now - last < GT_RING_WAIT_MAX_NS)
						return UINT64_MAX;
					atomic_store_explicit(&ring->wait_probe_ns, now,
					                      memory_order_relaxed);
					limit = WAIT_PROBE_NS;
				}
				deadline = now + limit;
				atomic_fetch_add_explicit(&h->waits, 1, memory_order_relaxed);
			} else if (now >= deadline) {
				atomic_store_explicit(&ring->wait_gave_up_tail, tail,
				                      memory_order_relaxed);
				return UINT64_MAX;
			}
			if (now >= next_kick) {
				gt_ring_kick(ring);
				next_kick = now + 10u * 1000u * 1000u;
			}
			sleep_ns(step);
			step = step * 2 < WAIT_STEP_MAX_NS ? step * 2 : WAIT_STEP_MAX_NS;
			head = atomic_load_explicit(&h->head, memory_order_relaxed);
			continue;
		}
		/* Relaxed: the slot's bytes are published by the commit word, not by head. */
		if (atomic_compare_exchange_weak_explicit(&h->head, &head, head + need,
		                                          memory_order_relaxed,
		                                          memory_order_relaxed))
			break;
	}

	/* Wake a sleeping consumer once per crossing of the half mark. The fence pairs with
	 * the one in gt_ring_sleep_begin(): either we see consumer_sleeping or it sees our
	 * head. */
	if (head - tail < half && head - tail + need >= half) {
		atomic_thread_fence(memory_order_seq_cst);
		if (atomic_load_explicit(&h->consumer_sleeping, memory_order_relaxed)) {
			atomic_fetch_add_explicit(&h->wakeups, 1, memory_order_relaxed);
			gt_ring_kick(ring);
		}
	}

	if (pad) {
		/* Release pairs with the consumer's acquire load of the word (consume). */
		atomic_store_explicit(word_at(ring, head),
		                      make_word(head, GT_REC_NONE, (unsigned)(pad / 8)),
		                      memory_order_release);
	}
	/* The lines of this reservation's span, PREFETCH_AHEAD_BYTES on: later reservations
	 * will write them, and consecutive spans leave no line out. */
	for (uint64_t a = (head + PREFETCH_AHEAD_BYTES) & ~(uint64_t)(GT_CACHELINE - 1);
	     a < head + need + PREFETCH_AHEAD_BYTES; a += GT_CACHELINE)
		prefetch_for_write(ring->data + (a & ring->mask));
	return head + pad;
}

/* Bytes of the slot that carries a record of `bytes`, or 0 if no slot can. */
static uint64_t slot_bytes(const struct gt_ring *ring, unsigned type, size_t bytes)
{
	uint64_t slot;

	if (type == GT_REC_NONE || type >= GT_REC_MAX || bytes < sizeof(struct gt_rec_hdr) ||
	    bytes > RECORD_MAX_BYTES)
		return 0;
	slot = SLOT_HDR_BYTES + gt_record_align(bytes);
	return slot > ring->data_bytes ? 0 : slot;
}

void *gt_ring_reserve(struct gt_ring *ring, unsigned type, size_t bytes, unsigned flags)
{
	uint64_t slot = slot_bytes(ring, type, bytes), pos;

	if (!slot || (pos = claim(ring, slot, flags)) == UINT64_MAX) {
		count_drops(ring, type, 1);
		return NULL;
	}
	/* Relaxed: a pending word publishes nothing; it carries the check to commit. */
	atomic_store_explicit(word_at(ring, pos),
	                      make_word(pos, type, (unsigned)(slot / 8)) | W_PENDING,
	                      memory_order_relaxed);
	return ring->data + (pos & ring->mask) + SLOT_HDR_BYTES;
}

/* n records of `type`, `bytes` each (a multiple of 8), back to back at recs, in one packed
 * slot: one commit word and one copy for all of them. */
static int write_packed(struct gt_ring *ring, unsigned type, const void *recs, size_t bytes,
                        unsigned n, unsigned flags)
{
	const uint64_t body = (uint64_t)n * bytes, slot = SLOT_HDR_BYTES + body;
	const uint64_t pos = claim(ring, slot, flags);
	uint64_t w;

	if (pos == UINT64_MAX) {
		count_drops(ring, type, n);
		return -ENOSPC;
	}
	w = make_word(pos, type | W_PACKED, (unsigned)(slot / 8));
	/* Relaxed, as in gt_ring_reserve: a pending word publishes nothing. */
	atomic_store_explicit(word_at(ring, pos), w | W_PENDING, memory_order_relaxed);
	memcpy(ring->data + (pos & ring->mask) + SLOT_HDR_BYTES, recs, body);
	/* Release pairs with the consumer's acquire load of the word: the body first. */
	atomic_store_explicit(word_at(ring, pos), w, memory_order_release);
	return 0;
}

int gt_ring_write_batch(struct gt_ring *ring, const void *recs, size_t bytes, unsigned n,
                        unsigned flags)
{
	const uint8_t *p = recs;
	struct gt_rec_hdr first;
	uint64_t most;
	unsigned i, k;
	int ret = 0;

	if (!n)
		return 0;
	memcpy(&first, recs, sizeof(first));
	if (!slot_bytes(ring, first.type, bytes)) {
		count_drops(ring, first.type, n);
		return -ENOSPC;
	}
	/* Records per packed slot: its body fits the consumer's copy buffer, and the slot half
	 * the area, which an empty ring always takes (with the padding before a slot that would
	 * straddle the end, at most the whole area). */
	most = ring->data_bytes / 2 - SLOT_HDR_BYTES;
	most = (most < RECORD_MAX_BYTES ? most : RECORD_MAX_BYTES) / bytes;
	if (gt_record_align(bytes) != bytes || most < 2) {
		/* a size that cannot be packed, or a ring too small for two: one slot each */
		for (i = 0; i < n; i++) {
			void *slot = gt_ring_reserve(ring, first.type, bytes, flags);

			if (!slot) {
				ret = -ENOSPC;
				continue;
			}
			memcpy(slot, p + (size_t)i * bytes, bytes);
			gt_ring_commit(ring, slot);
		}
		return ret;
	}
	for (i = 0; i < n; i += k) {
		k = n - i < most ? n - i : (unsigned)most;
		if (write_packed(ring, first.type, p + (size_t)i * bytes, bytes, k, flags) < 0)
			ret = -ENOSPC;
	}
	return ret;
}

void gt_ring_commit(struct gt_ring *ring, void *slot)
{
	_Atomic uint64_t *wp = (_Atomic uint64_t *)(void *)((uint8_t *)slot - SLOT_HDR_BYTES);
	uint64_t w = atomic_load_explicit(wp, memory_order_relaxed) & ~W_PENDING;

	(void)ring;
	/* Release pairs with the consumer's acquire load of the word: the body is visible
	 * before the word says it is committed. */
	atomic_store_explicit(wp, w, memory_order_release);
}

int gt_ring_write(struct gt_ring *ring, const struct gt_rec_hdr *rec, unsigned flags)
{
	void *slot = gt_ring_reserve(ring, rec->type, rec->size, flags);

	if (!slot)
		return -ENOSPC;
	memcpy(slot, rec, rec->size);
	gt_ring_commit(ring, slot);
	return 0;
}
