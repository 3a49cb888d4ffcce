/* Metadata collector: DEVICE records (from the driver's device attributes when a context is
 * created), CONTEXT and STREAM records (CUPTI activity), THREAD names of threads seen only in
 * CUPTI's records, and THREAD records again when a known thread's name changes. Runs inside
 * the traced application: the resource callback on the thread creating a context, the
 * activity parsing on CUPTI's buffer-completion thread, the rescan on the flush thread. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cupti.h>

#include "collector.h"
#include "cupti-glue.h"
#include "cuptilib.h"
#include "emit.h"
#include "hash.h"

#define GT_MAX_DEVICES    64
#define GT_MAX_CONTEXTS   1024
#define GT_SEEN_TIDS      4096 /* power of two */
#define GT_RESCAN_PERIODS 5u   /* flush periods between two reads of the known threads' names */

static _Atomic uint32_t context_device[GT_MAX_CONTEXTS]; /* device id + 1; 0 unknown */
static _Atomic uint8_t device_done[GT_MAX_DEVICES];
static _Atomic uint32_t seen_tids[GT_SEEN_TIDS];
/* Per seen_tids slot: a hash of the name last recorded for the thread (name_hash), NAME_UNSET
 * until the slot's claimer stores it, or NAME_GONE once the thread was found gone (the slot
 * may then be claimed again). Claimers write only UNSET and GONE slots, the rescan only the
 * others. */
#define NAME_UNSET 0u
#define NAME_GONE  1u
static _Atomic uint64_t seen_names[GT_SEEN_TIDS];

uint32_t gt_meta_context_device(uint32_t context_id)
{
	uint32_t d = context_id < GT_MAX_CONTEXTS ? atomic_load(&context_device[context_id]) : 0;

	return d ? d - 1 : 0;
}

static void remember_context(uint32_t context_id, uint32_t device_id)
{
	if (context_id < GT_MAX_CONTEXTS)
		atomic_store(&context_device[context_id], device_id + 1);
}

static int attr(CUdevice dev, CUdevice_attribute a)
{
	int v = 0;

	if (gt_cuda.get_attribute && gt_cuda.get_attribute(&v, a, dev) != CUDA_SUCCESS)
		v = 0;
	return v;
}

/* Once per device, when its first context appears. Application thread, inside cuCtxCreate or
 * the runtime's primary-context set-up. */
