/* gputrace diff BASE NEW: two traces compared per kernel, API function, copy kind, memset
 * kind and NVTX range, with a headline and, for CI, a gate that fails when NEW regressed
 * (--fail-above PCT). Runs in the CLI process. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "diff.h"
#include "gputrace/trace.h"
#include "options.h"
#include "stats.h"

static void usage(FILE *out)
{
	fputs("Usage: gputrace diff [options] BASE NEW\n"
	      "\n"
	      "Compare two traces: per kernel (demangled), API function, copy kind, memset kind\n"
	      "and NVTX range, the count, total, mean and median time in each and the change,\n"
	      "largest change in total time first; names only in one of them apart; a headline\n"
	      "(GPU time, time per step, launches, API calls, lost records). A trace that lost\n"
	      "records is flagged first. Times are nanoseconds in CSV and JSON.\n"
	      "\n"
	      "Options:\n"
	      "  -f, --format FORMAT   table (the default), csv or json; -o FILE.csv or FILE.json\n"
	      "                        picks the format too\n"
	      "  -o, --output FILE     write there instead of standard output\n"
	      "  -n, --limit N         at most N rows per table (table format; 0 = all)\n"
	      "      --mangled         keep kernel names as the compiler mangled them\n"
	      "      --step NAME       steps are the NVTX ranges named NAME (default: "
	      "ProfilerStep#N,\n"
	      "                        else step, train_step, iteration)\n"
	      "      --fail-above PCT  exit 1 when NEW's metric is more than PCT % above BASE's\n"
	      "      --metric M        gpu-time (the default), step-time (the median step), or "
	      "the\n"
	      "                        name of a kernel, API function, copy kind, memset kind or\n"
	      "                        NVTX range (its total time)\n"
	      "  -h, --help            show this help\n"
	      "\n"
	      "Exit status: 0 ok (no regression beyond --fail-above), 1 NEW regressed beyond it,\n"
	      "64 bad option (or a --metric neither trace has), 65 unreadable trace, 66 no such\n"
	      "file, 70 out of memory, 73 output cannot be created, 74 write error.\n",
	      out);
}

static int format_from_name(const char *path)
{
	const char *dot = strrchr(path, '.');

	if (dot && strcmp(dot, ".csv") == 0)
		return GT_STATS_FORMAT_CSV;
	if (dot && strcmp(dot, ".json") == 0)
		return GT_STATS_FORMAT_JSON;
	return -1;
}

/* Read one side. Returns an exit status. */
static int read_side(struct gt_diff *d, unsigned side, const char *path)
{
	struct gt_reader *r = NULL;
	const char *errmsg = NULL;
	int ret;

	ret = gt_reader_open(path, &r, &errmsg);
	if (ret < 0) {
		gt_cli_error("diff: cannot read %s: %s", path, errmsg ? errmsg : strerror(-ret));
		return ret == -ENOENT ? GT_EXIT_NO_INPUT : GT_EXIT_BAD_TRACE;
	}
	ret = gt_diff_add(d, side, r, path, &errmsg);
	gt_reader_close(r);
	if (ret < 0) {
		gt_cli_error("diff: %s: %s", path, errmsg);
		return ret == -ENOMEM ? GT_EXIT_SOFTWARE : GT_EXIT_BAD_TRACE;
	}
	return GT_EXIT_OK;
}

/* What the gate found, on standard error: CI logs show why a job failed (or passed). */
static void report_gate(const struct gt_diff *d)
{
	const struct gt_diff_gate *g = &d->gate;
	char change[48];

	if (!g->enabled)
		return;
	if (isfinite(g->change_pct))
		snprintf(change, sizeof(change), "%+.2f%%", g->change_pct);
	else
		snprintf(change, sizeof(change), "from nothing to something");
	if (g->regressed)
		gt_cli_error("diff: %s regressed: %s, more than the %g%% allowed", g->metric,
		             change, d->opts.fail_above_pct);
	else
		fprintf(stderr, "gputrace: diff: %s: %s, within the %g%% allowed\n", g->metric,
		        change, d->opts.fail_above_pct);
}

