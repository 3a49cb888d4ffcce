/* gputrace stats: where the GPU time went in a trace - kernels, API calls, copies, memsets,
 * NVTX ranges, memory, failed calls and losses - as a table, CSV or JSON; and across ranks
 * (several traces, --by, --step): the same split by rank, process, GPU or host, the GPU time
 * broken down, the steps compared and the stragglers. Runs in the CLI process. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "common.h"
#include "gputrace/trace.h"
#include "options.h"
#include "output.h"
#include "rankstats.h"
#include "stats-source.h"
#include "stats.h"

static void usage(FILE *out)
{
	fputs("Usage: gputrace stats [options] FILE...\n"
	      "\n"
	      "Summarize a trace in the spirit of `nsys stats`: per kernel, API function, copy\n"
	      "kind, memset, NVTX range; memory in use per device and allocations never freed;\n"
	      "API calls that failed; every loss counter. Times are nanoseconds in CSV and JSON.\n"
	      "\n"
	      "Across ranks (several traces - the per-rank files of a job - or --by, --step, or a\n"
	      "report below that needs them): the per-name reports split by rank, process, GPU\n"
	      "or host; each one's GPU time broken down into compute, communication (NCCL's\n"
	      "kernels), copies and idle; per training step, each rank's duration and compute\n"
	      "time, the slowest and fastest rank, and the stragglers.\n"
	      "\n"
	      "Options:\n"
	      "  -r, --report NAME    kernels, api, memcpy, memset, nvtx, memory, errors, losses\n"
	      "                       or all (the default: all of these); nvtx-gpu: GPU time\n"
	      "                       per NVTX range, as Nsight Systems' nvtx_gpu_proj_sum\n"
	      "                       (only when named); gpu-metrics: mean and peak of each GPU\n"
	      "                       metric over the run, while kernels ran and per step, and\n"
	      "                       GPU busy beside SMs active (in the default when the trace\n"
	      "                       has GPU metrics); operators: GPU time, calls and API time\n"
	      "                       per PyTorch operator, and per operator and input dims\n"
	      "                       (gputrace run --pytorch; only when named); across ranks:\n"
	      "                       breakdown, steps, stragglers, kernels, api, memcpy,\n"
	      "                       memset, nvtx or all;\n"
	      "                       a comma list, or repeat the option\n"
	      "      --instances      nvtx-gpu: every range instance too (nvtx_gpu_proj_trace)\n"
	      "      --by GROUP       rank (the default), process, device or host; source:\n"
	      "                       GPU and API time per Python line and function\n"
	      "      --step NAME      steps are the NVTX ranges named NAME (default: "
	      "ProfilerStep#N,\n"
	      "                       else step, train_step, iteration)\n"
	      "      --min-lag PCT    a step's slowest rank is a straggler when its compute time\n"
	      "                       is at least PCT % above the others' median (default 5)\n"
	      "  -f, --format FORMAT  table (the default), csv or json; -o FILE.csv or FILE.json\n"
	      "                       picks the format too\n"
	      "  -o, --output FILE    write there instead of standard output\n"
	      "  -n, --limit N        at most N rows per table (table format; 0 = all); names\n"
	      "                       longer than 160 characters are cut in tables\n"
	      "      --mangled        keep kernel names as the compiler mangled them\n"
	      "      --base-names     kernels by base name (\"k\" of \"void ns::k<int>(float*)\"):\n"
	      "                       a function's instantiations as one row\n"
	      "  -q, --quiet          no line about the window\n"
	      "  -h, --help           show this help\n"
	      "\n" GT_CLI_WINDOW_HELP
	      "\n"
	      "Exit status: 0 ok, 64 bad option (one file given twice, the output one of the\n"
	      "traces, a window that selects nothing), 65 unreadable or damaged trace (a damaged\n"
	      "one's report is written first), 66 no such file, 73 output cannot be created,\n"
	      "74 write error.\n",
	      out);
}

static const char report_list[] = "kernels, api, memcpy, memset, nvtx, memory, errors, losses, "
                                  "nvtx-gpu, gpu-metrics, operators, breakdown, steps, "
                                  "stragglers, all";

static int stats_report_fn(void *ctx, struct gt_reader *r, FILE *out, const char **errmsg)
{
	return gt_stats_report(r, out, ctx, errmsg);
}

/* The reports of one trace. */
static int stats_one(const struct gt_cli *cli, const struct gt_stats_options *opts)
{
	return gt_cli_report_one(cli, "stats", stats_report_fn, (void *)opts);
}

static int add_one(void *ctx, struct gt_reader *r, const char *path, const char **errmsg)
{
	return gt_rankstats_add(ctx, r, path, errmsg);
}

