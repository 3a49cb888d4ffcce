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

/* True when this build can demangle (built with libiberty). */
bool gt_demangle_available(void);

#endif /* GPUTRACE_DEMANGLE_H */
