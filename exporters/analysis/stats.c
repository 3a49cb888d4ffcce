/* `gputrace stats`: the reports (kernels, API, memcpy, memset, NVTX, memory, failed calls,
 * losses) built from one streamed pass over a trace, in table, CSV or JSON form.
 * Runs in the CLI. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "demangle.h"
#include "nvtx-gpu.h"
#include "stats-int.h"

static const char *const report_names[] = {
        "kernels", "api", "memcpy", "memset", "nvtx", "memory", "errors", "losses", "nvtx-gpu",
        "gpu-metrics", "operators",
};
#define NREPORTS (sizeof(report_names) / sizeof(report_names[0]))

const char *gt_stats_report_name(unsigned report)
{
	for (unsigned i = 0; i < NREPORTS; i++)
		if (report == 1u << i)
			return report_names[i];
	return "unknown";
}

int gt_stats_parse_names(const char *list, const char *const *names, unsigned n, unsigned all,
                         unsigned *bits)
{
	unsigned got = 0;
	const char *p = list;

	if (!list || !*list)
		return -EINVAL;
	while (*p) {
		size_t len = strcspn(p, ",");
		unsigned bit = 0;

		if (len == 3 && strncmp(p, "all", 3) == 0)
			bit = all;
		for (unsigned i = 0; i < n && !bit; i++)
			if (strlen(names[i]) == len && strncmp(p, names[i], len) == 0)
				bit = 1u << i;
		if (!bit)
			return -EINVAL;
		got |= bit;
		p += len;
		if (*p == ',' && *++p == '\0')
			return -EINVAL; /* trailing comma */
	}
	*bits = got;
	return 0;
}

int gt_stats_parse_reports(const char *list, unsigned *reports)
{
	return gt_stats_parse_names(list, report_names, NREPORTS, GT_STATS_REPORT_ALL, reports);
}

int gt_stats_parse_format(const char *name, unsigned *format)
{
	static const char *const names[GT_STATS_FORMAT_MAX] = {"table", "csv", "json"};

	for (unsigned i = 0; name && i < GT_STATS_FORMAT_MAX; i++)
		if (strcmp(name, names[i]) == 0) {
			*format = i;
			return 0;
		}
	return -EINVAL;
}

/* ---- columns ---- */

#define TIME_COLS(k, t) GT_STATS_TIME_COLS(k, t)
#define NTIME           GT_STATS_NTIME

static const struct gt_col kernel_cols[] = {
        TIME_COLS("instances", "Instances"),
        {"name", "Name", GT_COL_STR},
};

static const struct gt_col api_cols[] = {
        TIME_COLS("calls", "Calls"),
        {"name", "Name", GT_COL_STR},
};

static const struct gt_col nvtx_cols[] = {
        TIME_COLS("instances", "Instances"),
        {"style", "Style", GT_COL_STR},
        {"domain", "Domain", GT_COL_STR},
        {"range", "Range", GT_COL_STR},
};

#define XFER_COLS GT_STATS_XFER_COLS

static const struct gt_col memcpy_cols[] = {
        XFER_COLS,
        {"kind", "Kind", GT_COL_STR},
};

static const struct gt_col memset_cols[] = {
        XFER_COLS,
        {"memory", "Memory", GT_COL_STR},
};

/* "gpu" is the number every output gives the GPU ("GPU n"; two ranks that each see their own
 * GPU as device 0 are GPU 0 and GPU 1), "uuid" its uuid */
static const struct gt_col memdev_cols[] = {
        {"gpu", "GPU", GT_COL_I64},
        {"peak_bytes", "Peak", GT_COL_BYTES},
        {"end_bytes", "At end", GT_COL_BYTES},
        {"allocs", "Allocs", GT_COL_U64},
        {"frees", "Frees", GT_COL_U64},
        {"alloc_bytes", "Allocated", GT_COL_BYTES},
        {"name", "Name", GT_COL_STR},
        {"uuid", "UUID", GT_COL_STR},
};

static const struct gt_col leak_total_cols[] = {
        {"count", "Allocations", GT_COL_U64},
        {"bytes", "Bytes", GT_COL_BYTES},
        {"unmatched_frees", "Frees of unknown blocks", GT_COL_U64},
};

