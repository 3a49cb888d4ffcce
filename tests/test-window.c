/* Check suite for windows of a trace (src/ops/window.c): exact record counts inside time windows
 * of a synthetic trace whose every timestamp is known, slices cut at the edges, memory carried
 * to the window's start, the same records whether the index is used (chunks passed over) or
 * the file is scanned (no footer, or an old index without chunk types: tests/data), process,
 * rank, device and stream filters, NVTX ranges and steps found in every rank of a real
 * two-rank trace, times as users type them, estimates and cuts. Runs as a unit test; its
 * argument is tests/data. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gputrace/trace.h"
#include "window.h"

static const char *data_dir = "tests/data";
static char dir[64];

static void setup(void)
{
	strcpy(dir, "/tmp/gt-test-window-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}

static const char *path_in(const char *name)
{
	static char buf[4][256];
	static int n;
	char *p = buf[n++ % 4];

	snprintf(p, 256, "%s/%s", dir, name);
	return p;
}

/* ---- the synthetic trace ---------------------------------------------------------------- */

#define T0       1000000000000ull /* trace clock at the start */
#define MS       1000000ull
#define US       1000ull
#define STEPS    20u
#define LAUNCHES 10u /* per step and process */
#define NPROC    2u
#define PID(p)   (100u + 100u * (p)) /* 100, 200 */
#define STEP_NS  (10 * MS)

enum {
	S_EXE = 1,
	S_LAUNCH,
	S_SYNC,
	S_KERNEL,
	S_STEP0, /* "ProfilerStep#k" is S_STEP0 + k */
};

static const struct gt_trace_info synth_info = {
        .clock_id = GT_CLOCK_MONOTONIC,
        .start_realtime_ns = 1714564800123456789ull, /* 2024-05-01T12:00:00.123456789Z */
        .start_trace_ns = T0,
        .hostname = "node",
        .cmdline = "train.py",
        .tool_version = "test",
};

/* Every record of the synthetic trace, in the order written; the oracle reads them here. */
struct synth {
	union gt_record *recs;
	size_t n, cap;
};

static union gt_record *add(struct synth *s, unsigned type, size_t size, uint32_t pid)
{
	union gt_record *r;

	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 1024;
		s->recs = realloc(s->recs, s->cap * sizeof(*s->recs));
		ck_assert_ptr_nonnull(s->recs);
	}
	r = &s->recs[s->n++];
	memset(r, 0, sizeof(*r));
	r->hdr.type = (uint16_t)type;
	r->hdr.size = (uint16_t)size;
	r->hdr.pid = pid;
	return r;
}

/* Process p (rank p, device p) runs STEPS steps of STEP_NS, shifted by p ms: in step k an
 * NVTX range "ProfilerStep#k" [k*10 + p ms, + 9 ms], LAUNCHES cudaLaunchKernel calls of 5 us
 * every 800 us from 100 us into the step, each launching a kernel of 500 us 20 us later on
 * stream 7 (even launches) or 13 (odd); a cudaDeviceSynchronize over steps 3 to 12 of
 * process 0; allocations of 1 MiB at 0.5 ms, 2 MiB in step 5, a free of the first in step 12. */
static void synth_build(struct synth *s)
{
	union gt_record *r;
	uint32_t corr = 0;

	for (unsigned p = 0; p < NPROC; p++) {
		uint32_t pid = PID(p);

		r = add(s, GT_REC_PROCESS, sizeof(struct gt_rec_process), pid);
		r->process.start_ns = T0;
		r->process.exe_id = S_EXE;
		r->process.rank = (int32_t)p;
		r->process.local_rank = (int32_t)p;
		r->process.world_size = NPROC;
		r = add(s, GT_REC_THREAD, sizeof(struct gt_rec_thread), pid);
		r->thread.tid = pid;
		r = add(s, GT_REC_DEVICE, sizeof(struct gt_rec_device), pid);
		r->device.device_id = p;
		r->device.uuid[0] = (uint8_t)(p + 1);
		r->device.sm_count = 132;
	}
	for (unsigned k = 0; k < STEPS; k++) {
		for (unsigned p = 0; p < NPROC; p++) {
			uint32_t pid = PID(p);
			uint64_t step = T0 + k * STEP_NS + p * MS;

			for (unsigned i = 0; i < LAUNCHES; i++) {
				uint64_t t = step + 100 * US + i * 800 * US;

				corr++;
				r = add(s, GT_REC_API, sizeof(struct gt_rec_api), pid);
				r->api.start_ns = t;
				r->api.end_ns = t + 5 * US;
				r->api.tid = pid;
				r->api.correlation_id = corr;
				r->api.cbid = 211;
				r->api.name_id = S_LAUNCH;
				r = add(s, GT_REC_KERNEL, sizeof(struct gt_rec_kernel), pid);
				r->kernel.span.start_ns = t + 20 * US;
				r->kernel.span.end_ns = t + 520 * US;
				r->kernel.span.correlation_id = corr;
				r->kernel.span.device_id = p;
				r->kernel.span.stream_id = i % 2 ? 13 : 7;
				r->kernel.name_id = S_KERNEL;
				r->kernel.grid_x = r->kernel.block_x = 1;
			}
			r = add(s, GT_REC_NVTX, sizeof(struct gt_rec_nvtx), pid);
			r->nvtx.start_ns = step;
			r->nvtx.end_ns = step + 9 * MS;
			r->nvtx.tid = r->nvtx.end_tid = pid;
			r->nvtx.message_id = S_STEP0 + k;
			r->nvtx.kind = GT_NVTX_PUSH_POP;
			if (k == 0 || k == 5 || k == 12) {
				r = add(s, GT_REC_MEMORY, sizeof(struct gt_rec_memory), pid);
				r->memory.ts_ns = step + (k == 0 ? MS / 2 : 0);
				r->memory.address = 0x1000 + (k == 5 ? 0x100000 : 0);
				r->memory.bytes = k == 5 ? 2u << 20 : 1u << 20;
				r->memory.device_id = p;
				r->memory.op = k == 12 ? GT_MEMORY_FREE : GT_MEMORY_ALLOC;
				r->memory.mem_kind = GT_MEM_DEVICE;
			}
			if (k == 12 && p == 0) {
				r = add(s, GT_REC_API, sizeof(struct gt_rec_api), pid);
				r->api.start_ns = T0 + 3 * STEP_NS + 9500 * US;
				r->api.end_ns = T0 + 12 * STEP_NS + 9500 * US;
				r->api.tid = pid;
				r->api.correlation_id = ++corr;
				r->api.name_id = S_SYNC;
			}
		}
	}
}

