/* Ring benchmark: producer threads in this process, the consumer in a forked process, 64-byte
 * records. Prints records/s end to end and the producer's cost per record (p50, p99 over
 * batches). Run by hand: bench-ring [producers] [records per producer] [ring MiB]. */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clock.h"
#include "ring.h"

#define BATCH         256u /* records per timed batch */
#define MAX_PRODUCERS 8

/* Shared with the consumer process. */
struct shared {
	_Atomic uint32_t producers_done;
	_Atomic uint64_t consumed;
	_Atomic uint64_t done_ns; /* when the consumer read the last record */
	_Atomic uint64_t bad;
};

struct producer {
	pthread_t th;
	struct gt_ring *ring;
	uint32_t id;
	uint64_t n;
	uint64_t ok;
	uint64_t *batch_ns; /* n / BATCH entries */
};

static void *produce(void *p)
{
	struct producer *a = p;
	uint64_t b, i, seq = 0;

	for (b = 0; b < a->n / BATCH; b++) {
		uint64_t t0 = gt_now_ns();

		for (i = 0; i < BATCH; i++) {
			struct gt_rec_nvtx *r =
			        gt_ring_reserve(a->ring, GT_REC_NVTX, sizeof(*r), 0);

			if (!r)
				continue;
			r->hdr.type = GT_REC_NVTX;
			r->hdr.size = sizeof(*r);
			r->hdr.pid = 1;
			r->start_ns = seq;
			r->end_ns = seq + 1;
			r->range_id = seq++;
			r->tid = a->id;
			r->end_tid = a->id;
			r->domain_id = 0;
			r->message_id = 7;
			r->category = 0;
			r->color = 0;
			r->kind = GT_NVTX_PUSH_POP;
			r->depth = 0;
			gt_ring_commit(a->ring, r);
			a->ok++;
		}
		a->batch_ns[b] = gt_now_ns() - t0;
	}
	return NULL;
}

struct cstate {
	uint64_t next[MAX_PRODUCERS];
	uint64_t bad;
};

static int count_rec(void *ctx, const struct gt_rec_hdr *rec)
{
	struct cstate *c = ctx;
	const struct gt_rec_nvtx *r = (const struct gt_rec_nvtx *)rec;

	/* records dropped by a full ring leave gaps: only the order is checked */
	if (r->tid >= MAX_PRODUCERS || r->range_id < c->next[r->tid])
		c->bad++;
	else
		c->next[r->tid] = r->range_id + 1;
	return 0;
}

static void consumer(struct gt_ring *ring, int efd, struct shared *sh)
{
	struct cstate c = {{0}, 0};
	uint64_t total = 0, v;

	for (;;) {
		long n = gt_ring_consume(ring, count_rec, &c, 0, false);

		if (n < 0)
			break;
		total += (uint64_t)n;
		if (n > 0)
			continue;
		if (atomic_load(&sh->producers_done) && gt_ring_used_bytes(ring) == 0)
			break;
		/* Idle: sleep until a producer crosses half or 1 ms passes, like the drainer. */
		if (gt_ring_sleep_begin(ring)) {
			struct pollfd pfd = {.fd = efd, .events = POLLIN};

			if (poll(&pfd, 1, 1) > 0 && read(efd, &v, sizeof(v)) < 0)
				break;
		}
		gt_ring_sleep_end(ring);
	}
	atomic_store(&sh->consumed, total);
	atomic_store(&sh->bad, c.bad);
	atomic_store(&sh->done_ns, gt_now_ns());
}

