/* Check suite for the injection library's parts that run without a GPU: its exported symbols,
 * NVTX through NVTX_INJECTION64_PATH, detaching, and the CUPTI start against a fake CUPTI (the
 * GPUTRACE_* parser has its own suite, envconf).
 * Runs in the test process; GT_INJECT_LIB names the built libgputrace-inject.so. */
#include <check.h>
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <glob.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <nvtx3/nvToolsExt.h>

#include "clock.h"
#include "cupti-glue.h"
#include "cuptilib.h"
#include "gputrace/trace.h"
#include "inject.h"

/* The library exports exactly its two entry points: it runs inside other programs. */
START_TEST(exports)
{
	const char *lib = getenv("GT_INJECT_LIB");
	char cmd[1024], line[512], found[8][160];
	int n = 0, st;
	FILE *p;

	ck_assert_msg(lib && *lib, "GT_INJECT_LIB not set");
	snprintf(cmd, sizeof(cmd), "nm -D --defined-only '%s'", lib);
	p = popen(cmd, "r");
	ck_assert_ptr_nonnull(p);
	while (fgets(line, sizeof(line), p)) {
		char addr[64], type[8], name[128];

		if (sscanf(line, "%63s %7s %127s", addr, type, name) == 3 && n < 8)
			snprintf(found[n++], sizeof(found[0]), "%s %s", type, name);
	}
	st = pclose(p);
	ck_assert_int_eq(st, 0);
	ck_assert_int_eq(n, 2);
	ck_assert_str_eq(found[0], "T InitializeInjection");
	ck_assert_str_eq(found[1], "T InitializeInjectionNvtx2");
}
END_TEST

/* A standalone trace from a child process: `child` runs in a forked process with the library
 * as its NVTX injection, `name` in a fresh directory as its output and `buffer_size` as
 * GPUTRACE_BUFFER_SIZE (NULL: the default), and must exit 0; the trace is then open in `r`. */
struct child_trace {
	char dir[32], out[64];
	pid_t pid;
	struct gt_reader *r;
};

