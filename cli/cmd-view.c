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
	      "that makes the URL work in your laptop's browser.\n",
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

/* Export what window w keeps of `trace` to `out` through the output path (a temporary renamed
 * into place, removed if we are stopped: an interrupted export never passes for a fresh one),
 * recording what it is an export of (`identity`). Returns a GT_EXIT_* code. */
static int export_trace(const char *trace, const char *out, const char *cmd,
                        const struct gt_window *w, const char *identity)
{
	const struct gt_exporter_ops *exp = gt_exporter_find("perfetto");
	struct gt_export_options eo = {.demangle = 1, .output = out, .identity = identity};
	const char *const inputs[] = {trace};
	struct gt_export_result res = {0};
	struct gt_output_error oerr;
	struct gt_output *o = NULL;
	struct gt_reader *r = NULL;
	char count[32], size[32];
	const char *msg = NULL;
	struct progress prog;
	int ret, code;

	if (!exp) {
		gt_cli_error("%s: this build has no perfetto exporter", cmd);
		return GT_EXIT_SOFTWARE;
	}
	ret = gt_reader_open(trace, &r, &msg); /* closed at out */
	if (ret < 0) {
		gt_cli_error("%s: %s", trace, msg ? msg : strerror(-ret));
		return ret == -EACCES ? GT_EXIT_NO_INPUT : GT_EXIT_BAD_TRACE;
	}
	ret = gt_output_open(out, inputs, 1, 0, &o, &oerr);
	if (ret < 0) {
		gt_cli_error("%s: cannot write %s next to the trace (%s); export it elsewhere with "
		             "'gputrace export %s -f perfetto -o DIR/NAME.pftrace' and view that file",
		             cmd, out, oerr.msg[0] ? oerr.msg : strerror(-ret), trace);
		code = ret == -EEXIST ? GT_EXIT_USAGE : GT_EXIT_CANT_CREATE;
		goto out;
	}
	gt_cli_output_signals();
	eo.out = o;
	gt_status_init(&prog.line, true);
	prog.start_ns = gt_now_ns();
	if (prog.line.enabled) {
		eo.progress = on_progress;
		eo.progress_ctx = &prog;
	}
	ret = gt_export_window(exp, r, w, &eo, &res, &msg, NULL);
	gt_status_clear(&prog.line);
	if (ret < 0) {
		gt_cli_error("export to %s failed: %s", out, msg ? msg : strerror(-ret));
		code = gt_cli_export_status(ret);
		goto out;
	}
	ret = gt_output_commit(o, &oerr);
	if (ret < 0) {
		gt_cli_error("%s: %s", cmd, oerr.msg[0] ? oerr.msg : strerror(-ret));
		code = GT_EXIT_IO;
		goto out;
	}
	/* said as every command says it; the view goes on with what could be read */
	gt_cli_damage_report(cmd, trace, gt_reader_status(r));
	if (res.warning)
		gt_cli_warn("%s", res.warning);
	fprintf(stderr, "gputrace: exported %s (%s events, %s)\n", out,
	        gt_fmt_count(res.events, count, sizeof(count)),
	        gt_fmt_bytes(res.bytes, size, sizeof(size)));
	code = GT_EXIT_OK;
out:
	gt_output_free(o);
	gt_reader_close(r);
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

/* The window --first-steps or the window options choose, resolved on the trace. Returns a
 * GT_EXIT_* code. */
static int window_of(const char *trace, const struct gt_view_opts *o, struct gt_cli_window *cw,
                     const char *cmd)
{
	struct gt_reader *r = NULL;
	const char *msg = NULL;
	int ret = gt_reader_open(trace, &r, &msg); /* closed below */

	if (ret < 0) {
		gt_cli_error("%s: %s", trace, msg ? msg : strerror(-ret));
		return ret == -EACCES ? GT_EXIT_NO_INPUT : GT_EXIT_BAD_TRACE;
	}
	if (o->first_steps)
		ret = gt_cli_window_first_steps(cw, r, o->first_steps, trace, cmd);
	else
		ret = gt_cli_window_resolve(cw, r, trace, cmd);
	if (ret == GT_EXIT_OK)
		ret = gt_cli_window_check(cmd, r, trace, &cw->w);
	if (ret == GT_EXIT_OK && cw->what[0])
		fprintf(stderr, "gputrace: window: %s\n", cw->what);
	gt_reader_close(r);
	return ret;
}

/* A trace with nothing to show (no GPU work, API call or NVTX range recorded: no CUDA, no
 * GPU, a CUPTI that refused us) is not served: an empty timeline would wait for a fetch that
 * shows nothing. Traces without a footer are not checked. Returns a GT_EXIT_* code. */
static int has_events(const char *trace, const char *cmd)
{
	const struct gt_trace_counts *fc;
	struct gt_reader *r = NULL;
	const char *msg = NULL;
	uint64_t events = 0;
	int ret = gt_reader_open(trace, &r, &msg); /* closed below */

	if (ret < 0) {
		gt_cli_error("%s: %s", trace, msg ? msg : strerror(-ret));
		return ret == -EACCES ? GT_EXIT_NO_INPUT : GT_EXIT_BAD_TRACE;
	}
	fc = gt_reader_footer_counts(r);
	for (unsigned t = 0; fc && t < GT_REC_MAX; t++)
		if (!(GT_TRACE_STATE_TYPES >> t & 1) && t != GT_REC_PROCESS_END &&
		    t != GT_REC_NOTICE && t != GT_REC_THREAD)
			events += fc->records[t];
	gt_reader_close(r);
	if (!fc || events)
		return GT_EXIT_OK;
	gt_cli_error("%s: nothing to view: %s holds no GPU work, API call or NVTX range ('gputrace "
	             "info %s' shows what it holds; 'gputrace doctor' why tracing may not work "
	             "here)",
	             cmd, trace, trace);
	return GT_EXIT_UNAVAILABLE;
}

/* Before exporting the whole trace: whether it fits the UI, by the chunk index's estimate; if
 * not, the windows that would, and GT_EXIT_UNAVAILABLE. */
static int fits_ui(const char *trace, const char *cmd)
{
	struct gt_cli_window none = {0};
	struct gt_reader *r = NULL;
	const char *msg = NULL;
	int ret = gt_reader_open(trace, &r, &msg); /* closed below */

	if (ret < 0) {
		gt_cli_error("%s: %s", trace, msg ? msg : strerror(-ret));
		return ret == -EACCES ? GT_EXIT_NO_INPUT : GT_EXIT_BAD_TRACE;
	}
	ret = gt_cli_window_too_big(r, &none, "perfetto", 0, trace, true);
	gt_reader_close(r);
	if (!ret)
		return GT_EXIT_OK;
	gt_cli_error("%s: %s is too large to view whole; view a window of it (above), or open "
	             "it with Perfetto's trace_processor --httpd",
	             cmd, trace);
	return GT_EXIT_UNAVAILABLE;
}

int gt_cli_view(const char *trace, const struct gt_view_opts *o, const char *cmd)
{
	char served[PATH_MAX + 16], url_path[VIEW_URL_NAME_MAX + 2], url[512], size[32];
	char limit[32], used[256], host[256], identity[1024];
	struct gt_httpd_options ho = {
	        .allow_origin = GT_VIEW_ORIGIN,
	        .port = o->port,
	        .on_response = on_response,
	        .ctx = (void *)o,
	};
	struct gt_httpd *h = NULL;
	struct stat ts, ps;
	sigset_t set, old_mask;
	bool masked = false;
	const char *ssh = getenv("SSH_CONNECTION");
	pid_t browser = 0;
	int sfd = -1, code, r;
	uint16_t port;

	if (stat(trace, &ts) < 0) {
		gt_cli_error("%s: %s", trace, strerror(errno));
		return GT_EXIT_NO_INPUT;
	}
	if (ends_with(trace, VIEW_EXT)) {
		if (o->first_steps || gt_cli_window_given(&o->window)) {
			gt_cli_error("%s: %s is an export already; a window needs the .gtrace", cmd,
			             trace);
			return GT_EXIT_USAGE;
		}
		snprintf(served, sizeof(served), "%s", trace);
	} else if (o->first_steps || gt_cli_window_given(&o->window)) {
		struct gt_cli_window cw = o->window;

		code = window_of(trace, o, &cw, cmd);
		if (code)
			return code;
		gt_opt_derived_name(trace, ".window" VIEW_EXT, served, sizeof(served));
		if (gt_export_identity(trace, &cw.w, identity, sizeof(identity)) < 0) {
			gt_cli_error("%s: %s", trace, strerror(errno));
			return GT_EXIT_NO_INPUT;
		}
		code = export_trace(trace, served, cmd, &cw.w, identity);
		if (code)
			return code;
	} else {
		gt_opt_derived_name(trace, VIEW_EXT, served, sizeof(served));
		if (gt_export_identity(trace, NULL, identity, sizeof(identity)) < 0) {
			gt_cli_error("%s: %s", trace, strerror(errno));
			return GT_EXIT_NO_INPUT;
		}
		code = has_events(trace, cmd);
		if (code)
			return code;
		/* reused only when it says it is a complete export of this very trace, whole:
		 * not a window's, not an earlier trace's of the same name */
		if (stat(served, &ps) == 0 && S_ISREG(ps.st_mode) &&
		    gt_perfetto_is_export_of(served, identity)) {
			fprintf(stderr, "gputrace: %s is the export of %s: serving it as it is\n",
			        served, trace);
		} else {
			code = fits_ui(trace, cmd);
			if (code)
				return code;
			code = export_trace(trace, served, cmd, NULL, identity);
			if (code)
				return code;
		}
	}
	if (stat(served, &ps) < 0) {
		gt_cli_error("%s: %s", served, strerror(errno));
		return GT_EXIT_NO_INPUT;
	}
	if ((uint64_t)ps.st_size > GT_VIEW_UI_MAX_BYTES) {
		gt_cli_error("%s: %s is %s, more than the Perfetto UI can hold in a browser (about "
		             "%s); open it with Perfetto's trace_processor --httpd instead "
		             "(https://perfetto.dev/docs/visualization/large-traces)",
		             cmd, served, gt_fmt_bytes((uint64_t)ps.st_size, size, sizeof(size)),
		             gt_fmt_bytes(GT_VIEW_UI_MAX_BYTES, limit, sizeof(limit)));
		return GT_EXIT_UNAVAILABLE;
	}

	if (access(served, R_OK) < 0) {
		gt_cli_error("%s: %s", served, strerror(errno));
		return GT_EXIT_NO_INPUT;
	}
	url_path_of(served, url_path, sizeof(url_path));
	ho.file = served;
	ho.url_path = url_path;
	r = gt_httpd_new(&ho, &h); /* freed at the end */
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
		gt_cli_error("%s: cannot serve %s: %s", cmd, served, strerror(-r));
		return r == -ENOENT || r == -EACCES || r == -EISDIR ? GT_EXIT_NO_INPUT
		                                                    : GT_EXIT_SOFTWARE;
	}
	port = gt_httpd_port(h);

	/* Ctrl-C, a kill or a hang-up stop the serving through a signalfd; those ignored when
	 * we started stay ignored. The mask is restored at the end. */
	sigemptyset(&set);
	for (int i = 0; i < 3; i++) {
		struct sigaction sa;

		if (sigaction(stop_signals[i], NULL, &sa) == 0 && sa.sa_handler != SIG_IGN)
			sigaddset(&set, stop_signals[i]);
	}
	masked = sigprocmask(SIG_BLOCK, &set, &old_mask) == 0;
	sfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK); /* closed at the end */
	if (sfd < 0 && masked) {
		/* Then the signals keep their usual effect (a Ctrl-C ends gputrace). */
		sigprocmask(SIG_SETMASK, &old_mask, NULL);
		masked = false;
	}

	snprintf(url, sizeof(url), "%s/#!/?url=http://127.0.0.1:%u%s", GT_VIEW_ORIGIN, port,
	         url_path);
	fprintf(stderr, "gputrace: serving %s (%s) once at http://127.0.0.1:%u%s\n", served,
	        gt_fmt_bytes((uint64_t)ps.st_size, size, sizeof(size)), port, url_path);
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

	r = gt_httpd_run(h, o->timeout_ns, sfd);
	if (r == 0) {
		fprintf(stderr, "gputrace: the browser fetched %s; done\n", served);
		code = GT_EXIT_OK;
	} else if (r == -ETIMEDOUT) {
		gt_cli_error("%s: nobody fetched %s within --timeout; stopped", cmd, served);
		code = GT_EXIT_TEMPFAIL;
	} else if (r == -ECANCELED) {
		struct signalfd_siginfo si = {0};

		if (read(sfd, &si, sizeof(si)) != sizeof(si))
			si.ssi_signo = SIGINT;
		gt_cli_error("%s: stopped (%s) before the browser fetched %s", cmd,
		             strsignal((int)si.ssi_signo), served);
		code = 128 + (int)si.ssi_signo;
	} else {
		gt_cli_error("%s: serving %s failed: %s", cmd, served, strerror(-r));
		code = GT_EXIT_SOFTWARE;
	}
	if (browser > 0)
		waitpid(browser, NULL, WNOHANG); /* a launcher like xdg-open is gone by now */
	if (sfd >= 0)
		close(sfd); /* pairs with signalfd() above */
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
