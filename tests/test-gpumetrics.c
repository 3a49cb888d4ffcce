/* GPU metrics (PM sampling) through every output: GPU_METRIC and GPU_SAMPLE records written
 * with exact values, read back, exported to chrome JSON, perfetto (imported by Perfetto's
 * trace_processor_shell when given), SQLite, and summed up by stats. Tests only. Arguments:
 * [trace_processor_shell]. */
#include <check.h>
#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "exporter.h"
#include "gputrace/trace.h"
#include "stats.h"
#include "trace-build.h"
#include "window.h"

static const char *tp_path; /* argv[1], may be absent */

/* One GPU metric of device 0 of pid. */
static void tb_metric(struct tb *t, uint32_t pid, uint32_t index, const char *name,
                      const char *unit, uint32_t scale)
{
	struct gt_rec_gpu_metric m = {0};

	m.interval_ns = 100000;
	m.index = index;
	m.name_id = tb_str(t, name);
	m.metric_id = tb_str(t, index == 0 ? "sm__cycles_active.avg.pct_of_peak_sustained_elapsed"
	                                   : "dram__bytes_read.sum.per_second");
	m.unit_id = tb_str(t, unit);
	m.scale = scale;
	tb_put(t, &m, GT_REC_GPU_METRIC, sizeof(m), pid);
}

static void tb_sample(struct tb *t, uint32_t pid, uint64_t ts, uint64_t sm_milli, uint64_t dram_bps)
{
	struct gt_rec_gpu_sample s = {0};

	s.ts_ns = ts;
	s.count = 2;
	s.values[0] = sm_milli;
	s.values[1] = dram_bps;
	tb_put(t, &s, GT_REC_GPU_SAMPLE, sizeof(s), pid);
}

/* pid 100 on GPU 0 (uuid 0x11...): two metrics, four samples at 1.1, 1.2, 1.3, 1.4 ms; SMs
 * Active 50, 100, 12.5, 0 %; DRAM read 1000, 3000, 2000, 0 bytes/s; one kernel from 1.0 to
 * 1.25 ms; steps 1 (1.0 to 1.2 ms) and 2 (1.2 to 1.4 ms). */
static void write_trace(struct tb *t)
{
	tb_open(t, "node-a");
	tb_process(t, 100, -1, "node-a", 0x11);
	tb_metric(t, 100, 0, "SMs Active", "%", 1000);
	tb_metric(t, 100, 1, "DRAM Read Bandwidth", "bytes/s", 1);
	tb_kernel(t, 100, "gemm", 7, 1000000, 1250000);
	tb_nvtx(t, 100, NULL, "ProfilerStep#1", 1000000, 1200000);
	tb_nvtx(t, 100, NULL, "ProfilerStep#2", 1200000, 1400000);
	tb_sample(t, 100, 1100000, 50000, 1000);
	tb_sample(t, 100, 1200000, 100000, 3000);
	tb_sample(t, 100, 1300000, 12500, 2000);
	tb_sample(t, 100, 1400000, 0, 0);
	tb_close(t);
}

START_TEST(records_round_trip)
{
	static const uint64_t want[4][2] = {{50000, 1000}, {100000, 3000}, {12500, 2000}, {0, 0}};
	const union gt_record *rec;
	struct gt_reader *r;
	struct tb t;
	unsigned samples = 0, metrics = 0;

	write_trace(&t);
	r = tb_reader(t.path);
	while (gt_reader_next(r, &rec) > 0) {
		if (rec->hdr.type == GT_REC_GPU_METRIC) {
			ck_assert_uint_eq(rec->gpu_metric.index, metrics);
			ck_assert_uint_eq(rec->gpu_metric.interval_ns, 100000);
			ck_assert_uint_eq(rec->gpu_metric.scale, metrics ? 1 : 1000);
			ck_assert_uint_eq(rec->hdr.pid, 100);
			metrics++;
		} else if (rec->hdr.type == GT_REC_GPU_SAMPLE) {
			ck_assert_uint_lt(samples, 4);
			ck_assert_uint_eq(rec->gpu_sample.ts_ns, 1100000 + 100000 * samples);
			ck_assert_uint_eq(rec->gpu_sample.count, 2);
			ck_assert_uint_eq(rec->gpu_sample.values[0], want[samples][0]);
			ck_assert_uint_eq(rec->gpu_sample.values[1], want[samples][1]);
			for (unsigned i = 2; i < GT_GPU_METRICS_MAX; i++)
				ck_assert_uint_eq(rec->gpu_sample.values[i], 0);
			samples++;
		}
	}
	ck_assert_uint_eq(metrics, 2);
	ck_assert_uint_eq(samples, 4);
	ck_assert_str_eq(gt_record_name(GT_REC_GPU_SAMPLE), "gpu_sample");
	ck_assert_str_eq(gt_record_name(GT_REC_GPU_METRIC), "gpu_metric");
	ck_assert_str_eq(gt_record_name(25), "unknown"); /* reserved, unused */
	ck_assert_str_eq(gt_loss_source_name(GT_LOSS_PM_OVERFLOW), "pm_overflow");
	ck_assert_str_eq(gt_loss_source_name(GT_LOSS_PM_LAG), "pm_decode_lag");
	gt_reader_close(r);
	tb_remove(&t);
}
END_TEST

