// SPDX-License-Identifier: GPL-2.0
/*
 * kwq adds: add now (under a waiting policy), add after a delay, add
 * after the limiter's backoff, and the small per-key calls beside them
 * (cancel, forget, num-requeues). A new key's record is allocated under
 * the lock without sleeping, or unlocked if that fails.
 */

#include <linux/module.h>
#include <linux/slab.h>

#include "kwq_add.h"
#include "kwq_compat.h"
#include "kwq_payload.h"
#include "kwq_state.h"

/* An add now, under the waiting policy; returns an enum kwq_add_result. */
static int kwq_add_now_locked(struct kwq *q, struct kwq_item *it, u32 policy, unsigned int *ready)
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

/*
 * Ask the limiter how long the key should wait, and wait (or add now).
 * Tokens reserved for an add that schedules nothing new are given back.
 */
static int kwq_add_limited_locked(struct kwq *q, struct kwq_item *it, unsigned int *ready)
{
	u64 now = ktime_to_ns(kwq_now(q));
	u32 failures = it->failures, reserved = 0;
	u64 delay = kwq_rl_when(&q->rl, &failures, now, &reserved);
	int ret;

	/* Only per-key limiters count failures (client-go's NumRequeues). */
	it->failures = kwq_rl_tracks_items(&q->rl) ?
		       min_t(u32, failures, KWQ_FAILURES_MAX) : 0;
	trace_kwq_rate_limit(q->name, it->key, it->len, it->failures, delay);
	q->rate_limited++;
	q->retries++;
	if (delay)
		ret = kwq_wait_locked(q, it, delay, 0);
	else
		ret = kwq_add_now_locked(q, it, q->policy, ready);
	if (reserved && (ret == KWQ_ADD_WAIT_KEPT || ret == KWQ_ADD_DUPLICATE ||
			 ret == KWQ_ADD_ABSORBED)) {
		kwq_rl_unreserve(&q->rl, reserved, now);
		q->tokens_returned++;
	}
	return ret;
}

/*
 * An add of priority @priority (checked) of @it, on a queue with
 * priorities, before the add itself. A key with no run pending (neither
 * queued, dirty nor waiting) takes the add's priority: it is the next
 * run's. Otherwise the add can only raise it; a queued key moves to the
 * tail of its new level, ready from now, only if that rank is lower than
 * the one it has (its wait there already counts for more otherwise), so a
 * raise never hands a key out later (on a tenant queue it goes to the
 * tail of its tenant's keys at the new level, which the rank does not
 * see: there it can). Documentation/kwq-priorities.rst has the rules.
 */
static void kwq_add_priority_locked(struct kwq *q, struct kwq_item *it, s32 priority)
{
	u32 level = kwq_prio_level(priority);
	u64 now, gain;

	if (!(it->state & (KWQ_ITEM_DIRTY | KWQ_ITEM_WAITING))) {
		it->level = level;
		return;
	}
	if (level <= it->level)
		return;
	if ((it->state & KWQ_ITEM_WORK) != KWQ_ITEM_DIRTY) {
		it->level = level;
		return;
	}
	now = kwq_stamp_now(q);
	gain = (u64)(level - it->level) * q->order.aging_ns;
	if (kwq_elapsed(now, it->stamp) >= gain)
		return;
	kwq_st_move(q, it, level, now);
}

/*
 * Whether an add of @it (NULL: a new key) makes sure of a spare side
 * first (kwq_state.h): one that queues the key, so that the get to come
 * finds a spare (the consumer of a full memory cgroup can still take its
 * keys out), or that may give it a side. Not an add now of a key already
 * queued, which only counts a duplicate, nor any add of a key that has
 * its side (being processed, or waiting beside its queued or processing
 * state or with a debounce bound): a key has at most one, so the re-add
 * of a key being processed allocates no side.
 */
