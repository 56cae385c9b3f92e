/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The order in which a queue hands out its ready keys: one interface, in
 * the manner of net/sched's Qdisc_ops, and one implementation per
 * ordering policy, each in a file of its own that owns its data:
 *
 *   kwq_fifo.h      plain queues: one list, oldest first (inline)
 *   kwq_priority.c  KWQ_CREATE_PRIORITY: a FIFO per level, chosen by rank
 *   kwq_tenant.c    KWQ_CREATE_TENANT: a round robin of tenants per level
 *
 * The core keeps a key's state (kwq_state.h) and calls the order only
 * from the transitions that make a key queued or take it off: queue one
 * (at the tail, or at the head for a key given back), give one back in
 * steps (struct kwq_give_back), pick the next, take it, remove one (a
 * raise of its priority moves it). The order sees of a record only
 * kwq_item.ready (its link while queued), .stamp (its ready time, which
 * a give-back may lower), .level, the key bytes, and bytes of its own in
 * the record's tail (kwq_order_attr.rec_skip). It knows nothing of
 * leases, timers, waiting, accounting or the device, and calls nothing
 * of the core: what it needs comes in its arguments.
 *
 * Levels and ranks are the interface's, since two policies share them:
 * kwq_item.level is a key's priority minus KWQ_PRIORITY_MIN, 0 on a
 * queue without priorities; a key's rank at its level is its ready time
 * plus (top level - level) * aging_ns (kwq_rank()), and a queue with
 * priorities hands out the least rank first (Documentation/
 * kwq-priorities.rst has the bound). When an add raises a queued key's
 * level is the core's rule (kwq_add.c); the order moves it.
 *
 * Calls: every op is called with kwq.lock held, in any context the lock
 * is (process, softirq, the hard timer); none sleeps, allocates or fails
 * but init. The core calls them through kwq_order_call.h: a plain queue's
 * FIFO inline, so that its add, get and done make no indirect call; the
 * other policies through their ops. A new policy is one file with its
 * struct kwq_order_ops, and one entry in kwq_order.c's table.
 */
#ifndef _KWQ_ORDER_H
#define _KWQ_ORDER_H

#include <linux/list.h>
#include <linux/types.h>
#include <linux/kwq.h>

#include "kwq_item.h"

#define KWQ_PRIO_LEVELS		(KWQ_PRIORITY_MAX - KWQ_PRIORITY_MIN + 1)

static_assert(KWQ_PRIO_LEVELS <= 16);	/* kwq_item.level has 4 bits */

/* The level of a priority (checked). */
static inline u32 kwq_prio_level(s32 priority)
{
	return priority - KWQ_PRIORITY_MIN;
}

/* The rank of a key ready at @stamp at level @level: the least goes first. */
static inline u64 kwq_rank(u64 aging_ns, u64 stamp, u32 level)
{
	return stamp + (u64)(KWQ_PRIO_LEVELS - 1 - level) * aging_ns;
}

/**
 * struct kwq_give_back - where a give-back done in steps puts its keys
 * @node: on kwq_order.give_backs while the give-back runs.
 * @after: per level, the key of that level it gave back last, still
 *	queued, or NULL: the next of the level goes right after it, or to
 *	the head. A take or a move of that key resets it (it was at the
 *	head: so were all given back before it). A policy that gives every
 *	key back to the head (kwq_order_ops.gives_back_at_head) leaves it.
 *
 * Keys given back in several holds of kwq.lock then still reach the
 * order in the order they were taken.
 */
struct kwq_give_back {
	struct list_head node;
	struct kwq_item *after[KWQ_PRIO_LEVELS];
};

/**
 * struct kwq_order - a queue's ready keys, in its policy's order
 * @fifo: the FIFO's keys (kwq_fifo.h), linked through kwq_item.ready;
 *	empty under any other policy.
 * @ops: the policy; constant.
 * @data: the policy's own, from its init; NULL for the FIFO.
 * @aging_ns: 0 on a queue without priorities (every key at level 0),
 *	else what one level is worth in ready time; constant.
 * @give_backs: the struct kwq_give_back of the give-backs running in
 *	steps (few: one per closing file, the processing timeout's).
 *
 * Embedded in struct kwq; all but the constants under kwq.lock.
 */
struct kwq_order {
	struct list_head fifo;
	const struct kwq_order_ops *ops;
	void *data;
	u64 aging_ns;
	struct list_head give_backs;
};

/**
 * struct kwq_order_attr - what a policy is made from
 * @aging_ns: kwq_order.aging_ns.
 * @tenant_depth: 0, or the tenant rule (kwq_tenant.h).
 * @rec_skip: bytes of a record's tail after the key (aligned to a
 *	pointer) and before the policy's own (a payload pointer).
 */
struct kwq_order_attr {
	u64 aging_ns;
	u32 tenant_depth;
	u32 rec_skip;
};

/**
 * struct kwq_order_ops - an ordering policy
 * @init: set up kwq_order.data for @a; 0 or -ENOMEM. Process context.
 * @release: free what @init made; the order holds no keys.
 * @next: the queued key a get takes next, or NULL if none is queued.
 * @queue: queue @it (not queued) at the tail, or (@at_head) at the head:
 *	a key given back, which the policy may give an earlier ready time
 *	to keep its own order.
 * @give_back: queue @it (not queued), given back in steps by @gb, right
 *	behind the key @gb gave back last if that one is still queued, else
 *	at the head; updates @gb.
 * @take: unlink @it, the key @next returned, which a get takes.
 * @remove: unlink queued @it from wherever it is.
 * @empty: whether no key is queued (for checks).
 * @check: optional: WARN if the policy's data is not consistent around
 *	@it (for checks, on kernels with lockdep).
 * @gives_back_at_head: @give_back puts every key at the head: a caller
 *	that gives back several, the oldest to come out first, gives them
 *	back newest first.
 */
struct kwq_order_ops {
	int (*init)(struct kwq_order *o, const struct kwq_order_attr *a, gfp_t gfp);
	void (*release)(struct kwq_order *o);
	struct kwq_item *(*next)(struct kwq_order *o);
	void (*queue)(struct kwq_order *o, struct kwq_item *it, bool at_head);
	void (*give_back)(struct kwq_order *o, struct kwq_item *it, struct kwq_give_back *gb);
	void (*take)(struct kwq_order *o, struct kwq_item *it);
	void (*remove)(struct kwq_order *o, struct kwq_item *it);
	bool (*empty)(const struct kwq_order *o);
	void (*check)(const struct kwq_order *o, const struct kwq_item *it);
	bool gives_back_at_head;
};

/* Whether an add's priority counts: the queue has levels. Constant. */
static inline bool kwq_order_has_levels(const struct kwq_order *o)
{
	return o->aging_ns;
}

/* kwq_order.c */
int kwq_order_init(struct kwq_order *o, const struct kwq_order_attr *a, gfp_t gfp);
void kwq_order_release(struct kwq_order *o);

#endif /* _KWQ_ORDER_H */
