/* Check suite for advise (exporters/analysis/advise*.c): each rule on a trace built to trigger
 * it and on one built not to, with exact counts and costs; the gate of --fail-on; the JSON;
 * and the findings on the real traces of tests/data. Runs as a unit test. */
#include <check.h>
#include <cjson/cJSON.h>
#include <elf.h>
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "advise.h"
#include "report.h"
#include "stacks.h"
#include "gputrace/trace.h"

#define PID   4242u
#define START 1000000000ull /* the header's start: the trace's zero */

static const char *data_dir = "tests/data";

/* ---- building traces ---- */

struct tw {
	struct gt_writer *w;
	char path[64];
};

enum {
	S_STEP = 1, /* "step" */
	S_KERNEL,
	S_MEMCPY,
	S_MEMSET,
	S_SYNC,
	S_MALLOC,
	S_LAUNCH,
	S_MEMCPY_ASYNC,
	S_NCCL,
};

static void put(struct tw *t, void *rec, unsigned type, size_t size)
{
	struct gt_rec_hdr *h = rec;

	h->type = (uint16_t)type;
	h->size = (uint16_t)size;
	h->pid = h->pid ? h->pid : PID;
	ck_assert_int_eq(gt_writer_write(t->w, h), 0);
}

static void str(struct tw *t, uint32_t id, const char *s)
{
	ck_assert_int_eq(gt_writer_string(t->w, PID, id, s, strlen(s)), 0);
}

/* A trace whose one GPU has sm SMs (0: unknown). */
static void tw_open_sm(struct tw *t, uint32_t sm)
{
	struct gt_trace_info info = {
	        .clock_id = GT_CLOCK_MONOTONIC,
	        .start_trace_ns = START,
	        .hostname = "testhost",
	        .cmdline = "./app",
	        .tool_version = "0.1.0",
	};
	struct gt_rec_process p = {.rank = -1, .local_rank = -1, .world_size = -1};
	struct gt_rec_device d = {.global_mem_bytes = 1000, .sm_count = sm};
	int fd;

	snprintf(t->path, sizeof(t->path), "/tmp/test-advise-XXXXXX");
	fd = mkstemp(t->path);
	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert_int_eq(gt_writer_open(t->path, &info, NULL, &t->w), 0);
	str(t, S_STEP, "step");
	str(t, S_KERNEL, "_Z6kernelPf");
	str(t, S_MEMCPY, "cudaMemcpy");
	str(t, S_MEMSET, "cudaMemset");
	str(t, S_SYNC, "cudaStreamSynchronize");
	str(t, S_MALLOC, "cudaMalloc");
	str(t, S_LAUNCH, "cudaLaunchKernel");
	str(t, S_MEMCPY_ASYNC, "cudaMemcpyAsync");
	str(t, S_NCCL, "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)");
	put(t, &p, GT_REC_PROCESS, sizeof(p));
	put(t, &d, GT_REC_DEVICE, sizeof(d));
}

static void tw_open(struct tw *t)
{
	tw_open_sm(t, 0);
}

static struct gt_reader *tw_close(struct tw *t)
{
	struct gt_reader *r;
	const char *msg = NULL;

	ck_assert_int_eq(gt_writer_close(t->w), 0);
	ck_assert_int_eq(gt_reader_open(t->path, &r, &msg), 0);
	unlink(t->path);
	return r;
}

/* Times below are since the zero. */
static void step(struct tw *t, uint64_t start, uint64_t end)
{
	struct gt_rec_nvtx n = {.message_id = S_STEP, .kind = GT_NVTX_PUSH_POP};

	n.start_ns = START + start;
	n.end_ns = START + end;
	put(t, &n, GT_REC_NVTX, sizeof(n));
}

static void api(struct tw *t, uint32_t name, uint32_t corr, uint64_t start, uint64_t end)
{
	struct gt_rec_api a = {.name_id = name, .correlation_id = corr};

	a.start_ns = START + start;
	a.end_ns = START + end;
	put(t, &a, GT_REC_API, sizeof(a));
}

static void kernel_named(struct tw *t, uint32_t name, uint32_t corr, uint64_t start, uint64_t end)
{
	struct gt_rec_kernel k = {.name_id = name};

	k.span = (struct gt_gpu_span){START + start, START + end, corr, 0, 1, 7};
	put(t, &k, GT_REC_KERNEL, sizeof(k));
}

static void kernel(struct tw *t, uint32_t corr, uint64_t start, uint64_t end)
{
	struct gt_rec_kernel k = {.name_id = S_KERNEL};

	k.span = (struct gt_gpu_span){START + start, START + end, corr, 0, 1, 7};
	put(t, &k, GT_REC_KERNEL, sizeof(k));
}

/* A kernel of `blocks` thread blocks on stream `stream`. */
static void kernel_grid(struct tw *t, uint32_t corr, uint64_t start, uint64_t end, uint32_t blocks,
                        uint32_t stream)
{
	struct gt_rec_kernel k = {.name_id = S_KERNEL, .grid_x = blocks, .grid_y = 1, .grid_z = 1};

	k.span = (struct gt_gpu_span){START + start, START + end, corr, 0, 1, stream};
	put(t, &k, GT_REC_KERNEL, sizeof(k));
}

static void copy(struct tw *t, uint32_t corr, uint64_t start, uint64_t end, uint32_t kind,
                 uint32_t src, uint32_t dst, uint32_t flags)
{
	struct gt_rec_memcpy m = {
	        .bytes = 4096, .copy_kind = kind, .src_kind = src, .dst_kind = dst};

	m.span = (struct gt_gpu_span){START + start, START + end, corr, 0, 1, 7};
	m.flags = flags;
	put(t, &m, GT_REC_MEMCPY, sizeof(m));
}

static void mset(struct tw *t, uint32_t corr, uint64_t start, uint64_t end, uint32_t flags)
{
	struct gt_rec_memset m = {.bytes = 64, .mem_kind = GT_MEM_DEVICE, .flags = flags};

	m.span = (struct gt_gpu_span){START + start, START + end, corr, 0, 1, 7};
	put(t, &m, GT_REC_MEMSET, sizeof(m));
}

static void stream_wait(struct tw *t, uint64_t ts)
{
	struct gt_rec_sync s = {.kind = GT_SYNC_STREAM_WAIT};

	s.span = (struct gt_gpu_span){START + ts, START + ts + 1, 0, 0, 1, 7};
	put(t, &s, GT_REC_SYNC, sizeof(s));
}

static void memop(struct tw *t, uint32_t op, uint64_t bytes, uint64_t ts)
{
	struct gt_rec_memory m = {.op = op, .address = 0x1000 + ts, .bytes = bytes};

	m.mem_kind = GT_MEM_DEVICE;
	m.ts_ns = START + ts;
	put(t, &m, GT_REC_MEMORY, sizeof(m));
}

