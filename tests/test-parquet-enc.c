/* Check suite for the Parquet writer's encodings (exporters/formats/parquet/): the Thrift
 * compact protocol's varints, zigzag integers, field headers (short and long form, across a
 * nested struct), list headers, and the RLE / bit-packed hybrid of levels and dictionary
 * indexes, and DELTA_BINARY_PACKED (the examples of Encodings.md, a wrap modulo 2^64), each
 * against bytes computed by hand from the specifications. */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "parquet.h"
#include "thrift.h"

#define EXPECT(buf, ...)                                                                           \
	do {                                                                                       \
		static const uint8_t want[] = {__VA_ARGS__};                                       \
		ck_assert_uint_eq((buf)->n, sizeof(want));                                         \
		ck_assert_mem_eq((buf)->p, want, sizeof(want));                                    \
	} while (0)

START_TEST(test_varint)
{
	struct pq_buf b = {0};

	th_varint(&b, 0);
	th_varint(&b, 1);
	th_varint(&b, 127);
	th_varint(&b, 128);
	th_varint(&b, 300);
	EXPECT(&b, 0x00, 0x01, 0x7f, 0x80, 0x01, 0xac, 0x02);
	pq_buf_free(&b);
}
END_TEST

START_TEST(test_zigzag)
{
	ck_assert_uint_eq(th_zigzag(0), 0);
	ck_assert_uint_eq(th_zigzag(-1), 1);
	ck_assert_uint_eq(th_zigzag(1), 2);
	ck_assert_uint_eq(th_zigzag(-2), 3);
	ck_assert_uint_eq(th_zigzag(2147483647), 4294967294u);
	ck_assert_uint_eq(th_zigzag(INT64_MIN), UINT64_MAX);
}
END_TEST

START_TEST(test_fields)
{
	struct pq_buf b = {0};
	struct th t;

	th_init(&t, &b);
	th_i32(&t, 1, 5);               /* delta 1, i32: 0x15; zigzag 10 */
	th_i64(&t, 3, -1);              /* delta 2, i64: 0x26; zigzag 1 */
	th_string(&t, 20, "ab");        /* delta 17: long form, type then zigzag(20) = 40 */
	th_bool(&t, 21, true);          /* delta 1, true: 0x11 */
	th_begin(&t, 22);               /* delta 1, struct: 0x1c */
	th_i32(&t, 1, 0);               /* ids start again inside: 0x15 0x00 */
	th_end(&t);                     /* stop */
	th_i32(&t, 23, 1);              /* delta from 22 again: 0x15, zigzag 2 */
	th_list(&t, 24, TH_I32, 3);     /* 0x19, then 3 << 4 | 5 */
	th_list(&t, 25, TH_STRUCT, 20); /* 0x19, then 0xfc and the size 20 */
	th_end(&t);
	EXPECT(&b, 0x15, 0x0a, 0x26, 0x01, 0x08, 0x28, 0x02, 'a', 'b', 0x11, 0x1c, 0x15, 0x00, 0x00,
	       0x15, 0x02, 0x19, 0x35, 0x19, 0xfc, 0x14, 0x00);
	pq_buf_free(&b);
}
END_TEST

START_TEST(test_rle_run)
{
	struct pq_buf b = {0};
	uint32_t v[24];

	for (int i = 0; i < 10; i++)
		v[i] = 1;
	pq_rle_hybrid(&b, v, 10, 1); /* one RLE run: header 10 << 1, the value in a byte */
	EXPECT(&b, 0x14, 0x01);
	b.n = 0;
	for (int i = 0; i < 24; i++)
		v[i] = i < 8 ? 0 : 2;
	pq_rle_hybrid(&b, v, 24, 2); /* two runs: 8 zeros, 16 twos */
	EXPECT(&b, 0x10, 0x00, 0x20, 0x02);
	pq_buf_free(&b);
}
END_TEST

START_TEST(test_bit_packed)
{
	struct pq_buf b = {0};
	uint32_t v1[] = {1, 0, 1, 1, 0, 0, 0, 1};
	uint32_t v3[] = {0, 1, 2, 3, 4, 5, 6, 7};
	uint32_t v5[] = {5, 5, 5};
	uint32_t v2[] = {1, 2, 3, 3, 3, 3, 3, 3, 3, 3, 3};

	pq_rle_hybrid(&b, v1, 8, 1); /* one group: header 1 << 1 | 1, bits LSB first */
	EXPECT(&b, 0x03, 0x8d);
	b.n = 0;
	pq_rle_hybrid(&b, v3, 8, 3); /* the example of Parquet's Encodings.md */
	EXPECT(&b, 0x03, 0x88, 0xc6, 0xfa);
	b.n = 0;
	pq_rle_hybrid(&b, v5, 3, 3); /* fewer than 8 values: one group padded with zeros */
	EXPECT(&b, 0x03, 0x6d, 0x01, 0x00);
	b.n = 0;
	/* a run of 9 that starts inside a group stays bit-packed: two groups */
	pq_rle_hybrid(&b, v2, 11, 2);
	EXPECT(&b, 0x05, 0xf9, 0xff, 0x3f, 0x00);
	pq_buf_free(&b);
}
END_TEST

