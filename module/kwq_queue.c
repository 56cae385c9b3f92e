// SPDX-License-Identifier: GPL-2.0
/*
 * kwq queues: creation, reference counting, destruction, shutdown and
 * drain, and the counts read from outside (len, stats, readable). Defines
 * the tracepoints of kwq_trace.h.
 */

#include <linux/err.h>
#include <linux/module.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/wait.h>

#include "kwq_compat.h"
#include "kwq_core.h"
#include "kwq_state.h"

#define CREATE_TRACE_POINTS
#include "kwq_trace.h"

/**
 * kwq_len() - number of keys ready to be handed out
 * @q: queue.
 *
 * Exactly the keys a series of non-blocking kwq_get() calls would return
 * now, as client-go's Len. Keys that were re-added while being processed
 * are not counted until their done; kwq_stats() reports them as
 * dirty_processing. Informational: do not gate adds or gets on it.
 *
 * Context: process or softirq context.
 * Return: the count.
 */
u64 kwq_len(struct kwq *q)
{
	u64 n;

	kwq_lock(q);
	n = q->n_queued;
	kwq_unlock(q);
	return n;
}
EXPORT_SYMBOL_GPL(kwq_len);

/*
 * Unfinished work and the longest running processor, computed on demand
 * from the processing records (client-go updates them every 500 ms).
 */
static void kwq_stats_work_locked(struct kwq *q, struct kwq_stats *st)
{
	u64 now = kwq_stamp_now(q);
	struct kwq_item *it;

	list_for_each_entry(it, &q->busy, ready)
		st->unfinished_work_ns += kwq_elapsed(now, it->stamp);
	it = list_first_entry_or_null(&q->busy, struct kwq_item, ready);
	st->longest_running_ns = it ? kwq_elapsed(now, it->stamp) : 0;
}

/**
 * kwq_stats() - consistent snapshot of a queue's counts
 * @q: queue.
 * @st: filled in; @st->size is set to sizeof(*st).
 *
 * Context: process or softirq context.
 */
void kwq_stats(struct kwq *q, struct kwq_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->size = sizeof(*st);
	kwq_lock(q);
	st->state = (q->shutting_down ? KWQ_STATE_SHUTTING_DOWN : 0) |
		    (q->drainers ? KWQ_STATE_DRAINING : 0) |
		    (q->dead ? KWQ_STATE_DESTROYED : 0);
	st->queued = q->n_queued;
	st->processing = q->n_processing;
	st->dirty_processing = q->n_dirty_processing;
	st->waiting = q->n_waiting;
	st->items = q->items.n;
	st->max_items = q->max_items;
	st->adds = q->adds;
	st->dedups = q->dedups;
	st->gets = q->gets;
	st->dones = q->dones;
	st->requeues = q->requeues;
	st->refused = q->refused;
	st->fired = q->fired;
	st->cancels = q->cancels;
	st->absorbed = q->absorbed;
	st->waits_dropped = q->waits_dropped;
	st->lease_requeues = q->lease_requeues;
	st->backoff_keys = q->n_backoff;
	st->rate_limited = q->rate_limited;
	st->tokens_returned = q->tokens_returned;
	st->backoff_evictions = q->backoff_evictions;
	st->retries = q->retries;
	st->forgets = q->forgets;
	kwq_stats_work_locked(q, st);
	memcpy(st->queue_latency, q->queue_latency.count, sizeof(st->queue_latency));
	st->queue_latency_sum_ns = q->queue_latency.sum_ns;
	memcpy(st->work_duration, q->work_duration.count, sizeof(st->work_duration));
	st->work_duration_sum_ns = q->work_duration.sum_ns;
	st->processing_expiries = q->processing_expiries;
	kwq_unlock(q);
}
EXPORT_SYMBOL_GPL(kwq_stats);

/**
 * kwq_readable() - whether kwq_get() would return without blocking
 * @q: queue.
 *
 * Return: true if a key is ready or the queue has ended.
 */
bool kwq_readable(struct kwq *q)
{
	bool r;

	kwq_lock(q);
	r = q->dead || q->n_queued || !kwq_more_may_come_locked(q);
	kwq_unlock(q);
	return r;
}

/**
 * kwq_shutdown() - stop accepting keys
 * @q: queue.
 *
 * Later adds fail with -ESHUTDOWN. Consumers still get the keys already
 * queued (see kwq_get()). Keys waiting for an add-after deadline are
 * dropped and the timer is stopped. Idempotent; wakes every waiter, and
 * makes a kwq_shutdown_drain() in progress return -ECANCELED unless the
 * queue happens to be drained. Does not wait for anything.
 *
 * Context: process or softirq context.
 */
