/* The one output path (see output.h): checks before anything is written, temporaries beside
 * the final names, renames at commit, stale files swept, temporaries removed on failure and
 * on signals. Runs in the CLI. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "output.h"

/* A temporary that a signal may have to remove: on one list for every output of the
 * process, which the handler walks. Nodes are linked and unlinked with the cleanup signals
 * blocked, so the handler never sees a node half made or freed. */
struct tmpnode {
	struct tmpnode *next;
	volatile sig_atomic_t live; /* 1: still to be removed on a signal */
	bool dir;                   /* rmdir, not unlink */
	char path[];
};

static struct tmpnode *volatile tmp_list;

struct member {
	char *final; /* the name it gets at commit; owned */
	dev_t dev;   /* and, once renamed, what it is (the sweep compares these) */
	ino_t ino;
	struct tmpnode *tmp;   /* its temporary on the list; NULL for a file inside tmpdir */
	struct tmpnode *inner; /* a file inside a directory output's temporary */
};

struct gt_output {
	char *path;   /* as given; owned */
	char *target; /* symlinks followed; owned */
	unsigned flags;
	bool is_stdout;
	bool committed;
	int create_err; /* -errno of the last file that could not be created, or 0 */
	mode_t mode;    /* of new files: 0644 less the umask */
	mode_t dmode;   /* of a new folder: 0777 less the umask */

	struct stat *inputs; /* st_ino 0: could not be read (reported by whoever reads it) */
	char **input_real;   /* realpath() of each input, or NULL */
	const char *const *input_names; /* as given; borrowed until gt_output_free */
	unsigned ninputs;

	struct member *members;
	unsigned nmembers, cap_members;
	struct tmpnode *tmpdir;   /* GT_OUTPUT_DIR: the directory written into */
	struct tmpnode **subdirs; /* folders made inside it, in order */
	unsigned nsubdirs, cap_subdirs;
	struct tmpnode *adopted[4];
	unsigned nadopted;

	char *sweep_dir; /* owned; NULL: no sweep */
	bool (*sweep_match)(const char *name, void *ctx);
	void *sweep_ctx;
	void (*sweep_ctx_free)(void *ctx);
};

static int fail(struct gt_output_error *err, int ret, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

static int fail(struct gt_output_error *err, int ret, const char *fmt, ...)
{
	va_list ap;

	if (err) {
		va_start(ap, fmt);
		vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
		va_end(ap);
	}
	return ret;
}

static void block_signals(sigset_t *old)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGXFSZ);
	sigprocmask(SIG_BLOCK, &set, old);
}

static struct tmpnode *node_push(const char *path, bool dir)
{
	size_t len = strlen(path);
	struct tmpnode *n = malloc(sizeof(*n) + len + 1);
	sigset_t old;

	if (!n)
		return NULL;
	memcpy(n->path, path, len + 1);
	n->dir = dir;
	n->live = 1;
	block_signals(&old);
	n->next = tmp_list;
	tmp_list = n;
	sigprocmask(SIG_SETMASK, &old, NULL);
	return n;
}

