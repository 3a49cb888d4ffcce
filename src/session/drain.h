/* The drainer: turns the records in each traced process's ring into one trace. It validates
 * records, stamps the registered pid, remaps process-local string ids to trace-global ids,
 * writes the strings before the records that use them, and at a process's end writes its
 * loss accounting and PROCESS_END. Used by the session (in the CLI) and by standalone mode
 * (a thread inside the traced process). Not thread-safe: one thread drives a gt_drain and
 * every process in it. */
#ifndef GPUTRACE_DRAIN_H
#define GPUTRACE_DRAIN_H

#include <stdbool.h>
#include <stdint.h>

#include "gputrace/record.h"
#include "gputrace/trace.h"
#include "ring.h"
#include "session.h"

struct gt_drain;      /* one per trace */
struct gt_drain_proc; /* one per registered process */

/* Highest process-local string id the drainer accepts; larger ids read as "<unknown>". */
#define GT_DRAIN_MAX_LOCAL_ID (1u << 22)

/* The string written for an id whose STRING never arrived. */
#define GT_DRAIN_UNKNOWN_STRING "<unknown>"

/* A tap: every record the drainer writes to the trace, also handed to an observer on the
 * drainer's own thread, right after the writer took it (gputrace run --live). Callbacks must
 * return quickly and must not call back into the drainer; they cannot fail the drain. */
struct gt_drain_tap {
	/* A record as written: global string ids, the registered pid (strings come through
	 * `string`, never here). */
	void (*record)(void *ctx, const struct gt_rec_hdr *rec);
	/* The content of global string `id`, written for process `pid`: before the records
	 * that use it, or later for an id a record referenced first. s is not NUL-terminated
	 * and is valid during the call only. */
	void (*string)(void *ctx, uint32_t pid, uint32_t id, const char *s, size_t len);
	/* The end of a pass over process `pid`'s ring: `ring_dropped` records its producers
	 * dropped so far that no LOSS record reports yet (0 once the process is finished). */
	void (*pass)(void *ctx, uint32_t pid, uint64_t ring_dropped);
	void *ctx;
	/* The drainer's thread between passes (gt_drain_idle: the session calls it each time its
	 * loop wakes), also when no process is left to pass over; may be NULL. */
	void (*idle)(void *ctx);
};

/* Create a drainer writing to `writer` (borrowed; must outlive the drainer).
 * Returns 0 and *ret, or -ENOMEM. */
int gt_drain_new(struct gt_writer *writer, struct gt_drain **ret);

/* Finish every process still open (GT_END_UNKNOWN, producers treated as dead) and free.
 * The writer is not closed. NULL is accepted. */
void gt_drain_free(struct gt_drain *d);

/* Hand every record written from now on to `tap` too (borrowed; must outlive the drainer);
 * NULL: none. Without a tap the drainer costs one test of a pointer per record more. */
void gt_drain_set_tap(struct gt_drain *d, const struct gt_drain_tap *tap);

/* Hand the tap its idle call (struct gt_drain_tap's `idle`), if it has one. */
void gt_drain_idle(struct gt_drain *d);

/* Start a process: write its PROCESS record (and strings) from `info`, stamped with
 * start_ns and flags (GT_PROCESS_*). `ring` becomes owned by the process (freed at finish);
 * it may be NULL when the ring was rejected, with `error` saying why (written as a NOTICE);
 * error may be NULL. Returns 0 and *ret, or -errno (the writer's error, -ENOMEM). */
int gt_drain_proc_new(struct gt_drain *d, const struct gt_process_info *info, uint64_t start_ns,
                      uint32_t flags, struct gt_ring *ring, const char *error,
                      struct gt_drain_proc **ret);

/* The PROCESS record written for p (global string ids). */
const struct gt_rec_process *gt_drain_proc_record(const struct gt_drain_proc *p);

/* The process's ring, or NULL if it was rejected or found corrupt. */
struct gt_ring *gt_drain_proc_ring(struct gt_drain_proc *p);

/* Drain what is committed (see gt_ring_consume for wait_ns and producers_dead). A ring
 * found corrupt is reported once (a NOTICE), freed, and not read again: not an error. While
 * the writer's queue is full (gt_writer_full) the pass reads nothing more and returns: the
 * rest stays in the ring for a later pass. Returns records written (>= 0) or -errno from the
 * writer. */
long gt_drain_proc_run(struct gt_drain_proc *p, uint64_t wait_ns, bool producers_dead);

/* True when the last gt_drain_proc_run stopped for the writer's full queue (or did not start
 * for it), so records may be left in the ring: run it again once the writer has room
 * (gt_writer_wake_fd) before finishing the process without waiting. */
bool gt_drain_proc_pending(const struct gt_drain_proc *p);

/* Write a NOTICE about this process (severity enum gt_notice_severity, code
 * enum gt_notice_code). Returns 0 or -errno from the writer. */
int gt_drain_proc_notice(struct gt_drain_proc *p, unsigned severity, unsigned code,
                         const char *message);

/* Final drain (as gt_drain_proc_run, but waiting for the writer's room when its queue is
 * full: gt_writer_wait_space), then LOSS records (ring-full drops by type, torn and
 * corrupt counts), "<unknown>" for string ids that never arrived, and PROCESS_END with
 * how/code - unless the process wrote its own PROCESS_END (GT_END_DETACHED) into the ring,
 * which is used instead. Frees p and its ring. Returns 0 or -errno from the writer (p is
 * freed either way). */
int gt_drain_proc_finish(struct gt_drain_proc *p, unsigned how, int32_t code, uint64_t wait_ns,
                         bool producers_dead);

struct gt_drain_stats {
	uint64_t processes; /* processes started */
	uint64_t records;   /* records written from rings (strings included) */
	uint64_t dropped;   /* ring-full drops reported by finished processes */
	uint64_t torn;
	uint64_t corrupt; /* corrupt records, and rings given up */
};
void gt_drain_stats(const struct gt_drain *d, struct gt_drain_stats *out);

#endif /* GPUTRACE_DRAIN_H */
