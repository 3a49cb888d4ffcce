/* Output side of the stats exporter: sections of rows printed as aligned tables, CSV
 * (RFC 4180) or one JSON object, numbers in the units of exporters/common/text.h. Runs in the CLI.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stats-int.h"
#include "text.h"

struct gt_emit {
	FILE *out;          /* borrowed */
	unsigned format;    /* enum gt_stats_format */
	unsigned nsections; /* in the whole document */
	unsigned limit;     /* table rows kept per section; 0 = all */
	unsigned done;      /* sections finished */
	bool failed;        /* some write failed */

	/* the section being written */
	const char *name, *title;
	const struct gt_col *cols; /* borrowed until gt_stats_emit_end() */
	size_t ncols;
	bool single;  /* GT_EMIT_SINGLE */
	bool limited; /* GT_EMIT_LIMITED */
	uint64_t nrows;
	/* table format buffers rows to size the columns: ncols strings per kept row */
	char **cells;
	size_t ncells, capcells;
};

/* ---- JSON ---- */

void gt_stats_json_double(FILE *out, double d)
{
	char buf[40];

	if (!isfinite(d)) {
		fputs("null", out);
		return;
	}
	/* the shortest of %.15g and %.17g that reads back as the same double */
	snprintf(buf, sizeof(buf), "%.15g", d);
	if (strtod(buf, NULL) != d)
		snprintf(buf, sizeof(buf), "%.17g", d);
	fputs(buf, out);
}

/* ---- cells ---- */

static void csv_string(FILE *out, const char *s)
{
	if (!strpbrk(s, ",\"\r\n")) {
		fputs(s, out);
		return;
	}
	fputc('"', out);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', out);
		fputc(*s, out);
	}
	fputc('"', out);
}

/* Text of one cell in table form. Returns a malloc'd string or NULL. */
static char *table_cell(const struct gt_col *c, const struct gt_cell *v)
{
	char buf[64];
	char *s;

	if (v->null)
		return strdup("-");
	switch (c->type) {
	case GT_COL_STR:
	case GT_COL_TEXT: {
		size_t w = 0;

		s = strdup(v->v.s ? v->v.s : "");
		/* control characters would break the alignment (or the terminal); a name of
		 * kilobytes (a C++ kernel's templates) would bury the table: cut, and say so.
		 * A sentence is kept whole: its end (a CUPTI result) is what it says. */
		for (char *p = s; p && *p; p++) {
			if ((unsigned char)*p < 0x20 || *p == 0x7f)
				*p = '?';
			if (c->type == GT_COL_STR && ((unsigned char)*p & 0xc0) != 0x80 &&
			    ++w > GT_STATS_TABLE_TEXT_MAX - 3) {
				strcpy(p, "...");
				break;
			}
		}
		return s;
	}
	case GT_COL_U64:
		gt_fmt_count(v->v.u, buf, sizeof(buf));
		break;
	case GT_COL_I64:
		snprintf(buf, sizeof(buf), "%" PRId64, v->v.i);
		break;
	case GT_COL_NS:
		gt_fmt_ns((double)v->v.u, buf, sizeof(buf));
		break;
	case GT_COL_NS_F:
		gt_fmt_ns(v->v.d, buf, sizeof(buf));
		break;
	case GT_COL_PCT:
		snprintf(buf, sizeof(buf), "%.2f", v->v.d);
		break;
	case GT_COL_BYTES:
		gt_fmt_bytes((double)v->v.u, buf, sizeof(buf));
		break;
	case GT_COL_BYTES_F:
		gt_fmt_bytes(v->v.d, buf, sizeof(buf));
		break;
	case GT_COL_GBPS:
		snprintf(buf, sizeof(buf), "%.2f", v->v.d);
		break;
	case GT_COL_BOOL:
		snprintf(buf, sizeof(buf), "%s", v->v.b ? "yes" : "no");
		break;
	case GT_COL_NS_DELTA:
		/* the sign always shown, the magnitude in the units of every duration */
		buf[0] = v->v.i < 0 ? '-' : '+';
		gt_fmt_ns(v->v.i < 0 ? -(double)v->v.i : (double)v->v.i, buf + 1, sizeof(buf) - 1);
		break;
	case GT_COL_PCT_DELTA:
		snprintf(buf, sizeof(buf), "%+.2f", v->v.d);
		break;
	default:
		buf[0] = '\0';
		break;
	}
	return strdup(buf);
}

