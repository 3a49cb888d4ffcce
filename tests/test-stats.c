/* Check suite for the stats exporter (exporters/stats*.c): every report column on traces
 * with known durations, names and sizes, CSV and JSON exactly, the histogram's precision,
 * the run summary and its "no CUDA activity" text. Runs as a unit test. */
#include <check.h>
#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gputrace/trace.h"
#include "stats-int.h"
#include "stats.h"
#include "text.h"
#include "trace-synth.h"

#define PID 4242u

/* ---- building traces ---- */

struct tw {
	struct gt_writer *w;
	char path[64];
};

static void tw_open(struct tw *t)
{
	struct gt_trace_info info = {
	        .clock_id = GT_CLOCK_MONOTONIC,
	        .hostname = "testhost",
	        .cmdline = "./app --steps 3",
	        .tool_version = "0.1.0",
	        .cuda_version = "13.0",
	};
	int fd;

	snprintf(t->path, sizeof(t->path), "/tmp/test-stats-XXXXXX");
	fd = mkstemp(t->path);
	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert_int_eq(gt_writer_open(t->path, &info, NULL, &t->w), 0);
}

static struct gt_reader *tw_close(struct tw *t)
{
	struct gt_reader *r;
	const char *msg = NULL;

	ck_assert_int_eq(gt_writer_close(t->w), 0);
	ck_assert_int_eq(gt_reader_open(t->path, &r, &msg), 0);
	unlink(t->path);
	return r;
}

static void put(struct tw *t, void *rec, unsigned type, size_t size)
{
	struct gt_rec_hdr *h = rec;

	h->type = (uint16_t)type;
	h->size = (uint16_t)size;
	h->pid = h->pid ? h->pid : PID;
	ck_assert_int_eq(gt_writer_write(t->w, h), 0);
}

static void str(struct tw *t, uint32_t id, const char *s)
{
	ck_assert_int_eq(gt_writer_string(t->w, PID, id, s, strlen(s)), 0);
}

static void kernel(struct tw *t, uint32_t name_id, uint64_t start, uint64_t dur)
{
	struct gt_rec_kernel k = {0};

	k.span.start_ns = start;
	k.span.end_ns = start + dur;
	k.name_id = name_id;
	put(t, &k, GT_REC_KERNEL, sizeof(k));
}

static void api(struct tw *t, uint32_t name_id, uint64_t start, uint64_t dur, int32_t rc,
                uint32_t domain)
{
	struct gt_rec_api a = {0};

	a.start_ns = start;
	a.end_ns = start + dur;
	a.name_id = name_id;
	a.return_code = rc;
	a.domain = domain;
	put(t, &a, GT_REC_API, sizeof(a));
}

static void copy(struct tw *t, uint32_t kind, uint64_t start, uint64_t dur, uint64_t bytes)
{
	struct gt_rec_memcpy m = {0};

	m.span.start_ns = start;
	m.span.end_ns = start + dur;
	m.copy_kind = kind;
	m.bytes = bytes;
	put(t, &m, GT_REC_MEMCPY, sizeof(m));
}

static void mset(struct tw *t, uint32_t mem_kind, uint64_t start, uint64_t dur, uint64_t bytes)
{
	struct gt_rec_memset m = {0};

	m.span.start_ns = start;
	m.span.end_ns = start + dur;
	m.mem_kind = mem_kind;
	m.bytes = bytes;
	put(t, &m, GT_REC_MEMSET, sizeof(m));
}

static void mem(struct tw *t, uint32_t op, uint64_t addr, uint64_t bytes, uint32_t dev,
                uint32_t kind, uint64_t ts)
{
	struct gt_rec_memory m = {0};

	m.op = op;
	m.address = addr;
	m.bytes = bytes;
	m.device_id = dev;
	m.mem_kind = kind;
	m.ts_ns = ts;
	put(t, &m, GT_REC_MEMORY, sizeof(m));
}

static void nvtx(struct tw *t, uint32_t dom, uint32_t msg, uint32_t kind, uint64_t start,
                 uint64_t dur)
{
	struct gt_rec_nvtx n = {0};

	n.domain_id = dom;
	n.message_id = msg;
	n.kind = kind;
	n.start_ns = start;
	n.end_ns = start + dur;
	put(t, &n, GT_REC_NVTX, sizeof(n));
}

static void loss(struct tw *t, uint32_t source, uint32_t kind, uint64_t count)
{
	struct gt_rec_loss l = {0};

	l.source = source;
	l.kind = kind;
	l.count = count;
	put(t, &l, GT_REC_LOSS, sizeof(l));
}

static void process(struct tw *t, uint32_t pid, uint32_t cmdline_id, int32_t rank)
{
	struct gt_rec_process p = {0};

	p.hdr.pid = pid;
	p.cmdline_id = cmdline_id;
	p.rank = rank;
	p.local_rank = -1;
	p.world_size = -1;
	put(t, &p, GT_REC_PROCESS, sizeof(p));
}

static void process_end(struct tw *t, uint32_t pid, uint32_t how, int32_t code)
{
	struct gt_rec_process_end e = {0};

	e.hdr.pid = pid;
	e.how = how;
	e.code = code;
	put(t, &e, GT_REC_PROCESS_END, sizeof(e));
}

static void device(struct tw *t, uint32_t id, uint32_t name_id)
{
	struct gt_rec_device d = {0};

	d.device_id = id;
	d.name_id = name_id;
	put(t, &d, GT_REC_DEVICE, sizeof(d));
}

/* ---- running reports ---- */

static char *report(struct gt_reader *r, unsigned reports, unsigned format, bool mangled)
{
	struct gt_stats_options o = {.reports = reports, .format = format, .mangled = mangled};
	const char *msg = NULL;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(gt_stats_report(r, f, &o, &msg), 0);
	fclose(f);
	return buf;
}

static char *summary(struct gt_reader *r)
{
	const char *msg = NULL;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(gt_stats_summary(r, f, &msg), 0);
	fclose(f);
	return buf;
}

/* Kernels: gemm 1000/2000/3000/10000 ns, kernel() 100/100/120 ns, vecAdd 50 ns. */
static struct gt_reader *kernel_trace(void)
{
	struct tw t;

	tw_open(&t);
	str(&t, 1, "_Z4gemmIfEvPT_i");
	str(&t, 2, "vecAdd");
	str(&t, 3, "_Z6kernelPfi");
	kernel(&t, 1, 1000, 1000);
	kernel(&t, 3, 1500, 100);
	kernel(&t, 1, 3000, 2000);
	kernel(&t, 2, 6000, 50);
	kernel(&t, 3, 7000, 100);
	kernel(&t, 1, 8000, 3000);
	kernel(&t, 3, 12000, 120);
	kernel(&t, 1, 13000, 10000);
	return tw_close(&t);
}

START_TEST(test_kernels_csv)
{
	struct gt_reader *r = kernel_trace();
	char *out = report(r, GT_STATS_REPORT_KERNELS, GT_STATS_FORMAT_CSV, false);

	/* median of gemm: the histogram middles of 2000 (2003) and 3000 (2999), averaged:
	 * 2501 against the exact 2500; below 128 ns values are exact */
	ck_assert_str_eq(out,
	                 "time_pct,total_ns,instances,avg_ns,median_ns,min_ns,max_ns,stddev_ns,"
	                 "p99_ns,name\n"
	                 "97.74,16000,4,4000.0,2501.0,1000,10000,4082.5,10000,"
	                 "\"void gemm<float>(float*, int)\"\n"
	                 "1.95,320,3,106.7,100.0,100,120,11.5,120,\"kernel(float*, int)\"\n"
	                 "0.31,50,1,50.0,50.0,50,50,0.0,50,vecAdd\n");
	free(out);
	out = report(r, GT_STATS_REPORT_KERNELS, GT_STATS_FORMAT_CSV, true);
	ck_assert_ptr_nonnull(strstr(out, ",10000,_Z4gemmIfEvPT_i\n"));
	ck_assert_ptr_nonnull(strstr(out, ",120,_Z6kernelPfi\n"));
	free(out);
	gt_reader_close(r);
}
END_TEST

/* --base-names: gemm<float> and gemm<double> are one row "gemm", as Nsight Systems' :base
 * reports them; and in table format a name of kilobytes is cut at 160 characters */
