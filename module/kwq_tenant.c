// SPDX-License-Identifier: GPL-2.0
/*
 * The order of a tenant queue (kwq_order.h, Documentation/kwq-tenants.rst
 * has the rules and the bound). A key's tenant is a prefix of it (the
 * bytes before its depth-th '/', kwq_tenant_len()). Each (tenant, level)
 * with queued keys is a flow (struct kwq_flow): the FIFO of those keys.
 * Each level keeps its flows in a rotation; a get from a level takes the
 * first key of its first flow and moves that flow to the end. A key given
 * back goes to the head of its flow and its flow to the head of the
 * rotation. Without priorities there is one level, 0; with them, the rank
 * (kwq_rank()) of each level's next key picks the level.
 *
 * A flow is no allocation: it lives in the record of its first key and
 * moves to the next one's, in O(1), when that key leaves, so queueing a
 * key cannot fail in any context. Flows are found by tenant in an rbtree
 * (O(log flows) to queue a key); taking or removing a key is O(1).
 */

#include <linux/bitops.h>
#include <linux/bug.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "kwq_tenant.h"

/**
 * struct kwq_tenants - the ready keys of a tenant queue
 * @flows: every flow, by (level, tenant bytes).
 * @rr: each level's rotation of flows (kwq_flow.rr): a get takes from
 *	the first.
 * @nonempty: bit L is set exactly when @rr[L] has flows.
 * @depth: the tenant rule, 1 to KWQ_TENANT_DEPTH_MAX; constant.
 * @skip: where a record's flow is, kwq_order_attr.rec_skip; constant.
 *
 * kwq_order.data; under kwq.lock.
 */
struct kwq_tenants {
	struct rb_root flows;
	struct list_head rr[KWQ_PRIO_LEVELS];
	u32 nonempty;
	u32 depth;
	u32 skip;
};

static int kwq_ten_init(struct kwq_order *o, const struct kwq_order_attr *a, gfp_t gfp)
{
	struct kwq_tenants *t = kzalloc(sizeof(*t), gfp);
	u32 l;

	if (!t)
		return -ENOMEM;
	t->flows = RB_ROOT;
	for (l = 0; l < KWQ_PRIO_LEVELS; l++)
		INIT_LIST_HEAD(&t->rr[l]);
	t->depth = a->tenant_depth;
	t->skip = a->rec_skip;
	o->data = t;
	return 0;
}

static void kwq_ten_release(struct kwq_order *o)
{
	kfree(o->data);
}

/* The key a get from level @l takes: the first of its first flow. */
static struct kwq_item *kwq_ten_level_next(const struct kwq_tenants *t, u32 l)
{
	struct kwq_flow *f = list_first_entry(&t->rr[l], struct kwq_flow, rr);

	return list_first_entry(&f->keys, struct kwq_item, ready);
}

/*
 * The queued key a get takes next, or NULL: without priorities the next
 * of level 0; with them, the least rank among each level's next key, the
 * higher level on a tie.
 */
static struct kwq_item *kwq_ten_next(struct kwq_order *o)
{
	const struct kwq_tenants *t = o->data;
	struct kwq_item *best = NULL, *it;
	u64 best_rank = 0, rank;
	u32 bits = t->nonempty;
	u32 l;

	if (!o->aging_ns)
		return bits ? kwq_ten_level_next(t, 0) : NULL;
	while (bits) {
		l = __fls(bits);
		bits &= ~BIT(l);
		it = kwq_ten_level_next(t, l);
		rank = kwq_rank(o->aging_ns, it->stamp, l);
		if (!best || rank < best_rank) {
			best = it;
			best_rank = rank;
		}
	}
	return best;
}

static inline struct kwq_flow *kwq_ten_slot(const struct kwq_tenants *t, struct kwq_item *it)
{
	return kwq_ten_flow(it, t->skip);
}

/* Order of flows: by level, then tenant bytes, then tenant length. */
static int kwq_flow_cmp(u32 level, const u8 *tenant, u32 tlen, const struct kwq_flow *f)
{
	const struct kwq_item *first = list_first_entry(&f->keys, struct kwq_item, ready);
	int c;

	if (level != f->level)
		return level < f->level ? -1 : 1;
	c = memcmp(tenant, first->key, min(tlen, f->tlen));
	if (c)
		return c;
	return tlen == f->tlen ? 0 : tlen < f->tlen ? -1 : 1;
}

/*
 * The flow of @it's tenant at @it's level, or NULL with *@link and
 * *@parent where a new one goes.
 */
static struct kwq_flow *kwq_flow_find(struct kwq_tenants *t, const struct kwq_item *it,
				      u32 tlen, struct rb_node ***link, struct rb_node **parent)
{
	struct rb_node **n = &t->flows.rb_node;
	struct kwq_flow *f;
	int c;

	*parent = NULL;
	while (*n) {
		f = rb_entry(*n, struct kwq_flow, node);
		c = kwq_flow_cmp(it->level, it->key, tlen, f);
		if (!c)
			return f;
		*parent = *n;
		n = c < 0 ? &(*n)->rb_left : &(*n)->rb_right;
	}
	*link = n;
	return NULL;
}

