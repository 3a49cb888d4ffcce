/* Check suite for src/session/client.c and src/session/procinfo.c: standalone tracing into
 * GPUTRACE_OUTPUT, lock-free string interning under contention, fork, connection errors, process
 * info. Runs as a unit test (suite client). */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "client.h"
#include "clock.h"
#include "env.h"
#include "envconf.h"
#include "gputrace/trace.h"
#include "session.h"
#include "trace-load.h"

static char tmpdir[64];

static void setup_env(void)
{
	char pattern[128];

	strcpy(tmpdir, "/tmp/gt-client-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
	snprintf(pattern, sizeof(pattern), "%s/out-%%p", tmpdir);
	unsetenv(GT_ENV_SESSION);
	setenv(GT_ENV_OUTPUT, pattern, 1);
}

#define THREADS    4
#define PER_THREAD 5000
#define NAMES      50

struct worker {
	pthread_t th;
	struct gt_client *c;
	uint32_t tid;
	uint32_t ids[NAMES];
	unsigned failed;
};

/* Each thread interns the same NAMES strings (racing on first use) and writes one NVTX
 * mark per record naming "msg <seq % NAMES>". */
static void *worker(void *p)
{
	struct worker *w = p;
	uint32_t k;

	for (k = 0; k < PER_THREAD; k++) {
		struct gt_rec_nvtx n = {0};
		char msg[32];
		int len = snprintf(msg, sizeof(msg), "msg %u", k % NAMES);
		uint32_t id = gt_client_intern(w->c, msg, (size_t)len);

		if (k < NAMES)
			w->ids[k] = id;
		else if (w->ids[k % NAMES] != id)
			w->failed++;
		n.hdr.type = GT_REC_NVTX;
		n.hdr.size = sizeof(n);
		n.tid = w->tid;
		n.range_id = k;
		n.message_id = id;
		n.kind = GT_NVTX_MARK;
		if (gt_ring_write(gt_client_ring(w->c), &n.hdr, GT_RING_WAIT) < 0)
			w->failed++;
	}
	return NULL;
}

START_TEST(test_standalone_threads)
{
	/* _i: 0 with the writer's queue (the default), 1 writing from the drainer thread
	 * (GPUTRACE_WRITE_QUEUE=0, as src/settings/envconf.c gives it) */
	struct gt_envconf cfg;
	struct gt_client *c;
	struct worker w[THREADS];
	const char *err = NULL, *out = NULL;
	char want[128], buf[32];
	struct gt_client_options opts = {.ring_bytes = 1 << 20};
	uint64_t next[THREADS] = {0};
	struct trace t;
	uint32_t a, b;
	size_t i;
	long k;
	int j;

	gt_envconf_defaults(&cfg);
	if (_i == 1)
		ck_assert_int_eq(gt_envconf_set(&cfg, GT_ENVCONF_WRITE_QUEUE, "0", NULL), 0);
	opts.settings = &cfg;
	setup_env();
	ck_assert_int_eq(gt_client_open(&opts, &c, &err), 0);
	a = gt_client_intern(c, "alpha", 5);
	b = gt_client_intern(c, "beta", 4);
	ck_assert_uint_ne(a, GT_STRING_NONE);
	ck_assert_uint_ne(b, GT_STRING_NONE);
	ck_assert_uint_ne(a, b);
	ck_assert_uint_eq(gt_client_intern(c, "alpha", 5), a);
	ck_assert_uint_ne(gt_client_intern(c, "alph", 4), a);
	for (j = 0; j < THREADS; j++) {
		w[j] = (struct worker){.c = c, .tid = (uint32_t)j};
		ck_assert_int_eq(pthread_create(&w[j].th, NULL, worker, &w[j]), 0);
	}
	for (j = 0; j < THREADS; j++) {
		pthread_join(w[j].th, NULL);
		ck_assert_uint_eq(w[j].failed, 0);
		ck_assert_int_eq(memcmp(w[j].ids, w[0].ids, sizeof(w[0].ids)), 0);
	}
	for (j = 1; j < NAMES; j++)
		ck_assert_uint_ne(w[0].ids[j], w[0].ids[j - 1]);
	gt_client_set_exit_status(c, 7);
	ck_assert_int_eq(gt_client_close(c, &out, NULL), 0);
	snprintf(want, sizeof(want), "%s/out-%d.gtrace", tmpdir, (int)getpid());
	ck_assert_str_eq(out, want);

	trace_load(&t, want);
	k = find(&t, GT_REC_PROCESS, 0, 0);
	ck_assert_int_ge(k, 0);
	ck_assert_uint_eq(t.recs[k]->hdr.pid, (uint32_t)getpid());
	ck_assert_uint_eq(t.recs[k]->process.ppid, (uint32_t)getppid());
	ck_assert_uint_eq(t.recs[k]->process.flags, GT_PROCESS_STANDALONE);
	ck_assert_uint_eq(count(&t, GT_REC_PROCESS, 0), 1);
	ck_assert_uint_eq(count(&t, GT_REC_CLOCK, 0), 2);
	ck_assert_uint_eq(count(&t, GT_REC_NVTX, 0), THREADS * PER_THREAD);
	ck_assert_uint_eq(count(&t, GT_REC_LOSS, 0), 0);
	for (i = 0; i < t.n; i++) {
		const struct gt_rec_nvtx *n = &t.recs[i]->nvtx;

		if (n->hdr.type != GT_REC_NVTX)
			continue;
		ck_assert_uint_eq(n->range_id, next[n->tid]++);
		snprintf(buf, sizeof(buf), "msg %u", (unsigned)(n->range_id % NAMES));
		ck_assert_str_eq(gt_reader_string(t.r, n->message_id, NULL), buf);
	}
	/* each name is defined once in the file, however many threads raced for it */
	for (j = 0; j < NAMES; j++) {
		unsigned defs = 0;
		int len = snprintf(buf, sizeof(buf), "msg %d", j);

		for (i = 0; i < t.n; i++)
			defs += t.recs[i]->hdr.type == GT_REC_STRING &&
			        t.recs[i]->string.len == (uint32_t)len &&
			        memcmp(t.recs[i]->string.str, buf, (size_t)len) == 0;
		ck_assert_uint_eq(defs, 1);
	}
	k = find(&t, GT_REC_PROCESS_END, 0, 0);
	ck_assert_uint_eq(t.recs[k]->process_end.how, GT_END_EXIT);
	ck_assert_int_eq(t.recs[k]->process_end.code, 7);
	ck_assert_int_eq(k, (long)t.n - 1);
	trace_free(&t);
	unlink(want);
	rmdir(tmpdir);
}
END_TEST

/* A fork()ed child forgets the client; the parent's trace is unaffected and the child
 * leaves no file. Without an exit status the end is "unknown". */
START_TEST(test_fork_forget)
{
	struct gt_client *c;
	const char *err = NULL, *out = NULL;
	char want[128], child_file[128];
	struct trace t;
	int status;
	long k;
	pid_t pid;

	setup_env();
	ck_assert_int_eq(gt_client_open(NULL, &c, &err), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		gt_client_forget(c);
		_exit(0);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_int_eq(status, 0);
	ck_assert_uint_ne(gt_client_intern(c, "after fork", 10), GT_STRING_NONE);
	ck_assert_int_eq(gt_client_close(c, &out, NULL), 0);
	snprintf(want, sizeof(want), "%s/out-%d.gtrace", tmpdir, (int)getpid());
	snprintf(child_file, sizeof(child_file), "%s/out-%d.gtrace", tmpdir, (int)pid);
	ck_assert_str_eq(out, want);
	ck_assert_int_ne(access(child_file, F_OK), 0);
	trace_load(&t, want);
	k = find(&t, GT_REC_PROCESS_END, 0, 0);
	ck_assert_uint_eq(t.recs[k]->process_end.how, GT_END_UNKNOWN);
	ck_assert_uint_eq(count(&t, GT_REC_STRING, 0) >= 1, 1);
	trace_free(&t);
	unlink(want);
	rmdir(tmpdir);
	ck_assert_int_eq(gt_client_close(NULL, NULL, NULL), 0);
}
END_TEST


/* Write `n` NVTX marks with varied fields (so that they do not compress to nothing), each
 * waiting for ring space as CUPTI's thread does. Returns the writes that failed (no Check
 * call in between: Check records each in a file, which a file-size limit would refuse). */
static unsigned write_marks(struct gt_client *c, unsigned n)
{
	uint32_t id = gt_client_intern(c, "mark", 4);
	unsigned failed = 0;

	for (unsigned i = 0; i < n; i++) {
		struct gt_rec_nvtx m = {0};

		m.hdr.type = GT_REC_NVTX;
		m.hdr.size = sizeof(m);
		m.start_ns = gt_now_ns();
		m.end_ns = m.start_ns + (i * 2654435761u) % 100000u;
		m.range_id = i * 0x9e3779b97f4a7c15ull;
		m.message_id = id;
		m.kind = GT_NVTX_MARK;
		failed += gt_ring_write(gt_client_ring(c), &m.hdr, GT_RING_WAIT) != 0;
	}
	return failed;
}

/* A disk that takes one page and then no more (a FIFO nobody reads): the close waits for the
 * writer while it moves and gives up once nothing moved for GPUTRACE_WRITE_TIMEOUT, with one
 * line naming the file left behind. _i 0: the default queue takes every chunk, and the wait
 * that gives up is the file's close; _i 1: a queue of 4 KiB is full from the first chunk, so
 * the final drain waits for room first, and that wait gives up. */
START_TEST(test_close_stalled_writer)
{
	struct gt_client *c;
	const char *err = NULL, *out = NULL;
	char tmp[160], want[512];
	struct gt_envconf cfg;
	struct gt_client_options opts = {.settings = &cfg};
	uint64_t t0;
	int fd;

	setup_env();
	gt_envconf_defaults(&cfg);
	ck_assert_int_eq(gt_envconf_set(&cfg, GT_ENVCONF_WRITE_TIMEOUT, "0.3", NULL), 0);
	if (_i == 1)
		ck_assert_int_eq(gt_envconf_set(&cfg, GT_ENVCONF_WRITE_QUEUE, "4K", NULL), 0);
	snprintf(tmp, sizeof(tmp), "%s/out-%d.gtrace.tmp-%d", tmpdir, (int)getpid(),
	         (int)getpid());
	ck_assert_int_eq(mkfifo(tmp, 0644), 0);
	fd = open(tmp, O_RDONLY | O_NONBLOCK);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_ge(fcntl(fd, F_SETPIPE_SZ, 4096), 4096);
	ck_assert_int_eq(gt_client_open(&opts, &c, &err), 0);
	ck_assert_uint_eq(write_marks(c, 100000), 0);
	t0 = gt_now_ns();
	ck_assert_int_eq(gt_client_close(c, &out, &err), -ETIMEDOUT);
	/* (no upper bound: on a loaded machine the wait may start late; it ends, which is
	 * what matters) */
	ck_assert_uint_ge(gt_now_ns() - t0, 300000000u);
	ck_assert_str_eq(out, tmp);
	snprintf(want, sizeof(want),
	         "the trace %s/out-%d.gtrace could not be completed (its writing made no progress "
	         "for 0.3 s); what was written is in %s, which `gputrace info` reads",
	         tmpdir, (int)getpid(), tmp);
	ck_assert_str_eq(err, want);
	close(fd);
	unlink(tmp);
	rmdir(tmpdir);
}
END_TEST

/* The disk stops answering just before the end: what is left is less than a chunk, so nothing
 * was written while the program ran, and the close's own writes are the first that cannot
 * return. Its limit holds with the writer's queue (_i 0) and without it
 * (GPUTRACE_WRITE_QUEUE=0, _i 1), where the close once wrote on the exiting thread itself and
 * waited forever. */
START_TEST(test_close_stalled_final_write)
{
	struct gt_client *c;
	const char *err = NULL, *out = NULL;
	char tmp[160], want[512], page[4096];
	struct gt_envconf cfg;
	struct gt_client_options opts = {.settings = &cfg};
	int fd, wr;

	setup_env();
	gt_envconf_defaults(&cfg);
	ck_assert_int_eq(gt_envconf_set(&cfg, GT_ENVCONF_WRITE_TIMEOUT, "0.3", NULL), 0);
	if (_i == 1)
		ck_assert_int_eq(gt_envconf_set(&cfg, GT_ENVCONF_WRITE_QUEUE, "0", NULL), 0);
	snprintf(tmp, sizeof(tmp), "%s/out-%d.gtrace.tmp-%d", tmpdir, (int)getpid(),
	         (int)getpid());
	ck_assert_int_eq(mkfifo(tmp, 0644), 0);
	fd = open(tmp, O_RDONLY | O_NONBLOCK);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_ge(fcntl(fd, F_SETPIPE_SZ, 4096), 4096);
	ck_assert_int_eq(gt_client_open(&opts, &c, &err), 0);
	/* the header is in; now the pipe is filled, and nobody reads it */
	wr = open(tmp, O_WRONLY | O_NONBLOCK);
	ck_assert_int_ge(wr, 0);
	memset(page, 'x', sizeof(page));
	while (write(wr, page, sizeof(page)) > 0 || write(wr, page, 1) > 0)
		;
	ck_assert_int_eq(errno, EAGAIN);
	close(wr);
	ck_assert_uint_eq(write_marks(c, 100), 0);
	ck_assert_int_eq(gt_client_close(c, &out, &err), -ETIMEDOUT);
	ck_assert_str_eq(out, tmp);
	snprintf(want, sizeof(want),
	         "the trace %s/out-%d.gtrace could not be completed (its writing made no progress "
	         "for 0.3 s); what was written is in %s, which `gputrace info` reads",
	         tmpdir, (int)getpid(), tmp);
	ck_assert_str_eq(err, want);
	close(fd);
	unlink(tmp);
	rmdir(tmpdir);
}
END_TEST

/* A write error (here the file-size limit, as a full disk): the trace is kept under its
 * temporary name, which reads, and one line says so. */
START_TEST(test_close_write_error)
{
	struct gt_client *c;
	const char *err = NULL, *out = NULL;
	char tmp[160], want[512];
	struct gt_reader *r;
	struct rlimit lim;
	rlim_t old;
	unsigned failed;
	int rc;

	setup_env();
	snprintf(tmp, sizeof(tmp), "%s/out-%d.gtrace.tmp-%d", tmpdir, (int)getpid(),
	         (int)getpid());
	ck_assert_int_eq(gt_client_open(NULL, &c, &err), 0);
	/* after the ring (a memfd, a file too) was made: only the trace's writes fail */
	ck_assert(signal(SIGXFSZ, SIG_IGN) != SIG_ERR);
	ck_assert_int_eq(getrlimit(RLIMIT_FSIZE, &lim), 0);
	old = lim.rlim_cur;
	lim.rlim_cur = 64 * 1024;
	if (setrlimit(RLIMIT_FSIZE, &lim) < 0)
		ck_abort_msg("setrlimit: %s", strerror(errno));
	failed = write_marks(c, 300000);
	rc = gt_client_close(c, &out, &err);
	/* Check's own result file is a file too */
	lim.rlim_cur = old;
	ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &lim), 0);
	ck_assert_int_eq(rc, -EFBIG);
	ck_assert_uint_eq(failed, 0);
	ck_assert_str_eq(out, tmp);
	snprintf(want, sizeof(want),
	         "the trace %s/out-%d.gtrace could not be completed (File too large); what was "
	         "written is in %s, which `gputrace info` reads",
	         tmpdir, (int)getpid(), tmp);
	ck_assert_str_eq(err, want);
	ck_assert_int_eq(gt_reader_open(tmp, &r, &err), 0);
	ck_assert(gt_reader_status(r)->recovered);
	gt_reader_close(r);
	unlink(tmp);
	rmdir(tmpdir);
}
END_TEST

