/* gputrace merge: several traces (the per-rank files of one job, from one host or many) into
 * one, on one timeline, through the library's streaming merge (src/ops/merge.c); reports each
 * input's clock offset. Runs in the CLI process. */
#include <errno.h>
#include <limits.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "common.h"
#include "merge.h"
#include "options.h"
#include "output.h"
#include "status-line.h"

/* Files a merge keeps open besides its inputs: standard streams, the output, slack. */
#define FDS_BESIDES_INPUTS 16u

static void usage(FILE *out)
{
	fputs("Usage: gputrace merge -o OUT [options] IN...\n"
	      "\n"
	      "Merge traces - the per-rank files of one job, from one host or many - into one\n"
	      "trace on one timeline. Each input's timestamps move by its clock offset: from\n"
	      "the wall-clock anchors in the headers, or with --align nccl from the ends of\n"
	      "NCCL collectives, which finish together on every rank. Processes keep their\n"
	      "pid, host and rank; a pid that another input already used gets a new one.\n"
	      "\n"
	      "Options:\n"
	      "  -o, --output OUT  the merged trace (required); an existing file is replaced\n"
	      "      --align HOW   wall (the default): the headers' wall-clock anchors;\n"
	      "                    nccl: the anchors corrected by the NCCL collectives\n"
	      "  -j, --threads N   threads to use, 1 to 64 (default: the CPUs online, at most\n"
	      "                    8): 1 does everything in one; 2 adds a writer; more read\n"
	      "                    the inputs ahead and compress; the output is the same\n"
	      "  -q, --quiet       no report of the inputs and their offsets\n"
	      "  -h, --help        show this help\n"
	      "\n"
	      "Exit status: 0 ok (damaged inputs are merged as far as they read, with a\n"
	      "warning), 64 usage error (an input given twice, the output among the inputs),\n"
	      "65 an input is unreadable, or --align nccl found no collective, 66 no such\n"
	      "input, 71 too many inputs for the open-file limit, 73 the output cannot be\n"
	      "created, 74 write error.\n",
	      out);
}

/* The merged header's command line: this command as typed. malloc'd; NULL without memory. */
static char *command_line(int argc, char **argv)
{
	size_t len = sizeof("gputrace");
	char *s, *p;

	for (int i = 0; i < argc; i++)
		len += strlen(argv[i]) + 1;
	s = malloc(len);
	if (!s)
		return NULL;
	p = stpcpy(s, "gputrace");
	for (int i = 0; i < argc; i++) {
		*p++ = ' ';
		p = stpcpy(p, argv[i]);
	}
	return s;
}

/* The kernel's own ceiling on open files (fs.nr_open), for a hard limit of "unlimited",
 * which the soft limit cannot be set to; 0 if unknown. */
static rlim_t nr_open(void)
{
	FILE *f = fopen("/proc/sys/fs/nr_open", "r");
	unsigned long long v = 0;

	if (!f)
		return 0;
	if (fscanf(f, "%llu", &v) != 1)
		v = 0;
	fclose(f);
	return (rlim_t)v;
}

/* Raise the soft limit on open files to the hard one: a merge holds every input open.
 * Returns the limit now in force; *hard the hard one. */
static rlim_t raise_nofile(rlim_t *hard)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0) {
		*hard = 0;
		return 0;
	}
	*hard = rl.rlim_max;
	if (rl.rlim_cur < rl.rlim_max) {
		struct rlimit want = rl;

		if (want.rlim_max == RLIM_INFINITY && nr_open())
			want.rlim_cur = nr_open();
		else
			want.rlim_cur = want.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &want) == 0)
			rl = want;
	}
	return rl.rlim_cur;
}

static void too_many_files(size_t n, rlim_t limit, rlim_t hard)
{
	gt_cli_error("merge: %zu inputs need %zu open files at once, but this process may open "
	             "%llu (ulimit -n; the hard limit is %llu): raise the hard limit, or merge in "
	             "groups (one merge per host, say) and merge the results",
	             n, n + FDS_BESIDES_INPUTS, (unsigned long long)limit,
	             (unsigned long long)hard);
}

/* "+1234 ns", signed. */
static const char *fmt_ns(int64_t v, char *buf, size_t bytes)
{
	snprintf(buf, bytes, "%+" PRId64 " ns", v);
	return buf;
}

