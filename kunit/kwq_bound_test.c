// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: no hold of kwq.lock handles more than 64 keys, at the item
 * limit (max_items_per_queue, 65,536 by default). Each case fills a
 * queue (to the limit, or with 4,096 keys, see bound_n() and
 * bound_n_small()), runs one walk
 * over every key (stats, a lease's
 * end, shutdown, destruction, a drain's flush, the timer with every key
 * due at once, the processing timeout of every key at once) and asserts
 * kwq.hold_max_keys, the most keys one hold handled, and that the walk
 * still did all of it, in order.
 */
#include <kunit/test.h>
#include <linux/bitmap.h>
#include <linux/delay.h>
#include <linux/kernel.h>
#include <linux/string.h>

#include "kwq.h"
#include "kwq_internal.h"
#include "kwq_fake_clock.h"

/* The bound, written out: raising KWQ_LOCK_STEP must turn these red. */
#define BOUND_KEYS	64

/*
 * The walks that grow with the queue (stats, a close, a shutdown) run at the
 * item limit; the others at 4,096 keys, 64 steps of 64, which takes each
 * through the same steps at a sixteenth of the time under KASAN or KCSAN.
 */
/*
 * Under KCSAN (make check's debug-rt kernel) every access is watched and
 * a walk at the limit takes half a minute: there these run at 8,192 keys,
 * still 128 holds of 64. Under KASAN (the debug kernel, whose UBSAN
 * also covers the whole kernel) a shutdown at the 65,536-key limit took
 * 75 s, past the hung-task detector's 60 s for the insmod that waits for
 * the case: there they run at 32,768 keys, 512 holds of 64.
 */
static u32 bound_n(struct kwq *q)
{
	if (IS_ENABLED(CONFIG_KCSAN))
		return min_t(u32, q->max_items, 8192);
	if (IS_ENABLED(CONFIG_KASAN))
		return min_t(u32, q->max_items, 32768);
	return q->max_items;
}

static u32 bound_n_small(struct kwq *q)
{
	return min_t(u32, q->max_items, 4096);
}

static void key_of(char *buf, u32 i)
{
	snprintf(buf, 16, "k%08x", i);
}

/* The most keys one hold handled since the last call; starts over. */
static u32 hold_max(struct kwq *q)
{
	u32 n;

	kwq_lock(q);
	n = q->hold_max_keys;
	q->hold_max_keys = 0;
	kwq_unlock(q);
	return n;
}

static void fill(struct kunit *test, struct kwq *q, u32 n, s64 delay_ns)
{
	char key[16];
	u32 i;

	for (i = 0; i < n; i++) {
		key_of(key, i);
		KUNIT_ASSERT_GE(test, delay_ns ? kwq_add_after(q, key, 9, delay_ns, 0) :
				kwq_add(q, key, 9), 0);
	}
}

/* Take every key, unleased or to @lease, in order. */
static void take_all(struct kunit *test, struct kwq *q, u32 n, struct kwq_lease *lease)
{
	char key[16], buf[16];
	u32 i, len;

	for (i = 0; i < n; i++) {
		key_of(key, i);
		KUNIT_ASSERT_EQ(test, kwq_get_leased(q, buf, sizeof(buf), &len, KWQ_NOWAIT,
						     lease, NULL), 0);
		KUNIT_ASSERT_EQ(test, memcmp(buf, key, 9), 0);
	}
}

static void expect_queued_in_order(struct kunit *test, struct kwq *q, u32 n)
{
	KUNIT_EXPECT_EQ(test, kwq_len(q), (u64)n);
	take_all(test, q, n, NULL);
	KUNIT_EXPECT_EQ(test, kwq_len(q), 0ULL);
}

