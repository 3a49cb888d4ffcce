/* gputrace run --live with ncurses: the terminal (/dev/tty) taken over on the alternate
 * screen, a thread of its own that asks the live aggregates for a snapshot every interval and
 * draws it, keys, resizes, and the terminal given back on every way out (q, the end of the
 * run, a fatal signal, Ctrl-Z). Runs in the CLI: started and stopped on the main thread, drawn
 * on the view's thread, which alone calls ncurses in between. */
#include <curses.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <term.h>
#include <termios.h>
#include <unistd.h>

#include "clock.h"
#include "demangle.h"
#include "live-view.h"
#include "live.h"

#define VIEW_POLL_MS   100 /* longest the thread sleeps: bounds how late a resize is seen */
#define VIEW_MIN_COLS  60
#define VIEW_MIN_LINES 16
#define VIEW_LINE      1024 /* longest line drawn */
#define PAIR_RED       1

struct gt_live_view {
	struct gt_live_view_options o;
	struct gt_live *live;
	pthread_t thread;
	bool thread_started;
	int stop_fd; /* eventfd: the main thread ends the view */
	FILE *tty;   /* /dev/tty, read and written by ncurses */
	int tty_fd;
	SCREEN *screen;

	/* ---- the view's thread ---- */
	const struct gt_live_snapshot *snap;
	struct gt_live_delta delta;
	char **demangled; /* by kernel index; owned */
	size_t ndemangled;
	uint32_t *order; /* rows of the kernel or range table, in display order */
	size_t cap_order;
	enum gt_live_sort sort;
	bool paused;
	size_t scroll;        /* first kernel row shown */
	size_t kernel_rows;   /* kernel rows that fit, as last drawn */
	uint64_t trace_bytes; /* last size read of the trace */
};

/* ---- the terminal restored from a signal handler ---- */

/* Filled before the handlers can run, cleared (armed = 0) once ncurses restored the terminal
 * itself; read by handlers only (async-signal-safe: write and tcsetattr). */
static struct {
	atomic_int armed;     /* the terminal is the view's: restore it before dying */
	atomic_int suspended; /* Ctrl-Z: the terminal is the shell's; the view draws nothing */
	atomic_int resumed;   /* continued after it: the view takes the terminal back */
	int fd;
	struct termios saved;
	char seq[256]; /* leave the alternate screen, show the cursor, plain attributes */
	size_t len;
} restore;

static const int fatal_signals[] = {SIGQUIT, SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
static struct sigaction old_fatal[sizeof(fatal_signals) / sizeof(fatal_signals[0])];
static struct sigaction old_tstp;
static bool handlers_installed;

static void restore_terminal(void)
{
	ssize_t n;

	if (!atomic_load(&restore.armed))
		return;
	n = write(restore.fd, restore.seq, restore.len);
	(void)n;
	tcsetattr(restore.fd, TCSANOW, &restore.saved);
}

/* A signal that ends gputrace: the terminal first, then the signal's own action. */
static void on_fatal(int sig)
{
	int saved = errno;

	restore_terminal();
	atomic_store(&restore.armed, 0);
	signal(sig, SIG_DFL);
	raise(sig); /* blocked until we return: then the default action, as if we were not here */
	errno = saved;
}

/* Ctrl-Z: give the terminal back as the shell expects it, stop, and redraw when continued. */
static void on_tstp(int sig)
{
	int saved = errno;
	struct sigaction sa, ours;
	sigset_t set;

	/* first: the view's thread must not draw on the shell's screen from here on */
	atomic_store(&restore.suspended, 1);
	restore_terminal();
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	sigaction(SIGTSTP, &sa, &ours);
	sigemptyset(&set);
	sigaddset(&set, sig);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	raise(SIGTSTP); /* stops here until SIGCONT */
	sigaction(SIGTSTP, &ours, NULL);
	atomic_store(&restore.resumed, 1);
	errno = saved;
}

static void append_cap(const char *name)
{
	const char *s = tigetstr(name);
	size_t n;

	if (!s || s == (const char *)-1)
		return;
	n = strlen(s);
	if (restore.len + n < sizeof(restore.seq)) {
		memcpy(restore.seq + restore.len, s, n);
		restore.len += n;
	}
}

static void install_handlers(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = on_fatal;
	for (size_t i = 0; i < sizeof(fatal_signals) / sizeof(fatal_signals[0]); i++)
		sigaction(fatal_signals[i], &sa, &old_fatal[i]);
	/* ours before ncurses starts, so ncurses does not install its own (it would draw
	 * from whichever thread the signal lands on) */
	sa.sa_handler = on_tstp;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGTSTP, &sa, &old_tstp);
	handlers_installed = true;
}

