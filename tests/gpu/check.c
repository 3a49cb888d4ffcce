/* GPU suite checker: reads the .gtrace a workload (tests/gpu/workload.cu) wrote under the
 * injection library and asserts its records exactly, with the reader API. Usage:
 *   gt-gpu-check WORKLOAD FILE.gtrace [ARG]
 * Prints one line per failed assertion and "ok WORKLOAD: ..." on success; exits 0 or 1.
 * Runs on the GPU machine (and builds anywhere). */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gputrace/trace.h"

/* Every record of the file, copied out (records are small and these traces are bounded). */
struct recs {
	union gt_record *v;
	size_t n, cap;
};

static struct gt_reader *rd;
static struct recs all;
static int failures;

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("FAIL: ", stdout);
	vprintf(fmt, ap);
	fputc('\n', stdout);
	va_end(ap);
	failures++;
}

#define EXPECT_EQ(what, got, want)                                                                 \
	do {                                                                                       \
		unsigned long long g_ = (unsigned long long)(got),                                 \
		                   w_ = (unsigned long long)(want);                                \
		if (g_ != w_)                                                                      \
			fail("%s: got %llu, want %llu", (what), g_, w_);                           \
	} while (0)

static const char *str(uint32_t id)
{
	const char *s = id ? gt_reader_string(rd, id, NULL) : NULL;

	return s ? s : "";
}

static int load(const char *path)
{
	const union gt_record *rec;
	const char *err = NULL;
	int ret;

	ret = gt_reader_open(path, &rd, &err);
	if (ret < 0) {
		fail("cannot open %s: %s", path, err ? err : strerror(-ret));
		return -1;
	}
	while ((ret = gt_reader_next(rd, &rec)) > 0) {
		if (rec->hdr.type == GT_REC_STRING)
			continue; /* kept in the reader's table */
		if (all.n == all.cap) {
			all.cap = all.cap ? all.cap * 2 : 4096;
			all.v = realloc(all.v, all.cap * sizeof(*all.v));
			if (!all.v)
				return -1;
		}
		memcpy(&all.v[all.n++], rec,
		       rec->hdr.size <= sizeof(*rec) ? rec->hdr.size : sizeof(*rec));
	}
	if (ret < 0) {
		fail("reading %s: %s", path, strerror(-ret));
		return -1;
	}
	if (gt_reader_status(rd)->recovered)
		fail("%s has no footer (not closed properly)", path);
	return 0;
}

static size_t count_type(unsigned type)
{
	size_t i, n = 0;

	for (i = 0; i < all.n; i++)
		n += all.v[i].hdr.type == type;
	return n;
}

static size_t count_kernels(const char *name)
{
	size_t i, n = 0;

	for (i = 0; i < all.n; i++)
		if (all.v[i].hdr.type == GT_REC_KERNEL &&
		    !strcmp(str(all.v[i].kernel.name_id), name))
			n++;
	return n;
}

static size_t count_api(const char *name, int32_t rc)
{
	size_t i, n = 0;

	for (i = 0; i < all.n; i++)
		if (all.v[i].hdr.type == GT_REC_API && !strcmp(str(all.v[i].api.name_id), name) &&
		    all.v[i].api.return_code == rc)
			n++;
	return n;
}

/* Every kernel starts after the API call that launched it (same clock), and every kernel has
 * one. Correlation ids are dense, so a plain array indexes them. */
static void check_kernel_after_launch(bool require_api)
{
	uint64_t *api_start = NULL;
	uint32_t max_corr = 0;
	size_t i, missing = 0, early = 0;

	for (i = 0; i < all.n; i++)
		if (all.v[i].hdr.type == GT_REC_API && all.v[i].api.correlation_id > max_corr)
			max_corr = all.v[i].api.correlation_id;
	api_start = calloc((size_t)max_corr + 1, sizeof(*api_start));
	if (!api_start)
		return;
	for (i = 0; i < all.n; i++)
		if (all.v[i].hdr.type == GT_REC_API && all.v[i].api.domain == GT_API_RUNTIME)
			api_start[all.v[i].api.correlation_id] = all.v[i].api.start_ns;
	for (i = 0; i < all.n; i++) {
		const struct gt_rec_kernel *k = &all.v[i].kernel;
		uint32_t c = k->span.correlation_id;

		if (k->hdr.type != GT_REC_KERNEL)
			continue;
		if (k->span.end_ns < k->span.start_ns)
			fail("kernel corr %u ends before it starts", c);
		if (c > max_corr || !api_start[c]) {
			missing++;
			continue;
		}
		if (k->span.start_ns < api_start[c]) {
			if (early < 5)
				fail("kernel corr %u starts %" PRIu64 " ns before its launch call",
				     c, api_start[c] - k->span.start_ns);
			early++;
		}
	}
	if (require_api && missing)
		fail("%zu kernels have no runtime API record with their correlation id", missing);
	if (early)
		fail("%zu kernels start before their launch call", early);
	free(api_start);
}

