/* gputrace merge, the output: the merged file's header, its strings, the INPUT records,
 * and a writer thread that encodes, compresses and writes while the merging thread reads
 * (records handed over in batches). Runs in the CLI process. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "merge-int.h"

/* Header strings of the merged file listing the inputs' values: at most this long. */
#define JOIN_MAX 4096u

/* ---- the writer thread ------------------------------------------------------------------ */

/* Write the records of one batch; after an error, only count them as gone. */
static int write_batch(struct gt_writer *w, const uint8_t *p, size_t len)
{
	for (size_t off = 0; off < len;) {
		const struct gt_rec_hdr *h = (const struct gt_rec_hdr *)(p + off);
		int r = gt_writer_write(w, h);

		if (r < 0)
			return r;
		off += h->size;
	}
	return 0;
}

static void *writer_main(void *arg)
{
	struct gt_merge_out *o = arg;

	pthread_mutex_lock(&o->lock);
	for (;;) {
		unsigned k;
		int r = 0;

		/* woken by hand_over's or stop_thread's signal of `filled`; the lock makes the
		 * batch's bytes, written before `full` grew, visible here */
		while (!o->full && !o->done && !o->abort)
			pthread_cond_wait(&o->filled, &o->lock);
		if (!o->full || o->abort)
			break;
		k = o->write;
		/* the batch is ours until `full` drops: the merging thread fills another */
		pthread_mutex_unlock(&o->lock);
		if (!o->error)
			r = write_batch(o->w, o->buf[k], o->len[k]);
		pthread_mutex_lock(&o->lock);
		if (r < 0 && !o->error)
			o->error = r;
		o->len[k] = 0;
		o->write = (k + 1) % GT_MERGE_BATCHES;
		o->full--;
		/* pairs with hand_over's wait: a batch is free again */
		pthread_cond_signal(&o->emptied);
	}
	pthread_mutex_unlock(&o->lock);
	return NULL;
}

/* Queue the batch being filled and wait for a free one. Returns 0 or the writer's error. */
static int hand_over(struct gt_merge_out *o)
{
	int r;

	pthread_mutex_lock(&o->lock);
	o->full++;
	/* pairs with writer_main's wait; then wait for its signal of `emptied` while every
	 * batch is full */
	pthread_cond_signal(&o->filled);
	while (o->full == GT_MERGE_BATCHES && !o->error)
		pthread_cond_wait(&o->emptied, &o->lock);
	o->fill = (o->fill + 1) % GT_MERGE_BATCHES;
	r = o->error;
	pthread_mutex_unlock(&o->lock);
	return r;
}

/* Stop the thread: after what is queued (done) or at once (abort). Returns its error. */
static int stop_thread(struct gt_merge_out *o, bool abort)
{
	int r;

	if (!o->threaded)
		return 0;
	pthread_mutex_lock(&o->lock);
	if (!abort && o->len[o->fill]) {
		o->full++;
		o->fill = (o->fill + 1) % GT_MERGE_BATCHES;
	}
	o->done = true;
	o->abort = abort;
	pthread_cond_signal(&o->filled);
	pthread_mutex_unlock(&o->lock);
	pthread_join(o->thread, NULL);
	o->threaded = false;
	r = o->error;
	pthread_mutex_destroy(&o->lock);
	pthread_cond_destroy(&o->filled);
	pthread_cond_destroy(&o->emptied);
	for (unsigned k = 0; k < GT_MERGE_BATCHES; k++) {
		free(o->buf[k]);
		o->buf[k] = NULL;
	}
	return r;
}

/* Start the writer thread; on any failure the merging thread writes itself. */
static void start_thread(struct gt_merge_out *o)
{
	unsigned made = 0; /* of the lock and the two conditions, in that order */

	memset(o->len, 0, sizeof(o->len));
	o->fill = o->write = o->full = 0;
	o->done = o->abort = false;
	o->error = 0;
	for (unsigned k = 0; k < GT_MERGE_BATCHES; k++) {
		/* a batch is handed over before the record that would not fit */
		o->buf[k] = malloc(GT_MERGE_BATCH_BYTES);
		if (!o->buf[k])
			goto out;
	}
	if (pthread_mutex_init(&o->lock, NULL) != 0)
		goto out;
	made++;
	if (pthread_cond_init(&o->filled, NULL) != 0)
		goto out;
	made++;
	if (pthread_cond_init(&o->emptied, NULL) != 0)
		goto out;
	made++;
	if (pthread_create(&o->thread, NULL, writer_main, o) != 0)
		goto out;
	o->threaded = true;
	return;
out:
	if (made > 2)
		pthread_cond_destroy(&o->emptied);
	if (made > 1)
		pthread_cond_destroy(&o->filled);
	if (made > 0)
		pthread_mutex_destroy(&o->lock);
	for (unsigned k = 0; k < GT_MERGE_BATCHES; k++) {
		free(o->buf[k]);
		o->buf[k] = NULL;
	}
}

