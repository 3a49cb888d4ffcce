/* libFuzzer target: what the CLI does with a trace once the reader has accepted it - the
 * run summary, the stats reports (of one trace, and across ranks), diff, advise, the HTML
 * report, and the chrome, perfetto and csv exporters - on
 * arbitrary traces (fuzz-trace.h's three modes). The exporters trust the reader's framing
 * but not the values: unknown enum values, string ids that were never defined, timestamps
 * in any order. Checks: failures come with a message, and the JSON outputs (chrome, stats
 * -f json) parse. Runs as a fuzz program.
 * Input: one byte choosing the consumer, then fuzz-trace.h's input. */
#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "advise.h"
#include "report.h"
#include "diff.h"
#include "exporter.h"
#include "fuzz-trace.h"
#include "gputrace/trace.h"
#include "rankstats.h"
#include "stats.h"

enum {
	USE_SUMMARY,
	USE_TABLE,
	USE_CSV_REPORT,
	USE_JSON_REPORT,
	USE_CHROME,
	USE_PERFETTO,
	USE_CSV,
	USE_RANKSTATS, /* stats across ranks, JSON, grouped by the consumer byte's next bits */
	USE_DIFF,      /* the trace against itself, JSON, with a gate */
	USE_ADVISE,    /* advise, JSON, and a gate */
	USE_REPORT,    /* the HTML report */
	USE_MAX
};

static char workdir[] = "/tmp/gputrace-fuzz-export-XXXXXX";
static char *out; /* the output of one input, in memory */
static size_t out_len;

/* At exit: the private directory is empty between inputs, so rmdir is enough. */
static void remove_workdir(void)
{
	if (chdir("/") == 0)
		rmdir(workdir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	if (!mkdtemp(workdir)) {
		perror("fuzz-export: private directory");
		exit(1);
	}
	atexit(remove_workdir);
	return 0;
}

/* Remove what an exporter wrote (csv writes one file per record kind). */
static void clean_workdir(void)
{
	DIR *d = opendir(workdir);
	struct dirent *e;
	char path[sizeof(workdir) + 260];

	if (!d)
		return;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", workdir, e->d_name);
		unlink(path);
	}
	closedir(d);
}

static void check_json(const char *what)
{
	cJSON *j;

	if (!out_len)
		return;
	j = cJSON_ParseWithLength(out, out_len);
	FUZZ_CHECK(j != NULL, "%s output is not valid JSON near byte %td of %zu", what,
	           cJSON_GetErrorPtr() ? cJSON_GetErrorPtr() - out : -1, out_len);
	cJSON_Delete(j);
}

/* Read a whole file into `out`. */
static void load(const char *path)
{
	FILE *f = fopen(path, "rb");

	free(out);
	out = NULL;
	out_len = 0;
	if (!f)
		return;
	if (fseek(f, 0, SEEK_END) == 0) {
		long n = ftell(f);

		if (n > 0 && fseek(f, 0, SEEK_SET) == 0 && (out = malloc((size_t)n)) &&
		    fread(out, 1, (size_t)n, f) == (size_t)n)
			out_len = (size_t)n;
	}
	fclose(f);
}

static int report(struct gt_reader *r, unsigned use, const char **msg)
{
	struct gt_stats_options o = {.reports = GT_STATS_REPORT_ALL, .limit = 3};
	FILE *f;
	int ret;

	free(out);
	out = NULL;
	out_len = 0;
	f = open_memstream(&out, &out_len);
	if (!f)
		return 0;
	if (use == USE_SUMMARY) {
		ret = gt_stats_summary(r, f, msg);
	} else {
		o.format = use == USE_CSV_REPORT    ? GT_STATS_FORMAT_CSV
		           : use == USE_JSON_REPORT ? GT_STATS_FORMAT_JSON
		                                    : GT_STATS_FORMAT_TABLE;
		ret = gt_stats_report(r, f, &o, msg);
	}
	fclose(f);
	if (ret == 0 && use == USE_JSON_REPORT)
		check_json("stats -f json");
	return ret;
}

static int export(struct gt_reader *r, unsigned use, const char **msg)
{
	static const char *const names[] = {"chrome", "perfetto", "csv"};
	const struct gt_exporter_ops *e = gt_exporter_find(names[use - USE_CHROME]);
	struct gt_export_options o = {.demangle = 1};
	struct gt_export_result res = {0};
	char path[sizeof(workdir) + 32];
	int ret;

	if (!e)
		return 0;
	snprintf(path, sizeof(path), "%s/out%s", workdir, e->extension);
	o.output = path;
	ret = gt_export_run(e, r, &o, &res, msg);
	if (ret == 0 && use == USE_CHROME) {
		load(path);
		check_json("chrome");
	}
	clean_workdir();
	return ret;
}

static int rankstats(struct gt_reader *r, unsigned by, const char **msg)
{
	struct gt_rankstats_options o = {.by = by % GT_RANKSTATS_BY_MAX,
	                                 .format = GT_STATS_FORMAT_JSON,
	                                 .min_lag_pct = GT_RANKSTATS_MIN_LAG_PCT};
	struct gt_rankstats *rs = NULL;
	FILE *f;
	int ret;

	free(out);
	out = NULL;
	out_len = 0;
	if (gt_rankstats_new(&o, &rs) < 0)
		return 0;
	ret = gt_rankstats_add(rs, r, "fuzz", msg);
	if (ret == 0)
		ret = gt_rankstats_finish(rs);
	if (ret == 0 && (f = open_memstream(&out, &out_len))) {
		ret = gt_rankstats_write(rs, f, msg);
		fclose(f);
		if (ret == 0)
			check_json("stats across ranks -f json");
	}
	if (ret == -ENOMEM && !*msg)
		*msg = "out of memory";
	gt_rankstats_free(rs);
	return ret;
}