START_TEST(test_kernels_base_names)
{
	struct gt_stats_options o = {.reports = GT_STATS_REPORT_KERNELS,
	                             .format = GT_STATS_FORMAT_CSV,
	                             .base_names = true};
	char *buf = NULL, name[400], *line;
	size_t len = 0;
	struct tw t;
	struct gt_reader *r;
	FILE *f;

	tw_open(&t);
	str(&t, 1, "_Z4gemmIfEvPT_i");
	str(&t, 2, "_Z4gemmIdEvPT_i");
	str(&t, 3, "_Z6kernelPfi");
	memset(name, 'x', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	str(&t, 4, name);
	kernel(&t, 1, 1000, 1000);
	kernel(&t, 2, 3000, 3000);
	kernel(&t, 3, 7000, 100);
	kernel(&t, 4, 8000, 10);
	r = tw_close(&t);
	f = open_memstream(&buf, &len);
	ck_assert_int_eq(gt_stats_report(r, f, &o, NULL), 0);
	fclose(f);
	ck_assert_ptr_nonnull(strstr(buf, ",4000,2,2000.0,"));
	ck_assert_ptr_nonnull(strstr(buf, ",3000,gemm\n"));
	ck_assert_ptr_nonnull(strstr(buf, ",100,kernel\n"));
	ck_assert_ptr_nonnull(strstr(buf, name)); /* CSV: whole */
	free(buf);
	buf = report(r, GT_STATS_REPORT_KERNELS, GT_STATS_FORMAT_TABLE, false);
	line = strstr(buf, "xxx");
	ck_assert_ptr_nonnull(line);
	ck_assert_uint_eq(strcspn(line, "\n"), GT_STATS_TABLE_TEXT_MAX);
	ck_assert_int_eq(strncmp(line + GT_STATS_TABLE_TEXT_MAX - 4, "x...\n", 5), 0);
	free(buf);
	gt_reader_close(r);
}
END_TEST

START_TEST(test_kernels_table)
{
	struct gt_reader *r = kernel_trace();
	char *out = report(r, GT_STATS_REPORT_KERNELS, GT_STATS_FORMAT_TABLE, false);

	ck_assert_str_eq(out,
	                 "GPU kernels\n"
	                 "Time %      Total  Instances       Avg       Med       Min        Max"
	                 "    StdDev        P99  Name\n"
	                 " 97.74  16.000 us          4  4.000 us  2.501 us  1.000 us  10.000 us"
	                 "  4.082 us  10.000 us  void gemm<float>(float*, int)\n"
	                 "  1.95     320 ns          3  106.7 ns    100 ns    100 ns     120 ns"
	                 "   11.5 ns     120 ns  kernel(float*, int)\n"
	                 "  0.31      50 ns          1     50 ns     50 ns     50 ns      50 ns"
	                 "      0 ns      50 ns  vecAdd\n");
	free(out);
	gt_reader_close(r);
}
END_TEST

START_TEST(test_table_limit)
{
	struct gt_reader *r = kernel_trace();
	struct gt_stats_options o = {.reports = GT_STATS_REPORT_KERNELS, .limit = 1};
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	ck_assert_int_eq(gt_stats_report(r, f, &o, NULL), 0);
	fclose(f);
	ck_assert_ptr_nonnull(
	        strstr(buf, "  void gemm<float>(float*, int)\n  ... 2 more not shown\n"));
	ck_assert_ptr_null(strstr(buf, "vecAdd"));
	free(buf);
	gt_reader_close(r);
}
END_TEST

START_TEST(test_kernels_json)
{
	struct gt_reader *r = kernel_trace();
	char *out = report(r, GT_STATS_REPORT_KERNELS, GT_STATS_FORMAT_JSON, false);
	cJSON *doc = cJSON_Parse(out), *k, *row;

	ck_assert_msg(doc != NULL, "invalid JSON: %s", out);
	ck_assert_str_eq(
	        cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "trace"), "host")->valuestring,
	        "testhost");
	ck_assert_double_eq(
	        cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "trace"), "span_ns")->valuedouble,
	        22000);
	k = cJSON_GetObjectItem(doc, "kernels");
	ck_assert(cJSON_IsArray(k));
	ck_assert_int_eq(cJSON_GetArraySize(k), 3);
	row = cJSON_GetArrayItem(k, 0);
	ck_assert_str_eq(cJSON_GetObjectItem(row, "name")->valuestring,
	                 "void gemm<float>(float*, int)");
	ck_assert_double_eq(cJSON_GetObjectItem(row, "total_ns")->valuedouble, 16000);
	ck_assert_double_eq(cJSON_GetObjectItem(row, "instances")->valuedouble, 4);
	ck_assert_double_eq(cJSON_GetObjectItem(row, "avg_ns")->valuedouble, 4000);
	ck_assert_double_eq(cJSON_GetObjectItem(row, "min_ns")->valuedouble, 1000);
	ck_assert_double_eq(cJSON_GetObjectItem(row, "max_ns")->valuedouble, 10000);
	ck_assert_double_eq(cJSON_GetObjectItem(row, "p99_ns")->valuedouble, 10000);
	ck_assert_double_eq(cJSON_GetObjectItem(row, "median_ns")->valuedouble, 2501);
	ck_assert_double_eq_tol(cJSON_GetObjectItem(row, "stddev_ns")->valuedouble, sqrt(50e6 / 3),
	                        1e-6);
	ck_assert_double_eq_tol(cJSON_GetObjectItem(row, "time_pct")->valuedouble,
	                        100.0 * 16000 / 16370, 1e-9);
	row = cJSON_GetArrayItem(k, 1);
	/* avg is exact: 320 / 3 */
	ck_assert_double_eq(cJSON_GetObjectItem(row, "avg_ns")->valuedouble, 320.0 / 3);
	cJSON_Delete(doc);
	free(out);
	gt_reader_close(r);
}
END_TEST

static struct gt_reader *api_trace(void)
{
	struct tw t;

	tw_open(&t);
	str(&t, 1, "cudaLaunchKernel");
	str(&t, 2, "cudaMalloc");
	str(&t, 3, "cuMemAlloc_v2");
	str(&t, 4, "cudaStreamQuery");
	str(&t, 5, "cudaFoo");
	api(&t, 1, 100, 10, 0, GT_API_RUNTIME);
	api(&t, 1, 200, 20, 0, GT_API_RUNTIME);
	api(&t, 1, 300, 30, 0, GT_API_RUNTIME);
	api(&t, 2, 400, 500, 0, GT_API_RUNTIME);
	api(&t, 2, 1000, 700, 2, GT_API_RUNTIME);
	api(&t, 3, 2000, 40, 2, GT_API_DRIVER);
	api(&t, 4, 3000, 5, 600, GT_API_RUNTIME);
	api(&t, 4, 3100, 5, 600, GT_API_RUNTIME);
	api(&t, 5, 3200, 1, 12345, GT_API_RUNTIME);
	return tw_close(&t);
}

START_TEST(test_api_and_errors)
{
	struct gt_reader *r = api_trace();
	char *out = report(r, GT_STATS_REPORT_API, GT_STATS_FORMAT_CSV, false);

	ck_assert_str_eq(out,
	                 "time_pct,total_ns,calls,avg_ns,median_ns,min_ns,max_ns,stddev_ns,p99_ns,"
	                 "name\n"
	                 "91.53,1200,2,600.0,600.0,500,700,141.4,700,cudaMalloc\n"
	                 "4.58,60,3,20.0,20.0,10,30,10.0,30,cudaLaunchKernel\n"
	                 "3.05,40,1,40.0,40.0,40,40,0.0,40,cuMemAlloc_v2\n"
	                 "0.76,10,2,5.0,5.0,5,5,0.0,5,cudaStreamQuery\n"
	                 "0.08,1,1,1.0,1.0,1,1,0.0,1,cudaFoo\n");
	free(out);
	out = report(r, GT_STATS_REPORT_ERRORS, GT_STATS_FORMAT_CSV, false);
	ck_assert_str_eq(out, "count,code,error,domain,function\n"
	                      "2,600,cudaErrorNotReady,runtime,cudaStreamQuery\n"
	                      "1,2,CUDA_ERROR_OUT_OF_MEMORY,driver,cuMemAlloc_v2\n"
	                      "1,12345,,runtime,cudaFoo\n"
	                      "1,2,cudaErrorMemoryAllocation,runtime,cudaMalloc\n");
	free(out);
	out = report(r, GT_STATS_REPORT_ERRORS, GT_STATS_FORMAT_TABLE, false);
	ck_assert_str_eq(out, "Failed API calls\n"
	                      "Count   Code  Error                      Domain   Function\n"
	                      "    2    600  cudaErrorNotReady          runtime  cudaStreamQuery\n"
	                      "    1      2  CUDA_ERROR_OUT_OF_MEMORY   driver   cuMemAlloc_v2\n"
	                      "    1  12345  -                          runtime  cudaFoo\n"
	                      "    1      2  cudaErrorMemoryAllocation  runtime  cudaMalloc\n");
	free(out);
	gt_reader_close(r);
}
END_TEST

