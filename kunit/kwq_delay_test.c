// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite for kwq's delays: add-after, cancel, replace, the waiting
 * policies and shutdown, on a fake clock stepped by the test (no
 * sleeping), plus the real hrtimer path with a lateness measurement.
 * Covers client-go's delaying_queue_test.go scenarios.
 */

#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/err.h>
#include <linux/kthread.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/string.h>

#include "kwq.h"
#include "kwq_fake_clock.h"
#include "kwq_core.h"
#include "kwq_internal.h"

static struct fake_clock *make_queue(struct kunit *test, u32 policy)
{
	struct kwq_attr attr = { .policy = policy };

	return fake_queue(test, &attr);
}

static int after(struct kwq *q, const char *key, s64 delay, u32 flags)
{
	return kwq_add_after(q, key, strlen(key), delay, flags);
}

static int add(struct kwq *q, const char *key)
{
	return kwq_add(q, key, strlen(key));
}

static void expect_get(struct kunit *test, struct kwq *q, const char *want)
{
	char buf[32];
	u32 len = 0;
	int ret = kwq_get(q, buf, sizeof(buf) - 1, &len, KWQ_NOWAIT);

	buf[ret ? 0 : len] = '\0';
	KUNIT_EXPECT_EQ(test, ret, 0);
	KUNIT_EXPECT_STREQ(test, buf, want);
}

static void expect_empty(struct kunit *test, struct kwq *q)
{
	char buf[32];
	u32 len;

	KUNIT_EXPECT_EQ(test, kwq_get(q, buf, sizeof(buf), &len, KWQ_NOWAIT), -EAGAIN);
}

static void expect_waiting(struct kunit *test, struct kwq *q, u64 waiting, u64 items)
{
	struct kwq_stats st;

	kwq_stats(q, &st);
	KUNIT_EXPECT_EQ(test, st.waiting, waiting);
	KUNIT_EXPECT_EQ(test, st.items, items);
}

static int debounce(struct kwq *q, const char *key, s64 delay, u64 max_wait)
{
	return kwq_add_debounced(q, key, strlen(key), delay, max_wait);
}

/* client-go TestSimpleQueue. */
static void kwq_delay_test_simple(struct kunit *test)
{
	struct fake_clock *fc = make_queue(test, 0);
	struct kwq *q = fc->q;

	KUNIT_EXPECT_EQ(test, after(q, "foo", MS(50), 0), KWQ_ADD_WAITING);
	KUNIT_EXPECT_EQ(test, fc->programmed, ktime_add_ns(fc->now, MS(50)));
	KUNIT_EXPECT_EQ(test, kwq_len(q), 0);
	expect_waiting(test, q, 1, 1);
	step(fc, MS(49));
	KUNIT_EXPECT_EQ(test, kwq_len(q), 0);
	step(fc, MS(1));
	KUNIT_EXPECT_EQ(test, kwq_len(q), 1);
	expect_waiting(test, q, 0, 1);
	KUNIT_EXPECT_EQ(test, fc->programmed, KTIME_MAX);
	expect_get(test, q, "foo");
	KUNIT_EXPECT_EQ(test, kwq_done(q, "foo", 3), KWQ_DONE_FINISHED);
	expect_waiting(test, q, 0, 0);
}

static void kwq_delay_test_nonpositive_is_add(struct kunit *test)
{
	struct fake_clock *fc = make_queue(test, 0);
	struct kwq *q = fc->q;

	KUNIT_EXPECT_EQ(test, after(q, "a", 0, 0), KWQ_ADD_QUEUED);
	KUNIT_EXPECT_EQ(test, after(q, "a", -MS(5), 0), KWQ_ADD_DUPLICATE);
	KUNIT_EXPECT_EQ(test, after(q, "b", S64_MIN, 0), KWQ_ADD_QUEUED);
	expect_waiting(test, q, 0, 2);
	KUNIT_EXPECT_EQ(test, fc->programmed, KTIME_MAX);
}

/*
 * Reads of the fake clock with the queue's lock held, and without it:
 * the test runs in process context, and kwq_lock() turns bottom halves
 * off (so does its sleeping lock with PREEMPT_RT).
 */
static unsigned int reads_locked, reads_unlocked;
/* Whether the spy's time moves on by 1 ms after each read. */
static bool spy_ticks;

static ktime_t spy_now(struct kwq_clock *c)
{
	struct fake_clock *fc = container_of(c, struct fake_clock, base);
	ktime_t now = fc->now;

	if (softirq_count())
		reads_locked++;
	else
		reads_unlocked++;
	if (spy_ticks)
		fc->now = ktime_add_ns(now, MS(1));
	return now;
}

/* Make the spy @fc's clock, its counts zero, its time moving on if @ticks. */
static void spy_start(struct fake_clock *fc, bool ticks)
{
	fc->base.now = spy_now;
	spy_ticks = ticks;
	reads_locked = 0;
	reads_unlocked = 0;
}

/*
 * An add that may wait (a delay, a debounce, the limiter's backoff) reads
 * the clock once, before it takes the lock: its delay counts from its
 * start, so the wait for the lock does not stretch it.
 */
static void kwq_delay_test_counts_from_start(struct kunit *test)
{
	struct fake_clock *fc = make_queue(test, 0);
	struct kwq *q = fc->q;

	spy_start(fc, false);
	KUNIT_EXPECT_EQ(test, after(q, "a", MS(10), 0), KWQ_ADD_WAITING);
	KUNIT_EXPECT_EQ(test, reads_unlocked, 1);
	KUNIT_EXPECT_EQ(test, fc->programmed, ktime_add_ns(fc->now, MS(10)));
	KUNIT_EXPECT_EQ(test, debounce(q, "b", MS(5), MS(50)), KWQ_ADD_WAITING);
	KUNIT_EXPECT_EQ(test, reads_unlocked, 2);
	KUNIT_EXPECT_EQ(test, fc->programmed, ktime_add_ns(fc->now, MS(5)));
	/* The default limiter's first backoff: 5 ms. */
	KUNIT_EXPECT_EQ(test, kwq_add_rate_limited(q, "c", 1), KWQ_ADD_WAITING);
	KUNIT_EXPECT_EQ(test, reads_unlocked, 3);
	KUNIT_EXPECT_EQ(test, reads_locked, 0);
	expect_waiting(test, q, 3, 3);
}

/*
 * The same when the add drops the lock to allocate its key's record (or a
 * spare side) sleeping, the allocation without sleeping made to fail: the
 * hold it takes again keeps the add's instant and reads no clock, so the
 * delay still counts from the start, though the spy's time moved on.
 */
static void kwq_delay_test_counts_from_start_after_relock(struct kunit *test)
{
#if IS_ENABLED(CONFIG_FAULT_INJECTION) && IS_ENABLED(CONFIG_FAILSLAB)
	struct fake_clock *fc = make_queue(test, 0);
	struct kwq *q = fc->q;
	ktime_t start = fc->now;
	bool injected;
	int ret;

	spy_start(fc, true);
	WRITE_ONCE(current->fail_nth, 1);
	ret = after(q, "a", MS(10), 0);
	injected = !READ_ONCE(current->fail_nth);
	WRITE_ONCE(current->fail_nth, 0);
	spy_ticks = false;
	KUNIT_EXPECT_EQ(test, ret, KWQ_ADD_WAITING);
	KUNIT_EXPECT_TRUE_MSG(test, injected, "no allocation failed: no new hold to test");
	KUNIT_EXPECT_EQ(test, reads_unlocked, 1);
	KUNIT_EXPECT_EQ(test, reads_locked, 0);
	KUNIT_EXPECT_EQ(test, fc->programmed, ktime_add_ns(start, MS(10)));
#else
	kunit_skip(test, "needs CONFIG_FAULT_INJECTION and CONFIG_FAILSLAB");
#endif
}

/*
 * The instant an add read before the lock never comes before one that an
 * earlier hold read: an add that read the clock first may take the lock
 * after another that read it later, and instants must not go back from
 * one hold to the next. Here the clock steps back to play that add.
 */
