/* Writes the fuzz targets' seed corpora (tests/fuzz/corpus/<target>/): small real traces
 * from the exporters' fixture in each of fuzz-reader's three input modes, ring programs,
 * patterns and command lines. Deterministic, so the committed seeds can be regenerated:
 *   fuzz-mkseeds tests/fuzz/corpus tests/data/example.gtrace ...
 * Runs as a build-time helper (tests/fuzz/run.sh --seeds). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "codec.h"
#include "export-fixture.h"

static const char *root;

static int put(const char *target, const char *name, const void *a, size_t alen, const void *b,
               size_t blen)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, target);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%s/%s", root, target, name);
	f = fopen(path, "wb");
	if (!f || fwrite(a, 1, alen, f) != alen || (blen && fwrite(b, 1, blen, f) != blen) ||
	    fclose(f) != 0) {
		fprintf(stderr, "fuzz-mkseeds: cannot write %s\n", path);
		return -EIO;
	}
	return 0;
}

static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	long n;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0) {
		buf = malloc((size_t)n);
		if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
			free(buf);
			buf = NULL;
		}
		*len = (size_t)n;
	}
	fclose(f);
	return buf;
}

/* fuzz-reader's "built" mode input: the decompressed payload of every chunk, joined by
 * the separator, after a flags byte (bit 0: footer). */
static int built_seed(const char *name, const uint8_t *f, size_t len, uint8_t flags)
{
	static uint8_t out[1 << 20];
	size_t o = 0, pos = gt_get_le32(f + 12);

	out[o++] = 2;
	out[o++] = flags;
	while (pos + GT_CHUNK_HDR_BYTES <= len && memcmp(f + pos, GT_CHUNK_MAGIC, 4) == 0) {
		uint32_t comp = gt_get_le32(f + pos + 4);
		size_t raw;

		if (o > 2) {
			memcpy(out + o,
			       "\xff"
			       "CHK",
			       4);
			o += 4;
		}
		raw = ZSTD_decompress(out + o, sizeof(out) - o, f + pos + GT_CHUNK_HDR_BYTES, comp);
		if (ZSTD_isError(raw))
			return -EINVAL;
		o += raw;
		pos += GT_CHUNK_HDR_BYTES + comp;
	}
	return put("fuzz-reader", name, out, o, NULL, 0);
}

/* A real trace (tests/data, recorded on a GPU) in every mode. */
static int real_seed(const char *path)
{
	static const uint8_t raw = 0, fix = 1;
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	char name[128];
	size_t len = 0;
	uint8_t *f = slurp(path, &len);
	int r;

	if (!f || len < GT_HEADER_FIXED_BYTES) {
		free(f);
		fprintf(stderr, "fuzz-mkseeds: cannot read %s\n", path);
		return -EIO;
	}
	snprintf(name, sizeof(name), "raw-%s", base);
	r = put("fuzz-reader", name, &raw, 1, f, len);
	snprintf(name, sizeof(name), "fixup-%s", base);
	if (!r)
		r = put("fuzz-reader", name, &fix, 1, f, len);
	snprintf(name, sizeof(name), "built-%s", base);
	if (!r)
		r = built_seed(name, f, len, 1);
	free(f);
	return r;
}

