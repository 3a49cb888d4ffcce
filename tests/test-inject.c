/* Check suite for the injection library's parts that run without a GPU: GPUTRACE_* parsing
 * (collectors/config.c), the default API filter, and the library's exported symbols.
 * Runs in the test process; GT_INJECT_LIB names the built libgputrace-inject.so. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inject.h"

/* A fake environment: NAME=VALUE pairs. */
static const char *fake_env[16];

static const char *fake_get(const char *name)
{
	size_t len = strlen(name);
	int i;

	for (i = 0; fake_env[i]; i++)
		if (!strncmp(fake_env[i], name, len) && fake_env[i][len] == '=')
			return fake_env[i] + len + 1;
	return NULL;
}

static void set_env(const char *const *pairs)
{
	int i;

	memset(fake_env, 0, sizeof(fake_env));
	for (i = 0; pairs[i] && i < 15; i++)
		fake_env[i] = pairs[i];
}

START_TEST(trace_words)
{
	unsigned m = 0;

	ck_assert_int_eq(gt_inject_parse_trace("kernel,memcpy", &m), 0);
	ck_assert_uint_eq(m, GT_TRACE_KERNEL | GT_TRACE_MEMCPY);
	ck_assert_int_eq(gt_inject_parse_trace("KERNEL, api,,nvtx", &m), 0);
	ck_assert_uint_eq(m, GT_TRACE_KERNEL | GT_TRACE_API | GT_TRACE_NVTX);
	ck_assert_int_eq(gt_inject_parse_trace("all", &m), 0);
	ck_assert_uint_eq(m, 0x1ffu);
	ck_assert_int_eq(gt_inject_parse_trace("default", &m), 0);
	ck_assert_uint_eq(m, 0x0ffu);
	ck_assert_int_eq(gt_inject_parse_trace("none", &m), 0);
	ck_assert_uint_eq(m, 0);
	m = 42;
	ck_assert_int_eq(gt_inject_parse_trace("kernel,bogus", &m), -EINVAL);
	ck_assert_uint_eq(m, 42); /* untouched on failure */
	ck_assert_int_eq(gt_inject_parse_trace("", &m), -EINVAL);
	ck_assert_int_eq(gt_inject_parse_trace("kern", &m), -EINVAL);
}
END_TEST

START_TEST(byte_counts)
{
	size_t b = 0;

	ck_assert_int_eq(gt_inject_parse_bytes("100", &b), 0);
	ck_assert_uint_eq(b, 100);
	ck_assert_int_eq(gt_inject_parse_bytes("4k", &b), 0);
	ck_assert_uint_eq(b, 4096);
	ck_assert_int_eq(gt_inject_parse_bytes("64M", &b), 0);
	ck_assert_uint_eq(b, 64u << 20);
	ck_assert_int_eq(gt_inject_parse_bytes("12MiB", &b), 0);
	ck_assert_uint_eq(b, 12u << 20);
	ck_assert_int_eq(gt_inject_parse_bytes("1G", &b), 0);
	ck_assert_uint_eq(b, 1u << 30);
	ck_assert_int_eq(gt_inject_parse_bytes("5T", &b), -EINVAL);
	ck_assert_int_eq(gt_inject_parse_bytes("M", &b), -EINVAL);
	ck_assert_int_eq(gt_inject_parse_bytes("-4", &b), -EINVAL);
	ck_assert_int_eq(gt_inject_parse_bytes("12 M", &b), -EINVAL);
	ck_assert_int_eq(gt_inject_parse_bytes("99999999999999999999", &b), -ERANGE);
	ck_assert_int_eq(gt_inject_parse_bytes("17179869184G", &b), -ERANGE);
}
END_TEST

