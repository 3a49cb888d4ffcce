/* gpumetrics-host: the GPU metric sets of collectors/gpumetrics-sets.c checked against CUPTI's
 * profiler host API, which evaluates a configuration for a chip by name without a GPU: every
 * metric of every set is known to the chip, has the unit the set gives it, and each set fits
 * one pass (PM sampling takes no more). libcupti is dlopen()ed from argv[1]; exit 77 (skipped)
 * when it or libnvperf_host beside it is absent. First, without CUPTI: the CUPTI results
 * behind each reason a GPU is not sampled, and each reason's notice text exactly. Runs as a
 * meson test (suite gpumetrics). */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cupti_profiler_host.h>
#include <cupti_result.h>

#include "gpumetrics-sets.h"
#include "gputrace/record.h"

static int failures;

#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			printf("FAIL: " __VA_ARGS__);                                              \
			putchar('\n');                                                             \
			failures++;                                                                \
		}                                                                                  \
	} while (0)

static struct {
	CUptiResult (*init)(CUpti_Profiler_Host_Initialize_Params *);
	CUptiResult (*deinit)(CUpti_Profiler_Host_Deinitialize_Params *);
	CUptiResult (*props)(CUpti_Profiler_Host_GetMetricProperties_Params *);
	CUptiResult (*add)(CUpti_Profiler_Host_ConfigAddMetrics_Params *);
	CUptiResult (*size)(CUpti_Profiler_Host_GetConfigImageSize_Params *);
	CUptiResult (*image)(CUpti_Profiler_Host_GetConfigImage_Params *);
	CUptiResult (*passes)(CUpti_Profiler_Host_GetNumOfPasses_Params *);
} h;

/* The chips the sets are for, with how many metrics each set of theirs has. */
static const struct {
	const char *chip, *arch;
	size_t n_default, n_sm;
} chips[] = {
        {"GH100", "Hopper", 10, 4}, {"GA100", "Ampere", 10, 4},   {"GA102", "Ampere", 10, 4},
        {"AD102", "Ada", 8, 4},     {"GB100", "Blackwell", 8, 4}, {"GB202", "Blackwell", 8, 4},
};

static void check_set(const char *chip, unsigned set, size_t want)
{
	CUpti_Profiler_Host_Initialize_Params ip = {
	        CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE};
	CUpti_Profiler_Host_ConfigAddMetrics_Params ap = {
	        CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE};
	CUpti_Profiler_Host_GetConfigImageSize_Params sp = {
	        CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE};
	CUpti_Profiler_Host_GetConfigImage_Params gp = {
	        CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE};
	CUpti_Profiler_Host_GetNumOfPasses_Params np = {
	        CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE};
	CUpti_Profiler_Host_Deinitialize_Params dp = {
	        CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE};
	const struct gt_gm_def *defs[GT_GPU_METRICS_MAX];
	const char *names[GT_GPU_METRICS_MAX];
	size_t n = gt_gm_set_for_chip(chip, set, defs, GT_GPU_METRICS_MAX);
	uint8_t *img;

	CHECK(n == want, "%s set %u: %zu metrics, expected %zu", chip, set, n, want);
	ip.profilerType = CUPTI_PROFILER_TYPE_PM_SAMPLING;
	ip.pChipName = chip;
	if (h.init(&ip) != CUPTI_SUCCESS) {
		CHECK(0, "%s: the host API does not know the chip", chip);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		CUpti_Profiler_Host_GetMetricProperties_Params pp = {
		        CUpti_Profiler_Host_GetMetricProperties_Params_STRUCT_SIZE};
		const char *unit = strcmp(defs[i]->unit, "%") == 0 ? "percent" : "byte/second";

		names[i] = defs[i]->metric;
		pp.pHostObject = ip.pHostObject;
		pp.pMetricName = defs[i]->metric;
		if (h.props(&pp) != CUPTI_SUCCESS) {
			CHECK(0, "%s: unknown metric %s", chip, defs[i]->metric);
			continue;
		}
		CHECK(pp.pDimUnit && strcmp(pp.pDimUnit, unit) == 0, "%s: %s is in %s, not %s",
		      chip, defs[i]->metric, pp.pDimUnit ? pp.pDimUnit : "?", unit);
	}
	ap.pHostObject = ip.pHostObject;
	ap.ppMetricNames = names;
	ap.numMetrics = n;
	CHECK(h.add(&ap) == CUPTI_SUCCESS, "%s: the set is refused", chip);
	sp.pHostObject = ip.pHostObject;
	CHECK(h.size(&sp) == CUPTI_SUCCESS && sp.configImageSize > 0, "%s: no config image", chip);
	img = malloc(sp.configImageSize ? sp.configImageSize : 1);
	gp.pHostObject = ip.pHostObject;
	gp.configImageSize = sp.configImageSize;
	gp.pConfigImage = img;
	CHECK(h.image(&gp) == CUPTI_SUCCESS, "%s: config image", chip);
	np.configImageSize = sp.configImageSize;
	np.pConfigImage = img;
	CHECK(h.passes(&np) == CUPTI_SUCCESS && np.numOfPasses == 1, "%s set %u: %zu passes", chip,
	      set, np.numOfPasses);
	printf("ok: %s (%s) set %u: %zu metrics, one pass\n", chip, gt_gm_arch(chip), set, n);
	free(img);
	dp.pHostObject = ip.pHostObject;
	h.deinit(&dp);
}

