/* gputrace run while the program runs: the trace's writer and header, the session, the loop
 * that drains every traced process and reaps every child until the whole process tree has
 * exited (--duration ends the recording on the way), and the program's exit status. Runs in
 * the CLI process. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "clock.h"
#include "cuda-probe.h"
#include "options.h"
#include "run.h"

/* argv joined by spaces, shell-quoted where needed, for the trace header. */
static void join_cmdline(char *out, size_t bytes, char *const argv[])
{
	size_t o = 0;

	out[0] = '\0';
	for (size_t i = 0; argv[i] && o + 4 < bytes; i++) {
		const char *a = argv[i];
		bool plain = *a && strspn(a, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
		                             "0123456789_./=:,+-@%") == strlen(a);

		if (i)
			out[o++] = ' ';
		if (!plain)
			out[o++] = '\'';
		for (; *a && o + 6 < bytes; a++) {
			if (*a == '\'' && !plain) {
				memcpy(out + o, "'\\''", 4);
				o += 4;
			} else {
				out[o++] = *a;
			}
		}
		if (!plain)
			out[o++] = '\'';
		out[o] = '\0';
	}
}

/* Open the writer (to PATH.tmp-<pid>) with what the CLI knows for the header.
 */
int gt_run_open_writer(struct run *run)
{
	/* the drain compresses, a thread writes: disk latency never stops the drain; at the
	 * end, what is left is waited for as long as the writing moves */
	struct gt_writer_options wo = {.queue_bytes = (size_t)run->o.cfg.write_queue_bytes,
	                               .stall_ns = run->o.cfg.write_timeout_ns};
	struct gt_cuda_probe cu;
	struct gt_trace_info info = {
	        .clock_id = GT_CLOCK_MONOTONIC,
	        .hostname = run->host,
	        .cmdline = run->cmdline,
	        .tool_version = GT_VERSION,
	};
	int r;

	if (gethostname(run->host, sizeof(run->host)) < 0)
		run->host[0] = '\0';
	run->host[sizeof(run->host) - 1] = '\0';
	join_cmdline(run->cmdline, sizeof(run->cmdline), run->o.argv);
	/* The driver's versions cost a dlopen and no cuInit; CUPTI's are the
	 * library's. */
	gt_cuda_probe_driver(&cu);
	if (cu.driver_loaded && cu.driver_version) {
		gt_cuda_version_string(cu.driver_version, run->cuda, sizeof(run->cuda));
		info.cuda_version = run->cuda;
	}
	if (gt_nvidia_module_version(run->driver, sizeof(run->driver)))
		info.driver_version = run->driver;
	info.start_realtime_ns = gt_clock_ns(CLOCK_REALTIME);
	info.start_trace_ns = gt_now_ns();
	r = gt_writer_open(run->path, &info, &wo, &run->w);
	if (r < 0)
		gt_cli_error("cannot create %s: %s; check that the directory exists and is "
		             "writable, or choose another with -o",
		             run->path, strerror(-r));
	return r;
}

void gt_run_exec_error(const char *prog, int err)
{
	if (err == ENOENT && !strchr(prog, '/'))
		gt_cli_error("%s: command not found (not in PATH)", prog);
	else if (err == ENOENT)
		gt_cli_error("%s: no such file", prog);
	else
		gt_cli_error("%s: cannot execute: %s", prog, strerror(err));
}

/* Reap every child that has exited; the session learns each status. */
static void reap(struct run *run)
{
	for (;;) {
		int st;
		pid_t p = waitpid(-1, &st, WNOHANG);

		if (p > 0) {
			if (run->s)
				gt_session_process_exited(run->s, p, st);
			if (p == run->sp.pid) {
				run->main_done = true;
				run->main_status = st;
			}
			continue;
		}
		if (p < 0 && errno == EINTR)
			continue;
		if (p < 0 && errno == ECHILD)
			run->tree_done = true;
		return;
	}
}

/* From the signal handlers: end the session's sleep so a child's exit or a signal is
 * handled at once. */
void gt_run_wake_session(void *ctx)
{
	gt_session_stop(ctx);
}

/* End the recording: drain what is left, close the session and the file. */
void gt_run_finish_collection(struct run *run)
{
	int r;

	if (run->s) {
		gt_signals_wake(NULL, NULL);
		gt_session_stats(run->s, &run->last);
		gt_session_free(run->s);
		run->s = NULL;
	}
	if (run->w) {
		/* everything the file holds: the drained records and those the session wrote
		 * itself (processes, their ends, clock anchors, notices) */
		const struct gt_trace_counts *c = gt_writer_counts(run->w);

		run->file_records = 0;
		for (unsigned t = 0; t < GT_REC_MAX; t++)
			run->file_records += c->records[t];
		r = gt_writer_close(run->w);
		run->w = NULL;
		if (r < 0 && !run->trace_err)
			run->trace_err = r;
	}
}

uint64_t gt_run_file_bytes(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 ? (uint64_t)st.st_size : 0;
}

/* Drain and wait until the whole process tree is gone (or the user stops the
 * waiting for processes the program left running). */
void gt_run_wait_tree(struct run *run)
{
	const uint64_t stop_ns =
	        run->o.duration_ns ? run->start_ns + run->o.delay_ns + run->o.duration_ns : 0;
	uint64_t main_done_ns = 0;
	bool noted = false;
	int sig;

	for (;;) {
		uint64_t now;

		if (run->s) {
			int r = gt_session_poll(run->s, RUN_POLL_NS);

			if (r < 0 && r != -EINTR) {
				gt_status_clear(&run->status);
				gt_cli_error("the session failed (%s); the trace ends here and the "
				             "program runs on untraced",
				             strerror(-r));
				run->trace_err = r;
				gt_run_finish_collection(run);
			}
		} else {
			poll(NULL, 0, (int)(RUN_POLL_NS / 1000000));
		}
		reap(run);
		if (run->tree_done)
			return;
		now = gt_now_ns();
		if (gt_signals_take(&sig) && run->main_done) {
			/* The program is gone; a signal now means "stop waiting for the rest". */
			return;
		}
		if (run->main_done && !main_done_ns)
			main_done_ns = now;
		if (main_done_ns && !noted && now - main_done_ns > RUN_LEFTOVER_NOTE_NS &&
		    !run->o.quiet) {
			gt_status_clear(&run->status);
			gt_cli_warn("the program exited; waiting for the processes it left running "
			            "(Ctrl-C stops waiting)");
			noted = true;
		}
		if (stop_ns && run->s && now >= stop_ns) {
			gt_run_finish_collection(run);
			gt_status_clear(&run->status);
			if (!run->o.quiet)
				gt_cli_warn(
				        "--duration reached: recording stopped; the program runs "
				        "on untraced");
		}
		if (run->s) {
			gt_session_stats(run->s, &run->last);
			gt_status_run(&run->status, now - run->start_ns, run->last.records,
			              gt_run_file_bytes(run->tmp_path), run->last.dropped);
		}
	}
}

/* The shell's convention: the exit status, or 128 + the signal that killed the
 * program. */
int gt_run_program_status(const struct run *run)
{
	int st = run->main_status;

	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	if (WIFSIGNALED(st)) {
		if (!run->o.quiet)
			gt_cli_warn("the program was killed by signal %d (%s)%s", WTERMSIG(st),
			            strsignal(WTERMSIG(st)), WCOREDUMP(st) ? ", core dumped" : "");
		return 128 + WTERMSIG(st);
	}
	return GT_EXIT_SOFTWARE;
}
