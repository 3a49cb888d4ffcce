/* The session's server: a UNIX seqpacket socket in a private 0700 directory; accepts traced
 * processes, checks their uid, maps their rings and drains them with one epoll loop. Runs in
 * the gputrace CLI. The client half (inside each traced process, gt_session_connect and
 * gt_session_goodbye) is src/session/session-client.c; the wire format src/session/session-wire.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clock.h"
#include "drain.h"
#include "session-wire.h"
#include "session.h"

/* How long an ended process waits for gt_session_process_exited() before its end is
 * recorded as unknown. */
#define END_GRACE_NS (1000ull * 1000u * 1000u)
/* A slot a live producer leaves uncommitted this long is skipped as torn. */
#define LIVE_TORN_TIMEOUT_NS (2000ull * 1000u * 1000u)
#define DEFAULT_FLUSH_NS     (100ull * 1000u * 1000u)
#define RECENT_EXITS         64

enum tag_kind {
	TAG_LISTEN,
	TAG_TIMER,
	TAG_STOP,
	TAG_SOCK,
	TAG_EFD,
	TAG_WRITER,
};

struct proc;

/* What epoll hands back: which fd woke us, and for whom. */
struct tag {
	enum tag_kind kind;
	struct proc *p;
};

enum proc_state {
	PROC_HELLO, /* accepted, registration not read yet */
	PROC_LIVE,  /* registered, draining */
	PROC_ENDED, /* connection closed: drained as the writer has room, and finished once its
	             * ring is empty and its end is known (or the grace period passed) */
};

struct proc {
	struct proc *next;
	struct tag sock_tag, efd_tag;
	int sock; /* -1 once closed */
	int efd;  /* -1 once closed or if none */
	enum proc_state state;
	pid_t pid; /* from SO_PEERCRED */
	struct gt_drain_proc *dp;
	bool has_goodbye_status;
	int32_t goodbye_status;
	bool exit_known;
	int exit_status; /* waitpid() status */
	uint64_t end_deadline_ns;
};

struct gt_session {
	struct gt_writer *writer; /* borrowed */
	uint64_t flushed_ns;      /* trace clock of the last writer flush */
	struct gt_drain *drain;
	struct gt_session_options opts;
	char dir[PATH_MAX];
	char addr[sizeof(((struct sockaddr_un *)0)->sun_path)];
	int lfd, ep, tfd, stopfd;
	struct tag listen_tag, timer_tag, stop_tag, writer_tag;
	struct proc *procs; /* newest first */
	unsigned live;
	struct {
		pid_t pid;
		int status;
	} exited[RECENT_EXITS]; /* exits reported before the process's connection closed */
	unsigned nexited;
	_Atomic int stop;
	struct gt_session_stats stats;
};

static int ep_add(struct gt_session *s, int fd, struct tag *t)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.ptr = t};

	return epoll_ctl(s->ep, EPOLL_CTL_ADD, fd, &ev) < 0 ? -errno : 0;
}

static int make_dir(char *dir, size_t cap)
{
	const char *tmp = getenv("TMPDIR");
	struct sockaddr_un sun;

	/* The socket path must fit sun_path: fall back to /tmp for a long TMPDIR. */
	if (!tmp || !*tmp || strlen(tmp) + sizeof("/gputrace-XXXXXX/s") > sizeof(sun.sun_path))
		tmp = "/tmp";
	if ((size_t)snprintf(dir, cap, "%s/gputrace-XXXXXX", tmp) >= cap)
		return -ENAMETOOLONG;
	/* mkdtemp creates it 0700: only our uid can reach the socket */
	return mkdtemp(dir) ? 0 : -errno;
}

int gt_session_new(struct gt_writer *writer, const struct gt_session_options *opts,
                   struct gt_session **ret)
{
	struct gt_session *s = calloc(1, sizeof(*s));
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	struct itimerspec its = {0};
	uint64_t flush_ns;
	int r;

