/* Check suite for stats across ranks (exporters/rankstats*.c): on a two-rank job written
 * here with exact times - a known straggler, NCCL kernels partly under compute, copies - the
 * GPU time breakdown, the steps compared and the straggler table to the nanosecond, the same
 * from one trace or per-rank files, grouped by rank, process, GPU and host, as CSV exactly;
 * and on the two-rank DDP job recorded on an H200 (tests/data), rank 1 the straggler in
 * steps 4 and 8, as torch_ddp.py makes it. Runs as a unit test. */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rankstats.h"
#include "stats.h"
#include "steps.h"
#include "trace-build.h"

static const char *data_dir; /* argv[1] */

#define T0   1000000ull
#define STEP 1000ull
#define NCCL "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)"

/* One rank's three steps, each [T0 + k STEP, + STEP): a compute kernel from the step's start
 * (400 ns; rank 1's step 1: 800 ns, its straggle; rank 0's step 2: 410 ns, within the 5 %
 * threshold), NCCL's all-reduce on another stream at 300..600, a copy at 700..750; API calls
 * and a "forward" range; rank 1 also loses 7 records. */
static void rank_steps(struct tb *t, uint32_t pid, int rank)
{
	static const char *const steps[] = {"ProfilerStep#0", "ProfilerStep#1", "ProfilerStep#2"};

	for (unsigned k = 0; k < 3; k++) {
		uint64_t s = T0 + k * STEP;
		uint64_t compute = rank == 1 && k == 1 ? 800 : rank == 0 && k == 2 ? 410 : 400;

		tb_api(t, pid, "cudaLaunchKernel", s - 100, s - 100 + 10 * (rank + 1));
		tb_kernel(t, pid, "_Z7computePfi", 7, s, s + compute);
		tb_kernel(t, pid, NCCL, 13, s + 300, s + 600);
		tb_memcpy(t, pid, GT_MEMCPY_HTOD, 4096, s + 700, s + 750);
		tb_nvtx(t, pid, NULL, "forward", s, s + 200);
		tb_nvtx(t, pid, NULL, steps[k], s, s + STEP);
	}
	if (rank == 1)
		tb_loss(t, pid, GT_LOSS_RING_FULL, 7);
}

/* The job in one trace: a launcher without rank or GPU activity, ranks 0 and 1 (pids 200 and
 * 100: the order of pids is not the order of ranks) with their own GPUs. */
static void job_one(struct tb *t)
{
	tb_open(t, "node-a");
	tb_process(t, 50, -1, "node-a", 0);
	tb_process(t, 200, 0, "node-a", 0xa0);
	tb_process(t, 100, 1, "node-a", 0xb0);
	rank_steps(t, 200, 0);
	rank_steps(t, 100, 1);
	tb_close(t);
}

/* The same job as two per-rank files. */
static void job_two(struct tb *t0, struct tb *t1)
{
	tb_open(t0, "node-a");
	tb_process(t0, 200, 0, "node-a", 0xa0);
	rank_steps(t0, 200, 0);
	tb_close(t0);
	tb_open(t1, "node-a");
	tb_process(t1, 100, 1, "node-a", 0xb0);
	rank_steps(t1, 100, 1);
	tb_close(t1);
}

/* Read paths[0..n) in that order; outputs name them after names[] (NULL: the paths). */
static struct gt_rankstats *collect_as(const char *const *paths, const char *const *names, size_t n,
                                       const struct gt_rankstats_options *o)
{
	struct gt_rankstats *rs = NULL;
	const char *msg = NULL;

	ck_assert_int_eq(gt_rankstats_new(o, &rs), 0);
	for (size_t i = 0; i < n; i++) {
		struct gt_reader *r = tb_reader(paths[i]);

		ck_assert_int_eq(gt_rankstats_add(rs, r, names ? names[i] : paths[i], &msg), 0);
		gt_reader_close(r);
	}
	ck_assert_int_eq(gt_rankstats_finish(rs), 0);
	return rs;
}

static struct gt_rankstats *collect(const char *const *paths, size_t n,
                                    const struct gt_rankstats_options *o)
{
	return collect_as(paths, NULL, n, o);
}

