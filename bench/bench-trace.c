/* Trace file benchmark: write and read throughput (records/s, one thread) and bytes per
 * kernel record on disk, on the synthetic trace of tests/trace-synth.h. Runs by hand:
 *   bench-trace [-k KERNELS] [-n NAMES] [-r ROUNDS] [-l LEVEL] [-d DIR]
 * Prints a table; docs/performance.md ("Trace file") quotes it. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "codec.h"
#include "gputrace/trace.h"
#include "trace-synth.h"

struct packed {
	uint8_t *buf; /* records back to back, each hdr.size bytes (8-byte aligned) */
	size_t len;
	uint64_t records, kernels;
	uint64_t encoded_bytes; /* payload before compression (delta state reset every 32 Ki) */
};

static double clock_s(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double now_s(void)
{
	return clock_s(CLOCK_MONOTONIC);
}

/* CPU time of this thread: on a shared machine, what one core spends on the work. */
static double cpu_s(void)
{
	return clock_s(CLOCK_THREAD_CPUTIME_ID);
}

/* Generate the whole trace into memory first, so the timings measure the file code only. */
static int pack(const struct synth_opts *o, struct packed *pk)
{
	union synth_buf b;
	struct synth s;
	size_t cap = 1u << 24;
	static struct gt_codec codec;
	uint8_t enc[GT_CODEC_MAX_RECORD];

	memset(pk, 0, sizeof(*pk));
	if (gt_codec_init(&codec) < 0)
		return -1;
	pk->buf = malloc(cap);
	if (!pk->buf)
		return -1;
	synth_init(&s, o);
	while (synth_next(&s, &b)) {
		size_t n = b.rec.hdr.size;

		if (pk->len + n > cap) {
			uint8_t *p = realloc(pk->buf, cap * 2);

			if (!p)
				return -1;
			pk->buf = p;
			cap *= 2;
		}
		memcpy(pk->buf + pk->len, &b, n);
		pk->len += n;
		if (pk->records % 32768 == 0)
			gt_codec_reset(&codec);
		pk->encoded_bytes += gt_codec_encode(&codec, &b.rec.hdr, enc);
		pk->records++;
		pk->kernels += b.rec.hdr.type == GT_REC_KERNEL;
	}
	return 0;
}

struct result {
	double write_s, close_s, read_s;
	double write_cpu_s, read_cpu_s;
	uint64_t file_bytes;
};

static int run_once(const char *path, const struct packed *pk, int level, struct result *res)
{
	struct gt_writer_options wo = {.zstd_level = level};
	struct gt_trace_info info = {.hostname = "bench", .cmdline = "bench-trace"};
	struct gt_writer *w;
	struct gt_reader *r;
	const union gt_record *rec;
	const char *err = NULL;
	struct stat st;
	uint64_t n = 0, sum = 0;
	double t0, t1, t2, c0, c1;
	int ret;

	if (gt_writer_open(path, &info, &wo, &w) < 0)
		return -1;
	t0 = now_s();
	c0 = cpu_s();
	for (size_t off = 0; off < pk->len;) {
		const struct gt_rec_hdr *h = (const struct gt_rec_hdr *)(pk->buf + off);

		if (gt_writer_write(w, h) < 0) {
			gt_writer_discard(w);
			return -1;
		}
		off += h->size;
	}
	t1 = now_s();
	c1 = cpu_s();
	if (gt_writer_close(w) < 0)
		return -1;
	t2 = now_s();
	if (stat(path, &st) < 0)
		return -1;
	res->write_s = t1 - t0;
	res->write_cpu_s = c1 - c0;
	res->close_s = t2 - t1;
	res->file_bytes = (uint64_t)st.st_size;

	if (gt_reader_open(path, &r, &err) < 0) {
		fprintf(stderr, "bench-trace: %s: %s\n", path, err);
		return -1;
	}
	t0 = now_s();
	c0 = cpu_s();
	while ((ret = gt_reader_next(r, &rec)) == 1) {
		sum += rec->hdr.type; /* touch every record */
		n++;
	}
	res->read_s = now_s() - t0;

	res->read_cpu_s = cpu_s() - c0;
	gt_reader_close(r);
	if (ret < 0 || n != pk->records || sum == 0)
		return -1;
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void usage(FILE *out)
{
	fputs("Usage: bench-trace [-k KERNELS] [-n NAMES] [-r ROUNDS] [-l LEVEL] [-d DIR]\n"
	      "Write and read a synthetic trace; print records/s and bytes per kernel.\n",
	      out);
}

int main(int argc, char **argv)
{
	uint64_t kernels = 2000000;
	unsigned names = 300;
	int rounds = 5, level = 1, c;
	const char *dir = "/tmp";
	static const struct {
		const char *name;
		bool api, memcpy;
	} shapes[] = {
	        {"kernels only", false, false},
	        {"kernels + launch API + copies", true, true},
	};

	while ((c = getopt(argc, argv, "k:n:r:l:d:h")) != -1) {
		switch (c) {
		case 'k':
			kernels = strtoull(optarg, NULL, 0);
			break;
		case 'n':
			names = (unsigned)strtoul(optarg, NULL, 0);
			break;
		case 'r':
			rounds = atoi(optarg);
			break;
		case 'l':
			level = atoi(optarg);
			break;
		case 'd':
			dir = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (rounds < 1 || rounds > 101 || !kernels) {
		usage(stderr);
		return 2;
	}
	printf("synthetic trace: %llu kernels, %u names, zstd level %d, median of %d rounds\n\n",
	       (unsigned long long)kernels, names, level, rounds);
	printf("rec/s: records per second of wall time; per CPU-s: per second of this thread's "
	       "CPU\n"
	       "time (the two differ when other work shares the core)\n\n");
	printf("%-31s %9s %11s %11s %9s %11s %11s %9s %9s %9s\n", "trace", "records", "write rec/s",
	       "per CPU-s", "close ms", "read rec/s", "per CPU-s", "B/kernel", "B/record",
	       "raw B/rec");
	for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
		struct synth_opts o = {.kernels = kernels,
		                       .names = names,
		                       .processes = 1,
		                       .seed = 1,
		                       .api = shapes[i].api,
		                       .memcpy = shapes[i].memcpy};
		double wr[101], wc[101], cl[101], rd[101], rc[101];
		struct packed pk;
		struct result res = {0};
		char path[4096];
		uint64_t bytes = 0;

		if (pack(&o, &pk) < 0) {
			fprintf(stderr, "bench-trace: out of memory\n");
			return 1;
		}
		snprintf(path, sizeof(path), "%s/bench-trace-%ld.gtrace", dir, (long)getpid());
		for (int r = 0; r < rounds; r++) {
			if (run_once(path, &pk, level, &res) < 0) {
				fprintf(stderr, "bench-trace: round %d failed (%s)\n", r, path);
				unlink(path);
				return 1;
			}
			wr[r] = res.write_s;
			wc[r] = res.write_cpu_s;
			cl[r] = res.close_s;
			rd[r] = res.read_s;
			rc[r] = res.read_cpu_s;
			bytes = res.file_bytes;
		}
		unlink(path);
		printf("%-31s %9llu %10.2fM %10.2fM %9.1f %10.2fM %10.2fM %9.2f %9.2f %9.2f\n",
		       shapes[i].name, (unsigned long long)pk.records,
		       (double)pk.records / median(wr, rounds) * 1e-6,
		       (double)pk.records / median(wc, rounds) * 1e-6, median(cl, rounds) * 1e3,
		       (double)pk.records / median(rd, rounds) * 1e-6,
		       (double)pk.records / median(rc, rounds) * 1e-6,
		       (double)bytes / (double)pk.kernels, (double)bytes / (double)pk.records,
		       (double)pk.encoded_bytes / (double)pk.records);
		free(pk.buf);
	}
	return 0;
}
