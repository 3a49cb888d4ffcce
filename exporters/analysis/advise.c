/* Advice from a trace (advise.h): reads each trace - its steps, then its records - joins every
 * GPU activity to the call that launched it, applies the rules and keeps, per rule, the count,
 * the cost and the costliest instances. Runs in the CLI. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "advise-int.h"
#include "demangle.h"
#include "rankstats.h"
#include "stacks.h"
#include "text.h"

static const struct {
	const char *id, *title;
} rules[GT_ADVISE_RULE_MAX] = {
        [GT_ADVISE_PAGEABLE_MEMCPY] = {"pageable-memcpy", "copies from or to pageable host memory"},
        [GT_ADVISE_SYNC_MEMCPY] = {"sync-memcpy", "synchronous copies (the host waits)"},
        [GT_ADVISE_SYNC_MEMSET] = {"sync-memset", "synchronous memsets (the host waits)"},
        [GT_ADVISE_SYNC_API] = {"sync-api", "synchronizing calls inside steps"},
        [GT_ADVISE_STEADY_MALLOC] = {"steady-malloc", "allocations and frees after the first step"},
        [GT_ADVISE_IDLE_HOST] = {"idle-host", "GPU idle: waiting for the host to launch work"},
        [GT_ADVISE_IDLE_EVENT] = {"idle-event", "GPU idle: queued work waiting on an event"},
        [GT_ADVISE_IDLE_OTHER] = {"idle-other", "GPU idle: queued work that started late"},
        [GT_ADVISE_SHORT_KERNELS] = {"short-kernels", "kernels shorter than their launch call"},
        [GT_ADVISE_COPY_EXPOSED] = {"copy-exposed",
                                    "copies between host and GPU that no compute overlaps"},
        [GT_ADVISE_SERIALIZED] = {"serialized",
                                  "small kernels one after another on one stream, GPU otherwise "
                                  "empty"},
        [GT_ADVISE_SLOW_STEPS] = {"slow-steps", "steps far slower than the median step"},
        [GT_ADVISE_MEMORY_FULL] = {"memory-full", "device memory near the GPU's capacity"},
        [GT_ADVISE_MEMORY_GROWTH] = {"memory-growth", "device memory in use grows with every step"},
        [GT_ADVISE_STRAGGLER] = {"straggler", "a rank slower than the others in a step"},
        [GT_ADVISE_NCCL_EXPOSED] = {"nccl-exposed",
                                    "communication (NCCL) that no compute overlaps"},
};

const char *gt_advise_rule_id(unsigned rule)
{
	return rule < GT_ADVISE_RULE_MAX ? rules[rule].id : NULL;
}

const char *gt_advise_rule_title(unsigned rule)
{
	return rule < GT_ADVISE_RULE_MAX ? rules[rule].title : NULL;
}

int gt_advise_rule_parse(const char *id, unsigned *rule)
{
	for (unsigned i = 0; i < GT_ADVISE_RULE_MAX; i++)
		if (strcmp(id, rules[i].id) == 0) {
			*rule = i;
			return 0;
		}
	return -EINVAL;
}

int gt_advise_new(const struct gt_advise_options *opts, struct gt_advise **ret)
{
	struct gt_advise *a = calloc(1, sizeof(*a));
	struct adv_priv *p = calloc(1, sizeof(*p));
	struct gt_rankstats_options ro = {.min_lag_pct = GT_RANKSTATS_MIN_LAG_PCT};

	if (!a || !p)
		goto fail;
	if (opts)
		a->opts = *opts;
	if (a->opts.top == 0 || a->opts.top > GT_ADVISE_TOP)
		a->opts.top = GT_ADVISE_TOP;
	ro.step_name = a->opts.step_name;
	if (gt_rankstats_new(&ro, &p->rs) < 0 || gt_idmap_init(&p->place_map, 64) < 0)
		goto fail;
	for (unsigned i = 0; i < GT_ADVISE_RULE_MAX; i++)
		p->acc[i].rule = i;
	a->priv = p;
	*ret = a;
	return 0;
fail:
	if (p) {
		gt_rankstats_free(p->rs);
		gt_idmap_fini(&p->place_map);
	}
	free(p);
	free(a);
	return -ENOMEM;
}

void gt_advise_free(struct gt_advise *a)
{
	struct adv_priv *p;

	if (!a)
		return;
	p = a->priv;
	if (p) {
		gt_rankstats_free(p->rs);
		adv_source_free(p);
	}
	free(p);
	for (size_t i = 0; i < a->ninputs; i++)
		free(a->inputs[i].name);
	free(a->inputs);
	free(a->findings);
	free(a);
}

/* ---- instances ---------------------------------------------------------------------------- */