static char *write_out(struct gt_rankstats *rs)
{
	const char *msg = NULL;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(gt_rankstats_write(rs, f, &msg), 0);
	fclose(f);
	return buf;
}

static const struct gt_rankstats_group *group_of_rank(const struct gt_rankstats *rs, int rank)
{
	for (size_t i = 0; i < rs->ngroups; i++)
		if (rs->groups[i]->rank == rank && rs->groups[i]->active)
			return rs->groups[i];
	ck_abort_msg("no group of rank %d", rank);
	return NULL;
}

/* What both ranks' numbers must be, whichever way the job was read. */
static void check_job(const struct gt_rankstats *rs)
{
	const struct gt_rankstats_group *r0 = group_of_rank(rs, 0), *r1 = group_of_rank(rs, 1);
	const struct gt_busy_totals *b0 = &r0->busy, *b1 = &r1->busy;
	const struct gt_rankstats_straggler *s;

	/* rank 0: busy [0, 600) and [700, 750) of each step; 410 ns of compute in step 2 */
	ck_assert_uint_eq(r0->pid, 200);
	ck_assert_uint_eq(r0->gpus, 1);
	ck_assert_uint_eq(r0->kernels, 6);
	ck_assert_uint_eq(r0->lost, 0);
	ck_assert_uint_eq(b0->span_ns, 2 * STEP + 750);
	ck_assert_uint_eq(gt_busy_compute_ns(b0), 400 + 400 + 410);
	ck_assert_uint_eq(gt_busy_comm_ns(b0), 200 + 200 + 190);
	ck_assert_uint_eq(gt_busy_memory_ns(b0), 3 * 50);
	ck_assert_uint_eq(gt_busy_idle_ns(b0), 2 * STEP + 750 - 3 * 650);
	ck_assert_uint_eq(gt_busy_overlap_ns(b0), 100 + 100 + 110);
	ck_assert_uint_eq(gt_busy_comm_all_ns(b0), 900);
	ck_assert_uint_eq(b0->late_ns, 0);
	/* rank 1: step 1's compute covers the all-reduce and the copy */
	ck_assert_uint_eq(r1->pid, 100);
	ck_assert_uint_eq(r1->lost, 7);
	ck_assert_uint_eq(gt_busy_compute_ns(b1), 400 + 800 + 400);
	ck_assert_uint_eq(gt_busy_comm_ns(b1), 200 + 0 + 200);
	ck_assert_uint_eq(gt_busy_memory_ns(b1), 50 + 0 + 50);
	ck_assert_uint_eq(gt_busy_idle_ns(b1), 2 * STEP + 750 - (650 + 800 + 650));
	ck_assert_uint_eq(gt_busy_overlap_ns(b1), 100 + 300 + 100);
	ck_assert_uint_eq(r1->busy.by_mask[(1u << GT_BUSY_COMPUTE) | (1u << GT_BUSY_MEMORY)], 50);

	/* per step */
	ck_assert_uint_eq(r0->nsteps, 3);
	ck_assert_uint_eq(r1->steps[1].compute_ns, 800);
	ck_assert_uint_eq(r1->steps[1].comm_ns, 300);
	ck_assert_uint_eq(r1->steps[1].overlap_ns, 300);
	ck_assert_uint_eq(r1->steps[1].memory_ns, 50);
	ck_assert_uint_eq(r0->steps[2].compute_ns, 410);
	ck_assert_uint_eq(r0->steps[2].overlap_ns, 110);
	ck_assert_uint_eq(rs->nsteps, 3);
	/* step 0: a tie, the rank listed first is "slowest" by nothing */
	ck_assert_int_eq(rs->steps[0].number, 0);
	ck_assert_uint_eq(rs->steps[0].ranks, 2);
	ck_assert_uint_eq(rs->steps[0].lag_ns, 0);
	ck_assert(!rs->steps[0].straggler);
	ck_assert_uint_eq(rs->steps[1].slowest, r1->index);
	ck_assert_uint_eq(rs->steps[1].fastest, r0->index);
	ck_assert_uint_eq(rs->steps[1].slowest_compute_ns, 800);
	ck_assert_uint_eq(rs->steps[1].fastest_compute_ns, 400);
	ck_assert_uint_eq(rs->steps[1].spread_ns, 400);
	ck_assert_uint_eq(rs->steps[1].lag_ns, 400);
	ck_assert(fabs(rs->steps[1].lag_pct - 100.0) < 1e-9);
	ck_assert(rs->steps[1].straggler);
	ck_assert_uint_eq(rs->steps[1].dur_min_ns, STEP);
	ck_assert_uint_eq(rs->steps[1].dur_max_ns, STEP);
	/* step 2: rank 0 leads by 10 ns, 2.5 %: below the threshold */
	ck_assert_uint_eq(rs->steps[2].slowest, r0->index);
	ck_assert_uint_eq(rs->steps[2].lag_ns, 10);
	ck_assert(!rs->steps[2].straggler);

	/* the straggler table: rank 1 first, once, in step 1 */
	ck_assert_uint_eq(rs->nstragglers, 2);
	s = &rs->stragglers[0];
	ck_assert_uint_eq(s->group, r1->index);
	ck_assert_uint_eq(s->slowest, 1);
	ck_assert_uint_eq(s->most, 1);
	ck_assert_uint_eq(s->compared, 3);
	ck_assert_uint_eq(s->lag_ns, 400);
	ck_assert_uint_eq(s->max_lag_ns, 400);
	ck_assert_int_eq(s->worst_step, 1);
	ck_assert_int_eq(s->steps[0], 1);
	ck_assert_uint_eq(s->compute_ns, (400 + 800 + 400) / 3);
	ck_assert_uint_eq(s->dur_ns, STEP);
	s = &rs->stragglers[1];
	ck_assert_uint_eq(s->group, r0->index);
	ck_assert_uint_eq(s->slowest, 0);
	ck_assert_uint_eq(s->most, 1);
	ck_assert_int_eq(s->worst_step, -1);
	ck_assert_uint_eq(s->compute_ns, (400 + 400 + 410) / 3);
}

