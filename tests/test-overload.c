/* Check suite 'reliability': overload without a GPU. A producer that writes far faster than
 * the drainer can keep up with a 4 KiB ring runs under `gputrace run`: no hang, no crash,
 * exit status 0, and every record accounted for exactly (written = in the trace + counted
 * as dropped, per record kind), with the losses printed by the summary and `gputrace info`.
 * A control run with a ring large enough shows no loss at all.
 *
 * The same binary is the producer: `test-overload produce RESULT THREADS RECORDS WAITREC`
 * registers through gt_client_open() (the session `gputrace run` set up), starts THREADS
 * threads that each write RECORDS NVTX marks without waiting (what application threads do)
 * and one that writes WAITREC kernel records with GT_RING_WAIT (CUPTI's buffer thread),
 * then writes what it counted to RESULT. The first half of every thread's records is written
 * while gputrace (its parent) is stopped (SIGSTOP), so that records are dropped whatever the
 * scheduler does; the second half races a running drainer. Runs as a unit test and as the
 * traced program. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "client.h"
#include "clock.h"
#include "env.h"
#include "envconf.h"
#include "gputrace/trace.h"

#define MAX_THREADS  8
/* A run that takes longer has hung (a hang detector, below the test case's own timeout). */
#define RUN_DEADLINE (280ull * 1000000000ull)

/* ---- the producer ------------------------------------------------------------------ */

struct producer {
	struct gt_ring *ring;
	uint32_t pid, msg_id;
	uint64_t records;
	bool wait;                  /* GT_RING_WAIT kernel records instead of NVTX marks */
	pthread_barrier_t *halfway; /* NULL, or met after the first half of the records */
	/* results */
	uint64_t ok, dropped, elapsed_ns, max_call_ns;
};

static void *produce_thread(void *arg)
{
	struct producer *p = arg;
	uint64_t t0 = gt_now_ns();

	for (uint64_t i = 0; i < p->records; i++) {
		if (p->halfway && i == p->records / 2)
			pthread_barrier_wait(p->halfway);
		uint64_t before = p->wait ? gt_now_ns() : 0;
		int r;

		if (p->wait) {
			struct gt_rec_kernel k = {0};

			k.hdr.type = GT_REC_KERNEL;
			k.hdr.size = sizeof(k);
			k.hdr.pid = p->pid;
			k.span.start_ns = before;
			k.span.end_ns = before + 1000;
			k.span.correlation_id = (uint32_t)i + 1;
			k.name_id = p->msg_id;
			k.grid_x = k.grid_y = k.grid_z = 1;
			k.block_x = 128;
			k.block_y = k.block_z = 1;
			r = gt_ring_write(p->ring, &k.hdr, GT_RING_WAIT);
			if (gt_now_ns() - before > p->max_call_ns)
				p->max_call_ns = gt_now_ns() - before;
		} else {
			struct gt_rec_nvtx n = {0};

			n.hdr.type = GT_REC_NVTX;
			n.hdr.size = sizeof(n);
			n.hdr.pid = p->pid;
			n.start_ns = n.end_ns = t0 + i;
			n.range_id = i;
			n.message_id = p->msg_id;
			n.kind = GT_NVTX_MARK;
			r = gt_ring_write(p->ring, &n.hdr, 0);
		}
		if (r == 0)
			p->ok++;
		else if (r == -ENOSPC)
			p->dropped++;
		else
			abort(); /* not a documented result: let the test see a crash */
	}
	if (p->halfway && p->records == 0)
		pthread_barrier_wait(p->halfway);
	p->elapsed_ns = gt_now_ns() - t0;
	return NULL;
}

/* GPUTRACE_BUFFER_SIZE, which gputrace run sets from --buffer-size as given, read as the
 * injection library reads it (src/settings/envconf.c); 0: the default. */
static size_t ring_bytes_from_env(void)
{
	const char *v = getenv(GT_ENV_BUFFER_SIZE);
	struct gt_envconf cfg;

	gt_envconf_defaults(&cfg);
	if (v && *v)
		gt_envconf_set(&cfg, GT_ENVCONF_BUFFER_SIZE, v, NULL);
	return cfg.ring_bytes;
}

