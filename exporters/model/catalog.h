/* The catalog of what a trace holds: its processes (by host and pid), GPUs (by uuid), threads,
 * ranks, losses per source and notices. Every output is built on it - the timeline model
 * (chrome, perfetto), stats, the run summary and `gputrace info` - so all of them say the
 * same thing about the same trace: the same GPUs, named "GPU n" alike, the same processes,
 * the same losses. Fed one record at a time in file order (gt_catalog_observe) or by one
 * pass over a trace (gt_catalog_read). Runs in the CLI. Memory grows with the number of
 * distinct processes, GPUs, threads and contexts, never with the number of events.
 *
 * Identity, as docs/exporters.md ("One catalog") explains:
 * - A process is (host, pid): in one trace (a merge of several hosts' traces, say), pid 1234
 *   of two hosts is two processes. A record belongs to the latest process of its pid. A
 *   PROCESS record for a pid whose process is known (has its own PROCESS record) starts a
 *   new process when the host differs or the known one has ended (the pid was reused);
 *   otherwise it updates that one (an exec re-registers). An ORIGIN record does the same
 *   when it names another input or host. Outputs that key processes by pid show such a
 *   later process under a pid of its own (out_pid).
 * - A GPU is its uuid, whichever process reports it and under whatever CUDA ordinal: two
 *   ranks that each see their own GPU as device 0 (CUDA_VISIBLE_DEVICES=<rank>) are two GPUs,
 *   two processes sharing one GPU one. A GPU without a uuid is (host, pid, ordinal).
 * - A record that names a device before its process's DEVICE record did gets a GPU of its
 *   own (host, pid, ordinal); when the DEVICE record comes and its uuid belongs to a GPU
 *   already known, that GPU takes the process's later records and the early one is marked
 *   merged_into it (outputs fold it into that one). */
#ifndef GPUTRACE_EXPORTERS_CATALOG_H
#define GPUTRACE_EXPORTERS_CATALOG_H

#include <stdbool.h>
#include <stdint.h>

#include "gputrace/record.h"
#include "gputrace/trace.h"
#include "idmap.h"

#define GT_CATALOG_NOTICES 16u /* warning and error notices kept (the rest counted) */
#define GT_CATALOG_SELF    8u  /* processes whose own-cost notice is kept (the rest counted) */
#define GT_CATALOG_CUPTI   16u /* distinct CUPTI versions kept */
/* A process whose pid an earlier process of the trace had is shown as pid
 * GT_CATALOG_PID_AGAIN + its index: above any Linux pid (2^22), the exporters' GPU
 * pseudo-processes (5,000,000 + n) and the pids gputrace merge gives (2^28 + n). */
#define GT_CATALOG_PID_AGAIN (1u << 29)

struct gt_catalog_process {
	uint32_t index;   /* 0, 1, ... in order of appearance */
	uint32_t pid;     /* as the trace records it */
	uint32_t out_pid; /* the pid outputs show: pid, or GT_CATALOG_PID_AGAIN + index when
	                   * an earlier process had pid (reused, or another host's) */
	uint32_t ppid;    /* 0 until its PROCESS record */
	uint32_t host_id; /* string: host name; 0 until its PROCESS record (or none given) */
	uint32_t exe_id, cmdline_id;          /* strings, 0 if unknown */
	int32_t rank, local_rank, world_size; /* -1 if unknown */
	uint32_t flags;                       /* GT_PROCESS_* */
	uint64_t start_ns;                    /* trace clock, when it registered; 0 unknown */
	bool have_info;                       /* its PROCESS record was seen */
	bool ended;                           /* its PROCESS_END record was seen */
	uint32_t end_how;                     /* enum gt_process_end_how */
	int32_t end_code;                     /* exit status or signal */
	uint64_t end_ns;
	uint32_t nthreads; /* threads seen (THREAD records or activity on them) */
	/* a merged trace's process (its ORIGIN record, docs/merge.md): its input's index, 0 if
	 * not merged, and its pid there (= pid unless gputrace merge gave it a new one) */
	uint32_t input;
	uint32_t orig_pid;
	uint64_t lost; /* records its LOSS records say were lost, all sources (damaged_file,
	                * which counts chunks, aside) */
};

struct gt_catalog_gpu {
	uint32_t index;       /* 0, 1, ... in order of appearance */
	uint32_t number;      /* "GPU n" in every output: the CUDA ordinal of the first process
	                       * that used it, or the next free number when another GPU has it */
	uint32_t device_id;   /* CUDA ordinal in that first process */
	uint32_t process;     /* index of that first process */
	uint32_t merged_into; /* 0, or 1 + index of the GPU this one turned out to be */
	bool have_uuid;
	bool have_info; /* a DEVICE record describes it */
	uint8_t uuid[16];
	uint32_t name_id; /* string: device name, 0 if unknown */
	uint32_t sm_count, cc_major, cc_minor, pci_bus_id;
	uint32_t max_threads_per_block;
	uint32_t max_shared_mem_per_block; /* bytes */
	uint32_t mem_clock_khz;            /* peak memory clock */
	uint32_t clock_khz;                /* peak SM clock (0: not recorded) */
	uint32_t mem_bus_width;            /* bits */
	uint64_t global_mem_bytes;
	/* device and managed memory in use, allocations minus frees as the MEMORY records give
	 * them (pinned and pageable host memory is not the GPU's); unsigned arithmetic, so a
	 * damaged trace wraps rather than overflows */
	int64_t mem_in_use;      /* bytes */
	int64_t mem_peak;        /* bytes, the largest mem_in_use */
	uint64_t mem_peak_ts_ns; /* when it was reached */
};