static struct gt_reader *xfer_trace(void)
{
	struct tw t;

	tw_open(&t);
	copy(&t, GT_MEMCPY_HTOD, 1000, 100000, 1000000);
	copy(&t, GT_MEMCPY_DTOH, 200000, 50000, 1000000);
	copy(&t, GT_MEMCPY_HTOD, 300000, 300000, 3000000);
	mset(&t, GT_MEM_DEVICE, 700000, 1000, 4096);
	mset(&t, GT_MEM_DEVICE, 800000, 1000, 4096);
	return tw_close(&t);
}

START_TEST(test_memcpy_memset)
{
	struct gt_reader *r = xfer_trace();
	char *out = report(r, GT_STATS_REPORT_MEMCPY | GT_STATS_REPORT_MEMSET, GT_STATS_FORMAT_CSV,
	                   false);
	const char *head = "time_pct,total_ns,count,avg_ns,median_ns,min_ns,max_ns,stddev_ns,"
	                   "p99_ns,total_bytes,avg_bytes,min_bytes,max_bytes,bandwidth_gbps,";
	char want[2048];

	snprintf(want, sizeof(want),
	         "# memcpy\n%skind\n"
	         "88.89,400000,2,200000.0,200000.0,100000,300000,141421.4,300000,4000000,"
	         "2000000.0,1000000,3000000,10.000,HtoD\n"
	         "11.11,50000,1,50000.0,50000.0,50000,50000,0.0,50000,1000000,1000000.0,1000000,"
	         "1000000,20.000,DtoH\n"
	         "\n# memset\n%smemory\n"
	         "100.00,2000,2,1000.0,1000.0,1000,1000,0.0,1000,8192,4096.0,4096,4096,4.096,"
	         "device\n",
	         head, head);
	ck_assert_str_eq(out, want);
	free(out);
	gt_reader_close(r);
}
END_TEST

static struct gt_reader *memory_trace(void)
{
	struct tw t;

	tw_open(&t);
	str(&t, 1, "Test GPU");
	device(&t, 0, 1);
	mem(&t, GT_MEMORY_ALLOC, 0x1000, 1000, 0, GT_MEM_DEVICE, 10);
	mem(&t, GT_MEMORY_ALLOC, 0x2000, 5000, 0, GT_MEM_DEVICE, 20);
	mem(&t, GT_MEMORY_FREE, 0x1000, 1000, 0, GT_MEM_DEVICE, 30);
	mem(&t, GT_MEMORY_ALLOC, 0x3000, 2000, 0, GT_MEM_DEVICE, 40);
	mem(&t, GT_MEMORY_FREE, 0x3000, 2000, 0, GT_MEM_DEVICE, 50);
	mem(&t, GT_MEMORY_ALLOC, 0x9000, 300, 1, GT_MEM_DEVICE, 60);
	mem(&t, GT_MEMORY_ALLOC, 0x7000, 4096, 0, GT_MEM_PINNED, 70);
	mem(&t, GT_MEMORY_FREE, 0x7000, 4096, 0, GT_MEM_PINNED, 80);
	mem(&t, GT_MEMORY_FREE, 0xdead, 0, 0, GT_MEM_DEVICE, 90);
	return tw_close(&t);
}

START_TEST(test_memory)
{
	struct gt_reader *r = memory_trace();
	char *out = report(r, GT_STATS_REPORT_MEMORY, GT_STATS_FORMAT_CSV, false);

	/* GPU 1 has no DEVICE record (no name, no uuid); pinned memory is no GPU's */
	ck_assert_str_eq(out, "# memory\n"
	                      "gpu,peak_bytes,end_bytes,allocs,frees,alloc_bytes,name,uuid\n"
	                      "0,7000,5000,3,2,8000,Test GPU,\n"
	                      "1,300,300,1,0,300,,\n"
	                      ",4096,0,1,1,4096,host (pinned and pageable),\n"
	                      "\n# memory_never_freed\n"
	                      "count,bytes,unmatched_frees\n"
	                      "2,5300,1\n"
	                      "\n# memory_never_freed_largest\n"
	                      "bytes,pid,gpu,memory,at_ns,freed,address\n"
	                      "5000,4242,0,device,10,false,0x2000\n"
	                      "300,4242,1,device,50,false,0x9000\n"
	                      "\n# memory_largest\n"
	                      "bytes,pid,gpu,memory,at_ns,freed,address\n"
	                      "5000,4242,0,device,10,false,0x2000\n"
	                      "4096,4242,,pinned,60,true,0x7000\n"
	                      "2000,4242,0,device,30,true,0x3000\n"
	                      "1000,4242,0,device,0,true,0x1000\n"
	                      "300,4242,1,device,50,false,0x9000\n");
	free(out);
	gt_reader_close(r);
}
END_TEST

START_TEST(test_nvtx)
{
	struct gt_reader *r;
	struct tw t;
	char *out;

	tw_open(&t);
	str(&t, 1, "step");
	str(&t, 2, "io");
	str(&t, 3, "load");
	str(&t, 4, "tick");
	nvtx(&t, 0, 1, GT_NVTX_PUSH_POP, 100, 1000);
	nvtx(&t, 2, 3, GT_NVTX_START_END, 150, 500);
	nvtx(&t, 0, 1, GT_NVTX_PUSH_POP, 2000, 3000);
	nvtx(&t, 0, 4, GT_NVTX_MARK, 2500, 0);
	r = tw_close(&t);
	out = report(r, GT_STATS_REPORT_NVTX, GT_STATS_FORMAT_CSV, false);
	ck_assert_str_eq(out,
	                 "time_pct,total_ns,instances,avg_ns,median_ns,min_ns,max_ns,stddev_ns,"
	                 "p99_ns,style,domain,range\n"
	                 "88.89,4000,2,2000.0,2000.0,1000,3000,1414.2,3000,PushPop,,step\n"
	                 "11.11,500,1,500.0,500.0,500,500,0.0,500,StartEnd,io,load\n");
	free(out);
	gt_reader_close(r);
}
END_TEST

static struct gt_reader *loss_trace(void)
{
	struct tw t;

	tw_open(&t);
	str(&t, 1, "k");
	kernel(&t, 1, 100, 10);
	loss(&t, GT_LOSS_RING_FULL, GT_REC_KERNEL, 10);
	loss(&t, GT_LOSS_RING_FULL, GT_REC_API, 5);
	loss(&t, GT_LOSS_CUPTI_DROPPED, GT_REC_NONE, 7);
	return tw_close(&t);
}

START_TEST(test_losses)
{
	struct gt_reader *r = loss_trace();
	char *out = report(r, GT_STATS_REPORT_LOSSES, GT_STATS_FORMAT_CSV, false);
	const struct gt_reader_status *s = gt_reader_status(r);
	char want[1024];

	snprintf(want, sizeof(want),
	         "# losses\n"
	         "source,records,detail\n"
	         "cupti_dropped,7,unspecified 7\n"
	         "ring_full,15,\"kernel 10, api 5\"\n"
	         "torn_record,0,\n"
	         "corrupt_ring,0,\n"
	         "buffer_pool,0,\n"
	         "flush_window,0,\n"
	         "damaged_file,0,\n"
	         "nvtx_unrecorded,0,\n"
	         "pm_overflow,0,\n"
	         "pm_decode_lag,0,\n"
	         "\n# reader\n"
	         "recovered,chunks_read,chunks_skipped,bytes_skipped,records_skipped\n"
	         "false,%llu,0,0,0\n",
	         (unsigned long long)s->chunks_read);
	ck_assert_uint_ge(s->chunks_read, 1);
	ck_assert_str_eq(out, want);
	free(out);
	gt_reader_close(r);
}
END_TEST

