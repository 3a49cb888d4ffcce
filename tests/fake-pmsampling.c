/* A fake of CUPTI's PM sampling and profiler host API, for driving the gpumetrics collector
 * without a GPU (tests/test-inject.c, case gpumetrics): the test's child loads it and names it
 * as the libcupti the collector resolves these functions from. Device 0 is a GH100. With a
 * counter availability image, cuptiProfilerHostConfigAddMetrics refuses any call that holds
 * an NVLink metric (nvlrx__, nvltx__) with CUPTI_ERROR_UNKNOWN, as an H100 without an active
 * NVLink did (driver 580.159.04); without one it takes them. GT_FAKE_PM_REFUSE=all refuses
 * every call with the image, =mixed refuses nvltx__ alone with CUPTI_ERROR_NOT_SUPPORTED.
 * One sample is decoded, after sampling stopped (none with GT_FAKE_PM_NO_SAMPLE set, as when
 * the program ends before the first sample). Each host API call, and the calls that
 * start and stop sampling, are written as a line to the file GT_FAKE_PM_LOG names. As the
 * libraries behind the host API do (libnvperf_host, loaded at its first use), the first host
 * object registers the library's teardown with atexit: it logs "host library torn down", and
 * every call after it is logged with "after teardown: " before it. As CUPTI does, the fake
 * keeps the pointers to the config image (cuptiPmSamplingSetConfig) and to the counter
 * availability image (cuptiProfilerHostInitialize) and reads them again when it decodes and
 * evaluates: freed or rewritten by then, the call fails and logs "config image changed" or
 * "availability image changed" (the real library read freed memory and crashed). Tests
 * only. */
#include <semaphore.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cupti_pmsampling.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_target.h>

#define FAKE_API __attribute__((visibility("default"))) CUptiResult CUPTIAPI

struct CUpti_Profiler_Host_Object {
	bool avail; /* made with a counter availability image */
	const uint8_t *avail_image; /* the caller's, kept as CUPTI keeps it, and its bytes then */
	uint8_t avail_copy[16];
};

struct CUpti_PmSampling_Object {
	bool stopped;
	bool given; /* the one sample was decoded */
};

static struct CUpti_PmSampling_Object sampler;
static sem_t begun; /* posted once the collector is inside its start of device 0 */
static bool begun_ready;
static int hosts;    /* host objects alive */
static bool enabled; /* cuptiPmSamplingEnable was called */
static bool torn_down; /* the host library's exit-time teardown ran */
static const uint8_t *config; /* SetConfig's image, the caller's memory, and a copy of it */
static uint8_t *config_copy;
static size_t config_bytes;

/* One line of the call log. */
static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	const char *path = getenv("GT_FAKE_PM_LOG");
	va_list ap;
	FILE *f;

	if (!path || !(f = fopen(path, "a")))
		return;
	if (torn_down)
		fputs("after teardown: ", f);
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fputc('\n', f);
	fclose(f);
}

/* Wait, at most `seconds`, until sampling started or every host object is gone before it
 * was enabled (the collector gave up, or builds its configuration anew): either way its
 * sampler thread is inside its start of the device, which it finishes before it sees the
 * process's exit. Returns 0 when that came. Called by the test through dlsym. */
__attribute__((visibility("default"))) int fake_pm_wait_begun(int seconds);
int fake_pm_wait_begun(int seconds)
{
	struct timespec until;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += seconds;
	return sem_timedwait(&begun, &until);
}

__attribute__((constructor)) static void fake_init(void)
{
	begun_ready = sem_init(&begun, 0, 0) == 0;
}

FAKE_API cuptiProfilerInitialize(CUpti_Profiler_Initialize_Params *p)
{
	(void)p;
	say("cuptiProfilerInitialize");
	return CUPTI_SUCCESS;
}

FAKE_API cuptiDeviceGetChipName(CUpti_Device_GetChipName_Params *p)
{
	if (p->deviceIndex != 0)
		return CUPTI_ERROR_INVALID_DEVICE;
	p->pChipName = "GH100";
	return CUPTI_SUCCESS;
}

