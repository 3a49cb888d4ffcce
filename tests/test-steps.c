/* Check suite for the training-step finder (exporters/model/steps.c): the name rules, the family
 * chosen, the numbers per process whatever order the ranges arrive in, lookups; and on the
 * traces recorded on an H200 in tests/data, the steps their NVTX records hold. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gputrace/trace.h"
#include "steps.h"

static const char *data_dir; /* argv[1] */
static char dir[64];

/* ------------------------------------------------------------------------------------ */
/* The name rules                                                                        */

static const struct {
	const char *name; /* --step NAME, or NULL */
	const char *text;
	enum gt_steps_family family;
	int64_t number;
} matches[] = {
        {NULL, "ProfilerStep#0", GT_STEPS_PROFILER_STEP, 0},
        {NULL, "ProfilerStep#123", GT_STEPS_PROFILER_STEP, 123},
        {NULL, "ProfilerStep#", GT_STEPS_NONE, -1},
        {NULL, "ProfilerStep# 3", GT_STEPS_NONE, -1},
        {NULL, "ProfilerStep#3x", GT_STEPS_NONE, -1},
        {NULL, "profilerstep#3", GT_STEPS_NONE, -1}, /* HTA wants it exactly */
        {NULL, "step", GT_STEPS_STEP, -1},
        {NULL, "Step", GT_STEPS_STEP, -1},
        {NULL, "STEP#5", GT_STEPS_STEP, 5},
        {NULL, "Step 5", GT_STEPS_STEP, 5},
        {NULL, "step_5", GT_STEPS_STEP, 5},
        {NULL, "step-5", GT_STEPS_STEP, 5},
        {NULL, "step:5", GT_STEPS_STEP, 5},
        {NULL, "step=5", GT_STEPS_STEP, 5},
        {NULL, "step5", GT_STEPS_STEP, 5},
        {NULL, "step 007", GT_STEPS_STEP, 7},
        {NULL, "step ", GT_STEPS_NONE, -1},
        {NULL, "step  5", GT_STEPS_NONE, -1},
        {NULL, "step 5 of 10", GT_STEPS_NONE, -1},
        {NULL, "stepper", GT_STEPS_NONE, -1},
        {NULL, "my step", GT_STEPS_NONE, -1},
        {NULL, "graph-step", GT_STEPS_NONE, -1},
        {NULL, "step 1234567890123456789", GT_STEPS_NONE, -1}, /* 19 digits */
        {NULL, "train_step", GT_STEPS_TRAIN_STEP, -1},
        {NULL, "Training Step 4", GT_STEPS_TRAIN_STEP, 4},
        {NULL, "training_step#9", GT_STEPS_TRAIN_STEP, 9},
        {NULL, "train step", GT_STEPS_TRAIN_STEP, -1},
        {NULL, "iteration", GT_STEPS_ITERATION, -1},
        {NULL, "Iteration 12", GT_STEPS_ITERATION, 12},
        {NULL, "iter-3", GT_STEPS_ITERATION, 3},
        {NULL, "iterations", GT_STEPS_NONE, -1},
        {NULL, "forward", GT_STEPS_NONE, -1},
        {NULL, "", GT_STEPS_NONE, -1},
        {"fwd", "fwd", GT_STEPS_NAMED, -1},
        {"fwd", "fwd 7", GT_STEPS_NAMED, 7},
        {"fwd", "fwd7", GT_STEPS_NAMED, 7},
        {"fwd", "Fwd", GT_STEPS_NONE, -1}, /* a given name is exact */
        {"fwd", "step", GT_STEPS_NONE, -1},
        {"ProfilerStep", "ProfilerStep#3", GT_STEPS_NAMED, 3},
};

START_TEST(test_match)
{
	int64_t number = 42;
	enum gt_steps_family f = gt_steps_match(matches[_i].name, matches[_i].text,
	                                        strlen(matches[_i].text), &number);

	ck_assert_msg(f == matches[_i].family, "'%s': family %d, expected %d", matches[_i].text, f,
	              matches[_i].family);
	ck_assert_msg(number == matches[_i].number, "'%s': number %lld, expected %lld",
	              matches[_i].text, (long long)number, (long long)matches[_i].number);
}
END_TEST

