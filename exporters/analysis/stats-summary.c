/* The short summary `gputrace run` prints when the traced program ends: where the GPU time
 * went, copies, API calls, peak memory, losses, and how each process ended - or, when no
 * CUDA activity was recorded at all, why that may be. Runs in the CLI. */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "demangle.h"
#include "stats-int.h"
#include "text.h"

#define TOP_KERNELS 5u
#define TOP_API     3u
#define MAX_PROCS   16u

static const char *signal_name(int sig)
{
	static const struct {
		int sig;
		const char *name;
	} names[] = {
	        {SIGHUP, "SIGHUP"},   {SIGINT, "SIGINT"},   {SIGQUIT, "SIGQUIT"},
	        {SIGILL, "SIGILL"},   {SIGTRAP, "SIGTRAP"}, {SIGABRT, "SIGABRT"},
	        {SIGBUS, "SIGBUS"},   {SIGFPE, "SIGFPE"},   {SIGKILL, "SIGKILL"},
	        {SIGUSR1, "SIGUSR1"}, {SIGSEGV, "SIGSEGV"}, {SIGUSR2, "SIGUSR2"},
	        {SIGPIPE, "SIGPIPE"}, {SIGALRM, "SIGALRM"}, {SIGTERM, "SIGTERM"},
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].sig == sig)
			return names[i].name;
	return NULL;
}

static void print_kernels(FILE *out, const struct gt_stats *st)
{
	struct gt_stat_entry **v;
	uint64_t all = 0, launches = 0;
	char total[32], count[32], buf[GT_DEMANGLE_BUF_BYTES];

	if (st->kernels.n == 0) {
		fputs("GPU kernels: none\n", out);
		return;
	}
	for (size_t i = 0; i < st->kernels.n; i++) {
		all += st->kernels.entries[i]->time.total;
		launches += st->kernels.entries[i]->time.count;
	}
	gt_fmt_count(launches, count, sizeof(count));
	gt_fmt_ns((double)all, total, sizeof(total));
	fprintf(out, "GPU kernels: %s launch%s of %zu kernel%s, %s of GPU time\n", count,
	        launches == 1 ? "" : "es", st->kernels.n, st->kernels.n == 1 ? "" : "s", total);
	v = gt_stats_table_sorted(&st->kernels, 0);
	if (!v)
		return; /* the headline is still right; the caller reports -ENOMEM via ferror */
	for (size_t i = 0; i < st->kernels.n && i < TOP_KERNELS; i++) {
		const struct gt_series *s = &v[i]->time;

		gt_fmt_ns((double)s->total, total, sizeof(total));
		gt_fmt_count(s->count, count, sizeof(count));
		fprintf(out, "  %6.2f%%  %11s  %9s x  %s\n",
		        all ? 100.0 * (double)s->total / (double)all : 0.0, total, count,
		        gt_demangle(v[i]->key, buf, sizeof(buf)));
	}
	if (st->kernels.n > TOP_KERNELS)
		fprintf(out, "  ... and %zu more\n", st->kernels.n - TOP_KERNELS);
	free(v);
}

static void print_xfer_line(FILE *out, const char *what, const struct gt_xfer_stats *x)
{
	char count[32], bytes[32], total[32], rate[32];

	gt_fmt_count(x->time.count, count, sizeof(count));
	gt_fmt_bytes((double)x->bytes_total, bytes, sizeof(bytes));
	gt_fmt_ns((double)x->time.total, total, sizeof(total));
	fprintf(out, "  %-6s %9s x  %11s in %11s", what, count, bytes, total);
	if (x->time.total)
		fprintf(out, "  (%s)",
		        gt_fmt_rate((double)x->bytes_total / (double)x->time.total, rate,
		                    sizeof(rate)));
	fputc('\n', out);
}

static void print_copies(FILE *out, const struct gt_stats *st)
{
	struct gt_xfer_stats all = {0};
	bool any = false;

	for (unsigned k = 0; k < GT_MEMCPY_MAX; k++)
		if (st->memcpy[k].time.count) {
			if (!any)
				fputs("Copies:\n", out);
			any = true;
			print_xfer_line(out, gt_memcpy_kind_name(k), &st->memcpy[k]);
		}
	if (!any)
		fputs("Copies: none\n", out);
	for (unsigned k = 0; k < GT_MEM_MAX; k++) {
		all.time.count += st->memset[k].time.count;
		all.time.total += st->memset[k].time.total;
		all.bytes_total += st->memset[k].bytes_total;
	}
	if (all.time.count) {
		fputs("Memsets:\n", out);
		print_xfer_line(out, "all", &all);
	}
}