FAKE_API cuptiPmSamplingGetCounterAvailability(CUpti_PmSampling_GetCounterAvailability_Params *p)
{
	if (p->pCounterAvailabilityImage)
		memset(p->pCounterAvailabilityImage, 0xa5, 16);
	p->counterAvailabilityImageSize = 16;
	return CUPTI_SUCCESS;
}

/* At exit, in the order exit handlers run: after those registered later, before earlier ones. */
static void host_teardown(void)
{
	say("host library torn down");
	torn_down = true;
}

FAKE_API cuptiProfilerHostInitialize(CUpti_Profiler_Host_Initialize_Params *p)
{
	struct CUpti_Profiler_Host_Object *h = calloc(1, sizeof(*h));
	static bool loaded;

	if (!h)
		return CUPTI_ERROR_OUT_OF_MEMORY;
	if (!loaded)
		atexit(host_teardown);
	loaded = true;
	h->avail = p->pCounterAvailabilityImage != NULL;
	if (h->avail) {
		h->avail_image = p->pCounterAvailabilityImage;
		memcpy(h->avail_copy, h->avail_image, sizeof(h->avail_copy));
	}
	p->pHostObject = h;
	hosts++;
	say("host init %s%s", p->pChipName, h->avail ? " with availability" : "");
	return CUPTI_SUCCESS;
}

FAKE_API cuptiProfilerHostDeinitialize(CUpti_Profiler_Host_Deinitialize_Params *p)
{
	free(p->pHostObject);
	say("host deinit");
	if (--hosts == 0 && !enabled && begun_ready)
		sem_post(&begun);
	return CUPTI_SUCCESS;
}

FAKE_API cuptiProfilerHostConfigAddMetrics(CUpti_Profiler_Host_ConfigAddMetrics_Params *p)
{
	bool nvlink = false;
	char names[1024] = "";
	size_t len = 0;

	const char *mode = getenv("GT_FAKE_PM_REFUSE");
	bool refuse;

	for (size_t i = 0; i < p->numMetrics && len < sizeof(names); i++) {
		const char *m = p->ppMetricNames[i];

		nvlink |= strncmp(m, "nvlrx__", 7) == 0 || strncmp(m, "nvltx__", 7) == 0;
		len += (size_t)snprintf(names + len, sizeof(names) - len, " %.*s",
		                        (int)strcspn(m, "."), m);
	}
	refuse = p->pHostObject->avail && (nvlink || (mode && strcmp(mode, "all") == 0));
	say("add%s: %s", names, refuse ? "refused" : "ok");
	if (!refuse)
		return CUPTI_SUCCESS;
	/* "mixed": the transmit metric alone is refused for another reason */
	if (mode && strcmp(mode, "mixed") == 0 && p->numMetrics == 1 &&
	    strncmp(p->ppMetricNames[0], "nvltx__", 7) == 0)
		return CUPTI_ERROR_NOT_SUPPORTED;
	return CUPTI_ERROR_UNKNOWN;
}

FAKE_API cuptiProfilerHostGetConfigImageSize(CUpti_Profiler_Host_GetConfigImageSize_Params *p)
{
	p->configImageSize = 64;
	return CUPTI_SUCCESS;
}

FAKE_API cuptiProfilerHostGetConfigImage(CUpti_Profiler_Host_GetConfigImage_Params *p)
{
	memset(p->pConfigImage, 0x5a, p->configImageSize);
	say("config image");
	return CUPTI_SUCCESS;
}

FAKE_API cuptiProfilerHostGetNumOfPasses(CUpti_Profiler_Host_GetNumOfPasses_Params *p)
{
	p->numOfPasses = 1;
	return CUPTI_SUCCESS;
}

FAKE_API cuptiPmSamplingEnable(CUpti_PmSampling_Enable_Params *p)
{
	p->pPmSamplingObject = &sampler;
	enabled = true;
	say("enable");
	return CUPTI_SUCCESS;
}

