// GPU suite workloads: one small CUDA program per scenario, chosen by argv[1]; each does an
// exactly known set of GPU operations that tests/gpu/check.c then finds record by record.
// Runs on the GPU machine under libgputrace-inject.so. Exits 77 (meson's skip) without a GPU.
#include <cuda_profiler_api.h>
#include <cuda_runtime.h>
#include <cupti.h>
#include <nvtx3/nvToolsExt.h>

#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CK(call)                                                                              \
	do {                                                                                  \
		cudaError_t e_ = (call);                                                      \
		if (e_ != cudaSuccess) {                                                      \
			fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,        \
				cudaGetErrorString(e_));                                      \
			exit(1);                                                              \
		}                                                                             \
	} while (0)

__global__ void gt_add(float *x, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] += 1.0f;
}

__global__ void gt_scale(float *x, int n)
{
	extern __shared__ float tile[];
	int i = blockIdx.x * blockDim.x * blockDim.y + threadIdx.y * blockDim.x + threadIdx.x;
	tile[threadIdx.x] = i < n ? x[i] : 0.0f;
	__syncthreads();
	if (i < n)
		x[i] = tile[threadIdx.x] * 2.0f;
}

__global__ void gt_empty(void)
{
}

__global__ void gt_tag(int *out, int tag)
{
	if (threadIdx.x == 0 && blockIdx.x == 0)
		out[tag] += 1;
}

// Runs for `ns` nanoseconds of the GPU's global timer: a kernel certain to be in flight.
__global__ void gt_spin(unsigned long long ns)
{
	unsigned long long t0, t;

	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
	do
		asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	while (t - t0 < ns);
}

// Writes through whatever pointer it is given: nullptr makes an illegal-address fault.
__global__ void gt_poke(int *p)
{
	p[threadIdx.x] = 1;
}

// kernels: 10 x gt_add<<<(4,2,1),(128,1,1)>>>, 5 x gt_scale<<<(8,1,1),(32,4,1),256>>>,
// 7 x gt_empty<<<1,1>>>.
static int run_kernels(void)
{
	float *x;
	int i;

	CK(cudaMalloc(&x, 1 << 20));
	for (i = 0; i < 10; i++)
		gt_add<<<dim3(4, 2, 1), dim3(128, 1, 1)>>>(x, 1024);
	for (i = 0; i < 5; i++)
		gt_scale<<<dim3(8, 1, 1), dim3(32, 4, 1), 256>>>(x, 1024);
	for (i = 0; i < 7; i++)
		gt_empty<<<1, 1>>>();
	CK(cudaDeviceSynchronize());
	CK(cudaFree(x));
	return 0;
}

// memcpy: HtoD 1 MiB pageable, DtoH 1 MiB pageable, DtoD 512 KiB, HtoD 256 KiB pinned async.
static int run_memcpy(void)
{
	char *h = (char *)calloc(1, 1 << 20), *pinned, *d1, *d2;
	cudaStream_t s;

	CK(cudaMallocHost(&pinned, 256 << 10));
	CK(cudaMalloc(&d1, 1 << 20));
	CK(cudaMalloc(&d2, 1 << 20));
	CK(cudaStreamCreate(&s));
	CK(cudaMemcpy(d1, h, 1 << 20, cudaMemcpyHostToDevice));
	CK(cudaMemcpy(h, d1, 1 << 20, cudaMemcpyDeviceToHost));
	CK(cudaMemcpy(d2, d1, 512 << 10, cudaMemcpyDeviceToDevice));
	CK(cudaMemcpyAsync(d1, pinned, 256 << 10, cudaMemcpyHostToDevice, s));
	CK(cudaStreamSynchronize(s));
	CK(cudaStreamDestroy(s));
	CK(cudaFree(d1));
	CK(cudaFree(d2));
	CK(cudaFreeHost(pinned));
	free(h);
	return 0;
}