static void report_input(const struct gt_merge *m, size_t i)
{
	const struct gt_merge_input *in = gt_merge_input(m, i);
	size_t ref = gt_merge_nccl_reference(m);
	char a[40], b[40], c[40], d[40];

	fprintf(stderr, "  %zu %s: host %s, %" PRIu32 " process%s", i + 1, in->path,
	        in->hostname[0] ? in->hostname : "unknown", in->processes,
	        in->processes == 1 ? "" : "es");
	if (in->renamed)
		fprintf(stderr, " (%" PRIu32 " with a new pid)", in->renamed);
	if (in->align == GT_ALIGN_NONE) {
		fprintf(stderr, "; no wall-clock anchor: times kept as recorded\n");
		return;
	}
	fprintf(stderr, "; offset %s", fmt_ns(in->offset_ns, a, sizeof(a)));
	if (i == ref) {
		fprintf(stderr, " (wall clock; the NCCL reference, %" PRIu64 " collectives)\n",
		        in->collectives);
		return;
	}
	if (in->align == GT_ALIGN_NCCL) {
		fprintf(stderr,
		        " = wall clock %s, NCCL correction %s from %" PRIu64
		        " collectives (spread %s .. %s)",
		        fmt_ns(in->wall_offset_ns, b, sizeof(b)),
		        fmt_ns(in->offset_ns - in->wall_offset_ns, c, sizeof(c)), in->collectives,
		        fmt_ns(in->spread_lo_ns, d, sizeof(d)),
		        fmt_ns(in->spread_hi_ns, a, sizeof(a)));
		if (in->unpaired)
			fprintf(stderr, ", %" PRIu64 " unpaired", in->unpaired);
		fputc('\n', stderr);
		return;
	}
	fprintf(stderr, " (wall clock%s)\n",
	        ref == SIZE_MAX ? ""
	        : in->unpaired  ? "; none of its NCCL collectives pairs with the reference's"
	                        : "; no NCCL collective");
}

/* The report: what was merged into output, then each input and its offset. */
static void report_merged(const struct gt_merge *m, size_t n, const char *output)
{
	const struct gt_trace_counts *cnt = gt_merge_counts(m);
	size_t renamed = 0, procs = 0;
	uint64_t total = 0;
	char count[32];

	for (size_t i = 0; i < n; i++) {
		procs += gt_merge_input(m, i)->processes;
		renamed += gt_merge_input(m, i)->renamed;
	}
	for (unsigned t = 1; t < GT_REC_MAX; t++)
		total += cnt->records[t];
	fprintf(stderr, "gputrace: merged %zu trace%s into %s (%s records, ", n, n == 1 ? "" : "s",
	        output, gt_fmt_count(total, count, sizeof(count)));
	fprintf(stderr, "%s kernels, %zu process%s",
	        gt_fmt_count(cnt->records[GT_REC_KERNEL], count, sizeof(count)), procs,
	        procs == 1 ? "" : "es");
	if (renamed)
		fprintf(stderr, ", %zu with a new pid", renamed);
	fputs("):\n", stderr);
	for (size_t i = 0; i < n; i++)
		report_input(m, i);
}

/* An input's damage, in the words every command uses (cli/common.c); the rest is merged and
 * the merged trace records the loss (damaged_file). Returns GT_EXIT_DAMAGED or OK. */
static int warn_damage(const struct gt_merge_input *in)
{
	if (!in->chunks_skipped && !in->records_skipped)
		return GT_EXIT_OK;
	gt_cli_warn("merge: %s is damaged: %" PRIu64 " chunk%s (%" PRIu64 " bytes) and %" PRIu64
	            " malformed record%s skipped",
	            in->path, in->chunks_skipped, in->chunks_skipped == 1 ? "" : "s",
	            in->bytes_skipped, in->records_skipped, in->records_skipped == 1 ? "" : "s");
	return GT_EXIT_DAMAGED;
}

/* The exit status for what gt_merge_open or gt_merge_align returned. */
static int open_failed(int ret, const struct gt_merge_error *e, char **paths, size_t n,
                       rlim_t limit, rlim_t hard)
{
	const char *path = e->input < n ? paths[e->input] : NULL;

	if (ret == -EEXIST) {
		gt_cli_error("merge: %s (input %zu) is %s (input %zu) again: %s; give each trace "
		             "once",
		             path, e->input + 1, paths[e->other], e->other + 1, e->msg);
		return GT_EXIT_USAGE;
	}
	if (ret == -EMFILE || ret == -ENFILE) {
		too_many_files(n, limit, hard);
		return GT_EXIT_OS_LIMIT;
	}
	if (ret == -ENODATA) {
		gt_cli_error(
		        "merge: --align nccl: no input holds an NCCL collective kernel (a name "
		        "starting with nccl); without --align nccl the wall clocks align them");
		return GT_EXIT_BAD_TRACE;
	}
	if (path) {
		gt_cli_error("merge: %s: %s", path, e->msg ? e->msg : strerror(-ret));
		return ret == -ENOENT || ret == -EACCES ? GT_EXIT_NO_INPUT : GT_EXIT_BAD_TRACE;
	}
	gt_cli_error("merge: %s", e->msg ? e->msg : strerror(-ret));
	return ret == -ENOMEM ? GT_EXIT_SOFTWARE : GT_EXIT_BAD_TRACE;
}

struct merge_ctx {
	struct gt_merge_options opts;
	uint64_t threads;
};

