/* What every command that reads traces or writes files shares: one parsed options struct
 * (the common options and the window), one way to open a trace (its errors, its damage, its
 * window) and one way to open, fill and finish an output (src/output/output.h), each
 * reporting its errors once with the exit status docs/cli.md gives. Runs in the CLI. */
#ifndef GPUTRACE_CLI_COMMON_H
#define GPUTRACE_CLI_COMMON_H

#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "window-opts.h"

struct gt_output;

/* The common options a command takes. */
enum gt_cli_common {
	GT_CLI_OUTPUT = 1u << 0,  /* -o, --output FILE */
	GT_CLI_FORMAT = 1u << 1,  /* -f, --format NAME */
	GT_CLI_QUIET = 1u << 2,   /* -q, --quiet */
	GT_CLI_LIMIT = 1u << 3,   /* -n, --limit N */
	GT_CLI_MANGLED = 1u << 4, /* --mangled */
	GT_CLI_STEP = 1u << 5,    /* --step NAME */
	GT_CLI_WINDOW = 1u << 6,  /* --from --to --nvtx --pid --rank --device --stream */
};

/* getopt_long codes of the common long-only options (below the window's, 0x200). */
enum {
	GT_CLI_OPT_MANGLED = 0x180,
	GT_CLI_OPT_STEP,
};

/* A command, as the common parser sees it. */
struct gt_cli_cmd {
	const char *name;      /* "export": the prefix of its messages */
	const char *synopsis;  /* "gputrace export FILE -f FORMAT [options]" */
	unsigned common;       /* enum gt_cli_common */
	const char *shortopts; /* its own short options ("r:"), without ':' first; may be NULL */
	const struct option *longopts; /* its own, {NULL} terminated; may be NULL */
	/* Take its own option c (value arg). Returns GT_EXIT_OK, or an exit status with the
	 * error printed. */
	int (*option)(void *ctx, int c, const char *arg);
	void (*usage)(FILE *out);
	int min_args, max_args;   /* positional arguments; max_args -1: any number */
	const char *args_what;    /* "trace file", for "no trace file" and "one ... at a time" */
	const char *args_missing; /* instead of "no <args_what>": "which traces?" */
	const char *args_extra;   /* instead of "one <args_what> at a time": why the first
	                           * argument too many is refused ("it compares two traces") */
};

/* One command's parsed options. */
struct gt_cli {
	const struct gt_cli_cmd *cmd;
	const char *output; /* -o as given; NULL: not given */
	const char *format; /* -f as given; NULL: not given */
	const char *step;   /* --step */
	bool quiet;
	bool mangled;
	bool have_limit;
	uint64_t limit;
	struct gt_cli_window win; /* the window options (resolved per trace when opened) */
	char **args;              /* the positional arguments */
	int nargs;
	bool help; /* --help was given and printed: the command returns GT_EXIT_OK */
};

/* Parse argv (argv[0] the command's name) for cmd: the common options cmd->common names,
 * then cmd's own through cmd->option(ctx, ...), options and arguments in any order ("--"
 * ends the options). Returns GT_EXIT_OK (check cli->help) or GT_EXIT_USAGE with the error
 * printed. */
int gt_cli_parse(struct gt_cli *cli, const struct gt_cli_cmd *cmd, void *ctx, int argc,
                 char **argv);

/* A trace opened by gt_cli_trace_open. */
struct gt_cli_trace {
	const char *path;
	struct gt_reader *r;             /* owned */
	struct gt_window_filter *filter; /* the window on r, NULL without one; owned */
	struct gt_cli_window win;        /* cli->win resolved against this trace */
	bool damaged;                    /* chunks or records were skipped: see the line */
};

/* Open the trace `path` for cli's command: it exists (66), reads (65; 66 unreadable), and
 * the window of cli, when one was given, is resolved against it (t->win) and checked to
 * select something that exists (64, naming what does). Prints what is wrong; returns a
 * GT_EXIT_* code. */
int gt_cli_trace_open(const struct gt_cli *cli, const char *path, struct gt_cli_trace *t);

/* The filters of window w name processes, ranks, devices and streams that r (the trace at
 * path) holds; else print which one it does not, and what it does hold, naming cmd. Rewinds
 * r. Returns a GT_EXIT_* code (64 for a filter that selects nothing). */
int gt_cli_window_check(const char *cmd, struct gt_reader *r, const char *path,
                        const struct gt_window *w);

/* Put t's window on its reader (rewound), for a command that reads the trace itself;
 * exports hand t->win.w to gt_export_window instead. Returns a GT_EXIT_* code. */
int gt_cli_trace_filter(const struct gt_cli *cli, struct gt_cli_trace *t);

/* After the trace was read: the one line that says what a damaged trace lost, the same for
 * every command and in the words of every output ("CMD: T is damaged: 1 chunk (611 bytes)
 * and 0 malformed records skipped", gt_catalog_damage_text); nothing for a whole trace. A
 * trace without a footer (its writer was interrupted) gets a line saying so too; one cut
 * short whose every chunk was read is not damaged: that line alone and GT_EXIT_OK. Sets
 * t->damaged. Returns GT_EXIT_OK, or GT_EXIT_DAMAGED when something was skipped: the command
 * finishes its output, then exits with it (docs/cli.md, "Damage" and "Exit status"). */
