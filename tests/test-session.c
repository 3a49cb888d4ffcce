/* Check suite for src/session/session.c: processes that fork and exec three levels deep land in one
 * trace with their parent links; a corrupt ring is one process's error; bad handshakes and
 * peers of another uid are refused. Runs as a unit test (suite session); `test-session uid`
 * runs the other-uid check alone (needs root, else exits 77). */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "client.h"
#include "clock.h"
#include "env.h"
#include "gputrace/trace.h"
#include "session.h"
#include "trace-load.h"

static char tmpdir[64], path[128];

static struct gt_writer *open_writer(void)
{
	struct gt_trace_info info = {0};
	struct gt_writer *w;

	strcpy(tmpdir, "/tmp/gt-session-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
	snprintf(path, sizeof(path), "%s/t.gtrace", tmpdir);
	info.hostname = "host";
	info.cmdline = "test";
	ck_assert_int_eq(gt_writer_open(path, &info, NULL, &w), 0);
	return w;
}

static void cleanup(void)
{
	unlink(path);
	rmdir(tmpdir);
}

/* Start the helper (tests/session-child.c) at `depth` in the session. */
static pid_t spawn_child(struct gt_session *s, int depth)
{
	const char *exe = getenv("SESSION_CHILD");
	char arg[16];
	pid_t pid;

	ck_assert_msg(exe != NULL, "SESSION_CHILD is not set");
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		setenv(GT_ENV_SESSION, gt_session_address(s), 1);
		snprintf(arg, sizeof(arg), "%d", depth);
		execl(exe, "session-child", arg, (char *)NULL);
		_exit(127);
	}
	return pid;
}

/* Poll until every pid has exited, nobody is connected and `processes` registered, however
 * long that takes on a loaded machine (a hang is the test's timeout). */
static void run_until(struct gt_session *s, pid_t *pids, int n, uint64_t processes)
{
	int status[8], reaped = 0, i;

	for (i = 0; i < n; i++)
		status[i] = -1;
	for (;;) {
		struct gt_session_stats st;

		ck_assert_int_eq(gt_session_poll(s, 20 * 1000000ull), 0);
		for (i = 0; i < n; i++) {
			if (status[i] == -1 && waitpid(pids[i], &status[i], WNOHANG) == pids[i]) {
				gt_session_process_exited(s, pids[i], status[i]);
				reaped++;
			}
		}
		gt_session_stats(s, &st);
		if (reaped == n && gt_session_live(s) == 0 && st.processes >= processes)
			break;
	}
}

START_TEST(test_three_levels)
{
	struct gt_writer *w = open_writer();
	struct gt_session *s;
	struct gt_session_stats st;
	struct trace t;
	uint32_t pid[4];
	pid_t top;
	int depth;

	ck_assert_int_eq(gt_session_new(w, NULL, &s), 0);
	top = spawn_child(s, 3);
	run_until(s, &top, 1, 4);
	gt_session_stats(s, &st);
	ck_assert_uint_eq(st.processes, 4);
	ck_assert_uint_eq(st.refused, 0);
	ck_assert_uint_eq(st.dropped, 0);
	ck_assert_uint_eq(st.torn, 0);
	ck_assert_uint_eq(st.corrupt, 0);
	gt_session_free(s);
	ck_assert_int_eq(gt_writer_close(w), 0);

	trace_load(&t, path);
	ck_assert_uint_eq(count(&t, GT_REC_PROCESS, 0), 4);
	/* the chain of parent links: test -> depth 3 -> 2 -> 1 -> 0 */
	pid[0] = (uint32_t)top;
	for (depth = 3; depth >= 0; depth--) {
		uint32_t me = pid[3 - depth],
		         parent = depth == 3 ? (uint32_t)getpid() : pid[2 - depth];
		char want[16];
		long i = find(&t, GT_REC_PROCESS, me, 0), k;
		unsigned j;

		ck_assert_msg(i >= 0, "no PROCESS for depth %d (pid %u)", depth, me);
		ck_assert_uint_eq(t.recs[i]->process.ppid, parent);
		ck_assert_str_eq(str(&t, t.recs[i]->process.cmdline_id),
		                 depth == 3   ? "session-child 3"
		                 : depth == 2 ? "session-child 2"
		                 : depth == 1 ? "session-child 1"
		                              : "session-child 0");
		ck_assert_int_eq(t.recs[i]->process.rank, -1);
		snprintf(want, sizeof(want), "level %d", depth);
		ck_assert_uint_eq(count(&t, GT_REC_NVTX, me), 3);
		for (j = 0; j < 3; j++) {
			k = find(&t, GT_REC_NVTX, me, j);
			ck_assert_uint_eq(t.recs[k]->nvtx.range_id, j);
			ck_assert_str_eq(str(&t, t.recs[k]->nvtx.message_id), want);
		}
		ck_assert_uint_eq(count(&t, GT_REC_CLOCK, me), 2);
		ck_assert_uint_eq(count(&t, GT_REC_PROCESS_END, me), 1);
		k = find(&t, GT_REC_PROCESS_END, me, 0);
		ck_assert_uint_eq(t.recs[k]->process_end.how, GT_END_EXIT);
		ck_assert_int_eq(t.recs[k]->process_end.code, depth);
		ck_assert_uint_eq(count(&t, GT_REC_LOSS, me), 0);
		/* the next level: the process whose parent is this one */
		if (depth > 0) {
			size_t m;

			pid[4 - depth] = 0;
			for (m = 0; m < t.n; m++)
				if (t.recs[m]->hdr.type == GT_REC_PROCESS &&
				    t.recs[m]->process.ppid == me)
					pid[4 - depth] = t.recs[m]->hdr.pid;
			ck_assert_uint_ne(pid[4 - depth], 0);
		}
	}
	trace_free(&t);
	cleanup();
}
END_TEST