	if (!s)
		return -ENOMEM;
	s->lfd = s->ep = s->tfd = s->stopfd = -1;
	if (opts)
		s->opts = *opts;
	flush_ns = s->opts.flush_interval_ns ? s->opts.flush_interval_ns : DEFAULT_FLUSH_NS;
	s->writer = writer;
	s->listen_tag.kind = TAG_LISTEN;
	s->timer_tag.kind = TAG_TIMER;
	s->stop_tag.kind = TAG_STOP;
	s->writer_tag.kind = TAG_WRITER;

	r = gt_drain_new(writer, &s->drain);
	if (r < 0)
		goto out;
	gt_drain_set_tap(s->drain, s->opts.tap);
	r = make_dir(s->dir, sizeof(s->dir));
	if (r < 0) {
		s->dir[0] = '\0';
		goto out;
	}
	/* fits: make_dir() checked the length */
	memcpy(s->addr, s->dir, strlen(s->dir));
	memcpy(s->addr + strlen(s->dir), "/s", 3);
	memcpy(sun.sun_path, s->addr, strlen(s->addr) + 1);

	s->lfd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (s->lfd < 0 || bind(s->lfd, (struct sockaddr *)&sun, sizeof(sun)) < 0 ||
	    listen(s->lfd, 128) < 0) {
		r = -errno;
		goto out;
	}
	s->ep = epoll_create1(EPOLL_CLOEXEC);
	s->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	s->stopfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (s->ep < 0 || s->tfd < 0 || s->stopfd < 0) {
		r = -errno;
		goto out;
	}
	its.it_value.tv_sec = (time_t)(flush_ns / 1000000000u);
	its.it_value.tv_nsec = (long)(flush_ns % 1000000000u);
	its.it_interval = its.it_value;
	if (timerfd_settime(s->tfd, 0, &its, NULL) < 0) {
		r = -errno;
		goto out;
	}
	r = ep_add(s, s->lfd, &s->listen_tag);
	if (r == 0)
		r = ep_add(s, s->tfd, &s->timer_tag);
	if (r == 0)
		r = ep_add(s, s->stopfd, &s->stop_tag);
	/* the writer thread wrote: room again for a drain its full queue stopped */
	if (r == 0 && gt_writer_wake_fd(writer) >= 0)
		r = ep_add(s, gt_writer_wake_fd(writer), &s->writer_tag);
	if (r < 0)
		goto out;
	*ret = s;
	return 0;
out:
	gt_session_free(s);
	return r;
}

const char *gt_session_address(const struct gt_session *s)
{
	return s->addr;
}

unsigned gt_session_live(const struct gt_session *s)
{
	return s->live;
}

void gt_session_stop(struct gt_session *s)
{
	uint64_t one = 1;
	ssize_t r;

	atomic_store(&s->stop, 1);
	r = write(s->stopfd, &one, sizeof(one));
	(void)r;
}

void gt_session_stats(const struct gt_session *s, struct gt_session_stats *out)
{
	struct gt_drain_stats ds;

	gt_drain_stats(s->drain, &ds);
	*out = s->stats;
	out->records = ds.records;
	out->dropped = ds.dropped;
	out->torn = ds.torn;
	out->corrupt = ds.corrupt;
}

static void close_fds(struct gt_session *s, struct proc *p)
{
	if (p->sock >= 0) {
		epoll_ctl(s->ep, EPOLL_CTL_DEL, p->sock, NULL);
		close(p->sock);
		p->sock = -1;
	}
	if (p->efd >= 0) {
		epoll_ctl(s->ep, EPOLL_CTL_DEL, p->efd, NULL);
		close(p->efd);
		p->efd = -1;
	}
}

static void proc_unlink_free(struct gt_session *s, struct proc *p)
{
	struct proc **pp;

	for (pp = &s->procs; *pp; pp = &(*pp)->next) {
		if (*pp == p) {
			*pp = p->next;
			break;
		}
	}
	close_fds(s, p);
	free(p);
}

/* Compress what was drained into a chunk at least once a second, so that a CLI killed
 * outright loses at most a second of drained records, not a whole chunk's worth. */
#define WRITER_FLUSH_NS (1000ull * 1000u * 1000u)

