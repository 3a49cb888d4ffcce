/* perfetto-import: Perfetto's own importer (trace_processor_shell) judges both timeline
 * exports of one trace. Runs as a meson test (suite `perfetto`), one per trace shape:
 *   perfetto-import TP --shape NAME     a shape of tests/flow-shapes.h, or "fixture"
 *   perfetto-import TP --trace FILE     a recorded trace (tests/data)
 *   ... --split                         instead: the chrome export split by ranks, each
 *                                       rank's file on its own
 * then, optionally, a window (src/ops/window.c) that both exports and the checks go through:
 *   --from T --to T | --nvtx NAME:N..M, --rank R, --expect-edges (the window must cut slices
 *   and leave out arrows whose other end is outside)
 * or perfetto cut into pieces by time (exporters/formats/pieces.c): --pieces BYTES.
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
#include "exporter.h"
#include "flow-shapes.h"
#include "gputrace/trace.h"
#include "window.h"

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
		uint32_t pid, id, python; /* a stack and its Python frames: a slice each */
	} stacks[1024];
	unsigned nstacks;
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

/* The window the exports and the oracle go through; all zero: none. */
static struct gt_window window;
static struct gt_window_stats oracle_window; /* what it did in the oracle's last read */


/* The Python frames of a STACK record, added to its stack's count: each is a python_function
 * slice above every API call and NVTX record that carries the stack. */
static void stack_python(struct oracle *o, const struct gt_rec_stack *st)
{
	unsigned i, n = 0;

	for (unsigned k = 0; k < GT_STACK_FRAMES_PER_REC && st->first + k < st->depth; k++)
		n += st->frames[k].kind == GT_FRAME_PYTHON;
	for (i = 0; i < o->nstacks; i++)
		if (o->stacks[i].pid == st->hdr.pid && o->stacks[i].id == st->stack_id)
			break;
	if (i == o->nstacks) {
		if (o->nstacks == sizeof(o->stacks) / sizeof(o->stacks[0]))
			return;
		o->stacks[o->nstacks].pid = st->hdr.pid;
		o->stacks[o->nstacks].id = st->stack_id;
		o->stacks[o->nstacks++].python = 0;
	}
	o->stacks[i].python += n;
}

static uint64_t python_frames(const struct oracle *o, uint32_t pid, uint32_t id)
{
	for (unsigned i = 0; id && i < o->nstacks; i++)
		if (o->stacks[i].pid == pid && o->stacks[i].id == id)
			return o->stacks[i].python;
	return 0;
}