/* A process whose ring header is corrupt: a NOTICE and its end for that process, while a
 * healthy process traced at the same time is complete. */
START_TEST(test_corrupt_ring_isolated)
{
	struct gt_writer *w = open_writer();
	struct gt_session *s;
	struct gt_session_stats st;
	struct trace t;
	char want[128];
	pid_t pids[2];
	int go[2], status;
	long i;

	ck_assert_int_eq(gt_session_new(w, NULL, &s), 0);
	ck_assert_int_eq(pipe(go), 0);
	pids[0] = fork();
	ck_assert_int_ge(pids[0], 0);
	if (pids[0] == 0) {
		struct gt_process_info info;
		struct gt_ring *ring;
		char buf[3 * 4096 + 3], c;
		int fd;

		close(go[1]);
		if (gt_process_info_self(&info, buf, sizeof(buf)) < 0 ||
		    gt_ring_create(4096, (uint32_t)getpid(), &ring) < 0)
			_exit(2);
		gt_ring_set_wakeup_fd(ring, eventfd(0, EFD_CLOEXEC));
		gt_ring_header(ring)->magic = 0;
		fd = gt_session_connect(gt_session_address(s), &info, ring);
		if (fd < 0)
			_exit(3);
		if (read(go[0], &c, 1) < 0)
			_exit(4);
		_exit(0);
	}
	close(go[0]);
	pids[1] = spawn_child(s, 0);
	/* both registered and the healthy one done; then let the broken one exit */
	for (;;) {
		ck_assert_int_eq(gt_session_poll(s, 20 * 1000000ull), 0);
		gt_session_stats(s, &st);
		if (st.processes == 2 && gt_session_live(s) == 1)
			break;
	}
	close(go[1]);
	/* reaped before the session sees its connection end: its end is known at once, with
	 * no grace period for the test to race */
	ck_assert_int_eq(waitpid(pids[0], &status, 0), pids[0]);
	gt_session_process_exited(s, pids[0], status);
	run_until(s, pids + 1, 1, 2);
	gt_session_free(s);
	ck_assert_int_eq(gt_writer_close(w), 0);

	trace_load(&t, path);
	i = find(&t, GT_REC_NOTICE, (uint32_t)pids[0], 0);
	ck_assert_int_ge(i, 0);
	snprintf(want, sizeof(want), "ring of process %d rejected: ring header: bad magic",
	         (int)pids[0]);
	ck_assert_str_eq(str(&t, t.recs[i]->notice.message_id), want);
	ck_assert_uint_eq(t.recs[i]->notice.severity, GT_NOTICE_ERROR);
	i = find(&t, GT_REC_PROCESS_END, (uint32_t)pids[0], 0);
	ck_assert_uint_eq(t.recs[i]->process_end.how, GT_END_EXIT);
	ck_assert_int_eq(t.recs[i]->process_end.code, 0);
	ck_assert_uint_eq(count(&t, GT_REC_NVTX, (uint32_t)pids[1]), 3);
	ck_assert_uint_eq(count(&t, GT_REC_NOTICE, (uint32_t)pids[1]), 0);
	i = find(&t, GT_REC_PROCESS_END, (uint32_t)pids[1], 0);
	ck_assert_uint_eq(t.recs[i]->process_end.how, GT_END_EXIT);
	trace_free(&t);
	cleanup();
}
END_TEST

