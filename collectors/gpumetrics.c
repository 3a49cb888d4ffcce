/* GPU metrics sampled over time with CUPTI's PM sampling API (docs/gpu-metrics.md): a thread of
 * ours starts sampling each GPU the process creates a context on (when GPUTRACE_GPU_METRICS
 * names it and no other traced process samples it), decodes the hardware buffer every
 * DECODE_MS and writes GPU_METRIC and GPU_SAMPLE records; what it cannot sample it says in a
 * NOTICE. Runs inside the traced application: only the context callback runs on an
 * application thread, and it only sets a bit. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#include <cupti.h>
#include <cupti_pmsampling.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_target.h>

#include "clock.h"
#include "collector.h"
#include "cupti-glue.h"
#include "cuptilib.h"
#include "emit.h"
#include "env.h"
#include "gpumetrics-sets.h"

#define DECODE_MS      20u         /* how often the hardware buffer is decoded */
#define HW_BUFFER      (64u << 20) /* bytes of CUPTI's hardware buffer per GPU */
#define MAX_DEVICES    64u
#define EXIT_BUDGET_NS (200000000ull) /* the last decode at exit: then what is left is lag */
#define JOIN_WAIT_S    2              /* the exit waits this long for the thread, then leaves it */

/* X(name, params): every PM sampling and profiler host function, all of them in libcupti
 * (which loads libnvperf_host itself); resolved here so that an older CUPTI without them
 * only leaves GPU metrics out. */
#define GM_FUNCS(X)                                                                                \
	X(cuptiProfilerInitialize, CUpti_Profiler_Initialize_Params)                               \
	X(cuptiDeviceGetChipName, CUpti_Device_GetChipName_Params)                                 \
	X(cuptiPmSamplingGetCounterAvailability, CUpti_PmSampling_GetCounterAvailability_Params)   \
	X(cuptiPmSamplingEnable, CUpti_PmSampling_Enable_Params)                                   \
	X(cuptiPmSamplingSetConfig, CUpti_PmSampling_SetConfig_Params)                             \
	X(cuptiPmSamplingGetCounterDataSize, CUpti_PmSampling_GetCounterDataSize_Params)           \
	X(cuptiPmSamplingCounterDataImageInitialize,                                               \
	  CUpti_PmSampling_CounterDataImage_Initialize_Params)                                     \
	X(cuptiPmSamplingStart, CUpti_PmSampling_Start_Params)                                     \
	X(cuptiPmSamplingStop, CUpti_PmSampling_Stop_Params)                                       \
	X(cuptiPmSamplingDisable, CUpti_PmSampling_Disable_Params)                                 \
	X(cuptiPmSamplingDecodeData, CUpti_PmSampling_DecodeData_Params)                           \
	X(cuptiPmSamplingGetCounterDataInfo, CUpti_PmSampling_GetCounterDataInfo_Params)           \
	X(cuptiPmSamplingCounterDataGetSampleInfo,                                                 \
	  CUpti_PmSampling_CounterData_GetSampleInfo_Params)                                       \
	X(cuptiProfilerHostInitialize, CUpti_Profiler_Host_Initialize_Params)                      \
	X(cuptiProfilerHostDeinitialize, CUpti_Profiler_Host_Deinitialize_Params)                  \
	X(cuptiProfilerHostConfigAddMetrics, CUpti_Profiler_Host_ConfigAddMetrics_Params)          \
	X(cuptiProfilerHostGetConfigImageSize, CUpti_Profiler_Host_GetConfigImageSize_Params)      \
	X(cuptiProfilerHostGetConfigImage, CUpti_Profiler_Host_GetConfigImage_Params)              \
	X(cuptiProfilerHostGetNumOfPasses, CUpti_Profiler_Host_GetNumOfPasses_Params)              \
	X(cuptiProfilerHostEvaluateToGpuValues, CUpti_Profiler_Host_EvaluateToGpuValues_Params)

static struct {
#define GM_MEMBER(name, params) CUptiResult(CUPTIAPI *name)(params *);
	GM_FUNCS(GM_MEMBER)
#undef GM_MEMBER
} fn;