START_TEST(test_match_embedded_nul)
{
	int64_t number;

	/* a NUL is not a separator */
	ck_assert_int_eq(gt_steps_match(NULL,
	                                "step\0"
	                                "5",
	                                6, &number),
	                 GT_STEPS_NONE);
	ck_assert_int_eq(gt_steps_match(NULL, NULL, 0, &number), GT_STEPS_NONE);
	ck_assert_str_eq(gt_steps_family_name(GT_STEPS_PROFILER_STEP), "ProfilerStep");
	ck_assert_str_eq(gt_steps_family_name(GT_STEPS_STEP), "step");
	ck_assert_str_eq(gt_steps_family_name(GT_STEPS_TRAIN_STEP), "train_step");
	ck_assert_str_eq(gt_steps_family_name(GT_STEPS_ITERATION), "iteration");
	ck_assert_str_eq(gt_steps_family_name(GT_STEPS_FAMILY_MAX), "none");
}
END_TEST

/* ------------------------------------------------------------------------------------ */
/* Traces written here                                                                   */

#define T0 1000000000ull

struct ranges {
	struct gt_writer *w;
	char path[128];
	uint32_t next_id;
	char names[32][32];
};

static void ranges_open(struct ranges *rg, const char *name)
{
	struct gt_trace_info info = {.clock_id = GT_CLOCK_MONOTONIC, .tool_version = "test"};

	memset(rg, 0, sizeof(*rg));
	snprintf(rg->path, sizeof(rg->path), "%s/%s.gtrace", dir, name);
	ck_assert_int_eq(gt_writer_open(rg->path, &info, NULL, &rg->w), 0);
}

/* The string id of text (written on first use). */
static uint32_t id_of(struct ranges *rg, const char *text)
{
	for (uint32_t i = 0; i < rg->next_id; i++)
		if (strcmp(rg->names[i], text) == 0)
			return i + 1;
	ck_assert_uint_lt(rg->next_id, 32);
	snprintf(rg->names[rg->next_id], sizeof(rg->names[0]), "%s", text);
	ck_assert_int_eq(gt_writer_string(rg->w, 1, rg->next_id + 1, text, strlen(text)), 0);
	return ++rg->next_id;
}

static void range(struct ranges *rg, uint32_t pid, uint32_t tid, const char *text, uint64_t s,
                  uint64_t e, unsigned kind)
{
	struct gt_rec_nvtx n;

	memset(&n, 0, sizeof(n));
	n.hdr.type = GT_REC_NVTX;
	n.hdr.size = sizeof(n);
	n.hdr.pid = pid;
	n.start_ns = T0 + s;
	n.end_ns = T0 + e;
	n.tid = n.end_tid = tid;
	n.message_id = id_of(rg, text);
	n.kind = kind;
	ck_assert_int_eq(gt_writer_write(rg->w, &n.hdr), 0);
}

static struct gt_steps *scan(struct ranges *rg, const char *name, struct gt_reader **rp)
{
	struct gt_steps *s = NULL;
	const char *err = NULL;

	ck_assert_int_eq(gt_writer_close(rg->w), 0);
	ck_assert_int_eq(gt_reader_open(rg->path, rp, &err), 0);
	ck_assert_int_eq(gt_steps_scan(*rp, name, &s), 0);
	return s;
}

static void check_steps(const struct gt_steps *s, uint32_t pid, size_t want_n,
                        const int64_t *numbers, const uint64_t *starts)
{
	size_t n = 99;
	const struct gt_step *st = gt_steps_of(s, pid, &n);

	ck_assert_uint_eq(n, want_n);
	for (size_t i = 0; i < n; i++) {
		ck_assert_uint_eq(st[i].pid, pid);
		ck_assert_int_eq(st[i].number, numbers[i]);
		ck_assert_uint_eq(st[i].start_ns, T0 + starts[i]);
	}
}