/* A process that registers, writes and exits before the server ever polls: the final
 * sweep in gt_session_free still takes it in, with its exit status. */
START_TEST(test_registered_at_the_end)
{
	struct gt_writer *w = open_writer();
	struct gt_session *s;
	struct trace t;
	int status;
	long i;
	pid_t pid;

	ck_assert_int_eq(gt_session_new(w, NULL, &s), 0);
	pid = spawn_child(s, 0);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_int_eq(status, 0);
	gt_session_process_exited(s, pid, status);
	gt_session_free(s);
	ck_assert_int_eq(gt_writer_close(w), 0);
	trace_load(&t, path);
	ck_assert_uint_eq(count(&t, GT_REC_PROCESS, (uint32_t)pid), 1);
	ck_assert_uint_eq(count(&t, GT_REC_NVTX, (uint32_t)pid), 3);
	i = find(&t, GT_REC_PROCESS_END, (uint32_t)pid, 0);
	ck_assert_int_ge(i, 0);
	ck_assert_uint_eq(t.recs[i]->process_end.how, GT_END_EXIT);
	ck_assert_int_eq(t.recs[i]->process_end.code, 0);
	trace_free(&t);
	cleanup();
}
END_TEST

/* A process killed with SIGKILL in the middle of a record: everything it committed is in the
 * trace, the torn record is counted, and its end says which signal. */
START_TEST(test_killed_mid_record)
{
	struct gt_writer *w = open_writer();
	struct gt_session *s;
	struct gt_session_stats st;
	struct trace t;
	int ready[2], status;
	char c;
	long i;
	pid_t pid;

	ck_assert_int_eq(gt_session_new(w, NULL, &s), 0);
	ck_assert_int_eq(pipe(ready), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct gt_client *cl;
		const char *err;
		uint32_t k;

		setenv(GT_ENV_SESSION, gt_session_address(s), 1);
		if (gt_client_open(NULL, &cl, &err) < 0)
			_exit(2);
		for (k = 0; k < 100; k++) {
			struct gt_rec_nvtx n = {0};

			n.hdr.type = GT_REC_NVTX;
			n.hdr.size = sizeof(n);
			n.range_id = k;
			if (gt_ring_write(gt_client_ring(cl), &n.hdr, 0) < 0)
				_exit(3);
		}
		/* reserved, half written, never committed */
		memset(gt_ring_reserve(gt_client_ring(cl), GT_REC_NVTX, 64, 0), 0x77, 32);
		if (write(ready[1], "r", 1) != 1)
			_exit(4);
		for (;;)
			pause();
	}
	close(ready[1]);
	while (read(ready[0], &c, 1) != 1)
		;
	kill(pid, SIGKILL);
	/* reaped before the session sees the connection end, so that the end is known at once
	 * (the session would otherwise wait a grace period for it, a clock the test must not
	 * race) */
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	gt_session_process_exited(s, pid, status);
	run_until(s, NULL, 0, 1);
	gt_session_stats(s, &st);
	ck_assert_uint_eq(st.torn, 1);
	ck_assert_uint_eq(st.corrupt, 0);
	gt_session_free(s);
	ck_assert_int_eq(gt_writer_close(w), 0);
	close(ready[0]);

	trace_load(&t, path);
	ck_assert_uint_eq(count(&t, GT_REC_NVTX, (uint32_t)pid), 100);
	for (i = 0; i < 100; i++)
		ck_assert_uint_eq(
		        t.recs[find(&t, GT_REC_NVTX, (uint32_t)pid, (unsigned)i)]->nvtx.range_id,
		        (uint64_t)i);
	ck_assert_uint_eq(count(&t, GT_REC_LOSS, (uint32_t)pid), 1);
	i = find(&t, GT_REC_LOSS, (uint32_t)pid, 0);
	ck_assert_uint_eq(t.recs[i]->loss.source, GT_LOSS_TORN);
	ck_assert_uint_eq(t.recs[i]->loss.count, 1);
	i = find(&t, GT_REC_PROCESS_END, (uint32_t)pid, 0);
	ck_assert_uint_eq(t.recs[i]->process_end.how, GT_END_SIGNAL);
	ck_assert_int_eq(t.recs[i]->process_end.code, SIGKILL);
	ck_assert_uint_eq(count(&t, GT_REC_CLOCK, (uint32_t)pid), 1);
	/* no goodbye: the session says what the missed final flush may have cost */
	ck_assert_uint_eq(count(&t, GT_REC_NOTICE, (uint32_t)pid), 1);
	i = find(&t, GT_REC_NOTICE, (uint32_t)pid, 0);
	ck_assert_uint_eq(t.recs[i]->notice.code, GT_NOTICE_FLUSH_WINDOW);
	ck_assert_uint_eq(t.recs[i]->notice.severity, GT_NOTICE_WARNING);
	ck_assert_str_eq(str(&t, t.recs[i]->notice.message_id),
	                 "killed by signal 9 before its final flush: GPU activity, API calls and "
	                 "NVTX ranges of its last 100 ms (the flush interval) may be missing");
	trace_free(&t);
	cleanup();
}
END_TEST