int cmd_diff(int argc, char **argv)
{
	enum {
		OPT_MANGLED = 256,
		OPT_STEP,
		OPT_FAIL_ABOVE,
		OPT_METRIC,
	};
	static const struct option longopts[] = {
	        {"format", required_argument, NULL, 'f'},
	        {"output", required_argument, NULL, 'o'},
	        {"limit", required_argument, NULL, 'n'},
	        {"mangled", no_argument, NULL, OPT_MANGLED},
	        {"step", required_argument, NULL, OPT_STEP},
	        {"fail-above", required_argument, NULL, OPT_FAIL_ABOVE},
	        {"metric", required_argument, NULL, OPT_METRIC},
	        {"help", no_argument, NULL, 'h'},
	        {NULL, 0, NULL, 0},
	};
	struct gt_diff_options opts = {.fail_above_pct = -1};
	const char *output = NULL, *errmsg = NULL;
	struct gt_diff *d = NULL;
	bool have_format = false;
	struct stat sb, sn;
	FILE *out = stdout;
	char *end;
	uint64_t n;
	int c, ret, status = GT_EXIT_OK;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":f:o:n:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'f':
			if (gt_stats_parse_format(optarg, &opts.format) < 0) {
				gt_cli_error("diff: unknown format '%s'; choose table, csv or json",
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
				gt_cli_error("diff: --limit takes a number of rows, not '%s'",
				             optarg);
				return GT_EXIT_USAGE;
			}
			opts.limit = (unsigned)n;
			break;
		case OPT_MANGLED:
			opts.mangled = true;
			break;
		case OPT_STEP:
			if (!*optarg) {
				gt_cli_error("diff: --step takes the name of an NVTX range");
				return GT_EXIT_USAGE;
			}
			opts.step_name = optarg;
			break;
		case OPT_FAIL_ABOVE:
			errno = 0;
			opts.fail_above_pct = strtod(optarg, &end);
			if (errno || end == optarg || *end || !(opts.fail_above_pct >= 0) ||
			    !isfinite(opts.fail_above_pct)) {
				gt_cli_error(
				        "diff: --fail-above takes a percentage (0 or more), not "
				        "'%s'",
				        optarg);
				return GT_EXIT_USAGE;
			}
			break;
		case OPT_METRIC:
			if (!*optarg) {
				gt_cli_error("diff: --metric takes gpu-time, step-time or a name");
				return GT_EXIT_USAGE;
			}
			opts.metric = optarg;
			break;
		case 'h':
			usage(stdout);
			return GT_EXIT_OK;
		default:
			return gt_cli_bad_option("diff", c, argv);
		}
	}
	if (argc - optind != 2) {
		if (argc - optind > 2)
			gt_cli_error("diff: unexpected argument '%s'; it compares two traces",
			             argv[optind + 2]);
		else
			gt_cli_error("diff: which traces? usage: gputrace diff [options] BASE NEW");
		return GT_EXIT_USAGE;
	}
	if (opts.metric && opts.fail_above_pct < 0) {
		gt_cli_error("diff: --metric is what --fail-above checks; give --fail-above PCT");
		return GT_EXIT_USAGE;
	}
	if (stat(argv[optind], &sb) == 0 && stat(argv[optind + 1], &sn) == 0 &&
	    sb.st_dev == sn.st_dev && sb.st_ino == sn.st_ino) {
		gt_cli_error("diff: BASE and NEW are one file (%s and %s)", argv[optind],
		             argv[optind + 1]);
		return GT_EXIT_USAGE;
	}
	if (!have_format && output && format_from_name(output) >= 0)
		opts.format = (unsigned)format_from_name(output);

	if (gt_diff_new(&opts, &d) < 0) {
		gt_cli_error("diff: out of memory");
		return GT_EXIT_SOFTWARE;
	}
	if ((status = read_side(d, GT_DIFF_BASE, argv[optind])) != GT_EXIT_OK ||
	    (status = read_side(d, GT_DIFF_NEW, argv[optind + 1])) != GT_EXIT_OK)
		goto out;
	ret = gt_diff_finish(d, &errmsg);
	if (ret < 0) {
		if (ret == -ENOENT)
			gt_cli_error("diff: --metric %s: %s", opts.metric ? opts.metric : "",
			             errmsg);
		else
			gt_cli_error("diff: %s", errmsg);
		status = ret == -ENOENT ? GT_EXIT_USAGE : GT_EXIT_SOFTWARE;
		goto out;
	}
	if (output && strcmp(output, "-") != 0) {
		out = fopen(output, "w");
		if (!out) {
			gt_cli_error("diff: cannot create %s: %s", output, strerror(errno));
			status = GT_EXIT_CANT_CREATE;
			goto out;
		}
	}
	ret = gt_diff_write(d, out, &errmsg);
	if (out != stdout && fclose(out) != 0 && ret == 0) {
		ret = -EIO;
		errmsg = "could not write the comparison";
	}
	if (ret < 0) {
		gt_cli_error("diff: %s: %s", output && strcmp(output, "-") ? output : "output",
		             errmsg);
		status = ret == -EIO ? GT_EXIT_IO : GT_EXIT_SOFTWARE;
		goto out;
	}
	report_gate(d);
	if (d->gate.regressed)
		status = GT_EXIT_REGRESSED;
out:
	gt_diff_free(d);
	return status;
}
