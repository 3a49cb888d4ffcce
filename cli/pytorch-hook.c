/* Finding the start-up hook of `gputrace run --pytorch` relative to the gputrace executable,
 * as the injection library is found (inject-path.c). Runs in the CLI. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pytorch-hook.h"

/* GT_PYTORCH_RELDIR and GT_PYTORCH_DIR (cli/meson.build): the hook's install folder relative
 * to the installed executable's folder, and as configured. */
#if !defined(GT_PYTORCH_RELDIR) || !defined(GT_PYTORCH_DIR)
#error "cli/meson.build must define GT_PYTORCH_RELDIR and GT_PYTORCH_DIR"
#endif

#define HOOK "sitecustomize.py"

/* 0 and the folder's canonical path in out when dir/sitecustomize.py is readable. */
static int try_dir(const char *dir, char *out, size_t bytes, char *tried, size_t tried_bytes)
{
	char file[PATH_MAX + 32], real[PATH_MAX];
	size_t len = tried ? strlen(tried) : 0;

	if (tried && tried_bytes > len)
		snprintf(tried + len, tried_bytes - len, "%s%s", len ? ", " : "", dir);
	snprintf(file, sizeof(file), "%s/" HOOK, dir);
	if (access(file, R_OK) < 0 || !realpath(dir, real) || strlen(real) >= bytes)
		return -ENOENT;
	strcpy(out, real);
	return 0;
}

int gt_pytorch_hook_find(char *out, size_t bytes, char *tried, size_t tried_bytes)
{
	char exe[PATH_MAX], dir[PATH_MAX + 64];
	ssize_t n;
	char *slash;

	if (tried && tried_bytes)
		tried[0] = '\0';
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = '\0';
		slash = strrchr(exe, '/');
		if (slash)
			*slash = '\0';
		if (GT_PYTORCH_RELDIR[0] == '/')
			snprintf(dir, sizeof(dir), "%s", GT_PYTORCH_RELDIR);
		else
			snprintf(dir, sizeof(dir), "%s/%s", exe, GT_PYTORCH_RELDIR);
		if (try_dir(dir, out, bytes, tried, tried_bytes) == 0)
			return 0;
		snprintf(dir, sizeof(dir), "%s/../python/pytorch", exe);
		if (try_dir(dir, out, bytes, tried, tried_bytes) == 0)
			return 0;
	}
	return try_dir(GT_PYTORCH_DIR, out, bytes, tried, tried_bytes);
}
