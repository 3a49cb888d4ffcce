/* CPU->GPU flows: which launching API call and which GPU work get an arrow, decided once
 * for both timeline formats whatever order their records come in (docs/exporters.md,
 * "Flows"). Fixed memory: two caches of GT_FLOW_SLOTS launches. Runs in the CLI. */
#ifndef GPUTRACE_EXPORTERS_FLOWS_H
#define GPUTRACE_EXPORTERS_FLOWS_H

#include <stdint.h>

struct gt_timeline;

/* Flow matching: the launching API call and the GPU activity are paired by (pid,
 * correlation id) through two caches (calls waiting for their work, work waiting for its
 * call) of GT_FLOW_SLOTS entries in sets of GT_FLOW_WAYS, so pairing costs O(1) and
 * memory is fixed. A new entry replaces the one its set took first, so a partner is lost
 * only when GT_FLOW_SLOTS launches of its process came in between (correlation ids run on)
 * or, rarely, when launches of other processes filled its set; it then gets no arrow. The
 * model alone decides which pairs get an arrow, whatever order their records come in; both
 * timeline formats draw exactly those (docs/exporters.md, "Flows"). */
#define GT_FLOW_SLOTS (1u << 16)
#define GT_FLOW_WAYS  8u

/* Flow ids: (process index << 32) | correlation id, below 2^52; with this bit set, the id
 * of GPU work whose launch has not been seen yet ("pending"). Both stay below 2^53, exact
 * in JavaScript's doubles. */
#define GT_FLOW_PENDING (1ull << 52)

struct gt_flow_slot {
	uint32_t pid;
	uint32_t corr;
	uint64_t ts_ns; /* start of the API call or GPU activity */
	uint32_t track; /* index in gt_timeline.tracks */
	uint8_t lane;
	uint8_t state; /* 1 waiting for its partner, 2 paired */
};

struct gt_flow_cache {
	uint64_t *key;             /* GT_FLOW_SLOTS: pid << 32 | correlation id, 0 = empty */
	struct gt_flow_slot *slot; /* GT_FLOW_SLOTS, beside their keys */
	uint8_t *next;             /* per set: the way it replaces next (first in, first out) */
};

/* The caches' memory: GT_FLOW_SLOTS keys and entries. Returns 0 or -ENOMEM; fini frees
 * what init got, whether it failed or not. */
int gt_flows_cache_init(struct gt_flow_cache *c);
void gt_flows_cache_fini(struct gt_flow_cache *c);

/* An API call with a correlation id was drawn on lane `lane` of track `track`, starting at
 * ts_ns. *flow_id gets the id its slice carries (perfetto: flow_ids). If GPU work of this
 * launch was drawn before it and still waits, the pair is complete: returns that GPU slot
 * (the caller draws the arrow now; *flow_id is the pending id that GPU slice carries) and
 * counts it in m->flows. Otherwise remembers the call and returns NULL (*flow_id is the
 * launch's gt_flows_id, which GPU work drawn later may end). */
const struct gt_flow_slot *gt_flows_api(struct gt_timeline *m, uint32_t pid, uint32_t corr,
                                        uint64_t ts_ns, uint32_t track, unsigned lane,
                                        uint64_t *flow_id);

/* GPU work with a correlation id was drawn. *flow_id gets the id its slice ends (perfetto:
 * terminating_flow_ids), 0 for none. If its API call was drawn before it and waits, the
 * pair is complete: returns that API slot (the caller draws the arrow now), counted in
 * m->flows. Else, if it is the first GPU work of its launch, remembers it under a pending
 * id (GT_FLOW_PENDING set) that its API call will start when it comes, and returns NULL.
 * Later GPU work of a launch (the nodes of a CUDA graph) gets no arrow: one per launch. */
const struct gt_flow_slot *gt_flows_gpu(struct gt_timeline *m, uint32_t pid, uint32_t corr,
                                        uint64_t ts_ns, uint32_t track, unsigned lane,
                                        uint64_t *flow_id);

#endif /* GPUTRACE_EXPORTERS_FLOWS_H */
