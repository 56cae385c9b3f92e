// SPDX-License-Identifier: GPL-2.0
/*
 * The order of a priority queue (kwq_order.h): one FIFO per priority
 * level and a bitmap of the levels that have keys. A get looks at the
 * first key of each level and takes the one with the least rank,
 * kwq_rank(): one level is worth aging_ns of waiting. Each level is kept
 * in ready-time order (kwq_item.stamp never decreases along a list: a key
 * given back takes the ready time of the key it goes before, if that is
 * earlier), so the first key of a level has its least rank and a key of
 * rank r goes before every key of a higher rank: the bound of
 * Documentation/kwq-priorities.rst. O(levels) per get, O(1) per add; no
 * timer, no re-sorting.
 */

#include <linux/bitops.h>
#include <linux/bug.h>
#include <linux/list.h>
#include <linux/slab.h>

#include "kwq_priority.h"

/**
 * struct kwq_prio - the ready keys of a priority queue
 * @level: the queued keys of each level (kwq_item.level), linked through
 *	kwq_item.ready, in ready-time order.
 * @nonempty: bit L is set exactly when @level[L] has keys.
 *
 * kwq_order.data; under kwq.lock.
 */
struct kwq_prio {
	struct list_head level[KWQ_PRIO_LEVELS];
	u32 nonempty;
};

static int kwq_prio_init(struct kwq_order *o, const struct kwq_order_attr *a, gfp_t gfp)
{
	struct kwq_prio *p = kzalloc(sizeof(*p), gfp);
	u32 l;

	if (!p)
		return -ENOMEM;
	for (l = 0; l < KWQ_PRIO_LEVELS; l++)
		INIT_LIST_HEAD(&p->level[l]);
	o->data = p;
	return 0;
}

static void kwq_prio_release(struct kwq_order *o)
{
	kfree(o->data);
}

/* The least rank among the first keys of the levels, the higher level on a tie. */
static struct kwq_item *kwq_prio_next(struct kwq_order *o)
{
	const struct kwq_prio *p = o->data;
	struct kwq_item *best = NULL, *it;
	u64 best_rank = 0, rank;
	u32 bits = p->nonempty;
	u32 l;

	while (bits) {
		l = __fls(bits);
		bits &= ~BIT(l);
		it = list_first_entry(&p->level[l], struct kwq_item, ready);
		rank = kwq_rank(o->aging_ns, it->stamp, l);
		if (!best || rank < best_rank) {
			best = it;
			best_rank = rank;
		}
	}
	return best;
}

/*
 * A key about to go to the head of its level (a give-back) takes the
 * ready time of the key it goes before, if that is earlier: the level
 * stays in ready-time order, and the key loses none of its place.
 */
static void kwq_prio_head_stamp(struct kwq_prio *p, struct kwq_item *it)
{
	struct list_head *l = &p->level[it->level];
	struct kwq_item *head;

	if (list_empty(l))
		return;
	head = list_first_entry(l, struct kwq_item, ready);
	if (head->stamp < it->stamp)
		it->stamp = head->stamp;
}

static void kwq_prio_queue(struct kwq_order *o, struct kwq_item *it, bool at_head)
{
	struct kwq_prio *p = o->data;

	if (at_head) {
		kwq_prio_head_stamp(p, it);
		list_add(&it->ready, &p->level[it->level]);
	} else {
		list_add_tail(&it->ready, &p->level[it->level]);
	}
	p->nonempty |= BIT(it->level);
}

/*
 * Behind the key of its level @gb gave back last, with that key's ready
 * time, or at the head of its level as any key given back.
 */
static void kwq_prio_give_back(struct kwq_order *o, struct kwq_item *it,
			       struct kwq_give_back *gb)
{
	struct kwq_item *prev = gb->after[it->level];
	struct kwq_prio *p = o->data;

	if (prev) {
		it->stamp = prev->stamp;
		list_add(&it->ready, &prev->ready);
		p->nonempty |= BIT(it->level);
	} else {
		kwq_prio_queue(o, it, true);
	}
	gb->after[it->level] = it;
}

static void kwq_prio_remove(struct kwq_order *o, struct kwq_item *it)
{
	struct kwq_prio *p = o->data;

	list_del(&it->ready);
	if (list_empty(&p->level[it->level]))
		p->nonempty &= ~BIT(it->level);
}

static bool kwq_prio_empty(const struct kwq_order *o)
{
	const struct kwq_prio *p = o->data;

	return !p->nonempty;
}

static void kwq_prio_check(const struct kwq_order *o, const struct kwq_item *it)
{
	const struct kwq_prio *p = o->data;

	WARN_ON_ONCE(!!(p->nonempty & BIT(it->level)) == list_empty(&p->level[it->level]));
}

const struct kwq_order_ops kwq_prio_ops = {
	.init		= kwq_prio_init,
	.release	= kwq_prio_release,
	.next		= kwq_prio_next,
	.queue		= kwq_prio_queue,
	.give_back	= kwq_prio_give_back,
	.take		= kwq_prio_remove,
	.remove		= kwq_prio_remove,
	.empty		= kwq_prio_empty,
	.check		= kwq_prio_check,
};
