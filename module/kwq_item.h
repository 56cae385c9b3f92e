/* SPDX-License-Identifier: GPL-2.0 */
/*
 * struct kwq_item: the record of one key in a queue, and all its state.
 * Protected by the queue's lock (kwq_internal.h).
 */
#ifndef _KWQ_ITEM_H
#define _KWQ_ITEM_H

#include <linux/bits.h>
#include <linux/build_bug.h>
#include <linux/container_of.h>
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
#define KWQ_ITEM_WAITING	BIT(2)	/* has a deadline: an entry in kwq.waiting or kwq.far */

struct kwq_busy;
struct kwq_item;

/**
 * union kwq_entry - a waiting key's entry: in kwq.waiting, keyed by its
 *	deadline, or, while kwq_item.far, in a slot of kwq.far (kwq_far.h)
 * @wait: the timerqueue node; @wait.expires is the deadline, in a far
 *	slot too.
 * @far_link: while in a slot, the link in it, over @wait's rb_node
 *	(which is not RB_EMPTY_NODE then).
 *
 * It lives in the key's record while the key only waits (kwq_item.lone),
 * else in its side (struct kwq_side); kwq_entry_owner() finds the key.
 */
union kwq_entry {
	struct timerqueue_node wait;
	struct list_head far_link;
};

/**
 * struct kwq_side - what a key needs besides its record while it is
 *	processing, or while it waits and is also queued or processing, or
 *	waits debounced (the record alone holds a queued key, and a key that
 *	only waits for a plain deadline)
 * @zero: always 0: read as a record's bit fields, it says "not lone"
 *	(kwq_entry_owner()).
 * @entry: while the key waits here, its entry; RB_EMPTY_NODE otherwise.
 * @bound: while the key waits here, the latest time debounced adds may
 *	move its deadline to, or 0 for a plain entry (one debounced adds
 *	cannot postpone); 0 otherwise. Set only in kwq_timer.c.
 * @it: the key's record, which points back here (kwq_item.side).
 * @next: on kwq.side_spare, the next spare.
 * @holder: while the key is PROCESSING, the list of processing keys it is
 *	on (through kwq_item.ready): its lease's (kwq_lease.busy), or the
 *	queue's own for keys taken unleased (kwq.unleased); NULL otherwise. A
 *	lease's end gives back every key of its list before the lease goes
 *	away, so @holder never outlives it, and it visits only its own keys.
 * @ticket: the hand-out's ticket while PROCESSING: stamped by each get
 *	from kwq.next_ticket, so no two hand-outs of a queue share one. Done,
 *	requeue and give-back that name a ticket act only on that hand-out.
 *
 * A queue's sides come from its spares (kwq.side_spare), which every add
 * and get that may need one fills first (kwq_side_ensure_locked()), so
 * the transitions of kwq_state.h that take one never fail; they are
 * carved from pages the queue keeps while any side is in use, then
 * KWQ_SIDES_KEPT sides' worth (kwq_record.c).
 * Under kwq.lock.
 */
struct kwq_side {
	u64 zero;
	union kwq_entry entry;
	ktime_t bound;
	union {
		struct kwq_item *it;
		struct kwq_side *next;
	};
	struct kwq_busy *holder;
	u64 ticket;
};

/**
 * struct kwq_item - the one record of a key and all of its state
 * @hnext: next record in its chain of kwq.items, or on kwq.spare.
 * @hash: kwq_table_hash() of the key (KWQ_HASH_BITS wide), computed once.
 * @far: WAITING, with the entry in a slot of kwq.far rather than on
 *	kwq.waiting.
 * @lone: the key only waits (its state is WAITING alone) for a plain
 *	deadline, and its entry is @entry, over @ready, @stamp and @side.
 *	Otherwise those three are the record's.
 * @level: on a priority queue, the key's priority minus KWQ_PRIORITY_MIN
 *	(kwq_order.h), meaningful while the key has state; else 0.
 * @state: KWQ_ITEM_* bits.
 * @len: key length in bytes.
 * @failures: rate-limited adds since the last forget (NumRequeues),
 *	saturating at KWQ_FAILURES_MAX.
 * @ready: link in the queue's order (kwq_order.h) while the item is
 *	DIRTY and not PROCESSING ("queued" is derived, never stored); in
 *	its holder's list (kwq_side.holder) while PROCESSING; in
 *	kwq.backoff while backoff-only; empty otherwise.
 * @stamp: when the item was queued, or joined its holder's list (ns of
 *	kwq_stamp_now()): the start of its queue latency, then of its work
 *	duration.
 * @side: while the key is PROCESSING or WAITING but not @lone, its side
 *	(struct kwq_side); NULL otherwise.
 * @entry: while @lone, the key's waiting entry.
 * @key: the key bytes.
 *
 * hash, far, lone and level share one word, state, len and failures
 * another. A queued key needs @ready and @stamp, a key that only waits
 * only an entry, so they share 32 bytes; what a processing key needs
 * more, and the entry of a key that waits while queued or processing, are
 * in its side. The fixed part is 48 bytes (offsets below): records with
 * keys up to KWQ_SMALL_KEY bytes come from a slab cache of their own sized
 * to fit, 80 bytes for a 32-byte key, with 72 more for a side.
 */