static int diff(struct gt_reader *r, const char *path, const char **msg)
{
	struct gt_diff_options o = {.format = GT_STATS_FORMAT_JSON, .fail_above_pct = 5};
	struct gt_diff *d = NULL;
	struct gt_reader *r2 = NULL;
	FILE *f;
	int ret;

	free(out);
	out = NULL;
	out_len = 0;
	if (gt_diff_new(&o, &d) < 0)
		return 0;
	/* the same file through a second reader, as gputrace diff opens each side */
	if (gt_reader_open(path, &r2, msg) < 0) {
		gt_diff_free(d);
		return 0;
	}
	ret = gt_diff_add(d, GT_DIFF_BASE, r, "base", msg);
	if (ret == 0)
		ret = gt_diff_add(d, GT_DIFF_NEW, r2, "new", msg);
	if (ret == 0)
		ret = gt_diff_finish(d, msg);
	if (ret == 0) {
		/* a trace against itself: no change, no regression */
		FUZZ_CHECK(!d->gate.regressed && d->nappeared == 0 && d->nvanished == 0,
		           "a trace differs from itself");
		if ((f = open_memstream(&out, &out_len))) {
			ret = gt_diff_write(d, f, msg);
			fclose(f);
			if (ret == 0)
				check_json("diff -f json");
		}
	}
	gt_diff_free(d);
	gt_reader_close(r2);
	return ret;
}

static int advise(struct gt_reader *r, const char **msg)
{
	struct gt_advise *a = NULL;
	struct gt_advise_gate g;
	FILE *f;
	int ret;

	free(out);
	out = NULL;
	out_len = 0;
	if (gt_advise_new(NULL, &a) < 0)
		return 0;
	ret = gt_advise_add(a, r, "t.gtrace", msg);
	if (ret == 0 && gt_advise_finish(a) < 0)
		ret = 0; /* out of memory: nothing to check */
	else if (ret == 0) {
		/* findings come costliest first, each with its instances costliest first */
		for (size_t i = 0; i < a->nfindings; i++) {
			const struct gt_advise_finding *fi = &a->findings[i];

			FUZZ_CHECK(i == 0 || a->findings[i - 1].cost_ns >= fi->cost_ns,
			           "advise: findings out of order");
			FUZZ_CHECK(fi->count >= fi->ntop && fi->ntop <= GT_ADVISE_TOP,
			           "advise: more instances than the count");
			for (uint32_t k = 1; k < fi->ntop; k++)
				FUZZ_CHECK(fi->top[k - 1].cost_ns >= fi->top[k].cost_ns,
				           "advise: instances out of order");
		}
		gt_advise_gate_parse("1%", &g);
		(void)gt_advise_gate_match(a, &g);
		if ((f = open_memstream(&out, &out_len))) {
			ret = gt_advise_write(a, f, GT_ADVISE_FORMAT_JSON);
			fclose(f);
			if (ret == 0)
				check_json("advise -f json");
			else
				*msg = "advise: cannot write";
		}
	}
	gt_advise_free(a);
	return ret;
}

static int html(struct gt_reader *r, const char **msg)
{
	static const char head[] = "<!DOCTYPE html>\n", tail[] = "</html>\n";
	struct gt_report *rep = NULL;
	FILE *f;
	int ret;

	free(out);
	out = NULL;
	out_len = 0;
	if (gt_report_new(NULL, &rep) < 0)
		return 0;
	ret = gt_report_add(rep, r, "t.gtrace", msg);
	if (ret == 0 && gt_report_finish(rep) < 0)
		ret = 0; /* out of memory: nothing to check */
	else if (ret == 0 && (f = open_memstream(&out, &out_len))) {
		ret = gt_report_write_html(rep, f);
		fclose(f);
		if (ret < 0)
			*msg = "report: cannot write";
		else {
			/* whole, and nothing from outside the file */
			FUZZ_CHECK(out_len > sizeof(head) + sizeof(tail) &&
			                   !memcmp(out, head, sizeof(head) - 1) &&
			                   !memcmp(out + out_len - (sizeof(tail) - 1), tail,
			                           sizeof(tail) - 1),
			           "report: not a whole page");
			/* a name holding one is escaped (&quot;): no attribute can come of it */
			FUZZ_CHECK(!memmem(out, out_len, " src=\"", 6) &&
			                   !memmem(out, out_len, " href=\"", 7),
			           "report: a reference out of the page");
		}
	}
	gt_report_free(rep);
	return ret;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gt_reader *r = NULL;
	const char *path, *msg = NULL;
	unsigned use;
	size_t len;
	int ret;

	if (size < 2)
		return 0;
	use = data[0] % USE_MAX;
	path = fuzz_trace_file(data + 1, size - 1, &len);
	if (!path || gt_reader_open(path, &r, &msg) < 0)
		return 0;
	msg = NULL;
	ret = use < USE_CHROME       ? report(r, use, &msg)
	      : use == USE_RANKSTATS ? rankstats(r, data[0] / USE_MAX, &msg)
	      : use == USE_DIFF      ? diff(r, path, &msg)
	      : use == USE_ADVISE    ? advise(r, &msg)
	      : use == USE_REPORT    ? html(r, &msg)
	                             : export(r, use, &msg);
	FUZZ_CHECK(ret == 0 || (msg && *msg), "consumer %u failed (%d) without a message", use,
	           ret);
	gt_reader_close(r);
	return 0;
}
