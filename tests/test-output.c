/* Check suite for src/output/output.c, the one output path: an input refused under every name
 * (itself, ./, an absolute path, a hard link, a symlink), devices, FIFOs and folders refused,
 * a symlink written through, nothing under the final name before the commit, temporaries
 * removed on failure and by the signal clean-up, stale files swept (never an input), folders
 * replaced whole or refused, the temporaries of writers that open by name or rename their own,
 * and the creation error an exit status is chosen by. Runs as a unit test, in a scratch
 * folder. */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>

#include "output.h"

static char dir[64];

static void setup(void)
{
	strcpy(dir, "/tmp/gt-output-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_int_eq(chdir(dir), 0);
}

static void teardown(void)
{
	char cmd[128];

	ck_assert_int_eq(chdir("/"), 0);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
}

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

static char *slurp(const char *path)
{
	static char buf[256];
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return NULL;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	return buf;
}

/* Entries of the scratch folder (hidden ones too), "." and ".." aside. */
static unsigned entries(void)
{
	DIR *d = opendir(".");
	struct dirent *e;
	unsigned n = 0;

	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d)) != NULL)
		n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
	closedir(d);
	return n;
}

static void write_str(int fd, const char *s)
{
	ck_assert_int_eq(write(fd, s, strlen(s)), (ssize_t)strlen(s));
	ck_assert_int_eq(close(fd), 0);
}

START_TEST(test_input_under_every_name)
{
	char abs[PATH_MAX], in_abs[PATH_MAX];
	const char *const names[] = {"in.gtrace", "./in.gtrace", abs, "hard.gtrace", "soft.gtrace"};
	const char *inputs[] = {"other.gtrace", in_abs};
	struct gt_output_error err;
	struct gt_output *o = NULL;

	put("in.gtrace", "trace");
	put("other.gtrace", "other");
	ck_assert_int_eq(link("in.gtrace", "hard.gtrace"), 0);
	ck_assert_int_eq(symlink("in.gtrace", "soft.gtrace"), 0);
	snprintf(abs, sizeof(abs), "%s/in.gtrace", dir);
	snprintf(in_abs, sizeof(in_abs), "%s/./in.gtrace", dir);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		ck_assert_int_eq(gt_output_open(names[i], inputs, 2, 0, &o, &err), -EEXIST);
		ck_assert_int_eq(err.input, 1);
		ck_assert_ptr_nonnull(strstr(err.msg, "is the input"));
		ck_assert_ptr_nonnull(strstr(err.msg, in_abs));
	}
	ck_assert_str_eq(slurp("in.gtrace"), "trace");
	ck_assert_uint_eq(entries(), 4); /* nothing created */
}
END_TEST

START_TEST(test_not_regular)
{
	struct gt_output_error err;
	struct gt_output *o = NULL;
	struct stat st;

	ck_assert_int_eq(mkfifo("fifo", 0644), 0);
	ck_assert_int_eq(gt_output_open("fifo", NULL, 0, 0, &o, &err), -EPERM);
	ck_assert_str_eq(err.msg, "fifo is a FIFO; an output is written only as a regular file (or "
	                          "- for standard output)");
	ck_assert_int_eq(mkdir("folder", 0755), 0);
	ck_assert_int_eq(gt_output_open("folder", NULL, 0, 0, &o, &err), -EISDIR);
	ck_assert_int_eq(gt_output_open("/dev/null", NULL, 0, 0, &o, &err), -EPERM);
	ck_assert_str_eq(err.msg, "/dev/null is a character device; an output is written only as "
	                          "a regular file (or - for standard output)");
	/* a device node of our own, when we may make one (root) */
	if (mknod("dev", S_IFCHR | 0644, makedev(1, 3)) == 0) {
		ck_assert_int_eq(gt_output_open("dev", NULL, 0, 0, &o, &err), -EPERM);
		ck_assert_int_eq(lstat("dev", &st), 0);
		ck_assert(S_ISCHR(st.st_mode));
	}
	ck_assert_int_eq(symlink("nowhere", "dangling"), 0);
	ck_assert_int_eq(gt_output_open("dangling", NULL, 0, 0, &o, &err), -ENOENT);
	ck_assert_int_eq(gt_output_open("no/such/x", NULL, 0, 0, &o, &err), -ENOENT);
	ck_assert_str_eq(err.msg, "cannot create no/such/x: its folder does not exist");
	ck_assert_int_eq(gt_output_open("-", NULL, 0, GT_OUTPUT_NO_STDOUT, &o, &err), -EINVAL);
	ck_assert_int_eq(lstat("fifo", &st), 0);
	ck_assert(S_ISFIFO(st.st_mode));
}
END_TEST

