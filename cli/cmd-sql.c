/* gputrace sql: SQL on a trace, through its SQLite export (exporters/sqlite*.c), which is
 * made on first use and reused while it is newer than the trace. Without a query, the
 * sqlite3 shell on the database, or the list of tables. Runs in the CLI process. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "common.h"
#include "gt-config.h"
#include "options.h"

#if GT_HAVE_SQLITE
#include "clock.h"
#include "exporter.h"
#include "gputrace/trace.h"
#include "output.h"
#include "sql.h"
#include "status-line.h"

#define PROGRESS_AFTER_NS 300000000ull /* short exports never show a bar */

struct progress {
	struct gt_status_line line;
	uint64_t start_ns;
};

static void on_progress(void *ctx, uint64_t done, uint64_t total)
{
	struct progress *p = ctx;

	if (gt_now_ns() - p->start_ns >= PROGRESS_AFTER_NS)
		gt_status_progress(&p->line, "exporting", done, total);
}
#endif

static void usage(FILE *out)
{
	fputs("Usage: gputrace sql TRACE [QUERY...]\n"
	      "\n"
	      "Run SQL on a trace. The first use exports TRACE into a SQLite database next to\n"
	      "it (run.gtrace -> run.sqlite) in Nsight Systems' export schema, so queries\n"
	      "written for Nsight Systems' SQLite export run unchanged (docs/sql.md); later\n"
	      "uses reuse it while it records that it is an export of this very trace (the\n"
	      "same file, unchanged, the same window, the same gputrace). TRACE may also be\n"
	      "such a database.\n"
	      "The words of QUERY are joined by spaces; several statements may follow each other.\n"
	      "Without a QUERY: the sqlite3 shell on the database when one is installed,\n"
	      "otherwise the list of tables with their row counts.\n"
	      "\n"
	      "Options:\n"
	      "  -f, --format FORMAT  table (default), csv or json\n"
	      "      --db FILE        the database to make or reuse (default: TRACE with\n"
	      "                       .sqlite for .gtrace)\n"
	      "      --rebuild        export again even when the database is up to date\n"
	      "  -q, --quiet          no progress bar, no line about the export\n"
	      "  -h, --help           show this help\n"
	      "\n" GT_CLI_WINDOW_HELP
	      "  A window's database is made under --db's name and records its window.\n"
	      "\n"
	      "Exit status: 0, 64 bad usage (the database one of the traces, a window that\n"
	      "selects nothing), 65 a query SQLite rejected (its message and where), an\n"
	      "unreadable trace, or a damaged one (after the query, run on what was read),\n"
	      "66 no such trace, 73 the database cannot be created, 74 output failed.\n",
	      out);
}

#if GT_HAVE_SQLITE
/* Point at where SQLite found the error: the query's line and a caret under the column. */
static void show_position(const char *sql, int offset)
{
	const char *line = sql, *end, *at;
	unsigned lineno = 1, col = 1;

	if (offset < 0 || (size_t)offset > strlen(sql))
		return;
	at = sql + offset;
	for (const char *p = sql; p < at; p++) {
		if (*p == '\n') {
			lineno++;
			line = p + 1;
		}
	}
	for (const char *p = line; p < at; p++)
		col += ((unsigned char)*p & 0xc0) != 0x80;
	end = strchr(line, '\n');
	if (!end)
		end = line + strlen(line);
	fprintf(stderr, "gputrace: at line %u, column %u (byte %d) of the query:\n  %.*s\n  ",
	        lineno, col, offset, (int)(end - line), line);
	for (const char *p = line; p < at; p++) {
		if (*p == '\t')
			fputc('\t', stderr);
		else if (((unsigned char)*p & 0xc0) != 0x80)
			fputc(' ', stderr);
	}
	fputs("^\n", stderr);
}

