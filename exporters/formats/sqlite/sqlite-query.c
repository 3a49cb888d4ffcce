/* Queries on an exported database for `gputrace sql`: every statement of a query run in
 * turn, result sets printed as an aligned table, CSV or JSON; SQLite's own error message
 * and the byte offset of the error; the list of tables; whether a cached export can be
 * reused. Runs in the CLI. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sql.h"
#include "text.h"

#define TABLE_MEASURE_ROWS 1000u /* rows buffered to size the table's columns */
#define TABLE_CELL_MAX     80u   /* characters shown of a longer value */

int gt_sql_parse_format(const char *name, unsigned *format)
{
	static const char *const names[GT_SQL_FORMAT_MAX] = {"table", "csv", "json"};

	for (unsigned i = 0; name && i < GT_SQL_FORMAT_MAX; i++) {
		if (strcmp(name, names[i]) == 0) {
			*format = i;
			return 0;
		}
	}
	return -EINVAL;
}

bool gt_sql_is_database(const char *path)
{
	char head[16];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	bool yes;

	if (fd < 0)
		return false;
	yes = read(fd, head, sizeof(head)) == (ssize_t)sizeof(head) &&
	      memcmp(head, "SQLite format 3", 16) == 0;
	close(fd);
	return yes;
}

static void set_error(struct gt_sql_error *err, sqlite3 *db, const char *msg, int offset)
{
	if (!err)
		return;
	snprintf(err->message, sizeof(err->message), "%s", msg ? msg : sqlite3_errmsg(db));
	err->offset = offset;
}

/* ---- output helpers ---------------------------------------------------------------- */

/* Characters (UTF-8 code points) in s[0..len). */
static size_t u8_chars(const unsigned char *s, size_t len)
{
	size_t n = 0;

	for (size_t i = 0; i < len; i++)
		n += (s[i] & 0xc0) != 0x80;
	return n;
}

/* Bytes of s[0..len) that hold its first `chars` characters. */
static size_t u8_prefix(const unsigned char *s, size_t len, size_t chars)
{
	size_t i = 0, n = 0;

	for (; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80 && n++ == chars)
			break;
	}
	return i;
}

static void csv_field(FILE *out, const unsigned char *s, size_t len)
{
	bool quote = false;

	for (size_t i = 0; i < len && !quote; i++)
		quote = s[i] == ',' || s[i] == '"' || s[i] == '\n' || s[i] == '\r';
	if (!quote) {
		fwrite(s, 1, len, out);
		return;
	}
	fputc('"', out);
	for (size_t i = 0; i < len; i++) {
		if (s[i] == '"')
			fputc('"', out);
		fputc(s[i], out);
	}
	fputc('"', out);
}

static void hex_blob(FILE *out, const unsigned char *b, size_t len)
{
	for (size_t i = 0; i < len; i++)
		fprintf(out, "%02x", b[i]);
}

/* ---- table output ------------------------------------------------------------------ */

struct cell {
	char *s; /* owned; NULL for SQL NULL */
	size_t len;
};

struct table {
	int ncols;
	size_t *width;     /* characters */
	bool *numeric;     /* right-aligned */
	bool *typed;       /* numeric was decided by a non-NULL value */
	struct cell *rows; /* TABLE_MEASURE_ROWS * ncols */
	size_t nrows;
};

static void table_cell(FILE *out, const struct table *t, int c, const char *s, size_t len)
{
	size_t shown = len, chars = s ? u8_chars((const unsigned char *)s, len) : 0, pad;
	bool cut = chars > TABLE_CELL_MAX;

	if (cut) {
		shown = u8_prefix((const unsigned char *)s, len, TABLE_CELL_MAX - 3);
		chars = TABLE_CELL_MAX;
	}
	pad = t->width[c] > chars ? t->width[c] - chars : 0;
	if (c)
		fputs("  ", out);
	if (t->numeric[c])
		fprintf(out, "%*s", (int)pad, "");
	if (s)
		fwrite(s, 1, shown, out);
	if (cut)
		fputs("...", out);
	if (!t->numeric[c] && c + 1 < t->ncols)
		fprintf(out, "%*s", (int)pad, "");
}

static void table_header(FILE *out, const struct table *t, sqlite3_stmt *st)
{
	for (int c = 0; c < t->ncols; c++) {
		const char *name = sqlite3_column_name(st, c);

		table_cell(out, t, c, name, strlen(name));
	}
	fputc('\n', out);
	for (int c = 0; c < t->ncols; c++) {
		if (c)
			fputs("  ", out);
		for (size_t i = 0; i < t->width[c]; i++)
			fputc('-', out);
	}
	fputc('\n', out);
}

