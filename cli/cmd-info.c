/* gputrace info: what a trace file holds, read in one streaming pass into the catalog every
 * output shares (exporters/model/catalog.h): its header, the traced processes and how they ended,
 * the GPUs, record counts per kind, every loss, notices, the time span, and whether the file
 * had to be recovered. Runs in the CLI process. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "catalog.h"
#include "cli.h"
#include "common.h"
#include "gputrace/record.h"
#include "gputrace/trace.h"
#include "text.h"

/* At most this many processes and GPUs are listed one per line; the rest are counted. */
#define LIST_MAX 64u
/* Processes listed after a GPU's uuid as its users. */
#define USERS_MAX 8u

/* Whether windows of the trace can seek (docs/format.md, "Footer"). */
static void print_index(struct gt_reader *r)
{
	const struct gt_trace_counts *fc = gt_reader_footer_counts(r);
	struct gt_chunk_info ci;

	if (!fc)
		printf("index:       none (windows read the whole file; "
		       "gputrace info --reindex makes one)\n");
	else if (gt_reader_chunk_info(r, 0, &ci) == 1 && !ci.have_types)
		printf("index:       %" PRIu64 " chunks, without their record types "
		       "(windows read the whole file; gputrace info --reindex adds them)\n",
		       fc->chunks);
	else
		printf("index:       %" PRIu64 " chunk%s, with their record types\n", fc->chunks,
		       fc->chunks == 1 ? "" : "s");
}

/* gputrace info --reindex FILE. */
static int reindex(const char *path)
{
	struct gt_reindex_result res;
	const char *errmsg = NULL;
	int ret = gt_trace_reindex(path, &res, &errmsg);

	if (ret < 0) {
		gt_cli_error("%s: %s", path, errmsg ? errmsg : strerror(-ret));
		if (ret == -ENOENT)
			return GT_EXIT_NO_INPUT;
		return ret == -EINVAL || ret == -EPROTO || ret == -EPROTONOSUPPORT
		               ? GT_EXIT_BAD_TRACE
		               : GT_EXIT_IO;
	}
	printf("%s: reindexed: %" PRIu64 " records in %" PRIu64 " chunks, %" PRIu64 " -> %" PRIu64
	       " bytes (it had %s)\n",
	       path, res.records, res.chunks, res.bytes_before, res.bytes_after,
	       !res.had_index   ? "no index: recovered"
	       : !res.had_types ? "an index without chunk types"
	                        : "an index with chunk types");
	if (res.chunks_skipped)
		printf("%s: %" PRIu64 " damaged chunk%s could not be read and %s left out\n", path,
		       res.chunks_skipped, res.chunks_skipped == 1 ? "" : "s",
		       res.chunks_skipped == 1 ? "is" : "are");
	if (res.records_dropped)
		printf("%s: %" PRIu64 " malformed records left out\n", path, res.records_dropped);
	return fflush(stdout) == 0 ? GT_EXIT_OK : GT_EXIT_IO;
}

static void usage(FILE *out)
{
	fputs("Usage: gputrace info [options] FILE\n"
	      "\n"
	      "Show what a trace holds: its header (format, clock, host, start time, command\n"
	      "line, versions), a merged trace's inputs, the traced processes and how they\n"
	      "ended (in a merged trace with their hosts and the pids they had), the GPUs\n"
	      "(each once by uuid, with its peak memory in use and the processes that used\n"
	      "it), record counts per kind, every loss counter, the time span (from the\n"
	      "trace's zero to the end of its last record, docs/cli.md \"Time\"), and whether the\n"
	      "file was recovered (a trace whose writer was killed has no footer; its complete\n"
	      "chunks are still read).\n"
	      "\n"
	      "Options:\n"
	      "      --reindex  write the trace again with a complete index (chunk offsets, "
	      "time\n"
	      "                 ranges and record types), so that windows of it (export "
	      "--from,\n"
	      "                 --nvtx) read only the chunks they need: for traces cut short "
	      "and\n"
	      "                 traces from before chunk types; crash-safe (a new file renamed "
	      "over\n"
	      "                 the old)\n"
	      "  -h, --help     show this help\n"
	      "\n"
	      "Exit status: 0, 64 usage error, 65 unreadable trace, 66 no such file, 74 write\n"
	      "error (--reindex).\n",
	      out);
}

static const char *str_or(const struct gt_reader *r, uint32_t id, const char *dflt)
{
	const char *s = gt_reader_string(r, id, NULL);

	return s && *s ? s : dflt;
}