void kwq_shutdown(struct kwq *q)
{
	LIST_HEAD(stale);

	kwq_lock(q);
	q->shutting_down = true;
	q->shutdown_seq++;
	kwq_end_waiting_locked(q, false, &stale, NULL);
	kwq_unlock(q);
	kwq_free_stale(&stale);
	kwq_wake(q, false);
	wake_up_all(&q->drain_wait);
}
EXPORT_SYMBOL_GPL(kwq_shutdown);

/**
 * kwq_shutting_down() - whether kwq_shutdown() or a drain was called
 * @q: queue.
 *
 * Context: process or softirq context.
 * Return: true once the queue refuses adds.
 */
bool kwq_shutting_down(struct kwq *q)
{
	bool r;

	kwq_lock(q);
	r = q->shutting_down;
	kwq_unlock(q);
	return r;
}
EXPORT_SYMBOL_GPL(kwq_shutting_down);

/**
 * kwq_shutdown_drain() - shut down and wait until all work is finished
 * @q: queue.
 * @deadline: absolute CLOCK_MONOTONIC time to give up at, or KWQ_FOREVER.
 * @flags: KWQ_DRAIN_FLUSH_WAITING queues the keys waiting for an
 *	add-after deadline at once, and the drain waits for them too;
 *	without it they are dropped, as by kwq_shutdown() (and client-go).
 *
 * Shuts the queue down like kwq_shutdown(), then waits until nothing is
 * queued and nothing is being processed, so every key added before the
 * call has been handed out and done. (client-go waits only for the keys
 * being processed, kubernetes PR #141079.) Consumers must keep calling
 * kwq_get() and kwq_done() meanwhile.
 *
 * Context: process context; sleeps.
 * Return: 0 once drained, -ECANCELED if kwq_shutdown() cut the wait short,
 * -ETIMEDOUT, -ERESTARTSYS (signal), -EIDRM (destroyed), -EINVAL for
 * unknown flags.
 */
int kwq_shutdown_drain(struct kwq *q, ktime_t deadline, u32 flags)
{
	DEFINE_WAIT(wait);
	LIST_HEAD(stale);
	unsigned int ready = 0;
	u32 seq;
	int ret;

	might_sleep();
	if (flags & ~KWQ_DRAIN_FLUSH_WAITING)
		return -EINVAL;
	kwq_lock(q);
	q->shutting_down = true;
	q->drainers++;
	seq = q->shutdown_seq;
	kwq_end_waiting_locked(q, flags & KWQ_DRAIN_FLUSH_WAITING, &stale, &ready);
	kwq_unlock(q);
	kwq_free_stale(&stale);
	kwq_wake(q, ready);

	kwq_get_ref(q);
	for (;;) {
		prepare_to_wait(&q->drain_wait, &wait, TASK_INTERRUPTIBLE);
		kwq_lock(q);
		if (q->dead)
			ret = -EIDRM;
		else if (kwq_drained_locked(q))
			ret = 0;
		else if (q->shutdown_seq != seq)
			ret = -ECANCELED;
		else
			ret = -EAGAIN;
		kwq_unlock(q);
		if (ret != -EAGAIN)
			break;
		if (signal_pending(current)) {
			ret = -ERESTARTSYS;
			break;
		}
		ret = kwq_sleep_until(deadline, KTIME_MAX);
		if (ret)
			break;
	}
	finish_wait(&q->drain_wait, &wait);
	kwq_lock(q);
	q->drainers--;
	kwq_unlock(q);
	kwq_put(q);
	return ret;
}
EXPORT_SYMBOL_GPL(kwq_shutdown_drain);

static void kwq_release(struct kref *ref)
{
	struct kwq *q = container_of(ref, struct kwq, ref);

	/*
	 * A queue nobody destroyed (an anonymous one) ends here: as dead, it
	 * asks its clock for nothing more, so the clock can forget it.
	 */
	kwq_lock(q);
	q->dead = true;
	kwq_program_locked(q);
	kwq_unlock(q);
	/* Never leave the timer armed or running on freed memory. */
	if (!q->clock)
		hrtimer_cancel(&q->timer);
	kwq_records_free(q);
	kfree(q);
}

/**
 * kwq_get_ref() - take a reference on a queue
 * @q: queue the caller already holds a reference on.
 *
 * Context: any.
 */
void kwq_get_ref(struct kwq *q)
{
	kref_get(&q->ref);
}
EXPORT_SYMBOL_GPL(kwq_get_ref);

/**
 * kwq_put() - drop a reference on a queue
 * @q: queue.
 *
 * Context: process context if this may be the last reference (freeing
 * the key table sleeps).
 */
void kwq_put(struct kwq *q)
{
	kref_put(&q->ref, kwq_release);
}
EXPORT_SYMBOL_GPL(kwq_put);

/**
 * kwq_name() - the queue's name
 * @q: queue.
 *
 * Return: the name, "" for an anonymous queue. Valid while @q is.
 */
