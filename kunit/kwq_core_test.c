// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite for the kwq core: client-go's queue contract (queue_test.go
 * scenarios) and the places where kwq deliberately differs from it.
 * Runs against kwq.ko through its exported API.
 */

#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/err.h>
#include <linux/hrtimer.h>
#include <linux/kthread.h>
#include <linux/random.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "kwq.h"
#include "kwq_compat.h"

#define MS_NS(ms)	((s64)(ms) * NSEC_PER_MSEC)

static struct kwq *test_queue(struct kunit *test)
{
	return test->priv;
}

static int kwq_test_init(struct kunit *test)
{
	struct kwq *q = kwq_create(NULL, NULL);

	if (IS_ERR(q))
		return PTR_ERR(q);
	test->priv = q;
	return 0;
}

static void kwq_test_exit(struct kunit *test)
{
	kwq_destroy(test_queue(test));
}

static int add(struct kwq *q, const char *key)
{
	return kwq_add(q, key, strlen(key));
}

static int done(struct kwq *q, const char *key)
{
	return kwq_done(q, key, strlen(key));
}

/* Non-blocking get of a string key into @buf (NUL-terminated). */
static int get_now(struct kwq *q, char *buf, size_t size)
{
	u32 len = 0;
	int ret = kwq_get(q, buf, size - 1, &len, KWQ_NOWAIT);

	buf[ret ? 0 : len] = '\0';
	return ret;
}

static void expect_get(struct kunit *test, struct kwq *q, const char *want)
{
	char buf[64];

	KUNIT_EXPECT_EQ(test, get_now(q, buf, sizeof(buf)), 0);
	KUNIT_EXPECT_STREQ(test, buf, want);
}

static void expect_counts(struct kunit *test, struct kwq *q, u64 queued,
			  u64 processing, u64 dirty_processing, u64 items)
{
	struct kwq_stats st;

	kwq_stats(q, &st);
	KUNIT_EXPECT_EQ(test, st.queued, queued);
	KUNIT_EXPECT_EQ(test, st.processing, processing);
	KUNIT_EXPECT_EQ(test, st.dirty_processing, dirty_processing);
	KUNIT_EXPECT_EQ(test, st.items, items);
	KUNIT_EXPECT_EQ(test, kwq_len(q), queued);
}

static void kwq_test_basic_cycle(struct kunit *test)
{
	struct kwq *q = test_queue(test);

	KUNIT_EXPECT_EQ(test, add(q, "ns/a"), KWQ_ADD_QUEUED);
	expect_counts(test, q, 1, 0, 0, 1);
	expect_get(test, q, "ns/a");
	expect_counts(test, q, 0, 1, 0, 1);
	KUNIT_EXPECT_EQ(test, done(q, "ns/a"), KWQ_DONE_FINISHED);
	expect_counts(test, q, 0, 0, 0, 0);
}

/* client-go TestLen / TestCollapse: repeated adds collapse into one. */
static void kwq_test_dedup(struct kunit *test)
{
	struct kwq *q = test_queue(test);
	struct kwq_stats st;
	char buf[16];

	KUNIT_EXPECT_EQ(test, add(q, "foo"), KWQ_ADD_QUEUED);
	KUNIT_EXPECT_EQ(test, add(q, "foo"), KWQ_ADD_DUPLICATE);
	KUNIT_EXPECT_EQ(test, add(q, "foo"), KWQ_ADD_DUPLICATE);
	KUNIT_EXPECT_EQ(test, kwq_len(q), 1);
	expect_get(test, q, "foo");
	KUNIT_EXPECT_EQ(test, get_now(q, buf, sizeof(buf)), -EAGAIN);
	kwq_stats(q, &st);
	KUNIT_EXPECT_EQ(test, st.adds, 1);
	KUNIT_EXPECT_EQ(test, st.dedups, 2);
}

/* Keys that differ only in length or a trailing byte are distinct. */
static void kwq_test_binary_keys(struct kunit *test)
{
	struct kwq *q = test_queue(test);
	static const u8 k1[] = { 0, 1, 2 }, k2[] = { 0, 1, 2, 0 };

	KUNIT_EXPECT_EQ(test, kwq_add(q, k1, sizeof(k1)), KWQ_ADD_QUEUED);
	KUNIT_EXPECT_EQ(test, kwq_add(q, k2, sizeof(k2)), KWQ_ADD_QUEUED);
	KUNIT_EXPECT_EQ(test, kwq_add(q, k1, 2), KWQ_ADD_QUEUED);
	KUNIT_EXPECT_EQ(test, kwq_len(q), 3);
}

/* FIFO, and a duplicate add does not move the key (no Touch). */
static void kwq_test_fifo(struct kunit *test)
{
	struct kwq *q = test_queue(test);

	add(q, "a");
	add(q, "b");
	add(q, "c");
	KUNIT_EXPECT_EQ(test, add(q, "a"), KWQ_ADD_DUPLICATE);
	expect_get(test, q, "a");
	expect_get(test, q, "b");
	expect_get(test, q, "c");
}

/* client-go TestAddWhileProcessing / TestReinsert. */
static void kwq_test_add_while_processing(struct kunit *test)
{
	struct kwq *q = test_queue(test);

	add(q, "x");
	expect_get(test, q, "x");
	KUNIT_EXPECT_EQ(test, add(q, "x"), KWQ_ADD_DEFERRED);
	KUNIT_EXPECT_EQ(test, add(q, "x"), KWQ_ADD_DUPLICATE);
	expect_counts(test, q, 0, 1, 1, 1);
	KUNIT_EXPECT_EQ(test, done(q, "x"), KWQ_DONE_REQUEUED);
	expect_counts(test, q, 1, 0, 0, 1);
	expect_get(test, q, "x");
	KUNIT_EXPECT_EQ(test, done(q, "x"), KWQ_DONE_FINISHED);
	expect_counts(test, q, 0, 0, 0, 0);
}

/* Done of a key that is not processing changes nothing (k8s#79934). */
static void kwq_test_done_not_processing(struct kunit *test)
{
	struct kwq *q = test_queue(test);
	struct kwq_stats st;

	KUNIT_EXPECT_EQ(test, done(q, "ghost"), -ENOENT);
	add(q, "a");
	KUNIT_EXPECT_EQ(test, done(q, "a"), -ENOENT);
	KUNIT_EXPECT_EQ(test, done(q, "a"), -ENOENT);
	expect_counts(test, q, 1, 0, 0, 1);
	expect_get(test, q, "a");
	KUNIT_EXPECT_EQ(test, done(q, "a"), KWQ_DONE_FINISHED);
	KUNIT_EXPECT_EQ(test, done(q, "a"), -ENOENT);
	kwq_stats(q, &st);
	KUNIT_EXPECT_EQ(test, st.dones, 1);
	expect_counts(test, q, 0, 0, 0, 0);
}

