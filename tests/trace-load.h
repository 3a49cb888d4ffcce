/* Test helper shared by the session, drain and client suites: a whole trace read into memory
 * with the reader, and lookups by record type and process. Tests only: holds every record. */
#ifndef GPUTRACE_TESTS_TRACE_LOAD_H
#define GPUTRACE_TESTS_TRACE_LOAD_H

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "gputrace/trace.h"

struct trace {
	struct gt_reader *r;
	union gt_record **recs; /* copies, owned */
	size_t n;
};

/* Read every record of `path`; the file must read cleanly (no skipped records). */
static inline void trace_load(struct trace *t, const char *path)
{
	const union gt_record *rec;
	const char *msg = NULL;
	int r;

	memset(t, 0, sizeof(*t));
	ck_assert_msg(gt_reader_open(path, &t->r, &msg) == 0, "open %s: %s", path, msg);
	while ((r = gt_reader_next(t->r, &rec)) == 1) {
		t->recs = realloc(t->recs, (t->n + 1) * sizeof(*t->recs));
		t->recs[t->n] = malloc(rec->hdr.size);
		memcpy(t->recs[t->n], rec, rec->hdr.size);
		t->n++;
	}
	ck_assert_int_eq(r, 0);
	ck_assert_uint_eq(gt_reader_status(t->r)->records_skipped, 0);
}

static inline void trace_free(struct trace *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->recs[i]);
	free(t->recs);
	gt_reader_close(t->r);
}

static inline const char *str(struct trace *t, uint32_t id)
{
	const char *s = gt_reader_string(t->r, id, NULL);

	return s ? s : "(missing)";
}

/* Index of the nth (0-based) record of `type` from `pid` (0: any process), or -1. */
static inline long find(struct trace *t, unsigned type, uint32_t pid, unsigned nth)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->recs[i]->hdr.type == type && (!pid || t->recs[i]->hdr.pid == pid) &&
		    nth-- == 0)
			return (long)i;
	return -1;
}

/* Records of `type` from `pid` (0: any process). */
static inline unsigned count(struct trace *t, unsigned type, uint32_t pid)
{
	unsigned n = 0;

	for (size_t i = 0; i < t->n; i++)
		n += t->recs[i]->hdr.type == type && (!pid || t->recs[i]->hdr.pid == pid);
	return n;
}

#endif /* GPUTRACE_TESTS_TRACE_LOAD_H */
