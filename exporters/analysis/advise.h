/* Advice from a trace: findings a user can act on, in the spirit of Nsight Systems' expert
 * rules and Holistic Trace Analysis - pageable and synchronous copies, synchronizing calls
 * inside steps, allocations in the steady state, GPU idle time by cause, kernels shorter than
 * their launch, copies no compute overlaps, small kernels serialized on one stream, slow
 * steps, memory near capacity or growing, and across ranks stragglers and exposed
 * communication. Each finding gives its cost (time lost, in all and per step), where it
 * happened (time ranges since the trace's zero, processes, ranks, GPUs, streams) and what to
 * do. Fed one trace at a time, then written as a table or JSON, largest cost first. Runs in
 * the CLI. Memory grows with the number of GPU activities, launch calls and device
 * allocations of the trace being read (80, 24 and 24 bytes each), not with the other
 * records. Rules and thresholds: docs/advise.md. */
#ifndef GPUTRACE_EXPORTERS_ADVISE_H
#define GPUTRACE_EXPORTERS_ADVISE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "gputrace/trace.h"

/* The rules, in the order findings of equal cost are listed. */
enum gt_advise_rule {
	GT_ADVISE_PAGEABLE_MEMCPY = 0, /* a copy from or to pageable host memory */
	GT_ADVISE_SYNC_MEMCPY,         /* a copy the host waited for (cudaMemcpy, not Async) */
	GT_ADVISE_SYNC_MEMSET,         /* a memset the host waited for (cudaMemset, not Async) */
	GT_ADVISE_SYNC_API,            /* cudaDeviceSynchronize & co. inside steps */
	GT_ADVISE_STEADY_MALLOC,       /* cudaMalloc/cudaFree & co. after the first step */
	GT_ADVISE_IDLE_HOST,           /* GPU idle: the next work was not launched yet */
	GT_ADVISE_IDLE_EVENT,          /* GPU idle: the next work's stream waited on an event */
	GT_ADVISE_IDLE_OTHER,          /* GPU idle: the next work was queued but started late */
	GT_ADVISE_SHORT_KERNELS,       /* kernels that ran shorter than their launch call */
	GT_ADVISE_COPY_EXPOSED,        /* copies between host and GPU while no kernel ran */
	GT_ADVISE_SERIALIZED,          /* small kernels queued one after another on one stream */
	GT_ADVISE_SLOW_STEPS,          /* steps far slower than the process's median step */
	GT_ADVISE_MEMORY_FULL,         /* device memory in use near the GPU's capacity */
	GT_ADVISE_MEMORY_GROWTH,       /* device memory in use higher after every step */
	GT_ADVISE_STRAGGLER,           /* a rank slower than the others in a step */
	GT_ADVISE_NCCL_EXPOSED,        /* NCCL kernels running while no compute did */
	GT_ADVISE_RULE_MAX
};

/* Thresholds (docs/advise.md). */
#define GT_ADVISE_SLOW_STEP_PCT   50u /* a step is slow at 50% above its process's median */
#define GT_ADVISE_MEMORY_FULL_PCT 90u /* device memory in use at 90% of the GPU's */
#define GT_ADVISE_TOP             5u  /* instances listed per finding (the costliest) */
#define GT_ADVISE_WHERE           8u  /* distinct processes, ranks, GPUs, streams named */
#define GT_ADVISE_SOURCES         3u  /* places in the code named per finding (the costliest) */
#define GT_ADVISE_WHERE_BYTES     192u

enum gt_advise_format {
	GT_ADVISE_FORMAT_TABLE = 0,
	GT_ADVISE_FORMAT_JSON,
	GT_ADVISE_FORMAT_MAX
};

struct gt_advise_options {
	const char *step_name; /* --step NAME; NULL: detect (exporters/model/steps.h); borrowed */
	unsigned top;          /* instances kept per finding, 1..GT_ADVISE_TOP; 0: the default */
	bool mangled;          /* keep kernel names as CUPTI reported them */
	bool all_steps;        /* every step is steady: a window cut the traces, so their first
	                        * step is not the run's, which warms up */
};

/* One place where a finding happened. */
struct gt_advise_instance {
	uint64_t start_ns, end_ns; /* since its trace's zero (docs/cli.md "Time") */
	uint64_t cost_ns;
	uint32_t input; /* which trace, in the order they were added */
	uint32_t pid;   /* as outputs show it (catalog out_pid); 0 none */
	int32_t rank;   /* -1 none */
	int32_t gpu;    /* "GPU n"; -1 none */
	int64_t stream; /* CUDA stream id; -1 none */
	int64_t step;   /* the step it fell in (its number); -1 none */
	char what[160]; /* what it was: "cudaStreamSynchronize", "HtoD 512.00 KiB ..." */
	/* where in the code its call was made: the innermost frame of the program's own, as
	 * "function (file)"; "" when the trace has no stack for it (run --backtrace) */
	char source[GT_ADVISE_WHERE_BYTES];
};

