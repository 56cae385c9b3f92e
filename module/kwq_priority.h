/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The ready keys of a priority queue (KWQ_CREATE_PRIORITY): one FIFO per
 * priority level and a bitmap of the levels that have keys. A get looks
 * at the first key of each level and takes the one with the least rank,
 * its ready time (kwq_item.stamp) plus (top level - level) * aging_ns:
 * one level is worth aging_ns of waiting. Each level is kept in ready-time
 * order (kwq_state.h and kwq_timer.c's give-backs keep it so), so the
 * first key of a level has its least rank and a key of rank r goes before
 * every key of a higher rank: the bound of Documentation/kwq-priorities.rst.
 * O(levels) per get, O(1) per add; no timer, no re-sorting.
 * Plain queues have no struct kwq_prio (kwq.prio is NULL).
 */
#ifndef _KWQ_PRIORITY_H
#define _KWQ_PRIORITY_H

#include <linux/bitops.h>
#include <linux/list.h>
#include <linux/types.h>
#include <linux/kwq.h>

#define KWQ_PRIO_LEVELS		(KWQ_PRIORITY_MAX - KWQ_PRIORITY_MIN + 1)

/**
 * struct kwq_prio - the ready keys of a priority queue
 * @level: the queued keys of each level (kwq_item.level), linked through
 *	kwq_item.ready, in ready-time order (kwq_item.stamp never
 *	decreases along a list).
 * @nonempty: bit L is set exactly when @level[L] has keys.
 * @aging_ns: how much ready time one level is worth; constant.
 *
 * Protected by kwq.lock, like kwq.ready, which a priority queue leaves
 * empty. Only the transitions of kwq_state.h change @level and @nonempty.
 */
struct kwq_prio {
	struct list_head level[KWQ_PRIO_LEVELS];
	u32 nonempty;
	u64 aging_ns;
};

static_assert(KWQ_PRIO_LEVELS <= 16);	/* kwq_item.level has 4 bits */

static inline u32 kwq_prio_level(s32 priority)
{
	return priority - KWQ_PRIORITY_MIN;
}

/* The rank of the first key of a level: the least is handed out next. */
static inline u64 kwq_prio_rank(const struct kwq_prio *p, u64 stamp, u32 level)
{
	return stamp + (u64)(KWQ_PRIO_LEVELS - 1 - level) * p->aging_ns;
}

/*
 * The queued key a get takes next, or NULL: the least rank among the
 * first keys of the levels, the higher level on a tie.
 */
static inline struct kwq_item *kwq_prio_next(const struct kwq_prio *p)
{
	struct kwq_item *best = NULL, *it;
	u64 best_rank = 0, rank;
	u32 bits = p->nonempty;
	u32 l;

	while (bits) {
		l = __fls(bits);
		bits &= ~BIT(l);
		it = list_first_entry(&p->level[l], struct kwq_item, ready);
		rank = kwq_prio_rank(p, it->stamp, l);
		if (!best || rank < best_rank) {
			best = it;
			best_rank = rank;
		}
	}
	return best;
}

#endif /* _KWQ_PRIORITY_H */
