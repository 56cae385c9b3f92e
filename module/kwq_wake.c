// SPDX-License-Identifier: GPL-2.0
/*
 * kwq wake-ups: whom a change under kwq.lock concerns, woken after the
 * lock is dropped. Consumers in kwq_get() are exclusive waiters on
 * kwq.get_wait (one per key made ready); drainers wait on kwq.drain_wait.
 */

#include <linux/poll.h>
#include <linux/sched.h>
#include <linux/wait.h>

#include "kwq_compat.h"
#include "kwq_core.h"
#include "kwq_payload.h"
#include "kwq_state.h"

/*
 * Consumers' wake-ups carry the poll mask they make true, as eventfd's and
 * timerfd's do, so that an epoll set waiting for other events is not woken.
 */
#define KWQ_POLL_READABLE	poll_to_key(EPOLLIN | EPOLLRDNORM)

/* True when nothing is queued and nothing is being processed. */
bool kwq_drained_locked(const struct kwq *q)
{
	return !q->n_queued && !q->n_processing && !q->flushing;
}

/*
 * After shutdown a key can still become ready while any key is being
 * processed: a key re-added meanwhile is queued again by its done, and
 * a key whose lease ends, whose processing timeout fires or whose holder
 * requeues it goes back to the head. Consumers wait for those instead of
 * leaving early and stranding them (client-go returns "shutdown" as soon
 * as the list is momentarily empty). A drain's flush of the waiting
 * keys, which runs in steps, brings more too (kwq.flushing).
 */
bool kwq_more_may_come_locked(const struct kwq *q)
{
	return !q->shutting_down || q->n_processing || q->flushing;
}

/*
 * Wake whoever a state change concerns. Called after the change, with the
 * lock dropped; @ready_added says how many keys were made ready.
 */
void kwq_wake(struct kwq *q, unsigned int ready_added)
{
	bool ended, drained, ready;

	kwq_lock(q);
	ready = q->n_queued;
	ended = q->dead || (!q->n_queued && !kwq_more_may_come_locked(q));
	drained = q->drainers && (q->dead || kwq_drained_locked(q));
	kwq_unlock(q);

	if (ended)
		__wake_up(&q->get_wait, TASK_NORMAL, 0, KWQ_POLL_READABLE);
	else if (ready_added && ready)
		__wake_up(&q->get_wait, TASK_NORMAL, ready_added, KWQ_POLL_READABLE);
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
void kwq_wake_fast(struct kwq *q, unsigned int ready, bool slow)
{
	if (slow)
		kwq_wake(q, ready);
	else if (ready && wq_has_sleeper(&q->get_wait))
		__wake_up(&q->get_wait, TASK_NORMAL, ready, KWQ_POLL_READABLE);
}

/*
 * kwq_unlock_and_finish() of a call that collected something, or that
 * found the queue in a state that needs the full wake-up check.
 */
void kwq_unlock_and_finish_all(struct kwq *q, struct kwq_unlocked_work *w)
	__releases(&q->lock)
{
	bool slow = kwq_wake_slow_locked(q);

	kwq_unlock(q);
	if (!list_empty(&w->stale))
		kwq_free_stale(q, &w->stale);
	if (w->payload)
		kwq_payload_put(w->payload);
	if (w->ready || slow)
		kwq_wake_fast(q, w->ready, slow);
}
