/* Check suite for GPU time per NVTX range (exporters/analysis/nvtx-gpu.c, nvtx-gpu-output.c):
 * a trace written here whose every figure is worked out by hand below (nested ranges, two
 * kernels overlapping on two streams, a copy, a memset, a range without GPU work, work that
 * ends after its range, work launched after it, a start/end range on one thread and one
 * across two, GPU records before and after their launch in the file), its report in CSV,
 * and the traces of tests/data. Runs as a unit test. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gputrace/trace.h"
#include "nvtx-gpu.h"
#include "stats.h"
#include "trace-build.h"

#define PID 100u
#define TID 100u

static const char *data_dir;

/* ---- the trace ---------------------------------------------------------------------- */

static void call(struct tb *t, uint32_t tid, uint32_t corr, uint64_t start, uint64_t end)
{
	struct gt_rec_api a = {0};

	a.name_id = tb_str(t, "cudaLaunchKernel");
	a.start_ns = start;
	a.end_ns = end;
	a.tid = tid;
	a.correlation_id = corr;
	tb_put(t, &a, GT_REC_API, sizeof(a), PID);
}

static void kernel(struct tb *t, uint32_t corr, uint32_t stream, uint64_t start, uint64_t end)
{
	struct gt_rec_kernel k = {0};

	k.name_id = tb_str(t, "gemm");
	k.span = (struct gt_gpu_span){
	        .start_ns = start, .end_ns = end, .correlation_id = corr, .stream_id = stream};
	tb_put(t, &k, GT_REC_KERNEL, sizeof(k), PID);
}

static void range(struct tb *t, unsigned kind, uint32_t tid, uint32_t end_tid, uint32_t depth,
                  const char *msg, uint64_t start, uint64_t end)
{
	struct gt_rec_nvtx n = {0};

	n.message_id = tb_str(t, msg);
	n.start_ns = start;
	n.end_ns = end;
	n.tid = tid;
	n.end_tid = end_tid;
	n.kind = kind;
	n.depth = depth;
	tb_put(t, &n, GT_REC_NVTX, sizeof(n), PID);
}

static void push(struct tb *t, uint32_t depth, const char *msg, uint64_t start, uint64_t end)
{
	range(t, GT_NVTX_PUSH_POP, TID, TID, depth, msg, start, end);
}

/* On thread 100 (all times ns):
 *
 *   outer [1000, 10000] depth 0
 *     inner [2000, 5000] depth 1            phase: start/end [2050, 2450]
 *       c1 [2100, 2200] -> kernel K1 stream 7 [3000, 4000]
 *       c2 [2300, 2400] -> kernel K2 stream 8 [3500, 4500]   (overlaps K1)
 *       c3 [2500, 2600] -> memcpy M3 [4600, 4800]
 *     c4 [5500, 5600] -> memset S4 [5800, 5900]             (outer only)
 *     empty [6000, 7000] depth 1: c9 [6100, 6200], a synchronization without GPU work
 *     inner [7100, 7900] depth 1: c7 [7200, 7300] -> kernel K7 [7400, 7450]
 *     tail [8000, 9000] depth 1: c5 [8100, 8200] -> kernel K5 [9500, 12000] (ends after both)
 *   c6 [10500, 10600] -> kernel K6 [10700, 11000]           (after outer: in no range)
 *   xthread: start/end [2000, 9000], ended on thread 101     (not projected)
 *   kernel K8: correlation id 99, whose call is not in the trace
 * On thread 101: worker [2000, 3000], no calls.
 *
 * So: inner#1 proj 3000..4800 = 1800, busy [3000, 4500] + [4600, 4800] = 1700, 3 ops;
 * inner#2 proj = busy = 50, 1 op; phase proj = busy = 1500, 2 ops; tail 2500, 1 op;
 * outer proj 3000..12000 = 9000, busy 1500 + 200 + 100 + 50 + 2500 = 4350, 6 ops. */
