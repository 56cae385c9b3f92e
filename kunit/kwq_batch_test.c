// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite for batches (kwq_add_batch(), kwq_get_batch(),
 * kwq_done_batch()): each behaves as its single-key calls one after the
 * other, stops at the first key that fails, and reads the queue's clock
 * once for the whole batch.
 */

#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/err.h>
#include <linux/hrtimer.h>
#include <linux/string.h>

#include "kwq.h"
#include "kwq_compat.h"

/* A clock that counts its reads: time moves only when the test says. */
struct counting_clock {
	struct kwq_clock base;
	ktime_t now;
	unsigned int reads;
};

static ktime_t counting_now(struct kwq_clock *c)
{
	struct counting_clock *cc = container_of(c, struct counting_clock, base);

	cc->reads++;
	return cc->now;
}

static void counting_program(struct kwq_clock *c, struct kwq *q, ktime_t expires)
{
}

struct batch_ctx {
	struct kwq *q;
	struct counting_clock clock;
	struct kwq_key keys[8];
	u32 results[8];
	char buf[3 * KWQ_KEY_MAX];
};

static int batch_test_init(struct kunit *test)
{
	struct batch_ctx *c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);
	struct kwq_attr attr = { .clock = &c->clock.base };

	if (!c)
		return -ENOMEM;
	c->clock.base.now = counting_now;
	c->clock.base.program = counting_program;
	c->clock.now = ms_to_ktime(1000);
	c->q = kwq_create(NULL, &attr);
	if (IS_ERR(c->q))
		return PTR_ERR(c->q);
	test->priv = c;
	return 0;
}

static void batch_test_exit(struct kunit *test)
{
	struct batch_ctx *c = test->priv;

	kwq_destroy(c->q);
}

/* Point keys[0..] at the NUL-terminated strings given. */
static u32 set_keys(struct batch_ctx *c, const char *const *strs, u32 n)
{
	u32 i;

	for (i = 0; i < n; i++) {
		c->keys[i].key = strs[i];
		c->keys[i].len = strlen(strs[i]);
		c->results[i] = 99;
	}
	return n;
}

static void expect_key(struct kunit *test, const struct kwq_key *k, const char *want)
{
	KUNIT_EXPECT_EQ(test, k->len, (u32)strlen(want));
	KUNIT_EXPECT_EQ(test, memcmp(k->key, want, min_t(u32, k->len, strlen(want))), 0);
}

static void kwq_batch_test_add_outcomes(struct kunit *test)
{
	static const char *const strs[] = { "a", "b", "a", "c" };
	struct batch_ctx *c = test->priv;
	struct kwq_key got[4];
	u32 n = set_keys(c, strs, 4);

	KUNIT_ASSERT_EQ(test, kwq_add_batch(c->q, c->keys, n, 0, c->results), 4);
	KUNIT_EXPECT_EQ(test, c->results[0], (u32)KWQ_ADD_QUEUED);
	KUNIT_EXPECT_EQ(test, c->results[1], (u32)KWQ_ADD_QUEUED);
	KUNIT_EXPECT_EQ(test, c->results[2], (u32)KWQ_ADD_DUPLICATE);
	KUNIT_EXPECT_EQ(test, c->results[3], (u32)KWQ_ADD_QUEUED);
	KUNIT_EXPECT_EQ(test, kwq_len(c->q), 3ULL);
	KUNIT_ASSERT_EQ(test, kwq_get_batch(c->q, got, 4, c->buf, sizeof(c->buf), KWQ_NOWAIT), 3);
	expect_key(test, &got[0], "a");
	expect_key(test, &got[1], "b");
	expect_key(test, &got[2], "c");

	/* A key processing is deferred; done requeues it. */
	n = set_keys(c, strs, 1);
	KUNIT_ASSERT_EQ(test, kwq_add_batch(c->q, c->keys, n, 0, c->results), 1);
	KUNIT_EXPECT_EQ(test, c->results[0], (u32)KWQ_ADD_DEFERRED);
	n = set_keys(c, strs, 2);
	KUNIT_ASSERT_EQ(test, kwq_done_batch(c->q, c->keys, n, c->results), 2);
	KUNIT_EXPECT_EQ(test, c->results[0], (u32)KWQ_DONE_REQUEUED);
	KUNIT_EXPECT_EQ(test, c->results[1], (u32)KWQ_DONE_FINISHED);
	KUNIT_EXPECT_EQ(test, kwq_len(c->q), 1ULL);
}

