/* The GPUTRACE_* settings: one parser for `gputrace run`'s options and the injection library's
 * environment, and the name test behind GPUTRACE_API=launch. Runs in both processes (in the
 * application once, at injection time); pure functions, no allocation. */
#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "env.h"
#include "envconf.h"
#include "gputrace/trace.h"
#include "ring.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

#define FLUSH_MS_MAX 3600000u /* an hour */

static const char *const names[GT_ENVCONF_MAX] = {
        [GT_ENVCONF_TRACE] = GT_ENV_TRACE,
        [GT_ENVCONF_API] = GT_ENV_API,
        [GT_ENVCONF_API_SOURCE] = GT_ENV_API_SOURCE,
        [GT_ENVCONF_BUFFER_SIZE] = GT_ENV_BUFFER_SIZE,
        [GT_ENVCONF_FLUSH_MS] = GT_ENV_FLUSH_MS,
        [GT_ENVCONF_CAPTURE] = GT_ENV_CAPTURE,
        [GT_ENVCONF_GRAPH] = GT_ENV_GRAPH,
        [GT_ENVCONF_WRITE_QUEUE] = GT_ENV_WRITE_QUEUE,
        [GT_ENVCONF_WRITE_TIMEOUT] = GT_ENV_WRITE_TIMEOUT,
        [GT_ENVCONF_BACKTRACE] = GT_ENV_BACKTRACE,
        [GT_ENVCONF_GPU_METRICS] = GT_ENV_GPU_METRICS,
};

/* What each setting accepts, for the message that refuses a value. */
static const char *const hints[GT_ENVCONF_MAX] = {
        [GT_ENVCONF_TRACE] = "use a comma-separated list of kernel, memcpy, memset, memory, api, "
                             "nvtx, sync, graph, overhead, or all, cuda, default, none",
        [GT_ENVCONF_API] = "use launch, all or none",
        [GT_ENVCONF_API_SOURCE] = "use activity or callback",
        [GT_ENVCONF_BUFFER_SIZE] = "use a size from 4K to 1G, e.g. 64M",
        [GT_ENVCONF_FLUSH_MS] = "use milliseconds from 0 to 3600000",
        [GT_ENVCONF_CAPTURE] = "use none, cudaProfilerApi or nvtx:NAME (NAME up to 127 bytes)",
        [GT_ENVCONF_GRAPH] = "use graph or node",
        [GT_ENVCONF_WRITE_QUEUE] = "use a size from 0 to 4G, e.g. 64M",
        [GT_ENVCONF_WRITE_TIMEOUT] = "use seconds above 0 and up to 86400, e.g. 60",
        [GT_ENVCONF_BACKTRACE] = "use none or MODE[:KINDS[:NS]], MODE native, python or all, "
                                 "KINDS from kernel, memory, sync, other, all; e.g. "
                                 "python:kernel,sync:10000",
        [GT_ENVCONF_GPU_METRICS] = "use [DEVICES][:FREQUENCY][:SET]: DEVICES all or CUDA "
                                   "ordinals 0 to 63 like 0,1; FREQUENCY samples per second "
                                   "from 1 to 1000000, e.g. 10000 or 10k; SET default or sm; "
                                   "or none",
};

static const struct {
	const char *name;
	unsigned bits;
} trace_words[] = {
        {"kernel", GT_TRACE_KERNEL},
        {"memcpy", GT_TRACE_MEMCPY},
        {"memset", GT_TRACE_MEMSET},
        {"memory", GT_TRACE_MEMORY},
        {"api", GT_TRACE_API},
        {"nvtx", GT_TRACE_NVTX},
        {"sync", GT_TRACE_SYNC},
        {"graph", GT_TRACE_GRAPH},
        {"overhead", GT_TRACE_OVERHEAD},
        {"all", GT_TRACE_ALL},
        {"default", GT_TRACE_DEFAULT},
        {"cuda", GT_TRACE_CUDA},
        {"none", 0},
};

