/* Check suite for what the chrome exporter writes for Holistic Trace Analysis and TensorBoard
 * (exporters/formats/chrome.c, chrome-split.c): ProfilerStep#N slices one for one with the NVTX
 * steps, distributedInfo per rank, one file per rank holding exactly its processes' events,
 * and Kineto's per-kernel SM load; on the synthetic two-rank trace of export-fixture.h and on
 * the two-rank job recorded on an H200 (tests/data/ddp-2rank.gtrace). */
#include <check.h>
#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FX_TEST_TAG "chrome-hta"
#include "export-test.h"
#include "exporter.h"

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	ck_assert_msg(f != NULL, "cannot open %s", path);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc((size_t)n + 1);
	ck_assert_uint_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static cJSON *load(const char *path)
{
	char *text = slurp(path);
	cJSON *j = cJSON_Parse(text);

	ck_assert_msg(j != NULL, "%s is not valid JSON", path);
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

static const cJSON *obj(const cJSON *o, const char *key)
{
	return cJSON_GetObjectItemCaseSensitive(o, key);
}

/* Run the chrome exporter on trace `in` with options o (output and demangling set here). */
static int export_with(const char *in, const char *out, struct gt_export_options *o,
                       struct gt_export_result *res)
{
	struct gt_reader *r;
	const char *err = NULL;
	int ret;

	o->output = out;
	o->demangle = 1;
	memset(res, 0, sizeof(*res));
	ck_assert_msg(gt_reader_open(in, &r, &err) == 0, "%s: %s", in, err);
	ret = gt_export_run(gt_exporter_find("chrome"), r, o, res, &err);
	if (ret < 0)
		fprintf(stderr, "export failed: %s\n", err);
	gt_reader_close(r);
	return ret;
}

static void data_path(char *buf, size_t size, const char *file)
{
	ck_assert_msg(data_dir != NULL, "pass the tests/data directory as the argument");
	snprintf(buf, size, "%s/%s", data_dir, file);
}

/* Events but metadata and flows, as the exporter counts them. */
/* Events of a file but metadata, arrows and the instant at the trace's zero (category
 * "trace", which every file opens with and which is not among the exporter's events). */
static uint64_t events_of(const cJSON *ev)
{
	uint64_t n = 0, zero = 0;
	const cJSON *e;

	cJSON_ArrayForEach(e, ev)
	{
		const char *ph = str(e, "ph");
		const cJSON *cat = cJSON_GetObjectItemCaseSensitive(e, "cat");

		if (cJSON_IsString(cat) && strcmp(cat->valuestring, "trace") == 0) {
			ck_assert_str_eq(ph, "i");
			ck_assert_double_eq(num(e, "ts"), 0);
			zero++;
			continue;
		}
		n += strcmp(ph, "M") != 0 && strcmp(ph, "s") != 0 && strcmp(ph, "f") != 0;
	}
	ck_assert_uint_eq(zero, 1);
	return n;
}

static uint64_t count_cat(const cJSON *ev, const char *ph, const char *cat)
{
	uint64_t n = 0;
	const cJSON *e;

	cJSON_ArrayForEach(e, ev)
	{
		n += strcmp(str(e, "ph"), ph) == 0 && strcmp(str(e, "cat"), cat) == 0;
	}
	return n;
}

static uint64_t count_name_prefix(const cJSON *ev, const char *prefix)
{
	uint64_t n = 0;
	const cJSON *e;

	cJSON_ArrayForEach(e, ev)
	{
		n += strncmp(str(e, "name"), prefix, strlen(prefix)) == 0 &&
		     strcmp(str(e, "ph"), "X") == 0;
	}
	return n;
}

/* The rank HTA reads from a file: the first "rank": followed by white space and digits (its
 * regular expression "rank":\s+(\d+)), line by line; -1 without one. */
static long hta_rank(const char *path)
{
	char *text = slurp(path), *p = text;
	long rank = -1;

	while ((p = strstr(p, "\"rank\":")) != NULL) {
		char *q = p + 7;

		if (*q == ' ' || *q == '\t') {
			while (*q == ' ' || *q == '\t')
				q++;
			if (*q >= '0' && *q <= '9') {
				rank = strtol(q, NULL, 10);
				break;
			}
		}
		p = q;
	}
	free(text);
	return rank;
}

/* distributedInfo says rank, world size, local rank and backend (NULL: no key). */
static void check_dist(const cJSON *j, int rank, int world, int local, const char *backend)
{
	const cJSON *d = obj(j, "distributedInfo");

	ck_assert_msg(cJSON_IsObject(d), "no distributedInfo");
	ck_assert_double_eq(num(d, "rank"), rank);
	ck_assert_double_eq(num(d, "world_size"), world);
	ck_assert_double_eq(num(d, "local_rank"), local);
	if (backend)
		ck_assert_str_eq(str(d, "backend"), backend);
	else
		ck_assert_ptr_null(obj(d, "backend"));
	ck_assert_int_eq(cJSON_GetArraySize(d), backend ? 4 : 3);
}

/* ------------------------------------------------------------------------------------ */
/* Steps                                                                                 */

/* Each process's NVTX "step" ranges of the fixture are ProfilerStep#0..iters-1, at the
 * ranges' times, with the NVTX message kept. */
START_TEST(test_fixture_steps)
{
	struct gt_export_options o = {0};
	struct gt_export_result res;
	char out[160], want[32];
	cJSON *j;
	const cJSON *ev;
	const cJSON *e, *g;
	uint64_t seen[2] = {0};

	snprintf(out, sizeof(out), "%s/steps.json", dir);
	ck_assert_int_eq(export_with(trace_path, out, &o, &res), 0);
	ck_assert_uint_eq(res.steps, (uint64_t)fxo.procs * fxo.iters);
	ck_assert_uint_eq(res.events, fxe.events);
	j = load(out);
	ev = obj(j, "traceEvents");
	ck_assert_uint_eq(count_name_prefix(ev, "ProfilerStep#"), (uint64_t)fxo.procs * fxo.iters);
	ck_assert_uint_eq(count_name_prefix(ev, "step"), 0);
	/* still NVTX ranges, as many as before */
	ck_assert_uint_eq(count_cat(ev, "X", "user_annotation"), fxe.nvtx_ranges);
	cJSON_ArrayForEach(e, ev)
	{
		const cJSON *a = obj(e, "args");
		double pid = num(e, "pid");
		unsigned p = (unsigned)(pid - FX_PID0), i;
		uint64_t t;

		if (strncmp(str(e, "name"), "ProfilerStep#", 13) != 0)
			continue;
		ck_assert_uint_lt(p, 2);
		i = (unsigned)seen[p]++;
		/* written in the order of the steps, numbered from 0 */
		snprintf(want, sizeof(want), "ProfilerStep#%u", i);
		ck_assert_str_eq(str(e, "name"), want);
		ck_assert_str_eq(str(e, "cat"), "user_annotation");
		ck_assert_double_eq(num(e, "tid"), pid); /* on the thread that pushed it */
		t = (uint64_t)(pid * 7) + (uint64_t)i * FX_STEP_NS; /* since FX_T0, the base */
		ck_assert_double_eq_tol(num(e, "ts"), (double)t / 1000.0, 1e-6);
		ck_assert_double_eq_tol(num(e, "dur"), 90.0, 1e-9);
		ck_assert_str_eq(str(a, "nvtx message"), "step");
		ck_assert_str_eq(str(a, "domain"), "my domain");
	}
	ck_assert_uint_eq(seen[0], fxo.iters);
	ck_assert_uint_eq(seen[1], fxo.iters);
	g = obj(j, "gputrace");
	ck_assert_double_eq(num(g, "profiler_steps"), (double)fxo.procs * fxo.iters);
	ck_assert_str_eq(str(g, "steps_from"), "step");
	/* two ranks in one file: it names neither */
	ck_assert_ptr_null(obj(j, "distributedInfo"));
	ck_assert_uint_eq(res.ranks, 2);
	cJSON_Delete(j);
}
END_TEST

/* --no-steps keeps every name; --step NAME takes other ranges. */
START_TEST(test_fixture_step_options)
{
	struct gt_export_options o = {.no_steps = 1};
	struct gt_export_result res;
	char out[160];
	cJSON *j;
	const cJSON *ev;
	const cJSON *e;
	uint64_t n = 0;

	snprintf(out, sizeof(out), "%s/nosteps.json", dir);
	ck_assert_int_eq(export_with(trace_path, out, &o, &res), 0);
	ck_assert_uint_eq(res.steps, 0);
	j = load(out);
	ev = obj(j, "traceEvents");
	ck_assert_uint_eq(count_name_prefix(ev, "ProfilerStep#"), 0);
	ck_assert_uint_eq(count_name_prefix(ev, "step"), (uint64_t)fxo.procs * fxo.iters);
	ck_assert_double_eq(num(obj(j, "gputrace"), "profiler_steps"), 0);
	ck_assert_ptr_null(obj(obj(j, "gputrace"), "steps_from"));
	cJSON_Delete(j);

	memset(&o, 0, sizeof(o));
	o.step_name = "prefetch";
	snprintf(out, sizeof(out), "%s/prefetch.json", dir);
	ck_assert_int_eq(export_with(trace_path, out, &o, &res), 0);
	ck_assert_uint_eq(res.steps, (uint64_t)fxo.procs * fxo.iters);
	j = load(out);
	ev = obj(j, "traceEvents");
	ck_assert_uint_eq(count_name_prefix(ev, "step"), (uint64_t)fxo.procs * fxo.iters);
	ck_assert_uint_eq(count_name_prefix(ev, "prefetch"), 0);
	cJSON_ArrayForEach(e, ev)
	{
		if (strncmp(str(e, "name"), "ProfilerStep#", 13) != 0)
			continue;
		/* start/end ranges: on the process's NVTX lanes, 55 us long */
		ck_assert_str_eq(str(obj(e, "args"), "nvtx message"), "prefetch");
		ck_assert_double_eq_tol(num(e, "dur"), 55.0, 1e-9);
		ck_assert_uint_ge((uint64_t)num(e, "tid"), 0x7e000000u);
		n++;
	}
	ck_assert_uint_eq(n, (uint64_t)fxo.procs * fxo.iters);
	ck_assert_str_eq(str(obj(j, "gputrace"), "steps_from"), "named");
	cJSON_Delete(j);
}
END_TEST

/* The recorded job's ranges are named ProfilerStep#N already: the same names, no message arg;
 * one for one with the NVTX records. */
START_TEST(test_real_steps)
{
	struct gt_export_options o = {0};
	struct gt_export_result res;
	char in[4096], out[160];
	const union gt_record *rec;
	struct gt_reader *r;
	const char *err = NULL;
	cJSON *j;
	const cJSON *ev;
	const cJSON *e;
	double base;
	uint64_t nvtx = 0, matched = 0;

	data_path(in, sizeof(in), "ddp-2rank.gtrace");
	snprintf(out, sizeof(out), "%s/ddp.json", dir);
	ck_assert_int_eq(export_with(in, out, &o, &res), 0);
	ck_assert_uint_eq(res.steps, 24);
	j = load(out);
	ev = obj(j, "traceEvents");
	base = num(obj(j, "gputrace"), "base_time_ns");
	ck_assert_uint_eq(count_name_prefix(ev, "ProfilerStep#"), 24);
	ck_assert_int_eq(gt_reader_open(in, &r, &err), 0);
	while (gt_reader_next(r, &rec) > 0) {
		size_t len;
		const char *text;

		if (rec->hdr.type != GT_REC_NVTX)
			continue;
		text = gt_reader_string(r, rec->nvtx.message_id, &len);
		if (len < 13 || strncmp(text, "ProfilerStep#", 13) != 0)
			continue;
		nvtx++;
		cJSON_ArrayForEach(e, ev)
		{
			if (strlen(str(e, "name")) != len ||
			    memcmp(str(e, "name"), text, len) != 0 || num(e, "pid") != rec->hdr.pid)
				continue;
			ck_assert_double_eq(num(e, "tid"), rec->nvtx.tid);
			ck_assert_double_eq_tol(num(e, "ts") * 1000.0,
			                        (double)rec->nvtx.start_ns - base, 0.5);
			ck_assert_double_eq_tol(num(e, "dur") * 1000.0,
			                        (double)(rec->nvtx.end_ns - rec->nvtx.start_ns),
			                        0.5);
			ck_assert_ptr_null(obj(obj(e, "args"), "nvtx message"));
			matched++;
		}
	}
	gt_reader_close(r);
	ck_assert_uint_eq(nvtx, 24);
	ck_assert_uint_eq(matched, 24);
	/* the file holds two ranks (and the launcher): it names none, and the CLI says so */
	ck_assert_ptr_null(obj(j, "distributedInfo"));
	ck_assert_int_eq(hta_rank(out), -1);
	ck_assert_uint_eq(res.ranks, 2);
	cJSON_Delete(j);
}
END_TEST

/* ------------------------------------------------------------------------------------ */
/* Ranks                                                                                 */

/* A standalone rank's file names its rank, at the end, in the form HTA's search finds. */
START_TEST(test_one_rank_file)
{
	struct gt_export_result res;
	char out[160];
	cJSON *j;

	for (int r = 0; r < 2; r++) {
		snprintf(out, sizeof(out), "%s/rank%d.json", dir, r);
		ck_assert_int_eq(export_real(r ? "ddp-rank1.gtrace" : "ddp-rank0.gtrace", "chrome",
		                             out, &res),
		                 0);
		ck_assert_uint_eq(res.ranks, 1);
		ck_assert_uint_eq(res.steps, 12);
		j = load(out);
		check_dist(j, r, 2, r, NULL);
		ck_assert_int_eq(hta_rank(out), r);
		cJSON_Delete(j);
	}
}
END_TEST

/* --split ranks on the fixture: a file per rank, each with half of everything. */
START_TEST(test_fixture_split)
{
	struct gt_export_options o = {.split = GT_EXPORT_SPLIT_RANKS};
	struct gt_export_result res;
	char out[160], path[256];
	uint64_t total = 0;

	snprintf(out, sizeof(out), "%s/ranks", dir);
	ck_assert_int_eq(export_with(trace_path, out, &o, &res), 0);
	ck_assert_uint_eq(res.files, 2);
	ck_assert_uint_eq(res.ranks, 2);
	ck_assert_uint_eq(res.left_out, 0);
	ck_assert_uint_eq(res.left_out_records, 0);
	ck_assert_uint_eq(res.events, fxe.events);
	ck_assert_uint_eq(res.flows, fxe.flows);
	ck_assert_uint_eq(res.steps, (uint64_t)fxo.procs * fxo.iters);
	ck_assert_ptr_null(res.warning);
	for (int r = 0; r < 2; r++) {
		cJSON *j;
		const cJSON *ev;
		const cJSON *e, *d;
		uint64_t n;

		snprintf(path, sizeof(path), "%s/rank-%d.pt.trace.json", out, r);
		j = load(path);
		ev = obj(j, "traceEvents");
		/* the fixture's processes are alike: each has an equal share */
		n = events_of(ev);
		ck_assert_uint_eq(n, fxe.events / 2);
		ck_assert_double_eq(num(obj(j, "gputrace"), "events"), (double)n);
		total += n;
		ck_assert_uint_eq(count_cat(ev, "X", "kernel"), fxe.kernels / 2);
		ck_assert_uint_eq(count_cat(ev, "X", "cuda_runtime"), fxe.runtime / 2);
		ck_assert_uint_eq(count_cat(ev, "s", "ac2g"), fxe.flows / 2);
		ck_assert_uint_eq(count_cat(ev, "f", "ac2g"), fxe.flows / 2);
		ck_assert_uint_eq(count_name_prefix(ev, "ProfilerStep#"), fxo.iters);
		/* only its process and its GPU (device 0 of its own: GPU 0, pid 0 as in
		 * Kineto's JSON, since the process's pid is above 256) */
		cJSON_ArrayForEach(e, ev)
		{
			double pid = num(e, "pid");

			ck_assert_msg(pid == FX_PID0 + r || pid == 0, "pid %.0f in rank %d", pid,
			              r);
			if (strcmp(str(e, "cat"), "kernel") == 0)
				ck_assert_double_eq(num(obj(e, "args"), "device"), pid);
		}
		check_dist(j, r, 2, r, NULL);
		ck_assert_int_eq(hta_rank(path), r);
		d = obj(j, "deviceProperties");
		ck_assert_int_eq(cJSON_GetArraySize(d), 1);
		ck_assert_double_eq(num(obj(j, "gputrace"), "rank_file"), r);
		ck_assert_str_eq(str(obj(j, "gputrace"), "split"), "ranks");
		cJSON_Delete(j);
	}
	ck_assert_uint_eq(total, fxe.events);
}
END_TEST

/* What a rank's file of the recorded job must hold: every drawn record of its process, read
 * here from the trace apart from the exporter. */
static void per_pid_events(const char *in, uint32_t pid, uint64_t *events, uint64_t *steps)
{
	const union gt_record *rec;
	struct gt_reader *r;
	const char *err = NULL;

	*events = *steps = 0;
	ck_assert_int_eq(gt_reader_open(in, &r, &err), 0);
	while (gt_reader_next(r, &rec) > 0) {
		if (rec->hdr.pid != pid)
			continue;
		switch (rec->hdr.type) {
		case GT_REC_KERNEL:
		case GT_REC_MEMCPY:
		case GT_REC_MEMSET:
		case GT_REC_GRAPH:
			/* the span is the first field after the header in each */
			*events += rec->kernel.span.start_ns != 0;
			break;
		case GT_REC_API:
		case GT_REC_SYNC:
		case GT_REC_OVERHEAD:
		case GT_REC_LOSS:
		case GT_REC_NOTICE:
		case GT_REC_PROCESS_END:
			(*events)++;
			break;
		case GT_REC_NVTX: {
			size_t len;
			const char *t = gt_reader_string(r, rec->nvtx.message_id, &len);

			(*events)++;
			*steps += rec->nvtx.kind != GT_NVTX_MARK && len > 13 &&
			          strncmp(t, "ProfilerStep#", 13) == 0;
			break;
		}
		case GT_REC_MEMORY:
			*events += rec->memory.mem_kind != GT_MEM_PINNED &&
			           rec->memory.mem_kind != GT_MEM_PAGEABLE;
			break;
		case GT_REC_MEMORY_POOL:
			*events += rec->memory_pool.ts_ns ? 2 : 0; /* an instant and a counter */
			break;
		default:
			break;
		}
	}
	gt_reader_close(r);
}

/* --split ranks on the recorded two-rank job: the launcher left out, each rank's file with
 * exactly its process's events and steps, distributedInfo without a backend (gloo). */
START_TEST(test_real_split)
{
	struct gt_export_options o = {.split = GT_EXPORT_SPLIT_RANKS};
	struct gt_export_result res;
	char in[4096], out[160], path[256];
	uint64_t total = 0, launcher, dummy;

	data_path(in, sizeof(in), "ddp-2rank.gtrace");
	snprintf(out, sizeof(out), "%s/ddp-ranks", dir);
	ck_assert_int_eq(export_with(in, out, &o, &res), 0);
	ck_assert_uint_eq(res.files, 2);
	ck_assert_uint_eq(res.ranks, 2);
	/* the launcher, pid 548: its PROCESS, PROCESS_END, THREAD, CLOCK and NOTICE records */
	ck_assert_uint_eq(res.left_out, 1);
	ck_assert_uint_eq(res.left_out_records, 5);
	ck_assert_uint_eq(res.steps, 24);
	for (int r = 0; r < 2; r++) {
		uint32_t pid = 572 + (uint32_t)r; /* rank 0 is pid 572, rank 1 pid 573 */
		uint64_t want, steps;
		cJSON *j;
		const cJSON *ev;
		const cJSON *e;

		per_pid_events(in, pid, &want, &steps);
		ck_assert_uint_eq(steps, 12);
		snprintf(path, sizeof(path), "%s/rank-%d.pt.trace.json", out, r);
		j = load(path);
		ev = obj(j, "traceEvents");
		ck_assert_uint_eq(events_of(ev), want);
		ck_assert_double_eq(num(obj(j, "gputrace"), "events"), (double)want);
		ck_assert_uint_eq(count_name_prefix(ev, "ProfilerStep#"), 12);
		total += want;
		cJSON_ArrayForEach(e, ev)
		{
			double p = num(e, "pid");

			ck_assert_msg(p == pid || p == 0, "pid %.0f in rank %d", p, r);
			/* TensorBoard's plugin takes a kernel's GPU from its pid */
			if (strcmp(str(e, "cat"), "kernel") == 0)
				ck_assert_double_eq(num(obj(e, "args"), "device"), p);
		}
		check_dist(j, r, 2, r, NULL);
		ck_assert_int_eq(hta_rank(path), r);
		/* the rank's own name and its GPU */
		cJSON_ArrayForEach(e, ev)
		{
			if (strcmp(str(e, "ph"), "M") == 0 &&
			    strcmp(str(e, "name"), "process_name") == 0 && num(e, "pid") == pid) {
				char want_name[32];

				snprintf(want_name, sizeof(want_name), "python3.12 (rank %d)", r);
				ck_assert_str_eq(str(obj(e, "args"), "name"), want_name);
			}
		}
		cJSON_Delete(j);
	}
	ck_assert_uint_eq(total, res.events);
	/* and what the launcher drew is what the whole-trace export has more */
	per_pid_events(in, 548, &launcher, &dummy);
	ck_assert_uint_eq(launcher, 2); /* its notice and its end */
	ck_assert_uint_eq(res.events + launcher, 4405);
}
END_TEST

/* A rank whose process has a pid as small as a GPU number (pid 1 in a container) keeps its
 * GPUs at 5,000,000 + n, so that the two never share a row. */
START_TEST(test_small_pid_split)
{
	struct gt_export_options o = {.split = GT_EXPORT_SPLIT_RANKS};
	struct gt_trace_info info = {.clock_id = GT_CLOCK_MONOTONIC, .tool_version = "test"};
	struct gt_export_result res;
	struct gt_rec_process pr;
	struct gt_rec_kernel k;
	struct gt_writer *w;
	char in[160], out[160], path[256];
	cJSON *j;
	const cJSON *e;
	uint64_t kernels = 0;

	snprintf(in, sizeof(in), "%s/pid1.gtrace", dir);
	ck_assert_int_eq(gt_writer_open(in, &info, NULL, &w), 0);
	memset(&pr, 0, sizeof(pr));
	pr.hdr.type = GT_REC_PROCESS;
	pr.hdr.size = sizeof(pr);
	pr.hdr.pid = 1;
	pr.start_ns = 1000;
	pr.rank = 3;
	pr.local_rank = 0;
	pr.world_size = 4;
	ck_assert_int_eq(gt_writer_write(w, &pr.hdr), 0);
	memset(&k, 0, sizeof(k));
	k.hdr.type = GT_REC_KERNEL;
	k.hdr.size = sizeof(k);
	k.hdr.pid = 1;
	k.span.start_ns = 2000;
	k.span.end_ns = 3000;
	k.span.device_id = 1;
	k.span.stream_id = 7;
	k.grid_x = k.grid_y = k.grid_z = k.block_x = k.block_y = k.block_z = 1;
	ck_assert_int_eq(gt_writer_write(w, &k.hdr), 0);
	ck_assert_int_eq(gt_writer_close(w), 0);
	snprintf(out, sizeof(out), "%s/pid1-ranks", dir);
	ck_assert_int_eq(export_with(in, out, &o, &res), 0);
	ck_assert_uint_eq(res.files, 1);
	snprintf(path, sizeof(path), "%s/rank-3.pt.trace.json", out);
	j = load(path);
	check_dist(j, 3, 4, 0, NULL);
	cJSON_ArrayForEach(e, obj(j, "traceEvents"))
	{
		if (strcmp(str(e, "cat"), "kernel") != 0)
			continue;
		ck_assert_double_eq(num(e, "pid"), 5000001);
		kernels++;
	}
	ck_assert_uint_eq(kernels, 1);
	cJSON_Delete(j);
}
END_TEST

/* A merged trace whose two hosts' processes share a pid cannot be split by rank: refused
 * before anything is written. */
START_TEST(test_pid_clash)
{
	struct gt_export_options o = {.split = GT_EXPORT_SPLIT_RANKS};
	struct gt_trace_info info = {.clock_id = GT_CLOCK_MONOTONIC, .tool_version = "test"};
	struct gt_export_result res;
	struct gt_rec_process pr;
	struct gt_writer *w;
	char in[160], out[160];

	snprintf(in, sizeof(in), "%s/clash.gtrace", dir);
	ck_assert_int_eq(gt_writer_open(in, &info, NULL, &w), 0);
	ck_assert_int_eq(gt_writer_string(w, 4242, 1, "host-a", 6), 0);
	ck_assert_int_eq(gt_writer_string(w, 4242, 2, "host-b", 6), 0);
	for (int h = 0; h < 2; h++) {
		memset(&pr, 0, sizeof(pr));
		pr.hdr.type = GT_REC_PROCESS;
		pr.hdr.size = sizeof(pr);
		pr.hdr.pid = 4242;
		pr.start_ns = 1000;
		pr.host_id = (uint32_t)h + 1;
		pr.rank = h;
		pr.local_rank = 0;
		pr.world_size = 2;
		ck_assert_int_eq(gt_writer_write(w, &pr.hdr), 0);
	}
	ck_assert_int_eq(gt_writer_close(w), 0);
	snprintf(out, sizeof(out), "%s/clash-ranks", dir);
	ck_assert_int_eq(export_with(in, out, &o, &res), -EINVAL);
	ck_assert_int_ne(access(out, F_OK), 0);
}
END_TEST

/* Kineto's SM load per kernel: the fixture's 128 x 2 blocks of 256 threads on 132 SMs. */
START_TEST(test_sm_load)
{
	struct gt_export_result res;
	char out[160];
	cJSON *j;
	const cJSON *e;
	uint64_t n = 0;

	snprintf(out, sizeof(out), "%s/sm.json", dir);
	ck_assert_int_eq(export("chrome", out, 0, 1, &res), 0);
	j = load(out);
	cJSON_ArrayForEach(e, obj(j, "traceEvents"))
	{
		const cJSON *a = obj(e, "args");

		if (strcmp(str(e, "cat"), "kernel") != 0)
			continue;
		ck_assert_double_eq_tol(num(a, "blocks per SM"), 1.939, 1e-9); /* 256 / 132 */
		ck_assert_double_eq_tol(num(a, "warps per SM"), 15.515, 1e-9); /* x 256 / 32 */
		n++;
	}
	ck_assert_uint_eq(n, fxe.kernels);
	cJSON_Delete(j);
}
END_TEST

static Suite *hta_suite(void)
{
	Suite *s = suite_create("chrome-hta");
	TCase *tc = tcase_create("hta");

	tcase_add_unchecked_fixture(tc, setup_once, teardown_once);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_fixture_steps);
	tcase_add_test(tc, test_fixture_step_options);
	tcase_add_test(tc, test_real_steps);
	tcase_add_test(tc, test_one_rank_file);
	tcase_add_test(tc, test_fixture_split);
	tcase_add_test(tc, test_real_split);
	tcase_add_test(tc, test_small_pid_split);
	tcase_add_test(tc, test_pid_clash);
	tcase_add_test(tc, test_sm_load);
	suite_add_tcase(s, tc);
	return s;
}

/* argv[1]: tests/data, where the traces recorded on a GPU live. */
int main(int argc, char **argv)
{
	SRunner *sr;
	int failed;

	data_dir = argc > 1 ? argv[1] : NULL;
	sr = srunner_create(hta_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