static void kwq_batch_test_add_stops(struct kunit *test)
{
	static const char *const strs[] = { "a", "b", "c" };
	struct batch_ctx *c = test->priv;
	u32 n = set_keys(c, strs, 3);
	struct kwq_stats st;

	c->keys[1].len = 0;
	KUNIT_EXPECT_EQ(test, kwq_add_batch(c->q, c->keys, n, 0, c->results), 1);
	KUNIT_EXPECT_EQ(test, c->results[1], 99U);
	KUNIT_EXPECT_EQ(test, kwq_add_batch(c->q, c->keys + 1, 2, 0, c->results), -EINVAL);
	c->keys[1].len = KWQ_KEY_MAX + 1;
	KUNIT_EXPECT_EQ(test, kwq_add_batch(c->q, c->keys + 1, 2, 0, c->results), -EINVAL);
	KUNIT_EXPECT_EQ(test, kwq_add_batch(c->q, c->keys, n, KWQ_POLICY_STRICT + 1, c->results),
			-EINVAL);
	kwq_stats(c->q, &st);
	KUNIT_EXPECT_EQ(test, st.adds, 1ULL);
	KUNIT_EXPECT_EQ(test, st.items, 1ULL);

	kwq_shutdown(c->q);
	c->keys[1].len = 1;
	KUNIT_EXPECT_EQ(test, kwq_add_batch(c->q, c->keys + 1, 2, 0, c->results), -ESHUTDOWN);
}

static void kwq_batch_test_done_stops(struct kunit *test)
{
	static const char *const strs[] = { "a", "b", "nope", "c" };
	struct batch_ctx *c = test->priv;
	struct kwq_key got[4];
	u32 n = set_keys(c, strs, 4);

	KUNIT_ASSERT_EQ(test, kwq_add_batch(c->q, c->keys, 2, 0, c->results), 2);
	KUNIT_ASSERT_EQ(test, kwq_add(c->q, "c", 1), KWQ_ADD_QUEUED);
	KUNIT_ASSERT_EQ(test, kwq_get_batch(c->q, got, 4, c->buf, sizeof(c->buf), KWQ_NOWAIT), 3);
	KUNIT_EXPECT_EQ(test, kwq_done_batch(c->q, c->keys, n, c->results), 2);
	KUNIT_EXPECT_EQ(test, kwq_done_batch(c->q, c->keys + 2, 2, c->results), -ENOENT);
	KUNIT_EXPECT_EQ(test, kwq_done_batch(c->q, c->keys + 3, 1, c->results), 1);
	KUNIT_EXPECT_EQ(test, kwq_done(c->q, "a", 1), -ENOENT);
}

static void kwq_batch_test_get_limits(struct kunit *test)
{
	struct batch_ctx *c = test->priv;
	char (*big)[400] = kunit_kzalloc(test, 3 * sizeof(*big), GFP_KERNEL);
	struct kwq_key got[3];
	int i;

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, big);

	KUNIT_EXPECT_EQ(test, kwq_get_batch(c->q, got, 3, c->buf, sizeof(c->buf), KWQ_NOWAIT),
			-EAGAIN);
	KUNIT_EXPECT_EQ(test, kwq_get_batch(c->q, got, 0, c->buf, sizeof(c->buf), KWQ_NOWAIT),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, kwq_get_batch(c->q, got, 3, c->buf, KWQ_KEY_MAX - 1, KWQ_NOWAIT),
			-EINVAL);

	/* Keys are packed: two 400-byte keys fit in 1000 bytes, three do not. */
	for (i = 0; i < 3; i++) {
		memset(big[i], 'a' + i, 400);
		KUNIT_ASSERT_EQ(test, kwq_add(c->q, big[i], 400), KWQ_ADD_QUEUED);
	}
	KUNIT_ASSERT_EQ(test, kwq_get_batch(c->q, got, 3, c->buf, 1000, KWQ_NOWAIT), 2);
	KUNIT_EXPECT_EQ(test, got[0].len, 400U);
	KUNIT_EXPECT_EQ(test, memcmp(got[0].key, big[0], 400), 0);
	KUNIT_EXPECT_EQ(test, memcmp(got[1].key, big[1], 400), 0);
	KUNIT_EXPECT_PTR_EQ(test, got[1].key, (const void *)(c->buf + 400));
	KUNIT_ASSERT_EQ(test, kwq_get_batch(c->q, got, 3, c->buf, 1000, KWQ_NOWAIT), 1);
	KUNIT_EXPECT_EQ(test, memcmp(got[0].key, big[2], 400), 0);
	KUNIT_EXPECT_EQ(test, kwq_len(c->q), 0ULL);
}