/* Take n off the list and free it (NULL: nothing). */
static void node_drop(struct tmpnode *n)
{
	struct tmpnode *volatile *p;
	sigset_t old;

	if (!n)
		return;
	block_signals(&old);
	for (p = &tmp_list; *p; p = &(*p)->next) {
		if (*p == n) {
			*p = n->next;
			break;
		}
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	free(n);
}

/* Remove a temporary that is still there, and take it off the list. */
static void node_remove(struct tmpnode *n)
{
	if (!n)
		return;
	if (n->live)
		(void)(n->dir ? rmdir(n->path) : unlink(n->path));
	n->live = 0;
	node_drop(n);
}

void gt_output_signal_cleanup(void)
{
	/* newest first: the files inside a temporary directory go before the directory */
	for (struct tmpnode *n = tmp_list; n; n = n->next) {
		if (!n->live)
			continue;
		if (n->dir)
			rmdir(n->path);
		else
			unlink(n->path);
		n->live = 0;
	}
}

/* dirname and basename of path into dir and base (dir "." when path has no slash). */
static int split_path(const char *path, char *dir, size_t dsize, const char **base)
{
	const char *slash = strrchr(path, '/');
	size_t dlen;

	if (!slash) {
		snprintf(dir, dsize, ".");
		*base = path;
		return 0;
	}
	dlen = slash == path ? 1 : (size_t)(slash - path);
	if (dlen >= dsize)
		return -ENAMETOOLONG;
	memcpy(dir, path, dlen);
	dir[dlen] = '\0';
	*base = slash + 1;
	return 0;
}

static const char *kind_of(mode_t m)
{
	if (S_ISFIFO(m))
		return "a FIFO";
	if (S_ISCHR(m))
		return "a character device";
	if (S_ISBLK(m))
		return "a block device";
	if (S_ISSOCK(m))
		return "a socket";
	if (S_ISDIR(m))
		return "a directory";
	return "not a regular file";
}

/* Where a name lands: itself, or what its symlinks lead to. *ret owned by the caller;
 * *st_ret filled when it exists (st_ret->st_mode 0 when not). */
static int resolve(const char *name, bool want_dir, char **ret, struct stat *st_ret,
                   struct gt_output_error *err)
{
	char dir[PATH_MAX];
	const char *base;
	struct stat st;

	memset(st_ret, 0, sizeof(*st_ret));
	if (lstat(name, &st) < 0) {
		if (errno != ENOENT)
			return fail(err, -errno, "%s: %s", name, strerror(errno));
		if (split_path(name, dir, sizeof(dir), &base) < 0)
			return fail(err, -ENAMETOOLONG, "%s: %s", name, strerror(ENAMETOOLONG));
		if (stat(dir, &st) < 0)
			return fail(err, -errno, "cannot create %s: %s%s", name,
			            errno == ENOENT ? "its folder does not exist" : "",
			            errno == ENOENT ? "" : strerror(errno));
		if (!S_ISDIR(st.st_mode))
			return fail(err, -ENOTDIR, "cannot create %s: %s is not a folder", name,
			            dir);
		*ret = strdup(name);
		return *ret ? 0 : -ENOMEM;
	}
	if (S_ISLNK(st.st_mode)) {
		char *real = realpath(name, NULL);

		if (!real)
			return fail(err, errno == ENOENT ? -ENOENT : -errno,
			            "%s is a symbolic link to %s; give the file's own name or "
			            "remove the link",
			            name,
			            errno == ENOENT ? "a file that does not exist" : "nothing");
		if (stat(real, &st) < 0) {
			int e = errno;

			free(real);
			return fail(err, -e, "%s: %s", name, strerror(e));
		}
		*ret = real;
	} else {
		*ret = strdup(name);
		if (!*ret)
			return -ENOMEM;
	}
	*st_ret = st;
	if (want_dir && !S_ISDIR(st.st_mode)) {
		free(*ret);
		*ret = NULL;
		return fail(err, -ENOTDIR,
		            "%s exists and is %s, not a folder; choose another output name", name,
		            S_ISREG(st.st_mode) ? "a file" : kind_of(st.st_mode));
	}
	if (!want_dir && !S_ISREG(st.st_mode)) {
		free(*ret);
		*ret = NULL;
		return fail(err, S_ISDIR(st.st_mode) ? -EISDIR : -EPERM,
		            "%s is %s; an output is written only as a regular file (or - for "
		            "standard output)",
		            name, kind_of(st.st_mode));
	}
	return 0;
}

/* -EEXIST when a file with st is input i. */
static int check_inputs(const struct gt_output *o, const char *name, const struct stat *st,
                        struct gt_output_error *err)
{
	if (!st->st_mode)
		return 0;
	for (unsigned i = 0; i < o->ninputs; i++) {
		if (o->inputs[i].st_ino && o->inputs[i].st_ino == st->st_ino &&
		    o->inputs[i].st_dev == st->st_dev) {
			if (err)
				err->input = (int)i;
			return fail(err, -EEXIST,
			            "the output %s is the input %s (the same file): choose another "
			            "output name",
			            name, o->input_names[i]);
		}
	}
	return 0;
}

int gt_output_open(const char *path, const char *const *inputs, unsigned ninputs, unsigned flags,
                   struct gt_output **ret, struct gt_output_error *err)
{
	struct gt_output *o;
	struct stat st;
	mode_t mask;
	int r = -ENOMEM;

	if (err) {
		err->input = -1;
		err->msg[0] = '\0';
	}
	if (!path || !*path)
		return fail(err, -EINVAL, "an empty output name");
	if (strcmp(path, "-") == 0 && (flags & GT_OUTPUT_NO_STDOUT))
		return fail(err, -EINVAL,
		            "this output is %s, which standard output cannot hold: give a name "
		            "with -o",
		            (flags & GT_OUTPUT_DIR) ? "a folder of files" : "a file of its own");
	o = calloc(1, sizeof(*o));
	if (!o)
		return -ENOMEM;
	o->flags = flags;
	o->path = strdup(path);
	if (!o->path)
		goto out;
	for (size_t n = strlen(o->path); n > 1 && o->path[n - 1] == '/'; n--)
		o->path[n - 1] = '\0'; /* "out/" names the folder out */
	mask = umask(0);
	umask(mask);
	o->mode = 0644 & ~mask;
	o->dmode = 0777 & ~mask;
	if (strcmp(path, "-") == 0) {
		o->is_stdout = true;
		*ret = o;
		return 0;
	}
	o->inputs = calloc(ninputs ? ninputs : 1, sizeof(*o->inputs));
	o->input_real = calloc(ninputs ? ninputs : 1, sizeof(*o->input_real));
	if (!o->inputs || !o->input_real)
		goto out;
	o->ninputs = ninputs;
	o->input_names = inputs;
	for (unsigned i = 0; i < ninputs; i++) {
		if (stat(inputs[i], &o->inputs[i]) < 0)
			o->inputs[i].st_ino = 0;
		o->input_real[i] = realpath(inputs[i], NULL);
	}
	r = resolve(o->path, flags & GT_OUTPUT_DIR, &o->target, &st, err);
	if (r < 0)
		goto out;
	if (flags & GT_OUTPUT_DIR) {
		char *real = st.st_mode ? realpath(o->target, NULL) : NULL;
		size_t len = real ? strlen(real) : 0;

		for (unsigned i = 0; real && i < ninputs; i++) {
			const char *in = o->input_real[i];

			if (in && strncmp(in, real, len) == 0 && in[len] == '/') {
				if (err)
					err->input = (int)i;
				r = fail(err, -EEXIST,
				         "the output folder %s holds the input %s, which replacing "
				         "it would remove: choose another output name",
				         path, inputs[i]);
				free(real);
				goto out;
			}
		}
		free(real);
	} else {
		r = check_inputs(o, path, &st, err);
		if (r < 0)
			goto out;
	}
	*ret = o;
	return 0;
out:
	gt_output_free(o);
	return r;
}

bool gt_output_is_stdout(const struct gt_output *o)
{
	return o->is_stdout;
}

const char *gt_output_path(const struct gt_output *o)
{
	return o->path;
}

const char *gt_output_target(const struct gt_output *o)
{
	return o->is_stdout ? o->path : o->target;
}

static int add_member(struct gt_output *o, char *final, struct tmpnode *tmp, struct tmpnode *inner)
{
	if (o->nmembers == o->cap_members) {
		unsigned cap = o->cap_members ? o->cap_members * 2 : 8;
		struct member *m = realloc(o->members, cap * sizeof(*m));

		if (!m)
			return -ENOMEM;
		o->members = m;
		o->cap_members = cap;
	}
	o->members[o->nmembers++] = (struct member){.final = final, .tmp = tmp, .inner = inner};
	return 0;
}

/* The member named final, or NULL. */
static struct member *find_member(struct gt_output *o, const char *final)
{
	for (unsigned i = 0; i < o->nmembers; i++)
		if (strcmp(o->members[i].final, final) == 0)
			return &o->members[i];
	return NULL;
}

/* Whether a file with st is a committed member. */
static bool is_member_file(const struct gt_output *o, const struct stat *st)
{
	for (unsigned i = 0; i < o->nmembers; i++)
		if (o->members[i].ino == st->st_ino && o->members[i].dev == st->st_dev)
			return true;
	return false;
}

/* Forget member m and remove its temporary: the file is written again from the start. */
static void drop_member(struct gt_output *o, struct member *m)
{
	node_remove(m->inner);
	node_remove(m->tmp);
	free(m->final);
	*m = o->members[--o->nmembers];
}

/* A directory output's temporary directory, made beside it on first use. */
static int make_tmpdir(struct gt_output *o, struct gt_output_error *err)
{
	char dir[PATH_MAX], tmpl[PATH_MAX];
	const char *base;
	sigset_t old;
	bool made;
	int e;

	if (o->tmpdir)
		return 0;
	if (split_path(o->target, dir, sizeof(dir), &base) < 0 ||
	    snprintf(tmpl, sizeof(tmpl), "%s/.%s.gt-XXXXXX", dir, base) >= (int)sizeof(tmpl))
		return fail(err, -ENAMETOOLONG, "%s: %s", o->path, strerror(ENAMETOOLONG));
	/* made and on the list with the cleanup signals blocked: a signal between the two
	 * would leave it behind */
	block_signals(&old);
	made = mkdtemp(tmpl) != NULL;
	e = errno;
	if (made)
		o->tmpdir = node_push(tmpl, true);
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (!made)
		return fail(err, -e, "cannot create %s: %s", o->path, strerror(e));
	if (!o->tmpdir) {
		rmdir(tmpl);
		return -ENOMEM;
	}
	/* mkdtemp makes it 0700; the folder gets the mode mkdir() would have given it */
	(void)chmod(tmpl, o->dmode);
	return 0;
}

/* Where a file of a directory output goes inside it: name's path below the output's name
 * ("OUT/rank=0/T.parquet": "rank=0/T.parquet"), else its last part; NULL when a part is
 * empty, ".", "..", hidden, or the file lies more than GT_OUTPUT_MAX_DEPTH folders deep. */
static const char *dir_relative(const struct gt_output *o, const char *name)
{
	size_t plen = strlen(o->path);
	const char *rel, *p;
	int depth = 0;

	if (strncmp(name, o->path, plen) == 0 && name[plen] == '/') {
		rel = name + plen + 1;
	} else {
		rel = strrchr(name, '/');
		rel = rel ? rel + 1 : name;
	}
	for (p = rel;; depth++) {
		size_t n = strcspn(p, "/");

		if (n == 0 || p[0] == '.')
			return NULL;
		if (!p[n])
			break;
		p += n + 1;
	}
	return depth <= GT_OUTPUT_MAX_DEPTH ? rel : NULL;
}

/* The folders of rel (a path inside a directory output) made inside its temporary, each
 * on the list of temporaries, so that a failure or a signal removes them after their files.
 * Returns 0 or -errno with err. */
static int make_subdirs(struct gt_output *o, const char *rel, const char *final,
                        struct gt_output_error *err)
{
	char path[PATH_MAX];
	const char *p;

	for (p = strchr(rel, '/'); p; p = strchr(p + 1, '/')) {
		struct stat st;
		sigset_t old;
		bool made;
		int e;

		if (snprintf(path, sizeof(path), "%s/%.*s", o->tmpdir->path, (int)(p - rel), rel) >=
		    (int)sizeof(path))
			return fail(err, -ENAMETOOLONG, "%s: %s", final, strerror(ENAMETOOLONG));
		if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode))
			continue;
		if (o->nsubdirs >= GT_OUTPUT_MAX_SUBDIRS)
			return fail(err, -ENOSPC, "cannot create %s: more than %u folders in %s",
			            final, GT_OUTPUT_MAX_SUBDIRS, o->path);
		if (o->nsubdirs == o->cap_subdirs) {
			unsigned cap = o->cap_subdirs ? o->cap_subdirs * 2 : 8;
			struct tmpnode **n = realloc(o->subdirs, cap * sizeof(*n));

			if (!n)
				return -ENOMEM;
			o->subdirs = n;
			o->cap_subdirs = cap;
		}
		block_signals(&old); /* made and listed as one step (make_tmpdir) */
		made = mkdir(path, o->dmode) == 0;
		e = errno;
		if (made)
			o->subdirs[o->nsubdirs] = node_push(path, true);
		sigprocmask(SIG_SETMASK, &old, NULL);
		if (!made)
			return fail(err, -e, "cannot create %s: %s", final, strerror(e));
		if (!o->subdirs[o->nsubdirs]) {
			rmdir(path);
			return -ENOMEM;
		}
		o->nsubdirs++;
	}
	return 0;
}

