/* gputrace merge: a streaming k-way merge of several .gtrace files into one, with their
 * clocks put on one timeline (the header's wall-clock anchors, optionally corrected by the
 * ends of NCCL collectives), pids kept apart across hosts, strings merged, losses and each
 * input's header kept. Runs in the CLI process. docs/merge.md explains the choices. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "gputrace/merge.h"
#include "gputrace/strtab.h"

/* Output string ids for names an input used but never defined: from here up, far above the
 * dense ids of the merged string table, so the two never meet. */
#define PLACEHOLDER_BASE 0xc0000000u
/* Header strings of the merged file listing the inputs' values: at most this long. */
#define JOIN_MAX 4096u
/* Fields of one record type that a merge rewrites. */
#define XFORM_MAX 12u

/* ---- a small u32 -> u32 hash map (key 0 is never stored) ------------------------------ */

struct u32map {
	uint32_t *keys; /* 0: empty slot; owned */
	uint32_t *vals; /* owned */
	size_t mask;    /* capacity - 1 */
	size_t count;
};

static inline size_t u32_hash(uint32_t k, size_t mask)
{
	return (size_t)(((uint64_t)k * 0x9e3779b97f4a7c15ull) >> 32) & mask;
}

static bool map_get(const struct u32map *m, uint32_t k, uint32_t *v)
{
	if (!m->keys)
		return false;
	for (size_t i = u32_hash(k, m->mask); m->keys[i]; i = (i + 1) & m->mask) {
		if (m->keys[i] == k) {
			if (v)
				*v = m->vals[i];
			return true;
		}
	}
	return false;
}

static int map_grow(struct u32map *m)
{
	size_t cap = m->keys ? (m->mask + 1) * 2 : 16;
	uint32_t *keys = calloc(cap, sizeof(*keys)), *vals = calloc(cap, sizeof(*vals));

	if (!keys || !vals) {
		free(keys);
		free(vals);
		return -ENOMEM;
	}
	for (size_t i = 0; m->keys && i <= m->mask; i++) {
		size_t j;

		if (!m->keys[i])
			continue;
		for (j = u32_hash(m->keys[i], cap - 1); keys[j]; j = (j + 1) & (cap - 1))
			;
		keys[j] = m->keys[i];
		vals[j] = m->vals[i];
	}
	free(m->keys);
	free(m->vals);
	m->keys = keys;
	m->vals = vals;
	m->mask = cap - 1;
	return 0;
}

/* Insert or replace. Returns 0 or -ENOMEM. */
static int map_put(struct u32map *m, uint32_t k, uint32_t v)
{
	size_t i;

	if (!m->keys || (m->count + 1) * 2 > m->mask + 1) {
		int r = map_grow(m);

		if (r < 0)
			return r;
	}
	for (i = u32_hash(k, m->mask); m->keys[i]; i = (i + 1) & m->mask) {
		if (m->keys[i] == k) {
			m->vals[i] = v;
			return 0;
		}
	}
	m->keys[i] = k;
	m->vals[i] = v;
	m->count++;
	return 0;
}

static void map_fini(struct u32map *m)
{
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}

/* ---- state ----------------------------------------------------------------------------- */

/* One NCCL collective kernel seen while aligning. */
struct coll {
	uint32_t key; /* its name in gt_merge.coll_names */
	uint32_t pid;
	uint64_t end_ns; /* on the input's own clock */
};

struct input {
	struct gt_merge_input pub;
	struct gt_reader *r; /* open until its last record was merged; owned */
	char *strs;          /* pub's and info's strings; owned */
	struct gt_trace_info info;
	dev_t dev;
	ino_t ino;
	uint64_t size;  /* bytes of the file */
	uint64_t ident; /* hash of its header: a copy of a file has the same */

	/* merging */
	const union gt_record *head; /* next record, owned by r; NULL when done */
	uint64_t key;                /* head's time on the merged timeline */
	uint64_t last_ts_ns;         /* largest key so far */
	uint32_t index;              /* 1-based, as in its INPUT record */
	uint32_t host_id;            /* output string id of its hostname; 0 before first use */
	struct u32map pids;          /* its pid -> the merged file's */
	uint32_t last_pid, last_out; /* the last lookup of pids (last_pid 0: none) */
	uint32_t first_pid;          /* the merged pid of its first process */
	struct u32map strs_map;      /* its string id -> the merged file's */
	struct u32map nested;        /* a merged input's INPUT indexes -> the merged file's */
};

