/* Windowed exports: any exporter run on what a window of the trace keeps (src/ops/window.c puts
 * the window on the reader), and perfetto output cut by time into pieces of at most
 * --max-size, each a whole trace of its own (every piece is an export of its own window, so
 * it carries the names of what it shows). Runs in the CLI. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "exporter.h"
#include "steps.h"
#include "window.h"

/* Bytes of perfetto output per record of a trace, for the first cut: the most measured on the
 * traces of tests/data (46 to 61) and a synthetic one (64). A piece that still comes out too
 * large is cut in two and written again. */
#define PIECE_BYTES_PER_RECORD 64u
#define PIECES_MAX             4096u
/* A piece shorter than this that is still too large cannot be cut further. */
#define PIECE_MIN_NS 1000u

static _Thread_local char errbuf[512];

/* Run e on r through window w (none when w keeps everything). */
static int run_one(const struct gt_exporter_ops *e, struct gt_reader *r, const struct gt_window *w,
                   const struct gt_export_options *opts, struct gt_export_result *res,
                   const char **errmsg, struct gt_window_stats *wst)
{
	struct gt_window_filter *f = NULL;
	int ret;

	if (w && gt_window_any(w)) {
		ret = gt_window_open(r, w, &f); /* closed below */
		if (ret < 0) {
			snprintf(errbuf, sizeof(errbuf), "reading the trace: %s", strerror(-ret));
			*errmsg = errbuf;
			return ret;
		}
	} else {
		ret = gt_reader_rewind(r);
		if (ret < 0)
			return ret;
	}
	ret = e->write(r, opts, res, errmsg);
	if (f && wst) {
		struct gt_window_stats s;

		gt_window_stats(f, &s);
		wst->kept += s.kept;
		wst->dropped += s.dropped;
		wst->clipped += s.clipped;
		wst->carried += s.carried;
		wst->rank_pids = s.rank_pids;
		wst->chunks_read += s.chunks_read;
		wst->chunks_passed += s.chunks_passed;
	}
	gt_window_close(f);
	return ret;
}

/* OUT for piece 0, OUT.k.pftrace (OUT less its .pftrace) for piece k, as chrome numbers its
 * files. Returns 0 or -ENAMETOOLONG. */
static int piece_path(const char *out, unsigned k, char *buf, size_t bytes)
{
	size_t len = strlen(out);
	int n;

	if (k == 0) {
		n = snprintf(buf, bytes, "%s", out);
	} else {
		if (len > 8 && strcmp(out + len - 8, ".pftrace") == 0)
			len -= 8;
		n = snprintf(buf, bytes, "%.*s.%u.pftrace", (int)len, out, k);
	}
	return n < 0 || (size_t)n >= bytes ? -ENAMETOOLONG : 0;
}

/* Without an index: the time range and the event records of the window, by one scan. */
static int scan_range(struct gt_reader *r, const struct gt_window *w, uint64_t *lo, uint64_t *hi,
                      uint64_t *records)
{
	struct gt_window_filter *f = NULL;
	const union gt_record *rec;
	int ret;

	*lo = UINT64_MAX;
	*hi = 0;
	*records = 0;
	ret = gt_window_open(r, w, &f); /* closed below */
	if (ret < 0)
		return ret;
	while ((ret = gt_reader_next(r, &rec)) > 0) {
		uint64_t s, e;

		if (GT_TRACE_STATE_TYPES >> rec->hdr.type & 1)
			continue;
		memcpy(&s, (const uint8_t *)rec + sizeof(rec->hdr), 8);
		memcpy(&e, (const uint8_t *)rec + sizeof(rec->hdr) + 8, 8);
		if (!s)
			continue;
		/* instants have no end; process ends, losses, notices a second u64 that is not */
		if (rec->hdr.type == GT_REC_PROCESS_END || rec->hdr.type == GT_REC_LOSS ||
		    rec->hdr.type == GT_REC_NOTICE || e < s)
			e = s;
		(*records)++;
		if (s < *lo)
			*lo = s;
		if (e > *hi)
			*hi = e;
	}
	gt_window_close(f);
	return ret;
}

