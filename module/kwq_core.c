// SPDX-License-Identifier: GPL-2.0
/*
 * kwq core: the deduplicating queue of keys.
 *
 * Each key has exactly one record (struct kwq_item) in a per-queue
 * rhashtable; the record's state bits say whether it is dirty (needs
 * processing) and/or processing. A dirty record that is not processing is
 * linked on the ready list, which gives FIFO order. All state changes
 * happen under kwq.lock; the lock rules are in kwq_internal.h.
 *
 * rhashtable rather than a fixed <linux/hashtable.h>: it grows and shrinks
 * with the number of keys from a worker, so an add never rehashes the
 * whole table inside our spinlock. All lookups and removals run under
 * kwq.lock, so no lookup can be walking a record when it is removed, and
 * records are freed right away instead of after an RCU grace period.
 */

#include <linux/err.h>
#include <linux/jhash.h>
#include <linux/module.h>
#include <linux/rhashtable.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "kwq_compat.h"
#include "kwq_internal.h"

struct kwq_lookup_key {
	const void *key;
	u32 len;
};

static u32 kwq_lookup_hash(const void *data, u32 len, u32 seed)
{
	const struct kwq_lookup_key *k = data;

	return jhash(k->key, k->len, seed);
}

static u32 kwq_item_hash(const void *data, u32 len, u32 seed)
{
	const struct kwq_item *it = data;

	return jhash(it->key, it->len, seed);
}

static int kwq_item_cmp(struct rhashtable_compare_arg *arg, const void *obj)
{
	const struct kwq_lookup_key *k = arg->key;
	const struct kwq_item *it = obj;

	return it->len != k->len || memcmp(it->key, k->key, k->len);
}

static const struct rhashtable_params kwq_item_params = {
	.head_offset = offsetof(struct kwq_item, hnode),
	.hashfn = kwq_lookup_hash,
	.obj_hashfn = kwq_item_hash,
	.obj_cmpfn = kwq_item_cmp,
	.automatic_shrinking = true,
};

/**
 * kwq_key_valid() - whether a key may be stored
 * @key: key bytes.
 * @len: key length.
 *
 * Return: true for a non-NULL key of 1 to KWQ_KEY_MAX bytes.
 */
bool kwq_key_valid(const void *key, u32 len)
{
	return key && len >= 1 && len <= KWQ_KEY_MAX;
}

static struct kwq_item *kwq_find_locked(struct kwq *q, const void *key, u32 len)
{
	struct kwq_lookup_key k = { .key = key, .len = len };

	lockdep_assert_held(&q->lock);
	return rhashtable_lookup_fast(&q->items, &k, kwq_item_params);
}

static size_t kwq_item_alloc_size(u32 key_len)
{
	return struct_size((struct kwq_item *)NULL, key, key_len);
}

/**
 * kwq_item_bytes() - memory one key record takes
 * @key_len: key length in bytes.
 *
 * For capacity planning: the slab object size of a record holding a key
 * of @key_len bytes, excluding the hash table's share (one pointer per
 * bucket, buckets kept between 0.375 and 0.75 per key).
 *
 * Context: any.
 * Return: bytes.
 */
size_t kwq_item_bytes(u32 key_len)
{
	return kmalloc_size_roundup(kwq_item_alloc_size(key_len));
}
EXPORT_SYMBOL_GPL(kwq_item_bytes);

static struct kwq_item *kwq_item_new(const void *key, u32 len, gfp_t gfp)
{
	struct kwq_item *it = kmalloc(kwq_item_alloc_size(len), gfp);

	if (!it)
		return NULL;
	INIT_LIST_HEAD(&it->ready);
	timerqueue_init(&it->wait);
	it->state = 0;
	it->len = len;
	memcpy(it->key, key, len);
	return it;
}

/* Unhash a record that has no state left; the caller frees it unlocked. */
static struct kwq_item *kwq_item_retire_locked(struct kwq *q, struct kwq_item *it)
{
	if (it->state)
		return NULL;
	rhashtable_remove_fast(&q->items, &it->hnode, kwq_item_params);
	q->n_items--;
	return it;
}

static void kwq_ready_locked(struct kwq *q, struct kwq_item *it, bool at_head)
{
	if (at_head)
		list_add(&it->ready, &q->ready);
	else
		list_add_tail(&it->ready, &q->ready);
	q->n_queued++;
}