/* Write the trace: strings first (each string where it is first needed would do as well),
 * then the records, in chunks of chunk_bytes. */
static void synth_write(const struct synth *s, const char *path, size_t chunk_bytes)
{
	struct gt_writer_options wo = {.chunk_bytes = chunk_bytes};
	struct gt_writer *w;
	char name[64];

	ck_assert_int_eq(gt_writer_open(path, &synth_info, &wo, &w), 0);
	ck_assert_int_eq(gt_writer_string(w, PID(0), S_EXE, "/usr/bin/python3", 16), 0);
	ck_assert_int_eq(gt_writer_string(w, PID(0), S_LAUNCH, "cudaLaunchKernel", 16), 0);
	ck_assert_int_eq(gt_writer_string(w, PID(0), S_SYNC, "cudaDeviceSynchronize", 21), 0);
	ck_assert_int_eq(gt_writer_string(w, PID(0), S_KERNEL, "gemm", 4), 0);
	for (unsigned k = 0; k < STEPS; k++) {
		int n = snprintf(name, sizeof(name), "ProfilerStep#%u", k);

		ck_assert_int_eq(gt_writer_string(w, PID(0), S_STEP0 + k, name, (size_t)n), 0);
	}
	for (size_t i = 0; i < s->n; i++)
		ck_assert_int_eq(gt_writer_write(w, &s->recs[i].hdr), 0);
	ck_assert_int_eq(gt_writer_close(w), 0);
}

/* A copy of path without its footer: what a killed writer leaves. */
static void strip_footer(const char *path, const char *out)
{
	struct gt_reader *r;
	struct gt_chunk_info c;
	uint64_t end = 0, k;
	char cmd[700];

	ck_assert_int_eq(gt_reader_open(path, &r, NULL), 0);
	for (k = 0; gt_reader_chunk_info(r, k, &c) == 1; k++)
		end = c.offset + 40 + c.comp_bytes;
	gt_reader_close(r);
	ck_assert_uint_gt(end, 0);
	snprintf(cmd, sizeof(cmd), "head -c %llu '%s' > '%s'", (unsigned long long)end, path, out);
	ck_assert_int_eq(system(cmd), 0);
}

/* ---- the oracle: the rules of docs/cli.md, "Windows", on the records as written --------- */

struct counts {
	uint64_t per_type[GT_REC_MAX];
	uint64_t clipped, carried, all;
};

static void oracle(const struct synth *s, uint64_t from, uint64_t to, struct counts *c)
{
	memset(c, 0, sizeof(*c));
	for (size_t i = 0; i < s->n; i++) {
		const union gt_record *r = &s->recs[i];
		uint64_t a, b;

		switch (r->hdr.type) {
		case GT_REC_MEMORY:
			if (r->memory.ts_ns >= to)
				continue;
			c->carried += r->memory.ts_ns < from;
			break;
		case GT_REC_API:
		case GT_REC_KERNEL:
		case GT_REC_NVTX:
			memcpy(&a, (const uint8_t *)r + 8, 8);
			memcpy(&b, (const uint8_t *)r + 16, 8);
			if (!(a < to && b > from))
				continue;
			c->clipped += a < from || b > to;
			break;
		default:
			break;
		}
		c->per_type[r->hdr.type]++;
		c->all++;
	}
}

/* Read r through window w: counts, and every record checked against the window. */
static void read_window(struct gt_reader *r, const struct gt_window *w, struct counts *c,
                        struct gt_window_stats *st)
{
	struct gt_window_filter *f;
	const union gt_record *rec;
	uint64_t from = w->from_ns, to = w->to_ns ? w->to_ns : UINT64_MAX;
	int ret;