START_TEST(test_all_json)
{
	struct gt_reader *r;
	struct tw t;
	char *out;
	cJSON *doc, *x;

	tw_open(&t);
	/* a hostile name: quote, backslash, newline, a control byte, invalid UTF-8, and valid
	 * multi-byte UTF-8 */
	str(&t, 1, "bad\"name\\with\nctl\x01 and \xff\xfe and caf\xc3\xa9");
	str(&t, 2, "cudaMalloc");
	kernel(&t, 1, 100, 10);
	api(&t, 2, 50, 40, 2, GT_API_RUNTIME);
	mem(&t, GT_MEMORY_ALLOC, 0x10, 64, 0, GT_MEM_DEVICE, 60);
	loss(&t, GT_LOSS_TORN, GT_REC_MEMCPY, 3);
	r = tw_close(&t);
	out = report(r, 0, GT_STATS_FORMAT_JSON, false);
	doc = cJSON_Parse(out);
	ck_assert_msg(doc != NULL, "invalid JSON: %s", out);
	x = cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "kernels"), 0);
	ck_assert_str_eq(cJSON_GetObjectItem(x, "name")->valuestring,
	                 "bad\"name\\with\nctl\x01 and \xef\xbf\xbd\xef\xbf\xbd and caf\xc3\xa9");
	ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(doc, "memcpy")), 0);
	ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(doc, "memset")), 0);
	ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(doc, "nvtx")), 0);
	x = cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "errors"), 0);
	ck_assert_str_eq(cJSON_GetObjectItem(x, "error")->valuestring, "cudaErrorMemoryAllocation");
	ck_assert_double_eq(cJSON_GetObjectItem(x, "code")->valuedouble, 2);
	x = cJSON_GetObjectItem(doc, "memory_never_freed");
	ck_assert(cJSON_IsObject(x));
	ck_assert_double_eq(cJSON_GetObjectItem(x, "count")->valuedouble, 1);
	ck_assert_double_eq(cJSON_GetObjectItem(x, "bytes")->valuedouble, 64);
	x = cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "memory"), 0);
	ck_assert_double_eq(cJSON_GetObjectItem(x, "peak_bytes")->valuedouble, 64);
	ck_assert(cJSON_IsString(cJSON_GetObjectItem(x, "name")));
	x = cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "losses"), 2);
	ck_assert_str_eq(cJSON_GetObjectItem(x, "source")->valuestring, "torn_record");
	ck_assert_double_eq(cJSON_GetObjectItem(x, "records")->valuedouble, 3);
	ck_assert_str_eq(cJSON_GetObjectItem(x, "detail")->valuestring, "memcpy 3");
	x = cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "losses"), 0);
	ck_assert(cJSON_IsNull(cJSON_GetObjectItem(x, "detail")));
	x = cJSON_GetObjectItem(doc, "reader");
	ck_assert(cJSON_IsFalse(cJSON_GetObjectItem(x, "recovered")));
	cJSON_Delete(doc);
	free(out);
	gt_reader_close(r);
}
END_TEST

static char *json_of(const char *s, size_t len)
{
	char *buf = NULL;
	size_t blen = 0;
	FILE *f = open_memstream(&buf, &blen);

	gt_text_json_fputs(f, s, len);
	fclose(f);
	return buf;
}

#define FFFD "\xef\xbf\xbd"

START_TEST(test_json_string)
{
	static const struct {
		const char *in;
		size_t len;
		const char *want;
	} cases[] = {
	        {"plain", 5, "\"plain\""},
	        {"q\"b\\", 4, "\"q\\\"b\\\\\""},
	        /* the one escaping of every output (exporters/common/text.h): controls as \u00XX,
	         * DEL as it is, bytes that are not UTF-8 as U+FFFD each */
	        {"\n\t\x01\x7f", 4, "\"\\u000a\\u0009\\u0001\x7f\""},
	        {"a\0b", 3, "\"a\\u0000b\""},
	        {"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", 14,
	         "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\""},
	        {"\xc0\xaf", 2, "\"" FFFD FFFD "\""},                   /* overlong '/' */
	        {"\xed\xa0\x80", 3, "\"" FFFD FFFD FFFD "\""},          /* UTF-16 surrogate */
	        {"x\xe2\x82", 3, "\"x" FFFD FFFD "\""},                 /* cut short */
	        {"\xf4\x90\x80\x80", 4, "\"" FFFD FFFD FFFD FFFD "\""}, /* > U+10FFFF */
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *got = json_of(cases[i].in, cases[i].len);
		cJSON *v = cJSON_Parse(got);

		ck_assert_msg(strcmp(got, cases[i].want) == 0, "case %zu: %s", i, got);
		ck_assert_msg(v && cJSON_IsString(v), "case %zu does not parse", i);
		cJSON_Delete(v);
		free(got);
	}
}
END_TEST

/* A string longer than the stream writer's pieces (1024 bytes) comes out exactly as escaping
 * it whole gives, whatever sits across a piece's end: a character of 2, 3 or 4 bytes, one cut
 * short, a stray continuation byte. */
START_TEST(test_json_string_long)
{
	static const char *const across[] = {
	        "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80", "\xe2\x82", "\x80\x80", "\"\n",
	};
	char in[3000], whole[6 * sizeof(in) + 2];

	for (size_t a = 0; a < sizeof(across) / sizeof(across[0]); a++)
		for (size_t at = 1018; at <= 1025; at++) {
			size_t alen = strlen(across[a]), len = 2100;
			char *got, *end;

			memset(in, 'x', sizeof(in));
			memcpy(in + at, across[a], alen);
			memcpy(in + at + 1024, across[a], alen); /* and across the second piece */
			whole[0] = '"';
			end = gt_text_json_escape(whole + 1, in, len);
			*end++ = '"';
			*end = '\0';
			got = json_of(in, len);
			ck_assert_msg(strcmp(got, whole) == 0, "case %zu at %zu differs", a, at);
			free(got);
		}
}
END_TEST

START_TEST(test_empty_trace_reports)
{
	struct gt_reader *r;
	struct tw t;
	char *out;
	cJSON *doc;

	tw_open(&t);
	r = tw_close(&t);
	out = report(r, GT_STATS_REPORT_KERNELS | GT_STATS_REPORT_ERRORS, GT_STATS_FORMAT_TABLE,
	             false);
	ck_assert_str_eq(out, "GPU kernels\n  no GPU kernels in this trace\n"
	                      "\nFailed API calls\n  no API call returned an error\n");
	free(out);
	/* nothing allocated: not "every allocation was freed" */
	out = report(r, GT_STATS_REPORT_MEMORY, GT_STATS_FORMAT_TABLE, false);
	ck_assert_ptr_null(strstr(out, "every allocation was freed"));
	ck_assert_ptr_nonnull(strstr(out, "Largest allocations never freed\n  no allocations in "
	                                  "this trace\n"));
	free(out);
	out = report(r, GT_STATS_REPORT_KERNELS, GT_STATS_FORMAT_CSV, false);
	ck_assert_str_eq(out, "time_pct,total_ns,instances,avg_ns,median_ns,min_ns,max_ns,"
	                      "stddev_ns,p99_ns,name\n");
	free(out);
	out = report(r, 0, GT_STATS_FORMAT_JSON, false);
	doc = cJSON_Parse(out);
	ck_assert_msg(doc != NULL, "invalid JSON: %s", out);
	ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(doc, "kernels")), 0);
	ck_assert(cJSON_IsObject(cJSON_GetObjectItem(doc, "memory_never_freed")));
	cJSON_Delete(doc);
	free(out);
	gt_reader_close(r);
}
END_TEST

/* Damaged or surprising records: an undefined name, a reversed span, an allocation at a
 * live address (its free was lost), out-of-range kinds and sources. */