static int oracle_read(const char *path, struct oracle *o, struct gt_reader **rp)
{
	const union gt_record *rec;
	const char *err = NULL;
	struct gt_reader *r;
	struct gt_window_filter *wf = NULL;
	uint32_t tnames[MAX_THREADS][3]; /* pid, tid, name id of THREAD records */
	unsigned ntnames = 0;
	int ret;

	memset(o, 0, sizeof(*o));
	ret = gt_reader_open(path, &r, &err);
	if (ret < 0) {
		fail("%s: %s", path, err ? err : strerror(-ret));
		return ret;
	}
	if (gt_window_any(&window) && gt_window_open(r, &window, &wf) < 0) {
		fail("%s: cannot open the window", path);
		gt_reader_close(r);
		return -EINVAL;
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
		case GT_REC_STACK:
			stack_python(o, &rec->stack);
			break;
		case GT_REC_API:
			o->slices += 1 + python_frames(o, pid, rec->api.stack_id);
			set_add(&o->shown, (uint64_t)pid + 1);
			add_thread(o, pid, rec->api.tid, false);
			if (rec->api.correlation_id &&
			    set_add(&o->api, (uint64_t)pid << 32 | rec->api.correlation_id) &&
			    set_has(&o->gpu, (uint64_t)pid << 32 | rec->api.correlation_id))
				o->flows++;
			break;
		case GT_REC_NVTX:
			o->slices += 1 + python_frames(o, pid, rec->nvtx.stack_id);
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
	if (wf)
		gt_window_stats(wf, &oracle_window);
	gt_window_close(wf);
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

/* NOT_ZERO: every slice but the exporters' "trace start" at the trace's zero (check_zero). */
#define NOT_ZERO "coalesce(category, '') != 'trace'"
/* NOT_OP: a flow's start o that is no PyTorch operator: the arrows from operators to their
 * launches' GPU work (perfetto only) are checked on their own (check_op_flows) */
#define NOT_OP "coalesce(o.category, '') != 'cpu_op'"

static const char *scalars_sql =
        "select (select count(*) from slice where " NOT_ZERO "), (select count(*) from flow f"
        "   join slice o on o.id = f.slice_out where " NOT_OP "),"
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
        /* pid 0: the thread the JSON importer makes for global instants */
        "select p.pid, t.tid, t.name from thread t join process p using (upid)"
        " where t.utid != 0 and p.pid != 0 order by 1, 2",
        "select category, count(*) from slice group by 1 order by 1",
        /* track names differ: the JSON importer appends the arg's name ("... bytes") */
        "select p.pid, count(*), sum(c.value) from counter c join process_counter_track t"
        " on c.track_id = t.id join process p using (upid) group by 1 order by 1",
        "select ot.tid, o.ts - b.t0, o.name, it.tid, i.ts - b.t0, i.name from flow f"
        " join (select min(ts) t0 from slice) b"
        " join slice o on o.id = f.slice_out join slice i on i.id = f.slice_in"
        " join thread_track ott on ott.id = o.track_id join thread ot on ot.utid = ott.utid"
        " join thread_track itt on itt.id = i.track_id join thread it on it.utid = itt.utid"
        " where " NOT_OP " order by 2, 5, 1, 4",
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

/* The trace's zero (docs/cli.md, "Time"), read here through the library. */
static uint64_t zero_of(struct gt_reader *r)
{
	struct gt_trace_times tt;

	if (gt_reader_times(r, &tt) < 0) {
		fail("gt_reader_times failed");
		return 0;
	}
	return tt.zero_ns;
}

/* Time 0 of a file's timestamps as the importer shows them: the JSON's are relative to the
 * trace's zero, the protobuf's are the trace clock's. */
static uint64_t base_of(const char *fmt, struct gt_reader *r)
{
	return strcmp(fmt, "chrome") == 0 ? zero_of(r) : 0;
}

/* Perfetto's ruler starts at the trace's zero: the importer's trace bounds start there, where
 * the one "trace start" instant is, whatever part of the trace the file holds. */
static void check_zero(const char *fmt, const char *path, struct gt_reader *r, bool json)
{
	char sql[256];
	uint64_t zero = json ? 0 : zero_of(r);

	check_u64(fmt, "trace_bounds.start_ts = the trace's zero",
	          query_u64(path, "select start_ts from trace_bounds"), zero);
	snprintf(sql, sizeof(sql),
	         "select count(*) from slice where category = 'trace' and name = 'trace start'"
	         " and ts = %llu and dur = 0",
	         (unsigned long long)zero);
	check_u64(fmt, "one 'trace start' at the zero", query_u64(path, sql), 1);
	check_u64(fmt, "nothing else in category 'trace'",
	          query_u64(path, "select count(*) from slice where category = 'trace'"), 1);
}

/* Every slice, instant and counter value of `path` lies in [from, to], and no flow was left
 * half-drawn (the importer's flow_* stats). */
static void check_inside(const char *fmt, const char *path, struct gt_reader *r, uint64_t from,
                         uint64_t to)
{
	char sql[512];
	uint64_t base = base_of(fmt, r);

	snprintf(sql, sizeof(sql),
	         "select count(*) from slice where " NOT_ZERO
	         " and (ts + %llu < %llu or ts + dur + %llu > %llu or dur < 0)",
	         (unsigned long long)base, (unsigned long long)from, (unsigned long long)base,
	         (unsigned long long)to);
	check_u64(fmt, "slices outside the window", query_u64(path, sql), 0);
	snprintf(sql, sizeof(sql),
	         "select count(*) from counter where ts + %llu < %llu or ts + %llu >= %llu",
	         (unsigned long long)base, (unsigned long long)from, (unsigned long long)base,
	         (unsigned long long)to);
	check_u64(fmt, "counter values outside the window", query_u64(path, sql), 0);
	check_u64(fmt, "flows left half-drawn (stats flow_*)",
	          query_u64(path, "select count(*) from stats where name glob 'flow_*' and"
	                          " value > 0"),
	          0);
}

/* The arrows from PyTorch operators (docs/exporters.md, "PyTorch operators"): each ends at
 * GPU work whose launch (the call its own arrow starts at) began inside the operator, in
 * its process; and every GPU work whose launch began inside an operator has one. */
static void check_op_flows(const char *fmt, const char *path)
{
	static const char *const inside =
	        " a.category in ('cuda_runtime', 'cuda_driver') and a.ts >= o.ts and a.ts <="
	        " o.ts + o.dur and (select upid from thread_track tt join thread t using (utid)"
	        " where tt.id = a.track_id) = (select upid from thread_track tt join thread t"
	        " using (utid) where tt.id = o.track_id)";
	char sql[2048];
	uint64_t n = query_u64(path, "select count(*) from flow f join slice o on o.id ="
	                             " f.slice_out where o.category = 'cpu_op'");

	snprintf(sql, sizeof(sql),
	         "select count(*) from flow f join slice o on o.id = f.slice_out join flow g on"
	         " g.slice_in = f.slice_in join slice a on a.id = g.slice_out where o.category ="
	         " 'cpu_op' and%s",
	         inside);
	check_u64(fmt, "operator arrows to the work of a launch made inside the operator",
	          query_u64(path, sql), n);
	snprintf(sql, sizeof(sql),
	         "select count(distinct g.slice_in) from flow g join slice a on a.id = g.slice_out"
	         " where exists (select 1 from slice o where o.category = 'cpu_op' and%s)",
	         inside);
	check_u64(fmt, "operator arrows = GPU work launched inside an operator",
	          query_u64(path, sql), n);
}

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
	check_zero(x->fmt, x->path, r, strcmp(x->fmt, "chrome") == 0);
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
	if (strcmp(x->fmt, "perfetto") == 0)
		check_op_flows(x->fmt, x->path);
	for (size_t i = 0; i < NSAME; i++)
		x->same[i] = query(x->path, same_sql[i]);
	if (gt_window_timed(&window))
		check_inside(x->fmt, x->path, r, window.from_ns,
		             window.to_ns ? window.to_ns : UINT64_MAX / 2);

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
				n += snprintf(want + n, sizeof(want) - (size_t)n, " on %.64s",
				              host);
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
	int ret =
	        gt_export_window(gt_exporter_find(x->fmt), r, &window, &opts, &x->res, &err, NULL);

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
	ret = gt_export_run(gt_exporter_find("chrome"), r, &opts, &res, &err);
	if (ret < 0) {
		fail("export --split ranks: %s", err ? err : strerror(-ret));
		gt_reader_close(r);
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
		check_zero(what, path, r, true);
		check_u64(what, "slices = drawn records of its processes", v[0], slices);
		check_u64(what, "flows = its launches with both ends", v[1], flows);
		check_u64(what, "counter values = its memory and pool records", v[2], counters);
		unlink(path);
	}
	rmdir(out);
	gt_reader_close(r);
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

/* Launches recorded whole in the trace (call and GPU work) of which the window keeps exactly
 * one end: the arrows it must leave out. */
static uint64_t edge_pairs(const char *path)
{
	struct set all_api = {0}, all_gpu = {0}, in_api = {0}, in_gpu = {0};
	struct gt_window_filter *wf = NULL;
	const union gt_record *rec;
	struct gt_reader *r;
	uint64_t edges = 0;

	if (gt_reader_open(path, &r, NULL) < 0)
		return 0;
	for (int pass = 0; pass < 2; pass++) {
		struct set *api = pass ? &in_api : &all_api, *gpu = pass ? &in_gpu : &all_gpu;

		if (pass && gt_window_open(r, &window, &wf) < 0)
			break;
		while (gt_reader_next(r, &rec) > 0) {
			const struct gt_gpu_span *sp = NULL;

			switch (rec->hdr.type) {
			case GT_REC_API:
				if (rec->api.correlation_id)
					set_add(api, (uint64_t)rec->hdr.pid << 32 |
					                     rec->api.correlation_id);
				break;
			case GT_REC_KERNEL:
				sp = &rec->kernel.span;
				break;
			case GT_REC_MEMCPY:
				sp = &rec->memcpy.span;
				break;
			case GT_REC_MEMSET:
				sp = &rec->memset.span;
				break;
			case GT_REC_GRAPH:
				sp = &rec->graph.span;
				break;
			default:
				break;
			}
			if (sp && sp->start_ns && sp->correlation_id)
				set_add(gpu, (uint64_t)rec->hdr.pid << 32 | sp->correlation_id);
		}
	}
	gt_window_close(wf);
	gt_reader_close(r);
	for (size_t i = 0; i < in_api.cap; i++)
		if (in_api.k[i] && set_has(&all_gpu, in_api.k[i]) && !set_has(&in_gpu, in_api.k[i]))
			edges++;
	for (size_t i = 0; i < in_gpu.cap; i++)
		if (in_gpu.k[i] && set_has(&all_api, in_gpu.k[i]) && !set_has(&in_api, in_gpu.k[i]))
			edges++;
	free(all_api.k);
	free(all_gpu.k);
	free(in_api.k);
	free(in_gpu.k);
	return edges;
}

/* ---- perfetto cut into pieces by time ---------------------------------------------------- */

#define MAX_PIECES 256

struct piece {
	char path[4200];
	uint64_t from, to;
};

struct pieces {
	struct piece p[MAX_PIECES];
	unsigned n;
};

static void on_piece(void *ctx, const char *path, uint64_t from, uint64_t to)
{
	struct pieces *ps = ctx;

	if (ps->n < MAX_PIECES) {
		snprintf(ps->p[ps->n].path, sizeof(ps->p[0].path), "%s", path);
		ps->p[ps->n].from = from;
		ps->p[ps->n++].to = to;
	}
}

/* In how many pieces a record of the trace shows as a slice or instant, by the rules of
 * docs/cli.md ("Windows"), counted here apart from src/ops/window.c. */
static uint64_t pieces_of(const struct pieces *ps, const union gt_record *rec)
{
	uint64_t s = 0, e = 0, n = 0;
	bool carried = false, instant = false;

	switch (rec->hdr.type) {
	case GT_REC_API:
	case GT_REC_NVTX:
	case GT_REC_OVERHEAD:
	case GT_REC_KERNEL:
	case GT_REC_MEMCPY:
	case GT_REC_MEMSET:
	case GT_REC_GRAPH:
	case GT_REC_SYNC:
		/* all of these have [start, end] right after the header */
		memcpy(&s, (const uint8_t *)rec + sizeof(rec->hdr), 8);
		memcpy(&e, (const uint8_t *)rec + sizeof(rec->hdr) + 8, 8);
		instant = e <= s;
		break;
	case GT_REC_LOSS:
	case GT_REC_NOTICE:
	case GT_REC_PROCESS_END:
		memcpy(&s, (const uint8_t *)rec + sizeof(rec->hdr), 8);
		instant = true;
		break;
	case GT_REC_MEMORY_POOL:
		s = rec->memory_pool.ts_ns; /* an instant, and carried into later pieces */
		carried = true;
		break;
	default:
		return 0;
	}
	if (!s)
		return 0;
	for (unsigned i = 0; i < ps->n; i++) {
		const struct piece *p = &ps->p[i];

		if (carried)
			n += s < p->to;
		else if (instant)
			n += s >= p->from && s < p->to;
		else
			n += s < p->to && e > p->from;
	}
	return n;
}

static void oracle_free(struct oracle *o)
{
	free(o->api.k);
	free(o->gpu.k);
	free(o->stream.k);
	free(o->shown.k);
	memset(o, 0, sizeof(*o));
}

static void check_pieces(const char *trace, const char *dir, uint64_t bytes)
{
	struct pieces *ps = calloc(1, sizeof(*ps));
	struct gt_export_options opts = {.demangle = 1, .max_bytes = bytes, .on_file = on_piece};
	struct gt_export_result res = {0};
	struct oracle *o = calloc(1, sizeof(*o));
	const union gt_record *rec;
	struct gt_reader *r = NULL;
	const char *err = NULL;
	char out[4200], sql[256];
	uint64_t imported = 0, expected = 0;

	opts.file_ctx = ps;
	snprintf(out, sizeof(out), "%s/split.pftrace", dir);
	opts.output = out;
	if (!ps || !o || gt_reader_open(trace, &r, &err) < 0) {
		fail("%s: %s", trace, err ? err : "cannot open");
		goto out;
	}
	if (gt_export_window(gt_exporter_find("perfetto"), r, NULL, &opts, &res, &err, NULL) < 0) {
		fail("split export: %s", err ? err : "?");
		goto out;
	}
	check_u64("split", "files written = pieces reported", res.files, ps->n);
	if (ps->n < 2)
		fail("split: %u piece(s) of at most %llu bytes; the test needs at least 2", ps->n,
		     (unsigned long long)bytes);
	for (unsigned i = 0; i < ps->n; i++) {
		const struct piece *p = &ps->p[i];
		struct gt_reader *pr = NULL;
		char what[64], *rows;
		uint64_t v[4] = {0};
		char *c;
		FILE *f = fopen(p->path, "rb");
		long size = -1;

		if (f && fseek(f, 0, SEEK_END) == 0)
			size = ftell(f);
		if (f)
			fclose(f);
		snprintf(what, sizeof(what), "piece %u", i);
		if (size < 0 || (uint64_t)size > bytes)
			fail("%s: %s is %ld bytes, more than %llu", what, p->path, size,
			     (unsigned long long)bytes);
		if (i && p->from != ps->p[i - 1].to)
			fail("%s starts at %llu, not where piece %u ends", what,
			     (unsigned long long)p->from, i - 1);
		window = (struct gt_window){.from_ns = p->from, .to_ns = p->to};
		oracle_free(o);
		if (oracle_read(trace, o, &pr) < 0)
			break;
		rows = query(p->path,
		             "select (select count(*) from slice where " NOT_ZERO "), (select"
		             " count(*) from"
		             " flow), (select count(*) from counter), (select count(*) from"
		             " stats where severity in ('error', 'data_loss') and value > 0)");
		c = rows;
		for (int k = 0; k < 4 && c; k++) {
			v[k] = strtoull(c, &c, 10);
			c = strchr(c, ',') ? strchr(c, ',') + 1 : NULL;
		}
		free(rows);
		check_u64(what, "import errors and data losses (stats)", v[3], 0);
		check_u64(what, "slices = drawn records of its window", v[0], o->slices);
		check_u64(what, "flows = launches with both ends in it", v[1], o->flows);
		check_u64(what, "counter values = memory and pool records", v[2], o->counters);
		check_inside(what, p->path, pr, p->from, p->to);
		check_zero(what, p->path, pr, false);
		snprintf(sql, sizeof(sql), "select count(*) from process where pid != 0");
		if (query_u64(p->path, sql) == 0)
			fail("%s: no process names", what);
		imported += v[0];
		gt_reader_close(pr);
	}
	window = (struct gt_window){0};
	/* together: every slice of the trace, once per piece it reaches */
	gt_reader_rewind(r);
	while (gt_reader_next(r, &rec) > 0)
		expected += pieces_of(ps, rec);
	check_u64("split", "slices of all pieces = the trace's, once per piece each reaches",
	          imported, expected);
out:
	for (unsigned i = 0; ps && i < ps->n; i++)
		unlink(ps->p[i].path);
	gt_reader_close(r);
	if (o)
		oracle_free(o);
	free(ps);
	free(o);
}

int main(int argc, char **argv)
{
	struct exported x[2] = {{.fmt = "chrome"}, {.fmt = "perfetto"}};
	char dir[] = "/tmp/gt-import-XXXXXX", trace[4200];
	const char *env = getenv("GPUTRACE_PERFETTO_TP");
	struct oracle *o = calloc(1, sizeof(*o));
	struct gt_reader *r = NULL;
	uint64_t want_flows = UINT64_MAX, pieces = 0;
	bool have_dir = false, expect_edges = false, split = false;
	const char *from = NULL, *to = NULL, *nvtx = NULL;

	if (argc < 4 || (strcmp(argv[2], "--shape") != 0 && strcmp(argv[2], "--trace") != 0)) {
		fprintf(stderr,
		        "usage: perfetto-import TP --shape NAME | --trace FILE [--from T "
		        "--to T | --nvtx SPEC] [--rank R] [--expect-edges] [--pieces BYTES] "
		        "[--split]\n");
		free(o);
		return 2;
	}
	for (int i = 4; i < argc; i++) {
		const char *v = i + 1 < argc ? argv[i + 1] : "";

		if (strcmp(argv[i], "--expect-edges") == 0) {
			expect_edges = true;
			continue;
		}
		if (strcmp(argv[i], "--split") == 0) {
			split = true;
			continue;
		}
		i++;
		if (strcmp(argv[i - 1], "--from") == 0)
			from = v;
		else if (strcmp(argv[i - 1], "--to") == 0)
			to = v;
		else if (strcmp(argv[i - 1], "--nvtx") == 0)
			nvtx = v;
		else if (strcmp(argv[i - 1], "--rank") == 0)
			gt_window_parse_ids(v, true, window.ranks, &window.nranks);
		else if (strcmp(argv[i - 1], "--pieces") == 0)
			pieces = strtoull(v, NULL, 10);
		else {
			fprintf(stderr, "perfetto-import: unknown option %s\n", argv[i - 1]);
			free(o);
			return 2;
		}
	}
	tp = env && *env ? env : argv[1];
	if (!tp_runs()) {
		free(o);
		return EXIT_SKIP;
	}
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
	if (pieces) {
		check_pieces(trace, dir, pieces);
		goto out;
	}
	if (from || to || nvtx) {
		struct gt_reader *wr;
		uint64_t origin;
		int ret = gt_reader_open(trace, &wr, NULL);

		if (ret < 0) {
			fail("%s: cannot open", trace);
			goto out;
		}
		{
			struct gt_trace_times tt = {0};

			ret = gt_reader_times(wr, &tt);
			origin = tt.zero_ns;
		}
		if (ret == 0 && from)
			ret = gt_window_parse_time(from, gt_reader_header(wr), origin, 0,
			                           &window.from_ns);
		if (ret == 0 && to)
			ret = gt_window_parse_time(to, gt_reader_header(wr), origin, window.from_ns,
			                           &window.to_ns);
		if (ret == 0 && nvtx) {
			struct gt_nvtx_spec spec;
			struct gt_nvtx_found f;

			ret = gt_window_parse_nvtx(nvtx, &spec);
			if (ret == 0)
				ret = gt_window_find_nvtx(wr, &window, &spec, &f);
			if (ret == 0 && !f.ranges)
				ret = -ENOENT;
			window.from_ns = f.from_ns;
			window.to_ns = f.to_ns;
		}
		gt_reader_close(wr);
		if (ret < 0) {
			fail("the window: %s", strerror(-ret));
			goto out;
		}
		printf("window: %llu .. %llu ns\n", (unsigned long long)window.from_ns,
		       (unsigned long long)window.to_ns);
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
	if (expect_edges) {
		uint64_t edges = edge_pairs(trace);

		printf("window: %llu slices cut at an edge, %llu arrows left out at an edge\n",
		       (unsigned long long)oracle_window.clipped, (unsigned long long)edges);
		if (!oracle_window.clipped || !edges)
			fail("the window should cut slices and leave arrows out at its edges");
	}
	if (want_flows != UINT64_MAX && !gt_window_any(&window))
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
