/* What a traced process says about itself when it registers: pid, ppid, executable, command
 * line, host and the rank variables of common launchers. Runs inside the traced process. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gputrace/record.h"
#include "session.h"

/* The first of `names` that is set to a whole decimal number, or -1. */
static int32_t env_rank(const char *const *names)
{
	for (; *names; names++) {
		const char *v = getenv(*names);
		char *end;
		long r;

		if (!v || !*v)
			continue;
		errno = 0;
		r = strtol(v, &end, 10);
		if (errno || *end || r < 0 || r > INT32_MAX)
			continue;
		return (int32_t)r;
	}
	return -1;
}

/* Does an argument need quoting to read back as one shell word? */
static bool needs_quotes(const char *a, size_t len)
{
	size_t i;

	if (!len)
		return true;
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)a[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      strchr("-_./=:,+@%", c)))
			return true;
	}
	return false;
}

/* Append `n` bytes to out[*pos..cap); returns false (and stops) once full. */
static bool put(char *out, size_t cap, size_t *pos, const char *s, size_t n)
{
	if (*pos + n > cap)
		return false;
	memcpy(out + *pos, s, n);
	*pos += n;
	return true;
}

/* argv from /proc/self/cmdline, joined by spaces, each argument shell-quoted when needed.
 * Writes at most cap bytes (no NUL) and returns the length. */
static size_t read_cmdline(char *out, size_t cap)
{
	char raw[GT_STRING_MAX];
	size_t len = 0, pos = 0, i = 0;
	ssize_t n;
	int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	while (len < sizeof(raw) && (n = read(fd, raw + len, sizeof(raw) - len)) > 0)
		len += (size_t)n;
	close(fd);
	while (i < len) {
		const char *a = raw + i;
		size_t alen = strnlen(a, len - i), j;

		if (pos && !put(out, cap, &pos, " ", 1))
			break;
		if (!needs_quotes(a, alen)) {
			if (!put(out, cap, &pos, a, alen))
				break;
		} else {
			bool ok = put(out, cap, &pos, "'", 1);

			for (j = 0; ok && j < alen; j++)
				ok = a[j] == '\'' ? put(out, cap, &pos, "'\\''", 4)
				                  : put(out, cap, &pos, a + j, 1);
			if (!ok || !put(out, cap, &pos, "'", 1))
				break;
		}
		i += alen + 1;
	}
	return pos;
}

int gt_process_info_self(struct gt_process_info *info, char *buf, size_t buf_bytes)
{
	static const char *const rank_vars[] = {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK",
	                                        "SLURM_PROCID",         "RANK",     NULL};
	static const char *const local_vars[] = {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID",
	                                         "SLURM_LOCALID", "LOCAL_RANK", NULL};
	static const char *const size_vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS",
	                                        "WORLD_SIZE", NULL};
	size_t pos = 0, cap, n;
	ssize_t r;

	/* Room for three NUL-terminated strings, however short. */
	if (buf_bytes < 3)
		return -ENOBUFS;
	memset(info, 0, sizeof(*info));
	info->pid = (uint32_t)getpid();
	info->ppid = (uint32_t)getppid();
	info->rank = env_rank(rank_vars);
	info->local_rank = env_rank(local_vars);
	info->world_size = env_rank(size_vars);

	/* Each string gets at most a third of what is left of buf, and GT_STRING_MAX. */
	cap = (buf_bytes - pos) / 3 - 1;
	cap = cap < GT_STRING_MAX ? cap : GT_STRING_MAX;
	r = readlink("/proc/self/exe", buf + pos, cap);
	n = r > 0 ? (size_t)r : 0;
	buf[pos + n] = '\0';
	info->exe = buf + pos;
	pos += n + 1;

	cap = (buf_bytes - pos) / 2 - 1;
	cap = cap < GT_STRING_MAX ? cap : GT_STRING_MAX;
	n = read_cmdline(buf + pos, cap);
	buf[pos + n] = '\0';
	info->cmdline = buf + pos;
	pos += n + 1;

	cap = buf_bytes - pos - 1;
	cap = cap < GT_STRING_MAX ? cap : GT_STRING_MAX;
	if (gethostname(buf + pos, cap + 1) < 0)
		buf[pos] = '\0';
	buf[pos + cap] = '\0';
	info->hostname = buf + pos;
	return 0;
}
