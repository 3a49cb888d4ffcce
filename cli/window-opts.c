/* The window options shared by `gputrace export` and `gputrace view`, resolved against the
 * trace (src/ops/window.c does the work), and the warning before an export too large for the
 * Perfetto UI, with the windows that would fit. Runs in the CLI. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "options.h"
#include "status-line.h"
#include "steps.h"
#include "text.h"
#include "window-opts.h"

#define NS_PER_S 1000000000ull

/* What the Perfetto UI opens: about 2 GB of protobuf held in the browser (Perfetto's
 * "Visualising large traces"); a JSON trace costs it more memory per event, and viewers often
 * fail above 500 MB of it. */
#define UI_PERFETTO_BYTES (2ull << 30)
#define UI_JSON_BYTES     (500ull * 1000 * 1000)

/* Output bytes per record of the trace, the most measured on the traces of tests/data
 * (H200, docs/performance.md): perfetto 46 to 61, chrome 240 to 330. */
#define PERFETTO_BYTES_PER_RECORD 61u
#define JSON_BYTES_PER_RECORD     330u

/* The most the viewer is taken to hold, in bytes of either format, instead of the above (a
 * browser given more memory; and the tests, which cannot write gigabytes). */
#define UI_LIMIT_ENV "GPUTRACE_UI_LIMIT"

/* Windows offered are sized to this share of the limit: estimates are estimates. */
#define FIT_PERCENT 80u

int gt_cli_window_option(struct gt_cli_window *cw, int c, const char *arg, const char *cmd)
{
	const char *what;
	int r;

	switch (c) {
	case GT_OPT_FROM:
		cw->from = arg;
		return 1;
	case GT_OPT_TO:
		cw->to = arg;
		return 1;
	case GT_OPT_NVTX: {
		struct gt_nvtx_spec spec;

		if (gt_window_parse_nvtx(arg, &spec) < 0) {
			gt_cli_error("%s: --nvtx: '%s' is not valid; use NAME, NAME:N or NAME:N..M "
			             "(e.g. ProfilerStep:100..105)",
			             cmd, arg);
			return -1;
		}
		cw->nvtx = arg;
		return 1;
	}
	case GT_OPT_PID:
		what = "--pid";
		r = gt_window_parse_ids(arg, false, cw->w.pids, &cw->w.npids);
		break;
	case GT_OPT_RANK:
		what = "--rank";
		r = gt_window_parse_ids(arg, true, cw->w.ranks, &cw->w.nranks);
		break;
	case GT_OPT_DEVICE:
		what = "--device";
		r = gt_window_parse_ids(arg, false, cw->w.devices, &cw->w.ndevices);
		break;
	case GT_OPT_STREAM:
		what = "--stream";
		r = gt_window_parse_ids(arg, false, cw->w.streams, &cw->w.nstreams);
		break;
	default:
		return 0;
	}
	if (r == -E2BIG) {
		gt_cli_error("%s: %s: at most %u values in all", cmd, what, GT_WINDOW_MAX_IDS);
		return -1;
	}
	if (r < 0) {
		gt_cli_error("%s: %s: '%s' is not valid; use a number or a comma-separated list "
		             "(e.g. 0,2)",
		             cmd, what, arg);
		return -1;
	}
	return 1;
}

bool gt_cli_window_given(const struct gt_cli_window *cw)
{
	return cw->from || cw->to || cw->nvtx || gt_window_any(&cw->w);
}

/* "12.345 s" after the trace's zero (docs/cli.md, "Time"), into buf. */
static const char *rel(uint64_t t, uint64_t zero, char *buf, size_t bytes)
{
	if (t < zero)
		snprintf(buf, bytes, "-%.3f s", (double)(zero - t) / NS_PER_S);
	else
		snprintf(buf, bytes, "%.3f s", (double)(t - zero) / NS_PER_S);
	return buf;
}

/* The trace's time base; prints what went wrong. Returns a GT_EXIT_* code. */
static int times_of(struct gt_reader *r, const char *trace, const char *cmd,
                    struct gt_trace_times *tt)
{
	int ret = gt_reader_times(r, tt);

	if (ret < 0) {
		gt_cli_error("%s: reading %s: %s", cmd, trace, strerror(-ret));
		return GT_EXIT_BAD_TRACE;
	}
	return GT_EXIT_OK;
}

