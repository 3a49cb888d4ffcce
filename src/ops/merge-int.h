/* Private to gputrace merge (src/ops/merge.c, merge-align.c, merge-out.c): the state of one
 * merge, its inputs, and the small maps it keeps. Runs in the CLI process. */
#ifndef GPUTRACE_MERGE_INT_H
#define GPUTRACE_MERGE_INT_H

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "merge.h"
#include "strtab.h"
#include "workpool.h"

/* Output string ids for names an input used but never defined: from here up, far above the
 * dense ids of the merged string table, so the two never meet. */
#define GT_MERGE_PLACEHOLDER_BASE 0xc0000000u
/* String ids below this are looked up in an array (writers number them 1, 2, ...). */
#define GT_MERGE_DENSE_IDS (1u << 16)
/* Fields of one record type that a merge rewrites. */
#define GT_MERGE_XFORM_MAX 12u
/* The writer thread's batches: records handed over this many bytes at a time. */
#define GT_MERGE_BATCH_BYTES (256u << 10)
#define GT_MERGE_BATCHES     4u

/* Reading ahead (merge-read.c): an input's records are decoded by the pool into batches of
 * about this many bytes, two per input (the one merged, the one being filled). */
#define GT_MERGE_AHEAD_BYTES (256u << 10)

/* ---- a small u32 -> u32 hash map (key 0 is never stored) ------------------------------ */

struct u32map {
	uint32_t *keys; /* 0: empty slot; owned */
	uint32_t *vals; /* owned */
	size_t mask;    /* capacity - 1 */
	size_t count;
};

static inline size_t u32_hash(uint32_t k, size_t mask)
{
	return (size_t)(((uint64_t)k * 0x9e3779b97f4a7c15ull) >> 32) & mask;
}

static inline bool u32map_get(const struct u32map *m, uint32_t k, uint32_t *v)
{
	if (!m->keys)
		return false;
	for (size_t i = u32_hash(k, m->mask); m->keys[i]; i = (i + 1) & m->mask) {
		if (m->keys[i] == k) {
			if (v)
				*v = m->vals[i];
			return true;
		}
	}
	return false;
}

static inline int u32map_grow(struct u32map *m)
{
	size_t cap = m->keys ? (m->mask + 1) * 2 : 16;
	uint32_t *keys = calloc(cap, sizeof(*keys)), *vals = calloc(cap, sizeof(*vals));

	if (!keys || !vals) {
		free(keys);
		free(vals);
		return -ENOMEM;
	}
	for (size_t i = 0; m->keys && i <= m->mask; i++) {
		size_t j;

		if (!m->keys[i])
			continue;
		for (j = u32_hash(m->keys[i], cap - 1); keys[j]; j = (j + 1) & (cap - 1))
			;
		keys[j] = m->keys[i];
		vals[j] = m->vals[i];
	}
	free(m->keys);
	free(m->vals);
	m->keys = keys;
	m->vals = vals;
	m->mask = cap - 1;
	return 0;
}

/* Insert or replace. Returns 0 or -ENOMEM. */
static inline int u32map_put(struct u32map *m, uint32_t k, uint32_t v)
{
	size_t i;

	if (!m->keys || (m->count + 1) * 2 > m->mask + 1) {
		int r = u32map_grow(m);

		if (r < 0)
			return r;
	}
	for (i = u32_hash(k, m->mask); m->keys[i]; i = (i + 1) & m->mask) {
		if (m->keys[i] == k) {
			m->vals[i] = v;
			return 0;
		}
	}
	m->keys[i] = k;
	m->vals[i] = v;
	m->count++;
	return 0;
}

static inline void u32map_fini(struct u32map *m)
{
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}

/* ---- state ----------------------------------------------------------------------------- */

/* Decoded records of one input, each at an 8-byte boundary, as gt_reader_next gives them. */
struct ahead_batch {
	uint8_t *buf; /* owned; grown as needed, to GT_MERGE_AHEAD_BYTES and a record more */
	size_t cap;   /* bytes of buf */
	size_t len;   /* bytes of records */
	int end;      /* after the records: 0 more follow, 1 the input's end, or its -errno */
};

