/* gputrace diff BASE NEW: two traces compared per kernel, API function, copy kind, memset
 * kind and NVTX range, with a headline and, for CI, a gate that fails when NEW regressed
 * (--fail-above PCT). Runs in the CLI process. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "common.h"
#include "diff.h"
#include "gputrace/trace.h"
#include "options.h"
#include "output.h"
#include "stats.h"

static void usage(FILE *out)
{
	fputs("Usage: gputrace diff [options] BASE NEW\n"
	      "\n"
	      "Compare two traces: per kernel (demangled), API function, copy kind, memset kind\n"
	      "and NVTX range, the count, total, mean and median time in each and the change,\n"
	      "largest change in total time first; names only in one of them apart; a headline\n"
	      "(GPU time, time per step, launches, API calls, lost records). A trace that lost\n"
	      "records is flagged first. Times are nanoseconds in CSV and JSON.\n"
	      "\n"
	      "Options:\n"
	      "  -f, --format FORMAT   table (the default), csv or json; -o FILE.csv or FILE.json\n"
	      "                        picks the format too\n"
	      "  -o, --output FILE     write there instead of standard output\n"
	      "  -n, --limit N         at most N rows per table (table format; 0 = all)\n"
	      "      --mangled         keep kernel names as the compiler mangled them\n"
	      "      --step NAME       steps are the NVTX ranges named NAME (default: "
	      "ProfilerStep#N,\n"
	      "                        else step, train_step, iteration)\n"
	      "      --fail-above PCT  exit 1 when NEW's metric is more than PCT % above BASE's\n"
	      "      --metric M        gpu-time (the default), step-time (the median step), or "
	      "the\n"
	      "                        name of a kernel, API function, copy kind, memset kind or\n"
	      "                        NVTX range (its total time); a kernel's base name when\n"
	      "                        one kernel has it\n"
	      "  -q, --quiet           no line about the window\n"
	      "  -h, --help            show this help\n"
	      "\n" GT_CLI_WINDOW_HELP
	      "  The window is resolved in each trace on its own.\n"
	      "\n"
	      "Exit status: 0 ok (no regression beyond --fail-above), 1 NEW regressed beyond it,\n"
	      "64 bad option (a --metric neither trace has, the output one of the traces, a\n"
	      "window that selects nothing), 65 unreadable or damaged trace (a damaged one's\n"
	      "comparison is written first), 66 no such file, 70 out of memory, 73 output cannot\n"
	      "be created, 74 write error.\n",
	      out);
}

/* Read one side, through the window when one was given. Returns an exit status; *damage
 * becomes GT_EXIT_DAMAGED when the trace was damaged. */
static int read_side(const struct gt_cli *cli, struct gt_diff *d, unsigned side, const char *path,
                     int *damage)
{
	struct gt_cli_trace t;
	const char *errmsg = NULL;
	int ret, status = gt_cli_trace_open(cli, path, &t);

	if (status == GT_EXIT_OK)
		status = gt_cli_trace_filter(cli, &t);
	if (status == GT_EXIT_OK) {
		ret = gt_diff_add(d, side, t.r, path, &errmsg);
		if (gt_cli_trace_damage(cli, &t) != GT_EXIT_OK)
			*damage = GT_EXIT_DAMAGED;
		if (ret < 0) {
			gt_cli_error("diff: %s: %s", path, errmsg);
			status = ret == -ENOMEM ? GT_EXIT_SOFTWARE : GT_EXIT_BAD_TRACE;
		}
	}
	gt_cli_trace_close(&t);
	return status;
}

/* What the gate found, on standard error: CI logs show why a job failed (or passed). */
static void report_gate(const struct gt_diff *d)
{
	const struct gt_diff_gate *g = &d->gate;
	char change[48];

	if (!g->enabled)
		return;
	if (isfinite(g->change_pct))
		snprintf(change, sizeof(change), "%+.2f%%", g->change_pct);
	else
		snprintf(change, sizeof(change), "from nothing to something");
	if (g->regressed)
		gt_cli_error("diff: %s regressed: %s, more than the %g%% allowed", g->metric,
		             change, d->opts.fail_above_pct);
	else
		fprintf(stderr, "gputrace: diff: %s: %s, within the %g%% allowed\n", g->metric,
		        change, d->opts.fail_above_pct);
}

enum {
	OPT_FAIL_ABOVE = 0x100,
	OPT_METRIC,
};