static void kwq_delay_test_instant_never_goes_back(struct kunit *test)
{
	struct fake_clock *fc = make_queue(test, 0);
	struct kwq *q = fc->q;
	ktime_t t = fc->now;

	fc->now = ktime_add_ns(t, MS(5));
	KUNIT_EXPECT_EQ(test, after(q, "a", MS(20), 0), KWQ_ADD_WAITING);
	fc->now = t;
	KUNIT_EXPECT_EQ(test, after(q, "b", MS(10), 0), KWQ_ADD_WAITING);
	/* b counts from a's instant, t + 5 ms, not from t. */
	KUNIT_EXPECT_EQ(test, fc->programmed, ktime_add_ns(t, MS(15)));
}

/* client-go TestCopyShifting / TestAddTwoFireEarly: deadline order, ties FIFO. */
static void kwq_delay_test_order(struct kunit *test)
{
	struct fake_clock *fc = make_queue(test, 0);
	struct kwq *q = fc->q;

	after(q, "c", MS(30), 0);
	after(q, "a", MS(10), 0);
	after(q, "b", MS(20), 0);
	after(q, "b2", MS(20), 0);
	KUNIT_EXPECT_EQ(test, fc->programmed, ktime_add_ns(fc->now, MS(10)));
	step(fc, MS(30));
	KUNIT_EXPECT_EQ(test, kwq_len(q), 4);
	expect_get(test, q, "a");
	expect_get(test, q, "b");
	expect_get(test, q, "b2");
	expect_get(test, q, "c");
}

static void kwq_delay_test_fires_one_at_a_time(struct kunit *test)
{
	struct fake_clock *fc = make_queue(test, 0);
	struct kwq *q = fc->q;

	after(q, "first", MS(1), 0);
	after(q, "second", MS(50), 0);
	step(fc, MS(1));
	expect_get(test, q, "first");
	expect_empty(test, q);
	KUNIT_EXPECT_EQ(test, fc->programmed, ktime_add_ns(fc->now, MS(49)));
	step(fc, MS(49));
	expect_get(test, q, "second");
}

/* client-go TestDeduping: one waiting entry, the earliest deadline wins. */
static void kwq_delay_test_dedup_earliest(struct kunit *test)
{
	struct fake_clock *fc = make_queue(test, 0);
	struct kwq *q = fc->q;

	KUNIT_EXPECT_EQ(test, after(q, "x", MS(50), 0), KWQ_ADD_WAITING);
	KUNIT_EXPECT_EQ(test, after(q, "x", MS(70), 0), KWQ_ADD_WAIT_KEPT);
	KUNIT_EXPECT_EQ(test, after(q, "x", MS(50), 0), KWQ_ADD_WAIT_KEPT);
	KUNIT_EXPECT_EQ(test, after(q, "x", MS(10), 0), KWQ_ADD_WAIT_MOVED);
	expect_waiting(test, q, 1, 1);
	KUNIT_EXPECT_EQ(test, fc->programmed, ktime_add_ns(fc->now, MS(10)));
	step(fc, MS(10));
	expect_get(test, q, "x");
	kwq_done(q, "x", 1);
	/* The superseded deadlines never fire: no second run. */
	step(fc, MS(100));
	expect_empty(test, q);
	expect_waiting(test, q, 0, 0);
}

/* Postponing a delay: client-go#1104 asks for it; KWQ_AFTER_REPLACE gives it. */
static void kwq_delay_test_replace(struct kunit *test)
{
	struct fake_clock *fc = make_queue(test, 0);
	struct kwq *q = fc->q;

	after(q, "x", MS(10), 0);
	KUNIT_EXPECT_EQ(test, after(q, "x", MS(50), KWQ_AFTER_REPLACE), KWQ_ADD_WAIT_MOVED);
	KUNIT_EXPECT_EQ(test, fc->programmed, ktime_add_ns(fc->now, MS(50)));
	step(fc, MS(10));
	expect_empty(test, q);
	step(fc, MS(40));
	expect_get(test, q, "x");
	KUNIT_EXPECT_EQ(test, after(q, "y", MS(5), KWQ_AFTER_REPLACE), KWQ_ADD_WAITING);
	KUNIT_EXPECT_EQ(test, after(q, "y", MS(5), KWQ_AFTER_REPLACE), KWQ_ADD_WAIT_KEPT);
}

/* client-go has no way to cancel a delayed key (client-go#131). */
static void kwq_delay_test_cancel(struct kunit *test)
{
	struct fake_clock *fc = make_queue(test, 0);
	struct kwq *q = fc->q;
	struct kwq_stats st;

	after(q, "x", MS(10), 0);
	after(q, "y", MS(20), 0);
	KUNIT_EXPECT_EQ(test, kwq_cancel(q, "x", 1), 1);
	KUNIT_EXPECT_EQ(test, kwq_cancel(q, "x", 1), 0);
	KUNIT_EXPECT_EQ(test, kwq_cancel(q, "nope", 4), 0);
	KUNIT_EXPECT_EQ(test, fc->programmed, ktime_add_ns(fc->now, MS(20)));
	expect_waiting(test, q, 1, 1);
	KUNIT_EXPECT_EQ(test, kwq_cancel(q, "y", 1), 1);
	KUNIT_EXPECT_EQ(test, fc->programmed, KTIME_MAX);
	expect_waiting(test, q, 0, 0);
	step(fc, MS(100));
	expect_empty(test, q);
	/* Cancel leaves other state alone: a queued key stays queued. */
	add(q, "z");
	after(q, "z", MS(10), 0);
	KUNIT_EXPECT_EQ(test, kwq_cancel(q, "z", 1), 1);
	expect_get(test, q, "z");
	kwq_stats(q, &st);
	KUNIT_EXPECT_EQ(test, st.cancels, 3);
}

/* keep: client-go behaviour, the key runs now and again later. */
static void kwq_delay_test_policy_keep(struct kunit *test)
{
	struct fake_clock *fc = make_queue(test, KWQ_POLICY_KEEP);
	struct kwq *q = fc->q;

	after(q, "x", MS(10), 0);
	KUNIT_EXPECT_EQ(test, add(q, "x"), KWQ_ADD_QUEUED);
	expect_waiting(test, q, 1, 1);
	expect_get(test, q, "x");
	kwq_done(q, "x", 1);
	step(fc, MS(10));
	expect_get(test, q, "x");
}

/*
 * A key that only waits keeps its entry in its record; one that is also
 * queued or processing keeps it in a side (module/kwq_item.h). The entry
 * moves between the two in place: b, whose entry was made second, still
 * runs second after an add queued it (its entry moved to a side), a get
 * and a done left it waiting alone with its side, and d waits in its
 * record as before.
 */
static void kwq_delay_test_side_keeps_place(struct kunit *test)
{
	struct fake_clock *fc = make_queue(test, KWQ_POLICY_KEEP);
	struct kwq *q = fc->q;

	after(q, "a", MS(10), 0);
	after(q, "b", MS(10), 0);
	after(q, "c", MS(10), 0);
	after(q, "d", MS(10), 0);
	KUNIT_EXPECT_EQ(test, add(q, "b"), KWQ_ADD_QUEUED);
	expect_get(test, q, "b");
	KUNIT_EXPECT_EQ(test, kwq_add_after(q, "b", 1, MS(10), 0), KWQ_ADD_WAIT_KEPT);
	KUNIT_EXPECT_EQ(test, kwq_done(q, "b", 1), KWQ_DONE_FINISHED);
	expect_waiting(test, q, 4, 4);
	step(fc, MS(10));
	expect_get(test, q, "a");
	expect_get(test, q, "b");
	expect_get(test, q, "c");
	expect_get(test, q, "d");
	expect_empty(test, q);
	expect_waiting(test, q, 0, 4);
}

/* promote (the default): the key runs now, once. */
static void kwq_delay_test_policy_promote(struct kunit *test)
{
	struct fake_clock *fc = make_queue(test, 0);
	struct kwq *q = fc->q;

	after(q, "x", MS(10), 0);
	KUNIT_EXPECT_EQ(test, add(q, "x"), KWQ_ADD_QUEUED);
	expect_waiting(test, q, 0, 1);
	KUNIT_EXPECT_EQ(test, fc->programmed, KTIME_MAX);
	expect_get(test, q, "x");
	kwq_done(q, "x", 1);
	step(fc, MS(10));
	expect_empty(test, q);
}

