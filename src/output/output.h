/* The one output path: every file a command writes (an export, a report, a merged trace, a
 * database, a directory of files per rank) goes through here. An output never replaces one
 * of the command's inputs, never writes over a device, FIFO or directory, writes through a
 * symlink instead of replacing it, and appears under its final name only when complete: each
 * file is written as a temporary in its final folder and renamed at gt_output_commit(); an
 * output of several files drops the stale files of an earlier export beside it. On failure,
 * or on a signal (gt_output_signal_cleanup), the temporaries are removed. Runs in the CLI. */
#ifndef GPUTRACE_OUTPUT_H
#define GPUTRACE_OUTPUT_H

#include <stdbool.h>
#include <stddef.h>

struct gt_output;

enum gt_output_flags {
	GT_OUTPUT_DIR = 1u << 0,       /* the output is a directory, its files made inside it */
	GT_OUTPUT_NO_STDOUT = 1u << 1, /* "-" is refused (several files, or a database) */
};

/* A directory output's files may lie in folders of their own inside it ("OUT/rank=0/T", hive
 * partitions): at most this many folders deep, and this many folders in all. */
#define GT_OUTPUT_MAX_DEPTH   2
#define GT_OUTPUT_MAX_SUBDIRS 65536u

/* What a refusal or failure was about, for the one line the CLI prints. */
struct gt_output_error {
	int input;     /* the input the output names (-EEXIST), or -1 */
	char msg[640]; /* what is wrong, naming the path(s); no trailing newline */
};

/* Prepare the output `path` ("-": standard output) of a command that reads inputs[0..n)
 * (borrowed until gt_output_free).
 * Nothing is created yet; every check that can be made before writing is made here.
 * Returns 0 and *ret, or -errno with err filled:
 *   -EEXIST   path (through ./, an absolute path, a hard link or a symlink) is input
 *             err->input: the same device and inode;
 *   -EINVAL   "-" with GT_OUTPUT_NO_STDOUT, or an empty path;
 *   -EISDIR   a file is wanted and path is a directory;
 *   -ENOTDIR  a directory is wanted and path is something else, or its folder is no folder;
 *   -EPERM    path is a device, a FIFO or a socket;
 *   -ENOENT   its folder does not exist, or it is a symlink to nothing;
 *   -ENOMEM. */
int gt_output_open(const char *path, const char *const *inputs, unsigned ninputs, unsigned flags,
                   struct gt_output **ret, struct gt_output_error *err);

/* Whether the output is standard output ("-"). */
bool gt_output_is_stdout(const struct gt_output *o);

/* The output's name as given, and where it lands (symlinks followed). */
const char *gt_output_path(const struct gt_output *o);
const char *gt_output_target(const struct gt_output *o);

/* Create one file of the output: `name` is its final path (NULL: the output itself; for a
 * GT_OUTPUT_DIR output a path inside it, "DIR/file", or "DIR/SUB/file" with the output's
 * name as given for DIR: the folders below it are made as needed, up to GT_OUTPUT_MAX_DEPTH;
 * a name outside DIR is put in DIR under its last part). It is checked like the output (not an
 * input, not a device, FIFO or directory) and created as a temporary beside its final name
 * (inside a directory output's temporary directory). Returns 0 and an fd the caller writes
 * and closes before gt_output_commit(), or -errno with err. For standard output *ret_fd is
 * STDOUT_FILENO, which the caller does not close. */
int gt_output_create(struct gt_output *o, const char *name, int *ret_fd,
                     struct gt_output_error *err);

/* The -errno of the last file of the output that gt_output_create or gt_output_create_path
 * could not create, else 0: when a writer's failure is that one, it is about the output
 * (the output's exit status), not about what was being written. */
int gt_output_create_error(const struct gt_output *o);

/* The same for a writer that opens files by name (SQLite): *ret_tmp is the temporary's path,
 * created empty, valid until gt_output_free(). */
int gt_output_create_path(struct gt_output *o, const char *name, const char **ret_tmp,
                          struct gt_output_error *err);

/* A temporary that another writer makes and renames itself (the trace writer's
 * PATH.tmp-PID, include/gputrace/trace.h): removed on a signal and by gt_output_free() if it
 * is still there. Returns 0 or -ENOMEM. */
int gt_output_adopt(struct gt_output *o, const char *tmp);

/* At commit, remove the regular files of folder `dir` that match(name) accepts and that this
 * output did not write: what an earlier export of the same name left (CSV tables, numbered
 * pieces). Never an input. One sweep per output. For a GT_OUTPUT_DIR output, dir is the
 * output itself and the sweep comes before the first file: an existing directory is replaced
 * only when every entry in it is a file that match() accepts or a folder that match() accepts
 * as "NAME/" and whose entries are, in turn, such files and folders (up to
 * GT_OUTPUT_MAX_DEPTH deep: hive partitions). Returns 0, -ENOMEM, or
 * -ENOTEMPTY with err (the directory holds something else: the user's files are never
 * removed). ctx_free (may be NULL) frees ctx with the output, whatever this returns. */
int gt_output_sweep(struct gt_output *o, const char *dir,
                    bool (*match)(const char *name, void *ctx), void *ctx,
                    void (*ctx_free)(void *ctx), struct gt_output_error *err);

/* Rename every file created into place (a directory output: the directory, replacing an
 * earlier one of the same output), then sweep. Returns 0 or -errno with err; on failure the
 * files not yet renamed are removed. */
int gt_output_commit(struct gt_output *o, struct gt_output_error *err);

/* The files the output holds once committed, in the order created (their final names). */
unsigned gt_output_nfiles(const struct gt_output *o);
const char *gt_output_file(const struct gt_output *o, unsigned i);

/* Remove what was not committed and free. Accepts NULL. */
void gt_output_free(struct gt_output *o);

/* Remove every uncommitted temporary of every output: async-signal-safe, for the CLI's
 * handler of SIGINT, SIGTERM, SIGHUP and SIGXFSZ before it dies of the signal. */
void gt_output_signal_cleanup(void);

#endif /* GPUTRACE_OUTPUT_H */
