/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The states of a key's record, and the only code that moves a record
 * between them: the transitions below are the only writers of
 * kwq_item.state, of the record's list membership and of the queue's
 * n_* counts; where a queued record goes among the others is the queue's
 * order's (kwq_order.h), which only these call. Included by the core's
 * files only (kwq_core.h); kwq.lock held throughout.
 *
 *   state             bits              linked on (kwq_item.ready)  counted in
 *   ----------------  ----------------  --------------------------  -------------------
 *   spare             (off the table)   kwq.spare (via hnext)       kwq.n_spare
 *   fresh             none, 0 failures  nothing                     kwq.items.n
 *   backoff-only      none, failures    kwq.backoff, oldest first      kwq.n_backoff
 *   queued            DIRTY             kwq.order, in its policy's  kwq.n_queued
 *                                       order (kwq_order.h)
 *   processing        PROCESSING        its holder's list, oldest   kwq.n_processing
 *                                       first (a kwq_lease's, or    (kwq.busy_stamps)
 *                                       kwq.unleased; kwq.busy
 *                                       orders the lists)
 *   processing+dirty  PROCESSING|DIRTY  the same                    n_processing and
 *                                                                   n_dirty_processing
 *   waiting           WAITING, with any of the above but spare and backoff-only:
 *                     its entry on kwq.waiting or, kwq_item.far set, in a
 *                     slot of kwq.far (kwq_far.h); counted in kwq.n_waiting.
 *                     The entry is the record's own (kwq_item.lone) while
 *                     the key only waits for a plain deadline, else its
 *                     side's (struct kwq_side), which a processing key
 *                     has anyway.
 *
 *   fresh --queue--> queued --take--> processing --finish--> fresh
 *                      ^                   |  defer (an add)      |
 *                      |                   v                      |
 *                      +--queue-- processing+dirty --finish-------+
 *   fresh --backoff--> backoff-only --unbackoff--> fresh
 *
 * "fresh" lasts only inside one critical section: the caller then
 * queues, waits, idles or drops the record. Every transition ends with
 * kwq_st_check(), which on a kernel with lockdep checks in O(1) that the
 * record's bits match its membership and that each count matches its
 * list's emptiness.
 */
#ifndef _KWQ_STATE_H
#define _KWQ_STATE_H

#include <linux/bug.h>
#include <linux/list.h>
#include <linux/lockdep.h>
#include <linux/rbtree.h>
#include <linux/timerqueue.h>

#include "kwq_internal.h"
#include "kwq_order_call.h"

#define KWQ_ITEM_WORK	(KWQ_ITEM_DIRTY | KWQ_ITEM_PROCESSING)

static inline void kwq_st_check(struct kwq *q, const struct kwq_item *it)
{
	if (!IS_ENABLED(CONFIG_LOCKDEP))
		return;
	lockdep_assert_held(&q->lock);
	WARN_ON_ONCE(it->lone && it->state != KWQ_ITEM_WAITING);
	WARN_ON_ONCE(it->far && !(it->state & KWQ_ITEM_WAITING));
	if (it->lone) {
		WARN_ON_ONCE(RB_EMPTY_NODE(&it->entry.wait.node));
	} else {
		WARN_ON_ONCE((it->state & KWQ_ITEM_WORK) && list_empty(&it->ready));
		WARN_ON_ONCE(it->state == KWQ_ITEM_WAITING && !list_empty(&it->ready));
		WARN_ON_ONCE(!it->side != !(it->state & (KWQ_ITEM_PROCESSING | KWQ_ITEM_WAITING)));
	}
	if (!it->lone && it->side) {
		WARN_ON_ONCE(it->side->it != it || it->side->zero);
		WARN_ON_ONCE(!!(it->state & KWQ_ITEM_WAITING) ==
			     RB_EMPTY_NODE(&it->side->entry.wait.node));
		WARN_ON_ONCE(!(it->state & KWQ_ITEM_PROCESSING) != !it->side->holder);
	}
	WARN_ON_ONCE((q->n_queued == 0) != kwq_order_empty(&q->order));
	kwq_order_check(&q->order, it);
	WARN_ON_ONCE((q->n_processing == 0) != RB_EMPTY_ROOT(&q->busy.rb_root));
	WARN_ON_ONCE(!q->n_processing && q->busy_stamps);
	WARN_ON_ONCE((q->n_backoff == 0) != list_empty(&q->backoff));
	WARN_ON_ONCE((q->n_waiting == 0) !=
		     (!timerqueue_getnext(&q->waiting) && (!q->far || !q->far->n)));
	WARN_ON_ONCE(q->far && q->far->n > q->n_waiting);
	WARN_ON_ONCE(q->n_dirty_processing > q->n_processing);
	WARN_ON_ONCE(q->n_queued + q->n_processing + q->n_backoff > q->items.n);
}

/*
 * A spare side for @it, which kwq_side_ensure_locked() made sure of
 * before the add or get that needs it changed anything.
 */