static int produce(int argc, char **argv)
{
	struct gt_client_options opts = {0};
	struct producer p[MAX_THREADS + 1] = {0};
	struct rlimit lim;
	pthread_t th[MAX_THREADS + 1];
	pthread_barrier_t halfway;
	const char *err = NULL;
	bool stop = getenv("GT_TEST_STOP_DRAINER") != NULL;
	struct gt_client *c;
	unsigned threads;
	uint64_t records, waitrec;
	uint32_t id;
	FILE *f;

	if (argc != 6)
		return 2;
	threads = (unsigned)atoi(argv[3]);
	records = strtoull(argv[4], NULL, 10);
	waitrec = strtoull(argv[5], NULL, 10);
	if (threads < 1 || threads > MAX_THREADS)
		return 2;
	/* The disk-full test limits the CLI's file size (RLIMIT_FSIZE, soft): the memfd of
	 * the ring is a file too, so lift the soft limit back to the hard one here. */
	if (getrlimit(RLIMIT_FSIZE, &lim) == 0 && lim.rlim_cur != lim.rlim_max) {
		lim.rlim_cur = lim.rlim_max;
		setrlimit(RLIMIT_FSIZE, &lim);
	}
	opts.ring_bytes = ring_bytes_from_env();
	if (gt_client_open(&opts, &c, &err) < 0) {
		fprintf(stderr, "test-overload: %s\n", err);
		return 3;
	}
	/* Interned while the ring is empty, so it cannot be dropped. */
	id = gt_client_intern(c, "overload", 8);
	if (id == GT_STRING_NONE)
		return 4;
	/* The drainer (gputrace, our parent) stopped for the first half: the ring fills and
	 * drops, deterministically; the second half races it running again. */
	if (stop) {
		if (pthread_barrier_init(&halfway, NULL, threads + 2) != 0 ||
		    kill(getppid(), SIGSTOP) != 0)
			return 5;
	}
	for (unsigned i = 0; i <= threads; i++) {
		p[i].ring = gt_client_ring(c);
		p[i].pid = (uint32_t)getpid();
		p[i].msg_id = id;
		p[i].wait = i == threads;
		p[i].records = i == threads ? waitrec : records;
		p[i].halfway = stop ? &halfway : NULL;
		if (pthread_create(&th[i], NULL, produce_thread, &p[i]) != 0)
			return 5;
	}
	if (stop) {
		pthread_barrier_wait(&halfway);
		kill(getppid(), SIGCONT);
	}
	for (unsigned i = 0; i <= threads; i++)
		pthread_join(th[i], NULL);

	f = fopen(argv[2], "w");
	if (!f)
		return 6;
	fprintf(f, "pid %d\nwaits %" PRIu64 "\n", (int)getpid(),
	        (uint64_t)atomic_load(&gt_ring_header(gt_client_ring(c))->waits));
	for (unsigned i = 0; i <= threads; i++)
		fprintf(f, "%s %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 "\n",
		        p[i].wait ? "wait" : "nvtx", p[i].ok, p[i].dropped, p[i].elapsed_ns,
		        p[i].max_call_ns);
	if (fclose(f) != 0)
		return 6;
	gt_client_set_exit_status(c, 0);
	return gt_client_close(c, NULL, NULL) < 0 ? 7 : 0;
}

/* Wait until the consumer has read everything written so far, however long that takes on a
 * loaded machine (a consumer that died hangs this program: the test's deadline says so). */
static int wait_drained(struct gt_ring *ring)
{
	struct gt_ring_header *h = gt_ring_header(ring);

	while (atomic_load(&h->tail) != atomic_load(&h->head))
		usleep(1000);
	return 0;
}

/* Write RESULT whole or not at all: the test reads it as soon as it appears. */
static int write_result(const char *path, const char *text)
{
	char tmp[4200];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.part", path);
	f = fopen(tmp, "w");
	if (!f || fputs(text, f) < 0 || fclose(f) != 0)
		return -1;
	return rename(tmp, path);
}

static bool exists(const char *path)
{
	return access(path, F_OK) == 0;
}

/* `test-overload orphan RESULT READY GO BEFORE AFTER WAITREC`: write BEFORE marks in bursts
 * the drainer keeps up with, create READY once all are drained, wait for GO (the test kills
 * the CLI in between), then write AFTER marks into a ring nobody drains any more and
 * WAITREC kernel records with GT_RING_WAIT (as CUPTI's buffer thread would), close and
 * report. */