static void uninstall_handlers(void)
{
	if (!handlers_installed)
		return;
	for (size_t i = 0; i < sizeof(fatal_signals) / sizeof(fatal_signals[0]); i++)
		sigaction(fatal_signals[i], &old_fatal[i], NULL);
	sigaction(SIGTSTP, &old_tstp, NULL);
	handlers_installed = false;
}

/* ---- text ---- */

/* Print at (y, x) at most `width` columns of formatted text (never past the right edge),
 * non-ASCII and control bytes as '?' (strings from the trace are untrusted). Returns the
 * columns written. */
__attribute__((format(printf, 4, 5))) static int put(int y, int x, int width, const char *fmt, ...)
{
	char line[VIEW_LINE];
	va_list ap;
	int n;

	if (width > COLS - x)
		width = COLS - x;
	if (width <= 0 || y < 0 || y >= LINES)
		return 0;
	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n < 0)
		return 0;
	for (char *p = line; *p; p++)
		if ((unsigned char)*p < 32 || (unsigned char)*p > 126)
			*p = '?';
	n = (int)strlen(line);
	mvaddnstr(y, x, line, width);
	return n < width ? n : width;
}

static void rule(int y)
{
	if (y >= 0 && y < LINES)
		mvhline(y, 0, '-', COLS);
}

static const char *fmt_ns(double ns, char *buf, size_t bytes)
{
	if (ns < 1e3)
		snprintf(buf, bytes, "%.0f ns", ns);
	else if (ns < 1e6)
		snprintf(buf, bytes, "%.1f us", ns / 1e3);
	else if (ns < 1e9)
		snprintf(buf, bytes, "%.2f ms", ns / 1e6);
	else
		snprintf(buf, bytes, "%.2f s", ns / 1e9);
	return buf;
}

/* Decimal bandwidth, as copy rates always are. */
static const char *fmt_bw(double bytes_per_s, char *buf, size_t bytes)
{
	if (bytes_per_s <= 0)
		snprintf(buf, bytes, "0");
	else if (bytes_per_s >= 1e9)
		snprintf(buf, bytes, "%.2f GB/s", bytes_per_s / 1e9);
	else if (bytes_per_s >= 1e6)
		snprintf(buf, bytes, "%.1f MB/s", bytes_per_s / 1e6);
	else
		snprintf(buf, bytes, "%.0f KB/s", bytes_per_s / 1e3);
	return buf;
}

static const char *fmt_rate(double per_s, char *buf, size_t bytes)
{
	if (per_s > 0 && per_s < 10)
		snprintf(buf, bytes, "%.1f", per_s);
	else
		gt_fmt_count((uint64_t)(per_s + 0.5), buf, bytes);
	return buf;
}

static const char *state_text(const struct gt_live_process *p, char *buf, size_t bytes)
{
	switch (p->state) {
	case GT_LIVE_RUNNING:
		return "running";
	case GT_LIVE_EXITED:
		snprintf(buf, bytes, "exited %d", p->code);
		return buf;
	case GT_LIVE_KILLED:
		snprintf(buf, bytes, "killed by signal %d", p->code);
		return buf;
	case GT_LIVE_DETACHED:
		return "detached";
	default:
		return "ended";
	}
}

/* ---- drawing ---- */

