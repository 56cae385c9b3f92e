/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kwq worker pool: the in-kernel counterpart of client-go's worker
 * goroutines (`for processNextWorkItem() {}`) and of ParallelizeUntil.
 *
 * A pool runs N kernel threads on one queue. Each takes a key, calls the
 * handler, and turns the handler's verdict into the controller loop's
 * follow-up: forget + done on success, add-rate-limited + done on a
 * retryable error, forget + done on a permanent one. See
 * Documentation/kwq-pool.rst.
 *
 * Contexts: kwq_pool_start(), kwq_pool_stop() and kwq_parallelize() sleep
 * (process context, no spinlock held). kwq_pool_stats() and
 * kwq_pool_stopping() never sleep and may be called from any context but
 * hard interrupts. Handlers run in process context in the pool's kernel
 * threads and may sleep.
 */
#ifndef _KWQ_POOL_H
#define _KWQ_POOL_H

#include <linux/ktime.h>
#include <linux/types.h>

struct kwq;
struct kwq_pool;

/* Most workers one pool may have. */
#define KWQ_POOL_MAX_WORKERS	256

/*
 * Most workers kwq_parallelize() uses; a larger count is clamped to it.
 * Its helpers share the unbound system workqueue (max_active at least
 * 512) with the rest of the kernel, which this leaves room for.
 */
#define KWQ_PARALLELIZE_MAX_WORKERS	256

/*
 * Handler verdicts besides 0 (success) and a negative errno (retryable
 * error). Every other positive value is reserved and treated as
 * KWQ_POOL_DROP.
 */
#define KWQ_POOL_DROP		1	/* permanent error: forget + done, counted failed */
#define KWQ_POOL_ABORT		2	/* pool stopping: give the key back unprocessed */

/**
 * struct kwq_pool_attr - how a worker pool runs
 * @handler: called for each key taken, in process context in one of the
 *	pool's threads; may sleep. @key is valid until it returns and holds
 *	@len bytes (not NUL-terminated). Returns 0 for success, a negative
 *	errno for a retryable error, KWQ_POOL_DROP for a permanent error, or
 *	KWQ_POOL_ABORT to give up because kwq_pool_stopping() is true
 *	(kwq_pool_current() is the pool running the handler).
 * @ctx: passed to @handler unchanged.
 * @workers: number of threads, 1 to KWQ_POOL_MAX_WORKERS; at most this
 *	many handlers run at once.
 * @max_retries: a retryable error of a key whose kwq_num_requeues() has
 *	reached this count is treated as permanent (client-go's
 *	`if queue.NumRequeues(key) < maxRetries`); 0 retries forever. Non-zero
 *	only on a queue whose limiter keeps a per-key failure count (an
 *	EXPONENTIAL or FAST_SLOW step), and at most 524287, where that count
 *	saturates: kwq_pool_start() refuses anything else with -EINVAL.
 * @name: thread names are "kwq<i>/<name>" (truncated to 15 characters);
 *	NULL uses the queue's name, or "anon" for an anonymous queue.
 */
struct kwq_pool_attr {
	int (*handler)(void *ctx, const void *key, u32 len);
	void *ctx;
	u32 workers;
	u32 max_retries;
	const char *name;
};

/**
 * enum kwq_pool_stop_mode - what kwq_pool_stop() does with pending work
 * @KWQ_POOL_CANCEL: stop the workers; the queue stays up and every key it
 *	holds stays there for other consumers. Handlers already running
 *	finish and their verdicts are applied as usual; no new key is taken.
 * @KWQ_POOL_DRAIN: kwq_shutdown_drain() the queue (which shuts it down for
 *	every user, and queues keys waiting for a backoff at once), keep
 *	working until nothing is queued or processing, then stop.
 */
enum kwq_pool_stop_mode {
	KWQ_POOL_CANCEL,
	KWQ_POOL_DRAIN,
};

/**
 * struct kwq_pool_stats - what a pool has done, in one snapshot
 * @handled: handler calls that returned 0 (key forgotten and done).
 * @retried: retryable errors whose key was re-added with backoff.
 * @failed: permanent errors: KWQ_POOL_DROP, or a retryable error after
 *	@max_retries (key forgotten and done).
 * @dropped: retryable errors the queue refused to re-add because it is
 *	shutting down or destroyed (key done, not retried), or, only once
 *	the hand-out ended otherwise (a processing timeout, a done or
 *	requeue naming no hand-out), for want of memory or room.
 * @aborted: KWQ_POOL_ABORT while stopping (key put back at the head).
 * @workers: threads the pool was started with.
 * @running: threads that have not left their loop yet.
 * @busy: handlers running now.
 * @peak_busy: most handlers that ran at once since the start.
 *
 * Every handler call ends in exactly one of @handled, @retried, @failed,
 * @dropped and @aborted.
 */
struct kwq_pool_stats {
	u64 handled;
	u64 retried;
	u64 failed;
	u64 dropped;
	u64 aborted;
	u32 workers;
	u32 running;
	u32 busy;
	u32 peak_busy;
};

struct kwq_pool *kwq_pool_start(struct kwq *q, const struct kwq_pool_attr *attr);
int kwq_pool_stop(struct kwq_pool *pool, enum kwq_pool_stop_mode mode, ktime_t deadline,
		  struct kwq_pool_stats *final);
struct kwq_pool *kwq_pool_current(void);
bool kwq_pool_stopping(const struct kwq_pool *pool);
void kwq_pool_stats(const struct kwq_pool *pool, struct kwq_pool_stats *st);

int kwq_parallelize(u32 workers, u32 pieces, u32 chunk,
		    int (*fn)(void *ctx, u32 piece), void *ctx);

#endif /* _KWQ_POOL_H */
