/* Check suite for the rank table (exporters/model/ranks.c): which kernel names are NCCL's, and on
 * the two-rank job recorded on an H200 (tests/data/ddp-2rank.gtrace), the ranks, local ranks
 * and world sizes its PROCESS records hold and the backend its kernels show. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gputrace/trace.h"
#include "ranks.h"

static const char *data_dir; /* argv[1] */

/* ------------------------------------------------------------------------------------ */
/* Ranks                                                                                 */

START_TEST(test_nccl_names)
{
	static const struct {
		const char *name;
		bool nccl;
	} names[] = {
	        {"ncclKernel_AllReduce_RING_LL_Sum_float", true},
	        {"ncclDevKernel_AllReduce_Sum_f32_RING_LL", true},
	        {"_Z39ncclDevKernel_AllReduce_Sum_f32_RING_LL24ncclDevKernelArgsStorageILm4096EE",
	         true},
	        {"_ZN4nccl6kernel3fooEv", false},
	        {"void ncclKernel<float>(int)", true},
	        {"ampere_sgemm_128x64_nn", false},
	        {"_Z6kernelPf", false},
	        {"_Z4nccl", true},
	        {"ncc", false},
	        {"", false},
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		ck_assert_msg(gt_ranks_nccl_kernel(names[i].name, strlen(names[i].name)) ==
		                      names[i].nccl,
		              "%s", names[i].name);
	ck_assert(!gt_ranks_nccl_kernel(NULL, 0));
}
END_TEST

START_TEST(test_real_ddp)
{
	struct gt_reader *r;
	struct gt_ranks *rk;
	struct gt_rank_info info;
	const union gt_record *rec;
	const char *err = NULL;
	char path[4096];
	int32_t ranks[4];
	size_t n;
	int ret;

	ck_assert_msg(data_dir != NULL, "pass the tests/data directory as the argument");
	snprintf(path, sizeof(path), "%s/ddp-2rank.gtrace", data_dir);
	ck_assert_msg(gt_reader_open(path, &r, &err) == 0, "%s: %s", path, err);
	/* ranks: as the PROCESS records say; gloo ran no NCCL kernel */
	ck_assert_int_eq(gt_ranks_new(&rk), 0);
	while ((ret = gt_reader_next(r, &rec)) > 0)
		ck_assert_int_eq(gt_ranks_feed(rk, r, rec), 0);
	ck_assert_int_eq(ret, 0);
	ck_assert_uint_eq(gt_ranks_nprocs(rk), 3);
	ck_assert_uint_eq(gt_ranks_list(rk, ranks, 4), 2);
	ck_assert_int_eq(ranks[0], 0);
	ck_assert_int_eq(ranks[1], 1);
	ck_assert_uint_eq(gt_ranks_list(rk, ranks, 1), 2);
	ck_assert_int_eq(gt_ranks_proc(rk, 548)->rank, -1);
	ck_assert_int_eq(gt_ranks_proc(rk, 572)->rank, 0);
	ck_assert_int_eq(gt_ranks_proc(rk, 573)->local_rank, 1);
	ck_assert_ptr_null(gt_ranks_proc(rk, 1));
	for (int32_t k = 0; k < 2; k++) {
		ck_assert_int_eq(gt_ranks_info(rk, k, &info), 0);
		ck_assert_int_eq(info.rank, k);
		ck_assert_int_eq(info.local_rank, k);
		ck_assert_int_eq(info.world_size, 2);
		ck_assert_ptr_null(info.backend);
		ck_assert_uint_eq(info.processes, 1);
	}
	ck_assert_int_eq(gt_ranks_info(rk, 2, &info), -ENOENT);
	ck_assert_int_eq(gt_ranks_info(rk, -1, &info), -ENOENT);
	/* every record but the strings belongs to one of the three */
	n = 0;
	for (size_t i = 0; i < gt_ranks_nprocs(rk); i++)
		n += gt_ranks_proc_at(rk, i)->records;
	ck_assert_uint_eq(n, 4776 - 60);
	ck_assert_ptr_null(gt_ranks_proc_at(rk, 3));
	gt_ranks_free(rk);
	gt_reader_close(r);
}
END_TEST

static Suite *ranks_suite(void)
{
	Suite *s = suite_create("ranks");
	TCase *tc = tcase_create("ranks");

	tcase_add_test(tc, test_nccl_names);
	tcase_add_test(tc, test_real_ddp);
	suite_add_tcase(s, tc);
	return s;
}

/* argv[1]: tests/data, where the traces recorded on a GPU live. */
int main(int argc, char **argv)
{
	SRunner *sr;
	int failed;

	data_dir = argc > 1 ? argv[1] : NULL;
	sr = srunner_create(ranks_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
