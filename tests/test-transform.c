/* Check suite `transform`: the reader -> filter -> writer pipeline (src/ops/transform.c) and its
 * time window, on traces written here. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "transform.h"

#define PID 77

static char in_path[64], out_path[80];

static void setup(void)
{
	int fd;

	snprintf(in_path, sizeof(in_path), "/tmp/test-transform-XXXXXX");
	fd = mkstemp(in_path);
	ck_assert_int_ge(fd, 0);
	close(fd);
	snprintf(out_path, sizeof(out_path), "%s.out", in_path);
}

static void teardown(void)
{
	unlink(in_path);
	unlink(out_path);
}

static void put(struct gt_writer *w, void *rec, unsigned type, size_t size)
{
	struct gt_rec_hdr *h = rec;

	h->type = (uint16_t)type;
	h->size = (uint16_t)size;
	h->pid = PID;
	ck_assert_int_eq(gt_writer_write(w, h), 0);
}

/* A string, a process, an allocation at 50, then for i = 0..9 a kernel [100 i + 10, 100 i +
 * 60] and an API call [100 i, 100 i + 5], an NVTX mark at 1000, a loss at 2000: 25 records. */
static void write_input(void)
{
	struct gt_trace_info info = {.clock_id = GT_CLOCK_MONOTONIC, .hostname = "h"};
	struct gt_rec_process p = {0};
	struct gt_rec_memory m = {0};
	struct gt_rec_nvtx n = {0};
	struct gt_rec_loss l = {0};
	struct gt_writer *w;

	ck_assert_int_eq(gt_writer_open(in_path, &info, NULL, &w), 0);
	ck_assert_int_eq(gt_writer_string(w, PID, 1, "step", 4), 0);
	put(w, &p, GT_REC_PROCESS, sizeof(p));
	m.ts_ns = 50;
	m.bytes = 4096;
	m.address = 0x1000;
	m.mem_kind = GT_MEM_DEVICE;
	put(w, &m, GT_REC_MEMORY, sizeof(m));
	for (unsigned i = 0; i < 10; i++) {
		struct gt_rec_kernel k = {0};
		struct gt_rec_api a = {0};

		a.start_ns = 100 * i;
		a.end_ns = 100 * i + 5;
		a.correlation_id = i + 1;
		put(w, &a, GT_REC_API, sizeof(a));
		k.span.start_ns = 100 * i + 10;
		k.span.end_ns = 100 * i + 60;
		k.span.correlation_id = i + 1;
		put(w, &k, GT_REC_KERNEL, sizeof(k));
	}
	n.kind = GT_NVTX_MARK;
	n.start_ns = n.end_ns = 1000;
	n.message_id = 1;
	put(w, &n, GT_REC_NVTX, sizeof(n));
	l.ts_ns = 2000;
	l.count = 3;
	put(w, &l, GT_REC_LOSS, sizeof(l));
	ck_assert_int_eq(gt_writer_close(w), 0);
}

/* Records of each kind in a trace. */
static void count(const char *path, uint64_t *per_type)
{
	const union gt_record *rec;
	struct gt_reader *r;
	const char *msg = NULL;
	int ret;

	memset(per_type, 0, GT_REC_MAX * sizeof(*per_type));
	ck_assert_int_eq(gt_reader_open(path, &r, &msg), 0);
	while ((ret = gt_reader_next(r, &rec)) > 0)
		per_type[rec->hdr.type]++;
	ck_assert_int_eq(ret, 0);
	gt_reader_close(r);
}

/* --delay's cut: activity that ended before the window goes; metadata, strings, memory and
 * losses stay whenever they are. */
START_TEST(test_window_from)
{
	struct gt_transform_window win = {.from_ns = 455};
	struct gt_transform_result res;
	uint64_t n[GT_REC_MAX];

	write_input();
	ck_assert_int_eq(
	        gt_transform_file(in_path, out_path, gt_transform_window, &win, NULL, &res, NULL),
	        0);
	ck_assert_uint_eq(res.read, 25);
	/* kernels 4..9 end at or after 455 (kernel 3 ends at 360), API calls 5..9 */
	ck_assert_uint_eq(res.kept, 25 - 4 - 5);
	ck_assert_uint_eq(res.dropped, 4 + 5);
	count(out_path, n);
	ck_assert_uint_eq(n[GT_REC_KERNEL], 6);
	ck_assert_uint_eq(n[GT_REC_API], 5);
	ck_assert_uint_eq(n[GT_REC_STRING], 1);
	ck_assert_uint_eq(n[GT_REC_PROCESS], 1);
	ck_assert_uint_eq(n[GT_REC_MEMORY], 1);
	ck_assert_uint_eq(n[GT_REC_NVTX], 1);
	ck_assert_uint_eq(n[GT_REC_LOSS], 1);
}
END_TEST