static void print_api(FILE *out, const struct gt_stats *st)
{
	struct gt_stat_entry **v;
	uint64_t all = 0, calls = 0;
	char total[32], count[32];

	if (st->api.n == 0) {
		fputs("API calls: none recorded\n", out);
		return;
	}
	for (size_t i = 0; i < st->api.n; i++) {
		all += st->api.entries[i]->time.total;
		calls += st->api.entries[i]->time.count;
	}
	gt_fmt_count(calls, count, sizeof(count));
	gt_fmt_ns((double)all, total, sizeof(total));
	fprintf(out, "API calls: %s call%s, %s on CPU threads\n", count, calls == 1 ? "" : "s",
	        total);
	v = gt_stats_table_sorted(&st->api, 0);
	for (size_t i = 0; v && i < st->api.n && i < TOP_API; i++) {
		gt_fmt_ns((double)v[i]->time.total, total, sizeof(total));
		gt_fmt_count(v[i]->time.count, count, sizeof(count));
		fprintf(out, "  %11s  %9s x  %s\n", total, count, v[i]->key);
	}
	free(v);
	if (st->api_failed) {
		gt_fmt_count(st->api_failed, count, sizeof(count));
		fprintf(out, "  %s call%s failed; `gputrace stats --report errors` lists them\n",
		        count, st->api_failed == 1 ? "" : "s");
	}
}

static void print_memory(FILE *out, struct gt_stats *st)
{
	uint64_t leaks = 0, leak_bytes = 0;
	char peak[32], name[256];

	if (st->nmem == 0) {
		fputs("Peak memory in use: no allocations recorded\n", out);
		return;
	}
	gt_stats_mem_rows(st);
	fputs("Peak memory in use:\n", out);
	for (size_t i = 0; i < st->nmem; i++) {
		const struct gt_mem_device *m = &st->mem[i];
		const struct gt_catalog_gpu *g = gt_stats_gpu(st, m->gpu);
		const char *dname = g ? gt_stats_string(st, g->name_id, name, sizeof(name)) : NULL;

		gt_fmt_bytes((double)m->peak, peak, sizeof(peak));
		if (!g)
			fprintf(out, "  host (pinned and pageable): %s\n", peak);
		else if (dname && *dname)
			fprintf(out, "  GPU %" PRIu32 " (%s): %s\n", g->number, dname, peak);
		else
			fprintf(out, "  GPU %" PRIu32 ": %s\n", g->number, peak);
	}
	for (size_t j = 0; j < st->caplive; j++)
		if (st->live[j].address) {
			leaks++;
			leak_bytes += st->live[j].bytes;
		}
	if (leaks) {
		gt_fmt_bytes((double)leak_bytes, peak, sizeof(peak));
		fprintf(out, "  %" PRIu64 " allocation%s (%s) never freed\n", leaks,
		        leaks == 1 ? "" : "s", peak);
	}
}

const char *gt_stats_damage_detail(const struct gt_catalog *c, char *buf, size_t size)
{
	const struct gt_catalog_damage *rec = &c->damage_recorded, *read = &c->damage_read;
	struct gt_catalog_damage d;
	size_t n;

	gt_catalog_damage(c, &d);
	gt_catalog_damage_text(&d, buf, size);
	n = strlen(buf);
	if (gt_catalog_damaged(rec) && !gt_catalog_damaged(read))
		snprintf(buf + n, size - n, " (recorded in the trace by merge or --reindex)");
	else if (gt_catalog_damaged(rec))
		snprintf(buf + n, size - n,
		         " (%" PRIu64
		         " chunk%s recorded in the trace by merge or --reindex, %" PRIu64
		         " skipped reading it)",
		         rec->chunks, rec->chunks == 1 ? "" : "s", read->chunks);
	return buf;
}

static void print_losses(FILE *out, const struct gt_stats *st)
{
	uint64_t by_src[GT_LOSS_SOURCE_MAX + 1] = {0}, total = 0;
	struct gt_catalog_damage d;
	char count[32], detail[256];
	bool first = true;

	/* records; a damaged file's chunks are said apart, below */
	for (unsigned s = 0; s <= GT_LOSS_SOURCE_MAX; s++)
		by_src[s] = s == GT_LOSS_FILE ? 0 : gt_catalog_lost(&st->cat, s);
	for (unsigned s = 0; s <= GT_LOSS_SOURCE_MAX; s++)
		total += by_src[s];
	if (total == 0) {
		fputs("Lost records: none\n", out);
	} else {
		gt_fmt_count(total, count, sizeof(count));
		fprintf(out, "Lost records: %s (", count);
		for (unsigned s = 0; s <= GT_LOSS_SOURCE_MAX; s++) {
			if (!by_src[s])
				continue;
			gt_fmt_count(by_src[s], count, sizeof(count));
			fprintf(out, "%s%s %s", first ? "" : ", ",
			        s < GT_LOSS_SOURCE_MAX ? gt_loss_source_name(s) : "unknown", count);
			first = false;
		}
		fputs("); the trace is incomplete\n", out);
	}
	gt_catalog_damage(&st->cat, &d);
	if (gt_catalog_damaged(&d))
		fprintf(out, "Damaged file: %s; the trace is incomplete\n",
		        gt_stats_damage_detail(&st->cat, detail, sizeof(detail)));
	if (st->status.recovered)
		fprintf(out,
		        "Trace file: no footer (the writer stopped early); %" PRIu64
		        " chunks read\n",
		        st->status.chunks_read);
}

