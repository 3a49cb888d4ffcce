/* Check suite for GPU busy time by kind (exporters/analysis/busy.c): unions and overlaps to the
 * nanosecond, in any arrival order within the merge window, windows (steps) split at their
 * edges, late arrivals counted, a long stream summed exactly in bounded memory, and the live
 * view's fold. Runs as a unit test. */
#include <check.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "busy.h"

#define C GT_BUSY_COMPUTE
#define N GT_BUSY_COMM
#define M GT_BUSY_MEMORY

static struct gt_busy *busy(struct gt_busy_window *w, size_t n)
{
	struct gt_busy *b = NULL;

	ck_assert_int_eq(gt_busy_new(w, n, NULL, &b), 0);
	return b;
}

static void add(struct gt_busy *b, uint64_t start, uint64_t end, unsigned kind)
{
	ck_assert_int_eq(gt_busy_add(b, start, end, kind), 0);
}

START_TEST(test_disjoint)
{
	struct gt_busy *b = busy(NULL, 0);
	const struct gt_busy_totals *t;

	add(b, 1000, 1010, C);
	add(b, 1020, 1030, M);
	add(b, 1040, 1045, N);
	ck_assert_int_eq(gt_busy_finish(b), 0);
	t = gt_busy_totals(b);
	ck_assert_uint_eq(t->first_ns, 1000);
	ck_assert_uint_eq(t->last_ns, 1045);
	ck_assert_uint_eq(t->span_ns, 45);
	ck_assert_uint_eq(gt_busy_compute_ns(t), 10);
	ck_assert_uint_eq(gt_busy_memory_ns(t), 10);
	ck_assert_uint_eq(gt_busy_comm_ns(t), 5);
	ck_assert_uint_eq(gt_busy_any_ns(t), 25);
	ck_assert_uint_eq(gt_busy_idle_ns(t), 20);
	ck_assert_uint_eq(gt_busy_overlap_ns(t), 0);
	ck_assert_uint_eq(t->spans, 3);
	ck_assert_uint_eq(t->late_ns, 0);
	gt_busy_free(b);
}
END_TEST

/* Compute [0, 100) on one stream, communication [50, 150) on another, a copy [140, 200)
 * under both and after, a second compute kernel [60, 70) inside the first. */
static void overlapping(struct gt_busy *b, bool reversed)
{
	static const struct {
		uint64_t s, e;
		unsigned k;
	} v[] = {{0, 100, C}, {50, 150, N}, {140, 200, M}, {60, 70, C}};

	for (size_t i = 0; i < 4; i++) {
		size_t j = reversed ? 3 - i : i;

		add(b, 5000 + v[j].s, 5000 + v[j].e, v[j].k);
	}
}

START_TEST(test_overlap)
{
	struct gt_busy *b = busy(NULL, 0);
	const struct gt_busy_totals *t;

	overlapping(b, _i == 1);
	ck_assert_int_eq(gt_busy_finish(b), 0);
	t = gt_busy_totals(b);
	ck_assert_uint_eq(t->by_mask[1u << C], 50);               /* 0..50 */
	ck_assert_uint_eq(t->by_mask[(1u << C) | (1u << N)], 50); /* 50..100 */
	ck_assert_uint_eq(t->by_mask[1u << N], 40);               /* 100..140 */
	ck_assert_uint_eq(t->by_mask[(1u << N) | (1u << M)], 10); /* 140..150 */
	ck_assert_uint_eq(t->by_mask[1u << M], 50);               /* 150..200 */
	ck_assert_uint_eq(gt_busy_compute_ns(t), 100);
	ck_assert_uint_eq(gt_busy_comm_ns(t), 50);
	ck_assert_uint_eq(gt_busy_comm_all_ns(t), 100);
	ck_assert_uint_eq(gt_busy_overlap_ns(t), 50);
	ck_assert_uint_eq(gt_busy_memory_ns(t), 50);
	ck_assert_uint_eq(gt_busy_idle_ns(t), 0);
	ck_assert_uint_eq(t->span_ns, 200);
	gt_busy_free(b);
}
END_TEST

