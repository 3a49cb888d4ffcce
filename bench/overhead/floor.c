/* The overhead benchmark's floor: the least a CUPTI tracer can do. An injection library that
 * enables only CONCURRENT_KERNEL, MEMCPY and MEMSET activity and discards every record.
 * With FLOOR_MARKERS=1 it also enables CUPTI's NVTX marker path (set NVTX_INJECTION64_PATH to
 * libcupti), to time CUPTI's own push/pop. Other switches add, one at a time, what gputrace
 * does on top of the floor, to tell where its added launch cost goes: FLOOR_CLOCK=1 registers
 * a timestamp callback (CLOCK_MONOTONIC, as gputrace's); FLOOR_API=launch enables runtime and
 * driver API activity records for the launch calls only (cudaLaunch*, cuLaunch*),
 * FLOOR_API=runtime for the runtime's (cudaLaunch*) alone, and FLOOR_API=default for every call
 * that gputrace's default API filter keeps (gt_envconf_api_is_launch: launches, copies, sets,
 * allocations, frees, synchronization, event waits, graph launches); FLOOR_API=all the RUNTIME
 * and DRIVER kinds whole (every call), the only API records that FLOOR_CAPTURE can switch.
 * FLOOR_MEMORY=1 adds the MEMORY2 and MEMORY_POOL activity kinds; FLOOR_FLUSH_MS=N a thread
 * that asks CUPTI for its buffers every N ms, as gputrace's flush thread does, and
 * FLOOR_POOL=1 hands completed buffers back to the next request instead of freeing them (as
 * gputrace's buffer pool does: without it, each buffer a flush returns half-used is followed
 * by a fresh one whose pages CUPTI faults in again). FLOOR_CAPTURE=1 records only between
 * cudaProfilerStart and cudaProfilerStop, as gputrace's capture range does (the overhead's
 * in-process comparison, bench/overhead/torch_bench.py --ab), all but the API records of
 * FLOOR_API=launch, runtime and default, which CUPTI cannot switch once a context exists.
 * FLOOR_VERBOSE=1 prints at exit how many buffers were completed and how many of them on the
 * main thread. Runs inside the benchmarked program. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cupti.h>

#include "envconf.h"

#define FLOOR_BUF_BYTES (8u << 20)

/* buffers completed, and how many of them on the program's main thread (where it launches) */
static _Atomic unsigned long completed, completed_main;

/* FLOOR_POOL=1: completed buffers wait here for the next request (a stack under a lock: a
 * request or a completion every flush period, far from contended) */
#define FLOOR_POOL_MAX 16u
static bool pool_on;
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static uint8_t *pool[FLOOR_POOL_MAX];
static unsigned pool_n;

static uint8_t *pool_get(void)
{
	uint8_t *b = NULL;

	if (!pool_on)
		return NULL;
	pthread_mutex_lock(&pool_lock); /* released below */
	if (pool_n)
		b = pool[--pool_n];
	pthread_mutex_unlock(&pool_lock);
	return b;
}

static void pool_put(uint8_t *b)
{
	if (pool_on) {
		pthread_mutex_lock(&pool_lock); /* released below, or on return */
		if (pool_n < FLOOR_POOL_MAX) {
			pool[pool_n++] = b;
			pthread_mutex_unlock(&pool_lock);
			return;
		}
		pthread_mutex_unlock(&pool_lock);
	}
	free(b);
}

static void CUPTIAPI floor_request(uint8_t **buffer, size_t *size, size_t *max_records)
{
	*buffer = pool_get();
	if (!*buffer)
		*buffer = aligned_alloc(8, FLOOR_BUF_BYTES);
	*size = *buffer ? FLOOR_BUF_BYTES : 0;
	*max_records = 0;
}

static void CUPTIAPI floor_complete(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
                                    size_t valid)
{
	CUpti_Activity *rec = NULL;
	volatile size_t n = 0;

	(void)ctx;
	(void)stream;
	(void)size;
	atomic_fetch_add(&completed, 1);
	if (syscall(SYS_gettid) == getpid())
		atomic_fetch_add(&completed_main, 1);
	/* walk the records as any consumer must, then drop them */
	while (cuptiActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS)
		n++;
	pool_put(buffer);
}

