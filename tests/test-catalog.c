/* Check suite `catalog`: what a trace holds (exporters/model/catalog.c) - processes by host and
 * pid, GPUs by uuid, threads, losses per source, notices - from records fed one by one. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "catalog.h"
#include "gputrace/trace.h"

static struct gt_catalog cat;

static void setup(void)
{
	ck_assert_int_eq(gt_catalog_init(&cat, NULL), 0);
}

static void teardown(void)
{
	gt_catalog_fini(&cat);
}

static void feed(void *rec, unsigned type, size_t size, uint32_t pid)
{
	struct gt_rec_hdr *h = rec;

	h->type = (uint16_t)type;
	h->size = (uint16_t)size;
	h->pid = pid;
	ck_assert_int_eq(gt_catalog_observe(&cat, rec), 0);
}

static void process(uint32_t pid, uint32_t host_id, int32_t rank)
{
	struct gt_rec_process p = {0};

	p.host_id = host_id;
	p.rank = rank;
	p.exe_id = 7;
	feed(&p, GT_REC_PROCESS, sizeof(p), pid);
}

static void process_end(uint32_t pid, int32_t code)
{
	struct gt_rec_process_end e = {0};

	e.how = GT_END_EXIT;
	e.code = code;
	feed(&e, GT_REC_PROCESS_END, sizeof(e), pid);
}

/* uuid_tag 0: no uuid */
static void device(uint32_t pid, uint32_t ordinal, uint8_t uuid_tag)
{
	struct gt_rec_device d = {0};

	d.device_id = ordinal;
	d.uuid[0] = uuid_tag;
	d.uuid[15] = uuid_tag;
	d.sm_count = 132;
	d.mem_clock_khz = 3134000;
	d.clock_khz = 1980000;
	d.mem_bus_width = 6144;
	d.max_threads_per_block = 1024;
	d.max_shared_mem_per_block = 49152;
	feed(&d, GT_REC_DEVICE, sizeof(d), pid);
}

static void kernel(uint32_t pid, uint32_t ordinal)
{
	struct gt_rec_kernel k = {0};

	k.span.start_ns = 100;
	k.span.end_ns = 200;
	k.span.device_id = ordinal;
	feed(&k, GT_REC_KERNEL, sizeof(k), pid);
}

static void memory(uint32_t pid, uint32_t ordinal, unsigned op, uint64_t bytes, unsigned kind)
{
	struct gt_rec_memory m = {0};

	m.ts_ns = 1000;
	m.device_id = ordinal;
	m.op = op;
	m.bytes = bytes;
	m.mem_kind = kind;
	feed(&m, GT_REC_MEMORY, sizeof(m), pid);
}

static void api(uint32_t pid, uint32_t tid)
{
	struct gt_rec_api a = {0};

	a.tid = tid;
	a.start_ns = 10;
	a.end_ns = 20;
	feed(&a, GT_REC_API, sizeof(a), pid);
}

/* In one trace (a merge of two hosts' traces), pid 1234 of two hosts is two processes, and a
 * record belongs to the latest process of its pid. */
START_TEST(test_same_pid_two_hosts)
{
	process(1234, 1, 0);
	api(1234, 1234);
	process(1234, 2, 1);
	api(1234, 1234);
	api(1234, 99);
	ck_assert_uint_eq(cat.nprocs, 2);
	ck_assert_uint_eq(cat.procs[0]->host_id, 1);
	ck_assert_uint_eq(cat.procs[1]->host_id, 2);
	ck_assert_int_eq(cat.procs[0]->rank, 0);
	ck_assert_int_eq(cat.procs[1]->rank, 1);
	ck_assert_uint_eq(cat.procs[0]->nthreads, 1);
	ck_assert_uint_eq(cat.procs[1]->nthreads, 2);
	ck_assert_ptr_eq(gt_catalog_process(&cat, 1234), cat.procs[1]);
	ck_assert_uint_eq(cat.nthreads, 3);
	ck_assert_uint_eq(gt_catalog_hosts(&cat), 2);
	ck_assert_uint_eq(gt_catalog_ranks(&cat), 2);
	/* outputs that key by pid show the second apart; the pid of records is its now */
	ck_assert_uint_eq(cat.procs[0]->out_pid, 1234);
	ck_assert_uint_eq(cat.procs[1]->out_pid, GT_CATALOG_PID_AGAIN + 1);
	ck_assert_uint_eq(gt_catalog_out_pid(&cat, 1234), GT_CATALOG_PID_AGAIN + 1);
	ck_assert_uint_eq(gt_catalog_out_pid(&cat, 999), 999); /* no process has it */
}
END_TEST