static const struct gt_col alloc_cols[] = {
        {"bytes", "Bytes", GT_COL_BYTES},   {"pid", "PID", GT_COL_U64},
        {"gpu", "GPU", GT_COL_I64},         {"memory", "Memory", GT_COL_STR},
        {"at_ns", "At", GT_COL_NS},         {"freed", "Freed", GT_COL_BOOL},
        {"address", "Address", GT_COL_STR},
};

static const struct gt_col error_cols[] = {
        {"count", "Count", GT_COL_U64},       {"code", "Code", GT_COL_I64},
        {"error", "Error", GT_COL_STR},       {"domain", "Domain", GT_COL_STR},
        {"function", "Function", GT_COL_STR},
};

static const struct gt_col loss_cols[] = {
        {"source", "Source", GT_COL_STR},
        {"records", "Records lost", GT_COL_U64},
        {"detail", "Of which", GT_COL_STR},
};

static const struct gt_col reader_cols[] = {
        {"recovered", "Recovered (no footer)", GT_COL_BOOL},
        {"chunks_read", "Chunks read", GT_COL_U64},
        {"chunks_skipped", "Chunks skipped", GT_COL_U64},
        {"bytes_skipped", "Bytes skipped", GT_COL_BYTES},
        {"records_skipped", "Records skipped", GT_COL_U64},
};

static const struct gt_col trace_cols[] = {
        {"host", "Host", GT_COL_STR},
        {"command", "Command", GT_COL_STR},
        {"gputrace_version", "gputrace", GT_COL_STR},
        {"cuda_version", "CUDA", GT_COL_STR},
        {"span_ns", "Span", GT_COL_NS},
};

#define NCOLS(c) (sizeof(c) / sizeof((c)[0]))

void gt_stats_time_cells(struct gt_cell *c, const struct gt_series *s, uint64_t all_total)
{
	c[0] = gt_cell_d(all_total ? 100.0 * (double)s->total / (double)all_total : 0);
	c[1] = gt_cell_u(s->total);
	c[2] = gt_cell_u(s->count);
	c[3] = gt_cell_d(gt_stats_series_avg(s));
	c[4] = gt_cell_d(gt_stats_series_median(s));
	c[5] = gt_cell_u(s->count ? s->min : 0);
	c[6] = gt_cell_u(s->max);
	c[7] = gt_cell_d(gt_stats_series_stddev(s));
	c[8] = gt_cell_u(gt_stats_series_p99(s));
}

static uint64_t table_total(const struct gt_stat_table *t)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < t->n; i++)
		sum += t->entries[i]->time.total;
	return sum;
}

/* ---- reports ---- */

/* The kernels by base name: the instantiations of one function (templates, overloads) as one
 * row. Returns 0 or -ENOMEM; *out is freed by gt_stats_table_fini. */
static int kernels_by_base(const struct gt_stat_table *t, struct gt_stat_table *out)
{
	char buf[GT_DEMANGLE_BUF_BYTES];

	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < t->n; i++) {
		const char *b = gt_demangle_base(t->entries[i]->key, buf, sizeof(buf));
		struct gt_stat_entry *e = gt_stats_table_get(out, b, strlen(b), 0, 0);

		if (!e || gt_stats_series_merge(&e->time, &t->entries[i]->time) < 0)
			return -ENOMEM;
	}
	return 0;
}

static int report_named(struct gt_emit *e, const struct gt_stat_table *t, const char *name,
                        const char *title, const struct gt_col *cols, size_t ncols, bool demangle,
                        const char *empty)
{
	struct gt_stat_entry **v = gt_stats_table_sorted(t, 0);
	uint64_t all = table_total(t);
	char buf[GT_DEMANGLE_BUF_BYTES];
	struct gt_cell c[NTIME + 1];
	int ret = 0;

	if (!v)
		return -ENOMEM;
	gt_stats_emit_begin(e, name, title, cols, ncols, GT_EMIT_LIMITED);
	for (size_t i = 0; i < t->n && ret == 0; i++) {
		gt_stats_time_cells(c, &v[i]->time, all);
		c[NTIME] =
		        gt_cell_s(demangle ? gt_demangle(v[i]->key, buf, sizeof(buf)) : v[i]->key);
		ret = gt_stats_emit_row(e, c);
	}
	free(v);
	return ret ? ret : gt_stats_emit_end(e, empty);
}

