/* Check suite for exporters/live/live.c and live-show.c: the aggregates of `gputrace run --live`
 * fed synthetic records, with exact values (GPU busy as a union, rates, memory, top kernels in
 * each order, NVTX stacks and steps, API failures, processes, losses), the hand-over of
 * snapshots between two threads, and kernel names fitted to a width. Runs as a unit test
 * (suite live). */
#include <check.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "live.h"

#define PID 10u

static struct gt_live *mk(uint64_t start_ns)
{
	struct gt_live *l = NULL;

	ck_assert_int_eq(gt_live_new(start_ns, false, &l), 0);
	return l;
}

static void string(struct gt_live *l, uint32_t id, const char *s)
{
	gt_live_string(l, id, s, strlen(s));
}

static void device(struct gt_live *l, uint32_t pid, uint32_t dev, uint8_t uuid0, uint32_t name_id)
{
	struct gt_rec_device d = {0};

	d.hdr.type = GT_REC_DEVICE;
	d.hdr.size = sizeof(d);
	d.hdr.pid = pid;
	d.device_id = dev;
	d.uuid[0] = uuid0;
	d.name_id = name_id;
	d.global_mem_bytes = 1u << 20;
	gt_live_record(l, &d.hdr);
}

static void kernel(struct gt_live *l, uint32_t pid, uint32_t dev, uint32_t name_id, uint64_t start,
                   uint64_t end)
{
	struct gt_rec_kernel k = {0};

	k.hdr.type = GT_REC_KERNEL;
	k.hdr.size = sizeof(k);
	k.hdr.pid = pid;
	k.span.start_ns = start;
	k.span.end_ns = end;
	k.span.device_id = dev;
	k.name_id = name_id;
	gt_live_record(l, &k.hdr);
}

static void copy(struct gt_live *l, uint32_t kind, uint64_t bytes)
{
	struct gt_rec_memcpy m = {0};

	m.hdr.type = GT_REC_MEMCPY;
	m.hdr.size = sizeof(m);
	m.hdr.pid = PID;
	m.copy_kind = kind;
	m.bytes = bytes;
	gt_live_record(l, &m.hdr);
}

static void memory(struct gt_live *l, uint32_t op, uint64_t address, uint64_t bytes, uint32_t kind)
{
	struct gt_rec_memory m = {0};

	m.hdr.type = GT_REC_MEMORY;
	m.hdr.size = sizeof(m);
	m.hdr.pid = PID;
	m.op = op;
	m.address = address;
	m.bytes = bytes;
	m.mem_kind = kind;
	gt_live_record(l, &m.hdr);
}

static void range(struct gt_live *l, uint32_t tid, uint32_t msg, uint32_t depth, uint64_t start,
                  uint64_t end)
{
	struct gt_rec_nvtx n = {0};

	n.hdr.type = GT_REC_NVTX;
	n.hdr.size = sizeof(n);
	n.hdr.pid = PID;
	n.tid = n.end_tid = tid;
	n.message_id = msg;
	n.depth = depth;
	n.start_ns = start;
	n.end_ns = end;
	n.kind = GT_NVTX_PUSH_POP;
	gt_live_record(l, &n.hdr);
}

static const struct gt_live_snapshot *publish(struct gt_live *l, uint64_t now)
{
	gt_live_request(l);
	ck_assert_int_eq(gt_live_publish(l, now), 1);
	return gt_live_acquire(l);
}

static void gpu_metric(struct gt_live *l, uint32_t index, uint32_t name_id, uint32_t scale)
{
	struct gt_rec_gpu_metric m = {0};

	m.hdr.type = GT_REC_GPU_METRIC;
	m.hdr.size = sizeof(m);
	m.hdr.pid = PID;
	m.index = index;
	m.name_id = name_id;
	m.scale = scale;
	gt_live_record(l, &m.hdr);
}

/* GPU metrics: the latest sample's SMs Active and DRAM read + write; "-" before any. */
START_TEST(test_gpu_metrics)
{
	struct gt_live *l = mk(1000);
	struct gt_rec_gpu_sample sm = {0};
	const struct gt_live_snapshot *s;

	string(l, 3, "NVIDIA H200");
	string(l, 4, "SMs Active");
	string(l, 5, "DRAM Read Bandwidth");
	string(l, 6, "DRAM Write Bandwidth");
	string(l, 7, "Tensor Active");
	device(l, PID, 0, 0xAA, 3);
	gpu_metric(l, 0, 4, 1000);
	gpu_metric(l, 1, 7, 1000);
	gpu_metric(l, 2, 5, 1);
	gpu_metric(l, 3, 6, 1);
	s = publish(l, 2000);
	ck_assert_uint_eq(s->ngpus, 1);
	ck_assert(!s->gpus[0].metrics);
	sm.hdr.type = GT_REC_GPU_SAMPLE;
	sm.hdr.size = sizeof(sm);
	sm.hdr.pid = PID;
	sm.count = 4;
	sm.values[0] = 12500; /* 12.5 % */
	sm.values[1] = 99000;
	sm.values[2] = 3000000000ull;
	sm.values[3] = 1000000000ull;
	gt_live_record(l, &sm.hdr);
	sm.values[0] = 87250; /* the latest counts */
	gt_live_record(l, &sm.hdr);
	s = publish(l, 3000);
	ck_assert(s->gpus[0].metrics);
	ck_assert_double_eq(s->gpus[0].sm_active_pct, 87.25);
	ck_assert_double_eq(s->gpus[0].dram_bytes_per_s, 4e9);
	gt_live_free(l);
}
END_TEST