// memset: 4096 bytes of 0x5a, then 8192 bytes of 0 async.
static int run_memset(void)
{
	char *d;

	CK(cudaMalloc(&d, 1 << 16));
	CK(cudaMemset(d, 0x5a, 4096));
	CK(cudaMemsetAsync(d, 0, 8192, 0));
	CK(cudaDeviceSynchronize());
	CK(cudaFree(d));
	return 0;
}

// alloc: 1, 3 and 5 MiB allocated and freed; 2 MiB cudaMallocAsync/cudaFreeAsync on a stream.
static int run_alloc(void)
{
	void *a, *b, *c, *p;
	cudaStream_t s;

	CK(cudaMalloc(&a, 1 << 20));
	CK(cudaMalloc(&b, 3 << 20));
	CK(cudaMalloc(&c, 5 << 20));
	CK(cudaFree(b));
	CK(cudaFree(a));
	CK(cudaFree(c));
	CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	CK(cudaMallocAsync(&p, 2 << 20, s));
	CK(cudaFreeAsync(p, s));
	CK(cudaStreamSynchronize(s));
	CK(cudaStreamDestroy(s));
	return 0;
}

// nvtx: 4 threads, each 3 x { push "outer" { push "inner" pop } pop } and a mark "tick";
// a start/end range "handoff" started here and ended on thread 0; a domain "gtdomain" range
// with registered message "registered-msg", color 0xff00ff00, category 7.
static nvtxRangeId_t handoff;

static void *nvtx_thread(void *arg)
{
	long t = (long)arg;
	int i;

	for (i = 0; i < 3; i++) {
		nvtxRangePushA("outer");
		nvtxRangePushA("inner");
		usleep(100);
		nvtxRangePop();
		nvtxRangePop();
	}
	nvtxMarkA("tick");
	if (t == 0)
		nvtxRangeEnd(handoff);
	return NULL;
}

static int run_nvtx(void)
{
	pthread_t th[4];
	nvtxDomainHandle_t dom;
	nvtxStringHandle_t reg;
	nvtxEventAttributes_t attr;
	long t;

	// CUDA first: InitializeInjection points NVTX at our library before the first NVTX call
	CK(cudaFree(0));
	handoff = nvtxRangeStartA("handoff");
	for (t = 0; t < 4; t++)
		pthread_create(&th[t], NULL, nvtx_thread, (void *)t);
	for (t = 0; t < 4; t++)
		pthread_join(th[t], NULL);
	dom = nvtxDomainCreateA("gtdomain");
	reg = nvtxDomainRegisterStringA(dom, "registered-msg");
	memset(&attr, 0, sizeof(attr));
	attr.version = NVTX_VERSION;
	attr.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
	attr.category = 7;
	attr.colorType = NVTX_COLOR_ARGB;
	attr.color = 0xff00ff00u;
	attr.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
	attr.message.registered = reg;
	nvtxDomainRangePushEx(dom, &attr);
	nvtxDomainRangePop(dom);
	return 0;
}

// streams8: 8 threads, each on its own non-blocking stream, 100 x gt_tag<<<1,32>>>, inside an
// NVTX range "worker".
static int *tags;

static void *stream_thread(void *arg)
{
	long t = (long)arg;
	cudaStream_t s;
	int i;

	nvtxRangePushA("worker");
	CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	for (i = 0; i < 100; i++)
		gt_tag<<<1, 32, 0, s>>>(tags, (int)t);
	CK(cudaStreamSynchronize(s));
	CK(cudaStreamDestroy(s));
	nvtxRangePop();
	return NULL;
}

static int run_streams8(void)
{
	pthread_t th[8];
	long t;

	CK(cudaMalloc(&tags, 8 * sizeof(int)));
	CK(cudaMemset(tags, 0, 8 * sizeof(int)));
	for (t = 0; t < 8; t++)
		pthread_create(&th[t], NULL, stream_thread, (void *)t);
	for (t = 0; t < 8; t++)
		pthread_join(th[t], NULL);
	CK(cudaDeviceSynchronize());
	CK(cudaFree(tags));
	return 0;
}