/* True when nothing is queued and nothing is being processed. */
static bool kwq_idle_locked(const struct kwq *q)
{
	return !q->n_queued && !q->n_processing;
}

/*
 * After shutdown a key can still become ready: a key re-added while being
 * processed is queued again by its done. Consumers wait for those instead
 * of leaving early and stranding them (client-go returns "shutdown" as soon
 * as the list is momentarily empty).
 */
static bool kwq_more_may_come_locked(const struct kwq *q)
{
	return !q->shutting_down || q->n_dirty_processing;
}

/*
 * Wake whoever a state change concerns. Called after the change, with the
 * lock dropped; @ready_added says a key was made ready.
 */
static void kwq_wake(struct kwq *q, bool ready_added)
{
	bool ended, idle, ready;

	spin_lock_bh(&q->lock);
	ready = q->n_queued;
	ended = q->dead || (!q->n_queued && !kwq_more_may_come_locked(q));
	idle = q->drainers && (q->dead || kwq_idle_locked(q));
	spin_unlock_bh(&q->lock);

	if (ended)
		wake_up_all(&q->get_wait);
	else if (ready_added && ready)
		wake_up(&q->get_wait);
	if (idle)
		wake_up_all(&q->drain_wait);
}

/*
 * Fast path of kwq_wake() for the common case of a live, running queue:
 * only the ready-list wakeup matters, and it needs no lock.
 */
static void kwq_wake_fast(struct kwq *q, bool ready_added, bool slow)
{
	if (slow)
		kwq_wake(q, ready_added);
	else if (ready_added)
		wake_up(&q->get_wait);
}

/* Whether any state change needs the full wake-up check. */
static bool kwq_wake_slow_locked(const struct kwq *q)
{
	return q->shutting_down || q->drainers || q->dead;
}

/* Mark an existing record dirty; returns an enum kwq_add_result. */
static int kwq_mark_dirty_locked(struct kwq *q, struct kwq_item *it, bool *ready)
{
	if (it->state & KWQ_ITEM_DIRTY) {
		q->dedups++;
		return KWQ_ADD_DUPLICATE;
	}
	it->state |= KWQ_ITEM_DIRTY;
	q->adds++;
	if (it->state & KWQ_ITEM_PROCESSING) {
		q->n_dirty_processing++;
		return KWQ_ADD_DEFERRED;
	}
	kwq_ready_locked(q, it, false);
	*ready = true;
	return KWQ_ADD_QUEUED;
}

static ktime_t kwq_now(struct kwq *q)
{
	return q->clock ? q->clock->now(q->clock) : ktime_get();
}

/* Point the timer at the earliest waiting deadline, if that changed. */
static void kwq_program_locked(struct kwq *q)
{
	struct timerqueue_node *next = timerqueue_getnext(&q->waiting);
	ktime_t expires = next ? next->expires : KTIME_MAX;

	if (expires == q->armed)
		return;
	q->armed = expires;
	if (q->clock)
		q->clock->program(q->clock, q, expires);
	else if (expires == KTIME_MAX)
		hrtimer_try_to_cancel(&q->timer);
	else
		hrtimer_start(&q->timer, expires, HRTIMER_MODE_ABS_SOFT);
}

static void kwq_wait_insert_locked(struct kwq *q, struct kwq_item *it, ktime_t deadline)
{
	it->wait.expires = deadline;
	timerqueue_add(&q->waiting, &it->wait);
	it->state |= KWQ_ITEM_WAITING;
	q->n_waiting++;
}

static void kwq_unwait_locked(struct kwq *q, struct kwq_item *it)
{
	timerqueue_del(&q->waiting, &it->wait);
	it->state &= ~KWQ_ITEM_WAITING;
	q->n_waiting--;
}

/*
 * Empty the waiting set: queue every waiting key now (@flush), or drop
 * the entries and move records left without state to @stale for the
 * caller to free once unlocked (linked through their unused ready link).
 */
