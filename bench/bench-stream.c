/* A steady NVTX producer for bench/write-latency.sh: RATE push+pop pairs a second for SECONDS
 * seconds, in batches of 1,000 paced by the clock (a training loop's ranges, not a flood a
 * drainer cannot follow). No CUDA: NVTX_INJECTION64_PATH loads the tracer.
 *   bench-stream [RATE] [SECONDS]   (default 500000 pairs/s for 4 s)
 * Prints the pairs it made. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <nvtx3/nvToolsExt.h>

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	double rate = argc > 1 ? atof(argv[1]) : 500000, secs = argc > 2 ? atof(argv[2]) : 4;
	double t0 = now_s();
	long pairs = 0, want = (long)(rate * secs);

	while (pairs < want) {
		double due = t0 + (double)pairs / rate;

		while (now_s() < due) {
			struct timespec ts = {0, 100000};

			nanosleep(&ts, NULL);
		}
		for (int i = 0; i < 1000; i++, pairs++) {
			nvtxRangePushA("step");
			nvtxRangePop();
		}
	}
	printf("pairs %ld in %.2f s\n", pairs, now_s() - t0);
	return 0;
}