// graph: captured graph of gt_add, gt_add, gt_scale (3 kernel nodes), launched 5 times.
static int run_graph(void)
{
	cudaStream_t s;
	cudaGraph_t g;
	cudaGraphExec_t ge;
	float *x;
	int i;

	CK(cudaMalloc(&x, 1 << 20));
	CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
	gt_add<<<dim3(4, 2, 1), dim3(128, 1, 1), 0, s>>>(x, 1024);
	gt_add<<<dim3(4, 2, 1), dim3(128, 1, 1), 0, s>>>(x, 1024);
	gt_scale<<<dim3(8, 1, 1), dim3(32, 4, 1), 256, s>>>(x, 1024);
	CK(cudaStreamEndCapture(s, &g));
	CK(cudaGraphInstantiate(&ge, g, 0));
	for (i = 0; i < 5; i++)
		CK(cudaGraphLaunch(ge, s));
	CK(cudaStreamSynchronize(s));
	CK(cudaGraphExecDestroy(ge));
	CK(cudaGraphDestroy(g));
	CK(cudaStreamDestroy(s));
	CK(cudaFree(x));
	return 0;
}

// apierror: cudaMalloc of 2^50 bytes fails with cudaErrorMemoryAllocation (2).
static int run_apierror(void)
{
	void *p = NULL;
	cudaError_t e;

	CK(cudaFree(0));
	e = cudaMalloc(&p, (size_t)1 << 50);
	if (e != cudaErrorMemoryAllocation) {
		fprintf(stderr, "expected cudaErrorMemoryAllocation, got %d\n", (int)e);
		return 1;
	}
	cudaGetLastError();
	return 0;
}

// launches N: N x gt_empty<<<1,1>>> back to back.
static int run_launches(long n)
{
	long i;

	for (i = 0; i < n; i++)
		gt_empty<<<1, 1>>>();
	CK(cudaDeviceSynchronize());
	return 0;
}

// sync (GPUTRACE_TRACE=default,sync): gt_empty and an event on stream 1; stream 2 waits on
// the event; then cudaEventSynchronize, cudaStreamSynchronize(stream 1), cudaDeviceSynchronize.
static int run_sync(void)
{
	cudaStream_t s1, s2;
	cudaEvent_t e;

	CK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
	CK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
	CK(cudaEventCreate(&e));
	gt_empty<<<1, 1, 0, s1>>>();
	CK(cudaEventRecord(e, s1));
	CK(cudaStreamWaitEvent(s2, e, 0));
	CK(cudaEventSynchronize(e));
	CK(cudaStreamSynchronize(s1));
	CK(cudaDeviceSynchronize());
	CK(cudaEventDestroy(e));
	CK(cudaStreamDestroy(s2));
	CK(cudaStreamDestroy(s1));
	return 0;
}