static int diff_option(void *ctx, int c, const char *arg)
{
	struct gt_diff_options *o = ctx;
	char *end;

	switch (c) {
	case OPT_FAIL_ABOVE:
		errno = 0;
		o->fail_above_pct = strtod(arg, &end);
		if (errno || end == arg || *end || !(o->fail_above_pct >= 0) ||
		    !isfinite(o->fail_above_pct)) {
			gt_cli_error("diff: --fail-above takes a percentage (0 or more), not '%s'",
			             arg);
			return GT_EXIT_USAGE;
		}
		return GT_EXIT_OK;
	case OPT_METRIC:
		if (!*arg) {
			gt_cli_error("diff: --metric takes gpu-time, step-time or a name");
			return GT_EXIT_USAGE;
		}
		o->metric = arg;
		return GT_EXIT_OK;
	default:
		return GT_EXIT_USAGE;
	}
}

static const struct option diff_longopts[] = {
        {"fail-above", required_argument, NULL, OPT_FAIL_ABOVE},
        {"metric", required_argument, NULL, OPT_METRIC},
        {NULL, 0, NULL, 0},
};

static const struct gt_cli_cmd diff_cmd = {
        .name = "diff",
        .synopsis = "gputrace diff [options] BASE NEW",
        .common = GT_CLI_OUTPUT | GT_CLI_FORMAT | GT_CLI_QUIET | GT_CLI_LIMIT | GT_CLI_MANGLED |
                  GT_CLI_STEP | GT_CLI_WINDOW,
        .longopts = diff_longopts,
        .option = diff_option,
        .usage = usage,
        .min_args = 2,
        .max_args = 2,
        .args_what = "trace",
        .args_missing = "which traces?",
        .args_extra = "it compares two traces",
};

int cmd_diff(int argc, char **argv)
{
	struct gt_diff_options opts = {.fail_above_pct = -1};
	struct gt_output *o = NULL;
	const char *errmsg = NULL;
	struct gt_diff *d = NULL;
	struct gt_cli cli;
	FILE *out = NULL;
	int ret, status, first, again, damage = GT_EXIT_OK;

	status = gt_cli_parse(&cli, &diff_cmd, &opts, argc, argv);
	if (status != GT_EXIT_OK || cli.help)
		return status;
	if (opts.metric && opts.fail_above_pct < 0) {
		gt_cli_error("diff: --metric is what --fail-above checks; give --fail-above PCT");
		return GT_EXIT_USAGE;
	}
	if (gt_cli_args_repeat(&cli, &first, &again)) {
		gt_cli_error("diff: BASE and NEW are one file (%s and %s)", cli.args[0],
		             cli.args[1]);
		return GT_EXIT_USAGE;
	}
	status = gt_cli_report_format(&cli, &opts.format);
	if (status != GT_EXIT_OK)
		return status;
	opts.limit = (unsigned)cli.limit;
	opts.mangled = cli.mangled;
	opts.step_name = cli.step;
	/* the output first: refused before a trace is read, its temporary there while they are */
	status = gt_cli_report_open(&cli, &o, &out);
	if (status != GT_EXIT_OK)
		goto out;
	if (gt_diff_new(&opts, &d) < 0) {
		gt_cli_error("diff: out of memory");
		status = GT_EXIT_SOFTWARE;
		goto out;
	}
	if ((status = read_side(&cli, d, GT_DIFF_BASE, cli.args[0], &damage)) != GT_EXIT_OK ||
	    (status = read_side(&cli, d, GT_DIFF_NEW, cli.args[1], &damage)) != GT_EXIT_OK)
		goto out;
	ret = gt_diff_finish(d, &errmsg);
	if (ret < 0) {
		if (ret == -ENOENT)
			gt_cli_error("diff: --metric %s: %s", opts.metric ? opts.metric : "",
			             errmsg);
		else
			gt_cli_error("diff: %s", errmsg);
		status = ret == -ENOENT ? GT_EXIT_USAGE : GT_EXIT_SOFTWARE;
		goto out;
	}
	ret = gt_diff_write(d, out, &errmsg);
	if (ret < 0) {
		gt_cli_error("diff: %s: %s", gt_output_path(o), errmsg);
		status = ret == -EIO ? GT_EXIT_IO : GT_EXIT_SOFTWARE;
	}
out:
	status = gt_cli_output_finish(&cli, o, out, status);
	if (status == GT_EXIT_OK) {
		report_gate(d);
		if (d->gate.regressed)
			status = GT_EXIT_REGRESSED;
		else
			status = damage;
	}
	gt_output_free(o);
	gt_diff_free(d);
	return status;
}