START_TEST(test_odd_records)
{
	struct gt_reader *r;
	struct tw t;
	char *out;

	tw_open(&t);
	kernel(&t, 99, 100, 10);
	{
		struct gt_rec_kernel k = {0};

		k.span.start_ns = 500;
		k.span.end_ns = 400;
		k.name_id = 99;
		put(&t, &k, GT_REC_KERNEL, sizeof(k));
	}
	mem(&t, GT_MEMORY_ALLOC, 0x100, 100, 0, GT_MEM_DEVICE, 10);
	mem(&t, GT_MEMORY_ALLOC, 0x100, 200, 0, GT_MEM_DEVICE, 20);
	copy(&t, 99, 1000, 10, 5);
	loss(&t, 99, 99, 4);
	r = tw_close(&t);
	out = report(r, GT_STATS_REPORT_KERNELS | GT_STATS_REPORT_MEMCPY, GT_STATS_FORMAT_CSV,
	             false);
	ck_assert_str_eq(out,
	                 "# kernels\n"
	                 "time_pct,total_ns,instances,avg_ns,median_ns,min_ns,max_ns,"
	                 "stddev_ns,p99_ns,name\n"
	                 "100.00,10,2,5.0,5.0,0,10,7.1,10,<string 99>\n"
	                 "\n# memcpy\n"
	                 "time_pct,total_ns,count,avg_ns,median_ns,min_ns,max_ns,stddev_ns,"
	                 "p99_ns,total_bytes,avg_bytes,min_bytes,max_bytes,bandwidth_gbps,kind\n"
	                 "100.00,10,1,10.0,10.0,10,10,0.0,10,5,5.0,5,5,0.500,unknown\n");
	free(out);
	out = report(r, GT_STATS_REPORT_MEMORY, GT_STATS_FORMAT_CSV, false);
	ck_assert_ptr_nonnull(strstr(out, "\n0,200,200,2,0,300,,\n"));
	ck_assert_ptr_nonnull(strstr(out, "count,bytes,unmatched_frees\n1,200,0\n"));
	free(out);
	out = report(r, GT_STATS_REPORT_LOSSES, GT_STATS_FORMAT_CSV, false);
	ck_assert_ptr_nonnull(strstr(
	        out, "damaged_file,0,\nnvtx_unrecorded,0,\npm_overflow,0,\npm_decode_lag,0,\n"
	        "unknown,4,unspecified 4\n\n# reader"));
	free(out);
	gt_reader_close(r);
}
END_TEST

START_TEST(test_summary)
{
	struct gt_reader *r;
	struct tw t;
	char *out;

	tw_open(&t);
	str(&t, 1, "_Z4gemmIfEvPT_i");
	str(&t, 2, "cudaLaunchKernel");
	str(&t, 3, "./train --epochs 1");
	str(&t, 4, "NVIDIA H200");
	str(&t, 5, "cudaMalloc");
	str(&t, 6, "python worker.py");
	process(&t, PID, 3, 0);
	process(&t, PID + 1, 6, -1);
	device(&t, 0, 4);
	for (int i = 0; i < 3; i++) {
		api(&t, 2, 1000u * (unsigned)i, 100, 0, GT_API_RUNTIME);
		kernel(&t, 1, 1000u * (unsigned)i + 200, 2000);
	}
	api(&t, 5, 9000, 400, 2, GT_API_RUNTIME);
	copy(&t, GT_MEMCPY_HTOD, 10000, 1000, 2048);
	mset(&t, GT_MEM_DEVICE, 12000, 500, 1024);
	mem(&t, GT_MEMORY_ALLOC, 0x1000, 3u << 20, 0, GT_MEM_DEVICE, 13000);
	loss(&t, GT_LOSS_RING_FULL, GT_REC_KERNEL, 1234);
	{
		/* what merge or --reindex keeps of a damaged file: chunks, no lost records */
		struct gt_rec_loss l = {0};

		l.source = GT_LOSS_FILE;
		l.count = 1;
		l.bytes = 4096;
		l.records = 300;
		put(&t, &l, GT_REC_LOSS, sizeof(l));
	}
	process_end(&t, PID, GT_END_EXIT, 0);
	process_end(&t, PID + 1, GT_END_SIGNAL, 9);
	r = tw_close(&t);
	out = summary(r);
	ck_assert_str_eq(out, "GPU kernels: 3 launches of 1 kernel, 6.000 us of GPU time\n"
	                      "  100.00%     6.000 us          3 x  void gemm<float>(float*, int)\n"
	                      "Copies:\n"
	                      "  HtoD           1 x     2.00 KiB in    1.000 us  (2.05 GB/s)\n"
	                      "Memsets:\n"
	                      "  all            1 x     1.00 KiB in      500 ns  (2.05 GB/s)\n"
	                      "API calls: 4 calls, 700 ns on CPU threads\n"
	                      "       400 ns          1 x  cudaMalloc\n"
	                      "       300 ns          3 x  cudaLaunchKernel\n"
	                      "  1 call failed; `gputrace stats --report errors` lists them\n"
	                      "Peak memory in use:\n"
	                      "  GPU 0 (NVIDIA H200): 3.00 MiB\n"
	                      "  1 allocation (3.00 MiB) never freed\n"
	                      "Lost records: 1,234 (ring_full 1,234); the trace is incomplete\n"
	                      "Damaged file: 1 chunk (4096 bytes) and 0 malformed records skipped "
	                      "(recorded in the trace by merge or --reindex); the trace is "
	                      "incomplete\n"
	                      "Processes: 2\n"
	                      "  pid 4242 (rank 0) ./train --epochs 1: exited with status 0\n"
	                      "  pid 4243 python worker.py: killed by signal 9 (SIGKILL)\n");
	free(out);
	/* its row: the records those chunks held, and the chunks in words */
	out = report(r, GT_STATS_REPORT_LOSSES, GT_STATS_FORMAT_CSV, false);
	ck_assert_ptr_nonnull(strstr(out, "\nring_full,1234,kernel 1234\n"));
	ck_assert_ptr_nonnull(strstr(out, "\ndamaged_file,300,1 chunk (4096 bytes) and 0 malformed "
	                                  "records skipped (recorded in the trace by merge or "
	                                  "--reindex)\n"));
	free(out);
	gt_reader_close(r);
}
END_TEST

/* Two ranks that each see their own GPU as device 0 (two uuids), rank 0 with 256 MiB of
 * device memory at its peak and rank 1 with 512 MiB: two GPUs, each with its own peak, named
 * as every output names them (tests/cli-catalog.sh checks info, the reports and the exports).
 * Before the catalog, the summary said "GPU 0: 768.00 MiB". */
START_TEST(test_two_ranks_device_zero)
{
	struct synth_opts o = {.kernels = 64,
	                       .names = 4,
	                       .processes = 2,
	                       .seed = 1,
	                       .device_zero = true,
	                       .memory = true};
	struct gt_reader *r;
	union synth_buf b;
	struct synth s;
	struct tw t;
	char *out;

	tw_open(&t);
	synth_init(&s, &o);
	while (synth_next(&s, &b))
		ck_assert_int_eq(gt_writer_write(t.w, &b.rec.hdr), 0);
	r = tw_close(&t);
	out = summary(r);
	ck_assert_ptr_nonnull(strstr(out, "Peak memory in use:\n"
	                                  "  GPU 0 (NVIDIA H200): 256.00 MiB\n"
	                                  "  GPU 1 (NVIDIA H200): 512.00 MiB\n"
	                                  "Lost records: none\n"
	                                  "Processes: 2\n"
	                                  "  pid 4100 (rank 0) python train.py --epochs 1 "
	                                  "--batch-size 64: exited with status 0\n"
	                                  "  pid 4107 (rank 1) python train.py --epochs 1 "
	                                  "--batch-size 64: killed by signal 9 (SIGKILL)\n"));
	free(out);
	gt_reader_close(r);
}
END_TEST

START_TEST(test_summary_no_cuda)
{
	struct gt_reader *r;
	struct tw t;
	char *out;
	struct gt_rec_notice n = {0};

	tw_open(&t);
	str(&t, 1, "./cpu-only");
	str(&t, 2, "CUPTI subscribe failed: another profiler is attached");
	process(&t, PID, 1, -1);
	n.severity = GT_NOTICE_ERROR;
	n.code = GT_NOTICE_CUPTI_SUBSCRIBE_FAILED;
	n.message_id = 2;
	put(&t, &n, GT_REC_NOTICE, sizeof(n));
	process_end(&t, PID, GT_END_EXIT, 3);
	r = tw_close(&t);
	out = summary(r);
	ck_assert_str_eq(out,
	                 "gputrace: no CUDA activity was seen.\n"
	                 "Likely reasons:\n"
	                 "  - the program did not use CUDA, or ended before initializing it;\n"
	                 "  - no NVIDIA GPU or driver is visible to it (a container needs the GPU "
	                 "passed in);\n"
	                 "  - the CUDA driver did not load the injection library "
	                 "(CUDA_INJECTION64_PATH\n"
	                 "    was overridden, or the program links an old static CUDA runtime);\n"
	                 "  - another profiler (Nsight Systems, the PyTorch profiler, ...) held "
	                 "CUPTI;\n"
	                 "  - a capture range was requested and never started.\n"
	                 "The traced process said: CUPTI subscribe failed: another profiler is "
	                 "attached\n"
	                 "Try `gputrace doctor` to check this machine.\n"
	                 "Lost records: none\n"
	                 "Processes: 1\n"
	                 "  pid 4242 ./cpu-only: exited with status 3\n");
	free(out);
	gt_reader_close(r);
}
END_TEST

