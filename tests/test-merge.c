/* Check suite for src/ops/merge.c (gputrace merge): exact record counts, strings and pids across
 * hosts, losses and headers per input, clock offsets recovered from known ones (wall clock
 * and NCCL), damaged and repeated inputs, merged inputs merged again, the H200 rank files,
 * and (when the open-file limit allows) 2,000 inputs. Runs as a unit test; the argument is
 * the tests/data directory. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "catalog.h"
#include "codec.h"
#include "exporter.h"
#include "gputrace/trace.h"
#include "merge-int.h"
#include "merge.h"
#include "trace-synth.h"

static const char *data_dir;
static char dir[64];
static size_t chunk_bytes; /* of the inputs synth_file writes; 0: the writer's default */

/* ---- building inputs ---- */

static const char *tpath(const char *name)
{
	static char bufs[32][256]; /* a test holds a few names at once */
	static unsigned k;
	char *p = bufs[k++ % 32];

	snprintf(p, 256, "%s/%s", dir, name);
	return p;
}

/* A synthetic trace as mktrace writes it (tests/trace-synth.h), on host o->host. */
static void synth_file(const char *path, const struct synth_opts *o)
{
	struct gt_trace_info info = {
	        .clock_id = GT_CLOCK_MONOTONIC,
	        .start_realtime_ns = 1714564800000000000ull + (uint64_t)o->wall_error_ns,
	        .start_trace_ns = SYNTH_START_NS + (uint64_t)o->clock_offset_ns,
	        .hostname = o->host ? o->host : "gpu-node-17",
	        .cmdline = "python train.py",
	        .tool_version = "0.1.0",
	        .cuda_version = "13.0",
	        .cupti_version = "13.0.48",
	        .driver_version = "580.65.06",
	};
	struct gt_writer_options wo = {.chunk_bytes = chunk_bytes};
	struct gt_writer *w;
	union synth_buf b;
	struct synth s;

	ck_assert_int_eq(gt_writer_open(path, &info, &wo, &w), 0);
	synth_init(&s, o);
	while (synth_next(&s, &b))
		ck_assert_int_eq(gt_writer_write(w, &b.rec.hdr), 0);
	ck_assert_int_eq(gt_writer_close(w), 0);
}

/* ---- reading ---- */

struct kern {
	uint32_t input; /* ORIGIN's input (merged) or 0 */
	uint32_t pid;   /* original pid */
	uint64_t start_ns, end_ns;
	uint32_t corr;
	char name[160];
};

struct summary {
	uint64_t counts[GT_REC_MAX];
	struct kern *k; /* kernels, in file order */
	size_t nk;
	struct gt_rec_origin *origins; /* malloc'd */
	size_t norigins, cap_origins;
	struct gt_rec_input inputs[16];
	char input_path[16][256], input_host[16][64], input_cmd[16][128];
	size_t ninputs; /* the first 16 */
	struct gt_rec_process procs[16];
	char proc_host[16][64];
	size_t nprocs; /* the first 16 */
	struct gt_rec_loss losses[16];
	size_t nlosses;
	uint64_t undefined_ids; /* string ids used by kernels and never defined */
	struct gt_reader_status status;
};

static const struct gt_rec_origin *origin_of(const struct summary *s, uint32_t pid)
{
	for (size_t i = 0; i < s->norigins; i++)
		if (s->origins[i].hdr.pid == pid)
			return &s->origins[i];
	return NULL;
}

static void cpy(char *dst, size_t n, const char *src)
{
	snprintf(dst, n, "%s", src ? src : "");
}

static void summarize(const char *path, struct summary *s)
{
	struct gt_reader *r;
	const union gt_record *rec;
	const char *msg = NULL;
	size_t cap = 0;
	int ret;

	memset(s, 0, sizeof(*s));
	ck_assert_msg(gt_reader_open(path, &r, &msg) == 0, "%s: %s", path, msg);
	while ((ret = gt_reader_next(r, &rec)) == 1) {
		unsigned t = rec->hdr.type;

		s->counts[t]++;
		if (t == GT_REC_ORIGIN) {
			if (s->norigins == s->cap_origins) {
				s->cap_origins = s->cap_origins ? s->cap_origins * 2 : 64;
				s->origins =
				        realloc(s->origins, s->cap_origins * sizeof(*s->origins));
				ck_assert_ptr_nonnull(s->origins);
			}
			/* before any other record of its pid (strings aside) */
			for (size_t i = 0; i < s->nk; i++)
				ck_assert_uint_ne(s->k[i].pid, rec->hdr.pid);
			s->origins[s->norigins++] = rec->origin;
		} else if (t == GT_REC_INPUT && s->ninputs < 16) {
			size_t i = s->ninputs++;

			s->inputs[i] = rec->input;
			cpy(s->input_path[i], 256, gt_reader_string(r, rec->input.path_id, NULL));
			cpy(s->input_host[i], 64,
			    gt_reader_string(r, rec->input.hostname_id, NULL));
			cpy(s->input_cmd[i], 128, gt_reader_string(r, rec->input.cmdline_id, NULL));
		} else if (t == GT_REC_PROCESS && s->nprocs < 16) {
			size_t i = s->nprocs++;

			s->procs[i] = rec->process;
			cpy(s->proc_host[i], 64, gt_reader_string(r, rec->process.host_id, NULL));
		} else if (t == GT_REC_LOSS) {
			ck_assert_uint_lt(s->nlosses, 16);
			s->losses[s->nlosses++] = rec->loss;
		} else if (t == GT_REC_KERNEL) {
			const struct gt_rec_origin *o = origin_of(s, rec->hdr.pid);
			const char *name = gt_reader_string(r, rec->kernel.name_id, NULL);
			struct kern *k;

			if (s->nk == cap) {
				cap = cap ? cap * 2 : 1024;
				s->k = realloc(s->k, cap * sizeof(*s->k));
				ck_assert_ptr_nonnull(s->k);
			}
			k = &s->k[s->nk++];
			k->input = o ? o->input : 0;
			k->pid = o ? o->orig_pid : rec->hdr.pid;
			k->start_ns = rec->kernel.span.start_ns;
			k->end_ns = rec->kernel.span.end_ns;
			k->corr = rec->kernel.span.correlation_id;
			cpy(k->name, sizeof(k->name), name);
			if (!name && rec->kernel.name_id)
				s->undefined_ids++;
		}
	}
	ck_assert_int_eq(ret, 0);
	s->status = *gt_reader_status(r);
	gt_reader_close(r);
}

static void summary_free(struct summary *s)
{
	free(s->k);
	free(s->origins);
	s->k = NULL;
	s->origins = NULL;
}

static struct gt_merge *merge(const char *out, const char *const *paths, size_t n, unsigned align)
{
	struct gt_merge_options o = {.align = align, .cmdline = "gputrace merge test"};
	struct gt_merge_error e = {0};
	struct gt_merge *m = NULL;

	ck_assert_msg(gt_merge_open(paths, n, &o, &m, &e) == 0, "input %zu: %s", e.input, e.msg);
	ck_assert_msg(gt_merge_write(m, out, &e) == 0, "input %zu: %s", e.input, e.msg);
	return m;
}

/* ---- tests ---- */

/* Two hosts whose processes have the same pid: two processes, the second renamed; every
 * record counted once; names, times and each input's order kept. */