static int raw_connect(const char *addr)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	strcpy(sun.sun_path, addr);
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0) {
		int e = errno;

		close(fd);
		return -e;
	}
	return fd;
}

/* Garbage instead of a registration, and a registration without descriptors: refused,
 * counted, nothing in the trace. The private directory is 0700; stop ends a poll. */
START_TEST(test_bad_handshake)
{
	struct gt_writer *w = open_writer();
	struct gt_session *s;
	struct gt_session_stats st;
	struct stat sb;
	char dir[128], *slash;
	int fd;

	ck_assert_int_eq(gt_session_new(w, NULL, &s), 0);
	strcpy(dir, gt_session_address(s));
	slash = strrchr(dir, '/');
	*slash = '\0';
	ck_assert_int_eq(stat(dir, &sb), 0);
	ck_assert_uint_eq(sb.st_mode & 0777, 0700);

	fd = raw_connect(gt_session_address(s));
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(send(fd, "hello?", 6, 0), 6);
	fd = raw_connect(gt_session_address(s)); /* the first stays open: refused anyway */
	ck_assert_int_ge(fd, 0);
	close(fd); /* closes before registering */
	do {
		ck_assert_int_eq(gt_session_poll(s, 10 * 1000000ull), 0);
		gt_session_stats(s, &st);
	} while (st.refused < 2);
	ck_assert_uint_eq(st.refused, 2);
	ck_assert_uint_eq(st.processes, 0);
	ck_assert_uint_eq(gt_session_live(s), 0);

	/* a poll of an hour returns at once after stop (else the test's timeout fails it) */
	gt_session_stop(s);
	ck_assert_int_eq(gt_session_poll(s, 3600ull * 1000000000u), 0);
	gt_session_free(s);
	ck_assert_int_eq(stat(dir, &sb), -1);
	ck_assert_int_eq(gt_writer_close(w), 0);
	cleanup();
}
END_TEST

/* A peer of another uid: cannot reach the socket at all (0700 directory); and even with the
 * permissions opened up, the server refuses it (SO_PEERCRED). Run as root only. */
static int uid_check(void)
{
	struct gt_writer *w;
	struct gt_session *s;
	struct gt_session_stats st;
	char dir[128];
	int status, i;
	pid_t pid;

	if (geteuid() != 0) {
		printf("uid check needs root: skipped\n");
		return 77;
	}
	strcpy(tmpdir, "/tmp/gt-session-XXXXXX");
	if (!mkdtemp(tmpdir))
		return 1;
	snprintf(path, sizeof(path), "%s/t.gtrace", tmpdir);
	if (gt_writer_open(path, &(struct gt_trace_info){.hostname = "h", .cmdline = "uid"}, NULL,
	                   &w) < 0 ||
	    gt_session_new(w, NULL, &s) < 0)
		return 1;
	strcpy(dir, gt_session_address(s));
	*strrchr(dir, '/') = '\0';
	for (i = 0; i < 2; i++) {
		if (i == 1) {
			/* opened up on purpose, as if someone had chmod'ed the directory */
			chmod(dir, 0711);
			chmod(gt_session_address(s), 0777);
		}
		pid = fork();
		if (pid == 0) {
			int fd;
			char c;

			if (setgid(65534) < 0 || setuid(65534) < 0)
				_exit(2);
			fd = raw_connect(gt_session_address(s));
			if (i == 0)
				_exit(fd == -EACCES ? 0 : 3);
			if (fd < 0)
				_exit(4);
			/* the server closes on us without reading */
			_exit(recv(fd, &c, 1, 0) == 0 ? 0 : 5);
		}
		while (waitpid(pid, &status, WNOHANG) == 0)
			gt_session_poll(s, 10 * 1000000ull);
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
			printf("uid check %d: child status %d\n", i, status);
			return 1;
		}
	}
	gt_session_stats(s, &st);
	if (st.refused != 1 || st.processes != 0) {
		printf("uid check: refused %llu processes %llu\n", (unsigned long long)st.refused,
		       (unsigned long long)st.processes);
		return 1;
	}
	gt_session_free(s);
	gt_writer_close(w);
	cleanup();
	printf("uid check: other uid refused (EACCES at the directory, SO_PEERCRED at accept)\n");
	return 0;
}

