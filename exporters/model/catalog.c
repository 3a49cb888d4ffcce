/* The catalog of what a trace holds: processes, GPUs, threads, losses, notices (see
 * catalog.h). Runs in the CLI. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"

int gt_catalog_init(struct gt_catalog *c, struct gt_reader *reader)
{
	memset(c, 0, sizeof(*c));
	c->reader = reader;
	c->first_ns = UINT64_MAX;
	if (gt_idmap_init(&c->pid_map, 64) < 0 || gt_idmap_init(&c->uuid_map, 16) < 0 ||
	    gt_idmap_init(&c->device_map, 16) < 0 || gt_idmap_init(&c->thread_map, 64) < 0 ||
	    gt_idmap_init(&c->ctx_map, 16) < 0) {
		gt_catalog_fini(c);
		return -ENOMEM;
	}
	return 0;
}

void gt_catalog_fini(struct gt_catalog *c)
{
	for (uint32_t i = 0; i < c->nprocs; i++)
		free(c->procs[i]);
	for (uint32_t i = 0; i < c->ngpus; i++)
		free(c->gpus[i]);
	for (uint32_t i = 0; i < c->nthreads; i++)
		free(c->threads[i]);
	free(c->procs);
	free(c->gpus);
	free(c->threads);
	free(c->inputs);
	gt_idmap_fini(&c->pid_map);
	gt_idmap_fini(&c->uuid_map);
	gt_idmap_fini(&c->device_map);
	gt_idmap_fini(&c->thread_map);
	gt_idmap_fini(&c->ctx_map);
	memset(c, 0, sizeof(*c));
}

/* ------------------------------------------------------------------------------------ */
/* Processes                                                                             */

static struct gt_catalog_process *process_new(struct gt_catalog *c, uint32_t pid)
{
	struct gt_catalog_process *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->index = c->nprocs;
	p->pid = pid;
	/* an earlier process had this pid: outputs that key by pid show this one apart */
	p->out_pid = gt_idmap_get(&c->pid_map, pid, 0) ? GT_CATALOG_PID_AGAIN + p->index : pid;
	p->orig_pid = pid;
	p->rank = p->local_rank = p->world_size = -1;
	if (gt_idmap_append((void ***)&c->procs, &c->nprocs, &c->cap_procs, p) < 0 ||
	    gt_idmap_put(&c->pid_map, pid, 0, c->nprocs) < 0) {
		if (c->nprocs && c->procs[c->nprocs - 1] == p)
			c->nprocs--;
		free(p);
		return NULL;
	}
	c->last_pid = pid;
	c->last_proc = p;
	/* the caches by pid named the previous process of this pid */
	c->last_gpu = NULL;
	c->last_thread = NULL;
	return p;
}

struct gt_catalog_process *gt_catalog_process_find(struct gt_catalog *c, uint32_t pid)
{
	uint32_t v;

	if (c->last_proc && c->last_pid == pid)
		return c->last_proc;
	v = gt_idmap_get(&c->pid_map, pid, 0);
	if (!v)
		return process_new(c, pid);
	c->last_pid = pid;
	c->last_proc = c->procs[v - 1];
	return c->last_proc;
}

/* Whether two host name strings are the same host (unknown matches anything). */
static bool same_host(const struct gt_catalog *c, uint32_t a, uint32_t b)
{
	const char *sa, *sb;
	size_t la = 0, lb = 0;

	if (!a || !b || a == b)
		return true;
	if (!c->reader)
		return false;
	sa = gt_reader_string(c->reader, a, &la);
	sb = gt_reader_string(c->reader, b, &lb);
	if (!sa || !sb)
		return false;
	return la == lb && memcmp(sa, sb, la) == 0;
}