static int flush_if_due(struct gt_session *s)
{
	uint64_t now = gt_now_ns();

	if (now - s->flushed_ns < WRITER_FLUSH_NS)
		return 0;
	s->flushed_ns = now;
	return gt_writer_flush(s->writer);
}

/* Write PROCESS_END from what we know, and forget the process. */
static int proc_finish(struct gt_session *s, struct proc *p, bool producers_dead)
{
	unsigned how = GT_END_UNKNOWN;
	int32_t code = 0;
	int r = 0;

	if (p->exit_known && WIFEXITED(p->exit_status)) {
		how = GT_END_EXIT;
		code = WEXITSTATUS(p->exit_status);
	} else if (p->exit_known && WIFSIGNALED(p->exit_status)) {
		how = GT_END_SIGNAL;
		code = WTERMSIG(p->exit_status);
	} else if (p->has_goodbye_status) {
		how = GT_END_EXIT;
		code = p->goodbye_status;
	}
	if (p->state == PROC_LIVE)
		s->live--;
	/* No goodbye: the process never reached its exit handler (a signal, _exit, a crash), so
	 * its last forced CUPTI flush never ran. What CUPTI still held is lost, and nobody can
	 * count it; the periodic flush bounds it to one interval, which is what we can say. */
	if (p->dp && !p->has_goodbye_status) {
		uint64_t window_ms =
		        (s->opts.flush_interval_ns ? s->opts.flush_interval_ns : DEFAULT_FLUSH_NS) /
		        1000000u;
		char msg[200];

		if (how == GT_END_SIGNAL)
			snprintf(msg, sizeof(msg),
			         "killed by signal %d before its final flush: GPU activity, API "
			         "calls and NVTX ranges of its last %" PRIu64
			         " ms (the flush interval) may be missing",
			         (int)code, window_ms);
		else
			snprintf(msg, sizeof(msg),
			         "ended without its final flush: GPU activity, API calls and NVTX "
			         "ranges of its last %" PRIu64
			         " ms (the flush interval) may be missing",
			         window_ms);
		r = gt_drain_proc_notice(p->dp, GT_NOTICE_WARNING, GT_NOTICE_FLUSH_WINDOW, msg);
	}
	if (p->dp) {
		/* waits for the writer's room only if records are left: at gt_session_free */
		int rf = gt_drain_proc_finish(p->dp, how, code, 0, producers_dead);

		r = r < 0 ? r : rf;
		s->stats.ended++;
	}
	proc_unlink_free(s, p);
	return r;
}

/* A process whose connection closed: drain what its ring still holds as far as the writer's
 * queue has room, never waiting for it (the rest after the writer's wake-up: TAG_WRITER), and
 * once the ring is empty and its end is known, or the grace period is over, write its end.
 * p may be freed. Returns 0 or -errno from the writer. */
static int proc_drain_ended(struct gt_session *s, struct proc *p, uint64_t now)
{
	long r = gt_drain_proc_run(p->dp, 0, true);

	if (r < 0)
		return (int)r;
	if (gt_drain_proc_pending(p->dp))
		return 0;
	if (p->exit_known || p->has_goodbye_status || now >= p->end_deadline_ns)
		return proc_finish(s, p, true);
	return 0;
}

static bool take_recent_exit(struct gt_session *s, pid_t pid, int *status)
{
	unsigned i, n = s->nexited < RECENT_EXITS ? s->nexited : RECENT_EXITS;

	for (i = 0; i < n; i++) {
		if (s->exited[i].pid == pid) {
			*status = s->exited[i].status;
			s->exited[i].pid = 0;
			return true;
		}
	}
	return false;
}

/* The connection closed: the process exited (or exec'd). Read what is left, then record
 * its end once its ring is empty: now if we know how it ended, else after a grace period. */
static int proc_eof(struct gt_session *s, struct proc *p)
{
	uint64_t now = gt_now_ns();

	close_fds(s, p);
	if (p->state == PROC_HELLO) {
		/* closed before it registered: a bad handshake */
		s->stats.refused++;
		proc_unlink_free(s, p);
		return 0;
	}
	s->live--;
	p->state = PROC_ENDED;
	if (!p->exit_known)
		p->exit_known = take_recent_exit(s, p->pid, &p->exit_status);
	p->end_deadline_ns = now + END_GRACE_NS;
	return proc_drain_ended(s, p, now);
}