/* "from DATE (0.000 s) to DATE (13.601 s)": where the trace's records lie, on both clocks. */
static const char *trace_extent(const struct gt_trace_times *tt, char *buf, size_t bytes)
{
	char a[48], b[48];

	snprintf(buf, bytes, "from %s (0.000 s) to %s (%.3f s)",
	         gt_fmt_date(tt->zero_realtime_ns, a, sizeof(a)),
	         gt_fmt_date(tt->zero_realtime_ns ? tt->zero_realtime_ns + tt->span_ns : 0, b,
	                     sizeof(b)),
	         (double)tt->span_ns / NS_PER_S);
	return buf;
}

/* --from/--to against the trace: a window that ends before it starts (`after` false) or
 * starts after it ends (`after` true) selects nothing: an error that says where the trace is.
 * Returns a GT_EXIT_* code. */
static int check_outside(const struct gt_cli_window *cw, const struct gt_trace_times *tt,
                         bool after, const char *trace, const char *cmd)
{
	bool before = !after && cw->to && cw->w.to_ns <= tt->zero_ns;
	char ext[160];

	if (tt->first_ns == UINT64_MAX)
		return GT_EXIT_OK; /* nothing in the trace has a time */
	if (!before && !(after && cw->from && cw->w.from_ns > tt->last_ns))
		return GT_EXIT_OK;
	gt_cli_error("%s: %s%s%s%s%s selects nothing: it is %s %s, which runs %s", cmd,
	             cw->from ? "--from " : "", cw->from ? cw->from : "",
	             cw->from && cw->to ? " " : "", cw->to ? "--to " : "", cw->to ? cw->to : "",
	             before ? "before" : "after", trace, trace_extent(tt, ext, sizeof(ext)));
	return GT_EXIT_USAGE;
}

/* A window that reaches past an edge of the trace is cut there, and said. */
static void clamp_to_trace(struct gt_cli_window *cw, const struct gt_trace_times *tt,
                           const char *trace, const char *cmd)
{
	char t[48];

	if (tt->first_ns == UINT64_MAX)
		return;
	if (cw->from && cw->w.from_ns < tt->zero_ns) {
		gt_cli_warn(
		        "%s: --from %s is before %s starts; the window starts with it (0.000 s, "
		        "%s)",
		        cmd, cw->from, trace, gt_fmt_date(tt->zero_realtime_ns, t, sizeof(t)));
		cw->w.from_ns = tt->zero_ns;
	}
	if (cw->to && cw->w.to_ns > tt->last_ns + 1) {
		gt_cli_warn("%s: --to %s is after %s ends; the window ends with it (%.3f s)", cmd,
		            cw->to, trace, (double)tt->span_ns / NS_PER_S);
		cw->w.to_ns = tt->last_ns + 1;
	}
}

static int time_option(const char *opt, const char *arg, struct gt_reader *r, uint64_t zero,
                       uint64_t base, uint64_t *ns, const char *cmd)
{
	int ret = gt_window_parse_time(arg, gt_reader_header(r), zero, base, ns);

	if (ret == -ERANGE)
		gt_cli_error("%s: %s: '%s' is too large", cmd, opt, arg);
	else if (ret < 0)
		gt_cli_error("%s: %s: '%s' is not a time; use seconds from the trace's zero (2.5, "
		             "90s, 1m30s, 250ms), @NS on the trace clock, or a date "
		             "(2024-05-01T12:00:03Z)",
		             cmd, opt, arg);
	return ret;
}

/* ---- steps ------------------------------------------------------------------------------- */

/* The training steps of r (exporters/model/steps.c: ProfilerStep#N, step, train_step, iteration),
 * found in the chunks that hold NVTX ranges only. Returns 0 and *ret (free it) or -errno. */
static int scan_steps(struct gt_reader *r, struct gt_steps **ret)
{
	int err = gt_window_nvtx_only(r);

	if (err == 0)
		err = gt_steps_scan(r, NULL, ret);
	gt_reader_set_filter(r, NULL);
	return err;
}

/* The first n steps in every process: their numbers, from the smallest any process has, and
 * the time from the earliest start to the latest end among them. */
struct first_steps {
	int64_t first, last; /* step numbers: those asked for, then those there are */
	uint64_t steps;      /* last - first + 1 once found: fewer than asked for at the end */
	uint64_t from_ns, to_ns;
	size_t ranges;
	unsigned processes;
};

