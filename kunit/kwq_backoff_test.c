// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite for rate-limited adds through a queue: add-rate-limited,
 * forget, num-requeues, the bound on backoff-only keys and the token
 * give-back, on a fake clock. The limiter formulas themselves are tested
 * in kwq_limiter_test.c.
 */

#include <kunit/test.h>
#include <linux/string.h>

#include "kwq.h"
#include "kwq_fake_clock.h"

static int limited(struct kwq *q, const char *key)
{
	return kwq_add_rate_limited(q, key, strlen(key));
}

static int requeues(struct kwq *q, const char *key)
{
	return kwq_num_requeues(q, key, strlen(key));
}

/* Take @key now and finish it (without forgetting its failures). */
static void run_once(struct kunit *test, struct kwq *q, const char *key)
{
	char buf[32];
	u32 len = 0;
	int ret = kwq_get(q, buf, sizeof(buf) - 1, &len, KWQ_NOWAIT);

	buf[ret ? 0 : len] = '\0';
	KUNIT_EXPECT_EQ(test, ret, 0);
	KUNIT_EXPECT_STREQ(test, buf, key);
	KUNIT_EXPECT_EQ(test, kwq_done(q, key, strlen(key)), KWQ_DONE_FINISHED);
}

/* On the test's heap: struct kwq_stats is too big for KASAN stack frames. */
static struct kwq_stats *stats(struct kunit *test, struct kwq *q)
{
	struct kwq_stats *st = kunit_kzalloc(test, sizeof(*st), GFP_KERNEL);

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, st);
	kwq_stats(q, st);
	return st;
}

/* The default controller limiter: 5 ms, 10 ms, 20 ms ... per key. */
static void kwq_backoff_test_exponential(struct kunit *test)
{
	struct fake_clock *fc = fake_queue(test, NULL);
	struct kwq *q = fc->q;

	KUNIT_EXPECT_EQ(test, limited(q, "k"), KWQ_ADD_WAITING);
	KUNIT_EXPECT_EQ(test, fc->programmed, ktime_add_ns(fc->now, MS(5)));
	/* A second failure before the first retry: the earlier deadline wins. */
	KUNIT_EXPECT_EQ(test, limited(q, "k"), KWQ_ADD_WAIT_KEPT);
	KUNIT_EXPECT_EQ(test, requeues(q, "k"), 2);
	step(fc, MS(5));
	run_once(test, q, "k");
	/* Failures survive done: the third retry waits 4 x base. */
	KUNIT_EXPECT_EQ(test, limited(q, "k"), KWQ_ADD_WAITING);
	KUNIT_EXPECT_EQ(test, fc->programmed, ktime_add_ns(fc->now, MS(20)));
	KUNIT_EXPECT_EQ(test, requeues(q, "k"), 3);
	step(fc, MS(20));
	run_once(test, q, "k");
	KUNIT_EXPECT_EQ(test, kwq_forget(q, "k", 1), 1);
	KUNIT_EXPECT_EQ(test, kwq_forget(q, "k", 1), 0);
	KUNIT_EXPECT_EQ(test, requeues(q, "k"), 0);
	KUNIT_EXPECT_EQ(test, stats(test, q)->items, 0);
	KUNIT_EXPECT_EQ(test, limited(q, "k"), KWQ_ADD_WAITING);
	KUNIT_EXPECT_EQ(test, fc->programmed, ktime_add_ns(fc->now, MS(5)));
}

static void kwq_backoff_test_unknown_key(struct kunit *test)
{
	struct fake_clock *fc = fake_queue(test, NULL);

	KUNIT_EXPECT_EQ(test, requeues(fc->q, "nobody"), 0);
	KUNIT_EXPECT_EQ(test, kwq_forget(fc->q, "nobody", 6), 0);
	KUNIT_EXPECT_EQ(test, kwq_forget(fc->q, NULL, 1), -EINVAL);
	KUNIT_EXPECT_EQ(test, stats(test, fc->q)->items, 0);
}

static const struct kwq_ratelimit bucket_10_per_s_burst_2 = {
	.count = 1,
	.limiters = { { .type = KWQ_LIMITER_BUCKET, .rate_mhz = 10000, .burst = 2 } },
};

/* A bucket alone is global and keeps no per-key count (client-go). */
static void kwq_backoff_test_bucket(struct kunit *test)
{
	struct kwq_attr attr = { .ratelimit = &bucket_10_per_s_burst_2 };
	struct fake_clock *fc = fake_queue(test, &attr);
	struct kwq *q = fc->q;

	KUNIT_EXPECT_EQ(test, limited(q, "a"), KWQ_ADD_QUEUED);
	KUNIT_EXPECT_EQ(test, limited(q, "b"), KWQ_ADD_QUEUED);
	KUNIT_EXPECT_EQ(test, limited(q, "c"), KWQ_ADD_WAITING);
	KUNIT_EXPECT_EQ(test, fc->programmed, ktime_add_ns(fc->now, MS(100)));
	KUNIT_EXPECT_EQ(test, requeues(q, "a"), 0);
	KUNIT_EXPECT_EQ(test, stats(test, q)->rate_limited, 3);
}