START_TEST(test_one_trace)
{
	struct tb t;
	struct gt_rankstats *rs;
	const char *paths[1];

	job_one(&t);
	paths[0] = t.path;
	rs = collect(paths, 1, NULL);
	check_job(rs);
	/* the launcher did nothing worth a group */
	ck_assert_uint_eq(rs->ngroups, 2);
	ck_assert_uint_ne(rs->groups[0]->pid, 50);
	ck_assert_uint_ne(rs->groups[1]->pid, 50);
	ck_assert_int_eq(rs->inputs[0].step_family, GT_STEPS_PROFILER_STEP);
	ck_assert_uint_eq(rs->inputs[0].lost, 7);
	ck_assert(!rs->split_gpu);
	gt_rankstats_free(rs);
	tb_remove(&t);
}
END_TEST

START_TEST(test_per_rank_files)
{
	struct tb t0, t1;
	struct gt_rankstats *rs;
	const char *paths[2];

	job_two(&t0, &t1);
	/* the order of the files does not matter */
	paths[0] = _i ? t1.path : t0.path;
	paths[1] = _i ? t0.path : t1.path;
	rs = collect(paths, 2, NULL);
	check_job(rs);
	ck_assert_uint_eq(rs->ngroups, 2);
	ck_assert_uint_eq(rs->ninputs, 2);
	gt_rankstats_free(rs);
	tb_remove(&t0);
	tb_remove(&t1);
}
END_TEST

