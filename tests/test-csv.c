/* Check suite for the csv exporter (exporters/formats/csv.c): one file per record kind, header
 * rows from gt_record_desc, exact row counts, strings resolved and quoted per RFC 4180; on
 * the traces recorded in tests/data, one row per record of each kind. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "export-fixture.h"
#include "exporter.h"

static char dir[64];
static char trace_path[128];
static const struct fx_opts fxo = {.procs = 2, .iters = 20, .gpu_batch = 4, .kernels = 3};
static struct fx_expect fxe;

static void setup_once(void)
{
	struct gt_reader *r;
	const char *err = NULL;
	struct gt_export_result res;
	char out[160];
	struct gt_export_options o = {.output = out, .demangle = 1};

	strcpy(dir, "/tmp/gt-csv-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(trace_path, sizeof(trace_path), "%s/in.gtrace", dir);
	ck_assert_int_eq(fx_write(trace_path, &fxo), 0);
	fx_expect(&fxo, &fxe);
	snprintf(out, sizeof(out), "%s/run.csv", dir);
	ck_assert_int_eq(gt_reader_open(trace_path, &r, &err), 0);
	ck_assert_int_eq(gt_export_run(gt_exporter_find("csv"), r, &o, &res, &err), 0);
	gt_reader_close(r);
	/* process, process_end, thread, device, context, stream, kernel, memcpy, memset,
	 * memory, api, nvtx, sync, loss, notice */
	ck_assert_uint_eq(res.files, 15);
}

static void teardown_once(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
}

static char *slurp(const char *path)
{
	FILE *f;
	char *buf;
	long n;

	f = fopen(path, "rb");
	ck_assert_msg(f != NULL, "%s missing", path);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc((size_t)n + 1);
	ck_assert_uint_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static char *slurp_kind(const char *kind)
{
	char path[200];

	snprintf(path, sizeof(path), "%s/run-%s.csv", dir, kind);
	return slurp(path);
}

/* Records (not lines: quoted fields may hold line breaks) after the header. */
static size_t rows(const char *text)
{
	size_t n = 0;
	bool quoted = false;

	for (const char *p = text; *p; p++) {
		if (*p == '"')
			quoted = !quoted;
		else if (*p == '\n' && !quoted)
			n++;
	}
	return n - 1;
}

START_TEST(test_headers)
{
	char *t = slurp_kind("kernel");

	ck_assert_int_eq(
	        strncmp(t,
	                "pid,start_ns,end_ns,correlation_id,device_id,context_id,stream_id,"
	                "graph_node_id,name,grid_x,grid_y,grid_z,block_x,block_y,block_z,"
	                "cluster_x,cluster_y,cluster_z,registers,static_smem_bytes,"
	                "dynamic_smem_bytes,local_mem_bytes,graph_id,flags\r\n",
	                strlen("pid,start_ns,end_ns,correlation_id,device_id,context_id,"
	                       "stream_id,graph_node_id,name,grid_x,grid_y,grid_z,block_x,"
	                       "block_y,block_z,cluster_x,cluster_y,cluster_z,registers,"
	                       "static_smem_bytes,dynamic_smem_bytes,local_mem_bytes,graph_id,"
	                       "flags\r\n")),
	        0);
	free(t);
	t = slurp_kind("api");
	ck_assert_int_eq(strncmp(t,
	                         "pid,start_ns,end_ns,tid,correlation_id,cbid,name,return_code,"
	                         "domain,stack_id\r\n",
	                         78),
	                 0);
	free(t);
}
END_TEST

START_TEST(test_counts)
{
	static const struct {
		const char *kind;
		size_t n;
	} want[] = {
	        {"process", 2}, {"thread", 4}, {"device", 2}, {"context", 2},
	        {"stream", 2},  {"loss", 2},   {"notice", 2}, {"process_end", 2},
	};
	char *t;

	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		t = slurp_kind(want[i].kind);
		ck_assert_msg(rows(t) == want[i].n, "%s: %zu rows", want[i].kind, rows(t));
		free(t);
	}
	t = slurp_kind("kernel");
	ck_assert_uint_eq(rows(t), fxe.kernels);
	free(t);
	t = slurp_kind("memcpy");
	ck_assert_uint_eq(rows(t), fxe.memcpys);
	free(t);
	t = slurp_kind("api");
	ck_assert_uint_eq(rows(t), fxe.runtime + fxe.driver);
	free(t);
	t = slurp_kind("nvtx");
	ck_assert_uint_eq(rows(t), fxe.nvtx_ranges + fxe.nvtx_marks);
	free(t);
	t = slurp_kind("memory");
	ck_assert_uint_eq(rows(t), fxe.memory);
	free(t);
	t = slurp_kind("sync");
	ck_assert_uint_eq(rows(t), fxe.syncs);
	free(t);
	ck_assert_int_ne(access("run-string.csv", F_OK), 0);
}
END_TEST