static void alloc(struct tw *t, uint64_t bytes, uint64_t ts)
{
	struct gt_rec_memory m = {.op = GT_MEMORY_ALLOC,
	                          .address = 0x1000,
	                          .bytes = bytes,
	                          .mem_kind = GT_MEM_DEVICE};

	m.ts_ns = START + ts;
	put(t, &m, GT_REC_MEMORY, sizeof(m));
}

/* Three steps: 0 warms up, 1 and 2 are the steady state. */
static void three_steps(struct tw *t)
{
	step(t, 0, 1000);
	step(t, 1000, 2000);
	step(t, 2000, 3000);
}

/* ---- running advise ---- */

static struct gt_advise *advise_reader(struct gt_reader *r)
{
	struct gt_advise *a;
	const char *msg = NULL;

	ck_assert_int_eq(gt_advise_new(NULL, &a), 0);
	ck_assert_int_eq(gt_advise_add(a, r, "t.gtrace", &msg), 0);
	ck_assert_int_eq(gt_advise_finish(a), 0);
	gt_reader_close(r);
	return a;
}

static const struct gt_advise_finding *find(const struct gt_advise *a, unsigned rule)
{
	for (size_t i = 0; i < a->nfindings; i++)
		if (a->findings[i].rule == rule)
			return &a->findings[i];
	return NULL;
}

/* Nothing recorded: no finding, no step (fuzz-export once found the empty arrays sorted). */
START_TEST(empty)
{
	struct tw t;
	struct gt_advise *a;

	tw_open(&t);
	a = advise_reader(tw_close(&t));
	ck_assert_uint_eq(a->nfindings, 0);
	ck_assert_uint_eq(a->steps, 0);
	ck_assert_uint_eq(a->ninputs, 1);
	gt_advise_free(a);
}
END_TEST

/* ---- copies ---- */

START_TEST(pageable_memcpy)
{
	struct tw t;
	struct gt_advise *a;
	const struct gt_advise_finding *f;

	tw_open(&t);
	copy(&t, 0, 100, 1100, GT_MEMCPY_HTOD, GT_MEM_PAGEABLE, GT_MEM_DEVICE, GT_COPY_ASYNC);
	copy(&t, 0, 2000, 2250, GT_MEMCPY_DTOH, GT_MEM_DEVICE, GT_MEM_PAGEABLE, GT_COPY_ASYNC);
	a = advise_reader(tw_close(&t));
	f = find(a, GT_ADVISE_PAGEABLE_MEMCPY);
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(f->count, 2);
	ck_assert_uint_eq(f->cost_ns, 1250);
	ck_assert_uint_eq(f->bytes, 8192);
	ck_assert_uint_eq(f->ntop, 2);
	ck_assert_uint_eq(f->top[0].start_ns, 100); /* since the zero */
	ck_assert_uint_eq(f->top[0].end_ns, 1100);
	ck_assert_int_eq(f->top[0].gpu, 0);
	ck_assert_int_eq(f->top[0].stream, 7);
	ck_assert_str_eq(f->top[0].what, "HtoD 4.00 KiB, pageable host memory");
	ck_assert_ptr_null(find(a, GT_ADVISE_SYNC_MEMCPY));
	gt_advise_free(a);

	/* pinned: not this finding (the copy ran under no kernel: copy-exposed) */
	tw_open(&t);
	copy(&t, 0, 100, 1100, GT_MEMCPY_HTOD, GT_MEM_PINNED, GT_MEM_DEVICE, GT_COPY_ASYNC);
	a = advise_reader(tw_close(&t));
	ck_assert_uint_eq(a->nfindings, 1);
	ck_assert_uint_eq(a->findings[0].rule, GT_ADVISE_COPY_EXPOSED);
	gt_advise_free(a);
}
END_TEST

START_TEST(sync_memcpy_memset)
{
	struct tw t;
	struct gt_advise *a;
	const struct gt_advise_finding *f;

	tw_open(&t);
	/* the host waits in the call: its time is the cost */
	api(&t, S_MEMCPY, 7, 100, 2100);
	copy(&t, 7, 1500, 2000, GT_MEMCPY_HTOD, GT_MEM_PINNED, GT_MEM_DEVICE, 0);
	/* device to device: no host wait */
	api(&t, S_MEMCPY, 8, 3000, 3100);
	copy(&t, 8, 3050, 3090, GT_MEMCPY_DTOD, GT_MEM_DEVICE, GT_MEM_DEVICE, 0);
	api(&t, S_MEMSET, 9, 4000, 4300);
	mset(&t, 9, 4100, 4200, 0);
	a = advise_reader(tw_close(&t));
	f = find(a, GT_ADVISE_SYNC_MEMCPY);
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(f->count, 1);
	ck_assert_uint_eq(f->cost_ns, 2000);
	ck_assert_uint_eq(f->top[0].start_ns, 100);
	ck_assert_uint_eq(f->top[0].end_ns, 2100);
	f = find(a, GT_ADVISE_SYNC_MEMSET);
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(f->count, 1);
	ck_assert_uint_eq(f->cost_ns, 300);
	ck_assert_ptr_null(find(a, GT_ADVISE_PAGEABLE_MEMCPY));
	gt_advise_free(a);

	/* Async: nothing */
	tw_open(&t);
	api(&t, S_MEMCPY_ASYNC, 7, 100, 200);
	copy(&t, 7, 1500, 2000, GT_MEMCPY_HTOD, GT_MEM_PINNED, GT_MEM_DEVICE, GT_COPY_ASYNC);
	mset(&t, 9, 4100, 4200, GT_COPY_ASYNC);
	a = advise_reader(tw_close(&t));
	ck_assert_ptr_null(find(a, GT_ADVISE_SYNC_MEMCPY));
	ck_assert_ptr_null(find(a, GT_ADVISE_SYNC_MEMSET));
	gt_advise_free(a);
}
END_TEST

/* ---- calls in the steady state ---- */

