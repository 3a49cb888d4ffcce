/* Live aggregates of a tracing session, for `gputrace run --live`: the drain feeds every
 * record it writes to the trace (gt_live_tap), and one other thread reads consistent
 * snapshots of the totals so far. Neither side ever waits for the other: snapshots go through
 * three buffers handed over by single atomic exchanges. Rates over an interval come from two
 * snapshots (gt_live_delta_update). Runs in the CLI. */
#ifndef GPUTRACE_LIVE_H
#define GPUTRACE_LIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "drain.h"
#include "gputrace/record.h"

struct gt_live;

#define GT_LIVE_STACK_MAX 8u /* NVTX frames kept per thread, outermost first */

/* Copy directions shown apart. */
enum gt_live_copy {
	GT_LIVE_HTOD = 0,
	GT_LIVE_DTOH,
	GT_LIVE_DTOD,
	GT_LIVE_PTOP,
	GT_LIVE_COPY_OTHER, /* arrays, host to host, unknown */
	GT_LIVE_COPY_MAX
};

/* A GPU as the catalog (exporters/model/catalog.h) knows it: one per uuid, whichever processes use
 * it; a device no DEVICE record named yet is one per (process, CUDA ordinal), and merged into
 * the GPU its uuid names when the record comes. */
struct gt_live_gpu {
	uint8_t uuid[16];
	uint32_t number;         /* "GPU n", as every output names it */
	bool merged;             /* folded into another row (which counts its activity): skip */
	uint32_t pid, device_id; /* the first process and CUDA ordinal that used it */
	const char *name;        /* NULL until a DEVICE record named it */
	uint64_t mem_total_bytes;
	uint64_t kernels;   /* kernels so far */
	uint64_t kernel_ns; /* their durations summed */
	/* The union of the kernels' [start, end] intervals, taken over the kernels drained
	 * between two publications and summed: concurrent kernels count once. */
	uint64_t busy_ns;
	uint64_t copies[GT_LIVE_COPY_MAX];
	uint64_t copy_bytes[GT_LIVE_COPY_MAX];
	uint64_t memsets, memset_bytes;
	/* device and managed memory allocated minus freed, as the catalog counts it (the
	 * timeline's "memory in use" counter), and its peak */
	uint64_t mem_bytes, mem_peak_bytes;
	/* GPU metrics (run --gpu-metrics), as the latest sample gives them: false until one */
	bool metrics;
	double sm_active_pct;    /* SMs Active, % */
	double dram_bytes_per_s; /* DRAM read + write */
};

/* Kernels by name, NVTX ranges by message: totals so far. */
struct gt_live_stat {
	const char *name; /* kernels: mangled as CUPTI reports it; NULL: its string never came */
	uint64_t count;
	uint64_t total_ns;
};

/* A thread that used NVTX push/pop ranges. */
struct gt_live_thread {
	uint32_t pid, tid;
	const char *name; /* from its first THREAD record, or NULL */
	/* The ranges around the last one that ended, outermost first. NVTX ranges reach the
	 * trace when they end, so a range still open is NULL: its name comes when it ends. */
	uint32_t depth;
	const char *stack[GT_LIVE_STACK_MAX];
	/* Steps: outermost ranges whose names differ at most in trailing digits
	 * ("ProfilerStep#411", "ProfilerStep#412") and that ended one after the other at least
	 * twice; step is the last one's name, step_len the part before its digits. */
	const char *step; /* NULL: no steps seen */
	uint32_t step_len;
	uint64_t steps;   /* steps that ended */
	uint64_t step_ns; /* duration of the last */
};

enum gt_live_state {
	GT_LIVE_RUNNING = 0,
	GT_LIVE_EXITED,   /* code: exit status */
	GT_LIVE_KILLED,   /* code: signal */
	GT_LIVE_DETACHED, /* tracing stopped early; it may run on */
	GT_LIVE_ENDED,    /* gone, how unknown */
	GT_LIVE_STATE_MAX
};

struct gt_live_process {
	uint32_t pid, ppid;
	int32_t rank, local_rank, world_size; /* -1 if unset */
	const char *exe;                      /* NULL if its string never came */
	uint32_t state;                       /* enum gt_live_state */
	int32_t code;
};

/* Totals so far, as of one publication. Arrays are indexed the same way in every snapshot of
 * one gt_live (entries are only ever added at the end). Strings stay valid until
 * gt_live_free. */
struct gt_live_snapshot {
	uint64_t seq;      /* publications so far; 0: nothing published yet */
	uint64_t start_ns; /* trace clock when the gt_live was made */
	uint64_t ts_ns;    /* trace clock of this publication */
	uint64_t records;  /* records and strings the drain wrote to the trace */
	uint64_t api_calls;
	uint64_t api_failed;      /* calls that returned an error (not "not ready": 600) */
	const char *failed_name;  /* the last failed call's name, NULL if none */
	int32_t failed_code;      /* its cudaError_t or CUresult */
	uint32_t failed_domain;   /* enum gt_api_domain */
	const char *failed_error; /* the code's name ("cudaErrorMemoryAllocation"), NULL unknown */
	uint64_t lost;            /* LOSS records' counts, plus ring drops not yet in one */
	uint64_t nvtx_ranges;     /* push/pop and start/end ranges */
	uint64_t nvtx_marks;
	bool incomplete; /* out of memory once: some totals miss records */
	struct gt_live_gpu *gpus;
	size_t ngpus;
	struct gt_live_stat *kernels;
	size_t nkernels;
	struct gt_live_stat *ranges;
	size_t nranges;
	struct gt_live_thread *threads;
	size_t nthreads;
	struct gt_live_process *procs;
	size_t nprocs;
};

