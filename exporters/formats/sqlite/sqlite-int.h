/* Internals shared by the SQLite exporter's files: the table list with each table's
 * CREATE and INSERT statements, the ENUM_ tables' rows, the indexes, and the mappings from
 * gputrace's enums to Nsight Systems' values. Runs in the CLI. */
#ifndef GPUTRACE_EXPORTERS_SQLITE_INT_H
#define GPUTRACE_EXPORTERS_SQLITE_INT_H

#include <stdint.h>

/* Every table the export creates, in creation order; each one exists in every export,
 * empty when the trace has nothing for it. */
enum sq_table {
	SQ_STRING_IDS = 0,
	SQ_THREAD_NAMES,
	SQ_PROCESSES,
	SQ_META_DATA_EXPORT,
	SQ_SESSION_START,
	SQ_ANALYSIS_DETAILS,
	SQ_GPU,
	SQ_CUDA_DEVICE,
	SQ_CUDA_CONTEXT,
	SQ_CUDA_STREAM,
	SQ_KERNEL,
	SQ_MEMCPY,
	SQ_MEMSET,
	SQ_SYNC,
	SQ_GRAPH_TRACE,
	SQ_RUNTIME,
	SQ_MEMORY_USAGE,
	SQ_MEMORY_POOL,
	SQ_MPI_RANKS,
	SQ_NVTX,
	SQ_GT_TRACE,
	SQ_GT_PROCESSES,
	SQ_GT_RANKS,
	SQ_GT_LOSSES,
	SQ_GT_NOTICES,
	SQ_GT_CAPTURE,
	SQ_GT_CLOCKS,
	SQ_GT_MEMORY_POOLS,
	SQ_GT_OVERHEAD,
	SQ_GT_DEVICES,
	SQ_GT_NVTX_GPU,
	SQ_CALLCHAINS,
	SQ_GPU_METRICS,
	SQ_TARGET_GPU_METRICS,
	SQ_TABLE_MAX
};

struct sq_table_def {
	const char *name;   /* table name */
	const char *create; /* CREATE TABLE statement */
	const char *insert; /* INSERT with one ? per value the exporter binds, in bind order */
};

extern const struct sq_table_def gt_sq_tables[SQ_TABLE_MAX];

struct sq_enum_row {
	int id;
	const char *name;
	const char *label;
};

struct sq_enum_def {
	const char *table;
	const struct sq_enum_row *rows;
	unsigned nrows;
};

/* The ENUM_ tables (id, name, label), NULL-terminated by table == NULL. */
extern const struct sq_enum_def gt_sq_enums[];

/* CREATE INDEX statements, run after the rows are loaded; NULL-terminated. */
extern const char *const gt_sq_indexes[];

/* Nsight Systems' values (docs/sql.md lists them). */
#define SQ_EVENT_NVTX_MARK          34
#define SQ_EVENT_NVTX_PUSH_POP      59
#define SQ_EVENT_NVTX_START_END     60
#define SQ_EVENT_NVTX_DOMAIN_CREATE 75
#define SQ_CLASS_CUDA_RUNTIME       0
#define SQ_CLASS_CUDA_DRIVER        1
#define SQ_LAUNCH_REGULAR           1
#define SQ_LAUNCH_COOPERATIVE       2
#define SQ_STREAM_DEFAULT           1 /* created with default flags (or flags unknown) */
#define SQ_STREAM_NULL              3 /* the NULL (default) stream */

/* enum gt_mem_kind -> ENUM_CUDA_MEM_KIND (whose "unknown" is 7, not 0). */
int gt_sq_mem_kind(unsigned gt_kind);

/* Names of gputrace's own enums for the GPUTRACE_ tables. Never NULL. */
const char *gt_sq_notice_code_name(unsigned code);
const char *gt_sq_severity_name(unsigned severity);
const char *gt_sq_clock_name(unsigned clock_id);
const char *gt_sq_overhead_name(unsigned kind);

#endif /* GPUTRACE_EXPORTERS_SQLITE_INT_H */
