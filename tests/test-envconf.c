/* Check suite for src/settings/envconf.c: the GPUTRACE_* settings as `gputrace run` and the
 * injection library both parse them, and the name test behind GPUTRACE_API=launch. No CUDA needed.
 * Runs as a unit test. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "envconf.h"

/* A fake environment: NAME=VALUE pairs. */
static const char *fake_env[16];

static const char *fake_get(const char *name)
{
	size_t len = strlen(name);

	for (int i = 0; fake_env[i]; i++)
		if (!strncmp(fake_env[i], name, len) && fake_env[i][len] == '=')
			return fake_env[i] + len + 1;
	return NULL;
}

static void set_env(const char *const *pairs)
{
	memset(fake_env, 0, sizeof(fake_env));
	for (int i = 0; pairs[i] && i < 15; i++)
		fake_env[i] = pairs[i];
}

/* The mask GPUTRACE_TRACE=s gives, or -1 if it is refused (the mask then untouched). */
static long trace_of(const char *s)
{
	struct gt_envconf c;
	const char *hint = NULL;

	gt_envconf_defaults(&c);
	c.trace = 0x5a5a;
	if (gt_envconf_set(&c, GT_ENVCONF_TRACE, s, &hint) < 0) {
		ck_assert_uint_eq(c.trace, 0x5a5a);
		ck_assert_str_eq(hint,
		                 "use a comma-separated list of kernel, memcpy, memset, memory, "
		                 "api, nvtx, sync, graph, overhead, or all, cuda, default, none");
		return -1;
	}
	return (long)c.trace;
}

START_TEST(trace_words)
{
	ck_assert_int_eq(trace_of("kernel,memcpy"), GT_TRACE_KERNEL | GT_TRACE_MEMCPY);
	ck_assert_int_eq(trace_of("KERNEL, api,,nvtx"),
	                 GT_TRACE_KERNEL | GT_TRACE_API | GT_TRACE_NVTX);
	ck_assert_int_eq(trace_of("kernel api"), GT_TRACE_KERNEL | GT_TRACE_API);
	ck_assert_int_eq(trace_of(",kernel,"), GT_TRACE_KERNEL);
	ck_assert_int_eq(trace_of("all"), 0x1ff);
	ck_assert_int_eq(trace_of("default"), 0x0bf); /* all but sync (bit 6) and overhead (8) */
	ck_assert_int_eq(trace_of("default,sync"), 0x0ff);
	ck_assert_int_eq(trace_of("cuda"), 0x09f); /* the default without nvtx (bit 5) */
	ck_assert_int_eq(trace_of("Cuda,nvtx"), 0x0bf);
	ck_assert_int_eq(trace_of("none"), 0);
	ck_assert_int_eq(trace_of("none,kernel"), GT_TRACE_KERNEL);
	ck_assert_int_eq(trace_of("overhead"), GT_TRACE_OVERHEAD);
	/* refused: unknown words, prefixes of words, and lists without a word */
	ck_assert_int_eq(trace_of("kernel,bogus"), -1);
	ck_assert_int_eq(trace_of("kern"), -1);
	ck_assert_int_eq(trace_of("kernels"), -1);
	ck_assert_int_eq(trace_of(""), -1);
	ck_assert_int_eq(trace_of(","), -1);
	ck_assert_int_eq(trace_of(" , "), -1);
	ck_assert_int_eq(trace_of("kernel;api"), -1);
}
END_TEST

/* The ring size GPUTRACE_BUFFER_SIZE=s gives, or -1 if refused. */
static long long bytes_of(const char *s)
{
	struct gt_envconf c;
	const char *hint = NULL;

	gt_envconf_defaults(&c);
	if (gt_envconf_set(&c, GT_ENVCONF_BUFFER_SIZE, s, &hint) < 0) {
		ck_assert_uint_eq(c.ring_bytes, 0);
		ck_assert_str_eq(hint, "use a size from 4K to 1G, e.g. 64M");
		return -1;
	}
	return (long long)c.ring_bytes;
}