/*
 * No wasted tokens: a rate-limited add absorbed by the key's own earlier
 * state gives its token back, so the next key is not delayed for it.
 */
static void kwq_backoff_test_token_give_back(struct kunit *test)
{
	struct kwq_attr attr = { .ratelimit = &bucket_10_per_s_burst_2 };
	struct fake_clock *fc = fake_queue(test, &attr);
	struct kwq *q = fc->q;

	KUNIT_EXPECT_EQ(test, limited(q, "a"), KWQ_ADD_QUEUED);
	KUNIT_EXPECT_EQ(test, limited(q, "a"), KWQ_ADD_DUPLICATE);
	KUNIT_EXPECT_EQ(test, limited(q, "a"), KWQ_ADD_DUPLICATE);
	KUNIT_EXPECT_EQ(test, stats(test, q)->tokens_returned, 2);
	/* Without the give-back this would wait 100 ms. */
	KUNIT_EXPECT_EQ(test, limited(q, "b"), KWQ_ADD_QUEUED);
	KUNIT_EXPECT_EQ(test, limited(q, "c"), KWQ_ADD_WAITING);
	/* A key already waiting for an earlier deadline gives its token back too. */
	KUNIT_EXPECT_EQ(test, limited(q, "c"), KWQ_ADD_WAIT_KEPT);
	KUNIT_EXPECT_EQ(test, stats(test, q)->tokens_returned, 3);
	KUNIT_EXPECT_EQ(test, fc->programmed, ktime_add_ns(fc->now, MS(100)));
}

/*
 * An add whose delay gives a queued key a waiting entry schedules
 * something new: it keeps its tokens. The default limiter (exponential,
 * then a bucket of 10/s burst 100) delays every failure by 5 ms or more.
 */
static void kwq_backoff_test_waiting_keeps_token(struct kunit *test)
{
	struct fake_clock *fc = fake_queue(test, NULL);
	struct kwq *q = fc->q;

	KUNIT_EXPECT_EQ(test, kwq_add(q, "a", 1), KWQ_ADD_QUEUED);
	KUNIT_EXPECT_EQ(test, limited(q, "a"), KWQ_ADD_WAITING);
	KUNIT_EXPECT_EQ(test, stats(test, q)->tokens_returned, 0);
	KUNIT_EXPECT_EQ(test, limited(q, "a"), KWQ_ADD_WAIT_KEPT);
	KUNIT_EXPECT_EQ(test, stats(test, q)->tokens_returned, 1);
}

/* A policy of no limiters (count 0) keeps no failure count either. */
static void kwq_backoff_test_empty_policy(struct kunit *test)
{
	static const struct kwq_ratelimit none = { .count = 0 };
	struct kwq_attr attr = { .ratelimit = &none };
	struct fake_clock *fc = fake_queue(test, &attr);
	struct kwq *q = fc->q;
	int i;

	for (i = 0; i < 3; i++) {
		KUNIT_EXPECT_EQ(test, limited(q, "a"), KWQ_ADD_QUEUED);
		run_once(test, q, "a");
	}
	KUNIT_EXPECT_EQ(test, requeues(q, "a"), 0);
	KUNIT_EXPECT_EQ(test, stats(test, q)->rate_limited, 3);
}

/* Backoff-only keys are bounded; the least recently active go first. */
static void kwq_backoff_test_eviction(struct kunit *test)
{
	struct kwq_attr attr = { .max_backoff_keys = 3 };
	struct fake_clock *fc = fake_queue(test, &attr);
	struct kwq *q = fc->q;
	static const char *const keys[] = { "k0", "k1", "k2", "k3", "k4" };
	struct kwq_stats *st;
	int i;

	for (i = 0; i < ARRAY_SIZE(keys); i++) {
		KUNIT_EXPECT_EQ(test, limited(q, keys[i]), KWQ_ADD_WAITING);
		step(fc, MS(5));
		run_once(test, q, keys[i]);
	}
	st = stats(test, q);
	KUNIT_EXPECT_EQ(test, st->backoff_keys, 3);
	KUNIT_EXPECT_EQ(test, st->backoff_evictions, 2);
	KUNIT_EXPECT_EQ(test, st->items, 3);
	KUNIT_EXPECT_EQ(test, requeues(q, "k0"), 0);
	KUNIT_EXPECT_EQ(test, requeues(q, "k1"), 0);
	KUNIT_EXPECT_EQ(test, requeues(q, "k2"), 1);
	KUNIT_EXPECT_EQ(test, requeues(q, "k4"), 1);
	/* A backoff-only key that becomes active leaves the bound's count. */
	KUNIT_EXPECT_EQ(test, kwq_add(q, "k2", 2), KWQ_ADD_QUEUED);
	KUNIT_EXPECT_EQ(test, stats(test, q)->backoff_keys, 2);
	KUNIT_EXPECT_EQ(test, requeues(q, "k2"), 1);
}

