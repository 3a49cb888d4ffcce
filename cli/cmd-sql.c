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
#include "gt-config.h"
#include "options.h"

#if GT_HAVE_SQLITE
#include "clock.h"
#include "gputrace/trace.h"
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
	      "uses reuse it while it is newer than the trace. TRACE may also be such a\n"
	      "database.\n"
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
	      "\n"
	      "Exit status: 0, 64 bad usage, 65 a query SQLite rejected (its message and\n"
	      "where) or an unreadable trace, 66 no such trace, 74 output failed.\n",
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

/* Export `trace` into `db`. Returns an exit status. */
static int export_trace(const char *trace, const char *db, bool quiet)
{
	struct gt_sql_export_options so = {.demangle = 1};
	struct gt_sql_export_result res = {0};
	struct gt_reader *r = NULL;
	const char *msg = NULL;
	struct progress prog;
	char count[32], size[32];
	int ret;

	ret = gt_reader_open(trace, &r, &msg);
	if (ret < 0) {
		gt_cli_error("%s: %s", trace, msg ? msg : strerror(-ret));
		return ret == -ENOENT || ret == -EACCES ? GT_EXIT_NO_INPUT : GT_EXIT_BAD_TRACE;
	}
	gt_status_init(&prog.line, !quiet);
	prog.start_ns = gt_now_ns();
	if (prog.line.enabled) {
		so.progress = on_progress;
		so.progress_ctx = &prog;
	}
	ret = gt_sql_export(r, db, &so, &res, &msg);
	gt_status_clear(&prog.line);
	if (ret < 0) {
		gt_cli_error("export to %s failed: %s", db, msg ? msg : strerror(-ret));
		gt_reader_close(r);
		return ret == -EINVAL || ret == -EBADMSG ? GT_EXIT_BAD_TRACE : GT_EXIT_IO;
	}
	if (gt_reader_status(r)->recovered || res.lost_chunks)
		gt_cli_warn("%s is damaged or was cut short: %llu chunk%s skipped (see "
		            "GPUTRACE_LOSSES)",
		            trace, (unsigned long long)res.lost_chunks,
		            res.lost_chunks == 1 ? "" : "s");
	gt_reader_close(r);
	if (!quiet)
		fprintf(stderr, "gputrace: wrote %s (%s rows, %s)\n", db,
		        gt_fmt_count(res.rows, count, sizeof(count)),
		        gt_fmt_bytes(res.bytes, size, sizeof(size)));
	return GT_EXIT_OK;
}
#endif

int cmd_sql(int argc, char **argv)
{
	static const struct option longopts[] = {
	        {"format", required_argument, NULL, 'f'}, {"db", required_argument, NULL, 'D'},
	        {"rebuild", no_argument, NULL, 'R'},      {"quiet", no_argument, NULL, 'q'},
	        {"help", no_argument, NULL, 'h'},         {NULL, 0, NULL, 0},
	};
	const char *trace, *dbopt = NULL;
	bool rebuild = false, quiet = false;
	unsigned format = 0;
	char db[PATH_MAX + 16];
	int c;

	opterr = 0;
	optind = 0; /* 0, not 1: glibc also forgets a half-read option bundle */
	/* options may follow the trace and the query; "--" ends them */
	while ((c = getopt_long(argc, argv, ":f:qh", longopts, NULL)) != -1) {
		switch (c) {
		case 'f':
#if GT_HAVE_SQLITE
			if (gt_sql_parse_format(optarg, &format) < 0) {
				gt_cli_error("sql: -f: '%s' is not valid; use table, csv or json",
				             optarg);
				return GT_EXIT_USAGE;
			}
#endif
			break;
		case 'D':
			dbopt = optarg;
			break;
		case 'R':
			rebuild = true;
			break;
		case 'q':
			quiet = true;
			break;
		case 'h':
			usage(stdout);
			return GT_EXIT_OK;
		default:
			return gt_cli_bad_option("sql", c, argv);
		}
	}
	if (optind >= argc) {
		gt_cli_error("sql: no trace file; usage: gputrace sql TRACE [QUERY...]");
		return GT_EXIT_USAGE;
	}
	trace = argv[optind];
#if !GT_HAVE_SQLITE
	(void)dbopt;
	(void)rebuild;
	(void)quiet;
	(void)format;
	(void)db;
	(void)trace;
	gt_cli_error("sql: this gputrace was built without SQLite; install libsqlite3-dev and "
	             "rebuild (meson setup --reconfigure)");
	return GT_EXIT_UNAVAILABLE;
#else
	{
		struct gt_sql_error err;
		struct stat st;
		char *query = NULL;
		int ret;

		if (stat(trace, &st) < 0) {
			gt_cli_error("%s: %s", trace, strerror(errno));
			return GT_EXIT_NO_INPUT;
		}
		if (gt_sql_is_database(trace)) {
			if (dbopt || rebuild) {
				gt_cli_error("sql: %s is already a database: --db and --rebuild "
				             "apply to traces",
				             trace);
				return GT_EXIT_USAGE;
			}
			snprintf(db, sizeof(db), "%s", trace);
		} else {
			if (dbopt)
				snprintf(db, sizeof(db), "%s", dbopt);
			else
				gt_opt_derived_name(trace, ".sqlite", db, sizeof(db));
			if (strcmp(db, trace) == 0) {
				gt_cli_error("sql: the database would replace the trace itself; "
				             "choose another with --db");
				return GT_EXIT_USAGE;
			}
			if (rebuild || gt_sql_db_fresh(trace, db) != 1) {
				ret = export_trace(trace, db, quiet);
				if (ret != GT_EXIT_OK)
					return ret;
			}
		}
		if (optind + 1 >= argc) {
			if (have_shell()) {
				fflush(NULL);
				execlp("sqlite3", "sqlite3", db, (char *)NULL);
				gt_cli_warn("cannot run sqlite3: %s; listing the tables instead",
				            strerror(errno));
			}
			ret = gt_sql_tables(db, stdout, format, &err);
		} else {
			query = join_words(argc - optind - 1, argv + optind + 1);
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
}