static int split(const struct gt_exporter_ops *e, struct gt_reader *r, const struct gt_window *w,
                 const struct gt_export_options *opts, struct gt_export_result *res,
                 const char **errmsg, struct gt_window_stats *wst)
{
	uint64_t per = opts->max_bytes * 3 / 4 / PIECE_BYTES_PER_RECORD;
	uint64_t *bounds = calloc(PIECES_MAX + 1, sizeof(*bounds));
	struct gt_export_options po = *opts;
	struct gt_window pw = *w;
	char *path = NULL;
	size_t path_bytes = strlen(opts->output) + 32;
	unsigned n = 0, file = 0, i = 0;
	int ret;

	*errmsg = "out of memory";
	path = malloc(path_bytes);
	if (!bounds || !path) {
		ret = -ENOMEM;
		goto out;
	}
	if (!per)
		per = 1;
	ret = gt_window_cut(r, w, per, bounds, PIECES_MAX / 2);
	if (ret == -ENODATA) {
		/* a trace cut short: pieces of equal time, from one scan */
		uint64_t lo, hi, records;

		ret = scan_range(r, w, &lo, &hi, &records);
		if (ret < 0) {
			snprintf(errbuf, sizeof(errbuf), "reading the trace: %s", strerror(-ret));
			*errmsg = errbuf;
			goto out;
		}
		if (lo > hi)
			lo = hi = w->from_ns;
		n = (unsigned)((records + per - 1) / per);
		n = n < 1 ? 1 : n > PIECES_MAX / 2 ? PIECES_MAX / 2 : n;
		for (unsigned k = 0; k <= n; k++)
			bounds[k] = lo + (hi + 1 - lo) / n * k;
		bounds[n] = hi + 1;
		ret = (int)n;
	}
	if (ret < 0) {
		snprintf(errbuf, sizeof(errbuf), "cutting the trace into pieces: %s",
		         ret == -E2BIG ? "more than 2048 pieces; give a larger --max-size"
		                       : strerror(-ret));
		*errmsg = errbuf;
		goto out;
	}
	n = (unsigned)ret;
	memset(res, 0, sizeof(*res));
	while (i < n) {
		struct gt_export_result pr = {0};

		pw.from_ns = bounds[i];
		pw.to_ns = bounds[i + 1];
		ret = piece_path(opts->output, file, path, path_bytes);
		if (ret < 0)
			goto out;
		po.output = path;
		po.max_bytes = 0;
		po.on_file = NULL;
		ret = run_one(e, r, &pw, &po, &pr, errmsg, wst);
		if (ret < 0)
			goto out;
		if (pr.bytes > opts->max_bytes) {
			uint64_t mid = bounds[i] + (bounds[i + 1] - bounds[i]) / 2;

			if (bounds[i + 1] - bounds[i] < 2 * PIECE_MIN_NS || n == PIECES_MAX) {
				snprintf(errbuf, sizeof(errbuf),
				         "%s is %llu bytes, more than --max-size, and covers only "
				         "%llu ns: it cannot be cut further",
				         path, (unsigned long long)pr.bytes,
				         (unsigned long long)(bounds[i + 1] - bounds[i]));
				*errmsg = errbuf;
				ret = -EFBIG;
				goto out;
			}
			/* cut it in two and write its first half again, under the same name */
			memmove(bounds + i + 2, bounds + i + 1, (n - i) * sizeof(*bounds));
			bounds[i + 1] = mid;
			n++;
			continue;
		}
		if (opts->on_file)
			opts->on_file(opts->file_ctx, path, bounds[i], bounds[i + 1]);
		res->events += pr.events;
		res->counters += pr.counters;
		res->flows += pr.flows;
		res->lanes += pr.lanes;
		res->bytes += pr.bytes;
		res->files++;
		file++;
		i++;
	}
	ret = 0;
out:
	free(bounds);
	free(path);
	return ret;
}

bool gt_export_stale_pieces(const struct gt_export_options *opts, const char *name)
{
	return gt_export_sibling(opts->output, ".pftrace", '.', true, name);
}

int gt_export_window(const struct gt_exporter_ops *e, struct gt_reader *r,
                     const struct gt_window *w, const struct gt_export_options *opts,
                     struct gt_export_result *res, const char **errmsg, struct gt_window_stats *wst)
{
	static const struct gt_window all;

	struct gt_export_options use;
	struct gt_steps *steps = NULL;
	struct gt_output *own;
	int ret;

	if (wst)
		memset(wst, 0, sizeof(*wst));
	if (!w)
		w = &all;
	if (opts->max_bytes && strcmp(e->name, "perfetto") == 0 && strcmp(opts->output, "-") == 0) {
		*errmsg = "perfetto output cut into pieces (--max-size) needs files: give -o";
		return -EINVAL;
	}
	ret = gt_export_own_begin(e, opts, &use, &own, errmsg);
	if (ret < 0)
		return ret;
	/* a window's steps keep the numbers they have in the whole trace; so do the pieces' */
	if ((gt_window_any(w) || opts->max_bytes) &&
	    (strcmp(e->name, "chrome") == 0 || strcmp(e->name, "perfetto") == 0)) {
		ret = gt_reader_rewind(r);
		if (ret == 0)
			ret = gt_export_steps(r, opts, &use.steps, &steps, errmsg);
	}
	if (ret == 0 && opts->max_bytes && strcmp(e->name, "perfetto") == 0)
		ret = split(e, r, w, &use, res, errmsg, wst);
	else if (ret == 0)
		ret = run_one(e, r, w, &use, res, errmsg, wst);
	gt_steps_free(steps);
	return gt_export_own_end(own, ret, errmsg);
}