static void origin(uint32_t pid, uint32_t input, uint32_t host_id)
{
	struct gt_rec_origin o = {0};

	o.input = input;
	o.orig_pid = pid;
	o.host_id = host_id;
	feed(&o, GT_REC_ORIGIN, sizeof(o), pid);
}

/* A merged trace whose two inputs' processes kept one pid (gputrace merge renames one; a
 * trace written otherwise may not): each ORIGIN record of another input starts a process,
 * before its PROCESS record, so that PROCESS updates the new one; one of the same input
 * and host does not. */
START_TEST(test_same_pid_two_inputs)
{
	origin(4100, 1, 1);
	process(4100, 1, 0);
	api(4100, 4100);
	origin(4100, 1, 1); /* the same input's again: the same process */
	ck_assert_uint_eq(cat.nprocs, 1);
	origin(4100, 2, 2);
	ck_assert_uint_eq(cat.nprocs, 2);
	process(4100, 2, 1);
	api(4100, 4100);
	ck_assert_uint_eq(cat.nprocs, 2);
	ck_assert_uint_eq(cat.procs[0]->input, 1);
	ck_assert_uint_eq(cat.procs[1]->input, 2);
	ck_assert_uint_eq(cat.procs[0]->host_id, 1);
	ck_assert_uint_eq(cat.procs[1]->host_id, 2);
	ck_assert_int_eq(cat.procs[0]->rank, 0);
	ck_assert_int_eq(cat.procs[1]->rank, 1);
	ck_assert_uint_eq(cat.procs[0]->nthreads, 1);
	ck_assert_uint_eq(cat.procs[1]->nthreads, 1);
	ck_assert_uint_eq(cat.procs[1]->out_pid, GT_CATALOG_PID_AGAIN + 1);
	ck_assert_uint_eq(cat.nthreads, 2);
}
END_TEST

/* The same pid on one host: a process that re-registers (an exec) is the same process; one
 * that ended and is followed by another PROCESS record is a reused pid; an end recorded before
 * its PROCESS record belongs to it. */
START_TEST(test_pid_reuse)
{
	process(10, 1, -1);
	process(10, 1, -1); /* exec */
	ck_assert_uint_eq(cat.nprocs, 1);
	process_end(10, 3);
	process(10, 1, -1); /* reused */
	ck_assert_uint_eq(cat.nprocs, 2);
	ck_assert(cat.procs[0]->ended);
	ck_assert_int_eq(cat.procs[0]->end_code, 3);
	ck_assert(!cat.procs[1]->ended);
	process_end(20, 5); /* before its PROCESS record */
	process(20, 1, -1);
	ck_assert_uint_eq(cat.nprocs, 3);
	ck_assert(cat.procs[2]->ended && cat.procs[2]->have_info);
	ck_assert_int_eq(cat.procs[2]->end_code, 5);
	/* a host not named matches any */
	process(30, 0, -1);
	process(30, 1, -1);
	ck_assert_uint_eq(cat.nprocs, 4);
}
END_TEST

/* A GPU is its uuid: ranks that each see their own GPU as device 0 are two GPUs (numbered 0
 * and 1 as every output shows them), processes sharing one GPU one; without a uuid, each
 * process's device is a GPU of its own. */