static void kwq_end_waiting_locked(struct kwq *q, bool flush, struct list_head *stale,
				   bool *ready)
{
	struct timerqueue_node *node;
	struct kwq_item *it;

	while ((node = timerqueue_getnext(&q->waiting))) {
		it = container_of(node, struct kwq_item, wait);
		kwq_unwait_locked(q, it);
		if (flush) {
			q->fired++;
			kwq_mark_dirty_locked(q, it, ready);
		} else {
			q->waits_dropped++;
			if (kwq_item_retire_locked(q, it))
				list_add(&it->ready, stale);
		}
	}
	kwq_program_locked(q);
}

static void kwq_free_stale(struct list_head *stale)
{
	struct kwq_item *it, *next;

	list_for_each_entry_safe(it, next, stale, ready)
		kfree(it);
}

/* Give @it a waiting entry, or move it; returns an enum kwq_add_result. */
static int kwq_wait_locked(struct kwq *q, struct kwq_item *it, s64 delay_ns, u32 flags)
{
	u64 delay = min_t(u64, delay_ns, KWQ_DELAY_MAX_NS);
	ktime_t deadline = ktime_add_safe(kwq_now(q), ns_to_ktime(delay));
	int ret = KWQ_ADD_WAITING;

	if (it->state & KWQ_ITEM_WAITING) {
		if (deadline == it->wait.expires ||
		    (deadline > it->wait.expires && !(flags & KWQ_AFTER_REPLACE)))
			return KWQ_ADD_WAIT_KEPT;
		kwq_unwait_locked(q, it);
		ret = KWQ_ADD_WAIT_MOVED;
	}
	kwq_wait_insert_locked(q, it, deadline);
	kwq_program_locked(q);
	return ret;
}

/* An add now, under the waiting policy; returns an enum kwq_add_result. */
static int kwq_add_now_locked(struct kwq *q, struct kwq_item *it, u32 policy, bool *ready)
{
	if (it->state & KWQ_ITEM_WAITING) {
		if (policy == KWQ_POLICY_STRICT && !(it->state & KWQ_ITEM_DIRTY)) {
			q->absorbed++;
			return KWQ_ADD_ABSORBED;
		}
		if (policy == KWQ_POLICY_PROMOTE) {
			kwq_unwait_locked(q, it);
			q->waits_dropped++;
			kwq_program_locked(q);
		}
	}
	return kwq_mark_dirty_locked(q, it, ready);
}

#define KWQ_ADD_FLAGS	(KWQ_ADD_POLICY_MASK | KWQ_AFTER_REPLACE)

/*
 * Every add: now (@delay_ns <= 0) or after a delay. Looks the key up
 * under the lock; a new key's record is allocated with the lock dropped
 * and the lookup repeated, so only the first add of a key allocates.
 */
static int kwq_add_common(struct kwq *q, const void *key, u32 len, s64 delay_ns,
			  u32 flags, gfp_t gfp)
{
	struct kwq_item *fresh = NULL, *it;
	u32 policy = flags & KWQ_ADD_POLICY_MASK;
	bool ready = false, slow;
	int ret;

	if (!kwq_key_valid(key, len) || (flags & ~KWQ_ADD_FLAGS))
		return -EINVAL;
again:
	spin_lock_bh(&q->lock);
	if (q->dead) {
		ret = -EIDRM;
		goto unlock;
	}
	if (q->shutting_down) {
		q->refused++;
		ret = -ESHUTDOWN;
		goto unlock;
	}
	it = kwq_find_locked(q, key, len);
	if (!it && !fresh) {
		spin_unlock_bh(&q->lock);
		fresh = kwq_item_new(key, len, gfp);
		if (!fresh)
			return -ENOMEM;
		goto again;
	}
	if (!it) {
		if (q->n_items >= q->max_items) {
			ret = -ENOSPC;
			goto unlock;
		}
		ret = rhashtable_insert_fast(&q->items, &fresh->hnode, kwq_item_params);
		if (ret)
			goto unlock;
		q->n_items++;
		it = fresh;
		fresh = NULL;
	}
	if (delay_ns > 0)
		ret = kwq_wait_locked(q, it, delay_ns, flags);
	else
		ret = kwq_add_now_locked(q, it, policy ?: q->policy, &ready);
unlock:
	slow = kwq_wake_slow_locked(q);
	spin_unlock_bh(&q->lock);
	kfree(fresh);
	kwq_wake_fast(q, ready, slow);
	return ret;
}

