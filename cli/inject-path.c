/* Finding libgputrace-inject.so relative to the gputrace executable, so an installed tree
 * can move as a whole and a build tree works without installing. Runs in the CLI. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gt-config.h"
#include "inject-path.h"

/* GT_INJECT_RELDIR (from cli/meson.build): the install directory of the library relative
 * to the directory of the installed executable, e.g. "../lib/x86_64-linux-gnu/gputrace". */
#ifndef GT_INJECT_RELDIR
#error "cli/meson.build must define GT_INJECT_RELDIR"
#endif

static void note_tried(char *tried, size_t bytes, const char *path)
{
	size_t len;

	if (!tried || !bytes)
		return;
	len = strlen(tried);
	snprintf(tried + len, bytes - len, "%s%s", len ? ", " : "", path);
}

/* 0 and the canonical path in out if `path` is a readable file, else -errno. */
static int try_path(const char *path, char *out, size_t bytes)
{
	char real[PATH_MAX];

	if (access(path, R_OK) < 0)
		return -errno;
	if (!realpath(path, real))
		return -errno;
	if (strlen(real) >= bytes)
		return -ENAMETOOLONG;
	strcpy(out, real);
	return 0;
}

/* dir + "/" + rel, resolving rel's leading "../" against dir so the paths we report read
 * cleanly; dir is modified. */
static void join(char *out, size_t bytes, char *dir, const char *rel)
{
	char *slash;

	while (strncmp(rel, "../", 3) == 0 && (slash = strrchr(dir, '/')) && slash != dir) {
		*slash = '\0';
		rel += 3;
	}
	snprintf(out, bytes, "%s/%s", dir, rel);
}

int gt_inject_find(char *out, size_t bytes, const char **how, char *tried, size_t tried_bytes)
{
	const char *env = getenv(GT_ENV_INJECT_LIB);
	char exe[PATH_MAX], cand[PATH_MAX + 64];
	ssize_t n;
	char *slash;
	int r;

	if (tried && tried_bytes)
		tried[0] = '\0';
	/* An explicit choice is never second-guessed: if it is wrong, say so. */
	if (env && *env) {
		note_tried(tried, tried_bytes, env);
		r = try_path(env, out, bytes);
		if (r == 0)
			*how = GT_ENV_INJECT_LIB;
		return r;
	}

	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = '\0';
		char dir[PATH_MAX];

		slash = strrchr(exe, '/');
		if (slash)
			*slash = '\0';
		strcpy(dir, exe);
		join(cand, sizeof(cand), dir, GT_INJECT_RELDIR "/" GT_INJECT_NAME);
		note_tried(tried, tried_bytes, cand);
		if (try_path(cand, out, bytes) == 0) {
			*how = "installed";
			return 0;
		}
		strcpy(dir, exe);
		join(cand, sizeof(cand), dir, "../collectors/" GT_INJECT_NAME);
		note_tried(tried, tried_bytes, cand);
		if (try_path(cand, out, bytes) == 0) {
			*how = "build tree";
			return 0;
		}
	}
	snprintf(cand, sizeof(cand), "%s/gputrace/%s", GT_LIBDIR, GT_INJECT_NAME);
	note_tried(tried, tried_bytes, cand);
	if (try_path(cand, out, bytes) == 0) {
		*how = "configured libdir";
		return 0;
	}
	return -ENOENT;
}
