/* gputrace view: export a trace to Perfetto protobuf next to it (or reuse a newer export),
 * serve that file once on 127.0.0.1 through src/httpd/httpd.c and open ui.perfetto.dev on it.
 * gt_cli_view() is also the end of `gputrace run --view`. Runs in the CLI. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "clock.h"
#include "exporter.h"
#include "gputrace/trace.h"
#include "httpd.h"
#include "common.h"
#include "options.h"
#include "output.h"
#include "status-line.h"
#include "view.h"

extern char **environ;

#define VIEW_EXT               ".pftrace"
#define VIEW_URL_NAME_MAX      200 /* bytes of the file name in the URL */
#define VIEW_MAX_TIMEOUT_NS    (7ull * 24 * 3600 * 1000000000ull)
#define VIEW_PROGRESS_AFTER_NS 300000000ull /* short exports never show a bar */
#define VIEW_BROWSER_WORDS     16

static const int stop_signals[] = {SIGINT, SIGTERM, SIGHUP};

static void usage(FILE *out)
{
	fputs("Usage: gputrace view TRACE [options]\n"
	      "\n"
	      "Open a trace in the Perfetto UI (ui.perfetto.dev): export it to Perfetto "
	      "protobuf\n"
	      "next to the trace (TRACE.pftrace, reused only while it records that it is the\n"
	      "export of this very trace, whole; a .pftrace is served as it is), serve that\n"
	      "file once on 127.0.0.1 and open the UI on it.\n"
	      "Exits when the file has been fetched once, on Ctrl-C, or after --timeout.\n"
	      "\n"
	      "Options:\n"
	      "      --port N     port on 127.0.0.1 (default 9001, as Perfetto's own tools; "
	      "0: any\n"
	      "                   free port)\n"
	      "      --no-open    print the URL only; start no browser\n"
	      "      --timeout S  give up after S seconds if nobody fetched the file (e.g. "
	      "90, 5m;\n"
	      "                   default 0: wait)\n"
	      "  -v, --verbose    a line for every request answered\n"
	      "  -h, --help       show this help\n"
	      "      --first-steps N  view the first N steps of the training loop (NVTX "
	      "ranges\n"
	      "                   ProfilerStep#N, step, train_step, iteration); or any window "
	      "below\n"
	      "\n" GT_CLI_WINDOW_HELP
	      "  A window is exported to TRACE.window.pftrace each time. A trace too large for "
	      "the\n"
	      "  UI (about 2 GB of protobuf, estimated before exporting) needs one.\n"
	      "\n"
	      "The browser: $BROWSER (commands separated by ':', %s for the URL), else "
	      "xdg-open when\n"
	      "a display is set. Over SSH (SSH_CONNECTION set) it also prints the 'ssh -L' "
	      "command\n"
	      "that makes the URL work in your laptop's browser.\n"
	      "\n"
	      "Exit status: 0 fetched, 64 bad option (a window that selects nothing), 65\n"
	      "unreadable trace, 66 no such file, 69 nothing recorded to view, too large for the\n"
	      "UI, or the port in use, 73 the export cannot be written next to the trace, 74\n"
	      "write error, 75 --timeout passed, 128+N stopped by signal N.\n",
	      out);
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && strcmp(s + n - m, suffix) == 0;
}

struct progress {
	struct gt_status_line line;
	uint64_t start_ns;
};

static void on_progress(void *ctx, uint64_t done, uint64_t total)
{
	struct progress *p = ctx;

	if (gt_now_ns() - p->start_ns >= VIEW_PROGRESS_AFTER_NS)
		gt_status_progress(&p->line, "exporting", done, total);
}

/* Export what t's window keeps of the trace to `out` through the output path (a temporary
 * renamed into place, removed if we are stopped: an interrupted export never passes for a
 * fresh one), recording what it is an export of (`identity`). Returns a GT_EXIT_* code. */