// capture-profiler (GPUTRACE_CAPTURE_RANGE=cudaProfilerApi): 5 x gt_add outside any range;
// range 1: 7 x gt_scale and a 64 KiB host-to-device copy; 3 x gt_empty outside; range 2:
// 1 x gt_spin of 50 ms and 4 x gt_tag queued behind it, stopped without synchronizing (so all
// five are in flight at cudaProfilerStop); 6 x gt_add after it.
static int run_capture_profiler(void)
{
	static char host[64 << 10];
	float *x;
	int *t, i;

	CK(cudaMalloc(&x, 1 << 20));
	CK(cudaMalloc(&t, 64 * sizeof(int)));
	for (i = 0; i < 5; i++)
		gt_add<<<dim3(4, 2, 1), dim3(128, 1, 1)>>>(x, 1024);
	CK(cudaDeviceSynchronize());
	CK(cudaProfilerStart());
	for (i = 0; i < 7; i++)
		gt_scale<<<dim3(8, 1, 1), dim3(32, 4, 1), 256>>>(x, 1024);
	CK(cudaMemcpy(x, host, sizeof(host), cudaMemcpyHostToDevice));
	CK(cudaProfilerStop());
	for (i = 0; i < 3; i++)
		gt_empty<<<1, 1>>>();
	CK(cudaDeviceSynchronize());
	CK(cudaProfilerStart());
	gt_spin<<<1, 1>>>(50ull * 1000 * 1000);
	for (i = 0; i < 4; i++)
		gt_tag<<<1, 32>>>(t, i);
	CK(cudaProfilerStop());
	for (i = 0; i < 6; i++)
		gt_add<<<dim3(4, 2, 1), dim3(128, 1, 1)>>>(x, 1024);
	CK(cudaDeviceSynchronize());
	CK(cudaFree(t));
	CK(cudaFree(x));
	return 0;
}

// capture-nvtx (GPUTRACE_CAPTURE_RANGE=nvtx:train): 3 x gt_add outside; "train" holding
// 6 x gt_scale and "inner" with 2 x gt_empty, closed without synchronizing; 4 x gt_tag
// outside; a second "train" with 1 x gt_add.
static int run_capture_nvtx(void)
{
	float *x;
	int *t, i;

	CK(cudaMalloc(&x, 1 << 20));
	CK(cudaMalloc(&t, 64 * sizeof(int)));
	for (i = 0; i < 3; i++)
		gt_add<<<dim3(4, 2, 1), dim3(128, 1, 1)>>>(x, 1024);
	CK(cudaDeviceSynchronize());
	nvtxRangePushA("train");
	for (i = 0; i < 6; i++)
		gt_scale<<<dim3(8, 1, 1), dim3(32, 4, 1), 256>>>(x, 1024);
	nvtxRangePushA("inner");
	for (i = 0; i < 2; i++)
		gt_empty<<<1, 1>>>();
	nvtxRangePop();
	nvtxRangePop();
	for (i = 0; i < 4; i++)
		gt_tag<<<1, 32>>>(t, i);
	CK(cudaDeviceSynchronize());
	nvtxRangePushA("train");
	gt_add<<<dim3(4, 2, 1), dim3(128, 1, 1)>>>(x, 1024);
	nvtxRangePop();
	CK(cudaDeviceSynchronize());
	CK(cudaFree(t));
	CK(cudaFree(x));
	return 0;
}

// p2p: device 0 to device 1 with peer access enabled: cudaMemcpyPeer of 1 MiB, then
// cudaMemcpyPeerAsync of 512 KiB on device 0's legacy stream. Exits 77 with fewer than two GPUs.
static int run_p2p(void)
{
	void *a, *b;
	int n = 0, can = 0;

	CK(cudaGetDeviceCount(&n));
	if (n < 2) {
		fprintf(stderr, "p2p: %d GPU here, two needed: skipping\n", n);
		return 77;
	}
	CK(cudaDeviceCanAccessPeer(&can, 0, 1));
	if (!can) {
		fprintf(stderr, "p2p: device 0 cannot access device 1\n");
		return 1;
	}
	CK(cudaSetDevice(1));
	CK(cudaMalloc(&b, 1 << 20));
	CK(cudaSetDevice(0));
	CK(cudaMalloc(&a, 1 << 20));
	CK(cudaDeviceEnablePeerAccess(1, 0));
	CK(cudaMemcpyPeer(b, 1, a, 0, 1 << 20));
	CK(cudaMemcpyPeerAsync(b, 1, a, 0, 512 << 10, 0));
	CK(cudaDeviceSynchronize());
	CK(cudaFree(a));
	CK(cudaSetDevice(1));
	CK(cudaFree(b));
	return 0;
}