static int orphan(int argc, char **argv)
{
	struct gt_client_options opts = {0};
	const char *err = NULL;
	struct gt_client *c;
	struct gt_ring *ring;
	uint64_t before, after, waitrec, ok = 0, dropped = 0, t0, waits;
	char text[4200];
	struct producer w = {0};
	uint32_t id;
	int closed;
	FILE *f;

	if (argc != 8)
		return 2;
	before = strtoull(argv[5], NULL, 10);
	after = strtoull(argv[6], NULL, 10);
	waitrec = strtoull(argv[7], NULL, 10);
	opts.ring_bytes = ring_bytes_from_env();
	if (gt_client_open(&opts, &c, &err) < 0) {
		fprintf(stderr, "test-overload: %s\n", err);
		return 3;
	}
	ring = gt_client_ring(c);
	id = gt_client_intern(c, "orphan", 6);
	for (uint64_t i = 0; i < before + after; i++) {
		struct gt_rec_nvtx n = {0};

		if (i < before && i % 10000 == 0 && wait_drained(ring) < 0)
			return 4;
		if (i == before) {
			if (wait_drained(ring) < 0)
				return 4;
			f = fopen(argv[3], "w");
			if (!f || fclose(f) != 0)
				return 5;
			while (!exists(argv[4]))
				usleep(1000);
		}
		n.hdr.type = GT_REC_NVTX;
		n.hdr.size = sizeof(n);
		n.hdr.pid = (uint32_t)getpid();
		n.start_ns = n.end_ns = gt_now_ns();
		n.range_id = i;
		n.message_id = id;
		n.kind = GT_NVTX_MARK;
		if (gt_ring_write(ring, &n.hdr, 0) == 0)
			ok++;
		else
			dropped++;
	}
	/* CUPTI's buffer thread, delivering a buffer into the full ring nobody drains. */
	w.ring = ring;
	w.pid = (uint32_t)getpid();
	w.msg_id = id;
	w.wait = true;
	w.records = waitrec;
	waits = atomic_load(&gt_ring_header(ring)->waits);
	t0 = gt_now_ns();
	produce_thread(&w);
	w.elapsed_ns = gt_now_ns() - t0;
	waits = atomic_load(&gt_ring_header(ring)->waits) - waits;
	gt_client_set_exit_status(c, 0);
	/* The session is gone: goodbye fails quietly, the close must still be bounded. */
	closed = gt_client_close(c, NULL, NULL);
	snprintf(text, sizeof(text),
	         "pid %d\nnvtx %" PRIu64 " %" PRIu64 " 0 0\nwait %" PRIu64 " %" PRIu64 " %" PRIu64
	         " %" PRIu64 "\nwaits %" PRIu64 "\nclosed %d\nsession %s\n",
	         (int)getpid(), ok, dropped, w.ok, w.dropped, w.elapsed_ns, w.max_call_ns, waits,
	         closed, getenv(GT_ENV_SESSION));
	return write_result(argv[2], text) < 0 ? 7 : 0;
}

/* ---- the test ------------------------------------------------------------------------ */

struct counted {
	int pid;
	uint64_t waits; /* reservations that waited for space (the ring's count) */
	uint64_t nvtx_ok, nvtx_dropped, wait_ok, wait_dropped;
	uint64_t nvtx_ns, nvtx_records, max_wait_ns;
};

/* One directory per test under one per run: main() removes the run's whole directory at
 * the end, so a failed test (whose teardown never runs) leaves nothing behind. */
static char basedir[64], tmpdir[96];

static void setup(void)
{
	char lib[128];
	int fd;

	snprintf(tmpdir, sizeof(tmpdir), "%s/XXXXXX", basedir);
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
	/* A placeholder injection library: nothing here initializes CUDA, so the driver
	 * never opens it, but `gputrace run` refuses to start without one. */
	snprintf(lib, sizeof(lib), "%s/libgputrace-inject.so", tmpdir);
	fd = open(lib, O_CREAT | O_WRONLY, 0644);
	ck_assert_int_ge(fd, 0);
	close(fd);
	setenv("GPUTRACE_INJECT_LIB", lib, 1);
}

