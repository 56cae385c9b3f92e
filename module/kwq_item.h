/* SPDX-License-Identifier: GPL-2.0 */
/*
 * struct kwq_item: the record of one key in a queue, and all its state.
 * Protected by the queue's lock (kwq_internal.h).
 */
#ifndef _KWQ_ITEM_H
#define _KWQ_ITEM_H

#include <linux/bits.h>
#include <linux/list.h>
#include <linux/timerqueue.h>
#include <linux/types.h>

/*
 * kwq_item.state bits. An item with no bit set is freed, unless it still
 * has failures, in which case it is "backoff-only" and sits on kwq.backoff.
 */
#define KWQ_ITEM_DIRTY		BIT(0)	/* needs processing */
#define KWQ_ITEM_PROCESSING	BIT(1)	/* handed out, no done yet */
#define KWQ_ITEM_WAITING	BIT(2)	/* on kwq.waiting until its deadline */

/**
 * struct kwq_item - the one record of a key and all of its state
 * @hnext: next record in its chain of kwq.items, or on kwq.spare.
 * @ready: link in kwq.ready while the item is DIRTY and not PROCESSING
 *	("queued" is derived, never stored); in kwq.busy while PROCESSING;
 *	in kwq.backoff while backoff-only.
 * @wait: node in kwq.waiting, keyed by deadline; queued exactly when
 *	the item is WAITING.
 * @bound: while WAITING, the latest time debounced adds may move its
 *	deadline to, or 0 for a plain entry (one debounced adds cannot
 *	postpone). Meaningless otherwise; set whenever an entry is made, and
 *	only in kwq_timer.c.
 * @stamp: when the item joined kwq.ready, or kwq.busy (ns of
 *	kwq_stamp_now()): the start of its queue latency, then of its work
 *	duration.
 * @ticket: the hand-out's ticket while PROCESSING: stamped by each get
 *	from kwq.next_ticket, so no two hand-outs of a queue share one. Done,
 *	requeue and give-back that name a ticket act only on that hand-out.
 * @owner: id of the struct kwq_lease holding the key while PROCESSING,
 *	0 when no lease holds it. 64-bit: ids never wrap, so a new lease
 *	cannot pass for a live one.
 * @leased: link in that lease's kwq_lease.items while @owner is not 0,
 *	empty otherwise, so that a lease's end visits only its own keys.
 * @hash: kwq_key_hash() of the key, computed once.
 * @state: KWQ_ITEM_* bits.
 * @len: key length in bytes.
 * @failures: rate-limited adds since the last forget (NumRequeues),
 *	saturating at KWQ_FAILURES_MAX.
 * @key: the key bytes.
 *
 * state, len and failures share one word to keep the fixed part at 112
 * bytes; records with keys up to KWQ_SMALL_KEY bytes come from a slab
 * cache of their own sized to fit (144 bytes for a 32-byte key).
 */
struct kwq_item {
	struct kwq_item *hnext;
	struct list_head ready;
	struct timerqueue_node wait;
	ktime_t bound;
	u64 stamp;
	u64 ticket;
	u64 owner;
	struct list_head leased;
	u32 hash;
	u32 state:3;
	u32 len:10;
	u32 failures:19;
	u8 key[];
};

#define KWQ_FAILURES_MAX	((1U << 19) - 1)

/* Keys up to this length get records from kwq_item_cache. */
#define KWQ_SMALL_KEY		32

#endif /* _KWQ_ITEM_H */