/* One GPU's sampling; touched by the sampler thread only. */
struct gm_dev {
	bool running;
	bool tried; /* started, refused or left to another process: never again */
	CUpti_PmSampling_Object *obj;
	CUpti_Profiler_Host_Object *host;
	uint8_t *counter_data; /* owned */
	size_t counter_bytes;
	/* CUPTI keeps the pointers it was given to these and reads them while sampling runs:
	 * freed only once sampling is disabled and the host object gone (freed earlier, the
	 * H100's libnvperf_host read freed memory and the program died of SIGSEGV) */
	uint8_t *config; /* cuptiPmSamplingSetConfig's image */
	uint8_t *avail;  /* the counter availability image the host object was made with */
	const struct gt_gm_def *defs[GT_GPU_METRICS_MAX];
	const char *names[GT_GPU_METRICS_MAX]; /* CUPTI's, for EvaluateToGpuValues */
	size_t n;
	uint64_t last_end; /* end of the last sample written, CUPTI's clock */
	uint64_t samples;  /* written */
	uint64_t t_start;  /* gt_now_ns() when sampling began */
	int lock_fd;       /* holds the GPU for this process; -1 */
};

static struct {
	_Atomic uint64_t pending; /* devices with a new context, one bit each */
	_Atomic int stop;
	bool thread_on;
	bool profiler_on; /* cuptiProfilerInitialize succeeded */
	pthread_t thread;
	uint64_t interval_ns;
	uint32_t max_samples; /* per counter data image */
	struct gm_dev dev[MAX_DEVICES];
} gm;

/* Write a notice that device `dev` is not sampled, and why; waiting for ring space only on
 * the sampler thread (`wait`), never on the application's. */
static void gm_notice_how(uint32_t dev, unsigned reason, int cupti_result, const char *what,
                          bool wait)
{
	struct gt_rec_notice n;
	char msg[512];
	const char *err = NULL;

	if (cupti_result && gt_cupti.cuptiGetResultString)
		gt_cupti.cuptiGetResultString((CUptiResult)cupti_result, &err);
	gt_gm_notice_text(msg, sizeof(msg), dev, reason, what, err);
	gt_notice_fill(&n, reason == GT_GM_OTHER_PROCESS ? GT_NOTICE_INFO : GT_NOTICE_WARNING,
	               GT_NOTICE_GPU_METRICS, (int)reason, msg);
	if (wait)
		gt_emit_wait(&n.hdr);
	else
		gt_emit_nowait(&n.hdr);
	gt_debug("%s\n", msg);
}

/* The sampler thread's notices. */
static void gm_notice(uint32_t dev, unsigned reason, int cupti_result, const char *what)
{
	gm_notice_how(dev, reason, cupti_result, what, true);
}

/* Only one traced process samples a GPU: the first to take its lock file, named by the
 * session (or, standalone, by the user) and the GPU's uuid. flock() is let go when the
 * process ends, however it ends. Returns the descriptor, or -1 (another process has it, or
 * no lock could be made: then this one samples). */
static int gm_lock(uint32_t dev, bool *other)
{
	const char *session = getenv(GT_ENV_SESSION);
	uint64_t h = 1469598103934665603ull; /* FNV-1a of the session's socket path */
	char path[256], uuid_hex[33] = "";
	CUdevice cu;
	CUuuid uuid;
	int fd;

	*other = false;
	for (const char *p = session ? session : ""; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ull;
	if (gt_cuda.device_get && gt_cuda.get_uuid && gt_cuda.device_get(&cu, (int)dev) == 0 &&
	    gt_cuda.get_uuid(&uuid, cu) == 0)
		for (int i = 0; i < 16; i++)
			snprintf(uuid_hex + 2 * i, 3, "%02x", (unsigned char)uuid.bytes[i]);
	else
		snprintf(uuid_hex, sizeof(uuid_hex), "device%u", dev);
	snprintf(path, sizeof(path), "/tmp/gputrace-gm-%u-%016llx-%s.lock", (unsigned)getuid(),
	         (unsigned long long)h, uuid_hex);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return -1;
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		*other = errno == EWOULDBLOCK;
		close(fd);
		return -1;
	}
	return fd;
}

static void gm_flush(enum gt_flush_why why);