static int observe_process(struct gt_catalog *c, const struct gt_rec_process *r)
{
	uint32_t v = gt_idmap_get(&c->pid_map, r->hdr.pid, 0);
	struct gt_catalog_process *p = v ? c->procs[v - 1] : NULL;

	/* a known process with this pid: the same one re-registering (an exec), unless another
	 * host's or one that ended (the pid reused) */
	if (!p || (p->have_info && (p->ended || !same_host(c, p->host_id, r->host_id))))
		p = process_new(c, r->hdr.pid);
	if (!p)
		return -ENOMEM;
	p->ppid = r->ppid;
	p->host_id = r->host_id;
	p->exe_id = r->exe_id;
	p->cmdline_id = r->cmdline_id;
	p->rank = r->rank;
	p->local_rank = r->local_rank;
	p->world_size = r->world_size;
	p->flags = r->flags;
	p->start_ns = r->start_ns;
	p->have_info = true;
	return 0;
}

static int observe_end(struct gt_catalog *c, const struct gt_rec_process_end *r)
{
	struct gt_catalog_process *p = gt_catalog_process(c, r->hdr.pid);

	if (!p)
		return -ENOMEM;
	p->ended = true;
	p->end_how = r->how < GT_END_MAX ? r->how : GT_END_UNKNOWN;
	p->end_code = r->code;
	p->end_ns = r->ts_ns;
	return 0;
}

/* ------------------------------------------------------------------------------------ */
/* Threads                                                                               */

static struct gt_catalog_thread *thread_get(struct gt_catalog *c, uint32_t pid, uint32_t tid)
{
	uint64_t key = (uint64_t)pid << 32 | tid;
	struct gt_catalog_process *p;
	struct gt_catalog_thread *t;
	uint32_t v;

	if (c->last_thread && c->last_tid == key)
		return c->last_thread;
	p = gt_catalog_process(c, pid);
	if (!p)
		return NULL;
	v = gt_idmap_get(&c->thread_map, p->index, tid);
	if (v) {
		c->last_tid = key;
		return c->last_thread = c->threads[v - 1];
	}
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->process = p->index;
	t->tid = tid;
	if (gt_idmap_append((void ***)&c->threads, &c->nthreads, &c->cap_threads, t) < 0) {
		free(t);
		return NULL;
	}
	if (gt_idmap_put(&c->thread_map, p->index, tid, c->nthreads) < 0)
		return NULL;
	p->nthreads++;
	c->last_tid = key;
	c->last_thread = t;
	return t;
}

/* ------------------------------------------------------------------------------------ */
/* GPUs                                                                                  */

static uint64_t uuid_half(const uint8_t *uuid, unsigned half)
{
	uint64_t v;

	memcpy(&v, uuid + 8 * half, sizeof(v));
	return v;
}

static bool uuid_set(const uint8_t *uuid)
{
	static const uint8_t zero[16];

	return memcmp(uuid, zero, 16) != 0;
}

/* "GPU n": the ordinal when no other GPU shows it, else one past the largest number. */
static uint32_t gpu_free_number(const struct gt_catalog *c, uint32_t want)
{
	uint32_t max = 0;
	bool taken = false;

	for (uint32_t i = 0; i < c->ngpus; i++) {
		if (c->gpus[i]->number == want)
			taken = true;
		if (c->gpus[i]->number + 1 > max)
			max = c->gpus[i]->number + 1;
	}
	return taken ? max : want;
}

static struct gt_catalog_gpu *gpu_new(struct gt_catalog *c, const struct gt_catalog_process *p,
                                      uint32_t device_id)
{
	struct gt_catalog_gpu *g = calloc(1, sizeof(*g));

	if (!g)
		return NULL;
	g->index = c->ngpus;
	g->number = gpu_free_number(c, device_id);
	g->device_id = device_id;
	g->process = p->index;
	if (gt_idmap_append((void ***)&c->gpus, &c->ngpus, &c->cap_gpus, g) < 0) {
		free(g);
		return NULL;
	}
	return g;
}

const struct gt_catalog_gpu *gt_catalog_gpu_final(const struct gt_catalog *c,
                                                  const struct gt_catalog_gpu *g)
{
	/* merged_into always names an earlier-seen, unmerged GPU: one step */
	return g && g->merged_into ? c->gpus[g->merged_into - 1] : g;
}

