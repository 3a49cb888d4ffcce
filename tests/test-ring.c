/* Check suite for src/ring/ring.c: reserve/commit/consume, exact drop counts, wake-ups, torn and
 * corrupt slots, forked and SIGKILLed producers. Runs as a unit test (suite ring). */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "ring-word.h"
#include "ring.h"

/* Test records are NVTX records (72 bytes, an 80-byte slot): tid = producer, range_id = seq. */
#define REC_BYTES ((unsigned)sizeof(struct gt_rec_nvtx))
#define SLOT_BYTES 80u
_Static_assert(sizeof(struct gt_rec_nvtx) == 72, "the slot counts below assume 72");

static void make_rec(struct gt_rec_nvtx *r, uint32_t producer, uint64_t seq)
{
	memset(r, 0, sizeof(*r));
	r->hdr.type = GT_REC_NVTX;
	r->hdr.size = sizeof(*r);
	r->hdr.pid = 1234;
	r->tid = producer;
	r->range_id = seq;
	r->start_ns = seq * 3;
	r->end_ns = seq * 3 + 1;
	r->color = (uint32_t)(seq ^ 0xa5a5a5a5u);
}

#define MAX_PRODUCERS 8

/* What the consumer callback saw, per producer. */
struct seen {
	uint64_t next[MAX_PRODUCERS]; /* next expected seq */
	uint64_t count[MAX_PRODUCERS];
	uint64_t records;
	uint64_t bad; /* out of order, duplicated, wrong content or unknown producer */
	uint64_t strings;
};

static int check_rec(void *ctx, const struct gt_rec_hdr *rec)
{
	struct seen *s = ctx;
	const struct gt_rec_nvtx *r = (const struct gt_rec_nvtx *)rec;

	s->records++;
	if (rec->type == GT_REC_STRING) {
		s->strings++;
		return 0;
	}
	if (rec->type != GT_REC_NVTX || rec->size != sizeof(*r) || r->tid >= MAX_PRODUCERS ||
	    r->range_id != s->next[r->tid] || r->start_ns != r->range_id * 3 ||
	    r->end_ns != r->range_id * 3 + 1 || r->color != (uint32_t)(r->range_id ^ 0xa5a5a5a5u)) {
		s->bad++;
		return 0;
	}
	s->next[r->tid]++;
	s->count[r->tid]++;
	return 0;
}

static int write_rec(struct gt_ring *ring, uint32_t producer, uint64_t seq, unsigned flags)
{
	struct gt_rec_nvtx r;

	make_rec(&r, producer, seq);
	return gt_ring_write(ring, &r.hdr, flags);
}