static int report_nvtx(struct gt_emit *e, const struct gt_stats *st)
{
	struct gt_stat_entry **v = gt_stats_table_sorted(&st->nvtx, 0);
	uint64_t all = table_total(&st->nvtx);
	struct gt_cell c[NTIME + 3];
	int ret = 0;

	if (!v)
		return -ENOMEM;
	gt_stats_emit_begin(e, "nvtx", "NVTX ranges", nvtx_cols, NCOLS(nvtx_cols), GT_EMIT_LIMITED);
	for (size_t i = 0; i < st->nvtx.n && ret == 0; i++) {
		const struct gt_stat_entry *x = v[i];

		gt_stats_time_cells(c, &x->time, all);
		c[NTIME] = gt_cell_s(x->tag == GT_NVTX_START_END ? "StartEnd" : "PushPop");
		/* the default domain has no name: null, not an empty string */
		c[NTIME + 1] = x->split ? gt_cell_s(x->key) : gt_cell_null();
		c[NTIME + 2] = gt_cell_s(x->key + x->split + 1);
		ret = gt_stats_emit_row(e, c);
	}
	free(v);
	return ret ? ret : gt_stats_emit_end(e, "no NVTX ranges in this trace");
}

void gt_stats_xfer_cells(struct gt_cell *c, const struct gt_xfer_stats *x, uint64_t all)
{
	gt_stats_time_cells(c, &x->time, all);
	c[NTIME] = gt_cell_u(x->bytes_total);
	c[NTIME + 1] =
	        gt_cell_d(x->time.count ? (double)x->bytes_total / (double)x->time.count : 0);
	c[NTIME + 2] = gt_cell_u(x->time.count ? x->bytes_min : 0);
	c[NTIME + 3] = gt_cell_u(x->bytes_max);
	/* bytes per ns is GB/s; a copy too short to time has no meaningful bandwidth */
	c[NTIME + 4] = x->time.total ? gt_cell_d((double)x->bytes_total / (double)x->time.total)
	                             : gt_cell_null();
}

static int xfer_row(struct gt_emit *e, const struct gt_xfer_stats *x, uint64_t all,
                    const char *name)
{
	struct gt_cell c[NTIME + 6];

	gt_stats_xfer_cells(c, x, all);
	c[NTIME + 5] = gt_cell_s(name);
	return gt_stats_emit_row(e, c);
}

size_t gt_stats_xfer_order(const struct gt_xfer_stats *x, unsigned n, unsigned *order,
                           uint64_t *all)
{
	size_t k = 0;

	*all = 0;
	for (unsigned i = 0; i < n; i++) {
		size_t j;

		if (!x[i].time.count)
			continue;
		*all += x[i].time.total;
		for (j = k; j > 0 && x[order[j - 1]].time.total < x[i].time.total; j--)
			order[j] = order[j - 1];
		order[j] = i;
		k++;
	}
	return k;
}

static int report_memcpy(struct gt_emit *e, const struct gt_stats *st)
{
	unsigned order[GT_MEMCPY_MAX];
	uint64_t all;
	size_t n = gt_stats_xfer_order(st->memcpy, GT_MEMCPY_MAX, order, &all);
	int ret = 0;

	gt_stats_emit_begin(e, "memcpy", "Memory copies by kind", memcpy_cols, NCOLS(memcpy_cols),
	                    0);
	for (size_t i = 0; i < n && ret == 0; i++)
		ret = xfer_row(e, &st->memcpy[order[i]], all, gt_memcpy_kind_name(order[i]));
	return ret ? ret : gt_stats_emit_end(e, "no memory copies in this trace");
}