static int export_trace(const struct gt_cli *cli, struct gt_cli_trace *t, const char *out,
                        const char *identity)
{
	const struct gt_exporter_ops *exp = gt_exporter_find("perfetto");
	struct gt_export_options eo = {.demangle = 1, .output = out, .identity = identity};
	const char *msg = NULL, *cmd = cli->cmd->name;
	struct gt_export_result res = {0};
	struct gt_output_error oerr;
	struct gt_output *o = NULL;
	char count[32], size[32];
	struct progress prog;
	int ret, code;

	if (!exp) {
		gt_cli_error("%s: this build has no perfetto exporter", cmd);
		return GT_EXIT_SOFTWARE;
	}
	ret = gt_output_open(out, (const char *const *)cli->args, 1, 0, &o, &oerr);
	if (ret < 0) {
		gt_cli_error(
		        "%s: cannot write %s next to the trace (%s); export it elsewhere with "
		        "'gputrace export %s -f perfetto -o DIR/NAME.pftrace' and view that file",
		        cmd, out, oerr.msg[0] ? oerr.msg : strerror(-ret), t->path);
		return gt_cli_output_status(ret);
	}
	gt_cli_output_signals();
	eo.out = o;
	gt_status_init(&prog.line, true);
	prog.start_ns = gt_now_ns();
	if (prog.line.enabled) {
		eo.progress = on_progress;
		eo.progress_ctx = &prog;
	}
	ret = gt_export_window(exp, t->r, &t->win.w, &eo, &res, &msg, NULL);
	gt_status_clear(&prog.line);
	if (ret < 0) {
		gt_cli_error("export to %s failed: %s", out, msg ? msg : strerror(-ret));
		code = gt_cli_export_status(o, ret);
		goto out;
	}
	code = gt_cli_output_finish(cli, o, NULL, GT_EXIT_OK);
	if (code != GT_EXIT_OK)
		goto out;
	/* said as every command says it; the view goes on with what could be read */
	gt_cli_trace_damage(cli, t);
	if (res.warning)
		gt_cli_warn("%s", res.warning);
	fprintf(stderr, "gputrace: exported %s (%s events, %s)\n", out,
	        gt_fmt_count(res.events, count, sizeof(count)),
	        gt_fmt_bytes(res.bytes, size, sizeof(size)));
out:
	gt_output_free(o);
	return code;
}

/* "/NAME.pftrace" from the served file's name: characters a URL carries as they are, others
 * as '_' (the name is only what the UI shows as the trace's title). */
static void url_path_of(const char *file, char *out, size_t bytes)
{
	const char *base = strrchr(file, '/');
	size_t n = 0;

	base = base ? base + 1 : file;
	if (strlen(base) > VIEW_URL_NAME_MAX || strlen(base) < 1)
		base = "trace" VIEW_EXT;
	out[n++] = '/';
	for (; *base && n + 1 < bytes; base++)
		out[n++] =
		        strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-",
		               *base)
		                ? *base
		                : '_';
	out[n] = '\0';
}

/* Start one browser command with the URL: words split on blanks, "%s" in a word replaced
 * by the URL, else the URL appended. In its own session (our Ctrl-C is not its), with no
 * blocked signals and its output discarded; an exec failure comes back through a
 * close-on-exec pipe. Returns its pid or -errno. */