static void teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "test-overload: could not remove %s\n", tmpdir);
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = calloc(1, 1 << 20);
	size_t n;

	ck_assert_ptr_nonnull(f);
	ck_assert_ptr_nonnull(buf);
	n = fread(buf, 1, (1 << 20) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

/* Run argv with stdout/stderr to tmpdir/out and tmpdir/err; fails the test on a hang.
 * fsize > 0 limits the size of the files it writes (soft RLIMIT_FSIZE, SIGXFSZ ignored):
 * writes past it fail with EFBIG, the way they fail with ENOSPC on a full disk.
 * Returns the exit status. */
static int run_limited(char *const argv[], rlim_t fsize)
{
	char out[128], err[128];
	uint64_t deadline = gt_now_ns() + RUN_DEADLINE;
	pid_t pid;
	int st;

	snprintf(out, sizeof(out), "%s/out", tmpdir);
	snprintf(err, sizeof(err), "%s/err", tmpdir);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int o = open(out, O_CREAT | O_TRUNC | O_WRONLY, 0644);
		int e = open(err, O_CREAT | O_TRUNC | O_WRONLY, 0644);

		if (o < 0 || e < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0 || chdir(tmpdir) < 0)
			_exit(120);
		if (fsize) {
			struct rlimit lim;

			if (getrlimit(RLIMIT_FSIZE, &lim) < 0)
				_exit(122);
			lim.rlim_cur = fsize;
			if (setrlimit(RLIMIT_FSIZE, &lim) < 0 ||
			    signal(SIGXFSZ, SIG_IGN) == SIG_ERR)
				_exit(122);
		}
		execv(argv[0], argv);
		_exit(121);
	}
	for (;;) {
		pid_t w = waitpid(pid, &st, WNOHANG);

		if (w == pid)
			break;
		ck_assert_int_eq(w, 0);
		if (gt_now_ns() > deadline) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			ck_abort_msg("'%s %s' still running after %llu s: a hang", argv[0], argv[1],
			             RUN_DEADLINE / 1000000000ull);
		}
		usleep(20000);
	}
	ck_assert_msg(WIFEXITED(st), "'%s %s' killed by signal %d", argv[0], argv[1],
	              WIFSIGNALED(st) ? WTERMSIG(st) : 0);
	return WEXITSTATUS(st);
}

static int run(char *const argv[])
{
	return run_limited(argv, 0);
}

static void read_result(const char *path, struct counted *c)
{
	char *text = slurp(path), *line, *save = NULL;

	memset(c, 0, sizeof(*c));
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char kind[8];
		uint64_t ok, dropped, ns, max;

		if (sscanf(line, "pid %d", &c->pid) == 1)
			continue;
		if (sscanf(line, "waits %" SCNu64, &c->waits) == 1)
			continue;
		ck_assert_int_eq(sscanf(line, "%7s %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64,
		                        kind, &ok, &dropped, &ns, &max),
		                 5);
		if (strcmp(kind, "wait") == 0) {
			c->wait_ok += ok;
			c->wait_dropped += dropped;
			c->max_wait_ns = max;
		} else {
			c->nvtx_ok += ok;
			c->nvtx_dropped += dropped;
			c->nvtx_ns += ns;
			c->nvtx_records += ok + dropped;
		}
	}
	free(text);
	ck_assert_int_gt(c->pid, 0);
}

/* What the trace holds for the producer: records by kind, losses by source and kind. */
struct held {
	uint64_t records[GT_REC_MAX];
	uint64_t lost[GT_LOSS_SOURCE_MAX][GT_REC_MAX];
	bool ended;
	uint32_t end_how;
	int32_t end_code;
};

static void read_trace(const char *path, uint32_t pid, struct held *h)
{
	const union gt_record *rec;
	struct gt_reader *r;
	const char *msg = NULL;
	int n;

	memset(h, 0, sizeof(*h));
	ck_assert_msg(gt_reader_open(path, &r, &msg) == 0, "open %s: %s", path, msg);
	while ((n = gt_reader_next(r, &rec)) == 1) {
		if (rec->hdr.pid != pid)
			continue;
		h->records[rec->hdr.type]++;
		if (rec->hdr.type == GT_REC_LOSS) {
			ck_assert_uint_lt(rec->loss.source, GT_LOSS_SOURCE_MAX);
			ck_assert_uint_lt(rec->loss.kind, GT_REC_MAX);
			h->lost[rec->loss.source][rec->loss.kind] += rec->loss.count;
		}
		if (rec->hdr.type == GT_REC_PROCESS_END) {
			h->ended = true;
			h->end_how = rec->process_end.how;
			h->end_code = rec->process_end.code;
		}
	}
	ck_assert_int_eq(n, 0);
	ck_assert(!gt_reader_status(r)->recovered);
	ck_assert_uint_eq(gt_reader_status(r)->records_skipped, 0);
	gt_reader_close(r);
}

static uint64_t lost_total(const struct held *h, unsigned source)
{
	uint64_t t = 0;

	for (unsigned k = 0; k < GT_REC_MAX; k++)
		t += h->lost[source][k];
	return t;
}

/* "1234567" -> "1,234,567", the way the summary prints counts. */
static void grouped(uint64_t v, char *out, size_t bytes)
{
	char digits[32];
	size_t n, o = 0;

	n = (size_t)snprintf(digits, sizeof(digits), "%" PRIu64, v);
	for (size_t i = 0; i < n && o + 2 < bytes; i++) {
		if (i && (n - i) % 3 == 0)
			out[o++] = ',';
		out[o++] = digits[i];
	}
	out[o] = '\0';
}

/* Set by a test to run `gputrace run -q` instead of the default verbosity. */
static bool run_quiet;