/* ts since zero; 0 for a time before it (a damaged trace). */
static uint64_t since(uint64_t ts, uint64_t zero)
{
	return ts > zero ? ts - zero : 0;
}

static void set_add(struct gt_advise_set *s, int64_t v)
{
	if (v < 0)
		return;
	for (uint32_t i = 0; i < s->n; i++)
		if (s->v[i] == v)
			return;
	if (s->n == GT_ADVISE_WHERE) {
		s->more = true;
		return;
	}
	/* kept ascending */
	uint32_t i = s->n++;
	while (i > 0 && s->v[i - 1] > v) {
		s->v[i] = s->v[i - 1];
		i--;
	}
	s->v[i] = v;
}

const struct gt_step *adv_step_at(const struct adv_trace *t, uint32_t pid, uint64_t ts_ns)
{
	const struct gt_step *s;
	size_t n, lo = 0, hi;

	if (!t->have_steps)
		return NULL;
	s = gt_steps_of(t->steps, pid, &n);
	hi = n;
	/* the last step that starts at or before ts_ns */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (s[mid].start_ns <= ts_ns)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || ts_ns >= s[lo - 1].end_ns)
		return NULL;
	return &s[lo - 1];
}

bool adv_steady(const struct adv_trace *t, uint32_t pid, uint64_t ts_ns,
                const struct gt_step **step)
{
	const struct gt_step *s = adv_step_at(t, pid, ts_ns);
	size_t n = 0;

	*step = s;
	if (!t->have_steps)
		return true;
	return s && (t->first_step == 0 || s != gt_steps_of(t->steps, pid, &n));
}

void adv_note(struct gt_advise *a, struct adv_trace *t, unsigned rule, uint64_t start_ns,
              uint64_t end_ns, uint64_t cost_ns, uint32_t pid, uint32_t gpu, int64_t stream,
              uint32_t stack, const char *what)
{
	struct adv_priv *p = a->priv;
	struct gt_advise_finding *f = &p->acc[rule];
	struct gt_catalog_process *proc = gt_catalog_process(&t->cat, pid);
	const struct gt_step *step = NULL;
	bool steady = adv_steady(t, pid, start_ns, &step);
	struct gt_advise_instance in = {
	        .start_ns = since(start_ns, t->zero_ns),
	        .end_ns = since(end_ns, t->zero_ns),
	        .cost_ns = cost_ns,
	        .input = t->input,
	        .pid = proc ? proc->out_pid : pid,
	        .rank = proc ? proc->rank : -1,
	        .gpu = -1,
	        .stream = stream,
	        .step = step ? step->number : -1,
	};
	uint32_t i;

	if (gpu != UINT32_MAX && gpu < t->cat.ngpus)
		in.gpu = (int32_t)gt_catalog_gpu_final(&t->cat, t->cat.gpus[gpu])->number;
	snprintf(in.what, sizeof(in.what), "%s", what ? what : "");
	f->count++;
	f->cost_ns += cost_ns;
	if (step && steady)
		f->step_cost_ns += cost_ns;
	if (stack && t->stacks && adv_source_note(t, rule, pid, stack, cost_ns) < 0)
		t->src_err = -ENOMEM;
	set_add(&f->pids, in.pid);
	set_add(&f->ranks, in.rank);
	set_add(&f->gpus, in.gpu);
	set_add(&f->streams, in.stream);
	/* the costliest first; among equals, the earliest (instances come in no time order) */
	for (i = f->ntop; i > 0; i--) {
		const struct gt_advise_instance *o = &f->top[i - 1];
		if (o->cost_ns > in.cost_ns ||
		    (o->cost_ns == in.cost_ns &&
		     (o->input < in.input || (o->input == in.input && o->start_ns <= in.start_ns))))
			break;
	}
	if (i >= a->opts.top)
		return;
	if (f->ntop < a->opts.top)
		f->ntop++;
	memmove(&f->top[i + 1], &f->top[i], (f->ntop - 1 - i) * sizeof(f->top[0]));
	adv_source(t, pid, stack, in.source, sizeof(in.source));
	f->top[i] = in;
}