static void kwq_test_key_limits(struct kunit *test)
{
	struct kwq *q = test_queue(test);
	u8 *big = kunit_kzalloc(test, KWQ_KEY_MAX + 1, GFP_KERNEL);
	u8 *out = kunit_kzalloc(test, KWQ_KEY_MAX, GFP_KERNEL);
	u32 len = 0;

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, big);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, out);
	memset(big, 'k', KWQ_KEY_MAX + 1);
	KUNIT_EXPECT_EQ(test, kwq_add(q, big, 0), -EINVAL);
	KUNIT_EXPECT_EQ(test, kwq_add(q, NULL, 1), -EINVAL);
	KUNIT_EXPECT_EQ(test, kwq_add(q, big, KWQ_KEY_MAX + 1), -EINVAL);
	KUNIT_EXPECT_EQ(test, kwq_done(q, big, KWQ_KEY_MAX + 1), -EINVAL);
	expect_counts(test, q, 0, 0, 0, 0);
	KUNIT_EXPECT_EQ(test, kwq_add(q, big, KWQ_KEY_MAX), KWQ_ADD_QUEUED);

	/* Too small a buffer: -EMSGSIZE, the size needed, the key stays. */
	KUNIT_EXPECT_EQ(test, kwq_get(q, out, 10, &len, KWQ_NOWAIT), -EMSGSIZE);
	KUNIT_EXPECT_EQ(test, len, KWQ_KEY_MAX);
	expect_counts(test, q, 1, 0, 0, 1);
	KUNIT_EXPECT_EQ(test, kwq_get(q, out, KWQ_KEY_MAX, &len, KWQ_NOWAIT), 0);
	KUNIT_EXPECT_EQ(test, len, KWQ_KEY_MAX);
	KUNIT_EXPECT_EQ(test, memcmp(out, big, KWQ_KEY_MAX), 0);
}

static void kwq_test_get_timeout(struct kunit *test)
{
	struct kwq *q = test_queue(test);
	char buf[8];
	u32 len;
	ktime_t start = ktime_get();

	KUNIT_EXPECT_EQ(test, kwq_get(q, buf, sizeof(buf), &len, KWQ_NOWAIT), -EAGAIN);
	KUNIT_EXPECT_EQ(test, kwq_get(q, buf, sizeof(buf), &len,
				      kwq_deadline_after(MS_NS(20))), -ETIMEDOUT);
	/* It waited until the deadline, not less (no timing upper bound). */
	KUNIT_EXPECT_GE(test, ktime_sub(ktime_get(), start), MS_NS(20));
	/* A deadline already past returns at once. */
	KUNIT_EXPECT_EQ(test, kwq_get(q, buf, sizeof(buf), &len, ktime_get()),
			-ETIMEDOUT);
}

/* A consumer thread blocked in kwq_get(). */
struct waiter {
	struct kwq *q;
	ktime_t deadline;
	bool use_signal;
	int ret;
	char key[32];
	struct completion ready;
	struct completion done;
	struct task_struct *task;
};

static int waiter_fn(void *data)
{
	struct waiter *w = data;
	u32 len = 0;

	if (w->use_signal)
		allow_signal(SIGUSR1);
	complete(&w->ready);
	w->ret = kwq_get(w->q, w->key, sizeof(w->key) - 1, &len, w->deadline);
	w->key[w->ret ? 0 : len] = '\0';
	if (w->use_signal)
		flush_signals(current);
	complete(&w->done);
	return 0;
}

static struct waiter *waiter_start(struct kunit *test, struct kwq *q, bool use_signal)
{
	struct waiter *w = kunit_kzalloc(test, sizeof(*w), GFP_KERNEL);

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, w);
	w->q = q;
	w->deadline = KWQ_FOREVER;
	w->use_signal = use_signal;
	init_completion(&w->ready);
	init_completion(&w->done);
	w->task = kthread_run(waiter_fn, w, "kwq-test-waiter");
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, w->task);
	get_task_struct(w->task);
	wait_for_completion(&w->ready);
	return w;
}

/*
 * Wait for a waiter to finish; if it is stuck, shut the queue down so it
 * cannot outlive the test, and report the failure.
 */
static bool waiter_join(struct kunit *test, struct waiter *w)
{
	bool ok = wait_for_completion_timeout(&w->done, 10 * HZ);

	if (!ok) {
		KUNIT_FAIL(test, "waiter did not return");
		kwq_shutdown(w->q);
		wait_for_completion(&w->done);
	}
	kthread_stop(w->task);
	put_task_struct(w->task);
	return ok;
}

/* True if the waiter is still blocked after a grace period. */
static bool waiter_blocked(struct waiter *w)
{
	msleep(50);
	return !completion_done(&w->done);
}

static void kwq_test_get_blocks_until_add(struct kunit *test)
{
	struct kwq *q = test_queue(test);
	struct waiter *w = waiter_start(test, q, false);

	KUNIT_EXPECT_TRUE(test, waiter_blocked(w));
	add(q, "wake");
	if (waiter_join(test, w)) {
		KUNIT_EXPECT_EQ(test, w->ret, 0);
		KUNIT_EXPECT_STREQ(test, w->key, "wake");
	}
	expect_counts(test, q, 0, 1, 0, 1);
}

/* A signal ends the wait with -ERESTARTSYS and loses nothing. */
static void kwq_test_get_signal(struct kunit *test)
{
	struct kwq *q = test_queue(test);
	struct waiter *w = waiter_start(test, q, true);
	struct waiter *w2;

	KUNIT_EXPECT_TRUE(test, waiter_blocked(w));
	send_sig(SIGUSR1, w->task, 1);
	if (waiter_join(test, w))
		KUNIT_EXPECT_EQ(test, w->ret, -ERESTARTSYS);
	expect_counts(test, q, 0, 0, 0, 0);

	/* The queue still works for the next consumer. */
	w2 = waiter_start(test, q, false);
	add(q, "after");
	if (waiter_join(test, w2)) {
		KUNIT_EXPECT_EQ(test, w2->ret, 0);
		KUNIT_EXPECT_STREQ(test, w2->key, "after");
	}
}

