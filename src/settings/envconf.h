/* The GPUTRACE_* settings (src/settings/env.h names them): what each accepts, its default,
 * and the one parser both sides use. `gputrace run` checks its options with it before it sets
 * them for the program, and the injection library reads the environment with it at load, so a
 * value is accepted or refused the same way, with the same words, by either. Runs in both
 * processes: in the application once, at injection time; pure functions, no allocation. */
#ifndef GPUTRACE_ENVCONF_H
#define GPUTRACE_ENVCONF_H

#include <stdbool.h>
#include <stddef.h>

/* What GPUTRACE_TRACE selects; one bit per collector. */
enum gt_trace_bit {
	GT_TRACE_KERNEL = 1u << 0,
	GT_TRACE_MEMCPY = 1u << 1,
	GT_TRACE_MEMSET = 1u << 2,
	GT_TRACE_MEMORY = 1u << 3,
	GT_TRACE_API = 1u << 4,
	GT_TRACE_NVTX = 1u << 5,
	GT_TRACE_SYNC = 1u << 6,
	GT_TRACE_GRAPH = 1u << 7,
	GT_TRACE_OVERHEAD = 1u << 8,
	GT_TRACE_ALL = (1u << 9) - 1,
};

/* "default": everything but CUPTI's overhead records, which help only when debugging CUPTI,
 * and CUPTI's SYNCHRONIZATION records, which cost a PyTorch small-op loop about a fifth of its
 * step time on the H200 (docs/performance.md); the synchronizing calls are API records anyway. */
#define GT_TRACE_DEFAULT (GT_TRACE_ALL & ~(GT_TRACE_OVERHEAD | GT_TRACE_SYNC))
/* "cuda", Nsight Systems' `-t cuda`: the default without NVTX. */
#define GT_TRACE_CUDA (GT_TRACE_DEFAULT & ~GT_TRACE_NVTX)

enum gt_api_filter {
	GT_API_FILTER_LAUNCH = 0, /* launch, copy, set, allocate, free, synchronize, graph launch */
	GT_API_FILTER_ALL,
	GT_API_FILTER_NONE,
	GT_API_FILTER_MAX
};

/* Where API records come from; see docs/collectors.md for the measurement behind the default. */
enum gt_api_source {
	GT_API_SOURCE_CALLBACK = 0, /* CUPTI callback API, per-cbid enable, our own timestamps */
	GT_API_SOURCE_ACTIVITY,     /* CUPTI RUNTIME/DRIVER activity records, per-cbid enable */
	GT_API_SOURCE_MAX
};

enum gt_capture_mode {
	GT_CAPTURE_NONE = 0,     /* trace from the start */
	GT_CAPTURE_PROFILER_API, /* between cudaProfilerStart and cudaProfilerStop */
	GT_CAPTURE_NVTX,         /* inside NVTX ranges whose message is capture_name */
	GT_CAPTURE_MAX
};

/* Bytes kept of an NVTX capture range's name, its terminator included: names up to 127. */
#define GT_CAPTURE_NAME_MAX 128

/* Which stacks are recorded (GPUTRACE_BACKTRACE). */
enum gt_backtrace_mode {
	GT_BACKTRACE_NONE = 0, /* the default */
	GT_BACKTRACE_NATIVE,   /* native frames (instruction addresses) */
	GT_BACKTRACE_PYTHON,   /* Python frames (code objects and instruction offsets) */
	GT_BACKTRACE_ALL,      /* both: native frames up to the interpreter, then Python's */
	GT_BACKTRACE_MAX
};

/* The CUDA API calls whose stacks are recorded, as Nsight Systems groups them. */
enum gt_backtrace_kind {
	GT_BT_KERNEL = 1u << 0, /* launches: kernels and graphs */
	GT_BT_MEMORY = 1u << 1, /* copies, memsets, allocations and frees */
	GT_BT_SYNC = 1u << 2,   /* synchronization */
	GT_BT_OTHER = 1u << 3,  /* every other call */
	GT_BT_ALL = 0xfu,
};

/* The settings, one key each; GPUTRACE_DEBUG, a switch, has none (any non-empty value but
 * "0" turns it on). */
enum gt_envconf_key {
	GT_ENVCONF_TRACE = 0,   /* GPUTRACE_TRACE */
	GT_ENVCONF_API,         /* GPUTRACE_API */
	GT_ENVCONF_API_SOURCE,  /* GPUTRACE_API_SOURCE */
	GT_ENVCONF_BUFFER_SIZE, /* GPUTRACE_BUFFER_SIZE */
	GT_ENVCONF_FLUSH_MS,    /* GPUTRACE_FLUSH_MS */
	GT_ENVCONF_CAPTURE,     /* GPUTRACE_CAPTURE_RANGE */
	GT_ENVCONF_GRAPH,       /* GPUTRACE_GRAPH */
	GT_ENVCONF_WRITE_QUEUE, /* GPUTRACE_WRITE_QUEUE; `gputrace run --write-queue` */
	GT_ENVCONF_WRITE_TIMEOUT, /* GPUTRACE_WRITE_TIMEOUT */
	GT_ENVCONF_BACKTRACE,   /* GPUTRACE_BACKTRACE; `gputrace run --backtrace` */
	GT_ENVCONF_GPU_METRICS, /* GPUTRACE_GPU_METRICS; `gputrace run --gpu-metrics` */
	GT_ENVCONF_MAX
};

