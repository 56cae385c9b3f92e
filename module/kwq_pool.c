// SPDX-License-Identifier: GPL-2.0
/*
 * kwq worker pool: N kernel threads running the controller loop on one
 * queue, and kwq_parallelize() (client-go's ParallelizeUntil).
 *
 * Why kernel threads and not the kernel's workqueue: a worker spends most
 * of its life blocked waiting for a key, for as long as the queue lives.
 * That is what a kthread is for; a work item that never returns would pin
 * a kworker of a shared pool, and concurrency management would be of no
 * use. A thread per worker also gives the concurrency limit for free (N
 * threads, at most N handlers), a name in ps(1), and kthread_stop() to
 * reap. kwq_parallelize(), whose pieces are short and finite, uses the
 * unbound system workqueue. Documentation/kwq-pool.rst has the details.
 *
 * The pool is part of kwq.ko because an idle worker waits in the core's
 * wait loop with the pool's stop flag (kwq_get_wait()), not in kwq_get()
 * with a deadline: a stop wakes it at once, and an idle pool costs no
 * periodic wake-ups.
 */

#include <linux/atomic.h>
#include <linux/err.h>
#include <linux/kthread.h>
#include <linux/minmax.h>
#include <linux/module.h>
#include <linux/overflow.h>
#include <linux/sched.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/version.h>
#include <linux/wait.h>
#include <linux/wait_bit.h>
#include <linux/workqueue.h>

#include "kwq_internal.h"
#include "kwq_pool.h"

/**
 * struct kwq_pool_worker - one thread of a pool
 * @pool: the pool.
 * @task: the thread, pinned (get_task_struct) until kwq_pool_stop() reaps
 *	it, so that it may leave its loop on its own first.
 * @key: where kwq_get_ticket() copies the key being handled.
 * @ticket: the hand-out of @key: the worker's done and requeue end only
 *	it, never a later hand-out of the same key (after a processing
 *	timeout gave the key to another worker).
 */
struct kwq_pool_worker {
	struct kwq_pool *pool;
	struct task_struct *task;
	u64 ticket;
	u8 key[KWQ_KEY_MAX];
};

/**
 * struct kwq_pool - a worker pool on one queue
 * @q: the queue; the pool holds a reference on it.
 * @handler: see struct kwq_pool_attr.
 * @ctx: see struct kwq_pool_attr.
 * @max_retries: see struct kwq_pool_attr.
 * @nr_workers: threads started, the length of @w.
 * @stopping: set by kwq_pool_stop(); workers take no new key once it is.
 *	A u8, not a bool, as every flag read with READ_ONCE() (kwq_internal.h).
 * @running: threads that have not left their loop; kwq_pool_stop() waits
 *	for it to reach 0 (wait_var_event()).
 * @busy: handlers running now.
 * @peak_busy: the largest @busy seen.
 * @handled: see struct kwq_pool_stats.
 * @retried: see struct kwq_pool_stats.
 * @failed: see struct kwq_pool_stats.
 * @dropped: see struct kwq_pool_stats.
 * @aborted: see struct kwq_pool_stats.
 * @w: the workers.
 *
 * Nothing here needs a lock: the configuration is constant after start,
 * the counters are atomic, and @stopping is written once.
 */
struct kwq_pool {
	struct kwq *q;
	int (*handler)(void *ctx, const void *key, u32 len);
	void *ctx;
	u32 max_retries;
	u32 nr_workers;
	u8 stopping;
	atomic_t running;
	atomic_t busy;
	atomic_t peak_busy;
	atomic64_t handled;
	atomic64_t retried;
	atomic64_t failed;
	atomic64_t dropped;
	atomic64_t aborted;
	struct kwq_pool_worker w[];
};

static int kwq_pool_worker_fn(void *arg);

/**
 * kwq_pool_current() - the pool whose handler the caller is running in
 *
 * Context: any.
 * Return: the pool, or NULL when the caller is not one of a pool's
 * threads. A handler uses it to check kwq_pool_stopping() without keeping
 * the pool pointer in its context.
 */
struct kwq_pool *kwq_pool_current(void)
{
	struct kwq_pool_worker *w;

	if (!(current->flags & PF_KTHREAD) || kthread_func(current) != kwq_pool_worker_fn)
		return NULL;
	w = kthread_data(current);
	return w->pool;
}
EXPORT_SYMBOL_GPL(kwq_pool_current);