START_TEST(test_whole_or_nothing)
{
	struct gt_output_error err;
	struct gt_output *o = NULL;
	int fd;

	put("out.json", "old");
	ck_assert_int_eq(gt_output_open("out.json", NULL, 0, 0, &o, &err), 0);
	ck_assert_int_eq(gt_output_create(o, NULL, &fd, &err), 0);
	write_str(fd, "new");
	ck_assert_str_eq(slurp("out.json"), "old"); /* nothing under the final name yet */
	ck_assert_uint_eq(entries(), 2);            /* and a temporary beside it */
	ck_assert_int_eq(gt_output_commit(o, &err), 0);
	ck_assert_str_eq(slurp("out.json"), "new");
	ck_assert_uint_eq(gt_output_nfiles(o), 1);
	ck_assert_str_eq(gt_output_file(o, 0), "out.json");
	gt_output_free(o);
	ck_assert_uint_eq(entries(), 1);

	/* a failed export: freed without a commit, nothing left but the old file */
	ck_assert_int_eq(gt_output_open("out.json", NULL, 0, 0, &o, &err), 0);
	ck_assert_int_eq(gt_output_create(o, NULL, &fd, &err), 0);
	write_str(fd, "partial");
	gt_output_free(o);
	ck_assert_str_eq(slurp("out.json"), "new");
	ck_assert_uint_eq(entries(), 1);

	/* a signal: the handler's clean-up removes every temporary */
	ck_assert_int_eq(gt_output_open("sig.json", NULL, 0, 0, &o, &err), 0);
	ck_assert_int_eq(gt_output_create(o, NULL, &fd, &err), 0);
	write_str(fd, "partial");
	ck_assert_uint_eq(entries(), 2);
	gt_output_signal_cleanup();
	ck_assert_uint_eq(entries(), 1);
	ck_assert_int_eq(access("sig.json", F_OK), -1);
	gt_output_free(o);
}
END_TEST

START_TEST(test_symlink_written_through)
{
	struct gt_output_error err;
	struct gt_output *o = NULL;
	struct stat st;
	int fd;

	ck_assert_int_eq(mkdir("real", 0755), 0);
	put("real/target.sqlite", "old");
	ck_assert_int_eq(symlink("real/target.sqlite", "link.sqlite"), 0);
	ck_assert_int_eq(gt_output_open("link.sqlite", NULL, 0, 0, &o, &err), 0);
	ck_assert_ptr_nonnull(strstr(gt_output_target(o), "/real/target.sqlite"));
	ck_assert_int_eq(gt_output_create(o, NULL, &fd, &err), 0);
	write_str(fd, "new");
	ck_assert_int_eq(gt_output_commit(o, &err), 0);
	gt_output_free(o);
	ck_assert_int_eq(lstat("link.sqlite", &st), 0);
	ck_assert(S_ISLNK(st.st_mode));
	ck_assert_str_eq(slurp("real/target.sqlite"), "new");
}
END_TEST

static bool csv_table(const char *name, void *ctx)
{
	(void)ctx;
	return strncmp(name, "u-", 2) == 0 && strstr(name, ".csv") != NULL;
}

