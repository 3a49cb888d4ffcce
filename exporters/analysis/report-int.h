/* Internal to the report (report*.c): what it keeps of each trace for the page. Runs in the
 * CLI. */
#ifndef GPUTRACE_REPORT_INT_H
#define GPUTRACE_REPORT_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "advise.h"
#include "busy.h"
#include "rankstats.h"
#include "report.h"

/* One GPU of a trace, over the trace's buckets. */
struct rep_gpu {
	uint32_t index;  /* the catalog's */
	uint32_t number; /* "GPU n", as every output names it */
	uint32_t final;  /* index of the GPU it turned out to be (itself unless merged) */
	char name[64];   /* device name, "" when unknown */
	struct gt_busy *busy;
	struct gt_busy_window *win; /* its buckets: compute_ns holds the busy time (any kind) */
	uint64_t *mem;              /* device memory in use at the bucket's last sample */
	bool *mem_seen;             /* a sample fell in the bucket */
	bool has_mem;               /* any allocation */
	uint64_t mem_peak;
};

/* A name and its GPU time (kernels; NVTX ranges: projected time). */
struct rep_name {
	char *name;  /* owned */
	char *label; /* owned: the kernel's base name (demangle.h) for the bar; NULL: name */
	uint64_t count;
	uint64_t total_ns;
	uint64_t busy_ns; /* NVTX ranges: the union of their work */
};

struct rep_trace {
	char *name;                 /* owned: as given */
	uint64_t zero_ns, span_ns;  /* docs/cli.md "Time" */
	uint64_t first_ns, last_ns; /* the records read (a window's), trace clock */
	/* what the busy and memory plots cover: the GPU activity's first start to last end
	 * (the records' when there is none), in buckets of bucket_ns */
	uint64_t plot_from_ns, plot_to_ns;
	uint64_t bucket_ns;
	uint32_t nbuckets;
	uint32_t nprocs, nranks, ngpus;
	char ranks[128];  /* "0, 1" or "" */
	char hosts[128];  /* host names, or "" */
	char losses[256]; /* gt_catalog_losses_text */
	char damage[256]; /* the damage in words, "" when none */
	uint64_t kernels; /* kernel records */
	uint64_t kernel_ns;
	size_t nkernel_names;
	struct rep_gpu *gpus;
	size_t ngpu_rows;
	struct rep_name *top_kernels;
	size_t ntop_kernels;
	struct rep_name *top_nvtx;
	size_t ntop_nvtx, nnvtx_names;
	uint64_t nvtx_ranges, nvtx_ops, nvtx_ops_in_ranges;
};

struct gt_report {
	struct gt_report_options opts;
	struct rep_trace *traces;
	size_t ntraces;
	struct gt_rankstats *rs;
	struct gt_advise *adv;
	struct gt_busy_scratch *scratch;
};

#endif /* GPUTRACE_REPORT_INT_H */
