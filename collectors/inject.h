/* Internal interface of libgputrace-inject.so: the state every collector shares,
 * and the ops table through which collectors plug into the CUPTI activity dispatcher.
 * Runs inside the traced application; nothing declared here is exported from the library. */
#ifndef GT_COLLECTORS_INJECT_H
#define GT_COLLECTORS_INJECT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gputrace/envconf.h"
#include "gputrace/record.h"

/* ---- shared state (inject.c) ---- */

struct gt_client;
struct gt_ring;

struct gt_inject {
	struct gt_envconf cfg;
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

/* Open the client (ring, session or standalone file) once, from whichever entry point runs
 * first (CUDA or NVTX injection). Returns 0 or -errno; thread-safe. */
int gt_inject_start(void);

/* Stop tracing: write a NOTICE (code, detail, message) and PROCESS_END(DETACHED), close the
 * client. The application continues untraced. */
void gt_inject_detach(unsigned code, int detail, const char *message);

/* Debug print, only with GPUTRACE_DEBUG set. */
void gt_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Fill a record header. */
static inline void gt_hdr(struct gt_rec_hdr *h, unsigned type, size_t bytes)
{
	h->type = (uint16_t)type;
	h->size = (uint16_t)bytes;
	h->pid = gt_inj.pid;
}

/* Write one record. `wait`: true only on CUPTI's buffer thread (may wait a bounded time for
 * ring space); application threads never wait and the ring counts a drop instead. */
void gt_emit(struct gt_rec_hdr *rec, bool wait);

/* Write a LOSS record: `count` records of `kind` (GT_REC_NONE: any) lost to `source`;
 * `wait` as for gt_emit. */
void gt_emit_loss(unsigned source, uint64_t count, unsigned kind, bool wait);

/* Write n records of one type and size, back to back at first, with one ring reservation;
 * never waits (a full ring drops and counts all n). */
void gt_emit_batch(const struct gt_rec_hdr *first, size_t bytes, unsigned n);

/* Intern a string for this process; GT_STRING_NONE if s is NULL or tracing is off. */
uint32_t gt_intern(const char *s);
uint32_t gt_intern_len(const char *s, size_t len);

/* The calling thread's kernel tid; the first call on a thread also writes its THREAD record. */
uint32_t gt_thread_id(void);

/* Per-thread re-entrancy guard for callbacks: enter returns false if already inside. */
bool gt_guard_enter(void);
void gt_guard_leave(void);

/* ---- CUPTI side (cupti.c, cuptilib.c) ---- */

/* Load libcupti (dlopen with a search list). Returns 0, or -ENOENT with *why describing where
 * it looked. */
int gt_cupti_load(const char **why);

/* Subscribe, register buffers and the timestamp clock, enable every configured collector,
 * start the flush thread. Returns 0, or the failing CUptiResult as a positive number with
 * *what naming the call. */
int gt_cupti_start(const char **what);

/* Forced flush of every CUPTI buffer, then dropped-record accounting. Any thread but CUPTI's. */
void gt_cupti_flush(bool forced);

/* The periodic flush thread (GPUTRACE_FLUSH_MS; also re-anchors the TSC clock). Start once
 * the client is open: returns 0 (also when the period is 0) or -errno. Stop is bounded and
 * idempotent. */
int gt_flush_start(void);
void gt_flush_stop(void);

/* Stop the flush thread, forced flush, dropped-record accounting. At exit. */
void gt_cupti_stop(void);

/* Enable or disable every configured activity kind (capture ranges). */
void gt_cupti_set_capturing(bool on);

/* Enable or disable one callback on our subscriber. Returns 0 or the CUptiResult. */
int gt_cupti_enable_callback(unsigned domain, unsigned cbid, bool on);

/* Name of a CUptiResult (never NULL). */
const char *gt_cupti_result_name(int res);

/* ---- collectors ---- */

/* A collector turns one or more CUPTI activity kinds into gt_rec_* records. The dispatcher
 * in cupti.c enables `kinds` when `trace_bit` is configured and hands it every record of
 * those kinds, on CUPTI's buffer-completion thread (may wait for ring space, no locks held). */
struct gt_collector {
	const char *name;
	unsigned trace_bit; /* enum gt_trace_bit; 0: always on (metadata) */
	const int *kinds;   /* CUpti_ActivityKind values, 0-terminated */
	/* Optional: extra set-up when enabled (callbacks, attributes). Returns 0, a CUptiResult
	 * (> 0: CUPTI refused, collector left out) or < 0 (not needed in this configuration). */
	int (*enable)(const struct gt_envconf *cfg);
	/* Parse one activity record (a CUpti_Activity *) of one of `kinds`. */
	void (*activity)(const void *rec);
};

extern const struct gt_collector gt_collector_kernel;
extern const struct gt_collector gt_collector_memcpy;
extern const struct gt_collector gt_collector_memset;
extern const struct gt_collector gt_collector_memory;
extern const struct gt_collector gt_collector_api;
extern const struct gt_collector gt_collector_sync;
extern const struct gt_collector gt_collector_graph;
extern const struct gt_collector gt_collector_overhead;
extern const struct gt_collector gt_collector_meta;

/* CUpti_ActivityMemoryKind -> enum gt_mem_kind (memcpy.c; used by memset and memory too). */
uint32_t gt_mem_kind_from_cupti(unsigned k);

/* Callback-API hooks, called by the single CUPTI subscriber callback in cupti.c with the
 * re-entrancy guard held. `data` is the domain's CUpti_*Data. */
void gt_api_callback(unsigned domain, unsigned cbid, const void *data);
/* End of an activity buffer: emit the driver API records the API collector held back while
 * looking for the runtime call they were made inside (CUPTI's buffer thread). */
void gt_api_activity_flush(void);
/* 1 if the API collector records this (domain, cbid) through callbacks. */
bool gt_api_wants(unsigned domain, unsigned cbid);
void gt_meta_resource(unsigned cbid, const void *data);
/* Capture-range hooks: profiler start/stop and device reset, from API callbacks. */
void gt_capture_api(unsigned domain, unsigned cbid, const void *data);
/* Enable the callbacks capture.c needs (profiler start/stop, device reset). 0 or CUptiResult. */
int gt_capture_enable(const struct gt_envconf *cfg);
/* NVTX capture: a range named capture_name opened or closed. True when it counted (see
 * capture.c); only then is its close reported. */
bool gt_capture_nvtx(const char *message, bool open);
/* fork() child: capture's lock and nesting start afresh. */
void gt_capture_fork_child(void);

/* Context id -> device id, learned from CONTEXT records (0 if unknown). */
uint32_t gt_meta_context_device(uint32_t context_id);
/* A thread seen in CUPTI records (activity API mode): write its THREAD record once. */
void gt_meta_thread_seen(uint32_t tid);
/* A thread named `name` ("" if unknown) when the library first sees it, on that thread:
 * writes its THREAD record and keeps it known, for the rescan. Lock-free, signal-safe. */
void gt_meta_thread_named(uint32_t tid, const char *name);
/* Write a THREAD record for every known thread whose name changed since it was recorded.
 * One caller at a time (the flush thread, then the final flush). */
void gt_meta_rescan_threads(void);

/* NVTX: whether our NVTX handlers are installed (nvtx.c). */
extern _Atomic int gt_nvtx_installed;
/* Publish every thread's staged NVTX records (the flush thread, each period; the exit flush
 * and detach, with `last`: ranges still open then are counted as unrecorded). Takes a mutex;
 * never on a record's path. */
void gt_nvtx_publish_all(bool last);
/* From now on NVTX records go to the ring one by one, not through the threads' stages (the
 * exit flush and detach call it before their last publish, so nothing is staged after). */
void gt_nvtx_stage_off(void);

#endif /* GT_COLLECTORS_INJECT_H */
