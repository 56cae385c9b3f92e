// SPDX-License-Identifier: GPL-2.0
/*
 * kwq batches: add, get and done of many keys with the queue's lock taken
 * (and the clock read, and consumers woken) once per 64 keys rather than
 * once per key. Each key goes through the same locked step as a single-key
 * call (kwq_add.c, kwq_handout.c), in order, and a batch stops at the first key that
 * fails, so its outcome is that of the single-key calls one after the other.
 */

#include <linux/kernel.h>
#include <linux/module.h>

#include "kwq_add.h"
#include "kwq_handout.h"

/*
 * Keys handled per hold of the lock, KWQ_LOCK_STEP as every walk over
 * keys: a long batch lets others (and bottom halves, which the lock keeps
 * off) in between.
 */
#define KWQ_BATCH_LOCK_KEYS	KWQ_LOCK_STEP

/* Every KWQ_BATCH_LOCK_KEYS keys: let go of the lock, finish, take it again. */
static void kwq_batch_breathe(struct kwq *q, u32 i, struct kwq_unlocked_work *w)
	__releases(&q->lock) __acquires(&q->lock)
{
	if (!i || i % KWQ_BATCH_LOCK_KEYS)
		return;
	kwq_unlock_and_finish(q, w);
	kwq_unlocked_work_init(w);
	kwq_lock(q);
}

/**
 * kwq_add_batch() - add many keys under one lock
 * @q: queue.
 * @keys: the keys, in order.
 * @n: number of keys.
 * @policy: an enum kwq_wait_policy, as for kwq_add_policy().
 * @results: out: the enum kwq_add_result of each key carried out.
 *
 * Like kwq_add_policy() for each key in turn, stopping at the first that
 * fails; the queue's lock is taken once per 64 keys (and dropped only to
 * allocate a record or a spare side sleeping), and consumers are woken as
 * often.
 *
 * Context: process context; may sleep.
 * Return: how many keys were carried out, from the first, if any was
 * (0 for @n of 0); otherwise the first key's error, as kwq_add_policy().
 */
int kwq_add_batch(struct kwq *q, const struct kwq_key *keys, u32 n, u32 policy,
		  u32 *results)
{
	struct kwq_add_opts o = {};
	struct kwq_unlocked_work w;
	int ret = 0;
	u32 i;

	might_sleep();
	if (policy > KWQ_POLICY_STRICT)
		return -EINVAL;
	o.flags = policy;
	kwq_unlocked_work_init(&w);
	kwq_lock(q);
	for (i = 0; i < n; i++) {
		struct kwq_lookup_key k __uninitialized;	/* kwq_lookup_key_init() */

		kwq_batch_breathe(q, i, &w);
		if (!kwq_key_valid(keys[i].key, keys[i].len)) {
			ret = -EINVAL;
			break;
		}
		kwq_lookup_key_init(&k, q, keys[i].key, keys[i].len);
		ret = kwq_add_one_locked(q, &k, &o, q->gfp, &w);
		if (ret < 0)
			break;
		results[i] = ret;
	}
	kwq_unlock_and_finish(q, &w);
	return i ? i : ret;
}
EXPORT_SYMBOL_GPL(kwq_add_batch);

/**
 * kwq_done_batch_leased() - kwq_done_batch() on behalf of a lease
 * @q: queue.
 * @keys: the keys, in order.
 * @n: number of keys.
 * @lease: the caller's lease, or NULL for kernel callers (any key).
 * @results: out: the enum kwq_done_result of each key carried out.
 *
 * Return: as kwq_done_batch(); -ENOENT also if another lease holds the
 * first key.
 */
int kwq_done_batch_leased(struct kwq *q, const struct kwq_key *keys, u32 n,
			  struct kwq_lease *lease, u32 *results)
{
	struct kwq_unlocked_work w;
	int ret = 0;
	u32 i;

