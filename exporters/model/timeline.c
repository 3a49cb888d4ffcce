/* The timeline model: processes, GPUs, tracks, memory in use and losses learnt while
 * streaming a trace, for the timeline formats (see timeline.h). Runs in the CLI. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "timeline.h"

int gt_timeline_init(struct gt_timeline *m, struct gt_reader *reader, bool demangle,
                     gt_names_fn name_fn, size_t name_expand)
{
	memset(m, 0, sizeof(*m));
	m->reader = reader;
	gt_gm_init(&m->gm);
	if (gt_catalog_init(&m->cat, reader) < 0 ||
	    gt_names_init(&m->names, reader, demangle, name_fn, name_expand) < 0 ||
	    gt_idmap_init(&m->track_map, 256) < 0 || gt_idmap_init(&m->pool_map, 16) < 0 ||
	    gt_flows_cache_init(&m->api_flows) < 0 || gt_flows_cache_init(&m->gpu_flows) < 0)
		goto fail;
	return 0;
fail:
	gt_timeline_fini(m);
	return -ENOMEM;
}

void gt_timeline_fini(struct gt_timeline *m)
{
	for (uint32_t i = 0; i < m->nprocs; i++)
		free(m->procs[i]);
	for (uint32_t i = 0; i < m->ngpus; i++)
		free(m->gpus[i]);
	for (uint32_t i = 0; i < m->ntracks; i++) {
		for (unsigned k = 0; k < m->tracks[i]->nlanes; k++)
			free(m->tracks[i]->lanes[k].blk);
		free(m->tracks[i]);
	}
	free(m->procs);
	free(m->gpus);
	free(m->tracks);
	free(m->proc_of);
	free(m->gpu_of);
	gt_idmap_fini(&m->track_map);
	gt_idmap_fini(&m->pool_map);
	free(m->pool_bytes);
	gt_names_fini(&m->names);
	gt_flows_cache_fini(&m->api_flows);
	gt_flows_cache_fini(&m->gpu_flows);
	gt_gm_fini(&m->gm);
	gt_catalog_fini(&m->cat);
	memset(m, 0, sizeof(*m));
}

/* Grow a pointer array indexed by catalog index to hold index i (new slots NULL). */
static int by_cat_reserve(void ***arr, uint32_t *cap, uint32_t i)
{
	uint32_t ncap = *cap ? *cap : 16;
	void **a;

	if (i < *cap)
		return 0;
	while (ncap <= i)
		ncap *= 2;
	a = realloc(*arr, ncap * sizeof(**arr));
	if (!a)
		return -ENOMEM;
	memset(a + *cap, 0, (ncap - *cap) * sizeof(*a));
	*arr = a;
	*cap = ncap;
	return 0;
}

struct gt_timeline_proc *gt_timeline_proc(struct gt_timeline *m, uint32_t pid)
{
	const struct gt_catalog_process *cp = gt_catalog_process(&m->cat, pid);
	struct gt_timeline_proc *p;

	if (!cp || by_cat_reserve((void ***)&m->proc_of, &m->cap_proc_of, cp->index) < 0)
		return NULL;
	if (m->proc_of[cp->index])
		return m->proc_of[cp->index];
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->cat = cp;
	p->pid = cp->out_pid;
	p->index = m->nprocs + 1;
	if (gt_idmap_append((void ***)&m->procs, &m->nprocs, &m->cap_procs, p) < 0) {
		free(p);
		return NULL;
	}
	m->proc_of[cp->index] = p;
	return p;
}

struct gt_timeline_gpu *gt_timeline_gpu(struct gt_timeline *m, uint32_t pid, uint32_t device_id)
{
	const struct gt_catalog_gpu *cg = gt_catalog_gpu(&m->cat, pid, device_id);
	struct gt_timeline_gpu *g;

	if (!cg || by_cat_reserve((void ***)&m->gpu_of, &m->cap_gpu_of, cg->index) < 0)
		return NULL;
	if (m->gpu_of[cg->index])
		return m->gpu_of[cg->index];
	g = calloc(1, sizeof(*g));
	if (!g)
		return NULL;
	g->cat = cg;
	g->first_pid = gt_timeline_pid(m, pid);
	if (gt_idmap_append((void ***)&m->gpus, &m->ngpus, &m->cap_gpus, g) < 0) {
		free(g);
		return NULL;
	}
	m->gpu_of[cg->index] = g;
	return g;
}

/* A memory pool's reserved bytes as this record gives them (none once destroyed), into its
 * GPU's total. Pools are keyed by process, GPU and address. */
