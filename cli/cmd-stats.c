/* gputrace stats: where the GPU time went in a trace - kernels, API calls, copies, memsets,
 * NVTX ranges, memory, failed calls and losses - as a table, CSV or JSON; and across ranks
 * (several traces, --by, --step): the same split by rank, process, GPU or host, the GPU time
 * broken down, the steps compared and the stragglers. Runs in the CLI process. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "gputrace/trace.h"
#include "options.h"
#include "rankstats.h"
#include "stats.h"

static void usage(FILE *out)
{
	fputs("Usage: gputrace stats [options] FILE...\n"
	      "\n"
	      "Summarize a trace in the spirit of `nsys stats`: per kernel, API function, copy\n"
	      "kind, memset, NVTX range; memory in use per device and allocations never freed;\n"
	      "API calls that failed; every loss counter. Times are nanoseconds in CSV and JSON.\n"
	      "\n"
	      "Across ranks (several traces - the per-rank files of a job - or --by, --step, or a\n"
	      "report below that needs them): the per-name reports split by rank, process, GPU\n"
	      "or host; each one's GPU time broken down into compute, communication (NCCL's\n"
	      "kernels), copies and idle; per training step, each rank's duration and compute\n"
	      "time, the slowest and fastest rank, and the stragglers.\n"
	      "\n"
	      "Options:\n"
	      "  -r, --report NAME    kernels, api, memcpy, memset, nvtx, memory, errors, losses\n"
	      "                       or all (the default); across ranks: breakdown, steps,\n"
	      "                       stragglers, kernels, api, memcpy, memset, nvtx or all;\n"
	      "                       a comma list, or repeat the option\n"
	      "      --by GROUP       rank (the default), process, device or host\n"
	      "      --step NAME      steps are the NVTX ranges named NAME (default: "
	      "ProfilerStep#N,\n"
	      "                       else step, train_step, iteration)\n"
	      "      --min-lag PCT    a step's slowest rank is a straggler when its compute time\n"
	      "                       is at least PCT % above the others' median (default 5)\n"
	      "  -f, --format FORMAT  table (the default), csv or json; -o FILE.csv or FILE.json\n"
	      "                       picks the format too\n"
	      "  -o, --output FILE    write there instead of standard output\n"
	      "  -n, --limit N        at most N rows per table (table format; 0 = all)\n"
	      "      --mangled        keep kernel names as the compiler mangled them\n"
	      "  -h, --help           show this help\n"
	      "\n"
	      "Exit status: 0 ok, 64 bad option (or one file given twice), 65 unreadable trace,\n"
	      "66 no such file, 73 output cannot be created, 74 write error.\n",
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

static const char report_list[] = "kernels, api, memcpy, memset, nvtx, memory, errors, losses, "
                                  "breakdown, steps, stragglers, all";

/* Open output (NULL or "-": stdout). Returns the stream or NULL with the exit status. */
static FILE *open_output(const char *output, int *status)
{
	FILE *out;

	if (!output || strcmp(output, "-") == 0)
		return stdout;
	out = fopen(output, "w");
	if (!out) {
		gt_cli_error("stats: cannot create %s: %s", output, strerror(errno));
		*status = GT_EXIT_CANT_CREATE;
	}
	return out;
}

