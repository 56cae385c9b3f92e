// SPDX-License-Identifier: GPL-2.0
/*
 * kwq timer: the waiting set (add-after deadlines, kwq.waiting) and the
 * processing timeout, both served by one soft hrtimer per queue (or the
 * queue's own struct kwq_clock), armed for the earliest of the next
 * deadline and the oldest processing key's expiry; the end of processing,
 * which moves that expiry; and the sleep of a consumer that keeps its own
 * timer for the next deadline.
 */

#include <linux/hrtimer.h>
#include <linux/module.h>
#include <linux/sched.h>

#include "kwq_compat.h"
#include "kwq_core.h"
#include "kwq_state.h"
#include "kwq_trace.h"

/*
 * Point the timer at the earliest waiting deadline, or at the moment the
 * oldest key being processed overstays the processing timeout, whichever
 * comes first, if that changed (or always, when the timer is @spent).
 */
void kwq_program_timer_locked(struct kwq *q, bool spent)
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

void kwq_program_locked(struct kwq *q)
{
	kwq_program_timer_locked(q, false);
}

void kwq_unwait_locked(struct kwq *q, struct kwq_item *it)
{
	kwq_st_unwait(q, it);
}

/*
 * Empty the waiting set: queue every waiting key now (@flush), or drop
 * the entries and retire records left without state (to the spares, or to
 * @stale for the caller to free once unlocked, linked through their
 * unused ready link).
 */
void kwq_end_waiting_locked(struct kwq *q, bool flush, struct list_head *stale,
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
int kwq_wait_locked(struct kwq *q, struct kwq_item *it, s64 delay_ns, u32 flags)
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

enum hrtimer_restart kwq_timer_fn(struct hrtimer *timer)
{
	kwq_run_due(container_of(timer, struct kwq, timer));
	return HRTIMER_NORESTART;
}

/*
 * Sleep until woken, @deadline or @wake_at (the earliest waiting deadline,
 * KTIME_MAX for none), whichever comes first; the caller set the task
 * state. -ETIMEDOUT once @deadline has passed.
 */
int kwq_sleep_until(ktime_t deadline, ktime_t wake_at)
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
ktime_t kwq_consumer_timer(struct kwq *q, bool *keeper)
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

/*
 * End processing (processing -> fresh, see kwq_state.h); returns whether
 * the key was re-added meanwhile. The timer follows the oldest key being
 * processed, so it moves if that was this one.
 */
bool kwq_end_processing_locked(struct kwq *q, struct kwq_item *it)
{
	bool was_oldest = q->busy.next == &it->ready;
	bool dirty = kwq_st_finish(q, it);

	if (q->processing_timeout && was_oldest)
		kwq_program_locked(q);
	it->owner = 0;
	return dirty;
}

/* Put a processing key back at the head of the queue, unprocessed. */
void kwq_give_back_locked(struct kwq *q, struct kwq_item *it)
{
	kwq_end_processing_locked(q, it);
	kwq_ready_locked(q, it, true);
}
