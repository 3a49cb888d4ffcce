/* gputrace export: convert a .gtrace to another format through the exporter
 * table (exporters/formats/registry.c), with a progress bar on a terminal. Runs in the
 * CLI process. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "clock.h"
#include "common.h"
#include "exporter.h"
#include "gputrace/trace.h"
#include "options.h"
#include "output.h"
#include "status-line.h"
#include "window-opts.h"

#define EXPORT_EXTENSION         ".gtrace"
#define EXPORT_PROGRESS_AFTER_NS 300000000ull /* short exports never show a bar */

struct progress {
	struct gt_status_line line;
	uint64_t start_ns;
	uint64_t origin_ns; /* the trace's zero (docs/cli.md, "Time"), for the files' time ranges */
	bool quiet;
};

static void on_progress(void *ctx, uint64_t done, uint64_t total)
{
	struct progress *p = ctx;

	if (gt_now_ns() - p->start_ns >= EXPORT_PROGRESS_AFTER_NS)
		gt_status_progress(&p->line, "exporting", done, total);
}

/* A piece of a perfetto export cut by --max-size: its name and what it holds. */
static void on_file(void *ctx, const char *path, uint64_t from_ns, uint64_t to_ns)
{
	struct progress *p = ctx;

	if (p->quiet)
		return;
	gt_status_clear(&p->line);
	fprintf(stderr, "gputrace:   %s: %.3f s to %.3f s\n", path,
	        from_ns > p->origin_ns ? (double)(from_ns - p->origin_ns) / 1e9 : 0.0,
	        to_ns > p->origin_ns ? (double)(to_ns - p->origin_ns) / 1e9 : 0.0);
}

static void usage(FILE *out)
{
	const struct gt_exporter_ops *const *e;

	fputs("Usage: gputrace export FILE -f FORMAT [options]\n"
	      "       gputrace export FILE... -f parquet -o DIR [options]\n"
	      "\n"
	      "Convert a trace to another format; several traces of a job (one per rank) to\n"
	      "one folder of Parquet partitions, DIR/rank=N/TABLE.parquet (DIR/host=H/pid=P/\n"
	      "for traces without a rank). Formats:\n",
	      out);
	for (e = gt_exporter_list(); *e; e++)
		fprintf(out, "  %-10s %s (%s)\n", (*e)->name, (*e)->help, (*e)->extension);
	fputs("\n"
	      "Options:\n"
	      "  -f, --format FORMAT  output format (required)\n"
	      "  -o, --output OUT     output file (default: FILE with the format's "
	      "extension;\n"
	      "                       - for standard output); an existing file is "
	      "replaced\n"
	      "                       (parquet: a folder, replaced only when it holds\n"
	      "                       nothing but an earlier export's .parquet files)\n"
	      "      --max-size SIZE  split the output into numbered files of at most SIZE, "
	      "e.g.\n"
	      "                       500M (chrome: in file order; perfetto: by time, each "
	      "file\n"
	      "                       a whole trace of its own)\n"
	      "      --split ranks    chrome: one file per rank, OUT/rank-N.pt.trace.json, "
	      "as\n"
	      "                       Holistic Trace Analysis and TensorBoard read a job\n"
	      "                       (default OUT: FILE without .gtrace, plus -ranks)\n"
	      "      --step NAME      chrome, perfetto: the NVTX range that marks a training "
	      "step,\n"
	      "                       written as ProfilerStep#N (default: detect "
	      "ProfilerStep#N,\n"
	      "                       step, train_step, iteration)\n"
	      "      --no-steps       chrome, perfetto: write NVTX ranges under their own "
	      "names\n"
	      "      --mangled        keep kernel names as the compiler mangled them\n"
	      "  -q, --quiet          no progress bar, no closing line\n"
	      "  -h, --help           show this help\n"
	      "\n" GT_CLI_WINDOW_HELP
	      "\n"
	      "Exit status: 0 ok, 64 bad option (the output the trace itself, -o - where a\n"
	      "format writes files, a window that selects nothing), 65 unreadable or damaged\n"
	      "trace (a damaged one's export is written first), 66 no such file, 70 out of\n"
	      "memory, 73 output cannot be created, 74 write error.\n",
	      out);
}

