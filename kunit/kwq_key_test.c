// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite for the key helpers of module/kwq_key.h: the hash sees every
 * byte and the length, spreads keys that differ only in a counter, and
 * the word-wise compare and copy agree with memcmp() and memcpy() at every
 * length, including the partial last word.
 */

#include <kunit/test.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "kwq.h"
#include "kwq_key.h"

static void key_test_secret(struct kwq_hash_secret *sec)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(sec->s); i++)
		sec->s[i] = get_random_u64() | 1;
}

/* Equal keys hash equal, wherever they are in memory. */
static void kwq_key_test_hash_is_stable(struct kunit *test)
{
	struct kwq_hash_secret sec;
	u8 *a, *b;
	u32 len;

	a = kunit_kmalloc(test, KWQ_KEY_MAX + 1, GFP_KERNEL);
	b = kunit_kmalloc(test, KWQ_KEY_MAX, GFP_KERNEL);
	KUNIT_ASSERT_TRUE(test, a && b);
	key_test_secret(&sec);
	get_random_bytes(b, KWQ_KEY_MAX);
	for (len = 1; len <= KWQ_KEY_MAX; len++) {
		memcpy(a + 1, b, len);	/* an unaligned copy */
		KUNIT_ASSERT_EQ(test, kwq_key_hash(a + 1, len, &sec),
				kwq_key_hash(b, len, &sec));
	}
}

/*
 * Flipping any one bit of a key changes its hash, and so does its length:
 * a hash that skipped a byte (the partial last word, the middle of short
 * keys) or ignored the length would fail here. A chance collision has
 * odds of 2^-32 per pair.
 */
static void kwq_key_test_hash_sees_every_bit(struct kunit *test)
{
	static const u32 lens[] = { 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33,
				    48, 63, 64, 65, 100, KWQ_KEY_MAX };
	struct kwq_hash_secret sec;
	unsigned int i, bit;
	u8 *key;

	key = kunit_kmalloc(test, KWQ_KEY_MAX, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, key);
	key_test_secret(&sec);
	get_random_bytes(key, KWQ_KEY_MAX);
	for (i = 0; i < ARRAY_SIZE(lens); i++) {
		u32 len = lens[i], h = kwq_key_hash(key, len, &sec);
		u32 pos;

		for (pos = 0; pos < len; pos++) {
			for (bit = 0; bit < 8; bit++) {
				key[pos] ^= 1 << bit;
				KUNIT_EXPECT_NE_MSG(test, kwq_key_hash(key, len, &sec), h,
						    "len %u byte %u bit %u", len, pos, bit);
				key[pos] ^= 1 << bit;
			}
		}
		if (len > 1)
			KUNIT_EXPECT_NE_MSG(test, kwq_key_hash(key, len - 1, &sec), h,
					    "len %u vs %u", len, len - 1);
	}
	/* Zero bytes still count: "a" and "a\0" differ. */
	memset(key, 0, 16);
	for (i = 1; i < 16; i++)
		KUNIT_EXPECT_NE(test, kwq_key_hash(key, i, &sec), kwq_key_hash(key, i + 1, &sec));
}

/*
 * Keys that differ only in a decimal counter, as names of objects often
 * do, spread over a table's buckets like random numbers: 8192 keys in
 * 1024 buckets average 8; the fullest is expected near 17 and a
 * uniform hash passes 30 with odds below 10^-6. A hash that dropped the
 * bytes where the counter is, or mixed them poorly, fails.
 */
static void kwq_key_test_hash_spreads(struct kunit *test)
{
	struct kwq_hash_secret sec;
	unsigned int i, max = 0;
	u16 *buckets;
	char key[40];

	buckets = kunit_kcalloc(test, 1024, sizeof(*buckets), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, buckets);
	key_test_secret(&sec);
	for (i = 0; i < 8192; i++) {
		int len = snprintf(key, sizeof(key), "default/pod-%026u", i);
		u16 *b = &buckets[kwq_key_hash(key, len, &sec) & 1023];

		max = max_t(unsigned int, max, ++*b);
	}
	KUNIT_EXPECT_LE(test, max, 30U);
}

/* kwq_key_equal() and kwq_key_copy() against memcmp() and memcpy(). */
static void kwq_key_test_compare_and_copy(struct kunit *test)
{
	u8 a[80], b[80], out[82];
	u32 len, pos;

	get_random_bytes(a, sizeof(a));
	for (len = 1; len <= 72; len++) {
		memcpy(b + 1, a, len);
		KUNIT_EXPECT_TRUE(test, kwq_key_equal(a, b + 1, len));
		for (pos = 0; pos < len; pos++) {
			b[1 + pos] ^= 0x80;
			KUNIT_EXPECT_FALSE_MSG(test, kwq_key_equal(a, b + 1, len),
					       "len %u pos %u", len, pos);
			b[1 + pos] ^= 0x80;
		}
		/* The copy writes exactly @len bytes. */
		memset(out, 0xa5, sizeof(out));
		kwq_key_copy(out + 1, a, len);
		KUNIT_EXPECT_EQ(test, out[0], 0xa5);
		KUNIT_EXPECT_EQ(test, memcmp(out + 1, a, len), 0);
		KUNIT_EXPECT_EQ_MSG(test, out[1 + len], 0xa5, "len %u", len);
	}
}

static struct kunit_case kwq_key_cases[] = {
	KUNIT_CASE(kwq_key_test_hash_is_stable),
	KUNIT_CASE(kwq_key_test_hash_sees_every_bit),
	KUNIT_CASE(kwq_key_test_hash_spreads),
	KUNIT_CASE(kwq_key_test_compare_and_copy),
	{}
};

static struct kunit_suite kwq_key_suite = {
	.name = "kwq_key",
	.test_cases = kwq_key_cases,
};

kunit_test_suite(kwq_key_suite);