START_TEST(test_bit_packed_wide)
{
	struct pq_buf b = {0};
	uint32_t v[20];

	for (uint32_t k = 0; k < 8; k++)
		v[k] = k;
	pq_rle_hybrid(&b, v, 8, 10); /* 0..7 at 10 bits: value k at bit 10 k, LSB first */
	EXPECT(&b, 0x03, 0x00, 0x04, 0x20, 0xc0, 0x00, 0x04, 0x14, 0x60, 0xc0, 0x01);
	/* widths 9 to 32, 20 values without equal neighbours: 3 groups, the last padded, against
	 * a bit-at-a-time packer */
	for (unsigned bw = 9; bw <= 32; bw++) {
		uint32_t mask = bw == 32 ? ~0u : (1u << bw) - 1;
		uint8_t want[1 + 3 * 32] = {0x07};

		for (uint32_t k = 0; k < 20; k++)
			v[k] = (k * 2654435761u + 12345u) & mask;
		for (unsigned bit = 0; bit < 24 * bw; bit++) {
			unsigned k = bit / bw;
			uint32_t x = k < 20 ? v[k] : 0;

			want[1 + bit / 8] |= (uint8_t)(((x >> (bit % bw)) & 1u) << (bit % 8));
		}
		b.n = 0;
		pq_rle_hybrid(&b, v, 20, bw);
		ck_assert_uint_eq(b.n, 1 + 3 * bw);
		ck_assert_msg(memcmp(b.p, want, b.n) == 0, "bit width %u", bw);
	}
	pq_buf_free(&b);
}
END_TEST

START_TEST(test_delta_binary)
{
	struct pq_buf b = {0};
	int64_t up[] = {1, 2, 3, 4, 5};
	int64_t down_up[] = {7, 5, 3, 1, 2, 3, 4, 5};
	int64_t wrap[] = {INT64_MAX, INT64_MIN};

	/* header: block 128, 4 miniblocks, 5 values, first zigzag(1); a block: least delta
	 * zigzag(1), four widths 0, no miniblock bytes */
	pq_delta_binary(&b, up, 5);
	EXPECT(&b, 0x80, 0x01, 0x04, 0x05, 0x02, 0x02, 0x00, 0x00, 0x00, 0x00);
	b.n = 0;
	/* deltas -2 -2 -2 1 1 1 1: least -2 (zigzag 3), above it 0 0 0 3 3 3 3 at 2 bits: one
	 * miniblock of 32 values, 8 bytes, LSB first */
	pq_delta_binary(&b, down_up, 8);
	EXPECT(&b, 0x80, 0x01, 0x04, 0x08, 0x0e, 0x03, 0x02, 0x00, 0x00, 0x00, 0xc0, 0x3f, 0x00,
	       0x00, 0x00, 0x00, 0x00, 0x00);
	b.n = 0;
	/* the delta from INT64_MAX to INT64_MIN is 1 modulo 2^64 */
	pq_delta_binary(&b, wrap, 2);
	EXPECT(&b, 0x80, 0x01, 0x04, 0x02, 0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	       0x01, 0x02, 0x00, 0x00, 0x00, 0x00);
	b.n = 0;
	pq_delta_binary(&b, NULL, 0); /* no value: the header alone */
	EXPECT(&b, 0x80, 0x01, 0x04, 0x00, 0x00);
	pq_buf_free(&b);
}
END_TEST

START_TEST(test_hybrid_runs)
{
	struct pq_buf b = {0};
	uint32_t v[40];

	/* 3 lone values, then a run of 37 sevens: 5 sevens fill the group, 32 make an RLE run */
	v[0] = 1;
	v[1] = 2;
	v[2] = 3;
	for (int i = 3; i < 40; i++)
		v[i] = 7;
	pq_rle_hybrid(&b, v, 40, 3);
	/* one bit-packed group: 1 2 3 7 7 7 7 7 at 3 bits = 0xd1 0xfe 0xff; then 32 << 1, 7 */
	EXPECT(&b, 0x03, 0xd1, 0xfe, 0xff, 0x40, 0x07);
	pq_buf_free(&b);
}
END_TEST

static Suite *enc_suite(void)
{
	Suite *s = suite_create("parquet-enc");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_varint);
	tcase_add_test(tc, test_zigzag);
	tcase_add_test(tc, test_fields);
	tcase_add_test(tc, test_rle_run);
	tcase_add_test(tc, test_bit_packed);
	tcase_add_test(tc, test_bit_packed_wide);
	tcase_add_test(tc, test_delta_binary);
	tcase_add_test(tc, test_hybrid_runs);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(enc_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