/* What a merge rewrites in a record of one type. */
struct xform {
	uint16_t size;
	uint8_t nstr, ntime;
	uint16_t str_off[XFORM_MAX];  /* 4-byte string ids */
	uint16_t time_off[XFORM_MAX]; /* 8-byte trace-clock times */
};

struct gt_merge {
	struct input *in; /* owned */
	size_t n;
	struct gt_merge_options opts;
	bool aligned;
	size_t wall_ref; /* first input with a wall-clock anchor (or 0) */
	size_t nccl_ref; /* SIZE_MAX: none */
	struct xform xf[GT_REC_MAX];
	char errbuf[160];

	/* writing */
	struct gt_writer *w;
	struct gt_strtab *strs;  /* the merged file's strings: dense ids */
	struct u32map undefined; /* placeholder ids not yet defined -> 1 */
	uint32_t next_placeholder;
	struct u32map used_pids; /* pids of the merged file -> 1 */
	uint32_t next_pid;
	uint32_t next_index; /* for the INPUT records of merged inputs */
	uint32_t *heap;      /* input indexes, smallest key first */
	size_t nheap;
	union gt_record *scratch; /* the record being rewritten; owned */
	struct gt_trace_counts counts;
	bool written;
};

static int fail(struct gt_merge_error *err, size_t input, const char *msg, int ret)
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

