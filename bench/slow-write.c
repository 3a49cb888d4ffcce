/* A slow disk for bench/write-latency.sh, as an LD_PRELOAD library: every write(), writev()
 * and fsync() on a regular file returns GT_SLOW_WRITE_MS milliseconds late (the way a network
 * file system's calls can). Writes to pipes, sockets, eventfds and terminals are untouched,
 * so that only the trace file is slow. Runs in whatever process preloads it. (dlsym's void *
 * is stored into the function pointer's bytes, which is what POSIX requires to work.) */
#include <dlfcn.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

static long delay_ms = -1;

static void slow(int fd)
{
	struct stat st;
	struct timespec ts;

	if (delay_ms < 0) {
		const char *s = getenv("GT_SLOW_WRITE_MS");

		delay_ms = s ? atol(s) : 0;
	}
	if (delay_ms <= 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		return;
	ts.tv_sec = delay_ms / 1000;
	ts.tv_nsec = (delay_ms % 1000) * 1000000L;
	while (nanosleep(&ts, &ts) < 0) {
	}
}

ssize_t write(int fd, const void *buf, size_t len)
{
	static ssize_t (*real)(int, const void *, size_t);
	ssize_t r;

	if (!real)
		*(void **)&real = dlsym(RTLD_NEXT, "write");
	r = real(fd, buf, len);
	slow(fd);
	return r;
}

ssize_t writev(int fd, const struct iovec *iov, int n)
{
	static ssize_t (*real)(int, const struct iovec *, int);
	ssize_t r;

	if (!real)
		*(void **)&real = dlsym(RTLD_NEXT, "writev");
	r = real(fd, iov, n);
	slow(fd);
	return r;
}

int fsync(int fd)
{
	static int (*real)(int);
	int r;

	if (!real)
		*(void **)&real = dlsym(RTLD_NEXT, "fsync");
	r = real(fd);
	slow(fd);
	return r;
}
