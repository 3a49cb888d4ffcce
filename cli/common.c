/* The scaffolding every command shares (see common.h): its options, its traces, its
 * outputs, each error reported once with its exit status. Runs in the CLI. */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "catalog.h"
#include "cli.h"
#include "common.h"
#include "options.h"
#include "output.h"
#include "stats.h"

#define MAX_LONGOPTS 64

/* ---- options ----------------------------------------------------------------------------- */

static const struct option common_longopts[] = {
        {"output", required_argument, NULL, 'o'},
        {"format", required_argument, NULL, 'f'},
        {"quiet", no_argument, NULL, 'q'},
        {"limit", required_argument, NULL, 'n'},
        {"mangled", no_argument, NULL, GT_CLI_OPT_MANGLED},
        {"step", required_argument, NULL, GT_CLI_OPT_STEP},
};
static const unsigned common_bits[] = {
        GT_CLI_OUTPUT, GT_CLI_FORMAT, GT_CLI_QUIET, GT_CLI_LIMIT, GT_CLI_MANGLED, GT_CLI_STEP,
};
static const struct option window_longopts[] = {GT_CLI_WINDOW_LONGOPTS};

/* The option table and short options of cmd: help, the common ones it takes, its own. */
static int build_options(const struct gt_cli_cmd *cmd, struct option *lo, char *so, size_t sosize)
{
	size_t n = 0;

	snprintf(so, sosize, ":h%s%s%s%s%s", (cmd->common & GT_CLI_OUTPUT) ? "o:" : "",
	         (cmd->common & GT_CLI_FORMAT) ? "f:" : "", (cmd->common & GT_CLI_QUIET) ? "q" : "",
	         (cmd->common & GT_CLI_LIMIT) ? "n:" : "", cmd->shortopts ? cmd->shortopts : "");
	lo[n++] = (struct option){"help", no_argument, NULL, 'h'};
	for (size_t i = 0; i < sizeof(common_bits) / sizeof(common_bits[0]); i++)
		if (cmd->common & common_bits[i])
			lo[n++] = common_longopts[i];
	if (cmd->common & GT_CLI_WINDOW)
		for (size_t i = 0; i < sizeof(window_longopts) / sizeof(window_longopts[0]); i++)
			lo[n++] = window_longopts[i];
	for (const struct option *o = cmd->longopts; o && o->name; o++) {
		if (n + 1 >= MAX_LONGOPTS)
			return -E2BIG;
		lo[n++] = *o;
	}
	lo[n] = (struct option){NULL, 0, NULL, 0};
	return 0;
}

/* Take a common option; 1 taken, 0 not common, or an exit status (negated) on error. */
static int common_option(struct gt_cli *cli, int c, const char *arg)
{
	const char *name = cli->cmd->name;
	unsigned have = cli->cmd->common;
	int r;

	/* the codes of the options this command does not take are its own */
	if ((c == 'o' && !(have & GT_CLI_OUTPUT)) || (c == 'f' && !(have & GT_CLI_FORMAT)) ||
	    (c == 'q' && !(have & GT_CLI_QUIET)) || (c == 'n' && !(have & GT_CLI_LIMIT)) ||
	    (c == GT_CLI_OPT_MANGLED && !(have & GT_CLI_MANGLED)) ||
	    (c == GT_CLI_OPT_STEP && !(have & GT_CLI_STEP)))
		return 0;
	switch (c) {
	case 'o':
		if (!*arg) {
			gt_cli_error("%s: -o: give a file name (or - for standard output)", name);
			return -GT_EXIT_USAGE;
		}
		cli->output = arg;
		return 1;
	case 'f':
		cli->format = arg;
		return 1;
	case 'q':
		cli->quiet = true;
		return 1;
	case 'n':
		if (gt_opt_uint(arg, 0, UINT32_MAX, &cli->limit) < 0) {
			gt_cli_error("%s: --limit takes a number of rows, not '%s'", name, arg);
			return -GT_EXIT_USAGE;
		}
		cli->have_limit = true;
		return 1;
	case GT_CLI_OPT_MANGLED:
		cli->mangled = true;
		return 1;
	case GT_CLI_OPT_STEP:
		if (!*arg) {
			gt_cli_error("%s: --step takes the name of an NVTX range, e.g. --step "
			             "train_step",
			             name);
			return -GT_EXIT_USAGE;
		}
		cli->step = arg;
		return 1;
	default:
		if (!(cli->cmd->common & GT_CLI_WINDOW))
			return 0;
		r = gt_cli_window_option(&cli->win, c, arg, name);
		return r < 0 ? -GT_EXIT_USAGE : r;
	}
}

