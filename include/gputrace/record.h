/* Record model shared by the injection library, the ring, the trace file and the exporters.
 * Runs in both processes. These structs are the in-memory (ring) layout; the trace file
 * encodes them field by field (see docs/format.md and src/format/record.c). Installed with
 * trace.h: the functions declared here and there are libgputrace's API (docs/library.md). */
#ifndef GPUTRACE_RECORD_H
#define GPUTRACE_RECORD_H

#include <stddef.h>
#include <stdint.h>

/* Bumped when a record struct changes in a way an older reader cannot skip. */
#define GT_RECORD_VERSION 1u

enum gt_rec_type {
	GT_REC_NONE = 0,
	GT_REC_STRING,      /* interned string: id -> bytes */
	GT_REC_PROCESS,     /* a traced process registered */
	GT_REC_PROCESS_END, /* how a traced process ended */
	GT_REC_THREAD,      /* thread name */
	GT_REC_DEVICE,      /* GPU properties */
	GT_REC_CONTEXT,     /* CUDA context -> device */
	GT_REC_STREAM,      /* stream -> context/device */
	GT_REC_KERNEL,      /* kernel execution on the GPU */
	GT_REC_MEMCPY,      /* memory copy on the GPU */
	GT_REC_MEMSET,      /* memset on the GPU */
	GT_REC_MEMORY,      /* allocation or free */
	GT_REC_MEMORY_POOL, /* memory pool created/destroyed/trimmed */
	GT_REC_API,         /* runtime or driver API call on a CPU thread */
	GT_REC_NVTX,        /* NVTX range or mark */
	GT_REC_SYNC,        /* stream/event/context synchronization */
	GT_REC_GRAPH,       /* CUDA graph launch executed on the GPU */
	GT_REC_OVERHEAD,    /* CUPTI's own overhead */
	GT_REC_LOSS,        /* records lost somewhere, with a count */
	GT_REC_CLOCK,       /* clock anchor: trace clock <-> wall clock */
	GT_REC_NOTICE,      /* something the user should know (detach reason, CUPTI error) */
	GT_REC_INPUT,       /* gputrace merge: one input file, its header and how it was read */
	GT_REC_ORIGIN,      /* gputrace merge: where a process of the merged file came from */
	GT_REC_STACK = 23,  /* a call stack, once per distinct stack of a process (or a part of it) */
	GT_REC_MODULE = 24, /* an executable mapping the stacks of a process refer to */
	/* 25 is unused */
	GT_REC_GPU_METRIC = 26, /* one hardware metric a GPU is sampled for (PM sampling) */
	GT_REC_GPU_SAMPLE = 27, /* one sample of a GPU's hardware metrics */
	GT_REC_PYCODE = 28,     /* a Python code object the stacks of a process refer to */
	GT_REC_PYLINE = 29,     /* the source line of an instruction of a Python code object */
	GT_REC_MAX = 30 /* types in between are unused: gt_record_desc() says NULL for them */
};

/* Every record starts with this header. size includes the header and is a multiple of 8. */
struct gt_rec_hdr {
	uint16_t type; /* enum gt_rec_type */
	uint16_t size; /* bytes, header included */
	uint32_t pid;  /* process that produced the record */
};

/* Variable-size: len bytes of UTF-8 (not NUL-terminated in the ring or file) follow. */
struct gt_rec_string {
	struct gt_rec_hdr hdr;
	uint32_t id;  /* > 0; unique within a trace (within a process before draining) */
	uint32_t len; /* bytes in str[] */
	char str[];
};

/* String ids are 32-bit; 0 means "no string". */
#define GT_STRING_NONE 0u
/* Longest string a record may carry; longer ones are truncated by the producer. */
#define GT_STRING_MAX 4096u