/* The sqlite3 shell, if PATH has one. */
static bool have_shell(void)
{
	const char *path = getenv("PATH");
	char buf[PATH_MAX];

	while (path && *path) {
		const char *colon = strchr(path, ':');
		size_t len = colon ? (size_t)(colon - path) : strlen(path);

		if (len && len + 9 < sizeof(buf)) {
			snprintf(buf, sizeof(buf), "%.*s/sqlite3", (int)len, path);
			if (access(buf, X_OK) == 0)
				return true;
		}
		path = colon ? colon + 1 : NULL;
	}
	return false;
}

static char *join_words(int n, char **words)
{
	size_t len = 1;
	char *s;

	for (int i = 0; i < n; i++)
		len += strlen(words[i]) + 1;
	s = malloc(len);
	if (!s)
		return NULL;
	s[0] = '\0';
	for (int i = 0; i < n; i++) {
		if (i)
			strcat(s, " ");
		strcat(s, words[i]);
	}
	return s;
}

/* Export what cli's window keeps of the trace t into db through the output o, recording
 * `identity`. Returns an exit status; *damage that of the trace's damage. */
static int export_trace(const struct gt_cli *cli, struct gt_cli_trace *t, struct gt_output *o,
                        const char *identity, int *damage)
{
	struct gt_sql_export_options so = {.demangle = 1, .identity = identity, .out = o};
	const char *db = gt_output_path(o), *msg = NULL;
	struct gt_sql_export_result res = {0};
	char count[32], size[32];
	struct progress prog;
	int ret, status = gt_cli_trace_filter(cli, t);

	if (status != GT_EXIT_OK)
		return status;
	gt_cli_output_signals();
	gt_status_init(&prog.line, !cli->quiet);
	prog.start_ns = gt_now_ns();
	if (prog.line.enabled) {
		so.progress = on_progress;
		so.progress_ctx = &prog;
	}
	ret = gt_sql_export(t->r, db, &so, &res, &msg);
	gt_status_clear(&prog.line);
	*damage = gt_cli_trace_damage(cli, t);
	if (ret < 0) {
		gt_cli_error("sql: export to %s failed: %s", db, msg ? msg : strerror(-ret));
		return gt_cli_export_status(o, ret);
	}
	status = gt_cli_output_finish(cli, o, NULL, GT_EXIT_OK);
	if (status == GT_EXIT_OK && !cli->quiet)
		fprintf(stderr, "gputrace: wrote %s (%s rows, %s)\n", db,
		        gt_fmt_count(res.rows, count, sizeof(count)),
		        gt_fmt_bytes(res.bytes, size, sizeof(size)));
	return status;
}

/* The database to query: TRACE itself when it is one, else its export (--db, or TRACE with
 * .sqlite), made again unless it records that it is an export of this very trace and
 * window. The output is checked first: a database that is the trace, a FIFO or a device is
 * refused before anything opens it. Returns an exit status. */
static int database_of(const struct gt_cli *cli, const char *trace, const char *dbopt, bool rebuild,
                       char *db, size_t bytes, int *damage)
{
	struct gt_cli_trace t = {0};
	struct gt_output *o = NULL;
	char identity[1024];
	int status;

	if (gt_sql_is_database(trace)) {
		if (dbopt || rebuild || gt_cli_window_given(&cli->win)) {
			gt_cli_error("sql: %s is already a database: --db, --rebuild and windows "
			             "apply to traces",
			             trace);
			return GT_EXIT_USAGE;
		}
		snprintf(db, bytes, "%s", trace);
		return GT_EXIT_OK;
	}
	if (dbopt)
		snprintf(db, bytes, "%s", dbopt);
	else
		gt_opt_derived_name(trace, ".sqlite", db, bytes);
	status = gt_cli_trace_open(cli, trace, &t);
	if (status == GT_EXIT_OK &&
	    gt_export_identity(trace, &t.win.w, identity, sizeof(identity)) < 0) {
		gt_cli_error("sql: %s: %s", trace, strerror(errno));
		status = GT_EXIT_NO_INPUT;
	}
	if (status == GT_EXIT_OK)
		status = gt_cli_output_open(cli, db, GT_OUTPUT_NO_STDOUT, &o);
	if (status == GT_EXIT_OK && (rebuild || gt_sql_db_fresh(trace, db, identity) != 1))
		status = export_trace(cli, &t, o, identity, damage);
	gt_output_free(o);
	gt_cli_trace_close(&t);
	return status;
}