/* Stats, then a lease's end, at the item limit (one fill for both). */
static void kwq_bound_test_lease_end(struct kunit *test)
{
	struct fake_clock *fc = fake_queue(test, NULL);
	struct kwq *q = fc->q;
	struct kwq_lease lease, other;
	u32 n = bound_n(q);
	struct kwq_stats st;
	char buf[16];
	u32 len;

	kwq_lease_begin(q, &lease);
	kwq_lease_begin(q, &other);
	fill(test, q, n, 0);
	take_all(test, q, n - 1, &lease);
	/* The last key is another lease's: it stays processing. */
	KUNIT_ASSERT_EQ(test, kwq_get_leased(q, buf, sizeof(buf), &len, KWQ_NOWAIT, &other,
					     NULL), 0);
	/* Stats of all those processing keys walk none of them. */
	fc->now = ktime_add_ms(fc->now, 2);
	hold_max(q);
	kwq_stats(q, &st);
	KUNIT_EXPECT_LE(test, hold_max(q), BOUND_KEYS);
	KUNIT_EXPECT_EQ(test, st.processing, (u64)n);
	/* Every key was taken at the same instant, 2 ms ago. */
	KUNIT_EXPECT_EQ(test, st.unfinished_work_ns, (u64)n * MS(2));
	KUNIT_EXPECT_EQ(test, st.longest_running_ns, (u64)MS(2));
	hold_max(q);
	kwq_lease_end(q, &lease);
	KUNIT_EXPECT_LE(test, hold_max(q), BOUND_KEYS);
	kwq_stats(q, &st);
	KUNIT_EXPECT_EQ(test, st.lease_requeues, (u64)n - 1);
	KUNIT_EXPECT_EQ(test, st.processing, 1ULL);
	/* Back at the head in the order they were taken. */
	expect_queued_in_order(test, q, n - 1);
	kwq_lease_end(q, &other);
	KUNIT_EXPECT_EQ(test, kwq_len(q), 1ULL);
}

/*
 * Keys of three holders (two leases and the unleased list) taken in
 * turn, 1 ms apart, and ended out of order: the longest running key is
 * always the oldest of all, whichever holder has it (kwq.busy orders the
 * holders' lists, moving one whose first key ended).
 */
static void kwq_bound_test_busy_order(struct kunit *test)
{
	static const u32 order[] = { 1, 0, 5, 2, 4, 3 };
	struct fake_clock *fc = fake_queue(test, NULL);
	struct kwq *q = fc->q;
	struct kwq_lease a, b, *who[6];
	struct kwq_handout h[6] = {};
	bool left[6] = { true, true, true, true, true, true };
	char key[16], buf[16];
	struct kwq_stats *st = kunit_kzalloc(test, sizeof(*st), GFP_KERNEL);
	u32 i, j, len;

	KUNIT_ASSERT_NOT_NULL(test, st);
	kwq_lease_begin(q, &a);
	kwq_lease_begin(q, &b);
	fill(test, q, 6, 0);
	for (i = 0; i < 6; i++) {
		who[i] = i % 3 == 0 ? &a : i % 3 == 1 ? &b : NULL;
		KUNIT_ASSERT_EQ(test, kwq_get_leased(q, buf, sizeof(buf), &len, KWQ_NOWAIT,
						     who[i], &h[i]), 0);
		fc->now = ktime_add_ms(fc->now, 1);
	}
	/* Key i has run 6 - i ms. */
	for (i = 0; i < ARRAY_SIZE(order); i++) {
		key_of(key, order[i]);
		KUNIT_ASSERT_EQ(test, kwq_done_ticket(q, key, 9, h[order[i]].ticket),
				KWQ_DONE_FINISHED);
		left[order[i]] = false;
		for (j = 0; j < 6 && !left[j]; j++)
			;
		kwq_stats(q, st);
		KUNIT_EXPECT_EQ(test, st->processing, (u64)(5 - i));
		KUNIT_EXPECT_EQ(test, st->longest_running_ns, j < 6 ? (u64)MS(6 - j) : 0ULL);
	}
	kwq_lease_end(q, &a);
	kwq_lease_end(q, &b);
	KUNIT_EXPECT_EQ(test, kwq_len(q), 0ULL);
}

static void kwq_bound_test_shutdown(struct kunit *test)
{
	struct fake_clock *fc = fake_queue(test, NULL);
	struct kwq *q = fc->q;
	u32 n = bound_n(q);
	struct kwq_stats st;

	fill(test, q, n, MS(1000));
	hold_max(q);
	kwq_shutdown(q);
	KUNIT_EXPECT_LE(test, hold_max(q), BOUND_KEYS);
	kwq_stats(q, &st);
	KUNIT_EXPECT_EQ(test, st.waiting, 0ULL);
	KUNIT_EXPECT_EQ(test, st.waits_dropped, (u64)n);
	KUNIT_EXPECT_EQ(test, st.items, 0ULL);
	KUNIT_EXPECT_EQ(test, fc->programmed, KTIME_MAX);
}