int gt_merge_put(struct gt_merge *m, const struct gt_rec_hdr *rec)
{
	struct gt_merge_out *o = &m->out;
	size_t *len;

	if (!o->threaded)
		return gt_writer_write(o->w, rec);
	len = &o->len[o->fill];
	if (*len + rec->size > GT_MERGE_BATCH_BYTES) {
		int r = hand_over(o);

		if (r < 0)
			return r;
		len = &o->len[o->fill];
	}
	memcpy(o->buf[o->fill] + *len, rec, rec->size);
	*len += rec->size;
	return 0;
}

int gt_merge_reserve(struct gt_merge *m, size_t size, union gt_record **ret)
{
	struct gt_merge_out *o = &m->out;

	if (!o->threaded) {
		*ret = m->scratch;
		return 0;
	}
	if (o->len[o->fill] + size > GT_MERGE_BATCH_BYTES) {
		int r = hand_over(o);

		if (r < 0)
			return r;
	}
	*ret = (union gt_record *)(o->buf[o->fill] + o->len[o->fill]);
	return 0;
}

int gt_merge_commit(struct gt_merge *m, const struct gt_rec_hdr *rec)
{
	struct gt_merge_out *o = &m->out;

	if (!o->threaded)
		return gt_writer_write(o->w, rec);
	o->len[o->fill] += rec->size;
	return 0;
}

int gt_merge_put_string(struct gt_merge *m, uint32_t pid, uint32_t id, const char *s, size_t len)
{
	struct gt_merge_out *o = &m->out;
	struct gt_rec_string *r;
	size_t size, *used;

	if (len > GT_STRING_MAX)
		len = GT_STRING_MAX;
	if (!o->threaded)
		return gt_writer_string(o->w, pid, id, s, len);
	size = gt_record_align(sizeof(*r) + len);
	used = &o->len[o->fill];
	if (*used + size > GT_MERGE_BATCH_BYTES) {
		int ret = hand_over(o);

		if (ret < 0)
			return ret;
		used = &o->len[o->fill];
	}
	r = (struct gt_rec_string *)(o->buf[o->fill] + *used);
	memset(r, 0, size);
	r->hdr.type = GT_REC_STRING;
	r->hdr.size = (uint16_t)size;
	r->hdr.pid = pid;
	r->id = id;
	r->len = (uint32_t)len;
	memcpy(r->str, s, len);
	*used += size;
	return 0;
}

int gt_merge_out_string(struct gt_merge *m, uint32_t pid, const char *s, size_t len, uint32_t *id)
{
	int r;

	if (len > GT_STRING_MAX)
		len = GT_STRING_MAX;
	r = gt_strtab_intern(m->strs, s, len, id);
	if (r == 1 && *id >= GT_MERGE_PLACEHOLDER_BASE)
		return -E2BIG;
	if (r == 1)
		r = gt_merge_put_string(m, pid, *id, s, len);
	return r < 0 ? r : 0;
}

/* ---- the file ----------------------------------------------------------------------------- */

int gt_merge_out_inputs(struct gt_merge *m)
{
	for (size_t i = 0; i < m->n; i++) {
		struct input *in = &m->in[i];
		struct gt_rec_input o = {{GT_REC_INPUT, sizeof(o), 0}};
		const char *s[7] = {in->pub.path,           in->info.hostname,
		                    in->info.cmdline,       in->info.tool_version,
		                    in->info.cuda_version,  in->info.cupti_version,
		                    in->info.driver_version};
		uint32_t *ids[7] = {&o.path_id,          &o.hostname_id,     &o.cmdline_id,
		                    &o.tool_version_id,  &o.cuda_version_id, &o.cupti_version_id,
		                    &o.driver_version_id};
		int r;

		for (unsigned k = 0; k < 7; k++) {
			if (!s[k][0])
				continue;
			r = gt_merge_out_string(m, 0, s[k], strlen(s[k]), ids[k]);
			if (r < 0)
				return r;
		}
		o.start_realtime_ns = in->info.start_realtime_ns;
		o.start_trace_ns = in->info.start_trace_ns;
		o.offset_ns = in->pub.offset_ns;
		o.records = in->pub.records;
		o.chunks_skipped = in->pub.chunks_skipped;
		o.bytes_skipped = in->pub.bytes_skipped;
		o.records_skipped = in->pub.records_skipped;
		o.index = in->index;
		o.version = in->pub.version;
		o.clock_id = in->pub.clock_id;
		o.align = in->pub.align;
		o.flags = in->pub.recovered ? GT_INPUT_RECOVERED : 0;
		r = gt_merge_put(m, &o.hdr);
		if (r < 0)
			return r;
	}
	return 0;
}