int gt_cli_parse(struct gt_cli *cli, const struct gt_cli_cmd *cmd, void *ctx, int argc, char **argv)
{
	struct option lo[MAX_LONGOPTS];
	char so[64];
	int c, r;

	memset(cli, 0, sizeof(*cli));
	cli->cmd = cmd;
	if (build_options(cmd, lo, so, sizeof(so)) < 0) {
		gt_cli_error("%s: too many options", cmd->name);
		return GT_EXIT_SOFTWARE;
	}
	opterr = 0;
	optind = 0; /* 0, not 1: glibc also forgets a half-read option bundle */
	while ((c = getopt_long(argc, argv, so, lo, NULL)) != -1) {
		if (c == 'h') {
			cmd->usage(stdout);
			cli->help = true;
			return GT_EXIT_OK;
		}
		if (c == '?' || c == ':')
			return gt_cli_bad_option(cmd->name, c, argv);
		r = common_option(cli, c, optarg);
		if (r < 0)
			return -r;
		if (r == 0) {
			r = cmd->option ? cmd->option(ctx, c, optarg) : GT_EXIT_USAGE;
			if (r != GT_EXIT_OK)
				return r;
		}
	}
	cli->args = argv + optind;
	cli->nargs = argc - optind;
	if (cli->nargs < cmd->min_args) {
		if (cmd->args_missing)
			gt_cli_error("%s: %s usage: %s", cmd->name, cmd->args_missing,
			             cmd->synopsis);
		else
			gt_cli_error("%s: no %s; usage: %s", cmd->name, cmd->args_what,
			             cmd->synopsis);
		return GT_EXIT_USAGE;
	}
	if (cmd->max_args >= 0 && cli->nargs > cmd->max_args) {
		if (cmd->args_extra)
			gt_cli_error("%s: unexpected argument '%s'; %s", cmd->name,
			             cli->args[cmd->max_args], cmd->args_extra);
		else
			gt_cli_error("%s: one %s at a time ('%s' is extra)", cmd->name,
			             cmd->args_what, cli->args[cmd->max_args]);
		return GT_EXIT_USAGE;
	}
	return GT_EXIT_OK;
}

/* ---- traces ------------------------------------------------------------------------------ */

/* Whether id is among ids[0..n). */
static bool has_u32(const uint32_t *ids, unsigned n, uint32_t id)
{
	for (unsigned i = 0; i < n; i++)
		if (ids[i] == id)
			return true;
	return false;
}

/* "4242, 4243 and 4244" of ids into buf (at most a dozen, then "..."). */
static const char *list_u32(const uint32_t *ids, unsigned n, bool more, char *buf, size_t bytes)
{
	size_t len = 0;

	buf[0] = '\0';
	for (unsigned i = 0; i < n && i < 12 && len < bytes; i++)
		len += (size_t)snprintf(buf + len, bytes - len, "%s%u",
		                        i == 0                ? ""
		                        : i + 1 == n && !more ? " and "
		                                              : ", ",
		                        ids[i]);
	if ((n > 12 || more) && len < bytes)
		snprintf(buf + len, bytes - len, ", ...");
	return buf;
}

int gt_cli_window_check(const char *cmd, struct gt_reader *r, const char *path,
                        const struct gt_window *w)
{
	struct gt_window_selectable *s = NULL;
	const char *opt = NULL, *what = NULL;
	const uint32_t *have = NULL;
	unsigned nhave = 0;
	bool more = false;
	char list[256];
	int64_t value = 0;
	int ret;

	if (!w->npids && !w->nranks && !w->ndevices && !w->nstreams)
		return GT_EXIT_OK;
	ret = gt_window_selectable(r, &s);
	if (ret < 0) {
		gt_cli_error("%s: reading %s: %s", cmd, path, strerror(-ret));
		return ret == -ENOMEM ? GT_EXIT_SOFTWARE : GT_EXIT_BAD_TRACE;
	}
	for (unsigned i = 0; i < w->npids && !opt; i++)
		if (!has_u32(s->pids, s->npids, w->pids[i]) && !s->more_pids) {
			opt = "--pid", what = "processes", value = w->pids[i];
			have = s->pids, nhave = s->npids, more = s->more_pids;
		}
	for (unsigned i = 0; i < w->nranks && !opt; i++)
		if (!has_u32(s->ranks, s->nranks, (uint32_t)w->ranks[i])) {
			opt = "--rank", what = "ranks", value = w->ranks[i];
			have = s->ranks, nhave = s->nranks, more = false;
		}
	for (unsigned i = 0; i < w->ndevices && !opt; i++)
		if (!has_u32(s->devices, s->ndevices, w->devices[i])) {
			opt = "--device", what = "CUDA devices", value = w->devices[i];
			have = s->devices, nhave = s->ndevices, more = false;
		}
	for (unsigned i = 0; i < w->nstreams && !opt; i++)
		if (!has_u32(s->streams, s->nstreams, w->streams[i]) && !s->more_streams) {
			opt = "--stream", what = "streams", value = w->streams[i];
			have = s->streams, nhave = s->nstreams, more = s->more_streams;
		}
	if (opt) {
		if (nhave)
			gt_cli_error("%s: %s %lld: %s has no such one; its %s: %s", cmd, opt,
			             (long long)value, path, what,
			             list_u32(have, nhave, more, list, sizeof(list)));
		else
			gt_cli_error("%s: %s %lld: %s has no %s", cmd, opt, (long long)value, path,
			             what);
	}
	gt_window_selectable_free(s);
	return opt ? GT_EXIT_USAGE : GT_EXIT_OK;
}