static void emit_device(uint32_t device_id)
{
	struct gt_rec_device r = {0};
	char name[256] = {0};
	size_t mem = 0;
	CUuuid uuid;
	CUdevice dev;

	if (device_id >= GT_MAX_DEVICES || atomic_exchange(&device_done[device_id], 1))
		return;
	if (!gt_cuda.device_get || gt_cuda.device_get(&dev, (int)device_id) != CUDA_SUCCESS)
		return;
	gt_hdr(&r.hdr, GT_REC_DEVICE, sizeof(r));
	r.device_id = device_id;
	if (gt_cuda.get_name && gt_cuda.get_name(name, sizeof(name) - 1, dev) == CUDA_SUCCESS)
		r.name_id = gt_intern(name);
	if (gt_cuda.total_mem && gt_cuda.total_mem(&mem, dev) == CUDA_SUCCESS)
		r.global_mem_bytes = mem;
	if (gt_cuda.get_uuid && gt_cuda.get_uuid(&uuid, dev) == CUDA_SUCCESS)
		memcpy(r.uuid, uuid.bytes, sizeof(r.uuid));
	r.sm_count = (uint32_t)attr(dev, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
	r.cc_major = (uint32_t)attr(dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
	r.cc_minor = (uint32_t)attr(dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
	r.max_threads_per_block = (uint32_t)attr(dev, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
	r.max_shared_mem_per_block =
	        (uint32_t)attr(dev, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK);
	r.mem_clock_khz = (uint32_t)attr(dev, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE);
	r.mem_bus_width = (uint32_t)attr(dev, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH);
	r.pci_bus_id = (uint32_t)attr(dev, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID);
	r.clock_khz = (uint32_t)attr(dev, CU_DEVICE_ATTRIBUTE_CLOCK_RATE);
	gt_emit_nowait(&r.hdr);
}

/* Resource callbacks: a context was created. Application thread, guard held. */
static void meta_callback(unsigned domain, unsigned cbid, const void *data)
{
	const CUpti_ResourceData *rd = data;
	uint32_t ctx_id = 0, dev_id = 0;

	(void)domain;
	if (cbid != CUPTI_CBID_RESOURCE_CONTEXT_CREATED || !rd->context)
		return;
	if (gt_cupti.cuptiGetDeviceId(rd->context, &dev_id) != CUPTI_SUCCESS)
		return;
	if (gt_cupti.cuptiGetContextId(rd->context, &ctx_id) == CUPTI_SUCCESS)
		remember_context(ctx_id, dev_id);
	emit_device(dev_id);
}

enum comm_result {
	COMM_OK,     /* name read */
	COMM_FAILED, /* not readable now (no file descriptor, an empty read): try again later */
	COMM_GONE,   /* the thread has exited */
};

/* The thread's name as the kernel has it; "" unless COMM_OK. */
static enum comm_result read_comm(uint32_t tid, char *name, size_t bytes)
{
	char path[64];
	ssize_t n;
	int fd;

	name[0] = '\0';
	snprintf(path, sizeof(path), "/proc/self/task/%u/comm", tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT || errno == ESRCH ? COMM_GONE : COMM_FAILED;
	n = read(fd, name, bytes - 1);
	close(fd);
	if (n <= 0) {
		name[0] = '\0';
		return COMM_FAILED;
	}
	name[n] = '\0';
	name[strcspn(name, "\n")] = '\0';
	return COMM_OK;
}

/* FNV-1a, never NAME_UNSET or NAME_GONE */
static uint64_t name_hash(const char *name)
{
	uint64_t h = gt_hash_fnv1a(GT_HASH_FNV_OFFSET, name, strlen(name));

	return h < 2 ? h + 2 : h;
}

/* Slot g, whose thread is gone, for tid (the caller then stores its name's hash). */
static bool take_gone(uint32_t g, uint32_t tid)
{
	uint64_t gone = NAME_GONE;

	if (!atomic_compare_exchange_strong(&seen_names[g], &gone, NAME_UNSET))
		return false;
	atomic_store(&seen_tids[g], tid);
	return true;
}

/*
 * The seen_tids slot this call claims for tid, or -1 when tid is known already or the table
 * is full. A new tid takes the first slot on its probe path whose thread is gone, else a free
 * one; a tid whose own slot was marked gone (the id was reused) takes that slot back. Slots
 * are never emptied, so a probe path ends at the first free slot. Lock-free: any thread,
 * signal handlers included. The claimer then stores the name's hash, last (the rescan reads
 * seen_names before seen_tids).
 */
static int claim_tid(uint32_t tid)
{
	uint32_t h = (tid * 2654435761u) & (GT_SEEN_TIDS - 1);
	int gone = -1;

	for (unsigned probe = 0; probe < GT_SEEN_TIDS; probe++, h = (h + 1) & (GT_SEEN_TIDS - 1)) {
		uint32_t cur = atomic_load(&seen_tids[h]);

		if (cur == tid)
			return take_gone(h, tid) ? (int)h : -1;
		if (cur == 0) {
			if (gone >= 0 && take_gone((uint32_t)gone, tid))
				return gone;
			if (atomic_compare_exchange_strong(&seen_tids[h], &cur, tid))
				return (int)h;
			if (cur == tid)
				return -1; /* another call claimed tid first */
			continue;          /* another tid took the slot: probe on */
		}
		if (gone < 0 && atomic_load(&seen_names[h]) == NAME_GONE)
			gone = (int)h;
	}
	return gone >= 0 && take_gone((uint32_t)gone, tid) ? gone : -1;
}

/* A THREAD record, written by `emit` (gt_emit_wait or gt_emit_nowait, as the caller's
 * thread allows). */
static void emit_thread(uint32_t tid, const char *name, void (*emit)(struct gt_rec_hdr *))
{
	struct gt_rec_thread r;

	gt_hdr(&r.hdr, GT_REC_THREAD, sizeof(r));
	r.tid = tid;
	r.name_id = gt_intern(name);
	if (r.name_id)
		emit(&r.hdr);
}

void gt_meta_thread_seen(uint32_t tid)
{
	char name[64];
	enum comm_result res;
	int slot;

	if (!tid || (slot = claim_tid(tid)) < 0)
		return;
	res = read_comm(tid, name, sizeof(name));
	/* a name not read now is recorded by a later rescan, which finds it changed from "" */
	atomic_store(&seen_names[slot], res == COMM_GONE ? NAME_GONE : name_hash(name));
	if (name[0])
		emit_thread(tid, name, gt_emit_wait);
}

void gt_meta_thread_named(uint32_t tid, const char *name)
{
	int slot = tid ? claim_tid(tid) : -1;

	if (name[0])
		emit_thread(tid, name, gt_emit_nowait);
	if (slot >= 0)
		atomic_store(&seen_names[slot], name_hash(name));
}

/* Write a THREAD record for every known thread whose name changed since it was recorded.
 * One caller at a time (the flush thread, then the final flush). */
static void rescan_threads(void)
{
	/* one rescan at a time: the final flush's could meet a flush thread that did not stop */
	static atomic_flag busy = ATOMIC_FLAG_INIT;
	char name[64];

	if (atomic_flag_test_and_set(&busy))
		return;
	for (unsigned i = 0; i < GT_SEEN_TIDS; i++) {
		/* the hash first: a claimer stores it after the tid (see claim_tid) */
		uint64_t was = atomic_load(&seen_names[i]), now;
		uint32_t tid = atomic_load(&seen_tids[i]);
		enum comm_result res;

		if (!tid || was == NAME_UNSET || was == NAME_GONE)
			continue;
		res = read_comm(tid, name, sizeof(name));
		if (res == COMM_GONE)
			atomic_store(&seen_names[i], NAME_GONE);
		if (res != COMM_OK || (now = name_hash(name)) == was)
			continue;
		atomic_store(&seen_names[i], now);
		if (name[0])
			emit_thread(tid, name, gt_emit_nowait);
	}
	atomic_flag_clear(&busy);
}

/* Threads renamed since they were recorded: every fifth period, and at the end. */
static void meta_flush(enum gt_flush_why why)
{
	static unsigned periods; /* the flush thread's own */

	if (why == GT_FLUSH_LAST || ++periods % GT_RESCAN_PERIODS == 0)
		rescan_threads();
}

static void meta_activity(const void *rec)
{
	const CUpti_Activity *a = rec;

	if (a->kind == CUPTI_ACTIVITY_KIND_CONTEXT) {
		const CUpti_ActivityContext3 *c = rec;
		struct gt_rec_context r = {0};
		struct gt_rec_stream s = {0};

		remember_context(c->contextId, c->deviceId);
		gt_hdr(&r.hdr, GT_REC_CONTEXT, sizeof(r));
		r.context_id = c->contextId;
		r.device_id = c->deviceId;
		gt_emit_wait(&r.hdr);
		/* the context's NULL stream gets no STREAM activity record of its own */
		gt_hdr(&s.hdr, GT_REC_STREAM, sizeof(s));
		s.stream_id = c->nullStreamId;
		s.context_id = c->contextId;
		s.device_id = c->deviceId;
		s.flags = GT_STREAM_DEFAULT;
		gt_emit_wait(&s.hdr);
	} else if (a->kind == CUPTI_ACTIVITY_KIND_STREAM) {
		const CUpti_ActivityStream *st = rec;
		struct gt_rec_stream s = {0};

		gt_hdr(&s.hdr, GT_REC_STREAM, sizeof(s));
		s.stream_id = st->streamId;
		s.context_id = st->contextId;
		s.device_id = gt_meta_context_device(st->contextId);
		s.priority = (int32_t)st->priority;
		if (st->flag == CUPTI_ACTIVITY_STREAM_CREATE_FLAG_NULL)
			s.flags = GT_STREAM_DEFAULT;
		gt_emit_wait(&s.hdr);
	}
}

/* Resource callbacks (context creation) for DEVICE records. */
static int meta_enable(const struct gt_envconf *cfg)
{
	(void)cfg;
	return gt_cupti_enable_domain(CUPTI_CB_DOMAIN_RESOURCE, true);
}

static const int meta_kinds[] = {CUPTI_ACTIVITY_KIND_CONTEXT, CUPTI_ACTIVITY_KIND_STREAM, 0};

const struct gt_collector gt_collector_meta = {
        .name = "meta",
        .trace_bit = 0, /* always on */
        .kinds = meta_kinds,
        .enable = meta_enable,
        .required = "cuptiEnableDomain(RESOURCE)",
        .activity = meta_activity,
        .callback_domains = 1u << CUPTI_CB_DOMAIN_RESOURCE,
        .callback = meta_callback,
        .flush = meta_flush,
};