/**
 * kwq_add() - add a key to a queue
 * @q: queue.
 * @key: key bytes, copied.
 * @len: key length, 1 to KWQ_KEY_MAX.
 *
 * A key that is already queued is not queued twice; a key being processed
 * is marked dirty and queued again by kwq_done(). A key waiting for an
 * add-after deadline is treated by the queue's policy (enum
 * kwq_wait_policy).
 *
 * Context: process context; may sleep to allocate the key record.
 * Return: an enum kwq_add_result (>= 0), or -EINVAL for a bad key,
 * -ESHUTDOWN if the queue shuts down, -EIDRM if it was destroyed,
 * -ENOSPC if it holds max_items keys, -ENOMEM. On error nothing changed.
 */
int kwq_add(struct kwq *q, const void *key, u32 len)
{
	might_sleep();
	return kwq_add_common(q, key, len, 0, 0, q->gfp);
}
EXPORT_SYMBOL_GPL(kwq_add);

/**
 * kwq_add_policy() - add a key, choosing what happens if it is waiting
 * @q: queue.
 * @key: key bytes, copied.
 * @len: key length, 1 to KWQ_KEY_MAX.
 * @policy: an enum kwq_wait_policy; KWQ_POLICY_DEFAULT uses the queue's.
 *
 * Context: process context; may sleep.
 * Return: as kwq_add(), and KWQ_ADD_ABSORBED under KWQ_POLICY_STRICT;
 * -EINVAL for an unknown policy.
 */
int kwq_add_policy(struct kwq *q, const void *key, u32 len, u32 policy)
{
	might_sleep();
	if (policy > KWQ_POLICY_STRICT)
		return -EINVAL;
	return kwq_add_common(q, key, len, 0, policy, q->gfp);
}
EXPORT_SYMBOL_GPL(kwq_add_policy);

/**
 * kwq_add_atomic() - add a key without sleeping
 * @q: queue.
 * @key: key bytes, copied.
 * @len: key length, 1 to KWQ_KEY_MAX.
 *
 * Like kwq_add(), but allocates with GFP_ATOMIC, so it may fail with
 * -ENOMEM under memory pressure; the failure is reported, never hidden.
 *
 * Context: process or softirq context, including soft hrtimer callbacks
 * and with spinlocks held; not hard interrupt context.
 * Return: as kwq_add().
 */
int kwq_add_atomic(struct kwq *q, const void *key, u32 len)
{
	return kwq_add_common(q, key, len, 0, 0, GFP_ATOMIC | __GFP_NOWARN);
}
EXPORT_SYMBOL_GPL(kwq_add_atomic);

/**
 * kwq_add_after() - add a key once a delay has passed
 * @q: queue.
 * @key: key bytes, copied.
 * @len: key length, 1 to KWQ_KEY_MAX.
 * @delay_ns: delay; <= 0 is an add now (with @flags' policy); delays
 *	beyond KWQ_DELAY_MAX_NS are clamped to it.
 * @flags: KWQ_AFTER_REPLACE to replace an existing deadline (so a delay
 *	can be postponed); without it the earliest deadline wins, as in
 *	client-go. For @delay_ns <= 0, an enum kwq_wait_policy.
 *
 * Each key has at most one waiting entry, kept in deadline order; the
 * queue's timer is armed for the earliest one. When a deadline comes the
 * key is added as by kwq_add() (so a key still queued is not queued
 * twice), in deadline order, ties in the order they were added.
 *
 * Context: process context; may sleep to allocate the key record.
 * Return: an enum kwq_add_result (>= 0): KWQ_ADD_WAITING, _WAIT_KEPT or
 * _WAIT_MOVED for a delay, the kwq_add() results otherwise; errors as
 * kwq_add(), -EINVAL for unknown flags.
 */
int kwq_add_after(struct kwq *q, const void *key, u32 len, s64 delay_ns, u32 flags)
{
	might_sleep();
	return kwq_add_common(q, key, len, delay_ns, flags, q->gfp);
}
EXPORT_SYMBOL_GPL(kwq_add_after);

/**
 * kwq_cancel() - remove a key's waiting entry
 * @q: queue.
 * @key: key bytes.
 * @len: key length.
 *
 * The key's other state (queued, processing) is not touched.
 *
 * Context: process or softirq context.
 * Return: 1 if a waiting entry was removed, 0 if the key had none,
 * -EINVAL for a bad key, -EIDRM if the queue was destroyed.
 */