/* The other end: activity that began after to_ns goes. */
START_TEST(test_window_to)
{
	struct gt_transform_window win = {.to_ns = 205};
	struct gt_transform_result res;
	uint64_t n[GT_REC_MAX];

	write_input();
	ck_assert_int_eq(
	        gt_transform_file(in_path, out_path, gt_transform_window, &win, NULL, &res, NULL),
	        0);
	count(out_path, n);
	/* API calls start at 0, 100, 200; kernels at 10, 110; the mark at 1000 goes */
	ck_assert_uint_eq(n[GT_REC_API], 3);
	ck_assert_uint_eq(n[GT_REC_KERNEL], 2);
	ck_assert_uint_eq(n[GT_REC_NVTX], 0);
	ck_assert_uint_eq(n[GT_REC_LOSS], 1);
	ck_assert_uint_eq(res.dropped, 7 + 8 + 1);
}
END_TEST

static int drop_api(void *ctx, const union gt_record *rec)
{
	(*(int *)ctx)++;
	return rec->hdr.type == GT_REC_API ? GT_TRANSFORM_DROP : GT_TRANSFORM_KEEP;
}

/* A filter of one's own, writing over the input (as --delay does): the input is read whole
 * before the output takes its name. */
START_TEST(test_in_place)
{
	struct gt_transform_result res;
	uint64_t n[GT_REC_MAX];
	int calls = 0;

	write_input();
	ck_assert_int_eq(gt_transform_file(in_path, in_path, drop_api, &calls, NULL, &res, NULL),
	                 0);
	ck_assert_int_eq(calls, 25);
	ck_assert_uint_eq(res.kept, 15);
	count(in_path, n);
	ck_assert_uint_eq(n[GT_REC_API], 0);
	ck_assert_uint_eq(n[GT_REC_KERNEL], 10);
}
END_TEST

static int fail_at_kernel(void *ctx, const union gt_record *rec)
{
	(void)ctx;
	return rec->hdr.type == GT_REC_KERNEL ? -EIO : GT_TRANSFORM_KEEP;
}

/* A filter's error stops the transform, with its code, and leaves no output; an input that
 * cannot be read says why. */
START_TEST(test_errors)
{
	struct gt_transform_result res;
	const char *msg = NULL;

	write_input();
	ck_assert_int_eq(
	        gt_transform_file(in_path, out_path, fail_at_kernel, NULL, NULL, &res, &msg), -EIO);
	ck_assert_ptr_null(msg);
	ck_assert_int_eq(access(out_path, F_OK), -1);
	/* string, process, memory, call kept; the kernel read, and the filter failed on it */
	ck_assert_uint_eq(res.read, 5);
	ck_assert_uint_eq(res.kept, 4);
	ck_assert_int_eq(gt_transform_file("/nonexistent-gputrace.gtrace", out_path,
	                                   gt_transform_window, &(struct gt_transform_window){0},
	                                   NULL, NULL, &msg),
	                 -ENOENT);
	ck_assert_int_eq(access(out_path, F_OK), -1);
}
END_TEST

/* Another header for the output when asked. */
START_TEST(test_header)
{
	struct gt_trace_info info = {.clock_id = GT_CLOCK_MONOTONIC, .hostname = "merged"};
	struct gt_transform_options opts = {.info = &info};
	struct gt_transform_window win = {0};
	struct gt_reader *r;
	const char *msg = NULL;

	write_input();
	ck_assert_int_eq(
	        gt_transform_file(in_path, out_path, gt_transform_window, &win, &opts, NULL, NULL),
	        0);
	ck_assert_int_eq(gt_reader_open(out_path, &r, &msg), 0);
	ck_assert_str_eq(gt_reader_header(r)->info.hostname, "merged");
	gt_reader_close(r);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("transform");
	TCase *tc = tcase_create("transform");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_window_from);
	tcase_add_test(tc, test_window_to);
	tcase_add_test(tc, test_in_place);
	tcase_add_test(tc, test_errors);
	tcase_add_test(tc, test_header);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