/* What every trace must hold: its processes, their devices, no losses, no warnings. */
static void check_common(size_t processes)
{
	size_t i;
	uint64_t lost = 0;
	size_t devices = 0;

	EXPECT_EQ("PROCESS records", count_type(GT_REC_PROCESS), processes);
	for (i = 0; i < all.n; i++) {
		const union gt_record *r = &all.v[i];

		if (r->hdr.type == GT_REC_LOSS) {
			lost += r->loss.count;
			fail("LOSS record: %" PRIu64 " records lost (%s)", r->loss.count,
			     gt_loss_source_name(r->loss.source));
		}
		if (r->hdr.type == GT_REC_DEVICE) {
			devices++;
			if (!*str(r->device.name_id) || !r->device.sm_count ||
			    r->device.cc_major < 7 || !r->device.global_mem_bytes)
				fail("DEVICE %u incomplete: name '%s' sm %u cc %u mem %" PRIu64,
				     r->device.device_id, str(r->device.name_id),
				     r->device.sm_count, r->device.cc_major,
				     r->device.global_mem_bytes);
		}
		if (r->hdr.type == GT_REC_NOTICE && r->notice.severity >= GT_NOTICE_WARNING)
			fail("NOTICE %u: %s (detail %d)", r->notice.code, str(r->notice.message_id),
			     r->notice.detail);
	}
	if (devices < 1)
		fail("no DEVICE record");
	if (count_type(GT_REC_CONTEXT) < 1)
		fail("no CONTEXT record");
	(void)lost;
}

static const struct gt_rec_kernel *find_kernel(const char *name)
{
	size_t i;

	for (i = 0; i < all.n; i++)
		if (all.v[i].hdr.type == GT_REC_KERNEL &&
		    !strcmp(str(all.v[i].kernel.name_id), name))
			return &all.v[i].kernel;
	return NULL;
}

static void check_dims(const char *name, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                       unsigned by, unsigned bz, unsigned dyn_smem)
{
	size_t i;

	for (i = 0; i < all.n; i++) {
		const struct gt_rec_kernel *k = &all.v[i].kernel;

		if (k->hdr.type != GT_REC_KERNEL || strcmp(str(k->name_id), name))
			continue;
		if (k->grid_x != gx || k->grid_y != gy || k->grid_z != gz || k->block_x != bx ||
		    k->block_y != by || k->block_z != bz || k->dynamic_smem_bytes != dyn_smem) {
			fail("%s: grid %ux%ux%u block %ux%ux%u dyn smem %u, want %ux%ux%u %ux%ux%u "
			     "%u",
			     name, k->grid_x, k->grid_y, k->grid_z, k->block_x, k->block_y,
			     k->block_z, k->dynamic_smem_bytes, gx, gy, gz, bx, by, bz, dyn_smem);
			return;
		}
	}
}

static void check_kernels(void)
{
	const struct gt_rec_kernel *k;

	EXPECT_EQ("kernel records", count_type(GT_REC_KERNEL), 22);
	EXPECT_EQ("_Z6gt_addPfi kernels", count_kernels("_Z6gt_addPfi"), 10);
	EXPECT_EQ("_Z8gt_scalePfi kernels", count_kernels("_Z8gt_scalePfi"), 5);
	EXPECT_EQ("_Z8gt_emptyv kernels", count_kernels("_Z8gt_emptyv"), 7);
	check_dims("_Z6gt_addPfi", 4, 2, 1, 128, 1, 1, 0);
	check_dims("_Z8gt_scalePfi", 8, 1, 1, 32, 4, 1, 256);
	check_dims("_Z8gt_emptyv", 1, 1, 1, 1, 1, 1, 0);
	k = find_kernel("_Z6gt_addPfi");
	if (k && (k->registers == 0 || k->registers > 255))
		fail("gt_add registers %u", k->registers);
	EXPECT_EQ("cudaLaunchKernel API records", count_api("cudaLaunchKernel", 0), 22);
	check_kernel_after_launch(true);
}