/* Room in v->order for n rows. */
static int grow_order(struct gt_live_view *v, size_t n)
{
	size_t c = v->cap_order ? v->cap_order : 64;
	uint32_t *p;

	if (n <= v->cap_order)
		return 0;
	while (c < n)
		c *= 2;
	p = realloc(v->order, c * sizeof(*p));
	if (!p)
		return -ENOMEM;
	v->order = p;
	v->cap_order = c;
	return 0;
}

/* Demangled names of the kernels new in this snapshot (once each: demangling is not cheap). */
static void demangle_new(struct gt_live_view *v, const struct gt_live_snapshot *s)
{
	char buf[GT_DEMANGLE_BUF_BYTES];

	if (s->nkernels > v->ndemangled) {
		char **p = realloc(v->demangled, s->nkernels * sizeof(*p));

		if (!p)
			return;
		memset(p + v->ndemangled, 0, (s->nkernels - v->ndemangled) * sizeof(*p));
		v->demangled = p;
		v->ndemangled = s->nkernels;
	}
	for (size_t i = 0; i < s->nkernels; i++)
		if (!v->demangled[i] && s->kernels[i].name)
			v->demangled[i] = strdup(gt_demangle(s->kernels[i].name, buf, sizeof(buf)));
}

static int draw_header(struct gt_live_view *v, const struct gt_live_snapshot *s, int y)
{
	const struct gt_live_delta *d = &v->delta;
	uint64_t now = gt_now_ns();
	char a[32], b[32], c[32], lost[32], failed[32];
	struct stat st;
	int x;

	if (stat(v->o.trace_path, &st) == 0)
		v->trace_bytes = (uint64_t)st.st_size;
	attron(A_REVERSE);
	mvhline(y, 0, ' ', COLS);
	put(y, 0, COLS, " gputrace --live  %.1f s  refresh %g s%s  %s",
	    s->start_ns && now > s->start_ns ? (double)(now - s->start_ns) / 1e9 : 0.0,
	    (double)v->o.interval_ns / 1e9, v->paused ? "  PAUSED" : "", v->o.command);
	attroff(A_REVERSE);
	y++;
	/* one line, the pieces side by side; what does not fit is cut at the right edge */
	x = put(y, 0, COLS, "trace %s: %s, %s records (%s/s)  lost ", v->o.trace_name,
	        gt_fmt_bytes(v->trace_bytes, a, sizeof(a)), gt_fmt_count(s->records, b, sizeof(b)),
	        fmt_rate(d->records_per_s, c, sizeof(c)));
	if (s->lost)
		attron(COLOR_PAIR(PAIR_RED) | A_BOLD);
	x += put(y, x, COLS, "%s", gt_fmt_count(s->lost, lost, sizeof(lost)));
	attroff(COLOR_PAIR(PAIR_RED) | A_BOLD);
	x += put(y, x, COLS, "  API calls %s/s  failed ", fmt_rate(d->api_per_s, c, sizeof(c)));
	if (s->api_failed)
		attron(COLOR_PAIR(PAIR_RED) | A_BOLD);
	x += put(y, x, COLS, "%s", gt_fmt_count(s->api_failed, failed, sizeof(failed)));
	attroff(COLOR_PAIR(PAIR_RED) | A_BOLD);
	if (s->api_failed && s->failed_error)
		put(y, x, COLS, " (last: %s %s)", s->failed_name ? s->failed_name : "?",
		    s->failed_error);
	else if (s->api_failed)
		put(y, x, COLS, " (last: %s error %d)", s->failed_name ? s->failed_name : "?",
		    s->failed_code);
	return y + 1;
}

