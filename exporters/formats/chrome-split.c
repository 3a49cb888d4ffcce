/* --split ranks: the chrome export of a multi-rank trace as one file per rank in a directory,
 * rank-N.pt.trace.json, each holding only the records of that rank's processes and what
 * describes them (its distributedInfo first, its processes, threads and GPUs), the layout in
 * which Holistic Trace Analysis and TensorBoard's profiler plugin read a job. Runs in the CLI.
 * Rules: docs/exporters.md, "One file per rank". */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chrome-int.h"
#include "lanes.h"
#include "torchops.h"

/* Ranks written per pass over the trace: each open file holds a model (a few MiB of mostly
 * untouched flow tables) and a 1 MiB buffer, so a job of thousands of ranks is written in
 * several passes rather than with thousands of files open at once. */
#define GROUP 32u

#define FILE_SUFFIX GT_CHROME_SPLIT_SUFFIX

static char errbuf[512];

struct split {
	struct gt_reader *r;
	const struct gt_export_options *opts;
	struct gt_ranks *ranks;
	struct gt_steps *steps; /* found in the prescan; NULL: not looked for */
	const struct gt_steps *use_steps; /* steps, or the whole trace's (opts->steps) */
	struct gt_torchops *ops;          /* PyTorch operators; NULL: none */
	int32_t *list;          /* the distinct ranks, ascending */
	size_t nlist;
	struct gt_chrome *out[GROUP]; /* files of list[first .. first + n) */
	size_t first, n;
	const char *errmsg;
};

/* One pass: who has which rank, who ran NCCL, which NVTX ranges are steps, which are
 * PyTorch operators (and then one more for the calls made in them, when there are any). */
static int prescan(struct split *sp)
{
	const union gt_record *rec;
	int ret = gt_reader_rewind(sp->r);

	if (ret < 0)
		return ret;
	while ((ret = gt_reader_next(sp->r, &rec)) > 0) {
		ret = gt_ranks_feed(sp->ranks, sp->r, rec);
		if (ret >= 0 && sp->steps)
			ret = gt_steps_feed(sp->steps, sp->r, rec);
		if (ret >= 0)
			ret = gt_torchops_feed(sp->ops, sp->r, rec);
		if (ret < 0)
			return ret;
	}
	if (ret >= 0 && sp->steps)
		ret = gt_steps_finish(sp->steps);
	if (ret >= 0)
		ret = gt_reader_rewind(sp->r);
	if (ret >= 0)
		ret = gt_torchops_finish(sp->ops, sp->r);
	return ret;
}

/* Records carry only a pid: a merged trace in which two processes (of two hosts) share one
 * cannot be split by rank without mixing them. Returns 0 or -EINVAL (the trace's fault) with
 * the message. */
static int check_clash(struct split *sp)
{
	for (size_t i = 0; i < gt_ranks_nprocs(sp->ranks); i++) {
		const struct gt_rank_proc *p = gt_ranks_proc_at(sp->ranks, i);

		if (!p->clash)
			continue;
		snprintf(errbuf, sizeof(errbuf),
		         "pid %u names two processes (two PROCESS records with different hosts "
		         "or ranks); records carry only a pid, so their ranks cannot be told "
		         "apart",
		         p->pid);
		sp->errmsg = errbuf;
		return -EINVAL;
	}
	return 0;
}

/* Whether every process of `rank` has a pid of at least min: then its file shows GPU n as
 * pid n, as Kineto does (TensorBoard's plugin takes a kernel's GPU from its pid), without
 * meeting a process's pid. */
static bool pids_above(const struct split *sp, int32_t rank, uint32_t min)
{
	for (size_t i = 0; i < gt_ranks_nprocs(sp->ranks); i++) {
		const struct gt_rank_proc *p = gt_ranks_proc_at(sp->ranks, i);

		if (p->rank == rank && p->pid < min)
			return false;
	}
	return true;
}

/* The file index of process pid in the current group, or -1. */
static int out_of(const struct split *sp, uint32_t pid)
{
	const struct gt_rank_proc *p = gt_ranks_proc(sp->ranks, pid);
	size_t lo = sp->first, hi = sp->first + sp->n;

	if (!p || p->rank < 0)
		return -1;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (sp->list[mid] < p->rank)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == sp->first + sp->n || sp->list[lo] != p->rank)
		return -1;
	return (int)(lo - sp->first);
}

static void close_group(struct split *sp)
{
	for (size_t i = 0; i < sp->n; i++) {
		gt_chrome_free(sp->out[i]);
		sp->out[i] = NULL;
	}
	sp->n = 0;
}