void gt_envconf_defaults(struct gt_envconf *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->trace = GT_TRACE_DEFAULT;
	cfg->api_filter = GT_API_FILTER_LAUNCH;
	/* activity records: cheaper per launch on the H200 (docs/collectors.md) */
	cfg->api_source = GT_API_SOURCE_ACTIVITY;
	cfg->flush_ms = GT_DEFAULT_FLUSH_MS;
	cfg->capture = GT_CAPTURE_NONE;
	cfg->write_queue_bytes = GT_WRITE_QUEUE_DEFAULT_BYTES;
	cfg->write_timeout_ns = GT_WRITE_TIMEOUT_DEFAULT_NS;
	cfg->gpu_metrics_devices = ~0ull;
	cfg->gpu_metrics_hz = GT_GM_HZ_DEFAULT;
}

const char *gt_envconf_name(enum gt_envconf_key key)
{
	return (unsigned)key < GT_ENVCONF_MAX ? names[key] : NULL;
}

/* "kernel,memcpy" / "KERNEL api" / "default,sync" / "none" -> mask. At least one word; empty
 * words between separators ("kernel,,api") are passed over. */
static int parse_trace(const char *s, unsigned *mask)
{
	unsigned m = 0, words = 0;
	const char *p = s + strspn(s, ", ");

	while (*p) {
		size_t len = strcspn(p, ", ");
		size_t i;

		for (i = 0; i < ARRAY_LEN(trace_words); i++)
			if (strlen(trace_words[i].name) == len &&
			    strncasecmp(trace_words[i].name, p, len) == 0)
				break;
		if (i == ARRAY_LEN(trace_words))
			return -EINVAL;
		m |= trace_words[i].bits;
		words++;
		p += len;
		p += strspn(p, ", ");
	}
	if (!words)
		return -EINVAL;
	*mask = m;
	return 0;
}

/* Leading decimal digits of s into *v; the number of digits (0: none), or -ERANGE. */
static int parse_digits(const char *s, uint64_t *v)
{
	int n = 0;

	*v = 0;
	for (; s[n] >= '0' && s[n] <= '9'; n++) {
		unsigned d = (unsigned)(s[n] - '0');

		if (*v > (UINT64_MAX - d) / 10)
			return -ERANGE;
		*v = *v * 10 + d;
	}
	return n;
}

/* A byte count: digits with an optional binary unit K, M, G or T (any case; "64M", "64MB" and
 * "64MiB" are all 64 << 20: nobody sizes a ring in powers of ten), from min to max. */
static int parse_bytes(const char *s, uint64_t min, uint64_t max, uint64_t *bytes)
{
	static const char units[] = "KMGT";
	const char *unit;
	uint64_t v, mult = 1;
	int n = parse_digits(s, &v);

	if (n <= 0)
		return -EINVAL;
	s += n;
	if (*s && (unit = strchr(units, toupper((unsigned char)*s)))) {
		mult = 1ull << (10 * (unit - units + 1));
		s++;
		if (strcasecmp(s, "b") == 0 || strcasecmp(s, "ib") == 0)
			s += strlen(s);
	} else if (strcasecmp(s, "b") == 0) {
		s++;
	}
	if (*s || v > UINT64_MAX / mult)
		return -EINVAL;
	v *= mult;
	if (v < min || v > max)
		return -EINVAL;
	*bytes = v;
	return 0;
}

/* Seconds: a decimal number above 0 and up to GT_WRITE_TIMEOUT_MAX_S ("60", "0.5", "1e2"),
 * as nanoseconds. A value under 1 ns is refused too: it would be 0 ns, which the waits read
 * as "no limit" (src/base/stall.h), and a limit asked for must never become none. */