static int draw_processes(const struct gt_live_snapshot *s, int y)
{
	char line[VIEW_LINE], st[48];
	size_t o = 0, shown = 0;

	o += (size_t)snprintf(line, sizeof(line), "processes:");
	if (!s->nprocs)
		snprintf(line + o, sizeof(line) - o, " none traced yet");
	for (size_t i = 0; i < s->nprocs && o < sizeof(line) - 64; i++, shown++) {
		const struct gt_live_process *p = &s->procs[i];
		const char *exe = p->exe ? strrchr(p->exe, '/') : NULL;

		exe = exe ? exe + 1 : (p->exe ? p->exe : "?");
		if (p->rank >= 0)
			o += (size_t)snprintf(line + o, sizeof(line) - o, "%s %u %.20s rank %d %s",
			                      i ? "," : "", p->pid, exe, p->rank,
			                      state_text(p, st, sizeof(st)));
		else
			o += (size_t)snprintf(line + o, sizeof(line) - o, "%s %u %.20s %s",
			                      i ? "," : "", p->pid, exe,
			                      state_text(p, st, sizeof(st)));
		if (o > (size_t)COLS)
			break;
	}
	if (o > (size_t)COLS && COLS > 20)
		snprintf(line + COLS - 12, sizeof(line) - (size_t)COLS + 12, " +%zu more",
		         s->nprocs - shown);
	put(y, 0, COLS, "%s", line);
	return y + 1;
}

static int draw_gpus(struct gt_live_view *v, const struct gt_live_snapshot *s, int y, int max)
{
	char c[5][24], k[24], ms[24], mem[24], peak[24], sm[16], dram[24];
	int name_w = COLS - 117 > 12 ? (COLS - 117 < 28 ? COLS - 117 : 28) : 12;

	attron(A_BOLD);
	put(y++, 0, COLS, "%-4s %-*s %5s %10s %10s %10s %10s %10s %9s %10s %10s %5s %10s", "GPU",
	    name_w, "name", "busy", "kernels/s", "HtoD", "DtoH", "DtoD", "PtoP", "memset/s",
	    "memory", "peak", "SMs", "DRAM");
	attroff(A_BOLD);
	if (!s->ngpus)
		put(y++, 0, COLS, "     no GPU activity yet");
	for (size_t i = 0; i < s->ngpus && max > 1; i++) {
		const struct gt_live_gpu *g = &s->gpus[i];
		const struct gt_live_gpu_rate *r = &v->delta.gpus[i];

		if (g->merged)
			continue; /* its activity is in the row of the GPU it turned out to be */
		max--;
		for (unsigned dir = 0; dir < GT_LIVE_PTOP + 1; dir++)
			fmt_bw(r->copy_bytes_per_s[dir], c[dir], sizeof(c[dir]));
		/* GPU metrics: the latest sample, "-" when the GPU is not sampled */
		if (g->metrics) {
			snprintf(sm, sizeof(sm), "%.0f%%", g->sm_active_pct);
			fmt_bw(g->dram_bytes_per_s, dram, sizeof(dram));
		} else {
			strcpy(sm, "-");
			strcpy(dram, "-");
		}
		put(y++, 0, COLS,
		    "%-4u %-*.*s %4.0f%% %10s %10s %10s %10s %10s %9s %10s %10s %5s %10s",
		    g->number, name_w, name_w, g->name ? g->name : "(device not named yet)",
		    r->busy_pct, fmt_rate(r->kernels_per_s, k, sizeof(k)), c[GT_LIVE_HTOD],
		    c[GT_LIVE_DTOH], c[GT_LIVE_DTOD], c[GT_LIVE_PTOP],
		    fmt_rate(r->memsets_per_s, ms, sizeof(ms)),
		    gt_fmt_bytes(g->mem_bytes, mem, sizeof(mem)),
		    gt_fmt_bytes(g->mem_peak_bytes, peak, sizeof(peak)), sm, dram);
	}
	return y;
}

/* The stack of thread t, outermost first, "..." for ranges still open; cut on the left. */
static void stack_text(const struct gt_live_thread *t, char *out, size_t bytes, size_t width)
{
	char line[VIEW_LINE];
	size_t o = 0, len;

	line[0] = '\0';
	for (uint32_t k = 0; k < t->depth && o < sizeof(line) - 8; k++)
		o += (size_t)snprintf(line + o, sizeof(line) - o, "%s%s", k ? " > " : "",
		                      t->stack[k] ? t->stack[k] : "...");
	len = strlen(line);
	if (len > width && width > 3)
		snprintf(out, bytes, "..%s", line + len - width + 2);
	else
		snprintf(out, bytes, "%s", line);
}