	memset(c, 0, sizeof(*c));
	ck_assert_int_eq(gt_window_open(r, w, &f), 0);
	while ((ret = gt_reader_next(r, &rec)) > 0) {
		uint64_t a, b;

		if (rec->hdr.type == GT_REC_STRING)
			continue;
		c->per_type[rec->hdr.type]++;
		c->all++;
		switch (rec->hdr.type) {
		case GT_REC_API:
		case GT_REC_KERNEL:
		case GT_REC_NVTX:
			memcpy(&a, (const uint8_t *)rec + 8, 8);
			memcpy(&b, (const uint8_t *)rec + 16, 8);
			if (a < from || b > to || a >= b)
				ck_abort_msg("a %s [%llu, %llu] outside [%llu, %llu)",
				             gt_record_name(rec->hdr.type), (unsigned long long)a,
				             (unsigned long long)b, (unsigned long long)from,
				             (unsigned long long)to);
			break;
		case GT_REC_MEMORY:
			if (rec->memory.ts_ns < from || rec->memory.ts_ns >= to)
				ck_abort_msg("memory at %llu",
				             (unsigned long long)rec->memory.ts_ns);
			break;
		default:
			break;
		}
	}
	ck_assert_int_eq(ret, 0);
	gt_window_stats(f, st);
	c->clipped = st->clipped;
	c->carried = st->carried;
	gt_window_close(f);
}

static void expect_counts(const struct counts *got, const struct counts *want)
{
	for (unsigned t = 1; t < GT_REC_MAX; t++)
		if (t != GT_REC_STRING)
			ck_assert_msg(got->per_type[t] == want->per_type[t], "%s: %llu, want %llu",
			              gt_record_name(t), (unsigned long long)got->per_type[t],
			              (unsigned long long)want->per_type[t]);
	ck_assert_uint_eq(got->clipped, want->clipped);
	ck_assert_uint_eq(got->carried, want->carried);
}

/* A window through the middle: exact counts, the index passes over the chunks outside, and
 * the file read whole (no footer) gives the same. */
START_TEST(test_time_window_counts)
{
	struct synth s = {0};
	const char *path = path_in("t.gtrace"), *cut = path_in("cut.gtrace");
	struct gt_window w = {.from_ns = T0 + 55 * MS, .to_ns = T0 + 75 * MS};
	struct gt_window_stats st, st2;
	struct counts want, got, got2;
	struct gt_reader *r;
	uint64_t total = 0;
	struct gt_chunk_info c;

	synth_build(&s);
	synth_write(&s, path, 1024);
	oracle(&s, w.from_ns, w.to_ns, &want);
	/* by hand: steps 5, 6, 7 of both processes meet [55, 75) ms; 5 and 7 are cut (rank 1's
	 * step 7 ends at 80); the long sync is cut too; the three allocations (0.5 ms, 1 ms and
	 * step 5's at 50 and 51 ms) come to 55 ms; the free in step 12 is after the window */
	ck_assert_uint_eq(want.per_type[GT_REC_NVTX], 6);
	ck_assert_uint_eq(want.carried, 4);
	ck_assert_uint_eq(want.per_type[GT_REC_MEMORY], 4);
	ck_assert_uint_eq(want.per_type[GT_REC_PROCESS], 2);

	ck_assert_int_eq(gt_reader_open(path, &r, NULL), 0);
	for (uint64_t k = 0; gt_reader_chunk_info(r, k, &c) == 1; k++)
		total++;
	read_window(r, &w, &got, &st);
	expect_counts(&got, &want);
	ck_assert_uint_eq(st.kept, got.all + 4 + STEPS); /* and the strings */
	ck_assert_uint_gt(st.chunks_passed, total / 2);
	ck_assert_uint_eq(st.chunks_read + st.chunks_passed, total);
	/* counted without exporting: all but strings and metadata; and stopping at a limit */
	{
		uint64_t n, meta = want.per_type[GT_REC_PROCESS] + want.per_type[GT_REC_THREAD] +
		                   want.per_type[GT_REC_DEVICE];

		ck_assert_int_eq(gt_window_count(r, &w, UINT64_MAX - 1, &n), 0);
		ck_assert_uint_eq(n, want.all - meta);
		ck_assert_int_eq(gt_window_count(r, &w, 10, &n), 0);
		ck_assert_uint_eq(n, 11);
	}
	/* a second window on the same reader */
	w.from_ns = T0;
	w.to_ns = T0 + 1 * MS;
	oracle(&s, w.from_ns, w.to_ns, &want);
	read_window(r, &w, &got, &st);
	expect_counts(&got, &want);
	ck_assert_uint_eq(want.per_type[GT_REC_API] + want.per_type[GT_REC_KERNEL], 4);
	gt_reader_close(r);

	/* the same window read by a scan: a file cut short */
	w.from_ns = T0 + 55 * MS;
	w.to_ns = T0 + 75 * MS;
	oracle(&s, w.from_ns, w.to_ns, &want);
	strip_footer(path, cut);
	ck_assert_int_eq(gt_reader_open(cut, &r, NULL), 0);
	ck_assert(gt_reader_status(r)->recovered);
	read_window(r, &w, &got2, &st2);
	expect_counts(&got2, &want);
	ck_assert_uint_eq(st2.chunks_passed, 0);
	ck_assert_uint_eq(st2.chunks_read, total);
	gt_reader_close(r);
	free(s.recs);
}
END_TEST