/* Make an aggregate; start_ns is the trace clock now (gt_now_ns()). wake: create an eventfd
 * that becomes readable at each publication (gt_live_wake_fd); false for tests that poll.
 * Returns 0 and *ret, or -ENOMEM, or -errno of eventfd. */
int gt_live_new(uint64_t start_ns, bool wake, struct gt_live **ret);

/* NULL is accepted. Call only when neither side uses it any more. */
void gt_live_free(struct gt_live *l);

/* ---- the drain's side (one thread) ---- */

/* The tap to hand to the drain (gt_session_options.tap); it calls the three below. */
const struct gt_drain_tap *gt_live_tap(struct gt_live *l);

/* One record as the drain wrote it (global string ids). */
void gt_live_record(struct gt_live *l, const struct gt_rec_hdr *rec);

/* Global string `id` is s[0..len). */
void gt_live_string(struct gt_live *l, uint32_t id, const char *s, size_t len);

/* Process pid's ring has dropped `ring_dropped` records that no LOSS record reports yet. */
void gt_live_ring_dropped(struct gt_live *l, uint32_t pid, uint64_t ring_dropped);

/* If the reader asked (gt_live_request), publish the totals as of now_ns (trace clock) and
 * make the wake fd readable. The tap does this at the end of each drain pass. Returns 1 when
 * it published, 0 when nobody asked, -ENOMEM (nothing published; the reader keeps the last
 * snapshot). */
int gt_live_publish(struct gt_live *l, uint64_t now_ns);

/* ---- the reader's side (one other thread) ---- */

/* Ask for a snapshot at the drain's next pass. Never waits. */
void gt_live_request(struct gt_live *l);

/* Readable when something was published; read 8 bytes to clear it. -1 without one. */
int gt_live_wake_fd(const struct gt_live *l);

/* The newest snapshot published (seq 0 if none yet). It stays valid, and unchanged, until
 * the reader's next call. Never waits. */
const struct gt_live_snapshot *gt_live_acquire(struct gt_live *l);

/* The reader is gone for good: the drain's side stops aggregating (each record then costs
 * it one atomic load). */
void gt_live_stop(struct gt_live *l);

/* ---- intervals: rates from two snapshots (the reader's side) ---- */

struct gt_live_gpu_rate {
	double busy_pct; /* busy_ns over the interval, at most 100 */
	double kernels_per_s;
	double copy_bytes_per_s[GT_LIVE_COPY_MAX];
	double memsets_per_s;
};

struct gt_live_count {
	uint64_t count;
	uint64_t ns;
};

/* What happened between the last two snapshots given to gt_live_delta_update. Arrays are
 * indexed as the snapshot's. Owned by the delta; zero it before the first use. */
struct gt_live_delta {
	uint64_t seq;   /* of the last snapshot taken in */
	uint64_t dt_ns; /* between it and the one before (or the start, for the first) */
	double api_per_s, records_per_s, ranges_per_s;
	struct gt_live_gpu_rate *gpus;
	struct gt_live_count *kernels, *ranges;
	double *steps_per_s; /* per thread */
	/* private: the previous totals */
	uint64_t prev_ts_ns, prev_api, prev_records, prev_ranges;
	struct gt_live_gpu *prev_gpus;
	struct gt_live_count *prev_kernels, *prev_ranges_n;
	uint64_t *prev_steps;
	size_t cap_gpus, cap_kernels, cap_ranges, cap_threads;
};

/* Take in snapshot s: the interval is from the previous one given (or s->start_ns) to s.
 * The same snapshot again (same seq) changes nothing. Returns 1 when the interval changed,
 * 0 when not, -ENOMEM (the delta keeps the last interval). */
int gt_live_delta_update(struct gt_live_delta *d, const struct gt_live_snapshot *s);

void gt_live_delta_fini(struct gt_live_delta *d);

/* ---- presentation helpers ---- */

enum gt_live_sort {
	GT_LIVE_SORT_TIME = 0,
	GT_LIVE_SORT_COUNT,
	GT_LIVE_SORT_MEAN,
	GT_LIVE_SORT_MAX
};

/* Order n rows (kernels or ranges: totals and the last interval's counts) for display: by
 * the key over the last interval, then the same key over the whole run, then by index, all
 * descending but the index. Writes n indices to order. */
void gt_live_sort(const struct gt_live_stat *total, const struct gt_live_count *interval, size_t n,
                  enum gt_live_sort key, uint32_t *order);

/* "time", "count", "mean". */
const char *gt_live_sort_name(enum gt_live_sort key);

/* A (demangled) kernel name fitted into `width` columns: whole when it fits; else without
 * its return type and parameter list, then with template arguments folded to "<...>", then
 * without leading namespaces, then cut with "..." at the end. Writes at most width bytes and
 * a NUL into buf (buf_bytes > width). Returns buf. */
char *gt_live_shorten(const char *name, size_t width, char *buf, size_t buf_bytes);

/* The length of name without its trailing digits (the stem that names a step). */
size_t gt_live_stem_len(const char *name, size_t len);

#endif /* GPUTRACE_LIVE_H */