static size_t count_memcpy(unsigned kind, uint64_t bytes, unsigned src_kind, bool async)
{
	size_t i, n = 0;

	for (i = 0; i < all.n; i++) {
		const struct gt_rec_memcpy *m = &all.v[i].memcpy;

		if (m->hdr.type == GT_REC_MEMCPY && m->copy_kind == kind && m->bytes == bytes &&
		    (src_kind == GT_MEM_UNKNOWN || m->src_kind == src_kind) &&
		    !!(m->flags & GT_COPY_ASYNC) == async)
			n++;
	}
	return n;
}

static void check_memcpy(void)
{
	EXPECT_EQ("memcpy records", count_type(GT_REC_MEMCPY), 4);
	EXPECT_EQ("HtoD 1 MiB pageable",
	          count_memcpy(GT_MEMCPY_HTOD, 1 << 20, GT_MEM_PAGEABLE, false), 1);
	EXPECT_EQ("DtoH 1 MiB pageable",
	          count_memcpy(GT_MEMCPY_DTOH, 1 << 20, GT_MEM_UNKNOWN, false), 1);
	EXPECT_EQ("DtoD 512 KiB", count_memcpy(GT_MEMCPY_DTOD, 512 << 10, GT_MEM_DEVICE, false), 1);
	EXPECT_EQ("HtoD 256 KiB pinned async",
	          count_memcpy(GT_MEMCPY_HTOD, 256 << 10, GT_MEM_PINNED, true), 1);
	EXPECT_EQ("cudaMemcpy API records", count_api("cudaMemcpy", 0), 3);
	EXPECT_EQ("cudaMemcpyAsync API records", count_api("cudaMemcpyAsync", 0), 1);
}

static void check_memset(void)
{
	size_t i, found = 0;

	EXPECT_EQ("memset records", count_type(GT_REC_MEMSET), 2);
	for (i = 0; i < all.n; i++) {
		const struct gt_rec_memset *m = &all.v[i].memset;

		if (m->hdr.type != GT_REC_MEMSET)
			continue;
		if (m->bytes == 4096 && m->value == 0x5a && !(m->flags & GT_COPY_ASYNC))
			found |= 1;
		else if (m->bytes == 8192 && m->value == 0 && (m->flags & GT_COPY_ASYNC))
			found |= 2;
		else
			fail("unexpected memset: %" PRIu64 " bytes of 0x%x flags %u", m->bytes,
			     m->value, m->flags);
	}
	EXPECT_EQ("memsets found (bitmask)", found, 3);
}

static void check_alloc_pair(uint64_t bytes, bool async)
{
	size_t i, j, allocs = 0, frees = 0;

	for (i = 0; i < all.n; i++) {
		const struct gt_rec_memory *m = &all.v[i].memory;

		if (m->hdr.type != GT_REC_MEMORY || m->op != GT_MEMORY_ALLOC || m->bytes != bytes)
			continue;
		allocs++;
		if (!!(m->flags & GT_MEMORY_ASYNC) != async)
			fail("%" PRIu64 "-byte alloc: async flag %u", bytes, m->flags);
		if (async && m->stream_id == 0)
			fail("%" PRIu64 "-byte cudaMallocAsync without a stream", bytes);
		if (m->mem_kind != GT_MEM_DEVICE)
			fail("%" PRIu64 "-byte alloc: memory kind %s", bytes,
			     gt_mem_kind_name(m->mem_kind));
		for (j = 0; j < all.n; j++) {
			const struct gt_rec_memory *f = &all.v[j].memory;

			if (f->hdr.type == GT_REC_MEMORY && f->op == GT_MEMORY_FREE &&
			    f->address == m->address && f->ts_ns >= m->ts_ns) {
				frees++;
				if (f->bytes != bytes)
					fail("free of %" PRIu64 "-byte block says %" PRIu64
					     " bytes",
					     bytes, f->bytes);
				break;
			}
		}
	}
	EXPECT_EQ("allocations of this size", allocs, 1);
	EXPECT_EQ("matching frees", frees, 1);
}

