/* Configuration of the injection library from GPUTRACE_* variables (include/gputrace/env.h),
 * and the name test behind the default API filter. Runs inside the traced application, once,
 * at injection time; pure functions so the unit suite checks them without a GPU. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "gputrace/env.h"
#include "inject.h"

static const struct {
	const char *name;
	unsigned bit;
} trace_words[] = {
        {"kernel", GT_TRACE_KERNEL}, {"memcpy", GT_TRACE_MEMCPY},   {"memset", GT_TRACE_MEMSET},
        {"memory", GT_TRACE_MEMORY}, {"api", GT_TRACE_API},         {"nvtx", GT_TRACE_NVTX},
        {"sync", GT_TRACE_SYNC},     {"graph", GT_TRACE_GRAPH},     {"overhead", GT_TRACE_OVERHEAD},
        {"all", GT_TRACE_ALL},       {"default", GT_TRACE_DEFAULT}, {"none", 0},
};

int gt_inject_parse_trace(const char *s, unsigned *mask)
{
	unsigned m = 0;
	const char *p = s;

	if (!s || !*s)
		return -EINVAL;
	while (*p) {
		size_t len = strcspn(p, ", ");
		size_t i;
		bool found = false;

		for (i = 0; len && i < sizeof(trace_words) / sizeof(trace_words[0]); i++) {
			if (strlen(trace_words[i].name) == len &&
			    strncasecmp(trace_words[i].name, p, len) == 0) {
				m |= trace_words[i].bit;
				found = true;
				break;
			}
		}
		/* empty words between separators ("kernel,,api") are tolerated */
		if (len && !found)
			return -EINVAL;
		p += len;
		p += strspn(p, ", ");
	}
	*mask = m;
	return 0;
}

int gt_inject_parse_bytes(const char *s, size_t *bytes)
{
	char *end;
	unsigned long long v;
	unsigned shift = 0;

	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -ERANGE;
	switch (*end) {
	case '\0':
		break;
	case 'k':
	case 'K':
		shift = 10;
		end++;
		break;
	case 'm':
	case 'M':
		shift = 20;
		end++;
		break;
	case 'g':
	case 'G':
		shift = 30;
		end++;
		break;
	default:
		return -EINVAL;
	}
	/* accept "32M", "32MB", "32MiB" */
	if (shift && (strcasecmp(end, "b") == 0 || strcasecmp(end, "ib") == 0))
		end += strlen(end);
	if (*end)
		return -EINVAL;
	if (shift && v > (~0ull >> shift))
		return -ERANGE;
	v <<= shift;
	if (v > (unsigned long long)SIZE_MAX)
		return -ERANGE;
	*bytes = (size_t)v;
	return 0;
}

static int parse_uint(const char *s, unsigned max, unsigned *out)
{
	char *end;
	unsigned long v;

	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v > max)
		return -EINVAL;
	*out = (unsigned)v;
	return 0;
}

static void config_defaults(struct gt_inject_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->trace = GT_TRACE_DEFAULT;
	cfg->api_filter = GT_API_FILTER_LAUNCH;
	/* activity records: cheaper per launch on the H200 (docs/collectors.md) */
	cfg->api_source = GT_API_SOURCE_ACTIVITY;
	cfg->flush_ms = GT_DEFAULT_FLUSH_MS;
	cfg->capture = GT_CAPTURE_NONE;
}

