/* How a collector plugs in: its descriptor, with every hook the library calls it by (CUPTI
 * activity records, the end of an activity buffer, callbacks, flushes, fork), the table of all
 * collectors (collector.c), and the few functions collectors share with each other. cupti.c
 * and inject.c call collectors only through the table. Runs inside the traced application. */
#ifndef GT_COLLECTORS_COLLECTOR_H
#define GT_COLLECTORS_COLLECTOR_H

#include <stdbool.h>
#include <stdint.h>

#include "envconf.h"

/* Why a flush hook runs. */
enum gt_flush_why {
	GT_FLUSH_PERIOD = 0, /* the flush thread, every GPUTRACE_FLUSH_MS */
	GT_FLUSH_LAST,       /* at exit or detach, after the flush thread stopped: the last one */
	GT_FLUSH_MAX
};

/* A callback hook: `data` is the domain's CUpti_*Data. */
typedef void gt_callback_fn(unsigned domain, unsigned cbid, const void *data);

/*
 * A collector. A collector is on when its trace_bit is configured (always when it is 0); the
 * CUPTI glue (cupti.c) then calls `enable`, enables its kinds and hands it their records, and
 * calls its callback for the domains it names. Hooks may be NULL.
 */
struct gt_collector {
	const char *name;
	unsigned trace_bit; /* enum gt_trace_bit; 0: always on (metadata, capture ranges) */
	/* CUpti_ActivityKind values, 0-terminated (NULL: none). Negative: dispatched here but
	 * enabled by `enable` itself; with trace_bit 0, enabled outside capture ranges too. */
	const int *kinds;
	/* Set-up when on (callbacks, attributes), at CUDA injection, before any hook runs.
	 * Returns 0, a CUptiResult (> 0: CUPTI refused; the collector is left out and the others
	 * trace, or tracing stops when `required` names the call) or < 0 (not needed in this
	 * configuration: left out). */
	int (*enable)(const struct gt_envconf *cfg);
	const char *required; /* non-NULL: a refused `enable` stops tracing, reported as this */
	/* One activity record (a CUpti_Activity *) of `kinds`. CUPTI's buffer-completion thread:
	 * may wait for ring space (gt_emit_wait), no locks held. */
	void (*activity)(const void *rec);
	/* The end of an activity buffer, after its last record; same thread as `activity`. */
	void (*buffer_end)(void);
	/* CUPTI callbacks of the domains in callback_domains (1u << CUpti_CallbackDomain), for
	 * the callbacks `enable` switched on. Application threads inside CUDA calls, re-entrancy
	 * guard held: never waits (gt_emit_nowait), no allocation, no locks on the launch path.
	 * Hooks of one domain run in table order. */
	unsigned callback_domains;
	gt_callback_fn *callback;
	/* The flush thread each period, and the exit or detach flush (GT_FLUSH_LAST); also in a
	 * process that never loads CUDA (NVTX only). May take locks; never on an application
	 * thread's record path. */
	void (*flush)(enum gt_flush_why why);
	/* In a fork()ed child, which is not traced unless it execs: forget locks and state that
	 * the parent's other threads may have held. Async-signal-safe work only. */
	void (*fork_child)(void);
};

/* Every collector, NULL-terminated, in the order hooks run (collector.c). */
extern const struct gt_collector *const gt_collectors[];

/* Whether the settings turn collector c on. */
bool gt_collector_on(const struct gt_collector *c, const struct gt_envconf *cfg);

/* Run every collector's flush hook that is on (the flush thread; the exit and detach flush). */
void gt_collectors_flush(enum gt_flush_why why);

/* Run every collector's fork_child hook (pthread_atfork's child handler). */
void gt_collectors_fork_child(void);

extern const struct gt_collector gt_collector_meta;
extern const struct gt_collector gt_collector_capture;
extern const struct gt_collector gt_collector_kernel;
extern const struct gt_collector gt_collector_memcpy;
extern const struct gt_collector gt_collector_memset;
extern const struct gt_collector gt_collector_memory;
extern const struct gt_collector gt_collector_api;
extern const struct gt_collector gt_collector_sync;
extern const struct gt_collector gt_collector_graph;
extern const struct gt_collector gt_collector_overhead;
extern const struct gt_collector gt_collector_nvtx;
extern const struct gt_collector gt_collector_gpumetrics;

/* ---- shared between collectors ---- */

/* CUpti_ActivityMemoryKind -> enum gt_mem_kind (memcpy.c; used by memset and memory too). */
uint32_t gt_mem_kind_from_cupti(unsigned k);

/* Context id -> device id, learned from CONTEXT records (0 if unknown). meta.c; any thread. */
uint32_t gt_meta_context_device(uint32_t context_id);
/* A thread seen in CUPTI records (activity API mode): write its THREAD record once. meta.c;
 * CUPTI's buffer thread. */
void gt_meta_thread_seen(uint32_t tid);
/* A thread named `name` ("" if unknown) when the library first sees it, on that thread:
 * writes its THREAD record and keeps it known, for the rescan. meta.c; lock-free,
 * signal-safe. */
void gt_meta_thread_named(uint32_t tid, const char *name);

/* NVTX capture: a range named capture_name opened or closed. True when it counted (see
 * capture.c); only then is its close reported. NVTX handler threads. */
bool gt_capture_nvtx(const char *message, bool open);

#endif /* GT_COLLECTORS_COLLECTOR_H */
