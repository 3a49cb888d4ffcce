/* Check suite for the chrome exporter (exporters/formats/chrome.c) and the shared exporter model
 * (exporters/model/timeline.c): exact event counts per category, flows paired, slices nested per
 * track, valid JSON for hostile names, timestamp format, splitting, lanes; and the same on
 * the traces recorded on an H200 in tests/data, with exact counts derived from their CSV. */
#include <check.h>
#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "text.h"
#include "timeline.h"
#define FX_TEST_TAG "chrome"
#include "export-test.h"
#include "exporter.h"
#include "flow-shapes.h"

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	ck_assert_ptr_nonnull(f);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc((size_t)n + 1);
	ck_assert_uint_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = '\0';
	fclose(f);
	if (len)
		*len = (size_t)n;
	return buf;
}

static cJSON *load(const char *path)
{
	char *text = slurp(path, NULL);
	cJSON *j = cJSON_Parse(text);

	ck_assert_msg(j != NULL, "%s is not valid JSON near: %.80s", path,
	              cJSON_GetErrorPtr() ? cJSON_GetErrorPtr() : "?");
	free(text);
	return j;
}

static const char *str(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	return cJSON_IsString(v) ? v->valuestring : "";
}

static double num(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static uint64_t count(const cJSON *events, const char *ph, const char *cat)
{
	uint64_t n = 0;
	const cJSON *e;

	cJSON_ArrayForEach(e, events)
	{
		if (strcmp(str(e, "ph"), ph) == 0 && (!cat || strcmp(str(e, "cat"), cat) == 0))
			n++;
	}
	return n;
}

/* ------------------------------------------------------------------------------------ */

START_TEST(test_counts)
{
	char out[160];
	struct gt_export_result res;
	cJSON *j, *ev;

	snprintf(out, sizeof(out), "%s/counts.json", dir);
	ck_assert_int_eq(export("chrome", out, 0, 1, &res), 0);
	ck_assert_uint_eq(res.events, fxe.events);
	ck_assert_uint_eq(res.files, 1);
	ck_assert_ptr_null(res.warning);
	j = load(out);
	ev = cJSON_GetObjectItemCaseSensitive(j, "traceEvents");
	ck_assert(cJSON_IsArray(ev));
	ck_assert_uint_eq(count(ev, "X", "kernel"), fxe.kernels);
	ck_assert_uint_eq(count(ev, "X", "gpu_memcpy"), fxe.memcpys);
	ck_assert_uint_eq(count(ev, "X", "gpu_memset"), fxe.memsets);
	ck_assert_uint_eq(count(ev, "X", "cuda_sync"), fxe.syncs);
	ck_assert_uint_eq(count(ev, "X", "cuda_runtime"), fxe.runtime);
	ck_assert_uint_eq(count(ev, "X", "cuda_driver"), fxe.driver);
	ck_assert_uint_eq(count(ev, "X", "user_annotation"), fxe.nvtx_ranges);
	ck_assert_uint_eq(count(ev, "i", "user_annotation"), fxe.nvtx_marks);
	ck_assert_uint_eq(count(ev, "C", NULL), fxe.memory);
	ck_assert_uint_eq(count(ev, "i", "loss"), fxe.losses);
	ck_assert_uint_eq(count(ev, "i", "notice"), fxe.notices);
	ck_assert_uint_eq(count(ev, "i", "process"), fxe.ends);
	ck_assert_uint_eq(count(ev, "s", "ac2g"), fxe.flows);
	ck_assert_uint_eq(count(ev, "f", "ac2g"), fxe.flows);
	/* the instant at the trace's zero opens the file (docs/cli.md, "Time") */
	ck_assert_uint_eq(count(ev, "i", "trace"), 1);
	/* every event but metadata, flows and that instant is counted in the result */
	ck_assert_uint_eq(cJSON_GetArraySize(ev) - count(ev, "M", NULL) - 2 * fxe.flows - 1,
	                  fxe.events);
	cJSON_Delete(j);
}
END_TEST

START_TEST(test_flows_paired)
{
	char out[160];
	struct gt_export_result res;
	cJSON *j, *ev, *e;
	uint64_t *s_ids, *f_ids;
	size_t ns = 0, nf = 0;

	snprintf(out, sizeof(out), "%s/flows.json", dir);
	ck_assert_int_eq(export("chrome", out, 0, 1, &res), 0);
	j = load(out);
	ev = cJSON_GetObjectItemCaseSensitive(j, "traceEvents");
	s_ids = calloc(fxe.flows + 1, sizeof(*s_ids));
	f_ids = calloc(fxe.flows + 1, sizeof(*f_ids));
	cJSON_ArrayForEach(e, ev)
	{
		const char *ph = str(e, "ph");

		if (strcmp(ph, "s") == 0) {
			ck_assert_uint_lt(ns, fxe.flows);
			s_ids[ns++] = (uint64_t)num(e, "id");
			/* the start sits on a CPU thread of a traced process */
			ck_assert_uint_lt((uint64_t)num(e, "pid"), 5000000);
		} else if (strcmp(ph, "f") == 0) {
			ck_assert_uint_lt(nf, fxe.flows);
			f_ids[nf++] = (uint64_t)num(e, "id");
			ck_assert_str_eq(str(e, "bp"), "e");
			ck_assert_uint_ge((uint64_t)num(e, "pid"), 5000000);
		}
	}
	ck_assert_uint_eq(ns, fxe.flows);
	ck_assert_uint_eq(nf, fxe.flows);
	/* ids unique and every start has its end */
	for (size_t i = 0; i < ns; i++) {
		size_t same_s = 0, same_f = 0;

		for (size_t k = 0; k < ns; k++)
			same_s += s_ids[k] == s_ids[i];
		for (size_t k = 0; k < nf; k++)
			same_f += f_ids[k] == s_ids[i];
		ck_assert_uint_eq(same_s, 1);
		ck_assert_uint_eq(same_f, 1);
	}
	free(s_ids);
	free(f_ids);
	cJSON_Delete(j);
}
END_TEST

struct slice {
	uint64_t pid, tid;
	int64_t start, end;
};

static int slice_cmp(const void *a, const void *b)
{
	const struct slice *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return (y->end > x->end) - (y->end < x->end); /* longer first */
}

/* Every pair of "X" slices on one (pid, tid) is disjoint or nested. Returns the number
 * of distinct tracks. */
static size_t check_nesting(const cJSON *ev)
{
	size_t n = 0, cap = 1024, tracks = 0;
	struct slice *s = malloc(cap * sizeof(*s));
	const cJSON *e;

	cJSON_ArrayForEach(e, ev)
	{
		if (strcmp(str(e, "ph"), "X") != 0)
			continue;
		if (n == cap)
			s = realloc(s, (cap *= 2) * sizeof(*s));
		s[n].pid = (uint64_t)num(e, "pid");
		s[n].tid = (uint64_t)num(e, "tid");
		s[n].start = llround(num(e, "ts") * 1000.0);
		s[n].end = s[n].start + llround(num(e, "dur") * 1000.0);
		n++;
	}
	qsort(s, n, sizeof(*s), slice_cmp);
	for (size_t i = 0; i < n;) {
		size_t k = i;
		int64_t stack[64];
		int depth = 0;

		tracks++;
		for (; k < n && s[k].pid == s[i].pid && s[k].tid == s[i].tid; k++) {
			while (depth > 0 && stack[depth - 1] <= s[k].start)
				depth--;
			ck_assert_msg(depth == 0 || s[k].end <= stack[depth - 1],
			              "overlap on pid %llu tid %llu at %lld",
			              (unsigned long long)s[k].pid, (unsigned long long)s[k].tid,
			              (long long)s[k].start);
			ck_assert_int_lt(depth, 64);
			stack[depth++] = s[k].end;
		}
		i = k;
	}
	free(s);
	return tracks;
}

START_TEST(test_nesting)
{
	char out[160];
	struct gt_export_result res;
	cJSON *j;

	snprintf(out, sizeof(out), "%s/nest.json", dir);
	ck_assert_int_eq(export("chrome", out, 0, 1, &res), 0);
	j = load(out);
	/* per process: main thread, its sync track, two NVTX lanes; per GPU: stream 7 */
	ck_assert_uint_eq(check_nesting(cJSON_GetObjectItemCaseSensitive(j, "traceEvents")),
	                  fxo.procs * 5);
	cJSON_Delete(j);
}
END_TEST

static const cJSON *find_meta(const cJSON *ev, const char *what, double pid, double tid)
{
	const cJSON *e;

	cJSON_ArrayForEach(e, ev)
	{
		if (strcmp(str(e, "ph"), "M") == 0 && strcmp(str(e, "name"), what) == 0 &&
		    num(e, "pid") == pid && (tid < 0 || num(e, "tid") == tid))
			return cJSON_GetObjectItemCaseSensitive(e, "args");
	}
	return NULL;
}

START_TEST(test_names_and_metadata)
{
	char out[160];
	struct gt_export_result res;
	cJSON *j, *ev, *e;
	const cJSON *a;
	bool seen[FX_NKERNEL_NAMES] = {false};
	char *longname = malloc((FX_LONG_REPS + 2) * (FX_LONG_ID + 2) + 64), *p;
	char cls[FX_LONG_ID + 1];

	/* what libiberty prints for the long template */
	fx_long_class(cls);
	p = stpcpy(longname, "void f<");
	for (unsigned i = 0; i <= FX_LONG_REPS; i++) {
		if (i)
			p = stpcpy(p, ", ");
		p = stpcpy(p, cls);
	}
	p = stpcpy(p, ">(");
	p = stpcpy(p, cls);
	strcpy(p, ")");

	snprintf(out, sizeof(out), "%s/names.json", dir);
	ck_assert_int_eq(export("chrome", out, 0, 1, &res), 0);
	j = load(out);
	ev = cJSON_GetObjectItemCaseSensitive(j, "traceEvents");
	cJSON_ArrayForEach(e, ev)
	{
		const char *n = str(e, "name");

		if (strcmp(str(e, "cat"), "kernel") != 0)
			continue;
		if (strcmp(n, "kernel(float*)") == 0)
			seen[0] = true;
		else if (strcmp(n, "ampere_sgemm_128x64_nn") == 0)
			seen[1] = true;
		else if (strcmp(n, "quote\"kernel") == 0)
			seen[2] = true;
		else if (strcmp(n, "back\\slash") == 0)
			seen[3] = true;
		else if (strcmp(n, "ctl\x01\x1f\tchars") == 0)
			seen[4] = true;
		else if (strcmp(n, "bad\xef\xbf\xbd\xef\xbf\xbd utf8 \xef\xbf\xbd\xef\xbf\xbd") ==
		         0)
			seen[5] = true;
		else if (strcmp(n, longname) == 0)
			seen[6] = true;
		else
			ck_abort_msg("unexpected kernel name %.60s", n);
	}
	for (unsigned i = 0; i < FX_NKERNEL_NAMES; i++)
		ck_assert_msg(seen[i], "kernel name %u missing", i);
	ck_assert_uint_gt(strlen(longname), 10000);

	a = find_meta(ev, "process_name", FX_PID0, -1);
	ck_assert_ptr_nonnull(a);
	ck_assert_str_eq(str(a, "name"), "python3 (rank 0)");
	a = find_meta(ev, "process_name", FX_PID0 + 1, -1);
	ck_assert_ptr_nonnull(a);
	ck_assert_str_eq(str(a, "name"), "python3 (rank 1)");
	/* two ranks, each with its own GPU (different uuids) as device 0 */
	a = find_meta(ev, "process_name", 5000000, -1);
	ck_assert_ptr_nonnull(a);
	ck_assert_str_eq(str(a, "name"), "GPU 0");
	a = find_meta(ev, "process_name", 5000001, -1);
	ck_assert_ptr_nonnull(a);
	ck_assert_str_eq(str(a, "name"), "GPU 1");
	a = find_meta(ev, "process_labels", 5000001, -1);
	ck_assert_ptr_nonnull(a);
	ck_assert_str_eq(str(a, "labels"), "NVIDIA H200");
	a = find_meta(ev, "process_sort_index", 5000000, -1);
	ck_assert_ptr_nonnull(a);
	ck_assert_double_eq(num(a, "sort_index"), 5000000);
	a = find_meta(ev, "thread_name", 5000000, FX_STREAM);
	ck_assert_ptr_nonnull(a);
	ck_assert_str_eq(str(a, "name"), "stream 7");
	a = find_meta(ev, "thread_name", FX_PID0, FX_PID0);
	ck_assert_ptr_nonnull(a);
	ck_assert_str_eq(str(a, "name"), "main \"loop\"");
	a = find_meta(ev, "thread_name", FX_PID0, FX_PID0 | (16u << 25));
	ck_assert_ptr_nonnull(a);
	ck_assert_str_eq(str(a, "name"), "main \"loop\" sync");
	a = find_meta(ev, "thread_name", FX_PID0, 0x7e000000);
	ck_assert_ptr_nonnull(a);
	ck_assert_str_eq(str(a, "name"), "NVTX ranges");
	a = find_meta(ev, "thread_name", FX_PID0, 0x7e000001);
	ck_assert_ptr_nonnull(a);
	ck_assert_str_eq(str(a, "name"), "NVTX ranges (overlap 1)");

	/* trailer metadata */
	a = cJSON_GetObjectItemCaseSensitive(j, "gputrace");
	ck_assert_ptr_nonnull(a);
	ck_assert_double_eq(num(cJSON_GetObjectItemCaseSensitive(a, "losses"), "total"),
	                    (double)fxe.lost);
	ck_assert_double_eq(num(cJSON_GetObjectItemCaseSensitive(
	                                cJSON_GetObjectItemCaseSensitive(a, "losses"), "by_source"),
	                        "ring_full"),
	                    (double)fxe.lost);
	{
		/* every loss in words, and a damaged file's part of them: none here */
		cJSON *l = cJSON_GetObjectItemCaseSensitive(a, "losses");
		cJSON *df = cJSON_GetObjectItemCaseSensitive(l, "damaged_file");
		char want[64];

		snprintf(want, sizeof(want), "%llu records lost (ring_full %llu)",
		         (unsigned long long)fxe.lost, (unsigned long long)fxe.lost);
		ck_assert_str_eq(str(l, "summary"), want);
		ck_assert_double_eq(num(df, "chunks"), 0);
		ck_assert_double_eq(num(df, "bytes"), 0);
		ck_assert_double_eq(num(df, "records"), 0);
		ck_assert_double_eq(num(df, "malformed_records"), 0);
		ck_assert_double_eq(num(l, "chunks_skipped"), 0);
		ck_assert(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(l, "recovered")));
	}
	ck_assert_str_eq(str(a, "hostname"), "fixture-host");
	ck_assert_str_eq(str(a, "cmdline"), "python3 train.py --say \"hi\"");
	ck_assert_double_eq(num(a, "overlapping_slices"), 0);
	/* timestamps count from the trace's zero, the fixture's header start */
	ck_assert_double_eq(num(j, "baseTimeNanoseconds"), (double)FX_T0);
	ck_assert_double_eq(num(a, "base_time_ns"), (double)FX_T0);
	ck_assert_double_eq(num(a, "base_realtime_ns"), 1700000000000000000.0);
	ck_assert_str_eq(str(a, "base_date"), "2023-11-14T22:13:20.000000000Z");
	e = cJSON_GetArrayItem(ev, 0);
	ck_assert_str_eq(str(e, "ph"), "i");
	ck_assert_str_eq(str(e, "s"), "g");
	ck_assert_str_eq(str(e, "cat"), "trace");
	ck_assert_str_eq(str(e, "name"), "trace start");
	ck_assert_double_eq(num(e, "ts"), 0);
	ck_assert_str_eq(str(cJSON_GetObjectItemCaseSensitive(e, "args"), "date"),
	                 "2023-11-14T22:13:20.000000000Z");
	ck_assert_double_eq(num(cJSON_GetObjectItemCaseSensitive(e, "args"), "trace clock ns"),
	                    (double)FX_T0);
	ck_assert_int_eq(
	        cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(j, "deviceProperties")), 2);
	cJSON_Delete(j);
	free(longname);
}
END_TEST

