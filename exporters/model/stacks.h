/* The call stacks of a trace (stacks.c): its STACK records put back together per process and
 * stack id, their native frames symbolized from the process's MODULE records and their Python
 * frames named from its PYCODE and PYLINE records when first asked for. Every output that shows stacks reads them here. Runs in the CLI. */
#ifndef GPUTRACE_EXPORTERS_STACKS_H
#define GPUTRACE_EXPORTERS_STACKS_H

#include <stdbool.h>
#include <stdint.h>

#include "gputrace/record.h"
#include "gputrace/trace.h"

/* One frame, innermost first. */
struct gt_stack_sym {
	uint64_t pc;         /* as recorded: a return address; a Python frame's code object */
	const char *symbol;  /* demangled function, or Python's qualified name; "0x..." of pc
	                        when unresolved */
	const char *module;  /* path of the file (a Python frame's .py); "" when unknown */
	bool unresolved;     /* no symbol was found */
	bool python;         /* a Python frame */
	int32_t line;        /* a Python frame's source line; 0 for native frames or unknown */
	uint32_t offset;     /* a Python frame's instruction offset, bytes (3.10: its line) */
};

struct gt_stacks;

/* Returns 0 or -ENOMEM. */
int gt_stacks_new(struct gt_stacks **ret);
void gt_stacks_free(struct gt_stacks *s);

/* Take a MODULE, STACK, PYCODE or PYLINE record (others are passed over); strings through r. Returns 0 or
 * -ENOMEM. */
int gt_stacks_add(struct gt_stacks *s, const struct gt_reader *r, const union gt_record *rec);

/* Read every STACK, MODULE, PYCODE and PYLINE record of r, then rewind r; nothing read when the footer says
 * the trace has none. Returns 0 or the reader's -errno. */
int gt_stacks_load(struct gt_stacks *s, struct gt_reader *r);

/* The frames of stack `id` of process `pid`, symbolized (once), *n of them; NULL when the
 * trace has no such stack. Valid until gt_stacks_free. */
const struct gt_stack_sym *gt_stacks_get(struct gt_stacks *s, uint32_t pid, uint32_t id,
                                         unsigned *n);

/* Which frame of f[0..n) a user means by "where in my code": the innermost Python frame of
 * the program's own (not in site-packages, dist-packages, the standard library or frozen
 * modules); else the innermost Python frame; else, in a stack of native frames only, the
 * innermost frame of the program's own (not in CUDA's, PyTorch's, the C and C++ runtimes',
 * the interpreter's or gputrace's libraries); else 0. n > 0. */
unsigned gt_stacks_user_frame(const struct gt_stack_sym *f, unsigned n);

/* Stacks held. */
uint32_t gt_stacks_count(const struct gt_stacks *s);

#endif /* GPUTRACE_EXPORTERS_STACKS_H */