/* ProfilerStep#N wins over step; numbers kept, or replaced when they restart. */
START_TEST(test_family_and_numbers)
{
	struct ranges rg;
	struct gt_reader *r;
	struct gt_steps *s;
	static const int64_t own[] = {5, 6, 7}, seq[] = {0, 1};
	static const uint64_t own_t[] = {0, 100, 200}, seq_t[] = {0, 100};
	const struct gt_step *st;
	uint32_t pid;
	size_t n;

	ranges_open(&rg, "family");
	/* pid 10: ProfilerStep#5..7 written at their ends, the last first */
	range(&rg, 10, 10, "ProfilerStep#7", 200, 290, GT_NVTX_PUSH_POP);
	range(&rg, 10, 10, "forward", 10, 50, GT_NVTX_PUSH_POP);
	range(&rg, 10, 10, "ProfilerStep#5", 0, 90, GT_NVTX_PUSH_POP);
	range(&rg, 10, 10, "ProfilerStep#6", 100, 190, GT_NVTX_PUSH_POP);
	/* pid 11: the numbers restart: numbered 0, 1 by start */
	range(&rg, 11, 11, "ProfilerStep#3", 100, 190, GT_NVTX_PUSH_POP);
	range(&rg, 11, 11, "ProfilerStep#3", 0, 90, GT_NVTX_PUSH_POP);
	/* pid 12: only "step": a family after ProfilerStep, so not steps in this trace */
	range(&rg, 12, 12, "step", 0, 90, GT_NVTX_PUSH_POP);
	/* a mark named like a step is never one */
	range(&rg, 10, 10, "ProfilerStep#9", 300, 300, GT_NVTX_MARK);
	s = scan(&rg, NULL, &r);
	ck_assert_int_eq(gt_steps_family(s), GT_STEPS_PROFILER_STEP);
	ck_assert_uint_eq(gt_steps_count(s), 5);
	ck_assert_uint_eq(gt_steps_processes(s), 2);
	check_steps(s, 10, 3, own, own_t);
	check_steps(s, 11, 2, seq, seq_t);
	ck_assert_ptr_null(gt_steps_of(s, 12, &n));
	ck_assert_uint_eq(n, 0);
	st = gt_steps_at(s, 1, &pid, &n);
	ck_assert_uint_eq(pid, 11);
	ck_assert_uint_eq(n, 2);
	ck_assert_ptr_nonnull(st);
	ck_assert_ptr_null(gt_steps_at(s, 2, &pid, &n));
	/* lookups as an exporter meets the ranges */
	st = gt_steps_find(s, 10, id_of(&rg, "ProfilerStep#6"), T0 + 100, T0 + 190);
	ck_assert_ptr_nonnull(st);
	ck_assert_int_eq(st->number, 6);
	ck_assert_ptr_null(gt_steps_find(s, 10, id_of(&rg, "ProfilerStep#6"), T0 + 100, T0 + 191));
	ck_assert_ptr_null(gt_steps_find(s, 10, id_of(&rg, "forward"), T0 + 10, T0 + 50));
	ck_assert_ptr_null(gt_steps_find(s, 12, id_of(&rg, "step"), T0, T0 + 90));
	ck_assert_ptr_null(gt_steps_find(s, 10, id_of(&rg, "ProfilerStep#9"), T0 + 300, T0 + 300));
	st = gt_steps_find(s, 11, id_of(&rg, "ProfilerStep#3"), T0 + 100, T0 + 190);
	ck_assert_ptr_nonnull(st);
	ck_assert_int_eq(st->number, 1);
	gt_steps_free(s);
	gt_reader_close(r);
}
END_TEST