static inline struct kwq_side *kwq_side_pop(struct kwq *q, struct kwq_item *it)
{
	struct kwq_side *s = q->side_spare;

	q->side_spare = s->next;
	q->n_side_spare--;
	s->it = it;
	return s;
}

/*
 * A side no longer needed: back to the spares. The last one in use of a
 * queue with more than KWQ_SIDES_KEPT has the rest freed (kwq_record.c).
 */
static inline void kwq_side_push(struct kwq *q, struct kwq_side *s)
{
	s->next = q->side_spare;
	q->side_spare = s;
	if (unlikely(++q->n_side_spare == q->n_sides) && q->n_sides > KWQ_SIDES_KEPT)
		kwq_sides_idle_locked(q);
}

/* The record's own fields again, once its entry left it. */
static inline void kwq_st_unlone_fields(struct kwq_item *it)
{
	it->lone = 0;
	INIT_LIST_HEAD(&it->ready);
	it->stamp = 0;
	it->side = NULL;
}

/*
 * fresh (or waiting) -> queued, at the tail or, for a key given back, the
 * head (kwq_order_ops.queue).
 */
static inline void kwq_st_queue(struct kwq *q, struct kwq_item *it, bool at_head)
{
	it->state |= KWQ_ITEM_DIRTY;
	kwq_order_queue(&q->order, it, at_head);
	WRITE_ONCE(q->n_queued, q->n_queued + 1);
	kwq_st_check(q, it);
}

/*
 * queued -> queued at the tail of level @level, ready at @stamp: a raise
 * of its priority (kwq_add.c).
 */
static inline void kwq_st_move(struct kwq *q, struct kwq_item *it, u32 level, u64 stamp)
{
	kwq_order_move(&q->order, it, level, stamp);
	kwq_st_check(q, it);
}

/*
 * fresh (or waiting) -> queued where give-back @gb puts its next key
 * (struct kwq_give_back): a key given back in steps.
 */
static inline void kwq_st_give_back(struct kwq *q, struct kwq_item *it,
				    struct kwq_give_back *gb)
{
	it->state |= KWQ_ITEM_DIRTY;
	kwq_order_give_back(&q->order, it, gb);
	WRITE_ONCE(q->n_queued, q->n_queued + 1);
	kwq_st_check(q, it);
}

/* processing -> processing+dirty: an add while the key is being processed. */
static inline void kwq_st_defer(struct kwq *q, struct kwq_item *it)
{
	it->state |= KWQ_ITEM_DIRTY;
	q->n_dirty_processing++;
	kwq_st_check(q, it);
}

static inline struct kwq_item *kwq_busy_first(const struct kwq_busy *b)
{
	return list_first_entry(&b->items, struct kwq_item, ready);
}

static inline bool kwq_busy_less(struct rb_node *a, const struct rb_node *b)
{
	return kwq_item_ticket(kwq_busy_first(rb_entry(a, struct kwq_busy, node))) <
	       kwq_item_ticket(kwq_busy_first(rb_entry(b, struct kwq_busy, node)));
}

/* The processing item taken first (the longest running), or NULL. */
static inline struct kwq_item *kwq_busy_oldest(const struct kwq *q)
{
	struct rb_node *n = rb_first_cached(&q->busy);

	return n ? kwq_busy_first(rb_entry(n, struct kwq_busy, node)) : NULL;
}

/*
 * queued -> processing, at the tail of @b (a lease's list, or
 * kwq.unleased), with the queue's next ticket, stamped @stamp (kept in
 * kwq.busy_stamps). Tickets grow with every take, so each list is in
 * ticket order and a list joins kwq.busy only when this is its first
 * item. Only a take makes a record leave the order, the key
 * kwq_order_next() named (a raise moves one within it, kwq_st_move()).
 */
static __always_inline void kwq_st_take(struct kwq *q, struct kwq_item *it, u64 stamp,
					struct kwq_busy *b)
{
	kwq_order_take(&q->order, it);
	WRITE_ONCE(q->n_queued, q->n_queued - 1);
	it->state = (it->state & ~KWQ_ITEM_DIRTY) | KWQ_ITEM_PROCESSING;
	/* A key that also waits has its side already. */
	if (!it->side)
		it->side = kwq_side_pop(q, it);
	it->side->ticket = ++q->next_ticket;
	it->side->holder = b;
	list_add_tail(&it->ready, &b->items);
	if (b->items.next == &it->ready)
		rb_add_cached(&b->node, &q->busy, kwq_busy_less);
	it->stamp = stamp;
	q->busy_stamps += stamp;
	q->n_processing++;
	kwq_st_check(q, it);
}

/*
 * processing(+dirty) -> fresh (or waiting); returns whether it was dirty.
 * If it was its list's first, the list leaves kwq.busy, or moves if its
 * new first is not still older than the next list's.
 */