static int observe_pool(struct gt_timeline *m, const struct gt_rec_memory_pool *r)
{
	struct gt_timeline_gpu *g;
	uint64_t key, now;
	uint32_t i;

	g = gt_timeline_gpu(m, r->hdr.pid, r->device_id);
	if (!g)
		return -ENOMEM;
	key = (uint64_t)gt_timeline_pid(m, r->hdr.pid) << 32 | g->cat->number;
	i = gt_idmap_get(&m->pool_map, key, r->address);
	if (!i) {
		if (m->npools == m->cap_pools) {
			uint32_t cap = m->cap_pools ? m->cap_pools * 2 : 8;
			uint64_t *b = realloc(m->pool_bytes, cap * sizeof(*b));

			if (!b)
				return -ENOMEM;
			m->pool_bytes = b;
			m->cap_pools = cap;
		}
		m->pool_bytes[m->npools++] = 0;
		i = m->npools;
		if (gt_idmap_put(&m->pool_map, key, r->address, i) < 0)
			return -ENOMEM;
	}
	now = r->op == GT_POOL_DESTROYED ? 0 : r->reserved_bytes;
	/* Unsigned: sizes from a damaged trace must wrap, not overflow (undefined). */
	g->pool_reserved = (int64_t)((uint64_t)g->pool_reserved - m->pool_bytes[i - 1] + now);
	m->pool_bytes[i - 1] = now;
	return 0;
}

/* The track (kind, id) of the process shown as pid `shown`, created in process p (NULL: pid
 * `pid`'s current one) when new. */
static struct gt_track *track_get(struct gt_timeline *m, enum gt_track_kind kind, uint32_t shown,
                                  uint32_t id, struct gt_timeline_proc *p, uint32_t pid)
{
	uint64_t a = ((uint64_t)kind << 32) | shown;
	struct gt_track *t;
	uint32_t v = gt_idmap_get(&m->track_map, a, id);

	if (v)
		return m->last_track[kind] = m->tracks[v - 1];
	if (!p)
		p = gt_timeline_proc(m, pid);
	if (!p)
		return NULL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->kind = (uint8_t)kind;
	t->pid = shown;
	t->id = id;
	t->proc = p->index - 1;
	t->index = m->ntracks;
	if (gt_idmap_append((void ***)&m->tracks, &m->ntracks, &m->cap_tracks, t) < 0 ||
	    gt_idmap_put(&m->track_map, a, id, m->ntracks) < 0) {
		free(t);
		return NULL;
	}
	return t;
}

struct gt_track *gt_timeline_track(struct gt_timeline *m, enum gt_track_kind kind, uint32_t pid,
                                   uint32_t id)
{
	uint32_t shown = gt_timeline_pid(m, pid);
	struct gt_track *t = m->last_track[kind];

	if (t && t->pid == shown && t->id == id)
		return t;
	return track_get(m, kind, shown, id, NULL, pid);
}

struct gt_track *gt_timeline_track_of(struct gt_timeline *m, enum gt_track_kind kind,
                                      const struct gt_track *of, uint32_t id)
{
	return track_get(m, kind, of->pid, id, m->procs[of->proc], of->pid);
}

uint32_t gt_timeline_track_index(const struct gt_timeline *m, const struct gt_track *t)
{
	(void)m;
	return t->index;
}

uint32_t gt_timeline_context_device(const struct gt_timeline *m, uint32_t pid, uint32_t ctx)
{
	return gt_catalog_context_device(&m->cat, pid, ctx);
}

int gt_timeline_observe(struct gt_timeline *m, const union gt_record *rec)
{
	int ret = gt_catalog_observe(&m->cat, rec);

	if (ret < 0)
		return ret;
	switch (rec->hdr.type) {
	case GT_REC_GPU_METRIC:
	case GT_REC_GPU_SAMPLE:
		return gt_gm_observe(&m->gm, &m->cat, rec);
	case GT_REC_PROCESS: {
		/* the catalog has read it (a new process when the pid was reused) */
		struct gt_timeline_proc *p = gt_timeline_proc(m, rec->hdr.pid);

		if (!p)
			return -ENOMEM;
		if (p->announced)
			p->info_changed = true;
		return 0;
	}
	case GT_REC_THREAD: {
		struct gt_track *t =
		        gt_timeline_track(m, GT_TRACK_THREAD, rec->hdr.pid, rec->thread.tid);

		if (!t)
			return -ENOMEM;
		t->name_id = rec->thread.name_id;
		for (unsigned k = 0; k < t->nlanes; k++)
			if (t->lanes[k].announced)
				t->name_changed = true;
		return 0;
	}
	case GT_REC_DEVICE: {
		struct gt_timeline_gpu *g = gt_timeline_gpu(m, rec->hdr.pid, rec->device.device_id);

		if (!g)
			return -ENOMEM;
		if (g->announced)
			g->info_changed = true;
		return 0;
	}
	case GT_REC_MEMORY_POOL:
		return gt_timeline_drawn(rec) ? observe_pool(m, &rec->memory_pool) : 0;
	default:
		return 0;
	}
}

bool gt_timeline_drawn(const union gt_record *rec)
{
	switch (rec->hdr.type) {
	case GT_REC_KERNEL:
		return rec->kernel.span.start_ns != 0;
	case GT_REC_MEMCPY:
		return rec->memcpy.span.start_ns != 0;
	case GT_REC_MEMSET:
		return rec->memset.span.start_ns != 0;
	case GT_REC_MEMORY:
		return rec->memory.mem_kind != GT_MEM_PINNED &&
		       rec->memory.mem_kind != GT_MEM_PAGEABLE;
	case GT_REC_MEMORY_POOL:
		return rec->memory_pool.ts_ns != 0;
	default:
		return true;
	}
}