/* Edges: a slice ending exactly at `from` or starting exactly at `to` is out; an open end
 * ("--from" alone) keeps everything after. */
START_TEST(test_time_window_edges)
{
	struct synth s = {0};
	const char *path = path_in("t.gtrace");
	struct counts want, got;
	struct gt_window_stats st;
	struct gt_reader *r;
	/* rank 1's step 4 is [41, 50] ms; step 5 of rank 0 starts at 50 ms */
	struct gt_window w = {.from_ns = T0 + 50 * MS, .to_ns = T0 + 51 * MS};

	synth_build(&s);
	synth_write(&s, path, 1024);
	ck_assert_int_eq(gt_reader_open(path, &r, NULL), 0);
	oracle(&s, w.from_ns, w.to_ns, &want);
	read_window(r, &w, &got, &st);
	expect_counts(&got, &want);
	/* rank 0's step 5 (cut at 51) and the long sync; not rank 1's step 4 nor its step 5 */
	ck_assert_uint_eq(got.per_type[GT_REC_NVTX], 1);
	/* the long sync, and the launches at 50.1 and 50.9 ms */
	ck_assert_uint_eq(got.per_type[GT_REC_API], 3);
	w.to_ns = 0;
	oracle(&s, w.from_ns, UINT64_MAX, &want);
	read_window(r, &w, &got, &st);
	expect_counts(&got, &want);
	ck_assert_uint_eq(got.per_type[GT_REC_NVTX], 2 * (STEPS - 5));
	gt_reader_close(r);
	free(s.recs);
}
END_TEST

/* Processes, ranks, devices and streams. */
START_TEST(test_filters)
{
	struct synth s = {0};
	const char *path = path_in("t.gtrace");
	struct gt_window w = {0};
	struct gt_window_stats st;
	struct counts got;
	struct gt_reader *r;

	synth_build(&s);
	synth_write(&s, path, 1024);
	ck_assert_int_eq(gt_reader_open(path, &r, NULL), 0);

	w.ranks[w.nranks++] = 1;
	read_window(r, &w, &got, &st);
	ck_assert_uint_eq(st.rank_pids, 1);
	ck_assert_uint_eq(got.per_type[GT_REC_PROCESS], 1);
	ck_assert_uint_eq(got.per_type[GT_REC_KERNEL], STEPS * LAUNCHES);
	ck_assert_uint_eq(got.per_type[GT_REC_API], STEPS * LAUNCHES);
	ck_assert_uint_eq(got.per_type[GT_REC_NVTX], STEPS);

	memset(&w, 0, sizeof(w));
	w.pids[w.npids++] = PID(0);
	read_window(r, &w, &got, &st);
	ck_assert_uint_eq(got.per_type[GT_REC_API], STEPS * LAUNCHES + 1);
	ck_assert_uint_eq(got.per_type[GT_REC_DEVICE], 1);

	/* GPU work of device 1 only; CPU records of every process stay */
	memset(&w, 0, sizeof(w));
	w.devices[w.ndevices++] = 1;
	read_window(r, &w, &got, &st);
	ck_assert_uint_eq(got.per_type[GT_REC_KERNEL], STEPS * LAUNCHES);
	ck_assert_uint_eq(got.per_type[GT_REC_API], NPROC * STEPS * LAUNCHES + 1);
	ck_assert_uint_eq(got.per_type[GT_REC_MEMORY], 3);
	ck_assert_uint_eq(got.per_type[GT_REC_DEVICE], 2); /* metadata is kept */

	/* stream 13: the odd launches */
	memset(&w, 0, sizeof(w));
	w.streams[w.nstreams++] = 13;
	read_window(r, &w, &got, &st);
	ck_assert_uint_eq(got.per_type[GT_REC_KERNEL], NPROC * STEPS * LAUNCHES / 2);

	/* all together, with a time range: rank 0, device 0, stream 7, steps 2..3 */
	memset(&w, 0, sizeof(w));
	w.ranks[w.nranks++] = 0;
	w.devices[w.ndevices++] = 0;
	w.streams[w.nstreams++] = 7;
	w.from_ns = T0 + 20 * MS;
	w.to_ns = T0 + 40 * MS;
	read_window(r, &w, &got, &st);
	ck_assert_uint_eq(got.per_type[GT_REC_KERNEL], 2 * LAUNCHES / 2);
	ck_assert_uint_eq(got.per_type[GT_REC_NVTX], 2);
	ck_assert_uint_eq(got.per_type[GT_REC_API], 2 * LAUNCHES + 1);
	gt_reader_close(r);
	free(s.recs);
}
END_TEST

/* A trace from before chunk types (tests/data, 40-byte index entries) is read whole and
 * filtered: the same records as the same trace read with no footer. */
