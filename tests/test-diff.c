/* Check suite for gputrace diff (exporters/diff*.c): two traces written here with known
 * differences - a kernel twice as slow, one that vanished, one that appeared, an API function
 * new in NEW, copies and NVTX ranges changed, steps 10 % slower, records lost in NEW - give
 * exactly these rows in this order, this headline, the incomplete-trace flag and the gate's
 * verdict for each metric; CSV exactly; and the H200 DDP job's two ranks compared. Runs as a
 * unit test. */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diff.h"
#include "trace-build.h"

static const char *data_dir; /* argv[1] */

#define T0 1000000ull

/* BASE: gemm 3 x 1000 ns, relu 4 x 100, old_kernel 2 x 500, 9 launches of 10 ns, 2 copies of
 * 200 ns, a memset of 50; steps "step 0..2" of 5000, 6000, 7000 ns with a 1000 ns "forward"
 * in each. NEW: gemm 3 x 1500, relu the same, fused_kernel 2 x 300 instead of old_kernel,
 * a cudaMalloc of 5000 ns more, copies of 250, steps 10 % longer, forward 1200; and 5 records
 * lost. With base_damaged, BASE records a damaged file's loss (as merge and --reindex do). */
static bool base_damaged;

static void write_side(struct tb *t, bool new_)
{
	uint32_t pid = new_ ? 300 : 100;
	uint64_t now = T0;

	tb_open(t, new_ ? "node-b" : "node-a");
	tb_process(t, pid, -1, new_ ? "node-b" : "node-a", 0xa0);
	for (unsigned s = 0; s < 3; s++) {
		char name[16];
		uint64_t len = (5000 + 1000 * s) * (new_ ? 11 : 10) / 10;

		snprintf(name, sizeof(name), "step %u", s);
		tb_nvtx(t, pid, NULL, "forward", now, now + (new_ ? 1200 : 1000));
		tb_nvtx(t, pid, NULL, name, now, now + len);
		for (unsigned k = 0; k < 3; k++)
			tb_api(t, pid, "cudaLaunchKernel", now + k * 20, now + k * 20 + 10);
		tb_kernel(t, pid, "_Z4gemmPf", 7, now + 100, now + 100 + (new_ ? 1500 : 1000));
		now += len;
	}
	for (unsigned k = 0; k < 4; k++)
		tb_kernel(t, pid, "relu", 7, now + k * 200, now + k * 200 + 100);
	for (unsigned k = 0; k < 2; k++) {
		if (new_)
			tb_kernel(t, pid, "fused_kernel", 7, now + 1000 + k * 1000,
			          now + 1000 + k * 1000 + 300);
		else
			tb_kernel(t, pid, "old_kernel", 7, now + 1000 + k * 1000,
			          now + 1000 + k * 1000 + 500);
		tb_memcpy(t, pid, GT_MEMCPY_HTOD, 1 << 20, now + 3000 + k * 1000,
		          now + 3000 + k * 1000 + (new_ ? 250 : 200));
	}
	tb_memset(t, pid, GT_MEM_DEVICE, now + 5000, now + 5050);
	if (new_) {
		tb_api(t, pid, "cudaMalloc", now + 6000, now + 11000);
		tb_loss(t, pid, GT_LOSS_RING_FULL, 5);
	}
	if (!new_ && base_damaged) {
		struct gt_rec_loss l = {0};

		l.source = GT_LOSS_FILE;
		l.count = 2;
		l.bytes = 9000;
		l.records = 700;
		tb_put(t, &l, GT_REC_LOSS, sizeof(l), pid);
	}
	tb_close(t);
}

static struct gt_diff *diff(const struct gt_diff_options *o, int want_finish)
{
	struct tb b, n;
	struct gt_diff *d = NULL;
	struct gt_reader *r;
	const char *msg = NULL;

