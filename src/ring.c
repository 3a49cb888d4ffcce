/* Lock-free multi-producer, single-consumer ring of variable-size records in a sealed memfd.
 * Producers run inside the traced application; the consumer runs in the gputrace CLI (or the
 * standalone drainer thread). Layout and memory ordering: docs/ring.md. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "gputrace/clock.h"
#include "gputrace/ring.h"

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
_Static_assert(sizeof(struct gt_ring_header) <= DATA_OFFSET, "ring header fits in a page");
_Static_assert(offsetof(struct gt_ring_header, head) % GT_CACHELINE == 0, "head on its line");
_Static_assert(offsetof(struct gt_ring_header, tail) % GT_CACHELINE == 0, "tail on its line");
_Static_assert(offsetof(struct gt_ring_header, tail) - offsetof(struct gt_ring_header, head) >=
                       GT_CACHELINE,
               "producer and consumer indices on separate cache lines");
_Static_assert(offsetof(struct gt_ring_header, dropped) % GT_CACHELINE == 0,
               "loss counters on their own line");
_Static_assert(GT_REC_MAX <= W_PACKED, "record types fit the commit word");

/* Largest record a slot can carry: gt_rec_hdr.size is 16 bits and a multiple of 8. */
#define RECORD_MAX_BYTES 65528u

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

/* How often the consumer publishes `tail` while it reads (a fraction of the data area):
 * fewer stores to the consumer's line, which every producer reads in reserve. */
#define PUBLISH_SHIFT 3

/* The consumer's sleep steps while it waits at an uncommitted slot (gt_ring_consume). */
#define STALL_STEP_MIN_NS 10000u
#define STALL_STEP_MAX_NS 1000000u

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

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = {.tv_sec = (time_t)(ns / 1000000000u),
	                      .tv_nsec = (long)(ns % 1000000000u)};

	nanosleep(&ts, NULL);
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

static int ring_alloc(int fd, void *map, size_t map_bytes, struct gt_ring **ret)
{
	struct gt_ring *ring = calloc(1, sizeof(*ring));

	if (!ring)
		return -ENOMEM;
	ring->buf = malloc(RECORD_MAX_BYTES + SLOT_HDR_BYTES);
	if (!ring->buf) {
		free(ring);
		return -ENOMEM;
	}
	ring->hdr = map;
	ring->map_bytes = map_bytes;
	ring->fd = fd;
	ring->wakeup_fd = -1;
	atomic_init(&ring->wait_gave_up_tail, UINT64_MAX);
	atomic_init(&ring->wait_probe_ns, 0);
	*ret = ring;
	return 0;
}