static void table_free(struct table *t)
{
	for (size_t i = 0; t->rows && i < t->nrows * (size_t)t->ncols; i++)
		free(t->rows[i].s);
	free(t->rows);
	free(t->width);
	free(t->numeric);
	free(t->typed);
}

/* Steps the statement to the end. Returns rows printed or -errno; SQLite errors are left
 * to the caller (sqlite3_step's code in *rc). */
static int64_t print_table(FILE *out, sqlite3_stmt *st, int *rc)
{
	struct table t = {0};
	int64_t n = 0, ret = -ENOMEM;

	t.ncols = sqlite3_column_count(st);
	t.width = calloc((size_t)t.ncols, sizeof(*t.width));
	t.numeric = calloc((size_t)t.ncols, sizeof(*t.numeric));
	t.typed = calloc((size_t)t.ncols, sizeof(*t.typed));
	t.rows = calloc(TABLE_MEASURE_ROWS * (size_t)t.ncols, sizeof(*t.rows));
	if (!t.width || !t.numeric || !t.typed || !t.rows)
		goto out;
	for (int c = 0; c < t.ncols; c++) {
		size_t w = u8_chars((const unsigned char *)sqlite3_column_name(st, c),
		                    strlen(sqlite3_column_name(st, c)));

		t.width[c] = w < TABLE_CELL_MAX ? w : TABLE_CELL_MAX;
	}
	while ((*rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (t.nrows < TABLE_MEASURE_ROWS) {
			struct cell *row = &t.rows[t.nrows * (size_t)t.ncols];

			for (int c = 0; c < t.ncols; c++) {
				int type = sqlite3_column_type(st, c);
				const char *s = (const char *)sqlite3_column_text(st, c);
				size_t len = (size_t)sqlite3_column_bytes(st, c), w;

				if (type != SQLITE_NULL && !t.typed[c]) {
					t.typed[c] = true;
					t.numeric[c] =
					        type == SQLITE_INTEGER || type == SQLITE_FLOAT;
				}
				if (type == SQLITE_NULL || !s)
					continue;
				row[c].s = malloc(len + 1);
				if (!row[c].s)
					goto out;
				memcpy(row[c].s, s, len);
				row[c].s[len] = '\0';
				row[c].len = len;
				w = u8_chars((const unsigned char *)s, len);
				if (w > TABLE_CELL_MAX)
					w = TABLE_CELL_MAX;
				if (w > t.width[c])
					t.width[c] = w;
			}
			t.nrows++;
			n++;
			continue;
		}
		if (n == TABLE_MEASURE_ROWS) {
			/* the widths are settled: print what was held, then stream */
			table_header(out, &t, st);
			for (size_t i = 0; i < t.nrows; i++) {
				for (int c = 0; c < t.ncols; c++)
					table_cell(out, &t, c, t.rows[i * (size_t)t.ncols + c].s,
					           t.rows[i * (size_t)t.ncols + c].len);
				fputc('\n', out);
			}
		}
		for (int c = 0; c < t.ncols; c++)
			table_cell(out, &t, c, (const char *)sqlite3_column_text(st, c),
			           (size_t)sqlite3_column_bytes(st, c));
		fputc('\n', out);
		n++;
	}
	if (n <= (int64_t)TABLE_MEASURE_ROWS) {
		table_header(out, &t, st);
		for (size_t i = 0; i < t.nrows; i++) {
			for (int c = 0; c < t.ncols; c++)
				table_cell(out, &t, c, t.rows[i * (size_t)t.ncols + c].s,
				           t.rows[i * (size_t)t.ncols + c].len);
			fputc('\n', out);
		}
	}
	fprintf(out, "(%lld row%s)\n", (long long)n, n == 1 ? "" : "s");
	ret = n;
out:
	table_free(&t);
	return ret;
}

static int64_t print_csv(FILE *out, sqlite3_stmt *st, int *rc)
{
	int ncols = sqlite3_column_count(st);
	int64_t n = 0;

	for (int c = 0; c < ncols; c++) {
		const char *name = sqlite3_column_name(st, c);

		if (c)
			fputc(',', out);
		csv_field(out, (const unsigned char *)name, strlen(name));
	}
	fputs("\r\n", out);
	while ((*rc = sqlite3_step(st)) == SQLITE_ROW) {
		for (int c = 0; c < ncols; c++) {
			if (c)
				fputc(',', out);
			if (sqlite3_column_type(st, c) == SQLITE_BLOB)
				hex_blob(out, sqlite3_column_blob(st, c),
				         (size_t)sqlite3_column_bytes(st, c));
			else if (sqlite3_column_type(st, c) != SQLITE_NULL)
				csv_field(out, sqlite3_column_text(st, c),
				          (size_t)sqlite3_column_bytes(st, c));
		}
		fputs("\r\n", out);
		n++;
	}
	return n;
}

static int64_t print_json(FILE *out, sqlite3_stmt *st, int *rc)
{
	int ncols = sqlite3_column_count(st);
	int64_t n = 0;

	fputc('[', out);
	while ((*rc = sqlite3_step(st)) == SQLITE_ROW) {
		fputs(n ? ",\n{" : "\n{", out);
		for (int c = 0; c < ncols; c++) {
			const char *name = sqlite3_column_name(st, c);
			double d;

			if (c)
				fputc(',', out);
			gt_text_json_fputs(out, name, strlen(name));
			fputc(':', out);
			switch (sqlite3_column_type(st, c)) {
			case SQLITE_INTEGER:
				fprintf(out, "%lld", (long long)sqlite3_column_int64(st, c));
				break;
			case SQLITE_FLOAT:
				d = sqlite3_column_double(st, c);
				if (isfinite(d))
					fprintf(out, "%.17g", d);
				else
					fputs("null", out);
				break;
			case SQLITE_TEXT:
				gt_text_json_fputs(out, (const char *)sqlite3_column_text(st, c),
				                   (size_t)sqlite3_column_bytes(st, c));
				break;
			case SQLITE_BLOB:
				fputc('"', out);
				hex_blob(out, sqlite3_column_blob(st, c),
				         (size_t)sqlite3_column_bytes(st, c));
				fputc('"', out);
				break;
			default:
				fputs("null", out);
				break;
			}
		}
		fputc('}', out);
		n++;
	}
	fputs(n ? "\n]\n" : "]\n", out);
	return n;
}

/* ---- queries ----------------------------------------------------------------------- */

static int open_db(const char *db_path, int flags, sqlite3 **db, struct gt_sql_error *err)
{
	int rc;

	if (access(db_path, F_OK) < 0) {
		set_error(err, NULL, strerror(errno), -1);
		return -errno;
	}
	rc = sqlite3_open_v2(db_path, db, flags, NULL);
	if (rc != SQLITE_OK) {
		set_error(err, *db, NULL, -1);
		sqlite3_close(*db); /* pairs with sqlite3_open_v2: a failed open still allocates */
		*db = NULL;
		return rc == SQLITE_NOMEM ? -ENOMEM : -EBADMSG;
	}
	sqlite3_busy_timeout(*db, 5000);
	return 0;
}

static int error_offset(sqlite3 *db)
{
#if SQLITE_VERSION_NUMBER >= 3038000
	return sqlite3_error_offset(db);
#else
	(void)db;
	return -1;
#endif
}

int gt_sql_query(const char *db_path, const char *sql, FILE *out, unsigned format,
                 struct gt_sql_error *err)
{
	sqlite3 *db = NULL;
	const char *p = sql;
	int ret, nsets = 0, nstmts = 0;

	if (err) {
		err->message[0] = '\0';
		err->offset = -1;
	}
	if (format >= GT_SQL_FORMAT_MAX || !sql || !out)
		return -EINVAL;
	ret = open_db(db_path, SQLITE_OPEN_READWRITE, &db, err);
	if (ret < 0)
		return ret;
	while (*p) {
		sqlite3_stmt *st = NULL;
		const char *tail = NULL;
		int rc = sqlite3_prepare_v2(db, p, -1, &st, &tail);
		int64_t n;

		if (rc != SQLITE_OK) {
			int off = error_offset(db);

			set_error(err, db, NULL, off >= 0 ? (int)(p - sql) + off : -1);
			ret = rc == SQLITE_NOMEM ? -ENOMEM : -EBADMSG;
			goto out;
		}
		if (!st) {
			/* only blanks or comments were left */
			p = tail;
			continue;
		}
		nstmts++;
		if (sqlite3_column_count(st) == 0) {
			while ((rc = sqlite3_step(st)) == SQLITE_ROW)
				;
		} else {
			if (nsets++ && format == GT_SQL_FORMAT_CSV)
				fputs("\r\n", out);
			if (format == GT_SQL_FORMAT_TABLE)
				n = print_table(out, st, &rc);
			else if (format == GT_SQL_FORMAT_CSV)
				n = print_csv(out, st, &rc);
			else
				n = print_json(out, st, &rc);
			if (n < 0) {
				sqlite3_finalize(st); /* pairs with the prepare above */
				ret = (int)n;
				goto out;
			}
		}
		if (rc != SQLITE_DONE) {
			int off = error_offset(db);

			set_error(err, db, NULL, off >= 0 ? (int)(p - sql) + off : -1);
			sqlite3_finalize(st); /* pairs with the prepare above */
			ret = rc == SQLITE_NOMEM ? -ENOMEM : -EBADMSG;
			goto out;
		}
		sqlite3_finalize(st); /* pairs with the prepare above */
		p = tail;
	}
	ret = nstmts;
out:
	sqlite3_close(db); /* pairs with open_db */
	if (fflush(out) != 0 || ferror(out))
		return ret < 0 ? ret : -EIO;
	return ret;
}

/* Append s to the buffer as a double-quoted SQL identifier. */
static int append(char **buf, size_t *len, size_t *cap, const char *s, bool ident)
{
	size_t need = *len + 2 * strlen(s) + 3;

	if (need > *cap) {
		size_t ncap = *cap ? *cap * 2 : 4096;
		char *nb;

		while (ncap < need)
			ncap *= 2;
		nb = realloc(*buf, ncap);
		if (!nb)
			return -ENOMEM;
		*buf = nb;
		*cap = ncap;
	}
	if (ident)
		(*buf)[(*len)++] = '"';
	for (; *s; s++) {
		if (ident && *s == '"')
			(*buf)[(*len)++] = '"';
		(*buf)[(*len)++] = *s;
	}
	if (ident)
		(*buf)[(*len)++] = '"';
	(*buf)[*len] = '\0';
	return 0;
}

int gt_sql_tables(const char *db_path, FILE *out, unsigned format, struct gt_sql_error *err)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	char *sql = NULL, *lit = NULL;
	size_t len = 0, cap = 0;
	int ret, rc, n = 0;

	ret = open_db(db_path, SQLITE_OPEN_READONLY, &db, err);
	if (ret < 0)
		return ret;
	rc = sqlite3_prepare_v2(db,
	                        "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name",
	                        -1, &st, NULL);
	if (rc != SQLITE_OK) {
		set_error(err, db, NULL, -1);
		ret = -EBADMSG;
		goto out;
	}
	/* one query, so the rows print like any other result: name, rows */
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(st, 0);

		lit = sqlite3_mprintf("%Q", name);
		if (!lit ||
		    append(&sql, &len, &cap, n++ ? " UNION ALL SELECT " : "SELECT ", false) ||
		    append(&sql, &len, &cap, lit, false) ||
		    append(&sql, &len, &cap, " AS \"table\", (SELECT count(*) FROM ", false) ||
		    append(&sql, &len, &cap, name, true) ||
		    append(&sql, &len, &cap, ") AS \"rows\"", false)) {
			ret = -ENOMEM;
			goto out;
		}
		sqlite3_free(lit); /* pairs with sqlite3_mprintf */
		lit = NULL;
	}
	if (rc != SQLITE_DONE) {
		set_error(err, db, NULL, -1);
		ret = -EBADMSG;
		goto out;
	}
	sqlite3_finalize(st); /* pairs with the prepare above */
	st = NULL;
	sqlite3_close(db); /* pairs with open_db */
	db = NULL;
	if (!n)
		ret = gt_sql_query(db_path, "SELECT NULL AS \"table\", NULL AS \"rows\" WHERE 0",
		                   out, format, err);
	else
		ret = gt_sql_query(db_path, sql, out, format, err);
	if (ret > 0)
		ret = 0;
