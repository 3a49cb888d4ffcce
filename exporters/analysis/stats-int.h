/* Internal to the stats exporter: the aggregates one pass over a trace builds, and the
 * emitter that prints them as a table, CSV or JSON. Runs in the CLI. */
#ifndef GPUTRACE_STATS_INT_H
#define GPUTRACE_STATS_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "catalog.h"
#include "gputrace/record.h"
#include "gputrace/trace.h"
#include "stats.h"

/* Log-linear histogram of nanosecond (or byte) values. Values below 128 are counted
 * exactly; above, each power of two is split into 128 equal buckets, so a bucket's middle
 * is within 1/256 (0.4%) of any value in it. Blocks of 128 counters are allocated only for
 * the powers of two a series actually hits, typically a handful per name. */
#define GT_HIST_SUB_BITS 7u
#define GT_HIST_SUB      (1u << GT_HIST_SUB_BITS)
#define GT_HIST_BLOCKS   (64u - GT_HIST_SUB_BITS + 1u) /* block 0 exact, 1..57 by exponent */

struct gt_hist {
	uint64_t *block[GT_HIST_BLOCKS]; /* NULL until a value lands there; owned */
};

/* One stream of durations: exact count/total/min/max, Welford mean and variance, and the
 * histogram for median and p99. */
struct gt_series {
	uint64_t count;
	uint64_t total; /* sum of values, exact */
	uint64_t min;   /* UINT64_MAX while empty */
	uint64_t max;
	double mean; /* running mean (Welford), for the variance only */
	double m2;   /* sum of squared deviations from the mean */
	struct gt_hist hist;
};

/* A named aggregate: one kernel, API function, NVTX range or (function, error code). */
struct gt_stat_entry {
	char *key;             /* owned: the name (NVTX: domain, NUL, message); NUL-terminated */
	size_t key_len;        /* bytes of key, terminating NUL excluded */
	size_t split;          /* NVTX: bytes of the domain part; else 0 */
	int64_t tag;           /* NVTX: enum gt_nvtx_kind; errors: the return code; else 0 */
	uint32_t domain;       /* errors: enum gt_api_domain */
	struct gt_series time; /* durations, ns */
	uint64_t count;        /* errors: calls that failed this way */
};

/* Name -> entry map. Entries live until the table is freed. */
struct gt_stat_table {
	struct gt_stat_entry **entries; /* insertion order; owned */
	size_t n, cap;
	uint32_t *slots; /* open addressing: entry index + 1, 0 empty */
	size_t nslots;   /* power of two */
	uint32_t *by_id; /* string id -> entry index + 1, a cache for single-string keys */
	size_t nby_id;
};

/* Copies of one kind or memsets of one memory kind. */
struct gt_xfer_stats {
	struct gt_series time; /* ns */
	uint64_t bytes_total;
	uint64_t bytes_min; /* UINT64_MAX while empty */
	uint64_t bytes_max;
};

/* Device memory in use is tracked per GPU (the catalog's: two ranks' "device 0" are two GPUs
 * when their uuids differ); pinned/pageable host allocations go to the pseudo-GPU
 * GT_STATS_HOST so they do not inflate a GPU's peak. */
#define GT_STATS_HOST UINT32_MAX

struct gt_mem_device {
	uint32_t gpu;    /* catalog GPU index, or GT_STATS_HOST */
	uint64_t in_use; /* bytes allocated and not yet freed */
	uint64_t peak;   /* largest in_use seen */
	uint64_t peak_ts_ns;
	uint64_t allocs;
	uint64_t frees;
	uint64_t alloc_bytes; /* sum of all allocation sizes */
};

/* A live allocation, keyed by (pid, address). */
struct gt_mem_live {
	uint64_t address; /* 0 marks an empty slot (CUDA never hands out address 0) */
	uint64_t bytes;
	uint64_t ts_ns;
	uint32_t pid; /* its process's catalog out_pid (the pid, unless reused) */
	uint32_t gpu; /* catalog GPU index, or GT_STATS_HOST for host memory */
	uint32_t mem_kind;
	uint32_t _pad;
};

#define GT_STATS_TOP 10u /* rows kept for "largest allocations" lists */

/* Everything one pass over a trace learns. Memory grows with distinct names, processes,
 * GPUs and live allocations, never with the number of events. What the trace holds -
 * processes, GPUs, record counts, losses, notices - is the catalog's, as for every output. */
