/* A one-line live status on stderr, redrawn in place; nothing at all when stderr is not a
 * terminal, so logs and pipes stay clean. Runs in the CLI. */
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "clock.h"
#include "status-line.h"
#include "text.h"

#define GT_STATUS_PERIOD_NS 250000000ull

void gt_status_init(struct gt_status_line *sl, bool want)
{
	memset(sl, 0, sizeof(*sl));
	sl->enabled = want && isatty(STDERR_FILENO);
	sl->period_ns = GT_STATUS_PERIOD_NS;
	atomic_init(&sl->held, false);
}

void gt_status_hold(struct gt_status_line *sl, bool held)
{
	/* release: pairs with the acquire in due(); the display that gives the terminal
	 * back has finished writing to it */
	atomic_store_explicit(&sl->held, held, memory_order_release);
}

/* Columns of the terminal, so the line never wraps (a wrapped line cannot be erased with
 * a carriage return). */
static int columns(void)
{
	struct winsize ws;

	if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 10)
		return ws.ws_col;
	return 80;
}

static bool due(struct gt_status_line *sl)
{
	uint64_t now = gt_now_ns();

	if (!sl->enabled || (sl->shown && now - sl->last_ns < sl->period_ns) ||
	    atomic_load_explicit(&sl->held, memory_order_acquire))
		return false;
	sl->last_ns = now;
	return true;
}

static void draw(struct gt_status_line *sl, const char *text)
{
	int width = columns() - 1;

	/* \r to column 0, the text cut to the width, then erase to the end of the line. */
	fprintf(stderr, "\r%.*s\033[K", width, text);
	fflush(stderr);
	sl->shown = true;
}

void gt_status_run(struct gt_status_line *sl, uint64_t elapsed_ns, uint64_t records, uint64_t bytes,
                   uint64_t dropped)
{
	char line[256], rec[32], size[32], drop[32];

	if (!due(sl))
		return;
	snprintf(line, sizeof(line), "gputrace: %.1f s, %s records, %s written, %s dropped",
	         (double)elapsed_ns / 1e9, gt_fmt_count(records, rec, sizeof(rec)),
	         gt_fmt_bytes(bytes, size, sizeof(size)),
	         gt_fmt_count(dropped, drop, sizeof(drop)));
	draw(sl, line);
}

void gt_status_progress(struct gt_status_line *sl, const char *what, uint64_t done, uint64_t total)
{
	char line[256], bar[33], a[32], b[32];
	unsigned pct = total ? (unsigned)(done * 100 / total) : 0, fill;

	if (!due(sl))
		return;
	if (pct > 100)
		pct = 100;
	fill = pct * (sizeof(bar) - 1) / 100;
	memset(bar, '#', fill);
	memset(bar + fill, '.', sizeof(bar) - 1 - fill);
	bar[sizeof(bar) - 1] = '\0';
	snprintf(line, sizeof(line), "gputrace: %s [%s] %3u%% %s of %s", what, bar, pct,
	         gt_fmt_bytes(done, a, sizeof(a)), gt_fmt_bytes(total, b, sizeof(b)));
	draw(sl, line);
}

void gt_status_clear(struct gt_status_line *sl)
{
	if (!sl->enabled || !sl->shown)
		return;
	fputs("\r\033[K", stderr);
	fflush(stderr);
	sl->shown = false;
}