/* A window counts from the trace's zero too (docs/cli.md, "Time"): its file opens with the
 * instant at ts 0 and its events keep the times they have in the whole export. */
START_TEST(test_window_zero)
{
	char out[160];
	struct gt_export_result res;
	cJSON *j, *ev, *e;
	uint64_t timed = 0;

	snprintf(out, sizeof(out), "%s/window.json", dir);
	ck_assert_int_eq(export_window("chrome", out, FX_T0 + 2000000, FX_T0 + 3000000, &res), 0);
	j = load(out);
	ck_assert_double_eq(num(j, "baseTimeNanoseconds"), (double)FX_T0);
	ev = cJSON_GetObjectItemCaseSensitive(j, "traceEvents");
	ck_assert_str_eq(str(cJSON_GetArrayItem(ev, 0), "name"), "trace start");
	ck_assert_double_eq(num(cJSON_GetArrayItem(ev, 0), "ts"), 0);
	cJSON_ArrayForEach(e, ev)
	{
		if (strcmp(str(e, "ph"), "M") == 0 || e == cJSON_GetArrayItem(ev, 0))
			continue;
		ck_assert_double_ge(num(e, "ts"), 2000.0);
		ck_assert_double_lt(num(e, "ts"), 3000.0);
		timed++;
	}
	ck_assert_uint_gt(timed, 100);
	cJSON_Delete(j);
}
END_TEST

