/* A small pool of worker threads that run jobs in the order they were queued; a thread that
 * waits for a job still queued runs it itself, so a pool smaller than the work never makes it
 * slower than doing it inline. Header-only (static functions), as merge-int.h's maps: the
 * trace writer (src/format/writer.c, libgputrace) compresses chunks with it and gputrace merge
 * (src/ops/merge-read.c, the CLI) reads its inputs ahead with it; neither library reaches the
 * other's hidden symbols. Runs in the CLI process (the writer's pool: whoever asks for one). */
#ifndef GPUTRACE_WORKPOOL_H
#define GPUTRACE_WORKPOOL_H

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

enum gt_workpool_state {
	GT_WORKPOOL_IDLE,    /* never queued, or waited for */
	GT_WORKPOOL_QUEUED,  /* in the queue */
	GT_WORKPOOL_RUNNING, /* a thread runs it */
	GT_WORKPOOL_DONE,    /* finished, not yet waited for */
};

/* A job: embedded in the caller's own structure, which outlives it until gt_workpool_wait. */
struct gt_workpool_job {
	void (*run)(struct gt_workpool_job *job); /* the work; what it writes is visible to the
	                                           * thread that waited for the job */
	struct gt_workpool_job *next;             /* in the queue; the pool's */
	enum gt_workpool_state state;             /* under the pool's lock */
};

/* The functions:
 *   gt_workpool_new(threads >= 1, &ret): start the workers; 0, -ENOMEM or -EAGAIN;
 *   gt_workpool_submit(p, job): queue an idle job after every job queued before;
 *   gt_workpool_wait(p, job): until the job has run (a job still queued is taken out and run
 *     by the caller); then it is idle again; an idle job returns at once;
 *   gt_workpool_ready(p, job): would waiting return at once?
 *   gt_workpool_free(p): stop the workers once the queue is empty and free; NULL accepted. */
struct gt_workpool {
	pthread_mutex_t lock;
	pthread_cond_t work;                   /* a job was queued, or stop was set */
	pthread_cond_t done;                   /* a job finished */
	struct gt_workpool_job *head, **tailp; /* under lock */
	bool stop; /* under lock: workers leave once the queue is empty */
	unsigned nthreads;
	pthread_t *threads; /* owned */
};

static inline void gt_workpool_finish_(struct gt_workpool *p, struct gt_workpool_job *job)
{
	pthread_mutex_lock(&p->lock);
	job->state = GT_WORKPOOL_DONE;
	/* pairs with gt_workpool_wait's wait on `done`; the lock publishes the job's results */
	pthread_cond_broadcast(&p->done);
	pthread_mutex_unlock(&p->lock);
}

static inline void *gt_workpool_main_(void *arg)
{
	struct gt_workpool *p = arg;

	pthread_mutex_lock(&p->lock);
	for (;;) {
		struct gt_workpool_job *job;

		/* woken by gt_workpool_submit's or gt_workpool_free's signal of `work` */
		while (!p->head && !p->stop)
			pthread_cond_wait(&p->work, &p->lock);
		if (!p->head)
			break;
		job = p->head;
		p->head = job->next;
		if (!p->head)
			p->tailp = &p->head;
		job->state = GT_WORKPOOL_RUNNING;
		pthread_mutex_unlock(&p->lock);
		job->run(job);
		gt_workpool_finish_(p, job);
		pthread_mutex_lock(&p->lock);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

static inline void gt_workpool_free(struct gt_workpool *p);

static inline int gt_workpool_new(unsigned threads, struct gt_workpool **ret)
{
	struct gt_workpool *p;
	int r;

	if (!threads || !ret)
		return -EINVAL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->threads = calloc(threads, sizeof(*p->threads));
	if (!p->threads) {
		free(p);
		return -ENOMEM;
	}
	p->tailp = &p->head;
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->work, NULL);
	pthread_cond_init(&p->done, NULL);
	for (unsigned i = 0; i < threads; i++) {
		r = pthread_create(&p->threads[i], NULL, gt_workpool_main_, p);
		if (r != 0) {
			gt_workpool_free(p); /* joins the ones started */
			return -r;
		}
		p->nthreads++;
	}
	*ret = p;
	return 0;
}

static inline void gt_workpool_submit(struct gt_workpool *p, struct gt_workpool_job *job)
{
	pthread_mutex_lock(&p->lock);
	job->state = GT_WORKPOOL_QUEUED;
	job->next = NULL;
	*p->tailp = job;
	p->tailp = &job->next;
	/* pairs with gt_workpool_main_'s wait; the lock publishes what the job will read */
	pthread_cond_signal(&p->work);
	pthread_mutex_unlock(&p->lock);
}

static inline void gt_workpool_wait(struct gt_workpool *p, struct gt_workpool_job *job)
{
	pthread_mutex_lock(&p->lock);
	if (job->state == GT_WORKPOOL_QUEUED) {
		struct gt_workpool_job **pp = &p->head;

		/* no worker took it yet: run it here rather than wait behind the queue */
		while (*pp != job)
			pp = &(*pp)->next;
		*pp = job->next;
		if (!*pp)
			p->tailp = pp;
		job->state = GT_WORKPOOL_RUNNING;
		pthread_mutex_unlock(&p->lock);
		job->run(job);
		pthread_mutex_lock(&p->lock);
		job->state = GT_WORKPOOL_DONE;
	}
	/* woken by finish's broadcast of `done` */
	while (job->state == GT_WORKPOOL_RUNNING)
		pthread_cond_wait(&p->done, &p->lock);
	job->state = GT_WORKPOOL_IDLE;
	pthread_mutex_unlock(&p->lock);
}

static inline bool gt_workpool_ready(struct gt_workpool *p, struct gt_workpool_job *job)
{
	bool ready;

	pthread_mutex_lock(&p->lock);
	ready = job->state == GT_WORKPOOL_DONE || job->state == GT_WORKPOOL_IDLE;
	pthread_mutex_unlock(&p->lock);
	return ready;
}

static inline void gt_workpool_free(struct gt_workpool *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	p->stop = true;
	/* pairs with gt_workpool_main_'s wait */
	pthread_cond_broadcast(&p->work);
	pthread_mutex_unlock(&p->lock);
	for (unsigned i = 0; i < p->nthreads; i++)
		pthread_join(p->threads[i], NULL);
	pthread_cond_destroy(&p->done);
	pthread_cond_destroy(&p->work);
	pthread_mutex_destroy(&p->lock);
	free(p->threads);
	free(p);
}

#endif /* GPUTRACE_WORKPOOL_H */