static int report_memset(struct gt_emit *e, const struct gt_stats *st)
{
	unsigned order[GT_MEM_MAX];
	uint64_t all;
	size_t n = gt_stats_xfer_order(st->memset, GT_MEM_MAX, order, &all);
	int ret = 0;

	gt_stats_emit_begin(e, "memset", "Memsets by memory kind", memset_cols, NCOLS(memset_cols),
	                    0);
	for (size_t i = 0; i < n && ret == 0; i++)
		ret = xfer_row(e, &st->memset[order[i]], all, gt_mem_kind_name(order[i]));
	return ret ? ret : gt_stats_emit_end(e, "no memsets in this trace");
}

static const char *gpu_name(const struct gt_stats *st, uint32_t gpu, char *buf, size_t bytes)
{
	const struct gt_catalog_gpu *g = gt_stats_gpu(st, gpu);

	if (gpu == GT_STATS_HOST)
		return "host (pinned and pageable)";
	return g ? gt_stats_string(st, g->name_id, buf, bytes) : "";
}

static struct gt_cell gpu_cell(const struct gt_stats *st, uint32_t gpu)
{
	const struct gt_catalog_gpu *g = gt_stats_gpu(st, gpu);

	return g ? gt_cell_i(g->number) : gt_cell_null();
}

/* Times in the memory tables count from the trace's zero (docs/cli.md, "Time"). */
static uint64_t trace_origin(const struct gt_stats *st)
{
	struct gt_trace_times tt;

	return gt_reader_times(st->r, &tt) == 0 ? tt.zero_ns : 0;
}

static int alloc_row(struct gt_emit *e, const struct gt_stats *st, const struct gt_mem_live *a,
                     bool freed, uint64_t origin)
{
	struct gt_cell c[NCOLS(alloc_cols)];
	char addr[24];

	snprintf(addr, sizeof(addr), "0x%" PRIx64, a->address);
	c[0] = gt_cell_u(a->bytes);
	c[1] = gt_cell_u(a->pid);
	c[2] = gpu_cell(st, a->gpu);
	c[3] = gt_cell_s(gt_mem_kind_name(a->mem_kind));
	c[4] = gt_cell_u(a->ts_ns > origin ? a->ts_ns - origin : 0);
	c[5] = gt_cell_b(freed);
	c[6] = gt_cell_s(addr);
	return gt_stats_emit_row(e, c);
}

