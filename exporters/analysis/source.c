/* `gputrace stats --by source`: per Python source line and per Python function (the
 * innermost Python frame of the program's own in each stack: gt_stacks_user_frame), the GPU
 * time and number of the kernels launched there (a kernel joined to its launching API call by process and correlation id), the API
 * calls and their time, and the NVTX ranges and marks made there; largest GPU time first.
 * Runs in the CLI. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "idmap.h"
#include "source.h"
#include "stacks.h"
#include "stats-int.h"

#define NCOLS(c) (sizeof(c) / sizeof((c)[0]))

struct src_row {
	const char *file, *func; /* borrowed from the stacks */
	int32_t line;            /* -1 in the per-function table */
	uint32_t func_row;       /* a line's row in the per-function table, + 1 */
	uint64_t gpu_ns, kernels, api_calls, api_ns, nvtx, nvtx_ns;
};

struct src_table {
	struct gt_idmap map; /* (hash of file and function, line) -> index + 1 */
	struct src_row *rows;
	uint32_t n, cap;
};

struct src {
	struct gt_stacks *stacks;
	struct src_table lines, funcs;
	struct gt_idmap frames; /* (pid, stack id) -> line row + 1 (0: not looked up), and
	                           (pid, stack id | 1 << 32) -> function row + 1 */
	struct gt_idmap calls;  /* (pid, correlation id) -> line row + 1 of the launching call */
};

static uint64_t hash_str(const char *s, uint64_t h)
{
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return h;
}

/* The row of (file, func, line) in t, added when new; its index + 1, 0 when out of memory. */
static uint32_t row_of(struct src_table *t, const char *file, const char *func, int32_t line)
{
	uint64_t h = hash_str(func, hash_str(file, 0xcbf29ce484222325ull) ^ 0xff);
	uint32_t v = gt_idmap_get(&t->map, h, (uint32_t)line);

	if (v)
		return v;
	if (t->n == t->cap) {
		uint32_t cap = t->cap ? 2 * t->cap : 64;
		struct src_row *rows = realloc(t->rows, cap * sizeof(*rows));

		if (!rows)
			return 0;
		t->rows = rows;
		t->cap = cap;
	}
	t->rows[t->n] = (struct src_row){.file = file, .func = func, .line = line};
	if (gt_idmap_put(&t->map, h, (uint32_t)line, t->n + 1) < 0)
		return 0;
	return ++t->n;
}

/* The line and function rows of stack `id` of process pid (its user's Python frame);
 * false when it has no Python frame. -ENOMEM through *err. */
static bool rows_of(struct src *s, uint32_t pid, uint32_t id, struct src_row **line,
                    struct src_row **func, int *err)
{
	uint32_t lv = gt_idmap_get(&s->frames, pid, id);
	uint32_t fv = gt_idmap_get(&s->frames, pid, id | 1ull << 32);
	const struct gt_stack_sym *f;
	unsigned n = 0, i;

	if (!lv) {
		f = gt_stacks_get(s->stacks, pid, id, &n);
		i = f && n ? gt_stacks_user_frame(f, n) : 0;
		if (!f || !n || !f[i].python) {
			lv = fv = UINT32_MAX; /* no Python frame */
		} else {
			lv = row_of(&s->lines, f[i].module, f[i].symbol, f[i].line);
			fv = row_of(&s->funcs, f[i].module, f[i].symbol, -1);
			if (!lv || !fv) {
				*err = -ENOMEM;
				return false;
			}
			s->lines.rows[lv - 1].func_row = fv;
		}
		if (gt_idmap_put(&s->frames, pid, id, lv) < 0 ||
		    gt_idmap_put(&s->frames, pid, id | 1ull << 32, fv) < 0) {
			*err = -ENOMEM;
			return false;
		}
	}
	if (lv == UINT32_MAX)
		return false;
	*line = &s->lines.rows[lv - 1];
	*func = &s->funcs.rows[fv - 1];
	return true;
}