/* A place in the code, and what the instances called from there cost. */
struct gt_advise_source {
	uint64_t cost_ns;
	uint64_t count;
	char where[GT_ADVISE_WHERE_BYTES]; /* as gt_advise_instance's source */
};

/* A distinct-value list: at most GT_ADVISE_WHERE, more tells whether others were left out. */
struct gt_advise_set {
	int64_t v[GT_ADVISE_WHERE];
	uint32_t n;
	bool more;
};

struct gt_advise_finding {
	unsigned rule;         /* enum gt_advise_rule */
	uint64_t count;        /* instances */
	uint64_t cost_ns;      /* in all */
	uint64_t step_cost_ns; /* the part inside steps after each process's first */
	uint64_t steps;        /* those steps: the per-step cost is over them */
	uint64_t per_step_ns;  /* step_cost_ns / steps; 0 without steps */
	uint64_t bytes;        /* copies: bytes moved; memory: the peak in use */
	struct gt_advise_set pids, ranks, gpus, streams;
	struct gt_advise_instance top[GT_ADVISE_TOP]; /* costliest first */
	uint32_t ntop;
	/* the places in the code its instances were called from, costliest first, when the
	 * traces have stacks */
	struct gt_advise_source sources[GT_ADVISE_SOURCES];
	uint32_t nsources;
	uint32_t nplaces;  /* distinct places: more than nsources when some were left out */
	uint64_t located;  /* instances whose call had a stack */
	char detail[160]; /* a figure the rule adds: "median step 30.000 ms" */
};

/* One input trace. */
struct gt_advise_input {
	char *name;       /* owned: the path given */
	uint64_t zero_ns; /* its zero on its trace clock */
	uint64_t span_ns;
	uint64_t steps;  /* steps found in it, all processes */
	int step_family; /* enum gt_steps_family */
};

struct gt_advise {
	struct gt_advise_options opts;
	struct gt_advise_input *inputs;
	size_t ninputs;
	uint64_t span_ns;      /* the inputs' spans summed: what a cost's share is of */
	uint64_t steps;        /* the inputs' steps summed */
	uint64_t steady_steps; /* those after each process's first: the per-step costs' steps */
	/* after finish: findings with a count, costliest first (then by rule) */
	struct gt_advise_finding *findings;
	size_t nfindings;
	void *priv;
};

/* opts may be NULL (defaults). Returns 0 or -ENOMEM. */
int gt_advise_new(const struct gt_advise_options *opts, struct gt_advise **ret);

/* Accepts NULL. */
void gt_advise_free(struct gt_advise *a);

/* Read one trace (rewound and read four times: its steps, its records, and twice for the
 * comparison across ranks) and apply every rule to it. name: how outputs call it (copied).
 * Returns 0 or -errno (-ENOMEM, or the reader's) with *errmsg. */
int gt_advise_add(struct gt_advise *a, struct gt_reader *r, const char *name, const char **errmsg);

/* Every trace was added: compare the ranks and rank the findings. Returns 0 or -ENOMEM. */
int gt_advise_finish(struct gt_advise *a);

/* The findings, after finish, as a table or JSON (enum gt_advise_format). Returns 0, -EINVAL
 * for an unknown format, or -EIO when writing failed. */
int gt_advise_write(const struct gt_advise *a, FILE *out, unsigned format);

/* "pageable-memcpy", ...; NULL for an unknown rule. */
const char *gt_advise_rule_id(unsigned rule);
const char *gt_advise_rule_title(unsigned rule);
/* What to do about a rule's findings, in a sentence or two; NULL for an unknown rule. */
const char *gt_advise_rule_advice(unsigned rule);

/* A rule by its id. Returns 0 or -EINVAL. */
int gt_advise_rule_parse(const char *id, unsigned *rule);

/* What --fail-on matches: a rule, or a cost (ns, or a share of the span in hundredths of a
 * percent). */
struct gt_advise_gate {
	bool by_rule;
	unsigned rule;
	bool by_share;
	uint64_t cost_ns;  /* !by_share: a finding costing at least this much */
	uint32_t share_bp; /* by_share: at least this share of the span, in basis points */
};

/* Parse --fail-on's value: a rule id, a duration ("10ms", "2.5s", "500us", "800ns") or a
 * share of the run ("5%"). Returns 0 or -EINVAL. */
int gt_advise_gate_parse(const char *s, struct gt_advise_gate *g);

/* The first finding the gate matches, or NULL. */
const struct gt_advise_finding *gt_advise_gate_match(const struct gt_advise *a,
                                                     const struct gt_advise_gate *g);

#endif /* GPUTRACE_EXPORTERS_ADVISE_H */