/* Map (process, ordinal) to g from now on. */
static int gpu_bind(struct gt_catalog *c, const struct gt_catalog_process *p, uint32_t device_id,
                    struct gt_catalog_gpu *g)
{
	c->last_device = (uint64_t)p->pid << 32 | device_id;
	c->last_gpu = g;
	return gt_idmap_put(&c->device_map, p->index, device_id, g->index + 1);
}

struct gt_catalog_gpu *gt_catalog_gpu(struct gt_catalog *c, uint32_t pid, uint32_t device_id)
{
	struct gt_catalog_process *p;
	struct gt_catalog_gpu *g;
	uint32_t v;

	/* a run of records of one process on one device: no lookup */
	if (c->last_gpu && c->last_device == ((uint64_t)pid << 32 | device_id))
		return c->last_gpu;
	p = gt_catalog_process(c, pid);
	if (!p)
		return NULL;
	v = gt_idmap_get(&c->device_map, p->index, device_id);
	/* not described by this process (yet): a GPU of its own, (host, pid, ordinal) */
	g = v ? c->gpus[v - 1] : gpu_new(c, p, device_id);
	if (!g || gpu_bind(c, p, device_id, g) < 0)
		return NULL;
	return g;
}

static int observe_device(struct gt_catalog *c, const struct gt_rec_device *d)
{
	struct gt_catalog_process *p = gt_catalog_process(c, d->hdr.pid);
	bool have_uuid = uuid_set(d->uuid);
	struct gt_catalog_gpu *g = NULL, *mine;
	uint32_t v;

	if (!p)
		return -ENOMEM;
	v = gt_idmap_get(&c->device_map, p->index, d->device_id);
	mine = v ? c->gpus[v - 1] : NULL;
	if (have_uuid) {
		v = gt_idmap_get(&c->uuid_map, uuid_half(d->uuid, 0), uuid_half(d->uuid, 1));
		g = v ? c->gpus[v - 1] : NULL;
	}
	if (!g && mine && !(mine->have_uuid && have_uuid && memcmp(mine->uuid, d->uuid, 16)))
		g = mine; /* what this process's records already used, described now */
	if (!g)
		g = gpu_new(c, p, d->device_id);
	if (!g)
		return -ENOMEM;
	if (mine && mine != g && !mine->have_info && !mine->merged_into) {
		/* records came before this description: the GPU they named is this one */
		mine->merged_into = g->index + 1;
		g->mem_in_use = (int64_t)((uint64_t)g->mem_in_use + (uint64_t)mine->mem_in_use);
		if (g->mem_in_use > g->mem_peak) {
			g->mem_peak = g->mem_in_use;
			g->mem_peak_ts_ns = mine->mem_peak_ts_ns;
		}
		mine->mem_in_use = 0;
	}
	if (gpu_bind(c, p, d->device_id, g) < 0)
		return -ENOMEM;
	if (have_uuid && !g->have_uuid) {
		memcpy(g->uuid, d->uuid, 16);
		g->have_uuid = true;
		if (gt_idmap_put(&c->uuid_map, uuid_half(d->uuid, 0), uuid_half(d->uuid, 1),
		                 g->index + 1) < 0)
			return -ENOMEM;
	}
	g->have_info = true;
	g->name_id = d->name_id;
	g->sm_count = d->sm_count;
	g->cc_major = d->cc_major;
	g->cc_minor = d->cc_minor;
	g->pci_bus_id = d->pci_bus_id;
	g->max_threads_per_block = d->max_threads_per_block;
	g->max_shared_mem_per_block = d->max_shared_mem_per_block;
	g->mem_clock_khz = d->mem_clock_khz;
	g->clock_khz = d->clock_khz;
	g->mem_bus_width = d->mem_bus_width;
	g->global_mem_bytes = d->global_mem_bytes;
	return 0;
}

