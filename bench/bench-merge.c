/* gputrace merge benchmark: records/s of the k-way merge (src/ops/merge.c), wall and per CPU
 * second, its peak RSS, and for comparison reading the same inputs alone. Runs by hand:
 *   bench-merge [-i INPUTS] [-k KERNELS] [-r ROUNDS] [-a] [-n] [-s SLACK_NS] [-t THREADS]
 *               [-d DIR] [-o KEEP]
 * INPUTS synthetic traces (tests/trace-synth.h) of KERNELS kernels each (with -a a launch API
 * record per kernel and a copy every 64; -n NCCL collectives), each from another host with
 * its own clock offset, are written first by a child process, so that the peak RSS printed
 * is the merge's alone. THREADS defaults to the CLI's setting: 2 (the writer thread) where
 * there is more than one CPU. With -o the last round's merged file is kept as KEEP.
 * docs/performance.md ("Merge") quotes it; it also gives the instructions per record under
 * callgrind (--toggle-collect=gt_merge_write, =read_all). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gputrace/trace.h"
#include "merge.h"
#include "trace-synth.h"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* CPU seconds of this process, every thread. */
static double cpu_s(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
}

static int write_input(const char *path, unsigned i, const struct synth_opts *base)
{
	struct synth_opts o = *base;
	char host[32];
	struct gt_trace_info info = {.clock_id = GT_CLOCK_MONOTONIC, .cmdline = "bench"};
	struct gt_writer *w;
	union synth_buf b;
	struct synth s;

	snprintf(host, sizeof(host), "node-%04u", i);
	o.host = host;
	o.seed = i + 1;
	o.rank0 = (int32_t)i;
	o.world = 1;
	o.clock_offset_ns = (int64_t)i * 1000003;
	info.hostname = host;
	info.start_trace_ns = SYNTH_START_NS + (uint64_t)o.clock_offset_ns;
	info.start_realtime_ns = 1714564800000000000ull;
	if (gt_writer_open(path, &info, NULL, &w) < 0)
		return -1;
	synth_init(&s, &o);
	while (synth_next(&s, &b))
		if (gt_writer_write(w, &b.rec.hdr) < 0)
			return -1;
	return gt_writer_close(w);
}

/* Read every input to its end: what any consumer of the same inputs pays (a function of
 * its own, so that callgrind --toggle-collect=read_all counts it alone). */
