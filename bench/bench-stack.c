/* Stack capture cost without CUDA: NVTX push+pop pairs made from a call chain of a given
 * depth, through whatever NVTX_INJECTION64_PATH names. Run it with GPUTRACE_BACKTRACE=native
 * and without: the difference per pair is what recording the stack costs (an unwind with
 * libgcc's _Unwind_Backtrace and a lookup in the table of distinct stacks; the stack is new
 * only on the first pair). docs/performance.md, "Stacks".
 *   bench-stack [depth] [pairs]      prints "stack_pair_ns depth=D N" (best of 5 runs) */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <nvtx3/nvToolsExt.h>

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static volatile long sink;

/* `depth` frames of itself above the loop: a stack as deep as the caller asked */
static __attribute__((noinline)) double chain(int depth, long pairs)
{
	double t0, t;

	if (depth > 1) {
		t = chain(depth - 1, pairs);
		sink++; /* not a tail call */
		return t;
	}
	t0 = now_ns();
	for (long i = 0; i < pairs; i++) {
		nvtxRangePushA("bench");
		nvtxRangePop();
	}
	return (now_ns() - t0) / (double)pairs;
}

int main(int argc, char **argv)
{
	int depth = argc > 1 ? atoi(argv[1]) : 30;
	long pairs = argc > 2 ? atol(argv[2]) : 200000;
	double best = 1e30;

	if (depth < 1 || pairs < 1) {
		fprintf(stderr, "usage: bench-stack [depth] [pairs]\n");
		return 64;
	}
	nvtxMarkA("warm-up"); /* loads the library */
	for (int run = 0; run < 5; run++) {
		double ns = chain(depth, pairs);

		if (ns < best)
			best = ns;
	}
	printf("stack_pair_ns depth=%d %.1f\n", depth, best);
	return 0;
}