/* The libraries behind PM sampling (libnvperf_host, loaded at the first host object) register
 * their own teardown with atexit as they load and as they go, after the injection library's
 * exit flush was registered, so exit() runs theirs first: sampling stopped at that flush
 * would call into torn-down libraries, and the sampler thread would go on starting or
 * decoding while they are torn down. So this handler is registered after the first host
 * object and again once a GPU is sampled; exit() runs it before what those registered
 * (handlers run last registered first): the sampler thread stops each GPU and is joined. */
static pthread_once_t gm_exit_once_host = PTHREAD_ONCE_INIT;
static pthread_once_t gm_exit_once_started = PTHREAD_ONCE_INIT;

static void gm_exit(void)
{
	gm_flush(GT_FLUSH_LAST);
}

static void gm_exit_register(void)
{
	if (atexit(gm_exit) != 0)
		gt_debug("gpumetrics: no exit handler; sampling stops at the final flush");
}

/* Let a host object go; NULL is none. */
static void gm_host_free(CUpti_Profiler_Host_Object *host)
{
	CUpti_Profiler_Host_Deinitialize_Params hd = {
	        CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE};

	if (!host)
		return;
	hd.pHostObject = host;
	fn.cuptiProfilerHostDeinitialize(&hd);
}

/* A host object for chip's PM sampling, with the counter availability image avail (NULL:
 * none), and names[0..n) added to its configuration. *host gets the object whenever it was
 * made, also when adding failed (the caller frees it). Returns CUPTI's first failure. */
static CUptiResult gm_host_new(const char *chip, uint8_t *avail, const char **names, size_t n,
                               CUpti_Profiler_Host_Object **host)
{
	CUpti_Profiler_Host_Initialize_Params hi = {
	        CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE};
	CUpti_Profiler_Host_ConfigAddMetrics_Params am = {
	        CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE};
	CUptiResult r;

	hi.profilerType = CUPTI_PROFILER_TYPE_PM_SAMPLING;
	hi.pChipName = chip;
	hi.pCounterAvailabilityImage = avail;
	if ((r = fn.cuptiProfilerHostInitialize(&hi)) != CUPTI_SUCCESS)
		return r;
	pthread_once(&gm_exit_once_host, gm_exit_register);
	*host = hi.pHostObject;
	am.pHostObject = hi.pHostObject;
	am.ppMetricNames = names;
	am.numMetrics = n;
	return fn.cuptiProfilerHostConfigAddMetrics(&am);
}

/* Metrics the device's counter availability refused, left out of its set (gm_drop_refused). */
struct gm_refused {
	size_t n;
	int result;      /* CUPTI's result for each of them; 0 when theirs differ */
	char names[400]; /* their names, ", " between; each with its result when those differ */
};

/* The set was refused with the device's counter availability image (a GPU without an active
 * NVLink refuses the NVLink metrics, and one refused metric fails the whole call): which
 * metrics does it refuse, each in a host object of its own? Those leave d's set, the others
 * keep their order (so the metrics' index stays dense), and *out names them. Returns how
 * many were left out; 0 when none is refused alone, or every one is (the set is unchanged). */
static size_t gm_drop_refused(struct gm_dev *d, const char *chip, uint8_t *avail,
                              struct gm_refused *out)
{
	CUptiResult res[GT_GPU_METRICS_MAX];
	size_t kept = 0, len = 0;
	bool same = true;

	out->n = 0;
	for (size_t i = 0; i < d->n; i++) {
		CUpti_Profiler_Host_Object *h = NULL;

		res[i] = gm_host_new(chip, avail, &d->names[i], 1, &h);
		gm_host_free(h);
		if (res[i] == CUPTI_SUCCESS)
			continue;
		if (out->n && res[i] != (CUptiResult)out->result)
			same = false;
		if (!out->n)
			out->result = (int)res[i];
		out->n++;
	}
	if (out->n == d->n)
		out->n = 0;
	if (!out->n)
		return 0;
	out->names[0] = '\0';
	for (size_t i = 0; i < d->n; i++) {
		const char *err = NULL;
		int w;

		if (res[i] == CUPTI_SUCCESS) {
			d->defs[kept] = d->defs[i];
			d->names[kept++] = d->names[i];
			continue;
		}
		if (!same && gt_cupti.cuptiGetResultString)
			gt_cupti.cuptiGetResultString(res[i], &err);
		if (!same && !err)
			err = "?";
		if (len < sizeof(out->names)) {
			w = snprintf(out->names + len, sizeof(out->names) - len, "%s%s%s%s%s",
			             len ? ", " : "", d->defs[i]->name, err ? " (" : "",
			             err ? err : "", err ? ")" : "");
			len += w > 0 ? (size_t)w : 0;
		}
	}
	d->n = kept;
	if (!same)
		out->result = 0;
	return out->n;
}

