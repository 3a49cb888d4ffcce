/* Check suite for src/format/record.c: record descriptions, validation of untrusted records, enum
 * names. Runs as a unit test. */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gputrace/record.h"

static const char *const type_names[GT_REC_MAX] = {
        NULL,     "string", "process", "process_end", "thread", "device",      "context",
        "stream", "kernel", "memcpy",  "memset",      "memory", "memory_pool", "api",
        "nvtx",   "sync",   "graph",   "overhead",    "loss",   "clock",       "notice",
        "input",  "origin",  "stack",   "module",
        [GT_REC_GPU_METRIC] = "gpu_metric", [GT_REC_GPU_SAMPLE] = "gpu_sample",
        [GT_REC_PYCODE] = "pycode", [GT_REC_PYLINE] = "pyline",
};

static const size_t type_sizes[GT_REC_MAX] = {
        0,
        sizeof(struct gt_rec_string),
        sizeof(struct gt_rec_process),
        sizeof(struct gt_rec_process_end),
        sizeof(struct gt_rec_thread),
        sizeof(struct gt_rec_device),
        sizeof(struct gt_rec_context),
        sizeof(struct gt_rec_stream),
        sizeof(struct gt_rec_kernel),
        sizeof(struct gt_rec_memcpy),
        sizeof(struct gt_rec_memset),
        sizeof(struct gt_rec_memory),
        sizeof(struct gt_rec_memory_pool),
        sizeof(struct gt_rec_api),
        sizeof(struct gt_rec_nvtx),
        sizeof(struct gt_rec_sync),
        sizeof(struct gt_rec_graph),
        sizeof(struct gt_rec_overhead),
        sizeof(struct gt_rec_loss),
        sizeof(struct gt_rec_clock),
        sizeof(struct gt_rec_notice),
        sizeof(struct gt_rec_input),
        sizeof(struct gt_rec_origin),
        sizeof(struct gt_rec_stack),
        sizeof(struct gt_rec_module),
        [GT_REC_GPU_METRIC] = sizeof(struct gt_rec_gpu_metric),
        [GT_REC_GPU_SAMPLE] = sizeof(struct gt_rec_gpu_sample),
        [GT_REC_PYCODE] = sizeof(struct gt_rec_pycode),
        [GT_REC_PYLINE] = sizeof(struct gt_rec_pyline),
};

START_TEST(test_desc_every_type)
{
	ck_assert_ptr_null(gt_record_desc(GT_REC_NONE));
	ck_assert_ptr_null(gt_record_desc(GT_REC_MAX));
	ck_assert_ptr_null(gt_record_desc(200));
	ck_assert_str_eq(gt_record_name(GT_REC_NONE), "unknown");
	ck_assert_str_eq(gt_record_name(200), "unknown");
	for (unsigned t = 1; t < GT_REC_MAX; t++) {
		const struct gt_record_desc *d = gt_record_desc(t);

		if (!type_names[t]) { /* a value this branch leaves unused */
			ck_assert_ptr_null(d);
			ck_assert_str_eq(gt_record_name(t), "unknown");
			continue;
		}
		ck_assert_ptr_nonnull(d);
		ck_assert_str_eq(d->name, type_names[t]);
		ck_assert_str_eq(gt_record_name(t), type_names[t]);
		ck_assert_uint_eq(d->size, type_sizes[t]);
		ck_assert_uint_gt(d->nfields, 0);
		ck_assert_uint_eq(d->size % 8, 0);
	}
}
END_TEST

/* Fields lie after the header, inside the struct, in increasing order without overlap, have
 * a legal width and unique names; the bytes no field covers are exactly the _pad members. */
