// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite for tenant queues (kwq_attr.tenant_depth) on the fake
 * clock: the tenant rule at depths 1 and 2, the exact rotation order,
 * FIFO within a tenant, the bound k * T with one tenant flooding, dedup,
 * give-backs at the head of the tenant and the rotation (a lease's end, a
 * requeue, a processing-timeout expiry), tenants within priorities, and
 * refused options.
 */

#include <kunit/test.h>
#include <linux/kernel.h>
#include <linux/string.h>

#include "kwq.h"
#include "kwq_internal.h"
#include "kwq_fake_clock.h"
#include "kwq_test_order.h"

static struct fake_clock *ten_queue(struct kunit *test, u32 depth, bool prio)
{
	struct kwq_attr *attr = kunit_kzalloc(test, sizeof(*attr), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, attr);
	attr->tenant_depth = depth;
	attr->priority = prio;
	attr->aging_ns = prio ? MS(1) : 0;
	return fake_queue(test, attr);
}

static int add(struct kwq *q, const char *key)
{
	return kwq_add(q, key, strlen(key));
}

static void kwq_ten_test_rule(struct kunit *test)
{
	static const struct { const char *key; u32 depth, tlen; } c[] = {
		{ "ns/name", 1, 2 }, { "name", 1, 0 }, { "/x", 1, 0 }, { "a/b/c", 1, 1 },
		{ "c/ns/name", 2, 4 }, { "c/name", 2, 1 }, { "name", 2, 0 }, { "a//b", 2, 2 },
		{ "x/", 1, 1 },
	};
	u32 i;

	for (i = 0; i < ARRAY_SIZE(c); i++)
		KUNIT_EXPECT_EQ_MSG(test, kwq_tenant_len(c[i].key, strlen(c[i].key), c[i].depth),
				    c[i].tlen, "%s depth %u", c[i].key, c[i].depth);
}

/* Tenants a, b, c, "" in the order they joined; each FIFO. */
static void kwq_ten_test_order(struct kunit *test)
{
	struct kwq *q = ten_queue(test, 1, false)->q;
	static const char *const adds[] = { "a/1", "a/2", "a/3", "b/1", "c/1", "x", "c/2", "/y" };
	static const char *const want[] = { "a/1", "b/1", "c/1", "x", "a/2", "c/2", "/y", "a/3" };
	u32 i;

	for (i = 0; i < ARRAY_SIZE(adds); i++)
		KUNIT_EXPECT_EQ(test, add(q, adds[i]), KWQ_ADD_QUEUED);
	/* Dedup: a queued key is not queued twice, and keeps its place. */
	KUNIT_EXPECT_EQ(test, add(q, "a/1"), KWQ_ADD_DUPLICATE);
	KUNIT_EXPECT_EQ(test, add(q, "c/2"), KWQ_ADD_DUPLICATE);
	KUNIT_EXPECT_EQ(test, kwq_len(q), ARRAY_SIZE(adds));
	expect_order(test, q, want, ARRAY_SIZE(want));
}

/* Depth 2: cluster, then namespace; fewer separators, a shorter tenant. */
static void kwq_ten_test_depth2(struct kunit *test)
{
	struct kwq *q = ten_queue(test, 2, false)->q;
	static const char *const adds[] = { "c1/n1/a", "c1/n1/b", "c1/n2/a", "c1/x", "c1/y",
					    "c2/n1/a", "y" };
	static const char *const want[] = { "c1/n1/a", "c1/n2/a", "c1/x", "c2/n1/a", "y",
					    "c1/n1/b", "c1/y" };
	u32 i;

	for (i = 0; i < ARRAY_SIZE(adds); i++)
		KUNIT_EXPECT_EQ(test, add(q, adds[i]), KWQ_ADD_QUEUED);
	expect_order(test, q, want, ARRAY_SIZE(want));
}

/*
 * The bound, exactly: tenant a floods 20000 keys, then b, c and d add 3
 * each (T = 4). The k-th key of d, last in the rotation, is the
 * (k * T)-th get; b's k-th is the ((k - 1) * T + 2)-th.
 */
