/* Lock-free multi-producer, single-consumer ring of variable-size records in a sealed memfd:
 * creating it (the traced application), attaching to it (the CLI) and freeing it. The producer
 * half is ring-produce.c (inside the application), the consumer half ring-consume.c (the CLI,
 * or the standalone drainer thread). Layout and memory ordering: docs/ring.md. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ring-int.h"

_Static_assert(sizeof(struct gt_ring_header) <= DATA_OFFSET, "ring header fits in a page");
_Static_assert(offsetof(struct gt_ring_header, head) % GT_CACHELINE == 0, "head on its line");
_Static_assert(offsetof(struct gt_ring_header, tail) % GT_CACHELINE == 0, "tail on its line");
_Static_assert(offsetof(struct gt_ring_header, tail) - offsetof(struct gt_ring_header, head) >=
                       GT_CACHELINE,
               "producer and consumer indices on separate cache lines");
_Static_assert(offsetof(struct gt_ring_header, dropped) % GT_CACHELINE == 0,
               "loss counters on their own line");
_Static_assert(GT_REC_MAX <= W_PACKED, "record types fit the commit word");

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