START_TEST(test_two_hosts_same_pid)
{
	struct synth_opts a = {.kernels = 3000,
	                       .names = 40,
	                       .processes = 2,
	                       .seed = 1,
	                       .api = true,
	                       .memcpy = true,
	                       .host = "node-a"};
	struct synth_opts b = a;
	const char *in[2] = {tpath("a.gtrace"), tpath("b.gtrace")};
	struct summary sa, sb, sm;
	struct gt_merge *m;

	b.seed = 2;
	b.host = "node-b";
	b.kernels = 2000;
	synth_file(in[0], &a);
	synth_file(in[1], &b);
	summarize(in[0], &sa);
	summarize(in[1], &sb);
	m = merge(tpath("m.gtrace"), in, 2, GT_MERGE_ALIGN_WALL_CLOCK);
	summarize(tpath("m.gtrace"), &sm);

	/* every kind but strings (merged) and the merge's own: the sum of the inputs */
	for (unsigned t = GT_REC_PROCESS; t < GT_REC_INPUT; t++)
		ck_assert_msg(sm.counts[t] == sa.counts[t] + sb.counts[t],
		              "%s: %llu != %llu + %llu", gt_record_name(t),
		              (unsigned long long)sm.counts[t], (unsigned long long)sa.counts[t],
		              (unsigned long long)sb.counts[t]);
	ck_assert_uint_eq(sm.counts[GT_REC_KERNEL], 5000);
	ck_assert_uint_eq(sm.counts[GT_REC_INPUT], 2);
	ck_assert_uint_eq(sm.counts[GT_REC_ORIGIN], 4);
	/* the same 46 strings on both (6 fixed, 40 names) but the host: one set of them, the
	 * second host, and the merge's own (2 paths, 2 hosts already there, command, versions) */
	ck_assert_uint_eq(sa.counts[GT_REC_STRING], 46);
	ck_assert_uint_eq(sm.counts[GT_REC_STRING], 46 + 1 + 2 + 1 + 4);
	ck_assert_uint_eq(gt_merge_input(m, 0)->records,
	                  46 + sa.counts[GT_REC_PROCESS] + sa.counts[GT_REC_KERNEL] * 2 +
	                          sa.counts[GT_REC_MEMCPY] + sa.counts[GT_REC_PROCESS_END] +
	                          sa.counts[GT_REC_THREAD] + sa.counts[GT_REC_DEVICE] +
	                          sa.counts[GT_REC_CONTEXT] + sa.counts[GT_REC_STREAM] +
	                          sa.counts[GT_REC_CLOCK]);

	/* pids: input 1 keeps 4100 and 4107, input 2's become the first two new ones */
	ck_assert_uint_eq(sm.norigins, 4);
	{
		static const uint32_t want[4][3] = {{4100, 1, 4100},
		                                    {4107, 1, 4107},
		                                    {GT_MERGE_PID_BASE, 2, 4100},
		                                    {GT_MERGE_PID_BASE + 1, 2, 4107}};

		for (unsigned i = 0; i < 4; i++) {
			const struct gt_rec_origin *o = origin_of(&sm, want[i][0]);

			ck_assert_ptr_nonnull(o);
			ck_assert_uint_eq(o->input, want[i][1]);
			ck_assert_uint_eq(o->orig_pid, want[i][2]);
		}
	}
	ck_assert_uint_eq(gt_merge_input(m, 0)->processes, 2);
	ck_assert_uint_eq(gt_merge_input(m, 0)->renamed, 0);
	ck_assert_uint_eq(gt_merge_input(m, 1)->processes, 2);
	ck_assert_uint_eq(gt_merge_input(m, 1)->renamed, 2);
	/* the processes keep their host and rank */
	ck_assert_uint_eq(sm.nprocs, 4);
	for (size_t i = 0; i < sm.nprocs; i++) {
		const struct gt_rec_origin *o = origin_of(&sm, sm.procs[i].hdr.pid);

		ck_assert_ptr_nonnull(o);
		ck_assert_str_eq(sm.proc_host[i], o->input == 1 ? "node-a" : "node-b");
		ck_assert_int_eq(sm.procs[i].rank, o->orig_pid == 4100 ? 0 : 1);
	}

	/* kernels: names, times (offset 0: same anchors) and each input's order kept */
	{
		size_t ia = 0, ib = 0;

		for (size_t i = 0; i < sm.nk; i++) {
			const struct kern *k = &sm.k[i];
			const struct kern *w = k->input == 1 ? &sa.k[ia++] : &sb.k[ib++];

			ck_assert_uint_eq(k->pid, w->pid);
			ck_assert_uint_eq(k->start_ns, w->start_ns);
			ck_assert_uint_eq(k->end_ns, w->end_ns);
			ck_assert_uint_eq(k->corr, w->corr);
			ck_assert_str_eq(k->name, w->name);
		}
		ck_assert_uint_eq(ia, sa.nk);
		ck_assert_uint_eq(ib, sb.nk);
		ck_assert_uint_eq(sm.undefined_ids, 0);
	}
	gt_merge_free(m);
	summary_free(&sa);
	summary_free(&sb);
	summary_free(&sm);
}
END_TEST

/* Each input's header is kept in its INPUT record; losses stay with their input. */
START_TEST(test_headers_and_losses)
{
	struct synth_opts a = {.kernels = 500,
	                       .names = 10,
	                       .processes = 1,
	                       .seed = 3,
	                       .losses = 5,
	                       .host = "node-a"};
	struct synth_opts b = a;
	const char *in[2] = {tpath("la.gtrace"), tpath("lb.gtrace")};
	struct summary sm;
	uint64_t ring[3] = {0}, cupti[3] = {0};
	struct gt_merge *m;

	b.seed = 4;
	b.losses = 9;
	b.host = "node-b";
	b.pid0 = 5000;
	b.wall_error_ns = 777;
	synth_file(in[0], &a);
	synth_file(in[1], &b);
	m = merge(tpath("lm.gtrace"), in, 2, GT_MERGE_ALIGN_WALL_CLOCK);
	summarize(tpath("lm.gtrace"), &sm);

	ck_assert_uint_eq(sm.nlosses, 4);
	for (size_t i = 0; i < sm.nlosses; i++) {
		const struct gt_rec_origin *o = origin_of(&sm, sm.losses[i].hdr.pid);

		ck_assert_ptr_nonnull(o);
		if (sm.losses[i].source == GT_LOSS_RING_FULL)
			ring[o->input] += sm.losses[i].count;
		else if (sm.losses[i].source == GT_LOSS_CUPTI_DROPPED)
			cupti[o->input] += sm.losses[i].count;
	}
	ck_assert_uint_eq(ring[1], 5);
	ck_assert_uint_eq(ring[2], 9);
	ck_assert_uint_eq(cupti[1], 7);
	ck_assert_uint_eq(cupti[2], 7);

	ck_assert_uint_eq(sm.ninputs, 2);
	for (unsigned i = 0; i < 2; i++) {
		const struct gt_rec_input *x = &sm.inputs[i];

		ck_assert_uint_eq(x->hdr.pid, 0);
		ck_assert_uint_eq(x->index, i + 1);
		ck_assert_uint_eq(x->parent, 0);
		ck_assert_uint_eq(x->version, GT_TRACE_VERSION);
		ck_assert_uint_eq(x->clock_id, GT_CLOCK_MONOTONIC);
		ck_assert_uint_eq(x->align, GT_ALIGN_WALL_CLOCK);
		ck_assert_uint_eq(x->flags, 0);
		ck_assert_uint_eq(x->start_trace_ns, SYNTH_START_NS);
		ck_assert_uint_eq(x->start_realtime_ns, 1714564800000000000ull + (i ? 777 : 0));
		/* the wall clock of b runs 777 ns ahead: its times move 777 ns later */
		ck_assert_int_eq(x->offset_ns, i ? 777 : 0);
		ck_assert_str_eq(sm.input_path[i], in[i]);
		ck_assert_str_eq(sm.input_host[i], i ? "node-b" : "node-a");
		ck_assert_str_eq(sm.input_cmd[i], "python train.py");
		ck_assert_uint_eq(x->records, gt_merge_input(m, i)->records);
		ck_assert_uint_eq(x->chunks_skipped, 0);
		ck_assert_uint_eq(x->records_skipped, 0);
	}
	{
		struct gt_reader *r;
		const char *msg;
		const struct gt_trace_info *h;

		ck_assert_int_eq(gt_reader_open(tpath("lm.gtrace"), &r, &msg), 0);
		h = &gt_reader_header(r)->info;
		ck_assert_str_eq(h->hostname, "node-a,node-b");
		ck_assert_str_eq(h->cmdline, "gputrace merge test");
		ck_assert_str_eq(h->cuda_version, "13.0");
		ck_assert_str_eq(h->driver_version, "580.65.06");
		ck_assert_uint_eq(h->start_realtime_ns, 1714564800000000000ull);
		ck_assert_uint_eq(h->start_trace_ns, SYNTH_START_NS);
		gt_reader_close(r);
	}
	gt_merge_free(m);
	summary_free(&sm);
}
END_TEST

/* Known clock offsets: the wall clocks map them back exactly but for their own errors;
 * --align nccl recovers them exactly from collectives that end together. */
