// SPDX-License-Identifier: GPL-2.0
/*
 * kwq core: the deduplicating queue of keys.
 *
 * Each key has exactly one record (struct kwq_item) in the queue's key
 * table (kwq_table.h); the record's state bits say whether it is dirty
 * (needs processing) and/or processing. A dirty record that is not
 * processing is linked on the ready list, which gives FIFO order. All
 * state changes happen under kwq.lock; the lock rules are in
 * kwq_internal.h. Records are freed as soon as they leave the table: no
 * lookup runs without the lock.
 */

#include <linux/err.h>
#include <linux/module.h>
#include <linux/random.h>
#include <linux/sched/clock.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/workqueue.h>
#include <linux/string.h>

#include "kwq_compat.h"
#include "kwq_internal.h"
#include "kwq_key.h"
#include "kwq_state.h"

#define CREATE_TRACE_POINTS
#include "kwq_trace.h"

/*
 * Keys are hashed once per call (kwq_key_hash()) and the hash is kept in
 * the record: inserting, removing and moving a record to a resized table
 * do not hash its key again.
 */
static struct kwq_hash_secret kwq_hash_secret __read_mostly;

struct kwq_lookup_key {
	const void *key;
	u32 len;
	u32 hash;
};

static void kwq_lookup_key_init(struct kwq_lookup_key *k, const void *key, u32 len)
{
	k->key = key;
	k->len = len;
	k->hash = kwq_key_hash(key, len, &kwq_hash_secret);
}

/* Resizes of key tables (kwq_resize_work()). */
static struct workqueue_struct *kwq_resize_wq;

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

static struct kwq_item *kwq_find_key_locked(struct kwq *q, const struct kwq_lookup_key *k)
{
	lockdep_assert_held(&q->lock);
	return kwq_table_find(&q->items, k->key, k->len, k->hash);
}

static struct kwq_item *kwq_find_locked(struct kwq *q, const void *key, u32 len)
{
	struct kwq_lookup_key k;

	kwq_lookup_key_init(&k, key, len);
	return kwq_find_key_locked(q, &k);
}

static struct kmem_cache *kwq_item_cache;

static size_t kwq_item_alloc_size(u32 key_len)
{
	return struct_size((struct kwq_item *)NULL, key, key_len);
}

/**
 * kwq_core_init() - set up what all queues share
 *
 * Return: 0 or -ENOMEM.
 */
int kwq_core_init(void)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(kwq_hash_secret.s); i++)
		kwq_hash_secret.s[i] = get_random_u64() | 1;
	kwq_resize_wq = alloc_workqueue("kwq_resize", WQ_UNBOUND, 0);
	if (!kwq_resize_wq)
		return -ENOMEM;
	kwq_item_cache = kmem_cache_create("kwq_item", kwq_item_alloc_size(KWQ_SMALL_KEY),
					   0, SLAB_ACCOUNT, NULL);
	if (!kwq_item_cache) {
		destroy_workqueue(kwq_resize_wq);
		return -ENOMEM;
	}
	return 0;
}

/**
 * kwq_core_exit() - tear down what kwq_core_init() set up
 *
 * Every queue must be gone.
 */
void kwq_core_exit(void)
{
	/* Pending resizes hold the last references of their queues. */
	destroy_workqueue(kwq_resize_wq);
	kmem_cache_destroy(kwq_item_cache);
}

/**
 * kwq_item_bytes() - memory one key record takes
 * @key_len: key length in bytes.
 *
 * For capacity planning: the slab object size of a record holding a key
 * of @key_len bytes, excluding the key table's share (one pointer per
 * bucket: 1 to 8 buckets per key, 2 to 4 after a resize).
 *
 * Context: any.
 * Return: bytes.
 */
size_t kwq_item_bytes(u32 key_len)
{
	if (key_len <= KWQ_SMALL_KEY)
		return kmem_cache_size(kwq_item_cache);
	return kmalloc_size_roundup(kwq_item_alloc_size(key_len));
}
EXPORT_SYMBOL_GPL(kwq_item_bytes);

static void kwq_item_free(struct kwq_item *it)
{
	if (it->len <= KWQ_SMALL_KEY)
		kmem_cache_free(kwq_item_cache, it);
	else
		kfree(it);
}

static void kwq_item_init(struct kwq_item *it, const struct kwq_lookup_key *k)
{
	INIT_LIST_HEAD(&it->ready);
	timerqueue_init(&it->wait);
	it->state = 0;
	it->ticket = 0;
	it->owner = 0;
	it->failures = 0;
	it->len = k->len;
	it->hash = k->hash;
	kwq_key_copy(it->key, k->key, k->len);
}

static struct kwq_item *kwq_item_new(const struct kwq_lookup_key *k, gfp_t gfp)
{
	struct kwq_item *it = k->len <= KWQ_SMALL_KEY ? kmem_cache_alloc(kwq_item_cache, gfp) :
			      kmalloc(kwq_item_alloc_size(k->len), gfp);

	if (it)
		kwq_item_init(it, k);
	return it;
}

/*
 * A record for a new key: one of the queue's spare records if the key is
 * small, else a new one (allocated with @gfp, which must not sleep here).
 */
static struct kwq_item *kwq_item_new_locked(struct kwq *q, const struct kwq_lookup_key *k,
					    gfp_t gfp)
{
	struct kwq_item *it;

	if (k->len > KWQ_SMALL_KEY || !q->spare)
		return kwq_item_new(k, gfp);
	it = q->spare;
	q->spare = it->hnext;
	q->n_spare--;
	kwq_item_init(it, k);
	return it;
}

/*
 * Retire an unhashed record: a small one is kept as a spare while the
 * queue has fewer than KWQ_SPARE_MAX, else the caller frees it from @stale
 * once unlocked. A queue whose keys come and go (every key of a cycle is
 * new) then takes no trip through the slab allocator per key.
 */