static int draw_nvtx(struct gt_live_view *v, const struct gt_live_snapshot *s, int y, int max)
{
	const struct gt_live_delta *d = &v->delta;
	char rate[24], last[24], stack[VIEW_LINE], a[24], b[24], m[24];
	size_t rows = 0, nthreads = 0;

	for (size_t i = 0; i < s->nthreads; i++)
		nthreads += s->threads[i].depth > 0;
	if (!nthreads && !s->nranges)
		return y;
	attron(A_BOLD);
	put(y++, 0, COLS, "%-20s %-16s %8s %10s  %s", "THREAD", "step", "steps/s", "last step",
	    "NVTX stack (... = still open: named when it ends)");
	attroff(A_BOLD);
	for (size_t i = 0; i < s->nthreads && rows + 1 < (size_t)max / 2; i++) {
		const struct gt_live_thread *t = &s->threads[i];
		char who[48];
		int w = COLS - 60;

		if (!t->depth)
			continue;
		snprintf(who, sizeof(who), "%u/%u %s", t->pid, t->tid, t->name ? t->name : "");
		stack_text(t, stack, sizeof(stack), w > 10 ? (size_t)w : 10);
		put(y++, 0, COLS, "%-20.20s %-16.*s %8s %10s  %s", who,
		    t->step ? (int)t->step_len : 1, t->step ? t->step : "-",
		    t->step ? fmt_rate(d->steps_per_s[i], rate, sizeof(rate)) : "-",
		    t->step ? fmt_ns((double)t->step_ns, last, sizeof(last)) : "-", stack);
		rows++;
	}
	if (!s->nranges)
		return y;
	if (grow_order(v, s->nranges) < 0)
		return y;
	gt_live_sort(s->ranges, d->ranges, s->nranges, v->sort, v->order);
	attron(A_BOLD);
	put(y++, 0, COLS, "%-*s %10s %10s %10s | %12s %10s %10s", COLS - 82 > 20 ? COLS - 82 : 20,
	    "NVTX RANGE", "count", "time", "mean", "total count", "time", "mean");
	attroff(A_BOLD);
	for (size_t r = 0; r < s->nranges && (int)rows < max - 2; r++, rows++) {
		uint32_t i = v->order[r];
		const struct gt_live_stat *t = &s->ranges[i];
		const struct gt_live_count *c = &d->ranges[i];
		char n1[24], n2[24];
		int w = COLS - 82 > 20 ? COLS - 82 : 20;

		put(y++, 0, COLS, "%-*.*s %10s %10s %10s | %12s %10s %10s", w, w,
		    t->name ? t->name : "<unknown>", gt_fmt_count(c->count, n1, sizeof(n1)),
		    fmt_ns((double)c->ns, a, sizeof(a)),
		    fmt_ns(c->count ? (double)c->ns / (double)c->count : 0, b, sizeof(b)),
		    gt_fmt_count(t->count, n2, sizeof(n2)),
		    fmt_ns((double)t->total_ns, m, sizeof(m)),
		    fmt_ns(t->count ? (double)t->total_ns / (double)t->count : 0, rate,
		           sizeof(rate)));
	}
	return y;
}