out:
	sqlite3_free(lit);
	sqlite3_finalize(st);
	sqlite3_close(db);
	free(sql);
	return ret;
}

static bool newer(const struct stat *a, const struct stat *b)
{
	if (a->st_mtim.tv_sec != b->st_mtim.tv_sec)
		return a->st_mtim.tv_sec > b->st_mtim.tv_sec;
	return a->st_mtim.tv_nsec > b->st_mtim.tv_nsec;
}

/* The value of META_DATA_EXPORT's row `name` equals want. */
static bool meta_is(sqlite3 *db, const char *name, const char *want)
{
	sqlite3_stmt *st = NULL;
	bool same = false;

	if (sqlite3_prepare_v2(db, "SELECT value FROM META_DATA_EXPORT WHERE name = ?", -1, &st,
	                       NULL) == SQLITE_OK &&
	    sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW) {
		const char *v = (const char *)sqlite3_column_text(st, 0);

		same = v && strcmp(v, want) == 0;
	}
	sqlite3_finalize(st); /* pairs with the prepare above */
	return same;
}

int gt_sql_db_fresh(const char *trace_path, const char *db_path, const char *identity)
{
	struct stat ts, ds;
	sqlite3 *db = NULL;
	int fresh = 0;

	if (stat(trace_path, &ts) < 0)
		return -errno;
	if (stat(db_path, &ds) < 0 || !newer(&ds, &ts) || !gt_sql_is_database(db_path))
		return 0;
	if (sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK)
		fresh = meta_is(db, "GPUTRACE_SCHEMA_VERSION", GT_SQL_SCHEMA_VERSION) &&
		        (!identity || meta_is(db, "GPUTRACE_SOURCE", identity));
	sqlite3_close(db); /* pairs with sqlite3_open_v2 */
	return fresh;
}
