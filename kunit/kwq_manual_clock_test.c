// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite kwq_manual_clock: queues made with kwq_attr.manual_clock
 * (module/kwq_manual_clock.c) through the exported API. Their time starts
 * at 0 and moves only by kwq_clock_step(): a deadline comes with the step
 * that reaches it and not one nanosecond before; refused steps change
 * nothing; a step runs at most KWQ_CLOCK_STEP_KEYS keys and says so; the
 * limiters of add-rate-limited and the processing timeout follow it.
 */

#include <kunit/test.h>
#include <linux/slab.h>

#include "kwq.h"

#define MS(ms)	((s64)(ms) * NSEC_PER_MSEC)

static struct kwq *mc_queue(struct kunit *test, u64 processing_timeout_ns)
{
	struct kwq_attr *attr = kunit_kzalloc(test, sizeof(*attr), GFP_KERNEL);
	struct kwq *q;

	KUNIT_ASSERT_NOT_NULL(test, attr);
	attr->manual_clock = true;
	attr->processing_timeout_ns = processing_timeout_ns;
	q = kwq_create(NULL, attr);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, q);
	test->priv = q;
	return q;
}

static void mc_exit(struct kunit *test)
{
	if (!IS_ERR_OR_NULL(test->priv))
		kwq_destroy(test->priv);
}

/* Step @ns, expecting success and nothing left pending; returns the time. */
static u64 mc_step(struct kunit *test, struct kwq *q, s64 ns)
{
	bool pending = true;
	u64 now = ~0ULL;

	KUNIT_EXPECT_EQ(test, kwq_clock_step(q, ns, &now, &pending), 0);
	KUNIT_EXPECT_FALSE(test, pending);
	return now;
}

static int mc_get(struct kwq *q, const char *want)
{
	char buf[16];
	u32 len = 0;
	int ret = kwq_get(q, buf, sizeof(buf) - 1, &len, KWQ_NOWAIT);

	if (ret)
		return ret;
	buf[len] = '\0';
	return strcmp(buf, want) ? -EBADMSG : 0;
}

static ktime_t mc_fake_now(struct kwq_clock *c)
{
	return 0;
}

static void mc_fake_program(struct kwq_clock *c, struct kwq *q, ktime_t expires)
{
}

static void kwq_manual_clock_test_refused(struct kunit *test)
{
	struct kwq_clock *fake = kunit_kzalloc(test, sizeof(*fake), GFP_KERNEL);
	struct kwq_attr *attr = kunit_kzalloc(test, sizeof(*attr), GFP_KERNEL);
	bool pending = false;
	u64 now = 7;
	struct kwq *q;

	KUNIT_ASSERT_NOT_NULL(test, fake);
	KUNIT_ASSERT_NOT_NULL(test, attr);
	fake->now = mc_fake_now;
	fake->program = mc_fake_program;
	attr->clock = fake;
	attr->manual_clock = true;
	KUNIT_EXPECT_EQ(test, PTR_ERR(kwq_create(NULL, attr)), -EINVAL);

	/* A queue on the real clock, then one on a caller's clock: no manual clock. */
	q = kwq_create(NULL, NULL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, q);
	KUNIT_EXPECT_EQ(test, kwq_clock_step(q, MS(1), &now, &pending), -EOPNOTSUPP);
	kwq_destroy(q);
	attr->manual_clock = false;
	q = kwq_create(NULL, attr);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, q);
	KUNIT_EXPECT_EQ(test, kwq_clock_step(q, 0, &now, &pending), -EOPNOTSUPP);
	kwq_destroy(q);
	KUNIT_EXPECT_EQ(test, now, 7ULL);
}