struct gt_rec_process {
	struct gt_rec_hdr hdr;
	uint64_t start_ns; /* trace clock, when the process registered */
	uint32_t ppid;
	uint32_t exe_id;     /* string: /proc/self/exe */
	uint32_t cmdline_id; /* string: argv joined by spaces, shell-quoted where needed */
	uint32_t host_id;    /* string: hostname */
	int32_t rank; /* from OMPI_COMM_WORLD_RANK, PMI_RANK, SLURM_PROCID or RANK; -1 if unset */
	int32_t local_rank; /* from LOCAL_RANK etc.; -1 if unset */
	int32_t world_size; /* from WORLD_SIZE etc.; -1 if unset */
	uint32_t flags;     /* GT_PROCESS_* */
};

#define GT_PROCESS_STANDALONE (1u << 0) /* traced without a session (GPUTRACE_OUTPUT) */

enum gt_process_end_how {
	GT_END_UNKNOWN = 0, /* the connection closed and nobody saw the exit status */
	GT_END_EXIT,        /* code = exit status */
	GT_END_SIGNAL,      /* code = signal number */
	GT_END_DETACHED,    /* tracing stopped early; the process ran on untraced */
	GT_END_MAX
};

struct gt_rec_process_end {
	struct gt_rec_hdr hdr;
	uint64_t ts_ns; /* trace clock */
	uint32_t how;   /* enum gt_process_end_how */
	int32_t code;   /* exit status or signal number */
};

struct gt_rec_thread {
	struct gt_rec_hdr hdr;
	uint32_t tid;
	uint32_t name_id; /* string */
};

struct gt_rec_device {
	struct gt_rec_hdr hdr;
	uint64_t global_mem_bytes;
	uint8_t uuid[16];
	uint32_t device_id;
	uint32_t name_id; /* string */
	uint32_t sm_count;
	uint32_t cc_major;
	uint32_t cc_minor;
	uint32_t max_threads_per_block;
	uint32_t max_shared_mem_per_block; /* bytes */
	uint32_t mem_clock_khz;
	uint32_t mem_bus_width; /* bits */
	uint32_t pci_bus_id;
	uint32_t clock_khz; /* peak SM clock; 0 in traces older than the field */
	uint32_t _pad;
};

struct gt_rec_context {
	struct gt_rec_hdr hdr;
	uint32_t context_id;
	uint32_t device_id;
};

struct gt_rec_stream {
	struct gt_rec_hdr hdr;
	uint32_t stream_id;
	uint32_t context_id;
	uint32_t device_id;
	int32_t priority;
	uint32_t flags; /* GT_STREAM_* */
	uint32_t _pad;
};

#define GT_STREAM_DEFAULT (1u << 0) /* the legacy or per-thread default stream */

/* Common head of the GPU activity records (kernel, memcpy, memset, sync, graph). */
struct gt_gpu_span {
	uint64_t start_ns;       /* trace clock */
	uint64_t end_ns;         /* trace clock */
	uint32_t correlation_id; /* pairs with the gt_rec_api that launched it; 0 if none */
	uint32_t device_id;
	uint32_t context_id;
	uint32_t stream_id;
};

struct gt_rec_kernel {
	struct gt_rec_hdr hdr;
	struct gt_gpu_span span;
	uint64_t graph_node_id; /* 0 unless launched from a graph with node-level tracing */
	uint32_t name_id;       /* string: mangled name as CUPTI reports it */
	uint32_t grid_x, grid_y, grid_z;
	uint32_t block_x, block_y, block_z;
	uint32_t cluster_x, cluster_y, cluster_z; /* 0 when no cluster */
	uint32_t registers;                       /* per thread */
	uint32_t static_smem_bytes;               /* per block */
	uint32_t dynamic_smem_bytes;              /* per block */
	uint32_t local_mem_bytes;                 /* per thread */
	uint32_t graph_id;                        /* 0 unless launched from a graph */
	uint32_t flags;                           /* GT_KERNEL_* */
};

#define GT_KERNEL_COOPERATIVE (1u << 0)