/* Many blocked consumers, one key each: every key reaches one consumer. */
static void kwq_test_wakeups_not_lost(struct kunit *test)
{
	struct kwq *q = test_queue(test);
	struct waiter *w[4];
	int i, got = 0;

	for (i = 0; i < ARRAY_SIZE(w); i++)
		w[i] = waiter_start(test, q, false);
	msleep(20);
	add(q, "k0");
	add(q, "k1");
	add(q, "k2");
	add(q, "k3");
	for (i = 0; i < ARRAY_SIZE(w); i++) {
		if (waiter_join(test, w[i]) && !w[i]->ret)
			got++;
	}
	KUNIT_EXPECT_EQ(test, got, 4);
	expect_counts(test, q, 0, 4, 0, 4);
}

/* client-go TestShutDown semantics, plus add outcomes. */
static void kwq_test_shutdown(struct kunit *test)
{
	struct kwq *q = test_queue(test);
	struct kwq_stats st;
	char buf[8];
	u32 len;

	add(q, "a");
	add(q, "b");
	KUNIT_EXPECT_FALSE(test, kwq_shutting_down(q));
	kwq_shutdown(q);
	kwq_shutdown(q);
	KUNIT_EXPECT_TRUE(test, kwq_shutting_down(q));
	KUNIT_EXPECT_EQ(test, add(q, "c"), -ESHUTDOWN);
	KUNIT_EXPECT_EQ(test, add(q, "a"), -ESHUTDOWN);
	/* What was queued is still handed out. */
	expect_get(test, q, "a");
	expect_get(test, q, "b");
	/* While a key is processing it may come back: "not now", no shutdown. */
	KUNIT_EXPECT_EQ(test, kwq_get(q, buf, sizeof(buf), &len, KWQ_NOWAIT), -EAGAIN);
	kwq_stats(q, &st);
	KUNIT_EXPECT_EQ(test, st.refused, 2);
	KUNIT_EXPECT_TRUE(test, st.state & KWQ_STATE_SHUTTING_DOWN);
	/* Done still works after shutdown. */
	KUNIT_EXPECT_EQ(test, done(q, "a"), KWQ_DONE_FINISHED);
	KUNIT_EXPECT_EQ(test, done(q, "b"), KWQ_DONE_FINISHED);
	/* Nothing queued or processing: shutdown, never a wait. */
	KUNIT_EXPECT_EQ(test, kwq_get(q, buf, sizeof(buf), &len, KWQ_FOREVER),
			-ESHUTDOWN);
}

static void kwq_test_shutdown_wakes_all(struct kunit *test)
{
	struct kwq *q = test_queue(test);
	struct waiter *w[3];
	int i;

	for (i = 0; i < ARRAY_SIZE(w); i++)
		w[i] = waiter_start(test, q, false);
	KUNIT_EXPECT_TRUE(test, waiter_blocked(w[0]));
	kwq_shutdown(q);
	for (i = 0; i < ARRAY_SIZE(w); i++) {
		if (waiter_join(test, w[i]))
			KUNIT_EXPECT_EQ(test, w[i]->ret, -ESHUTDOWN);
	}
}

/*
 * After shutdown a consumer waits for a key that is dirty while
 * processing, instead of leaving it stranded.
 */
static void kwq_test_shutdown_waits_for_dirty(struct kunit *test)
{
	struct kwq *q = test_queue(test);
	struct waiter *w;
	char buf[8];

	add(q, "d");
	expect_get(test, q, "d");
	KUNIT_EXPECT_EQ(test, add(q, "d"), KWQ_ADD_DEFERRED);
	kwq_shutdown(q);
	KUNIT_EXPECT_EQ(test, get_now(q, buf, sizeof(buf)), -EAGAIN);
	w = waiter_start(test, q, false);
	KUNIT_EXPECT_TRUE(test, waiter_blocked(w));
	KUNIT_EXPECT_EQ(test, done(q, "d"), KWQ_DONE_REQUEUED);
	if (waiter_join(test, w)) {
		KUNIT_EXPECT_EQ(test, w->ret, 0);
		KUNIT_EXPECT_STREQ(test, w->key, "d");
	}
	KUNIT_EXPECT_EQ(test, done(q, "d"), KWQ_DONE_FINISHED);
	KUNIT_EXPECT_EQ(test, get_now(q, buf, sizeof(buf)), -ESHUTDOWN);
}

/* A thread blocked in kwq_shutdown_drain(). */
struct drainer {
	struct kwq *q;
	ktime_t deadline;
	int ret;
	struct completion done;
	struct task_struct *task;
};

static int drainer_fn(void *data)
{
	struct drainer *d = data;

	d->ret = kwq_shutdown_drain(d->q, d->deadline, 0);
	complete(&d->done);
	return 0;
}

static struct drainer *drainer_start(struct kunit *test, struct kwq *q)
{
	struct drainer *d = kunit_kzalloc(test, sizeof(*d), GFP_KERNEL);

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, d);
	d->q = q;
	d->deadline = KWQ_FOREVER;
	init_completion(&d->done);
	d->task = kthread_run(drainer_fn, d, "kwq-test-drain");
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, d->task);
	get_task_struct(d->task);
	/* Let it set the shutdown flags before the test goes on. */
	while (!kwq_shutting_down(q))
		usleep_range(1000, 2000);
	return d;
}

static bool drainer_join(struct kunit *test, struct drainer *d)
{
	bool ok = wait_for_completion_timeout(&d->done, 10 * HZ);

	if (!ok) {
		KUNIT_FAIL(test, "drain did not return");
		kwq_shutdown(d->q);
		wait_for_completion(&d->done);
	}
	kthread_stop(d->task);
	put_task_struct(d->task);
	return ok;
}

static bool drainer_blocked(struct drainer *d)
{
	msleep(50);
	return !completion_done(&d->done);
}