/* strict: the add is absorbed; the key runs at its waiting deadline. */
static void kwq_delay_test_policy_strict(struct kunit *test)
{
	struct fake_clock *fc = make_queue(test, KWQ_POLICY_STRICT);
	struct kwq *q = fc->q;
	struct kwq_stats st;

	after(q, "x", MS(10), 0);
	KUNIT_EXPECT_EQ(test, add(q, "x"), KWQ_ADD_ABSORBED);
	expect_empty(test, q);
	step(fc, MS(10));
	expect_get(test, q, "x");
	kwq_stats(q, &st);
	KUNIT_EXPECT_EQ(test, st.absorbed, 1);
	KUNIT_EXPECT_EQ(test, st.fired, 1);
}

static void kwq_delay_test_policy_override(struct kunit *test)
{
	struct fake_clock *fc = make_queue(test, KWQ_POLICY_KEEP);
	struct kwq *q = fc->q;

	after(q, "x", MS(10), 0);
	KUNIT_EXPECT_EQ(test, kwq_add_policy(q, "x", 1, KWQ_POLICY_STRICT), KWQ_ADD_ABSORBED);
	KUNIT_EXPECT_EQ(test, kwq_add_policy(q, "x", 1, KWQ_POLICY_PROMOTE), KWQ_ADD_QUEUED);
	expect_waiting(test, q, 0, 1);
	KUNIT_EXPECT_EQ(test, kwq_add_policy(q, "x", 1, 4), -EINVAL);
	KUNIT_EXPECT_EQ(test, kwq_add_after(q, "x", 1, 0, 1 << 3), -EINVAL);
	KUNIT_EXPECT_EQ(test, kwq_add_after(q, "x", 1, MS(1), 1 << 8), -EINVAL);
}

/* A deadline that comes while the key is queued does not queue it twice. */
static void kwq_delay_test_fire_while_queued(struct kunit *test)
{
	struct fake_clock *fc = make_queue(test, 0);
	struct kwq *q = fc->q;

	add(q, "x");
	KUNIT_EXPECT_EQ(test, after(q, "x", MS(10), 0), KWQ_ADD_WAITING);
	step(fc, MS(10));
	KUNIT_EXPECT_EQ(test, kwq_len(q), 1);
	expect_get(test, q, "x");
	expect_empty(test, q);
}

/* A deadline that comes while the key is processing defers it. */
static void kwq_delay_test_fire_while_processing(struct kunit *test)
{
	struct fake_clock *fc = make_queue(test, 0);
	struct kwq *q = fc->q;

	add(q, "x");
	expect_get(test, q, "x");
	after(q, "x", MS(10), 0);
	step(fc, MS(10));
	expect_empty(test, q);
	KUNIT_EXPECT_EQ(test, kwq_done(q, "x", 1), KWQ_DONE_REQUEUED);
	expect_get(test, q, "x");
}

static void kwq_delay_test_shutdown_drops_waiting(struct kunit *test)
{
	struct fake_clock *fc = make_queue(test, 0);
	struct kwq *q = fc->q;
	struct kwq_stats st;

	after(q, "a", MS(10), 0);
	after(q, "b", MS(20), 0);
	add(q, "c");
	kwq_shutdown(q);
	KUNIT_EXPECT_EQ(test, fc->programmed, KTIME_MAX);
	expect_waiting(test, q, 0, 1);
	KUNIT_EXPECT_EQ(test, after(q, "d", MS(1), 0), -ESHUTDOWN);
	step(fc, MS(100));
	expect_get(test, q, "c");
	kwq_stats(q, &st);
	KUNIT_EXPECT_EQ(test, st.waits_dropped, 2);
	KUNIT_EXPECT_EQ(test, st.fired, 0);
}

static void kwq_delay_test_drain_flush(struct kunit *test)
{
	struct fake_clock *fc = make_queue(test, 0);
	struct kwq *q = fc->q;

	after(q, "late", MS(500), 0);
	after(q, "early", MS(10), 0);
	KUNIT_EXPECT_EQ(test, kwq_shutdown_drain(q, KWQ_NOWAIT, KWQ_DRAIN_FLUSH_WAITING),
			-ETIMEDOUT);
	expect_waiting(test, q, 0, 2);
	/* Flushed in deadline order. */
	expect_get(test, q, "early");
	expect_get(test, q, "late");
	kwq_done(q, "early", 5);
	kwq_done(q, "late", 4);
	KUNIT_EXPECT_EQ(test, kwq_shutdown_drain(q, KWQ_NOWAIT, 0), 0);
	KUNIT_EXPECT_EQ(test, kwq_shutdown_drain(q, KWQ_NOWAIT, 1 << 5), -EINVAL);
}

static void kwq_delay_test_clamp(struct kunit *test)
{
	struct fake_clock *fc = make_queue(test, 0);
	struct kwq *q = fc->q;

	KUNIT_EXPECT_EQ(test, after(q, "far", S64_MAX, 0), KWQ_ADD_WAITING);
	KUNIT_EXPECT_EQ(test, fc->programmed, ktime_add_ns(fc->now, KWQ_DELAY_MAX_NS));
	step(fc, KWQ_DELAY_MAX_NS - 1);
	expect_empty(test, q);
	step(fc, 1);
	expect_get(test, q, "far");
}

/* A key not done within the processing timeout goes back (c-r#798). */
static u64 expect_get_ticket(struct kunit *test, struct kwq *q, const char *want)
{
	char buf[32];
	u32 len = 0;
	u64 ticket = 0;
	int ret = kwq_get_ticket(q, buf, sizeof(buf) - 1, &len, &ticket, KWQ_NOWAIT);

	buf[ret ? 0 : len] = '\0';
	KUNIT_EXPECT_EQ(test, ret, 0);
	KUNIT_EXPECT_STREQ(test, buf, want);
	KUNIT_EXPECT_NE(test, ticket, 0);
	return ticket;
}

static void kwq_delay_test_processing_timeout(struct kunit *test)
{
	struct kwq_attr attr = { .processing_timeout_ns = MS(100) };
	struct fake_clock *fc = fake_queue(test, &attr);
	struct kwq *q = fc->q;
	ktime_t start_a = fc->now;
	struct kwq_stats st;
	u64 ta, tb, ta2;

	add(q, "a");
	add(q, "b");
	ta = expect_get_ticket(test, q, "a");
	KUNIT_EXPECT_EQ(test, fc->programmed, ktime_add_ns(start_a, MS(100)));
	step(fc, MS(50));
	tb = expect_get_ticket(test, q, "b");
	step(fc, MS(49));
	expect_empty(test, q);
	step(fc, MS(1));
	/* a overstayed: back at the head; b has 50 ms left. */
	KUNIT_EXPECT_EQ(test, kwq_done_ticket(q, "a", 1, ta), -ENOENT);
	/* Without a ticket a kernel caller cannot end a hand-out here. */
	KUNIT_EXPECT_EQ(test, kwq_done(q, "b", 1), -EINVAL);
	KUNIT_EXPECT_EQ(test, kwq_requeue(q, "b", 1), -EINVAL);
	KUNIT_EXPECT_EQ(test, fc->programmed, ktime_add_ns(fc->now, MS(50)));
	kwq_stats(q, &st);
	KUNIT_EXPECT_EQ(test, st.processing_expiries, 1);
	KUNIT_EXPECT_EQ(test, st.queued, 1);
	KUNIT_EXPECT_EQ(test, st.processing, 1);
	ta2 = expect_get_ticket(test, q, "a");
	KUNIT_EXPECT_GT(test, ta2, tb);
	/* The first worker's late done cannot end the second's hand-out. */
	KUNIT_EXPECT_EQ(test, kwq_done_ticket(q, "a", 1, ta), -ENOENT);
	KUNIT_EXPECT_EQ(test, add(q, "a"), KWQ_ADD_DEFERRED);
	KUNIT_EXPECT_EQ(test, kwq_done_ticket(q, "b", 1, tb), KWQ_DONE_FINISHED);
	/* The timer now follows a, the only key left processing. */
	KUNIT_EXPECT_EQ(test, fc->programmed, ktime_add_ns(fc->now, MS(100)));
	KUNIT_EXPECT_EQ(test, kwq_done_ticket(q, "a", 1, ta2), KWQ_DONE_REQUEUED);
	ta = expect_get_ticket(test, q, "a");
	KUNIT_EXPECT_EQ(test, kwq_requeue_ticket(q, "a", 1, ta2), -ENOENT);
	KUNIT_EXPECT_EQ(test, kwq_done_ticket(q, "a", 1, ta), KWQ_DONE_FINISHED);
	KUNIT_EXPECT_EQ(test, fc->programmed, KTIME_MAX);
	step(fc, MS(1000));
	kwq_stats(q, &st);
	KUNIT_EXPECT_EQ(test, st.processing_expiries, 1);
	KUNIT_EXPECT_EQ(test, st.items, 0);
}

