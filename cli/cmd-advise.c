/* gputrace advise: what costs time in one trace or the traces of a job, and what to do about
 * it (exporters/analysis/advise.h), as a table or JSON; --fail-on makes an exit status for CI.
 * Runs in the CLI. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "advise.h"
#include "cli.h"
#include "common.h"
#include "output.h"
#include "stats.h"
#include "text.h"
#include "window.h"

static void usage(FILE *out)
{
	fputs("Usage: gputrace advise [options] FILE...\n"
	      "\n"
	      "Find what costs time in a trace (or the per-rank traces of a job) and say what to\n"
	      "do about it, in the spirit of Nsight Systems' expert rules and Holistic Trace\n"
	      "Analysis: copies from pageable memory, synchronous copies and memsets,\n"
	      "synchronizations inside steps, allocations after the first step, GPU idle time by\n"
	      "cause, kernels shorter than their launch, copies no compute overlaps, slow steps,\n"
	      "memory near capacity or growing every step, and across ranks stragglers and\n"
	      "communication no compute overlaps (docs/advise.md). Each finding gives its cost\n"
	      "in all and per step, where it happened - time ranges in seconds since the trace's\n"
	      "zero, to paste into --from and --to of view and export - and, in a trace with\n"
	      "stacks (run --backtrace), the places in the code the calls came from - and what\n"
	      "to do. Costliest first.\n"
	      "\n"
	      "Options:\n"
	      "      --fail-on WHAT   exit 3 when a finding matches WHAT: a rule (sync-api), a\n"
	      "                       cost (10ms, 500us, 2s) or a share of the span (5%)\n"
	      "      --top N          time ranges listed per finding, 1 to 5 (default 5)\n"
	      "      --step NAME      steps are the NVTX ranges named NAME (default: "
	      "ProfilerStep#N,\n"
	      "                       else step, train_step, iteration)\n"
	      "  -f, --format FORMAT  table (the default) or json; -o FILE.json picks json too\n"
	      "  -o, --output FILE    write there instead of standard output\n"
	      "      --mangled        keep kernel names as the compiler mangled them\n"
	      "  -q, --quiet          no line about the window\n"
	      "  -h, --help           show this help\n"
	      "\n"
	      "Rules: pageable-memcpy, sync-memcpy, sync-memset, sync-api, steady-malloc,\n"
	      "idle-host, idle-event, idle-other, short-kernels, copy-exposed, serialized,\n"
	      "slow-steps, memory-full, memory-growth, straggler, nccl-exposed.\n"
	      "\n" GT_CLI_WINDOW_HELP "\n"
	      "Exit status: 0 ok, 3 a finding matched --fail-on (the findings are written first),\n"
	      "64 bad option (one file given twice, the output one of the traces, a window that\n"
	      "selects nothing), 65 unreadable or damaged trace (a damaged one's findings are\n"
	      "written first), 66 no such file, 73 output cannot be created, 74 write error.\n",
	      out);
}

enum {
	OPT_FAIL_ON = 0x100,
	OPT_TOP,
};

struct advise_ctx {
	struct gt_advise_options opts;
	struct gt_advise_gate gate;
	const char *fail_on; /* as given; NULL: no gate */
};

static int advise_option(void *ctx, int c, const char *arg)
{
	struct advise_ctx *x = ctx;
	char *end;
	long v;

	char rules[512];
	size_t len = 0;

	switch (c) {
	case OPT_FAIL_ON:
		if (gt_advise_gate_parse(arg, &x->gate) < 0) {
			for (unsigned i = 0; i < GT_ADVISE_RULE_MAX && len < sizeof(rules); i++)
				len += (size_t)snprintf(rules + len, sizeof(rules) - len, "%s%s",
				                        i ? ", " : "", gt_advise_rule_id(i));
			gt_cli_error(
			        "advise: --fail-on takes a rule (%s), a cost (10ms) or a share "
			        "of the span (5%%), not '%s'",
			        rules, arg);
			return GT_EXIT_USAGE;
		}
		x->fail_on = arg;
		return GT_EXIT_OK;
	case OPT_TOP:
		errno = 0;
		v = strtol(arg, &end, 10);
		if (errno || end == arg || *end || v < 1 || v > GT_ADVISE_TOP) {
			gt_cli_error("advise: --top takes a number from 1 to %u, not '%s'",
			             GT_ADVISE_TOP, arg);
			return GT_EXIT_USAGE;
		}
		x->opts.top = (unsigned)v;
		return GT_EXIT_OK;
	default:
		return GT_EXIT_USAGE;
	}
}