/* client-go TestQueueDrainageUsingShutDownWithDrain. */
static void kwq_test_drain_processing(struct kunit *test)
{
	struct kwq *q = test_queue(test);
	struct drainer *d;
	struct kwq_stats st;

	add(q, "a");
	expect_get(test, q, "a");
	d = drainer_start(test, q);
	KUNIT_EXPECT_EQ(test, add(q, "late"), -ESHUTDOWN);
	KUNIT_EXPECT_TRUE(test, drainer_blocked(d));
	/* A drain waiting right now is what KWQ_STATE_DRAINING says. */
	kwq_stats(q, &st);
	KUNIT_EXPECT_EQ(test, st.state & (KWQ_STATE_DRAINING | KWQ_STATE_SHUTTING_DOWN),
			KWQ_STATE_DRAINING | KWQ_STATE_SHUTTING_DOWN);
	done(q, "a");
	if (drainer_join(test, d))
		KUNIT_EXPECT_EQ(test, d->ret, 0);
	kwq_stats(q, &st);
	KUNIT_EXPECT_FALSE(test, st.state & KWQ_STATE_DRAINING);
}

/* Drain also waits for keys still queued (client-go does not, #141079). */
static void kwq_test_drain_queued(struct kunit *test)
{
	struct kwq *q = test_queue(test);
	struct drainer *d;

	add(q, "a");
	add(q, "b");
	d = drainer_start(test, q);
	expect_get(test, q, "a");
	done(q, "a");
	KUNIT_EXPECT_TRUE(test, drainer_blocked(d));
	expect_get(test, q, "b");
	KUNIT_EXPECT_TRUE(test, drainer_blocked(d));
	done(q, "b");
	if (drainer_join(test, d))
		KUNIT_EXPECT_EQ(test, d->ret, 0);
}

/* client-go TestQueueDrainageUsingShutDownWithDrainWithDirtyItem. */
static void kwq_test_drain_dirty(struct kunit *test)
{
	struct kwq *q = test_queue(test);
	struct drainer *d;

	add(q, "a");
	expect_get(test, q, "a");
	add(q, "a");
	d = drainer_start(test, q);
	KUNIT_EXPECT_EQ(test, done(q, "a"), KWQ_DONE_REQUEUED);
	KUNIT_EXPECT_TRUE(test, drainer_blocked(d));
	expect_get(test, q, "a");
	done(q, "a");
	if (drainer_join(test, d))
		KUNIT_EXPECT_EQ(test, d->ret, 0);
}

/* client-go TestForceQueueShutdownUsingShutDown. */
static void kwq_test_drain_forced(struct kunit *test)
{
	struct kwq *q = test_queue(test);
	struct drainer *d;

	add(q, "a");
	expect_get(test, q, "a");
	d = drainer_start(test, q);
	KUNIT_EXPECT_TRUE(test, drainer_blocked(d));
	kwq_shutdown(q);
	if (drainer_join(test, d))
		KUNIT_EXPECT_EQ(test, d->ret, -ECANCELED);
	/* The key is still processing; done still works. */
	KUNIT_EXPECT_EQ(test, done(q, "a"), KWQ_DONE_FINISHED);
}

static void kwq_test_drain_timeout_and_idle(struct kunit *test)
{
	struct kwq *q = test_queue(test);
	struct kwq_stats st;

	add(q, "a");
	KUNIT_EXPECT_EQ(test, kwq_shutdown_drain(q, kwq_deadline_after(MS_NS(20)), 0),
			-ETIMEDOUT);
	expect_get(test, q, "a");
	done(q, "a");
	KUNIT_EXPECT_EQ(test, kwq_shutdown_drain(q, KWQ_NOWAIT, 0), 0);
	KUNIT_EXPECT_EQ(test, kwq_shutdown_drain(q, KWQ_FOREVER, 0), 0);
	/* "Draining" means a drain is waiting, not that one ever ran. */
	kwq_stats(q, &st);
	KUNIT_EXPECT_FALSE(test, st.state & KWQ_STATE_DRAINING);
}

/* Destroying a queue under blocked callers: -EIDRM, no use-after-free. */
static void kwq_test_destroy_under_waiters(struct kunit *test)
{
	struct kwq *q = kwq_create(NULL, NULL);
	struct waiter *w;
	struct drainer *d;

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, q);
	add(q, "busy");
	expect_get(test, q, "busy");
	/* Dirty while processing: after shutdown, getters wait for it. */
	add(q, "busy");
	w = waiter_start(test, q, false);
	d = drainer_start(test, q);
	KUNIT_EXPECT_TRUE(test, waiter_blocked(w));
	KUNIT_EXPECT_TRUE(test, drainer_blocked(d));
	/* Drops the only reference the test holds; sleepers hold their own. */
	kwq_destroy(q);
	if (waiter_join(test, w))
		KUNIT_EXPECT_EQ(test, w->ret, -EIDRM);
	if (drainer_join(test, d))
		KUNIT_EXPECT_EQ(test, d->ret, -EIDRM);
}

static void kwq_test_destroyed_ops(struct kunit *test)
{
	struct kwq *q = kwq_create(NULL, NULL);
	struct kwq_stats st;
	char buf[8];

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, q);
	add(q, "a");
	kwq_get_ref(q);
	kwq_destroy(q);
	KUNIT_EXPECT_EQ(test, add(q, "b"), -EIDRM);
	KUNIT_EXPECT_EQ(test, get_now(q, buf, sizeof(buf)), -EIDRM);
	KUNIT_EXPECT_EQ(test, done(q, "a"), -EIDRM);
	KUNIT_EXPECT_EQ(test, kwq_shutdown_drain(q, KWQ_FOREVER, 0), -EIDRM);
	kwq_stats(q, &st);
	KUNIT_EXPECT_TRUE(test, st.state & KWQ_STATE_DESTROYED);
	kwq_put(q);
}

static void kwq_test_requeue(struct kunit *test)
{
	struct kwq *q = test_queue(test);

	add(q, "a");
	add(q, "b");
	expect_get(test, q, "a");
	KUNIT_EXPECT_EQ(test, kwq_requeue(q, "a", 1), 0);
	KUNIT_EXPECT_EQ(test, kwq_requeue(q, "a", 1), -ENOENT);
	expect_counts(test, q, 2, 0, 0, 2);
	expect_get(test, q, "a");
	/* Given back while dirty: queued once, not twice. */
	add(q, "a");
	KUNIT_EXPECT_EQ(test, kwq_requeue(q, "a", 1), 0);
	expect_counts(test, q, 2, 0, 0, 2);
	expect_get(test, q, "a");
	expect_get(test, q, "b");
}