/* The host object with `d`'s metrics for its chip, and its config image (malloc'd); the
 * metrics the device refuses left out of d's set, named in *refused. */
static CUptiResult gm_config(struct gm_dev *d, const char *chip, uint8_t *avail, uint8_t **image,
                             size_t *bytes, struct gm_refused *refused)
{
	CUpti_Profiler_Host_GetConfigImageSize_Params is = {
	        CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE};
	CUpti_Profiler_Host_GetConfigImage_Params gi = {
	        CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE};
	CUptiResult r;

	refused->n = 0;
	r = gm_host_new(chip, avail, d->names, d->n, &d->host);
	if (r != CUPTI_SUCCESS && d->host && avail && gm_drop_refused(d, chip, avail, refused)) {
		gm_host_free(d->host);
		d->host = NULL;
		r = gm_host_new(chip, avail, d->names, d->n, &d->host);
	}
	if (r != CUPTI_SUCCESS)
		return r;
	is.pHostObject = d->host;
	if ((r = fn.cuptiProfilerHostGetConfigImageSize(&is)) != CUPTI_SUCCESS)
		return r;
	*image = malloc(is.configImageSize);
	if (!*image)
		return CUPTI_ERROR_OUT_OF_MEMORY;
	gi.pHostObject = d->host;
	gi.configImageSize = is.configImageSize;
	gi.pConfigImage = *image;
	*bytes = is.configImageSize;
	return fn.cuptiProfilerHostGetConfigImage(&gi);
}

static unsigned gm_reason(CUptiResult r)
{
	return gt_gm_reason_of((int)r);
}

