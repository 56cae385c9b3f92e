/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the files of the queue core share: the layers below, the batches
 * and payloads (kwq_batch.c, kwq_payload.c) and two KUnit suites. Above
 * them only kwq_dev.c includes it, through kwq_add.h.
 * The files of the core, in the order they are meant to call, top first:
 *
 *   kwq_queue.c    creation, references, destruction, shutdown, drain, stats
 *   kwq_add.c      adds (now, after a delay, rate limited), cancel, forget
 *   kwq_add.h      every add of one key, and its start: inline in kwq_add.c,
 *                  kwq_batch.c and KWQ_IOC_ADD's handler (kwq_dev.c)
 *   kwq_handout.c  get (one wait loop), done, requeue, done-and-get, leases
 *   kwq_handout.h  a take and a done: inline in kwq_handout.c, kwq_batch.c
 *   kwq_timer.c    the waiting set, the processing timeout, the one timer
 *   kwq_wake.c     whom to wake after a change
 *   kwq_record.c   records of keys, spares, the key table's resize worker
 *   kwq_state.h    the states of a record and its transitions
 *   kwq_order.h    the order of the ready keys: one interface, a policy
 *                  per file (kwq_fifo.h, kwq_priority.c, kwq_tenant.c)
 *                  that calls nothing of the core
 *
 * Not all calls go down yet: scripts/layers.py (run by lint) lists the
 * loops of calls between files, and scripts/layers.baseline the calls
 * that make them today; a new one fails lint, and the list only shrinks.
 * Everything here is called with kwq.lock held unless it says otherwise.
 */
#ifndef _KWQ_CORE_H
#define _KWQ_CORE_H

#include <linux/ktime.h>
#include <linux/sched/clock.h>

#include "kwq_internal.h"

/*
 * The most keys one hold of kwq.lock handles: a walk over keys (shutdown,
 * destruction, a drain's flush, the timer, the processing timeout, a
 * lease's end) does this many, then lets go of the lock and goes on, so
 * no caller waits behind a walk of the whole queue. Batches take the lock
 * once per this many keys too.
 */
#define KWQ_LOCK_STEP		64

/**
 * struct kwq_hold - one hold of kwq.lock by a walk in steps
 * @start: local_clock() when the step began, or earlier in the same hold.
 * @keys: keys it handled so far; the step ends at KWQ_LOCK_STEP.
 */
struct kwq_hold {
	u64 start;
	unsigned int keys;
};

/* The hold's local_clock() instant, read once per hold of kwq.lock. */
static inline u64 kwq_local_now(struct kwq *q)
{
	lockdep_assert_held(&q->lock);
	if (!q->stamp_valid) {
		q->stamp_now = local_clock();
		q->stamp_valid = true;
	}
	return q->stamp_now;
}

/*
 * The step starts at the hold's local_clock() instant, which stamps the
 * keys it readies too (kwq_stamp_now()): one clock read, not two. An
 * instant read earlier in the hold only makes the step look longer.
 */
static inline void kwq_hold_begin(struct kwq *q, struct kwq_hold *h)
{
	h->start = kwq_local_now(q);
	h->keys = 0;
}

/* Whether the step may handle one more key. */
static inline bool kwq_hold_room(const struct kwq_hold *h)
{
	return h->keys < KWQ_LOCK_STEP;
}

/* A key as the calls below take it: its bytes and its hash, computed once. */
struct kwq_lookup_key {
	const void *key;
	u32 len;
	u32 hash;
};

static inline ktime_t kwq_clock_read(struct kwq *q)
{
	return q->clock ? q->clock->now(q->clock) : ktime_get();
}

/* The time of the current critical section; kwq.lock must be held. */
static inline ktime_t kwq_now(struct kwq *q)
{
	lockdep_assert_held(&q->lock);
	if (!q->now_valid) {
		q->now = kwq_clock_read(q);
		q->now_valid = true;
	}
	return q->now;
}

/*
 * Make @start, read before kwq.lock was taken (kwq_clock_read()), the
 * hold's instant: an add that may wait counts its delay from its own
 * start, not from after the lock. Not earlier than the instant an earlier
 * hold read, so that instants never go back from one hold to the next
 * (what the timer's run saw due stays due). kwq.lock must be held.
 */
