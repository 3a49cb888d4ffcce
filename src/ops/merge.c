/* gputrace merge: a streaming k-way merge of several .gtrace files into one, with their
 * clocks put on one timeline (merge-align.c), pids kept apart across hosts, strings merged,
 * losses and each input's header kept; the output side is merge-out.c. Runs in the CLI
 * process. docs/merge.md explains the choices. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "hash.h"
#include "merge-int.h"

int gt_merge_fail(struct gt_merge_error *err, size_t input, const char *msg, int ret)
{
	if (err) {
		err->input = input;
		err->other = SIZE_MAX;
		err->msg = msg;
	}
	return ret;
}

const char *gt_merge_align_name(unsigned align)
{
	static const char *const names[GT_ALIGN_MAX] = {"wall clock", "nccl", "none"};

	return align < GT_ALIGN_MAX ? names[align] : "unknown";
}

size_t gt_merge_count(const struct gt_merge *m)
{
	return m ? m->n : 0;
}

const struct gt_merge_input *gt_merge_input(const struct gt_merge *m, size_t i)
{
	return m && i < m->n ? &m->in[i].pub : NULL;
}

size_t gt_merge_nccl_reference(const struct gt_merge *m)
{
	return m ? m->nccl_ref : SIZE_MAX;
}

const struct gt_trace_counts *gt_merge_counts(const struct gt_merge *m)
{
	return m && m->written ? &m->counts : NULL;
}

/* ---- opening --------------------------------------------------------------------------- */

/* Copy the header's strings (they live in the reader, which closes before the merge ends). */
static int copy_header(struct input *in)
{
	const struct gt_trace_header *h = gt_reader_header(in->r);
	const char *src[6] = {h->info.hostname,     h->info.cmdline,       h->info.tool_version,
	                      h->info.cuda_version, h->info.cupti_version, h->info.driver_version};
	const char **dst[6] = {&in->info.hostname,      &in->info.cmdline,
	                       &in->info.tool_version,  &in->info.cuda_version,
	                       &in->info.cupti_version, &in->info.driver_version};
	size_t len = 0;
	char *p;

	for (unsigned i = 0; i < 6; i++)
		len += (src[i] ? strlen(src[i]) : 0) + 1;
	in->strs = malloc(len);
	if (!in->strs)
		return -ENOMEM;
	p = in->strs;
	in->ident = GT_HASH_FNV_OFFSET;
	for (unsigned i = 0; i < 6; i++) {
		size_t n = src[i] ? strlen(src[i]) : 0;

		memcpy(p, src[i] ? src[i] : "", n);
		p[n] = '\0';
		*dst[i] = p;
		in->ident = gt_hash_fnv1a(in->ident, p, n + 1);
		p += n + 1;
	}
	in->info.clock_id = h->info.clock_id;
	in->info.start_realtime_ns = h->info.start_realtime_ns;
	in->info.start_trace_ns = h->info.start_trace_ns;
	in->ident = gt_hash_fnv1a(in->ident, &h->version, sizeof(h->version));
	in->ident = gt_hash_fnv1a(in->ident, &h->info.clock_id, sizeof(h->info.clock_id));
	in->ident = gt_hash_fnv1a(in->ident, &h->info.start_realtime_ns, 8);
	in->ident = gt_hash_fnv1a(in->ident, &h->info.start_trace_ns, 8);
	in->pub.version = h->version;
	in->pub.clock_id = h->info.clock_id;
	in->pub.start_realtime_ns = h->info.start_realtime_ns;
	in->pub.start_trace_ns = h->info.start_trace_ns;
	in->pub.hostname = in->info.hostname;
	in->pub.cmdline = in->info.cmdline;
	return 0;
}

/* The rewrite tables, from record.c's field descriptions. */
static int build_xforms(struct gt_merge *m)
{
	for (unsigned t = 1; t < GT_REC_MAX; t++) {
		const struct gt_record_desc *d = gt_record_desc(t);
		struct xform *x = &m->xf[t];

		if (!d)
			continue; /* a value left unused: the reader skips such records */
		x->size = d->size;
		for (unsigned f = 0; f < d->nfields; f++) {
			const struct gt_field *fd = &d->fields[f];

			if (fd->flags & GT_FIELD_STRING) {
				if (fd->width != 4 || x->nstr == GT_MERGE_XFORM_MAX)
					return -EINVAL;
				x->str_off[x->nstr++] = fd->offset;
			}
			if (fd->flags & GT_FIELD_TIME) {
				if (fd->width != 8 || x->ntime == GT_MERGE_XFORM_MAX)
					return -EINVAL;
				x->time_off[x->ntime++] = fd->offset;
			}
		}
	}
	return 0;
}

