// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite for priority queues (kwq_attr.priority) on the fake clock:
 * the order of levels and FIFO within one, the exact aging bound under a
 * saturating high-priority producer, raise-never-lower and a raise only
 * when it hands the key out sooner, the priority of a key re-added while
 * processing, a delayed key, a given-back key at the head of its level
 * with the ready time of the key it goes before, and refused options.
 */

#include <kunit/test.h>
#include <linux/kernel.h>
#include <linux/string.h>

#include "kwq.h"
#include "kwq_internal.h"
#include "kwq_fake_clock.h"
#include "kwq_test_order.h"

#define US(us)	((s64)(us) * NSEC_PER_USEC)

static struct fake_clock *prio_queue(struct kunit *test, u64 aging_ns)
{
	struct kwq_attr attr = { .priority = true, .aging_ns = aging_ns };

	return fake_queue(test, &attr);
}

static void kwq_prio_test_order(struct kunit *test)
{
	struct kwq *q = prio_queue(test, 0)->q;	/* default aging: 1 s */
	static const char *const want[] = { "h1", "h2", "m1", "p", "m2", "l1" };

	addp(q, "m1", 0);
	addp(q, "l1", KWQ_PRIORITY_MIN);
	addp(q, "h1", KWQ_PRIORITY_MAX);
	kwq_add(q, "p", 1);	/* plain calls add at priority 0 */
	addp(q, "h2", KWQ_PRIORITY_MAX);
	addp(q, "m2", 0);
	KUNIT_EXPECT_EQ(test, kwq_len(q), 6);
	expect_order(test, q, want, ARRAY_SIZE(want));
}

/*
 * The bound, exactly: 1000 keys of the top priority wait; a bottom key is
 * added at t0; every 100 us the producer adds two more top keys and one
 * key is taken. The bottom key (rank t0 + 15 ms) goes after exactly the
 * top keys ready by t0 + 15 ms (ties go to the higher level), and before
 * every later one, though the producer never lets up.
 */
static void kwq_prio_test_starvation_bound(struct kunit *test)
{
	const u64 aging = MS(1);
	struct fake_clock *fc = prio_queue(test, aging);
	struct kwq *q = fc->q;
	u32 span = (KWQ_PRIORITY_MAX - KWQ_PRIORITY_MIN) * 10;	/* steps in the bound */
	u32 n = 0, taken = 0, step_no, i;
	char key[16], buf[16];

	for (i = 0; i < 1000; i++) {
		snprintf(key, sizeof(key), "h%u", n++);
		KUNIT_ASSERT_EQ(test, addp(q, key, KWQ_PRIORITY_MAX), KWQ_ADD_QUEUED);
	}
	KUNIT_ASSERT_EQ(test, addp(q, "low", KWQ_PRIORITY_MIN), KWQ_ADD_QUEUED);
	for (step_no = 1; step_no < 5000; step_no++) {
		step(fc, US(100));
		for (i = 0; i < 2; i++) {
			snprintf(key, sizeof(key), "h%u", n++);
			KUNIT_ASSERT_EQ(test, addp(q, key, KWQ_PRIORITY_MAX), KWQ_ADD_QUEUED);
		}
		take(q, buf, sizeof(buf));
		if (!strcmp(buf, "low"))
			break;
		taken++;
	}
	KUNIT_EXPECT_STREQ(test, buf, "low");
	KUNIT_EXPECT_EQ(test, taken, 1000 + 2 * span);
	KUNIT_EXPECT_EQ(test, step_no, 1000 + 2 * span + 1);
}