START_TEST(test_mangled_when_asked)
{
	char out[160];
	struct gt_export_result res;
	char *text;

	snprintf(out, sizeof(out), "%s/mangled.json", dir);
	ck_assert_int_eq(export("chrome", out, 0, 0, &res), 0);
	text = slurp(out, NULL);
	ck_assert_ptr_nonnull(strstr(text, "\"name\":\"_Z6kernelPf\""));
	ck_assert_ptr_null(strstr(text, "kernel(float*)"));
	/* hostile bytes as the JSON spelling we promise */
	ck_assert_ptr_nonnull(strstr(text, "\"name\":\"ctl\\u0001\\u001f\\u0009chars\""));
	ck_assert_ptr_nonnull(strstr(text, "\"name\":\"quote\\\"kernel\""));
	free(text);
}
END_TEST

/* Checks that every "ts" and "dur" in a JSON text is microseconds with exactly three
 * decimals; returns how many it checked. */
static size_t check_ts_format(const char *text)
{
	size_t checked = 0;

	for (const char *p = text; (p = strstr(p, "\":")) != NULL; p += 2) {
		if (!(p >= text + 3 && (strncmp(p - 3, "\"ts", 3) == 0 ||
		                        (p >= text + 4 && strncmp(p - 4, "\"dur", 4) == 0))))
			continue;
		const char *q = p + 2;

		if (*q == '-')
			q++;
		ck_assert(*q >= '0' && *q <= '9');
		while (*q >= '0' && *q <= '9')
			q++;
		ck_assert_int_eq(*q, '.');
		for (int i = 1; i <= 3; i++)
			ck_assert(q[i] >= '0' && q[i] <= '9');
		ck_assert(q[4] == ',' || q[4] == '}');
		checked++;
	}
	return checked;
}

/* "ts" and "dur" are microseconds with exactly three decimals. */
START_TEST(test_timestamp_format)
{
	char out[160];
	struct gt_export_result res;
	char *text;
	size_t checked;

	snprintf(out, sizeof(out), "%s/ts.json", dir);
	ck_assert_int_eq(export("chrome", out, 0, 1, &res), 0);
	text = slurp(out, NULL);
	checked = check_ts_format(text);
	ck_assert_uint_ge(checked, fxe.events);
	/* the first step's NVTX range starts 7 ns * pid after the base */
	ck_assert_ptr_nonnull(strstr(text, "\"ts\":7.000,\"dur\":90.000"));
	free(text);
}
END_TEST

START_TEST(test_split)
{
	char out[160], path[200];
	struct gt_export_result res;
	uint64_t kernels = 0, events = 0, bytes = 0;

	snprintf(out, sizeof(out), "%s/split.json", dir);
	ck_assert_int_eq(export("chrome", out, 200 * 1024, 1, &res), 0);
	ck_assert_uint_gt(res.files, 2);
	ck_assert_uint_eq(res.events, fxe.events);
	for (unsigned k = 0; k < res.files; k++) {
		cJSON *j, *ev, *e, *meta;
		size_t len;
		char *text;

		if (k == 0)
			snprintf(path, sizeof(path), "%s", out);
		else
			snprintf(path, sizeof(path), "%s/split.%u.json", dir, k);
		text = slurp(path, &len);
		free(text);
		bytes += len;
		ck_assert_uint_le(len, 200 * 1024);
		j = load(path);
		ev = cJSON_GetObjectItemCaseSensitive(j, "traceEvents");
		meta = cJSON_GetObjectItemCaseSensitive(j, "gputrace");
		ck_assert_double_eq(num(meta, "file"), k);
		ck_assert(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(meta, "last_file")) ==
		          (k + 1 == res.files));
		kernels += count(ev, "X", "kernel");
		events += (uint64_t)num(meta, "events");
		/* each file names every process and GPU it shows */
		/* and opens with the instant at the trace's zero, so that every file's ruler
		 * starts there */
		ck_assert_uint_eq(count(ev, "i", "trace"), 1);
		ck_assert_str_eq(str(cJSON_GetArrayItem(ev, 0), "name"), "trace start");
		ck_assert_double_eq(num(cJSON_GetArrayItem(ev, 0), "ts"), 0);
		cJSON_ArrayForEach(e, ev)
		{
			if (strcmp(str(e, "ph"), "M") == 0 ||
			    strcmp(str(e, "name"), "trace start") == 0)
				continue;
			ck_assert_msg(find_meta(ev, "process_name", num(e, "pid"), -1) != NULL,
			              "file %u lacks process_name for pid %.0f", k, num(e, "pid"));
		}
		check_nesting(ev);
		cJSON_Delete(j);
	}
	snprintf(path, sizeof(path), "%s/split.%u.json", dir, res.files);
	ck_assert_int_ne(access(path, F_OK), 0);
	ck_assert_uint_eq(kernels, fxe.kernels);
	ck_assert_uint_eq(events, fxe.events);
	ck_assert_uint_eq(bytes, res.bytes);
}
END_TEST