START_TEST(test_gpus_by_uuid)
{
	device(100, 0, 0xa0);
	device(200, 0, 0xa1);
	device(300, 0, 0xa0); /* shares rank 0's GPU */
	device(300, 1, 0xa1); /* and sees rank 1's as its device 1 */
	ck_assert_uint_eq(cat.ngpus, 2);
	ck_assert_uint_eq(gt_catalog_gpu_count(&cat), 2);
	ck_assert_uint_eq(cat.gpus[0]->number, 0);
	ck_assert_uint_eq(cat.gpus[1]->number, 1);
	ck_assert_ptr_eq(gt_catalog_gpu(&cat, 300, 0), cat.gpus[0]);
	ck_assert_ptr_eq(gt_catalog_gpu(&cat, 300, 1), cat.gpus[1]);
	ck_assert_ptr_eq(gt_catalog_gpu(&cat, 200, 0), cat.gpus[1]);
	kernel(400, 0); /* no uuid: (host, pid, ordinal) */
	kernel(500, 0);
	ck_assert_uint_eq(cat.ngpus, 4);
	ck_assert_uint_eq(cat.gpus[2]->number, 2);
	ck_assert_uint_eq(cat.gpus[3]->number, 3);
	{
		uint32_t procs[4], ords[4];
		char uuid[48];

		ck_assert_uint_eq(gt_catalog_gpu_users(&cat, cat.gpus[1], procs, ords, 4), 2);
		ck_assert_uint_eq(cat.procs[procs[0]]->pid, 200);
		ck_assert_uint_eq(ords[0], 0);
		ck_assert_uint_eq(cat.procs[procs[1]]->pid, 300);
		ck_assert_uint_eq(ords[1], 1);
		/* the description, as the DEVICE record gave it */
		ck_assert_uint_eq(cat.gpus[0]->sm_count, 132);
		ck_assert_uint_eq(cat.gpus[0]->mem_clock_khz, 3134000);
		ck_assert_uint_eq(cat.gpus[0]->clock_khz, 1980000);
		ck_assert_uint_eq(cat.gpus[0]->mem_bus_width, 6144);
		ck_assert_uint_eq(cat.gpus[0]->max_threads_per_block, 1024);
		ck_assert_uint_eq(cat.gpus[0]->max_shared_mem_per_block, 49152);
		ck_assert_str_eq(gt_catalog_uuid(cat.gpus[0], uuid),
		                 "GPU-a0000000-0000-0000-0000-0000000000a0");
		ck_assert_str_eq(gt_catalog_uuid(cat.gpus[2], uuid), "");
	}
}
END_TEST

/* Records that name a device before their process's DEVICE record: the GPU they made takes the
 * uuid when it is new, and is folded into the GPU that has it otherwise, memory included. */
START_TEST(test_device_record_late)
{
	kernel(100, 0);
	memory(100, 0, GT_MEMORY_ALLOC, 1000, GT_MEM_DEVICE);
	device(100, 0, 0xa0);
	ck_assert_uint_eq(cat.ngpus, 1);
	ck_assert(cat.gpus[0]->have_uuid && cat.gpus[0]->have_info);
	memory(200, 0, GT_MEMORY_ALLOC, 500, GT_MEM_DEVICE);
	ck_assert_uint_eq(cat.ngpus, 2);
	ck_assert_int_eq(cat.gpus[1]->mem_in_use, 500);
	device(200, 0, 0xa0); /* the same GPU as process 100's */
	ck_assert_uint_eq(cat.ngpus, 2);
	ck_assert_uint_eq(gt_catalog_gpu_count(&cat), 1);
	ck_assert_uint_eq(cat.gpus[1]->merged_into, 1);
	ck_assert_ptr_eq(gt_catalog_gpu_final(&cat, cat.gpus[1]), cat.gpus[0]);
	ck_assert_ptr_eq(gt_catalog_gpu(&cat, 200, 0), cat.gpus[0]);
	ck_assert_int_eq(cat.gpus[0]->mem_in_use, 1500);
	ck_assert_int_eq(cat.gpus[0]->mem_peak, 1500);
	ck_assert_int_eq(cat.gpus[1]->mem_in_use, 0);
}
END_TEST

/* Memory in use and its peak per GPU, from device and managed memory; host memory is not a
 * GPU's. */
START_TEST(test_memory_peak)
{
	device(1, 0, 0xa0);
	memory(1, 0, GT_MEMORY_ALLOC, 100, GT_MEM_DEVICE);
	memory(1, 0, GT_MEMORY_ALLOC, 50, GT_MEM_MANAGED);
	memory(1, 0, GT_MEMORY_ALLOC, 1 << 20, GT_MEM_PINNED);
	memory(1, 0, GT_MEMORY_FREE, 100, GT_MEM_DEVICE);
	memory(1, 0, GT_MEMORY_ALLOC, 30, GT_MEM_DEVICE);
	ck_assert_uint_eq(cat.ngpus, 1);
	ck_assert_int_eq(cat.gpus[0]->mem_in_use, 80);
	ck_assert_int_eq(cat.gpus[0]->mem_peak, 150);
}
END_TEST

/* Losses by source and kind, unknown sources apart; warnings and errors kept (the first
 * GT_CATALOG_NOTICES, the rest counted), informational notices not; CUPTI versions once each. */