int kwq_cancel(struct kwq *q, const void *key, u32 len)
{
	struct kwq_item *it, *stale = NULL;
	int ret = 0;

	if (!kwq_key_valid(key, len))
		return -EINVAL;
	spin_lock_bh(&q->lock);
	it = q->dead ? NULL : kwq_find_locked(q, key, len);
	if (q->dead) {
		ret = -EIDRM;
	} else if (it && (it->state & KWQ_ITEM_WAITING)) {
		kwq_unwait_locked(q, it);
		q->cancels++;
		kwq_program_locked(q);
		stale = kwq_item_retire_locked(q, it);
		ret = 1;
	}
	spin_unlock_bh(&q->lock);
	kfree(stale);
	return ret;
}
EXPORT_SYMBOL_GPL(kwq_cancel);

/**
 * kwq_run_due() - add every waiting key whose deadline has come
 * @q: queue.
 *
 * The queue's own timer calls this. A queue made with its own struct
 * kwq_clock calls it when the clock reaches the time it was asked for.
 *
 * Context: process or softirq context.
 */
void kwq_run_due(struct kwq *q)
{
	struct timerqueue_node *node;
	struct kwq_item *it;
	bool ready = false, slow;
	ktime_t now;

	spin_lock_bh(&q->lock);
	now = kwq_now(q);
	while ((node = timerqueue_getnext(&q->waiting)) && node->expires <= now) {
		it = container_of(node, struct kwq_item, wait);
		kwq_unwait_locked(q, it);
		q->fired++;
		kwq_mark_dirty_locked(q, it, &ready);
	}
	/* The timer that brought us here is spent: program the next one. */
	q->armed = 0;
	kwq_program_locked(q);
	slow = kwq_wake_slow_locked(q);
	spin_unlock_bh(&q->lock);
	kwq_wake_fast(q, ready, slow);
}
EXPORT_SYMBOL_GPL(kwq_run_due);

static enum hrtimer_restart kwq_timer_fn(struct hrtimer *timer)
{
	kwq_run_due(container_of(timer, struct kwq, timer));
	return HRTIMER_NORESTART;
}

/* Hand out the oldest ready key. Returns 0, -EAGAIN (may wait) or error. */
static int kwq_take_locked(struct kwq *q, void *buf, u32 cap, u32 *len)
{
	struct kwq_item *it;

	if (q->dead)
		return -EIDRM;
	it = list_first_entry_or_null(&q->ready, struct kwq_item, ready);
	if (!it)
		return kwq_more_may_come_locked(q) ? -EAGAIN : -ESHUTDOWN;
	*len = it->len;
	if (it->len > cap)
		return -EMSGSIZE;
	list_del_init(&it->ready);
	q->n_queued--;
	it->state = (it->state & ~KWQ_ITEM_DIRTY) | KWQ_ITEM_PROCESSING;
	q->n_processing++;
	q->gets++;
	memcpy(buf, it->key, it->len);
	return 0;
}

static int kwq_try_take(struct kwq *q, void *buf, u32 cap, u32 *len)
{
	int ret;

	spin_lock_bh(&q->lock);
	ret = kwq_take_locked(q, buf, cap, len);
	spin_unlock_bh(&q->lock);
	return ret;
}

/* Sleep until woken or @deadline; the caller set the task state. */
static int kwq_sleep_until(ktime_t deadline)
{
	ktime_t expires = deadline;

	if (deadline == KWQ_FOREVER) {
		schedule();
		return 0;
	}
	if (ktime_compare(ktime_get(), deadline) >= 0) {
		__set_current_state(TASK_RUNNING);
		return -ETIMEDOUT;
	}
	schedule_hrtimeout_range(&expires, 0, HRTIMER_MODE_ABS);
	return 0;
}

