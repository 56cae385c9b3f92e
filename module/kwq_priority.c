// SPDX-License-Identifier: GPL-2.0
/*
 * kwq priorities: what an add does to a key's priority, the ready time of
 * a key given back, and a priority queue's levels. The hand-out's choice
 * is kwq_prio_next() (kwq_priority.h); Documentation/kwq-priorities.rst
 * has the rules and the bound.
 */

#include <linux/slab.h>

#include "kwq_core.h"
#include "kwq_state.h"

/**
 * kwq_prio_new() - the levels of a new priority queue
 * @aging_ns: struct kwq_attr.aging_ns: 0 for KWQ_AGING_DEFAULT_NS.
 * @gfp: allocation flags (the queue's accounting).
 *
 * Return: the levels, NULL if out of memory.
 */
struct kwq_prio *kwq_prio_new(u64 aging_ns, gfp_t gfp)
{
	struct kwq_prio *p = kzalloc(sizeof(*p), gfp);
	u32 l;

	if (!p)
		return NULL;
	for (l = 0; l < KWQ_PRIO_LEVELS; l++)
		INIT_LIST_HEAD(&p->level[l]);
	p->aging_ns = aging_ns ?: KWQ_AGING_DEFAULT_NS;
	return p;
}

/*
 * A key about to go to the head of its level (a give-back) takes the
 * ready time of the key it goes before, if that is earlier: the level
 * stays in ready-time order, and the key loses none of its place.
 */
void kwq_prio_head_stamp(struct kwq *q, struct kwq_item *it)
{
	struct list_head *l = &q->prio->level[it->level];
	struct kwq_item *head;

	if (list_empty(l))
		return;
	head = list_first_entry(l, struct kwq_item, ready);
	if (head->stamp < it->stamp)
		it->stamp = head->stamp;
}

/*
 * An add of priority @priority (checked) of @it, before the add itself.
 * A key with no run pending (neither queued, dirty nor waiting) takes the
 * add's priority: it is the next run's. Otherwise the add can only raise
 * it; a queued key moves to the tail of its new level, ready from now,
 * only if that rank is lower than the one it has (its wait there already
 * counts for more otherwise), so a raise never hands a key out later (on
 * a tenant queue it goes to the tail of its tenant's keys at the new
 * level, which the rank does not see: there it can).
 */
void kwq_prio_add_locked(struct kwq *q, struct kwq_item *it, s32 priority)
{
	u32 level = kwq_prio_level(priority);
	u64 now, gain;

	if (!(it->state & (KWQ_ITEM_DIRTY | KWQ_ITEM_WAITING))) {
		it->level = level;
		return;
	}
	if (level <= it->level)
		return;
	if ((it->state & KWQ_ITEM_WORK) != KWQ_ITEM_DIRTY) {
		it->level = level;
		return;
	}
	now = kwq_stamp_now(q);
	gain = (u64)(level - it->level) * q->prio->aging_ns;
	if (kwq_elapsed(now, it->stamp) >= gain)
		return;
	it->stamp = now;
	kwq_st_move(q, it, level);
}