START_TEST(test_losses_and_notices)
{
	struct gt_rec_loss l = {0};
	struct gt_rec_notice n = {0};

	l.source = GT_LOSS_RING_FULL;
	l.kind = GT_REC_API;
	l.count = 5;
	feed(&l, GT_REC_LOSS, sizeof(l), 1);
	l.count = 2;
	l.kind = GT_REC_KERNEL;
	feed(&l, GT_REC_LOSS, sizeof(l), 1);
	l.source = 99;
	l.kind = 999;
	l.count = 4;
	feed(&l, GT_REC_LOSS, sizeof(l), 1);
	ck_assert_uint_eq(gt_catalog_lost(&cat, GT_LOSS_RING_FULL), 7);
	ck_assert_uint_eq(cat.losses[GT_LOSS_RING_FULL][GT_REC_API], 5);
	ck_assert_uint_eq(cat.losses[GT_LOSS_SOURCE_MAX][GT_REC_NONE], 4);
	ck_assert_uint_eq(gt_catalog_lost_total(&cat), 11);

	n.severity = GT_NOTICE_INFO;
	n.code = GT_NOTICE_CUPTI_LOADED;
	n.detail = 130001;
	feed(&n, GT_REC_NOTICE, sizeof(n), 1);
	feed(&n, GT_REC_NOTICE, sizeof(n), 2);
	n.detail = 129901;
	feed(&n, GT_REC_NOTICE, sizeof(n), 3);
	ck_assert_uint_eq(cat.ncupti, 2);
	ck_assert_int_eq(cat.cupti[0], 130001);
	ck_assert_int_eq(cat.cupti[1], 129901);
	ck_assert_uint_eq(cat.nnotices, 0);
	/* what recording cost each process: kept apart from the warnings, the first ones */
	n.code = GT_NOTICE_SELF_COST;
	n.detail = 812;
	for (unsigned pid = 1; pid <= GT_CATALOG_SELF + 2; pid++)
		feed(&n, GT_REC_NOTICE, sizeof(n), pid);
	ck_assert_uint_eq(cat.nself_cost, GT_CATALOG_SELF);
	ck_assert_uint_eq(cat.more_self_cost, 2);
	ck_assert_uint_eq(cat.self_cost[0].hdr.pid, 1);
	ck_assert_int_eq(cat.self_cost[GT_CATALOG_SELF - 1].detail, 812);
	ck_assert_uint_eq(cat.nnotices, 0);
	n.code = GT_NOTICE_DETACHED;
	n.severity = GT_NOTICE_WARNING;
	for (unsigned i = 0; i < GT_CATALOG_NOTICES + 3; i++) {
		n.message_id = i + 1;
		feed(&n, GT_REC_NOTICE, sizeof(n), 1);
	}
	ck_assert_uint_eq(cat.nnotices, GT_CATALOG_NOTICES);
	ck_assert_uint_eq(cat.more_notices, 3);
	ck_assert_uint_eq(cat.notices[0].message_id, 1);
	ck_assert_uint_eq(cat.records[GT_REC_NOTICE],
	                  3 + GT_CATALOG_SELF + 2 + GT_CATALOG_NOTICES + 3);
}
END_TEST

/* Memory is bounded by what the trace holds, not by its events: a million kernels of two
 * processes on two GPUs leave two processes, two GPUs and no thread. */
/* A damaged file: what damaged_file losses recorded (chunks, not records: apart from the
 * producers' losses) and what this read skipped, together, in the one wording. */
START_TEST(test_damage)
{
	struct gt_rec_loss l = {0};
	struct gt_reader_status rs = {0};
	struct gt_catalog_damage d;
	char text[GT_CATALOG_DAMAGE_TEXT];

	l.source = GT_LOSS_RING_FULL;
	l.count = 3;
	feed(&l, GT_REC_LOSS, sizeof(l), 1);
	l.source = GT_LOSS_FILE;
	l.count = 2;
	l.bytes = 5000;
	l.records = 40;
	l.malformed = 1;
	feed(&l, GT_REC_LOSS, sizeof(l), 1);
	ck_assert_uint_eq(gt_catalog_lost_total(&cat), 5);
	ck_assert_uint_eq(gt_catalog_lost_records(&cat), 3);
	ck_assert_uint_eq(cat.procs[0]->lost, 3);
	ck_assert_uint_eq(cat.damage_recorded.chunks, 2);
	ck_assert_uint_eq(cat.damage_recorded.bytes, 5000);
	ck_assert_uint_eq(cat.damage_recorded.records, 40);
	ck_assert_uint_eq(cat.damage_recorded.malformed, 1);
	ck_assert(!gt_catalog_damaged(&cat.damage_read));

	rs.recovered = true;
	rs.chunks_read = 9;
	rs.chunks_skipped = 1;
	rs.bytes_skipped = 611;
	rs.chunk_records_skipped = 57;
	gt_catalog_read_done(&cat, &rs);
	ck_assert(cat.recovered);
	ck_assert_str_eq(gt_catalog_damage_text(&cat.damage_read, text, sizeof(text)),
	                 "1 chunk (611 bytes) and 0 malformed records skipped");
	gt_catalog_damage(&cat, &d);
	ck_assert(gt_catalog_damaged(&d));
	ck_assert_uint_eq(d.records, 97);
	ck_assert_str_eq(gt_catalog_damage_text(&d, text, sizeof(text)),
	                 "3 chunks (5611 bytes) and 1 malformed record skipped");
}
END_TEST