static bool first_steps_of(const struct gt_steps *st, uint64_t n, struct first_steps *fs)
{
	int64_t base = INT64_MAX, top;

	memset(fs, 0, sizeof(*fs));
	fs->from_ns = UINT64_MAX;
	for (size_t i = 0; i < gt_steps_processes(st); i++) {
		uint32_t pid;
		size_t k;
		const struct gt_step *s = gt_steps_at(st, i, &pid, &k);

		for (size_t j = 0; j < k; j++)
			if (s[j].number < base)
				base = s[j].number;
	}
	if (base == INT64_MAX)
		return false;
	fs->first = base;
	fs->last = base + (int64_t)n - 1;
	top = base;
	for (size_t i = 0; i < gt_steps_processes(st); i++) {
		uint32_t pid;
		size_t k, in = 0;
		const struct gt_step *s = gt_steps_at(st, i, &pid, &k);

		for (size_t j = 0; j < k; j++) {
			uint64_t end =
			        s[j].end_ns > s[j].start_ns ? s[j].end_ns : s[j].start_ns + 1;

			if (s[j].number < fs->first || s[j].number > fs->last)
				continue;
			in++;
			top = s[j].number > top ? s[j].number : top;
			fs->from_ns = s[j].start_ns < fs->from_ns ? s[j].start_ns : fs->from_ns;
			fs->to_ns = end > fs->to_ns ? end : fs->to_ns;
		}
		fs->ranges += in;
		fs->processes += in > 0;
	}
	fs->last = top;
	fs->steps = (uint64_t)(top - fs->first + 1);
	return fs->ranges > 0;
}