START_TEST(buffer_sizes)
{
	ck_assert_int_eq(bytes_of("4096"), 4096);
	ck_assert_int_eq(bytes_of("4096B"), 4096);
	ck_assert_int_eq(bytes_of("4k"), 4096);
	ck_assert_int_eq(bytes_of("64M"), 64ll << 20);
	ck_assert_int_eq(bytes_of("12MiB"), 12ll << 20);
	ck_assert_int_eq(bytes_of("12mb"), 12ll << 20);
	ck_assert_int_eq(bytes_of("1G"), 1ll << 30);
	ck_assert_int_eq(bytes_of("1048576K"), 1ll << 30);
	/* out of the ring's range: 4K to 1G */
	ck_assert_int_eq(bytes_of("4095"), -1);
	ck_assert_int_eq(bytes_of("2G"), -1);
	ck_assert_int_eq(bytes_of("1T"), -1);
	ck_assert_int_eq(bytes_of("0"), -1);
	/* not sizes */
	ck_assert_int_eq(bytes_of("M"), -1);
	ck_assert_int_eq(bytes_of("-4K"), -1);
	ck_assert_int_eq(bytes_of("12 M"), -1);
	ck_assert_int_eq(bytes_of("12Q"), -1);
	ck_assert_int_eq(bytes_of("12MiBs"), -1);
	ck_assert_int_eq(bytes_of("99999999999999999999"), -1);
	ck_assert_int_eq(bytes_of("17179869184G"), -1);
}
END_TEST

/* One setting's value accepted (1) or refused (0), and the hint of a refusal. */
static int accepts(enum gt_envconf_key key, const char *value, struct gt_envconf *c,
                   const char *want_hint)
{
	const char *hint = NULL;

	gt_envconf_defaults(c);
	if (gt_envconf_set(c, key, value, &hint) == 0) {
		ck_assert_ptr_null(hint);
		return 1;
	}
	ck_assert_str_eq(hint, want_hint);
	return 0;
}