START_TEST(test_align_nccl_exact)
{
	static const int64_t offset[3] = {0, 123456789, -987654321};
	static const int64_t wall_err[3] = {0, 2500000, -1200000}; /* NTP: +2.5 ms, -1.2 ms */
	const char *in[3] = {tpath("n0.gtrace"), tpath("n1.gtrace"), tpath("n2.gtrace")};
	struct summary s[3], sm;
	struct gt_merge *m;

	for (unsigned i = 0; i < 3; i++) {
		struct synth_opts o = {.kernels = 2000,
		                       .names = 20,
		                       .processes = 1,
		                       .seed = 10 + i,
		                       .rank0 = (int32_t)i,
		                       .world = 3,
		                       .nccl_every = 10,
		                       .clock_offset_ns = offset[i],
		                       .wall_error_ns = wall_err[i]};
		char host[16];

		snprintf(host, sizeof(host), "node-%u", i);
		o.host = host;
		synth_file(in[i], &o);
		summarize(in[i], &s[i]);
	}
	/* the wall clocks alone: off by exactly their errors */
	m = merge(tpath("nw.gtrace"), in, 3, GT_MERGE_ALIGN_WALL_CLOCK);
	for (unsigned i = 0; i < 3; i++) {
		const struct gt_merge_input *x = gt_merge_input(m, i);

		ck_assert_uint_eq(x->align, GT_ALIGN_WALL_CLOCK);
		ck_assert_int_eq(x->offset_ns, -offset[i] + wall_err[i]);
		ck_assert_int_eq(x->wall_offset_ns, -offset[i] + wall_err[i]);
	}
	gt_merge_free(m);

	m = merge(tpath("nm.gtrace"), in, 3, GT_MERGE_ALIGN_NCCL);
	ck_assert_uint_eq(gt_merge_nccl_reference(m), 0);
	for (unsigned i = 0; i < 3; i++) {
		const struct gt_merge_input *x = gt_merge_input(m, i);

		ck_assert_uint_eq(x->align, GT_ALIGN_NCCL);
		ck_assert_int_eq(x->offset_ns, -offset[i]);
		ck_assert_int_eq(x->wall_offset_ns, -offset[i] + wall_err[i]);
		ck_assert_uint_eq(x->collectives, 200);
		ck_assert_uint_eq(x->unpaired, 0);
		ck_assert_int_eq(x->spread_lo_ns, 0);
		ck_assert_int_eq(x->spread_hi_ns, 0);
	}
	/* in the merged file, the k-th collective ends at the same instant on all three */
	summarize(tpath("nm.gtrace"), &sm);
	{
		uint64_t ends[3][200];
		size_t n[3] = {0};

		for (size_t i = 0; i < sm.nk; i++) {
			if (strncmp(sm.k[i].name, "ncclDev", 7) != 0 &&
			    strncmp(sm.k[i].name, "_Z29nccl", 8) != 0)
				continue;
			ck_assert_uint_lt(n[sm.k[i].input - 1], 200);
			ends[sm.k[i].input - 1][n[sm.k[i].input - 1]++] = sm.k[i].end_ns;
		}
		for (unsigned c = 0; c < 200; c++) {
			ck_assert_uint_eq(ends[0][c],
			                  SYNTH_START_NS + (c + 1) * SYNTH_NCCL_PERIOD_NS);
			ck_assert_uint_eq(ends[1][c], ends[0][c]);
			ck_assert_uint_eq(ends[2][c], ends[0][c]);
		}
	}
	for (unsigned i = 0; i < 3; i++) {
		ck_assert_int_eq(sm.inputs[i].align, GT_ALIGN_NCCL);
		ck_assert_int_eq(sm.inputs[i].offset_ns, -offset[i]);
		summary_free(&s[i]);
	}
	gt_merge_free(m);
	summary_free(&sm);
}
END_TEST

/* Collectives that end within +-2 jitters of the true instant: the estimate (the median of
 * the per-collective differences) is within 4 jitters of the truth, the widest difference
 * two ranks' jitters make. Here rank 0's minus rank 1's jitter is -3 jitters for 2 in 5
 * collectives and +2 for the other 3: the median is +2, and the spread shows the -3s. */
START_TEST(test_align_nccl_jitter)
{
	const char *in[2] = {tpath("j0.gtrace"), tpath("j1.gtrace")};
	struct gt_merge *m;

	for (unsigned i = 0; i < 2; i++) {
		struct synth_opts o = {.kernels = 1000,
		                       .names = 20,
		                       .processes = 1,
		                       .seed = 20 + i,
		                       .rank0 = (int32_t)i,
		                       .world = 2,
		                       .nccl_every = 10,
		                       .nccl_jitter_ns = 100,
		                       .host = i ? "node-1" : "node-0",
		                       .clock_offset_ns = i ? 5000000 : 0,
		                       .wall_error_ns = i ? -300000 : 0};

		synth_file(in[i], &o);
	}
	m = merge(tpath("jm.gtrace"), in, 2, GT_MERGE_ALIGN_NCCL);
	{
		const struct gt_merge_input *x = gt_merge_input(m, 1);

		ck_assert_uint_eq(x->align, GT_ALIGN_NCCL);
		ck_assert_uint_eq(x->collectives, 100);
		ck_assert_int_le(llabs(x->offset_ns - -5000000), 400);
		ck_assert_int_eq(x->offset_ns, -5000000 + 200);
		ck_assert_int_eq(x->wall_offset_ns, -5000000 - 300000);
		ck_assert_int_eq(x->spread_lo_ns, -500);
		ck_assert_int_eq(x->spread_hi_ns, 0);
	}
	gt_merge_free(m);
}
END_TEST

/* NCCL alignment needs collectives: none anywhere is -ENODATA; an input without any keeps
 * its wall clock and its offset. */
START_TEST(test_align_nccl_none)
{
	struct synth_opts a = {
	        .kernels = 200, .names = 5, .processes = 1, .seed = 5, .host = "node-a"};
	struct synth_opts b = a, c = a;
	const char *in[3] = {tpath("x0.gtrace"), tpath("x1.gtrace"), tpath("x2.gtrace")};
	struct gt_merge_options o = {.align = GT_MERGE_ALIGN_NCCL};
	struct gt_merge_error e = {0};
	struct gt_merge *m = NULL;

	b.host = "node-b";
	b.wall_error_ns = 1000;
	synth_file(in[0], &a);
	synth_file(in[1], &b);
	ck_assert_int_eq(gt_merge_open(in, 2, &o, &m, &e), 0);
	ck_assert_int_eq(gt_merge_align(m, &e), -ENODATA);
	ck_assert_str_eq(e.msg, "no input holds an NCCL collective kernel");
	ck_assert_int_eq(gt_merge_write(m, tpath("x.gtrace"), &e), -ENODATA);
	ck_assert_int_eq(access(tpath("x.gtrace"), F_OK), -1);
	gt_merge_free(m);

	/* the first input without collectives keeps its clock; the other two pair up */
	b.nccl_every = c.nccl_every = 5;
	c.host = "node-c";
	c.seed = 6;
	c.clock_offset_ns = 42;
	synth_file(in[1], &b);
	synth_file(in[2], &c);
	m = merge(tpath("x.gtrace"), in, 3, GT_MERGE_ALIGN_NCCL);
	ck_assert_uint_eq(gt_merge_nccl_reference(m), 1);
	ck_assert_uint_eq(gt_merge_input(m, 0)->align, GT_ALIGN_WALL_CLOCK);
	ck_assert_int_eq(gt_merge_input(m, 0)->offset_ns, 0);
	ck_assert_uint_eq(gt_merge_input(m, 1)->align, GT_ALIGN_NCCL);
	ck_assert_int_eq(gt_merge_input(m, 1)->offset_ns, 1000);
	ck_assert_uint_eq(gt_merge_input(m, 2)->align, GT_ALIGN_NCCL);
	/* c's collectives end 42 ns later on its clock; b's are 1000 ns later on the merged */
	ck_assert_int_eq(gt_merge_input(m, 2)->offset_ns, 1000 - 42);
	ck_assert_uint_eq(gt_merge_input(m, 2)->collectives, 40);
	gt_merge_free(m);
}
END_TEST

