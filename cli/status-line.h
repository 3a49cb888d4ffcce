/* A one-line live status on stderr, redrawn in place while `gputrace run` traces and while
 * `gputrace export` converts; only on a terminal, and erased when done so the scrollback
 * keeps nothing of it. Runs in the CLI. */
#ifndef GPUTRACE_CLI_STATUS_LINE_H
#define GPUTRACE_CLI_STATUS_LINE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

struct gt_status_line {
	bool enabled;     /* stderr is a terminal and the user did not ask for quiet */
	bool shown;       /* something is on the line now */
	uint64_t last_ns; /* when it was last drawn (trace clock) */
	uint64_t period_ns;
	atomic_bool held; /* another display has the terminal (run --live): draw nothing */
};

/* enabled = want && isatty(stderr). Redraws at most every 250 ms (~4 per second). */
void gt_status_init(struct gt_status_line *sl, bool want);

/* `gputrace run`: elapsed time, records drained, bytes written, records dropped. */
void gt_status_run(struct gt_status_line *sl, uint64_t elapsed_ns, uint64_t records, uint64_t bytes,
                   uint64_t dropped);

/* `gputrace export`: a bar for done/total bytes of the input. */
void gt_status_progress(struct gt_status_line *sl, const char *what, uint64_t done, uint64_t total);

/* Hold the line (draw nothing) while another display, on another thread, has the terminal;
 * false gives it back. */
void gt_status_hold(struct gt_status_line *sl, bool held);

/* Erase the line (call before printing anything else, and at the end). */
void gt_status_clear(struct gt_status_line *sl);

/* Numbers in messages: gt_fmt_count() and gt_fmt_bytes() of exporters/common/text.h, the one unit
 * convention of every output. */
#include "text.h"

#endif /* GPUTRACE_CLI_STATUS_LINE_H */