static int observe_memory(struct gt_catalog *c, const struct gt_rec_memory *r)
{
	struct gt_catalog_gpu *g;

	/* pinned and pageable host memory is not a GPU's */
	if (r->mem_kind == GT_MEM_PINNED || r->mem_kind == GT_MEM_PAGEABLE)
		return 0;
	g = gt_catalog_gpu(c, r->hdr.pid, r->device_id);
	if (!g)
		return -ENOMEM;
	/* Unsigned: sizes from a damaged trace must wrap, not overflow (undefined). */
	if (r->op == GT_MEMORY_ALLOC)
		g->mem_in_use = (int64_t)((uint64_t)g->mem_in_use + r->bytes);
	else if (r->op == GT_MEMORY_FREE)
		g->mem_in_use = (int64_t)((uint64_t)g->mem_in_use - r->bytes);
	if (g->mem_in_use > g->mem_peak) {
		g->mem_peak = g->mem_in_use;
		g->mem_peak_ts_ns = r->ts_ns;
	}
	return 0;
}

uint32_t gt_catalog_context_device(const struct gt_catalog *c, uint32_t pid, uint32_t ctx)
{
	uint32_t v = gt_idmap_get(&c->pid_map, pid, 0);

	if (!v)
		return UINT32_MAX;
	v = gt_idmap_get(&c->ctx_map, v - 1, ctx);
	return v ? v - 1 : UINT32_MAX;
}

/* ------------------------------------------------------------------------------------ */
/* Records                                                                               */

static void observe_notice(struct gt_catalog *c, const struct gt_rec_notice *n)
{
	if (n->code == GT_NOTICE_CUPTI_LOADED && n->detail > 0) {
		uint32_t i = 0;

		while (i < c->ncupti && c->cupti[i] != n->detail)
			i++;
		if (i == c->ncupti && c->ncupti < GT_CATALOG_CUPTI)
			c->cupti[c->ncupti++] = n->detail;
		else if (i == c->ncupti)
			c->more_cupti++;
	}
	if (n->code == GT_NOTICE_SELF_COST) {
		if (c->nself_cost < GT_CATALOG_SELF)
			c->self_cost[c->nself_cost++] = *n;
		else
			c->more_self_cost++;
	}
	/* warnings and errors; informational notices (a capture range's ends, which CUPTI each
	 * process loaded) stay in the trace and would crowd them out */
	if (n->severity < GT_NOTICE_WARNING)
		return;
	if (c->nnotices < GT_CATALOG_NOTICES)
		c->notices[c->nnotices++] = *n;
	else
		c->more_notices++;
}

