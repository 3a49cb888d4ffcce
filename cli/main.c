/* gputrace: the command-line front end. Dispatches to one function per subcommand.
 * Runs in the CLI process. */
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
};

static const struct command commands[] = {
        {"run", cmd_run, "trace a program and everything it spawns"},
        {"stats", cmd_stats, "summarize where the GPU time went, in a trace or across ranks"},
        {"advise", cmd_advise, "find what costs time in a trace, and say what to do about it"},
        {"report", cmd_report, "write one HTML page with plots and advice that opens offline"},
        {"diff", cmd_diff, "compare two traces: what got slower, what appeared, what vanished"},
        {"export", cmd_export, "convert a trace to Perfetto, Chrome JSON, CSV or SQLite"},
        {"sql", cmd_sql, "run SQL on a trace (Nsight Systems' SQLite schema)"},
        {"view", cmd_view, "open a trace in the Perfetto UI, served once from this machine"},
        {"merge", cmd_merge, "merge traces (the ranks of a job) into one, on one timeline"},
        {"info", cmd_info, "show a trace's header, processes, devices, counts and losses"},
        {"doctor", cmd_doctor, "check that tracing can work on this machine, and why not"},
};

void gt_cli_error(const char *fmt, ...)
{
	va_list ap;

	fputs("gputrace: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void gt_cli_warn(const char *fmt, ...)
{
	va_list ap;

	fputs("gputrace: warning: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int gt_cli_bad_option(const char *cmd, int c, char **argv)
{
	if (c == ':')
		gt_cli_error("%s: option '%s' needs a value; see 'gputrace %s --help'", cmd,
		             argv[optind - 1], cmd);
	else
		gt_cli_error("%s: unknown option '%s'; see 'gputrace %s --help'", cmd,
		             argv[optind - 1], cmd);
	return GT_EXIT_USAGE;
}

static void usage(FILE *out)
{
	fputs("Usage: gputrace <command> [options] [args]\n"
	      "\n"
	      "A low-overhead CUDA tracer: records kernels, copies, memsets, allocations, API\n"
	      "calls, synchronization and NVTX ranges, and exports traces that open in Perfetto.\n"
	      "\n"
	      "Commands:\n",
	      out);
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(out, "  %-8s %s\n", commands[i].name, commands[i].help);
	fputs("\n"
	      "Options:\n"
	      "  -h, --help     show this help\n"
	      "  -V, --version  show the version\n"
	      "\n"
	      "Run 'gputrace <command> --help' for a command's options.\n",
	      out);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return GT_EXIT_USAGE;
	}
	if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		usage(stdout);
		return GT_EXIT_OK;
	}
	if (strcmp(argv[1], "-V") == 0 || strcmp(argv[1], "--version") == 0) {
		printf("gputrace %s\n", GT_VERSION);
		return GT_EXIT_OK;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (strcmp(argv[1], commands[i].name) == 0)
			return commands[i].fn(argc - 1, argv + 1);
	gt_cli_error("unknown command '%s'; run 'gputrace --help' for the list", argv[1]);
	return GT_EXIT_USAGE;
}
