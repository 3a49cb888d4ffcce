/* gputrace report: one self-contained HTML page over a trace or the per-rank traces of a job
 * (exporters/analysis/report.h), which opens from disk with no network. Runs in the CLI. */
#include <errno.h>
#include <string.h>

#include "cli.h"
#include "common.h"
#include "output.h"
#include "report.h"
#include "window.h"

static void usage(FILE *out)
{
	fputs("Usage: gputrace report [options] FILE... -o report.html\n"
	      "\n"
	      "Write one HTML page about a trace (or the per-rank traces of a job) that opens in\n"
	      "a browser from disk, with no network: everything it shows is inside the file\n"
	      "(docs/report.md). It shows the traces (processes, ranks, GPUs, span, losses and\n"
	      "damage), GPU busy time and device memory in use over time per GPU, the time of\n"
	      "each step per rank, the top kernels by GPU time, GPU time per NVTX range, and the\n"
	      "findings of gputrace advise with their time ranges in seconds since the trace's\n"
	      "zero, to paste into --from and --to of view and export.\n"
	      "\n"
	      "Options:\n"
	      "  -o, --output FILE    write the page to FILE (default: standard output)\n"
	      "      --step NAME      steps are the NVTX ranges named NAME (default: "
	      "ProfilerStep#N,\n"
	      "                       step, train_step or iteration)\n"
	      "      --mangled        keep kernel names as the compiler mangled them\n"
	      "  -q, --quiet          no line about the window\n"
	      "  -h, --help           show this help\n"
	      "\n" GT_CLI_WINDOW_HELP "\n"
	      "Exit status: 0 ok, 64 bad option (one file given twice, the output one of the\n"
	      "traces, a window that selects nothing), 65 unreadable or damaged trace (a damaged\n"
	      "one's page is written first), 66 no such file, 70 out of memory, 73 output cannot\n"
	      "be created, 74 write error.\n",
	      out);
}

static const struct gt_cli_cmd report_cmd = {
        .name = "report",
        .synopsis = "gputrace report [options] FILE... -o report.html",
        .common = GT_CLI_OUTPUT | GT_CLI_QUIET | GT_CLI_MANGLED | GT_CLI_STEP | GT_CLI_WINDOW,
        .usage = usage,
        .min_args = 1,
        .max_args = -1,
        .args_what = "trace",
};

static int add_one(void *ctx, struct gt_reader *r, const char *path, const char **errmsg)
{
	return gt_report_add(ctx, r, path, errmsg);
}

static int finish_all(void *ctx)
{
	return gt_report_finish(ctx);
}

static const struct gt_cli_traces_sink traces_sink = {add_one, finish_all};

int cmd_report(int argc, char **argv)
{
	struct gt_report_options opts = {0};
	struct gt_report *rep = NULL;
	struct gt_output *o = NULL;
	struct gt_cli cli;
	FILE *out = NULL;
	int first, again, damage = GT_EXIT_OK, status;

	status = gt_cli_parse(&cli, &report_cmd, NULL, argc, argv);
	if (status != GT_EXIT_OK || cli.help)
		return status;
	if (gt_cli_args_repeat(&cli, &first, &again)) {
		gt_cli_error("report: %s is given twice (as %s and %s)", cli.args[again],
		             cli.args[first], cli.args[again]);
		return GT_EXIT_USAGE;
	}
	opts.step_name = cli.step;
	opts.mangled = cli.mangled;
	/* a window in time cuts the run: its first step is not the one that warms up */
	opts.all_steps = cli.win.from || cli.win.to || cli.win.nvtx;
	if (gt_report_new(&opts, &rep) < 0) {
		gt_cli_error("report: out of memory");
		return GT_EXIT_SOFTWARE;
	}
	/* the output first: refused before a trace is read, its temporary there while they are */
	status = gt_cli_report_open(&cli, &o, &out);
	if (status == GT_EXIT_OK)
		status = gt_cli_add_traces(&cli, &traces_sink, rep, &damage);
	if (status != GT_EXIT_OK)
		goto out;
	if (cli.step && gt_report_steps(rep) == 0) {
		status = gt_cli_no_such_step(&cli, cli.args[0], cli.step);
		goto out;
	}
	if (gt_report_write_html(rep, out) < 0) {
		gt_cli_error("report: %s: could not write the page", gt_output_path(o));
		status = GT_EXIT_IO;
	}
out:
	status = gt_cli_output_finish(&cli, o, out, status);
	if (status == GT_EXIT_OK)
		status = damage;
	gt_output_free(o);
	gt_report_free(rep);
	return status;
}