/* Create the temporary for a member with final name `final` (already checked); *fd open. */
static int create_member(struct gt_output *o, const char *final, int *fd,
                         struct gt_output_error *err)
{
	char dir[PATH_MAX], tmpl[PATH_MAX];
	struct tmpnode *n = NULL, *inner = NULL;
	const char *base;
	char *fin = strdup(final);
	sigset_t old;
	int r, e;

	if (!fin)
		return -ENOMEM;
	if (split_path(final, dir, sizeof(dir), &base) < 0) {
		r = fail(err, -ENAMETOOLONG, "%s: %s", final, strerror(ENAMETOOLONG));
		goto out;
	}
	if (o->flags & GT_OUTPUT_DIR) {
		const char *rel = final + strlen(o->target) + 1;

		r = make_tmpdir(o, err);
		if (r == 0)
			r = make_subdirs(o, rel, final, err);
		if (r < 0)
			goto out;
		if (snprintf(tmpl, sizeof(tmpl), "%s/%s", o->tmpdir->path, rel) >=
		    (int)sizeof(tmpl)) {
			r = fail(err, -ENAMETOOLONG, "%s: %s", final, strerror(ENAMETOOLONG));
			goto out;
		}
		block_signals(&old); /* made and listed as one step (make_tmpdir) */
		*fd = open(tmpl, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, o->mode);
		e = errno;
		if (*fd >= 0)
			inner = node_push(tmpl, false);
		sigprocmask(SIG_SETMASK, &old, NULL);
		if (*fd < 0) {
			r = fail(err, -e, "cannot create %s: %s", final, strerror(e));
			goto out;
		}
		if (!inner) {
			close(*fd);
			unlink(tmpl);
			r = -ENOMEM;
			goto out;
		}
	} else {
		if (snprintf(tmpl, sizeof(tmpl), "%s/.%s.gt-XXXXXX", dir, base) >=
		    (int)sizeof(tmpl)) {
			r = fail(err, -ENAMETOOLONG, "%s: %s", final, strerror(ENAMETOOLONG));
			goto out;
		}
		block_signals(&old); /* made and listed as one step (make_tmpdir) */
		*fd = mkostemp(tmpl, O_CLOEXEC);
		e = errno;
		if (*fd >= 0)
			n = node_push(tmpl, false);
		sigprocmask(SIG_SETMASK, &old, NULL);
		if (*fd < 0) {
			r = fail(err, -e, "cannot create %s: %s", final, strerror(e));
			goto out;
		}
		/* mkostemp makes it 0600; the file gets the mode open() would have given it */
		(void)fchmod(*fd, o->mode);
		if (!n) {
			close(*fd);
			unlink(tmpl);
			r = -ENOMEM;
			goto out;
		}
	}
	r = add_member(o, fin, n, inner);
	if (r < 0) {
		close(*fd);
		node_remove(n);
		node_remove(inner);
		goto out;
	}
	return 0;
out:
	free(fin);
	return r;
}