static void check_alloc(void)
{
	check_alloc_pair(1 << 20, false);
	check_alloc_pair(3 << 20, false);
	check_alloc_pair(5 << 20, false);
	check_alloc_pair(2 << 20, true);
	EXPECT_EQ("cudaMalloc API records", count_api("cudaMalloc", 0), 3);
	EXPECT_EQ("cudaMallocAsync API records", count_api("cudaMallocAsync", 0), 1);
	EXPECT_EQ("cudaFreeAsync API records", count_api("cudaFreeAsync", 0), 1);
}

static void check_nvtx(void)
{
	size_t i, j, outer = 0, inner = 0, ticks = 0, handoff = 0, domain = 0, nested = 0;
	uint32_t tids[8] = {0};
	size_t ntids = 0;

	for (i = 0; i < all.n; i++) {
		const struct gt_rec_nvtx *n = &all.v[i].nvtx;
		const char *msg;

		if (n->hdr.type != GT_REC_NVTX)
			continue;
		msg = str(n->message_id);
		if (n->kind == GT_NVTX_PUSH_POP && !strcmp(msg, "outer")) {
			outer++;
			if (n->depth != 0)
				fail("outer at depth %u", n->depth);
			for (j = 0; j < ntids && tids[j] != n->tid; j++)
				;
			if (j == ntids && ntids < 8)
				tids[ntids++] = n->tid;
		} else if (n->kind == GT_NVTX_PUSH_POP && !strcmp(msg, "inner")) {
			inner++;
			if (n->depth != 1)
				fail("inner at depth %u", n->depth);
			if (n->end_ns - n->start_ns < 100000)
				fail("inner lasted %" PRIu64 " ns, slept 100 us",
				     n->end_ns - n->start_ns);
			/* nested inside an outer range of the same thread */
			for (j = 0; j < all.n; j++) {
				const struct gt_rec_nvtx *o = &all.v[j].nvtx;

				if (o->hdr.type == GT_REC_NVTX && o->tid == n->tid &&
				    !strcmp(str(o->message_id), "outer") &&
				    o->start_ns <= n->start_ns && o->end_ns >= n->end_ns) {
					nested++;
					break;
				}
			}
		} else if (n->kind == GT_NVTX_MARK && !strcmp(msg, "tick")) {
			ticks++;
		} else if (n->kind == GT_NVTX_START_END && !strcmp(msg, "handoff")) {
			handoff++;
			if (n->tid == n->end_tid)
				fail("handoff started and ended on the same thread %u", n->tid);
		} else if (!strcmp(msg, "registered-msg")) {
			domain++;
			if (strcmp(str(n->domain_id), "gtdomain"))
				fail("registered-msg in domain '%s'", str(n->domain_id));
			if (n->color != 0xff00ff00u || n->category != 7)
				fail("registered-msg color 0x%x category %u", n->color,
				     n->category);
		}
	}
	EXPECT_EQ("outer ranges", outer, 12);
	EXPECT_EQ("inner ranges", inner, 12);
	EXPECT_EQ("inner ranges nested in their thread's outer", nested, 12);
	EXPECT_EQ("threads with ranges", ntids, 4);
	EXPECT_EQ("tick marks", ticks, 4);
	EXPECT_EQ("handoff start/end ranges", handoff, 1);
	EXPECT_EQ("domain ranges", domain, 1);
}

static void check_streams8(void)
{
	uint32_t streams[16] = {0}, tids[16] = {0};
	size_t per_stream[16] = {0};
	size_t i, j, ns = 0, nt = 0, launches = 0;

	EXPECT_EQ("gt_tag kernels", count_kernels("_Z6gt_tagPii"), 800);
	for (i = 0; i < all.n; i++) {
		const union gt_record *r = &all.v[i];

		if (r->hdr.type == GT_REC_KERNEL &&
		    !strcmp(str(r->kernel.name_id), "_Z6gt_tagPii")) {
			for (j = 0; j < ns && streams[j] != r->kernel.span.stream_id; j++)
				;
			if (j == ns && ns < 16)
				streams[ns++] = r->kernel.span.stream_id;
			if (j < 16)
				per_stream[j]++;
		}
		if (r->hdr.type == GT_REC_API && !strcmp(str(r->api.name_id), "cudaLaunchKernel")) {
			launches++;
			for (j = 0; j < nt && tids[j] != r->api.tid; j++)
				;
			if (j == nt && nt < 16)
				tids[nt++] = r->api.tid;
		}
	}
	EXPECT_EQ("streams used", ns, 8);
	for (i = 0; i < ns; i++)
		EXPECT_EQ("kernels on one stream", per_stream[i], 100);
	EXPECT_EQ("cudaLaunchKernel records", launches, 800);
	EXPECT_EQ("launching threads", nt, 8);
	EXPECT_EQ("STREAM records for created streams (at least)", count_type(GT_REC_STREAM) >= 8,
	          1);
	check_kernel_after_launch(true);
}

