/* Check suite for src/session/sysinfo.c: the driver version out of both /proc line formats. */
#include <check.h>
#include <stdlib.h>

#include "sysinfo.h"

START_TEST(test_driver_version_lines)
{
	char v[32];

	ck_assert(gt_sysinfo_parse_driver_version(
	        "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.65.06  Sun Jul 27 06:54:38 "
	        "UTC 2025",
	        v, sizeof(v)));
	ck_assert_str_eq(v, "580.65.06");
	/* the open kernel module's line, as seen on the H200 machines */
	ck_assert(gt_sysinfo_parse_driver_version("NVRM version: NVIDIA UNIX Open Kernel Module "
	                                          "for x86_64  580.159.04  Release Build  "
	                                          "(dvs-builder@U22-I3-AF03-09-1)  Sun Aug 10 2025",
	                                          v, sizeof(v)));
	ck_assert_str_eq(v, "580.159.04");
	ck_assert(!gt_sysinfo_parse_driver_version("NVRM version: no number here", v, sizeof(v)));
	ck_assert(!gt_sysinfo_parse_driver_version("", v, sizeof(v)));
	/* truncated to the buffer, still terminated */
	ck_assert(gt_sysinfo_parse_driver_version("Module 580.159.04", v, 4));
	ck_assert_str_eq(v, "580");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("sysinfo");
	TCase *tc = tcase_create("driver");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_driver_version_lines);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