static void write_trace(struct tb *t)
{
	struct gt_rec_process p = {0};
	struct gt_rec_nvtx mark = {0};

	tb_open(t, "node1");
	p.start_ns = 500; /* the trace's zero */
	p.host_id = tb_str(t, "node1");
	p.rank = p.local_rank = p.world_size = -1;
	tb_put(t, &p, GT_REC_PROCESS, sizeof(p), PID);
	kernel(t, 2, 8, 3500, 4500); /* before its call, as CUPTI often hands them over */
	call(t, TID, 1, 2100, 2200);
	call(t, TID, 2, 2300, 2400);
	call(t, TID, 3, 2500, 2600);
	kernel(t, 1, 7, 3000, 4000);
	{
		struct gt_rec_memcpy c = {0};

		c.copy_kind = GT_MEMCPY_HTOD;
		c.bytes = 1 << 20;
		c.span =
		        (struct gt_gpu_span){.start_ns = 4600, .end_ns = 4800, .correlation_id = 3};
		tb_put(t, &c, GT_REC_MEMCPY, sizeof(c), PID);
	}
	push(t, 1, "inner", 2000, 5000);
	range(t, GT_NVTX_START_END, TID, TID, 0, "phase", 2050, 2450);
	{
		struct gt_rec_memset m = {0};

		m.mem_kind = GT_MEM_DEVICE;
		m.bytes = 4096;
		m.span =
		        (struct gt_gpu_span){.start_ns = 5800, .end_ns = 5900, .correlation_id = 4};
		tb_put(t, &m, GT_REC_MEMSET, sizeof(m), PID);
	}
	call(t, TID, 4, 5500, 5600);
	mark.message_id = tb_str(t, "checkpoint");
	mark.start_ns = mark.end_ns = 5950;
	mark.tid = mark.end_tid = TID;
	mark.kind = GT_NVTX_MARK;
	tb_put(t, &mark, GT_REC_NVTX, sizeof(mark), PID);
	call(t, TID, 9, 6100, 6200);
	push(t, 1, "empty", 6000, 7000);
	call(t, TID, 7, 7200, 7300);
	push(t, 1, "inner", 7100, 7900);
	kernel(t, 7, 7, 7400, 7450);
	call(t, TID, 5, 8100, 8200);
	push(t, 1, "tail", 8000, 9000);
	push(t, 0, "outer", 1000, 10000);
	range(t, GT_NVTX_START_END, TID, 101, 0, "xthread", 2000, 9000);
	range(t, GT_NVTX_PUSH_POP, 101, 101, 0, "worker", 2000, 3000);
	call(t, TID, 6, 10500, 10600);
	kernel(t, 6, 7, 10700, 11000);
	kernel(t, 5, 7, 9500, 12000);
	kernel(t, 99, 7, 12000, 12100);
	tb_close(t);
}

static const struct gt_nvtx_gpu_name *name_of(const struct gt_nvtx_gpu *g, const char *msg)
{
	for (size_t i = 0; i < g->nnames; i++)
		if (strcmp(g->names[i].message, msg) == 0)
			return &g->names[i];
	return NULL;
}

START_TEST(hand_computed)
{
	struct tb t;
	struct gt_reader *r;
	struct gt_nvtx_gpu *g = NULL;
	const struct gt_nvtx_gpu_name *n;
	const char *msg = NULL;
	static const struct {
		const char *name;
		uint64_t seq, start, gpu_start, gpu_end, busy, ops;
		uint32_t level;
	} want[] = {
	        /* file order: the NVTX records are 0 inner, 1 phase, 2 the mark, 3 empty,
	         * 4 inner, 5 tail, 6 outer, 7 xthread, 8 worker */
	        {"inner", 0, 2000, 3000, 4800, 1700, 3, 1},
	        {"phase", 1, 2050, 3000, 4500, 1500, 2, 0},
	        {"inner", 4, 7100, 7400, 7450, 50, 1, 1},
	        {"tail", 5, 8000, 9500, 12000, 2500, 1, 1},
	        {"outer", 6, 1000, 3000, 12000, 4350, 6, 0},
	};

	write_trace(&t);
	r = tb_reader(t.path);
	ck_assert_int_eq(gt_nvtx_gpu_collect(r, &g, &msg), 0);

	ck_assert_uint_eq(g->ranges, 8);
	ck_assert_uint_eq(g->cross_thread, 1);
	ck_assert_uint_eq(g->ops, 8);
	ck_assert_uint_eq(g->ops_in_ranges, 6); /* K6 was launched after outer; K8 unknown */
	ck_assert_uint_eq(g->ops_unmatched, 1);
	ck_assert_uint_eq(g->ops_late, 0);

	ck_assert_uint_eq(g->ninstances, 5);
	for (size_t i = 0; i < 5; i++) {
		const struct gt_nvtx_gpu_instance *x = &g->instances[i];

		ck_assert_str_eq(x->name->message, want[i].name);
		ck_assert_uint_eq(x->seq, want[i].seq);
		ck_assert_uint_eq(x->start_ns, want[i].start);
		ck_assert_uint_eq(x->gpu_start_ns, want[i].gpu_start);
		ck_assert_uint_eq(x->gpu_end_ns, want[i].gpu_end);
		ck_assert_uint_eq(x->busy_ns, want[i].busy);
		ck_assert_uint_eq(x->ops, want[i].ops);
		ck_assert_uint_eq(x->level, want[i].level);
		ck_assert_uint_eq(x->pid, PID);
		ck_assert_uint_eq(x->tid, TID);
	}

	/* by total projected time: outer 9000, tail 2500, inner 1850, phase 1500; empty,
	 * worker and xthread have none */
	ck_assert_uint_eq(g->nnames, 4);
	ck_assert_str_eq(g->names[0].message, "outer");
	ck_assert_str_eq(g->names[1].message, "tail");
	ck_assert_str_eq(g->names[2].message, "inner");
	ck_assert_str_eq(g->names[3].message, "phase");
	ck_assert_uint_eq(g->names[3].style, GT_NVTX_START_END);
	ck_assert_ptr_null(name_of(g, "empty"));

	n = name_of(g, "inner");
	ck_assert_uint_eq(n->instances, 2);
	ck_assert_uint_eq(n->range_total_ns, 3000 + 800);
	ck_assert_uint_eq(n->ops, 4);
	ck_assert_uint_eq(n->proj.total_ns, 1850);
	ck_assert_uint_eq(n->proj.min_ns, 50);
	ck_assert_uint_eq(n->proj.max_ns, 1800);
	ck_assert_double_eq(n->proj.avg_ns, 925);
	ck_assert_double_eq(n->proj.median_ns, 925);
	ck_assert_double_eq_tol(n->proj.stddev_ns, 1750 / sqrt(2), 1e-9);
	ck_assert_uint_eq(n->busy.total_ns, 1750);
	ck_assert_uint_eq(n->busy.min_ns, 50);
	ck_assert_uint_eq(n->busy.max_ns, 1700);
	ck_assert_double_eq(n->busy.median_ns, 875);
	ck_assert_double_eq_tol(n->busy.stddev_ns, 1650 / sqrt(2), 1e-9);

	n = name_of(g, "outer");
	ck_assert_uint_eq(n->proj.total_ns, 9000);
	ck_assert_uint_eq(n->busy.total_ns, 4350);
	ck_assert_double_eq(n->busy.stddev_ns, 0);
	ck_assert_uint_eq(n->range_total_ns, 9000);
	ck_assert_ptr_null(n->domain);

	gt_nvtx_gpu_free(g);
	gt_reader_close(r);
	tb_remove(&t);
}
END_TEST