int gt_ring_create(size_t data_bytes, uint32_t pid, struct gt_ring **ret)
{
	struct gt_ring *ring = NULL;
	struct gt_ring_header *h;
	uint64_t n = GT_RING_MIN_BYTES;
	size_t map_bytes;
	void *map = MAP_FAILED;
	int fd, r;

	if (data_bytes > GT_RING_MAX_BYTES)
		return -EINVAL;
	while (n < data_bytes)
		n <<= 1;
	map_bytes = DATA_OFFSET + (size_t)n;

	fd = memfd_create("gputrace-ring", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -errno;
	if (ftruncate(fd, (off_t)map_bytes) < 0) {
		r = -errno;
		goto out;
	}
	/* The consumer maps this fd too: sealing the size means a producer cannot shrink it
	 * under the consumer's mapping (SIGBUS in the CLI). */
	if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0) {
		r = -errno;
		goto out;
	}
	/* Populated now, at start-up: otherwise the application's threads take the page faults
	 * (a VM exit each on some hypervisors) on their first lap through the ring. */
	map = mmap(NULL, map_bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
	if (map == MAP_FAILED) {
		r = -errno;
		goto out;
	}
	h = map;
	h->magic = GT_RING_MAGIC;
	h->version = GT_RING_VERSION;
	h->header_bytes = sizeof(*h);
	h->data_offset = DATA_OFFSET;
	h->data_bytes = n;
	h->pid = pid;
	h->flags = 0;
	/* The fresh memfd is zeroed: head, tail and the counters start at 0, and a zero word
	 * has units == 0, which never validates. */
	r = ring_alloc(fd, map, map_bytes, &ring);
	if (r < 0)
		goto out;
	ring->data = (uint8_t *)map + DATA_OFFSET;
	ring->data_bytes = n;
	ring->mask = n - 1;
	*ret = ring;
	return 0;
out:
	if (map != MAP_FAILED)
		munmap(map, map_bytes);
	close(fd);
	return r;
}

static int attach_fail(const char **errmsg, const char *msg)
{
	if (errmsg)
		*errmsg = msg;
	return -EINVAL;
}

int gt_ring_attach(int fd, struct gt_ring **ret, const char **errmsg)
{
	struct gt_ring_header *h;
	struct gt_ring *ring = NULL;
	struct stat st;
	uint64_t magic, data_offset, data_bytes, head, tail;
	uint32_t version, header_bytes;
	void *map = MAP_FAILED;
	size_t map_bytes = 0;
	int seals, r;

	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return attach_fail(errmsg, "ring fd is not a memfd");
	seals = fcntl(fd, F_GET_SEALS);
	if (seals < 0 || !(seals & F_SEAL_SHRINK))
		return attach_fail(errmsg, "ring memfd is not sealed against shrinking");
	if (st.st_size < (off_t)DATA_OFFSET ||
	    (uint64_t)st.st_size > (uint64_t)DATA_OFFSET + GT_RING_MAX_BYTES)
		return attach_fail(errmsg, "ring memfd has an impossible size");
	map_bytes = (size_t)st.st_size;
	map = mmap(NULL, map_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED)
		return -errno;
	h = map;
	/* Read each field once: the producer may change the header while we check it. */
	magic = *(volatile uint64_t *)&h->magic;
	version = *(volatile uint32_t *)&h->version;
	header_bytes = *(volatile uint32_t *)&h->header_bytes;
	data_offset = *(volatile uint64_t *)&h->data_offset;
	data_bytes = *(volatile uint64_t *)&h->data_bytes;
	head = atomic_load_explicit(&h->head, memory_order_acquire);
	tail = atomic_load_explicit(&h->tail, memory_order_acquire);

	r = -EINVAL;
	if (magic != GT_RING_MAGIC) {
		attach_fail(errmsg, "ring header: bad magic");
		goto out;
	}
	if (version != GT_RING_VERSION) {
		attach_fail(errmsg, "ring header: unsupported ring version");
		goto out;
	}
	if (header_bytes != sizeof(*h)) {
		attach_fail(errmsg, "ring header: header size mismatch");
		goto out;
	}
	if (data_bytes < GT_RING_MIN_BYTES || data_bytes > GT_RING_MAX_BYTES ||
	    (data_bytes & (data_bytes - 1))) {
		attach_fail(errmsg, "ring header: data size is not a power of two in range");
		goto out;
	}
	if (data_offset < header_bytes || data_offset % GT_CACHELINE || data_offset > map_bytes ||
	    map_bytes - data_offset != data_bytes) {
		attach_fail(errmsg, "ring header: sizes do not match the memfd");
		goto out;
	}
	if (tail > head || head - tail > data_bytes || tail % 8 || head % 8) {
		attach_fail(errmsg, "ring header: head/tail indices out of range");
		goto out;
	}
	r = ring_alloc(fd, map, map_bytes, &ring);
	if (r < 0)
		goto out;
	ring->data = (uint8_t *)map + data_offset;
	ring->data_bytes = data_bytes;
	ring->mask = data_bytes - 1;
	ring->ctail = tail;
	ring->published = tail;
	*ret = ring;
	return 0;
out:
	munmap(map, map_bytes);
	return r;
}

int gt_ring_fd(const struct gt_ring *ring)
{
	return ring->fd;
}

struct gt_ring_header *gt_ring_header(struct gt_ring *ring)
{
	return ring->hdr;
}

void gt_ring_set_wakeup_fd(struct gt_ring *ring, int efd)
{
	ring->wakeup_fd = efd;
}

int gt_ring_wakeup_fd(const struct gt_ring *ring)
{
	return ring->wakeup_fd;
}

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

void gt_ring_free(struct gt_ring *ring)
{
	if (!ring)
		return;
	munmap(ring->hdr, ring->map_bytes);
	if (ring->fd >= 0)
		close(ring->fd);
	free(ring->buf);
	free(ring);
}
