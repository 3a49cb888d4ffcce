/* `gputrace stats --by source`: the per-Python-line and per-function report of one trace
 * (exporters/analysis/source.c) through the one output path. Runs in the CLI. */
#include "cli.h"
#include "common.h"
#include "source.h"
#include "stats-source.h"

struct source_args {
	unsigned format, limit;
};

static int source_report_fn(void *ctx, struct gt_reader *r, FILE *out, const char **errmsg)
{
	const struct source_args *x = ctx;

	return gt_source_report(r, out, x->format, x->limit, errmsg);
}

int gt_cli_stats_source(const struct gt_cli *cli, unsigned format, unsigned limit)
{
	struct source_args x = {format, limit};

	if (cli->nargs != 1) {
		gt_cli_error("stats: --by source reads one trace");
		return GT_EXIT_USAGE;
	}
	return gt_cli_report_one(cli, "stats", source_report_fn, &x);
}