START_TEST(config_defaults)
{
	static const char *const none[] = { NULL };
	struct gt_inject_config c;
	const char *err = "untouched";

	set_env(none);
	ck_assert_int_eq(gt_inject_config_parse(&c, fake_get, &err), 0);
	ck_assert_str_eq(err, "untouched");
	ck_assert_uint_eq(c.trace, GT_TRACE_DEFAULT);
	ck_assert_uint_eq(c.api_filter, GT_API_FILTER_LAUNCH);
	ck_assert_uint_eq(c.api_source, GT_API_SOURCE_CALLBACK);
	ck_assert_uint_eq(c.ring_bytes, 0);
	ck_assert_uint_eq(c.flush_ms, 100);
	ck_assert_uint_eq(c.capture, GT_CAPTURE_NONE);
	ck_assert(!c.graph_nodes);
	ck_assert(!c.debug);
}
END_TEST

START_TEST(config_values)
{
	static const char *const env[] = {
		"GPUTRACE_TRACE=kernel,api",	     "GPUTRACE_API=all",
		"GPUTRACE_API_SOURCE=activity",	     "GPUTRACE_BUFFER_SIZE=64M",
		"GPUTRACE_FLUSH_MS=0",		     "GPUTRACE_CAPTURE_RANGE=nvtx:train step",
		"GPUTRACE_GRAPH=node",		     "GPUTRACE_DEBUG=1",
		NULL,
	};
	struct gt_inject_config c;

	set_env(env);
	ck_assert_int_eq(gt_inject_config_parse(&c, fake_get, NULL), 0);
	/* an NVTX capture range turns the NVTX collector on */
	ck_assert_uint_eq(c.trace, GT_TRACE_KERNEL | GT_TRACE_API | GT_TRACE_NVTX);
	ck_assert_uint_eq(c.api_filter, GT_API_FILTER_ALL);
	ck_assert_uint_eq(c.api_source, GT_API_SOURCE_ACTIVITY);
	ck_assert_uint_eq(c.ring_bytes, 64u << 20);
	ck_assert_uint_eq(c.flush_ms, 0);
	ck_assert_uint_eq(c.capture, GT_CAPTURE_NVTX);
	ck_assert_str_eq(c.capture_name, "train step");
	ck_assert(c.graph_nodes);
	ck_assert(c.debug);
}
END_TEST

START_TEST(config_profiler_range)
{
	static const char *const env[] = { "GPUTRACE_CAPTURE_RANGE=cudaProfilerApi",
					   "GPUTRACE_API=none", "GPUTRACE_DEBUG=0", NULL };
	struct gt_inject_config c;

	set_env(env);
	ck_assert_int_eq(gt_inject_config_parse(&c, fake_get, NULL), 0);
	ck_assert_uint_eq(c.capture, GT_CAPTURE_PROFILER_API);
	ck_assert_uint_eq(c.api_filter, GT_API_FILTER_NONE);
	ck_assert(!c.debug);
}
END_TEST

START_TEST(config_errors)
{
	static const char *const env[] = { "GPUTRACE_TRACE=kernels", "GPUTRACE_FLUSH_MS=soon",
					   "GPUTRACE_GRAPH=nodes", NULL };
	static const char *const env2[] = { "GPUTRACE_CAPTURE_RANGE=nvtx:", NULL };
	static const char *const env3[] = { "GPUTRACE_BUFFER_SIZE=lots", "GPUTRACE_API=launches",
					    NULL };
	struct gt_inject_config c;
	const char *err = NULL;

	set_env(env);
	ck_assert_int_eq(gt_inject_config_parse(&c, fake_get, &err), -EINVAL);
	/* the first problem is reported; every bad value falls back to its default */
	ck_assert_str_eq(err, "GPUTRACE_TRACE: unknown kind (use kernel,memcpy,memset,memory,api,"
			      "nvtx,sync,graph,overhead, all, default or none)");
	ck_assert_uint_eq(c.trace, GT_TRACE_DEFAULT);
	ck_assert_uint_eq(c.flush_ms, 100);
	ck_assert(!c.graph_nodes);

	set_env(env2);
	ck_assert_int_eq(gt_inject_config_parse(&c, fake_get, &err), -EINVAL);
	ck_assert_str_eq(err, "GPUTRACE_CAPTURE_RANGE: use none, cudaProfilerApi or nvtx:NAME");
	ck_assert_uint_eq(c.capture, GT_CAPTURE_NONE);

	set_env(env3);
	ck_assert_int_eq(gt_inject_config_parse(&c, fake_get, &err), -EINVAL);
	ck_assert_str_eq(err, "GPUTRACE_API: use launch, all or none");
	ck_assert_uint_eq(c.ring_bytes, 0);
	ck_assert_uint_eq(c.api_filter, GT_API_FILTER_LAUNCH);
}
END_TEST