static int merge_option(void *ctx, int c, const char *arg)
{
	static const char *const aligns[] = {"wall", "nccl", NULL};
	struct merge_ctx *x = ctx;
	int r;

	switch (c) {
	case 'a':
		r = gt_opt_choice(arg, aligns);
		if (r < 0) {
			gt_cli_error("merge: --align: '%s' is not valid; use wall or nccl", arg);
			return GT_EXIT_USAGE;
		}
		x->opts.align = r == 1 ? GT_MERGE_ALIGN_NCCL : GT_MERGE_ALIGN_WALL_CLOCK;
		return GT_EXIT_OK;
	case 'j':
		if (gt_opt_uint(arg, 1, 64, &x->threads) < 0) {
			gt_cli_error("merge: --threads: '%s' is not a number from 1 to 64", arg);
			return GT_EXIT_USAGE;
		}
		return GT_EXIT_OK;
	default:
		return GT_EXIT_USAGE;
	}
}

static const struct option merge_longopts[] = {
        {"align", required_argument, NULL, 'a'},
        {"threads", required_argument, NULL, 'j'},
        {NULL, 0, NULL, 0},
};

static const struct gt_cli_cmd merge_cmd = {
        .name = "merge",
        .synopsis = "gputrace merge -o OUT IN...",
        .common = GT_CLI_OUTPUT | GT_CLI_QUIET,
        .shortopts = "j:",
        .longopts = merge_longopts,
        .option = merge_option,
        .usage = usage,
        .min_args = 0, /* checked below, after -o */
        .max_args = -1,
        .args_what = "input",
};

/* The exit status for what gt_merge_write returned. */
static int write_failed(int ret, const struct gt_merge_error *e, char **paths, size_t n,
                        const char *output)
{
	if (e->input < n) {
		gt_cli_error("merge: reading %s: %s", paths[e->input], e->msg);
		return GT_EXIT_BAD_TRACE;
	}
	gt_cli_error("merge: %s: %s", output, e->msg ? e->msg : strerror(-ret));
	if (ret == -ENOMEM)
		return GT_EXIT_SOFTWARE;
	return ret == -ENOENT || ret == -EACCES || ret == -ENOTDIR || ret == -EROFS ||
	                       ret == -EISDIR
	               ? GT_EXIT_CANT_CREATE
	               : GT_EXIT_IO;
}

int cmd_merge(int argc, char **argv)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	struct merge_ctx x = {.threads = cpus < 1 ? 1 : cpus > 8 ? 8 : (uint64_t)cpus};
	struct gt_merge_error e = {0};
	struct gt_merge *m = NULL;
	struct gt_output *o = NULL;
	char tmp[PATH_MAX + 32], *cmdline = NULL;
	const char *output;
	rlim_t limit, hard;
	struct gt_cli cli;
	size_t n;
	int ret, status, damage = GT_EXIT_OK;

	status = gt_cli_parse(&cli, &merge_cmd, &x, argc, argv);
	if (status != GT_EXIT_OK || cli.help)
		return status;
	if (!cli.output || cli.nargs == 0) {
		gt_cli_error("merge: %s; usage: gputrace merge -o OUT IN...",
		             !cli.output ? "where to? add -o OUT" : "no input");
		return GT_EXIT_USAGE;
	}
	n = (size_t)cli.nargs;
	/* the one output path's checks (not an input by any name, not a device, FIFO or
	 * folder; a symlink written through); the trace writer renames its own temporary
	 * (PATH.tmp-PID) into place, and a signal removes it */
	status = gt_cli_output_open(&cli, cli.output, GT_OUTPUT_NO_STDOUT, &o);
	if (status != GT_EXIT_OK)
		return status;
	output = gt_output_target(o);
	snprintf(tmp, sizeof(tmp), "%s.tmp-%ld", output, (long)getpid());
	if (gt_output_adopt(o, tmp) < 0) {
		gt_cli_error("merge: out of memory");
		status = GT_EXIT_SOFTWARE;
		goto out;
	}
	gt_cli_output_signals();
	limit = raise_nofile(&hard);
	if (limit != RLIM_INFINITY && limit && n + FDS_BESIDES_INPUTS > limit) {
		too_many_files(n, limit, hard);
		status = GT_EXIT_OS_LIMIT;
		goto out;
	}
	cmdline = command_line(argc, argv);
	x.opts.cmdline = cmdline;
	x.opts.slack_ns = GT_MERGE_SLACK_DEFAULT_NS;
	x.opts.threads = (unsigned)x.threads;
	ret = gt_merge_open((const char *const *)cli.args, n, &x.opts, &m, &e);
	if (ret == 0)
		ret = gt_merge_align(m, &e);
	if (ret < 0) {
		status = open_failed(ret, &e, cli.args, n, limit, hard);
		goto out;
	}
	ret = gt_merge_write(m, output, &e);
	if (ret < 0) {
		status = write_failed(ret, &e, cli.args, n, output);
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		if (warn_damage(gt_merge_input(m, i)) != GT_EXIT_OK)
			damage = GT_EXIT_DAMAGED;
	if (!cli.quiet)
		report_merged(m, n, output);
	status = damage;
out:
	gt_merge_free(m);
	gt_output_free(o);
	free(cmdline);
	return status;
}