static int report_memory(struct gt_emit *e, struct gt_stats *st)
{
	struct gt_mem_live leaks[GT_STATS_TOP];
	uint64_t leak_count = 0, leak_bytes = 0, origin = trace_origin(st);
	size_t nleaks = 0;
	char name[256], uuid[48];
	struct gt_cell c[8];
	int ret = 0;

	/* GPU rows by number, the host row last */
	gt_stats_mem_rows(st);
	gt_stats_emit_begin(e, "memory", "Memory in use per GPU", memdev_cols, NCOLS(memdev_cols),
	                    0);
	for (size_t i = 0; i < st->nmem && ret == 0; i++) {
		const struct gt_mem_device *m = &st->mem[i];
		const struct gt_catalog_gpu *g = gt_stats_gpu(st, m->gpu);

		c[0] = gpu_cell(st, m->gpu);
		c[1] = gt_cell_u(m->peak);
		c[2] = gt_cell_u(m->in_use);
		c[3] = gt_cell_u(m->allocs);
		c[4] = gt_cell_u(m->frees);
		c[5] = gt_cell_u(m->alloc_bytes);
		c[6] = gt_cell_s(gpu_name(st, m->gpu, name, sizeof(name)));
		c[7] = g && g->have_uuid ? gt_cell_s(gt_catalog_uuid(g, uuid)) : gt_cell_null();
		ret = gt_stats_emit_row(e, c);
	}
	if (ret || (ret = gt_stats_emit_end(e, "no allocations in this trace")))
		return ret;

	/* what is still in the live table at the end was never freed */
	for (size_t j = 0; j < st->caplive; j++) {
		const struct gt_mem_live *a = &st->live[j];
		size_t k;

		if (!a->address)
			continue;
		leak_count++;
		leak_bytes += a->bytes;
		if (nleaks == GT_STATS_TOP && a->bytes <= leaks[GT_STATS_TOP - 1].bytes)
			continue;
		if (nleaks < GT_STATS_TOP)
			nleaks++;
		for (k = nleaks - 1;
		     k > 0 && (leaks[k - 1].bytes < a->bytes ||
		               (leaks[k - 1].bytes == a->bytes && leaks[k - 1].ts_ns > a->ts_ns));
		     k--)
			leaks[k] = leaks[k - 1];
		leaks[k] = *a;
	}
	gt_stats_emit_begin(e, "memory_never_freed", "Allocations never freed", leak_total_cols,
	                    NCOLS(leak_total_cols), GT_EMIT_SINGLE);
	c[0] = gt_cell_u(leak_count);
	c[1] = gt_cell_u(leak_bytes);
	c[2] = gt_cell_u(st->frees_unmatched);
	if ((ret = gt_stats_emit_row(e, c)) || (ret = gt_stats_emit_end(e, NULL)))
		return ret;

	gt_stats_emit_begin(e, "memory_never_freed_largest", "Largest allocations never freed",
	                    alloc_cols, NCOLS(alloc_cols), 0);
	for (size_t i = 0; i < nleaks && ret == 0; i++)
		ret = alloc_row(e, st, &leaks[i], false, origin);
	if (ret || (ret = gt_stats_emit_end(e, st->nmem ? "every allocation was freed"
	                                                : "no allocations in this trace")))
		return ret;

	gt_stats_emit_begin(e, "memory_largest", "Largest allocations", alloc_cols,
	                    NCOLS(alloc_cols), 0);
	for (size_t i = 0; i < st->nlargest && ret == 0; i++)
		ret = alloc_row(e, st, &st->largest[i], !gt_stats_still_live(st, &st->largest[i]),
		                origin);
	return ret ? ret : gt_stats_emit_end(e, "no allocations in this trace");
}

static int report_errors(struct gt_emit *e, const struct gt_stats *st)
{
	struct gt_stat_entry **v = gt_stats_table_sorted(&st->errors, 1);
	struct gt_cell c[NCOLS(error_cols)];
	int ret = 0;

	if (!v)
		return -ENOMEM;
	gt_stats_emit_begin(e, "errors", "Failed API calls", error_cols, NCOLS(error_cols),
	                    GT_EMIT_LIMITED);
	for (size_t i = 0; i < st->errors.n && ret == 0; i++) {
		c[0] = gt_cell_u(v[i]->count);
		c[1] = gt_cell_i(v[i]->tag);
		c[2] = gt_cell_s(gt_stats_error_name(v[i]->domain, (int32_t)v[i]->tag));
		c[3] = gt_cell_s(v[i]->domain == GT_API_DRIVER ? "driver" : "runtime");
		c[4] = gt_cell_s(v[i]->key);
		ret = gt_stats_emit_row(e, c);
	}
	free(v);
	return ret ? ret : gt_stats_emit_end(e, "no API call returned an error");
}