START_TEST(test_old_index_reads_whole)
{
	char path[512];
	const char *cut = path_in("old-cut.gtrace");
	struct gt_window w = {0};
	struct gt_window_stats st, st2;
	struct gt_chunk_info c;
	struct counts got, got2;
	struct gt_reader *r;

	snprintf(path, sizeof(path), "%s/ddp-2rank.gtrace", data_dir);
	ck_assert_int_eq(gt_reader_open(path, &r, NULL), 0);
	ck_assert_int_eq(gt_reader_chunk_info(r, 0, &c), 1);
	ck_assert(!c.have_types);
	ck_assert_uint_eq(c.types, UINT64_MAX);
	/* from the start of rank 0's step 2 into step 4 */
	w.from_ns = 54289601584ull;
	w.to_ns = 54417000000ull;
	read_window(r, &w, &got, &st);
	ck_assert_uint_eq(st.chunks_passed, 0);
	ck_assert_uint_gt(got.per_type[GT_REC_KERNEL], 0);
	gt_reader_close(r);
	strip_footer(path, cut);
	ck_assert_int_eq(gt_reader_open(cut, &r, NULL), 0);
	read_window(r, &w, &got2, &st2);
	expect_counts(&got2, &got);
	ck_assert_uint_eq(st2.kept, st.kept);
	gt_reader_close(r);

	/* reindexed (gputrace info --reindex): chunk types, and the same window */
	{
		char cmd[1200];
		struct gt_reindex_result res;
		const char *re = path_in("old-re.gtrace"), *err = NULL;

		snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", path, re);
		ck_assert_int_eq(system(cmd), 0);
		ck_assert_int_eq(gt_trace_reindex(re, &res, &err), 0);
		ck_assert(res.had_index && !res.had_types);
		ck_assert_uint_eq(res.records, 4776);
		ck_assert_int_eq(gt_reader_open(re, &r, NULL), 0);
		ck_assert_int_eq(gt_reader_chunk_info(r, 0, &c), 1);
		ck_assert(c.have_types);
		read_window(r, &w, &got2, &st2);
		expect_counts(&got2, &got);
		ck_assert_uint_eq(st2.kept, st.kept);
		gt_reader_close(r);
	}
}
END_TEST

/* --nvtx: NAME#K by K, the same step in both ranks of a real trace. */
START_TEST(test_nvtx_ranks)
{
	char path[512];
	struct gt_nvtx_spec spec;
	struct gt_nvtx_found f;
	struct gt_window scope = {0};
	struct gt_reader *r;
	const union gt_record *rec;
	uint64_t from = UINT64_MAX, to = 0;
	unsigned seen = 0;

	snprintf(path, sizeof(path), "%s/ddp-2rank.gtrace", data_dir);
	ck_assert_int_eq(gt_reader_open(path, &r, NULL), 0);
	/* what the trace holds, read straight */
	while (gt_reader_next(r, &rec) > 0) {
		const char *m;

		if (rec->hdr.type != GT_REC_NVTX)
			continue;
		m = gt_reader_string(r, rec->nvtx.message_id, NULL);
		if (m && (strcmp(m, "ProfilerStep#3") == 0 || strcmp(m, "ProfilerStep#4") == 0)) {
			seen++;
			if (rec->nvtx.start_ns < from)
				from = rec->nvtx.start_ns;
			if (rec->nvtx.end_ns > to)
				to = rec->nvtx.end_ns;
		}
	}
	ck_assert_uint_eq(seen, 4);
	ck_assert_int_eq(gt_reader_rewind(r), 0);

	ck_assert_int_eq(gt_window_parse_nvtx("ProfilerStep:3..4", &spec), 0);
	ck_assert_int_eq(gt_window_find_nvtx(r, NULL, &spec, &f), 0);
	ck_assert_uint_eq(f.ranges, 4);
	ck_assert_uint_eq(f.processes, 2);
	ck_assert_uint_eq(f.first, 3);
	ck_assert_uint_eq(f.last, 4);
	ck_assert_uint_eq(f.from_ns, from);
	ck_assert_uint_eq(f.to_ns, to);
	ck_assert_uint_eq(f.named, 24);
	ck_assert_uint_eq(f.named_first, 0);
	ck_assert_uint_eq(f.named_last, 11);

	/* rank 1 alone */
	scope.ranks[scope.nranks++] = 1;
	ck_assert_int_eq(gt_window_find_nvtx(r, &scope, &spec, &f), 0);
	ck_assert_uint_eq(f.ranges, 2);
	ck_assert_uint_eq(f.processes, 1);

	/* a prefix is not a name; a name with its number is a name of its own */
	ck_assert_int_eq(gt_window_parse_nvtx("Profiler", &spec), 0);
	ck_assert_int_eq(gt_window_find_nvtx(r, NULL, &spec, &f), 0);
	ck_assert_uint_eq(f.ranges, 0);
	ck_assert_uint_eq(f.named, 0);
	ck_assert_int_eq(gt_window_parse_nvtx("ProfilerStep#7", &spec), 0);
	ck_assert_int_eq(gt_window_find_nvtx(r, NULL, &spec, &f), 0);
	ck_assert_uint_eq(f.ranges, 2);
	/* a plain name: by its place in each process */
	ck_assert_int_eq(gt_window_parse_nvtx("forward:0", &spec), 0);
	ck_assert_int_eq(gt_window_find_nvtx(r, NULL, &spec, &f), 0);
	ck_assert_uint_eq(f.ranges, 2);
	ck_assert_uint_eq(f.processes, 2);
	ck_assert_uint_eq(f.named, 24);
	ck_assert_uint_eq(f.named_last, 11);
	gt_reader_close(r);
}
END_TEST