START_TEST(test_is_collective)
{
	static const struct {
		const char *name;
		bool want;
	} cases[] = {
	        {"ncclDevKernel_AllReduce_Sum_f32_RING_LL", true},
	        {"ncclKernel_AllReduce_RING_LL_Sum_float", true},
	        {"_Z29ncclDevKernel_AllGather_RING_LL24ncclDevKernelArgsStorageILm4096EE", true},
	        {"ncclDevKernel_SendRecv", false},
	        {"ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t", false},
	        {"_Z10nccl", true},
	        {"_Z3foo", false},
	        {"my_ncclDevKernel", true},
	        {"void ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)", true},
	        {"ncclx", true},
	        {"_Zncclfoo", false},
	        {"my_nccl_thing", false},
	        {"nccl", true},
	        {"ncc", false},
	        {"", false},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		ck_assert_msg(gt_merge_is_collective(cases[i].name, strlen(cases[i].name)) ==
		                      cases[i].want,
		              "%s", cases[i].name);
}
END_TEST

static void copy_file(const char *from, const char *to, off_t cut)
{
	char cmd[1024];

	if (cut > 0)
		snprintf(cmd, sizeof(cmd), "head -c %lld '%s' > '%s'", (long long)cut, from, to);
	else
		snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", from, to);
	ck_assert_int_eq(system(cmd), 0);
}

/* The same input twice, by name, by another name, or as a copy: refused, naming both. */
START_TEST(test_duplicate)
{
	struct synth_opts a = {.kernels = 100, .names = 5, .processes = 1, .seed = 7};
	struct gt_merge_error e = {0};
	struct gt_merge *m = NULL;
	const char *in[3] = {tpath("d0.gtrace"), tpath("d1.gtrace"), tpath("d0.gtrace")};
	char other[300];

	synth_file(in[0], &a);
	a.seed = 8;
	a.host = "elsewhere";
	synth_file(in[1], &a);
	ck_assert_int_eq(gt_merge_open(in, 3, NULL, &m, &e), -EEXIST);
	ck_assert_ptr_null(m);
	ck_assert_uint_eq(e.input, 2);
	ck_assert_uint_eq(e.other, 0);
	ck_assert_str_eq(e.msg, "the same file");

	snprintf(other, sizeof(other), "%s/./d0.gtrace", dir);
	in[2] = other;
	ck_assert_int_eq(gt_merge_open(in, 3, NULL, &m, &e), -EEXIST);
	ck_assert_uint_eq(e.input, 2);
	ck_assert_str_eq(e.msg, "the same file");

	copy_file(in[0], tpath("d0-copy.gtrace"), 0);
	in[2] = tpath("d0-copy.gtrace");
	ck_assert_int_eq(gt_merge_open(in, 3, NULL, &m, &e), -EEXIST);
	ck_assert_uint_eq(e.input, 2);
	ck_assert_uint_eq(e.other, 0);
	ck_assert_str_eq(e.msg, "a copy of it (the same header and size)");
}
END_TEST

/* Unreadable inputs: the reader's reason and the input's index. */
START_TEST(test_bad_inputs)
{
	struct synth_opts a = {.kernels = 100, .names = 5, .processes = 1, .seed = 7};
	struct gt_merge_error e = {0};
	struct gt_merge *m = NULL;
	const char *in[2] = {tpath("g0.gtrace"), tpath("missing.gtrace")};
	uint8_t hdr[16];
	int fd;

	synth_file(in[0], &a);
	ck_assert_int_eq(gt_merge_open(in, 2, NULL, &m, &e), -ENOENT);
	ck_assert_uint_eq(e.input, 1);
	ck_assert_str_eq(e.msg, strerror(ENOENT));

	/* a newer format version */
	copy_file(in[0], tpath("v9.gtrace"), 0);
	fd = open(tpath("v9.gtrace"), O_RDWR);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pread(fd, hdr, 16, 0), 16);
	gt_put_le32(hdr + 8, 9);
	ck_assert_int_eq(pwrite(fd, hdr, 16, 0), 16);
	close(fd);
	in[1] = tpath("v9.gtrace");
	ck_assert_int_eq(gt_merge_open(in, 2, NULL, &m, &e), -EPROTONOSUPPORT);
	ck_assert_uint_eq(e.input, 1);
	ck_assert_str_eq(e.msg, "written by a newer gputrace (format 9, this reader knows 1)");

	in[1] = tpath("empty.gtrace");
	fd = open(in[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	close(fd);
	ck_assert_int_eq(gt_merge_open(in, 2, NULL, &m, &e), -EINVAL);
	ck_assert_str_eq(e.msg, "empty file");
	ck_assert_int_eq(gt_merge_open(in, 0, NULL, &m, &e), -EINVAL);
}
END_TEST

/* Inputs whose records are in time order come out in time order (ties: the input given
 * first); with a slack S, a record is never more than S before one already written. */
START_TEST(test_order)
{
	const char *in[3] = {tpath("o0.gtrace"), tpath("o1.gtrace"), tpath("o2.gtrace")};
	static const uint64_t slacks[2] = {0, 5000};

	for (unsigned i = 0; i < 3; i++) {
		struct gt_trace_info info = {.clock_id = GT_CLOCK_MONOTONIC,
		                             .start_realtime_ns = 5000000000ull,
		                             .start_trace_ns = 1000,
		                             .hostname = i == 0   ? "h0"
		                                         : i == 1 ? "h1"
		                                                  : "h2"};
		struct gt_writer *w;

		ck_assert_int_eq(gt_writer_open(in[i], &info, NULL, &w), 0);
		for (unsigned k = 0; k < 3000; k++) {
			struct gt_rec_kernel kr = {{GT_REC_KERNEL, sizeof(kr), 100 + i}};

			/* input i: every 3 us from i us on, and every 7th at the same time as
			 * input 0's record of that step */
			kr.span.start_ns = 1000000 + k * 3000 + (k % 7 ? i * 1000 : 0);
			kr.span.end_ns = kr.span.start_ns + 500;
			kr.span.correlation_id = k;
			ck_assert_int_eq(gt_writer_write(w, &kr.hdr), 0);
		}
		ck_assert_int_eq(gt_writer_close(w), 0);
	}
	for (unsigned t = 0; t < 2; t++) {
		struct gt_merge_options o = {.slack_ns = slacks[t], .threads = 2};
		struct gt_merge_error e;
		struct gt_merge *m;
		struct gt_reader *r;
		const union gt_record *rec;
		const char *msg;
		uint64_t high = 0, n = 0, late = 0;
		uint32_t last_pid = 0, last_corr = 0;

		ck_assert_int_eq(gt_merge_open(in, 3, &o, &m, &e), 0);
		ck_assert_int_eq(gt_merge_write(m, tpath("om.gtrace"), &e), 0);
		gt_merge_free(m);
		ck_assert_int_eq(gt_reader_open(tpath("om.gtrace"), &r, &msg), 0);
		while (gt_reader_next(r, &rec) == 1) {
			uint64_t ts;

			if (rec->hdr.type != GT_REC_KERNEL)
				continue;
			ts = rec->kernel.span.start_ns;
			ck_assert_msg(ts + slacks[t] >= high, "slack %llu: %llu after %llu",
			              (unsigned long long)slacks[t], (unsigned long long)ts,
			              (unsigned long long)high);
			/* equal times: the input given first comes first */
			if (!slacks[t] && ts == high && n)
				ck_assert_uint_le(last_pid, rec->hdr.pid);
			late += ts < high;
			if (ts > high)
				high = ts;
			last_pid = rec->hdr.pid;
			last_corr = rec->kernel.span.correlation_id;
			n++;
		}
		ck_assert_uint_eq(n, 9000);
		ck_assert_uint_eq(last_corr, 2999);
		/* strictly in order without slack; runs of one input, so some out of it, with */
		if (slacks[t])
			ck_assert_uint_gt(late, 0);
		else
			ck_assert_uint_eq(late, 0);
		gt_reader_close(r);
	}
}
END_TEST

/* An input of a later minor revision of the format, with a record kind this gputrace does not
 * know: merged without it, which the input's INPUT record and result count. */
START_TEST(test_newer_kind)
{
	struct synth_opts a = {
	        .kernels = 100, .names = 5, .processes = 1, .seed = 13, .host = "node-a"};
	struct gt_trace_info info = {.clock_id = GT_CLOCK_MONOTONIC,
	                             .start_realtime_ns = 1714564800000000000ull,
	                             .start_trace_ns = SYNTH_START_NS,
	                             .hostname = "node-new"};
	/* kind 40, a 3-byte body; then a kernel of pid 77 this reader knows */
	static const uint8_t unknown[] = {40, 3, 1, 2, 3};
	struct gt_rec_kernel k = {{GT_REC_KERNEL, sizeof(k), 77}};
	const char *in[2] = {tpath("v0.gtrace"), tpath("v1.gtrace")};
	struct gt_writer *w;
	struct summary sm;
	struct gt_merge *m;

	synth_file(in[0], &a);
	ck_assert_int_eq(gt_writer_open(in[1], &info, NULL, &w), 0);
	ck_assert_int_eq(gt_writer_append_encoded(w, unknown, sizeof(unknown), 1), 0);
	k.span.start_ns = SYNTH_START_NS + 10;
	k.span.end_ns = SYNTH_START_NS + 20;
	ck_assert_int_eq(gt_writer_write(w, &k.hdr), 0);
	ck_assert_int_eq(gt_writer_close(w), 0);

	m = merge(tpath("vm.gtrace"), in, 2, GT_MERGE_ALIGN_WALL_CLOCK);
	ck_assert_uint_eq(gt_merge_input(m, 1)->records, 1);
	ck_assert_uint_eq(gt_merge_input(m, 1)->records_skipped, 1);
	ck_assert_uint_eq(gt_merge_input(m, 1)->version, GT_TRACE_VERSION);
	summarize(tpath("vm.gtrace"), &sm);
	ck_assert_uint_eq(sm.counts[GT_REC_KERNEL], 101);
	ck_assert_uint_eq(sm.status.records_skipped, 0);
	ck_assert_uint_eq(sm.inputs[1].records_skipped, 1);
	ck_assert_uint_eq(sm.inputs[1].records, 1);
	gt_merge_free(m);
	summary_free(&sm);
}
END_TEST

/* A file cut in the middle of a chunk: what reads is merged, the lost chunk is a
 * damaged_file loss of that input's process, and the input is marked recovered. */
START_TEST(test_truncated)
{
	struct synth_opts a = {.kernels = 20000,
	                       .names = 30,
	                       .processes = 1,
	                       .seed = 9,
	                       .api = true,
	                       .host = "node-a"};
	struct synth_opts b = a;
	const char *in[2] = {tpath("t0.gtrace"), tpath("t1-cut.gtrace")};
	struct summary sb, sm;
	struct gt_merge *m;
	struct stat st;

	b.seed = 10;
	b.host = "node-b";
	b.pid0 = 6000;
	chunk_bytes = 64u << 10;
	synth_file(in[0], &a);
	synth_file(tpath("t1.gtrace"), &b);
	chunk_bytes = 0;
	ck_assert_int_eq(stat(tpath("t1.gtrace"), &st), 0);
	copy_file(tpath("t1.gtrace"), in[1], st.st_size * 2 / 3);
	summarize(in[1], &sb);
	ck_assert_uint_eq(sb.status.chunks_skipped, 1);
	ck_assert_uint_gt(sb.counts[GT_REC_KERNEL], 0);
	ck_assert_uint_lt(sb.counts[GT_REC_KERNEL], 20000);

	m = merge(tpath("tm.gtrace"), in, 2, GT_MERGE_ALIGN_WALL_CLOCK);
	summarize(tpath("tm.gtrace"), &sm);
	ck_assert_uint_eq(sm.counts[GT_REC_KERNEL], 20000 + sb.counts[GT_REC_KERNEL]);
	ck_assert_uint_eq(gt_merge_input(m, 1)->chunks_skipped, 1);
	ck_assert(gt_merge_input(m, 1)->recovered);
	ck_assert(!gt_merge_input(m, 0)->recovered);
	ck_assert_uint_eq(sm.nlosses, 1);
	ck_assert_uint_eq(sm.losses[0].source, GT_LOSS_FILE);
	ck_assert_uint_eq(sm.losses[0].count, 1);
	/* what the input's reader said of it, kept in the loss */
	ck_assert_uint_eq(sm.losses[0].bytes, sb.status.bytes_skipped);
	ck_assert_uint_gt(sm.losses[0].bytes, 0);
	ck_assert_uint_eq(sm.losses[0].records, sb.status.chunk_records_skipped);
	ck_assert_uint_gt(sm.losses[0].records, 0);
	ck_assert_uint_eq(sm.losses[0].malformed, 0);
	ck_assert_uint_eq(sm.losses[0].hdr.pid, 6000);
	ck_assert_uint_eq(origin_of(&sm, 6000)->input, 2);
	ck_assert_uint_eq(sm.inputs[1].flags, GT_INPUT_RECOVERED);
	ck_assert_uint_eq(sm.inputs[1].chunks_skipped, 1);
	ck_assert_uint_gt(sm.inputs[1].bytes_skipped, 0);
	ck_assert_uint_eq(sm.inputs[0].flags, 0);
	gt_merge_free(m);
	summary_free(&sb);
	summary_free(&sm);
}
END_TEST

/* A name used before (or without) its STRING record gets an id of its own, defined when the
 * string comes; it never takes another input's name. */
START_TEST(test_undefined_strings)
{
	struct gt_trace_info info = {.clock_id = GT_CLOCK_MONOTONIC,
	                             .start_realtime_ns = 5000,
	                             .start_trace_ns = 1000,
	                             .hostname = "solo"};
	struct synth_opts a = {.kernels = 50, .names = 5, .processes = 1, .seed = 11};
	const char *in[2] = {tpath("u0.gtrace"), tpath("u1.gtrace")};
	struct gt_rec_kernel k = {{GT_REC_KERNEL, sizeof(k), 77}};
	struct gt_writer *w;
	unsigned late = 0, dangling = 0, named = 0;

	synth_file(in[0], &a);
	ck_assert_int_eq(gt_writer_open(in[1], &info, NULL, &w), 0);
	k.span.start_ns = 2000;
	k.span.end_ns = 3000;
	k.name_id = SYNTH_STR_KERNEL0; /* input 0 calls its first kernel name so */
	ck_assert_int_eq(gt_writer_write(w, &k.hdr), 0);
	ck_assert_int_eq(gt_writer_string(w, 77, SYNTH_STR_KERNEL0, "late", 4), 0);
	k.span.start_ns = 4000;
	k.span.end_ns = 5000;
	ck_assert_int_eq(gt_writer_write(w, &k.hdr), 0);
	k.name_id = 999; /* never defined */
	ck_assert_int_eq(gt_writer_write(w, &k.hdr), 0);
	ck_assert_int_eq(gt_writer_close(w), 0);

	gt_merge_free(merge(tpath("um.gtrace"), in, 2, GT_MERGE_ALIGN_WALL_CLOCK));
	/* read once for the strings, then look at every kernel's name */
	{
		struct gt_reader *r;
		const union gt_record *rec;
		const char *msg;
		uint32_t solo = 0;

		ck_assert_int_eq(gt_reader_open(tpath("um.gtrace"), &r, &msg), 0);
		while (gt_reader_next(r, &rec) == 1)
			if (rec->hdr.type == GT_REC_ORIGIN && rec->origin.input == 2)
				solo = rec->hdr.pid;
		ck_assert_uint_ne(solo, 0);
		ck_assert_int_eq(gt_reader_rewind(r), 0);
		while (gt_reader_next(r, &rec) == 1) {
			const char *name;

			if (rec->hdr.type != GT_REC_KERNEL)
				continue;
			name = gt_reader_string(r, rec->kernel.name_id, NULL);
			if (rec->hdr.pid != solo)
				named += name && strchr(name, '_');
			else if (name && strcmp(name, "late") == 0)
				late++;
			else if (!name && rec->kernel.name_id >= 0xc0000000u)
				dangling++;
		}
		gt_reader_close(r);
	}
	ck_assert_uint_eq(named, 50);
	ck_assert_uint_eq(late, 2);
	ck_assert_uint_eq(dangling, 1);
}
END_TEST

/* A merged trace merged again: its inputs come along under new indexes, with their parent,
 * their pids' origins and their offsets added up. */
START_TEST(test_nested)
{
	const char *in[3] = {tpath("s0.gtrace"), tpath("s1.gtrace"), tpath("s2.gtrace")};
	const char *outer[2];
	struct summary sm;
	struct gt_merge *m;

	for (unsigned i = 0; i < 3; i++) {
		struct synth_opts o = {.kernels = 300,
		                       .names = 10,
		                       .processes = 1,
		                       .seed = 30 + i,
		                       .wall_error_ns = 1000 * (int64_t)i};
		char host[16];

		snprintf(host, sizeof(host), "host-%u", i);
		o.host = host;
		synth_file(in[i], &o);
	}
	gt_merge_free(merge(tpath("s01.gtrace"), in, 2, GT_MERGE_ALIGN_WALL_CLOCK));
	outer[0] = in[2];
	outer[1] = tpath("s01.gtrace");
	m = merge(tpath("s012.gtrace"), outer, 2, GT_MERGE_ALIGN_WALL_CLOCK);
	summarize(tpath("s012.gtrace"), &sm);
	ck_assert_uint_eq(sm.counts[GT_REC_KERNEL], 900);
	ck_assert_uint_eq(sm.ninputs, 4);
	/* s01's own two inputs first (they close it), then the outer two */
	ck_assert_uint_eq(sm.inputs[0].index, 3);
	ck_assert_uint_eq(sm.inputs[0].parent, 2);
	ck_assert_str_eq(sm.input_host[0], "host-0");
	ck_assert_uint_eq(sm.inputs[1].index, 4);
	ck_assert_uint_eq(sm.inputs[1].parent, 2);
	ck_assert_str_eq(sm.input_host[1], "host-1");
	ck_assert_uint_eq(sm.inputs[2].index, 1);
	ck_assert_str_eq(sm.input_host[2], "host-2");
	ck_assert_uint_eq(sm.inputs[3].index, 2);
	ck_assert_str_eq(sm.input_host[3], "host-0,host-1");
	/* host-2's clock is the merged one: s01 (host-0's clock) moves 2000 ns back, and
	 * host-1, 1000 ns ahead of host-0 inside s01, ends up 1000 ns back */
	ck_assert_int_eq(sm.inputs[3].offset_ns, -2000);
	ck_assert_int_eq(sm.inputs[0].offset_ns, 0 - 2000);
	ck_assert_int_eq(sm.inputs[1].offset_ns, 1000 - 2000);
	/* three processes, all pid 4100 at first: the origins keep their first input */
	ck_assert_uint_eq(sm.norigins, 3);
	ck_assert_uint_eq(origin_of(&sm, 4100)->input, 1);
	ck_assert_uint_eq(origin_of(&sm, GT_MERGE_PID_BASE)->input, 3);
	ck_assert_uint_eq(origin_of(&sm, GT_MERGE_PID_BASE)->orig_pid, 4100);
	ck_assert_uint_eq(origin_of(&sm, GT_MERGE_PID_BASE + 1)->input, 4);
	ck_assert_uint_eq(origin_of(&sm, GT_MERGE_PID_BASE + 1)->orig_pid, 4100);
	gt_merge_free(m);
	summary_free(&sm);
}
END_TEST

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
	ck_assert_ptr_nonnull(buf);
	ck_assert_uint_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	*len = (size_t)n;
	return buf;
}

/* A writer thread writes the same file, byte for byte, as one thread does (many batches,
 * strings among them); a slack gives runs, the same records in another order. */
START_TEST(test_threads)
{
	const char *in[3] = {tpath("w0.gtrace"), tpath("w1.gtrace"), tpath("w2.gtrace")};
	struct gt_merge_options o = {.cmdline = "threads"};
	struct gt_merge_error e = {0};
	const char *out[3] = {tpath("w-1.gtrace"), tpath("w-2.gtrace"), tpath("w-3.gtrace")};
	struct summary s1, s3;
	char *a, *b;
	size_t la, lb;

	for (unsigned i = 0; i < 3; i++) {
		struct synth_opts so = {.kernels = 20000,
		                        .names = 200,
		                        .processes = 2,
		                        .seed = 40 + i,
		                        .api = true,
		                        .memcpy = true,
		                        .wall_error_ns = 1000 * (int64_t)i};
		char host[16];

		snprintf(host, sizeof(host), "host-%u", i);
		so.host = host;
		synth_file(in[i], &so);
	}
	for (unsigned k = 0; k < 3; k++) {
		struct gt_merge *m;

		o.threads = k == 0 ? 1 : 2;
		o.slack_ns = k == 2 ? 1000000 : 0;
		ck_assert_int_eq(gt_merge_open(in, 3, &o, &m, &e), 0);
		ck_assert_msg(gt_merge_write(m, out[k], &e) == 0, "%s", e.msg);
		ck_assert_uint_eq(m->out.threaded, false);
		gt_merge_free(m);
	}
	a = slurp(out[0], &la);
	b = slurp(out[1], &lb);
	ck_assert_uint_gt(la, 4 * GT_MERGE_BATCH_BYTES / 10);
	ck_assert_uint_eq(la, lb);
	ck_assert(memcmp(a, b, la) == 0);
	free(a);
	free(b);
	summarize(out[0], &s1);
	summarize(out[2], &s3);
	for (unsigned t = 1; t < GT_REC_MAX; t++)
		ck_assert_uint_eq(s1.counts[t], s3.counts[t]);
	ck_assert_uint_eq(s1.counts[GT_REC_KERNEL], 60000);
	summary_free(&s1);
	summary_free(&s3);
}
END_TEST

/* Reading ahead and compressing by pools (3 threads and more) writes the same file, byte for
 * byte, as one thread does: inputs of many small chunks (many batches each), one cut short
 * and one with a damaged chunk in the middle; with and without slack. The inputs' counts
 * (records, chunks skipped, recovered) are the same too. */
START_TEST(test_pools_same_bytes)
{
	enum {
		NIN = 5
	};
	static const char *const names[NIN] = {"p0.gtrace", "p1.gtrace", "p2.gtrace",
	                                       "p3-cut.gtrace", "p4-bad.gtrace"};
	static const unsigned threads[] = {2, 3, 4, 5, 8};
	char paths[NIN][256], out1[256], outn[256]; /* tpath's buffers are reused */
	const char *in[NIN];
	struct summary sb;
	struct stat st;
	char *ref = NULL;
	size_t lref = 0;
	FILE *f;

	for (unsigned i = 0; i < NIN; i++) {
		snprintf(paths[i], sizeof(paths[i]), "%s", tpath(names[i]));
		in[i] = paths[i];
	}
	snprintf(out1, sizeof(out1), "%s", tpath("p-1.gtrace"));
	snprintf(outn, sizeof(outn), "%s", tpath("p-n.gtrace"));
	chunk_bytes = 32u << 10;
	for (unsigned i = 0; i < NIN; i++) {
		struct synth_opts so = {.kernels = 15000,
		                        .names = 300,
		                        .processes = 2,
		                        .seed = 60 + i,
		                        .api = true,
		                        .memcpy = true,
		                        .pid0 = 1000 * (i + 1),
		                        .wall_error_ns = 700 * (int64_t)i};
		char host[16];

		snprintf(host, sizeof(host), "pool-%u", i);
		so.host = host;
		synth_file(i < 3 ? in[i] : tpath(i == 3 ? "p3.gtrace" : "p4.gtrace"), &so);
	}
	chunk_bytes = 0;
	ck_assert_int_eq(stat(tpath("p3.gtrace"), &st), 0);
	copy_file(tpath("p3.gtrace"), in[3], st.st_size * 3 / 5);
	/* a byte of a chunk's frame in the middle of the file: its checksum fails */
	copy_file(tpath("p4.gtrace"), in[4], 0);
	ck_assert_int_eq(stat(in[4], &st), 0);
	f = fopen(in[4], "r+b");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fseek(f, st.st_size / 2, SEEK_SET), 0);
	ck_assert_int_ne(fputc(fgetc(f) ^ 0x5a, f), EOF);
	fclose(f);
	summarize(in[4], &sb);
	ck_assert_uint_eq(sb.status.chunks_skipped, 1);
	summary_free(&sb);

	for (unsigned s = 0; s < 2; s++) {
		struct gt_merge_options o = {.cmdline = "pools", .slack_ns = s ? 1000000 : 0};
		struct gt_merge_input ref_in[NIN];
		struct gt_merge_error e = {0};
		struct gt_merge *m;

		o.threads = 1;
		ck_assert_int_eq(gt_merge_open(in, NIN, &o, &m, &e), 0);
		ck_assert_msg(gt_merge_write(m, out1, &e) == 0, "%s", e.msg);
		for (unsigned i = 0; i < NIN; i++)
			ref_in[i] = *gt_merge_input(m, i);
		ck_assert_uint_eq(ref_in[3].chunks_skipped, 1);
		ck_assert(ref_in[3].recovered);
		ck_assert_uint_eq(ref_in[4].chunks_skipped, 1);
		ck_assert(!ref_in[4].recovered);
		gt_merge_free(m);
		ref = slurp(out1, &lref);
		/* several batches per input: decoded records take 32 bytes and more */
		ck_assert_uint_gt(ref_in[0].records, 3 * GT_MERGE_AHEAD_BYTES / 32);
		for (unsigned t = 0; t < sizeof(threads) / sizeof(threads[0]); t++) {
			char *b;
			size_t lb;

			o.threads = threads[t];
			ck_assert_int_eq(gt_merge_open(in, NIN, &o, &m, &e), 0);
			ck_assert_msg(gt_merge_write(m, outn, &e) == 0, "%s", e.msg);
			ck_assert_ptr_null(m->pool);
			for (unsigned i = 0; i < NIN; i++) {
				const struct gt_merge_input *mi = gt_merge_input(m, i);

				ck_assert_uint_eq(mi->records, ref_in[i].records);
				ck_assert_uint_eq(mi->chunks_skipped, ref_in[i].chunks_skipped);
				ck_assert_uint_eq(mi->bytes_skipped, ref_in[i].bytes_skipped);
				ck_assert_int_eq(mi->recovered, ref_in[i].recovered);
				ck_assert_uint_eq(mi->processes, ref_in[i].processes);
				ck_assert_uint_eq(mi->renamed, ref_in[i].renamed);
			}
			gt_merge_free(m);
			b = slurp(outn, &lb);
			ck_assert_msg(lb == lref && memcmp(ref, b, lb) == 0,
			              "threads %u, slack %u: %zu bytes against %zu", threads[t], s,
			              lb, lref);
			free(b);
		}
		free(ref);
	}
}
END_TEST