static int draw_kernels(struct gt_live_view *v, const struct gt_live_snapshot *s, int y, int rows)
{
	const struct gt_live_delta *d = &v->delta;
	int w = COLS - 78 > 16 ? COLS - 78 : 16;
	char name[VIEW_LINE];

	attron(A_BOLD);
	put(y++, 0, COLS, "%-*s %10s %10s %10s | %12s %10s %10s", w, "KERNEL", "count", "time",
	    "mean", "total count", "time", "mean");
	attroff(A_BOLD);
	rows--;
	v->kernel_rows = rows > 0 ? (size_t)rows : 0;
	if (!s->nkernels) {
		put(y++, 0, COLS, "no kernels yet");
		return y;
	}
	if (grow_order(v, s->nkernels) < 0)
		return y;
	gt_live_sort(s->kernels, d->kernels, s->nkernels, v->sort, v->order);
	if (v->scroll + v->kernel_rows > s->nkernels)
		v->scroll = s->nkernels > v->kernel_rows ? s->nkernels - v->kernel_rows : 0;
	for (size_t r = v->scroll; r < s->nkernels && rows > 0; r++, rows--) {
		uint32_t i = v->order[r];
		const struct gt_live_stat *t = &s->kernels[i];
		const struct gt_live_count *c = &d->kernels[i];
		const char *full = i < v->ndemangled && v->demangled[i]
		                           ? v->demangled[i]
		                           : (t->name ? t->name : "<unknown>");
		char n1[24], n2[24], a[24], b[24], e[24], f[24];

		gt_live_shorten(full, (size_t)w, name, sizeof(name));
		put(y++, 0, COLS, "%-*s %10s %10s %10s | %12s %10s %10s", w, name,
		    gt_fmt_count(c->count, n1, sizeof(n1)), fmt_ns((double)c->ns, a, sizeof(a)),
		    fmt_ns(c->count ? (double)c->ns / (double)c->count : 0, b, sizeof(b)),
		    gt_fmt_count(t->count, n2, sizeof(n2)),
		    fmt_ns((double)t->total_ns, e, sizeof(e)),
		    fmt_ns(t->count ? (double)t->total_ns / (double)t->count : 0, f, sizeof(f)));
	}
	return y;
}

/* The whole screen from the snapshot in hand. full: repaint every cell (what the program
 * itself printed on the terminal is drawn over). */
static void draw(struct gt_live_view *v, bool full)
{
	const struct gt_live_snapshot *s = v->snap;
	int y, budget;
	char a[24];

	erase();
	if (COLS < VIEW_MIN_COLS || LINES < VIEW_MIN_LINES) {
		put(0, 0, COLS,
		    "gputrace --live: the terminal is %dx%d; make it at least %dx%d (q leaves the "
		    "view)",
		    COLS, LINES, VIEW_MIN_COLS, VIEW_MIN_LINES);
		goto out;
	}
	y = draw_header(v, s, 0);
	y = draw_processes(s, y);
	if (s->seq && v->delta.seq != s->seq) {
		put(y, 0, COLS, "out of memory: the tables cannot be drawn");
		goto out;
	}
	rule(y++);
	budget = LINES - 1 - y;
	y = draw_gpus(v, s, y, budget / 4 > 2 ? budget / 4 : 2);
	rule(y++);
	budget = LINES - 1 - y;
	if (budget > 8) {
		int top = y;

		y = draw_nvtx(v, s, y, budget / 2);
		if (y != top)
			rule(y++);
	}
	draw_kernels(v, s, y, LINES - 1 - y);
	attron(A_REVERSE);
	mvhline(LINES - 1, 0, ' ', COLS);
	put(LINES - 1, 0, COLS,
	    " q leave the view  p %s  s sort: %s  arrows scroll  kernels %zu-%zu of %zu  "
	    "columns: the last %s | since the start%s",
	    v->paused ? "resume" : "pause", gt_live_sort_name(v->sort),
	    s->nkernels ? v->scroll + 1 : 0,
	    v->scroll + v->kernel_rows < s->nkernels ? v->scroll + v->kernel_rows : s->nkernels,
	    s->nkernels, fmt_ns((double)v->delta.dt_ns, a, sizeof(a)),
	    s->incomplete ? "  (out of memory: totals incomplete)" : "");
	attroff(A_REVERSE);
out:
	if (full)
		redrawwin(stdscr);
	refresh();
}

/* ---- the view's thread ---- */

enum key_action {
	VIEW_KEEP,
	VIEW_DRAW,
	VIEW_LEAVE
};

static enum key_action on_key(struct gt_live_view *v, int ch)
{
	size_t page = v->kernel_rows > 1 ? v->kernel_rows - 1 : 1;

