/* Shared set-up of the chrome and perfetto suites: a private directory holding the
 * synthetic trace of export-fixture.h, one call to run an exporter on it, and what the
 * traces recorded on the H200 hold. Include after
 * defining FX_TEST_TAG (names the directory). Tests only. */
#ifndef GPUTRACE_TESTS_EXPORT_TEST_H
#define GPUTRACE_TESTS_EXPORT_TEST_H

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export-fixture.h"
#include "exporter.h"
#include "window.h"

static char dir[64];
static char trace_path[128];
static const struct fx_opts fxo = {.procs = 2, .iters = 50, .gpu_batch = 4, .kernels = 3};
static struct fx_expect fxe;

/* The recorded traces need only a directory for their exports. */
static void setup_dir(void)
{
	strcpy(dir, "/tmp/gt-" FX_TEST_TAG "-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void setup_once(void)
{
	setup_dir();
	snprintf(trace_path, sizeof(trace_path), "%s/in.gtrace", dir);
	ck_assert_int_eq(fx_write(trace_path, &fxo), 0);
	fx_expect(&fxo, &fxe);
}

static void teardown_once(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
}

/* Export the synthetic trace with `fmt` to `out`. Returns the exporter's result. */
static int export(const char *fmt, const char *out, uint64_t max_bytes, int demangle,
                  struct gt_export_result *res)
{
	struct gt_reader *r;
	const char *err = NULL;
	struct gt_export_options o = {.output = out, .max_bytes = max_bytes, .demangle = demangle};
	int ret;

	memset(res, 0, sizeof(*res));
	ck_assert_int_eq(gt_reader_open(trace_path, &r, &err), 0);
	ret = gt_export_run(gt_exporter_find(fmt), r, &o, res, &err);
	if (ret < 0)
		fprintf(stderr, "export failed: %s\n", err);
	gt_reader_close(r);
	return ret;
}

/* Export the window [from_ns, to_ns) of the synthetic trace with `fmt` to `out`. */
static inline int export_window(const char *fmt, const char *out, uint64_t from_ns, uint64_t to_ns,
                                struct gt_export_result *res)
{
	struct gt_window w = {.from_ns = from_ns, .to_ns = to_ns};
	struct gt_export_options o = {.output = out, .demangle = 1};
	const char *err = NULL;
	struct gt_reader *r;
	int ret;

	memset(res, 0, sizeof(*res));
	ck_assert_int_eq(gt_reader_open(trace_path, &r, &err), 0);
	ret = gt_export_window(gt_exporter_find(fmt), r, &w, &o, res, &err, NULL);
	if (ret < 0)
		fprintf(stderr, "export failed: %s\n", err);
	gt_reader_close(r);
	return ret;
}

/* ---- the traces recorded on an H200 (tests/data) ---- */

static const char *data_dir; /* from argv[1] */

/* What each recorded trace holds, whatever the format. Derived independently of the
 * exporters: `gputrace info` for the record counts; `gputrace export -f csv` read with
 * Python's csv module for the rest: flows are the kernel, memcpy and memset rows whose (pid,
 * correlation_id) matches an api row. */
static const struct real_trace {
	const char *file;
	uint64_t kernel, memcpy, memset, runtime, sync, nvtx, counters, flows;
	uint64_t pools; /* memory pool instants: the first created, the others trimmed; as many
	                 * values of the GPU's "memory pool reserved" counter */
	int64_t pool_first, pool_last; /* that counter's first and last values */
	uint64_t events; /* slices, instants and counter values: all but metadata and flows */
	int64_t pid;
	const char *process;
} real_traces[] = {
        {
                /* examples/: matmul, relu, reduce_sum over 20 steps with NVTX ranges; records:
                 * 80 kernel, 42 memcpy, 40 memset, 257 api, 60 nvtx, 41 sync, 54 memory
                 * (52 of them on the GPU, 2 pinned host memory: no counter event), 21
                 * memory_pool (the pool of cudaMallocAsync created once, trimmed each step) */
                .file = "example.gtrace",
                .kernel = 80,
                .memcpy = 42,
                .memset = 40,
                .runtime = 257,
                .sync = 41,
                .nvtx = 60,
                .counters = 52,
                .flows = 162,
                .pools = 21,
                /* reserved_bytes of the MEMORY_POOL rows: 32 MiB when created, 0 after
                 * each trim */
                .pool_first = 33554432,
                .pool_last = 0,
                .events = 615,
                .pid = 660,
                .process = "gputrace-example",
        },
        {
                /* tests/gpu workload streams8: 8 threads launch 100 kernels each on their own
                 * stream inside an NVTX range; records: 800 kernel, 1 memset, 812 api, 8 nvtx,
                 * 9 sync, 2 memory */
                .file = "multistream.gtrace",
                .kernel = 800,
                .memcpy = 0,
                .memset = 1,
                .runtime = 812,
                .sync = 9,
                .nvtx = 8,
                .counters = 2,
                .flows = 801,
                .events = 1633,
                .pid = 508,
                .process = "gt-gpu-workload",
        },
};
#define REAL_TRACES (sizeof(real_traces) / sizeof(real_traces[0]))

/* Export a recorded trace with the named exporter, demangling; 0 or -errno. */
static int export_real(const char *file, const char *fmt, const char *out,
                       struct gt_export_result *res)
{
	struct gt_reader *r;
	const char *err = NULL;
	struct gt_export_options o = {.output = out, .demangle = 1};
	char path[4096];
	int ret;

	ck_assert_msg(data_dir != NULL, "pass the tests/data directory as the argument");
	snprintf(path, sizeof(path), "%s/%s", data_dir, file);
	memset(res, 0, sizeof(*res));
	ck_assert_msg(gt_reader_open(path, &r, &err) == 0, "%s: %s", path, err);
	ret = gt_export_run(gt_exporter_find(fmt), r, &o, res, &err);
	if (ret < 0)
		fprintf(stderr, "export failed: %s\n", err);
	gt_reader_close(r);
	return ret;
}

#endif /* GPUTRACE_TESTS_EXPORT_TEST_H */