/* ------------------------------------------------------------------------------------ */
/* Units of the model                                                                     */

START_TEST(test_fmt)
{
	char b[64];

	*gt_fmt_us3(b, 0) = '\0';
	ck_assert_str_eq(b, "0.000");
	*gt_fmt_us3(b, 1234) = '\0';
	ck_assert_str_eq(b, "1.234");
	*gt_fmt_us3(b, -1) = '\0';
	ck_assert_str_eq(b, "-0.001");
	*gt_fmt_us3(b, 12345678901) = '\0';
	ck_assert_str_eq(b, "12345678.901");
	*gt_fmt_u64(b, UINT64_MAX) = '\0';
	ck_assert_str_eq(b, "18446744073709551615");
	*gt_fmt_i64(b, INT64_MIN) = '\0';
	ck_assert_str_eq(b, "-9223372036854775808");
	*gt_fmt_u64(b, 7) = '\0';
	ck_assert_str_eq(b, "7");
}
END_TEST

START_TEST(test_escape)
{
	static const char in[] = "a\"b\\c\n\x01\x7f\xc3\xa9\xed\xa0\x80\xf4\x90\x80\x80\xc0\xaf"
	                         "\xe2\x82\xac\xf0\x9f\x98\x80";
	char out[256];
	char *e = gt_text_json_escape(out, in, sizeof(in) - 1);

	*e = '\0';
	/* é and € and 😀 stay; a surrogate, > U+10FFFF and an overlong '/' become U+FFFD
	 * one byte at a time */
	ck_assert_str_eq(out, "a\\\"b\\\\c\\u000a\\u0001\x7f\xc3\xa9"
	                      "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"
	                      "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"
	                      "\xef\xbf\xbd\xef\xbf\xbd"
	                      "\xe2\x82\xac\xf0\x9f\x98\x80");
	e = gt_text_csv_field(out, "x,\"y\"", 5);
	*e = '\0';
	ck_assert_str_eq(out, "\"x,\"\"y\"\"\"");
	e = gt_text_csv_field(out, "plain", 5);
	*e = '\0';
	ck_assert_str_eq(out, "plain");
}
END_TEST

START_TEST(test_lanes)
{
	struct gt_timeline m;
	struct gt_track *t;

	ck_assert_int_eq(gt_timeline_init(&m, NULL, false, NULL, 1), 0);
	t = gt_timeline_track(&m, GT_TRACK_THREAD, 1, 1);
	/* post-order (children first), as API records arrive */
	ck_assert_uint_eq(gt_lanes_place(&m, t, 20, 30), 0);
	ck_assert_uint_eq(gt_lanes_place(&m, t, 10, 40), 0);
	ck_assert_uint_eq(gt_lanes_place(&m, t, 50, 60), 0);
	ck_assert_uint_eq(gt_lanes_place(&m, t, 0, 100), 0);
	/* starts inside a finished block: unknown children, another lane */
	ck_assert_uint_eq(gt_lanes_place(&m, t, 55, 58), 1);
	/* crosses a block */
	ck_assert_uint_eq(gt_lanes_place(&m, t, 90, 120), 1);
	ck_assert_uint_eq(gt_lanes_place(&m, t, 56, 57), 2);
	/* touching is fine */
	ck_assert_uint_eq(gt_lanes_place(&m, t, 100, 110), 0);
	/* out of order but in a gap */
	ck_assert_uint_eq(gt_lanes_place(&m, t, 200, 210), 0);
	ck_assert_uint_eq(gt_lanes_place(&m, t, 150, 160), 0);
	/* end before start is clamped to an instant */
	ck_assert_uint_eq(gt_lanes_place(&m, t, 300, 250), 0);
	ck_assert_uint_eq(t->nlanes, 3);

	/* strict ties (perfetto): a parent starting with its already written child, and a
	 * slice ending where a written one starts, would depend on file order */
	m.strict_ties = true;
	t = gt_timeline_track(&m, GT_TRACK_THREAD, 1, 2);
	ck_assert_uint_eq(gt_lanes_place(&m, t, 10, 20), 0);
	ck_assert_uint_eq(gt_lanes_place(&m, t, 10, 30), 1);
	ck_assert_uint_eq(gt_lanes_place(&m, t, 40, 50), 0);
	ck_assert_uint_eq(gt_lanes_place(&m, t, 35, 40), 1);
	ck_assert_uint_eq(gt_lanes_place(&m, t, 50, 55), 0); /* in order: fine */
	ck_assert_uint_eq(gt_lanes_place(&m, t, 5, 60), 0);  /* a parent written last */
	m.strict_ties = false;

	/* many siblings: the oldest are folded; a slice reaching back past the floor goes
	 * elsewhere unless it contains everything folded */
	t = gt_timeline_track(&m, GT_TRACK_STREAM, 1, 7);
	for (uint64_t i = 0; i < 3 * GT_LANE_BLOCKS; i++)
		ck_assert_uint_eq(gt_lanes_place(&m, t, 10 + 10 * i, 15 + 10 * i), 0);
	ck_assert(t->lanes[0].folded);
	ck_assert_uint_le(t->lanes[0].n, GT_LANE_BLOCKS);
	ck_assert_uint_eq(gt_lanes_place(&m, t, 17, 18), 1);
	ck_assert_uint_eq(gt_lanes_place(&m, t, 0, 10 * 3 * GT_LANE_BLOCKS + 100), 0);
	ck_assert(!t->lanes[0].folded);
	ck_assert_uint_eq(t->lanes[0].n, 1);

	/* lanes run out: forced onto the last one, counted */
	t = gt_timeline_track(&m, GT_TRACK_NVTX, 1, 0);
	for (unsigned i = 0; i < GT_LANES_MAX + 3; i++)
		gt_lanes_place(&m, t, 100 + i, 1000 + i);
	ck_assert_uint_eq(t->nlanes, GT_LANES_MAX);
	ck_assert_uint_eq(m.lanes_forced, 3);
	gt_timeline_fini(&m);
}
END_TEST

