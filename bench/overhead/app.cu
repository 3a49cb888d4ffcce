// Launch-bound program for the overhead benchmark (bench/overhead/run.sh): times, inside the
// process with CLOCK_MONOTONIC, (1) back-to-back empty kernel launches, (2) small synchronous
// host-to-device copies, (3) NVTX push+pop pairs: first 100 paced batches of 2,000, each after
// 1 ms of spinning, in which a tracer's consumer keeps up as it does in a program that does
// anything between its ranges (its default ring keeps every record), then a flood of `pairs`
// back to back (a tracer's consumer falls behind and may drop), then 100 batches of 2,000
// after it. Prints "launch_us", "memcpy_us", "nvtx_paced_ns" (mean over the paced batches),
// "nvtx_paced_best_ns", "nvtx_ns" (mean over the flood) and "nvtx_best_ns" (best batch after it).
// Runs on the GPU machine, bare or under a tracer.
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

__global__ void bench_empty(void)
{
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	long launches = argc > 1 ? atol(argv[1]) : 200000;
	long copies = argc > 2 ? atol(argv[2]) : 20000;
	long pairs = argc > 3 ? atol(argv[3]) : 2000000;
	char host[64] = { 0 }, *dev;
	double t0, t1;
	long i;

	// CUDA first, so a tracer's NVTX handlers are in place before the first NVTX call
	if (cudaFree(0) != cudaSuccess || cudaMalloc(&dev, 64) != cudaSuccess) {
		fprintf(stderr, "no CUDA device\n");
		return 77;
	}
	for (i = 0; i < 2000; i++) // warm-up: module load, lazy loading, first buffers
		bench_empty<<<1, 1>>>();
	cudaMemcpy(dev, host, 64, cudaMemcpyHostToDevice);
	nvtxRangePushA("warm-up");
	nvtxRangePop();
	cudaDeviceSynchronize();

	t0 = now_s();
	for (i = 0; i < launches; i++)
		bench_empty<<<1, 1>>>();
	cudaDeviceSynchronize();
	t1 = now_s();
	printf("launch_us %.4f\n", (t1 - t0) * 1e6 / (double)launches);

	t0 = now_s();
	for (i = 0; i < copies; i++)
		cudaMemcpy(dev, host, 64, cudaMemcpyHostToDevice);
	t1 = now_s();
	printf("memcpy_us %.4f\n", (t1 - t0) * 1e6 / (double)copies);

	{
		double best = 1e9, sum = 0, ns, until;
		int b;

		for (b = 0; b < 100; b++) {
			for (until = now_s() + 1e-3; now_s() < until;)
				;
			t0 = now_s();
			for (i = 0; i < 2000; i++) {
				nvtxRangePushA("bench");
				nvtxRangePop();
			}
			ns = (now_s() - t0) * 1e9 / 2000.0;
			sum += ns;
			best = ns < best ? ns : best;
		}
		printf("nvtx_paced_ns %.2f\n", sum / 100.0);
		printf("nvtx_paced_best_ns %.2f\n", best);
	}

	t0 = now_s();
	for (i = 0; i < pairs; i++) {
		nvtxRangePushA("bench");
		nvtxRangePop();
	}
	t1 = now_s();
	printf("nvtx_ns %.2f\n", (t1 - t0) * 1e9 / (double)pairs);
	// the same pairs in short batches, best batch: the handler's own cost with the ring's
	// consumer mostly idle, as in a program that opens far fewer ranges than this loop
	{
		double best = 1e9;
		int b;

		for (b = 0; b < 100; b++) {
			t0 = now_s();
			for (i = 0; i < 2000; i++) {
				nvtxRangePushA("bench");
				nvtxRangePop();
			}
			t1 = now_s();
			if ((t1 - t0) * 1e9 / 2000.0 < best)
				best = (t1 - t0) * 1e9 / 2000.0;
			usleep(200);
		}
		printf("nvtx_best_ns %.2f\n", best);
	}
	cudaFree(dev);
	return 0;
}
