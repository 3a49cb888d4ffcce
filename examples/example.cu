// gputrace-example: a small CUDA program that looks like a training loop, for trying gputrace
// (`gputrace run ./gputrace-example`) and for the bundled trace in tests/data. Each of 20 steps,
// inside an NVTX "step" range: copy a batch in, run a matrix product, an activation and a
// reduction, zero a gradient buffer, copy the loss out; a second stream prefetches the next
// batch and the two meet on an event.
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include <stdio.h>
#include <stdlib.h>

#define N 256
#define STEPS 20

#define CK(call)                                                                              \
	do {                                                                                  \
		cudaError_t e_ = (call);                                                      \
		if (e_ != cudaSuccess) {                                                      \
			fprintf(stderr, "%s: %s\n", #call, cudaGetErrorString(e_));          \
			return 1;                                                             \
		}                                                                             \
	} while (0)

__global__ void matmul(const float *a, const float *b, float *c, int n)
{
	__shared__ float ta[16][16], tb[16][16];
	int row = blockIdx.y * 16 + threadIdx.y, col = blockIdx.x * 16 + threadIdx.x;
	float acc = 0.0f;

	for (int t = 0; t < n; t += 16) {
		ta[threadIdx.y][threadIdx.x] = a[row * n + t + threadIdx.x];
		tb[threadIdx.y][threadIdx.x] = b[(t + threadIdx.y) * n + col];
		__syncthreads();
		for (int k = 0; k < 16; k++)
			acc += ta[threadIdx.y][k] * tb[k][threadIdx.x];
		__syncthreads();
	}
	c[row * n + col] = acc;
}

__global__ void relu(float *x, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] = x[i] > 0.0f ? x[i] : 0.0f;
}

__global__ void reduce_sum(const float *x, float *out, int n)
{
	extern __shared__ float part[];
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	part[threadIdx.x] = i < n ? x[i] : 0.0f;
	__syncthreads();
	for (int s = blockDim.x / 2; s > 0; s >>= 1) {
		if (threadIdx.x < s)
			part[threadIdx.x] += part[threadIdx.x + s];
		__syncthreads();
	}
	if (threadIdx.x == 0)
		atomicAdd(out, part[0]);
}

int main(void)
{
	const size_t bytes = (size_t)N * N * sizeof(float);
	float *h_batch, *d_batch[2], *d_w, *d_act, *d_grad, *d_loss, h_loss = 0.0f, total = 0.0f;
	cudaStream_t compute, copy;
	cudaEvent_t ready;
	int i, step;

	CK(cudaMallocHost(&h_batch, bytes));
	for (i = 0; i < N * N; i++)
		h_batch[i] = (float)((i * 7) % 13) / 13.0f - 0.4f;
	CK(cudaMalloc(&d_batch[0], bytes));
	CK(cudaMalloc(&d_batch[1], bytes));
	CK(cudaMalloc(&d_w, bytes));
	CK(cudaMalloc(&d_act, bytes));
	CK(cudaMalloc(&d_grad, bytes));
	CK(cudaMalloc(&d_loss, sizeof(float)));
	CK(cudaStreamCreateWithFlags(&compute, cudaStreamNonBlocking));
	CK(cudaStreamCreateWithFlags(&copy, cudaStreamNonBlocking));
	CK(cudaEventCreateWithFlags(&ready, cudaEventDisableTiming));
	CK(cudaMemcpy(d_w, h_batch, bytes, cudaMemcpyHostToDevice));
	CK(cudaMemcpyAsync(d_batch[0], h_batch, bytes, cudaMemcpyHostToDevice, copy));
	CK(cudaEventRecord(ready, copy));

	for (step = 0; step < STEPS; step++) {
		float *cur = d_batch[step & 1], *next = d_batch[(step + 1) & 1];
		void *scratch;

		nvtxRangePushA("step");
		CK(cudaStreamWaitEvent(compute, ready, 0));
		nvtxRangePushA("forward");
		matmul<<<dim3(N / 16, N / 16), dim3(16, 16), 0, compute>>>(cur, d_w, d_act, N);
		relu<<<N * N / 256, 256, 0, compute>>>(d_act, N * N);
		CK(cudaMemsetAsync(d_loss, 0, sizeof(float), compute));
		reduce_sum<<<N * N / 256, 256, 256 * sizeof(float), compute>>>(d_act, d_loss, N * N);
		nvtxRangePop();
		nvtxRangePushA("backward");
		CK(cudaMallocAsync(&scratch, bytes, compute));
		CK(cudaMemsetAsync(d_grad, 0, bytes, compute));
		matmul<<<dim3(N / 16, N / 16), dim3(16, 16), 0, compute>>>(d_act, cur, (float *)scratch, N);
		CK(cudaFreeAsync(scratch, compute));
		nvtxRangePop();
		// prefetch the next batch on the copy stream while this step computes
		CK(cudaMemcpyAsync(next, h_batch, bytes, cudaMemcpyHostToDevice, copy));
		CK(cudaEventRecord(ready, copy));
		CK(cudaMemcpyAsync(&h_loss, d_loss, sizeof(float), cudaMemcpyDeviceToHost, compute));
		CK(cudaStreamSynchronize(compute));
		total += h_loss;
		nvtxRangePop();
	}
	CK(cudaDeviceSynchronize());
	printf("gputrace-example: %d steps, loss sum %.3f\n", STEPS, total);
	cudaEventDestroy(ready);
	cudaStreamDestroy(copy);
	cudaStreamDestroy(compute);
	cudaFree(d_loss);
	cudaFree(d_grad);
	cudaFree(d_act);
	cudaFree(d_w);
	cudaFree(d_batch[1]);
	cudaFree(d_batch[0]);
	cudaFreeHost(h_batch);
	return 0;
}
