/* Shared set-up of the chrome and perfetto suites: a private directory holding the
 * synthetic trace of export-fixture.h, and one call to run an exporter on it. Include after
 * defining FX_TEST_TAG (names the directory). Tests only. */
#ifndef GPUTRACE_TESTS_EXPORT_TEST_H
#define GPUTRACE_TESTS_EXPORT_TEST_H

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export-fixture.h"
#include "gputrace/exporter.h"

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
	ret = gt_exporter_find(fmt)->run(r, &o, res, &err);
	if (ret < 0)
		fprintf(stderr, "export failed: %s\n", err);
	gt_reader_close(r);
	return ret;
}

#endif /* GPUTRACE_TESTS_EXPORT_TEST_H */
