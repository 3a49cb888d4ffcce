/* What the injection library uses to get a ring and deliver its records: with
 * GPUTRACE_SESSION set, register with the gputrace session (the CLI drains the ring);
 * without it, standalone mode: a thread of this process drains the same ring into
 * GPUTRACE_OUTPUT (default gputrace-%p.gtrace) with the same writer code.
 * Runs inside the traced application. */
#ifndef GPUTRACE_CLIENT_H
#define GPUTRACE_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include "gputrace/trace.h"
#include "ring.h"

struct gt_client;

struct gt_envconf;

struct gt_client_options {
	size_t ring_bytes;                /* 0: GT_RING_DEFAULT_BYTES */
	uint64_t flush_interval_ns;       /* standalone drainer period; 0: default */
	const struct gt_trace_info *info; /* versions for the header (standalone); may be NULL */
	/* the settings (src/settings/envconf.c parsed them from GPUTRACE_*): standalone, the
	 * writer's queue (write_queue_bytes) and how long the close waits for it
	 * (write_timeout_ns); NULL: their defaults */
	const struct gt_envconf *settings;
};

/* Create the ring and connect (or start the standalone drainer). The process's PROCESS
 * record is written by the drainer from the registration; a CLOCK anchor goes into the
 * ring first. Returns 0 and *ret, or -errno with *errmsg set to a
 * one-line reason ("cannot connect to gputrace session at ...: ..."). Called once, from the
 * thread that initializes CUDA; may allocate. */
int gt_client_open(const struct gt_client_options *opts, struct gt_client **ret,
                   const char **errmsg);

struct gt_ring *gt_client_ring(struct gt_client *c);

/* Allocate a process-local string id for s, writing a GT_REC_STRING into the ring the
 * first time (thread-safe, lock-free, no allocation after open). Returns the id, or
 * GT_STRING_NONE if the string table is full or the ring dropped the record. */
uint32_t gt_client_intern(struct gt_client *c, const char *s, size_t len);

/* Wake the drainer now (e.g. after a forced CUPTI flush at exit). */
void gt_client_kick(struct gt_client *c);

/* The exit code to report at close (e.g. from an on_exit(3) handler). Without it the
 * process's end is recorded from the CLI's waitpid(), or as unknown. */
void gt_client_set_exit_status(struct gt_client *c, int status);

/* At exit or detach: session mode sends goodbye and closes the connection; standalone mode
 * drains everything, writes PROCESS_END and closes the file. Standalone, it waits as long as
 * the drainer or the writer makes progress (a slow disk legitimately takes seconds) and gives
 * up after the settings' write_timeout_ns (GPUTRACE_WRITE_TIMEOUT, default 60 s) in which
 * nothing moved.
 * Returns 0, with *path the trace; or -errno with *errmsg a one-line reason that names the
 * file left behind and *path that file: on a write error or a stall (-ETIMEDOUT) the
 * temporary PATH.tmp-<pid>, which the reader recovers; on another error (the final drain
 * ran out of memory) the trace itself, complete but possibly without its last records.
 * path and errmsg may be NULL; both point to static storage. NULL c is accepted.
 * What producers touch (the ring's mapping, the string table, the wake-up eventfd, the
 * client itself) is kept until the process ends: a producer that found tracing on just
 * before may still be writing; what it writes is not read. The ring's memory itself is
 * released (gt_ring_retire). */
int gt_client_close(struct gt_client *c, const char **path, const char **errmsg);

/* Tracing stops early (the injection library detaches) while the process runs on. Never
 * waits, so the thread that detaches (the one inside cuInit) does not wait for the disk:
 * standalone, the drainer is woken to read what is left and to write it out as a chunk, so
 * that the records before the detach (its reason) are on disk soon; the trace is completed
 * by gt_client_close later, at exit, with the limit it has there. In a session it wakes the
 * CLI's drain. Any thread; NULL is accepted. */
void gt_client_detach(struct gt_client *c);

/* In a fork()ed child: forget the parent's ring and connection without touching them
 * (the child is not traced unless it execs). */
void gt_client_forget(struct gt_client *c);

#endif /* GPUTRACE_CLIENT_H */