static uint64_t hash_bytes(uint64_t h, const void *p, size_t len)
{
	const unsigned char *s = p;

	for (size_t i = 0; i < len; i++)
		h = (h ^ s[i]) * 0x100000001b3ull;
	return h;
}

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
	in->ident = 0xcbf29ce484222325ull;
	for (unsigned i = 0; i < 6; i++) {
		size_t n = src[i] ? strlen(src[i]) : 0;

		memcpy(p, src[i] ? src[i] : "", n);
		p[n] = '\0';
		*dst[i] = p;
		in->ident = hash_bytes(in->ident, p, n + 1);
		p += n + 1;
	}
	in->info.clock_id = h->info.clock_id;
	in->info.start_realtime_ns = h->info.start_realtime_ns;
	in->info.start_trace_ns = h->info.start_trace_ns;
	in->ident = hash_bytes(in->ident, &h->version, sizeof(h->version));
	in->ident = hash_bytes(in->ident, &h->info.clock_id, sizeof(h->info.clock_id));
	in->ident = hash_bytes(in->ident, &h->info.start_realtime_ns, 8);
	in->ident = hash_bytes(in->ident, &h->info.start_trace_ns, 8);
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

		x->size = d->size;
		for (unsigned f = 0; f < d->nfields; f++) {
			const struct gt_field *fd = &d->fields[f];

			if (fd->flags & GT_FIELD_STRING) {
				if (fd->width != 4 || x->nstr == XFORM_MAX)
					return -EINVAL;
				x->str_off[x->nstr++] = fd->offset;
			}
			if (fd->flags & GT_FIELD_TIME) {
				if (fd->width != 8 || x->ntime == XFORM_MAX)
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
		return fail(err, SIZE_MAX, "invalid argument", -EINVAL);
	m = calloc(1, sizeof(*m));
	if (!m)
		return fail(err, SIZE_MAX, "out of memory", -ENOMEM);
	if (opts)
		m->opts = *opts;
	m->nccl_ref = SIZE_MAX;
	m->in = calloc(n, sizeof(*m->in));
	m->scratch = calloc(1, sizeof(*m->scratch));
	if (!m->in || !m->scratch) {
		r = fail(err, SIZE_MAX, "out of memory", -ENOMEM);
		goto out;
	}
	r = build_xforms(m);
	if (r < 0) {
		fail(err, SIZE_MAX, "internal error: a record table does not fit the merge", r);
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
			fail(err, i, strerror(-r), r);
			goto out;
		}
		r = gt_reader_open(paths[i], &in->r, &msg);
		if (r < 0) {
			fail(err, i, msg ? msg : strerror(-r), r);
			goto out;
		}
		in->dev = st.st_dev;
		in->ino = st.st_ino;
		in->size = (uint64_t)st.st_size;
		r = copy_header(in);
		if (r < 0) {
			fail(err, i, "out of memory", r);
			goto out;
		}
		for (size_t j = 0; j < i; j++) {
			const struct input *o = &m->in[j];

			if ((o->dev == in->dev && o->ino == in->ino) ||
			    (o->size == in->size && o->ident == in->ident)) {
				r = fail(err, i,
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
	for (size_t i = 0; m->in && i < m->n; i++) {
		struct input *in = &m->in[i];

		gt_reader_close(in->r);
		free(in->strs);
		map_fini(&in->pids);
		map_fini(&in->strs_map);
		map_fini(&in->nested);
	}
	free(m->in);
	if (m->w)
		gt_writer_discard(m->w);
	gt_strtab_free(m->strs);
	map_fini(&m->undefined);
	map_fini(&m->used_pids);
	free(m->heap);
	free(m->scratch);
	free(m);
}

/* ---- clock alignment ------------------------------------------------------------------- */

bool gt_merge_is_collective(const char *name, size_t len)
{
	size_t i = 0;

	/* a C++ kernel's mangled name: "_Z", the length of the identifier, the identifier */
	if (len > 2 && name[0] == '_' && name[1] == 'Z') {
		i = 2;
		while (i < len && name[i] >= '0' && name[i] <= '9')
			i++;
	}
	if (len - i < 4 || memcmp(name + i, "nccl", 4) != 0)
		return false;
	/* point-to-point: a send and its receive are two ranks, not all of them */
	return !memmem(name + i, len - i, "SendRecv", 8);
}

/* The wall-clock offset of every input: realtime - trace clock at its anchor, relative to
 * the first anchored input's (whose clock the merged file keeps). */
static void align_wall(struct gt_merge *m)
{
	int64_t ref_w = 0;

	m->wall_ref = 0;
	for (size_t i = 0; i < m->n; i++) {
		if (m->in[i].info.start_realtime_ns) {
			m->wall_ref = i;
			break;
		}
	}
	ref_w = (int64_t)(m->in[m->wall_ref].info.start_realtime_ns -
	                  m->in[m->wall_ref].info.start_trace_ns);
	for (size_t i = 0; i < m->n; i++) {
		struct input *in = &m->in[i];

		if (!in->info.start_realtime_ns) {
			in->pub.align = GT_ALIGN_NONE;
			in->pub.wall_offset_ns = 0;
		} else {
			in->pub.align = GT_ALIGN_WALL_CLOCK;
			in->pub.wall_offset_ns =
			        (int64_t)(in->info.start_realtime_ns - in->info.start_trace_ns) -
			        ref_w;
		}
		in->pub.offset_ns = in->pub.wall_offset_ns;
	}
}

static int coll_cmp(const void *a, const void *b)
{
	const struct coll *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->end_ns < y->end_ns ? -1 : x->end_ns > y->end_ns;
}

static int i64_cmp(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

/* Read input i once for its NCCL collectives, sorted by (name, pid, end), then rewind it.
 * *ret is malloc'd (NULL when there are none). */
static int collect(struct gt_merge *m, struct gt_strtab *names, size_t i, struct coll **ret,
                   size_t *nret, struct gt_merge_error *err)
{
	struct input *in = &m->in[i];
	struct u32map kinds = {0}; /* its name id -> key + 1, or 0: not a collective */
	struct coll *c = NULL;
	size_t n = 0, cap = 0;
	const union gt_record *rec;
	int r;

	while ((r = gt_reader_next(in->r, &rec)) == 1) {
		uint32_t key;

		if (rec->hdr.type != GT_REC_KERNEL || !rec->kernel.span.end_ns)
			continue;
		if (!map_get(&kinds, rec->kernel.name_id, &key)) {
			size_t len = 0;
			const char *s = gt_reader_string(in->r, rec->kernel.name_id, &len);

			key = 0;
			if (s && gt_merge_is_collective(s, len)) {
				r = gt_strtab_intern(names, s, len, &key);
				if (r < 0)
					goto out;
			}
			/* id 0 (no name) is never a key of the map: it stays "not collective" */
			if (rec->kernel.name_id) {
				r = map_put(&kinds, rec->kernel.name_id, key);
				if (r < 0)
					goto out;
			}
		}
		if (!key)
			continue;
		if (n == cap) {
			size_t nc = cap ? cap * 2 : 256;
			struct coll *p = realloc(c, nc * sizeof(*p));

			if (!p) {
				r = -ENOMEM;
				goto out;
			}
			c = p;
			cap = nc;
		}
		c[n++] = (struct coll){key, rec->hdr.pid, rec->kernel.span.end_ns};
	}
	if (r < 0) {
		fail(err, i, strerror(-r), r);
		goto out;
	}
	r = gt_reader_rewind(in->r);
	if (r < 0)
		goto out;
	if (n)
		qsort(c, n, sizeof(*c), coll_cmp);
	*ret = c;
	*nret = n;
	c = NULL;
out:
	if (r == -ENOMEM)
		fail(err, i, "out of memory", r);
	map_fini(&kinds);
	free(c);
	return r < 0 ? r : 0;
}

/* Pair input i's collectives with the reference's: the k-th of a name on each of its
 * processes with the k-th of that name on the reference's first process that has it. */
static int pair(struct gt_merge *m, struct input *in, const struct coll *ref, size_t nref,
                const struct coll *c, size_t n)
{
	const struct input *rin = &m->in[m->nccl_ref];
	int64_t *d = n ? malloc(n * sizeof(*d)) : NULL;
	size_t nd = 0, a = 0, b = 0;

	if (n && !d)
		return -ENOMEM;
	while (b < n) {
		size_t e = b, rs, re;

		/* the group [b, e): one name on one process */
		while (e < n && c[e].key == c[b].key && c[e].pid == c[b].pid)
			e++;
		/* the reference's sequence of that name: its first process's */
		while (a < nref && ref[a].key < c[b].key)
			a++;
		rs = a;
		re = a;
		while (re < nref && ref[re].key == c[b].key && ref[re].pid == ref[rs].pid)
			re++;
		for (size_t k = 0; k < e - b; k++) {
			if (rs + k >= re) {
				in->pub.unpaired++;
				continue;
			}
			d[nd++] = (int64_t)(ref[rs + k].end_ns - c[b + k].end_ns) +
			          rin->pub.offset_ns - in->pub.wall_offset_ns;
		}
		b = e;
	}
	if (nd) {
		int64_t med;

		qsort(d, nd, sizeof(*d), i64_cmp);
		med = d[(nd - 1) / 2];
		in->pub.align = GT_ALIGN_NCCL;
		in->pub.offset_ns = in->pub.wall_offset_ns + med;
		in->pub.collectives = nd;
		in->pub.spread_lo_ns = d[(nd - 1) / 10] - med;
		in->pub.spread_hi_ns = d[nd - 1 - (nd - 1) / 10] - med;
	}
	free(d);
	return 0;
}

static int align_nccl(struct gt_merge *m, struct gt_merge_error *err)
{
	struct gt_strtab *names = NULL;
	struct coll *ref = NULL, *c = NULL;
	size_t nref = 0, n = 0;
	int r;

	r = gt_strtab_new(&names);
	if (r < 0)
		return fail(err, SIZE_MAX, "out of memory", r);
	for (size_t i = 0; i < m->n; i++) {
		struct input *in = &m->in[i];

		r = collect(m, names, i, &c, &n, err);
		if (r < 0)
			goto out;
		if (m->nccl_ref == SIZE_MAX) {
			if (!n || in->pub.align == GT_ALIGN_NONE) {
				/* no collective (or no anchor): stays on its wall clock */
				in->pub.unpaired = n;
				free(c);
				c = NULL;
				continue;
			}
			m->nccl_ref = i;
			in->pub.align = GT_ALIGN_NCCL;
			in->pub.collectives = n;
			ref = c;
			nref = n;
			c = NULL;
			continue;
		}
		r = pair(m, in, ref, nref, c, n);
		free(c);
		c = NULL;
		if (r < 0) {
			fail(err, i, "out of memory", r);
			goto out;
		}
	}
	r = m->nccl_ref == SIZE_MAX
	            ? fail(err, SIZE_MAX, "no input holds an NCCL collective kernel", -ENODATA)
	            : 0;
out:
	free(ref);
	free(c);
	gt_strtab_free(names);
	return r;
}

int gt_merge_align(struct gt_merge *m, struct gt_merge_error *err)
{
	int r = 0;

	if (!m)
		return fail(err, SIZE_MAX, "invalid argument", -EINVAL);
	if (m->aligned)
		return 0;
	align_wall(m);
	m->nccl_ref = SIZE_MAX;
	if (m->opts.align == GT_MERGE_ALIGN_NCCL)
		r = align_nccl(m, err);
	if (r == 0)
		m->aligned = true;
	return r;
}

/* ---- writing --------------------------------------------------------------------------- */

/* A string of the merged file: interned once, its STRING record written when new. */
static int out_string(struct gt_merge *m, uint32_t pid, const char *s, size_t len, uint32_t *id)
{
	int r;

	if (len > GT_STRING_MAX)
		len = GT_STRING_MAX;
	r = gt_strtab_intern(m->strs, s, len, id);
	if (r == 1 && *id >= PLACEHOLDER_BASE)
		return -E2BIG;
	if (r == 1)
		r = gt_writer_string(m->w, pid, *id, s, len);
	return r < 0 ? r : 0;
}

static int write_origin(struct gt_merge *m, struct input *in, uint32_t out_pid, uint32_t pid)
{
	struct gt_rec_origin o = {{GT_REC_ORIGIN, sizeof(o), out_pid}};
	int r;

	if (!in->host_id && in->info.hostname[0]) {
		r = out_string(m, 0, in->info.hostname, strlen(in->info.hostname), &in->host_id);
		if (r < 0)
			return r;
	}
	o.input = in->index;
	o.orig_pid = pid;
	o.host_id = in->host_id;
	return gt_writer_write(m->w, &o.hdr);
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
	if (!map_get(&in->pids, pid, &v)) {
		v = pid;
		while (map_get(&m->used_pids, v, NULL)) {
			if (m->next_pid == 0)
				return -EOVERFLOW;
			v = m->next_pid++;
		}
		r = map_put(&m->used_pids, v, 1);
		if (r == 0)
			r = map_put(&in->pids, pid, v);
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
	if (map_get(&in->strs_map, id, out))
		return 0;
	if (m->next_placeholder == 0)
		return -EOVERFLOW;
	v = m->next_placeholder++;
	r = map_put(&in->strs_map, id, v);
	if (r == 0)
		r = map_put(&m->undefined, v, 1);
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
	if (map_get(&in->strs_map, s->id, &v)) {
		/* the first definition wins, as in the reader; a placeholder gets this one */
		if (!map_get(&m->undefined, v, &undef) || !undef)
			return 0;
		r = map_put(&m->undefined, v, 0);
		return r < 0 ? r : gt_writer_string(m->w, pid, v, s->str, s->len);
	}
	r = out_string(m, pid, s->str, s->len, &v);
	return r < 0 ? r : map_put(&in->strs_map, s->id, v);
}

/* The merged file's index for an INPUT index of a merged input. */
static int map_nested(struct gt_merge *m, struct input *in, uint32_t index, uint32_t *out)
{
	if (map_get(&in->nested, index, out))
		return 0;
	if (m->next_index == UINT32_MAX)
		return -EOVERFLOW;
	*out = m->next_index++;
	return map_put(&in->nested, index, *out);
}

static inline uint64_t shift(uint64_t v, int64_t off)
{
	if (!v || !off)
		return v;
	if (off < 0 && v <= (uint64_t)0 - (uint64_t)off)
		return 1; /* before the merged clock's origin: the earliest time there is */
	return v + (uint64_t)off;
}

static int emit(struct gt_merge *m, struct input *in, const union gt_record *rec)
{
	unsigned type = rec->hdr.type;
	const struct xform *x = &m->xf[type];
	union gt_record *o = m->scratch;
	int r;

	in->pub.records++;
	in->pub.records_by_type[type]++;
	if (type == GT_REC_STRING)
		return merge_string(m, in, &rec->string);
	memcpy(o, rec, x->size);
	if (type == GT_REC_ORIGIN) {
		/* a merged input's: it names the process's first input, and comes first */
		bool seen = map_get(&in->pids, rec->hdr.pid, NULL);

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
		o->hdr.pid = 0;
	} else {
		r = map_pid(m, in, rec->hdr.pid, &o->hdr.pid, false);
	}
	for (unsigned f = 0; r == 0 && f < x->nstr; f++) {
		uint32_t *id = (uint32_t *)((uint8_t *)o + x->str_off[f]);

		r = map_string(m, in, *id, id);
	}
	if (r < 0)
		return r;
	for (unsigned f = 0; f < x->ntime; f++) {
		uint64_t *t = (uint64_t *)((uint8_t *)o + x->time_off[f]);

		*t = shift(*t, in->pub.offset_ns);
	}
	return gt_writer_write(m->w, &o->hdr);
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
	const struct gt_reader_status *st = gt_reader_status(in->r);
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
		r = gt_writer_write(m->w, &l.hdr);
	}
	gt_reader_close(in->r);
	in->r = NULL;
	in->head = NULL;
	return r;
}

/* Next record of the input into its head; closes it at its end. Returns 1, 0 (done) or
 * -errno. */
static int advance(struct gt_merge *m, struct input *in)
{
	int r = gt_reader_next(in->r, &in->head);

	if (r == 1) {
		set_key(m, in);
		return 1;
	}
	if (r < 0)
		return r;
	r = finish_input(m, in);
	return r < 0 ? r : 0;
}

static int write_inputs(struct gt_merge *m)
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
			r = out_string(m, 0, s[k], strlen(s[k]), ids[k]);
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
		r = gt_writer_write(m->w, &o.hdr);
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
static int open_writer(struct gt_merge *m, const char *path)
{
	static const size_t fields[] = {
	        offsetof(struct gt_trace_info, hostname),
	        offsetof(struct gt_trace_info, cuda_version),
	        offsetof(struct gt_trace_info, cupti_version),
	        offsetof(struct gt_trace_info, driver_version),
	};
	const struct input *ref = &m->in[m->wall_ref];
	struct gt_trace_info info = {0};
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
	r = gt_writer_open(path, &info, &m->opts.writer, &m->w);
out:
	for (unsigned k = 0; k < 4; k++)
		free(joined[k]);
	return r;
}

int gt_merge_write(struct gt_merge *m, const char *path, struct gt_merge_error *err)
{
	size_t bad = SIZE_MAX; /* the input a read failed on */
	int r;

	if (!m || !path || m->written || m->w)
		return fail(err, SIZE_MAX, "invalid argument", -EINVAL);
	r = gt_merge_align(m, err);
	if (r < 0)
		return r;
	m->next_placeholder = PLACEHOLDER_BASE;
	m->next_pid = GT_MERGE_PID_BASE;
	m->next_index = (uint32_t)m->n + 1;
	r = gt_strtab_new(&m->strs);
	if (r == 0) {
		m->heap = malloc(m->n * sizeof(*m->heap));
		if (!m->heap)
			r = -ENOMEM;
	}
	if (r < 0)
		return fail(err, SIZE_MAX, "out of memory", r);
	r = open_writer(m, path);
	if (r < 0)
		return fail(err, SIZE_MAX, strerror(-r), r);
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
		struct input *in = &m->in[m->heap[0]];

		r = emit(m, in, in->head);
		if (r < 0)
			goto out;
		r = advance(m, in);
		if (r < 0) {
			bad = in->r ? m->heap[0] : SIZE_MAX;
			goto out;
		}
		if (r == 0)
			m->heap[0] = m->heap[--m->nheap];
		sift_down(m, 0);
	}
	r = write_inputs(m);
	if (r == 0)
		r = gt_writer_flush(m->w);
	if (r < 0)
		goto out;
	m->counts = *gt_writer_counts(m->w);
	r = gt_writer_close(m->w);
	m->w = NULL;
	if (r < 0)
		goto out;
	m->written = true;
	return 0;
out:
	/* the temporary file goes; PATH was never touched */
	gt_writer_discard(m->w);
	m->w = NULL;
	if (r == -ENOMEM)
		return fail(err, SIZE_MAX, "out of memory", r);
	return fail(err, bad, strerror(-r), r);
}
