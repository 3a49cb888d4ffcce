/* gputrace export: convert a .gtrace to another format through the exporter
 * table (exporters/formats/registry.c), with a progress bar on a terminal. Runs in the
 * CLI process. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "clock.h"
#include "exporter.h"
#include "gputrace/trace.h"
#include "options.h"
#include "status-line.h"
#include "window-opts.h"

#define EXPORT_EXTENSION         ".gtrace"
#define EXPORT_PROGRESS_AFTER_NS 300000000ull /* short exports never show a bar */

struct progress {
	struct gt_status_line line;
	uint64_t start_ns;
	uint64_t origin_ns; /* the trace's start, for the files' time ranges */
	bool quiet;
};

static void on_progress(void *ctx, uint64_t done, uint64_t total)
{
	struct progress *p = ctx;

	if (gt_now_ns() - p->start_ns >= EXPORT_PROGRESS_AFTER_NS)
		gt_status_progress(&p->line, "exporting", done, total);
}

/* A piece of a perfetto export cut by --max-size: its name and what it holds. */
static void on_file(void *ctx, const char *path, uint64_t from_ns, uint64_t to_ns)
{
	struct progress *p = ctx;

	if (p->quiet)
		return;
	gt_status_clear(&p->line);
	fprintf(stderr, "gputrace:   %s: %.3f s to %.3f s\n", path,
	        from_ns > p->origin_ns ? (double)(from_ns - p->origin_ns) / 1e9 : 0.0,
	        to_ns > p->origin_ns ? (double)(to_ns - p->origin_ns) / 1e9 : 0.0);
}

static void usage(FILE *out)
{
	const struct gt_exporter_ops *const *e;

	fputs("Usage: gputrace export FILE -f FORMAT [options]\n"
	      "\n"
	      "Convert a trace to another format. Formats:\n",
	      out);
	for (e = gt_exporter_list(); *e; e++)
		fprintf(out, "  %-10s %s (%s)\n", (*e)->name, (*e)->help, (*e)->extension);
	fputs("\n"
	      "Options:\n"
	      "  -f, --format FORMAT  output format (required)\n"
	      "  -o, --output OUT     output file (default: FILE with the format's "
	      "extension;\n"
	      "                       - for standard output); an existing file is "
	      "replaced\n"
	      "      --max-size SIZE  split the output into numbered files of at most SIZE, "
	      "e.g.\n"
	      "                       500M (chrome: in file order; perfetto: by time, each "
	      "file\n"
	      "                       a whole trace of its own)\n"
	      "      --split ranks    chrome: one file per rank, OUT/rank-N.pt.trace.json, "
	      "as\n"
	      "                       Holistic Trace Analysis and TensorBoard read a job\n"
	      "                       (default OUT: FILE without .gtrace, plus -ranks)\n"
	      "      --step NAME      chrome: the NVTX range that marks a training step, "
	      "written\n"
	      "                       as ProfilerStep#N (default: detect ProfilerStep#N, "
	      "step,\n"
	      "                       train_step, iteration)\n"
	      "      --no-steps       chrome: write NVTX ranges under their own names\n"
	      "      --mangled        keep kernel names as the compiler mangled them\n"
	      "  -q, --quiet          no progress bar, no closing line\n"
	      "  -h, --help           show this help\n"
	      "\n" GT_CLI_WINDOW_HELP,
	      out);
}

/* The options only chrome takes, and what goes with what. Reports and returns -EINVAL. */
static int check_chrome_options(const struct gt_exporter_ops *exp,
                                const struct gt_export_options *eo, const char *output)
{
	bool chrome = strcmp(exp->name, "chrome") == 0;

	const char *opt = eo->split ? "--split" : eo->step_name ? "--step" : "--no-steps";

	if (!chrome && (eo->split || eo->step_name || eo->no_steps)) {
		gt_cli_error("export: %s is for -f chrome only", opt);
		return -EINVAL;
	}
	if (eo->step_name && eo->no_steps) {
		gt_cli_error("export: --step and --no-steps contradict each other; choose one");
		return -EINVAL;
	}
	if (eo->split && eo->max_bytes) {
		gt_cli_error("export: --split ranks and --max-size do not go together: HTA would "
		             "read the pieces of one rank as several files of that rank");
		return -EINVAL;
	}
	if (eo->split && output && strcmp(output, "-") == 0) {
		gt_cli_error("export: --split ranks writes a directory; -o - (standard output) "
		             "cannot hold it");
		return -EINVAL;
	}
	return 0;
}