/**
 * kwq_get() - take the next key, waiting for one if needed
 * @q: queue.
 * @buf: where the key is copied.
 * @cap: size of @buf.
 * @len: set to the key's length (also on -EMSGSIZE).
 * @deadline: absolute CLOCK_MONOTONIC time to give up at; KWQ_NOWAIT
 *	never blocks, KWQ_FOREVER has no timeout. See kwq_deadline_after().
 *
 * Keys come out in FIFO order and are marked processing until kwq_done().
 * After kwq_shutdown() the keys still queued are handed out, and keys that
 * were re-added while processing are waited for; then -ESHUTDOWN is
 * returned without blocking. Waiting is interruptible and exclusive: one
 * add wakes one consumer.
 *
 * Context: process context; sleeps unless @deadline is KWQ_NOWAIT.
 * Return: 0 with the key in @buf, -EAGAIN (nothing ready, KWQ_NOWAIT),
 * -ETIMEDOUT, -ERESTARTSYS (signal), -ESHUTDOWN, -EIDRM (destroyed while
 * or before waiting), -EMSGSIZE (@cap too small; the key stays queued).
 */
int kwq_get(struct kwq *q, void *buf, u32 cap, u32 *len, ktime_t deadline)
{
	DEFINE_WAIT(wait);
	int ret;

	ret = kwq_try_take(q, buf, cap, len);
	if (ret != -EAGAIN || deadline == KWQ_NOWAIT)
		return ret;

	might_sleep();
	/* Our own reference: the queue may be destroyed while we sleep. */
	kwq_get_ref(q);
	for (;;) {
		prepare_to_wait_exclusive(&q->get_wait, &wait, TASK_INTERRUPTIBLE);
		ret = kwq_try_take(q, buf, cap, len);
		if (ret != -EAGAIN)
			break;
		if (signal_pending(current)) {
			ret = -ERESTARTSYS;
			break;
		}
		ret = kwq_sleep_until(deadline);
		if (ret)
			break;
	}
	finish_wait(&q->get_wait, &wait);
	/* We may have consumed an exclusive wake-up meant for a key we left. */
	if (ret)
		kwq_wake(q, true);
	kwq_put(q);
	return ret;
}
EXPORT_SYMBOL_GPL(kwq_get);

/**
 * kwq_done() - end the processing of a key
 * @q: queue.
 * @key: key bytes.
 * @len: key length.
 *
 * A key that was added again while being processed is queued again.
 * Unlike client-go, done of a key that is not being processed changes
 * nothing (client-go queues a duplicate, kubernetes#79934).
 *
 * Context: process or softirq context.
 * Return: an enum kwq_done_result (>= 0), -ENOENT if the key is not being
 * processed, -EINVAL for a bad key, -EIDRM if the queue was destroyed.
 */
int kwq_done(struct kwq *q, const void *key, u32 len)
{
	struct kwq_item *it, *stale = NULL;
	bool ready = false, slow;
	int ret;

	if (!kwq_key_valid(key, len))
		return -EINVAL;
	spin_lock_bh(&q->lock);
	it = q->dead ? NULL : kwq_find_locked(q, key, len);
	if (q->dead) {
		ret = -EIDRM;
	} else if (!it || !(it->state & KWQ_ITEM_PROCESSING)) {
		ret = -ENOENT;
	} else {
		it->state &= ~KWQ_ITEM_PROCESSING;
		q->n_processing--;
		q->dones++;
		if (it->state & KWQ_ITEM_DIRTY) {
			q->n_dirty_processing--;
			q->requeues++;
			kwq_ready_locked(q, it, false);
			ready = true;
			ret = KWQ_DONE_REQUEUED;
		} else {
			stale = kwq_item_retire_locked(q, it);
			ret = KWQ_DONE_FINISHED;
		}
	}
	slow = kwq_wake_slow_locked(q);
	spin_unlock_bh(&q->lock);
	kfree(stale);
	kwq_wake_fast(q, ready, slow);
	return ret;
}
EXPORT_SYMBOL_GPL(kwq_done);

/**
 * kwq_requeue() - give a key back unprocessed
 * @q: queue.
 * @key: key bytes.
 * @len: key length.
 *
 * For a consumer that took a key it cannot process (its copy to user space
 * failed, or its lease ended): the key goes back to the head of the queue
 * and is handed out next. It ends the processing like kwq_done() but
 * counts no done.
 *
 * Context: process or softirq context.
 * Return: 0, -ENOENT if the key is not being processed, -EINVAL for a bad
 * key, -EIDRM if the queue was destroyed.
 */