/* An input read ahead: the pool decodes into b[fill] while the merging thread takes the
 * records of b[cur]. */
struct ahead {
	struct gt_workpool_job job; /* first: the job's cast */
	struct gt_reader *r;        /* the input's; only the job uses it while it is queued or runs;
	                             * closed by the job at the input's end (then NULL) */
	struct gt_reader_status status; /* the reader's, when the job closed it */
	struct ahead_batch b[2];
	unsigned cur, fill;
	size_t pos;  /* next record in b[cur] */
	bool queued; /* the job was submitted and not waited for */
};

struct input {
	struct gt_merge_input pub;
	struct gt_reader *r; /* open until its last record was merged; owned */
	char *strs;          /* pub's and info's strings; owned */
	struct gt_trace_info info;
	dev_t dev;
	ino_t ino;
	uint64_t size;  /* bytes of the file */
	uint64_t ident; /* hash of its header: a copy of a file has the same */

	/* merging */
	const union gt_record *head; /* next record, owned by r; NULL when done */
	uint64_t key;                /* head's time on the merged timeline */
	uint64_t last_ts_ns;         /* largest key so far */
	uint32_t index;              /* 1-based, as in its INPUT record */
	uint32_t host_id;            /* output string id of its hostname; 0 before first use */
	struct u32map pids;          /* its pid -> the merged file's */
	uint32_t last_pid, last_out; /* the last lookup of pids (last_pid 0: none) */
	uint32_t first_pid;          /* the merged pid of its first process */
	uint32_t *dense;             /* its string id (< GT_MERGE_DENSE_IDS) -> the merged file's;
	                              * 0: not seen; owned */
	size_t ndense;               /* entries of dense */
	struct u32map strs_map;      /* the same for larger ids */
	struct u32map nested;        /* a merged input's INPUT indexes -> the merged file's */
	struct ahead *ahead;         /* reading ahead: m->ahead[i]; NULL: records come from r */
};

/* What a merge rewrites in a record of one type. */
struct xform {
	uint16_t size;
	uint8_t nstr, ntime;
	uint16_t str_off[GT_MERGE_XFORM_MAX];  /* 4-byte string ids */
	uint16_t time_off[GT_MERGE_XFORM_MAX]; /* 8-byte trace-clock times */
};

/* The output: the writer, and with a thread, the batches of records on their way to it.
 * The merging thread fills batch `fill`; the writer thread writes the `full` batches that
 * follow `write` in ring order. lock guards full, done, abort and error. */
struct gt_merge_out {
	struct gt_writer *w; /* owned; only the writer thread uses it while that runs */
	bool threaded;       /* a writer thread runs */
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t filled;          /* a batch was handed over, or done/abort set */
	pthread_cond_t emptied;         /* the writer thread finished a batch */
	uint8_t *buf[GT_MERGE_BATCHES]; /* owned */
	size_t len[GT_MERGE_BATCHES];   /* bytes of records in each */
	unsigned fill, write, full;
	bool done;  /* no batch will follow */
	bool abort; /* drop what is queued: the merge failed */
	int error;  /* the writer thread's first error; sticky */
};

struct gt_merge {
	struct input *in; /* owned */
	size_t n;
	struct gt_merge_options opts;
	bool aligned;
	size_t wall_ref; /* first input with a wall-clock anchor (or 0) */
	size_t nccl_ref; /* SIZE_MAX: none */
	struct xform xf[GT_REC_MAX];

	/* writing */
	struct gt_merge_out out;
	struct gt_workpool *pool; /* reads the inputs ahead; NULL: the merging thread reads */
	struct ahead *ahead;      /* one per input, with the pool; owned */
	struct gt_strtab *strs;   /* the merged file's strings: dense ids */
	struct u32map undefined;  /* placeholder ids not yet defined -> 1 */
	uint32_t next_placeholder;
	struct u32map used_pids; /* pids of the merged file -> 1 */
	uint32_t next_pid;
	uint32_t next_index; /* for the INPUT records of merged inputs */
	uint32_t *heap;      /* input indexes, smallest key first */
	size_t nheap;
	union gt_record *scratch; /* the record being rewritten; owned */
	struct gt_trace_counts counts;
	bool written;
};

