/* libFuzzer target: the command line of `gputrace run`, `stats`, `advise`, `diff`, `export`,
 * `info`, `sql` and `view`, fed in-process through the CLI's own main() (cli/main.c, included below
 * with main renamed),
 * plus the option-value parsers of cli/options.c on their own. Checks: only gputrace's
 * documented exit codes come back, nothing is created in the working directory, parsed
 * values respect the bounds they were parsed with. Runs as a fuzz program.
 *
 * Nothing may run or be written: the working directory is an empty private directory,
 * arguments naming other directories ('/') are refused, the injection library is pointed
 * at a path that does not exist (so `run` stops before it starts a program), and
 * `doctor` (which probes the machine) is left out.
 * Input: the arguments after "gputrace", separated by NUL bytes. */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz-common.h"
#include "options.h"

int gputrace_main(int argc, char **argv);
#define main gputrace_main
#include "main.c"
#undef main

#define MAX_ARGS 24

static char workdir[] = "/tmp/gputrace-fuzz-options-XXXXXX";

/* At exit: the private directory is empty between inputs, so rmdir is enough. */
static void remove_workdir(void)
{
	if (chdir("/") == 0)
		rmdir(workdir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	if (!mkdtemp(workdir) || chdir(workdir) < 0) {
		perror("fuzz-options: private directory");
		exit(1);
	}
	atexit(remove_workdir);
	setenv("GPUTRACE_INJECT_LIB", "/nonexistent/gputrace-fuzz/libgputrace-inject.so", 1);
	unsetenv("GPUTRACE_SESSION");
	setenv("RANK", "0", 1);
	return 0;
}

/* Anything in the private directory means a command wrote something it should not have. */
static void check_nothing_written(const char *cmd)
{
	DIR *d = opendir(".");
	struct dirent *e;

	FUZZ_CHECK(d != NULL, "cannot list %s", workdir);
	while ((e = readdir(d))) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		FUZZ_CHECK(0, "'%s' created %s/%s", cmd, workdir, e->d_name);
	}
	closedir(d);
}

/* The value parsers alone: what they accept lies within the bounds they were given. */
static void parse_values(const char *s)
{
	static const char *const choices[] = {"launch", "all", "none", NULL};
	uint64_t v = 0;
	int r;

	r = gt_opt_size(s, 4096, 1u << 30, &v);
	FUZZ_CHECK(r == 0 || r == -EINVAL || r == -ERANGE, "gt_opt_size %d", r);
	FUZZ_CHECK(r < 0 || (v >= 4096 && v <= (1u << 30)), "size %llu", (unsigned long long)v);
	r = gt_opt_size(s, 0, UINT64_MAX, &v);
	FUZZ_CHECK(r == 0 || r == -EINVAL || r == -ERANGE, "gt_opt_size %d", r);
	r = gt_opt_duration(s, 3600ull * 1000000000ull, &v);
	FUZZ_CHECK(r == 0 || r == -EINVAL || r == -ERANGE, "gt_opt_duration %d", r);
	FUZZ_CHECK(r < 0 || v <= 3600ull * 1000000000ull, "duration %llu", (unsigned long long)v);
	r = gt_opt_duration(s, UINT64_MAX, &v);
	FUZZ_CHECK(r == 0 || r == -EINVAL || r == -ERANGE, "gt_opt_duration %d", r);
	r = gt_opt_uint(s, 1, 1000, &v);
	FUZZ_CHECK(r == 0 || r == -EINVAL || r == -ERANGE, "gt_opt_uint %d", r);
	FUZZ_CHECK(r < 0 || (v >= 1 && v <= 1000), "uint %llu", (unsigned long long)v);
	r = gt_opt_choice(s, choices);
	FUZZ_CHECK(r == -EINVAL || (r >= 0 && r < 3 && strcmp(s, choices[r]) == 0), "choice %d", r);
}

static int known_exit(int code)
{
	switch (code) {
	case GT_EXIT_OK:
	case GT_EXIT_USAGE:
	case GT_EXIT_BAD_TRACE:
	case GT_EXIT_NO_INPUT:
	case GT_EXIT_UNAVAILABLE:
	case GT_EXIT_SOFTWARE:
	case GT_EXIT_CANT_CREATE:
	case GT_EXIT_IO:
		return 1;
	default:
		return 0;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *copy, *argv[MAX_ARGS + 2];
	int argc = 1, code;
	size_t i = 0;

	copy = malloc(size + 1);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	copy[size] = '\0';
	argv[0] = "gputrace";
	while (i <= size && argc <= MAX_ARGS) {
		char *arg = copy + i;

		if (strchr(arg, '/'))
			goto out;
		argv[argc++] = arg;
		parse_values(arg);
		i += strlen(arg) + 1;
	}
	argv[argc] = NULL;
	if (argc > 1 && strcmp(argv[1], "doctor") == 0)
		goto out;

	/* A fresh getopt for each input: optind = 0 makes glibc forget where the previous
	 * input's argv left it (cmd_stats does not reset optind itself). */
	optind = 0;
	{
		char *none[] = {"gputrace", NULL};

		(void)getopt(1, none, "");
	}
	code = gputrace_main(argc, argv);
	FUZZ_CHECK(known_exit(code), "'%s %s' exited %d", argv[0], argc > 1 ? argv[1] : "", code);
	check_nothing_written(argc > 1 ? argv[1] : "");
out:
	free(copy);
	return 0;
}
