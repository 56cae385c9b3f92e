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
#include "kwq_manual_clock.h"
#include "kwq_payload.h"
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
 * The longest hold of any queue's lock by a walk in steps, since load or
 * since root wrote 0 (the benchmark does): keys handled, and ns.
 */
static unsigned long kwq_hold_max_keys;
static unsigned long kwq_hold_max_ns;

/* They are measurements: writing 0 resets one, any other value is -EINVAL. */
static int kwq_hold_max_set(const char *val, const struct kernel_param *kp)
{
	unsigned long v;

	/* Not a number, one beyond 64 bits (-ERANGE) or not 0: -EINVAL, as documented. */
	if (kstrtoul(val, 0, &v) || v)
		return -EINVAL;
	WRITE_ONCE(*(unsigned long *)kp->arg, 0);
	return 0;
}

static const struct kernel_param_ops kwq_hold_max_ops = {
	.set = kwq_hold_max_set,
	.get = param_get_ulong,
};

module_param_cb(hold_max_keys, &kwq_hold_max_ops, &kwq_hold_max_keys, 0644);
MODULE_PARM_DESC(hold_max_keys,
		 "Most keys one hold of a queue's lock handled in a walk over keys (at most 64); write 0 to reset");
module_param_cb(hold_max_ns, &kwq_hold_max_ops, &kwq_hold_max_ns, 0644);
MODULE_PARM_DESC(hold_max_ns,
		 "Longest hold of a queue's lock by a walk over keys, ns; write 0 to reset");

static void kwq_max_note(unsigned long *max, unsigned long v)
{
	unsigned long old = READ_ONCE(*max);

	while (v > old && !try_cmpxchg(max, &old, v))
		;
}

/*
 * End a step begun with kwq_hold_begin(): note how many keys it handled
 * and how long it held the lock (the queue's kwq.hold_max_keys and
 * kwq.hold_max_ns, and the module's hold_max_* parameters).
 */
void kwq_hold_end(struct kwq *q, const struct kwq_hold *h)
{
	u64 ns = kwq_elapsed(local_clock(), h->start);

	lockdep_assert_held(&q->lock);
	WARN_ON_ONCE(h->keys > KWQ_LOCK_STEP);
	if (h->keys > q->hold_max_keys)
		q->hold_max_keys = h->keys;
	if (ns > q->hold_max_ns)
		q->hold_max_ns = ns;
	kwq_max_note(&kwq_hold_max_keys, h->keys);
	kwq_max_note(&kwq_hold_max_ns, ns);
}

/*
 * Unfinished work and the longest running processor, from what kwq.busy
 * keeps (client-go updates them every 500 ms): the sum of the time each
 * processing key has run is n * now - the sum of their stamps, the longest
 * the first's. Each term was clamped at zero (stamps of another CPU's
 * local_clock() may be a little ahead); the sum is.
 */