static void print_processes(FILE *out, const struct gt_stats *st)
{
	const struct gt_catalog *c = &st->cat;
	char buf[64];

	if (c->nprocs == 0)
		return;
	fprintf(out, "Processes: %" PRIu32 "\n", c->nprocs);
	for (uint32_t i = 0; i < c->nprocs && i < MAX_PROCS; i++) {
		const struct gt_catalog_process *p = c->procs[i];
		const char *what = gt_stats_string(st, p->cmdline_id, buf, sizeof(buf));
		const char *sig;

		if (!*what)
			what = gt_stats_string(st, p->exe_id, buf, sizeof(buf));
		fprintf(out, "  pid %" PRIu32, p->pid);
		if (p->rank >= 0)
			fprintf(out, " (rank %" PRId32 ")", p->rank);
		fprintf(out, "%s%s: ", *what ? " " : "", what);
		if (!p->ended) {
			fputs("its end was not recorded\n", out);
			continue;
		}
		switch (p->end_how) {
		case GT_END_EXIT:
			fprintf(out, "exited with status %" PRId32 "\n", p->end_code);
			break;
		case GT_END_SIGNAL:
			sig = signal_name(p->end_code);
			fprintf(out, "killed by signal %" PRId32 "%s%s%s\n", p->end_code,
			        sig ? " (" : "", sig ? sig : "", sig ? ")" : "");
			break;
		case GT_END_DETACHED:
			fputs("tracing detached early; the process ran on untraced\n", out);
			break;
		default:
			fputs("ended, exit status unknown\n", out);
			break;
		}
	}
	if (c->nprocs > MAX_PROCS)
		fprintf(out, "  ... and %" PRIu32 " more\n", c->nprocs - MAX_PROCS);
}

static void print_no_activity(FILE *out, const struct gt_stats *st)
{
	char buf[64];

	fputs("gputrace: no CUDA activity was seen.\n", out);
	if (st->cat.records[GT_REC_NVTX])
		fprintf(out,
		        "(%" PRIu64 " NVTX record%s: the program ran under the tracer, but none of "
		        "its CUDA work was recorded.)\n",
		        st->cat.records[GT_REC_NVTX], st->cat.records[GT_REC_NVTX] == 1 ? "" : "s");
	fputs("Likely reasons:\n"
	      "  - the program did not use CUDA, or ended before initializing it;\n"
	      "  - no NVIDIA GPU or driver is visible to it (a container needs the GPU passed "
	      "in);\n"
	      "  - the CUDA driver did not load the injection library (CUDA_INJECTION64_PATH\n"
	      "    was overridden, or the program links an old static CUDA runtime);\n"
	      "  - another profiler (Nsight Systems, the PyTorch profiler, ...) held CUPTI;\n"
	      "  - a capture range was requested and never started.\n",
	      out);
	for (uint32_t i = 0; i < st->cat.nnotices; i++)
		fprintf(out, "The traced process said: %s\n",
		        gt_stats_string(st, st->cat.notices[i].message_id, buf, sizeof(buf)));
	fputs("Try `gputrace doctor` to check this machine.\n", out);
}

/* Warnings and errors the traced processes or the session recorded (a detach, a missed
 * final flush); informational notices stay in the trace (the collector keeps no others). */
static void print_notices(FILE *out, const struct gt_stats *st)
{
	char buf[256];
	bool first = true;

	for (uint32_t i = 0; i < st->cat.nnotices; i++) {
		const struct gt_rec_notice *n = &st->cat.notices[i];

		if (first)
			fputs("Notices:\n", out);
		first = false;
		fprintf(out, "  pid %u: %s\n", n->hdr.pid,
		        gt_stats_string(st, n->message_id, buf, sizeof(buf)));
	}
}

/* Anything CUDA itself did; process, device and NVTX records alone do not count. */
static bool saw_cuda(const struct gt_stats *st)
{
	static const unsigned kinds[] = {
	        GT_REC_KERNEL,      GT_REC_MEMCPY, GT_REC_MEMSET, GT_REC_MEMORY,
	        GT_REC_MEMORY_POOL, GT_REC_API,    GT_REC_SYNC,   GT_REC_GRAPH,
	};

	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (st->cat.records[kinds[i]])
			return true;
	return false;
}

int gt_stats_summary(struct gt_reader *r, FILE *out, const char **errmsg)
{
	const char *dummy;
	struct gt_stats st;
	int ret;

	if (!errmsg)
		errmsg = &dummy;
	ret = gt_stats_collect(&st, r, errmsg);
	if (ret < 0)
		goto out;
	if (!saw_cuda(&st)) {
		print_no_activity(out, &st);
	} else {
		print_kernels(out, &st);
		print_copies(out, &st);
		print_api(out, &st);
		print_memory(out, &st);
		gt_stats_summary_gpu_metrics(out, &st);
		print_notices(out, &st);
	}
	print_losses(out, &st);
	print_processes(out, &st);
	if (fflush(out) != 0 || ferror(out)) {
		*errmsg = "could not write the summary";
		ret = -EIO;
	}
out:
	gt_stats_fini(&st);
	return ret;
}