	write_side(&b, false);
	write_side(&n, true);
	ck_assert_int_eq(gt_diff_new(o, &d), 0);
	r = tb_reader(b.path);
	ck_assert_int_eq(gt_diff_add(d, GT_DIFF_BASE, r, "base.gtrace", &msg), 0);
	gt_reader_close(r);
	r = tb_reader(n.path);
	ck_assert_int_eq(gt_diff_add(d, GT_DIFF_NEW, r, "new.gtrace", &msg), 0);
	/* a side is read once */
	ck_assert_int_eq(gt_diff_add(d, GT_DIFF_NEW, r, "new.gtrace", &msg), -EINVAL);
	gt_reader_close(r);
	ck_assert_int_eq(gt_diff_finish(d, &msg), want_finish);
	tb_remove(&b);
	tb_remove(&n);
	return d;
}

static void check_row(const struct gt_diff_row *r, unsigned category, const char *name,
                      uint64_t base_count, uint64_t base_total, uint64_t new_count,
                      uint64_t new_total)
{
	ck_assert_str_eq(r->name, name);
	ck_assert_uint_eq(r->category, category);
	ck_assert_uint_eq(r->side[GT_DIFF_BASE]->count, base_count);
	ck_assert_uint_eq(r->side[GT_DIFF_BASE]->total, base_total);
	ck_assert_uint_eq(r->side[GT_DIFF_NEW]->count, new_count);
	ck_assert_uint_eq(r->side[GT_DIFF_NEW]->total, new_total);
	ck_assert_int_eq(r->delta_ns, (int64_t)new_total - (int64_t)base_total);
}

START_TEST(test_rows)
{
	struct gt_diff *d = diff(NULL, 0);
	const struct gt_diff_totals *b = &d->t[GT_DIFF_BASE], *n = &d->t[GT_DIFF_NEW];

	/* by the change in total time; equal changes by category, then name */
	ck_assert_uint_eq(d->nchanged, 7);
	check_row(&d->changed[0], GT_DIFF_NVTX, "step N", 3, 18000, 3, 19800);
	check_row(&d->changed[1], GT_DIFF_KERNEL, "gemm(float*)", 3, 3000, 3, 4500);
	check_row(&d->changed[2], GT_DIFF_NVTX, "forward", 3, 3000, 3, 3600);
	check_row(&d->changed[3], GT_DIFF_MEMCPY, "HtoD", 2, 400, 2, 500);
	check_row(&d->changed[4], GT_DIFF_KERNEL, "relu", 4, 400, 4, 400);
	check_row(&d->changed[5], GT_DIFF_API, "cudaLaunchKernel", 9, 90, 9, 90);
	check_row(&d->changed[6], GT_DIFF_MEMSET, "device", 1, 50, 1, 50);
	ck_assert_uint_eq(d->nappeared, 2);
	check_row(&d->appeared[0], GT_DIFF_API, "cudaMalloc", 0, 0, 1, 5000);
	check_row(&d->appeared[1], GT_DIFF_KERNEL, "fused_kernel", 0, 0, 2, 600);
	ck_assert_uint_eq(d->nvanished, 1);
	check_row(&d->vanished[0], GT_DIFF_KERNEL, "old_kernel", 2, 1000, 0, 0);
	/* the headline */
	ck_assert_uint_eq(b->gpu_ns, 3000 + 400 + 1000 + 400 + 50);
	ck_assert_uint_eq(n->gpu_ns, 4500 + 400 + 600 + 500 + 50);
	ck_assert_uint_eq(b->launches, 9);
	ck_assert_uint_eq(n->launches, 9);
	ck_assert_uint_eq(b->api_calls, 9);
	ck_assert_uint_eq(n->api_calls, 10);
	ck_assert_uint_eq(b->steps, 3);
	ck_assert_uint_eq(b->step_median_ns, 6000);
	ck_assert_uint_eq(b->step_mean_ns, 6000);
	ck_assert_uint_eq(n->step_median_ns, 6600);
	ck_assert_uint_eq(n->step_mean_ns, 6600);
	ck_assert_uint_eq(b->lost, 0);
	ck_assert_uint_eq(n->lost, 5);
	ck_assert_str_eq(n->host, "node-b");
	ck_assert(!d->gate.enabled);
	gt_diff_free(d);
}
END_TEST

