/* Python frames of call stacks (pystack.c): CPython found through its C API by dlsym, the
 * calling thread's frames read from the interpreter's memory (3.11 to 3.13, with or without the
 * GIL) or through the C API while it holds the GIL (other versions), and each code object and
 * line a new stack refers to written once. Runs inside the traced application, on its own
 * threads. */
#ifndef GT_COLLECTORS_PYSTACK_H
#define GT_COLLECTORS_PYSTACK_H

#include <stdbool.h>
#include <stdint.h>

#include "gputrace/record.h"

/*
 * The calling thread's Python frames, innermost first, into f (kind GT_FRAME_PYTHON, pc the
 * code object, arg the instruction offset in bytes; under Python 3.10 the line): how many,
 * at most max, *truncated set when there were more. 0 when the process has no Python (one
 * failed dlsym, the first time), when it is not initialized or is finalizing, when the thread
 * has no thread state, or, under a CPython whose layout pystack.c does not know, when it does
 * not hold the GIL. Runs no Python code and takes no lock; allocates only what CPython's frame
 * accessors allocate (versions read through them). Any application thread, not re-entered.
 */
unsigned gt_pystack_capture(struct gt_stack_frame *f, unsigned max, bool *truncated);

/* Is pc inside the interpreter's own code (the executable segment holding its eval loop)?
 * false before gt_pystack_capture found Python. */
bool gt_pystack_in_interpreter(uint64_t pc);

/*
 * Write the PYCODE records of the code objects of f[0..n) not written yet (keeping a reference
 * to each when the thread holds the GIL; read from memory when it does not), and the PYLINE
 * records of their (code, offset) pairs not written yet. Call right after gt_pystack_capture on
 * the same thread, for a stack seen for the first time, before its STACK records. Takes a
 * lock.
 */
void gt_pystack_describe(const struct gt_stack_frame *f, unsigned n);

#endif /* GT_COLLECTORS_PYSTACK_H */