enum gt_memcpy_kind {
	GT_MEMCPY_UNKNOWN = 0,
	GT_MEMCPY_HTOD,
	GT_MEMCPY_DTOH,
	GT_MEMCPY_HTOA,
	GT_MEMCPY_ATOH,
	GT_MEMCPY_ATOA,
	GT_MEMCPY_ATOD,
	GT_MEMCPY_DTOA,
	GT_MEMCPY_DTOD,
	GT_MEMCPY_HTOH,
	GT_MEMCPY_PTOP,
	GT_MEMCPY_MAX
};

enum gt_mem_kind {
	GT_MEM_UNKNOWN = 0,
	GT_MEM_PAGEABLE,
	GT_MEM_PINNED,
	GT_MEM_DEVICE,
	GT_MEM_ARRAY,
	GT_MEM_MANAGED,
	GT_MEM_DEVICE_STATIC,
	GT_MEM_MANAGED_STATIC,
	GT_MEM_MAX
};

struct gt_rec_memcpy {
	struct gt_rec_hdr hdr;
	struct gt_gpu_span span;
	uint64_t bytes;
	uint64_t graph_node_id;
	uint32_t copy_kind;  /* enum gt_memcpy_kind */
	uint32_t src_kind;   /* enum gt_mem_kind */
	uint32_t dst_kind;   /* enum gt_mem_kind */
	uint32_t src_device; /* peer copies; else device_id */
	uint32_t dst_device;
	uint32_t graph_id;
	uint32_t flags; /* GT_COPY_* */
	uint32_t _pad;
};

#define GT_COPY_ASYNC (1u << 0)

struct gt_rec_memset {
	struct gt_rec_hdr hdr;
	struct gt_gpu_span span;
	uint64_t bytes;
	uint64_t graph_node_id;
	uint32_t value;
	uint32_t mem_kind; /* enum gt_mem_kind */
	uint32_t graph_id;
	uint32_t flags; /* GT_COPY_ASYNC */
};

enum gt_memory_op {
	GT_MEMORY_ALLOC = 0,
	GT_MEMORY_FREE,
	GT_MEMORY_OP_MAX
};

struct gt_rec_memory {
	struct gt_rec_hdr hdr;
	uint64_t ts_ns; /* trace clock */
	uint64_t address;
	uint64_t bytes;
	uint64_t pool_address; /* 0 unless from a memory pool */
	uint32_t correlation_id;
	uint32_t device_id;
	uint32_t context_id;
	uint32_t stream_id; /* stream-ordered allocations; else 0 */
	uint32_t op;        /* enum gt_memory_op */
	uint32_t mem_kind;  /* enum gt_mem_kind */
	uint32_t flags;     /* GT_MEMORY_* */
	uint32_t _pad;
};

#define GT_MEMORY_ASYNC (1u << 0) /* cudaMallocAsync / cudaFreeAsync */

enum gt_pool_op {
	GT_POOL_CREATED = 0,
	GT_POOL_DESTROYED,
	GT_POOL_TRIMMED,
	GT_POOL_OP_MAX
};

struct gt_rec_memory_pool {
	struct gt_rec_hdr hdr;
	uint64_t ts_ns;
	uint64_t address;
	uint64_t reserved_bytes;
	uint64_t release_threshold_bytes;
	uint32_t correlation_id;
	uint32_t device_id;
	uint32_t op;        /* enum gt_pool_op */
	uint32_t pool_type; /* CUPTI's pool type: local, imported */
};

enum gt_api_domain {
	GT_API_RUNTIME = 0,
	GT_API_DRIVER,
	GT_API_DOMAIN_MAX
};

struct gt_rec_api {
	struct gt_rec_hdr hdr;
	uint64_t start_ns; /* trace clock */
	uint64_t end_ns;
	uint32_t tid;
	uint32_t correlation_id;
	uint32_t cbid;       /* CUPTI callback id within the domain */
	uint32_t name_id;    /* string: function name */
	int32_t return_code; /* cudaError_t or CUresult */
	uint32_t domain;     /* enum gt_api_domain */
	uint32_t stack_id;   /* GT_REC_STACK of the calling thread at the call; 0: none */
	uint32_t _pad;
};

