/* Stats across ranks, the collecting side: each trace is read once for its steps and once for
 * the rest; every record goes to its group (rank, process, GPU or host) - its per-name tables,
 * and its GPUs' busy time (busy.c), which also gives each step its work; then the steps are
 * compared across groups. Runs in the CLI; memory grows with groups x names and groups x
 * steps, and with GPUs x GT_BUSY_PENDING while a trace is read. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "idmap.h"
#include "ranks.h"
#include "rankstats-int.h"
#include "steps.h"

/* Largest string id whose NCCL verdict is cached in a flat array. */
#define NCCL_CACHE_MAX (1u << 20)

/* Group keys (idmap: a, b). */
#define KEY_RANK    (1ull << 56)
#define KEY_PROCESS (2ull << 56) /* | host index; b = pid */
#define KEY_DEVICE  (3ull << 56) /* b = global GPU */
#define KEY_HOST    (4ull << 56) /* | host index */

/* One trace being read. */
struct pass {
	struct gt_rankstats *rs;
	struct rs_priv *pv;
	struct gt_reader *r;
	uint32_t input;
	struct gt_catalog cat;
	struct gt_steps *steps; /* NULL when the trace has no NVTX records */

	uint32_t *proc_group; /* catalog process index -> group + 1 */
	uint8_t *proc_info;   /* what have_info was when it was mapped */
	size_t nproc;
	uint32_t *gpu_global; /* catalog GPU index -> global GPU + 1 */
	size_t ngpu;
	uint8_t *nccl; /* kernel name id -> 1 other, 2 NCCL's */
	size_t nnccl;

	struct gt_idmap set_map;         /* (group, global GPU) -> set + 1 */
	struct gt_busy_scratch *scratch; /* the sets' merges */
	struct gt_busy **sets;
	uint32_t *set_group, *set_gpu;
	size_t nsets, capsets;
};

/* ---- options ---- */

static const char *const by_names[GT_RANKSTATS_BY_MAX] = {"rank", "process", "device", "host"};
static const char *const report_names[] = {"breakdown", "steps",  "stragglers", "kernels",
                                           "api",       "memcpy", "memset",     "nvtx"};
#define NREPORTS (sizeof(report_names) / sizeof(report_names[0]))

int gt_rankstats_parse_by(const char *name, unsigned *by)
{
	for (unsigned i = 0; name && i < GT_RANKSTATS_BY_MAX; i++)
		if (strcmp(name, by_names[i]) == 0) {
			*by = i;
			return 0;
		}
	return -EINVAL;
}

const char *gt_rankstats_by_name(unsigned by)
{
	return by < GT_RANKSTATS_BY_MAX ? by_names[by] : "unknown";
}

int gt_rankstats_parse_reports(const char *list, unsigned *reports)
{
	return gt_stats_parse_names(list, report_names, NREPORTS, GT_RANKSTATS_REPORT_ALL,
	                            reports);
}

/* ---- the whole ---- */

int gt_rankstats_new(const struct gt_rankstats_options *opts, struct gt_rankstats **ret)
{
	static const struct gt_rankstats_options defaults = {.min_lag_pct =
	                                                             GT_RANKSTATS_MIN_LAG_PCT};
	struct gt_rankstats *rs;
	struct rs_priv *pv;

	if (!opts)
		opts = &defaults;
	if (opts->by >= GT_RANKSTATS_BY_MAX || opts->format >= GT_STATS_FORMAT_MAX ||
	    (opts->reports & ~(unsigned)GT_RANKSTATS_REPORT_ALL) || !(opts->min_lag_pct >= 0))
		return -EINVAL;
	rs = calloc(1, sizeof(*rs));
	pv = calloc(1, sizeof(*pv));
	if (!rs || !pv)
		goto nomem;
	rs->priv = pv;
	rs->opts = *opts;
	if (!rs->opts.reports)
		rs->opts.reports = GT_RANKSTATS_REPORT_ALL;
	rs->opts.step_name = NULL;
	if (opts->step_name && !(pv->step_name = strdup(opts->step_name)))
		goto nomem;
	rs->opts.step_name = pv->step_name;
	if (gt_idmap_init(&pv->groups, 64) < 0 || gt_idmap_init(&pv->gpus, 64) < 0 ||
	    gt_idmap_init(&pv->set_inputs, 64) < 0)
		goto nomem;
	*ret = rs;
	return 0;
nomem:
	if (rs)
		gt_rankstats_free(rs);
	else
		free(pv);
	return -ENOMEM;
}

