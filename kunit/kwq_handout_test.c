// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: the end of a hand-out, and of a queue. Consumers stay after a
 * shutdown while a processing key can come back; a destroyed or freed
 * queue runs no deadline and tells its clock so; one deadline wakes one
 * or two sleeping consumers, not all of them; a woken get batch takes
 * every key ready by then.
 */
#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/string.h>

#include "kwq.h"
#include "kwq_internal.h"
#include "kwq_pool.h"
#include "kwq_fake_clock.h"

static int get_nowait(struct kwq *q, const char *want)
{
	char buf[32];
	u32 len = 0;
	int ret = kwq_get(q, buf, sizeof(buf) - 1, &len, KWQ_NOWAIT);

	if (ret)
		return ret;
	buf[len] = '\0';
	return strcmp(buf, want) ? -EBADMSG : 0;
}

/* After shutdown a get waits ("not now") while a key is processing. */
static void kwq_handout_test_shutdown_waits_for_processing(struct kunit *test)
{
	struct fake_clock *fc = fake_queue(test, NULL);
	struct kwq *q = fc->q;

	KUNIT_EXPECT_EQ(test, kwq_add(q, "k", 1), KWQ_ADD_QUEUED);
	KUNIT_EXPECT_EQ(test, get_nowait(q, "k"), 0);
	kwq_shutdown(q);
	KUNIT_EXPECT_EQ(test, get_nowait(q, "k"), -EAGAIN);
	/* The holder gives it back: a consumer still there gets it. */
	KUNIT_EXPECT_EQ(test, kwq_requeue(q, "k", 1), 0);
	KUNIT_EXPECT_EQ(test, get_nowait(q, "k"), 0);
	KUNIT_EXPECT_EQ(test, kwq_done(q, "k", 1), KWQ_DONE_FINISHED);
	KUNIT_EXPECT_EQ(test, get_nowait(q, "k"), -ESHUTDOWN);
	KUNIT_EXPECT_EQ(test, kwq_shutdown_drain(q, KWQ_NOWAIT, 0), 0);
}

/* A processing timeout after shutdown brings the key back to a consumer. */
static void kwq_handout_test_shutdown_timeout_returns(struct kunit *test)
{
	struct kwq_attr attr = { .processing_timeout_ns = MS(100) };
	struct fake_clock *fc = fake_queue(test, &attr);
	struct kwq *q = fc->q;
	char buf[8];
	u64 t1 = 0, t2 = 0;
	u32 len;

	kwq_add(q, "k", 1);
	KUNIT_EXPECT_EQ(test, kwq_get_ticket(q, buf, sizeof(buf), &len, &t1, KWQ_NOWAIT), 0);
	kwq_shutdown(q);
	KUNIT_EXPECT_EQ(test, get_nowait(q, "k"), -EAGAIN);
	step(fc, MS(100));
	KUNIT_EXPECT_EQ(test, kwq_get_ticket(q, buf, sizeof(buf), &len, &t2, KWQ_NOWAIT), 0);
	KUNIT_EXPECT_EQ(test, kwq_done_ticket(q, "k", 1, t1), -ENOENT);
	KUNIT_EXPECT_EQ(test, kwq_done_ticket(q, "k", 1, t2), KWQ_DONE_FINISHED);
	KUNIT_EXPECT_EQ(test, get_nowait(q, "k"), -ESHUTDOWN);
}

/* A destroyed queue runs no deadline, and says so to its clock. */
static void kwq_handout_test_destroyed_runs_nothing(struct kunit *test)
{
	struct kwq_attr attr = { .processing_timeout_ns = MS(100) };
	struct fake_clock *fc = fake_queue(test, &attr);
	struct kwq *q = fc->q;
	struct kwq_stats st;
	u64 ticket;
	char buf[8];
	u32 len;

	kwq_add(q, "p", 1);
	KUNIT_EXPECT_EQ(test, kwq_get_ticket(q, buf, sizeof(buf), &len, &ticket, KWQ_NOWAIT), 0);
	KUNIT_EXPECT_EQ(test, kwq_add_after(q, "w", 1, MS(50), 0), KWQ_ADD_WAITING);
	KUNIT_EXPECT_NE(test, fc->programmed, KTIME_MAX);
	kwq_get_ref(q);
	kwq_destroy(q);
	fc->q = NULL;
	KUNIT_EXPECT_EQ(test, fc->programmed, KTIME_MAX);
	fc->now = ktime_add_ns(fc->now, MS(1000));
	kwq_run_due(q);
	kwq_stats(q, &st);
	KUNIT_EXPECT_EQ(test, st.processing_expiries, 0);
	KUNIT_EXPECT_EQ(test, st.fired, 0);
	KUNIT_EXPECT_EQ(test, fc->programmed, KTIME_MAX);
	kwq_put(q);
}