enum gt_nvtx_kind {
	GT_NVTX_PUSH_POP = 0, /* nvtxRangePush/Pop: nests per thread */
	GT_NVTX_START_END,    /* nvtxRangeStart/End: may cross threads */
	GT_NVTX_MARK,         /* instant */
	GT_NVTX_KIND_MAX
};

struct gt_rec_nvtx {
	struct gt_rec_hdr hdr;
	uint64_t start_ns;   /* trace clock */
	uint64_t end_ns;     /* == start_ns for marks */
	uint64_t range_id;   /* nvtxRangeId_t for start/end; 0 otherwise */
	uint32_t tid;        /* thread that opened the range */
	uint32_t end_tid;    /* thread that closed it */
	uint32_t domain_id;  /* string; 0 for the default domain */
	uint32_t message_id; /* string */
	uint32_t category;
	uint32_t color; /* ARGB; 0 when unset */
	uint32_t kind;  /* enum gt_nvtx_kind */
	uint32_t depth; /* push/pop nesting depth on the thread, 0 outermost */
	uint32_t stack_id; /* GT_REC_STACK where the range was opened or marked; 0: none */
	uint32_t _pad;
};

enum gt_sync_kind {
	GT_SYNC_UNKNOWN = 0,
	GT_SYNC_EVENT,       /* cudaEventSynchronize */
	GT_SYNC_STREAM_WAIT, /* cudaStreamWaitEvent */
	GT_SYNC_STREAM,      /* cudaStreamSynchronize */
	GT_SYNC_CONTEXT,     /* cudaDeviceSynchronize / cuCtxSynchronize */
	GT_SYNC_KIND_MAX
};

struct gt_rec_sync {
	struct gt_rec_hdr hdr;
	struct gt_gpu_span span; /* host-side wait interval */
	uint32_t tid;
	uint32_t kind;     /* enum gt_sync_kind */
	uint32_t event_id; /* for event syncs */
	uint32_t _pad;
};

struct gt_rec_graph {
	struct gt_rec_hdr hdr;
	struct gt_gpu_span span;
	uint32_t graph_id;
	uint32_t _pad;
};

enum gt_overhead_kind {
	GT_OVERHEAD_UNKNOWN = 0,
	GT_OVERHEAD_DRIVER_COMPILER,
	GT_OVERHEAD_BUFFER_FLUSH,
	GT_OVERHEAD_INSTRUMENTATION,
	GT_OVERHEAD_RESOURCE,
	GT_OVERHEAD_RUNTIME_TRIGGERED_MODULE_LOADING,
	GT_OVERHEAD_LAZY_FUNCTION_LOADING,
	GT_OVERHEAD_COMMAND_BUFFER_FULL,
	GT_OVERHEAD_ACTIVITY_BUFFER_REQUEST,
	GT_OVERHEAD_KIND_MAX
};

struct gt_rec_overhead {
	struct gt_rec_hdr hdr;
	uint64_t start_ns;
	uint64_t end_ns;
	uint32_t kind;        /* enum gt_overhead_kind */
	uint32_t object_id;   /* thread id or device id */
	uint32_t object_kind; /* 1 thread, 2 device */
	uint32_t _pad;
};

enum gt_loss_source {
	GT_LOSS_CUPTI_DROPPED = 0, /* cuptiActivityGetNumDroppedRecords */
	GT_LOSS_RING_FULL,         /* producer found the ring full */
	GT_LOSS_TORN,              /* producer died between reserve and commit */
	GT_LOSS_CORRUPT,           /* consumer rejected ring bytes */
	GT_LOSS_BUFFER_POOL,       /* no free CUPTI buffer in the pool */
	GT_LOSS_FLUSH_WINDOW, /* records still in CUPTI when the process was killed (estimate) */
	GT_LOSS_FILE, /* a damaged file: chunks skipped reading it (merge, info --reindex) */
	GT_LOSS_NVTX,         /* NVTX ranges the handlers could not record (see collectors.md) */
	GT_LOSS_PM_OVERFLOW,  /* GPU metric samples lost to a hardware-buffer overflow */
	GT_LOSS_PM_LAG,       /* GPU metric samples not decoded in time (exit) or not evaluated */
	GT_LOSS_SOURCE_MAX
};

