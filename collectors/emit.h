/* What a collector uses to write records (emit.c): the state a record's path reads, the
 * record header, the two ways to write a record (one that may wait for ring space, one that
 * never does), string interning, the calling thread's id, the callbacks' re-entrancy guard
 * and debug output. Runs inside the traced application; nothing here is exported. */
#ifndef GT_COLLECTORS_EMIT_H
#define GT_COLLECTORS_EMIT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "envconf.h"
#include "gputrace/record.h"

struct gt_client;
struct gt_ring;

/* The library's state (defined in inject.c, which owns its lifetime). */
struct gt_inject {
	struct gt_envconf cfg;    /* the GPUTRACE_* settings, read once at start */
	struct gt_client *client; /* NULL until opened, and again after close/fork */
	struct gt_ring *ring;     /* borrowed from client */
	uint32_t pid;
	/* 1 while records may be written; cleared at detach, at exit and in a fork()ed child.
	 * Relaxed loads on hot paths: a record racing the clear still lands in a live ring. */
	_Atomic int active;
	/* 1 while inside the capture range (always 1 without GPUTRACE_CAPTURE_RANGE). */
	_Atomic int capturing;
	_Atomic bool cupti_on; /* subscribed and activity enabled; read by the flush thread */
};

extern struct gt_inject gt_inj;

/* Fill a record header. Any thread, inline. */
static inline void gt_hdr(struct gt_rec_hdr *h, unsigned type, size_t bytes)
{
	h->type = (uint16_t)type;
	h->size = (uint16_t)bytes;
	h->pid = gt_inj.pid;
}

/* Write one record, waiting a bounded time for ring space when the ring is full. Only on our
 * own threads and CUPTI's: the buffer-completion thread, the flush thread, the exit flush. */
void gt_emit_wait(struct gt_rec_hdr *rec);

/* Write one record; never waits: a full ring drops it and counts the drop. Application
 * threads (callbacks, NVTX handlers), or wherever waiting is not wanted. */
void gt_emit_nowait(struct gt_rec_hdr *rec);

/* Write n records of one type and size, back to back from `first`, with one ring
 * reservation; never waits (a full ring drops and counts all n). */
void gt_emit_batch(const struct gt_rec_hdr *first, size_t bytes, unsigned n);

/* Write a LOSS record: `count` records of `kind` (GT_REC_NONE: any) lost to `source`; as
 * gt_emit_wait (our threads and CUPTI's only). */
void gt_emit_loss_wait(unsigned source, uint64_t count, unsigned kind);

/* Fill a NOTICE record stamped now, its message interned; the caller writes it with
 * gt_emit_wait or gt_emit_nowait as its thread allows. */
void gt_notice_fill(struct gt_rec_notice *r, unsigned severity, unsigned code, int detail,
                    const char *message);

/* Intern a string for this process; GT_STRING_NONE if s is NULL or tracing is off. Any
 * thread; lock-free unless the string is new to the process. */
uint32_t gt_intern(const char *s);
uint32_t gt_intern_len(const char *s, size_t len);

/* The calling thread's kernel tid; the first call on a thread also writes its THREAD record
 * (meta.c). Any thread. */
uint32_t gt_thread_id(void);

/* Per-thread re-entrancy guard for callbacks: enter returns false if already inside. */
bool gt_guard_enter(void);
void gt_guard_leave(void);

/* Debug print, only with GPUTRACE_DEBUG set. */
void gt_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif /* GT_COLLECTORS_EMIT_H */
