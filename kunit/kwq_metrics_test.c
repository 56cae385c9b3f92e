// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite for kwq's statistics: counters, the two histograms and the
 * work gauges, checked exactly on a fake clock (client-go's
 * metrics_test.go scenarios where they apply).
 */

#include <kunit/test.h>
#include <linux/string.h>

#include "kwq.h"
#include "kwq_fake_clock.h"

/* Bucket indexes: up to 10 ns is 0, ..., up to 10 ms is 6, up to 10 s is 9. */
#define B_10NS	0
#define B_10MS	6
#define B_10S	9
#define B_INF	10

/* On the test's heap: struct kwq_stats is too big for KASAN stack frames. */
static struct kwq_stats *stats(struct kunit *test, struct kwq *q)
{
	struct kwq_stats *st = kunit_kzalloc(test, sizeof(*st), GFP_KERNEL);

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, st);
	kwq_stats(q, st);
	return st;
}

static void take(struct kunit *test, struct kwq *q, const char *want)
{
	char buf[16];
	u32 len = 0;

	KUNIT_ASSERT_EQ(test, kwq_get(q, buf, sizeof(buf), &len, KWQ_NOWAIT), 0);
	KUNIT_EXPECT_EQ(test, len, strlen(want));
	KUNIT_EXPECT_EQ(test, memcmp(buf, want, len), 0);
}

static void kwq_metrics_test_histograms(struct kunit *test)
{
	struct fake_clock *fc = fake_queue(test, NULL);
	struct kwq *q = fc->q;
	struct kwq_stats *st;
	int i;

	kwq_add(q, "a", 1);
	step(fc, MS(2));
	take(test, q, "a");
	step(fc, MS(5000));
	KUNIT_EXPECT_EQ(test, kwq_done(q, "a", 1), KWQ_DONE_FINISHED);
	kwq_add(q, "b", 1);
	take(test, q, "b");

	st = stats(test, q);
	KUNIT_EXPECT_EQ(test, st->queue_latency[B_10MS], 1);
	KUNIT_EXPECT_EQ(test, st->queue_latency[B_10NS], 1);
	KUNIT_EXPECT_EQ(test, st->queue_latency_sum_ns, MS(2));
	KUNIT_EXPECT_EQ(test, st->work_duration[B_10S], 1);
	KUNIT_EXPECT_EQ(test, st->work_duration_sum_ns, MS(5000));
	for (i = 0; i < KWQ_STATS_BUCKETS; i++) {
		if (i != B_10MS && i != B_10NS)
			KUNIT_EXPECT_EQ(test, st->queue_latency[i], 0);
		if (i != B_10S)
			KUNIT_EXPECT_EQ(test, st->work_duration[i], 0);
	}
	/* Over 10 s lands in +Inf. */
	step(fc, MS(20000));
	kwq_done(q, "b", 1);
	KUNIT_EXPECT_EQ(test, stats(test, q)->work_duration[B_INF], 1);
}

/* client-go's unfinished_work_seconds and longest_running_processor. */
static void kwq_metrics_test_work_gauges(struct kunit *test)
{
	struct fake_clock *fc = fake_queue(test, NULL);
	struct kwq *q = fc->q;
	struct kwq_stats *st;

	KUNIT_EXPECT_EQ(test, stats(test, q)->unfinished_work_ns, 0);
	kwq_add(q, "a", 1);
	kwq_add(q, "b", 1);
	take(test, q, "a");
	step(fc, MS(1000));
	take(test, q, "b");
	step(fc, MS(2000));
	st = stats(test, q);
	KUNIT_EXPECT_EQ(test, st->unfinished_work_ns, MS(3000) + MS(2000));
	KUNIT_EXPECT_EQ(test, st->longest_running_ns, MS(3000));
	kwq_done(q, "a", 1);
	st = stats(test, q);
	KUNIT_EXPECT_EQ(test, st->unfinished_work_ns, MS(2000));
	KUNIT_EXPECT_EQ(test, st->longest_running_ns, MS(2000));
	kwq_done(q, "b", 1);
	st = stats(test, q);
	KUNIT_EXPECT_EQ(test, st->unfinished_work_ns, 0);
	KUNIT_EXPECT_EQ(test, st->longest_running_ns, 0);
}

/* client-go TestMetrics: one add, a get, five re-adds while processing. */
static void kwq_metrics_test_counters(struct kunit *test)
{
	struct fake_clock *fc = fake_queue(test, NULL);
	struct kwq *q = fc->q;
	struct kwq_stats *st;
	int i;

	kwq_add(q, "foo", 3);
	take(test, q, "foo");
	for (i = 0; i < 5; i++)
		kwq_add(q, "foo", 3);
	st = stats(test, q);
	KUNIT_EXPECT_EQ(test, st->adds, 2);
	KUNIT_EXPECT_EQ(test, st->dedups, 4);
	KUNIT_EXPECT_EQ(test, st->queued, 0);
	KUNIT_EXPECT_EQ(test, st->dirty_processing, 1);
	KUNIT_EXPECT_EQ(test, st->gets, 1);
	/* The re-add is queued by done; its latency counts from then. */
	step(fc, MS(50));
	KUNIT_EXPECT_EQ(test, kwq_done(q, "foo", 3), KWQ_DONE_REQUEUED);
	step(fc, MS(3));
	take(test, q, "foo");
	st = stats(test, q);
	KUNIT_EXPECT_EQ(test, st->queue_latency_sum_ns, MS(3));
	KUNIT_EXPECT_EQ(test, st->requeues, 1);

	/* Retries: add-after with a delay and add-rate-limited, like client-go. */
	kwq_add_after(q, "r", 1, MS(10), 0);
	kwq_add_after(q, "r", 1, 0, 0);
	kwq_add_rate_limited(q, "s", 1);
	KUNIT_EXPECT_EQ(test, stats(test, q)->retries, 2);
	KUNIT_EXPECT_EQ(test, kwq_forget(q, "s", 1), 1);
	KUNIT_EXPECT_EQ(test, stats(test, q)->forgets, 1);
}

static struct kunit_case kwq_metrics_cases[] = {
	KUNIT_CASE(kwq_metrics_test_histograms),
	KUNIT_CASE(kwq_metrics_test_work_gauges),
	KUNIT_CASE(kwq_metrics_test_counters),
	{}
};

static struct kunit_suite kwq_metrics_suite = {
	.name = "kwq_metrics",
	.exit = fake_clock_exit,
	.test_cases = kwq_metrics_cases,
};

kunit_test_suite(kwq_metrics_suite);