START_TEST(launch_filter)
{
	static const char *const kept[] = {
		"cudaLaunchKernel", "cudaLaunchKernel_ptsz", "cudaLaunchCooperativeKernel",
		"cudaMemcpy", "cudaMemcpyAsync", "cudaMemcpy2DAsync_ptsz", "cudaMemsetAsync",
		"cudaMalloc", "cudaMallocAsync", "cudaMallocHost", "cudaHostAlloc", "cudaFree",
		"cudaFreeAsync", "cudaFreeHost", "cudaDeviceSynchronize", "cudaStreamSynchronize",
		"cudaEventSynchronize", "cudaStreamWaitEvent", "cudaGraphLaunch", "cuLaunchKernel",
		"cuLaunchKernelEx", "cuMemcpyHtoD_v2", "cuMemcpyAsync", "cuMemsetD8_v2",
		"cuMemAlloc_v2", "cuMemAllocAsync", "cuMemFree_v2", "cuMemFreeAsync",
		"cuCtxSynchronize", "cuStreamSynchronize", "cuEventSynchronize", "cuGraphLaunch",
	};
	static const char *const dropped[] = {
		"cudaGetDevice", "cudaSetDevice", "cudaGetLastError", "cudaPeekAtLastError",
		"cudaStreamQuery", "cudaEventQuery", "cudaEventRecord", "cudaStreamIsCapturing",
		"cudaGetDeviceProperties", "cudaFuncGetAttributes", "cudaGraphInstantiate",
		"cuCtxGetCurrent", "cuCtxSetCurrent", "cuDeviceGetAttribute", "cuModuleGetFunction",
		"cuStreamQuery", "cuPointerGetAttribute", "", NULL,
	};
	size_t i;

	for (i = 0; i < sizeof(kept) / sizeof(kept[0]); i++)
		ck_assert_msg(gt_api_name_is_launch(kept[i]) == 1, "%s should be kept", kept[i]);
	for (i = 0; i < sizeof(dropped) / sizeof(dropped[0]); i++)
		ck_assert_msg(gt_api_name_is_launch(dropped[i]) == 0, "%s should be filtered",
			      dropped[i] ? dropped[i] : "NULL");
}
END_TEST

/* The library exports exactly its two entry points: it runs inside other programs. */
START_TEST(exports)
{
	const char *lib = getenv("GT_INJECT_LIB");
	char cmd[1024], line[512], found[8][128];
	int n = 0, st;
	FILE *p;

	ck_assert_msg(lib && *lib, "GT_INJECT_LIB not set");
	snprintf(cmd, sizeof(cmd), "nm -D --defined-only '%s'", lib);
	p = popen(cmd, "r");
	ck_assert_ptr_nonnull(p);
	while (fgets(line, sizeof(line), p)) {
		char addr[64], type[8], name[128];

		if (sscanf(line, "%63s %7s %127s", addr, type, name) == 3 && n < 8)
			snprintf(found[n++], sizeof(found[0]), "%s %s", type, name);
	}
	st = pclose(p);
	ck_assert_int_eq(st, 0);
	ck_assert_int_eq(n, 2);
	ck_assert_str_eq(found[0], "T InitializeInjection");
	ck_assert_str_eq(found[1], "T InitializeInjectionNvtx2");
}
END_TEST

static Suite *inject_suite(void)
{
	Suite *s = suite_create("inject");
	TCase *tc = tcase_create("config");

	tcase_add_test(tc, trace_words);
	tcase_add_test(tc, byte_counts);
	tcase_add_test(tc, config_defaults);
	tcase_add_test(tc, config_values);
	tcase_add_test(tc, config_profiler_range);
	tcase_add_test(tc, config_errors);
	tcase_add_test(tc, launch_filter);
	suite_add_tcase(s, tc);
	tc = tcase_create("library");
	tcase_add_test(tc, exports);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(inject_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