/* GPU metric sets (collectors/gpumetrics-sets.c, docs/gpu-metrics.md). */
enum gt_gm_set {
	GT_GM_SET_DEFAULT = 0, /* every metric the GPU has */
	GT_GM_SET_SM,          /* SMs active, SM issue, tensor active, GR active */
	GT_GM_SET_MAX
};

#define GT_GM_HZ_DEFAULT 10000u   /* samples per second */
#define GT_GM_HZ_MAX     1000000u /* 1 us: PM sampling's shortest interval is about that */

/* How long the end of a trace (gputrace run's, a standalone process's close) waits for a
 * writer that makes no progress (GPUTRACE_WRITE_TIMEOUT; the writer's stall_ns): a minute
 * without a single returning write or sync is far beyond a slow disk. */
#define GT_WRITE_TIMEOUT_DEFAULT_NS (60ull * 1000 * 1000 * 1000)
/* The longest GPUTRACE_WRITE_TIMEOUT: a day. */
#define GT_WRITE_TIMEOUT_MAX_S 86400u
/* The largest writer queue: 4 GiB. */
#define GT_WRITE_QUEUE_MAX_BYTES (4ull << 30)

struct gt_envconf {
	unsigned trace;      /* enum gt_trace_bit mask */
	unsigned api_filter; /* enum gt_api_filter */
	unsigned api_source; /* enum gt_api_source */
	size_t ring_bytes;   /* 0: the ring's default; else GT_RING_MIN_BYTES..GT_RING_MAX_BYTES */
	unsigned flush_ms;   /* CUPTI flush period; 0 disables the periodic flush */
	unsigned capture;    /* enum gt_capture_mode */
	char capture_name[GT_CAPTURE_NAME_MAX]; /* for GT_CAPTURE_NVTX */
	bool graph_nodes;    /* GPUTRACE_GRAPH=node: per-node records instead of graph launches */
	bool debug;          /* GPUTRACE_DEBUG set: diagnostics on stderr */
	bool api_source_set; /* GPUTRACE_API_SOURCE was given (else a capture range picks it) */
	/* the trace's writer (the CLI's in a session, the process's own standalone): compressed
	 * chunks waiting for the disk, bytes (0: written from the drain, no queue) */
	uint64_t write_queue_bytes;
	/* standalone: how long the close waits without the writer making progress, ns */
	uint64_t write_timeout_ns;
	unsigned backtrace;          /* enum gt_backtrace_mode */
	unsigned backtrace_kinds;    /* enum gt_backtrace_kind mask: API calls that get a stack */
	uint64_t backtrace_min_ns;   /* only API calls that took at least this long, ns */
	/* GPU metrics (PM sampling): off unless GPUTRACE_GPU_METRICS is set */
	bool gpu_metrics;
	uint64_t gpu_metrics_devices; /* CUDA ordinals to sample, one bit each (all: ~0) */
	uint32_t gpu_metrics_hz;      /* samples per second */
	uint32_t gpu_metrics_set;     /* enum gt_gm_set */
};

/* Environment lookup, so tests can parse without touching the process environment. */
typedef const char *(*gt_getenv_fn)(const char *name);

/* Every setting at its default. */
void gt_envconf_defaults(struct gt_envconf *cfg);

/* The variable behind a key ("GPUTRACE_TRACE"); NULL for a key out of range. */
const char *gt_envconf_name(enum gt_envconf_key key);

/*
 * Parse one setting's value into *cfg. Words are matched in any case (the NAME of nvtx:NAME
 * exactly); a list of kinds is separated by commas or spaces. Returns 0; or -EINVAL (also for
 * a number out of range) with *hint set to what the setting accepts ("use launch, all or
 * none"; static), *cfg untouched. Messages name the value and then the hint:
 * "<setting>: '<value>' is not valid; <hint>".
 */
int gt_envconf_set(struct gt_envconf *cfg, enum gt_envconf_key key, const char *value,
                   const char **hint);

/*
 * Fill *cfg from the environment: defaults, then every variable that is set and non-empty
 * (an empty one counts as unset), then what follows from them: a capture range takes API
 * records from callbacks unless GPUTRACE_API_SOURCE says otherwise, and an NVTX capture range
 * turns NVTX tracing on. Every value is parsed even after a bad one, which keeps its default.
 * Returns 0, or -EINVAL with the first problem written to msg (bytes, may be 0):
 * "GPUTRACE_API: 'x' is not valid; use launch, all or none".
 */
int gt_envconf_parse(struct gt_envconf *cfg, gt_getenv_fn get, char *msg, size_t bytes);

/* 1 if the runtime or driver function `name` launches, copies, sets, allocates, frees,
 * synchronizes or launches a graph: the calls GPUTRACE_API=launch keeps. */
int gt_envconf_api_is_launch(const char *name);

/* The GT_BT_* kind of the runtime or driver function `name` (GT_BT_OTHER when none fits). */
unsigned gt_envconf_backtrace_kind(const char *name);

#endif /* GPUTRACE_ENVCONF_H */