/* Whether the caller is a handler of a pool on @q. Context: any. */
bool kwq_pool_handles(const struct kwq *q)
{
	struct kwq_pool *pool = kwq_pool_current();

	return pool && pool->q == q;
}

/**
 * kwq_pool_stopping() - whether kwq_pool_stop() has begun to stop a pool
 * @pool: pool, or NULL (then false).
 *
 * A long handler may poll this and return KWQ_POOL_ABORT to give its key
 * back instead of delaying the stop. A drain sets it only after the queue
 * has drained, so handlers see it during a cancel.
 *
 * Context: any.
 * Return: true once a stop has begun.
 */
bool kwq_pool_stopping(const struct kwq_pool *pool)
{
	return pool && READ_ONCE(pool->stopping);
}
EXPORT_SYMBOL_GPL(kwq_pool_stopping);

/*
 * Take the next key, sleeping until one is ready, the queue ends or the
 * pool stops, in the same wait loop as every consumer (kwq_get_wait()):
 * an exclusive waiter on kwq.get_wait, so one add wakes one consumer
 * whether it is a pool thread or a user program, and one pool thread may
 * keep the timer of the next deadline. Returns 0, -ECANCELED (pool
 * stopping), -ESHUTDOWN, -EIDRM or -ENOMEM (no side for the key could be
 * had: nothing was taken).
 */
static int kwq_pool_take(struct kwq_pool_worker *w, u32 *len)
{
	struct kwq_pool *pool = w->pool;
	struct kwq_handout h = {};
	int ret;

	ret = kwq_get_wait(pool->q, w->key, KWQ_KEY_MAX, len, KWQ_FOREVER, NULL, &h,
			   &pool->stopping);
	if (!ret)
		w->ticket = h.ticket;
	return ret;
}

/* client-go's `queue.NumRequeues(key) >= maxRetries`, when a limit is set. */
static bool kwq_pool_retries_exhausted(struct kwq_pool *pool, const void *key, u32 len)
{
	int n;

	if (!pool->max_retries)
		return false;
	n = kwq_num_requeues(pool->q, key, len);
	return n >= 0 && (u32)n >= pool->max_retries;
}

/* The controller loop's follow-up to one handler call. */
static void kwq_pool_handle(struct kwq_pool_worker *w, u32 len)
{
	struct kwq_pool *pool = w->pool;
	struct kwq *q = pool->q;
	const void *key = w->key;
	atomic64_t *outcome;
	int busy, peak, ret;

	busy = atomic_inc_return(&pool->busy);
	peak = atomic_read(&pool->peak_busy);
	while (busy > peak && !atomic_try_cmpxchg(&pool->peak_busy, &peak, busy))
		;

	ret = pool->handler(pool->ctx, key, len);

	if (ret == KWQ_POOL_ABORT && READ_ONCE(pool->stopping)) {
		/* Unprocessed: back to the head, no failure, no done. */
		kwq_requeue_ticket(q, key, len, w->ticket);
		outcome = &pool->aborted;
		goto out;
	}
	if (ret == 0) {
		kwq_forget(q, key, len);
		outcome = &pool->handled;
	} else if (ret > 0 && ret != KWQ_POOL_ABORT) {
		kwq_forget(q, key, len);
		outcome = &pool->failed;
	} else if (kwq_pool_retries_exhausted(pool, key, len)) {
		kwq_forget(q, key, len);
		outcome = &pool->failed;
	} else if (kwq_add_rate_limited(q, key, len) >= 0) {
		outcome = &pool->retried;
	} else {
		/*
		 * A key the worker holds has its record and its side, so its
		 * re-add allocates nothing and is refused only when the queue
		 * shuts down or is destroyed. Only once the hand-out ended
		 * otherwise (a processing timeout, a done or requeue naming no
		 * hand-out), which put the key back or finished it, can the
		 * re-add find no memory or a full queue.
		 */
		outcome = &pool->dropped;
	}
	kwq_done_ticket(q, key, len, w->ticket);
out:
	/* Counted after the queue saw the outcome: a reader never runs ahead. */
	atomic64_inc(outcome);
	atomic_dec(&pool->busy);
}

static int kwq_pool_worker_fn(void *arg)
{
	struct kwq_pool_worker *w = arg;
	struct kwq_pool *pool = w->pool;
	u32 len;
	int ret;

	/* -ECANCELED, -ESHUTDOWN and -EIDRM end the loop. */
	while ((ret = kwq_pool_take(w, &len)) != -ECANCELED) {
		if (!ret) {
			kwq_pool_handle(w, len);
		} else if (ret == -ENOMEM) {
			/*
			 * No side for the key, nothing taken: try again, 100 ms
			 * later so that memory pressure does not spin a worker.
			 */
			schedule_timeout_idle(HZ / 10);
		} else {
			break;
		}
	}
	if (atomic_dec_and_test(&pool->running))
		wake_up_var(&pool->running);
	return 0;
}

