/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The order of a tenant queue (KWQ_CREATE_TENANT, with or without
 * priorities): kwq_tenant.c. What else needs to know of it: the tenant
 * rule, and the flow each of the queue's records carries past its key
 * (and its payload pointer): the record layout (kwq_payload.h) sizes it,
 * a new record clears it (kwq_ten_rec_init()).
 */
#ifndef _KWQ_TENANT_H
#define _KWQ_TENANT_H

#include <linux/align.h>
#include <linux/list.h>
#include <linux/rbtree.h>
#include <linux/types.h>

#include "kwq_item.h"
#include "kwq_order.h"

/**
 * struct kwq_flow - one tenant's queued keys at one level
 * @node: in kwq_tenants.flows, by (@level, tenant bytes); RB_EMPTY_NODE
 *	in every record but the first of a flow's keys.
 * @rr: in kwq_tenants.rr[@level], the level's rotation.
 * @keys: the flow's queued keys, FIFO, linked through kwq_item.ready.
 * @tlen: length of the tenant: the first @tlen bytes of each key.
 * @level: the keys' kwq_item.level.
 *
 * Lives in the record of the first of @keys and moves to the next when
 * that one leaves: a flow is never allocated. Under kwq.lock.
 */
struct kwq_flow {
	struct rb_node node;
	struct list_head rr;
	struct list_head keys;
	u32 tlen;
	u32 level;
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

/* The flow in a record, @skip bytes past its key (kwq_order_attr.rec_skip). */
static inline struct kwq_flow *kwq_ten_flow(struct kwq_item *it, u32 skip)
{
	return (struct kwq_flow *)(it->key + ALIGN((u32)it->len, sizeof(void *)) + skip);
}

/* A new record of a tenant queue: its flow slot holds no flow. */
static inline void kwq_ten_rec_init(struct kwq_item *it, u32 skip)
{
	RB_CLEAR_NODE(&kwq_ten_flow(it, skip)->node);
}

extern const struct kwq_order_ops kwq_ten_ops;

#endif /* _KWQ_TENANT_H */
