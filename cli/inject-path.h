/* Finding the injection library (libgputrace-inject.so) that `gputrace run` hands to the CUDA
 * driver, and that `gputrace doctor` checks. Runs in the CLI. */
#ifndef GPUTRACE_CLI_INJECT_PATH_H
#define GPUTRACE_CLI_INJECT_PATH_H

#include <stddef.h>

/* Overrides the search: an absolute or relative path to libgputrace-inject.so. Read by the
 * CLI only (the library never sees it). */
#define GT_ENV_INJECT_LIB "GPUTRACE_INJECT_LIB"

/* Find the library, in this order: $GPUTRACE_INJECT_LIB; the installed layout relative to
 * this executable (<prefix>/bin/gputrace -> <prefix>/<libdir>/gputrace/); the build tree
 * (<build>/cli/gputrace -> <build>/collectors/); the libdir configured at build time.
 * On success returns 0 with the absolute path in out[bytes] and *how ("GPUTRACE_INJECT_LIB",
 * "installed", "build tree", "configured libdir"). On failure returns -ENOENT (or the errno of
 * GPUTRACE_INJECT_LIB's path) and, if tried is non-NULL, the places looked at, separated by
 * ", ", in tried[tried_bytes]. */
int gt_inject_find(char *out, size_t bytes, const char **how, char *tried, size_t tried_bytes);

#endif /* GPUTRACE_CLI_INJECT_PATH_H */