int gt_cli_trace_open(const struct gt_cli *cli, const char *path, struct gt_cli_trace *t)
{
	const char *msg = NULL, *name = cli->cmd->name;
	struct stat st;
	int ret, status;

	memset(t, 0, sizeof(*t));
	t->path = path;
	t->win = cli->win;
	if (stat(path, &st) < 0) {
		gt_cli_error("%s: %s: %s", name, path, strerror(errno));
		return GT_EXIT_NO_INPUT;
	}
	if (S_ISDIR(st.st_mode)) {
		gt_cli_error("%s: %s is a folder, not a trace", name, path);
		return GT_EXIT_BAD_TRACE;
	}
	ret = gt_reader_open(path, &t->r, &msg);
	if (ret < 0) {
		gt_cli_error("%s: cannot read %s: %s", name, path, msg ? msg : strerror(-ret));
		return ret == -ENOENT || ret == -EACCES ? GT_EXIT_NO_INPUT : GT_EXIT_BAD_TRACE;
	}
	if (!(cli->cmd->common & GT_CLI_WINDOW) || !gt_cli_window_given(&t->win))
		return GT_EXIT_OK;
	status = gt_cli_window_resolve(&t->win, t->r, path, name);
	if (status == GT_EXIT_OK)
		status = gt_cli_window_check(name, t->r, path, &t->win.w);
	if (status == GT_EXIT_OK && t->win.what[0] && !cli->quiet)
		fprintf(stderr, "gputrace: window: %s\n", t->win.what);
	return status;
}

int gt_cli_trace_filter(const struct gt_cli *cli, struct gt_cli_trace *t)
{
	int ret;

	if (!gt_window_any(&t->win.w))
		return gt_reader_rewind(t->r) < 0 ? GT_EXIT_BAD_TRACE : GT_EXIT_OK;
	ret = gt_window_open(t->r, &t->win.w, &t->filter);
	if (ret < 0) {
		gt_cli_error("%s: reading %s: %s", cli->cmd->name, t->path, strerror(-ret));
		return ret == -ENOMEM ? GT_EXIT_SOFTWARE : GT_EXIT_BAD_TRACE;
	}
	return GT_EXIT_OK;
}

int gt_cli_damage_report(const char *cmd, const char *path, const struct gt_reader_status *rs)
{
	struct gt_catalog_damage d;
	char text[GT_CATALOG_DAMAGE_TEXT];

	/* in the words of every output (the catalog's); merge's own line is the same */
	gt_catalog_damage_of(rs, &d);
	if (gt_catalog_damaged(&d))
		gt_cli_warn("%s: %s is damaged: %s", cmd, path,
		            gt_catalog_damage_text(&d, text, sizeof(text)));
	if (rs->recovered)
		gt_cli_warn("%s: %s has no index (its writer was interrupted): %llu chunk%s "
		            "recovered",
		            cmd, path, (unsigned long long)rs->chunks_read,
		            rs->chunks_read == 1 ? "" : "s");
	return gt_catalog_damaged(&d) ? GT_EXIT_DAMAGED : GT_EXIT_OK;
}

int gt_cli_trace_damage(const struct gt_cli *cli, struct gt_cli_trace *t)
{
	int status;

	if (!t->r)
		return GT_EXIT_OK;
	status = gt_cli_damage_report(cli->cmd->name, t->path, gt_reader_status(t->r));
	t->damaged = status != GT_EXIT_OK;
	return status;
}

void gt_cli_trace_close(struct gt_cli_trace *t)
{
	gt_window_close(t->filter);
	t->filter = NULL;
	gt_reader_close(t->r);
	t->r = NULL;
}