static void tables_free(struct rs_tables *t)
{
	if (!t)
		return;
	gt_stats_table_fini(&t->kernels);
	gt_stats_table_fini(&t->api);
	gt_stats_table_fini(&t->nvtx);
	for (unsigned i = 0; i < GT_MEMCPY_MAX; i++)
		gt_stats_series_fini(&t->memcpy[i].time);
	for (unsigned i = 0; i < GT_MEM_MAX; i++)
		gt_stats_series_fini(&t->memset[i].time);
	free(t);
}

void gt_rankstats_free(struct gt_rankstats *rs)
{
	struct rs_priv *pv;

	if (!rs)
		return;
	pv = rs->priv;
	for (size_t i = 0; i < rs->ngroups; i++) {
		struct gt_rankstats_group *g = rs->groups[i];

		tables_free(g->priv);
		free(g->host);
		free(g->steps);
		free(g->step_numbers);
		free(g);
	}
	free(rs->groups);
	for (size_t i = 0; i < rs->ninputs; i++) {
		free(rs->inputs[i].name);
		free(rs->inputs[i].host);
		free(rs->inputs[i].command);
		free(rs->inputs[i].version);
	}
	free(rs->inputs);
	free(rs->steps);
	free(rs->stragglers);
	if (pv) {
		for (size_t i = 0; i < pv->nhosts; i++)
			free(pv->hosts[i]);
		free(pv->hosts);
		gt_idmap_fini(&pv->groups);
		gt_idmap_fini(&pv->gpus);
		gt_idmap_fini(&pv->set_inputs);
		free(pv->step_name);
		free(pv);
	}
	free(rs);
}

/* ---- hosts, GPUs, groups ---- */

/* Index of host name s among those seen; added when new. Returns -ENOMEM or the index. */
static int64_t host_index(struct rs_priv *pv, const char *s)
{
	char *copy;

	for (size_t i = 0; i < pv->nhosts; i++)
		if (strcmp(pv->hosts[i], s) == 0)
			return (int64_t)i;
	if (pv->nhosts == pv->caphosts) {
		size_t cap = pv->caphosts ? pv->caphosts * 2 : 8;
		char **n = realloc(pv->hosts, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		pv->hosts = n;
		pv->caphosts = cap;
	}
	copy = strdup(s);
	if (!copy)
		return -ENOMEM;
	pv->hosts[pv->nhosts] = copy;
	return (int64_t)pv->nhosts++;
}

/* The host a process names, else the trace header's, else "". */
static const char *host_of(const struct pass *ps, const struct gt_catalog_process *p)
{
	const struct gt_trace_header *h = gt_reader_header(ps->r);
	const char *s = p->host_id ? gt_reader_string(ps->r, p->host_id, NULL) : NULL;

	if (!s && h && h->info.hostname)
		s = h->info.hostname;
	return s ? s : "";
}

static struct gt_rankstats_group *group_new(struct gt_rankstats *rs, uint64_t a, uint64_t b)
{
	struct rs_priv *pv = rs->priv;
	struct gt_rankstats_group *g;

	if (rs->ngroups == rs->capgroups) {
		size_t cap = rs->capgroups ? rs->capgroups * 2 : 16;
		struct gt_rankstats_group **n = realloc(rs->groups, cap * sizeof(*n));

		if (!n)
			return NULL;
		rs->groups = n;
		rs->capgroups = cap;
	}
	g = calloc(1, sizeof(*g));
	if (!g)
		return NULL;
	g->priv = calloc(1, sizeof(struct rs_tables));
	if (!g->priv || gt_idmap_put(&pv->groups, a, b, (uint32_t)rs->ngroups + 1) < 0) {
		free(g->priv);
		free(g);
		return NULL;
	}
	g->index = (uint32_t)rs->ngroups;
	g->rank = -1;
	g->gpu = -1;
	g->busy.first_ns = UINT64_MAX;
	rs->groups[rs->ngroups++] = g;
	return g;
}

/* The steps of process pid of this trace become g's (the first process of a group with steps
 * gives them). Returns 0 or -ENOMEM. */
static int group_take_steps(struct pass *ps, struct gt_rankstats_group *g, uint32_t pid)
{
	const struct gt_step *st;
	size_t n = 0;

	if (g->steps || !ps->steps)
		return 0;
	st = gt_steps_of(ps->steps, pid, &n);
	if (!n)
		return 0;
	g->steps = calloc(n, sizeof(*g->steps));
	g->step_numbers = calloc(n, sizeof(*g->step_numbers));
	if (!g->steps || !g->step_numbers)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		g->step_numbers[i] = st[i].number;
		g->steps[i].start_ns = st[i].start_ns;
		g->steps[i].end_ns = st[i].end_ns;
	}
	g->nsteps = n;
	g->step_pid = pid;
	g->step_input = ps->input;
	return 0;
}

