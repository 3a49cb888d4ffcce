/* PyTorch operators: the NVTX ranges that torch.autograd.profiler.emit_nvtx pushes for every
 * operator ("aten::mm, seq = 12, op_id = 34, sizes = [[64, 128], [128, 32]], ..."), parsed,
 * and each linked to the CUDA calls made inside it on its thread (the innermost operator
 * wins) and so to the GPU work they launched. Read ahead of an export or report: the ranges
 * in a pass over the reader (the caller's own, or one of gt_torchops_load), the calls in one
 * more when there are operators; memory grows with the operators and the calls inside them.
 * Runs in the CLI. Rules: docs/exporters.md, "PyTorch operators". */
#ifndef GPUTRACE_EXPORTERS_TORCHOPS_H
#define GPUTRACE_EXPORTERS_TORCHOPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gputrace/record.h"
#include "gputrace/trace.h"

/* The fields of one operator's NVTX message; pointers into the message. */
struct gt_torchop_fields {
	const char *name; /* "aten::mm" */
	size_t name_len;
	int64_t seq;       /* autograd sequence number; -1: none */
	int64_t op_id;     /* the RecordFunction handle; 0: none */
	const char *sizes; /* "[[64, 128], [128, 32]]" (input dims); NULL: not recorded */
	size_t sizes_len;
	const char *inputs; /* "[(30,0), (31,0)]" (input_op_ids); NULL: none */
	size_t inputs_len;
};

/* Whether the NVTX message s[0..len) is an operator range of emit_nvtx: a name followed by
 * at least one of ", seq = N", ", op_id = N", ", sizes = [...]" (in that order, then
 * ", input_op_ids = [...]"), and nothing else. Fills *f when it is. */
bool gt_torchop_parse(const char *s, size_t len, struct gt_torchop_fields *f);

/* Flow ids of the arrows from an operator to the GPU work of its launches (perfetto): this
 * bit, the trace pid << 32 and the launch's correlation id. */
#define GT_TORCHOP_FLOW (1ull << 62)

struct gt_torchops;

/* In pieces, for a consumer that reads the trace for something else too (the exporters'
 * prescan, exporter.h): new (0 or -ENOMEM); feed each record of a pass over r (only NVTX
 * ranges are looked at; 0 or -ENOMEM); then finish, which, when operators were found, reads
 * r once more for the calls made in them (rewinding it before and after) and otherwise reads
 * nothing: 0, -ENOMEM or the reader's -errno. After finish, gt_torchops_count() == 0 means
 * the trace has no operator. */
int gt_torchops_new(struct gt_torchops **ret);
int gt_torchops_feed(struct gt_torchops *o, const struct gt_reader *r,
                     const union gt_record *rec);
int gt_torchops_finish(struct gt_torchops *o, struct gt_reader *r);

/* Read r (rewound before and after; a window set on it applies): the operator ranges
 * (push/pop NVTX ranges whose message parses), then every API call with a correlation id
 * inside one. *ret is NULL when the trace has no operator. Returns 0, -ENOMEM or the
 * reader's -errno. */
int gt_torchops_load(struct gt_reader *r, struct gt_torchops **ret);
void gt_torchops_free(struct gt_torchops *o);

/* Operators found. */
size_t gt_torchops_count(const struct gt_torchops *o);

/* The operator the NVTX record is (the same pid, tid, start and end), as its id (1, 2, ...:
 * the "External id" of the chrome export); 0 when it is none. */
uint64_t gt_torchops_of_range(const struct gt_torchops *o, const struct gt_rec_nvtx *n);

/* The operator the call (pid, correlation id) was made in, innermost; 0: none. */
uint64_t gt_torchops_of_launch(const struct gt_torchops *o, uint32_t pid, uint32_t corr);

/* The correlation ids of the calls made in operator id (innermost), *n of them, in the
 * order they were read; NULL when none. */
const uint32_t *gt_torchops_launches(const struct gt_torchops *o, uint64_t id, size_t *n);

/* The NVTX message string id of operator id (1..count). */
uint32_t gt_torchops_message(const struct gt_torchops *o, uint64_t id);

#endif /* GPUTRACE_EXPORTERS_TORCHOPS_H */
