/* The operators report of `gputrace stats`: GPU time, GPU work, kernels, calls and API time
 * per PyTorch operator (torchops.h), by name and, when the trace recorded input shapes, by
 * name and input dims; each call counts for the innermost operator it was made in. Reads the
 * trace three times (two for the operators); runs in the CLI. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "idmap.h"
#include "stats-int.h"
#include "torchops.h"

#define NCOLS(c) (sizeof(c) / sizeof((c)[0]))

struct group {
	char *name;  /* owned */
	char *sizes; /* owned; NULL: by name only */
	uint64_t gpu_ns, gpu_ops, kernels, calls, api_ns, instances, cpu_ns;
};

struct groups {
	struct group *g;
	size_t n, cap;
};

static const struct gt_col cols[] = {
        {"gpu_ns", "GPU time", GT_COL_NS},        {"gpu_ops", "GPU ops", GT_COL_U64},
        {"kernels", "Kernels", GT_COL_U64},       {"calls", "Calls", GT_COL_U64},
        {"api_ns", "API time", GT_COL_NS},        {"instances", "Instances", GT_COL_U64},
        {"cpu_ns", "CPU time", GT_COL_NS},        {"operator", "Operator", GT_COL_STR},
        {"input_dims", "Input dims", GT_COL_STR},
};

/* The group of (name, sizes); sizes NULL for the table by name. Index, or -ENOMEM. */
static long group_of(struct groups *gs, const char *name, size_t nlen, const char *sizes,
                     size_t slen)
{
	struct group *x;

	for (size_t i = 0; i < gs->n; i++) {
		x = &gs->g[i];
		if (strlen(x->name) == nlen && memcmp(x->name, name, nlen) == 0 &&
		    (!sizes ? !x->sizes
		            : x->sizes && strlen(x->sizes) == slen &&
		                      memcmp(x->sizes, sizes, slen) == 0))
			return (long)i;
	}
	if (gs->n == gs->cap) {
		size_t cap = gs->cap ? gs->cap * 2 : 32;
		struct group *ng = realloc(gs->g, cap * sizeof(*ng));

		if (!ng)
			return -ENOMEM;
		gs->g = ng;
		gs->cap = cap;
	}
	x = &gs->g[gs->n];
	memset(x, 0, sizeof(*x));
	x->name = strndup(name, nlen);
	x->sizes = sizes ? strndup(sizes, slen) : NULL;
	if (!x->name || (sizes && !x->sizes)) {
		free(x->name);
		free(x->sizes);
		return -ENOMEM;
	}
	return (long)gs->n++;
}

static void groups_fini(struct groups *gs)
{
	for (size_t i = 0; i < gs->n; i++) {
		free(gs->g[i].name);
		free(gs->g[i].sizes);
	}
	free(gs->g);
}

static int cmp_group(const void *pa, const void *pb)
{
	const struct group *a = pa, *b = pb;
	int c;

	if (a->gpu_ns != b->gpu_ns)
		return a->gpu_ns > b->gpu_ns ? -1 : 1;
	if (a->cpu_ns != b->cpu_ns)
		return a->cpu_ns > b->cpu_ns ? -1 : 1;
	c = strcmp(a->name, b->name);
	if (c || !a->sizes || !b->sizes)
		return c;
	return strcmp(a->sizes, b->sizes);
}

static void add(struct group *x, const union gt_record *rec, bool range)
{
	const struct gt_gpu_span *s = NULL;

	if (range) {
		x->instances++;
		x->cpu_ns += gt_stats_span_dur(rec->nvtx.start_ns, rec->nvtx.end_ns);
		return;
	}
	switch (rec->hdr.type) {
	case GT_REC_API:
		x->calls++;
		x->api_ns += gt_stats_span_dur(rec->api.start_ns, rec->api.end_ns);
		return;
	case GT_REC_KERNEL:
		s = &rec->kernel.span;
		x->kernels++;
		break;
	case GT_REC_MEMCPY:
		s = &rec->memcpy.span;
		break;
	case GT_REC_MEMSET:
		s = &rec->memset.span;
		break;
	default:
		return;
	}
	x->gpu_ops++;
	x->gpu_ns += gt_stats_span_dur(s->start_ns, s->end_ns);
}