/* The writer's own compression threads write the same file, byte for byte, as the writer
 * alone: every chunk in order, the index the same (state chunks among event chunks). */
START_TEST(test_writer_compress_threads)
{
	struct synth_opts so = {.kernels = 30000,
	                        .names = 500,
	                        .processes = 3,
	                        .seed = 77,
	                        .api = true,
	                        .memcpy = true};
	struct gt_trace_info info = {.clock_id = GT_CLOCK_MONOTONIC,
	                             .start_realtime_ns = 5000,
	                             .start_trace_ns = 1000,
	                             .hostname = "zpool"};
	static const unsigned threads[] = {0, 1, 2, 7, 40};
	char *ref = NULL;
	size_t lref = 0;

	for (unsigned t = 0; t < sizeof(threads) / sizeof(threads[0]); t++) {
		struct gt_writer_options wo = {.chunk_bytes = 16u << 10,
		                               .compress_threads = threads[t]};
		const char *path = tpath(t ? "z-n.gtrace" : "z-0.gtrace");
		struct gt_writer *w;
		union synth_buf b;
		struct synth s;
		struct summary sm;

		ck_assert_int_eq(gt_writer_open(path, &info, &wo, &w), 0);
		synth_init(&s, &so);
		while (synth_next(&s, &b))
			ck_assert_int_eq(gt_writer_write(w, &b.rec.hdr), 0);
		ck_assert_int_eq(gt_writer_close(w), 0);
		summarize(path, &sm);
		ck_assert_uint_eq(sm.counts[GT_REC_KERNEL], 30000);
		ck_assert(!sm.status.recovered);
		ck_assert_uint_eq(sm.status.chunks_skipped, 0);
		ck_assert_uint_gt(sm.status.chunks_read, 40);
		summary_free(&sm);
		if (!t) {
			ref = slurp(path, &lref);
		} else {
			size_t lb;
			char *bytes = slurp(path, &lb);

			ck_assert_msg(lb == lref && memcmp(ref, bytes, lb) == 0,
			              "compress_threads %u: %zu bytes against %zu", threads[t], lb,
			              lref);
			free(bytes);
		}
	}
	free(ref);
}
END_TEST

