/* The traced process's side: its ring, its string ids, and where the ring goes - to the
 * gputrace session (GPUTRACE_SESSION) or, standalone, to a drainer thread of this process
 * writing GPUTRACE_OUTPUT. Runs inside the traced application. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "gputrace/client.h"
#include "gputrace/clock.h"
#include "gputrace/drain.h"
#include "gputrace/env.h"
#include "gputrace/pattern.h"
#include "gputrace/session.h"

/* Local string ids are slots of a fixed open-addressing table: id = slot + 1. Memory is
 * mapped at open and touched only as strings arrive. */
#define INTERN_SLOTS       (1u << 16)
#define INTERN_PROBES      512u
#define INTERN_ARENA_BYTES (8u << 20)
#define KEY_LEN_BITS       13 /* GT_STRING_MAX (4096) fits */

/* At exit the trace is completed however long its writing takes, as long as it moves: the
 * waits give up only when neither the drainer nor the writer has finished anything for this
 * long (GPUTRACE_WRITE_TIMEOUT seconds; docs/reliability.md). */
#define STANDALONE_STALL_NS      (60ull * 1000u * 1000u * 1000u)
#define STANDALONE_STALL_MAX_S   86400.0
#define STANDALONE_JOIN_CHECK_NS (100ull * 1000u * 1000u)
#define STANDALONE_FINAL_WAIT_NS (20ull * 1000u * 1000u)
#define LIVE_TORN_TIMEOUT_NS     (2000ull * 1000u * 1000u)

enum intern_state {
	ENT_CLAIMED = 0, /* key set; content not copied (yet, or the arena is full) */
	ENT_CONTENT,     /* content in the arena; its STRING may not be in the ring yet */
	ENT_READY,       /* content in the arena and its STRING written to the ring */
};

struct intern_ent {
	_Atomic uint64_t key;   /* 0: empty; else hash bits | length */
	_Atomic uint32_t state; /* enum intern_state */
	uint32_t len;           /* bytes, valid from ENT_CONTENT */
	uint64_t off;           /* arena offset, valid from ENT_CONTENT */
};

struct gt_client {
	struct gt_ring *ring; /* the producers' mapping; never unmapped once producers run */
	int efd;              /* the ring's wake-up eventfd */
	int sock;             /* session connection; -1 standalone */
	uint32_t pid;
	bool has_status;
	int exit_status;

	struct intern_ent *tab; /* INTERN_SLOTS, mmap'd */
	char *arena;            /* INTERN_ARENA_BYTES, mmap'd */
	_Atomic uint64_t arena_used;

	/* standalone */
	struct gt_writer *writer;
	struct gt_drain *drain;
	struct gt_drain_proc *dp;
	pthread_t thread;
	bool thread_running;
	_Atomic int stop;
	_Atomic uint64_t beats; /* the drainer's loop turns: its sign of life */
	uint64_t flush_ns;
	uint64_t stall_ns; /* close gives up after this long without progress */
	char path[PATH_MAX];

	struct gt_process_info info;
	char info_buf[3 * GT_STRING_MAX + 3];
	struct gt_client *next_retired;
};

/* Closed clients. Their ring mapping (over zero pages by then: gt_ring_retire), string
 * table, wake-up eventfd and the struct itself stay: a producer that checked that tracing was on
 * just before the close may still be writing, even after a bounded wait (it can be preempted
 * anywhere), and one whose ring is full may be sleeping in a reservation. Kept on this list so that
 * leak checkers see them as reachable. */
static pthread_mutex_t retired_lock = PTHREAD_MUTEX_INITIALIZER;
static struct gt_client *retired;

/* *errmsg of gt_client_open and gt_client_close: each called once per process */
static char errbuf[2 * PATH_MAX + 256];

/* "<what>: <strerror(err)>" into errbuf. */
__attribute__((format(printf, 2, 3))) static const char *set_err(int err, const char *fmt, ...)
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