/* An anonymous queue nobody destroyed tells its clock when it is freed. */
static void kwq_handout_test_release_tells_clock(struct kunit *test)
{
	struct fake_clock *fc = fake_queue(test, NULL);
	struct kwq *q = fc->q;

	KUNIT_EXPECT_EQ(test, kwq_add_after(q, "w", 1, MS(50), 0), KWQ_ADD_WAITING);
	KUNIT_EXPECT_NE(test, fc->programmed, KTIME_MAX);
	fc->q = NULL;
	kwq_put(q);
	KUNIT_EXPECT_EQ(test, fc->programmed, KTIME_MAX);
}

#define SLEEPERS	6

struct sleeper {
	struct kwq *q;
	struct completion done;
	int got;
};

static int sleeper_fn(void *arg)
{
	struct sleeper *s = arg;
	char buf[8];
	u32 len;

	while (!kwq_get(s->q, buf, sizeof(buf), &len, KWQ_FOREVER)) {
		s->got++;
		kwq_done(s->q, buf, len);
	}
	complete(&s->done);
	return 0;
}

/*
 * Consumers that go to sleep while a deadline is armed: when it comes,
 * one keeps the timer and the due key wakes one more; before, each had
 * its own timer and all woke. consumer_wakes counts wakes that found
 * nothing.
 */
static void kwq_handout_test_one_wake_per_deadline(struct kunit *test)
{
	struct sleeper *s = kunit_kcalloc(test, SLEEPERS, sizeof(*s), GFP_KERNEL);
	struct kwq *q = kwq_create(NULL, NULL);
	struct kwq_stats st;
	int i, got = 0;
	s64 wakes;

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, s);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, q);
	KUNIT_EXPECT_EQ(test, kwq_add_after(q, "d", 1, MS(500), 0), KWQ_ADD_WAITING);
	for (i = 0; i < SLEEPERS; i++) {
		s[i].q = q;
		init_completion(&s[i].done);
		KUNIT_ASSERT_FALSE(test, IS_ERR(kthread_run(sleeper_fn, &s[i], "kwq-sleeper")));
	}
	/*
	 * Every sleeper is in, the deadline passes, the key is done: a
	 * loaded guest may take longer than the 1.5 s, so wait for the done.
	 */
	msleep(1500);
	for (i = 0; i < 500; i++) {
		kwq_stats(q, &st);
		if (st.dones == 1)
			break;
		msleep(20);
	}
	wakes = atomic64_read(&q->consumer_wakes);
	kwq_shutdown(q);
	for (i = 0; i < SLEEPERS; i++) {
		KUNIT_EXPECT_TRUE(test, wait_for_completion_timeout(&s[i].done, 10 * HZ));
		got += s[i].got;
	}
	KUNIT_EXPECT_EQ(test, got, 1);
	KUNIT_EXPECT_LE_MSG(test, wakes, 2, "%lld sleepers woke for one due key", wakes);
	kwq_destroy(q);
}

struct two_holders {
	atomic_t calls;
	struct completion entered[2];
	struct completion release[2];
};

/* The first call blocks past the processing timeout; the second, after it. */
static int two_holders_handler(void *ctx, const void *key, u32 len)
{
	struct two_holders *h = ctx;
	int i = atomic_inc_return(&h->calls) - 1;

	if (i < 2) {
		complete(&h->entered[i]);
		wait_for_completion(&h->release[i]);
	}
	return 0;
}

/*
 * A pool worker whose key a processing timeout gave to another worker
 * ends its own hand-out only: the second worker still holds the key.
 */