START_TEST(test_bad_output)
{
	struct gt_reader *r;
	const char *err = NULL;
	struct gt_export_result res;
	struct gt_export_options o = {.output = "/nonexistent-dir/x.json"};

	ck_assert_int_eq(gt_reader_open(trace_path, &r, &err), 0);
	ck_assert_int_eq(gt_export_run(gt_exporter_find("chrome"), r, &o, &res, &err), -ENOENT);
	ck_assert_str_eq(err, "cannot create /nonexistent-dir/x.json: its folder does not exist");
	gt_reader_close(r);
	ck_assert_ptr_null(gt_exporter_find("nope"));
	ck_assert_str_eq(gt_exporter_find("chrome")->extension, ".json");
}
END_TEST

/* A small trace a test writes record by record: dir/NAME.gtrace, opened with fixed header
 * facts. */
static struct gt_writer *synthetic_open(const char *name)
{
	struct gt_trace_info info = {.clock_id = GT_CLOCK_MONOTONIC,
	                             .hostname = "h",
	                             .cmdline = "app",
	                             .start_trace_ns = 1000};
	struct gt_writer *w;
	char path[160];

	snprintf(path, sizeof(path), "%s/%s.gtrace", dir, name);
	ck_assert_int_eq(gt_writer_open(path, &info, NULL, &w), 0);
	return w;
}

/* Close w (from synthetic_open(name)), export its trace with chrome to dir/NAME.json and
 * return that file parsed (the test fails if it is not JSON). */
static cJSON *synthetic_chrome(const char *name, struct gt_writer *w)
{
	char path[160], out[160];
	struct gt_export_result res = {0};
	struct gt_export_options o = {.output = out};
	struct gt_reader *r;
	const char *err = NULL;

	ck_assert_int_eq(gt_writer_close(w), 0);
	snprintf(path, sizeof(path), "%s/%s.gtrace", dir, name);
	snprintf(out, sizeof(out), "%s/%s.json", dir, name);
	ck_assert_int_eq(gt_reader_open(path, &r, &err), 0);
	ck_assert_int_eq(gt_export_run(gt_exporter_find("chrome"), r, &o, &res, &err), 0);
	gt_reader_close(r);
	return load(out);
}

/* A kernel of process 7 on stream 7, named by string id name_id. */
static void write_kernel(struct gt_writer *w, uint32_t name_id, uint64_t start, uint64_t end,
                         uint32_t corr)
{
	struct gt_rec_kernel k;

	memset(&k, 0, sizeof(k));
	k.hdr.type = GT_REC_KERNEL;
	k.hdr.size = sizeof(k);
	k.hdr.pid = 7;
	k.span = (struct gt_gpu_span){
	        .start_ns = start, .end_ns = end, .correlation_id = corr, .stream_id = 7};
	k.name_id = name_id;
	ck_assert_int_eq(gt_writer_write(w, &k.hdr), 0);
}

/* A kernel CUPTI could not time (start 0: the one that faulted) is counted in the trace but
 * not drawn at time zero; its timed neighbour is. */
START_TEST(test_untimed_kernel)
{
	struct gt_writer *w;
	cJSON *root, *ev;

	w = synthetic_open("untimed");
	ck_assert_int_eq(gt_writer_string(w, 7, 1, "good", 4), 0);
	ck_assert_int_eq(gt_writer_string(w, 7, 2, "faulted", 7), 0);
	write_kernel(w, 1, 5000, 6000, 1);
	write_kernel(w, 2, 0, 0, 2);
	root = synthetic_chrome("untimed", w);
	ev = cJSON_GetObjectItem(root, "traceEvents");
	ck_assert_uint_eq(count(ev, "X", "kernel"), 1);
	cJSON_Delete(root);
}
END_TEST

/* A device name whose escaped text runs past the 256 bytes kept of it is cut between escapes:
 * 300 control characters escape to 1,800 bytes, of which 42 whole escapes (252 bytes) fit.
 * Cut at 256, the JSON ended inside an escape (found by fuzz-export). */
START_TEST(test_long_escaped_name)
{
	char name[301];
	struct gt_rec_device d;
	struct gt_writer *w;
	const cJSON *props, *dev;
	cJSON *root;

	memset(name, 0x01, 300);
	name[300] = '\0';
	w = synthetic_open("longname");
	ck_assert_int_eq(gt_writer_string(w, 7, 1, name, 300), 0);
	ck_assert_int_eq(gt_writer_string(w, 7, 2, "k", 1), 0);
	memset(&d, 0, sizeof(d));
	d.hdr.type = GT_REC_DEVICE;
	d.hdr.size = sizeof(d);
	d.hdr.pid = 7;
	d.name_id = 1;
	ck_assert_int_eq(gt_writer_write(w, &d.hdr), 0);
	write_kernel(w, 2, 5000, 6000, 1);
	root = synthetic_chrome("longname", w); /* fails the test if the file is not JSON */
	props = cJSON_GetObjectItemCaseSensitive(root, "deviceProperties");
	ck_assert_int_eq(cJSON_GetArraySize(props), 1);
	dev = cJSON_GetArrayItem(props, 0);
	name[42] = '\0';
	ck_assert_str_eq(str(dev, "name"), name);
	cJSON_Delete(root);
}
END_TEST

/* The "memory pool reserved" counter of a GPU sums its pools as their latest records give
 * them: two pools of one process and one of another on GPU 0 (both processes report its
 * uuid), created, trimmed and destroyed; a pool of GPU 1 has its own counter. */
START_TEST(test_pool_counter)
{
	static const struct {
		uint32_t pid, device;
		uint64_t address, reserved;
		uint32_t op;
		double want; /* the counter of the pool's GPU after this record, in MiB */
	} steps[] = {
	        {7, 0, 0x1000, 32u << 20, GT_POOL_CREATED, 32},
	        {7, 0, 0x2000, 8u << 20, GT_POOL_CREATED, 40},
	        {8, 0, 0x1000, 4u << 20, GT_POOL_CREATED, 44}, /* same address, other process */
	        {7, 1, 0x3000, 2u << 20, GT_POOL_CREATED, 2},
	        {7, 0, 0x1000, 0, GT_POOL_TRIMMED, 12},
	        {7, 0, 0x2000, 8u << 20, GT_POOL_DESTROYED, 4}, /* its bytes go, whatever it says */
	        {8, 0, 0x1000, 16u << 20, GT_POOL_TRIMMED, 16}, /* a pool grew since */
	};
	struct gt_rec_memory_pool m;
	struct gt_writer *w;
	const cJSON *e;
	cJSON *root, *ev;
	size_t i, n = 0;

	w = synthetic_open("pools");
	/* GPUs are their uuids: both processes' device 0 is one GPU, process 7's device 1
	 * another (without a uuid, each process's device 0 would be a GPU of its own) */
	for (i = 0; i < 3; i++) {
		struct gt_rec_device d;

		memset(&d, 0, sizeof(d));
		d.hdr.type = GT_REC_DEVICE;
		d.hdr.size = sizeof(d);
		d.hdr.pid = i == 1 ? 8 : 7;
		d.device_id = i == 2 ? 1 : 0;
		d.uuid[0] = 0x55;
		d.uuid[15] = (uint8_t)d.device_id;
		ck_assert_int_eq(gt_writer_write(w, &d.hdr), 0);
	}
	for (i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		memset(&m, 0, sizeof(m));
		m.hdr.type = GT_REC_MEMORY_POOL;
		m.hdr.size = sizeof(m);
		m.hdr.pid = steps[i].pid;
		m.ts_ns = 5000 + 1000 * i;
		m.address = steps[i].address;
		m.reserved_bytes = steps[i].reserved;
		m.device_id = steps[i].device;
		m.op = steps[i].op;
		ck_assert_int_eq(gt_writer_write(w, &m.hdr), 0);
	}
	root = synthetic_chrome("pools", w);
	ev = cJSON_GetObjectItem(root, "traceEvents");
	cJSON_ArrayForEach(e, ev)
	{
		if (strcmp(str(e, "ph"), "C") != 0)
			continue;
		ck_assert_str_eq(str(e, "name"), "memory pool reserved");
		ck_assert_uint_lt(n, sizeof(steps) / sizeof(steps[0]));
		/* GPU 0 and GPU 1 as the exporter numbers them, in order of appearance */
		ck_assert_double_eq(num(e, "pid"), 5000000 + steps[n].device);
		ck_assert_double_eq(num(cJSON_GetObjectItemCaseSensitive(e, "args"), "bytes"),
		                    steps[n].want * 1048576);
		n++;
	}
	ck_assert_uint_eq(n, sizeof(steps) / sizeof(steps[0]));
	cJSON_Delete(root);
}
END_TEST