static pid_t spawn_browser(const char *command, const char *url)
{
	char buf[1024], *argv[VIEW_BROWSER_WORDS + 2], *save = NULL, *w;
	char words[VIEW_BROWSER_WORDS][1024];
	bool substituted = false;
	int argc = 0, err = 0, pipefd[2], null_fd;
	sigset_t none;
	ssize_t n;
	pid_t pid;

	if (strlen(command) >= sizeof(buf))
		return -ENAMETOOLONG;
	strcpy(buf, command);
	for (w = strtok_r(buf, " \t", &save); w && argc < VIEW_BROWSER_WORDS;
	     w = strtok_r(NULL, " \t", &save)) {
		char *pct = strstr(w, "%s");

		if (pct && !substituted) {
			snprintf(words[argc], sizeof(words[argc]), "%.*s%s%s", (int)(pct - w), w,
			         url, pct + 2);
			substituted = true;
		} else {
			snprintf(words[argc], sizeof(words[argc]), "%s", w);
		}
		argv[argc] = words[argc];
		argc++;
	}
	if (argc == 0)
		return -ENOENT;
	if (!substituted)
		argv[argc++] = (char *)url;
	argv[argc] = NULL;
	if (pipe2(pipefd, O_CLOEXEC) < 0) /* both ends closed below */
		return -errno;
	pid = fork();
	if (pid < 0) {
		err = errno;
		close(pipefd[0]);
		close(pipefd[1]);
		return -err;
	}
	if (pid == 0) {
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		setsid();
		null_fd = open("/dev/null", O_RDWR);
		if (null_fd >= 0) {
			dup2(null_fd, 0);
			dup2(null_fd, 1);
			dup2(null_fd, 2);
		}
		execvp(argv[0], argv);
		err = errno;
		n = write(pipefd[1], &err, sizeof(err));
		(void)n;
		_exit(127);
	}
	close(pipefd[1]);
	n = read(pipefd[0], &err, sizeof(err)); /* EOF: exec succeeded */
	close(pipefd[0]);
	if (n == (ssize_t)sizeof(err)) {
		waitpid(pid, NULL, 0);
		return -err;
	}
	return pid;
}

/* The desktop's browser: each command of $BROWSER in turn, else xdg-open when there is a
 * display. Returns the pid (and *used, the command's first word), 0 when there is no
 * browser to start, or -errno of the last failed start (*used names it). */
static pid_t open_browser(const char *url, char *used, size_t used_bytes)
{
	const char *browser = getenv("BROWSER"), *display = getenv("DISPLAY");
	const char *wayland = getenv("WAYLAND_DISPLAY");
	pid_t pid = 0;

	used[0] = '\0';
	if (browser && *browser) {
		char list[1024], *save = NULL;

		snprintf(list, sizeof(list), "%s", browser);
		for (char *c = strtok_r(list, ":", &save); c; c = strtok_r(NULL, ":", &save)) {
			snprintf(used, used_bytes, "%.*s",
			         (int)strcspn(c + strspn(c, " \t"), " \t"), c + strspn(c, " \t"));
			pid = spawn_browser(c, url);
			if (pid > 0)
				return pid;
		}
		return pid;
	}
	if ((display && *display) || (wayland && *wayland)) {
		snprintf(used, used_bytes, "xdg-open");
		return spawn_browser("xdg-open", url);
	}
	return 0;
}

/* The machine's address as the laptop's ssh knows it: the server end of SSH_CONNECTION
 * ("client port server port"), else the host name. */
static void ssh_host(const char *conn, char *out, size_t bytes)
{
	char a[4][128];

	if (sscanf(conn, "%127s %127s %127s %127s", a[0], a[1], a[2], a[3]) >= 3) {
		snprintf(out, bytes, "%s", a[2]);
		return;
	}
	if (gethostname(out, bytes) < 0 || !out[0])
		snprintf(out, bytes, "THIS-HOST");
	out[bytes - 1] = '\0';
}

/* What a logged response was, for --verbose. */
static const char *response_note(const struct gt_httpd_response *r)
{
	if (r->fetched)
		return " (the fetch)";
	if (!r->complete)
		return " (the connection was lost)";
	if (r->status == 200 && r->body_bytes)
		return " (not the fetch: not from " GT_VIEW_ORIGIN ")";
	return "";
}

static void on_response(void *ctx, const struct gt_httpd_response *r)
{
	const struct gt_view_opts *o = ctx;
	char n[32];

	if (o->verbose)
		fprintf(stderr, "gputrace: %s %s from %s: %d, %s body bytes%s\n",
		        r->method[0] ? r->method : "(unparsable request)", r->target,
		        r->origin ? r->origin : "no origin", r->status,
		        gt_fmt_count(r->body_bytes, n, sizeof(n)), response_note(r));
}

/* Open the trace of cli, with the window that --first-steps or the window options choose
 * resolved on it and checked. Returns a GT_EXIT_* code. */
