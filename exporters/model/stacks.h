/* The call stacks of a trace (stacks.c): its STACK records put back together per process and
 * stack id, their native frames symbolized from the process's MODULE records when first asked
 * for. Every output that shows stacks reads them here. Runs in the CLI. */
#ifndef GPUTRACE_EXPORTERS_STACKS_H
#define GPUTRACE_EXPORTERS_STACKS_H

#include <stdbool.h>
#include <stdint.h>

#include "gputrace/record.h"
#include "gputrace/trace.h"

/* One frame, innermost first. */
struct gt_stack_sym {
	uint64_t pc;         /* as recorded: a return address */
	const char *symbol;  /* demangled function; "0x..." of pc when unresolved */
	const char *module;  /* path of the file; "" when no module covers pc */
	bool unresolved;     /* no symbol was found */
};

struct gt_stacks;

/* Returns 0 or -ENOMEM. */
int gt_stacks_new(struct gt_stacks **ret);
void gt_stacks_free(struct gt_stacks *s);

/* Take a MODULE or STACK record (others are passed over); strings through r. Returns 0 or
 * -ENOMEM. */
int gt_stacks_add(struct gt_stacks *s, const struct gt_reader *r, const union gt_record *rec);

/* Read every STACK and MODULE record of r, then rewind r; nothing read when the footer says
 * the trace has none. Returns 0 or the reader's -errno. */
int gt_stacks_load(struct gt_stacks *s, struct gt_reader *r);

/* The frames of stack `id` of process `pid`, symbolized (once), *n of them; NULL when the
 * trace has no such stack. Valid until gt_stacks_free. */
const struct gt_stack_sym *gt_stacks_get(struct gt_stacks *s, uint32_t pid, uint32_t id,
                                         unsigned *n);

/* Stacks held. */
uint32_t gt_stacks_count(const struct gt_stacks *s);

#endif /* GPUTRACE_EXPORTERS_STACKS_H */