/* The checked final name of a member: name, or its symlink's target; NULL: the output. */
static int member_final(struct gt_output *o, const char *name, char **final,
                        struct gt_output_error *err)
{
	struct stat st;
	int r;

	if (!name) {
		if (o->flags & GT_OUTPUT_DIR)
			return fail(err, -EINVAL, "%s is a folder: name a file inside it", o->path);
		*final = strdup(o->target);
		return *final ? 0 : -ENOMEM;
	}
	if (o->flags & GT_OUTPUT_DIR) {
		const char *rel = dir_relative(o, name);

		if (!rel)
			return fail(err, -EINVAL,
			            "%s: not a file name inside the folder (at most %d folders "
			            "deep, no empty, '.' or '..' part)",
			            name, GT_OUTPUT_MAX_DEPTH);
		*final = malloc(strlen(o->target) + strlen(rel) + 2);
		if (!*final)
			return -ENOMEM;
		sprintf(*final, "%s/%s", o->target, rel);
		return 0;
	}
	r = resolve(name, false, final, &st, err);
	if (r == 0) {
		r = check_inputs(o, name, &st, err);
		if (r < 0) {
			free(*final);
			*final = NULL;
		}
	}
	return r;
}

int gt_output_create(struct gt_output *o, const char *name, int *ret_fd,
                     struct gt_output_error *err)
{
	struct member *m;
	char *final = NULL;
	int r, fd;