static const char *clock_name(uint32_t id)
{
	switch (id) {
	case GT_CLOCK_MONOTONIC:
		return "CLOCK_MONOTONIC";
	case GT_CLOCK_MONOTONIC_RAW:
		return "CLOCK_MONOTONIC_RAW";
	case GT_CLOCK_REALTIME:
		return "CLOCK_REALTIME";
	default:
		return "unknown";
	}
}

/* "2024-05-01T12:00:00.123456789Z", or "unknown" for 0. */
static const char *or_unknown(const char *s)
{
	return s && *s ? s : "unknown";
}

static void print_end(const struct gt_catalog_process *p)
{
	if (!p->ended) {
		printf("no end recorded");
		return;
	}
	switch (p->end_how) {
	case GT_END_EXIT:
		printf("exited with status %d", p->end_code);
		break;
	case GT_END_SIGNAL: {
		const char *name =
		        p->end_code > 0 && p->end_code < NSIG ? sigabbrev_np(p->end_code) : NULL;

		if (name)
			printf("killed by signal %d (SIG%s)", p->end_code, name);
		else
			printf("killed by signal %d", p->end_code);
		break;
	}
	case GT_END_DETACHED:
		printf("detached (ran on untraced)");
		break;
	default:
		printf("ended, status unknown");
		break;
	}
}

static void print_processes(const struct gt_reader *r, const struct gt_catalog *c)
{
	/* the host of each process only when the trace holds several (a merge) */
	bool hosts = gt_catalog_hosts(c) > 1;

	printf("processes:   %" PRIu32 "\n", c->nprocs);
	for (uint32_t i = 0; i < c->nprocs && i < LIST_MAX; i++) {
		const struct gt_catalog_process *p = c->procs[i];

		if (p->have_info)
			printf("  pid %" PRIu32 ": %s, ppid %" PRIu32, p->pid,
			       str_or(r, p->exe_id, "?"), p->ppid);
		else
			printf("  pid %" PRIu32 ": no process record", p->pid);
		if (hosts)
			printf(", host %s", str_or(r, p->host_id, "unknown"));
		if (p->input && p->orig_pid != p->pid)
			printf(", pid %" PRIu32 " in input %" PRIu32, p->orig_pid, p->input);
		if (p->out_pid != p->pid) /* an earlier process had its pid */
			printf(", shown as pid %" PRIu32, p->out_pid);
		if (p->rank >= 0)
			printf(", rank %" PRId32, p->rank);
		printf(", ");
		print_end(p);
		printf("\n");
	}
	if (c->nprocs > LIST_MAX)
		printf("  ... and %" PRIu32 " more\n", c->nprocs - LIST_MAX);
}

/* Each GPU once, by uuid: "GPU n" as every output names it, what it is, its peak memory in
 * use, then its uuid and which processes used it under which CUDA ordinal. */
static void print_gpus(const struct gt_reader *r, const struct gt_catalog *c)
{
	uint32_t listed = 0;

	printf("GPUs:        %" PRIu32 "\n", gt_catalog_gpu_count(c));
	for (uint32_t i = 0; i < c->ngpus; i++) {
		const struct gt_catalog_gpu *g = c->gpus[i];
		uint32_t procs[USERS_MAX], ordinals[USERS_MAX], n;
		char mem[32], peak[32], uuid[48];

		if (g->merged_into)
			continue;
		if (listed++ == LIST_MAX) {
			printf("  ... and %" PRIu32 " more\n", gt_catalog_gpu_count(c) - LIST_MAX);
			break;
		}
		gt_fmt_bytes((double)g->mem_peak, peak, sizeof(peak));
		if (g->have_info)
			printf("  GPU %" PRIu32 ": %s, %" PRIu32
			       " SMs, %s, compute capability %" PRIu32 ".%" PRIu32
			       ", peak memory in use %s\n",
			       g->number, str_or(r, g->name_id, "?"), g->sm_count,
			       gt_fmt_bytes((double)g->global_mem_bytes, mem, sizeof(mem)),
			       g->cc_major, g->cc_minor, peak);
		else
			printf("  GPU %" PRIu32 ": no device record, peak memory in use %s\n",
			       g->number, peak);
		printf("    %s", g->have_uuid ? gt_catalog_uuid(g, uuid) : "no uuid");
		n = gt_catalog_gpu_users(c, g, procs, ordinals, USERS_MAX);
		for (uint32_t k = 0; k < n && k < USERS_MAX; k++)
			printf("%s device %" PRIu32 " of pid %" PRIu32, k ? "," : ":", ordinals[k],
			       c->procs[procs[k]]->pid);
		if (n > USERS_MAX)
			printf(" and %" PRIu32 " more", n - USERS_MAX);
		printf("\n");
	}
}

