/* C++ symbol demangling for kernel names, into a caller's buffer. Runs in the CLI
 * (exporters, stats); never inside the traced application. */
#ifndef GPUTRACE_DEMANGLE_H
#define GPUTRACE_DEMANGLE_H

#include <stdbool.h>
#include <stddef.h>

/* A buffer this large holds almost every demangled kernel name in full. */
#define GT_DEMANGLE_BUF_BYTES 4096u

/* Demangle an Itanium C++ ABI name (CUPTI reports kernel names that way, "_Z...").
 *
 * mangled: NUL-terminated name; NULL is treated as "".
 * buf, bytes: where the demangled name goes (NUL-terminated). A name longer than bytes - 1
 *   is cut there and ends in "..." (when bytes >= 4).
 *
 * Returns buf holding the demangled name, or `mangled` itself when it is not a mangled C++
 * name ("_Z" prefix), when demangling fails, when buf is NULL or bytes is 0, or when this
 * build has no demangler (GT_HAVE_IBERTY is 0). Never allocates: libiberty's callback
 * interface writes straight into buf. Thread-safe; no global state. */
const char *gt_demangle(const char *mangled, char *buf, size_t bytes);

/* The base name of a kernel, as Nsight Systems' ":base" reports give it: the function's
 * own name without scopes, template arguments, parameters or return type
 * ("void ns::k<int>(float*)" -> "k"), from the whole demangled name however long (a name
 * that gt_demangle cuts at `bytes` is demangled again at its full size, on the heap). A
 * name that is not C++ ("my_kernel") is its own base. Returns buf (cut at bytes - 1 and
 * ending in "..." only when the base name itself is that long), or `mangled` when buf is
 * NULL or bytes is 0. */
const char *gt_demangle_base(const char *mangled, char *buf, size_t bytes);

/* Where the base name lies in the demangled name s[0..len): s[*start, *end); the whole of
 * s when it has no recognisable structure. */
void gt_demangle_base_range(const char *s, size_t len, size_t *start, size_t *end);

/* True when this build can demangle (built with libiberty). */
bool gt_demangle_available(void);

#endif /* GPUTRACE_DEMANGLE_H */
