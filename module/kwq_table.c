// SPDX-License-Identifier: GPL-2.0
/*
 * The key table of a queue; see kwq_table.h. Every function but
 * kwq_table_alloc() and kwq_table_free() runs with kwq.lock held (or, for
 * init and destroy, with the queue not yet or no longer shared).
 */

#include <linux/bug.h>
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/random.h>
#include <linux/sched.h>
#include <linux/slab.h>

#include "kwq_table.h"

/**
 * kwq_table_alloc() - allocate an empty bucket array
 * @bits: log2 of the number of buckets.
 * @gfp: allocation flags; may sleep if they allow.
 *
 * Return: the array, or NULL.
 */
struct kwq_item **kwq_table_alloc(u32 bits, gfp_t gfp)
{
	return kvcalloc(1UL << bits, sizeof(struct kwq_item *), gfp | __GFP_NOWARN);
}

/**
 * kwq_table_free() - free a bucket array from kwq_table_alloc()
 * @buckets: the array, or NULL.
 */
void kwq_table_free(struct kwq_item **buckets)
{
	kvfree(buckets);
}

/**
 * kwq_table_init() - set up an empty table of the smallest size
 * @t: the table.
 * @gfp: allocation flags.
 *
 * Draws the table's own hash secrets (kwq_table_hash()).
 *
 * Return: 0 or -ENOMEM.
 */
int kwq_table_init(struct kwq_table *t, gfp_t gfp)
{
	unsigned int i;

	*t = (struct kwq_table){ .bits = KWQ_TABLE_MIN_BITS };
	/* Odd multipliers, as kwq_key_hash() wants. */
	for (i = 0; i < ARRAY_SIZE(t->secret.s); i++)
		t->secret.s[i] = get_random_u64() | 1;
	t->buckets = kwq_table_alloc(t->bits, gfp);
	return t->buckets ? 0 : -ENOMEM;
}

static void kwq_table_free_chains(struct kwq_item **buckets, u32 from, u32 bits,
				  void (*free_item)(struct kwq_item *))
{
	u32 i;

	for (i = from; i < (1U << bits); i++) {
		struct kwq_item *it = buckets[i], *next;

		for (; it; it = next) {
			next = it->hnext;
			free_item(it);
		}
		/* A table of millions of keys takes a while. */
		if (i % KWQ_TABLE_MOVE_STEP == KWQ_TABLE_MOVE_STEP - 1)
			cond_resched();
	}
}

/**
 * kwq_table_destroy() - free the table and every record in it
 * @t: the table, no longer shared.
 * @free_item: frees one record.
 *
 * Context: process context; may sleep.
 */
void kwq_table_destroy(struct kwq_table *t, void (*free_item)(struct kwq_item *))
{
	kwq_table_free_chains(t->buckets, 0, t->bits, free_item);
	if (t->old)
		kwq_table_free_chains(t->old, t->moved, t->old_bits, free_item);
	kwq_table_free(t->buckets);
	kwq_table_free(t->old);
	t->buckets = NULL;
	t->old = NULL;
}

/**
 * kwq_table_want_resize() - whether the table should change size
 * @t: the table.
 *
 * Grows at more than one record per bucket on average, shrinks below one
 * per eight buckets, to twice the records' number rounded up to a power
 * of two, within KWQ_TABLE_MIN_BITS..KWQ_TABLE_MAX_BITS.
 *
 * Return: the log2 size to resize to, or 0 when the size is right.
 */
u32 kwq_table_want_resize(const struct kwq_table *t)
{
	u32 bits;

	if (!kwq_table_off_size(t))
		return 0;
	bits = clamp_t(u32, order_base_2((u64)t->n * 2), KWQ_TABLE_MIN_BITS, KWQ_TABLE_MAX_BITS);
	return bits == t->bits ? 0 : bits;
}

/**
 * kwq_table_begin_resize() - start moving the records to a new array
 * @t: the table, not resizing yet (t->old is NULL).
 * @buckets: an empty array from kwq_table_alloc().
 * @bits: its log2 size.
 */
void kwq_table_begin_resize(struct kwq_table *t, struct kwq_item **buckets, u32 bits)
{
	WARN_ON_ONCE(t->old);
	t->old = t->buckets;
	t->old_bits = t->bits;
	t->moved = 0;
	t->buckets = buckets;
	t->bits = bits;
}

/**
 * kwq_table_move_step() - move the records of the next old buckets
 * @t: the table, resizing.
 *
 * Visits at most KWQ_TABLE_MOVE_STEP old buckets and moves at most
 * KWQ_TABLE_MOVE_KEYS records, so one lock hold stays bounded however the
 * keys fall. A bucket may be left half moved: its rest stays in the old
 * array at index @t->moved, where lookups still look (kwq_table.h).
 *
 * Return: true when every old bucket has been moved.
 */
bool kwq_table_move_step(struct kwq_table *t)
{
	u32 end = min(t->moved + KWQ_TABLE_MOVE_STEP, 1U << t->old_bits);
	u32 keys = 0;

	while (t->moved < end) {
		struct kwq_item *it = t->old[t->moved], **head;

		if (!it) {
			t->moved++;
			continue;
		}
		if (keys++ == KWQ_TABLE_MOVE_KEYS)
			break;
		head = &t->buckets[kwq_table_index(it->hash, t->bits)];
		t->old[t->moved] = it->hnext;
		it->hnext = *head;
		*head = it;
	}
	return t->moved == 1U << t->old_bits;
}

/**
 * kwq_table_end_resize() - finish a resize whose buckets are all moved
 * @t: the table.
 *
 * Return: the old array, for kwq_table_free() once unlocked.
 */
struct kwq_item **kwq_table_end_resize(struct kwq_table *t)
{
	struct kwq_item **old = t->old;

	t->old = NULL;
	t->moved = 0;
	return old;
}
