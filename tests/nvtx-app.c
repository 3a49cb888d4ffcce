/* Test helper for tests/cli-run.sh: a program that uses NVTX and never CUDA, so `gputrace run`
 * can be checked end to end through the real injection library on a machine without a GPU
 * (NVTX loads the library through NVTX_INJECTION64_PATH).
 *   nvtx-app [N]        pushes and pops "outer"/"inner" N times (default 2), marks "tick"
 *                       once, exits with status 0;
 *   nvtx-app N kill     the same, then waits until the library's flush thread has run a whole
 *                       flush period (it counts the thread's sleeps in /proc), which publishes
 *                       the thread's staged records, and kills itself with SIGKILL, so only
 *                       what the flush thread published survives;
 *   nvtx-app exitrace   32 threads mark unique 200-byte messages (each a new string to intern)
 *                       while main calls exit() once each has marked: the exit must not pull
 *                       the ring or the string table from under them;
 *   nvtx-app ranges     start "outer", start and end "inner" 5,000 times, end "outer", end it
 *                       again and end id 0; then start 4,100 "held" ranges at once (4 more
 *                       than the library tracks) and end them all;
 *   nvtx-app regcap     ranges named by a registered string "train" (run with
 *                       --capture-range nvtx:train): "inside" is pushed inside one, "outside"
 *                       after it;
 *   nvtx-app forkcap    (run with --capture-range nvtx:STEP) a thread opens and closes STEP
 *                       ranges while main forks 50 children that do the same once and exit
 *                       (a child that hangs hangs this program: the test's timeout says so);
 *   nvtx-app open       leaves ranges open: 3 pushes on a thread that exits, 2 pushes and a
 *                       started range on main at exit;
 *   nvtx-app sigcap     (run with --capture-range nvtx:CAP) main pushes and pops CAP for
 *                       0.3 s under a 20 µs timer whose handler, on main too, does the same:
 *                       a handler that interrupts its own thread's capture transition must
 *                       not wait for the lock that thread holds;
 *   nvtx-app live DIR   (for gputrace run --live) names its thread "trainer", then repeats a
 *                       step: "step" around "forward" and "backward", 2 ms apart, until
 *                       DIR/pause exists; then writes the number of steps to DIR/paused and
 *                       waits, running on, until DIR/stop exists; exits with status 0. */
#include <dirent.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <nvtx3/nvToolsExt.h>

static atomic_int marked; /* exitrace: threads that have marked at least once */

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};

	nanosleep(&ts, NULL);
}

static void *marker(void *arg)
{
	char msg[256];
	unsigned long i = 0;

	memset(msg, 'a' + (int)((long)arg % 26), sizeof(msg) - 1);
	msg[200] = '\0';
	for (;;) {
		int n = snprintf(msg, 32, "%lu-%ld-", i++, (long)arg);

		msg[n] = 'x';
		nvtxMarkA(msg);
		if (i == 1)
			atomic_fetch_add(&marked, 1);
	}
	return NULL;
}

static int exitrace(void)
{
	pthread_t t;

	nvtxMarkA("start");
	for (long i = 0; i < 32; i++)
		pthread_create(&t, NULL, marker, (void *)i);
	/* every thread is writing (and keeps writing) when exit() begins */
	while (atomic_load(&marked) < 32)
		sched_yield();
	exit(0);
}

static int ranges(void)
{
	static nvtxRangeId_t held[4100];
	nvtxRangeId_t outer = nvtxRangeStartA("outer");

	for (int i = 0; i < 5000; i++)
		nvtxRangeEnd(nvtxRangeStartA("inner"));
	nvtxRangeEnd(outer);
	nvtxRangeEnd(outer);
	nvtxRangeEnd(0);
	for (int i = 0; i < 4100; i++)
		held[i] = nvtxRangeStartA("held");
	for (int i = 0; i < 4100; i++)
		nvtxRangeEnd(held[i]);
	return 0;
}

static int regcap(void)
{
	nvtxDomainHandle_t d = nvtxDomainCreateA("app");
	nvtxEventAttributes_t a = {0};

	a.version = NVTX_VERSION;
	a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
	a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
	a.message.registered = nvtxDomainRegisterStringA(d, "train");
	nvtxDomainRangePushEx(d, &a);
	nvtxRangePushA("inside");
	nvtxRangePop();
	nvtxDomainRangePop(d);
	nvtxRangePushA("outside");
	nvtxRangePop();
	return 0;
}

