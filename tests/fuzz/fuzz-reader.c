/* libFuzzer target: the .gtrace reader on arbitrary files. Opens, reads every record twice
 * (rewind), looks up every string a record names, and checks what the reader promises:
 * records it returns validate, strings are NUL-terminated at their length, a second pass
 * returns the same records, progress stays within the file. Runs as a fuzz program.
 * Input: fuzz-trace.h's (a mode byte, then the file or its pieces). */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz-trace.h"
#include "gputrace/record.h"
#include "gputrace/trace.h"

#define FUZZ_MAX_RECS (1u << 20) /* records per pass: bounds the time of one input */

/* ---- reading -------------------------------------------------------------------------- */

/* Every string id a record names: look it up and read every byte of what comes back. */
static void touch_strings(struct gt_reader *r, const union gt_record *rec)
{
	const struct gt_record_desc *d = gt_record_desc(rec->hdr.type);

	for (unsigned i = 0; d && i < d->nfields; i++) {
		const struct gt_field *f = &d->fields[i];
		size_t len = 0;
		uint32_t id;
		const char *s;

		if (!(f->flags & GT_FIELD_STRING) || f->width != 4)
			continue;
		memcpy(&id, (const uint8_t *)rec + f->offset, sizeof(id));
		s = gt_reader_string(r, id, &len);
		if (!s)
			continue;
		FUZZ_CHECK(len <= GT_STRING_MAX, "string %u has length %zu", id, len);
		FUZZ_CHECK(s[len] == '\0', "string %u not NUL-terminated at its length", id);
		FUZZ_CHECK(strlen(s) <= len, "string %u", id);
	}
}

/* One pass over every record; returns how many. */
static uint64_t read_all(struct gt_reader *r, uint64_t file_size)
{
	const union gt_record *rec;
	uint64_t count = 0, done, total;
	int n;

	while (count < FUZZ_MAX_RECS && (n = gt_reader_next(r, &rec)) > 0) {
		unsigned type = rec->hdr.type;

		count++;
		FUZZ_CHECK(type != GT_REC_NONE && type < GT_REC_MAX, "type %u returned", type);
		if (type == GT_REC_STRING) {
			const struct gt_rec_string *s = &rec->string;
			size_t len;

			FUZZ_CHECK(gt_record_validate(&rec->hdr, rec->hdr.size) == 0,
			           "string record of size %u, len %u", rec->hdr.size, s->len);
			FUZZ_CHECK(s->str[s->len] == '\0', "decoded string not NUL-terminated");
			/* the first definition of an id wins, but some definition is there */
			FUZZ_CHECK(gt_reader_string(r, s->id, &len) != NULL,
			           "string %u returned but not entered", s->id);
		} else {
			FUZZ_CHECK(gt_record_validate(&rec->hdr, sizeof(union gt_record)) == 0,
			           "%s record of size %u", gt_record_name(type), rec->hdr.size);
			touch_strings(r, rec);
		}
		gt_reader_progress(r, &done, &total);
		FUZZ_CHECK(total == file_size && done <= total, "progress %llu of %llu",
		           (unsigned long long)done, (unsigned long long)total);
	}
	return count;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct gt_reader_status *st;
	const struct gt_trace_header *h;
	struct gt_reader *r = NULL;
	const char *path, *msg = NULL;
	uint64_t first, second;
	size_t len;
	int ret;

	path = fuzz_trace_file(data, size, &len);
	if (!path)
		return 0;
	ret = gt_reader_open(path, &r, &msg);
	if (ret < 0) {
		FUZZ_CHECK(msg && *msg, "open failed (%d) without a message", ret);
		return 0;
	}
	h = gt_reader_header(r);
	FUZZ_CHECK(h->version >= 1 && h->version <= GT_TRACE_VERSION, "version %u", h->version);
	FUZZ_CHECK(h->info.hostname && h->info.cmdline && h->info.driver_version,
	           "header strings missing");
	(void)gt_reader_footer_counts(r);
	first = read_all(r, len);
	st = gt_reader_status(r);
	FUZZ_CHECK(st->bytes_skipped <= len, "skipped %llu of %zu bytes",
	           (unsigned long long)st->bytes_skipped, len);
	FUZZ_CHECK(gt_reader_rewind(r) == 0, "rewind");
	second = read_all(r, len);
	FUZZ_CHECK(first == second, "first pass %llu records, second %llu",
	           (unsigned long long)first, (unsigned long long)second);
	gt_reader_close(r);
	return 0;
}