int gt_merge_open(const char *const *paths, size_t n, const struct gt_merge_options *opts,
                  struct gt_merge **ret, struct gt_merge_error *err)
{
	struct gt_merge *m;
	int r;

	if (!paths || !n || !ret || (opts && opts->align >= GT_MERGE_ALIGN_MODE_MAX))
		return gt_merge_fail(err, SIZE_MAX, "invalid argument", -EINVAL);
	m = calloc(1, sizeof(*m));
	if (!m)
		return gt_merge_fail(err, SIZE_MAX, "out of memory", -ENOMEM);
	if (opts)
		m->opts = *opts;
	m->nccl_ref = SIZE_MAX;
	m->in = calloc(n, sizeof(*m->in));
	m->scratch = calloc(1, sizeof(*m->scratch));
	if (!m->in || !m->scratch) {
		r = gt_merge_fail(err, SIZE_MAX, "out of memory", -ENOMEM);
		goto out;
	}
	r = build_xforms(m);
	if (r < 0) {
		gt_merge_fail(err, SIZE_MAX,
		              "internal error: a record table does not fit the merge", r);
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		struct input *in = &m->in[i];
		const char *msg = NULL;
		struct stat st;

		m->n = i + 1; /* what gt_merge_free closes */
		in->pub.path = paths[i];
		in->index = (uint32_t)(i + 1);
		if (stat(paths[i], &st) < 0) {
			r = -errno;
			gt_merge_fail(err, i, strerror(-r), r);
			goto out;
		}
		r = gt_reader_open(paths[i], &in->r, &msg);
		if (r < 0) {
			gt_merge_fail(err, i, msg ? msg : strerror(-r), r);
			goto out;
		}
		in->dev = st.st_dev;
		in->ino = st.st_ino;
		in->size = (uint64_t)st.st_size;
		r = copy_header(in);
		if (r < 0) {
			gt_merge_fail(err, i, "out of memory", r);
			goto out;
		}
		for (size_t j = 0; j < i; j++) {
			const struct input *o = &m->in[j];

			if ((o->dev == in->dev && o->ino == in->ino) ||
			    (o->size == in->size && o->ident == in->ident)) {
				r = gt_merge_fail(
				        err, i,
				        o->dev == in->dev && o->ino == in->ino
				                ? "the same file"
				                : "a copy of it (the same header and size)",
				        -EEXIST);
				if (err)
					err->other = j;
				goto out;
			}
		}
	}
	*ret = m;
	return 0;
out:
	gt_merge_free(m);
	return r;
}

void gt_merge_free(struct gt_merge *m)
{
	if (!m)
		return;
	/* no thread may read an input past this point */
	gt_merge_read_stop(m);
	for (size_t i = 0; m->in && i < m->n; i++) {
		struct input *in = &m->in[i];

		gt_reader_close(in->r);
		free(in->strs);
		u32map_fini(&in->pids);
		u32map_fini(&in->strs_map);
		free(in->dense);
		u32map_fini(&in->nested);
	}
	free(m->in);
	gt_merge_out_discard(m);
	gt_strtab_free(m->strs);
	u32map_fini(&m->undefined);
	u32map_fini(&m->used_pids);
	free(m->heap);
	free(m->scratch);
	free(m);
}

/* ---- rewriting a record ---------------------------------------------------------------- */

static int write_origin(struct gt_merge *m, struct input *in, uint32_t out_pid, uint32_t pid)
{
	struct gt_rec_origin o = {{GT_REC_ORIGIN, sizeof(o), out_pid}};
	int r;

	if (!in->host_id && in->info.hostname[0]) {
		r = gt_merge_out_string(m, 0, in->info.hostname, strlen(in->info.hostname),
		                        &in->host_id);
		if (r < 0)
			return r;
	}
	o.input = in->index;
	o.orig_pid = pid;
	o.host_id = in->host_id;
	return gt_merge_put(m, &o.hdr);
}

/* The merged file's pid for an input's: the same unless another input used it already.
 * A pid seen for the first time gets its ORIGIN record first, unless the record at hand is
 * one (a merged input's), which then stands for it. */