static int reader_seeds(void)
{
	static const struct {
		const char *name;
		struct fx_opts o;
	} traces[] = {
	        {"fixture-hostile", {.procs = 1, .iters = 2, .gpu_batch = 1, .kernels = 2}},
	        {"fixture-2proc",
	         {.procs = 2, .iters = 3, .gpu_batch = 2, .kernels = 3, .names = 4}},
	};
	char tmp[] = "/tmp/gputrace-mkseeds-XXXXXX", path[64];
	int fd = mkstemp(tmp), r = 0;

	if (fd < 0)
		return -errno;
	close(fd);
	snprintf(path, sizeof(path), "%s.gtrace", tmp);
	for (size_t i = 0; i < sizeof(traces) / sizeof(traces[0]) && r == 0; i++) {
		static const uint8_t raw = 0, fix = 1;
		char name[128];
		uint8_t *f;
		size_t len = 0;

		r = fx_write(path, &traces[i].o);
		if (r < 0)
			break;
		f = slurp(path, &len);
		if (!f)
			return -EIO;
		snprintf(name, sizeof(name), "raw-%s", traces[i].name);
		r = put("fuzz-reader", name, &raw, 1, f, len);
		snprintf(name, sizeof(name), "fixup-%s", traces[i].name);
		if (!r)
			r = put("fuzz-reader", name, &fix, 1, f, len);
		/* the writer was killed: no footer, and the last chunk cut short */
		snprintf(name, sizeof(name), "raw-%s-truncated", traces[i].name);
		if (!r)
			r = put("fuzz-reader", name, &raw, 1, f, len - GT_TRAILER_BYTES - 100);
		snprintf(name, sizeof(name), "built-%s", traces[i].name);
		if (!r)
			r = built_seed(name, f, len, 1);
		snprintf(name, sizeof(name), "built-%s-nofooter", traces[i].name);
		if (!r)
			r = built_seed(name, f, len, 0);
		free(f);
	}
	unlink(path);
	unlink(tmp);
	return r;
}

/* Ring programs (fuzz-ring.c's opcodes): a clean run, torn and forged slots, a header
 * overwritten after attach. Operands are little-endian. */
#define NVTX_LO (uint8_t)(sizeof(struct gt_rec_nvtx) & 0xff)
#define NVTX_HI (uint8_t)(sizeof(struct gt_rec_nvtx) >> 8)
#define CTX_LO  (uint8_t)(sizeof(struct gt_rec_context) & 0xff)
static int ring_seeds(void)
{
	const uint8_t clean[] = {
	        0, /* 4 KiB */
	        0,       GT_REC_NVTX,
	        NVTX_LO, NVTX_HI,
	        0, /* write an nvtx record, committed */
	        0,       GT_REC_CONTEXT,
	        CTX_LO,  0,
	        0, /* and a context */
	        4, /* attach */
	        0,       GT_REC_NVTX,
	        NVTX_LO, NVTX_HI,
	        1, /* reserved, never committed */
	        0,       GT_REC_NVTX,
	        NVTX_LO, NVTX_HI,
	        0,       5,
	        0,          /* consume, producers alive */
	        5,       1, /* consume, producers dead: skips the torn slot */
	};
	const uint8_t forged[] = {
	        3, /* 128 KiB */
	        4, /* attach */
	        0, GT_REC_NVTX, NVTX_LO, NVTX_HI, 0, 1, 0, 0, 0, 16, GT_REC_KERNEL,
	        0, /* a committed word forged at head */
	        3, 7,           16,      0,       0, 0, 0, 0, 0, 0, /* and head moved past it */
	        5, 1,
	};
	const uint8_t header[] = {
	        1, /* 8 KiB */
	        0,      GT_REC_CONTEXT,
	        CTX_LO, 0,
	        0,      4, /* attach */
	        3,      4,
	        0,      0,
	        0,      0,
	        0,      0,
	        1,      0, /* data_bytes = 2^48 after attach */
	        3,      6,
	        8,      0,
	        0,      0,
	        0,      0,
	        0,      0, /* tail = 8 */
	        2,      16,
	        0,      0,
	        8,      0xff,
	        0xff,   0xff,
	        0xff,   0xff,
	        0xff,   0xff,
	        0xff, /* poke */
	        5,      2,
	};
	int r = put("fuzz-ring", "clean", clean, sizeof(clean), NULL, 0);

	if (!r)
		r = put("fuzz-ring", "forged", forged, sizeof(forged), NULL, 0);
	if (!r)
		r = put("fuzz-ring", "header", header, sizeof(header), NULL, 0);
	return r;
}

/* fuzz-export: a consumer byte (summary, three report formats, three exporters) before a
 * few of fuzz-reader's seeds. */