/* Only the NVTX ranges, strings and processes, for step detection (exporters/model/steps.c). */
START_TEST(test_nvtx_only)
{
	char path[512];
	struct gt_reader *r;
	const union gt_record *rec;
	uint64_t n[GT_REC_MAX] = {0}, all = 0;

	snprintf(path, sizeof(path), "%s/ddp-2rank.gtrace", data_dir);
	ck_assert_int_eq(gt_reader_open(path, &r, NULL), 0);
	ck_assert_int_eq(gt_window_nvtx_only(r), 0);
	while (gt_reader_next(r, &rec) > 0) {
		n[rec->hdr.type]++;
		all++;
	}
	ck_assert_uint_eq(n[GT_REC_NVTX], 48);
	ck_assert_uint_eq(n[GT_REC_STRING], 60);
	ck_assert_uint_eq(n[GT_REC_PROCESS], 3);
	ck_assert_uint_eq(all, 48 + 60 + 3);
	ck_assert_int_eq(gt_reader_set_filter(r, NULL), 0);
	gt_reader_close(r);
}
END_TEST

START_TEST(test_parse_time)
{
	struct gt_trace_header h = {.version = 1, .info = synth_info};
	const uint64_t o = T0 + 7; /* an origin apart from the header's start */
	uint64_t v;

	ck_assert_int_eq(gt_window_parse_time("90", &h, o, 0, &v), 0);
	ck_assert_uint_eq(v, o + 90000 * MS);
	ck_assert_int_eq(gt_window_parse_time("2.5", &h, o, 0, &v), 0);
	ck_assert_uint_eq(v, o + 2500 * MS);
	ck_assert_int_eq(gt_window_parse_time("90s", &h, o, 0, &v), 0);
	ck_assert_uint_eq(v, o + 90000 * MS);
	ck_assert_int_eq(gt_window_parse_time("1m30s", &h, o, 0, &v), 0);
	ck_assert_uint_eq(v, o + 90000 * MS);
	ck_assert_int_eq(gt_window_parse_time("1h2m3.5s", &h, o, 0, &v), 0);
	ck_assert_uint_eq(v, o + 3723500 * MS);
	ck_assert_int_eq(gt_window_parse_time("250ms", &h, o, 0, &v), 0);
	ck_assert_uint_eq(v, o + 250 * MS);
	ck_assert_int_eq(gt_window_parse_time("10us", &h, o, 0, &v), 0);
	ck_assert_uint_eq(v, o + 10 * US);
	ck_assert_int_eq(gt_window_parse_time("5ns", &h, o, 0, &v), 0);
	ck_assert_uint_eq(v, o + 5);
	ck_assert_int_eq(gt_window_parse_time("0", &h, o, 0, &v), 0);
	ck_assert_uint_eq(v, o);
	ck_assert_int_eq(gt_window_parse_time("+2s", &h, o, T0 + 100, &v), 0);
	ck_assert_uint_eq(v, T0 + 100 + 2000 * MS);
	ck_assert_int_eq(gt_window_parse_time("+2s", &h, o, 0, &v), 0);
	ck_assert_uint_eq(v, o + 2000 * MS);
	ck_assert_int_eq(gt_window_parse_time("@1000000000123", &h, o, 0, &v), 0);
	ck_assert_uint_eq(v, 1000000000123ull);
	/* the header's anchor: 12:00:00.123456789Z is T0 */
	ck_assert_int_eq(gt_window_parse_time("2024-05-01T12:00:03.5Z", &h, o, 0, &v), 0);
	ck_assert_uint_eq(v, T0 + 3500 * MS - 123456789);
	ck_assert_int_eq(gt_window_parse_time("2024-05-01 14:00:03.5+02:00", &h, o, 0, &v), 0);
	ck_assert_uint_eq(v, T0 + 3500 * MS - 123456789);
	ck_assert_int_eq(gt_window_parse_time("2024-05-01T07:00:03.5-0500", &h, o, 0, &v), 0);
	ck_assert_uint_eq(v, T0 + 3500 * MS - 123456789);
	setenv("TZ", "UTC", 1);
	ck_assert_int_eq(gt_window_parse_time("2024-05-01T12:00:03.5", &h, o, 0, &v), 0);
	ck_assert_uint_eq(v, T0 + 3500 * MS - 123456789);
	/* before the trace clock's zero */
	ck_assert_int_eq(gt_window_parse_time("2024-04-01T00:00:00Z", &h, o, 0, &v), 0);
	ck_assert_uint_eq(v, 0);
	/* not times */
	static const char *const bad[] = {"",
	                                  "abc",
	                                  "1x",
	                                  "1.2.3",
	                                  "m",
	                                  "s",
	                                  "-1",
	                                  "1s2",
	                                  "@",
	                                  "@12a",
	                                  "+",
	                                  "+x",
	                                  "1m 2s",
	                                  "2024-05-01T25:00:00Z",
	                                  "2024-05-01T12:00:00Q"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(gt_window_parse_time(bad[i], &h, o, 0, &v) == -EINVAL, "'%s'",
		              bad[i]);
	ck_assert_int_eq(gt_window_parse_time("99999999999999h", &h, o, 0, &v), -ERANGE);
}
END_TEST

/* The time base (gt_reader_times, docs/cli.md "Time"): the same zero and span from the
 * footer, with a window on the reader, without the footer (the chunk headers), and cut in the
 * middle of its last chunk; the earlier of the header's start and the first record. */
static void expect_times(const char *path, uint64_t zero, uint64_t first, uint64_t last,
                         uint64_t realtime)
{
	struct gt_trace_times tt;
	struct gt_window_filter *f;
	struct gt_window w = {.from_ns = first + 1, .to_ns = first + 2};
	const union gt_record *rec;
	struct gt_reader *r;

	ck_assert_int_eq(gt_reader_open(path, &r, NULL), 0);
	ck_assert_int_eq(gt_reader_times(r, &tt), 0);
	ck_assert_uint_eq(tt.zero_ns, zero);
	ck_assert_uint_eq(tt.first_ns, first);
	ck_assert_uint_eq(tt.last_ns, last);
	ck_assert_uint_eq(tt.span_ns, last - zero);
	ck_assert_uint_eq(tt.zero_realtime_ns, realtime);
	/* a window on the reader, half read: the whole trace's times still */
	ck_assert_int_eq(gt_window_open(r, &w, &f), 0);
	ck_assert_int_eq(gt_reader_next(r, &rec), 1);
	ck_assert_int_eq(gt_reader_times(r, &tt), 0);
	ck_assert_uint_eq(tt.zero_ns, zero);
	ck_assert_uint_eq(tt.last_ns, last);
	gt_window_close(f);
	gt_reader_close(r);
}

START_TEST(test_times)
{
	struct synth s = {0};
	const char *whole = path_in("times.gtrace"), *bare = path_in("times-bare.gtrace");
	const char *cut = path_in("times-cut.gtrace"), *late = path_in("times-late.gtrace");
	struct gt_trace_info info = synth_info;
	struct gt_writer *w;
	char path[512], cmd[1200];
	struct stat st;

	/* the synthetic trace: its header starts at T0 with the processes; the last NVTX range
	 * of process 1 ends at T0 + 200 ms */
	synth_build(&s);
	synth_write(&s, whole, 16384);
	expect_times(whole, T0, T0, T0 + 200 * MS, synth_info.start_realtime_ns);
	strip_footer(whole, bare);
	expect_times(bare, T0, T0, T0 + 200 * MS, synth_info.start_realtime_ns);
	ck_assert_int_eq(stat(bare, &st), 0);
	snprintf(cmd, sizeof(cmd), "head -c %lld '%s' > '%s'", (long long)st.st_size - 100, bare,
	         cut);
	ck_assert_int_eq(system(cmd), 0);
	expect_times(cut, T0, T0, T0 + 200 * MS, synth_info.start_realtime_ns);

	/* a header that starts 5 ms after the first record (the NVTX range at T0 + 191 ms):
	 * the zero is the record, and the wall clock there 5 ms before the header's */
	ck_assert_uint_eq(s.recs[s.n - 1].hdr.type, GT_REC_NVTX); /* [T0 + 191, + 200] ms */
	info.start_trace_ns = T0 + 196 * MS;
	ck_assert_int_eq(gt_writer_open(late, &info, NULL, &w), 0);
	ck_assert_int_eq(gt_writer_write(w, &s.recs[s.n - 1].hdr), 0);
	ck_assert_int_eq(gt_writer_close(w), 0);
	expect_times(late, T0 + 191 * MS, T0 + 191 * MS, T0 + 200 * MS,
	             synth_info.start_realtime_ns - 5 * MS);
	free(s.recs);

	/* recorded traces: the header starts before the first record (the program's start-up,
	 * 4.63 s of Python imports in pytorch-train), and a copy without its footer counts from
	 * the same zero */
	snprintf(path, sizeof(path), "%s/pytorch-train.gtrace", data_dir);
	expect_times(path, 26369932036ull, 30998809664ull, 37923817238ull, 1796135409701000799ull);
	strip_footer(path, bare);
	expect_times(bare, 26369932036ull, 30998809664ull, 37923817238ull, 1796135409701000799ull);
	snprintf(path, sizeof(path), "%s/ddp-2rank.gtrace", data_dir);
	expect_times(path, 38443017005ull, 42324756481ull, 55925935435ull, 1796135421774085737ull);
}
END_TEST

START_TEST(test_parse_nvtx_and_ids)
{
	struct gt_nvtx_spec sp;
	uint32_t ids[GT_WINDOW_MAX_IDS];
	int32_t ranks[GT_WINDOW_MAX_IDS];
	unsigned n = 0;
	char many[400];

	ck_assert_int_eq(gt_window_parse_nvtx("ProfilerStep:100..105", &sp), 0);
	ck_assert_str_eq(sp.name, "ProfilerStep");
	ck_assert_uint_eq(sp.first, 100);
	ck_assert_uint_eq(sp.last, 105);
	ck_assert_int_eq(gt_window_parse_nvtx("ProfilerStep", &sp), 0);
	ck_assert_uint_eq(sp.first, 0);
	ck_assert_uint_eq(sp.last, UINT64_MAX);
	ck_assert_int_eq(gt_window_parse_nvtx("step:7", &sp), 0);
	ck_assert_uint_eq(sp.first, 7);
	ck_assert_uint_eq(sp.last, 7);
	ck_assert_int_eq(gt_window_parse_nvtx("step:7..", &sp), 0);
	ck_assert_uint_eq(sp.last, UINT64_MAX);
	/* a colon not followed by digits is part of the name */
	ck_assert_int_eq(gt_window_parse_nvtx("ns::fwd", &sp), 0);
	ck_assert_str_eq(sp.name, "ns::fwd");
	ck_assert_int_eq(gt_window_parse_nvtx("ns::fwd:2", &sp), 0);
	ck_assert_str_eq(sp.name, "ns::fwd");
	ck_assert_uint_eq(sp.first, 2);
	ck_assert_int_eq(gt_window_parse_nvtx("", &sp), -EINVAL);
	ck_assert_int_eq(gt_window_parse_nvtx(":3", &sp), -EINVAL);
	ck_assert_int_eq(gt_window_parse_nvtx("x:5..3", &sp), -EINVAL);
	ck_assert_int_eq(gt_window_parse_nvtx("x:5..y", &sp), -EINVAL);
	ck_assert_int_eq(gt_window_parse_nvtx("x:5x", &sp), -EINVAL);
	memset(many, 'a', sizeof(many) - 1);
	many[sizeof(many) - 1] = '\0';
	ck_assert_int_eq(gt_window_parse_nvtx(many, &sp), -EINVAL);

	ck_assert_int_eq(gt_window_parse_ids("3", false, ids, &n), 0);
	ck_assert_int_eq(gt_window_parse_ids("0,12,4000000", false, ids, &n), 0);
	ck_assert_uint_eq(n, 4);
	ck_assert_uint_eq(ids[3], 4000000);
	ck_assert_int_eq(gt_window_parse_ids("-1", false, ids, &n), -EINVAL);
	ck_assert_int_eq(gt_window_parse_ids("1,,2", false, ids, &n), -EINVAL);
	ck_assert_int_eq(gt_window_parse_ids("1,", false, ids, &n), -EINVAL);
	ck_assert_int_eq(gt_window_parse_ids("x", false, ids, &n), -EINVAL);
	n = 0;
	ck_assert_int_eq(gt_window_parse_ids("-1,2", true, ranks, &n), 0);
	ck_assert_int_eq(ranks[0], -1);
	n = GT_WINDOW_MAX_IDS;
	ck_assert_int_eq(gt_window_parse_ids("1", false, ids, &n), -E2BIG);
}
END_TEST

/* Estimates from the index, and cuts into pieces of about the same number of records. */
START_TEST(test_estimate_and_cut)
{
	struct synth s = {0};
	const char *path = path_in("t.gtrace");
	struct gt_window w = {0};
	uint64_t est, bounds[65], events = 0;
	struct gt_reader *r;
	int n;

	synth_build(&s);
	synth_write(&s, path, 1024);
	for (size_t i = 0; i < s.n; i++)
		events += !(GT_TRACE_STATE_TYPES >> s.recs[i].hdr.type & 1);
	ck_assert_int_eq(gt_reader_open(path, &r, NULL), 0);
	ck_assert_int_eq(gt_window_estimate(r, &w, &est), 0);
	ck_assert_uint_eq(est, events);
	w.from_ns = T0 + 50 * MS;
	w.to_ns = T0 + 100 * MS;
	ck_assert_int_eq(gt_window_estimate(r, &w, &est), 0);
	/* about a quarter, give or take the chunks at the edges and the long sync's */
	ck_assert_uint_gt(est, events / 4 - events / 10);
	ck_assert_uint_lt(est, events / 4 + events / 10);

	memset(&w, 0, sizeof(w));
	n = gt_window_cut(r, &w, events / 4, bounds, 64);
	ck_assert_int_ge(n, 4);
	ck_assert_int_le(n, 5);
	ck_assert_uint_eq(bounds[0], T0);
	ck_assert_uint_eq(bounds[n], gt_reader_footer_counts(r)->last_ts_ns + 1);
	for (int i = 0; i < n; i++)
		ck_assert_uint_lt(bounds[i], bounds[i + 1]);
	ck_assert_int_eq(gt_window_cut(r, &w, 1, bounds, 8), -E2BIG);
	gt_reader_close(r);

	/* no index: no estimate */
	strip_footer(path, path_in("cut.gtrace"));
	ck_assert_int_eq(gt_reader_open(path_in("cut.gtrace"), &r, NULL), 0);
	ck_assert_int_eq(gt_window_estimate(r, &w, &est), -ENODATA);
	gt_reader_close(r);
	free(s.recs);
}
END_TEST

int main(int argc, char **argv)
{
	Suite *s = suite_create("window");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	if (argc > 1)
		data_dir = argv[1];
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_time_window_counts);
	tcase_add_test(tc, test_time_window_edges);
	tcase_add_test(tc, test_filters);
	tcase_add_test(tc, test_old_index_reads_whole);
	tcase_add_test(tc, test_nvtx_ranks);
	tcase_add_test(tc, test_nvtx_only);
	tcase_add_test(tc, test_parse_time);
	tcase_add_test(tc, test_times);
	tcase_add_test(tc, test_parse_nvtx_and_ids);
	tcase_add_test(tc, test_estimate_and_cut);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
