/* gputrace stats: where the GPU time went in a trace - kernels, API calls, copies, memsets,
 * NVTX ranges, memory, failed calls and losses - as a table, CSV or JSON.
 * Runs in the CLI process. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "gputrace/stats.h"
#include "gputrace/trace.h"
#include "options.h"

static void usage(FILE *out)
{
	fputs("Usage: gputrace stats [options] FILE\n"
	      "\n"
	      "Summarize a trace in the spirit of `nsys stats`: per kernel, API function, copy\n"
	      "kind, memset, NVTX range; memory in use per device and allocations never freed;\n"
	      "API calls that failed; every loss counter. Times are nanoseconds in CSV and JSON.\n"
	      "\n"
	      "Options:\n"
	      "  -r, --report NAME    kernels, api, memcpy, memset, nvtx, memory, errors, losses\n"
	      "                       or all (the default); a comma list, or repeat the option\n"
	      "  -f, --format FORMAT  table (the default), csv or json; -o FILE.csv or FILE.json\n"
	      "                       picks the format too\n"
	      "  -o, --output FILE    write there instead of standard output\n"
	      "  -n, --limit N        at most N rows per table (table format; 0 = all)\n"
	      "      --mangled        keep kernel names as the compiler mangled them\n"
	      "  -h, --help           show this help\n"
	      "\n"
	      "Exit status: 0 ok, 64 bad option, 65 unreadable trace, 66 no such file,\n"
	      "73 output cannot be created, 74 write error.\n",
	      out);
}

/* The format an output name implies, or -1. */
static int format_from_name(const char *path)
{
	const char *dot = strrchr(path, '.');

	if (dot && strcmp(dot, ".csv") == 0)
		return GT_STATS_FORMAT_CSV;
	if (dot && strcmp(dot, ".json") == 0)
		return GT_STATS_FORMAT_JSON;
	return -1;
}

int cmd_stats(int argc, char **argv)
{
	enum {
		OPT_MANGLED = 256
	};
	static const struct option longopts[] = {
	        {"report", required_argument, NULL, 'r'},
	        {"format", required_argument, NULL, 'f'},
	        {"output", required_argument, NULL, 'o'},
	        {"limit", required_argument, NULL, 'n'},
	        {"mangled", no_argument, NULL, OPT_MANGLED},
	        {"help", no_argument, NULL, 'h'},
	        {NULL, 0, NULL, 0},
	};
	struct gt_stats_options opts = {0};
	const char *output = NULL, *errmsg = NULL, *path;
	struct gt_reader *r = NULL;
	bool have_format = false;
	FILE *out = stdout;
	unsigned bits;
	uint64_t n;
	int c, ret, status = GT_EXIT_OK;

	/* options may follow the file name ("gputrace stats run.gtrace -r kernels") */
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":r:f:o:n:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'r':
			if (gt_stats_parse_reports(optarg, &bits) < 0) {
				gt_cli_error(
				        "stats: unknown report '%s'; choose from kernels, api, "
				        "memcpy, memset, nvtx, memory, errors, losses, all",
				        optarg);
				return GT_EXIT_USAGE;
			}
			opts.reports |= bits;
			break;
		case 'f':
			if (gt_stats_parse_format(optarg, &opts.format) < 0) {
				gt_cli_error(
				        "stats: unknown format '%s'; choose table, csv or json",
				        optarg);
				return GT_EXIT_USAGE;
			}
			have_format = true;
			break;
		case 'o':
			output = optarg;
			break;
		case 'n':
			if (gt_opt_uint(optarg, 0, UINT32_MAX, &n) < 0) {
				gt_cli_error("stats: --limit takes a number of rows, not '%s'",
				             optarg);
				return GT_EXIT_USAGE;
			}
			opts.limit = (unsigned)n;
			break;
		case OPT_MANGLED:
			opts.mangled = true;
			break;
		case 'h':
			usage(stdout);
			return GT_EXIT_OK;
		default:
			return gt_cli_bad_option("stats", c, argv);
		}
	}
	if (optind >= argc) {
		gt_cli_error("stats: which trace? usage: gputrace stats [options] FILE");
		return GT_EXIT_USAGE;
	}
	if (argc - optind > 1) {
		gt_cli_error("stats: unexpected argument '%s'; it takes one trace file",
		             argv[optind + 1]);
		return GT_EXIT_USAGE;
	}
	path = argv[optind];
	if (!have_format && output && format_from_name(output) >= 0)
		opts.format = (unsigned)format_from_name(output);

	ret = gt_reader_open(path, &r, &errmsg);
	if (ret < 0) {
		gt_cli_error("stats: cannot read %s: %s", path, errmsg ? errmsg : strerror(-ret));
		return ret == -ENOENT ? GT_EXIT_NO_INPUT : GT_EXIT_BAD_TRACE;
	}
	if (output && strcmp(output, "-") != 0) {
		out = fopen(output, "w");
		if (!out) {
			gt_cli_error("stats: cannot create %s: %s", output, strerror(errno));
			status = GT_EXIT_CANT_CREATE;
			goto out;
		}
	}
	ret = gt_stats_report(r, out, &opts, &errmsg);
	if (out != stdout && fclose(out) != 0 && ret == 0) {
		ret = -EIO;
		errmsg = "could not write the report";
	}
	if (ret < 0) {
		gt_cli_error("stats: %s: %s", output && strcmp(output, "-") ? output : path,
		             errmsg ? errmsg : strerror(-ret));
		status = ret == -EIO      ? GT_EXIT_IO
		         : ret == -ENOMEM ? GT_EXIT_SOFTWARE
		                          : GT_EXIT_BAD_TRACE;
	}
out:
	gt_reader_close(r);
	return status;
}
