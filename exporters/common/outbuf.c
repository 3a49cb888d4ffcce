/* Buffered output for the exporters (see outbuf.h). Runs in the CLI. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "outbuf.h"
#include "output.h"

static _Thread_local struct gt_output_error output_err;

int gt_outbuf_open(struct gt_outbuf *o, struct gt_output *out, const char *path,
                   const char **errmsg)
{
	int ret;

	memset(o, 0, sizeof(*o));
	o->fd = -1;
	o->buf = malloc(GT_OUTBUF_BYTES);
	if (!o->buf)
		return -ENOMEM;
	if (strcmp(path, "-") == 0) {
		o->fd = STDOUT_FILENO;
		return 0;
	}
	if (!out) {
		ret = gt_output_open(path, NULL, 0, 0, &o->own, &output_err);
		if (ret < 0)
			goto fail;
		out = o->own;
	}
	ret = gt_output_create(out, o->own ? NULL : path, &o->fd, &output_err);
	if (ret < 0)
		goto fail;
	o->owns_fd = true;
	return 0;
fail:
	if (errmsg && output_err.msg[0])
		*errmsg = output_err.msg;
	gt_output_free(o->own);
	o->own = NULL;
	o->fd = -1;
	free(o->buf);
	o->buf = NULL;
	return ret;
}

static void write_all(struct gt_outbuf *o, const char *p, size_t n)
{
	while (n > 0 && !o->err) {
		ssize_t w = write(o->fd, p, n);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			o->err = -errno;
			break;
		}
		p += w;
		n -= (size_t)w;
	}
}

int gt_outbuf_flush(struct gt_outbuf *o)
{
	if (o->len && o->fd >= 0)
		write_all(o, o->buf, o->len);
	o->len = 0;
	return o->err;
}

void gt_outbuf_write(struct gt_outbuf *o, const void *p, size_t n)
{
	if (n <= GT_OUTBUF_BYTES - o->len) {
		memcpy(o->buf + o->len, p, n);
		o->len += n;
		o->bytes += n;
		return;
	}
	gt_outbuf_flush(o);
	if (n <= GT_OUTBUF_BYTES / 2) {
		memcpy(o->buf, p, n);
		o->len = n;
	} else {
		write_all(o, p, n);
	}
	o->bytes += n;
}

int gt_outbuf_close(struct gt_outbuf *o)
{
	int ret;

	if (!o->buf && o->fd < 0)
		return o->err;
	gt_outbuf_flush(o);
	ret = o->err;
	if (o->owns_fd && o->fd >= 0 && close(o->fd) < 0 && !ret)
		ret = -errno;
	o->fd = -1;
	o->owns_fd = false;
	free(o->buf);
	o->buf = NULL;
	if (o->own) {
		if (!ret)
			ret = gt_output_commit(o->own, &output_err);
		gt_output_free(o->own); /* removes the temporary unless committed */
		o->own = NULL;
	}
	o->err = ret;
	return ret;
}

void gt_outbuf_abort(struct gt_outbuf *o)
{
	if (o->owns_fd && o->fd >= 0)
		close(o->fd);
	o->fd = -1;
	o->owns_fd = false;
	free(o->buf);
	o->buf = NULL;
	gt_output_free(o->own);
	o->own = NULL;
}