static void check_graph(bool nodes)
{
	size_t i, graph_kernels = 0;

	for (i = 0; i < all.n; i++) {
		const struct gt_rec_kernel *k = &all.v[i].kernel;

		if (k->hdr.type == GT_REC_KERNEL && k->graph_id != 0) {
			graph_kernels++;
			if (nodes && k->graph_node_id == 0)
				fail("graph kernel without node id");
		}
	}
	EXPECT_EQ("cudaGraphLaunch API records", count_api("cudaGraphLaunch", 0), 5);
	if (nodes) {
		EXPECT_EQ("GRAPH records (node level)", count_type(GT_REC_GRAPH), 0);
		EXPECT_EQ("kernel records from graph nodes", graph_kernels, 15);
	} else {
		EXPECT_EQ("GRAPH records", count_type(GT_REC_GRAPH), 5);
		EXPECT_EQ("kernel records from graph nodes (graph level)", graph_kernels, 0);
	}
}

static void check_apierror(void)
{
	EXPECT_EQ("cudaMalloc failing with cudaErrorMemoryAllocation (2)",
	          count_api("cudaMalloc", 2), 1);
}

/* CUPTI was held by the program: one NOTICE naming the refusal, PROCESS_END detached, and no
 * GPU records at all. */
static void check_cuptifirst(void)
{
	size_t i, notices = 0, detached = 0;

	EXPECT_EQ("PROCESS records", count_type(GT_REC_PROCESS), 1);
	for (i = 0; i < all.n; i++) {
		const union gt_record *r = &all.v[i];

		if (r->hdr.type == GT_REC_NOTICE &&
		    r->notice.code == GT_NOTICE_CUPTI_SUBSCRIBE_FAILED) {
			notices++;
			EXPECT_EQ("notice detail (CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED)",
			          r->notice.detail, 39);
			if (!strstr(str(r->notice.message_id), "another profiler"))
				fail("notice message '%s'", str(r->notice.message_id));
		}
		if (r->hdr.type == GT_REC_PROCESS_END && r->process_end.how == GT_END_DETACHED)
			detached++;
	}
	EXPECT_EQ("CUPTI_SUBSCRIBE_FAILED notices", notices, 1);
	EXPECT_EQ("PROCESS_END detached", detached, 1);
	EXPECT_EQ("kernel records", count_type(GT_REC_KERNEL), 0);
}

/* gputrace run of "fork": the parent's 2 kernels and the exec'd child's 22, two processes. */
static void check_fork(void)
{
	uint32_t parent = 0, child = 0;
	size_t i, pk = 0, ck = 0;

	for (i = 0; i < all.n; i++) {
		const union gt_record *r = &all.v[i];

		if (r->hdr.type != GT_REC_PROCESS)
			continue;
		if (!parent)
			parent = r->hdr.pid;
		else
			child = r->hdr.pid;
	}
	for (i = 0; i < all.n; i++) {
		const union gt_record *r = &all.v[i];

		if (r->hdr.type != GT_REC_KERNEL)
			continue;
		if (r->hdr.pid == parent)
			pk++;
		else if (r->hdr.pid == child)
			ck++;
	}
	/* whichever registered first, one process launched 2 kernels and the other 22 */
	if (!((pk == 2 && ck == 22) || (pk == 22 && ck == 2)))
		fail("kernels per process: %zu and %zu, want 2 and 22", pk, ck);
	EXPECT_EQ("gt_add kernels (child)", count_kernels("_Z6gt_addPfi"), 10);
}

static void check_launches(long n)
{
	EXPECT_EQ("kernel records", count_type(GT_REC_KERNEL), (unsigned long long)n);
	EXPECT_EQ("cudaLaunchKernel API records", count_api("cudaLaunchKernel", 0),
	          (unsigned long long)n);
	EXPECT_EQ("LOSS records", count_type(GT_REC_LOSS), 0);
	check_kernel_after_launch(true);
}

