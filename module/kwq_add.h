/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Every add of one key (kwq_add_common(), inline in the exported adds and
 * in KWQ_IOC_ADD's handler), and the start of every add with kwq.lock
 * held, inline there and in the add batch's loop: the queue's state, the
 * key's lookup and the duplicate. A duplicate, the commonest add of a
 * busy producer, ends here without a call; every other add goes on in
 * kwq_add_locked_alloc() (kwq_add.c) with the record found.
 */
#ifndef _KWQ_ADD_H
#define _KWQ_ADD_H

#include "kwq_core.h"
#include "kwq_payload.h"
#include "kwq_trace.h"

/* Internal flag of an add (kwq_add.c): the delay comes from the limiter. */
#define KWQ_ADD_RATE_LIMITED	BIT(31)

#define KWQ_ADD_FLAGS	(KWQ_ADD_POLICY_MASK | KWQ_AFTER_REPLACE | KWQ_AFTER_DEBOUNCE | \
			 KWQ_ADD_RATE_LIMITED)

/* An add that may wait: after a delay, or after the limiter's. */
static __always_inline bool kwq_add_may_wait(const struct kwq_add_opts *o)
{
	return o->delay_ns > 0 || (o->flags & KWQ_ADD_RATE_LIMITED);
}

/*
 * An add that may wait reads the instant it counts its delay from as it
 * begins, before its key is hashed and kwq.lock taken, so that neither
 * the work before the lock nor the wait for it stretches the delay
 * (client-go's AddAfter() reads its clock on entry too); once it holds
 * the lock, that instant is the hold's (kwq_now_from()), and so it is in
 * each hold it takes again after dropping the lock to allocate sleeping
 * (kwq_add_locked_alloc()). An add now reads no clock.
 */
struct kwq_add_start {
	bool may_wait;
	ktime_t at;
};

static __always_inline void kwq_add_start_init(struct kwq *q, const struct kwq_add_opts *o,
					       struct kwq_add_start *s)
{
	s->may_wait = kwq_add_may_wait(o);
	s->at = s->may_wait ? kwq_clock_read(q) : 0;
}

static __always_inline void kwq_add_lock(struct kwq *q, const struct kwq_add_start *s)
	__acquires(&q->lock)
{
	kwq_lock(q);
	if (s->may_wait)
		kwq_now_from(q, s->at);
}

int kwq_add_locked_alloc(struct kwq *q, const struct kwq_lookup_key *k, struct kwq_item *it,
			 const struct kwq_add_opts *o, gfp_t gfp, struct kwq_unlocked_work *w)
	__must_hold(&q->lock);

/**
 * kwq_add_begin_locked() - how every add begins, with kwq.lock held
 * @q: the queue.
 * @k: the key.
 * @o: the add's options, checked by the caller.
 * @w: the add's unlocked work, with its payload if it has one.
 * @itp: out, when the add goes on: the key's record, NULL for a new key.
 * @ret: out, when the add ends here: its result.
 *
 * An add to a queue destroyed or shutting down fails here. An add that
 * finds its key queued, or re-added while being processed, and not
 * waiting, that carries no payload, delay or limiter, on a queue without
 * priorities, only counts a duplicate whatever its policy
 * (kwq_add_now_locked() would do nothing else).
 *
 * Return: true if the add ended here.
 */
static __always_inline bool kwq_add_begin_locked(struct kwq *q, const struct kwq_lookup_key *k,
						 const struct kwq_add_opts *o,
						 const struct kwq_unlocked_work *w,
						 struct kwq_item **itp, int *ret)
	__must_hold(&q->lock)
{
	struct kwq_item *it;

	if (q->dead) {
		*ret = -EIDRM;
		return true;
	}
	if (q->shutting_down) {
		q->refused++;
		*ret = -ESHUTDOWN;
		return true;
	}
	it = kwq_find_key_locked(q, k);
	if (it && !w->payload && o->delay_ns <= 0 && !(o->flags & KWQ_ADD_RATE_LIMITED) &&
	    !kwq_order_has_levels(&q->order) &&
	    (it->state & (KWQ_ITEM_DIRTY | KWQ_ITEM_WAITING)) == KWQ_ITEM_DIRTY) {
		q->dedups++;
		trace_kwq_add(q->name, k->key, k->len, KWQ_ADD_DUPLICATE, 0);
		*ret = KWQ_ADD_DUPLICATE;
		return true;
	}
	*itp = it;
	return false;
}

/* One add with kwq.lock held, which it may let go of to allocate. */
static __always_inline int kwq_add_one_locked(struct kwq *q, const struct kwq_lookup_key *k,
					      const struct kwq_add_opts *o, gfp_t gfp,
					      struct kwq_unlocked_work *w)
	__must_hold(&q->lock)
{
	struct kwq_item *it;
	int ret;

	if (kwq_add_begin_locked(q, k, o, w, &it, &ret))
		return ret;
	return kwq_add_locked_alloc(q, k, it, o, gfp, w);
}

/*
 * Every add of one key: takes and lets go of kwq.lock. With @payload (the
 * add's reference, which it stores or drops) or NULL, a constant in
 * kwq_add_common().
 */
static __always_inline int kwq_add_one(struct kwq *q, const void *key, u32 len,
				       const struct kwq_add_opts *o, gfp_t gfp,
				       struct kwq_payload *payload)
{
	struct kwq_unlocked_work w __uninitialized;	/* kwq_unlocked_work_init() */
	struct kwq_lookup_key k __uninitialized;	/* kwq_lookup_key_init() */
	struct kwq_add_start s;
	int ret;

	if (!kwq_key_valid(key, len) || (o->flags & ~KWQ_ADD_FLAGS)) {
		if (payload)
			kwq_payload_put(payload);
		return -EINVAL;
	}
	kwq_add_start_init(q, o, &s);
	kwq_unlocked_work_init(&w);
	w.payload = payload;
	/* The hash needs no lock (kwq_table_hash()): out of the lock hold. */
	kwq_lookup_key_init(&k, q, key, len);
	kwq_add_lock(q, &s);
	ret = kwq_add_one_locked(q, &k, o, gfp, &w);
	kwq_unlock_and_finish(q, &w);
	return ret;
}

/*
 * Every add of one key without a payload. Inlined into each exported
 * add, and into KWQ_IOC_ADD's handler (kwq_dev.c): one call level less
 * on every add.
 */
static __always_inline int kwq_add_common(struct kwq *q, const void *key, u32 len,
					  const struct kwq_add_opts *o, gfp_t gfp)
{
	return kwq_add_one(q, key, len, o, gfp, NULL);
}

#endif /* _KWQ_ADD_H */
