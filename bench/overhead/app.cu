// Launch-bound program for the overhead benchmark (bench/overhead/run.sh): times, inside the
// process with CLOCK_MONOTONIC, (1) back-to-back empty kernel launches, in 20 chunks that each
// end with a synchronize (a chunk's cost per launch is steadier than the whole run's), (2)
// small synchronous host-to-device copies, (3) NVTX push+pop pairs: first 100 paced batches of
// 2,000, each after 1 ms of spinning, in which a tracer's consumer keeps up as it does in a
// program that does anything between its ranges (its default ring keeps every record), then a
// flood of `pairs` back to back (a tracer's consumer falls behind and may drop), then 100
// batches of 2,000 after it. Prints "launch_us" (all chunks), "launch_med_us" (the median
// chunk), "launch_cpu_us" (the launching thread's CPU time), "launch_cpus" (the CPU it ran on
// at each chunk's start and at the end), "launch_burst_us" (the median of 200 bursts of 256
// launches, each timed before its synchronize: the call's cost to its caller), "memcpy_us", "nvtx_paced_ns" (mean over the paced batches), "nvtx_paced_best_ns",
// "nvtx_ns" (mean over the flood) and "nvtx_best_ns" (best batch after it).
// BENCH_PIN_CPU=N pins the main thread (only) to CPU N after CUDA is initialized.
// Runs on the GPU machine, bare or under a tracer.
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

__global__ void bench_empty(void)
{
}

#define LAUNCH_CHUNKS 20
#define BURSTS 200
#define BURST_LAUNCHES 256

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double clock_s(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double now_s(void)
{
	return clock_s(CLOCK_MONOTONIC);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(v[0]), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv)
{
	long launches = argc > 1 ? atol(argv[1]) : 200000;
	long copies = argc > 2 ? atol(argv[2]) : 20000;
	long pairs = argc > 3 ? atol(argv[3]) : 2000000;
	char host[64] = { 0 }, *dev;
	double t0, t1, c0, chunk_us[LAUNCH_CHUNKS], burst_us[BURSTS], total = 0, cpu = 0;
	const char *pin = getenv("BENCH_PIN_CPU");
	int cpus[LAUNCH_CHUNKS + 1];
	long i;
	int c;

	// CUDA first, so a tracer's NVTX handlers are in place before the first NVTX call
	if (cudaFree(0) != cudaSuccess || cudaMalloc(&dev, 64) != cudaSuccess) {
		fprintf(stderr, "no CUDA device\n");
		return 77;
	}
	if (pin && *pin) { // only this thread: CUDA's and the tracer's threads keep theirs
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(atoi(pin), &set);
		pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	}
	for (i = 0; i < 2000; i++) // warm-up: module load, lazy loading, first buffers
		bench_empty<<<1, 1>>>();
	cudaMemcpy(dev, host, 64, cudaMemcpyHostToDevice);
	nvtxRangePushA("warm-up");
	nvtxRangePop();
	cudaDeviceSynchronize();

	for (c = 0; c < LAUNCH_CHUNKS; c++) {
		long n = launches / LAUNCH_CHUNKS + (c < launches % LAUNCH_CHUNKS);

		cpus[c] = sched_getcpu();
		c0 = clock_s(CLOCK_THREAD_CPUTIME_ID);
		t0 = now_s();
		for (i = 0; i < n; i++)
			bench_empty<<<1, 1>>>();
		cudaDeviceSynchronize();
		t1 = now_s();
		cpu += clock_s(CLOCK_THREAD_CPUTIME_ID) - c0;
		total += t1 - t0;
		chunk_us[c] = n ? (t1 - t0) * 1e6 / (double)n : 0;
	}
	cpus[LAUNCH_CHUNKS] = sched_getcpu();
	printf("launch_us %.4f\n", total * 1e6 / (double)launches);
	printf("launch_med_us %.4f\n", median(chunk_us, LAUNCH_CHUNKS));
	printf("launch_cpu_us %.4f\n", cpu * 1e6 / (double)launches);
	printf("launch_cpus");
	for (c = 0; c <= LAUNCH_CHUNKS; c++)
		printf(" %d", cpus[c]);
	printf("\n");
	// bursts too short to fill the launch queue: what a launch call costs its caller
	for (c = 0; c < BURSTS; c++) {
		t0 = now_s();
		for (i = 0; i < BURST_LAUNCHES; i++)
			bench_empty<<<1, 1>>>();
		t1 = now_s();
		cudaDeviceSynchronize();
		burst_us[c] = (t1 - t0) * 1e6 / BURST_LAUNCHES;
	}
	printf("launch_burst_us %.4f\n", median(burst_us, BURSTS));

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