const char *kwq_name(const struct kwq *q)
{
	return q->name;
}
EXPORT_SYMBOL_GPL(kwq_name);

/* Failure counts saturate at KWQ_FAILURES_MAX; a fast/slow limiter must turn slow below it. */
static bool kwq_rl_max_fast_too_big(const struct kwq_ratelimit *rl)
{
	u32 i;

	for (i = 0; i < rl->count; i++)
		if (rl->limiters[i].type == KWQ_LIMITER_FAST_SLOW &&
		    rl->limiters[i].max_fast >= KWQ_FAILURES_MAX)
			return true;
	return false;
}

/**
 * kwq_queue_new() - make a queue, not registered under its name yet
 * @name: the queue's name (valid, see kwq_name_valid()), or NULL.
 * @attr: settings, or NULL for the defaults (root-owned, mode 0600).
 *
 * Context: process context; may sleep.
 * Return: the queue with one reference, or ERR_PTR(): -EINVAL (bad
 * policy or limiter), -ENOMEM.
 */
struct kwq *kwq_queue_new(const char *name, const struct kwq_attr *attr)
{
	const struct kwq_ratelimit *rl;
	struct kwq *q;
	int ret;

	might_sleep();
	q = kzalloc(sizeof(*q), attr && attr->account ? GFP_KERNEL_ACCOUNT : GFP_KERNEL);
	if (!q)
		return ERR_PTR(-ENOMEM);
	if (attr && (attr->policy > KWQ_POLICY_STRICT ||
		     attr->processing_timeout_ns > KWQ_DELAY_MAX_NS))
		goto invalid;
	rl = attr && attr->ratelimit ? attr->ratelimit : &kwq_rl_default_controller;
	if (kwq_rl_validate(rl) || kwq_rl_max_fast_too_big(rl))
		goto invalid;
	INIT_LIST_HEAD(&q->backoff);
	INIT_LIST_HEAD(&q->busy);
	spin_lock_init(&q->lock);
	INIT_LIST_HEAD(&q->ready);
	timerqueue_init_head(&q->waiting);
	q->armed = KTIME_MAX;
	q->clock = attr ? attr->clock : NULL;
	if (!q->clock)
		kwq_hrtimer_setup(&q->timer, kwq_timer_fn, CLOCK_MONOTONIC,
				  HRTIMER_MODE_ABS_SOFT);
	q->policy = attr && attr->policy ? attr->policy : KWQ_POLICY_PROMOTE;
	q->processing_timeout = attr ? attr->processing_timeout_ns : 0;
	kwq_rl_init(&q->rl, rl, ktime_to_ns(kwq_clock_read(q)));
	INIT_LIST_HEAD(&q->node);
	init_waitqueue_head(&q->get_wait);
	init_waitqueue_head(&q->drain_wait);
	kref_init(&q->ref);
	q->gfp = attr && attr->account ? GFP_KERNEL_ACCOUNT | __GFP_RETRY_MAYFAIL : GFP_KERNEL;
	q->max_items = kwq_max_items_per_queue;
	if (attr && attr->max_items && attr->max_items < q->max_items)
		q->max_items = attr->max_items;
	q->max_backoff = kwq_max_backoff_keys;
	if (attr && attr->max_backoff_keys && attr->max_backoff_keys < q->max_backoff)
		q->max_backoff = attr->max_backoff_keys;
	q->mode = attr ? attr->mode & 0777 : 0600;
	q->uid = attr ? attr->uid : GLOBAL_ROOT_UID;
	q->gid = attr ? attr->gid : GLOBAL_ROOT_GID;
	if (name)
		strscpy(q->name, name, sizeof(q->name));

	INIT_WORK(&q->resize_work, kwq_resize_work);
	ret = kwq_acct_init(&q->acct, q->gfp, q->uid) ?: kwq_table_init(&q->items, q->gfp);
	if (ret) {
		kwq_acct_release(&q->acct);
		kfree(q);
		return ERR_PTR(ret);
	}
	return q;
invalid:
	kfree(q);
	return ERR_PTR(-EINVAL);
}

/**
 * kwq_queue_end() - mark a queue destroyed, keeping the caller's reference
 * @q: queue, already out of the registry (kwq_kill()).
 *
 * Every operation then fails with -EIDRM; waiters are woken and leave,
 * holding their own references, so the memory outlives them. Idempotent.
 *
 * Context: process context.
 */
void kwq_queue_end(struct kwq *q)
{
	LIST_HEAD(stale);

	kwq_lock(q);
	q->dead = true;
	q->shutting_down = true;
	kwq_end_waiting_locked(q, false, &stale, NULL);
	kwq_unlock(q);
	kwq_free_stale(&stale);
	kwq_wake(q, false);
	wake_up_all(&q->drain_wait);
}