static void kwq_test_max_items(struct kunit *test)
{
	struct kwq_attr attr = { .max_items = 2 };
	struct kwq *q = kwq_create(NULL, &attr);

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, q);
	KUNIT_EXPECT_EQ(test, add(q, "a"), KWQ_ADD_QUEUED);
	KUNIT_EXPECT_EQ(test, add(q, "b"), KWQ_ADD_QUEUED);
	KUNIT_EXPECT_EQ(test, add(q, "c"), -ENOSPC);
	/* Existing keys are still accepted at the limit. */
	KUNIT_EXPECT_EQ(test, add(q, "a"), KWQ_ADD_DUPLICATE);
	expect_counts(test, q, 2, 0, 0, 2);
	kwq_destroy(q);
}

static void kwq_test_names(struct kunit *test)
{
	struct kwq *q, *again, *found;
	char long_name[KWQ_NAME_MAX + 1];

	q = kwq_create("kunit-names_1.x", NULL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, q);
	KUNIT_EXPECT_STREQ(test, kwq_name(q), "kunit-names_1.x");
	again = kwq_create("kunit-names_1.x", NULL);
	KUNIT_EXPECT_EQ(test, PTR_ERR(again), -EEXIST);
	found = kwq_lookup("kunit-names_1.x");
	KUNIT_EXPECT_PTR_EQ(test, found, q);
	if (!IS_ERR(found))
		kwq_put(found);

	memset(long_name, 'n', KWQ_NAME_MAX);
	long_name[KWQ_NAME_MAX] = '\0';
	KUNIT_EXPECT_EQ(test, PTR_ERR(kwq_create(long_name, NULL)), -EINVAL);
	long_name[KWQ_NAME_MAX - 1] = '\0';
	found = kwq_create(long_name, NULL);
	KUNIT_EXPECT_FALSE(test, IS_ERR(found));
	if (!IS_ERR(found))
		kwq_destroy(found);
	KUNIT_EXPECT_EQ(test, PTR_ERR(kwq_create("", NULL)), -EINVAL);
	KUNIT_EXPECT_EQ(test, PTR_ERR(kwq_create(".hidden", NULL)), -EINVAL);
	KUNIT_EXPECT_EQ(test, PTR_ERR(kwq_create("a/b", NULL)), -EINVAL);
	KUNIT_EXPECT_EQ(test, PTR_ERR(kwq_lookup("a b")), -EINVAL);
	KUNIT_EXPECT_EQ(test, PTR_ERR(kwq_lookup("kunit-none")), -ENOENT);

	kwq_destroy(q);
	KUNIT_EXPECT_EQ(test, PTR_ERR(kwq_lookup("kunit-names_1.x")), -ENOENT);
	q = kwq_create("kunit-names_1.x", NULL);
	KUNIT_EXPECT_FALSE(test, IS_ERR(q));
	if (!IS_ERR(q))
		kwq_destroy(q);
}

/* Producers in atomic context: under a spinlock and in a soft hrtimer. */
struct atomic_producer {
	struct hrtimer timer;
	struct kwq *q;
	int ret;
	struct completion fired;
};

static enum hrtimer_restart atomic_producer_fire(struct hrtimer *t)
{
	struct atomic_producer *p = container_of(t, struct atomic_producer, timer);

	p->ret = kwq_add_atomic(p->q, "from-timer", 10);
	complete(&p->fired);
	return HRTIMER_NORESTART;
}

static void kwq_test_add_atomic(struct kunit *test)
{
	struct kwq *q = test_queue(test);
	struct atomic_producer *p = kunit_kzalloc(test, sizeof(*p), GFP_KERNEL);
	/* static: lockdep keys must be; one on the stack turns lockdep off */
	static DEFINE_SPINLOCK(lock);

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, p);
	spin_lock(&lock);
	KUNIT_EXPECT_EQ(test, kwq_add_atomic(q, "locked", 6), KWQ_ADD_QUEUED);
	spin_unlock(&lock);

	p->q = q;
	init_completion(&p->fired);
	kwq_hrtimer_setup(&p->timer, atomic_producer_fire, CLOCK_MONOTONIC,
			  HRTIMER_MODE_REL_SOFT);
	hrtimer_start(&p->timer, ms_to_ktime(1), HRTIMER_MODE_REL_SOFT);
	KUNIT_EXPECT_TRUE(test, wait_for_completion_timeout(&p->fired, 10 * HZ));
	hrtimer_cancel(&p->timer);
	KUNIT_EXPECT_EQ(test, p->ret, KWQ_ADD_QUEUED);
	expect_get(test, q, "locked");
	expect_get(test, q, "from-timer");
}

/*
 * A queue keeps the records of keys that went away and gives them to new
 * keys: nothing of the old key may show through (failures, deadline,
 * state, bytes).
 */
/*
 * Enough keys to resize the key table several times (1024 buckets to
 * 8192 and back) while adds, duplicate adds, gets and dones go on: the
 * resize worker moves buckets in between, and every key is found, once,
 * in order.
 */
static void kwq_test_many_keys_across_resizes(struct kunit *test)
{
	struct kwq *q = test_queue(test);
	char key[32], buf[32];
	unsigned int i, n = 8000;
	u32 len;

	for (i = 0; i < n; i++) {
		snprintf(key, sizeof(key), "ns/obj-%u", i);
		KUNIT_ASSERT_EQ(test, add(q, key), KWQ_ADD_QUEUED);
		/* An earlier key, maybe in a bucket not moved yet. */
		snprintf(key, sizeof(key), "ns/obj-%u", i / 2);
		KUNIT_ASSERT_EQ(test, add(q, key), KWQ_ADD_DUPLICATE);
	}
	expect_counts(test, q, n, 0, 0, n);
	for (i = 0; i < n; i++) {
		snprintf(key, sizeof(key), "ns/obj-%u", i);
		KUNIT_ASSERT_EQ(test, kwq_get(q, buf, sizeof(buf), &len, KWQ_NOWAIT), 0);
		KUNIT_ASSERT_EQ(test, len, (u32)strlen(key));
		KUNIT_ASSERT_EQ(test, memcmp(buf, key, len), 0);
		KUNIT_ASSERT_EQ(test, kwq_done(q, buf, len), KWQ_DONE_FINISHED);
	}
	expect_counts(test, q, 0, 0, 0, 0);
}

/* kwq_done_get() of @dkey into @buf; the done's result in *@dres. */
static int done_get_now(struct kwq *q, const char *dkey, int *dres, char *buf, size_t size)
{
	u32 len = 0;
	int ret = kwq_done_get(q, dkey, strlen(dkey), dres, buf, size - 1, &len, KWQ_NOWAIT);

	buf[ret ? 0 : len] = '\0';
	return ret;
}

