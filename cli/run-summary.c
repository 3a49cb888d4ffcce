/* gputrace run after the program: the one line that says where the trace is, the summary
 * (gt_stats_summary, on the catalog every output shares), --stats, --export; with -q only the
 * losses. Runs in the CLI process. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "catalog.h"
#include "cli.h"
#include "common.h"
#include "exporter.h"
#include "options.h"
#include "output.h"
#include "run.h"
#include "stats.h"

/* Records the trace says were lost, as the catalog every output shares counts them; reads
 * the file only when its footer counts any LOSS record. */
static uint64_t quiet_losses(struct gt_reader *r)
{
	const struct gt_trace_counts *fc = gt_reader_footer_counts(r);
	struct gt_catalog cat;
	const char *msg = NULL;
	uint64_t lost = 0;

	if (fc && !fc->records[GT_REC_LOSS])
		return 0;
	if (gt_catalog_init(&cat, r) < 0)
		return 0;
	if (gt_catalog_read(&cat, r, &msg) >= 0)
		lost = gt_catalog_lost_total(&cat);
	gt_catalog_fini(&cat);
	gt_reader_rewind(r);
	return lost;
}

/* The one line for a trace that could not be completed: one whose writing stopped moving
 * stays under its temporary name (the writer thread is left in its call, with the file), and
 * `gputrace info` reads what it holds. */
void gt_run_trace_error(const struct run *run)
{
	if (run->trace_err == -ETIMEDOUT)
		gt_cli_error("the trace %s could not be completed (its writing made no progress "
		             "for %.3g s); what was written is in %s, which `gputrace info` reads",
		             run->path, (double)run->o.cfg.write_timeout_ns / 1e9, run->tmp_path);
	else
		gt_cli_error("the trace %s could not be written: %s", run->path,
		             strerror(-run->trace_err));
}

/* --export: the trace exported next to it through the one output path (never over the
 * trace, a device or a FIFO; nothing under the final name until complete; a signal removes
 * the temporary), recording what it is an export of, so that view and sql reuse it. Returns
 * a GT_EXIT_* code. */
static int export_trace(const struct run *run, struct gt_reader *r)
{
	static const struct gt_cli_cmd run_cmd = {.name = "run"};
	const struct gt_cli cli = {.cmd = &run_cmd};
	const struct gt_exporter_ops *e = gt_exporter_find(run->o.export_name);
	struct gt_export_options eo = {.demangle = 1};
	const char *const inputs[] = {run->path};
	struct gt_export_result res = {0};
	struct gt_output_error oerr;
	struct gt_output *o = NULL;
	char out[PATH_MAX + 16], identity[1024], count[32];
	const char *msg = NULL;
	int ret, status;

	gt_opt_derived_name(run->path, e->extension, out, sizeof(out));
	eo.output = out;
	ret = gt_export_output_open(e, &eo, inputs, 1, &o, &oerr);
	if (ret < 0) {
		gt_cli_error("run: --export: %s", oerr.msg[0] ? oerr.msg : strerror(-ret));
		return gt_cli_output_status(ret);
	}
	eo.out = o;
	if (gt_export_identity(run->path, NULL, identity, sizeof(identity)) == 0)
		eo.identity = identity;
	gt_cli_output_signals(); /* the program is gone: a signal now ends the export */
	ret = gt_reader_rewind(r);
	if (ret >= 0)
		ret = gt_export_run(e, r, &eo, &res, &msg);
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
	if (!run->o.quiet)
		fprintf(stderr, "gputrace: exported %s (%s events)\n", out,
		        gt_fmt_count(res.events, count, sizeof(count)));
out:
	gt_output_free(o);
	return status;
}

/* Summary, --stats and --export, once the file is complete. Returns a GT_EXIT_*
 * code. */
int gt_run_after_trace(struct run *run)
{
	struct gt_reader *r = NULL;
	const char *msg = NULL;
	char rec[32], size[32];
	int ret;

	if (!run->o.quiet)
		fprintf(stderr, "gputrace: trace written to %s (%s records, %s)\n", run->path,
		        gt_fmt_count(run->file_records, rec, sizeof(rec)),
		        gt_fmt_bytes(gt_run_file_bytes(run->path), size, sizeof(size)));
	ret = gt_reader_open(run->path, &r, &msg);
	if (ret < 0) {
		gt_cli_error("cannot read back %s: %s", run->path, msg ? msg : strerror(-ret));
		return GT_EXIT_BAD_TRACE;
	}
	/* -q leaves out the summary, never the losses: a trace is not silently partial */
	if (run->o.quiet) {
		uint64_t lost = quiet_losses(r);

		if (lost)
			gt_cli_warn("%s records were lost; `gputrace info %s` lists them by source",
			            gt_fmt_count(lost, rec, sizeof(rec)), run->path);
		if (!run->o.stats && !run->o.export_name) {
			gt_reader_close(r);
			return GT_EXIT_OK;
		}
	} else {
		fputc('\n', stderr);
		if (gt_stats_summary(r, stderr, &msg) < 0)
			gt_cli_warn("no summary: %s", msg ? msg : "unknown error");
	}
	if (run->o.stats && gt_stats_report(r, stderr, NULL, &msg) < 0)
		gt_cli_warn("no statistics report: %s", msg ? msg : "unknown error");
	if (run->o.export_name) {
		ret = export_trace(run, r);
		if (ret != GT_EXIT_OK) {
			gt_reader_close(r);
			return ret;
		}
	}
	gt_reader_close(r);
	return GT_EXIT_OK;
}