struct gt_stats {
	struct gt_reader *r;        /* borrowed: strings are looked up in it at output time */
	struct gt_catalog cat;      /* processes, GPUs, record counts, losses, notices */
	uint64_t first_ns, last_ns; /* over all timestamps; first UINT64_MAX if none */

	struct gt_stat_table kernels, api, nvtx, errors;
	struct gt_xfer_stats memcpy[GT_MEMCPY_MAX];
	struct gt_xfer_stats memset[GT_MEM_MAX];
	uint64_t nvtx_marks;
	uint64_t api_failed;

	struct gt_mem_device *mem;
	size_t nmem, capmem;
	struct gt_mem_live *live; /* open addressing, linear probing, backward-shift delete */
	size_t nlive, caplive;    /* caplive: power of two (or 0) */
	struct gt_mem_live largest[GT_STATS_TOP]; /* biggest allocations, bytes descending */
	size_t nlargest;
	uint64_t frees_unmatched; /* frees of addresses never seen allocated */

	struct gt_reader_status status; /* copied at the end of the pass */
};

/* The damage of a trace in words (catalog.h) and where it was found: "1 chunk (611 bytes)
 * and 0 malformed records skipped", then "(recorded in the trace by merge or --reindex)",
 * or, when both, how many chunks each. Into buf; returns buf. */
const char *gt_stats_damage_detail(const struct gt_catalog *c, char *buf, size_t size);

/* Histogram and series. */
int gt_stats_series_add(struct gt_series *s, uint64_t v);
/* Value at 1-based rank k (1 <= k <= count) within the histogram's precision. */
uint64_t gt_stats_series_rank(const struct gt_series *s, uint64_t k);
double gt_stats_series_median(const struct gt_series *s);
uint64_t gt_stats_series_p99(const struct gt_series *s);
double gt_stats_series_stddev(const struct gt_series *s); /* sample (n - 1); 0 when count < 2 */
double gt_stats_series_avg(const struct gt_series *s);
/* Add src's values to dst (histogram, count, total, extremes, mean and variance), as if
 * they had been added one by one. Returns 0 or -ENOMEM (dst then holds part of src). */
int gt_stats_series_merge(struct gt_series *dst, const struct gt_series *src);
void gt_stats_series_fini(struct gt_series *s);

/* A span's duration; a reversed span (a damaged record) counts as zero, not 584 years. */
static inline uint64_t gt_stats_span_dur(uint64_t start_ns, uint64_t end_ns)
{
	return end_ns > start_ns ? end_ns - start_ns : 0;
}

/* Name tables: the entry of (key[0..len), tag), created on first use; split as in
 * struct gt_stat_entry. NULL only on -ENOMEM. */
struct gt_stat_entry *gt_stats_table_get(struct gt_stat_table *t, const char *key, size_t len,
                                         size_t split, int64_t tag);
/* The entry named by string `id` of reader r (a placeholder "<string N>" when r does not know
 * it), cached by id. Ids are a reader's: call gt_stats_table_forget_ids() before feeding the
 * table from another reader. NULL only on -ENOMEM. */
struct gt_stat_entry *gt_stats_table_get_id(struct gt_stat_table *t, const struct gt_reader *r,
                                            uint32_t id);
void gt_stats_table_forget_ids(struct gt_stat_table *t);
/* The entry of an NVTX range: key "domain\0message", tag its kind. NULL only on -ENOMEM. */
struct gt_stat_entry *gt_stats_nvtx_get(struct gt_stat_table *t, const struct gt_reader *r,
                                        const struct gt_rec_nvtx *n);
void gt_stats_table_fini(struct gt_stat_table *t);
/* One copy or memset: its duration and bytes. Returns 0 or -ENOMEM. */
int gt_stats_xfer_add(struct gt_xfer_stats *x, const struct gt_gpu_span *span, uint64_t bytes);

/* One pass over `r` (rewound first). Returns 0 or -errno with *errmsg. The same in pieces,
 * for a consumer that reads the trace itself (diff feeds the steps finder in the same pass):
 * begin (0 or -ENOMEM), feed each record in file order (0 or -ENOMEM), end (the reader's
 * status). gt_stats_fini() after any of them. */
int gt_stats_collect(struct gt_stats *st, struct gt_reader *r, const char **errmsg);
int gt_stats_begin(struct gt_stats *st, struct gt_reader *r);
int gt_stats_feed(struct gt_stats *st, const union gt_record *rec);
void gt_stats_end(struct gt_stats *st);
void gt_stats_fini(struct gt_stats *st);