/* gputrace run with the producer (which, with `stop`, stops gputrace while it writes the
 * first half of its records); returns what the producer counted and the trace holds. */
static void overload_run(bool stop, const char *buffer, const char *threads, const char *records,
                         const char *waitrec, struct counted *c, struct held *h, char **err)
{
	char self[4096], result[128], trace[128];
	const char *gputrace = getenv("GPUTRACE_EXE");
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	int rc;

	/* (the producer stops gputrace for the first half of its records: GT_TEST_STOP_DRAINER) */
	if (stop)
		setenv("GT_TEST_STOP_DRAINER", "1", 1);
	else
		unsetenv("GT_TEST_STOP_DRAINER");
	ck_assert_msg(gputrace != NULL, "GPUTRACE_EXE is not set (meson sets it)");
	ck_assert_int_gt(n, 0);
	self[n] = '\0';
	snprintf(result, sizeof(result), "%s/result", tmpdir);
	snprintf(trace, sizeof(trace), "%s/overload.gtrace", tmpdir);
	{
		char *argv[] = {(char *)gputrace,
		                "run",
		                run_quiet ? "-q" : "-f",
		                "-f",
		                "-o",
		                "overload",
		                "--buffer-size",
		                (char *)buffer,
		                "--",
		                self,
		                "produce",
		                result,
		                (char *)threads,
		                (char *)records,
		                (char *)waitrec,
		                NULL};

		rc = run(argv);
	}
	snprintf(trace, sizeof(trace), "%s/err", tmpdir);
	*err = slurp(trace);
	snprintf(trace, sizeof(trace), "%s/overload.gtrace", tmpdir);
	/* Losses are warnings: run exits with the program's status. */
	ck_assert_msg(rc == 0, "gputrace run exited %d; stderr:\n%s", rc, *err);
	read_result(result, c);
	read_trace(trace, (uint32_t)c->pid, h);
}

START_TEST(test_overload_exact_accounting)
{
	struct counted c;
	struct held h;
	char *err, line[256], a[32], b[32];
	uint64_t lost;

	overload_run(true, "4K", "2", "100000", "40", &c, &h, &err);
	fprintf(stderr,
	        "overload: nvtx %" PRIu64 " written, %" PRIu64 " dropped, %.1f ns per write; "
	        "waiting writes %" PRIu64 " written, %" PRIu64 " dropped, longest %.1f ms\n",
	        c.nvtx_ok, c.nvtx_dropped, (double)c.nvtx_ns / (double)c.nvtx_records, c.wait_ok,
	        c.wait_dropped, (double)c.max_wait_ns / 1e6);

	/* The ring filled while the drainer was stopped: otherwise this test tests nothing. */
	ck_assert_uint_gt(c.nvtx_dropped, 0);
	ck_assert_uint_eq(c.nvtx_ok + c.nvtx_dropped, 200000);
	ck_assert_uint_eq(c.wait_ok + c.wait_dropped, 40);
	/* Written = in the trace + dropped, exactly, per kind. */
	ck_assert_uint_eq(h.records[GT_REC_NVTX], c.nvtx_ok);
	ck_assert_uint_eq(h.lost[GT_LOSS_RING_FULL][GT_REC_NVTX], c.nvtx_dropped);
	ck_assert_uint_eq(h.records[GT_REC_KERNEL], c.wait_ok);
	ck_assert_uint_eq(h.lost[GT_LOSS_RING_FULL][GT_REC_KERNEL], c.wait_dropped);
	/* Beyond the producer's own records, the client's clock anchor at close (or a string)
	 * may find the ring full too: counted under its own kind, never unaccounted. */
	lost = lost_total(&h, GT_LOSS_RING_FULL);
	ck_assert_uint_eq(lost, c.nvtx_dropped + c.wait_dropped +
	                                h.lost[GT_LOSS_RING_FULL][GT_REC_CLOCK] +
	                                h.lost[GT_LOSS_RING_FULL][GT_REC_STRING]);
	ck_assert_uint_le(h.lost[GT_LOSS_RING_FULL][GT_REC_CLOCK], 1);
	/* Everything committed was read: nothing torn, nothing corrupt. */
	ck_assert_uint_eq(lost_total(&h, GT_LOSS_TORN), 0);
	ck_assert_uint_eq(lost_total(&h, GT_LOSS_CORRUPT), 0);
	ck_assert(h.ended);
	ck_assert_uint_eq(h.end_how, GT_END_EXIT);
	ck_assert_int_eq(h.end_code, 0);
	/* Every waiting write (CUPTI's thread) returned: bounded. A write that does not wait
	 * never waited: the ring counts every reservation that waited, and there are no more of
	 * them than waiting writes. */
	ck_assert_uint_le(c.waits, c.wait_ok + c.wait_dropped);

	/* The summary says so. */
	grouped(lost, a, sizeof(a));
	grouped(lost, b, sizeof(b));
	snprintf(line, sizeof(line), "Lost records: %s (ring_full %s); the trace is incomplete", a,
	         b);
	ck_assert_msg(strstr(err, line), "summary lacks '%s':\n%s", line, err);
	free(err);
}
END_TEST