static const struct option advise_longopts[] = {
        {"fail-on", required_argument, NULL, OPT_FAIL_ON},
        {"top", required_argument, NULL, OPT_TOP},
        {NULL, 0, NULL, 0},
};

static const struct gt_cli_cmd advise_cmd = {
        .name = "advise",
        .synopsis = "gputrace advise [options] FILE...",
        .common = GT_CLI_OUTPUT | GT_CLI_FORMAT | GT_CLI_QUIET | GT_CLI_MANGLED | GT_CLI_STEP |
                  GT_CLI_WINDOW,
        .longopts = advise_longopts,
        .option = advise_option,
        .usage = usage,
        .min_args = 1,
        .max_args = -1,
        .args_what = "trace",
};

static int add_one(void *ctx, struct gt_reader *r, const char *path, const char **errmsg)
{
	return gt_advise_add(ctx, r, path, errmsg);
}

static int finish_all(void *ctx)
{
	return gt_advise_finish(ctx);
}

static const struct gt_cli_traces_sink traces_sink = {add_one, finish_all};

int cmd_advise(int argc, char **argv)
{
	struct advise_ctx x = {0};
	struct gt_advise *a = NULL;
	struct gt_output *o = NULL;
	const struct gt_advise_finding *hit = NULL;
	struct gt_cli cli;
	FILE *out = NULL;
	unsigned format;
	int first, again, damage = GT_EXIT_OK, status, ret;

	status = gt_cli_parse(&cli, &advise_cmd, &x, argc, argv);
	if (status != GT_EXIT_OK || cli.help)
		return status;
	status = gt_cli_report_format(&cli, &format);
	if (status != GT_EXIT_OK)
		return status;
	if (format == GT_STATS_FORMAT_CSV) {
		gt_cli_error("advise: findings are written as a table or JSON, not CSV");
		return GT_EXIT_USAGE;
	}
	if (gt_cli_args_repeat(&cli, &first, &again)) {
		gt_cli_error("advise: %s is given twice (as %s and %s)", cli.args[again],
		             cli.args[first], cli.args[again]);
		return GT_EXIT_USAGE;
	}
	x.opts.step_name = cli.step;
	x.opts.mangled = cli.mangled;
	/* a window in time cuts the run: its first step is not the one that warms up */
	x.opts.all_steps = cli.win.from || cli.win.to || cli.win.nvtx;
	if (gt_advise_new(&x.opts, &a) < 0) {
		gt_cli_error("advise: out of memory");
		return GT_EXIT_SOFTWARE;
	}
	/* the output first: refused before a trace is read, its temporary there while they are */
	status = gt_cli_report_open(&cli, &o, &out);
	if (status == GT_EXIT_OK)
		status = gt_cli_add_traces(&cli, &traces_sink, a, &damage);
	if (status != GT_EXIT_OK)
		goto out;
	if (cli.step && a->steps == 0) {
		status = gt_cli_no_such_step(&cli, cli.args[0], cli.step);
		goto out;
	}
	ret = gt_advise_write(a, out,
	                      format == GT_STATS_FORMAT_JSON ? GT_ADVISE_FORMAT_JSON
	                                                     : GT_ADVISE_FORMAT_TABLE);
	if (ret < 0) {
		gt_cli_error("advise: %s: could not write the findings", gt_output_path(o));
		status = GT_EXIT_IO;
	}
	if (x.fail_on)
		hit = gt_advise_gate_match(a, &x.gate);
out:
	status = gt_cli_output_finish(&cli, o, out, status);
	if (status == GT_EXIT_OK)
		status = damage;
	if (status == GT_EXIT_OK && hit) {
		char cost[32];

		gt_cli_error("advise: --fail-on %s: %s, %s in all (%llu times)", x.fail_on,
		             gt_advise_rule_id(hit->rule),
		             gt_fmt_ns((double)hit->cost_ns, cost, sizeof(cost)),
		             (unsigned long long)hit->count);
		status = GT_EXIT_ADVISED;
	}
	gt_output_free(o);
	gt_advise_free(a);
	return status;
}