int gt_cli_window_resolve(struct gt_cli_window *cw, struct gt_reader *r, const char *trace,
                          const char *cmd)
{
	struct gt_trace_times tt;
	uint64_t zero;
	char a[40], b[40];
	int ret;

	cw->what[0] = '\0';
	ret = times_of(r, trace, cmd, &tt);
	if (ret != GT_EXIT_OK)
		return ret;
	zero = tt.zero_ns;
	if (cw->nvtx && (cw->from || cw->to)) {
		gt_cli_error("%s: --nvtx and --from/--to both choose the time; give one of them",
		             cmd);
		return GT_EXIT_USAGE;
	}
	if (cw->from && time_option("--from", cw->from, r, zero, 0, &cw->w.from_ns, cmd) < 0)
		return GT_EXIT_USAGE;
	if (cw->to && time_option("--to", cw->to, r, zero, cw->w.from_ns, &cw->w.to_ns, cmd) < 0)
		return GT_EXIT_USAGE;
	/* dates before the trace all come to its clock's 0: say so before comparing them */
	if ((ret = check_outside(cw, &tt, false, trace, cmd)) != GT_EXIT_OK)
		return ret;
	if (cw->to && cw->w.to_ns <= cw->w.from_ns) {
		gt_cli_error("%s: --to %s is not after --from %s", cmd, cw->to,
		             cw->from ? cw->from : "(the start)");
		return GT_EXIT_USAGE;
	}
	if (cw->to && cw->w.to_ns == 0)
		cw->w.to_ns = 1; /* 0 means "to the end": a time before the trace keeps nothing */
	if ((ret = check_outside(cw, &tt, true, trace, cmd)) != GT_EXIT_OK)
		return ret;
	clamp_to_trace(cw, &tt, trace, cmd);
	if (cw->nvtx) {
		struct gt_nvtx_spec spec;
		struct gt_nvtx_found f;

		gt_window_parse_nvtx(cw->nvtx, &spec); /* checked when the option was taken */
		ret = gt_window_find_nvtx(r, &cw->w, &spec, &f);
		if (ret < 0) {
			gt_cli_error("%s: reading %s: %s", cmd, trace, strerror(-ret));
			return GT_EXIT_BAD_TRACE;
		}
		if (!f.ranges && !f.named) {
			struct gt_steps *st = NULL;
			char names[1024];

			if (gt_window_nvtx_names(r, names, sizeof(names), 12) <= 0)
				gt_cli_error("%s: --nvtx: no NVTX range named '%s' in %s: it has no "
				             "NVTX ranges",
				             cmd, spec.name, trace);
			else if (scan_steps(r, &st) == 0 && gt_steps_count(st))
				gt_cli_error(
				        "%s: --nvtx: no NVTX range named '%s' in %s; its ranges: %s; "
				        "its steps are those of the %s family (%zu of them; "
				        "gputrace view --first-steps N finds them)",
				        cmd, spec.name, trace, names,
				        gt_steps_family_name(gt_steps_family(st)),
				        gt_steps_count(st));
			else
				gt_cli_error("%s: --nvtx: no NVTX range named '%s' in %s; its ranges: "
				             "%s",
				             cmd, spec.name, trace, names);
			gt_steps_free(st);
			return GT_EXIT_USAGE;
		}
		if (!f.ranges) {
			gt_cli_error("%s: --nvtx: %s has %llu ranges named '%s', numbered %llu to "
			             "%llu; none in %s",
			             cmd, trace, (unsigned long long)f.named, spec.name,
			             (unsigned long long)f.named_first,
			             (unsigned long long)f.named_last, cw->nvtx);
			return GT_EXIT_USAGE;
		}
		/* a range asked for past the last one there is: say what the window holds */
		if (spec.last != UINT64_MAX && (spec.last > f.last || spec.first < f.first))
			gt_cli_warn("%s: --nvtx %s: %s has ranges '%s' numbered %llu to %llu only: "
			            "the window holds %llu..%llu",
			            cmd, cw->nvtx, trace, spec.name,
			            (unsigned long long)f.named_first,
			            (unsigned long long)f.named_last, (unsigned long long)f.first,
			            (unsigned long long)f.last);
		cw->w.from_ns = f.from_ns;
		cw->w.to_ns = f.to_ns > f.from_ns ? f.to_ns : f.from_ns + 1;
		snprintf(cw->what, sizeof(cw->what),
		         "%s %llu..%llu (%llu range%s in %u process%s), %s to %s (--from @%llu "
		         "--to @%llu)",
		         spec.name, (unsigned long long)f.first, (unsigned long long)f.last,
		         (unsigned long long)f.ranges, f.ranges == 1 ? "" : "s", f.processes,
		         f.processes == 1 ? "" : "es", rel(f.from_ns, zero, a, sizeof(a)),
		         rel(cw->w.to_ns, zero, b, sizeof(b)), (unsigned long long)cw->w.from_ns,
		         (unsigned long long)cw->w.to_ns);
	} else if (cw->from || cw->to) {
		snprintf(cw->what, sizeof(cw->what), "%s to %s",
		         cw->from ? rel(cw->w.from_ns, zero, a, sizeof(a)) : "the start",
		         cw->to ? rel(cw->w.to_ns, zero, b, sizeof(b)) : "the end");
	}
	return GT_EXIT_OK;
}

/* ---- too big for the viewer ------------------------------------------------------------ */

/* "42s", "1.5s", "250ms": a duration as --to takes it. */
static const char *dur(uint64_t ns, char *buf, size_t bytes)
{
	if (ns >= 10 * NS_PER_S)
		snprintf(buf, bytes, "%llus", (unsigned long long)(ns / NS_PER_S));
	else if (ns >= NS_PER_S)
		snprintf(buf, bytes, "%.1fs", (double)(ns / (NS_PER_S / 10)) / 10);
	else
		snprintf(buf, bytes, "%llums", (unsigned long long)(ns / 1000000));
	return buf;
}

/* The longest stretch from `from` whose records fit `records`, by bisection on the index. */
static uint64_t longest_fit(struct gt_reader *r, uint64_t from, uint64_t end, uint64_t records)
{
	uint64_t lo = from, hi = end;

	while (hi - lo > 1000000) {
		struct gt_window w = {.from_ns = from, .to_ns = lo + (hi - lo) / 2};
		uint64_t n;

		if (gt_window_estimate(r, &w, &n) < 0)
			return from;
		if (n <= records)
			lo = w.to_ns;
		else
			hi = w.to_ns;
	}
	return lo;
}