/* Entries sorted by total time (count_order: by count) descending, then key. Caller
 * frees the array; NULL on -ENOMEM. */
struct gt_stat_entry **gt_stats_table_sorted(const struct gt_stat_table *t, int count_order);

/* True when allocation `a` (from st->largest) was never freed. */
bool gt_stats_still_live(const struct gt_stats *st, const struct gt_mem_live *a);

/* Memory rows in the order every output lists GPUs (by number), merged GPUs folded into the
 * GPU they turned out to be, the host row last; the rows' array is rewritten. */
void gt_stats_mem_rows(struct gt_stats *st);

/* "GPU n" of a memory row or allocation, as every output names it; NULL for host memory. */
const struct gt_catalog_gpu *gt_stats_gpu(const struct gt_stats *st, uint32_t gpu);

/* A string of the trace, or a placeholder ("<string 12>") written to buf. */
const char *gt_stats_string(const struct gt_stats *st, uint32_t id, char *buf, size_t bytes);

/* Names of common cudaError_t (runtime) and CUresult (driver) codes; NULL when unknown. */
const char *gt_stats_error_name(uint32_t domain, int32_t code);

/* ---- output ---- */

enum gt_col_type {
	GT_COL_STR,     /* text */
	GT_COL_U64,     /* count */
	GT_COL_I64,     /* signed count (error codes) */
	GT_COL_NS,      /* integer nanoseconds; table: human units */
	GT_COL_NS_F,    /* fractional nanoseconds (avg, stddev); csv one decimal */
	GT_COL_PCT,     /* percentage, two decimals */
	GT_COL_BYTES,   /* integer bytes; table: KiB/MiB/GiB */
	GT_COL_BYTES_F, /* fractional bytes (averages) */
	GT_COL_GBPS,    /* GB/s (10^9 bytes per second), two decimals */
	GT_COL_BOOL,
	GT_COL_NS_DELTA,  /* signed integer nanoseconds (v.i); table: "+1.500 ms", "-850 ns" */
	GT_COL_PCT_DELTA, /* signed percentage, two decimals; table: "+12.50" */
	GT_COL_TEXT,      /* a sentence (a notice): as GT_COL_STR, but tables never cut it */
	GT_COL_TYPE_MAX
};

struct gt_col {
	const char *key;   /* csv header and json member: snake_case with unit */
	const char *title; /* table header */
	unsigned type;     /* enum gt_col_type */
};

struct gt_cell {
	bool null; /* csv: empty; json: null; table: "-" */
	union {
		const char *s;
		uint64_t u;
		int64_t i;
		double d;
		bool b;
	} v;
};

/* A cell of each type, for the reports of stats, stats across ranks and diff. */
static inline struct gt_cell gt_cell_u(uint64_t u)
{
	return (struct gt_cell){.v.u = u};
}

static inline struct gt_cell gt_cell_i(int64_t i)
{
	return (struct gt_cell){.v.i = i};
}

static inline struct gt_cell gt_cell_d(double d)
{
	return (struct gt_cell){.v.d = d};
}

/* NULL: a null cell. */
static inline struct gt_cell gt_cell_s(const char *s)
{
	return (struct gt_cell){.null = !s, .v.s = s};
}

static inline struct gt_cell gt_cell_b(bool b)
{
	return (struct gt_cell){.v.b = b};
}

static inline struct gt_cell gt_cell_null(void)
{
	return (struct gt_cell){.null = true};
}

/* part as a percentage of whole; null when whole is 0. */
static inline struct gt_cell gt_cell_pct(uint64_t part, uint64_t whole)
{
	return whole ? gt_cell_d(100.0 * (double)part / (double)whole) : gt_cell_null();
}

struct gt_emit;

/* The time columns of every per-name report (count_key and count_title name the count:
 * "instances", "calls", "count"), and the cells of one series; all_total: what time_pct is
 * a share of. */
