/* Entry points and lifetime of libgputrace-inject.so: InitializeInjection (called by the CUDA
 * driver inside cuInit), the settings, the client (ring and session or standalone file),
 * detaching when CUPTI refuses us, exit and fork handling. Runs inside the traced
 * application. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "client.h"
#include "clock.h"
#include "collector.h"
#include "cupti-glue.h"
#include "cuptilib.h"
#include "stack.h"
#include "emit.h"
#include "env.h"
#include "gt-config.h"
#include "inject.h"
#include "selfcost.h"
#include "sysinfo.h"
#include "tsc.h"

#define GT_EXPORT __attribute__((visibility("default")))

struct gt_inject gt_inj;

static pthread_once_t start_once = PTHREAD_ONCE_INIT;
static int start_result = -EAGAIN;
static atomic_flag cuda_once = ATOMIC_FLAG_INIT;
/* The client of a process that detached: its trace is completed at exit (on_exit_flush). */
static _Atomic(struct gt_client *) detached;

/* Strings for the trace header; must outlive the client (standalone writer keeps pointers). */
static char host_buf[256];
static char cmdline_buf[1024];
static char cuda_ver_buf[32];
static char cupti_ver_buf[32];
static uint32_t cupti_version; /* cuptiGetVersion; 0 when it failed */
static char driver_ver_buf[64];
static struct gt_trace_info trace_info;

static const char *env_get(const char *name)
{
	return getenv(name);
}

/* Versions and the command line for the standalone trace header. */
static void fill_trace_info(void)
{
	int v = 0;
	uint32_t cv = 0;
	ssize_t i, n;
	int fd;

	gethostname(host_buf, sizeof(host_buf) - 1);
	fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, cmdline_buf, sizeof(cmdline_buf) - 1);
		close(fd);
		if (n > 0) {
			for (i = 0; i < n - 1; i++)
				if (cmdline_buf[i] == '\0')
					cmdline_buf[i] = ' ';
			cmdline_buf[n] = '\0';
		}
	}
	if (gt_cuda.driver_version && gt_cuda.driver_version(&v) == CUDA_SUCCESS && v)
		snprintf(cuda_ver_buf, sizeof(cuda_ver_buf), "%d.%d", v / 1000, (v % 1000) / 10);
	if (gt_cupti.cuptiGetVersion && gt_cupti.cuptiGetVersion(&cv) == CUPTI_SUCCESS) {
		cupti_version = cv;
		snprintf(cupti_ver_buf, sizeof(cupti_ver_buf), "%u", cv);
	}
	gt_sysinfo_driver_version(driver_ver_buf, sizeof(driver_ver_buf));
	trace_info.clock_id = GT_CLOCK_MONOTONIC;
	trace_info.start_realtime_ns = gt_clock_ns(CLOCK_REALTIME);
	trace_info.start_trace_ns = gt_now_ns();
	trace_info.hostname = host_buf;
	trace_info.cmdline = cmdline_buf;
	trace_info.tool_version = GT_VERSION;
	trace_info.cuda_version = cuda_ver_buf;
	trace_info.cupti_version = cupti_ver_buf;
	trace_info.driver_version = driver_ver_buf;
}

static void on_exit_flush(int status, void *arg);
static void on_fork_child(void);

static void do_start(void)
{
	struct gt_client_options opts = {0};
	const char *err = NULL;
	char bad[256];
	int ret;

	/* the same parser, and the same words, as gputrace run's options (src/settings/envconf.c)
	 */
	ret = gt_envconf_parse(&gt_inj.cfg, env_get, bad, sizeof(bad));
	if (ret < 0)
		dprintf(STDERR_FILENO, "gputrace: %s; using the default\n", bad);
	gt_inj.pid = (uint32_t)getpid();
	gt_stack_init();
	/* before anything is started: a child forked from here on forgets it all */
	pthread_atfork(NULL, NULL, on_fork_child);
	fill_trace_info();
	opts.ring_bytes = gt_inj.cfg.ring_bytes;
	opts.info = &trace_info;
	opts.settings = &gt_inj.cfg;
	ret = gt_client_open(&opts, &gt_inj.client, &err);
	if (ret < 0) {
		/* the one line the user sees: tracing is off, the program runs normally */
		dprintf(STDERR_FILENO, "gputrace: %s; the program runs untraced\n",
		        err ? err : strerror(-ret));
		start_result = ret;
		return;
	}
	gt_inj.ring = gt_client_ring(gt_inj.client);
	atomic_store(&gt_inj.capturing, gt_inj.cfg.capture == GT_CAPTURE_NONE);
	atomic_store(&gt_inj.active, 1);
	/* (the client writes the clock anchors, at open and close) */
	if (gt_inj.cfg.flush_ms) {
		/* the TSC clock only with the thread that re-anchors it: alone it would drift */
		if (gt_flush_start() < 0)
			gt_debug("no flush thread; records arrive when CUPTI's buffers fill, and "
			         "the "
			         "NVTX handlers read clock_gettime");
		else
			gt_tsc_init();
	}
	/* registered here, not in InitializeInjection, so an NVTX-only process flushes too;
	 * on_exit rather than atexit: the exit status goes into PROCESS_END */
	on_exit(on_exit_flush, NULL);
	/* every setting, so a test can compare what gputrace run's options and the bare
	 * environment give (tests/cli-envconf.sh) */
	gt_debug("tracing: kinds 0x%x, api filter %u, api source %u, ring %zu bytes, flush %u ms, "
	         "capture %u '%s', graph %s, write queue %llu bytes, write timeout %llu ms",
	         gt_inj.cfg.trace, gt_inj.cfg.api_filter, gt_inj.cfg.api_source,
	         gt_inj.cfg.ring_bytes, gt_inj.cfg.flush_ms, gt_inj.cfg.capture,
	         gt_inj.cfg.capture_name, gt_inj.cfg.graph_nodes ? "node" : "graph",
	         (unsigned long long)gt_inj.cfg.write_queue_bytes,
	         (unsigned long long)(gt_inj.cfg.write_timeout_ns / 1000000u));
	start_result = 0;
}

