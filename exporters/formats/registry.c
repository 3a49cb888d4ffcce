/* The table of exporters. Runs in the CLI. */
#include <string.h>

#include "exporter.h"
#include "gt-config.h"

extern const struct gt_exporter_ops gt_exporter_chrome;
extern const struct gt_exporter_ops gt_exporter_perfetto;
extern const struct gt_exporter_ops gt_exporter_csv;
#if GT_HAVE_SQLITE
extern const struct gt_exporter_ops gt_exporter_sqlite;
#endif

static const struct gt_exporter_ops *const exporters[] = {
        &gt_exporter_chrome,
        &gt_exporter_perfetto,
        &gt_exporter_csv,
#if GT_HAVE_SQLITE
        &gt_exporter_sqlite,
#endif
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