static void kwq_manual_clock_test_bounds(struct kunit *test)
{
	struct kwq *q = mc_queue(test, 0);
	bool pending = false;
	u64 now = 0;

	KUNIT_EXPECT_EQ(test, mc_step(test, q, 0), 0ULL);
	KUNIT_EXPECT_EQ(test, mc_step(test, q, MS(3)), (u64)MS(3));
	KUNIT_EXPECT_EQ(test, kwq_add_after(q, "k", 1, MS(2), 0), KWQ_ADD_WAITING);
	KUNIT_EXPECT_EQ(test, kwq_clock_step(q, -1, &now, &pending), -EINVAL);
	KUNIT_EXPECT_EQ(test, kwq_clock_step(q, S64_MIN, &now, &pending), -EINVAL);
	KUNIT_EXPECT_EQ(test, kwq_clock_step(q, KWQ_CLOCK_MAX_NS - MS(3) + 1, &now, &pending),
			-EOVERFLOW);
	KUNIT_EXPECT_EQ(test, kwq_clock_step(q, S64_MAX, &now, &pending), -EOVERFLOW);
	KUNIT_EXPECT_EQ(test, now, 0ULL);
	KUNIT_EXPECT_EQ(test, mc_step(test, q, 0), (u64)MS(3));
	KUNIT_EXPECT_EQ(test, kwq_len(q), 0ULL);
	KUNIT_EXPECT_EQ(test, mc_step(test, q, KWQ_CLOCK_MAX_NS - MS(3)), KWQ_CLOCK_MAX_NS);
	KUNIT_EXPECT_EQ(test, kwq_len(q), 1ULL);
	KUNIT_EXPECT_EQ(test, kwq_clock_step(q, 1, &now, &pending), -EOVERFLOW);
	/* The longest delay at the clock's end is still a deadline, and waits. */
	KUNIT_EXPECT_EQ(test, kwq_add_after(q, "late", 4, KWQ_DELAY_MAX_NS, 0), KWQ_ADD_WAITING);
	KUNIT_EXPECT_EQ(test, kwq_len(q), 1ULL);
}

static void kwq_manual_clock_test_deadline(struct kunit *test)
{
	struct kwq *q = mc_queue(test, 0);

	KUNIT_EXPECT_EQ(test, kwq_add_after(q, "a", 1, MS(100), 0), KWQ_ADD_WAITING);
	KUNIT_EXPECT_EQ(test, kwq_add_after(q, "b", 1, MS(50), 0), KWQ_ADD_WAITING);
	mc_step(test, q, MS(50) - 1);
	KUNIT_EXPECT_EQ(test, kwq_len(q), 0ULL);
	mc_step(test, q, 1);
	KUNIT_EXPECT_EQ(test, kwq_len(q), 1ULL);
	KUNIT_EXPECT_EQ(test, mc_get(q, "b"), 0);
	KUNIT_EXPECT_EQ(test, kwq_done(q, "b", 1), KWQ_DONE_FINISHED);
	mc_step(test, q, MS(50) - 1);
	KUNIT_EXPECT_EQ(test, kwq_len(q), 0ULL);
	mc_step(test, q, 1);
	KUNIT_EXPECT_EQ(test, mc_get(q, "a"), 0);
}

/* client-go's default limiter: 5 ms, then 10 ms, of manual time. */
static void kwq_manual_clock_test_limiter(struct kunit *test)
{
	struct kwq *q = mc_queue(test, 0);

	KUNIT_EXPECT_EQ(test, kwq_add_rate_limited(q, "r", 1), KWQ_ADD_WAITING);
	mc_step(test, q, MS(5) - 1);
	KUNIT_EXPECT_EQ(test, kwq_len(q), 0ULL);
	mc_step(test, q, 1);
	KUNIT_EXPECT_EQ(test, mc_get(q, "r"), 0);
	KUNIT_EXPECT_EQ(test, kwq_done(q, "r", 1), KWQ_DONE_FINISHED);
	KUNIT_EXPECT_EQ(test, kwq_add_rate_limited(q, "r", 1), KWQ_ADD_WAITING);
	mc_step(test, q, MS(10) - 1);
	KUNIT_EXPECT_EQ(test, kwq_len(q), 0ULL);
	mc_step(test, q, 1);
	KUNIT_EXPECT_EQ(test, kwq_len(q), 1ULL);
}

