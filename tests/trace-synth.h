/* A synthetic trace shaped like a real training loop, for tests, tests/mktrace.c and
 * bench/bench-trace.c: a few hundred kernel names repeated step after step, increasing
 * timestamps with jitter, realistic grid/block/stream values, and cudaLaunchKernel API
 * records whose correlation ids pair with the kernels. Deterministic for a given seed.
 * Header-only (static functions); runs in test and benchmark programs. */
#ifndef GPUTRACE_TRACE_SYNTH_H
#define GPUTRACE_TRACE_SYNTH_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "gputrace/record.h"

struct synth_opts {
	uint64_t kernels;   /* kernel records in all */
	unsigned names;     /* distinct kernel names (>= 1) */
	unsigned processes; /* traced processes (>= 1), e.g. one per rank */
	uint64_t seed;
	bool api;        /* a cudaLaunchKernel API record per kernel */
	bool memcpy;     /* a HtoD copy every 64 kernels */
	uint64_t losses; /* > 0: LOSS records for that many ring-full and 7 CUPTI drops */
	bool nccl;       /* kernel name 0 is one of NCCL's (every process runs it each step) */
	bool steps;      /* an NVTX range "step" around each step's launches, per process */
	/* Other hosts and ranks, for gputrace merge (all 0: one host, the defaults below). */
	uint32_t pid0;           /* pid of the first process; 0: SYNTH_PID0 */
	int32_t rank0;           /* > 0 or with world > 0: process p is rank rank0 + p */
	unsigned world;          /* world size recorded; 0: processes (when > 1) */
	int64_t clock_offset_ns; /* this host's trace clock runs this far from the true time */
	int64_t wall_error_ns;   /* and its wall clock (CLOCK records, the header) this far */
	/* > 0: every nccl_every-th kernel of a process is an NCCL collective (two names in
	 * turn) whose end is at a true time fixed by its sequence number: SYNTH_START_NS +
	 * (c + 1) * SYNTH_NCCL_PERIOD_NS + its jitter, on every rank alike */
	unsigned nccl_every;
	/* > 0: the c-th collective of rank r ends ((c * 7 + r * 3) % 5 - 2) * nccl_jitter_ns
	 * later (a symmetric spread of +-2 jitters around the true end) */
	uint64_t nccl_jitter_ns;
	const char *host; /* the processes' host; NULL: "gpu-node-17" */
	/* every process sees its own GPU (its own uuid) as device 0, as ranks launched with
	 * CUDA_VISIBLE_DEVICES=<rank> do; else process p uses device p % 8 */
	bool device_zero;
	/* process p allocates p + 1 blocks of SYNTH_MEM_BLOCK bytes of device memory after its
	 * metadata and frees them at its end: its GPU's peak is (p + 1) blocks */
	bool memory;
	/* known differences and stragglers (gputrace diff, stats across ranks): */
	unsigned slow_name;       /* k + 1: kernel name k runs twice as long; 0 none */
	unsigned rename;          /* k + 1: kernel name k is "<its name>_renamed"; 0 none */
	unsigned straggler;       /* p + 1: process p's kernels run 3x as long in the steps of */
	uint64_t straggler_steps; /* this mask (bit n: its step n, counted from 0) */
	/* each step ends when its GPU work has (as after torch.cuda.synchronize()), so its NVTX
	 * range holds the GPU work of its launches */
	bool sync_steps;
};

/* NCCL's all-reduce kernel as CUPTI names it (mangled) */
#define SYNTH_NCCL_KERNEL "_Z39ncclDevKernel_AllReduce_Sum_f32_RING_LL24ncclDevKernelArgsStorageILm4096EE"

/* A record with room for the longest string. */
union synth_buf {
	union gt_record rec;
	uint8_t bytes[sizeof(union gt_record) + GT_STRING_MAX + 8];
};

#define SYNTH_BATCH       32u /* launches per batch: CUPTI hands kernels over in batches */
#define SYNTH_PID0        4100u
#define SYNTH_CBID_LAUNCH 211u /* cudaLaunchKernel_v7000 */
#define SYNTH_START_NS    1000000000000ull
#define SYNTH_NCCL_PERIOD_NS 1000000ull /* nccl_every: true time between two collectives */
#define SYNTH_NCCL_STREAM    21u
#define SYNTH_MEM_BLOCK   (256ull << 20)