static inline bool kwq_st_finish(struct kwq *q, struct kwq_item *it)
{
	struct kwq_busy *b = it->side->holder;
	bool dirty = it->state & KWQ_ITEM_DIRTY;
	bool first = b->items.next == &it->ready;
	struct rb_node *next;

	list_del_init(&it->ready);
	it->side->holder = NULL;
	if (first && list_empty(&b->items)) {
		/* The common case, one list: the tree is left empty. */
		if (q->busy.rb_root.rb_node == &b->node && !b->node.rb_left && !b->node.rb_right)
			q->busy = RB_ROOT_CACHED;
		else
			rb_erase_cached(&b->node, &q->busy);
		RB_CLEAR_NODE(&b->node);
	} else if (first) {
		/* Its new first is younger: move the list if the next is older. */
		next = rb_next(&b->node);
		if (next && !kwq_busy_less(&b->node, next)) {
			rb_erase_cached(&b->node, &q->busy);
			rb_add_cached(&b->node, &q->busy, kwq_busy_less);
		}
	}
	it->state &= ~KWQ_ITEM_WORK;
	/* A key that still waits keeps its side for its entry. */
	if (!(it->state & KWQ_ITEM_WAITING)) {
		kwq_side_push(q, it->side);
		it->side = NULL;
	}
	q->busy_stamps -= it->stamp;
	q->n_processing--;
	if (dirty)
		q->n_dirty_processing--;
	kwq_st_check(q, it);
	return dirty;
}

/*
 * Give a record a waiting entry (it has none) at @deadline, bounded by
 * @bound (0: a plain entry), @now being the queue's time: in the record
 * if the key only waits and the entry is plain (lone), else in its side;
 * in a far slot if it is far enough ahead (kwq_far.h), else on
 * kwq.waiting.
 */
static inline void kwq_st_wait(struct kwq *q, struct kwq_item *it, ktime_t deadline,
			       ktime_t now, ktime_t bound)
{
	union kwq_entry *e;

	if (!bound && !(it->state & KWQ_ITEM_WORK)) {
		it->lone = 1;
		e = &it->entry;
	} else {
		/* A processing key has its side already. */
		if (!it->side)
			it->side = kwq_side_pop(q, it);
		it->side->bound = bound;
		e = &it->side->entry;
	}
	e->wait.expires = deadline;
	RB_CLEAR_NODE(&e->wait.node);
	if (!q->far || !kwq_far_put(q->far, it, e, now))
		timerqueue_add(&q->waiting, &e->wait);
	it->state |= KWQ_ITEM_WAITING;
	q->n_waiting++;
	kwq_st_check(q, it);
}

/* Remove a record's waiting entry. */
static inline void kwq_st_unwait(struct kwq *q, struct kwq_item *it)
{
	if (it->far)
		kwq_far_del(q->far, it);
	else
		timerqueue_del(&q->waiting, &kwq_item_entry(it)->wait);
	it->state &= ~KWQ_ITEM_WAITING;
	if (it->lone) {
		kwq_st_unlone_fields(it);
	} else {
		it->side->bound = 0;
		if (!(it->state & KWQ_ITEM_PROCESSING)) {
			kwq_side_push(q, it->side);
			it->side = NULL;
		}
	}
	q->n_waiting--;
	kwq_st_check(q, it);
}

/*
 * A lone record's entry moves to a side, in the same place among the
 * waiting entries (ties keep their order): before the key is queued while
 * it waits, or its entry gets a bound.
 */
static inline void kwq_st_unlone(struct kwq *q, struct kwq_item *it)
{
	struct kwq_side *s = kwq_side_pop(q, it);

	s->entry.wait.expires = it->entry.wait.expires;
	s->bound = 0;
	if (it->far)
		list_replace(&it->entry.far_link, &s->entry.far_link);
	else
		rb_replace_node_cached(&it->entry.wait.node, &s->entry.wait.node,
				       &q->waiting.rb_root);
	kwq_st_unlone_fields(it);
	it->side = s;
	kwq_st_check(q, it);
}

/*
 * waiting in the first far slot -> waiting on kwq.waiting, the slot's
 * first key (kwq.far has keys); returns it.
 */
static inline struct kwq_item *kwq_st_wait_near(struct kwq *q)
{
	struct kwq_item *it = kwq_far_pop(q->far);

	timerqueue_add(&q->waiting, &kwq_item_entry(it)->wait);
	kwq_st_check(q, it);
	return it;
}

/* fresh, with failures -> backoff-only, the most recently active. */
static inline void kwq_st_backoff(struct kwq *q, struct kwq_item *it)
{
	list_add_tail(&it->ready, &q->backoff);
	q->n_backoff++;
	kwq_st_check(q, it);
}

/* backoff-only -> fresh. */
static inline void kwq_st_unbackoff(struct kwq *q, struct kwq_item *it)
{
	list_del_init(&it->ready);
	q->n_backoff--;
	kwq_st_check(q, it);
}

#endif /* _KWQ_STATE_H */
