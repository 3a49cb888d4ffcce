/* Finds and loads libcupti at run time (search list below) and resolves the entry points the
 * collectors use; also picks the few driver functions meta.c needs from the loaded libcuda.
 * Runs inside the traced application, once, from InitializeInjection. */
#include <dlfcn.h>
#include <errno.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cupti-glue.h"
#include "cuptilib.h"
#include "emit.h"
#include "gt-config.h"

#define GT_CUPTI_SONAME "libcupti.so.13"

struct gt_cupti_fns gt_cupti;
struct gt_cuda_fns gt_cuda;
char gt_cupti_path[512];

/* Where a toolkit keeps libcupti, relative to its root. */
static const char *const toolkit_subdirs[] = {
        "lib64",
        "targets/x86_64-linux/lib",
        "extras/CUPTI/lib64",
        "lib",
};

static void *try_open(const char *path, int flags)
{
	void *h = dlopen(path, flags);

	if (h) {
		snprintf(gt_cupti_path, sizeof(gt_cupti_path), "%s", path);
		gt_debug("libcupti: loaded %s", path);
	}
	return h;
}

static void *try_root(const char *root)
{
	char path[512];
	size_t i;
	void *h;

	if (!root || !*root)
		return NULL;
	for (i = 0; i < sizeof(toolkit_subdirs) / sizeof(toolkit_subdirs[0]); i++) {
		if (snprintf(path, sizeof(path), "%s/%s/%s", root, toolkit_subdirs[i],
		             GT_CUPTI_SONAME) >= (int)sizeof(path))
			continue;
		h = try_open(path, RTLD_NOW | RTLD_LOCAL);
		if (h)
			return h;
	}
	return NULL;
}

/* The directory of the loaded libcuda: distributions that ship the driver's user-space
 * libraries together sometimes put CUPTI beside them. */
static void *try_beside_driver(void)
{
	void *cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
	void *sym;
	Dl_info info;
	char path[512];
	const char *slash;
	void *h = NULL;

	if (!cuda)
		return NULL;
	sym = dlsym(cuda, "cuInit");
	if (sym && dladdr(sym, &info) && info.dli_fname && (slash = strrchr(info.dli_fname, '/'))) {
		int dirlen = (int)(slash - info.dli_fname);

		if (snprintf(path, sizeof(path), "%.*s/%s", dirlen, info.dli_fname,
		             GT_CUPTI_SONAME) < (int)sizeof(path))
			h = try_open(path, RTLD_NOW | RTLD_LOCAL);
	}
	dlclose(cuda);
	return h;
}

static void *try_glob(void)
{
	glob_t g;
	size_t i;
	void *h = NULL;

	if (glob("/usr/local/cuda-*", GLOB_ONLYDIR, NULL, &g) != 0)
		return NULL;
	/* newest first: glob sorts ascending */
	for (i = g.gl_pathc; i-- > 0 && !h;)
		h = try_root(g.gl_pathv[i]);
	globfree(&g);
	return h;
}

static void *find_cupti(void)
{
	void *h;

	/* 1. a CUPTI already in the process (PyTorch loads its own): share it, never a second copy
	 */
	h = try_open(GT_CUPTI_SONAME, RTLD_NOW | RTLD_NOLOAD);
	if (h)
		return h;
	/* 2. the ordinary search: LD_LIBRARY_PATH, our RUNPATH (the build's toolkit), ld.so.cache
	 */
	h = try_open(GT_CUPTI_SONAME, RTLD_NOW | RTLD_LOCAL);
	if (h)
		return h;
	/* 3. toolkits named by the environment, then the one we were built against */
	if ((h = try_root(getenv("CUDA_HOME"))) || (h = try_root(getenv("CUDA_PATH"))) ||
	    (h = try_root(GT_CUDA_ROOT)) || (h = try_root("/usr/local/cuda")))
		return h;
	/* 4. any installed toolkit, then beside the driver */
	if ((h = try_glob()))
		return h;
	return try_beside_driver();
}

static void load_cuda_fns(void)
{
	void *cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);

	if (!cuda)
		return;
		/* Casting dlsym's void * to a function pointer is what POSIX requires to work. */
#define GT_SYM(member, name) *(void **)&gt_cuda.member = dlsym(cuda, name)
	GT_SYM(device_get, "cuDeviceGet");
	GT_SYM(get_attribute, "cuDeviceGetAttribute");
	GT_SYM(get_name, "cuDeviceGetName");
	GT_SYM(total_mem, "cuDeviceTotalMem_v2");
	GT_SYM(get_uuid, "cuDeviceGetUuid_v2");
	GT_SYM(driver_version, "cuDriverGetVersion");
#undef GT_SYM
	/* libcuda stays loaded by the application; dropping our extra reference is harmless */
	dlclose(cuda);
}

int gt_cupti_load(const char **why)
{
	static char reason[640];
	void *h = find_cupti();
	const char *missing = NULL;

	if (!h) {
		snprintf(reason, sizeof(reason),
		         "%s not found (looked in the process, LD_LIBRARY_PATH, $CUDA_HOME, %s, "
		         "/usr/local/cuda*, beside libcuda); set CUDA_HOME or LD_LIBRARY_PATH to "
		         "the CUDA toolkit",
		         GT_CUPTI_SONAME, GT_CUDA_ROOT);
		*why = reason;
		return -ENOENT;
	}
#define GT_CUPTI_LOAD(name, ret, args)                                                             \
	if (!(*(void **)&gt_cupti.name = dlsym(h, #name)) && !missing)                             \
		missing = #name;
	GT_CUPTI_FUNCS(GT_CUPTI_LOAD)
#undef GT_CUPTI_LOAD
	if (missing) {
		snprintf(reason, sizeof(reason), "%s has no %s: CUPTI too old for this gputrace",
		         gt_cupti_path, missing);
		*why = reason;
		return -ENOENT;
	}
	load_cuda_fns();
	return 0;
}