static void *stepper(void *arg)
{
	(void)arg;
	for (;;) {
		nvtxRangePushA("STEP");
		nvtxRangePop();
	}
	return NULL;
}

static int forkcap(void)
{
	pthread_t t;

	nvtxMarkA("start");
	pthread_create(&t, NULL, stepper, NULL);
	for (int i = 0; i < 50; i++) {
		pid_t p = fork();
		int st;

		if (p == 0) {
			nvtxRangePushA("STEP");
			nvtxRangePop();
			_exit(0);
		}
		if (p < 0 || waitpid(p, &st, 0) != p || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
			fprintf(stderr, "nvtx-app: child %d failed\n", i);
			return 3;
		}
	}
	return 0;
}

static void *open_pushes(void *arg)
{
	(void)arg;
	for (int i = 0; i < 3; i++)
		nvtxRangePushA("left open");
	return NULL;
}

static int open_ranges(void)
{
	pthread_t t;

	pthread_create(&t, NULL, open_pushes, NULL);
	pthread_join(t, NULL);
	nvtxRangePushA("main open");
	nvtxRangePushA("main open");
	nvtxRangeStartA("started");
	nvtxRangePushA("closed");
	nvtxRangePop();
	return 0;
}

/* Voluntary context switches of this process's thread named `name` (the library's flush
 * thread sleeps once per flush period), or -1 when there is no such thread. */
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

static void cap_handler(int sig)
{
	(void)sig;
	nvtxRangePushA("CAP");
	nvtxRangePop();
}

static int sigcap(void)
{
	struct sigevent ev = {0};
	struct itimerspec every = {{0, 20000}, {0, 20000}};
	struct timespec t0, t;
	timer_t timer;

	/* NVTX loads the library at the first call, which a handler must not interrupt (NVTX's
	 * own initialization waits for itself) */
	nvtxMarkA("start");
	signal(SIGRTMIN, cap_handler);
	ev.sigev_notify = SIGEV_THREAD_ID;
	ev.sigev_signo = SIGRTMIN;
	ev._sigev_un._tid = (pid_t)gettid();
	if (timer_create(CLOCK_MONOTONIC, &ev, &timer) != 0 ||
	    timer_settime(timer, 0, &every, NULL) != 0)
		return 2;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		nvtxRangePushA("CAP");
		nvtxRangePop();
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < 300000000L);
	timer_delete(timer);
	return 0;
}

static bool exists(const char *dir, const char *name)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return access(path, F_OK) == 0;
}

static int live(const char *dir)
{
	char path[4096], done[4096];
	unsigned long steps = 0;
	FILE *f;

	nvtxNameOsThreadA((uint32_t)gettid(), "trainer");
	while (!exists(dir, "pause")) {
		nvtxRangePushA("step");
		nvtxRangePushA("forward");
		nvtxRangePop();
		nvtxRangePushA("backward");
		nvtxRangePop();
		nvtxRangePop();
		steps++;
		sleep_ms(2);
	}
	snprintf(path, sizeof(path), "%s/paused.tmp", dir);
	snprintf(done, sizeof(done), "%s/paused", dir);
	f = fopen(path, "w");
	if (!f)
		return 2;
	fprintf(f, "%lu\n", steps);
	if (fclose(f) != 0 || rename(path, done) != 0)
		return 2;
	while (!exists(dir, "stop"))
		sleep_ms(10);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*run)(void);
	} modes[] = {{"exitrace", exitrace}, {"ranges", ranges},    {"regcap", regcap},
	             {"forkcap", forkcap},   {"open", open_ranges}, {"sigcap", sigcap}};
	const char *mode = argc > 1 ? argv[1] : "";
	int n = argc > 1 ? atoi(argv[1]) : 2;

	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
		if (strcmp(mode, modes[i].name) == 0)
			return modes[i].run();
	if (strcmp(mode, "live") == 0 && argc > 2)
		return live(argv[2]);
	for (int i = 0; i < n; i++) {
		nvtxRangePushA("outer");
		nvtxRangePushA("inner");
		nvtxRangePop();
		nvtxRangePop();
	}
	nvtxMarkA("tick");
	if (argc > 2 && strcmp(argv[2], "kill") == 0) {
		long v0 = thread_sleeps("gputrace-flush");

		if (v0 < 0)
			return 4;
		/* the ranges are in this thread's stage: each flush period publishes it, then
		 * the flush thread sleeps again; three sleeps from now, a whole period ran */
		while (thread_sleeps("gputrace-flush") < v0 + 3)
			sleep_ms(1);
		raise(SIGKILL);
	}
	return 0;
}