/* Reap threads [0, n): each has left its loop or never ran. */
static void kwq_pool_reap(struct kwq_pool *pool, u32 n)
{
	u32 i;

	for (i = 0; i < n; i++) {
		kthread_stop(pool->w[i].task);
		put_task_struct(pool->w[i].task);
	}
}

/**
 * kwq_pool_start() - start worker threads on a queue
 * @q: queue; the pool takes its own reference, dropped by kwq_pool_stop().
 * @attr: handler, workers and limits; copied.
 *
 * Each worker loops: take a key (sleeping until one is ready), call the
 * handler, then
 *
 * - 0: kwq_forget() + kwq_done();
 * - a negative errno (retryable): kwq_add_rate_limited() + kwq_done(), or,
 *   once the key's kwq_num_requeues() reached @attr->max_retries (if set),
 *   as KWQ_POOL_DROP;
 * - KWQ_POOL_DROP (permanent): kwq_forget() + kwq_done();
 * - KWQ_POOL_ABORT while the pool is stopping: kwq_requeue() (the key goes
 *   back to the head unprocessed); otherwise it counts as a retryable
 *   error.
 *
 * A worker leaves its loop when the pool stops, when the queue is shut
 * down and has nothing more to hand out (-ESHUTDOWN), or when it is
 * destroyed (-EIDRM). The pool must still be stopped with kwq_pool_stop().
 *
 * @attr->max_retries needs the key's failure count, which a queue keeps
 * only if its limiter (chosen at creation, never changed) has an
 * EXPONENTIAL or FAST_SLOW step: on any other queue a non-zero
 * @attr->max_retries is refused, as is one above KWQ_FAILURES_MAX
 * (524287), where the count saturates. Either limit would never fire.
 *
 * Context: process context; sleeps.
 * Return: the pool, or ERR_PTR(-EINVAL) (no handler, @attr->workers 0 or
 * above KWQ_POOL_MAX_WORKERS, @attr->max_retries that could never fire,
 * as above), ERR_PTR(-EOPNOTSUPP) (a queue with
 * payloads, whose handler would not see them), ERR_PTR(-ENOMEM), or the
 * error of kthread_create().
 */
struct kwq_pool *kwq_pool_start(struct kwq *q, const struct kwq_pool_attr *attr)
{
	const char *name;
	struct kwq_pool *pool;
	struct task_struct *task;
	u32 i;

	might_sleep();
	if (!q || !attr || !attr->handler || !attr->workers ||
	    attr->workers > KWQ_POOL_MAX_WORKERS)
		return ERR_PTR(-EINVAL);
	/* A handler takes a key, not a payload: it would never see them. */
	if (q->payload_max)
		return ERR_PTR(-EOPNOTSUPP);
	/*
	 * max_retries compares kwq_num_requeues(), which stays 0 on a queue
	 * whose limiter keeps no per-key count, and stops at
	 * KWQ_FAILURES_MAX: the limit could never fire. Refused rather than
	 * retried forever. The limiter is fixed at the queue's creation, so
	 * reading it unlocked, once, holds for the pool's life.
	 */
	if (attr->max_retries &&
	    (!kwq_rl_tracks_items(&q->rl) || attr->max_retries > KWQ_FAILURES_MAX))
		return ERR_PTR(-EINVAL);
	pool = kvzalloc(struct_size(pool, w, attr->workers), GFP_KERNEL);
	if (!pool)
		return ERR_PTR(-ENOMEM);
	pool->q = q;
	pool->handler = attr->handler;
	pool->ctx = attr->ctx;
	pool->max_retries = attr->max_retries;
	name = attr->name ?: kwq_name(q);
	if (!*name)
		name = "anon";

	for (i = 0; i < attr->workers; i++) {
		pool->w[i].pool = pool;
		task = kthread_create(kwq_pool_worker_fn, &pool->w[i], "kwq%u/%s", i, name);
		if (IS_ERR(task)) {
			/* Threads never woken never run their function. */
			kwq_pool_reap(pool, i);
			kvfree(pool);
			return ERR_CAST(task);
		}
		get_task_struct(task);
		pool->w[i].task = task;
	}
	pool->nr_workers = attr->workers;
	atomic_set(&pool->running, attr->workers);
	kwq_get_ref(q);
	for (i = 0; i < pool->nr_workers; i++)
		wake_up_process(pool->w[i].task);
	return pool;
}
EXPORT_SYMBOL_GPL(kwq_pool_start);