/* What a damaged trace file cost (docs/cli.md, "Damage"): chunks that could not be read,
 * with the bytes they took and the records they held where known, and malformed records
 * skipped inside chunks that were read. */
struct gt_catalog_damage {
	uint64_t chunks;
	uint64_t bytes;     /* of the file, taken by those chunks */
	uint64_t records;   /* held by those chunks, as far as the index or their headers said */
	uint64_t malformed; /* records skipped inside chunks that were read */
};

struct gt_catalog_thread {
	uint32_t process; /* index */
	uint32_t tid;
	uint32_t name_id; /* string, 0 if unnamed */
};

struct gt_catalog {
	struct gt_reader *reader; /* borrowed: host names are compared as text; may be NULL */

	struct gt_catalog_process **procs; /* in order of appearance; owned */
	uint32_t nprocs, cap_procs;
	struct gt_catalog_gpu **gpus;
	uint32_t ngpus, cap_gpus;
	struct gt_catalog_thread **threads;
	uint32_t nthreads, cap_threads;

	struct gt_idmap pid_map;    /* pid -> the latest process with it */
	struct gt_idmap uuid_map;   /* uuid -> GPU */
	struct gt_idmap device_map; /* (process, CUDA ordinal) -> GPU */
	struct gt_idmap thread_map; /* (process, tid) -> thread */
	struct gt_idmap ctx_map;    /* (process, context id) -> CUDA ordinal + 1 */
	/* the last lookups, so that a run of records of one process costs no hashing */
	uint32_t last_pid;
	struct gt_catalog_process *last_proc;
	uint64_t last_device; /* pid << 32 | ordinal (reset when a pid gets a new process) */
	struct gt_catalog_gpu *last_gpu;
	uint64_t last_tid; /* pid << 32 | tid */
	struct gt_catalog_thread *last_thread;

	uint64_t records[GT_REC_MAX]; /* records of each kind */
	/* records lost, [source][kind]; source GT_LOSS_SOURCE_MAX: a source this build does not
	 * know; kind GT_REC_NONE when the loss did not say */
	uint64_t losses[GT_LOSS_SOURCE_MAX + 1][GT_REC_MAX];

	struct gt_rec_notice notices[GT_CATALOG_NOTICES]; /* warnings and errors, first ones */
	uint32_t nnotices;
	uint64_t more_notices;           /* warnings and errors beyond those */
	/* GT_NOTICE_SELF_COST: what recording cost each process's threads, first ones */
	struct gt_rec_notice self_cost[GT_CATALOG_SELF];
	uint32_t nself_cost;
	uint64_t more_self_cost;
	int32_t cupti[GT_CATALOG_CUPTI]; /* CUPTI versions the processes loaded, first seen first */
	/* a merged trace's inputs (gputrace merge's INPUT records), in file order; owned */
	struct gt_rec_input *inputs;
	uint32_t ninputs, cap_inputs;
	uint32_t ncupti;
	uint64_t more_cupti;

	/* set by gt_catalog_read() only: the earliest and latest timestamp of any record (0 is
	 * "not set" in a record and is skipped); first_ns UINT64_MAX when none */
	uint64_t first_ns, last_ns;

	/* A damaged file's cost, as every output says it: recorded in the trace by whoever
	 * wrote its records again (damaged_file LOSS records: gputrace merge, info --reindex),
	 * and skipped reading this file (gt_catalog_read_done, once the trace was read). */
	struct gt_catalog_damage damage_recorded;
	struct gt_catalog_damage damage_read;
	bool recovered; /* the file had no footer (gt_catalog_read_done) */
};

/* reader: where host names are read to compare them (NULL: compared by string id). Returns 0
 * or -ENOMEM. */
int gt_catalog_init(struct gt_catalog *c, struct gt_reader *reader);
void gt_catalog_fini(struct gt_catalog *c);

/* Learn from one record, in file order. Returns 0 or -ENOMEM. */
int gt_catalog_observe(struct gt_catalog *c, const union gt_record *rec);

/* Rewind r and observe every record, also noting the time span (first_ns, last_ns). For
 * consumers that need nothing else from the records (`gputrace info`). Returns 0 or -errno
 * with *errmsg set. */
int gt_catalog_read(struct gt_catalog *c, struct gt_reader *r, const char **errmsg);

/* The process a record of `pid` belongs to now; created (host unknown) when the trace has not
 * named it yet. NULL only on -ENOMEM. A run of records of one process costs a compare. */