static void kwq_bound_test_destroy(struct kunit *test)
{
	struct fake_clock *fc = fake_queue(test, NULL);
	struct kwq *q = fc->q;
	u32 n = bound_n_small(q);

	fill(test, q, n, MS(1000));
	hold_max(q);
	kwq_get_ref(q);
	kwq_destroy(q);
	fc->q = NULL;
	KUNIT_EXPECT_LE(test, hold_max(q), BOUND_KEYS);
	KUNIT_EXPECT_EQ(test, q->n_waiting, 0ULL);
	KUNIT_EXPECT_EQ(test, q->waits_dropped, (u64)n);
	kwq_put(q);
}

static void kwq_bound_test_drain_flush(struct kunit *test)
{
	struct fake_clock *fc = fake_queue(test, NULL);
	struct kwq *q = fc->q;
	u32 n = bound_n_small(q);

	fill(test, q, n, MS(1000));
	hold_max(q);
	KUNIT_EXPECT_EQ(test, kwq_shutdown_drain(q, KWQ_NOWAIT, KWQ_DRAIN_FLUSH_WAITING),
			-ETIMEDOUT);
	KUNIT_EXPECT_LE(test, hold_max(q), BOUND_KEYS);
	/* Queued in deadline order, which is the order they were added. */
	expect_queued_in_order(test, q, n);
}

/* Every key due at once on the test clock: runs of 64, in deadline order. */
static void kwq_bound_test_timer(struct kunit *test)
{
	struct fake_clock *fc = fake_queue(test, NULL);
	struct kwq *q = fc->q;
	u32 n = bound_n_small(q);
	struct kwq_stats st;

	fill(test, q, n, MS(10));
	hold_max(q);
	step(fc, MS(10));
	KUNIT_EXPECT_LE(test, hold_max(q), BOUND_KEYS);
	kwq_stats(q, &st);
	KUNIT_EXPECT_EQ(test, st.fired, (u64)n);
	KUNIT_EXPECT_EQ(test, st.waiting, 0ULL);
	KUNIT_EXPECT_EQ(test, fc->programmed, KTIME_MAX);
	expect_queued_in_order(test, q, n);
}

/*
 * The same on the queue's own soft hrtimer, which re-arms itself: every
 * key due at one deadline, a few seconds ahead (adds are slow on an
 * emulated CPU).
 */
static void kwq_bound_test_hrtimer(struct kunit *test)
{
	struct kwq *q = kwq_create(NULL, NULL);
	unsigned int ms = 0;
	unsigned long *seen;
	u32 n, i, k, len;
	ktime_t deadline;
	char key[16];

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, q);
	n = bound_n_small(q);
	hold_max(q);
	deadline = ktime_add_ms(ktime_get(), 5000);
	for (i = 0; i < n; i++) {
		s64 delay = ktime_to_ns(ktime_sub(deadline, ktime_get()));

		key_of(key, i);
		KUNIT_ASSERT_GE(test, kwq_add_after(q, key, 9, max_t(s64, 1, delay), 0), 0);
	}
	while (kwq_len(q) < n && ms++ < 3000)
		msleep(20);
	KUNIT_EXPECT_EQ(test, kwq_len(q), (u64)n);
	KUNIT_EXPECT_LE(test, hold_max(q), BOUND_KEYS);
	/*
	 * Each add read the clock a little later than the test did: the
	 * deadlines differ by that jitter, so check that each key came
	 * once (the order is the fake clock's case).
	 */
	seen = bitmap_zalloc(n, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, seen);
	for (i = 0; i < n; i++) {
		KUNIT_ASSERT_EQ(test, kwq_get(q, key, sizeof(key), &len, KWQ_NOWAIT), 0);
		key[len] = '\0';
		KUNIT_ASSERT_EQ(test, kstrtou32(key + 1, 16, &k), 0);
		KUNIT_ASSERT_LT(test, k, n);
		KUNIT_EXPECT_FALSE(test, test_and_set_bit(k, seen));
	}
	bitmap_free(seen);
	KUNIT_EXPECT_EQ(test, kwq_len(q), 0ULL);
	kwq_destroy(q);
}