static uint64_t hash_bytes(const char *s, size_t len)
{
	/* FNV-1a, then a final mix so that the low bits (the slot) depend on every byte. */
	uint64_t h = 0xcbf29ce484222325ull;
	size_t i;

	for (i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ull;
	h ^= h >> 32;
	return h;
}

/* Write the STRING for local id `id`. Never waits: an application thread drops instead. */
static bool write_string(struct gt_client *c, uint32_t id, const char *s, size_t len)
{
	struct gt_rec_string *r;
	size_t bytes = gt_record_align(sizeof(*r) + len);

	r = gt_ring_reserve(c->ring, GT_REC_STRING, bytes, 0);
	if (!r)
		return false;
	r->hdr.type = GT_REC_STRING;
	r->hdr.size = (uint16_t)bytes;
	r->hdr.pid = c->pid;
	r->id = id;
	r->len = (uint32_t)len;
	memcpy(r->str, s, len);
	memset(r->str + len, 0, bytes - sizeof(*r) - len);
	gt_ring_commit(c->ring, r);
	return true;
}

uint32_t gt_client_intern(struct gt_client *c, const char *s, size_t len)
{
	uint64_t h, key, k;
	uint32_t i, probe;

	if (!c)
		return GT_STRING_NONE;
	if (len > GT_STRING_MAX)
		len = GT_STRING_MAX;
	h = hash_bytes(s, len);
	key = ((h | (1ull << 63)) & ~((1ull << KEY_LEN_BITS) - 1)) | len;
	i = (uint32_t)h & (INTERN_SLOTS - 1);
	for (probe = 0; probe < INTERN_PROBES; probe++, i = (i + 1) & (INTERN_SLOTS - 1)) {
		struct intern_ent *e = &c->tab[i];
		uint32_t id = i + 1, st;

		/* Acquire pairs with the claimant's CAS: nothing else to see yet, but the
		 * state loads below must not move before it. */
		k = atomic_load_explicit(&e->key, memory_order_acquire);
		if (k == 0) {
			uint64_t zero = 0;

			if (atomic_compare_exchange_strong_explicit(&e->key, &zero, key,
			                                            memory_order_acq_rel,
			                                            memory_order_acquire)) {
				uint64_t off = atomic_fetch_add_explicit(&c->arena_used, len,
				                                         memory_order_relaxed);
				bool ok;

				/* We own the slot: copy the content so later callers can compare
				 * it, then write the STRING before anyone is told it is ready. */
				if (off + len <= INTERN_ARENA_BYTES) {
					memcpy(c->arena + off, s, len);
					e->len = (uint32_t)len;
					e->off = off;
					/* Release pairs with the acquire load of state below. */
					atomic_store_explicit(&e->state, ENT_CONTENT,
					                      memory_order_release);
				}
				ok = write_string(c, id, s, len);
				if (ok && off + len <= INTERN_ARENA_BYTES)
					atomic_store_explicit(&e->state, ENT_READY,
					                      memory_order_release);
				return ok ? id : GT_STRING_NONE;
			}
			k = zero; /* someone else claimed it first: is it our string? */
		}
		if (k != key)
			continue;
		/* Acquire pairs with the claimant's release store: len/off/content visible. */
		st = atomic_load_explicit(&e->state, memory_order_acquire);
		if (st != ENT_CLAIMED && (e->len != len || memcmp(c->arena + e->off, s, len) != 0))
			continue; /* same hash and length, other bytes */
		if (st == ENT_READY)
			return id;
		/* Its STRING may not be in the ring yet (or it was dropped): write it too, so
		 * it precedes our records. The drainer keeps the first copy. */
		if (!write_string(c, id, s, len))
			return GT_STRING_NONE;
		if (st == ENT_CONTENT) {
			uint32_t want = ENT_CONTENT;

			atomic_compare_exchange_strong_explicit(&e->state, &want, ENT_READY,
			                                        memory_order_release,
			                                        memory_order_relaxed);
		}
		return id;
	}
	return GT_STRING_NONE;
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

/* The standalone drainer: sleeps on the ring's eventfd (a producer crossed half full, or a
 * kick) or the flush period, and drains; while the writer's queue is full, it sleeps until
 * the writer thread wrote something instead. Stops when asked; the final drain is done by
 * gt_client_close after the join. */
static void *drain_thread(void *arg)
{
	struct gt_client *c = arg;
	int ms = (int)((c->flush_ns + 999999u) / 1000000u);
	uint64_t v;

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
		/* a writer error (disk full) stops the draining; producers then drop and
		 * count, and close reports the error */
		if (gt_drain_proc_run(c->dp, 0, false) < 0)
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
			*errmsg = set_err(-r, "bad " GT_ENV_OUTPUT " pattern '%s'", pattern);
			return r;
		}
		len = (size_t)r;
		if (len < 7 || strcmp(c->path + len - 7, ".gtrace") != 0)
			memcpy(c->path + len, ".gtrace", 8);
		if (!gt_pattern_has_seq(pattern) || access(c->path, F_OK) < 0)
			return 0;
	}
	*errmsg = set_err(EEXIST, "no free sequence number for " GT_ENV_OUTPUT " '%s'", pattern);
	return -EEXIST;
}

/* A byte count from the environment: digits with an optional K, M or G suffix. Returns 0
 * (def when unset or empty) or -EINVAL. */
static int env_bytes(const char *name, uint64_t def, uint64_t max, uint64_t *ret)
{
	const char *s = getenv(name);
	unsigned long long v;
	char *end;

	*ret = def;
	if (!s || !*s)
		return 0;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (end == s || errno || *s == '-')
		return -EINVAL;
	switch (*end) {
	case 'K':
	case 'k':
		v = v > max >> 10 ? max + 1 : v << 10;
		end++;
		break;
	case 'M':
	case 'm':
		v = v > max >> 20 ? max + 1 : v << 20;
		end++;
		break;
	case 'G':
	case 'g':
		v = v > max >> 30 ? max + 1 : v << 30;
		end++;
		break;
	default:
		break;
	}
	if (*end || v > max)
		return -EINVAL;
	*ret = v;
	return 0;
}

