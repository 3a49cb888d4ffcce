/* Looking at the CUDA driver and CUPTI through dlopen/dlsym, never linking them, so the CLI
 * starts on any machine and can explain what is missing. Runs in the CLI. */
#include <dlfcn.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda-probe.h"
#include "gt-config.h"
#include "sysinfo.h"

/* The few driver entry points used, with the types the CUDA headers give them (CUresult is
 * an enum, CUdevice an int). */
typedef int (*cu_driver_get_version_fn)(int *version);
typedef int (*cu_init_fn)(unsigned flags);
typedef int (*cu_device_get_count_fn)(int *count);
typedef int (*cu_device_get_fn)(int *device, int ordinal);
typedef int (*cu_device_get_name_fn)(char *name, int len, int device);
typedef int (*cu_get_error_name_fn)(int result, const char **name);
typedef int (*cupti_get_version_fn)(uint32_t *version);

/* dlsym returns void *; C has no conversion to a function pointer, POSIX guarantees the
 * representation, and this copy is the sanctioned way around -Wpedantic. */
#define GT_DLSYM(handle, name, fn)                                                                 \
	do {                                                                                       \
		void *sym_ = dlsym((handle), (name));                                              \
		memcpy(&(fn), &sym_, sizeof(fn));                                                  \
	} while (0)

/* Kept open for the CLI's lifetime: unloading a driver library buys nothing. */
static void *libcuda;

void gt_cuda_probe_driver(struct gt_cuda_probe *p)
{
	cu_driver_get_version_fn get_version = NULL;

	memset(p, 0, sizeof(*p));
	p->device_count = -1;
	if (!libcuda)
		libcuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!libcuda) {
		const char *e = dlerror();

		snprintf(p->driver_error, sizeof(p->driver_error), "%s", e ? e : "unknown error");
		return;
	}
	p->driver_loaded = true;
	GT_DLSYM(libcuda, "cuDriverGetVersion", get_version);
	if (get_version && get_version(&p->driver_version) != 0)
		p->driver_version = 0;
}

void gt_cuda_probe_devices(struct gt_cuda_probe *p)
{
	cu_init_fn init = NULL;
	cu_device_get_count_fn get_count = NULL;
	cu_device_get_fn get_device = NULL;
	cu_device_get_name_fn get_name = NULL;
	cu_get_error_name_fn error_name = NULL;
	const char *name = NULL;
	int count = 0;

	if (!p->driver_loaded)
		gt_cuda_probe_driver(p);
	if (!p->driver_loaded)
		return;
	GT_DLSYM(libcuda, "cuInit", init);
	GT_DLSYM(libcuda, "cuDeviceGetCount", get_count);
	GT_DLSYM(libcuda, "cuDeviceGet", get_device);
	GT_DLSYM(libcuda, "cuDeviceGetName", get_name);
	GT_DLSYM(libcuda, "cuGetErrorName", error_name);
	if (!init || !get_count) {
		snprintf(p->init_error, sizeof(p->init_error), "cuInit not found in libcuda.so.1");
		p->init_called = true;
		p->init_result = -1;
		return;
	}
	p->init_called = true;
	p->init_result = init(0);
	if (p->init_result != 0) {
		if (error_name && error_name(p->init_result, &name) == 0 && name)
			snprintf(p->init_error, sizeof(p->init_error), "%s", name);
		else
			snprintf(p->init_error, sizeof(p->init_error), "CUresult %d",
			         p->init_result);
		return;
	}
	if (get_count(&count) != 0)
		return;
	p->device_count = count;
	for (int i = 0; i < count && i < GT_PROBE_MAX_GPUS && get_device && get_name; i++) {
		int dev;

		if (get_device(&dev, i) == 0)
			get_name(p->device_names[i], (int)sizeof(p->device_names[i]), dev);
	}
}

void gt_cuda_version_string(int version, char *buf, size_t bytes)
{
	snprintf(buf, bytes, "%d.%d", version / 1000, version % 1000 / 10);
}

/* The kernel module's version, e.g. "580.65.06", from /proc/driver/nvidia/version. */
bool gt_nvidia_module_version(char *buf, size_t bytes)
{
	return gt_sysinfo_driver_version(buf, bytes);
}

static bool try_cupti(struct gt_cupti_probe *p, const char *path)
{
	cupti_get_version_fn get_version = NULL;
	void *h;
	size_t len = strlen(p->tried);

	snprintf(p->tried + len, sizeof(p->tried) - len, "%s%s", len ? ", " : "", path);
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		const char *e = dlerror();

		snprintf(p->error, sizeof(p->error), "%s", e ? e : "unknown error");
		return false;
	}
	p->found = true;
	/* dlinfo would give the resolved path for bare names; the name we asked for is what
	 * the user can act on, so keep it. */
	snprintf(p->path, sizeof(p->path), "%s", path);
	GT_DLSYM(h, "cuptiGetVersion", get_version);
	if (get_version && get_version(&p->api_version) != 0)
		p->api_version = 0;
	/* Left loaded: dlclose of CUPTI is not known to be safe. */
	return true;
}

/* Try every libcupti.so* in the usual subdirectories of a toolkit root. */
static bool try_root(struct gt_cupti_probe *p, const char *root)
{
	static const char *const subdirs[] = {"lib64", "targets/x86_64-linux/lib",
	                                      "extras/CUPTI/lib64", "targets/sbsa-linux/lib"};
	char pattern[PATH_MAX];

	if (!root || !*root)
		return false;
	for (size_t i = 0; i < sizeof(subdirs) / sizeof(subdirs[0]); i++) {
		glob_t g;
		bool ok = false;

		snprintf(pattern, sizeof(pattern), "%s/%s/libcupti.so*", root, subdirs[i]);
		if (glob(pattern, 0, NULL, &g) != 0)
			continue;
		/* glob sorts: libcupti.so, libcupti.so.13, libcupti.so.13.0.x; the plain name
		 * is a symlink to the newest, so the first that loads is the one to report. */
		for (size_t j = 0; j < g.gl_pathc && !ok; j++)
			ok = try_cupti(p, g.gl_pathv[j]);
		globfree(&g);
		if (ok)
			return true;
	}
	return false;
}

void gt_cupti_probe(struct gt_cupti_probe *p)
{
	glob_t g;
	bool ok;

	memset(p, 0, sizeof(*p));
	if (try_root(p, getenv("CUDA_HOME")) || try_root(p, getenv("CUDA_PATH")) ||
	    try_root(p, GT_CUDA_ROOT) || try_root(p, "/usr/local/cuda"))
		return;
	if (glob("/usr/local/cuda-*", GLOB_ONLYDIR, NULL, &g) == 0) {
		ok = false;
		/* Newest first: glob sorts ascending. */
		for (size_t i = g.gl_pathc; i-- > 0 && !ok;)
			ok = try_root(p, g.gl_pathv[i]);
		globfree(&g);
		if (ok)
			return;
	}
	/* Distribution packages put it on the loader's path. */
	if (try_cupti(p, "libcupti.so.13") || try_cupti(p, "libcupti.so.12"))
		return;
	try_cupti(p, "libcupti.so");
}
