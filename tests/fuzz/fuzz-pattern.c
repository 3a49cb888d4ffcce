/* libFuzzer target: output-name pattern expansion (%p %h %q{VAR} %n %%). Checks, for any
 * pattern and output size: no write outside an exactly-sized buffer, a result that is
 * NUL-terminated at its returned length, the same answer as with a roomy buffer (or
 * -ENAMETOOLONG exactly when it would not fit), and gt_pattern_has_seq() agreeing with
 * whether %n changes the result. Runs as a fuzz program.
 * Input: byte 0 the output size (0..255), byte 1 the sequence number, then the pattern. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz-common.h"
#include "pattern.h"

#define FUZZ_PID 4242
#define ROOMY    (1u << 16)

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static char big[3000];

	(void)argc;
	(void)argv;
	/* Variables a pattern may name: short, empty, long, with a percent sign. */
	memset(big, 'v', sizeof(big) - 1);
	setenv("RANK", "3", 1);
	setenv("EMPTY", "", 1);
	setenv("LONG", big, 1);
	setenv("PCT", "%p%", 1);
	unsetenv("UNSET");
	return 0;
}

static int expand(const char *pattern, unsigned seq, char *out, size_t bytes, size_t *errpos)
{
	int r = gt_pattern_expand(pattern, FUZZ_PID, seq, out, bytes, errpos);

	FUZZ_CHECK(r >= 0 || r == -EINVAL || r == -ENOENT || r == -ENAMETOOLONG,
	           "unexpected return %d", r);
	if (r >= 0) {
		FUZZ_CHECK((size_t)r < bytes, "length %d in a buffer of %zu", r, bytes);
		FUZZ_CHECK(out[r] == '\0' && strlen(out) == (size_t)r, "not terminated at %d", r);
	} else if (bytes) {
		FUZZ_CHECK(out[0] == '\0', "output left set after error %d", r);
	}
	return r;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char roomy[ROOMY], roomy2[ROOMY];
	size_t bytes, plen, pos = 0, pos_roomy = 0;
	char *pattern, *out;
	unsigned seq;
	int r, rr, r2;

	if (size < 2)
		return 0;
	bytes = data[0];
	seq = data[1];
	pattern = malloc(size - 1);
	out = malloc(bytes ? bytes : 1);
	if (!pattern || !out)
		goto out;
	memcpy(pattern, data + 2, size - 2);
	pattern[size - 2] = '\0';
	plen = strlen(pattern);

	r = expand(pattern, seq, out, bytes, &pos);
	rr = expand(pattern, seq, roomy, sizeof(roomy), &pos_roomy);
	if (rr >= 0) {
		if ((size_t)rr < bytes) {
			FUZZ_CHECK(r == rr && memcmp(out, roomy, (size_t)rr + 1) == 0,
			           "%d with %zu bytes, %d with room", r, bytes, rr);
		} else {
			FUZZ_CHECK(r == -ENAMETOOLONG, "%d bytes fit in %zu: returned %d", rr,
			           bytes, r);
			FUZZ_CHECK(pos < plen || bytes == 0, "overflow position %zu", pos);
		}
	} else if (rr != -ENAMETOOLONG) {
		/* a malformed pattern or an unset variable is that whatever the room */
		FUZZ_CHECK(r == rr && pos == pos_roomy, "%d at %zu with %zu bytes, %d at %zu", r,
		           pos, bytes, rr, pos_roomy);
		FUZZ_CHECK(pos < plen, "error position %zu past the pattern", pos);
	}

	/* %n is the only thing the sequence number changes. */
	r2 = expand(pattern, seq + 1000, roomy2, sizeof(roomy2), NULL);
	if (rr >= 0 && r2 >= 0) {
		bool same = rr == r2 && strcmp(roomy, roomy2) == 0;

		FUZZ_CHECK(same == !gt_pattern_has_seq(pattern), "has_seq %d but expansions %s",
		           gt_pattern_has_seq(pattern), same ? "equal" : "differ");
	}
out:
	free(pattern);
	free(out);
	return 0;
}