static inline void kwq_item_retire_locked(struct kwq *q, struct kwq_item *it,
					  struct list_head *stale)
{
	if (it->len <= KWQ_SMALL_KEY && q->n_spare < KWQ_SPARE_MAX) {
		/* Out of the table, a record's chain link is free to use. */
		it->hnext = q->spare;
		q->spare = it;
		q->n_spare++;
	} else {
		list_add(&it->ready, stale);
	}
}

/* Schedule a resize; the worker holds a reference on the queue till done. */
static void kwq_table_resize_locked(struct kwq *q)
{
	if (q->items.resizing || q->dead)
		return;
	q->items.resizing = true;
	kwq_get_ref(q);
	queue_work(kwq_resize_wq, &q->resize_work);
}

/* After an insert or a removal: resize the key table if its load calls for it. */
static inline void kwq_table_check_locked(struct kwq *q)
{
	if (unlikely(kwq_table_off_size(&q->items)))
		kwq_table_resize_locked(q);
}

/*
 * Resize the key table: allocate the new buckets unlocked, then move the
 * old ones a step at a time, letting go of the lock in between so that a
 * table of millions of keys never stops the queue for long.
 */
static void kwq_resize_work(struct work_struct *work)
{
	struct kwq *q = container_of(work, struct kwq, resize_work);
	struct kwq_item **buckets = NULL, **old = NULL;
	bool again;
	u32 bits;

	kwq_lock(q);
	bits = q->dead ? 0 : kwq_table_want_resize(&q->items);
	kwq_unlock(q);
	if (bits)
		buckets = kwq_table_alloc(bits, q->gfp);

	kwq_lock(q);
	if (buckets && !q->dead) {
		kwq_table_begin_resize(&q->items, buckets, bits);
		buckets = NULL;
		while (!kwq_table_move_step(&q->items)) {
			kwq_unlock(q);
			cond_resched();
			kwq_lock(q);
		}
		old = kwq_table_end_resize(&q->items);
	}
	/*
	 * The size was chosen before the allocation; if the keys outran it
	 * meanwhile, go again, keeping the flag and the reference.
	 */
	again = bits && old && !q->dead && kwq_table_want_resize(&q->items);
	if (!again)
		q->items.resizing = false;
	kwq_unlock(q);
	kwq_table_free(buckets);
	kwq_table_free(old);
	if (again)
		queue_work(kwq_resize_wq, &q->resize_work);
	else
		kwq_put(q);
}

/* Unhash a record and retire it. */
static inline void kwq_item_drop_locked(struct kwq *q, struct kwq_item *it, struct list_head *stale)
{
	kwq_table_remove(&q->items, it);
	kwq_table_check_locked(q);
	kwq_item_retire_locked(q, it, stale);
}

/* Forget the least recently active backoff-only record, if there is one. */
static bool kwq_evict_backoff_locked(struct kwq *q, struct list_head *stale)
{
	struct kwq_item *it = list_first_entry_or_null(&q->backoff, struct kwq_item, ready);

	if (!it)
		return false;
	kwq_st_unbackoff(q, it);
	q->backoff_evictions++;
	kwq_item_drop_locked(q, it, stale);
	return true;
}

/*
 * A record just lost a state bit. With no state left it is dropped, or,
 * if it still counts failures, kept as backoff-only at the tail of the
 * backoff list, whose length is bounded (client-go's failure maps grow until
 * Forget, kubernetes PR #138743).
 */
static inline void kwq_item_settle_locked(struct kwq *q, struct kwq_item *it,
					  struct list_head *stale)
{
	if (it->state)
		return;
	if (!it->failures) {
		kwq_item_drop_locked(q, it, stale);
		return;
	}
	kwq_st_backoff(q, it);
	while (q->n_backoff > q->max_backoff && kwq_evict_backoff_locked(q, stale))
		;
}

/*
 * A record is about to get state: if it is backoff-only, take it off the
 * backoff list. (A fresh record has no state either, but is on no list.)
 */
static void kwq_item_activate_locked(struct kwq *q, struct kwq_item *it)
{
	if (it->state || list_empty(&it->ready))
		return;
	kwq_st_unbackoff(q, it);
}

static void kwq_free_stale(struct list_head *stale)
{
	struct kwq_item *it, *next;

	list_for_each_entry_safe(it, next, stale, ready)
		kwq_item_free(it);
}

static ktime_t kwq_clock_read(struct kwq *q)
{
	return q->clock ? q->clock->now(q->clock) : ktime_get();
}

/* The time of the current critical section; kwq.lock must be held. */
static ktime_t kwq_now(struct kwq *q)
{
	lockdep_assert_held(&q->lock);
	if (!q->now_valid) {
		q->now = kwq_clock_read(q);
		q->now_valid = true;
	}
	return q->now;
}

/* Upper bounds of the histogram buckets, in ns (the last is +Inf). */
static const u64 kwq_hist_bounds[KWQ_HIST_BUCKETS - 1] = {
	10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000,
	1000000000, 10000000000ULL,
};

static void kwq_hist_observe(struct kwq_hist *h, u64 ns)
{
	unsigned int i = 0;

	while (i < ARRAY_SIZE(kwq_hist_bounds) && ns > kwq_hist_bounds[i])
		i++;
	h->count[i]++;
	h->sum_ns += ns;
}

/*
 * The clock of kwq_item.stamp, which only ever measures durations (queue
 * latency, work duration, time processing): local_clock(), the clock of
 * the scheduler's and delay accounting's durations, a TSC read where
 * ktime_get() may have to read a slow clocksource. Stamps are compared
 * with CLOCK_MONOTONIC deadlines only under a processing timeout, and
 * a test clock must drive everything: those queues stamp with kwq_now().
 * Across CPUs local_clock() may differ slightly; durations are clamped
 * at zero.
 */