/* Busy is the union of kernel intervals over the wall time: overlapping kernels count once,
 * so two streams never make more than 100%. Kernels, copies by direction, memsets and
 * memory in use with its peak, per GPU. */
START_TEST(test_gpu)
{
	struct gt_live *l = mk(1000);
	struct gt_live_delta d = {0};
	const struct gt_live_snapshot *s;
	struct gt_rec_memset ms = {0};

	string(l, 3, "NVIDIA H200");
	device(l, PID, 0, 0xAA, 3);
	kernel(l, PID, 0, 1, 2000, 3000);
	kernel(l, PID, 0, 2, 2500, 3500); /* overlaps the first by 500 */
	kernel(l, PID, 0, 1, 5000, 5500);
	copy(l, GT_MEMCPY_HTOD, 4096);
	copy(l, GT_MEMCPY_HTOA, 4);
	copy(l, GT_MEMCPY_DTOH, 1000);
	copy(l, GT_MEMCPY_PTOP, 10);
	copy(l, GT_MEMCPY_HTOH, 7);
	ms.hdr.type = GT_REC_MEMSET;
	ms.hdr.size = sizeof(ms);
	ms.hdr.pid = PID;
	ms.bytes = 64;
	gt_live_record(l, &ms.hdr);
	memory(l, GT_MEMORY_ALLOC, 0xA, 100, GT_MEM_DEVICE);
	memory(l, GT_MEMORY_ALLOC, 0xB, 50, GT_MEM_DEVICE);
	memory(l, GT_MEMORY_FREE, 0xA, 100, GT_MEM_DEVICE);
	memory(l, GT_MEMORY_ALLOC, 0xC, 1000, GT_MEM_PINNED); /* host memory: no GPU's */

	s = publish(l, 11000);
	ck_assert_uint_eq(s->seq, 1);
	ck_assert_uint_eq(s->ngpus, 1);
	ck_assert_str_eq(s->gpus[0].name, "NVIDIA H200");
	ck_assert_uint_eq(s->gpus[0].uuid[0], 0xAA);
	ck_assert_uint_eq(s->gpus[0].mem_total_bytes, 1u << 20);
	ck_assert_uint_eq(s->gpus[0].kernels, 3);
	ck_assert_uint_eq(s->gpus[0].kernel_ns, 2500);
	ck_assert_uint_eq(s->gpus[0].busy_ns, 2000);
	ck_assert_uint_eq(s->gpus[0].copy_bytes[GT_LIVE_HTOD], 4100);
	ck_assert_uint_eq(s->gpus[0].copies[GT_LIVE_HTOD], 2);
	ck_assert_uint_eq(s->gpus[0].copy_bytes[GT_LIVE_DTOH], 1000);
	ck_assert_uint_eq(s->gpus[0].copy_bytes[GT_LIVE_DTOD], 0);
	ck_assert_uint_eq(s->gpus[0].copy_bytes[GT_LIVE_PTOP], 10);
	ck_assert_uint_eq(s->gpus[0].copy_bytes[GT_LIVE_COPY_OTHER], 7);
	ck_assert_uint_eq(s->gpus[0].memsets, 1);
	ck_assert_uint_eq(s->gpus[0].memset_bytes, 64);
	ck_assert_uint_eq(s->gpus[0].mem_bytes, 50);
	ck_assert_uint_eq(s->gpus[0].mem_peak_bytes, 150);
	ck_assert_int_eq(gt_live_delta_update(&d, s), 1);
	ck_assert_uint_eq(d.dt_ns, 10000);
	ck_assert_double_eq_tol(d.gpus[0].busy_pct, 20.0, 1e-9);
	ck_assert_double_eq_tol(d.gpus[0].kernels_per_s, 300000.0, 1e-6);
	ck_assert_double_eq_tol(d.gpus[0].copy_bytes_per_s[GT_LIVE_HTOD], 4100 * 1e5, 1e-3);
	ck_assert_double_eq_tol(d.gpus[0].memsets_per_s, 1e5, 1e-6);
	/* the same snapshot again: nothing changes */
	ck_assert_int_eq(gt_live_delta_update(&d, gt_live_acquire(l)), 0);

	/* the next interval: two fully concurrent kernels and one after them */
	kernel(l, PID, 0, 2, 12000, 16000);
	kernel(l, PID, 0, 2, 12000, 16000);
	kernel(l, PID, 0, 1, 20000, 21000);
	memory(l, GT_MEMORY_ALLOC, 0xD, 70, GT_MEM_DEVICE);
	memory(l, GT_MEMORY_FREE, 0xB, 50, GT_MEM_DEVICE);
	s = publish(l, 21000);
	ck_assert_uint_eq(s->gpus[0].busy_ns, 7000);
	ck_assert_uint_eq(s->gpus[0].mem_bytes, 70);
	ck_assert_uint_eq(s->gpus[0].mem_peak_bytes, 150); /* 120 at most since */
	ck_assert_int_eq(gt_live_delta_update(&d, s), 1);
	ck_assert_double_eq_tol(d.gpus[0].busy_pct, 50.0, 1e-9);
	ck_assert_double_eq_tol(d.gpus[0].kernels_per_s, 300000.0, 1e-6);
	ck_assert_double_eq_tol(d.gpus[0].copy_bytes_per_s[GT_LIVE_HTOD], 0.0, 1e-9);

	/* overlapping kernels covering the whole interval: 100%, not 200% */
	kernel(l, PID, 0, 1, 21000, 31000);
	kernel(l, PID, 0, 2, 21000, 31000);
	s = publish(l, 31000);
	ck_assert_int_eq(gt_live_delta_update(&d, s), 1);
	ck_assert_double_eq_tol(d.gpus[0].busy_pct, 100.0, 1e-9);

	/* out of order (streams delivered in turn): [31, 32] + [35, 41] us = 7 us of 10 */
	kernel(l, PID, 0, 1, 40000, 41000);
	kernel(l, PID, 0, 1, 31000, 32000);
	kernel(l, PID, 0, 1, 35000, 40500);
	s = publish(l, 41000);
	ck_assert_int_eq(gt_live_delta_update(&d, s), 1);
	ck_assert_uint_eq(s->gpus[0].busy_ns, 7000 + 10000 + 7000);
	ck_assert_double_eq_tol(d.gpus[0].busy_pct, 70.0, 1e-9);
	gt_live_delta_fini(&d);
	gt_live_free(l);
}
END_TEST

