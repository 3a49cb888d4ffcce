/* Shared declarations of the gputrace CLI: subcommands and exit codes. Runs in the CLI. */
#ifndef GPUTRACE_CLI_H
#define GPUTRACE_CLI_H

/* gputrace's own exit codes (sysexits.h values, so they stay apart from the small codes a
 * traced program usually returns; `run` otherwise exits with the program's status). */
enum gt_exit {
	GT_EXIT_OK = 0,
	GT_EXIT_REGRESSED = 1,        /* diff: NEW regressed beyond --fail-above */
	GT_EXIT_ADVISED = 3,          /* advise: a finding matched --fail-on */
	GT_EXIT_USAGE = 64,           /* bad option or argument */
	GT_EXIT_BAD_TRACE = 65,       /* the trace file is unreadable or corrupt */
	GT_EXIT_DAMAGED = 65,         /* read, but damaged: the output holds what was readable */
	GT_EXIT_BAD_QUERY = 65,       /* SQLite rejected a query (EX_DATAERR too) */
	GT_EXIT_NO_INPUT = 66,        /* an input file does not exist */
	GT_EXIT_UNAVAILABLE = 69,     /* tracing could not start (no injection library, ...) */
	GT_EXIT_SOFTWARE = 70,        /* internal error */
	GT_EXIT_OS_LIMIT = 71,        /* a system limit (merge: more inputs than open files) */
	GT_EXIT_CANT_CREATE = 73,     /* output cannot be created (exists without -f, no space) */
	GT_EXIT_IO = 74,              /* I/O error while writing */
	GT_EXIT_TEMPFAIL = 75,        /* gave up waiting (view: --timeout before the fetch) */
	GT_EXIT_NOT_EXECUTABLE = 126, /* like a shell: program found but not executable */
	GT_EXIT_NOT_FOUND = 127,      /* like a shell: program not found */
};

int cmd_run(int argc, char **argv);
int cmd_stats(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_doctor(int argc, char **argv);
int cmd_sql(int argc, char **argv);
int cmd_view(int argc, char **argv);
int cmd_merge(int argc, char **argv);
int cmd_advise(int argc, char **argv);
int cmd_report(int argc, char **argv);

/* Print "gputrace: <msg>" to stderr, printf-style. The one place the CLI reports errors. */
void gt_cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void gt_cli_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Report what getopt_long() rejected for subcommand `cmd` (c == ':' a missing value, else an
 * unknown option; argv and optind as getopt left them) and return GT_EXIT_USAGE. */
int gt_cli_bad_option(const char *cmd, int c, char **argv);

#endif /* GPUTRACE_CLI_H */
