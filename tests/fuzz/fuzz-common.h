/* Helpers shared by the libFuzzer targets in tests/fuzz: an in-memory file the reader can
 * open by path, and a check that aborts with a message (libFuzzer saves the input).
 * Header-only; runs in the fuzz programs. */
#ifndef GPUTRACE_FUZZ_COMMON_H
#define GPUTRACE_FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* A property of the code under test failed: report it and abort, so libFuzzer keeps the
 * input as a crash (the code under test itself must never abort). */
#define FUZZ_CHECK(cond, ...)                                                                      \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "fuzz check failed at %s:%d: %s: ", __FILE__, __LINE__,    \
			        #cond);                                                            \
			fprintf(stderr, __VA_ARGS__);                                              \
			fputc('\n', stderr);                                                       \
			abort();                                                                   \
		}                                                                                  \
	} while (0)

/* A memfd holding `len` bytes, reopened by path through /proc/self/fd: the reader takes a
 * path, and a memfd costs no disk and leaves nothing behind. One fd for the whole run,
 * truncated and rewritten for each input. Returns the path, or NULL. */
static inline const char *fuzz_memfile(const void *bytes, size_t len)
{
	static int fd = -1;
	static char path[64];
	const uint8_t *p = bytes;

	if (fd < 0) {
		fd = memfd_create("fuzz-input", MFD_CLOEXEC);
		if (fd < 0)
			return NULL;
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	}
	if (ftruncate(fd, 0) < 0)
		return NULL;
	for (size_t off = 0; off < len;) {
		ssize_t n = pwrite(fd, p + off, len - off, (off_t)off);

		if (n <= 0)
			return NULL;
		off += (size_t)n;
	}
	return path;
}

#endif /* GPUTRACE_FUZZ_COMMON_H */