/* The rare records, out of the hot path below. */
static __attribute__((noinline)) int observe_meta(struct gt_catalog *c, const union gt_record *rec)
{
	switch (rec->hdr.type) {
	case GT_REC_STRING:
		return 0;  /* strings belong to the trace, not to the process that named them */
	case GT_REC_INPUT: /* a merged trace's input: the trace's, no process's */
		if (c->ninputs == c->cap_inputs) {
			uint32_t cap = c->cap_inputs ? c->cap_inputs * 2 : 8;
			struct gt_rec_input *in = realloc(c->inputs, cap * sizeof(*in));

			if (!in)
				return -ENOMEM;
			c->inputs = in;
			c->cap_inputs = cap;
		}
		c->inputs[c->ninputs++] = rec->input;
		return 0;
	case GT_REC_ORIGIN: { /* where a merged trace's process came from; before its records */
		uint32_t v = gt_idmap_get(&c->pid_map, rec->hdr.pid, 0);
		struct gt_catalog_process *p = v ? c->procs[v - 1] : NULL;

		/* the pid's process so far is another one: another input's, another host's, or
		 * one that ended (a trace that has one pid twice, not written by gputrace merge) */
		if (!p || (p->input && p->input != rec->origin.input) ||
		    ((p->have_info || p->input) &&
		     (p->ended || !same_host(c, p->host_id, rec->origin.host_id))))
			p = process_new(c, rec->hdr.pid);
		if (!p)
			return -ENOMEM;
		p->input = rec->origin.input;
		p->orig_pid = rec->origin.orig_pid;
		if (!p->host_id)
			p->host_id = rec->origin.host_id;
		return 0;
	}
	case GT_REC_PROCESS:
		return observe_process(c, &rec->process);
	case GT_REC_PROCESS_END:
		return observe_end(c, &rec->process_end);
	case GT_REC_THREAD: {
		struct gt_catalog_thread *t = thread_get(c, rec->hdr.pid, rec->thread.tid);

		if (!t)
			return -ENOMEM;
		t->name_id = rec->thread.name_id;
		return 0;
	}
	case GT_REC_DEVICE:
		return observe_device(c, &rec->device);
	case GT_REC_CONTEXT: {
		struct gt_catalog_process *p = gt_catalog_process(c, rec->hdr.pid);

		if (!p || !gt_catalog_gpu(c, rec->hdr.pid, rec->context.device_id))
			return -ENOMEM;
		return gt_idmap_put(&c->ctx_map, p->index, rec->context.context_id,
		                    rec->context.device_id + 1);
	}
	case GT_REC_MEMORY:
		return observe_memory(c, &rec->memory);
	case GT_REC_LOSS: {
		unsigned src = rec->loss.source < GT_LOSS_SOURCE_MAX ? rec->loss.source
		                                                     : GT_LOSS_SOURCE_MAX;
		unsigned kind = rec->loss.kind < GT_REC_MAX ? rec->loss.kind : GT_REC_NONE;
		struct gt_catalog_process *p = gt_catalog_process(c, rec->hdr.pid);

		if (!p)
			return -ENOMEM;
		c->losses[src][kind] += rec->loss.count;
		/* a damaged file's count is chunks, not records */
		if (src != GT_LOSS_FILE) {
			p->lost += rec->loss.count;
			return 0;
		}
		c->damage_recorded.chunks += rec->loss.count;
		c->damage_recorded.bytes += rec->loss.bytes;
		c->damage_recorded.records += rec->loss.records;
		c->damage_recorded.malformed += rec->loss.malformed;
		return 0;
	}
	case GT_REC_NOTICE:
		observe_notice(c, &rec->notice);
		break;
	default:
		break;
	}
	return gt_catalog_process(c, rec->hdr.pid) ? 0 : -ENOMEM;
}

static __attribute__((noinline)) int see_device_slow(struct gt_catalog *c, uint32_t pid,
                                                     uint32_t device_id)
{
	return gt_catalog_gpu(c, pid, device_id) ? 0 : -ENOMEM;
}

static __attribute__((noinline)) int see_thread_slow(struct gt_catalog *c, uint32_t pid,
                                                     uint32_t tid)
{
	return thread_get(c, pid, tid) ? 0 : -ENOMEM;
}

/* The GPU a record's device is, for the records whose work runs on one; a run of records of
 * one process on one device costs a compare. */
static inline int see_device(struct gt_catalog *c, uint32_t pid, uint32_t device_id)
{
	if (c->last_gpu && c->last_device == ((uint64_t)pid << 32 | device_id))
		return 0;
	return see_device_slow(c, pid, device_id);
}

static inline int see_thread(struct gt_catalog *c, uint32_t pid, uint32_t tid)
{
	if (c->last_thread && c->last_tid == ((uint64_t)pid << 32 | tid))
		return 0;
	return see_thread_slow(c, pid, tid);
}

int gt_catalog_observe(struct gt_catalog *c, const union gt_record *rec)
{
	unsigned type = rec->hdr.type;

	if (type < GT_REC_MAX)
		c->records[type]++;
	switch (type) {
	case GT_REC_STREAM:
		return see_device(c, rec->hdr.pid, rec->stream.device_id);
	case GT_REC_KERNEL:
		return see_device(c, rec->hdr.pid, rec->kernel.span.device_id);
	case GT_REC_MEMCPY:
		return see_device(c, rec->hdr.pid, rec->memcpy.span.device_id);
	case GT_REC_MEMSET:
		return see_device(c, rec->hdr.pid, rec->memset.span.device_id);
	case GT_REC_GRAPH:
		return see_device(c, rec->hdr.pid, rec->graph.span.device_id);
	case GT_REC_MEMORY_POOL:
		return see_device(c, rec->hdr.pid, rec->memory_pool.device_id);
	case GT_REC_API:
		return see_thread(c, rec->hdr.pid, rec->api.tid);
	case GT_REC_NVTX:
		return see_thread(c, rec->hdr.pid, rec->nvtx.tid);
	case GT_REC_SYNC:
		return see_thread(c, rec->hdr.pid, rec->sync.tid);
	default:
		return observe_meta(c, rec);
	}
}