int gt_inject_start(void)
{
	pthread_once(&start_once, do_start);
	return start_result;
}

static void emit_notice(unsigned severity, unsigned code, int detail, const char *message)
{
	struct gt_rec_notice r;

	gt_notice_fill(&r, severity, code, detail, message);
	gt_emit_nowait(&r.hdr);
}

/* Before the ring is closed: stop the flush thread (it writes to the ring too), then the
 * collectors' last flush (NVTX publishes what the threads have staged, meta records renamed
 * threads). */
static void flush_for_close(void)
{
	gt_flush_stop();
	gt_collectors_flush(GT_FLUSH_LAST);
}

/* Close the client. A standalone trace that could not be completed is the one thing said
 * without GPUTRACE_DEBUG: one line naming the file left and how to read it. */
static void close_client(struct gt_client *c, bool was_detached)
{
	const char *path = NULL, *err = NULL;

	if (gt_client_close(c, &path, &err) < 0 && err)
		dprintf(STDERR_FILENO, "gputrace: %s\n", err);
	else if (path)
		gt_debug("trace written to %s%s", path, was_detached ? " (tracing detached)" : "");
}

void gt_inject_detach(unsigned code, int detail, const char *message)
{
	struct gt_rec_process_end end = {0};
	struct gt_client *c = gt_inj.client;

	if (!c || !atomic_load(&gt_inj.active))
		return;
	flush_for_close();
	emit_notice(GT_NOTICE_ERROR, code, detail, message);
	gt_hdr(&end.hdr, GT_REC_PROCESS_END, sizeof(end));
	end.ts_ns = gt_now_ns();
	end.how = GT_END_DETACHED;
	end.code = detail;
	gt_emit_nowait(&end.hdr);
	atomic_store(&gt_inj.active, 0);
	gt_inj.client = NULL;
	/* This is the thread inside cuInit: it must not wait for the disk. The drainer writes
	 * out what is left now, and the trace is completed at exit (on_exit_flush), which may
	 * wait for it, as it does for any trace. */
	atomic_store(&detached, c);
	gt_client_detach(c);
}

/* What recording cost this process's threads (selfcost.c), once its last buffer was handled. */
static void self_cost_notice(void)
{
	char msg[640];
	uint64_t ns = gt_self_report(msg, sizeof(msg));

	if (msg[0])
		emit_notice(GT_NOTICE_INFO, GT_NOTICE_SELF_COST,
		            ns / 1000u > INT32_MAX ? INT32_MAX : (int)(ns / 1000u), msg);
}

static void on_exit_flush(int status, void *arg)
{
	struct gt_client *c = atomic_exchange(&detached, NULL);
	struct timespec ts = {0, 1000000};

	(void)arg;
	if (c) {
		/* tracing stopped earlier: complete that trace (a writer that passed the
		 * `active` check then has long finished) */
		gt_client_set_exit_status(c, status);
		close_client(c, true);
		return;
	}
	c = gt_inj.client;
	if (!c || !atomic_load(&gt_inj.active))
		return;
	/* everything CUPTI and the threads' NVTX stages still hold reaches the ring before the
	 * file is closed */
	gt_flush_stop();
	gt_cupti_stop();
	flush_for_close();
	self_cost_notice();
	gt_client_set_exit_status(c, status);
	atomic_store(&gt_inj.active, 0);
	/* a callback that passed the `active` check just before may still be writing its
	 * record: give it a moment (bounded) before the trace is closed; the ring's memory
	 * stays (gt_client_close), for one preempted for longer */
	nanosleep(&ts, NULL);
	gt_inj.client = NULL;
	close_client(c, false);
}