/* Warnings (a missed final flush) are printed after the memory section; info notices not. */
START_TEST(test_summary_notices)
{
	struct gt_reader *r;
	struct tw t;
	char *out;
	struct gt_rec_notice n = {0};

	tw_open(&t);
	str(&t, 1, "_Z4stepv");
	str(&t, 2, "killed by signal 9 before its final flush: the last 100 ms may be missing");
	str(&t, 3, "capture started");
	kernel(&t, 1, 1000, 500);
	n.severity = GT_NOTICE_INFO;
	n.code = GT_NOTICE_CAPTURE_START;
	n.message_id = 3;
	put(&t, &n, GT_REC_NOTICE, sizeof(n));
	n.severity = GT_NOTICE_WARNING;
	n.code = GT_NOTICE_FLUSH_WINDOW;
	n.message_id = 2;
	put(&t, &n, GT_REC_NOTICE, sizeof(n));
	r = tw_close(&t);
	out = summary(r);
	ck_assert_ptr_nonnull(strstr(out, "Notices:\n  pid 4242: killed by signal 9 before its "
	                                  "final flush: the last 100 ms may be missing\n"
	                                  "Lost records: none\n"));
	ck_assert_ptr_null(strstr(out, "capture started"));
	free(out);
	gt_reader_close(r);
}
END_TEST

/* NVTX alone: still "no CUDA activity", with a line saying NVTX was recorded. */
START_TEST(test_summary_nvtx_only)
{
	struct gt_reader *r;
	struct tw t;
	char *out;

	tw_open(&t);
	str(&t, 1, "step");
	nvtx(&t, 0, 1, GT_NVTX_PUSH_POP, 1000, 500);
	nvtx(&t, 0, 1, GT_NVTX_PUSH_POP, 2000, 500);
	r = tw_close(&t);
	out = summary(r);
	ck_assert_ptr_nonnull(strstr(out, "gputrace: no CUDA activity was seen.\n(2 NVTX records: "
	                                  "the program ran under the tracer, but none of its CUDA "
	                                  "work was recorded.)\nLikely reasons:\n"));
	free(out);
	gt_reader_close(r);
}
END_TEST

START_TEST(test_summary_reads_twice)
{
	/* `run --stats` prints the summary and then the report from the same reader */
	struct gt_reader *r = kernel_trace();
	char *a = summary(r), *b = summary(r);
	char *c = report(r, GT_STATS_REPORT_KERNELS, GT_STATS_FORMAT_CSV, true);

	ck_assert_str_eq(a, b);
	ck_assert_ptr_nonnull(
	        strstr(a, "GPU kernels: 8 launches of 3 kernels, 16.370 us of GPU time\n"));
	ck_assert_ptr_nonnull(strstr(c, "0.31,50,1,50.0,50.0,50,50,0.0,50,vecAdd\n"));
	free(a);
	free(b);
	free(c);
	gt_reader_close(r);
}
END_TEST

/* ---- real traces recorded on an H200 (tests/data) ---- */

static const char *data_dir; /* from argv[1]; NULL skips these tests */

static struct gt_reader *open_data(const char *name)
{
	struct gt_reader *r;
	const char *msg = NULL;
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", data_dir, name);
	ck_assert_msg(gt_reader_open(path, &r, &msg) == 0, "%s: %s", path, msg);
	return r;
}

/* tests/data/example.gtrace: examples/ (matmul, relu, reduce_sum over 20 steps with
 * NVTX ranges, async copies and memsets, cudaMallocAsync, one pinned buffer). Every
 * figure below was cross-checked against the raw records (gputrace export -f csv). */
START_TEST(test_real_example_reports)
{
	struct gt_reader *r;
	char *out;

	if (!data_dir)
		return;
	r = open_data("example.gtrace");
	out = report(r,
	             GT_STATS_REPORT_KERNELS | GT_STATS_REPORT_MEMCPY | GT_STATS_REPORT_MEMSET |
	                     GT_STATS_REPORT_NVTX | GT_STATS_REPORT_ERRORS,
	             GT_STATS_FORMAT_CSV, false);
	ck_assert_str_eq(
	        out,
	        "# kernels\n"
	        "time_pct,total_ns,instances,avg_ns,median_ns,min_ns,max_ns,stddev_ns,p99_ns,name\n"
	        "85.57,321187,40,8029.7,7903.0,7648,9792,386.7,9792,"
	        "\"matmul(float const*, float const*, float*, int)\"\n"
	        "8.62,32353,20,1617.7,1603.0,1600,1760,36.7,1760,\"reduce_sum(float const*, "
	        "float*, "
	        "int)\"\n"
	        "5.81,21824,20,1091.2,1091.0,1055,1344,64.0,1344,\"relu(float*, int)\"\n"
	        "\n# memcpy\n"
	        "time_pct,total_ns,count,avg_ns,median_ns,min_ns,max_ns,stddev_ns,p99_ns,total_"
	        "bytes,"
	        "avg_bytes,min_bytes,max_bytes,bandwidth_gbps,kind\n"
	        "80.88,180034,22,8183.4,7807.0,7616,14080,1390.7,14080,5767168,262144.0,262144,"
	        "262144,"
	        "32.034,HtoD\n"
	        "19.12,42559,20,2127.9,2183.0,1792,2400,136.8,2400,80,4.0,4,4,0.002,DtoH\n"
	        "\n# memset\n"
	        "time_pct,total_ns,count,avg_ns,median_ns,min_ns,max_ns,stddev_ns,p99_ns,total_"
	        "bytes,"
	        "avg_bytes,min_bytes,max_bytes,bandwidth_gbps,memory\n"
	        "100.00,37924,40,948.1,929.0,768,1600,185.1,1600,5242960,131074.0,4,262144,138.249,"
	        "device\n"
	        "\n# nvtx\n"
	        "time_pct,total_ns,instances,avg_ns,median_ns,min_ns,max_ns,stddev_ns,p99_ns,style,"
	        "domain,range\n"
	        "53.68,11250392,20,562519.6,146431.0,140714,8389557,1842337.4,8389557,PushPop,,"
	        "step\n"
	        "43.29,9072053,20,453602.7,58111.0,54804,7926741,1759005.3,7926741,PushPop,,"
	        "backward\n"
	        "3.04,636305,20,31815.2,19199.0,15518,260015,53821.0,260015,PushPop,,forward\n"
	        "\n# errors\n"
	        "count,code,error,domain,function\n");
	free(out);
	out = report(r, GT_STATS_REPORT_MEMORY | GT_STATS_REPORT_LOSSES, GT_STATS_FORMAT_CSV,
	             false);
	ck_assert_str_eq(out, "# memory\n"
	                      "gpu,peak_bytes,end_bytes,allocs,frees,alloc_bytes,name,uuid\n"
	                      "0,1572868,0,26,26,6553604,NVIDIA H200,"
	                      "GPU-83881cc9-28e3-dc2b-4018-291d9fb13ed9\n"
	                      ",262144,0,1,1,262144,host (pinned and pageable),\n"
	                      "\n# memory_never_freed\n"
	                      "count,bytes,unmatched_frees\n"
	                      "0,0,0\n"
	                      "\n# memory_never_freed_largest\n"
	                      "bytes,pid,gpu,memory,at_ns,freed,address\n"
	                      "\n# memory_largest\n"
	                      "bytes,pid,gpu,memory,at_ns,freed,address\n"
	                      "262144,660,,pinned,223206995,true,0x7f3ef1e00000\n"
	                      "262144,660,0,device,223393637,true,0x7f3ef6800000\n"
	                      "262144,660,0,device,223407530,true,0x7f3ef6840000\n"
	                      "262144,660,0,device,223411938,true,0x7f3ef6880000\n"
	                      "262144,660,0,device,223416425,true,0x7f3ef68c0000\n"
	                      "262144,660,0,device,223420118,true,0x7f3ef6900000\n"
	                      "262144,660,0,device,231779881,true,0x302000000\n"
	                      "262144,660,0,device,232159680,true,0x302000000\n"
	                      "262144,660,0,device,232326013,true,0x302000000\n"
	                      "262144,660,0,device,232491057,true,0x302000000\n"
	                      "\n# losses\n"
	                      "source,records,detail\n"
	                      "cupti_dropped,0,\n"
	                      "ring_full,0,\n"
	                      "torn_record,0,\n"
	                      "corrupt_ring,0,\n"
	                      "buffer_pool,0,\n"
	                      "flush_window,0,\n"
	                      "damaged_file,0,\n"
	                      "nvtx_unrecorded,0,\n"
	                      "pm_overflow,0,\n"
	                      "pm_decode_lag,0,\n"
	                      "\n# reader\n"
	                      "recovered,chunks_read,chunks_skipped,bytes_skipped,records_skipped\n"
	                      "false,1,0,0,0\n");
	free(out);
	gt_reader_close(r);
}
END_TEST

