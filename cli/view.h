/* `gputrace view`, as a call `gputrace run --view` makes too: export a trace for Perfetto
 * (or reuse that export), serve it once on 127.0.0.1 and open ui.perfetto.dev on it.
 * Runs in the CLI. */
#ifndef GPUTRACE_CLI_VIEW_H
#define GPUTRACE_CLI_VIEW_H

#include <stdbool.h>
#include <stdint.h>

#include "window-opts.h"

#define GT_VIEW_PORT   9001 /* Perfetto's own tools serve traces there */
#define GT_VIEW_ORIGIN "https://ui.perfetto.dev"
/* What the UI holds in the browser: about 2 GB (Perfetto's "Visualising large traces"). */
#define GT_VIEW_UI_MAX_BYTES (2ull << 30)

struct gt_view_opts {
	bool requested;      /* run: --view was given */
	uint16_t port;       /* 0: any free port */
	bool no_open;        /* print the URL, start no browser */
	bool verbose;        /* a line per request answered */
	uint64_t timeout_ns; /* give up after this long without the fetch; 0: never */
	struct gt_cli_window window; /* view: a window of the trace (none given: all of it) */
	uint64_t first_steps;        /* view: > 0, the window of the first this many steps */
};

/* View `trace` (a .gtrace, or a .pftrace served as it is). `cmd` names the caller in
 * messages: "view" or "run". Prints its own errors; returns a GT_EXIT_* code: 0 once the
 * browser has fetched the file, GT_EXIT_TEMPFAIL after the timeout, 128+N on signal N. */
int gt_cli_view(const char *trace, const struct gt_view_opts *o, const char *cmd);

/* `gputrace run --view[=PORT]`: `port` is the option's value or NULL. Sets o->requested and
 * the port (default GT_VIEW_PORT). Returns 0, or -EINVAL after printing what is wrong. */
int gt_cli_view_option(const char *port, struct gt_view_opts *o);

#endif /* GPUTRACE_CLI_VIEW_H */
