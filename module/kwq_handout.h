/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The steps of a hand-out with kwq.lock held, a take and a done, inline
 * in the single-key calls (kwq_handout.c) and in the batches' loops
 * (kwq_batch.c): a call each saved on every key of a get or done batch.
 */
#ifndef _KWQ_HANDOUT_H
#define _KWQ_HANDOUT_H

#include "kwq_core.h"
#include "kwq_payload.h"
#include "kwq_state.h"
#include "kwq_trace.h"

/*
 * Hand out the next ready key in the queue's order (kwq_order_next()),
 * stamped with a new ticket (reported in @h with the queue latency, if @h
 * is not NULL). Returns 0, -EAGAIN (may wait), -ENOMEM (no spare side
 * could be had without sleeping: kwq_side_refill(), then again) or error.
 */
static __always_inline int kwq_take_locked(struct kwq *q, void *buf, u32 cap, u32 *len,
					   struct kwq_lease *lease, struct kwq_handout *h)
	__must_hold(&q->lock)
{
	struct kwq_item *it;
	u64 latency, now;
	u32 plen;

	if (q->dead)
		return -EIDRM;
	it = kwq_order_next(&q->order);
	if (!it)
		return kwq_more_may_come_locked(q) ? -EAGAIN : -ESHUTDOWN;
	*len = it->len;
	plen = kwq_payload_len(q->payload_max, it);
	if (h)
		h->payload_len = plen;
	if (it->len > cap || (h && h->payload_want && plen > h->payload_cap))
		return -EMSGSIZE;
	/* A processing key needs a side (one that waits has it already). */
	if (!it->side && !kwq_side_ensure_locked(q))
		return -ENOMEM;
	/* The record keeps its own reference: a give-back runs with it. */
	if (h && h->payload_want && plen) {
		h->payload = *kwq_payload_slot(it);
		refcount_inc(&h->payload->ref);
	}
	now = kwq_stamp_now(q);
	latency = kwq_elapsed(now, it->stamp);
	kwq_st_take(q, it, now, lease ? &lease->busy : &q->unleased);
	kwq_hist_observe(&q->queue_latency, latency);
	if (h) {
		h->ticket = kwq_item_ticket(it);
		h->latency_ns = latency;
	}
	trace_kwq_get(q->name, it->key, it->len, 0, latency);
	if (q->processing_timeout && q->n_processing == 1)
		kwq_program_locked(q);
	q->gets++;
	kwq_key_copy(buf, it->key, it->len);
	return 0;
}

/*
 * Find the hand-out the caller may end. A lease (a /dev/kwq file) may end
 * its own keys and unleased ones; a kernel caller (@lease NULL), any key.
 * @ticket, if not 0, also names the hand-out: the key must be processing
 * under that ticket. It narrows what a caller may end, never widens it.
 * A kernel caller must name the hand-out on a queue with a processing
 * timeout, where a hand-out can be taken back and given to another worker.
 */
static __always_inline int kwq_find_processing_locked(struct kwq *q, const void *key,
						      u32 len, struct kwq_lease *lease,
						      u64 ticket, struct kwq_item **itp)
	__must_hold(&q->lock)
{
	struct kwq_item *it;

	if (q->dead)
		return -EIDRM;
	if (!ticket && !lease && q->processing_timeout)
		return -EINVAL;
	it = kwq_find_locked(q, key, len);
	if (!it || !(it->state & KWQ_ITEM_PROCESSING))
		return -ENOENT;
	if (ticket && kwq_item_ticket(it) != ticket)
		return -ENOENT;
	if (lease && it->side->holder != &q->unleased && it->side->holder != &lease->busy)
		return -ENOENT;
	*itp = it;
	return 0;
}

/*
 * End a done's processing: inline on a queue without a processing
 * timeout, whose timer does not follow the keys being processed; on the
 * others kwq_end_processing_locked() also moves the timer.
 */
static __always_inline bool kwq_done_finish_locked(struct kwq *q, struct kwq_item *it)
	__must_hold(&q->lock)
{
	if (q->processing_timeout)
		return kwq_end_processing_locked(q, it);
	return kwq_st_finish(q, it);
}

/* One done with kwq.lock held; returns an enum kwq_done_result or error. */
static __always_inline int kwq_done_locked(struct kwq *q, const void *key, u32 len,
					   struct kwq_lease *lease, u64 ticket,
					   struct kwq_unlocked_work *w)
	__must_hold(&q->lock)
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
	if (kwq_done_finish_locked(q, it)) {
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

#endif /* _KWQ_HANDOUT_H */