static u64 kwq_stamp_now(struct kwq *q)
{
	if (q->clock || q->processing_timeout)
		return ktime_to_ns(kwq_now(q));
	lockdep_assert_held(&q->lock);
	if (!q->stamp_valid) {
		q->stamp_now = local_clock();
		q->stamp_valid = true;
	}
	return q->stamp_now;
}

/* Nanoseconds from @stamp to @now (both kwq_stamp_now()), never negative. */
static u64 kwq_elapsed(u64 now, u64 stamp)
{
	return now > stamp ? now - stamp : 0;
}

static u64 kwq_since_locked(struct kwq *q, u64 stamp)
{
	return kwq_elapsed(kwq_stamp_now(q), stamp);
}

/* Queue a fresh (or only waiting) record; its queue latency starts now. */
static void kwq_ready_locked(struct kwq *q, struct kwq_item *it, bool at_head)
{
	it->stamp = kwq_stamp_now(q);
	kwq_st_queue(q, it, at_head);
}

/* True when nothing is queued and nothing is being processed. */
static bool kwq_drained_locked(const struct kwq *q)
{
	return !q->n_queued && !q->n_processing;
}

/*
 * After shutdown a key can still become ready while any key is being
 * processed: a key re-added meanwhile is queued again by its done, and
 * a key whose lease ends, whose processing timeout fires or whose holder
 * requeues it goes back to the head. Consumers wait for those instead of
 * leaving early and stranding them (client-go returns "shutdown" as soon
 * as the list is momentarily empty).
 */
static bool kwq_more_may_come_locked(const struct kwq *q)
{
	return !q->shutting_down || q->n_processing;
}

/*
 * Wake whoever a state change concerns. Called after the change, with the
 * lock dropped; @ready_added says how many keys were made ready.
 */
static void kwq_wake(struct kwq *q, unsigned int ready_added)
{
	bool ended, drained, ready;

	kwq_lock(q);
	ready = q->n_queued;
	ended = q->dead || (!q->n_queued && !kwq_more_may_come_locked(q));
	drained = q->drainers && (q->dead || kwq_drained_locked(q));
	kwq_unlock(q);

	if (ended)
		wake_up_all(&q->get_wait);
	else if (ready_added && ready)
		wake_up_nr(&q->get_wait, ready_added);
	if (drained)
		wake_up_all(&q->drain_wait);
}

/*
 * Fast path of kwq_wake() for the common case of a live, running queue:
 * only the ready-list wakeup matters, and it needs no lock. One consumer
 * is woken per key made ready. With nobody waiting (a busy consumer, a
 * producer alone) the wait queue's lock is not taken at all:
 * wq_has_sleeper() pairs with the barrier in prepare_to_wait_exclusive()
 * and the one after poll_wait() in kwq_poll().
 */
static void kwq_wake_fast(struct kwq *q, unsigned int ready, bool slow)
{
	if (slow)
		kwq_wake(q, ready);
	else if (ready && wq_has_sleeper(&q->get_wait))
		wake_up_nr(&q->get_wait, ready);
}

/* Whether any state change needs the full wake-up check. */
static bool kwq_wake_slow_locked(const struct kwq *q)
{
	return q->shutting_down || q->drainers || q->dead;
}

/* Mark an existing record dirty; returns an enum kwq_add_result. */
static int kwq_mark_dirty_locked(struct kwq *q, struct kwq_item *it, unsigned int *ready)
{
	if (it->state & KWQ_ITEM_DIRTY) {
		q->dedups++;
		return KWQ_ADD_DUPLICATE;
	}
	q->adds++;
	if (it->state & KWQ_ITEM_PROCESSING) {
		kwq_st_defer(q, it);
		return KWQ_ADD_DEFERRED;
	}
	kwq_ready_locked(q, it, false);
	(*ready)++;
	return KWQ_ADD_QUEUED;
}

/*
 * Point the timer at the earliest waiting deadline, or at the moment the
 * oldest key being processed overstays the processing timeout, whichever
 * comes first, if that changed (or always, when the timer is @spent).
 */
static void kwq_program_timer_locked(struct kwq *q, bool spent)
{
	struct timerqueue_node *next = timerqueue_getnext(&q->waiting);
	ktime_t expires = next ? next->expires : KTIME_MAX;
	struct kwq_item *oldest;

	if (q->processing_timeout) {
		oldest = list_first_entry_or_null(&q->busy, struct kwq_item, ready);
		if (oldest)
			expires = min(expires, ns_to_ktime(oldest->stamp + q->processing_timeout));
	}
	/* A destroyed queue runs no deadline; its clock may forget it. */
	if (q->dead)
		expires = KTIME_MAX;
	if (expires == q->armed && !spent)
		return;
	WRITE_ONCE(q->armed, expires);
	if (q->clock)
		q->clock->program(q->clock, q, expires);
	else if (expires == KTIME_MAX)
		hrtimer_try_to_cancel(&q->timer);
	else
		hrtimer_start(&q->timer, expires, HRTIMER_MODE_ABS_SOFT);
}

static void kwq_program_locked(struct kwq *q)
{
	kwq_program_timer_locked(q, false);
}

static void kwq_unwait_locked(struct kwq *q, struct kwq_item *it)
{
	kwq_st_unwait(q, it);
}

/*
 * Empty the waiting set: queue every waiting key now (@flush), or drop
 * the entries and retire records left without state (to the spares, or to
 * @stale for the caller to free once unlocked, linked through their
 * unused ready link).
 */
static void kwq_end_waiting_locked(struct kwq *q, bool flush, struct list_head *stale,
				   unsigned int *ready)
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
			kwq_item_settle_locked(q, it, stale);
		}
	}
	kwq_program_locked(q);
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
	kwq_st_wait(q, it, deadline);
	kwq_program_locked(q);
	return ret;
}

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

/* Internal flag of kwq_add_common(): the delay comes from the limiter. */
#define KWQ_ADD_RATE_LIMITED	BIT(31)
#define KWQ_ADD_FLAGS	(KWQ_ADD_POLICY_MASK | KWQ_AFTER_REPLACE | KWQ_ADD_RATE_LIMITED)

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