/*
 * kwq_done_get() is kwq_done() then kwq_get(): a failed done changes
 * nothing and leaves the result unset; a key re-added while processing
 * comes back; once the done happened, the get's errors are returned.
 */
static void kwq_test_done_get(struct kunit *test)
{
	struct kwq *q = test_queue(test);
	char buf[64];
	int dres;

	KUNIT_ASSERT_EQ(test, add(q, "a"), KWQ_ADD_QUEUED);
	KUNIT_ASSERT_EQ(test, add(q, "b"), KWQ_ADD_QUEUED);
	expect_get(test, q, "a");
	dres = -1;
	KUNIT_EXPECT_EQ(test, done_get_now(q, "a", &dres, buf, sizeof(buf)), 0);
	KUNIT_EXPECT_EQ(test, dres, KWQ_DONE_FINISHED);
	KUNIT_EXPECT_STREQ(test, buf, "b");
	expect_counts(test, q, 0, 1, 0, 1);

	/* A key not processing: nothing happens, not even the get. */
	KUNIT_ASSERT_EQ(test, add(q, "c"), KWQ_ADD_QUEUED);
	dres = -1;
	KUNIT_EXPECT_EQ(test, done_get_now(q, "a", &dres, buf, sizeof(buf)), -ENOENT);
	KUNIT_EXPECT_EQ(test, dres, -1);
	expect_counts(test, q, 1, 1, 0, 2);
	KUNIT_EXPECT_EQ(test, kwq_done_get(q, "", 0, &dres, buf, sizeof(buf), NULL, KWQ_NOWAIT),
			-EINVAL);
	expect_counts(test, q, 1, 1, 0, 2);

	/* Re-added while processing: queued behind "c", handed out after it. */
	KUNIT_ASSERT_EQ(test, add(q, "b"), KWQ_ADD_DEFERRED);
	KUNIT_EXPECT_EQ(test, done_get_now(q, "b", &dres, buf, sizeof(buf)), 0);
	KUNIT_EXPECT_EQ(test, dres, KWQ_DONE_REQUEUED);
	KUNIT_EXPECT_STREQ(test, buf, "c");
	KUNIT_EXPECT_EQ(test, done_get_now(q, "c", &dres, buf, sizeof(buf)), 0);
	KUNIT_EXPECT_EQ(test, dres, KWQ_DONE_FINISHED);
	KUNIT_EXPECT_STREQ(test, buf, "b");

	/* The last done with nothing left: done, then -EAGAIN. */
	dres = -1;
	KUNIT_EXPECT_EQ(test, done_get_now(q, "b", &dres, buf, sizeof(buf)), -EAGAIN);
	KUNIT_EXPECT_EQ(test, dres, KWQ_DONE_FINISHED);
	expect_counts(test, q, 0, 0, 0, 0);
}

static void kwq_test_reused_record_is_fresh(struct kunit *test)
{
	/* A minute of backoff: the waiting entry never fires during the test. */
	static const struct kwq_ratelimit minute = {
		.count = 1,
		.limiters = { { .type = KWQ_LIMITER_EXPONENTIAL,
				.base_ns = 60 * NSEC_PER_SEC, .max_ns = 60 * NSEC_PER_SEC } },
	};
	struct kwq_attr attr = { .ratelimit = &minute };
	struct kwq *q = kwq_create(NULL, &attr);
	char buf[64];
	int i;

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, q);

	/* "old" fails twice, waits, and goes away with forget + cancel. */
	KUNIT_ASSERT_GE(test, kwq_add_rate_limited(q, "old-key", 7), 0);
	KUNIT_ASSERT_GE(test, kwq_add_rate_limited(q, "old-key", 7), 0);
	KUNIT_EXPECT_EQ(test, kwq_num_requeues(q, "old-key", 7), 2);
	KUNIT_EXPECT_EQ(test, kwq_forget(q, "old-key", 7), 1);
	KUNIT_EXPECT_EQ(test, kwq_cancel(q, "old-key", 7), 1);
	expect_counts(test, q, 0, 0, 0, 0);
	/* New keys of every small length take the spare records. */
	for (i = 1; i <= 32; i++) {
		memset(buf, 'n', i);
		KUNIT_ASSERT_EQ(test, kwq_add(q, buf, i), KWQ_ADD_QUEUED);
		KUNIT_EXPECT_EQ(test, kwq_num_requeues(q, buf, i), 0);
	}
	KUNIT_EXPECT_EQ(test, kwq_num_requeues(q, "old-key", 7), 0);
	for (i = 1; i <= 32; i++) {
		u32 len = 0;

		KUNIT_ASSERT_EQ(test, kwq_get(q, buf, sizeof(buf), &len, KWQ_NOWAIT), 0);
		KUNIT_EXPECT_EQ(test, len, (u32)i);
		KUNIT_EXPECT_TRUE(test, !memchr_inv(buf, 'n', len));
		KUNIT_EXPECT_EQ(test, kwq_done(q, buf, len), KWQ_DONE_FINISHED);
	}
	expect_counts(test, q, 0, 0, 0, 0);
	/* And again, now that 32 records are spare. */
	KUNIT_ASSERT_EQ(test, kwq_add(q, "again", 5), KWQ_ADD_QUEUED);
	expect_get(test, q, "again");
	KUNIT_EXPECT_EQ(test, done(q, "again"), KWQ_DONE_FINISHED);
	kwq_destroy(q);
}

static void kwq_test_memory_per_key(struct kunit *test)
{
	size_t b32 = kwq_item_bytes(32), b317 = kwq_item_bytes(317);

	kunit_info(test, "memory per key record: %zu bytes (32-byte key), %zu bytes (317-byte key)\n",
		   b32, b317);
	KUNIT_EXPECT_GE(test, b32, 32 + sizeof(void *));
	KUNIT_EXPECT_GE(test, b317, 317);
	/*
	 * 48 bytes and the key since what only processing keys, and keys
	 * that wait while queued or processing, need went to a side (issue
	 * 19): the record of a queued or waiting 32-byte key, 80 bytes.
	 */
	KUNIT_EXPECT_LE(test, b32, 80);
}

/* Stress: many producers and consumers check the core invariants. */
#define STRESS_KEYS		48
#define STRESS_PRODUCERS	3
#define STRESS_CONSUMERS	3
#define STRESS_MS		1500

