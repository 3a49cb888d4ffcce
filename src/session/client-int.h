/* Internal to the traced process's client (src/session/client.c, client-intern.c,
 * client-standalone.c): its state and what the three files share. Runs inside the traced
 * application. */
#ifndef GPUTRACE_SRC_CLIENT_INT_H
#define GPUTRACE_SRC_CLIENT_INT_H

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "client.h"
#include "drain.h"
#include "session.h"

/* Local string ids are slots of a fixed open-addressing table: id = slot + 1. Memory is
 * mapped at open and touched only as strings arrive. */
#define INTERN_SLOTS       (1u << 16)
#define INTERN_PROBES      512u
#define INTERN_ARENA_BYTES (8u << 20)
#define KEY_LEN_BITS       13 /* GT_STRING_MAX (4096) fits */

/* At exit the trace is completed however long its writing takes, as long as it moves: the
 * waits give up only when neither the drainer nor the writer has finished anything for
 * GPUTRACE_WRITE_TIMEOUT seconds (gt_envconf's write_timeout_ns; docs/reliability.md);
 * whether they did is looked at this often. */
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
	_Atomic int flush_now;  /* gt_client_detach: write out what is drained, now */
	uint64_t flush_ns;
	uint64_t stall_ns; /* close gives up after this long without progress */
	char path[PATH_MAX];

	struct gt_process_info info;
	char info_buf[3 * GT_STRING_MAX + 3];
	struct gt_client *next_retired;
};

/* "<what>: <strerror(err)>" into the client's one error buffer (*errmsg of gt_client_open and
 * gt_client_close, each called once per process). Returns the buffer. */
__attribute__((format(printf, 2, 3))) const char *gt_client_err(int err, const char *fmt, ...);

/* The client's one error buffer, for messages gt_client_err does not shape. */
char *gt_client_errbuf(size_t *bytes);

/* Standalone (client-standalone.c): start the drainer thread and the writer of
 * GPUTRACE_OUTPUT; 0 or -errno with *errmsg. */
int gt_client_standalone_open(struct gt_client *c, const struct gt_client_options *opts,
                              const char **errmsg);

/* Standalone: stop the drainer, drain what is left and complete the trace (see
 * gt_client_close). *stuck: the drainer never came back, so nothing may be released.
 * Returns 0 or -errno, *path and *errmsg as gt_client_close. */
int gt_client_standalone_close(struct gt_client *c, const char **path, const char **errmsg,
                               bool *stuck);

#endif /* GPUTRACE_SRC_CLIENT_INT_H */