START_TEST(test_several_files_and_the_sweep)
{
	struct gt_output_error err;
	struct gt_output *o = NULL;
	int fd;

	put("u-kernel.csv", "stale kernels");
	put("u-api.csv", "old api");
	put("keep.csv", "not ours");
	ck_assert_int_eq(gt_output_open("u.csv", NULL, 0, 0, &o, &err), 0);
	ck_assert_int_eq(gt_output_sweep(o, ".", csv_table, NULL, NULL, &err), 0);
	ck_assert_int_eq(gt_output_create(o, "u-api.csv", &fd, &err), 0);
	write_str(fd, "api");
	ck_assert_int_eq(gt_output_create(o, "u-memcpy.csv", &fd, &err), 0);
	write_str(fd, "memcpy");
	ck_assert_str_eq(slurp("u-kernel.csv"), "stale kernels");
	ck_assert_int_eq(gt_output_commit(o, &err), 0);
	ck_assert_uint_eq(gt_output_nfiles(o), 2);
	gt_output_free(o);
	ck_assert_int_eq(access("u-kernel.csv", F_OK), -1); /* the earlier export's, swept */
	ck_assert_str_eq(slurp("u-api.csv"), "api");
	ck_assert_str_eq(slurp("u-memcpy.csv"), "memcpy");
	ck_assert_str_eq(slurp("keep.csv"), "not ours");
	ck_assert_uint_eq(entries(), 3);
}
END_TEST

static bool rank_file(const char *name, void *ctx)
{
	(void)ctx;
	return strncmp(name, "rank-", 5) == 0;
}

START_TEST(test_folder_replaced_whole_or_refused)
{
	struct gt_output_error err;
	struct gt_output *o = NULL;
	int fd;

	ck_assert_int_eq(mkdir("ranks", 0755), 0);
	put("ranks/rank-7.json", "stale");
	ck_assert_int_eq(gt_output_open("ranks", NULL, 0, GT_OUTPUT_DIR, &o, &err), 0);
	ck_assert_int_eq(gt_output_sweep(o, NULL, rank_file, NULL, NULL, &err), 0);
	ck_assert_int_eq(gt_output_create(o, "ranks/rank-0.json", &fd, &err), 0);
	write_str(fd, "zero");
	ck_assert_int_eq(access("ranks/rank-0.json", F_OK), -1); /* not before the commit */
	ck_assert_int_eq(gt_output_commit(o, &err), 0);
	gt_output_free(o);
	ck_assert_str_eq(slurp("ranks/rank-0.json"), "zero");
	ck_assert_int_eq(access("ranks/rank-7.json", F_OK), -1);
	ck_assert_uint_eq(entries(), 1); /* no temporary folder left */

	/* a folder that holds the user's own files is never replaced */
	put("ranks/notes.txt", "mine");
	ck_assert_int_eq(gt_output_open("ranks", NULL, 0, GT_OUTPUT_DIR, &o, &err), 0);
	ck_assert_int_eq(gt_output_sweep(o, NULL, rank_file, NULL, NULL, &err), -ENOTEMPTY);
	ck_assert_str_eq(err.msg, "ranks exists and holds other files than an export's "
	                          "(notes.txt): choose another output name, or empty it");
	gt_output_free(o);
	ck_assert_str_eq(slurp("ranks/notes.txt"), "mine");

	/* nor a folder that holds one of the inputs */
	{
		char in[PATH_MAX];
		const char *inputs[] = {in};

		snprintf(in, sizeof(in), "%s/ranks/rank-0.json", dir);
		ck_assert_int_eq(gt_output_open("ranks", inputs, 1, GT_OUTPUT_DIR, &o, &err),
		                 -EEXIST);
	}
}
END_TEST

/* hive partitions: a file name, or "NAME/" for a folder */
static bool part_file(const char *name, void *ctx)
{
	size_t n = strlen(name);

	(void)ctx;
	if (name[n - 1] == '/')
		return strncmp(name, "k=", 2) == 0 || strncmp(name, "h=", 2) == 0;
	return n > 2 && strcmp(name + n - 2, ".p") == 0;
}