/* Start sampling device dev; on failure a notice says why and the others go on. */
static void gm_start(uint32_t dev)
{
	struct gm_dev *d = &gm.dev[dev];
	CUpti_Device_GetChipName_Params cn = {CUpti_Device_GetChipName_Params_STRUCT_SIZE};
	CUpti_PmSampling_GetCounterAvailability_Params ca = {
	        CUpti_PmSampling_GetCounterAvailability_Params_STRUCT_SIZE};
	CUpti_PmSampling_Enable_Params en = {CUpti_PmSampling_Enable_Params_STRUCT_SIZE};
	CUpti_PmSampling_SetConfig_Params sc = {CUpti_PmSampling_SetConfig_Params_STRUCT_SIZE};
	CUpti_PmSampling_GetCounterDataSize_Params ds = {
	        CUpti_PmSampling_GetCounterDataSize_Params_STRUCT_SIZE};
	CUpti_PmSampling_CounterDataImage_Initialize_Params ci = {
	        CUpti_PmSampling_CounterDataImage_Initialize_Params_STRUCT_SIZE};
	CUpti_PmSampling_Start_Params st = {CUpti_PmSampling_Start_Params_STRUCT_SIZE};
	uint8_t *avail = NULL, *image = NULL;
	size_t image_bytes = 0;
	struct gm_refused refused;
	const char *what = NULL;
	bool other = false;
	CUptiResult r;

	d->tried = true;
	d->lock_fd = gm_lock(dev, &other);
	if (other) {
		gm_notice(dev, GT_GM_OTHER_PROCESS, 0, NULL);
		return;
	}
	cn.deviceIndex = dev;
	if ((r = fn.cuptiDeviceGetChipName(&cn)) != CUPTI_SUCCESS) {
		what = "cuptiDeviceGetChipName";
		goto fail;
	}
	d->n = gt_gm_set_for_chip(cn.pChipName, gt_inj.cfg.gpu_metrics_set, d->defs,
	                          GT_GPU_METRICS_MAX);
	if (!d->n) {
		char chip[96];

		snprintf(chip, sizeof(chip), "no metric set for chip %s", cn.pChipName);
		gm_notice(dev, GT_GM_UNSUPPORTED, 0, chip);
		goto out_unlock;
	}
	for (size_t i = 0; i < d->n; i++)
		d->names[i] = d->defs[i]->metric;
	ca.deviceIndex = dev;
	if ((r = fn.cuptiPmSamplingGetCounterAvailability(&ca)) != CUPTI_SUCCESS) {
		what = "cuptiPmSamplingGetCounterAvailability";
		goto fail;
	}
	avail = malloc(ca.counterAvailabilityImageSize);
	if (!avail) {
		r = CUPTI_ERROR_OUT_OF_MEMORY;
		goto fail;
	}
	ca.pCounterAvailabilityImage = avail;
	if ((r = fn.cuptiPmSamplingGetCounterAvailability(&ca)) != CUPTI_SUCCESS) {
		what = "cuptiPmSamplingGetCounterAvailability";
		goto fail;
	}
	if ((r = gm_config(d, cn.pChipName, avail, &image, &image_bytes, &refused)) !=
	    CUPTI_SUCCESS) {
		what = "building the configuration (profiler host API)";
		goto fail;
	}
	en.deviceIndex = dev;
	if ((r = fn.cuptiPmSamplingEnable(&en)) != CUPTI_SUCCESS) {
		what = "cuptiPmSamplingEnable";
		goto fail;
	}
	d->obj = en.pPmSamplingObject;
	sc.pPmSamplingObject = d->obj;
	sc.configSize = image_bytes;
	sc.pConfig = image;
	sc.hardwareBufferSize = HW_BUFFER;
	sc.samplingInterval = gm.interval_ns;
	sc.triggerMode = CUPTI_PM_SAMPLING_TRIGGER_MODE_GPU_TIME_INTERVAL;
	sc.hwBufferAppendMode = CUPTI_PM_SAMPLING_HARDWARE_BUFFER_APPEND_MODE_KEEP_OLDEST;
	if ((r = fn.cuptiPmSamplingSetConfig(&sc)) != CUPTI_SUCCESS) {
		what = "cuptiPmSamplingSetConfig";
		goto fail;
	}
	ds.pPmSamplingObject = d->obj;
	ds.pMetricNames = d->names;
	ds.numMetrics = d->n;
	ds.maxSamples = gm.max_samples;
	if ((r = fn.cuptiPmSamplingGetCounterDataSize(&ds)) != CUPTI_SUCCESS) {
		what = "cuptiPmSamplingGetCounterDataSize";
		goto fail;
	}
	d->counter_bytes = ds.counterDataSize;
	d->counter_data = malloc(d->counter_bytes);
	if (!d->counter_data) {
		r = CUPTI_ERROR_OUT_OF_MEMORY;
		goto fail;
	}
	ci.pPmSamplingObject = d->obj;
	ci.counterDataSize = d->counter_bytes;
	ci.pCounterData = d->counter_data;
	if ((r = fn.cuptiPmSamplingCounterDataImageInitialize(&ci)) != CUPTI_SUCCESS) {
		what = "cuptiPmSamplingCounterDataImageInitialize";
		goto fail;
	}
	st.pPmSamplingObject = d->obj;
	if ((r = fn.cuptiPmSamplingStart(&st)) != CUPTI_SUCCESS) {
		what = "cuptiPmSamplingStart";
		goto fail;
	}
	/* the metrics, before the first sample: their reader needs them */
	for (size_t i = 0; i < d->n; i++) {
		struct gt_rec_gpu_metric m = {0};

		gt_hdr(&m.hdr, GT_REC_GPU_METRIC, sizeof(m));
		m.interval_ns = gm.interval_ns;
		m.device_id = dev;
		m.index = (uint32_t)i;
		m.name_id = gt_intern(d->defs[i]->name);
		m.metric_id = gt_intern(d->defs[i]->metric);
		m.unit_id = gt_intern(d->defs[i]->unit);
		m.scale = d->defs[i]->scale;
		gt_emit_wait(&m.hdr);
	}
	if (refused.n)
		gm_notice(dev, GT_GM_REFUSED, refused.result, refused.names);
	d->running = true;
	d->t_start = gt_now_ns();
	d->config = image;
	d->avail = avail;
	pthread_once(&gm_exit_once_started, gm_exit_register);
	return;
fail:
	gm_notice(dev, r == CUPTI_ERROR_OUT_OF_MEMORY ? GT_GM_ERROR : gm_reason(r), (int)r, what);
	if (d->obj) {
		CUpti_PmSampling_Disable_Params dp = {CUpti_PmSampling_Disable_Params_STRUCT_SIZE};

		dp.pPmSamplingObject = d->obj;
		fn.cuptiPmSamplingDisable(&dp);
		d->obj = NULL;
	}
	free(d->counter_data);
	d->counter_data = NULL;
out_unlock:
	gm_host_free(d->host);
	d->host = NULL;
	if (d->lock_fd >= 0)
		close(d->lock_fd);
	d->lock_fd = -1;
	free(avail);
	free(image);
}