int main(int argc, char **argv)
{
	char nvperf[4096];
	const char *slash;
	void *lib;

	/* the reasons, from CUPTI's own numbers */
	CHECK(gt_gm_reason_of(CUPTI_ERROR_INSUFFICIENT_PRIVILEGES) == GT_GM_NO_PERMISSION, "35");
	CHECK(gt_gm_reason_of(CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES) ==
	              GT_GM_NO_PERMISSION,
	      "40");
	CHECK(gt_gm_reason_of(CUPTI_ERROR_HARDWARE_BUSY) == GT_GM_BUSY, "26");
	CHECK(gt_gm_reason_of(CUPTI_ERROR_OLD_PROFILER_API_INITIALIZED) == GT_GM_BUSY, "36");
	CHECK(gt_gm_reason_of(CUPTI_ERROR_NOT_SUPPORTED) == GT_GM_UNSUPPORTED, "27");
	CHECK(gt_gm_reason_of(CUPTI_ERROR_UNKNOWN) == GT_GM_ERROR, "999");
	CHECK(strcmp(gt_gpu_metrics_reason_name(GT_GM_NO_PERMISSION),
	             "no permission to read GPU performance counters") == 0,
	      "reason text");
	CHECK(gt_gm_arch("TU102") == NULL, "no set for Turing");
	CHECK(gt_gm_set_for_chip("TU102", GT_GM_SET_DEFAULT, (const struct gt_gm_def *[12]){0},
	                         12) == 0,
	      "Turing has a set");

	/* the notice for each reason, as the trace and the summary show it */
	{
		static const struct {
			unsigned reason;
			const char *what, *err, *want;
		} texts[] = {
		        {GT_GM_NO_PERMISSION, "cuptiProfilerInitialize",
		         "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES",
		         "GPU metrics of device 1 not sampled: no permission to read GPU "
		         "performance "
		         "counters (cuptiProfilerInitialize: CUPTI_ERROR_INSUFFICIENT_PRIVILEGES); "
		         "the "
		         "driver lets only administrators read the counters "
		         "(NVreg_RestrictProfilingToAdminUsers=1): run as root or set the module "
		         "parameter to 0"},
		        {GT_GM_BUSY, "cuptiPmSamplingEnable", "CUPTI_ERROR_HARDWARE_BUSY",
		         "GPU metrics of device 1 not sampled: another profiler holds the GPU's "
		         "performance counters (cuptiPmSamplingEnable: CUPTI_ERROR_HARDWARE_BUSY)"},
		        {GT_GM_UNSUPPORTED, "no metric set for chip TU102", NULL,
		         "GPU metrics of device 1 not sampled: the GPU or driver does not support "
		         "PM "
		         "sampling (no metric set for chip TU102)"},
		        {GT_GM_NO_LIBRARY, "libcupti.so.12 has no cuptiPmSamplingEnable", "",
		         "GPU metrics of device 1 not sampled: libnvperf_host or CUPTI's PM "
		         "sampling "
		         "API not found (libcupti.so.12 has no cuptiPmSamplingEnable)"},
		        {GT_GM_OTHER_PROCESS, NULL, NULL,
		         "GPU metrics of device 1 not sampled: another traced process samples this "
		         "GPU"},
		        {GT_GM_ERROR, "cuptiPmSamplingSetConfig", "CUPTI_ERROR_INVALID_PARAMETER",
		         "GPU metrics of device 1 not sampled: a CUPTI call failed "
		         "(cuptiPmSamplingSetConfig: CUPTI_ERROR_INVALID_PARAMETER)"},
		        /* some metrics left out: what names them */
		        {GT_GM_REFUSED, "NVLink RX Bandwidth, NVLink TX Bandwidth",
		         "CUPTI_ERROR_UNKNOWN",
		         "GPU metrics of device 1 sampled without NVLink RX Bandwidth, NVLink TX "
		         "Bandwidth: the GPU's counter availability refuses these metrics "
		         "(cuptiProfilerHostConfigAddMetrics: CUPTI_ERROR_UNKNOWN)"},
		        {GT_GM_REFUSED, "GR Active (CUPTI_ERROR_UNKNOWN)", NULL,
		         "GPU metrics of device 1 sampled without GR Active (CUPTI_ERROR_UNKNOWN): "
		         "the GPU's counter availability refuses these metrics "
		         "(cuptiProfilerHostConfigAddMetrics)"},
		};
		char buf[512];

		for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
			gt_gm_notice_text(buf, sizeof(buf), 1, texts[i].reason, texts[i].what,
			                  texts[i].err);
			CHECK(strcmp(buf, texts[i].want) == 0, "notice %zu: '%s'", i, buf);
		}
		/* cut, never overrun */
		gt_gm_notice_text(buf, 20, 0, GT_GM_NO_PERMISSION, NULL, NULL);
		CHECK(strcmp(buf, "GPU metrics of devi") == 0, "cut: '%s'", buf);
	}

	if (argc < 2 || !(lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL))) {
		printf("skip: no libcupti (%s)\n", argc > 1 ? argv[1] : "none given");
		return failures ? 1 : 77;
	}
	slash = strrchr(argv[1], '/');
	snprintf(nvperf, sizeof(nvperf), "%.*slibnvperf_host.so",
	         slash ? (int)(slash - argv[1] + 1) : 0, argv[1]);
	if (access(nvperf, R_OK) != 0) {
		printf("skip: no %s\n", nvperf);
		return failures ? 1 : 77;
	}
	*(void **)&h.init = dlsym(lib, "cuptiProfilerHostInitialize");
	*(void **)&h.deinit = dlsym(lib, "cuptiProfilerHostDeinitialize");
	*(void **)&h.props = dlsym(lib, "cuptiProfilerHostGetMetricProperties");
	*(void **)&h.add = dlsym(lib, "cuptiProfilerHostConfigAddMetrics");
	*(void **)&h.size = dlsym(lib, "cuptiProfilerHostGetConfigImageSize");
	*(void **)&h.image = dlsym(lib, "cuptiProfilerHostGetConfigImage");
	*(void **)&h.passes = dlsym(lib, "cuptiProfilerHostGetNumOfPasses");
	if (!h.init || !h.deinit || !h.props || !h.add || !h.size || !h.image || !h.passes) {
		printf("skip: %s has no profiler host API\n", argv[1]);
		return failures ? 1 : 77;
	}
	for (size_t i = 0; i < sizeof(chips) / sizeof(chips[0]); i++) {
		CHECK(strcmp(gt_gm_arch(chips[i].chip), chips[i].arch) == 0, "%s arch",
		      chips[i].chip);
		check_set(chips[i].chip, GT_GM_SET_DEFAULT, chips[i].n_default);
		check_set(chips[i].chip, GT_GM_SET_SM, chips[i].n_sm);
	}
	return failures ? 1 : 0;
}