/* A raise moves a queued key only if that hands it out sooner; nothing lowers one. */
static void kwq_prio_test_raise(struct kunit *test)
{
	struct fake_clock *fc = prio_queue(test, MS(1));
	struct kwq *q = fc->q;
	static const char *const want[] = { "d", "a", "b", "c" };
	struct kwq_stats st;

	addp(q, "a", 0);				/* rank t0 + 7 ms */
	step(fc, MS(5));
	addp(q, "b", 0);
	addp(q, "c", 2);				/* rank t0 + 10 ms */
	addp(q, "d", 5);				/* rank t0 + 7 ms */
	/* a has waited 5 ms: 3 levels up (3 ms) would hand it out later. */
	KUNIT_EXPECT_EQ(test, addp(q, "a", 3), KWQ_ADD_DUPLICATE);
	/* b, just queued, moves: rank t0 + 9 ms instead of t0 + 12 ms. */
	KUNIT_EXPECT_EQ(test, addp(q, "b", 3), KWQ_ADD_DUPLICATE);
	KUNIT_EXPECT_EQ(test, addp(q, "d", KWQ_PRIORITY_MIN), KWQ_ADD_DUPLICATE);
	KUNIT_EXPECT_EQ(test, addp(q, "c", 0), KWQ_ADD_DUPLICATE);
	kwq_stats(q, &st);
	KUNIT_EXPECT_EQ(test, st.queued, 4);
	KUNIT_EXPECT_EQ(test, st.dedups, 4);
	/* d and a tie at t0 + 7 ms: the higher level first. */
	expect_order(test, q, want, ARRAY_SIZE(want));
}

/* The first add after a hand-out sets the next run's priority; later ones raise it. */
static void kwq_prio_test_processing(struct kunit *test)
{
	struct kwq *q = prio_queue(test, 0)->q;
	static const char *const want[] = { "k", "m" };
	char buf[8];
	u32 len;

	addp(q, "k", 6);
	KUNIT_ASSERT_EQ(test, kwq_get(q, buf, sizeof(buf), &len, KWQ_NOWAIT), 0);
	KUNIT_EXPECT_EQ(test, addp(q, "k", -4), KWQ_ADD_DEFERRED);
	KUNIT_EXPECT_EQ(test, addp(q, "k", -2), KWQ_ADD_DUPLICATE);
	KUNIT_EXPECT_EQ(test, addp(q, "k", -6), KWQ_ADD_DUPLICATE);
	addp(q, "m", -3);
	KUNIT_EXPECT_EQ(test, kwq_done(q, "k", 1), KWQ_DONE_REQUEUED);
	expect_order(test, q, want, ARRAY_SIZE(want));
	/* Ended: the next add sets the priority afresh. */
	addp(q, "k", -5);
	addp(q, "n", -4);
	KUNIT_EXPECT_STREQ(test, take(q, buf, sizeof(buf)), "n");
	KUNIT_EXPECT_STREQ(test, take(q, buf, sizeof(buf)), "k");
}

/* A delayed key becomes ready at its priority (controller-runtime#3330); waiting raises too. */
static void kwq_prio_test_delayed(struct kunit *test)
{
	struct fake_clock *fc = prio_queue(test, 0);
	struct kwq *q = fc->q;
	struct kwq_add_opts o = { .priority = 5, .delay_ns = MS(10) };
	static const char *const want[] = { "d", "w", "a", "b" };

	KUNIT_EXPECT_EQ(test, kwq_add_ex(q, "d", 1, &o), KWQ_ADD_WAITING);
	o.priority = -1;
	KUNIT_EXPECT_EQ(test, kwq_add_ex(q, "w", 1, &o), KWQ_ADD_WAITING);
	addp(q, "a", 0);
	addp(q, "b", 0);
	/* A waiting key's priority is raised by a later add-after, not lowered. */
	o.priority = 2;
	KUNIT_EXPECT_EQ(test, kwq_add_ex(q, "w", 1, &o), KWQ_ADD_WAIT_KEPT);
	o.priority = -8;
	KUNIT_EXPECT_EQ(test, kwq_add_ex(q, "d", 1, &o), KWQ_ADD_WAIT_KEPT);
	step(fc, MS(10));
	expect_order(test, q, want, ARRAY_SIZE(want));
}

/*
 * A key given back goes to the head of its level with the ready time of
 * the key it goes before: it keeps its place against later keys.
 */