static int emit(struct gt_emit *e, struct groups *gs, bool shapes)
{
	struct gt_cell c[NCOLS(cols)];
	int ret = 0;

	qsort(gs->g, gs->n, sizeof(*gs->g), cmp_group);
	gt_stats_emit_begin(e, shapes ? "operator_shapes" : "operators",
	                    shapes ? "PyTorch operators by input dims (self: the innermost "
	                             "operator of each call)"
	                           : "PyTorch operators (self: the innermost operator of each "
	                             "call)",
	                    cols, NCOLS(cols) - !shapes, GT_EMIT_LIMITED);
	for (size_t i = 0; i < gs->n && ret == 0; i++) {
		const struct group *x = &gs->g[i];

		c[0] = gt_cell_u(x->gpu_ns);
		c[1] = gt_cell_u(x->gpu_ops);
		c[2] = gt_cell_u(x->kernels);
		c[3] = gt_cell_u(x->calls);
		c[4] = gt_cell_u(x->api_ns);
		c[5] = gt_cell_u(x->instances);
		c[6] = gt_cell_u(x->cpu_ns);
		c[7] = gt_cell_s(x->name);
		c[8] = gt_cell_s(x->sizes && *x->sizes ? x->sizes : NULL);
		ret = gt_stats_emit_row(e, c);
	}
	return ret ? ret
	           : gt_stats_emit_end(e, "no PyTorch operators in this trace (gputrace run "
	                                  "--pytorch records them)");
}

/* Operator id -> its group by name and by name and dims, from its message. */
static int index_groups(struct gt_reader *r, const struct gt_torchops *o, uint32_t *by_name,
                        uint32_t *by_dims, struct groups *names, struct groups *dims,
                        bool *have_dims)
{
	size_t n = gt_torchops_count(o);
	struct gt_idmap seen; /* message id -> the first operator with it */
	int ret = gt_idmap_init(&seen, 1024);

	if (ret < 0)
		return ret;
	for (uint64_t id = 1; id <= n && ret == 0; id++) {
		uint32_t msg_id = gt_torchops_message(o, id), same = gt_idmap_get(&seen, msg_id, 0);
		struct gt_torchop_fields f;
		const char *msg;
		size_t len;
		long g;

		if (same) {
			by_name[id] = by_name[same];
			by_dims[id] = by_dims[same];
			continue;
		}
		ret = gt_idmap_put(&seen, msg_id, 0, (uint32_t)id);
		if (ret < 0)
			break;
		msg = gt_reader_string(r, msg_id, &len);
		if (!msg || !gt_torchop_parse(msg, len, &f)) {
			ret = -EINVAL;
			break;
		}
		g = group_of(names, f.name, f.name_len, NULL, 0);
		if (g >= 0) {
			by_name[id] = (uint32_t)g;
			g = group_of(dims, f.name, f.name_len, f.sizes ? f.sizes : "", f.sizes_len);
		}
		if (g < 0) {
			ret = (int)g;
			break;
		}
		by_dims[id] = (uint32_t)g;
		*have_dims |= f.sizes != NULL;
	}
	gt_idmap_fini(&seen);
	return ret;
}

int gt_stats_report_ops(struct gt_emit *e, struct gt_reader *r, const char **errmsg)
{
	struct gt_torchops *o = NULL;
	struct groups names = {0}, dims = {0};
	uint32_t *by_name = NULL, *by_dims = NULL;
	const union gt_record *rec;
	bool have_dims = false;
	int ret;

	ret = gt_torchops_load(r, &o);
	if (ret < 0) {
		*errmsg = ret == -ENOMEM ? NULL : "reading the trace's PyTorch operators failed";
		return ret;
	}
	if (o) {
		size_t n = gt_torchops_count(o);

		by_name = calloc(n + 1, sizeof(*by_name));
		by_dims = calloc(n + 1, sizeof(*by_dims));
		if (!by_name || !by_dims) {
			ret = -ENOMEM;
			goto out;
		}
		ret = index_groups(r, o, by_name, by_dims, &names, &dims, &have_dims);
		if (ret < 0)
			goto out;
		while ((ret = gt_reader_next(r, &rec)) > 0) {
			uint64_t op = 0;
			bool range = false;

			switch (rec->hdr.type) {
			case GT_REC_NVTX:
				op = gt_torchops_of_range(o, &rec->nvtx);
				range = true;
				break;
			case GT_REC_API:
				op = gt_torchops_of_launch(o, rec->hdr.pid,
				                           rec->api.correlation_id);
				break;
			case GT_REC_KERNEL:
				op = gt_torchops_of_launch(o, rec->hdr.pid,
				                           rec->kernel.span.correlation_id);
				break;
			case GT_REC_MEMCPY:
				op = gt_torchops_of_launch(o, rec->hdr.pid,
				                           rec->memcpy.span.correlation_id);
				break;
			case GT_REC_MEMSET:
				op = gt_torchops_of_launch(o, rec->hdr.pid,
				                           rec->memset.span.correlation_id);
				break;
			default:
				break;
			}
			if (!op)
				continue;
			add(&names.g[by_name[op]], rec, range);
			add(&dims.g[by_dims[op]], rec, range);
		}
		if (ret < 0) {
			*errmsg = "reading the trace failed";
			goto out;
		}
	}
	ret = emit(e, &names, false);
	if (ret == 0 && have_dims)
		ret = emit(e, &dims, true);
	if (ret)
		*errmsg = NULL;
out:
	free(by_name);
	free(by_dims);
	groups_fini(&names);
	groups_fini(&dims);
	gt_torchops_free(o);
	return ret;
}
