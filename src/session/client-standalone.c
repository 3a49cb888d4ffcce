/* Traced without the CLI: a drainer thread of the traced process drains its ring into the
 * process's own trace file (GPUTRACE_OUTPUT, default gputrace-<pid>.gtrace) through a writer
 * thread, and completes the file at exit. Runs inside the traced application, on threads of
 * its own that take none of the application's signals. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "client-int.h"
#include "clock.h"
#include "env.h"
#include "envconf.h"
#include "pattern.h"
#include "stall.h"

/* The standalone drainer: sleeps on the ring's eventfd (a producer crossed half full, or a
 * kick) or the flush period, and drains; while the writer's queue is full, it sleeps until
 * the writer thread wrote something instead. After a detach it writes out what it drained
 * (gt_client_detach). Stops when asked; the final drain is done by gt_client_close after the
 * join. */
static void *drain_thread(void *arg)
{
	struct gt_client *c = arg;
	int ms = (int)((c->flush_ns + 999999u) / 1000000u);
	uint64_t v;
	bool flush;

	prctl(PR_SET_NAME, "gputrace-drain", 0, 0, 0);
	while (!atomic_load(&c->stop)) {
		struct pollfd pfd[2] = {{.fd = c->efd, .events = POLLIN},
		                        {.fd = gt_writer_wake_fd(c->writer), .events = POLLIN}};
		/* the drainer's own mapping; NULL once it gave up on a corrupt ring */
		struct gt_ring *ring = gt_drain_proc_ring(c->dp);

		if (!ring)
			break;
		if (gt_writer_full(c->writer)) {
			if (!atomic_load(&c->stop))
				poll(pfd, 2, ms);
		} else {
			if (gt_ring_sleep_begin(ring) && !atomic_load(&c->stop))
				poll(pfd, 1, ms);
			gt_ring_sleep_end(ring);
		}
		if (read(c->efd, &v, sizeof(v)) < 0 && errno != EAGAIN)
			break;
		if (pfd[1].fd >= 0 && read(pfd[1].fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
			break;
		/* taken before the pass, which then holds every record written before the ask */
		flush = atomic_exchange(&c->flush_now, 0);
		/* a writer error (disk full) stops the draining; producers then drop and
		 * count, and close reports the error */
		if (gt_drain_proc_run(c->dp, 0, false) < 0)
			break;
		/* (records left for the writer's room: ask again after the next pass) */
		if (flush && gt_drain_proc_pending(c->dp))
			atomic_store(&c->flush_now, 1);
		else if (flush && gt_writer_flush(c->writer) < 0)
			break;
		atomic_fetch_add_explicit(&c->beats, 1, memory_order_relaxed);
	}
	return NULL;
}

/* Expand GPUTRACE_OUTPUT (or the default) into c->path, finding a free %n if used. */
static int output_path(struct gt_client *c, const char **errmsg)
{
	const char *pattern = getenv(GT_ENV_OUTPUT);
	unsigned seq;
	size_t len;
	int r = -EEXIST;

	if (!pattern || !*pattern)
		pattern = GT_DEFAULT_OUTPUT;
	for (seq = 0; seq < 10000; seq++) {
		r = gt_pattern_expand(pattern, (pid_t)c->pid, seq, c->path, sizeof(c->path) - 8,
		                      NULL);
		if (r < 0) {
			*errmsg = gt_client_err(-r, "bad " GT_ENV_OUTPUT " pattern '%s'", pattern);
			return r;
		}
		len = (size_t)r;
		if (len < 7 || strcmp(c->path + len - 7, ".gtrace") != 0)
			memcpy(c->path + len, ".gtrace", 8);
		if (!gt_pattern_has_seq(pattern) || access(c->path, F_OK) < 0)
			return 0;
	}
	*errmsg = gt_client_err(EEXIST, "no free sequence number for " GT_ENV_OUTPUT " '%s'",
	                        pattern);
	return -EEXIST;
}

int gt_client_standalone_open(struct gt_client *c, const struct gt_client_options *opts,
                              const char **errmsg)
{
	struct gt_writer_options wo = {0};
	uint64_t queue;
	struct gt_trace_info info = {0};
	struct gt_ring *cring = NULL;
	const char *why = NULL;
	sigset_t all, old;
	int fd, r;

	r = output_path(c, errmsg);
	if (r < 0)
		return r;
	/* the drainer compresses, a thread writes: a slow disk does not stop the draining;
	 * GPUTRACE_WRITE_QUEUE and GPUTRACE_WRITE_TIMEOUT as src/settings/envconf.c parsed them */
	queue = opts && opts->settings ? opts->settings->write_queue_bytes
	                               : GT_WRITE_QUEUE_DEFAULT_BYTES;
	c->stall_ns = opts && opts->settings ? opts->settings->write_timeout_ns
	                                     : GT_WRITE_TIMEOUT_DEFAULT_NS;
	/* 0: no room to wait in (the drainer stops after each chunk until it is written, as if
	 * it wrote it itself), but still a writer thread: a write or sync that never returns is
	 * left there, and the exit's close keeps its limit */
	wo.queue_bytes = queue ? (size_t)queue : 1;
	wo.stall_ns = c->stall_ns;
	/* nobody can ask this process again: what could not be completed stays, readable */
	wo.keep_partial = true;
	if (opts && opts->info) {
		info = *opts->info;
	} else {
		info.clock_id = GT_CLOCK_MONOTONIC;
		info.start_realtime_ns = gt_clock_ns(CLOCK_REALTIME);
		info.start_trace_ns = gt_now_ns();
		info.hostname = c->info.hostname;
		info.cmdline = c->info.cmdline;
		info.tool_version = GT_VERSION;
	}
	r = gt_writer_open(c->path, &info, &wo, &c->writer);
	if (r < 0) {
		*errmsg = gt_client_err(-r, "cannot create trace file %s", c->path);
		return r;
	}
	/* The drainer reads through a mapping of its own, as the CLI does in a session: it is
	 * let go when the trace is closed, while the producers' mapping stays (see retired). */
	fd = fcntl(gt_ring_fd(c->ring), F_DUPFD_CLOEXEC, 0);
	r = fd < 0 ? -errno : gt_ring_attach(fd, &cring, &why);
	if (r < 0 && fd >= 0)
		close(fd);
	if (r == 0)
		r = gt_drain_new(c->writer, &c->drain);
	if (r == 0)
		r = gt_drain_proc_new(c->drain, &c->info, gt_now_ns(), GT_PROCESS_STANDALONE, cring,
		                      NULL, &c->dp);
	if (r < 0) {
		if (!c->dp)
			gt_ring_free(cring);
		*errmsg = gt_client_err(-r, "cannot start the trace in %s", c->path);
		return r;
	}
	gt_ring_set_torn_timeout(cring, LIVE_TORN_TIMEOUT_NS);
	/* The thread takes no signals meant for the application. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	r = -pthread_create(&c->thread, NULL, drain_thread, c);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r < 0) {
		*errmsg = gt_client_err(-r, "cannot start the drainer thread for %s", c->path);
		return r;
	}
	c->thread_running = true;
	return 0;
}

/* The standalone side's sign of life: the drainer's turns and the writer's returned calls. */
static uint64_t standalone_progress(struct gt_client *c)
{
	return atomic_load_explicit(&c->beats, memory_order_relaxed) +
	       gt_writer_progress(c->writer);
}

/* Join the drainer however long its last pass takes, as long as it (or the writer it feeds)
 * moves; -ETIMEDOUT once nothing moved for c->stall_ns. */
static int join_drainer(struct gt_client *c)
{
	struct gt_stall st;

	gt_stall_init(&st, c->stall_ns, standalone_progress(c));
	for (;;) {
		/* a deadline on the trace clock: a step of the wall clock moves it not */
		uint64_t t = gt_now_ns() + gt_stall_step_ns(&st, STANDALONE_JOIN_CHECK_NS);
		struct timespec ts = {(time_t)(t / 1000000000u), (long)(t % 1000000000u)};
		int r = pthread_clockjoin_np(c->thread, NULL, GT_TRACE_CLOCK, &ts);

		if (r == 0)
			return 0;
		if (r != ETIMEDOUT)
			return -r;
		if (gt_stall_expired(&st, standalone_progress(c)))
			return -ETIMEDOUT;
	}
}

/* The one-line reason for a standalone trace that could not be completed (errbuf). */
static const char *close_error(struct gt_client *c, int r, bool partial)
{
	size_t bytes;
	char *errbuf = gt_client_errbuf(&bytes);
	char why[96];

	if (r == -ETIMEDOUT)
		snprintf(why, sizeof(why), "its writing made no progress for %.3g s",
		         (double)c->stall_ns / 1e9);
	else
		snprintf(why, sizeof(why), "%s", strerror(-r));
	if (partial)
		snprintf(errbuf, bytes,
		         "the trace %s could not be completed (%s); what was written is in "
		         "%s.tmp-%u, which `gputrace info` reads",
		         c->path, why, c->path, (unsigned)c->pid);
	else
		snprintf(errbuf, bytes, "the trace %s may lack its last records (%s)", c->path,
		         why);
	return errbuf;
}

int gt_client_standalone_close(struct gt_client *c, const char **path, const char **errmsg,
                               bool *stuck)
{
	static char done_path[PATH_MAX + 16];
	int r = 0, w;

	atomic_store(&c->stop, 1);
	gt_ring_kick(c->ring);
	if (c->thread_running) {
		r = join_drainer(c);
		if (r < 0) {
			/* The drainer is stuck: it, the writer and the file stay as they are
			 * (the process is ending); what was written so far reads. */
			if (errmsg)
				*errmsg = close_error(c, r, true);
			snprintf(done_path, sizeof(done_path), "%s.tmp-%u", c->path,
			         (unsigned)c->pid);
			if (path)
				*path = done_path;
			*stuck = true;
			return r;
		}
	}
	/* the final drain waits for the writer's room; both give up on a stalled writer */
	r = gt_drain_proc_finish(c->dp, c->has_status ? GT_END_EXIT : GT_END_UNKNOWN,
	                         c->has_status ? c->exit_status : 0, STANDALONE_FINAL_WAIT_NS,
	                         false);
	c->dp = NULL; /* freed with the drainer's mapping of the ring */
	gt_drain_free(c->drain);
	c->drain = NULL;
	w = gt_writer_close(c->writer);
	c->writer = NULL;
	if (w < 0) {
		/* the temporary file stays (keep_partial), complete chunks and all */
		if (errmsg)
			*errmsg = close_error(c, w, true);
		snprintf(done_path, sizeof(done_path), "%s.tmp-%u", c->path, (unsigned)c->pid);
		r = w;
	} else {
		if (r < 0 && errmsg)
			*errmsg = close_error(c, r, false);
		memcpy(done_path, c->path, sizeof(c->path));
	}
	if (path)
		*path = done_path;
	return r;
}