/* The catalog's GPUs: two processes on one GPU (same uuid) are one GPU; another uuid is
 * another. A device used before its DEVICE record is a GPU of its own until the record names
 * a known uuid: then it is merged into that one, which shows its activity. */
START_TEST(test_gpu_identity)
{
	struct gt_live *l = mk(0);
	const struct gt_live_snapshot *s;

	device(l, 1, 0, 0x11, 0);
	device(l, 2, 0, 0x11, 0);
	device(l, 2, 1, 0x22, 0);
	kernel(l, 1, 0, 5, 0, 10);
	kernel(l, 2, 0, 5, 0, 10);
	kernel(l, 2, 1, 5, 0, 10);
	kernel(l, 3, 0, 5, 0, 10); /* no DEVICE record yet: a GPU of its own */
	device(l, 3, 0, 0x22, 0);
	kernel(l, 3, 0, 5, 20, 30);
	s = publish(l, 100);
	ck_assert_uint_eq(s->ngpus, 3);
	ck_assert_uint_eq(s->gpus[0].uuid[0], 0x11);
	ck_assert_uint_eq(s->gpus[0].number, 0);
	ck_assert(!s->gpus[0].merged);
	ck_assert_uint_eq(s->gpus[0].kernels, 2);
	ck_assert_uint_eq(s->gpus[0].busy_ns, 10);
	ck_assert_uint_eq(s->gpus[1].uuid[0], 0x22);
	ck_assert_uint_eq(s->gpus[1].number, 1);
	ck_assert_uint_eq(s->gpus[1].pid, 2);
	ck_assert_uint_eq(s->gpus[1].device_id, 1);
	ck_assert(!s->gpus[1].merged);
	ck_assert_uint_eq(s->gpus[1].kernels, 3);
	ck_assert(s->gpus[2].merged);
	gt_live_free(l);
}
END_TEST