START_TEST(test_overload_info_prints_losses)
{
	struct counted c;
	struct held h;
	char *err, *out, *save = NULL, want[32], plain[32], path[128];
	const char *gputrace = getenv("GPUTRACE_EXE");
	bool found = false;
	uint64_t lost;
	int rc;

	overload_run(true, "4K", "1", "50000", "0", &c, &h, &err);
	free(err);
	lost = lost_total(&h, GT_LOSS_RING_FULL);
	ck_assert_uint_gt(lost, 0);
	ck_assert_uint_eq(h.lost[GT_LOSS_RING_FULL][GT_REC_NVTX], c.nvtx_dropped);
	/* (plus the client's closing clock anchor, when it too found the ring full) */
	ck_assert_uint_eq(lost, c.nvtx_dropped + h.lost[GT_LOSS_RING_FULL][GT_REC_CLOCK] +
	                                h.lost[GT_LOSS_RING_FULL][GT_REC_STRING]);
	{
		char *argv[] = {(char *)gputrace, "info", "overload.gtrace", NULL};

		rc = run(argv);
	}
	snprintf(path, sizeof(path), "%s/out", tmpdir);
	out = slurp(path);
	snprintf(path, sizeof(path), "%s/err", tmpdir);
	err = slurp(path);
	ck_assert_msg(rc == 0, "gputrace info exited %d:\n%s%s", rc, out, err);
	/* The count, as info prints it (grouped or not), on a line naming the ring. */
	grouped(lost, want, sizeof(want));
	snprintf(plain, sizeof(plain), "%" PRIu64, lost);
	for (char *l = strtok_r(out, "\n", &save); l && !found; l = strtok_r(NULL, "\n", &save))
		found = strstr(l, "ring") && (strstr(l, want) || strstr(l, plain));
	ck_assert_msg(found, "gputrace info does not print %s ring-full losses", want);
	free(out);
	free(err);
}
END_TEST

START_TEST(test_overload_control_no_loss)
{
	struct counted c;
	struct held h;
	char *err;

	/* 20000 marks of 72-byte slots fit in 4 MiB: nothing may be lost. */
	overload_run(false, "4M", "1", "20000", "20", &c, &h, &err);
	ck_assert_uint_eq(c.nvtx_dropped, 0);
	ck_assert_uint_eq(c.wait_dropped, 0);
	ck_assert_uint_eq(h.records[GT_REC_NVTX], 20000);
	ck_assert_uint_eq(h.records[GT_REC_KERNEL], 20);
	for (unsigned s = 0; s < GT_LOSS_SOURCE_MAX; s++)
		ck_assert_uint_eq(lost_total(&h, s), 0);
	ck_assert_msg(strstr(err, "Lost records: none"), "summary:\n%s", err);
	free(err);
}
END_TEST

