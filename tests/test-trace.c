/* Check suite for the .gtrace file (src/format/writer.c, src/format/reader.c, src/format/codec.c,
 * src/format/crc32c.c): exact round trips, flat memory on a 10 M record trace, truncation, bit
 * flips, unknown record kinds, error messages, rename on close. Runs as a unit test. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "codec.h"
#include "gputrace/trace.h"
#include "trace-synth.h"
#include "writeq.h"

static char dir[64];

static void setup(void)
{
	strcpy(dir, "/tmp/gt-test-trace-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}

static char *path_in(const char *name)
{
	static char buf[4][256];
	static int n;
	char *p = buf[n++ % 4];

	snprintf(p, 256, "%s/%s", dir, name);
	return p;
}

static const struct gt_trace_info test_info = {
        .clock_id = GT_CLOCK_MONOTONIC,
        .start_realtime_ns = 1714564800123456789ull,
        .start_trace_ns = SYNTH_START_NS,
        .hostname = "gpu-node-17",
        .cmdline = "python train.py --epochs 1",
        .tool_version = "0.1.0",
        .cuda_version = "13.0",
        .cupti_version = "13.0.48",
        .driver_version = "580.65.06",
};

/* ---- file helpers ------------------------------------------------------------------ */

static uint8_t *slurp(const char *path, size_t *len)
{
	struct stat st;
	uint8_t *buf;
	int fd = open(path, O_RDONLY);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(fstat(fd, &st), 0);
	buf = malloc((size_t)st.st_size + 1);
	ck_assert_ptr_nonnull(buf);
	ck_assert_int_eq(read(fd, buf, (size_t)st.st_size), st.st_size);
	close(fd);
	*len = (size_t)st.st_size;
	return buf;
}

static void spit(const char *path, const void *buf, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, buf, len), (ssize_t)len);
	close(fd);
}

/* Chunk layout of a file, found by walking the chunk headers from the end of the header. */
struct layout {
	size_t data_start;
	size_t nchunks;
	size_t off[4096]; /* chunk header offset */
	size_t end[4096]; /* offset just past the chunk */
	uint32_t records[4096];
	size_t chunks_end; /* where the footer starts */
};

static void layout_of(const uint8_t *buf, size_t len, struct layout *l)
{
	size_t pos = gt_get_le32(buf + 12);

	memset(l, 0, sizeof(*l));
	l->data_start = pos;
	while (pos + GT_CHUNK_HDR_BYTES <= len) {
		struct gt_chunk_hdr h;

		if (!gt_chunk_hdr_decode(buf + pos, &h))
			break;
		ck_assert_uint_lt(l->nchunks, 4096);
		l->off[l->nchunks] = pos;
		l->records[l->nchunks] = h.records;
		pos += GT_CHUNK_HDR_BYTES + h.comp_bytes;
		l->end[l->nchunks++] = pos;
	}
	l->chunks_end = pos;
}

/* ---- record helpers ------------------------------------------------------------------ */

/* Check's assertions each write to a pipe even when they pass: in per-record loops, only
 * call into Check on failure. */
#define REQUIRE(cond, ...)                                                                         \
	do {                                                                                       \
		if (!(cond))                                                                       \
			ck_abort_msg(__VA_ARGS__);                                                 \
	} while (0)

static void expect_same(const union gt_record *got, const union gt_record *want, uint64_t i)
{
	unsigned long long n = (unsigned long long)i;

	REQUIRE(got->hdr.type == want->hdr.type, "record %llu: type %u, want %u", n, got->hdr.type,
	        want->hdr.type);
	REQUIRE(got->hdr.size == want->hdr.size, "record %llu: size %u, want %u", n, got->hdr.size,
	        want->hdr.size);
	if (want->hdr.type == GT_REC_STRING) {
		REQUIRE(got->hdr.pid == want->hdr.pid && got->string.id == want->string.id &&
		                got->string.len == want->string.len &&
		                memcmp(got->string.str, want->string.str, want->string.len) == 0,
		        "record %llu: string differs", n);
		return;
	}
	REQUIRE(memcmp(got, want, want->hdr.size) == 0, "record %llu (%s) differs", n,
	        gt_record_name(want->hdr.type));
}

/* Fill every field of a record of `type` from a table of edge values picked by seed. */
static void fill_record(unsigned type, unsigned seed, union gt_record *r)
{
	static const uint64_t uvals[] = {0,
	                                 1,
	                                 0x7f,
	                                 0x80,
	                                 0x3fff,
	                                 0xffffffffull,
	                                 0xfffffffffffffffeull,
	                                 UINT64_MAX,
	                                 123456789012345ull};
	static const int64_t svals[] = {0, -1, 1, INT32_MIN, INT32_MAX, -1000, 64, INT64_MIN};
	const struct gt_record_desc *d = gt_record_desc(type);
	static const uint32_t pids[] = {1, 4100, UINT32_MAX, 4100};

	memset(r, 0, sizeof(*r));
	r->hdr.type = (uint16_t)type;
	r->hdr.size = d->size;
	r->hdr.pid = pids[seed % 4];
	for (unsigned f = 0; f < d->nfields; f++) {
		const struct gt_field *fd = &d->fields[f];
		uint8_t *p = (uint8_t *)r + fd->offset;
		unsigned k = seed * 7 + f * 3;
		uint64_t v;

		if (fd->flags & GT_FIELD_SIGNED)
			v = (uint64_t)svals[k % 8];
		else
			v = uvals[k % 9];
		switch (fd->width) {
		case 1: {
			uint8_t x = (uint8_t)v;

			memcpy(p, &x, 1);
			break;
		}
		case 2: {
			uint16_t x = (uint16_t)v;

			memcpy(p, &x, 2);
			break;
		}
		case 4: {
			uint32_t x = (uint32_t)v;

			memcpy(p, &x, 4);
			break;
		}
		default:
			memcpy(p, &v, 8);
			break;
		}
	}
}

static void make_string(union synth_buf *b, uint32_t pid, uint32_t id, const char *s, size_t len)
{
	synth_string(b, id, s, len);
	b->rec.hdr.pid = pid;
}

/* Open, read everything, compare with the synthetic sequence of o, skipping the records of
 * chunks listed in `skip` (chunk numbers, sorted; the records of chunk k are those after the
 * first sum(records[0..k)) ones). Returns the records read. */
static uint64_t read_and_compare(const char *path, const struct synth_opts *o,
                                 const struct layout *l, const bool *skip, uint64_t limit,
                                 struct gt_reader **keep)
{
	struct gt_reader *rd;
	const union gt_record *rec;
	const char *err = NULL;
	union synth_buf want;
	struct synth s;
	uint64_t n = 0, seq = 0;
	size_t chunk = 0, in_chunk = 0;
	int r;

	ck_assert_msg(gt_reader_open(path, &rd, &err) == 0, "open: %s", err ? err : "?");
	synth_init(&s, o);
	for (;;) {
		r = gt_reader_next(rd, &rec);
		REQUIRE(r >= 0, "gt_reader_next: %d", r);
		if (r == 0)
			break;
		/* advance the expected sequence past skipped chunks */
		for (;;) {
			while (l && chunk < l->nchunks && in_chunk == l->records[chunk]) {
				chunk++;
				in_chunk = 0;
			}
			if (!skip || !l || chunk >= l->nchunks || !skip[chunk])
				break;
			REQUIRE(synth_next(&s, &want), "more records than written");
			seq++;
			in_chunk++;
		}
		REQUIRE(synth_next(&s, &want), "more records than written");
		expect_same(rec, &want.rec, seq);
		seq++;
		in_chunk++;
		n++;
	}
	ck_assert_uint_le(n, limit);
	if (keep)
		*keep = rd;
	else
		gt_reader_close(rd);
	return n;
}

static void write_synth_q(const char *path, const struct synth_opts *o, size_t chunk_bytes,
                          size_t queue_bytes, uint64_t *nrec)
{
	struct gt_writer_options wo = {.chunk_bytes = chunk_bytes, .queue_bytes = queue_bytes};
	struct gt_writer *w;
	union synth_buf b;
	struct synth s;
	uint64_t n = 0;

	ck_assert_int_eq(gt_writer_open(path, &test_info, &wo, &w), 0);
	synth_init(&s, o);
	while (synth_next(&s, &b)) {
		int r = gt_writer_write(w, &b.rec.hdr);

		REQUIRE(r == 0, "gt_writer_write: %d", r);
		n++;
	}
	ck_assert_int_eq(gt_writer_close(w), 0);
	if (nrec)
		*nrec = n;
}

static void write_synth(const char *path, const struct synth_opts *o, size_t chunk_bytes,
                        uint64_t *nrec)
{
	write_synth_q(path, o, chunk_bytes, 0, nrec);
}

/* ---- tests ---------------------------------------------------------------------------- */