FAKE_API cuptiPmSamplingSetConfig(CUpti_PmSampling_SetConfig_Params *p)
{
	free(config_copy);
	config_copy = malloc(p->configSize);
	if (!config_copy)
		return CUPTI_ERROR_OUT_OF_MEMORY;
	memcpy(config_copy, p->pConfig, p->configSize);
	config = p->pConfig;
	config_bytes = p->configSize;
	return CUPTI_SUCCESS;
}

FAKE_API cuptiPmSamplingGetCounterDataSize(CUpti_PmSampling_GetCounterDataSize_Params *p)
{
	p->counterDataSize = 256;
	say("counter data of %zu metrics", p->numMetrics);
	return CUPTI_SUCCESS;
}

FAKE_API
cuptiPmSamplingCounterDataImageInitialize(CUpti_PmSampling_CounterDataImage_Initialize_Params *p)
{
	memset(p->pCounterData, 0, p->counterDataSize);
	return CUPTI_SUCCESS;
}

FAKE_API cuptiPmSamplingStart(CUpti_PmSampling_Start_Params *p)
{
	(void)p;
	say("start");
	if (begun_ready)
		sem_post(&begun);
	return CUPTI_SUCCESS;
}

FAKE_API cuptiPmSamplingStop(CUpti_PmSampling_Stop_Params *p)
{
	p->pPmSamplingObject->stopped = true;
	say("stop");
	return CUPTI_SUCCESS;
}

FAKE_API cuptiPmSamplingDisable(CUpti_PmSampling_Disable_Params *p)
{
	(void)p;
	say("disable");
	return CUPTI_SUCCESS;
}

FAKE_API cuptiPmSamplingDecodeData(CUpti_PmSampling_DecodeData_Params *p)
{
	if (!config || memcmp(config, config_copy, config_bytes) != 0) {
		say("config image changed");
		return CUPTI_ERROR_INVALID_PARAMETER;
	}
	p->decodeStopReason = CUPTI_PM_SAMPLING_DECODE_STOP_REASON_END_OF_RECORDS;
	p->overflow = 0;
	return CUPTI_SUCCESS;
}

/* One completed sample once sampling stopped, none before. */
FAKE_API cuptiPmSamplingGetCounterDataInfo(CUpti_PmSampling_GetCounterDataInfo_Params *p)
{
	bool give = sampler.stopped && !sampler.given && !getenv("GT_FAKE_PM_NO_SAMPLE");

	sampler.given |= give;
	p->numTotalSamples = give;
	p->numPopulatedSamples = give;
	p->numCompletedSamples = give;
	return CUPTI_SUCCESS;
}

FAKE_API
cuptiPmSamplingCounterDataGetSampleInfo(CUpti_PmSampling_CounterData_GetSampleInfo_Params *p)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	p->endTimestamp = (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec;
	p->startTimestamp = p->endTimestamp - 100000;
	return CUPTI_SUCCESS;
}

/* Metric i of the call: (i + 1) * 10.5 % for percentages, (i + 1) GB/s for the others. */
FAKE_API cuptiProfilerHostEvaluateToGpuValues(CUpti_Profiler_Host_EvaluateToGpuValues_Params *p)
{
	const struct CUpti_Profiler_Host_Object *h = p->pHostObject;

	if (h->avail && memcmp(h->avail_image, h->avail_copy, sizeof(h->avail_copy)) != 0) {
		say("availability image changed");
		return CUPTI_ERROR_INVALID_PARAMETER;
	}
	for (size_t i = 0; i < p->numMetrics; i++)
		p->pMetricValues[i] = strstr(p->ppMetricNames[i], ".pct_of_peak")
		                              ? (double)(i + 1) * 10.5
		                              : (double)(i + 1) * 1e9;
	say("evaluate %zu metrics", p->numMetrics);
	return CUPTI_SUCCESS;
}
