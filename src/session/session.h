/* Session transport between traced processes and the process that drains their rings.
 * The server side runs in the gputrace CLI (gputrace run); the client side runs inside each
 * traced process. A UNIX socket in a private 0700 directory carries a registration message
 * and the ring's memfd (SCM_RIGHTS); the connection stays open for the process's lifetime,
 * so its close tells the server the process has ended. */
#ifndef GPUTRACE_SESSION_H
#define GPUTRACE_SESSION_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "gputrace/record.h"
#include "gputrace/trace.h"
#include "ring.h"

struct gt_session;
struct gt_drain_tap; /* gputrace/drain.h */

struct gt_session_options {
	uint64_t flush_interval_ns; /* drainer timer; 0 = default (100 ms) */
	void (*on_process)(void *ctx, const struct gt_rec_process *p); /* may be NULL */
	void *ctx;
	/* Every record drained into the trace also goes to this tap (see gt_drain_set_tap);
	 * borrowed, must outlive the session; NULL: none. */
	const struct gt_drain_tap *tap;
};

/* Server: create the private directory and listening socket. The address to hand to
 * children is gt_session_address() (goes into GPUTRACE_SESSION). Records drained from
 * every process go to `writer` (borrowed; must outlive the session).
 * Returns 0 and *ret, or -errno. */
int gt_session_new(struct gt_writer *writer, const struct gt_session_options *opts,
                   struct gt_session **ret);
const char *gt_session_address(const struct gt_session *s);

/* Accept, drain and finish processes until `timeout_ns` passes or gt_session_stop() was
 * called; sleeps when idle. Never waits for the writer: while its queue is full nothing is
 * drained (a process that ended included: its end is written once its ring is empty), and
 * the call returns as usual. Returns 0, or -errno for a fatal error (a bad process is not
 * fatal: it is reported in the trace and the others continue). */
int gt_session_poll(struct gt_session *s, uint64_t timeout_ns);

/* Make gt_session_poll() return now. Async-signal-safe (a SIGCHLD or SIGINT handler). */
void gt_session_stop(struct gt_session *s);

/* Record how a process ended, when the caller learned it from waitpid(). Never waits for
 * the writer (see gt_session_poll). */
void gt_session_process_exited(struct gt_session *s, pid_t pid, int wait_status);

/* Number of processes still connected. */
unsigned gt_session_live(const struct gt_session *s);

/* Drain everything left, write PROCESS_END and LOSS records, remove the directory, free.
 * The only call that waits for the writer's room: as long as its writing moves (the
 * writer's stall_ns; its error then tells gt_writer_close). NULL is accepted. */
void gt_session_free(struct gt_session *s);

/* Totals for the summary. */
struct gt_session_stats {
	uint64_t processes;
	uint64_t records;
	uint64_t dropped; /* ring full, all processes */
	uint64_t torn;
	uint64_t corrupt;
	uint64_t refused; /* peers refused (other uid, bad handshake) */
	uint64_t ended;   /* processes whose end (PROCESS_END) is written */
};
void gt_session_stats(const struct gt_session *s, struct gt_session_stats *out);

/* Client (inside the traced process). */

/* What a process says about itself when it registers. Strings are borrowed. */
struct gt_process_info {
	uint32_t pid, ppid;
	const char *exe;
	const char *cmdline;
	const char *hostname;
	int32_t rank, local_rank, world_size;
};

/* Fill `info` for the calling process (reads /proc/self; rank variables from the
 * environment). Strings live in `buf` of `buf_bytes`. Returns 0 or -errno. */
int gt_process_info_self(struct gt_process_info *info, char *buf, size_t buf_bytes);

/* Connect to the session at `address`, send the registration, the ring's fd and its wake-up
 * eventfd (gt_ring_set_wakeup_fd must have been called). Waits at most 2 s for the server.
 * Returns a connected close-on-exec socket fd (>= 0; keep it open until exit), -EINVAL (no
 * eventfd), -ENAMETOOLONG, or -errno from connect/sendmsg. */
int gt_session_connect(const char *address, const struct gt_process_info *info,
                       struct gt_ring *ring);

/* Tell the server the process is exiting normally with exit code `status`
 * (GT_SESSION_STATUS_UNKNOWN if it does not know it), before closing. Never blocks.
 * Returns 0 or -errno. */
#define GT_SESSION_STATUS_UNKNOWN INT32_MIN
int gt_session_goodbye(int fd, int status);

#endif /* GPUTRACE_SESSION_H */