/*
 * Who may touch a field of struct kwq_item, tagged at each field:
 *
 * K: set with the key when the record is made for it (kwq_item_init()),
 *    before it joins the key table; constant while it is there.
 * L: the queue's kwq.lock. While the key is queued, its order
 *    (kwq_order.h) owns @ready and may lower @stamp.
 */
struct kwq_item {
	struct kwq_item *hnext;		/* L */
	u32 hash:26;			/* K */
	u32 far:1;			/* L */
	u32 lone:1;			/* L */
	u32 level:4;			/* L */
	u32 state:3;			/* L: kwq_state.h only */
	u32 len:10;			/* K */
	u32 failures:19;		/* L */
	union {
		struct {
			struct list_head ready;	/* L */
			u64 stamp;		/* L */
			struct kwq_side *side;	/* L */
		};
		union kwq_entry entry;	/* L */
	};
	u8 key[];			/* K */
};

/*
 * The layout, on 64-bit: hnext 0, the bit fields 8, then ready 16, stamp
 * 32 and side 40, or entry 16 (rb_node 24 and expires 8); key 48; no
 * hole. far_link lies within the rb_node. A side's entry lies 8 bytes
 * after its zero word as a record's lies 8 bytes after its bit fields.
 */
#ifdef CONFIG_64BIT
static_assert(offsetof(struct kwq_item, ready) == 16);
static_assert(offsetof(struct kwq_item, side) == 40);
static_assert(offsetof(struct kwq_item, key) == 48);
static_assert(sizeof(struct kwq_item) == 48);
static_assert(sizeof(struct kwq_side) == 72);
#endif
static_assert(offsetof(struct kwq_item, entry) == sizeof(void *) + sizeof(u64));
static_assert(offsetof(struct kwq_side, entry) == offsetof(struct kwq_side, zero) + sizeof(u64));
static_assert(offsetof(union kwq_entry, far_link) + sizeof(struct list_head) <=
	      offsetof(union kwq_entry, wait.expires));

/*
 * The key whose waiting entry @e is: the record around it if that record
 * is lone, else the side's key. A side's zero word sits where a record's
 * bit fields would, so the test reads within the side and finds lone
 * clear.
 */
static inline struct kwq_item *kwq_entry_owner(union kwq_entry *e)
{
	struct kwq_item *it = container_of(e, struct kwq_item, entry);

	return it->lone ? it : container_of(e, struct kwq_side, entry)->it;
}

/* The key whose entry's node @n is, on kwq.waiting. */
static inline struct kwq_item *kwq_wait_owner(struct timerqueue_node *n)
{
	return kwq_entry_owner(container_of(n, union kwq_entry, wait));
}

/* The waiting entry of a WAITING key. */
static inline union kwq_entry *kwq_item_entry(struct kwq_item *it)
{
	return it->lone ? &it->entry : &it->side->entry;
}

/* The deadline of a WAITING key. */
static inline ktime_t kwq_item_deadline(struct kwq_item *it)
{
	return kwq_item_entry(it)->wait.expires;
}

/* The debounce bound of a WAITING key: 0 for a plain entry. */
static inline ktime_t kwq_item_bound(const struct kwq_item *it)
{
	return it->lone ? 0 : it->side->bound;
}

/* The ticket of a PROCESSING key's hand-out. */
static inline u64 kwq_item_ticket(const struct kwq_item *it)
{
	return it->side->ticket;
}

#define KWQ_FAILURES_MAX	((1U << 19) - 1)

/* Bits of kwq_item.hash: enough for the largest table (KWQ_TABLE_MAX_BITS). */
#define KWQ_HASH_BITS		26

/* Keys up to this length get records from kwq_item_cache. */
#define KWQ_SMALL_KEY		32

/*
 * What a queue's records carry past the key, aligned (kwq_rec_tail()):
 * a payload pointer (kwq_payload.h), then a flow (kwq_tenant.h).
 */
#define KWQ_REC_PAYLOAD		BIT(0)
#define KWQ_REC_TENANT		BIT(1)
#define KWQ_REC_KINDS		4

#endif /* _KWQ_ITEM_H */