START_TEST(test_folder_partitions)
{
	struct gt_output_error err;
	struct gt_output *o = NULL;
	int fd;

	/* an earlier export with a partition this one does not write */
	ck_assert_int_eq(mkdir("job", 0755), 0);
	ck_assert_int_eq(mkdir("job/k=2", 0755), 0);
	put("job/k=2/t.p", "old");
	ck_assert_int_eq(gt_output_open("job/", NULL, 0, GT_OUTPUT_DIR, &o, &err), 0);
	ck_assert_int_eq(gt_output_sweep(o, NULL, part_file, NULL, NULL, &err), 0);
	ck_assert_int_eq(gt_output_create(o, "job/k=0/t.p", &fd, &err), 0);
	write_str(fd, "zero");
	close(fd);
	ck_assert_int_eq(gt_output_create(o, "job/k=1/h=a/t.p", &fd, &err), 0);
	write_str(fd, "one");
	close(fd);
	ck_assert_int_eq(gt_output_create(o, "job/k=1/h=a/b/t.p", &fd, &err), -EINVAL);
	ck_assert_str_eq(err.msg, "job/k=1/h=a/b/t.p: not a file name inside the folder (at most "
	                          "2 folders deep, no empty, '.' or '..' part)");
	ck_assert_int_eq(gt_output_create(o, "job/../t.p", &fd, &err), -EINVAL);
	ck_assert_int_eq(access("job/k=0", F_OK), -1); /* not before the commit */
	ck_assert_int_eq(gt_output_commit(o, &err), 0);
	ck_assert_uint_eq(gt_output_nfiles(o), 2);
	ck_assert_str_eq(gt_output_file(o, 1), "job/k=1/h=a/t.p");
	gt_output_free(o);
	ck_assert_str_eq(slurp("job/k=0/t.p"), "zero");
	ck_assert_str_eq(slurp("job/k=1/h=a/t.p"), "one");
	ck_assert_int_eq(access("job/k=2", F_OK), -1);
	ck_assert_uint_eq(entries(), 1); /* no temporary folder left */

	/* not committed: neither the folders nor the files are left */
	ck_assert_int_eq(gt_output_open("new", NULL, 0, GT_OUTPUT_DIR, &o, &err), 0);
	ck_assert_int_eq(gt_output_create(o, "new/k=0/t.p", &fd, &err), 0);
	close(fd);
	gt_output_free(o);
	ck_assert_uint_eq(entries(), 1);

	/* a partition holding the user's file: the folder is not replaced */
	put("job/k=0/notes.txt", "mine");
	ck_assert_int_eq(gt_output_open("job", NULL, 0, GT_OUTPUT_DIR, &o, &err), 0);
	ck_assert_int_eq(gt_output_sweep(o, NULL, part_file, NULL, NULL, &err), -ENOTEMPTY);
	ck_assert_str_eq(err.msg, "job exists and holds other files than an export's "
	                          "(k=0/notes.txt): choose another output name, or empty it");
	gt_output_free(o);
	ck_assert_str_eq(slurp("job/k=0/notes.txt"), "mine");
}
END_TEST

START_TEST(test_stdout)
{
	struct gt_output_error err;
	struct gt_output *o = NULL;
	int fd = -1;

	ck_assert_int_eq(gt_output_open("-", NULL, 0, 0, &o, &err), 0);
	ck_assert(gt_output_is_stdout(o));
	ck_assert_int_eq(gt_output_create(o, NULL, &fd, &err), 0);
	ck_assert_int_eq(fd, STDOUT_FILENO);
	ck_assert_int_eq(gt_output_commit(o, &err), 0);
	ck_assert_uint_eq(gt_output_nfiles(o), 0);
	gt_output_free(o);
	ck_assert_uint_eq(entries(), 0);
}
END_TEST