START_TEST(sync_api_and_malloc)
{
	struct tw t;
	struct gt_advise *a;
	const struct gt_advise_finding *f;

	tw_open(&t);
	three_steps(&t);
	api(&t, S_SYNC, 0, 500, 900);   /* the first step warms up: not counted */
	api(&t, S_SYNC, 0, 1500, 1800); /* step 1 */
	api(&t, S_SYNC, 0, 3500, 3900); /* outside the steps */
	api(&t, S_MALLOC, 0, 100, 200); /* the first step */
	api(&t, S_MALLOC, 0, 2200, 2250);
	api(&t, S_MALLOC, 0, 3200, 3260); /* after the steps: still not the first step */
	a = advise_reader(tw_close(&t));
	ck_assert_uint_eq(a->steps, 3);
	ck_assert_uint_eq(a->steady_steps, 2);
	f = find(a, GT_ADVISE_SYNC_API);
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(f->count, 1);
	ck_assert_uint_eq(f->cost_ns, 300);
	ck_assert_uint_eq(f->per_step_ns, 150);
	ck_assert_int_eq(f->top[0].step, 1);
	ck_assert_str_eq(f->top[0].what, "cudaStreamSynchronize");
	f = find(a, GT_ADVISE_STEADY_MALLOC);
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(f->count, 2);
	ck_assert_uint_eq(f->cost_ns, 110);
	ck_assert_uint_eq(f->step_cost_ns, 50);
	ck_assert_uint_eq(f->per_step_ns, 25);
	ck_assert_uint_eq(f->top[0].start_ns, 3200);
	gt_advise_free(a);

	/* a window cut the run (all_steps): its first step counts too */
	tw_open(&t);
	three_steps(&t);
	api(&t, S_SYNC, 0, 500, 900);
	api(&t, S_SYNC, 0, 1500, 1800);
	{
		struct gt_advise_options o = {.all_steps = true};
		struct gt_reader *r = tw_close(&t);
		const char *msg = NULL;

		ck_assert_int_eq(gt_advise_new(&o, &a), 0);
		ck_assert_int_eq(gt_advise_add(a, r, "t.gtrace", &msg), 0);
		ck_assert_int_eq(gt_advise_finish(a), 0);
		gt_reader_close(r);
	}
	ck_assert_uint_eq(a->steady_steps, 3);
	f = find(a, GT_ADVISE_SYNC_API);
	ck_assert_uint_eq(f->count, 2);
	ck_assert_uint_eq(f->cost_ns, 700);
	ck_assert_uint_eq(f->per_step_ns, 233);
	gt_advise_free(a);

	/* synchronizations and allocations only where they belong */
	tw_open(&t);
	three_steps(&t);
	api(&t, S_SYNC, 0, 500, 900);
	api(&t, S_SYNC, 0, 3500, 3900);
	api(&t, S_MALLOC, 0, 100, 200);
	a = advise_reader(tw_close(&t));
	ck_assert_uint_eq(a->nfindings, 0);
	gt_advise_free(a);
}
END_TEST

/* ---- where in the code ---- */

/* Two functions of this program that "call CUDA": the frames of the stacks below. */
static __attribute__((noinline)) void advise_user_load(volatile int *x)
{
	for (int i = 0; i < 3; i++)
		*x += i;
}

static __attribute__((noinline)) void advise_user_save(volatile int *x)
{
	for (int i = 0; i < 5; i++)
		*x -= i;
}

/* This program's executable segment, as MODULE records it. */
static int exe_segment(struct dl_phdr_info *info, size_t size, void *data)
{
	struct gt_rec_module *m = data;

	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		m->start = info->dlpi_addr + ph->p_vaddr;
		m->end = m->start + ph->p_memsz;
		m->file_offset = ph->p_offset;
		m->bias = info->dlpi_addr;
		return 1; /* the first object is the program */
	}
	return 1;
}

#define S_EXE    20
#define S_CUDART 21

/* A stack of two frames: one in the CUDA runtime (no file to read: an address), then fn. */
static void stack2(struct tw *t, uint32_t id, uintptr_t fn)
{
	struct gt_rec_stack st = {.stack_id = id, .depth = 2};

	st.frames[0] = (struct gt_stack_frame){.pc = 0x7f0000001234, .kind = GT_FRAME_NATIVE};
	st.frames[1] = (struct gt_stack_frame){.pc = (uint64_t)fn + 2,
	                                       .kind = GT_FRAME_NATIVE};
	put(t, &st, GT_REC_STACK, sizeof(st));
}

static void api_stack(struct tw *t, uint32_t name, uint32_t corr, uint64_t start, uint64_t end,
                      uint32_t stack)
{
	struct gt_rec_api a = {.name_id = name, .correlation_id = corr, .stack_id = stack};

	a.start_ns = START + start;
	a.end_ns = START + end;
	put(t, &a, GT_REC_API, sizeof(a));
}

/* Four pageable copies: two from advise_user_load (1000 + 500 ns), one from advise_user_save
 * (1200), one without a stack (50). */
static void sources_trace(struct tw *t)
{
	struct gt_rec_module exe = {0}, rt = {.start = 0x7f0000000000, .end = 0x7f0000100000};
	char path[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);

	ck_assert_int_gt(n, 0);
	path[n] = '\0';
	dl_iterate_phdr(exe_segment, &exe);
	ck_assert_uint_gt(exe.end, exe.start);
	tw_open(t);
	str(t, S_EXE, path);
	str(t, S_CUDART, "/usr/lib/x86_64-linux-gnu/libcudart.so.13");
	exe.path_id = S_EXE;
	rt.path_id = S_CUDART;
	put(t, &exe, GT_REC_MODULE, sizeof(exe));
	put(t, &rt, GT_REC_MODULE, sizeof(rt));
	stack2(t, 1, (uintptr_t)advise_user_load);
	stack2(t, 2, (uintptr_t)advise_user_save);
	api_stack(t, S_MEMCPY_ASYNC, 1, 50, 90, 1);
	copy(t, 1, 100, 1100, GT_MEMCPY_HTOD, GT_MEM_PAGEABLE, GT_MEM_DEVICE, GT_COPY_ASYNC);
	api_stack(t, S_MEMCPY_ASYNC, 2, 1150, 1190, 1);
	copy(t, 2, 1200, 1700, GT_MEMCPY_HTOD, GT_MEM_PAGEABLE, GT_MEM_DEVICE, GT_COPY_ASYNC);
	api_stack(t, S_MEMCPY_ASYNC, 3, 1750, 1790, 2);
	copy(t, 3, 1800, 3000, GT_MEMCPY_DTOH, GT_MEM_DEVICE, GT_MEM_PAGEABLE, GT_COPY_ASYNC);
	api_stack(t, S_MEMCPY_ASYNC, 4, 3050, 3090, 0);
	copy(t, 4, 3100, 3150, GT_MEMCPY_DTOH, GT_MEM_DEVICE, GT_MEM_PAGEABLE, GT_COPY_ASYNC);
}

/* A finding names the places in the code its calls came from: the innermost frame of the
 * program's own (the CUDA runtime's frame passed over), costliest first; an instance its own;
 * a call without a stack counts in none. */
