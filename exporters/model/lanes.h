/* Lanes: how slices stay strictly nested on every displayed track, and what each lane is
 * called and which (pid, tid) shows it - the same in both timeline formats. Runs in the CLI.
 * Memory: a few KiB per track (at most GT_LANE_BLOCKS blocks per lane). */
#ifndef GPUTRACE_EXPORTERS_LANES_H
#define GPUTRACE_EXPORTERS_LANES_H

#include <stdbool.h>
#include <stdint.h>

struct gt_timeline;
struct gt_timeline_gpu;

/* A lane is one displayed track. A slice goes on the first lane of its logical track
 * (thread, stream, ...) where it nests with everything already placed there; otherwise a
 * new lane is opened. The lane remembers the disjoint outermost intervals ("blocks") it
 * holds: a new slice must either contain a block entirely or be disjoint from it, and
 * may not start strictly inside one (whose children we no longer know). At most
 * GT_LANE_BLOCKS blocks are kept; the oldest half is then folded into a floor: a later
 * slice must start at or after the floor's end, or contain all that was folded. This is
 * exact for the order the collectors produce (per thread and per stream, records arrive
 * in end order) and conservative otherwise: it may open an extra lane, never overlap. */
#define GT_LANE_BLOCKS 4096u
#define GT_LANES_MAX   16u

struct gt_lane_block {
	uint64_t start_ns;
	uint64_t end_ns;
};

struct gt_lane {
	struct gt_lane_block *blk; /* sorted by start, disjoint; owned */
	uint32_t n, cap;
	bool folded;             /* some blocks were folded into the floor */
	uint64_t floor_start_ns; /* earliest start of the folded blocks */
	uint64_t floor_end_ns;   /* latest end of the folded blocks */
	bool announced;          /* the exporter described this lane in its output */
	uint64_t uuid;           /* perfetto: track uuid of the lane */
};

enum gt_track_kind {
	GT_TRACK_THREAD = 0, /* API calls and NVTX push/pop of one CPU thread */
	GT_TRACK_SYNC,       /* synchronization waits of one CPU thread: CUPTI delivers them
	                      * late, inside the API call that waited, so they get their own */
	GT_TRACK_STREAM,     /* GPU work of one stream */
	GT_TRACK_NVTX,       /* NVTX start/end ranges of one process (they may cross threads) */
	GT_TRACK_OVERHEAD,   /* CUPTI overhead of one process */
	GT_TRACK_KIND_MAX
};

struct gt_track {
	uint8_t kind;      /* enum gt_track_kind */
	uint8_t nlanes;    /* lanes opened so far */
	bool name_changed; /* thread name arrived after lanes were announced */
	uint32_t index;    /* in gt_xmodel.tracks */
	uint32_t pid;
	uint32_t id;      /* tid, stream id, or 0 */
	uint32_t proc;    /* index in gt_xmodel.procs */
	uint32_t gpu;     /* streams: index in gt_xmodel.gpus */
	uint32_t name_id; /* threads: string id of the thread name, 0 if unknown */
	uint32_t forced;  /* slices put on the last lane although they overlap there */
	struct gt_lane lanes[GT_LANES_MAX];
};

/* Place [start, end] on track t of timeline m (see above; m says whether ties are strict
 * and counts the slices that had to overlap). Returns the lane index. */
unsigned gt_lanes_place(struct gt_timeline *m, struct gt_track *t, uint64_t start_ns,
                        uint64_t end_ns);

/* GPUs are shown as processes with these pids (above Linux's largest pid, 2^22), "GPU n"
 * at GT_GPU_PID_BASE + n, in both timeline formats. */
#define GT_GPU_PID_BASE 5000000u

/* With the timeline's small_gpu_pids, GPUs numbered below this are pids 0 ..
 * GT_GPU_SMALL_PID_MAX - 1 (and the processes drawn beside them must all have larger pids). */
#define GT_GPU_SMALL_PID_MAX 256u

/* The pid that shows GPU g of timeline m as a process. */
uint32_t gt_lanes_gpu_pid(const struct gt_timeline *m, const struct gt_timeline_gpu *g);

/* Synthetic thread ids of lanes: real tids stay below 2^22; lane k of thread T is
 * T | k << GT_LANE_SHIFT, its sync lanes T | (16 + k) << GT_LANE_SHIFT; NVTX start/end
 * ranges GT_LANE_NVTX_TID + k, CUPTI overhead GT_LANE_OVERHEAD_TID + k. */
#define GT_LANE_SHIFT        25
#define GT_LANE_NVTX_TID     0x7e000000u
#define GT_LANE_OVERHEAD_TID 0x7d000000u

/* The (pid, tid) that shows lane `lane` of track t as a thread, the same in both timeline
 * formats: CPU-side lanes are threads of their process, stream lanes threads of their GPU's
 * process (gt_lanes_gpu_pid: GT_GPU_PID_BASE + GPU number). */
void gt_lanes_ids(const struct gt_timeline *m, const struct gt_track *t, unsigned lane,
                  uint32_t *pid, uint32_t *tid);

/* Name of lane `lane` of track t into buf (at least GT_LANE_NAME_MAX bytes), as the model's
 * name function writes names ("main", "thread 12 sync", "stream 7 (overlap 1)", "NVTX
 * ranges"); json: cut thread names on JSON escapes. Returns the end. */
#define GT_LANE_NAME_MAX 1100u
char *gt_lanes_name(struct gt_timeline *m, const struct gt_track *t, unsigned lane, char *buf,
                    bool json);

/* Lanes opened on every track of m: each is shown as a thread. */
uint64_t gt_lanes_count(const struct gt_timeline *m);

#endif /* GPUTRACE_EXPORTERS_LANES_H */