START_TEST(test_cli_killed)
{
	char self[4096], result[128], ready[128], go[128], trace[160], line[256], tmp[200];
	const char *gputrace = getenv("GPUTRACE_EXE"), *msg = NULL;
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	uint64_t deadline, ok = 0, dropped = 0, held = 0, ign;
	uint64_t wok = 0, wdropped = 0, welapsed = 0, waits = UINT64_MAX;
	const union gt_record *rec;
	struct gt_reader *r;
	int st, pid = 0, closed = -1, got;
	pid_t cli;
	char *text, *save = NULL, session[200] = "";

	ck_assert_ptr_nonnull(gputrace);
	ck_assert_int_gt(n, 0);
	self[n] = '\0';
	snprintf(result, sizeof(result), "%s/result", tmpdir);
	snprintf(ready, sizeof(ready), "%s/ready", tmpdir);
	snprintf(go, sizeof(go), "%s/go", tmpdir);
	cli = fork();
	ck_assert_int_ge(cli, 0);
	if (cli == 0) {
		int fd = open("/dev/null", O_WRONLY);

		if (fd < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0 || chdir(tmpdir) < 0)
			_exit(120);
		execl(gputrace, gputrace, "run", "-q", "-o", "orphan", "--buffer-size", "4M", "--",
		      self, "orphan", result, ready, go, "300000", "200000", "20", (char *)NULL);
		_exit(121);
	}
	/* The CLI has drained 300000 marks; kill it the way the OOM killer would. */
	deadline = gt_now_ns() + RUN_DEADLINE;
	while (!exists(ready)) {
		ck_assert_msg(gt_now_ns() < deadline, "the producer never got ready");
		ck_assert_int_eq(waitpid(cli, &st, WNOHANG), 0);
		usleep(10000);
	}
	ck_assert_int_eq(kill(cli, SIGKILL), 0);
	ck_assert_int_eq(waitpid(cli, &st, 0), cli);
	ck_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	st = open(go, O_CREAT | O_WRONLY, 0644);
	ck_assert_int_ge(st, 0);
	close(st);

	/* The program, now nobody's child of ours, runs to completion. */
	while (!exists(result)) {
		ck_assert_msg(gt_now_ns() < deadline, "the program hung after the CLI died");
		usleep(10000);
	}
	/* (written whole, then renamed into place) */
	text = slurp(result);
	for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		got = sscanf(l, "pid %d", &pid) + sscanf(l, "closed %d", &closed) +
		      sscanf(l, "session %199s", session) +
		      sscanf(l, "nvtx %" SCNu64 " %" SCNu64 " %" SCNu64, &ok, &dropped, &ign) +
		      sscanf(l, "wait %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64, &wok,
		             &wdropped, &welapsed, &ign) +
		      sscanf(l, "waits %" SCNu64, &waits);
		ck_assert_int_ge(got, 1);
	}
	free(text);
	/* The killed CLI could not remove its session directory: clean it up (first, so a
	 * failure below leaves nothing behind). */
	if (session[0] && strrchr(session, '/')) {
		snprintf(line, sizeof(line), "rm -rf '%.*s'",
		         (int)(strrchr(session, '/') - session), session);
		ck_assert_int_eq(system(line), 0);
	}
	ck_assert_int_gt(pid, 0);
	/* goodbye found nobody (-EPIPE): reported, and no SIGPIPE killed the program */
	ck_assert_msg(closed == 0 || closed == -EPIPE || closed == -ECONNRESET, "close: %d",
	              closed);
	ck_assert_uint_eq(ok + dropped, 500000);
	/* With nobody draining, the 4 MiB ring filled: the rest was dropped, not waited for. */
	ck_assert_uint_gt(dropped, 0);
	ck_assert_uint_eq(wok + wdropped, 20);
	fprintf(stderr, "cli killed: %" PRIu64 " waiting writes into the full ring took %.1f ms\n",
	        wok + wdropped, (double)welapsed / 1e6);
	/* CUPTI's thread waits for a dead consumer once (and probes it briefly, at most once per
	 * GT_RING_WAIT_MAX_NS), not once per record: 20 records would otherwise take 4 s, a
	 * CUPTI buffer minutes. (Every wait but the first is a probe: 19 of them would take the
	 * 20 writes 19 x 200 ms of descheduling between them.) */
	ck_assert_uint_eq(wdropped, 20);
	ck_assert_uint_lt(waits, 20);

	/* No trace under the final name; the temporary one opens, recovered chunk by chunk,
	 * with the marks of every chunk written before the kill and nothing damaged. */
	snprintf(trace, sizeof(trace), "%s/orphan.gtrace", tmpdir);
	ck_assert(!exists(trace));
	snprintf(tmp, sizeof(tmp), "%s.tmp-%d", trace, (int)cli);
	ck_assert_msg(exists(tmp), "no %s", tmp);
	ck_assert_msg(gt_reader_open(tmp, &r, &msg) == 0, "open %s: %s", tmp, msg);
	while (gt_reader_next(r, &rec) == 1)
		held += rec->hdr.type == GT_REC_NVTX && rec->hdr.pid == (uint32_t)pid;
	ck_assert(gt_reader_status(r)->recovered);
	ck_assert_uint_gt(gt_reader_status(r)->chunks_read, 0);
	ck_assert_uint_eq(gt_reader_status(r)->chunks_skipped, 0);
	fprintf(stderr,
	        "cli killed: %" PRIu64 " of 300000 drained marks in the recovered trace "
	        "(%" PRIu64 " chunks)\n",
	        held, gt_reader_status(r)->chunks_read);
	ck_assert_uint_gt(held, 0);
	ck_assert_uint_le(held, 300000);
	gt_reader_close(r);
}
END_TEST