static void kwq_handout_test_pool_late_done(struct kunit *test)
{
	/* 1 s: the second hand-out must outlast the checks below. */
	struct kwq_attr attr = { .processing_timeout_ns = MS(1000) };
	struct two_holders *h = kunit_kzalloc(test, sizeof(*h), GFP_KERNEL);
	struct kwq_pool_attr pa = { .handler = two_holders_handler, .workers = 2 };
	struct kwq *q = kwq_create(NULL, &attr);
	struct kwq_pool *pool;
	struct kwq_stats st;
	int i, ret;

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, h);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, q);
	for (i = 0; i < 2; i++) {
		init_completion(&h->entered[i]);
		init_completion(&h->release[i]);
	}
	pa.ctx = h;
	pool = kwq_pool_start(q, &pa);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, pool);
	KUNIT_EXPECT_EQ(test, kwq_add(q, "u", 1), KWQ_ADD_QUEUED);
	KUNIT_EXPECT_TRUE(test, wait_for_completion_timeout(&h->entered[0], 10 * HZ));
	/* The timeout puts u back; the other worker takes it. */
	KUNIT_EXPECT_TRUE(test, wait_for_completion_timeout(&h->entered[1], 10 * HZ));
	complete(&h->release[0]);
	/* The first worker's done has run once the pool counts it handled. */
	for (i = 0; i < 1000; i++) {
		struct kwq_pool_stats ps;

		kwq_pool_stats(pool, &ps);
		if (ps.handled)
			break;
		msleep(20);
	}
	kwq_stats(q, &st);
	KUNIT_EXPECT_EQ(test, st.processing, 1);
	KUNIT_EXPECT_EQ(test, st.dones, 0);
	complete(&h->release[1]);
	ret = kwq_pool_stop(pool, KWQ_POOL_DRAIN, kwq_deadline_after(10 * NSEC_PER_SEC), NULL);
	KUNIT_EXPECT_EQ(test, ret, 0);
	kwq_stats(q, &st);
	KUNIT_EXPECT_EQ(test, st.dones, 1);
	KUNIT_EXPECT_EQ(test, st.items, 0);
	kwq_destroy(q);
}

struct batch_adder {
	struct kwq *q;
	struct completion done;
	int ret;
};

/* Once a consumer sleeps on the queue, add three keys in one lock hold. */
static int batch_adder_fn(void *arg)
{
	struct batch_adder *a = arg;
	struct kwq_key keys[3] = {
		{ .key = "b1", .len = 2 }, { .key = "b2", .len = 2 }, { .key = "b3", .len = 2 },
	};
	u32 results[3];
	int i;

	/*
	 * A look without the wait queue's lock is enough: keys added before
	 * the consumer waits are taken by its first look, all three too.
	 */
	for (i = 0; i < 10000 && !waitqueue_active(&a->q->get_wait); i++)
		usleep_range(100, 200);
	a->ret = kwq_add_batch(a->q, keys, 3, KWQ_POLICY_DEFAULT, results);
	complete(&a->done);
	return 0;
}

/*
 * A get batch whose wait ends takes, besides the key it woke for, every
 * key ready by then: here the three keys one add batch readied at once.
 * Its look for more goes without the lock (kwq_get_batch_leased());
 * one that never looked would return 1.
 */
static void kwq_handout_test_woken_batch_takes_ready(struct kunit *test)
{
	struct batch_adder *a = kunit_kzalloc(test, sizeof(*a), GFP_KERNEL);
	struct kwq *q = kwq_create(NULL, NULL);
	static const char *const want[] = { "b1", "b2", "b3" };
	char *buf = kunit_kzalloc(test, 4 * KWQ_KEY_MAX, GFP_KERNEL);
	struct kwq_key got[4];
	int i, n;

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, a);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, buf);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, q);
	a->q = q;
	init_completion(&a->done);
	KUNIT_ASSERT_FALSE(test, IS_ERR(kthread_run(batch_adder_fn, a, "kwq-batch-adder")));
	n = kwq_get_batch(q, got, 4, buf, 4 * KWQ_KEY_MAX, kwq_deadline_after(10 * NSEC_PER_SEC));
	KUNIT_EXPECT_TRUE(test, wait_for_completion_timeout(&a->done, 10 * HZ));
	KUNIT_EXPECT_EQ(test, a->ret, 3);
	/* Expect, not assert: the queue is destroyed whatever came. */
	KUNIT_EXPECT_EQ(test, n, 3);
	for (i = 0; i < min(n, 3); i++) {
		KUNIT_EXPECT_EQ(test, got[i].len, 2);
		KUNIT_EXPECT_EQ(test, memcmp(got[i].key, want[i], 2), 0);
	}
	kwq_destroy(q);
}

static struct kunit_case kwq_handout_cases[] = {
	KUNIT_CASE(kwq_handout_test_shutdown_waits_for_processing),
	KUNIT_CASE(kwq_handout_test_shutdown_timeout_returns),
	KUNIT_CASE(kwq_handout_test_destroyed_runs_nothing),
	KUNIT_CASE(kwq_handout_test_release_tells_clock),
	KUNIT_CASE(kwq_handout_test_one_wake_per_deadline),
	KUNIT_CASE(kwq_handout_test_pool_late_done),
	KUNIT_CASE(kwq_handout_test_woken_batch_takes_ready),
	{}
};

static struct kunit_suite kwq_handout_suite = {
	.name = "kwq_handout",
	.exit = fake_clock_exit,
	.test_cases = kwq_handout_cases,
};

kunit_test_suite(kwq_handout_suite);