START_TEST(test_socket_refused)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct gt_output_error err;
	struct gt_output *o = NULL;
	struct stat st;
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	ck_assert_int_ge(fd, 0);
	strcpy(sa.sun_path, "sock");
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	ck_assert_int_eq(gt_output_open("sock", NULL, 0, 0, &o, &err), -EPERM);
	ck_assert_str_eq(err.msg,
	                 "sock is a socket; an output is written only as a regular file (or "
	                 "- for standard output)");
	ck_assert_int_eq(lstat("sock", &st), 0);
	ck_assert(S_ISSOCK(st.st_mode));
	close(fd);
}
END_TEST

/* An input named through a symlink is the file it leads to: the file's own name is refused. */
START_TEST(test_input_given_as_a_link)
{
	const char *inputs[] = {"link.gtrace"};
	struct gt_output_error err;
	struct gt_output *o = NULL;

	put("real.gtrace", "trace");
	ck_assert_int_eq(symlink("real.gtrace", "link.gtrace"), 0);
	ck_assert_int_eq(gt_output_open("real.gtrace", inputs, 1, 0, &o, &err), -EEXIST);
	ck_assert_int_eq(err.input, 0);
	ck_assert_str_eq(err.msg,
	                 "the output real.gtrace is the input link.gtrace (the same file): "
	                 "choose another output name");
	ck_assert_str_eq(slurp("real.gtrace"), "trace");
}
END_TEST

/* A file of an output of several that is an input (csv's OUT-kernel.csv, a hard link of the
 * trace) is refused when it is created, remembered as the output's creation error; the sweep
 * never removes an input either. */
START_TEST(test_member_that_is_an_input)
{
	const char *inputs[] = {"in.gtrace"};
	struct gt_output_error err;
	struct gt_output *o = NULL;
	int fd;

	put("in.gtrace", "trace");
	ck_assert_int_eq(link("in.gtrace", "u-kernel.csv"), 0);
	ck_assert_int_eq(link("in.gtrace", "u-old.csv"), 0);
	ck_assert_int_eq(gt_output_open("u.csv", inputs, 1, 0, &o, &err), 0);
	ck_assert_int_eq(gt_output_create_error(o), 0);
	ck_assert_int_eq(gt_output_sweep(o, ".", csv_table, NULL, NULL, &err), 0);
	ck_assert_int_eq(gt_output_create(o, "u-kernel.csv", &fd, &err), -EEXIST);
	ck_assert_int_eq(gt_output_create_error(o), -EEXIST);
	ck_assert_str_eq(err.msg, "the output u-kernel.csv is the input in.gtrace (the same file): "
	                          "choose another output name");
	ck_assert_int_eq(gt_output_create(o, "u-api.csv", &fd, &err), 0);
	write_str(fd, "api");
	ck_assert_int_eq(gt_output_commit(o, &err), 0);
	gt_output_free(o);
	ck_assert_str_eq(slurp("u-kernel.csv"), "trace");
	ck_assert_str_eq(slurp("u-old.csv"), "trace"); /* matched by the sweep, but an input */
	ck_assert_str_eq(slurp("u-api.csv"), "api");
}
END_TEST

/* A file that cannot be created is the output's creation error, for the exit status. */
START_TEST(test_create_error)
{
	struct gt_output_error err;
	struct gt_output *o = NULL;
	int fd;

	ck_assert_int_eq(mkdir("gone", 0755), 0);
	ck_assert_int_eq(gt_output_open("gone/out.json", NULL, 0, 0, &o, &err), 0);
	ck_assert_int_eq(rmdir("gone"), 0); /* its folder removed after the checks */
	ck_assert_int_eq(gt_output_create(o, NULL, &fd, &err), -ENOENT);
	ck_assert_int_eq(gt_output_create_error(o), -ENOENT);
	gt_output_free(o);
	ck_assert_int_eq(gt_output_create_error(NULL), 0);
	ck_assert_uint_eq(entries(), 0);
}
END_TEST