static bool kwq_add_wants_spare(const struct kwq_item *it, s64 delay_ns, u32 flags)
{
	if (!it)
		return true;
	if (!it->lone && it->side)
		return false;
	return !(it->state & KWQ_ITEM_DIRTY) || delay_ns > 0 || (flags & KWQ_ADD_RATE_LIMITED);
}

/*
 * With lockdep (like kwq_st_check()): an add that did not want a spare
 * (kwq_add_wants_spare()) took none, or one could find the stack empty.
 */
static void kwq_add_check_sides(struct kwq *q, bool wants_spare, u32 spare_before)
{
	if (IS_ENABLED(CONFIG_LOCKDEP))
		WARN_ON_ONCE(!wants_spare && q->n_side_spare < spare_before);
}

/* kwq_add_locked()'s own return: no spare side without sleeping. */
#define KWQ_ADD_NO_SIDE	(-ENOBUFS)

/*
 * One add, now (@o->delay_ns <= 0) or after a delay, with kwq.lock held,
 * after kwq_add_begin_locked() in the same hold found @it (NULL: a new
 * key) and did not end the add.
 * A new key takes *@fresh if the caller allocated one, or a record
 * allocated here without sleeping; if that fails, returns -EWOULDBLOCK
 * and the caller allocates one unlocked and calls again. An unused
 * *@fresh is the caller's to free. Only the first add of a key allocates
 * a record; an add that queues a key or may give it a side
 * (kwq_add_wants_spare()) makes sure of a spare side first, and returns
 * KWQ_ADD_NO_SIDE if it could not have one without sleeping. @o was
 * checked by the caller.
 */
static int kwq_add_locked(struct kwq *q, const struct kwq_lookup_key *k, struct kwq_item *it,
			  const struct kwq_add_opts *o, gfp_t gfp, struct kwq_item **fresh,
			  struct kwq_unlocked_work *w)
{
	const void *key = k->key;
	s64 delay_ns = o->delay_ns;
	u32 flags = o->flags;
	u32 policy = flags & KWQ_ADD_POLICY_MASK;
	u32 len = k->len;
	u32 spare_before = q->n_side_spare;
	bool wants_spare;
	int ret;

	/* A spare side first, if the add wants one: before anything changes. */
	wants_spare = kwq_add_wants_spare(it, delay_ns, flags);
	if (wants_spare && !kwq_side_ensure_locked(q))
		return KWQ_ADD_NO_SIDE;
	if (!it) {
		/* At the limit, a backoff-only record gives way to real work. */
		if (q->items.n >= q->max_items && list_empty(&q->backoff))
			return -ENOSPC;
		if (!*fresh)
			*fresh = kwq_item_new_locked(q, k,
						     (gfp & ~__GFP_DIRECT_RECLAIM) | __GFP_NOWARN);
		if (!*fresh)
			return -EWOULDBLOCK;
		if (!kwq_acct_charge(&q->acct, len))
			return -ENOSPC;
		if (w->payload && kwq_payload_charge_locked(q, NULL, w->payload)) {
			kwq_acct_uncharge(&q->acct, len);
			return -ENOSPC;
		}
		/* Nothing fails from here on: evicting now changes nothing on error. */
		if (q->items.n >= q->max_items)
			kwq_evict_backoff_locked(q, &w->stale);
		kwq_table_insert(&q->items, *fresh);
		kwq_table_check_locked(q);
		it = *fresh;
		*fresh = NULL;
	} else if (w->payload && kwq_payload_charge_locked(q, it, w->payload)) {
		return -ENOSPC;
	}
	kwq_item_activate_locked(q, it);
	if (kwq_order_has_levels(&q->order))
		kwq_add_priority_locked(q, it, o->priority);
	if (flags & KWQ_ADD_RATE_LIMITED) {
		ret = kwq_add_limited_locked(q, it, &w->ready);
	} else if (delay_ns > 0 && (flags & KWQ_AFTER_DEBOUNCE)) {
		q->retries++;
		ret = kwq_debounce_locked(q, it, delay_ns, o->max_wait_ns);
	} else if (delay_ns > 0) {
		q->retries++;
		ret = kwq_wait_locked(q, it, delay_ns, flags);
	} else {
		ret = kwq_add_now_locked(q, it, policy ?: q->policy, &w->ready);
	}
	/* Whatever the add did, its payload is the key's latest. */
	if (w->payload) {
		kwq_payload_set_locked(q, it, w->payload);
		w->payload = NULL;
	}
	kwq_add_check_sides(q, wants_spare, spare_before);
	trace_kwq_add(q->name, key, len, ret, delay_ns > 0 ? delay_ns : 0);
	return ret;
}