// overload-gpu N: N x (gt_empty<<<1,1>>>, then an NVTX "ovl" push+pop), back to back. The
// NVTX records come from this thread, which never waits for ring space: with a tiny ring they
// are dropped and counted whichever way API records arrive.
static int run_overload(long n)
{
	long i;

	CK(cudaFree(0)); // InitializeInjection points NVTX at the library first
	for (i = 0; i < n; i++) {
		gt_empty<<<1, 1>>>();
		nvtxRangePushA("ovl");
		nvtxRangePop();
	}
	CK(cudaDeviceSynchronize());
	return 0;
}

// fork: 2 kernels here, then fork+exec of ourselves running "kernels" in the child.
static int run_fork(const char *self)
{
	pid_t pid;
	int status = 0;

	gt_empty<<<1, 1>>>();
	gt_empty<<<1, 1>>>();
	CK(cudaDeviceSynchronize());
	pid = fork();
	if (pid == 0) {
		execl(self, self, "kernels", (char *)NULL);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0) {
		fprintf(stderr, "child failed (status %d)\n", status);
		return 1;
	}
	return 0;
}

// cuptifirst: the program holds CUPTI before CUDA starts, like a second profiler would; the
// injection library must say so on one stderr line, record why, and let these 3 kernels run.
static void CUPTIAPI ignore_callback(void *u, CUpti_CallbackDomain d, CUpti_CallbackId c,
				     const void *p)
{
	(void)u;
	(void)d;
	(void)c;
	(void)p;
}

static int run_cuptifirst(void)
{
	// CUPTI refuses a subscriber when CUDA_INJECTION64_PATH was set at process start, so the
	// library comes in GT_CUPTIFIRST_LIB and is initialized the way the driver does it, after
	// the program took CUPTI for itself
	const char *lib = getenv("GT_CUPTIFIRST_LIB");
	CUpti_SubscriberHandle sub;
	CUptiResult r;
	void *h;
	int (*init)(void);

	if (!lib) {
		fprintf(stderr, "GT_CUPTIFIRST_LIB not set\n");
		return 1;
	}
	r = cuptiSubscribe(&sub, ignore_callback, NULL);
	if (r != CUPTI_SUCCESS) {
		fprintf(stderr, "cuptiSubscribe: %d\n", (int)r);
		return 1;
	}
	h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	init = h ? (int (*)(void))dlsym(h, "InitializeInjection") : NULL;
	if (!init) {
		fprintf(stderr, "cannot load %s: %s\n", lib, dlerror());
		return 1;
	}
	init();
	gt_empty<<<1, 1>>>();
	gt_empty<<<1, 1>>>();
	gt_empty<<<1, 1>>>();
	CK(cudaDeviceSynchronize());
	printf("cuptifirst done\n");
	return 0;
}

// crash-* K: run under `gputrace run --flush-interval 50`. K x gt_add<<<(4,2,1),(128,1,1)>>>,
// synchronized, then 300 ms of sleep (six flush periods: CUPTI's flush thread has handed every
// kernel record to the ring, which lives on in the CLI), then the process ends badly:
//   crash-abort    abort()                                   -> killed by SIGABRT
//   crash-segv     a store through a NULL pointer            -> killed by SIGSEGV
//   crash-kill     SIGKILL to itself                         -> killed by SIGKILL
//   crash-exit     K x gt_empty<<<1,1>>> launched, no sync, _exit(5)   -> exit status 5
//   crash-illegal  gt_poke through nullptr; the sync fails with 700     -> exit status 3
// Nothing of this process runs after the crash: no on_exit flush, no goodbye to the session.
static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	while (nanosleep(&ts, &ts) != 0)
		;
}