/* ------------------------------------------------------------------------------------ */
/* Flows whatever the order of a launch's records (tests/flow-shapes.h)                  */

static size_t check_flows(const cJSON *ev);

/* Occurrences of what in text. By hand: ASan's strstr measures the whole haystack on each
 * call, quadratic on a 60 MB JSON. */
static uint64_t count_text(const char *text, const char *what)
{
	size_t wl = strlen(what);
	uint64_t n = 0;

	for (const char *p = text; *p; p++)
		if (*p == *what && strncmp(p, what, wl) == 0) {
			n++;
			p += wl - 1;
		}
	return n;
}

static bool is_gpu_cat(const char *cat)
{
	return strcmp(cat, "kernel") == 0 || strcmp(cat, "gpu_memcpy") == 0 ||
	       strcmp(cat, "gpu_memset") == 0 || strcmp(cat, "cuda_graph") == 0;
}

/* The "X" slice a flow event of id `id` binds to: same pid, tid and ts, the launch's
 * correlation id; runtime call for "s", GPU work for "f". */
static const cJSON *flow_slice(const cJSON *ev, const cJSON *fe, bool gpu)
{
	uint32_t corr = (uint32_t)((uint64_t)num(fe, "id") & 0xffffffffu);
	const cJSON *e;

	cJSON_ArrayForEach(e, ev)
	{
		if (strcmp(str(e, "ph"), "X") != 0 || num(e, "pid") != num(fe, "pid") ||
		    num(e, "tid") != num(fe, "tid") || num(e, "ts") != num(fe, "ts"))
			continue;
		if (gpu ? !is_gpu_cat(str(e, "cat")) : strcmp(str(e, "cat"), "cuda_runtime") != 0)
			continue;
		if (num(cJSON_GetObjectItemCaseSensitive(e, "args"), "correlation") == corr)
			return e;
	}
	return NULL;
}

/* Each shape: exactly its arrows, each "s" on the runtime call that launched, each "f" on
 * the GPU work of that launch written first in the file (one arrow per launch). */
START_TEST(test_shape_flows)
{
	const struct shp_shape *sh = &shp_shapes[_i];
	char in[160], out[160];
	struct gt_export_result res = {0};
	struct gt_export_options o = {.output = out, .demangle = 1};
	struct gt_reader *r;
	const char *err = NULL;
	uint64_t want, n = 0;
	const cJSON *e, *f;
	cJSON *j, *ev;
	char *text;

	snprintf(in, sizeof(in), "%s/shape-%s.gtrace", dir, sh->name);
	snprintf(out, sizeof(out), "%s/shape-%s.json", dir, sh->name);
	ck_assert_int_eq(shp_write(sh, in, &want), 0);
	ck_assert_int_eq(gt_reader_open(in, &r, &err), 0);
	ck_assert_int_eq(gt_export_run(gt_exporter_find("chrome"), r, &o, &res, &err), 0);
	gt_reader_close(r);
	ck_assert_uint_eq(res.flows, want);
	text = slurp(out, NULL);
	ck_assert_uint_eq(count_text(text, "{\"ph\":\"s\""), want);
	ck_assert_uint_eq(count_text(text, "{\"ph\":\"f\""), want);
	if (sh->large) {
		free(text); /* too large for cJSON here; the counts are what it is about */
		return;
	}
	j = cJSON_Parse(text);
	free(text);
	ck_assert_ptr_nonnull(j);
	ev = cJSON_GetObjectItemCaseSensitive(j, "traceEvents");
	ck_assert_uint_eq(check_flows(ev), want);
	cJSON_ArrayForEach(f, ev)
	{
		const cJSON *x, *first = NULL;

		if (strcmp(str(f, "ph"), "s") == 0) {
			ck_assert_msg(flow_slice(ev, f, false) != NULL,
			              "flow %.0f starts on no call", num(f, "id"));
			continue;
		}
		if (strcmp(str(f, "ph"), "f") != 0)
			continue;
		x = flow_slice(ev, f, true);
		ck_assert_msg(x != NULL, "flow %.0f ends on no GPU work", num(f, "id"));
		/* the first GPU work of that process and launch in the file */
		cJSON_ArrayForEach(e, ev)
		{
			if (strcmp(str(e, "ph"), "X") == 0 && is_gpu_cat(str(e, "cat")) &&
			    num(e, "pid") == num(x, "pid") &&
			    num(cJSON_GetObjectItemCaseSensitive(e, "args"), "correlation") ==
			            num(cJSON_GetObjectItemCaseSensitive(x, "args"),
			                "correlation")) {
				first = e;
				break;
			}
		}
		ck_assert_ptr_eq(first, x);
		n++;
	}
	ck_assert_uint_eq(n, want);
	cJSON_Delete(j);
}
END_TEST

/* ------------------------------------------------------------------------------------ */
/* The traces recorded on an H200 (tests/data)                                           */

/* What each recorded trace's JSON must hold besides real_traces. Derived like those: tracks
 * are the distinct (pid, tid) of API and NVTX rows, the sync rows' tid and the GPU rows'
 * stream_id, and "ts"/"dur" fields are 2 per slice and 1 per counter, instant and flow end. */