/* The gate, metric by metric: limit, whether it regressed, and what changed. */
static const struct {
	const char *metric;
	double limit;
	bool regressed;
	double change_pct; /* NAN: from nothing (inf) */
} gates[] = {
        {NULL, 20, true, 100.0 * 1200 / 4850}, /* gpu-time: +24.74 % */
        {"gpu-time", 30, false, 100.0 * 1200 / 4850},
        {"step-time", 5, true, 10.0},
        {"step-time", 10, false, 10.0}, /* not more than the limit */
        {"gemm(float*)", 49.9, true, 50.0},
        {"gemm", 49.9, true, 50.0}, /* the base name of one kernel */
        {"relu", 0, false, 0.0},
        {"fused_kernel", 1000, true, NAN}, /* appeared: from nothing */
        {"old_kernel", 0, false, -100.0},  /* vanished */
        {"HtoD", 30, false, 25.0},
        {"step N", 9, true, 10.0}, /* an NVTX row */
};

START_TEST(test_gate)
{
	struct gt_diff_options o = {.fail_above_pct = gates[_i].limit, .metric = gates[_i].metric};
	struct gt_diff *d = diff(&o, 0);

	ck_assert(d->gate.enabled);
	ck_assert_msg(d->gate.regressed == gates[_i].regressed, "%s: regressed %d",
	              gates[_i].metric ? gates[_i].metric : "(default)", d->gate.regressed);
	if (isnan(gates[_i].change_pct))
		ck_assert(isinf(d->gate.change_pct));
	else
		ck_assert_msg(fabs(d->gate.change_pct - gates[_i].change_pct) < 1e-9, "%s: %g",
		              d->gate.metric, d->gate.change_pct);
	ck_assert_str_eq(d->gate.metric, gates[_i].metric ? gates[_i].metric : "gpu-time");
	gt_diff_free(d);
}
END_TEST

START_TEST(test_gate_unknown_metric)
{
	struct gt_diff_options o = {.fail_above_pct = 5, .metric = "no_such_kernel"};
	struct gt_diff *d = diff(&o, -ENOENT);

	gt_diff_free(d);
}
END_TEST

START_TEST(test_csv)
{
	struct gt_diff_options o = {.format = GT_STATS_FORMAT_CSV, .fail_above_pct = 20};
	struct gt_diff *d = diff(&o, 0);
	const char *msg = NULL;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	ck_assert_int_eq(gt_diff_write(d, f, &msg), 0);
	fclose(f);
	tb_expect_text(
	        buf,
	        "# comparison\n"
	        "incomplete,base_lost_records,new_lost_records,gate_metric,gate_limit_pct,"
	        "gate_change_pct,regressed\n"
	        "true,0,5,gpu-time,20.00,24.74,true\n"
	        "\n"
	        "# traces\n"
	        "side,trace,host,command,lost_records,chunks_skipped,damage,recovered,step_family\n"
	        "BASE,base.gtrace,node-a,python train.py,0,0,,false,step\n"
	        "NEW,new.gtrace,node-b,python train.py,5,0,,false,step\n"
	        "\n"
	        "# headline\n"
	        "metric,unit,base,new,change,change_pct\n"
	        "gpu_time_ns,ns,4850,6050,1200,24.74\n"
	        "steps,count,3,3,0,0.00\n"
	        "step_time_median_ns,ns,6000,6600,600,10.00\n"
	        "step_time_mean_ns,ns,6000,6600,600,10.00\n"
	        "kernel_launches,count,9,9,0,0.00\n"
	        "api_calls,count,9,10,1,11.11\n"
	        "lost_records,count,0,5,5,\n"
	        "\n"
	        "# changed\n"
	        "change_ns,change_pct,base_total_ns,new_total_ns,base_count,new_count,"
	        "base_mean_ns,new_mean_ns,base_median_ns,new_median_ns,mean_change_pct,what,name\n"
	        "1800,10.00,18000,19800,3,3,6000.0,6600.0,5999.0,6607.0,10.00,nvtx,step N\n"
	        "1500,50.00,3000,4500,3,3,1000.0,1500.0,1000.0,1500.0,50.00,kernel,"
	        "gemm(float*)\n"
	        "600,20.00,3000,3600,3,3,1000.0,1200.0,1000.0,1200.0,20.00,nvtx,forward\n"
	        "100,25.00,400,500,2,2,200.0,250.0,200.0,250.0,25.00,memcpy,HtoD\n"
	        "0,0.00,400,400,4,4,100.0,100.0,100.0,100.0,0.00,kernel,relu\n"
	        "0,0.00,90,90,9,9,10.0,10.0,10.0,10.0,0.00,api,cudaLaunchKernel\n"
	        "0,0.00,50,50,1,1,50.0,50.0,50.0,50.0,0.00,memset,device\n"
	        "\n"
	        "# appeared\n"
	        "total_ns,count,mean_ns,median_ns,what,name\n"
	        "5000,1,5000.0,5000.0,api,cudaMalloc\n"
	        "600,2,300.0,300.0,kernel,fused_kernel\n"
	        "\n"
	        "# vanished\n"
	        "total_ns,count,mean_ns,median_ns,what,name\n"
	        "1000,2,500.0,500.0,kernel,old_kernel\n");
	free(buf);
	gt_diff_free(d);
}
END_TEST