/* The reports of one trace. */
static int stats_one(const char *path, const char *output, const struct gt_stats_options *opts)
{
	const char *errmsg = NULL;
	struct gt_reader *r = NULL;
	FILE *out;
	int ret, status = GT_EXIT_OK;

	ret = gt_reader_open(path, &r, &errmsg);
	if (ret < 0) {
		gt_cli_error("stats: cannot read %s: %s", path, errmsg ? errmsg : strerror(-ret));
		return ret == -ENOENT ? GT_EXIT_NO_INPUT : GT_EXIT_BAD_TRACE;
	}
	out = open_output(output, &status);
	if (!out)
		goto out;
	ret = gt_stats_report(r, out, opts, &errmsg);
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

/* Refuse a file given twice (by device and inode: two names of one file too). */
static int check_distinct(char **paths, int n)
{
	struct stat *st = calloc((size_t)n, sizeof(*st));
	int status = GT_EXIT_OK;

	if (!st)
		return GT_EXIT_SOFTWARE;
	for (int i = 0; i < n && status == GT_EXIT_OK; i++) {
		if (stat(paths[i], &st[i]) < 0) {
			st[i].st_ino = 0; /* reported when it is read */
			continue;
		}
		for (int j = 0; j < i; j++)
			if (st[j].st_ino && st[j].st_dev == st[i].st_dev &&
			    st[j].st_ino == st[i].st_ino) {
				gt_cli_error("stats: %s is given twice (as %s and %s)", paths[i],
				             paths[j], paths[i]);
				status = GT_EXIT_USAGE;
				break;
			}
	}
	free(st);
	return status;
}

/* The reports across ranks, over the traces paths[0..n). */
static int stats_ranks(char **paths, int n, const char *output,
                       const struct gt_rankstats_options *opts)
{
	struct gt_rankstats *rs = NULL;
	const char *errmsg = NULL;
	FILE *out = NULL;
	int ret, status = check_distinct(paths, n);

	if (status != GT_EXIT_OK)
		return status;
	ret = gt_rankstats_new(opts, &rs);
	if (ret < 0) {
		gt_cli_error("stats: out of memory");
		return GT_EXIT_SOFTWARE;
	}
	for (int i = 0; i < n; i++) {
		struct gt_reader *r = NULL;

		ret = gt_reader_open(paths[i], &r, &errmsg);
		if (ret < 0) {
			gt_cli_error("stats: cannot read %s: %s", paths[i],
			             errmsg ? errmsg : strerror(-ret));
			status = ret == -ENOENT ? GT_EXIT_NO_INPUT : GT_EXIT_BAD_TRACE;
			goto out;
		}
		ret = gt_rankstats_add(rs, r, paths[i], &errmsg);
		gt_reader_close(r);
		if (ret < 0) {
			gt_cli_error("stats: %s: %s", paths[i], errmsg);
			status = ret == -ENOMEM ? GT_EXIT_SOFTWARE : GT_EXIT_BAD_TRACE;
			goto out;
		}
	}
	if (gt_rankstats_finish(rs) < 0) {
		gt_cli_error("stats: out of memory");
		status = GT_EXIT_SOFTWARE;
		goto out;
	}
	if (rs->split_gpu)
		gt_cli_warn(
		        "stats: a GPU's activity is in several of these traces; its busy and "
		        "idle time are each trace's, added up (merge the traces for one union)");
	out = open_output(output, &status);
	if (!out)
		goto out;
	ret = gt_rankstats_write(rs, out, &errmsg);
	if (out != stdout && fclose(out) != 0 && ret == 0) {
		ret = -EIO;
		errmsg = "could not write the report";
	}
	if (ret < 0) {
		gt_cli_error("stats: %s: %s", output && strcmp(output, "-") ? output : "output",
		             errmsg);
		status = ret == -EIO ? GT_EXIT_IO : GT_EXIT_SOFTWARE;
	}
out:
	gt_rankstats_free(rs);
	return status;
}

int cmd_stats(int argc, char **argv)
{
	enum {
		OPT_MANGLED = 256,
		OPT_BY,
		OPT_STEP,
		OPT_MIN_LAG,
	};
	static const struct option longopts[] = {
	        {"report", required_argument, NULL, 'r'},
	        {"format", required_argument, NULL, 'f'},
	        {"output", required_argument, NULL, 'o'},
	        {"limit", required_argument, NULL, 'n'},
	        {"mangled", no_argument, NULL, OPT_MANGLED},
	        {"by", required_argument, NULL, OPT_BY},
	        {"step", required_argument, NULL, OPT_STEP},
	        {"min-lag", required_argument, NULL, OPT_MIN_LAG},
	        {"help", no_argument, NULL, 'h'},
	        {NULL, 0, NULL, 0},
	};
	struct gt_stats_options opts = {0};
	struct gt_rankstats_options ro = {.min_lag_pct = GT_RANKSTATS_MIN_LAG_PCT};
	const char *output = NULL, *by = NULL;
	char *end;
	bool have_format = false, min_lag = false, ranks;
	char **reports;
	int nreports = 0;
	unsigned bits;
	uint64_t n;
	int c, status;

	reports = calloc((size_t)argc + 1, sizeof(*reports));
	if (!reports)
		return GT_EXIT_SOFTWARE;
	/* options may follow the file name ("gputrace stats run.gtrace -r kernels") */
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":r:f:o:n:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'r':
			if (gt_stats_parse_reports(optarg, &bits) < 0 &&
			    gt_rankstats_parse_reports(optarg, &bits) < 0) {
				gt_cli_error("stats: unknown report '%s'; choose from %s", optarg,
				             report_list);
				status = GT_EXIT_USAGE;
				goto out;
			}
			reports[nreports++] = optarg;
			break;
		case 'f':
			if (gt_stats_parse_format(optarg, &opts.format) < 0) {
				gt_cli_error(
				        "stats: unknown format '%s'; choose table, csv or json",
				        optarg);
				status = GT_EXIT_USAGE;
				goto out;
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
				status = GT_EXIT_USAGE;
				goto out;
			}
			opts.limit = (unsigned)n;
			break;
		case OPT_MANGLED:
			opts.mangled = true;
			break;
		case OPT_BY:
			if (gt_rankstats_parse_by(optarg, &ro.by) < 0) {
				gt_cli_error("stats: --by takes rank, process, device or host, not "
				             "'%s'",
				             optarg);
				status = GT_EXIT_USAGE;
				goto out;
			}
			by = optarg;
			break;
		case OPT_STEP:
			if (!*optarg) {
				gt_cli_error("stats: --step takes the name of an NVTX range");
				status = GT_EXIT_USAGE;
				goto out;
			}
			ro.step_name = optarg;
			break;
		case OPT_MIN_LAG:
			errno = 0;
			ro.min_lag_pct = strtod(optarg, &end);
			if (errno || end == optarg || *end || !(ro.min_lag_pct >= 0) ||
			    ro.min_lag_pct > 1e9) {
				gt_cli_error("stats: --min-lag takes a percentage (0 or more), not "
				             "'%s'",
				             optarg);
				status = GT_EXIT_USAGE;
				goto out;
			}
			min_lag = true;
			break;
		case 'h':
			usage(stdout);
			status = GT_EXIT_OK;
			goto out;
		default:
			status = gt_cli_bad_option("stats", c, argv);
			goto out;
		}
	}
	if (optind >= argc) {
		gt_cli_error("stats: which trace? usage: gputrace stats [options] FILE...");
		status = GT_EXIT_USAGE;
		goto out;
	}
	if (!have_format && output && format_from_name(output) >= 0)
		opts.format = (unsigned)format_from_name(output);

	/* one trace, unless several are given or something only the analysis across ranks has
	 * is asked for */
	ranks = argc - optind > 1 || by || ro.step_name || min_lag;
	for (int i = 0; i < nreports && !ranks; i++)
		ranks = gt_stats_parse_reports(reports[i], &bits) < 0;
	if (!ranks) {
		for (int i = 0; i < nreports; i++) {
			gt_stats_parse_reports(reports[i], &bits);
			opts.reports |= bits;
		}
		status = stats_one(argv[optind], output, &opts);
		goto out;
	}
	for (int i = 0; i < nreports; i++) {
		if (gt_rankstats_parse_reports(reports[i], &bits) < 0) {
			gt_cli_error("stats: '%s': across ranks the reports are breakdown, steps, "
			             "stragglers, kernels, api, memcpy, memset, nvtx and all; "
			             "memory, errors and losses are of one trace",
			             reports[i]);
			status = GT_EXIT_USAGE;
			goto out;
		}
		ro.reports |= bits;
	}
	if ((ro.by == GT_RANKSTATS_BY_DEVICE || ro.by == GT_RANKSTATS_BY_HOST) &&
	    ro.reports != GT_RANKSTATS_REPORT_ALL &&
	    (ro.reports & (GT_RANKSTATS_REPORT_STEPS | GT_RANKSTATS_REPORT_STRAGGLERS))) {
		gt_cli_error("stats: steps and stragglers are per rank or process, not --by %s",
		             by);
		status = GT_EXIT_USAGE;
		goto out;
	}
	if (ro.by == GT_RANKSTATS_BY_DEVICE && ro.reports != GT_RANKSTATS_REPORT_ALL &&
	    (ro.reports & (GT_RANKSTATS_REPORT_API | GT_RANKSTATS_REPORT_NVTX))) {
		gt_cli_error("stats: API calls and NVTX ranges belong to no GPU: not --by device");
		status = GT_EXIT_USAGE;
		goto out;
	}
	ro.format = opts.format;
	ro.limit = opts.limit;
	ro.mangled = opts.mangled;
	status = stats_ranks(argv + optind, argc - optind, output, &ro);
out:
	free(reports);
	return status;
}
