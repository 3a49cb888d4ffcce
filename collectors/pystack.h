/* Python frames of call stacks (pystack.c): CPython found through its C API by dlsym, the
 * calling thread's frames read only while it holds the GIL, and each code object and line a
 * new stack refers to written once. Runs inside the traced application, on its own threads. */
#ifndef GT_COLLECTORS_PYSTACK_H
#define GT_COLLECTORS_PYSTACK_H

#include <stdbool.h>
#include <stdint.h>

#include "gputrace/record.h"

/*
 * The calling thread's Python frames, innermost first, into f (kind GT_FRAME_PYTHON, pc the
 * code object, arg the instruction offset in bytes; under Python 3.10 the line): how many,
 * at most max, *truncated set when there were more. 0 when the process has no Python (one
 * failed dlsym, the first time), when it is not initialized or is finalizing, or when the
 * thread has no thread state or does not hold the GIL. Runs no Python code; allocates only
 * what CPython's frame accessors allocate. Any application thread, not re-entered.
 */
unsigned gt_pystack_capture(struct gt_stack_frame *f, unsigned max, bool *truncated);

/* Is pc inside the interpreter's own code (the executable segment holding its eval loop)?
 * false before gt_pystack_capture found Python. */
bool gt_pystack_in_interpreter(uint64_t pc);

/*
 * Write the PYCODE records of the code objects of f[0..n) not written yet (keeping a reference
 * to each), and the PYLINE records of their (code, offset) pairs not written yet. Call with
 * the GIL still held, right after gt_pystack_capture, for a stack seen for the first time,
 * before its STACK records. Takes a lock.
 */
void gt_pystack_describe(const struct gt_stack_frame *f, unsigned n);

#endif /* GT_COLLECTORS_PYSTACK_H */