static int map_pid(struct gt_merge *m, struct input *in, uint32_t pid, uint32_t *out,
                   bool is_origin)
{
	uint32_t v;
	int r;

	if (pid == 0) { /* no process: the merge's own records, and nothing to keep apart */
		*out = 0;
		return 0;
	}
	if (pid == in->last_pid) {
		*out = in->last_out;
		return 0;
	}
	if (!u32map_get(&in->pids, pid, &v)) {
		v = pid;
		while (u32map_get(&m->used_pids, v, NULL)) {
			if (m->next_pid == 0)
				return -EOVERFLOW;
			v = m->next_pid++;
		}
		r = u32map_put(&m->used_pids, v, 1);
		if (r == 0)
			r = u32map_put(&in->pids, pid, v);
		if (r < 0)
			return r;
		in->pub.processes++;
		if (v != pid)
			in->pub.renamed++;
		if (!in->first_pid)
			in->first_pid = v;
		if (!is_origin) {
			r = write_origin(m, in, v, pid);
			if (r < 0)
				return r;
		}
	}
	in->last_pid = pid;
	in->last_out = v;
	*out = v;
	return 0;
}

/* An input's string id -> the merged file's, as far as known. */
static inline bool string_get(const struct input *in, uint32_t id, uint32_t *out)
{
	if (id < in->ndense) {
		*out = in->dense[id];
		return *out != 0;
	}
	return id >= GT_MERGE_DENSE_IDS && u32map_get(&in->strs_map, id, out);
}

static int string_put(struct input *in, uint32_t id, uint32_t v)
{
	if (id >= GT_MERGE_DENSE_IDS)
		return u32map_put(&in->strs_map, id, v);
	if (gt_strtab_dense_reserve(&in->dense, &in->ndense, id, 64) < 0)
		return -ENOMEM;
	in->dense[id] = v;
	return 0;
}

/* The merged file's id for an input's string id. An id the input never defined (yet) gets
 * a placeholder id of its own, defined if the input's STRING record comes later. */
static int map_string(struct gt_merge *m, struct input *in, uint32_t id, uint32_t *out)
{
	uint32_t v;
	int r;

	if (id == GT_STRING_NONE) {
		*out = GT_STRING_NONE;
		return 0;
	}
	if (string_get(in, id, out))
		return 0;
	if (m->next_placeholder == 0)
		return -EOVERFLOW;
	v = m->next_placeholder++;
	r = string_put(in, id, v);
	if (r == 0)
		r = u32map_put(&m->undefined, v, 1);
	if (r == 0)
		*out = v;
	return r;
}

static int merge_string(struct gt_merge *m, struct input *in, const struct gt_rec_string *s)
{
	uint32_t pid, v, undef = 0;
	int r;

	r = map_pid(m, in, s->hdr.pid, &pid, false);
	if (r < 0)
		return r;
	if (string_get(in, s->id, &v)) {
		/* the first definition wins, as in the reader; a placeholder gets this one */
		if (!u32map_get(&m->undefined, v, &undef) || !undef)
			return 0;
		r = u32map_put(&m->undefined, v, 0);
		return r < 0 ? r : gt_merge_put_string(m, pid, v, s->str, s->len);
	}
	r = gt_merge_out_string(m, pid, s->str, s->len, &v);
	return r < 0 ? r : string_put(in, s->id, v);
}

/* The merged file's index for an INPUT index of a merged input. */
static int map_nested(struct gt_merge *m, struct input *in, uint32_t index, uint32_t *out)
{
	if (u32map_get(&in->nested, index, out))
		return 0;
	if (m->next_index == UINT32_MAX)
		return -EOVERFLOW;
	*out = m->next_index++;
	return u32map_put(&in->nested, index, *out);
}

static inline uint64_t shift(uint64_t v, int64_t off)
{
	if (!v || !off)
		return v;
	if (off < 0 && v <= (uint64_t)0 - (uint64_t)off)
		return 1; /* before the merged clock's origin: the earliest time there is */
	return v + (uint64_t)off;
}

/* The rewrite of an ordinary record's pid and string ids: the last pid and the dense ids
 * already known take no call. */
static inline int pid_of(struct gt_merge *m, struct input *in, uint32_t pid, uint32_t *out)
{
	if (pid == in->last_pid && pid) {
		*out = in->last_out;
		return 0;
	}
	return map_pid(m, in, pid, out, false);
}