/* ---- a disk whose writes do not return ---------------------------------------------- */

#define PACED_RECORDS 200000u
#define PACED_BURST   2500u /* 180 KB: past half of the 256 KiB ring, so it wakes the drain */

/* The traced process (a fork of the test): writes PACED_RECORDS marks in bursts, each after
 * the drain has read everything before it, so that nothing is dropped while the drain keeps
 * reading. Exits 0 when all were written and read, 10 when it waited limit_ns for the drain
 * in vain (the drain stopped), other codes on errors. */
static void paced_child(struct gt_session *s, uint64_t limit_ns)
{
	struct gt_client_options opts = {.ring_bytes = 256u << 10};
	struct gt_ring_header *h;
	struct gt_client *c;
	struct gt_ring *ring;
	uint32_t id;

	setenv(GT_ENV_SESSION, gt_session_address(s), 1);
	if (gt_client_open(&opts, &c, NULL) < 0)
		_exit(2);
	ring = gt_client_ring(c);
	h = gt_ring_header(ring);
	id = gt_client_intern(c, "paced", 5);
	for (uint64_t i = 0; i <= PACED_RECORDS; i++) {
		struct gt_rec_nvtx n = {0};
		uint64_t deadline = gt_now_ns() + limit_ns;

		/* (the last round only waits, so that the closing clock anchor fits too) */
		while (i % PACED_BURST == 0 && atomic_load(&h->tail) != atomic_load(&h->head)) {
			if (gt_now_ns() > deadline)
				_exit(10);
			usleep(200);
		}
		if (i == PACED_RECORDS)
			break;
		n.hdr.type = GT_REC_NVTX;
		n.hdr.size = sizeof(n);
		n.start_ns = gt_now_ns();
		/* fields that vary, so that the chunks do not compress to nothing */
		n.end_ns = n.start_ns + (i * 2654435761u) % 100000u;
		n.range_id = i * 0x9e3779b97f4a7c15ull;
		n.tid = (uint32_t)(i % 977);
		n.message_id = id;
		n.color = (uint32_t)(i * 40503u);
		n.kind = GT_NVTX_MARK;
		if (gt_ring_write(ring, &n.hdr, 0) < 0)
			_exit(3);
	}
	gt_client_set_exit_status(c, 0);
	_exit(gt_client_close(c, NULL, NULL) < 0 ? 4 : 0);
}

/* The "disk": a FIFO of one page that nobody reads until the traced process has exited; then
 * this thread takes everything until the writer closes it. */
struct disk {
	pthread_t th;
	int fd;             /* the FIFO's read end */
	pid_t child;
	int status;         /* the child's wait status */
	char captured[160]; /* where the bytes go */
	uint64_t bytes;
	_Atomic int reaped;
};

