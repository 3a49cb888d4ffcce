/* Record descriptions: sizes and field tables for every record type, and enum names.
 * Runs in both processes; the tables drive the file codec, validation and csv columns. */
#include <errno.h>
#include <stddef.h>

#include "gputrace/record.h"

/* The field tables read one row per field; the formatter would reflow them. */
/* clang-format off */
#define F(st, field, fl)                                                                   \
	{ #field, (uint16_t)offsetof(st, field), (uint8_t)sizeof(((st *)0)->field), (fl) }
#define FN(st, name, field, fl)                                                            \
	{ name, (uint16_t)offsetof(st, field), (uint8_t)sizeof(((st *)0)->field), (fl) }
#define SPAN(st)                                                                           \
	FN(st, "start_ns", span.start_ns, GT_FIELD_DELTA | GT_FIELD_TIME),                  \
	FN(st, "end_ns", span.end_ns, GT_FIELD_DELTA | GT_FIELD_TIME),                      \
	FN(st, "correlation_id", span.correlation_id, GT_FIELD_DELTA),                      \
	FN(st, "device_id", span.device_id, 0),                                             \
	FN(st, "context_id", span.context_id, 0),                                           \
	FN(st, "stream_id", span.stream_id, 0)

#define D GT_FIELD_DELTA
#define T (GT_FIELD_DELTA | GT_FIELD_TIME)
#define S GT_FIELD_STRING
#define I GT_FIELD_SIGNED

/* Every field's order below is the on-disk order: append new fields at the end only. */
static const struct gt_field string_fields[] = {
	F(struct gt_rec_string, id, 0),
	F(struct gt_rec_string, len, 0),
};

static const struct gt_field process_fields[] = {
	F(struct gt_rec_process, start_ns, GT_FIELD_TIME),
	F(struct gt_rec_process, ppid, 0),
	F(struct gt_rec_process, exe_id, S),
	F(struct gt_rec_process, cmdline_id, S),
	F(struct gt_rec_process, host_id, S),
	F(struct gt_rec_process, rank, I),
	F(struct gt_rec_process, local_rank, I),
	F(struct gt_rec_process, world_size, I),
	F(struct gt_rec_process, flags, 0),
};

static const struct gt_field process_end_fields[] = {
	F(struct gt_rec_process_end, ts_ns, GT_FIELD_TIME),
	F(struct gt_rec_process_end, how, 0),
	F(struct gt_rec_process_end, code, I),
};

static const struct gt_field thread_fields[] = {
	F(struct gt_rec_thread, tid, 0),
	F(struct gt_rec_thread, name_id, S),
};

static const struct gt_field device_fields[] = {
	F(struct gt_rec_device, global_mem_bytes, 0),
	/* the 16-byte uuid travels as two little-endian 8-byte words */
	{ "uuid_lo", (uint16_t)offsetof(struct gt_rec_device, uuid), 8, 0 },
	{ "uuid_hi", (uint16_t)(offsetof(struct gt_rec_device, uuid) + 8), 8, 0 },
	F(struct gt_rec_device, device_id, 0),
	F(struct gt_rec_device, name_id, S),
	F(struct gt_rec_device, sm_count, 0),
	F(struct gt_rec_device, cc_major, 0),
	F(struct gt_rec_device, cc_minor, 0),
	F(struct gt_rec_device, max_threads_per_block, 0),
	F(struct gt_rec_device, max_shared_mem_per_block, 0),
	F(struct gt_rec_device, mem_clock_khz, 0),
	F(struct gt_rec_device, mem_bus_width, 0),
	F(struct gt_rec_device, pci_bus_id, 0),
	F(struct gt_rec_device, clock_khz, 0),
};

static const struct gt_field context_fields[] = {
	F(struct gt_rec_context, context_id, 0),
	F(struct gt_rec_context, device_id, 0),
};

static const struct gt_field stream_fields[] = {
	F(struct gt_rec_stream, stream_id, 0),
	F(struct gt_rec_stream, context_id, 0),
	F(struct gt_rec_stream, device_id, 0),
	F(struct gt_rec_stream, priority, I),
	F(struct gt_rec_stream, flags, 0),
};

static const struct gt_field kernel_fields[] = {
	SPAN(struct gt_rec_kernel),
	F(struct gt_rec_kernel, graph_node_id, 0),
	F(struct gt_rec_kernel, name_id, S),
	F(struct gt_rec_kernel, grid_x, 0),
	F(struct gt_rec_kernel, grid_y, 0),
	F(struct gt_rec_kernel, grid_z, 0),
	F(struct gt_rec_kernel, block_x, 0),
	F(struct gt_rec_kernel, block_y, 0),
	F(struct gt_rec_kernel, block_z, 0),
	F(struct gt_rec_kernel, cluster_x, 0),
	F(struct gt_rec_kernel, cluster_y, 0),
	F(struct gt_rec_kernel, cluster_z, 0),
	F(struct gt_rec_kernel, registers, 0),
	F(struct gt_rec_kernel, static_smem_bytes, 0),
	F(struct gt_rec_kernel, dynamic_smem_bytes, 0),
	F(struct gt_rec_kernel, local_mem_bytes, 0),
	F(struct gt_rec_kernel, graph_id, 0),
	F(struct gt_rec_kernel, flags, 0),
};

static const struct gt_field memcpy_fields[] = {
	SPAN(struct gt_rec_memcpy),
	F(struct gt_rec_memcpy, bytes, 0),
	F(struct gt_rec_memcpy, graph_node_id, 0),
	F(struct gt_rec_memcpy, copy_kind, 0),
	F(struct gt_rec_memcpy, src_kind, 0),
	F(struct gt_rec_memcpy, dst_kind, 0),
	F(struct gt_rec_memcpy, src_device, 0),
	F(struct gt_rec_memcpy, dst_device, 0),
	F(struct gt_rec_memcpy, graph_id, 0),
	F(struct gt_rec_memcpy, flags, 0),
};

static const struct gt_field memset_fields[] = {
	SPAN(struct gt_rec_memset),
	F(struct gt_rec_memset, bytes, 0),
	F(struct gt_rec_memset, graph_node_id, 0),
	F(struct gt_rec_memset, value, 0),
	F(struct gt_rec_memset, mem_kind, 0),
	F(struct gt_rec_memset, graph_id, 0),
	F(struct gt_rec_memset, flags, 0),
};

static const struct gt_field memory_fields[] = {
	F(struct gt_rec_memory, ts_ns, T),
	F(struct gt_rec_memory, address, 0),
	F(struct gt_rec_memory, bytes, 0),
	F(struct gt_rec_memory, pool_address, 0),
	F(struct gt_rec_memory, correlation_id, D),
	F(struct gt_rec_memory, device_id, 0),
	F(struct gt_rec_memory, context_id, 0),
	F(struct gt_rec_memory, stream_id, 0),
	F(struct gt_rec_memory, op, 0),
	F(struct gt_rec_memory, mem_kind, 0),
	F(struct gt_rec_memory, flags, 0),
};

static const struct gt_field memory_pool_fields[] = {
	F(struct gt_rec_memory_pool, ts_ns, T),
	F(struct gt_rec_memory_pool, address, 0),
	F(struct gt_rec_memory_pool, reserved_bytes, 0),
	F(struct gt_rec_memory_pool, release_threshold_bytes, 0),
	F(struct gt_rec_memory_pool, correlation_id, D),
	F(struct gt_rec_memory_pool, device_id, 0),
	F(struct gt_rec_memory_pool, op, 0),
	F(struct gt_rec_memory_pool, pool_type, 0),
};

static const struct gt_field api_fields[] = {
	F(struct gt_rec_api, start_ns, T),
	F(struct gt_rec_api, end_ns, T),
	F(struct gt_rec_api, tid, 0),
	F(struct gt_rec_api, correlation_id, D),
	F(struct gt_rec_api, cbid, 0),
	F(struct gt_rec_api, name_id, S),
	F(struct gt_rec_api, return_code, I),
	F(struct gt_rec_api, domain, 0),
	F(struct gt_rec_api, stack_id, 0),
};

static const struct gt_field nvtx_fields[] = {
	F(struct gt_rec_nvtx, start_ns, T),
	F(struct gt_rec_nvtx, end_ns, T),
	F(struct gt_rec_nvtx, range_id, 0),
	F(struct gt_rec_nvtx, tid, 0),
	F(struct gt_rec_nvtx, end_tid, 0),
	F(struct gt_rec_nvtx, domain_id, S),
	F(struct gt_rec_nvtx, message_id, S),
	F(struct gt_rec_nvtx, category, 0),
	F(struct gt_rec_nvtx, color, 0),
	F(struct gt_rec_nvtx, kind, 0),
	F(struct gt_rec_nvtx, depth, 0),
	F(struct gt_rec_nvtx, stack_id, 0),
};

static const struct gt_field sync_fields[] = {
	SPAN(struct gt_rec_sync),
	F(struct gt_rec_sync, tid, 0),
	F(struct gt_rec_sync, kind, 0),
	F(struct gt_rec_sync, event_id, 0),
};

static const struct gt_field graph_fields[] = {
	SPAN(struct gt_rec_graph),
	F(struct gt_rec_graph, graph_id, 0),
};

static const struct gt_field overhead_fields[] = {
	F(struct gt_rec_overhead, start_ns, T),
	F(struct gt_rec_overhead, end_ns, T),
	F(struct gt_rec_overhead, kind, 0),
	F(struct gt_rec_overhead, object_id, 0),
	F(struct gt_rec_overhead, object_kind, 0),
};

static const struct gt_field loss_fields[] = {
	F(struct gt_rec_loss, ts_ns, GT_FIELD_TIME),
	F(struct gt_rec_loss, count, 0),
	F(struct gt_rec_loss, source, 0),
	F(struct gt_rec_loss, kind, 0),
	F(struct gt_rec_loss, bytes, 0),
	F(struct gt_rec_loss, records, 0),
	F(struct gt_rec_loss, malformed, 0),
};

static const struct gt_field clock_fields[] = {
	F(struct gt_rec_clock, trace_ns, GT_FIELD_TIME),
	F(struct gt_rec_clock, realtime_ns, 0),
	F(struct gt_rec_clock, clock_id, 0),
};

static const struct gt_field notice_fields[] = {
	F(struct gt_rec_notice, ts_ns, GT_FIELD_TIME),
	F(struct gt_rec_notice, severity, 0),
	F(struct gt_rec_notice, code, 0),
	F(struct gt_rec_notice, message_id, S),
	F(struct gt_rec_notice, detail, I),
};

static const struct gt_field input_fields[] = {
	F(struct gt_rec_input, start_realtime_ns, 0),
	F(struct gt_rec_input, start_trace_ns, 0),
	F(struct gt_rec_input, offset_ns, I),
	F(struct gt_rec_input, records, 0),
	F(struct gt_rec_input, chunks_skipped, 0),
	F(struct gt_rec_input, bytes_skipped, 0),
	F(struct gt_rec_input, records_skipped, 0),
	F(struct gt_rec_input, index, 0),
	F(struct gt_rec_input, parent, 0),
	F(struct gt_rec_input, version, 0),
	F(struct gt_rec_input, clock_id, 0),
	F(struct gt_rec_input, align, 0),
	F(struct gt_rec_input, flags, 0),
	F(struct gt_rec_input, path_id, S),
	F(struct gt_rec_input, hostname_id, S),
	F(struct gt_rec_input, cmdline_id, S),
	F(struct gt_rec_input, tool_version_id, S),
	F(struct gt_rec_input, cuda_version_id, S),
	F(struct gt_rec_input, cupti_version_id, S),
	F(struct gt_rec_input, driver_version_id, S),
};

static const struct gt_field origin_fields[] = {
	F(struct gt_rec_origin, input, 0),
	F(struct gt_rec_origin, orig_pid, 0),
	F(struct gt_rec_origin, host_id, S),
};

#define FRAME_FIELDS(i)                                                                        \
	FN(struct gt_rec_stack, "pc" #i, frames[i].pc, 0),                                 \
	FN(struct gt_rec_stack, "kind" #i, frames[i].kind, 0),                             \
	FN(struct gt_rec_stack, "arg" #i, frames[i].arg, 0)

static const struct gt_field stack_fields[] = {
	F(struct gt_rec_stack, stack_id, 0),
	F(struct gt_rec_stack, depth, 0),
	F(struct gt_rec_stack, first, 0),
	F(struct gt_rec_stack, flags, 0),
	FRAME_FIELDS(0),
	FRAME_FIELDS(1),
	FRAME_FIELDS(2),
	FRAME_FIELDS(3),
	FRAME_FIELDS(4),
	FRAME_FIELDS(5),
	FRAME_FIELDS(6),
	FRAME_FIELDS(7),
};

static const struct gt_field module_fields[] = {
	F(struct gt_rec_module, start, 0),
	F(struct gt_rec_module, end, 0),
	F(struct gt_rec_module, file_offset, 0),
	F(struct gt_rec_module, bias, 0),
	F(struct gt_rec_module, path_id, S),
	F(struct gt_rec_module, build_id, S),
};
static const struct gt_field pycode_fields[] = {
	F(struct gt_rec_pycode, code, 0),
	F(struct gt_rec_pycode, file_id, S),
	F(struct gt_rec_pycode, name_id, S),
	F(struct gt_rec_pycode, first_line, 0),
};
static const struct gt_field pyline_fields[] = {
	F(struct gt_rec_pyline, code, 0),
	F(struct gt_rec_pyline, offset, 0),
	F(struct gt_rec_pyline, line, I),
};
static const struct gt_field gpu_metric_fields[] = {
	F(struct gt_rec_gpu_metric, interval_ns, 0),
	F(struct gt_rec_gpu_metric, device_id, 0),
	F(struct gt_rec_gpu_metric, index, 0),
	F(struct gt_rec_gpu_metric, name_id, S),
	F(struct gt_rec_gpu_metric, metric_id, S),
	F(struct gt_rec_gpu_metric, unit_id, S),
	F(struct gt_rec_gpu_metric, scale, 0),
};

#define V(i) FN(struct gt_rec_gpu_sample, "value" #i, values[i], D)
static const struct gt_field gpu_sample_fields[] = {
	F(struct gt_rec_gpu_sample, ts_ns, T),
	F(struct gt_rec_gpu_sample, device_id, 0),
	F(struct gt_rec_gpu_sample, count, 0),
	V(0), V(1), V(2), V(3), V(4), V(5), V(6), V(7), V(8), V(9), V(10), V(11),
};
#undef V

#define DESC(type, nm, st, fields)                                                         \
	[type] = { nm, (uint16_t)sizeof(st), (uint16_t)(sizeof(fields) / sizeof(fields[0])), \
		   fields }

static const struct gt_record_desc descs[GT_REC_MAX] = {
	DESC(GT_REC_STRING, "string", struct gt_rec_string, string_fields),
	DESC(GT_REC_PROCESS, "process", struct gt_rec_process, process_fields),
	DESC(GT_REC_PROCESS_END, "process_end", struct gt_rec_process_end, process_end_fields),
	DESC(GT_REC_THREAD, "thread", struct gt_rec_thread, thread_fields),
	DESC(GT_REC_DEVICE, "device", struct gt_rec_device, device_fields),
	DESC(GT_REC_CONTEXT, "context", struct gt_rec_context, context_fields),
	DESC(GT_REC_STREAM, "stream", struct gt_rec_stream, stream_fields),
	DESC(GT_REC_KERNEL, "kernel", struct gt_rec_kernel, kernel_fields),
	DESC(GT_REC_MEMCPY, "memcpy", struct gt_rec_memcpy, memcpy_fields),
	DESC(GT_REC_MEMSET, "memset", struct gt_rec_memset, memset_fields),
	DESC(GT_REC_MEMORY, "memory", struct gt_rec_memory, memory_fields),
	DESC(GT_REC_MEMORY_POOL, "memory_pool", struct gt_rec_memory_pool, memory_pool_fields),
	DESC(GT_REC_API, "api", struct gt_rec_api, api_fields),
	DESC(GT_REC_NVTX, "nvtx", struct gt_rec_nvtx, nvtx_fields),
	DESC(GT_REC_SYNC, "sync", struct gt_rec_sync, sync_fields),
	DESC(GT_REC_GRAPH, "graph", struct gt_rec_graph, graph_fields),
	DESC(GT_REC_OVERHEAD, "overhead", struct gt_rec_overhead, overhead_fields),
	DESC(GT_REC_LOSS, "loss", struct gt_rec_loss, loss_fields),
	DESC(GT_REC_CLOCK, "clock", struct gt_rec_clock, clock_fields),
	DESC(GT_REC_NOTICE, "notice", struct gt_rec_notice, notice_fields),
	DESC(GT_REC_INPUT, "input", struct gt_rec_input, input_fields),
	DESC(GT_REC_ORIGIN, "origin", struct gt_rec_origin, origin_fields),
	DESC(GT_REC_STACK, "stack", struct gt_rec_stack, stack_fields),
	DESC(GT_REC_MODULE, "module", struct gt_rec_module, module_fields),
	DESC(GT_REC_GPU_METRIC, "gpu_metric", struct gt_rec_gpu_metric, gpu_metric_fields),
	DESC(GT_REC_GPU_SAMPLE, "gpu_sample", struct gt_rec_gpu_sample, gpu_sample_fields),
	DESC(GT_REC_PYCODE, "pycode", struct gt_rec_pycode, pycode_fields),
	DESC(GT_REC_PYLINE, "pyline", struct gt_rec_pyline, pyline_fields),
};
/* clang-format on */

_Static_assert(sizeof(struct gt_rec_hdr) == 8, "record header is 8 bytes");
_Static_assert(sizeof(struct gt_rec_kernel) % 8 == 0, "records are 8-byte multiples");
_Static_assert(sizeof(struct gt_rec_memcpy) % 8 == 0, "records are 8-byte multiples");
_Static_assert(sizeof(struct gt_rec_memset) % 8 == 0, "records are 8-byte multiples");
_Static_assert(sizeof(struct gt_rec_memory) % 8 == 0, "records are 8-byte multiples");
_Static_assert(sizeof(struct gt_rec_api) % 8 == 0, "records are 8-byte multiples");
_Static_assert(sizeof(struct gt_rec_nvtx) % 8 == 0, "records are 8-byte multiples");
_Static_assert(sizeof(struct gt_rec_device) % 8 == 0, "records are 8-byte multiples");
_Static_assert(sizeof(struct gt_rec_process) % 8 == 0, "records are 8-byte multiples");
_Static_assert(sizeof(struct gt_rec_stream) % 8 == 0, "records are 8-byte multiples");
_Static_assert(sizeof(struct gt_rec_sync) % 8 == 0, "records are 8-byte multiples");
_Static_assert(sizeof(struct gt_rec_graph) % 8 == 0, "records are 8-byte multiples");
_Static_assert(sizeof(struct gt_rec_notice) % 8 == 0, "records are 8-byte multiples");
_Static_assert(sizeof(struct gt_rec_input) % 8 == 0, "records are 8-byte multiples");
_Static_assert(sizeof(struct gt_rec_origin) % 8 == 0, "records are 8-byte multiples");
_Static_assert(sizeof(struct gt_rec_stack) % 8 == 0, "records are 8-byte multiples");
_Static_assert(sizeof(struct gt_rec_module) % 8 == 0, "records are 8-byte multiples");
_Static_assert(sizeof(struct gt_rec_pycode) % 8 == 0, "records are 8-byte multiples");
_Static_assert(sizeof(struct gt_rec_pyline) % 8 == 0, "records are 8-byte multiples");
_Static_assert(sizeof(struct gt_rec_gpu_metric) % 8 == 0, "records are 8-byte multiples");
_Static_assert(sizeof(struct gt_rec_gpu_sample) % 8 == 0, "records are 8-byte multiples");
_Static_assert(GT_GPU_METRICS_MAX == 12, "gpu_sample_fields lists 12 values");
_Static_assert(sizeof(struct gt_rec_string) == 16, "string head is 16 bytes");

const struct gt_record_desc *gt_record_desc(unsigned type)
{
	if (type == GT_REC_NONE || type >= GT_REC_MAX || !descs[type].name)
		return NULL; /* unknown, or a value this build leaves unused */
	return &descs[type];
}

const char *gt_record_name(unsigned type)
{
	const struct gt_record_desc *d = gt_record_desc(type);

	return d ? d->name : "unknown";
}

int gt_record_validate(const struct gt_rec_hdr *rec, size_t avail_bytes)
{
	const struct gt_record_desc *d;

	if (avail_bytes < sizeof(*rec) || rec->size < sizeof(*rec) || rec->size > avail_bytes)
		return -EINVAL;
	d = gt_record_desc(rec->type);
	if (!d)
		return -EINVAL;
	if (rec->type == GT_REC_STRING) {
		const struct gt_rec_string *s = (const struct gt_rec_string *)rec;

		if (rec->size < sizeof(*s) || s->len > GT_STRING_MAX ||
		    rec->size != gt_record_align(sizeof(*s) + s->len) || s->id == GT_STRING_NONE)
			return -EINVAL;
		return 0;
	}
	return rec->size == d->size ? 0 : -EINVAL;
}

#define NAME_OF(table, i)                                                                          \
	((i) < sizeof(table) / sizeof(table[0]) && table[i] ? table[i] : "unknown")

const char *gt_memcpy_kind_name(unsigned kind)
{
	static const char *const names[GT_MEMCPY_MAX] = {
	        "unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA",
	        "AtoD",    "DtoA", "DtoD", "HtoH", "PtoP",
	};
	return NAME_OF(names, kind);
}

const char *gt_mem_kind_name(unsigned kind)
{
	static const char *const names[GT_MEM_MAX] = {
	        "unknown", "pageable", "pinned",        "device",
	        "array",   "managed",  "device_static", "managed_static",
	};
	return NAME_OF(names, kind);
}

const char *gt_loss_source_name(unsigned source)
{
	static const char *const names[GT_LOSS_SOURCE_MAX] = {
	        "cupti_dropped", "ring_full",    "torn_record",  "corrupt_ring",
	        "buffer_pool",   "flush_window", "damaged_file", "nvtx_unrecorded",
	        "pm_overflow", "pm_decode_lag",
	};
	return NAME_OF(names, source);
}

const char *gt_sync_kind_name(unsigned kind)
{
	static const char *const names[GT_SYNC_KIND_MAX] = {
	        "unknown", "event", "stream_wait_event", "stream", "context",
	};
	return NAME_OF(names, kind);
}

const char *gt_pool_op_name(unsigned op)
{
	static const char *const names[GT_POOL_OP_MAX] = {"created", "destroyed", "trimmed"};

	return NAME_OF(names, op);
}

const char *gt_pool_type_name(unsigned type)
{
	/* CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL and _IMPORTED */
	return type == 1 ? "local" : type == 2 ? "imported" : "unknown";
}

const char *gt_process_end_name(unsigned how)
{
	static const char *const names[GT_END_MAX] = {
	        "unknown",
	        "exited",
	        "killed by signal",
	        "detached",
	};
	return NAME_OF(names, how);
}

const char *gt_gpu_metrics_reason_name(unsigned reason)
{
	static const char *const names[GT_GM_REASON_MAX] = {
	        "a CUPTI call failed",
	        "no permission to read GPU performance counters",
	        "another profiler holds the GPU's performance counters",
	        "the GPU or driver does not support PM sampling",
	        "libnvperf_host or CUPTI's PM sampling API not found",
	        "another traced process samples this GPU",
	        "the GPU's counter availability refuses these metrics",
	        "the program ended before a sample came",
	};
	return NAME_OF(names, reason);
}
