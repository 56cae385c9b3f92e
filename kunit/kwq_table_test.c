// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite for the key table (module/kwq_table.c, compiled in here):
 * every record stays findable while a resize moves the buckets a step at
 * a time, inserts and removals in the middle of a resize land where
 * lookups find them, the load picks the sizes, and destroying a table in
 * the middle of a resize frees every record once.
 */

#include <kunit/test.h>
#include <linux/slab.h>

#include "kwq.h"
#include "kwq_table.c"

#define TABLE_TEST_KEYS	5000

static struct kwq_hash_secret table_test_secret = { .s = { 0x9e3779b97f4a7c15ULL | 1,
							   0xc2b2ae3d27d4eb4fULL | 1,
							   0x165667b19e3779f9ULL | 1 } };

static struct kwq_item *table_test_item(struct kunit *test, unsigned int i)
{
	struct kwq_item *it = kunit_kzalloc(test, sizeof(*it) + 32, GFP_KERNEL);
	int len;

	KUNIT_ASSERT_NOT_NULL(test, it);
	len = snprintf((char *)it->key, 32, "ns/object-%u", i);
	it->len = len;
	it->hash = kwq_key_hash(it->key, len, &table_test_secret);
	return it;
}

static struct kwq_item *table_test_find(struct kwq_table *t, struct kwq_item *it)
{
	return kwq_table_find(t, it->key, it->len, it->hash);
}

/* Present records are found as themselves, absent ones not at all. */
static void table_test_check(struct kunit *test, struct kwq_table *t, struct kwq_item **its,
			     const bool *present, unsigned int n)
{
	unsigned int i, found = 0;

	for (i = 0; i < n; i++) {
		struct kwq_item *got = table_test_find(t, its[i]);

		if (present[i]) {
			KUNIT_ASSERT_PTR_EQ_MSG(test, got, its[i], "key %u", i);
			found++;
		} else {
			KUNIT_ASSERT_NULL_MSG(test, got, "key %u", i);
		}
	}
	KUNIT_EXPECT_EQ(test, t->n, found);
}

/*
 * Grow past one record per bucket, then resize step by step: after each
 * step every record is still found, and records inserted and removed in
 * between (on both sides of the moved boundary) are found or not.
 */
/* Records in the new array of a resizing table. */
static unsigned int table_test_new_records(const struct kwq_table *t)
{
	unsigned int n = 0;
	u32 i;

	for (i = 0; i < (1U << t->bits); i++) {
		const struct kwq_item *it;

		for (it = t->buckets[i]; it; it = it->hnext)
			n++;
	}
	return n;
}

