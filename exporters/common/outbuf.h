/* Buffered output for the exporters: one 1 MiB buffer per file, filled in place by the
 * hand-written formatters (exporters/common/text.h) and written out when full. Runs in the CLI. */
#ifndef GPUTRACE_EXPORTERS_OUTBUF_H
#define GPUTRACE_EXPORTERS_OUTBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define GT_OUTBUF_BYTES (1u << 20)

struct gt_output;

struct gt_outbuf {
	int fd;         /* -1 when closed */
	struct gt_output *own; /* the output of its own when the caller gave none; owned */
	bool owns_fd;   /* false for stdout */
	int err;        /* first -errno seen; sticky, every later write is a no-op */
	char *buf;      /* GT_OUTBUF_BYTES, owned */
	size_t len;     /* bytes pending in buf */
	uint64_t bytes; /* bytes written to this file so far, pending ones included */
};

/* Open the file `path` of output `out` (src/output/output.h: written as a temporary, in place
 * at gt_output_commit), or standard output for "-". out NULL: an output of its own, put in
 * place by gt_outbuf_close() once everything is written, removed by gt_outbuf_abort().
 * Returns 0 or -errno, with *errmsg (static, until the next call) when the output refused. */
int gt_outbuf_open(struct gt_outbuf *o, struct gt_output *out, const char *path,
                   const char **errmsg);

/* Write out the pending bytes. Returns 0 or the sticky -errno. */
int gt_outbuf_flush(struct gt_outbuf *o);

/* Flush and close (stdout is flushed, not closed); a file of an output of its own is put in
 * place. Returns 0 or the first -errno. Safe on a closed or zeroed struct. */
int gt_outbuf_close(struct gt_outbuf *o);

/* Close without finishing: an output of its own is removed. Safe on a closed or zeroed
 * struct. */
void gt_outbuf_abort(struct gt_outbuf *o);

/* Make room for n bytes and return where to write them; commit with gt_outbuf_commit().
 * n must be at most GT_OUTBUF_BYTES. */
static inline char *gt_outbuf_space(struct gt_outbuf *o, size_t n)
{
	if (GT_OUTBUF_BYTES - o->len < n)
		gt_outbuf_flush(o);
	return o->buf + o->len;
}

static inline void gt_outbuf_commit(struct gt_outbuf *o, char *end)
{
	size_t n = (size_t)(end - (o->buf + o->len));

	o->len += n;
	o->bytes += n;
}

/* Any length; large blocks bypass the buffer. */
void gt_outbuf_write(struct gt_outbuf *o, const void *p, size_t n);

static inline void gt_outbuf_str(struct gt_outbuf *o, const char *s)
{
	gt_outbuf_write(o, s, strlen(s));
}

#endif /* GPUTRACE_EXPORTERS_OUTBUF_H */