int kwq_requeue(struct kwq *q, const void *key, u32 len)
{
	struct kwq_item *it;
	bool slow;
	int ret = 0;

	if (!kwq_key_valid(key, len))
		return -EINVAL;
	spin_lock_bh(&q->lock);
	it = q->dead ? NULL : kwq_find_locked(q, key, len);
	if (q->dead) {
		ret = -EIDRM;
	} else if (!it || !(it->state & KWQ_ITEM_PROCESSING)) {
		ret = -ENOENT;
	} else {
		if (it->state & KWQ_ITEM_DIRTY)
			q->n_dirty_processing--;
		it->state = (it->state & ~KWQ_ITEM_PROCESSING) | KWQ_ITEM_DIRTY;
		q->n_processing--;
		kwq_ready_locked(q, it, true);
	}
	slow = kwq_wake_slow_locked(q);
	spin_unlock_bh(&q->lock);
	kwq_wake_fast(q, !ret, slow);
	return ret;
}
EXPORT_SYMBOL_GPL(kwq_requeue);

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

	spin_lock_bh(&q->lock);
	n = q->n_queued;
	spin_unlock_bh(&q->lock);
	return n;
}
EXPORT_SYMBOL_GPL(kwq_len);

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
	spin_lock_bh(&q->lock);
	st->state = (q->shutting_down ? KWQ_STATE_SHUTTING_DOWN : 0) |
		    (q->drainers ? KWQ_STATE_DRAINING : 0) |
		    (q->dead ? KWQ_STATE_DESTROYED : 0);
	st->queued = q->n_queued;
	st->processing = q->n_processing;
	st->dirty_processing = q->n_dirty_processing;
	st->waiting = q->n_waiting;
	st->items = q->n_items;
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
	spin_unlock_bh(&q->lock);
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

	spin_lock_bh(&q->lock);
	r = q->dead || q->n_queued || !kwq_more_may_come_locked(q);
	spin_unlock_bh(&q->lock);
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
 * queue happens to be idle. Does not wait for anything.
 *
 * Context: process or softirq context.
 */
void kwq_shutdown(struct kwq *q)
{
	LIST_HEAD(stale);

	spin_lock_bh(&q->lock);
	q->shutting_down = true;
	q->shutdown_seq++;
	kwq_end_waiting_locked(q, false, &stale, NULL);
	spin_unlock_bh(&q->lock);
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

	spin_lock_bh(&q->lock);
	r = q->shutting_down;
	spin_unlock_bh(&q->lock);
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
	bool ready = false;
	u32 seq;
	int ret;

	might_sleep();
	if (flags & ~KWQ_DRAIN_FLUSH_WAITING)
		return -EINVAL;
	spin_lock_bh(&q->lock);
	q->shutting_down = true;
	q->drainers++;
	seq = q->shutdown_seq;
	kwq_end_waiting_locked(q, flags & KWQ_DRAIN_FLUSH_WAITING, &stale, &ready);
	spin_unlock_bh(&q->lock);
	kwq_free_stale(&stale);
	kwq_wake(q, ready);

	kwq_get_ref(q);
	for (;;) {
		prepare_to_wait(&q->drain_wait, &wait, TASK_INTERRUPTIBLE);
		spin_lock_bh(&q->lock);
		if (q->dead)
			ret = -EIDRM;
		else if (kwq_idle_locked(q))
			ret = 0;
		else if (q->shutdown_seq != seq)
			ret = -ECANCELED;
		else
			ret = -EAGAIN;
		spin_unlock_bh(&q->lock);
		if (ret != -EAGAIN)
			break;
		if (signal_pending(current)) {
			ret = -ERESTARTSYS;
			break;
		}
		ret = kwq_sleep_until(deadline);
		if (ret)
			break;
	}
	finish_wait(&q->drain_wait, &wait);
	spin_lock_bh(&q->lock);
	q->drainers--;
	spin_unlock_bh(&q->lock);
	kwq_put(q);
	return ret;
}
EXPORT_SYMBOL_GPL(kwq_shutdown_drain);

static void kwq_item_free(void *ptr, void *arg)
{
	kfree(ptr);
}

