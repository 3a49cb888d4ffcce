/* Rebuilding a trace's index: every record read (a file cut short is recovered, one from
 * before chunk types is read whole) and written again by this writer, into state and event
 * chunks under a complete footer, then renamed over the file. Runs in the CLI (`gputrace info
 * --reindex`). Layout: docs/format.md. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "gputrace/trace.h"

static _Thread_local char errbuf[256];

static int fail(const char **errmsg, const char *msg, int err)
{
	if (errmsg)
		*errmsg = msg;
	return err;
}

int gt_trace_reindex(const char *path, struct gt_reindex_result *res, const char **errmsg)
{
	struct gt_reader *r = NULL;
	struct gt_writer *w = NULL;
	const union gt_record *rec;
	const struct gt_reader_status *rs;
	struct gt_chunk_info ci;
	struct stat st;
	uint32_t first_pid = 0;
	bool have_pid = false;
	int ret;

	if (!path || !res)
		return fail(errmsg, "invalid argument", -EINVAL);
	memset(res, 0, sizeof(*res));
	ret = gt_reader_open(path, &r, errmsg); /* closed at out */
	if (ret < 0)
		return ret;
	if (stat(path, &st) == 0)
		res->bytes_before = (uint64_t)st.st_size;
	res->had_index = gt_reader_footer_counts(r) != NULL;
	res->had_types = res->had_index && gt_reader_chunk_info(r, 0, &ci) == 1 && ci.have_types;
	/* the header as it was; fields of a newer minor revision are not carried over */
	ret = gt_writer_open(path, &gt_reader_header(r)->info, NULL, &w);
	if (ret < 0) {
		snprintf(errbuf, sizeof(errbuf), "cannot write next to it: %s", strerror(-ret));
		fail(errmsg, errbuf, ret);
		goto out;
	}
	while ((ret = gt_reader_next(r, &rec)) > 0) {
		if (rec->hdr.type == GT_REC_PROCESS && !have_pid) {
			first_pid = rec->hdr.pid;
			have_pid = true;
		}
		if (rec->hdr.type == GT_REC_STRING)
			ret = gt_writer_string(w, rec->hdr.pid, rec->string.id, rec->string.str,
			                       rec->string.len);
		else
			ret = gt_writer_write(w, &rec->hdr);
		if (ret == -EINVAL) {
			res->records_dropped++; /* decoded, but not a record this writer takes */
			continue;
		}
		if (ret < 0) {
			snprintf(errbuf, sizeof(errbuf), "writing: %s", strerror(-ret));
			fail(errmsg, errbuf, ret);
			goto out;
		}
		res->records++;
	}
	if (ret < 0) {
		snprintf(errbuf, sizeof(errbuf), "reading: %s", strerror(-ret));
		fail(errmsg, errbuf, ret);
		goto out;
	}
	rs = gt_reader_status(r);
	if (rs->records_skipped) {
		/* a newer writer's record types, or damage: writing the file again would lose
		 * what an up-to-date reader still reads */
		snprintf(errbuf, sizeof(errbuf),
		         "%llu records could not be read (types of a newer gputrace, or damage); "
		         "left as it was",
		         (unsigned long long)rs->records_skipped);
		ret = fail(errmsg, errbuf, -EPROTO);
		goto out;
	}
	res->chunks_read = rs->chunks_read;
	res->chunks_skipped = rs->chunks_skipped;
	if (rs->chunks_skipped || res->records_dropped) {
		/* what was lost stays on record in the new file, as gputrace merge records an
		 * input's damage: a damaged_file loss of the first process (docs/format.md) */
		struct gt_rec_loss l = {{GT_REC_LOSS, sizeof(l), first_pid}};
		const struct gt_trace_counts *wc = gt_writer_counts(w);

		l.ts_ns = wc->last_ts_ns ? wc->last_ts_ns : gt_reader_header(r)->info.start_trace_ns;
		l.count = rs->chunks_skipped;
		l.source = GT_LOSS_FILE;
		l.kind = GT_REC_NONE;
		l.bytes = rs->bytes_skipped;
		l.records = rs->chunk_records_skipped;
		l.malformed = res->records_dropped; /* read, but no record this writer takes */
		ret = gt_writer_write(w, &l.hdr);
		if (ret < 0) {
			snprintf(errbuf, sizeof(errbuf), "writing: %s", strerror(-ret));
			fail(errmsg, errbuf, ret);
			goto out;
		}
		res->records++;
	}
	ret = gt_writer_flush(w); /* the last chunks, so that they are counted */
	if (ret < 0) {
		snprintf(errbuf, sizeof(errbuf), "writing: %s", strerror(-ret));
		fail(errmsg, errbuf, ret);
		goto out;
	}
	res->chunks = gt_writer_counts(w)->chunks;
	ret = gt_writer_close(w); /* renames the new file over the old one */
	w = NULL;
	if (ret < 0) {
		snprintf(errbuf, sizeof(errbuf), "writing: %s", strerror(-ret));
		fail(errmsg, errbuf, ret);
		goto out;
	}
	if (stat(path, &st) == 0)
		res->bytes_after = (uint64_t)st.st_size;
	ret = 0;
out:
	gt_writer_discard(w); /* removes the temporary file; NULL once closed */
	gt_reader_close(r);
	return ret;
}