/* The distinct non-empty values of one header string over the inputs, comma-separated, in
 * the order given; cut at JOIN_MAX bytes. *ret is malloc'd. */
static int join_distinct(const struct gt_merge *m, size_t field, char **ret)
{
	char *buf = malloc(JOIN_MAX + 32), *p = buf;
	size_t more = 0;

	if (!buf)
		return -ENOMEM;
	*p = '\0';
	for (size_t i = 0; i < m->n; i++) {
		const char *v = *(const char *const *)((const char *)&m->in[i].info + field);
		size_t len = strlen(v);
		bool dup = false;

		if (!len)
			continue;
		for (size_t j = 0; j < i && !dup; j++)
			dup = strcmp(*(const char *const *)((const char *)&m->in[j].info + field),
			             v) == 0;
		if (dup)
			continue;
		if ((size_t)(p - buf) + len + 2 > JOIN_MAX) {
			more++;
			continue;
		}
		if (p != buf)
			*p++ = ',';
		memcpy(p, v, len);
		p += len;
		*p = '\0';
	}
	if (more)
		snprintf(p, 32, ",+%zu more", more);
	*ret = buf;
	return 0;
}

/* The merged header: the reference input's clock and anchor (moved to the earliest start),
 * the inputs' hosts and versions, the merge's own command line. */
int gt_merge_out_open(struct gt_merge *m, const char *path)
{
	static const size_t fields[] = {
	        offsetof(struct gt_trace_info, hostname),
	        offsetof(struct gt_trace_info, cuda_version),
	        offsetof(struct gt_trace_info, cupti_version),
	        offsetof(struct gt_trace_info, driver_version),
	};
	const struct input *ref = &m->in[m->wall_ref];
	struct gt_trace_info info = {0};
	struct gt_writer_options wo;
	char *joined[4] = {NULL};
	uint64_t first = ref->info.start_realtime_ns;
	int r = 0;

	for (unsigned k = 0; k < 4 && r == 0; k++)
		r = join_distinct(m, fields[k], &joined[k]);
	if (r < 0)
		goto out;
	for (size_t i = 0; i < m->n; i++)
		if (m->in[i].info.start_realtime_ns && m->in[i].info.start_realtime_ns < first)
			first = m->in[i].info.start_realtime_ns;
	info.clock_id = ref->info.clock_id;
	info.start_realtime_ns = ref->info.start_realtime_ns;
	info.start_trace_ns = ref->info.start_trace_ns;
	/* the same line realtime = trace + (ref's difference), at the earliest start */
	if (first < ref->info.start_realtime_ns &&
	    ref->info.start_realtime_ns - first < ref->info.start_trace_ns) {
		info.start_trace_ns -= ref->info.start_realtime_ns - first;
		info.start_realtime_ns = first;
	}
	info.hostname = joined[0];
	info.cmdline = m->opts.cmdline ? m->opts.cmdline : "";
	info.tool_version = GT_VERSION;
	info.cuda_version = joined[1];
	info.cupti_version = joined[2];
	info.driver_version = joined[3];
	wo = m->opts.writer;
	if (!wo.compress_threads)
		wo.compress_threads = gt_merge_compress_threads(m->opts.threads);
	r = gt_writer_open(path, &info, &wo, &m->out.w);
	if (r == 0 && m->opts.threads > 1)
		start_thread(&m->out);
out:
	for (unsigned k = 0; k < 4; k++)
		free(joined[k]);
	return r;
}

int gt_merge_out_close(struct gt_merge *m)
{
	int r = stop_thread(&m->out, false);

	if (r == 0)
		r = gt_writer_flush(m->out.w);
	if (r < 0) {
		gt_merge_out_discard(m);
		return r;
	}
	m->counts = *gt_writer_counts(m->out.w);
	r = gt_writer_close(m->out.w);
	m->out.w = NULL;
	return r;
}

void gt_merge_out_discard(struct gt_merge *m)
{
	stop_thread(&m->out, true);
	gt_writer_discard(m->out.w);
	m->out.w = NULL;
}