START_TEST(test_disk_full)
{
	char self[4096], result[128], path[160], *err;
	const char *gputrace = getenv("GPUTRACE_EXE");
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	struct counted c;
	int rc;

	ck_assert_ptr_nonnull(gputrace);
	ck_assert_int_gt(n, 0);
	self[n] = '\0';
	snprintf(result, sizeof(result), "%s/result", tmpdir);
	{
		/* 300000 marks encode to several 1 MiB chunks: the first chunk write fails */
		char *argv[] = {(char *)gputrace,
		                "run",
		                "-o",
		                "full",
		                "--buffer-size",
		                "64M",
		                "--",
		                self,
		                "produce",
		                result,
		                "1",
		                "300000",
		                "0",
		                NULL};

		rc = run_limited(argv, 256 * 1024);
	}
	snprintf(path, sizeof(path), "%s/err", tmpdir);
	err = slurp(path);
	/* The program succeeded, the trace did not: gputrace's own I/O status, one line. */
	ck_assert_msg(rc == 74, "gputrace run exited %d; stderr:\n%s", rc, err);
	/* (a failure while the program runs is announced first: "the session failed ...
	 * the program runs on untraced") */
	{
		static const char last[] =
		        "gputrace: the trace full.gtrace could not be written: File too large\n";
		size_t len = strlen(err);

		ck_assert_msg(len >= sizeof(last) - 1 &&
		                      strcmp(err + len - (sizeof(last) - 1), last) == 0 &&
		                      (len == sizeof(last) - 1 || err[len - sizeof(last)] == '\n'),
		              "stderr does not end with the write error:\n%s", err);
		ck_assert_msg(strncmp(err, "gputrace: ", 10) == 0 && !strstr(err, "\n\n"),
		              "stderr:\n%s", err);
	}
	free(err);
	/* The program ran to completion, untouched by the failure. */
	read_result(result, &c);
	ck_assert_uint_eq(c.nvtx_ok + c.nvtx_dropped, 300000);
	/* No incomplete file is left behind, under either name. */
	snprintf(path, sizeof(path), "%s/full.gtrace", tmpdir);
	ck_assert(!exists(path));
	snprintf(path, sizeof(path), "%s/full.gtrace.tmp-", tmpdir);
	{
		char cmd[256];

		snprintf(cmd, sizeof(cmd), "ls '%s'* >/dev/null 2>&1", path);
		ck_assert_msg(system(cmd) != 0, "a temporary trace was left behind");
	}
}
END_TEST

/* -q drops the summary but never the losses: one warning line with their total. */
START_TEST(test_quiet_still_reports_losses)
{
	struct counted c;
	struct held h;
	char *err, want[256], n[32];
	uint64_t lost = 0;

	run_quiet = true;
	overload_run(true, "4K", "2", "100000", "0", &c, &h, &err);
	run_quiet = false;
	for (unsigned src = 0; src < GT_LOSS_SOURCE_MAX; src++)
		lost += lost_total(&h, src);
	ck_assert_uint_gt(lost, 0);
	grouped(lost, n, sizeof(n));
	snprintf(want, sizeof(want),
	         "gputrace: warning: %s records were lost; `gputrace info overload.gtrace` "
	         "lists them by source\n",
	         n);
	ck_assert_msg(strstr(err, want) != NULL, "want '%s' in:\n%s", want, err);
	ck_assert_ptr_null(strstr(err, "Lost records"));
	free(err);
}
END_TEST

static Suite *overload_suite(void)
{
	Suite *s = suite_create("reliability");
	TCase *tc = tcase_create("overload");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_overload_exact_accounting);
	tcase_add_test(tc, test_overload_info_prints_losses);
	tcase_add_test(tc, test_overload_control_no_loss);
	tcase_add_test(tc, test_quiet_still_reports_losses);
	suite_add_tcase(s, tc);
	tc = tcase_create("failures");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_cli_killed);
	tcase_add_test(tc, test_disk_full);
	suite_add_tcase(s, tc);
	return s;
}

int main(int argc, char **argv)
{
	char cmd[96];
	SRunner *sr;
	int failed;

	if (argc > 1 && strcmp(argv[1], "produce") == 0)
		return produce(argc, argv);
	if (argc > 1 && strcmp(argv[1], "orphan") == 0)
		return orphan(argc, argv);
	snprintf(basedir, sizeof(basedir), "/tmp/test-overload-XXXXXX");
	if (!mkdtemp(basedir)) {
		perror("test-overload: mkdtemp");
		return 1;
	}
	sr = srunner_create(overload_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", basedir);
	if (system(cmd) != 0)
		fprintf(stderr, "test-overload: could not remove %s\n", basedir);
	return failed ? 1 : 0;
}