START_TEST(test_csv)
{
	struct gt_rankstats_options o = {
	        .reports = GT_RANKSTATS_REPORT_BREAKDOWN | GT_RANKSTATS_REPORT_STRAGGLERS |
	                   GT_RANKSTATS_REPORT_KERNELS,
	        .format = GT_STATS_FORMAT_CSV,
	        .min_lag_pct = GT_RANKSTATS_MIN_LAG_PCT,
	};
	static const char *const names[1] = {"job.gtrace"};
	struct tb t;
	struct gt_rankstats *rs;
	const char *paths[1];
	char *out;

	job_one(&t);
	paths[0] = t.path;
	rs = collect_as(paths, names, 1, &o);
	out = write_out(rs);
	tb_expect_text(
	        out,
	        "# analysis\n"
	        "by,traces,groups,step_family,steps,gpu_split_across_traces\n"
	        "rank,1,2,ProfilerStep,3,false\n"
	        "\n"
	        "# traces\n"
	        "trace,host,command,gputrace_version,span_ns,lost_records,chunks_skipped,"
	        "recovered\n"
	        /* the trace's span: from its zero (the processes' start at 1,000 ns; the header
	         * has none) to the end of step 2 (T0 + 3,000) */
	        "job.gtrace,node-a,python train.py,0.1.0,1002000,7,0,false\n"
	        "\n"
	        "# breakdown\n"
	        "rank,pid,host,gpus,active_ns,compute_ns,compute_pct,comm_ns,comm_pct,memory_ns,"
	        "memory_pct,idle_ns,idle_pct,comm_overlap_pct,kernels,lost_records,late_ns\n"
	        "0,200,node-a,1,2750,1210,44.00,590,21.45,150,5.45,800,29.09,34.44,6,0,0\n"
	        "1,100,node-a,1,2750,1600,58.18,400,14.55,100,3.64,650,23.64,55.56,6,7,0\n"
	        "\n"
	        "# stragglers\n"
	        "rank,pid,host,straggler_steps,steps,compared_steps,lag_ns,max_lag_ns,worst_step,"
	        "most_compute_steps,mean_compute_ns,mean_duration_ns,comm_overlap_pct\n"
	        "1,100,node-a,1,1,3,400,400,1,1,533,1000,55.56\n"
	        "0,200,node-a,0,,3,0,0,,1,403,1000,34.44\n"
	        "\n"
	        "# kernels\n"
	        "rank,pid,host,time_pct,total_ns,instances,avg_ns,median_ns,min_ns,max_ns,"
	        "stddev_ns,p99_ns,name\n"
	        "0,200,node-a,57.35,1210,3,403.3,400.0,400,410,5.8,410,\"compute(float*, int)\"\n"
	        "0,200,node-a,42.65,900,3,300.0,300.0,300,300,0.0,300," NCCL "\n"
	        "1,100,node-a,64.00,1600,3,533.3,400.0,400,800,230.9,800,\"compute(float*, int)\"\n"
	        "1,100,node-a,36.00,900,3,300.0,300.0,300,300,0.0,300," NCCL "\n");
	free(out);
	gt_rankstats_free(rs);
	tb_remove(&t);
}
END_TEST

START_TEST(test_by_other_groups)
{
	struct gt_rankstats_options o = {.by = _i, .min_lag_pct = GT_RANKSTATS_MIN_LAG_PCT};
	struct tb t0, t1;
	struct gt_rankstats *rs;
	const char *paths[2];
	size_t active = 0;

	job_two(&t0, &t1);
	paths[0] = t0.path;
	paths[1] = t1.path;
	rs = collect(paths, 2, &o);
	for (size_t i = 0; i < rs->ngroups; i++)
		active += rs->groups[i]->active;
	switch (_i) {
	case GT_RANKSTATS_BY_PROCESS:
		/* two processes, each with its steps: the same comparison */
		ck_assert_uint_eq(active, 2);
		ck_assert_uint_eq(rs->nsteps, 3);
		ck_assert(rs->steps[1].straggler);
		ck_assert_uint_eq(rs->groups[rs->steps[1].slowest]->pid, 100);
		break;
	case GT_RANKSTATS_BY_DEVICE:
		/* two GPUs, by uuid; GPU 0 of each trace */
		ck_assert_uint_eq(active, 2);
		ck_assert_int_eq(rs->groups[0]->gpu, 0);
		ck_assert_str_eq(rs->groups[0]->uuid, "GPU-a0a0a0a0-a0a0-a0a0-a0a0-a0a0a0a0a0a0");
		ck_assert_str_eq(rs->groups[1]->uuid, "GPU-b0b0b0b0-b0b0-b0b0-b0b0-b0b0b0b0b0b0");
		ck_assert_uint_eq(gt_busy_compute_ns(&rs->groups[1]->busy), 1600);
		ck_assert_uint_eq(rs->nsteps, 0);
		break;
	default:
		/* one host: both GPUs' times added */
		ck_assert_uint_eq(active, 1);
		ck_assert_str_eq(rs->groups[0]->host, "node-a");
		ck_assert_uint_eq(rs->groups[0]->gpus, 2);
		ck_assert_uint_eq(rs->groups[0]->processes, 2);
		ck_assert_uint_eq(rs->groups[0]->busy.span_ns, 2 * (2 * STEP + 750));
		ck_assert_uint_eq(gt_busy_compute_ns(&rs->groups[0]->busy), 1210 + 1600);
		ck_assert_uint_eq(gt_busy_overlap_ns(&rs->groups[0]->busy), 310 + 500);
		ck_assert_uint_eq(rs->groups[0]->lost, 7);
		ck_assert_uint_eq(rs->nsteps, 0);
		break;
	}
	gt_rankstats_free(rs);
	tb_remove(&t0);
	tb_remove(&t1);
}
END_TEST

