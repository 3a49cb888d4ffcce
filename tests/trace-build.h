/* Writing small traces record by record, with exact times, for the suites of stats across
 * ranks and diff (tests/test-rankstats.c, tests/test-diff.c). Header-only (static
 * functions, Check assertions); runs in test programs. */
#ifndef GPUTRACE_TESTS_TRACE_BUILD_H
#define GPUTRACE_TESTS_TRACE_BUILD_H

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gputrace/trace.h"

struct tb {
	struct gt_writer *w;
	char path[64];
	uint32_t next_id; /* next string id */
	char *names[256]; /* strings written, by id */
};

static inline void tb_open(struct tb *t, const char *host)
{
	struct gt_trace_info info = {
	        .clock_id = GT_CLOCK_MONOTONIC,
	        .hostname = host,
	        .cmdline = "python train.py",
	        .tool_version = "0.1.0",
	};
	int fd;

	memset(t, 0, sizeof(*t));
	t->next_id = 1;
	snprintf(t->path, sizeof(t->path), "/tmp/test-tb-XXXXXX");
	fd = mkstemp(t->path);
	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert_int_eq(gt_writer_open(t->path, &info, NULL, &t->w), 0);
}

/* Close the writer; the file stays until tb_remove(). */
static inline void tb_close(struct tb *t)
{
	ck_assert_int_eq(gt_writer_close(t->w), 0);
	t->w = NULL;
	for (size_t i = 0; i < 256; i++)
		free(t->names[i]);
}

static inline void tb_remove(struct tb *t)
{
	unlink(t->path);
}

static inline struct gt_reader *tb_reader(const char *path)
{
	struct gt_reader *r = NULL;
	const char *msg = NULL;

	ck_assert_int_eq(gt_reader_open(path, &r, &msg), 0);
	return r;
}

/* The id of string s, written on first use. */
static inline uint32_t tb_str(struct tb *t, const char *s)
{
	for (uint32_t i = 1; i < t->next_id; i++)
		if (strcmp(t->names[i], s) == 0)
			return i;
	ck_assert_uint_lt(t->next_id, 256);
	t->names[t->next_id] = strdup(s);
	ck_assert_int_eq(gt_writer_string(t->w, 1, t->next_id, s, strlen(s)), 0);
	return t->next_id++;
}

static inline void tb_put(struct tb *t, void *rec, unsigned type, size_t size, uint32_t pid)
{
	struct gt_rec_hdr *h = rec;

	h->type = (uint16_t)type;
	h->size = (uint16_t)size;
	h->pid = pid;
	ck_assert_int_eq(gt_writer_write(t->w, h), 0);
}

/* A process with its rank (-1: none) on host, and, when uuid_byte is not 0, its GPU
 * (device 0) whose uuid is 16 times that byte. */
static inline void tb_process(struct tb *t, uint32_t pid, int32_t rank, const char *host,
                              uint8_t uuid_byte)
{
	struct gt_rec_process p = {0};
	struct gt_rec_device d = {0};

	p.start_ns = 1000;
	p.host_id = tb_str(t, host);
	p.rank = rank;
	p.local_rank = rank;
	p.world_size = rank >= 0 ? 2 : -1;
	tb_put(t, &p, GT_REC_PROCESS, sizeof(p), pid);
	if (!uuid_byte)
		return;
	memset(d.uuid, uuid_byte, sizeof(d.uuid));
	d.name_id = tb_str(t, "NVIDIA H200");
	tb_put(t, &d, GT_REC_DEVICE, sizeof(d), pid);
}

static inline void tb_kernel(struct tb *t, uint32_t pid, const char *name, uint32_t stream,
                             uint64_t start, uint64_t end)
{
	struct gt_rec_kernel k = {0};

	k.name_id = tb_str(t, name);
	k.span.start_ns = start;
	k.span.end_ns = end;
	k.span.stream_id = stream;
	tb_put(t, &k, GT_REC_KERNEL, sizeof(k), pid);
}

static inline void tb_memcpy(struct tb *t, uint32_t pid, unsigned kind, uint64_t bytes,
                             uint64_t start, uint64_t end)
{
	struct gt_rec_memcpy c = {0};

	c.copy_kind = kind;
	c.bytes = bytes;
	c.span.start_ns = start;
	c.span.end_ns = end;
	tb_put(t, &c, GT_REC_MEMCPY, sizeof(c), pid);
}

static inline void tb_memset(struct tb *t, uint32_t pid, unsigned mem_kind, uint64_t start,
                             uint64_t end)
{
	struct gt_rec_memset m = {0};

	m.mem_kind = mem_kind;
	m.bytes = 4096;
	m.span.start_ns = start;
	m.span.end_ns = end;
	tb_put(t, &m, GT_REC_MEMSET, sizeof(m), pid);
}

static inline void tb_api(struct tb *t, uint32_t pid, const char *name, uint64_t start,
                          uint64_t end)
{
	struct gt_rec_api a = {0};

	a.name_id = tb_str(t, name);
	a.start_ns = start;
	a.end_ns = end;
	a.tid = pid;
	tb_put(t, &a, GT_REC_API, sizeof(a), pid);
}

/* A push/pop range; domain NULL for the default one. */
static inline void tb_nvtx(struct tb *t, uint32_t pid, const char *domain, const char *msg,
                           uint64_t start, uint64_t end)
{
	struct gt_rec_nvtx n = {0};

	n.domain_id = domain ? tb_str(t, domain) : 0;
	n.message_id = tb_str(t, msg);
	n.start_ns = start;
	n.end_ns = end;
	n.tid = n.end_tid = pid;
	n.kind = GT_NVTX_PUSH_POP;
	tb_put(t, &n, GT_REC_NVTX, sizeof(n), pid);
}

static inline void tb_loss(struct tb *t, uint32_t pid, unsigned source, uint64_t count)
{
	struct gt_rec_loss l = {0};

	l.source = source;
	l.count = count;
	l.kind = GT_REC_KERNEL;
	tb_put(t, &l, GT_REC_LOSS, sizeof(l), pid);
}

/* got must be want, exactly; a long text that differs is printed whole to stderr (Check's
 * own message would be cut), with the first line where they part. */
#define tb_expect_text(got, want)                                                                  \
	do {                                                                                       \
		const char *g_ = (got), *w_ = (want);                                              \
		size_t at_ = 0, line_ = 1;                                                         \
                                                                                                   \
		if (strcmp(g_, w_) != 0) {                                                         \
			while (g_[at_] && g_[at_] == w_[at_])                                      \
				line_ += g_[at_++] == '\n';                                        \
			fprintf(stderr, "---- got:\n%s---- wanted:\n%s---- from line %zu\n", g_,   \
			        w_, line_);                                                        \
			ck_abort_msg("text differs from line %zu", line_);                         \
		}                                                                                  \
	} while (0)

#endif /* GPUTRACE_TESTS_TRACE_BUILD_H */