/* Decode what the hardware buffer holds into records; until deadline_ns (0: no limit), then
 * the rest counts as decode lag. */
static void gm_decode(uint32_t dev, uint64_t deadline_ns)
{
	struct gm_dev *d = &gm.dev[dev];

	for (unsigned round = 0; round < 64; round++) {
		CUpti_PmSampling_DecodeData_Params dd = {
		        CUpti_PmSampling_DecodeData_Params_STRUCT_SIZE};
		CUpti_PmSampling_GetCounterDataInfo_Params gi = {
		        CUpti_PmSampling_GetCounterDataInfo_Params_STRUCT_SIZE};
		CUpti_PmSampling_CounterDataImage_Initialize_Params ci = {
		        CUpti_PmSampling_CounterDataImage_Initialize_Params_STRUCT_SIZE};

		dd.pPmSamplingObject = d->obj;
		dd.pCounterDataImage = d->counter_data;
		dd.counterDataImageSize = d->counter_bytes;
		if (fn.cuptiPmSamplingDecodeData(&dd) != CUPTI_SUCCESS)
			return;
		gi.pCounterDataImage = d->counter_data;
		gi.counterDataImageSize = d->counter_bytes;
		if (fn.cuptiPmSamplingGetCounterDataInfo(&gi) != CUPTI_SUCCESS)
			return;
		for (size_t i = 0; i < gi.numCompletedSamples; i++) {
			CUpti_PmSampling_CounterData_GetSampleInfo_Params si = {
			        CUpti_PmSampling_CounterData_GetSampleInfo_Params_STRUCT_SIZE};
			CUpti_Profiler_Host_EvaluateToGpuValues_Params ev = {
			        CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE};
			struct gt_rec_gpu_sample s = {0};
			double v[GT_GPU_METRICS_MAX];

			if (deadline_ns && gt_now_ns() > deadline_ns) {
				gt_emit_loss_wait(GT_LOSS_PM_LAG, gi.numCompletedSamples - i,
				                  GT_REC_GPU_SAMPLE);
				return;
			}
			si.pPmSamplingObject = d->obj;
			si.pCounterDataImage = d->counter_data;
			si.counterDataImageSize = d->counter_bytes;
			si.sampleIndex = i;
			ev.pHostObject = d->host;
			ev.pCounterDataImage = d->counter_data;
			ev.counterDataImageSize = d->counter_bytes;
			ev.rangeIndex = i;
			ev.ppMetricNames = d->names;
			ev.numMetrics = d->n;
			ev.pMetricValues = v;
			if (fn.cuptiPmSamplingCounterDataGetSampleInfo(&si) != CUPTI_SUCCESS ||
			    fn.cuptiProfilerHostEvaluateToGpuValues(&ev) != CUPTI_SUCCESS) {
				gt_emit_loss_wait(GT_LOSS_PM_LAG, 1, GT_REC_GPU_SAMPLE);
				continue;
			}
			/* a gap of more than one interval after an overflow: those samples */
			if (dd.overflow && d->last_end && si.startTimestamp > d->last_end &&
			    si.startTimestamp - d->last_end > gm.interval_ns) {
				gt_emit_loss_wait(GT_LOSS_PM_OVERFLOW,
				                  (si.startTimestamp - d->last_end) /
				                          gm.interval_ns,
				                  GT_REC_GPU_SAMPLE);
				dd.overflow = 0;
			}
			gt_hdr(&s.hdr, GT_REC_GPU_SAMPLE, sizeof(s));
			s.ts_ns = si.endTimestamp;
			s.device_id = dev;
			s.count = (uint32_t)d->n;
			for (size_t k = 0; k < d->n; k++) {
				double x = v[k] * d->defs[k]->scale;

				s.values[k] = isfinite(x) && x > 0 ? (uint64_t)llround(x) : 0;
			}
			d->last_end = si.endTimestamp;
			gt_emit_wait(&s.hdr);
			d->samples++;
		}
		if (dd.overflow) /* overflowed with no gap to measure: at least one lost */
			gt_emit_loss_wait(GT_LOSS_PM_OVERFLOW, 1, GT_REC_GPU_SAMPLE);
		ci.pPmSamplingObject = d->obj;
		ci.counterDataSize = d->counter_bytes;
		ci.pCounterData = d->counter_data;
		if (fn.cuptiPmSamplingCounterDataImageInitialize(&ci) != CUPTI_SUCCESS)
			return;
		if (dd.decodeStopReason != CUPTI_PM_SAMPLING_DECODE_STOP_REASON_COUNTER_DATA_FULL)
			return;
	}
}