static void kwq_bound_test_processing_timeout(struct kunit *test)
{
	struct kwq_attr attr = { .processing_timeout_ns = MS(100) };
	struct fake_clock *fc = fake_queue(test, &attr);
	struct kwq *q = fc->q;
	u32 n = bound_n_small(q);
	struct kwq_stats st;

	fill(test, q, n, 0);
	take_all(test, q, n, NULL);
	hold_max(q);
	step(fc, MS(100));
	KUNIT_EXPECT_LE(test, hold_max(q), BOUND_KEYS);
	kwq_stats(q, &st);
	KUNIT_EXPECT_EQ(test, st.processing_expiries, (u64)n);
	KUNIT_EXPECT_EQ(test, st.processing, 0ULL);
	/* Back at the head, the oldest first. */
	expect_queued_in_order(test, q, n);
}

/*
 * Spare records are bounded too: a queue keeps at most 512 records of
 * small keys that went away (a 512-key batch's worth, so that batches up
 * to that size take no trip through the slab allocator per key), and
 * gives them all back to new keys before it allocates.
 */
#define SPARE_KEYS	512

static u32 n_spare(struct kwq *q)
{
	u32 n;

	kwq_lock(q);
	n = q->n_spare;
	kwq_unlock(q);
	return n;
}

static void kwq_bound_test_spares(struct kunit *test)
{
	struct fake_clock *fc = fake_queue(test, NULL);
	struct kwq *q = fc->q;
	char key[16];
	u32 i;

	KUNIT_ASSERT_GE(test, q->max_items, SPARE_KEYS + 8);
	fill(test, q, SPARE_KEYS + 8, 0);
	take_all(test, q, SPARE_KEYS + 8, NULL);
	for (i = 0; i < SPARE_KEYS + 8; i++) {
		key_of(key, i);
		KUNIT_ASSERT_EQ(test, kwq_done(q, key, 9), KWQ_DONE_FINISHED);
	}
	KUNIT_EXPECT_EQ(test, n_spare(q), SPARE_KEYS);
	/* New keys take the spares first. */
	for (i = 0; i < SPARE_KEYS; i++) {
		snprintf(key, sizeof(key), "n%08x", i);
		KUNIT_ASSERT_EQ(test, kwq_add(q, key, 9), KWQ_ADD_QUEUED);
	}
	KUNIT_EXPECT_EQ(test, n_spare(q), 0U);
	KUNIT_EXPECT_EQ(test, kwq_len(q), (u64)SPARE_KEYS);
}

/*
 * Sides (struct kwq_side) are bounded too: a queue keeps the pages its
 * keys' sides came from while any side is in use, and once none is, a
 * worker frees all but KWQ_SIDES_KEPT sides' worth (KWQ_SPARE_MAX keys,
 * rounded up to whole pages).
 */
#define SIDE_KEYS	(KWQ_SIDES_KEPT + 3 * KWQ_SIDES_PER_CHUNK)

struct side_count {
	u32 sides;
	u32 spare;
};

static struct side_count side_count(struct kwq *q)
{
	struct side_count c;

	kwq_lock(q);
	c.sides = q->n_sides;
	c.spare = q->n_side_spare;
	kwq_unlock(q);
	return c;
}

/* Run the worker now, with the reference kwq_sides_idle_locked() takes. */
static void run_sides_work(struct kwq *q)
{
	flush_work(&q->sides_work);
	kwq_lock(q);
	q->sides_trimming = true;
	kwq_unlock(q);
	kwq_get_ref(q);
	schedule_work(&q->sides_work);
	flush_work(&q->sides_work);
}

/* Take @n keys from @first on and finish all but @keep of them. */
static void take_and_finish(struct kunit *test, struct kwq *q, u32 first, u32 n, u32 keep)
{
	char key[16], buf[16];
	u32 i, len;

	for (i = first; i < first + n; i++) {
		key_of(key, i);
		KUNIT_ASSERT_EQ(test, kwq_add(q, key, 9), KWQ_ADD_QUEUED);
		KUNIT_ASSERT_EQ(test, kwq_get(q, buf, sizeof(buf), &len, KWQ_NOWAIT), 0);
	}
	for (i = first; i < first + n - keep; i++) {
		key_of(key, i);
		KUNIT_ASSERT_EQ(test, kwq_done(q, key, 9), KWQ_DONE_FINISHED);
	}
}

