/* Native frames to function names through elfutils' libdwfl: one Dwfl per file, reported at
 * bias 0 so that addresses are the file's own ELF addresses; symbols from its .symtab, or from
 * separate debug information (.gnu_debuglink, or .build-id/xx/yyyy.debug) when it is stripped.
 * Runs in the CLI, when exporting. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <elfutils/libdwfl.h>

#include "demangle.h"
#include "symbolize.h"

struct sym_file {
	char *key; /* path NUL build id, as looked up */
	Dwfl *dwfl;
	Dwfl_Module *mod; /* NULL: the file could not be used */
};

struct gt_symbolizer {
	struct sym_file *files; /* owned */
	size_t n, cap;
	char *debuginfo_path; /* owned; NULL: elfutils' default */
	Dwfl_Callbacks cb;
};

int gt_symbolizer_new(struct gt_symbolizer **ret)
{
	struct gt_symbolizer *s = calloc(1, sizeof(*s));
	const char *env = getenv(GT_DEBUGINFO_PATH_ENV);

	if (!s)
		return -ENOMEM;
	if (env && *env && !(s->debuginfo_path = strdup(env))) {
		free(s);
		return -ENOMEM;
	}
	s->cb.find_elf = dwfl_build_id_find_elf;
	s->cb.find_debuginfo = dwfl_standard_find_debuginfo;
	s->cb.debuginfo_path = s->debuginfo_path ? &s->debuginfo_path : NULL;
	*ret = s;
	return 0;
}

void gt_symbolizer_free(struct gt_symbolizer *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++) {
		free(s->files[i].key);
		if (s->files[i].dwfl)
			dwfl_end(s->files[i].dwfl);
	}
	free(s->files);
	free(s->debuginfo_path);
	free(s);
}

/* The module's build id as lowercase hex equals `hex`? */
static bool same_build_id(Dwfl_Module *mod, const char *hex)
{
	const unsigned char *bits;
	GElf_Addr vaddr;
	int len = dwfl_module_build_id(mod, &bits, &vaddr);
	char have[2 * 64 + 1];

	if (len <= 0 || len > 64)
		return false;
	for (int i = 0; i < len; i++)
		snprintf(have + 2 * i, 3, "%02x", bits[i]);
	return strcmp(have, hex) == 0;
}

static Dwfl_Module *report(struct gt_symbolizer *s, const char *file, Dwfl **dwfl)
{
	Dwfl_Module *mod;

	*dwfl = dwfl_begin(&s->cb);
	if (!*dwfl)
		return NULL;
	dwfl_report_begin(*dwfl);
	mod = dwfl_report_elf(*dwfl, file, file, -1, 0, false);
	dwfl_report_end(*dwfl, NULL, NULL);
	if (!mod) {
		dwfl_end(*dwfl);
		*dwfl = NULL;
	}
	return mod;
}

/* The file itself when it is there and its build id is the recorded one; else separate debug
 * information found by build id under each directory of the debuginfo path. */
static void open_file(struct gt_symbolizer *s, struct sym_file *f, const char *path,
                      const char *build_id)
{
	char dirs[4096], cand[4096];
	char *save = NULL, *dir;

	if (path && *path && access(path, R_OK) == 0) {
		f->mod = report(s, path, &f->dwfl);
		if (f->mod && (!build_id || !*build_id || same_build_id(f->mod, build_id)))
			return;
		if (f->dwfl)
			dwfl_end(f->dwfl);
		f->dwfl = NULL;
		f->mod = NULL;
	}
	if (!build_id || strlen(build_id) < 3)
		return;
	snprintf(dirs, sizeof(dirs), "%s",
	         s->debuginfo_path ? s->debuginfo_path : "/usr/lib/debug");
	for (dir = strtok_r(dirs, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
		if (*dir == '+' || *dir == '-')
			dir++;
		if (*dir != '/')
			continue; /* relative entries name places beside the file, which is gone */
		snprintf(cand, sizeof(cand), "%s/.build-id/%.2s/%s.debug", dir, build_id,
		         build_id + 2);
		if (access(cand, R_OK) != 0)
			continue;
		f->mod = report(s, cand, &f->dwfl);
		if (f->mod)
			return;
	}
}

static struct sym_file *file_of(struct gt_symbolizer *s, const char *path, const char *build_id)
{
	size_t plen = strlen(path), blen = build_id ? strlen(build_id) : 0;
	struct sym_file *f;
	char *key;

	for (size_t i = 0; i < s->n; i++) {
		key = s->files[i].key;
		if (strcmp(key, path) == 0 && strcmp(key + plen + 1, build_id ? build_id : "") == 0)
			return &s->files[i];
	}
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 16;
		struct sym_file *n = realloc(s->files, cap * sizeof(*n));

		if (!n)
			return NULL;
		s->files = n;
		s->cap = cap;
	}
	key = malloc(plen + blen + 2);
	if (!key)
		return NULL;
	memcpy(key, path, plen + 1);
	memcpy(key + plen + 1, build_id ? build_id : "", blen + 1);
	f = &s->files[s->n++];
	*f = (struct sym_file){key, NULL, NULL};
	open_file(s, f, path, build_id);
	return f;
}

const char *gt_symbolize(struct gt_symbolizer *s, const char *path, const char *build_id,
                         uint64_t addr, char *buf, size_t bytes)
{
	struct sym_file *f;
	const char *name, *at;
	static _Thread_local char plain[1024];

	if (!path || !bytes)
		return NULL;
	f = file_of(s, path, build_id);
	if (!f || !f->mod)
		return NULL;
	name = dwfl_module_addrname(f->mod, addr);
	if (!name)
		return NULL;
	at = strchr(name, '@');
	if (at && at > name) {
		/* a versioned symbol ("__libc_start_main@@GLIBC_2.34"): the function's name */
		snprintf(plain, sizeof(plain), "%.*s", (int)(at - name), name);
		name = plain;
	}
	return gt_demangle(name, buf, bytes);
}