/*
 * Batches longer than one hold of the lock (64 keys): every key carried
 * out once, in order, and consumers woken across the breaks.
 */
static void kwq_batch_test_long_batches(struct kunit *test)
{
	enum { N = 200 };
	struct batch_ctx *c = test->priv;
	struct kwq_key *keys = kunit_kcalloc(test, N, sizeof(*keys), GFP_KERNEL);
	struct kwq_key *got = kunit_kcalloc(test, N, sizeof(*got), GFP_KERNEL);
	u32 *results = kunit_kcalloc(test, N, sizeof(*results), GFP_KERNEL);
	char (*names)[8] = kunit_kcalloc(test, N, sizeof(*names), GFP_KERNEL);
	char *buf = kunit_kzalloc(test, N * 8, GFP_KERNEL);
	int i, bad = 0, n;
	struct kwq_stats st;

	KUNIT_ASSERT_TRUE(test, keys && got && results && names && buf);
	for (i = 0; i < N; i++) {
		keys[i].len = scnprintf(names[i], sizeof(names[i]), "k%03d", i);
		keys[i].key = names[i];
	}
	KUNIT_ASSERT_EQ(test, kwq_add_batch(c->q, keys, N, 0, results), N);
	for (i = 0; i < N; i++)
		bad += results[i] != KWQ_ADD_QUEUED;
	KUNIT_EXPECT_EQ(test, bad, 0);
	KUNIT_EXPECT_EQ(test, kwq_len(c->q), (u64)N);
	/* A buffer of exactly N 4-byte keys: all fit; KWQ_KEY_MAX is the floor. */
	n = kwq_get_batch(c->q, got, N, buf, max_t(u32, N * 4, KWQ_KEY_MAX), KWQ_NOWAIT);
	KUNIT_ASSERT_EQ(test, n, N);
	for (i = 0; i < N; i++)
		bad += got[i].len != 4 || memcmp(got[i].key, names[i], 4);
	KUNIT_EXPECT_EQ(test, bad, 0);
	KUNIT_ASSERT_EQ(test, kwq_done_batch(c->q, got, N, results), N);
	for (i = 0; i < N; i++)
		bad += results[i] != KWQ_DONE_FINISHED;
	KUNIT_EXPECT_EQ(test, bad, 0);
	kwq_stats(c->q, &st);
	KUNIT_EXPECT_EQ(test, st.items, 0ULL);
	KUNIT_EXPECT_EQ(test, st.dones, (u64)N);
}

/* One clock read per batch, however many keys: the reason batches pay. */
static void kwq_batch_test_one_clock_read(struct kunit *test)
{
	static const char *const strs[] = { "a", "b", "c", "d", "e", "f", "g", "h" };
	struct batch_ctx *c = test->priv;
	struct kwq_key got[8];
	u32 n = set_keys(c, strs, 8);

	c->clock.reads = 0;
	KUNIT_ASSERT_EQ(test, kwq_add_batch(c->q, c->keys, n, 0, c->results), 8);
	KUNIT_EXPECT_EQ(test, c->clock.reads, 1U);
	c->clock.reads = 0;
	KUNIT_ASSERT_EQ(test, kwq_get_batch(c->q, got, 8, c->buf, sizeof(c->buf), KWQ_NOWAIT), 8);
	KUNIT_EXPECT_EQ(test, c->clock.reads, 1U);
	c->clock.reads = 0;
	KUNIT_ASSERT_EQ(test, kwq_done_batch(c->q, c->keys, n, c->results), 8);
	KUNIT_EXPECT_EQ(test, c->clock.reads, 1U);
	/* A single-key get reads it once too, for its latency and its start. */
	KUNIT_ASSERT_EQ(test, kwq_add(c->q, "x", 1), KWQ_ADD_QUEUED);
	c->clock.reads = 0;
	KUNIT_ASSERT_EQ(test, kwq_get_batch(c->q, got, 1, c->buf, sizeof(c->buf), KWQ_NOWAIT), 1);
	KUNIT_EXPECT_EQ(test, c->clock.reads, 1U);
}

