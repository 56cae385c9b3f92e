/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Payloads: a small value stored with a key on a queue made with a
 * payload limit (kwq_attr.payload_max). See Documentation/kwq-payloads.rst.
 *
 * A payload is an allocation of its own, charged like key records: to
 * the memory cgroup of the task that adds it (the queue's gfp) and to the
 * owner's max_key_bytes_per_user total (kwq_acct). The record of a key on
 * a payload queue has one pointer more, after its key, aligned (small
 * keys' records come from a cache of their own, kwq_item_payload): records
 * of plain queues keep their size. The pointer is the key's latest
 * payload, or NULL; it changes only under kwq.lock.
 *
 * A get hands out a reference (kwq_handout.payload), copied once the lock
 * is let go of, so no copy of payload bytes runs under the lock. The
 * record keeps its own reference while the key is processing, so that a
 * key given back (lease end, processing timeout, requeue) runs again with
 * it; kwq_item_settle_locked() drops it once the record has no state.
 */
#ifndef _KWQ_PAYLOAD_H
#define _KWQ_PAYLOAD_H

#include <linux/align.h>
#include <linux/refcount.h>
#include <linux/types.h>

#include "kwq_item.h"
#include "kwq_tenant.h"

struct kwq;

/**
 * struct kwq_payload - one payload, immutable once made
 * @ref: the record's reference, and one per get copying it out.
 * @len: bytes in @data, 1 to the queue's payload_max.
 * @data: the bytes.
 */
struct kwq_payload {
	refcount_t ref;
	u32 len;
	u8 data[];
};

/* Hard bound of the module parameter max_payload (kmalloc()ed, never vmalloc). */
#define KWQ_PAYLOAD_LIMIT	65536U

/*
 * Bytes of a record past its fixed part: the key, then (payload queues)
 * the pointer, then (tenant queues) the flow; @kind is KWQ_REC_* bits.
 */
static inline u32 kwq_rec_tail(u32 kind, u32 key_len)
{
	if (!kind)
		return key_len;
	return ALIGN(key_len, sizeof(void *)) +
	       (kind & KWQ_REC_PAYLOAD ? sizeof(void *) : 0) +
	       (kind & KWQ_REC_TENANT ? sizeof(struct kwq_flow) : 0);
}

/* The payload pointer of a record of a payload queue. */
static inline struct kwq_payload **kwq_payload_slot(struct kwq_item *it)
{
	return (struct kwq_payload **)(it->key + ALIGN((u32)it->len, sizeof(void *)));
}

/*
 * Bytes between the key (aligned) and the ordering policy's own part of a
 * record (a tenant queue's flow): kwq_order_attr.rec_skip.
 */
static inline u32 kwq_rec_skip(u32 kind)
{
	return kind & KWQ_REC_PAYLOAD ? sizeof(void *) : 0;
}

size_t kwq_rec_bytes(u32 kind, u32 key_len);
struct kwq_payload *kwq_payload_new(const void *data, u32 len, gfp_t gfp);
struct kwq_payload *kwq_payload_alloc(u32 len, gfp_t gfp);
void kwq_payload_put(struct kwq_payload *p);
size_t kwq_payload_bytes(u32 len);
int kwq_payload_check(const struct kwq *q, u32 len);
int kwq_payload_charge_locked(struct kwq *q, const struct kwq_item *it,
			      const struct kwq_payload *p);
void kwq_payload_set_locked(struct kwq *q, struct kwq_item *it, struct kwq_payload *p);
void kwq_payload_clear_locked(struct kwq *q, struct kwq_item *it);

/**
 * kwq_payload_len() - the length of a key's payload
 * @payloads: the key's queue has payloads (kwq.payload_max).
 * @it: the key's record; kwq.lock held.
 *
 * Return: 0 for a key without one, and on a queue without payloads.
 */
static inline u32 kwq_payload_len(bool payloads, struct kwq_item *it)
{
	struct kwq_payload *p;

	if (!payloads)
		return 0;
	p = *kwq_payload_slot(it);
	return p ? p->len : 0;
}

#endif /* _KWQ_PAYLOAD_H */
