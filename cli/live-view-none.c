/* gputrace run --live in a build without ncurses: there is no view; gputrace run says so
 * before it runs anything. Runs in the CLI. */
#include <errno.h>
#include <stddef.h>

#include "live-view.h"

bool gt_live_view_available(void)
{
	return false;
}

int gt_live_view_start(const struct gt_live_view_options *o, struct gt_live_view **ret,
                       const char **why)
{
	(void)o;
	*ret = NULL;
	*why = "this gputrace was built without ncurses";
	return -ENOTSUP;
}

const struct gt_drain_tap *gt_live_view_tap(struct gt_live_view *v)
{
	(void)v;
	return NULL;
}

void gt_live_view_stop(struct gt_live_view *v)
{
	(void)v;
}