/* Two per-rank files whose ranks share one GPU (ddp-rank0/1 on one H200): by device, one
 * group whose busy time is each file's, added, and said so. */
START_TEST(test_shared_gpu_across_files)
{
	struct gt_rankstats_options o = {.by = GT_RANKSTATS_BY_DEVICE};
	struct tb t0, t1;
	struct gt_rankstats *rs;
	const char *paths[2];

	tb_open(&t0, "node-a");
	tb_process(&t0, 200, 0, "node-a", 0xa0);
	tb_kernel(&t0, 200, "k", 7, T0, T0 + 100);
	tb_close(&t0);
	tb_open(&t1, "node-a");
	tb_process(&t1, 100, 1, "node-a", 0xa0);
	tb_kernel(&t1, 100, "k", 7, T0 + 50, T0 + 150);
	tb_close(&t1);
	paths[0] = t0.path;
	paths[1] = t1.path;
	rs = collect(paths, 2, &o);
	ck_assert_uint_eq(rs->ngroups, 1);
	ck_assert(rs->split_gpu);
	ck_assert_uint_eq(rs->groups[0]->gpus, 2);
	ck_assert_uint_eq(gt_busy_compute_ns(&rs->groups[0]->busy), 200);
	gt_rankstats_free(rs);
	tb_remove(&t0);
	tb_remove(&t1);
}
END_TEST

/* The table format: one table of kernels per rank, the ranks in order. */
START_TEST(test_table)
{
	struct gt_rankstats_options o = {.reports = GT_RANKSTATS_REPORT_KERNELS, .limit = 1};
	struct tb t;
	struct gt_rankstats *rs;
	const char *paths[1];
	char *out;

	job_one(&t);
	paths[0] = t.path;
	rs = collect(paths, 1, &o);
	out = write_out(rs);
	ck_assert_ptr_nonnull(strstr(out, "\nGPU kernels: rank 0\n"));
	ck_assert_ptr_nonnull(strstr(out, "\nGPU kernels: rank 1\n"));
	ck_assert(strstr(out, "rank 0\n") < strstr(out, "rank 1\n"));
	ck_assert_ptr_nonnull(strstr(out, "  ... 1 more not shown\n"));
	ck_assert_ptr_null(strstr(out, "pid 50"));
	free(out);
	gt_rankstats_free(rs);
	tb_remove(&t);
}
END_TEST

START_TEST(test_options)
{
	unsigned v = 99;
	struct gt_rankstats *rs = NULL;
	struct gt_rankstats_options o = {.by = GT_RANKSTATS_BY_MAX};

	ck_assert_int_eq(gt_rankstats_parse_by("device", &v), 0);
	ck_assert_uint_eq(v, GT_RANKSTATS_BY_DEVICE);
	ck_assert_int_eq(gt_rankstats_parse_by("gpu", &v), -EINVAL);
	ck_assert_str_eq(gt_rankstats_by_name(GT_RANKSTATS_BY_HOST), "host");
	ck_assert_int_eq(gt_rankstats_parse_reports("steps,stragglers", &v), 0);
	ck_assert_uint_eq(v, GT_RANKSTATS_REPORT_STEPS | GT_RANKSTATS_REPORT_STRAGGLERS);
	ck_assert_int_eq(gt_rankstats_parse_reports("all", &v), 0);
	ck_assert_uint_eq(v, GT_RANKSTATS_REPORT_ALL);
	ck_assert_int_eq(gt_rankstats_parse_reports("memory", &v), -EINVAL);
	ck_assert_int_eq(gt_rankstats_new(&o, &rs), -EINVAL);
	o.by = 0;
	o.min_lag_pct = -1;
	ck_assert_int_eq(gt_rankstats_new(&o, &rs), -EINVAL);
	ck_assert_ptr_null(rs);
}
END_TEST

