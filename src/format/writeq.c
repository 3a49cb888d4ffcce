/* The trace writer's queue and its thread: chunks wait here, compressed, and are written in
 * order, as many per writev() as GT_WRITE_MAX_BYTES takes. Runs in the CLI (gputrace run) and
 * in the standalone drainer's process (the traced application); never on an application
 * thread except for gt_writeq_finish/cancel at exit. */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "stall.h"
#include "writeq.h"

/* Chunks taken from the queue at once; written by as few writev() calls as GT_WRITE_MAX_BYTES
 * allows. */
#define BATCH_MAX 64
/* How often a bounded wait looks at the thread's progress. */
#define STALL_CHECK_NS (100ull * 1000u * 1000u)

struct item {
	struct item *next;
	size_t len; /* bytes */
	uint8_t bytes[];
};

struct gt_writeq {
	int fd;       /* the trace file; borrowed (owned once abandoned) */
	int wake_fd;  /* eventfd written after each batch; owned */
	size_t limit; /* bytes: full at this many waiting */
	uint64_t stall_ns;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;        /* the queue shrank or grew, or the thread finished */
	struct item *head, **tailp; /* under lock; items leave only once written */
	_Atomic size_t queued;      /* bytes in the list; changed under lock */
	_Atomic int error;          /* first write/fsync error; set by the thread */
	_Atomic uint64_t progress;  /* write()/fsync() calls returned */
	bool closing;               /* under lock: nothing more comes; fsync and stop */
	bool cancel;                /* under lock: write nothing more */
	bool done;                  /* under lock: the thread finished */
	bool abandoned;             /* under lock: the thread frees the queue and closes fd */
	bool stalled;               /* under lock: a wait gave up at progress stalled_at */
	uint64_t stalled_at;
};

static void queue_free(struct gt_writeq *q)
{
	struct item *it, *next;

	for (it = q->head; it; it = next) {
		next = it->next;
		free(it);
	}
	pthread_cond_destroy(&q->cond);
	pthread_mutex_destroy(&q->lock);
	if (q->wake_fd >= 0)
		close(q->wake_fd);
	free(q);
}

/* Write the batch in order, resuming after short writes. One writev() takes at most
 * GT_WRITE_MAX_BYTES: each call that returns is progress (the stall limit counts calls), so a
 * slow disk that moves shows it at a fixed byte granularity however much is queued. */
static int write_batch(struct gt_writeq *q, struct item **batch, unsigned n)
{
	struct iovec iov[BATCH_MAX];
	unsigned i, k;

	for (i = 0; i < n; i++)
		iov[i] = (struct iovec){batch[i]->bytes, batch[i]->len};
	i = 0;
	while (i < n) {
		size_t bytes = 0, cut = 0;
		ssize_t w;

		for (k = i; k < n && bytes + iov[k].iov_len <= GT_WRITE_MAX_BYTES; k++)
			bytes += iov[k].iov_len;
		if (k == i) {
			/* the next chunk alone is larger: its first GT_WRITE_MAX_BYTES */
			cut = iov[i].iov_len - GT_WRITE_MAX_BYTES;
			iov[i].iov_len = GT_WRITE_MAX_BYTES;
			k = i + 1;
		}
		w = writev(q->fd, iov + i, (int)(k - i));
		iov[k - 1].iov_len += cut;
		atomic_fetch_add_explicit(&q->progress, 1, memory_order_relaxed);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		if (w == 0)
			return -EIO;
		while (i < n && (size_t)w >= iov[i].iov_len)
			w -= (ssize_t)iov[i++].iov_len;
		if (i < n) {
			iov[i].iov_base = (uint8_t *)iov[i].iov_base + w;
			iov[i].iov_len -= (size_t)w;
		}
	}
	return 0;
}

static void *writeq_thread(void *arg)
{
	struct gt_writeq *q = arg;
	struct item *batch[BATCH_MAX];
	uint64_t one = 1;
	bool abandoned;
	int r;

	prctl(PR_SET_NAME, "gputrace-write", 0, 0, 0);
	pthread_mutex_lock(&q->lock);
	for (;;) {
		struct item *it;
		unsigned n = 0, i;
		bool skip;

		while (!q->head && !q->closing)
			pthread_cond_wait(&q->cond, &q->lock);
		if (!q->head)
			break;
		for (it = q->head; it && n < BATCH_MAX; it = it->next)
			batch[n++] = it;
		skip = q->cancel || q->abandoned || atomic_load(&q->error);
		pthread_mutex_unlock(&q->lock);
		r = skip ? 0 : write_batch(q, batch, n);
		pthread_mutex_lock(&q->lock);
		for (i = 0; i < n; i++) {
			q->head = batch[i]->next;
			atomic_fetch_sub_explicit(&q->queued, batch[i]->len, memory_order_relaxed);
		}
		if (!q->head)
			q->tailp = &q->head;
		if (r < 0 && !atomic_load(&q->error))
			atomic_store(&q->error, r);
		pthread_cond_broadcast(&q->cond);
		pthread_mutex_unlock(&q->lock);
		for (i = 0; i < n; i++)
			free(batch[i]);
		if (write(q->wake_fd, &one, sizeof(one)) < 0) {
			/* a full counter already wakes the reader */
		}
		pthread_mutex_lock(&q->lock);
	}
	if (!q->cancel && !q->abandoned && !atomic_load(&q->error)) {
		pthread_mutex_unlock(&q->lock);
		/* EINVAL: a file that cannot be synced (a FIFO): nothing to wait for */
		r = fsync(q->fd) < 0 && errno != EINVAL ? -errno : 0;
		atomic_fetch_add_explicit(&q->progress, 1, memory_order_relaxed);
		pthread_mutex_lock(&q->lock);
		if (r < 0 && !atomic_load(&q->error))
			atomic_store(&q->error, r);
	}
	q->done = true;
	abandoned = q->abandoned;
	pthread_cond_broadcast(&q->cond);
	pthread_mutex_unlock(&q->lock);
	if (abandoned) {
		/* nobody waits for us any more: the queue and the file are ours to let go */
		close(q->fd);
		queue_free(q);
	}
	return NULL;
}