/*
 * kwq_add_locked() until it has what it needs, a record for a new key
 * and a spare side if it may take one: drops the lock to allocate the
 * missing one sleeping when the allocation without sleeping failed, then
 * begins again with kwq_add_begin_locked(), since the queue and the key
 * may have changed meanwhile. With a record kwq_add_locked() cannot fail
 * that way again; a spare side another add took meanwhile is allocated
 * again. The lock is held on return either way. An add that may wait
 * keeps the instant of its first hold in each new one (kwq_now_resume()).
 * One call site, so kwq_add_locked() is inlined here: a call level less
 * on every add.
 */
int kwq_add_locked_alloc(struct kwq *q, const struct kwq_lookup_key *k, struct kwq_item *it,
			 const struct kwq_add_opts *o, gfp_t gfp, struct kwq_unlocked_work *w)
	__must_hold(&q->lock)
{
	struct kwq_item *fresh = NULL;
	int ret;

	for (;;) {
		ret = kwq_add_locked(q, k, it, o, gfp, &fresh, w);
		if (ret == KWQ_ADD_NO_SIDE) {
			ret = kwq_side_refill_locked(q, gfp);
			if (ret)
				break;
		} else {
			if (ret != -EWOULDBLOCK)
				break;
			if (WARN_ON_ONCE(fresh))
				break;
			kwq_unlock(q);
			fresh = kwq_item_new(q, k, gfp);
			kwq_lock(q);
			if (!fresh) {
				ret = -ENOMEM;
				break;
			}
		}
		/* A new hold: the delay still counts from the add's start. */
		if (kwq_add_may_wait(o))
			kwq_now_resume(q);
		if (kwq_add_begin_locked(q, k, o, w, &it, &ret))
			break;
	}
	/* Someone else added the key meanwhile, or the add failed. */
	if (fresh)
		kwq_item_retire_locked(q, fresh, &w->stale);
	return ret;
}

/* An add of one key with @payload, the add's reference: out of line. */
static int kwq_add_payload(struct kwq *q, const void *key, u32 len, const struct kwq_add_opts *o,
			   gfp_t gfp, struct kwq_payload *payload)
{
	return kwq_add_one(q, key, len, o, gfp, payload);
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
	struct kwq_add_opts o = {};

	might_sleep();
	return kwq_add_common(q, key, len, &o, q->gfp);
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
	struct kwq_add_opts o = { .flags = policy };

	might_sleep();
	if (policy > KWQ_POLICY_STRICT)
		return -EINVAL;
	return kwq_add_common(q, key, len, &o, q->gfp);
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
 * Context: process or softirq context (soft hrtimer callbacks included)
 * with interrupts enabled; a spinlock_t taken with spin_lock() or
 * spin_lock_bh(), or a mutex, may be held. Never hard interrupt context,
 * interrupts disabled (spin_lock_irqsave() and the like) or a
 * raw_spinlock_t held: the queue's lock is taken with spin_lock_bh().
 * Does not sleep without PREEMPT_RT; with it the queue's lock is a
 * sleeping lock, so preemption must not be disabled either.
 * Return: as kwq_add().
 */
int kwq_add_atomic(struct kwq *q, const void *key, u32 len)
{
	struct kwq_add_opts o = {};

	return kwq_add_common(q, key, len, &o, GFP_ATOMIC | __GFP_NOWARN);
}
EXPORT_SYMBOL_GPL(kwq_add_atomic);

/**
 * kwq_add_after() - add a key once a delay has passed
 * @q: queue.
 * @key: key bytes, copied.
 * @len: key length, 1 to KWQ_KEY_MAX.
 * @delay_ns: delay; <= 0 is an add now (with @flags' policy); delays
 *	beyond KWQ_DELAY_MAX_NS are clamped to it. It counts from the call's
 *	start, before the queue's lock is taken (struct kwq_ioc_add_after).
 * @flags: KWQ_AFTER_REPLACE to replace an existing deadline (so a delay
 *	can be postponed); without it the earliest deadline wins, as in
 *	client-go. For @delay_ns <= 0, an enum kwq_wait_policy.
 *
 * Each key has at most one waiting entry, kept in deadline order; the
 * queue's timer is armed for the earliest one, or earlier to move far
 * entries ahead of it (Documentation/kwq-delays.rst). When a deadline comes the
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
	struct kwq_add_opts o = { .delay_ns = delay_ns, .flags = flags };

	might_sleep();
	/*
	 * KWQ_ADD_RATE_LIMITED is kwq_add_rate_limited()'s, not a caller's;
	 * KWQ_AFTER_DEBOUNCE needs a max wait: kwq_add_debounced().
	 */
	if (flags & (KWQ_ADD_RATE_LIMITED | KWQ_AFTER_DEBOUNCE))
		return -EINVAL;
	return kwq_add_common(q, key, len, &o, q->gfp);
}
EXPORT_SYMBOL_GPL(kwq_add_after);