static int open_trace(const struct gt_cli *cli, const struct gt_view_opts *o,
                      struct gt_cli_trace *t)
{
	const char *cmd = cli->cmd->name;
	int code = gt_cli_trace_open(cli, cli->args[0], t);

	if (code != GT_EXIT_OK || !o->first_steps)
		return code;
	code = gt_cli_window_first_steps(&t->win, t->r, o->first_steps, t->path, cmd);
	if (code == GT_EXIT_OK)
		code = gt_cli_window_check(cmd, t->r, t->path, &t->win.w);
	if (code == GT_EXIT_OK && t->win.what[0])
		fprintf(stderr, "gputrace: window: %s\n", t->win.what);
	return code;
}

/* A trace with nothing to show (no GPU work, API call or NVTX range recorded: no CUDA, no
 * GPU, a CUPTI that refused us) is not served: an empty timeline would wait for a fetch that
 * shows nothing. Traces without a footer are not checked. Returns a GT_EXIT_* code. */
static int has_events(const struct gt_cli_trace *t, const char *cmd)
{
	const struct gt_trace_counts *fc = gt_reader_footer_counts(t->r);
	uint64_t events = 0;

	for (unsigned k = 0; fc && k < GT_REC_MAX; k++)
		if (!(GT_TRACE_STATE_TYPES >> k & 1) && k != GT_REC_PROCESS_END &&
		    k != GT_REC_NOTICE && k != GT_REC_THREAD)
			events += fc->records[k];
	if (!fc || events)
		return GT_EXIT_OK;
	gt_cli_error("%s: nothing to view: %s holds no GPU work, API call or NVTX range ('gputrace "
	             "info %s' shows what it holds; 'gputrace doctor' why tracing may not work "
	             "here)",
	             cmd, t->path, t->path);
	return GT_EXIT_UNAVAILABLE;
}

/* Before exporting the whole trace: whether it fits the UI, by the chunk index's estimate; if
 * not, the windows that would, and GT_EXIT_UNAVAILABLE. */
static int fits_ui(const struct gt_cli_trace *t, const char *cmd)
{
	if (!gt_cli_window_too_big(t->r, &t->win, "perfetto", 0, t->path, true))
		return GT_EXIT_OK;
	gt_cli_error("%s: %s is too large to view whole; view a window of it (above), or open "
	             "it with Perfetto's trace_processor --httpd",
	             cmd, t->path);
	return GT_EXIT_UNAVAILABLE;
}

/* The file to serve for cli's trace into served: a .pftrace as it is; a window's export, made
 * each time; the whole trace's export, reused only when it records that it is a complete
 * export of this very trace. Returns a GT_EXIT_* code. */
static int file_to_serve(const struct gt_cli *cli, const struct gt_view_opts *o, char *served,
                         size_t bytes)
{
	const char *trace = cli->args[0], *cmd = cli->cmd->name;
	bool window = o->first_steps || gt_cli_window_given(&o->window);
	struct gt_cli_trace t = {0};
	char identity[1024];
	struct stat ps;
	int code;

	if (ends_with(trace, VIEW_EXT)) {
		if (window) {
			gt_cli_error("%s: %s is an export already; a window needs the .gtrace", cmd,
			             trace);
			return GT_EXIT_USAGE;
		}
		if (stat(trace, &ps) < 0) {
			gt_cli_error("%s: %s: %s", cmd, trace, strerror(errno));
			return GT_EXIT_NO_INPUT;
		}
		snprintf(served, bytes, "%s", trace);
		return GT_EXIT_OK;
	}
	code = open_trace(cli, o, &t);
	if (code == GT_EXIT_OK &&
	    gt_export_identity(trace, &t.win.w, identity, sizeof(identity)) < 0) {
		gt_cli_error("%s: %s: %s", cmd, trace, strerror(errno));
		code = GT_EXIT_NO_INPUT;
	}
	if (code != GT_EXIT_OK)
		goto out;
	gt_opt_derived_name(trace, window ? ".window" VIEW_EXT : VIEW_EXT, served, bytes);
	if (!window) {
		code = has_events(&t, cmd);
		if (code != GT_EXIT_OK)
			goto out;
		/* not a window's export, not an earlier trace's of the same name */
		if (stat(served, &ps) == 0 && S_ISREG(ps.st_mode) &&
		    gt_perfetto_is_export_of(served, identity)) {
			fprintf(stderr, "gputrace: %s is the export of %s: serving it as it is\n",
			        served, trace);
			goto out;
		}
		code = fits_ui(&t, cmd);
		if (code != GT_EXIT_OK)
			goto out;
	}
	code = export_trace(cli, &t, served, identity);
out:
	gt_cli_trace_close(&t);
	return code;
}