static void *disk_thread(void *arg)
{
	struct disk *d = arg;
	char buf[65536];
	int out = open(d->captured, O_CREAT | O_TRUNC | O_WRONLY, 0644);

	if (waitpid(d->child, &d->status, 0) != d->child || out < 0)
		d->status = -1;
	atomic_store(&d->reaped, 1);
	for (;;) {
		struct pollfd p = {.fd = d->fd, .events = POLLIN};
		ssize_t got;

		if (poll(&p, 1, -1) < 0 && errno != EINTR)
			break;
		got = read(d->fd, buf, sizeof(buf));
		if (got == 0)
			break;
		if (got < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (got < 0 || write(out, buf, (size_t)got) != got)
			break;
		d->bytes += (uint64_t)got;
	}
	close(out);
	return NULL;
}

/* One run of the session with the writer's queue of queue_bytes (0: none) over the wedged
 * disk. Returns the traced process's exit code; *t holds the trace it wrote. */
static int wedged_run(size_t queue_bytes, uint64_t limit_ns, struct disk *d, uint64_t *marks,
                      uint64_t *lost, uint32_t *pid)
{
	struct gt_writer_options wo = {.queue_bytes = queue_bytes};
	struct gt_trace_info info = {.hostname = "host", .cmdline = "wedged"};
	const union gt_record *rec;
	struct gt_reader *r;
	struct gt_session *s;
	struct gt_writer *w;
	char fifo[192];
	const char *msg = NULL;
	int n;

	strcpy(tmpdir, "/tmp/gt-session-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
	snprintf(path, sizeof(path), "%s/t.gtrace", tmpdir);
	snprintf(d->captured, sizeof(d->captured), "%s/captured.gtrace", tmpdir);
	/* the writer's temporary name (this process's pid), made a FIFO first */
	snprintf(fifo, sizeof(fifo), "%s.tmp-%d", path, (int)getpid());
	ck_assert_int_eq(mkfifo(fifo, 0644), 0);
	d->fd = open(fifo, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	ck_assert_int_ge(d->fd, 0);
	ck_assert_int_ge(fcntl(d->fd, F_SETPIPE_SZ, 4096), 4096);
	ck_assert_int_eq(gt_writer_open(path, &info, &wo, &w), 0);
	ck_assert_int_eq(gt_session_new(w, NULL, &s), 0);
	d->child = fork();
	ck_assert_int_ge(d->child, 0);
	if (d->child == 0)
		paced_child(s, limit_ns);
	ck_assert_int_eq(pthread_create(&d->th, NULL, disk_thread, d), 0);
	/* drain until the process has ended and its end is in the trace */
	while (!atomic_load(&d->reaped) || gt_session_live(s) > 0) {
		ck_assert_int_eq(gt_session_poll(s, 20 * 1000000ull), 0);
		if (atomic_load(&d->reaped) && d->status != -1)
			gt_session_process_exited(s, d->child, d->status);
	}
	gt_session_free(s);
	ck_assert_int_eq(gt_writer_close(w), 0);
	pthread_join(d->th, NULL);
	close(d->fd);
	ck_assert(WIFEXITED(d->status));

	*marks = *lost = 0;
	*pid = (uint32_t)d->child;
	ck_assert_msg(gt_reader_open(d->captured, &r, &msg) == 0, "open: %s", msg);
	while ((n = gt_reader_next(r, &rec)) == 1) {
		if (rec->hdr.pid != *pid)
			continue;
		*marks += rec->hdr.type == GT_REC_NVTX;
		*lost += rec->hdr.type == GT_REC_LOSS ? rec->loss.count : 0;
	}
	ck_assert_int_eq(n, 0);
	ck_assert(!gt_reader_status(r)->recovered);
	gt_reader_close(r);
	unlink(d->captured);
	unlink(path);
	rmdir(tmpdir);
	return WEXITSTATUS(d->status);
}

/* An NFS server gone quiet: no write of the trace returns until the program has ended. With
 * the writer's queue, the drain reads every burst anyway (about 5 MB of records, while one
 * page reaches the disk); nothing is dropped, and the trace is whole once the disk is back. */
START_TEST(test_wedged_disk)
{
	struct disk d = {0};
	uint64_t marks, lost;
	uint32_t pid;

	ck_assert_int_eq(wedged_run(64u << 20, 120ull * 1000000000u, &d, &marks, &lost, &pid), 0);
	ck_assert_uint_eq(marks, PACED_RECORDS);
	ck_assert_uint_eq(lost, 0);
	/* what waited in the queue was far more than the disk took before the end */
	ck_assert_uint_gt(d.bytes, 16 * 4096);
}
END_TEST

/* The control: without the queue (what gputrace did before), the drain stops in its first
 * chunk's write and reads nothing more until the disk is back, however long the program waits
 * (a second here): the program gives up waiting (exit 10). What it wrote still arrives. */
START_TEST(test_wedged_disk_unqueued)
{
	struct disk d = {0};
	uint64_t marks, lost;
	uint32_t pid;

	ck_assert_int_eq(wedged_run(0, 1000000000u, &d, &marks, &lost, &pid), 10);
	ck_assert_uint_lt(marks, PACED_RECORDS);
	ck_assert_uint_eq(marks % PACED_BURST, 0);
	ck_assert_uint_eq(lost, 0);
}
END_TEST

/* ---- a process that ends while the disk takes nothing --------------------------------- */

#define ENDED_MARKS 50000u

/* A traced process (a fork of the test): `marks` NVTX marks with varied fields (so that
 * chunks do not compress to nothing) into a ring that holds them all, then exit `code`. */
static void marks_child(struct gt_session *s, unsigned marks, int code)
{
	struct gt_client_options opts = {.ring_bytes = 8u << 20};
	struct gt_client *c;
	uint32_t id;

	setenv(GT_ENV_SESSION, gt_session_address(s), 1);
	if (gt_client_open(&opts, &c, NULL) < 0)
		_exit(100);
	id = gt_client_intern(c, "mark", 4);
	for (uint64_t i = 0; i < marks; i++) {
		struct gt_rec_nvtx n = {0};

		n.hdr.type = GT_REC_NVTX;
		n.hdr.size = sizeof(n);
		n.start_ns = gt_now_ns();
		n.end_ns = n.start_ns + (i * 2654435761u) % 100000u;
		n.range_id = i * 0x9e3779b97f4a7c15ull;
		n.message_id = id;
		n.kind = GT_NVTX_MARK;
		if (gt_ring_write(gt_client_ring(c), &n.hdr, 0) < 0)
			_exit(101);
	}
	gt_client_set_exit_status(c, code);
	_exit(gt_client_close(c, NULL, NULL) < 0 ? 102 : code);
}

/* Poll until `pid` was reaped (its status told to the session), `processes` registered and
 * none is connected any more: however long that takes (a hang is the test's timeout). */
static void poll_until_gone(struct gt_session *s, pid_t pid, uint64_t processes)
{
	bool reaped = false;
	int st;

	for (;;) {
		struct gt_session_stats ss;

		ck_assert_int_eq(gt_session_poll(s, 20 * 1000000ull), 0);
		if (!reaped && waitpid(pid, &st, WNOHANG) == pid) {
			gt_session_process_exited(s, pid, st);
			reaped = true;
		}
		gt_session_stats(s, &ss);
		if (reaped && ss.processes == processes && gt_session_live(s) == 0)
			return;
	}
}

/* Reads the FIFO to its end into `captured` once started. */
struct late_disk {
	int fd;
	char captured[160];
};

static void *late_disk_thread(void *arg)
{
	struct late_disk *d = arg;
	char buf[65536];
	int out = open(d->captured, O_CREAT | O_TRUNC | O_WRONLY, 0644);

	for (;;) {
		struct pollfd p = {.fd = d->fd, .events = POLLIN};
		ssize_t got;

		if (out < 0 || (poll(&p, 1, -1) < 0 && errno != EINTR))
			break;
		got = read(d->fd, buf, sizeof(buf));
		if (got == 0)
			break;
		if (got < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (got < 0 || write(out, buf, (size_t)got) != got)
			break;
	}
	if (out >= 0)
		close(out);
	return NULL;
}

/* The disk takes one page and then nothing (a FIFO nobody reads); a process ends while the
 * writer's queue is full, with most of its records still in its ring. The session's loop
 * goes on: the exit status is taken, the next process registers and ends, and the first one's
 * end waits, unwritten, for room instead of the loop waiting for the disk (it used to: the
 * end was written at once, waiting for the queue's room with no limit, and nothing else ran:
 * no process accepted, no signal handled). _i 0: the disk comes back, both ends are written
 * as it takes the rest, and the trace is whole. _i 1: it never does; freeing the session
 * drains what is left with the writer's limit (0.3 s without progress), and closing the
 * writer says that it stalled. */
START_TEST(test_wedged_end)
{
	struct gt_writer_options wo = {.queue_bytes = 4096, .chunk_bytes = 64u << 10};
	struct gt_trace_info info = {.hostname = "host", .cmdline = "wedged-end"};
	struct late_disk d = {0};
	struct gt_session_stats ss;
	struct gt_session *s;
	struct gt_writer *w;
	pid_t one, two;
	char fifo[192];
	pthread_t th;

	wo.stall_ns = _i == 1 ? 300000000u : 0;
	strcpy(tmpdir, "/tmp/gt-session-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
	snprintf(path, sizeof(path), "%s/t.gtrace", tmpdir);
	snprintf(d.captured, sizeof(d.captured), "%s/captured.gtrace", tmpdir);
	snprintf(fifo, sizeof(fifo), "%s.tmp-%d", path, (int)getpid());
	ck_assert_int_eq(mkfifo(fifo, 0644), 0);
	d.fd = open(fifo, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	ck_assert_int_ge(d.fd, 0);
	ck_assert_int_ge(fcntl(d.fd, F_SETPIPE_SZ, 4096), 4096);
	ck_assert_int_eq(gt_writer_open(path, &info, &wo, &w), 0);
	ck_assert_int_eq(gt_session_new(w, NULL, &s), 0);

	one = fork();
	ck_assert_int_ge(one, 0);
	if (one == 0)
		marks_child(s, ENDED_MARKS, 0);
	poll_until_gone(s, one, 1);
	/* its records wait in its ring for the writer's room; its end is not written yet */
	ck_assert(gt_writer_full(w));
	gt_session_stats(s, &ss);
	ck_assert_uint_eq(ss.ended, 0);
	/* the loop still takes in a new process and its end */
	two = fork();
	ck_assert_int_ge(two, 0);
	if (two == 0)
		marks_child(s, 1, 3);
	poll_until_gone(s, two, 2);

	if (_i == 1) {
		gt_session_free(s);
		ck_assert_int_eq(gt_writer_close(w), -ETIMEDOUT);
		/* (the abandoned writer thread's write fails once the FIFO has no reader) */
		close(d.fd);
		unlink(fifo);
		rmdir(tmpdir);
		return;
	}
	ck_assert_int_eq(pthread_create(&th, NULL, late_disk_thread, &d), 0);
	/* both ends are written while the loop runs, as the disk takes the rest */
	do {
		ck_assert_int_eq(gt_session_poll(s, 20 * 1000000ull), 0);
		gt_session_stats(s, &ss);
	} while (ss.ended < 2);
	gt_session_free(s);
	ck_assert_int_eq(gt_writer_close(w), 0);
	pthread_join(th, NULL);
	close(d.fd);
	{
		const union gt_record *rec;
		struct gt_reader *r;
		const char *msg = NULL;
		uint64_t marks[2] = {0}, lost = 0;
		int ends[2] = {-1, -1}, n;

		ck_assert_msg(gt_reader_open(d.captured, &r, &msg) == 0, "open: %s", msg);
		while ((n = gt_reader_next(r, &rec)) == 1) {
			int k = rec->hdr.pid == (uint32_t)one ? 0 : 1;

			if (rec->hdr.pid != (uint32_t)one && rec->hdr.pid != (uint32_t)two)
				continue;
			marks[k] += rec->hdr.type == GT_REC_NVTX;
			lost += rec->hdr.type == GT_REC_LOSS ? rec->loss.count : 0;
			if (rec->hdr.type == GT_REC_PROCESS_END &&
			    rec->process_end.how == GT_END_EXIT)
				ends[k] = rec->process_end.code;
		}
		ck_assert_int_eq(n, 0);
		ck_assert(!gt_reader_status(r)->recovered);
		gt_reader_close(r);
		ck_assert_uint_eq(marks[0], ENDED_MARKS);
		ck_assert_uint_eq(marks[1], 1);
		ck_assert_uint_eq(lost, 0);
		ck_assert_int_eq(ends[0], 0);
		ck_assert_int_eq(ends[1], 3);
	}
	unlink(d.captured);
	unlink(path);
	rmdir(tmpdir);
}
END_TEST

static Suite *session_suite(void)
{
	Suite *s = suite_create("session");
	TCase *tc = tcase_create("session");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_three_levels);
	tcase_add_test(tc, test_corrupt_ring_isolated);
	tcase_add_test(tc, test_bad_handshake);
	tcase_add_test(tc, test_registered_at_the_end);
	tcase_add_test(tc, test_killed_mid_record);
	tcase_add_test(tc, test_wedged_disk);
	tcase_add_test(tc, test_wedged_disk_unqueued);
	tcase_add_loop_test(tc, test_wedged_end, 0, 2);
	suite_add_tcase(s, tc);
	return s;
}

int main(int argc, char **argv)
{
	SRunner *sr;
	int failed;

	signal(SIGPIPE, SIG_IGN);
	if (argc > 1 && strcmp(argv[1], "uid") == 0)
		return uid_check();
	sr = srunner_create(session_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