	if (err) {
		err->input = -1;
		err->msg[0] = '\0';
	}
	if (o->is_stdout) {
		*ret_fd = STDOUT_FILENO;
		return 0;
	}
	if (o->committed)
		return fail(err, -EINVAL, "%s: already complete", o->path);
	r = member_final(o, name, &final, err);
	if (r == 0) {
		m = find_member(o, final);
		if (m) /* written again (a piece that came out too large, cut and redone) */
			drop_member(o, m);
		r = create_member(o, final, &fd, err);
	}
	if (r == 0)
		*ret_fd = fd;
	else
		o->create_err = r;
	free(final);
	return r;
}

int gt_output_create_error(const struct gt_output *o)
{
	return o ? o->create_err : 0;
}

int gt_output_create_path(struct gt_output *o, const char *name, const char **ret_tmp,
                          struct gt_output_error *err)
{
	struct member *m;
	int fd, r;

	if (o->is_stdout)
		return fail(err, -EINVAL,
		            "this output cannot go to standard output: give a name "
		            "with -o");
	r = gt_output_create(o, name, &fd, err);
	if (r < 0)
		return r;
	close(fd);
	m = &o->members[o->nmembers - 1];
	*ret_tmp = m->tmp ? m->tmp->path : m->inner->path;
	return 0;
}

