/* Export benchmark: events per second and peak RSS of the chrome and perfetto exporters
 * on a synthetic trace shaped like a training loop (tests/export-fixture.h: launches with
 * their kernels, copies, memsets, syncs, NVTX ranges, memory counters). Each export runs
 * in its own child process so its peak RSS is its own. Runs by hand:
 *   bench-export [--events N] [--out DIR] [--kernels K] [--reuse]
 * Output goes to /dev/null unless --out is given (then DIR/bench.json, DIR/bench.pftrace).
 * Chrome runs twice more: without steps (--no-steps: one pass instead of two) and, with
 * --out only, split by ranks into DIR/ranks/. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../tests/export-fixture.h"
#include "exporter.h"

struct run {
	double wall_s;
	double cpu_s;
	long maxrss_kb;
	struct gt_export_result res;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Run fn in a child; its result comes back through a pipe, its rusage through wait4. */
static int in_child(int (*fn)(void *ctx, struct gt_export_result *res), void *ctx, struct run *out)
{
	int fds[2];
	pid_t pid;
	int status;
	struct rusage ru;
	double t0;

	if (pipe(fds) < 0)
		return -errno;
	t0 = now_s();
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		struct gt_export_result res = {0};
		int ret = fn(ctx, &res);

		if (write(fds[1], &res, sizeof(res)) != (ssize_t)sizeof(res))
			_exit(2);
		_exit(ret < 0 ? 1 : 0);
	}
	close(fds[1]);
	if (read(fds[0], &out->res, sizeof(out->res)) != (ssize_t)sizeof(out->res))
		memset(&out->res, 0, sizeof(out->res));
	close(fds[0]);
	if (wait4(pid, &status, 0, &ru) < 0)
		return -errno;
	out->wall_s = now_s() - t0;
	out->cpu_s = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	             (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
	out->maxrss_kb = ru.ru_maxrss;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -EIO;
}

struct job {
	const char *trace;
	const char *format; /* NULL: read only */
	const char *output;
	const struct fx_opts *fx;
	int no_steps;   /* chrome: NVTX ranges as they are (no first pass) */
	unsigned split; /* chrome: enum gt_export_split */
};

static int do_write(void *ctx, struct gt_export_result *res)
{
	const struct job *j = ctx;

	(void)res;
	return fx_write(j->trace, j->fx);
}