/* The earliest and latest of a record's timestamps (the fields its description marks). */
static void see_times(struct gt_catalog *c, const union gt_record *rec)
{
	const struct gt_record_desc *d = gt_record_desc(rec->hdr.type);

	for (unsigned i = 0; d && i < d->nfields; i++) {
		uint64_t v;

		if (!(d->fields[i].flags & GT_FIELD_TIME) || d->fields[i].width != 8)
			continue;
		memcpy(&v, (const uint8_t *)rec + d->fields[i].offset, sizeof(v));
		/* zero means "not set" */
		if (v && v < c->first_ns)
			c->first_ns = v;
		if (v > c->last_ns)
			c->last_ns = v;
	}
}

int gt_catalog_read(struct gt_catalog *c, struct gt_reader *r, const char **errmsg)
{
	const union gt_record *rec;
	int ret = gt_reader_rewind(r);

	if (ret < 0) {
		*errmsg = "cannot rewind the trace";
		return ret;
	}
	while ((ret = gt_reader_next(r, &rec)) > 0) {
		see_times(c, rec);
		ret = gt_catalog_observe(c, rec);
		if (ret < 0) {
			*errmsg = "out of memory while reading the trace";
			return ret;
		}
	}
	if (ret < 0)
		*errmsg = "the trace could not be read to the end";
	gt_catalog_read_done(c, gt_reader_status(r));
	return ret;
}

/* ------------------------------------------------------------------------------------ */
/* Questions                                                                             */

uint32_t gt_catalog_gpu_count(const struct gt_catalog *c)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < c->ngpus; i++)
		n += !c->gpus[i]->merged_into;
	return n;
}

const char *gt_catalog_uuid(const struct gt_catalog_gpu *g, char *buf)
{
	static const char hex[] = "0123456789abcdef";
	char *p = buf;

	if (!g->have_uuid) {
		buf[0] = '\0';
		return buf;
	}
	p = stpcpy(p, "GPU-");
	for (unsigned i = 0; i < 16; i++) {
		if (i == 4 || i == 6 || i == 8 || i == 10)
			*p++ = '-';
		*p++ = hex[g->uuid[i] >> 4];
		*p++ = hex[g->uuid[i] & 15];
	}
	*p = '\0';
	return buf;
}

uint32_t gt_catalog_gpu_users(const struct gt_catalog *c, const struct gt_catalog_gpu *g,
                              uint32_t *procs, uint32_t *ordinals, uint32_t max)
{
	uint32_t n = 0;

	/* the map holds every (process, ordinal) seen; a handful per process */
	for (uint32_t p = 0; p < c->nprocs; p++)
		for (uint32_t i = 0; i <= c->device_map.mask; i++) {
			const struct gt_idmap_entry *e = &c->device_map.e[i];

			if (!e->v || e->a != p || c->gpus[e->v - 1] != g)
				continue;
			if (n < max) {
				procs[n] = p;
				ordinals[n] = (uint32_t)e->b;
			}
			n++;
		}
	return n;
}

uint32_t gt_catalog_hosts(const struct gt_catalog *c)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < c->nprocs; i++) {
		uint32_t h = c->procs[i]->host_id;
		bool seen = false;

		for (uint32_t j = 0; j < i && !seen && h; j++)
			seen = c->procs[j]->host_id && same_host(c, c->procs[j]->host_id, h);
		n += h && !seen;
	}
	return n;
}

uint32_t gt_catalog_ranks(const struct gt_catalog *c)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < c->nprocs; i++) {
		int32_t rank = c->procs[i]->rank;
		bool seen = false;

		for (uint32_t j = 0; j < i && !seen && rank >= 0; j++)
			seen = c->procs[j]->rank == rank;
		n += rank >= 0 && !seen;
	}
	return n;
}