static void kwq_prio_test_give_back(struct kunit *test)
{
	struct fake_clock *fc = prio_queue(test, MS(1));
	struct kwq *q = fc->q;
	static const char *const want[] = { "x", "y", "z", "w" };
	struct kwq_lease lease;
	char buf[8];
	u32 len;

	kwq_lease_begin(q, &lease);
	addp(q, "x", 0);
	KUNIT_ASSERT_EQ(test, kwq_get_leased(q, buf, sizeof(buf), &len, KWQ_NOWAIT, &lease,
					     NULL), 0);
	step(fc, MS(10));
	addp(q, "y", 0);				/* rank t0 + 17 ms */
	addp(q, "z", 0);
	step(fc, MS(10));
	kwq_lease_end(q, &lease);			/* x: ready time t0 + 10 ms */
	addp(q, "w", 1);				/* rank t0 + 26 ms */
	expect_order(test, q, want, ARRAY_SIZE(want));
}

static void kwq_prio_test_invalid(struct kunit *test)
{
	struct kwq_attr attr = { .aging_ns = 1 };
	struct kwq_stats *a = kunit_kzalloc(test, sizeof(*a), GFP_KERNEL);
	struct kwq_stats *b = kunit_kzalloc(test, sizeof(*b), GFP_KERNEL);
	struct kwq_add_opts o = {};
	struct kwq *q;

	KUNIT_ASSERT_NOT_NULL(test, a);
	KUNIT_ASSERT_NOT_NULL(test, b);

	KUNIT_EXPECT_EQ(test, PTR_ERR(kwq_create(NULL, &attr)), -EINVAL);
	attr.priority = true;
	attr.aging_ns = KWQ_AGING_MAX_NS + 1;
	KUNIT_EXPECT_EQ(test, PTR_ERR(kwq_create(NULL, &attr)), -EINVAL);
	q = prio_queue(test, KWQ_AGING_MAX_NS)->q;
	addp(q, "k", 1);
	kwq_stats(q, a);
	KUNIT_EXPECT_EQ(test, addp(q, "k", KWQ_PRIORITY_MAX + 1), -EINVAL);
	KUNIT_EXPECT_EQ(test, addp(q, "j", KWQ_PRIORITY_MIN - 1), -EINVAL);
	KUNIT_EXPECT_EQ(test, addp(q, "j", S32_MIN), -EINVAL);
	o.priority = 1;
	o.flags = KWQ_AFTER_REPLACE;
	KUNIT_EXPECT_EQ(test, kwq_add_ex(q, "j", 1, &o), -EINVAL);
	kwq_stats(q, b);
	KUNIT_EXPECT_EQ(test, memcmp(a, b, sizeof(*a)), 0);
}

/* A plain queue takes no priority but 0. */
static void kwq_prio_test_plain(struct kunit *test)
{
	struct kwq *q = fake_queue(test, NULL)->q;

	KUNIT_EXPECT_EQ(test, addp(q, "k", 1), -EINVAL);
	KUNIT_EXPECT_EQ(test, addp(q, "k", -1), -EINVAL);
	KUNIT_EXPECT_EQ(test, addp(q, "k", 0), KWQ_ADD_QUEUED);
}

static struct kunit_case kwq_prio_cases[] = {
	KUNIT_CASE(kwq_prio_test_order),
	KUNIT_CASE(kwq_prio_test_starvation_bound),
	KUNIT_CASE(kwq_prio_test_raise),
	KUNIT_CASE(kwq_prio_test_processing),
	KUNIT_CASE(kwq_prio_test_delayed),
	KUNIT_CASE(kwq_prio_test_give_back),
	KUNIT_CASE(kwq_prio_test_invalid),
	KUNIT_CASE(kwq_prio_test_plain),
	{}
};

static struct kunit_suite kwq_prio_suite = {
	.name = "kwq_priority",
	.exit = fake_clock_exit,
	.test_cases = kwq_prio_cases,
};

kunit_test_suite(kwq_prio_suite);
