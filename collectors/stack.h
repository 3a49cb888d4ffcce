/* Call stacks for API calls and NVTX ranges (stack.c): native frames unwound with libgcc's
 * _Unwind_Backtrace, each distinct stack written once as GT_REC_STACK records, and the
 * executable mappings they refer to as GT_REC_MODULE records. Runs inside the traced
 * application, on its own threads. */
#ifndef GT_COLLECTORS_STACK_H
#define GT_COLLECTORS_STACK_H

#include <stdbool.h>
#include <stdint.h>

/* true when GPUTRACE_BACKTRACE asks for stacks (set by gt_stack_init, then read only). */
extern bool gt_stack_on;

/* Read the settings; call once at start, before any record is written. */
void gt_stack_init(void);

/*
 * The calling thread's stack, above the frames of this library: its id within the process,
 * with its records (and those of modules new to it) written the first time it is seen; 0 when
 * stacks are off, on a nested call (re-entrancy) or when the table of stacks is full. Any
 * application thread; allocates nothing; takes a lock only when a frame lies outside every
 * module seen so far. Not from a signal handler.
 */
uint32_t gt_stack_capture(void);

#endif /* GT_COLLECTORS_STACK_H */
