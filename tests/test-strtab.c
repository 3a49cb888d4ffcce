/* Check suite for src/base/strtab.c: interning, dense ids, lookups, growth. Runs as a unit test. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strtab.h"

START_TEST(test_intern_dense_ids)
{
	struct gt_strtab *t;
	uint32_t id;
	size_t len;

	ck_assert_int_eq(gt_strtab_new(&t), 0);
	ck_assert_uint_eq(gt_strtab_count(t), 0);
	ck_assert_int_eq(gt_strtab_intern(t, "alpha", 5, &id), 1);
	ck_assert_uint_eq(id, 1);
	ck_assert_int_eq(gt_strtab_intern(t, "beta", 4, &id), 1);
	ck_assert_uint_eq(id, 2);
	ck_assert_int_eq(gt_strtab_intern(t, "alpha", 5, &id), 0);
	ck_assert_uint_eq(id, 1);
	/* a prefix is a different string */
	ck_assert_int_eq(gt_strtab_intern(t, "alph", 4, &id), 1);
	ck_assert_uint_eq(id, 3);
	ck_assert_uint_eq(gt_strtab_count(t), 3);
	ck_assert_str_eq(gt_strtab_get(t, 2, &len), "beta");
	ck_assert_uint_eq(len, 4);
	ck_assert_str_eq(gt_strtab_get(t, 3, NULL), "alph");
	ck_assert_ptr_null(gt_strtab_get(t, 0, NULL));
	ck_assert_ptr_null(gt_strtab_get(t, 4, NULL));
	ck_assert_ptr_null(gt_strtab_get(t, UINT32_MAX, NULL));
	gt_strtab_free(t);
}
END_TEST

START_TEST(test_empty_and_embedded_nul)
{
	struct gt_strtab *t;
	uint32_t id, id2;
	size_t len = 99;
	const char nul[] = {'a', '\0', 'b'};
	const char *s;

	ck_assert_int_eq(gt_strtab_new(&t), 0);
	ck_assert_int_eq(gt_strtab_intern(t, "", 0, &id), 1);
	ck_assert_uint_eq(id, 1);
	s = gt_strtab_get(t, 1, &len);
	ck_assert_ptr_nonnull(s);
	ck_assert_uint_eq(len, 0);
	ck_assert_int_eq(s[0], '\0');
	ck_assert_int_eq(gt_strtab_intern(t, nul, 3, &id), 1);
	ck_assert_uint_eq(id, 2);
	ck_assert_int_eq(gt_strtab_intern(t, nul, 1, &id2), 1); /* "a" */
	ck_assert_uint_eq(id2, 3);
	s = gt_strtab_get(t, 2, &len);
	ck_assert_uint_eq(len, 3);
	ck_assert_int_eq(memcmp(s, nul, 3), 0);
	ck_assert_int_eq(s[3], '\0');
	/* the caller's buffer is copied, not borrowed */
	{
		char buf[8] = "mutable";

		ck_assert_int_eq(gt_strtab_intern(t, buf, 7, &id), 1);
		memset(buf, 'x', 7);
		ck_assert_str_eq(gt_strtab_get(t, id, NULL), "mutable");
	}
	gt_strtab_free(t);
}
END_TEST

START_TEST(test_growth_many)
{
	enum {
		N = 200000
	};
	struct gt_strtab *t;
	char buf[64];
	uint32_t id;

	ck_assert_int_eq(gt_strtab_new(&t), 0);
	for (unsigned i = 0; i < N; i++) {
		int n = snprintf(buf, sizeof(buf), "_Z6kernelILi%uEEvPf", i);

		ck_assert_int_eq(gt_strtab_intern(t, buf, (size_t)n, &id), 1);
		ck_assert_uint_eq(id, i + 1);
	}
	ck_assert_uint_eq(gt_strtab_count(t), N);
	/* every string still maps to its id after all the rehashing, and back */
	for (unsigned i = 0; i < N; i++) {
		int n = snprintf(buf, sizeof(buf), "_Z6kernelILi%uEEvPf", i);
		size_t len;

		ck_assert_int_eq(gt_strtab_intern(t, buf, (size_t)n, &id), 0);
		ck_assert_uint_eq(id, i + 1);
		ck_assert_str_eq(gt_strtab_get(t, i + 1, &len), buf);
		ck_assert_uint_eq(len, (size_t)n);
	}
	ck_assert_uint_eq(gt_strtab_count(t), N);
	gt_strtab_free(t);
}
END_TEST

START_TEST(test_long_string)
{
	struct gt_strtab *t;
	size_t n = 1u << 20, len;
	char *big = malloc(n);
	uint32_t id;

	ck_assert_ptr_nonnull(big);
	for (size_t i = 0; i < n; i++)
		big[i] = (char)('a' + i % 26);
	ck_assert_int_eq(gt_strtab_new(&t), 0);
	ck_assert_int_eq(gt_strtab_intern(t, big, n, &id), 1);
	ck_assert_int_eq(gt_strtab_intern(t, big, n, &id), 0);
	ck_assert_uint_eq(id, 1);
	ck_assert_int_eq(memcmp(gt_strtab_get(t, 1, &len), big, n), 0);
	ck_assert_uint_eq(len, n);
	gt_strtab_free(t);
	free(big);
}
END_TEST

START_TEST(test_free_null)
{
	gt_strtab_free(NULL);
	ck_assert_uint_eq(gt_strtab_count(NULL), 0);
	ck_assert_ptr_null(gt_strtab_get(NULL, 1, NULL));
}
END_TEST

/* The table by string id: grows by doubling from its first size to hold the id asked, new
 * entries zero, what was set kept; an id already inside changes nothing. */
START_TEST(test_dense_reserve)
{
	uint32_t *tab = NULL;
	size_t cap = 0;

	ck_assert_int_eq(gt_strtab_dense_reserve(&tab, &cap, 3, 4), 0);
	ck_assert_uint_eq(cap, 4);
	for (size_t i = 0; i < cap; i++)
		ck_assert_uint_eq(tab[i], 0);
	tab[3] = 7;
	ck_assert_int_eq(gt_strtab_dense_reserve(&tab, &cap, 0, 4), 0);
	ck_assert_uint_eq(cap, 4);
	ck_assert_int_eq(gt_strtab_dense_reserve(&tab, &cap, 4, 4), 0);
	ck_assert_uint_eq(cap, 8);
	ck_assert_int_eq(gt_strtab_dense_reserve(&tab, &cap, 100, 4), 0);
	ck_assert_uint_eq(cap, 128);
	ck_assert_uint_eq(tab[3], 7);
	for (size_t i = 4; i < cap; i++)
		ck_assert_uint_eq(tab[i], 0);
	free(tab);
}
END_TEST

static Suite *strtab_suite(void)
{
	Suite *s = suite_create("strtab");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_intern_dense_ids);
	tcase_add_test(tc, test_empty_and_embedded_nul);
	tcase_add_test(tc, test_growth_many);
	tcase_add_test(tc, test_long_string);
	tcase_add_test(tc, test_free_null);
	tcase_add_test(tc, test_dense_reserve);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(strtab_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