static void kwq_manual_clock_test_processing_timeout(struct kunit *test)
{
	struct kwq *q = mc_queue(test, MS(1000));
	struct kwq_stats st;
	char buf[4];
	u64 ticket = 0;
	u32 len = 0;

	KUNIT_EXPECT_EQ(test, kwq_add(q, "p", 1), KWQ_ADD_QUEUED);
	KUNIT_EXPECT_EQ(test, kwq_get_ticket(q, buf, sizeof(buf), &len, &ticket, KWQ_NOWAIT), 0);
	mc_step(test, q, MS(1000) - 1);
	kwq_stats(q, &st);
	KUNIT_EXPECT_EQ(test, st.processing, 1ULL);
	mc_step(test, q, 1);
	kwq_stats(q, &st);
	KUNIT_EXPECT_EQ(test, st.processing_expiries, 1ULL);
	KUNIT_EXPECT_EQ(test, st.queued, 1ULL);
	KUNIT_EXPECT_EQ(test, kwq_done_ticket(q, "p", 1, ticket), -ENOENT);
}

/* A step runs KWQ_CLOCK_STEP_KEYS keys at most; a step of 0 goes on. */
static void kwq_manual_clock_test_pending(struct kunit *test)
{
	struct kwq *q = mc_queue(test, 0);
	const u32 n = KWQ_CLOCK_STEP_KEYS + 100;
	bool pending = false;
	char key[12];
	u64 now = 0;
	u32 i;

	for (i = 0; i < n; i++) {
		snprintf(key, sizeof(key), "k%u", i);
		KUNIT_ASSERT_EQ(test, kwq_add_after(q, key, strlen(key), MS(1) + i, 0),
				KWQ_ADD_WAITING);
	}
	KUNIT_EXPECT_EQ(test, kwq_clock_step(q, MS(2), &now, &pending), 0);
	KUNIT_EXPECT_TRUE(test, pending);
	KUNIT_EXPECT_EQ(test, now, (u64)MS(2));
	KUNIT_EXPECT_GT(test, kwq_len(q), 0ULL);
	KUNIT_EXPECT_LE(test, kwq_len(q), (u64)KWQ_CLOCK_STEP_KEYS);
	KUNIT_EXPECT_EQ(test, kwq_clock_step(q, 0, &now, &pending), 0);
	KUNIT_EXPECT_FALSE(test, pending);
	KUNIT_EXPECT_EQ(test, kwq_len(q), (u64)n);
	KUNIT_EXPECT_EQ(test, mc_get(q, "k0"), 0);
}

static void kwq_manual_clock_test_destroyed(struct kunit *test)
{
	struct kwq *q = mc_queue(test, 0);
	bool pending = false;
	u64 now = 5;

	test->priv = NULL;
	kwq_get_ref(q);
	kwq_destroy(q);
	KUNIT_EXPECT_EQ(test, kwq_clock_step(q, MS(1), &now, &pending), -EIDRM);
	KUNIT_EXPECT_EQ(test, now, 5ULL);
	kwq_put(q);
}

static struct kunit_case kwq_manual_clock_cases[] = {
	KUNIT_CASE(kwq_manual_clock_test_refused),
	KUNIT_CASE(kwq_manual_clock_test_bounds),
	KUNIT_CASE(kwq_manual_clock_test_deadline),
	KUNIT_CASE(kwq_manual_clock_test_limiter),
	KUNIT_CASE(kwq_manual_clock_test_processing_timeout),
	KUNIT_CASE(kwq_manual_clock_test_pending),
	KUNIT_CASE(kwq_manual_clock_test_destroyed),
	{}
};

static struct kunit_suite kwq_manual_clock_suite = {
	.name = "kwq_manual_clock",
	.test_cases = kwq_manual_clock_cases,
	.exit = mc_exit,
};

kunit_test_suite(kwq_manual_clock_suite);