int gt_cli_trace_damage(const struct gt_cli *cli, struct gt_cli_trace *t);

/* The same line for a reader status that is not a gt_cli_trace's (view's own export), naming
 * cmd. Returns GT_EXIT_OK or GT_EXIT_DAMAGED. */
int gt_cli_damage_report(const char *cmd, const char *path, const struct gt_reader_status *rs);

/* Close what gt_cli_trace_open opened; accepts a zeroed struct. */
void gt_cli_trace_close(struct gt_cli_trace *t);

/* A report of one trace, written to out: an -errno (-EIO when writing failed), *errmsg set
 * where it can say more. */
typedef int (*gt_cli_report_fn)(void *ctx, struct gt_reader *r, FILE *out, const char **errmsg);

/* cli's one trace through report(): the output opened first (refused before the trace is
 * read, its temporary there while it is), the trace opened with its window, the report
 * written, the damage told, and "CMD: PATH: why" when it failed. Returns an exit status. */
int gt_cli_report_one(const struct gt_cli *cli, const char *cmd, gt_cli_report_fn report,
                      void *ctx);

/* What a command that reads several traces into one analysis does with them: add() reads
 * one (an -errno, *errmsg set where it can say more), finish() once all are in (< 0: out of
 * memory). */
struct gt_cli_traces_sink {
	int (*add)(void *ctx, struct gt_reader *r, const char *path, const char **errmsg);
	int (*finish)(void *ctx);
};

/* Open every trace of cli in turn, with its window, hand it to sink->add(ctx, ...), tell
 * its damage, then call sink->finish(ctx). Returns an exit status (errors printed); *damage
 * becomes GT_EXIT_DAMAGED when a trace was damaged. */
int gt_cli_add_traces(const struct gt_cli *cli, const struct gt_cli_traces_sink *sink, void *ctx,
                      int *damage);

/* --step NAME named no NVTX range of path: print an error that lists the ranges path has.
 * Returns GT_EXIT_USAGE. */
int gt_cli_no_such_step(const struct gt_cli *cli, const char *path, const char *name);

/* Whether two of cli's positional arguments name one file (the same device and inode: two
 * names of one file too): then *first and *again are their indexes, first < again. Arguments
 * that cannot be read are left to whoever opens them. */
bool gt_cli_args_repeat(const struct gt_cli *cli, int *first, int *again);

/* Open the output `path` (src/output/output.h) with flags, refusing cli's positional
 * arguments (the inputs) as its target. Prints what is wrong; returns GT_EXIT_OK, 64 (the
 * output is an input, or "-" where a file is needed) or 73 (cannot be created there). */
int gt_cli_output_open(const struct gt_cli *cli, const char *path, unsigned flags,
                       struct gt_output **ret);

/* The exit status for what gt_output_open (or gt_export_output_open) refused: 64 the output
 * is an input or "-" where a file is needed, 70 out of memory, 73 anything else (it cannot be
 * created there). For a command that prints the refusal in words of its own. */
int gt_cli_output_status(int err);

/* Standard output, or the output's one file as a stream (closed by gt_cli_output_finish or
 * fclose). Prints what is wrong; returns GT_EXIT_OK or 73. */
int gt_cli_output_stream(const struct gt_cli *cli, struct gt_output *o, FILE **ret);

/* Finish an output: close the stream (may be NULL, or stdout, which is flushed), then put
 * every file in place when status is GT_EXIT_OK (o may be NULL: nothing to commit). Returns
 * status, or 74 when writing or renaming failed. gt_output_free(o) afterwards removes what
 * was not put in place. */
int gt_cli_output_finish(const struct gt_cli *cli, struct gt_output *o, FILE *stream, int status);

/* A report's output (stats, diff): -o, else standard output, opened (gt_cli_output_open) as
 * a stream (gt_cli_output_stream), its temporary removed by a signal from here on. Finish it
 * with gt_cli_output_finish, whatever happened. Returns a GT_EXIT_* code. */
int gt_cli_report_open(const struct gt_cli *cli, struct gt_output **o, FILE **out);

/* From here on a SIGINT, SIGTERM, SIGHUP or SIGXFSZ removes every output's temporaries
 * before the CLI dies of it (signals ignored on entry stay ignored). */
void gt_cli_output_signals(void);

/* The format of a report (stats, diff): -f table|csv|json, else what -o's extension says
 * (.csv, .json, any case), else a table. Prints what is wrong; returns a GT_EXIT_* code. */
int gt_cli_report_format(const struct gt_cli *cli, unsigned *format);

/* The exit status for an exporter's or reader's -errno, writing through the output o (may
 * be NULL): a file of o that could not be created (gt_output_create_error: 73, or 64 when it
 * is an input), the trace's fault (65: damage, a trace without what was asked, e.g. ranks to
 * split by), or a write that failed (74). */
int gt_cli_export_status(const struct gt_output *o, int err);

#endif /* GPUTRACE_CLI_COMMON_H */
