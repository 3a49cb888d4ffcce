/* Training steps: which NVTX ranges of a trace mark the iterations of a training loop, per
 * process, numbered as PyTorch's profiler numbers them (ProfilerStep#N). Fed record by record
 * (or in one pass over a reader); used by the chrome exporter, and meant for stats, merge, diff
 * and windowed export. Runs in the CLI. Rules: docs/exporters.md, "Steps". */
#ifndef GPUTRACE_EXPORTERS_STEPS_H
#define GPUTRACE_EXPORTERS_STEPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gputrace/record.h"
#include "gputrace/trace.h"

/* The name families a step range may have, in the order detection prefers them. */
enum gt_steps_family {
	GT_STEPS_NONE = 0,
	GT_STEPS_NAMED,         /* the name the user gave (--step NAME) */
	GT_STEPS_PROFILER_STEP, /* "ProfilerStep#N", PyTorch's profiler's own name */
	GT_STEPS_STEP,          /* "step", "Step 5", "step#5", "STEP_5" ... */
	GT_STEPS_TRAIN_STEP,    /* "train_step", "training_step", "train step 3" ... */
	GT_STEPS_ITERATION,     /* "iteration", "iter", "Iteration 7" ... */
	GT_STEPS_FAMILY_MAX
};

/* One step: an NVTX range (push/pop or start/end) of one process. */
struct gt_step {
	uint64_t start_ns, end_ns; /* trace clock */
	int64_t number;            /* N of ProfilerStep#N */
	uint32_t pid;
	uint32_t tid;        /* thread that opened the range */
	uint32_t message_id; /* string: the range's NVTX message */
	uint32_t _pad;
};

struct gt_steps;

/* Which family the NVTX message s[0..len) belongs to: `name` non-NULL matches only that name
 * (GT_STEPS_NAMED), NULL detects. *number gets the step number the message carries, -1 if
 * none. A message matches a family when it is the family's word, optionally followed by one
 * separator (space, '#', '_', '-', ':' or '=') and decimal digits, and nothing else; words
 * compare case-insensitively, except ProfilerStep#N (exactly) and a given name (exactly). */
enum gt_steps_family gt_steps_match(const char *name, const char *s, size_t len, int64_t *number);

/* Short name of a family: "ProfilerStep", "step", "train_step", "iteration", "named". */
const char *gt_steps_family_name(enum gt_steps_family f);

/* A collector of steps: name as for gt_steps_match (copied). Returns 0 or -ENOMEM. */
int gt_steps_new(const char *name, struct gt_steps **ret);

/* Accepts NULL. */
void gt_steps_free(struct gt_steps *s);

/* Look at one record (only NVTX ranges matter; their messages are looked up in r). Returns 0
 * or -ENOMEM. Not after gt_steps_finish(). */
int gt_steps_feed(struct gt_steps *s, const struct gt_reader *r, const union gt_record *rec);

/* Every record was fed: choose the family (the given name, or the first family of
 * enum gt_steps_family that any process has), keep that family's ranges and number them per
 * process: by the numbers their messages carry when each has one and they increase with the
 * start time, else 0, 1, 2 ... in order of start. Returns 0 or -ENOMEM. */
int gt_steps_finish(struct gt_steps *s);

/* One pass over r (rewound before and after): new + feed every record + finish. Returns 0 or
 * -errno (from reading: -EINVAL, -EBADMSG, -EIO, ...; or -ENOMEM). */
int gt_steps_scan(struct gt_reader *r, const char *name, struct gt_steps **ret);

/* After finish: the family chosen (GT_STEPS_NONE when no range matched). */
enum gt_steps_family gt_steps_family(const struct gt_steps *s);

/* After finish: steps in all. */
size_t gt_steps_count(const struct gt_steps *s);

/* After finish: processes that have steps, and the i-th of them (by pid): its steps, sorted
 * by start, *n of them; *pid its pid. NULL when i is out of range. Valid until
 * gt_steps_free(). */
size_t gt_steps_processes(const struct gt_steps *s);
const struct gt_step *gt_steps_at(const struct gt_steps *s, size_t i, uint32_t *pid, size_t *n);

/* After finish: the steps of process pid, sorted by start; NULL and *n = 0 if it has none. */
const struct gt_step *gt_steps_of(const struct gt_steps *s, uint32_t pid, size_t *n);

/* After finish: the step that the NVTX range (pid, message, start, end) is, or NULL: the same
 * range, or, for a range a window cut at its edges, the step that holds it. For exporters
 * meeting the ranges again: O(1) for messages of no step, O(log n) otherwise. */
const struct gt_step *gt_steps_find(const struct gt_steps *s, uint32_t pid, uint32_t message_id,
                                    uint64_t start_ns, uint64_t end_ns);

#endif /* GPUTRACE_EXPORTERS_STEPS_H */