	kwq_unlocked_work_init(&w);
	kwq_lock(q);
	for (i = 0; i < n; i++) {
		kwq_batch_breathe(q, i, &w);
		ret = kwq_done_locked(q, keys[i].key, keys[i].len, lease, keys[i].ticket, &w);
		if (ret < 0)
			break;
		results[i] = ret;
	}
	kwq_unlock_and_finish(q, &w);
	return i ? i : ret;
}

/**
 * kwq_done_batch() - end the processing of many keys under one lock
 * @q: queue.
 * @keys: the keys, in order.
 * @n: number of keys.
 * @results: out: the enum kwq_done_result of each key carried out.
 *
 * Like kwq_done_ticket() for each key in turn (with the entry's ticket),
 * stopping at the first that fails, with the queue's lock taken once per
 * 64 keys.
 *
 * Context: process or softirq context, interrupts enabled (see kwq.h).
 * Return: how many keys were carried out, from the first, if any was
 * (0 for @n of 0); otherwise the first key's error, as kwq_done().
 */
int kwq_done_batch(struct kwq *q, const struct kwq_key *keys, u32 n, u32 *results)
{
	return kwq_done_batch_leased(q, keys, n, NULL, results);
}
EXPORT_SYMBOL_GPL(kwq_done_batch);

/*
 * Take ready keys under one lock, without waiting for keys, packed into
 * @buf; entry i accepts keys of up to @caps[i] bytes (any size if @caps
 * is NULL). With @may_sleep, the lock is let go of to sleep for a side
 * when none could be had without sleeping. Returns how many were taken;
 * *@err says why fewer than @n: 0 when @buf is full, else as kwq_get()
 * with KWQ_NOWAIT (-ENOMEM as without it if @may_sleep), and on -EMSGSIZE
 * the length of the key that did not fit is in @out[return value].len.
 */
static u32 kwq_take_batch(struct kwq *q, struct kwq_key *out, const u32 *caps, u32 n,
			  u8 *buf, u32 size, struct kwq_lease *lease, u64 *latency,
			  bool may_sleep, int *err)
{
	u32 i, cap = KWQ_KEY_MAX, off = 0, len = 0, want;
	struct kwq_handout h = {};
	int ret = 0;

	kwq_lock(q);
	for (i = 0; i < n; i++) {
		if (!(i % KWQ_BATCH_LOCK_KEYS)) {
			if (i) {
				kwq_unlock(q);
				kwq_lock(q);
			}
			/* The chunk's sides first: short of memory, it takes nothing. */
			want = min_t(u64, min(n - i, KWQ_BATCH_LOCK_KEYS), q->n_queued);
			ret = kwq_side_reserve_locked(q, want, may_sleep ? q->gfp : 0);
			if (ret)
				break;
		}
		if (caps)
			cap = caps[i];
		ret = kwq_take_locked(q, buf + off, min(cap, size - off), &len, lease, &h);
		if (ret == -ENOMEM && may_sleep) {
			/*
			 * Keys came while the reservation slept: sleep for a
			 * side for this one, then again.
			 */
			ret = kwq_side_refill_locked(q, q->gfp);
			if (!ret) {
				i--;
				continue;
			}
		}
		if (ret)
			break;
		out[i].key = buf + off;
		out[i].len = len;
		out[i].ticket = h.ticket;
		if (latency)
			latency[i] = h.latency_ns;
		off += len;
	}
	kwq_unlock(q);
	if (ret == -EMSGSIZE) {
		if (len <= cap)
			ret = 0;	/* too big for what is left of @buf only */
		else
			out[i].len = len;
	}
	*err = ret;
	return i;
}