/* At max_items a backoff-only key makes room for new work. */
static void kwq_backoff_test_room_for_work(struct kunit *test)
{
	struct kwq_attr attr = { .max_items = 2 };
	struct fake_clock *fc = fake_queue(test, &attr);
	struct kwq *q = fc->q;

	limited(q, "old");
	step(fc, MS(5));
	run_once(test, q, "old");
	KUNIT_EXPECT_EQ(test, kwq_add(q, "a", 1), KWQ_ADD_QUEUED);
	KUNIT_EXPECT_EQ(test, kwq_add(q, "b", 1), KWQ_ADD_QUEUED);
	KUNIT_EXPECT_EQ(test, stats(test, q)->backoff_evictions, 1);
	KUNIT_EXPECT_EQ(test, kwq_add(q, "c", 1), -ENOSPC);
}

static void kwq_backoff_test_shutdown(struct kunit *test)
{
	struct fake_clock *fc = fake_queue(test, NULL);

	kwq_shutdown(fc->q);
	KUNIT_EXPECT_EQ(test, limited(fc->q, "k"), -ESHUTDOWN);
	KUNIT_EXPECT_EQ(test, requeues(fc->q, "k"), 0);
	KUNIT_EXPECT_EQ(test, stats(test, fc->q)->rate_limited, 0);
}

/* Destroying a queue frees backoff-only records (kmemleak checks). */
static void kwq_backoff_test_destroy(struct kunit *test)
{
	struct fake_clock *fc = fake_queue(test, NULL);
	char key[16];
	int i;

	for (i = 0; i < 50; i++) {
		scnprintf(key, sizeof(key), "d%d", i);
		limited(fc->q, key);
	}
	step(fc, MS(5));
	for (i = 0; i < 50; i++) {
		scnprintf(key, sizeof(key), "d%d", i);
		run_once(test, fc->q, key);
	}
	KUNIT_EXPECT_EQ(test, stats(test, fc->q)->backoff_keys, 50);
	kwq_destroy(fc->q);
	fc->q = NULL;
}

static void kwq_backoff_test_invalid_limiter(struct kunit *test)
{
	static const struct kwq_ratelimit bad = {
		.count = 1,
		.limiters = { { .type = KWQ_LIMITER_EXPONENTIAL, .base_ns = 0, .max_ns = 1 } },
	};
	static const struct kwq_ratelimit never_slow = {
		.count = 1,
		.limiters = { { .type = KWQ_LIMITER_FAST_SLOW, .max_fast = 1U << 20,
				.fast_ns = 1, .slow_ns = 2 } },
	};
	struct kwq_attr attr = { .ratelimit = &bad };

	KUNIT_EXPECT_EQ(test, PTR_ERR(kwq_create(NULL, &attr)), -EINVAL);
	attr.ratelimit = &never_slow;
	KUNIT_EXPECT_EQ(test, PTR_ERR(kwq_create(NULL, &attr)), -EINVAL);
}

static struct kunit_case kwq_backoff_cases[] = {
	KUNIT_CASE(kwq_backoff_test_exponential),
	KUNIT_CASE(kwq_backoff_test_unknown_key),
	KUNIT_CASE(kwq_backoff_test_bucket),
	KUNIT_CASE(kwq_backoff_test_token_give_back),
	KUNIT_CASE(kwq_backoff_test_waiting_keeps_token),
	KUNIT_CASE(kwq_backoff_test_empty_policy),
	KUNIT_CASE(kwq_backoff_test_eviction),
	KUNIT_CASE(kwq_backoff_test_room_for_work),
	KUNIT_CASE(kwq_backoff_test_shutdown),
	KUNIT_CASE(kwq_backoff_test_destroy),
	KUNIT_CASE(kwq_backoff_test_invalid_limiter),
	{}
};

static struct kunit_suite kwq_backoff_suite = {
	.name = "kwq_backoff",
	.exit = fake_clock_exit,
	.test_cases = kwq_backoff_cases,
};

kunit_test_suite(kwq_backoff_suite);
