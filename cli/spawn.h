/* Starting the traced program and relaying signals to it: fork, hold the child before exec
 * until the trace and the session exist (so %p can name the program's pid and the child
 * gets the session's address), exec with a prepared environment, and report exec failures
 * through a close-on-exec pipe. Runs in the CLI. */
#ifndef GPUTRACE_CLI_SPAWN_H
#define GPUTRACE_CLI_SPAWN_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct gt_spawn {
	pid_t pid;   /* the program, once forked */
	int gate_fd; /* parent's end: the session address, then EOF, lets the child exec */
	int err_fd;  /* parent's end: an errno if exec failed, EOF if it succeeded */
};

/* Install handlers for SIGINT, SIGTERM and SIGHUP (those not ignored when gputrace started:
 * an ignored signal stays ignored, for us and for the program) and SIGCHLD.
 * A signal sent to gputrace itself (kill, a supervisor) is forwarded to the program; one
 * the terminal sent to the whole foreground process group (Ctrl-C, hang-up) has reached the
 * program already and is only counted. Returns 0 or -errno. */
int gt_signals_install(void);

/* Forward from now on to `pid` (0: hold signals for later). Signals that arrived while there
 * was no target are sent now. */
void gt_signals_target(pid_t pid);

/* Call fn(ctx) from the handlers of every relayed signal and of SIGCHLD, so a sleeping main
 * loop wakes up (fn must be async-signal-safe, like gt_session_stop). NULL: nothing. */
void gt_signals_wake(void (*fn)(void *ctx), void *ctx);

/* Signals (INT, TERM, HUP) received since the last call; *last gets the latest. */
unsigned gt_signals_take(int *last);

/* Fork the program, which waits before exec. `env` is its complete environment; one of its
 * entries is `slot` (slot_bytes long, starting "GPUTRACE_SESSION="), which the child
 * completes with what gt_spawn_release() sends. argv[0] is searched in PATH like a shell.
 * Returns 0 or -errno (fork failed). */
int gt_spawn_start(struct gt_spawn *sp, char *const argv[], char *const env[], char *slot,
                   size_t slot_bytes);

/* Send the session address and let the child exec. Returns 0 when exec succeeded, or
 * -errno of the failed exec (the child has then exited; it is reaped here). */
int gt_spawn_release(struct gt_spawn *sp, const char *session_address);

/* Tracing could not start: tell the child to exit without running anything, and reap it. */
void gt_spawn_abort(struct gt_spawn *sp);

#endif /* GPUTRACE_CLI_SPAWN_H */