START_TEST(test_bounded)
{
	for (unsigned i = 0; i < 1000000; i++)
		kernel(1 + i % 2, i % 2);
	ck_assert_uint_eq(cat.nprocs, 2);
	ck_assert_uint_eq(cat.ngpus, 2);
	ck_assert_uint_eq(cat.nthreads, 0);
	ck_assert_uint_eq(cat.records[GT_REC_KERNEL], 1000000);
	ck_assert_uint_le(cat.device_map.mask + 1, 16);
	ck_assert_uint_le(cat.pid_map.mask + 1, 64);
}
END_TEST

/* Hosts are compared by name: two string ids with the same text are one host (a trace written
 * by gputrace run interns each string once, a merge may not). */
START_TEST(test_host_names)
{
	char path[] = "/tmp/test-catalog-XXXXXX";
	struct gt_trace_info info = {.clock_id = GT_CLOCK_MONOTONIC};
	struct gt_rec_process p = {{GT_REC_PROCESS, sizeof(p), 42}};
	struct gt_rec_process_end e = {{GT_REC_PROCESS_END, sizeof(e), 42}};
	struct gt_writer *w;
	struct gt_reader *r;
	struct gt_catalog c;
	const char *msg = NULL;
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert_int_eq(gt_writer_open(path, &info, NULL, &w), 0);
	ck_assert_int_eq(gt_writer_string(w, 42, 1, "node-a", 6), 0);
	ck_assert_int_eq(gt_writer_string(w, 42, 2, "node-a", 6), 0);
	ck_assert_int_eq(gt_writer_string(w, 42, 3, "node-b", 6), 0);
	p.host_id = 1;
	ck_assert_int_eq(gt_writer_write(w, &p.hdr), 0);
	p.host_id = 2; /* the same host under another id: the same process re-registering */
	ck_assert_int_eq(gt_writer_write(w, &p.hdr), 0);
	p.host_id = 3; /* another host */
	ck_assert_int_eq(gt_writer_write(w, &p.hdr), 0);
	ck_assert_int_eq(gt_writer_write(w, &e.hdr), 0);
	ck_assert_int_eq(gt_writer_close(w), 0);
	ck_assert_int_eq(gt_reader_open(path, &r, &msg), 0);
	unlink(path);
	ck_assert_int_eq(gt_catalog_init(&c, r), 0);
	ck_assert_int_eq(gt_catalog_read(&c, r, &msg), 0);
	ck_assert_uint_eq(c.nprocs, 2);
	ck_assert_uint_eq(c.procs[0]->host_id, 2);
	ck_assert_uint_eq(c.procs[1]->host_id, 3);
	ck_assert(!c.procs[0]->ended && c.procs[1]->ended);
	ck_assert_uint_eq(gt_catalog_hosts(&c), 2);
	gt_catalog_fini(&c);
	gt_reader_close(r);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("catalog");
	TCase *tc = tcase_create("catalog");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_same_pid_two_hosts);
	tcase_add_test(tc, test_same_pid_two_inputs);
	tcase_add_test(tc, test_pid_reuse);
	tcase_add_test(tc, test_gpus_by_uuid);
	tcase_add_test(tc, test_device_record_late);
	tcase_add_test(tc, test_memory_peak);
	tcase_add_test(tc, test_losses_and_notices);
	tcase_add_test(tc, test_damage);
	tcase_add_test(tc, test_bounded);
	tcase_add_test(tc, test_host_names);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