START_TEST(words)
{
	static const char api[] = "use launch, all or none";
	static const char source[] = "use activity or callback";
	static const char flush[] = "use milliseconds from 0 to 3600000";
	static const char capture[] =
	        "use none, cudaProfilerApi or nvtx:NAME (NAME up to 127 bytes)";
	static const char graph[] = "use graph or node";
	char name[140];
	struct gt_envconf c;

	ck_assert_int_eq(accepts(GT_ENVCONF_API, "all", &c, api), 1);
	ck_assert_uint_eq(c.api_filter, GT_API_FILTER_ALL);
	ck_assert_int_eq(accepts(GT_ENVCONF_API, "NONE", &c, api), 1);
	ck_assert_uint_eq(c.api_filter, GT_API_FILTER_NONE);
	ck_assert_int_eq(accepts(GT_ENVCONF_API, "launches", &c, api), 0);
	ck_assert_uint_eq(c.api_filter, GT_API_FILTER_LAUNCH);

	ck_assert_int_eq(accepts(GT_ENVCONF_API_SOURCE, "callback", &c, source), 1);
	ck_assert_uint_eq(c.api_source, GT_API_SOURCE_CALLBACK);
	ck_assert(c.api_source_set);
	ck_assert_int_eq(accepts(GT_ENVCONF_API_SOURCE, "Activity", &c, source), 1);
	ck_assert_uint_eq(c.api_source, GT_API_SOURCE_ACTIVITY);
	ck_assert_int_eq(accepts(GT_ENVCONF_API_SOURCE, "both", &c, source), 0);
	ck_assert(!c.api_source_set);

	ck_assert_int_eq(accepts(GT_ENVCONF_FLUSH_MS, "0", &c, flush), 1);
	ck_assert_uint_eq(c.flush_ms, 0);
	ck_assert_int_eq(accepts(GT_ENVCONF_FLUSH_MS, "3600000", &c, flush), 1);
	ck_assert_uint_eq(c.flush_ms, 3600000);
	ck_assert_int_eq(accepts(GT_ENVCONF_FLUSH_MS, "3600001", &c, flush), 0);
	ck_assert_int_eq(accepts(GT_ENVCONF_FLUSH_MS, "-5", &c, flush), 0);
	ck_assert_int_eq(accepts(GT_ENVCONF_FLUSH_MS, "+5", &c, flush), 0);
	ck_assert_int_eq(accepts(GT_ENVCONF_FLUSH_MS, "5ms", &c, flush), 0);
	ck_assert_int_eq(accepts(GT_ENVCONF_FLUSH_MS, "soon", &c, flush), 0);
	ck_assert_uint_eq(c.flush_ms, 100);

	ck_assert_int_eq(accepts(GT_ENVCONF_CAPTURE, "cudaprofilerAPI", &c, capture), 1);
	ck_assert_uint_eq(c.capture, GT_CAPTURE_PROFILER_API);
	ck_assert_int_eq(accepts(GT_ENVCONF_CAPTURE, "NVTX:Train Step", &c, capture), 1);
	ck_assert_uint_eq(c.capture, GT_CAPTURE_NVTX);
	ck_assert_str_eq(c.capture_name, "Train Step"); /* the name keeps its case */
	ck_assert_int_eq(accepts(GT_ENVCONF_CAPTURE, "none", &c, capture), 1);
	ck_assert_uint_eq(c.capture, GT_CAPTURE_NONE);
	ck_assert_int_eq(accepts(GT_ENVCONF_CAPTURE, "nvtx:", &c, capture), 0);
	ck_assert_int_eq(accepts(GT_ENVCONF_CAPTURE, "cudaProfiler", &c, capture), 0);
	ck_assert_int_eq(accepts(GT_ENVCONF_CAPTURE, "nvtx", &c, capture), 0);
	/* a name of 127 bytes fits, 128 does not */
	memcpy(name, "nvtx:", 5);
	memset(name + 5, 'n', 127);
	name[5 + 127] = '\0';
	ck_assert_int_eq(accepts(GT_ENVCONF_CAPTURE, name, &c, capture), 1);
	ck_assert_uint_eq(strlen(c.capture_name), 127);
	name[5 + 127] = 'n';
	name[5 + 128] = '\0';
	ck_assert_int_eq(accepts(GT_ENVCONF_CAPTURE, name, &c, capture), 0);
	ck_assert_uint_eq(c.capture, GT_CAPTURE_NONE);

	ck_assert_int_eq(accepts(GT_ENVCONF_GRAPH, "node", &c, graph), 1);
	ck_assert(c.graph_nodes);
	ck_assert_int_eq(accepts(GT_ENVCONF_GRAPH, "GRAPH", &c, graph), 1);
	ck_assert(!c.graph_nodes);
	ck_assert_int_eq(accepts(GT_ENVCONF_GRAPH, "nodes", &c, graph), 0);

	/* no value, and keys out of range */
	ck_assert_int_eq(accepts(GT_ENVCONF_GRAPH, NULL, &c, graph), 0);
	ck_assert_int_eq(gt_envconf_set(&c, GT_ENVCONF_MAX, "x", NULL), -EINVAL);
	ck_assert_str_eq(gt_envconf_name(GT_ENVCONF_TRACE), "GPUTRACE_TRACE");
	ck_assert_str_eq(gt_envconf_name(GT_ENVCONF_CAPTURE), "GPUTRACE_CAPTURE_RANGE");
	ck_assert_ptr_null(gt_envconf_name(GT_ENVCONF_MAX));
}
END_TEST

