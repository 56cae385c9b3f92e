/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The far part of the waiting set. A timerqueue insertion visits about
 * log2(n) records spread over memory, 20 of them with a million keys
 * waiting; so deadlines at least a slot ahead wait instead in slots of
 * KWQ_FAR_SPAN ns, each a FIFO list: O(1) whatever the number of keys.
 * One span before a slot starts, the queue's timer moves its keys into
 * the timerqueue, in the order they came, a bounded step per run; the
 * hrtimer then serves each deadline at its exact time, earliest first,
 * equal deadlines in the order they were added, as before.
 *
 * A queue allocates its slots (struct kwq_far, 16 KiB) the first time
 * KWQ_FAR_MIN_WAITING keys wait at once; until then, if that allocation
 * fails, and for deadlines past the slots' window (KWQ_FAR_SLOTS spans,
 * about 2.4 hours) or less than two spans ahead, entries go straight into
 * the timerqueue. Everything here is under kwq.lock; only the transitions
 * of kwq_state.h call it.
 */
#ifndef _KWQ_FAR_H
#define _KWQ_FAR_H

#include <linux/bitmap.h>
#include <linux/bitops.h>
#include <linux/build_bug.h>
#include <linux/find.h>
#include <linux/ktime.h>
#include <linux/list.h>
#include <linux/rbtree.h>

#include "kwq_item.h"

/* A slot spans 2^33 ns (about 8.6 s) of deadlines. */
#define KWQ_FAR_SHIFT		33
#define KWQ_FAR_SPAN		((ktime_t)BIT_ULL(KWQ_FAR_SHIFT))
/* 1008 slots: about 2.4 hours ahead, and struct kwq_far fits 16 KiB. */
#define KWQ_FAR_SLOTS		1008
/* Waiting keys at which a queue allocates its slots. */
#define KWQ_FAR_MIN_WAITING	1024

/**
 * struct kwq_far - the slots of a queue's far deadlines
 * @from: start of the first slot whose keys have not all moved to the
 *	timerqueue (a multiple of KWQ_FAR_SPAN). Every key here has a
 *	deadline in [@from, @from + KWQ_FAR_SLOTS spans); a deadline before
 *	@from never comes here, so no key here is due before its slot moves.
 * @n: keys in the slots.
 * @nonempty: bit i set when @slot[i] has keys.
 * @slot: the entries of one span, in the order they came, linked through
 *	kwq_entry.far_link; slot i holds deadlines whose span number
 *	(deadline >> KWQ_FAR_SHIFT) is i modulo KWQ_FAR_SLOTS.
 */
struct kwq_far {
	ktime_t from;
	u64 n;
	DECLARE_BITMAP(nonempty, KWQ_FAR_SLOTS);
	struct list_head slot[KWQ_FAR_SLOTS];
};

static_assert(sizeof(struct kwq_far) <= 16384);

static inline u32 kwq_far_index(ktime_t t)
{
	/* Below 2^31 for any ktime_t: a 32-bit modulo. */
	return (u32)((u64)t >> KWQ_FAR_SHIFT) % KWQ_FAR_SLOTS;
}

static inline ktime_t kwq_far_start(ktime_t t)
{
	return t & ~(KWQ_FAR_SPAN - 1);
}

/* The index of the first slot with keys, from @f->from on; @f->n > 0. */
static inline u32 kwq_far_first_index(const struct kwq_far *f)
{
	u32 i0 = kwq_far_index(f->from), i;

	i = find_next_bit(f->nonempty, KWQ_FAR_SLOTS, i0);
	if (i >= KWQ_FAR_SLOTS)
		i = find_first_bit(f->nonempty, i0);
	return i;
}

/* The start of slot @i, which holds deadlines from @f->from on. */
static inline ktime_t kwq_far_slot_start(const struct kwq_far *f, u32 i)
{
	u32 i0 = kwq_far_index(f->from);

	return f->from + (ktime_t)((i + KWQ_FAR_SLOTS - i0) % KWQ_FAR_SLOTS) * KWQ_FAR_SPAN;
}

/* The start of the first slot with keys; @f->n > 0. */
static inline ktime_t kwq_far_first(const struct kwq_far *f)
{
	return kwq_far_slot_start(f, kwq_far_first_index(f));
}

/* When the first slot's keys move to the timerqueue: KTIME_MAX for none. */
static inline ktime_t kwq_far_move_at(const struct kwq_far *f)
{
	return f && f->n ? kwq_far_first(f) - KWQ_FAR_SPAN : KTIME_MAX;
}

/*
 * Put waiting @it's entry @e (its deadline in @e->wait.expires) in a
 * slot, if the deadline belongs there; false if it goes to the
 * timerqueue. @now is the queue's time: a slot starts at least two spans
 * after it, so it moves no sooner than a span from now.
 */
static inline bool kwq_far_put(struct kwq_far *f, struct kwq_item *it, union kwq_entry *e,
			       ktime_t now)
{
	ktime_t cut = kwq_far_start(now) + 2 * KWQ_FAR_SPAN;
	ktime_t start = kwq_far_start(e->wait.expires);
	u32 i;

	/* Skip empty slots up to the cut: those deadlines are near now. */
	if (!f->n)
		f->from = cut;
	else if (f->from < cut)
		f->from = min(cut, kwq_far_first(f));
	if (start < f->from || start - f->from >= (ktime_t)KWQ_FAR_SLOTS * KWQ_FAR_SPAN)
		return false;
	i = kwq_far_index(start);
	list_add_tail(&e->far_link, &f->slot[i]);
	__set_bit(i, f->nonempty);
	f->n++;
	it->far = 1;
	return true;
}

static inline void kwq_far_unlink(struct kwq_far *f, struct kwq_item *it, union kwq_entry *e,
				  u32 i)
{
	list_del(&e->far_link);
	if (list_empty(&f->slot[i]))
		__clear_bit(i, f->nonempty);
	f->n--;
	it->far = 0;
	/* The node is the timerqueue's "no entry" again (kwq_st_check()). */
	RB_CLEAR_NODE(&e->wait.node);
}

/* Take @it's entry, in a slot, out of it. */
static inline void kwq_far_del(struct kwq_far *f, struct kwq_item *it)
{
	union kwq_entry *e = kwq_item_entry(it);

	kwq_far_unlink(f, it, e, kwq_far_index(e->wait.expires));
}

/*
 * Take the first entry of the first slot with entries, to move it to the
 * timerqueue, and return its key; @f->n > 0. Once that slot is empty,
 * deadlines in its span go to the timerqueue too, behind the keys moved.
 */
static inline struct kwq_item *kwq_far_pop(struct kwq_far *f)
{
	u32 i = kwq_far_first_index(f);
	union kwq_entry *e = list_first_entry(&f->slot[i], union kwq_entry, far_link);
	struct kwq_item *it = kwq_entry_owner(e);

	f->from = kwq_far_slot_start(f, i);
	kwq_far_unlink(f, it, e, i);
	if (!test_bit(i, f->nonempty))
		f->from += KWQ_FAR_SPAN;
	return it;
}

#endif /* _KWQ_FAR_H */