/**
 * kwq_add_debounced() - add a key once it has been quiet for a while
 * @q: queue.
 * @key: key bytes, copied.
 * @len: key length, 1 to KWQ_KEY_MAX.
 * @delay_ns: how long the key must go without another debounced add
 *	before it runs; > 0, clamped to KWQ_DELAY_MAX_NS.
 * @max_wait_ns: the longest the key waits, counted from the debounced add
 *	that gave it its waiting entry; >= @delay_ns, clamped to
 *	KWQ_DELAY_MAX_NS.
 *
 * kube-rs's debounce, bounded: a burst of adds runs the key once, at its
 * end, and a key that is never quiet still runs every @max_wait_ns. A
 * key that is queued, or processing and already marked to run again, is
 * a duplicate; one without a waiting entry gets one at now + @delay_ns;
 * a debounced entry moves to the later of its deadline and now +
 * @delay_ns, never past its bound (which this add can only lower to now +
 * @max_wait_ns); a plain entry (kwq_add_after(), kwq_add_rate_limited())
 * keeps the earliest deadline. struct kwq_ioc_add_after in the uapi
 * header has the rules in full. The stats count moves in
 * kwq_stats.debounced and adds held at the bound in .debounce_capped.
 *
 * Context: process context; may sleep to allocate the key record.
 * Return: KWQ_ADD_WAITING, KWQ_ADD_WAIT_MOVED, KWQ_ADD_WAIT_KEPT or
 * KWQ_ADD_DUPLICATE; errors as kwq_add(), and -EINVAL for @delay_ns <= 0
 * or @max_wait_ns < @delay_ns. On error nothing changed.
 */
int kwq_add_debounced(struct kwq *q, const void *key, u32 len, s64 delay_ns,
		      u64 max_wait_ns)
{
	struct kwq_add_opts o = {
		.delay_ns = delay_ns, .max_wait_ns = max_wait_ns, .flags = KWQ_AFTER_DEBOUNCE,
	};

	might_sleep();
	if (delay_ns <= 0 || max_wait_ns < (u64)delay_ns)
		return -EINVAL;
	return kwq_add_common(q, key, len, &o, q->gfp);
}
EXPORT_SYMBOL_GPL(kwq_add_debounced);

/*
 * The options a caller may pass to @q (struct kwq_ioc_add's rules): a
 * priority in range on a priority queue, a policy to an add now,
 * KWQ_AFTER_REPLACE or KWQ_AFTER_DEBOUNCE to a delayed add, a max wait
 * only to a debounced add and no shorter than its delay. Whether the
 * queue has priorities is constant: no lock needed.
 */