/* The timer serves both: the earlier of a deadline and an expiry wins. */
static void kwq_delay_test_processing_timeout_and_waiting(struct kunit *test)
{
	struct kwq_attr attr = { .processing_timeout_ns = MS(100) };
	struct fake_clock *fc = fake_queue(test, &attr);
	struct kwq *q = fc->q;

	add(q, "p");
	expect_get(test, q, "p");
	after(q, "w", MS(30), 0);
	KUNIT_EXPECT_EQ(test, fc->programmed, ktime_add_ns(fc->now, MS(30)));
	step(fc, MS(30));
	expect_get(test, q, "w");
	KUNIT_EXPECT_EQ(test, fc->programmed, ktime_add_ns(fc->now, MS(70)));
	attr.processing_timeout_ns = KWQ_DELAY_MAX_NS + 1;
	KUNIT_EXPECT_EQ(test, PTR_ERR(kwq_create(NULL, &attr)), -EINVAL);
}

/* Destroying a queue with waiting keys frees them (kmemleak checks). */
static void kwq_delay_test_destroy_with_waiting(struct kunit *test)
{
	struct fake_clock *fc = make_queue(test, 0);
	char key[16];
	int i;

	for (i = 0; i < 100; i++) {
		scnprintf(key, sizeof(key), "k%d", i);
		KUNIT_EXPECT_EQ(test, after(fc->q, key, MS(i + 1), 0), KWQ_ADD_WAITING);
	}
	expect_waiting(test, fc->q, 100, 100);
	kwq_destroy(fc->q);
	fc->q = NULL;
}

/* The real clock: a real hrtimer, and a queue destroyed while armed. */
static void kwq_delay_test_real_timer(struct kunit *test)
{
	struct kwq *q = kwq_create(NULL, NULL);
	char buf[8];
	u32 len;

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, q);
	KUNIT_EXPECT_EQ(test, kwq_add_after(q, "t", 1, MS(5), 0), KWQ_ADD_WAITING);
	KUNIT_EXPECT_EQ(test, kwq_get(q, buf, sizeof(buf), &len,
				      kwq_deadline_after(MS(5000))), 0);
	KUNIT_EXPECT_EQ(test, kwq_add_after(q, "u", 1, MS(60000), 0), KWQ_ADD_WAITING);
	/* Armed for a minute from now: destroy must cancel it (ODEBUG checks). */
	kwq_destroy(q);
}

static int get_within(struct kwq *q, char *buf, u32 cap, u32 *len)
{
	return kwq_get(q, buf, cap, len, kwq_deadline_after(MS(5000)));
}

/*
 * The real timer finds the queue's lock held at the deadline: held here
 * across it (with bottom halves off, so the timer interrupt comes on this
 * CPU or the other one meanwhile). Without PREEMPT_RT the hard timer only
 * tries the lock and leaves the step to the soft one, which must run it
 * once the lock is free. Tried again if the deadline ran before the lock
 * was taken here.
 */
static void kwq_delay_test_timer_finds_lock_held(struct kunit *test)
{
	struct kwq *q = kwq_create(NULL, NULL);
	bool across = false;
	char buf[8];
	u32 len;
	int i;

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, q);
	for (i = 0; i < 20 && !across; i++) {
		ktime_t due;

		KUNIT_ASSERT_EQ(test, kwq_add_after(q, "h", 1, MS(50), 0), KWQ_ADD_WAITING);
		/* Read after the add: no earlier than the queue's deadline. */
		due = ktime_add_ms(ktime_get(), 50 + 5);
		kwq_lock(q);
		across = q->n_waiting == 1;
		while (ktime_before(ktime_get(), due))
			cpu_relax();
		kwq_unlock(q);
		KUNIT_EXPECT_EQ(test, get_within(q, buf, sizeof(buf), &len), 0);
		KUNIT_EXPECT_EQ(test, kwq_done(q, "h", 1), KWQ_DONE_FINISHED);
	}
	KUNIT_EXPECT_TRUE_MSG(test, across, "the lock was never held across the deadline");
	kwq_destroy(q);
}

struct restart_race {
	struct kwq *q;
	struct completion done;
	bool seen_running;	/* the callback was held open */
	bool queued_in_window;	/* the cancel started the timer meanwhile */
};

/* On another CPU: wait for the timer's callback, then cancel "a". */
static int restart_racer(void *data)
{
	struct restart_race *r = data;
	ktime_t give_up = ktime_add_ms(ktime_get(), 2000);

	while (!hrtimer_callback_running(&r->q->timer) && ktime_before(ktime_get(), give_up))
		cpu_relax();
	r->seen_running = hrtimer_callback_running(&r->q->timer);
	kwq_cancel(r->q, "a", 1);
	r->queued_in_window = hrtimer_is_queued(&r->q->timer) &&
			      hrtimer_callback_running(&r->q->timer);
	complete(&r->done);
	return 0;
}

/*
 * Without PREEMPT_RT: another CPU starts the queue's timer between its
 * interrupt and the callback's trylock (the window is held open for
 * 30 ms by kwq_test_hard_delay_ms): "a" is due, its cancel there starts
 * the timer for "b", which is due too by the time the callback runs.
 * The callback runs "b" and must then start the queued timer for "c",
 * never set its expiry in place (kwq_arm_locked() warns if it would):
 * that expiry orders the timer in its CPU's tree. The deadlines leave
 * the racer 200 ms to start, and "c" comes after it gives up.
 */
static void kwq_delay_test_timer_restarted_in_window(struct kunit *test)
{
	struct restart_race r = {};
	struct task_struct *t;
	ktime_t expires, armed;
	bool queued;
	u64 waiting;
	char buf[8];
	u32 len = 0;
	int cpu, other;

	if (!KWQ_TIMER_HARD)
		kunit_skip(test, "PREEMPT_RT: the timer is soft and its callback takes the lock");
	r.q = kwq_create(NULL, NULL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, r.q);
	init_completion(&r.done);
	WRITE_ONCE(kwq_test_hard_delay_ms, 30);
	KUNIT_EXPECT_EQ(test, kwq_add_after(r.q, "c", 1, MS(5000), 0), KWQ_ADD_WAITING);
	KUNIT_EXPECT_EQ(test, kwq_add_after(r.q, "b", 1, MS(210), 0), KWQ_ADD_WAITING);
	KUNIT_EXPECT_EQ(test, kwq_add_after(r.q, "a", 1, MS(200), 0), KWQ_ADD_WAITING);
	/* The racer runs on a CPU other than the one the timer is queued on. */
	cpu = READ_ONCE(r.q->timer.base)->cpu_base->cpu;
	other = cpumask_any_but(cpu_online_mask, cpu);
	t = other < nr_cpu_ids ? kthread_create(restart_racer, &r, "kwq-restart-racer") :
				 ERR_PTR(-ENODEV);
	if (IS_ERR(t)) {
		WRITE_ONCE(kwq_test_hard_delay_ms, 0);
		kwq_destroy(r.q);
		if (PTR_ERR(t) == -ENODEV)
			kunit_skip(test, "needs two CPUs");
		KUNIT_FAIL(test, "kthread_create: %ld", PTR_ERR(t));
		return;
	}
	kthread_bind(t, other);
	wake_up_process(t);
	wait_for_completion(&r.done);
	KUNIT_EXPECT_EQ(test, get_within(r.q, buf, sizeof(buf), &len), 0);
	WRITE_ONCE(kwq_test_hard_delay_ms, 0);
	kwq_lock(r.q);
	waiting = r.q->n_waiting;
	queued = hrtimer_is_queued(&r.q->timer);
	expires = hrtimer_get_expires(&r.q->timer);
	armed = r.q->armed;
	kwq_unlock(r.q);
	KUNIT_EXPECT_TRUE_MSG(test, r.seen_running, "no timer callback seen on CPU %d", cpu);
	KUNIT_EXPECT_TRUE_MSG(test, r.queued_in_window,
			      "the cancel did not start the timer while its callback waited");
	KUNIT_EXPECT_EQ(test, len, 1);
	KUNIT_EXPECT_EQ(test, buf[0], 'b');
	KUNIT_EXPECT_EQ(test, waiting, 1);
	KUNIT_EXPECT_TRUE(test, queued);
	KUNIT_EXPECT_EQ(test, ktime_to_ns(expires), ktime_to_ns(armed));
	kwq_destroy(r.q);
}