static void kwq_ten_test_bound(struct kunit *test)
{
	struct kwq *q = ten_queue(test, 1, false)->q;
	char key[16], buf[16];
	u32 i, k, got[3][3] = {}, t;

	for (i = 0; i < 20000; i++) {
		snprintf(key, sizeof(key), "a/%u", i);
		KUNIT_ASSERT_EQ(test, add(q, key), KWQ_ADD_QUEUED);
	}
	for (t = 0; t < 3; t++) {
		for (k = 1; k <= 3; k++) {
			snprintf(key, sizeof(key), "%c/%u", 'b' + t, k);
			KUNIT_ASSERT_EQ(test, add(q, key), KWQ_ADD_QUEUED);
		}
	}
	for (i = 1; i <= 12; i++) {
		take(q, buf, sizeof(buf));
		if (buf[0] == 'a') {
			snprintf(key, sizeof(key), "a/%u", i / 4);
			KUNIT_EXPECT_STREQ(test, buf, key);	/* FIFO within a */
			continue;
		}
		KUNIT_ASSERT_TRUE(test, buf[0] >= 'b' && buf[0] <= 'd' && buf[1] == '/');
		got[buf[0] - 'b'][buf[2] - '1'] = i;
	}
	for (k = 1; k <= 3; k++) {
		KUNIT_EXPECT_EQ(test, got[0][k - 1], (k - 1) * 4 + 2);
		KUNIT_EXPECT_EQ(test, got[1][k - 1], (k - 1) * 4 + 3);
		KUNIT_EXPECT_EQ(test, got[2][k - 1], k * 4);
	}
	/* Then a alone, in order. */
	KUNIT_EXPECT_STREQ(test, take(q, buf, sizeof(buf)), "a/3");
	KUNIT_EXPECT_EQ(test, kwq_len(q), 20000 - 4);
}

/*
 * The bound's T counts tenants that join while a key waits: x/2 is 2nd of
 * its tenant with T = 2 when queued, but b, c and d join behind x while
 * x/1 waits and make T = 4, and it comes out 5th, within k * T = 8 (not 4).
 */
static void kwq_ten_test_bound_joiners(struct kunit *test)
{
	static const char *const want[] = { "x/1", "b/1", "c/1", "d/1", "x/2" };
	struct fake_clock *fc = ten_queue(test, 1, false);
	char buf[32];

	add(fc->q, "a/1");
	add(fc->q, "x/1");
	add(fc->q, "x/2");
	KUNIT_EXPECT_STREQ(test, take(fc->q, buf, sizeof(buf)), "a/1");
	add(fc->q, "b/1");
	add(fc->q, "c/1");
	add(fc->q, "d/1");
	expect_order(test, fc->q, want, ARRAY_SIZE(want));
}

/*
 * Keys given back go to the head of their tenant and their tenant to the
 * head of the rotation; a lease's end gives back newest first, so the
 * order of the hand-outs repeats.
 */
static void kwq_ten_test_give_back(struct kunit *test)
{
	struct kwq *q = ten_queue(test, 1, false)->q;
	static const char *const want[] = { "a/1", "b/1", "a/2", "b/2", "a/3" };
	struct kwq_lease lease;
	char buf[8];
	u32 len, i;

	kwq_lease_begin(q, &lease);
	add(q, "a/1");
	add(q, "a/2");
	add(q, "a/3");
	add(q, "b/1");
	add(q, "b/2");
	for (i = 0; i < 3; i++) {
		KUNIT_ASSERT_EQ(test, kwq_get_leased(q, buf, sizeof(buf) - 1, &len, KWQ_NOWAIT,
						     &lease, NULL), 0);
		buf[len] = '\0';
		KUNIT_EXPECT_STREQ(test, buf, want[i]);
	}
	kwq_lease_end(q, &lease);
	/* A requeued key is next: without the rotation's head, b/1 would go first. */
	KUNIT_ASSERT_EQ(test, kwq_get(q, buf, sizeof(buf) - 1, &len, KWQ_NOWAIT), 0);
	KUNIT_EXPECT_EQ(test, kwq_requeue(q, buf, len), 0);
	expect_order(test, q, want, ARRAY_SIZE(want));
}

/* A key added while processing runs again in its tenant's place, at the tail. */
static void kwq_ten_test_processing(struct kunit *test)
{
	struct kwq *q = ten_queue(test, 1, false)->q;
	static const char *const want[] = { "b/1", "a/2", "a/1" };
	char buf[8];
	u32 len;

	add(q, "a/1");
	add(q, "a/2");
	add(q, "b/1");
	KUNIT_ASSERT_EQ(test, kwq_get(q, buf, sizeof(buf), &len, KWQ_NOWAIT), 0);
	KUNIT_EXPECT_EQ(test, add(q, "a/1"), KWQ_ADD_DEFERRED);
	KUNIT_EXPECT_EQ(test, kwq_done(q, "a/1", 3), KWQ_DONE_REQUEUED);
	expect_order(test, q, want, ARRAY_SIZE(want));
}

/*
 * With priorities: tenants rotate within each level, the level is chosen
 * by the rank of its next key; a raise moves a key to the tail of its
 * tenant at the new level.
 */
static void kwq_ten_test_priority(struct kunit *test)
{
	struct fake_clock *fc = ten_queue(test, 1, true);
	struct kwq *q = fc->q;
	static const char *const want[] = { "a/1", "b/1", "a/2", "b/2", "a/3", "c/1", "a/4" };

	addp(q, "a/1", 7);
	addp(q, "a/2", 7);
	addp(q, "a/3", 0);
	addp(q, "a/4", 0);
	addp(q, "b/1", 7);
	addp(q, "c/1", 0);
	addp(q, "b/2", 0);
	/* b/2 moves up: the tail of b at level 7, which a/3 and c/1 follow. */
	KUNIT_EXPECT_EQ(test, addp(q, "b/2", 7), KWQ_ADD_DUPLICATE);
	expect_order(test, q, want, ARRAY_SIZE(want));
}

