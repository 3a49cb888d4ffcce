/* CSV exporter: one table per record kind (OUT-<kind>.csv), a header row of the field
 * names from gt_record_desc, strings resolved to text, quoted per RFC 4180; the pid column
 * is the catalog's (a reused pid's later process has one of its own). Streams with flat
 * memory. Runs in the CLI. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "exporter.h"
#include "names.h"
#include "outbuf.h"
#include "output.h"
#include "text.h"

struct csv {
	const struct gt_export_options *opts;
	struct gt_names names;            /* kernel names demangled, every name a CSV field */
	struct gt_catalog cat;            /* the processes: which pid each row shows */
	struct gt_outbuf out[GT_REC_MAX]; /* one open file per kind seen */
	char *base;                       /* OUT without ".csv"; owned */
	const char *errmsg;
	uint64_t rows;
	unsigned files;
};

static char errbuf[512];

/* Column name of a field: string ids drop their "_id" ("name_id" -> "name"), since the
 * column holds the text. */
static char *column(char *p, const struct gt_field *f)
{
	size_t len = strlen(f->name);

	if ((f->flags & GT_FIELD_STRING) && len > 3 && strcmp(f->name + len - 3, "_id") == 0)
		len -= 3;
	memcpy(p, f->name, len);
	return p + len;
}

static int open_table(struct csv *c, unsigned type, const char *output)
{
	const struct gt_record_desc *d = gt_record_desc(type);
	size_t blen = strlen(c->base);
	char *path = malloc(blen + 32);
	char *p;
	int ret;

	if (!path)
		return -ENOMEM;
	p = stpcpy(path, c->base);
	*p++ = '-';
	strcpy(p, d->name);
	strcat(p, ".csv");
	ret = gt_outbuf_open(&c->out[type], c->opts->out, path, &c->errmsg);
	free(path);
	if (ret < 0)
		return ret;
	(void)output;
	c->files++;
	p = gt_outbuf_space(&c->out[type], 64 * (d->nfields + 1));
	p = stpcpy(p, "pid");
	for (unsigned i = 0; i < d->nfields; i++) {
		*p++ = ',';
		p = column(p, &d->fields[i]);
	}
	*p++ = '\r';
	*p++ = '\n';
	gt_outbuf_commit(&c->out[type], p);
	return 0;
}

static uint64_t field_u64(const union gt_record *rec, const struct gt_field *f)
{
	const unsigned char *b = (const unsigned char *)rec + f->offset;
	uint64_t v = 0;

	switch (f->width) {
	case 1:
		return b[0];
	case 2: {
		uint16_t x;

		memcpy(&x, b, 2);
		return x;
	}
	case 4: {
		uint32_t x;

		memcpy(&x, b, 4);
		return x;
	}
	default:
		memcpy(&v, b, 8);
		return v;
	}
}

static int64_t field_i64(const union gt_record *rec, const struct gt_field *f)
{
	const unsigned char *b = (const unsigned char *)rec + f->offset;

	switch (f->width) {
	case 1:
		return (int8_t)b[0];
	case 2: {
		int16_t x;

		memcpy(&x, b, 2);
		return x;
	}
	case 4: {
		int32_t x;

		memcpy(&x, b, 4);
		return x;
	}
	default: {
		int64_t x;

		memcpy(&x, b, 8);
		return x;
	}
	}
}

static int write_row(struct csv *c, const union gt_record *rec, const char *output)
{
	unsigned type = rec->hdr.type;
	const struct gt_record_desc *d = gt_record_desc(type);
	struct gt_outbuf *o;
	size_t need = 32;
	char *p;
	int ret;

	if (!d || type == GT_REC_STRING)
		return 0;
	if (!c->out[type].buf) {
		ret = open_table(c, type, output);
		if (ret < 0)
			return ret;
	}
	o = &c->out[type];
	/* strings first: their cached text may be long */
	for (unsigned i = 0; i < d->nfields; i++) {
		size_t len = 0;

		if (d->fields[i].flags & GT_FIELD_STRING) {
			uint32_t id = (uint32_t)field_u64(rec, &d->fields[i]);

			if (id &&
			    !gt_names_get(&c->names, id, type == GT_REC_KERNEL, &len, NULL, NULL))
				return -ENOMEM;
		}
		need += 24 + len;
	}
	p = gt_outbuf_space(o, need);
	p = gt_fmt_u64(p, gt_catalog_out_pid(&c->cat, rec->hdr.pid));
	for (unsigned i = 0; i < d->nfields; i++) {
		const struct gt_field *f = &d->fields[i];

		*p++ = ',';
		if (f->flags & GT_FIELD_STRING) {
			uint32_t id = (uint32_t)field_u64(rec, f);
			size_t len;
			const char *s;

			if (!id)
				continue;
			s = gt_names_get(&c->names, id, type == GT_REC_KERNEL, &len, NULL, NULL);
			memcpy(p, s, len);
			p += len;
		} else if (f->flags & GT_FIELD_SIGNED) {
			p = gt_fmt_i64(p, field_i64(rec, f));
		} else {
			p = gt_fmt_u64(p, field_u64(rec, f));
		}
	}
	*p++ = '\r';
	*p++ = '\n';
	gt_outbuf_commit(o, p);
	c->rows++;
	return o->err;
}

