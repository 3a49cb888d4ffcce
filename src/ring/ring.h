/* Lock-free multi-producer, single-consumer ring of variable-size records in shared memory.
 * Producers run inside the traced application (any thread, CUPTI's buffer thread); the
 * consumer runs in the gputrace CLI (or in a thread of the application in standalone mode).
 * The mapped header below is an ABI between two processes that may run different builds. */
#ifndef GPUTRACE_RING_H
#define GPUTRACE_RING_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gputrace/record.h"

#define GT_RING_MAGIC         0x474e495254475455ull /* "UTGTRING" little-endian */
#define GT_RING_VERSION       2u                    /* 2: packed slots (gt_ring_write_batch) */
#define GT_RING_DEFAULT_BYTES (32u << 20)
#define GT_RING_MIN_BYTES     (4u << 10)
#define GT_RING_MAX_BYTES     (1u << 30)
#define GT_CACHELINE          64

/* The shared header, at offset 0 of the mapping; data follows at data_offset.
 * Fixed-width fields only; offsets, never pointers. */
struct gt_ring_header {
	/* Written once by the creator before the mapping is shared; read-only afterwards. */
	uint64_t magic;        /* GT_RING_MAGIC */
	uint32_t version;      /* GT_RING_VERSION */
	uint32_t header_bytes; /* sizeof(struct gt_ring_header) */
	uint64_t data_offset;  /* bytes from the mapping start to the data area */
	uint64_t data_bytes;   /* power of two */
	uint32_t pid;          /* creator */
	uint32_t flags;
	uint8_t _pad0[GT_CACHELINE - 40];

	/* Producers' line: next byte position to reserve (monotonic, never wraps). */
	_Alignas(GT_CACHELINE) _Atomic uint64_t head;
	uint8_t _pad1[GT_CACHELINE - 8];

	/* Consumer's line: every byte before tail has been consumed and may be reused. */
	_Alignas(GT_CACHELINE) _Atomic uint64_t tail;
	_Atomic uint32_t consumer_sleeping; /* 1 while the consumer waits for a wake-up */
	uint8_t _pad2[GT_CACHELINE - 12];

	/* Loss counters, by record type, written by producers. */
	_Alignas(GT_CACHELINE) _Atomic uint64_t dropped[GT_REC_MAX]; /* ring full */
	_Atomic uint64_t wakeups; /* times a producer signalled the consumer */
	_Atomic uint64_t waits;   /* times a blocking producer waited for space */
};

_Static_assert(sizeof(_Atomic uint64_t) == 8, "atomics must be lock-free 64-bit words");

struct gt_ring;

/* Reserve flags. */
#define GT_RING_WAIT (1u << 0) /* may wait a bounded time for space (CUPTI's buffer thread) */

/* Longest a GT_RING_WAIT reservation waits for space before it drops and counts. After one
 * has given up, later ones wait again only once the consumer has freed space; until then
 * they drop at once, but for a short probe (a kick and 50 ms) at most once per this
 * interval: a consumer that died costs CUPTI's thread a few waits, not one per record. */
#define GT_RING_WAIT_MAX_NS (200u * 1000u * 1000u)

/* Producer side. A reservation is a record-sized slot in the data area; write the record
 * (header included) into it and commit. Reserve never blocks without GT_RING_WAIT; when
 * the ring is full it returns NULL and counts the drop under `type`.
 * Context: any thread of the application; no allocation, no locks, async-signal-safe. */
void *gt_ring_reserve(struct gt_ring *ring, unsigned type, size_t bytes, unsigned flags);
void gt_ring_commit(struct gt_ring *ring, void *slot);

/* Reserve, copy `rec` (rec->size bytes) and commit. Returns 0 or -ENOSPC (counted). */
int gt_ring_write(struct gt_ring *ring, const struct gt_rec_hdr *rec, unsigned flags);

/* Write n records of one type and one size (`bytes`, each record's hdr.size), laid out back to
 * back at recs (need not be aligned), in one packed slot: one atomic operation on the shared
 * head, one commit word and one copy for the whole batch instead of one each per record. The
 * consumer hands the records to its callback one by one. A batch goes in several slots when
 * it exceeds RECORD_MAX_BYTES or half the ring; a size that is not a multiple of 8, or a ring
 * too small for two records in half of it, gets one slot per record. A slot that finds no room
 * (after the optional GT_RING_WAIT) is dropped and counted whole. Returns 0, or -ENOSPC if
 * anything was dropped. Context: any thread; no allocation, no locks. */
