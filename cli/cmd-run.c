/* gputrace run: trace a program and every process it starts. Opens the trace,
 * starts the session, runs the program with the injection environment, drains
 * every traced process until the whole process tree has exited, then prints the
 * summary and exits with the program's own status. Runs in the CLI process. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../exporters/catalog.h"
#include "cli.h"
#include "cuda-probe.h"
#include "gputrace/clock.h"
#include "gputrace/env.h"
#include "gputrace/envconf.h"
#include "gputrace/exporter.h"
#include "gputrace/pattern.h"
#include "gputrace/session.h"
#include "gputrace/stats.h"
#include "gputrace/trace.h"
#include "inject-path.h"
#include "options.h"
#include "spawn.h"
#include "status-line.h"
#include "view.h"

#define RUN_DEFAULT_OUTPUT   "gputrace-%n"
#define RUN_EXTENSION        ".gtrace"
#define RUN_POLL_NS          100000000ull /* longest the loop sleeps: bounds exit-detection delay */
#define RUN_LEFTOVER_NOTE_NS 1000000000ull /* program gone, tree not: say so after this */
#define RUN_MAX_SEQ          100000u
#define RUN_MAX_DURATION_NS  (1000ull * 24 * 3600 * 1000000000ull)

struct run_opts {
	const char *output; /* pattern, ".gtrace" appended when missing */
	bool force, quiet, stats;
	/* The options that are GPUTRACE_* settings: checked by the injection library's own parser
	 * (src/envconf.c) and handed to the program as given; NULL: the library's default. */
	const char *setting[GT_ENVCONF_MAX];
	struct gt_envconf cfg; /* the same settings parsed, for what the CLI itself needs */
	const char *export_name;
	uint64_t delay_ns, duration_ns;
	uint64_t write_queue_bytes; /* --write-queue: the writer thread's queue */
	char **argv; /* the program and its arguments */
	struct gt_view_opts view; /* --view[=PORT]: serve the trace to the Perfetto UI after */
};

/* Everything a run holds; freed in one place. */
struct run {
	struct run_opts o;
	char pattern[PATH_MAX];
	char path[PATH_MAX]; /* the trace */
	char tmp_path[PATH_MAX + 32];
	char inject[PATH_MAX];
	char cmdline[8192];
	char host[256];
	char driver[64], cuda[16];
	char **env; /* the program's environment; strings in env_store or environ */
	char *env_store[16];
	size_t env_nstore;
	char session_slot[sizeof(GT_ENV_SESSION) + 1 + 4096];
	struct gt_spawn sp;
	struct gt_writer *w;
	struct gt_session *s;
	struct gt_session_stats last; /* totals as of the last look (kept after the session) */
	uint64_t file_records;        /* records in the closed file, as `gputrace info` counts */
	uint64_t start_ns;            /* trace clock when the program was let go */
	bool main_done, tree_done;
	int main_status; /* wait status of the program */
	int trace_err;   /* first -errno that spoiled the trace, 0 if none */
	struct gt_status_line status;
};