/* One pass over the trace writing the files of ranks list[first .. first + n). */
static int write_group(struct split *sp, size_t pass, size_t passes, struct gt_export_result *res)
{
	struct gt_chrome_setup setup = {
	        .reader = sp->r,
	        .opts = sp->opts,
	        .steps = sp->use_steps,
	        .ranks = sp->ranks,
	        .ops = sp->ops,
	};
	const union gt_record *rec;
	char path[4200];
	uint64_t count = 0;
	int ret = gt_reader_times(sp->r, &setup.times);

	if (ret < 0) {
		snprintf(errbuf, sizeof(errbuf), "reading the trace: %s", strerror(-ret));
		sp->errmsg = errbuf;
		return ret;
	}
	for (size_t i = 0; i < sp->n; i++) {
		setup.rank = sp->list[sp->first + i];
		setup.small_gpu_pids = pids_above(sp, setup.rank, GT_GPU_SMALL_PID_MAX);
		snprintf(path, sizeof(path), "%s/rank-%d" FILE_SUFFIX, sp->opts->output,
		         setup.rank);
		setup.path = path;
		ret = gt_chrome_open(&setup, &sp->out[i], &sp->errmsg);
		if (ret < 0)
			return ret;
	}
	ret = gt_reader_rewind(sp->r);
	while (ret >= 0 && (ret = gt_reader_next(sp->r, &rec)) > 0) {
		int k = rec->hdr.type == GT_REC_STRING ? -1 : out_of(sp, rec->hdr.pid);

		if (k >= 0) {
			ret = gt_chrome_record(sp->out[k], rec);
			if (ret < 0) {
				sp->errmsg = gt_chrome_errmsg(sp->out[k]);
				return ret;
			}
		}
		if (sp->opts->progress && (++count & 0xffff) == 0) {
			uint64_t done, total;

			gt_reader_progress(sp->r, &done, &total);
			sp->opts->progress(sp->opts->progress_ctx, pass * total + done,
			                   passes * total);
		}
	}
	if (ret < 0) {
		snprintf(errbuf, sizeof(errbuf), "reading the trace: %s", strerror(-ret));
		sp->errmsg = errbuf;
		return ret;
	}
	for (size_t i = 0; i < sp->n; i++) {
		ret = gt_chrome_close(sp->out[i], res);
		if (ret < 0) {
			sp->errmsg = gt_chrome_errmsg(sp->out[i]);
			return ret;
		}
	}
	return 0;
}

int gt_chrome_split_ranks(struct gt_reader *r, const struct gt_export_options *opts,
                          struct gt_export_result *res, const char **errmsg)
{
	struct split sp = {.r = r, .opts = opts, .errmsg = "out of memory"};
	size_t passes;
	int ret;

	if (strcmp(opts->output, "-") == 0 || opts->max_bytes) {
		sp.errmsg = strcmp(opts->output, "-") == 0
		                    ? "--split ranks writes a directory, not standard output"
		                    : "--split ranks writes one file per rank, which --max-size "
		                      "would cut into several of the same rank";
		ret = -EINVAL;
		goto out;
	}
	ret = gt_ranks_new(&sp.ranks);
	if (ret >= 0 && !opts->steps && gt_export_want_steps(r, opts))
		ret = gt_steps_new(opts->step_name, &sp.steps);
	if (ret >= 0)
		ret = gt_torchops_new(&sp.ops);
	if (ret < 0)
		goto out;
	ret = prescan(&sp);
	if (ret < 0) {
		if (ret != -ENOMEM) {
			snprintf(errbuf, sizeof(errbuf), "reading the trace: %s", strerror(-ret));
			sp.errmsg = errbuf;
		}
		goto out;
	}
	sp.use_steps = opts->steps ? opts->steps : sp.steps;
	if (!gt_torchops_count(sp.ops)) {
		gt_torchops_free(sp.ops);
		sp.ops = NULL;
	}
	ret = check_clash(&sp);
	if (ret < 0)
		goto out;
	sp.nlist = gt_ranks_list(sp.ranks, NULL, 0);
	if (!sp.nlist) {
		sp.errmsg = "no process of the trace has a rank (its launcher set none of RANK, "
		            "OMPI_COMM_WORLD_RANK, PMI_RANK, PMIX_RANK, SLURM_PROCID): nothing to "
		            "split by";
		ret = -ENOENT;
		goto out;
	}
	sp.list = malloc(sp.nlist * sizeof(*sp.list));
	if (!sp.list) {
		ret = -ENOMEM;
		goto out;
	}
	gt_ranks_list(sp.ranks, sp.list, sp.nlist);
	passes = (sp.nlist + GROUP - 1) / GROUP;
	for (size_t pass = 0; pass < passes; pass++) {
		sp.first = pass * GROUP;
		sp.n = sp.nlist - sp.first < GROUP ? sp.nlist - sp.first : GROUP;
		ret = write_group(&sp, pass, passes, res);
		close_group(&sp);
		if (ret < 0)
			goto out;
	}
	res->ranks = (unsigned)sp.nlist;
	for (size_t i = 0; i < gt_ranks_nprocs(sp.ranks); i++) {
		const struct gt_rank_proc *p = gt_ranks_proc_at(sp.ranks, i);

		if (p->rank < 0) {
			res->left_out++;
			res->left_out_records += p->records;
		}
	}
out:
	close_group(&sp);
	if (ret < 0)
		*errmsg = sp.errmsg;
	free(sp.list);
	gt_ranks_free(sp.ranks);
	gt_steps_free(sp.steps);
	gt_torchops_free(sp.ops);
	return ret < 0 ? ret : 0;
}