int gt_output_adopt(struct gt_output *o, const char *tmp)
{
	if (o->nadopted == sizeof(o->adopted) / sizeof(o->adopted[0]))
		return -ENOMEM;
	o->adopted[o->nadopted] = node_push(tmp, false);
	if (!o->adopted[o->nadopted])
		return -ENOMEM;
	o->nadopted++;
	return 0;
}

/* Whether name in dir is one of the inputs (never swept). */
static bool is_input(const struct gt_output *o, const char *path)
{
	struct stat st;

	if (stat(path, &st) < 0)
		return false;
	for (unsigned i = 0; i < o->ninputs; i++)
		if (o->inputs[i].st_ino == st.st_ino && o->inputs[i].st_dev == st.st_dev)
			return true;
	return false;
}

/* Whether every entry of folder dir (rel: its path inside the output, "" or "SUB/") is a
 * regular file that match() accepts, or a folder that match() accepts as "NAME/" and whose
 * entries are alike, at most GT_OUTPUT_MAX_DEPTH folders down; else the first one that is
 * not into bad (its path inside the output). */
static bool tree_matches(const char *dir, const char *rel, int depth,
                         bool (*match)(const char *name, void *ctx), void *ctx, char *bad,
                         size_t bad_size)
{
	DIR *d = opendir(dir); /* closed below */
	struct dirent *e;
	bool ok = true;

	if (!d)
		return errno == ENOENT;
	while (ok && (e = readdir(d)) != NULL) {
		char name[NAME_MAX + 2], path[PATH_MAX], sub[PATH_MAX];

		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		snprintf(bad, bad_size, "%s%s", rel, e->d_name);
		if (e->d_type == DT_REG) {
			ok = match(e->d_name, ctx);
			continue;
		}
		snprintf(name, sizeof(name), "%s/", e->d_name);
		ok = e->d_type == DT_DIR && depth < GT_OUTPUT_MAX_DEPTH && match(name, ctx) &&
		     snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) < (int)sizeof(path) &&
		     snprintf(sub, sizeof(sub), "%s%s/", rel, e->d_name) < (int)sizeof(sub) &&
		     tree_matches(path, sub, depth + 1, match, ctx, bad, bad_size);
	}
	closedir(d);
	return ok;
}

