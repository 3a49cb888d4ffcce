/* gputrace doctor: checks whether tracing can work on this machine (driver, GPUs, CUPTI,
 * permissions, the injection library, other profilers, WSL2) and says how to fix each problem.
 * Runs in the CLI process. */
#include <ctype.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "common.h"
#include "cuda-probe.h"
#include "env.h"
#include "inject-path.h"

enum verdict {
	V_OK = 0,
	V_NOTE,    /* worth knowing, changes nothing */
	V_SKIP,    /* could not be checked because an earlier check failed */
	V_WARN,    /* tracing works, but something may surprise the user */
	V_PROBLEM, /* tracing will not work until this is fixed */
};

struct doctor {
	bool quiet;
	unsigned problems, warnings;
};

static void report(struct doctor *d, enum verdict v, const char *what, const char *fix,
                   const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* One check's line: "  ok       what: detail", then "fix: ..." indented under it. */
static void report(struct doctor *d, enum verdict v, const char *what, const char *fix,
                   const char *fmt, ...)
{
	static const char *const tags[] = {"ok", "note", "skipped", "warning", "PROBLEM"};
	va_list ap;

	if (v == V_PROBLEM)
		d->problems++;
	if (v == V_WARN)
		d->warnings++;
	if (d->quiet && v < V_WARN)
		return;
	printf("  %-8s %s: ", tags[v], what);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	if (fix)
		printf("  %-8s fix: %s\n", "", fix);
}

static void check_driver(struct doctor *d, struct gt_cuda_probe *cu)
{
	char ver[32], mod[64];

	gt_cuda_probe_driver(cu);
	if (!cu->driver_loaded) {
		report(d, V_PROBLEM, "driver",
		       "install the NVIDIA driver (nvidia-smi must work); in a container, start it "
		       "with the NVIDIA container toolkit (docker run --gpus all ...)",
		       "no NVIDIA driver: libcuda.so.1 cannot be loaded (%s)", cu->driver_error);
		return;
	}
	gt_cuda_version_string(cu->driver_version, ver, sizeof(ver));
	if (gt_nvidia_module_version(mod, sizeof(mod)))
		report(d, V_OK, "driver", NULL, "libcuda.so.1 loaded, CUDA %s (NVIDIA driver %s)",
		       ver, mod);
	else
		report(d, V_OK, "driver", NULL, "libcuda.so.1 loaded, CUDA %s", ver);
}

static void check_gpus(struct doctor *d, struct gt_cuda_probe *cu)
{
	const char *visible = getenv("CUDA_VISIBLE_DEVICES");
	char fix[256];

	if (!cu->driver_loaded) {
		report(d, V_SKIP, "GPUs", NULL, "not checked without a driver");
		return;
	}
	/* cuInit loads whatever CUDA_INJECTION64_PATH names into this process: not here. */
	unsetenv(GT_ENV_CUDA_INJECTION);
	gt_cuda_probe_devices(cu);
	if (visible)
		snprintf(fix, sizeof(fix),
		         "CUDA_VISIBLE_DEVICES=%s may hide them: unset it; check nvidia-smi",
		         visible);
	else
		snprintf(fix, sizeof(fix),
		         "check nvidia-smi; in a container, start it with --gpus all; make sure "
		         "this user may open /dev/nvidia*");
	if (cu->init_result != 0) {
		report(d, V_PROBLEM, "GPUs", fix, "cuInit failed with %s: no usable GPU",
		       cu->init_error);
		return;
	}
	if (cu->device_count <= 0) {
		report(d, V_PROBLEM, "GPUs", fix, "the driver sees no GPU");
		return;
	}
	report(d, V_OK, "GPUs", NULL, "%d visible%s%s%s", cu->device_count,
	       cu->device_names[0][0] ? " (" : "", cu->device_names[0],
	       cu->device_names[0][0] ? (cu->device_count > 1 ? ", ...)" : ")") : "");
}

static void check_cupti(struct doctor *d)
{
	struct gt_cupti_probe cp;

	gt_cupti_probe(&cp);
	if (!cp.found) {
		report(d, V_PROBLEM, "CUPTI",
		       "install the CUDA toolkit's CUPTI (e.g. the cuda-cupti-13-0 package) and "
		       "set CUDA_HOME to the toolkit",
		       "libcupti not found (looked at %s)", cp.tried[0] ? cp.tried : "nothing");
		return;
	}
	if (cp.api_version)
		report(d, V_OK, "CUPTI", NULL, "%s (CUPTI API version %u)", cp.path,
		       cp.api_version);
	else
		report(d, V_OK, "CUPTI", NULL, "%s", cp.path);
}

/* Tracing is not profiling: since CUDA 10.2 CUPTI lets every user trace, and only hardware
 * counters stay behind RmProfilingAdminOnly. Say so, since users of other tools worry. */
static void check_permission(struct doctor *d)
{
	char line[256];
	int admin_only = -1;
	FILE *f = fopen("/proc/driver/nvidia/params", "re");

	if (!f) {
		report(d, V_SKIP, "permission", NULL,
		       "no /proc/driver/nvidia/params (no NVIDIA kernel module)");
		return;
	}
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "RmProfilingAdminOnly: %d", &admin_only) == 1)
			break;
	fclose(f);
	if (admin_only == 1 && geteuid() != 0)
		report(d, V_NOTE, "permission",
		       "for --gpu-metrics run as root, or load the nvidia module with "
		       "NVreg_RestrictProfilingToAdminUsers=0",
		       "GPU performance counters are for administrators only "
		       "(RmProfilingAdminOnly=1): tracing works for every user, but run "
		       "--gpu-metrics cannot sample (no permission)");
	else
		report(d, V_OK, "permission", NULL, "%s",
		       geteuid() == 0 ? "running as root"
		                      : "performance counters open to all users "
		                        "(RmProfilingAdminOnly=0)");
}