START_TEST(test_create_attach)
{
	struct gt_ring *ring, *peer;
	const char *msg = NULL;
	struct gt_ring_header *h;

	ck_assert_int_eq(gt_ring_create(GT_RING_MAX_BYTES + 1ull, 1, &ring), -EINVAL);
	ck_assert_int_eq(gt_ring_create(5000, 42, &ring), 0);
	h = gt_ring_header(ring);
	ck_assert_uint_eq(h->magic, GT_RING_MAGIC);
	ck_assert_uint_eq(h->version, GT_RING_VERSION);
	ck_assert_uint_eq(h->data_bytes, 8192);
	ck_assert_uint_eq(h->header_bytes, sizeof(*h));
	ck_assert_uint_eq(h->pid, 42);
	ck_assert_int_ge(gt_ring_fd(ring), 0);
	ck_assert_int_eq(fcntl(gt_ring_fd(ring), F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);

	ck_assert_int_eq(write_rec(ring, 0, 0, 0), 0);
	ck_assert_int_eq(gt_ring_attach(dup(gt_ring_fd(ring)), &peer, &msg), 0);
	ck_assert_uint_eq(gt_ring_used_bytes(peer), SLOT_BYTES);
	struct seen s = {0};
	ck_assert_int_eq(gt_ring_consume(peer, check_rec, &s, 0, false), 1);
	ck_assert_uint_eq(s.count[0], 1);
	ck_assert_uint_eq(s.bad, 0);
	ck_assert_uint_eq(atomic_load(&h->tail), SLOT_BYTES);
	gt_ring_free(peer);
	gt_ring_free(ring);
	gt_ring_free(NULL);

	ck_assert_int_eq(gt_ring_create(0, 1, &ring), 0);
	ck_assert_uint_eq(gt_ring_header(ring)->data_bytes, GT_RING_MIN_BYTES);
	gt_ring_free(ring);
}
END_TEST

struct str_seen {
	uint32_t next_id;
	uint32_t bad;
};

static int check_string(void *ctx, const struct gt_rec_hdr *rec)
{
	struct str_seen *c = ctx;
	const struct gt_rec_string *s = (const struct gt_rec_string *)rec;
	uint32_t i;

	if (rec->type != GT_REC_STRING || s->id != c->next_id || s->len != (s->id * 37) % 400) {
		c->bad++;
		return 0;
	}
	for (i = 0; i < s->len; i++)
		if (s->str[i] != (char)('a' + (s->id + i) % 26))
			c->bad++;
	c->next_id++;
	return 0;
}

/* Strings of every length wrap around a small ring many times: exact bytes, in order, with
 * padding slots at the end of the area. */
START_TEST(test_wrap_variable_sizes)
{
	struct gt_ring *ring;
	union {
		struct gt_rec_string s;
		uint8_t bytes[sizeof(struct gt_rec_string) + 512];
	} u;
	struct str_seen c = {1, 0};
	uint32_t id;

	ck_assert_int_eq(gt_ring_create(4096, 1, &ring), 0);
	for (id = 1; id <= 3000; id++) {
		uint32_t len = (id * 37) % 400, i;

		u.s.hdr.type = GT_REC_STRING;
		u.s.hdr.size = (uint16_t)gt_record_align(sizeof(u.s) + len);
		u.s.hdr.pid = 1;
		u.s.id = id;
		u.s.len = len;
		for (i = 0; i < len; i++)
			u.s.str[i] = (char)('a' + (id + i) % 26);
		ck_assert_int_eq(gt_ring_write(ring, &u.s.hdr, 0), 0);
		if (id % 3 == 0)
			ck_assert_int_ge(gt_ring_consume(ring, check_string, &c, 0, false), 1);
	}
	gt_ring_consume(ring, check_string, &c, 0, false);
	ck_assert_uint_eq(c.next_id, 3001);
	ck_assert_uint_eq(c.bad, 0);
	struct gt_ring_stats st;
	gt_ring_stats(ring, &st);
	ck_assert_uint_eq(st.consumed, 3000);
	ck_assert_uint_eq(st.torn, 0);
	ck_assert_uint_eq(st.corrupt, 0);
	for (unsigned t = 0; t < GT_REC_MAX; t++)
		ck_assert_uint_eq(gt_ring_header(ring)->dropped[t], 0);
	gt_ring_free(ring);
}
END_TEST

struct producer_arg {
	struct gt_ring *ring;
	uint32_t id;
	uint64_t n;
	unsigned flags;
	uint64_t ok, failed;
};

static void *producer(void *p)
{
	struct producer_arg *a = p;
	uint64_t i;

	for (i = 0; i < a->n; i++) {
		if (write_rec(a->ring, a->id, a->ok, a->flags) == 0)
			a->ok++;
		else
			a->failed++;
	}
	return NULL;
}

/* 4 threads x 50000 records with the consumer running: every record, once, in order. */
START_TEST(test_threads_no_loss)
{
	enum {
		N = 4,
		M = 50000
	};
	struct gt_ring *ring;
	struct producer_arg a[N];
	pthread_t th[N];
	struct seen s = {0};
	int i;

	ck_assert_int_eq(gt_ring_create(N * M * SLOT_BYTES, 1, &ring), 0);
	for (i = 0; i < N; i++) {
		a[i] = (struct producer_arg){ring, (uint32_t)i, M, 0, 0, 0};
		ck_assert_int_eq(pthread_create(&th[i], NULL, producer, &a[i]), 0);
	}
	/* consume concurrently, the producers still running */
	while (s.records < (uint64_t)N * M / 2)
		ck_assert_int_ge(gt_ring_consume(ring, check_rec, &s, 0, false), 0);
	for (i = 0; i < N; i++)
		pthread_join(th[i], NULL);
	ck_assert_int_ge(gt_ring_consume(ring, check_rec, &s, 0, false), 0);
	ck_assert_uint_eq(s.bad, 0);
	ck_assert_uint_eq(s.records, (uint64_t)N * M);
	for (i = 0; i < N; i++) {
		ck_assert_uint_eq(a[i].ok, M);
		ck_assert_uint_eq(s.count[i], M);
	}
	ck_assert_uint_eq(gt_ring_header(ring)->dropped[GT_REC_NVTX], 0);
	ck_assert_uint_eq(gt_ring_used_bytes(ring), 0);
	gt_ring_free(ring);
}
END_TEST

/* A 4 KiB ring holds exactly 51 slots of 80 bytes (the 52nd would need 16 bytes of padding
 * plus 80): with no consumer, 3 threads x 1000 records drop exactly 3000 - 51. */
START_TEST(test_threads_exact_drops)
{
	enum {
		N = 3,
		M = 1000
	};
	struct gt_ring *ring;
	struct producer_arg a[N];
	pthread_t th[N];
	struct seen s = {0};
	uint64_t ok = 0, failed = 0;
	int i;

	ck_assert_int_eq(gt_ring_create(4096, 1, &ring), 0);
	for (i = 0; i < N; i++) {
		a[i] = (struct producer_arg){ring, (uint32_t)i, M, 0, 0, 0};
		ck_assert_int_eq(pthread_create(&th[i], NULL, producer, &a[i]), 0);
	}
	for (i = 0; i < N; i++) {
		pthread_join(th[i], NULL);
		ok += a[i].ok;
		failed += a[i].failed;
	}
	ck_assert_uint_eq(ok, 4096 / SLOT_BYTES);
	ck_assert_uint_eq(failed, N * M - 4096 / SLOT_BYTES);
	ck_assert_uint_eq(gt_ring_header(ring)->dropped[GT_REC_NVTX], N * M - 4096 / SLOT_BYTES);
	ck_assert_uint_eq(gt_ring_header(ring)->dropped[GT_REC_KERNEL], 0);
	ck_assert_int_eq(gt_ring_consume(ring, check_rec, &s, 0, false), 4096 / SLOT_BYTES);
	ck_assert_uint_eq(s.bad, 0);
	for (i = 0; i < N; i++)
		ck_assert_uint_eq(s.count[i], a[i].ok);
	/* invalid reservations are refused and counted too */
	ck_assert_ptr_null(gt_ring_reserve(ring, GT_REC_KERNEL, 4, 0));
	ck_assert_ptr_null(gt_ring_reserve(ring, GT_REC_MAX + 5, 64, 0));
	ck_assert_ptr_null(gt_ring_reserve(ring, GT_REC_KERNEL, 8192, 0));
	ck_assert_uint_eq(gt_ring_header(ring)->dropped[GT_REC_KERNEL], 2);
	ck_assert_uint_eq(gt_ring_header(ring)->dropped[GT_REC_NONE], 1);
	gt_ring_free(ring);
}
END_TEST

struct slow_consumer {
	struct gt_ring *ring;
	int efd;
	struct seen s;
};

static void *slow_consumer(void *p)
{
	struct slow_consumer *c = p;
	uint64_t v;

	/* wait for the blocked producer's kick, then drain */
	if (read(c->efd, &v, sizeof(v)) == sizeof(v))
		gt_ring_consume(c->ring, check_rec, &c->s, 0, false);
	return NULL;
}

/* GT_RING_WAIT: full ring, nobody draining: gives up after GT_RING_WAIT_MAX_NS and counts;
 * with a consumer woken by the producer's kick, the record goes in. */
START_TEST(test_wait_bounded)
{
	struct gt_ring *ring;
	struct slow_consumer c = {0};
	pthread_t th;
	uint64_t t0, dt, i;
	int efd = eventfd(0, EFD_CLOEXEC);

	ck_assert_int_eq(gt_ring_create(4096, 1, &ring), 0);
	for (i = 0; i < 4096 / SLOT_BYTES; i++)
		ck_assert_int_eq(write_rec(ring, 0, i, 0), 0);
	t0 = gt_now_ns();
	ck_assert_int_eq(write_rec(ring, 0, 4096 / SLOT_BYTES, GT_RING_WAIT), -ENOSPC);
	dt = gt_now_ns() - t0;
	/* it waited its whole bound, and then gave up (returned): how much longer the return
	 * took is the scheduler's business, not a property of the ring */
	ck_assert_uint_ge(dt, GT_RING_WAIT_MAX_NS);
	ck_assert_uint_eq(gt_ring_header(ring)->waits, 1);
	ck_assert_uint_eq(gt_ring_header(ring)->dropped[GT_REC_NVTX], 1);

	gt_ring_set_wakeup_fd(ring, efd);
	c.ring = ring;
	c.efd = efd;
	ck_assert_int_eq(pthread_create(&th, NULL, slow_consumer, &c), 0);
	ck_assert_int_eq(write_rec(ring, 0, 4096 / SLOT_BYTES, GT_RING_WAIT), 0);
	pthread_join(th, NULL);
	ck_assert_uint_eq(c.s.count[0], 4096 / SLOT_BYTES);
	ck_assert_uint_eq(gt_ring_header(ring)->waits, 2);
	ck_assert_uint_eq(gt_ring_header(ring)->dropped[GT_REC_NVTX], 1);
	gt_ring_free(ring);
	close(efd);
}
END_TEST

static uint64_t efd_read(int efd)
{
	uint64_t v = 0;

	if (read(efd, &v, sizeof(v)) != sizeof(v))
		return 0;
	return v;
}

/* One eventfd write per crossing of the half mark while the consumer sleeps, none while it
 * is awake. */
START_TEST(test_wakeup_once_per_crossing)
{
	struct gt_ring *ring;
	struct seen s = {0};
	int efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	uint64_t i, seq = 0;

	ck_assert_int_eq(gt_ring_create(4096, 1, &ring), 0);
	gt_ring_set_wakeup_fd(ring, efd);
	ck_assert(gt_ring_sleep_begin(ring));
	for (i = 0; i < 25; i++) /* 25 x 80 = 2000 < 2048 */
		ck_assert_int_eq(write_rec(ring, 0, seq++, 0), 0);
	ck_assert_uint_eq(efd_read(efd), 0);
	ck_assert_int_eq(write_rec(ring, 0, seq++, 0), 0); /* crosses 2048 */
	for (i = 0; i < 20; i++)
		ck_assert_int_eq(write_rec(ring, 0, seq++, 0), 0);
	ck_assert_uint_eq(efd_read(efd), 1);
	ck_assert_uint_eq(gt_ring_header(ring)->wakeups, 1);
	/* past half already: the consumer must not sleep */
	ck_assert(!gt_ring_sleep_begin(ring));
	gt_ring_sleep_end(ring);
	ck_assert_int_eq(gt_ring_consume(ring, check_rec, &s, 0, false), 46);
	/* awake consumer: a crossing writes nothing */
	for (i = 0; i < 40; i++)
		ck_assert_int_eq(write_rec(ring, 0, seq++, 0), 0);
	ck_assert_uint_eq(efd_read(efd), 0);
	ck_assert_int_eq(gt_ring_consume(ring, check_rec, &s, 0, false), 40);
	ck_assert(gt_ring_sleep_begin(ring));
	for (i = 0; i < 40; i++)
		ck_assert_int_eq(write_rec(ring, 0, seq++, 0), 0);
	ck_assert_uint_eq(efd_read(efd), 1);
	ck_assert_uint_eq(gt_ring_header(ring)->wakeups, 2);
	gt_ring_kick(ring);
	ck_assert_uint_eq(efd_read(efd), 1);
	ck_assert_uint_eq(s.bad, 0);
	gt_ring_free(ring);
	close(efd);
}
END_TEST

/* A reservation never committed: not skipped without a reason; skipped (and counted) after
 * wait_ns, after the torn timeout, or when the producers are dead. Later records survive. */
START_TEST(test_torn_in_process)
{
	struct gt_ring *ring;
	struct gt_ring_stats st;
	struct seen s = {0};
	uint64_t t0, seq;
	long n;
	void *slot;

	ck_assert_int_eq(gt_ring_create(4096, 1, &ring), 0);
	/* 1: wait_ns */
	ck_assert_int_eq(write_rec(ring, 0, 0, 0), 0);
	slot = gt_ring_reserve(ring, GT_REC_NVTX, REC_BYTES, 0);
	ck_assert_ptr_nonnull(slot);
	memset(slot, 0x5a, REC_BYTES);
	ck_assert_int_eq(write_rec(ring, 0, 1, 0), 0);
	ck_assert_int_eq(gt_ring_consume(ring, check_rec, &s, 0, false), 1);
	gt_ring_stats(ring, &st);
	ck_assert_uint_eq(st.torn, 0);
	t0 = gt_now_ns();
	ck_assert_int_eq(gt_ring_consume(ring, check_rec, &s, 5000000, false), 1);
	ck_assert_uint_ge(gt_now_ns() - t0, 4000000);
	gt_ring_stats(ring, &st);
	ck_assert_uint_eq(st.torn, 1);
	ck_assert_uint_eq(s.count[0], 2);

	/* 2: torn timeout, the consumer does not sleep: the first call only notes the slot */
	gt_ring_set_torn_timeout(ring, 20000000);
	ck_assert_ptr_nonnull(gt_ring_reserve(ring, GT_REC_NVTX, REC_BYTES, 0));
	ck_assert_int_eq(write_rec(ring, 0, 2, 0), 0);
	t0 = gt_now_ns();
	ck_assert_int_eq(gt_ring_consume(ring, check_rec, &s, 0, false), 0);
	/* until the timeout has passed, however late this thread gets to look (a hang is the
	 * test's timeout) */
	while ((n = gt_ring_consume(ring, check_rec, &s, 0, false)) == 0)
		usleep(1000);
	ck_assert_int_eq(n, 1);
	ck_assert_uint_ge(gt_now_ns() - t0, 20000000);
	gt_ring_stats(ring, &st);
	ck_assert_uint_eq(st.torn, 2);
	gt_ring_set_torn_timeout(ring, 0);

	/* 3: producers dead; the second torn reservation wraps with padding (two
	 * reservations in a row are two torn records) */
	seq = s.next[0];
	while ((atomic_load(&gt_ring_header(ring)->head) & 4095) + 2 * SLOT_BYTES <= 4096) {
		ck_assert_int_eq(write_rec(ring, 0, seq++, 0), 0);
		ck_assert_int_eq(gt_ring_consume(ring, check_rec, &s, 0, false), 1);
	}
	ck_assert_ptr_nonnull(gt_ring_reserve(ring, GT_REC_NVTX, REC_BYTES, 0));
	ck_assert_ptr_nonnull(gt_ring_reserve(ring, GT_REC_NVTX, REC_BYTES, 0)); /* padded, wraps */
	ck_assert_uint_lt(atomic_load(&gt_ring_header(ring)->head) & 4095, SLOT_BYTES * 2);
	ck_assert_int_eq(write_rec(ring, 0, seq, 0), 0);
	ck_assert_int_eq(write_rec(ring, 0, seq + 1, 0), 0);
	ck_assert_int_eq(gt_ring_consume(ring, check_rec, &s, 0, true), 2);
	gt_ring_stats(ring, &st);
	ck_assert_uint_eq(st.torn, 4);
	ck_assert_uint_eq(st.corrupt, 0);
	ck_assert_uint_eq(s.bad, 0);
	ck_assert_uint_eq(gt_ring_used_bytes(ring), 0);
	gt_ring_free(ring);
}
END_TEST

START_TEST(test_corrupt_record)
{
	struct gt_ring *ring;
	struct gt_ring_stats st;
	struct seen s = {0};
	uint8_t *data;
	struct gt_rec_hdr *rec2;
	uint64_t w;

	ck_assert_int_eq(gt_ring_create(4096, 1, &ring), 0);
	data = (uint8_t *)gt_ring_header(ring) + gt_ring_header(ring)->data_offset;
	ck_assert_int_eq(write_rec(ring, 0, 0, 0), 0);
	ck_assert_int_eq(write_rec(ring, 0, 1, 0), 0);
	ck_assert_int_eq(write_rec(ring, 0, 2, 0), 0);
	/* record 2's length says 200 bytes: rejected, counted, record 3 still read */
	rec2 = (struct gt_rec_hdr *)(data + SLOT_BYTES + 8);
	rec2->size = 200;
	s.next[0] = 0;
	ck_assert_int_eq(gt_ring_consume(ring, check_rec, &s, 0, false), 2);
	gt_ring_stats(ring, &st);
	ck_assert_uint_eq(st.corrupt, 1);
	ck_assert_uint_eq(st.corrupt_bytes, SLOT_BYTES);
	ck_assert_uint_eq(s.bad, 1); /* seq 2 arrived where 1 was expected */

	/* an unknown type with a plausible size */
	ck_assert_int_eq(write_rec(ring, 5, 0, 0), 0);
	((struct gt_rec_hdr *)(data + 3 * SLOT_BYTES + 8))->type = 999;
	ck_assert_int_eq(write_rec(ring, 5, 1, 0), 0);
	ck_assert_int_eq(gt_ring_consume(ring, check_rec, &s, 0, false), 1);
	gt_ring_stats(ring, &st);
	ck_assert_uint_eq(st.corrupt, 2);

	/* a garbage commit word looks uncommitted: skipped as torn once producers are dead */
	ck_assert_int_eq(write_rec(ring, 6, 0, 0), 0);
	ck_assert_int_eq(write_rec(ring, 6, 1, 0), 0);
	memcpy(&w, data + 5 * SLOT_BYTES, 8);
	w ^= 0x10;
	memcpy(data + 5 * SLOT_BYTES, &w, 8);
	ck_assert_int_eq(gt_ring_consume(ring, check_rec, &s, 0, false), 0);
	ck_assert_int_eq(gt_ring_consume(ring, check_rec, &s, 0, true), 1);
	ck_assert_uint_eq(s.count[6], 0);
	gt_ring_stats(ring, &st);
	ck_assert_uint_eq(st.torn, 1);

	/* a head a lap ahead of the consumer: the ring is given up */
	atomic_store(&gt_ring_header(ring)->head, 1ull << 40);
	ck_assert_int_eq(gt_ring_consume(ring, check_rec, &s, 0, false), -EBADMSG);
	gt_ring_free(ring);
}
END_TEST

/* Damage one header field of a fresh ring and attach: -EINVAL with the reason. */
static void attach_damaged(size_t off, uint64_t value, unsigned width, const char *want)
{
	struct gt_ring *ring, *peer = NULL;
	const char *msg = NULL;
	uint8_t *h;
	int fd;

	ck_assert_int_eq(gt_ring_create(4096, 1, &ring), 0);
	h = (uint8_t *)gt_ring_header(ring);
	memcpy(h + off, &value, width);
	fd = dup(gt_ring_fd(ring));
	ck_assert_int_eq(gt_ring_attach(fd, &peer, &msg), -EINVAL);
	ck_assert_ptr_null(peer);
	ck_assert_str_eq(msg, want);
	close(fd);
	gt_ring_free(ring);
}

START_TEST(test_corrupt_header_attach)
{
	struct gt_ring *peer = NULL;
	const char *msg = NULL;
	char path[] = "/tmp/gt-ring-XXXXXX";
	int fd, p[2];

	attach_damaged(offsetof(struct gt_ring_header, magic), 0x1234, 8, "ring header: bad magic");
	attach_damaged(offsetof(struct gt_ring_header, version), 7, 4,
	               "ring header: unsupported ring version");
	attach_damaged(offsetof(struct gt_ring_header, header_bytes), 64, 4,
	               "ring header: header size mismatch");
	attach_damaged(offsetof(struct gt_ring_header, data_bytes), 3000, 8,
	               "ring header: data size is not a power of two in range");
	attach_damaged(offsetof(struct gt_ring_header, data_bytes), 8192, 8,
	               "ring header: sizes do not match the memfd");
	attach_damaged(offsetof(struct gt_ring_header, data_offset), 4000, 8,
	               "ring header: sizes do not match the memfd");
	attach_damaged(offsetof(struct gt_ring_header, head), 8192, 8,
	               "ring header: head/tail indices out of range");
	attach_damaged(offsetof(struct gt_ring_header, tail), 16, 8,
	               "ring header: head/tail indices out of range");

	/* not a memfd at all */
	ck_assert_int_eq(pipe(p), 0);
	ck_assert_int_eq(gt_ring_attach(p[0], &peer, &msg), -EINVAL);
	ck_assert_str_eq(msg, "ring fd is not a memfd");
	close(p[0]);
	close(p[1]);
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	unlink(path);
	ck_assert_int_eq(ftruncate(fd, 8192), 0);
	ck_assert_int_eq(gt_ring_attach(fd, &peer, &msg), -EINVAL);
	ck_assert_str_eq(msg, "ring memfd is not sealed against shrinking");
	close(fd);
	ck_assert_ptr_null(peer);
}
END_TEST

/* Producers in forked processes, the consumer in the parent. */
START_TEST(test_forked_producers)
{
	enum {
		P = 3,
		M = 20000
	};
	struct gt_ring *ring;
	struct seen s = {0};
	pid_t pids[P];
	int i, status;

	ck_assert_int_eq(gt_ring_create(4u << 20, 1, &ring), 0);
	for (i = 0; i < P; i++) {
		pids[i] = fork();
		ck_assert_int_ge(pids[i], 0);
		if (pids[i] == 0) {
			uint64_t k;

			for (k = 0; k < M; k++)
				if (write_rec(ring, (uint32_t)i, k, GT_RING_WAIT) < 0)
					_exit(1);
			_exit(0);
		}
	}
	while (s.records < (uint64_t)P * M / 2)
		ck_assert_int_ge(gt_ring_consume(ring, check_rec, &s, 0, false), 0);
	for (i = 0; i < P; i++) {
		ck_assert_int_eq(waitpid(pids[i], &status, 0), pids[i]);
		ck_assert(WIFEXITED(status));
		ck_assert_int_eq(WEXITSTATUS(status), 0);
	}
	ck_assert_int_ge(gt_ring_consume(ring, check_rec, &s, 0, true), 0);
	ck_assert_uint_eq(s.bad, 0);
	for (i = 0; i < P; i++)
		ck_assert_uint_eq(s.count[i], M);
	ck_assert_uint_eq(gt_ring_header(ring)->dropped[GT_REC_NVTX], 0);
	gt_ring_free(ring);
}
END_TEST

/* What a killed child tells the parent: how many records each thread committed; with `hold`
 * set by the parent, thread 0 stops in the middle of its third record and says so (`held`). */
struct kill_log {
	_Atomic uint32_t committed[2];
	_Atomic uint32_t started;
	_Atomic uint32_t hold, held;
};

struct slow_arg {
	struct gt_ring *ring;
	struct kill_log *log;
	uint32_t id;
};

/* Write records field by field with pauses, so that SIGKILL often lands mid-record. */
static void *slow_producer(void *p)
{
	struct slow_arg *a = p;
	uint32_t seq;

	for (seq = 0;; seq++) {
		struct gt_rec_nvtx r, *slot;
		volatile unsigned spin;
		uint8_t *dst, *src = (uint8_t *)&r;
		size_t i;

		slot = gt_ring_reserve(a->ring, GT_REC_NVTX, sizeof(r), 0);
		if (!slot)
			break;
		make_rec(&r, a->id, seq);
		dst = (uint8_t *)slot;
		for (i = 0; i < sizeof(r); i += 8) {
			memcpy(dst + i, src + i, 8);
			for (spin = 0; spin < 50; spin++)
				;
			/* sleeping mid-record leaves the CPU to the parent, which kills us */
			if (i == 32 && seq % 4 == 0)
				nanosleep(&(struct timespec){0, 20000}, NULL);
			/* or, when asked, stay mid-record until the kill: a torn slot for sure */
			if (i == 32 && seq == 2 && a->id == 0 && atomic_load(&a->log->hold)) {
				atomic_store(&a->log->held, 1);
				for (;;)
					pause();
			}
		}
		gt_ring_commit(a->ring, slot);
		atomic_store(&a->log->committed[a->id], seq + 1);
	}
	for (;;)
		pause();
	return NULL;
}

struct kill_seen {
	uint64_t next[2];
	uint64_t bad;
};

static int kill_check(void *ctx, const struct gt_rec_hdr *rec)
{
	struct kill_seen *k = ctx;
	const struct gt_rec_nvtx *r = (const struct gt_rec_nvtx *)rec;

	if (rec->type != GT_REC_NVTX || r->tid > 1 || r->range_id != k->next[r->tid] ||
	    r->color != (uint32_t)(r->range_id ^ 0xa5a5a5a5u))
		k->bad++;
	else
		k->next[r->tid]++;
	return 0;
}

/* 1000 times: a child with two producer threads is SIGKILLed at a random moment once it has
 * committed a record; every tenth time, a child with one thread is killed while that thread
 * is in the middle of a record. Every record it logged as committed is read back in order
 * (plus at most the one committed but not yet logged), torn slots are skipped, and the shared
 * ring keeps working across iterations. */
START_TEST(test_sigkill_producers)
{
	enum {
		ITER = 1000
	};
	struct gt_ring *ring;
	struct kill_log *log;
	uint64_t torn_before = 0, torn_total = 0, recovered = 0;
	unsigned seed = 12345;
	int it;

	/* precise short sleeps: the kill lands anywhere in the child's run */
	prctl(PR_SET_TIMERSLACK, 1ul, 0ul, 0ul, 0ul);
	ck_assert_int_eq(gt_ring_create(4096, 1, &ring), 0);
	log = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ck_assert_ptr_ne(log, MAP_FAILED);
	for (it = 0; it < ITER; it++) {
		struct kill_seen k = {{0, 0}, 0};
		struct gt_ring_stats st;
		uint32_t c0, c1;
		int status;
		pid_t pid;

		atomic_store(&log->committed[0], 0);
		atomic_store(&log->committed[1], 0);
		atomic_store(&log->started, 0);
		atomic_store(&log->hold, it % 10 == 0);
		atomic_store(&log->held, 0);
		pid = fork();
		ck_assert_int_ge(pid, 0);
		if (pid == 0) {
			struct slow_arg a0 = {ring, log, 0}, a1 = {ring, log, 1};
			pthread_t th;

			if (!atomic_load(&log->hold))
				pthread_create(&th, NULL, slow_producer, &a1);
			atomic_store(&log->started, 1);
			slow_producer(&a0);
			_exit(0);
		}
		if (atomic_load(&log->hold)) {
			while (!atomic_load(&log->held))
				sched_yield();
		} else {
			struct timespec ts = {0, (long)(rand_r(&seed) % 400000)};

			while (!atomic_load(&log->committed[0]) && !atomic_load(&log->committed[1]))
				sched_yield();
			nanosleep(&ts, NULL);
		}
		kill(pid, SIGKILL);
		ck_assert_int_eq(waitpid(pid, &status, 0), pid);
		ck_assert(WIFSIGNALED(status));
		ck_assert_int_ge(gt_ring_consume(ring, kill_check, &k, 0, true), 0);
		c0 = atomic_load(&log->committed[0]);
		c1 = atomic_load(&log->committed[1]);
		ck_assert_uint_eq(k.bad, 0);
		ck_assert_msg(k.next[0] == c0 || k.next[0] == c0 + 1u,
		              "iter %d: thread 0 %llu vs %u", it, (unsigned long long)k.next[0],
		              c0);
		ck_assert_msg(k.next[1] == c1 || k.next[1] == c1 + 1u,
		              "iter %d: thread 1 %llu vs %u", it, (unsigned long long)k.next[1],
		              c1);
		ck_assert_uint_eq(gt_ring_used_bytes(ring), 0);
		gt_ring_stats(ring, &st);
		ck_assert_uint_le(st.torn - torn_before, 2);
		torn_total += st.torn - torn_before;
		torn_before = st.torn;
		recovered += k.next[0] + k.next[1];
		ck_assert_uint_eq(st.corrupt, 0);
	}
	/* the kills did land mid-record (every tenth for sure), and records were committed
	 * before each kill */
	printf("sigkill: %d kills, %llu records recovered, %llu torn\n", ITER,
	       (unsigned long long)recovered, (unsigned long long)torn_total);
	ck_assert_uint_ge(torn_total, ITER / 10);
	ck_assert_uint_ge(recovered, ITER);
	munmap(log, 4096);
	gt_ring_free(ring);
}
END_TEST

/* Batches: n records in one packed slot (one reservation, one commit word), read in order,
 * record by record. A 4 KiB ring takes at most 28 records of 72 bytes in one slot (half the
 * area, word included). Batches that would straddle the end of the data area start after a
 * padding slot; a larger batch goes in several slots; a slot that finds the ring full is
 * dropped whole and counted whole. */
START_TEST(test_batch)
{
	static struct gt_rec_nvtx recs[70];
	struct gt_ring *ring;
	struct gt_ring_stats st;
	struct seen s = {0};
	uint64_t seq = 0;
	unsigned i, round;

	ck_assert_int_eq(gt_ring_create(GT_RING_MIN_BYTES, 1, &ring), 0);
	/* a batch of 6 is one slot of 440 bytes: they wrap at a different offset each lap */
	for (round = 0; round < 100; round++) {
		for (i = 0; i < 6; i++)
			make_rec(&recs[i], 0, seq++);
		ck_assert_int_eq(gt_ring_write_batch(ring, recs, sizeof(recs[0]), 6, 0), 0);
		if (round % 3 == 2)
			ck_assert_int_ge(gt_ring_consume(ring, check_rec, &s, 0, false), 6);
	}
	gt_ring_consume(ring, check_rec, &s, 0, false);
	ck_assert_uint_eq(s.bad, 0);
	ck_assert_uint_eq(s.count[0], 600);
	ck_assert_uint_eq(atomic_load(&gt_ring_header(ring)->dropped[GT_REC_NVTX]), 0);
	gt_ring_stats(ring, &st);
	ck_assert_uint_eq(st.consumed, 600);
	ck_assert_uint_eq(st.corrupt, 0);
	gt_ring_free(ring);

	/* a fresh ring, head at 0. A batch of 40 goes as slots of 28 and 12 (2,024 and 872
	 * bytes), in order, and leaves 1,200 bytes: too few for 17 (1,232), dropped whole;
	 * enough for 16 (1,160) */
	memset(&s, 0, sizeof(s));
	ck_assert_int_eq(gt_ring_create(GT_RING_MIN_BYTES, 1, &ring), 0);
	for (i = 0; i < 40; i++)
		make_rec(&recs[i], 0, i);
	ck_assert_int_eq(gt_ring_write_batch(ring, recs, sizeof(recs[0]), 40, 0), 0);
	ck_assert_uint_eq(gt_ring_used_bytes(ring), 2024 + 872);
	ck_assert_int_eq(gt_ring_write_batch(ring, recs, sizeof(recs[0]), 17, 0), -ENOSPC);
	ck_assert_uint_eq(atomic_load(&gt_ring_header(ring)->dropped[GT_REC_NVTX]), 17);
	ck_assert_int_eq(gt_ring_write_batch(ring, &recs[0], sizeof(recs[0]), 0, 0), 0);
	for (i = 0; i < 16; i++)
		make_rec(&recs[i], 0, 40 + i);
	ck_assert_int_eq(gt_ring_write_batch(ring, recs, sizeof(recs[0]), 16, 0), 0);
	ck_assert_uint_eq(gt_ring_used_bytes(ring), 4096 - 40);
	ck_assert_int_eq(gt_ring_consume(ring, check_rec, &s, 0, false), 56);
	ck_assert_uint_eq(s.bad, 0);
	ck_assert_uint_eq(s.count[0], 56);
	gt_ring_free(ring);

	/* more than the ring holds: 70 go as 28 + 28 + 14, and the last slot finds no room */
	memset(&s, 0, sizeof(s));
	ck_assert_int_eq(gt_ring_create(GT_RING_MIN_BYTES, 1, &ring), 0);
	for (i = 0; i < 70; i++)
		make_rec(&recs[i], 0, i);
	ck_assert_int_eq(gt_ring_write_batch(ring, recs, sizeof(recs[0]), 70, 0), -ENOSPC);
	ck_assert_uint_eq(atomic_load(&gt_ring_header(ring)->dropped[GT_REC_NVTX]), 14);
	ck_assert_int_eq(gt_ring_consume(ring, check_rec, &s, 0, false), 56);
	ck_assert_uint_eq(s.bad, 0);
	gt_ring_free(ring);
}
END_TEST

/* A packed slot left pending (its producer died while copying) is torn as a whole: every
 * record it was to hold is counted torn, not one. Its word is forged here, since the
 * library's batches commit at once. */
START_TEST(test_torn_packed)
{
	struct gt_ring *ring;
	struct gt_ring_stats st;
	struct seen s = {0};
	uint64_t pos;
	uint8_t *body;

	ck_assert_int_eq(gt_ring_create(GT_RING_MIN_BYTES, 1, &ring), 0);
	ck_assert_int_eq(write_rec(ring, 0, 0, 0), 0);
	pos = atomic_load(&gt_ring_header(ring)->head);
	body = gt_ring_reserve(ring, GT_REC_NVTX, 5 * sizeof(struct gt_rec_nvtx), 0);
	ck_assert_ptr_nonnull(body);
	atomic_store((_Atomic uint64_t *)(void *)(body - 8),
	             ring_word(pos, GT_REC_NVTX | RING_WORD_PACKED, 1 + 5 * REC_BYTES / 8, true));
	ck_assert_int_eq(write_rec(ring, 0, 1, 0), 0);
	ck_assert_int_eq(gt_ring_consume(ring, check_rec, &s, 0, true), 2);
	gt_ring_stats(ring, &st);
	ck_assert_uint_eq(st.torn, 5);
	ck_assert_uint_eq(st.corrupt, 0);
	ck_assert_uint_eq(s.count[0], 2);
	ck_assert_uint_eq(s.bad, 0);

	/* a forged word claiming a slot larger than what lies before head (and than the ring)
	 * counts one record, not the 200 its size would hold */
	pos = atomic_load(&gt_ring_header(ring)->head);
	body = gt_ring_reserve(ring, GT_REC_NVTX, 5 * sizeof(struct gt_rec_nvtx), 0);
	ck_assert_ptr_nonnull(body);
	atomic_store((_Atomic uint64_t *)(void *)(body - 8),
	             ring_word(pos, GT_REC_NVTX | RING_WORD_PACKED, 1 + 200 * REC_BYTES / 8, true));
	ck_assert_int_eq(write_rec(ring, 0, 2, 0), 0);
	ck_assert_int_eq(gt_ring_consume(ring, check_rec, &s, 0, true), 1);
	gt_ring_stats(ring, &st);
	ck_assert_uint_eq(st.torn, 6);
	ck_assert_uint_eq(s.count[0], 3);
	ck_assert_uint_eq(s.bad, 0);
	gt_ring_free(ring);
}
END_TEST

/* The callback stops (< 0) inside a packed slot: the records after the one it stopped at are
 * delivered first by the next call, none lost, none twice. */
struct stopper {
	struct seen s;
	unsigned stop_at; /* return -ECANCELED from this record on (0: never) */
};

static int stop_after(void *ctx, const struct gt_rec_hdr *rec)
{
	struct stopper *t = ctx;

	check_rec(&t->s, rec);
	return t->stop_at && t->s.records >= t->stop_at ? -ECANCELED : 0;
}

START_TEST(test_batch_callback_stops)
{
	struct gt_rec_nvtx recs[5];
	struct gt_ring *ring;
	struct stopper t = {{{0}}, 2};
	unsigned i;

	ck_assert_int_eq(gt_ring_create(GT_RING_MIN_BYTES, 1, &ring), 0);
	for (i = 0; i < 5; i++)
		make_rec(&recs[i], 0, i);
	ck_assert_int_eq(gt_ring_write_batch(ring, recs, sizeof(recs[0]), 5, 0), 0);
	ck_assert_int_eq(write_rec(ring, 0, 5, 0), 0);
	ck_assert_int_eq(gt_ring_consume(ring, stop_after, &t, 0, false), -ECANCELED);
	ck_assert_uint_eq(t.s.count[0], 2);
	t.stop_at = 4; /* stops again inside the rest */
	ck_assert_int_eq(gt_ring_consume(ring, stop_after, &t, 0, false), -ECANCELED);
	ck_assert_uint_eq(t.s.count[0], 4);
	t.stop_at = 0;
	ck_assert_int_eq(gt_ring_consume(ring, stop_after, &t, 0, false), 2);
	ck_assert_uint_eq(t.s.count[0], 6);
	ck_assert_uint_eq(t.s.bad, 0);
	ck_assert_int_eq(gt_ring_consume(ring, stop_after, &t, 0, false), 0);
	gt_ring_free(ring);
}
END_TEST

/* Records too large for two to fit half a 4 KiB ring go one slot each: three strings of
 * 1,096 bytes in one call, all delivered in order. */
static int count_strings(void *ctx, const struct gt_rec_hdr *rec)
{
	uint32_t *next = ctx;
	const struct gt_rec_string *str = (const struct gt_rec_string *)rec;

	if (rec->type == GT_REC_STRING && rec->size == 1096 && str->id == *next)
		(*next)++;
	return 0;
}

START_TEST(test_batch_large_records)
{
	static _Alignas(8) uint8_t recs[3][1096];
	struct gt_ring *ring;
	uint32_t next = 1, i;

	ck_assert_int_eq(gt_ring_create(GT_RING_MIN_BYTES, 1, &ring), 0);
	for (i = 0; i < 3; i++) {
		struct gt_rec_string *str = (struct gt_rec_string *)(void *)recs[i];

		memset(recs[i], 'x', sizeof(recs[i]));
		str->hdr.type = GT_REC_STRING;
		str->hdr.size = 1096;
		str->hdr.pid = 1;
		str->id = i + 1;
		str->len = (uint32_t)(1096 - sizeof(*str));
	}
	ck_assert_int_eq(gt_ring_write_batch(ring, recs, sizeof(recs[0]), 3, 0), 0);
	ck_assert_uint_eq(gt_ring_used_bytes(ring), 3 * (8 + 1096));
	ck_assert_int_eq(gt_ring_consume(ring, count_strings, &next, 0, false), 3);
	ck_assert_uint_eq(next, 4);
	gt_ring_free(ring);
}
END_TEST

/* A packed slot whose third record does not validate (another type, or a size that runs past
 * the slot): the two before it are delivered, the rest of the slot is counted corrupt once,
 * and the next slot is read as usual. */
START_TEST(test_batch_corrupt)
{
	struct gt_rec_nvtx recs[5];
	struct gt_ring *ring;
	struct gt_ring_stats st;
	struct seen s = {0};
	unsigned i, bad;

	ck_assert_int_eq(gt_ring_create(GT_RING_MIN_BYTES, 1, &ring), 0);
	for (bad = 0; bad < 2; bad++) {
		for (i = 0; i < 5; i++)
			make_rec(&recs[i], 0, bad * 7 + i);
		if (bad == 0)
			recs[2].hdr.type = GT_REC_KERNEL; /* the word says NVTX */
		else
			recs[2].hdr.size = 4 * sizeof(recs[0]); /* past the slot's end */
		ck_assert_int_eq(gt_ring_write_batch(ring, recs, sizeof(recs[0]), 5, 0), 0);
		for (i = 0; i < 2; i++)
			make_rec(&recs[i], 0, bad * 7 + 5 + i);
		ck_assert_int_eq(gt_ring_write_batch(ring, recs, sizeof(recs[0]), 2, 0), 0);
		/* 0, 1, then 5, 6: the checker expects sequence numbers in order */
		s.next[0] = bad * 7;
		ck_assert_int_eq(gt_ring_consume(ring, check_rec, &s, 0, false), 4);
		ck_assert_uint_eq(s.bad, 2 * bad + 2); /* 5 arrives where 2 was expected */
		gt_ring_stats(ring, &st);
		ck_assert_uint_eq(st.corrupt, bad + 1);
		ck_assert_uint_eq(st.corrupt_bytes, (bad + 1) * 3 * sizeof(recs[0]));
		ck_assert_uint_eq(st.consumed, (bad + 1) * 4);
	}
	gt_ring_free(ring);
}
END_TEST

struct batch_arg {
	struct gt_ring *ring;
	uint32_t id;
	unsigned batches;
};

static void *batch_producer(void *p)
{
	struct batch_arg *a = p;
	struct gt_rec_nvtx recs[7];
	uint64_t seq = 0;

	for (unsigned b = 0; b < a->batches; b++) {
		for (unsigned i = 0; i < 7; i++)
			make_rec(&recs[i], a->id, seq++);
		if (gt_ring_write_batch(a->ring, recs, sizeof(recs[0]), 7, 0) < 0)
			abort(); /* the ring is large enough: a drop is a bug */
	}
	return NULL;
}

/* 4 threads x 3000 batches of 7, the consumer running: every record once, in order per
 * producer, with single writes from this thread in between. */
START_TEST(test_batch_threads)
{
	enum {
		N = 4,
		B = 3000
	};
	struct gt_ring *ring;
	struct batch_arg a[N];
	pthread_t th[N];
	struct seen s = {0};
	int i;

	ck_assert_int_eq(gt_ring_create(8u << 20, 1, &ring), 0);
	for (i = 0; i < N; i++) {
		a[i] = (struct batch_arg){ring, (uint32_t)i, B};
		ck_assert_int_eq(pthread_create(&th[i], NULL, batch_producer, &a[i]), 0);
	}
	for (uint64_t k = 0; k < 1000; k++) {
		ck_assert_int_eq(write_rec(ring, N, k, 0), 0);
		ck_assert_int_ge(gt_ring_consume(ring, check_rec, &s, 0, false), 0);
	}
	for (i = 0; i < N; i++)
		pthread_join(th[i], NULL);
	ck_assert_int_ge(gt_ring_consume(ring, check_rec, &s, 0, false), 0);
	ck_assert_uint_eq(s.bad, 0);
	for (i = 0; i < N; i++)
		ck_assert_uint_eq(s.count[i], (uint64_t)B * 7);
	ck_assert_uint_eq(s.count[N], 1000);
	ck_assert_uint_eq(gt_ring_header(ring)->dropped[GT_REC_NVTX], 0);
	ck_assert_uint_eq(gt_ring_used_bytes(ring), 0);
	gt_ring_free(ring);
}
END_TEST

static Suite *ring_suite(void)
{
	Suite *s = suite_create("ring");
	TCase *tc = tcase_create("ring");

	/* a limit for a hang only: 1000 forks under AddressSanitizer on a loaded 2-core machine
	 * took longer than 60 s */
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_create_attach);
	tcase_add_test(tc, test_wrap_variable_sizes);
	tcase_add_test(tc, test_batch);
	tcase_add_test(tc, test_batch_corrupt);
	tcase_add_test(tc, test_batch_callback_stops);
	tcase_add_test(tc, test_batch_large_records);
	tcase_add_test(tc, test_batch_threads);
	tcase_add_test(tc, test_threads_no_loss);
	tcase_add_test(tc, test_threads_exact_drops);
	tcase_add_test(tc, test_wait_bounded);
	tcase_add_test(tc, test_wakeup_once_per_crossing);
	tcase_add_test(tc, test_torn_in_process);
	tcase_add_test(tc, test_torn_packed);
	tcase_add_test(tc, test_corrupt_record);
	tcase_add_test(tc, test_corrupt_header_attach);
	tcase_add_test(tc, test_forked_producers);
	tcase_add_test(tc, test_sigkill_producers);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(ring_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