/* Remove what tree_matches() accepted in folder dir: the files match() accepts, then the
 * folders it accepts, emptied the same way. */
static void tree_clear(const char *dir, int depth, bool (*match)(const char *name, void *ctx),
                       void *ctx)
{
	DIR *d = opendir(dir); /* closed below */
	struct dirent *e;

	while (d && (e = readdir(d)) != NULL) {
		char name[NAME_MAX + 2], path[PATH_MAX];

		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 ||
		    snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) >= (int)sizeof(path))
			continue;
		snprintf(name, sizeof(name), "%s/", e->d_name);
		if (e->d_type == DT_REG && match(e->d_name, ctx)) {
			unlink(path);
		} else if (e->d_type == DT_DIR && depth < GT_OUTPUT_MAX_DEPTH && match(name, ctx)) {
			tree_clear(path, depth + 1, match, ctx);
			rmdir(path);
		}
	}
	if (d)
		closedir(d);
}

int gt_output_sweep(struct gt_output *o, const char *dir,
                    bool (*match)(const char *name, void *ctx), void *ctx,
                    void (*ctx_free)(void *ctx), struct gt_output_error *err)
{
	if (o->sweep_ctx_free)
		o->sweep_ctx_free(o->sweep_ctx);
	o->sweep_ctx = ctx;
	o->sweep_ctx_free = ctx_free;
	if (o->is_stdout)
		return 0;
	free(o->sweep_dir);
	o->sweep_dir = strdup((o->flags & GT_OUTPUT_DIR) ? o->target : dir);
	if (!o->sweep_dir)
		return -ENOMEM;
	o->sweep_match = match;
	if (o->flags & GT_OUTPUT_DIR) {
		DIR *d = opendir(o->target); /* closed below */
		char bad[PATH_MAX];
		int r = 0;

		if (!d)
			return errno == ENOENT
			               ? 0
			               : fail(err, -errno, "%s: %s", o->path, strerror(errno));
		closedir(d);
		if (!tree_matches(o->target, "", 0, match, ctx, bad, sizeof(bad)))
			r = fail(err, -ENOTEMPTY,
			         "%s exists and holds other files than an export's (%s): "
			         "choose another output name, or empty it",
			         o->path, bad);
		return r;
	}
	return 0;
}

/* Remove what the sweep matches in its folder and this output did not write. */
static void sweep(struct gt_output *o, const char *dir)
{
	DIR *d = opendir(dir); /* closed below */
	struct dirent *e;
	char path[PATH_MAX];
	struct stat st;

	if (!d)
		return;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.' || !o->sweep_match(e->d_name, o->sweep_ctx))
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) >= (int)sizeof(path))
			continue;
		if (lstat(path, &st) < 0 || !S_ISREG(st.st_mode) || is_member_file(o, &st) ||
		    is_input(o, path))
			continue;
		unlink(path);
	}
	closedir(d);
}