/* The global index of a GPU of this trace: its uuid's, or its own when it has none. Returns
 * the index or -ENOMEM. */
static int64_t gpu_global(struct pass *ps, const struct gt_catalog_gpu *g)
{
	struct rs_priv *pv = ps->pv;
	uint64_t a, b;
	uint32_t v;

	if (g->index < ps->ngpu && ps->gpu_global[g->index])
		return ps->gpu_global[g->index] - 1;
	if (g->index >= ps->ngpu) {
		size_t n = ps->ngpu ? ps->ngpu : 16;
		uint32_t *m;

		while (n <= g->index)
			n *= 2;
		m = realloc(ps->gpu_global, n * sizeof(*m));
		if (!m)
			return -ENOMEM;
		memset(m + ps->ngpu, 0, (n - ps->ngpu) * sizeof(*m));
		ps->gpu_global = m;
		ps->ngpu = n;
	}
	if (g->have_uuid) {
		memcpy(&a, g->uuid, 8);
		memcpy(&b, g->uuid + 8, 8);
	} else {
		/* no uuid: nothing says it is another trace's GPU */
		a = 0;
		b = (uint64_t)(ps->input + 1) << 32 | g->index;
	}
	v = gt_idmap_get(&pv->gpus, a, b);
	if (!v) {
		v = ++pv->ngpus;
		if (gt_idmap_put(&pv->gpus, a, b, v) < 0)
			return -ENOMEM;
	}
	ps->gpu_global[g->index] = v;
	return v - 1;
}

/* The group of process p (by rank, process or host). NULL only on -ENOMEM. */
static struct gt_rankstats_group *group_of_proc(struct pass *ps, const struct gt_catalog_process *p)
{
	struct gt_rankstats *rs = ps->rs;
	struct gt_rankstats_group *g;
	const char *host;
	int64_t hi;
	uint64_t a, b;
	uint32_t v;