static int parse_seconds(const char *s, uint64_t *ns)
{
	char *end;
	double v;

	if (!*s || isspace((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (end == s || *end || errno || !(v * 1e9 >= 1) || v > GT_WRITE_TIMEOUT_MAX_S)
		return -EINVAL;
	*ns = (uint64_t)(v * 1e9);
	return 0;
}

static int parse_flush_ms(const char *s, unsigned *ms)
{
	uint64_t v;
	int n = parse_digits(s, &v);

	if (n <= 0 || s[n] || v > FLUSH_MS_MAX)
		return -EINVAL;
	*ms = (unsigned)v;
	return 0;
}

/* Index of s (any case) in the NULL-terminated `words`, or -EINVAL. */
static int parse_word(const char *s, const char *const *words)
{
	for (int i = 0; words[i]; i++)
		if (strcasecmp(s, words[i]) == 0)
			return i;
	return -EINVAL;
}

/* "none" | "native" | "python:kernel,sync" | "all:all:5000": MODE[:KINDS[:NS]] */
static int parse_backtrace(const char *s, struct gt_envconf *cfg)
{
	static const char *const kind_words[] = {"kernel", "memory", "sync", "other", "all"};
	unsigned kinds = 0;
	uint64_t min_ns = 0;
	unsigned mode;
	const char *p, *colon;
	int n;

	if (strcasecmp(s, "none") == 0) {
		cfg->backtrace = GT_BACKTRACE_NONE;
		return 0;
	}
	if (strncasecmp(s, "native", 6) == 0 && (!s[6] || s[6] == ':')) {
		mode = GT_BACKTRACE_NATIVE;
		s += 6;
	} else if (strncasecmp(s, "python", 6) == 0 && (!s[6] || s[6] == ':')) {
		mode = GT_BACKTRACE_PYTHON;
		s += 6;
	} else if (strncasecmp(s, "all", 3) == 0 && (!s[3] || s[3] == ':')) {
		mode = GT_BACKTRACE_ALL;
		s += 3;
	} else {
		return -EINVAL;
	}
	if (!s[0]) {
		kinds = GT_BT_ALL;
		goto done;
	}
	p = s + 1;
	colon = strchr(p, ':');
	while (p < (colon ? colon : p + strlen(p))) {
		size_t len = strcspn(p, ",:");
		size_t i;

		for (i = 0; i < ARRAY_LEN(kind_words); i++)
			if (strlen(kind_words[i]) == len && strncasecmp(kind_words[i], p, len) == 0)
				break;
		if (i == ARRAY_LEN(kind_words))
			return -EINVAL;
		kinds |= i == 4 ? GT_BT_ALL : 1u << i;
		p += len;
		if (*p == ',')
			p++;
	}
	if (!kinds)
		return -EINVAL;
	if (colon) {
		n = parse_digits(colon + 1, &min_ns);
		if (n <= 0 || colon[1 + n])
			return -EINVAL;
	}
done:
	cfg->backtrace = mode;
	cfg->backtrace_kinds = kinds;
	cfg->backtrace_min_ns = min_ns;
	return 0;
}

static int parse_capture(const char *s, struct gt_envconf *cfg)
{
	size_t len;

	if (strcasecmp(s, "none") == 0) {
		cfg->capture = GT_CAPTURE_NONE;
		cfg->capture_name[0] = '\0';
		return 0;
	}
	if (strcasecmp(s, "cudaProfilerApi") == 0) {
		cfg->capture = GT_CAPTURE_PROFILER_API;
		cfg->capture_name[0] = '\0';
		return 0;
	}
	if (strncasecmp(s, "nvtx:", 5) != 0)
		return -EINVAL;
	len = strlen(s + 5);
	if (len == 0 || len >= sizeof(cfg->capture_name))
		return -EINVAL;
	cfg->capture = GT_CAPTURE_NVTX;
	memcpy(cfg->capture_name, s + 5, len + 1);
	return 0;
}

/* GPUTRACE_GPU_METRICS: [DEVICES][:FREQUENCY][:SET], each part optional; "none" or "off":
 * not sampled. */
static int parse_gpu_metrics(const char *value, struct gt_envconf *cfg)
{
	static const char *const set_words[GT_GM_SET_MAX] = {"default", "sm"};
	uint64_t devices = 0, hz = GT_GM_HZ_DEFAULT;
	unsigned set = GT_GM_SET_DEFAULT;
	const char *p = value, *colon;
	size_t len;

	if (strcasecmp(value, "none") == 0 || strcasecmp(value, "off") == 0) {
		cfg->gpu_metrics = false;
		return 0;
	}
	colon = strchr(p, ':');
	len = colon ? (size_t)(colon - p) : strlen(p);
	if (len == 0 || (len == 3 && strncasecmp(p, "all", 3) == 0)) {
		devices = ~0ull;
	} else {
		const char *q = p, *end = p + len;

		while (q < end) {
			char *e;
			unsigned long d;

			if (!isdigit((unsigned char)*q))
				return -EINVAL;
			d = strtoul(q, &e, 10);
			if (d > 63 || e > end || (e < end && *e != ','))
				return -EINVAL;
			devices |= 1ull << d;
			q = e < end ? e + 1 : e;
			if (e < end && q == end)
				return -EINVAL; /* a trailing comma */
		}
	}
	if (colon) {
		const char *f = colon + 1, *colon2 = strchr(f, ':');
		size_t flen = colon2 ? (size_t)(colon2 - f) : strlen(f);

		if (flen) {
			char *e;
			unsigned long long v;

			if (!isdigit((unsigned char)*f))
				return -EINVAL;
			v = strtoull(f, &e, 10);
			if (e < f + flen && (*e == 'k' || *e == 'K') && e + 1 == f + flen) {
				v *= 1000;
				e++;
			}
			if (e != f + flen || v < 1 || v > GT_GM_HZ_MAX)
				return -EINVAL;
			hz = v;
		}
		if (colon2) {
			const char *w = colon2 + 1;
			unsigned i;

			for (i = 0; i < GT_GM_SET_MAX; i++)
				if (strcasecmp(w, set_words[i]) == 0)
					break;
			if (i == GT_GM_SET_MAX)
				return -EINVAL;
			set = i;
		}
	}
	cfg->gpu_metrics = true;
	cfg->gpu_metrics_devices = devices;
	cfg->gpu_metrics_hz = (uint32_t)hz;
	cfg->gpu_metrics_set = set;
	return 0;
}

int gt_envconf_set(struct gt_envconf *cfg, enum gt_envconf_key key, const char *value,
                   const char **hint)
{
	static const char *const api_words[] = {"launch", "all", "none", NULL};
	/* in enum gt_api_source order */
	static const char *const source_words[] = {"callback", "activity", NULL};
	static const char *const graph_words[] = {"graph", "node", NULL};
	int r = -EINVAL;

	if ((unsigned)key >= GT_ENVCONF_MAX)
		return -EINVAL;
	if (value) {
		switch (key) {
		case GT_ENVCONF_TRACE:
			r = parse_trace(value, &cfg->trace);
			break;
		case GT_ENVCONF_API:
			r = parse_word(value, api_words);
			if (r >= 0)
				cfg->api_filter = (unsigned)r;
			break;
		case GT_ENVCONF_API_SOURCE:
			r = parse_word(value, source_words);
			if (r >= 0) {
				cfg->api_source = (unsigned)r;
				cfg->api_source_set = true;
			}
			break;
		case GT_ENVCONF_BUFFER_SIZE: {
			uint64_t v;

			r = parse_bytes(value, GT_RING_MIN_BYTES, GT_RING_MAX_BYTES, &v);
			if (r >= 0)
				cfg->ring_bytes = (size_t)v;
			break;
		}
		case GT_ENVCONF_FLUSH_MS:
			r = parse_flush_ms(value, &cfg->flush_ms);
			break;
		case GT_ENVCONF_CAPTURE:
			r = parse_capture(value, cfg);
			break;
		case GT_ENVCONF_GRAPH:
			r = parse_word(value, graph_words);
			if (r >= 0)
				cfg->graph_nodes = r == 1;
			break;
		case GT_ENVCONF_WRITE_QUEUE:
			r = parse_bytes(value, 0, GT_WRITE_QUEUE_MAX_BYTES,
			                &cfg->write_queue_bytes);
			break;
		case GT_ENVCONF_WRITE_TIMEOUT:
			r = parse_seconds(value, &cfg->write_timeout_ns);
			break;
		case GT_ENVCONF_BACKTRACE:
			r = parse_backtrace(value, cfg);
			break;
		case GT_ENVCONF_GPU_METRICS: {
			struct gt_envconf tmp = *cfg;

			r = parse_gpu_metrics(value, &tmp);
			if (r >= 0)
				*cfg = tmp;
			break;
		}
		default:
			break;
		}
	}
	if (r < 0) {
		if (hint)
			*hint = hints[key];
		return -EINVAL;
	}
	return 0;
}

int gt_envconf_parse(struct gt_envconf *cfg, gt_getenv_fn get, char *msg, size_t bytes)
{
	const char *v, *hint;
	bool bad = false;

	gt_envconf_defaults(cfg);
	v = get(GT_ENV_DEBUG);
	cfg->debug = v && *v && strcmp(v, "0") != 0;
	for (unsigned k = 0; k < GT_ENVCONF_MAX; k++) {
		v = get(names[k]);
		if (!v || !*v || gt_envconf_set(cfg, (enum gt_envconf_key)k, v, &hint) == 0)
			continue;
		/* the first problem is the one reported */
		if (!bad && bytes)
			snprintf(msg, bytes, "%s: '%s' is not valid; %s", names[k], v, hint);
		bad = true;
	}
	/* A capture range cuts API records at the call that opens or closes it; activity records
	 * reach us later, in buffers, so inside a capture range they come from callbacks. */
	if (cfg->capture != GT_CAPTURE_NONE && !cfg->api_source_set)
		cfg->api_source = GT_API_SOURCE_CALLBACK;
	/* an NVTX capture range needs the NVTX collector, whatever GPUTRACE_TRACE says */
	if (cfg->capture == GT_CAPTURE_NVTX)
		cfg->trace |= GT_TRACE_NVTX;
	return bad ? -EINVAL : 0;
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

int gt_envconf_api_is_launch(const char *name)
{
	if (!name)
		return 0;
	for (size_t i = 0; i < ARRAY_LEN(launch_prefixes); i++)
		if (strncmp(name, launch_prefixes[i], strlen(launch_prefixes[i])) == 0)
			return 1;
	return 0;
}

unsigned gt_envconf_backtrace_kind(const char *name)
{
	static const struct {
		const char *prefix;
		unsigned kind;
	} kinds[] = {
	        {"cudaLaunch", GT_BT_KERNEL},         {"cuLaunch", GT_BT_KERNEL},
	        {"cudaGraphLaunch", GT_BT_KERNEL},    {"cuGraphLaunch", GT_BT_KERNEL},
	        {"cudaMemcpy", GT_BT_MEMORY},         {"cuMemcpy", GT_BT_MEMORY},
	        {"cudaMemset", GT_BT_MEMORY},         {"cuMemset", GT_BT_MEMORY},
	        {"cudaMalloc", GT_BT_MEMORY},         {"cuMemAlloc", GT_BT_MEMORY},
	        {"cudaFree", GT_BT_MEMORY},           {"cuMemFree", GT_BT_MEMORY},
	        {"cudaHostAlloc", GT_BT_MEMORY},      {"cuMemHostAlloc", GT_BT_MEMORY},
	        {"cudaMemPrefetch", GT_BT_MEMORY},    {"cuMemPrefetch", GT_BT_MEMORY},
	        {"cuMemCreate", GT_BT_MEMORY},        {"cuMemRelease", GT_BT_MEMORY},
	        {"cudaDeviceSynchronize", GT_BT_SYNC}, {"cudaThreadSynchronize", GT_BT_SYNC},
	        {"cudaStreamSynchronize", GT_BT_SYNC}, {"cudaEventSynchronize", GT_BT_SYNC},
	        {"cudaStreamWaitEvent", GT_BT_SYNC},  {"cuCtxSynchronize", GT_BT_SYNC},
	        {"cuStreamSynchronize", GT_BT_SYNC},  {"cuEventSynchronize", GT_BT_SYNC},
	        {"cuStreamWaitEvent", GT_BT_SYNC},
	};

	if (!name)
		return GT_BT_OTHER;
	for (size_t i = 0; i < ARRAY_LEN(kinds); i++)
		if (strncmp(name, kinds[i].prefix, strlen(kinds[i].prefix)) == 0)
			return kinds[i].kind;
	return GT_BT_OTHER;
}
