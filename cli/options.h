/* Parsing of option values shared by the subcommands: sizes, durations, numbers, choices.
 * Each returns 0 or -EINVAL/-ERANGE and leaves the reporting (one line naming the option and
 * what it accepts) to the caller. Runs in the CLI. */
#ifndef GPUTRACE_CLI_OPTIONS_H
#define GPUTRACE_CLI_OPTIONS_H

#include <stdint.h>

/* A byte count: digits with an optional binary suffix K, M, G or T (any case, optionally
 * followed by "B" or "iB": "64M", "64MiB", "4096"). Returns 0, -EINVAL (not a size) or
 * -ERANGE (outside [min, max]). */
int gt_opt_size(const char *s, uint64_t min, uint64_t max, uint64_t *ret);

/* A duration: a decimal number of seconds ("2", "0.5") or a number with a unit
 * ("250ms", "1.5s", "2m", "1h"). Returns 0 and nanoseconds, -EINVAL or -ERANGE (above max). */
int gt_opt_duration(const char *s, uint64_t max_ns, uint64_t *ret_ns);

/* A plain decimal integer in [min, max]. Returns 0, -EINVAL or -ERANGE. */
int gt_opt_uint(const char *s, uint64_t min, uint64_t max, uint64_t *ret);

/* Index of s in the NULL-terminated `choices`, or -EINVAL. */
int gt_opt_choice(const char *s, const char *const *choices);

#endif /* GPUTRACE_CLI_OPTIONS_H */