static void usage(FILE *out)
{
	fputs("Usage: gputrace run [options] [--] program [args...]\n"
	      "\n"
	      "Trace a program and every process it starts, write the trace, print a "
	      "summary and\n"
	      "exit with the program's own exit status (128+N if signal N killed it).\n"
	      "\n"
	      "Options:\n"
	      "  -o, --output PATTERN     trace file name (default gputrace-%n; "
	      ".gtrace is added);\n"
	      "                           %p program pid, %h host, %q{VAR} environment "
	      "variable,\n"
	      "                           %n lowest free sequence number, %% a percent "
	      "sign\n"
	      "  -f, --force              overwrite an existing trace file\n"
	      "  -q, --quiet              no summary or status line; losses still warned\n"
	      "  -t, --trace LIST         what to record, comma-separated: kernel, "
	      "memcpy, memset,\n"
	      "                           memory, api, nvtx, sync, graph, overhead, or "
	      "all, cuda (the\n"
	      "                           default without nvtx), none, default (all "
	      "but sync and\n"
	      "                           overhead; the default)\n"
	      "      --api WHICH          API calls to record: launch (calls that "
	      "launch, copy, set,\n"
	      "                           allocate, free or synchronize; default), "
	      "all, none\n"
	      "      --capture-range R    none (default), cudaProfilerApi (between\n"
	      "                           cudaProfilerStart and Stop), nvtx:NAME "
	      "(inside NVTX ranges\n"
	      "                           named NAME)\n"
	      "      --delay S            drop what happened in the first S seconds "
	      "(trimmed from\n"
	      "                           the trace at the end; S may be 2, 0.5, "
	      "250ms, 1m)\n"
	      "      --duration S         stop recording S seconds after the start (or "
	      "the delay);\n"
	      "                           the program runs on untraced and gputrace "
	      "waits for it\n"
	      "      --buffer-size SIZE   ring buffer per process, 4K..1G (default "
	      "32M)\n"
	      "      --flush-interval MS  how often CUPTI hands over its records "
	      "(default 100;\n"
	      "                           0 only at exit)\n"
	      "      --write-queue SIZE   compressed trace waiting for the disk, 0..4G "
	      "(default 64M;\n"
	      "                           0 writes from the drain: a slow disk stalls it)\n"
	      "      --graph LEVEL        CUDA graphs as whole launches (graph, "
	      "default) or one\n"
	      "                           record per node (node)\n"
	      "      --export FORMAT      also export next to the trace: chrome, "
	      "perfetto, csv\n"
	      "      --stats              print the full statistics report at the end\n"
	      "      --view[=PORT]        then open the trace in the Perfetto UI as 'gputrace "
	      "view'\n"
	      "                           does, served once on 127.0.0.1:PORT (default "
	      "9001)\n"
	      "  -h, --help               show this help\n"
	      "\n"
	      "Environment: GPUTRACE_INJECT_LIB overrides where libgputrace-inject.so "
	      "is found.\n",
	      out);
}

static int bad_value(const char *opt, const char *value, const char *accepted)
{
	gt_cli_error("run: %s: '%s' is not valid; %s", opt, value, accepted);
	return -EINVAL;
}

/* An option that is a GPUTRACE_* setting: refused with the words the injection library uses
 * for the same value in the environment. */
static int set_setting(struct run_opts *o, enum gt_envconf_key key, const char *opt,
                       const char *value)
{
	const char *hint = NULL;

	if (gt_envconf_set(&o->cfg, key, value, &hint) < 0)
		return bad_value(opt, value, hint);
	o->setting[key] = value;
	return 0;
}