/* String ids: fixed ones first, then one per kernel name. */
enum {
	SYNTH_STR_EXE = 1,
	SYNTH_STR_CMDLINE,
	SYNTH_STR_HOST,
	SYNTH_STR_DEVICE,
	SYNTH_STR_API,
	SYNTH_STR_THREAD,
	SYNTH_STR_KERNEL0, /* kernel name k has id SYNTH_STR_KERNEL0 + k; then "step" (steps),
	                    * then the two collectives' names (nccl_every) */
};

/* nccl_every's two collectives (ids after the kernel names and "step"): one plain, one as a
 * C++ compiler mangles a __global__ function's name. */
static const char *const synth_nccl_names[2] = {
        "ncclDevKernel_AllReduce_Sum_f32_RING_LL",
        "_Z29ncclDevKernel_AllGather_RING_LL24ncclDevKernelArgsStorageILm4096EE",
};

struct synth_proc {
	uint64_t cpu_ns, gpu_ns; /* this process's CPU and GPU clocks */
	uint32_t corr;           /* last correlation id */
	uint32_t pos;            /* position in the step's kernel sequence */
	uint64_t step_ns;        /* when its current step began (CPU) */
	uint64_t kernels;        /* kernels of this process so far */
	uint64_t colls;          /* nccl_every's collectives of this process so far */
	uint32_t step;           /* its current step, from 0 */
	uint32_t _pad;
};

enum synth_phase {
	SYNTH_STRINGS,
	SYNTH_META,
	SYNTH_MEMORY, /* o.memory: the allocations */
	SYNTH_MAIN,
	SYNTH_END,
	SYNTH_DONE
};

struct synth {
	struct synth_opts o;
	uint64_t rng;
	enum synth_phase phase;
	uint64_t i;       /* index within the phase */
	uint64_t emitted; /* kernels emitted so far */
	unsigned proc;    /* process of the current batch */
	unsigned seq_len; /* kernels per training step */
	struct synth_proc procs[64];
	/* the current batch: API records then kernels then maybe a copy */
	struct gt_rec_api api[SYNTH_BATCH];
	struct gt_rec_kernel kern[SYNTH_BATCH];
	struct gt_rec_memcpy copy;
	struct gt_rec_nvtx step[SYNTH_BATCH]; /* steps that ended in the batch */
	unsigned nbatch, bi, nsteps;
	bool have_copy;
};