START_TEST(test_crc32c)
{
	static const char v[] = "123456789";
	uint8_t buf[1000];

	ck_assert_uint_eq(gt_crc32c(0, v, 9), 0xe3069283u);
	ck_assert_uint_eq(gt_crc32c_sw(0, v, 9), 0xe3069283u);
	ck_assert_uint_eq(gt_crc32c(0, v, 0), 0);
	for (unsigned i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(i * 31 + 7);
	/* both paths agree at every length and alignment, and chaining equals one call */
	for (unsigned len = 0; len < 200; len++) {
		ck_assert_uint_eq(gt_crc32c(0, buf + len % 8, len),
		                  gt_crc32c_sw(0, buf + len % 8, len));
		ck_assert_uint_eq(gt_crc32c(gt_crc32c(0, buf, len), buf + len, 300),
		                  gt_crc32c(0, buf, len + 300));
	}
}
END_TEST

START_TEST(test_varint_zigzag)
{
	static const int64_t sv[] = {0, -1, 1, -64, 63, 64, INT32_MIN, INT64_MAX, INT64_MIN};
	uint8_t buf[16];

	for (unsigned i = 0; i < sizeof(sv) / sizeof(sv[0]); i++)
		ck_assert(gt_unzigzag(gt_zigzag(sv[i])) == sv[i]);
	ck_assert_uint_eq(gt_zigzag(0), 0);
	ck_assert_uint_eq(gt_zigzag(-1), 1);
	ck_assert_uint_eq(gt_zigzag(1), 2);
	ck_assert_uint_eq(gt_zigzag(INT64_MIN), UINT64_MAX);
	ck_assert_uint_eq(gt_put_varint(buf, 0) - buf, 1);
	ck_assert_uint_eq(gt_put_varint(buf, 127) - buf, 1);
	ck_assert_uint_eq(gt_put_varint(buf, 128) - buf, 2);
	ck_assert_uint_eq(buf[0], 0x80);
	ck_assert_uint_eq(buf[1], 0x01);
	ck_assert_uint_eq(gt_put_varint(buf, 300) - buf, 2);
	ck_assert_uint_eq(buf[0], 0xac);
	ck_assert_uint_eq(buf[1], 0x02);
	ck_assert_uint_eq(gt_put_varint(buf, UINT64_MAX) - buf, 10);
	ck_assert_uint_eq(buf[9], 0x01);
}
END_TEST

/* The straight-line codecs of the frequent types match record.c's tables (if this fails,
 * a field was appended in record.c: add it to the list in codec.c too; files stay correct
 * meanwhile, only slower). */
START_TEST(test_straight_codecs_active)
{
	static struct gt_codec c;
	static const unsigned fast[] = {GT_REC_KERNEL, GT_REC_MEMCPY, GT_REC_MEMSET, GT_REC_MEMORY,
	                                GT_REC_API,    GT_REC_NVTX,   GT_REC_SYNC};

	ck_assert_int_eq(gt_codec_init(&c), 0);
	for (unsigned i = 0; i < sizeof(fast) / sizeof(fast[0]); i++)
		ck_assert_msg(c.progs[fast[i]].straight, "%s", gt_record_name(fast[i]));
	ck_assert(!c.progs[GT_REC_DEVICE].straight);
	/* a kernel is 24 ops (pid + 23 fields) in 6 runs for the generic path */
	ck_assert_uint_eq(c.progs[GT_REC_KERNEL].nops, 24);
	ck_assert_uint_eq(c.progs[GT_REC_KERNEL].nruns, 6);
}
END_TEST

/* The generic run loops and the straight-line code write the same bytes. */
START_TEST(test_straight_equals_generic)
{
	static struct gt_codec a, b;
	uint8_t ea[GT_CODEC_MAX_RECORD], eb[GT_CODEC_MAX_RECORD];
	union gt_record r;

	ck_assert_int_eq(gt_codec_init(&a), 0);
	ck_assert_int_eq(gt_codec_init(&b), 0);
	for (unsigned t = GT_REC_STRING + 1; t < GT_REC_MAX; t++)
		b.progs[t].straight = false;
	for (unsigned round = 0; round < 40; round++) {
		for (unsigned t = GT_REC_STRING + 1; t < GT_REC_MAX; t++) {
			size_t na, nb;

			if (!gt_record_desc(t))
				continue; /* a value left unused */
			fill_record(t, round * 3 + t, &r);
			na = gt_codec_encode(&a, &r.hdr, ea);
			nb = gt_codec_encode(&b, &r.hdr, eb);
			ck_assert_uint_eq(na, nb);
			ck_assert_msg(memcmp(ea, eb, na) == 0, "%s", gt_record_name(t));
		}
	}
}
END_TEST

static size_t frame(uint8_t *out, unsigned type, const uint8_t *body, size_t len);

/* Every varint length, 1 to 10 bytes, at both ends of each: the codec's fast varint paths
 * (one byte, two to four, up to eight, the loop) write exactly what gt_put_varint writes
 * for an API record's fields, and read them back. */
START_TEST(test_varint_every_length)
{
	static struct gt_codec enc, dec;
	/* decoded records land here; calloc'd: the union has a flexible array member */
	union gt_record *recs = calloc(GT_REC_MAX, sizeof(*recs));
	struct gt_rec_string *strbuf = calloc(1, sizeof(*strbuf) + GT_STRING_MAX + 1);
	uint8_t got[GT_CODEC_MAX_RECORD + GT_CODEC_PAD] = {0}, want[GT_CODEC_MAX_RECORD];
	uint64_t prev_start = 0, prev_end = 0, prev_corr = 0;
	unsigned checked = 0;

	ck_assert_int_eq(gt_codec_init(&enc), 0);
	ck_assert_int_eq(gt_codec_init(&dec), 0);
	for (unsigned bits = 0; bits <= 64; bits++) {
		for (unsigned side = 0; side < 2; side++) {
			/* the largest value of `bits` bits, and the smallest of bits + 1 */
			uint64_t v = side ? (bits < 64 ? 1ull << bits : 1)
			                  : (bits ? UINT64_MAX >> (64 - bits) : 0);
			struct gt_rec_api a = {{GT_REC_API, sizeof(a), 7}};
			const union gt_record *out;
			const uint8_t *rp = got;
			uint8_t body[GT_CODEC_MAX_FIXED], *p = body;
			size_t n, len;

			a.start_ns = prev_start + v; /* delta v: zigzag 2v, up to 10 bytes */
			a.end_ns = prev_end - v;     /* delta -v */
			a.tid = (uint32_t)v;
			a.correlation_id = (uint32_t)(prev_corr + v);
			a.cbid = (uint32_t)(v >> 3);
			a.name_id = (uint32_t)(v >> 32);
			a.return_code = (int32_t)(uint32_t)v;
			a.domain = (uint32_t)(v >> 1);
			a.stack_id = (uint32_t)(v >> 2);
			p = gt_put_varint(p, checked ? 0 : gt_zigzag(7)); /* pid: delta */
			p = gt_put_varint(p, gt_zigzag((int64_t)(a.start_ns - prev_start)));
			p = gt_put_varint(p, gt_zigzag((int64_t)(a.end_ns - prev_end)));
			p = gt_put_varint(p, a.tid);
			p = gt_put_varint(
			        p, gt_zigzag((int64_t)((uint64_t)a.correlation_id - prev_corr)));
			p = gt_put_varint(p, a.cbid);
			p = gt_put_varint(p, a.name_id);
			p = gt_put_varint(p, gt_zigzag(a.return_code));
			p = gt_put_varint(p, a.domain);
			p = gt_put_varint(p, a.stack_id);
			len = frame(want, GT_REC_API, body, (size_t)(p - body));
			n = gt_codec_encode(&enc, &a.hdr, got);
			ck_assert_uint_eq(n, len);
			ck_assert_msg(memcmp(got, want, n) == 0, "bits %u side %u", bits, side);
			memset(got + n, 0, GT_CODEC_PAD);
			ck_assert_int_eq(gt_codec_decode(&dec, &rp, got + n, recs, strbuf, &out),
			                 GT_DECODE_OK);
			ck_assert_ptr_eq(rp, got + n);
			ck_assert_mem_eq(out, &a, sizeof(a));
			prev_start = a.start_ns;
			prev_end = a.end_ns;
			prev_corr = a.correlation_id;
			checked++;
		}
	}
	ck_assert_uint_eq(checked, 130);
	free(recs);
	free(strbuf);
}
END_TEST

/* Every record kind, every field at edge values, strings with NULs and at the maximum
 * length, through the writer and reader: the records come back byte for byte. */
START_TEST(test_roundtrip_all_types)
{
	enum {
		ROUNDS = 12
	};
	union synth_buf *want = calloc(ROUNDS * GT_REC_MAX + 8, sizeof(*want));
	const char *path = path_in("all.gtrace");
	struct gt_writer *w;
	struct gt_reader *rd;
	const union gt_record *rec;
	const char *err = NULL, *s;
	const struct gt_trace_header *h;
	const struct gt_trace_counts *fc;
	char big[GT_STRING_MAX];
	unsigned n = 0;
	size_t len;
	uint64_t per_type[GT_REC_MAX] = {0};

	for (unsigned i = 0; i < sizeof(big); i++)
		big[i] = (char)(i % 251); /* NULs included */
	make_string(&want[n++], 7, 1, "", 0);
	make_string(&want[n++], 7, 2, "a\0b\0", 4);
	make_string(&want[n++], UINT32_MAX, 3, big, GT_STRING_MAX);
	make_string(&want[n++], 0, UINT32_MAX, "last id", 7);
	for (unsigned round = 0; round < ROUNDS; round++)
		for (unsigned t = GT_REC_STRING + 1; t < GT_REC_MAX; t++)
			if (gt_record_desc(t)) /* values left unused have none */
				fill_record(t, round * 5 + t, &want[n++].rec);
	for (unsigned i = 0; i < n; i++)
		per_type[want[i].rec.hdr.type]++;
	per_type[GT_REC_STRING]++; /* the one gt_writer_string writes below */

	ck_assert_int_eq(gt_writer_open(path, &test_info, NULL, &w), 0);
	for (unsigned i = 0; i < n; i++)
		ck_assert_int_eq(gt_writer_write(w, &want[i].rec.hdr), 0);
	make_string(&want[n++], 9, 1000, "via helper", 10);
	/* the file holds a chunk of the state types (GT_TRACE_STATE_TYPES) and then one of the
	 * others, each in the order written: order `want` so */
	{
		union synth_buf *part = calloc(n, sizeof(*part));
		unsigned k = 0;

		ck_assert_ptr_nonnull(part);
		for (int state = 1; state >= 0; state--)
			for (unsigned i = 0; i < n; i++)
				if ((int)(GT_TRACE_STATE_TYPES >> want[i].rec.hdr.type & 1) ==
				    state)
					part[k++] = want[i];
		ck_assert_uint_eq(k, n);
		memcpy(want, part, n * sizeof(*part));
		free(part);
	}
	/* the convenience call encodes like a string record */
	ck_assert_int_eq(gt_writer_string(w, 9, 1000, "via helper", 10), 0);
	ck_assert_uint_eq(gt_writer_counts(w)->records[GT_REC_KERNEL], ROUNDS);
	ck_assert_uint_eq(gt_writer_counts(w)->records[GT_REC_STRING], 5);
	ck_assert_int_eq(gt_writer_close(w), 0);

	ck_assert_int_eq(gt_reader_open(path, &rd, &err), 0);
	h = gt_reader_header(rd);
	ck_assert_uint_eq(h->version, GT_TRACE_VERSION);
	ck_assert_uint_eq(h->info.clock_id, GT_CLOCK_MONOTONIC);
	ck_assert_uint_eq(h->info.start_realtime_ns, 1714564800123456789ull);
	ck_assert_uint_eq(h->info.start_trace_ns, SYNTH_START_NS);
	ck_assert_str_eq(h->info.hostname, "gpu-node-17");
	ck_assert_str_eq(h->info.cmdline, "python train.py --epochs 1");
	ck_assert_str_eq(h->info.tool_version, "0.1.0");
	ck_assert_str_eq(h->info.cuda_version, "13.0");
	ck_assert_str_eq(h->info.cupti_version, "13.0.48");
	ck_assert_str_eq(h->info.driver_version, "580.65.06");
	for (unsigned i = 0; i < n; i++) {
		ck_assert_int_eq(gt_reader_next(rd, &rec), 1);
		expect_same(rec, &want[i].rec, i);
	}
	ck_assert_int_eq(gt_reader_next(rd, &rec), 0);
	ck_assert_int_eq(gt_reader_next(rd, &rec), 0);

	s = gt_reader_string(rd, 2, &len);
	ck_assert_uint_eq(len, 4);
	ck_assert(memcmp(s, "a\0b\0", 5) == 0);
	s = gt_reader_string(rd, 3, &len);
	ck_assert_uint_eq(len, GT_STRING_MAX);
	ck_assert(memcmp(s, big, GT_STRING_MAX) == 0);
	ck_assert_str_eq(gt_reader_string(rd, UINT32_MAX, NULL), "last id");
	ck_assert_str_eq(gt_reader_string(rd, 1, NULL), "");
	ck_assert_str_eq(gt_reader_string(rd, 1000, NULL), "via helper");
	ck_assert_ptr_null(gt_reader_string(rd, 4, NULL));
	ck_assert_ptr_null(gt_reader_string(rd, 0, NULL));

	fc = gt_reader_footer_counts(rd);
	ck_assert_ptr_nonnull(fc);
	for (unsigned t = 0; t < GT_REC_MAX; t++)
		ck_assert_uint_eq(fc->records[t], per_type[t]);
	ck_assert_uint_eq(fc->chunks, 2);
	ck_assert_uint_eq(fc->first_ts_ns, 1); /* smallest non-zero time among the edge values */
	ck_assert_uint_eq(fc->last_ts_ns, UINT64_MAX);
	ck_assert(!gt_reader_status(rd)->recovered);
	ck_assert_uint_eq(gt_reader_status(rd)->chunks_read, 2);
	ck_assert_uint_eq(gt_reader_status(rd)->chunks_skipped, 0);
	ck_assert_uint_eq(gt_reader_status(rd)->bytes_skipped, 0);
	ck_assert_uint_eq(gt_reader_status(rd)->records_skipped, 0);

	/* a second pass gives the same records */
	ck_assert_int_eq(gt_reader_rewind(rd), 0);
	for (unsigned i = 0; i < n; i++) {
		ck_assert_int_eq(gt_reader_next(rd, &rec), 1);
		expect_same(rec, &want[i].rec, i);
	}
	gt_reader_close(rd);
	free(want);
}
END_TEST

START_TEST(test_writer_rejects_malformed)
{
	struct gt_writer *w;
	union synth_buf b;
	char big[GT_STRING_MAX + 1] = {0};

	ck_assert_int_eq(gt_writer_open(path_in("bad.gtrace"), &test_info, NULL, &w), 0);
	fill_record(GT_REC_KERNEL, 1, &b.rec);
	b.rec.hdr.size = 8;
	ck_assert_int_eq(gt_writer_write(w, &b.rec.hdr), -EINVAL);
	b.rec.hdr.size = sizeof(struct gt_rec_kernel);
	b.rec.hdr.type = 200;
	ck_assert_int_eq(gt_writer_write(w, &b.rec.hdr), -EINVAL);
	b.rec.hdr.type = GT_REC_NONE;
	ck_assert_int_eq(gt_writer_write(w, &b.rec.hdr), -EINVAL);
	ck_assert_int_eq(gt_writer_string(w, 1, 0, "x", 1), -EINVAL);
	ck_assert_int_eq(gt_writer_string(w, 1, 5, big, GT_STRING_MAX + 1), -EINVAL);
	ck_assert_uint_eq(gt_writer_counts(w)->records[GT_REC_KERNEL], 0);
	gt_writer_discard(w);
	ck_assert_int_eq(gt_writer_open(NULL, &test_info, NULL, &w), -EINVAL);
	ck_assert_int_eq(gt_writer_open(path_in("x/y/z.gtrace"), &test_info, NULL, &w), -ENOENT);
}
END_TEST

START_TEST(test_rename_on_close)
{
	const char *path = path_in("final.gtrace");
	char tmp[300];
	struct gt_writer *w;
	union synth_buf b;
	struct stat st;

	snprintf(tmp, sizeof(tmp), "%s.tmp-%ld", path, (long)getpid());
	ck_assert_int_eq(gt_writer_open(path, &test_info, NULL, &w), 0);
	fill_record(GT_REC_API, 3, &b.rec);
	ck_assert_int_eq(gt_writer_write(w, &b.rec.hdr), 0);
	ck_assert_int_eq(gt_writer_flush(w), 0);
	ck_assert_int_eq(stat(path, &st), -1);
	ck_assert_int_eq(errno, ENOENT);
	ck_assert_int_eq(stat(tmp, &st), 0);
	ck_assert_int_eq(gt_writer_close(w), 0);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_int_eq(stat(tmp, &st), -1);

	/* discard leaves nothing behind, not even the temporary file */
	ck_assert_int_eq(gt_writer_open(path_in("gone.gtrace"), &test_info, NULL, &w), 0);
	ck_assert_int_eq(gt_writer_write(w, &b.rec.hdr), 0);
	ck_assert_int_eq(gt_writer_flush(w), 0);
	gt_writer_discard(w);
	snprintf(tmp, sizeof(tmp), "%s.tmp-%ld", path_in("gone.gtrace"), (long)getpid());
	ck_assert_int_eq(stat(tmp, &st), -1);
	ck_assert_int_eq(stat(path_in("gone.gtrace"), &st), -1);
	gt_writer_discard(NULL);
	ck_assert_int_eq(gt_writer_close(NULL), 0);
}
END_TEST

/* An empty trace (writer closed with no record) is valid. */
START_TEST(test_empty_trace)
{
	const char *path = path_in("empty.gtrace");
	struct gt_writer *w;
	struct gt_reader *rd;
	const union gt_record *rec;
	const char *err = NULL;
	struct gt_trace_info info = {0};

	ck_assert_int_eq(gt_writer_open(path, &info, NULL, &w), 0);
	ck_assert_int_eq(gt_writer_close(w), 0);
	ck_assert_int_eq(gt_reader_open(path, &rd, &err), 0);
	ck_assert_str_eq(gt_reader_header(rd)->info.hostname, "");
	ck_assert_int_eq(gt_reader_next(rd, &rec), 0);
	ck_assert_uint_eq(gt_reader_footer_counts(rd)->chunks, 0);
	ck_assert_uint_eq(gt_reader_footer_counts(rd)->first_ts_ns, UINT64_MAX);
	ck_assert(!gt_reader_status(rd)->recovered);
	gt_reader_close(rd);
}
END_TEST

/* gt_reader_next_batch: the records of the types asked for, packed as their structs at the
 * stride asked for, in file order, in batches of at most cap; other types read past, strings
 * known; bad arguments refused. */
START_TEST(test_next_batch)
{
	const char *path = path_in("batch.gtrace");
	struct gt_writer_options o = {.chunk_bytes = 4096};
	const uint64_t K = 1ull << GT_REC_KERNEL, A = 1ull << GT_REC_API;
	struct gt_rec_kernel k, got[7];
	struct gt_rec_api a;
	struct gt_writer *w;
	struct gt_reader *rd;
	uint64_t seen = 0;
	int n;

	ck_assert_int_eq(gt_writer_open(path, &test_info, &o, &w), 0);
	ck_assert_int_eq(gt_writer_string(w, 7, 1, "kern", 4), 0);
	for (uint32_t i = 0; i < 1000; i++) {
		memset(&k, 0, sizeof(k));
		k.hdr = (struct gt_rec_hdr){GT_REC_KERNEL, sizeof(k), 7};
		k.span.start_ns = 1000 + 10ull * i;
		k.span.end_ns = 1005 + 10ull * i;
		k.span.correlation_id = i + 1;
		k.name_id = 1;
		k.grid_x = i;
		ck_assert_int_eq(gt_writer_write(w, &k.hdr), 0);
		memset(&a, 0, sizeof(a));
		a.hdr = (struct gt_rec_hdr){GT_REC_API, sizeof(a), 7};
		a.start_ns = 990 + 10ull * i;
		a.end_ns = 995 + 10ull * i;
		a.correlation_id = i + 1;
		ck_assert_int_eq(gt_writer_write(w, &a.hdr), 0);
	}
	ck_assert_int_eq(gt_writer_close(w), 0);

	ck_assert_int_eq(gt_reader_open(path, &rd, NULL), 0);
	ck_assert_int_eq(gt_reader_next_batch(rd, 1ull << GT_REC_STRING, got, sizeof(k), 7),
	                 -EINVAL);
	ck_assert_int_eq(gt_reader_next_batch(rd, 1ull << GT_REC_MAX, got, sizeof(k), 7), -EINVAL);
	ck_assert_int_eq(gt_reader_next_batch(rd, 1ull << GT_REC_NONE, got, sizeof(k), 7), -EINVAL);
	ck_assert_int_eq(gt_reader_next_batch(rd, 0, got, sizeof(k), 7), -EINVAL);
	ck_assert_int_eq(gt_reader_next_batch(rd, K, NULL, sizeof(k), 7), -EINVAL);
	ck_assert_int_eq(gt_reader_next_batch(rd, K, got, sizeof(k) - 8, 7), -EINVAL);
	ck_assert_int_eq(gt_reader_next_batch(rd, K, got, sizeof(k) + 4, 7), -EINVAL);
	ck_assert_int_eq(gt_reader_next_batch(rd, K, got, sizeof(k), 0), 0);
	/* 1000 = 142 x 7 + 6 */
	while ((n = gt_reader_next_batch(rd, K, got, sizeof(k), 7)) > 0) {
		ck_assert_int_eq(n, seen < 994 ? 7 : 6);
		for (int i = 0; i < n; i++, seen++) {
			ck_assert_uint_eq(got[i].hdr.type, GT_REC_KERNEL);
			ck_assert_uint_eq(got[i].hdr.size, sizeof(k));
			ck_assert_uint_eq(got[i].hdr.pid, 7);
			ck_assert_uint_eq(got[i].span.start_ns, 1000 + 10 * seen);
			ck_assert_uint_eq(got[i].span.end_ns, 1005 + 10 * seen);
			ck_assert_uint_eq(got[i].span.correlation_id, seen + 1);
			ck_assert_uint_eq(got[i].grid_x, seen);
		}
	}
	ck_assert_int_eq(n, 0);
	ck_assert_uint_eq(seen, 1000);
	ck_assert_str_eq(gt_reader_string(rd, 1, NULL), "kern");
	ck_assert_int_eq(gt_reader_next_batch(rd, K, got, sizeof(k), 7), 0);
	/* two types after a rewind, at the larger one's stride: API call, kernel, ... in file
	 * order, the API calls' slots zeroed after the record */
	ck_assert_int_eq(gt_reader_rewind(rd), 0);
	{
		struct gt_rec_kernel *all = malloc(2001 * sizeof(*all));

		memset(all, 0xff, 2001 * sizeof(*all));
		ck_assert_int_eq(gt_reader_next_batch(rd, K | A, all, sizeof(*all), 2001), 2000);
		for (unsigned i = 0; i < 2000; i++)
			ck_assert_uint_eq(all[i].hdr.type, i % 2 ? GT_REC_API : GT_REC_KERNEL);
		memcpy(&a, &all[1999], sizeof(a));
		ck_assert_uint_eq(a.start_ns, 990 + 9990);
		ck_assert_uint_eq(a.correlation_id, 1000);
		for (size_t b = sizeof(a); b < sizeof(*all); b++)
			ck_assert_uint_eq(((unsigned char *)&all[1999])[b], 0);
		ck_assert_uint_eq(all[1998].grid_x, 999);
		free(all);
	}
	gt_reader_close(rd);
}
END_TEST

static void expect_open_error(const char *path, int want_err, const char *want_msg)
{
	struct gt_reader *rd = NULL;
	const char *err = NULL;

	ck_assert_int_eq(gt_reader_open(path, &rd, &err), want_err);
	ck_assert_ptr_null(rd);
	ck_assert_ptr_nonnull(err);
	ck_assert_str_eq(err, want_msg);
}

START_TEST(test_open_errors)
{
	const char *good = path_in("good.gtrace"), *bad = path_in("bad.gtrace");
	struct synth_opts o = {.kernels = 100, .names = 10, .processes = 1, .seed = 1};
	uint8_t *buf;
	size_t len, hlen;

	write_synth(good, &o, 0, NULL);
	buf = slurp(good, &len);
	hlen = gt_get_le32(buf + 12);

	expect_open_error(path_in("missing.gtrace"), -ENOENT, "No such file or directory");
	expect_open_error(dir, -EISDIR, "is a directory");
	spit(bad, buf, 0);
	expect_open_error(bad, -EINVAL, "empty file");
	spit(bad, "GTRA", 4);
	expect_open_error(bad, -EINVAL, "truncated header");
	spit(bad, "{\"traceEvents\": []}", 19);
	expect_open_error(bad, -EINVAL, "not a gputrace file (bad magic)");
	spit(bad, buf, 20);
	expect_open_error(bad, -EINVAL, "truncated header");
	spit(bad, buf, hlen - 1);
	expect_open_error(bad, -EINVAL, "truncated header");
	spit(bad, buf, hlen);
	expect_open_error(bad, -EINVAL,
	                  "no data: the file ends after its header (the writer stopped early)");

	buf[8] = 3; /* format 3 */
	spit(bad, buf, len);
	expect_open_error(bad, -EPROTONOSUPPORT,
	                  "written by a newer gputrace (format 3, this reader knows 1)");
	buf[8] = 0;
	spit(bad, buf, len);
	expect_open_error(bad, -EINVAL, "corrupt header (format version 0)");
	buf[8] = 1;
	buf[12] = 3; /* header length 3 */
	buf[13] = buf[14] = buf[15] = 0;
	spit(bad, buf, len);
	expect_open_error(bad, -EINVAL, "corrupt header (bad length)");
	gt_put_le32(buf + 12, (uint32_t)hlen);
	buf[hlen - 10] ^= 0x20; /* inside the last header string */
	spit(bad, buf, len);
	expect_open_error(bad, -EINVAL, "corrupt header (checksum mismatch)");
	buf[hlen - 10] ^= 0x20;
	spit(bad, buf, len);
	{
		struct gt_reader *rd;
		const char *err;

		ck_assert_int_eq(gt_reader_open(bad, &rd, &err), 0);
		gt_reader_close(rd);
	}
	free(buf);
}
END_TEST

/* Every single-bit flip in the header is refused with a message, never accepted. */
START_TEST(test_header_bit_flips)
{
	const char *good = path_in("good.gtrace"), *bad = path_in("bad.gtrace");
	struct synth_opts o = {.kernels = 10, .names = 3, .processes = 1, .seed = 2};
	uint8_t *buf;
	size_t len, hlen;

	write_synth(good, &o, 0, NULL);
	buf = slurp(good, &len);
	hlen = gt_get_le32(buf + 12);
	for (size_t i = 0; i < hlen; i++) {
		for (unsigned bit = 0; bit < 8; bit++) {
			struct gt_reader *rd = NULL;
			const char *err = NULL;

			buf[i] ^= (uint8_t)(1u << bit);
			spit(bad, buf, len);
			ck_assert_msg(gt_reader_open(bad, &rd, &err) < 0,
			              "flip at %zu bit %u accepted", i, bit);
			ck_assert_ptr_nonnull(err);
			ck_assert(strchr(err, '\n') == NULL);
			buf[i] ^= (uint8_t)(1u << bit);
		}
	}
	free(buf);
}
END_TEST

static const struct synth_opts many_opts = {
        .kernels = 6000,
        .names = 300,
        .processes = 2,
        .seed = 42,
        .api = true,
        .memcpy = true,
        .losses = 5,
};

/* A trace of many small chunks reads back exactly, with footer counts equal to the writer's. */
START_TEST(test_roundtrip_many_chunks)
{
	const char *path = path_in("many.gtrace");
	struct gt_reader *rd;
	struct layout *l = malloc(sizeof(*l));
	uint64_t nrec, n, sum = 0;
	uint8_t *buf;
	size_t len;
	uint64_t done, total;

	write_synth(path, &many_opts, 8192, &nrec);
	buf = slurp(path, &len);
	layout_of(buf, len, l);
	ck_assert_uint_gt(l->nchunks, 20);
	for (size_t i = 0; i < l->nchunks; i++)
		sum += l->records[i];
	ck_assert_uint_eq(sum, nrec);
	n = read_and_compare(path, &many_opts, l, NULL, nrec, &rd);
	ck_assert_uint_eq(n, nrec);
	ck_assert_uint_eq(gt_reader_status(rd)->chunks_read, l->nchunks);
	ck_assert_uint_eq(gt_reader_footer_counts(rd)->chunks, l->nchunks);
	ck_assert_uint_eq(gt_reader_footer_counts(rd)->records[GT_REC_KERNEL], 6000);
	ck_assert_uint_eq(gt_reader_footer_counts(rd)->records[GT_REC_API], 6000);
	ck_assert_uint_eq(gt_reader_footer_counts(rd)->records[GT_REC_STRING], 306);
	ck_assert_uint_eq(gt_reader_footer_counts(rd)->records[GT_REC_PROCESS], 2);
	ck_assert_uint_eq(gt_reader_footer_counts(rd)->records[GT_REC_LOSS], 2);
	ck_assert_uint_eq(gt_reader_footer_counts(rd)->first_ts_ns, SYNTH_START_NS);
	gt_reader_progress(rd, &done, &total);
	ck_assert_uint_eq(done, len);
	ck_assert_uint_eq(total, len);
	gt_reader_close(rd);
	free(buf);
	free(l);
}
END_TEST

static uint64_t records_before(const struct layout *l, size_t k)
{
	uint64_t n = 0;

	for (size_t i = 0; i < k; i++)
		n += l->records[i];
	return n;
}

/* Cut the file at `cut` bytes; it must read as exactly the chunks complete before the cut. */
static void check_cut(const uint8_t *buf, const struct layout *l, size_t cut)
{
	const char *bad = path_in("cut.gtrace");
	struct gt_reader *rd;
	const struct gt_reader_status *st;
	size_t k = 0, tail;
	uint64_t n;

	while (k < l->nchunks && l->end[k] <= cut)
		k++;
	spit(bad, buf, cut);
	n = read_and_compare(bad, &many_opts, l, NULL, UINT64_MAX, &rd);
	st = gt_reader_status(rd);
	ck_assert_msg(n == records_before(l, k), "cut %zu: %llu records, want %llu", cut,
	              (unsigned long long)n, (unsigned long long)records_before(l, k));
	ck_assert(st->recovered);
	ck_assert_ptr_null(gt_reader_footer_counts(rd));
	ck_assert_uint_eq(st->chunks_read, k);
	tail = cut - (k ? l->end[k - 1] : l->data_start);
	/* the footer's remains are no damage; a chunk cut anywhere is one skipped chunk with the
	 * bytes left of it, and its records when its header survived. One or two bytes ("G",
	 * "GT") cannot tell a chunk from the footer and read as the footer. */
	if (k == l->nchunks || tail < 3) {
		ck_assert_uint_eq(st->chunks_skipped, 0);
		ck_assert_uint_eq(st->bytes_skipped, 0);
		ck_assert_uint_eq(st->chunk_records_skipped, 0);
	} else {
		ck_assert_uint_eq(st->chunks_skipped, 1);
		ck_assert_uint_eq(st->bytes_skipped, tail);
		ck_assert_uint_eq(st->chunk_records_skipped,
		                  tail >= GT_CHUNK_HDR_BYTES ? l->records[k] : 0);
	}
	ck_assert_uint_eq(st->records_skipped, 0);
	gt_reader_close(rd);
}

/* A reader of a FIFO into a file, until the writer closes it (the "disk" of the test below). */
struct fifo_copy {
	int fd;
	const char *out;
};

static void *fifo_copy(void *arg)
{
	struct fifo_copy *fc = arg;
	int out = open(fc->out, O_CREAT | O_TRUNC | O_WRONLY, 0644);
	char buf[65536];

	for (;;) {
		struct pollfd p = {.fd = fc->fd, .events = POLLIN};
		ssize_t got;

		poll(&p, 1, -1);
		got = read(fc->fd, buf, sizeof(buf));
		if (got == 0)
			break;
		if (got < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (got < 0 || write(out, buf, (size_t)got) != got)
			break;
	}
	close(out);
	return NULL;
}

/* Chunks written by the writer thread from its queue make the same file, byte for byte, as
 * chunks written by the caller. While the disk takes nothing (a FIFO nobody reads), the queue
 * is full after its first chunk and stays full; once the disk reads again, the writer thread
 * says so on its eventfd and gt_writer_wait_space returns. */
/* The index says which record types each chunk holds: state types (GT_TRACE_STATE_TYPES) in
 * chunks of their own, flushed before the event chunks that follow them; and each chunk's
 * time range bounds every time field of its records. */
struct idx_check {
	uint64_t chunk; /* chunks seen through the filter */
	struct gt_chunk_info ci[512];
	uint64_t passed_ok; /* event chunks the filter passed over */
};

static bool idx_chunk(void *ctx, const struct gt_chunk_info *c)
{
	struct idx_check *x = ctx;

	ck_assert_uint_lt(x->chunk, 512);
	x->ci[x->chunk++] = *c;
	/* pass over every third event chunk */
	if (!(c->types & GT_TRACE_STATE_TYPES) && x->chunk % 3 == 0) {
		x->passed_ok++;
		return false;
	}
	return true;
}

static const union gt_record *idx_record(void *ctx, const union gt_record *rec)
{
	struct idx_check *x = ctx;
	const struct gt_chunk_info *c = &x->ci[x->chunk - 1];
	const struct gt_record_desc *d = gt_record_desc(rec->hdr.type);

	REQUIRE(c->types >> rec->hdr.type & 1, "type %u not in its chunk's types %llx",
	        rec->hdr.type, (unsigned long long)c->types);
	REQUIRE(!(c->types & GT_TRACE_STATE_TYPES) || !(c->types & ~GT_TRACE_STATE_TYPES),
	        "chunk mixes state and events: %llx", (unsigned long long)c->types);
	for (unsigned i = 0; i < d->nfields; i++) {
		uint64_t v;

		if (!(d->fields[i].flags & GT_FIELD_TIME))
			continue;
		memcpy(&v, (const uint8_t *)rec + d->fields[i].offset, 8);
		REQUIRE(!v || (v >= c->first_ts_ns && v <= c->last_ts_ns),
		        "time %llu outside its chunk's %llu..%llu", (unsigned long long)v,
		        (unsigned long long)c->first_ts_ns, (unsigned long long)c->last_ts_ns);
	}
	/* drop the kernels of even pids: counted as dropped */
	if (rec->hdr.type == GT_REC_KERNEL && rec->hdr.pid % 2 == 0)
		return NULL;
	return rec;
}

static const union gt_record *drop_even_kernels(void *ctx, const union gt_record *rec)
{
	(void)ctx;
	return rec->hdr.type == GT_REC_KERNEL && rec->hdr.pid % 2 == 0 ? NULL : rec;
}

START_TEST(test_index_types_and_filter)
{
	const char *path = path_in("types.gtrace");
	struct idx_check *x = calloc(1, sizeof(*x));
	struct gt_reader_filter f = {idx_chunk, idx_record, x};
	struct gt_chunk_info ci;
	struct gt_reader *rd;
	const union gt_record *rec;
	uint64_t nrec, got = 0, kernels = 0, state_chunks = 0, passed_records = 0, dropped = 0;
	uint64_t k;

	write_synth(path, &many_opts, 8192, &nrec);
	ck_assert_int_eq(gt_reader_open(path, &rd, NULL), 0);
	for (k = 0; gt_reader_chunk_info(rd, k, &ci) == 1; k++) {
		ck_assert(ci.have_types);
		state_chunks += (ci.types & GT_TRACE_STATE_TYPES) != 0;
	}
	ck_assert_uint_eq(k, gt_reader_footer_counts(rd)->chunks);
	ck_assert_uint_ge(state_chunks, 1);
	ck_assert_int_eq(gt_reader_set_filter(rd, &f), 0);
	while (gt_reader_next(rd, &rec) == 1) {
		got++;
		kernels += rec->hdr.type == GT_REC_KERNEL;
	}
	ck_assert_uint_eq(x->chunk, k);
	ck_assert_uint_gt(x->passed_ok, 0);
	ck_assert_uint_eq(gt_reader_status(rd)->chunks_passed, x->passed_ok);
	ck_assert_uint_eq(gt_reader_status(rd)->chunks_read, k - x->passed_ok);
	for (uint64_t i = 0; i < k; i++)
		if (!(x->ci[i].types & GT_TRACE_STATE_TYPES) && (i + 1) % 3 == 0)
			passed_records += x->ci[i].records;
	dropped = gt_reader_status(rd)->records_dropped;
	ck_assert_uint_gt(dropped, 0);
	ck_assert_uint_eq(got + dropped + passed_records, nrec);
	ck_assert_uint_gt(kernels, 0);
	/* the filter stays across a rewind, and the same records come back */
	ck_assert_int_eq(gt_reader_rewind(rd), 0);
	x->chunk = 0;
	x->passed_ok = 0;
	for (k = 0; gt_reader_next(rd, &rec) == 1; k++)
		;
	ck_assert_uint_eq(k, got);
	ck_assert_uint_eq(gt_reader_status(rd)->records_dropped, dropped);
	/* removed: everything */
	ck_assert_int_eq(gt_reader_set_filter(rd, NULL), 0);
	ck_assert_int_eq(gt_reader_rewind(rd), 0);
	for (k = 0; gt_reader_next(rd, &rec) == 1; k++)
		;
	ck_assert_uint_eq(k, nrec);
	ck_assert_uint_eq(gt_reader_status(rd)->chunks_passed, 0);
	gt_reader_close(rd);

	/* without its footer the file reads whole (no index: the chunk function is not asked) */
	{
		uint8_t *buf;
		size_t len;
		struct layout *l = malloc(sizeof(*l));

		buf = slurp(path, &len);
		layout_of(buf, len, l);
		spit(path_in("cut.gtrace"), buf, l->chunks_end);
		ck_assert_int_eq(gt_reader_open(path_in("cut.gtrace"), &rd, NULL), 0);
		ck_assert_int_eq(gt_reader_chunk_info(rd, 0, &ci), 0);
		f.chunk = NULL;
		f.record = drop_even_kernels;
		ck_assert_int_eq(gt_reader_set_filter(rd, &f), 0);
		for (k = 0; gt_reader_next(rd, &rec) == 1; k++)
			;
		ck_assert_uint_eq(k + gt_reader_status(rd)->records_dropped, nrec);
		ck_assert(gt_reader_status(rd)->recovered);
		gt_reader_close(rd);
		free(buf);
		free(l);
	}
	free(x);
}
END_TEST

START_TEST(test_queued_writer_same_bytes)
{
	const char *a = path_in("direct.gtrace"), *b = path_in("queued.gtrace");
	const char *c = path_in("captured.gtrace");
	struct gt_writer_options wo = {.chunk_bytes = 8192, .queue_bytes = 1};
	struct fifo_copy fc = {.out = c};
	uint64_t na, nb, v;
	uint8_t *ba, *bb;
	size_t la, lb;
	struct gt_writer *w;
	union synth_buf sb;
	struct synth s;
	struct pollfd p;
	char tmp[256];
	pthread_t th;

	write_synth_q(a, &many_opts, 8192, 0, &na);
	write_synth_q(b, &many_opts, 8192, 64u << 20, &nb);
	ck_assert_uint_eq(na, nb);
	ba = slurp(a, &la);
	bb = slurp(b, &lb);
	ck_assert_uint_eq(la, lb);
	ck_assert(memcmp(ba, bb, la) == 0);
	free(bb);

	snprintf(tmp, sizeof(tmp), "%s.tmp-%ld", b, (long)getpid());
	unlink(b);
	ck_assert_int_eq(mkfifo(tmp, 0644), 0);
	fc.fd = open(tmp, O_RDONLY | O_NONBLOCK);
	ck_assert_int_ge(fc.fd, 0);
	ck_assert_int_ge(fcntl(fc.fd, F_SETPIPE_SZ, 4096), 4096);
	ck_assert_int_eq(gt_writer_open(b, &test_info, &wo, &w), 0);
	ck_assert_int_ge(gt_writer_wake_fd(w), 0);
	synth_init(&s, &many_opts);
	while (!gt_writer_full(w) && synth_next(&s, &sb))
		ck_assert_int_eq(gt_writer_write(w, &sb.rec.hdr), 0);
	ck_assert(gt_writer_full(w));
	/* more records are taken (and chunks queued) while the disk is stuck */
	for (int i = 0; i < 2000 && synth_next(&s, &sb); i++)
		ck_assert_int_eq(gt_writer_write(w, &sb.rec.hdr), 0);
	ck_assert(gt_writer_full(w));
	ck_assert_int_eq(pthread_create(&th, NULL, fifo_copy, &fc), 0);
	ck_assert_int_eq(gt_writer_wait_space(w), 0);
	p = (struct pollfd){.fd = gt_writer_wake_fd(w), .events = POLLIN};
	ck_assert_int_eq(poll(&p, 1, -1), 1);
	ck_assert_int_eq(read(gt_writer_wake_fd(w), &v, sizeof(v)), sizeof(v));
	ck_assert_uint_gt(gt_writer_progress(w), 0);
	while (synth_next(&s, &sb))
		ck_assert_int_eq(gt_writer_write(w, &sb.rec.hdr), 0);
	ck_assert_int_eq(gt_writer_close(w), 0);
	pthread_join(th, NULL);
	close(fc.fd);
	bb = slurp(c, &lb);
	ck_assert_uint_eq(la, lb);
	ck_assert(memcmp(ba, bb, la) == 0);
	free(ba);
	free(bb);
	/* without a queue: never full, no eventfd, nothing to wait for */
	ck_assert_int_eq(gt_writer_open(a, &test_info, NULL, &w), 0);
	ck_assert(!gt_writer_full(w));
	ck_assert_int_eq(gt_writer_wake_fd(w), -1);
	ck_assert_int_eq(gt_writer_wait_space(w), 0);
	gt_writer_discard(w);
}
END_TEST

/* Reads a pipe to its end. */
static void *drain_pipe(void *arg)
{
	char buf[65536];
	int fd = *(int *)arg;

	while (read(fd, buf, sizeof(buf)) > 0)
		;
	return NULL;
}

/* However much is queued, one write takes at most GT_WRITE_MAX_BYTES, so that a disk that
 * moves slowly is seen to move (each returned call is progress). The thread is held in its
 * first write (a full pipe) while 8 MiB more queue behind it; once the pipe is read, those go
 * in 8 calls of 1 MiB (two chunks each), not in one writev of 8 MiB. */
START_TEST(test_writeq_bytes_per_call)
{
	static uint8_t chunk[512u << 10];
	struct gt_writeq *q;
	pthread_t th;
	int fds[2], pipe_bytes, queued = 0;

	ck_assert_int_eq(pipe(fds), 0);
	pipe_bytes = fcntl(fds[1], F_GETPIPE_SZ);
	ck_assert_int_gt(pipe_bytes, 0);
	ck_assert_int_le(pipe_bytes, (int)sizeof(chunk) / 4);
	memset(chunk, 0x5a, sizeof(chunk));
	/* a limit of one byte: room means everything was written */
	ck_assert_int_eq(gt_writeq_new(fds[1], 1, 0, &q), 0);
	ck_assert_int_eq(gt_writeq_push(q, chunk, sizeof(chunk) / 4), 0);
	/* the pipe is full once the thread is inside that write, which cannot return before
	 * the pipe is read */
	while (queued < pipe_bytes) {
		ck_assert_int_eq(ioctl(fds[0], FIONREAD, &queued), 0);
		if (queued < pipe_bytes)
			usleep(1000);
	}
	for (int i = 0; i < 16; i++)
		ck_assert_int_eq(gt_writeq_push(q, chunk, sizeof(chunk)), 0);
	ck_assert_int_eq(pthread_create(&th, NULL, drain_pipe, &fds[0]), 0);
	ck_assert_int_eq(gt_writeq_wait_space(q), 0);
	/* the first chunk's call, then 8 of 1 MiB */
	ck_assert_uint_eq(gt_writeq_progress(q), 9);
	ck_assert_int_eq(gt_writeq_finish(q), 0);
	close(fds[1]);
	pthread_join(th, NULL);
	close(fds[0]);
}
END_TEST

START_TEST(test_truncate_at_chunk_boundaries)
{
	const char *path = path_in("many.gtrace");
	struct layout *l = malloc(sizeof(*l));
	uint8_t *buf;
	size_t len;

	write_synth(path, &many_opts, 8192, NULL);
	buf = slurp(path, &len);
	layout_of(buf, len, l);
	for (size_t k = 0; k < l->nchunks; k++) {
		check_cut(buf, l, l->end[k]);                      /* right after chunk k */
		check_cut(buf, l, l->end[k] + 1);                  /* one byte into the next */
		check_cut(buf, l, l->off[k] + GT_CHUNK_HDR_BYTES); /* header of k only */
		check_cut(buf, l, l->end[k] - 1);                  /* k missing its last byte */
	}
	/* cut inside the footer, and just before the trailer */
	check_cut(buf, l, l->chunks_end + 5);
	check_cut(buf, l, len - 1);
	free(buf);
	free(l);
}
END_TEST

START_TEST(test_truncate_at_random_offsets)
{
	const char *path = path_in("many.gtrace");
	struct layout *l = malloc(sizeof(*l));
	struct synth rng = {.rng = 99};
	uint8_t *buf;
	size_t len;

	write_synth(path, &many_opts, 8192, NULL);
	buf = slurp(path, &len);
	layout_of(buf, len, l);
	for (int i = 0; i < 150; i++) {
		size_t cut = l->data_start + 1 + synth_rand(&rng) % (len - l->data_start - 1);

		check_cut(buf, l, cut);
	}
	free(buf);
	free(l);
}
END_TEST

/* A bit flip inside a chunk costs that chunk only, with or without the footer. */
START_TEST(test_bit_flips_in_chunks)
{
	const char *path = path_in("many.gtrace"), *bad = path_in("flip.gtrace");
	struct layout *l = malloc(sizeof(*l));
	bool *skip;
	struct synth rng = {.rng = 7};
	uint8_t *buf;
	size_t len;
	uint64_t nrec;

	write_synth(path, &many_opts, 8192, &nrec);
	buf = slurp(path, &len);
	layout_of(buf, len, l);
	skip = calloc(l->nchunks, sizeof(*skip));
	for (int i = 0; i < 120; i++) {
		size_t k = synth_rand(&rng) % l->nchunks;
		size_t at = l->off[k] + synth_rand(&rng) % (l->end[k] - l->off[k]);
		uint8_t bit = (uint8_t)(1u << (synth_rand(&rng) % 8));
		bool footer = i % 2 == 0;
		struct gt_reader *rd;
		const struct gt_reader_status *st;
		uint64_t n;

		buf[at] ^= bit;
		/* odd rounds: the same damage in a file whose footer never got written */
		spit(bad, buf, footer ? len : l->chunks_end);
		skip[k] = true;
		n = read_and_compare(bad, &many_opts, l, skip, nrec, &rd);
		skip[k] = false;
		st = gt_reader_status(rd);
		ck_assert_uint_eq(n, nrec - l->records[k]);
		ck_assert_uint_eq(st->chunks_read, l->nchunks - 1);
		ck_assert_uint_eq(st->recovered, !footer);
		ck_assert_uint_eq(st->bytes_skipped, l->end[k] - l->off[k]);
		ck_assert_uint_eq(st->chunks_skipped, 1);
		ck_assert_uint_eq(st->records_skipped, 0);
		/* without the index, a chunk whose header is damaged held an unknown number */
		ck_assert_uint_eq(st->chunk_records_skipped,
		                  footer || at >= l->off[k] + GT_CHUNK_HDR_BYTES ? l->records[k]
		                                                                 : 0);
		gt_reader_close(rd);
		buf[at] ^= bit;
	}
	free(skip);
	free(buf);
	free(l);
}
END_TEST

/* Damage to the footer or trailer: the file is read by scanning, with nothing lost. */
START_TEST(test_bit_flips_in_footer)
{
	const char *path = path_in("many.gtrace"), *bad = path_in("flip.gtrace");
	struct layout *l = malloc(sizeof(*l));
	uint8_t *buf;
	size_t len;
	uint64_t nrec;

	write_synth(path, &many_opts, 8192, &nrec);
	buf = slurp(path, &len);
	layout_of(buf, len, l);
	for (size_t at = l->chunks_end; at < len; at += 3) {
		struct gt_reader *rd;
		const struct gt_reader_status *st;

		buf[at] ^= 0x10;
		spit(bad, buf, len);
		ck_assert_uint_eq(read_and_compare(bad, &many_opts, l, NULL, nrec, &rd), nrec);
		st = gt_reader_status(rd);
		ck_assert(st->recovered);
		ck_assert_uint_eq(st->chunks_read, l->nchunks);
		/* the footer is no chunk: found by its magic, or where the trailer puts it */
		ck_assert_uint_eq(st->chunks_skipped, 0);
		ck_assert_uint_eq(st->bytes_skipped, 0);
		gt_reader_close(rd);
		buf[at] ^= 0x10;
	}
	free(buf);
	free(l);
}
END_TEST

/* The footer's checksum and the trailer made to hold again after a change to the index. */
static void reseal_footer(uint8_t *buf, size_t len, const struct layout *l)
{
	uint8_t *t = buf + len - GT_TRAILER_BYTES;

	gt_put_le32(t + 24,
	            gt_crc32c(0, buf + l->chunks_end, len - GT_TRAILER_BYTES - l->chunks_end));
	gt_put_le32(t + 28, gt_crc32c(0, t, 28));
}

/* Chunk k's frame checksum, in its header and its index entry, and the header's own checksum
 * made to hold again after a change to the chunk (format.md, "Chunks" and "Footer"). */
static void reseal_chunk(uint8_t *buf, size_t len, const struct layout *l, size_t k)
{
	uint8_t *h = buf + l->off[k];
	uint32_t crc = gt_crc32c(0, h + GT_CHUNK_HDR_BYTES, gt_get_le32(h + 4));
	uint32_t entry_bytes = gt_get_le32(buf + l->chunks_end + 4);

	gt_put_le32(h + 32, crc);
	gt_put_le32(h + 36, gt_crc32c(0, h, 36));
	gt_put_le32(buf + l->chunks_end + 16 + k * entry_bytes + 20, crc);
	reseal_footer(buf, len, l);
}

/* buf (the file of many_opts, layout l, nrec records) damaged in chunk k, with its footer or
 * without (a writer killed before it): every other chunk reads whole, and the status counts
 * exactly one chunk of `bytes` bytes holding `records` records, and nothing else. */
static void expect_one_chunk_lost(const uint8_t *buf, size_t len, const struct layout *l, size_t k,
                                  bool footer, uint64_t nrec, uint64_t bytes, uint64_t records)
{
	const char *bad = path_in("damaged.gtrace");
	bool *skip = calloc(l->nchunks, sizeof(*skip));
	const struct gt_reader_status *st;
	struct gt_reader *rd;

	ck_assert_ptr_nonnull(skip);
	skip[k] = true;
	spit(bad, buf, footer ? len : l->chunks_end);
	ck_assert_uint_eq(read_and_compare(bad, &many_opts, l, skip, nrec, &rd),
	                  nrec - l->records[k]);
	st = gt_reader_status(rd);
	ck_assert_uint_eq(st->recovered, !footer);
	ck_assert_uint_eq(st->chunks_read, l->nchunks - 1);
	ck_assert_uint_eq(st->chunks_skipped, 1);
	ck_assert_uint_eq(st->bytes_skipped, bytes);
	ck_assert_uint_eq(st->chunk_records_skipped, records);
	ck_assert_uint_eq(st->records_skipped, 0);
	gt_reader_close(rd);
	free(skip);
}

/* Each way a chunk is lost, read through the index and by a scan: a frame whose checksum
 * fails, a frame that does not decompress under checksums that hold, a flipped byte in the
 * chunk header, lengths out of bounds under a header checksum that holds (a buggy writer),
 * and a file cut inside the chunk. */
START_TEST(test_damage_accounting)
{
	const char *path = path_in("many.gtrace");
	struct layout *l = malloc(sizeof(*l));
	uint8_t *orig, *buf;
	uint64_t nrec;
	size_t len, k, bytes;

	write_synth(path, &many_opts, 8192, &nrec);
	orig = slurp(path, &len);
	buf = malloc(len);
	layout_of(orig, len, l);
	ck_assert_uint_ge(l->nchunks, 3);
	k = l->nchunks / 2;
	bytes = l->end[k] - l->off[k];
	for (int footer = 0; footer < 2; footer++) {
		memcpy(buf, orig, len);
		buf[l->off[k] + GT_CHUNK_HDR_BYTES + 7] ^= 0x40;
		expect_one_chunk_lost(buf, len, l, k, footer, nrec, bytes, l->records[k]);

		memcpy(buf, orig, len);
		memset(buf + l->off[k] + GT_CHUNK_HDR_BYTES, 0xa5, bytes - GT_CHUNK_HDR_BYTES);
		reseal_chunk(buf, len, l, k);
		expect_one_chunk_lost(buf, len, l, k, footer, nrec, bytes, l->records[k]);

		/* its raw_bytes: without the index, how many records it held is lost too */
		memcpy(buf, orig, len);
		buf[l->off[k] + 9] ^= 0x01;
		expect_one_chunk_lost(buf, len, l, k, footer, nrec, bytes,
		                      footer ? l->records[k] : 0);

		memcpy(buf, orig, len);
		gt_put_le32(buf + l->off[k] + 8, GT_CHUNK_MAX_RAW + 1);
		reseal_chunk(buf, len, l, k);
		expect_one_chunk_lost(buf, len, l, k, footer, nrec, bytes, l->records[k]);
	}
	/* the index itself says a length out of bounds: the chunk it describes is passed over */
	memcpy(buf, orig, len);
	gt_put_le32(buf + l->chunks_end + 16 + k * gt_get_le32(buf + l->chunks_end + 4) + 12,
	            GT_CHUNK_MAX_RAW + 1);
	reseal_footer(buf, len, l);
	expect_one_chunk_lost(buf, len, l, k, true, nrec, bytes, l->records[k]);
	/* cut inside its header, and inside its frame */
	check_cut(orig, l, l->off[k] + 20);
	check_cut(orig, l, l->off[k] + GT_CHUNK_HDR_BYTES + 10);
	free(buf);
	free(orig);
	free(l);
}
END_TEST

/* Random damage anywhere, several flips at once: never a crash or a hang, and the reader
 * either refuses the file with a message or reads it to the end. */
START_TEST(test_random_damage)
{
	const char *path = path_in("many.gtrace"), *bad = path_in("flip.gtrace");
	struct synth rng = {.rng = 1234};
	uint8_t *buf, *copy;
	size_t len;

	write_synth(path, &many_opts, 8192, NULL);
	buf = slurp(path, &len);
	copy = malloc(len);
	for (int i = 0; i < 150; i++) {
		struct gt_reader *rd;
		const union gt_record *rec;
		const char *err = NULL;
		int r;

		memcpy(copy, buf, len);
		for (int f = 0; f < 1 + i % 8; f++)
			copy[synth_rand(&rng) % len] ^= (uint8_t)(1u << (synth_rand(&rng) % 8));
		spit(bad, copy, i % 3 == 0 ? len - synth_rand(&rng) % 5000 : len);
		if (gt_reader_open(bad, &rd, &err) < 0) {
			ck_assert_ptr_nonnull(err);
			continue;
		}
		while ((r = gt_reader_next(rd, &rec)) == 1)
			REQUIRE(rec->hdr.type < GT_REC_MAX, "type %u", rec->hdr.type);
		ck_assert_int_eq(r, 0);
		gt_reader_close(rd);
	}
	free(copy);
	free(buf);
}
END_TEST

/* Encode one record with a fresh codec (as at a chunk start). */
static size_t encode_fresh(const union gt_record *r, uint8_t *out)
{
	static struct gt_codec c;

	ck_assert_int_eq(gt_codec_init(&c), 0);
	return gt_codec_encode(&c, &r->hdr, out);
}

/* Split an encoded record into its body (after type and length). */
static const uint8_t *body_of(const uint8_t *enc, size_t *body_len)
{
	const uint8_t *p = enc + 1; /* types < 128 take one byte */
	uint64_t v = 0;
	unsigned shift = 0;

	do {
		v |= (uint64_t)(*p & 0x7f) << shift;
		shift += 7;
	} while (*p++ & 0x80);
	*body_len = (size_t)v;
	return p;
}

static size_t frame(uint8_t *out, unsigned type, const uint8_t *body, size_t len)
{
	uint8_t *p = gt_put_varint(out, type);

	p = gt_put_varint(p, len);
	memcpy(p, body, len);
	return (size_t)(p + len - out);
}

/* Stacks: an API and an NVTX record written before stack_id existed read stack id 0; a STACK
 * record and a MODULE record come back as written. */
START_TEST(test_stack_records)
{
	static struct gt_codec enc, dec;
	union gt_record *recs = calloc(GT_REC_MAX, sizeof(*recs));
	struct gt_rec_string *strbuf = calloc(1, sizeof(*strbuf) + GT_STRING_MAX + 1);
	uint8_t buf[4 * GT_CODEC_MAX_RECORD + GT_CODEC_PAD] = {0}, body[64], *p = body;
	const uint8_t *rp;
	const union gt_record *out;
	struct gt_rec_stack s = {{GT_REC_STACK, sizeof(s), 9}};
	struct gt_rec_module m = {{GT_REC_MODULE, sizeof(m), 9}};
	size_t n;

	ck_assert_int_eq(gt_codec_init(&enc), 0);
	ck_assert_int_eq(gt_codec_init(&dec), 0);
	/* an NVTX record of the old layout: pid, times, range id, ..., depth; no stack_id */
	for (unsigned i = 0; i < 12; i++)
		p = gt_put_varint(p, i == 0 ? gt_zigzag(9) : 3);
	n = frame(buf, GT_REC_NVTX, body, (size_t)(p - body));
	rp = buf;
	ck_assert_int_eq(gt_codec_decode(&dec, &rp, buf + n, recs, strbuf, &out), GT_DECODE_OK);
	ck_assert_uint_eq(out->hdr.type, GT_REC_NVTX);
	ck_assert_uint_eq(out->nvtx.depth, 3);
	ck_assert_uint_eq(out->nvtx.stack_id, 0);

	s.stack_id = 17;
	s.depth = 10;
	s.first = 8;
	s.frames[0] = (struct gt_stack_frame){0x7f0012345678ull, GT_FRAME_NATIVE, 0};
	s.frames[1] = (struct gt_stack_frame){0x401000ull, GT_FRAME_NATIVE, 0};
	m.start = 0x400000;
	m.end = 0x402000;
	m.file_offset = 0x1000;
	m.bias = 0;
	m.path_id = 3;
	m.build_id = 4;
	n = gt_codec_encode(&enc, &s.hdr, buf);
	n += gt_codec_encode(&enc, &m.hdr, buf + n);
	memset(buf + n, 0, GT_CODEC_PAD);
	rp = buf;
	ck_assert_int_eq(gt_codec_decode(&dec, &rp, buf + n, recs, strbuf, &out), GT_DECODE_OK);
	ck_assert_mem_eq(out, &s, sizeof(s));
	ck_assert_int_eq(gt_codec_decode(&dec, &rp, buf + n, recs, strbuf, &out), GT_DECODE_OK);
	ck_assert_mem_eq(out, &m, sizeof(m));
	ck_assert_ptr_eq(rp, buf + n);
	ck_assert_int_eq(gt_record_validate(&s.hdr, sizeof(s)), 0);
	ck_assert_str_eq(gt_record_name(GT_REC_STACK), "stack");
	ck_assert_str_eq(gt_record_name(GT_REC_MODULE), "module");
	free(strbuf);
	free(recs);
}
END_TEST

/* Record kinds and fields from other versions: an unknown type (200) is skipped and counted,
 * extra trailing fields of a known type are ignored, missing ones read as zero. */
START_TEST(test_unknown_and_versioned_records)
{
	const char *path = path_in("future.gtrace");
	struct gt_writer *w;
	struct gt_reader *rd;
	const union gt_record *rec;
	const char *err = NULL;
	union gt_record k1, k2, api;
	uint8_t enc[GT_CODEC_MAX_RECORD], raw[2048], body[600];
	const uint8_t *b;
	size_t n = 0, blen;

	fill_record(GT_REC_KERNEL, 4, &k1);
	fill_record(GT_REC_API, 5, &api);
	ck_assert_int_eq(gt_writer_open(path, &test_info, NULL, &w), 0);
	ck_assert_int_eq(gt_writer_write(w, &api.hdr), 0);
	ck_assert_int_eq(gt_writer_flush(w), 0);

	/* a type-200 record of 5 body bytes, then 300 body bytes (two-byte length) */
	n += frame(raw + n, 200, (const uint8_t *)"\x01\x02\x03\x04\x05", 5);
	memset(body, 0xff, 300); /* not even valid varints: it is skipped unread */
	n += frame(raw + n, 200, body, 300);
	/* a kernel from a newer writer: its fields plus three more */
	{
		size_t e = encode_fresh(&k1, enc);

		b = body_of(enc, &blen);
		ck_assert_uint_eq((size_t)(b - enc) + blen, e);
		memcpy(body, b, blen);
		memcpy(body + blen, "\x05\x81\x01\x00", 4);
		n += frame(raw + n, GT_REC_KERNEL, body, blen + 4);
	}
	ck_assert_int_eq(gt_writer_append_encoded(w, raw, n, 3), 0);
	ck_assert_int_eq(gt_writer_flush(w), 0);

	/* a kernel from an older writer that knew only pid, start, end and correlation id */
	n = 0;
	{
		uint8_t *p = body;

		p = gt_put_varint(p, gt_zigzag(4100)); /* pid, delta from 0 */
		p = gt_put_varint(p, gt_zigzag(5000)); /* start_ns */
		p = gt_put_varint(p, gt_zigzag(7000)); /* end_ns */
		p = gt_put_varint(p, gt_zigzag(42));   /* correlation_id */
		n += frame(raw + n, GT_REC_KERNEL, body, (size_t)(p - body));
	}
	ck_assert_int_eq(gt_writer_append_encoded(w, raw, n, 1), 0);
	ck_assert_int_eq(gt_writer_write(w, &api.hdr), 0);
	ck_assert_int_eq(gt_writer_close(w), 0);

	ck_assert_int_eq(gt_reader_open(path, &rd, &err), 0);
	ck_assert_int_eq(gt_reader_next(rd, &rec), 1);
	expect_same(rec, &api, 0);
	ck_assert_int_eq(gt_reader_next(rd, &rec), 1);
	expect_same(rec, &k1, 1);
	ck_assert_uint_eq(gt_reader_status(rd)->records_skipped, 2);
	ck_assert_int_eq(gt_reader_next(rd, &rec), 1);
	memset(&k2, 0, sizeof(k2));
	k2.hdr.type = GT_REC_KERNEL;
	k2.hdr.size = sizeof(struct gt_rec_kernel);
	k2.hdr.pid = 4100;
	k2.kernel.span.start_ns = 5000;
	k2.kernel.span.end_ns = 7000;
	k2.kernel.span.correlation_id = 42;
	expect_same(rec, &k2, 2);
	/* the writer's own record after the planted ones decodes with its own delta state */
	ck_assert_int_eq(gt_reader_next(rd, &rec), 1);
	expect_same(rec, &api, 3);
	ck_assert_int_eq(gt_reader_next(rd, &rec), 0);
	ck_assert_uint_eq(gt_reader_status(rd)->records_skipped, 2);
	ck_assert_uint_eq(gt_reader_status(rd)->chunks_read, 3);
	gt_reader_close(rd);
}
END_TEST

/* Malformed records inside a chunk whose checksum is fine (a buggy writer): a length past
 * the payload stops the chunk, a field running past its record skips the record. */
/* gputrace info --reindex: a trace cut short gets a complete index with chunk types and the
 * same records; one holding records this reader cannot read is left as it was. */
START_TEST(test_reindex)
{
	const char *path = path_in("re.gtrace"), *cut = path_in("re-cut.gtrace");
	const char *future = path_in("re-future.gtrace"), *err = NULL;
	struct gt_reindex_result res;
	struct layout *l = malloc(sizeof(*l));
	struct gt_chunk_info ci;
	struct gt_reader *rd;
	struct gt_writer *w;
	union gt_record api;
	uint8_t *buf, raw[64];
	uint64_t nrec, k;
	size_t len, n;
	const union gt_record *rec;
	struct stat st1, st2;

	write_synth(path, &many_opts, 8192, &nrec);
	buf = slurp(path, &len);
	layout_of(buf, len, l);
	spit(cut, buf, l->chunks_end);
	free(buf);

	ck_assert_int_eq(gt_trace_reindex(cut, &res, &err), 0);
	ck_assert(!res.had_index);
	ck_assert(!res.had_types);
	ck_assert_uint_eq(res.records, nrec);
	ck_assert_uint_eq(res.records_dropped, 0);
	ck_assert_uint_eq(res.chunks_read, l->nchunks);
	ck_assert_uint_eq(res.chunks_skipped, 0);
	ck_assert_uint_eq(res.bytes_before, l->chunks_end);
	ck_assert_int_eq(stat(cut, &st1), 0);
	ck_assert_uint_eq(res.bytes_after, (uint64_t)st1.st_size);
	/* no temporary file is left */
	{
		char tmp[300];

		snprintf(tmp, sizeof(tmp), "%s.tmp-%ld", cut, (long)getpid());
		ck_assert_int_ne(access(tmp, F_OK), 0);
	}
	/* the same records in the same order, now under an index with types */
	ck_assert_uint_eq(read_and_compare(cut, &many_opts, NULL, NULL, nrec, &rd), nrec);
	ck_assert(!gt_reader_status(rd)->recovered);
	for (k = 0; gt_reader_chunk_info(rd, k, &ci) == 1; k++)
		ck_assert(ci.have_types);
	ck_assert_uint_eq(k, res.chunks);
	ck_assert_uint_eq(gt_reader_footer_counts(rd)->records[GT_REC_KERNEL], 6000);
	gt_reader_close(rd);
	/* again, from the indexed file: the same bytes */
	ck_assert_int_eq(gt_trace_reindex(cut, &res, &err), 0);
	ck_assert(res.had_index && res.had_types);
	ck_assert_int_eq(stat(cut, &st2), 0);
	ck_assert_uint_eq(st2.st_size, st1.st_size);

	/* a record of a type this reader does not know: refused, the file untouched */
	fill_record(GT_REC_API, 5, &api);
	ck_assert_int_eq(gt_writer_open(future, &test_info, NULL, &w), 0);
	ck_assert_int_eq(gt_writer_write(w, &api.hdr), 0);
	ck_assert_int_eq(gt_writer_flush(w), 0);
	n = frame(raw, 200, (const uint8_t *)"\x01\x02", 2);
	ck_assert_int_eq(gt_writer_append_encoded(w, raw, n, 1), 0);
	ck_assert_int_eq(gt_writer_close(w), 0);
	ck_assert_int_eq(stat(future, &st1), 0);
	ck_assert_int_eq(gt_trace_reindex(future, &res, &err), -EPROTO);
	ck_assert_str_eq(err, "1 records could not be read (types of a newer gputrace, or damage); "
	                      "left as it was");
	ck_assert_int_eq(stat(future, &st2), 0);
	ck_assert_uint_eq(st2.st_size, st1.st_size);
	ck_assert_int_eq(st2.st_mtim.tv_nsec, st1.st_mtim.tv_nsec);
	/* and a file that is not a trace */
	spit(path_in("junk.gtrace"), "junk", 4);
	ck_assert_int_eq(gt_trace_reindex(path_in("junk.gtrace"), &res, &err), -EINVAL);
	ck_assert_str_eq(err, "not a gputrace file (bad magic)");

	/* cut 100 bytes into its last chunk: that chunk is lost, and stays on record in the new
	 * file as one damaged_file loss saying what it was, after every record that was read */
	path = path_in("re2.gtrace"); /* path_in's names are reused after four */
	cut = path_in("re2-cut.gtrace");
	write_synth(path, &many_opts, 8192, &nrec);
	buf = slurp(path, &len);
	layout_of(buf, len, l);
	k = l->nchunks - 1;
	spit(cut, buf, l->off[k] + 100);
	free(buf);
	ck_assert_int_eq(gt_trace_reindex(cut, &res, &err), 0);
	ck_assert_uint_eq(res.chunks_skipped, 1);
	ck_assert_uint_eq(res.records, nrec - l->records[k] + 1);
	ck_assert_int_eq(gt_reader_open(cut, &rd, &err), 0);
	n = 0;
	while (gt_reader_next(rd, &rec) == 1) {
		n++;
		if (rec->hdr.type != GT_REC_LOSS)
			continue;
		ck_assert_uint_eq(n, res.records);
		ck_assert_uint_eq(rec->loss.source, GT_LOSS_FILE);
		ck_assert_uint_eq(rec->loss.count, 1);
		ck_assert_uint_eq(rec->loss.bytes, 100);
		ck_assert_uint_eq(rec->loss.records, l->records[k]);
		ck_assert_uint_eq(rec->loss.malformed, 0);
	}
	ck_assert_uint_eq(n, res.records);
	ck_assert_uint_eq(gt_reader_footer_counts(rd)->records[GT_REC_LOSS], 1);
	ck_assert_uint_eq(gt_reader_status(rd)->chunks_skipped, 0);
	gt_reader_close(rd);
	free(l);
}
END_TEST

START_TEST(test_malformed_payload)
{
	const char *path = path_in("malformed.gtrace");
	struct gt_writer *w;
	struct gt_reader *rd;
	const union gt_record *rec;
	const char *err = NULL;
	union gt_record api;
	uint8_t raw[GT_CODEC_MAX_RECORD + 8];
	size_t n = 0;

	fill_record(GT_REC_API, 6, &api);
	ck_assert_int_eq(gt_writer_open(path, &test_info, NULL, &w), 0);
	ck_assert_int_eq(gt_writer_write(w, &api.hdr), 0);
	ck_assert_int_eq(gt_writer_flush(w), 0);
	/* api record whose last varint claims to continue past its 2-byte body */
	n += frame(raw + n, GT_REC_API, (const uint8_t *)"\x00\x80", 2);
	/* a string with id 0, then one whose length exceeds its body */
	n += frame(raw + n, GT_REC_STRING, (const uint8_t *)"\x00\x00\x01x", 4);
	n += frame(raw + n, GT_REC_STRING, (const uint8_t *)"\x00\x05\x09xy", 5);
	/* a record whose length runs past the payload: the rest of the chunk is dropped */
	raw[n++] = GT_REC_API;
	raw[n++] = 0x7f;
	raw[n++] = 0;
	ck_assert_int_eq(gt_writer_append_encoded(w, raw, n, 4), 0);
	ck_assert_int_eq(gt_writer_flush(w), 0);
	ck_assert_int_eq(gt_writer_write(w, &api.hdr), 0);
	ck_assert_int_eq(gt_writer_close(w), 0);

	ck_assert_int_eq(gt_reader_open(path, &rd, &err), 0);
	ck_assert_int_eq(gt_reader_next(rd, &rec), 1);
	expect_same(rec, &api, 0);
	ck_assert_int_eq(gt_reader_next(rd, &rec), 1);
	expect_same(rec, &api, 1);
	ck_assert_int_eq(gt_reader_next(rd, &rec), 0);
	ck_assert_uint_eq(gt_reader_status(rd)->records_skipped, 4);
	ck_assert_ptr_null(gt_reader_string(rd, 5, NULL));
	gt_reader_close(rd);

	/* a bad length in the middle of a chunk whose header counts five records: the one
	 * before it reads, it and the three after it are lost, all four counted */
	ck_assert_int_eq(gt_writer_open(path, &test_info, NULL, &w), 0);
	n = encode_fresh(&api, raw);
	raw[n++] = GT_REC_API;
	raw[n++] = 0x7f;
	raw[n++] = 0;
	ck_assert_int_eq(gt_writer_append_encoded(w, raw, n, 5), 0);
	ck_assert_int_eq(gt_writer_close(w), 0);
	ck_assert_int_eq(gt_reader_open(path, &rd, &err), 0);
	ck_assert_int_eq(gt_reader_next(rd, &rec), 1);
	expect_same(rec, &api, 0);
	ck_assert_int_eq(gt_reader_next(rd, &rec), 0);
	ck_assert_uint_eq(gt_reader_status(rd)->records_skipped, 4);
	ck_assert_uint_eq(gt_reader_status(rd)->chunks_skipped, 0);
	ck_assert_uint_eq(gt_reader_status(rd)->chunks_read, 1);
	gt_reader_close(rd);
}
END_TEST

static long maxrss_kib(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

/* 10 M records written and read back exactly, with the reader's memory flat. */
START_TEST(test_ten_million_flat_memory)
{
	const char *big = path_in("big.gtrace"), *small = path_in("small.gtrace");
	struct synth_opts o = {.kernels = 5000000,
	                       .names = 400,
	                       .processes = 1,
	                       .seed = 5,
	                       .api = true,
	                       .memcpy = true};
	struct synth_opts so = o;
	struct gt_reader *rd;
	uint64_t nrec, nsmall, n;
	long before, after;
	struct stat st;

	so.kernels = 2000;
	write_synth(small, &so, 0, &nsmall);
	write_synth(big, &o, 0, &nrec);
	ck_assert_uint_ge(nrec, 10000000);
	ck_assert_int_eq(stat(big, &st), 0);
	/* warm up: the high-water mark after reading a small file */
	ck_assert_uint_eq(read_and_compare(small, &so, NULL, NULL, UINT64_MAX, NULL), nsmall);
	before = maxrss_kib();
	n = read_and_compare(big, &o, NULL, NULL, nrec, &rd);
	after = maxrss_kib();
	ck_assert_uint_eq(n, nrec);
	ck_assert_uint_eq(gt_reader_footer_counts(rd)->records[GT_REC_KERNEL], 5000000);
	ck_assert_uint_eq(gt_reader_status(rd)->chunks_read, gt_reader_footer_counts(rd)->chunks);
	gt_reader_close(rd);
	/* The decoded records are over 1 GB and the file over 40 MB: a reader that kept either
	 * would blow through this bound. It leaves room for the sanitizers' own bookkeeping
	 * (AddressSanitizer's quarantine adds about 10 MB here); without them growth is ~0. */
	ck_assert_int_gt(st.st_size, 40 << 20);
	ck_assert_msg(after - before < 32768, "reader RSS grew by %ld KiB", after - before);
}
END_TEST

static Suite *trace_suite(void)
{
	Suite *s = suite_create("trace");
	TCase *tc = tcase_create("core");
	TCase *big = tcase_create("big");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_crc32c);
	tcase_add_test(tc, test_varint_zigzag);
	tcase_add_test(tc, test_straight_codecs_active);
	tcase_add_test(tc, test_straight_equals_generic);
	tcase_add_test(tc, test_varint_every_length);
	tcase_add_test(tc, test_stack_records);
	tcase_add_test(tc, test_roundtrip_all_types);
	tcase_add_test(tc, test_writer_rejects_malformed);
	tcase_add_test(tc, test_rename_on_close);
	tcase_add_test(tc, test_empty_trace);
	tcase_add_test(tc, test_open_errors);
	tcase_add_test(tc, test_header_bit_flips);
	tcase_add_test(tc, test_roundtrip_many_chunks);
	tcase_add_test(tc, test_queued_writer_same_bytes);
	tcase_add_test(tc, test_writeq_bytes_per_call);
	tcase_add_test(tc, test_index_types_and_filter);
	tcase_add_test(tc, test_next_batch);
	tcase_add_test(tc, test_truncate_at_chunk_boundaries);
	tcase_add_test(tc, test_truncate_at_random_offsets);
	tcase_add_test(tc, test_bit_flips_in_chunks);
	tcase_add_test(tc, test_bit_flips_in_footer);
	tcase_add_test(tc, test_damage_accounting);
	tcase_add_test(tc, test_random_damage);
	tcase_add_test(tc, test_unknown_and_versioned_records);
	tcase_add_test(tc, test_malformed_payload);
	tcase_add_test(tc, test_reindex);
	suite_add_tcase(s, tc);
	tcase_add_checked_fixture(big, setup, teardown);
	tcase_set_timeout(big, 300);
	tcase_add_test(big, test_ten_million_flat_memory);
	suite_add_tcase(s, big);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(trace_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