START_TEST(sources)
{
	struct tw t;
	struct gt_advise *a;
	const struct gt_advise_finding *f;
	struct gt_report *rep;
	const char *msg = NULL;
	char *json = NULL;
	size_t len = 0;
	FILE *out;

	sources_trace(&t);
	a = advise_reader(tw_close(&t));
	f = find(a, GT_ADVISE_PAGEABLE_MEMCPY);
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(f->count, 4);
	ck_assert_uint_eq(f->located, 3);
	ck_assert_uint_eq(f->nplaces, 2);
	ck_assert_uint_eq(f->nsources, 2);
	ck_assert_str_eq(f->sources[0].where, "advise_user_load (test-advise)");
	ck_assert_uint_eq(f->sources[0].count, 2);
	ck_assert_uint_eq(f->sources[0].cost_ns, 1500);
	ck_assert_str_eq(f->sources[1].where, "advise_user_save (test-advise)");
	ck_assert_uint_eq(f->sources[1].count, 1);
	ck_assert_uint_eq(f->sources[1].cost_ns, 1200);
	ck_assert_uint_eq(f->ntop, 4);
	ck_assert_str_eq(f->top[0].source, "advise_user_save (test-advise)");
	ck_assert_str_eq(f->top[1].source, "advise_user_load (test-advise)");
	ck_assert_str_eq(f->top[3].source, "");

	out = open_memstream(&json, &len);
	ck_assert_int_eq(gt_advise_write(a, out, GT_ADVISE_FORMAT_TABLE), 0);
	fclose(out);
	ck_assert_ptr_nonnull(strstr(json, "\n  Code:  advise_user_load (test-advise), 2 times, "
	                                   "1.500 us; advise_user_save (test-advise), 1 time, "
	                                   "1.200 us (3 of 4 with a stack)\n"));
	ck_assert_ptr_nonnull(strstr(json, " HtoD"));
	ck_assert_ptr_nonnull(strstr(json, " from advise_user_save (test-advise)\n"));
	free(json);
	json = NULL;
	out = open_memstream(&json, &len);
	ck_assert_int_eq(gt_advise_write(a, out, GT_ADVISE_FORMAT_JSON), 0);
	fclose(out);
	ck_assert_ptr_nonnull(strstr(json, "\"sources\":[{\"where\":\"advise_user_load "
	                                   "(test-advise)\",\"count\":2,\"cost_ns\":1500},{"
	                                   "\"where\":\"advise_user_save (test-advise)\","
	                                   "\"count\":1,\"cost_ns\":1200}],\"places\":2,"
	                                   "\"located\":3,"));
	free(json);
	gt_advise_free(a);

	/* the HTML report shows them */
	sources_trace(&t);
	ck_assert_int_eq(gt_report_new(NULL, &rep), 0);
	{
		struct gt_reader *r = tw_close(&t);

		ck_assert_int_eq(gt_report_add(rep, r, "t.gtrace", &msg), 0);
		gt_reader_close(r);
	}
	ck_assert_int_eq(gt_report_finish(rep), 0);
	json = NULL;
	out = open_memstream(&json, &len);
	ck_assert_int_eq(gt_report_write_html(rep, out), 0);
	fclose(out);
	ck_assert_ptr_nonnull(strstr(json, "<p><b>Code:</b> <code>advise_user_load (test-advise)"
	                                   "</code> 2 times, 1.500 us; <code>advise_user_save "
	                                   "(test-advise)</code> 1 times, 1.200 us.</p>"));
	ck_assert_ptr_nonnull(strstr(json, " from <code>advise_user_save (test-advise)</code></li>"));
	free(json);
	gt_report_free(rep);

	/* without stacks: no place named */
	tw_open(&t);
	api(&t, S_MEMCPY_ASYNC, 1, 50, 90);
	copy(&t, 1, 100, 1100, GT_MEMCPY_HTOD, GT_MEM_PAGEABLE, GT_MEM_DEVICE, GT_COPY_ASYNC);
	a = advise_reader(tw_close(&t));
	f = find(a, GT_ADVISE_PAGEABLE_MEMCPY);
	ck_assert_uint_eq(f->nsources, 0);
	ck_assert_uint_eq(f->located, 0);
	ck_assert_str_eq(f->top[0].source, "");
	gt_advise_free(a);
}
END_TEST

#define S_PY_TORCH 22
#define S_PY_FWD   23
#define S_PY_TRAIN 24
#define S_PY_STEP  25

/* A Python stack of a PyTorch program: the launch inside torch's Linear.forward, called from
 * step() of the user's train.py. */
static void python_stack(struct tw *t, uint32_t id)
{
	struct gt_rec_pycode torch_code = {.code = 0x5000, .file_id = S_PY_TORCH,
	                                   .name_id = S_PY_FWD, .first_line = 120};
	struct gt_rec_pycode user_code = {.code = 0x6000, .file_id = S_PY_TRAIN,
	                                  .name_id = S_PY_STEP, .first_line = 40};
	struct gt_rec_pyline l1 = {.code = 0x5000, .offset = 10, .line = 125};
	struct gt_rec_pyline l2 = {.code = 0x6000, .offset = 64, .line = 42};
	struct gt_rec_stack st = {.stack_id = id, .depth = 2};

	str(t, S_PY_TORCH, "/usr/lib/python3/dist-packages/torch/nn/modules/linear.py");
	str(t, S_PY_FWD, "Linear.forward");
	str(t, S_PY_TRAIN, "/home/u/train.py");
	str(t, S_PY_STEP, "step");
	put(t, &torch_code, GT_REC_PYCODE, sizeof(torch_code));
	put(t, &user_code, GT_REC_PYCODE, sizeof(user_code));
	put(t, &l1, GT_REC_PYLINE, sizeof(l1));
	put(t, &l2, GT_REC_PYLINE, sizeof(l2));
	st.frames[0] = (struct gt_stack_frame){.pc = 0x5000, .kind = GT_FRAME_PYTHON, .arg = 10};
	st.frames[1] = (struct gt_stack_frame){.pc = 0x6000, .kind = GT_FRAME_PYTHON, .arg = 64};
	put(t, &st, GT_REC_STACK, sizeof(st));
}

/* With Python frames, the place is the user's line: torch's own frame passed over. */
START_TEST(sources_python)
{
	struct tw t;
	struct gt_advise *a;
	const struct gt_advise_finding *f;

	tw_open(&t);
	python_stack(&t, 1);
	api_stack(&t, S_MEMCPY_ASYNC, 1, 50, 90, 1);
	copy(&t, 1, 100, 1100, GT_MEMCPY_HTOD, GT_MEM_PAGEABLE, GT_MEM_DEVICE, GT_COPY_ASYNC);
	a = advise_reader(tw_close(&t));
	f = find(a, GT_ADVISE_PAGEABLE_MEMCPY);
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(f->nsources, 1);
	ck_assert_str_eq(f->sources[0].where, "/home/u/train.py(42): step");
	ck_assert_str_eq(f->top[0].source, "/home/u/train.py(42): step");
	gt_advise_free(a);
}
END_TEST