bool gt_cli_window_too_big(struct gt_reader *r, const struct gt_cli_window *cw, const char *format,
                           uint64_t max_bytes, const char *trace, bool view)
{
	char again[4200];
	bool json = strcmp(format, "chrome") == 0;
	uint64_t limit = json ? UI_JSON_BYTES : UI_PERFETTO_BYTES;
	uint64_t per = json ? JSON_BYTES_PER_RECORD : PERFETTO_BYTES_PER_RECORD;
	uint64_t records, fit, zero, end;
	struct gt_trace_times tt;
	struct gt_steps *st = NULL;
	char a[32], b[32], c[32];
	uint64_t piece_mib;
	const char *env = getenv(UI_LIMIT_ENV);

	if (!json && strcmp(format, "perfetto") != 0)
		return false;
	if (gt_reader_times(r, &tt) < 0)
		return false;
	zero = tt.zero_ns;
	if (env && *env && gt_opt_size(env, 1, UINT64_MAX, &limit) < 0)
		gt_cli_warn("%s: '%s' is not a size (e.g. 4G); using %llu bytes", UI_LIMIT_ENV, env,
		            (unsigned long long)(json ? UI_JSON_BYTES : UI_PERFETTO_BYTES));
	if (max_bytes && max_bytes <= limit)
		return false; /* cut into pieces that each open */
	if (gt_window_estimate(r, &cw->w, &records) < 0 || records * per <= limit)
		return false;
	fit = limit / 100 * FIT_PERCENT / per;
	if (view)
		snprintf(again, sizeof(again), "gputrace view %s", trace);
	else
		snprintf(again, sizeof(again), "gputrace export %s -f %s", trace, format);
	gt_cli_warn("%s%s as %s: about %s (%s records at about %llu bytes each), more than the "
	            "Perfetto UI holds (about %s); it would open only in trace_processor",
	            trace, gt_window_any(&cw->w) ? ", this window," : "",
	            json ? "JSON" : "protobuf", gt_fmt_bytes(records * per, a, sizeof(a)),
	            gt_fmt_count(records, b, sizeof(b)), (unsigned long long)per,
	            gt_fmt_bytes(limit, c, sizeof(c)));
	fprintf(stderr, "gputrace: windows that fit:\n");
	if (!gt_window_timed(&cw->w) && scan_steps(r, &st) == 0 && gt_steps_count(st)) {
		/* as many of the first 10 steps as fit, counted (what is offered must fit) */
		for (uint64_t n = 10; n >= 1; n /= 2) {
			struct gt_window w = cw->w;
			struct first_steps fs;
			uint64_t in;

			if (!first_steps_of(st, n, &fs))
				break;
			w.from_ns = fs.from_ns;
			w.to_ns = fs.to_ns;
			if (gt_window_count(r, &w, fit, &in) < 0 || in > fit)
				continue;
			n = (uint64_t)(fs.last - fs.first + 1);
			if (view)
				fprintf(stderr,
				        "gputrace:   the first %llu steps: %s --first-steps %llu",
				        (unsigned long long)n, again, (unsigned long long)n);
			else if (gt_steps_family(st) == GT_STEPS_PROFILER_STEP)
				/* ProfilerStep#K: --nvtx numbers them by K, as the steps module */
				fprintf(stderr,
				        "gputrace:   the first %llu steps: %s --nvtx "
				        "ProfilerStep:%lld..%lld",
				        (unsigned long long)n, again, (long long)fs.first,
				        (long long)fs.last);
			else
				fprintf(stderr,
				        "gputrace:   the first %llu steps: %s --from @%llu --to "
				        "@%llu",
				        (unsigned long long)n, again, (unsigned long long)w.from_ns,
				        (unsigned long long)w.to_ns);
			fprintf(stderr, "  (about %s)\n", gt_fmt_bytes(in * per, a, sizeof(a)));
			break;
		}
	}
	gt_steps_free(st);
	end = tt.last_ns ? tt.last_ns : zero;
	{
		uint64_t from = cw->w.from_ns ? cw->w.from_ns : zero;
		uint64_t t = longest_fit(r, from, cw->w.to_ns ? cw->w.to_ns : end, fit);
		struct gt_window w = cw->w;
		uint64_t in = 0;

		/* the estimate spreads each chunk's records evenly over its time range; count
		 * the stretch it found, and search from there for one that fits and is not much
		 * shorter than it could be (counting stops at 4 times the fit) */
		uint64_t lo = from, hi = UINT64_MAX, in_lo = 0;
		uint64_t last = cw->w.to_ns ? cw->w.to_ns : end + 1; /* no use going past it */

		w.from_ns = from;
		for (int tries = 0; tries < 10 && t > from; tries++) {
			uint64_t next;

			w.to_ns = t;
			if (gt_window_count(r, &w, 4 * fit, &in) < 0)
				break;
			if (in <= fit) {
				lo = t;
				in_lo = in;
				if (in >= fit / 10 * 7 || t >= last)
					break;
				next = in ? from + (uint64_t)((long double)(t - from) * 0.9L * fit /
				                              in)
				          : from + 2 * (t - from);
				if (next > last)
					next = last;
			} else {
				hi = t;
				next = from + (uint64_t)((long double)(t - from) *
				                         (in <= 4 * fit ? 0.9L * fit / in : 0.25L));
			}
			if (next <= lo || next >= hi) /* outside what is known: halve it */
				next = lo + ((hi == UINT64_MAX ? 2 * (t - lo) : hi - lo) / 2);
			if (next <= lo || (hi != UINT64_MAX && next >= hi))
				break;
			t = next;
		}
		t = lo;
		in = in_lo;
		if (t > from && in && in <= fit)
			fprintf(stderr,
			        "gputrace:   the first %s: %s --from %s --to +%s  (about %s)\n",
			        dur(t - from, b, sizeof(b)), again, cw->from ? cw->from : "0",
			        dur(t - from, c, sizeof(c)), gt_fmt_bytes(in * per, a, sizeof(a)));
	}
	/* pieces of half the limit, in whole MiB (at least 1M, what --max-size takes) */
	piece_mib = limit / 2 >> 20 ? limit / 2 >> 20 : 1;
	if (piece_mib >= 1024 && piece_mib % 1024 == 0)
		snprintf(c, sizeof(c), "%lluG", (unsigned long long)(piece_mib >> 10));
	else
		snprintf(c, sizeof(c), "%lluM", (unsigned long long)piece_mib);
	if (view)
		fprintf(stderr,
		        "gputrace:   all of it, in pieces that each open: gputrace export %s -f "
		        "perfetto --max-size %s, then view each piece\n",
		        trace, c);
	else if (!json)
		fprintf(stderr,
		        "gputrace:   all of it, in pieces that each open: %s --max-size %s\n",
		        again, c);
	return true;
}

