/* Test and benchmark helper for gputrace run --live: a traced process without a GPU that
 * registers with the session as the injection library does (gt_client_open) and writes the
 * records a GPU program would: a DEVICE, kernels of 40 names, copies, memsets, allocations
 * and API calls, one of which fails.
 *   live-producer DIR      every millisecond or so, one step: kernel<0> .. kernel<39>
 *                          ("_Z6kernelILiNEEvPfi", N+1 us each, back to back), kernel<0> again
 *                          on a second stream under the first, a 1 MiB copy to the device and
 *                          a 256 KiB one back, a 4 KiB memset, a 64 MiB allocation (the one of
 *                          the step before freed), a cudaLaunchKernel per kernel; step 100 also
 *                          makes a cudaMalloc that fails (2). Until DIR/pause exists; then
 *                          writes the number of steps to DIR/paused and runs on until DIR/stop.
 *   live-producer bench N DIR
 *                          N kernels (on two streams, in turn by 64), N cudaLaunchKernel
 *                          calls and N/4 NVTX ranges ("step" around "forward"), in batches
 *                          of 64 kernels, as fast as the drain takes them (never more than
 *                          8 MiB in the ring: nothing is dropped);
 *                          once the drain has taken the last, writes DIR/drained and waits for
 *                          DIR/stop: the CLI's work per record, for bench/live-cpu.sh.
 * Exits 100 when it cannot reach the session. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "client.h"
#include "clock.h"

#define NAMES      40
#define BATCH      64
#define RING_LIMIT (8u << 20) /* bytes in the ring before the producer waits */

static struct gt_client *client;
static struct gt_ring *ring;
static uint32_t kernel_name[NAMES], launch_name, malloc_name;
static uint32_t correlation;

static void sleep_us(long us)
{
	struct timespec ts = {us / 1000000, (us % 1000000) * 1000};

	nanosleep(&ts, NULL);
}

static bool exists(const char *dir, const char *name)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return access(path, F_OK) == 0;
}

/* Lossless: wait for the drain instead of filling the ring. */
static void room(void)
{
	struct gt_ring_header *h = gt_ring_header(ring);

	while (atomic_load(&h->head) - atomic_load(&h->tail) > RING_LIMIT) {
		gt_client_kick(client);
		sleep_us(50);
	}
}

static void hdr(struct gt_rec_hdr *h, unsigned type, size_t size)
{
	h->type = (uint16_t)type;
	h->size = (uint16_t)size;
	h->pid = (uint32_t)getpid();
}

static struct gt_rec_kernel kernel(unsigned i, uint32_t stream, uint64_t start, uint64_t dur)
{
	struct gt_rec_kernel k = {0};

	hdr(&k.hdr, GT_REC_KERNEL, sizeof(k));
	k.span.start_ns = start;
	k.span.end_ns = start + dur;
	k.span.correlation_id = ++correlation;
	k.span.stream_id = stream;
	k.name_id = kernel_name[i % NAMES];
	k.grid_x = k.block_x = 128;
	k.grid_y = k.grid_z = k.block_y = k.block_z = 1;
	return k;
}

static struct gt_rec_api api(uint32_t name, uint64_t start, int32_t rc)
{
	struct gt_rec_api a = {0};

	hdr(&a.hdr, GT_REC_API, sizeof(a));
	a.start_ns = start;
	a.end_ns = start + 2000;
	a.tid = (uint32_t)gettid();
	a.correlation_id = correlation;
	a.name_id = name;
	a.return_code = rc;
	a.domain = GT_API_RUNTIME;
	return a;
}

static void write_one(const struct gt_rec_hdr *h)
{
	gt_ring_write(ring, h, 0);
}

static void step(unsigned long n)
{
	struct gt_rec_kernel k[NAMES + 1];
	struct gt_rec_api a[NAMES];
	struct gt_rec_memcpy c = {0};
	struct gt_rec_memset s = {0};
	struct gt_rec_memory m = {0};
	uint64_t t = gt_now_ns(), cursor = t;

	for (unsigned i = 0; i < NAMES; i++) {
		a[i] = api(launch_name, cursor, 0);
		k[i] = kernel(i, 7, cursor, (i + 1) * 1000ull);
		cursor += (i + 1) * 1000ull;
	}
	k[NAMES] = kernel(0, 8, t, 1000); /* concurrent with kernel<0>: busy counts it once */
	gt_ring_write_batch(ring, k, sizeof(k[0]), NAMES + 1, 0);
	gt_ring_write_batch(ring, a, sizeof(a[0]), NAMES, 0);
	hdr(&c.hdr, GT_REC_MEMCPY, sizeof(c));
	c.span.start_ns = cursor;
	c.span.end_ns = cursor + 50000;
	c.bytes = 1u << 20;
	c.copy_kind = GT_MEMCPY_HTOD;
	write_one(&c.hdr);
	c.span.start_ns += 60000;
	c.span.end_ns += 60000;
	c.bytes = 256u << 10;
	c.copy_kind = GT_MEMCPY_DTOH;
	write_one(&c.hdr);
	hdr(&s.hdr, GT_REC_MEMSET, sizeof(s));
	s.span.start_ns = cursor + 120000;
	s.span.end_ns = cursor + 121000;
	s.bytes = 4096;
	write_one(&s.hdr);
	hdr(&m.hdr, GT_REC_MEMORY, sizeof(m));
	m.ts_ns = cursor;
	m.mem_kind = GT_MEM_DEVICE;
	m.bytes = 64u << 20;
	if (n) {
		m.op = GT_MEMORY_FREE;
		m.address = 0x7f0000000000ull + (n - 1) * m.bytes;
		write_one(&m.hdr);
	}
	m.op = GT_MEMORY_ALLOC;
	m.address = 0x7f0000000000ull + n * m.bytes;
	write_one(&m.hdr);
	if (n == 100) {
		struct gt_rec_api f = api(malloc_name, cursor, 2); /* cudaErrorMemoryAllocation */

		write_one(&f.hdr);
	}
}