/* Which frame is the user's. */
START_TEST(user_frame)
{
	struct gt_stack_sym native[] = {
	        {.symbol = "cudaMemcpy", .module = "/usr/lib/libcudart.so.13"},
	        {.symbol = "at::copy_", .module = "/x/torch/lib/libtorch_cuda.so"},
	        {.symbol = "load", .module = "/home/u/app"},
	        {.symbol = "main", .module = "/home/u/app"},
	};
	struct gt_stack_sym libs[] = {
	        {.symbol = "cudaMemcpy", .module = "/usr/lib/libcudart.so.13"},
	        {.symbol = "_PyEval_EvalFrameDefault", .module = "/usr/bin/python3.11"},
	};
	struct gt_stack_sym py[] = {
	        {.symbol = "f", .module = "/usr/lib/python3.11/threading.py", .python = true},
	        {.symbol = "g", .module = "/v/lib/python3.12/site-packages/torch/x.py", .python = true},
	        {.symbol = "h", .module = "<frozen runpy>", .python = true},
	        {.symbol = "step", .module = "/home/u/lib/python/train.py", .python = true},
	};
	struct gt_stack_sym py_only_libs[] = {
	        {.symbol = "x", .module = "/usr/lib/python3/dist-packages/a.py", .python = true},
	        {.symbol = "y", .module = "/usr/lib/python3/dist-packages/b.py", .python = true},
	};

	ck_assert_uint_eq(gt_stacks_user_frame(native, 4), 2);
	ck_assert_uint_eq(gt_stacks_user_frame(libs, 2), 0);
	ck_assert_uint_eq(gt_stacks_user_frame(py, 4), 3);
	ck_assert_uint_eq(gt_stacks_user_frame(py_only_libs, 2), 0);
}
END_TEST

/* ---- GPU idle ---- */

START_TEST(idle_by_cause)
{
	struct tw t;
	struct gt_advise *a;
	const struct gt_advise_finding *f;

	tw_open(&t);
	three_steps(&t);
	api(&t, S_LAUNCH, 1, 990, 995);
	kernel(&t, 1, 1000, 1100);
	/* launched after the GPU went idle at 1100: host 1100..1260, then 40 ns late */
	api(&t, S_LAUNCH, 2, 1250, 1260);
	kernel(&t, 2, 1300, 1400);
	/* queued at 1280 behind a wait on an event (1265): 1400..1500 */
	stream_wait(&t, 1265);
	api(&t, S_LAUNCH, 3, 1270, 1280);
	kernel(&t, 3, 1500, 1600);
	/* queued at 1295, no wait: 1600..1700 */
	api(&t, S_LAUNCH, 4, 1290, 1295);
	kernel(&t, 4, 1700, 1800);
	a = advise_reader(tw_close(&t));
	f = find(a, GT_ADVISE_IDLE_HOST);
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(f->count, 1);
	ck_assert_uint_eq(f->cost_ns, 160);
	ck_assert_uint_eq(f->top[0].start_ns, 1100);
	ck_assert_uint_eq(f->top[0].end_ns, 1260);
	ck_assert_str_eq(f->top[0].what, "before kernel");
	f = find(a, GT_ADVISE_IDLE_EVENT);
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(f->count, 1);
	ck_assert_uint_eq(f->cost_ns, 100);
	ck_assert_uint_eq(f->top[0].start_ns, 1400);
	f = find(a, GT_ADVISE_IDLE_OTHER);
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(f->count, 2);
	ck_assert_uint_eq(f->cost_ns, 140);
	ck_assert_uint_eq(f->top[0].cost_ns, 100);
	ck_assert_uint_eq(f->top[1].cost_ns, 40);
	ck_assert_ptr_null(find(a, GT_ADVISE_SHORT_KERNELS));
	gt_advise_free(a);

	/* back to back: no idle time */
	tw_open(&t);
	three_steps(&t);
	api(&t, S_LAUNCH, 1, 990, 995);
	kernel(&t, 1, 1000, 1100);
	api(&t, S_LAUNCH, 2, 996, 999);
	kernel(&t, 2, 1100, 1200);
	a = advise_reader(tw_close(&t));
	ck_assert_uint_eq(a->nfindings, 0);
	gt_advise_free(a);
}
END_TEST

START_TEST(short_kernels)
{
	struct tw t;
	struct gt_advise *a;
	const struct gt_advise_finding *f;

	tw_open(&t);
	api(&t, S_LAUNCH, 1, 0, 200);
	kernel(&t, 1, 150, 200); /* 50 ns, launched in 200 */
	api(&t, S_LAUNCH, 2, 200, 400);
	kernel(&t, 2, 400, 700); /* 300 ns: longer than its launch */
	a = advise_reader(tw_close(&t));
	f = find(a, GT_ADVISE_SHORT_KERNELS);
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(f->count, 1);
	ck_assert_uint_eq(f->cost_ns, 150);
	ck_assert_str_eq(f->top[0].what, "kernel: ran 50 ns, its launch took 200 ns");
	gt_advise_free(a);

	tw_open(&t);
	api(&t, S_LAUNCH, 2, 200, 400);
	kernel(&t, 2, 400, 700);
	a = advise_reader(tw_close(&t));
	ck_assert_ptr_null(find(a, GT_ADVISE_SHORT_KERNELS));
	gt_advise_free(a);
}
END_TEST

/* ---- steps and memory ---- */

START_TEST(slow_steps)
{
	static const uint64_t slow[] = {5000, 1000, 1000, 1000, 2000};
	static const uint64_t even[] = {5000, 1000, 1000, 1200, 1000};
	struct tw t;
	struct gt_advise *a;
	const struct gt_advise_finding *f;
	uint64_t at = 0;

	tw_open(&t);
	for (size_t i = 0; i < 5; i++) {
		step(&t, at, at + slow[i]);
		at += slow[i];
	}
	a = advise_reader(tw_close(&t));
	f = find(a, GT_ADVISE_SLOW_STEPS);
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(f->count, 1);
	ck_assert_uint_eq(f->cost_ns, 1000);
	ck_assert_int_eq(f->top[0].step, 4);
	ck_assert_uint_eq(f->top[0].start_ns, 8000);
	ck_assert_uint_eq(f->top[0].end_ns, 10000);
	ck_assert_str_eq(f->detail, "median step 1.000 us");
	gt_advise_free(a);

	tw_open(&t);
	at = 0;
	for (size_t i = 0; i < 5; i++) {
		step(&t, at, at + even[i]);
		at += even[i];
	}
	a = advise_reader(tw_close(&t));
	ck_assert_uint_eq(a->nfindings, 0);
	gt_advise_free(a);
}
END_TEST