START_TEST(test_all_three)
{
	struct gt_busy *b = busy(NULL, 0);
	const struct gt_busy_totals *t;

	add(b, 10, 40, C);
	add(b, 20, 50, N);
	add(b, 30, 60, M);
	add(b, 30, 30, C); /* zero length: nothing */
	add(b, 90, 80, C); /* reversed: nothing */
	ck_assert_int_eq(gt_busy_add(b, 1, 2, GT_BUSY_KIND_MAX), -EINVAL);
	ck_assert_int_eq(gt_busy_finish(b), 0);
	t = gt_busy_totals(b);
	ck_assert_uint_eq(t->by_mask[7], 10); /* 30..40 */
	ck_assert_uint_eq(t->by_mask[(1u << N) | (1u << M)], 10);
	ck_assert_uint_eq(t->by_mask[1u << M], 10);
	ck_assert_uint_eq(gt_busy_compute_ns(t), 30);
	ck_assert_uint_eq(gt_busy_overlap_ns(t), 20);
	ck_assert_uint_eq(gt_busy_any_ns(t), 50);
	ck_assert_uint_eq(t->spans, 3);
	ck_assert_uint_eq(t->span_ns, 50);
	gt_busy_free(b);
}
END_TEST

START_TEST(test_windows)
{
	/* two steps back to back and one nested in the first */
	struct gt_busy_window w[3] = {{1000, 2000}, {1200, 1300}, {2000, 3000}};
	struct gt_busy *b = busy(w, 3);

	add(b, 1100, 1250, C); /* 150 in step 0, 50 in the nested one */
	add(b, 1900, 2100, C); /* 100 + 100 across the edge */
	add(b, 2500, 2600, N);
	add(b, 2550, 2650, C); /* overlaps the communication for 50 */
	add(b, 2900, 3100, M); /* 100 in step 1, 100 after it */
	add(b, 500, 900, C);   /* before every step (arrives late, but within the window) */
	ck_assert_int_eq(gt_busy_finish(b), 0);
	ck_assert_uint_eq(w[0].compute_ns, 150 + 100);
	ck_assert_uint_eq(w[1].compute_ns, 50);
	ck_assert_uint_eq(w[2].compute_ns, 100 + 100);
	ck_assert_uint_eq(w[2].comm_ns, 100);
	ck_assert_uint_eq(w[2].overlap_ns, 50);
	ck_assert_uint_eq(w[2].memory_ns, 100);
	ck_assert_uint_eq(w[0].comm_ns + w[0].memory_ns + w[0].overlap_ns, 0);
	ck_assert_uint_eq(gt_busy_totals(b)->late_ns, 0);
	gt_busy_free(b);
}
END_TEST

/* Two GPUs sharing one set of steps (a rank with two GPUs) and one merge scratch. */
START_TEST(test_windows_shared)
{
	struct gt_busy_window w[1] = {{0, 1000}};
	struct gt_busy_totals sum = {.first_ns = UINT64_MAX};
	struct gt_busy_scratch *sc = NULL;
	struct gt_busy *a = NULL, *b = NULL;

	ck_assert_int_eq(gt_busy_scratch_new(&sc), 0);
	ck_assert_int_eq(gt_busy_new(w, 1, sc, &a), 0);
	ck_assert_int_eq(gt_busy_new(w, 1, sc, &b), 0);

	add(a, 100, 300, C);
	add(b, 200, 500, C);
	ck_assert_int_eq(gt_busy_finish(a), 0);
	ck_assert_int_eq(gt_busy_finish(b), 0);
	ck_assert_uint_eq(w[0].compute_ns, 500); /* each GPU's own time, added */
	gt_busy_totals_add(&sum, gt_busy_totals(a));
	gt_busy_totals_add(&sum, gt_busy_totals(b));
	ck_assert_uint_eq(sum.span_ns, 200 + 300);
	ck_assert_uint_eq(sum.first_ns, 100);
	ck_assert_uint_eq(sum.last_ns, 500);
	ck_assert_uint_eq(gt_busy_compute_ns(&sum), 500);
	ck_assert_uint_eq(gt_busy_idle_ns(&sum), 0);
	gt_busy_free(a);
	gt_busy_free(b);
	gt_busy_scratch_free(sc);
}
END_TEST