/* `gputrace stats -r nvtx-gpu --instances -f csv` of the same trace, whole; instance times
 * count from the trace's zero (500 ns). */
START_TEST(report_csv)
{
	static const char want[] =
	        "# nvtx_gpu\n"
	        "proj_total_ns,instances,proj_avg_ns,proj_median_ns,proj_min_ns,proj_max_ns,"
	        "proj_stddev_ns,busy_total_ns,busy_avg_ns,busy_median_ns,busy_min_ns,busy_max_ns,"
	        "busy_stddev_ns,range_total_ns,gpu_ops,style,domain,range\n"
	        "9000,1,9000.0,9000.0,9000,9000,0.0,4350,4350.0,4350.0,4350,4350,0.0,9000,6,"
	        "PushPop,,outer\n"
	        "2500,1,2500.0,2500.0,2500,2500,0.0,2500,2500.0,2500.0,2500,2500,0.0,1000,1,"
	        "PushPop,,tail\n"
	        "1850,2,925.0,925.0,50,1800,1237.4,1750,875.0,875.0,50,1700,1166.7,3800,4,"
	        "PushPop,,inner\n"
	        "1500,1,1500.0,1500.0,1500,1500,0.0,1500,1500.0,1500.0,1500,1500,0.0,400,2,"
	        "StartEnd,,phase\n"
	        "\n"
	        "# nvtx_gpu_instances\n"
	        "start_ns,duration_ns,proj_start_ns,proj_ns,busy_ns,gpu_ops,level,pid,tid,style,"
	        "domain,range\n"
	        "500,9000,2500,9000,4350,6,0,100,100,PushPop,,outer\n"
	        "1500,3000,2500,1800,1700,3,1,100,100,PushPop,,inner\n"
	        "1550,400,2500,1500,1500,2,,100,100,StartEnd,,phase\n"
	        "6600,800,6900,50,50,1,1,100,100,PushPop,,inner\n"
	        "7500,1000,9000,2500,2500,1,1,100,100,PushPop,,tail\n"
	        "\n"
	        "# nvtx_gpu_totals\n"
	        "ranges,projected_ranges,cross_thread_ranges,gpu_ops,gpu_ops_in_ranges,"
	        "unmatched_ops,late_ops\n"
	        "8,5,1,8,6,1,0\n";
	struct gt_stats_options so = {.reports = GT_STATS_REPORT_NVTX_GPU,
	                              .format = GT_STATS_FORMAT_CSV,
	                              .nvtx_instances = true};
	struct tb t;
	struct gt_reader *r;
	const char *msg = NULL;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	write_trace(&t);
	r = tb_reader(t.path);
	f = open_memstream(&buf, &len);
	ck_assert_int_eq(gt_stats_report(r, f, &so, &msg), 0);
	fclose(f);
	tb_expect_text(buf, want);
	free(buf);

	/* without --instances: the other two sections only */
	so.nvtx_instances = false;
	f = open_memstream(&buf, &len);
	ck_assert_int_eq(gt_stats_report(r, f, &so, &msg), 0);
	fclose(f);
	ck_assert_ptr_null(strstr(buf, "nvtx_gpu_instances"));
	ck_assert_ptr_nonnull(strstr(buf, "# nvtx_gpu_totals"));
	free(buf);

	/* "all" is the reports it always was: nvtx-gpu only when named */
	ck_assert_int_eq(gt_stats_parse_reports("all", &so.reports), 0);
	ck_assert_uint_eq(so.reports & GT_STATS_REPORT_NVTX_GPU, 0);
	ck_assert_int_eq(gt_stats_parse_reports("nvtx,nvtx-gpu", &so.reports), 0);
	ck_assert_uint_eq(so.reports, GT_STATS_REPORT_NVTX | GT_STATS_REPORT_NVTX_GPU);
	ck_assert_str_eq(gt_stats_report_name(GT_STATS_REPORT_NVTX_GPU), "nvtx-gpu");
	gt_reader_close(r);
	tb_remove(&t);
}
END_TEST