START_TEST(test_real_example_summary)
{
	struct gt_reader *r;
	char *out;

	if (!data_dir)
		return;
	r = open_data("example.gtrace");
	out = summary(r);
	ck_assert_str_eq(
	        out, "GPU kernels: 80 launches of 3 kernels, 375.364 us of GPU time\n"
	             "   85.57%   321.187 us         40 x  matmul(float const*, float const*, "
	             "float*, int)\n"
	             "    8.62%    32.353 us         20 x  reduce_sum(float const*, float*, int)\n"
	             "    5.81%    21.824 us         20 x  relu(float*, int)\n"
	             "Copies:\n"
	             "  HtoD          22 x     5.50 MiB in  180.034 us  (32.03 GB/s)\n"
	             "  DtoH          20 x         80 B in   42.559 us  (1.88 MB/s)\n"
	             "Memsets:\n"
	             "  all           40 x     5.00 MiB in   37.924 us  (138.25 GB/s)\n"
	             "API calls: 257 calls, 124.404 ms on CPU threads\n"
	             "   112.863 ms          1 x  cudaHostAlloc\n"
	             "     8.715 ms         20 x  cudaMallocAsync\n"
	             "     1.033 ms         20 x  cudaStreamSynchronize\n"
	             "Peak memory in use:\n"
	             "  GPU 0 (NVIDIA H200): 1.50 MiB\n"
	             "  host (pinned and pageable): 256.00 KiB\n"
	             "Lost records: none\n"
	             "Processes: 1\n"
	             "  pid 660 build-gpu/examples/gputrace-example: exited with status 0\n");
	free(out);
	gt_reader_close(r);
}
END_TEST

/* tests/data/multistream.gtrace: 800 launches of one kernel over 8 streams from 8 threads,
 * each inside an NVTX "worker" range. */
START_TEST(test_real_multistream)
{
	struct gt_reader *r;
	char *out;
	cJSON *doc, *x;

	if (!data_dir)
		return;
	r = open_data("multistream.gtrace");
	out = report(r, GT_STATS_REPORT_KERNELS | GT_STATS_REPORT_API | GT_STATS_REPORT_NVTX,
	             GT_STATS_FORMAT_CSV, false);
	ck_assert_str_eq(
	        out,
	        "# kernels\n"
	        "time_pct,total_ns,instances,avg_ns,median_ns,min_ns,max_ns,stddev_ns,p99_ns,name\n"
	        "100.00,686789,800,858.5,833.0,800,1183,70.2,1091,\"gt_tag(int*, int)\"\n"
	        "\n# api\n"
	        "time_pct,total_ns,calls,avg_ns,median_ns,min_ns,max_ns,stddev_ns,p99_ns,name\n"
	        "67.88,122436026,1,122436026.0,122436026.0,122436026,122436026,0.0,122436026,"
	        "cudaMalloc\n"
	        "31.93,57591445,800,71989.3,10335.0,6174,10208571,453906.2,1757183,"
	        "cudaLaunchKernel\n"
	        "0.11,191171,1,191171.0,191171.0,191171,191171,0.0,191171,cudaFree\n"
	        "0.06,110734,8,13841.8,12543.0,8888,21317,4565.2,21317,cudaStreamSynchronize\n"
	        "0.02,28637,1,28637.0,28637.0,28637,28637,0.0,28637,cudaDeviceSynchronize\n"
	        "0.01,21658,1,21658.0,21658.0,21658,21658,0.0,21658,cudaMemset\n"
	        "\n# nvtx\n"
	        "time_pct,total_ns,instances,avg_ns,median_ns,min_ns,max_ns,stddev_ns,p99_ns,style,"
	        "domain,range\n"
	        "100.00,121335052,8,15166881.5,15073279.0,14556356,16066502,442220.6,16066502,"
	        "PushPop,,worker\n");
	free(out);
	out = report(r, 0, GT_STATS_FORMAT_JSON, false);
	doc = cJSON_Parse(out);
	ck_assert_msg(doc != NULL, "invalid JSON");
	x = cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "memory"), 0);
	ck_assert_double_eq(cJSON_GetObjectItem(x, "peak_bytes")->valuedouble, 32);
	ck_assert_str_eq(cJSON_GetObjectItem(x, "name")->valuestring, "NVIDIA H200");
	x = cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "memset"), 0);
	ck_assert_double_eq(cJSON_GetObjectItem(x, "total_ns")->valuedouble, 993);
	ck_assert_double_eq(cJSON_GetObjectItem(x, "total_bytes")->valuedouble, 32);
	ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(doc, "errors")), 0);
	cJSON_Delete(doc);
	free(out);
	out = summary(r);
	ck_assert_ptr_nonnull(strstr(out, "Processes: 1\n  pid 508 /work/main/build-gpu/tests/gpu/"
	                                  "gt-gpu-workload streams8: exited with status 0\n"));
	ck_assert_ptr_nonnull(strstr(out, "  all            1 x         32 B in      993 ns  "
	                                  "(32.23 MB/s)\n"));
	free(out);
	gt_reader_close(r);
}
END_TEST

/* ---- histogram precision and memory ---- */

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

START_TEST(test_histogram_precision)
{
	enum {
		N = 20001
	};
	uint64_t *v = malloc(N * sizeof(*v)), rng = 88172645463325252ull;
	struct gt_series s = {0};
	double exact_med, med;
	uint64_t exact_p99, p99, total = 0;
	size_t blocks = 0;

	ck_assert_ptr_nonnull(v);
	for (int i = 0; i < N; i++) {
		/* log-uniform-ish durations from 1 ns to about 4 s */
		rng ^= rng << 13;
		rng ^= rng >> 7;
		rng ^= rng << 17;
		v[i] = (rng >> (rng % 40 + 20)) + 1;
		total += v[i];
		ck_assert_int_eq(gt_stats_series_add(&s, v[i]), 0);
	}
	qsort(v, N, sizeof(*v), cmp_u64);
	exact_med = (double)v[N / 2];
	exact_p99 = v[(N * 99 + 99) / 100 - 1];
	med = gt_stats_series_median(&s);
	p99 = gt_stats_series_p99(&s);
	ck_assert_uint_eq(s.count, N);
	ck_assert_uint_eq(s.total, total);
	ck_assert_uint_eq(s.min, v[0]);
	ck_assert_uint_eq(s.max, v[N - 1]);
	ck_assert_msg(fabs(med - exact_med) <= exact_med / 256, "median %f vs %f", med, exact_med);
	ck_assert_msg(fabs((double)p99 - (double)exact_p99) <= (double)exact_p99 / 256,
	              "p99 %llu vs %llu", (unsigned long long)p99, (unsigned long long)exact_p99);
	/* every rank, not just two */
	for (uint64_t k = 1; k <= N; k += 97) {
		double got = (double)gt_stats_series_rank(&s, k), want = (double)v[k - 1];

		ck_assert_msg(fabs(got - want) <= want / 256, "rank %llu: %f vs %f",
		              (unsigned long long)k, got, want);
	}
	/* memory is per power of two hit, never per value */
	for (unsigned b = 0; b < GT_HIST_BLOCKS; b++)
		blocks += s.hist.block[b] != NULL;
	ck_assert_uint_le(blocks, GT_HIST_BLOCKS);
	gt_stats_series_fini(&s);
	free(v);
}
END_TEST

