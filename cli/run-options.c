/* gputrace run's options and the traced program's environment: argv parsed (the GPUTRACE_*
 * settings through src/settings/envconf.c, the parser the injection library uses), the output name
 * checked and resolved, the environment built. Runs in the CLI process. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "exporter.h"
#include "live-view.h"
#include "output.h"
#include "options.h"
#include "pattern.h"
#include "pytorch-hook.h"
#include "run.h"

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
	      "      --backtrace MODE     stacks of API calls and NVTX ranges: none "
	      "(default) or\n"
	      "                           native|python|all[:KINDS[:NS]]: KINDS of API "
	      "calls from\n"
	      "                           kernel, memory, sync, other, all (default all), "
	      "NS the\n"
	      "                           shortest call that gets one (default 0); "
	      "python: frames of\n"
	      "                           threads holding the GIL; resolved when exported\n"
	      "      --gpu-metrics[=DEVICES][:FREQUENCY][:SET]\n"
	      "                           sample hardware metrics over time (PM sampling): "
	      "SMs and\n"
	      "                           tensor pipes active, DRAM, PCIe, NVLink "
	      "bandwidth; DEVICES\n"
	      "                           all (default) or CUDA ordinals like 0,1; "
	      "FREQUENCY per\n"
	      "                           second (default 10000, or 10k); SET default or "
	      "sm; one\n"
	      "                           process samples each GPU\n"
	      "      --pytorch[=shapes]   PyTorch operators as NVTX ranges linked to their "
	      "kernels: a\n"
	      "                           start-up hook switches torch's emit_nvtx on once "
	      "the program\n"
	      "                           imports torch; =shapes records input shapes too\n",
	      out);
	fputs("      --export FORMAT      also export next to the trace: chrome, "
	      "perfetto, csv, sqlite\n"
	      "      --stats              print the full statistics report at the end\n"
	      "      --view[=PORT]        then open the trace in the Perfetto UI as 'gputrace "
	      "view'\n"
	      "                           does, served once on 127.0.0.1:PORT (default "
	      "9001;\n"
	      "                           the port in the same word: --view=8080); a trace "
	      "with\n"
	      "                           nothing recorded is not served (exit 69)\n"
	      "      --live               a full-screen live view of the GPU work while the "
	      "program\n"
	      "                           runs (keys: q leave, p pause, s sort, arrows "
	      "scroll); on\n"
	      "                           a terminal only, else the status line\n"
	      "      --live-interval S    refresh the live view every S seconds, 0.1 to "
	      "3600\n"
	      "                           (default 1; implies --live)\n"
	      "  -h, --help               show this help\n"
	      "\n"
	      "Environment: GPUTRACE_INJECT_LIB overrides where libgputrace-inject.so "
	      "is found;\n"
	      "GPUTRACE_WRITE_TIMEOUT: seconds the end waits for a trace whose writing "
	      "makes no\n"
	      "progress (default 60; then exit 74, the partial file named).\n"
	      "\n"
	      "Exit status: the program's, except when tracing could not start: 64 bad\n"
	      "option, 69 no injection library or no session, 70 internal error, 73 the\n"
	      "trace cannot be created (it exists without -f, no folder, not a regular file),\n"
	      "74 the trace could not be written, 126 the program is not executable, 127 not\n"
	      "found; when the program succeeded, --export's status (64 its output is the\n"
	      "trace, 73, 74) and then --view's.\n",
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
int gt_run_parse_options(int argc, char **argv, struct run_opts *o)
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
		OPT_BACKTRACE,
		OPT_EXPORT,
		OPT_STATS,
		OPT_VIEW,
		OPT_LIVE,
		OPT_LIVE_INTERVAL,
		OPT_GPU_METRICS,
		OPT_PYTORCH,
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
	        {"backtrace", required_argument, NULL, OPT_BACKTRACE},
	        {"gpu-metrics", optional_argument, NULL, OPT_GPU_METRICS},
	        {"pytorch", optional_argument, NULL, OPT_PYTORCH},
	        {"export", required_argument, NULL, OPT_EXPORT},
	        {"stats", no_argument, NULL, OPT_STATS},
	        {"view", optional_argument, NULL, OPT_VIEW},
	        {"live", no_argument, NULL, OPT_LIVE},
	        {"live-interval", required_argument, NULL, OPT_LIVE_INTERVAL},
	        {"help", no_argument, NULL, 'h'},
	        {NULL, 0, NULL, 0},
	};
	const char *value, *hint = NULL;
	int c, r = 0;

	gt_envconf_defaults(&o->cfg);
	o->live_interval_ns = GT_LIVE_INTERVAL_DEFAULT_NS;
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
			r = set_setting(o, GT_ENVCONF_WRITE_QUEUE, "--write-queue", optarg);
			break;
		case OPT_GRAPH:
			r = set_setting(o, GT_ENVCONF_GRAPH, "--graph", optarg);
			break;
		case OPT_BACKTRACE:
			r = set_setting(o, GT_ENVCONF_BACKTRACE, "--backtrace", optarg);
			break;
		case OPT_GPU_METRICS:
			r = set_setting(o, GT_ENVCONF_GPU_METRICS, "--gpu-metrics",
			                optarg ? optarg : "all");
			break;
		case OPT_PYTORCH:
			if (optarg && strcmp(optarg, "shapes") != 0)
				return bad_value("--pytorch", optarg,
				                 "use --pytorch, or --pytorch=shapes for input shapes");
			o->pytorch = optarg ? "shapes" : "on";
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
			o->view_port_given = optarg != NULL;
			break;
		case OPT_LIVE_INTERVAL:
			if (gt_opt_duration(optarg, GT_LIVE_INTERVAL_MAX_NS, &o->live_interval_ns) <
			            0 ||
			    o->live_interval_ns < GT_LIVE_INTERVAL_MIN_NS)
				return bad_value(
				        "--live-interval", optarg,
				        "use seconds from 0.1 to 3600, e.g. 1, 0.5, 250ms");
			/* fall through - an interval asks for the view */
		case OPT_LIVE:
			if (!gt_live_view_available()) {
				gt_cli_error("run: --live: this gputrace was built without ncurses "
				             "(libncurses-dev); rebuild it with ncurses, or leave "
				             "--live out");
				return -EINVAL;
			}
			o->live = true;
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
	/* GPUTRACE_WRITE_TIMEOUT also bounds the CLI's own wait for its writer at the end; a bad
	 * value is refused before anything runs, in the words the library would use */
	value = getenv(GT_ENV_WRITE_TIMEOUT);
	if (value && *value && gt_envconf_set(&o->cfg, GT_ENVCONF_WRITE_TIMEOUT, value, &hint) < 0)
		return bad_value(GT_ENV_WRITE_TIMEOUT, value, hint);
	/* "--view 9001": getopt leaves an optional value apart, so 9001 would be run as the
	 * program; a program named by digits alone is that mistake far more often than not */
	if (o->view.requested && !o->view_port_given && !strchr(argv[optind], '/') &&
	    strspn(argv[optind], "0123456789") == strlen(argv[optind])) {
		gt_cli_error("run: --view takes its port as --view=%s (one word); '%s' would be run "
		             "as the program",
		             argv[optind], argv[optind]);
		return -EINVAL;
	}
	if (o->pytorch && strcmp(argv[optind], "shapes") == 0) {
		gt_cli_error("run: --pytorch takes shapes as --pytorch=shapes (one word); 'shapes' "
		             "would be run as the program");
		return -EINVAL;
	}
	if (o->pytorch && !(o->cfg.trace & GT_TRACE_NVTX)) {
		gt_cli_error("run: --pytorch records PyTorch's operators as NVTX ranges: add nvtx "
		             "to --trace");
		return -EINVAL;
	}
	if (o->pytorch) {
		char tried[3 * PATH_MAX];

		if (gt_pytorch_hook_find(o->pytorch_hook, sizeof(o->pytorch_hook), tried,
		                         sizeof(tried)) < 0) {
			gt_cli_error("run: --pytorch: its start-up hook sitecustomize.py was not found "
			             "(looked in %s); reinstall gputrace",
			             tried);
			return -EINVAL;
		}
	}
	o->argv = argv + optind;
	return 0;
}