static inline uint64_t synth_rand(struct synth *s)
{
	/* splitmix64: good enough, and the same everywhere */
	uint64_t z = (s->rng += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static inline uint64_t synth_mix(uint64_t x)
{
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* Name of kernel k: mangled C++ names of realistic length. */
static inline int synth_kernel_name(unsigned k, char *buf, size_t size)
{
	static const char *const stems[] = {
	        "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEENS_"
	        "6detail5ArrayIPcLi1EEEEEviT0_T1_",
	        "_ZN2at6native18elementwise_kernelILi128ELi2EZNS0_22gpu_kernel_impl_nocastINS0_"
	        "13BinaryFunctorIfffNS0_15binary_internal10MulFunctorIfEEEEEEvRNS_"
	        "18TensorIteratorBaseERKT_EUliE_EEviT1_",
	        "ampere_sgemm_128x64_tn",
	        "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_"
	        "execute_segment_k_off_kernel__5x_cublas",
	        "_ZN7cutlass7Kernel2I50cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_16x16_64x1_"
	        "tn_align8EEvNT_6ParamsE",
	        "_ZN2at6native43_GLOBAL__N__softmax_warp_forwardIN3c108BFloat16ES3_"
	        "fLi10ELb0ELb0EEEvPT0_PKT_iiiPKbib",
	        "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, "
	        "at::native::MeanOps<float, float, float, float>, unsigned int, float, 4> >",
	        "flash_fwd_kernel",
	};
	const char *stem = stems[synth_mix(k + 17) % (sizeof(stems) / sizeof(stems[0]))];

	return snprintf(buf, size, "%s_v%u", stem, k);
}

/* Launch configuration of position p in the step: fixed per position, as in a real model. */
static inline void synth_position(const struct synth *s, unsigned p, struct gt_rec_kernel *k,
                                  uint64_t *typical_ns)
{
	static const uint32_t grids[][3] = {{1, 1, 1},   {80, 1, 1},   {132, 1, 1}, {1024, 1, 1},
	                                    {264, 4, 1}, {4096, 1, 1}, {16, 16, 8}};
	static const uint32_t blocks[][3] = {
	        {128, 1, 1}, {256, 1, 1}, {512, 1, 1}, {32, 8, 1}, {1024, 1, 1}};
	static const uint32_t smem[] = {0, 1024, 4096, 16384};
	static const uint32_t dsmem[] = {0, 0, 32768, 49152, 232448};
	uint64_t h = synth_mix(p * 2654435761u + 1);
	const uint32_t *g = grids[h % 7], *b = blocks[(h >> 8) % 5];

	k->name_id = SYNTH_STR_KERNEL0 + (uint32_t)(synth_mix(p + 99) % s->o.names);
	if (p < s->o.names) /* every name appears in a step */
		k->name_id = SYNTH_STR_KERNEL0 + p;
	k->grid_x = g[0];
	k->grid_y = g[1];
	k->grid_z = g[2];
	k->block_x = b[0];
	k->block_y = b[1];
	k->block_z = b[2];
	k->registers = 16 + (uint32_t)((h >> 16) % 15) * 8;
	k->static_smem_bytes = smem[(h >> 24) % 4];
	k->dynamic_smem_bytes = dsmem[(h >> 28) % 5];
	k->local_mem_bytes = (h >> 32) % 9 == 0 ? 64 : 0;
	k->span.stream_id = (p % 5 == 4) ? 13 : 7;
	/* 2 us .. ~260 us, skewed to short kernels */
	*typical_ns = 2000ull << ((h >> 40) % 8);
	*typical_ns += (h >> 48) % 1500;
}

static inline void synth_init(struct synth *s, const struct synth_opts *o)
{
	memset(s, 0, sizeof(*s));
	s->o = *o;
	if (!s->o.names)
		s->o.names = 1;
	if (!s->o.processes)
		s->o.processes = 1;
	if (s->o.processes > 64)
		s->o.processes = 64;
	s->rng = o->seed * 0x2545f4914f6cdd1dull + 1;
	s->seq_len = s->o.names * 3 / 2 + 1;
	for (unsigned p = 0; p < s->o.processes; p++) {
		s->procs[p].cpu_ns = SYNTH_START_NS + (uint64_t)s->o.clock_offset_ns + p * 1000003ull;
		s->procs[p].gpu_ns = s->procs[p].cpu_ns + 20000;
		s->procs[p].corr = 1 + p;
	}
}

static inline uint32_t synth_pid_of(const struct synth_opts *o, unsigned p)
{
	return (o->pid0 ? o->pid0 : SYNTH_PID0) + p * 7;
}

static inline uint32_t synth_pid(unsigned p)
{
	return SYNTH_PID0 + p * 7;
}

/* Rank of process p, or -1. */
static inline int32_t synth_rank(const struct synth_opts *o, unsigned p)
{
	if (o->rank0 > 0 || o->world)
		return o->rank0 + (int32_t)p;
	return o->processes > 1 ? (int32_t)p : -1;
}

/* The c-th nccl_every collective of process p: it ends at the same true time on every rank
 * (plus the jitter) and waited for the others for a while before. */
static inline void synth_nccl(const struct synth *s, unsigned p, uint64_t c,
                              struct gt_rec_kernel *k)
{
	int32_t rank = synth_rank(&s->o, p);
	int64_t jit = ((int64_t)((c * 7 + (uint64_t)(rank < 0 ? 0 : rank) * 3) % 5) - 2) *
	              (int64_t)s->o.nccl_jitter_ns;

	k->name_id = SYNTH_STR_KERNEL0 + s->o.names + (s->o.steps ? 1 : 0) + (uint32_t)(c % 2);
	k->span.end_ns = SYNTH_START_NS + (uint64_t)s->o.clock_offset_ns +
	                 (c + 1) * SYNTH_NCCL_PERIOD_NS + (uint64_t)jit;
	k->span.start_ns = k->span.end_ns - 20000 - 5000 * (uint64_t)(rank < 0 ? 0 : rank % 4);
	k->span.stream_id = SYNTH_NCCL_STREAM;
	k->grid_x = 24;
	k->grid_y = k->grid_z = 1;
	k->block_x = 640;
	k->block_y = k->block_z = 1;
}

/* The CUDA ordinal process p's GPU has in that process. */
static inline uint32_t synth_device(const struct synth *s, unsigned p)
{
	return s->o.device_zero ? 0 : p % 8;
}

/* Allocation i of process p (o.memory), or its free. */
static inline void synth_memory(const struct synth *s, unsigned p, unsigned i, bool free_it,
                                union gt_record *r)
{
	uint32_t pid = synth_pid_of(&s->o, p);

	memset(r, 0, sizeof(r->memory));
	r->memory.hdr.type = GT_REC_MEMORY;
	r->memory.hdr.size = sizeof(r->memory);
	r->memory.hdr.pid = pid;
	r->memory.ts_ns = (free_it ? s->procs[p].gpu_ns + 5000 : s->procs[p].cpu_ns) + i;
	r->memory.address = 0x7f0000000000ull + ((uint64_t)p << 36) + (uint64_t)i * SYNTH_MEM_BLOCK;
	r->memory.bytes = SYNTH_MEM_BLOCK;
	r->memory.device_id = synth_device(s, p);
	r->memory.context_id = 1;
	r->memory.op = free_it ? GT_MEMORY_FREE : GT_MEMORY_ALLOC;
	r->memory.mem_kind = GT_MEM_DEVICE;
}

static inline void synth_string(union synth_buf *b, uint32_t id, const char *str, size_t len)
{
	struct gt_rec_string *r = &b->rec.string;

	if (len > GT_STRING_MAX)
		len = GT_STRING_MAX;
	memset(r, 0, sizeof(*r));
	r->hdr.type = GT_REC_STRING;
	r->hdr.pid = synth_pid(0);
	r->hdr.size = (uint16_t)gt_record_align(sizeof(*r) + len);
	r->id = id;
	r->len = (uint32_t)len;
	memcpy(r->str, str, len);
}

static inline void synth_hdr(void *rec, unsigned type, size_t size, uint32_t pid)
{
	struct gt_rec_hdr h = {(uint16_t)type, (uint16_t)size, pid};

	memset(rec, 0, size);
	memcpy(rec, &h, sizeof(h));
}

static inline void synth_batch(struct synth *s)
{
	struct synth_proc *pr = &s->procs[s->proc];
	uint32_t pid = synth_pid_of(&s->o, s->proc);
	uint64_t left = s->o.kernels - s->emitted;

	s->nbatch = left < SYNTH_BATCH ? (unsigned)left : SYNTH_BATCH;
	s->bi = 0;
	s->nsteps = 0;
	s->have_copy = false;
	for (unsigned j = 0; j < s->nbatch; j++) {
		struct gt_rec_api *a = &s->api[j];
		struct gt_rec_kernel *k = &s->kern[j];
		uint64_t typical, r = synth_rand(s), dur;

		synth_hdr(a, GT_REC_API, sizeof(*a), pid);
		synth_hdr(k, GT_REC_KERNEL, sizeof(*k), pid);
		/* other API calls in between are filtered out but still use correlation ids */
		pr->corr += 1 + (uint32_t)(r % 4);
		a->start_ns = pr->cpu_ns;
		a->end_ns = a->start_ns + 2500 + (r >> 8) % 3500;
		a->tid = pid;
		a->correlation_id = pr->corr;
		a->cbid = SYNTH_CBID_LAUNCH;
		a->name_id = SYNTH_STR_API;
		a->domain = GT_API_RUNTIME;
		pr->cpu_ns = a->end_ns + 500 + (r >> 20) % 2500;

		synth_position(s, pr->pos, k, &typical);
		if (pr->pos == 0)
			pr->step_ns = a->start_ns;
		pr->pos = (pr->pos + 1) % s->seq_len;
		dur = typical - typical / 20 + (r >> 32) % (typical / 10 + 1);
		if (s->o.slow_name && k->name_id == SYNTH_STR_KERNEL0 + s->o.slow_name - 1)
			dur *= 2;
		if (s->o.straggler == s->proc + 1 && pr->step < 64 &&
		    (s->o.straggler_steps >> pr->step) & 1)
			dur *= 3;
		if (pr->gpu_ns < a->end_ns + 1000)
			pr->gpu_ns = a->end_ns + 1000;
		k->span.start_ns = pr->gpu_ns + 1000 + (r >> 44) % 2000;
		k->span.end_ns = k->span.start_ns + dur;
		k->span.correlation_id = pr->corr;
		k->span.device_id = synth_device(s, s->proc);
		k->span.context_id = 1;
		pr->gpu_ns = k->span.end_ns;
		if (s->o.nccl_every && ++pr->kernels % s->o.nccl_every == 0)
			synth_nccl(s, s->proc, pr->colls++, k);
		if (pr->pos == 0)
			pr->step++;
		if (s->o.steps && pr->pos == 0) {
			/* the step's launches are done: its range ends, written at its pop */
			struct gt_rec_nvtx *n = &s->step[s->nsteps++];

			synth_hdr(n, GT_REC_NVTX, sizeof(*n), pid);
			n->start_ns = pr->step_ns;
			n->end_ns = a->end_ns + 200;
			if (s->o.sync_steps && n->end_ns < pr->gpu_ns + 200) {
				/* it waited for its GPU work */
				n->end_ns = pr->gpu_ns + 200;
				pr->cpu_ns = n->end_ns + 500;
			}
			n->tid = n->end_tid = pid;
			n->message_id = SYNTH_STR_KERNEL0 + s->o.names;
			n->kind = GT_NVTX_PUSH_POP;
		}
	}
	if (s->o.memcpy && (s->emitted / SYNTH_BATCH) % 2 == 1) {
		struct gt_rec_memcpy *c = &s->copy;

		synth_hdr(c, GT_REC_MEMCPY, sizeof(*c), pid);
		c->span.start_ns = pr->gpu_ns + 1500;
		c->span.end_ns = c->span.start_ns + 40000 + synth_rand(s) % 4000;
		c->span.correlation_id = ++pr->corr;
		c->span.device_id = synth_device(s, s->proc);
		c->span.context_id = 1;
		c->span.stream_id = 7;
		c->bytes = 4u << 20;
		c->copy_kind = GT_MEMCPY_HTOD;
		c->src_kind = GT_MEM_PINNED;
		c->dst_kind = GT_MEM_DEVICE;
		c->src_device = c->dst_device = c->span.device_id;
		c->flags = GT_COPY_ASYNC;
		pr->gpu_ns = c->span.end_ns;
		s->have_copy = true;
	}
	s->emitted += s->nbatch;
	s->proc = (s->proc + 1) % s->o.processes;
}

/* Metadata record i of process p: process, thread, device, context, two streams, clock. */
#define SYNTH_META_PER_PROC 7u

static inline void synth_meta(struct synth *s, unsigned p, unsigned i, union gt_record *r)
{
	uint32_t pid = synth_pid_of(&s->o, p);

	switch (i) {
	case 0:
		synth_hdr(r, GT_REC_PROCESS, sizeof(r->process), pid);
		r->process.start_ns = s->procs[p].cpu_ns;
		r->process.ppid = p ? synth_pid_of(&s->o, 0) : 1;
		r->process.exe_id = SYNTH_STR_EXE;
		r->process.cmdline_id = SYNTH_STR_CMDLINE;
		r->process.host_id = SYNTH_STR_HOST;
		r->process.rank = synth_rank(&s->o, p);
		r->process.local_rank = s->o.processes > 1 ? (int32_t)p : -1;
		r->process.world_size =
		        s->o.world ? (int32_t)s->o.world
		                   : (s->o.processes > 1 ? (int32_t)s->o.processes : -1);
		break;
	case 1:
		synth_hdr(r, GT_REC_THREAD, sizeof(r->thread), pid);
		r->thread.tid = pid;
		r->thread.name_id = SYNTH_STR_THREAD;
		break;
	case 2:
		synth_hdr(r, GT_REC_DEVICE, sizeof(r->device), pid);
		r->device.global_mem_bytes = 150754820096ull;
		for (unsigned j = 0; j < 16; j++)
			r->device.uuid[j] = (uint8_t)(0xa0 + j + p);
		r->device.device_id = synth_device(s, p);
		r->device.name_id = SYNTH_STR_DEVICE;
		r->device.sm_count = 132;
		r->device.cc_major = 9;
		r->device.cc_minor = 0;
		r->device.max_threads_per_block = 1024;
		r->device.max_shared_mem_per_block = 49152;
		r->device.mem_clock_khz = 2619000;
		r->device.mem_bus_width = 6144;
		r->device.pci_bus_id = 0x18 + p;
		r->device.clock_khz = 1980000;
		break;
	case 3:
		synth_hdr(r, GT_REC_CONTEXT, sizeof(r->context), pid);
		r->context.context_id = 1;
		r->context.device_id = synth_device(s, p);
		break;
	case 4:
	case 5:
		synth_hdr(r, GT_REC_STREAM, sizeof(r->stream), pid);
		r->stream.stream_id = i == 4 ? 7 : 13;
		r->stream.context_id = 1;
		r->stream.device_id = synth_device(s, p);
		r->stream.flags = i == 4 ? GT_STREAM_DEFAULT : 0;
		break;
	default:
		synth_hdr(r, GT_REC_CLOCK, sizeof(r->clock), pid);
		r->clock.trace_ns = s->procs[p].cpu_ns;
		r->clock.realtime_ns = 1714564800000000000ull + (uint64_t)s->o.wall_error_ns +
		                       (s->procs[p].cpu_ns - SYNTH_START_NS -
		                        (uint64_t)s->o.clock_offset_ns);
		r->clock.clock_id = GT_CLOCK_MONOTONIC;
		break;
	}
}

/* Next record into *b. Returns false when the trace is complete. */
static inline bool synth_next(struct synth *s, union synth_buf *b)
{
	static const char *const fixed[] = {
	        "/usr/bin/python3.11", "python train.py --epochs 1 --batch-size 64",
	        "gpu-node-17",         "NVIDIA H200",
	        "cudaLaunchKernel",    "pt_main_thread",
	};
	uint32_t pid0 = synth_pid_of(&s->o, 0);
	unsigned nstep = s->o.steps ? 1 : 0, nnccl = s->o.nccl_every ? 2 : 0;
	const char *str;
	union gt_record *r = &b->rec;
	char name[512];

	for (;;) {
		switch (s->phase) {
		case SYNTH_STRINGS:
			if (s->i < 6) {
				str = s->i == SYNTH_STR_HOST - 1 && s->o.host ? s->o.host : fixed[s->i];
				synth_string(b, (uint32_t)s->i + 1, str, strlen(str));
				b->rec.hdr.pid = pid0;
				s->i++;
				return true;
			}
			if (s->o.steps && s->i == 6 + s->o.names) {
				/* after the kernel names, so that the other ids stay as they were */
				synth_string(b, SYNTH_STR_KERNEL0 + s->o.names, "step", 4);
				b->rec.hdr.pid = pid0;
				s->i++;
				return true;
			}
			if (s->i >= 6 + s->o.names + nstep && s->i < 6 + s->o.names + nstep + nnccl) {
				unsigned k = (unsigned)(s->i - 6 - s->o.names - nstep);

				synth_string(b, SYNTH_STR_KERNEL0 + s->o.names + nstep + k,
				             synth_nccl_names[k], strlen(synth_nccl_names[k]));
				b->rec.hdr.pid = pid0;
				s->i++;
				return true;
			}
			if (s->i < 6 + s->o.names) {
				unsigned k = (unsigned)(s->i - 6);
				int n = s->o.nccl && k == 0
				                ? snprintf(name, sizeof(name), "%s", SYNTH_NCCL_KERNEL)
				                : synth_kernel_name(k, name, sizeof(name));

				if (s->o.rename == k + 1 && n > 0 && (size_t)n + 9 < sizeof(name))
					n += snprintf(name + n, sizeof(name) - (size_t)n, "_renamed");

				synth_string(b, SYNTH_STR_KERNEL0 + k, name, (size_t)n);
				b->rec.hdr.pid = pid0;
				s->i++;
				return true;
			}
			s->phase = SYNTH_META;
			s->i = 0;
			break;
		case SYNTH_META:
			if (s->i < (uint64_t)s->o.processes * SYNTH_META_PER_PROC) {
				synth_meta(s, (unsigned)(s->i / SYNTH_META_PER_PROC),
				           (unsigned)(s->i % SYNTH_META_PER_PROC), r);
				s->i++;
				return true;
			}
			s->phase = SYNTH_MEMORY;
			s->i = 0;
			break;
		case SYNTH_MEMORY:
			/* process p's allocations are records p (p + 1) / 2 .. of the phase */
			if (s->o.memory &&
			    s->i < (uint64_t)s->o.processes * (s->o.processes + 1) / 2) {
				unsigned p = 0;

				while ((uint64_t)(p + 1) * (p + 2) / 2 <= s->i)
					p++;
				synth_memory(s, p, (unsigned)(s->i - (uint64_t)p * (p + 1) / 2),
				             false, r);
				s->i++;
				return true;
			}
			s->phase = SYNTH_MAIN;
			s->i = 0;
			s->nbatch = s->bi = 0;
			break;
		case SYNTH_MAIN: {
			unsigned per = s->o.api ? 2 * s->nbatch : s->nbatch;

			if (s->bi < per) {
				unsigned j = s->bi++;

				if (s->o.api && j < s->nbatch)
					memcpy(r, &s->api[j], sizeof(s->api[j]));
				else
					memcpy(r, &s->kern[s->o.api ? j - s->nbatch : j],
					       sizeof(s->kern[0]));
				return true;
			}
			if (s->bi < per + s->nsteps) {
				memcpy(r, &s->step[s->bi++ - per], sizeof(s->step[0]));
				return true;
			}
			if (s->have_copy) {
				memcpy(r, &s->copy, sizeof(s->copy));
				s->have_copy = false;
				return true;
			}
			if (s->emitted < s->o.kernels) {
				synth_batch(s);
				break;
			}
			s->phase = SYNTH_END;
			s->i = 0;
			break;
		}
		case SYNTH_END: {
			unsigned nloss = s->o.losses ? 2 : 0;
			uint64_t nfree =
			        s->o.memory ? (uint64_t)s->o.processes * (s->o.processes + 1) / 2
			                    : 0;
			uint64_t j = s->i - nfree; /* past the frees */

			if (s->i < nfree) {
				unsigned p = 0;

				while ((uint64_t)(p + 1) * (p + 2) / 2 <= s->i)
					p++;
				synth_memory(s, p, (unsigned)(s->i - (uint64_t)p * (p + 1) / 2),
				             true, r);
				s->i++;
				return true;
			}
			if (j < nloss) {
				synth_hdr(r, GT_REC_LOSS, sizeof(r->loss), pid0);
				r->loss.ts_ns = s->procs[0].gpu_ns;
				r->loss.source = j == 0 ? GT_LOSS_RING_FULL : GT_LOSS_CUPTI_DROPPED;
				r->loss.count = j == 0 ? s->o.losses : 7;
				r->loss.kind = j == 0 ? GT_REC_API : GT_REC_KERNEL;
				s->i++;
				return true;
			}
			if (j < nloss + s->o.processes) {
				unsigned p = (unsigned)(j - nloss);

				synth_hdr(r, GT_REC_PROCESS_END, sizeof(r->process_end),
				          synth_pid_of(&s->o, p));
				r->process_end.ts_ns = s->procs[p].gpu_ns + 10000;
				r->process_end.how = p == 1 ? GT_END_SIGNAL : GT_END_EXIT;
				r->process_end.code = p == 1 ? 9 : 0;
				s->i++;
				return true;
			}
			s->phase = SYNTH_DONE;
			break;
		}
		case SYNTH_DONE:
		default:
			return false;
		}
	}
}

#endif /* GPUTRACE_TRACE_SYNTH_H */