static inline ktime_t kwq_now_from(struct kwq *q, ktime_t start)
{
	lockdep_assert_held(&q->lock);
	if (!q->now_valid) {
		q->now = max(q->now, start);
		q->now_valid = true;
	}
	return q->now;
}

/*
 * The hold's instant for an add that took kwq.lock again after dropping
 * it to allocate: the latest instant the queue used, which is no earlier
 * than the add's start (its first hold set it, kwq_now_from(), and
 * instants only move on), so its delay still counts from there.
 */
static inline ktime_t kwq_now_resume(struct kwq *q)
{
	return kwq_now_from(q, 0);
}

/*
 * The clock of kwq_item.stamp, which only ever measures durations (queue
 * latency, work duration, time processing): local_clock(), the clock of
 * the scheduler's and delay accounting's durations, a TSC read where
 * ktime_get() may have to read a slow clocksource. Stamps are compared
 * with CLOCK_MONOTONIC deadlines only under a processing timeout, and
 * a test clock must drive everything: those queues stamp with kwq_now().
 * A priority queue's ranks (kwq_rank(), kwq_order.h) compare stamps with each
 * other and with now, never with a deadline.
 * Across CPUs local_clock() may differ slightly; durations are clamped
 * at zero.
 */
static inline u64 kwq_stamp_now(struct kwq *q)
{
	if (q->clock || q->processing_timeout)
		return ktime_to_ns(kwq_now(q));
	return kwq_local_now(q);
}

/* Nanoseconds from @stamp to @now (both kwq_stamp_now()), never negative. */
static inline u64 kwq_elapsed(u64 now, u64 stamp)
{
	return now > stamp ? now - stamp : 0;
}

static inline u64 kwq_since_locked(struct kwq *q, u64 stamp)
{
	return kwq_elapsed(kwq_stamp_now(q), stamp);
}

/* kwq_queue.c */
void kwq_hold_end(struct kwq *q, const struct kwq_hold *h);

/* kwq_record.c */
struct kwq_item *kwq_item_new(struct kwq *q, const struct kwq_lookup_key *k, gfp_t gfp);
struct kwq_item *kwq_item_new_locked(struct kwq *q, const struct kwq_lookup_key *k,
				     gfp_t gfp);
void kwq_item_free(struct kwq *q, struct kwq_item *it);
void kwq_records_free(struct kwq *q);
void kwq_table_resize_locked(struct kwq *q);
bool kwq_evict_backoff_locked(struct kwq *q, struct list_head *stale);
void kwq_item_drop_locked(struct kwq *q, struct kwq_item *it, struct list_head *stale);
void kwq_item_settle_locked(struct kwq *q, struct kwq_item *it, struct list_head *stale);
void kwq_item_unbackoff_locked(struct kwq *q, struct kwq_item *it);
void kwq_free_stale(struct kwq *q, struct list_head *stale);
extern const u64 kwq_hist_bounds[KWQ_HIST_BUCKETS - 1];
extern const u8 kwq_hist_below[65];
void kwq_ready_locked(struct kwq *q, struct kwq_item *it, bool at_head);
int kwq_mark_dirty_locked(struct kwq *q, struct kwq_item *it, unsigned int *ready);
void kwq_resize_work(struct work_struct *work);
void kwq_sides_work(struct work_struct *work);

/*
 * Keys are hashed once per call (kwq_table_hash(), with the queue's own
 * secret) and the hash is kept in the record: inserting, removing and
 * moving a record to a resized table do not hash its key again. The
 * secret never changes, so single-key adds hash before they take
 * kwq.lock. Batches hash each key under the lock (they hold it for 64
 * keys anyway), and so do dones: hashing theirs before the lock measured
 * slower with two or four threads under emulation. These lookups, and
 * the histograms' count below, run once or twice per add, get and done:
 * inline, as a call costs a tenth of their instructions.
 */
static inline void kwq_lookup_key_init(struct kwq_lookup_key *k, const struct kwq *q,
				       const void *key, u32 len)
{
	k->key = key;
	k->len = len;
	k->hash = kwq_table_hash(&q->items, key, len);
}

static __always_inline struct kwq_item *kwq_find_key_locked(struct kwq *q,
							    const struct kwq_lookup_key *k)
{
	lockdep_assert_held(&q->lock);
	return kwq_table_find(&q->items, k->key, k->len, k->hash);
}

