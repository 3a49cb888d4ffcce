/* What the timeline formats call things (see labels.h). Runs in the CLI. */
#include <string.h>

#include "gputrace/record.h"
#include "labels.h"
#include "text.h"
#include "timeline.h"

/* "pageable" -> "Pageable", as Kineto names copies */
static char *cap_kind(char *p, unsigned kind)
{
	const char *s = gt_mem_kind_name(kind);

	*p = *s >= 'a' && *s <= 'z' ? (char)(*s - 'a' + 'A') : *s;
	return stpcpy(p + 1, s + 1);
}

char *gt_labels_memcpy(char *n, unsigned copy_kind, unsigned src_kind, unsigned dst_kind)
{
	n = stpcpy(n, "Memcpy ");
	n = stpcpy(n, gt_memcpy_kind_name(copy_kind));
	n = stpcpy(n, " (");
	n = cap_kind(n, src_kind);
	n = stpcpy(n, " -> ");
	n = cap_kind(n, dst_kind);
	*n++ = ')';
	return n;
}

char *gt_labels_memset(char *n, unsigned mem_kind)
{
	n = stpcpy(n, "Memset (");
	n = cap_kind(n, mem_kind);
	*n++ = ')';
	return n;
}

const char *gt_labels_sync(unsigned kind)
{
	static const char *const names[GT_SYNC_KIND_MAX] = {
	        "Synchronize",        "Event Synchronize",   "Stream Wait Event",
	        "Stream Synchronize", "Context Synchronize",
	};

	return kind < GT_SYNC_KIND_MAX ? names[kind] : names[0];
}

const char *gt_labels_overhead(unsigned kind)
{
	static const char *const names[GT_OVERHEAD_KIND_MAX] = {
	        "CUPTI overhead",
	        "CUPTI overhead: driver compiler",
	        "CUPTI overhead: buffer flush",
	        "CUPTI overhead: instrumentation",
	        "CUPTI overhead: resource",
	        "CUPTI overhead: module loading",
	        "CUPTI overhead: lazy function loading",
	        "CUPTI overhead: command buffer full",
	        "CUPTI overhead: activity buffer request",
	};

	return kind < GT_OVERHEAD_KIND_MAX ? names[kind] : names[0];
}

const char *gt_labels_severity(unsigned severity)
{
	static const char *const sev[GT_NOTICE_SEVERITY_MAX] = {"info", "warning", "error"};

	return severity < GT_NOTICE_SEVERITY_MAX ? sev[severity] : "unknown";
}

char *gt_labels_process(struct gt_timeline *m, const struct gt_timeline_proc *pr, char *n,
                        bool json)
{
	if (pr->cat->have_info && pr->cat->exe_id) {
		size_t len = 0;
		const char *exe = gt_names_get(&m->names, pr->cat->exe_id, false, &len, NULL, NULL);
		const char *base;

		if (!exe) {
			exe = "";
			len = 0;
		}
		base = gt_text_basename(exe);
		len = gt_text_cut(base, len - (size_t)(base - exe), 1024, json);
		memcpy(n, base, len);
		n += len;
	} else {
		n = stpcpy(n, "process");
	}
	if (pr->cat->rank >= 0) {
		n = stpcpy(n, " (rank ");
		n = gt_fmt_i64(n, pr->cat->rank);
		*n++ = ')';
	}
	if (pr->cat->input) {
		/* a merged trace's process: its host, and its own pid when the merge gave it
		 * another (two hosts' pid 1234) */
		size_t len = 0;
		const char *host = pr->cat->host_id ? gt_names_get(&m->names, pr->cat->host_id,
		                                                   false, &len, NULL, NULL)
		                                    : NULL;

		if (host && len) {
			n = stpcpy(n, " on ");
			len = gt_text_cut(host, len, GT_LABELS_HOST_MAX, json);
			memcpy(n, host, len);
			n += len;
		}
		if (pr->cat->orig_pid != pr->pid) {
			n = stpcpy(n, host && len ? ", pid " : " pid ");
			n = gt_fmt_u64(n, pr->cat->orig_pid);
		}
	} else if (pr->cat->orig_pid != pr->pid) {
		/* a reused pid's later process, shown under a pid of its own */
		n = stpcpy(n, " pid ");
		n = gt_fmt_u64(n, pr->cat->orig_pid);
	}
	return n;
}

char *gt_labels_gpu(char *n, const struct gt_timeline_gpu *g)
{
	n = stpcpy(n, "GPU ");
	return gt_fmt_u64(n, g->cat->number);
}