/* Whether served can be served: readable, and small enough for the UI. *size its size.
 * Returns a GT_EXIT_* code. */
static int check_served(const char *served, const char *cmd, uint64_t *size)
{
	char have[32], limit[32];
	struct stat ps;

	if (stat(served, &ps) < 0 || access(served, R_OK) < 0) {
		gt_cli_error("%s: %s", served, strerror(errno));
		return GT_EXIT_NO_INPUT;
	}
	*size = (uint64_t)ps.st_size;
	if (*size <= GT_VIEW_UI_MAX_BYTES)
		return GT_EXIT_OK;
	gt_cli_error("%s: %s is %s, more than the Perfetto UI can hold in a browser (about %s); "
	             "open it with Perfetto's trace_processor --httpd instead "
	             "(https://perfetto.dev/docs/visualization/large-traces)",
	             cmd, served, gt_fmt_bytes(*size, have, sizeof(have)),
	             gt_fmt_bytes(GT_VIEW_UI_MAX_BYTES, limit, sizeof(limit)));
	return GT_EXIT_UNAVAILABLE;
}

/* The server of ho on o's port, for `trace`. Returns a GT_EXIT_* code. */
static int start_server(const struct gt_httpd_options *ho, const struct gt_view_opts *o,
                        const char *trace, const char *cmd, struct gt_httpd **h)
{
	int r = gt_httpd_new(ho, h);

	if (r == -EADDRINUSE || (r == -EACCES && o->port && o->port < 1024)) {
		const char *why = r == -EADDRINUSE ? "is in use (another gputrace view, or a "
		                                     "trace_processor --httpd?)"
		                                   : "needs root";

		if (strcmp(cmd, "view") == 0)
			gt_cli_error("view: port %u on 127.0.0.1 %s; choose another with --port N "
			             "(0: any free port)",
			             o->port, why);
		else
			gt_cli_error("%s: port %u on 127.0.0.1 %s; serve the trace on another with "
			             "'gputrace view %s --port N'",
			             cmd, o->port, why, trace);
		return GT_EXIT_UNAVAILABLE;
	}
	if (r < 0) {
		gt_cli_error("%s: cannot serve %s: %s", cmd, ho->file, strerror(-r));
		return r == -ENOENT || r == -EACCES || r == -EISDIR ? GT_EXIT_NO_INPUT
		                                                    : GT_EXIT_SOFTWARE;
	}
	return GT_EXIT_OK;
}

/* Ctrl-C, a kill or a hang-up stop the serving through a signalfd; those ignored when we
 * started stay ignored. Returns the signalfd (-1: the signals keep their usual effect, a
 * Ctrl-C ends gputrace); *masked whether old_mask is to be restored at the end. */
static int stop_signals_fd(sigset_t *old_mask, bool *masked)
{
	sigset_t set;
	int sfd;

	sigemptyset(&set);
	for (int i = 0; i < 3; i++) {
		struct sigaction sa;

		if (sigaction(stop_signals[i], NULL, &sa) == 0 && sa.sa_handler != SIG_IGN)
			sigaddset(&set, stop_signals[i]);
	}
	*masked = sigprocmask(SIG_BLOCK, &set, old_mask) == 0;
	sfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sfd < 0 && *masked) {
		sigprocmask(SIG_SETMASK, old_mask, NULL);
		*masked = false;
	}
	return sfd;
}

