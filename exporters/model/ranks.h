/* Who is who in a distributed job: each traced process's rank, local rank and world size (as
 * the launcher's environment gave them, recorded in its PROCESS record) and, where the trace
 * shows it, its communication backend: NCCL when NCCL's kernels ran in it. Fed record by
 * record; the chrome exporter writes it as Kineto's distributedInfo and splits by it. Runs in
 * the CLI; memory grows with the number of processes and distinct kernel names. */
#ifndef GPUTRACE_EXPORTERS_RANKS_H
#define GPUTRACE_EXPORTERS_RANKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gputrace/record.h"
#include "gputrace/trace.h"

struct gt_rank_proc {
	uint32_t pid, ppid;
	uint32_t host_id, exe_id;             /* strings, 0 if unknown */
	int32_t rank, local_rank, world_size; /* -1 if unknown */
	bool have_info;                       /* a PROCESS record was seen */
	bool nccl;                            /* ran at least one of NCCL's kernels */
	bool clash; /* a later PROCESS record of this pid named another host or rank: two
	             * processes (of a merged trace) share the pid, and records cannot tell them
	             * apart */
	uint64_t records;                     /* records of this pid, of every kind */
};

/* What a rank's file says of it (Kineto's distributedInfo, and local_rank). */
struct gt_rank_info {
	int32_t rank;
	int32_t local_rank, world_size; /* -1 if unknown */
	const char *backend;            /* "nccl", or NULL when the trace does not show it */
	uint32_t processes;             /* traced processes with this rank */
	uint64_t records;               /* their records */
};

struct gt_ranks;

/* Returns 0 or -ENOMEM. */
int gt_ranks_new(struct gt_ranks **ret);

/* Accepts NULL. */
void gt_ranks_free(struct gt_ranks *rk);

/* Look at one record: PROCESS records give ranks, KERNEL records NCCL (names looked up in r,
 * each distinct name once), every record counts for its process. Returns 0 or -ENOMEM. */
int gt_ranks_feed(struct gt_ranks *rk, const struct gt_reader *r, const union gt_record *rec);

/* Whether a kernel, by the name CUPTI recorded (mangled or not), is one of NCCL's: the name
 * starts with "nccl", or is a mangled function whose name does ("_Z29ncclDevKernel_..."), or
 * it holds "ncclKernel" or "ncclDevKernel" (the names HTA counts as communication). */
bool gt_ranks_nccl_kernel(const char *name, size_t len);

/* Processes seen, in order of their first record; the i-th, or NULL past the end. */
size_t gt_ranks_nprocs(const struct gt_ranks *rk);
const struct gt_rank_proc *gt_ranks_proc_at(const struct gt_ranks *rk, size_t i);

/* The process pid, or NULL if no record of it was seen. */
const struct gt_rank_proc *gt_ranks_proc(const struct gt_ranks *rk, uint32_t pid);

/* The distinct ranks, ascending: writes at most max of them to out and returns how many
 * there are. */
size_t gt_ranks_list(const struct gt_ranks *rk, int32_t *out, size_t max);

/* What the processes of `rank` say: the first known local rank and world size among them,
 * "nccl" when any ran NCCL's kernels. Returns 0, or -ENOENT when no process has that rank. */
int gt_ranks_info(const struct gt_ranks *rk, int32_t rank, struct gt_rank_info *info);

#endif /* GPUTRACE_EXPORTERS_RANKS_H */