static void csv_cell(FILE *out, const struct gt_col *c, const struct gt_cell *v)
{
	if (v->null)
		return;
	switch (c->type) {
	case GT_COL_STR:
	case GT_COL_TEXT:
		csv_string(out, v->v.s ? v->v.s : "");
		break;
	case GT_COL_U64:
	case GT_COL_NS:
	case GT_COL_BYTES:
		fprintf(out, "%" PRIu64, v->v.u);
		break;
	case GT_COL_I64:
	case GT_COL_NS_DELTA:
		fprintf(out, "%" PRId64, v->v.i);
		break;
	case GT_COL_NS_F:
	case GT_COL_BYTES_F:
		fprintf(out, "%.1f", v->v.d);
		break;
	case GT_COL_PCT:
	case GT_COL_PCT_DELTA:
		fprintf(out, "%.2f", v->v.d);
		break;
	case GT_COL_GBPS:
		fprintf(out, "%.3f", v->v.d);
		break;
	case GT_COL_BOOL:
		fputs(v->v.b ? "true" : "false", out);
		break;
	default:
		break;
	}
}

static void json_cell(FILE *out, const struct gt_col *c, const struct gt_cell *v)
{
	if (v->null) {
		fputs("null", out);
		return;
	}
	switch (c->type) {
	case GT_COL_STR:
	case GT_COL_TEXT:
		gt_text_json_fputs(out, v->v.s ? v->v.s : "", v->v.s ? strlen(v->v.s) : 0);
		break;
	case GT_COL_U64:
	case GT_COL_NS:
	case GT_COL_BYTES:
		fprintf(out, "%" PRIu64, v->v.u);
		break;
	case GT_COL_I64:
	case GT_COL_NS_DELTA:
		fprintf(out, "%" PRId64, v->v.i);
		break;
	case GT_COL_BOOL:
		fputs(v->v.b ? "true" : "false", out);
		break;
	default:
		gt_stats_json_double(out, v->v.d);
		break;
	}
}

/* ---- sections ---- */

int gt_stats_emit_new(FILE *out, unsigned format, unsigned nsections, unsigned limit,
                      struct gt_emit **ret)
{
	struct gt_emit *e;

	if (format >= GT_STATS_FORMAT_MAX)
		return -EINVAL;
	e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	e->out = out;
	e->format = format;
	e->nsections = nsections;
	e->limit = limit;
	if (format == GT_STATS_FORMAT_JSON)
		fputs("{", out);
	*ret = e;
	return 0;
}

int gt_stats_emit_begin(struct gt_emit *e, const char *name, const char *title,
                        const struct gt_col *cols, size_t ncols, unsigned flags)
{
	e->name = name;
	e->title = title;
	e->cols = cols;
	e->ncols = ncols;
	e->single = flags & GT_EMIT_SINGLE;
	e->limited = flags & GT_EMIT_LIMITED;
	e->nrows = 0;
	switch (e->format) {
	case GT_STATS_FORMAT_CSV:
		if (e->done)
			fputc('\n', e->out);
		if (e->nsections > 1)
			fprintf(e->out, "# %s\n", name);
		for (size_t i = 0; i < ncols; i++)
			fprintf(e->out, "%s%s", i ? "," : "", cols[i].key);
		fputc('\n', e->out);
		break;
	case GT_STATS_FORMAT_JSON:
		fprintf(e->out, "%s\n\"%s\": ", e->done ? "," : "", name);
		if (!e->single)
			fputc('[', e->out);
		break;
	default:
		break;
	}
	return 0;
}

