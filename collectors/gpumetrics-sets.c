/* The GPU metric sets of PM sampling per architecture: one pass each, checked against
 * CUPTI's profiler host API for GH100, GA100, GA102, AD102, GB100 and GB202 by the suite
 * gpumetrics-host. Runs inside the traced application and in tests; pure data. */
#include <stdio.h>
#include <string.h>

#include "gputrace/record.h"

#include "gpumetrics-sets.h"

#define PCT(name, metric)                                                                          \
	{                                                                                          \
		name, metric ".avg.pct_of_peak_sustained_elapsed", "%", 1000                       \
	}
#define BPS(name, metric)                                                                          \
	{                                                                                          \
		name, metric ".sum.per_second", "bytes/s", 1                                       \
	}

/* Names every architecture shares; the sets below take them by index. */
static const struct gt_gm_def sm_active = PCT("SMs Active", "sm__cycles_active");
static const struct gt_gm_def sm_issue = PCT("SM Issue", "sm__inst_executed_realtime");
static const struct gt_gm_def tensor =
        PCT("Tensor Active", "sm__pipe_tensor_cycles_active_realtime");
static const struct gt_gm_def gr_active = PCT("GR Active", "gr__cycles_active");
static const struct gt_gm_def dram_read = BPS("DRAM Read Bandwidth", "dram__bytes_read");
static const struct gt_gm_def dram_write = BPS("DRAM Write Bandwidth", "dram__bytes_write");
static const struct gt_gm_def dram_read_op = BPS("DRAM Read Bandwidth", "dram__bytes_op_read");
static const struct gt_gm_def dram_write_op = BPS("DRAM Write Bandwidth", "dram__bytes_op_write");
static const struct gt_gm_def pcie_read = BPS("PCIe Read Bandwidth", "pcie__read_bytes");
static const struct gt_gm_def pcie_write = BPS("PCIe Write Bandwidth", "pcie__write_bytes");
static const struct gt_gm_def nvl_rx = BPS("NVLink RX Bandwidth", "nvlrx__bytes");
static const struct gt_gm_def nvl_tx = BPS("NVLink TX Bandwidth", "nvltx__bytes");

/* Hopper (GH100) and Ampere (GA100, GA10x): everything. */
static const struct gt_gm_def *const full[] = {
        &sm_active, &sm_issue,   &tensor, &dram_read, &dram_write,
        &pcie_read, &pcie_write, &nvl_rx, &nvl_tx,    &gr_active,
};
/* Ada (AD10x): no NVLink. */
static const struct gt_gm_def *const ada[] = {
        &sm_active,  &sm_issue,  &tensor,     &dram_read,
        &dram_write, &pcie_read, &pcie_write, &gr_active,
};
/* Blackwell data-center (GB10x): no PCIe byte counters. */
static const struct gt_gm_def *const gb1[] = {
        &sm_active, &sm_issue, &tensor, &dram_read, &dram_write, &nvl_rx, &nvl_tx, &gr_active,
};
/* Blackwell (GB20x): DRAM by operation, no NVLink. */
static const struct gt_gm_def *const gb2[] = {
        &sm_active,     &sm_issue,  &tensor,     &dram_read_op,
        &dram_write_op, &pcie_read, &pcie_write, &gr_active,
};

static const struct {
	const char *prefix, *arch;
	const struct gt_gm_def *const *defs;
	size_t n;
} archs[] = {
        {"GH", "Hopper", full, sizeof(full) / sizeof(full[0])},
        {"GA", "Ampere", full, sizeof(full) / sizeof(full[0])},
        {"AD", "Ada", ada, sizeof(ada) / sizeof(ada[0])},
        {"GB1", "Blackwell", gb1, sizeof(gb1) / sizeof(gb1[0])},
        {"GB2", "Blackwell", gb2, sizeof(gb2) / sizeof(gb2[0])},
};

static int arch_of(const char *chip)
{
	for (unsigned i = 0; chip && i < sizeof(archs) / sizeof(archs[0]); i++)
		if (strncmp(chip, archs[i].prefix, strlen(archs[i].prefix)) == 0)
			return (int)i;
	return -1;
}

const char *gt_gm_arch(const char *chip)
{
	int a = arch_of(chip);

	return a < 0 ? NULL : archs[a].arch;
}

size_t gt_gm_set_for_chip(const char *chip, unsigned set, const struct gt_gm_def **defs, size_t max)
{
	int a = arch_of(chip);
	size_t n = 0;

	if (a < 0 || set >= GT_GM_SET_MAX)
		return 0;
	for (size_t i = 0; i < archs[a].n && n < max; i++) {
		const struct gt_gm_def *d = archs[a].defs[i];

		if (set == GT_GM_SET_SM && strcmp(d->unit, "%") != 0)
			continue;
		defs[n++] = d;
	}
	return n;
}

unsigned gt_gm_reason_of(int cupti_result)
{
	/* CUptiResult's numbers (cupti_result.h): this file needs no CUPTI header */
	switch (cupti_result) {
	case 35: /* CUPTI_ERROR_INSUFFICIENT_PRIVILEGES */
	case 40: /* CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES */
		return GT_GM_NO_PERMISSION;
	case 26: /* CUPTI_ERROR_HARDWARE_BUSY */
	case 36: /* CUPTI_ERROR_OLD_PROFILER_API_INITIALIZED */
	case 39: /* CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED */
		return GT_GM_BUSY;
	case 27: /* CUPTI_ERROR_NOT_SUPPORTED */
	case 42: /* CUPTI_ERROR_CMP_DEVICE_NOT_SUPPORTED */
		return GT_GM_UNSUPPORTED;
	default:
		return GT_GM_ERROR;
	}
}

char *gt_gm_notice_text(char *buf, size_t bytes, uint32_t dev, unsigned reason, const char *what,
                        const char *cupti_error)
{
	int n;

	if (cupti_error && !*cupti_error)
		cupti_error = NULL;
	if (reason == GT_GM_REFUSED)
		n = snprintf(buf, bytes,
		             "GPU metrics of device %u sampled without %s: %s "
		             "(cuptiProfilerHostConfigAddMetrics%s%s)",
		             dev, what ? what : "some metrics", gt_gpu_metrics_reason_name(reason),
		             cupti_error ? ": " : "", cupti_error ? cupti_error : "");
	else if (reason == GT_GM_NO_SAMPLE)
		n = snprintf(buf, bytes, "GPU metrics of device %u: no sample: %s (%s)", dev,
		             gt_gpu_metrics_reason_name(reason), what ? what : "");
	else if (what && cupti_error)
		n = snprintf(buf, bytes, "GPU metrics of device %u not sampled: %s (%s: %s)", dev,
		             gt_gpu_metrics_reason_name(reason), what, cupti_error);
	else if (what || cupti_error)
		n = snprintf(buf, bytes, "GPU metrics of device %u not sampled: %s (%s)", dev,
		             gt_gpu_metrics_reason_name(reason), what ? what : cupti_error);
	else
		n = snprintf(buf, bytes, "GPU metrics of device %u not sampled: %s", dev,
		             gt_gpu_metrics_reason_name(reason));
	if (reason == GT_GM_NO_PERMISSION && n >= 0 && (size_t)n < bytes)
		snprintf(buf + n, bytes - (size_t)n,
		         "; the driver lets only administrators read the counters "
		         "(NVreg_RestrictProfilingToAdminUsers=1): run as root or set the module "
		         "parameter to 0");
	return buf;
}