/* Far more intervals than the window holds, arriving in reverse order within blocks of a
 * few hundred: exact, and no interval is late. */
START_TEST(test_long_stream)
{
	const uint64_t n = 900 * 300;
	struct gt_busy *b = busy(NULL, 0);
	const struct gt_busy_totals *t;
	uint64_t base = 1000000;

	for (uint64_t i = 0; i < n; i += 900) {
		/* a block of 900 kernels of 60 ns every 100 ns, fed in reverse order (merges
		 * happen in the middle of blocks), and a copy under the last 30 ns of each:
		 * 1,800 segments, within what stays open */
		for (uint64_t j = 900; j-- > 0;) {
			uint64_t s = base + (i + j) * 100;

			add(b, s, s + 60, C);
			if (_i)
				add(b, s + 30, s + 60, M);
		}
	}
	ck_assert_int_eq(gt_busy_finish(b), 0);
	t = gt_busy_totals(b);
	ck_assert_uint_eq(gt_busy_compute_ns(t), n * 60);
	ck_assert_uint_eq(gt_busy_any_ns(t), n * 60);
	ck_assert_uint_eq(gt_busy_idle_ns(t), (n - 1) * 40);
	ck_assert_uint_eq(t->by_mask[(1u << C) | (1u << M)], _i ? n * 30 : 0);
	ck_assert_uint_eq(t->late_ns, 0);
	ck_assert_uint_eq(t->late_spans, 0);
	gt_busy_free(b);
}
END_TEST

/* An interval that comes after GT_BUSY_PENDING + GT_BUSY_KEEP later ones: its time before
 * what was summed is counted as late, the rest as usual. */
START_TEST(test_late)
{
	struct gt_busy *b = busy(NULL, 0);
	const struct gt_busy_totals *t;
	const uint64_t n = GT_BUSY_PENDING * 4;

	for (uint64_t i = 0; i < n; i++)
		add(b, 10000 + i * 100, 10000 + i * 100 + 50, C);
	/* everything but the newest GT_BUSY_KEEP segments of the last merge is summed: the
	 * floor is the end of segment n - GT_BUSY_KEEP - 1 */
	add(b, 5000, 10000 + (n - GT_BUSY_KEEP - 1) * 100 + 50 + 25, M);
	ck_assert_int_eq(gt_busy_finish(b), 0);
	t = gt_busy_totals(b);
	ck_assert_uint_eq(t->late_spans, 1);
	ck_assert_uint_eq(t->late_ns, (n - GT_BUSY_KEEP - 1) * 100 + 50 + 5000);
	ck_assert_uint_eq(gt_busy_memory_ns(t), 25);
	ck_assert_uint_eq(gt_busy_compute_ns(t), n * 50);
	ck_assert_uint_eq(t->first_ns, 5000);
	/* wholly before the floor: all late */
	add(b, 100, 200, C);
	ck_assert_uint_eq(gt_busy_totals(b)->late_ns,
	                  (n - GT_BUSY_KEEP - 1) * 100 + 50 + 5000 + 100);
	gt_busy_free(b);
}
END_TEST

/* gt_busy_fold, as the live view uses it: the union of what came since the last fold,
 * whatever the order (streams interleaved, runs delivered in turn, one run reversed), time
 * shared with what an earlier fold summed counted again, and a long stream summed in bounded
 * memory before the fold that sums the rest. */