/* The options only chrome takes, and what goes with what. Reports and returns -EINVAL. */
static int check_chrome_options(const struct gt_exporter_ops *exp,
                                const struct gt_export_options *eo, const char *output)
{
	bool chrome = strcmp(exp->name, "chrome") == 0;
	bool timeline = chrome || strcmp(exp->name, "perfetto") == 0;

	if (!chrome && eo->split) {
		gt_cli_error("export: --split is for -f chrome only");
		return -EINVAL;
	}
	if (!timeline && (eo->step_name || eo->no_steps)) {
		gt_cli_error("export: %s is for -f chrome and -f perfetto only",
		             eo->step_name ? "--step" : "--no-steps");
		return -EINVAL;
	}
	if (eo->step_name && eo->no_steps) {
		gt_cli_error("export: --step and --no-steps contradict each other; choose one");
		return -EINVAL;
	}
	if (eo->split && eo->max_bytes) {
		gt_cli_error("export: --split ranks and --max-size do not go together: HTA would "
		             "read the pieces of one rank as several files of that rank");
		return -EINVAL;
	}
	if (eo->split && output && strcmp(output, "-") == 0) {
		gt_cli_error("export: --split ranks writes a directory; -o - (standard output) "
		             "cannot hold it");
		return -EINVAL;
	}
	return 0;
}

/* The closing lines of --split ranks. */
static void print_split(const char *dir, const struct gt_export_result *res)
{
	char count[32], size[32];

	fprintf(stderr, "gputrace: wrote %s/ (%u rank%s: rank-N.pt.trace.json, %s events, %s)\n",
	        dir, res->ranks, res->ranks == 1 ? "" : "s",
	        gt_fmt_count(res->events, count, sizeof(count)),
	        gt_fmt_bytes(res->bytes, size, sizeof(size)));
	if (res->left_out)
		fprintf(stderr,
		        "gputrace: left out %u process%s without a rank (%s records, e.g. the "
		        "launcher): export without --split to see %s\n",
		        res->left_out, res->left_out == 1 ? "" : "es",
		        gt_fmt_count(res->left_out_records, count, sizeof(count)),
		        res->left_out == 1 ? "it" : "them");
}

/* The closing line: what was written; the files of an output of several (csv's tables)
 * each on a line of its own, which pieces cut by size already have (on_file). */
static void print_wrote(const char *out, const struct gt_output *o, bool pieces,
                        const struct gt_export_result *res, const struct gt_cli_trace *t,
                        const struct gt_window_stats *wst)
{
	char count[32], size[32];
	unsigned n = gt_output_nfiles(o);

	if (n > 1 && !pieces)
		fprintf(stderr, "gputrace: wrote %u files (%s events, %s", n,
		        gt_fmt_count(res->events, count, sizeof(count)),
		        gt_fmt_bytes(res->bytes, size, sizeof(size)));
	else
		fprintf(stderr, "gputrace: wrote %s (%s events, %s", out,
		        gt_fmt_count(res->events, count, sizeof(count)),
		        gt_fmt_bytes(res->bytes, size, sizeof(size)));
	if (n > 1 && pieces)
		fprintf(stderr, " in %u files", n);
	if (gt_window_any(&t->win.w))
		fprintf(stderr, "; read %s of %s chunks",
		        gt_fmt_count(wst->chunks_read, size, sizeof(size)),
		        gt_fmt_count(wst->chunks_read + wst->chunks_passed, count, sizeof(count)));
	fputs(n > 1 && !pieces ? "):\n" : ")\n", stderr);
	for (unsigned i = 0; n > 1 && !pieces && i < n; i++)
		fprintf(stderr, "gputrace:   %s\n", gt_output_file(o, i));
}

struct export_ctx {
	struct gt_export_options eo;
};

/* Several traces: each one's Parquet export into its hive partition of the folder -o names,
 * DIR/rank=N/ (or DIR/host=H/pid=P/), the folder appearing whole once all are written
 * (docs/sql.md, "A job in one folder"). Returns an exit status. */
