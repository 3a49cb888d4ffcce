/* The hive partition of each trace of a job exported to one folder (`gputrace export rank-*.gtrace
 * -f parquet -o job/`): rank=N for a trace whose processes have one rank, host=H/pid=P for a
 * job whose traces have none, and the checks that make the folder one table for DuckDB,
 * Spark, Polars and Dask (docs/sql.md, "A job in one folder"). Reads only the chunks that hold
 * PROCESS and STRING records. Runs in the CLI. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exporter.h"
#include "gputrace/trace.h"

static _Thread_local char errbuf[1024];

static bool process_chunk(void *ctx, const struct gt_chunk_info *c)
{
	(void)ctx;
	return (c->types & ((1ull << GT_REC_PROCESS) | (1ull << GT_REC_STRING))) != 0;
}

/* A hive value: the characters a path and every engine keep as they are; others become '_'. */
static void hive_value(const char *s, size_t len, char *out, size_t size)
{
	size_t n = 0;

	for (size_t i = 0; i < len && n + 1 < size; i++) {
		char c = s[i];
		bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		            (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_';

		out[n++] = keep ? c : '_';
	}
	if (n == 0 && size > 1)
		out[n++] = '_';
	out[n] = '\0';
}

int gt_export_partition_of(const char *path, struct gt_export_partition *p, const char **errmsg)
{
	struct gt_reader_filter f = {.chunk = process_chunk};
	const union gt_record *rec;
	struct gt_reader *r = NULL;
	const char *host = NULL, *msg = NULL;
	size_t host_len = 0;
	uint32_t pid = 0;
	bool first = true;
	int ret;

	memset(p, 0, sizeof(*p));
	p->rank = -1;
	ret = gt_reader_open(path, &r, &msg);
	if (ret < 0) {
		snprintf(errbuf, sizeof(errbuf), "%s: %s", path, msg ? msg : strerror(-ret));
		*errmsg = errbuf;
		return ret;
	}
	ret = gt_reader_set_filter(r, &f);
	while (ret == 0 && (ret = gt_reader_next(r, &rec)) > 0) {
		const struct gt_rec_process *pr = &rec->process;

		ret = 0;
		if (rec->hdr.type != GT_REC_PROCESS)
			continue;
		if (first) {
			pid = pr->hdr.pid;
			host = gt_reader_string(r, pr->host_id, &host_len);
			first = false;
		}
		if (pr->rank < 0)
			continue;
		if (p->nranks == 0) {
			p->rank_min = p->rank_max = pr->rank;
			p->nranks = 1;
		} else if (pr->rank < p->rank_min || pr->rank > p->rank_max) {
			p->rank_min = pr->rank < p->rank_min ? pr->rank : p->rank_min;
			p->rank_max = pr->rank > p->rank_max ? pr->rank : p->rank_max;
			p->nranks = 2;
		}
	}
	if (ret < 0) {
		snprintf(errbuf, sizeof(errbuf), "%s: reading the trace: %s", path, strerror(-ret));
		*errmsg = errbuf;
		goto out;
	}
	if (!host) {
		host = gt_reader_header(r)->info.hostname;
		host_len = host ? strlen(host) : 0;
	}
	if (p->nranks == 1) {
		p->rank = p->rank_min;
		snprintf(p->key, sizeof(p->key), "rank=%d", p->rank);
	} else {
		char h[256];

		hive_value(host ? host : "", host_len, h, sizeof(h));
		snprintf(p->key, sizeof(p->key), "host=%s/pid=%u", h, pid);
	}
	ret = 0;
out:
	gt_reader_close(r);
	return ret;
}

int gt_export_partitions(const char *const *paths, unsigned n, struct gt_export_partition *parts,
                         const char **errmsg)
{
	unsigned ranked = 0, first_ranked = 0, first_unranked = 0;
	bool unranked = false;

	for (unsigned i = 0; i < n; i++) {
		int ret = gt_export_partition_of(paths[i], &parts[i], errmsg);

		if (ret < 0)
			return ret;
		if (parts[i].nranks > 1) {
			snprintf(errbuf, sizeof(errbuf),
			         "%s holds several ranks (%d to %d); a partition is one rank's "
			         "trace: trace each rank to a file of its own",
			         paths[i], parts[i].rank_min, parts[i].rank_max);
			*errmsg = errbuf;
			return -EDOM;
		}
		if (parts[i].nranks == 1 && ranked++ == 0)
			first_ranked = i;
		if (parts[i].nranks == 0 && !unranked) {
			first_unranked = i;
			unranked = true;
		}
	}
	if (ranked && ranked < n) {
		snprintf(errbuf, sizeof(errbuf),
		         "%s has rank %d and %s has none: the partitions of one folder are all "
		         "rank=N or all host=H/pid=P; export them to two folders",
		         paths[first_ranked], parts[first_ranked].rank, paths[first_unranked]);
		*errmsg = errbuf;
		return -EINVAL;
	}
	for (unsigned i = 0; i < n; i++) {
		for (unsigned j = 0; j < i; j++) {
			if (strcmp(parts[i].key, parts[j].key) != 0)
				continue;
			snprintf(errbuf, sizeof(errbuf),
			         "%s and %s are both %s: one folder holds one trace per %s",
			         paths[j], paths[i], parts[i].key,
			         ranked ? "rank" : "host and process");
			*errmsg = errbuf;
			return -EEXIST;
		}
	}
	return 0;
}