static void on_fork_child(void)
{
	/* the child is not traced unless it execs: forget the parent's ring untouched */
	atomic_store(&gt_inj.active, 0);
	atomic_store(&gt_inj.capturing, 0);
	/* the flush thread, which keeps the TSC clock, is not in the child (and may have been
	 * halfway through moving it): the NVTX handlers read clock_gettime there */
	atomic_store(&gt_tsc_enabled, 0);
	gt_collectors_fork_child();
	gt_inj.cupti_on = false;
	if (gt_inj.client)
		gt_client_forget(gt_inj.client);
	gt_inj.client = NULL;
	/* a detached client is still whole (its close is the parent's, at exit) */
	gt_client_forget(atomic_exchange(&detached, NULL));
	gt_inj.ring = NULL;
}

/* The message for a refused subscription: the likely cause and what to do about it. */
static const char *refusal_message(int res)
{
	switch (res) {
	case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
		return "another profiler (e.g. Nsight Systems) already uses CUPTI in this process; "
		       "run without it";
	case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES:
	case CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES:
		return "no permission to profile the GPU (NVreg_RestrictProfilingToAdminUsers=1); "
		       "run as root or set the driver option NVreg_RestrictProfilingToAdminUsers=0";
	case CUPTI_ERROR_WSL_DEVICE_NOT_SUPPORTED:
		return "CUPTI tracing is not supported on this WSL2 GPU; trace on native Linux";
	case CUPTI_ERROR_NOT_SUPPORTED:
	case CUPTI_ERROR_INVALID_DEVICE:
	case CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED:
	case CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED:
	case CUPTI_ERROR_CMP_DEVICE_NOT_SUPPORTED:
	case CUPTI_ERROR_SLI_DEVICE_NOT_SUPPORTED:
	case CUPTI_ERROR_CONFIDENTIAL_COMPUTING_NOT_SUPPORTED:
		return "CUPTI does not support this GPU or its mode (vGPU, MIG, confidential "
		       "computing); trace on a supported device";
	case CUPTI_ERROR_NOT_COMPATIBLE:
	case CUPTI_ERROR_NOT_INITIALIZED:
		return "CUPTI could not initialize (driver and CUPTI versions do not match?); "
		       "use the CUPTI of a toolkit no newer than the driver";
	default:
		return NULL;
	}
}

static void set_nvtx_injection(void)
{
	Dl_info info;

	if (!(gt_inj.cfg.trace & GT_TRACE_NVTX) || getenv(GT_ENV_NVTX_INJECTION))
		return;
	/* NVTX reads the variable at the first NVTX call of the process (and of its children),
	 * so ranges opened after cuInit reach our handlers without the user setting it */
	if (dladdr(&gt_inj, &info) && info.dli_fname && info.dli_fname[0] == '/')
		setenv(GT_ENV_NVTX_INJECTION, info.dli_fname, 0);
}

/* Called by the CUDA driver from cuInit when CUDA_INJECTION64_PATH names this library. */
GT_EXPORT int InitializeInjection(void);
int InitializeInjection(void)
{
	const char *why = NULL;
	char msg[512], loaded[sizeof(gt_cupti_path) + 64];
	int ret;

	if (atomic_flag_test_and_set(&cuda_once))
		return 1;
	/* CUPTI first, so the header can name its version; a failure is reported once the
	 * trace exists, so the reason is in the file too */
	ret = gt_cupti_load(&why);
	if (gt_inject_start() < 0)
		return 1;
	if (ret < 0) {
		dprintf(STDERR_FILENO, "gputrace: %s; the program runs untraced\n", why);
		gt_inject_detach(GT_NOTICE_CUPTI_ERROR, ret, why);
		return 1;
	}
	ret = gt_cupti_start(&why);
	if (ret > 0) {
		const char *fix = refusal_message(ret);

		if (fix)
			snprintf(msg, sizeof(msg), "%s", fix);
		else
			snprintf(msg, sizeof(msg), "%s failed: %s; the program runs untraced", why,
			         gt_cupti_result_name(ret));
		dprintf(STDERR_FILENO, "gputrace: %s\n", msg);
		gt_inject_detach(strcmp(why, "cuptiSubscribe") == 0
		                         ? GT_NOTICE_CUPTI_SUBSCRIBE_FAILED
		                         : GT_NOTICE_CUPTI_ERROR,
		                 ret, msg);
		return 1;
	}
	set_nvtx_injection();
	/* which CUPTI traces this process, in the trace: under gputrace run the CLI writes the
	 * file's header and cannot know */
	snprintf(loaded, sizeof(loaded), "CUPTI %s from %s", cupti_ver_buf[0] ? cupti_ver_buf : "?",
	         gt_cupti_path);
	emit_notice(GT_NOTICE_INFO, GT_NOTICE_CUPTI_LOADED, (int)cupti_version, loaded);
	gt_debug("%s", loaded);
	return 1;
}