/* Fill *err (may be NULL) and return ret. */
int gt_merge_fail(struct gt_merge_error *err, size_t input, const char *msg, int ret);

/* ---- reading ahead (merge-read.c) ---------------------------------------------------------- */

/* How opts.threads are spent: one merges, a second writes (merge-out.c); of the others,
 * every other one reads ahead (the first of them included), the rest compress. */
static inline unsigned gt_merge_read_threads(unsigned threads)
{
	return threads > 2 ? (threads - 1) / 2 : 0;
}

static inline unsigned gt_merge_compress_threads(unsigned threads)
{
	return threads > 3 ? (threads - 2) / 2 : 0;
}

/* Start `threads` threads that decode every input's records ahead of the merge, and queue
 * each input's first batch. Returns 0 or -errno (then the merging thread reads, as before). */
int gt_merge_read_start(struct gt_merge *m, unsigned threads);

/* The next batch of an input read ahead: wait for it and queue the one after. Returns 1 and
 * *rec, 0 at its end, or the reader's -errno. */
int gt_merge_read_refill(struct gt_merge *m, struct ahead *a, const union gt_record **rec);

/* The next record of an input read ahead; valid until the next call. As gt_reader_next. */
static inline int gt_merge_read_next(struct gt_merge *m, struct ahead *a,
                                     const union gt_record **rec)
{
	const struct ahead_batch *b = &a->b[a->cur];

	if (a->pos < b->len) {
		*rec = (const union gt_record *)(b->buf + a->pos);
		a->pos += gt_record_align((*rec)->hdr.size);
		return 1;
	}
	return gt_merge_read_refill(m, a, rec);
}

/* Free an input's batches once it was read to its end. */
void gt_merge_read_done(struct ahead *a);

/* Wait for every batch queued, stop the threads and free the batches. Idempotent. */
void gt_merge_read_stop(struct gt_merge *m);

/* ---- the output (merge-out.c) -------------------------------------------------------------- */

/* Open the merged file under PATH.tmp-<pid> with the merged header, and start the writer
 * thread when opts.threads asks for one (without, or if it cannot start, the merging thread
 * writes). Returns 0 or -errno. */
int gt_merge_out_open(struct gt_merge *m, const char *path);

/* Append one record (strings too) to the merged file. Returns 0 or -errno (the writer
 * thread's error, sticky). */
int gt_merge_put(struct gt_merge *m, const struct gt_rec_hdr *rec);

/* Room for a record of `size` bytes (at most sizeof(union gt_record)), to be filled and
 * then appended by gt_merge_commit: with the writer thread, in the batch being filled (no
 * copy); without, m->scratch. Nothing may be put between the two calls. Returns 0 or
 * -errno (the writer thread's error). */
int gt_merge_reserve(struct gt_merge *m, size_t size, union gt_record **ret);

/* Append the record gt_merge_reserve gave room for. Returns 0 or -errno. */
int gt_merge_commit(struct gt_merge *m, const struct gt_rec_hdr *rec);

/* The merged file's id for these bytes: interned, its STRING record (with pid) written the
 * first time. Cut at GT_STRING_MAX bytes. Returns 0 or -errno. */
int gt_merge_out_string(struct gt_merge *m, uint32_t pid, const char *s, size_t len, uint32_t *id);

/* Write a STRING record with a given id (a placeholder being defined). */
int gt_merge_put_string(struct gt_merge *m, uint32_t pid, uint32_t id, const char *s, size_t len);

/* The INPUT records, one per input given, at the end. Returns 0 or -errno. */
int gt_merge_out_inputs(struct gt_merge *m);

/* Stop the writer thread, write the footer, rename into place; m->counts gets the file's
 * counts. Returns 0 or -errno. */
int gt_merge_out_close(struct gt_merge *m);

/* Stop the writer thread and remove the temporary file. Idempotent. */
void gt_merge_out_discard(struct gt_merge *m);

#endif /* GPUTRACE_MERGE_INT_H */