/* Unnumbered steps, start/end ranges across threads, nested ones; and a given name. */
START_TEST(test_unnumbered_and_named)
{
	struct ranges rg;
	struct gt_reader *r;
	struct gt_steps *s;
	static const int64_t seq4[] = {0, 1, 2, 3}, named[] = {0, 1, 2};
	static const uint64_t t4[] = {0, 10, 100, 200}, tn[] = {20, 120, 220};

	ranges_open(&rg, "unnumbered");
	range(&rg, 20, 21, "Iteration", 200, 290, GT_NVTX_START_END);
	range(&rg, 20, 20, "iteration", 100, 190, GT_NVTX_PUSH_POP);
	range(&rg, 20, 20, "ITERATION", 10, 20, GT_NVTX_PUSH_POP); /* nested in the next */
	range(&rg, 20, 20, "iteration", 0, 90, GT_NVTX_PUSH_POP);
	range(&rg, 20, 20, "fwd 1", 120, 150, GT_NVTX_PUSH_POP);
	range(&rg, 20, 20, "fwd 0", 20, 50, GT_NVTX_PUSH_POP);
	range(&rg, 20, 20, "fwd 2", 220, 250, GT_NVTX_PUSH_POP);
	s = scan(&rg, NULL, &r);
	ck_assert_int_eq(gt_steps_family(s), GT_STEPS_ITERATION);
	check_steps(s, 20, 4, seq4, t4);
	gt_steps_free(s);
	/* the same trace with --step fwd: the numbers the names carry */
	ck_assert_int_eq(gt_steps_scan(r, "fwd", &s), 0);
	ck_assert_int_eq(gt_steps_family(s), GT_STEPS_NAMED);
	check_steps(s, 20, 3, named, tn);
	gt_steps_free(s);
	/* a name nothing has */
	ck_assert_int_eq(gt_steps_scan(r, "nothing", &s), 0);
	ck_assert_int_eq(gt_steps_family(s), GT_STEPS_NONE);
	ck_assert_uint_eq(gt_steps_count(s), 0);
	ck_assert_uint_eq(gt_steps_processes(s), 0);
	ck_assert_ptr_null(gt_steps_find(s, 20, id_of(&rg, "fwd 1"), T0 + 120, T0 + 150));
	gt_steps_free(s);
	gt_reader_close(r);
}
END_TEST

/* Fed by hand, a record at a time, without a reader pass. */
START_TEST(test_feed)
{
	struct ranges rg;
	struct gt_reader *r;
	struct gt_steps *s;
	const union gt_record *rec;
	const char *err = NULL;
	int ret;

	ranges_open(&rg, "feed");
	range(&rg, 30, 30, "train_step", 0, 10, GT_NVTX_PUSH_POP);
	range(&rg, 30, 30, "train_step", 20, 30, GT_NVTX_PUSH_POP);
	ck_assert_int_eq(gt_writer_close(rg.w), 0);
	ck_assert_int_eq(gt_reader_open(rg.path, &r, &err), 0);
	ck_assert_int_eq(gt_steps_new(NULL, &s), 0);
	while ((ret = gt_reader_next(r, &rec)) > 0)
		ck_assert_int_eq(gt_steps_feed(s, r, rec), 0);
	ck_assert_int_eq(ret, 0);
	ck_assert_uint_eq(gt_steps_count(s), 0); /* not finished yet */
	ck_assert_int_eq(gt_steps_finish(s), 0);
	ck_assert_int_eq(gt_steps_finish(s), 0); /* twice is harmless */
	ck_assert_int_eq(gt_steps_family(s), GT_STEPS_TRAIN_STEP);
	ck_assert_uint_eq(gt_steps_count(s), 2);
	gt_steps_free(s);
	gt_steps_free(NULL);
	gt_reader_close(r);
}
END_TEST

/* ------------------------------------------------------------------------------------ */
/* The traces recorded on an H200                                                        */

static struct gt_reader *open_data(const char *file)
{
	char path[4096];
	struct gt_reader *r;
	const char *err = NULL;

	ck_assert_msg(data_dir != NULL, "pass the tests/data directory as the argument");
	snprintf(path, sizeof(path), "%s/%s", data_dir, file);
	ck_assert_msg(gt_reader_open(path, &r, &err) == 0, "%s: %s", path, err);
	return r;
}

/* Every step of the scan is the NVTX range it says, read here apart from steps.c: for
 * ProfilerStep#N ranges, N; for "step" ranges, their order. */