/* The whole output of exporter fmt on the trace, as text (malloc'd). */
static char *export_text(const char *path, const char *fmt, const char *out,
                         struct gt_export_result *res)
{
	struct gt_export_options o = {.output = out, .demangle = 1};
	const char *err = NULL;
	struct gt_reader *r = tb_reader(path);
	char *buf;
	FILE *f;
	long n;

	memset(res, 0, sizeof(*res));
	ck_assert_msg(gt_export_run(gt_exporter_find(fmt), r, &o, res, &err) == 0, "%s", err);
	gt_reader_close(r);
	f = fopen(out, "rb");
	ck_assert_ptr_nonnull(f);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = malloc((size_t)n + 1);
	ck_assert_uint_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = 0;
	fclose(f);
	return buf;
}

static unsigned count_of(const char *hay, const char *needle)
{
	unsigned n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p++)
		n++;
	return n;
}

START_TEST(chrome_counters)
{
	struct gt_export_result res;
	struct tb t;
	char out[96], *json;

	write_trace(&t);
	snprintf(out, sizeof(out), "%s.json", t.path);
	json = export_text(t.path, "chrome", out, &res);
	/* 8 metric values and no memory counter; ts from the process start at 1 us */
	ck_assert_uint_eq(res.counters, 8);
	ck_assert_uint_eq(count_of(json, "\"cat\":\"gpu_metrics\""), 8);
	ck_assert_uint_eq(count_of(json, "\"name\":\"SMs Active\""), 4);
	ck_assert_uint_eq(count_of(json, "\"name\":\"DRAM Read Bandwidth\""), 4);
	ck_assert_ptr_nonnull(strstr(json, "\"ts\":1099.000,\"args\":{\"%\":50}}"));
	ck_assert_ptr_nonnull(strstr(json, "\"ts\":1299.000,\"args\":{\"%\":12.5}}"));
	ck_assert_ptr_nonnull(strstr(json, "\"ts\":1399.000,\"args\":{\"%\":0}}"));
	ck_assert_ptr_nonnull(strstr(json, "\"ts\":1199.000,\"args\":{\"bytes/s\":3000}}"));
	free(json);
	unlink(out);
	tb_remove(&t);
}
END_TEST

/* A window keeps the metrics (state records) and the samples whose interval ends inside it. */
START_TEST(chrome_window)
{
	struct gt_window w = {.from_ns = 1150000, .to_ns = 1350000};
	struct gt_export_options o = {.demangle = 1};
	struct gt_export_result res;
	const char *err = NULL;
	struct gt_reader *r;
	char out[96];
	struct tb t;

	write_trace(&t);
	snprintf(out, sizeof(out), "%s.json", t.path);
	o.output = out;
	r = tb_reader(t.path);
	ck_assert_msg(gt_export_window(gt_exporter_find("chrome"), r, &w, &o, &res, &err, NULL) ==
	                      0,
	              "%s", err);
	gt_reader_close(r);
	/* the samples at 1.2 and 1.3 ms, two metrics each */
	ck_assert_uint_eq(res.counters, 4);
	unlink(out);
	tb_remove(&t);
}
END_TEST

