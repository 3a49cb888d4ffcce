/* Reading a trace with libgputrace: every kernel's duration and (mangled) name, in file order,
 * then the count and the total. A program of the library's users, built against an installed
 * gputrace (the `library` test builds it so):
 *     cc kernel-durations.c $(pkg-config --cflags --libs gputrace) -o kernel-durations
 *     ./kernel-durations run.gtrace
 * Kernels are read in batches (gt_reader_next_batch): the reader copies the next kernels
 * into an array, whatever else lies between them in the file.
 * examples/kernel_durations.py does the same from Python through ctypes, and
 * examples/kernel_durations_pandas.py through the gputrace module. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <gputrace/trace.h>

int main(int argc, char **argv)
{
	static struct gt_rec_kernel batch[256];
	struct gt_reader *r = NULL;
	const char *msg = NULL;
	uint64_t n = 0, total_ns = 0;
	int ret;

	if (argc != 2) {
		fprintf(stderr, "usage: %s TRACE.gtrace\n", argv[0]);
		return 2;
	}
	ret = gt_reader_open(argv[1], &r, &msg);
	if (ret < 0) {
		fprintf(stderr, "%s: %s\n", argv[1], msg ? msg : strerror(-ret));
		return 1;
	}
	/* kernels come in file order; strings are known to the reader by the time a record that
	 * names them is returned */
	while ((ret = gt_reader_next_batch(r, 1ull << GT_REC_KERNEL, batch, sizeof(batch[0]),
	                                   sizeof(batch) / sizeof(batch[0]))) > 0) {
		for (int i = 0; i < ret; i++) {
			const struct gt_rec_kernel *k = &batch[i];
			const char *name = gt_reader_string(r, k->name_id, NULL);
			uint64_t dur_ns = k->span.end_ns > k->span.start_ns
			                          ? k->span.end_ns - k->span.start_ns
			                          : 0;

			printf("%" PRIu64 " ns %s\n", dur_ns, name ? name : "?");
			n++;
			total_ns += dur_ns;
		}
	}
	gt_reader_close(r);
	if (ret < 0) {
		fprintf(stderr, "%s: %s\n", argv[1], strerror(-ret));
		return 1;
	}
	printf("%" PRIu64 " kernels, %" PRIu64 " ns\n", n, total_ns);
	return 0;
}
