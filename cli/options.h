/* Parsing of option values shared by the subcommands: sizes, durations, numbers, choices;
 * and the names derived from them (outputs next to a trace, the list of exporters).
 * Each returns 0 or -EINVAL/-ERANGE and leaves the reporting (one line naming the option and
 * what it accepts) to the caller. Runs in the CLI. */
#ifndef GPUTRACE_CLI_OPTIONS_H
#define GPUTRACE_CLI_OPTIONS_H

#include <stddef.h>
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

/* The trace's name with ".gtrace" (if present) replaced by `ext`: "dir/run.gtrace" ->
 * "dir/run.json". For outputs written next to a trace. */
void gt_opt_derived_name(const char *trace, const char *ext, char *out, size_t bytes);

/* The exporters this build has, "chrome, perfetto, csv", for messages that list them. */
void gt_opt_exporter_names(char *buf, size_t bytes);

#endif /* GPUTRACE_CLI_OPTIONS_H */