	if (p->index < ps->nproc && ps->proc_group[p->index] &&
	    ps->proc_info[p->index] == (uint8_t)p->have_info)
		return rs->groups[ps->proc_group[p->index] - 1];
	if (p->index >= ps->nproc) {
		size_t n = ps->nproc ? ps->nproc : 16;
		uint32_t *m;
		uint8_t *f;

		while (n <= p->index)
			n *= 2;
		m = realloc(ps->proc_group, n * sizeof(*m));
		if (!m)
			return NULL;
		ps->proc_group = m;
		f = realloc(ps->proc_info, n);
		if (!f)
			return NULL;
		ps->proc_info = f;
		memset(m + ps->nproc, 0, (n - ps->nproc) * sizeof(*m));
		memset(f + ps->nproc, 0, n - ps->nproc);
		ps->nproc = n;
	}
	host = host_of(ps, p);
	hi = host_index(ps->pv, host);
	if (hi < 0)
		return NULL;
	if (rs->opts.by == GT_RANKSTATS_BY_HOST) {
		a = KEY_HOST | (uint64_t)hi;
		b = 0;
	} else if (rs->opts.by == GT_RANKSTATS_BY_RANK && p->rank >= 0) {
		a = KEY_RANK;
		b = (uint32_t)p->rank;
	} else {
		a = KEY_PROCESS | (uint64_t)hi;
		b = p->pid;
	}
	v = gt_idmap_get(&ps->pv->groups, a, b);
	g = v ? rs->groups[v - 1] : group_new(rs, a, b);
	if (!g)
		return NULL;
	if (!v) {
		g->rank = rs->opts.by == GT_RANKSTATS_BY_HOST ? -1 : p->rank;
		g->pid = p->pid;
		g->host = strdup(host);
		if (!g->host)
			return NULL;
	}
	if (ps->proc_group[p->index] && ps->proc_group[p->index] != g->index + 1)
		rs->groups[ps->proc_group[p->index] - 1]->processes--; /* it was named later */
	if (ps->proc_group[p->index] != g->index + 1)
		g->processes++;
	ps->proc_group[p->index] = g->index + 1;
	ps->proc_info[p->index] = (uint8_t)p->have_info;
	if (rs->opts.by != GT_RANKSTATS_BY_HOST && group_take_steps(ps, g, p->pid) < 0)
		return NULL;
	return g;
}

/* The group of GPU gg (by device). NULL only on -ENOMEM. */
static struct gt_rankstats_group *group_of_gpu(struct pass *ps, const struct gt_catalog_gpu *gg,
                                               uint32_t global, const struct gt_catalog_process *p)
{
	struct gt_rankstats *rs = ps->rs;
	struct gt_rankstats_group *g;
	uint32_t v = gt_idmap_get(&ps->pv->groups, KEY_DEVICE, global);

	if (v)
		return rs->groups[v - 1];
	g = group_new(rs, KEY_DEVICE, global);
	if (!g)
		return NULL;
	g->gpu = gg->number;
	if (gg->have_uuid)
		gt_catalog_uuid(gg, g->uuid);
	g->pid = p->pid;
	g->rank = p->rank;
	g->host = strdup(host_of(ps, p));
	return g->host ? g : NULL;
}

/* The busy time of group g on global GPU `global`, in this trace. NULL only on -ENOMEM. */
static struct gt_busy *set_of(struct pass *ps, struct gt_rankstats_group *g, uint32_t global)
{
	uint32_t v = gt_idmap_get(&ps->set_map, g->index, global);
	struct gt_busy *b;

	if (v)
		return ps->sets[v - 1];
	if (ps->nsets == ps->capsets) {
		size_t cap = ps->capsets ? ps->capsets * 2 : 8;
		struct gt_busy **n = realloc(ps->sets, cap * sizeof(*n));
		uint32_t *sg, *sp;

		if (!n)
			return NULL;
		ps->sets = n;
		sg = realloc(ps->set_group, cap * sizeof(*sg));
		if (!sg)
			return NULL;
		ps->set_group = sg;
		sp = realloc(ps->set_gpu, cap * sizeof(*sp));
		if (!sp)
			return NULL;
		ps->set_gpu = sp;
		ps->capsets = cap;
	}
	/* the steps' windows are the group's when they come from this very trace */
	if (gt_busy_new(g->step_input == ps->input ? g->steps : NULL, g->nsteps, ps->scratch, &b) <
	    0)
		return NULL;
	if (gt_idmap_put(&ps->set_map, g->index, global, (uint32_t)ps->nsets + 1) < 0) {
		gt_busy_free(b);
		return NULL;
	}
	ps->sets[ps->nsets] = b;
	ps->set_group[ps->nsets] = g->index;
	ps->set_gpu[ps->nsets++] = global;
	return b;
}

