/* Check suite for src/session/drain.c: pid stamping, string-id remapping across processes, late and
 * missing strings, loss accounting, corrupt and rejected rings, PROCESS_END. Runs as a unit
 * test (suite drain). */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "drain.h"
#include "gputrace/trace.h"
#include "trace-load.h"

/* Every record of a trace file, copied. */
/* Index of the STRING record defining global id `id`, or -1. */
static long find_string(struct trace *t, uint32_t id)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		if (t->recs[i]->hdr.type == GT_REC_STRING && t->recs[i]->string.id == id)
			return (long)i;
	return -1;
}

static char tmpdir[64];
static char path[128];

static struct gt_writer *open_writer(void)
{
	struct gt_trace_info info = {0};
	struct gt_writer *w;

	strcpy(tmpdir, "/tmp/gt-drain-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
	snprintf(path, sizeof(path), "%s/t.gtrace", tmpdir);
	info.hostname = "host";
	info.cmdline = "test";
	info.tool_version = "test";
	ck_assert_int_eq(gt_writer_open(path, &info, NULL, &w), 0);
	return w;
}

static void cleanup(void)
{
	unlink(path);
	rmdir(tmpdir);
}

static void put_string(struct gt_ring *ring, uint32_t id, const char *s)
{
	union {
		struct gt_rec_string s;
		uint8_t b[256];
	} u;
	size_t len = strlen(s);

	memset(&u, 0, sizeof(u));
	u.s.hdr.type = GT_REC_STRING;
	u.s.hdr.size = (uint16_t)gt_record_align(sizeof(u.s) + len);
	u.s.hdr.pid = 999;
	u.s.id = id;
	u.s.len = (uint32_t)len;
	memcpy(u.s.str, s, len);
	ck_assert_int_eq(gt_ring_write(ring, &u.s.hdr, 0), 0);
}

static void put_kernel(struct gt_ring *ring, uint32_t name_id, uint64_t start)
{
	struct gt_rec_kernel k = {0};

	k.hdr.type = GT_REC_KERNEL;
	k.hdr.size = sizeof(k);
	k.hdr.pid = 999; /* the drainer stamps the registered pid */
	k.span.start_ns = start;
	k.span.end_ns = start + 10;
	k.name_id = name_id;
	k.grid_x = 7;
	ck_assert_int_eq(gt_ring_write(ring, &k.hdr, 0), 0);
}

static void put_api(struct gt_ring *ring, uint32_t name_id)
{
	struct gt_rec_api a = {0};

	a.hdr.type = GT_REC_API;
	a.hdr.size = sizeof(a);
	a.start_ns = 5;
	a.end_ns = 6;
	a.name_id = name_id;
	ck_assert_int_eq(gt_ring_write(ring, &a.hdr, 0), 0);
}

static void put_nvtx(struct gt_ring *ring, uint32_t domain_id, uint32_t message_id)
{
	struct gt_rec_nvtx n = {0};

	n.hdr.type = GT_REC_NVTX;
	n.hdr.size = sizeof(n);
	n.domain_id = domain_id;
	n.message_id = message_id;
	ck_assert_int_eq(gt_ring_write(ring, &n.hdr, 0), 0);
}

static const struct gt_process_info info_a = {100, 1, "/bin/a", "a --x 'y z'", "hostA", 0, 0, 2};
static const struct gt_process_info info_b = {200, 100, "/bin/b", "b", "hostA", 1, 1, 2};

START_TEST(test_remap_and_end)
{
	struct gt_writer *w = open_writer();
	struct gt_drain *d;
	struct gt_drain_proc *pa, *pb;
	struct gt_ring *ra, *rb;
	struct gt_drain_stats st;
	struct trace t;
	long i, k;

	ck_assert_int_eq(gt_drain_new(w, &d), 0);
	ck_assert_int_eq(gt_ring_create(1 << 16, 100, &ra), 0);
	ck_assert_int_eq(gt_ring_create(4096, 200, &rb), 0);
	ck_assert_int_eq(gt_drain_proc_new(d, &info_a, 1000, 0, ra, NULL, &pa), 0);
	ck_assert_int_eq(gt_drain_proc_new(d, &info_b, 2000, 0, rb, NULL, &pb), 0);
	ck_assert_uint_eq(gt_drain_proc_record(pa)->hdr.pid, 100);

	/* A: string 1 before use, 2 after use, 3 never; duplicate STRING of 1 ignored */
	put_string(ra, 1, "kernA");
	put_kernel(ra, 1, 50);
	put_api(ra, 2);
	put_string(ra, 1, "kernA");
	put_string(ra, 2, "cudaLaunchKernel");
	put_nvtx(ra, 0, 3);
	/* 6 ring records; the duplicate STRING is not written */
	ck_assert_int_eq(gt_drain_proc_run(pa, 0, false), 5);
	/* B: the same content under another local id maps to the same global id */
	put_string(rb, 5, "kernA");
	put_kernel(rb, 5, 60);
	/* B drops exactly: fill its 4 KiB ring (kernel slot 8 + 128 bytes) */
	{
		int ok = 0, fail = 0, j;
		struct gt_rec_kernel kk = {0};

		kk.hdr.type = GT_REC_KERNEL;
		kk.hdr.size = sizeof(kk);
		for (j = 0; j < 40; j++)
			if (gt_ring_write(rb, &kk.hdr, 0) == 0)
				ok++;
			else
				fail++;
		ck_assert_int_eq(fail, 40 - ok);
		/* and one torn reservation */
		ck_assert_int_eq(gt_drain_proc_run(pb, 0, false), 2 + ok);
		ck_assert_ptr_nonnull(gt_ring_reserve(rb, GT_REC_KERNEL, sizeof(kk), 0));
		put_kernel(rb, 5, 70);
		ck_assert_int_eq(gt_drain_proc_finish(pb, GT_END_SIGNAL, 9, 0, true), 0);
		ck_assert_int_eq(gt_drain_proc_finish(pa, GT_END_EXIT, 3, 0, true), 0);
		gt_drain_stats(d, &st);
		ck_assert_uint_eq(st.processes, 2);
		ck_assert_uint_eq(st.dropped, (uint64_t)fail);
		ck_assert_uint_eq(st.torn, 1);
		ck_assert_uint_eq(st.corrupt, 0);
		/* A: 2 strings + 3 records; B: 1 string + 1 + ok + 1 kernels */
		ck_assert_uint_eq(st.records, 5 + 3 + (uint64_t)ok);
		gt_drain_free(d);
		ck_assert_int_eq(gt_writer_close(w), 0);

		trace_load(&t, path);
		/* processes */
		i = find(&t, GT_REC_PROCESS, 100, 0);
		ck_assert_int_ge(i, 0);
		ck_assert_uint_eq(t.recs[i]->process.ppid, 1);
		ck_assert_uint_eq(t.recs[i]->process.start_ns, 1000);
		ck_assert_str_eq(str(&t, t.recs[i]->process.exe_id), "/bin/a");
		ck_assert_str_eq(str(&t, t.recs[i]->process.cmdline_id), "a --x 'y z'");
		ck_assert_str_eq(str(&t, t.recs[i]->process.host_id), "hostA");
		ck_assert_int_eq(t.recs[i]->process.world_size, 2);
		i = find(&t, GT_REC_PROCESS, 200, 0);
		ck_assert_uint_eq(t.recs[i]->process.ppid, 100);
		ck_assert_int_eq(t.recs[i]->process.rank, 1);
		/* A's kernel: pid stamped, name resolves, its STRING came first */
		i = find(&t, GT_REC_KERNEL, 100, 0);
		ck_assert_int_ge(i, 0);
		ck_assert_uint_eq(t.recs[i]->kernel.grid_x, 7);
		ck_assert_str_eq(str(&t, t.recs[i]->kernel.name_id), "kernA");
		ck_assert_int_lt(find_string(&t, t.recs[i]->kernel.name_id), i);
		k = find(&t, GT_REC_KERNEL, 200, 0);
		ck_assert_uint_eq(t.recs[k]->kernel.name_id, t.recs[i]->kernel.name_id);
		ck_assert_uint_eq(count(&t, GT_REC_KERNEL, 999), 0);
		ck_assert_uint_eq(count(&t, GT_REC_KERNEL, 100), 1);
		ck_assert_uint_eq(count(&t, GT_REC_KERNEL, 200), 2 + (unsigned)ok);
		/* the late string and the missing one */
		i = find(&t, GT_REC_API, 100, 0);
		ck_assert_str_eq(str(&t, t.recs[i]->api.name_id), "cudaLaunchKernel");
		i = find(&t, GT_REC_NVTX, 100, 0);
		ck_assert_uint_eq(t.recs[i]->nvtx.domain_id, 0);
		ck_assert_str_eq(str(&t, t.recs[i]->nvtx.message_id), GT_DRAIN_UNKNOWN_STRING);
		/* "kernA" is defined once in the whole trace */
		{
			unsigned defs = 0;
			size_t m;

			for (m = 0; m < t.n; m++)
				defs += t.recs[m]->hdr.type == GT_REC_STRING &&
				        t.recs[m]->string.len == 5 &&
				        memcmp(t.recs[m]->string.str, "kernA", 5) == 0;
			ck_assert_uint_eq(defs, 1);
		}
		/* losses and ends */
		ck_assert_uint_eq(count(&t, GT_REC_LOSS, 100), 0);
		ck_assert_uint_eq(count(&t, GT_REC_LOSS, 200), 2);
		i = find(&t, GT_REC_LOSS, 200, 0);
		ck_assert_uint_eq(t.recs[i]->loss.source, GT_LOSS_RING_FULL);
		ck_assert_uint_eq(t.recs[i]->loss.kind, GT_REC_KERNEL);
		ck_assert_uint_eq(t.recs[i]->loss.count, (uint64_t)fail);
		i = find(&t, GT_REC_LOSS, 200, 1);
		ck_assert_uint_eq(t.recs[i]->loss.source, GT_LOSS_TORN);
		ck_assert_uint_eq(t.recs[i]->loss.count, 1);
		i = find(&t, GT_REC_PROCESS_END, 100, 0);
		ck_assert_uint_eq(t.recs[i]->process_end.how, GT_END_EXIT);
		ck_assert_int_eq(t.recs[i]->process_end.code, 3);
		ck_assert_int_eq(i, (long)t.n - 1);
		i = find(&t, GT_REC_PROCESS_END, 200, 0);
		ck_assert_uint_eq(t.recs[i]->process_end.how, GT_END_SIGNAL);
		ck_assert_int_eq(t.recs[i]->process_end.code, 9);
		ck_assert_uint_eq(
		        count(&t, GT_REC_PROCESS_END, 100) + count(&t, GT_REC_PROCESS_END, 200), 2);
		trace_free(&t);
	}
	cleanup();
}
END_TEST

/* One process's ring turns corrupt (record length, then its head index) and another's is
 * rejected at attach: each gets its own error, and the healthy process is complete. */
START_TEST(test_corrupt_isolated)
{
	struct gt_writer *w = open_writer();
	struct gt_drain *d;
	struct gt_drain_proc *pa, *pb, *pc;
	struct gt_ring *ra, *rb;
	struct gt_drain_stats st;
	struct trace t;
	uint8_t *data;
	long i;
	int j;

	ck_assert_int_eq(gt_drain_new(w, &d), 0);
	ck_assert_int_eq(gt_ring_create(4096, 100, &ra), 0);
	ck_assert_int_eq(gt_ring_create(4096, 200, &rb), 0);
	ck_assert_int_eq(gt_drain_proc_new(d, &info_a, 1, 0, ra, NULL, &pa), 0);
	ck_assert_int_eq(gt_drain_proc_new(d, &info_b, 2, 0, rb, NULL, &pb), 0);
	ck_assert_int_eq(
	        gt_drain_proc_new(d, &(struct gt_process_info){300, 1, "c", "c", "h", -1, -1, -1},
	                          3, 0, NULL,
	                          "ring of process 300 rejected: ring header: bad magic", &pc),
	        0);
	ck_assert_ptr_null(gt_drain_proc_ring(pc));

	data = (uint8_t *)gt_ring_header(ra) + gt_ring_header(ra)->data_offset;
	put_kernel(ra, 0, 1);
	put_kernel(ra, 0, 2);
	put_kernel(ra, 0, 3);
	/* the second kernel's length */
	((struct gt_rec_hdr *)(data + 8 + sizeof(struct gt_rec_kernel) + 8))->size = 16;
	for (j = 0; j < 5; j++)
		put_kernel(rb, 0, (uint64_t)j);
	ck_assert_int_eq(gt_drain_proc_run(pa, 0, false), 2);
	ck_assert_int_eq(gt_drain_proc_run(pb, 0, false), 5);
	/* now A's head jumps: A is given up, B carries on */
	put_kernel(ra, 0, 4);
	atomic_store(&gt_ring_header(ra)->head, 1ull << 33);
	for (j = 5; j < 10; j++)
		put_kernel(rb, 0, (uint64_t)j);
	ck_assert_int_eq(gt_drain_proc_run(pa, 0, false), 0);
	ck_assert_ptr_null(gt_drain_proc_ring(pa));
	ck_assert_int_eq(gt_drain_proc_run(pa, 0, false), 0);
	ck_assert_int_eq(gt_drain_proc_run(pb, 0, false), 5);
	gt_drain_free(d); /* finishes all three as unknown */
	ck_assert_int_eq(gt_writer_close(w), 0);

	trace_load(&t, path);
	ck_assert_uint_eq(count(&t, GT_REC_KERNEL, 100), 2);
	ck_assert_uint_eq(count(&t, GT_REC_KERNEL, 200), 10);
	for (j = 0; j < 10; j++)
		ck_assert_uint_eq(
		        t.recs[find(&t, GT_REC_KERNEL, 200, (unsigned)j)]->kernel.span.start_ns,
		        (uint64_t)j);
	i = find(&t, GT_REC_NOTICE, 100, 0);
	ck_assert_int_ge(i, 0);
	ck_assert_uint_eq(t.recs[i]->notice.severity, GT_NOTICE_ERROR);
	ck_assert_str_eq(
	        str(&t, t.recs[i]->notice.message_id),
	        "ring corrupt (head index out of range): later records of this process are lost");
	/* corrupt: one record + the ring given up */
	i = find(&t, GT_REC_LOSS, 100, 0);
	ck_assert_uint_eq(t.recs[i]->loss.source, GT_LOSS_CORRUPT);
	ck_assert_uint_eq(t.recs[i]->loss.count, 2);
	ck_assert_uint_eq(count(&t, GT_REC_NOTICE, 200), 0);
	ck_assert_uint_eq(count(&t, GT_REC_LOSS, 200), 0);
	i = find(&t, GT_REC_NOTICE, 300, 0);
	ck_assert_str_eq(str(&t, t.recs[i]->notice.message_id),
	                 "ring of process 300 rejected: ring header: bad magic");
	for (j = 100; j <= 300; j += 100) {
		i = find(&t, GT_REC_PROCESS_END, (uint32_t)j, 0);
		ck_assert_int_ge(i, 0);
		ck_assert_uint_eq(t.recs[i]->process_end.how, GT_END_UNKNOWN);
	}
	(void)st;
	trace_free(&t);
	cleanup();
}
END_TEST

/* A process that detaches writes its own PROCESS_END into the ring: that one is kept. */
START_TEST(test_detached_end)
{
	struct gt_writer *w = open_writer();
	struct gt_drain *d;
	struct gt_drain_proc *pa;
	struct gt_ring *ra;
	struct gt_rec_process_end e = {0};
	struct trace t;
	long i;

	ck_assert_int_eq(gt_drain_new(w, &d), 0);
	ck_assert_int_eq(gt_ring_create(4096, 100, &ra), 0);
	ck_assert_int_eq(gt_drain_proc_new(d, &info_a, 1, 0, ra, NULL, &pa), 0);
	e.hdr.type = GT_REC_PROCESS_END;
	e.hdr.size = sizeof(e);
	e.ts_ns = 777;
	e.how = GT_END_DETACHED;
	e.code = 12;
	ck_assert_int_eq(gt_ring_write(ra, &e.hdr, 0), 0);
	ck_assert_int_eq(gt_drain_proc_finish(pa, GT_END_EXIT, 0, 0, true), 0);
	gt_drain_free(d);
	ck_assert_int_eq(gt_writer_close(w), 0);
	trace_load(&t, path);
	ck_assert_uint_eq(count(&t, GT_REC_PROCESS_END, 100), 1);
	i = find(&t, GT_REC_PROCESS_END, 100, 0);
	ck_assert_uint_eq(t.recs[i]->process_end.how, GT_END_DETACHED);
	ck_assert_int_eq(t.recs[i]->process_end.code, 12);
	ck_assert_uint_eq(t.recs[i]->process_end.ts_ns, 777);
	trace_free(&t);
	cleanup();
}
END_TEST

/* The descriptor this process has open for writing on `file`, or -1. */
static int write_fd_of(const char *file)
{
	DIR *dir = opendir("/proc/self/fd");
	struct dirent *e;
	char link[300], target[PATH_MAX];
	int fd = -1;

	ck_assert_ptr_nonnull(dir);
	while (fd < 0 && (e = readdir(dir))) {
		ssize_t n;
		int cand = atoi(e->d_name);

		snprintf(link, sizeof(link), "/proc/self/fd/%s", e->d_name);
		n = readlink(link, target, sizeof(target) - 1);
		if (n <= 0 || e->d_name[0] == '.')
			continue;
		target[n] = '\0';
		if (strcmp(target, file) == 0 && (fcntl(cand, F_GETFL) & O_ACCMODE) == O_WRONLY)
			fd = cand;
	}
	closedir(dir);
	return fd;
}

/* A write that fails with EAGAIN (the trace file is a full pipe opened non-blocking) is the
 * writer's error like any other: the pass reports it. It used to read as "the writer's queue
 * is full", so the pass returned success and each later pass lost a record uncounted. */
START_TEST(test_writer_eagain)
{
	struct gt_writer_options wo = {.chunk_bytes = 4096};
	struct gt_trace_info info = {.hostname = "host", .cmdline = "test"};
	struct gt_writer *w;
	struct gt_drain *d;
	struct gt_drain_proc *pa;
	struct gt_ring *ra;
	char fifo[192];
	int rd, wr;

	strcpy(tmpdir, "/tmp/gt-drain-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
	snprintf(path, sizeof(path), "%s/t.gtrace", tmpdir);
	/* the writer's temporary name, made a FIFO of one page that nobody reads */
	snprintf(fifo, sizeof(fifo), "%s.tmp-%d", path, (int)getpid());
	ck_assert_int_eq(mkfifo(fifo, 0644), 0);
	rd = open(fifo, O_RDONLY | O_NONBLOCK);
	ck_assert_int_ge(rd, 0);
	ck_assert_int_ge(fcntl(rd, F_SETPIPE_SZ, 4096), 4096);
	ck_assert_int_eq(gt_writer_open(path, &info, &wo, &w), 0);
	wr = write_fd_of(fifo);
	ck_assert_int_ge(wr, 0);
	ck_assert_int_eq(fcntl(wr, F_SETFL, fcntl(wr, F_GETFL) | O_NONBLOCK), 0);
	ck_assert_int_eq(gt_drain_new(w, &d), 0);
	ck_assert_int_eq(gt_ring_create(1u << 20, 100, &ra), 0);
	ck_assert_int_eq(gt_drain_proc_new(d, &info_a, 1, 0, ra, NULL, &pa), 0);
	/* kernels at random times, so that the chunks do not compress to nothing: far more
	 * than the page the pipe takes */
	for (uint64_t i = 0, x = 88172645463325252ull; i < 5000; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		put_kernel(ra, 0, x >> 8);
	}
	ck_assert_int_eq(gt_drain_proc_run(pa, 0, true), -EAGAIN);
	ck_assert_int_eq(gt_drain_proc_finish(pa, GT_END_EXIT, 0, 0, true), -EAGAIN);
	gt_drain_free(d);
	/* the writer removes its temporary file (the FIFO) on an error */
	ck_assert_int_eq(gt_writer_close(w), -EAGAIN);
	ck_assert_int_ne(access(fifo, F_OK), 0);
	close(rd);
	rmdir(tmpdir);
}
END_TEST

/* What a tap saw: records by type and pid, the strings, the last pass per process. */
struct seen {
	uint64_t records[GT_REC_MAX];
	uint64_t strings;
	uint32_t string_id[16];
	char string[16][32];
	uint32_t api_name; /* the API record's name id, and whether its string had come */
	bool api_name_known;
	uint64_t passes, last_dropped[2]; /* [0] pid 100, [1] pid 200 */
};

static void seen_record(void *ctx, const struct gt_rec_hdr *rec)
{
	struct seen *s = ctx;

	ck_assert_uint_lt(rec->type, GT_REC_MAX);
	ck_assert_uint_ne(rec->type, GT_REC_STRING);
	ck_assert(rec->pid == 100 || rec->pid == 200);
	s->records[rec->type]++;
	if (rec->type == GT_REC_API) {
		s->api_name = ((const struct gt_rec_api *)rec)->name_id;
		for (uint64_t i = 0; i < s->strings; i++)
			s->api_name_known |= s->string_id[i] == s->api_name;
	}
}

static void seen_string(void *ctx, uint32_t pid, uint32_t id, const char *str, size_t len)
{
	struct seen *s = ctx;

	ck_assert(pid == 100 || pid == 200);
	ck_assert_uint_lt(s->strings, 16);
	ck_assert_uint_lt(len, 32);
	s->string_id[s->strings] = id;
	memcpy(s->string[s->strings], str, len);
	s->string[s->strings][len] = '\0';
	s->strings++;
}

static void seen_pass(void *ctx, uint32_t pid, uint64_t ring_dropped)
{
	struct seen *s = ctx;

	s->passes++;
	s->last_dropped[pid == 200] = ring_dropped;
}

/* The tap sees every record and string the file gets, global ids and all, a string that
 * came late after the record naming it, and the ring's drops at the end of each pass. */
START_TEST(test_tap)
{
	struct gt_writer *w = open_writer();
	struct seen seen = {0};
	struct gt_drain_tap tap = {seen_record, seen_string, seen_pass, &seen};
	struct gt_drain *d;
	struct gt_drain_proc *pa, *pb;
	struct gt_ring *ra, *rb;
	struct gt_rec_kernel kk = {0};
	struct trace t;
	int fail = 0;

	ck_assert_int_eq(gt_drain_new(w, &d), 0);
	gt_drain_set_tap(d, &tap);
	ck_assert_int_eq(gt_ring_create(1 << 16, 100, &ra), 0);
	ck_assert_int_eq(gt_ring_create(4096, 200, &rb), 0);
	ck_assert_int_eq(gt_drain_proc_new(d, &info_a, 1000, 0, ra, NULL, &pa), 0);
	ck_assert_int_eq(gt_drain_proc_new(d, &info_b, 2000, 0, rb, NULL, &pb), 0);
	put_string(ra, 1, "kernA");
	put_kernel(ra, 1, 50);
	put_api(ra, 2);
	put_string(ra, 2, "cudaLaunchKernel");
	ck_assert_int_eq(gt_drain_proc_run(pa, 0, false), 4);
	ck_assert_uint_eq(seen.passes, 1);
	ck_assert_uint_eq(seen.last_dropped[0], 0);
	ck_assert(!seen.api_name_known);
	ck_assert_uint_eq(seen.string_id[seen.strings - 1], seen.api_name);
	ck_assert_str_eq(seen.string[seen.strings - 1], "cudaLaunchKernel");
	kk.hdr.type = GT_REC_KERNEL;
	kk.hdr.size = sizeof(kk);
	for (int j = 0; j < 40; j++)
		fail += gt_ring_write(rb, &kk.hdr, 0) != 0;
	ck_assert_int_gt(fail, 0);
	ck_assert_int_gt(gt_drain_proc_run(pb, 0, false), 0);
	ck_assert_uint_eq(seen.passes, 2);
	ck_assert_uint_eq(seen.last_dropped[1], (uint64_t)fail);
	ck_assert_int_eq(gt_drain_proc_finish(pb, GT_END_EXIT, 0, 0, true), 0);
	ck_assert_uint_eq(seen.last_dropped[1], 0);
	ck_assert_int_eq(gt_drain_proc_finish(pa, GT_END_EXIT, 0, 0, true), 0);
	gt_drain_free(d);
	ck_assert_int_eq(gt_writer_close(w), 0);

	trace_load(&t, path);
	for (unsigned type = 0; type < GT_REC_MAX; type++) {
		uint64_t n = 0;

		for (size_t i = 0; i < t.n; i++)
			n += t.recs[i]->hdr.type == type;
		if (type == GT_REC_STRING)
			ck_assert_uint_eq(seen.strings, n);
		else
			ck_assert_msg(seen.records[type] == n, "%s: tap %llu, file %llu",
			              gt_record_name(type), (unsigned long long)seen.records[type],
			              (unsigned long long)n);
	}
	ck_assert_uint_eq(seen.records[GT_REC_LOSS], 1);
	ck_assert_uint_eq(seen.records[GT_REC_PROCESS], 2);
	ck_assert_uint_eq(seen.records[GT_REC_PROCESS_END], 2);
	for (uint64_t i = 0; i < seen.strings; i++)
		ck_assert_str_eq(str(&t, seen.string_id[i]), seen.string[i]);
	trace_free(&t);
	cleanup();
}
END_TEST

static Suite *drain_suite(void)
{
	Suite *s = suite_create("drain");
	TCase *tc = tcase_create("drain");

	tcase_add_test(tc, test_remap_and_end);
	tcase_add_test(tc, test_corrupt_isolated);
	tcase_add_test(tc, test_detached_end);
	tcase_add_test(tc, test_writer_eagain);
	tcase_add_test(tc, test_tap);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(drain_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