START_TEST(memory_full)
{
	struct tw t;
	struct gt_advise *a;
	const struct gt_advise_finding *f;

	tw_open(&t); /* the GPU has 1000 bytes */
	alloc(&t, 950, 500);
	a = advise_reader(tw_close(&t));
	f = find(a, GT_ADVISE_MEMORY_FULL);
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(f->count, 1);
	ck_assert_uint_eq(f->cost_ns, 0);
	ck_assert_uint_eq(f->bytes, 950);
	ck_assert_uint_eq(f->top[0].start_ns, 500);
	ck_assert_str_eq(f->top[0].what, "950 B in use of 1000 B (95.0%)");
	gt_advise_free(a);

	tw_open(&t);
	alloc(&t, 800, 500);
	a = advise_reader(tw_close(&t));
	ck_assert_uint_eq(a->nfindings, 0);
	gt_advise_free(a);
}
END_TEST

START_TEST(copy_exposed)
{
	struct tw t;
	struct gt_advise *a;
	const struct gt_advise_finding *f;

	tw_open(&t);
	three_steps(&t);
	kernel(&t, 0, 1000, 1500);
	/* 1200..1700: its last 200 ns under no kernel */
	copy(&t, 0, 1200, 1700, GT_MEMCPY_HTOD, GT_MEM_PINNED, GT_MEM_DEVICE, GT_COPY_ASYNC);
	/* in the first step: warm-up, not counted */
	copy(&t, 0, 100, 300, GT_MEMCPY_HTOD, GT_MEM_PINNED, GT_MEM_DEVICE, GT_COPY_ASYNC);
	a = advise_reader(tw_close(&t));
	f = find(a, GT_ADVISE_COPY_EXPOSED);
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(f->count, 1);
	ck_assert_uint_eq(f->cost_ns, 200);
	ck_assert_uint_eq(f->bytes, 4096);
	ck_assert_str_eq(f->top[0].what, "HtoD 4.00 KiB, part of it under no kernel");
	gt_advise_free(a);

	/* under a kernel all along */
	tw_open(&t);
	three_steps(&t);
	kernel(&t, 0, 1000, 1500);
	kernel(&t, 0, 1500, 1800);
	copy(&t, 0, 1100, 1700, GT_MEMCPY_HTOD, GT_MEM_PINNED, GT_MEM_DEVICE, GT_COPY_ASYNC);
	a = advise_reader(tw_close(&t));
	ck_assert_uint_eq(a->nfindings, 0);
	gt_advise_free(a);
}
END_TEST

/* Small kernels queued back to back on one stream of a 10-SM GPU. */
static void serial_trace(struct tw *t, uint32_t blocks)
{
	tw_open_sm(t, 10);
	three_steps(t);
	/* warm-up step: a run that does not count */
	api(t, S_LAUNCH, 11, 10, 20);
	kernel_grid(t, 11, 100, 200, blocks, 7);
	api(t, S_LAUNCH, 12, 20, 30);
	kernel_grid(t, 12, 200, 300, blocks, 7);
	/* step 1: three kernels, each launched before the one ahead ended */
	api(t, S_LAUNCH, 1, 1000, 1010);
	kernel_grid(t, 1, 1100, 1300, blocks > 2 ? blocks : 2, 7);
	api(t, S_LAUNCH, 2, 1010, 1020);
	kernel_grid(t, 2, 1300, 1400, blocks > 5 ? blocks : 5, 7);
	api(t, S_LAUNCH, 3, 1020, 1030);
	kernel_grid(t, 3, 1400, 1700, blocks, 7);
	/* step 2: a run that another stream's kernel overlaps */
	api(t, S_LAUNCH, 4, 2000, 2010);
	kernel_grid(t, 4, 2100, 2200, blocks, 7);
	api(t, S_LAUNCH, 5, 2010, 2020);
	kernel_grid(t, 5, 2200, 2300, blocks, 7);
	kernel_grid(t, 6, 2150, 2250, 1, 9);
	/* and two kernels the host launched late: the host kept them apart */
	api(t, S_LAUNCH, 7, 2400, 2410);
	kernel_grid(t, 7, 2500, 2600, blocks, 7);
	api(t, S_LAUNCH, 8, 2650, 2660);
	kernel_grid(t, 8, 2700, 2800, blocks, 7);
}

START_TEST(serialized)
{
	struct tw t;
	struct gt_advise *a;
	const struct gt_advise_finding *f;

	serial_trace(&t, 1);
	a = advise_reader(tw_close(&t));
	f = find(a, GT_ADVISE_SERIALIZED);
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(f->count, 1);
	/* 600 ns in a row; side by side as long as the longest, 300 ns (their SM-time, 120 ns
	 * over every SM, is less) */
	ck_assert_uint_eq(f->cost_ns, 300);
	ck_assert_uint_eq(f->top[0].start_ns, 1100);
	ck_assert_uint_eq(f->top[0].end_ns, 1700);
	ck_assert_int_eq(f->top[0].stream, 7);
	ck_assert_int_eq(f->top[0].step, 1);
	ck_assert_str_eq(f->top[0].what, "3 kernels in a row, none on more than 5 of 10 SMs "
	                                 "(first: kernel)");
	gt_advise_free(a);

	/* the same kernels on grids that fill the GPU */
	serial_trace(&t, 10);
	a = advise_reader(tw_close(&t));
	ck_assert_ptr_null(find(a, GT_ADVISE_SERIALIZED));
	gt_advise_free(a);

	/* a GPU whose SM count is unknown: no finding */
	tw_open(&t);
	three_steps(&t);
	api(&t, S_LAUNCH, 1, 1000, 1010);
	kernel_grid(&t, 1, 1100, 1300, 1, 7);
	api(&t, S_LAUNCH, 2, 1010, 1020);
	kernel_grid(&t, 2, 1300, 1400, 1, 7);
	a = advise_reader(tw_close(&t));
	ck_assert_ptr_null(find(a, GT_ADVISE_SERIALIZED));
	gt_advise_free(a);
}
END_TEST

START_TEST(memory_growth)
{
	struct tw t;
	struct gt_advise *a;
	const struct gt_advise_finding *f;

	tw_open(&t);
	for (uint64_t k = 0; k < 5; k++) {
		step(&t, k * 1000, k * 1000 + 1000);
		memop(&t, GT_MEMORY_ALLOC, 100, k * 1000 + 500);
	}
	a = advise_reader(tw_close(&t));
	f = find(a, GT_ADVISE_MEMORY_GROWTH);
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(f->count, 1);
	ck_assert_uint_eq(f->bytes, 300);
	ck_assert_uint_eq(f->top[0].start_ns, 1000);
	ck_assert_uint_eq(f->top[0].end_ns, 5000);
	ck_assert_str_eq(f->top[0].what, "100 B more after each of 3 steps: 200 B, then 500 B");
	gt_advise_free(a);

	/* freed again in step 3: no growth */
	tw_open(&t);
	for (uint64_t k = 0; k < 5; k++) {
		step(&t, k * 1000, k * 1000 + 1000);
		if (k != 3)
			memop(&t, GT_MEMORY_ALLOC, 100, k * 1000 + 500);
		else
			memop(&t, GT_MEMORY_FREE, 100, k * 1000 + 500);
	}
	a = advise_reader(tw_close(&t));
	ck_assert_ptr_null(find(a, GT_ADVISE_MEMORY_GROWTH));
	gt_advise_free(a);
}
END_TEST