static void kwq_bound_test_sides(struct kunit *test)
{
	struct fake_clock *fc = fake_queue(test, NULL);
	struct kwq *q = fc->q;
	struct side_count c;
	char key[16];
	u32 round;

	KUNIT_ASSERT_GE(test, q->max_items, SIDE_KEYS);
	for (round = 0; round < 2; round++) {
		/* All but the last key done: one side is in use. */
		take_and_finish(test, q, 0, SIDE_KEYS, 1);
		c = side_count(q);
		KUNIT_EXPECT_GE(test, c.sides, SIDE_KEYS);
		KUNIT_EXPECT_EQ(test, c.spare, c.sides - 1);
		/* The worker, even run, frees nothing. */
		run_sides_work(q);
		KUNIT_EXPECT_EQ(test, side_count(q).sides, c.sides);
		key_of(key, SIDE_KEYS - 1);
		KUNIT_ASSERT_EQ(test, kwq_done(q, key, 9), KWQ_DONE_FINISHED);
		/* None in use: the queue keeps KWQ_SIDES_KEPT, all spare. */
		flush_work(&q->sides_work);
		c = side_count(q);
		KUNIT_EXPECT_EQ(test, c.sides, KWQ_SIDES_KEPT);
		KUNIT_EXPECT_EQ(test, c.spare, KWQ_SIDES_KEPT);
	}
	/* Up to KWQ_SIDES_KEPT keys at once neither allocate nor free sides. */
	take_and_finish(test, q, 0, KWQ_SIDES_KEPT, 0);
	run_sides_work(q);
	c = side_count(q);
	KUNIT_EXPECT_EQ(test, c.sides, KWQ_SIDES_KEPT);
	KUNIT_EXPECT_EQ(test, c.spare, KWQ_SIDES_KEPT);
}

/*
 * A key has at most one side, so an add of a key that has its side never
 * needs a spare: with none left, the re-adds of a held key (now, after a
 * delay, rate-limited) allocate no side. An add of a new key does make
 * sure of one, for the get to come, so it allocates a page of them.
 */
static void kwq_bound_test_held_key_adds(struct kunit *test)
{
	struct fake_clock *fc = fake_queue(test, NULL);
	struct kwq *q = fc->q;
	struct side_count c;
	char key[16];

	/* Key 0 held; then hold keys until no side is spare. */
	take_and_finish(test, q, 0, 1, 1);
	c = side_count(q);
	KUNIT_ASSERT_GT(test, c.sides, 0U);
	take_and_finish(test, q, 1, c.spare, c.spare);
	KUNIT_ASSERT_EQ(test, side_count(q).spare, 0U);
	key_of(key, 0);
	KUNIT_EXPECT_EQ(test, kwq_add(q, key, 9), KWQ_ADD_DEFERRED);
	KUNIT_EXPECT_EQ(test, kwq_add_after(q, key, 9, 1000000, 0), KWQ_ADD_WAITING);
	KUNIT_EXPECT_GE(test, kwq_add_rate_limited(q, key, 9), 0);
	KUNIT_EXPECT_EQ(test, side_count(q).sides, c.sides);
	KUNIT_EXPECT_EQ(test, side_count(q).spare, 0U);
	/* The check can fail: a new key's add makes sure of a spare. */
	KUNIT_EXPECT_EQ(test, kwq_add(q, "new", 3), KWQ_ADD_QUEUED);
	KUNIT_EXPECT_EQ(test, side_count(q).sides, c.sides + KWQ_SIDES_PER_CHUNK);
}

static struct kunit_case kwq_bound_cases[] = {
	KUNIT_CASE(kwq_bound_test_lease_end),
	KUNIT_CASE(kwq_bound_test_busy_order),
	KUNIT_CASE(kwq_bound_test_shutdown),
	KUNIT_CASE(kwq_bound_test_destroy),
	KUNIT_CASE(kwq_bound_test_drain_flush),
	KUNIT_CASE(kwq_bound_test_timer),
	KUNIT_CASE(kwq_bound_test_hrtimer),
	KUNIT_CASE(kwq_bound_test_processing_timeout),
	KUNIT_CASE(kwq_bound_test_spares),
	KUNIT_CASE(kwq_bound_test_sides),
	KUNIT_CASE(kwq_bound_test_held_key_adds),
	{}
};

static struct kunit_suite kwq_bound_suite = {
	.name = "kwq_bound",
	.exit = fake_clock_exit,
	.test_cases = kwq_bound_cases,
};

kunit_test_suite(kwq_bound_suite);