static int run_crash(const char *how, long k)
{
	float *x;
	long i;

	CK(cudaMalloc(&x, 1 << 20));
	for (i = 0; i < k; i++)
		gt_add<<<dim3(4, 2, 1), dim3(128, 1, 1)>>>(x, 1024);
	CK(cudaDeviceSynchronize());
	sleep_ms(300);
	fflush(NULL);
	// a core of a CUDA process can be gigabytes: none, whatever the core pattern says
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	if (!strcmp(how, "crash-abort")) {
		abort();
	} else if (!strcmp(how, "crash-segv")) {
		// a volatile pointer to volatile: the compiler can neither see that it is NULL
		// (and turn the store into a trap, SIGILL) nor drop the store
		volatile int *volatile np = NULL;

		*np = 1;
		raise(SIGSEGV); // not reached where page 0 is unmapped
	} else if (!strcmp(how, "crash-kill")) {
		kill(getpid(), SIGKILL);
		sleep_ms(1000); // SIGKILL is delivered before kill() returns; never here
	} else if (!strcmp(how, "crash-exit")) {
		for (i = 0; i < k; i++)
			gt_empty<<<1, 1>>>();
		_exit(5);
	} else if (!strcmp(how, "crash-illegal")) {
		cudaError_t e;

		gt_poke<<<1, 32>>>(nullptr);
		e = cudaDeviceSynchronize();
		if (e != cudaSuccess) {
			fprintf(stderr, "cudaDeviceSynchronize: %s (%d)\n", cudaGetErrorString(e),
				(int)e);
			exit(3);
		}
		fprintf(stderr, "the illegal-address kernel did not fail\n");
		return 1;
	}
	fprintf(stderr, "%s: still alive\n", how);
	return 1;
}

int main(int argc, char **argv)
{
	int n = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: %s kernels|memcpy|memset|alloc|nvtx|streams8|graph|apierror|"
				"launches N|fork|cuptifirst|sync|capture-profiler|capture-nvtx|p2p|overload-gpu N|crash-abort K|crash-segv K|"
				"crash-kill K|crash-exit K|crash-illegal K\n",
			argv[0]);
		return 2;
	}
	if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
		fprintf(stderr, "no CUDA device: skipping\n");
		return 77;
	}
	if (!strcmp(argv[1], "kernels"))
		return run_kernels();
	if (!strcmp(argv[1], "memcpy"))
		return run_memcpy();
	if (!strcmp(argv[1], "memset"))
		return run_memset();
	if (!strcmp(argv[1], "alloc"))
		return run_alloc();
	if (!strcmp(argv[1], "nvtx"))
		return run_nvtx();
	if (!strcmp(argv[1], "streams8"))
		return run_streams8();
	if (!strcmp(argv[1], "graph"))
		return run_graph();
	if (!strcmp(argv[1], "apierror"))
		return run_apierror();
	if (!strcmp(argv[1], "launches"))
		return run_launches(argc > 2 ? atol(argv[2]) : 1000000);
	if (!strcmp(argv[1], "fork"))
		return run_fork(argv[0]);
	if (!strcmp(argv[1], "cuptifirst"))
		return run_cuptifirst();
	if (!strcmp(argv[1], "overload-gpu"))
		return run_overload(argc > 2 ? atol(argv[2]) : 200000);
	if (!strcmp(argv[1], "sync"))
		return run_sync();
	if (!strcmp(argv[1], "capture-profiler"))
		return run_capture_profiler();
	if (!strcmp(argv[1], "capture-nvtx"))
		return run_capture_nvtx();
	if (!strcmp(argv[1], "p2p"))
		return run_p2p();
	if (!strcmp(argv[1], "crash-abort") || !strcmp(argv[1], "crash-segv") ||
	    !strcmp(argv[1], "crash-kill") || !strcmp(argv[1], "crash-exit") ||
	    !strcmp(argv[1], "crash-illegal"))
		return run_crash(argv[1], argc > 2 ? atol(argv[2]) : 50);
	fprintf(stderr, "unknown workload %s\n", argv[1]);
	return 2;
}
