/* CPU->GPU flows: pairing launches with their GPU work in two fixed caches (see flows.h).
 * Runs in the CLI. */
#include <errno.h>
#include <stdlib.h>

#include "flows.h"
#include "timeline.h"

int gt_flows_cache_init(struct gt_flow_cache *c)
{
	c->key = calloc(GT_FLOW_SLOTS, sizeof(*c->key));
	c->slot = calloc(GT_FLOW_SLOTS, sizeof(*c->slot));
	c->next = calloc(GT_FLOW_SLOTS / GT_FLOW_WAYS, sizeof(*c->next));
	return c->key && c->slot && c->next ? 0 : -ENOMEM;
}

void gt_flows_cache_fini(struct gt_flow_cache *c)
{
	free(c->key);
	free(c->slot);
	free(c->next);
}

/* First entry of the set a launch may occupy, and its key (never 0: corr is not). */
static uint32_t flow_set(uint32_t pid, uint32_t corr)
{
	return ((corr ^ (pid * 0x9e3779b1u)) & (GT_FLOW_SLOTS / GT_FLOW_WAYS - 1)) * GT_FLOW_WAYS;
}

/* The launch's entry in a cache, or NULL. The keys of a set share a cache line. */
static struct gt_flow_slot *flow_find(struct gt_flow_cache *c, uint32_t pid, uint32_t corr)
{
	uint32_t base = flow_set(pid, corr);
	uint64_t key = (uint64_t)pid << 32 | corr;

	for (unsigned k = 0; k < GT_FLOW_WAYS; k++)
		if (c->key[base + k] == key)
			return &c->slot[base + k];
	return NULL;
}

/* Where to remember a launch: its own entry, else an empty one, else the one its set took
 * first. */
static struct gt_flow_slot *flow_put(struct gt_flow_cache *c, uint32_t pid, uint32_t corr)
{
	uint32_t base = flow_set(pid, corr), way = GT_FLOW_WAYS;
	uint64_t key = (uint64_t)pid << 32 | corr;

	for (unsigned k = 0; k < GT_FLOW_WAYS; k++) {
		if (c->key[base + k] == key)
			return &c->slot[base + k];
		if (c->key[base + k] == 0 && way == GT_FLOW_WAYS)
			way = k;
	}
	if (way == GT_FLOW_WAYS) {
		uint8_t *next = &c->next[base / GT_FLOW_WAYS];

		way = *next;
		*next = (uint8_t)((way + 1) % GT_FLOW_WAYS);
	}
	c->key[base + way] = key;
	return &c->slot[base + way];
}

static void flow_fill(struct gt_flow_slot *s, uint32_t pid, uint32_t corr, uint64_t ts_ns,
                      uint32_t track, unsigned lane)
{
	s->pid = pid;
	s->corr = corr;
	s->ts_ns = ts_ns;
	s->track = track;
	s->lane = (uint8_t)lane;
	s->state = 1;
}

/* The launch's flow id, from the process of the track its slice is on. */
static uint64_t flow_id(const struct gt_timeline *m, uint32_t track, uint32_t corr)
{
	const struct gt_timeline_proc *p = m->procs[m->tracks[track]->proc];

	/* (process index << 32) | correlation id */
	return ((uint64_t)(p->index & 0xfffffu) << 32) | corr;
}

const struct gt_flow_slot *gt_flows_api(struct gt_timeline *m, uint32_t pid, uint32_t corr,
                                        uint64_t ts_ns, uint32_t track, unsigned lane, uint64_t *id)
{
	struct gt_flow_slot *g, *a;

	pid = gt_timeline_pid(m, pid); /* a reused pid's processes apart */
	g = flow_find(&m->gpu_flows, pid, corr);
	a = flow_put(&m->api_flows, pid, corr);

	if (g && g->state == 1) {
		/* its GPU work came first and started a pending flow: this call starts it too */
		g->state = 2;
		flow_fill(a, pid, corr, ts_ns, track, lane);
		a->state = 2;
		*id = flow_id(m, g->track, corr) | GT_FLOW_PENDING;
		m->flows++;
		return g;
	}
	flow_fill(a, pid, corr, ts_ns, track, lane);
	*id = flow_id(m, track, corr);
	return NULL;
}

const struct gt_flow_slot *gt_flows_gpu(struct gt_timeline *m, uint32_t pid, uint32_t corr,
                                        uint64_t ts_ns, uint32_t track, unsigned lane, uint64_t *id)
{
	struct gt_flow_slot *a, *g;

	pid = gt_timeline_pid(m, pid); /* a reused pid's processes apart */
	a = flow_find(&m->api_flows, pid, corr);
	*id = 0;
	if (a) {
		if (a->state == 2)
			return NULL; /* a later activity of a launch already drawn: one arrow */
		a->state = 2;
		*id = flow_id(m, a->track, corr);
		m->flows++;
		return a;
	}
	if (flow_find(&m->gpu_flows, pid, corr))
		return NULL; /* its first activity already waits for the call, or got it */
	g = flow_put(&m->gpu_flows, pid, corr);
	flow_fill(g, pid, corr, ts_ns, track, lane);
	*id = flow_id(m, track, corr) | GT_FLOW_PENDING;
	return NULL;
}