bool kwq_add_opts_ok(const struct kwq *q, const struct kwq_add_opts *o)
{
	if (kwq_order_has_levels(&q->order) ?
	    o->priority < KWQ_PRIORITY_MIN || o->priority > KWQ_PRIORITY_MAX : o->priority)
		return false;
	/* A payload has bytes; its length is checked against the queue's limit. */
	if (!o->payload != !o->payload_len)
		return false;
	if (o->delay_ns <= 0)
		return !(o->flags & ~KWQ_ADD_POLICY_MASK) && !o->max_wait_ns;
	if (o->flags == KWQ_AFTER_DEBOUNCE)
		return o->max_wait_ns >= (u64)o->delay_ns;
	return !(o->flags & ~KWQ_AFTER_REPLACE) && !o->max_wait_ns;
}

/**
 * kwq_add_ex() - add a key with every option
 * @q: queue.
 * @key: key bytes, copied.
 * @len: key length, 1 to KWQ_KEY_MAX.
 * @o: the options (struct kwq_add_opts); all 0 is kwq_add().
 *
 * kwq_add_policy(), kwq_add_after() or kwq_add_debounced() by @o, with
 * the rules of KWQ_IOC_ADD_EX (struct kwq_ioc_add in the uapi header),
 * and on a priority queue (&kwq_attr.priority) at priority @o->priority
 * (Documentation/kwq-priorities.rst). Every other add of a priority queue
 * has priority 0.
 *
 * With @o->payload (@o->payload_len bytes, copied), on a queue made with
 * kwq_attr.payload_max, the payload becomes the key's: a later add with
 * a payload replaces it, one without keeps it; kwq_get_payload() hands it
 * out with the key. Documentation/kwq-payloads.rst has the rules.
 *
 * Context: process context; may sleep to allocate the key record.
 * Return: an enum kwq_add_result (>= 0); errors as kwq_add(), and
 * -EINVAL for options that do not apply (a payload on a queue without
 * payloads among them), -E2BIG for a payload longer than the queue's
 * payload_max. On error nothing changed.
 */
int kwq_add_ex(struct kwq *q, const void *key, u32 len, const struct kwq_add_opts *o)
{
	struct kwq_payload *p;
	int ret;

	might_sleep();
	if (!kwq_add_opts_ok(q, o))
		return -EINVAL;
	ret = kwq_payload_check(q, o->payload_len);
	if (ret)
		return ret;
	if (!o->payload_len)
		return kwq_add_common(q, key, len, o, q->gfp);
	if (!kwq_key_valid(key, len))
		return -EINVAL;
	p = kwq_payload_new(o->payload, o->payload_len, q->gfp);
	if (!p)
		return -ENOMEM;
	return kwq_add_payload(q, key, len, o, q->gfp, p);
}
EXPORT_SYMBOL_GPL(kwq_add_ex);

/**
 * kwq_add_ex_payload() - kwq_add_ex() with a payload made by the caller
 * @q: queue.
 * @key: key bytes, copied.
 * @len: key length.
 * @o: the options, checked with kwq_add_opts_ok(); @o->payload unused.
 * @p: the payload (kwq_payload_alloc(), length checked with
 *	kwq_payload_check()), whose reference the add takes: stored, or
 *	dropped on error.
 *
 * For /dev/kwq, which copies the payload from user space straight into
 * its allocation.
 *
 * Context: process context; may sleep.
 * Return: as kwq_add_ex().
 */
int kwq_add_ex_payload(struct kwq *q, const void *key, u32 len, const struct kwq_add_opts *o,
		       struct kwq_payload *p)
{
	return kwq_add_payload(q, key, len, o, q->gfp, p);
}

/*
 * The frame of the small per-key calls: validate the key, look it up under
 * the lock (NULL if unknown) and run @op, unless the queue was destroyed;
 * free what @op retired once unlocked.
 */
