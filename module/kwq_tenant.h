/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The ready keys of a tenant queue (KWQ_CREATE_TENANT,
 * Documentation/kwq-tenants.rst). A key's tenant is a prefix of it (the
 * bytes before its depth-th '/', kwq_tenant_len()). Each (tenant, level)
 * with queued keys is a flow (struct kwq_flow): the FIFO of those keys.
 * Each level keeps its flows in a rotation; a get from a level takes the
 * first key of its first flow and moves that flow to the end. A key given
 * back goes to the head of its flow and its flow to the head of the
 * rotation. Without KWQ_CREATE_PRIORITY there is one level, 0; with it,
 * kwq_prio_rank() of each level's next key picks the level.
 *
 * A flow is no allocation: it lives in the record of its first key and
 * moves to the next one's, in O(1), when that key leaves, so queueing a
 * key cannot fail in any context. Flows are found by tenant in an rbtree
 * (O(log flows) to queue a key); taking or removing a key is O(1).
 * Plain queues have no struct kwq_tenants (kwq.ten is NULL).
 */
#ifndef _KWQ_TENANT_H
#define _KWQ_TENANT_H

#include <linux/list.h>
#include <linux/rbtree.h>
#include <linux/types.h>

#include "kwq_item.h"
#include "kwq_priority.h"

/**
 * struct kwq_tenants - the ready keys of a tenant queue
 * @flows: every flow, by (level, tenant bytes).
 * @rr: each level's rotation of flows (kwq_flow.rr): a get takes from
 *	the first.
 * @nonempty: bit L is set exactly when @rr[L] has flows.
 * @depth: the tenant rule, 1 to KWQ_TENANT_DEPTH_MAX; constant.
 *
 * Protected by kwq.lock, like kwq.ready, which a tenant queue leaves
 * empty (and so the levels of its kwq_prio). Only the transitions of
 * kwq_state.h change it.
 */
struct kwq_tenants {
	struct rb_root flows;
	struct list_head rr[KWQ_PRIO_LEVELS];
	u32 nonempty;
	u32 depth;
};

/*
 * The tenant of a key: its first bytes up to (not including) its
 * min(@depth, number of '/')-th '/', so 0 for a key without one.
 */
static inline u32 kwq_tenant_len(const u8 *key, u32 len, u32 depth)
{
	u32 i, end = 0;

	for (i = 0; i < len && depth; i++) {
		if (key[i] == '/') {
			end = i;
			depth--;
		}
	}
	return end;
}

/* The key a get from level @l takes: the first of its first flow. */
static inline struct kwq_item *kwq_ten_level_next(const struct kwq_tenants *t, u32 l)
{
	struct kwq_flow *f = list_first_entry(&t->rr[l], struct kwq_flow, rr);

	return list_first_entry(&f->keys, struct kwq_item, ready);
}

/*
 * The queued key a get takes next, or NULL: without priorities the next
 * of level 0; with them (@p), as kwq_prio_next() with each level's next
 * key in place of its first.
 */
static inline struct kwq_item *kwq_ten_next(const struct kwq_tenants *t,
					    const struct kwq_prio *p)
{
	struct kwq_item *best = NULL, *it;
	u64 best_rank = 0, rank;
	u32 bits = t->nonempty;
	u32 l;

	if (!p)
		return bits ? kwq_ten_level_next(t, 0) : NULL;
	while (bits) {
		l = __fls(bits);
		bits &= ~BIT(l);
		it = kwq_ten_level_next(t, l);
		rank = kwq_prio_rank(p, it->stamp, l);
		if (!best || rank < best_rank) {
			best = it;
			best_rank = rank;
		}
	}
	return best;
}

struct kwq;
struct kwq_tenants *kwq_ten_new(u32 depth, gfp_t gfp);
void kwq_ten_queue(struct kwq *q, struct kwq_item *it, bool at_head);
struct kwq_flow *kwq_ten_remove(struct kwq *q, struct kwq_item *it);

#endif /* _KWQ_TENANT_H */
