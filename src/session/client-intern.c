/* The traced process's string ids: each distinct string (a kernel, API or NVTX name) gets a
 * local id once, its STRING record written to the ring before the id is handed out. Runs
 * inside the traced application, on any thread that records: lock-free, no allocation (the
 * table and arena are mapped at open). */
#include <string.h>

#include "client-int.h"
#include "hash.h"

/* FNV-1a, then a final mix of its own so that the low bits (the slot) depend on every byte. The
 * slot is the string's local id, and which strings find their probe path full depends on it:
 * these values stay as they are. */
static inline uint64_t hash_bytes(const char *s, size_t len)
{
	uint64_t h = gt_hash_fnv1a(GT_HASH_FNV_OFFSET, s, len);

	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ull;
	h ^= h >> 32;
	return h;
}

/* Write the STRING for local id `id`. Never waits: an application thread drops instead. */
static bool write_string(struct gt_client *c, uint32_t id, const char *s, size_t len)
{
	struct gt_rec_string *r;
	size_t bytes = gt_record_align(sizeof(*r) + len);

	r = gt_ring_reserve(c->ring, GT_REC_STRING, bytes, 0);
	if (!r)
		return false;
	r->hdr.type = GT_REC_STRING;
	r->hdr.size = (uint16_t)bytes;
	r->hdr.pid = c->pid;
	r->id = id;
	r->len = (uint32_t)len;
	memcpy(r->str, s, len);
	memset(r->str + len, 0, bytes - sizeof(*r) - len);
	gt_ring_commit(c->ring, r);
	return true;
}

uint32_t gt_client_intern(struct gt_client *c, const char *s, size_t len)
{
	uint64_t h, key, k;
	uint32_t i, probe;

	if (!c)
		return GT_STRING_NONE;
	if (len > GT_STRING_MAX)
		len = GT_STRING_MAX;
	h = hash_bytes(s, len);
	key = ((h | (1ull << 63)) & ~((1ull << KEY_LEN_BITS) - 1)) | len;
	i = (uint32_t)h & (INTERN_SLOTS - 1);
	for (probe = 0; probe < INTERN_PROBES; probe++, i = (i + 1) & (INTERN_SLOTS - 1)) {
		struct intern_ent *e = &c->tab[i];
		uint32_t id = i + 1, st;

		/* Acquire pairs with the claimant's CAS: nothing else to see yet, but the
		 * state loads below must not move before it. */
		k = atomic_load_explicit(&e->key, memory_order_acquire);
		if (k == 0) {
			uint64_t zero = 0;

			if (atomic_compare_exchange_strong_explicit(&e->key, &zero, key,
			                                            memory_order_acq_rel,
			                                            memory_order_acquire)) {
				uint64_t off = atomic_fetch_add_explicit(&c->arena_used, len,
				                                         memory_order_relaxed);
				bool ok;

				/* We own the slot: copy the content so later callers can compare
				 * it, then write the STRING before anyone is told it is ready. */
				if (off + len <= INTERN_ARENA_BYTES) {
					memcpy(c->arena + off, s, len);
					e->len = (uint32_t)len;
					e->off = off;
					/* Release pairs with the acquire load of state below. */
					atomic_store_explicit(&e->state, ENT_CONTENT,
					                      memory_order_release);
				}
				ok = write_string(c, id, s, len);
				if (ok && off + len <= INTERN_ARENA_BYTES)
					atomic_store_explicit(&e->state, ENT_READY,
					                      memory_order_release);
				return ok ? id : GT_STRING_NONE;
			}
			k = zero; /* someone else claimed it first: is it our string? */
		}
		if (k != key)
			continue;
		/* Acquire pairs with the claimant's release store: len/off/content visible. */
		st = atomic_load_explicit(&e->state, memory_order_acquire);
		if (st != ENT_CLAIMED && (e->len != len || memcmp(c->arena + e->off, s, len) != 0))
			continue; /* same hash and length, other bytes */
		if (st == ENT_READY)
			return id;
		/* Its STRING may not be in the ring yet (or it was dropped): write it too, so
		 * it precedes our records. The drainer keeps the first copy. */
		if (!write_string(c, id, s, len))
			return GT_STRING_NONE;
		if (st == ENT_CONTENT) {
			uint32_t want = ENT_CONTENT;

			atomic_compare_exchange_strong_explicit(&e->state, &want, ENT_READY,
			                                        memory_order_release,
			                                        memory_order_relaxed);
		}
		return id;
	}
	return GT_STRING_NONE;
}