struct gt_catalog_process *gt_catalog_process_find(struct gt_catalog *c, uint32_t pid);
static inline struct gt_catalog_process *gt_catalog_process(struct gt_catalog *c, uint32_t pid)
{
	if (c->last_proc && c->last_pid == pid)
		return c->last_proc;
	return gt_catalog_process_find(c, pid);
}

/* The pid that outputs show the records of trace pid `pid` under now: its current process's
 * out_pid, or pid itself while no process has it (a merged trace's INPUT records). */
static inline uint32_t gt_catalog_out_pid(const struct gt_catalog *c, uint32_t pid)
{
	uint32_t v;

	if (c->last_proc && c->last_pid == pid)
		return c->last_proc->out_pid;
	v = gt_idmap_get(&c->pid_map, pid, 0);
	return v ? c->procs[v - 1]->out_pid : pid;
}

/* The GPU that device `device_id` of the current process `pid` is; created when unknown.
 * Follows merged_into. NULL only on -ENOMEM. */
struct gt_catalog_gpu *gt_catalog_gpu(struct gt_catalog *c, uint32_t pid, uint32_t device_id);

/* The CUDA ordinal of context `ctx` of pid's current process (CONTEXT records);
 * UINT32_MAX if unknown. */
uint32_t gt_catalog_context_device(const struct gt_catalog *c, uint32_t pid, uint32_t ctx);

/* The GPU g was folded into, or g itself. */
const struct gt_catalog_gpu *gt_catalog_gpu_final(const struct gt_catalog *c,
                                                  const struct gt_catalog_gpu *g);

/* Which processes use GPU g, and under which CUDA ordinal: up to max (process index,
 * ordinal) pairs into procs[] and ordinals[], in order of the processes. Returns how many
 * there are in all (may exceed max). */
uint32_t gt_catalog_gpu_users(const struct gt_catalog *c, const struct gt_catalog_gpu *g,
                              uint32_t *procs, uint32_t *ordinals, uint32_t max);

/* Distinct hosts the processes name (unknown ones not counted). */
uint32_t gt_catalog_hosts(const struct gt_catalog *c);

/* GPUs not merged into another, the ones every output lists. */
uint32_t gt_catalog_gpu_count(const struct gt_catalog *c);

/* "GPU-a0a1a2a3-a4a5-a6a7-a8a9-aaabacadaeaf", as nvidia-smi writes a uuid, or "" without one,
 * into buf (at least 41 bytes). Returns buf. */
const char *gt_catalog_uuid(const struct gt_catalog_gpu *g, char *buf);

/* Distinct ranks (>= 0) of the processes. */
uint32_t gt_catalog_ranks(const struct gt_catalog *c);

/* Records lost from `source` (GT_LOSS_SOURCE_MAX: unknown sources), all kinds together. */
uint64_t gt_catalog_lost(const struct gt_catalog *c, unsigned source);

/* Records lost, all sources; a damaged_file loss adds its chunks (see below). */
uint64_t gt_catalog_lost_total(const struct gt_catalog *c);

/* Records the producers lost: every source but damaged_file, whose count is chunks. */
uint64_t gt_catalog_lost_records(const struct gt_catalog *c);

/* Once r was read to its end (or as far as it reads): what it skipped becomes the catalog's
 * damage_read and recovered. Called by every consumer that reads a whole trace, so that the
 * losses it outputs hold the file's damage too. */
void gt_catalog_read_done(struct gt_catalog *c, const struct gt_reader_status *rs);

/* The damage a reader status says. */
void gt_catalog_damage_of(const struct gt_reader_status *rs, struct gt_catalog_damage *d);

/* Recorded and read, together. */
void gt_catalog_damage(const struct gt_catalog *c, struct gt_catalog_damage *d);

/* Whether d lost anything: a chunk or a malformed record. */
static inline bool gt_catalog_damaged(const struct gt_catalog_damage *d)
{
	return d->chunks || d->malformed;
}

/* The one wording of damage, which every command and output uses: "1 chunk (611 bytes) and
 * 0 malformed records skipped". Into buf (GT_CATALOG_DAMAGE_TEXT bytes are enough); returns
 * buf. */
#define GT_CATALOG_DAMAGE_TEXT 128u
const char *gt_catalog_damage_text(const struct gt_catalog_damage *d, char *buf, size_t size);

/* The damage a damaged_file LOSS record says. */
void gt_catalog_damage_of_loss(const struct gt_rec_loss *l, struct gt_catalog_damage *d);

/* Every loss of the trace in words, as the exports' metadata says it: "none", or "3 records
 * lost (ring_full 3)", "damaged file: <gt_catalog_damage_text>" or both, "; " between. Into
 * buf (GT_CATALOG_LOSSES_TEXT bytes are enough); returns buf. */
#define GT_CATALOG_LOSSES_TEXT 512u
const char *gt_catalog_losses_text(const struct gt_catalog *c, char *buf, size_t size);

#endif /* GPUTRACE_EXPORTERS_CATALOG_H */
