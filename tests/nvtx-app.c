/* Test helper for tests/cli-run.sh: a program that uses NVTX and never CUDA, so `gputrace run`
 * can be checked end to end through the real injection library on a machine without a GPU
 * (NVTX loads the library through NVTX_INJECTION64_PATH). Pushes and pops "outer"/"inner"
 * N times (argv[1], default 2), marks "tick" once, then exits with status 0 - or, with "kill"
 * as argv[2], waits half a second (several flush intervals) and kills itself with SIGKILL, so
 * only what the flush thread published survives. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <nvtx3/nvToolsExt.h>

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 2;

	for (int i = 0; i < n; i++) {
		nvtxRangePushA("outer");
		nvtxRangePushA("inner");
		nvtxRangePop();
		nvtxRangePop();
	}
	nvtxMarkA("tick");
	if (argc > 2 && strcmp(argv[2], "kill") == 0) {
		struct timespec half = {0, 500000000};

		nanosleep(&half, NULL);
		raise(SIGKILL);
	}
	return 0;
}
