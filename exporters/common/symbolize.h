/* Native frames to function names, when exporting (symbolize.c): through elfutils' libdwfl,
 * from the file a trace's MODULE record names or, when that file is gone or was rebuilt (its
 * build id differs), from separate debug information found by build id. Runs in the CLI. */
#ifndef GPUTRACE_EXPORTERS_SYMBOLIZE_H
#define GPUTRACE_EXPORTERS_SYMBOLIZE_H

#include <stddef.h>
#include <stdint.h>

struct gt_symbolizer;

/* Directories searched for separate debug information, elfutils' syntax (":.debug:/usr/lib/
 * debug": beside the file, in .debug beside it, and under /usr/lib/debug, each also by
 * .build-id/xx/yyyy.debug); GPUTRACE_DEBUGINFO_PATH replaces it. */
#define GT_DEBUGINFO_PATH_ENV "GPUTRACE_DEBUGINFO_PATH"

/* Returns 0 or -ENOMEM. */
int gt_symbolizer_new(struct gt_symbolizer **ret);
void gt_symbolizer_free(struct gt_symbolizer *s);

/*
 * The function containing ELF address `addr` of the file at `path` whose GNU build id is
 * `build_id` (lowercase hex; NULL or "" when unknown), demangled into buf. Returns buf, or
 * NULL when the file cannot be read or no symbol covers the address. Files are opened once
 * and kept until gt_symbolizer_free.
 */
const char *gt_symbolize(struct gt_symbolizer *s, const char *path, const char *build_id,
                         uint64_t addr, char *buf, size_t bytes);

#endif /* GPUTRACE_EXPORTERS_SYMBOLIZE_H */