static int kwq_with_key(struct kwq *q, const void *key, u32 len,
			int (*op)(struct kwq *q, struct kwq_item *it, struct list_head *stale))
{
	LIST_HEAD(stale);
	int ret;

	if (!kwq_key_valid(key, len))
		return -EINVAL;
	kwq_lock(q);
	ret = q->dead ? -EIDRM : op(q, kwq_find_locked(q, key, len), &stale);
	kwq_unlock(q);
	kwq_free_stale(q, &stale);
	return ret;
}

static int kwq_cancel_locked(struct kwq *q, struct kwq_item *it, struct list_head *stale)
{
	if (!it || !(it->state & KWQ_ITEM_WAITING))
		return 0;
	kwq_unwait_locked(q, it);
	q->cancels++;
	kwq_program_locked(q);
	kwq_item_settle_locked(q, it, stale);
	return 1;
}

static int kwq_forget_locked(struct kwq *q, struct kwq_item *it, struct list_head *stale)
{
	if (!it || !it->failures)
		return 0;
	it->failures = 0;
	q->forgets++;
	if (!it->state) {
		kwq_st_unbackoff(q, it);
		kwq_item_drop_locked(q, it, stale);
	}
	return 1;
}

static int kwq_num_requeues_locked(struct kwq *q, struct kwq_item *it, struct list_head *stale)
{
	return it ? it->failures : 0;
}

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
	return kwq_with_key(q, key, len, kwq_cancel_locked);
}
EXPORT_SYMBOL_GPL(kwq_cancel);

/**
 * kwq_add_rate_limited() - add a key after the delay its limiter gives
 * @q: queue.
 * @key: key bytes, copied.
 * @len: key length, 1 to KWQ_KEY_MAX.
 *
 * client-go's AddRateLimited: asks the queue's limiter (struct
 * kwq_ratelimit, chosen at creation) for a delay, which counts a failure
 * for the key and takes a token from each bucket, then adds the key after
 * that delay as kwq_add_after() does (the earliest deadline wins). Unlike
 * client-go, an add that schedules nothing new (the key was already
 * waiting for an earlier deadline, or already queued) gives its bucket
 * tokens back.
 *
 * Context: process context; may sleep to allocate the key record.
 * Return: an enum kwq_add_result (>= 0), errors as kwq_add().
 */
int kwq_add_rate_limited(struct kwq *q, const void *key, u32 len)
{
	struct kwq_add_opts o = { .flags = KWQ_ADD_RATE_LIMITED };

	might_sleep();
	return kwq_add_common(q, key, len, &o, q->gfp);
}
EXPORT_SYMBOL_GPL(kwq_add_rate_limited);

/**
 * kwq_forget() - clear a key's failure count
 * @q: queue.
 * @key: key bytes.
 * @len: key length.
 *
 * client-go's Forget, called when a key was processed successfully. The
 * key's other state is not touched.
 *
 * Context: process or softirq context.
 * Return: 1 if the key had failures, 0 if not, -EINVAL for a bad key,
 * -EIDRM if the queue was destroyed.
 */
int kwq_forget(struct kwq *q, const void *key, u32 len)
{
	return kwq_with_key(q, key, len, kwq_forget_locked);
}
EXPORT_SYMBOL_GPL(kwq_forget);

/**
 * kwq_num_requeues() - a key's failure count
 * @q: queue.
 * @key: key bytes.
 * @len: key length.
 *
 * client-go's NumRequeues: rate-limited adds since the last kwq_forget(),
 * saturating at 524287. 0 for an unknown key, and for every key when the
 * queue's limiter has only token buckets (which keep no per-key state).
 *
 * Context: process or softirq context.
 * Return: the count, -EINVAL for a bad key, -EIDRM if destroyed.
 */
int kwq_num_requeues(struct kwq *q, const void *key, u32 len)
{
	return kwq_with_key(q, key, len, kwq_num_requeues_locked);
}
EXPORT_SYMBOL_GPL(kwq_num_requeues);
