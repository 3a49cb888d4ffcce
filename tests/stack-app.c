/* Test helper for tests/cli-stacks.sh: NVTX ranges pushed from known functions, so that the
 * stacks `gputrace run --backtrace native` records can be checked frame by frame without a GPU.
 * main marks "start", then calls outer() twice from one place; outer starts "outer", calls
 * middle, ends it; middle pushes and pops "inner" from inner() three times (one call site),
 * then marks "lib" from stacklib_mark() in libstack-lib.so. Distinct stacks: 5 (the first NVTX
 * call of the program and of the library each goes through NVTX's own initializing stub, so
 * the first "start" mark and the first "lib" mark have a frame more than later calls). */
#include <nvtx3/nvToolsExt.h>

void stacklib_mark(const char *message);

volatile int gt_sink;
/* loop counts the compiler cannot see, so that it keeps one call site per loop */
volatile int n_outer = 2, n_inner = 3;

__attribute__((noinline)) static void inner(int i)
{
	nvtxRangePushA("inner");
	gt_sink += i;
	nvtxRangePop();
}

__attribute__((noinline)) static void middle(void)
{
	for (int i = 0; i < n_inner; i++)
		inner(i);
	stacklib_mark("lib");
	gt_sink++;
}

__attribute__((noinline)) static void outer(void)
{
	nvtxRangeId_t id = nvtxRangeStartA("outer");

	middle();
	nvtxRangeEnd(id);
	gt_sink++;
}

int main(void)
{
	nvtxMarkA("start");
	for (int i = 0; i < n_outer; i++)
		outer();
	return gt_sink == 10 ? 0 : 1;
}