struct gt_rec_loss {
	struct gt_rec_hdr hdr;
	uint64_t ts_ns;
	uint64_t count;  /* records lost; GT_LOSS_FILE: chunks that could not be read */
	uint32_t source; /* enum gt_loss_source */
	uint32_t kind;   /* enum gt_rec_type of what was lost; GT_REC_NONE if unknown/mixed */
	/* GT_LOSS_FILE only (0 otherwise, and in files written before these fields): */
	uint64_t bytes;     /* of the file, taken by the chunks that could not be read */
	uint64_t records;   /* records those chunks held, where their header or the index said */
	uint64_t malformed; /* malformed records skipped inside chunks that were read */
};

enum gt_clock_id {
	GT_CLOCK_MONOTONIC = 0, /* CLOCK_MONOTONIC, the default trace clock */
	GT_CLOCK_MONOTONIC_RAW,
	GT_CLOCK_REALTIME,
	GT_CLOCK_MAX
};

struct gt_rec_clock {
	struct gt_rec_hdr hdr;
	uint64_t trace_ns;    /* trace clock */
	uint64_t realtime_ns; /* CLOCK_REALTIME read next to trace_ns */
	uint32_t clock_id;    /* enum gt_clock_id of trace_ns */
	uint32_t _pad;
};

enum gt_notice_severity {
	GT_NOTICE_INFO = 0,
	GT_NOTICE_WARNING,
	GT_NOTICE_ERROR,
	GT_NOTICE_SEVERITY_MAX
};

enum gt_notice_code {
	GT_NOTICE_GENERIC = 0,
	GT_NOTICE_CUPTI_SUBSCRIBE_FAILED, /* another profiler holds CUPTI, or no permission */
	GT_NOTICE_CUPTI_ERROR,            /* a CUPTI call failed; detail = CUptiResult */
	GT_NOTICE_DETACHED,               /* tracing stopped; the app runs on untraced */
	GT_NOTICE_SESSION_LOST,           /* could not reach the gputrace session */
	GT_NOTICE_CAPTURE_START,
	GT_NOTICE_CAPTURE_STOP,
	GT_NOTICE_FLUSH_WINDOW, /* ended before its final flush: the last interval may be lost */
	GT_NOTICE_CUPTI_LOADED, /* tracing started; detail = cuptiGetVersion, message its path */
	GT_NOTICE_SELF_COST,    /* at exit: gputrace's own work; detail = its buffers' time in us */
	GT_NOTICE_GPU_METRICS,  /* GPU metrics (some) not sampled; detail = gt_gpu_metrics_reason */
	GT_NOTICE_CODE_MAX
};

struct gt_rec_notice {
	struct gt_rec_hdr hdr;
	uint64_t ts_ns;
	uint32_t severity;   /* enum gt_notice_severity */
	uint32_t code;       /* enum gt_notice_code */
	uint32_t message_id; /* string, human-readable */
	int32_t detail;      /* e.g. the CUptiResult */
};

/* How gputrace merge put an input's timestamps on the merged timeline (docs/merge.md). */
enum gt_input_align {
	GT_ALIGN_WALL_CLOCK = 0, /* the header's wall-clock anchor */
	GT_ALIGN_NCCL,           /* the anchor, corrected by the ends of NCCL collectives */
	GT_ALIGN_NONE,           /* no anchor (start_realtime_ns 0): times kept as they were */
	GT_ALIGN_MAX
};

#define GT_INPUT_RECOVERED (1u << 0) /* the input had no valid footer: its chunks were scanned */

/* One input of a merged trace (gputrace merge), written at the end of the merged file, in
 * the order the inputs were given. pid is 0. */