static int live(const char *dir)
{
	char path[4096], done[4096];
	unsigned long steps = 0;
	FILE *f;

	while (!exists(dir, "pause")) {
		room();
		step(steps++);
		sleep_us(1000);
	}
	snprintf(path, sizeof(path), "%s/paused.tmp", dir);
	snprintf(done, sizeof(done), "%s/paused", dir);
	f = fopen(path, "w");
	if (!f)
		return 2;
	fprintf(f, "%lu\n", steps);
	if (fclose(f) != 0 || rename(path, done) != 0)
		return 2;
	while (!exists(dir, "stop"))
		sleep_us(10000);
	return 0;
}

static struct gt_rec_nvtx range(uint32_t name, uint32_t depth, uint64_t start, uint64_t end)
{
	struct gt_rec_nvtx r = {0};

	hdr(&r.hdr, GT_REC_NVTX, sizeof(r));
	r.start_ns = start;
	r.end_ns = end;
	r.tid = r.end_tid = (uint32_t)gettid();
	r.message_id = name;
	r.depth = depth;
	r.kind = GT_NVTX_PUSH_POP;
	return r;
}

static int bench(unsigned long n, const char *dir)
{
	struct gt_rec_kernel k[BATCH];
	struct gt_rec_api a[BATCH];
	struct gt_rec_nvtx r[BATCH / 4];
	uint32_t step = gt_client_intern(client, "step", 4);
	uint32_t forward = gt_client_intern(client, "forward", 7);
	struct gt_ring_header *h = gt_ring_header(ring);
	char path[4096];
	FILE *f;

	uint64_t cursor = 0; /* a stream's kernels follow each other, as on a GPU */

	for (unsigned long done = 0; done < n; done += BATCH) {
		unsigned b = n - done < BATCH ? (unsigned)(n - done) : BATCH;
		uint64_t t = gt_now_ns() > cursor ? gt_now_ns() : cursor;

		room();
		for (unsigned i = 0; i < b; i++) {
			a[i] = api(launch_name, t + i * 3000ull, 0);
			k[i] = kernel((unsigned)(done + i), 7 + (unsigned)(done / BATCH % 2),
			              t + i * 3000ull, 2500);
		}
		cursor = t + b * 3000ull;
		for (unsigned i = 0; i + 1 < b / 4; i += 2) {
			r[i] = range(forward, 1, t + i * 12000ull, t + i * 12000ull + 5000);
			r[i + 1] = range(step, 0, t + i * 12000ull, t + (i + 2) * 12000ull);
		}
		gt_ring_write_batch(ring, a, sizeof(a[0]), b, 0);
		gt_ring_write_batch(ring, k, sizeof(k[0]), b, 0);
		if (b / 4 >= 2)
			gt_ring_write_batch(ring, r, sizeof(r[0]), b / 4 & ~1u, 0);
	}
	/* everything written was taken by the drain */
	while (atomic_load(&h->tail) != atomic_load(&h->head)) {
		gt_client_kick(client);
		sleep_us(1000);
	}
	snprintf(path, sizeof(path), "%s/drained", dir);
	f = fopen(path, "w");
	if (!f || fclose(f) != 0)
		return 2;
	while (!exists(dir, "stop"))
		sleep_us(10000);
	return 0;
}

int main(int argc, char **argv)
{
	struct gt_rec_device d = {0};
	const char *err = NULL;
	char name[64];
	int r;

	if (argc < 2) {
		fprintf(stderr, "usage: live-producer DIR | bench N DIR\n");
		return 2;
	}
	if (gt_client_open(NULL, &client, &err) < 0) {
		fprintf(stderr, "live-producer: %s\n", err);
		return 100;
	}
	ring = gt_client_ring(client);
	for (unsigned i = 0; i < NAMES; i++) {
		int len = snprintf(name, sizeof(name), "_Z6kernelILi%uEEvPfi", i);

		kernel_name[i] = gt_client_intern(client, name, (size_t)len);
	}
	launch_name = gt_client_intern(client, "cudaLaunchKernel", 16);
	malloc_name = gt_client_intern(client, "cudaMalloc", 10);
	hdr(&d.hdr, GT_REC_DEVICE, sizeof(d));
	memcpy(d.uuid, "live-producer-01", 16);
	d.name_id = gt_client_intern(client, "Synthetic GPU", 13);
	d.global_mem_bytes = 80ull << 30;
	d.sm_count = 132;
	d.cc_major = 9;
	write_one(&d.hdr);
	if (strcmp(argv[1], "bench") == 0 && argc > 3)
		r = bench(strtoul(argv[2], NULL, 10), argv[3]);
	else
		r = live(argv[1]);
	gt_client_set_exit_status(client, r);
	if (gt_client_close(client, NULL, NULL) < 0)
		return 101;
	return r;
}