/* ---- the DDP job recorded on an H200 ---- */

static void check_ddp(const struct gt_rankstats *rs)
{
	const struct gt_rankstats_group *r0 = group_of_rank(rs, 0), *r1 = group_of_rank(rs, 1);

	ck_assert_uint_eq(rs->nsteps, 12);
	for (size_t i = 0; i < rs->nsteps; i++) {
		const struct gt_rankstats_step_row *s = &rs->steps[i];

		ck_assert_int_eq(s->number, (int64_t)i);
		ck_assert_uint_eq(s->ranks, 2);
		/* the extra matmuls of steps 4 and 8, and nothing else beyond the threshold */
		ck_assert_msg(s->straggler == (i == 4 || i == 8), "step %zu: straggler %d", i,
		              s->straggler);
		if (i == 4 || i == 8) {
			ck_assert_uint_eq(s->slowest, r1->index);
			/* 20 1024x1024 matmuls, norms and divisions: over a millisecond */
			ck_assert_uint_gt(s->lag_ns, 1000000);
		}
	}
	ck_assert_uint_eq(rs->stragglers[0].group, r1->index);
	ck_assert_uint_eq(rs->stragglers[0].slowest, 2);
	ck_assert_int_eq(rs->stragglers[0].steps[0], 4);
	ck_assert_int_eq(rs->stragglers[0].steps[1], 8);
	ck_assert_uint_eq(rs->stragglers[0].compared, 12);
	ck_assert_uint_eq(rs->stragglers[1].group, r0->index);
	ck_assert_uint_eq(rs->stragglers[1].slowest, 0);
	/* gloo: no NCCL kernels, so no communication on the GPU */
	ck_assert_uint_eq(gt_busy_comm_all_ns(&r0->busy), 0);
	ck_assert_uint_eq(gt_busy_comm_all_ns(&r1->busy), 0);
	ck_assert_uint_eq(r0->busy.late_ns, 0);
	ck_assert_uint_eq(r1->busy.late_ns, 0);
	ck_assert_uint_eq(r0->kernels, 292);
	ck_assert_uint_eq(r1->kernels, 412);
}

START_TEST(test_real_ddp_files)
{
	char p0[512], p1[512];
	const char *paths[2] = {p0, p1};
	struct gt_rankstats *rs;

	snprintf(p0, sizeof(p0), "%s/ddp-rank0.gtrace", data_dir);
	snprintf(p1, sizeof(p1), "%s/ddp-rank1.gtrace", data_dir);
	rs = collect(paths, 2, NULL);
	check_ddp(rs);
	/* the two files' ranks share the H200: by device that is one GPU in two files */
	ck_assert(!rs->split_gpu);
	gt_rankstats_free(rs);
}
END_TEST

START_TEST(test_real_ddp_one_trace)
{
	char p[512];
	const char *paths[1] = {p};
	struct gt_rankstats *rs;

	snprintf(p, sizeof(p), "%s/ddp-2rank.gtrace", data_dir);
	rs = collect(paths, 1, NULL);
	check_ddp(rs);
	gt_rankstats_free(rs);
}
END_TEST

static Suite *rankstats_suite(void)
{
	Suite *s = suite_create("rankstats");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_one_trace);
	tcase_add_loop_test(tc, test_per_rank_files, 0, 2);
	tcase_add_test(tc, test_csv);
	tcase_add_loop_test(tc, test_by_other_groups, GT_RANKSTATS_BY_PROCESS, GT_RANKSTATS_BY_MAX);
	tcase_add_test(tc, test_shared_gpu_across_files);
	tcase_add_test(tc, test_table);
	tcase_add_test(tc, test_options);
	tcase_add_test(tc, test_real_ddp_files);
	tcase_add_test(tc, test_real_ddp_one_trace);
	suite_add_tcase(s, tc);
	return s;
}

int main(int argc, char **argv)
{
	SRunner *sr = srunner_create(rankstats_suite());
	int failed;

	data_dir = argc > 1 ? argv[1] : "tests/data";
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