/* Top kernels: the last interval's order first, then the whole run's, in each key. */
START_TEST(test_kernel_order)
{
	struct gt_live *l = mk(0);
	struct gt_live_delta d = {0};
	const struct gt_live_snapshot *s;
	uint32_t order[3];

	string(l, 1, "a");
	string(l, 2, "b");
	string(l, 3, "c");
	for (int i = 0; i < 3; i++)
		kernel(l, PID, 0, 1, 0, 10); /* a: 3 x 10 = 30 */
	kernel(l, PID, 0, 2, 0, 100);        /* b: 1 x 100 */
	kernel(l, PID, 0, 3, 0, 20);         /* c: 2 x 20 = 40 */
	kernel(l, PID, 0, 3, 0, 20);
	s = publish(l, 1000);
	ck_assert_uint_eq(s->nkernels, 3);
	ck_assert_str_eq(s->kernels[0].name, "a");
	ck_assert_uint_eq(s->kernels[0].count, 3);
	ck_assert_uint_eq(s->kernels[0].total_ns, 30);
	ck_assert_int_eq(gt_live_delta_update(&d, s), 1);
	ck_assert_uint_eq(d.kernels[2].count, 2);
	ck_assert_uint_eq(d.kernels[2].ns, 40);
	gt_live_sort(s->kernels, d.kernels, s->nkernels, GT_LIVE_SORT_TIME, order);
	ck_assert_uint_eq(order[0], 1);
	ck_assert_uint_eq(order[1], 2);
	ck_assert_uint_eq(order[2], 0);
	gt_live_sort(s->kernels, d.kernels, s->nkernels, GT_LIVE_SORT_COUNT, order);
	ck_assert_uint_eq(order[0], 0);
	ck_assert_uint_eq(order[1], 2);
	ck_assert_uint_eq(order[2], 1);
	gt_live_sort(s->kernels, d.kernels, s->nkernels, GT_LIVE_SORT_MEAN, order);
	ck_assert_uint_eq(order[0], 1);
	ck_assert_uint_eq(order[1], 2);
	ck_assert_uint_eq(order[2], 0);

	/* next interval: only one short "a": it leads, the rest by their totals */
	kernel(l, PID, 0, 1, 0, 1);
	s = publish(l, 2000);
	ck_assert_int_eq(gt_live_delta_update(&d, s), 1);
	ck_assert_uint_eq(d.kernels[0].count, 1);
	ck_assert_uint_eq(d.kernels[0].ns, 1);
	ck_assert_uint_eq(d.kernels[1].count, 0);
	ck_assert_uint_eq(s->kernels[0].count, 4);
	ck_assert_uint_eq(s->kernels[0].total_ns, 31);
	gt_live_sort(s->kernels, d.kernels, s->nkernels, GT_LIVE_SORT_TIME, order);
	ck_assert_uint_eq(order[0], 0);
	ck_assert_uint_eq(order[1], 1);
	ck_assert_uint_eq(order[2], 2);
	/* without an interval: the totals alone */
	gt_live_sort(s->kernels, NULL, s->nkernels, GT_LIVE_SORT_TIME, order);
	ck_assert_uint_eq(order[0], 1);
	ck_assert_uint_eq(order[1], 2);
	ck_assert_uint_eq(order[2], 0);
	ck_assert_str_eq(gt_live_sort_name(GT_LIVE_SORT_MEAN), "mean");
	gt_live_delta_fini(&d);
	gt_live_free(l);
}
END_TEST

static void stack_is(const struct gt_live_thread *t, uint32_t depth, const char *a, const char *b)
{
	ck_assert_uint_eq(t->depth, depth);
	if (a)
		ck_assert_str_eq(t->stack[0], a);
	else
		ck_assert_ptr_null(t->stack[0]);
	if (depth > 1 && b)
		ck_assert_str_eq(t->stack[1], b);
	else if (depth > 1)
		ck_assert_ptr_null(t->stack[1]);
}

/* NVTX stacks from ranges that arrive as they end (innermost first), steps from outermost
 * ranges that differ in trailing digits, their rate, range totals, thread names. */