/* Unlock, then free and wake what @w collected. */
void kwq_unlock_and_finish(struct kwq *q, struct kwq_unlocked_work *w)
	__releases(&q->lock)
{
	bool slow = kwq_wake_slow_locked(q);

	kwq_unlock(q);
	kwq_free_stale(&w->stale);
	kwq_wake_fast(q, w->ready, slow);
}

/*
 * One add, now (@delay_ns <= 0) or after a delay, with kwq.lock held. A
 * new key takes *@fresh if the caller allocated one, or a record
 * allocated here without sleeping; if that fails, returns -EWOULDBLOCK
 * and the caller allocates one unlocked and calls again. An unused
 * *@fresh is the caller's to free. Only the first add of a key allocates.
 */
static int kwq_add_locked(struct kwq *q, const void *key, u32 len, s64 delay_ns,
			  u32 flags, gfp_t gfp, struct kwq_item **fresh,
			  struct kwq_unlocked_work *w)
{
	u32 policy = flags & KWQ_ADD_POLICY_MASK;
	struct kwq_lookup_key k;
	struct kwq_item *it;
	int ret;

	if (q->dead)
		return -EIDRM;
	if (q->shutting_down) {
		q->refused++;
		return -ESHUTDOWN;
	}
	kwq_lookup_key_init(&k, key, len);
	it = kwq_find_key_locked(q, &k);
	if (!it) {
		/* At the limit, a backoff-only record gives way to real work. */
		if (q->items.n >= q->max_items && list_empty(&q->backoff))
			return -ENOSPC;
		if (!*fresh)
			*fresh = kwq_item_new_locked(q, &k,
						     (gfp & ~__GFP_DIRECT_RECLAIM) | __GFP_NOWARN);
		if (!*fresh)
			return -EWOULDBLOCK;
		/* Nothing fails from here on: evicting now changes nothing on error. */
		if (q->items.n >= q->max_items)
			kwq_evict_backoff_locked(q, &w->stale);
		kwq_table_insert(&q->items, *fresh);
		kwq_table_check_locked(q);
		it = *fresh;
		*fresh = NULL;
	}
	kwq_item_activate_locked(q, it);
	if (flags & KWQ_ADD_RATE_LIMITED) {
		ret = kwq_add_limited_locked(q, it, &w->ready);
	} else if (delay_ns > 0) {
		q->retries++;
		ret = kwq_wait_locked(q, it, delay_ns, flags);
	} else {
		ret = kwq_add_now_locked(q, it, policy ?: q->policy, &w->ready);
	}
	trace_kwq_add(q->name, key, len, ret, delay_ns > 0 ? delay_ns : 0);
	return ret;
}

/*
 * kwq_add_locked() until it has a record: drops the lock to allocate one
 * sleeping when the allocation without sleeping failed. The lock is held
 * on return either way.
 */
int kwq_add_locked_alloc(struct kwq *q, const void *key, u32 len, s64 delay_ns,
			 u32 flags, gfp_t gfp, struct kwq_unlocked_work *w)
{
	struct kwq_item *fresh = NULL;
	int ret = kwq_add_locked(q, key, len, delay_ns, flags, gfp, &fresh, w);

	if (ret == -EWOULDBLOCK) {
		struct kwq_lookup_key k;

		kwq_unlock(q);
		kwq_lookup_key_init(&k, key, len);
		fresh = kwq_item_new(&k, gfp);
		kwq_lock(q);
		ret = fresh ? kwq_add_locked(q, key, len, delay_ns, flags, gfp, &fresh, w) :
			      -ENOMEM;
	}
	/* Someone else added the key meanwhile, or the add failed. */
	if (fresh)
		kwq_item_retire_locked(q, fresh, &w->stale);
	return ret;
}