/*
 * 200 keys due at once when the real timer fires: it is cancelled after
 * the first add (the later deadlines do not arm it again) and started
 * again once every deadline has passed. They come in deadline order, a
 * step of 64 at a time, the steps after the first from the soft timer
 * without PREEMPT_RT.
 */
static void kwq_delay_test_timer_steps(struct kunit *test)
{
	struct kwq *q = kwq_create(NULL, NULL);
	char buf[8], want[8];
	int i, bad = 0;
	ktime_t at, last;
	u64 waiting;
	u32 len, most;

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, q);
	for (i = 0; i < 200; i++) {
		len = scnprintf(buf, sizeof(buf), "%d", i);
		KUNIT_ASSERT_EQ(test, kwq_add_after(q, buf, len, MS(20), 0), KWQ_ADD_WAITING);
		if (!i)
			hrtimer_cancel(&q->timer);
	}
	/* Read after the last add: every deadline is within 20 ms of it. */
	last = ktime_get();
	while (ktime_before(ktime_get(), ktime_add_ms(last, 30)))
		msleep(20);
	kwq_lock(q);
	waiting = q->n_waiting;
	q->hold_max_keys = 0;
	at = q->armed;
	kwq_unlock(q);
	KUNIT_ASSERT_EQ(test, waiting, 200);
	/* As armed: the earliest deadline, long past. */
	hrtimer_start(&q->timer, at, KWQ_TIMER_MODE);
	for (i = 0; i < 200; i++) {
		if (get_within(q, buf, sizeof(buf) - 1, &len))
			break;
		buf[len] = '\0';
		scnprintf(want, sizeof(want), "%d", i);
		bad += strcmp(buf, want) != 0;
		kwq_done(q, buf, len);
	}
	KUNIT_EXPECT_EQ(test, i, 200);
	KUNIT_EXPECT_EQ(test, bad, 0);
	kwq_lock(q);
	most = q->hold_max_keys;
	kwq_unlock(q);
	KUNIT_EXPECT_EQ(test, most, KWQ_LOCK_STEP);
	kwq_destroy(q);
}

/*
 * The real timer on a queue shutting down: a processing timeout still
 * gives the key back (without PREEMPT_RT the hard timer leaves that to
 * the soft one, whose wake-up takes the lock), and a consumer gets it.
 */
static void kwq_delay_test_timer_after_shutdown(struct kunit *test)
{
	/* Long enough that the shutdown surely comes first. */
	struct kwq_attr attr = { .processing_timeout_ns = MS(200) };
	struct kwq *q = kwq_create(NULL, &attr);
	struct kwq_stats st;
	char buf[8];
	u32 len;

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, q);
	KUNIT_EXPECT_EQ(test, kwq_add(q, "s", 1), KWQ_ADD_QUEUED);
	KUNIT_EXPECT_EQ(test, kwq_get(q, buf, sizeof(buf), &len, KWQ_NOWAIT), 0);
	kwq_shutdown(q);
	KUNIT_EXPECT_EQ(test, get_within(q, buf, sizeof(buf), &len), 0);
	kwq_stats(q, &st);
	KUNIT_EXPECT_EQ(test, st.processing_expiries, 1);
	kwq_destroy(q);
}

/*
 * The CPU whose timer base holds the queue's hrtimer now: hrtimer
 * internals (struct hrtimer_clock_base.cpu_base), the same in 6.1 and
 * 6.12, read only to see where the timer is.
 */
static unsigned int timer_base_cpu(struct kwq *q)
{
	return READ_ONCE(q->timer.base)->cpu_base->cpu;
}

struct follow {
	struct kwq *q;
	unsigned int from;	/* the adders' CPU, where the timer starts */
	unsigned int to;	/* the consumer's CPU */
	bool spin;		/* the adder keeps @from busy until @first_taken */
	u8 first_taken;
	u8 asleep;		/* the consumer is about to wait for its second key */
	ktime_t next_due;	/* no later than the deadline of the second key taken */
	int got, early;
	struct completion added;
	struct completion adder_done;
	struct completion done;
};

/* On @from, after "a" ran: "c" due in 150 ms, before "b", which starts the timer again. */
static int follow_readder(void *data)
{
	struct follow *f = data;

	f->next_due = ktime_add_ms(ktime_get(), 150);
	if (kwq_add_after(f->q, "c", 1, MS(150), 0) != KWQ_ADD_WAITING)
		f->got = -1;
	complete(&f->added);
	/* The first adder's completion was waited for: this one is the round's end's. */
	complete(&f->adder_done);
	return 0;
}

/* On @from: "a" due in 20 ms, "b" in 400 ms, then busy (2 s at most) or gone. */
static int follow_adder(void *data)
{
	struct follow *f = data;
	unsigned long until;

	f->next_due = ktime_add_ms(ktime_get(), 400);
	if (kwq_add_after(f->q, "a", 1, MS(20), 0) != KWQ_ADD_WAITING ||
	    kwq_add_after(f->q, "b", 1, MS(400), 0) != KWQ_ADD_WAITING)
		f->got = -1;
	complete(&f->added);
	until = jiffies + 2 * HZ;
	while (f->spin && !READ_ONCE(f->first_taken) && time_before(jiffies, until)) {
		cpu_relax();
		cond_resched();
	}
	complete(&f->adder_done);
	return 0;
}

/* On @to: takes "a", then waits for the next key ("b", or "c" if added). */
static int follow_consumer(void *data)
{
	struct follow *f = data;
	char buf[4];
	u32 len;

	if (!get_within(f->q, buf, sizeof(buf), &len) && kwq_done(f->q, buf, len) >= 0)
		f->got++;
	WRITE_ONCE(f->first_taken, true);
	/* Time for the busy adder to stop: @from is idle when the next key fires. */
	msleep(20);
	WRITE_ONCE(f->asleep, true);
	if (!get_within(f->q, buf, sizeof(buf), &len) && kwq_done(f->q, buf, len) >= 0) {
		f->got++;
		f->early = ktime_before(ktime_get(), f->next_due);
	}
	complete(&f->done);
	return 0;
}

static struct task_struct *run_on(int (*fn)(void *), void *data, unsigned int cpu)
{
	struct task_struct *t = kthread_create(fn, data, "kwq-follow/%u", cpu);

	if (!IS_ERR(t)) {
		kthread_bind(t, cpu);
		wake_up_process(t);
	}
	return t;
}

enum follow_mode {
	FOLLOW_IDLE,		/* @from idle when "a" runs, if nothing else keeps it busy */
	FOLLOW_BUSY,		/* @from busy when "a" runs */
	FOLLOW_READDED,		/* then an add on @from starts the timer again */
};

/*
 * One round: the timer is started on @from and fires there for "a"
 * (with @from busy if @mode is FOLLOW_BUSY; with FOLLOW_READDED an add
 * of "c" on @from then starts it again), and the consumer on @to sleeps
 * for the next key. Returns the CPU the timer is on 150 ms into that
 * sleep, or UINT_MAX if a thread could not start, and in *@idle_left
 * whether the queue then still notes a last run that found its CPU idle
 * (kwq.timer_cpu_idle): a pull clears it, so it is set only if the
 * timer was not pulled although its run found @from idle. The threads
 * end before the queue is destroyed, whatever failed.
 */
