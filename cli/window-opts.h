/* The window options of `gputrace export` and `gputrace view` (--from, --to, --nvtx, --pid,
 * --rank, --device, --stream), resolved against a trace into a gt_window; and the check that
 * an export fits the viewer, with the windows that would. Runs in the CLI. */
#ifndef GPUTRACE_CLI_WINDOW_OPTS_H
#define GPUTRACE_CLI_WINDOW_OPTS_H

#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>

#include "gputrace/trace.h"
#include "window.h"

/* getopt_long codes of the window options (above every character option). */
enum {
	GT_OPT_FROM = 0x200,
	GT_OPT_TO,
	GT_OPT_NVTX,
	GT_OPT_PID,
	GT_OPT_RANK,
	GT_OPT_DEVICE,
	GT_OPT_STREAM,
};

/* clang-format off */
#define GT_CLI_WINDOW_LONGOPTS                                                                     \
	{"from", required_argument, NULL, GT_OPT_FROM},                                            \
	{"to", required_argument, NULL, GT_OPT_TO},                                                \
	{"nvtx", required_argument, NULL, GT_OPT_NVTX},                                            \
	{"pid", required_argument, NULL, GT_OPT_PID},                                              \
	{"rank", required_argument, NULL, GT_OPT_RANK},                                            \
	{"device", required_argument, NULL, GT_OPT_DEVICE},                                        \
	{"stream", required_argument, NULL, GT_OPT_STREAM}
/* clang-format on */

/* The lines of --help that describe them. */
#define GT_CLI_WINDOW_HELP                                                                         \
	"Window (docs/cli.md, \"Windows\"):\n"                                                     \
	"      --from T         start at T: seconds from the trace's zero (2.5, 90s, "             \
	"1m30s),\n"                                                                                \
	"                       @NS on the trace clock, or a date (2024-05-01T12:00:03Z)\n"        \
	"      --to T           end at T (same forms; +DURATION: after --from)\n"                  \
	"      --nvtx NAME[:N[..M]]  from the start of the Nth to the end of the Mth NVTX range\n" \
	"                       NAME (or NAME#K, as ProfilerStep#K), in every process\n"           \
	"      --pid LIST       only these processes (comma-separated)\n"                          \
	"      --rank LIST      only the processes of these ranks\n"                               \
	"      --device LIST    only GPU work and memory of these CUDA devices\n"                  \
	"      --stream LIST    only GPU work on these streams\n"                                  \
	"  Slices across an edge are cut at it; arrows to outside are left out.\n"

struct gt_cli_window {
	const char *from, *to, *nvtx; /* as typed; NULL when not given */
	struct gt_window w;           /* filters parsed; times once resolved */
	char what[512];               /* the window, for messages ("ProfilerStep 3..4, 0.52 s to
	                               * 0.65 s"); empty for the whole trace */
};

/* Take option c (its argument arg) if it is a window option. Returns 1 taken, 0 not a window
 * option, -1 when its value is wrong (the error printed, naming cmd). */
int gt_cli_window_option(struct gt_cli_window *cw, int c, const char *arg, const char *cmd);

/* Whether any window option was given. */
bool gt_cli_window_given(const struct gt_cli_window *cw);

/* Turn --from/--to/--nvtx into times on r's clock (reads the NVTX ranges for --nvtx) and
 * fill cw->what. Prints what is wrong; returns a GT_EXIT_* code. */
int gt_cli_window_resolve(struct gt_cli_window *cw, struct gt_reader *r, const char *trace,
                          const char *cmd);

/* Whether an export of r (the file `trace`) in format `format` through cw would be too large
 * for the Perfetto UI, estimated from the chunk index: if so (and max_bytes does not split it
 * small enough), prints how large, and windows that would fit (the first steps, the first
 * seconds, pieces), as `gputrace export` commands or, with view, `gputrace view` ones
 * (--first-steps N). Returns true when
 * too large. Traces without an index are not checked. GPUTRACE_UI_LIMIT (a size) replaces
 * the UI's limits. */
bool gt_cli_window_too_big(struct gt_reader *r, const struct gt_cli_window *cw, const char *format,
                           uint64_t max_bytes, const char *trace, bool view);

/* The window that --first-steps N picks: from the earliest start to the latest end of the
 * first N steps of every process (exporters/model/steps.c: NVTX ranges ProfilerStep#N, step,
 * train_step, iteration, numbered as the chrome export numbers them). Prints what is wrong;
 * returns a GT_EXIT_* code. */
int gt_cli_window_first_steps(struct gt_cli_window *cw, struct gt_reader *r, uint64_t n,
                              const char *trace, const char *cmd);

#endif /* GPUTRACE_CLI_WINDOW_OPTS_H */