/* The outputs show a merged trace's processes apart, with their hosts and the pids they had:
 * the catalog (under info, stats and the timeline) and the chrome export's process names
 * (perfetto's: cli-merge, through Perfetto's importer). */
START_TEST(test_exporters)
{
	struct synth_opts a = {.kernels = 200,
	                       .names = 5,
	                       .processes = 1,
	                       .seed = 50,
	                       .rank0 = 0,
	                       .world = 2,
	                       .host = "node-a"};
	struct synth_opts b = a;
	const char *in[2] = {tpath("e0.gtrace"), tpath("e1.gtrace")};
	struct gt_export_options eo = {.output = tpath("e.json"), .demangle = 1};
	struct gt_export_result res;
	struct gt_catalog cat;
	struct gt_reader *r;
	const char *msg = NULL;
	char *json;
	size_t len;

	b.seed = 51;
	b.rank0 = 1;
	b.host = "node-b";
	synth_file(in[0], &a);
	synth_file(in[1], &b);
	gt_merge_free(merge(tpath("e.gtrace"), in, 2, GT_MERGE_ALIGN_WALL_CLOCK));
	ck_assert_int_eq(gt_reader_open(tpath("e.gtrace"), &r, &msg), 0);

	ck_assert_int_eq(gt_catalog_init(&cat, r), 0);
	ck_assert_int_eq(gt_catalog_read(&cat, r, &msg), 0);
	ck_assert_uint_eq(cat.nprocs, 2); /* the INPUT records (pid 0) are no process */
	ck_assert_uint_eq(cat.ninputs, 2);
	ck_assert_uint_eq(cat.inputs[1].index, 2);
	ck_assert_uint_eq(gt_catalog_hosts(&cat), 2);
	ck_assert_uint_eq(cat.procs[0]->pid, 4100);
	ck_assert_uint_eq(cat.procs[0]->orig_pid, 4100);
	ck_assert_uint_eq(cat.procs[0]->input, 1);
	ck_assert_uint_eq(cat.procs[1]->pid, GT_MERGE_PID_BASE);
	ck_assert_uint_eq(cat.procs[1]->orig_pid, 4100);
	ck_assert_uint_eq(cat.procs[1]->input, 2);
	ck_assert_str_eq(gt_reader_string(r, cat.procs[1]->host_id, NULL), "node-b");
	gt_catalog_fini(&cat);

	ck_assert_int_eq(gt_reader_rewind(r), 0);
	ck_assert_int_eq(gt_export_run(gt_exporter_find("chrome"), r, &eo, &res, &msg), 0);
	json = slurp(tpath("e.json"), &len);
	ck_assert_ptr_nonnull(strstr(json, "\"name\":\"python3.11 (rank 0) on node-a\""));
	ck_assert_ptr_nonnull(strstr(json, "\"name\":\"python3.11 (rank 1) on node-b, pid 4100\""));
	free(json);

	gt_reader_close(r);
}
END_TEST

