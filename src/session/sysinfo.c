/* The NVIDIA kernel module's version, for trace headers and `gputrace doctor`.
 * Runs in both processes (the injection library and the CLI). */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "sysinfo.h"

bool gt_sysinfo_parse_driver_version(const char *line, char *buf, size_t bytes)
{
	const char *p = line;

	while (*p) {
		size_t len;

		p += strspn(p, " \t\n");
		len = strcspn(p, " \t\n");
		if (len && p[0] >= '0' && p[0] <= '9' && memchr(p, '.', len)) {
			snprintf(buf, bytes, "%.*s", (int)len, p);
			return true;
		}
		p += len;
	}
	return false;
}

bool gt_sysinfo_driver_version(char *buf, size_t bytes)
{
	char line[512];
	ssize_t n;
	int fd;

	/* open/read rather than stdio: also called inside the traced application */
	fd = open("/proc/driver/nvidia/version", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, line, sizeof(line) - 1);
	close(fd);
	if (n <= 0)
		return false;
	line[n] = '\0';
	line[strcspn(line, "\n")] = '\0'; /* the first line holds the module's version */
	return gt_sysinfo_parse_driver_version(line, buf, bytes);
}