START_TEST(test_fold)
{
	struct gt_busy_window w = {.start_ns = 0, .end_ns = 200};
	struct gt_busy *b = busy(NULL, 0);
	const struct gt_busy_totals *t = gt_busy_totals(b);
	const uint64_t n = GT_BUSY_PENDING * 16;

	/* two streams, their kernels interleaved in time and in arrival, and a third */
	add(b, 0, 10, C);
	add(b, 5, 25, C);
	add(b, 20, 30, C);
	add(b, 45, 60, C);
	add(b, 40, 50, C);
	add(b, 58, 70, C);
	ck_assert_int_eq(gt_busy_fold(b), 0);
	ck_assert_uint_eq(gt_busy_any_ns(t), 30 + 30); /* [0, 30] and [40, 70] */
	/* out of order; [50, 80] overlaps what the last fold summed, and counts whole */
	add(b, 100, 110, C);
	add(b, 50, 60, C);
	add(b, 55, 80, C);
	ck_assert_int_eq(gt_busy_fold(b), 0);
	ck_assert_uint_eq(gt_busy_any_ns(t), 60 + 10 + 30);
	ck_assert_uint_eq(t->late_ns, 0);
	/* 70 disjoint intervals in reverse order */
	for (uint64_t i = 0; i < 70; i++)
		add(b, 1000 + 10 * (69 - i), 1005 + 10 * (69 - i), C);
	ck_assert_int_eq(gt_busy_fold(b), 0);
	ck_assert_uint_eq(gt_busy_any_ns(t), 100 + 70 * 5);
	gt_busy_free(b);

	/* many more than wait to be merged: all but the newest GT_BUSY_KEEP segments are
	 * summed as they come, the fold sums the rest */
	b = busy(NULL, 0);
	t = gt_busy_totals(b);
	for (uint64_t i = 0; i <= n; i++)
		add(b, 2 * i, 2 * i + 1, C);
	ck_assert_uint_eq(gt_busy_any_ns(t), n - GT_BUSY_KEEP);
	ck_assert_int_eq(gt_busy_fold(b), 0);
	ck_assert_uint_eq(gt_busy_any_ns(t), n + 1);
	gt_busy_free(b);

	/* a window gets its share again after a fold */
	b = busy(&w, 1);
	add(b, 0, 10, C);
	ck_assert_int_eq(gt_busy_fold(b), 0);
	add(b, 5, 15, C);
	ck_assert_int_eq(gt_busy_fold(b), 0);
	ck_assert_uint_eq(w.compute_ns, 20);
	gt_busy_free(b);
}
END_TEST

/* Runs delivered in turn (three streams, 300 kernels each, in blocks of 100): merged run by
 * run, exact. */
START_TEST(test_runs)
{
	struct gt_busy *b = busy(NULL, 0);
	const struct gt_busy_totals *t;

	for (uint64_t blk = 0; blk < 3; blk++)
		for (uint64_t s = 0; s < 3; s++)
			for (uint64_t k = blk * 100; k < (blk + 1) * 100; k++)
				add(b, k * 100 + s * 20, k * 100 + s * 20 + 30, s == 2 ? N : C);
	ck_assert_int_eq(gt_busy_finish(b), 0);
	t = gt_busy_totals(b);
	/* each 100 ns: compute [0, 50], communication [40, 70], so 40 of compute alone, 10
	 * together, 20 of communication alone, 30 idle */
	ck_assert_uint_eq(t->by_mask[1u << C], 300 * 40);
	ck_assert_uint_eq(t->by_mask[(1u << C) | (1u << N)], 300 * 10);
	ck_assert_uint_eq(t->by_mask[1u << N], 300 * 20);
	ck_assert_uint_eq(gt_busy_idle_ns(t), 299 * 30);
	ck_assert_uint_eq(t->late_ns, 0);
	gt_busy_free(b);
}
END_TEST

static Suite *busy_suite(void)
{
	Suite *s = suite_create("busy");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_disjoint);
	tcase_add_loop_test(tc, test_overlap, 0, 2);
	tcase_add_test(tc, test_all_three);
	tcase_add_test(tc, test_windows);
	tcase_add_test(tc, test_windows_shared);
	tcase_add_loop_test(tc, test_long_stream, 0, 2);
	tcase_add_test(tc, test_late);
	tcase_add_test(tc, test_fold);
	tcase_add_test(tc, test_runs);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(busy_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