static inline int string_of(struct gt_merge *m, struct input *in, uint32_t *id)
{
	if (*id < in->ndense && in->dense[*id]) {
		*id = in->dense[*id];
		return 0;
	}
	return map_string(m, in, *id, id);
}

static int emit(struct gt_merge *m, struct input *in, const union gt_record *rec)
{
	unsigned type = rec->hdr.type;
	const struct xform *x = &m->xf[type];
	union gt_record *o;
	uint32_t pid = 0;
	int r = 0;

	in->pub.records++;
	in->pub.records_by_type[type]++;
	if (type == GT_REC_STRING)
		return merge_string(m, in, &rec->string);
	/* first what may write a record of its own (a new process's ORIGIN), then the record
	 * goes straight into the output's batch */
	if (type != GT_REC_ORIGIN && type != GT_REC_INPUT) {
		r = pid_of(m, in, rec->hdr.pid, &pid);
		if (r < 0)
			return r;
	}
	r = gt_merge_reserve(m, x->size, &o);
	if (r < 0)
		return r;
	memcpy(o, rec, x->size);
	o->hdr.pid = pid;
	if (type == GT_REC_ORIGIN) {
		/* a merged input's: it names the process's first input, and comes first */
		bool seen = u32map_get(&in->pids, rec->hdr.pid, NULL);

		r = map_pid(m, in, rec->hdr.pid, &o->hdr.pid, !seen);
		if (r == 0)
			r = map_nested(m, in, rec->origin.input, &o->origin.input);
	} else if (type == GT_REC_INPUT) {
		/* an input of a merged input: its parent is that input, or one of its own */
		r = map_nested(m, in, rec->input.index, &o->input.index);
		o->input.parent = in->index;
		if (r == 0 && rec->input.parent)
			r = map_nested(m, in, rec->input.parent, &o->input.parent);
		o->input.offset_ns += in->pub.offset_ns;
	}
	for (unsigned f = 0; r == 0 && f < x->nstr; f++)
		r = string_of(m, in, (uint32_t *)((uint8_t *)o + x->str_off[f]));
	if (r < 0)
		return r;
	if (in->pub.offset_ns) {
		for (unsigned f = 0; f < x->ntime; f++) {
			uint64_t *t = (uint64_t *)((uint8_t *)o + x->time_off[f]);

			*t = shift(*t, in->pub.offset_ns);
		}
	}
	return gt_merge_commit(m, &o->hdr);
}

/* ---- the k-way merge ------------------------------------------------------------------- */

static inline bool before(const struct gt_merge *m, uint32_t a, uint32_t b)
{
	return m->in[a].key < m->in[b].key || (m->in[a].key == m->in[b].key && a < b);
}

static void sift_down(struct gt_merge *m, size_t i)
{
	uint32_t *h = m->heap;

	for (;;) {
		size_t c = 2 * i + 1;
		uint32_t t;

		if (c >= m->nheap)
			return;
		if (c + 1 < m->nheap && before(m, h[c + 1], h[c]))
			c++;
		if (!before(m, h[c], h[i]))
			return;
		t = h[i];
		h[i] = h[c];
		h[c] = t;
		i = c;
	}
}

/* The merge key of the input's next record: its first timestamp on the merged timeline; a
 * record without one goes with the record before it. */
static void set_key(const struct gt_merge *m, struct input *in)
{
	const struct xform *x = &m->xf[in->head->hdr.type];
	uint64_t t;

	if (!x->ntime)
		return;
	memcpy(&t, (const uint8_t *)in->head + x->time_off[0], sizeof(t));
	if (!t)
		return;
	in->key = shift(t, in->pub.offset_ns);
	if (in->key > in->last_ts_ns)
		in->last_ts_ns = in->key;
}

/* What reading the input cost: its damage becomes a loss of that input's first process. */
static int finish_input(struct gt_merge *m, struct input *in)
{
	/* read ahead, the reader was closed at the end already */
	const struct gt_reader_status *st =
	        in->ahead ? &in->ahead->status : gt_reader_status(in->r);
	int r = 0;

	in->pub.chunks_skipped = st->chunks_skipped;
	in->pub.bytes_skipped = st->bytes_skipped;
	in->pub.records_skipped = st->records_skipped;
	in->pub.recovered = st->recovered;
	if (st->chunks_skipped) {
		struct gt_rec_loss l = {{GT_REC_LOSS, sizeof(l), in->first_pid}};

		l.ts_ns = in->last_ts_ns;
		l.count = st->chunks_skipped;
		l.source = GT_LOSS_FILE;
		l.kind = GT_REC_NONE;
		l.bytes = st->bytes_skipped;
		l.records = st->chunk_records_skipped;
		l.malformed = st->records_skipped;
		r = gt_merge_put(m, &l.hdr);
	}
	gt_merge_read_done(in->ahead);
	gt_reader_close(in->r);
	in->r = NULL;
	in->head = NULL;
	return r;
}