/* A damaged side makes the comparison incomplete, named with what it lost in the words of
 * every command; its chunks are no lost records. */
START_TEST(test_damaged_side)
{
	static const char warn[] =
	        "WARNING: incomplete traces, the comparison may be off by what they lost: BASE "
	        "(base.gtrace) is damaged: 2 chunks (9000 bytes) and 0 malformed records skipped; "
	        "NEW (new.gtrace) lost 5 records; see `gputrace stats -r losses`.\n\n";
	struct gt_diff_options o = {.format = GT_STATS_FORMAT_CSV};
	struct gt_diff *d;
	const char *msg = NULL;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	base_damaged = true;
	d = diff(NULL, 0);
	f = open_memstream(&buf, &len);
	ck_assert_int_eq(gt_diff_write(d, f, &msg), 0);
	fclose(f);
	ck_assert_msg(strncmp(buf, warn, strlen(warn)) == 0, "starts [%.300s]", buf);
	free(buf);
	gt_diff_free(d);

	d = diff(&o, 0);
	base_damaged = false;
	buf = NULL;
	f = open_memstream(&buf, &len);
	ck_assert_int_eq(gt_diff_write(d, f, &msg), 0);
	fclose(f);
	ck_assert_ptr_nonnull(strstr(buf, "\ntrue,0,5,"));
	ck_assert_ptr_nonnull(strstr(buf, "\nBASE,base.gtrace,node-a,python train.py,0,2,2 chunks "
	                                  "(9000 bytes) and 0 malformed records skipped,false,"));
	free(buf);
	gt_diff_free(d);
}
END_TEST

/* The table says first that the comparison is of incomplete traces. */
START_TEST(test_table_flags_incomplete)
{
	struct gt_diff *d = diff(NULL, 0);
	const char *msg = NULL;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	ck_assert_int_eq(gt_diff_write(d, f, &msg), 0);
	fclose(f);
	ck_assert_msg(strncmp(buf,
	                      "WARNING: incomplete traces, the comparison may be off by what they "
	                      "lost: NEW (new.gtrace) lost 5 records; see `gputrace stats -r "
	                      "losses`.\n\nComparison\n",
	                      strlen("WARNING: incomplete traces, the comparison may be off by "
	                             "what they lost: NEW (new.gtrace) lost 5 records; see "
	                             "`gputrace stats -r losses`.\n\nComparison\n")) == 0,
	              "starts [%.200s]", buf);
	ck_assert_ptr_nonnull(strstr(buf, "\nOnly in NEW (appeared)\n"));
	ck_assert_ptr_nonnull(strstr(buf, "\nOnly in BASE (vanished)\n"));
	ck_assert_ptr_nonnull(strstr(buf, "+1.800 us"));
	free(buf);
	gt_diff_free(d);
}
END_TEST

