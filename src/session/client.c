/* The traced process's side: its ring, and where the ring goes - to the gputrace session
 * (GPUTRACE_SESSION) or, standalone, to a drainer thread of this process writing
 * GPUTRACE_OUTPUT (client-standalone.c). Its string ids: client-intern.c. Runs inside the
 * traced application. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "client-int.h"
#include "clock.h"
#include "env.h"

/* Closed clients. Their ring mapping (over zero pages by then: gt_ring_retire), string
 * table, wake-up eventfd and the struct itself stay: a producer that checked that tracing was on
 * just before the close may still be writing, even after a bounded wait (it can be preempted
 * anywhere), and one whose ring is full may be sleeping in a reservation. Kept on this list so that
 * leak checkers see them as reachable. */
static pthread_mutex_t retired_lock = PTHREAD_MUTEX_INITIALIZER;
static struct gt_client *retired;

/* *errmsg of gt_client_open and gt_client_close: each called once per process */
static char errbuf[2 * PATH_MAX + 256];

char *gt_client_errbuf(size_t *bytes)
{
	*bytes = sizeof(errbuf);
	return errbuf;
}

/* "<what>: <strerror(err)>" into errbuf. */
const char *gt_client_err(int err, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(errbuf, sizeof(errbuf), fmt, ap);
	va_end(ap);
	if (n >= 0 && (size_t)n < sizeof(errbuf))
		snprintf(errbuf + n, sizeof(errbuf) - (size_t)n, ": %s", strerror(err));
	return errbuf;
}

static void write_clock(struct gt_ring *ring)
{
	struct gt_rec_clock r = {0};

	r.hdr.type = GT_REC_CLOCK;
	r.hdr.size = sizeof(r);
	r.trace_ns = gt_now_ns();
	r.realtime_ns = gt_clock_ns(CLOCK_REALTIME);
	r.hdr.pid = gt_ring_header(ring)->pid;
	r.clock_id = GT_CLOCK_MONOTONIC;
	gt_ring_write(ring, &r.hdr, 0);
}

struct gt_ring *gt_client_ring(struct gt_client *c)
{
	return c->ring;
}

void gt_client_kick(struct gt_client *c)
{
	if (c)
		gt_ring_kick(c->ring);
}

void gt_client_set_exit_status(struct gt_client *c, int status)
{
	if (c) {
		c->has_status = true;
		c->exit_status = status;
	}
}

/* Release what the client holds; only while no producer can be using it (a failed open, or
 * a fork()ed child, where the forking thread is the only one). */
static void client_free(struct gt_client *c)
{
	if (c->tab)
		munmap(c->tab, (size_t)INTERN_SLOTS * sizeof(*c->tab));
	if (c->arena)
		munmap(c->arena, INTERN_ARENA_BYTES);
	if (c->sock >= 0)
		close(c->sock);
	gt_ring_free(c->ring);
	if (c->efd >= 0)
		close(c->efd);
	free(c);
}

/* The end of a closed client: what producers may still touch stays (see retired); the ring's
 * memory itself goes, replaced by zero pages that late writers write into. */
static void client_retire(struct gt_client *c)
{
	if (c->sock >= 0)
		close(c->sock);
	c->sock = -1;
	gt_ring_retire(c->ring);
	pthread_mutex_lock(&retired_lock);
	c->next_retired = retired;
	retired = c;
	pthread_mutex_unlock(&retired_lock);
}

int gt_client_open(const struct gt_client_options *opts, struct gt_client **ret,
                   const char **errmsg)
{
	const char *session = getenv(GT_ENV_SESSION), *dummy;
	size_t ring_bytes = opts && opts->ring_bytes ? opts->ring_bytes : GT_RING_DEFAULT_BYTES;
	struct gt_client *c;
	void *m;
	int r;

	if (!errmsg)
		errmsg = &dummy;
	c = calloc(1, sizeof(*c));
	if (!c) {
		*errmsg = "out of memory";
		return -ENOMEM;
	}
	c->sock = c->efd = -1;
	c->pid = (uint32_t)getpid();
	c->flush_ns = opts && opts->flush_interval_ns ? opts->flush_interval_ns
	                                              : GT_DEFAULT_FLUSH_MS * 1000000ull;
	r = gt_process_info_self(&c->info, c->info_buf, sizeof(c->info_buf));
	if (r < 0) {
		*errmsg = gt_client_err(-r, "cannot describe this process");
		goto fail;
	}
	m = mmap(NULL, (size_t)INTERN_SLOTS * sizeof(*c->tab), PROT_READ | PROT_WRITE,
	         MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	c->tab = m == MAP_FAILED ? NULL : m;
	m = mmap(NULL, INTERN_ARENA_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
	         0);
	c->arena = m == MAP_FAILED ? NULL : m;
	if (!c->tab || !c->arena) {
		r = -ENOMEM;
		*errmsg = "out of memory for the string table";
		goto fail;
	}
	r = gt_ring_create(ring_bytes, c->pid, &c->ring);
	if (r < 0) {
		*errmsg = gt_client_err(-r, "cannot create the trace ring");
		goto fail;
	}
	c->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (c->efd < 0) {
		r = -errno;
		*errmsg = gt_client_err(-r, "cannot create an eventfd");
		goto fail;
	}
	gt_ring_set_wakeup_fd(c->ring, c->efd);
	write_clock(c->ring);

	if (session && *session) {
		r = gt_session_connect(session, &c->info, c->ring);
		if (r < 0) {
			*errmsg = gt_client_err(-r, "cannot connect to gputrace session at %s",
			                        session);
			goto fail;
		}
		c->sock = r;
	} else {
		r = gt_client_standalone_open(c, opts, errmsg);
		if (r < 0)
			goto fail;
	}
	*ret = c;
	return 0;
fail:
	c->dp = NULL; /* gt_drain_free frees it, with the drainer's mapping */
	gt_drain_free(c->drain);
	if (c->writer)
		gt_writer_discard(c->writer);
	client_free(c);
	return r;
}

int gt_client_close(struct gt_client *c, const char **path, const char **errmsg)
{
	bool stuck = false;
	int r = 0;

	if (path)
		*path = NULL;
	if (errmsg)
		*errmsg = NULL;
	if (!c)
		return 0;
	write_clock(c->ring);
	if (c->sock >= 0) {
		r = gt_session_goodbye(c->sock,
		                       c->has_status ? c->exit_status : GT_SESSION_STATUS_UNKNOWN);
		client_retire(c);
		return r;
	}
	r = gt_client_standalone_close(c, path, errmsg, &stuck);
	/* a stuck drainer, the writer and the file stay as they are: the process is ending */
	if (!stuck)
		client_retire(c);
	return r;
}

void gt_client_detach(struct gt_client *c)
{
	if (!c)
		return;
	/* seq_cst: the records written before this store are in the pass the drainer makes
	 * after taking it (drain_thread) */
	atomic_store(&c->flush_now, 1);
	gt_ring_kick(c->ring);
}

void gt_client_forget(struct gt_client *c)
{
	if (!c)
		return;
	/* Our copies of the fds and the mapping only: the parent's ring, connection, file
	 * and drainer thread are untouched. The writer and drainer structs are left (their
	 * teardown would act on the parent's file). */
	if (c->sock >= 0)
		close(c->sock);
	c->sock = -1;
	/* the drainer's own mapping too (its other structures are left unused) */
	if (c->dp)
		gt_ring_free(gt_drain_proc_ring(c->dp));
	client_free(c);
}