/* A merged trace's inputs (docs/merge.md): each one's host, format, clock offset and what
 * could not be read of it. */
static void print_inputs(const struct gt_reader *r, const struct gt_catalog *c)
{
	static const char *const aligns[] = {"wall clock", "nccl", "no anchor"};

	if (!c->ninputs)
		return;
	printf("inputs:      %" PRIu32 " (merged)\n", c->ninputs);
	for (uint32_t i = 0; i < c->ninputs && i < LIST_MAX; i++) {
		const struct gt_rec_input *in = &c->inputs[i];
		uint64_t lost = 0; /* its processes' LOSS records */

		printf("  %" PRIu32 " %s: host %s, format %" PRIu32 ", %" PRIu64
		       " records, offset %+" PRId64 " ns (%s)",
		       in->index, str_or(r, in->path_id, "?"),
		       str_or(r, in->hostname_id, "unknown"), in->version, in->records,
		       in->offset_ns, in->align < 3 ? aligns[in->align] : "unknown");
		if (in->parent)
			printf(", in input %" PRIu32, in->parent);
		for (uint32_t k = 0; k < c->nprocs; k++)
			lost += c->procs[k]->input == in->index ? c->procs[k]->lost : 0;
		if (lost)
			printf(", %" PRIu64 " records lost", lost);
		if (in->chunks_skipped || in->records_skipped)
			printf(", %" PRIu64 " chunk%s and %" PRIu64 " records unreadable",
			       in->chunks_skipped, in->chunks_skipped == 1 ? "" : "s",
			       in->records_skipped);
		printf("\n");
	}
	if (c->ninputs > LIST_MAX)
		printf("  ... and %" PRIu32 " more\n", c->ninputs - LIST_MAX);
}

static void print_losses(const struct gt_reader_status *st, const struct gt_catalog *c)
{
	uint64_t total = gt_catalog_lost_total(c); /* records the producers reported lost */

	if (!total && !st->chunks_skipped && !st->bytes_skipped && !st->records_skipped) {
		printf("losses:      none\n");
		return;
	}
	printf("losses:\n");
	for (unsigned s = 0; s <= GT_LOSS_SOURCE_MAX; s++) {
		uint64_t n = gt_catalog_lost(c, s);

		if (n && s == GT_LOSS_FILE)
			printf("  %-16s %" PRIu64 " chunk%s left out, recorded in the trace (merge, "
			       "--reindex)\n",
			       "damaged file", n, n == 1 ? "" : "s");
		else if (n)
			printf("  %-16s %" PRIu64 "\n",
			       s < GT_LOSS_SOURCE_MAX ? gt_loss_source_name(s) : "other", n);
	}
	if (st->chunks_skipped || st->bytes_skipped)
		printf("  %-16s %" PRIu64 " chunk%s, %" PRIu64 " bytes unreadable\n",
		       "damaged file", st->chunks_skipped, st->chunks_skipped == 1 ? "" : "s",
		       st->bytes_skipped);
	if (st->records_skipped)
		printf("  %-16s %" PRIu64 " records of unknown kinds or malformed\n", "skipped",
		       st->records_skipped);
}

