/* Internal to advise (advise*.c): one trace as the rules see it - its catalog, its steps, its
 * GPU activities joined to their launch calls - and the findings being accumulated. Runs in
 * the CLI. */
#ifndef GPUTRACE_ADVISE_INT_H
#define GPUTRACE_ADVISE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "advise.h"
#include "catalog.h"
#include "idmap.h"
#include "steps.h"

enum act_kind {
	ACT_KERNEL = 0,
	ACT_MEMCPY,
	ACT_MEMSET,
	ACT_GRAPH,
};

#define ACT_PAGEABLE (1u << 0) /* a copy from or to pageable host memory */
#define ACT_SYNC     (1u << 1) /* a copy or memset the host waited for (not Async) */
#define ACT_IN_GRAPH (1u << 2) /* launched from a graph: its correlation is the graph's */

/* A GPU activity (kernel, copy, memset, graph launch). */
struct act {
	uint64_t start_ns, end_ns;           /* trace clock */
	uint64_t call_start_ns, call_end_ns; /* its launch call; 0 when not found */
	uint64_t prev_call_end_ns; /* the launch call of the activity before it on its stream */
	uint64_t bytes;            /* copies and memsets */
	uint32_t pid, corr;
	uint32_t gpu;    /* catalog GPU index */
	uint32_t stream; /* CUDA stream id */
	uint32_t name_id;
	uint16_t kind;      /* enum act_kind */
	uint16_t flags;     /* ACT_* */
	uint32_t copy_kind; /* enum gt_memcpy_kind; memsets: enum gt_mem_kind */
	uint32_t blocks;    /* kernels: thread blocks of the grid (UINT32_MAX at most); 0 unknown */
	uint32_t stack;     /* its launch call's stack (run --backtrace); 0 none */
	uint32_t _pad;
};

/* A launch call (kernel launch, copy, memset, graph launch). */
struct call {
	uint64_t start_ns, end_ns;
	uint32_t pid, corr;
	uint32_t stack; /* 0 none */
	uint32_t _pad;
};

/* A cudaStreamWaitEvent: a stream told to wait. */
struct wait {
	uint64_t ts_ns; /* when it was issued */
	uint32_t pid, stream;
};

/* Device memory allocated (delta > 0) or freed. */
struct memev {
	uint64_t ts_ns;
	uint64_t delta; /* bytes; a free's is 0 - bytes: sums wrap, as the catalog's do, rather
	                 * than overflow on a damaged trace */
	uint32_t pid;
	uint32_t _pad;
};

/* A stretch of time during which a kernel ran on a GPU (their union). */
struct span {
	uint64_t start_ns, end_ns;
};

/* One trace being read. */
struct adv_trace {
	struct gt_reader *r;
	struct gt_catalog cat;
	struct gt_steps *steps;
	bool have_steps;
	size_t first_step; /* the index of each process's first steady step: 1, or 0 with
	                    * all_steps */
	uint32_t input;
	uint64_t zero_ns;
	struct gt_idmap api_class; /* string id -> enum api class + 1 */
	struct act *acts;
	size_t nacts, capacts;
	struct call *calls;
	size_t ncalls, capcalls;
	struct wait *waits;
	size_t nwaits, capwaits;
	struct memev *mem;
	size_t nmem, capmem;
	/* where in the code (advise-source.c): the trace's stacks, NULL without; the cost per
	 * rule, process and stack */
	struct gt_stacks *stacks;
	struct gt_idmap src_map;
	struct adv_src *src;
	size_t nsrc, capsrc;
	int src_err; /* -ENOMEM when a charge could not be kept */
};

/* The accumulated findings. */
struct adv_priv {
	struct gt_advise_finding acc[GT_ADVISE_RULE_MAX];
	struct gt_rankstats *rs;
	uint32_t medians; /* processes whose steps slow-steps compared */
	/* the places in the code per rule, across traces (advise-source.c) */
	struct gt_idmap place_map;
	struct adv_src *places;
	size_t nplaces, capplaces;
};

/* Note one instance of rule: times on the trace clock, pid as the trace has it, gpu a catalog
 * index (UINT32_MAX none), stream -1 none, stack the id of its call's stack (0 none). */
void adv_note(struct gt_advise *a, struct adv_trace *t, unsigned rule, uint64_t start_ns,
              uint64_t end_ns, uint64_t cost_ns, uint32_t pid, uint32_t gpu, int64_t stream,
              uint32_t stack, const char *what);

/* ---- where in the code (advise-source.c) ---- */

struct adv_src;

/* Stack `stack` of process pid in words: its innermost frame of the program's own, as
 * "function (file)"; false when the trace has no such stack. */
bool adv_source(struct adv_trace *t, uint32_t pid, uint32_t stack, char *buf, size_t bytes);
/* Charge cost_ns to (rule, pid, stack) of the trace. Returns 0 or -ENOMEM. */
int adv_source_note(struct adv_trace *t, unsigned rule, uint32_t pid, uint32_t stack,
                    uint64_t cost_ns);
/* The trace is read: its stacks' costs added to the places across traces. 0 or -ENOMEM. */
int adv_source_trace_done(struct gt_advise *a, struct adv_trace *t);
/* Every trace is read: each finding gets its costliest places. */
void adv_source_finish(struct gt_advise *a);
void adv_source_trace_fini(struct adv_trace *t);
void adv_source_free(struct adv_priv *p);

/* qsort, for arrays that may be empty (and then NULL, which qsort may not be given). */
static inline void adv_sort(void *base, size_t n, size_t size,
                            int (*cmp)(const void *, const void *))
{
	if (n > 1)
		qsort(base, n, size, cmp);
}

/* The step of process pid that holds ts_ns, or NULL. */
const struct gt_step *adv_step_at(const struct adv_trace *t, uint32_t pid, uint64_t ts_ns);

/* The steady state: ts_ns lies in a step of process pid other than its first (which warms
 * up), or anywhere in a trace without steps. *step gets that step (NULL without steps). */
bool adv_steady(const struct adv_trace *t, uint32_t pid, uint64_t ts_ns,
                const struct gt_step **step);

/* A kernel's name for a finding (its base name unless mangled is asked for). */
const char *adv_kernel_name(const struct gt_advise *a, const struct adv_trace *t, uint32_t id,
                            char *buf, size_t bytes);

/* The rules over a trace's joined activities (advise-rules.c). Return 0 or -ENOMEM. */
int adv_rules_copies(struct gt_advise *a, struct adv_trace *t);
int adv_rules_idle(struct gt_advise *a, struct adv_trace *t);
int adv_rules_steps(struct gt_advise *a, struct adv_trace *t);
int adv_rules_memory(struct gt_advise *a, struct adv_trace *t);

#endif /* GPUTRACE_ADVISE_INT_H */