static int finish_all(void *ctx)
{
	return gt_rankstats_finish(ctx);
}

static const struct gt_cli_traces_sink traces_sink = {add_one, finish_all};

/* The reports across ranks, over every trace of cli. */
static int stats_ranks(const struct gt_cli *cli, const struct gt_rankstats_options *opts)
{
	struct gt_rankstats *rs = NULL;
	struct gt_output *o = NULL;
	const char *errmsg = NULL;
	FILE *out = NULL;
	int ret, first, again, damage = GT_EXIT_OK, status;

	if (gt_cli_args_repeat(cli, &first, &again)) {
		gt_cli_error("stats: %s is given twice (as %s and %s)", cli->args[again],
		             cli->args[first], cli->args[again]);
		return GT_EXIT_USAGE;
	}
	if (gt_rankstats_new(opts, &rs) < 0) {
		gt_cli_error("stats: out of memory");
		return GT_EXIT_SOFTWARE;
	}
	/* the output first: refused before a trace is read, its temporary there while they are */
	status = gt_cli_report_open(cli, &o, &out);
	if (status == GT_EXIT_OK)
		status = gt_cli_add_traces(cli, &traces_sink, rs, &damage);
	if (status != GT_EXIT_OK)
		goto out;
	if (opts->step_name && rs->nsteps == 0) {
		status = gt_cli_no_such_step(cli, cli->args[0], opts->step_name);
		goto out;
	}
	if (rs->split_gpu)
		gt_cli_warn(
		        "stats: a GPU's activity is in several of these traces; its busy and "
		        "idle time are each trace's, added up (merge the traces for one union)");
	ret = gt_rankstats_write(rs, out, &errmsg);
	if (ret < 0) {
		gt_cli_error("stats: %s: %s", gt_output_path(o), errmsg);
		status = ret == -EIO ? GT_EXIT_IO : GT_EXIT_SOFTWARE;
	}
out:
	status = gt_cli_output_finish(cli, o, out, status);
	if (status == GT_EXIT_OK)
		status = damage;
	gt_output_free(o);
	gt_rankstats_free(rs);
	return status;
}

enum {
	OPT_BY = 0x100,
	OPT_MIN_LAG,
	OPT_BASE_NAMES,
	OPT_INSTANCES,
};

struct stats_ctx {
	struct gt_stats_options opts;
	struct gt_rankstats_options ro;
	const char **reports; /* -r as given, in order */
	int nreports;
	const char *by;
	bool min_lag;
	bool source; /* --by source: the Python source report (stats-source.c) */
};

static int stats_option(void *ctx, int c, const char *arg)
{
	struct stats_ctx *x = ctx;
	unsigned bits;
	char *end;

	switch (c) {
	case 'r':
		if (gt_stats_parse_reports(arg, &bits) < 0 &&
		    gt_rankstats_parse_reports(arg, &bits) < 0) {
			gt_cli_error("stats: unknown report '%s'; choose from %s", arg, report_list);
			return GT_EXIT_USAGE;
		}
		x->reports[x->nreports++] = arg;
		return GT_EXIT_OK;
	case OPT_BY:
		x->source = strcmp(arg, "source") == 0;
		if (!x->source && gt_rankstats_parse_by(arg, &x->ro.by) < 0) {
			gt_cli_error("stats: --by takes rank, process, device, host or source, not "
			             "'%s'",
			             arg);
			return GT_EXIT_USAGE;
		}
		x->by = arg;
		return GT_EXIT_OK;
	case OPT_MIN_LAG:
		errno = 0;
		x->ro.min_lag_pct = strtod(arg, &end);
		if (errno || end == arg || *end || !(x->ro.min_lag_pct >= 0) ||
		    x->ro.min_lag_pct > 1e9) {
			gt_cli_error("stats: --min-lag takes a percentage (0 or more), not '%s'",
			             arg);
			return GT_EXIT_USAGE;
		}
		x->min_lag = true;
		return GT_EXIT_OK;
	case OPT_BASE_NAMES:
		x->opts.base_names = true;
		return GT_EXIT_OK;
	case OPT_INSTANCES:
		x->opts.nvtx_instances = true;
		return GT_EXIT_OK;
	default:
		return GT_EXIT_USAGE;
	}
}

static const struct option stats_longopts[] = {
        {"report", required_argument, NULL, 'r'},
        {"by", required_argument, NULL, OPT_BY},
        {"min-lag", required_argument, NULL, OPT_MIN_LAG},
        {"base-names", no_argument, NULL, OPT_BASE_NAMES},
        {"instances", no_argument, NULL, OPT_INSTANCES},
        {NULL, 0, NULL, 0},
};