static unsigned int follow_round(struct kunit *test, enum follow_mode mode, unsigned int from,
				 unsigned int to, bool *idle_left)
{
	struct follow *f = kunit_kzalloc(test, sizeof(*f), GFP_KERNEL);
	unsigned int cpu = UINT_MAX;

	*idle_left = false;
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, f);
	f->q = kwq_create(NULL, NULL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, f->q);
	f->from = from;
	f->to = to;
	f->spin = mode == FOLLOW_BUSY;
	init_completion(&f->added);
	init_completion(&f->adder_done);
	init_completion(&f->done);
	if (IS_ERR(run_on(follow_adder, f, from))) {
		KUNIT_FAIL(test, "no adder thread");
		goto out;
	}
	wait_for_completion(&f->added);
	if (mode == FOLLOW_READDED) {
		wait_for_completion(&f->adder_done);
		/* "a" runs meanwhile, on @from. */
		msleep(100);
		reinit_completion(&f->added);
		if (IS_ERR(run_on(follow_readder, f, from))) {
			KUNIT_FAIL(test, "no second adder thread");
			goto out;
		}
		wait_for_completion(&f->added);
	}
	if (IS_ERR(run_on(follow_consumer, f, to))) {
		KUNIT_FAIL(test, "no consumer thread");
		WRITE_ONCE(f->first_taken, true);
		wait_for_completion(&f->adder_done);
		goto out;
	}
	while (!READ_ONCE(f->asleep))
		msleep(20);
	msleep(150);
	cpu = timer_base_cpu(f->q);
	*idle_left = READ_ONCE(f->q->timer_cpu_idle);
	/* Each of the consumer's gets gives up after 5 s: this ends. */
	wait_for_completion(&f->done);
	wait_for_completion(&f->adder_done);
	KUNIT_EXPECT_EQ(test, f->got, 2);
	KUNIT_EXPECT_FALSE_MSG(test, f->early, "the second key came before its deadline");
out:
	kwq_destroy(f->q);
	return cpu;
}

/* Rounds of the idle case, the two CPUs taking turns as the timer's. */
#define FOLLOW_TRIES	12

/*
 * Without PREEMPT_RT the queue's hard timer wakes the consumers. A
 * keeper about to sleep pulls it to its own CPU if it was last started
 * by a run of it that found its CPU idle, so that the deadline's
 * interrupt comes where the keeper sleeps; a timer whose CPU was busy
 * stays (it keeps the timer's steps off the consumer's CPU), and so
 * does one an add started again since, from a CPU busy with that add.
 * Whether a run finds its CPU idle is not the test's to decide (make
 * check runs other tests beside KUnit), so the idle case judges only
 * rounds that show it: the timer pulled, or still noting an idle run
 * where it was left. The two CPUs take turns as the timer's, up to
 * FOLLOW_TRIES rounds, in case one of them stays busy.
 */
static void kwq_delay_test_timer_follows_keeper(struct kunit *test)
{
	unsigned int cpu = UINT_MAX, from = 0;
	bool idle_left = false;
	int i;

	if (!KWQ_TIMER_HARD)
		kunit_skip(test, "PREEMPT_RT: the keeper sleeps on its own timer");
	if (!cpu_online(0) || !cpu_online(1))
		kunit_skip(test, "needs CPUs 0 and 1");
	for (i = 0; i < FOLLOW_TRIES; i++) {
		from = i % 2;
		cpu = follow_round(test, FOLLOW_IDLE, from, 1 - from, &idle_left);
		if (cpu == 1 - from || idle_left)
			break;
	}
	if (i == FOLLOW_TRIES) {
		KUNIT_FAIL(test, "no run of the timer found its CPU idle in %d rounds",
			   FOLLOW_TRIES);
	} else {
		kunit_info(test, "idle case judged in round %d, the timer started on CPU %u\n",
			   i + 1, from);
		KUNIT_EXPECT_EQ_MSG(test, cpu, 1 - from,
				    "the timer stayed on CPU %u, idle at its run", from);
	}
	KUNIT_EXPECT_EQ_MSG(test, follow_round(test, FOLLOW_BUSY, 0, 1, &idle_left), 0,
			    "the timer left a busy CPU 0");
	KUNIT_EXPECT_EQ_MSG(test, follow_round(test, FOLLOW_READDED, 0, 1, &idle_left), 0,
			    "the timer left CPU 0 after an add there started it");
}

#define LATE_KEYS	2000

struct lateness {
	struct kwq *q;
	ktime_t due[LATE_KEYS];
	s64 late[LATE_KEYS];
	int got, early, bad;
	struct completion done;
};

static int cmp_s64(const void *a, const void *b)
{
	s64 x = *(const s64 *)a, y = *(const s64 *)b;

	return x < y ? -1 : x > y;
}

/* Consumer: records how late each key came out. */
static int lateness_consumer(void *data)
{
	struct lateness *l = data;
	char key[16];
	u32 len, k;

	while (l->got < LATE_KEYS &&
	       !kwq_get(l->q, key, sizeof(key) - 1, &len, kwq_deadline_after(MS(10000)))) {
		ktime_t now = ktime_get();

		key[len] = '\0';
		if (kstrtou32(key, 10, &k) || k >= LATE_KEYS || l->late[k]) {
			l->bad++;
			continue;
		}
		l->late[k] = ktime_to_ns(ktime_sub(now, READ_ONCE(l->due[k])));
		if (l->late[k] < 0)
			l->early++;
		if (!l->late[k])
			l->late[k] = 1;
		kwq_done(l->q, key, len);
		l->got++;
	}
	complete(&l->done);
	return 0;
}

/*
 * A measurement, not an assertion on time: lateness (hand-out time minus
 * due time) of 2000 keys with delays of 1-100 ms through the real timer,
 * taken by a consumer running alongside the producer. It asserts only
 * that every key came out, once, and never before it was due.
 */
static void kwq_delay_test_lateness(struct kunit *test)
{
	struct lateness *l = kunit_kzalloc(test, sizeof(*l), GFP_KERNEL);
	struct task_struct *t;
	char key[16];
	int i;

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, l);
	l->q = kwq_create(NULL, NULL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, l->q);
	init_completion(&l->done);
	for (i = 0; i < LATE_KEYS; i++)
		l->due[i] = KTIME_MAX;
	t = kthread_run(lateness_consumer, l, "kwq-lateness");
	KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	for (i = 0; i < LATE_KEYS; i++) {
		s64 delay = MS(1) + get_random_u32() % (u32)MS(99);
		int n = scnprintf(key, sizeof(key), "%d", i);

		/* Due no earlier than kwq's own deadline, which it reads later. */
		WRITE_ONCE(l->due[i], ktime_add_ns(ktime_get(), delay));
		if (kwq_add_after(l->q, key, n, delay, 0) != KWQ_ADD_WAITING)
			l->bad++;
	}
	wait_for_completion(&l->done);
	KUNIT_EXPECT_EQ(test, l->got, LATE_KEYS);
	KUNIT_EXPECT_EQ(test, l->bad, 0);
	KUNIT_EXPECT_EQ(test, l->early, 0);
	sort(l->late, l->got, sizeof(l->late[0]), cmp_s64, NULL);
	if (l->got)
		kunit_info(test, "lateness of %d keys, delays 1-100 ms: p50 %lld us, p99 %lld us, max %lld us\n",
			   l->got, l->late[l->got / 2] / 1000,
			   l->late[l->got * 99 / 100] / 1000, l->late[l->got - 1] / 1000);
	kwq_destroy(l->q);
}

/* Stress: adds, add-afters and cancels from many threads on the real timer. */
#define DSTRESS_KEYS	64
#define DSTRESS_THREADS	4
#define DSTRESS_MS	1500

struct dstress {
	struct kwq *q;
	u8 stop;
	atomic64_t gen[DSTRESS_KEYS];
	atomic64_t seen[DSTRESS_KEYS];
	atomic_t busy[DSTRESS_KEYS];
	atomic_t overlaps;
	atomic_t errors;
	atomic64_t calls;
	struct completion finished[2 * DSTRESS_THREADS];
};

struct dstress_arg {
	struct dstress *s;
	int index;
};