int gt_inject_config_parse(struct gt_inject_config *cfg, gt_getenv_fn get, const char **errmsg)
{
	const char *v;
	const char *err = NULL;
	bool source_set;

	config_defaults(cfg);

	v = get(GT_ENV_DEBUG);
	cfg->debug = v && *v && strcmp(v, "0") != 0;

	v = get(GT_ENV_TRACE);
	if (v && *v && gt_inject_parse_trace(v, &cfg->trace) < 0) {
		cfg->trace = GT_TRACE_DEFAULT;
		err = err ? err
		          : "GPUTRACE_TRACE: unknown kind (use kernel,memcpy,memset,memory,api,"
		            "nvtx,sync,graph,overhead, all, default or none)";
	}

	v = get(GT_ENV_API);
	if (v && *v) {
		if (strcasecmp(v, "launch") == 0)
			cfg->api_filter = GT_API_FILTER_LAUNCH;
		else if (strcasecmp(v, "all") == 0)
			cfg->api_filter = GT_API_FILTER_ALL;
		else if (strcasecmp(v, "none") == 0)
			cfg->api_filter = GT_API_FILTER_NONE;
		else
			err = err ? err : "GPUTRACE_API: use launch, all or none";
	}

	v = get(GT_ENV_API_SOURCE);
	source_set = v && *v;
	if (source_set) {
		if (strcasecmp(v, "callback") == 0)
			cfg->api_source = GT_API_SOURCE_CALLBACK;
		else if (strcasecmp(v, "activity") == 0)
			cfg->api_source = GT_API_SOURCE_ACTIVITY;
		else
			err = err ? err : "GPUTRACE_API_SOURCE: use callback or activity";
	}

	v = get(GT_ENV_BUFFER_SIZE);
	if (v && *v && gt_inject_parse_bytes(v, &cfg->ring_bytes) < 0) {
		cfg->ring_bytes = 0;
		err = err ? err : "GPUTRACE_BUFFER_SIZE: use a byte count like 64M";
	}

	v = get(GT_ENV_FLUSH_MS);
	if (v && *v && parse_uint(v, 3600u * 1000u, &cfg->flush_ms) < 0) {
		cfg->flush_ms = GT_DEFAULT_FLUSH_MS;
		err = err ? err : "GPUTRACE_FLUSH_MS: use milliseconds, 0 to disable";
	}

	v = get(GT_ENV_CAPTURE);
	if (v && *v) {
		if (strcasecmp(v, "none") == 0) {
			cfg->capture = GT_CAPTURE_NONE;
		} else if (strcasecmp(v, "cudaProfilerApi") == 0) {
			cfg->capture = GT_CAPTURE_PROFILER_API;
		} else if (strncasecmp(v, "nvtx:", 5) == 0 && v[5] &&
		           strlen(v + 5) < sizeof(cfg->capture_name)) {
			cfg->capture = GT_CAPTURE_NVTX;
			strcpy(cfg->capture_name, v + 5);
		} else {
			err = err ? err
			          : "GPUTRACE_CAPTURE_RANGE: use none, cudaProfilerApi or "
			            "nvtx:NAME";
		}
	}
	/* A capture range cuts API records at the call that opens or closes it; activity records
	 * reach us later, in buffers, so inside a capture range they come from callbacks. */
	if (cfg->capture != GT_CAPTURE_NONE && !source_set)
		cfg->api_source = GT_API_SOURCE_CALLBACK;
	/* an NVTX capture range needs the NVTX collector, whatever GPUTRACE_TRACE says */
	if (cfg->capture == GT_CAPTURE_NVTX)
		cfg->trace |= GT_TRACE_NVTX;

	v = get(GT_ENV_GRAPH);
	if (v && *v) {
		if (strcasecmp(v, "graph") == 0)
			cfg->graph_nodes = false;
		else if (strcasecmp(v, "node") == 0)
			cfg->graph_nodes = true;
		else
			err = err ? err : "GPUTRACE_GRAPH: use graph or node";
	}

	if (err) {
		if (errmsg)
			*errmsg = err;
		return -EINVAL;
	}
	return 0;
}

/* Prefixes of the calls kept by the "launch" filter. Matching names rather than callback ids
 * keeps the list valid across CUDA versions, which add _v2, _ptsz and Async variants. */
static const char *const launch_prefixes[] = {
        /* runtime */
        "cudaLaunch",
        "cudaMemcpy",
        "cudaMemset",
        "cudaMalloc",
        "cudaFree",
        "cudaHostAlloc",
        "cudaMemPrefetchAsync",
        "cudaDeviceSynchronize",
        "cudaStreamSynchronize",
        "cudaEventSynchronize",
        "cudaStreamWaitEvent",
        "cudaGraphLaunch",
        "cudaThreadSynchronize",
        /* driver */
        "cuLaunch",
        "cuMemcpy",
        "cuMemset",
        "cuMemAlloc",
        "cuMemFree",
        "cuMemHostAlloc",
        "cuMemCreate",
        "cuMemRelease",
        "cuMemPrefetchAsync",
        "cuCtxSynchronize",
        "cuStreamSynchronize",
        "cuEventSynchronize",
        "cuStreamWaitEvent",
        "cuGraphLaunch",
};

int gt_api_name_is_launch(const char *name)
{
	size_t i;

	if (!name)
		return 0;
	for (i = 0; i < sizeof(launch_prefixes) / sizeof(launch_prefixes[0]); i++) {
		if (strncmp(name, launch_prefixes[i], strlen(launch_prefixes[i])) == 0)
			return 1;
	}
	return 0;
}