struct stress {
	struct kwq *q;
	u8 stop;
	atomic_t busy[STRESS_KEYS];	/* consumers holding the key now */
	atomic64_t gen[STRESS_KEYS];	/* bumped before each add */
	atomic64_t seen[STRESS_KEYS];	/* gen observed after a get */
	atomic_t overlaps;		/* a key held by two consumers */
	atomic_t errors;
	atomic64_t add_calls;
	struct completion finished[STRESS_PRODUCERS + STRESS_CONSUMERS];
};

struct stress_worker {
	struct stress *s;
	int index;
};

static int stress_producer(void *data)
{
	struct stress_worker *sw = data;
	struct stress *s = sw->s;
	char key[16];

	while (!READ_ONCE(s->stop)) {
		u32 k = get_random_u32() % STRESS_KEYS;
		int n = scnprintf(key, sizeof(key), "key-%u", k);

		atomic64_inc(&s->gen[k]);
		if (kwq_add(s->q, key, n) < 0)
			atomic_inc(&s->errors);
		atomic64_inc(&s->add_calls);
		cond_resched();
	}
	complete(&s->finished[sw->index]);
	return 0;
}

static int stress_consumer(void *data)
{
	struct stress_worker *sw = data;
	struct stress *s = sw->s;
	char key[16];
	u32 len, k;
	int ret;

	for (;;) {
		ret = kwq_get(s->q, key, sizeof(key) - 1, &len, KWQ_FOREVER);
		if (ret == -ESHUTDOWN)
			break;
		if (ret) {
			atomic_inc(&s->errors);
			break;
		}
		key[len] = '\0';
		if (kstrtou32(key + 4, 10, &k) || k >= STRESS_KEYS) {
			atomic_inc(&s->errors);
			continue;
		}
		if (atomic_inc_return(&s->busy[k]) != 1)
			atomic_inc(&s->overlaps);
		atomic64_set(&s->seen[k], atomic64_read(&s->gen[k]));
		if (get_random_u32() % 4 == 0)
			udelay(get_random_u32() % 20);
		else
			cond_resched();
		atomic_dec(&s->busy[k]);
		if (kwq_done(s->q, key, len) < 0)
			atomic_inc(&s->errors);
	}
	complete(&s->finished[sw->index]);
	return 0;
}

static void kwq_test_stress(struct kunit *test)
{
	struct stress *s = kunit_kzalloc(test, sizeof(*s), GFP_KERNEL);
	struct stress_worker *sw;
	struct kwq_stats st;
	int i, n = STRESS_PRODUCERS + STRESS_CONSUMERS;
	int unprocessed = 0;

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, s);
	sw = kunit_kcalloc(test, n, sizeof(*sw), GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, sw);
	s->q = test_queue(test);
	for (i = 0; i < n; i++) {
		struct task_struct *t;

		sw[i].s = s;
		sw[i].index = i;
		init_completion(&s->finished[i]);
		t = kthread_run(i < STRESS_PRODUCERS ? stress_producer : stress_consumer,
				&sw[i], "kwq-stress-%d", i);
		KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	}
	msleep(STRESS_MS);
	WRITE_ONCE(s->stop, true);
	for (i = 0; i < STRESS_PRODUCERS; i++)
		wait_for_completion(&s->finished[i]);
	KUNIT_EXPECT_EQ(test, kwq_shutdown_drain(s->q, kwq_deadline_after(MS_NS(30000)), 0), 0);
	kwq_shutdown(s->q);
	for (i = STRESS_PRODUCERS; i < n; i++)
		wait_for_completion(&s->finished[i]);

	KUNIT_EXPECT_EQ(test, atomic_read(&s->overlaps), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&s->errors), 0);
	for (i = 0; i < STRESS_KEYS; i++) {
		if (atomic64_read(&s->seen[i]) < atomic64_read(&s->gen[i]))
			unprocessed++;
	}
	KUNIT_EXPECT_EQ(test, unprocessed, 0);
	kwq_stats(s->q, &st);
	KUNIT_EXPECT_EQ(test, st.queued, 0);
	KUNIT_EXPECT_EQ(test, st.processing, 0);
	KUNIT_EXPECT_EQ(test, st.items, 0);
	KUNIT_EXPECT_EQ(test, st.gets, st.dones);
	KUNIT_EXPECT_EQ(test, st.adds, st.gets);
	KUNIT_EXPECT_EQ(test, st.adds + st.dedups, (u64)atomic64_read(&s->add_calls));
	KUNIT_EXPECT_GT(test, st.gets, 0);
	kunit_info(test, "stress: %llu add calls, %llu dedups, %llu gets, %llu requeues\n",
		   (u64)atomic64_read(&s->add_calls), st.dedups, st.gets, st.requeues);
}

/*
 * An add that lets go of the queue's lock to allocate sleeping (here its
 * allocation without sleeping fails by fail-nth) looks at the queue and
 * its key again once it has the lock back: another add may have queued
 * the key meanwhile, and a second record for one key would queue it
 * twice. A thread adds each key the test publishes, at once; a round
 * counts when the test's add took the injected failure (so it had found
 * no record) and yet only counted a duplicate (the other add got in
 * while the lock was let go of). Keys are longer than KWQ_SMALL_KEY, so
 * no spare record spares the allocation.
 */
#define RACE_KEY_LEN	100
#define RACE_ROUNDS	2000
#define RACE_ENOUGH	20	/* rounds that raced, after which the test stops */

struct add_race {
	struct kwq *q;
	int published;		/* the round whose key the thread adds (the test writes) */
	int added;		/* the last round it added (the thread writes) */
	u8 stop;
	atomic_t errors;
	struct completion finished;
	char thread_key[RACE_KEY_LEN];
	char key[RACE_KEY_LEN];
	char got[RACE_KEY_LEN];
	struct kwq_stats st;
};

static void race_key(char *key, int round)
{
	memset(key, 'r', RACE_KEY_LEN);
	snprintf(key, RACE_KEY_LEN, "race-%d", round);
}

static int race_adder(void *arg)
{
	struct add_race *r = arg;
	char *key = r->thread_key;
	int round;

	while (!READ_ONCE(r->stop)) {
		round = READ_ONCE(r->published);
		if (round == READ_ONCE(r->added)) {
			cond_resched();
			continue;
		}
		race_key(key, round);
		if (kwq_add(r->q, key, RACE_KEY_LEN) < 0)
			atomic_inc(&r->errors);
		WRITE_ONCE(r->added, round);
	}
	complete(&r->finished);
	return 0;
}