/* PyTorch training loop (tests/gpu/torch_train.py): 20 eager steps in NVTX "step" ranges,
 * then 10 replays of a captured graph in "graph-step" ranges. */
static void check_pytorch(void)
{
	size_t i, steps = 0, gsteps = 0, kernels = count_type(GT_REC_KERNEL);
	size_t graphs = count_type(GT_REC_GRAPH);

	for (i = 0; i < all.n; i++) {
		const struct gt_rec_nvtx *n = &all.v[i].nvtx;

		if (n->hdr.type != GT_REC_NVTX || n->kind != GT_NVTX_PUSH_POP)
			continue;
		steps += !strcmp(str(n->message_id), "step");
		gsteps += !strcmp(str(n->message_id), "graph-step");
	}
	EXPECT_EQ("NVTX step ranges", steps, 20);
	EXPECT_EQ("NVTX graph-step ranges", gsteps, 10);
	/* each eager step runs a dozen or more kernels; the exact count is PyTorch's business */
	if (kernels < 20 * 10)
		fail("only %zu kernel records for 20+ training steps", kernels);
	/* the 10 replays are graph launches (captured work shows up as GRAPH records) */
	if (graphs < 10)
		fail("%zu GRAPH records, want at least the 10 replays", graphs);
	if (count_api("cudaGraphLaunch", 0) < 10)
		fail("%zu cudaGraphLaunch calls recorded, want at least 10",
		     count_api("cudaGraphLaunch", 0));
	check_kernel_after_launch(false);
}

/* Summary line: counts by type, for the log. */
static void summary(const char *what)
{
	size_t c[GT_REC_MAX] = {0}, i;

	for (i = 0; i < all.n; i++)
		if (all.v[i].hdr.type < GT_REC_MAX)
			c[all.v[i].hdr.type]++;
	printf("%s %s: %zu records (kernel %zu memcpy %zu memset %zu memory %zu api %zu nvtx %zu "
	       "sync %zu graph %zu device %zu context %zu stream %zu thread %zu loss %zu notice "
	       "%zu)\n",
	       failures ? "FAILED" : "ok", what, all.n, c[GT_REC_KERNEL], c[GT_REC_MEMCPY],
	       c[GT_REC_MEMSET], c[GT_REC_MEMORY], c[GT_REC_API], c[GT_REC_NVTX], c[GT_REC_SYNC],
	       c[GT_REC_GRAPH], c[GT_REC_DEVICE], c[GT_REC_CONTEXT], c[GT_REC_STREAM],
	       c[GT_REC_THREAD], c[GT_REC_LOSS], c[GT_REC_NOTICE]);
}

int main(int argc, char **argv)
{
	const char *w;

	if (argc < 3) {
		fprintf(stderr, "usage: %s WORKLOAD FILE.gtrace [ARG]\n", argv[0]);
		return 2;
	}
	w = argv[1];
	if (load(argv[2]) < 0)
		return 1;
	if (!strcmp(w, "cuptifirst")) {
		check_cuptifirst();
		summary(w);
		return failures ? 1 : 0;
	}
	check_common(!strcmp(w, "fork") ? 2 : 1);
	if (!strcmp(w, "kernels"))
		check_kernels();
	else if (!strcmp(w, "memcpy"))
		check_memcpy();
	else if (!strcmp(w, "memset"))
		check_memset();
	else if (!strcmp(w, "alloc"))
		check_alloc();
	else if (!strcmp(w, "nvtx"))
		check_nvtx();
	else if (!strcmp(w, "streams8"))
		check_streams8();
	else if (!strcmp(w, "graph"))
		check_graph(false);
	else if (!strcmp(w, "graph-nodes"))
		check_graph(true);
	else if (!strcmp(w, "apierror"))
		check_apierror();
	else if (!strcmp(w, "launches"))
		check_launches(argc > 3 ? atol(argv[3]) : 1000000);
	else if (!strcmp(w, "fork"))
		check_fork();
	else if (!strcmp(w, "pytorch"))
		check_pytorch();
	else if (!strcmp(w, "common"))
		;
	else {
		fprintf(stderr, "unknown workload %s\n", w);
		return 2;
	}
	summary(w);
	gt_reader_close(rd);
	free(all.v);
	return failures ? 1 : 0;
}