static void check_inject(struct doctor *d, char *path, size_t bytes)
{
	char tried[2048], fix[2300];
	const char *how = NULL;
	int r = gt_inject_find(path, bytes, &how, tried, sizeof(tried));

	if (r < 0) {
		path[0] = '\0';
		if (getenv(GT_ENV_INJECT_LIB) && *getenv(GT_ENV_INJECT_LIB))
			snprintf(fix, sizeof(fix), "point %s at libgputrace-inject.so, or unset it",
			         GT_ENV_INJECT_LIB);
		else
			snprintf(fix, sizeof(fix),
			         "reinstall gputrace, or set %s=/path/to/libgputrace-inject.so "
			         "(a build without the CUDA toolkit skips it: see meson setup's "
			         "summary)",
			         GT_ENV_INJECT_LIB);
		report(d, V_PROBLEM, "injection library", fix,
		       "libgputrace-inject.so not found (looked at %s)", tried);
		return;
	}
	report(d, V_OK, "injection library", NULL, "%s (%s)", path, how);
}

/* True if `path` names a known profiler's library (Nsight Systems/Compute, CUPTI, Kineto,
 * HPCToolkit, TAU, Score-P...): any of them subscribes to CUPTI, and before CUDA 13.3 a
 * process may have only one subscriber. */
static bool is_profiler_lib(const char *path)
{
	static const char *const marks[] = {"nsys",   "nsight", "ncu",    "ToolsInjection", "cupti",
	                                    "kineto", "hpcrun", "libtau", "scorep"};
	for (size_t i = 0; i < sizeof(marks) / sizeof(marks[0]); i++)
		if (strcasestr(path, marks[i]))
			return true;
	return false;
}

static void check_injection_env(struct doctor *d, const char *ours, const char *cuda_inj,
                                const char *nvtx_inj)
{
	const char *preload = getenv("LD_PRELOAD");
	bool clean = true;
	char fix[512];
	const struct {
		const char *name, *value;
	} vars[] = {{GT_ENV_CUDA_INJECTION, cuda_inj}, {GT_ENV_NVTX_INJECTION, nvtx_inj}};

	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
		char real[PATH_MAX];
		const char *v = vars[i].value;

		if (!v || !*v)
			continue;
		clean = false;
		if ((ours[0] && realpath(v, real) && strcmp(real, ours) == 0) ||
		    strstr(v, "libgputrace-inject")) {
			report(d, V_NOTE, "environment", NULL,
			       "%s=%s is gputrace's: programs started from this shell are traced "
			       "without the CLI (standalone mode)",
			       vars[i].name, v);
			continue;
		}
		snprintf(fix, sizeof(fix),
		         "nothing for gputrace run, which replaces it for the traced program; "
		         "unset %s to run programs without that tool",
		         vars[i].name);
		report(d, V_WARN, "environment", fix,
		       "%s=%s injects another tool into CUDA programs", vars[i].name, v);
	}
	if (preload && *preload) {
		char list[1024], *save = NULL;

		snprintf(list, sizeof(list), "%s", preload);
		for (char *t = strtok_r(list, ": ", &save); t; t = strtok_r(NULL, ": ", &save)) {
			if (!is_profiler_lib(t))
				continue;
			clean = false;
			report(d, V_PROBLEM, "environment",
			       "remove it from LD_PRELOAD for the programs you trace with gputrace",
			       "LD_PRELOAD loads %s, another profiler: only one tool can subscribe "
			       "to CUPTI in a process, so gputrace would detach and trace nothing",
			       t);
		}
	}
	if (clean)
		report(d, V_OK, "environment", NULL, "no other profiler's injection is set");
}