/* Every add of one key: now (@delay_ns <= 0) or after a delay. */
static int kwq_add_common(struct kwq *q, const void *key, u32 len, s64 delay_ns,
			  u32 flags, gfp_t gfp)
{
	struct kwq_unlocked_work w;
	int ret;

	if (!kwq_key_valid(key, len) || (flags & ~KWQ_ADD_FLAGS))
		return -EINVAL;
	kwq_unlocked_work_init(&w);
	kwq_lock(q);
	ret = kwq_add_locked_alloc(q, key, len, delay_ns, flags, gfp, &w);
	kwq_unlock_and_finish(q, &w);
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
	kwq_free_stale(&stale);
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
	might_sleep();
	return kwq_add_common(q, key, len, 0, KWQ_ADD_RATE_LIMITED, q->gfp);
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

/*
 * End processing (processing -> fresh, see kwq_state.h); returns whether
 * the key was re-added meanwhile. The timer follows the oldest key being
 * processed, so it moves if that was this one.
 */
static inline bool kwq_end_processing_locked(struct kwq *q, struct kwq_item *it)
{
	bool was_oldest = q->busy.next == &it->ready;
	bool dirty = kwq_st_finish(q, it);

	if (q->processing_timeout && was_oldest)
		kwq_program_locked(q);
	it->owner = 0;
	return dirty;
}

/* Put a processing key back at the head of the queue, unprocessed. */
static void kwq_give_back_locked(struct kwq *q, struct kwq_item *it)
{
	kwq_end_processing_locked(q, it);
	kwq_ready_locked(q, it, true);
}

/*
 * Put keys that stayed processing longer than the processing timeout back
 * at the head of the queue, the oldest first (controller-runtime#798: a
 * worker that hangs must not hold its key forever), counting them in @ready
 * so that consumers are woken for them.
 */
static void kwq_expire_processing_locked(struct kwq *q, ktime_t now, unsigned int *ready)
{
	struct kwq_item *it, *last = NULL;
	unsigned int n = 0;

	if (!q->processing_timeout)
		return;
	list_for_each_entry(it, &q->busy, ready) {
		if (it->stamp + q->processing_timeout > ktime_to_ns(now))
			break;
		last = it;
		n++;
	}
	/* From the newest overdue back, each to the head: the oldest ends up first. */
	while (n--) {
		it = last;
		if (n)
			last = list_prev_entry(it, ready);
		trace_kwq_processing_expire(q->name, it->key, it->len, 0,
					    ktime_to_ns(now) - it->stamp);
		q->processing_expiries++;
		kwq_give_back_locked(q, it);
		(*ready)++;
	}
}

/**
 * kwq_run_due() - add every waiting key whose deadline has come
 * @q: queue.
 *
 * The queue's own timer calls this. A queue made with its own struct
 * kwq_clock calls it when the clock reaches the time it was asked for.
 * On a destroyed queue it does nothing.
 *
 * Context: process or softirq context.
 */
void kwq_run_due(struct kwq *q)
{
	struct timerqueue_node *node;
	struct kwq_item *it;
	unsigned int ready = 0;
	bool slow;
	ktime_t now;

	kwq_lock(q);
	if (q->dead) {
		kwq_unlock(q);
		return;
	}
	now = kwq_now(q);
	while ((node = timerqueue_getnext(&q->waiting)) && node->expires <= now) {
		u64 late = ktime_to_ns(ktime_sub(now, node->expires));
		int ret;

		it = container_of(node, struct kwq_item, wait);
		kwq_unwait_locked(q, it);
		q->fired++;
		ret = kwq_mark_dirty_locked(q, it, &ready);
		trace_kwq_fire(q->name, it->key, it->len, ret, late);
	}
	kwq_expire_processing_locked(q, now, &ready);
	/* The timer that brought us here may be spent: program the next one. */
	kwq_program_timer_locked(q, true);
	slow = kwq_wake_slow_locked(q);
	kwq_unlock(q);
	kwq_wake_fast(q, ready, slow);
}
EXPORT_SYMBOL_GPL(kwq_run_due);

static enum hrtimer_restart kwq_timer_fn(struct hrtimer *timer)
{
	kwq_run_due(container_of(timer, struct kwq, timer));
	return HRTIMER_NORESTART;
}

/*
 * Hand out the oldest ready key, stamped with a new ticket (reported in
 * @h with the queue latency, if @h is not NULL). Returns 0, -EAGAIN (may
 * wait) or error.
 */
int kwq_take_locked(struct kwq *q, void *buf, u32 cap, u32 *len, struct kwq_lease *lease,
		    struct kwq_handout *h)
{
	struct kwq_item *it;
	u64 latency, now;

	if (q->dead)
		return -EIDRM;
	it = list_first_entry_or_null(&q->ready, struct kwq_item, ready);
	if (!it)
		return kwq_more_may_come_locked(q) ? -EAGAIN : -ESHUTDOWN;
	*len = it->len;
	if (it->len > cap)
		return -EMSGSIZE;
	kwq_st_take(q, it);
	it->owner = lease ? lease->id : 0;
	it->ticket = ++q->next_ticket;
	now = kwq_stamp_now(q);
	latency = kwq_elapsed(now, it->stamp);
	kwq_hist_observe(&q->queue_latency, latency);
	if (h) {
		h->ticket = it->ticket;
		h->latency_ns = latency;
	}
	trace_kwq_get(q->name, it->key, it->len, 0, latency);
	it->stamp = now;
	if (q->processing_timeout && q->n_processing == 1)
		kwq_program_locked(q);
	q->gets++;
	kwq_key_copy(buf, it->key, it->len);
	return 0;
}

static int kwq_try_take(struct kwq *q, void *buf, u32 cap, u32 *len,
			struct kwq_lease *lease, struct kwq_handout *h)
{
	int ret;

	kwq_lock(q);
	ret = kwq_take_locked(q, buf, cap, len, lease, h);
	kwq_unlock(q);
	return ret;
}

/*
 * Sleep until woken, @deadline or @wake_at (the earliest waiting deadline,
 * KTIME_MAX for none), whichever comes first; the caller set the task
 * state. -ETIMEDOUT once @deadline has passed.
 */
static int kwq_sleep_until(ktime_t deadline, ktime_t wake_at)
{
	ktime_t expires = min(deadline, wake_at);

	if (deadline != KWQ_FOREVER && ktime_compare(ktime_get(), deadline) >= 0) {
		__set_current_state(TASK_RUNNING);
		return -ETIMEDOUT;
	}
	if (expires == KTIME_MAX)
		schedule();
	else
		schedule_hrtimeout_range(&expires, 0, HRTIMER_MODE_ABS);
	return 0;
}

/*
 * A consumer about to wait runs due deadlines itself and sleeps no later
 * than the next one: its own hrtimer wakes it straight from the timer
 * interrupt, where the queue's soft timer would first wait for softirq
 * processing (which the benchmarks showed costing milliseconds). Only one
 * sleeping consumer at a time keeps such a timer (*@keeper, claimed
 * through kwq.timer_keeper): it runs the due keys, which wakes one more
 * consumer per key made ready, so a deadline wakes one or two consumers,
 * not every sleeper. The soft timer stays armed for the rest. Returns the
 * time to wake at; queues on a test clock keep to their clock.
 */
static ktime_t kwq_consumer_timer(struct kwq *q, bool *keeper)
{
	ktime_t next = READ_ONCE(q->armed);

	if (q->clock || next == KTIME_MAX)
		return KTIME_MAX;
	if (!*keeper) {
		if (atomic_cmpxchg(&q->timer_keeper, 0, 1))
			return KTIME_MAX;
		*keeper = true;
	}
	if (ktime_compare(ktime_get(), next) >= 0) {
		kwq_run_due(q);
		next = READ_ONCE(q->armed);
	}
	return next;
}

/**
 * kwq_get_leased() - kwq_get() for a consumer that holds a lease
 * @q: queue.
 * @buf: where the key is copied.
 * @cap: size of @buf.
 * @len: set to the key's length (also on -EMSGSIZE).
 * @deadline: as for kwq_get().
 * @lease: lease the key is handed to, or NULL for none.
 * @h: set to the hand-out's ticket and queue latency, or NULL.
 *
 * Return: as kwq_get().
 */
int kwq_get_leased(struct kwq *q, void *buf, u32 cap, u32 *len, ktime_t deadline,
		   struct kwq_lease *lease, struct kwq_handout *h)
{
	DEFINE_WAIT(wait);
	bool keeper = false, slept = false;
	int ret;

	ret = kwq_try_take(q, buf, cap, len, lease, h);
	if (ret != -EAGAIN || deadline == KWQ_NOWAIT)
		return ret;

	might_sleep();
	/* Our own reference: the queue may be destroyed while we sleep. */
	kwq_get_ref(q);
	for (;;) {
		ktime_t wake_at = kwq_consumer_timer(q, &keeper);

		prepare_to_wait_exclusive(&q->get_wait, &wait, TASK_INTERRUPTIBLE);
		ret = kwq_try_take(q, buf, cap, len, lease, h);
		if (ret != -EAGAIN)
			break;
		if (slept)
			atomic64_inc(&q->consumer_wakes);
		if (signal_pending(current)) {
			ret = -ERESTARTSYS;
			break;
		}
		ret = kwq_sleep_until(deadline, wake_at);
		if (ret)
			break;
		slept = true;
	}
	finish_wait(&q->get_wait, &wait);
	if (keeper)
		atomic_set_release(&q->timer_keeper, 0);
	/* We may have consumed an exclusive wake-up meant for a key we left. */
	if (ret)
		kwq_wake(q, true);
	kwq_put(q);
	return ret;
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
 * After kwq_shutdown() the keys still queued are handed out, and while any
 * key is being processed the call waits, since that key may come back (a
 * re-add during processing, a requeue, a processing timeout, a lease that
 * ends); once nothing is queued or processing, -ESHUTDOWN is returned
 * without blocking. Waiting is interruptible and exclusive: one add wakes
 * one consumer.
 *
 * Context: process context; sleeps unless @deadline is KWQ_NOWAIT.
 * Return: 0 with the key in @buf, -EAGAIN (nothing ready, KWQ_NOWAIT),
 * -ETIMEDOUT, -ERESTARTSYS (signal), -ESHUTDOWN, -EIDRM (destroyed while
 * or before waiting), -EMSGSIZE (@cap too small; the key stays queued).
 */
int kwq_get(struct kwq *q, void *buf, u32 cap, u32 *len, ktime_t deadline)
{
	return kwq_get_leased(q, buf, cap, len, deadline, NULL, NULL);
}
EXPORT_SYMBOL_GPL(kwq_get);

/**
 * kwq_get_ticket() - kwq_get(), and the ticket of the hand-out
 * @q: queue.
 * @buf: where the key is copied.
 * @cap: size of @buf.
 * @len: set to the key's length (also on -EMSGSIZE).
 * @ticket: set to the hand-out's ticket on success: nonzero, never given
 *	to another hand-out of @q. Pass it to kwq_done_ticket() or
 *	kwq_requeue_ticket().
 * @deadline: as for kwq_get().
 *
 * Context: process context; sleeps unless @deadline is KWQ_NOWAIT.
 * Return: as kwq_get().
 */
int kwq_get_ticket(struct kwq *q, void *buf, u32 cap, u32 *len, u64 *ticket,
		   ktime_t deadline)
{
	struct kwq_handout h;
	int ret = kwq_get_leased(q, buf, cap, len, deadline, NULL, &h);

	if (!ret)
		*ticket = h.ticket;
	return ret;
}
EXPORT_SYMBOL_GPL(kwq_get_ticket);

/*
 * Find the hand-out the caller may end. @ticket, if not 0, names it: the
 * key must be processing under that ticket. Without one, a lease (a
 * /dev/kwq file) may end its own keys and unleased ones, whichever
 * hand-out is live. A kernel caller (@lease NULL) may end any key, but
 * must name the hand-out on a queue with a processing timeout, where a
 * hand-out can be taken back and given to another worker.
 */
static inline int kwq_find_processing_locked(struct kwq *q, const void *key, u32 len,
					     struct kwq_lease *lease, u64 ticket,
					     struct kwq_item **itp)
{
	struct kwq_item *it;

	if (q->dead)
		return -EIDRM;
	if (!ticket && !lease && q->processing_timeout)
		return -EINVAL;
	it = kwq_find_locked(q, key, len);
	if (!it || !(it->state & KWQ_ITEM_PROCESSING))
		return -ENOENT;
	if (ticket ? it->ticket != ticket : lease && it->owner && it->owner != lease->id)
		return -ENOENT;
	*itp = it;
	return 0;
}

/* One done with kwq.lock held; returns an enum kwq_done_result or error. */
int kwq_done_locked(struct kwq *q, const void *key, u32 len, struct kwq_lease *lease,
		    u64 ticket, struct kwq_unlocked_work *w)
{
	struct kwq_item *it;
	u64 work;
	int ret;

	if (!kwq_key_valid(key, len))
		return -EINVAL;
	ret = kwq_find_processing_locked(q, key, len, lease, ticket, &it);
	if (ret)
		return ret;
	work = kwq_since_locked(q, it->stamp);
	q->dones++;
	kwq_hist_observe(&q->work_duration, work);
	if (kwq_end_processing_locked(q, it)) {
		q->requeues++;
		kwq_ready_locked(q, it, false);
		w->ready++;
		ret = KWQ_DONE_REQUEUED;
	} else {
		ret = KWQ_DONE_FINISHED;
	}
	trace_kwq_done(q->name, it->key, it->len, ret, work);
	kwq_item_settle_locked(q, it, &w->stale);
	return ret;
}

/**
 * kwq_done_leased() - kwq_done() on behalf of a lease
 * @q: queue.
 * @key: key bytes.
 * @len: key length.
 * @lease: the caller's lease, or NULL for kernel callers (any key).
 * @ticket: the hand-out to end, or 0 (see kwq_find_processing_locked()).
 *
 * Return: as kwq_done_ticket(); -ENOENT also if another lease holds the key.
 */
int kwq_done_leased(struct kwq *q, const void *key, u32 len, struct kwq_lease *lease,
		    u64 ticket)
{
	struct kwq_unlocked_work w;
	int ret;

	kwq_unlocked_work_init(&w);
	kwq_lock(q);
	ret = kwq_done_locked(q, key, len, lease, ticket, &w);
	kwq_unlock_and_finish(q, &w);
	return ret;
}

/**
 * kwq_done() - end the processing of a key
 * @q: queue.
 * @key: key bytes.
 * @len: key length.
 *
 * A key that was added again while being processed is queued again.
 * Unlike client-go, done of a key that is not being processed changes
 * nothing (client-go queues a duplicate, kubernetes#79934). Names no
 * hand-out: it ends the key's, whoever took it. On a queue with a
 * processing timeout use kwq_done_ticket().
 *
 * Context: process or softirq context, interrupts enabled (see kwq.h).
 * Return: an enum kwq_done_result (>= 0), -ENOENT if the key is not being
 * processed, -EINVAL for a bad key or a queue with a processing timeout,
 * -EIDRM if the queue was destroyed.
 */
int kwq_done(struct kwq *q, const void *key, u32 len)
{
	return kwq_done_leased(q, key, len, NULL, 0);
}
EXPORT_SYMBOL_GPL(kwq_done);

/**
 * kwq_done_ticket() - end one hand-out of a key
 * @q: queue.
 * @key: key bytes.
 * @len: key length.
 * @ticket: the ticket kwq_get_ticket() gave, or 0 to act as kwq_done().
 *
 * Like kwq_done(), but only if the key is still processing under
 * @ticket: a worker whose key a processing timeout took back (and maybe
 * gave to another worker) gets -ENOENT and changes nothing.
 *
 * Context: process or softirq context, interrupts enabled (see kwq.h).
 * Return: as kwq_done(); -ENOENT if @ticket is not the key's live hand-out.
 */
int kwq_done_ticket(struct kwq *q, const void *key, u32 len, u64 ticket)
{
	return kwq_done_leased(q, key, len, NULL, ticket);
}
EXPORT_SYMBOL_GPL(kwq_done_ticket);

/**
 * kwq_done_get_leased() - kwq_done_get() on behalf of leases
 * @q: queue.
 * @dkey: the key to end.
 * @dlen: its length.
 * @dticket: the hand-out of @dkey to end, or 0, as for kwq_done_leased().
 * @done_result: set to the done's enum kwq_done_result once it succeeded.
 * @buf: as for kwq_get().
 * @cap: as for kwq_get().
 * @len: as for kwq_get().
 * @deadline: as for kwq_get().
 * @done_lease: the lease ending @dkey, as for kwq_done_leased().
 * @get_lease: the lease the next key goes to, or NULL for none.
 * @h: set to the new hand-out's ticket and latency, or NULL.
 *
 * Return: as kwq_done_get().
 */
int kwq_done_get_leased(struct kwq *q, const void *dkey, u32 dlen, u64 dticket,
			int *done_result, void *buf, u32 cap, u32 *len, ktime_t deadline,
			struct kwq_lease *done_lease, struct kwq_lease *get_lease,
			struct kwq_handout *h)
{
	struct kwq_unlocked_work w;
	int ret;

	kwq_unlocked_work_init(&w);
	kwq_lock(q);
	ret = kwq_done_locked(q, dkey, dlen, done_lease, dticket, &w);
	if (ret >= 0) {
		*done_result = ret;
		ret = kwq_take_locked(q, buf, cap, len, get_lease, h);
		/* A key the done queued again may be the one just taken. */
		if (!ret && w.ready)
			w.ready--;
	}
	kwq_unlock_and_finish(q, &w);
	if (ret != -EAGAIN || deadline == KWQ_NOWAIT)
		return ret;
	return kwq_get_leased(q, buf, cap, len, deadline, get_lease, h);
}

/**
 * kwq_done_get() - end a key and take the next, the two calls of a worker
 *	loop under one hold of the queue's lock
 * @q: queue.
 * @dkey: the key to end, as for kwq_done().
 * @dlen: its length.
 * @done_result: set to the done's enum kwq_done_result once it succeeded.
 * @buf: where the next key is copied, as for kwq_get().
 * @cap: size of @buf.
 * @len: set to the next key's length (also on -EMSGSIZE).
 * @deadline: as for kwq_get().
 *
 * Context: process context; sleeps unless @deadline is KWQ_NOWAIT.
 * Return: the done's error if it failed (then nothing changed and
 * *@done_result is not set); else as kwq_get().
 */
int kwq_done_get(struct kwq *q, const void *dkey, u32 dlen, int *done_result,
		 void *buf, u32 cap, u32 *len, ktime_t deadline)
{
	return kwq_done_get_leased(q, dkey, dlen, 0, done_result, buf, cap, len, deadline,
				   NULL, NULL, NULL);
}
EXPORT_SYMBOL_GPL(kwq_done_get);

/**
 * kwq_requeue_leased() - kwq_requeue() on behalf of a lease
 * @q: queue.
 * @key: key bytes.
 * @len: key length.
 * @lease: the caller's lease, or NULL for kernel callers (any key).
 * @ticket: the hand-out to give back, or 0, as for kwq_done_leased().
 *
 * Return: as kwq_requeue_ticket(); -ENOENT also if another lease holds it.
 */
int kwq_requeue_leased(struct kwq *q, const void *key, u32 len, struct kwq_lease *lease,
		       u64 ticket)
{
	struct kwq_item *it;
	bool slow;
	int ret;

	if (!kwq_key_valid(key, len))
		return -EINVAL;
	kwq_lock(q);
	ret = kwq_find_processing_locked(q, key, len, lease, ticket, &it);
	if (!ret)
		kwq_give_back_locked(q, it);
	slow = kwq_wake_slow_locked(q);
	kwq_unlock(q);
	kwq_wake_fast(q, !ret, slow);
	return ret;
}

/**
 * kwq_requeue() - give a key back unprocessed
 * @q: queue.
 * @key: key bytes.
 * @len: key length.
 *
 * For a consumer that took a key it cannot process (its copy to user space
 * failed, or its lease ended): the key goes back to the head of the queue
 * and is handed out next. It ends the processing like kwq_done() but
 * counts no done. Names no hand-out, like kwq_done().
 *
 * Context: process or softirq context, interrupts enabled (see kwq.h).
 * Return: 0, -ENOENT if the key is not being processed, -EINVAL for a bad
 * key or a queue with a processing timeout, -EIDRM if the queue was
 * destroyed.
 */
int kwq_requeue(struct kwq *q, const void *key, u32 len)
{
	return kwq_requeue_leased(q, key, len, NULL, 0);
}
EXPORT_SYMBOL_GPL(kwq_requeue);

/**
 * kwq_requeue_ticket() - give one hand-out of a key back unprocessed
 * @q: queue.
 * @key: key bytes.
 * @len: key length.
 * @ticket: the ticket kwq_get_ticket() gave, or 0 to act as kwq_requeue().
 *
 * Context: process or softirq context, interrupts enabled (see kwq.h).
 * Return: as kwq_requeue(); -ENOENT if @ticket is not the key's live
 * hand-out.
 */
int kwq_requeue_ticket(struct kwq *q, const void *key, u32 len, u64 ticket)
{
	return kwq_requeue_leased(q, key, len, NULL, ticket);
}
EXPORT_SYMBOL_GPL(kwq_requeue_ticket);

/**
 * kwq_undeliverable() - give back a hand-out that could not be delivered
 * @q: queue.
 * @key: key bytes.
 * @len: key length.
 * @h: what the get reported.
 *
 * For /dev/kwq, whose copy of a key to user space can fail after the get
 * (the caller's memory was unmapped meanwhile): the key goes back to the
 * head of the queue, its queue latency running on from when it was
 * queued. The get stays counted: counters never go down. Acts only on the
 * hand-out @h names (a processing timeout may have given it away).
 *
 * Context: process or softirq context, interrupts enabled.
 */
void kwq_undeliverable(struct kwq *q, const void *key, u32 len, const struct kwq_handout *h)
{
	struct kwq_item *it;
	bool slow;
	u64 queued_at;
	int ret;

	kwq_lock(q);
	ret = kwq_find_processing_locked(q, key, len, NULL, h->ticket, &it);
	if (!ret) {
		queued_at = it->stamp - h->latency_ns;
		kwq_give_back_locked(q, it);
		it->stamp = queued_at;
	}
	slow = kwq_wake_slow_locked(q);
	kwq_unlock(q);
	kwq_wake_fast(q, !ret, slow);
}

/**
 * kwq_lease_begin() - make a lease for a consumer of @q
 * @q: queue.
 * @lease: lease to set up.
 *
 * Context: process or softirq context.
 */
void kwq_lease_begin(struct kwq *q, struct kwq_lease *lease)
{
	kwq_lock(q);
	/* Zero means "no lease" in kwq_item.owner; 64 bits never wrap. */
	lease->id = ++q->next_lease;
	kwq_unlock(q);
}

/**
 * kwq_lease_end() - give back every key a lease still holds
 * @q: queue.
 * @lease: lease whose consumer is gone (its file was closed: it exited,
 *	crashed or was killed).
 *
 * The keys go back to the head of the queue in the order they were taken,
 * so they are handed out next; none is lost, none stays stuck processing.
 *
 * Context: process or softirq context.
 */
void kwq_lease_end(struct kwq *q, struct kwq_lease *lease)
{
	struct kwq_item *it, *prev;
	unsigned int ready = 0;
	bool slow;

	kwq_lock(q);
	/*
	 * kwq.busy is in the order keys were taken. From the newest back,
	 * each to the head of the queue: the oldest ends up first.
	 */
	list_for_each_entry_safe_reverse(it, prev, &q->busy, ready) {
		if (it->owner != lease->id)
			continue;
		trace_kwq_lease_return(q->name, it->key, it->len, 0,
				       kwq_since_locked(q, it->stamp));
		kwq_give_back_locked(q, it);
		q->lease_requeues++;
		ready++;
	}
	slow = kwq_wake_slow_locked(q);
	kwq_unlock(q);
	kwq_wake_fast(q, ready, slow);
}

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
	kwq_table_destroy(&q->items, kwq_item_free);
	while (q->spare) {
		struct kwq_item *it = q->spare;

		q->spare = it->hnext;
		kwq_item_free(it);
	}
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
 * -EINVAL (bad name, policy or limiter), -EEXIST (name taken), -ENOSPC (max_queues named
 * queues exist), -ENOMEM.
 */
struct kwq *kwq_create(const char *name, const struct kwq_attr *attr)
{
	const struct kwq_ratelimit *rl;
	struct kwq *q;
	int ret;

	might_sleep();
	if (name && !kwq_name_valid(name))
		return ERR_PTR(-EINVAL);
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
	q->gfp = attr && attr->account ? GFP_KERNEL_ACCOUNT : GFP_KERNEL;
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
	ret = kwq_table_init(&q->items, q->gfp);
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
	kwq_lock(q);
	q->dead = true;
	q->shutting_down = true;
	kwq_end_waiting_locked(q, false, &stale, NULL);
	kwq_unlock(q);
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
