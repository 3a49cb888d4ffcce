/* gputrace run: trace a program and every process it starts. Opens the trace, starts the
 * session, runs the program with the injection environment, drains every traced process until
 * the whole process tree has exited, trims what --delay leaves out (src/ops/transform.c), then
 * prints the summary and exits with the program's own status. The stages: cli/run.h. Runs in
 * the CLI process. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "cli.h"
#include "clock.h"
#include "inject-path.h"
#include "live-view.h"
#include "run.h"
#include "transform.h"

static void run_free(struct run *run)
{
	gt_signals_wake(NULL, NULL);
	if (run->s)
		gt_session_free(run->s);
	gt_live_view_stop(run->live); /* after the session: its drain feeds the view's tap */
	gt_writer_discard(run->w);
	for (size_t i = 0; i < run->env_nstore; i++)
		free(run->env_store[i]);
	free(run->env);
}

int cmd_run(int argc, char **argv)
{
	struct run run = {.sp = {.pid = -1, .gate_fd = -1, .err_fd = -1}};
	struct gt_session_options so = {0};
	struct gt_live_view_options lv = {run.tmp_path, run.path, run.cmdline, 0, &run.status};
	char tried[2048];
	const char *how;
	int r, ret, status;

	r = gt_run_parse_options(argc, argv, &run.o);
	if (r)
		return r > 0 ? GT_EXIT_OK : GT_EXIT_USAGE;
	if (gt_run_prepare_pattern(&run) < 0)
		return GT_EXIT_USAGE;
	if (gt_inject_find(run.inject, sizeof(run.inject), &how, tried, sizeof(tried)) < 0) {
		gt_cli_error("the injection library libgputrace-inject.so was not found (looked at "
		             "%s); set %s=/path/to/libgputrace-inject.so, or see 'gputrace doctor'",
		             tried, GT_ENV_INJECT_LIB);
		return GT_EXIT_UNAVAILABLE;
	}
	gt_status_init(&run.status, !run.o.quiet);
	ret = GT_EXIT_SOFTWARE;
	if (gt_run_build_env(&run) < 0) {
		gt_cli_error("out of memory");
		goto out;
	}
	/* Orphans of the program (daemons, workers whose parent died) are re-parented
	 * to us, so "the whole tree has exited" is something waitpid can tell. */
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0)
		gt_cli_warn("cannot become a subreaper (%s): processes the program leaves behind "
		            "are not waited for",
		            strerror(errno));
	r = gt_signals_install();
	if (r < 0) {
		gt_cli_error("cannot install signal handlers: %s", strerror(-r));
		goto out;
	}
	/* The program starts now but waits at the gate: %p needs its pid, and it
	 * needs the session's address. */
	r = gt_spawn_start(&run.sp, run.o.argv, run.env, run.session_slot,
	                   sizeof(run.session_slot));
	if (r < 0) {
		gt_cli_error("cannot start %s: %s", run.o.argv[0], strerror(-r));
		ret = GT_EXIT_UNAVAILABLE;
		goto out;
	}
	ret = gt_run_resolve_output(&run, run.sp.pid);
	if (ret)
		goto abort_child;
	if (gt_run_open_writer(&run) < 0) {
		ret = GT_EXIT_CANT_CREATE;
		goto abort_child;
	}
	if (run.o.setting[GT_ENVCONF_FLUSH_MS] && run.o.cfg.flush_ms)
		so.flush_interval_ns = run.o.cfg.flush_ms * 1000000ull;
	lv.interval_ns = run.o.live_interval_ns;
	if (run.o.live && gt_live_view_start(&lv, &run.live, &how) != 0)
		gt_cli_warn("--live: %s; no live view", how);
	so.tap = gt_live_view_tap(run.live);
	r = gt_session_new(run.w, &so, &run.s);
	if (r < 0) {
		gt_cli_error("cannot start the tracing session: %s", strerror(-r));
		ret = GT_EXIT_UNAVAILABLE;
		goto abort_child;
	}
	run.start_ns = gt_now_ns();
	gt_signals_wake(gt_run_wake_session, run.s);
	gt_signals_target(run.sp.pid);
	r = gt_spawn_release(&run.sp, gt_session_address(run.s));
	if (r < 0) {
		gt_run_exec_error(run.o.argv[0], -r);
		ret = (r == -ENOENT) ? GT_EXIT_NOT_FOUND : GT_EXIT_NOT_EXECUTABLE;
		goto out;
	}

	gt_run_wait_tree(&run);
	if (!run.main_done) {
		/* The user stopped waiting before the program itself was reaped: impossible
		 * by construction, but never report a status we do not have. */
		run.main_status = 0;
	}
	gt_run_finish_collection(&run);
	gt_live_view_stop(run.live);
	run.live = NULL;
	gt_status_clear(&run.status);
	status = gt_run_program_status(&run);
	if (!run.trace_err && run.o.delay_ns) {
		/* --delay: the trace rewritten without the activity of the first delay_ns */
		struct gt_transform_window win = {.from_ns = run.start_ns + run.o.delay_ns};

		r = gt_transform_file(run.path, run.path, gt_transform_window, &win, NULL, NULL,
		                      NULL);
		if (r < 0)
			gt_cli_warn("--delay: could not trim %s (%s); it holds the whole run",
			            run.path, strerror(-r));
	}
	if (run.trace_err) {
		gt_run_trace_error(&run);
		/* Keep the program's failure if it failed; else make the loss visible. */
		ret = status ? status : GT_EXIT_IO;
		goto out;
	}
	ret = gt_run_after_trace(&run);
	if (ret == GT_EXIT_OK && run.o.view.requested)
		ret = gt_cli_view(run.path, &run.o.view, "run");
	if (status || ret == GT_EXIT_OK)
		ret = status;
	goto out;

abort_child:
	gt_spawn_abort(&run.sp);
out:
	gt_status_clear(&run.status);
	run_free(&run);
	return ret;
}