/* Next record of the input into its head; closes it at its end. Returns 1, 0 (done) or
 * -errno. */
static int advance(struct gt_merge *m, struct input *in)
{
	int r = in->ahead ? gt_merge_read_next(m, in->ahead, &in->head)
	                  : gt_reader_next(in->r, &in->head);

	if (r == 1) {
		set_key(m, in);
		return 1;
	}
	if (r < 0)
		return r;
	r = finish_input(m, in);
	return r < 0 ? r : 0;
}

int gt_merge_write(struct gt_merge *m, const char *path, struct gt_merge_error *err)
{
	size_t bad = SIZE_MAX; /* the input a read failed on */
	int r;

	if (!m || !path || m->written || m->out.w)
		return gt_merge_fail(err, SIZE_MAX, "invalid argument", -EINVAL);
	r = gt_merge_align(m, err);
	if (r < 0)
		return r;
	m->next_placeholder = GT_MERGE_PLACEHOLDER_BASE;
	m->next_pid = GT_MERGE_PID_BASE;
	m->next_index = (uint32_t)m->n + 1;
	r = gt_strtab_new(&m->strs);
	if (r == 0) {
		m->heap = malloc(m->n * sizeof(*m->heap));
		if (!m->heap)
			r = -ENOMEM;
	}
	if (r < 0)
		return gt_merge_fail(err, SIZE_MAX, "out of memory", r);
	r = gt_merge_out_open(m, path);
	if (r < 0)
		return gt_merge_fail(err, SIZE_MAX, strerror(-r), r);
	/* without the threads (none could start) the merging thread reads: the same output */
	if (gt_merge_read_threads(m->opts.threads))
		gt_merge_read_start(m, gt_merge_read_threads(m->opts.threads));
	/* the first record of every input, then always the input whose next record is earliest */
	for (size_t i = 0; i < m->n; i++) {
		r = advance(m, &m->in[i]);
		if (r < 0) {
			bad = m->in[i].r ? i : SIZE_MAX;
			goto out;
		}
		if (r == 1)
			m->heap[m->nheap++] = (uint32_t)i;
	}
	for (size_t i = m->nheap / 2; i-- > 0;)
		sift_down(m, i);
	while (m->nheap) {
		uint32_t top = m->heap[0], next = UINT32_MAX;
		struct input *in = &m->in[top];
		uint64_t bound = UINT64_MAX;

		/* the input at the top goes on while its records come before the next input's
		 * (and up to slack_ns after): runs, not a heap operation per record */
		if (m->nheap > 1)
			next = m->heap[m->nheap > 2 && before(m, m->heap[2], m->heap[1]) ? 2 : 1];
		if (next != UINT32_MAX)
			bound = m->in[next].key > UINT64_MAX - m->opts.slack_ns
			                ? UINT64_MAX
			                : m->in[next].key + m->opts.slack_ns;
		do {
			r = emit(m, in, in->head);
			if (r < 0)
				goto out;
			r = advance(m, in);
			if (r < 0) {
				bad = in->r ? top : SIZE_MAX;
				goto out;
			}
		} while (r == 1 && (in->key < bound || (in->key == bound && top < next)));
		if (r == 0)
			m->heap[0] = m->heap[--m->nheap];
		sift_down(m, 0);
	}
	gt_merge_read_stop(m);
	r = gt_merge_out_inputs(m);
	if (r == 0)
		r = gt_merge_out_close(m);
	if (r < 0)
		goto out;
	m->written = true;
	return 0;
out:
	/* the temporary file goes; PATH was never touched */
	gt_merge_read_stop(m);
	gt_merge_out_discard(m);
	if (r == -ENOMEM)
		return gt_merge_fail(err, SIZE_MAX, "out of memory", r);
	return gt_merge_fail(err, bad, strerror(-r), r);
}
