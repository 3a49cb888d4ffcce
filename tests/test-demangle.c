/* Check suite for exporters/common/demangle.c: C++ kernel names demangled into a caller's buffer,
 * pass-through for plain and broken names, truncation. Runs as a unit test. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "demangle.h"

/* Without libiberty every name passes through unchanged; the tests say so instead of
 * asserting demangled text. */
#define NEED_DEMANGLER()                                                                           \
	do {                                                                                       \
		if (!gt_demangle_available()) {                                                    \
			const char *nd_m_ = "_Z6kernelPfi";                                        \
			char nd_b_[64];                                                            \
			ck_assert_ptr_eq(gt_demangle(nd_m_, nd_b_, sizeof(nd_b_)), nd_m_);         \
			return;                                                                    \
		}                                                                                  \
	} while (0)

START_TEST(test_simple_function)
{
	char buf[GT_DEMANGLE_BUF_BYTES];

	NEED_DEMANGLER();
	ck_assert_str_eq(gt_demangle("_Z6kernelPfi", buf, sizeof(buf)), "kernel(float*, int)");
	ck_assert_str_eq(gt_demangle("_Z4gemmIfEvPT_i", buf, sizeof(buf)),
	                 "void gemm<float>(float*, int)");
}
END_TEST

START_TEST(test_pytorch_kernel)
{
	char buf[GT_DEMANGLE_BUF_BYTES];
	const char *m = "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEESt5"
	                "arrayIPcLm1EEEEviT0_T1_";
	const char *out;

	NEED_DEMANGLER();
	out = gt_demangle(m, buf, sizeof(buf));
	ck_assert_ptr_eq(out, buf);
	ck_assert_str_eq(out, "void at::native::vectorized_elementwise_kernel<4, "
	                      "at::native::FillFunctor<float>, std::array<char*, 1ul> >(int, "
	                      "at::native::FillFunctor<float>, std::array<char*, 1ul>)");
}
END_TEST

START_TEST(test_plain_names_pass_through)
{
	char buf[64];
	const char *plain = "vectorAdd";
	const char *type_like = "i"; /* a type encoding, not a symbol */
	const char *already = "void foo<int>(int*)";

	memset(buf, 'x', sizeof(buf));
	ck_assert_ptr_eq(gt_demangle(plain, buf, sizeof(buf)), plain);
	ck_assert_ptr_eq(gt_demangle(type_like, buf, sizeof(buf)), type_like);
	ck_assert_ptr_eq(gt_demangle(already, buf, sizeof(buf)), already);
	/* the buffer is untouched when the name passes through */
	ck_assert_int_eq(buf[0], 'x');
	ck_assert_str_eq(gt_demangle(NULL, buf, sizeof(buf)), "");
}
END_TEST

START_TEST(test_broken_names_pass_through)
{
	char buf[64];
	const char *bad = "_Z";
	const char *bad2 = "_Zxyz";
	const char *cut = "_ZN2at6native";

	ck_assert_ptr_eq(gt_demangle(bad, buf, sizeof(buf)), bad);
	ck_assert_ptr_eq(gt_demangle(bad2, buf, sizeof(buf)), bad2);
	ck_assert_ptr_eq(gt_demangle(cut, buf, sizeof(buf)), cut);
}
END_TEST

START_TEST(test_no_buffer)
{
	const char *m = "_Z6kernelPfi";
	char buf[8];

	ck_assert_ptr_eq(gt_demangle(m, NULL, 100), m);
	ck_assert_ptr_eq(gt_demangle(m, buf, 0), m);
}
END_TEST

START_TEST(test_base_names)
{
	char buf[GT_DEMANGLE_BUF_BYTES], small[8], mangled[4096];
	char *p;

	/* without a demangler a name is its own base only when it is not C++ */
	ck_assert_str_eq(gt_demangle_base("my_kernel", buf, sizeof(buf)), "my_kernel");
	NEED_DEMANGLER();
	ck_assert_str_eq(gt_demangle_base("_Z6kernelPfi", buf, sizeof(buf)), "kernel");
	ck_assert_str_eq(gt_demangle_base("_Z4gemmIfEvPT_i", buf, sizeof(buf)), "gemm");
	/* scopes go: at::native::vectorized_elementwise_kernel<4, ...>(int, ...) */
	ck_assert_str_eq(gt_demangle_base("_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_"
	                                  "11FillFunctorIfEENS_6detail5ArrayIPcLi1EEEEEviT0_T1_",
	                                  buf, sizeof(buf)),
	                 "vectorized_elementwise_kernel");
	/* a name whose demangled form is far longer than the buffer: mlir::detail::k(A, A, ...)
	 * with 201 parameters of ns::AVeryLongTypeName<int> (5,643 characters): the base comes
	 * from the whole */
	p = stpcpy(mangled, "_ZN4mlir6detail1kEN2ns17AVeryLongTypeNameIiEE");
	for (int i = 0; i < 200; i++)
		p = stpcpy(p, "S3_");
	ck_assert_ptr_eq(gt_demangle(mangled, buf, sizeof(buf)), buf);
	ck_assert_uint_eq(strlen(buf), sizeof(buf) - 1); /* cut: ends in "..." */
	ck_assert_str_eq(buf + sizeof(buf) - 4, "...");
	ck_assert_str_eq(gt_demangle_base(mangled, buf, sizeof(buf)), "k");
	/* a base name longer than the buffer is cut and says so */
	ck_assert_str_eq(gt_demangle_base("_Z16a_long_kernel_xv", small, sizeof(small)), "a_lo...");
}
END_TEST

START_TEST(test_truncation)
{
	char buf[64];

	NEED_DEMANGLER();
	/* "kernel(float*, int)" is 19 bytes: 10 bytes hold 9 characters, the last 3 "..." */
	memset(buf, 'x', sizeof(buf));
	ck_assert_str_eq(gt_demangle("_Z6kernelPfi", buf, 10), "kernel...");
	ck_assert_int_eq(buf[10], 'x');
	/* exactly fitting: 20 bytes for 19 characters, no ellipsis */
	ck_assert_str_eq(gt_demangle("_Z6kernelPfi", buf, 20), "kernel(float*, int)");
	/* one byte short */
	ck_assert_str_eq(gt_demangle("_Z6kernelPfi", buf, 19), "kernel(float*, ...");
	/* too small for an ellipsis: plain cut */
	ck_assert_str_eq(gt_demangle("_Z6kernelPfi", buf, 3), "ke");
	ck_assert_str_eq(gt_demangle("_Z6kernelPfi", buf, 1), "");
}
END_TEST

static Suite *demangle_suite(void)
{
	Suite *s = suite_create("demangle");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_simple_function);
	tcase_add_test(tc, test_pytorch_kernel);
	tcase_add_test(tc, test_plain_names_pass_through);
	tcase_add_test(tc, test_broken_names_pass_through);
	tcase_add_test(tc, test_no_buffer);
	tcase_add_test(tc, test_truncation);
	tcase_add_test(tc, test_base_names);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(demangle_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