/* Keys below DSTRESS_KEYS / 2 are checked; the rest also get cancels. */
static int dstress_producer(void *data)
{
	struct dstress_arg *a = data;
	struct dstress *s = a->s;
	char key[16];

	while (!READ_ONCE(s->stop)) {
		u32 k = get_random_u32() % DSTRESS_KEYS, op = get_random_u32() % 4;
		int n = scnprintf(key, sizeof(key), "k%u", k), ret;

		if (op == 3 && k >= DSTRESS_KEYS / 2) {
			ret = kwq_cancel(s->q, key, n);
		} else {
			atomic64_inc(&s->gen[k]);
			ret = op == 0 ? kwq_add(s->q, key, n) :
			      kwq_add_after(s->q, key, n, get_random_u32() % (u32)MS(3),
					    op == 2 ? KWQ_AFTER_REPLACE : 0);
		}
		if (ret < 0)
			atomic_inc(&s->errors);
		atomic64_inc(&s->calls);
		cond_resched();
	}
	complete(&s->finished[a->index]);
	return 0;
}

static int dstress_consumer(void *data)
{
	struct dstress_arg *a = data;
	struct dstress *s = a->s;
	char key[16];
	u32 len, k;

	while (!kwq_get(s->q, key, sizeof(key) - 1, &len, KWQ_FOREVER)) {
		key[len] = '\0';
		if (kstrtou32(key + 1, 10, &k) || k >= DSTRESS_KEYS) {
			atomic_inc(&s->errors);
			continue;
		}
		if (atomic_inc_return(&s->busy[k]) != 1)
			atomic_inc(&s->overlaps);
		atomic64_set(&s->seen[k], atomic64_read(&s->gen[k]));
		cond_resched();
		atomic_dec(&s->busy[k]);
		if (kwq_done(s->q, key, len) < 0)
			atomic_inc(&s->errors);
	}
	complete(&s->finished[a->index]);
	return 0;
}

static void kwq_delay_test_stress(struct kunit *test)
{
	struct dstress *s = kunit_kzalloc(test, sizeof(*s), GFP_KERNEL);
	struct dstress_arg *args;
	struct kwq_stats st;
	int i, unprocessed = 0;

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, s);
	args = kunit_kcalloc(test, 2 * DSTRESS_THREADS, sizeof(*args), GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, args);
	s->q = kwq_create(NULL, NULL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, s->q);
	for (i = 0; i < 2 * DSTRESS_THREADS; i++) {
		struct task_struct *t;

		args[i].s = s;
		args[i].index = i;
		init_completion(&s->finished[i]);
		t = kthread_run(i < DSTRESS_THREADS ? dstress_producer : dstress_consumer,
				&args[i], "kwq-dstress-%d", i);
		KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	}
	msleep(DSTRESS_MS);
	WRITE_ONCE(s->stop, true);
	for (i = 0; i < DSTRESS_THREADS; i++)
		wait_for_completion(&s->finished[i]);
	/* Flush: every waiting key is queued and must be processed. */
	KUNIT_EXPECT_EQ(test, kwq_shutdown_drain(s->q, kwq_deadline_after(MS(30000)),
						 KWQ_DRAIN_FLUSH_WAITING), 0);
	kwq_shutdown(s->q);
	for (i = DSTRESS_THREADS; i < 2 * DSTRESS_THREADS; i++)
		wait_for_completion(&s->finished[i]);
	KUNIT_EXPECT_EQ(test, atomic_read(&s->overlaps), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&s->errors), 0);
	for (i = 0; i < DSTRESS_KEYS / 2; i++)
		if (atomic64_read(&s->seen[i]) < atomic64_read(&s->gen[i]))
			unprocessed++;
	KUNIT_EXPECT_EQ(test, unprocessed, 0);
	kwq_stats(s->q, &st);
	KUNIT_EXPECT_EQ(test, st.items, 0);
	KUNIT_EXPECT_EQ(test, st.waiting, 0);
	KUNIT_EXPECT_EQ(test, st.gets, st.dones);
	KUNIT_EXPECT_GT(test, st.fired, 0);
	kunit_info(test, "delay stress: %lld calls, %llu gets, %llu fired, %llu cancels, %llu dedups\n",
		   (s64)atomic64_read(&s->calls), st.gets, st.fired, st.cancels, st.dedups);
	kwq_destroy(s->q);
}

/* A burst of debounced adds runs the key once, a delay after the last. */
static void kwq_delay_test_debounce_burst(struct kunit *test)
{
	struct fake_clock *fc = make_queue(test, 0);
	struct kwq *q = fc->q;
	ktime_t t0 = fc->now;
	struct kwq_stats st;
	int i;

	KUNIT_EXPECT_EQ(test, debounce(q, "k", MS(10), MS(100)), KWQ_ADD_WAITING);
	for (i = 1; i < 8; i++) {
		step(fc, MS(5));
		KUNIT_EXPECT_EQ(test, kwq_len(q), 0);
		KUNIT_EXPECT_EQ(test, debounce(q, "k", MS(10), MS(100)), KWQ_ADD_WAIT_MOVED);
		KUNIT_EXPECT_EQ(test, fc->programmed, ktime_add_ns(fc->now, MS(10)));
	}
	/* Quiet: it runs 10 ms after the last add, once. */
	step(fc, MS(9));
	KUNIT_EXPECT_EQ(test, kwq_len(q), 0);
	step(fc, MS(1));
	KUNIT_EXPECT_EQ(test, fc->now, ktime_add_ns(t0, MS(45)));
	expect_get(test, q, "k");
	KUNIT_EXPECT_EQ(test, kwq_done(q, "k", 1), KWQ_DONE_FINISHED);
	expect_waiting(test, q, 0, 0);
	kwq_stats(q, &st);
	KUNIT_EXPECT_EQ(test, st.debounced, 7);
	KUNIT_EXPECT_EQ(test, st.debounce_capped, 0);
	KUNIT_EXPECT_EQ(test, st.fired, 1);
	KUNIT_EXPECT_EQ(test, st.retries, 8);
	KUNIT_EXPECT_EQ(test, st.adds, 1);
}

/* A key never quiet still runs, every max wait. */
static void kwq_delay_test_debounce_never_quiet(struct kunit *test)
{
	struct fake_clock *fc = make_queue(test, 0);
	struct kwq *q = fc->q;
	ktime_t start = fc->now;
	int runs = 0, i;
	struct kwq_stats st;
	char buf[8];
	u32 len;

	/* An add every 4 ms for 200 ms: quiet for 10 ms never, 30 ms at most. */
	for (i = 0; i < 50; i++) {
		debounce(q, "k", MS(10), MS(30));
		KUNIT_EXPECT_LE(test, fc->programmed, ktime_add_ns(start, MS(30)));
		step(fc, MS(4));
		if (kwq_get(q, buf, sizeof(buf), &len, KWQ_NOWAIT) == 0) {
			runs++;
			/* 30 ms after the add that began the burst, at the step after. */
			KUNIT_EXPECT_LE(test, fc->now, ktime_add_ns(start, MS(30 + 4)));
			KUNIT_EXPECT_EQ(test, kwq_done(q, "k", 1), KWQ_DONE_FINISHED);
			start = fc->now;
		}
	}
	KUNIT_EXPECT_GE(test, runs, 200 / 32);
	kwq_stats(q, &st);
	KUNIT_EXPECT_GT(test, st.debounce_capped, 0);
}