int gt_writeq_new(int fd, size_t limit_bytes, uint64_t stall_ns, struct gt_writeq **ret)
{
	struct gt_writeq *q = calloc(1, sizeof(*q));
	pthread_condattr_t ca;
	sigset_t all, old;
	int r;

	if (!q)
		return -ENOMEM;
	q->fd = fd;
	q->limit = limit_bytes;
	q->stall_ns = stall_ns;
	q->tailp = &q->head;
	q->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (q->wake_fd < 0) {
		r = -errno;
		free(q);
		return r;
	}
	pthread_mutex_init(&q->lock, NULL);
	/* timed waits on the trace clock, which wall-clock steps do not move */
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, GT_TRACE_CLOCK);
	pthread_cond_init(&q->cond, &ca);
	pthread_condattr_destroy(&ca);
	/* The thread takes no signals meant for the program (or the CLI's main loop). */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	r = -pthread_create(&q->thread, NULL, writeq_thread, q);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r < 0) {
		queue_free(q);
		return r;
	}
	*ret = q;
	return 0;
}

int gt_writeq_push(struct gt_writeq *q, const void *bytes, size_t len)
{
	struct item *it;
	int r = atomic_load(&q->error);

	if (r)
		return r;
	it = malloc(sizeof(*it) + len);
	if (!it)
		return -ENOMEM;
	it->next = NULL;
	it->len = len;
	memcpy(it->bytes, bytes, len);
	pthread_mutex_lock(&q->lock);
	*q->tailp = it;
	q->tailp = &it->next;
	atomic_fetch_add_explicit(&q->queued, len, memory_order_relaxed);
	pthread_cond_broadcast(&q->cond);
	pthread_mutex_unlock(&q->lock);
	return 0;
}

bool gt_writeq_full(const struct gt_writeq *q)
{
	return atomic_load_explicit(&q->queued, memory_order_relaxed) >= q->limit;
}

int gt_writeq_error(const struct gt_writeq *q)
{
	return atomic_load(&q->error);
}

uint64_t gt_writeq_progress(const struct gt_writeq *q)
{
	return atomic_load_explicit(&q->progress, memory_order_relaxed);
}

int gt_writeq_wake_fd(const struct gt_writeq *q)
{
	return q->wake_fd;
}

static bool has_space(const struct gt_writeq *q)
{
	return q->queued < q->limit || atomic_load(&q->error);
}

static bool is_done(const struct gt_writeq *q)
{
	return q->done;
}

/* With the lock held: wait until ready(q), or until the thread's calls stop returning for
 * stall_ns (-ETIMEDOUT). A queue that stalled before and has not moved since gives up at
 * once, so that a caller's successive waits do not each take stall_ns. */
static int wait_until(struct gt_writeq *q, bool (*ready)(const struct gt_writeq *q))
{
	struct gt_stall st;

	gt_stall_init(&st, q->stall_ns, atomic_load(&q->progress));
	while (!ready(q)) {
		struct timespec ts;
		uint64_t t, p;

		if (!q->stall_ns) {
			pthread_cond_wait(&q->cond, &q->lock);
			continue;
		}
		if (q->stalled && st.seen == q->stalled_at)
			return -ETIMEDOUT;
		t = gt_now_ns() + gt_stall_step_ns(&st, STALL_CHECK_NS);
		ts.tv_sec = (time_t)(t / 1000000000u);
		ts.tv_nsec = (long)(t % 1000000000u);
		pthread_cond_timedwait(&q->cond, &q->lock, &ts);
		if (ready(q))
			break;
		p = atomic_load(&q->progress);
		if (p != st.seen)
			q->stalled = false;
		if (gt_stall_expired(&st, p)) {
			q->stalled = true;
			q->stalled_at = p;
			return -ETIMEDOUT;
		}
	}
	return 0;
}

int gt_writeq_wait_space(struct gt_writeq *q)
{
	int r;

	pthread_mutex_lock(&q->lock);
	r = wait_until(q, has_space);
	pthread_mutex_unlock(&q->lock);
	return r < 0 ? r : atomic_load(&q->error);
}

/* Stop the thread (after writing what is queued, unless cancel) and free the queue, or
 * leave both to the thread when it stalled. */
static int stop(struct gt_writeq *q, bool cancel)
{
	pthread_t th;
	int r;

	pthread_mutex_lock(&q->lock);
	q->closing = true;
	q->cancel = cancel;
	pthread_cond_broadcast(&q->cond);
	r = wait_until(q, is_done);
	if (r < 0) {
		/* read before the thread may free q */
		th = q->thread;
		q->abandoned = true;
		pthread_mutex_unlock(&q->lock);
		pthread_detach(th);
		return r;
	}
	pthread_mutex_unlock(&q->lock);
	pthread_join(q->thread, NULL);
	r = cancel ? 0 : atomic_load(&q->error);
	queue_free(q);
	return r;
}

int gt_writeq_finish(struct gt_writeq *q)
{
	return stop(q, false);
}

int gt_writeq_cancel(struct gt_writeq *q)
{
	return stop(q, true);
}