static void gm_stop(uint32_t dev)
{
	struct gm_dev *d = &gm.dev[dev];
	CUpti_PmSampling_Stop_Params sp = {CUpti_PmSampling_Stop_Params_STRUCT_SIZE};
	CUpti_PmSampling_Disable_Params dp = {CUpti_PmSampling_Disable_Params_STRUCT_SIZE};
	CUpti_Profiler_Host_Deinitialize_Params hd = {
	        CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE};

	sp.pPmSamplingObject = d->obj;
	fn.cuptiPmSamplingStop(&sp);
	gm_decode(dev, gt_now_ns() + EXIT_BUDGET_NS);
	if (!d->samples) { /* a run shorter than the sampler's first sample: said, not silent */
		char what[64];

		snprintf(what, sizeof(what), "sampled for %.1f ms",
		         (double)(gt_now_ns() - d->t_start) / 1e6);
		gm_notice(dev, GT_GM_NO_SAMPLE, 0, what);
	}
	dp.pPmSamplingObject = d->obj;
	fn.cuptiPmSamplingDisable(&dp);
	hd.pHostObject = d->host;
	fn.cuptiProfilerHostDeinitialize(&hd);
	free(d->counter_data);
	d->counter_data = NULL;
	free(d->config);
	d->config = NULL;
	free(d->avail);
	d->avail = NULL;
	if (d->lock_fd >= 0)
		close(d->lock_fd);
	d->lock_fd = -1;
	d->running = false;
}

static void *gm_thread(void *arg)
{
	const struct timespec period = {0, DECODE_MS * 1000000L};

	(void)arg;
	while (!atomic_load_explicit(&gm.stop, memory_order_acquire)) {
		/* pairs with the fetch_or in gm_callback: the bits of new contexts */
		uint64_t pending = atomic_exchange_explicit(&gm.pending, 0, memory_order_acquire);

		for (uint32_t dev = 0; dev < MAX_DEVICES; dev++) {
			if ((pending >> dev) & 1 && !gm.dev[dev].tried &&
			    ((gt_inj.cfg.gpu_metrics_devices >> dev) & 1)) {
				if (!gm.profiler_on) {
					CUpti_Profiler_Initialize_Params pi = {
					        CUpti_Profiler_Initialize_Params_STRUCT_SIZE};
					CUptiResult r = fn.cuptiProfilerInitialize(&pi);

					if (r != CUPTI_SUCCESS) {
						gm.dev[dev].tried = true;
						gm_notice(dev, gm_reason(r), (int)r,
						          "cuptiProfilerInitialize");
						continue;
					}
					gm.profiler_on = true;
				}
				gm_start(dev);
			}
			if (gm.dev[dev].running &&
			    atomic_load_explicit(&gt_inj.active, memory_order_relaxed))
				gm_decode(dev, 0);
		}
		nanosleep(&period, NULL);
	}
	for (uint32_t dev = 0; dev < MAX_DEVICES; dev++) {
		uint64_t pending = atomic_load_explicit(&gm.pending, memory_order_acquire);

		if (gm.dev[dev].running)
			gm_stop(dev);
		else if ((pending >> dev) & 1 && !gm.dev[dev].tried &&
		         ((gt_inj.cfg.gpu_metrics_devices >> dev) & 1))
			gm_notice(dev, GT_GM_NO_SAMPLE, 0, "sampling had not begun");
	}
	return NULL;
}