START_TEST(test_histogram_exact_small)
{
	struct gt_series s = {0};

	/* below 128 every value has its own bucket */
	for (uint64_t i = 0; i < 128; i++)
		ck_assert_int_eq(gt_stats_series_add(&s, i), 0);
	for (uint64_t k = 1; k <= 128; k++)
		ck_assert_uint_eq(gt_stats_series_rank(&s, k), k - 1);
	ck_assert_double_eq(gt_stats_series_median(&s), 63.5);
	/* nearest rank: ceil(0.99 * 128) = 127th value */
	ck_assert_uint_eq(gt_stats_series_p99(&s), 126);
	gt_stats_series_fini(&s);
}
END_TEST

START_TEST(test_flat_memory)
{
	/* 200k launches of 3 names: three entries, a handful of histogram blocks */
	struct gt_reader *r;
	struct gt_stats st;
	const char *msg;
	struct tw t;
	size_t blocks = 0;

	tw_open(&t);
	str(&t, 1, "a");
	str(&t, 2, "b");
	str(&t, 3, "c");
	for (unsigned i = 0; i < 200000; i++)
		kernel(&t, 1 + i % 3, 1000ull * i, 1000 + i % 977);
	r = tw_close(&t);
	ck_assert_int_eq(gt_stats_collect(&st, r, &msg), 0);
	ck_assert_uint_eq(st.kernels.n, 3);
	ck_assert_uint_eq(st.cat.records[GT_REC_KERNEL], 200000);
	for (size_t i = 0; i < st.kernels.n; i++) {
		ck_assert_uint_eq(st.kernels.entries[i]->time.count, 200000 / 3 + (i < 200000 % 3));
		for (unsigned b = 0; b < GT_HIST_BLOCKS; b++)
			blocks += st.kernels.entries[i]->time.hist.block[b] != NULL;
	}
	/* 1000..1976 ns spans two powers of two */
	ck_assert_uint_eq(blocks, 3 * 2);
	gt_stats_fini(&st);
	gt_reader_close(r);
}
END_TEST

START_TEST(test_parse_options)
{
	unsigned v = 0;

	ck_assert_int_eq(gt_stats_parse_reports("kernels", &v), 0);
	ck_assert_uint_eq(v, GT_STATS_REPORT_KERNELS);
	ck_assert_int_eq(gt_stats_parse_reports("api,memory,losses", &v), 0);
	ck_assert_uint_eq(v, GT_STATS_REPORT_API | GT_STATS_REPORT_MEMORY | GT_STATS_REPORT_LOSSES);
	ck_assert_int_eq(gt_stats_parse_reports("all", &v), 0);
	ck_assert_uint_eq(v, GT_STATS_REPORT_ALL);
	v = 99;
	ck_assert_int_eq(gt_stats_parse_reports("kernel", &v), -EINVAL);
	ck_assert_int_eq(gt_stats_parse_reports("kernels,", &v), -EINVAL);
	ck_assert_int_eq(gt_stats_parse_reports(",api", &v), -EINVAL);
	ck_assert_int_eq(gt_stats_parse_reports("", &v), -EINVAL);
	ck_assert_uint_eq(v, 99);
	ck_assert_int_eq(gt_stats_parse_format("csv", &v), 0);
	ck_assert_uint_eq(v, GT_STATS_FORMAT_CSV);
	ck_assert_int_eq(gt_stats_parse_format("json", &v), 0);
	ck_assert_uint_eq(v, GT_STATS_FORMAT_JSON);
	ck_assert_int_eq(gt_stats_parse_format("table", &v), 0);
	ck_assert_uint_eq(v, GT_STATS_FORMAT_TABLE);
	ck_assert_int_eq(gt_stats_parse_format("xml", &v), -EINVAL);
	ck_assert_str_eq(gt_stats_report_name(GT_STATS_REPORT_NVTX), "nvtx");
	ck_assert_str_eq(gt_stats_report_name(3), "unknown");
}
END_TEST

START_TEST(test_bad_options)
{
	struct gt_reader *r = kernel_trace();
	struct gt_stats_options o = {.format = GT_STATS_FORMAT_MAX};
	const char *msg = NULL;

	ck_assert_int_eq(gt_stats_report(r, stdout, &o, &msg), -EINVAL);
	ck_assert_str_eq(msg, "unknown stats format or report");
	o.format = 0;
	o.reports = 1u << 12;
	ck_assert_int_eq(gt_stats_report(r, stdout, &o, &msg), -EINVAL);
	gt_reader_close(r);
}
END_TEST

START_TEST(test_human_formats)
{
	char b[32];

	gt_fmt_ns(999, b, sizeof(b));
	ck_assert_str_eq(b, "999 ns");
	gt_fmt_ns(12.25, b, sizeof(b));
	ck_assert_str_eq(b, "12.2 ns");
	gt_fmt_ns(1000, b, sizeof(b));
	ck_assert_str_eq(b, "1.000 us");
	gt_fmt_ns(2.5e6, b, sizeof(b));
	ck_assert_str_eq(b, "2.500 ms");
	gt_fmt_ns(3.25e9, b, sizeof(b));
	ck_assert_str_eq(b, "3.250 s");
	gt_fmt_bytes(1023, b, sizeof(b));
	ck_assert_str_eq(b, "1023 B");
	gt_fmt_bytes(1536, b, sizeof(b));
	ck_assert_str_eq(b, "1.50 KiB");
	gt_fmt_bytes(3.0 * (1 << 30), b, sizeof(b));
	ck_assert_str_eq(b, "3.00 GiB");
	gt_fmt_count(0, b, sizeof(b));
	ck_assert_str_eq(b, "0");
	gt_fmt_count(999, b, sizeof(b));
	ck_assert_str_eq(b, "999");
	gt_fmt_count(1234567, b, sizeof(b));
	ck_assert_str_eq(b, "1,234,567");
}
END_TEST

static Suite *stats_suite(void)
{
	Suite *s = suite_create("stats");
	TCase *tc = tcase_create("reports");

	tcase_add_test(tc, test_kernels_csv);
	tcase_add_test(tc, test_kernels_base_names);
	tcase_add_test(tc, test_kernels_table);
	tcase_add_test(tc, test_table_limit);
	tcase_add_test(tc, test_kernels_json);
	tcase_add_test(tc, test_api_and_errors);
	tcase_add_test(tc, test_memcpy_memset);
	tcase_add_test(tc, test_memory);
	tcase_add_test(tc, test_nvtx);
	tcase_add_test(tc, test_losses);
	tcase_add_test(tc, test_all_json);
	tcase_add_test(tc, test_json_string);
	tcase_add_test(tc, test_json_string_long);
	tcase_add_test(tc, test_empty_trace_reports);
	tcase_add_test(tc, test_odd_records);
	tcase_add_test(tc, test_summary);
	tcase_add_test(tc, test_summary_no_cuda);
	tcase_add_test(tc, test_two_ranks_device_zero);
	tcase_add_test(tc, test_summary_notices);
	tcase_add_test(tc, test_summary_nvtx_only);
	tcase_add_test(tc, test_summary_reads_twice);
	tcase_add_test(tc, test_parse_options);
	tcase_add_test(tc, test_bad_options);
	tcase_add_test(tc, test_human_formats);
	suite_add_tcase(s, tc);
	tc = tcase_create("recorded");
	tcase_add_test(tc, test_real_example_reports);
	tcase_add_test(tc, test_real_example_summary);
	tcase_add_test(tc, test_real_multistream);
	suite_add_tcase(s, tc);
	tc = tcase_create("histogram");
	tcase_add_test(tc, test_histogram_precision);
	tcase_add_test(tc, test_histogram_exact_small);
	tcase_add_test(tc, test_flat_memory);
	suite_add_tcase(s, tc);
	return s;
}

/* argv[1]: tests/data, where the traces recorded on a GPU live. */
int main(int argc, char **argv)
{
	SRunner *sr;
	int failed;

	data_dir = argc > 1 ? argv[1] : NULL;
	sr = srunner_create(stats_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