/* A writer that opens files by name (SQLite): a temporary path, empty, beside the final name,
 * renamed at the commit. */
START_TEST(test_create_path)
{
	struct gt_output_error err;
	struct gt_output *o = NULL;
	const char *tmp = NULL;
	struct stat st;

	put("db.sqlite", "old");
	ck_assert_int_eq(gt_output_open("db.sqlite", NULL, 0, GT_OUTPUT_NO_STDOUT, &o, &err), 0);
	ck_assert_int_eq(gt_output_create_path(o, NULL, &tmp, &err), 0);
	ck_assert_ptr_nonnull(strstr(tmp, "/.db.sqlite.gt-"));
	ck_assert_int_eq(stat(tmp, &st), 0);
	ck_assert_int_eq(st.st_size, 0);
	put(tmp, "new");
	ck_assert_str_eq(slurp("db.sqlite"), "old");
	ck_assert_int_eq(gt_output_commit(o, &err), 0);
	gt_output_free(o);
	ck_assert_str_eq(slurp("db.sqlite"), "new");
	ck_assert_uint_eq(entries(), 1);
}
END_TEST

/* A temporary another writer makes and renames itself (the trace writer's PATH.tmp-PID):
 * removed by the signal clean-up, and by gt_output_free when still there; once renamed, the
 * final file stays. */
START_TEST(test_adopted_temporary)
{
	struct gt_output_error err;
	struct gt_output *o = NULL;

	ck_assert_int_eq(gt_output_open("m.gtrace", NULL, 0, GT_OUTPUT_NO_STDOUT, &o, &err), 0);
	ck_assert_int_eq(gt_output_adopt(o, "m.gtrace.tmp-1"), 0);
	put("m.gtrace.tmp-1", "partial");
	gt_output_signal_cleanup();
	ck_assert_int_eq(access("m.gtrace.tmp-1", F_OK), -1);
	gt_output_free(o);

	ck_assert_int_eq(gt_output_open("m.gtrace", NULL, 0, GT_OUTPUT_NO_STDOUT, &o, &err), 0);
	ck_assert_int_eq(gt_output_adopt(o, "m.gtrace.tmp-1"), 0);
	put("m.gtrace.tmp-1", "partial"); /* a writer that failed without removing it */
	gt_output_free(o);
	ck_assert_uint_eq(entries(), 0);

	ck_assert_int_eq(gt_output_open("m.gtrace", NULL, 0, GT_OUTPUT_NO_STDOUT, &o, &err), 0);
	ck_assert_int_eq(gt_output_adopt(o, "m.gtrace.tmp-2"), 0);
	put("m.gtrace.tmp-2", "whole");
	ck_assert_int_eq(rename("m.gtrace.tmp-2", "m.gtrace"), 0); /* the writer's own commit */
	gt_output_free(o);
	ck_assert_str_eq(slurp("m.gtrace"), "whole");
	ck_assert_uint_eq(entries(), 1);
}
END_TEST

static Suite *output_suite(void)
{
	Suite *s = suite_create("output");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_input_under_every_name);
	tcase_add_test(tc, test_not_regular);
	tcase_add_test(tc, test_folder_partitions);
	tcase_add_test(tc, test_whole_or_nothing);
	tcase_add_test(tc, test_symlink_written_through);
	tcase_add_test(tc, test_several_files_and_the_sweep);
	tcase_add_test(tc, test_folder_replaced_whole_or_refused);
	tcase_add_test(tc, test_stdout);
	tcase_add_test(tc, test_socket_refused);
	tcase_add_test(tc, test_input_given_as_a_link);
	tcase_add_test(tc, test_member_that_is_an_input);
	tcase_add_test(tc, test_create_error);
	tcase_add_test(tc, test_create_path);
	tcase_add_test(tc, test_adopted_temporary);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(output_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