static void kwq_test_add_relooks_after_unlock(struct kunit *test)
{
#if IS_ENABLED(CONFIG_FAULT_INJECTION) && IS_ENABLED(CONFIG_FAILSLAB)
	struct kwq *q = test_queue(test);
	struct add_race *r = kunit_kzalloc(test, sizeof(*r), GFP_KERNEL);
	unsigned long *seen = kunit_kcalloc(test, BITS_TO_LONGS(RACE_ROUNDS), sizeof(long),
					    GFP_KERNEL);
	int i, n, round, ret, raced = 0;
	unsigned long until;
	struct task_struct *t;
	char *key, *got;
	u32 len;

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, r);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, seen);
	key = r->key;
	got = r->got;
	if (num_online_cpus() < 2)
		kunit_skip(test, "needs two CPUs");
	r->q = q;
	r->published = -1;
	r->added = -1;
	init_completion(&r->finished);
	t = kthread_run(race_adder, r, "kwq-race");
	KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	for (n = 0; n < RACE_ROUNDS && raced < RACE_ENOUGH; n++) {
		bool injected;

		race_key(key, n);
		WRITE_ONCE(r->published, n);
		WRITE_ONCE(current->fail_nth, 1);
		ret = kwq_add(q, key, RACE_KEY_LEN);
		injected = !READ_ONCE(current->fail_nth);
		WRITE_ONCE(current->fail_nth, 0);
		KUNIT_EXPECT_TRUE_MSG(test, ret == KWQ_ADD_QUEUED || ret == KWQ_ADD_DUPLICATE,
				      "round %d: %d", n, ret);
		if (injected && ret == KWQ_ADD_DUPLICATE)
			raced++;
		/* Both adds of this round are over before the next one's. */
		until = jiffies + HZ;
		while (READ_ONCE(r->added) != n && time_before(jiffies, until))
			cond_resched();
		KUNIT_EXPECT_EQ_MSG(test, READ_ONCE(r->added), n, "the thread is stuck");
	}
	WRITE_ONCE(r->stop, true);
	wait_for_completion(&r->finished);
	kunit_info(test, "%d of %d rounds raced\n", raced, n);
	/* Without one, the test has not seen the case it is about. */
	KUNIT_EXPECT_GT(test, raced, 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&r->errors), 0);

	/* One record and one queued entry per key, each handed out once. */
	kwq_stats(q, &r->st);
	KUNIT_EXPECT_EQ(test, r->st.items, (u64)n);
	KUNIT_EXPECT_EQ(test, r->st.queued, (u64)n);
	KUNIT_EXPECT_EQ(test, r->st.adds, (u64)n);
	KUNIT_EXPECT_EQ(test, r->st.dedups, (u64)n);
	for (i = 0; i < n; i++) {
		ret = kwq_get(q, got, RACE_KEY_LEN, &len, KWQ_NOWAIT);
		KUNIT_ASSERT_EQ(test, ret, 0);
		KUNIT_ASSERT_EQ(test, len, RACE_KEY_LEN);
		/* race_key(): "race-" and the round, NUL-terminated, then 'r's. */
		KUNIT_ASSERT_EQ(test, memcmp(got, "race-", 5), 0);
		KUNIT_ASSERT_EQ(test, kstrtoint(got + 5, 10, &round), 0);
		KUNIT_ASSERT_TRUE(test, round >= 0 && round < n);
		KUNIT_EXPECT_FALSE_MSG(test, test_and_set_bit(round, seen),
				       "key %d handed out twice", round);
		KUNIT_EXPECT_EQ(test, kwq_done(q, got, len), KWQ_DONE_FINISHED);
	}
	KUNIT_EXPECT_EQ(test, kwq_get(q, got, RACE_KEY_LEN, &len, KWQ_NOWAIT), -EAGAIN);
#else
	kunit_skip(test, "needs CONFIG_FAULT_INJECTION and CONFIG_FAILSLAB");
#endif
}

static struct kunit_case kwq_core_cases[] = {
	KUNIT_CASE(kwq_test_basic_cycle),
	KUNIT_CASE(kwq_test_dedup),
	KUNIT_CASE(kwq_test_binary_keys),
	KUNIT_CASE(kwq_test_fifo),
	KUNIT_CASE(kwq_test_add_while_processing),
	KUNIT_CASE(kwq_test_done_not_processing),
	KUNIT_CASE(kwq_test_key_limits),
	KUNIT_CASE(kwq_test_get_timeout),
	KUNIT_CASE(kwq_test_get_blocks_until_add),
	KUNIT_CASE(kwq_test_get_signal),
	KUNIT_CASE(kwq_test_wakeups_not_lost),
	KUNIT_CASE(kwq_test_shutdown),
	KUNIT_CASE(kwq_test_shutdown_wakes_all),
	KUNIT_CASE(kwq_test_shutdown_waits_for_dirty),
	KUNIT_CASE(kwq_test_drain_processing),
	KUNIT_CASE(kwq_test_drain_queued),
	KUNIT_CASE(kwq_test_drain_dirty),
	KUNIT_CASE(kwq_test_drain_forced),
	KUNIT_CASE(kwq_test_drain_timeout_and_idle),
	KUNIT_CASE(kwq_test_destroy_under_waiters),
	KUNIT_CASE(kwq_test_destroyed_ops),
	KUNIT_CASE(kwq_test_requeue),
	KUNIT_CASE(kwq_test_max_items),
	KUNIT_CASE(kwq_test_names),
	KUNIT_CASE(kwq_test_add_atomic),
	KUNIT_CASE(kwq_test_reused_record_is_fresh),
	KUNIT_CASE(kwq_test_add_relooks_after_unlock),
	KUNIT_CASE(kwq_test_done_get),
	KUNIT_CASE(kwq_test_many_keys_across_resizes),
	KUNIT_CASE(kwq_test_memory_per_key),
	KUNIT_CASE(kwq_test_stress),
	{}
};

static struct kunit_suite kwq_core_suite = {
	.name = "kwq_core",
	.init = kwq_test_init,
	.exit = kwq_test_exit,
	.test_cases = kwq_core_cases,
};

kunit_test_suite(kwq_core_suite);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("KUnit tests for the kwq core");