static int report_losses(struct gt_emit *e, const struct gt_stats *st)
{
	struct gt_cell c[NCOLS(reader_cols)];
	char detail[512];
	int ret = 0;

	gt_stats_emit_begin(e, "losses", "Lost records", loss_cols, NCOLS(loss_cols), 0);
	/* every source, zeros included: "checked and nothing lost" is worth saying */
	for (unsigned src = 0; src <= GT_LOSS_SOURCE_MAX && ret == 0; src++) {
		uint64_t total = 0;
		size_t o = 0;

		detail[0] = '\0';
		for (unsigned k = 0; k < GT_REC_MAX; k++) {
			uint64_t n = st->cat.losses[src][k];

			if (!n)
				continue;
			total += n;
			if (o < sizeof(detail))
				o += (size_t)snprintf(
				        detail + o, sizeof(detail) - o, "%s%s %" PRIu64,
				        o ? ", " : "",
				        k == GT_REC_NONE ? "unspecified" : gt_record_name(k), n);
		}
		if (src == GT_LOSS_SOURCE_MAX && total == 0)
			break; /* the catch-all row for unknown sources only when used */
		c[0] = gt_cell_s(src < GT_LOSS_SOURCE_MAX ? gt_loss_source_name(src) : "unknown");
		c[1] = gt_cell_u(total);
		c[2] = total ? gt_cell_s(detail) : gt_cell_null();
		if (src == GT_LOSS_FILE) {
			/* a damaged file loses chunks, with the records they held where known:
			 * those the trace records (merge, --reindex) and those this read skipped,
			 * in the words every output uses */
			struct gt_catalog_damage d;

			gt_catalog_damage(&st->cat, &d);
			c[1] = gt_cell_u(d.records + d.malformed);
			c[2] = gt_catalog_damaged(&d) ? gt_cell_s(gt_stats_damage_detail(
			                                        &st->cat, detail, sizeof(detail)))
			                              : gt_cell_null();
		}
		ret = gt_stats_emit_row(e, c);
	}
	if (ret || (ret = gt_stats_emit_end(e, NULL)))
		return ret;

	gt_stats_emit_begin(e, "reader", "Reading the trace file", reader_cols, NCOLS(reader_cols),
	                    GT_EMIT_SINGLE);
	c[0] = gt_cell_b(st->status.recovered);
	c[1] = gt_cell_u(st->status.chunks_read);
	c[2] = gt_cell_u(st->status.chunks_skipped);
	c[3] = gt_cell_u(st->status.bytes_skipped);
	c[4] = gt_cell_u(st->status.records_skipped);
	if ((ret = gt_stats_emit_row(e, c)))
		return ret;
	return gt_stats_emit_end(e, NULL);
}

static int section_trace(struct gt_emit *e, const struct gt_stats *st)
{
	const struct gt_trace_header *h = gt_reader_header(st->r);
	struct gt_cell c[NCOLS(trace_cols)];
	struct gt_trace_times tt;

	gt_stats_emit_begin(e, "trace", "Trace", trace_cols, NCOLS(trace_cols), GT_EMIT_SINGLE);
	c[0] = gt_cell_s(h ? h->info.hostname : NULL);
	c[1] = gt_cell_s(h ? h->info.cmdline : NULL);
	c[2] = gt_cell_s(h ? h->info.tool_version : NULL);
	c[3] = gt_cell_s(h && h->info.cuda_version && *h->info.cuda_version ? h->info.cuda_version
	                                                              : NULL);
	/* the trace's span (docs/cli.md, "Time"), as info prints it */
	c[4] = gt_reader_times(st->r, &tt) == 0 ? gt_cell_u(tt.span_ns) : gt_cell_null();
	gt_stats_emit_row(e, c);
	return gt_stats_emit_end(e, NULL);
}

/* Sections each report prints (CSV headings appear only when there is more than one). */
static unsigned count_sections(unsigned reports, bool nvtx_instances)
{
	unsigned n = 0;

	for (unsigned i = 0; i < NREPORTS; i++)
		if (reports & (1u << i))
			n += (1u << i) == GT_STATS_REPORT_MEMORY     ? 4
			     : (1u << i) == GT_STATS_REPORT_LOSSES   ? 2
			     : (1u << i) == GT_STATS_REPORT_GPU_METRICS ? 2
			     : (1u << i) == GT_STATS_REPORT_OPERATORS   ? 2
			     : (1u << i) == GT_STATS_REPORT_NVTX_GPU ? 2u + nvtx_instances
			                                             : 1;
	return n;
}

static int report_nvtx_gpu(struct gt_emit *e, struct gt_stats *st, bool with_instances,
                           const char **errmsg)
{
	struct gt_nvtx_gpu *g = NULL;
	int ret = gt_nvtx_gpu_collect(st->r, &g, errmsg);

	if (ret < 0)
		return ret;
	ret = gt_stats_report_nvtx_gpu(e, g, with_instances, trace_origin(st));
	gt_nvtx_gpu_free(g);
	return ret;
}

