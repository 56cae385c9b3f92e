// SPDX-License-Identifier: GPL-2.0
/*
 * kwq hand-outs: get (one loop for every consumer that waits), done,
 * requeue, done-and-get, and leases. Each get stamps the record with a
 * ticket; done, requeue and give-back act only on the hand-out they name.
 */

#include <linux/module.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/wait.h>

#include "kwq_compat.h"
#include "kwq_core.h"
#include "kwq_handout.h"

/* Whether a get that found @ret may sleep for a key (none) or a side (no spare one). */
static bool kwq_may_wait_for(int ret)
{
	return ret == -EAGAIN || ret == -ENOMEM;
}

/* One look of the wait loop: -ECANCELED once @stop is set, else a take. */
static __always_inline int kwq_try_take(struct kwq *q, void *buf, u32 cap, u32 *len,
					struct kwq_lease *lease, struct kwq_handout *h,
					const u8 *stop)
{
	int ret;

	if (stop && READ_ONCE(*stop))
		return -ECANCELED;
	kwq_lock(q);
	ret = kwq_take_locked(q, buf, cap, len, lease, h);
	kwq_unlock(q);
	return ret;
}

/*
 * kwq_try_take() for the looks of a consumer that waits: out of line, so
 * that the take is inline twice, not three times (kwq_get_wait()'s first
 * look has it inline).
 */
static noinline int kwq_try_take_again(struct kwq *q, void *buf, u32 cap, u32 *len,
				       struct kwq_lease *lease, struct kwq_handout *h,
				       const u8 *stop)
{
	return kwq_try_take(q, buf, cap, len, lease, h, stop);
}

/*
 * The rest of kwq_get_wait() once its first look found no key (or no
 * spare side): out of line, so that a get that finds a key sets up no
 * wait entry.
 */