START_TEST(test_nvtx)
{
	struct gt_live *l = mk(0);
	struct gt_live_delta d = {0};
	const struct gt_live_snapshot *s;
	struct gt_rec_thread th = {0};

	string(l, 1, "ProfilerStep#1");
	string(l, 2, "forward");
	string(l, 3, "backward");
	string(l, 4, "ProfilerStep#2");
	string(l, 5, "ProfilerStep#3");
	string(l, 6, "eval");
	string(l, 7, "trainer");
	string(l, 8, "ProfilerStep#12");
	th.hdr.type = GT_REC_THREAD;
	th.hdr.size = sizeof(th);
	th.hdr.pid = PID;
	th.tid = 7;
	th.name_id = 7;
	gt_live_record(l, &th.hdr);
	th.name_id = 6; /* a later name (the collector's look at comm) does not replace it */
	gt_live_record(l, &th.hdr);

	range(l, 7, 2, 1, 110, 150);
	range(l, 7, 3, 1, 150, 190);
	range(l, 7, 1, 0, 100, 200);
	s = publish(l, 1000000000);
	ck_assert_uint_eq(s->nthreads, 1);
	ck_assert_str_eq(s->threads[0].name, "trainer");
	ck_assert_uint_eq(s->threads[0].tid, 7);
	stack_is(&s->threads[0], 2, "ProfilerStep#1", "backward");
	ck_assert_ptr_null(s->threads[0].step); /* one outermost range is no step yet */
	ck_assert_uint_eq(s->threads[0].steps, 0);
	ck_assert_int_eq(gt_live_delta_update(&d, s), 1);

	range(l, 7, 2, 1, 210, 250);
	s = publish(l, 1500000000);
	/* inside step 2: its name comes when it ends */
	stack_is(&s->threads[0], 2, NULL, "forward");

	range(l, 7, 3, 1, 250, 290);
	range(l, 7, 4, 0, 200, 300);
	range(l, 7, 2, 1, 310, 350);
	range(l, 7, 3, 1, 350, 390);
	range(l, 7, 5, 0, 300, 450);
	range(l, 7, 6, 0, 450, 460); /* another outermost name: not a step */
	s = publish(l, 2000000000);
	stack_is(&s->threads[0], 1, "eval", NULL);
	ck_assert_uint_eq(s->threads[0].steps, 3);
	ck_assert_uint_eq(s->threads[0].step_ns, 150);
	ck_assert_str_eq(s->threads[0].step, "ProfilerStep#3");
	ck_assert_uint_eq(s->threads[0].step_len, 13);
	ck_assert_int_eq(gt_live_delta_update(&d, s), 1);
	ck_assert_uint_eq(d.dt_ns, 1000000000);
	ck_assert_double_eq_tol(d.steps_per_s[0], 3.0, 1e-9);
	ck_assert_uint_eq(s->nvtx_ranges, 10);
	ck_assert_double_eq_tol(d.ranges_per_s, 7.0, 1e-9);
	/* ProfilerStep#1, #2 and #3 share one row, as PyTorch's own tables show them */
	ck_assert_uint_eq(s->nranges, 4);
	ck_assert_str_eq(s->ranges[2].name, "ProfilerStep#*");
	ck_assert_uint_eq(s->ranges[2].count, 3);
	ck_assert_uint_eq(s->ranges[2].total_ns, 350);
	ck_assert_str_eq(s->ranges[3].name, "eval");
	ck_assert_str_eq(s->ranges[0].name, "forward");
	ck_assert_uint_eq(s->ranges[0].count, 3);
	ck_assert_uint_eq(s->ranges[0].total_ns, 120);
	ck_assert_uint_eq(d.ranges[0].count, 2);
	ck_assert_uint_eq(d.ranges[0].ns, 80);

	/* two digits more: still the same kind of step */
	range(l, 7, 8, 0, 500, 600);
	s = publish(l, 3000000000);
	ck_assert_uint_eq(s->threads[0].steps, 4);
	ck_assert_str_eq(s->threads[0].step, "ProfilerStep#12");
	ck_assert_uint_eq(s->nranges, 4);
	ck_assert_uint_eq(s->ranges[2].count, 4);
	ck_assert_uint_eq(s->ranges[2].total_ns, 450);
	ck_assert_uint_eq(s->threads[0].step_len, 13);
	/* a range deeper than the stack keeps is counted but leaves the stack alone */
	range(l, 7, 2, GT_LIVE_STACK_MAX, 600, 601);
	s = publish(l, 3000000001);
	ck_assert_uint_eq(s->ranges[0].count, 4);
	stack_is(&s->threads[0], 1, "ProfilerStep#12", NULL);
	/* only NAME#<digits> is grouped: layer1 and layer2 are two layers, #7 has no name */
	string(l, 9, "layer1");
	string(l, 10, "layer2");
	string(l, 11, "#7");
	range(l, 7, 9, 1, 610, 620);
	range(l, 7, 10, 1, 620, 630);
	range(l, 7, 11, 1, 630, 640);
	s = publish(l, 3000000002);
	ck_assert_uint_eq(s->nranges, 7);
	ck_assert_str_eq(s->ranges[4].name, "layer1");
	ck_assert_str_eq(s->ranges[5].name, "layer2");
	ck_assert_str_eq(s->ranges[6].name, "#7");
	ck_assert_uint_eq(gt_live_stem_len("step", 4), 4);
	ck_assert_uint_eq(gt_live_stem_len("42", 2), 0);
	gt_live_delta_fini(&d);
	gt_live_free(l);
}
END_TEST

/* Deeper stacks: the chain under the range that ended, cut where a frame is not inside its
 * parent; the frames above it are open. */
/* A range's STRING may come after its first record (the drainer reserves the id and writes
 * the content when it arrives: src/session/drain.c remap()). A numbered range seen before its name
 * still belongs to the NAME#* row once the name is known. */
START_TEST(test_nvtx_numbered_name_late)
{
	struct gt_live *l = mk(0);
	const struct gt_live_snapshot *s;

	range(l, 7, 5, 0, 100, 200); /* ProfilerStep#1, its name not known yet */
	string(l, 5, "ProfilerStep#1");
	string(l, 6, "ProfilerStep#2");
	range(l, 7, 6, 0, 200, 250);
	s = publish(l, 1000);
	ck_assert_uint_eq(s->nranges, 1);
	ck_assert_str_eq(s->ranges[0].name, "ProfilerStep#*");
	ck_assert_uint_eq(s->ranges[0].count, 2);
	ck_assert_uint_eq(s->ranges[0].total_ns, 150);
	/* the same the other way round: the group's row first, then a late name joins it */
	range(l, 7, 8, 0, 300, 310); /* ProfilerStep#3, name late */
	string(l, 8, "ProfilerStep#3");
	range(l, 7, 8, 0, 310, 330);
	s = publish(l, 2000);
	ck_assert_uint_eq(s->nranges, 1);
	ck_assert_str_eq(s->ranges[0].name, "ProfilerStep#*");
	ck_assert_uint_eq(s->ranges[0].count, 4);
	ck_assert_uint_eq(s->ranges[0].total_ns, 180);
	/* until its name comes a range is in no row yet, but counted; one without a name at
	 * all (id 0) has its row at once */
	range(l, 7, 12, 0, 400, 410);
	range(l, 7, GT_STRING_NONE, 1, 400, 405);
	s = publish(l, 3000);
	ck_assert_uint_eq(s->nranges, 2);
	ck_assert_ptr_null(s->ranges[1].name);
	ck_assert_uint_eq(s->ranges[1].count, 1);
	ck_assert_uint_eq(s->nvtx_ranges, 6);
	string(l, 12, "optimizer");
	s = publish(l, 4000);
	ck_assert_uint_eq(s->nranges, 3);
	ck_assert_str_eq(s->ranges[2].name, "optimizer");
	ck_assert_uint_eq(s->ranges[2].count, 1);
	ck_assert_uint_eq(s->ranges[2].total_ns, 10);
	gt_live_free(l);
}
END_TEST