static int csv_run(struct gt_reader *r, const struct gt_export_options *opts,
                   struct gt_export_result *res, const char **errmsg)
{
	struct csv c = {0};
	const union gt_record *rec;
	uint64_t n = 0, bytes = 0;
	size_t len;
	int ret;

	for (unsigned i = 0; i < GT_REC_MAX; i++)
		c.out[i].fd = -1;
	c.opts = opts;
	c.errmsg = "out of memory";
	ret = gt_names_init(&c.names, r, opts->demangle != 0, gt_text_csv_field, 7);
	if (ret == 0)
		ret = gt_catalog_init(&c.cat, r);
	if (ret < 0)
		goto out;
	len = strlen(opts->output);
	c.base = strdup(opts->output);
	if (!c.base) {
		ret = -ENOMEM;
		goto out;
	}
	if (len > 4 && strcmp(c.base + len - 4, ".csv") == 0)
		c.base[len - 4] = '\0';
	while ((ret = gt_reader_next(r, &rec)) > 0) {
		ret = gt_catalog_observe(&c.cat, rec);
		if (ret == 0)
			ret = write_row(&c, rec, opts->output);
		if (ret < 0) {
			/* a file the output refused says so itself (output.h's message) */
			if (ret != -ENOMEM && c.errmsg != errbuf && ret != -EEXIST &&
			    ret != -EPERM && ret != -EISDIR) {
				snprintf(errbuf, sizeof(errbuf), "writing %s-%s.csv: %s", c.base,
				         gt_record_name(rec->hdr.type), strerror(-ret));
				c.errmsg = errbuf;
			}
			goto out;
		}
		if (opts->progress && (++n & 0xffff) == 0) {
			uint64_t done, total;

			gt_reader_progress(r, &done, &total);
			opts->progress(opts->progress_ctx, done, total);
		}
	}
	if (ret < 0) {
		snprintf(errbuf, sizeof(errbuf), "reading the trace: %s", strerror(-ret));
		c.errmsg = errbuf;
		goto out;
	}
	gt_catalog_read_done(&c.cat, gt_reader_status(r));
	if (gt_catalog_damaged(&c.cat.damage_read)) {
		/* what this read skipped: the loss row `info --reindex` would record, of no
		 * process and no time (docs/exporters.md, "csv") */
		union gt_record l;

		memset(&l, 0, sizeof(l));
		l.loss.hdr.type = GT_REC_LOSS;
		l.loss.hdr.size = sizeof(l.loss);
		l.loss.count = c.cat.damage_read.chunks;
		l.loss.source = GT_LOSS_FILE;
		l.loss.kind = GT_REC_NONE;
		l.loss.bytes = c.cat.damage_read.bytes;
		l.loss.records = c.cat.damage_read.records;
		l.loss.malformed = c.cat.damage_read.malformed;
		ret = write_row(&c, &l, opts->output);
		if (ret < 0)
			goto out;
	}
	for (unsigned i = 0; i < GT_REC_MAX; i++) {
		if (!c.out[i].buf)
			continue;
		bytes += c.out[i].bytes;
		ret = gt_outbuf_close(&c.out[i]);
		if (ret < 0) {
			snprintf(errbuf, sizeof(errbuf), "writing %s-%s.csv: %s", c.base,
			         gt_record_name(i), strerror(-ret));
			c.errmsg = errbuf;
			goto out;
		}
	}
	res->events = c.rows;
	res->bytes = bytes;
	res->files = c.files;
	res->warning = NULL;
	ret = 0;
out:
	for (unsigned i = 0; i < GT_REC_MAX; i++)
		gt_outbuf_abort(&c.out[i]);
	if (ret < 0)
		*errmsg = c.errmsg;
	free(c.base);
	gt_names_fini(&c.names);
	gt_catalog_fini(&c.cat);
	return ret;
}

static unsigned csv_output_flags(const struct gt_export_options *opts)
{
	(void)opts;
	return GT_OUTPUT_NO_STDOUT;
}

/* OUT-<kind>.csv for OUT.csv: the tables of an earlier export of the same name */
static bool csv_stale(const struct gt_export_options *opts, const char *name)
{
	return gt_export_sibling(opts->output, ".csv", '-', false, name);
}

const struct gt_exporter_ops gt_exporter_csv = {
        .name = "csv",
        .extension = ".csv",
        .help = "CSV, one table per record kind (OUT-kernel.csv, OUT-api.csv, ...)",
        .write = csv_run,
        .output_flags = csv_output_flags,
        .stdout_refused = "csv writes one file per record kind: give -o NAME.csv (it writes "
                          "NAME-kernel.csv, NAME-api.csv, ...)",
        .stale = csv_stale,
};