struct timer_adder {
	struct hrtimer timer;
	struct kwq *q;
	int ret;
	struct completion fired;
};

static enum hrtimer_restart timer_adder_fire(struct hrtimer *t)
{
	struct timer_adder *ta = container_of(t, struct timer_adder, timer);

	ta->ret = kwq_add_atomic(ta->q, "late", 4);
	complete(&ta->fired);
	return HRTIMER_NORESTART;
}

/* A get batch on an empty queue waits for the first key. */
static void kwq_batch_test_get_waits(struct kunit *test)
{
	struct batch_ctx *c = test->priv;
	struct timer_adder *ta = kunit_kzalloc(test, sizeof(*ta), GFP_KERNEL);
	struct kwq *q = kwq_create(NULL, NULL);
	struct kwq_key got[4];

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, ta);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, q);
	KUNIT_EXPECT_EQ(test, kwq_get_batch(q, got, 4, c->buf, sizeof(c->buf),
					    kwq_deadline_after(2 * NSEC_PER_MSEC)), -ETIMEDOUT);
	ta->q = q;
	init_completion(&ta->fired);
	kwq_hrtimer_setup(&ta->timer, timer_adder_fire, CLOCK_MONOTONIC, HRTIMER_MODE_REL_SOFT);
	hrtimer_start(&ta->timer, ms_to_ktime(20), HRTIMER_MODE_REL_SOFT);
	KUNIT_EXPECT_EQ(test, kwq_get_batch(q, got, 4, c->buf, sizeof(c->buf),
					    kwq_deadline_after(10 * NSEC_PER_SEC)), 1);
	expect_key(test, &got[0], "late");
	KUNIT_EXPECT_TRUE(test, wait_for_completion_timeout(&ta->fired, 10 * HZ));
	hrtimer_cancel(&ta->timer);
	KUNIT_EXPECT_EQ(test, ta->ret, KWQ_ADD_QUEUED);
	kwq_destroy(q);
}

/* Durations on a queue with the real clock: latency covers the sleep. */
static void kwq_batch_test_real_clock_latency(struct kunit *test)
{
	struct kwq *q = kwq_create(NULL, NULL);
	struct kwq_stats st;
	char buf[8];
	u32 len;

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, q);
	KUNIT_ASSERT_EQ(test, kwq_add(q, "k", 1), KWQ_ADD_QUEUED);
	msleep(50);
	KUNIT_ASSERT_EQ(test, kwq_get(q, buf, sizeof(buf), &len, KWQ_NOWAIT), 0);
	msleep(50);
	kwq_stats(q, &st);
	/*
	 * Lower bounds only: a busy machine makes them longer, never
	 * shorter, but local_clock() of two CPUs may differ by up to a tick.
	 */
	KUNIT_EXPECT_GE(test, st.queue_latency_sum_ns, 35ULL * NSEC_PER_MSEC);
	KUNIT_EXPECT_GE(test, st.longest_running_ns, 35ULL * NSEC_PER_MSEC);
	KUNIT_EXPECT_EQ(test, kwq_done(q, buf, len), KWQ_DONE_FINISHED);
	kwq_stats(q, &st);
	KUNIT_EXPECT_GE(test, st.work_duration_sum_ns, 35ULL * NSEC_PER_MSEC);
	kwq_destroy(q);
}

static struct kunit_case kwq_batch_cases[] = {
	KUNIT_CASE(kwq_batch_test_add_outcomes),
	KUNIT_CASE(kwq_batch_test_add_stops),
	KUNIT_CASE(kwq_batch_test_done_stops),
	KUNIT_CASE(kwq_batch_test_get_limits),
	KUNIT_CASE(kwq_batch_test_long_batches),
	KUNIT_CASE(kwq_batch_test_one_clock_read),
	KUNIT_CASE(kwq_batch_test_get_waits),
	KUNIT_CASE(kwq_batch_test_real_clock_latency),
	{}
};

static struct kunit_suite kwq_batch_suite = {
	.name = "kwq_batch",
	.init = batch_test_init,
	.exit = batch_test_exit,
	.test_cases = kwq_batch_cases,
};

kunit_test_suite(kwq_batch_suite);
