/* The trace writer's queue: compressed chunks handed over by the drain and written to the
 * file by a thread of its own, so that a slow write() or fsync() never stops the drain.
 * Internal to src/format/writer.c. Runs in the CLI and in the standalone drainer's process. */
#ifndef GPUTRACE_WRITEQ_H
#define GPUTRACE_WRITEQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct gt_writeq;

/* Most bytes one write()/writev() of the trace takes: a returned call is the writer's sign of
 * life, so this is the granularity at which a slow disk is seen to move. */
#define GT_WRITE_MAX_BYTES (1u << 20)

/* Start the writer thread on fd (borrowed until gt_writeq_finish or gt_writeq_cancel say
 * otherwise). limit_bytes: gt_writeq_full() is true while this many bytes wait. stall_ns:
 * the waits below give up once no write() or fsync() has returned for this long (0: they
 * wait as long as it takes). The thread takes no signals. Returns 0 and *ret, or -errno. */
int gt_writeq_new(int fd, size_t limit_bytes, uint64_t stall_ns, struct gt_writeq **ret);

/* Queue a copy of len bytes, written after everything queued before. Never waits (the
 * limit is for the caller to respect through gt_writeq_full). Returns 0, -ENOMEM, or the
 * first write error. */
int gt_writeq_push(struct gt_writeq *q, const void *bytes, size_t len);

/* True while the bytes waiting reach the limit. Any thread; lock-free. */
bool gt_writeq_full(const struct gt_writeq *q);

/* The first write error (-errno), 0 if none. Any thread; lock-free. */
int gt_writeq_error(const struct gt_writeq *q);

/* Calls to write()/fsync() that returned so far. Any thread; lock-free. */
uint64_t gt_writeq_progress(const struct gt_writeq *q);

/* An eventfd (non-blocking) that the thread writes after each batch of chunks it wrote:
 * a drain that stopped on a full queue sleeps on it. Owned by the queue. */
int gt_writeq_wake_fd(const struct gt_writeq *q);

/* Wait until the queue is below its limit. Returns 0, the first write error, or
 * -ETIMEDOUT when the writing stalled (see stall_ns; at once if it stalled before and has
 * not moved since). */
int gt_writeq_wait_space(struct gt_writeq *q);

/* Write everything queued, fsync, stop the thread and free the queue. Returns 0 or the
 * first write/fsync error (the queue is freed; fd stays the caller's), or -ETIMEDOUT when
 * the writing stalled: then the queue, and fd with it, are left to the thread, which
 * closes fd and frees the queue if its call ever returns, and writes nothing more. */
int gt_writeq_finish(struct gt_writeq *q);

/* Drop what is queued, stop the thread and free the queue. Returns 0 (fd stays the
 * caller's) or -ETIMEDOUT (the thread keeps fd, as in gt_writeq_finish). */
int gt_writeq_cancel(struct gt_writeq *q);

#endif /* GPUTRACE_WRITEQ_H */