START_TEST(test_values)
{
	char *t = slurp_kind("kernel");

	/* first kernel of pid 1000: step 0 starts at T0 + 7000, GPU work 10 us later */
	ck_assert_ptr_nonnull(
	        strstr(t, "\r\n1000,1000000017000,1000000023666,3,0,1,7,0,"
	                  "kernel(float*),128,2,1,256,1,1,0,0,0,32,1024,4096,0,0,0\r\n"));
	/* quotes doubled inside a quoted field; invalid UTF-8 replaced */
	ck_assert_ptr_nonnull(strstr(t, ",\"quote\"\"kernel\","));
	ck_assert_ptr_nonnull(
	        strstr(t, ",bad\xef\xbf\xbd\xef\xbf\xbd utf8 \xef\xbf\xbd\xef\xbf\xbd,"));
	/* the demangled template has commas: quoted */
	ck_assert_ptr_nonnull(strstr(t, ",\"void f<VeryLongTemplateArgument"));
	free(t);
	t = slurp_kind("thread");
	ck_assert_ptr_nonnull(strstr(t, "\r\n1000,1000,\"main \"\"loop\"\"\"\r\n"));
	free(t);
	t = slurp_kind("api");
	/* a signed field and a failed call */
	ck_assert_ptr_nonnull(strstr(t, ",cudaMemsetAsync,700,0,0\r\n"));
	free(t);
	t = slurp_kind("process");
	ck_assert_ptr_nonnull(
	        strstr(t, "\r\n1001,1000000000000,1,/usr/bin/python3,python3 train.py,fixture-host,"
	                  "1,1,2,0\r\n"));
	free(t);
}
END_TEST

START_TEST(test_stdout_refused)
{
	struct gt_reader *r;
	const char *err = NULL;
	struct gt_export_result res;
	struct gt_export_options o = {.output = "-"};

	ck_assert_int_eq(gt_reader_open(trace_path, &r, &err), 0);
	ck_assert_int_eq(gt_export_run(gt_exporter_find("csv"), r, &o, &res, &err), -EINVAL);
	ck_assert_str_eq(err, "csv writes one file per record kind: give -o NAME.csv "
	                      "(it writes NAME-kernel.csv, NAME-api.csv, ...)");
	gt_reader_close(r);
}
END_TEST

/* ------------------------------------------------------------------------------------ */
/* The traces recorded on an H200 (tests/data)                                           */

static const char *data_dir; /* from argv[1] */

/* Rows per table: exactly the record counts `gputrace info` prints for each trace (its
 * strings are resolved into the other tables, not written as one). */
struct kind_rows {
	const char *kind;
	size_t n;
};