/* The flow in @from moves to @to, the record of its new first key. O(1). */
static void kwq_flow_move(struct kwq_tenants *t, struct kwq_flow *from, struct kwq_flow *to)
{
	rb_replace_node(&from->node, &to->node, &t->flows);
	list_replace(&from->rr, &to->rr);
	list_replace(&from->keys, &to->keys);
	to->tlen = from->tlen;
	to->level = from->level;
	RB_CLEAR_NODE(&from->node);
}

/*
 * Queue @it (not queued) in its tenant's flow at its level: at the tail,
 * or (@at_head, a key given back) at the head, its flow then first in the
 * level's rotation. A tenant with no flow there gets one, in @it's record,
 * at the end of the rotation (or the head).
 */
static void kwq_ten_queue(struct kwq_order *o, struct kwq_item *it, bool at_head)
{
	struct kwq_tenants *t = o->data;
	struct kwq_flow *mine = kwq_ten_slot(t, it), *f;
	u32 tlen = kwq_tenant_len(it->key, it->len, t->depth);
	struct rb_node **link, *parent;

	f = kwq_flow_find(t, it, tlen, &link, &parent);
	if (!f) {
		mine->tlen = tlen;
		mine->level = it->level;
		INIT_LIST_HEAD(&mine->keys);
		list_add(&it->ready, &mine->keys);
		rb_link_node(&mine->node, parent, link);
		rb_insert_color(&mine->node, &t->flows);
		if (at_head)
			list_add(&mine->rr, &t->rr[it->level]);
		else
			list_add_tail(&mine->rr, &t->rr[it->level]);
		t->nonempty |= BIT(it->level);
		return;
	}
	if (!at_head) {
		list_add_tail(&it->ready, &f->keys);
		return;
	}
	kwq_flow_move(t, f, mine);
	list_add(&it->ready, &mine->keys);
	list_move(&mine->rr, &t->rr[it->level]);
}

/*
 * Unlink queued @it from its flow. Returns the flow if @it was its first
 * key and others remain (now in the next one's record), else NULL: the
 * flow is gone, or @it was not its first and the flow did not change.
 */
static struct kwq_flow *kwq_ten_unlink(struct kwq_tenants *t, struct kwq_item *it)
{
	struct kwq_flow *mine = kwq_ten_slot(t, it), *next;
	u32 level;

	if (RB_EMPTY_NODE(&mine->node)) {
		list_del(&it->ready);
		return NULL;
	}
	level = mine->level;
	if (list_is_singular(&mine->keys)) {
		list_del(&it->ready);
		rb_erase(&mine->node, &t->flows);
		RB_CLEAR_NODE(&mine->node);
		list_del(&mine->rr);
		if (list_empty(&t->rr[level]))
			t->nonempty &= ~BIT(level);
		return NULL;
	}
	next = kwq_ten_slot(t, list_next_entry(it, ready));
	list_del(&it->ready);
	kwq_flow_move(t, mine, next);
	return next;
}

/* A get: the key's flow, if it has keys left, goes to the end of its level's rotation. */
static void kwq_ten_take(struct kwq_order *o, struct kwq_item *it)
{
	struct kwq_tenants *t = o->data;
	struct kwq_flow *f = kwq_ten_unlink(t, it);

	if (f)
		list_move_tail(&f->rr, &t->rr[it->level]);
}

static void kwq_ten_remove(struct kwq_order *o, struct kwq_item *it)
{
	kwq_ten_unlink(o->data, it);
}

/* Every key given back goes to the head of its flow, its flow first. */
static void kwq_ten_give_back(struct kwq_order *o, struct kwq_item *it,
			      struct kwq_give_back *gb)
{
	kwq_ten_queue(o, it, true);
}

static bool kwq_ten_empty(const struct kwq_order *o)
{
	const struct kwq_tenants *t = o->data;

	return !t->nonempty;
}

static void kwq_ten_check(const struct kwq_order *o, const struct kwq_item *it)
{
	const struct kwq_tenants *t = o->data;

	WARN_ON_ONCE(!!(t->nonempty & BIT(it->level)) == list_empty(&t->rr[it->level]));
}

const struct kwq_order_ops kwq_ten_ops = {
	.init			= kwq_ten_init,
	.release		= kwq_ten_release,
	.next			= kwq_ten_next,
	.queue			= kwq_ten_queue,
	.give_back		= kwq_ten_give_back,
	.take			= kwq_ten_take,
	.remove			= kwq_ten_remove,
	.empty			= kwq_ten_empty,
	.check			= kwq_ten_check,
	.gives_back_at_head	= true,
};
