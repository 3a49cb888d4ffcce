/* gputrace run, by stage: the options and the program's environment (run-options.c), the
 * writer, the session and the wait for the whole process tree (run-wait.c), and what follows
 * the run - the summary, --stats, --export (run-summary.c); cmd-run.c runs them in order.
 * Runs in the CLI process. */
#ifndef GPUTRACE_CLI_RUN_H
#define GPUTRACE_CLI_RUN_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "env.h"
#include "envconf.h"
#include "gputrace/trace.h"
#include "session.h"
#include "spawn.h"
#include "status-line.h"
#include "view.h"

struct gt_live_view;

#define RUN_DEFAULT_OUTPUT   "gputrace-%n"
#define RUN_EXTENSION        ".gtrace"
#define RUN_POLL_NS          100000000ull /* longest the loop sleeps: bounds exit-detection delay */
#define RUN_LEFTOVER_NOTE_NS 1000000000ull /* program gone, tree not: say so after this */
#define RUN_MAX_SEQ          100000u
#define RUN_MAX_DURATION_NS  (1000ull * 24 * 3600 * 1000000000ull)

struct run_opts {
	const char *output; /* pattern, ".gtrace" appended when missing */
	bool force, quiet, stats;
	/* The options that are GPUTRACE_* settings: checked by the injection library's own parser
	 * (src/settings/envconf.c) and handed to the program as given; NULL: the library's default.
	 */
	const char *setting[GT_ENVCONF_MAX];
	struct gt_envconf cfg; /* the same settings parsed, for what the CLI itself needs (its
	                        * writer's queue: --write-queue; its limit at the end:
	                        * GPUTRACE_WRITE_TIMEOUT from the CLI's environment) */
	const char *export_name;
	uint64_t delay_ns, duration_ns;
	char **argv;              /* the program and its arguments */
	struct gt_view_opts view; /* --view[=PORT]: serve the trace to the Perfetto UI after */
	bool view_port_given;     /* --view=PORT rather than a bare --view */
	bool live;                /* --live: the live view while the program runs */
	const char *pytorch;      /* --pytorch[=shapes]: "on" or "shapes"; NULL: not asked */
	char pytorch_hook[PATH_MAX]; /* --pytorch: the folder of its sitecustomize.py */
	uint64_t live_interval_ns;
};

/* Everything a run holds; freed in one place. */
struct run {
	struct run_opts o;
	char pattern[PATH_MAX];
	char path[PATH_MAX]; /* the trace */
	char tmp_path[PATH_MAX + 32];
	char inject[PATH_MAX];
	char cmdline[8192];
	char host[256];
	char driver[64], cuda[16];
	char **env; /* the program's environment; strings in env_store or environ */
	char *env_store[24];
	size_t env_nstore;
	char session_slot[sizeof(GT_ENV_SESSION) + 1 + 4096];
	struct gt_spawn sp;
	struct gt_writer *w;
	struct gt_session *s;
	struct gt_session_stats last; /* totals as of the last look (kept after the session) */
	uint64_t file_records;        /* records in the closed file, as `gputrace info` counts */
	uint64_t start_ns;            /* trace clock when the program was let go */
	bool main_done, tree_done;
	int main_status; /* wait status of the program */
	int trace_err;   /* first -errno that spoiled the trace, 0 if none */
	struct gt_status_line status;
	struct gt_live_view *live; /* --live: the view (cli/live-view.h); NULL once stopped */
};

/* ---- options and environment (run-options.c) ---- */

/* Parse argv; returns 0, 1 (help printed), or -EINVAL (reported). */
int gt_run_parse_options(int argc, char **argv, struct run_opts *o);

/* The output pattern with ".gtrace" appended, its syntax checked before anything runs;
 * 0 or -EINVAL (reported). */
int gt_run_prepare_pattern(struct run *run);

/* The trace's final name for the program's pid (%n: the lowest free number); 0 or a
 * GT_EXIT_* code (reported). */
int gt_run_resolve_output(struct run *run, pid_t pid);

/* The program's environment into run->env: ours minus what we set, plus the injection
 * variables and the settings given as options. 0 or -ENOMEM. */
int gt_run_build_env(struct run *run);

/* ---- the writer, the session, the wait (run-wait.c) ---- */

/* Open the writer (to PATH.tmp-<pid>) with what the CLI knows for the header; 0 or -errno
 * (reported). */
int gt_run_open_writer(struct run *run);

/* The one line for a program that could not be executed (errno err). */
void gt_run_exec_error(const char *prog, int err);

/* For the signal handlers: end the session's sleep (ctx: the session). */
void gt_run_wake_session(void *ctx);

/* Drain and wait until the whole process tree is gone, or the user stops waiting for what
 * the program left running; --duration ends the recording on the way. */
void gt_run_wait_tree(struct run *run);

/* End the recording: drain what is left, close the session and the file. */
void gt_run_finish_collection(struct run *run);

/* The shell's convention: the program's exit status, or 128 + the signal that killed it. */
int gt_run_program_status(const struct run *run);

uint64_t gt_run_file_bytes(const char *path);

/* ---- after the run (run-summary.c) ---- */

/* The one error line for run->trace_err: what could not be written, or, for a writing that
 * stopped moving, where the partial file is. */
void gt_run_trace_error(const struct run *run);

/* The summary (or, quiet, the losses alone), --stats and --export, once the file is
 * complete. Returns a GT_EXIT_* code. */
int gt_run_after_trace(struct run *run);

#endif /* GPUTRACE_CLI_RUN_H */