static __always_inline struct kwq_item *kwq_find_locked(struct kwq *q, const void *key,
							u32 len)
{
	struct kwq_lookup_key k;

	kwq_lookup_key_init(&k, q, key, len);
	return kwq_find_key_locked(q, &k);
}

/* Count @ns in @h: kwq_hist_below[] finds the bucket with one compare. */
static inline void kwq_hist_observe(struct kwq_hist *h, u64 ns)
{
	unsigned int i = kwq_hist_below[fls64(ns)];

	BUILD_BUG_ON(KWQ_HIST_BUCKETS - 1 != 10);
	if (i < KWQ_HIST_BUCKETS - 1 && ns > kwq_hist_bounds[i])
		i++;
	h->count[i]++;
	h->sum_ns += ns;
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

/*
 * After an insert or a removal: resize the key table if its load calls
 * for it. Inline, as the next one: every add and done of a new key runs
 * them, and they almost never have anything to do.
 */
static inline void kwq_table_check_locked(struct kwq *q)
{
	if (unlikely(kwq_table_off_size(&q->items)))
		kwq_table_resize_locked(q);
}

/*
 * A record is about to get state: if it is backoff-only, take it off the
 * backoff list. (A fresh record has no state either, but is on no list.)
 */
static inline void kwq_item_activate_locked(struct kwq *q, struct kwq_item *it)
{
	if (unlikely(!it->state && !list_empty(&it->ready)))
		kwq_item_unbackoff_locked(q, it);
}

/* kwq_wake.c, and below it the inline part of the unlock that wakes */
bool kwq_drained_locked(const struct kwq *q);
bool kwq_more_may_come_locked(const struct kwq *q);
void kwq_wake(struct kwq *q, unsigned int ready_added);
void kwq_wake_fast(struct kwq *q, unsigned int ready, bool slow);
void kwq_unlock_and_finish_all(struct kwq *q, struct kwq_unlocked_work *w)
	__releases(&q->lock);

/* Whether any state change needs the full wake-up check. */
static inline bool kwq_wake_slow_locked(const struct kwq *q)
{
	return q->shutting_down || q->drainers || q->dead;
}

/*
 * Unlock, then free and wake what @w collected. Most calls collect
 * nothing (a duplicate add, a done whose record stays a spare): those
 * only unlock, inline, and make no further call.
 */
static __always_inline void kwq_unlock_and_finish(struct kwq *q, struct kwq_unlocked_work *w)
	__releases(&q->lock)
{
	if (w->ready || w->payload || !list_empty(&w->stale) || kwq_wake_slow_locked(q)) {
		kwq_unlock_and_finish_all(q, w);
		return;
	}
	kwq_unlock(q);
}

/* kwq_timer.c */
void kwq_program_timer_locked(struct kwq *q, bool spent);
void kwq_program_locked(struct kwq *q);
void kwq_unwait_locked(struct kwq *q, struct kwq_item *it);
bool kwq_end_waiting_step_locked(struct kwq *q, bool flush, struct kwq_hold *h,
				 struct list_head *stale, unsigned int *ready);
int kwq_wait_locked(struct kwq *q, struct kwq_item *it, s64 delay_ns, u32 flags);
int kwq_debounce_locked(struct kwq *q, struct kwq_item *it, s64 delay_ns, u64 max_wait_ns);
enum hrtimer_restart kwq_timer_fn(struct hrtimer *timer);
enum hrtimer_restart kwq_rerun_fn(struct hrtimer *timer);
enum hrtimer_restart kwq_timer_hard_fn(struct hrtimer *timer);
#if IS_ENABLED(CONFIG_KUNIT)
extern unsigned int kwq_test_hard_delay_ms;
#endif
int kwq_sleep_until(ktime_t deadline, ktime_t wake_at);
ktime_t kwq_consumer_timer(struct kwq *q, bool *keeper);
bool kwq_end_processing_locked(struct kwq *q, struct kwq_item *it);
void kwq_give_back_locked(struct kwq *q, struct kwq_item *it);
void kwq_give_back_begin_locked(struct kwq *q, struct kwq_give_back *gb);
void kwq_give_back_end_locked(struct kwq *q, struct kwq_give_back *gb);
void kwq_give_back_at_locked(struct kwq *q, struct kwq_item *it, struct kwq_give_back *gb);

#endif /* _KWQ_CORE_H */