static int do_export(void *ctx, struct gt_export_result *res)
{
	const struct job *j = ctx;
	struct gt_reader *r;
	const char *err = NULL;
	struct gt_export_options o = {
	        .output = j->output, .demangle = 1, .no_steps = j->no_steps, .split = j->split};
	int ret = gt_reader_open(j->trace, &r, &err);

	if (ret < 0) {
		fprintf(stderr, "bench-export: %s: %s\n", j->trace, err);
		return ret;
	}
	if (!j->format) {
		const union gt_record *rec;

		while ((ret = gt_reader_next(r, &rec)) > 0)
			res->events++;
	} else {
		ret = gt_export_run(gt_exporter_find(j->format), r, &o, res, &err);
		if (ret < 0)
			fprintf(stderr, "bench-export: %s: %s\n", j->format, err);
	}
	gt_reader_close(r);
	return ret;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
	        {"events", required_argument, NULL, 'n'},
	        {"kernels", required_argument, NULL, 'k'},
	        {"out", required_argument, NULL, 'o'},
	        {"reuse", no_argument, NULL, 'r'},
	        {NULL, 0, NULL, 0},
	};
	uint64_t want = 10000000;
	/* CLOCK_MONOTONIC two days after boot, as on a real machine */
	struct fx_opts fx = {.procs = 2,
	                     .gpu_batch = 8,
	                     .kernels = 16,
	                     .names = 300,
	                     .t0 = 172800ull * 1000000000ull};
	struct fx_expect e;
	const char *outdir = NULL;
	bool reuse = false;
	char trace[256], json[300], pft[300];
	struct job j = {.trace = trace, .fx = &fx};
	struct run w = {0}, rd = {0}, ch = {0}, pf = {0}, ns = {0}, sp = {0};
	char ranks[300];
	int c;

	while ((c = getopt_long(argc, argv, "n:k:o:r", longopts, NULL)) != -1) {
		switch (c) {
		case 'n':
			want = strtoull(optarg, NULL, 10);
			break;
		case 'k':
			fx.kernels = (unsigned)strtoul(optarg, NULL, 10);
			break;
		case 'o':
			outdir = optarg;
			break;
		case 'r':
			reuse = true;
			break;
		default:
			fprintf(stderr,
			        "usage: bench-export [--events N] [--kernels K] [--out DIR] "
			        "[--reuse]\n");
			return 64;
		}
	}
	if (fx.kernels < 1)
		fx.kernels = 1;
	{
		/* events grow linearly with steps (NVTX marks come every tenth), plus a few per
		 * process at the end */
		uint64_t fixed, ten;

		fx.iters = 0;
		fx_expect(&fx, &e);
		fixed = e.events;
		fx.iters = 10;
		fx_expect(&fx, &e);
		ten = e.events - fixed;
		fx.iters = (unsigned)((want - fixed + ten - 1) / ten * 10);
		fx_expect(&fx, &e);
	}
	snprintf(trace, sizeof(trace), "%s/gt-bench-export-%llu.gtrace",
	         getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (unsigned long long)e.events);
	if (!reuse || access(trace, R_OK) != 0) {
		if (in_child(do_write, &j, &w) < 0) {
			fprintf(stderr, "bench-export: writing %s failed\n", trace);
			return 1;
		}
		printf("wrote %s: %llu events in %.2f s\n", trace, (unsigned long long)e.events,
		       w.wall_s);
	}
	snprintf(json, sizeof(json), "%s/bench.json", outdir ? outdir : "");
	snprintf(pft, sizeof(pft), "%s/bench.pftrace", outdir ? outdir : "");
	if (in_child(do_export, &j, &rd) < 0)
		return 1;
	j.format = "chrome";
	j.output = outdir ? json : "/dev/null";
	if (in_child(do_export, &j, &ch) < 0)
		return 1;
	j.format = "perfetto";
	j.output = outdir ? pft : "/dev/null";
	if (in_child(do_export, &j, &pf) < 0)
		return 1;
	j.format = "chrome";
	j.output = outdir ? json : "/dev/null";
	j.no_steps = 1;
	if (in_child(do_export, &j, &ns) < 0)
		return 1;
	j.no_steps = 0;
	if (outdir) {
		snprintf(ranks, sizeof(ranks), "%s/ranks", outdir);
		j.output = ranks;
		j.split = GT_EXPORT_SPLIT_RANKS;
		if (in_child(do_export, &j, &sp) < 0)
			return 1;
	}

	printf("%-10s %12s %9s %9s %12s %9s %14s %9s\n", "exporter", "events", "wall s", "cpu s",
	       "events/s", "peak MB", "output bytes", "B/event");
	printf("%-10s %12llu %9.2f %9.2f %12.0f %9.1f %14s %9s\n", "read only",
	       (unsigned long long)rd.res.events, rd.wall_s, rd.cpu_s,
	       (double)rd.res.events / rd.wall_s, (double)rd.maxrss_kb / 1024.0, "-", "-");
	printf("%-10s %12llu %9.2f %9.2f %12.0f %9.1f %14llu %9.1f\n", "chrome",
	       (unsigned long long)ch.res.events, ch.wall_s, ch.cpu_s,
	       (double)ch.res.events / ch.wall_s, (double)ch.maxrss_kb / 1024.0,
	       (unsigned long long)ch.res.bytes, (double)ch.res.bytes / (double)ch.res.events);
	printf("%-10s %12llu %9.2f %9.2f %12.0f %9.1f %14llu %9.1f\n", "perfetto",
	       (unsigned long long)pf.res.events, pf.wall_s, pf.cpu_s,
	       (double)pf.res.events / pf.wall_s, (double)pf.maxrss_kb / 1024.0,
	       (unsigned long long)pf.res.bytes, (double)pf.res.bytes / (double)pf.res.events);
	printf("%-10s %12llu %9.2f %9.2f %12.0f %9.1f %14llu %9.1f\n", "chrome -n",
	       (unsigned long long)ns.res.events, ns.wall_s, ns.cpu_s,
	       (double)ns.res.events / ns.wall_s, (double)ns.maxrss_kb / 1024.0,
	       (unsigned long long)ns.res.bytes, (double)ns.res.bytes / (double)ns.res.events);
	if (outdir)
		printf("%-10s %12llu %9.2f %9.2f %12.0f %9.1f %14llu %9.1f\n", "chrome -s",
		       (unsigned long long)sp.res.events, sp.wall_s, sp.cpu_s,
		       (double)sp.res.events / sp.wall_s, (double)sp.maxrss_kb / 1024.0,
		       (unsigned long long)sp.res.bytes,
		       (double)sp.res.bytes / (double)sp.res.events);
	printf("(chrome -n: --no-steps; chrome -s: --split ranks, %u files)\n", sp.res.files);
	printf("perfetto / chrome size: %.3f\n", (double)pf.res.bytes / (double)ch.res.bytes);
	if (ch.res.events != e.events || pf.res.events != e.events) {
		fprintf(stderr, "bench-export: expected %llu events\n",
		        (unsigned long long)e.events);
		return 1;
	}
	return 0;
}