/* Per-name kernel counts, for the H200 comparison. */
struct name_count {
	char name[512];
	uint64_t n;
};

static size_t kernel_names(const char *path, struct name_count *nc, size_t max,
                           uint64_t counts[GT_REC_MAX])
{
	struct gt_reader *r;
	const union gt_record *rec;
	const char *msg;
	size_t n = 0;

	memset(counts, 0, GT_REC_MAX * sizeof(*counts));
	ck_assert_int_eq(gt_reader_open(path, &r, &msg), 0);
	while (gt_reader_next(r, &rec) == 1) {
		const char *name;
		size_t i;

		counts[rec->hdr.type]++;
		if (rec->hdr.type != GT_REC_KERNEL)
			continue;
		name = gt_reader_string(r, rec->kernel.name_id, NULL);
		ck_assert_ptr_nonnull(name);
		for (i = 0; i < n && strcmp(nc[i].name, name) != 0; i++)
			;
		if (i == n) {
			ck_assert_uint_lt(n, max);
			snprintf(nc[n++].name, sizeof(nc[0].name), "%s", name);
		}
		nc[i].n++;
	}
	gt_reader_close(r);
	return n;
}

/* The two H200 rank files merged hold what the one-trace recording of the same job holds,
 * less its launcher: the same kernels by name, copies, API calls, ranges. */