static int export_job(const struct gt_cli *cli, struct export_ctx *x,
                      const struct gt_exporter_ops *exp)
{
	struct gt_export_options *eo = &x->eo;
	struct gt_export_partition *parts = NULL;
	struct gt_output *o = NULL;
	struct gt_output_error oerr;
	struct gt_cli_trace t = {0};
	uint64_t rows = 0, bytes = 0;
	const char *msg = NULL;
	char sub[PATH_MAX + 340], identity[1024], count[32], size[32];
	int ret, status, damage = GT_EXIT_OK, first, again;

	if (strcmp(exp->name, "parquet") != 0) {
		gt_cli_error("export: several traces are exported together only with -f parquet "
		             "(a folder of partitions); export -f %s one trace at a time",
		             exp->name);
		return GT_EXIT_USAGE;
	}
	if (!cli->output) {
		gt_cli_error("export: several traces need -o DIR, the folder of their partitions");
		return GT_EXIT_USAGE;
	}
	if (gt_cli_args_repeat(cli, &first, &again)) {
		gt_cli_error("export: %s is given twice (as %s and %s)", cli->args[again],
		             cli->args[first], cli->args[again]);
		return GT_EXIT_USAGE;
	}
	/* every trace opened (and its window checked) before anything is written */
	for (int i = 0; i < cli->nargs; i++) {
		status = gt_cli_trace_open(cli, cli->args[i], &t);
		gt_cli_trace_close(&t);
		memset(&t, 0, sizeof(t));
		if (status != GT_EXIT_OK)
			return status;
	}
	parts = calloc((size_t)cli->nargs, sizeof(*parts));
	if (!parts) {
		gt_cli_error("export: out of memory");
		return GT_EXIT_SOFTWARE;
	}
	ret = gt_export_partitions((const char *const *)cli->args, (unsigned)cli->nargs, parts,
	                           &msg);
	if (ret < 0) {
		gt_cli_error("export: %s", msg);
		status = ret == -EINVAL || ret == -EEXIST ? GT_EXIT_USAGE : GT_EXIT_BAD_TRACE;
		goto out;
	}
	eo->output = cli->output;
	ret = gt_export_output_open(exp, eo, (const char *const *)cli->args, (unsigned)cli->nargs,
	                            &o, &oerr);
	if (ret < 0) {
		gt_cli_error("export: %s", oerr.msg[0] ? oerr.msg : strerror(-ret));
		status = gt_cli_output_status(ret);
		goto out;
	}
	gt_cli_output_signals();
	for (int i = 0; i < cli->nargs; i++) {
		struct gt_export_result res = {0};

		status = gt_cli_trace_open(cli, cli->args[i], &t);
		if (status != GT_EXIT_OK)
			goto out;
		snprintf(sub, sizeof(sub), "%s/%s", gt_output_path(o), parts[i].key);
		eo->output = sub;
		eo->out = o;
		eo->identity =
		        gt_export_identity(cli->args[i], &t.win.w, identity, sizeof(identity)) == 0
		                ? identity
		                : NULL;
		ret = gt_export_window(exp, t.r, &t.win.w, eo, &res, &msg, NULL);
		if (gt_cli_trace_damage(cli, &t) != GT_EXIT_OK)
			damage = GT_EXIT_DAMAGED;
		gt_cli_trace_close(&t);
		memset(&t, 0, sizeof(t));
		if (ret < 0) {
			gt_cli_error("export to %s failed: %s", sub, msg ? msg : strerror(-ret));
			status = gt_cli_export_status(o, ret);
			goto out;
		}
		rows += res.events;
		bytes += res.bytes;
	}
	status = gt_cli_output_finish(cli, o, NULL, GT_EXIT_OK);
	if (status != GT_EXIT_OK)
		goto out;
	if (!cli->quiet)
		fprintf(stderr,
		        "gputrace: wrote %s/ (%d partitions, %s/TABLE.parquet: %s rows, %s)\n",
		        gt_output_path(o), cli->nargs,
		        parts[0].rank >= 0 ? "rank=N" : "host=H/pid=P",
		        gt_fmt_count(rows, count, sizeof(count)),
		        gt_fmt_bytes(bytes, size, sizeof(size)));
	status = damage;
out:
	gt_cli_trace_close(&t);
	gt_output_free(o);
	free(parts);
	return status;
}

static int export_option(void *ctx, int c, const char *arg)
{
	struct export_ctx *x = ctx;

	switch (c) {
	case 'M':
		if (gt_opt_size(arg, 1u << 20, UINT64_MAX, &x->eo.max_bytes) < 0) {
			gt_cli_error("export: --max-size: '%s' is not valid; use a size of at "
			             "least 1M, e.g. 500M",
			             arg);
			return GT_EXIT_USAGE;
		}
		return GT_EXIT_OK;
	case 'S':
		if (strcmp(arg, "ranks") != 0) {
			gt_cli_error("export: --split: '%s' is not valid; use --split ranks", arg);
			return GT_EXIT_USAGE;
		}
		x->eo.split = GT_EXPORT_SPLIT_RANKS;
		return GT_EXIT_OK;
	case 'N':
		x->eo.no_steps = 1;
		return GT_EXIT_OK;
	default:
		return GT_EXIT_USAGE;
	}
}

static const struct option export_longopts[] = {
        {"max-size", required_argument, NULL, 'M'},
        {"split", required_argument, NULL, 'S'},
        {"no-steps", no_argument, NULL, 'N'},
        {NULL, 0, NULL, 0},
};

static const struct gt_cli_cmd export_cmd = {
        .name = "export",
        .synopsis = "gputrace export FILE... -f FORMAT [-o OUT]",
        .common = GT_CLI_OUTPUT | GT_CLI_FORMAT | GT_CLI_QUIET | GT_CLI_MANGLED | GT_CLI_STEP |
                  GT_CLI_WINDOW,
        .longopts = export_longopts,
        .option = export_option,
        .usage = usage,
        .min_args = 1,
        .max_args = -1,
        .args_what = "trace file",
};