uint64_t gt_catalog_lost(const struct gt_catalog *c, unsigned source)
{
	uint64_t n = 0;

	if (source > GT_LOSS_SOURCE_MAX)
		return 0;
	for (unsigned k = 0; k < GT_REC_MAX; k++)
		n += c->losses[source][k];
	return n;
}

uint64_t gt_catalog_lost_total(const struct gt_catalog *c)
{
	uint64_t n = 0;

	for (unsigned s = 0; s <= GT_LOSS_SOURCE_MAX; s++)
		n += gt_catalog_lost(c, s);
	return n;
}

uint64_t gt_catalog_lost_records(const struct gt_catalog *c)
{
	return gt_catalog_lost_total(c) - gt_catalog_lost(c, GT_LOSS_FILE);
}

void gt_catalog_damage_of(const struct gt_reader_status *rs, struct gt_catalog_damage *d)
{
	d->chunks = rs->chunks_skipped;
	d->bytes = rs->bytes_skipped;
	d->records = rs->chunk_records_skipped;
	d->malformed = rs->records_skipped;
}

void gt_catalog_read_done(struct gt_catalog *c, const struct gt_reader_status *rs)
{
	gt_catalog_damage_of(rs, &c->damage_read);
	c->recovered = rs->recovered;
}

void gt_catalog_damage(const struct gt_catalog *c, struct gt_catalog_damage *d)
{
	d->chunks = c->damage_recorded.chunks + c->damage_read.chunks;
	d->bytes = c->damage_recorded.bytes + c->damage_read.bytes;
	d->records = c->damage_recorded.records + c->damage_read.records;
	d->malformed = c->damage_recorded.malformed + c->damage_read.malformed;
}

const char *gt_catalog_damage_text(const struct gt_catalog_damage *d, char *buf, size_t size)
{
	char bytes[32];

	/* a damaged_file loss from before LOSS had bytes says only its chunks */
	if (d->chunks && !d->bytes)
		snprintf(bytes, sizeof(bytes), "size unknown");
	else
		snprintf(bytes, sizeof(bytes), "%" PRIu64 " bytes", d->bytes);
	snprintf(buf, size, "%" PRIu64 " chunk%s (%s) and %" PRIu64 " malformed record%s skipped",
	         d->chunks, d->chunks == 1 ? "" : "s", bytes, d->malformed,
	         d->malformed == 1 ? "" : "s");
	return buf;
}

void gt_catalog_damage_of_loss(const struct gt_rec_loss *l, struct gt_catalog_damage *d)
{
	d->chunks = l->count;
	d->bytes = l->bytes;
	d->records = l->records;
	d->malformed = l->malformed;
}

const char *gt_catalog_losses_text(const struct gt_catalog *c, char *buf, size_t size)
{
	uint64_t lost = gt_catalog_lost_records(c);
	struct gt_catalog_damage d;
	char dt[GT_CATALOG_DAMAGE_TEXT];
	size_t n = 0;

	buf[0] = '\0';
	if (lost) {
		n += (size_t)snprintf(buf, size, "%" PRIu64 " record%s lost (", lost,
		                      lost == 1 ? "" : "s");
		for (unsigned s = 0, first = 1; s <= GT_LOSS_SOURCE_MAX && n < size; s++) {
			uint64_t k = s == GT_LOSS_FILE ? 0 : gt_catalog_lost(c, s);

			if (!k)
				continue;
			n += (size_t)snprintf(
			        buf + n, size - n, "%s%s %" PRIu64, first ? "" : ", ",
			        s < GT_LOSS_SOURCE_MAX ? gt_loss_source_name(s) : "unknown", k);
			first = 0;
		}
		if (n < size)
			n += (size_t)snprintf(buf + n, size - n, ")");
	}
	gt_catalog_damage(c, &d);
	if (gt_catalog_damaged(&d) && n < size)
		n += (size_t)snprintf(buf + n, size - n, "%sdamaged file: %s", n ? "; " : "",
		                      gt_catalog_damage_text(&d, dt, sizeof(dt)));
	if (!n)
		snprintf(buf, size, "none");
	return buf;
}