START_TEST(env_defaults)
{
	static const char *const none[] = {NULL};
	static const char *const empty[] = {
	        "GPUTRACE_TRACE=", "GPUTRACE_API=", "GPUTRACE_DEBUG=", NULL};
	struct gt_envconf c;
	char msg[64] = "untouched";

	set_env(none);
	ck_assert_int_eq(gt_envconf_parse(&c, fake_get, msg, sizeof(msg)), 0);
	ck_assert_str_eq(msg, "untouched");
	ck_assert_uint_eq(c.trace, GT_TRACE_DEFAULT);
	ck_assert_uint_eq(c.api_filter, GT_API_FILTER_LAUNCH);
	ck_assert_uint_eq(c.api_source, GT_API_SOURCE_ACTIVITY);
	ck_assert_uint_eq(c.ring_bytes, 0);
	ck_assert_uint_eq(c.flush_ms, 100);
	ck_assert_uint_eq(c.capture, GT_CAPTURE_NONE);
	ck_assert(!c.graph_nodes);
	ck_assert(!c.debug);
	ck_assert(!c.api_source_set);
	/* an empty variable is an unset one */
	set_env(empty);
	ck_assert_int_eq(gt_envconf_parse(&c, fake_get, msg, sizeof(msg)), 0);
	ck_assert_uint_eq(c.trace, GT_TRACE_DEFAULT);
	ck_assert(!c.debug);
}
END_TEST

