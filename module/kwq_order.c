// SPDX-License-Identifier: GPL-2.0
/*
 * The ordering policies' table (kwq_order.h): which one a queue gets, and
 * the FIFO's entry, whose code is inline in kwq_fifo.h.
 */

#include <linux/errno.h>

#include "kwq_fifo.h"
#include "kwq_priority.h"
#include "kwq_tenant.h"

static int kwq_fifo_init(struct kwq_order *o, const struct kwq_order_attr *a, gfp_t gfp)
{
	return 0;
}

static void kwq_fifo_release(struct kwq_order *o)
{
}

static struct kwq_item *kwq_fifo_next_op(struct kwq_order *o)
{
	return kwq_fifo_next(o);
}

static void kwq_fifo_queue_op(struct kwq_order *o, struct kwq_item *it, bool at_head)
{
	kwq_fifo_queue(o, it, at_head);
}

static void kwq_fifo_give_back_op(struct kwq_order *o, struct kwq_item *it,
				  struct kwq_give_back *gb)
{
	kwq_fifo_give_back(o, it, gb);
}

static void kwq_fifo_remove_op(struct kwq_order *o, struct kwq_item *it)
{
	kwq_fifo_remove(o, it);
}

static bool kwq_fifo_empty_op(const struct kwq_order *o)
{
	return kwq_fifo_empty(o);
}

const struct kwq_order_ops kwq_fifo_ops = {
	.init		= kwq_fifo_init,
	.release	= kwq_fifo_release,
	.next		= kwq_fifo_next_op,
	.queue		= kwq_fifo_queue_op,
	.give_back	= kwq_fifo_give_back_op,
	.take		= kwq_fifo_remove_op,
	.remove		= kwq_fifo_remove_op,
	.empty		= kwq_fifo_empty_op,
};

/**
 * kwq_order_init() - set up a new queue's order
 * @o: the order, zeroed.
 * @a: what the queue's attributes ask for: tenants (with or without
 *	priorities), priorities, or neither (the FIFO).
 * @gfp: allocation flags (the queue's accounting).
 *
 * Return: 0, or -ENOMEM with nothing left to release.
 */
int kwq_order_init(struct kwq_order *o, const struct kwq_order_attr *a, gfp_t gfp)
{
	INIT_LIST_HEAD(&o->fifo);
	INIT_LIST_HEAD(&o->give_backs);
	o->aging_ns = a->aging_ns;
	if (a->tenant_depth)
		o->ops = &kwq_ten_ops;
	else if (a->aging_ns)
		o->ops = &kwq_prio_ops;
	else
		o->ops = &kwq_fifo_ops;
	return o->ops->init(o, a, gfp);
}

/* Free what kwq_order_init() made; the order holds no keys. */
void kwq_order_release(struct kwq_order *o)
{
	o->ops->release(o);
}