/* Where the file is served and the URL to open, over SSH the tunnel first; then the browser.
 * Returns the browser's pid, 0 when none was started. */
static pid_t announce(const char *served, uint64_t size, uint16_t port, const char *url_path,
                      const struct gt_view_opts *o)
{
	const char *ssh = getenv("SSH_CONNECTION");
	char url[512], bytes[32], used[256], host[256];
	pid_t browser = 0;

	snprintf(url, sizeof(url), "%s/#!/?url=http://127.0.0.1:%u%s", GT_VIEW_ORIGIN, port,
	         url_path);
	fprintf(stderr, "gputrace: serving %s (%s) once at http://127.0.0.1:%u%s\n", served,
	        gt_fmt_bytes(size, bytes, sizeof(bytes)), port, url_path);
	if (ssh && *ssh) {
		ssh_host(ssh, host, sizeof(host));
		fprintf(stderr,
		        "gputrace: over SSH: on your laptop, forward the port first: "
		        "ssh -L %u:127.0.0.1:%u %s\n",
		        port, port, host);
	}
	fprintf(stderr, "gputrace: open %s\n", url);
	if (!o->no_open) {
		browser = open_browser(url, used, sizeof(used));
		if (browser < 0)
			gt_cli_warn("could not start the browser (%s: %s); open the URL above "
			            "yourself",
			            used, strerror((int)-browser));
		else if (browser > 0)
			fprintf(stderr, "gputrace: opened it with %s\n", used);
	}
	fprintf(stderr, "gputrace: waiting for the browser to fetch it (Ctrl-C to stop)\n");
	return browser > 0 ? browser : 0;
}

/* How the serving ended (gt_httpd_run returned r), said once. Returns a GT_EXIT_* code. */
static int served_status(int r, int sfd, const char *served, const char *cmd)
{
	struct signalfd_siginfo si = {0};

	if (r == 0) {
		fprintf(stderr, "gputrace: the browser fetched %s; done\n", served);
		return GT_EXIT_OK;
	}
	if (r == -ETIMEDOUT) {
		gt_cli_error("%s: nobody fetched %s within --timeout; stopped", cmd, served);
		return GT_EXIT_TEMPFAIL;
	}
	if (r == -ECANCELED) {
		if (read(sfd, &si, sizeof(si)) != sizeof(si))
			si.ssi_signo = SIGINT;
		gt_cli_error("%s: stopped (%s) before the browser fetched %s", cmd,
		             strsignal((int)si.ssi_signo), served);
		return 128 + (int)si.ssi_signo;
	}
	gt_cli_error("%s: serving %s failed: %s", cmd, served, strerror(-r));
	return GT_EXIT_SOFTWARE;
}

int gt_cli_view(const char *trace, const struct gt_view_opts *o, const char *cmd)
{
	char served[PATH_MAX + 16], url_path[VIEW_URL_NAME_MAX + 2];
	struct gt_httpd_options ho = {
	        .allow_origin = GT_VIEW_ORIGIN,
	        .port = o->port,
	        .file = served,
	        .url_path = url_path,
	        .on_response = on_response,
	        .ctx = (void *)o,
	};
	/* the shared scaffolding's view of this call: `cmd` names it, the trace its one input */
	const struct gt_cli_cmd cc = {.name = cmd, .common = o->first_steps ? 0 : GT_CLI_WINDOW};
	const struct gt_cli cli = {
	        .cmd = &cc, .win = o->window, .args = (char **)&trace, .nargs = 1};
	struct gt_httpd *h = NULL;
	sigset_t old_mask;
	bool masked = false;
	uint64_t size = 0;
	pid_t browser;
	int sfd, code;

	code = file_to_serve(&cli, o, served, sizeof(served));
	if (code == GT_EXIT_OK)
		code = check_served(served, cmd, &size);
	if (code != GT_EXIT_OK)
		return code;
	url_path_of(served, url_path, sizeof(url_path));
	code = start_server(&ho, o, trace, cmd, &h); /* freed at the end */
	if (code != GT_EXIT_OK)
		return code;
	sfd = stop_signals_fd(&old_mask, &masked); /* closed at the end */
	browser = announce(served, size, gt_httpd_port(h), url_path, o);
	code = served_status(gt_httpd_run(h, o->timeout_ns, sfd), sfd, served, cmd);
	if (browser > 0)
		waitpid(browser, NULL, WNOHANG); /* a launcher like xdg-open is gone by now */
	if (sfd >= 0)
		close(sfd);
	if (masked)
		sigprocmask(SIG_SETMASK, &old_mask, NULL);
	gt_httpd_free(h);
	return code;
}

