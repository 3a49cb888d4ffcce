/* gputrace stats. Runs in the CLI process. (Being written.) */
#include "cli.h"

int cmd_stats(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	gt_cli_error("'stats' is not available in this build yet");
	return GT_EXIT_SOFTWARE;
}