/* Replace the directory output: exchange it with the temporary, then clear the old one. */
static int commit_dir(struct gt_output *o, struct gt_output_error *err)
{
	struct stat st;

	if (!o->tmpdir) { /* no file: the output is an empty folder */
		int r = make_tmpdir(o, err);

		if (r < 0)
			return r;
	}
	if (lstat(o->target, &st) == 0) {
		if (renameat2(AT_FDCWD, o->tmpdir->path, AT_FDCWD, o->target, RENAME_EXCHANGE) < 0)
			return fail(err, -errno, "cannot replace %s: %s", o->path, strerror(errno));
		/* the temporary's name now holds the earlier export, whose files the sweep
		 * accepted: remove them and it */
		for (unsigned i = 0; i < o->nmembers; i++)
			o->members[i].inner->live = 0;
		for (unsigned i = 0; i < o->nsubdirs; i++)
			o->subdirs[i]->live = 0;
		o->tmpdir->live = 0;
		if (o->sweep_dir) {
			free(o->sweep_dir);
			o->sweep_dir = strdup(o->tmpdir->path);
			if (o->sweep_dir)
				tree_clear(o->sweep_dir, 0, o->sweep_match, o->sweep_ctx);
		}
		rmdir(o->tmpdir->path); /* fails, and leaves it hidden, if it holds more */
		return 0;
	}
	if (rename(o->tmpdir->path, o->target) < 0)
		return fail(err, -errno, "cannot create %s: %s", o->path, strerror(errno));
	for (unsigned i = 0; i < o->nmembers; i++)
		o->members[i].inner->live = 0;
	for (unsigned i = 0; i < o->nsubdirs; i++)
		o->subdirs[i]->live = 0;
	o->tmpdir->live = 0;
	return 0;
}

int gt_output_commit(struct gt_output *o, struct gt_output_error *err)
{
	int r;

	if (err) {
		err->input = -1;
		err->msg[0] = '\0';
	}
	if (o->is_stdout || o->committed)
		return 0;
	if (o->flags & GT_OUTPUT_DIR) {
		r = commit_dir(o, err);
		if (r < 0)
			return r;
	} else {
		for (unsigned i = 0; i < o->nmembers; i++) {
			struct member *m = &o->members[i];
			struct stat st;

			if (rename(m->tmp->path, m->final) < 0)
				return fail(err, -errno, "cannot finish %s: %s", m->final,
				            strerror(errno));
			m->tmp->live = 0;
			if (lstat(m->final, &st) == 0) {
				m->dev = st.st_dev;
				m->ino = st.st_ino;
			}
		}
		if (o->sweep_dir)
			sweep(o, o->sweep_dir);
	}
	o->committed = true;
	return 0;
}

unsigned gt_output_nfiles(const struct gt_output *o)
{
	return o->is_stdout ? 0 : o->nmembers;
}

const char *gt_output_file(const struct gt_output *o, unsigned i)
{
	return i < o->nmembers ? o->members[i].final : NULL;
}

void gt_output_free(struct gt_output *o)
{
	if (!o)
		return;
	/* the files inside a temporary directory before the directory itself */
	for (unsigned i = o->nmembers; i-- > 0;) {
		node_remove(o->members[i].inner);
		node_remove(o->members[i].tmp);
		free(o->members[i].final);
	}
	for (unsigned i = o->nsubdirs; i-- > 0;)
		node_remove(o->subdirs[i]);
	node_remove(o->tmpdir);
	for (unsigned i = 0; i < o->nadopted; i++)
		node_remove(o->adopted[i]);
	for (unsigned i = 0; i < o->ninputs; i++)
		free(o->input_real[i]);
	free(o->input_real);
	free(o->inputs);
	free(o->members);
	free(o->subdirs);
	free(o->sweep_dir);
	if (o->sweep_ctx_free)
		o->sweep_ctx_free(o->sweep_ctx);
	free(o->target);
	free(o->path);
	free(o);
}