static uint64_t CUPTIAPI floor_clock(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* API activity records for the calls whose names start with prefix, in one domain; prefix
 * NULL: the calls gputrace's default filter keeps. */
static void floor_api(CUpti_CallbackDomain domain, uint32_t end, const char *prefix)
{
	uint32_t cbid;

	for (cbid = 1; cbid < end; cbid++) {
		const char *name = NULL;

		if (cuptiGetCallbackName(domain, cbid, &name) != CUPTI_SUCCESS || !name)
			continue;
		if (prefix ? strncmp(name, prefix, strlen(prefix)) != 0
		           : !gt_envconf_api_is_launch(name))
			continue;
		if (domain == CUPTI_CB_DOMAIN_RUNTIME_API)
			cuptiActivityEnableRuntimeApi(cbid, 1);
		else
			cuptiActivityEnableDriverApi(cbid, 1);
	}
}

/* API activity records, switched on at injection: CUPTI ignores a call's switch made after
 * the first context exists (bench/probe/api-toggle.cu), so they are never switched off, and
 * with FLOOR_CAPTURE they are written inside and outside the range alike. */
static void floor_api_on(const char *api)
{
	if (api && (strcmp(api, "launch") == 0 || strcmp(api, "runtime") == 0))
		floor_api(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_SIZE, "cudaLaunch");
	if (api && strcmp(api, "launch") == 0)
		floor_api(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_SIZE, "cuLaunch");
	if (api && strcmp(api, "default") == 0) {
		floor_api(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_SIZE, NULL);
		floor_api(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_SIZE, NULL);
	}
}

static bool markers_on, memory_on, api_all;

/* Everything the configuration records, on or off. */
static void floor_switch(bool on)
{
	CUptiResult (*kind)(CUpti_ActivityKind) = on ? cuptiActivityEnable : cuptiActivityDisable;

	kind(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
	kind(CUPTI_ACTIVITY_KIND_MEMCPY);
	kind(CUPTI_ACTIVITY_KIND_MEMSET);
	if (markers_on)
		kind(CUPTI_ACTIVITY_KIND_MARKER);
	if (api_all) {
		kind(CUPTI_ACTIVITY_KIND_RUNTIME);
		kind(CUPTI_ACTIVITY_KIND_DRIVER);
	}
	if (memory_on) {
		kind(CUPTI_ACTIVITY_KIND_MEMORY2);
		kind(CUPTI_ACTIVITY_KIND_MEMORY_POOL);
	}
	if (!on) /* what was recorded is handed over before the stop returns, as gputrace does */
		cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
}

/* FLOOR_CAPTURE=1: on after cudaProfilerStart (or cuProfilerStart) returns, off when
 * cudaProfilerStop (cuProfilerStop) is entered; the runtime's call makes the driver's. */
static _Atomic bool floor_on;

static void CUPTIAPI floor_callback(void *userdata, CUpti_CallbackDomain domain,
                                    CUpti_CallbackId cbid, const void *data)
{
	const CUpti_CallbackData *cb = data;
	bool start = domain == CUPTI_CB_DOMAIN_RUNTIME_API
	                     ? cbid == CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000
	                     : cbid == CUPTI_DRIVER_TRACE_CBID_cuProfilerStart;

	(void)userdata;
	if (start && cb->callbackSite == CUPTI_API_EXIT && !atomic_exchange(&floor_on, true))
		floor_switch(true);
	else if (!start && cb->callbackSite == CUPTI_API_ENTER && atomic_exchange(&floor_on, false))
		floor_switch(false);
}

static void floor_capture(void)
{
	CUpti_SubscriberHandle sub;

	if (cuptiSubscribe(&sub, floor_callback, NULL) != CUPTI_SUCCESS)
		return;
	cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_RUNTIME_API,
	                    CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000);
	cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_RUNTIME_API,
	                    CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000);
	cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_DRIVER_API,
	                    CUPTI_DRIVER_TRACE_CBID_cuProfilerStart);
	cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_DRIVER_API,
	                    CUPTI_DRIVER_TRACE_CBID_cuProfilerStop);
}

static unsigned flush_ms;

/* The flush thread: what gputrace's does, without the rest of its work. */
static void *floor_flusher(void *arg)
{
	struct timespec ts = {.tv_sec = flush_ms / 1000,
	                      .tv_nsec = (long)(flush_ms % 1000) * 1000000};

	(void)arg;
	for (;;) {
		nanosleep(&ts, NULL);
		cuptiActivityFlushAll(0);
	}
	return NULL;
}

static void floor_exit(void)
{
	cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	if (getenv("FLOOR_VERBOSE"))
		fprintf(stderr, "floor: %lu buffers completed, %lu of them on the main thread\n",
		        atomic_load(&completed), atomic_load(&completed_main));
}

__attribute__((visibility("default"))) int InitializeInjection(void);
int InitializeInjection(void)
{
	const char *markers = getenv("FLOOR_MARKERS");
	const char *clock = getenv("FLOOR_CLOCK");
	const char *api = getenv("FLOOR_API");
	const char *memory = getenv("FLOOR_MEMORY");
	const char *flush = getenv("FLOOR_FLUSH_MS");
	const char *capture = getenv("FLOOR_CAPTURE");
	const char *pool_env = getenv("FLOOR_POOL");

	if (clock && *clock == '1')
		cuptiActivityRegisterTimestampCallback(floor_clock);
	cuptiActivityRegisterCallbacks(floor_request, floor_complete);
	floor_api_on(api);
	markers_on = markers && *markers == '1';
	memory_on = memory && *memory == '1';
	api_all = api && strcmp(api, "all") == 0;
	pool_on = pool_env && *pool_env == '1';
	if (capture && *capture == '1')
		floor_capture();
	else
		floor_switch(true);
	if (flush && atoi(flush) > 0) {
		pthread_t th;

		flush_ms = (unsigned)atoi(flush);
		if (pthread_create(&th, NULL, floor_flusher, NULL) == 0)
			pthread_detach(th);
	}
	atexit(floor_exit);
	return 1;
}