static const struct real_trace {
	const char *file;
	unsigned files;
	struct kind_rows rows[GT_REC_MAX]; /* every other kind: no file */
	const char *kernel;                /* a kernel name, demangled and quoted */
} real_traces[] = {
        {
                .file = "example.gtrace",
                .files = 15,
                .rows = {{"process", 1},
                         {"process_end", 1},
                         {"thread", 1},
                         {"device", 1},
                         {"context", 1},
                         {"stream", 10},
                         {"kernel", 80},
                         {"memcpy", 42},
                         {"memset", 40},
                         {"memory", 54},
                         {"memory_pool", 21},
                         {"api", 257},
                         {"nvtx", 60},
                         {"sync", 41},
                         {"clock", 2}},
                .kernel = "\"matmul(float const*, float const*, float*, int)\"",
        },
        {
                .file = "multistream.gtrace",
                .files = 13,
                .rows = {{"process", 1},
                         {"process_end", 1},
                         {"thread", 9},
                         {"device", 1},
                         {"context", 1},
                         {"stream", 16},
                         {"kernel", 800},
                         {"memset", 1},
                         {"memory", 2},
                         {"api", 812},
                         {"nvtx", 8},
                         {"sync", 9},
                         {"clock", 2}},
                .kernel = "\"gt_tag(int*, int)\"",
        },
};

START_TEST(test_real_trace)
{
	const struct real_trace *x = &real_traces[_i];
	struct gt_reader *r;
	const char *err = NULL;
	struct gt_export_result res;
	char path[4096], out[160];
	struct gt_export_options o = {.output = out, .demangle = 1};
	unsigned files = 0;
	char *t;

	ck_assert_msg(data_dir != NULL, "pass the tests/data directory as the argument");
	snprintf(path, sizeof(path), "%s/%s", data_dir, x->file);
	snprintf(out, sizeof(out), "%s/real%d.csv", dir, _i);
	ck_assert_msg(gt_reader_open(path, &r, &err) == 0, "%s: %s", path, err);
	ck_assert_int_eq(gt_export_run(gt_exporter_find("csv"), r, &o, &res, &err), 0);
	gt_reader_close(r);
	ck_assert_uint_eq(res.files, x->files);
	for (unsigned type = 1; type < GT_REC_MAX; type++) {
		const char *kind = gt_record_desc(type) ? gt_record_desc(type)->name : NULL;
		const struct kind_rows *k = x->rows;

		if (!kind)
			continue; /* a value left unused */
		while (k->kind && strcmp(k->kind, kind) != 0)
			k++;
		snprintf(path, sizeof(path), "%s/real%d-%s.csv", dir, _i, kind);
		if (!k->kind) {
			ck_assert_msg(access(path, F_OK) != 0, "%s: no %s record, but a file",
			              x->file, kind);
			continue;
		}
		t = slurp(path);
		ck_assert_msg(rows(t) == k->n, "%s %s: %zu rows, not %zu", x->file, kind, rows(t),
		              k->n);
		free(t);
		files++;
	}
	ck_assert_uint_eq(files, x->files);
	/* kernel names demangled */
	snprintf(path, sizeof(path), "%s/real%d-kernel.csv", dir, _i);
	t = slurp(path);
	ck_assert_ptr_nonnull(strstr(t, x->kernel));
	ck_assert_ptr_null(strstr(t, ",_Z"));
	free(t);
}
END_TEST

static Suite *csv_suite(void)
{
	Suite *s = suite_create("csv");
	TCase *tc = tcase_create("export");

	tcase_add_unchecked_fixture(tc, setup_once, teardown_once);
	tcase_add_test(tc, test_headers);
	tcase_add_test(tc, test_counts);
	tcase_add_test(tc, test_values);
	tcase_add_test(tc, test_stdout_refused);
	tcase_add_loop_test(tc, test_real_trace, 0,
	                    (int)(sizeof(real_traces) / sizeof(real_traces[0])));
	suite_add_tcase(s, tc);
	return s;
}

/* argv[1]: tests/data, where the traces recorded on a GPU live. */
int main(int argc, char **argv)
{
	SRunner *sr;
	int failed;

	data_dir = argc > 1 ? argv[1] : NULL;
	sr = srunner_create(csv_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