	switch (ch) {
	case 'q':
	case 'Q':
		return VIEW_LEAVE;
	case 'p':
	case 'P':
		v->paused = !v->paused;
		if (!v->paused)
			gt_live_request(v->live);
		return VIEW_DRAW;
	case 's':
	case 'S':
		v->sort = (enum gt_live_sort)((v->sort + 1) % GT_LIVE_SORT_MAX);
		return VIEW_DRAW;
	case KEY_UP:
		v->scroll -= v->scroll > 0;
		return VIEW_DRAW;
	case KEY_DOWN:
		v->scroll++; /* clamped when drawn */
		return VIEW_DRAW;
	case KEY_PPAGE:
		v->scroll = v->scroll > page ? v->scroll - page : 0;
		return VIEW_DRAW;
	case KEY_NPAGE:
		v->scroll += page;
		return VIEW_DRAW;
	case KEY_HOME:
		v->scroll = 0;
		return VIEW_DRAW;
	case KEY_END:
		v->scroll = SIZE_MAX / 2;
		return VIEW_DRAW;
	case KEY_RESIZE:
		return VIEW_DRAW;
	case 'L' & 0x1f: /* Ctrl-L */
		clearok(curscr, TRUE);
		return VIEW_DRAW;
	default:
		return VIEW_KEEP;
	}
}

/* A new snapshot, if one was published. */
static void take_snapshot(struct gt_live_view *v)
{
	uint64_t n;

	if (read(gt_live_wake_fd(v->live), &n, sizeof(n)) < 0 && errno != EAGAIN)
		return;
	v->snap = gt_live_acquire(v->live);
	if (gt_live_delta_update(&v->delta, v->snap) > 0)
		demangle_new(v, v->snap);
}

static void *view_main(void *arg)
{
	struct gt_live_view *v = arg;
	uint64_t next = gt_now_ns() + v->o.interval_ns;
	bool left = false;

	v->snap = gt_live_acquire(v->live);
	gt_live_request(v->live);
	draw(v, true);
	for (;;) {
		struct pollfd fds[3] = {{v->stop_fd, POLLIN, 0},
		                        {v->tty_fd, POLLIN, 0},
		                        {gt_live_wake_fd(v->live), POLLIN, 0}};
		uint64_t now = gt_now_ns();
		int ms = next > now ? (int)((next - now) / 1000000u) + 1 : 0, ch;
		bool redraw = false;

		if (ms > VIEW_POLL_MS)
			ms = VIEW_POLL_MS;
		if (poll(fds, 3, ms) < 0 && errno != EINTR)
			break;
		if (fds[0].revents)
			break;
		if (fds[1].revents & (POLLHUP | POLLERR | POLLNVAL))
			break; /* the terminal is gone */
		if (atomic_load(&restore.suspended)) {
			if (!atomic_load(&restore.resumed))
				continue; /* stopping: the terminal is the shell's */
			/* continued after Ctrl-Z: back to the view as ncurses resumes after
			 * endwin (its modes, the alternate screen, every cell drawn again) */
			atomic_store(&restore.resumed, 0);
			atomic_store(&restore.suspended, 0);
			endwin();
			clearok(curscr, TRUE);
			redraw = true;
		}
		while ((ch = getch()) != ERR) {
			enum key_action k = on_key(v, ch);

			if (k == VIEW_LEAVE) {
				left = true;
				break;
			}
			redraw |= k == VIEW_DRAW;
		}
		if (left)
			break;
		if (fds[2].revents & POLLIN) {
			take_snapshot(v);
			redraw |= !v->paused;
		}
		now = gt_now_ns();
		if (now >= next) {
			/* one request per interval; the drain answers at its next pass */
			if (!v->paused)
				gt_live_request(v->live);
			next = next + v->o.interval_ns > now ? next + v->o.interval_ns
			                                     : now + v->o.interval_ns;
			if (!v->paused) {
				draw(v, true); /* the clock and the file size move on their own */
				redraw = false;
			}
		}
		if (redraw)
			draw(v, false);
	}
	endwin();
	atomic_store(&restore.armed, 0);
	if (left) {
		/* q: tracing goes on without the aggregates, and the status line comes back */
		gt_live_stop(v->live);
		gt_status_hold(v->o.status, false);
	}
	return NULL;
}

/* ---- start and stop (the main thread) ---- */

bool gt_live_view_available(void)
{
	return true;
}

const struct gt_drain_tap *gt_live_view_tap(struct gt_live_view *v)
{
	return v ? gt_live_tap(v->live) : NULL;
}