static int export_seeds(void)
{
	static const char *const from[] = {"raw-fixture-hostile", "raw-fixture-2proc-truncated",
	                                   "built-fixture-2proc", "raw-example.gtrace"};
	int r = 0;

	for (size_t i = 0; i < sizeof(from) / sizeof(from[0]) && r == 0; i++) {
		char path[PATH_MAX], name[160];
		size_t len = 0;
		uint8_t *f;

		snprintf(path, sizeof(path), "%s/fuzz-reader/%s", root, from[i]);
		f = slurp(path, &len);
		if (!f)
			continue; /* the real traces are optional */
		for (uint8_t use = 0; use < 7 && r == 0; use++) {
			snprintf(name, sizeof(name), "%u-%s", use, from[i]);
			r = put("fuzz-export", name, &use, 1, f, len);
		}
		free(f);
	}
	return r;
}

static int pattern_seeds(void)
{
	static const char *const pats[] = {
	        "gputrace-%p.gtrace",
	        "rank%q{RANK}-%n.gtrace",
	        "%h-%%-%n",
	        "%q{EMPTY}%q{PCT}",
	        "trace-%x",
	        "%q{UNSET}",
	        "%q{RANK",
	        "%",
	        "%q{LONG}%q{LONG}",
	        "%%n%n%%%p",
	};
	int r = 0;

	for (size_t i = 0; i < sizeof(pats) / sizeof(pats[0]) && r == 0; i++) {
		uint8_t head[2] = {(uint8_t)(i % 3 ? 200 : 12), (uint8_t)i};
		char name[32];

		snprintf(name, sizeof(name), "pattern-%zu", i);
		r = put("fuzz-pattern", name, head, 2, pats[i], strlen(pats[i]));
	}
	return r;
}

static int options_seeds(void)
{
	/* NUL-separated argv after "gputrace" (sizeof - 1: no trailing empty argument) */
	static const char run1[] = "run\0-o\0train-%q{RANK}-%n\0--buffer-size\0004K\0-t\0"
	                           "kernel,api,nvtx\0--api\0all\0--delay\0000.5\0--duration\0"
	                           "1m\0--\0true";
	static const char run2[] = "run\0--capture-range\0nvtx:step\0--flush-interval\0000\0"
	                           "--graph\0node\0--export\0perfetto\0--stats\0-fq\0app";
	static const char stats[] = "stats\0-r\0kernels,api\0-f\0json\0-n\0005\0--mangled\0"
	                            "-o\0out.csv\0run.gtrace";
	static const char exp[] = "export\0run.gtrace\0-f\0chrome\0--max-size\0500M\0-o\0-\0-q";
	static const char info[] = "info\0run.gtrace";
	static const char advise[] = "advise\0--fail-on\0005%\0--top\0002\0-f\0json\0--nvtx\0"
	                             "step:1..3\0-o\0out.json\0a.gtrace\0b.gtrace";
	static const char help[] = "--help";
	static const struct {
		const char *name, *argv;
		size_t len;
	} seeds[] = {
	        {"run-1", run1, sizeof(run1) - 1},      {"run-2", run2, sizeof(run2) - 1},
	        {"stats", stats, sizeof(stats) - 1},    {"export", exp, sizeof(exp) - 1},
	        {"info", info, sizeof(info) - 1},       {"help", help, sizeof(help) - 1},
	        {"advise", advise, sizeof(advise) - 1},
	};
	int r = 0;

	for (size_t i = 0; i < sizeof(seeds) / sizeof(seeds[0]) && r == 0; i++)
		r = put("fuzz-options", seeds[i].name, seeds[i].argv, seeds[i].len, NULL, 0);
	return r;
}

int main(int argc, char **argv)
{
	int r;

	if (argc < 2) {
		fprintf(stderr, "usage: fuzz-mkseeds CORPUS-DIR [REAL.gtrace...]\n");
		return 2;
	}
	root = argv[1];
	mkdir(root, 0755);
	r = reader_seeds();
	for (int i = 2; i < argc && !r; i++)
		r = real_seed(argv[i]);
	if (!r)
		r = export_seeds();
	if (!r)
		r = ring_seeds();
	if (!r)
		r = pattern_seeds();
	if (!r)
		r = options_seeds();
	if (r < 0) {
		fprintf(stderr, "fuzz-mkseeds: %s\n", strerror(-r));
		return 1;
	}
	return 0;
}
