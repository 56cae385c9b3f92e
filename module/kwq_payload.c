// SPDX-License-Identifier: GPL-2.0
/*
 * Payloads of keys: making them, the latest-wins replacement in a
 * record, and what they are charged; see kwq_payload.h for the layout
 * and Documentation/kwq-payloads.rst for the rules.
 */

#include <linux/lockdep.h>
#include <linux/moduleparam.h>
#include <linux/overflow.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "kwq_core.h"
#include "kwq_payload.h"

/**
 * kwq_payload_alloc() - an uninitialised payload of @len bytes, one reference
 * @len: 1 to KWQ_PAYLOAD_LIMIT.
 * @gfp: the queue's allocation flags (kwq.gfp), or GFP_ATOMIC.
 *
 * The caller fills @data (from user space, for /dev/kwq) before it is
 * stored.
 *
 * Context: as @gfp allows.
 * Return: the payload or NULL.
 */
struct kwq_payload *kwq_payload_alloc(u32 len, gfp_t gfp)
{
	struct kwq_payload *p;

	if (WARN_ON_ONCE(!len || len > KWQ_PAYLOAD_LIMIT))
		return NULL;
	p = kmalloc(struct_size(p, data, len), gfp);
	if (p) {
		refcount_set(&p->ref, 1);
		p->len = len;
	}
	return p;
}

/**
 * kwq_payload_new() - a payload holding a copy of @len bytes at @data
 * @data: the bytes (kernel memory).
 * @len: 1 to KWQ_PAYLOAD_LIMIT.
 * @gfp: as for kwq_payload_alloc().
 *
 * Return: the payload with one reference, or NULL.
 */
struct kwq_payload *kwq_payload_new(const void *data, u32 len, gfp_t gfp)
{
	struct kwq_payload *p = kwq_payload_alloc(len, gfp);

	if (p)
		memcpy(p->data, data, len);
	return p;
}

/**
 * kwq_payload_put() - drop a reference, freeing the payload with the last
 * @p: a payload, or NULL.
 *
 * kfree() does not sleep: this may run under kwq.lock (a replaced
 * payload nobody is copying goes at once).
 *
 * Context: any but hard interrupts.
 */
void kwq_payload_put(struct kwq_payload *p)
{
	if (p && refcount_dec_and_test(&p->ref))
		kfree(p);
}

/**
 * kwq_payload_bytes() - what a payload of @len bytes is charged
 * @len: its length.
 *
 * Return: its allocated size.
 */
size_t kwq_payload_bytes(u32 len)
{
	return kmalloc_size_roundup(struct_size((struct kwq_payload *)NULL, data, len));
}

/**
 * kwq_payload_check() - whether an add may carry @len bytes of payload
 * @q: queue.
 * @len: the payload's length; 0 for an add without one.
 *
 * Return: 0; -EINVAL for a payload on a queue made without a payload
 * limit; -E2BIG for one longer than the queue's limit.
 */
int kwq_payload_check(const struct kwq *q, u32 len)
{
	if (!len)
		return 0;
	if (!q->payload_max)
		return -EINVAL;
	return len > q->payload_max ? -E2BIG : 0;
}

/**
 * kwq_payload_charge_locked() - charge @p to the queue's owner before it is stored
 * @q: queue.
 * @it: the record it will replace the payload of, or NULL for a new key.
 * @p: the new payload.
 *
 * Only what the replacement adds is checked against the limit: a payload
 * no larger than the one it replaces always fits. kwq_payload_set_locked()
 * must follow at once, under the same hold of kwq.lock.
 *
 * Return: 0, or -ENOSPC with nothing changed.
 */
int kwq_payload_charge_locked(struct kwq *q, const struct kwq_item *it,
			      const struct kwq_payload *p)
{
	struct kwq_payload *old = it ? *kwq_payload_slot((struct kwq_item *)it) : NULL;
	u64 want = kwq_payload_bytes(p->len), had = old ? kwq_payload_bytes(old->len) : 0;

	lockdep_assert_held(&q->lock);
	if (want > had && !kwq_acct_charge_bytes(&q->acct, want - had))
		return -ENOSPC;
	if (want < had)
		kwq_acct_uncharge_bytes(&q->acct, had - want);
	return 0;
}

/**
 * kwq_payload_set_locked() - make @p the key's payload: the latest wins
 * @q: queue.
 * @it: the key's record.
 * @p: the payload, charged by kwq_payload_charge_locked(); the record
 *	takes the caller's reference.
 *
 * A payload the record held is dropped and counted in
 * kwq_stats.payloads_replaced, whatever the key's state: queued, waiting,
 * or processing (its hand-out copied it already; the next run gets @p).
 */
void kwq_payload_set_locked(struct kwq *q, struct kwq_item *it, struct kwq_payload *p)
{
	struct kwq_payload **slot = kwq_payload_slot(it);
	struct kwq_payload *old = *slot;

	lockdep_assert_held(&q->lock);
	if (old) {
		q->payloads_replaced++;
		q->payload_bytes -= old->len;
		kwq_payload_put(old);
	}
	*slot = p;
	q->payload_bytes += p->len;
}

/**
 * kwq_payload_clear_locked() - drop a record's payload, if it has one
 * @q: a payload queue.
 * @it: a record that no longer has any state.
 */
void kwq_payload_clear_locked(struct kwq *q, struct kwq_item *it)
{
	struct kwq_payload **slot = kwq_payload_slot(it);
	struct kwq_payload *p = *slot;

	lockdep_assert_held(&q->lock);
	if (!p)
		return;
	*slot = NULL;
	q->payload_bytes -= p->len;
	kwq_acct_uncharge_bytes(&q->acct, kwq_payload_bytes(p->len));
	kwq_payload_put(p);
}
