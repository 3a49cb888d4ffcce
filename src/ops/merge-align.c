/* gputrace merge, the clocks: each input's offset onto the merged timeline, from the
 * header's wall-clock anchors and, with --align nccl, from the ends of NCCL collectives,
 * which finish at nearly the same instant on every rank. docs/merge.md gives the error
 * bounds. Runs in the CLI process. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "merge-int.h"

/* One NCCL collective kernel seen while aligning. */
struct coll {
	uint32_t key; /* its name: an id of align_nccl's table of collective names */
	uint32_t pid;
	uint64_t end_ns; /* on the input's own clock */
};

bool gt_merge_is_collective(const char *name, size_t len)
{
	static const char *const inner[] = {"ncclKernel", "ncclDevKernel"};
	size_t i = 0;
	bool nccl = false;

	/* NCCL's kernels as exporters/model/ranks.c knows them (gt_ranks_nccl_kernel): the name, or
	 * a mangled global function's ("_Z<length><name>"), starts with "nccl", or it holds
	 * "ncclKernel" or "ncclDevKernel" (a demangled or namespaced name) */
	if (len > 2 && name[0] == '_' && name[1] == 'Z') {
		for (i = 2; i < len && name[i] >= '0' && name[i] <= '9'; i++)
			;
		if (i == 2)
			i = 0;
	}
	if (len - i >= 4 && memcmp(name + i, "nccl", 4) == 0)
		nccl = true;
	for (size_t k = 0; !nccl && k < sizeof(inner) / sizeof(inner[0]); k++)
		nccl = memmem(name, len, inner[k], strlen(inner[k])) != NULL;
	/* point-to-point: a send and its receive are two ranks, not all of them */
	return nccl && !memmem(name, len, "SendRecv", 8);
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
		if (!u32map_get(&kinds, rec->kernel.name_id, &key)) {
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
				r = u32map_put(&kinds, rec->kernel.name_id, key);
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
		gt_merge_fail(err, i, strerror(-r), r);
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
		gt_merge_fail(err, i, "out of memory", r);
	u32map_fini(&kinds);
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
		return gt_merge_fail(err, SIZE_MAX, "out of memory", r);
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
			gt_merge_fail(err, i, "out of memory", r);
			goto out;
		}
	}
	r = m->nccl_ref == SIZE_MAX
	            ? gt_merge_fail(err, SIZE_MAX, "no input holds an NCCL collective kernel",
	                            -ENODATA)
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
		return gt_merge_fail(err, SIZE_MAX, "invalid argument", -EINVAL);
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