int cmd_export(int argc, char **argv)
{
	struct export_ctx x = {.eo = {.demangle = 1}};
	struct gt_export_options *eo = &x.eo;
	const struct gt_exporter_ops *exp = NULL;
	struct gt_export_result res = {0};
	struct gt_output *o = NULL;
	struct gt_output_error oerr;
	struct gt_window_stats wst;
	struct gt_cli_trace t = {0};
	const char *in, *msg = NULL;
	struct progress prog;
	struct gt_cli cli;
	char out[PATH_MAX + 16], names[128], identity[1024];
	int ret, status, damage;

	status = gt_cli_parse(&cli, &export_cmd, &x, argc, argv);
	if (status != GT_EXIT_OK || cli.help)
		return status;
	in = cli.args[0];
	eo->demangle = !cli.mangled;
	eo->step_name = cli.step;
	gt_opt_exporter_names(names, sizeof(names));
	if (!cli.format) {
		gt_cli_error("export: which format? add -f with one of: %s", names);
		return GT_EXIT_USAGE;
	}
	exp = gt_exporter_find(cli.format);
	if (!exp) {
		gt_cli_error("export: -f: '%s' is not valid; use one of: %s", cli.format, names);
		return GT_EXIT_USAGE;
	}
	if (check_chrome_options(exp, eo, cli.output) < 0)
		return GT_EXIT_USAGE;
	if (cli.nargs > 1)
		return export_job(&cli, &x, exp);
	if (cli.output)
		snprintf(out, sizeof(out), "%s", cli.output);
	else
		gt_opt_derived_name(in, eo->split ? "-ranks" : exp->extension, out, sizeof(out));
	eo->output = out;
	if (eo->max_bytes && strcmp(exp->name, "perfetto") == 0 && strcmp(out, "-") == 0) {
		gt_cli_error(
		        "export: --max-size cuts perfetto output into files; give -o, not -o -");
		return GT_EXIT_USAGE;
	}
	status = gt_cli_trace_open(&cli, in, &t);
	if (status != GT_EXIT_OK)
		goto out;
	/* checked before anything is written, the output last: nothing to undo */
	ret = gt_export_output_open(exp, eo, (const char *const *)cli.args, 1, &o, &oerr);
	if (ret < 0) {
		gt_cli_error("export: %s", oerr.msg[0] ? oerr.msg : strerror(-ret));
		status = gt_cli_output_status(ret);
		goto out;
	}
	eo->out = o;
	/* what the export is of, recorded in it: view and sql reuse it only for this */
	if (gt_export_identity(in, &t.win.w, identity, sizeof(identity)) == 0)
		eo->identity = identity;
	gt_cli_output_signals();
	if (!cli.quiet && strcmp(out, "-") != 0)
		gt_cli_window_too_big(t.r, &t.win, exp->name, eo->max_bytes, in, false);
	gt_status_init(&prog.line, !cli.quiet);
	prog.start_ns = gt_now_ns();
	{
		struct gt_trace_times tt;

		prog.origin_ns = gt_reader_times(t.r, &tt) == 0 ? tt.zero_ns : 0;
	}
	prog.quiet = cli.quiet;
	eo->on_file = on_file;
	eo->file_ctx = &prog;
	if (prog.line.enabled) {
		eo->progress = on_progress;
		eo->progress_ctx = &prog;
	}
	ret = gt_export_window(exp, t.r, &t.win.w, eo, &res, &msg, &wst);
	gt_status_clear(&prog.line);
	damage = gt_cli_trace_damage(&cli, &t);
	if (ret < 0) {
		gt_cli_error("export to %s failed: %s", out, msg ? msg : strerror(-ret));
		status = gt_cli_export_status(o, ret);
		goto out;
	}
	status = gt_cli_output_finish(&cli, o, NULL, GT_EXIT_OK);
	if (status != GT_EXIT_OK)
		goto out;
	if (res.warning)
		gt_cli_warn("%s", res.warning);
	if (!cli.quiet && eo->split) {
		print_split(out, &res);
	} else if (!cli.quiet && strcmp(out, "-") != 0) {
		print_wrote(out, o, eo->max_bytes != 0, &res, &t, &wst);
		if (res.ranks > 1 && exp == gt_exporter_find("chrome"))
			fprintf(stderr,
			        "gputrace: the trace holds %u ranks; Holistic Trace Analysis reads "
			        "one rank per file: add --split ranks\n",
			        res.ranks);
	}
	status = damage;
out:
	gt_output_free(o);
	gt_cli_trace_close(&t);
	return status;
}
