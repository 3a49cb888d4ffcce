/* Trace transforms: read a trace, filter its records, write the kept ones (see
 * src/ops/transform.h). Runs in the CLI. */
#include <errno.h>
#include <string.h>

#include "transform.h"

int gt_transform_run(struct gt_reader *in, const char *out_path, gt_transform_fn filter, void *ctx,
                     const struct gt_transform_options *opts, struct gt_transform_result *res)
{
	const struct gt_trace_info *info =
	        opts && opts->info ? opts->info : &gt_reader_header(in)->info;
	struct gt_transform_result counts = {0};
	struct gt_writer *w = NULL;
	const union gt_record *rec;
	int ret, n;

	ret = gt_writer_open(out_path, info, opts ? opts->writer : NULL, &w);
	if (ret < 0)
		goto out;
	while ((n = gt_reader_next(in, &rec)) > 0) {
		counts.read++;
		ret = filter(ctx, rec);
		if (ret < 0)
			goto out;
		if (ret == GT_TRANSFORM_DROP) {
			counts.dropped++;
			continue;
		}
		ret = gt_writer_write(w, &rec->hdr);
		if (ret < 0)
			goto out;
		counts.kept++;
	}
	ret = n;
	if (ret < 0)
		goto out;
	/* the writer is gone either way: closed (renamed into place) or failed */
	ret = gt_writer_close(w);
	w = NULL;
out:
	/* (only an unfinished output: a failed close has already released it) */
	gt_writer_discard(w);
	if (res)
		*res = counts;
	return ret < 0 ? ret : 0;
}

int gt_transform_file(const char *in_path, const char *out_path, gt_transform_fn filter, void *ctx,
                      const struct gt_transform_options *opts, struct gt_transform_result *res,
                      const char **errmsg)
{
	struct gt_reader *r = NULL;
	const char *msg = NULL;
	int ret;

	if (errmsg)
		*errmsg = NULL;
	ret = gt_reader_open(in_path, &r, &msg);
	if (ret < 0) {
		if (errmsg)
			*errmsg = msg;
		return ret;
	}
	/* the reader holds the input open: renaming the output over it is safe */
	ret = gt_transform_run(r, out_path, filter, ctx, opts, res);
	gt_reader_close(r);
	return ret;
}

/* Whether the record is activity with a time span (the window applies to it). */
static int is_activity(unsigned type)
{
	switch (type) {
	case GT_REC_KERNEL:
	case GT_REC_MEMCPY:
	case GT_REC_MEMSET:
	case GT_REC_API:
	case GT_REC_NVTX:
	case GT_REC_SYNC:
	case GT_REC_GRAPH:
	case GT_REC_OVERHEAD:
		return 1;
	default:
		return 0;
	}
}

int gt_transform_window(void *ctx, const union gt_record *rec)
{
	const struct gt_transform_window *win = ctx;
	const struct gt_record_desc *d;
	uint64_t first = UINT64_MAX, last = 0;

	if (!is_activity(rec->hdr.type))
		return GT_TRANSFORM_KEEP;
	d = gt_record_desc(rec->hdr.type);
	if (!d)
		return GT_TRANSFORM_KEEP;
	/* the record's timestamps, as its description marks them (0 is "not set") */
	for (unsigned i = 0; i < d->nfields; i++) {
		uint64_t v;

		if (!(d->fields[i].flags & GT_FIELD_TIME) || d->fields[i].width != 8)
			continue;
		memcpy(&v, (const char *)rec + d->fields[i].offset, sizeof(v));
		if (v > last)
			last = v;
		if (v && v < first)
			first = v;
	}
	if (win->from_ns && last < win->from_ns)
		return GT_TRANSFORM_DROP;
	if (win->to_ns && first != UINT64_MAX && first > win->to_ns)
		return GT_TRANSFORM_DROP;
	return GT_TRANSFORM_KEEP;
}
