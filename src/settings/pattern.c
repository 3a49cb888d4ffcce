/* Output-name patterns (%p %h %q{VAR} %n %%) for `gputrace run -o` and GPUTRACE_OUTPUT.
 * Runs in the CLI and inside the traced application (standalone mode), so it never
 * allocates: environment variables are found by walking environ, not by copying names. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "pattern.h"

/* Longest hostname we expand; POSIX guarantees HOST_NAME_MAX <= 255. */
#define GT_PATTERN_HOST_MAX 256

/* Where the expansion is written; `len` keeps counting past the end so the caller can
 * tell "too small" from other errors. */
struct gt_out {
	char *buf;
	size_t bytes;
	size_t len;
};

static void out_put(struct gt_out *o, const char *s, size_t n)
{
	if (o->len < o->bytes) {
		size_t room = o->bytes - o->len;
		memcpy(o->buf + o->len, s, n < room ? n : room);
	}
	o->len += n;
}

static void out_uint(struct gt_out *o, unsigned long v)
{
	char digits[24];
	size_t n = 0;

	/* Written backwards, then copied in order: snprintf is not promised async-signal-safe
	 * and this may run from an atexit path inside the application. */
	do {
		digits[sizeof(digits) - 1 - n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	out_put(o, digits + sizeof(digits) - n, n);
}

/* The value of the environment variable name[0..len), or NULL if unset. */
static const char *env_lookup(const char *name, size_t len)
{
	for (char **e = environ; e && *e; e++)
		if (strncmp(*e, name, len) == 0 && (*e)[len] == '=')
			return *e + len + 1;
	return NULL;
}

/* Expand the element at pattern[*i] (a literal byte or a %-sequence), leaving *i on its
 * last byte. Returns 0 or -errno. */
static int expand_one(const char *pattern, size_t *i, pid_t pid, unsigned seq, char *host,
                      size_t host_bytes, struct gt_out *o)
{
	const char *name, *end, *value;

	if (pattern[*i] != '%') {
		out_put(o, &pattern[*i], 1);
		return 0;
	}
	switch (pattern[++*i]) {
	case '%':
		out_put(o, "%", 1);
		return 0;
	case 'p':
		out_uint(o, (unsigned long)pid);
		return 0;
	case 'n':
		out_uint(o, seq);
		return 0;
	case 'h':
		if (gethostname(host, host_bytes) < 0)
			return -errno;
		/* gethostname may leave a truncated name unterminated. */
		host[host_bytes - 1] = '\0';
		out_put(o, host, strlen(host));
		return 0;
	case 'q':
		if (pattern[*i + 1] != '{')
			return -EINVAL;
		name = &pattern[*i + 2];
		end = strchr(name, '}');
		if (!end || end == name)
			return -EINVAL;
		value = env_lookup(name, (size_t)(end - name));
		if (!value)
			return -ENOENT;
		out_put(o, value, strlen(value));
		*i = (size_t)(end - pattern);
		return 0;
	default: /* an unknown letter, or a lone '%' at the end */
		return -EINVAL;
	}
}

static int fail(int err, size_t pos, size_t *errpos, char *out, size_t out_bytes)
{
	if (errpos)
		*errpos = pos;
	if (out_bytes)
		out[0] = '\0';
	return err;
}

int gt_pattern_expand(const char *pattern, pid_t pid, unsigned seq, char *out, size_t out_bytes,
                      size_t *errpos)
{
	struct gt_out o = {.buf = out, .bytes = out_bytes, .len = 0};
	char host[GT_PATTERN_HOST_MAX];
	size_t overflow_at = SIZE_MAX; /* pattern offset of the first element that did not fit */

	for (size_t i = 0; pattern[i]; i++) {
		size_t start = i;
		int err = expand_one(pattern, &i, pid, seq, host, sizeof(host), &o);

		if (err < 0)
			return fail(err, start, errpos, out, out_bytes);
		/* The terminating NUL needs a byte too, hence >=. */
		if (overflow_at == SIZE_MAX && o.len >= out_bytes)
			overflow_at = start;
	}
	if (overflow_at != SIZE_MAX || out_bytes == 0)
		return fail(-ENAMETOOLONG, overflow_at == SIZE_MAX ? 0 : overflow_at, errpos, out,
		            out_bytes);
	out[o.len] = '\0';
	return (int)o.len;
}

int gt_pattern_has_seq(const char *pattern)
{
	for (size_t i = 0; pattern[i]; i++) {
		if (pattern[i] != '%')
			continue;
		if (pattern[i + 1] == 'n')
			return 1;
		if (pattern[i + 1] == '\0')
			break;
		i++; /* skip the escaped character, so "%%n" is a literal "%n" */
	}
	return 0;
}