int gt_cli_add_traces(const struct gt_cli *cli, const struct gt_cli_traces_sink *sink, void *ctx,
                      int *damage)
{
	const char *errmsg, *name = cli->cmd->name;
	int ret, status = GT_EXIT_OK;

	for (int i = 0; i < cli->nargs && status == GT_EXIT_OK; i++) {
		struct gt_cli_trace t;

		status = gt_cli_trace_open(cli, cli->args[i], &t);
		if (status == GT_EXIT_OK)
			status = gt_cli_trace_filter(cli, &t);
		if (status == GT_EXIT_OK) {
			errmsg = NULL;
			ret = sink->add(ctx, t.r, t.path, &errmsg);
			/* what was skipped is told even when the trace could not be used */
			if (gt_cli_trace_damage(cli, &t) != GT_EXIT_OK)
				*damage = GT_EXIT_DAMAGED;
			if (ret < 0) {
				gt_cli_error("%s: %s: %s", name, t.path,
				             errmsg ? errmsg : strerror(-ret));
				status = ret == -ENOMEM ? GT_EXIT_SOFTWARE : GT_EXIT_BAD_TRACE;
			}
		}
		gt_cli_trace_close(&t);
	}
	if (status == GT_EXIT_OK && sink->finish(ctx) < 0) {
		gt_cli_error("%s: out of memory", name);
		status = GT_EXIT_SOFTWARE;
	}
	return status;
}

int gt_cli_no_such_step(const struct gt_cli *cli, const char *path, const char *name)
{
	const char *cmd = cli->cmd->name;
	struct gt_cli_trace t;
	char names[1024];
	int status = gt_cli_trace_open(cli, path, &t);

	if (status == GT_EXIT_OK) {
		if (gt_window_nvtx_names(t.r, names, sizeof(names), 12) > 0)
			gt_cli_error("%s: --step %s: no NVTX range of %s has that name; its "
			             "ranges: %s",
			             cmd, name, path, names);
		else
			gt_cli_error("%s: --step %s: %s has no NVTX ranges", cmd, name, path);
	}
	gt_cli_trace_close(&t);
	return GT_EXIT_USAGE;
}

/* ---- outputs ----------------------------------------------------------------------------- */

bool gt_cli_args_repeat(const struct gt_cli *cli, int *first, int *again)
{
	struct stat si, sj;

	for (int i = 1; i < cli->nargs; i++) {
		if (stat(cli->args[i], &si) < 0)
			continue;
		for (int j = 0; j < i; j++) {
			if (stat(cli->args[j], &sj) == 0 && sj.st_dev == si.st_dev &&
			    sj.st_ino == si.st_ino) {
				*first = j;
				*again = i;
				return true;
			}
		}
	}
	return false;
}

int gt_cli_output_status(int err)
{
	if (err == -EEXIST || err == -EINVAL)
		return GT_EXIT_USAGE;
	return err == -ENOMEM ? GT_EXIT_SOFTWARE : GT_EXIT_CANT_CREATE;
}

int gt_cli_output_open(const struct gt_cli *cli, const char *path, unsigned flags,
                       struct gt_output **ret)
{
	struct gt_output_error err;
	int r = gt_output_open(path, (const char *const *)cli->args, (unsigned)cli->nargs, flags,
	                       ret, &err);

	if (r == 0)
		return GT_EXIT_OK;
	if (r == -ENOMEM)
		gt_cli_error("%s: out of memory", cli->cmd->name);
	else
		gt_cli_error("%s: %s", cli->cmd->name, err.msg[0] ? err.msg : strerror(-r));
	return gt_cli_output_status(r);
}

int gt_cli_output_stream(const struct gt_cli *cli, struct gt_output *o, FILE **ret)
{
	struct gt_output_error err;
	int fd, r;

	if (gt_output_is_stdout(o)) {
		*ret = stdout;
		return GT_EXIT_OK;
	}
	r = gt_output_create(o, NULL, &fd, &err);
	if (r < 0) {
		gt_cli_error("%s: %s", cli->cmd->name, err.msg[0] ? err.msg : strerror(-r));
		return GT_EXIT_CANT_CREATE;
	}
	*ret = fdopen(fd, "w");
	if (!*ret) {
		gt_cli_error("%s: %s: %s", cli->cmd->name, gt_output_path(o), strerror(errno));
		close(fd);
		return GT_EXIT_CANT_CREATE;
	}
	return GT_EXIT_OK;
}