START_TEST(test_nvtx_deep)
{
	struct gt_live *l = mk(0);
	const struct gt_live_snapshot *s;

	string(l, 1, "a");
	string(l, 2, "b");
	string(l, 3, "c");
	string(l, 4, "d");
	range(l, 1, 4, 3, 10, 20); /* a > b > c > d: d ends first */
	s = publish(l, 1);
	ck_assert_uint_eq(s->threads[0].depth, 4);
	for (int k = 0; k < 3; k++)
		ck_assert_ptr_null(s->threads[0].stack[k]);
	ck_assert_str_eq(s->threads[0].stack[3], "d");
	range(l, 1, 3, 2, 5, 25);
	range(l, 1, 2, 1, 0, 30);
	s = publish(l, 2);
	ck_assert_uint_eq(s->threads[0].depth, 4);
	ck_assert_ptr_null(s->threads[0].stack[0]);
	ck_assert_str_eq(s->threads[0].stack[1], "b");
	ck_assert_str_eq(s->threads[0].stack[2], "c");
	ck_assert_str_eq(s->threads[0].stack[3], "d");
	/* a new c in b' (not containing the old d): the stack stops at c */
	range(l, 1, 3, 2, 40, 45);
	s = publish(l, 3);
	ck_assert_uint_eq(s->threads[0].depth, 3);
	ck_assert_str_eq(s->threads[0].stack[2], "c");
	ck_assert_ptr_null(s->threads[0].stack[1]);
	gt_live_free(l);
}
END_TEST

/* A publication asked for comes without a pass: within a long pass, at the 1024th record
 * since the tap last looked, and from the idle call once no process is left to pass over
 * (the view froze on its last-but-one screen on the H200 before these). */
START_TEST(test_publish_without_pass)
{
	struct gt_live *l = mk(0);
	const struct gt_drain_tap *tap = gt_live_tap(l);
	struct gt_rec_nvtx mark = {0};
	unsigned i;

	mark.hdr.type = GT_REC_NVTX;
	mark.hdr.size = sizeof(mark);
	mark.hdr.pid = PID;
	mark.kind = GT_NVTX_MARK;
	gt_live_request(l);
	for (i = 0; i < 1023; i++)
		tap->record(tap->ctx, &mark.hdr);
	ck_assert_uint_eq(gt_live_acquire(l)->seq, 0);
	tap->record(tap->ctx, &mark.hdr);
	ck_assert_uint_eq(gt_live_acquire(l)->seq, 1);
	ck_assert_uint_eq(gt_live_acquire(l)->nvtx_marks, 1024);
	/* not asked again: the next 1024 records publish nothing */
	for (i = 0; i < 1024; i++)
		tap->record(tap->ctx, &mark.hdr);
	ck_assert_uint_eq(gt_live_acquire(l)->seq, 1);
	/* the idle call publishes only what was asked for */
	tap->record(tap->ctx, &mark.hdr);
	tap->idle(tap->ctx);
	ck_assert_uint_eq(gt_live_acquire(l)->seq, 1);
	gt_live_request(l);
	tap->idle(tap->ctx);
	ck_assert_uint_eq(gt_live_acquire(l)->seq, 2);
	ck_assert_uint_eq(gt_live_acquire(l)->nvtx_marks, 2049);
	ck_assert_uint_eq(gt_live_acquire(l)->records, 2049);
	gt_live_free(l);
}
END_TEST

/* API calls and the last failure (600, "not ready", is no failure), processes and their
 * ends, losses written and ring drops not yet written, records counted, the tap's calls. */