static void check_wsl(struct doctor *d)
{
	char line[512] = "";
	FILE *f = fopen("/proc/version", "re");

	if (!f)
		return;
	if (!fgets(line, sizeof(line), f))
		line[0] = '\0';
	fclose(f);
	if (!strcasestr(line, "microsoft"))
		return;
	report(d, V_NOTE, "WSL2", NULL,
	       "CUPTI traces in a reduced form here: kernels, copies, memsets, allocations, API "
	       "calls and NVTX ranges are recorded; unified-memory page-fault and transfer "
	       "records and hardware counters are not available, and CUPTI's own clock is "
	       "CLOCK_MONOTONIC_RAW (gputrace supplies its timestamps, so nothing to do)");
}

static void usage(FILE *out)
{
	fputs("Usage: gputrace doctor [options]\n"
	      "\n"
	      "Check that tracing can work on this machine: the NVIDIA driver and libcuda, the\n"
	      "GPUs, CUPTI and its version, profiling permission, the injection library, another\n"
	      "profiler's injection in the environment, WSL2. Each problem comes with its fix.\n"
	      "\n"
	      "Options:\n"
	      "  -q, --quiet  print only warnings and problems\n"
	      "  -h, --help   show this help\n"
	      "\n"
	      "Exit status: 0 tracing should work (warnings allowed), 64 bad option, 69 it\n"
	      "would not.\n",
	      out);
}

static const struct gt_cli_cmd doctor_cmd = {
        .name = "doctor",
        .synopsis = "gputrace doctor [-q]",
        .common = GT_CLI_QUIET,
        .usage = usage,
        .min_args = 0,
        .max_args = 0,
        .args_what = "argument",
        .args_extra = "it takes none",
};

int cmd_doctor(int argc, char **argv)
{
	struct doctor d = {0};
	struct gt_cuda_probe cu;
	char ours[PATH_MAX], *cuda_inj = NULL, *nvtx_inj = NULL;
	struct gt_cli cli;
	int ret = gt_cli_parse(&cli, &doctor_cmd, NULL, argc, argv);

	if (ret != GT_EXIT_OK || cli.help)
		return ret;
	d.quiet = cli.quiet;
	/* check_gpus unsets CUDA_INJECTION64_PATH before cuInit: keep the values to report. */
	if (getenv(GT_ENV_CUDA_INJECTION))
		cuda_inj = strdup(getenv(GT_ENV_CUDA_INJECTION));
	if (getenv(GT_ENV_NVTX_INJECTION))
		nvtx_inj = strdup(getenv(GT_ENV_NVTX_INJECTION));

	if (!d.quiet)
		printf("gputrace doctor: can this machine trace CUDA programs?\n\n");
	check_driver(&d, &cu);
	check_gpus(&d, &cu);
	check_cupti(&d);
	check_permission(&d);
	check_inject(&d, ours, sizeof(ours));
	check_injection_env(&d, ours, cuda_inj, nvtx_inj);
	check_wsl(&d);

	if (d.problems) {
		printf("\n%s: tracing will not work here until %s fixed (%u problem%s above)\n",
		       d.quiet ? "gputrace doctor" : "result",
		       d.problems == 1 ? "it is" : "they are", d.problems,
		       d.problems == 1 ? "" : "s");
		ret = GT_EXIT_UNAVAILABLE;
	} else {
		if (!d.quiet)
			printf("\nresult: tracing should work%s\n",
			       d.warnings ? " (read the warnings above)" : "");
		ret = GT_EXIT_OK;
	}
	free(cuda_inj);
	free(nvtx_inj);
	return ret;
}