int gt_cli_output_finish(const struct gt_cli *cli, struct gt_output *o, FILE *stream, int status)
{
	struct gt_output_error err;
	int r;

	if (stream == stdout) {
		if (fflush(stdout) != 0 && status == GT_EXIT_OK) {
			gt_cli_error("%s: writing to standard output: %s", cli->cmd->name,
			             strerror(errno));
			status = GT_EXIT_IO;
		}
	} else if (stream && fclose(stream) != 0 && status == GT_EXIT_OK) {
		gt_cli_error("%s: writing %s: %s", cli->cmd->name, gt_output_path(o),
		             strerror(errno));
		status = GT_EXIT_IO;
	}
	if (o && status == GT_EXIT_OK) {
		r = gt_output_commit(o, &err);
		if (r < 0) {
			gt_cli_error("%s: %s", cli->cmd->name, err.msg[0] ? err.msg : strerror(-r));
			status = GT_EXIT_IO;
		}
	}
	return status;
}

int gt_cli_report_open(const struct gt_cli *cli, struct gt_output **o, FILE **out)
{
	int status = gt_cli_output_open(cli, cli->output ? cli->output : "-", 0, o);

	if (status != GT_EXIT_OK)
		return status;
	gt_cli_output_signals(); /* before the temporary exists */
	return gt_cli_output_stream(cli, *o, out);
}

static void on_fatal_signal(int sig)
{
	gt_output_signal_cleanup();
	signal(sig, SIG_DFL);
	raise(sig);
}

void gt_cli_output_signals(void)
{
	static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGXFSZ};
	struct sigaction sa = {.sa_handler = on_fatal_signal}, old;

	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler != SIG_IGN)
			sigaction(sigs[i], &sa, NULL);
}

int gt_cli_report_format(const struct gt_cli *cli, unsigned *format)
{
	const char *dot = cli->output ? strrchr(cli->output, '.') : NULL;

	*format = GT_STATS_FORMAT_TABLE;
	if (cli->format) {
		if (gt_stats_parse_format(cli->format, format) == 0)
			return GT_EXIT_OK;
		gt_cli_error("%s: unknown format '%s'; choose table, csv or json", cli->cmd->name,
		             cli->format);
		return GT_EXIT_USAGE;
	}
	if (dot && strcasecmp(dot, ".csv") == 0)
		*format = GT_STATS_FORMAT_CSV;
	else if (dot && strcasecmp(dot, ".json") == 0)
		*format = GT_STATS_FORMAT_JSON;
	return GT_EXIT_OK;
}

int gt_cli_export_status(const struct gt_output *o, int err)
{
	if (err < 0 && gt_output_create_error(o) == err)
		return gt_cli_output_status(err);
	switch (err) {
	case -EINVAL:
	case -EBADMSG:
	case -ENOENT:
		return GT_EXIT_BAD_TRACE;
	case -EEXIST: /* a file of the output is an input (output.h) */
		return GT_EXIT_USAGE;
	case -ENOMEM:
		return GT_EXIT_SOFTWARE;
	case -ENOTDIR:
	case -EISDIR:
	case -EPERM:
	case -EACCES:
	case -EROFS:
		return GT_EXIT_CANT_CREATE;
	default:
		return GT_EXIT_IO;
	}
}

int gt_cli_report_one(const struct gt_cli *cli, const char *cmd, gt_cli_report_fn report,
                      void *ctx)
{
	struct gt_cli_trace t = {0};
	struct gt_output *o = NULL;
	const char *errmsg = NULL;
	FILE *out = NULL;
	int ret, status, damage = GT_EXIT_OK;

	status = gt_cli_report_open(cli, &o, &out);
	if (status == GT_EXIT_OK)
		status = gt_cli_trace_open(cli, cli->args[0], &t);
	if (status == GT_EXIT_OK)
		status = gt_cli_trace_filter(cli, &t);
	if (status != GT_EXIT_OK)
		goto out;
	ret = report(ctx, t.r, out, &errmsg);
	damage = gt_cli_trace_damage(cli, &t);
	if (ret < 0) {
		gt_cli_error("%s: %s: %s", cmd, ret == -EIO ? gt_output_path(o) : t.path,
		             errmsg ? errmsg : strerror(-ret));
		status = ret == -EIO      ? GT_EXIT_IO
		         : ret == -ENOMEM ? GT_EXIT_SOFTWARE
		                          : GT_EXIT_BAD_TRACE;
	}
out:
	status = gt_cli_output_finish(cli, o, out, status);
	if (status == GT_EXIT_OK)
		status = damage;
	gt_output_free(o);
	gt_cli_trace_close(&t);
	return status;
}
