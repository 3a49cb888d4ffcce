/* Looking at the CUDA driver and CUPTI from the CLI without linking either: dlopen and
 * dlsym only, so gputrace runs (and says why tracing cannot) on machines without them.
 * Runs in the CLI. */
#ifndef GPUTRACE_CLI_CUDA_PROBE_H
#define GPUTRACE_CLI_CUDA_PROBE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GT_PROBE_MAX_GPUS 16

struct gt_cuda_probe {
	bool driver_loaded;     /* libcuda.so.1 could be dlopen()ed */
	char driver_error[256]; /* dlerror() when not */
	int driver_version;     /* cuDriverGetVersion: 1000*major + 10*minor; 0 unknown */
	bool init_called;       /* cuInit was attempted (gt_cuda_probe_devices) */
	int init_result;        /* CUresult of cuInit(0) */
	char init_error[64];    /* its name, e.g. "CUDA_ERROR_NO_DEVICE" */
	int device_count;       /* cuDeviceGetCount; -1 unknown */
	char device_names[GT_PROBE_MAX_GPUS][96];
};

/* Load libcuda.so.1 and read the driver API version (cheap: no cuInit). */
void gt_cuda_probe_driver(struct gt_cuda_probe *p);

/* cuInit(0) and enumerate the GPUs. Loads the driver first if needed. Call with
 * CUDA_INJECTION64_PATH unset, or the driver loads that library into this process. */
void gt_cuda_probe_devices(struct gt_cuda_probe *p);

/* The NVIDIA kernel module's version ("580.65.06") from /proc/driver/nvidia/version.
 * Returns false when there is no module. */
bool gt_nvidia_module_version(char *buf, size_t bytes);

/* "13.0" from 13000, into buf. */
void gt_cuda_version_string(int version, char *buf, size_t bytes);

struct gt_cupti_probe {
	bool found;
	char path[PATH_MAX];  /* the library that loaded */
	uint32_t api_version; /* cuptiGetVersion; 0 unknown */
	char tried[1024];     /* where we looked, when not found */
	char error[256];      /* last dlerror() */
};

/* Search for libcupti the way a CUDA installation lays it out: $CUDA_HOME, the toolkit this
 * build was configured with, /usr/local/cuda and /usr/local/cuda-<version>, then the
 * loader's own path. */
void gt_cupti_probe(struct gt_cupti_probe *p);

#endif /* GPUTRACE_CLI_CUDA_PROBE_H */