int gt_stats_emit_row(struct gt_emit *e, const struct gt_cell *cells)
{
	FILE *out = e->out;

	e->nrows++;
	switch (e->format) {
	case GT_STATS_FORMAT_CSV:
		for (size_t i = 0; i < e->ncols; i++) {
			if (i)
				fputc(',', out);
			csv_cell(out, &e->cols[i], &cells[i]);
		}
		fputc('\n', out);
		return 0;
	case GT_STATS_FORMAT_JSON:
		if (e->single && e->nrows > 1)
			return 0; /* a single-row section keeps its first row */
		fputs(e->nrows > 1 ? ",\n  {" : e->single ? "{" : "\n  {", out);
		for (size_t i = 0; i < e->ncols; i++) {
			fprintf(out, "%s\"%s\": ", i ? ", " : "", e->cols[i].key);
			json_cell(out, &e->cols[i], &cells[i]);
		}
		fputc('}', out);
		return 0;
	default:
		break;
	}
	if (e->limited && e->limit && e->nrows > e->limit)
		return 0;
	if (e->ncells + e->ncols > e->capcells) {
		size_t cap = e->capcells ? e->capcells * 2 : 16 * e->ncols;
		char **n;

		while (cap < e->ncells + e->ncols)
			cap *= 2;
		n = realloc(e->cells, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		e->cells = n;
		e->capcells = cap;
	}
	for (size_t i = 0; i < e->ncols; i++) {
		e->cells[e->ncells] = table_cell(&e->cols[i], &cells[i]);
		if (!e->cells[e->ncells])
			return -ENOMEM;
		e->ncells++;
	}
	return 0;
}

/* Display width: code points, so UTF-8 names line up. */
static size_t text_width(const char *s)
{
	size_t w = 0;

	for (; *s; s++)
		if (((unsigned char)*s & 0xc0) != 0x80)
			w++;
	return w;
}

static void pad(FILE *out, size_t n)
{
	while (n--)
		fputc(' ', out);
}

static void table_line(struct gt_emit *e, char *const *text, const size_t *width)
{
	for (size_t i = 0; i < e->ncols; i++) {
		size_t w = text_width(text[i]);
		bool left = e->cols[i].type == GT_COL_STR || e->cols[i].type == GT_COL_TEXT;

		if (i)
			fputs("  ", e->out);
		if (!left)
			pad(e->out, width[i] - w);
		fputs(text[i], e->out);
		/* no trailing blanks after the last column */
		if (left && i + 1 < e->ncols)
			pad(e->out, width[i] - w);
	}
	fputc('\n', e->out);
}

static int table_flush(struct gt_emit *e, const char *empty_text)
{
	size_t rows = e->ncols ? e->ncells / e->ncols : 0;
	size_t *width;
	char **head;
	int ret = 0;

	if (e->done)
		fputc('\n', e->out);
	fprintf(e->out, "%s\n", e->title);
	if (rows == 0) {
		fprintf(e->out, "  %s\n", empty_text ? empty_text : "(none)");
		return 0;
	}
	width = calloc(e->ncols, sizeof(*width));
	head = calloc(e->ncols, sizeof(*head));
	if (!width || !head) {
		ret = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < e->ncols; i++) {
		head[i] = (char *)e->cols[i].title;
		width[i] = text_width(head[i]);
		for (size_t r = 0; r < rows; r++) {
			size_t w = text_width(e->cells[r * e->ncols + i]);

			if (w > width[i])
				width[i] = w;
		}
	}
	table_line(e, head, width);
	for (size_t r = 0; r < rows; r++)
		table_line(e, e->cells + r * e->ncols, width);
	if (e->nrows > rows)
		fprintf(e->out, "  ... %" PRIu64 " more not shown\n", e->nrows - rows);
out:
	free(width);
	free(head);
	return ret;
}

int gt_stats_emit_end(struct gt_emit *e, const char *empty_text)
{
	int ret = 0;

	switch (e->format) {
	case GT_STATS_FORMAT_CSV:
		break;
	case GT_STATS_FORMAT_JSON:
		if (e->single)
			fputs(e->nrows ? "" : "null", e->out);
		else
			fputs(e->nrows ? "\n]" : "]", e->out);
		break;
	default:
		ret = table_flush(e, empty_text);
		for (size_t i = 0; i < e->ncells; i++)
			free(e->cells[i]);
		e->ncells = 0;
		break;
	}
	e->done++;
	if (ferror(e->out))
		e->failed = true;
	return ret;
}

int gt_stats_emit_close(struct gt_emit *e)
{
	int ret;

	if (!e)
		return 0;
	if (e->format == GT_STATS_FORMAT_JSON)
		fputs("\n}\n", e->out);
	if (fflush(e->out) != 0 || ferror(e->out))
		e->failed = true;
	ret = e->failed ? -EIO : 0;
	for (size_t i = 0; i < e->ncells; i++)
		free(e->cells[i]);
	free(e->cells);
	free(e);
	return ret;
}