/**
 * kwq_get_batch_leased() - kwq_get_batch() for /dev/kwq
 * @q: queue.
 * @out: out: the keys taken, pointing into @buf.
 * @caps: the largest key each entry of @out accepts, or NULL for any.
 * @n: number of entries, at least 1.
 * @buf: where the keys are copied, one after the other.
 * @size: size of @buf, at least KWQ_KEY_MAX.
 * @deadline: how long to wait for the first key, as for kwq_get().
 * @lease: lease the keys are handed to, or NULL for none.
 * @latency: out: the queue latency each get recorded (for
 *	kwq_undeliverable()), or NULL.
 * @err: out: why fewer than @n keys were taken: 0 when @buf is full,
 *	else as kwq_get(); on -EMSGSIZE the key's length is in the @out
 *	entry after the last taken.
 *
 * Return: how many keys were taken.
 */
u32 kwq_get_batch_leased(struct kwq *q, struct kwq_key *out, const u32 *caps, u32 n,
			 void *buf, u32 size, ktime_t deadline, struct kwq_lease *lease,
			 u64 *latency, int *err)
{
	struct kwq_handout h = {};
	u32 len = 0, taken;

	/* No room for payloads: their consumers get one key at a time. */
	if (q->payload_max) {
		*err = -EOPNOTSUPP;
		return 0;
	}
	taken = kwq_take_batch(q, out, caps, n, buf, size, lease, latency,
			       deadline != KWQ_NOWAIT, err);
	if (taken || *err != -EAGAIN || deadline == KWQ_NOWAIT)
		return taken;
	*err = kwq_get_leased(q, buf, min_t(u32, caps ? caps[0] : KWQ_KEY_MAX, size), &len,
			      deadline, lease, &h);
	out[0].key = buf;
	out[0].len = len;
	if (*err)
		return 0;
	out[0].ticket = h.ticket;
	if (latency)
		latency[0] = h.latency_ns;
	/*
	 * Most waits end for one key: with no room for more (the entry is
	 * full: no error), or none more ready, no second lock hold. A look
	 * without the lock sees what one under it would have seen an instant
	 * earlier; keys readied since come with the next get.
	 */
	if (n == 1) {
		*err = 0;
		return 1;
	}
	if (!READ_ONCE(q->n_queued)) {
		*err = -EAGAIN;
		return 1;
	}
	return 1 + kwq_take_batch(q, out + 1, caps ? caps + 1 : NULL, n - 1, (u8 *)buf + len,
				  size - len, lease, latency ? latency + 1 : NULL, true, err);
}

/**
 * kwq_get_batch() - take several keys, waiting for the first if needed
 * @q: queue.
 * @out: out: the keys taken, each pointing into @buf.
 * @n: most keys to take.
 * @buf: where the keys are copied, one after the other.
 * @size: size of @buf, at least KWQ_KEY_MAX (so any key fits).
 * @deadline: how long to wait for the first key, as for kwq_get().
 *
 * Waits like kwq_get() until a key is ready, then takes the keys that are
 * ready, in FIFO order, up to @n or as many as fit in @buf, taking the
 * queue's lock once per 64 keys. Each must be ended with kwq_done() (or
 * kwq_done_batch()); each @out entry's ticket names its hand-out, for
 * kwq_done_ticket() or kwq_done_batch().
 *
 * Context: process context; sleeps unless @deadline is KWQ_NOWAIT.
 * Return: how many keys were taken (at least 1), or an error as kwq_get();
 * -EINVAL if @n is 0 or @size is below KWQ_KEY_MAX; -EOPNOTSUPP on a
 * queue with payloads (use kwq_get_payload()), where nothing is taken.
 */
int kwq_get_batch(struct kwq *q, struct kwq_key *out, u32 n, void *buf, u32 size,
		  ktime_t deadline)
{
	u32 taken;
	int err;

	if (!n || size < KWQ_KEY_MAX)
		return -EINVAL;
	taken = kwq_get_batch_leased(q, out, NULL, n, buf, size, deadline, NULL, NULL, &err);
	return taken ?: err;
}
EXPORT_SYMBOL_GPL(kwq_get_batch);