START_TEST(test_fields_cover_structs)
{
	static const unsigned pad_bytes[GT_REC_MAX] = {
	        [GT_REC_STREAM] = 4, [GT_REC_MEMCPY] = 4,   [GT_REC_MEMORY] = 4, [GT_REC_SYNC] = 4,
	        [GT_REC_GRAPH] = 4,  [GT_REC_OVERHEAD] = 4, [GT_REC_CLOCK] = 4,
	        [GT_REC_INPUT] = 4, [GT_REC_ORIGIN] = 4, [GT_REC_DEVICE] = 4,  [GT_REC_API] = 4,
	        [GT_REC_NVTX] = 4, [GT_REC_PYCODE] = 4,
	};

	for (unsigned t = 1; t < GT_REC_MAX; t++) {
		const struct gt_record_desc *d = gt_record_desc(t);
		unsigned covered = sizeof(struct gt_rec_hdr), end = sizeof(struct gt_rec_hdr);

		if (!d)
			continue; /* unused value */

		for (unsigned f = 0; f < d->nfields; f++) {
			const struct gt_field *fd = &d->fields[f];

			ck_assert_msg(fd->width == 1 || fd->width == 2 || fd->width == 4 ||
			                      fd->width == 8,
			              "%s.%s width %u", d->name, fd->name, fd->width);
			ck_assert_msg(fd->offset >= end, "%s.%s overlaps or is out of order",
			              d->name, fd->name);
			ck_assert_uint_le(fd->offset + fd->width, d->size);
			ck_assert_uint_eq(fd->offset % fd->width, 0);
			end = fd->offset + fd->width;
			covered += fd->width;
			for (unsigned g = 0; g < f; g++)
				ck_assert_str_ne(d->fields[g].name, fd->name);
			/* timestamps are 64-bit; string ids are 32-bit */
			if (fd->flags & GT_FIELD_TIME)
				ck_assert_uint_eq(fd->width, 8);
			if (fd->flags & GT_FIELD_STRING)
				ck_assert_uint_eq(fd->width, 4);
		}
		ck_assert_msg(covered + pad_bytes[t] == d->size, "%s: %u bytes covered of %u",
		              d->name, covered, d->size);
	}
}
END_TEST

START_TEST(test_kernel_fields)
{
	const struct gt_record_desc *d = gt_record_desc(GT_REC_KERNEL);

	ck_assert_uint_eq(d->nfields, 23);
	ck_assert_str_eq(d->fields[0].name, "start_ns");
	ck_assert_uint_eq(d->fields[0].offset, offsetof(struct gt_rec_kernel, span.start_ns));
	ck_assert_uint_eq(d->fields[0].flags, GT_FIELD_DELTA | GT_FIELD_TIME);
	ck_assert_str_eq(d->fields[2].name, "correlation_id");
	ck_assert_uint_eq(d->fields[2].flags, GT_FIELD_DELTA);
	ck_assert_str_eq(d->fields[7].name, "name_id");
	ck_assert_uint_eq(d->fields[7].flags, GT_FIELD_STRING);
	ck_assert_str_eq(d->fields[22].name, "flags");
	/* the uuid travels as two 8-byte words */
	d = gt_record_desc(GT_REC_DEVICE);
	ck_assert_str_eq(d->fields[1].name, "uuid_lo");
	ck_assert_uint_eq(d->fields[1].width, 8);
	ck_assert_str_eq(d->fields[2].name, "uuid_hi");
	ck_assert_uint_eq(d->fields[2].offset, offsetof(struct gt_rec_device, uuid) + 8);
	d = gt_record_desc(GT_REC_API);
	ck_assert_str_eq(d->fields[6].name, "return_code");
	ck_assert_uint_eq(d->fields[6].flags, GT_FIELD_SIGNED);
}
END_TEST

START_TEST(test_validate_fixed)
{
	union gt_record r;

	for (unsigned t = 2; t < GT_REC_MAX; t++) {
		if (!type_names[t])
			continue; /* unused value */
		memset(&r, 0, sizeof(r));
		r.hdr.type = (uint16_t)t;
		r.hdr.size = (uint16_t)type_sizes[t];
		ck_assert_int_eq(gt_record_validate(&r.hdr, sizeof(r)), 0);
		ck_assert_int_eq(gt_record_validate(&r.hdr, type_sizes[t]), 0);
		/* the record claims more than the bytes available */
		ck_assert_int_eq(gt_record_validate(&r.hdr, type_sizes[t] - 1), -EINVAL);
		r.hdr.size = (uint16_t)(type_sizes[t] + 8);
		ck_assert_int_eq(gt_record_validate(&r.hdr, sizeof(r)), -EINVAL);
		r.hdr.size = (uint16_t)(type_sizes[t] - 8);
		ck_assert_int_eq(gt_record_validate(&r.hdr, sizeof(r)), -EINVAL);
	}
	memset(&r, 0, sizeof(r));
	r.hdr.size = 8;
	ck_assert_int_eq(gt_record_validate(&r.hdr, sizeof(r)), -EINVAL); /* type NONE */
	r.hdr.type = GT_REC_MAX;
	ck_assert_int_eq(gt_record_validate(&r.hdr, sizeof(r)), -EINVAL);
	r.hdr.type = GT_REC_KERNEL;
	r.hdr.size = 4;
	ck_assert_int_eq(gt_record_validate(&r.hdr, sizeof(r)), -EINVAL);
	ck_assert_int_eq(gt_record_validate(&r.hdr, 7), -EINVAL);
}
END_TEST