/* Seconds from the environment (a decimal number above 0), as nanoseconds. Returns 0 (def
 * when unset or empty) or -EINVAL. */
static int env_seconds(const char *name, uint64_t def, uint64_t *ret_ns)
{
	const char *s = getenv(name);
	char *end;
	double v;

	*ret_ns = def;
	if (!s || !*s)
		return 0;
	errno = 0;
	v = strtod(s, &end);
	if (end == s || *end || errno || !(v > 0) || v > STANDALONE_STALL_MAX_S)
		return -EINVAL;
	*ret_ns = (uint64_t)(v * 1e9);
	return 0;
}

static int open_standalone(struct gt_client *c, const struct gt_client_options *opts,
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
	/* the drainer compresses, a thread writes: a slow disk does not stop the draining */
	if (env_bytes(GT_ENV_WRITE_QUEUE, GT_WRITE_QUEUE_DEFAULT_BYTES, 4ull << 30, &queue) < 0) {
		*errmsg = set_err(EINVAL, "bad " GT_ENV_WRITE_QUEUE " '%s' (use a size like 64M)",
		                  getenv(GT_ENV_WRITE_QUEUE));
		return -EINVAL;
	}
	if (env_seconds(GT_ENV_WRITE_TIMEOUT, STANDALONE_STALL_NS, &c->stall_ns) < 0) {
		*errmsg =
		        set_err(EINVAL, "bad " GT_ENV_WRITE_TIMEOUT " '%s' (use seconds, e.g. 60)",
		                getenv(GT_ENV_WRITE_TIMEOUT));
		return -EINVAL;
	}
	wo.queue_bytes = (size_t)queue;
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
		*errmsg = set_err(-r, "cannot create trace file %s", c->path);
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
		*errmsg = set_err(-r, "cannot start the trace in %s", c->path);
		return r;
	}
	gt_ring_set_torn_timeout(cring, LIVE_TORN_TIMEOUT_NS);
	/* The thread takes no signals meant for the application. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	r = -pthread_create(&c->thread, NULL, drain_thread, c);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r < 0) {
		*errmsg = set_err(-r, "cannot start the drainer thread for %s", c->path);
		return r;
	}
	c->thread_running = true;
	return 0;
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
		*errmsg = set_err(-r, "cannot describe this process");
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
		*errmsg = set_err(-r, "cannot create the trace ring");
		goto fail;
	}
	c->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (c->efd < 0) {
		r = -errno;
		*errmsg = set_err(-r, "cannot create an eventfd");
		goto fail;
	}
	gt_ring_set_wakeup_fd(c->ring, c->efd);
	write_clock(c->ring);

	if (session && *session) {
		r = gt_session_connect(session, &c->info, c->ring);
		if (r < 0) {
			*errmsg = set_err(-r, "cannot connect to gputrace session at %s", session);
			goto fail;
		}
		c->sock = r;
	} else {
		r = open_standalone(c, opts, errmsg);
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
	uint64_t seen = standalone_progress(c), since = gt_now_ns();

	for (;;) {
		/* pthread_timedjoin_np wants a deadline on CLOCK_REALTIME */
		uint64_t t = gt_clock_ns(CLOCK_REALTIME) + STANDALONE_JOIN_CHECK_NS, p;
		struct timespec ts = {(time_t)(t / 1000000000u), (long)(t % 1000000000u)};
		int r = pthread_timedjoin_np(c->thread, NULL, &ts);

		if (r == 0)
			return 0;
		if (r != ETIMEDOUT)
			return -r;
		p = standalone_progress(c);
		if (p != seen) {
			seen = p;
			since = gt_now_ns();
		} else if (gt_now_ns() - since >= c->stall_ns) {
			return -ETIMEDOUT;
		}
	}
}

/* The one-line reason for a standalone trace that could not be completed (errbuf). */
static const char *close_error(struct gt_client *c, int r, bool partial)
{
	char why[96];

	if (r == -ETIMEDOUT)
		snprintf(why, sizeof(why), "its writing made no progress for %.3g s",
		         (double)c->stall_ns / 1e9);
	else
		snprintf(why, sizeof(why), "%s", strerror(-r));
	if (partial)
		snprintf(errbuf, sizeof(errbuf),
		         "the trace %s could not be completed (%s); what was written is in "
		         "%s.tmp-%u, which `gputrace info` reads",
		         c->path, why, c->path, (unsigned)c->pid);
	else
		snprintf(errbuf, sizeof(errbuf), "the trace %s may lack its last records (%s)",
		         c->path, why);
	return errbuf;
}

int gt_client_close(struct gt_client *c, const char **path, const char **errmsg)
{
	static char done_path[PATH_MAX + 16];
	int r = 0, w;

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
	client_retire(c);
	return r;
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
