/* bench-sqlite: rows per second of the SQLite export (exporters/formats/sqlite/sqlite.c) on one
 * core, on a synthetic trace shaped like a training loop (tests/trace-synth.h: a cudaLaunchKernel
 * record per kernel, a copy every 64 kernels). Writes the trace to a temporary directory,
 * exports it once, and prints records, rows, CPU seconds for the load and for the indexes,
 * and rows per CPU second. Peak RSS: run it under /usr/bin/time -v (docs/performance.md).
 *   bench-sqlite [RECORDS] [--cache-mib N] [--keep DIR] [--steps] [--processes N]
 * --steps adds an NVTX range "step" per process and step (for docs/sql.md's NVTX queries
 * on the kept database). --processes: traced processes taking turns (default 8, 1 to 64);
 * with one, each table's rows come in the order of its index's key.
 * Runs as a benchmark program. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "gputrace/trace.h"
#include "sql.h"
#include "trace-synth.h"

static double now_s(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	struct synth_opts o = {
	        .kernels = 0, .names = 300, .processes = 8, .seed = 1, .api = true, .memcpy = true};
	struct gt_trace_info info = {.clock_id = GT_CLOCK_MONOTONIC,
	                             .start_trace_ns = SYNTH_START_NS,
	                             .hostname = "bench",
	                             .cmdline = "bench-sqlite",
	                             .tool_version = GT_VERSION};
	struct gt_sql_export_options so = {.demangle = 1};
	struct gt_sql_export_result res = {0};
	uint64_t want = 10000000, n = 0;
	char dir[] = "/tmp/bench-sqlite-XXXXXX", trace[64], db[64];
	const char *keep = NULL, *msg = NULL;
	struct gt_writer *w;
	struct gt_reader *r;
	union synth_buf b;
	struct synth s;
	double wall, cpu;
	int ret;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--cache-mib") == 0 && i + 1 < argc)
			so.cache_mib = atoi(argv[++i]);
		else if (strcmp(argv[i], "--keep") == 0 && i + 1 < argc)
			keep = argv[++i];
		else if (strcmp(argv[i], "--steps") == 0)
			o.steps = true;
		else if (strcmp(argv[i], "--processes") == 0 && i + 1 < argc)
			o.processes = (unsigned)atoi(argv[++i]);
		else
			want = strtoull(argv[i], NULL, 10);
	}
	/* records per kernel: the kernel, its launch, and a copy every 64 kernels */
	o.kernels = want * 128 / 257;
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(trace, sizeof(trace), "%s/bench.gtrace", keep ? keep : dir);
	snprintf(db, sizeof(db), "%s/bench.sqlite", keep ? keep : dir);
	ret = gt_writer_open(trace, &info, NULL, &w);
	if (ret < 0) {
		fprintf(stderr, "bench-sqlite: %s: %s\n", trace, strerror(-ret));
		return 1;
	}
	synth_init(&s, &o);
	while (synth_next(&s, &b) && ret == 0) {
		ret = gt_writer_write(w, &b.rec.hdr);
		n++;
	}
	if (ret < 0 || gt_writer_close(w) < 0) {
		fprintf(stderr, "bench-sqlite: writing the trace failed\n");
		return 1;
	}
	ret = gt_reader_open(trace, &r, &msg);
	if (ret < 0) {
		fprintf(stderr, "bench-sqlite: %s: %s\n", trace, msg);
		return 1;
	}
	wall = now_s(CLOCK_MONOTONIC);
	cpu = now_s(CLOCK_PROCESS_CPUTIME_ID);
	ret = gt_sql_export(r, db, &so, &res, &msg);
	cpu = now_s(CLOCK_PROCESS_CPUTIME_ID) - cpu;
	wall = now_s(CLOCK_MONOTONIC) - wall;
	gt_reader_close(r);
	if (ret < 0) {
		fprintf(stderr, "bench-sqlite: export failed: %s\n", msg);
		return 1;
	}
	printf("records %llu, rows %llu, database %.1f MB\n", (unsigned long long)n,
	       (unsigned long long)res.rows, (double)res.bytes / 1e6);
	printf("load:    %.2f s CPU, %.2f M rows/s\n", (double)res.load_cpu_ns / 1e9,
	       (double)res.rows / ((double)res.load_cpu_ns / 1e9) / 1e6);
	printf("indexes: %.2f s CPU\n", (double)res.index_cpu_ns / 1e9);
	printf("total:   %.2f s CPU, %.2f s wall, %.2f M rows/s per CPU second\n", cpu, wall,
	       (double)res.rows / cpu / 1e6);
	if (!keep) {
		unlink(db);
		unlink(trace);
		rmdir(dir);
	}
	return 0;
}