static void check_against_trace(struct gt_reader *r, const struct gt_steps *s, const char *prefix)
{
	const union gt_record *rec;
	size_t seen = 0;
	int ret;

	ck_assert_int_eq(gt_reader_rewind(r), 0);
	while ((ret = gt_reader_next(r, &rec)) > 0) {
		const struct gt_step *st, *all;
		size_t len, n;
		const char *text;

		if (rec->hdr.type != GT_REC_NVTX || rec->nvtx.kind == GT_NVTX_MARK)
			continue;
		text = gt_reader_string(r, rec->nvtx.message_id, &len);
		if (!text || len < strlen(prefix) || memcmp(text, prefix, strlen(prefix)) != 0 ||
		    (len > strlen(prefix) && text[strlen(prefix)] != '#'))
			continue;
		st = gt_steps_find(s, rec->hdr.pid, rec->nvtx.message_id, rec->nvtx.start_ns,
		                   rec->nvtx.end_ns);
		ck_assert_msg(st != NULL, "no step for %.*s of pid %u", (int)len, text,
		              rec->hdr.pid);
		ck_assert_uint_eq(st->tid, rec->nvtx.tid);
		all = gt_steps_of(s, rec->hdr.pid, &n);
		if (len > strlen(prefix))
			ck_assert_int_eq(st->number, atoll(text + strlen(prefix) + 1));
		else
			ck_assert_int_eq(st->number, (int64_t)(st - all));
		seen++;
	}
	ck_assert_int_eq(ret, 0);
	ck_assert_uint_eq(seen, gt_steps_count(s));
}

START_TEST(test_real_ddp)
{
	struct gt_reader *r = open_data("ddp-2rank.gtrace");
	struct gt_steps *s;
	size_t n;
	uint32_t pid;

	ck_assert_int_eq(gt_steps_scan(r, NULL, &s), 0);
	ck_assert_int_eq(gt_steps_family(s), GT_STEPS_PROFILER_STEP);
	/* rank 0 is pid 572, rank 1 pid 573; the launcher (548) has none */
	ck_assert_uint_eq(gt_steps_count(s), 24);
	ck_assert_uint_eq(gt_steps_processes(s), 2);
	for (size_t i = 0; i < 2; i++) {
		const struct gt_step *st = gt_steps_at(s, i, &pid, &n);

		ck_assert_uint_eq(pid, 572 + i);
		ck_assert_uint_eq(n, 12);
		for (size_t k = 0; k < n; k++) {
			ck_assert_int_eq(st[k].number, (int64_t)k);
			ck_assert_uint_gt(st[k].end_ns, st[k].start_ns);
			if (k)
				ck_assert_uint_ge(st[k].start_ns, st[k - 1].end_ns);
		}
	}
	check_against_trace(r, s, "ProfilerStep");
	/* forward ranges are steps only when asked */
	gt_steps_free(s);
	ck_assert_int_eq(gt_steps_scan(r, "forward", &s), 0);
	ck_assert_uint_eq(gt_steps_count(s), 24);
	gt_steps_free(s);

	gt_reader_close(r);
}
END_TEST

START_TEST(test_real_step_ranges)
{
	struct gt_reader *r = open_data("pytorch-train.gtrace");
	struct gt_steps *s;

	/* 20 ranges named "step"; the 10 "graph-step" ranges are not steps */
	ck_assert_int_eq(gt_steps_scan(r, NULL, &s), 0);
	ck_assert_int_eq(gt_steps_family(s), GT_STEPS_STEP);
	ck_assert_uint_eq(gt_steps_count(s), 20);
	check_against_trace(r, s, "step");
	gt_steps_free(s);
	gt_reader_close(r);
}
END_TEST

static void setup(void)
{
	strcpy(dir, "/tmp/gt-steps-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
}

static Suite *steps_suite(void)
{
	Suite *s = suite_create("steps");
	TCase *tc = tcase_create("steps");

	tcase_add_unchecked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, test_match, 0, (int)(sizeof(matches) / sizeof(matches[0])));
	tcase_add_test(tc, test_match_embedded_nul);
	tcase_add_test(tc, test_family_and_numbers);
	tcase_add_test(tc, test_unnumbered_and_named);
	tcase_add_test(tc, test_feed);
	tcase_add_test(tc, test_real_ddp);
	tcase_add_test(tc, test_real_step_ranges);
	suite_add_tcase(s, tc);
	return s;
}

/* argv[1]: tests/data, where the traces recorded on a GPU live. */
int main(int argc, char **argv)
{
	SRunner *sr;
	int failed;

	data_dir = argc > 1 ? argv[1] : NULL;
	sr = srunner_create(steps_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