/* What a debounced add does in each state of the key. */
static void kwq_delay_test_debounce_states(struct kunit *test)
{
	struct fake_clock *fc = make_queue(test, 0);
	struct kwq *q = fc->q;
	struct kwq_stats st;
	char buf[8];
	u32 len;

	/* Queued: the run to come covers it. */
	add(q, "q");
	KUNIT_EXPECT_EQ(test, debounce(q, "q", MS(10), MS(10)), KWQ_ADD_DUPLICATE);
	expect_waiting(test, q, 0, 1);
	/* Processing: it waits, fires into dirty, runs after the done. */
	expect_get(test, q, "q");
	KUNIT_EXPECT_EQ(test, debounce(q, "q", MS(10), MS(20)), KWQ_ADD_WAITING);
	step(fc, MS(10));
	kwq_stats(q, &st);
	KUNIT_EXPECT_EQ(test, st.dirty_processing, 1);
	KUNIT_EXPECT_EQ(test, kwq_len(q), 0);
	/* Processing and dirty: a duplicate again. */
	KUNIT_EXPECT_EQ(test, debounce(q, "q", MS(10), MS(20)), KWQ_ADD_DUPLICATE);
	expect_waiting(test, q, 0, 1);
	KUNIT_EXPECT_EQ(test, kwq_done(q, "q", 1), KWQ_DONE_REQUEUED);
	expect_get(test, q, "q");
	KUNIT_EXPECT_EQ(test, kwq_done(q, "q", 1), KWQ_DONE_FINISHED);

	/* A plain deadline that is earlier wins, and is not postponed. */
	KUNIT_EXPECT_EQ(test, after(q, "p", MS(5), 0), KWQ_ADD_WAITING);
	KUNIT_EXPECT_EQ(test, debounce(q, "p", MS(10), MS(50)), KWQ_ADD_WAIT_KEPT);
	KUNIT_EXPECT_EQ(test, fc->programmed, ktime_add_ns(fc->now, MS(5)));
	/* A later plain deadline is brought forward, and bounds the entry. */
	KUNIT_EXPECT_EQ(test, after(q, "b", MS(40), 0), KWQ_ADD_WAITING);
	KUNIT_EXPECT_EQ(test, debounce(q, "b", MS(10), MS(100)), KWQ_ADD_WAIT_MOVED);
	step(fc, MS(5));
	expect_get(test, q, "p");
	KUNIT_EXPECT_EQ(test, kwq_done(q, "p", 1), KWQ_DONE_FINISHED);
	/* b: now 5 ms in; a burst may postpone it to 40 ms, not to 100. */
	KUNIT_EXPECT_EQ(test, debounce(q, "b", MS(30), MS(100)), KWQ_ADD_WAIT_MOVED);
	step(fc, MS(29));
	KUNIT_EXPECT_EQ(test, debounce(q, "b", MS(30), MS(100)), KWQ_ADD_WAIT_MOVED);
	kwq_stats(q, &st);
	KUNIT_EXPECT_EQ(test, st.debounce_capped, 1);
	step(fc, MS(5));
	KUNIT_EXPECT_EQ(test, kwq_len(q), 0);
	step(fc, MS(1));
	expect_get(test, q, "b");
	KUNIT_EXPECT_EQ(test, kwq_done(q, "b", 1), KWQ_DONE_FINISHED);

	/* A plain add-after keeps its promise under later debounced adds. */
	KUNIT_EXPECT_EQ(test, debounce(q, "c", MS(10), MS(100)), KWQ_ADD_WAITING);
	KUNIT_EXPECT_EQ(test, after(q, "c", MS(20), 0), KWQ_ADD_WAIT_KEPT);
	step(fc, MS(8));
	KUNIT_EXPECT_EQ(test, debounce(q, "c", MS(30), MS(100)), KWQ_ADD_WAIT_MOVED);
	KUNIT_EXPECT_EQ(test, fc->programmed, ktime_add_ns(fc->now, MS(12)));
	/* Replace makes it plain: debounced adds no longer move it. */
	KUNIT_EXPECT_EQ(test, after(q, "c", MS(5), KWQ_AFTER_REPLACE), KWQ_ADD_WAIT_MOVED);
	KUNIT_EXPECT_EQ(test, debounce(q, "c", MS(10), MS(100)), KWQ_ADD_WAIT_KEPT);
	/* Cancel removes a debounced entry like any other. */
	KUNIT_EXPECT_EQ(test, kwq_cancel(q, "c", 1), 1);
	expect_waiting(test, q, 0, 0);
	KUNIT_EXPECT_EQ(test, kwq_get(q, buf, sizeof(buf), &len, KWQ_NOWAIT), -EAGAIN);
}

/* Bad arguments are refused and change nothing, counters included. */
static void kwq_delay_test_debounce_invalid(struct kunit *test)
{
	struct fake_clock *fc = make_queue(test, 0);
	struct kwq_stats *a = kunit_kzalloc(test, sizeof(*a), GFP_KERNEL);
	struct kwq_stats *b = kunit_kzalloc(test, sizeof(*b), GFP_KERNEL);
	struct kwq *q = fc->q;

	KUNIT_ASSERT_NOT_NULL(test, a);
	KUNIT_ASSERT_NOT_NULL(test, b);
	debounce(q, "k", MS(10), MS(20));
	kwq_stats(q, a);
	KUNIT_EXPECT_EQ(test, debounce(q, "k", 0, MS(20)), -EINVAL);
	KUNIT_EXPECT_EQ(test, debounce(q, "k", -1, MS(20)), -EINVAL);
	KUNIT_EXPECT_EQ(test, debounce(q, "k", MS(10), MS(10) - 1), -EINVAL);
	KUNIT_EXPECT_EQ(test, kwq_add_debounced(q, "k", 0, MS(1), MS(1)), -EINVAL);
	KUNIT_EXPECT_EQ(test, after(q, "k", MS(10), KWQ_AFTER_DEBOUNCE), -EINVAL);
	kwq_stats(q, b);
	KUNIT_EXPECT_EQ(test, memcmp(a, b, sizeof(*a)), 0);
	/* Delays and max waits beyond KWQ_DELAY_MAX_NS are clamped. */
	KUNIT_EXPECT_EQ(test, debounce(q, "x", S64_MAX, U64_MAX), KWQ_ADD_WAITING);
	KUNIT_EXPECT_EQ(test, fc->programmed, ktime_add_ns(fc->now, MS(10)));
	KUNIT_EXPECT_EQ(test, kwq_cancel(q, "k", 1), 1);
	KUNIT_EXPECT_EQ(test, fc->programmed, ktime_add_ns(fc->now, KWQ_DELAY_MAX_NS));
}

static struct kunit_case kwq_delay_cases[] = {
	KUNIT_CASE(kwq_delay_test_simple),
	KUNIT_CASE(kwq_delay_test_nonpositive_is_add),
	KUNIT_CASE(kwq_delay_test_order),
	KUNIT_CASE(kwq_delay_test_counts_from_start),
	KUNIT_CASE(kwq_delay_test_counts_from_start_after_relock),
	KUNIT_CASE(kwq_delay_test_instant_never_goes_back),
	KUNIT_CASE(kwq_delay_test_fires_one_at_a_time),
	KUNIT_CASE(kwq_delay_test_dedup_earliest),
	KUNIT_CASE(kwq_delay_test_replace),
	KUNIT_CASE(kwq_delay_test_cancel),
	KUNIT_CASE(kwq_delay_test_policy_keep),
	KUNIT_CASE(kwq_delay_test_side_keeps_place),
	KUNIT_CASE(kwq_delay_test_policy_promote),
	KUNIT_CASE(kwq_delay_test_policy_strict),
	KUNIT_CASE(kwq_delay_test_policy_override),
	KUNIT_CASE(kwq_delay_test_fire_while_queued),
	KUNIT_CASE(kwq_delay_test_fire_while_processing),
	KUNIT_CASE(kwq_delay_test_shutdown_drops_waiting),
	KUNIT_CASE(kwq_delay_test_drain_flush),
	KUNIT_CASE(kwq_delay_test_clamp),
	KUNIT_CASE(kwq_delay_test_processing_timeout),
	KUNIT_CASE(kwq_delay_test_processing_timeout_and_waiting),
	KUNIT_CASE(kwq_delay_test_destroy_with_waiting),
	KUNIT_CASE(kwq_delay_test_debounce_burst),
	KUNIT_CASE(kwq_delay_test_debounce_never_quiet),
	KUNIT_CASE(kwq_delay_test_debounce_states),
	KUNIT_CASE(kwq_delay_test_debounce_invalid),
	KUNIT_CASE(kwq_delay_test_real_timer),
	KUNIT_CASE(kwq_delay_test_timer_finds_lock_held),
	KUNIT_CASE(kwq_delay_test_timer_steps),
	KUNIT_CASE(kwq_delay_test_timer_restarted_in_window),
	KUNIT_CASE(kwq_delay_test_timer_after_shutdown),
	KUNIT_CASE(kwq_delay_test_timer_follows_keeper),
	KUNIT_CASE(kwq_delay_test_lateness),
	KUNIT_CASE(kwq_delay_test_stress),
	{}
};

static struct kunit_suite kwq_delay_suite = {
	.name = "kwq_delay",
	.exit = fake_clock_exit,
	.test_cases = kwq_delay_cases,
};

kunit_test_suite(kwq_delay_suite);