START_TEST(test_h200_ranks)
{
	char p0[4096], p1[4096], p2[4096];
	const char *in[2] = {p0, p1};
	static struct name_count a[256], b[256];
	uint64_t ca[GT_REC_MAX], cb[GT_REC_MAX];
	struct summary sm;
	size_t na, nb;
	struct gt_merge *m;

	snprintf(p0, sizeof(p0), "%s/ddp-rank0.gtrace", data_dir);
	snprintf(p1, sizeof(p1), "%s/ddp-rank1.gtrace", data_dir);
	snprintf(p2, sizeof(p2), "%s/ddp-2rank.gtrace", data_dir);
	m = merge(tpath("ddp.gtrace"), in, 2, GT_MERGE_ALIGN_WALL_CLOCK);
	/* the same host and clock: the anchors agree to their reading's skew */
	ck_assert_int_eq(gt_merge_input(m, 1)->offset_ns, 20);
	gt_merge_free(m);
	na = kernel_names(tpath("ddp.gtrace"), a, 256, ca);
	nb = kernel_names(p2, b, 256, cb);
	ck_assert_uint_eq(na, nb);
	for (size_t i = 0; i < na; i++) {
		size_t j;

		for (j = 0; j < nb && strcmp(a[i].name, b[j].name) != 0; j++)
			;
		ck_assert_msg(j < nb, "%s only in the merge", a[i].name);
		ck_assert_msg(a[i].n == b[j].n, "%s: %llu vs %llu", a[i].name,
		              (unsigned long long)a[i].n, (unsigned long long)b[j].n);
	}
	{
		static const unsigned same[] = {GT_REC_THREAD, GT_REC_CONTEXT, GT_REC_STREAM,
		                                GT_REC_KERNEL, GT_REC_MEMCPY,  GT_REC_MEMSET,
		                                GT_REC_MEMORY, GT_REC_API,     GT_REC_NVTX};

		for (size_t i = 0; i < sizeof(same) / sizeof(same[0]); i++)
			ck_assert_msg(ca[same[i]] == cb[same[i]], "%s: %llu vs %llu",
			              gt_record_name(same[i]), (unsigned long long)ca[same[i]],
			              (unsigned long long)cb[same[i]]);
		/* the launcher: one process, its end and clock anchor, its notice */
		ck_assert_uint_eq(ca[GT_REC_PROCESS] + 1, cb[GT_REC_PROCESS]);
		ck_assert_uint_eq(ca[GT_REC_PROCESS_END] + 1, cb[GT_REC_PROCESS_END]);
		ck_assert_uint_eq(ca[GT_REC_KERNEL], 704);
	}
	summarize(tpath("ddp.gtrace"), &sm);
	ck_assert_uint_eq(sm.nprocs, 2);
	for (size_t i = 0; i < 2; i++) {
		ck_assert_int_eq(sm.procs[i].world_size, 2);
		ck_assert_str_eq(sm.proc_host[i], "vm");
		ck_assert_uint_eq(origin_of(&sm, sm.procs[i].hdr.pid)->orig_pid,
		                  sm.procs[i].hdr.pid);
		ck_assert_uint_eq(origin_of(&sm, sm.procs[i].hdr.pid)->input,
		                  (uint32_t)sm.procs[i].rank + 1);
	}
	summary_free(&sm);
	{
		/* gloo, not NCCL: nothing to align by */
		struct gt_merge_options o = {.align = GT_MERGE_ALIGN_NCCL};
		struct gt_merge_error e;

		ck_assert_int_eq(gt_merge_open(in, 2, &o, &m, &e), 0);
		ck_assert_int_eq(gt_merge_align(m, &e), -ENODATA);
		gt_merge_free(m);
	}
}
END_TEST

/* 2,000 inputs (as many files open at once): every record merged once, a new pid for every
 * input but the first. The inputs are one small trace under 2,000 host names (the header
 * patched: a new name and checksum). Skipped when the hard open-file limit is too low. */
START_TEST(test_2000_inputs)
{
	enum {
		N = 2000
	};
	struct synth_opts a = {
	        .kernels = 20, .names = 4, .processes = 1, .seed = 12, .host = "node-0000"};
	static char names[N][96];
	static const char *in[N];
	struct rlimit rl;
	uint8_t *buf;
	struct stat st;
	struct summary sm;
	struct gt_merge *m;
	uint32_t hlen;
	int fd;

	ck_assert_int_eq(getrlimit(RLIMIT_NOFILE, &rl), 0);
	if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < N + 32) {
		printf("test_2000_inputs: skipped, the hard open-file limit is %llu\n",
		       (unsigned long long)rl.rlim_max);
		return;
	}
	rl.rlim_cur = rl.rlim_max;
	ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &rl), 0);
	synth_file(tpath("k.gtrace"), &a);
	ck_assert_int_eq(stat(tpath("k.gtrace"), &st), 0);
	buf = malloc((size_t)st.st_size);
	fd = open(tpath("k.gtrace"), O_RDONLY);
	ck_assert_int_eq(read(fd, buf, (size_t)st.st_size), st.st_size);
	close(fd);
	hlen = gt_get_le32(buf + 12);
	for (unsigned i = 0; i < N; i++) {
		uint8_t *host = memmem(buf, hlen, "node-0000", 9);

		ck_assert_ptr_nonnull(host);
		snprintf(names[i], sizeof(names[i]), "%s/k%04u.gtrace", dir, i);
		in[i] = names[i];
		if (i) {
			char h[10];

			snprintf(h, sizeof(h), "node-%04u", i);
			memcpy(host, h, 9);
			gt_put_le32(buf + hlen - 4, gt_crc32c(0, buf, hlen - 4));
		}
		fd = open(names[i], O_WRONLY | O_CREAT | O_TRUNC, 0644);
		ck_assert_int_ge(fd, 0);
		ck_assert_int_eq(write(fd, buf, (size_t)st.st_size), st.st_size);
		close(fd);
		if (i)
			memcpy(host, "node-0000", 9);
	}
	free(buf);
	m = merge(tpath("k-all.gtrace"), in, N, GT_MERGE_ALIGN_WALL_CLOCK);
	{
		/* with the pools: the same file (two batches per input, a fixed pool) */
		struct gt_merge_options o = {.cmdline = "gputrace merge test", .threads = 8};
		struct gt_merge_error e = {0};
		struct gt_merge *m8;
		char *x, *y;
		size_t lx, ly;

		ck_assert_int_eq(gt_merge_open(in, N, &o, &m8, &e), 0);
		ck_assert_msg(gt_merge_write(m8, tpath("k-all8.gtrace"), &e) == 0, "%s", e.msg);
		gt_merge_free(m8);
		x = slurp(tpath("k-all.gtrace"), &lx);
		y = slurp(tpath("k-all8.gtrace"), &ly);
		ck_assert_uint_eq(lx, ly);
		ck_assert(memcmp(x, y, lx) == 0);
		free(x);
		free(y);
	}
	summarize(tpath("k-all.gtrace"), &sm);
	ck_assert_uint_eq(sm.counts[GT_REC_KERNEL], 20 * N);
	ck_assert_uint_eq(sm.counts[GT_REC_PROCESS], N);
	ck_assert_uint_eq(sm.counts[GT_REC_INPUT], N);
	ck_assert_uint_eq(sm.counts[GT_REC_ORIGIN], N);
	ck_assert_uint_eq(gt_merge_input(m, 0)->renamed, 0);
	for (unsigned i = 1; i < N; i++)
		ck_assert_uint_eq(gt_merge_input(m, i)->renamed, 1);
	gt_merge_free(m);
	summary_free(&sm);
	for (unsigned i = 0; i < N; i++)
		unlink(names[i]);
}
END_TEST

static Suite *merge_suite(void)
{
	Suite *s = suite_create("merge");
	TCase *tc = tcase_create("merge");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_two_hosts_same_pid);
	tcase_add_test(tc, test_headers_and_losses);
	tcase_add_test(tc, test_align_nccl_exact);
	tcase_add_test(tc, test_align_nccl_jitter);
	tcase_add_test(tc, test_align_nccl_none);
	tcase_add_test(tc, test_is_collective);
	tcase_add_test(tc, test_duplicate);
	tcase_add_test(tc, test_bad_inputs);
	tcase_add_test(tc, test_order);
	tcase_add_test(tc, test_newer_kind);
	tcase_add_test(tc, test_truncated);
	tcase_add_test(tc, test_undefined_strings);
	tcase_add_test(tc, test_nested);
	tcase_add_test(tc, test_threads);
	tcase_add_test(tc, test_pools_same_bytes);
	tcase_add_test(tc, test_writer_compress_threads);
	tcase_add_test(tc, test_exporters);
	tcase_add_test(tc, test_h200_ranks);
	tcase_add_test(tc, test_2000_inputs);
	suite_add_tcase(s, tc);
	return s;
}

int main(int argc, char **argv)
{
	SRunner *sr;
	int failed;
	char cmd[128];

	data_dir = argc > 1 ? argv[1] : NULL;
	if (!data_dir) {
		fprintf(stderr, "usage: test-merge DATA_DIR\n");
		return 2;
	}
	snprintf(dir, sizeof(dir), "/tmp/test-merge-XXXXXX");
	if (!mkdtemp(dir))
		return 2;
	sr = srunner_create(merge_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		failed++;
	return failed ? 1 : 0;
}