struct gt_rec_input {
	struct gt_rec_hdr hdr;
	uint64_t start_realtime_ns; /* the input's header: wall clock when it started */
	uint64_t start_trace_ns;    /* the input's header: its own trace clock then */
	int64_t offset_ns;          /* added to each of its timestamps to put it on this file's */
	uint64_t records;           /* records read from it */
	uint64_t chunks_skipped;    /* damaged or cut chunks of it that could not be read */
	uint64_t bytes_skipped;     /* bytes of it not in a readable chunk */
	uint64_t records_skipped;   /* records inside readable chunks left out (unknown kinds) */
	uint32_t index;             /* 1, 2, ...: what ORIGIN records refer to */
	uint32_t parent;            /* 0; an input of a merged input: that input's index */
	uint32_t version;           /* its format version */
	uint32_t clock_id;          /* enum gt_clock_id of its timestamps before the merge */
	uint32_t align;             /* enum gt_input_align: how offset_ns was found */
	uint32_t flags;             /* GT_INPUT_* */
	uint32_t path_id;           /* string: the file's name as given to gputrace merge */
	uint32_t hostname_id;       /* string: its header's hostname */
	uint32_t cmdline_id;        /* string: its header's command line */
	uint32_t tool_version_id;   /* string: its header's versions */
	uint32_t cuda_version_id;
	uint32_t cupti_version_id;
	uint32_t driver_version_id;
	uint32_t _pad;
};

/* Where the process hdr.pid of a merged trace came from: written before any other record of
 * that pid. A process keeps its pid unless another input already used it (two hosts' pid
 * 1234); then it gets a new one and orig_pid says what it was. */
struct gt_rec_origin {
	struct gt_rec_hdr hdr;
	uint32_t input;    /* index of its GT_REC_INPUT */
	uint32_t orig_pid; /* its pid in that input */
	uint32_t host_id;  /* string: the host it ran on (its input's hostname) */
	uint32_t _pad;
};

/* What a stack frame holds (struct gt_stack_frame's kind). */
enum gt_frame_kind {
	GT_FRAME_NONE = 0,   /* unused slot */
	GT_FRAME_NATIVE,     /* pc: an instruction address (a return address above frame 0) */
	GT_FRAME_PYTHON,     /* pc a code object (GT_REC_PYCODE), arg an instruction offset */
	GT_FRAME_KIND_MAX
};

struct gt_stack_frame {
	uint64_t pc;   /* enum gt_frame_kind says what it is */
	uint32_t kind; /* enum gt_frame_kind */
	uint32_t arg;  /* 0 for native frames */
};

/* Frames one GT_REC_STACK record carries; a deeper stack is written as several records of the
 * same stack_id, their `first` 0, 8, 16, ... */
#define GT_STACK_FRAMES_PER_REC 8u
/* Deepest stack recorded; deeper ones keep their innermost frames and set GT_STACK_TRUNCATED. */
#define GT_STACK_DEPTH_MAX 64u

/* A call stack of a process, innermost frame first (frame 0 is the caller of the CUDA or NVTX
 * function), written once per distinct stack before any record that refers to its id. */
struct gt_rec_stack {
	struct gt_rec_hdr hdr;
	uint32_t stack_id; /* > 0; unique within its process */
	uint32_t depth;    /* frames in the whole stack */
	uint32_t first;    /* index of frames[0] within the stack */
	uint32_t flags;    /* GT_STACK_* */
	struct gt_stack_frame frames[GT_STACK_FRAMES_PER_REC]; /* depth - first of them used */
};

#define GT_STACK_TRUNCATED (1u << 0) /* the stack was deeper than GT_STACK_DEPTH_MAX */

/* An executable segment of a file mapped into a process: what symbolizes the native frames
 * inside [start, end). The address in the file's ELF image is pc - bias. */
