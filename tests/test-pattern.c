/* Check suite for src/settings/pattern.c: output-name patterns. Runs as a unit test. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pattern.h"

/* Expand with a generous buffer and fail the test on error. */
static const char *expand(const char *pattern, pid_t pid, unsigned seq)
{
	static char out[512];
	int n = gt_pattern_expand(pattern, pid, seq, out, sizeof(out), NULL);

	ck_assert_msg(n >= 0, "'%s' failed with %d", pattern, n);
	ck_assert_uint_eq((size_t)n, strlen(out));
	return out;
}

START_TEST(test_literal)
{
	ck_assert_str_eq(expand("trace.gtrace", 1, 1), "trace.gtrace");
	ck_assert_str_eq(expand("", 1, 1), "");
	ck_assert_str_eq(expand("dir/sub dir/x", 1, 1), "dir/sub dir/x");
}
END_TEST

START_TEST(test_pid_seq_percent)
{
	ck_assert_str_eq(expand("gputrace-%p.gtrace", 4242, 0), "gputrace-4242.gtrace");
	ck_assert_str_eq(expand("%p", 0, 0), "0");
	ck_assert_str_eq(expand("%p", 2147483647, 0), "2147483647");
	ck_assert_str_eq(expand("report%n", 1, 7), "report7");
	ck_assert_str_eq(expand("r%n-%n", 1, 4294967295u), "r4294967295-4294967295");
	ck_assert_str_eq(expand("100%%", 1, 1), "100%");
	ck_assert_str_eq(expand("%%p%%n", 9, 9), "%p%n");
	ck_assert_str_eq(expand("%p%p", 12, 0), "1212");
}
END_TEST

START_TEST(test_host)
{
	char host[256] = "";
	char want[300];

	ck_assert_int_eq(gethostname(host, sizeof(host)), 0);
	snprintf(want, sizeof(want), "t-%s-1", host);
	ck_assert_str_eq(expand("t-%h-%p", 1, 0), want);
}
END_TEST

START_TEST(test_env)
{
	ck_assert_int_eq(setenv("GT_TEST_RANK", "3", 1), 0);
	ck_assert_int_eq(setenv("GT_TEST_RANKS", "long", 1), 0);
	ck_assert_int_eq(setenv("GT_TEST_EMPTY", "", 1), 0);
	ck_assert_str_eq(expand("rank%q{GT_TEST_RANK}.gtrace", 1, 0), "rank3.gtrace");
	/* A name that is a prefix of another variable's name must not match it. */
	ck_assert_str_eq(expand("%q{GT_TEST_RANKS}-%q{GT_TEST_RANK}", 1, 0), "long-3");
	ck_assert_str_eq(expand("[%q{GT_TEST_EMPTY}]", 1, 0), "[]");
	/* Braces after the variable are literal. */
	ck_assert_str_eq(expand("%q{GT_TEST_RANK}}", 1, 0), "3}");
}
END_TEST

/* Every malformed pattern: the error and the offset of the offending '%'. */
START_TEST(test_errors)
{
	static const struct {
		const char *pattern;
		int err;
		size_t pos;
	} cases[] = {
	        {"%", -EINVAL, 0},
	        {"abc%", -EINVAL, 3},
	        {"a%x", -EINVAL, 1},
	        {"%P", -EINVAL, 0},
	        {"ok-%p-%q", -EINVAL, 6},
	        {"%qRANK", -EINVAL, 0},
	        {"x%q{RANK", -EINVAL, 1},
	        {"%q{}", -EINVAL, 0},
	        {"r%q{GT_TEST_SURELY_UNSET_VAR}", -ENOENT, 1},
	};
	char out[64];

	unsetenv("GT_TEST_SURELY_UNSET_VAR");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t pos = 999;

		memset(out, 'z', sizeof(out));
		ck_assert_int_eq(gt_pattern_expand(cases[i].pattern, 1, 1, out, sizeof(out), &pos),
		                 cases[i].err);
		ck_assert_uint_eq(pos, cases[i].pos);
		ck_assert_str_eq(out, "");
		/* errpos may be NULL. */
		ck_assert_int_eq(gt_pattern_expand(cases[i].pattern, 1, 1, out, sizeof(out), NULL),
		                 cases[i].err);
	}
}
END_TEST

START_TEST(test_too_long)
{
	char out[8];
	size_t pos = 999;

	/* Exactly fits: 7 bytes and the NUL. */
	ck_assert_int_eq(gt_pattern_expand("abcdefg", 1, 1, out, sizeof(out), &pos), 7);
	ck_assert_str_eq(out, "abcdefg");
	/* One byte more: the 8th byte ('h', offset 7) is the one that does not fit. */
	ck_assert_int_eq(gt_pattern_expand("abcdefgh", 1, 1, out, sizeof(out), &pos),
	                 -ENAMETOOLONG);
	ck_assert_uint_eq(pos, 7);
	ck_assert_str_eq(out, "");
	/* A %p that crosses the end is blamed at its '%'. */
	ck_assert_int_eq(gt_pattern_expand("abc-%p.x", 123456, 1, out, sizeof(out), &pos),
	                 -ENAMETOOLONG);
	ck_assert_uint_eq(pos, 4);
	/* The buffer is never written past its end. */
	{
		char guarded[12];

		memset(guarded, '#', sizeof(guarded));
		ck_assert_int_eq(gt_pattern_expand("0123456789", 1, 1, guarded, 4, NULL),
		                 -ENAMETOOLONG);
		for (size_t i = 4; i < sizeof(guarded); i++)
			ck_assert_int_eq(guarded[i], '#');
	}
	ck_assert_int_eq(gt_pattern_expand("", 1, 1, out, 0, &pos), -ENAMETOOLONG);
	ck_assert_int_eq(gt_pattern_expand("", 1, 1, out, 1, &pos), 0);
	ck_assert_str_eq(out, "");
}
END_TEST

START_TEST(test_has_seq)
{
	ck_assert_int_eq(gt_pattern_has_seq("report%n"), 1);
	ck_assert_int_eq(gt_pattern_has_seq("%p-%n.gtrace"), 1);
	ck_assert_int_eq(gt_pattern_has_seq("gputrace-%p.gtrace"), 0);
	ck_assert_int_eq(gt_pattern_has_seq("100%%n"), 0);
	ck_assert_int_eq(gt_pattern_has_seq("100%%%n"), 1);
	ck_assert_int_eq(gt_pattern_has_seq("%q{n}"), 0);
	ck_assert_int_eq(gt_pattern_has_seq("%"), 0);
	ck_assert_int_eq(gt_pattern_has_seq(""), 0);
}
END_TEST

static Suite *pattern_suite(void)
{
	Suite *s = suite_create("pattern");
	TCase *tc = tcase_create("expand");

	tcase_add_test(tc, test_literal);
	tcase_add_test(tc, test_pid_seq_percent);
	tcase_add_test(tc, test_host);
	tcase_add_test(tc, test_env);
	tcase_add_test(tc, test_errors);
	tcase_add_test(tc, test_too_long);
	tcase_add_test(tc, test_has_seq);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(pattern_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