void gt_session_process_exited(struct gt_session *s, pid_t pid, int wait_status)
{
	struct proc *p;

	/* newest first: after an exec, the live image gets the status */
	for (p = s->procs; p; p = p->next) {
		if (p->pid != pid || p->state == PROC_HELLO || p->exit_known)
			continue;
		p->exit_known = true;
		p->exit_status = wait_status;
		/* (a writer error comes back from the next gt_session_poll) */
		if (p->state == PROC_ENDED)
			proc_drain_ended(s, p, gt_now_ns());
		return;
	}
	/* not connected (yet, or any more): keep it for a connection that closes later */
	s->exited[s->nexited % RECENT_EXITS].pid = pid;
	s->exited[s->nexited % RECENT_EXITS].status = wait_status;
	s->nexited++;
}

static void accept_all(struct gt_session *s)
{
	for (;;) {
		struct ucred cred;
		socklen_t len = sizeof(cred);
		struct proc *p;
		int fd = accept4(s->lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);

		if (fd < 0)
			return; /* EAGAIN, or a peer gone before we got to it */
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 ||
		    cred.uid != geteuid()) {
			/* only our own uid may hand us memory to read */
			s->stats.refused++;
			close(fd);
			continue;
		}
		p = calloc(1, sizeof(*p));
		if (!p) {
			close(fd);
			continue;
		}
		p->sock = fd;
		p->efd = -1;
		p->pid = cred.pid;
		p->state = PROC_HELLO;
		p->sock_tag = (struct tag){TAG_SOCK, p};
		p->efd_tag = (struct tag){TAG_EFD, p};
		if (ep_add(s, fd, &p->sock_tag) < 0) {
			close(fd);
			free(p);
			continue;
		}
		p->next = s->procs;
		s->procs = p;
	}
}

static bool is_eventfd(int fd)
{
	char path[64], link[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, link, sizeof(link) - 1);
	if (n < 0)
		return false;
	link[n] = '\0';
	return strcmp(link, "anon_inode:[eventfd]") == 0;
}

/* Copy a length-delimited string out of the message, NUL-terminated. */
static char *dup_str(const char *src, size_t len)
{
	char *s = malloc(len + 1);

	if (s) {
		memcpy(s, src, len);
		s[len] = '\0';
	}
	return s;
}