/* Pass 2: API calls and NVTX records. */
static int read_calls(struct src *s, struct gt_reader *r)
{
	const union gt_record *rec;
	struct src_row *l, *fn;
	int ret, err = 0;

	while ((ret = gt_reader_next(r, &rec)) > 0) {
		if (rec->hdr.type == GT_REC_API && rec->api.stack_id) {
			const struct gt_rec_api *a = &rec->api;

			if (!rows_of(s, a->hdr.pid, a->stack_id, &l, &fn, &err)) {
				if (err)
					return err;
				continue;
			}
			l->api_calls++;
			fn->api_calls++;
			l->api_ns += gt_stats_span_dur(a->start_ns, a->end_ns);
			fn->api_ns += gt_stats_span_dur(a->start_ns, a->end_ns);
			if (a->correlation_id &&
			    gt_idmap_put(&s->calls, a->hdr.pid, a->correlation_id,
			                 (uint32_t)(l - s->lines.rows) + 1) < 0)
				return -ENOMEM;
		} else if (rec->hdr.type == GT_REC_NVTX && rec->nvtx.stack_id) {
			const struct gt_rec_nvtx *v = &rec->nvtx;
			uint64_t dur = v->kind == GT_NVTX_MARK
			                       ? 0
			                       : gt_stats_span_dur(v->start_ns, v->end_ns);

			if (!rows_of(s, v->hdr.pid, v->stack_id, &l, &fn, &err)) {
				if (err)
					return err;
				continue;
			}
			l->nvtx++;
			fn->nvtx++;
			l->nvtx_ns += dur;
			fn->nvtx_ns += dur;
		}
	}
	return ret;
}

/* Pass 3: kernels, to the line and function of their launching call. */
static int read_kernels(struct src *s, struct gt_reader *r)
{
	const union gt_record *rec;
	int ret;

	while ((ret = gt_reader_next(r, &rec)) > 0) {
		const struct gt_rec_kernel *k = &rec->kernel;
		uint32_t v;
		struct src_row *l, *fn;
		uint64_t dur;

		if (rec->hdr.type != GT_REC_KERNEL || !k->span.correlation_id)
			continue;
		v = gt_idmap_get(&s->calls, k->hdr.pid, k->span.correlation_id);
		if (!v)
			continue;
		l = &s->lines.rows[v - 1];
		fn = &s->funcs.rows[l->func_row - 1];
		dur = gt_stats_span_dur(k->span.start_ns, k->span.end_ns);
		l->gpu_ns += dur;
		fn->gpu_ns += dur;
		l->kernels++;
		fn->kernels++;
	}
	return ret;
}

static int cmp_rows(const void *pa, const void *pb)
{
	const struct src_row *a = pa, *b = pb;
	int c;

	if (a->gpu_ns != b->gpu_ns)
		return a->gpu_ns > b->gpu_ns ? -1 : 1;
	if (a->api_ns != b->api_ns)
		return a->api_ns > b->api_ns ? -1 : 1;
	if (a->nvtx_ns != b->nvtx_ns)
		return a->nvtx_ns > b->nvtx_ns ? -1 : 1;
	if (a->nvtx != b->nvtx)
		return a->nvtx > b->nvtx ? -1 : 1;
	if ((c = strcmp(a->file, b->file)) != 0)
		return c;
	if (a->line != b->line)
		return a->line < b->line ? -1 : 1;
	return strcmp(a->func, b->func);
}

static const struct gt_col line_cols[] = {
        {"gpu_ns", "GPU time", GT_COL_NS},      {"kernels", "Kernels", GT_COL_U64},
        {"api_calls", "API calls", GT_COL_U64}, {"api_ns", "API time", GT_COL_NS},
        {"nvtx", "NVTX", GT_COL_U64},           {"nvtx_ns", "NVTX time", GT_COL_NS},
        {"file", "File", GT_COL_STR},           {"line", "Line", GT_COL_I64},
        {"function", "Function", GT_COL_STR},
};