static noinline int kwq_get_sleep(struct kwq *q, void *buf, u32 cap, u32 *len, ktime_t deadline,
				  struct kwq_lease *lease, struct kwq_handout *h,
				  const u8 *stop)
{
	DEFINE_WAIT(wait);
	bool keeper = false, slept = false;
	int ret;

	might_sleep();
	/* Our own reference: the queue may be destroyed while we sleep. */
	kwq_get_ref(q);
	for (;;) {
		ktime_t wake_at = kwq_consumer_timer(q, &keeper);

		prepare_to_wait_exclusive(&q->get_wait, &wait, TASK_INTERRUPTIBLE);
		ret = kwq_try_take_again(q, buf, cap, len, lease, h, stop);
		if (unlikely(ret == -ENOMEM)) {
			/* Sleep for a side as a running task, then look again. */
			__set_current_state(TASK_RUNNING);
			ret = kwq_side_refill(q, q->gfp);
			if (ret)
				break;
			continue;
		}
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
		/*
		 * Most wakes are for a key: look before arming anything again
		 * (a wake that finds none goes round the loop, counted there).
		 */
		ret = kwq_try_take_again(q, buf, cap, len, lease, h, stop);
		if (!kwq_may_wait_for(ret))
			break;
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
 * kwq_get_wait() - the wait loop of every consumer: get, done-and-get, pool
 * @q: queue.
 * @buf: where the key is copied.
 * @cap: size of @buf.
 * @len: set to the key's length (also on -EMSGSIZE).
 * @deadline: as for kwq_get().
 * @lease: lease the key is handed to, or NULL for none.
 * @h: set to the hand-out's ticket and queue latency, or NULL.
 * @stop: NULL, or a flag that ends the wait with -ECANCELED once set
 *	(the worker pool's; whoever sets it wakes kwq.get_wait).
 *
 * Context: process context; sleeps unless @deadline is KWQ_NOWAIT.
 * Return: as kwq_get(), and -ECANCELED.
 */
int kwq_get_wait(struct kwq *q, void *buf, u32 cap, u32 *len, ktime_t deadline,
		 struct kwq_lease *lease, struct kwq_handout *h, const u8 *stop)
{
	int ret;

	ret = kwq_try_take(q, buf, cap, len, lease, h, stop);
	/* No key, or no spare side without sleeping: the loop may sleep for either. */
	if (!kwq_may_wait_for(ret) || deadline == KWQ_NOWAIT)
		return ret;
	return kwq_get_sleep(q, buf, cap, len, deadline, lease, h, stop);
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
	return kwq_get_wait(q, buf, cap, len, deadline, lease, h, NULL);
}

/* For kunit/kwq_bound_test.c; else /dev/kwq's only. */
#if IS_ENABLED(CONFIG_KUNIT)
EXPORT_SYMBOL_GPL(kwq_get_leased);
#endif

/**
 * kwq_get() - take the next key, waiting for one if needed
 * @q: queue.
 * @buf: where the key is copied.
 * @cap: size of @buf.
 * @len: set to the key's length (also on -EMSGSIZE).
 * @deadline: absolute CLOCK_MONOTONIC time to give up at; KWQ_NOWAIT
 *	never blocks, KWQ_FOREVER has no timeout. See kwq_deadline_after().
 *
 * Keys come out in FIFO order (on a priority queue, by the rank of
 * Documentation/kwq-priorities.rst) and are marked processing until
 * kwq_done().
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
 * or before waiting), -EMSGSIZE (@cap too small; the key stays queued),
 * -ENOMEM (no memory for the hand-out's side, struct kwq_side: with
 * KWQ_NOWAIT, none without sleeping; the key stays queued).
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
	struct kwq_handout h = {};
	int ret = kwq_get_leased(q, buf, cap, len, deadline, NULL, &h);

	if (!ret)
		*ticket = h.ticket;
	return ret;
}
EXPORT_SYMBOL_GPL(kwq_get_ticket);

/**
 * kwq_get_payload() - kwq_get_ticket(), and the key's payload
 * @q: queue.
 * @buf: where the key is copied.
 * @cap: size of @buf.
 * @len: set to the key's length (also on -EMSGSIZE).
 * @pbuf: where the key's payload is copied, or NULL to copy nothing.
 * @pcap: size of @pbuf.
 * @plen: set to the payload's length, 0 for a key without one (also on
 *	-EMSGSIZE).
 * @ticket: set to the hand-out's ticket on success, or NULL.
 * @deadline: as for kwq_get().
 *
 * On a queue made with a payload limit (kwq_attr.payload_max) each key
 * carries the payload of the latest add that gave it one. The record
 * keeps it while the key is processing, so a key given back (requeue,
 * processing timeout) runs again with it, and an add meanwhile replaces
 * it for the next run; done drops it unless the key is queued or waiting
 * again. Documentation/kwq-payloads.rst has the rules.
 *
 * Context: process context; sleeps unless @deadline is KWQ_NOWAIT.
 * Return: as kwq_get(); -EMSGSIZE also if @pbuf is not NULL and the
 * payload is longer than @pcap (the key stays queued).
 */
int kwq_get_payload(struct kwq *q, void *buf, u32 cap, u32 *len, void *pbuf, u32 pcap,
		    u32 *plen, u64 *ticket, ktime_t deadline)
{
	struct kwq_handout h = { .payload_want = pbuf, .payload_cap = pcap };
	int ret = kwq_get_leased(q, buf, cap, len, deadline, NULL, &h);

	if (!ret || ret == -EMSGSIZE)
		*plen = h.payload_len;
	if (ret)
		return ret;
	if (h.payload) {
		memcpy(pbuf, h.payload->data, h.payload->len);
		kwq_payload_put(h.payload);
	}
	if (ticket)
		*ticket = h.ticket;
	return 0;
}
EXPORT_SYMBOL_GPL(kwq_get_payload);

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

	/* No room for the next key's payload: refused before the done. */
	if (q->payload_max)
		return -EOPNOTSUPP;
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
	/* The done stands; the get goes on alone, with a side it may sleep for. */
	if (ret != -ENOMEM && (ret != -EAGAIN || deadline == KWQ_NOWAIT))
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
 * *@done_result is not set); else as kwq_get(). -EOPNOTSUPP, with nothing
 * done, on a queue with payloads: there use kwq_done_ticket() and
 * kwq_get_payload().
 */
int kwq_done_get(struct kwq *q, const void *dkey, u32 dlen, int *done_result,
		 void *buf, u32 cap, u32 *len, ktime_t deadline)
{
	return kwq_done_get_leased(q, dkey, dlen, 0, done_result, buf, cap, len, deadline,
				   NULL, NULL, NULL);
}
EXPORT_SYMBOL_GPL(kwq_done_get);

/*
 * Give a hand-out back to the head of the queue: the one @ticket names,
 * or with 0 as kwq_find_processing_locked() says. With @waited_ns, the
 * queue latency the get recorded, the key's latency runs on from when it
 * was first queued instead of starting again.
 */
static int kwq_give_back_key(struct kwq *q, const void *key, u32 len, struct kwq_lease *lease,
			     u64 ticket, const u64 *waited_ns)
{
	struct kwq_item *it;
	u64 queued_at = 0;
	bool slow;
	int ret;

	kwq_lock(q);
	ret = kwq_find_processing_locked(q, key, len, lease, ticket, &it);
	if (!ret) {
		if (waited_ns)
			queued_at = it->stamp - *waited_ns;
		kwq_give_back_locked(q, it);
		/*
		 * Never later than the ready time the give-back chose: on a
		 * priority queue that is the one of the key it went before,
		 * and each level must stay in ready-time order.
		 */
		if (waited_ns)
			it->stamp = min(it->stamp, queued_at);
	}
	slow = kwq_wake_slow_locked(q);
	kwq_unlock(q);
	kwq_wake_fast(q, !ret, slow);
	return ret;
}

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
	if (!kwq_key_valid(key, len))
		return -EINVAL;
	return kwq_give_back_key(q, key, len, lease, ticket, NULL);
}

/**
 * kwq_requeue() - give a key back unprocessed
 * @q: queue.
 * @key: key bytes.
 * @len: key length.
 *
 * For a consumer that took a key it cannot process (its copy to user space
 * failed, or its lease ended): the key goes back to the head of the queue
 * (of its priority, on a priority queue) and is handed out next among
 * them. It ends the processing like kwq_done() but
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
	kwq_give_back_key(q, key, len, NULL, h->ticket, &h->latency_ns);
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
	INIT_LIST_HEAD(&lease->busy.items);
	RB_CLEAR_NODE(&lease->busy.node);
}

/* For kunit/kwq_bound_test.c; else /dev/kwq's only. */
#if IS_ENABLED(CONFIG_KUNIT)
EXPORT_SYMBOL_GPL(kwq_lease_begin);
#endif

/**
 * kwq_lease_end() - give back every key a lease still holds
 * @q: queue.
 * @lease: lease whose consumer is gone (its file was closed: it exited,
 *	crashed or was killed).
 *
 * The keys go back to the head of the queue (of their priorities, on a
 * priority queue) in the order they were taken, so they are handed out
 * next among them; none is lost, none stays stuck processing.
 * Only the lease's own keys are visited, KWQ_LOCK_STEP per hold of the
 * lock: between holds a consumer may already get the keys given back so
 * far (the oldest), and later ones join them right behind. On a tenant
 * queue, where each key given back goes to the head of its tenant's keys
 * and its tenant to the head of the rotation, they go newest first, so
 * the oldest is handed out first.
 *
 * Context: process or softirq context.
 */
void kwq_lease_end(struct kwq *q, struct kwq_lease *lease)
{
	kwq_lease_end_ctx(q, lease, false);
}

/*
 * kwq_lease_end(), giving up the CPU between holds if @may_sleep (a
 * /dev/kwq file's release, in process context).
 */
void kwq_lease_end_ctx(struct kwq *q, struct kwq_lease *lease, bool may_sleep)
{
	struct kwq_give_back gb;
	struct kwq_item *it;
	struct kwq_hold h;
	unsigned int ready;
	bool more, slow;

	kwq_lock(q);
	kwq_give_back_begin_locked(q, &gb);
	for (;;) {
		kwq_hold_begin(q, &h);
		ready = 0;
		/* Oldest first, each right behind the one before. */
		while (kwq_hold_room(&h) && !list_empty(&lease->busy.items)) {
			it = kwq_order_gives_back_at_head(&q->order) ?
			     list_last_entry(&lease->busy.items, struct kwq_item, ready) :
			     list_first_entry(&lease->busy.items, struct kwq_item, ready);
			trace_kwq_lease_return(q->name, it->key, it->len, 0,
					       kwq_since_locked(q, it->stamp));
			kwq_give_back_at_locked(q, it, &gb);
			q->lease_requeues++;
			ready++;
			h.keys++;
		}
		more = !list_empty(&lease->busy.items);
		if (!more)
			kwq_give_back_end_locked(q, &gb);
		kwq_hold_end(q, &h);
		slow = kwq_wake_slow_locked(q);
		kwq_unlock(q);
		kwq_wake_fast(q, ready, slow);
		if (!more)
			break;
		if (may_sleep)
			cond_resched();
		kwq_lock(q);
	}
}

/* For kunit/kwq_bound_test.c; else /dev/kwq's only. */
#if IS_ENABLED(CONFIG_KUNIT)
EXPORT_SYMBOL_GPL(kwq_lease_end);
#endif
