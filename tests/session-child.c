/* Test helper for the session suite: a traced process that registers through
 * gt_client_open(), writes three NVTX marks naming its depth, and (depth > 0) forks and execs
 * itself one level deeper, the way an application spawns workers. Exits with its depth.
 * With "kill" instead of a depth it SIGKILLs itself after the marks, before any goodbye. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "client.h"
#include "clock.h"

int main(int argc, char **argv)
{
	struct gt_client *c;
	const char *err = NULL;
	char msg[32], arg[16];
	int depth = argc > 1 ? atoi(argv[1]) : 0, i, r, status;
	uint32_t id;
	pid_t pid;

	r = gt_client_open(NULL, &c, &err);
	if (r < 0) {
		fprintf(stderr, "session-child: %s\n", err);
		return 100;
	}
	snprintf(msg, sizeof(msg), "level %d", depth);
	id = gt_client_intern(c, msg, strlen(msg));
	for (i = 0; i < 3; i++) {
		struct gt_rec_nvtx n = {0};

		n.hdr.type = GT_REC_NVTX;
		n.hdr.size = sizeof(n);
		n.hdr.pid = (uint32_t)getpid();
		n.start_ns = n.end_ns = gt_now_ns();
		n.range_id = (uint64_t)i;
		n.message_id = id;
		n.kind = GT_NVTX_MARK;
		if (gt_ring_write(gt_client_ring(c), &n.hdr, 0) < 0)
			return 101;
	}
	if (argc > 1 && strcmp(argv[1], "kill") == 0)
		raise(SIGKILL);
	if (depth > 0) {
		pid = fork();
		if (pid < 0)
			return 102;
		if (pid == 0) {
			/* what the injection library's atfork handler does */
			gt_client_forget(c);
			snprintf(arg, sizeof(arg), "%d", depth - 1);
			execl("/proc/self/exe", argv[0], arg, (char *)NULL);
			_exit(103);
		}
		if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
		    WEXITSTATUS(status) != depth - 1)
			return 104;
	}
	gt_client_set_exit_status(c, depth);
	if (gt_client_close(c, NULL, NULL) < 0)
		return 105;
	return depth;
}