/*
 * Aging across levels: a low key waits at most (7 - p) * aging_ns of
 * ready time behind a tenant flooding the top level.
 */
static void kwq_ten_test_aging(struct kunit *test)
{
	struct fake_clock *fc = ten_queue(test, 1, true);
	struct kwq *q = fc->q;
	char key[16], buf[16];
	u32 i, taken = 0;

	for (i = 0; i < 100; i++) {
		snprintf(key, sizeof(key), "a/%u", i);
		addp(q, key, KWQ_PRIORITY_MAX);
	}
	addp(q, "b/low", KWQ_PRIORITY_MAX - 2);	/* rank t0 + 2 ms */
	for (i = 100; i < 300; i++) {
		step(fc, NSEC_PER_MSEC / 10);
		snprintf(key, sizeof(key), "a/%u", i);
		addp(q, key, KWQ_PRIORITY_MAX);
		if (!strcmp(take(q, buf, sizeof(buf)), "b/low"))
			break;
		taken++;
	}
	/* Every a key ready by t0 + 2 ms (100 + 20 of them) goes first, then b/low. */
	KUNIT_EXPECT_STREQ(test, buf, "b/low");
	KUNIT_EXPECT_EQ(test, taken, 120);
}

/*
 * One processing-timeout expiry gives its keys back oldest first, each to
 * the head of its tenant and the rotation: the last comes out first.
 */
static void kwq_ten_test_expiry(struct kunit *test)
{
	struct kwq_attr *attr = kunit_kzalloc(test, sizeof(*attr), GFP_KERNEL);
	static const char *const want[] = { "b/1", "a/1", "a/2" };
	struct fake_clock *fc;
	char buf[8];
	u64 ticket;
	u32 len, i;

	KUNIT_ASSERT_NOT_NULL(test, attr);
	attr->tenant_depth = 1;
	attr->processing_timeout_ns = MS(10);
	fc = fake_queue(test, attr);
	add(fc->q, "a/1");
	add(fc->q, "a/2");
	add(fc->q, "b/1");
	KUNIT_ASSERT_EQ(test, kwq_get(fc->q, buf, sizeof(buf), &len, KWQ_NOWAIT), 0);
	KUNIT_ASSERT_EQ(test, kwq_get(fc->q, buf, sizeof(buf), &len, KWQ_NOWAIT), 0);
	step(fc, MS(10));
	KUNIT_EXPECT_EQ(test, kwq_len(fc->q), 3);
	for (i = 0; i < ARRAY_SIZE(want); i++) {
		KUNIT_ASSERT_EQ(test, kwq_get_ticket(fc->q, buf, sizeof(buf) - 1, &len, &ticket,
						     KWQ_NOWAIT), 0);
		buf[len] = '\0';
		KUNIT_EXPECT_STREQ(test, buf, want[i]);
		KUNIT_EXPECT_EQ(test, kwq_done_ticket(fc->q, buf, len, ticket), KWQ_DONE_FINISHED);
	}
}

static void kwq_ten_test_invalid(struct kunit *test)
{
	struct kwq_attr attr = { .tenant_depth = KWQ_TENANT_DEPTH_MAX + 1 };

	KUNIT_EXPECT_EQ(test, PTR_ERR(kwq_create(NULL, &attr)), -EINVAL);
	attr.tenant_depth = U32_MAX;
	KUNIT_EXPECT_EQ(test, PTR_ERR(kwq_create(NULL, &attr)), -EINVAL);
}

static struct kunit_case kwq_ten_cases[] = {
	KUNIT_CASE(kwq_ten_test_rule),
	KUNIT_CASE(kwq_ten_test_order),
	KUNIT_CASE(kwq_ten_test_depth2),
	KUNIT_CASE(kwq_ten_test_bound),
	KUNIT_CASE(kwq_ten_test_bound_joiners),
	KUNIT_CASE(kwq_ten_test_give_back),
	KUNIT_CASE(kwq_ten_test_processing),
	KUNIT_CASE(kwq_ten_test_priority),
	KUNIT_CASE(kwq_ten_test_aging),
	KUNIT_CASE(kwq_ten_test_expiry),
	KUNIT_CASE(kwq_ten_test_invalid),
	{}
};

static struct kunit_suite kwq_ten_suite = {
	.name = "kwq_tenant",
	.exit = fake_clock_exit,
	.test_cases = kwq_ten_cases,
};

kunit_test_suite(kwq_ten_suite);