START_TEST(test_open_errors)
{
	struct gt_client *c = NULL;
	const char *err = NULL;

	setenv(GT_ENV_SESSION, "/nonexistent-gputrace/s", 1);
	ck_assert_int_eq(gt_client_open(NULL, &c, &err), -ENOENT);
	ck_assert_str_eq(err, "cannot connect to gputrace session at /nonexistent-gputrace/s: "
	                      "No such file or directory");
	ck_assert_ptr_null(c);
	unsetenv(GT_ENV_SESSION);
	setenv(GT_ENV_OUTPUT, "out-%z", 1);
	ck_assert_int_eq(gt_client_open(NULL, &c, &err), -EINVAL);
	ck_assert_str_eq(err, "bad GPUTRACE_OUTPUT pattern 'out-%z': Invalid argument");
	setenv(GT_ENV_OUTPUT, "/nonexistent-gputrace/out", 1);
	ck_assert_int_eq(gt_client_open(NULL, &c, &err), -ENOENT);
	ck_assert_str_eq(err, "cannot create trace file /nonexistent-gputrace/out.gtrace: "
	                      "No such file or directory");
	ck_assert_ptr_null(c);
	setenv(GT_ENV_OUTPUT, "out", 1);
}
END_TEST

START_TEST(test_process_info)
{
	struct gt_process_info info;
	char buf[3 * 4096 + 3], exe[4096], host[256], small[12];
	ssize_t n;

	setenv("RANK", "3", 1);
	setenv("LOCAL_RANK", "1", 1);
	setenv("WORLD_SIZE", "8", 1);
	setenv("OMPI_COMM_WORLD_RANK", "5", 1); /* takes precedence over RANK */
	setenv("SLURM_LOCALID", "x1", 1);       /* not a number: ignored */
	ck_assert_int_eq(gt_process_info_self(&info, buf, sizeof(buf)), 0);
	ck_assert_uint_eq(info.pid, (uint32_t)getpid());
	ck_assert_uint_eq(info.ppid, (uint32_t)getppid());
	ck_assert_int_eq(info.rank, 5);
	ck_assert_int_eq(info.local_rank, 1);
	ck_assert_int_eq(info.world_size, 8);
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	ck_assert_int_gt(n, 0);
	exe[n] = '\0';
	ck_assert_str_eq(info.exe, exe);
	ck_assert_int_eq(gethostname(host, sizeof(host)), 0);
	ck_assert_str_eq(info.hostname, host);
	ck_assert_ptr_nonnull(strstr(info.cmdline, "test-client"));
	unsetenv("OMPI_COMM_WORLD_RANK");
	unsetenv("RANK");
	ck_assert_int_eq(gt_process_info_self(&info, buf, sizeof(buf)), 0);
	ck_assert_int_eq(info.rank, -1);
	/* a small buffer truncates, NUL-terminated */
	ck_assert_int_eq(gt_process_info_self(&info, small, sizeof(small)), 0);
	ck_assert_uint_le(strlen(info.exe) + strlen(info.cmdline) + strlen(info.hostname) + 3,
	                  sizeof(small));
	ck_assert_int_eq(gt_process_info_self(&info, small, 2), -ENOBUFS);
}
END_TEST

static Suite *client_suite(void)
{
	Suite *s = suite_create("client");
	TCase *tc = tcase_create("client");

	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, test_standalone_threads, 0, 2);
	tcase_add_test(tc, test_fork_forget);
	tcase_add_loop_test(tc, test_close_stalled_writer, 0, 2);
	tcase_add_loop_test(tc, test_close_stalled_final_write, 0, 2);
	tcase_add_test(tc, test_close_write_error);
	tcase_add_test(tc, test_open_errors);
	tcase_add_test(tc, test_process_info);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(client_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