__attribute__((noinline)) static uint64_t read_all(char **paths, unsigned n)
{
	uint64_t records = 0;

	for (unsigned i = 0; i < n; i++) {
		struct gt_reader *r;
		const union gt_record *rec;
		const char *msg;

		if (gt_reader_open(paths[i], &r, &msg) < 0)
			return 0;
		while (gt_reader_next(r, &rec) == 1)
			records++;
		gt_reader_close(r);
	}
	return records;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void usage(FILE *out)
{
	fputs("Usage: bench-merge [-i INPUTS] [-k KERNELS] [-r ROUNDS] [-a] [-n] [-s SLACK_NS]\n"
	      "                   [-t THREADS] [-d DIR] [-o KEEP]\n"
	      "Merge INPUTS synthetic traces of KERNELS kernels each; print records/s (wall and "
	      "per CPU second)\nand peak RSS. THREADS as gputrace merge --threads: 1 (one thread), "
	      "2 (a writer\n"
	      "thread), 3 or more (also reading ahead and compressing by pools); default: the "
	      "CPUs online,\nat most 8.\n",
	      out);
}

int main(int argc, char **argv)
{
	struct synth_opts o = {.kernels = 1250000, .names = 300, .processes = 1};
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned inputs = 8, threads = cpus < 1 ? 1 : cpus > 8 ? 8 : (unsigned)cpus;
	int rounds = 3, c;
	const char *dir = "/tmp", *keep = NULL;
	char **paths, out[4096];
	double *wall, *cpu, *rwall, *rcpu;
	uint64_t records = 0, slack_ns = 0;
	struct rusage ru;
	pid_t pid;
	int status;

	while ((c = getopt(argc, argv, "i:k:r:ans:t:d:o:h")) != -1) {
		switch (c) {
		case 't':
			threads = (unsigned)strtoul(optarg, NULL, 0);
			break;
		case 's':
			slack_ns = strtoull(optarg, NULL, 0);
			break;
		case 'i':
			inputs = (unsigned)strtoul(optarg, NULL, 0);
			break;
		case 'k':
			o.kernels = strtoull(optarg, NULL, 0);
			break;
		case 'r':
			rounds = atoi(optarg);
			break;
		case 'a':
			o.api = o.memcpy = true;
			break;
		case 'n':
			o.nccl_every = 50;
			break;
		case 'd':
			dir = optarg;
			break;
		case 'o':
			keep = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (!inputs || rounds < 1) {
		usage(stderr);
		return 2;
	}
	{
		struct rlimit rl;

		if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
			rl.rlim_cur = rl.rlim_max;
			setrlimit(RLIMIT_NOFILE, &rl);
		}
	}
	paths = calloc(inputs, sizeof(*paths));
	wall = calloc((size_t)rounds * 4, sizeof(*wall));
	if (!paths || !wall)
		return 1;
	cpu = wall + rounds;
	rwall = cpu + rounds;
	rcpu = rwall + rounds;
	for (unsigned i = 0; i < inputs; i++) {
		if (asprintf(&paths[i], "%s/bench-merge-%u-%u.gtrace", dir, (unsigned)getpid(), i) <
		    0)
			return 1;
	}
	snprintf(out, sizeof(out), "%s/bench-merge-%u.gtrace", dir, (unsigned)getpid());
	/* the inputs, by a child: its memory is not this process's peak */
	pid = fork();
	if (pid == 0) {
		for (unsigned i = 0; i < inputs; i++)
			if (write_input(paths[i], i, &o) < 0)
				_exit(1);
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "bench-merge: could not write the inputs in %s\n", dir);
		return 1;
	}
	for (int k = 0; k < rounds; k++) {
		struct gt_merge_options mo = {.align = o.nccl_every ? GT_MERGE_ALIGN_NCCL : 0,
		                              .slack_ns = slack_ns,
		                              .threads = threads};
		struct gt_merge_error e = {0};
		struct gt_merge *m;
		double t0, c0;

		/* reading alone: what any consumer of the same inputs pays */
		t0 = now_s();
		c0 = cpu_s();
		records = read_all(paths, inputs);
		if (!records)
			return 1;
		rwall[k] = now_s() - t0;
		rcpu[k] = cpu_s() - c0;

		t0 = now_s();
		c0 = cpu_s();
		if (gt_merge_open((const char *const *)paths, inputs, &mo, &m, &e) < 0 ||
		    gt_merge_write(m, out, &e) < 0) {
			fprintf(stderr, "bench-merge: %s\n", e.msg);
			return 1;
		}
		gt_merge_free(m);
		wall[k] = now_s() - t0;
		cpu[k] = cpu_s() - c0;
	}
	getrusage(RUSAGE_SELF, &ru);
	qsort(wall, (size_t)rounds, sizeof(*wall), cmp_double);
	qsort(cpu, (size_t)rounds, sizeof(*cpu), cmp_double);
	qsort(rwall, (size_t)rounds, sizeof(*rwall), cmp_double);
	qsort(rcpu, (size_t)rounds, sizeof(*rcpu), cmp_double);
	printf("inputs %u, records %llu (%s%s), slack %llu ns, threads %u (%s), rounds %d: "
	       "median (min .. max)\n",
	       inputs, (unsigned long long)records,
	       o.api ? "kernels, launch API, copies" : "kernels",
	       o.nccl_every ? ", --align nccl" : "", (unsigned long long)slack_ns, threads,
	       threads > 2   ? "merging, writer, pools reading ahead and compressing"
	       : threads > 1 ? "merging + writer"
	                     : "merging and writing",
	       rounds);
	printf("merge      %6.2f M records/s wall (%.2f .. %.2f), %6.2f M per CPU-s (%.2f .. "
	       "%.2f)\n",
	       records / wall[rounds / 2] / 1e6, records / wall[rounds - 1] / 1e6,
	       records / wall[0] / 1e6, records / cpu[rounds / 2] / 1e6,
	       records / cpu[rounds - 1] / 1e6, records / cpu[0] / 1e6);
	printf("read only  %6.2f M records/s wall (%.2f .. %.2f), %6.2f M per CPU-s (%.2f .. "
	       "%.2f)\n",
	       records / rwall[rounds / 2] / 1e6, records / rwall[rounds - 1] / 1e6,
	       records / rwall[0] / 1e6, records / rcpu[rounds / 2] / 1e6,
	       records / rcpu[rounds - 1] / 1e6, records / rcpu[0] / 1e6);
	printf("peak RSS   %.1f MB\n", (double)ru.ru_maxrss / 1024.0);
	{
		struct stat st;

		if (stat(out, &st) == 0)
			printf("merged     %.1f MB on disk\n", (double)st.st_size / 1e6);
	}
	for (unsigned i = 0; i < inputs; i++) {
		unlink(paths[i]);
		free(paths[i]);
	}
	if (keep && rename(out, keep) < 0)
		fprintf(stderr, "bench-merge: could not keep the merged file as %s\n", keep);
	unlink(out);
	free(paths);
	free(wall);
	return 0;
}