struct gt_rec_module {
	struct gt_rec_hdr hdr;
	uint64_t start;       /* first address of the segment */
	uint64_t end;         /* address past its end */
	uint64_t file_offset; /* of the segment in the file, bytes */
	uint64_t bias;        /* load bias: the segment's runtime address minus its ELF address */
	uint32_t path_id;     /* string: the file's path */
	uint32_t build_id;    /* string: GNU build id as lowercase hex; 0 when it has none */
};

/* A Python code object of a process (`--backtrace python`), written once, before the first
 * STACK record with a frame in it. The process keeps a reference to it until it exits, so its
 * address names it alone for the whole trace. */
struct gt_rec_pycode {
	struct gt_rec_hdr hdr;
	uint64_t code;       /* its address: GT_FRAME_PYTHON's pc */
	uint32_t file_id;    /* string: co_filename */
	uint32_t name_id;    /* string: co_qualname (co_name under Python 3.10) */
	uint32_t first_line; /* co_firstlineno */
	uint32_t _pad;
};

/* The source line of one instruction of a code object, computed by the interpreter
 * (PyCode_Addr2Line) once per distinct (code, offset), when a stack holding it is first seen,
 * and written before that STACK record. */
struct gt_rec_pyline {
	struct gt_rec_hdr hdr;
	uint64_t code;   /* a GT_REC_PYCODE's code */
	uint32_t offset; /* GT_FRAME_PYTHON's arg: instruction offset, bytes (3.10: the line) */
	int32_t line;    /* source line; -1 when the instruction has none */
};

/* Why a GPU's hardware metrics were not sampled (GT_NOTICE_GPU_METRICS's detail). */
enum gt_gpu_metrics_reason {
	GT_GM_ERROR = 0,       /* a CUPTI or host-API call failed; the message says which */
	GT_GM_NO_PERMISSION,   /* CUPTI_ERROR_INSUFFICIENT_PRIVILEGES: admin-only counters */
	GT_GM_BUSY,            /* another profiler holds the GPU's counters */
	GT_GM_UNSUPPORTED,     /* the GPU, driver or CUPTI has no PM sampling, or no set for it */
	GT_GM_NO_LIBRARY,      /* libnvperf_host or the CUPTI PM sampling API not found */
	GT_GM_OTHER_PROCESS,   /* another traced process samples this GPU (info, not a failure) */
	GT_GM_REFUSED,         /* sampled without the metrics the message names: the GPU's counter
	                        * availability refuses them (e.g. NVLink with no active link) */
	GT_GM_NO_SAMPLE,       /* the program ended before a sample came (or before sampling
	                        * began): a run shorter than the sampler's start */
	GT_GM_REASON_MAX
};

/* Most metrics one GPU is sampled for. */
#define GT_GPU_METRICS_MAX 12u

/* One metric of a GPU's samples: written by the process that samples the GPU (hdr.pid),
 * once per metric, before that GPU's first GT_REC_GPU_SAMPLE. */
struct gt_rec_gpu_metric {
	struct gt_rec_hdr hdr;
	uint64_t interval_ns; /* sampling interval */
	uint32_t device_id;   /* CUDA ordinal in the sampling process */
	uint32_t index;       /* which of the samples' values[] (< GT_GPU_METRICS_MAX) */
	uint32_t name_id;     /* string: the short name, "SMs Active" */
	uint32_t metric_id;   /* string: the counter's name in CUPTI, "sm__cycles_active..." */
	uint32_t unit_id;     /* string: "%" (of peak) or "bytes/s" */
	uint32_t scale;       /* a value in the unit is values[index] / scale (> 0) */
};

/* One sample of a GPU's metrics, each averaged over the interval that ends at ts_ns. */
struct gt_rec_gpu_sample {
	struct gt_rec_hdr hdr;
	uint64_t ts_ns;     /* trace clock: end of the sampled interval */
	uint32_t device_id; /* CUDA ordinal in the sampling process */
	uint32_t count;     /* values used, <= GT_GPU_METRICS_MAX */
	uint64_t values[GT_GPU_METRICS_MAX]; /* raw, see gt_rec_gpu_metric.scale */
};