static void print_info(const char *path, struct gt_reader *r, const struct gt_catalog *c)
{
	const struct gt_trace_header *h = gt_reader_header(r);
	const struct gt_reader_status *st = gt_reader_status(r);
	uint64_t records = 0;
	struct gt_trace_times tt;
	bool have_times = gt_reader_times(r, &tt) == 0;
	char when[64];

	/* the trace's zero (docs/cli.md, "Time"): the header's start unless a record is older */
	gt_fmt_date(have_times ? tt.zero_realtime_ns : h->info.start_realtime_ns, when,
	            sizeof(when));
	printf("file:        %s\n", path);
	printf("format:      %" PRIu32 "\n", h->version);
	printf("clock:       %s\n", clock_name(h->info.clock_id));
	printf("host:        %s\n", or_unknown(h->info.hostname));
	printf("started:     %s\n", when);
	printf("command:     %s\n", or_unknown(h->info.cmdline));
	printf("versions:    gputrace %s, CUDA %s, CUPTI ", or_unknown(h->info.tool_version),
	       or_unknown(h->info.cuda_version));
	if ((!h->info.cupti_version || !h->info.cupti_version[0]) && c->ncupti) {
		/* what the processes loaded, in the order they said so */
		for (uint32_t i = 0; i < c->ncupti; i++)
			printf("%s%" PRId32, i ? " and " : "", c->cupti[i]);
		if (c->more_cupti)
			printf(" and %" PRIu64 " more", c->more_cupti);
	} else {
		printf("%s", or_unknown(h->info.cupti_version));
	}
	printf(", driver %s\n", or_unknown(h->info.driver_version));

	print_inputs(r, c);
	print_processes(r, c);
	print_gpus(r, c);

	for (unsigned t = 0; t < GT_REC_MAX; t++)
		records += c->records[t];
	printf("records:     %" PRIu64 "\n", records);
	for (unsigned t = 1; t < GT_REC_MAX; t++)
		if (c->records[t])
			printf("  %-12s %" PRIu64 "\n", gt_record_name(t), c->records[t]);

	print_losses(st, c);

	if (c->nnotices) {
		printf("notices:\n");
		for (uint32_t i = 0; i < c->nnotices; i++)
			printf("  pid %" PRIu32 ": %s\n", c->notices[i].hdr.pid,
			       str_or(r, c->notices[i].message_id, "(message lost)"));
		if (c->more_notices)
			printf("  ... and %" PRIu64 " more\n", c->more_notices);
	}
	if (c->nself_cost) {
		printf("recording cost:\n");
		for (uint32_t i = 0; i < c->nself_cost; i++)
			printf("  pid %" PRIu32 ": %s\n", c->self_cost[i].hdr.pid,
			       str_or(r, c->self_cost[i].message_id, "(message lost)"));
		if (c->more_self_cost)
			printf("  ... and %" PRIu64 " more processes\n", c->more_self_cost);
	}

	/* the span (docs/cli.md, "Time"): from the zero to the end of the last record */
	if (!have_times) {
		printf("time span:   unknown (the chunk headers could not be read)\n");
	} else if (tt.first_ns != UINT64_MAX) {
		uint64_t rec = tt.first_ns - tt.zero_ns;

		printf("time span:   %" PRIu64 ".%09" PRIu64 " s (%" PRIu64 " .. %" PRIu64
		       " ns), records from %" PRIu64 ".%09" PRIu64 " s\n",
		       tt.span_ns / 1000000000u, tt.span_ns % 1000000000u, tt.zero_ns, tt.last_ns,
		       rec / 1000000000u, rec % 1000000000u);
	} else {
		printf("time span:   none (no timestamps)\n");
	}
	if (st->recovered)
		printf("recovered:   yes (%" PRIu64 " chunks read, %" PRIu64 " skipped, %" PRIu64
		       " bytes)\n",
		       st->chunks_read, st->chunks_skipped, st->bytes_skipped);
	else
		printf("recovered:   no\n");
	print_index(r);
}

static int info_option(void *ctx, int c, const char *arg)
{
	(void)arg;
	if (c != 'R')
		return GT_EXIT_USAGE;
	*(bool *)ctx = true;
	return GT_EXIT_OK;
}

static const struct option info_longopts[] = {
        {"reindex", no_argument, NULL, 'R'},
        {NULL, 0, NULL, 0},
};

static const struct gt_cli_cmd info_cmd = {
        .name = "info",
        .synopsis = "gputrace info FILE",
        .longopts = info_longopts,
        .option = info_option,
        .usage = usage,
        .min_args = 1,
        .max_args = 1,
        .args_what = "trace file",
        .args_missing = "which trace?",
        .args_extra = "it takes one trace file",
};

int cmd_info(int argc, char **argv)
{
	struct gt_catalog cat;
	struct gt_cli_trace t = {0};
	bool do_reindex = false;
	const char *errmsg = NULL;
	struct gt_cli cli;
	int ret, status;

	status = gt_cli_parse(&cli, &info_cmd, &do_reindex, argc, argv);
	if (status != GT_EXIT_OK || cli.help)
		return status;
	if (do_reindex)
		return reindex(cli.args[0]);
	status = gt_cli_trace_open(&cli, cli.args[0], &t);
	if (status != GT_EXIT_OK)
		goto out_trace;
	ret = gt_catalog_init(&cat, t.r);
	if (ret < 0) {
		gt_cli_error("%s: out of memory", t.path);
		status = GT_EXIT_SOFTWARE;
		goto out_trace;
	}
	ret = gt_catalog_read(&cat, t.r, &errmsg);
	if (ret < 0) {
		gt_cli_error("%s: %s", t.path, ret == -ENOMEM ? "out of memory" : strerror(-ret));
		status = GT_EXIT_BAD_TRACE;
		goto out;
	}
	print_info(t.path, t.r, &cat);
	status = fflush(stdout) == 0 ? GT_EXIT_OK : GT_EXIT_IO;
	if (status == GT_EXIT_OK)
		status = gt_cli_trace_damage(&cli, &t);
out:
	gt_catalog_fini(&cat);
out_trace:
	gt_cli_trace_close(&t);
	return status;
}