/* Read and check the registration; map the ring. A malformed one refuses the peer. */
static int proc_hello(struct gt_session *s, struct proc *p)
{
	union {
		struct cmsghdr h;
		char b[CMSG_SPACE(4 * sizeof(int))];
	} cm;
	char *buf = malloc(HELLO_MAX_BYTES + 1);
	struct iovec iov = {.iov_base = buf, .iov_len = HELLO_MAX_BYTES + 1};
	struct msghdr msg = {.msg_iov = &iov,
	                     .msg_iovlen = 1,
	                     .msg_control = cm.b,
	                     .msg_controllen = sizeof(cm.b)};
	struct msg_hello h;
	struct gt_process_info info = {0};
	struct gt_ring *ring = NULL;
	struct cmsghdr *c;
	const char *why = NULL;
	char *exe = NULL, *cmdline = NULL, *host = NULL, errbuf[160];
	int fds[2] = {-1, -1}, nfds = 0, extra = 0, r = 0;
	ssize_t n;

	if (!buf)
		return -ENOMEM;
	n = recvmsg(p->sock, &msg, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		goto out;
	if (n <= 0) {
		free(buf);
		return proc_eof(s, p);
	}
	for (c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
		size_t i, k;

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (i = 0; i < k; i++) {
			int fd;

			memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
			if (nfds < 2)
				fds[nfds++] = fd;
			else {
				close(fd);
				extra++;
			}
		}
	}
	memcpy(&h, buf, (size_t)n < sizeof(h) ? (size_t)n : sizeof(h));
	if ((size_t)n < sizeof(h) || (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)))
		why = "truncated";
	else if (h.magic != MSG_MAGIC || h.version != MSG_VERSION || h.type != MSG_HELLO ||
	         h.bytes != sizeof(h))
		why = "bad magic or version";
	else if (h.exe_len > GT_STRING_MAX || h.cmdline_len > GT_STRING_MAX ||
	         h.host_len > GT_STRING_MAX ||
	         (size_t)n != sizeof(h) + h.exe_len + h.cmdline_len + h.host_len)
		why = "bad string lengths";
	else if (nfds != 2 || extra)
		why = "expected two file descriptors";
	else if (!is_eventfd(fds[1]))
		why = "second descriptor is not an eventfd";
	if (why) {
		s->stats.refused++;
		close_fds(s, p);
		proc_unlink_free(s, p);
		goto out;
	}
	exe = dup_str(buf + sizeof(h), h.exe_len);
	cmdline = dup_str(buf + sizeof(h) + h.exe_len, h.cmdline_len);
	host = dup_str(buf + sizeof(h) + h.exe_len + h.cmdline_len, h.host_len);
	if (!exe || !cmdline || !host) {
		r = -ENOMEM;
		goto out;
	}
	/* The kernel's word for the pid, not the message's (which may be another pid
	 * namespace's, or a lie). */
	info.pid = (uint32_t)p->pid;
	info.ppid = h.ppid;
	info.exe = exe;
	info.cmdline = cmdline;
	info.hostname = host;
	info.rank = h.rank;
	info.local_rank = h.local_rank;
	info.world_size = h.world_size;

	why = NULL;
	if (gt_ring_attach(fds[0], &ring, &why) < 0) {
		snprintf(errbuf, sizeof(errbuf), "ring of process %d rejected: %s", (int)p->pid,
		         why ? why : "cannot map it");
		why = errbuf;
		ring = NULL;
	} else {
		fds[0] = -1; /* the ring owns it */
		why = NULL;
	}
	r = gt_drain_proc_new(s->drain, &info, h.start_ns, 0, ring, why, &p->dp);
	if (r < 0) {
		gt_ring_free(ring);
		goto out;
	}
	p->state = PROC_LIVE;
	s->live++;
	s->stats.processes++;
	if (ring) {
		gt_ring_set_torn_timeout(ring, LIVE_TORN_TIMEOUT_NS);
		p->efd = fds[1];
		fds[1] = -1;
		if (ep_add(s, p->efd, &p->efd_tag) < 0) {
			close(p->efd);
			p->efd = -1;
		}
	}
	if (s->opts.on_process)
		s->opts.on_process(s->opts.ctx, gt_drain_proc_record(p->dp));
	r = (int)gt_drain_proc_run(p->dp, 0, false);
	r = r < 0 ? r : 0;
out:
	if (fds[0] >= 0)
		close(fds[0]);
	if (fds[1] >= 0)
		close(fds[1]);
	free(exe);
	free(cmdline);
	free(host);
	free(buf);
	return r;
}

/* A message from a registered process: goodbye, or the connection's end. */
static int proc_message(struct gt_session *s, struct proc *p)
{
	struct msg_goodbye g;
	ssize_t n = recv(p->sock, &g, sizeof(g), MSG_DONTWAIT);

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return 0;
	if (n <= 0)
		return proc_eof(s, p);
	if ((size_t)n == sizeof(g) && g.magic == MSG_MAGIC && g.version == MSG_VERSION &&
	    g.type == MSG_GOODBYE && g.has_status) {
		p->has_goodbye_status = true;
		p->goodbye_status = g.status;
	}
	return 0;
}

static int drain_all(struct gt_session *s)
{
	struct proc *p, *next;
	uint64_t now = gt_now_ns();
	long r;

	for (p = s->procs; p; p = next) {
		next = p->next;
		if (p->state == PROC_LIVE) {
			r = gt_drain_proc_run(p->dp, 0, false);
			if (r < 0)
				return (int)r;
		} else if (p->state == PROC_ENDED) {
			r = proc_drain_ended(s, p, now);
			if (r < 0)
				return (int)r;
		}
	}
	return 0;
}

