/* The table of exporters. Runs in the CLI. */
#include <string.h>

#include "gputrace/exporter.h"

static const struct gt_exporter_ops *const exporters[] = {
	NULL,
};

const struct gt_exporter_ops *const *gt_exporter_list(void)
{
	return exporters;
}

const struct gt_exporter_ops *gt_exporter_find(const char *name)
{
	for (const struct gt_exporter_ops *const *e = exporters; *e; e++)
		if (strcmp((*e)->name, name) == 0)
			return *e;
	return NULL;
}