/**
 * kwq_pool_stop() - stop a pool and free it
 * @pool: pool from kwq_pool_start().
 * @mode: KWQ_POOL_CANCEL or KWQ_POOL_DRAIN, see enum kwq_pool_stop_mode.
 * @deadline: for KWQ_POOL_DRAIN, when to give up waiting for the queue to
 *	drain (absolute CLOCK_MONOTONIC, or KWQ_FOREVER); ignored for cancel.
 * @final: if not NULL, filled with the pool's statistics at the end.
 *
 * Cancel: workers take no new key; handlers already running finish and
 * their verdicts are applied (a retryable error is re-added with backoff,
 * since the queue stays up); keys still queued or waiting stay in the
 * queue. Nothing is lost.
 *
 * Drain: kwq_shutdown_drain() with KWQ_DRAIN_FLUSH_WAITING first, while the
 * workers keep handling keys; keys waiting for a backoff are queued at
 * once. A retryable error during the drain cannot be retried (the queue
 * refuses adds) and counts as dropped. If the drain fails (deadline,
 * signal, a kwq_shutdown() cut it short, queue destroyed), the pool is
 * cancelled as above and the keys left stay in the shut-down queue, where
 * another consumer can still take them.
 *
 * Either way, when this returns no handler of the pool is running and
 * none of its threads exists, and @pool is freed. It waits for running
 * handlers without a time limit, so handlers must not block forever.
 *
 * Context: process context; sleeps. Not from a handler of @pool, nor a
 * drain from a handler of any pool on @pool's queue.
 * Return: 0, -EINVAL (unknown @mode: nothing was done), -EDEADLK (called
 * from one of @pool's handlers, or a drain from a handler of any pool on
 * the same queue, which would wait for its own key: nothing was done), or
 * for a drain the error of kwq_shutdown_drain() (the pool is stopped and
 * freed anyway).
 */
int kwq_pool_stop(struct kwq_pool *pool, enum kwq_pool_stop_mode mode, ktime_t deadline,
		  struct kwq_pool_stats *final)
{
	struct kwq *q = pool->q;
	int ret = 0;

	might_sleep();
	if (mode != KWQ_POOL_CANCEL && mode != KWQ_POOL_DRAIN)
		return -EINVAL;
	if (kwq_pool_current() == pool || (mode == KWQ_POOL_DRAIN && kwq_pool_handles(q)))
		return -EDEADLK;
	if (mode == KWQ_POOL_DRAIN)
		ret = kwq_shutdown_drain(q, deadline, KWQ_DRAIN_FLUSH_WAITING);

	WRITE_ONCE(pool->stopping, true);
	/* Idle workers sleep on get_wait; running ones see the flag next. */
	wake_up_all(&q->get_wait);
	wait_var_event(&pool->running, !atomic_read(&pool->running));
	/* Every thread has left its loop: kthread_stop() only reaps. */
	kwq_pool_reap(pool, pool->nr_workers);

	if (final)
		kwq_pool_stats(pool, final);
	kwq_put(q);
	kvfree(pool);
	return ret;
}
EXPORT_SYMBOL_GPL(kwq_pool_stop);

/**
 * kwq_pool_stats() - a snapshot of a pool's counters
 * @pool: pool.
 * @st: filled in.
 *
 * Each counter is read atomically; a counter is bumped only after the
 * queue has seen the outcome it counts (e.g. the key is done).
 *
 * Context: any but hard interrupt.
 */
void kwq_pool_stats(const struct kwq_pool *pool, struct kwq_pool_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->handled = atomic64_read(&pool->handled);
	st->retried = atomic64_read(&pool->retried);
	st->failed = atomic64_read(&pool->failed);
	st->dropped = atomic64_read(&pool->dropped);
	st->aborted = atomic64_read(&pool->aborted);
	st->workers = pool->nr_workers;
	st->running = atomic_read(&pool->running);
	st->busy = atomic_read(&pool->busy);
	st->peak_busy = atomic_read(&pool->peak_busy);
}
EXPORT_SYMBOL_GPL(kwq_pool_stats);

