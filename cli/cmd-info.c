/* gputrace info. Runs in the CLI process. (Being written.) */
#include "cli.h"

int cmd_info(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	gt_cli_error("'info' is not available in this build yet");
	return GT_EXIT_SOFTWARE;
}