/* The query's words, run on db; none: the sqlite3 shell, or the list of tables. */
static int run_query(char **words, int nwords, const char *db, unsigned format)
{
	struct gt_sql_error err;
	char *query = NULL;
	int ret;

	if (nwords == 0) {
		if (have_shell()) {
			fflush(NULL);
			execlp("sqlite3", "sqlite3", db, (char *)NULL);
			gt_cli_warn("cannot run sqlite3: %s; listing the tables instead",
			            strerror(errno));
		}
		ret = gt_sql_tables(db, stdout, format, &err);
	} else {
		query = join_words(nwords, words);
		if (!query) {
			gt_cli_error("sql: out of memory");
			return GT_EXIT_SOFTWARE;
		}
		ret = gt_sql_query(db, query, stdout, format, &err);
	}
	if (ret == -EBADMSG) {
		gt_cli_error("sql: %s", err.message);
		if (query)
			show_position(query, err.offset);
		free(query);
		return GT_EXIT_BAD_QUERY;
	}
	free(query);
	if (ret == -ENOENT) {
		gt_cli_error("%s: %s", db, strerror(-ret));
		return GT_EXIT_NO_INPUT;
	}
	if (ret == -EIO) {
		gt_cli_error("sql: writing the results failed");
		return GT_EXIT_IO;
	}
	if (ret < 0) {
		gt_cli_error("sql: %s", strerror(-ret));
		return GT_EXIT_SOFTWARE;
	}
	return GT_EXIT_OK;
}
#endif

struct sql_ctx {
	const char *db;
	bool rebuild;
};

static int sql_option(void *ctx, int c, const char *arg)
{
	struct sql_ctx *x = ctx;

	if (c == 'D') {
		x->db = arg;
		return GT_EXIT_OK;
	}
	if (c == 'R') {
		x->rebuild = true;
		return GT_EXIT_OK;
	}
	return GT_EXIT_USAGE;
}

static const struct option sql_longopts[] = {
        {"db", required_argument, NULL, 'D'},
        {"rebuild", no_argument, NULL, 'R'},
        {NULL, 0, NULL, 0},
};

static const struct gt_cli_cmd sql_cmd = {
        .name = "sql",
        .synopsis = "gputrace sql TRACE [QUERY...]",
        .common = GT_CLI_FORMAT | GT_CLI_QUIET | GT_CLI_WINDOW,
        .longopts = sql_longopts,
        .option = sql_option,
        .usage = usage,
        .min_args = 1,
        .max_args = -1,
        .args_what = "trace file",
};

int cmd_sql(int argc, char **argv)
{
	struct sql_ctx x = {0};
	struct gt_cli cli;
	int status = gt_cli_parse(&cli, &sql_cmd, &x, argc, argv);

	if (status != GT_EXIT_OK || cli.help)
		return status;
#if !GT_HAVE_SQLITE
	gt_cli_error("sql: this gputrace was built without SQLite; install libsqlite3-dev and "
	             "rebuild (meson setup --reconfigure)");
	return GT_EXIT_UNAVAILABLE;
#else
	{
		unsigned format = 0;
		char db[PATH_MAX + 16];
		int damage = GT_EXIT_OK;

		if (cli.format && gt_sql_parse_format(cli.format, &format) < 0) {
			gt_cli_error("sql: -f: '%s' is not valid; use table, csv or json",
			             cli.format);
			return GT_EXIT_USAGE;
		}
		status = database_of(&cli, cli.args[0], x.db, x.rebuild, db, sizeof(db), &damage);
		if (status != GT_EXIT_OK)
			return status;
		/* a damaged trace's database holds what could be read (and GPUTRACE_LOSSES says
		 * what could not): the query runs on it, then the exit status says so */
		status = run_query(cli.args + 1, cli.nargs - 1, db, format);
		return status == GT_EXIT_OK ? damage : status;
	}
#endif
}