/* The closing lines of --split ranks. */
static void print_split(const char *dir, const struct gt_export_result *res)
{
	char count[32], size[32];

	fprintf(stderr, "gputrace: wrote %s/ (%u rank%s: rank-N.pt.trace.json, %s events, %s)\n",
	        dir, res->ranks, res->ranks == 1 ? "" : "s",
	        gt_fmt_count(res->events, count, sizeof(count)),
	        gt_fmt_bytes(res->bytes, size, sizeof(size)));
	if (res->left_out)
		fprintf(stderr,
		        "gputrace: left out %u process%s without a rank (%s records, e.g. the "
		        "launcher): export without --split to see %s\n",
		        res->left_out, res->left_out == 1 ? "" : "es",
		        gt_fmt_count(res->left_out_records, count, sizeof(count)),
		        res->left_out == 1 ? "it" : "them");
}

int cmd_export(int argc, char **argv)
{
	static const struct option longopts[] = {
	        {"format", required_argument, NULL, 'f'},
	        {"output", required_argument, NULL, 'o'},
	        {"max-size", required_argument, NULL, 'M'},
	        {"mangled", no_argument, NULL, 'm'},
	        {"split", required_argument, NULL, 'S'},
	        {"step", required_argument, NULL, 'T'},
	        {"no-steps", no_argument, NULL, 'N'},
	        {"quiet", no_argument, NULL, 'q'},
	        {"help", no_argument, NULL, 'h'},
	        GT_CLI_WINDOW_LONGOPTS,
	        {NULL, 0, NULL, 0},
	};
	const struct gt_exporter_ops *exp = NULL;
	const char *format = NULL, *output = NULL, *in, *msg = NULL;
	struct gt_export_options eo = {.demangle = 1};
	struct gt_export_result res = {0};
	struct gt_cli_window cw = {0};
	struct gt_window_stats wst;
	struct gt_reader *r = NULL;
	struct progress prog;
	char out[PATH_MAX + 16], names[128], count[32], size[32];
	bool quiet = false;
	struct stat st;
	int c, ret;

	opterr = 0;
	optind = 0; /* 0, not 1: glibc also forgets a half-read option bundle */
	while ((c = getopt_long(argc, argv, ":f:o:qh", longopts, NULL)) != -1) {
		switch (c) {
		case 'f':
			format = optarg;
			break;
		case 'o':
			output = optarg;
			break;
		case 'M':
			if (gt_opt_size(optarg, 1u << 20, UINT64_MAX, &eo.max_bytes) < 0) {
				gt_cli_error(
				        "export: --max-size: '%s' is not valid; use a size of at "
				        "least 1M, e.g. 500M",
				        optarg);
				return GT_EXIT_USAGE;
			}
			break;
		case 'm':
			eo.demangle = 0;
			break;
		case 'S':
			if (strcmp(optarg, "ranks") != 0) {
				gt_cli_error(
				        "export: --split: '%s' is not valid; use --split ranks",
				        optarg);
				return GT_EXIT_USAGE;
			}
			eo.split = GT_EXPORT_SPLIT_RANKS;
			break;
		case 'T':
			if (!*optarg) {
				gt_cli_error("export: --step: give the NVTX range's name, e.g. "
				             "--step train_step");
				return GT_EXIT_USAGE;
			}
			eo.step_name = optarg;
			break;
		case 'N':
			eo.no_steps = 1;
			break;
		case 'q':
			quiet = true;
			break;
		case 'h':
			usage(stdout);
			return GT_EXIT_OK;
		default:
			ret = gt_cli_window_option(&cw, c, optarg, "export");
			if (ret < 0)
				return GT_EXIT_USAGE;
			if (ret == 0)
				return gt_cli_bad_option("export", c, argv);
			break;
		}
	}
	if (optind >= argc) {
		gt_cli_error("export: no trace file; usage: gputrace export FILE -f FORMAT "
		             "[-o OUT]");
		return GT_EXIT_USAGE;
	}
	if (optind + 1 < argc) {
		gt_cli_error("export: one trace file at a time ('%s' is extra)", argv[optind + 1]);
		return GT_EXIT_USAGE;
	}
	in = argv[optind];
	gt_opt_exporter_names(names, sizeof(names));
	if (!format) {
		gt_cli_error("export: which format? add -f with one of: %s", names);
		return GT_EXIT_USAGE;
	}
	exp = gt_exporter_find(format);
	if (!exp) {
		gt_cli_error("export: -f: '%s' is not valid; use one of: %s", format, names);
		return GT_EXIT_USAGE;
	}
	if (check_chrome_options(exp, &eo, output) < 0)
		return GT_EXIT_USAGE;
	if (stat(in, &st) < 0) {
		gt_cli_error("%s: %s", in, strerror(errno));
		return GT_EXIT_NO_INPUT;
	}
	ret = gt_reader_open(in, &r, &msg);
	if (ret < 0) {
		gt_cli_error("%s: %s", in, msg ? msg : strerror(-ret));
		return ret == -EACCES ? GT_EXIT_NO_INPUT : GT_EXIT_BAD_TRACE;
	}
	if (output) {
		snprintf(out, sizeof(out), "%s", output);
	} else {
		gt_opt_derived_name(in, eo.split ? "-ranks" : exp->extension, out, sizeof(out));
	}
	if (strcmp(out, in) == 0) {
		gt_cli_error("export: the output would replace the trace itself; choose another "
		             "with -o");
		gt_reader_close(r);
		return GT_EXIT_USAGE;
	}
	eo.output = out;
	if (eo.max_bytes && strcmp(exp->name, "perfetto") == 0 && strcmp(out, "-") == 0) {
		gt_cli_error(
		        "export: --max-size cuts perfetto output into files; give -o, not -o -");
		gt_reader_close(r);
		return GT_EXIT_USAGE;
	}
	ret = gt_cli_window_resolve(&cw, r, in, "export");
	if (ret != GT_EXIT_OK) {
		gt_reader_close(r);
		return ret;
	}
	if (cw.what[0] && !quiet)
		fprintf(stderr, "gputrace: window: %s\n", cw.what);
	if (!quiet && strcmp(out, "-") != 0)
		gt_cli_window_too_big(r, &cw, exp->name, eo.max_bytes, in, false);
	gt_status_init(&prog.line, !quiet);
	prog.start_ns = gt_now_ns();
	prog.origin_ns = gt_window_origin(r);
	prog.quiet = quiet;
	eo.on_file = on_file;
	eo.file_ctx = &prog;
	if (prog.line.enabled) {
		eo.progress = on_progress;
		eo.progress_ctx = &prog;
	}
	ret = gt_export_window(exp, r, &cw.w, &eo, &res, &msg, &wst);
	gt_status_clear(&prog.line);
	if (ret < 0) {
		gt_cli_error("export to %s failed: %s", out, msg ? msg : strerror(-ret));
		gt_reader_close(r);
		/* Damage found while reading is the trace's fault, and so is a trace without
		 * ranks to split by or whose ranks share a pid; anything else is output. */
		if (ret == -ENOTDIR)
			return GT_EXIT_CANT_CREATE;
		if (ret == -ENOENT || ret == -EEXIST)
			return GT_EXIT_BAD_TRACE;
		return (ret == -EINVAL || ret == -EBADMSG) ? GT_EXIT_BAD_TRACE : GT_EXIT_IO;
	}
	if (gt_reader_status(r)->recovered && !quiet) {
		const struct gt_reader_status *rs = gt_reader_status(r);

		gt_cli_warn("%s has no index (its writer was interrupted): %llu chunk%s recovered, "
		            "%llu damaged one%s skipped",
		            in, (unsigned long long)rs->chunks_read,
		            rs->chunks_read == 1 ? "" : "s", (unsigned long long)rs->chunks_skipped,
		            rs->chunks_skipped == 1 ? "" : "s");
	}
	gt_reader_close(r);
	if (res.warning)
		gt_cli_warn("%s", res.warning);
	if (!quiet && eo.split) {
		print_split(out, &res);
	} else if (!quiet && strcmp(out, "-") != 0) {
		fprintf(stderr, "gputrace: wrote %s (%s events, %s", out,
		        gt_fmt_count(res.events, count, sizeof(count)),
		        gt_fmt_bytes(res.bytes, size, sizeof(size)));
		if (res.files > 1)
			fprintf(stderr, " in %u files", res.files);
		if (gt_window_any(&cw.w))
			fprintf(stderr, "; read %s of %s chunks",
			        gt_fmt_count(wst.chunks_read, size, sizeof(size)),
			        gt_fmt_count(wst.chunks_read + wst.chunks_passed, count,
			                     sizeof(count)));
		fputs(")\n", stderr);
		if (res.ranks > 1 && exp == gt_exporter_find("chrome"))
			fprintf(stderr,
			        "gputrace: the trace holds %u ranks; Holistic Trace Analysis reads "
			        "one rank per file: add --split ranks\n",
			        res.ranks);
	}
	return GT_EXIT_OK;
}