START_TEST(test_mangled)
{
	struct gt_diff_options o = {.mangled = true, .fail_above_pct = -1};
	struct gt_diff *d = diff(&o, 0);

	ck_assert_str_eq(d->changed[1].name, "_Z4gemmPf");
	gt_diff_free(d);
}
END_TEST

/* The DDP job's two ranks as BASE and NEW: rank 1's extra matmuls appear, its step time and
 * GPU time are higher. */
START_TEST(test_real_ddp)
{
	struct gt_diff_options o = {.fail_above_pct = 100, .metric = "gpu-time"};
	struct gt_diff *d = NULL;
	const char *msg = NULL;
	char p[512];

	ck_assert_int_eq(gt_diff_new(&o, &d), 0);
	for (unsigned s = 0; s < 2; s++) {
		struct gt_reader *r;

		snprintf(p, sizeof(p), "%s/ddp-rank%u.gtrace", data_dir, s);
		r = tb_reader(p);
		ck_assert_int_eq(gt_diff_add(d, s, r, p, &msg), 0);
		gt_reader_close(r);
	}
	ck_assert_int_eq(gt_diff_finish(d, &msg), 0);
	ck_assert_uint_eq(d->t[0].launches, 292);
	ck_assert_uint_eq(d->t[1].launches, 412);
	ck_assert_uint_eq(d->t[0].steps, 12);
	ck_assert_uint_eq(d->t[1].steps, 12);
	ck_assert_uint_eq(d->nappeared, 3); /* the matmul, the norm and the division */
	ck_assert_uint_eq(d->nvanished, 0);
	for (size_t i = 0; i < d->nappeared; i++) {
		ck_assert_uint_eq(d->appeared[i].category, GT_DIFF_KERNEL);
		ck_assert_uint_eq(d->appeared[i].side[GT_DIFF_NEW]->count, 40);
	}
	ck_assert(d->gate.regressed); /* +193.74 % */
	ck_assert(d->gate.change_pct > 150 && d->gate.change_pct < 250);
	gt_diff_free(d);

	/* a base name three kernels have is refused, naming two of them */
	o.metric = "reduce_kernel";
	ck_assert_int_eq(gt_diff_new(&o, &d), 0);
	for (unsigned s = 0; s < 2; s++) {
		struct gt_reader *r;

		snprintf(p, sizeof(p), "%s/ddp-rank%u.gtrace", data_dir, s);
		r = tb_reader(p);
		ck_assert_int_eq(gt_diff_add(d, s, r, p, &msg), 0);
		gt_reader_close(r);
	}
	ck_assert_int_eq(gt_diff_finish(d, &msg), -ENOENT);
	{
		const char *want = "3 kernels have the base name reduce_kernel (e.g. void "
		                   "at::native::reduce_kernel<";

		ck_assert_int_eq(strncmp(msg, want, strlen(want)), 0);
	}
	ck_assert_ptr_nonnull(strstr(msg, "): give the whole name"));
	gt_diff_free(d);
}
END_TEST

static Suite *diff_suite(void)
{
	Suite *s = suite_create("diff");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_rows);
	tcase_add_loop_test(tc, test_gate, 0, sizeof(gates) / sizeof(gates[0]));
	tcase_add_test(tc, test_gate_unknown_metric);
	tcase_add_test(tc, test_csv);
	tcase_add_test(tc, test_table_flags_incomplete);
	tcase_add_test(tc, test_damaged_side);
	tcase_add_test(tc, test_mangled);
	tcase_add_test(tc, test_real_ddp);
	suite_add_tcase(s, tc);
	return s;
}

int main(int argc, char **argv)
{
	SRunner *sr = srunner_create(diff_suite());
	int failed;

	data_dir = argc > 1 ? argv[1] : "tests/data";
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