int gt_cli_window_first_steps(struct gt_cli_window *cw, struct gt_reader *r, uint64_t n,
                              const char *trace, const char *cmd)
{
	struct gt_trace_times tt;
	struct gt_steps *st = NULL;
	struct first_steps fs;
	char a[40], b[40];
	int ret;

	ret = times_of(r, trace, cmd, &tt);
	if (ret != GT_EXIT_OK)
		return ret;
	ret = scan_steps(r, &st);
	if (ret < 0) {
		gt_cli_error("%s: reading %s: %s", cmd, trace, strerror(-ret));
		return GT_EXIT_BAD_TRACE;
	}
	if (!gt_steps_count(st) || !first_steps_of(st, n, &fs)) {
		gt_cli_error(
		        "%s: --first-steps: %s has no steps (NVTX ranges named ProfilerStep#N, "
		        "step, train_step or iteration, as docs/exporters.md says); choose a "
		        "window with --from and --to",
		        cmd, trace);
		gt_steps_free(st);
		return GT_EXIT_USAGE;
	}
	if (fs.steps < n)
		gt_cli_warn("%s: --first-steps %llu: %s has %llu steps; the window holds them all",
		            cmd, (unsigned long long)n, trace, (unsigned long long)fs.steps);
	cw->w.from_ns = fs.from_ns;
	cw->w.to_ns = fs.to_ns;
	snprintf(cw->what, sizeof(cw->what),
	         "the first %llu steps (%s %lld..%lld: %zu range%s in %u process%s), %s to %s "
	         "(--from @%llu --to @%llu)",
	         (unsigned long long)(fs.steps < n ? fs.steps : n),
	         gt_steps_family_name(gt_steps_family(st)), (long long)fs.first, (long long)fs.last,
	         fs.ranges, fs.ranges == 1 ? "" : "s", fs.processes, fs.processes == 1 ? "" : "es",
	         rel(fs.from_ns, tt.zero_ns, a, sizeof(a)), rel(fs.to_ns, tt.zero_ns, b, sizeof(b)),
	         (unsigned long long)fs.from_ns, (unsigned long long)fs.to_ns);
	gt_steps_free(st);
	return GT_EXIT_OK;
}
