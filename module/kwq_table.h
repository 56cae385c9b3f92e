/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The key table of a queue: key -> struct kwq_item, a chained hash table
 * protected by kwq.lock like everything else in the queue.
 *
 * Why not rhashtable: every lookup, insert and removal already runs under
 * kwq.lock, so rhashtable's own protection (RCU read sections, bucket bit
 * locks that disable bottom halves, atomic element counts) is pure cost,
 * and it was about a quarter of the instructions of an add and a done.
 *
 * What is kept from it: the table never rehashes in one piece under the
 * lock. When the load leaves 1/8..1 records per bucket
 * (kwq_table_off_size()), the caller schedules a resize; a worker
 * allocates the new bucket array unlocked (kwq_table_want_resize() says
 * its size), then moves the old buckets over, at most 64 records and
 * 256 buckets at a time, taking and dropping the lock around each step.
 * In between, a lookup searches the new array and, for old buckets not
 * moved yet or moved in part, the old one.
 */
#ifndef _KWQ_TABLE_H
#define _KWQ_TABLE_H

#include <linux/bug.h>
#include <linux/types.h>

#include "kwq_item.h"
#include "kwq_key.h"

/* The smallest table: 1024 buckets, 8 KiB, also the size of a new one. */
#define KWQ_TABLE_MIN_BITS	10
/* The largest: 2^26 buckets (512 MiB), beyond any max_items_per_queue. */
#define KWQ_TABLE_MAX_BITS	26
static_assert(KWQ_TABLE_MAX_BITS <= KWQ_HASH_BITS);
/* Old buckets visited, and keys moved, per lock hold during a resize. */
#define KWQ_TABLE_MOVE_STEP	256
#define KWQ_TABLE_MOVE_KEYS	64	/* KWQ_LOCK_STEP, the bound of every hold */

/**
 * struct kwq_table - a chained hash table of key records
 * @buckets: 1 << @bits chains, linked through kwq_item.hnext.
 * @old: during a resize, the previous array, whose buckets from @moved
 *	on still hold their chains; else NULL.
 * @bits: log2 of the number of buckets.
 * @old_bits: log2 of the size of @old.
 * @moved: buckets of @old already moved to @buckets.
 * @n: records in the table.
 * @resizing: a resize is scheduled or running; no other is scheduled.
 * @secret: the secrets of kwq_table_hash(), drawn for each table, so
 *	that keys found to collide in one queue say nothing of another.
 */
struct kwq_table {
	struct kwq_item **buckets;
	struct kwq_item **old;
	u32 bits;
	u32 old_bits;
	u32 moved;
	u32 n;
	bool resizing;
	struct kwq_hash_secret secret;
};

int kwq_table_init(struct kwq_table *t, gfp_t gfp);
void kwq_table_destroy(struct kwq_table *t, void (*free_item)(struct kwq_item *));
u32 kwq_table_want_resize(const struct kwq_table *t);
struct kwq_item **kwq_table_alloc(u32 bits, gfp_t gfp);
void kwq_table_free(struct kwq_item **buckets);
void kwq_table_begin_resize(struct kwq_table *t, struct kwq_item **buckets, u32 bits);
bool kwq_table_move_step(struct kwq_table *t);
struct kwq_item **kwq_table_end_resize(struct kwq_table *t);

/* The hot path, inline: lookups, inserts and removals of every call. */

/**
 * kwq_table_hash() - the hash of a key in this table
 * @t: the table; its secret is constant after kwq_table_init(), so this
 *	needs no lock.
 * @key: the key bytes.
 * @len: their number, at least 1.
 *
 * Return: the hash kwq_table_find() and kwq_item.hash take.
 */
static inline u32 kwq_table_hash(const struct kwq_table *t, const u8 *key, u32 len)
{
	return kwq_key_hash(key, len, &t->secret) & ((1U << KWQ_HASH_BITS) - 1);
}

static inline u32 kwq_table_index(u32 hash, u32 bits)
{
	return hash & ((1U << bits) - 1);
}

static inline struct kwq_item *kwq_chain_find(struct kwq_item *it, const u8 *key, u32 len, u32 hash)
{
	for (; it; it = it->hnext)
		if (it->hash == hash && it->len == len && kwq_key_equal(it->key, key, len))
			return it;
	return NULL;
}

/**
 * kwq_table_find() - look a key up
 * @t: the table.
 * @key: the key bytes.
 * @len: their number.
 * @hash: kwq_key_hash() of the key.
 *
 * Return: the key's record, or NULL.
 */
static inline struct kwq_item *kwq_table_find(const struct kwq_table *t, const u8 *key,
					      u32 len, u32 hash)
{
	struct kwq_item *it = kwq_chain_find(t->buckets[kwq_table_index(hash, t->bits)],
					     key, len, hash);
	u32 i;

	if (it || likely(!t->old))
		return it;
	i = kwq_table_index(hash, t->old_bits);
	return i >= t->moved ? kwq_chain_find(t->old[i], key, len, hash) : NULL;
}

/**
 * kwq_table_insert() - add a record whose key is not in the table
 * @t: the table.
 * @it: the record, its key and hash set.
 */
static inline void kwq_table_insert(struct kwq_table *t, struct kwq_item *it)
{
	struct kwq_item **head = &t->buckets[kwq_table_index(it->hash, t->bits)];

	it->hnext = *head;
	*head = it;
	t->n++;
}

/* Unlink @it from the chain at @pp; false if it is not there. */
static inline bool kwq_chain_unlink(struct kwq_item **pp, struct kwq_item *it)
{
	for (; *pp; pp = &(*pp)->hnext) {
		if (*pp == it) {
			*pp = it->hnext;
			it->hnext = NULL;
			return true;
		}
	}
	return false;
}

/**
 * kwq_table_remove() - take a record out of the table
 * @t: the table.
 * @it: a record in it.
 */
static inline void kwq_table_remove(struct kwq_table *t, struct kwq_item *it)
{
	bool found = kwq_chain_unlink(&t->buckets[kwq_table_index(it->hash, t->bits)], it);

	if (!found && t->old) {
		u32 i = kwq_table_index(it->hash, t->old_bits);

		found = i >= t->moved && kwq_chain_unlink(&t->old[i], it);
	}
	if (!WARN_ON_ONCE(!found))
		t->n--;
}

/* Whether the load left 1/8..1 record per bucket: a cheap test first. */
static inline bool kwq_table_off_size(const struct kwq_table *t)
{
	u32 size = 1U << t->bits;

	return (t->n > size && t->bits < KWQ_TABLE_MAX_BITS) ||
	       (t->n < size / 8 && t->bits > KWQ_TABLE_MIN_BITS);
}

#endif /* _KWQ_TABLE_H */