START_TEST(env_values)
{
	static const char *const env[] = {
	        "GPUTRACE_TRACE=kernel,api",
	        "GPUTRACE_API=all",
	        "GPUTRACE_API_SOURCE=activity",
	        "GPUTRACE_BUFFER_SIZE=64M",
	        "GPUTRACE_FLUSH_MS=0",
	        "GPUTRACE_CAPTURE_RANGE=nvtx:train step",
	        "GPUTRACE_GRAPH=node",
	        "GPUTRACE_DEBUG=1",
	        NULL,
	};
	struct gt_envconf c;

	set_env(env);
	ck_assert_int_eq(gt_envconf_parse(&c, fake_get, NULL, 0), 0);
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

/* A capture range switches API records to callbacks unless the source was chosen. */
START_TEST(env_capture_source)
{
	static const char *const capture[] = {"GPUTRACE_CAPTURE_RANGE=cudaProfilerApi",
	                                      "GPUTRACE_API=none", "GPUTRACE_DEBUG=0", NULL};
	static const char *const chosen[] = {"GPUTRACE_CAPTURE_RANGE=cudaProfilerApi",
	                                     "GPUTRACE_API_SOURCE=activity", NULL};
	struct gt_envconf c;

	set_env(capture);
	ck_assert_int_eq(gt_envconf_parse(&c, fake_get, NULL, 0), 0);
	ck_assert_uint_eq(c.capture, GT_CAPTURE_PROFILER_API);
	ck_assert_uint_eq(c.api_source, GT_API_SOURCE_CALLBACK);
	ck_assert_uint_eq(c.api_filter, GT_API_FILTER_NONE);
	ck_assert_uint_eq(c.trace, GT_TRACE_DEFAULT);
	ck_assert(!c.debug);
	set_env(chosen);
	ck_assert_int_eq(gt_envconf_parse(&c, fake_get, NULL, 0), 0);
	ck_assert_uint_eq(c.api_source, GT_API_SOURCE_ACTIVITY);
}
END_TEST

START_TEST(env_errors)
{
	static const char *const env[] = {"GPUTRACE_TRACE=kernels", "GPUTRACE_FLUSH_MS=soon",
	                                  "GPUTRACE_GRAPH=nodes", NULL};
	static const char *const env2[] = {"GPUTRACE_CAPTURE_RANGE=nvtx:", NULL};
	static const char *const env3[] = {"GPUTRACE_BUFFER_SIZE=2G", "GPUTRACE_API=launches",
	                                   NULL};
	struct gt_envconf c;
	char msg[256], small[16];

	set_env(env);
	ck_assert_int_eq(gt_envconf_parse(&c, fake_get, msg, sizeof(msg)), -EINVAL);
	/* the first problem is reported; every bad value falls back to its default */
	ck_assert_str_eq(msg, "GPUTRACE_TRACE: 'kernels' is not valid; use a comma-separated list "
	                      "of kernel, memcpy, memset, memory, api, nvtx, sync, graph, "
	                      "overhead, or all, cuda, default, none");
	ck_assert_uint_eq(c.trace, GT_TRACE_DEFAULT);
	ck_assert_uint_eq(c.flush_ms, 100);
	ck_assert(!c.graph_nodes);

	set_env(env2);
	ck_assert_int_eq(gt_envconf_parse(&c, fake_get, msg, sizeof(msg)), -EINVAL);
	ck_assert_str_eq(msg, "GPUTRACE_CAPTURE_RANGE: 'nvtx:' is not valid; use none, "
	                      "cudaProfilerApi or nvtx:NAME (NAME up to 127 bytes)");
	ck_assert_uint_eq(c.capture, GT_CAPTURE_NONE);
	ck_assert_uint_eq(c.api_source, GT_API_SOURCE_ACTIVITY);

	set_env(env3);
	ck_assert_int_eq(gt_envconf_parse(&c, fake_get, msg, sizeof(msg)), -EINVAL);
	ck_assert_str_eq(msg, "GPUTRACE_API: 'launches' is not valid; use launch, all or none");
	ck_assert_uint_eq(c.ring_bytes, 0);
	ck_assert_uint_eq(c.api_filter, GT_API_FILTER_LAUNCH);
	/* a short buffer gets the message cut, terminated */
	ck_assert_int_eq(gt_envconf_parse(&c, fake_get, small, sizeof(small)), -EINVAL);
	ck_assert_str_eq(small, "GPUTRACE_API: '");
	ck_assert_int_eq(gt_envconf_parse(&c, fake_get, NULL, 0), -EINVAL);
}
END_TEST

/* The standalone writer's settings, GPUTRACE_WRITE_QUEUE (and `gputrace run --write-queue`)
 * and GPUTRACE_WRITE_TIMEOUT: parsed here, for both sides, like every other setting. */
START_TEST(write_settings)
{
	static const char *const env[] = {"GPUTRACE_WRITE_QUEUE=16M", "GPUTRACE_WRITE_TIMEOUT=2.5",
	                                  NULL};
	static const char *const bad[] = {"GPUTRACE_WRITE_QUEUE=5G", "GPUTRACE_WRITE_TIMEOUT=0",
	                                  NULL};
	struct gt_envconf c;
	char msg[256];

	gt_envconf_defaults(&c);
	ck_assert_uint_eq(c.write_queue_bytes, 64u << 20);
	ck_assert_uint_eq(c.write_timeout_ns, 60000000000ull);
	ck_assert_str_eq(gt_envconf_name(GT_ENVCONF_WRITE_QUEUE), "GPUTRACE_WRITE_QUEUE");
	ck_assert_str_eq(gt_envconf_name(GT_ENVCONF_WRITE_TIMEOUT), "GPUTRACE_WRITE_TIMEOUT");

	ck_assert(accepts(GT_ENVCONF_WRITE_QUEUE, "0", &c, NULL));
	ck_assert_uint_eq(c.write_queue_bytes, 0);
	ck_assert(accepts(GT_ENVCONF_WRITE_QUEUE, "64MiB", &c, NULL));
	ck_assert_uint_eq(c.write_queue_bytes, 64u << 20);
	ck_assert(accepts(GT_ENVCONF_WRITE_QUEUE, "4g", &c, NULL));
	ck_assert_uint_eq(c.write_queue_bytes, 4ull << 30);
	ck_assert(accepts(GT_ENVCONF_WRITE_QUEUE, "4097", &c, NULL));
	ck_assert_uint_eq(c.write_queue_bytes, 4097);
	for (unsigned i = 0; i < 5; i++) {
		static const char *const no[] = {"5G", "4294967297", "12Q", "-1", ""};

		ck_assert(!accepts(GT_ENVCONF_WRITE_QUEUE, no[i], &c,
		                   "use a size from 0 to 4G, e.g. 64M"));
		ck_assert_uint_eq(c.write_queue_bytes, 64u << 20);
	}

	ck_assert(accepts(GT_ENVCONF_WRITE_TIMEOUT, "60", &c, NULL));
	ck_assert_uint_eq(c.write_timeout_ns, 60000000000ull);
	ck_assert(accepts(GT_ENVCONF_WRITE_TIMEOUT, "0.3", &c, NULL));
	ck_assert_uint_eq(c.write_timeout_ns, 300000000u);
	ck_assert(accepts(GT_ENVCONF_WRITE_TIMEOUT, "86400", &c, NULL));
	ck_assert_uint_eq(c.write_timeout_ns, 86400000000000ull);
	/* the shortest limit is 1 ns; under it would be 0 ns, which the waits take for none */
	ck_assert(accepts(GT_ENVCONF_WRITE_TIMEOUT, "1e-9", &c, NULL));
	ck_assert_uint_eq(c.write_timeout_ns, 1);
	for (unsigned i = 0; i < 9; i++) {
		static const char *const no[] = {"0",     "-1", "soon",  "86401",       " 5",
		                                 "1e400", "5s", "1e-10", "0.0000000009"};

		ck_assert(!accepts(GT_ENVCONF_WRITE_TIMEOUT, no[i], &c,
		                   "use seconds above 0 and up to 86400, e.g. 60"));
		ck_assert_uint_eq(c.write_timeout_ns, 60000000000ull);
	}

	set_env(env);
	ck_assert_int_eq(gt_envconf_parse(&c, fake_get, NULL, 0), 0);
	ck_assert_uint_eq(c.write_queue_bytes, 16u << 20);
	ck_assert_uint_eq(c.write_timeout_ns, 2500000000ull);
	set_env(bad);
	ck_assert_int_eq(gt_envconf_parse(&c, fake_get, msg, sizeof(msg)), -EINVAL);
	ck_assert_str_eq(msg, "GPUTRACE_WRITE_QUEUE: '5G' is not valid; use a size from 0 to 4G, "
	                      "e.g. 64M");
	ck_assert_uint_eq(c.write_queue_bytes, 64u << 20);
	ck_assert_uint_eq(c.write_timeout_ns, 60000000000ull);
}
END_TEST

/* GPUTRACE_GPU_METRICS=[DEVICES][:FREQUENCY][:SET]: each part optional, a refused value
 * leaves the settings as they were. */
START_TEST(gpu_metrics_values)
{
	static const char *const hint =
	        "use [DEVICES][:FREQUENCY][:SET]: DEVICES all or CUDA ordinals 0 to 63 like 0,1; "
	        "FREQUENCY samples per second from 1 to 1000000, e.g. 10000 or 10k; SET default "
	        "or sm; or none";
	static const char *const bad[] = {"x",   "0,",     "64",      "0;1", ":0",  ":1000001",
	                                  ":5x", "::gpu",  "all:10:a", "-1", "0,,1", NULL};
	const char *h = NULL;
	struct gt_envconf c;

	gt_envconf_defaults(&c);
	ck_assert(!c.gpu_metrics);
	ck_assert_uint_eq(c.gpu_metrics_hz, 10000);
	ck_assert_int_eq(gt_envconf_set(&c, GT_ENVCONF_GPU_METRICS, "all", &h), 0);
	ck_assert(c.gpu_metrics);
	ck_assert_uint_eq(c.gpu_metrics_devices, ~0ull);
	ck_assert_uint_eq(c.gpu_metrics_hz, 10000);
	ck_assert_uint_eq(c.gpu_metrics_set, GT_GM_SET_DEFAULT);
	ck_assert_int_eq(gt_envconf_set(&c, GT_ENVCONF_GPU_METRICS, "0,3:1k:sm", &h), 0);
	ck_assert_uint_eq(c.gpu_metrics_devices, 9);
	ck_assert_uint_eq(c.gpu_metrics_hz, 1000);
	ck_assert_uint_eq(c.gpu_metrics_set, GT_GM_SET_SM);
	ck_assert_int_eq(gt_envconf_set(&c, GT_ENVCONF_GPU_METRICS, ":250", &h), 0);
	ck_assert_uint_eq(c.gpu_metrics_devices, ~0ull);
	ck_assert_uint_eq(c.gpu_metrics_hz, 250);
	ck_assert_uint_eq(c.gpu_metrics_set, GT_GM_SET_DEFAULT);
	ck_assert_int_eq(gt_envconf_set(&c, GT_ENVCONF_GPU_METRICS, "1::default", &h), 0);
	ck_assert_uint_eq(c.gpu_metrics_devices, 2);
	ck_assert_uint_eq(c.gpu_metrics_hz, 10000);
	for (int i = 0; bad[i]; i++) {
		h = NULL;
		ck_assert_msg(gt_envconf_set(&c, GT_ENVCONF_GPU_METRICS, bad[i], &h) == -EINVAL,
		              "%s accepted", bad[i]);
		ck_assert_str_eq(h, hint);
		ck_assert(c.gpu_metrics);
		ck_assert_uint_eq(c.gpu_metrics_devices, 2);
	}
	ck_assert_int_eq(gt_envconf_set(&c, GT_ENVCONF_GPU_METRICS, "none", &h), 0);
	ck_assert(!c.gpu_metrics);
	ck_assert_str_eq(gt_envconf_name(GT_ENVCONF_GPU_METRICS), "GPUTRACE_GPU_METRICS");
}
END_TEST

START_TEST(launch_filter)
{
	static const char *const kept[] = {
	        "cudaLaunchKernel",
	        "cudaLaunchKernel_ptsz",
	        "cudaLaunchCooperativeKernel",
	        "cudaMemcpy",
	        "cudaMemcpyAsync",
	        "cudaMemcpy2DAsync_ptsz",
	        "cudaMemsetAsync",
	        "cudaMalloc",
	        "cudaMallocAsync",
	        "cudaMallocHost",
	        "cudaHostAlloc",
	        "cudaFree",
	        "cudaFreeAsync",
	        "cudaFreeHost",
	        "cudaDeviceSynchronize",
	        "cudaStreamSynchronize",
	        "cudaEventSynchronize",
	        "cudaStreamWaitEvent",
	        "cudaGraphLaunch",
	        "cuLaunchKernel",
	        "cuLaunchKernelEx",
	        "cuMemcpyHtoD_v2",
	        "cuMemcpyAsync",
	        "cuMemsetD8_v2",
	        "cuMemAlloc_v2",
	        "cuMemAllocAsync",
	        "cuMemFree_v2",
	        "cuMemFreeAsync",
	        "cuCtxSynchronize",
	        "cuStreamSynchronize",
	        "cuEventSynchronize",
	        "cuGraphLaunch",
	};
	static const char *const dropped[] = {
	        "cudaGetDevice",
	        "cudaSetDevice",
	        "cudaGetLastError",
	        "cudaPeekAtLastError",
	        "cudaStreamQuery",
	        "cudaEventQuery",
	        "cudaEventRecord",
	        "cudaStreamIsCapturing",
	        "cudaGetDeviceProperties",
	        "cudaFuncGetAttributes",
	        "cudaGraphInstantiate",
	        "cuCtxGetCurrent",
	        "cuCtxSetCurrent",
	        "cuDeviceGetAttribute",
	        "cuModuleGetFunction",
	        "cuStreamQuery",
	        "cuPointerGetAttribute",
	        "",
	        NULL,
	};
	size_t i;

	for (i = 0; i < sizeof(kept) / sizeof(kept[0]); i++)
		ck_assert_msg(gt_envconf_api_is_launch(kept[i]) == 1, "%s should be kept", kept[i]);
	for (i = 0; i < sizeof(dropped) / sizeof(dropped[0]); i++)
		ck_assert_msg(gt_envconf_api_is_launch(dropped[i]) == 0, "%s should be filtered",
		              dropped[i] ? dropped[i] : "NULL");
}
END_TEST

static Suite *envconf_suite(void)
{
	Suite *s = suite_create("envconf");
	TCase *tc = tcase_create("envconf");

	tcase_add_test(tc, trace_words);
	tcase_add_test(tc, buffer_sizes);
	tcase_add_test(tc, words);
	tcase_add_test(tc, env_defaults);
	tcase_add_test(tc, env_values);
	tcase_add_test(tc, env_capture_source);
	tcase_add_test(tc, env_errors);
	tcase_add_test(tc, write_settings);
	tcase_add_test(tc, launch_filter);
	tcase_add_test(tc, gpu_metrics_values);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(envconf_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