/* A context was created: its device is sampled from the sampler thread. Application
 * thread, guard held: one atomic or, nothing else. */
static void gm_callback(unsigned domain, unsigned cbid, const void *data)
{
	const CUpti_ResourceData *rd = data;
	uint32_t dev = 0;

	(void)domain;
	if (cbid != CUPTI_CBID_RESOURCE_CONTEXT_CREATED || !rd->context ||
	    gt_cupti.cuptiGetDeviceId(rd->context, &dev) != CUPTI_SUCCESS || dev >= MAX_DEVICES)
		return;
	/* pairs with the exchange in gm_thread */
	atomic_fetch_or_explicit(&gm.pending, 1ull << dev, memory_order_release);
}

static int gm_enable(const struct gt_envconf *cfg)
{
	void *h;
	const char *missing = NULL;
	int r;

	if (!cfg->gpu_metrics)
		return -1; /* not asked for */
	h = dlopen(gt_cupti_path, RTLD_NOW | RTLD_NOLOAD);
	if (h) {
#define GM_LOAD(name, params)                                                                      \
	if (!(*(void **)&fn.name = dlsym(h, #name)) && !missing)                                   \
		missing = #name;
		GM_FUNCS(GM_LOAD)
#undef GM_LOAD
		dlclose(h);
	}
	if (!h || missing) {
		char what[160];

		snprintf(what, sizeof(what), "%.100s has no %s", gt_cupti_path,
		         missing ? missing : "PM sampling");
		gm_notice_how(0, GT_GM_NO_LIBRARY, 0, what, false);
		return -1;
	}
	gm.interval_ns = 1000000000ull / (cfg->gpu_metrics_hz ? cfg->gpu_metrics_hz : 1);
	/* four decode periods of samples per image, at least 64 */
	gm.max_samples = (uint32_t)(cfg->gpu_metrics_hz * 4ull * DECODE_MS / 1000u);
	if (gm.max_samples < 64)
		gm.max_samples = 64;
	for (uint32_t i = 0; i < MAX_DEVICES; i++)
		gm.dev[i].lock_fd = -1;
	r = pthread_create(&gm.thread, NULL, gm_thread, NULL);
	if (r != 0) {
		gm_notice_how(0, GT_GM_ERROR, 0, "no thread for the sampler", false);
		return -1;
	}
	gm.thread_on = true;
	return gt_cupti_enable_domain(CUPTI_CB_DOMAIN_RESOURCE, true);
}

/* At exit or detach: stop the sampler, which writes what the hardware still holds (within
 * EXIT_BUDGET_NS per GPU); wait for it at most JOIN_WAIT_S, never longer. */
static void gm_flush(enum gt_flush_why why)
{
	struct timespec until;

	if (why != GT_FLUSH_LAST || !gm.thread_on)
		return;
	/* pairs with the acquire load in gm_thread's loop */
	atomic_store_explicit(&gm.stop, 1, memory_order_release);
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += JOIN_WAIT_S;
	if (pthread_timedjoin_np(gm.thread, NULL, &until) != 0)
		pthread_detach(gm.thread); /* stuck in CUPTI: left behind, never waited for */
	gm.thread_on = false;
}

/* In a fork()ed child the sampler thread does not exist. */
static void gm_fork_child(void)
{
	gm.thread_on = false;
	atomic_store_explicit(&gm.pending, 0, memory_order_relaxed);
	for (uint32_t i = 0; i < MAX_DEVICES; i++) {
		gm.dev[i].running = false;
		gm.dev[i].lock_fd = -1; /* the parent's locks: inherited, not ours to release */
	}
}

const struct gt_collector gt_collector_gpumetrics = {
        .name = "gpumetrics",
        .trace_bit = 0, /* GPUTRACE_GPU_METRICS turns it on (gm_enable) */
        .enable = gm_enable,
        .callback_domains = 1u << CUPTI_CB_DOMAIN_RESOURCE,
        .callback = gm_callback,
        .flush = gm_flush,
        .fork_child = gm_fork_child,
};
