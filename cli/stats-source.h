/* `gputrace stats --by source` (stats-source.c). Runs in the CLI. */
#ifndef GPUTRACE_CLI_STATS_SOURCE_H
#define GPUTRACE_CLI_STATS_SOURCE_H

#include "common.h"

/* The report of cli's one trace, in `format` (enum gt_stats_format), `limit` rows a table
 * (0: all). Returns an exit status. */
int gt_cli_stats_source(const struct gt_cli *cli, unsigned format, unsigned limit);

#endif /* GPUTRACE_CLI_STATS_SOURCE_H */