/* The pattern with ".gtrace" appended when missing, checked for syntax now so a
 * typo is a usage error before anything runs. */
int gt_run_prepare_pattern(struct run *run)
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
int gt_run_resolve_output(struct run *run, pid_t pid)
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
	{
		/* the one output path's checks (src/output/output.h): never over a device, FIFO
		 * or folder; through a symlink to its target, never replacing the link */
		struct gt_output_error err;
		struct gt_output *o;
		int r = gt_output_open(run->path, NULL, 0, GT_OUTPUT_NO_STDOUT, &o, &err);

		if (r < 0) {
			gt_cli_error("run: %s", err.msg[0] ? err.msg : strerror(-r));
			return r == -EINVAL ? GT_EXIT_USAGE : GT_EXIT_CANT_CREATE;
		}
		snprintf(run->path, sizeof(run->path), "%s", gt_output_target(o));
		gt_output_free(o);
	}
	snprintf(run->tmp_path, sizeof(run->tmp_path), "%s.tmp-%d", run->path, (int)getpid());
	return 0;
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
int gt_run_build_env(struct run *run)
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
	run->env = calloc(count + 24, sizeof(*run->env));
	if (!run->env)
		return -ENOMEM;
	for (char **e = environ; *e; e++) {
		bool drop = false;

		for (size_t i = 0; i < sizeof(ours) / sizeof(ours[0]) && !drop; i++)
			drop = env_is(*e, ours[i]);
		/* a setting given as an option replaces the one in our environment */
		for (unsigned k = 0; k < GT_ENVCONF_MAX && !drop; k++)
			drop = o->setting[k] && env_is(*e, gt_envconf_name((enum gt_envconf_key)k));
		/* Without nvtx tracing an NVTX injection of the user's own is left alone.
		 */
		if (!nvtx && env_is(*e, GT_ENV_NVTX_INJECTION))
			drop = false;
		/* --pytorch: its own hook first on PYTHONPATH (added below, before the user's) */
		if (o->pytorch && (env_is(*e, GT_ENV_PYTORCH) || env_is(*e, "PYTHONPATH")))
			drop = true;
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
	if (!r && o->pytorch) {
		const char *pp = getenv("PYTHONPATH");
		char *path;

		r = env_add(run, &n, GT_ENV_PYTORCH, o->pytorch);
		if (!r && asprintf(&path, "%s%s%s", o->pytorch_hook, pp && *pp ? ":" : "",
		                   pp && *pp ? pp : "") < 0)
			r = -ENOMEM;
		if (!r) {
			r = env_add(run, &n, "PYTHONPATH", path);
			free(path);
		}
	}
	/* the settings as the user gave them: the library parses them as we did */
	for (unsigned k = 0; k < GT_ENVCONF_MAX && !r; k++)
		if (o->setting[k])
			r = env_add(run, &n, gt_envconf_name((enum gt_envconf_key)k),
			            o->setting[k]);
	run->env[n] = NULL;
	return r;
}
