/* Environment variables read by the injection library and set by `gputrace run`.
 * One list, so the CLI, the library and the docs agree. Runs in both processes. */
#ifndef GPUTRACE_ENV_H
#define GPUTRACE_ENV_H

/* Address of the session (socket path). Unset: standalone mode. */
#define GT_ENV_SESSION "GPUTRACE_SESSION"
/* Standalone output path; patterns %p %h %q{VAR} %n. Default "gputrace-%p.gtrace". */
#define GT_ENV_OUTPUT "GPUTRACE_OUTPUT"
/* Comma-separated kinds: kernel,memcpy,memset,memory,api,nvtx,sync,graph,overhead
 * (or "all", "default"). */
#define GT_ENV_TRACE "GPUTRACE_TRACE"
/* API filter: launch (default), all, none. */
#define GT_ENV_API "GPUTRACE_API"
/* Where API records come from: activity (CUPTI's RUNTIME/DRIVER activity records, measured
 * cheaper: the default) or callback (CUPTI's callback API with our own timestamps: the
 * default under a capture range, which must cut at the call that opens it). */
#define GT_ENV_API_SOURCE "GPUTRACE_API_SOURCE"
/* Ring size in bytes, with optional K/M/G suffix. */
#define GT_ENV_BUFFER_SIZE "GPUTRACE_BUFFER_SIZE"
/* CUPTI activity flush period in milliseconds (0 disables the periodic flush). */
#define GT_ENV_FLUSH_MS "GPUTRACE_FLUSH_MS"
/* Capture range: none, cudaProfilerApi, nvtx:NAME. */
#define GT_ENV_CAPTURE "GPUTRACE_CAPTURE_RANGE"
/* Graph tracing granularity: graph (default) or node. */
#define GT_ENV_GRAPH "GPUTRACE_GRAPH"
/* Standalone: compressed trace bytes that may wait for the disk (K/M/G suffix; 0 writes from
 * the drainer thread itself). Default GT_WRITE_QUEUE_DEFAULT_BYTES (64M). */
#define GT_ENV_WRITE_QUEUE "GPUTRACE_WRITE_QUEUE"
/* Standalone: at exit, seconds the trace's writing may go without progress (no write, sync
 * or drained record) before the process gives up on completing it. Default 60. */
#define GT_ENV_WRITE_TIMEOUT "GPUTRACE_WRITE_TIMEOUT"
/* Stacks of API calls and NVTX ranges: none (default) or MODE[:KINDS[:NS]], MODE native,
 * python or all (both), KINDS a
 * comma-separated list of kernel, memory, sync, other or all (default all), NS the shortest
 * API call, in nanoseconds, that gets one (default 0). */
#define GT_ENV_BACKTRACE "GPUTRACE_BACKTRACE"
/* GPU metrics sampled over time (PM sampling): [DEVICES][:FREQUENCY][:SET], docs/gpu-metrics.md */
#define GT_ENV_GPU_METRICS "GPUTRACE_GPU_METRICS"
/* Non-empty: diagnostics from the injection library go to stderr. */
#define GT_ENV_DEBUG "GPUTRACE_DEBUG"
/* Set by gputrace run on the child: the CLI's pid, so a child knows it is traced. */
#define GT_ENV_PARENT "GPUTRACE_CLI_PID"

/* Set for the traced program so the driver and NVTX load us. */
#define GT_ENV_CUDA_INJECTION "CUDA_INJECTION64_PATH"
#define GT_ENV_NVTX_INJECTION "NVTX_INJECTION64_PATH"

#define GT_DEFAULT_OUTPUT   "gputrace-%p.gtrace"
#define GT_DEFAULT_FLUSH_MS 100u

#endif /* GPUTRACE_ENV_H */