START_TEST(test_counts)
{
	struct gt_live *l = mk(0);
	const struct gt_drain_tap *tap = gt_live_tap(l);
	const struct gt_live_snapshot *s;
	struct gt_rec_api a = {0};
	struct gt_rec_process p = {0};
	struct gt_rec_process_end e = {0};
	struct gt_rec_loss loss = {0};
	struct gt_rec_nvtx mark = {0};

	tap->string(tap->ctx, PID, 1, "cudaMalloc", 10);
	tap->string(tap->ctx, PID, 2, "cudaStreamQuery", 15);
	tap->string(tap->ctx, PID, 3, "/usr/bin/python3", 16);
	tap->string(tap->ctx, PID, 3, "ignored: an id keeps its first content", 38);
	a.hdr.type = GT_REC_API;
	a.hdr.size = sizeof(a);
	a.hdr.pid = PID;
	a.name_id = 1;
	tap->record(tap->ctx, &a.hdr);
	a.return_code = 2;
	a.domain = GT_API_RUNTIME;
	tap->record(tap->ctx, &a.hdr);
	a.name_id = 2;
	a.return_code = 600;
	tap->record(tap->ctx, &a.hdr);
	p.hdr.type = GT_REC_PROCESS;
	p.hdr.size = sizeof(p);
	p.hdr.pid = PID;
	p.ppid = 1;
	p.rank = 0;
	p.local_rank = 0;
	p.world_size = 2;
	p.exe_id = 3;
	tap->record(tap->ctx, &p.hdr);
	p.hdr.pid = PID + 1;
	p.rank = 1;
	tap->record(tap->ctx, &p.hdr);
	loss.hdr.type = GT_REC_LOSS;
	loss.hdr.size = sizeof(loss);
	loss.hdr.pid = PID;
	loss.count = 5;
	tap->record(tap->ctx, &loss.hdr);
	mark.hdr.type = GT_REC_NVTX;
	mark.hdr.size = sizeof(mark);
	mark.hdr.pid = PID;
	mark.kind = GT_NVTX_MARK;
	tap->record(tap->ctx, &mark.hdr);

	/* a pass nobody asked for publishes nothing */
	tap->pass(tap->ctx, PID, 7);
	ck_assert_uint_eq(gt_live_acquire(l)->seq, 0);
	gt_live_request(l);
	tap->pass(tap->ctx, PID + 1, 1);
	s = gt_live_acquire(l);
	ck_assert_uint_eq(s->seq, 1);
	ck_assert_uint_eq(s->records, 4 + 3 + 2 + 2);
	ck_assert_uint_eq(s->api_calls, 3);
	ck_assert_uint_eq(s->api_failed, 1);
	ck_assert_str_eq(s->failed_name, "cudaMalloc");
	ck_assert_int_eq(s->failed_code, 2);
	ck_assert_uint_eq(s->failed_domain, GT_API_RUNTIME);
	ck_assert_str_eq(s->failed_error, "cudaErrorMemoryAllocation");
	ck_assert_uint_eq(s->lost, 5 + 7 + 1);
	ck_assert_uint_eq(s->nvtx_marks, 1);
	ck_assert_uint_eq(s->nvtx_ranges, 0);
	ck_assert_uint_eq(s->nprocs, 2);
	ck_assert_uint_eq(s->procs[0].pid, PID);
	ck_assert_str_eq(s->procs[0].exe, "/usr/bin/python3");
	ck_assert_int_eq(s->procs[1].rank, 1);
	ck_assert_int_eq(s->procs[1].world_size, 2);
	ck_assert_uint_eq(s->procs[0].state, GT_LIVE_RUNNING);

	e.hdr.type = GT_REC_PROCESS_END;
	e.hdr.size = sizeof(e);
	e.hdr.pid = PID;
	e.how = GT_END_EXIT;
	e.code = 3;
	tap->record(tap->ctx, &e.hdr);
	e.hdr.pid = PID + 1;
	e.how = GT_END_SIGNAL;
	e.code = 9;
	tap->record(tap->ctx, &e.hdr);
	s = publish(l, 5);
	ck_assert_uint_eq(s->procs[0].state, GT_LIVE_EXITED);
	ck_assert_int_eq(s->procs[0].code, 3);
	ck_assert_uint_eq(s->procs[1].state, GT_LIVE_KILLED);
	ck_assert_int_eq(s->procs[1].code, 9);
	/* the ended processes' drops are in their LOSS records now */
	ck_assert_uint_eq(s->lost, 5);

	/* once the reader is gone, nothing more is counted */
	gt_live_stop(l);
	tap->record(tap->ctx, &a.hdr);
	s = publish(l, 6);
	ck_assert_uint_eq(s->api_calls, 3);
	gt_live_free(l);
}
END_TEST

/* The three buffers: a snapshot the reader holds never changes, however often the drain
 * publishes; the reader always gets the newest. */
START_TEST(test_handover)
{
	struct gt_live *l = mk(0);
	const struct gt_live_snapshot *s, *t;
	int fd;

	ck_assert_int_eq(gt_live_wake_fd(l), -1);
	ck_assert_int_eq(gt_live_publish(l, 1), 0); /* nobody asked */
	s = gt_live_acquire(l);
	ck_assert_uint_eq(s->seq, 0);
	kernel(l, PID, 0, 1, 0, 1);
	s = publish(l, 2);
	ck_assert_uint_eq(s->seq, 1);
	ck_assert_uint_eq(s->gpus[0].kernels, 1);
	for (int i = 0; i < 5; i++) {
		kernel(l, PID, 0, 1, 0, 1);
		gt_live_request(l);
		ck_assert_int_eq(gt_live_publish(l, 3 + (uint64_t)i), 1);
		/* still the one the reader took */
		ck_assert_uint_eq(s->seq, 1);
		ck_assert_uint_eq(s->gpus[0].kernels, 1);
	}
	t = gt_live_acquire(l);
	ck_assert_uint_eq(t->seq, 6);
	ck_assert_uint_eq(t->gpus[0].kernels, 6);
	ck_assert_ptr_eq(gt_live_acquire(l), t); /* nothing newer */
	gt_live_free(l);

	ck_assert_int_eq(gt_live_new(0, true, &l), 0);
	fd = gt_live_wake_fd(l);
	ck_assert_int_ge(fd, 0);
	gt_live_request(l);
	ck_assert_int_eq(gt_live_publish(l, 1), 1);
	{
		uint64_t v = 0;

		ck_assert_int_eq(read(fd, &v, sizeof(v)), (int)sizeof(v));
		ck_assert_uint_eq(v, 1);
	}
	gt_live_free(l);
}
END_TEST

