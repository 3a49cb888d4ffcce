/* Starting the traced program (fork, a gate before exec, exec errors through a CLOEXEC pipe)
 * and forwarding signals to it. Runs in the CLI; the part between fork and exec runs in the
 * child and uses async-signal-safe calls only. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "spawn.h"

static const int relayed[] = {SIGINT, SIGTERM, SIGHUP};

/* Shared with the handler. */
static volatile sig_atomic_t target_pid;
static volatile sig_atomic_t received; /* INT/TERM/HUP since the last gt_signals_take */
static volatile sig_atomic_t last_signal;
static volatile sig_atomic_t held; /* bit per signal: arrived with no target yet */
static bool handled[NSIG];         /* we installed a handler (it was not ignored) */
/* Woken from the handlers; changed only with the signals blocked. */
static void (*wake_fn)(void *ctx);
static void *wake_ctx;

static void wake(void)
{
	if (wake_fn)
		wake_fn(wake_ctx);
}

static void on_signal(int sig, siginfo_t *si, void *uctx)
{
	int saved = errno;

	(void)uctx;
	received = received + 1;
	last_signal = sig;
	/* SI_KERNEL: the terminal sent it to the foreground process group, program included. */
	if (si->si_code != SI_KERNEL) {
		if (target_pid > 0)
			kill((pid_t)target_pid, sig);
		else
			held = held | (1 << sig);
	}
	wake();
	errno = saved;
}

static void on_child(int sig)
{
	/* Its only job is to end the sleep of the main loop, so exits are seen at once. */
	int saved = errno;

	(void)sig;
	wake();
	errno = saved;
}

int gt_signals_install(void)
{
	struct sigaction sa, old;

	for (size_t i = 0; i < sizeof(relayed) / sizeof(relayed[0]); i++) {
		if (sigaction(relayed[i], NULL, &old) < 0)
			return -errno;
		if (old.sa_handler == SIG_IGN)
			continue;
		memset(&sa, 0, sizeof(sa));
		sa.sa_sigaction = on_signal;
		sa.sa_flags = SA_SIGINFO | SA_RESTART;
		sigemptyset(&sa.sa_mask);
		if (sigaction(relayed[i], &sa, NULL) < 0)
			return -errno;
		handled[relayed[i]] = true;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_child;
	sa.sa_flags = SA_NOCLDSTOP; /* no SA_RESTART: a child's exit should end a sleep */
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGCHLD, &sa, NULL) < 0)
		return -errno;
	return 0;
}

/* The signals whose handlers read wake_fn/wake_ctx. */
static void handler_set(sigset_t *set)
{
	sigemptyset(set);
	for (size_t i = 0; i < sizeof(relayed) / sizeof(relayed[0]); i++)
		sigaddset(set, relayed[i]);
	sigaddset(set, SIGCHLD);
}

void gt_signals_target(pid_t pid)
{
	sigset_t block, old;
	int pending;

	/* The handler must not see the target change halfway through taking `held`. */
	handler_set(&block);
	sigprocmask(SIG_BLOCK, &block, &old);
	target_pid = pid;
	pending = held;
	if (pid > 0)
		held = 0;
	sigprocmask(SIG_SETMASK, &old, NULL);
	for (int sig = 1; pid > 0 && sig < NSIG && sig < 31; sig++)
		if (pending & (1 << sig))
			kill(pid, sig);
}

void gt_signals_wake(void (*fn)(void *ctx), void *ctx)
{
	sigset_t block, old;

	handler_set(&block);
	sigprocmask(SIG_BLOCK, &block, &old);
	wake_fn = fn;
	wake_ctx = ctx;
	sigprocmask(SIG_SETMASK, &old, NULL);
}

unsigned gt_signals_take(int *last)
{
	unsigned n = (unsigned)received;

	received = 0;
	if (last)
		*last = last_signal;
	return n;
}

/* In the child: read the session address through the gate, then exec. Never returns. */
static void child(int gate, int err, char *const argv[], char *const env[], char *slot,
                  size_t slot_bytes)
{
	size_t prefix = strlen(slot), got = 0;
	ssize_t n;
	int e;

	/* Handlers do not survive exec, but until then a Ctrl-C must act on the program as it
	 * would on any command: default action for the signals we catch. */
	for (int sig = 1; sig < NSIG; sig++)
		if (handled[sig])
			signal(sig, SIG_DFL);
	while ((n = read(gate, slot + prefix + got, slot_bytes - prefix - 1 - got)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			_exit(127);
		got += (size_t)n;
		if (got >= slot_bytes - prefix - 1)
			break;
	}
	if (got == 0)
		_exit(127); /* gt_spawn_abort: nothing runs */
	slot[prefix + got] = '\0';
	close(gate);
	execvpe(argv[0], argv, env);
	e = errno;
	while (write(err, &e, sizeof(e)) < 0 && errno == EINTR)
		;
	_exit(127);
}

int gt_spawn_start(struct gt_spawn *sp, char *const argv[], char *const env[], char *slot,
                   size_t slot_bytes)
{
	int gate[2], err[2];
	pid_t pid;

	sp->pid = -1;
	sp->gate_fd = sp->err_fd = -1;
	if (pipe2(gate, O_CLOEXEC) < 0)
		return -errno;
	if (pipe2(err, O_CLOEXEC) < 0) {
		int e = -errno;

		close(gate[0]);
		close(gate[1]);
		return e;
	}
	pid = fork();
	if (pid < 0) {
		int e = -errno;

		close(gate[0]);
		close(gate[1]);
		close(err[0]);
		close(err[1]);
		return e;
	}
	if (pid == 0) {
		close(gate[1]);
		close(err[0]);
		child(gate[0], err[1], argv, env, slot, slot_bytes);
	}
	close(gate[0]);
	close(err[1]);
	sp->pid = pid;
	sp->gate_fd = gate[1];
	sp->err_fd = err[0];
	return 0;
}

static void reap(pid_t pid)
{
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
}

int gt_spawn_release(struct gt_spawn *sp, const char *session_address)
{
	size_t len = strlen(session_address), off = 0;
	ssize_t n;
	int e = 0;

	while (off < len) {
		n = write(sp->gate_fd, session_address + off, len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			break;
		off += (size_t)n;
	}
	close(sp->gate_fd);
	sp->gate_fd = -1;
	/* EOF: exec closed the pipe (CLOEXEC) and the program runs. Bounded: the child either
	 * execs or writes and exits right away. */
	do {
		n = read(sp->err_fd, &e, sizeof(e));
	} while (n < 0 && errno == EINTR);
	close(sp->err_fd);
	sp->err_fd = -1;
	if (n == (ssize_t)sizeof(e)) {
		reap(sp->pid);
		return -e;
	}
	return 0;
}

void gt_spawn_abort(struct gt_spawn *sp)
{
	if (sp->gate_fd >= 0)
		close(sp->gate_fd);
	if (sp->err_fd >= 0)
		close(sp->err_fd);
	sp->gate_fd = sp->err_fd = -1;
	if (sp->pid > 0)
		reap(sp->pid);
	sp->pid = -1;
}
