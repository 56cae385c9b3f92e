/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The FIFO order of a plain queue (kwq_order.h): its keys on one list,
 * kwq_order.fifo, oldest first; a key given back goes to the head, or in
 * steps right behind the one given back before it. Inline: the core calls
 * it directly (kwq_order_call.h), and kwq_order.c's table holds it for
 * the rest.
 */
#ifndef _KWQ_FIFO_H
#define _KWQ_FIFO_H

#include <linux/list.h>

#include "kwq_item.h"
#include "kwq_order.h"

static inline struct kwq_item *kwq_fifo_next(struct kwq_order *o)
{
	return list_first_entry_or_null(&o->fifo, struct kwq_item, ready);
}

static inline void kwq_fifo_queue(struct kwq_order *o, struct kwq_item *it, bool at_head)
{
	if (at_head)
		list_add(&it->ready, &o->fifo);
	else
		list_add_tail(&it->ready, &o->fifo);
}

/* Every key is at level 0: one place kept, after[0]. */
static inline void kwq_fifo_give_back(struct kwq_order *o, struct kwq_item *it,
				      struct kwq_give_back *gb)
{
	list_add(&it->ready, gb->after[0] ? &gb->after[0]->ready : &o->fifo);
	gb->after[0] = it;
}

/* A take and a removal are one: the FIFO keeps nothing else. */
static inline void kwq_fifo_remove(struct kwq_order *o, struct kwq_item *it)
{
	list_del(&it->ready);
}

static inline bool kwq_fifo_empty(const struct kwq_order *o)
{
	return list_empty(&o->fifo);
}

extern const struct kwq_order_ops kwq_fifo_ops;

#endif /* _KWQ_FIFO_H */