static void kwq_table_test_resize_steps(struct kunit *test)
{
	struct kwq_item **its;
	struct kwq_item **buckets, **old;
	struct kwq_table t;
	unsigned int i, steps = 0, next = 0, before;
	bool *present, done;
	u32 bits;

	its = kunit_kcalloc(test, TABLE_TEST_KEYS, sizeof(*its), GFP_KERNEL);
	present = kunit_kcalloc(test, TABLE_TEST_KEYS, sizeof(*present), GFP_KERNEL);
	KUNIT_ASSERT_TRUE(test, its && present);
	for (i = 0; i < TABLE_TEST_KEYS; i++)
		its[i] = table_test_item(test, i);
	KUNIT_ASSERT_EQ(test, kwq_table_init(&t, GFP_KERNEL), 0);
	KUNIT_EXPECT_EQ(test, t.bits, (u32)KWQ_TABLE_MIN_BITS);

	for (; next < 3000; next++) {
		kwq_table_insert(&t, its[next]);
		present[next] = true;
	}
	/* 3000 records in 1024 buckets: grow to 2^13 (twice 3000, rounded up). */
	bits = kwq_table_want_resize(&t);
	KUNIT_ASSERT_EQ(test, bits, 13U);
	table_test_check(test, &t, its, present, TABLE_TEST_KEYS);

	buckets = kwq_table_alloc(bits, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, buckets);
	kwq_table_begin_resize(&t, buckets, bits);
	do {
		/* Change the table between steps: remove one, add two. */
		kwq_table_remove(&t, its[steps * 7]);
		present[steps * 7] = false;
		kwq_table_insert(&t, its[next]);
		present[next++] = true;
		kwq_table_insert(&t, its[next]);
		present[next++] = true;
		table_test_check(test, &t, its, present, TABLE_TEST_KEYS);
		steps++;
		before = table_test_new_records(&t);
		done = kwq_table_move_step(&t);
		/* The two inserts went to the new array before the step. */
		KUNIT_EXPECT_LE(test, table_test_new_records(&t) - before,
				(unsigned int)KWQ_TABLE_MOVE_KEYS);
	} while (!done);
	/* About 3000 records, at most KWQ_TABLE_MOVE_KEYS a step. */
	KUNIT_EXPECT_GE(test, steps, 3000U / KWQ_TABLE_MOVE_KEYS);
	old = kwq_table_end_resize(&t);
	KUNIT_EXPECT_PTR_EQ(test, t.old, NULL);
	kwq_table_free(old);
	table_test_check(test, &t, its, present, TABLE_TEST_KEYS);
	KUNIT_EXPECT_EQ(test, kwq_table_want_resize(&t), 0U);

	/* Below one record per eight buckets: shrink, not below the minimum. */
	for (i = 0; i < TABLE_TEST_KEYS; i++) {
		if (present[i] && i % 8) {
			kwq_table_remove(&t, its[i]);
			present[i] = false;
		}
	}
	table_test_check(test, &t, its, present, TABLE_TEST_KEYS);
	bits = kwq_table_want_resize(&t);
	KUNIT_EXPECT_EQ(test, bits, max_t(u32, KWQ_TABLE_MIN_BITS, order_base_2(t.n * 2)));
	KUNIT_EXPECT_LT(test, bits, 13U);
	for (i = 0; i < TABLE_TEST_KEYS; i++)
		if (present[i])
			kwq_table_remove(&t, its[i]);
	KUNIT_EXPECT_EQ(test, t.n, 0U);
	kwq_table_destroy(&t, NULL);
}

static unsigned int table_test_freed;

static void table_test_free(struct kwq_item *it)
{
	table_test_freed++;
	kfree(it);
}

/* Destroying a table in the middle of a resize frees each record once. */
static void kwq_table_test_destroy_mid_resize(struct kunit *test)
{
	struct kwq_item **buckets;
	struct kwq_table t;
	unsigned int i;

	KUNIT_ASSERT_EQ(test, kwq_table_init(&t, GFP_KERNEL), 0);
	for (i = 0; i < 2000; i++) {
		struct kwq_item *it = kzalloc(sizeof(*it) + 32, GFP_KERNEL);

		KUNIT_ASSERT_NOT_NULL(test, it);
		it->len = snprintf((char *)it->key, 32, "k%u", i);
		it->hash = kwq_key_hash(it->key, it->len, &table_test_secret);
		kwq_table_insert(&t, it);
	}
	buckets = kwq_table_alloc(12, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, buckets);
	kwq_table_begin_resize(&t, buckets, 12);
	KUNIT_EXPECT_FALSE(test, kwq_table_move_step(&t));
	/* 2000 records in 1024 buckets: the 64-record cap stops the step early. */
	KUNIT_EXPECT_LT(test, t.moved, (u32)KWQ_TABLE_MOVE_STEP);
	KUNIT_EXPECT_EQ(test, table_test_new_records(&t), (unsigned int)KWQ_TABLE_MOVE_KEYS);
	table_test_freed = 0;
	kwq_table_destroy(&t, table_test_free);
	KUNIT_EXPECT_EQ(test, table_test_freed, 2000U);
	KUNIT_EXPECT_PTR_EQ(test, t.buckets, NULL);
}

static struct kunit_case kwq_table_cases[] = {
	KUNIT_CASE(kwq_table_test_resize_steps),
	KUNIT_CASE(kwq_table_test_destroy_mid_resize),
	{}
};

static struct kunit_suite kwq_table_suite = {
	.name = "kwq_table",
	.test_cases = kwq_table_cases,
};

kunit_test_suite(kwq_table_suite);
