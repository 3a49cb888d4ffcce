/* C++ name demangling through libiberty's allocation-free callback interface, with a
 * pass-through fallback when libiberty is absent at build time. Runs in the CLI. */
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
