/* SPDX-License-Identifier: GPL-2.0 */
/*
 * struct kwq_item: the record of one key in a queue, and all its state.
 * Protected by the queue's lock (kwq_internal.h).
 */
#ifndef _KWQ_ITEM_H
#define _KWQ_ITEM_H

#include <linux/bits.h>
#include <linux/build_bug.h>
#include <linux/list.h>
#include <linux/rbtree.h>
#include <linux/stddef.h>
#include <linux/timerqueue.h>
#include <linux/types.h>

/*
 * kwq_item.state bits. An item with no bit set is freed, unless it still
 * has failures, in which case it is "backoff-only" and sits on kwq.backoff.
 */
#define KWQ_ITEM_DIRTY		BIT(0)	/* needs processing */
#define KWQ_ITEM_PROCESSING	BIT(1)	/* handed out, no done yet */
#define KWQ_ITEM_WAITING	BIT(2)	/* on kwq.waiting until its deadline */

struct kwq_busy;

/**
 * struct kwq_item - the one record of a key and all of its state
 * @hnext: next record in its chain of kwq.items, or on kwq.spare.
 * @ready: link in kwq.ready while the item is DIRTY and not PROCESSING
 *	("queued" is derived, never stored); in @holder's list while
 *	PROCESSING; in kwq.backoff while backoff-only.
 * @wait: node in kwq.waiting, keyed by deadline; queued exactly when
 *	the item is WAITING and not @far. @wait.expires is the deadline of
 *	every waiting item, in a far slot too.
 * @far_link: while @far, link in its slot of kwq.far (kwq_far.h), over
 *	@wait's rb_node (which is not RB_EMPTY_NODE then).
 * @bound: while WAITING, the latest time debounced adds may move its
 *	deadline to, or 0 for a plain entry (one debounced adds cannot
 *	postpone). Meaningless otherwise; set whenever an entry is made, and
 *	only in kwq_timer.c.
 * @stamp: when the item joined kwq.ready, or its holder's list (ns of
 *	kwq_stamp_now()): the start of its queue latency, then of its work
 *	duration.
 * @ticket: the hand-out's ticket while PROCESSING: stamped by each get
 *	from kwq.next_ticket, so no two hand-outs of a queue share one. Done,
 *	requeue and give-back that name a ticket act only on that hand-out.
 * @holder: while PROCESSING, the list of processing keys the item is on
 *	(through @ready): its lease's (kwq_lease.busy), or the queue's own
 *	for keys taken unleased (kwq.unleased); NULL otherwise. A lease's
 *	end gives back every key of its list before the lease goes away, so
 *	@holder never outlives it, and it visits only its own keys.
 * @hash: kwq_table_hash() of the key (KWQ_HASH_BITS wide), computed once.
 * @far: WAITING in a slot of kwq.far rather than on kwq.waiting.
 * @level: on a priority queue, the key's priority minus KWQ_PRIORITY_MIN
 *	(kwq_priority.h), meaningful while the key has state; else 0.
 * @state: KWQ_ITEM_* bits.
 * @len: key length in bytes.
 * @failures: rate-limited adds since the last forget (NumRequeues),
 *	saturating at KWQ_FAILURES_MAX.
 * @key: the key bytes.
 *
 * hash, far and level share one word, state, len and failures another;
 * with one link for both the processing keys' order and their lease's
 * list, and the debounce bound,
 * the fixed part is 96 bytes (offsets below); records with keys up to
 * KWQ_SMALL_KEY bytes come from a slab cache of their own sized to fit
 * (128 bytes for a 32-byte key).
 */
struct kwq_item {
	struct kwq_item *hnext;
	struct list_head ready;
	union {
		struct timerqueue_node wait;
		struct list_head far_link;
	};
	ktime_t bound;
	u64 stamp;
	u64 ticket;
	struct kwq_busy *holder;
	u32 hash:27;
	u32 far:1;
	u32 level:4;
	u32 state:3;
	u32 len:10;
	u32 failures:19;
	u8 key[];
};

/*
 * The layout, on 64-bit: hnext 0, ready 8, wait 24 (rb_node 24 and
 * expires 8), bound 56, stamp 64, ticket 72, holder 80, hash 88, the bit
 * fields 92, key 96; no hole. far_link lies within wait's rb_node.
 */
#ifdef CONFIG_64BIT
static_assert(offsetof(struct kwq_item, bound) == 56);
static_assert(offsetof(struct kwq_item, holder) == 80);
static_assert(offsetof(struct kwq_item, key) == 96);
static_assert(sizeof(struct kwq_item) == 96);
#endif
static_assert(offsetof(struct kwq_item, far_link) + sizeof(struct list_head) <=
	      offsetof(struct kwq_item, wait.expires));

#define KWQ_FAILURES_MAX	((1U << 19) - 1)

/* Bits of kwq_item.hash: enough for the largest table (KWQ_TABLE_MAX_BITS). */
#define KWQ_HASH_BITS		27

/* Keys up to this length get records from kwq_item_cache. */
#define KWQ_SMALL_KEY		32

/*
 * What a queue's records carry past the key, aligned (kwq_rec_tail()):
 * a payload pointer (kwq_payload.h), then a flow (kwq_tenant.h).
 */
#define KWQ_REC_PAYLOAD		BIT(0)
#define KWQ_REC_TENANT		BIT(1)
#define KWQ_REC_KINDS		4

/**
 * struct kwq_flow - one tenant's queued keys at one level (kwq_tenant.h)
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

#endif /* _KWQ_ITEM_H */