START_TEST(nccl_exposed)
{
	struct tw t;
	struct gt_advise *a;
	const struct gt_advise_finding *f;

	tw_open(&t);
	three_steps(&t);
	kernel(&t, 0, 100, 400); /* step 0: not counted */
	kernel_named(&t, S_NCCL, 0, 400, 900);
	kernel(&t, 0, 1000, 1300); /* step 1: 300 ns of it under compute */
	kernel_named(&t, S_NCCL, 0, 1000, 1800);
	kernel(&t, 0, 2000, 2500); /* step 2: all of it */
	kernel_named(&t, S_NCCL, 0, 2100, 2400);
	a = advise_reader(tw_close(&t));
	f = find(a, GT_ADVISE_NCCL_EXPOSED);
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(f->count, 1);
	ck_assert_uint_eq(f->cost_ns, 500);
	ck_assert_int_eq(f->top[0].step, 1);
	ck_assert_uint_eq(f->top[0].start_ns, 1000);
	ck_assert_uint_eq(f->top[0].end_ns, 2000);
	ck_assert_str_eq(f->top[0].what,
	                 "step 1: 800 ns of communication, 300 ns of it under compute");
	gt_advise_free(a);

	tw_open(&t);
	three_steps(&t);
	kernel(&t, 0, 1000, 1900);
	kernel_named(&t, S_NCCL, 0, 1000, 1800);
	a = advise_reader(tw_close(&t));
	ck_assert_ptr_null(find(a, GT_ADVISE_NCCL_EXPOSED));
	gt_advise_free(a);
}
END_TEST

/* ---- the gate, the order, JSON ---- */

START_TEST(gate)
{
	struct gt_advise_gate g;
	struct tw t;
	struct gt_advise *a;

	ck_assert_int_eq(gt_advise_gate_parse("sync-api", &g), 0);
	ck_assert(g.by_rule);
	ck_assert_uint_eq(g.rule, GT_ADVISE_SYNC_API);
	ck_assert_int_eq(gt_advise_gate_parse("10ms", &g), 0);
	ck_assert_uint_eq(g.cost_ns, 10000000);
	ck_assert_int_eq(gt_advise_gate_parse("2.5us", &g), 0);
	ck_assert_uint_eq(g.cost_ns, 2500);
	ck_assert_int_eq(gt_advise_gate_parse("5%", &g), 0);
	ck_assert(g.by_share);
	ck_assert_uint_eq(g.share_bp, 500);
	ck_assert_int_eq(gt_advise_gate_parse("10", &g), -EINVAL);
	ck_assert_int_eq(gt_advise_gate_parse("101%", &g), -EINVAL);
	ck_assert_int_eq(gt_advise_gate_parse("sync", &g), -EINVAL);
	ck_assert_int_eq(gt_advise_gate_parse("-1ms", &g), -EINVAL);

	/* a trace of span 2500 ns whose findings cost 2000 (sync-memcpy), 1000 (copy-exposed: no
	 * kernel ran) and 500 (pageable-memcpy) */
	tw_open(&t);
	api(&t, S_MEMCPY, 7, 100, 2100);
	copy(&t, 7, 1500, 2000, GT_MEMCPY_HTOD, GT_MEM_PINNED, GT_MEM_DEVICE, 0);
	copy(&t, 0, 2000, 2500, GT_MEMCPY_HTOD, GT_MEM_PAGEABLE, GT_MEM_DEVICE, GT_COPY_ASYNC);
	a = advise_reader(tw_close(&t));
	ck_assert_uint_eq(a->span_ns, 2500);
	ck_assert_uint_eq(a->nfindings, 3);
	ck_assert_uint_eq(a->findings[0].rule, GT_ADVISE_SYNC_MEMCPY); /* costliest first */
	ck_assert_uint_eq(a->findings[1].rule, GT_ADVISE_COPY_EXPOSED);
	ck_assert_uint_eq(a->findings[1].cost_ns, 1000);
	ck_assert_uint_eq(a->findings[2].rule, GT_ADVISE_PAGEABLE_MEMCPY);
	gt_advise_gate_parse("pageable-memcpy", &g);
	ck_assert_ptr_eq(gt_advise_gate_match(a, &g), &a->findings[2]);
	gt_advise_gate_parse("sync-api", &g);
	ck_assert_ptr_null(gt_advise_gate_match(a, &g));
	gt_advise_gate_parse("2us", &g);
	ck_assert_ptr_eq(gt_advise_gate_match(a, &g), &a->findings[0]);
	gt_advise_gate_parse("2001ns", &g);
	ck_assert_ptr_null(gt_advise_gate_match(a, &g));
	gt_advise_gate_parse("80%", &g);
	ck_assert_ptr_eq(gt_advise_gate_match(a, &g), &a->findings[0]);
	gt_advise_gate_parse("80.1%", &g);
	ck_assert_ptr_null(gt_advise_gate_match(a, &g));
	gt_advise_free(a);
}
END_TEST

START_TEST(json)
{
	struct tw t;
	struct gt_advise *a;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;
	cJSON *root, *fi, *in;

	tw_open(&t);
	copy(&t, 0, 100, 1100, GT_MEMCPY_HTOD, GT_MEM_PAGEABLE, GT_MEM_DEVICE, GT_COPY_ASYNC);
	a = advise_reader(tw_close(&t));
	f = open_memstream(&buf, &len);
	ck_assert_int_eq(gt_advise_write(a, f, GT_ADVISE_FORMAT_JSON), 0);
	fclose(f);
	root = cJSON_Parse(buf);
	ck_assert_ptr_nonnull(root);
	/* pageable-memcpy, then copy-exposed: equal costs go by rule */
	ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(root, "findings")), 2);
	fi = cJSON_GetArrayItem(cJSON_GetObjectItem(root, "findings"), 0);
	ck_assert_str_eq(cJSON_GetObjectItem(fi, "rule")->valuestring, "pageable-memcpy");
	ck_assert_int_eq(cJSON_GetObjectItem(fi, "cost_ns")->valuedouble, 1000);
	ck_assert_int_eq(cJSON_GetObjectItem(fi, "count")->valuedouble, 1);
	in = cJSON_GetArrayItem(cJSON_GetObjectItem(fi, "instances"), 0);
	ck_assert_str_eq(cJSON_GetObjectItem(in, "from")->valuestring, "0.000000100");
	ck_assert_str_eq(cJSON_GetObjectItem(in, "to")->valuestring, "0.000001100");
	ck_assert_int_eq(cJSON_GetObjectItem(in, "stream")->valuedouble, 7);
	cJSON_Delete(root);
	free(buf);
	gt_advise_free(a);
}
END_TEST