/* Parse argv; returns 0, 1 (help printed), or -EINVAL (reported). */
static int parse_options(int argc, char **argv, struct run_opts *o)
{
	enum {
		OPT_API = 256,
		OPT_CAPTURE,
		OPT_DELAY,
		OPT_DURATION,
		OPT_BUFFER,
		OPT_FLUSH,
		OPT_WRITE_QUEUE,
		OPT_GRAPH,
		OPT_EXPORT,
		OPT_STATS,
		OPT_VIEW,
	};
	static const struct option longopts[] = {
	        {"output", required_argument, NULL, 'o'},
	        {"force", no_argument, NULL, 'f'},
	        {"quiet", no_argument, NULL, 'q'},
	        {"trace", required_argument, NULL, 't'},
	        {"api", required_argument, NULL, OPT_API},
	        {"capture-range", required_argument, NULL, OPT_CAPTURE},
	        {"delay", required_argument, NULL, OPT_DELAY},
	        {"duration", required_argument, NULL, OPT_DURATION},
	        {"buffer-size", required_argument, NULL, OPT_BUFFER},
	        {"flush-interval", required_argument, NULL, OPT_FLUSH},
	        {"write-queue", required_argument, NULL, OPT_WRITE_QUEUE},
	        {"graph", required_argument, NULL, OPT_GRAPH},
	        {"export", required_argument, NULL, OPT_EXPORT},
	        {"stats", no_argument, NULL, OPT_STATS},
	        {"view", optional_argument, NULL, OPT_VIEW},
	        {"help", no_argument, NULL, 'h'},
	        {NULL, 0, NULL, 0},
	};
	int c, r = 0;

	gt_envconf_defaults(&o->cfg);
	opterr = 0;
	optind = 0; /* 0, not 1: glibc also forgets a half-read option bundle */
	/* '+': stop at the program's name, so its own options stay its own. */
	while ((c = getopt_long(argc, argv, "+:o:fqt:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			if (!*optarg)
				return bad_value("--output", optarg, "give a file name or pattern");
			o->output = optarg;
			break;
		case 'f':
			o->force = true;
			break;
		case 'q':
			o->quiet = true;
			break;
		case 't':
			r = set_setting(o, GT_ENVCONF_TRACE, "--trace", optarg);
			break;
		case OPT_API:
			r = set_setting(o, GT_ENVCONF_API, "--api", optarg);
			break;
		case OPT_CAPTURE:
			r = set_setting(o, GT_ENVCONF_CAPTURE, "--capture-range", optarg);
			break;
		case OPT_DELAY:
		case OPT_DURATION:
			r = gt_opt_duration(optarg, RUN_MAX_DURATION_NS,
			                    c == OPT_DELAY ? &o->delay_ns : &o->duration_ns);
			if (r < 0 || (c == OPT_DURATION && o->duration_ns == 0))
				return bad_value(c == OPT_DELAY ? "--delay" : "--duration", optarg,
				                 c == OPT_DELAY
				                         ? "use seconds, e.g. 2, 0.5, 250ms, 1m"
				                         : "use seconds above 0, e.g. 10, "
				                           "0.5, 250ms, 1m");
			break;
		case OPT_BUFFER:
			r = set_setting(o, GT_ENVCONF_BUFFER_SIZE, "--buffer-size", optarg);
			break;
		case OPT_FLUSH:
			r = set_setting(o, GT_ENVCONF_FLUSH_MS, "--flush-interval", optarg);
			break;
		case OPT_WRITE_QUEUE:
			if (gt_opt_size(optarg, 0, 4ull << 30, &o->write_queue_bytes) < 0)
				return bad_value("--write-queue", optarg,
				                 "use a size from 0 to 4G, e.g. 64M");
			break;
		case OPT_GRAPH:
			r = set_setting(o, GT_ENVCONF_GRAPH, "--graph", optarg);
			break;
		case OPT_EXPORT:
			if (!gt_exporter_find(optarg)) {
				char names[128];

				gt_opt_exporter_names(names, sizeof(names));
				gt_cli_error("run: --export: '%s' is not valid; use one of: %s",
				             optarg, names);
				return -EINVAL;
			}
			o->export_name = optarg;
			break;
		case OPT_STATS:
			o->stats = true;
			break;
		case OPT_VIEW:
			if (gt_cli_view_option(optarg, &o->view) < 0)
				return -EINVAL;
			break;
		case 'h':
			usage(stdout);
			return 1;
		default:
			gt_cli_bad_option("run", c, argv);
			return -EINVAL;
		}
		if (r < 0)
			return r;
	}
	if (optind >= argc) {
		gt_cli_error("run: no program to trace; usage: gputrace run [options] [--] "
		             "program [args...]");
		return -EINVAL;
	}
	o->argv = argv + optind;
	return 0;
}

/* The pattern with ".gtrace" appended when missing, checked for syntax now so a
 * typo is a usage error before anything runs. */
static int prepare_pattern(struct run *run)
{
	const char *p = run->o.output ? run->o.output : RUN_DEFAULT_OUTPUT;
	size_t len = strlen(p), ext = strlen(RUN_EXTENSION), at = 0;
	char probe[PATH_MAX];
	int r;

	if (len + ext >= sizeof(run->pattern)) {
		gt_cli_error("run: --output: the name is too long");
		return -EINVAL;
	}
	strcpy(run->pattern, p);
	if (len < ext || strcmp(p + len - ext, RUN_EXTENSION) != 0)
		strcat(run->pattern, RUN_EXTENSION);
	r = gt_pattern_expand(run->pattern, 1, 1, probe, sizeof(probe), &at);
	if (r == -EINVAL) {
		gt_cli_error("run: --output: bad pattern '%s' at '%s'; use %%p %%h "
		             "%%q{VAR} %%n %%%%",
		             run->pattern, run->pattern + at);
		return -EINVAL;
	}
	if (r == -ENOENT) {
		gt_cli_error("run: --output: '%s' uses an unset environment variable at '%s'; set "
		             "it or change the pattern",
		             run->pattern, run->pattern + at);
		return -EINVAL;
	}
	if (r < 0) {
		gt_cli_error("run: --output: '%s' expands to a name that is too long",
		             run->pattern);
		return -EINVAL;
	}
	return 0;
}

/* The trace's final name for the program's pid; %n takes the lowest free
 * number. */
static int resolve_output(struct run *run, pid_t pid)
{
	struct stat st;
	unsigned seq = 1;
	bool has_seq = gt_pattern_has_seq(run->pattern);

	for (;; seq++) {
		if (gt_pattern_expand(run->pattern, pid, seq, run->path, sizeof(run->path), NULL) <
		    0) {
			gt_cli_error("run: --output: '%s' cannot be expanded", run->pattern);
			return GT_EXIT_USAGE;
		}
		if (lstat(run->path, &st) < 0)
			break;
		if (!has_seq) {
			if (run->o.force)
				break;
			gt_cli_error("%s exists; use -f to overwrite it, or -o to choose another "
			             "name (%%n picks a new number each run)",
			             run->path);
			return GT_EXIT_CANT_CREATE;
		}
		if (seq == RUN_MAX_SEQ) {
			gt_cli_error("no free name for '%s' up to %%n = %u; clean up or use -o",
			             run->pattern, RUN_MAX_SEQ);
			return GT_EXIT_CANT_CREATE;
		}
	}
	snprintf(run->tmp_path, sizeof(run->tmp_path), "%s.tmp-%d", run->path, (int)getpid());
	return 0;
}

/* argv joined by spaces, shell-quoted where needed, for the trace header. */
static void join_cmdline(char *out, size_t bytes, char *const argv[])
{
	size_t o = 0;

	out[0] = '\0';
	for (size_t i = 0; argv[i] && o + 4 < bytes; i++) {
		const char *a = argv[i];
		bool plain = *a && strspn(a, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
		                             "0123456789_./=:,+-@%") == strlen(a);

		if (i)
			out[o++] = ' ';
		if (!plain)
			out[o++] = '\'';
		for (; *a && o + 6 < bytes; a++) {
			if (*a == '\'' && !plain) {
				memcpy(out + o, "'\\''", 4);
				o += 4;
			} else {
				out[o++] = *a;
			}
		}
		if (!plain)
			out[o++] = '\'';
		out[o] = '\0';
	}
}

static bool env_is(const char *entry, const char *name)
{
	size_t n = strlen(name);

	return strncmp(entry, name, n) == 0 && entry[n] == '=';
}

/* Add NAME=value to the program's environment (owned by run->env_store). */
static int env_add(struct run *run, size_t *n, const char *name, const char *value)
{
	char *e;

	if (run->env_nstore == sizeof(run->env_store) / sizeof(run->env_store[0]))
		return -ENOMEM;
	if (asprintf(&e, "%s=%s", name, value) < 0)
		return -ENOMEM;
	run->env_store[run->env_nstore++] = e;
	run->env[(*n)++] = e;
	return 0;
}

/* The program's environment: ours minus what we set, plus the injection
 * variables and the options. An injection another tool set is replaced, with a
 * warning, since only one tool can inject into a CUDA process. */
static int build_env(struct run *run)
{
	static const char *const ours[] = {
	        GT_ENV_SESSION, GT_ENV_PARENT, GT_ENV_CUDA_INJECTION, GT_ENV_NVTX_INJECTION,
	        GT_ENV_TRACE,   GT_ENV_API,    GT_ENV_BUFFER_SIZE,    GT_ENV_FLUSH_MS,
	        GT_ENV_CAPTURE, GT_ENV_GRAPH,  GT_ENV_OUTPUT,
	};
	const struct run_opts *o = &run->o;
	/* an NVTX capture range turns NVTX tracing on in the library, whatever --trace says */
	bool nvtx = (o->cfg.trace & GT_TRACE_NVTX) || o->cfg.capture == GT_CAPTURE_NVTX;
	size_t count = 0, n = 0;
	char num[32];
	int r = 0;

	for (char **e = environ; *e; e++)
		count++;
	run->env = calloc(count + 16, sizeof(*run->env));
	if (!run->env)
		return -ENOMEM;
	for (char **e = environ; *e; e++) {
		bool drop = false;

		for (size_t i = 0; i < sizeof(ours) / sizeof(ours[0]) && !drop; i++)
			drop = env_is(*e, ours[i]);
		/* Without nvtx tracing an NVTX injection of the user's own is left alone.
		 */
		if (!nvtx && env_is(*e, GT_ENV_NVTX_INJECTION))
			drop = false;
		if (drop && (env_is(*e, GT_ENV_CUDA_INJECTION) ||
		             (nvtx && env_is(*e, GT_ENV_NVTX_INJECTION)))) {
			const char *v = strchr(*e, '=') + 1;
			char real[PATH_MAX];

			if (*v && (!realpath(v, real) || strcmp(real, run->inject) != 0))
				gt_cli_warn(
				        "%.*s=%s belongs to another tool; it is replaced for the "
				        "traced program",
				        (int)(strchr(*e, '=') - *e), *e, v);
		}
		if (!drop)
			run->env[n++] = *e;
	}
	snprintf(run->session_slot, sizeof(run->session_slot), "%s=", GT_ENV_SESSION);
	run->env[n++] = run->session_slot;
	snprintf(num, sizeof(num), "%d", (int)getpid());
	r = env_add(run, &n, GT_ENV_PARENT, num);
	if (!r)
		r = env_add(run, &n, GT_ENV_CUDA_INJECTION, run->inject);
	if (!r && nvtx)
		r = env_add(run, &n, GT_ENV_NVTX_INJECTION, run->inject);
	/* the settings as the user gave them: the library parses them as we did */
	for (unsigned k = 0; k < GT_ENVCONF_MAX && !r; k++)
		if (o->setting[k])
			r = env_add(run, &n, gt_envconf_name((enum gt_envconf_key)k),
			            o->setting[k]);
	run->env[n] = NULL;
	return r;
}

/* Open the writer (to PATH.tmp-<pid>) with what the CLI knows for the header.
 */
static int open_writer(struct run *run)
{
	/* the drain compresses, a thread writes: disk latency never stops the drain */
	struct gt_writer_options wo = {.queue_bytes = run->o.write_queue_bytes};
	struct gt_cuda_probe cu;
	struct gt_trace_info info = {
	        .clock_id = GT_CLOCK_MONOTONIC,
	        .hostname = run->host,
	        .cmdline = run->cmdline,
	        .tool_version = GT_VERSION,
	};
	int r;

	if (gethostname(run->host, sizeof(run->host)) < 0)
		run->host[0] = '\0';
	run->host[sizeof(run->host) - 1] = '\0';
	join_cmdline(run->cmdline, sizeof(run->cmdline), run->o.argv);
	/* The driver's versions cost a dlopen and no cuInit; CUPTI's are the
	 * library's. */
	gt_cuda_probe_driver(&cu);
	if (cu.driver_loaded && cu.driver_version) {
		gt_cuda_version_string(cu.driver_version, run->cuda, sizeof(run->cuda));
		info.cuda_version = run->cuda;
	}
	if (gt_nvidia_module_version(run->driver, sizeof(run->driver)))
		info.driver_version = run->driver;
	info.start_realtime_ns = gt_clock_ns(CLOCK_REALTIME);
	info.start_trace_ns = gt_now_ns();
	r = gt_writer_open(run->path, &info, &wo, &run->w);
	if (r < 0)
		gt_cli_error("cannot create %s: %s; check that the directory exists and is "
		             "writable, or choose another with -o",
		             run->path, strerror(-r));
	return r;
}

static void exec_error(const char *prog, int err)
{
	if (err == ENOENT && !strchr(prog, '/'))
		gt_cli_error("%s: command not found (not in PATH)", prog);
	else if (err == ENOENT)
		gt_cli_error("%s: no such file", prog);
	else
		gt_cli_error("%s: cannot execute: %s", prog, strerror(err));
}

/* Reap every child that has exited; the session learns each status. */
static void reap(struct run *run)
{
	for (;;) {
		int st;
		pid_t p = waitpid(-1, &st, WNOHANG);

		if (p > 0) {
			if (run->s)
				gt_session_process_exited(run->s, p, st);
			if (p == run->sp.pid) {
				run->main_done = true;
				run->main_status = st;
			}
			continue;
		}
		if (p < 0 && errno == EINTR)
			continue;
		if (p < 0 && errno == ECHILD)
			run->tree_done = true;
		return;
	}
}

/* From the signal handlers: end the session's sleep so a child's exit or a signal is
 * handled at once. */
static void wake_session(void *ctx)
{
	gt_session_stop(ctx);
}

/* End the recording: drain what is left, close the session and the file. */
static void finish_collection(struct run *run)
{
	int r;

	if (run->s) {
		gt_signals_wake(NULL, NULL);
		gt_session_stats(run->s, &run->last);
		gt_session_free(run->s);
		run->s = NULL;
	}
	if (run->w) {
		/* everything the file holds: the drained records and those the session wrote
		 * itself (processes, their ends, clock anchors, notices) */
		const struct gt_trace_counts *c = gt_writer_counts(run->w);

		run->file_records = 0;
		for (unsigned t = 0; t < GT_REC_MAX; t++)
			run->file_records += c->records[t];
		r = gt_writer_close(run->w);
		run->w = NULL;
		if (r < 0 && !run->trace_err)
			run->trace_err = r;
	}
}

static uint64_t file_bytes(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 ? (uint64_t)st.st_size : 0;
}

/* Drain and wait until the whole process tree is gone (or the user stops the
 * waiting for processes the program left running). */
static void wait_tree(struct run *run)
{
	const uint64_t stop_ns =
	        run->o.duration_ns ? run->start_ns + run->o.delay_ns + run->o.duration_ns : 0;
	uint64_t main_done_ns = 0;
	bool noted = false;
	int sig;

	for (;;) {
		uint64_t now;

		if (run->s) {
			int r = gt_session_poll(run->s, RUN_POLL_NS);

			if (r < 0 && r != -EINTR) {
				gt_status_clear(&run->status);
				gt_cli_error("the session failed (%s); the trace ends here and the "
				             "program runs on untraced",
				             strerror(-r));
				run->trace_err = r;
				finish_collection(run);
			}
		} else {
			poll(NULL, 0, (int)(RUN_POLL_NS / 1000000));
		}
		reap(run);
		if (run->tree_done)
			return;
		now = gt_now_ns();
		if (gt_signals_take(&sig) && run->main_done) {
			/* The program is gone; a signal now means "stop waiting for the rest". */
			return;
		}
		if (run->main_done && !main_done_ns)
			main_done_ns = now;
		if (main_done_ns && !noted && now - main_done_ns > RUN_LEFTOVER_NOTE_NS &&
		    !run->o.quiet) {
			gt_status_clear(&run->status);
			gt_cli_warn("the program exited; waiting for the processes it left running "
			            "(Ctrl-C stops waiting)");
			noted = true;
		}
		if (stop_ns && run->s && now >= stop_ns) {
			finish_collection(run);
			gt_status_clear(&run->status);
			if (!run->o.quiet)
				gt_cli_warn(
				        "--duration reached: recording stopped; the program runs "
				        "on untraced");
		}
		if (run->s) {
			gt_session_stats(run->s, &run->last);
			gt_status_run(&run->status, now - run->start_ns, run->last.records,
			              file_bytes(run->tmp_path), run->last.dropped);
		}
	}
}

/* Is this record activity that ended before `from_ns` (dropped by --delay)?
 * Metadata, strings, losses, notices and the memory timeline are always kept.
 */
static bool before_window(const union gt_record *rec, uint64_t from_ns)
{
	const struct gt_record_desc *d;
	uint64_t last = 0;

	switch (rec->hdr.type) {
	case GT_REC_KERNEL:
	case GT_REC_MEMCPY:
	case GT_REC_MEMSET:
	case GT_REC_API:
	case GT_REC_NVTX:
	case GT_REC_SYNC:
	case GT_REC_GRAPH:
	case GT_REC_OVERHEAD:
		break;
	default:
		return false;
	}
	d = gt_record_desc(rec->hdr.type);
	if (!d)
		return false;
	for (unsigned i = 0; i < d->nfields; i++) {
		uint64_t v;

		if (!(d->fields[i].flags & GT_FIELD_TIME) || d->fields[i].width != 8)
			continue;
		memcpy(&v, (const char *)rec + d->fields[i].offset, sizeof(v));
		if (v > last)
			last = v;
	}
	return last < from_ns;
}

/* --delay: rewrite the trace without the activity of the first delay_ns. */
static int trim_trace(struct run *run, uint64_t from_ns)
{
	struct gt_reader *r = NULL;
	struct gt_writer *w = NULL;
	const union gt_record *rec;
	const char *msg = NULL;
	int ret, n;

	ret = gt_reader_open(run->path, &r, &msg);
	if (ret < 0)
		goto out;
	ret = gt_writer_open(run->path, &gt_reader_header(r)->info, NULL, &w);
	if (ret < 0)
		goto out;
	while ((n = gt_reader_next(r, &rec)) > 0) {
		if (before_window(rec, from_ns))
			continue;
		ret = gt_writer_write(w, &rec->hdr);
		if (ret < 0)
			goto out;
	}
	ret = n;
	if (ret < 0)
		goto out;
	ret = gt_writer_close(w);
	w = NULL;
out:
	gt_writer_discard(w);
	gt_reader_close(r);
	return ret;
}

/* Records the trace says were lost, as the catalog every output shares counts them; reads
 * the file only when its footer counts any LOSS record. */
static uint64_t quiet_losses(struct gt_reader *r)
{
	const struct gt_trace_counts *fc = gt_reader_footer_counts(r);
	struct gt_catalog cat;
	const char *msg = NULL;
	uint64_t lost = 0;

	if (fc && !fc->records[GT_REC_LOSS])
		return 0;
	if (gt_catalog_init(&cat, r) < 0)
		return 0;
	if (gt_catalog_read(&cat, r, &msg) >= 0)
		lost = gt_catalog_lost_total(&cat);
	gt_catalog_fini(&cat);
	gt_reader_rewind(r);
	return lost;
}

/* Summary, --stats and --export, once the file is complete. Returns a GT_EXIT_*
 * code. */
static int after_trace(struct run *run)
{
	struct gt_reader *r = NULL;
	const char *msg = NULL;
	char rec[32], size[32];
	int ret;

	if (!run->o.quiet)
		fprintf(stderr, "gputrace: trace written to %s (%s records, %s)\n", run->path,
		        gt_fmt_count(run->file_records, rec, sizeof(rec)),
		        gt_fmt_bytes(file_bytes(run->path), size, sizeof(size)));
	ret = gt_reader_open(run->path, &r, &msg);
	if (ret < 0) {
		gt_cli_error("cannot read back %s: %s", run->path, msg ? msg : strerror(-ret));
		return GT_EXIT_BAD_TRACE;
	}
	/* -q leaves out the summary, never the losses: a trace is not silently partial */
	if (run->o.quiet) {
		uint64_t lost = quiet_losses(r);

		if (lost)
			gt_cli_warn("%s records were lost; `gputrace info %s` lists them by source",
			            gt_fmt_count(lost, rec, sizeof(rec)), run->path);
		if (!run->o.stats && !run->o.export_name) {
			gt_reader_close(r);
			return GT_EXIT_OK;
		}
	} else {
		fputc('\n', stderr);
		if (gt_stats_summary(r, stderr, &msg) < 0)
			gt_cli_warn("no summary: %s", msg ? msg : "unknown error");
	}
	if (run->o.stats && gt_stats_report(r, stderr, NULL, &msg) < 0)
		gt_cli_warn("no statistics report: %s", msg ? msg : "unknown error");
	if (run->o.export_name) {
		const struct gt_exporter_ops *e = gt_exporter_find(run->o.export_name);
		struct gt_export_options eo = {.demangle = 1};
		struct gt_export_result res = {0};
		char out[PATH_MAX + 16];

		gt_opt_derived_name(run->path, e->extension, out, sizeof(out));
		eo.output = out;
		ret = gt_reader_rewind(r);
		if (ret >= 0)
			ret = e->run(r, &eo, &res, &msg);
		if (ret < 0) {
			gt_cli_error("export to %s failed: %s", out, msg ? msg : strerror(-ret));
			gt_reader_close(r);
			return GT_EXIT_IO;
		}
		if (res.warning)
			gt_cli_warn("%s", res.warning);
		if (!run->o.quiet)
			fprintf(stderr, "gputrace: exported %s (%s events)\n", out,
			        gt_fmt_count(res.events, rec, sizeof(rec)));
	}
	gt_reader_close(r);
	return GT_EXIT_OK;
}

/* The shell's convention: the exit status, or 128 + the signal that killed the
 * program. */
static int program_status(const struct run *run)
{
	int st = run->main_status;

	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	if (WIFSIGNALED(st)) {
		if (!run->o.quiet)
			gt_cli_warn("the program was killed by signal %d (%s)%s", WTERMSIG(st),
			            strsignal(WTERMSIG(st)), WCOREDUMP(st) ? ", core dumped" : "");
		return 128 + WTERMSIG(st);
	}
	return GT_EXIT_SOFTWARE;
}

static void run_free(struct run *run)
{
	gt_signals_wake(NULL, NULL);
	if (run->s)
		gt_session_free(run->s);
	gt_writer_discard(run->w);
	for (size_t i = 0; i < run->env_nstore; i++)
		free(run->env_store[i]);
	free(run->env);
}

int cmd_run(int argc, char **argv)
{
	struct run run = {.sp = {.pid = -1, .gate_fd = -1, .err_fd = -1},
	                  .o.write_queue_bytes = GT_WRITE_QUEUE_DEFAULT_BYTES};
	struct gt_session_options so = {0};
	char tried[2048];
	const char *how;
	int r, ret, status;

	r = parse_options(argc, argv, &run.o);
	if (r)
		return r > 0 ? GT_EXIT_OK : GT_EXIT_USAGE;
	if (prepare_pattern(&run) < 0)
		return GT_EXIT_USAGE;
	if (gt_inject_find(run.inject, sizeof(run.inject), &how, tried, sizeof(tried)) < 0) {
		gt_cli_error("the injection library libgputrace-inject.so was not found (looked at "
		             "%s); set %s=/path/to/libgputrace-inject.so, or see 'gputrace doctor'",
		             tried, GT_ENV_INJECT_LIB);
		return GT_EXIT_UNAVAILABLE;
	}
	gt_status_init(&run.status, !run.o.quiet);
	ret = GT_EXIT_SOFTWARE;
	if (build_env(&run) < 0) {
		gt_cli_error("out of memory");
		goto out;
	}
	/* Orphans of the program (daemons, workers whose parent died) are re-parented
	 * to us, so "the whole tree has exited" is something waitpid can tell. */
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0)
		gt_cli_warn("cannot become a subreaper (%s): processes the program leaves behind "
		            "are not waited for",
		            strerror(errno));
	r = gt_signals_install();
	if (r < 0) {
		gt_cli_error("cannot install signal handlers: %s", strerror(-r));
		goto out;
	}
	/* The program starts now but waits at the gate: %p needs its pid, and it
	 * needs the session's address. */
	r = gt_spawn_start(&run.sp, run.o.argv, run.env, run.session_slot,
	                   sizeof(run.session_slot));
	if (r < 0) {
		gt_cli_error("cannot start %s: %s", run.o.argv[0], strerror(-r));
		ret = GT_EXIT_UNAVAILABLE;
		goto out;
	}
	ret = resolve_output(&run, run.sp.pid);
	if (ret)
		goto abort_child;
	if (open_writer(&run) < 0) {
		ret = GT_EXIT_CANT_CREATE;
		goto abort_child;
	}
	if (run.o.setting[GT_ENVCONF_FLUSH_MS] && run.o.cfg.flush_ms)
		so.flush_interval_ns = run.o.cfg.flush_ms * 1000000ull;
	r = gt_session_new(run.w, &so, &run.s);
	if (r < 0) {
		gt_cli_error("cannot start the tracing session: %s", strerror(-r));
		ret = GT_EXIT_UNAVAILABLE;
		goto abort_child;
	}
	run.start_ns = gt_now_ns();
	gt_signals_wake(wake_session, run.s);
	gt_signals_target(run.sp.pid);
	r = gt_spawn_release(&run.sp, gt_session_address(run.s));
	if (r < 0) {
		exec_error(run.o.argv[0], -r);
		ret = (r == -ENOENT) ? GT_EXIT_NOT_FOUND : GT_EXIT_NOT_EXECUTABLE;
		goto out;
	}

	wait_tree(&run);
	if (!run.main_done) {
		/* The user stopped waiting before the program itself was reaped: impossible
		 * by construction, but never report a status we do not have. */
		run.main_status = 0;
	}
	finish_collection(&run);
	gt_status_clear(&run.status);
	status = program_status(&run);
	if (!run.trace_err && run.o.delay_ns) {
		r = trim_trace(&run, run.start_ns + run.o.delay_ns);
		if (r < 0)
			gt_cli_warn("--delay: could not trim %s (%s); it holds the whole run",
			            run.path, strerror(-r));
	}
	if (run.trace_err) {
		gt_cli_error("the trace %s could not be written: %s", run.path,
		             strerror(-run.trace_err));
		/* Keep the program's failure if it failed; else make the loss visible. */
		ret = status ? status : GT_EXIT_IO;
		goto out;
	}
	ret = after_trace(&run);
	if (ret == GT_EXIT_OK && run.o.view.requested)
		ret = gt_cli_view(run.path, &run.o.view, "run");
	if (status || ret == GT_EXIT_OK)
		ret = status;
	goto out;

abort_child:
	gt_spawn_abort(&run.sp);
out:
	gt_status_clear(&run.status);
	run_free(&run);
	return ret;
}
