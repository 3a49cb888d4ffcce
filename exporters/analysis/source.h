/* `gputrace stats --by source` (source.c): GPU time, kernel launches, API time and NVTX ranges
 * per Python source line and per Python function, each call or range counted at the innermost
 * Python frame of its stack (`run --backtrace python` or `all`). Runs in the CLI. */
#ifndef GPUTRACE_SOURCE_H
#define GPUTRACE_SOURCE_H

#include <stdio.h>

#include "gputrace/trace.h"

/*
 * Read r three times (its stacks, then its API calls and NVTX records, then its kernels; a
 * window set on r applies, and r is rewound first) and write the two tables to out in
 * `format` (enum gt_stats_format), at most `limit` rows each in the table format (0: all).
 * Returns 0, -ENOMEM, -EIO (writing out) or the reader's -errno, with *errmsg set when it
 * has more to say.
 */
int gt_source_report(struct gt_reader *r, FILE *out, unsigned format, unsigned limit,
                     const char **errmsg);

#endif /* GPUTRACE_SOURCE_H */
