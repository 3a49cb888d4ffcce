/* perfetto-import: Perfetto's own importer (trace_processor_shell) judges both timeline
 * exports of one trace. Runs as a meson test (suite `perfetto`), one per trace shape:
 *   perfetto-import TP --shape NAME     a shape of tests/flow-shapes.h, or "fixture"
 *   perfetto-import TP --trace FILE     a recorded trace (tests/data)
 *   ... --split                         instead: the chrome export split by ranks, each
 *                                       rank's file on its own
 * Exports the trace to chrome JSON and to perfetto protobuf, imports each with TP and
 * checks through SQL, against what the .gtrace itself holds (read here, apart from the
 * exporters): slices, flows, lanes as threads, streams, counter values, process and thread
 * names, kernel args, no import error or data loss; and that both formats give the same
 * processes, threads, arrows and slices per category. Exit 0 when all hold, 1 otherwise, 77
 * (skipped) when TP is absent or cannot run. GPUTRACE_PERFETTO_TP, when set, replaces TP. */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "export-fixture.h"
#include "flow-shapes.h"
#include "gputrace/exporter.h"
#include "gputrace/trace.h"

#define EXIT_SKIP 77

static int failures;

static void fail(const char *fmt, ...)
{
	va_list ap;

	fputs("FAIL: ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fputc('\n', stdout);
	failures++;
}

static void check_u64(const char *fmt_name, const char *what, uint64_t got, uint64_t want)
{
	if (got != want)
		fail("%s: %s: %llu, expected %llu", fmt_name, what, (unsigned long long)got,
		     (unsigned long long)want);
	else
		printf("ok: %s: %s: %llu\n", fmt_name, what, (unsigned long long)got);
}

/* ------------------------------------------------------------------------------------ */
/* Running the importer                                                                  */

/* Run argv, its stdout into *out (malloc'd, NUL-terminated), stderr to /dev/null unless
 * keep_err. Returns the exit status, 128 + signal, or -errno. */
static int run(char *const argv[], char **out, bool keep_err)
{
	int fd[2], status;
	size_t len = 0, cap = 65536;
	char *buf = malloc(cap);
	pid_t pid;
	ssize_t n;

	if (!buf || pipe(fd) < 0) {
		free(buf);
		return -errno;
	}
	pid = fork();
	if (pid < 0) {
		close(fd[0]);
		close(fd[1]);
		free(buf);
		return -errno;
	}
	if (pid == 0) {
		dup2(fd[1], STDOUT_FILENO);
		if (!keep_err && !freopen("/dev/null", "w", stderr))
			_exit(126);
		close(fd[0]);
		close(fd[1]);
		execv(argv[0], argv);
		_exit(127);
	}
	close(fd[1]);
	while ((n = read(fd[0], buf + len, cap - len - 1)) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		len += (size_t)n;
		if (cap - len < 4096) {
			char *b = realloc(buf, cap *= 2);

			if (!b)
				break;
			buf = b;
		}
	}
	close(fd[0]);
	buf[len] = '\0';
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	*out = buf;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static const char *tp;

/* The rows of `sql` on `file`, as trace_processor_shell prints them (CSV), without the
 * header line; NULL (and a failure) if it did not run. */
static char *query(const char *file, const char *sql)
{
	char *argv[] = {(char *)tp, "query", (char *)file, (char *)sql, NULL};
	char *out = NULL, *nl;
	int rc = run(argv, &out, false);
	size_t rest;

	if (rc != 0) {
		fail("%s: trace_processor_shell exited %d on: %s", file, rc, sql);
		free(out);
		return NULL;
	}
	nl = strchr(out, '\n');
	rest = nl ? strlen(nl + 1) : 0;
	memmove(out, nl ? nl + 1 : out, rest);
	out[rest] = '\0';
	return out;
}

/* One number from `sql`. */
static uint64_t query_u64(const char *file, const char *sql)
{
	char *out = query(file, sql);
	uint64_t v = out ? strtoull(out, NULL, 10) : UINT64_MAX;

	free(out);
	return v;
}

/* ------------------------------------------------------------------------------------ */
/* What the trace holds, read straight from the .gtrace                                  */

/* A set of 64-bit keys (never 0), open addressing. */
struct set {
	uint64_t *k;
	size_t cap, n;
};

static bool set_add(struct set *s, uint64_t key)
{
	size_t i;

	if ((s->n + 1) * 2 > s->cap) {
		struct set b = {calloc(s->cap ? s->cap * 2 : 1024, sizeof(uint64_t)),
		                s->cap ? s->cap * 2 : 1024, 0};

		for (size_t j = 0; j < s->cap; j++)
			if (s->k[j])
				set_add(&b, s->k[j]);
		free(s->k);
		*s = b;
	}
	for (i = (key * 0x9e3779b97f4a7c15ull) >> 7 & (s->cap - 1); s->k[i];
	     i = (i + 1) & (s->cap - 1))
		if (s->k[i] == key)
			return false;
	s->k[i] = key;
	s->n++;
	return true;
}

static bool set_has(const struct set *s, uint64_t key)
{
	if (!s->cap)
		return false;
	for (size_t i = (key * 0x9e3779b97f4a7c15ull) >> 7 & (s->cap - 1); s->k[i];
	     i = (i + 1) & (s->cap - 1))
		if (s->k[i] == key)
			return true;
	return false;
}

#define MAX_THREADS 4096

struct oracle {
	uint64_t slices;   /* slices and instants: every drawn record but memory */
	uint64_t counters; /* counter values: device memory records, pool records */
	uint64_t kernels;
	uint64_t flows;    /* launches with both their call and GPU work recorded */
	uint64_t streams;  /* distinct (pid, stream) with GPU work */
	struct set api;    /* (pid, correlation) of calls */
	struct set gpu;    /* (pid, correlation) of GPU work */
	struct set stream; /* (pid, stream) */
	struct set shown;  /* pids with something drawn on their own process */
	struct {
		uint32_t pid, tid, name_id;
		bool sync; /* its sync lane */
	} threads[MAX_THREADS];
	unsigned nthreads;
	struct {
		uint32_t pid, exe_id;
		int32_t rank;
		uint32_t host_id, orig_pid; /* a merged trace's (ORIGIN); orig_pid 0: not merged */
	} procs[256];
	unsigned nprocs;
	struct gt_rec_origin origins[256]; /* a merged trace's, before its processes' records */
	unsigned norigins;
	struct {
		uint32_t pid;
		uint64_t slices, counters, flows; /* as above, of this process's records */
	} per[256];
	unsigned nper;
};

/* Add what one record of pid added to the totals to pid's own. */
static void per_pid(struct oracle *o, uint32_t pid, uint64_t slices, uint64_t counters,
                    uint64_t flows)
{
	unsigned i;

	if (!slices && !counters && !flows)
		return;
	for (i = 0; i < o->nper && o->per[i].pid != pid; i++)
		;
	if (i == o->nper) {
		if (o->nper == 256)
			return;
		o->per[o->nper].pid = pid;
		o->per[o->nper].slices = o->per[o->nper].counters = o->per[o->nper].flows = 0;
		o->nper++;
	}
	o->per[i].slices += slices;
	o->per[i].counters += counters;
	o->per[i].flows += flows;
}

static void add_thread(struct oracle *o, uint32_t pid, uint32_t tid, bool sync)
{
	for (unsigned i = 0; i < o->nthreads; i++)
		if (o->threads[i].pid == pid && o->threads[i].tid == tid &&
		    o->threads[i].sync == sync)
			return;
	if (o->nthreads < MAX_THREADS) {
		o->threads[o->nthreads].pid = pid;
		o->threads[o->nthreads].tid = tid;
		o->threads[o->nthreads].name_id = 0;
		o->threads[o->nthreads++].sync = sync;
	}
}

static void gpu_work(struct oracle *o, uint32_t pid, const struct gt_gpu_span *s)
{
	if (!s->start_ns)
		return; /* CUPTI gave no times: not drawn */
	o->slices++;
	if (s->correlation_id && set_add(&o->gpu, (uint64_t)pid << 32 | s->correlation_id) &&
	    set_has(&o->api, (uint64_t)pid << 32 | s->correlation_id))
		o->flows++;
	if (set_add(&o->stream, ((uint64_t)pid << 32 | s->stream_id) + 1))
		o->streams++;
}

static int oracle_read(const char *path, struct oracle *o, struct gt_reader **rp)
{
	const union gt_record *rec;
	const char *err = NULL;
	struct gt_reader *r;
	uint32_t tnames[MAX_THREADS][3]; /* pid, tid, name id of THREAD records */
	unsigned ntnames = 0;
	int ret;

	memset(o, 0, sizeof(*o));
	ret = gt_reader_open(path, &r, &err);
	if (ret < 0) {
		fail("%s: %s", path, err ? err : strerror(-ret));
		return ret;
	}
	while ((ret = gt_reader_next(r, &rec)) > 0) {
		uint32_t pid = rec->hdr.pid;
		uint64_t s0 = o->slices, c0 = o->counters, f0 = o->flows;

		switch (rec->hdr.type) {
		case GT_REC_KERNEL:
			o->kernels += rec->kernel.span.start_ns != 0;
			gpu_work(o, pid, &rec->kernel.span);
			break;
		case GT_REC_MEMCPY:
			gpu_work(o, pid, &rec->memcpy.span);
			break;
		case GT_REC_MEMSET:
			gpu_work(o, pid, &rec->memset.span);
			break;
		case GT_REC_GRAPH:
			gpu_work(o, pid, &rec->graph.span);
			break;
		case GT_REC_API:
			o->slices++;
			set_add(&o->shown, (uint64_t)pid + 1);
			add_thread(o, pid, rec->api.tid, false);
			if (rec->api.correlation_id &&
			    set_add(&o->api, (uint64_t)pid << 32 | rec->api.correlation_id) &&
			    set_has(&o->gpu, (uint64_t)pid << 32 | rec->api.correlation_id))
				o->flows++;
			break;
		case GT_REC_NVTX:
			o->slices++;
			set_add(&o->shown, (uint64_t)pid + 1);
			if (rec->nvtx.kind != GT_NVTX_START_END)
				add_thread(o, pid, rec->nvtx.tid, false);
			break;
		case GT_REC_SYNC:
			o->slices++;
			set_add(&o->shown, (uint64_t)pid + 1);
			add_thread(o, pid, rec->sync.tid, true);
			break;
		case GT_REC_OVERHEAD:
		case GT_REC_LOSS:
		case GT_REC_NOTICE:
		case GT_REC_PROCESS_END:
			o->slices++;
			set_add(&o->shown, (uint64_t)pid + 1);
			break;
		case GT_REC_MEMORY:
			o->counters += rec->memory.mem_kind != GT_MEM_PINNED &&
			               rec->memory.mem_kind != GT_MEM_PAGEABLE;
			break;
		case GT_REC_MEMORY_POOL:
			if (rec->memory_pool.ts_ns) {
				o->slices++;   /* an instant on the GPU */
				o->counters++; /* and the GPU's pools' total */
			}
			break;
		case GT_REC_THREAD:
			if (ntnames < MAX_THREADS) {
				tnames[ntnames][0] = pid;
				tnames[ntnames][1] = rec->thread.tid;
				tnames[ntnames++][2] = rec->thread.name_id;
			}
			break;
		case GT_REC_ORIGIN:
			if (o->norigins < 256)
				o->origins[o->norigins++] = rec->origin;
			break;
		case GT_REC_PROCESS:
			if (o->nprocs < 256) {
				o->procs[o->nprocs].pid = pid;
				o->procs[o->nprocs].exe_id = rec->process.exe_id;
				o->procs[o->nprocs].rank = rec->process.rank;
				for (unsigned k = 0; k < o->norigins; k++) {
					if (o->origins[k].hdr.pid != pid)
						continue;
					o->procs[o->nprocs].host_id = o->origins[k].host_id;
					o->procs[o->nprocs].orig_pid = o->origins[k].orig_pid;
				}
				o->nprocs++;
			}
			break;
		default:
			break;
		}
		per_pid(o, pid, o->slices - s0, o->counters - c0, o->flows - f0);
	}
	if (ret < 0) {
		fail("%s: reading: %s", path, strerror(-ret));
		gt_reader_close(r);
		return ret;
	}
	/* the last name each thread was given */
	for (unsigned i = 0; i < ntnames; i++)
		for (unsigned k = 0; k < o->nthreads; k++)
			if (o->threads[k].pid == tnames[i][0] && o->threads[k].tid == tnames[i][1])
				o->threads[k].name_id = tnames[i][2];
	*rp = r;
	return 0;
}

/* Whether s is plain printable ASCII without quotes, so that it can be looked for as is in
 * the importer's CSV output. */
static bool plain(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (s[i] < 0x20 || s[i] > 0x7e || s[i] == '"' || s[i] == '\\')
			return false;
	return true;
}

/* ------------------------------------------------------------------------------------ */
/* The checks                                                                            */

static const char *scalars_sql =
        "select (select count(*) from slice), (select count(*) from flow),"
        " (select count(*) from counter), (select count(*) from thread_track),"
        " (select count(*) from thread where name glob 'stream *'"
        "   and name not glob '*(overlap *'),"
        " (select count(*) from slice where category = 'kernel'),"
        " (select count(*) from flow f join slice o on o.id = f.slice_out"
        "   join slice i on i.id = f.slice_in"
        "   where o.category in ('cuda_runtime', 'cuda_driver')"
        "   and i.category in ('kernel', 'gpu_memcpy', 'gpu_memset', 'cuda_graph')),"
        " (select count(*) from stats where severity in ('error', 'data_loss') and value > 0)";

/* chrome's args are "args.KEY" (a dim3 "args.KEY[0]" ...), perfetto's "debug.KEY" */
#define KERNEL_ARG_SQL                                                                             \
	"select count(*) from slice s where s.category = 'kernel' and exists (select 1 from"       \
	" args a where a.arg_set_id = s.arg_set_id and (a.key = 'args.%s' or a.key ="              \
	" 'debug.%s' or a.key glob 'args.%s[[]0]'))"

/* Rows compared between the two formats. utid 0 is the importer's own placeholder; times
 * are since the first slice (the JSON's are relative to its base time, perfetto's not). */
static const char *const same_sql[] = {
        "select pid, name from process where pid != 0 order by pid",
        "select p.pid, t.tid, t.name from thread t join process p using (upid)"
        " where t.utid != 0 order by 1, 2",
        "select category, count(*) from slice group by 1 order by 1",
        /* track names differ: the JSON importer appends the arg's name ("... bytes") */
        "select p.pid, count(*), sum(c.value) from counter c join process_counter_track t"
        " on c.track_id = t.id join process p using (upid) group by 1 order by 1",
        "select ot.tid, o.ts - b.t0, o.name, it.tid, i.ts - b.t0, i.name from flow f"
        " join (select min(ts) t0 from slice) b"
        " join slice o on o.id = f.slice_out join slice i on i.id = f.slice_in"
        " join thread_track ott on ott.id = o.track_id join thread ot on ot.utid = ott.utid"
        " join thread_track itt on itt.id = i.track_id join thread it on it.utid = itt.utid"
        " order by 2, 5, 1, 4",
};
static const char *const same_what[] = {"processes", "threads", "slices per category",
                                        "counter values per process", "arrows"};
#define NSAME (sizeof(same_sql) / sizeof(same_sql[0]))

struct exported {
	const char *fmt;
	char path[4096];
	struct gt_export_result res;
	char *same[NSAME];
};

static void check_one(struct exported *x, const struct oracle *o, struct gt_reader *r)
{
	char sql[1024];
	char *rows = query(x->path, scalars_sql);
	uint64_t v[8] = {0};
	char *p = rows;

	if (!rows)
		return;
	for (int i = 0; i < 8 && p; i++) {
		v[i] = strtoull(p, &p, 10);
		p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL;
	}
	free(rows);
	check_u64(x->fmt, "import errors and data losses (stats)", v[7], 0);
	if (v[7]) {
		char *s = query(x->path, "select name, idx, severity, value from stats where"
		                         " severity in ('error', 'data_loss') and value > 0");

		printf("%s", s ? s : "");
		free(s);
	}
	check_u64(x->fmt, "slices = events the exporter wrote but counter values", v[0],
	          x->res.events - x->res.counters);
	check_u64(x->fmt, "slices = drawn records of the trace", v[0], o->slices);
	check_u64(x->fmt, "flows = arrows the exporter drew", v[1], x->res.flows);
	check_u64(x->fmt, "flows = launches with both ends recorded", v[1], o->flows);
	check_u64(x->fmt, "flows from an API call to GPU work", v[6], o->flows);
	check_u64(x->fmt, "counter values = the exporter's", v[2], x->res.counters);
	check_u64(x->fmt, "counter values = memory and pool records", v[2], o->counters);
	check_u64(x->fmt, "thread tracks = lanes the exporter announced", v[3], x->res.lanes);
	check_u64(x->fmt, "stream threads = (process, stream) pairs with GPU work", v[4],
	          o->streams);
	check_u64(x->fmt, "kernel slices", v[5], o->kernels);
	for (int a = 0; a < 3; a++) {
		static const char *const args[] = {"grid", "block", "correlation"};

		char what[64];

		snprintf(sql, sizeof(sql), KERNEL_ARG_SQL, args[a], args[a], args[a]);
		snprintf(what, sizeof(what), "kernels with arg '%s'", args[a]);
		check_u64(x->fmt, what, query_u64(x->path, sql), o->kernels);
	}
	for (size_t i = 0; i < NSAME; i++)
		x->same[i] = query(x->path, same_sql[i]);

	/* names: each traced process that shows something, each CPU thread and sync lane */
	for (unsigned i = 0; x->same[0] && i < o->nprocs; i++) {
		char want[1200];
		size_t len = 0;
		const char *exe =
		        o->procs[i].exe_id ? gt_reader_string(r, o->procs[i].exe_id, &len) : NULL;
		const char *base = exe ? exe : "process";
		int n;

		if (!set_has(&o->shown, (uint64_t)o->procs[i].pid + 1))
			continue;
		if (exe) {
			for (size_t k = 0; k < len; k++)
				if (exe[k] == '/')
					base = exe + k + 1;
			len -= (size_t)(base - exe);
		} else {
			len = strlen(base);
		}
		if (!plain(base, len) || len > 1000)
			continue;
		n = snprintf(want, sizeof(want), "%u,\"%.*s", o->procs[i].pid, (int)len, base);
		if (o->procs[i].rank >= 0)
			n += snprintf(want + n, sizeof(want) - (size_t)n, " (rank %d)",
			              o->procs[i].rank);
		if (o->procs[i].orig_pid) {
			/* a merged trace's process: " on HOST", and its pid there if renamed */
			const char *host = o->procs[i].host_id
			                           ? gt_reader_string(r, o->procs[i].host_id, NULL)
			                           : NULL;

			if (host && *host)
				n += snprintf(want + n, sizeof(want) - (size_t)n, " on %.64s", host);
			if (o->procs[i].orig_pid != o->procs[i].pid)
				n += snprintf(want + n, sizeof(want) - (size_t)n, "%spid %u",
				              host && *host ? ", " : " ", o->procs[i].orig_pid);
		}
		snprintf(want + n, sizeof(want) - (size_t)n, "\"\n");
		if (!strstr(x->same[0], want))
			fail("%s: no process row %s", x->fmt, want);
	}
	for (unsigned i = 0; x->same[1] && i < o->nthreads; i++) {
		char want[1200];
		size_t len = 0;
		const char *name = o->threads[i].name_id
		                           ? gt_reader_string(r, o->threads[i].name_id, &len)
		                           : NULL;
		uint32_t tid = o->threads[i].tid & ((1u << 25) - 1);

		if (name && (!plain(name, len) || len > 1000))
			continue;
		if (o->threads[i].sync)
			tid |= 16u << 25;
		if (name)
			snprintf(want, sizeof(want), "%u,%u,\"%.*s%s\"\n", o->threads[i].pid, tid,
			         (int)len, name, o->threads[i].sync ? " sync" : "");
		else
			snprintf(want, sizeof(want), "%u,%u,\"thread %u%s\"\n", o->threads[i].pid,
			         tid, o->threads[i].tid, o->threads[i].sync ? " sync" : "");
		if (!strstr(x->same[1], want))
			fail("%s: no thread row %s", x->fmt, want);
	}
}

static int export_to(struct gt_reader *r, struct exported *x)
{
	struct gt_export_options opts = {.output = x->path, .demangle = 1};
	const char *err = NULL;
	int ret = gt_exporter_find(x->fmt)->run(r, &opts, &x->res, &err);

	if (ret < 0)
		fail("export to %s: %s", x->path, err ? err : strerror(-ret));
	return ret;
}

/* --split: the chrome export split by ranks; each rank's file imports without an error and
 * holds exactly the slices, arrows and counter values of its rank's processes. */
static void check_split(const char *trace, const char *dir, const struct oracle *o)
{
	struct gt_export_options opts = {.demangle = 1, .split = GT_EXPORT_SPLIT_RANKS};
	struct gt_export_result res = {0};
	char out[4200], path[4400];
	const char *err = NULL;
	struct gt_reader *r;
	int32_t ranks[256];
	unsigned nranks = 0;
	int ret;

	snprintf(out, sizeof(out), "%s/ranks", dir);
	opts.output = out;
	if (gt_reader_open(trace, &r, &err) < 0) {
		fail("%s: %s", trace, err ? err : "cannot open");
		return;
	}
	ret = gt_exporter_find("chrome")->run(r, &opts, &res, &err);
	gt_reader_close(r);
	if (ret < 0) {
		fail("export --split ranks: %s", err ? err : strerror(-ret));
		return;
	}
	for (unsigned i = 0; i < o->nprocs; i++) {
		bool seen = o->procs[i].rank < 0;

		for (unsigned k = 0; k < nranks && !seen; k++)
			seen = ranks[k] == o->procs[i].rank;
		if (!seen)
			ranks[nranks++] = o->procs[i].rank;
	}
	check_u64("split", "files = ranks", res.files, nranks);
	for (unsigned k = 0; k < nranks; k++) {
		uint64_t slices = 0, counters = 0, flows = 0, v[8] = {0};
		char what[64], *rows, *p;

		for (unsigned i = 0; i < o->nprocs; i++) {
			if (o->procs[i].rank != ranks[k])
				continue;
			for (unsigned q = 0; q < o->nper; q++) {
				if (o->per[q].pid != o->procs[i].pid)
					continue;
				slices += o->per[q].slices;
				counters += o->per[q].counters;
				flows += o->per[q].flows;
			}
		}
		snprintf(path, sizeof(path), "%s/rank-%d.pt.trace.json", out, ranks[k]);
		rows = query(path, scalars_sql);
		if (!rows)
			continue;
		p = rows;
		for (int i = 0; i < 8 && p; i++) {
			v[i] = strtoull(p, &p, 10);
			p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL;
		}
		free(rows);
		snprintf(what, sizeof(what), "rank-%d.pt.trace.json", ranks[k]);
		check_u64(what, "import errors and data losses (stats)", v[7], 0);
		check_u64(what, "slices = drawn records of its processes", v[0], slices);
		check_u64(what, "flows = its launches with both ends", v[1], flows);
		check_u64(what, "counter values = its memory and pool records", v[2], counters);
		unlink(path);
	}
	rmdir(out);
}

/* The importer is there and runs (it needs libprotobuf32 and AVX2). */
static bool tp_runs(void)
{
	char *argv[] = {(char *)tp, "--version", NULL};
	char *out = NULL;
	int rc;

	if (!tp || !*tp || access(tp, X_OK) != 0) {
		printf("trace_processor_shell not found at '%s' (meson -Dperfetto_tp=PATH, or "
		       "GPUTRACE_PERFETTO_TP): skipped\n",
		       tp ? tp : "");
		return false;
	}
	rc = run(argv, &out, true);
	if (rc != 0 || !out || !strstr(out, "Perfetto")) {
		printf("%s cannot run (exit %d; libprotobuf32 missing?): skipped\n", tp, rc);
		free(out);
		return false;
	}
	printf("importer: %s", out);
	free(out);
	return true;
}

int main(int argc, char **argv)
{
	struct exported x[2] = {{.fmt = "chrome"}, {.fmt = "perfetto"}};
	char dir[] = "/tmp/gt-import-XXXXXX", trace[4200];
	const char *env = getenv("GPUTRACE_PERFETTO_TP");
	struct oracle *o = calloc(1, sizeof(*o));
	struct gt_reader *r = NULL;
	uint64_t want_flows = UINT64_MAX;
	bool have_dir = false, split;

	if (argc < 4 || (strcmp(argv[2], "--shape") != 0 && strcmp(argv[2], "--trace") != 0) ||
	    (argc == 5 && strcmp(argv[4], "--split") != 0) || argc > 5) {
		fprintf(stderr,
		        "usage: perfetto-import TP --shape NAME | --trace FILE [--split]\n");
		return 2;
	}
	split = argc == 5;
	tp = env && *env ? env : argv[1];
	if (!tp_runs())
		return EXIT_SKIP;
	if (!o || !mkdtemp(dir)) {
		fail("no temporary directory: %s", strerror(errno));
		goto out;
	}
	have_dir = true;
	if (strcmp(argv[2], "--trace") == 0) {
		snprintf(trace, sizeof(trace), "%s", argv[3]);
	} else {
		int ret = -ENOENT;

		snprintf(trace, sizeof(trace), "%s/in.gtrace", dir);
		if (strcmp(argv[3], "fixture") == 0) {
			static const struct fx_opts fo = {
			        .procs = 2, .iters = 50, .gpu_batch = 4, .kernels = 3};

			ret = fx_write(trace, &fo);
		}
		for (size_t i = 0; i < SHP_SHAPES; i++)
			if (strcmp(shp_shapes[i].name, argv[3]) == 0)
				ret = shp_write(&shp_shapes[i], trace, &want_flows);
		if (ret < 0) {
			fail("shape %s: %s", argv[3], strerror(-ret));
			goto out;
		}
	}
	printf("trace: %s%s\n", argv[3], split ? ", split by ranks" : "");
	if (split) {
		if (oracle_read(trace, o, &r) == 0)
			check_split(trace, dir, o);
		goto out;
	}
	for (int f = 0; f < 2; f++) {
		struct gt_reader *er;
		const char *err = NULL;

		snprintf(x[f].path, sizeof(x[f].path), "%s/out%s", dir, f ? ".pftrace" : ".json");
		if (gt_reader_open(trace, &er, &err) < 0) {
			fail("%s: %s", trace, err ? err : "cannot open");
			goto out;
		}
		if (export_to(er, &x[f]) < 0) {
			gt_reader_close(er);
			goto out;
		}
		gt_reader_close(er);
	}
	if (oracle_read(trace, o, &r) < 0)
		goto out;
	if (want_flows != UINT64_MAX)
		check_u64("shape", "launches with both ends (tests/flow-shapes.h)", o->flows,
		          want_flows);
	for (int f = 0; f < 2; f++)
		check_one(&x[f], o, r);
	for (size_t i = 0; i < NSAME; i++) {
		if (!x[0].same[i] || !x[1].same[i])
			continue;
		if (strcmp(x[0].same[i], x[1].same[i]) != 0) {
			fail("chrome and perfetto differ in %s:\n--- chrome\n%s--- perfetto\n%s",
			     same_what[i], x[0].same[i], x[1].same[i]);
		} else {
			size_t rows = 0;

			for (const char *c = x[0].same[i]; *c; c++)
				rows += *c == '\n';
			printf("ok: same %s in both formats (%zu rows)\n", same_what[i], rows);
		}
	}
out:
	for (int f = 0; f < 2; f++) {
		for (size_t i = 0; i < NSAME; i++)
			free(x[f].same[i]);
		if (have_dir && *x[f].path)
			unlink(x[f].path);
	}
	if (have_dir) {
		if (strcmp(argv[2], "--shape") == 0)
			unlink(trace);
		rmdir(dir);
	}
	if (r)
		gt_reader_close(r);
	if (o) {
		free(o->api.k);
		free(o->gpu.k);
		free(o->stream.k);
		free(o->shown.k);
	}
	free(o);
	printf("%s\n", failures ? "FAILED" : "all checks passed");
	return failures ? EXIT_FAILURE : EXIT_SUCCESS;
}
