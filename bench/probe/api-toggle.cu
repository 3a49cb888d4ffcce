// Probe: does CUPTI write RUNTIME API activity records for a callback id switched on with
// cuptiActivityEnableRuntimeApi once a context exists, or after it was switched off again?
// Counts, per phase, the cudaLaunchKernel records, the other runtime records and the kernels.
// On the H200 (CUDA 13.0, CUPTI 13.0.1, driver 580.159; 2026-12-01): no record in any phase
// of per-call switches made after the context exists, on, off or on again; the whole RUNTIME
// kind switched on and off mid-run works (phases 6 and 7). gputrace switches API calls on at
// injection, before the first context, and so keeps them on for a capture range
// (collectors/cupti.c, gt_cupti_in_capture).
// Build and run: nvcc -o probe-api-toggle bench/probe/api-toggle.cu -lcupti
//   -I/usr/local/cuda/extras/CUPTI/include -L/usr/local/cuda/extras/CUPTI/lib64 && ./probe-api-toggle
#include <cstdio>
#include <cstdlib>
#include <cupti.h>

__global__ void k() {}

static int nl, no, nk;
static const unsigned L = CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000;

static void CUPTIAPI req(uint8_t **b, size_t *s, size_t *m)
{
	*b = (uint8_t *)aligned_alloc(8, 1 << 20);
	*s = 1 << 20;
	*m = 0;
}

static void CUPTIAPI done(CUcontext, uint32_t, uint8_t *b, size_t, size_t v)
{
	CUpti_Activity *r = NULL;
	while (cuptiActivityGetNextRecord(b, v, &r) == CUPTI_SUCCESS) {
		if (r->kind == CUPTI_ACTIVITY_KIND_RUNTIME) {
			if (((CUpti_ActivityAPI *)r)->cbid == L)
				nl++;
			else
				no++;
		}
		if (r->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
			nk++;
	}
	free(b);
}

static void phase(const char *name, int rc)
{
	void *p;
	nl = no = nk = 0;
	cudaMalloc(&p, 64);
	for (int i = 0; i < 5; i++)
		k<<<1, 1>>>();
	cudaMemset(p, 0, 64);
	cudaDeviceSynchronize();
	cudaFree(p);
	cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	printf("%-60s rc %d: launch records %d, other runtime records %d, kernels %d\n", name, rc,
	       nl, no, nk);
}

int main()
{
	cuptiActivityRegisterCallbacks(req, done);
	cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
	cudaFree(0);
	phase("0 nothing", 0);
	phase("1 EnableRuntimeApi(launch, 1)", cuptiActivityEnableRuntimeApi(L, 1));
	phase("2 EnableRuntimeApi(launch, 0)", cuptiActivityEnableRuntimeApi(L, 0));
	phase("3 EnableRuntimeApi(launch, 1) again", cuptiActivityEnableRuntimeApi(L, 1));
	phase("4 ActivityDisable(RUNTIME)", cuptiActivityDisable(CUPTI_ACTIVITY_KIND_RUNTIME));
	phase("5 EnableRuntimeApi(launch, 1) after that",
	      cuptiActivityEnableRuntimeApi(L, 1));
	phase("6 ActivityEnable(RUNTIME)", cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME));
	phase("7 ActivityDisable(RUNTIME)", cuptiActivityDisable(CUPTI_ACTIVITY_KIND_RUNTIME));
	phase("8 EnableRuntimeApi(launch, 1)", cuptiActivityEnableRuntimeApi(L, 1));
	int a = cuptiActivityEnableRuntimeApi(L, 0);
	phase("9 EnableRuntimeApi(launch, 0) then (launch, 1) at once",
	      a | cuptiActivityEnableRuntimeApi(L, 1));
	return 0;
}