static void view_free(struct gt_live_view *v)
{
	if (v->screen)
		delscreen(v->screen);
	uninstall_handlers();
	if (v->tty)
		fclose(v->tty);
	else if (v->tty_fd >= 0)
		close(v->tty_fd);
	if (v->stop_fd >= 0)
		close(v->stop_fd);
	for (size_t i = 0; i < v->ndemangled; i++)
		free(v->demangled[i]);
	free(v->demangled);
	free(v->order);
	gt_live_delta_fini(&v->delta);
	gt_live_free(v->live);
	free(v);
}

int gt_live_view_start(const struct gt_live_view_options *o, struct gt_live_view **ret,
                       const char **why)
{
	static char unknown[96];
	const char *term = getenv("TERM");
	struct gt_live_view *v;
	sigset_t all, old;
	int r;

	*ret = NULL;
	if (!isatty(STDERR_FILENO)) {
		*why = "standard error is not a terminal";
		return 1;
	}
	if (!term || !*term || strcmp(term, "dumb") == 0) {
		*why = term && *term ? "TERM is dumb" : "TERM is not set";
		return 1;
	}
	v = calloc(1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	v->o = *o;
	v->tty_fd = v->stop_fd = -1;
	r = gt_live_new(gt_now_ns(), true, &v->live);
	if (r < 0)
		goto fail;
	v->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (v->stop_fd < 0) {
		r = -errno;
		goto fail;
	}
	v->tty_fd = open("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY);
	if (v->tty_fd < 0 || tcgetattr(v->tty_fd, &restore.saved) < 0) {
		*why = "there is no controlling terminal";
		r = 1;
		goto fail;
	}
	v->tty = fdopen(v->tty_fd, "r+");
	if (!v->tty) {
		r = -errno;
		goto fail;
	}
	install_handlers();
	gt_status_clear(o->status);
	/* released by the view's thread when the user leaves with q, else by stop */
	gt_status_hold(o->status, true);
	v->screen = newterm(NULL, v->tty, v->tty);
	if (!v->screen) {
		snprintf(unknown, sizeof(unknown), "the terminal type TERM=%.40s is unknown here",
		         term);
		*why = unknown;
		r = 1;
		goto fail;
	}
	set_term(v->screen);
	cbreak();
	noecho();
	keypad(stdscr, TRUE);
	nodelay(stdscr, TRUE);
	set_escdelay(25); /* a lone Esc must not hold the thread for ncurses' default second */
	curs_set(0);
	if (has_colors()) {
		start_color();
		use_default_colors();
		init_pair(PAIR_RED, COLOR_RED, -1);
	}
	restore.fd = v->tty_fd;
	restore.len = 0;
	append_cap("sgr0");
	append_cap("cnorm");
	append_cap("rmkx");
	append_cap("rmcup");
	atomic_store(&restore.suspended, 0);
	atomic_store(&restore.resumed, 0);
	atomic_store(&restore.armed, 1);
	/* every asynchronous signal stays with the main thread, whose handlers wake the
	 * session (the view's thread inherits this mask) */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	r = -pthread_create(&v->thread, NULL, view_main, v);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r < 0) {
		endwin();
		atomic_store(&restore.armed, 0);
		goto fail;
	}
	v->thread_started = true;
	*ret = v;
	return 0;
fail:
	if (o->status)
		gt_status_hold(o->status, false);
	view_free(v);
	if (r < 0) {
		snprintf(unknown, sizeof(unknown), "cannot start the view: %s", strerror(-r));
		*why = unknown;
	}
	return r;
}

void gt_live_view_stop(struct gt_live_view *v)
{
	uint64_t one = 1;
	ssize_t n;

	if (!v)
		return;
	if (v->thread_started) {
		n = write(v->stop_fd, &one, sizeof(one));
		(void)n;
		/* bounded: the thread sleeps at most VIEW_POLL_MS between looks at stop_fd */
		pthread_join(v->thread, NULL);
	}
	gt_status_hold(v->o.status, false);
	view_free(v);
}
