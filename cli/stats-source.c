/* `gputrace stats --by source`: the per-Python-line and per-function report of one trace
 * (exporters/analysis/source.c) through the one output path. Runs in the CLI. */
#include <errno.h>
#include <string.h>

#include "cli.h"
#include "common.h"
#include "output.h"
#include "source.h"
#include "stats-source.h"

int gt_cli_stats_source(const struct gt_cli *cli, unsigned format, unsigned limit)
{
	struct gt_cli_trace t = {0};
	struct gt_output *o = NULL;
	const char *errmsg = NULL;
	FILE *out = NULL;
	int ret, status, damage = GT_EXIT_OK;

	if (cli->nargs != 1) {
		gt_cli_error("stats: --by source reads one trace");
		return GT_EXIT_USAGE;
	}
	/* the output first: refused before the trace is read, its temporary there while it is */
	status = gt_cli_report_open(cli, &o, &out);
	if (status == GT_EXIT_OK)
		status = gt_cli_trace_open(cli, cli->args[0], &t);
	if (status == GT_EXIT_OK)
		status = gt_cli_trace_filter(cli, &t);
	if (status != GT_EXIT_OK)
		goto out;
	ret = gt_source_report(t.r, out, format, limit, &errmsg);
	damage = gt_cli_trace_damage(cli, &t);
	if (ret < 0) {
		gt_cli_error("stats: %s: %s", ret == -EIO ? gt_output_path(o) : t.path,
		             errmsg ? errmsg : strerror(-ret));
		status = ret == -EIO      ? GT_EXIT_IO
		         : ret == -ENOMEM ? GT_EXIT_SOFTWARE
		                          : GT_EXIT_BAD_TRACE;
	}
out:
	status = gt_cli_output_finish(cli, o, out, status);
	if (status == GT_EXIT_OK)
		status = damage;
	gt_output_free(o);
	gt_cli_trace_close(&t);
	return status;
}