static const struct gt_cli_cmd stats_cmd = {
        .name = "stats",
        .synopsis = "gputrace stats [options] FILE...",
        .common = GT_CLI_OUTPUT | GT_CLI_FORMAT | GT_CLI_QUIET | GT_CLI_LIMIT | GT_CLI_MANGLED |
                  GT_CLI_STEP | GT_CLI_WINDOW,
        .shortopts = "r:",
        .longopts = stats_longopts,
        .option = stats_option,
        .usage = usage,
        .min_args = 1,
        .max_args = -1,
        .args_what = "trace",
};

/* Across ranks the reports are the per-name ones and those that compare ranks. */
static int rank_reports(struct stats_ctx *x)
{
	unsigned bits;

	for (int i = 0; i < x->nreports; i++) {
		if (gt_rankstats_parse_reports(x->reports[i], &bits) < 0) {
			gt_cli_error("stats: '%s': across ranks the reports are breakdown, steps, "
			             "stragglers, kernels, api, memcpy, memset, nvtx and all; "
			             "memory, errors, losses, nvtx-gpu, gpu-metrics and operators are "
			             "of one trace",
			             x->reports[i]);
			return GT_EXIT_USAGE;
		}
		x->ro.reports |= bits;
	}
	if ((x->ro.by == GT_RANKSTATS_BY_DEVICE || x->ro.by == GT_RANKSTATS_BY_HOST) &&
	    x->ro.reports != GT_RANKSTATS_REPORT_ALL &&
	    (x->ro.reports & (GT_RANKSTATS_REPORT_STEPS | GT_RANKSTATS_REPORT_STRAGGLERS))) {
		gt_cli_error("stats: steps and stragglers are per rank or process, not --by %s",
		             x->by);
		return GT_EXIT_USAGE;
	}
	if (x->ro.by == GT_RANKSTATS_BY_DEVICE && x->ro.reports != GT_RANKSTATS_REPORT_ALL &&
	    (x->ro.reports & (GT_RANKSTATS_REPORT_API | GT_RANKSTATS_REPORT_NVTX))) {
		gt_cli_error("stats: API calls and NVTX ranges belong to no GPU: not --by device");
		return GT_EXIT_USAGE;
	}
	if (x->opts.base_names || x->opts.nvtx_instances) {
		gt_cli_error("stats: %s is for the reports of one trace",
		             x->opts.base_names ? "--base-names" : "--instances");
		return GT_EXIT_USAGE;
	}
	return GT_EXIT_OK;
}

int cmd_stats(int argc, char **argv)
{
	struct stats_ctx x = {.ro = {.min_lag_pct = GT_RANKSTATS_MIN_LAG_PCT}};
	struct gt_cli cli;
	unsigned bits;
	bool ranks;
	int status;

	x.reports = calloc((size_t)argc + 1, sizeof(*x.reports));
	if (!x.reports)
		return GT_EXIT_SOFTWARE;
	status = gt_cli_parse(&cli, &stats_cmd, &x, argc, argv);
	if (status != GT_EXIT_OK || cli.help)
		goto out;
	status = gt_cli_report_format(&cli, &x.opts.format);
	if (status != GT_EXIT_OK)
		goto out;
	x.opts.limit = (unsigned)cli.limit;
	x.opts.mangled = cli.mangled;
	x.ro.step_name = cli.step;
	if (x.source) {
		status = gt_cli_stats_source(&cli, x.opts.format, x.opts.limit);
		goto out;
	}

	/* one trace, unless several are given or something only the analysis across ranks has
	 * is asked for */
	ranks = cli.nargs > 1 || x.by || cli.step || x.min_lag;
	for (int i = 0; i < x.nreports && !ranks; i++)
		ranks = gt_stats_parse_reports(x.reports[i], &bits) < 0;
	if (!ranks) {
		for (int i = 0; i < x.nreports; i++) {
			gt_stats_parse_reports(x.reports[i], &bits);
			x.opts.reports |= bits;
		}
		if (x.opts.nvtx_instances && !(x.opts.reports & GT_STATS_REPORT_NVTX_GPU)) {
			gt_cli_error("stats: --instances lists the range instances of the nvtx-gpu "
			             "report: add -r nvtx-gpu");
			status = GT_EXIT_USAGE;
			goto out;
		}
		status = stats_one(&cli, &x.opts);
		goto out;
	}
	status = rank_reports(&x);
	if (status != GT_EXIT_OK)
		goto out;
	x.ro.format = x.opts.format;
	x.ro.limit = x.opts.limit;
	x.ro.mangled = x.opts.mangled;
	status = stats_ranks(&cli, &x.ro);
out:
	free(x.reports);
	return status;
}