int gt_stats_report(struct gt_reader *r, FILE *out, const struct gt_stats_options *opts,
                    const char **errmsg)
{
	static const struct gt_stats_options defaults = {0};
	const char *dummy;
	struct gt_stats st;
	struct gt_emit *e = NULL;
	unsigned reports;
	bool demangle;
	int ret;

	if (!errmsg)
		errmsg = &dummy;
	if (!opts)
		opts = &defaults;
	reports = opts->reports ? opts->reports : GT_STATS_REPORT_ALL;
	if (opts->format >= GT_STATS_FORMAT_MAX || (reports & ~(unsigned)GT_STATS_REPORT_ANY)) {
		*errmsg = "unknown stats format or report";
		return -EINVAL;
	}
	demangle = !opts->mangled;
	ret = gt_stats_collect(&st, r, errmsg);
	if (ret < 0)
		goto out;
	if (!opts->reports && st.cat.records[GT_REC_GPU_SAMPLE])
		reports |= GT_STATS_REPORT_GPU_METRICS;
	ret = gt_stats_emit_new(out, opts->format, count_sections(reports, opts->nvtx_instances),
	                        opts->limit, &e);
	if (ret < 0)
		goto out_nomem;
	if (opts->format == GT_STATS_FORMAT_JSON && (ret = section_trace(e, &st)))
		goto out_nomem;
	if ((reports & GT_STATS_REPORT_KERNELS) && opts->base_names) {
		struct gt_stat_table base;

		ret = kernels_by_base(&st.kernels, &base);
		if (ret == 0)
			ret = report_named(e, &base, "kernels", "GPU kernels (base names)",
			                   kernel_cols, NCOLS(kernel_cols), false,
			                   "no GPU kernels in this trace");
		gt_stats_table_fini(&base);
		if (ret)
			goto out_nomem;
	} else if ((reports & GT_STATS_REPORT_KERNELS) &&
	           (ret = report_named(e, &st.kernels, "kernels", "GPU kernels", kernel_cols,
	                               NCOLS(kernel_cols), demangle,
	                               "no GPU kernels in this trace"))) {
		goto out_nomem;
	}
	if ((reports & GT_STATS_REPORT_API) &&
	    (ret = report_named(e, &st.api, "api", "CUDA API calls", api_cols, NCOLS(api_cols),
	                        false, "no API calls in this trace")))
		goto out_nomem;
	if ((reports & GT_STATS_REPORT_MEMCPY) && (ret = report_memcpy(e, &st)))
		goto out_nomem;
	if ((reports & GT_STATS_REPORT_MEMSET) && (ret = report_memset(e, &st)))
		goto out_nomem;
	if ((reports & GT_STATS_REPORT_NVTX) && (ret = report_nvtx(e, &st)))
		goto out_nomem;
	if (reports & GT_STATS_REPORT_NVTX_GPU) {
		const char *msg = NULL;

		ret = report_nvtx_gpu(e, &st, opts->nvtx_instances, &msg);
		if (ret && msg) {
			*errmsg = msg; /* a read that failed, or memory */
			goto out;
		}
		if (ret)
			goto out_nomem;
	}
	if (reports & GT_STATS_REPORT_OPERATORS) {
		const char *msg = NULL;

		ret = gt_stats_report_ops(e, r, &msg);
		if (ret && msg) {
			*errmsg = msg; /* a read that failed */
			goto out;
		}
		if (ret)
			goto out_nomem;
	}
	if ((reports & GT_STATS_REPORT_MEMORY) && (ret = report_memory(e, &st)))
		goto out_nomem;
	if ((reports & GT_STATS_REPORT_ERRORS) && (ret = report_errors(e, &st)))
		goto out_nomem;
	if ((reports & GT_STATS_REPORT_GPU_METRICS) && (ret = gt_stats_report_gpu_metrics(e, &st)))
		goto out_nomem;
	if ((reports & GT_STATS_REPORT_LOSSES) && (ret = report_losses(e, &st)))
		goto out_nomem;
	ret = gt_stats_emit_close(e);
	e = NULL;
	if (ret < 0)
		*errmsg = "could not write the report";
	goto out;
out_nomem:
	*errmsg = "out of memory while writing the report";
out:
	gt_stats_emit_close(e);
	gt_stats_fini(&st);
	return ret;
}