/* The consumer's own cost: fill the ring (nobody reading), then time one drain of it. */
static void consumer_cost(size_t bytes)
{
	struct cstate c = {{0}, 0};
	struct producer a = {.id = 7};
	struct gt_ring *ring;
	uint64_t best = UINT64_MAX, t0, k, cap;
	int round;

	if (gt_ring_create(bytes, 1, &ring) < 0)
		return;
	a.ring = ring;
	cap = gt_ring_header(ring)->data_bytes / 72 - 1;
	a.n = cap - cap % BATCH;
	a.batch_ns = calloc(a.n / BATCH, sizeof(uint64_t));
	for (round = 0; round < 5; round++) {
		a.ok = 0;
		c.next[7] = 0;
		produce(&a);
		t0 = gt_now_ns();
		k = (uint64_t)gt_ring_consume(ring, count_rec, &c, 0, false);
		t0 = gt_now_ns() - t0;
		if (k == a.ok && t0 < best)
			best = t0;
	}
	printf("  consumer ns/record (validate, copy, callback; same process, best of 5): %.1f\n",
	       (double)best / (double)a.n);
	free(a.batch_ns);
	gt_ring_free(ring);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	unsigned np = argc > 1 ? (unsigned)atoi(argv[1]) : 1;
	uint64_t n = argc > 2 ? strtoull(argv[2], NULL, 0) : 20000000ull;
	size_t ring_mib = argc > 3 ? (size_t)atoi(argv[3]) : 32;
	struct producer prod[MAX_PRODUCERS];
	struct gt_ring *ring;
	struct shared *sh;
	uint64_t *all, nb, t0, t1, ok = 0, dropped;
	unsigned i;
	int efd, status, r;
	pid_t pid;

	if (np < 1 || np > MAX_PRODUCERS || n < BATCH) {
		fprintf(stderr, "usage: bench-ring [producers 1..%d] [records per producer]\n",
		        MAX_PRODUCERS);
		return 64;
	}
	n -= n % BATCH;
	r = gt_ring_create(ring_mib << 20, 1, &ring);
	if (r < 0) {
		fprintf(stderr, "bench-ring: cannot create the ring: %s\n", strerror(-r));
		return 1;
	}
	efd = eventfd(0, EFD_CLOEXEC);
	gt_ring_set_wakeup_fd(ring, efd);
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (efd < 0 || sh == MAP_FAILED) {
		perror("bench-ring");
		return 1;
	}
	pid = fork();
	if (pid < 0) {
		perror("fork");
		return 1;
	}
	if (pid == 0) {
		consumer(ring, efd, sh);
		_exit(0);
	}

	nb = n / BATCH;
	t0 = gt_now_ns();
	for (i = 0; i < np; i++) {
		prod[i] = (struct producer){.ring = ring, .id = i, .n = n};
		prod[i].batch_ns = calloc(nb, sizeof(uint64_t));
		pthread_create(&prod[i].th, NULL, produce, &prod[i]);
	}
	for (i = 0; i < np; i++) {
		pthread_join(prod[i].th, NULL);
		ok += prod[i].ok;
	}
	t1 = gt_now_ns();
	atomic_store(&sh->producers_done, 1);
	gt_ring_kick(ring);
	waitpid(pid, &status, 0);

	all = calloc(nb * np, sizeof(uint64_t));
	for (i = 0; i < np; i++)
		memcpy(all + i * nb, prod[i].batch_ns, nb * sizeof(uint64_t));
	qsort(all, nb * np, sizeof(uint64_t), cmp_u64);
	dropped = gt_ring_header(ring)->dropped[GT_REC_NVTX];

	printf("producers %u, 64-byte records, ring %zu MiB, consumer in another process\n", np,
	       ring_mib);
	printf("  offered      %llu records in %.3f s: %.1f M records/s (producer side)\n",
	       (unsigned long long)(n * np), (double)(t1 - t0) / 1e9,
	       (double)(n * np) / ((double)(t1 - t0) / 1e3));
	printf("  consumed     %llu records by %.3f s: %.1f M records/s end to end\n",
	       (unsigned long long)atomic_load(&sh->consumed),
	       (double)(atomic_load(&sh->done_ns) - t0) / 1e9,
	       (double)atomic_load(&sh->consumed) /
	               ((double)(atomic_load(&sh->done_ns) - t0) / 1e3));
	printf("  dropped      %llu (ring full), order errors %llu, wake-ups %llu\n",
	       (unsigned long long)dropped, (unsigned long long)atomic_load(&sh->bad),
	       (unsigned long long)gt_ring_header(ring)->wakeups);
	printf("  producer ns/record (reserve+write+commit, batches of %u): p50 %.1f  p99 %.1f\n",
	       BATCH, (double)all[nb * np / 2] / BATCH, (double)all[nb * np * 99 / 100] / BATCH);
	if (ok != atomic_load(&sh->consumed) || ok + dropped != n * np)
		printf("  MISMATCH: accepted %llu\n", (unsigned long long)ok);
	consumer_cost(ring_mib << 20);
	for (i = 0; i < np; i++)
		free(prod[i].batch_ns);
	free(all);
	gt_ring_free(ring);
	return 0;
}