/* ---- records ---- */

static bool is_nccl(struct pass *ps, uint32_t id)
{
	const char *s;
	size_t len = 0;
	bool v;

	if (id < ps->nnccl && ps->nccl[id])
		return ps->nccl[id] == 2;
	s = id ? gt_reader_string(ps->r, id, &len) : NULL;
	v = gt_ranks_nccl_kernel(s, len);
	if (!s || id >= NCCL_CACHE_MAX)
		return v;
	if (id >= ps->nnccl) {
		size_t n = ps->nnccl ? ps->nnccl : 256;
		uint8_t *m;

		while (n <= id)
			n *= 2;
		m = realloc(ps->nccl, n);
		if (!m)
			return v; /* the cache is an optimization only */
		memset(m + ps->nnccl, 0, n - ps->nnccl);
		ps->nccl = m;
		ps->nnccl = n;
	}
	ps->nccl[id] = v ? 2 : 1;
	return v;
}

/* A GPU activity: its group's busy time. *gout: the group (for its tables). */
static int on_gpu(struct pass *ps, uint32_t pid, const struct gt_gpu_span *span, unsigned kind,
                  struct gt_rankstats_group **gout)
{
	struct gt_catalog_process *p = gt_catalog_process(&ps->cat, pid);
	struct gt_catalog_gpu *gg = p ? gt_catalog_gpu(&ps->cat, pid, span->device_id) : NULL;
	struct gt_rankstats_group *g;
	struct gt_busy *b;
	int64_t global;

	if (!gg)
		return -ENOMEM;
	global = gpu_global(ps, gg);
	if (global < 0)
		return -ENOMEM;
	g = ps->rs->opts.by == GT_RANKSTATS_BY_DEVICE ? group_of_gpu(ps, gg, (uint32_t)global, p)
	                                              : group_of_proc(ps, p);
	if (!g)
		return -ENOMEM;
	b = set_of(ps, g, (uint32_t)global);
	if (!b)
		return -ENOMEM;
	g->active = true;
	*gout = g;
	return gt_busy_add(b, span->start_ns, span->end_ns, kind);
}

/* The group of a CPU-side record (not by device). NULL only on -ENOMEM. */
static struct gt_rankstats_group *cpu_group(struct pass *ps, uint32_t pid)
{
	struct gt_catalog_process *p = gt_catalog_process(&ps->cat, pid);

	return p ? group_of_proc(ps, p) : NULL;
}

