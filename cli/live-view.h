/* gputrace run --live: a full-screen view of what the traced program does on the GPU, drawn
 * on its own thread from the live aggregates (gputrace/live.h) that the session's drain feeds
 * through its tap. The drain never waits for the view. Runs in the CLI. */
#ifndef GPUTRACE_CLI_LIVE_VIEW_H
#define GPUTRACE_CLI_LIVE_VIEW_H

#include <stdbool.h>
#include <stdint.h>

#include "drain.h"
#include "status-line.h"

struct gt_live_view;

#define GT_LIVE_INTERVAL_DEFAULT_NS 1000000000ull
#define GT_LIVE_INTERVAL_MIN_NS     100000000ull
#define GT_LIVE_INTERVAL_MAX_NS     3600000000000ull

struct gt_live_view_options {
	const char *trace_path; /* the file being written: its size is shown; borrowed */
	const char *trace_name; /* the name it will have, shown; borrowed */
	const char *command;    /* the traced command line, for the title; borrowed */
	uint64_t interval_ns;   /* refresh period */
	/* The status line: held (not drawn) while the view is up, given back when the user
	 * leaves the view with q. Borrowed; must outlive the view. */
	struct gt_status_line *status;
};

/* True when this build has the view (built with ncurses). */
bool gt_live_view_available(void);

/* Take over the terminal and show the view. Returns 0 and *ret; 1 when there is no terminal
 * to show it on (standard error is not a terminal, TERM is unset, "dumb" or unknown, no
 * /dev/tty): *ret is NULL and *why says so, for one warning; -ENOTSUP when this build has no
 * view, -errno (thread, eventfd): *why says so too. Call after gt_signals_install: the view leaves
 * SIGINT, SIGTERM and SIGHUP to those handlers, and restores the terminal itself before a fatal
 * signal (SIGQUIT, SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT) ends gputrace and around a
 * Ctrl-Z stop. */
int gt_live_view_start(const struct gt_live_view_options *o, struct gt_live_view **ret,
                       const char **why);

/* The tap the session's drain feeds (gt_session_options.tap); NULL when v is NULL. */
const struct gt_drain_tap *gt_live_view_tap(struct gt_live_view *v);

/* Leave the view if it is still up, restore the terminal, end its thread and free it. Call
 * once the session that fed the tap is gone. NULL is accepted. */
void gt_live_view_stop(struct gt_live_view *v);

#endif /* GPUTRACE_CLI_LIVE_VIEW_H */