/* Two threads as in gputrace run --live: the drain feeds and publishes when asked, the
 * reader asks and checks each snapshot is whole (its GPU's kernel count equals the sum of
 * the per-name counts, which one record changes together). */
#define FEED 200000u

struct feeder {
	struct gt_live *l;
	atomic_bool done;
};

static void *feed(void *arg)
{
	struct feeder *f = arg;

	for (uint32_t i = 0; i < FEED; i++) {
		kernel(f->l, PID, 0, 1 + i % 50, i, i + 1);
		if (i % 64 == 0)
			gt_live_publish(f->l, i);
	}
	while (!atomic_load(&f->done)) {
		gt_live_publish(f->l, FEED);
		sched_yield();
	}
	return NULL;
}

START_TEST(test_threads)
{
	struct feeder f = {.l = mk(0)};
	const struct gt_live_snapshot *s;
	uint64_t last_seq = 0, seen = 0;
	pthread_t t;

	atomic_init(&f.done, false);
	ck_assert_int_eq(pthread_create(&t, NULL, feed, &f), 0);
	for (;;) {
		uint64_t sum = 0;

		gt_live_request(f.l);
		s = gt_live_acquire(f.l);
		if (s->seq == last_seq) {
			sched_yield();
			continue;
		}
		ck_assert_uint_gt(s->seq, last_seq);
		last_seq = s->seq;
		seen++;
		for (size_t i = 0; i < s->nkernels; i++)
			sum += s->kernels[i].count;
		ck_assert_uint_eq(s->ngpus, 1);
		ck_assert_uint_eq(s->gpus[0].kernels, sum);
		ck_assert_uint_eq(s->records, sum);
		if (sum == FEED)
			break;
	}
	atomic_store(&f.done, true);
	pthread_join(t, NULL);
	ck_assert_uint_ge(seen, 1);
	gt_live_free(f.l);
}
END_TEST

START_TEST(test_shorten)
{
	char buf[512];
	const char *n = "void at::native::vectorized_elementwise_kernel<4, "
	                "at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3> >(int, "
	                "at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3>)";

	ck_assert_str_eq(gt_live_shorten("gemm", 10, buf, sizeof(buf)), "gemm");
	ck_assert_str_eq(gt_live_shorten(NULL, 10, buf, sizeof(buf)), "");
	ck_assert_str_eq(gt_live_shorten(n, 120, buf, sizeof(buf)),
	                 "at::native::vectorized_elementwise_kernel<4, "
	                 "at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3> >");
	ck_assert_str_eq(gt_live_shorten(n, 60, buf, sizeof(buf)),
	                 "at::native::vectorized_elementwise_kernel<...>");
	ck_assert_str_eq(gt_live_shorten(n, 40, buf, sizeof(buf)),
	                 "vectorized_elementwise_kernel<...>");
	ck_assert_str_eq(gt_live_shorten(n, 20, buf, sizeof(buf)), "vectorized_elemen...");
	ck_assert_str_eq(gt_live_shorten(n, 3, buf, sizeof(buf)), "vec");
	ck_assert_str_eq(gt_live_shorten("void (anonymous namespace)::k<(int)3>(float*)", 12, buf,
	                                 sizeof(buf)),
	                 "k<...>");
	/* short template lists stay: "<...>" would be no shorter */
	ck_assert_str_eq(gt_live_shorten("void k<4>(int, int)", 5, buf, sizeof(buf)), "k<4>");
	ck_assert_str_eq(gt_live_shorten("ns::k<int>(float*)", 6, buf, sizeof(buf)), "k<int>");
	/* longer than the buffer: cut */
	ck_assert_str_eq(gt_live_shorten(n, 200, buf, 16), "void at::nat...");
}
END_TEST

static Suite *live_suite(void)
{
	Suite *s = suite_create("live");
	TCase *tc = tcase_create("live");

	tcase_add_test(tc, test_gpu);
	tcase_add_test(tc, test_gpu_metrics);
	tcase_add_test(tc, test_gpu_identity);
	tcase_add_test(tc, test_kernel_order);
	tcase_add_test(tc, test_nvtx);
	tcase_add_test(tc, test_nvtx_deep);
	tcase_add_test(tc, test_nvtx_numbered_name_late);
	tcase_add_test(tc, test_counts);
	tcase_add_test(tc, test_publish_without_pass);
	tcase_add_test(tc, test_handover);
	tcase_add_test(tc, test_threads);
	tcase_add_test(tc, test_shorten);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(live_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