/**
 * struct kwq_par - one kwq_parallelize() call, shared by its workers
 * @fn: see kwq_parallelize().
 * @ctx: see kwq_parallelize().
 * @pieces: see kwq_parallelize().
 * @chunk: pieces per chunk, at least 1.
 * @chunks: number of chunks.
 * @next: the next chunk to hand out.
 * @err: the first non-zero return of @fn, 0 while there is none.
 */
struct kwq_par {
	int (*fn)(void *ctx, u32 piece);
	void *ctx;
	u32 pieces;
	u32 chunk;
	u64 chunks;
	atomic64_t next;
	atomic_t err;
};

/**
 * struct kwq_par_work - a helper worker of kwq_parallelize()
 * @work: queued on the unbound system workqueue.
 * @par: the call it helps.
 */
struct kwq_par_work {
	struct work_struct work;
	struct kwq_par *par;
};

/* Take chunks until none is left or a piece failed. */
static void kwq_par_run(struct kwq_par *p)
{
	u64 c, i, end;
	int ret;

	while ((c = atomic64_fetch_inc(&p->next)) < p->chunks) {
		end = min_t(u64, p->pieces, (c + 1) * p->chunk);
		for (i = c * p->chunk; i < end; i++) {
			/* Like ParallelizeUntil's ctx check before each piece. */
			if (atomic_read(&p->err))
				return;
			ret = p->fn(p->ctx, (u32)i);
			if (ret) {
				atomic_cmpxchg(&p->err, 0, ret);
				return;
			}
		}
	}
}

static void kwq_par_work_fn(struct work_struct *work)
{
	kwq_par_run(container_of(work, struct kwq_par_work, work)->par);
}

/**
 * kwq_parallelize() - run fn(ctx, i) for every i in [0, @pieces) on up to
 *	@workers threads at once
 * @workers: most pieces running at once; at least 1. Counts above
 *	KWQ_PARALLELIZE_MAX_WORKERS are clamped to it.
 * @pieces: number of pieces; 0 returns at once.
 * @chunk: consecutive pieces a worker takes at a time (client-go's
 *	WithChunkSize); 0 means 1.
 * @fn: called once per piece, in process context (the caller's or a
 *	kworker's); may sleep. Returns 0 to go on; anything else stops the
 *	pieces not yet started (pieces already running finish) and is
 *	returned, like a cancelled context in ParallelizeUntil.
 * @ctx: passed to @fn.
 *
 * The caller works too: min(@workers, chunks) - 1 helpers are queued on
 * the unbound system workqueue. If they cannot be allocated the caller
 * does all the work alone, which is slower but still correct, and nothing
 * is logged. Returns when
 * every piece has run (or was skipped after a failure) and every helper
 * has finished.
 *
 * Context: process context; sleeps. @fn must not wait for work that
 * needs a free worker of the unbound system workqueue to run.
 * Return: 0, the first non-zero return of @fn, or -EINVAL for @workers 0
 * (client-go silently does nothing).
 */
int kwq_parallelize(u32 workers, u32 pieces, u32 chunk,
		    int (*fn)(void *ctx, u32 piece), void *ctx)
{
	struct kwq_par par = {
		.fn = fn,
		.ctx = ctx,
		.pieces = pieces,
		.chunk = chunk ?: 1,
		.next = ATOMIC64_INIT(0),
		.err = ATOMIC_INIT(0),
	};
	struct kwq_par_work *helpers;
	u32 i, n;

	might_sleep();
	if (!workers || !fn)
		return -EINVAL;
	if (!pieces)
		return 0;
	par.chunks = DIV_ROUND_UP_ULL((u64)pieces, par.chunk);
	/*
	 * Clamped: a helper beyond the workqueue's max_active would only wait
	 * in line, and each one queued takes a slot from its other users.
	 */
	workers = min_t(u32, workers, KWQ_PARALLELIZE_MAX_WORKERS);
	n = min_t(u64, workers, par.chunks) - 1;
	/* No helpers is a documented outcome, not a failure worth a warning. */
	helpers = n ? kcalloc(n, sizeof(*helpers), GFP_KERNEL | __GFP_NOWARN) : NULL;
	if (!helpers)
		n = 0;
	for (i = 0; i < n; i++) {
		helpers[i].par = &par;
		INIT_WORK(&helpers[i].work, kwq_par_work_fn);
		queue_work(kwq_unbound_wq, &helpers[i].work);
	}
	kwq_par_run(&par);
	for (i = 0; i < n; i++)
		flush_work(&helpers[i].work);
	kfree(helpers);
	return atomic_read(&par.err);
}
EXPORT_SYMBOL_GPL(kwq_parallelize);