static void kwq_stats_work_locked(struct kwq *q, struct kwq_stats *st)
{
	u64 now = kwq_stamp_now(q);
	struct kwq_item *it = kwq_busy_oldest(q);
	u64 total = q->n_processing * now;

	st->unfinished_work_ns = (s64)(total - q->busy_stamps) > 0 ? total - q->busy_stamps : 0;
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
	struct kwq_hold h;

	memset(st, 0, sizeof(*st));
	st->size = sizeof(*st);

	kwq_lock(q);
	kwq_hold_begin(q, &h);
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
	st->debounced = q->debounced;
	st->debounce_capped = q->debounce_capped;
	st->payloads_replaced = q->payloads_replaced;
	st->payload_bytes = q->payload_bytes;
	kwq_hold_end(q, &h);
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

/*
 * Empty the waiting set (kwq_end_waiting_step_locked()) in steps of
 * KWQ_LOCK_STEP keys, letting go of the lock between them (and of the
 * CPU, if @may_sleep); consumers are woken for the keys each step queues.
 * Nothing adds waiting keys meanwhile: the queue is shut down. A caller
 * that will @flush counted itself in kwq.flushing when it shut the queue
 * down; the last step counts it out.
 */
static void kwq_end_waiting(struct kwq *q, bool flush, bool may_sleep)
{
	struct kwq_hold h;
	unsigned int ready;
	LIST_HEAD(stale);
	bool more;

	kwq_lock(q);
	for (;;) {
		ready = 0;
		kwq_hold_begin(q, &h);
		more = kwq_end_waiting_step_locked(q, flush, &h, &stale, &ready);
		kwq_hold_end(q, &h);
		if (!more && flush)
			q->flushing--;
		kwq_unlock(q);
		kwq_free_stale(q, &stale);
		INIT_LIST_HEAD(&stale);
		if (ready)
			kwq_wake(q, ready);
		if (!more)
			break;
		if (may_sleep)
			cond_resched();
		kwq_lock(q);
	}
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
	kwq_shutdown_ctx(q, false);
}
EXPORT_SYMBOL_GPL(kwq_shutdown);

/* kwq_shutdown(), giving up the CPU between steps if @may_sleep (an ioctl). */
void kwq_shutdown_ctx(struct kwq *q, bool may_sleep)
{
	kwq_lock(q);
	q->shutting_down = true;
	q->shutdown_seq++;
	kwq_program_locked(q);
	kwq_unlock(q);
	kwq_end_waiting(q, false, may_sleep);
	kwq_wake(q, false);
	wake_up_all(&q->drain_wait);
}

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
 * Context: process context; sleeps. Not from a handler of a pool on @q
 * (kwq_pool.h), whose own key stays processing until the handler returns.
 * Return: 0 once drained, -ECANCELED if kwq_shutdown() cut the wait short,
 * -ETIMEDOUT, -ERESTARTSYS (signal), -EIDRM (destroyed), -EINVAL for
 * unknown flags, -EDEADLK from a handler of a pool on @q (nothing done).
 */
int kwq_shutdown_drain(struct kwq *q, ktime_t deadline, u32 flags)
{
	DEFINE_WAIT(wait);
	u32 seq;
	int ret;

	might_sleep();
	if (flags & ~KWQ_DRAIN_FLUSH_WAITING)
		return -EINVAL;
	/* It would wait for the caller's own key, and could only time out. */
	if (kwq_pool_handles(q))
		return -EDEADLK;
	kwq_lock(q);
	q->shutting_down = true;
	q->drainers++;
	seq = q->shutdown_seq;
	/* Consumers wait for the keys the flush is about to queue. */
	if (flags & KWQ_DRAIN_FLUSH_WAITING)
		q->flushing++;
	kwq_program_locked(q);
	kwq_unlock(q);
	kwq_get_ref(q);
	kwq_end_waiting(q, flags & KWQ_DRAIN_FLUSH_WAITING, true);
	kwq_wake(q, false);

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
	if (!q->clock) {
		/* The hard timer first: it may start the soft one. */
		hrtimer_cancel(&q->timer);
		hrtimer_cancel(&q->rerun);
	}
	kwq_records_free(q);
	kwq_manual_clock_free(q->clock);
	kfree(q->far);
	kwq_order_release(&q->order);
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
	struct kwq_order_attr oa = {};
	const struct kwq_ratelimit *rl;
	struct kwq *q;
	int ret;

	might_sleep();
	q = kzalloc(sizeof(*q), attr && attr->account ? GFP_KERNEL_ACCOUNT : GFP_KERNEL);
	if (!q)
		return ERR_PTR(-ENOMEM);
	if (attr && (attr->policy > KWQ_POLICY_STRICT ||
		     attr->processing_timeout_ns > KWQ_DELAY_MAX_NS ||
		     attr->aging_ns > (attr->priority ? KWQ_AGING_MAX_NS : 0) ||
		     attr->payload_max > READ_ONCE(kwq_max_payload) ||
		     attr->tenant_depth > KWQ_TENANT_DEPTH_MAX ||
		     (attr->manual_clock && attr->clock)))
		goto invalid;
	rl = attr && attr->ratelimit ? attr->ratelimit : &kwq_rl_default_controller;
	if (kwq_rl_validate(rl) || kwq_rl_max_fast_too_big(rl))
		goto invalid;
	INIT_LIST_HEAD(&q->backoff);
	q->busy = RB_ROOT_CACHED;
	INIT_LIST_HEAD(&q->unleased.items);
	RB_CLEAR_NODE(&q->unleased.node);
	spin_lock_init(&q->lock);
	INIT_LIST_HEAD(&q->expiring.node);
	timerqueue_init_head(&q->waiting);
	q->armed = KTIME_MAX;
	q->timer_cpu = -1;
	q->clock = attr ? attr->clock : NULL;
	if (attr && attr->manual_clock) {
		q->clock = kwq_manual_clock_new(attr->account ? GFP_KERNEL_ACCOUNT :
							   GFP_KERNEL);
		if (!q->clock) {
			kfree(q);
			return ERR_PTR(-ENOMEM);
		}
	}
	if (!q->clock) {
		kwq_hrtimer_setup(&q->timer, KWQ_TIMER_HARD ? kwq_timer_hard_fn : kwq_timer_fn,
				  CLOCK_MONOTONIC, KWQ_TIMER_MODE);
		kwq_hrtimer_setup(&q->rerun, kwq_rerun_fn, CLOCK_MONOTONIC,
				  HRTIMER_MODE_ABS_SOFT);
	}
	q->policy = attr && attr->policy ? attr->policy : KWQ_POLICY_PROMOTE;
	q->processing_timeout = attr ? attr->processing_timeout_ns : 0;
	q->payload_max = attr ? attr->payload_max : 0;
	q->acct.rec_kind = (q->payload_max ? KWQ_REC_PAYLOAD : 0) |
			   (attr && attr->tenant_depth ? KWQ_REC_TENANT : 0);
	q->acct.small_bytes = kwq_rec_bytes(q->acct.rec_kind, KWQ_SMALL_KEY);
	kwq_rl_init(&q->rl, rl, ktime_to_ns(kwq_clock_read(q)));
	INIT_LIST_HEAD(&q->node);
	init_waitqueue_head(&q->get_wait);
	init_waitqueue_head(&q->drain_wait);
	kref_init(&q->ref);
	q->gfp = attr && attr->account ? GFP_KERNEL_ACCOUNT | __GFP_RETRY_MAYFAIL : GFP_KERNEL;
	q->max_items = READ_ONCE(kwq_max_items_per_queue);
	if (attr && attr->max_items && attr->max_items < q->max_items)
		q->max_items = attr->max_items;
	q->max_backoff = READ_ONCE(kwq_max_backoff_keys);
	if (attr && attr->max_backoff_keys && attr->max_backoff_keys < q->max_backoff)
		q->max_backoff = attr->max_backoff_keys;
	q->mode = attr ? attr->mode & 0777 : 0600;
	q->uid = attr ? attr->uid : GLOBAL_ROOT_UID;
	q->gid = attr ? attr->gid : GLOBAL_ROOT_GID;
	if (name)
		strscpy(q->name, name, sizeof(q->name));

	INIT_WORK(&q->resize_work, kwq_resize_work);
	INIT_WORK(&q->sides_work, kwq_sides_work);
	if (attr && attr->priority)
		oa.aging_ns = attr->aging_ns ?: KWQ_AGING_DEFAULT_NS;
	oa.tenant_depth = attr ? attr->tenant_depth : 0;
	oa.rec_skip = kwq_rec_skip(q->acct.rec_kind);
	if (kwq_order_init(&q->order, &oa, q->gfp)) {
		kwq_manual_clock_free(q->clock);
		kfree(q);
		return ERR_PTR(-ENOMEM);
	}
	ret = kwq_acct_init(&q->acct, q->gfp, q->uid, attr ? attr->user_ns : NULL,
			    attr && attr->exempt) ?:
	      kwq_table_init(&q->items, q->gfp);
	if (ret) {
		kwq_acct_release(&q->acct);
		kwq_order_release(&q->order);
		kwq_manual_clock_free(q->clock);
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
 * Every call on a key and every drain then fails with -EIDRM (stats,
 * shutdown and a second end still work); waiters are woken and leave,
 * holding their own references, so the memory outlives them. Idempotent.
 *
 * Context: process context.
 */
void kwq_queue_end(struct kwq *q)
{
	kwq_lock(q);
	q->dead = true;
	q->shutting_down = true;
	kwq_program_locked(q);
	kwq_unlock(q);
	kwq_end_waiting(q, false, true);
	kwq_wake(q, false);
	wake_up_all(&q->drain_wait);
}
