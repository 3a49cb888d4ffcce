/* Test helper for tests/cli-stacks.sh: a shared library frame between the program and NVTX. */
#include <nvtx3/nvToolsExt.h>

void stacklib_mark(const char *message);

__attribute__((noinline)) void stacklib_mark(const char *message)
{
	nvtxMarkA(message);
	__asm__ volatile("" ::: "memory"); /* not a tail call */
}