/* The real traces: every instance's projection lies within its work's span, busy within
 * the projection, and every GPU operation found its launching call (their API calls were
 * traced); the training steps of pytorch-train each launched their 11 operations. */
START_TEST(real_traces)
{
	static const struct {
		const char *trace;
		uint64_t ranges, instances, ops, in_ranges;
	} want[] = {
	        {"pytorch-train.gtrace", 30, 30, 473, 240},
	        {"ddp-2rank.gtrace", 48, 48, 966, 434},
	        /* the two ranks' files hold the job of ddp-2rank, and add up to it */
	        {"ddp-rank0.gtrace", 24, 24, 405, 138},
	        {"ddp-rank1.gtrace", 24, 24, 561, 296},
	        {"example.gtrace", 60, 60, 162, 160},
	        /* 800 launches, each inside its thread's worker range */
	        {"multistream.gtrace", 8, 8, 801, 800},
	};
	char path[512];

	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		struct gt_reader *r;
		struct gt_nvtx_gpu *g = NULL;
		const char *msg = NULL;
		uint64_t ops = 0;

		snprintf(path, sizeof(path), "%s/%s", data_dir, want[i].trace);
		r = tb_reader(path);
		ck_assert_int_eq(gt_nvtx_gpu_collect(r, &g, &msg), 0);
		ck_assert_msg(g->ranges == want[i].ranges && g->ninstances == want[i].instances &&
		                      g->ops == want[i].ops &&
		                      g->ops_in_ranges == want[i].in_ranges,
		              "%s: %llu ranges, %zu projected, %llu ops, %llu in ranges",
		              want[i].trace, (unsigned long long)g->ranges, g->ninstances,
		              (unsigned long long)g->ops, (unsigned long long)g->ops_in_ranges);
		ck_assert_uint_eq(g->ops_unmatched, 0);
		ck_assert_uint_eq(g->ops_late, 0);
		ck_assert_uint_eq(g->cross_thread, 0);
		for (size_t k = 0; k < g->ninstances; k++) {
			const struct gt_nvtx_gpu_instance *x = &g->instances[k];

			ck_assert_uint_le(x->gpu_start_ns, x->gpu_end_ns);
			ck_assert_uint_le(x->busy_ns, x->gpu_end_ns - x->gpu_start_ns);
			ck_assert_uint_gt(x->ops, 0);
			if (strcmp(want[i].trace, "pytorch-train.gtrace") == 0 &&
			    strcmp(x->name->message, "step") == 0)
				ck_assert_uint_eq(x->ops, 11);
			if (x->level == 0)
				ops += x->ops;
		}
		/* outermost ranges do not overlap on a thread: their work is counted once */
		ck_assert_uint_le(ops, g->ops_in_ranges);
		gt_nvtx_gpu_free(g);
		gt_reader_close(r);
	}
}
END_TEST

static Suite *nvtx_gpu_suite(void)
{
	Suite *s = suite_create("nvtx-gpu");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, hand_computed);
	tcase_add_test(tc, report_csv);
	tcase_add_test(tc, real_traces);
	suite_add_tcase(s, tc);
	return s;
}

int main(int argc, char **argv)
{
	SRunner *sr = srunner_create(nvtx_gpu_suite());
	int failed;

	data_dir = argc > 1 ? argv[1] : "tests/data";
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
