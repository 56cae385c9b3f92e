// SPDX-License-Identifier: GPL-2.0
/*
 * kwq tenants: the flows of a tenant queue (kwq_tenant.h). Called only
 * from the transitions of kwq_state.h, kwq.lock held; nothing here
 * allocates or fails. Documentation/kwq-tenants.rst has the rules and
 * the bound.
 */

#include <linux/slab.h>
#include <linux/string.h>

#include "kwq_core.h"
#include "kwq_payload.h"
#include "kwq_tenant.h"

/**
 * kwq_ten_new() - the rotations of a new tenant queue
 * @depth: struct kwq_attr.tenant_depth, 1 to KWQ_TENANT_DEPTH_MAX.
 * @gfp: allocation flags (the queue's accounting).
 *
 * Return: the rotations, NULL if out of memory.
 */
struct kwq_tenants *kwq_ten_new(u32 depth, gfp_t gfp)
{
	struct kwq_tenants *t = kzalloc(sizeof(*t), gfp);
	u32 l;

	if (!t)
		return NULL;
	t->flows = RB_ROOT;
	for (l = 0; l < KWQ_PRIO_LEVELS; l++)
		INIT_LIST_HEAD(&t->rr[l]);
	t->depth = depth;
	return t;
}

static inline struct kwq_flow *kwq_ten_slot(const struct kwq *q, struct kwq_item *it)
{
	return kwq_flow_slot(it, q->acct.rec_kind);
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
void kwq_ten_queue(struct kwq *q, struct kwq_item *it, bool at_head)
{
	struct kwq_tenants *t = q->ten;
	struct kwq_flow *mine = kwq_ten_slot(q, it), *f;
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
struct kwq_flow *kwq_ten_remove(struct kwq *q, struct kwq_item *it)
{
	struct kwq_tenants *t = q->ten;
	struct kwq_flow *mine = kwq_ten_slot(q, it), *next;
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
	next = kwq_ten_slot(q, list_next_entry(it, ready));
	list_del(&it->ready);
	kwq_flow_move(t, mine, next);
	return next;
}