static void kwq_release(struct kref *ref)
{
	struct kwq *q = container_of(ref, struct kwq, ref);

	/* Never leave the timer armed or running on freed memory. */
	if (!q->clock)
		hrtimer_cancel(&q->timer);
	rhashtable_free_and_destroy(&q->items, kwq_item_free, NULL);
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

/**
 * kwq_create() - make a queue
 * @name: name under which kwq_lookup() and user programs find the queue,
 *	or NULL for an anonymous queue. 1 to KWQ_NAME_MAX - 1 characters from
 *	[A-Za-z0-9._-], not starting with '.'.
 * @attr: settings, or NULL for the defaults (root-owned, mode 0600).
 *
 * A named queue stays registered until kwq_destroy() or until kwq is
 * unloaded, whoever made it.
 *
 * Context: process context; may sleep.
 * Return: the queue with one reference for the caller, or ERR_PTR():
 * -EINVAL (bad name or policy), -EEXIST (name taken), -ENOSPC (max_queues named
 * queues exist), -ENOMEM.
 */
struct kwq *kwq_create(const char *name, const struct kwq_attr *attr)
{
	struct kwq *q;
	int ret;

	might_sleep();
	if (name && !kwq_name_valid(name))
		return ERR_PTR(-EINVAL);
	q = kzalloc(sizeof(*q), attr && attr->account ? GFP_KERNEL_ACCOUNT : GFP_KERNEL);
	if (!q)
		return ERR_PTR(-ENOMEM);
	if (attr && attr->policy > KWQ_POLICY_STRICT)
		goto invalid;
	spin_lock_init(&q->lock);
	INIT_LIST_HEAD(&q->ready);
	timerqueue_init_head(&q->waiting);
	q->armed = KTIME_MAX;
	q->clock = attr ? attr->clock : NULL;
	if (!q->clock)
		kwq_hrtimer_setup(&q->timer, kwq_timer_fn, CLOCK_MONOTONIC,
				  HRTIMER_MODE_ABS_SOFT);
	q->policy = attr && attr->policy ? attr->policy : KWQ_POLICY_PROMOTE;
	INIT_LIST_HEAD(&q->node);
	init_waitqueue_head(&q->get_wait);
	init_waitqueue_head(&q->drain_wait);
	kref_init(&q->ref);
	q->gfp = attr && attr->account ? GFP_KERNEL_ACCOUNT : GFP_KERNEL;
	q->max_items = kwq_max_items_per_queue;
	if (attr && attr->max_items && attr->max_items < q->max_items)
		q->max_items = attr->max_items;
	q->mode = attr ? attr->mode & 0777 : 0600;
	q->uid = attr ? attr->uid : GLOBAL_ROOT_UID;
	q->gid = attr ? attr->gid : GLOBAL_ROOT_GID;
	if (name)
		strscpy(q->name, name, sizeof(q->name));

	ret = rhashtable_init(&q->items, &kwq_item_params);
	if (ret) {
		kfree(q);
		return ERR_PTR(ret);
	}
	if (name) {
		ret = kwq_registry_add(q);
		if (ret) {
			kwq_put(q);
			return ERR_PTR(ret);
		}
	}
	return q;
invalid:
	kfree(q);
	return ERR_PTR(-EINVAL);
}
EXPORT_SYMBOL_GPL(kwq_create);

/**
 * kwq_kill() - destroy a queue but keep the caller's reference
 * @q: queue.
 *
 * Removes the name, marks the queue destroyed (every operation then fails
 * with -EIDRM) and wakes all waiters; they hold their own references, so
 * the memory outlives them. Idempotent.
 *
 * Context: process context.
 */
void kwq_kill(struct kwq *q)
{
	LIST_HEAD(stale);

	kwq_registry_del(q);
	spin_lock_bh(&q->lock);
	q->dead = true;
	q->shutting_down = true;
	kwq_end_waiting_locked(q, false, &stale, NULL);
	spin_unlock_bh(&q->lock);
	kwq_free_stale(&stale);
	kwq_wake(q, false);
	wake_up_all(&q->drain_wait);
}

/**
 * kwq_destroy() - destroy a queue and drop the caller's reference
 * @q: queue.
 *
 * Waiters in kwq_get() and kwq_shutdown_drain() return -EIDRM; later calls
 * through other references fail with -EIDRM; the name is free for reuse.
 * Keys still queued or processing are discarded.
 *
 * Context: process context; may sleep.
 */
void kwq_destroy(struct kwq *q)
{
	kwq_kill(q);
	kwq_put(q);
}
EXPORT_SYMBOL_GPL(kwq_destroy);