const char *adv_kernel_name(const struct gt_advise *a, const struct adv_trace *t, uint32_t id,
                            char *buf, size_t bytes)
{
	char name[GT_DEMANGLE_BUF_BYTES];
	size_t len = 0;
	const char *s = gt_reader_string(t->r, id, &len);

	if (!s) {
		snprintf(buf, bytes, "<string %u>", id);
		return buf;
	}
	if (len >= sizeof(name))
		len = sizeof(name) - 1;
	memcpy(name, s, len);
	name[len] = '\0';
	if (a->opts.mangled) {
		snprintf(buf, bytes, "%s", name);
		return buf;
	}
	return gt_demangle_base(name, buf, bytes);
}

/* ---- reading a trace ---------------------------------------------------------------------- */

/* What an API function is to the rules. */
enum api_class {
	API_OTHER = 1,
	API_LAUNCH, /* launches GPU work: kernels, copies, memsets, graphs */
	API_SYNC,   /* waits for the GPU: device, stream, event, context synchronize */
	API_ALLOC,  /* allocates or frees device or pinned memory (not stream-ordered) */
};

static bool starts(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

static unsigned classify(const char *name)
{
	static const char *const sync[] = {
	        "cudaDeviceSynchronize", "cudaStreamSynchronize", "cudaEventSynchronize",
	        "cudaThreadSynchronize", "cuCtxSynchronize",      "cuStreamSynchronize",
	        "cuEventSynchronize",
	};
	static const char *const alloc[] = {
	        "cudaMalloc",         "cudaFree",          "cudaMallocHost",    "cudaFreeHost",
	        "cudaHostAlloc",      "cudaMallocManaged", "cudaMallocPitch",   "cudaMalloc3D",
	        "cudaMallocArray",    "cudaFreeArray",     "cuMemAlloc",        "cuMemAlloc_v2",
	        "cuMemFree",          "cuMemFree_v2",      "cuMemAllocHost",    "cuMemAllocHost_v2",
	        "cuMemFreeHost",      "cuMemHostAlloc",    "cuMemAllocManaged", "cuMemAllocPitch",
	        "cuMemAllocPitch_v2",
	};

	for (size_t i = 0; i < sizeof(sync) / sizeof(sync[0]); i++)
		if (strcmp(name, sync[i]) == 0)
			return API_SYNC;
	for (size_t i = 0; i < sizeof(alloc) / sizeof(alloc[0]); i++)
		if (strcmp(name, alloc[i]) == 0)
			return API_ALLOC;
	if (starts(name, "cudaLaunch") || starts(name, "cuLaunch") || starts(name, "cudaMemcpy") ||
	    starts(name, "cuMemcpy") || starts(name, "cudaMemset") || starts(name, "cuMemset") ||
	    starts(name, "cudaGraphLaunch") || starts(name, "cuGraphLaunch"))
		return API_LAUNCH;
	return API_OTHER;
}

static int api_class(struct adv_trace *t, uint32_t name_id, const char **name)
{
	char buf[128];
	size_t len = 0;
	const char *s = gt_reader_string(t->r, name_id, &len);
	uint32_t c = gt_idmap_get(&t->api_class, name_id, 0);

	*name = NULL;
	if (!s)
		return API_OTHER;
	if (len >= sizeof(buf))
		len = sizeof(buf) - 1;
	memcpy(buf, s, len);
	buf[len] = '\0';
	*name = s;
	if (c)
		return (int)c;
	c = classify(buf);
	if (gt_idmap_put(&t->api_class, name_id, 0, c) < 0)
		return -ENOMEM;
	return (int)c;
}

#define GROW(arr, n, cap)                                                                          \
	do {                                                                                       \
		if ((n) == (cap)) {                                                                \
			size_t c_ = (cap) ? 2 * (cap) : 1024;                                      \
			void *p_ = realloc((arr), c_ * sizeof(*(arr)));                            \
			if (!p_)                                                                   \
				return -ENOMEM;                                                    \
			(arr) = p_;                                                                \
			(cap) = c_;                                                                \
		}                                                                                  \
	} while (0)

static int add_act(struct adv_trace *t, const struct gt_gpu_span *s, uint32_t pid, unsigned kind,
                   unsigned flags, uint32_t name_id, uint64_t bytes, uint32_t copy_kind)
{
	struct gt_catalog_gpu *g;

	if (s->end_ns <= s->start_ns)
		return 0;
	g = gt_catalog_gpu(&t->cat, pid, s->device_id);
	if (!g)
		return -ENOMEM;
	GROW(t->acts, t->nacts, t->capacts);
	t->acts[t->nacts++] = (struct act){
	        .start_ns = s->start_ns,
	        .end_ns = s->end_ns,
	        .bytes = bytes,
	        .pid = pid,
	        .corr = s->correlation_id,
	        .gpu = g->index,
	        .stream = s->stream_id,
	        .name_id = name_id,
	        .kind = (uint16_t)kind,
	        .flags = (uint16_t)flags,
	        .copy_kind = copy_kind,
	};
	return 0;
}

/* A call that waits, in the steady state. */
static void on_sync_call(struct gt_advise *a, struct adv_trace *t, const struct gt_rec_api *c,
                         const char *name)
{
	const struct gt_step *s;

	if (!adv_steady(t, c->hdr.pid, c->start_ns, &s))
		return;
	adv_note(a, t, GT_ADVISE_SYNC_API, c->start_ns, c->end_ns, c->end_ns - c->start_ns,
	         c->hdr.pid, UINT32_MAX, -1, c->stack_id, name);
}

/* An allocation call after its process's first step ended. */
static void on_alloc_call(struct gt_advise *a, struct adv_trace *t, const struct gt_rec_api *c,
                          const char *name)
{
	const struct gt_step *s;
	size_t n = 0;

	if (!t->have_steps)
		return;
	s = gt_steps_of(t->steps, c->hdr.pid, &n);
	if (n <= t->first_step || c->start_ns < (t->first_step ? s[0].end_ns : s[0].start_ns))
		return;
	adv_note(a, t, GT_ADVISE_STEADY_MALLOC, c->start_ns, c->end_ns, c->end_ns - c->start_ns,
	         c->hdr.pid, UINT32_MAX, -1, c->stack_id, name);
}

static int feed(struct gt_advise *a, struct adv_trace *t, const union gt_record *rec)
{
	const char *name;
	char buf[128];
	int cls, ret;
	uint32_t pid = rec->hdr.pid;

	ret = gt_catalog_observe(&t->cat, rec);
	if (ret < 0)
		return ret;
	switch (rec->hdr.type) {
	case GT_REC_KERNEL: {
		const struct gt_rec_kernel *k = &rec->kernel;
		uint64_t blocks = (uint64_t)k->grid_x * k->grid_y * k->grid_z;
		size_t n = t->nacts;

		ret = add_act(t, &k->span, pid, ACT_KERNEL, k->graph_id ? ACT_IN_GRAPH : 0,
		              k->name_id, 0, 0);
		if (ret == 0 && t->nacts > n)
			t->acts[n].blocks = blocks < UINT32_MAX ? (uint32_t)blocks : UINT32_MAX;
		return ret;
	}
	case GT_REC_MEMCPY: {
		const struct gt_rec_memcpy *m = &rec->memcpy;
		unsigned flags = 0;

		if (m->src_kind == GT_MEM_PAGEABLE || m->dst_kind == GT_MEM_PAGEABLE)
			flags |= ACT_PAGEABLE;
		if (!(m->flags & GT_COPY_ASYNC) && !m->graph_id)
			flags |= ACT_SYNC;
		if (m->graph_id)
			flags |= ACT_IN_GRAPH;
		return add_act(t, &m->span, pid, ACT_MEMCPY, flags, 0, m->bytes, m->copy_kind);
	}
	case GT_REC_MEMSET: {
		const struct gt_rec_memset *m = &rec->memset;
		unsigned flags = 0;

		if (!(m->flags & GT_COPY_ASYNC) && !m->graph_id)
			flags |= ACT_SYNC;
		if (m->graph_id)
			flags |= ACT_IN_GRAPH;
		return add_act(t, &m->span, pid, ACT_MEMSET, flags, 0, m->bytes, m->mem_kind);
	}
	case GT_REC_GRAPH:
		return add_act(t, &rec->graph.span, pid, ACT_GRAPH, 0, 0, 0, 0);
	case GT_REC_MEMORY:
		/* device memory, as the catalog counts a GPU's (host memory is not the GPU's) */
		if (rec->memory.mem_kind != GT_MEM_DEVICE && rec->memory.mem_kind != GT_MEM_MANAGED)
			return 0;
		GROW(t->mem, t->nmem, t->capmem);
		t->mem[t->nmem++] = (struct memev){
		        .ts_ns = rec->memory.ts_ns,
		        .delta = rec->memory.op == GT_MEMORY_FREE ? 0 - rec->memory.bytes
		                                                  : rec->memory.bytes,
		        .pid = pid,
		};
		return 0;
	case GT_REC_SYNC:
		if (rec->sync.kind != GT_SYNC_STREAM_WAIT)
			return 0;
		GROW(t->waits, t->nwaits, t->capwaits);
		t->waits[t->nwaits++] = (struct wait){
		        .ts_ns = rec->sync.span.start_ns,
		        .pid = pid,
		        .stream = rec->sync.span.stream_id,
		};
		return 0;
	case GT_REC_API:
		cls = api_class(t, rec->api.name_id, &name);
		if (cls < 0)
			return cls;
		if (rec->api.end_ns < rec->api.start_ns)
			return 0;
		if (name) {
			size_t len = 0;
			gt_reader_string(t->r, rec->api.name_id, &len);
			if (len >= sizeof(buf))
				len = sizeof(buf) - 1;
			memcpy(buf, name, len);
			buf[len] = '\0';
			name = buf;
		}
		if (cls == API_SYNC)
			on_sync_call(a, t, &rec->api, name);
		else if (cls == API_ALLOC)
			on_alloc_call(a, t, &rec->api, name);
		else if (cls == API_LAUNCH && rec->api.correlation_id) {
			GROW(t->calls, t->ncalls, t->capcalls);
			t->calls[t->ncalls++] = (struct call){
			        .start_ns = rec->api.start_ns,
			        .end_ns = rec->api.end_ns,
			        .pid = pid,
			        .corr = rec->api.correlation_id,
			        .stack = rec->api.stack_id,
			};
		}
		return 0;
	default:
		return 0;
	}
}

static int cmp_call(const void *x, const void *y)
{
	const struct call *a = x, *b = y;

	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	return a->corr < b->corr ? -1 : a->corr > b->corr;
}

static int cmp_act_corr(const void *x, const void *y)
{
	const struct act *a = x, *b = y;

	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	if (a->corr != b->corr)
		return a->corr < b->corr ? -1 : 1;
	return a->start_ns < b->start_ns ? -1 : a->start_ns > b->start_ns;
}

/* Every activity gets its launch call (same process, same correlation id). */
static void join_calls(struct adv_trace *t)
{
	size_t j = 0;

	adv_sort(t->calls, t->ncalls, sizeof(*t->calls), cmp_call);
	adv_sort(t->acts, t->nacts, sizeof(*t->acts), cmp_act_corr);
	for (size_t i = 0; i < t->nacts; i++) {
		struct act *x = &t->acts[i];

		if (!x->corr)
			continue;
		while (j < t->ncalls && (t->calls[j].pid < x->pid ||
		                         (t->calls[j].pid == x->pid && t->calls[j].corr < x->corr)))
			j++;
		if (j < t->ncalls && t->calls[j].pid == x->pid && t->calls[j].corr == x->corr) {
			x->call_start_ns = t->calls[j].start_ns;
			x->call_end_ns = t->calls[j].end_ns;
			x->stack = t->calls[j].stack;
		}
	}
}

static void trace_fini(struct adv_trace *t)
{
	gt_catalog_fini(&t->cat);
	gt_steps_free(t->steps);
	gt_idmap_fini(&t->api_class);
	free(t->acts);
	free(t->calls);
	free(t->waits);
	free(t->mem);
	adv_source_trace_fini(t);
}

static int read_trace(struct gt_advise *a, struct adv_trace *t, const char **errmsg)
{
	const union gt_record *rec;
	int ret;

	ret = gt_reader_rewind(t->r);
	while (ret >= 0 && (ret = gt_reader_next(t->r, &rec)) > 0) {
		ret = feed(a, t, rec);
		if (ret < 0)
			*errmsg = "out of memory";
	}
	if (ret < 0 && !*errmsg)
		*errmsg = "cannot read the trace";
	return ret;
}

int gt_advise_add(struct gt_advise *a, struct gt_reader *r, const char *name, const char **errmsg)
{
	struct adv_priv *p = a->priv;
	struct adv_trace t = {
	        .r = r, .input = (uint32_t)a->ninputs, .first_step = a->opts.all_steps ? 0 : 1};
	struct gt_trace_times tt;
	struct gt_advise_input *in;
	const char *msg = NULL;
	int ret;

	*errmsg = NULL;
	in = realloc(a->inputs, (a->ninputs + 1) * sizeof(*in));
	if (!in)
		goto nomem;
	a->inputs = in;
	in = &a->inputs[a->ninputs];
	memset(in, 0, sizeof(*in));
	in->name = strdup(name);
	if (!in->name)
		goto nomem;
	a->ninputs++;
	ret = gt_reader_times(r, &tt);
	if (ret < 0) {
		*errmsg = "cannot read the trace's time base";
		return ret;
	}
	t.zero_ns = in->zero_ns = tt.zero_ns;
	in->span_ns = tt.span_ns;
	a->span_ns += tt.span_ns;

	ret = gt_catalog_init(&t.cat, r);
	if (ret == 0)
		ret = gt_idmap_init(&t.api_class, 64);
	if (ret == 0)
		ret = gt_idmap_init(&t.src_map, 64);
	if (ret == 0)
		ret = gt_stacks_new(&t.stacks);
	if (ret < 0)
		goto nomem_t;
	ret = gt_reader_rewind(r); /* report has read it already */
	if (ret == 0)
		ret = gt_stacks_load(t.stacks, r);
	if (ret < 0) {
		*errmsg = "cannot read the trace";
		goto out;
	}
	if (!gt_stacks_count(t.stacks)) {
		gt_stacks_free(t.stacks);
		t.stacks = NULL;
	}
	ret = gt_steps_scan(r, a->opts.step_name, &t.steps);
	if (ret < 0) {
		*errmsg = ret == -ENOMEM ? "out of memory" : "cannot read the trace";
		goto out;
	}
	in->steps = gt_steps_count(t.steps);
	for (size_t i = 0; i < gt_steps_processes(t.steps); i++) {
		uint32_t pid;
		size_t n = 0;

		gt_steps_at(t.steps, i, &pid, &n);
		a->steady_steps += n > t.first_step ? n - t.first_step : 0;
	}
	in->step_family = gt_steps_family(t.steps);
	t.have_steps = in->steps > 0;
	a->steps += in->steps;

	ret = read_trace(a, &t, errmsg);
	if (ret < 0)
		goto out;
	join_calls(&t);
	ret = adv_rules_copies(a, &t);
	if (ret == 0)
		ret = adv_rules_idle(a, &t);
	if (ret == 0)
		ret = adv_rules_steps(a, &t);
	if (ret == 0)
		ret = adv_rules_memory(a, &t);
	if (ret == 0)
		ret = t.src_err;
	if (ret == 0)
		ret = adv_source_trace_done(a, &t);
	if (ret < 0) {
		*errmsg = "out of memory";
		goto out;
	}

	/* across ranks: the stats of every rank, compared in finish */
	ret = gt_rankstats_add(p->rs, r, name, &msg);
	if (ret < 0)
		*errmsg = msg;
out:
	trace_fini(&t);
	return ret < 0 ? ret : 0;
nomem_t:
	trace_fini(&t);
nomem:
	*errmsg = "out of memory";
	return -ENOMEM;
}

/* ---- across ranks, and the order of findings ----------------------------------------------- */

/* Add an instance made outside adv_note (across ranks): counted (in the per-step cost when
 * steady: not the group's first step), and kept when among the costliest. */
static void note_instance(struct gt_advise *a, struct gt_advise_finding *f,
                          const struct gt_advise_instance *in, bool steady)
{
	uint32_t j = f->ntop;

	f->count++;
	f->cost_ns += in->cost_ns;
	if (steady)
		f->step_cost_ns += in->cost_ns;
	set_add(&f->pids, in->pid);
	set_add(&f->ranks, in->rank);
	set_add(&f->gpus, in->gpu);
	while (j > 0 && f->top[j - 1].cost_ns < in->cost_ns)
		j--;
	if (j >= a->opts.top)
		return;
	if (f->ntop < a->opts.top)
		f->ntop++;
	memmove(&f->top[j + 1], &f->top[j], (f->ntop - 1 - j) * sizeof(f->top[0]));
	f->top[j] = *in;
}

/* Stragglers: each step whose slowest rank lagged the others' median compute time by
 * GT_RANKSTATS_MIN_LAG_PCT or more (stats across ranks' own test), costing that lag. */
static void stragglers(struct gt_advise *a)
{
	struct adv_priv *p = a->priv;
	struct gt_rankstats *rs = p->rs;
	struct gt_advise_finding *f = &p->acc[GT_ADVISE_STRAGGLER];

	for (size_t i = 0; i < rs->nsteps; i++) {
		const struct gt_rankstats_step_row *row = &rs->steps[i];
		const struct gt_rankstats_group *g;
		struct gt_advise_instance in = {.rank = -1, .gpu = -1, .stream = -1};
		uint64_t zero = 0;
		bool steady = false;

		if (!row->straggler)
			continue;
		g = rs->groups[row->slowest];
		if (g->step_input < a->ninputs)
			zero = a->inputs[g->step_input].zero_ns;
		for (size_t k = 0; k < g->nsteps; k++)
			if (g->step_numbers[k] == row->number) {
				steady = k > 0 || a->opts.all_steps;
				in.start_ns = since(g->steps[k].start_ns, zero);
				in.end_ns = since(g->steps[k].end_ns, zero);
			}
		in.cost_ns = row->lag_ns;
		in.input = g->step_input;
		in.pid = g->step_pid;
		in.rank = g->rank;
		in.step = row->number;
		snprintf(in.what, sizeof(in.what),
		         "step %lld: %.1f%% more compute than the others'", (long long)row->number,
		         row->lag_pct);
		note_instance(a, f, &in, steady);
	}
}

/* Communication no compute overlapped, per rank and step after its first: the rank's GPU
 * ran NCCL's kernels and nothing else, most often waiting for the other ranks. */
static void nccl_exposed(struct gt_advise *a)
{
	struct adv_priv *p = a->priv;
	struct gt_rankstats *rs = p->rs;
	struct gt_advise_finding *f = &p->acc[GT_ADVISE_NCCL_EXPOSED];
	char b1[32], b2[32];

	for (size_t i = 0; i < rs->ngroups; i++) {
		const struct gt_rankstats_group *g = rs->groups[i];
		uint64_t zero = g->step_input < a->ninputs ? a->inputs[g->step_input].zero_ns : 0;

		for (size_t k = a->opts.all_steps ? 0 : 1; k < g->nsteps; k++) {
			const struct gt_busy_window *w = &g->steps[k];
			struct gt_advise_instance in = {.rank = g->rank, .gpu = -1, .stream = -1};
			uint64_t exposed =
			        w->comm_ns > w->overlap_ns ? w->comm_ns - w->overlap_ns : 0;

			if (!exposed)
				continue;
			in.start_ns = since(w->start_ns, zero);
			in.end_ns = since(w->end_ns, zero);
			in.cost_ns = exposed;
			in.input = g->step_input;
			in.pid = g->step_pid;
			in.step = g->step_numbers[k];
			snprintf(in.what, sizeof(in.what),
			         "step %lld: %s of communication, %s of it under compute",
			         (long long)in.step, gt_fmt_ns((double)w->comm_ns, b1, sizeof(b1)),
			         gt_fmt_ns((double)w->overlap_ns, b2, sizeof(b2)));
			note_instance(a, f, &in, true);
		}
	}
}

static int cmp_finding(const void *x, const void *y)
{
	const struct gt_advise_finding *a = x, *b = y;

	if (a->cost_ns != b->cost_ns)
		return a->cost_ns > b->cost_ns ? -1 : 1;
	return a->rule < b->rule ? -1 : a->rule > b->rule;
}

int gt_advise_finish(struct gt_advise *a)
{
	struct adv_priv *p = a->priv;
	size_t n = 0;

	if (gt_rankstats_finish(p->rs) < 0)
		return -ENOMEM;
	stragglers(a);
	nccl_exposed(a);
	adv_source_finish(a);
	a->findings = calloc(GT_ADVISE_RULE_MAX, sizeof(*a->findings));
	if (!a->findings)
		return -ENOMEM;
	for (unsigned i = 0; i < GT_ADVISE_RULE_MAX; i++) {
		struct gt_advise_finding *f = &p->acc[i];

		if (!f->count)
			continue;
		f->steps = a->steady_steps;
		f->per_step_ns = a->steady_steps ? f->step_cost_ns / a->steady_steps : 0;
		a->findings[n++] = *f;
	}
	adv_sort(a->findings, n, sizeof(*a->findings), cmp_finding);
	a->nfindings = n;
	return 0;
}