int gt_ring_write_batch(struct gt_ring *ring, const void *recs, size_t bytes, unsigned n,
                        unsigned flags);

/* Create a ring of data_bytes (rounded up to a power of two) in a new memfd.
 * Returns 0 and *ret, or -errno. The fd is gt_ring_fd(); it is close-on-exec. */
int gt_ring_create(size_t data_bytes, uint32_t pid, struct gt_ring **ret);

/* Map a ring received from another process; validates the header against the fd size.
 * On success the ring owns fd; on failure the caller still does.
 * Returns 0, -EINVAL (with *errmsg describing which check failed), or -errno. */
int gt_ring_attach(int fd, struct gt_ring **ret, const char **errmsg);

int gt_ring_fd(const struct gt_ring *ring);
struct gt_ring_header *gt_ring_header(struct gt_ring *ring);

/* Set an eventfd the producers write to when the ring fills past half (or -1). */
void gt_ring_set_wakeup_fd(struct gt_ring *ring, int efd);
int gt_ring_wakeup_fd(const struct gt_ring *ring);

/* Write the wake-up eventfd now (a flush at exit; a producer waiting for space).
 * Context: any thread; async-signal-safe. */
void gt_ring_kick(struct gt_ring *ring);

/* Consumer, before it sleeps: sets consumer_sleeping so that producers crossing the half
 * mark write the eventfd. Returns true if it may sleep, false if the ring is already past
 * half full (drain first). gt_ring_sleep_end() clears the flag after the wake-up. */
bool gt_ring_sleep_begin(struct gt_ring *ring);
void gt_ring_sleep_end(struct gt_ring *ring);

/* Consumer: a slot found uncommitted for longer than ns (counted across gt_ring_consume
 * calls, without sleeping in them) is skipped as torn even while producers live.
 * 0 (the default) turns this off. */
void gt_ring_set_torn_timeout(struct gt_ring *ring, uint64_t ns);

/* Bytes reserved and not yet consumed, as the consumer sees them. */
uint64_t gt_ring_used_bytes(const struct gt_ring *ring);

/* Consumer side. */
enum gt_ring_next {
	GT_RING_EMPTY = 0,  /* nothing committed yet */
	GT_RING_RECORD = 1, /* *rec points at a validated record in the ring */
};

/* Consumer callback for gt_ring_consume: return 0 to continue, <0 to stop. */
typedef int (*gt_ring_record_fn)(void *ctx, const struct gt_rec_hdr *rec);

/* Consume every committed record in order, calling fn for each (the record is a private,
 * validated copy, valid only during the call). An uncommitted slot is waited for up to wait_ns (0:
 * do not wait); with `producers_dead`, or after the wait, it is skipped as torn and later committed
 * records are still found. Corrupt bytes are skipped and counted.
 * Returns records consumed (>= 0), -errno from fn, or -EBADMSG when the producers' head
 * index is impossible (the ring header was overwritten: stop reading this ring). */
long gt_ring_consume(struct gt_ring *ring, gt_ring_record_fn fn, void *ctx, uint64_t wait_ns,
                     bool producers_dead);

/* Consumer-side counts of what it skipped. */
struct gt_ring_stats {
	uint64_t torn;    /* records skipped after their producer never committed */
	uint64_t corrupt; /* records that failed validation */
	uint64_t corrupt_bytes;
	uint64_t consumed;
};
void gt_ring_stats(const struct gt_ring *ring, struct gt_ring_stats *out);

/* A producer's ring whose writers may not all have stopped (exit, detach): the mapping is
 * replaced, in one step, by anonymous zero memory and the fd closed, so the ring's memory goes
 * (once every other mapping has) while a late writer still finds mapped memory to write into,
 * which no one reads. The struct stays valid for such writers. NULL is accepted. */
void gt_ring_retire(struct gt_ring *ring);

/* Unmap; closes the fd. NULL is accepted. */
void gt_ring_free(struct gt_ring *ring);

#endif /* GPUTRACE_RING_H */