static const struct gt_col func_cols[] = {
        {"gpu_ns", "GPU time", GT_COL_NS},      {"kernels", "Kernels", GT_COL_U64},
        {"api_calls", "API calls", GT_COL_U64}, {"api_ns", "API time", GT_COL_NS},
        {"nvtx", "NVTX", GT_COL_U64},           {"nvtx_ns", "NVTX time", GT_COL_NS},
        {"file", "File", GT_COL_STR},           {"function", "Function", GT_COL_STR},
};

static int emit_table(struct gt_emit *e, struct src_table *t, bool lines)
{
	struct gt_cell c[NCOLS(line_cols)];
	int ret = 0;

	qsort(t->rows, t->n, sizeof(*t->rows), cmp_rows);
	if (lines)
		gt_stats_emit_begin(e, "source_lines", "GPU and API time per Python line",
		                    line_cols, NCOLS(line_cols), GT_EMIT_LIMITED);
	else
		gt_stats_emit_begin(e, "source_functions", "GPU and API time per Python function",
		                    func_cols, NCOLS(func_cols), GT_EMIT_LIMITED);
	for (uint32_t i = 0; i < t->n && ret == 0; i++) {
		const struct src_row *x = &t->rows[i];

		c[0] = gt_cell_u(x->gpu_ns);
		c[1] = gt_cell_u(x->kernels);
		c[2] = gt_cell_u(x->api_calls);
		c[3] = gt_cell_u(x->api_ns);
		c[4] = gt_cell_u(x->nvtx);
		c[5] = gt_cell_u(x->nvtx_ns);
		c[6] = gt_cell_s(x->file);
		/* the function table has no line column */
		if (lines) {
			c[7] = gt_cell_i(x->line);
			c[8] = gt_cell_s(x->func);
		} else {
			c[7] = gt_cell_s(x->func);
		}
		ret = gt_stats_emit_row(e, c);
	}
	return ret ? ret
	           : gt_stats_emit_end(e, "no stack with Python frames (record with gputrace "
	                                  "run --backtrace python)");
}

int gt_source_report(struct gt_reader *r, FILE *out, unsigned format, unsigned limit,
                     const char **errmsg)
{
	struct src s = {0};
	struct gt_emit *e = NULL;
	int ret;

	*errmsg = NULL;
	if (gt_idmap_init(&s.lines.map, 64) < 0 || gt_idmap_init(&s.funcs.map, 64) < 0 ||
	    gt_idmap_init(&s.frames, 64) < 0 || gt_idmap_init(&s.calls, 1024) < 0 ||
	    gt_stacks_new(&s.stacks) < 0) {
		ret = -ENOMEM;
		goto out;
	}
	if ((ret = gt_reader_rewind(r)) < 0 || (ret = gt_stacks_load(s.stacks, r)) < 0 ||
	    (ret = read_calls(&s, r)) < 0 || (ret = gt_reader_rewind(r)) < 0 ||
	    (ret = read_kernels(&s, r)) < 0)
		goto out;
	ret = gt_stats_emit_new(out, format, 2, limit, &e);
	if (ret < 0)
		goto out;
	ret = emit_table(e, &s.lines, true);
	if (ret == 0)
		ret = emit_table(e, &s.funcs, false);
	{
		int c = gt_stats_emit_close(e);

		if (ret == 0)
			ret = c;
	}
	if (ret == -EIO)
		*errmsg = "writing the report";
out:
	gt_idmap_fini(&s.lines.map);
	gt_idmap_fini(&s.funcs.map);
	gt_idmap_fini(&s.frames);
	gt_idmap_fini(&s.calls);
	free(s.lines.rows);
	free(s.funcs.rows);
	gt_stacks_free(s.stacks);
	return ret;
}