/* Largest fixed-size record; a buffer of this size holds any decoded non-string record. */
union gt_record {
	struct gt_rec_hdr hdr;
	struct gt_rec_string string;
	struct gt_rec_process process;
	struct gt_rec_process_end process_end;
	struct gt_rec_thread thread;
	struct gt_rec_device device;
	struct gt_rec_context context;
	struct gt_rec_stream stream;
	struct gt_rec_kernel kernel;
	struct gt_rec_memcpy memcpy;
	struct gt_rec_memset memset;
	struct gt_rec_memory memory;
	struct gt_rec_memory_pool memory_pool;
	struct gt_rec_api api;
	struct gt_rec_nvtx nvtx;
	struct gt_rec_sync sync;
	struct gt_rec_graph graph;
	struct gt_rec_overhead overhead;
	struct gt_rec_loss loss;
	struct gt_rec_clock clock;
	struct gt_rec_notice notice;
	struct gt_rec_input input;
	struct gt_rec_origin origin;
	struct gt_rec_stack stack;
	struct gt_rec_module module;
	struct gt_rec_gpu_metric gpu_metric;
	struct gt_rec_gpu_sample gpu_sample;
	struct gt_rec_pycode pycode;
	struct gt_rec_pyline pyline;
};

/* Field descriptions drive the file codec, the ring validator and string-id remapping. */
enum gt_field_flags {
	GT_FIELD_DELTA = 1u << 0, /* encoded as the difference to the previous record of its type */
	GT_FIELD_SIGNED = 1u << 1, /* sign-extend when widening */
	GT_FIELD_STRING = 1u << 2, /* a string id: remapped when processes are merged */
	GT_FIELD_TIME = 1u << 3,   /* a trace-clock timestamp */
};

struct gt_field {
	const char *name; /* column name used by csv and docs */
	uint16_t offset;  /* bytes from the start of the record */
	uint8_t width;    /* 1, 2, 4 or 8 bytes */
	uint8_t flags;    /* enum gt_field_flags */
};

struct gt_record_desc {
	const char *name; /* "kernel", "memcpy", ... */
	uint16_t size;    /* sizeof the struct; strings: the fixed part */
	uint16_t nfields;
	const struct gt_field *fields; /* every field after the header, in order */
};

/* The functions below and trace.h's are libgputrace's: exported from libgputrace.so (which
 * builds with -fvisibility=hidden and exports nothing else), hidden again in the injection
 * library by its version script. */
#pragma GCC visibility push(default)

/* Description of a record type, or NULL for unknown types (type >= GT_REC_MAX or NONE). */
const struct gt_record_desc *gt_record_desc(unsigned type);

/* Name of a record type ("kernel"), or "unknown". */
const char *gt_record_name(unsigned type);

/* Names for enum values, for exporters and stats. Never NULL. */
const char *gt_memcpy_kind_name(unsigned kind);
const char *gt_mem_kind_name(unsigned kind);
const char *gt_loss_source_name(unsigned source);
const char *gt_sync_kind_name(unsigned kind);
const char *gt_process_end_name(unsigned how);
/* "created", "destroyed", "trimmed" (enum gt_pool_op); "unknown" otherwise. */
const char *gt_pool_op_name(unsigned op);
/* CUPTI's memory pool types: 1 "local", 2 "imported"; "unknown" otherwise. */
const char *gt_pool_type_name(unsigned type);
/* Why GPU metrics were not sampled (enum gt_gpu_metrics_reason), one phrase. */
const char *gt_gpu_metrics_reason_name(unsigned reason);

/* Validate a record as read from untrusted memory: type known, size exact for fixed types,
 * string length within size. Returns 0 or -EINVAL. */
int gt_record_validate(const struct gt_rec_hdr *rec, size_t avail_bytes);

#pragma GCC visibility pop

/* Round a record size up to the ring's 8-byte granularity. */
static inline size_t gt_record_align(size_t bytes)
{
	return (bytes + 7u) & ~(size_t)7u;
}

#endif /* GPUTRACE_RECORD_H */
