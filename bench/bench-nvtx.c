/* NVTX handler benchmark without CUDA: push+pop pairs through whatever NVTX_INJECTION64_PATH
 * names (gputrace's library, CUPTI, or nothing), plus the clock reads a handler pays for, so
 * the handler's cost can be told from the machine's. Run by hand or by bench/gpu-session.sh:
 *   bench-nvtx [pairs] [batches] [pairs per batch]
 * First `batches` paced batches: each follows 1 ms of spinning, in which a tracer's drainer
 * catches up, as it does in a program that does anything between its ranges; prints
 * "nvtx_paced_ns" (mean over those batches) and "nvtx_paced_best_ns" (best of them). Then the
 * flood: "nvtx_ns" (mean over `pairs` back to back, far more than a drainer keeps up with) and
 * "nvtx_best_ns" (best of `batches` batches right after it). Then "rdtsc_ns" and "clock_ns"
 * (one TSC read, one clock_gettime(CLOCK_MONOTONIC)).
 * BENCH_NVTX_ISOLATE=1: once the library is loaded, this thread stays on the CPU it runs on and
 * every other thread of the process (the tracer's drainer and flush threads) is kept off that
 * CPU's core, so that a busy drainer cannot share the core with the thread being timed. */
#include <dirent.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
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

/* The CPUs of a list such as "0,8" or "0-1" (sysfs cpulist format) added to `set`. */
static void add_cpulist(const char *list, cpu_set_t *set)
{
	const char *p = list;

	while (*p) {
		char *end;
		long a = strtol(p, &end, 10), b = a;

		if (end == p)
			break;
		if (*end == '-')
			b = strtol(end + 1, &end, 10);
		for (long c = a; c <= b && c < CPU_SETSIZE; c++)
			CPU_SET((int)c, set);
		if (*end != ',')
			break;
		p = end + 1;
	}
}

/* See BENCH_NVTX_ISOLATE above. Prints the CPU and its core's siblings, or why not. */
static void isolate(void)
{
	char path[128], list[256] = "";
	cpu_set_t mine, core, others;
	int cpu = sched_getcpu(), n = 0;
	pid_t self = (pid_t)gettid();
	struct dirent *d;
	FILE *f;
	DIR *dir;

	if (cpu < 0 || sched_getaffinity(0, sizeof(others), &others) != 0) {
		printf("isolate failed\n");
		return;
	}
	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/topology/thread_siblings_list",
	         cpu);
	CPU_ZERO(&core);
	CPU_SET(cpu, &core);
	if ((f = fopen(path, "r"))) {
		if (fgets(list, sizeof(list), f)) {
			list[strcspn(list, "\n")] = '\0';
			add_cpulist(list, &core);
		}
		fclose(f);
	}
	CPU_ZERO(&mine);
	CPU_SET(cpu, &mine);
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &core))
			CPU_CLR(c, &others);
	if (sched_setaffinity(0, sizeof(mine), &mine) != 0 || !(dir = opendir("/proc/self/task"))) {
		printf("isolate failed\n");
		return;
	}
	while ((d = readdir(dir))) {
		pid_t tid = (pid_t)atoi(d->d_name);

		if (tid > 0 && tid != self && sched_setaffinity(tid, sizeof(others), &others) == 0)
			n++;
	}
	closedir(dir);
	printf("isolated_cpu %d core %s other_threads %d\n", cpu, list[0] ? list : "?", n);
}

int main(int argc, char **argv)
{
	long pairs = argc > 1 ? atol(argv[1]) : 2000000;
	long batches = argc > 2 ? atol(argv[2]) : 100;
	long per_batch = argc > 3 ? atol(argv[3]) : 2000;
	const long reads = 10000000;
	volatile uint64_t sink = 0;
	double best = 1e30, paced = 0, t0;

	if (pairs <= 0 || batches <= 0 || per_batch <= 0) {
		fprintf(stderr, "usage: bench-nvtx [pairs] [batches] [pairs per batch]\n");
		return 64;
	}
	/* the first call loads the injection library */
	nvtxRangePushA("warm-up");
	nvtxRangePop();
	if (getenv("BENCH_NVTX_ISOLATE"))
		isolate();

	for (long b = 0; b < batches; b++) {
		double ns, until = now_s() + 1e-3;

		while (now_s() < until)
			;
		ns = pairs_ns(per_batch);
		paced += ns;
		best = ns < best ? ns : best;
	}
	printf("nvtx_paced_ns %.2f\n", paced / (double)batches);
	printf("nvtx_paced_best_ns %.2f\n", best);

	best = 1e30;
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
