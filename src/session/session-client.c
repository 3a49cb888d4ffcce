/* The session's client half: a traced process registers with the gputrace session (its
 * pid, names, rank, and its ring's memfd and eventfd over SCM_RIGHTS) and says goodbye at exit.
 * Runs inside the traced application: every call is bounded (CONNECT_TIMEOUT_S, MSG_DONTWAIT).
 * The server is src/session/session.c. */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "clock.h"
#include "session-wire.h"
#include "session.h"

int gt_session_connect(const char *address, const struct gt_process_info *info,
                       struct gt_ring *ring)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	struct timeval tv = {.tv_sec = CONNECT_TIMEOUT_S};
	union {
		struct cmsghdr h;
		char b[CMSG_SPACE(2 * sizeof(int))];
	} cm;
	struct msg_hello h = {0};
	struct iovec iov[4];
	struct msghdr msg = {.msg_iov = iov, .msg_iovlen = 4};
	struct cmsghdr *c;
	int fds[2] = {gt_ring_fd(ring), gt_ring_wakeup_fd(ring)};
	const char *exe = info->exe ? info->exe : "", *cmd = info->cmdline ? info->cmdline : "";
	const char *host = info->hostname ? info->hostname : "";
	size_t len = strlen(address);
	int fd, r;

	if (fds[1] < 0)
		return -EINVAL;
	if (len >= sizeof(sun.sun_path))
		return -ENAMETOOLONG;
	memcpy(sun.sun_path, address, len + 1);

	h.magic = MSG_MAGIC;
	h.version = MSG_VERSION;
	h.type = MSG_HELLO;
	h.bytes = sizeof(h);
	h.pid = info->pid;
	h.ppid = info->ppid;
	h.rank = info->rank;
	h.local_rank = info->local_rank;
	h.world_size = info->world_size;
	h.exe_len = (uint32_t)strnlen(exe, GT_STRING_MAX);
	h.cmdline_len = (uint32_t)strnlen(cmd, GT_STRING_MAX);
	h.host_len = (uint32_t)strnlen(host, GT_STRING_MAX);
	h.start_ns = gt_now_ns();
	iov[0] = (struct iovec){&h, sizeof(h)};
	iov[1] = (struct iovec){(void *)exe, h.exe_len};
	iov[2] = (struct iovec){(void *)cmd, h.cmdline_len};
	iov[3] = (struct iovec){(void *)host, h.host_len};
	memset(&cm, 0, sizeof(cm));
	msg.msg_control = cm.b;
	msg.msg_controllen = sizeof(cm.b);
	c = CMSG_FIRSTHDR(&msg);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(fds));
	memcpy(CMSG_DATA(c), fds, sizeof(fds));

	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	/* Bounds connect (a full backlog) and the send: never hang the application. */
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	do {
		r = connect(fd, (struct sockaddr *)&sun, sizeof(sun));
	} while (r < 0 && errno == EINTR);
	if (r < 0)
		goto fail;
	do {
		r = (int)sendmsg(fd, &msg, MSG_NOSIGNAL);
	} while (r < 0 && errno == EINTR);
	if (r < 0)
		goto fail;
	return fd;
fail:
	r = -errno;
	close(fd);
	return r;
}

int gt_session_goodbye(int fd, int status)
{
	struct msg_goodbye g = {.magic = MSG_MAGIC,
	                        .version = MSG_VERSION,
	                        .type = MSG_GOODBYE,
	                        .status = status == GT_SESSION_STATUS_UNKNOWN ? 0 : status,
	                        .has_status = status != GT_SESSION_STATUS_UNKNOWN};

	if (send(fd, &g, sizeof(g), MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
		return -errno;
	return 0;
}