static int sql_rows(sqlite3 *db, const char *sql, char *out, size_t cap)
{
	sqlite3_stmt *st;
	size_t len = 0;
	int rows = 0;

	ck_assert_int_eq(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
	out[0] = 0;
	while (sqlite3_step(st) == SQLITE_ROW) {
		for (int c = 0; c < sqlite3_column_count(st); c++)
			len += (size_t)snprintf(out + len, cap - len, "%s%s", c ? "|" : "",
			                        (const char *)sqlite3_column_text(st, c));
		len += (size_t)snprintf(out + len, cap - len, "\n");
		rows++;
	}
	sqlite3_finalize(st);
	return rows;
}

START_TEST(sqlite_tables)
{
	struct gt_export_options o = {.demangle = 1};
	struct gt_export_result res;
	const char *err = NULL;
	struct gt_reader *r;
	char out[96], got[2048];
	sqlite3 *db;
	struct tb t;

	write_trace(&t);
	snprintf(out, sizeof(out), "%s.sqlite", t.path);
	o.output = out;
	r = tb_reader(t.path);
	ck_assert_msg(gt_export_run(gt_exporter_find("sqlite"), r, &o, &res, &err) == 0, "%s", err);
	gt_reader_close(r);
	ck_assert_int_eq(sqlite3_open_v2(out, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	ck_assert_int_eq(sql_rows(db, "SELECT * FROM TARGET_INFO_GPU_METRICS ORDER BY metricId",
	                          got, sizeof(got)),
	                 2);
	ck_assert_str_eq(got, "0|0|GPU 0 metrics|0|SMs Active [%]\n"
	                      "0|0|GPU 0 metrics|1|DRAM Read Bandwidth [bytes/s]\n");
	ck_assert_int_eq(sql_rows(db,
	                          "SELECT rawTimestamp, timestamp, typeId, metricId, value, "
	                          "typeof(value) FROM GPU_METRICS ORDER BY metricId, timestamp",
	                          got, sizeof(got)),
	                 8);
	ck_assert_str_eq(got, "1100000|1100000|0|0|50.0|real\n"
	                      "1200000|1200000|0|0|100.0|real\n"
	                      "1300000|1300000|0|0|12.5|real\n"
	                      "1400000|1400000|0|0|0.0|real\n"
	                      "1100000|1100000|0|1|1000.0|real\n"
	                      "1200000|1200000|0|1|3000.0|real\n"
	                      "1300000|1300000|0|1|2000.0|real\n"
	                      "1400000|1400000|0|1|0.0|real\n");
	/* the kind of query Nsight Systems' GPU metrics recipes run */
	ck_assert_int_eq(sql_rows(db,
	                          "SELECT i.metricName, avg(g.value), max(g.value) FROM "
	                          "GPU_METRICS g JOIN TARGET_INFO_GPU_METRICS i USING (typeId, "
	                          "metricId) GROUP BY i.metricName ORDER BY i.metricName",
	                          got, sizeof(got)),
	                 2);
	ck_assert_str_eq(got, "DRAM Read Bandwidth [bytes/s]|1500.0|3000.0\n"
	                      "SMs Active [%]|40.625|100.0\n");
	ck_assert_int_eq(sql_rows(db,
	                          "SELECT value FROM META_DATA_EXPORT WHERE name = "
	                          "'GPUTRACE_SCHEMA_VERSION'",
	                          got, sizeof(got)),
	                 1);
	ck_assert_str_eq(got, "6\n");
	sqlite3_close(db);
	unlink(out);

	/* the same rows as Parquet: a real in a REAL column (DOUBLE) is written, not refused */
	snprintf(out, sizeof(out), "%s.parquet", t.path);
	r = tb_reader(t.path);
	ck_assert_msg(gt_export_run(gt_exporter_find("parquet"), r, &o, &res, &err) == 0, "%s", err);
	gt_reader_close(r);
	snprintf(got, sizeof(got), "%s/GPU_METRICS.parquet", out);
	ck_assert_int_eq(access(got, R_OK), 0);
	snprintf(got, sizeof(got), "rm -rf '%s'", out);
	ck_assert_int_eq(system(got), 0);
	tb_remove(&t);
}
END_TEST

/* Run TP's query on file; its CSV output (malloc'd), or NULL when TP cannot run. */
static char *tp_query(const char *file, const char *sql)
{
	char cmd[4096], *buf = malloc(65536);
	size_t len = 0, n;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "'%s' query '%s' \"%s\" 2>/dev/null", tp_path, file, sql);
	p = popen(cmd, "r");
	if (!p) {
		free(buf);
		return NULL;
	}
	while ((n = fread(buf + len, 1, 65535 - len, p)) > 0)
		len += n;
	buf[len] = 0;
	if (pclose(p) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

START_TEST(perfetto_counter_tracks)
{
	struct gt_export_result res;
	struct tb t;
	char out[96], *bytes, *got;

	write_trace(&t);
	snprintf(out, sizeof(out), "%s.pftrace", t.path);
	bytes = export_text(t.path, "perfetto", out, &res);
	free(bytes);
	ck_assert_uint_eq(res.counters, 8);
	if (!tp_path || access(tp_path, X_OK) != 0) {
		fprintf(stderr, "perfetto_counter_tracks: no trace_processor_shell, import "
		                "not checked\n");
		goto out;
	}
	got = tp_query(out, "select t.name, c.ts, c.value from counter c join counter_track t "
	                    "on c.track_id = t.id order by t.name, c.ts");
	ck_assert_ptr_nonnull(got);
	tb_expect_text(got, "\"name\",\"ts\",\"value\"\n"
	                    "\"DRAM Read Bandwidth (bytes/s)\",1100000,1000.000000\n"
	                    "\"DRAM Read Bandwidth (bytes/s)\",1200000,3000.000000\n"
	                    "\"DRAM Read Bandwidth (bytes/s)\",1300000,2000.000000\n"
	                    "\"DRAM Read Bandwidth (bytes/s)\",1400000,0.000000\n"
	                    "\"SMs Active (%)\",1100000,50.000000\n"
	                    "\"SMs Active (%)\",1200000,100.000000\n"
	                    "\"SMs Active (%)\",1300000,12.500000\n"
	                    "\"SMs Active (%)\",1400000,0.000000\n");
	free(got);
out:
	unlink(out);
	tb_remove(&t);
}
END_TEST

static char *stats_csv(const char *path, unsigned reports)
{
	struct gt_stats_options o = {.reports = reports, .format = GT_STATS_FORMAT_CSV};
	struct gt_reader *r = tb_reader(path);
	const char *msg = NULL;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	ck_assert_ptr_nonnull(f);
	ck_assert_msg(gt_stats_report(r, f, &o, &msg) == 0, "%s", msg);
	fclose(f);
	gt_reader_close(r);
	return buf;
}

/* Hand-computed: SMs Active over the run (50 + 100 + 12.5 + 0) / 4 = 40.625, peak 100; the
 * kernel ran in the intervals of the first three samples: (50 + 100 + 12.5) / 3 = 54.17;
 * step 1 holds the samples at 1.1 and 1.2 ms, step 2 those at 1.3 and 1.4 ms. GPU busy: 3
 * of 4 intervals. */
START_TEST(stats_means_and_peaks)
{
	struct tb t;
	char *out;

	write_trace(&t);
	out = stats_csv(t.path, GT_STATS_REPORT_GPU_METRICS);
	tb_expect_text(out, "# gpu_metrics\n"
	                    "gpu,metric,unit,scope,samples,mean,peak,sampled_by_pid\n"
	                    "0,SMs Active,%,run,4,40.62,100.00,100\n"
	                    "0,SMs Active,%,kernels running,3,54.17,100.00,100\n"
	                    "0,SMs Active,%,step 1,2,75.00,100.00,100\n"
	                    "0,SMs Active,%,step 2,2,6.25,12.50,100\n"
	                    "0,DRAM Read Bandwidth,bytes/s,run,4,1500.00,3000.00,100\n"
	                    "0,DRAM Read Bandwidth,bytes/s,kernels running,3,2000.00,3000.00,100\n"
	                    "0,DRAM Read Bandwidth,bytes/s,step 1,2,2000.00,3000.00,100\n"
	                    "0,DRAM Read Bandwidth,bytes/s,step 2,2,1000.00,2000.00,100\n"
	                    "\n# gpu_busy\n"
	                    "gpu,samples,gpu_busy_pct,sm_active_pct,sm_active_busy_pct\n"
	                    "0,4,75.00,40.62,54.17\n"
	                    "\n# gpu_metrics_notices\n"
	                    "pid,reason,message\n");
	free(out);
	/* the run's summary says who sampled */
	{
		struct gt_reader *r = tb_reader(t.path);
		const char *msg = NULL;
		char *sum = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&sum, &len);

		ck_assert_int_eq(gt_stats_summary(r, f, &msg), 0);
		fclose(f);
		gt_reader_close(r);
		ck_assert_msg(strstr(sum, "\nGPU metrics:\n  GPU 0: 2 metrics sampled by pid 100 "
		                          "every 100.0 us, 4 samples\n"),
		              "%s", sum);
		free(sum);
	}
	/* in the default reports because the trace holds samples */
	out = stats_csv(t.path, 0);
	ck_assert_ptr_nonnull(strstr(out, "\n# gpu_busy\n"));
	ck_assert_ptr_nonnull(strstr(out, "pm_overflow,0,\n"));
	free(out);
	tb_remove(&t);
}
END_TEST

static void tb_gm_notice(struct tb *t, uint32_t pid, unsigned severity, unsigned reason,
                         const char *msg)
{
	struct gt_rec_notice n = {0};

	n.ts_ns = 1000000;
	n.severity = severity;
	n.code = GT_NOTICE_GPU_METRICS;
	n.detail = (int32_t)reason;
	n.message_id = tb_str(t, msg);
	tb_put(t, &n, GT_REC_NOTICE, sizeof(n), pid);
}

/* The report's notices: the warnings that a GPU was not sampled, in trace order, each
 * whole; not the informational one (another process samples the GPU), nor other codes. */
START_TEST(stats_notices)
{
	static const char perm[] =
	        "GPU metrics of device 0 not sampled: no permission to read GPU performance "
	        "counters (cuptiProfilerInitialize: CUPTI_ERROR_INSUFFICIENT_PRIVILEGES); the "
	        "driver lets only administrators read the counters "
	        "(NVreg_RestrictProfilingToAdminUsers=1): run as root or set the module parameter "
	        "to 0";
	struct gt_stats_options o = {.reports = GT_STATS_REPORT_GPU_METRICS};
	struct gt_rec_notice other = {0};
	struct gt_reader *r;
	const char *msg = NULL;
	char *out = NULL, want[1024];
	size_t len = 0;
	struct tb t;
	FILE *f;

	tb_open(&t, "node-a");
	tb_process(&t, 100, -1, "node-a", 0x11);
	tb_process(&t, 101, -1, "node-a", 0x11);
	tb_gm_notice(&t, 100, GT_NOTICE_WARNING, GT_GM_NO_PERMISSION, perm);
	tb_gm_notice(
	        &t, 101, GT_NOTICE_INFO, GT_GM_OTHER_PROCESS,
	        "GPU metrics of device 0 not sampled: another traced process samples this GPU");
	other.severity = GT_NOTICE_WARNING;
	other.code = GT_NOTICE_CUPTI_ERROR;
	other.message_id = tb_str(&t, "not about GPU metrics");
	tb_put(&t, &other, GT_REC_NOTICE, sizeof(other), 100);
	tb_gm_notice(&t, 101, GT_NOTICE_WARNING, GT_GM_BUSY,
	             "GPU metrics of device 0 not sampled: another profiler holds the GPU's "
	             "performance counters");
	tb_close(&t);

	out = stats_csv(t.path, GT_STATS_REPORT_GPU_METRICS);
	snprintf(want, sizeof(want),
	         "# gpu_metrics\n"
	         "gpu,metric,unit,scope,samples,mean,peak,sampled_by_pid\n"
	         "\n# gpu_busy\n"
	         "gpu,samples,gpu_busy_pct,sm_active_pct,sm_active_busy_pct\n"
	         "\n# gpu_metrics_notices\n"
	         "pid,reason,message\n"
	         "100,no permission to read GPU performance counters,%s\n"
	         "101,another profiler holds the GPU's performance counters,GPU metrics of "
	         "device 0 not sampled: another profiler holds the GPU's performance "
	         "counters\n",
	         perm);
	tb_expect_text(out, want);
	free(out);

	/* a table keeps the message whole (a name cell is cut at 160 characters) */
	r = tb_reader(t.path);
	f = open_memstream(&out, &len);
	ck_assert_ptr_nonnull(f);
	ck_assert_msg(gt_stats_report(r, f, &o, &msg) == 0, "%s", msg);
	fclose(f);
	gt_reader_close(r);
	snprintf(want, sizeof(want),
	         "\nGPU metrics not sampled (notices)\n"
	         "Pid  %-53s  Message\n"
	         "100  %-53s  %s\n"
	         "101  %-53s  GPU metrics of device 0 not sampled: another profiler holds the "
	         "GPU's performance counters\n",
	         "Reason", "no permission to read GPU performance counters", perm,
	         "another profiler holds the GPU's performance counters");
	ck_assert_msg(strlen(out) > strlen(want) &&
	                      strcmp(out + strlen(out) - strlen(want), want) == 0,
	              "%s", out);
	free(out);
	tb_remove(&t);
}
END_TEST

int main(int argc, char **argv)
{
	Suite *s = suite_create("gpumetrics");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tp_path = argc > 1 ? argv[1] : NULL;
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, records_round_trip);
	tcase_add_test(tc, chrome_counters);
	tcase_add_test(tc, chrome_window);
	tcase_add_test(tc, sqlite_tables);
	tcase_add_test(tc, perfetto_counter_tracks);
	tcase_add_test(tc, stats_means_and_peaks);
	tcase_add_test(tc, stats_notices);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