static const struct chrome_real {
	uint64_t meta;          /* "M" events */
	size_t tracks;          /* distinct (pid, tid) carrying "X" slices */
	size_t ts_fields;       /* "ts" and "dur" values */
	const char *thread;     /* the main thread's thread_name */
	uint32_t streams[9];    /* the streams used, 0-terminated */
	uint32_t threads[9];    /* tids of API calls, 0-terminated */
	const char *kernels[3]; /* every kernel's demangled name, with its instances */
	uint64_t instances[3];
} chrome_real[REAL_TRACES] = {
        {
                .meta = 15,
                .tracks = 5,
                .ts_fields = 1459,           /* 21 of them the pool counter's */
                .thread = "gputrace-exampl", /* the kernel's comm is 15 characters */
                .streams = {7, 13, 14},
                .threads = {660},
                .kernels = {"matmul(float const*, float const*, float*, int)", "relu(float*, int)",
                            "reduce_sum(float const*, float*, int)"},
                .instances = {40, 20, 20},
        },
        {
                .meta = 43,
                .tracks = 19,
                .ts_fields = 4865,
                .thread = "gt-gpu-workload",
                .streams = {7, 13, 14, 15, 16, 17, 18, 19, 20},
                .threads = {508, 518, 519, 520, 521, 522, 523, 524, 525},
                .kernels = {"gt_tag(int*, int)"},
                .instances = {800},
        },
};

/* Every flow start has exactly one end with its id and the other way round; starts sit
 * on a traced process, ends on a GPU. Returns the number of pairs. */
static size_t check_flows(const cJSON *ev)
{
	size_t ns = 0, nf = 0, cap = 0;
	uint64_t *s_ids = NULL, *f_ids = NULL;
	const cJSON *e;

	cJSON_ArrayForEach(e, ev)
	{
		const char *ph = str(e, "ph");

		if (strcmp(ph, "s") != 0 && strcmp(ph, "f") != 0)
			continue;
		if (ns == cap || nf == cap) {
			cap = cap ? 2 * cap : 1024;
			s_ids = realloc(s_ids, cap * sizeof(*s_ids));
			f_ids = realloc(f_ids, cap * sizeof(*f_ids));
		}
		ck_assert_str_eq(str(e, "cat"), "ac2g");
		if (*ph == 's') {
			s_ids[ns++] = (uint64_t)num(e, "id");
			ck_assert_double_lt(num(e, "pid"), 5000000);
		} else {
			f_ids[nf++] = (uint64_t)num(e, "id");
			ck_assert_str_eq(str(e, "bp"), "e");
			ck_assert_double_ge(num(e, "pid"), 5000000);
		}
	}
	ck_assert_uint_eq(ns, nf);
	for (size_t i = 0; i < ns; i++) {
		size_t same_s = 0, same_f = 0;

		for (size_t k = 0; k < ns; k++) {
			same_s += s_ids[k] == s_ids[i];
			same_f += f_ids[k] == s_ids[i];
		}
		ck_assert_uint_eq(same_s, 1);
		ck_assert_uint_eq(same_f, 1);
	}
	free(s_ids);
	free(f_ids);
	return ns;
}

/* Events of phase ph, category cat and name `name`. */
static uint64_t count_ph_named(const cJSON *events, const char *ph, const char *cat,
                               const char *name)
{
	uint64_t n = 0;
	const cJSON *e;

	cJSON_ArrayForEach(e, events)
	{
		if (strcmp(str(e, "ph"), ph) == 0 && strcmp(str(e, "cat"), cat) == 0 &&
		    strcmp(str(e, "name"), name) == 0)
			n++;
	}
	return n;
}

static uint64_t count_named(const cJSON *events, const char *cat, const char *name)
{
	return count_ph_named(events, "X", cat, name);
}

/* Number of thread_name events of pid; each must name a tid of ids[0..n) or extra. */
static size_t thread_names(const cJSON *events, double pid, const uint32_t *ids, size_t n,
                           double extra)
{
	size_t found = 0;
	const cJSON *e;

	cJSON_ArrayForEach(e, events)
	{
		bool listed = num(e, "tid") == extra;

		if (strcmp(str(e, "ph"), "M") != 0 || strcmp(str(e, "name"), "thread_name") != 0 ||
		    num(e, "pid") != pid)
			continue;
		for (size_t k = 0; k < n; k++)
			listed |= num(e, "tid") == ids[k];
		ck_assert_msg(listed, "unexpected thread_name for pid %.0f tid %.0f", pid,
		              num(e, "tid"));
		found++;
	}
	return found;
}

