/* GPU suite checker: reads the .gtrace a workload (tests/gpu/workload.cu) wrote under the
 * injection library and asserts its records exactly, with the reader API. Usage:
 *   gt-gpu-check WORKLOAD FILE.gtrace [ARG [TEXT]]
 * ARG is the workload's own argument (launches N, crash-* K); TEXT, for the crash-* and
 * overload-gpu cases, is what `gputrace run` printed followed by `gputrace info FILE`.
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
/* LOSS sources (bit per enum gt_loss_source) check_common accepts: a case that expects
 * losses checks them itself. */
static unsigned loss_ok_mask;
/* Crash cases: the session's warning that the last flush interval may be lost (the process
 * never reached its exit handler) is expected, once. */
static bool flush_notice_ok;
static size_t flush_notices;

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
		if (!k->span.start_ns && !k->span.end_ns)
			continue; /* not timed by CUPTI: the kernel that faulted (crash-illegal) */
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

/* What every trace must hold: its processes, the CUPTI each loaded, their devices, no losses,
 * no warnings. */
static void check_common(size_t processes)
{
	size_t i;
	uint64_t lost = 0;
	size_t devices = 0, loaded = 0;

	EXPECT_EQ("PROCESS records", count_type(GT_REC_PROCESS), processes);
	for (i = 0; i < all.n; i++) {
		const union gt_record *r = &all.v[i];

		if (r->hdr.type == GT_REC_LOSS && !(loss_ok_mask & (1u << r->loss.source))) {
			lost += r->loss.count;
			fail("LOSS record: %" PRIu64 " records lost (%s)", r->loss.count,
			     gt_loss_source_name(r->loss.source));
		}
		if (r->hdr.type == GT_REC_DEVICE) {
			devices++;
			/* clocks: any GPU of compute capability 7 or later runs its SMs and
			 * its memory between 0.5 and 5 GHz */
			if (!*str(r->device.name_id) || !r->device.sm_count ||
			    r->device.cc_major < 7 || !r->device.global_mem_bytes ||
			    r->device.clock_khz < 500000 || r->device.clock_khz > 5000000 ||
			    r->device.mem_clock_khz < 500000 || r->device.mem_clock_khz > 5000000)
				fail("DEVICE %u incomplete: name '%s' sm %u cc %u mem %" PRIu64
				     " clock %u kHz memory clock %u kHz",
				     r->device.device_id, str(r->device.name_id),
				     r->device.sm_count, r->device.cc_major,
				     r->device.global_mem_bytes, r->device.clock_khz,
				     r->device.mem_clock_khz);
		}
		if (r->hdr.type == GT_REC_NOTICE && r->notice.code == GT_NOTICE_CUPTI_LOADED) {
			char want[32];

			loaded++;
			snprintf(want, sizeof(want), "CUPTI %d from ", r->notice.detail);
			if (r->notice.severity != GT_NOTICE_INFO || r->notice.detail < 10000 ||
			    strncmp(str(r->notice.message_id), want, strlen(want)) != 0 ||
			    !strstr(str(r->notice.message_id), "libcupti"))
				fail("CUPTI_LOADED notice: severity %u, detail %d, '%s'",
				     r->notice.severity, r->notice.detail, str(r->notice.message_id));
			continue;
		}
		if (r->hdr.type == GT_REC_NOTICE && r->notice.code == GT_NOTICE_FLUSH_WINDOW &&
		    flush_notice_ok) {
			flush_notices++;
			if (!strstr(str(r->notice.message_id),
			            "(the flush interval) may be missing"))
				fail("flush-window notice '%s'", str(r->notice.message_id));
			continue;
		}
		if (r->hdr.type == GT_REC_NOTICE && r->notice.severity >= GT_NOTICE_WARNING)
			fail("NOTICE %u: %s (detail %d)", r->notice.code, str(r->notice.message_id),
			     r->notice.detail);
	}
	EXPECT_EQ("CUPTI_LOADED notices (one per process)", loaded, processes);
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

/* overhead_on: run with -t default,overhead (else none may appear) */
static void check_launches(long n, bool overhead_on)
{
	EXPECT_EQ("kernel records", count_type(GT_REC_KERNEL), (unsigned long long)n);
	EXPECT_EQ("cudaLaunchKernel API records", count_api("cudaLaunchKernel", 0),
	          (unsigned long long)n);
	EXPECT_EQ("LOSS records", count_type(GT_REC_LOSS), 0);
	if (!overhead_on)
		EXPECT_EQ("OVERHEAD records (off by default)", count_type(GT_REC_OVERHEAD), 0);
	check_kernel_after_launch(true);
}

static size_t count_nvtx(const char *message)
{
	size_t i, n = 0;

	for (i = 0; i < all.n; i++)
		if (all.v[i].hdr.type == GT_REC_NVTX &&
		    !strcmp(str(all.v[i].nvtx.message_id), message))
			n++;
	return n;
}

static size_t count_notices(unsigned code)
{
	size_t i, n = 0;

	for (i = 0; i < all.n; i++)
		n += all.v[i].hdr.type == GT_REC_NOTICE && all.v[i].notice.code == code;
	return n;
}

/* CUPTI's overhead records (on request): some, each of a kind CUPTI documents, timed. */
static void check_overhead(void)
{
	size_t i, n = 0, by_kind[GT_OVERHEAD_KIND_MAX] = {0};

	for (i = 0; i < all.n; i++) {
		const struct gt_rec_overhead *o = &all.v[i].overhead;

		if (o->hdr.type != GT_REC_OVERHEAD)
			continue;
		n++;
		if (o->kind == GT_OVERHEAD_UNKNOWN || o->kind >= GT_OVERHEAD_KIND_MAX)
			fail("OVERHEAD record of kind %u", o->kind);
		else
			by_kind[o->kind]++;
		if (!o->start_ns || o->end_ns < o->start_ns)
			fail("OVERHEAD record timed %" PRIu64 "..%" PRIu64, o->start_ns, o->end_ns);
		if (o->object_kind != 1 && o->object_kind != 2)
			fail("OVERHEAD record on object kind %u", o->object_kind);
	}
	printf("overhead records: %zu (by kind:", n);
	for (i = 1; i < GT_OVERHEAD_KIND_MAX; i++)
		printf(" %zu", by_kind[i]);
	printf(")\n");
	if (!n)
		fail("no OVERHEAD record with -t default,overhead");
}

/* Synchronization records (on request): one of each kind, each joined by its correlation id
 * to the API call that waited. */
static void check_sync(void)
{
	static const struct {
		unsigned kind;
		const char *call;
	} want[] = {{GT_SYNC_EVENT, "cudaEventSynchronize"},
	            {GT_SYNC_STREAM_WAIT, "cudaStreamWaitEvent"},
	            {GT_SYNC_STREAM, "cudaStreamSynchronize"},
	            {GT_SYNC_CONTEXT, "cudaDeviceSynchronize"}};
	size_t i, j, k, seen[4] = {0};

	EXPECT_EQ("SYNC records", count_type(GT_REC_SYNC), 4);
	for (i = 0; i < all.n; i++) {
		const struct gt_rec_sync *s = &all.v[i].sync;
		const char *call = NULL;

		if (s->hdr.type != GT_REC_SYNC)
			continue;
		for (j = 0; j < all.n; j++)
			if (all.v[j].hdr.type == GT_REC_API &&
			    all.v[j].api.correlation_id == s->span.correlation_id &&
			    all.v[j].api.domain == GT_API_RUNTIME)
				call = str(all.v[j].api.name_id);
		for (k = 0; k < 4 && want[k].kind != s->kind; k++)
			;
		if (k == 4) {
			fail("SYNC record of kind %u", s->kind);
			continue;
		}
		seen[k]++;
		if (!call || strcmp(call, want[k].call))
			fail("SYNC kind %u, correlation %u: API call %s, want %s", s->kind,
			     s->span.correlation_id, call ? call : "(none)", want[k].call);
		if (s->span.end_ns < s->span.start_ns)
			fail("SYNC kind %u ends before it starts", s->kind);
	}
	for (k = 0; k < 4; k++)
		if (seen[k] != 1)
			fail("%zu SYNC records for %s, want 1", seen[k], want[k].call);
}

/* Capture ranges: the kernels inside each range, all of them (including those still running
 * when the range closed), and nothing from outside; one start and one stop notice per range. */
/* The ts of the n-th (from 1) notice with this code, or 0. */
static uint64_t notice_ts(unsigned code, size_t nth)
{
	size_t i;

	for (i = 0; i < all.n; i++)
		if (all.v[i].hdr.type == GT_REC_NOTICE && all.v[i].notice.code == code && !--nth)
			return all.v[i].notice.ts_ns;
	return 0;
}

static void check_capture_profiler(void)
{
	const struct gt_rec_kernel *spin = find_kernel("_Z7gt_spiny");
	uint64_t stop2 = notice_ts(GT_NOTICE_CAPTURE_STOP, 2);

	EXPECT_EQ("kernel records", count_type(GT_REC_KERNEL), 12);
	EXPECT_EQ("_Z8gt_scalePfi kernels (range 1)", count_kernels("_Z8gt_scalePfi"), 7);
	EXPECT_EQ("_Z7gt_spiny kernels (range 2, in flight at the stop)",
	          count_kernels("_Z7gt_spiny"), 1);
	EXPECT_EQ("_Z6gt_tagPii kernels (range 2, in flight at the stop)",
	          count_kernels("_Z6gt_tagPii"), 4);
	/* the 50 ms kernel ran on after the second stop, and its record is whole */
	if (!spin || !stop2)
		fail("no gt_spin kernel or no second capture stop notice");
	else if (spin->span.start_ns == 0 || spin->span.end_ns < spin->span.start_ns + 40000000u ||
	         spin->span.end_ns <= stop2)
		fail("gt_spin: start %" PRIu64 ", end %" PRIu64 ", second stop at %" PRIu64
		     "; want a 50 ms span ending after the stop",
		     spin->span.start_ns, spin->span.end_ns, stop2);
	EXPECT_EQ("_Z6gt_addPfi kernels (outside)", count_kernels("_Z6gt_addPfi"), 0);
	EXPECT_EQ("_Z8gt_emptyv kernels (outside)", count_kernels("_Z8gt_emptyv"), 0);
	EXPECT_EQ("memcpy records", count_type(GT_REC_MEMCPY), 1);
	EXPECT_EQ("HtoD 64 KiB pageable",
	          count_memcpy(GT_MEMCPY_HTOD, 64 << 10, GT_MEM_PAGEABLE, false), 1);
	EXPECT_EQ("memory records (allocations happen outside)", count_type(GT_REC_MEMORY), 0);
	EXPECT_EQ("cudaLaunchKernel API records", count_api("cudaLaunchKernel", 0), 12);
	EXPECT_EQ("cudaMemcpy API records", count_api("cudaMemcpy", 0), 1);
	EXPECT_EQ("capture start notices", count_notices(GT_NOTICE_CAPTURE_START), 2);
	EXPECT_EQ("capture stop notices", count_notices(GT_NOTICE_CAPTURE_STOP), 2);
	check_kernel_after_launch(true);
}

static void check_capture_nvtx(void)
{
	EXPECT_EQ("kernel records", count_type(GT_REC_KERNEL), 9);
	EXPECT_EQ("_Z8gt_scalePfi kernels (train)", count_kernels("_Z8gt_scalePfi"), 6);
	EXPECT_EQ("_Z8gt_emptyv kernels (train/inner)", count_kernels("_Z8gt_emptyv"), 2);
	EXPECT_EQ("_Z6gt_addPfi kernels (second train)", count_kernels("_Z6gt_addPfi"), 1);
	EXPECT_EQ("_Z6gt_tagPii kernels (outside)", count_kernels("_Z6gt_tagPii"), 0);
	EXPECT_EQ("cudaLaunchKernel API records", count_api("cudaLaunchKernel", 0), 9);
	EXPECT_EQ("NVTX records", count_type(GT_REC_NVTX), 3);
	EXPECT_EQ("NVTX train ranges", count_nvtx("train"), 2);
	EXPECT_EQ("NVTX inner ranges", count_nvtx("inner"), 1);
	EXPECT_EQ("memory records (allocations happen outside)", count_type(GT_REC_MEMORY), 0);
	EXPECT_EQ("capture start notices", count_notices(GT_NOTICE_CAPTURE_START), 2);
	EXPECT_EQ("capture stop notices", count_notices(GT_NOTICE_CAPTURE_STOP), 2);
	check_kernel_after_launch(true);
}

/* Peer copies: kind PtoP with both devices. */
static void check_p2p(void)
{
	size_t i, sync = 0, async = 0;

	EXPECT_EQ("memcpy records", count_type(GT_REC_MEMCPY), 2);
	EXPECT_EQ("DEVICE records", count_type(GT_REC_DEVICE), 2);
	for (i = 0; i < all.n; i++) {
		const struct gt_rec_memcpy *m = &all.v[i].memcpy;

		if (m->hdr.type != GT_REC_MEMCPY)
			continue;
		if (m->copy_kind != GT_MEMCPY_PTOP || m->src_device != 0 || m->dst_device != 1) {
			fail("memcpy of %" PRIu64
			     " bytes: kind %u, device %u -> %u; want PtoP 0 -> 1",
			     m->bytes, m->copy_kind, m->src_device, m->dst_device);
			continue;
		}
		sync += m->bytes == 1u << 20 && !(m->flags & GT_COPY_ASYNC);
		async += m->bytes == 512u << 10 && (m->flags & GT_COPY_ASYNC);
	}
	EXPECT_EQ("PtoP 1 MiB (cudaMemcpyPeer)", sync, 1);
	EXPECT_EQ("PtoP 512 KiB async (cudaMemcpyPeerAsync)", async, 1);
	EXPECT_EQ("cudaMemcpyPeer API records", count_api("cudaMemcpyPeer", 0), 1);
	EXPECT_EQ("cudaMemcpyPeerAsync API records", count_api("cudaMemcpyPeerAsync", 0), 1);
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

/* ---- crash and overload cases: run under `gputrace run`, which outlives the program ---- */

/* The TEXT file: the run's stdout/stderr (summary) then `gputrace info`, one line each. */
static char *text;

static int load_text(const char *path)
{
	FILE *f = fopen(path, "r");
	size_t n = 0, cap = 0, got;

	if (!f) {
		fail("cannot open %s: %s", path, strerror(errno));
		return -1;
	}
	do {
		if (cap - n < 4096) {
			char *t;

			cap = cap ? cap * 2 : 65536;
			t = realloc(text, cap + 1);
			if (!t) {
				fclose(f);
				return -1;
			}
			text = t;
		}
		got = fread(text + n, 1, cap - n, f);
		n += got;
	} while (got > 0);
	fclose(f);
	text[n] = '\0';
	return 0;
}

/* Lines of TEXT that are exactly `line`. */
static size_t text_lines_equal(const char *line)
{
	const char *p = text, *e;
	size_t n = 0, len = strlen(line);

	for (; p && *p; p = e ? e + 1 : NULL) {
		e = strchr(p, '\n');
		if ((size_t)((e ? e : p + strlen(p)) - p) == len && !memcmp(p, line, len))
			n++;
	}
	return n;
}

/* Lines of TEXT that name process `pid` ("pid N:" in info, "pid N " in the summary) and
 * contain `what`. */
static size_t text_lines_pid(uint32_t pid, const char *what)
{
	const char *p = text, *e;
	char tag[32], line[1024];
	size_t n = 0, len, tl;

	tl = (size_t)snprintf(tag, sizeof(tag), "pid %" PRIu32, pid);
	for (; p && *p; p = e ? e + 1 : NULL) {
		const char *t;

		e = strchr(p, '\n');
		len = (size_t)((e ? e : p + strlen(p)) - p);
		if (len >= sizeof(line))
			len = sizeof(line) - 1;
		memcpy(line, p, len);
		line[len] = '\0';
		t = strstr(line, tag);
		if (t && (t[tl] == ':' || t[tl] == ' ') && strstr(t, what))
			n++;
	}
	return n;
}

/* Digits grouped by commas, as the summary prints counts. */
static void grouped(uint64_t v, char *buf, size_t size)
{
	char d[24];
	size_t len = (size_t)snprintf(d, sizeof(d), "%" PRIu64, v), o = 0, i;

	for (i = 0; i < len && o + 2 < size; i++) {
		if (i && (len - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = d[i];
	}
	buf[o] = '\0';
}

/* Sum of LOSS counts by source, and by source and kind. */
static uint64_t lost_by[GT_LOSS_SOURCE_MAX][GT_REC_MAX];

static uint64_t lost_source(unsigned source)
{
	uint64_t t = 0;
	unsigned k;

	for (k = 0; k < GT_REC_MAX; k++)
		t += lost_by[source][k];
	return t;
}

static void sum_losses(void)
{
	size_t i;

	for (i = 0; i < all.n; i++) {
		const struct gt_rec_loss *l = &all.v[i].loss;

		if (l->hdr.type != GT_REC_LOSS)
			continue;
		if (l->source >= GT_LOSS_SOURCE_MAX || l->kind >= GT_REC_MAX)
			fail("LOSS record with source %u kind %u", l->source, l->kind);
		else
			lost_by[l->source][l->kind] += l->count;
	}
}

/* Every loss the trace holds is printed: the summary's "Lost records:" line and info's
 * "losses:" block, each exactly as the trace's LOSS records add up. */
static void check_losses_printed(void)
{
	char line[512], a[32], b[32];
	uint64_t total = 0;
	size_t o;
	unsigned s;

	for (s = 0; s < GT_LOSS_SOURCE_MAX; s++)
		total += lost_source(s);
	if (!total) {
		EXPECT_EQ("summary lines 'Lost records: none'",
		          text_lines_equal("Lost records: none"), 1);
		EXPECT_EQ("info lines 'losses:      none'", text_lines_equal("losses:      none"),
		          1);
		return;
	}
	grouped(total, a, sizeof(a));
	o = (size_t)snprintf(line, sizeof(line), "Lost records: %s (", a);
	for (s = 0; s < GT_LOSS_SOURCE_MAX; s++) {
		if (!lost_source(s))
			continue;
		grouped(lost_source(s), b, sizeof(b));
		o += (size_t)snprintf(line + o, sizeof(line) - o, "%s%s %s",
		                      line[o - 1] == '(' ? "" : ", ", gt_loss_source_name(s), b);
	}
	snprintf(line + o, sizeof(line) - o, "); the trace is incomplete");
	if (text_lines_equal(line) != 1)
		fail("the summary does not print '%s'", line);
	EXPECT_EQ("info lines 'losses:'", text_lines_equal("losses:"), 1);
	for (s = 0; s < GT_LOSS_SOURCE_MAX; s++) {
		if (!lost_source(s))
			continue;
		snprintf(line, sizeof(line), "  %-16s %" PRIu64, gt_loss_source_name(s),
		         lost_source(s));
		if (text_lines_equal(line) != 1)
			fail("gputrace info does not print '%s'", line);
	}
}

/* The one process ended as `how`/`code`: its PROCESS_END record, and both the summary and
 * info say so in words (`words`, e.g. "killed by signal 6 (SIGABRT)"). */
static void check_end(unsigned how, int32_t code, const char *words)
{
	uint32_t pid = 0;
	size_t i, ends = 0;

	for (i = 0; i < all.n; i++) {
		const union gt_record *r = &all.v[i];

		if (r->hdr.type == GT_REC_PROCESS && !pid)
			pid = r->hdr.pid;
		if (r->hdr.type != GT_REC_PROCESS_END)
			continue;
		ends++;
		if (r->process_end.how != how || r->process_end.code != code)
			fail("PROCESS_END: %s %d, want %s %d",
			     gt_process_end_name(r->process_end.how), r->process_end.code,
			     gt_process_end_name(how), code);
	}
	EXPECT_EQ("PROCESS_END records", ends, 1);
	/* one line in the run's summary, one in gputrace info */
	if (text_lines_pid(pid, words) != 2)
		fail("'pid %" PRIu32 " ... %s' printed %zu times, want 2 (summary and info)", pid,
		     words, text_lines_pid(pid, words));
}

/* crash-* K: the K gt_add kernels synchronized and flushed before the crash are all in the
 * trace, with their launches; the trace says how the process ended. */
static void check_crash(const char *w, long k)
{
	size_t launches = count_api("cudaLaunchKernel", 0);

	EXPECT_EQ("_Z6gt_addPfi kernels (before the crash)", count_kernels("_Z6gt_addPfi"),
	          (unsigned long long)k);
	check_dims("_Z6gt_addPfi", 4, 2, 1, 128, 1, 1, 0);
	/* every launch made before the final synchronize and sleep was flushed (every 50 ms) */
	if (!strcmp(w, "crash-abort")) {
		EXPECT_EQ("kernel records", count_type(GT_REC_KERNEL), (unsigned long long)k);
		EXPECT_EQ("cudaLaunchKernel API records", launches, (unsigned long long)k);
		check_end(GT_END_SIGNAL, 6, "killed by signal 6 (SIGABRT)");
	} else if (!strcmp(w, "crash-segv")) {
		EXPECT_EQ("kernel records", count_type(GT_REC_KERNEL), (unsigned long long)k);
		EXPECT_EQ("cudaLaunchKernel API records", launches, (unsigned long long)k);
		check_end(GT_END_SIGNAL, 11, "killed by signal 11 (SIGSEGV)");
	} else if (!strcmp(w, "crash-kill")) {
		/* CUPTI held nothing when the signal came (everything was flushed), so no
		 * flush-window estimate is required; one is accepted (loss_ok_mask) and must
		 * then be printed like any loss */
		EXPECT_EQ("kernel records", count_type(GT_REC_KERNEL), (unsigned long long)k);
		EXPECT_EQ("cudaLaunchKernel API records", launches, (unsigned long long)k);
		check_end(GT_END_SIGNAL, 9, "killed by signal 9 (SIGKILL)");
	} else if (!strcmp(w, "crash-exit")) {
		/* the second K (gt_empty) were launched but never synchronized or flushed:
		 * any number of them may be missing, none may be invented */
		if (count_kernels("_Z8gt_emptyv") > (size_t)k)
			fail("%zu gt_empty kernels, only %ld launched",
			     count_kernels("_Z8gt_emptyv"), k);
		/* API records come from CUPTI's activity buffers by default: the second K were
		 * still there at _exit, so any number of them may be missing too */
		if (launches < (size_t)k || launches > 2 * (size_t)k)
			fail("%zu cudaLaunchKernel API records, want %ld to %ld", launches, k,
			     2 * k);
		check_end(GT_END_EXIT, 5, "exited with status 5");
	} else if (!strcmp(w, "crash-illegal")) {
		if (count_kernels("_Z7gt_pokePi") > 1)
			fail("%zu gt_poke kernels, 1 launched", count_kernels("_Z7gt_pokePi"));
		EXPECT_EQ("cudaLaunchKernel API records", launches, (unsigned long long)k + 1);
		EXPECT_EQ("cudaDeviceSynchronize failing with cudaErrorIllegalAddress (700)",
		          count_api("cudaDeviceSynchronize", 700), 1);
		check_end(GT_END_EXIT, 3, "exited with status 3");
	}
	check_kernel_after_launch(true);
	check_losses_printed();
	/* abort, SIGSEGV, SIGKILL and _exit skip the exit handler and its goodbye: the session
	 * says the last interval may be missing; exit(3) after the illegal address does not */
	EXPECT_EQ("flush-window notices", flush_notices, strcmp(w, "crash-illegal") ? 1ull : 0ull);
}

/* overload-gpu N: N launches, each followed by an NVTX push+pop, through a 64 KiB ring. The
 * CUPTI buffer thread waits (bounded) for ring space and the launching thread never does, so
 * records are dropped - and every dropped record is counted:
 * - NVTX ranges: in the trace + ring_full of kind nvtx, exactly N, and some were dropped
 *   (written by the launching thread whichever way API records arrive).
 * - kernels: in the trace + ring_full of kind kernel + cupti_dropped. CUPTI's dropped count
 *   is not per kind (the LOSS says GT_REC_NONE): it may include the few non-kernel activity
 *   records of this program (context, stream, the final synchronization), so when CUPTI
 *   dropped anything the sum may exceed N by those few; without CUPTI drops it is exact.
 * - launch API records: in the trace + ring_full of kind api, likewise exact up to the few
 *   other calls the launch filter keeps (the final cudaDeviceSynchronize, start-up calls).
 * Losses are expected (the ring is far too small), they are printed, and the program still
 * exited 0. buffer_pool counts refused buffer requests, whose records CUPTI then counts as
 * dropped, so it is not added. */
#define GT_OVERLOAD_OTHER_MAX 8

static void check_overload(long n)
{
	uint64_t kernels = count_type(GT_REC_KERNEL), launches = count_api("cudaLaunchKernel", 0);
	uint64_t ring_k = lost_by[GT_LOSS_RING_FULL][GT_REC_KERNEL];
	uint64_t ring_api = lost_by[GT_LOSS_RING_FULL][GT_REC_API];
	uint64_t nvtx = count_nvtx("ovl"), ring_nvtx = lost_by[GT_LOSS_RING_FULL][GT_REC_NVTX];
	uint64_t cupti = lost_source(GT_LOSS_CUPTI_DROPPED), total = 0,
	         apis = count_type(GT_REC_API);
	unsigned s;

	for (s = 0; s < GT_LOSS_SOURCE_MAX; s++)
		total += lost_source(s);
	printf("overload: %ld launched; NVTX %" PRIu64 " + ring_full %" PRIu64 "; kernels %" PRIu64
	       " + ring_full %" PRIu64 " + cupti_dropped %" PRIu64 "; launch calls %" PRIu64
	       " + ring_full(api) %" PRIu64 "; buffer_pool %" PRIu64 ", all losses %" PRIu64 "\n",
	       n, nvtx, ring_nvtx, kernels, ring_k, cupti, launches, ring_api,
	       lost_source(GT_LOSS_BUFFER_POOL), total);
	if (kernels > (uint64_t)n)
		fail("%" PRIu64 " kernel records, only %ld launched", kernels, n);
	if (!cupti)
		EXPECT_EQ("kernel records + ring_full(kernel)", kernels + ring_k,
		          (unsigned long long)n);
	else if (kernels + ring_k + cupti < (uint64_t)n ||
	         kernels + ring_k + cupti > (uint64_t)n + GT_OVERLOAD_OTHER_MAX)
		fail("kernel records + ring_full(kernel) + cupti_dropped = %" PRIu64
		     ", want %ld (+ at most %d non-kernel records CUPTI dropped)",
		     kernels + ring_k + cupti, n, GT_OVERLOAD_OTHER_MAX);
	if (launches > (uint64_t)n)
		fail("%" PRIu64 " cudaLaunchKernel records, only %ld calls", launches, n);
	if (launches + ring_api < (uint64_t)n ||
	    apis + ring_api > (uint64_t)n + GT_OVERLOAD_OTHER_MAX)
		fail("API records: %" PRIu64 " launches, %" PRIu64
		     " in all, + ring_full(api) %" PRIu64
		     ": want %ld launches accounted for (+ at most %d other calls)",
		     launches, apis, ring_api, n, GT_OVERLOAD_OTHER_MAX);
	/* the launching thread's own records: never waited for, so dropped and counted */
	EXPECT_EQ("NVTX records + ring_full(nvtx)", nvtx + ring_nvtx, (unsigned long long)n);
	if (!ring_nvtx)
		fail("no NVTX record dropped with a 64 KiB ring: the case did not overload it");
	if (!total)
		fail("no loss with a 64 KiB ring: the case did not overload the ring (make it "
		     "smaller)");
	EXPECT_EQ("torn records", lost_source(GT_LOSS_TORN), 0);
	EXPECT_EQ("corrupt ring bytes", lost_source(GT_LOSS_CORRUPT), 0);
	check_end(GT_END_EXIT, 0, "exited with status 0");
	check_losses_printed();
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
	if (!strncmp(w, "crash-", 6) || !strcmp(w, "overload-gpu")) {
		if (argc < 5) {
			fprintf(stderr, "usage: %s %s FILE.gtrace N TEXT\n", argv[0], w);
			return 2;
		}
		if (load_text(argv[4]) < 0)
			return 1;
		sum_losses();
	}
	flush_notice_ok = !strncmp(w, "crash-", 6);
	if (!strcmp(w, "crash-kill"))
		loss_ok_mask = 1u << GT_LOSS_FLUSH_WINDOW;
	else if (!strcmp(w, "crash-exit"))
		/* _exit may come while CUPTI's thread is between reserve and commit */
		loss_ok_mask = 1u << GT_LOSS_TORN;
	else if (!strcmp(w, "overload-gpu"))
		loss_ok_mask = ~0u;
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
		check_launches(argc > 3 ? atol(argv[3]) : 1000000, false);
	else if (!strcmp(w, "fork"))
		check_fork();
	else if (!strcmp(w, "sync"))
		check_sync();
	else if (!strcmp(w, "overhead")) {
		check_launches(20000, true);
		check_overhead();
	} else if (!strcmp(w, "capture-profiler"))
		check_capture_profiler();
	else if (!strcmp(w, "capture-nvtx"))
		check_capture_nvtx();
	else if (!strcmp(w, "p2p"))
		check_p2p();
	else if (!strcmp(w, "pytorch"))
		check_pytorch();
	else if (!strcmp(w, "crash-abort") || !strcmp(w, "crash-segv") ||
	         !strcmp(w, "crash-kill") || !strcmp(w, "crash-exit") ||
	         !strcmp(w, "crash-illegal"))
		check_crash(w, atol(argv[3]));
	else if (!strcmp(w, "overload-gpu"))
		check_overload(atol(argv[3]));
	else if (!strcmp(w, "common"))
		;
	else {
		fprintf(stderr, "unknown workload %s\n", w);
		return 2;
	}
	summary(w);
	gt_reader_close(rd);
	free(all.v);
	free(text);
	return failures ? 1 : 0;
}
