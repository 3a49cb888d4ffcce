/* NVTX handler benchmark without CUDA: push+pop pairs through whatever NVTX_INJECTION64_PATH
 * names (gputrace's library, CUPTI, or nothing), plus the clock reads a handler pays for, so
 * the handler's cost can be told from the machine's. Run by hand or by bench/gpu-session.sh:
 *   bench-nvtx [pairs] [batches] [pairs per batch]
 * Prints "nvtx_ns" (mean over `pairs`), "nvtx_best_ns" (best batch), "rdtsc_ns" and
 * "clock_ns" (one TSC read, one clock_gettime(CLOCK_MONOTONIC)). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#include <nvtx3/nvToolsExt.h>

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double pairs_ns(long n)
{
	double t0 = now_s();

	for (long i = 0; i < n; i++) {
		nvtxRangePushA("bench");
		nvtxRangePop();
	}
	return (now_s() - t0) * 1e9 / (double)n;
}

int main(int argc, char **argv)
{
	long pairs = argc > 1 ? atol(argv[1]) : 2000000;
	long batches = argc > 2 ? atol(argv[2]) : 100;
	long per_batch = argc > 3 ? atol(argv[3]) : 2000;
	const long reads = 10000000;
	volatile uint64_t sink = 0;
	double best = 1e30, t0;

	if (pairs <= 0 || batches <= 0 || per_batch <= 0) {
		fprintf(stderr, "usage: bench-nvtx [pairs] [batches] [pairs per batch]\n");
		return 64;
	}
	/* the first call loads the injection library */
	nvtxRangePushA("warm-up");
	nvtxRangePop();

	printf("nvtx_ns %.2f\n", pairs_ns(pairs));
	for (long b = 0; b < batches; b++) {
		double ns = pairs_ns(per_batch);

		best = ns < best ? ns : best;
	}
	printf("nvtx_best_ns %.2f\n", best);

#if defined(__x86_64__)
	t0 = now_s();
	for (long i = 0; i < reads; i++)
		sink += __rdtsc();
	printf("rdtsc_ns %.2f\n", (now_s() - t0) * 1e9 / (double)reads);
#endif
	t0 = now_s();
	for (long i = 0; i < reads; i++) {
		struct timespec ts;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		sink += (uint64_t)ts.tv_nsec;
	}
	printf("clock_ns %.2f\n", (now_s() - t0) * 1e9 / (double)reads);
	(void)sink;
	return 0;
}