START_TEST(test_real_trace)
{
	const struct real_trace *x = &real_traces[_i];
	const struct chrome_real *xc = &chrome_real[_i];
	char out[160], name[32];
	struct gt_export_result res;
	const cJSON *a, *e, *last = NULL, *first_pool = NULL, *last_pool = NULL;
	cJSON *j, *ev;
	char *text;
	uint64_t counters = 0, pool_counters = 0, named = 0;
	size_t n;

	snprintf(out, sizeof(out), "%s/real-%d.json", dir, _i);
	ck_assert_int_eq(export_real(x->file, "chrome", out, &res), 0);
	ck_assert_uint_eq(res.files, 1);
	ck_assert_uint_eq(res.events, x->events);
	ck_assert_ptr_null(res.warning);
	text = slurp(out, NULL);
	/* and the instant at the trace's zero */
	ck_assert_uint_eq(check_ts_format(text), xc->ts_fields + 1);
	j = cJSON_Parse(text);
	ck_assert_msg(j != NULL, "%s is not valid JSON", x->file);
	free(text);
	ev = cJSON_GetObjectItemCaseSensitive(j, "traceEvents");
	ck_assert(cJSON_IsArray(ev));

	/* exact counts per category */
	ck_assert_uint_eq(count(ev, "X", "kernel"), x->kernel);
	ck_assert_uint_eq(count(ev, "X", "gpu_memcpy"), x->memcpy);
	ck_assert_uint_eq(count(ev, "X", "gpu_memset"), x->memset);
	ck_assert_uint_eq(count(ev, "X", "cuda_runtime"), x->runtime);
	ck_assert_uint_eq(count(ev, "X", "cuda_driver"), 0);
	ck_assert_uint_eq(count(ev, "X", "cuda_sync"), x->sync);
	ck_assert_uint_eq(count(ev, "X", "cuda_graph"), 0);
	ck_assert_uint_eq(count(ev, "X", "overhead"), 0);
	ck_assert_uint_eq(count(ev, "X", "user_annotation"), x->nvtx);
	ck_assert_uint_eq(count(ev, "i", "user_annotation"), 0);
	ck_assert_uint_eq(count(ev, "i", "loss"), 0);
	ck_assert_uint_eq(count(ev, "i", "notice"), 0);
	ck_assert_uint_eq(count(ev, "i", "process"), 1);
	ck_assert_uint_eq(count(ev, "i", "memory_pool"), x->pools);
	ck_assert_uint_eq(count_ph_named(ev, "i", "memory_pool", "memory pool created"),
	                  x->pools ? 1 : 0);
	ck_assert_uint_eq(count_ph_named(ev, "i", "memory_pool", "memory pool trimmed"),
	                  x->pools ? x->pools - 1 : 0);
	ck_assert_uint_eq(count(ev, "C", NULL), x->counters + x->pools);
	ck_assert_uint_eq(count(ev, "s", NULL), x->flows);
	ck_assert_uint_eq(count(ev, "f", NULL), x->flows);
	ck_assert_uint_eq(count(ev, "M", NULL), xc->meta);
	ck_assert_uint_eq(count(ev, "X", NULL),
	                  x->kernel + x->memcpy + x->memset + x->runtime + x->sync + x->nvtx);
	ck_assert_uint_eq(count(ev, "i", "trace"), 1);
	ck_assert_uint_eq((uint64_t)cJSON_GetArraySize(ev),
	                  x->events + xc->meta + 2 * x->flows + 1);
	ck_assert_uint_eq(check_flows(ev), x->flows);
	ck_assert_uint_eq(check_nesting(ev), xc->tracks);

	/* kernels by their demangled names, and no other */
	for (int k = 0; k < 3 && xc->kernels[k]; k++) {
		ck_assert_uint_eq(count_named(ev, "kernel", xc->kernels[k]), xc->instances[k]);
		named += xc->instances[k];
	}
	ck_assert_uint_eq(named, x->kernel);
	cJSON_ArrayForEach(e, ev)
	{
		if (strcmp(str(e, "cat"), "kernel") == 0)
			ck_assert_msg(strncmp(str(e, "name"), "_Z", 2) != 0, "mangled: %s",
			              str(e, "name"));
	}

	/* the memory counter of GPU 0: every allocation was freed by the end */
	cJSON_ArrayForEach(e, ev)
	{
		if (strcmp(str(e, "ph"), "C") != 0)
			continue;
		ck_assert_double_eq(num(e, "pid"), 5000000);
		if (strcmp(str(e, "name"), "memory pool reserved") == 0) {
			first_pool = first_pool ? first_pool : e;
			last_pool = e;
			pool_counters++;
			continue;
		}
		ck_assert_str_eq(str(e, "name"), "memory in use");
		counters++;
		last = e;
	}
	ck_assert_uint_eq(counters, x->counters);
	ck_assert_double_eq(num(cJSON_GetObjectItemCaseSensitive(last, "args"), "bytes"), 0);
	/* and its memory pools' reserve, a value per pool record */
	ck_assert_uint_eq(pool_counters, x->pools);
	if (x->pools) {
		ck_assert_double_eq(
		        num(cJSON_GetObjectItemCaseSensitive(first_pool, "args"), "bytes"),
		        (double)x->pool_first);
		ck_assert_double_eq(
		        num(cJSON_GetObjectItemCaseSensitive(last_pool, "args"), "bytes"),
		        (double)x->pool_last);
	}

	/* the pool's creation, on GPU 0, as the MEMORY_POOL record says */
	cJSON_ArrayForEach(e, ev)
	{
		if (strcmp(str(e, "name"), "memory pool created") != 0)
			continue;
		a = cJSON_GetObjectItemCaseSensitive(e, "args");
		ck_assert_str_eq(str(e, "s"), "p");
		ck_assert_double_eq(num(e, "pid"), 5000000);
		ck_assert_str_eq(str(a, "address"), "0x302000000");
		ck_assert_double_eq(num(a, "reserved bytes"), 33554432);
		ck_assert_double_eq(num(a, "release threshold bytes"), 0);
		ck_assert_str_eq(str(a, "pool type"), "local");
		ck_assert_double_eq(num(a, "correlation"), 143);
	}

	/* names of the traced process, its threads, the GPU and its streams */
	a = find_meta(ev, "process_name", x->pid, -1);
	ck_assert_ptr_nonnull(a);
	ck_assert_str_eq(str(a, "name"), x->process);
	for (n = 0; n < 9 && xc->threads[n]; n++) {
		a = find_meta(ev, "thread_name", x->pid, xc->threads[n]);
		ck_assert_msg(a != NULL, "no thread_name for tid %u", xc->threads[n]);
		ck_assert_str_eq(str(a, "name"), xc->thread);
	}
	/* and no other thread but the sync track CUPTI's sync records share (no tid) */
	a = find_meta(ev, "thread_name", x->pid, 16u << 25); /* tid 0, sync lane */
	ck_assert_ptr_nonnull(a);
	ck_assert_str_eq(str(a, "name"), "thread 0 sync");
	ck_assert_uint_eq(thread_names(ev, x->pid, xc->threads, n, 16u << 25), n + 1);
	a = find_meta(ev, "process_name", 5000000, -1);
	ck_assert_ptr_nonnull(a);
	ck_assert_str_eq(str(a, "name"), "GPU 0");
	a = find_meta(ev, "process_labels", 5000000, -1);
	ck_assert_ptr_nonnull(a);
	ck_assert_str_eq(str(a, "labels"), "NVIDIA H200");
	for (n = 0; n < 9 && xc->streams[n]; n++) {
		a = find_meta(ev, "thread_name", 5000000, xc->streams[n]);
		ck_assert_msg(a != NULL, "no thread_name for stream %u", xc->streams[n]);
		snprintf(name, sizeof(name), "stream %u", xc->streams[n]);
		ck_assert_str_eq(str(a, "name"), name);
	}
	ck_assert_uint_eq(thread_names(ev, 5000000, xc->streams, n, -1), n);
	ck_assert_ptr_null(find_meta(ev, "process_name", 5000001, -1));

	a = cJSON_GetObjectItemCaseSensitive(j, "gputrace");
	ck_assert_double_eq(num(a, "events"), (double)x->events);
	ck_assert_double_eq(num(cJSON_GetObjectItemCaseSensitive(a, "losses"), "total"), 0);
	ck_assert_double_eq(num(a, "overlapping_slices"), 0);
	ck_assert_int_eq(
	        cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(j, "deviceProperties")), 1);
	cJSON_Delete(j);
}
END_TEST

static Suite *chrome_suite(void)
{
	Suite *s = suite_create("chrome");
	TCase *tc = tcase_create("export");

	tcase_add_unchecked_fixture(tc, setup_once, teardown_once);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_counts);
	tcase_add_test(tc, test_flows_paired);
	tcase_add_test(tc, test_nesting);
	tcase_add_test(tc, test_names_and_metadata);
	tcase_add_test(tc, test_mangled_when_asked);
	tcase_add_test(tc, test_window_zero);
	tcase_add_test(tc, test_timestamp_format);
	tcase_add_test(tc, test_split);
	tcase_add_test(tc, test_bad_output);
	tcase_add_test(tc, test_untimed_kernel);
	tcase_add_test(tc, test_pool_counter);
	tcase_add_test(tc, test_long_escaped_name);
	suite_add_tcase(s, tc);
	tc = tcase_create("model");
	tcase_add_test(tc, test_fmt);
	tcase_add_test(tc, test_escape);
	tcase_add_test(tc, test_lanes);
	suite_add_tcase(s, tc);
	tc = tcase_create("shapes");
	tcase_add_unchecked_fixture(tc, setup_dir, teardown_once);
	tcase_set_timeout(tc, 300);
	tcase_add_loop_test(tc, test_shape_flows, 0, (int)SHP_SHAPES);
	suite_add_tcase(s, tc);
	tc = tcase_create("recorded");
	tcase_add_unchecked_fixture(tc, setup_dir, teardown_once);
	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, test_real_trace, 0, (int)REAL_TRACES);
	suite_add_tcase(s, tc);
	return s;
}

/* argv[1]: tests/data, where the traces recorded on a GPU live. */
int main(int argc, char **argv)
{
	SRunner *sr;
	int failed;

	data_dir = argc > 1 ? argv[1] : NULL;
	sr = srunner_create(chrome_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