static int on_record(struct pass *ps, const union gt_record *rec)
{
	struct gt_rankstats_group *g = NULL;
	struct rs_tables *t;
	struct gt_stat_entry *e;
	bool by_gpu = ps->rs->opts.by == GT_RANKSTATS_BY_DEVICE;
	int ret = gt_catalog_observe(&ps->cat, rec);

	if (ret < 0)
		return ret;
	switch (rec->hdr.type) {
	case GT_REC_KERNEL:
		ret = on_gpu(ps, rec->hdr.pid, &rec->kernel.span,
		             is_nccl(ps, rec->kernel.name_id) ? GT_BUSY_COMM : GT_BUSY_COMPUTE, &g);
		if (ret < 0)
			return ret;
		t = g->priv;
		g->kernels++;
		e = gt_stats_table_get_id(&t->kernels, ps->r, rec->kernel.name_id);
		if (!e)
			return -ENOMEM;
		return gt_stats_series_add(&e->time, gt_stats_span_dur(rec->kernel.span.start_ns,
		                                                       rec->kernel.span.end_ns));
	case GT_REC_MEMCPY:
		ret = on_gpu(ps, rec->hdr.pid, &rec->memcpy.span, GT_BUSY_MEMORY, &g);
		if (ret < 0)
			return ret;
		t = g->priv;
		return gt_stats_xfer_add(
		        &t->memcpy[rec->memcpy.copy_kind < GT_MEMCPY_MAX ? rec->memcpy.copy_kind
		                                                         : GT_MEMCPY_UNKNOWN],
		        &rec->memcpy.span, rec->memcpy.bytes);
	case GT_REC_MEMSET:
		ret = on_gpu(ps, rec->hdr.pid, &rec->memset.span, GT_BUSY_MEMORY, &g);
		if (ret < 0)
			return ret;
		t = g->priv;
		return gt_stats_xfer_add(
		        &t->memset[rec->memset.mem_kind < GT_MEM_MAX ? rec->memset.mem_kind
		                                                     : GT_MEM_UNKNOWN],
		        &rec->memset.span, rec->memset.bytes);
	case GT_REC_GRAPH:
		/* a graph launch traced at graph level: what ran inside is not known */
		return on_gpu(ps, rec->hdr.pid, &rec->graph.span, GT_BUSY_COMPUTE, &g);
	case GT_REC_API:
		if (by_gpu)
			return 0;
		g = cpu_group(ps, rec->hdr.pid);
		if (!g)
			return -ENOMEM;
		g->active = true;
		t = g->priv;
		e = gt_stats_table_get_id(&t->api, ps->r, rec->api.name_id);
		if (!e)
			return -ENOMEM;
		return gt_stats_series_add(&e->time,
		                           gt_stats_span_dur(rec->api.start_ns, rec->api.end_ns));
	case GT_REC_NVTX:
		if (by_gpu)
			return 0;
		g = cpu_group(ps, rec->hdr.pid);
		if (!g)
			return -ENOMEM;
		g->active = true;
		if (rec->nvtx.kind == GT_NVTX_MARK)
			return 0;
		t = g->priv;
		e = gt_stats_nvtx_get(&t->nvtx, ps->r, &rec->nvtx);
		if (!e)
			return -ENOMEM;
		return gt_stats_series_add(&e->time,
		                           gt_stats_span_dur(rec->nvtx.start_ns, rec->nvtx.end_ns));
	case GT_REC_LOSS:
		if (by_gpu)
			return 0;
		g = cpu_group(ps, rec->hdr.pid);
		if (!g)
			return -ENOMEM;
		g->lost += rec->loss.count;
		return 0;
	default:
		return 0;
	}
}

/* ---- one trace ---- */

static int input_add(struct gt_rankstats *rs, struct gt_reader *r, const char *name,
                     struct gt_rankstats_input **ret)
{
	const struct gt_trace_header *h = gt_reader_header(r);
	struct gt_rankstats_input *in;

