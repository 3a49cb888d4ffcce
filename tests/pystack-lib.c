/* Test helper for tests/cli-pystack.sh: NVTX calls for a Python program to make through ctypes
 * (PyDLL keeps the GIL, CDLL lets it go), a thread started from C that calls back into
 * Python, and a loop of NVTX calls for a thread that is still inside them when the
 * interpreter exits. */
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>

#include <nvtx3/nvToolsExt.h>

void pyst_push(const char *message);
void pyst_pop(void);
void pyst_mark(const char *message);
int pyst_run_thread(void (*fn)(void));
void pyst_spin(void);
long pyst_spins(void);

static _Atomic long spins;

void pyst_push(const char *message)
{
	nvtxRangePushA(message);
}

void pyst_pop(void)
{
	nvtxRangePop();
}

void pyst_mark(const char *message)
{
	nvtxMarkA(message);
}

static void *run(void *arg)
{
	void (**fn)(void) = arg;

	(*fn)();
	return NULL;
}

/* Calls fn on a new thread of our own (no Python thread state) and waits for it. */
int pyst_run_thread(void (*fn)(void))
{
	pthread_t t;

	if (pthread_create(&t, NULL, run, &fn) != 0)
		return -1;
	return pthread_join(t, NULL);
}

/* NVTX calls until the process ends. */
void pyst_spin(void)
{
	for (;;) {
		nvtxRangePushA("spin");
		atomic_fetch_add(&spins, 1);
		nvtxRangePop();
	}
}

/* How many loops pyst_spin has made. */
long pyst_spins(void)
{
	return atomic_load(&spins);
}