#define GT_STATS_TIME_COLS(count_key, count_title)                                                 \
	{"time_pct", "Time %", GT_COL_PCT}, {"total_ns", "Total", GT_COL_NS},                      \
	        {count_key, count_title, GT_COL_U64}, {"avg_ns", "Avg", GT_COL_NS_F},              \
	        {"median_ns", "Med", GT_COL_NS_F}, {"min_ns", "Min", GT_COL_NS},                   \
	        {"max_ns", "Max", GT_COL_NS}, {"stddev_ns", "StdDev", GT_COL_NS_F},                \
	{                                                                                          \
		"p99_ns", "P99", GT_COL_NS                                                         \
	}
#define GT_STATS_NTIME 9
void gt_stats_time_cells(struct gt_cell *c, const struct gt_series *s, uint64_t all_total);

/* The columns of copies and memsets: the time columns, then bytes and bandwidth; their cells
 * (GT_STATS_NTIME + 5 of them). */
#define GT_STATS_XFER_COLS                                                                         \
	GT_STATS_TIME_COLS("count", "Count"), {"total_bytes", "Bytes", GT_COL_BYTES},              \
	        {"avg_bytes", "Avg bytes", GT_COL_BYTES_F},                                        \
	        {"min_bytes", "Min bytes", GT_COL_BYTES},                                          \
	        {"max_bytes", "Max bytes", GT_COL_BYTES},                                          \
	{                                                                                          \
		"bandwidth_gbps", "GB/s", GT_COL_GBPS                                              \
	}
#define GT_STATS_NXFER (GT_STATS_NTIME + 5)
void gt_stats_xfer_cells(struct gt_cell *c, const struct gt_xfer_stats *x, uint64_t all_total);

/* Kinds of x[0..n) with activity into order[], by total time descending (ties: enum order);
 * *all: their total time. Returns how many. */
size_t gt_stats_xfer_order(const struct gt_xfer_stats *x, unsigned n, unsigned *order,
                           uint64_t *all);

/* An emitter writes sections (one table each) in one format to `out`. nsections: how many
 * sections the whole output will have (CSV prints "# name" headings only when > 1). */
int gt_stats_emit_new(FILE *out, unsigned format, unsigned nsections, unsigned limit,
                      struct gt_emit **ret);
/* Section flags. */
#define GT_EMIT_SINGLE  (1u << 0) /* json renders the one row as an object, not an array */
#define GT_EMIT_LIMITED (1u << 1) /* table format keeps at most `limit` rows */

/* Starts a section. title: table heading; name: json member / csv heading; flags:
 * GT_EMIT_*. */
int gt_stats_emit_begin(struct gt_emit *e, const char *name, const char *title,
                        const struct gt_col *cols, size_t ncols, unsigned flags);
int gt_stats_emit_row(struct gt_emit *e, const struct gt_cell *cells);
/* empty_text: table line printed when the section had no rows. */
int gt_stats_emit_end(struct gt_emit *e, const char *empty_text);
/* Finishes the document (json's closing brace) and frees. Returns -EIO if any write
 * failed. NULL is accepted. */
int gt_stats_emit_close(struct gt_emit *e);

struct gt_nvtx_gpu;

/* The nvtx-gpu report (nvtx-gpu-output.c): sections nvtx_gpu, nvtx_gpu_instances (when
 * with_instances; times since zero_ns, the trace's zero) and nvtx_gpu_totals. Returns 0 or
 * the emitter's -errno. */
int gt_stats_report_nvtx_gpu(struct gt_emit *e, const struct gt_nvtx_gpu *g, bool with_instances,
                             uint64_t zero_ns);

/* Human units (tables, the run summary) and JSON strings: exporters/common/text.h. */
/* Shortest %g form that reads back as d; non-finite numbers become null. */
void gt_stats_json_double(FILE *out, double d);

/* The sections "gpu_metrics" and "gpu_busy" (stats-gpumetrics.c): reads st->r again (three
 * passes, rewound after). Returns 0 or -errno. */
int gt_stats_report_gpu_metrics(struct gt_emit *e, struct gt_stats *st);

/* The operators report (stats-ops.c): operator_shapes too when the trace recorded input
 * dims. Reads r (rewound first). Returns 0, -ENOMEM (*errmsg NULL) or -errno with *errmsg. */
int gt_stats_report_ops(struct gt_emit *e, struct gt_reader *r, const char **errmsg);

/* The run summary's lines on GPU metrics: which process sampled each GPU, how often, how
 * many samples (one pass of its own over st->r, only when the trace has GPU_METRIC records). */
void gt_stats_summary_gpu_metrics(FILE *out, struct gt_stats *st);

#endif /* GPUTRACE_STATS_INT_H */