	if (rs->ninputs == rs->capinputs) {
		size_t cap = rs->capinputs ? rs->capinputs * 2 : 8;
		struct gt_rankstats_input *n = realloc(rs->inputs, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		rs->inputs = n;
		rs->capinputs = cap;
	}
	in = &rs->inputs[rs->ninputs];
	memset(in, 0, sizeof(*in));
	in->name = strdup(name ? name : "");
	in->host = strdup(h && h->info.hostname ? h->info.hostname : "");
	in->command = strdup(h && h->info.cmdline ? h->info.cmdline : "");
	in->version = strdup(h && h->info.tool_version ? h->info.tool_version : "");
	rs->ninputs++; /* freed with rs from here on */
	if (!in->name || !in->host || !in->command || !in->version)
		return -ENOMEM;
	*ret = in;
	return 0;
}

static void pass_fini(struct pass *ps)
{
	for (size_t i = 0; i < ps->nsets; i++)
		gt_busy_free(ps->sets[i]);
	gt_busy_scratch_free(ps->scratch);
	free(ps->sets);
	free(ps->set_group);
	free(ps->set_gpu);
	gt_idmap_fini(&ps->set_map);
	free(ps->proc_group);
	free(ps->proc_info);
	free(ps->gpu_global);
	free(ps->nccl);
	gt_steps_free(ps->steps);
	gt_catalog_fini(&ps->cat);
}

/* The trace is read: sum each GPU's busy time into its group. */
static int pass_end(struct pass *ps)
{
	struct gt_rankstats *rs = ps->rs;

	for (size_t i = 0; i < ps->nsets; i++) {
		struct gt_rankstats_group *g = rs->groups[ps->set_group[i]];
		uint32_t v;
		int ret = gt_busy_finish(ps->sets[i]);

		if (ret < 0)
			return ret;
		gt_busy_totals_add(&g->busy, gt_busy_totals(ps->sets[i]));
		g->gpus++;
		v = gt_idmap_get(&ps->pv->set_inputs, g->index, ps->set_gpu[i]);
		if (v && v != ps->input + 1)
			rs->split_gpu = true;
		else if (!v && gt_idmap_put(&ps->pv->set_inputs, g->index, ps->set_gpu[i],
		                            ps->input + 1) < 0)
			return -ENOMEM;
	}
	/* string ids are this trace's */
	for (size_t i = 0; i < rs->ngroups; i++) {
		struct rs_tables *t = rs->groups[i]->priv;

		gt_stats_table_forget_ids(&t->kernels);
		gt_stats_table_forget_ids(&t->api);
	}
	return 0;
}

int gt_rankstats_add(struct gt_rankstats *rs, struct gt_reader *r, const char *name,
                     const char **errmsg)
{
	const struct gt_trace_counts *footer = gt_reader_footer_counts(r);
	const struct gt_reader_status *status;
	struct gt_rankstats_input *in;
	const union gt_record *rec;
	struct pass ps;
	int ret;

	memset(&ps, 0, sizeof(ps));
	ps.rs = rs;
	ps.pv = rs->priv;
	ps.r = r;
	ps.input = (uint32_t)rs->ninputs;
	*errmsg = "out of memory while summarizing the traces";
	ret = input_add(rs, r, name, &in);
	if (ret < 0)
		return ret;
	if (gt_catalog_init(&ps.cat, r) < 0 || gt_idmap_init(&ps.set_map, 64) < 0 ||
	    gt_busy_scratch_new(&ps.scratch) < 0) {
		ret = -ENOMEM;
		goto out;
	}
	/* the steps first: each GPU's busy time is given to the steps as it is summed */
	if (!footer || footer->records[GT_REC_NVTX]) {
		ret = gt_steps_scan(r, rs->opts.step_name, &ps.steps);
		if (ret < 0) {
			if (ret != -ENOMEM)
				*errmsg = "the trace could not be read to the end";
			goto out;
		}
		in->step_family = gt_steps_family(ps.steps);
	}
	ret = gt_reader_rewind(r);
	if (ret < 0) {
		*errmsg = "cannot rewind the trace";
		goto out;
	}
	while ((ret = gt_reader_next(r, &rec)) > 0) {
		ret = on_record(&ps, rec);
		if (ret < 0)
			goto out;
	}
	if (ret < 0) {
		*errmsg = "the trace could not be read to the end";
		goto out;
	}
	ret = pass_end(&ps);
	if (ret < 0)
		goto out;
	status = gt_reader_status(r);
	/* records the producers lost; a damaged file's chunks, recorded in the trace (merge,
	 * --reindex) or skipped by this read, are chunks */
	in->lost = gt_catalog_lost_records(&ps.cat);
	if (status) {
		struct gt_catalog_damage d;

		gt_catalog_read_done(&ps.cat, status);
		gt_catalog_damage(&ps.cat, &d);
		in->recovered = status->recovered;
		in->chunks_skipped = d.chunks;
		in->records_skipped = d.malformed;
	}
	{
		/* the trace's span (docs/cli.md, "Time"), the same whatever the grouping */
		struct gt_trace_times tt;

		in->span_ns = gt_reader_times(r, &tt) == 0 ? tt.span_ns : 0;
	}
out:
	pass_fini(&ps);
	return ret;
}