int gt_session_poll(struct gt_session *s, uint64_t timeout_ns)
{
	struct epoll_event evs[32];
	uint64_t deadline = gt_now_ns() + timeout_ns, v;
	int r = 0, n, i;

	for (;;) {
		struct proc *p;
		bool busy = false, rescan = false;
		uint64_t now;
		int ms;

		if (atomic_exchange(&s->stop, 0))
			return 0;
		/* Tell each ring's producers we are about to sleep; one already past half
		 * means no sleeping this round. While the writer's queue is full there is no
		 * draining: sleep until it wrote something (or the timer). */
		for (p = gt_writer_full(s->writer) ? NULL : s->procs; p; p = p->next) {
			struct gt_ring *ring =
			        p->state == PROC_LIVE ? gt_drain_proc_ring(p->dp) : NULL;

			if (ring && !gt_ring_sleep_begin(ring))
				busy = true;
		}
		now = gt_now_ns();
		ms = busy || now >= deadline ? 0 : (int)((deadline - now + 999999u) / 1000000u);
		n = epoll_wait(s->ep, evs, 32, ms);
		if (n < 0 && errno != EINTR)
			return -errno;
		for (p = s->procs; p; p = p->next) {
			struct gt_ring *ring =
			        p->state == PROC_LIVE ? gt_drain_proc_ring(p->dp) : NULL;

			if (ring)
				gt_ring_sleep_end(ring);
		}
		for (i = 0; i < n && r == 0 && !rescan; i++) {
			struct tag *t = evs[i].data.ptr;
			ssize_t rd;

			switch (t->kind) {
			case TAG_LISTEN:
				accept_all(s);
				break;
			case TAG_TIMER:
				rd = read(s->tfd, &v, sizeof(v));
				(void)rd;
				r = drain_all(s);
				if (r >= 0)
					r = flush_if_due(s);
				break;
			case TAG_STOP:
				rd = read(s->stopfd, &v, sizeof(v));
				(void)rd;
				break;
			case TAG_SOCK:
				r = t->p->state == PROC_HELLO ? proc_hello(s, t->p)
				                              : proc_message(s, t->p);
				/* t->p may be freed now, and later events in this batch may
				 * name it: wait again instead (level-triggered: the others
				 * are reported again) */
				rescan = true;
				break;
			case TAG_WRITER:
				rd = read(gt_writer_wake_fd(s->writer), &v, sizeof(v));
				(void)rd;
				r = drain_all(s);
				break;
			case TAG_EFD:
				rd = read(t->p->efd, &v, sizeof(v));
				(void)rd;
				r = (int)gt_drain_proc_run(t->p->dp, 0, false);
				r = r < 0 ? r : 0;
				break;
			}
		}
		if (busy && r == 0)
			r = drain_all(s);
		if (r < 0)
			return r;
		/* a tap (the live view) may be waiting for a pass that no process will make any
		 * more: after the last one ended, or while the writer has no room */
		gt_drain_idle(s->drain);
		if (gt_now_ns() >= deadline && !rescan)
			return 0;
	}
}

void gt_session_free(struct gt_session *s)
{
	int i;

	if (!s)
		return;
	/* Processes that registered (or said goodbye) just before the end are still queued
	 * on the sockets: take them in before finishing everything. */
	if (s->ep >= 0 && s->lfd >= 0) {
		for (i = 0; i < 8; i++) {
			atomic_store(&s->stop, 0);
			if (gt_session_poll(s, 0) < 0)
				break;
		}
	}
	while (s->procs) {
		struct proc *p = s->procs;

		if (p->state == PROC_HELLO)
			proc_unlink_free(s, p);
		else
			proc_finish(s, p, true);
	}
	gt_drain_free(s->drain);
	if (s->lfd >= 0)
		close(s->lfd);
	if (s->ep >= 0)
		close(s->ep);
	if (s->tfd >= 0)
		close(s->tfd);
	if (s->stopfd >= 0)
		close(s->stopfd);
	if (s->addr[0])
		unlink(s->addr);
	if (s->dir[0])
		rmdir(s->dir);
	free(s);
}
