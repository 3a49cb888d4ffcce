/* Output-name patterns: %p pid, %h hostname, %q{VAR} an environment variable, %n a
 * sequence number, %% a percent sign. Used by `gputrace run -o` and GPUTRACE_OUTPUT. */
#ifndef GPUTRACE_PATTERN_H
#define GPUTRACE_PATTERN_H

#include <stddef.h>
#include <sys/types.h>

/* Expand `pattern` into out[out_bytes]. `seq` replaces %n. Never allocates; safe to call
 * inside the application. Returns the length written (>= 0), -EINVAL for a malformed
 * pattern (unknown %x, unterminated %q{), -ENAMETOOLONG if out is too small, and -ENOENT
 * if %q{VAR} names an unset variable; *errpos (may be NULL) gets the offending offset. */
int gt_pattern_expand(const char *pattern, pid_t pid, unsigned seq, char *out, size_t out_bytes,
                      size_t *errpos);

/* 1 if the pattern uses %n (so the caller can search for a free sequence number). */
int gt_pattern_has_seq(const char *pattern);

#endif /* GPUTRACE_PATTERN_H */