/* A --port value, 0 to 65535; prints the error for `what` ("view: --port"). */
static int parse_port(const char *s, const char *what, uint16_t *port)
{
	uint64_t v;

	if (gt_opt_uint(s, 0, 65535, &v) < 0) {
		gt_cli_error("%s: '%s' is not valid; use a port from 0 (any free one) to 65535",
		             what, s);
		return -EINVAL;
	}
	*port = (uint16_t)v;
	return 0;
}

int gt_cli_view_option(const char *port, struct gt_view_opts *o)
{
	o->requested = true;
	o->port = GT_VIEW_PORT;
	return port ? parse_port(port, "run: --view", &o->port) : 0;
}

static int view_option(void *ctx, int c, const char *arg)
{
	struct gt_view_opts *o = ctx;

	switch (c) {
	case 'P':
		return parse_port(arg, "view: --port", &o->port) < 0 ? GT_EXIT_USAGE : GT_EXIT_OK;
	case 'n':
		o->no_open = true;
		return GT_EXIT_OK;
	case 'T':
		if (gt_opt_duration(arg, VIEW_MAX_TIMEOUT_NS, &o->timeout_ns) < 0) {
			gt_cli_error("view: --timeout: '%s' is not valid; use seconds, e.g. 90, 2.5, "
			             "5m, 1h (0: wait until fetched)",
			             arg);
			return GT_EXIT_USAGE;
		}
		return GT_EXIT_OK;
	case 'v':
		o->verbose = true;
		return GT_EXIT_OK;
	case 'S':
		if (gt_opt_uint(arg, 1, 1000000, &o->first_steps) < 0) {
			gt_cli_error("view: --first-steps: '%s' is not valid; use a number of steps, "
			             "e.g. 10",
			             arg);
			return GT_EXIT_USAGE;
		}
		return GT_EXIT_OK;
	default:
		return GT_EXIT_USAGE;
	}
}

static const struct option view_longopts[] = {
        {"port", required_argument, NULL, 'P'},
        {"no-open", no_argument, NULL, 'n'},
        {"timeout", required_argument, NULL, 'T'},
        {"verbose", no_argument, NULL, 'v'},
        {"first-steps", required_argument, NULL, 'S'},
        {NULL, 0, NULL, 0},
};

static const struct gt_cli_cmd view_cmd = {
        .name = "view",
        .synopsis = "gputrace view TRACE [--port N] [--no-open]",
        .common = GT_CLI_WINDOW,
        .shortopts = "v",
        .longopts = view_longopts,
        .option = view_option,
        .usage = usage,
        .min_args = 1,
        .max_args = 1,
        .args_what = "trace file",
};

int cmd_view(int argc, char **argv)
{
	struct gt_view_opts o = {.port = GT_VIEW_PORT};
	struct gt_cli cli;
	int status = gt_cli_parse(&cli, &view_cmd, &o, argc, argv);

	if (status != GT_EXIT_OK || cli.help)
		return status;
	o.window = cli.win;
	if (o.first_steps && (o.window.from || o.window.to || o.window.nvtx)) {
		gt_cli_error(
		        "view: --first-steps and --from/--to/--nvtx both choose the time; give "
		        "one of them");
		return GT_EXIT_USAGE;
	}
	return gt_cli_view(cli.args[0], &o, "view");
}