static void child_trace_run(struct child_trace *t, const char *name, void (*child)(void),
                            const char *buffer_size)
{
	const char *lib = getenv("GT_INJECT_LIB");
	int status;

	ck_assert_ptr_nonnull(lib);
	snprintf(t->dir, sizeof(t->dir), "/tmp/gt-inject-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(t->dir));
	snprintf(t->out, sizeof(t->out), "%s/%s", t->dir, name);
	t->pid = fork();
	ck_assert_int_ge(t->pid, 0);
	if (t->pid == 0) {
		setenv("NVTX_INJECTION64_PATH", lib, 1);
		setenv("GPUTRACE_OUTPUT", t->out, 1);
		if (buffer_size)
			setenv("GPUTRACE_BUFFER_SIZE", buffer_size, 1);
		unsetenv("GPUTRACE_SESSION");
		child();
		exit(0);
	}
	ck_assert_int_eq(waitpid(t->pid, &status, 0), t->pid);
	ck_assert(WIFEXITED(status));
	ck_assert_int_eq(WEXITSTATUS(status), 0);
	ck_assert_int_eq(gt_reader_open(t->out, &t->r, NULL), 0);
}

static void child_trace_end(struct child_trace *t)
{
	gt_reader_close(t->r);
	unlink(t->out);
	rmdir(t->dir);
}

/* NVTX needs no GPU: a child process loads the library through NVTX_INJECTION64_PATH, makes
 * known NVTX calls and exits; its standalone trace must hold exactly those ranges. */
static nvtxRangeId_t handoff;

static void *end_handoff(void *arg)
{
	(void)arg;
	nvtxRangePushA("in-thread");
	nvtxRangeEnd(handoff);
	nvtxRangePop();
	return NULL;
}

static void nvtx_child(void)
{
	nvtxEventAttributes_t a;
	nvtxDomainHandle_t dom;
	pthread_t th;
	int i;

	for (i = 0; i < 3; i++) {
		if (nvtxRangePushA("outer") != 0)
			_exit(3);
		if (nvtxRangePushA("inner") != 1)
			_exit(4);
		nvtxRangePop();
		nvtxRangePop();
	}
	nvtxMarkA("tick");
	handoff = nvtxRangeStartA("handoff");
	pthread_create(&th, NULL, end_handoff, NULL);
	pthread_join(th, NULL);
	dom = nvtxDomainCreateA("gtdomain");
	memset(&a, 0, sizeof(a));
	a.version = NVTX_VERSION;
	a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
	a.category = 7;
	a.colorType = NVTX_COLOR_ARGB;
	a.color = 0xff00ff00u;
	a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
	a.message.registered = nvtxDomainRegisterStringA(dom, "registered-msg");
	nvtxDomainRangePushEx(dom, &a);
	nvtxRangePushA("default-inside-domain");
	nvtxDomainRangePop(dom); /* pops the domain's range, not the default one above it */
	nvtxRangePop();
	exit(0);
}

START_TEST(nvtx_standalone)
{
	struct child_trace t;
	const union gt_record *rec;
	struct gt_reader *r;
	unsigned outer = 0, inner = 0, ticks = 0, handoff_n = 0, dom_n = 0, inside = 0, ends = 0;
	unsigned processes = 0, in_thread = 0;
	uint32_t main_tid = 0, thread_tid = 0;
	int ret;

	child_trace_run(&t, "nvtx.gtrace", nvtx_child, NULL);
	r = t.r;
	while ((ret = gt_reader_next(r, &rec)) > 0) {
		const struct gt_rec_nvtx *n = &rec->nvtx;
		const char *msg;

		if (rec->hdr.type == GT_REC_PROCESS) {
			processes++;
			ck_assert_uint_eq(rec->hdr.pid, (uint32_t)t.pid);
		}
		if (rec->hdr.type == GT_REC_PROCESS_END) {
			ends++;
			ck_assert_uint_eq(rec->process_end.how, GT_END_EXIT);
			ck_assert_int_eq(rec->process_end.code, 0);
		}
		if (rec->hdr.type != GT_REC_NVTX)
			continue;
		msg = gt_reader_string(r, n->message_id, NULL);
		ck_assert_ptr_nonnull(msg);
		if (!strcmp(msg, "outer")) {
			ck_assert_uint_eq(n->kind, GT_NVTX_PUSH_POP);
			ck_assert_uint_eq(n->depth, 0);
			main_tid = n->tid;
			outer++;
		} else if (!strcmp(msg, "inner")) {
			ck_assert_uint_eq(n->depth, 1);
			ck_assert_uint_le(n->start_ns, n->end_ns);
			inner++;
		} else if (!strcmp(msg, "tick")) {
			ck_assert_uint_eq(n->kind, GT_NVTX_MARK);
			ck_assert_uint_eq(n->start_ns, n->end_ns);
			ticks++;
		} else if (!strcmp(msg, "in-thread")) {
			thread_tid = n->tid;
			in_thread++;
		} else if (!strcmp(msg, "handoff")) {
			ck_assert_uint_eq(n->kind, GT_NVTX_START_END);
			ck_assert_uint_ne(n->range_id, 0);
			handoff_n++;
		} else if (!strcmp(msg, "registered-msg")) {
			ck_assert_str_eq(gt_reader_string(r, n->domain_id, NULL), "gtdomain");
			ck_assert_uint_eq(n->color, 0xff00ff00u);
			ck_assert_uint_eq(n->category, 7);
			ck_assert_uint_eq(n->depth, 0);
			dom_n++;
		} else if (!strcmp(msg, "default-inside-domain")) {
			ck_assert_uint_eq(n->domain_id, 0);
			ck_assert_uint_eq(n->depth, 0);
			inside++;
		} else {
			ck_abort_msg("unexpected NVTX message '%s'", msg);
		}
	}
	ck_assert_int_eq(ret, 0);
	ck_assert_uint_eq(processes, 1);
	ck_assert_uint_eq(ends, 1);
	ck_assert_uint_eq(outer, 3);
	ck_assert_uint_eq(inner, 3);
	ck_assert_uint_eq(ticks, 1);
	ck_assert_uint_eq(in_thread, 1);
	ck_assert_uint_eq(handoff_n, 1);
	ck_assert_uint_eq(dom_n, 1);
	ck_assert_uint_eq(inside, 1);
	ck_assert_uint_ne(main_tid, thread_tid);
	/* the start/end range was opened on the main thread and closed on the other */
	gt_reader_rewind(r);
	while (gt_reader_next(r, &rec) > 0) {
		if (rec->hdr.type == GT_REC_NVTX && rec->nvtx.kind == GT_NVTX_START_END) {
			ck_assert_uint_eq(rec->nvtx.tid, main_tid);
			ck_assert_uint_eq(rec->nvtx.end_tid, thread_tid);
		}
	}
	child_trace_end(&t);
}
END_TEST

/* Staging under load: 8 threads x 5000 ranges, each thread exiting when done (its stage
 * published by its TLS destructor), 2000 more on the main thread, and 5 left staged at exit
 * (published by the exit flush): every range once, none lost, none twice. */
static void *stage_worker(void *arg)
{
	(void)arg;
	for (int i = 0; i < 5000; i++) {
		nvtxRangePushA("w");
		nvtxRangePop();
	}
	return NULL;
}

static void stage_child(void)
{
	pthread_t th[8];

	nvtxMarkA("start"); /* loads the library before the threads race to */
	for (int t = 0; t < 8; t++)
		pthread_create(&th[t], NULL, stage_worker, NULL);
	for (int i = 0; i < 2005; i++) {
		nvtxRangePushA("m");
		nvtxRangePop();
	}
	for (int t = 0; t < 8; t++)
		pthread_join(th[t], NULL);
	exit(0);
}

START_TEST(nvtx_staged_threads)
{
	struct child_trace t;
	const union gt_record *rec;
	struct gt_reader *r;
	unsigned w = 0, m = 0, other = 0, losses = 0;
	int ret;

	child_trace_run(&t, "stage.gtrace", stage_child, "64M");
	r = t.r;
	while ((ret = gt_reader_next(r, &rec)) > 0) {
		const char *msg;

		if (rec->hdr.type == GT_REC_LOSS)
			losses++;
		if (rec->hdr.type != GT_REC_NVTX)
			continue;
		msg = gt_reader_string(r, rec->nvtx.message_id, NULL);
		if (msg && strcmp(msg, "w") == 0)
			w++;
		else if (msg && strcmp(msg, "m") == 0)
			m++;
		else
			other++;
	}
	ck_assert_int_eq(ret, 0);
	ck_assert_uint_eq(w, 8 * 5000);
	ck_assert_uint_eq(m, 2005);
	ck_assert_uint_eq(other, 1); /* the mark */
	ck_assert_uint_eq(losses, 0);
	child_trace_end(&t);
}
END_TEST

/* The message cache keys on the caller's pointer and compares the text: one buffer reused for
 * texts that differ only in their last byte, around the 8-byte word boundaries, shorter after
 * longer, and at the very end of a page followed by an inaccessible one (the byte-by-byte
 * path; reading past the terminator there would fault). Every range must carry the text its
 * buffer held when it was pushed. */
static const char *const cache_texts[] = {
        "abcdefg",
        "abcdefh",
        "abcdefgh",
        "abcdefghij", /* the cached text's terminator, on the next word, tells these apart */
        "abcdefgh",
        "abcdefgi",
        "abcdefghijklmno",
        "abcdefghijklmnp",
        "abcdefghijklmnop",
        "abcdefghijklmnopq",
        "abcdefghijklmnoq",
        "abc",
        "abcdefghijklmnop",
        "abcdefghijklmnop",
        "x",
        "",
};
static const char *const cache_tail_texts[] = {"tail1", "tail1", "tail2", "tai", "tail2"};
#define CACHE_N      (sizeof(cache_texts) / sizeof(cache_texts[0]))
#define CACHE_TAIL_N (sizeof(cache_tail_texts) / sizeof(cache_tail_texts[0]))

static void cache_child(void)
{
	long page = sysconf(_SC_PAGESIZE);
	char *map, *mid, *tail;
	size_t i;

	map = mmap(NULL, 2 * (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
	           0);
	if (map == MAP_FAILED || mprotect(map + page, (size_t)page, PROT_NONE) != 0)
		exit(3);
	mid = map + 1000; /* every text and the words read after it lie on this page */
	for (i = 0; i < CACHE_N; i++) {
		memset(mid, 'z', 64); /* no stray terminator after the text */
		strcpy(mid, cache_texts[i]);
		nvtxRangePushA(mid);
		nvtxRangePop();
	}
	tail = map + page - 6; /* room for "tail1" and its terminator, the page's last byte */
	for (i = 0; i < CACHE_TAIL_N; i++) {
		strcpy(tail, cache_tail_texts[i]);
		nvtxRangePushA(tail);
		nvtxRangePop();
	}
	exit(0);
}

START_TEST(nvtx_message_cache)
{
	struct child_trace t;
	const union gt_record *rec;
	struct gt_reader *r;
	size_t n = 0;
	int ret;

	child_trace_run(&t, "cache.gtrace", cache_child, NULL);
	r = t.r;
	/* one thread's records keep their order */
	while ((ret = gt_reader_next(r, &rec)) > 0) {
		const char *want, *msg;

		if (rec->hdr.type != GT_REC_NVTX)
			continue;
		ck_assert_uint_lt(n, CACHE_N + CACHE_TAIL_N);
		want = n < CACHE_N ? cache_texts[n] : cache_tail_texts[n - CACHE_N];
		msg = gt_reader_string(r, rec->nvtx.message_id, NULL);
		ck_assert_msg(msg && strcmp(msg, want) == 0, "range %zu: '%s', want '%s'", n,
		              msg ? msg : "(none)", want);
		n++;
	}
	ck_assert_int_eq(ret, 0);
	ck_assert_uint_eq(n, CACHE_N + CACHE_TAIL_N);
	child_trace_end(&t);
}
END_TEST

/* NVTX from a signal handler on the thread it interrupts: a timer fires every 20 us while the
 * thread pushes and pops 500,000 ranges, and the handler records an unnamed range of its
 * own. A handler that interrupts a pop between taking its stage entry and committing it must
 * not take the same entry (the program crashed on a stage count that went backwards, or
 * published old entries again): every range of both is recorded once. */
#define SIG_PAIRS 500000
static volatile sig_atomic_t sig_ranges;

static void on_alarm(int sig)
{
	(void)sig;
	nvtxRangePushA(NULL);
	nvtxRangePop();
	sig_ranges++;
}

static void signal_child(void)
{
	struct itimerval every = {{0, 20}, {0, 20}}, off = {{0, 0}, {0, 0}};
	struct sigaction sa;
	char note[64];

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sa.sa_flags = SA_RESTART;
	nvtxMarkA("start"); /* loads the library and makes this thread's state */
	if (sigaction(SIGALRM, &sa, NULL) != 0 || setitimer(ITIMER_REAL, &every, NULL) != 0)
		exit(3);
	for (int i = 0; i < SIG_PAIRS; i++) {
		nvtxRangePushA("m");
		nvtxRangePop();
	}
	setitimer(ITIMER_REAL, &off, NULL);
	snprintf(note, sizeof(note), "signals %d", (int)sig_ranges);
	nvtxMarkA(note);
	exit(0);
}

START_TEST(nvtx_signal_reentry)
{
	struct child_trace t;
	const union gt_record *rec;
	struct gt_reader *r;
	unsigned long m = 0, unnamed = 0, losses = 0, sigs = 0;
	int ret;

	child_trace_run(&t, "signal.gtrace", signal_child, "256M");
	r = t.r;
	while ((ret = gt_reader_next(r, &rec)) > 0) {
		const char *msg;

		if (rec->hdr.type == GT_REC_LOSS)
			losses += rec->loss.count;
		if (rec->hdr.type != GT_REC_NVTX)
			continue;
		if (rec->nvtx.message_id == GT_STRING_NONE) {
			unnamed++;
			continue;
		}
		msg = gt_reader_string(r, rec->nvtx.message_id, NULL);
		ck_assert_ptr_nonnull(msg);
		if (strcmp(msg, "m") == 0)
			m++;
		else
			ck_assert_int_eq(sscanf(msg, "signals %lu", &sigs) == 1 ||
			                         strcmp(msg, "start") == 0,
			                 1);
	}
	ck_assert_int_eq(ret, 0);
	ck_assert_uint_eq(losses, 0);
	ck_assert_uint_gt(sigs, 100); /* the timer did interrupt the loop */
	ck_assert_uint_eq(m, SIG_PAIRS);
	ck_assert_uint_eq(unnamed, sigs);
	child_trace_end(&t);
}
END_TEST

/* A thread's first NVTX call in a signal handler, and handlers that interrupt a thread
 * while it makes its state. 64 threads, each signalled by its own timer every 20-55 us, first
 * 0-4 us after it is set (just before the thread's first NVTX call), push and pop 200 ranges;
 * each handler pushes and pops one range. A handler's first call makes the thread's state,
 * from mmap and a lock-free registry slot (until the fifth session it took malloc and the
 * registry's lock there, which the call it interrupted could hold: a window too narrow for
 * any run of this test to catch). A handler that interrupts the making of the state is not
 * recorded and is counted as a loss: one to four a run on the CI VM. The main thread nests
 * 130 ranges: the two past the 128 kept are counted too. Every range is recorded or counted,
 * exactly. */
#define FIRST_THREADS 64
#define FIRST_PAIRS   200
static atomic_ulong first_handler_calls;

static void on_first(int sig)
{
	(void)sig;
	nvtxRangePushA("h");
	nvtxRangePop();
	atomic_fetch_add(&first_handler_calls, 1);
}

static void *first_worker(void *arg)
{
	long i = (long)arg;
	struct itimerspec every = {{0, 20000 + (i % 8) * 5000}, {0, 1 + (i % 9) * 500}};
	struct sigevent sev;
	timer_t timer;

	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = SIGUSR1;
	sev._sigev_un._tid = gettid(); /* sigev_notify_thread_id, which glibc 2.36 does not name */
	if (timer_create(CLOCK_MONOTONIC, &sev, &timer) != 0 ||
	    timer_settime(timer, 0, &every, NULL) != 0)
		exit(3);
	for (int k = 0; k < FIRST_PAIRS; k++) {
		nvtxRangePushA("t");
		nvtxRangePop();
	}
	timer_delete(timer);
	return NULL;
}

static void first_child(void)
{
	pthread_t th[FIRST_THREADS];
	struct sigaction sa;
	char note[64];

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_first;
	sa.sa_flags = SA_RESTART;
	nvtxMarkA("start"); /* loads the library; this thread's state is not made by a mark */
	if (sigaction(SIGUSR1, &sa, NULL) != 0)
		exit(3);
	for (long i = 0; i < FIRST_THREADS; i++)
		if (pthread_create(&th[i], NULL, first_worker, (void *)i) != 0)
			exit(3);
	for (int i = 0; i < FIRST_THREADS; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < 130; i++)
		nvtxRangePushA("d");
	for (int i = 0; i < 130; i++)
		nvtxRangePop();
	snprintf(note, sizeof(note), "handlers %lu", atomic_load(&first_handler_calls));
	nvtxMarkA(note);
	exit(0);
}

START_TEST(nvtx_first_call_in_handler)
{
	struct child_trace t;
	const union gt_record *rec;
	struct gt_reader *r;
	unsigned long h = 0, th = 0, d = 0, unrecorded = 0, other_losses = 0, calls = 0;
	int ret;

	child_trace_run(&t, "first.gtrace", first_child, "256M");
	r = t.r;
	while ((ret = gt_reader_next(r, &rec)) > 0) {
		const char *msg;

		if (rec->hdr.type == GT_REC_LOSS) {
			if (rec->loss.source == GT_LOSS_NVTX) {
				ck_assert_uint_eq(rec->loss.kind, GT_REC_NVTX);
				unrecorded += rec->loss.count;
			} else {
				other_losses += rec->loss.count;
			}
		}
		if (rec->hdr.type != GT_REC_NVTX)
			continue;
		msg = gt_reader_string(r, rec->nvtx.message_id, NULL);
		ck_assert_ptr_nonnull(msg);
		if (strcmp(msg, "h") == 0)
			h++;
		else if (strcmp(msg, "t") == 0)
			th++;
		else if (strcmp(msg, "d") == 0)
			d++;
		else
			ck_assert_int_eq(sscanf(msg, "handlers %lu", &calls) == 1 ||
			                         strcmp(msg, "start") == 0,
			                 1);
	}
	ck_assert_int_eq(ret, 0);
	ck_assert_uint_eq(other_losses, 0);
	ck_assert_uint_eq(th, FIRST_THREADS * FIRST_PAIRS);
	ck_assert_uint_eq(d, 128);
	/* the timers fired (how often depends on the kernel's timer resolution) */
	ck_assert_uint_gt(calls, 0);
	ck_assert_msg(h + unrecorded == calls + 2,
	              "%lu handler ranges recorded, %lu counted, %lu calls", h, unrecorded - 2,
	              calls);
	child_trace_end(&t);
}
END_TEST

/* Voluntary context switches of this process's thread named `name` (the library's flush
 * thread sleeps once per flush period, so they count its periods, or more), -1 if none. */
static long thread_sleeps(const char *name)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	long v = -1;

	while (d && v < 0 && (e = readdir(d))) {
		char path[300], comm[32] = "", line[128];
		FILE *f;

		snprintf(path, sizeof(path), "/proc/self/task/%s/comm", e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (!fgets(comm, sizeof(comm), f))
			comm[0] = '\0';
		fclose(f);
		comm[strcspn(comm, "\n")] = '\0';
		if (strcmp(comm, name) != 0)
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/status", e->d_name);
		f = fopen(path, "r");
		while (f && fgets(line, sizeof(line), f))
			sscanf(line, "voluntary_ctxt_switches: %ld", &v);
		if (f)
			fclose(f);
	}
	if (d)
		closedir(d);
	return v;
}

/* A thread renamed after its first NVTX call: its first THREAD record has the old name and
 * a rescan of the thread names (the flush thread's, every fifth flush period, or the last one
 * at exit, which finds the thread still alive here) writes one with the new name. A thread
 * whose name never changes gets one record, and no record repeats a name. */
static sem_t renamed;

static void *rename_worker(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "before");
	nvtxMarkA("named"); /* the library's first sight of this thread: "before" */
	pthread_setname_np(pthread_self(), "after");
	nvtxMarkA("renamed");
	/* alive until the program exits */
	sem_post(&renamed);
	for (;;)
		pause();
	return NULL;
}

static void rename_child(void)
{
	pthread_t th;

	setenv("GPUTRACE_FLUSH_MS", "20", 1);
	pthread_setname_np(pthread_self(), "main-thread");
	nvtxMarkA("start");
	sem_init(&renamed, 0, 0);
	if (pthread_create(&th, NULL, rename_worker, NULL) != 0)
		exit(3);
	while (sem_wait(&renamed) != 0)
		;
	exit(0);
}

START_TEST(thread_renamed)
{
	struct child_trace t;
	const union gt_record *rec;
	struct gt_reader *r;
	uint32_t main_tid = 0, worker_tid = 0;
	const char *worker_names[4] = {NULL};
	unsigned n_worker = 0, n_main = 0;
	int ret;

	child_trace_run(&t, "rename.gtrace", rename_child, NULL);
	r = t.r;
	/* the threads, from their marks */
	while ((ret = gt_reader_next(r, &rec)) > 0) {
		const char *msg;

		if (rec->hdr.type != GT_REC_NVTX)
			continue;
		msg = gt_reader_string(r, rec->nvtx.message_id, NULL);
		if (msg && strcmp(msg, "start") == 0)
			main_tid = rec->nvtx.tid;
		else if (msg && strcmp(msg, "named") == 0)
			worker_tid = rec->nvtx.tid;
	}
	ck_assert_int_eq(ret, 0);
	ck_assert_uint_ne(main_tid, 0);
	ck_assert_uint_ne(worker_tid, 0);
	gt_reader_close(r);
	ck_assert_int_eq(gt_reader_open(t.out, &t.r, NULL), 0);
	r = t.r;
	while ((ret = gt_reader_next(r, &rec)) > 0) {
		const char *name;

		if (rec->hdr.type != GT_REC_THREAD)
			continue;
		name = gt_reader_string(r, rec->thread.name_id, NULL);
		ck_assert_ptr_nonnull(name);
		if (rec->thread.tid == main_tid) {
			ck_assert_str_eq(name, "main-thread");
			n_main++;
		} else if (rec->thread.tid == worker_tid) {
			ck_assert_uint_lt(n_worker, 4);
			worker_names[n_worker++] = name;
		}
	}
	ck_assert_int_eq(ret, 0);
	ck_assert_uint_eq(n_main, 1);
	ck_assert_uint_eq(n_worker, 2);
	ck_assert_str_eq(worker_names[0], "before");
	ck_assert_str_eq(worker_names[1], "after");
	child_trace_end(&t);
}
END_TEST

/* The table of known threads holds 4,096; a thread that has exited gives its slot up at the
 * next rescan. 5,000 short-lived threads come and go (after every 500, a pause until the flush
 * thread has slept 11 times: at least two rescans, which find them gone), then one more is
 * renamed: its rename is still followed. */
#define MANY_THREADS 5000

static void *short_worker(void *arg)
{
	(void)arg;
	nvtxMarkA("short");
	return NULL;
}

static void many_child(void)
{
	struct timespec ms = {0, 1000000L};
	pthread_t th;
	long v;

	setenv("GPUTRACE_FLUSH_MS", "1", 1);
	nvtxMarkA("start");
	sem_init(&renamed, 0, 0);
	for (int i = 0; i < MANY_THREADS; i++) {
		if (pthread_create(&th, NULL, short_worker, NULL) != 0)
			exit(3);
		pthread_join(th, NULL);
		if (i % 500 == 499) {
			v = thread_sleeps("gputrace-flush");
			if (v < 0)
				exit(4);
			while (thread_sleeps("gputrace-flush") < v + 11)
				nanosleep(&ms, NULL);
		}
	}
	if (pthread_create(&th, NULL, rename_worker, NULL) != 0)
		exit(3);
	while (sem_wait(&renamed) != 0)
		;
	exit(0);
}

START_TEST(thread_renamed_after_many)
{
	struct child_trace t;
	const union gt_record *rec;
	struct gt_reader *r;
	unsigned shorts = 0, before = 0, after = 0;
	int ret;

	child_trace_run(&t, "many.gtrace", many_child, "64M");
	r = t.r;
	while ((ret = gt_reader_next(r, &rec)) > 0) {
		const char *s;

		if (rec->hdr.type == GT_REC_NVTX) {
			s = gt_reader_string(r, rec->nvtx.message_id, NULL);
			shorts += s && strcmp(s, "short") == 0;
		} else if (rec->hdr.type == GT_REC_THREAD) {
			s = gt_reader_string(r, rec->thread.name_id, NULL);
			ck_assert_ptr_nonnull(s);
			before += strcmp(s, "before") == 0;
			after += strcmp(s, "after") == 0;
		}
	}
	ck_assert_int_eq(ret, 0);
	ck_assert_uint_eq(shorts, MANY_THREADS);
	ck_assert_uint_eq(before, 1);
	ck_assert_uint_eq(after, 1);
	child_trace_end(&t);
}
END_TEST

/* In the child: start tracing (the library linked in, as cuInit would) and detach at once, as
 * when CUPTI refuses the subscription. The detach must return without completing the trace:
 * it runs on the thread inside cuInit, which must not wait for the disk (it used to write the
 * footer, fsync and rename right there). The exit completes it. */
static void detach_child(void)
{
	const char *out = getenv("GPUTRACE_OUTPUT");

	if (gt_inject_start() < 0)
		_exit(2);
	gt_inject_detach(GT_NOTICE_CUPTI_ERROR, 7, "refused by the test");
	if (access(out, F_OK) == 0)
		_exit(3);
}

START_TEST(detach_completes_at_exit)
{
	struct child_trace t;
	const union gt_record *rec;
	unsigned ends = 0, notices = 0;
	int ret;

	child_trace_run(&t, "detach.gtrace", detach_child, NULL);
	ck_assert(!gt_reader_status(t.r)->recovered);
	while ((ret = gt_reader_next(t.r, &rec)) > 0) {
		if (rec->hdr.type == GT_REC_PROCESS_END) {
			ends++;
			ck_assert_uint_eq(rec->process_end.how, GT_END_DETACHED);
			ck_assert_int_eq(rec->process_end.code, 7);
		}
		if (rec->hdr.type == GT_REC_NOTICE) {
			notices++;
			ck_assert_uint_eq(rec->notice.severity, GT_NOTICE_ERROR);
			ck_assert_uint_eq(rec->notice.code, GT_NOTICE_CUPTI_ERROR);
			ck_assert_str_eq(gt_reader_string(t.r, rec->notice.message_id, NULL),
			                 "refused by the test");
		}
	}
	ck_assert_int_eq(ret, 0);
	ck_assert_uint_eq(ends, 1);
	ck_assert_uint_eq(notices, 1);
	child_trace_end(&t);
}
END_TEST

/* ---- a fake CUPTI: what gt_cupti_start switches on, and one refusal ---- */

#define FAKE_DOMAINS 8
#define FAKE_CBIDS   1024
#define FAKE_NAMED   100 /* callback ids 1..99 have names, as has cudaDeviceReset */

/* Which of the api collector's switch-ons CUPTI refuses (the loop index of refused_collector),
 * each after the collector has switched some of the same kind on. */
enum fake_refusal {
	REFUSE_CALLBACK,     /* API records from callbacks: the driver's callback id 50 */
	REFUSE_API_ACTIVITY, /* from activity records, the launch filter: driver API id 50 */
	REFUSE_KIND,         /* from activity records, every call: the DRIVER activity kind */
	REFUSE_MAX
};

static enum fake_refusal fake_refuse;
static unsigned char fake_cb_on[FAKE_DOMAINS][FAKE_CBIDS];
static unsigned char fake_domain_on[FAKE_DOMAINS];
static unsigned char fake_api_on[2][FAKE_CBIDS]; /* [0] runtime, [1] driver */
static unsigned char fake_kind_on[CUPTI_ACTIVITY_KIND_COUNT];
static unsigned fake_api_switched_on;  /* cuptiActivityEnable*Api(id, 1) that succeeded */
static unsigned fake_kind_switched_on; /* cuptiActivityEnable(RUNTIME) that succeeded */

static CUpti_CallbackFunc fake_cb_fn; /* the subscriber's callback */
static const CUpti_Activity *fake_give; /* what fake_next_record hands out; NULL: INVALID */

static CUptiResult CUPTIAPI fake_subscribe(CUpti_SubscriberHandle *h, CUpti_CallbackFunc f, void *u)
{
	fake_cb_fn = f;
	(void)u;
	*h = (CUpti_SubscriberHandle)fake_cb_on;
	return CUPTI_SUCCESS;
}

static CUptiResult CUPTIAPI fake_unsubscribe(CUpti_SubscriberHandle h)
{
	(void)h;
	return CUPTI_SUCCESS;
}

/* Refuses the driver API's callback id 50: the api collector has switched on the runtime's
 * named ids and the driver's below 50 by then. */
static CUptiResult CUPTIAPI fake_enable_callback(uint32_t on, CUpti_SubscriberHandle h,
                                                 CUpti_CallbackDomain d, CUpti_CallbackId id)
{
	(void)h;
	if (on && fake_refuse == REFUSE_CALLBACK && d == CUPTI_CB_DOMAIN_DRIVER_API && id == 50)
		return CUPTI_ERROR_INVALID_PARAMETER;
	fake_cb_on[d][id] = (unsigned char)on;
	return CUPTI_SUCCESS;
}

static CUptiResult CUPTIAPI fake_enable_domain(uint32_t on, CUpti_SubscriberHandle h,
                                               CUpti_CallbackDomain d)
{
	(void)h;
	fake_domain_on[d] = (unsigned char)on;
	return CUPTI_SUCCESS;
}

static CUptiResult CUPTIAPI fake_callback_name(CUpti_CallbackDomain d, uint32_t id,
                                               const char **name)
{
	if (id >= FAKE_NAMED && !(d == CUPTI_CB_DOMAIN_RUNTIME_API &&
	                          id == CUPTI_RUNTIME_TRACE_CBID_cudaDeviceReset_v3020))
		return CUPTI_ERROR_INVALID_PARAMETER;
	/* names the launch filter keeps */
	*name = d == CUPTI_CB_DOMAIN_RUNTIME_API ? "cudaLaunchKernel" : "cuLaunchKernel";
	return CUPTI_SUCCESS;
}

static CUptiResult CUPTIAPI fake_result_string(CUptiResult r, const char **s)
{
	switch (r) {
	case CUPTI_ERROR_INVALID_PARAMETER:
		*s = "CUPTI_ERROR_INVALID_PARAMETER";
		break;
	case CUPTI_ERROR_NOT_SUPPORTED:
		*s = "CUPTI_ERROR_NOT_SUPPORTED";
		break;
	case CUPTI_ERROR_UNKNOWN:
		*s = "CUPTI_ERROR_UNKNOWN";
		break;
	default:
		*s = "FAKE";
		break;
	}
	return CUPTI_SUCCESS;
}

static CUptiResult CUPTIAPI fake_kind_enable(CUpti_ActivityKind k)
{
	if (fake_refuse == REFUSE_KIND && k == CUPTI_ACTIVITY_KIND_DRIVER)
		return CUPTI_ERROR_INVALID_PARAMETER;
	fake_kind_on[k] = 1;
	fake_kind_switched_on += k == CUPTI_ACTIVITY_KIND_RUNTIME;
	return CUPTI_SUCCESS;
}

static CUptiResult CUPTIAPI fake_kind_disable(CUpti_ActivityKind k)
{
	fake_kind_on[k] = 0;
	return CUPTI_SUCCESS;
}

static CUptiResult fake_api_kind(unsigned which, CUpti_CallbackId id, uint8_t on)
{
	if (on && fake_refuse == REFUSE_API_ACTIVITY && which == 1 && id == 50)
		return CUPTI_ERROR_INVALID_PARAMETER;
	fake_api_on[which][id] = on;
	fake_api_switched_on += on;
	return CUPTI_SUCCESS;
}

static CUptiResult CUPTIAPI fake_runtime_api(CUpti_CallbackId id, uint8_t on)
{
	return fake_api_kind(0, id, on);
}

static CUptiResult CUPTIAPI fake_driver_api(CUpti_CallbackId id, uint8_t on)
{
	return fake_api_kind(1, id, on);
}

static CUpti_BuffersCallbackRequestFunc fake_requested;
static CUpti_BuffersCallbackCompleteFunc fake_completed;

static CUptiResult CUPTIAPI fake_register(CUpti_BuffersCallbackRequestFunc a,
                                          CUpti_BuffersCallbackCompleteFunc b)
{
	fake_requested = a;
	fake_completed = b;
	return CUPTI_SUCCESS;
}

/* A buffer's `valid` bytes are its record count here: as many records of a kind no collector
 * takes (CUPTI_ACTIVITY_KIND_INVALID), then the end. */
static CUptiResult CUPTIAPI fake_next_record(uint8_t *buf, size_t valid, CUpti_Activity **rec)
{
	static CUpti_Activity invalid = {.kind = CUPTI_ACTIVITY_KIND_INVALID};
	static uint8_t *current;
	static size_t given;

	if (buf != current) {
		current = buf;
		given = 0;
	}
	if (given == valid) {
		current = NULL; /* the pool hands the same buffer out again */
		return CUPTI_ERROR_MAX_LIMIT_REACHED;
	}
	given++;
	*rec = fake_give ? (CUpti_Activity *)fake_give : &invalid;
	return CUPTI_SUCCESS;
}

static CUptiResult CUPTIAPI fake_clock(CUpti_TimestampCallbackFunc f)
{
	(void)f;
	return CUPTI_SUCCESS;
}

static CUptiResult CUPTIAPI fake_tid_type(CUpti_ActivityThreadIdType t)
{
	(void)t;
	return CUPTI_SUCCESS;
}

static CUptiResult CUPTIAPI fake_flush(uint32_t flags)
{
	(void)flags;
	return CUPTI_SUCCESS;
}

static CUptiResult CUPTIAPI fake_dropped(CUcontext c, uint32_t s, size_t *n)
{
	(void)c;
	(void)s;
	*n = 0;
	return CUPTI_SUCCESS;
}

/* Every context is device 0's, context 1. */
static CUptiResult CUPTIAPI fake_device_id(CUcontext c, uint32_t *dev)
{
	(void)c;
	*dev = 0;
	return CUPTI_SUCCESS;
}

static CUptiResult CUPTIAPI fake_context_id(CUcontext c, uint32_t *id)
{
	(void)c;
	*id = 1;
	return CUPTI_SUCCESS;
}

static void fake_install(void)
{
	gt_cupti.cuptiGetDeviceId = fake_device_id;
	gt_cupti.cuptiGetContextId = fake_context_id;
	gt_cupti.cuptiSubscribe = fake_subscribe;
	gt_cupti.cuptiUnsubscribe = fake_unsubscribe;
	gt_cupti.cuptiEnableCallback = fake_enable_callback;
	gt_cupti.cuptiEnableDomain = fake_enable_domain;
	gt_cupti.cuptiGetCallbackName = fake_callback_name;
	gt_cupti.cuptiGetResultString = fake_result_string;
	gt_cupti.cuptiActivityEnable = fake_kind_enable;
	gt_cupti.cuptiActivityDisable = fake_kind_disable;
	gt_cupti.cuptiActivityEnableRuntimeApi = fake_runtime_api;
	gt_cupti.cuptiActivityEnableDriverApi = fake_driver_api;
	gt_cupti.cuptiActivityRegisterCallbacks = fake_register;
	gt_cupti.cuptiActivityRegisterTimestampCallback = fake_clock;
	gt_cupti.cuptiSetThreadIdType = fake_tid_type;
	gt_cupti.cuptiActivityFlushAll = fake_flush;
	gt_cupti.cuptiActivityGetNumDroppedRecords = fake_dropped;
	gt_cupti.cuptiActivityGetNextRecord = fake_next_record;
}

/* In the child: the injection started with these API settings and capture range (NULL:
 * none), no flush thread, on the fake CUPTI; exits 2 or 3 when either start fails. */
static void fake_start(const char *api, const char *source, const char *capture)
{
	const char *what = NULL;

	setenv("GPUTRACE_API", api, 1);
	setenv("GPUTRACE_API_SOURCE", source, 1);
	setenv("GPUTRACE_FLUSH_MS", "0", 1);
	unsetenv("GPUTRACE_TRACE");
	if (capture)
		setenv("GPUTRACE_CAPTURE_RANGE", capture, 1);
	else
		unsetenv("GPUTRACE_CAPTURE_RANGE");
	if (gt_inject_start() < 0)
		_exit(2);
	fake_install();
	if (gt_cupti_start(&what) != 0)
		_exit(3);
}

/* In the child: tracing starts on the fake CUPTI, whose refusal leaves the api collector out.
 * What it had switched on must be off again: callbacks, except cudaDeviceReset, which the
 * capture collector (on) needs too; the API activity of each callback id; the RUNTIME
 * activity kind. What the collectors that are on switched on stays: the resource domain
 * (meta), the kernel collector's activity kind. Exit codes name the check that failed. */
static void refused_child(void)
{
	unsigned d, id;

	fake_start(fake_refuse == REFUSE_API_ACTIVITY ? "launch" : "all",
	           fake_refuse == REFUSE_CALLBACK ? "callback" : "activity", NULL);
	for (d = 0; d < FAKE_DOMAINS; d++)
		for (id = 0; id < FAKE_CBIDS; id++)
			if (fake_cb_on[d][id] !=
			    (d == CUPTI_CB_DOMAIN_RUNTIME_API &&
			     id == CUPTI_RUNTIME_TRACE_CBID_cudaDeviceReset_v3020))
				_exit(4);
	if (!fake_domain_on[CUPTI_CB_DOMAIN_RESOURCE])
		_exit(5);
	for (id = 0; id < FAKE_CBIDS; id++)
		if (fake_api_on[0][id] || fake_api_on[1][id])
			_exit(6);
	if (fake_kind_on[CUPTI_ACTIVITY_KIND_RUNTIME] || fake_kind_on[CUPTI_ACTIVITY_KIND_DRIVER])
		_exit(7);
	if (!fake_kind_on[CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL])
		_exit(8);
	/* the refusal came after switch-ons of its own sort, which were undone: runtime ids
	 * 1..99 and cudaDeviceReset, driver ids 1..49; the RUNTIME kind */
	if (fake_refuse == REFUSE_API_ACTIVITY && fake_api_switched_on != 100 + 49)
		_exit(9);
	if (fake_refuse == REFUSE_KIND && fake_kind_switched_on != 1)
		_exit(10);
}

/* A collector CUPTI refuses after it switched some callbacks (_i 0), API activity records
 * per callback id (_i 1) or an activity kind (_i 2) on is left out without leaving them on
 * (they would cost every call and record nothing), and the trace says why. */
START_TEST(refused_collector)
{
	struct child_trace t;
	const union gt_record *rec;
	unsigned notices = 0;
	int ret;

	fake_refuse = (enum fake_refusal)_i;
	child_trace_run(&t, "refused.gtrace", refused_child, NULL);
	while ((ret = gt_reader_next(t.r, &rec)) > 0) {
		if (rec->hdr.type != GT_REC_NOTICE)
			continue;
		notices++;
		ck_assert_uint_eq(rec->notice.severity, GT_NOTICE_WARNING);
		ck_assert_uint_eq(rec->notice.code, GT_NOTICE_CUPTI_ERROR);
		ck_assert_int_eq(rec->notice.detail, CUPTI_ERROR_INVALID_PARAMETER);
		ck_assert_str_eq(gt_reader_string(t.r, rec->notice.message_id, NULL),
		                 "CUPTI refused the api collector (CUPTI_ERROR_INVALID_PARAMETER): "
		                 "its records are missing from this trace");
	}
	ck_assert_int_eq(ret, 0);
	ck_assert_uint_eq(notices, 1);
	child_trace_end(&t);
}
END_TEST

/* In the child: a cudaProfilerApi capture range with API records from activity records, on
 * the fake CUPTI (which refuses nothing). CUPTI ignores a call's API activity switch once a
 * context exists, so the calls of the launch filter are switched on at the start and stay
 * on through the ranges; the RUNTIME and DRIVER kinds of the "all" filter are off until a
 * range starts and follow it; a record is in a range by its call's start time. Exit codes
 * name the check that failed. */
static void capture_api_child(void)
{
	bool all = getenv("GT_TEST_ALL") != NULL;
	uint64_t before, inside, after;
	unsigned id;

	fake_refuse = REFUSE_MAX;
	fake_start(all ? "all" : "launch", "activity", "cudaProfilerApi");
	for (id = 1; id < FAKE_NAMED; id++)
		if (fake_api_on[0][id] != !all || fake_api_on[1][id] != !all)
			_exit(4);
	if (fake_kind_on[CUPTI_ACTIVITY_KIND_RUNTIME] || fake_kind_on[CUPTI_ACTIVITY_KIND_DRIVER])
		_exit(5);
	before = gt_now_ns();
	if (gt_cupti_in_capture(before))
		_exit(6);
	gt_cupti_set_capturing(true);
	inside = gt_now_ns();
	if (fake_kind_on[CUPTI_ACTIVITY_KIND_RUNTIME] != all ||
	    fake_kind_on[CUPTI_ACTIVITY_KIND_DRIVER] != all || !gt_cupti_in_capture(inside))
		_exit(7);
	gt_cupti_set_capturing(false);
	after = gt_now_ns();
	if (fake_kind_on[CUPTI_ACTIVITY_KIND_RUNTIME] || fake_kind_on[CUPTI_ACTIVITY_KIND_DRIVER])
		_exit(8);
	if (gt_cupti_in_capture(before) || !gt_cupti_in_capture(inside) ||
	    gt_cupti_in_capture(after))
		_exit(9);
	for (id = 1; id < FAKE_NAMED; id++)
		if (fake_api_on[0][id] != !all || fake_api_on[1][id] != !all)
			_exit(10);
	/* a second range: the first still counts, the gap between them does not */
	gt_cupti_set_capturing(true);
	if (!gt_cupti_in_capture(gt_now_ns()) || !gt_cupti_in_capture(inside) ||
	    gt_cupti_in_capture(after))
		_exit(11);
	gt_cupti_set_capturing(false);
}

/* _i 0: the launch filter (calls switched on one by one); 1: every call (whole kinds). */
START_TEST(capture_api_activity)
{
	struct child_trace t;

	if (_i)
		setenv("GT_TEST_ALL", "1", 1);
	child_trace_run(&t, "capture-api.gtrace", capture_api_child, NULL);
	unsetenv("GT_TEST_ALL");
	child_trace_end(&t);
}
END_TEST

/* In the child: CUPTI hands three buffers of 10, 20 and 0 records to this thread, as its
 * worker thread would. */
static void self_cost_child(void)
{
	const size_t counts[] = {10, 20, 0};

	fake_refuse = REFUSE_MAX;
	fake_start("launch", "activity", NULL);
	if (!fake_requested || !fake_completed)
		_exit(4);
	prctl(PR_SET_NAME, "buffer-thread", 0, 0, 0);
	for (unsigned i = 0; i < 3; i++) {
		uint8_t *buf = NULL;
		size_t size = 0, max = 0;

		fake_requested(&buf, &size, &max);
		if (!buf || !size)
			_exit(5);
		fake_completed(NULL, 0, buf, size, counts[i]);
	}
}

/* At exit a process says what gputrace's own work cost it: one informational notice with the
 * buffers and records handled, by thread; the catalog keeps it apart from the warnings. */
START_TEST(self_cost_notice)
{
	static const char head[] = "gputrace's own work: 3 CUPTI buffers, 30 records, handled in ";
	struct child_trace t;
	const union gt_record *rec;
	char want[128];
	const char *msg = NULL;
	unsigned self = 0;
	int ret;

	child_trace_run(&t, "self-cost.gtrace", self_cost_child, NULL);
	while ((ret = gt_reader_next(t.r, &rec)) > 0) {
		if (rec->hdr.type != GT_REC_NOTICE || rec->notice.code != GT_NOTICE_SELF_COST)
			continue;
		self++;
		ck_assert_uint_eq(rec->notice.severity, GT_NOTICE_INFO);
		ck_assert_uint_eq(rec->hdr.pid, (uint32_t)t.pid);
		ck_assert_int_ge(rec->notice.detail, 0);
		msg = gt_reader_string(t.r, rec->notice.message_id, NULL);
		ck_assert_ptr_nonnull(msg);
		ck_assert_msg(strncmp(msg, head, sizeof(head) - 1) == 0, "%s", msg);
		snprintf(want, sizeof(want), ": 3 in ");
		ck_assert_msg(strstr(msg, want), "%s", msg);
		snprintf(want, sizeof(want), " on thread %d (buffer-thread)", (int)t.pid);
		ck_assert_msg(strstr(msg, want) && !strstr(msg, "periodic"), "%s", msg);
	}
	ck_assert_int_eq(ret, 0);
	ck_assert_uint_eq(self, 1);
	child_trace_end(&t);
}
END_TEST

/* A runtime call (callback id 5, a "cudaLaunchKernel" to the fake CUPTI) with correlation id
 * `corr`, through the subscriber callback at its entry and exit, as CUPTI makes them. */
static __attribute__((noinline)) void fake_call(uint32_t corr)
{
	uint64_t scratch = 0;
	int rc = 0;
	CUpti_CallbackData cb = {.callbackSite = CUPTI_API_ENTER,
	                         .functionName = "cudaLaunchKernel",
	                         .correlationId = corr,
	                         .correlationData = &scratch,
	                         .functionReturnValue = &rc};

	fake_cb_fn(NULL, CUPTI_CB_DOMAIN_RUNTIME_API, 5, &cb);
	cb.callbackSite = CUPTI_API_EXIT;
	fake_cb_fn(NULL, CUPTI_CB_DOMAIN_RUNTIME_API, 5, &cb);
	__asm__ volatile("" ::: "memory"); /* not a tail call */
}

/* In the child: GPUTRACE_BACKTRACE as GT_TEST_BT says, API records from GT_TEST_SOURCE; three
 * calls (correlation ids 1, 2, 3). With activity
 * records, their records come afterwards, in one buffer, as CUPTI's thread would hand them. */
static void stack_api_child(void)
{
	const char *source = getenv("GT_TEST_SOURCE");
	bool activity = strcmp(source, "activity") == 0;

	fake_refuse = REFUSE_MAX;
	setenv("GPUTRACE_BACKTRACE", getenv("GT_TEST_BT"), 1);
	fake_start("launch", source, NULL);
	/* with activity records, the exit callback of a call of the kinds is on for its stack */
	bool kernel_kind = strcmp(getenv("GT_TEST_BT"), "native:memory,sync,other") != 0;

	if (!fake_cb_fn || (activity && fake_cb_on[CUPTI_CB_DOMAIN_RUNTIME_API][5] != kernel_kind))
		_exit(4);
	for (uint32_t corr = 1; corr <= 2; corr++)
		fake_call(corr);
	fake_call(3);
	if (activity) {
		for (uint32_t corr = 1; corr <= 3; corr++) {
			CUpti_ActivityAPI a = {.kind = CUPTI_ACTIVITY_KIND_RUNTIME,
			                       .cbid = 5,
			                       .start = gt_now_ns(),
			                       .end = gt_now_ns() + 1,
			                       .processId = (uint32_t)getpid(),
			                       .threadId = (uint32_t)getpid(),
			                       .correlationId = corr};
			uint8_t *buf = NULL;
			size_t size = 0, max = 0;

			fake_give = (const CUpti_Activity *)&a;
			fake_requested(&buf, &size, &max);
			if (!buf || !size)
				_exit(5);
			fake_completed(NULL, 0, buf, size, 1);
			fake_give = NULL;
		}
	}
}

/* API records carry the stack of their call (_i: 0 from callbacks, 1 from activity records,
 * matched by correlation id; none with 2, a threshold no call reaches, or 3, kinds the calls
 * are not of); each stack is written once. */
START_TEST(stack_api)
{
	static const char *const bt[] = {"native", "native:kernel,sync", "native:all:1000000000",
	                                 "native:memory,sync,other"};
	struct child_trace t;
	const union gt_record *rec;
	uint32_t ids[4] = {0};
	unsigned apis = 0, stacks = 0;
	int ret;
	bool want = _i < 2;

	setenv("GT_TEST_SOURCE", _i == 0 ? "callback" : "activity", 1);
	setenv("GT_TEST_BT", bt[_i], 1);
	child_trace_run(&t, "stack-api.gtrace", stack_api_child, NULL);
	while ((ret = gt_reader_next(t.r, &rec)) > 0) {
		if (rec->hdr.type == GT_REC_STACK) {
			stacks += rec->stack.first == 0;
			ck_assert_uint_gt(rec->stack.depth, 0);
			ck_assert_uint_eq(rec->stack.frames[0].kind, GT_FRAME_NATIVE);
		}
		if (rec->hdr.type != GT_REC_API)
			continue;
		apis++;
		ck_assert_uint_le(rec->api.correlation_id, 3);
		ids[rec->api.correlation_id] = rec->api.stack_id;
	}
	ck_assert_int_eq(ret, 0);
	ck_assert_uint_eq(apis, 3);
	if (want) {
		/* this test program holds the collectors, so its own frames are the library's
		 * and left out: all three calls have the stack of the frames below it, written
		 * once (tests/cli-stacks.sh checks frames through the real library) */
		ck_assert_uint_ne(ids[1], 0);
		ck_assert_uint_eq(ids[1], ids[2]);
		ck_assert_uint_eq(ids[3], ids[1]);
		ck_assert_uint_eq(stacks, 1);
	} else {
		ck_assert_uint_eq(ids[1] | ids[2] | ids[3], 0);
		ck_assert_uint_eq(stacks, 0);
	}
	unsetenv("GT_TEST_SOURCE");
	unsetenv("GT_TEST_BT");
	child_trace_end(&t);
}
END_TEST

/* ---- GPU metrics (collectors/gpumetrics.c) on a fake PM sampling API ---- */

/* Device 0's uuid in the child: its pid in the first bytes, so that the collector's lock file
 * (one per GPU uuid) is this test's own. */
static CUresult fake_cu_device_get(CUdevice *dev, int ordinal)
{
	*dev = ordinal;
	return CUDA_SUCCESS;
}

static CUresult fake_cu_uuid(CUuuid *uuid, CUdevice dev)
{
	uint32_t pid = (uint32_t)getpid();

	(void)dev;
	memset(uuid->bytes, 0x77, sizeof(uuid->bytes));
	memcpy(uuid->bytes, &pid, sizeof(pid));
	return CUDA_SUCCESS;
}

/* In the child: GPU metrics of every device on tests/fake-pmsampling.c's API (GT_FAKE_PM_LIB,
 * loaded first and named as the libcupti the collector resolves it from), then a context of
 * device 0 is created; returns once the sampler thread is starting the device (it finishes
 * that, and stops sampling, at the exit). */
static void gpumetrics_child(void)
{
	void *fake = dlopen(getenv("GT_FAKE_PM_LIB"), RTLD_NOW | RTLD_LOCAL);
	CUpti_ResourceData rd = {.context = (CUcontext)(uintptr_t)1};
	const char *what = NULL;
	int (*wait_begun)(int);

	if (!fake)
		_exit(2);
	*(void **)&wait_begun = dlsym(fake, "fake_pm_wait_begun");
	if (!wait_begun)
		_exit(3);
	fake_refuse = REFUSE_MAX;
	setenv("GPUTRACE_GPU_METRICS", "all", 1);
	setenv("GPUTRACE_API", "launch", 1);
	setenv("GPUTRACE_FLUSH_MS", "0", 1);
	unsetenv("GPUTRACE_TRACE");
	unsetenv("GPUTRACE_CAPTURE_RANGE");
	if (gt_inject_start() < 0)
		_exit(4);
	fake_install();
	snprintf(gt_cupti_path, sizeof(gt_cupti_path), "%s", getenv("GT_FAKE_PM_LIB"));
	gt_cuda.device_get = fake_cu_device_get;
	gt_cuda.get_uuid = fake_cu_uuid;
	if (gt_cupti_start(&what) != 0)
		_exit(5);
	if (!fake_cb_fn)
		_exit(6);
	fake_cb_fn(NULL, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_CREATED, &rd);
	/* the sampler thread takes the device up; a generous bound, for a failure only */
	if (wait_begun(50) != 0)
		_exit(7);
}

/* The whole output of `cmd` (malloc'd) and its exit status. */
static char *run_cmd(const char *cmd, int *status)
{
	char *buf = NULL;
	size_t len = 0, n;
	char chunk[4096];
	FILE *p = popen(cmd, "r");
	FILE *m = open_memstream(&buf, &len);

	ck_assert_ptr_nonnull(p);
	ck_assert_ptr_nonnull(m);
	while ((n = fread(chunk, 1, sizeof(chunk), p)) > 0)
		fwrite(chunk, 1, n, m);
	*status = pclose(p);
	fclose(m);
	return buf;
}

/* What the fake API is to refuse with the availability image (fake-pmsampling.c), and what
 * the trace must then hold: the metrics kept (of the GH100 set's ten), the notice. */
static const struct {
	const char *refuse; /* GT_FAKE_PM_REFUSE */
	unsigned kept;      /* metrics sampled: the first seven and GR Active, or none */
	unsigned reason;    /* the notice's detail */
	const char *notice;
	bool no_sample;     /* GT_FAKE_PM_NO_SAMPLE: a second notice says no sample came */
} gm_cases[] = {
        {"nvlink", 8, GT_GM_REFUSED,
         "GPU metrics of device 0 sampled without NVLink RX Bandwidth, NVLink TX Bandwidth: "
         "the GPU's counter availability refuses these metrics "
         "(cuptiProfilerHostConfigAddMetrics: CUPTI_ERROR_UNKNOWN)"},
        /* each refused for a reason of its own: each named with its own */
        {"mixed", 8, GT_GM_REFUSED,
         "GPU metrics of device 0 sampled without NVLink RX Bandwidth (CUPTI_ERROR_UNKNOWN), "
         "NVLink TX Bandwidth (CUPTI_ERROR_NOT_SUPPORTED): the GPU's counter availability "
         "refuses these metrics (cuptiProfilerHostConfigAddMetrics)"},
        /* every metric refused: not sampled at all, as before */
        {"all", 0, GT_GM_ERROR,
         "GPU metrics of device 0 not sampled: a CUPTI call failed (building the configuration "
         "(profiler host API): CUPTI_ERROR_UNKNOWN)"},
        /* sampled, but the program ended before the first sample: said, not silent */
        {"nvlink", 8, GT_GM_REFUSED,
         "GPU metrics of device 0 sampled without NVLink RX Bandwidth, NVLink TX Bandwidth: "
         "the GPU's counter availability refuses these metrics "
         "(cuptiProfilerHostConfigAddMetrics: CUPTI_ERROR_UNKNOWN)",
         true},
};

/* The GH100 set: its names and counters, in its order; NVLink RX and TX are 7 and 8. */
static const char *const gm_names[] = {
        "SMs Active",           "SM Issue",
        "Tensor Active",        "DRAM Read Bandwidth",
        "DRAM Write Bandwidth", "PCIe Read Bandwidth",
        "PCIe Write Bandwidth", "NVLink RX Bandwidth",
        "NVLink TX Bandwidth",  "GR Active",
};
static const char *const gm_counters[] = {
        "sm__cycles_active",
        "sm__inst_executed_realtime",
        "sm__pipe_tensor_cycles_active_realtime",
        "dram__bytes_read",
        "dram__bytes_write",
        "pcie__read_bytes",
        "pcie__write_bytes",
        "nvlrx__bytes",
        "nvltx__bytes",
        "gr__cycles_active",
};
static const char *const gm_suffixes[] = {
        ".avg.pct_of_peak_sustained_elapsed",
        ".avg.pct_of_peak_sustained_elapsed",
        ".avg.pct_of_peak_sustained_elapsed",
        ".sum.per_second",
        ".sum.per_second",
        ".sum.per_second",
        ".sum.per_second",
        ".sum.per_second",
        ".sum.per_second",
        ".avg.pct_of_peak_sustained_elapsed",
};

/* Metric k of the eight sampled: the set's metric number k, past the two NVLink ones. */
static unsigned gm_kept(unsigned k)
{
	return k < 7 ? k : k + 2;
}

/* fake-pmsampling.c's value of metric k of eight, raw: (k + 1) * 10.5 % (scale 1000) or
 * (k + 1) GB/s. */
static uint64_t gm_raw(unsigned k)
{
	return gm_suffixes[gm_kept(k)][1] == 'a' ? (k + 1) * 10500ull : (k + 1) * 1000000000ull;
}

/* The host API calls with the NVLink metrics refused: the set refused with the availability
 * image, each metric alone in a host object of its own, then the eight kept; sampling of
 * eight. */
static void gm_check_calls(const char *log_path)
{
	char want[4096], cmd[128], *p, *out;
	int st;

	p = want + sprintf(want, "cuptiProfilerInitialize\n"
	                         "host init GH100 with availability\n"
	                         "add");
	for (unsigned i = 0; i < 10; i++)
		p += sprintf(p, " %s", gm_counters[i]);
	p += sprintf(p, ": refused\n");
	for (unsigned i = 0; i < 10; i++)
		p += sprintf(p, "host init GH100 with availability\nadd %s: %s\nhost deinit\n",
		             gm_counters[i], i == 7 || i == 8 ? "refused" : "ok");
	p += sprintf(p, "host deinit\n"
	                "host init GH100 with availability\n"
	                "add");
	for (unsigned k = 0; k < 8; k++)
		p += sprintf(p, " %s", gm_counters[gm_kept(k)]);
	/* sampling stopped at exit before the host library's own teardown, which it needs */
	sprintf(p, ": ok\n"
	           "config image\nenable\ncounter data of 8 metrics\nstart\nstop\n"
	           "evaluate 8 metrics\ndisable\nhost deinit\nhost library torn down\n");
	snprintf(cmd, sizeof(cmd), "cat '%s'", log_path);
	out = run_cmd(cmd, &st);
	ck_assert_str_eq(out, want);
	free(out);
}

/* `gputrace info` and `stats -r gpu-metrics` on the trace of pid with the notice. */
static void gm_check_cli(const char *trace, pid_t pid, const char *notice)
{
	const char *cli = getenv("GT_GPUTRACE");
	char cmd[512], want[4096], *p, *out;
	int st;

	ck_assert_msg(cli && *cli, "GT_GPUTRACE not set");
	/* info: the notice among the trace's notices */
	snprintf(cmd, sizeof(cmd), "'%s' info '%s'", cli, trace);
	out = run_cmd(cmd, &st);
	ck_assert_int_eq(st, 0);
	snprintf(want, sizeof(want), "\nnotices:\n  pid %d: %s\n", (int)pid, notice);
	ck_assert_msg(strstr(out, want), "%s", out);
	free(out);
	/* stats: the eight metrics and their one sample, the notice */
	snprintf(cmd, sizeof(cmd), "'%s' stats '%s' -r gpu-metrics --format csv", cli, trace);
	out = run_cmd(cmd, &st);
	ck_assert_int_eq(st, 0);
	p = want + sprintf(want, "# gpu_metrics\n"
	                         "gpu,metric,unit,scope,samples,mean,peak,sampled_by_pid\n");
	for (unsigned k = 0; k < 8; k++) {
		bool pct = gm_suffixes[gm_kept(k)][1] == 'a';
		double v = pct ? (double)gm_raw(k) / 1000.0 : (double)gm_raw(k);
		const char *name = gm_names[gm_kept(k)];

		p += sprintf(p, "0,%s,%s,run,1,%.2f,%.2f,%d\n", name, pct ? "%" : "bytes/s", v, v,
		             (int)pid);
		p += sprintf(p, "0,%s,%s,kernels running,0,,,%d\n", name, pct ? "%" : "bytes/s",
		             (int)pid);
	}
	sprintf(p,
	        "\n# gpu_busy\n"
	        "gpu,samples,gpu_busy_pct,sm_active_pct,sm_active_busy_pct\n"
	        "0,1,0.00,10.50,\n"
	        "\n# gpu_metrics_notices\n"
	        "pid,reason,message\n"
	        "%d,the GPU's counter availability refuses these metrics,\"%s\"\n",
	        (int)pid, notice);
	ck_assert_str_eq(out, want);
	free(out);
	/* and as a table: the notice whole (a long name is cut), on the last line */
	snprintf(cmd, sizeof(cmd), "'%s' stats '%s' -r gpu-metrics", cli, trace);
	out = run_cmd(cmd, &st);
	ck_assert_int_eq(st, 0);
	snprintf(want, sizeof(want), "  the GPU's counter availability refuses these metrics  %s\n",
	         notice);
	p = strstr(out, "\nGPU metrics not sampled (notices)\n");
	ck_assert_msg(p && strstr(p, want) && strlen(strstr(p, want)) == strlen(want), "%s", out);
	free(out);
}

/* A GPU whose counter availability refuses the NVLink metrics (as an H100 without an active
 * NVLink did; one refused metric fails the whole ConfigAddMetrics call) is sampled for the
 * other eight (_i 0, 1): each metric is tried in a host object of its own, the two refused
 * ones leave the set, the rest keep their order with dense indexes, one notice names the
 * two, and `gputrace info` and `stats -r gpu-metrics` show it. One that refuses every metric
 * (_i 2) is not sampled, with the notice of a failed configuration. A program that ends
 * before the first sample (_i 3) gets a second notice that says so. */
START_TEST(gpumetrics_refused_metrics)
{
	char log_path[64], lock[128], uuid_hex[33];
	struct child_trace t;
	const union gt_record *rec;
	unsigned metrics = 0, samples = 0, notices = 0;
	glob_t locks;
	int ret;

	snprintf(log_path, sizeof(log_path), "/tmp/gt-fake-pm-%d.log", (int)getpid());
	unlink(log_path);
	setenv("GT_FAKE_PM_LOG", log_path, 1);
	setenv("GT_FAKE_PM_REFUSE", gm_cases[_i].refuse, 1);
	if (gm_cases[_i].no_sample)
		setenv("GT_FAKE_PM_NO_SAMPLE", "1", 1);
	child_trace_run(&t, "gpumetrics.gtrace", gpumetrics_child, NULL);
	unsetenv("GT_FAKE_PM_LOG");
	unsetenv("GT_FAKE_PM_REFUSE");
	unsetenv("GT_FAKE_PM_NO_SAMPLE");
	/* the GPU's lock file, which the collector leaves (the lock goes with the process) */
	for (unsigned i = 0; i < 16; i++)
		snprintf(uuid_hex + 2 * i, 3, "%02x",
		         i < 4 ? (unsigned)((uint32_t)t.pid >> (8 * i)) & 0xffu : 0x77u);
	snprintf(lock, sizeof(lock), "/tmp/gputrace-gm-%u-*-%s.lock", (unsigned)getuid(), uuid_hex);
	ck_assert_int_eq(glob(lock, 0, NULL, &locks), 0);
	ck_assert_uint_eq(locks.gl_pathc, 1);
	ck_assert_int_eq(unlink(locks.gl_pathv[0]), 0);
	globfree(&locks);

	while ((ret = gt_reader_next(t.r, &rec)) > 0) {
		if (rec->hdr.type == GT_REC_GPU_METRIC) {
			const struct gt_rec_gpu_metric *m = &rec->gpu_metric;
			unsigned i = gm_kept(metrics);
			char metric[128];

			ck_assert_uint_lt(metrics, gm_cases[_i].kept);
			ck_assert_uint_eq(m->index, metrics);
			ck_assert_uint_eq(m->device_id, 0);
			ck_assert_str_eq(gt_reader_string(t.r, m->name_id, NULL), gm_names[i]);
			snprintf(metric, sizeof(metric), "%s%s", gm_counters[i], gm_suffixes[i]);
			ck_assert_str_eq(gt_reader_string(t.r, m->metric_id, NULL), metric);
			metrics++;
		} else if (rec->hdr.type == GT_REC_GPU_SAMPLE) {
			ck_assert_uint_eq(rec->gpu_sample.count, 8);
			for (unsigned k = 0; k < GT_GPU_METRICS_MAX; k++)
				ck_assert_uint_eq(rec->gpu_sample.values[k], k < 8 ? gm_raw(k) : 0);
			samples++;
		} else if (rec->hdr.type == GT_REC_NOTICE &&
		           rec->notice.code == GT_NOTICE_GPU_METRICS && notices == 1) {
			/* the second: "... (sampled for 12.3 ms)" */
			const char *msg = gt_reader_string(t.r, rec->notice.message_id, NULL);
			const char *want = "GPU metrics of device 0: no sample: the program ended "
			                   "before a sample came (sampled for ";

			ck_assert(gm_cases[_i].no_sample);
			ck_assert_uint_eq(rec->notice.severity, GT_NOTICE_WARNING);
			ck_assert_int_eq(rec->notice.detail, GT_GM_NO_SAMPLE);
			ck_assert_msg(strncmp(msg, want, strlen(want)) == 0 &&
			                      strcmp(msg + strlen(msg) - 4, " ms)") == 0,
			              "%s", msg);
			notices++;
		} else if (rec->hdr.type == GT_REC_NOTICE &&
		           rec->notice.code == GT_NOTICE_GPU_METRICS) {
			ck_assert_uint_eq(rec->notice.severity, GT_NOTICE_WARNING);
			ck_assert_int_eq(rec->notice.detail, gm_cases[_i].reason);
			ck_assert_str_eq(gt_reader_string(t.r, rec->notice.message_id, NULL),
			                 gm_cases[_i].notice);
			notices++;
		}
	}
	ck_assert_int_eq(ret, 0);
	ck_assert_uint_eq(metrics, gm_cases[_i].kept);
	ck_assert_uint_eq(samples, gm_cases[_i].kept && !gm_cases[_i].no_sample ? 1 : 0);
	ck_assert_uint_eq(notices, gm_cases[_i].no_sample ? 2 : 1);
	if (_i == 0) {
		gm_check_calls(log_path);
		gm_check_cli(t.out, t.pid, gm_cases[_i].notice);
	}
	unlink(log_path);
	child_trace_end(&t);
}
END_TEST

static Suite *inject_suite(void)
{
	Suite *s = suite_create("inject");
	TCase *tc = tcase_create("library");
	TCase *gm;

	tcase_set_timeout(tc, 60); /* the sanitizer build runs these several times slower */
	tcase_add_test(tc, exports);
	tcase_add_test(tc, nvtx_standalone);
	tcase_add_test(tc, nvtx_staged_threads);
	tcase_add_test(tc, nvtx_message_cache);
	tcase_add_test(tc, nvtx_signal_reentry);
	tcase_add_test(tc, nvtx_first_call_in_handler);
	tcase_add_test(tc, thread_renamed);
	tcase_add_test(tc, thread_renamed_after_many);
	tcase_add_test(tc, detach_completes_at_exit);
	tcase_add_loop_test(tc, refused_collector, 0, REFUSE_MAX);
	tcase_add_loop_test(tc, capture_api_activity, 0, 2);
	tcase_add_test(tc, self_cost_notice);
	tcase_add_loop_test(tc, stack_api, 0, 4);
	suite_add_tcase(s, tc);
	/* the fake PM sampling library is given to the test of suite gpumetrics only
	 * (tests/meson.build), which runs this case alone */
	if (!getenv("GT_FAKE_PM_LIB"))
		return s;
	gm = tcase_create("gpumetrics");
	tcase_set_timeout(gm, 60);
	tcase_add_loop_test(gm, gpumetrics_refused_metrics, 0,
	                    (int)(sizeof(gm_cases) / sizeof(gm_cases[0])));
	suite_add_tcase(s, gm);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(inject_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
