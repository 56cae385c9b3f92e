/* SPDX-License-Identifier: GPL-2.0 */
/*
 * How the core calls a queue's order (kwq_order.h): the FIFO of a plain
 * queue inline, as INDIRECT_CALL_1() would but without the call, the
 * other policies through their ops. The give-backs in steps are kept
 * here, for every policy: a take or a move of a key a give-back put last
 * resets that give-back's place. kwq.lock held throughout.
 */
#ifndef _KWQ_ORDER_CALL_H
#define _KWQ_ORDER_CALL_H

#include <linux/bug.h>
#include <linux/string.h>

#include "kwq_fifo.h"
#include "kwq_order.h"

static __always_inline bool kwq_order_is_fifo(const struct kwq_order *o)
{
	return likely(o->ops == &kwq_fifo_ops);
}

/* The queued key a get takes next, or NULL. */
static __always_inline struct kwq_item *kwq_order_next(struct kwq_order *o)
{
	if (kwq_order_is_fifo(o))
		return kwq_fifo_next(o);
	return o->ops->next(o);
}

static __always_inline void kwq_order_queue(struct kwq_order *o, struct kwq_item *it,
					    bool at_head)
{
	if (kwq_order_is_fifo(o))
		kwq_fifo_queue(o, it, at_head);
	else
		o->ops->queue(o, it, at_head);
}

static inline bool kwq_order_empty(const struct kwq_order *o)
{
	if (kwq_order_is_fifo(o))
		return kwq_fifo_empty(o);
	return o->ops->empty(o);
}

/* A queued key leaves its place: give-backs in steps stop going behind it. */
static inline void kwq_order_forget_place(struct kwq_order *o, const struct kwq_item *it)
{
	struct kwq_give_back *gb;

	list_for_each_entry(gb, &o->give_backs, node) {
		if (gb->after[it->level] == it)
			gb->after[it->level] = NULL;
	}
}

/* Unlink @it, the key kwq_order_next() returned, for a get. */
static __always_inline void kwq_order_take(struct kwq_order *o, struct kwq_item *it)
{
	if (unlikely(!list_empty(&o->give_backs)))
		kwq_order_forget_place(o, it);
	if (kwq_order_is_fifo(o))
		kwq_fifo_remove(o, it);
	else
		o->ops->take(o, it);
}

/*
 * Move queued @it to the tail of level @level, ready at @stamp: a raise
 * of its priority (kwq_add.c decides when).
 */
static inline void kwq_order_move(struct kwq_order *o, struct kwq_item *it, u32 level,
				  u64 stamp)
{
	if (unlikely(!list_empty(&o->give_backs)))
		kwq_order_forget_place(o, it);
	o->ops->remove(o, it);
	it->level = level;
	it->stamp = stamp;
	o->ops->queue(o, it, false);
}

/* Start a give-back in steps: its first key goes to the head. */
static inline void kwq_order_give_back_begin(struct kwq_order *o, struct kwq_give_back *gb)
{
	memset(gb->after, 0, sizeof(gb->after));
	list_add(&gb->node, &o->give_backs);
}

static inline void kwq_order_give_back_end(struct kwq_give_back *gb)
{
	list_del_init(&gb->node);
}

/* Queue @it (not queued) as the next key of give-back @gb. */
static inline void kwq_order_give_back(struct kwq_order *o, struct kwq_item *it,
				       struct kwq_give_back *gb)
{
	if (kwq_order_is_fifo(o))
		kwq_fifo_give_back(o, it, gb);
	else
		o->ops->give_back(o, it, gb);
}

/* See kwq_order_ops.gives_back_at_head. */
static inline bool kwq_order_gives_back_at_head(const struct kwq_order *o)
{
	return o->ops->gives_back_at_head;
}

/* The policy's own checks around @it (kernels with lockdep). */
static inline void kwq_order_check(const struct kwq_order *o, const struct kwq_item *it)
{
	if (o->ops->check)
		o->ops->check(o, it);
}

#endif /* _KWQ_ORDER_CALL_H */
