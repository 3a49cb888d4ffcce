/* C++ name demangling through libiberty's allocation-free callback interface, with a
 * pass-through fallback when libiberty is absent at build time. Runs in the CLI. */
#include <stdlib.h>
#include <string.h>

#include "demangle.h"
#include "gt-config.h"

#if GT_HAVE_IBERTY
#include <libiberty/demangle.h>

/* Where the demangler's pieces go: a fixed buffer that remembers whether it overflowed. */
struct sink {
	char *buf;
	size_t bytes; /* capacity, NUL included */
	size_t len;   /* bytes written so far, NUL excluded */
	bool cut;     /* some output did not fit */
};

static void sink_append(const char *s, size_t len, void *opaque)
{
	struct sink *k = opaque;
	size_t room = k->bytes - 1 - k->len;

	if (!k->buf) { /* counting only */
		k->len += len;
		return;
	}
	if (len > room) {
		len = room;
		k->cut = true;
	}
	memcpy(k->buf + k->len, s, len);
	k->len += len;
}
#endif

bool gt_demangle_available(void)
{
	return GT_HAVE_IBERTY;
}

const char *gt_demangle(const char *mangled, char *buf, size_t bytes)
{
	if (!mangled)
		mangled = "";
	/* Only "_Z" names are C++ symbols: CUDA kernels declared extern "C" arrive plain, and
	 * libiberty would otherwise "demangle" short names such as "i" as type encodings. */
	if (!buf || bytes == 0 || strncmp(mangled, "_Z", 2) != 0)
		return mangled;
#if GT_HAVE_IBERTY
	{
		struct sink k = {buf, bytes, 0, false};

		if (!cplus_demangle_v3_callback(mangled, DMGL_PARAMS | DMGL_ANSI, sink_append, &k))
			return mangled;
		if (k.cut && bytes >= 4) {
			/* a cut name must not pass for a whole one */
			memcpy(buf + bytes - 4, "...", 3);
			k.len = bytes - 1;
		}
		buf[k.len] = '\0';
		return buf;
	}
#else
	return mangled;
#endif
}

void gt_demangle_base_range(const char *s, size_t len, size_t *start, size_t *end)
{
	size_t e = len, b;
	int depth;

	/* the parameters, then (a function template) the template arguments before them */
	for (int pass = 0; pass < 2 && e > 0; pass++) {
		char close = s[e - 1], open;

		if (close == ')')
			open = '(';
		else if (close == '>' && pass == 1)
			open = '<';
		else
			continue;
		depth = 0;
		for (size_t i = e; i-- > 0;) {
			if (s[i] == close)
				depth++;
			else if (s[i] == open && --depth == 0) {
				e = i;
				break;
			}
		}
	}
	if (e > 0 && s[e - 1] == '>') {
		depth = 0;
		for (size_t i = e; i-- > 0;) {
			if (s[i] == '>')
				depth++;
			else if (s[i] == '<' && --depth == 0) {
				e = i;
				break;
			}
		}
	}
	/* back to the scope or the return type before it */
	depth = 0;
	for (b = e; b > 0; b--) {
		char c = s[b - 1];

		if (c == ')' || c == '>' || c == ']')
			depth++;
		else if (c == '(' || c == '<' || c == '[')
			depth--;
		else if (depth == 0 && (c == ' ' || (c == ':' && b >= 2 && s[b - 2] == ':')))
			break;
	}
	if (b >= e) {
		*start = 0;
		*end = len;
		return;
	}
	*start = b;
	*end = e;
}

const char *gt_demangle_base(const char *mangled, char *buf, size_t bytes)
{
	const char *d;
	char *full = NULL;
	size_t len, b, e;

	if (!mangled)
		mangled = "";
	if (!buf || bytes == 0)
		return mangled;
	d = gt_demangle(mangled, buf, bytes);
	len = strlen(d);
#if GT_HAVE_IBERTY
	if (d == buf && len == bytes - 1 && bytes >= 4 && memcmp(buf + len - 3, "...", 3) == 0) {
		/* cut: the base name comes from the whole name, demangled again at its size */
		struct sink k = {NULL, 0, 0, false};

		if (cplus_demangle_v3_callback(mangled, DMGL_PARAMS | DMGL_ANSI, sink_append, &k) &&
		    (full = malloc(k.len + 1)) != NULL) {
			struct sink w = {full, k.len + 1, 0, false};

			cplus_demangle_v3_callback(mangled, DMGL_PARAMS | DMGL_ANSI, sink_append, &w);
			full[w.len] = '\0';
			d = full;
			len = w.len;
		}
	}
#endif
	gt_demangle_base_range(d, len, &b, &e);
	len = e - b < bytes ? e - b : bytes - 1;
	memmove(buf, d + b, len);
	if (len < e - b && len >= 3)
		memcpy(buf + len - 3, "...", 3); /* a cut name must not pass for a whole one */
	buf[len] = '\0';
	free(full);
	return buf;
}