START_TEST(test_validate_string)
{
	union {
		struct gt_rec_string s;
		uint8_t bytes[sizeof(struct gt_rec_string) + GT_STRING_MAX + 8];
	} u;

	memset(&u, 0, sizeof(u));
	u.s.hdr.type = GT_REC_STRING;
	u.s.id = 1;
	u.s.len = 5;
	u.s.hdr.size = (uint16_t)gt_record_align(sizeof(u.s) + 5);
	ck_assert_uint_eq(u.s.hdr.size, 24);
	ck_assert_int_eq(gt_record_validate(&u.s.hdr, sizeof(u)), 0);
	ck_assert_int_eq(gt_record_validate(&u.s.hdr, 23), -EINVAL);
	u.s.hdr.size = 32; /* not the aligned size of 16 + 5 */
	ck_assert_int_eq(gt_record_validate(&u.s.hdr, sizeof(u)), -EINVAL);
	u.s.hdr.size = 24;
	u.s.id = GT_STRING_NONE;
	ck_assert_int_eq(gt_record_validate(&u.s.hdr, sizeof(u)), -EINVAL);
	u.s.id = 1;
	u.s.len = 0;
	u.s.hdr.size = 16;
	ck_assert_int_eq(gt_record_validate(&u.s.hdr, sizeof(u)), 0);
	u.s.len = GT_STRING_MAX;
	u.s.hdr.size = (uint16_t)gt_record_align(sizeof(u.s) + GT_STRING_MAX);
	ck_assert_int_eq(gt_record_validate(&u.s.hdr, sizeof(u)), 0);
	u.s.len = GT_STRING_MAX + 1;
	u.s.hdr.size = (uint16_t)gt_record_align(sizeof(u.s) + GT_STRING_MAX + 1);
	ck_assert_int_eq(gt_record_validate(&u.s.hdr, sizeof(u)), -EINVAL);
}
END_TEST

START_TEST(test_align)
{
	ck_assert_uint_eq(gt_record_align(0), 0);
	ck_assert_uint_eq(gt_record_align(1), 8);
	ck_assert_uint_eq(gt_record_align(8), 8);
	ck_assert_uint_eq(gt_record_align(17), 24);
}
END_TEST

START_TEST(test_enum_names)
{
	ck_assert_str_eq(gt_memcpy_kind_name(GT_MEMCPY_HTOD), "HtoD");
	ck_assert_str_eq(gt_memcpy_kind_name(GT_MEMCPY_PTOP), "PtoP");
	ck_assert_str_eq(gt_memcpy_kind_name(GT_MEMCPY_MAX), "unknown");
	ck_assert_str_eq(gt_mem_kind_name(GT_MEM_PINNED), "pinned");
	ck_assert_str_eq(gt_mem_kind_name(GT_MEM_MANAGED_STATIC), "managed_static");
	ck_assert_str_eq(gt_mem_kind_name(99), "unknown");
	ck_assert_str_eq(gt_loss_source_name(GT_LOSS_CUPTI_DROPPED), "cupti_dropped");
	ck_assert_str_eq(gt_loss_source_name(GT_LOSS_RING_FULL), "ring_full");
	ck_assert_str_eq(gt_loss_source_name(GT_LOSS_FILE), "damaged_file");
	ck_assert_str_eq(gt_loss_source_name(GT_LOSS_SOURCE_MAX), "unknown");
	ck_assert_str_eq(gt_sync_kind_name(GT_SYNC_STREAM_WAIT), "stream_wait_event");
	ck_assert_str_eq(gt_sync_kind_name(UINT32_MAX), "unknown");
	ck_assert_str_eq(gt_process_end_name(GT_END_EXIT), "exited");
	ck_assert_str_eq(gt_process_end_name(GT_END_SIGNAL), "killed by signal");
	ck_assert_str_eq(gt_process_end_name(GT_END_MAX), "unknown");
	/* every value below each _MAX has a name of its own */
	for (unsigned i = 0; i < GT_LOSS_SOURCE_MAX; i++)
		ck_assert_str_ne(gt_loss_source_name(i), "unknown");
	for (unsigned i = 1; i < GT_MEMCPY_MAX; i++)
		ck_assert_str_ne(gt_memcpy_kind_name(i), "unknown");
	for (unsigned i = 1; i < GT_MEM_MAX; i++)
		ck_assert_str_ne(gt_mem_kind_name(i), "unknown");
}
END_TEST

static Suite *record_suite(void)
{
	Suite *s = suite_create("record");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_desc_every_type);
	tcase_add_test(tc, test_fields_cover_structs);
	tcase_add_test(tc, test_kernel_fields);
	tcase_add_test(tc, test_validate_fixed);
	tcase_add_test(tc, test_validate_string);
	tcase_add_test(tc, test_align);
	tcase_add_test(tc, test_enum_names);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(record_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