/* ---- the real traces ---- */

static struct gt_advise *advise_files(const char *const *names, size_t n)
{
	struct gt_advise *a;
	const char *msg = NULL;
	char path[512];

	ck_assert_int_eq(gt_advise_new(NULL, &a), 0);
	for (size_t i = 0; i < n; i++) {
		struct gt_reader *r;

		snprintf(path, sizeof(path), "%s/%s", data_dir, names[i]);
		ck_assert_int_eq(gt_reader_open(path, &r, &msg), 0);
		ck_assert_int_eq(gt_advise_add(a, r, names[i], &msg), 0);
		gt_reader_close(r);
	}
	ck_assert_int_eq(gt_advise_finish(a), 0);
	return a;
}

START_TEST(real_pytorch_train)
{
	static const char *const names[] = {"pytorch-train.gtrace"};
	struct gt_advise *a = advise_files(names, 1);
	const struct gt_advise_finding *f;

	ck_assert_uint_eq(a->steps, 20);
	ck_assert_uint_eq(a->steady_steps, 19);
	ck_assert_uint_eq(a->nfindings, 7);
	/* its pageable copies: four host-to-device ones, all before the first step */
	f = find(a, GT_ADVISE_PAGEABLE_MEMCPY);
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(f->count, 4);
	ck_assert_uint_eq(f->cost_ns, 15968);
	ck_assert_uint_eq(f->bytes, 546856);
	ck_assert_uint_eq(f->step_cost_ns, 0);
	ck_assert_str_eq(f->top[0].what, "HtoD 512.00 KiB, pageable host memory");
	ck_assert_uint_eq(f->top[0].start_ns, 5000390165);
	/* the costliest: the GPU waited for the host's launches */
	ck_assert_uint_eq(a->findings[0].rule, GT_ADVISE_IDLE_HOST);
	ck_assert_uint_eq(a->findings[0].count, 381);
	ck_assert_uint_eq(a->findings[0].cost_ns, 19552825);
	ck_assert_uint_eq(a->findings[0].per_step_ns, 19552825 / 19);
	f = find(a, GT_ADVISE_SHORT_KERNELS);
	ck_assert_uint_eq(f->count, 361);
	ck_assert_uint_eq(f->cost_ns, 2872540);
	f = find(a, GT_ADVISE_STEADY_MALLOC);
	ck_assert_uint_eq(f->count, 6);
	ck_assert_uint_eq(f->cost_ns, 1976762);
	ck_assert_str_eq(f->top[0].what, "cudaHostAlloc");
	f = find(a, GT_ADVISE_SLOW_STEPS);
	ck_assert_uint_eq(f->count, 1);
	ck_assert_int_eq(f->top[0].step, 1);
	ck_assert_uint_eq(f->cost_ns, 1073625);
	ck_assert_uint_eq(find(a, GT_ADVISE_IDLE_OTHER)->count, 370);
	/* a split-K GEMM of 10 blocks and its reduction, queued in time, on a 132-SM GPU */
	f = find(a, GT_ADVISE_SERIALIZED);
	ck_assert_uint_eq(f->count, 18);
	ck_assert_uint_eq(f->cost_ns, 21407);
	ck_assert_str_eq(f->top[0].what, "2 kernels in a row, none on more than 10 of 132 SMs "
	                                 "(first: sgemm_largek_lds64)");
	ck_assert_ptr_null(find(a, GT_ADVISE_SYNC_API)); /* its syncs are outside the steps */
	ck_assert_ptr_null(find(a, GT_ADVISE_STRAGGLER));
	gt_advise_free(a);
}
END_TEST

START_TEST(real_ddp)
{
	static const char *const one[] = {"ddp-2rank.gtrace"};
	static const char *const two[] = {"ddp-rank0.gtrace", "ddp-rank1.gtrace"};
	struct gt_advise *a = advise_files(one, 1);
	const struct gt_advise_finding *f;

	f = find(a, GT_ADVISE_PAGEABLE_MEMCPY);
	ck_assert_uint_eq(f->count, 22); /* 16 host to device, 6 device to host */
	ck_assert_uint_eq(f->cost_ns, 47425);
	ck_assert_uint_eq(f->bytes, 1094208);
	/* rank 1 is slower in steps 4 and 8 */
	f = find(a, GT_ADVISE_STRAGGLER);
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(f->count, 2);
	ck_assert_uint_eq(f->cost_ns, 2615297);
	ck_assert_uint_eq(f->ranks.n, 1);
	ck_assert_int_eq(f->ranks.v[0], 1);
	ck_assert_int_eq(f->top[0].step, 4);
	f = find(a, GT_ADVISE_COPY_EXPOSED);
	ck_assert_uint_eq(f->count, 58);
	ck_assert_uint_eq(f->cost_ns, 796475);
	ck_assert_ptr_null(find(a, GT_ADVISE_NCCL_EXPOSED)); /* gloo: no NCCL kernels */
	f = find(a, GT_ADVISE_SYNC_API);
	ck_assert_uint_eq(f->count, 210);
	ck_assert_uint_eq(f->ranks.n, 2);
	gt_advise_free(a);

	/* the same job from its per-rank files */
	a = advise_files(two, 2);
	ck_assert_uint_eq(a->ninputs, 2);
	f = find(a, GT_ADVISE_STRAGGLER);
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(f->count, 2);
	ck_assert_int_eq(f->ranks.v[0], 1);
	ck_assert_uint_eq(f->top[0].input, 1);
	gt_advise_free(a);
}
END_TEST

static Suite *advise_suite(void)
{
	Suite *s = suite_create("advise");
	TCase *tc = tcase_create("rules");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, empty);
	tcase_add_test(tc, pageable_memcpy);
	tcase_add_test(tc, sync_memcpy_memset);
	tcase_add_test(tc, sync_api_and_malloc);
	tcase_add_test(tc, idle_by_cause);
	tcase_add_test(tc, short_kernels);
	tcase_add_test(tc, slow_steps);
	tcase_add_test(tc, memory_full);
	tcase_add_test(tc, copy_exposed);
	tcase_add_test(tc, serialized);
	tcase_add_test(tc, memory_growth);
	tcase_add_test(tc, nccl_exposed);
	tcase_add_test(tc, gate);
	tcase_add_test(tc, json);
	tcase_add_test(tc, sources);
	tcase_add_test(tc, sources_python);
	tcase_add_test(tc, user_frame);
	tcase_add_test(tc, real_pytorch_train);
	tcase_add_test(tc, real_ddp);
	suite_add_tcase(s, tc);
	return s;
}

int main(int argc, char **argv)
{
	SRunner *sr;
	int failed;

	if (argc > 1)
		data_dir = argv[1];
	sr = srunner_create(advise_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
