// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite for the kwq worker pool and kwq_parallelize(): handler
 * verdicts (success, retry with backoff, permanent, retry limit), the
 * concurrency limit, stop by drain and by cancel, queues that end under a
 * pool, and producers in softirq context. Backoff runs on the fake clock.
 *
 * Handlers run in the pool's threads: they only count, in atomics; every
 * expectation is checked by the test's own thread.
 */

#include <kunit/test.h>
#include <linux/atomic.h>
#include <linux/bitmap.h>
#include <linux/bitops.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/err.h>
#include <linux/hrtimer.h>
#include <linux/jiffies.h>
#include <linux/kernel.h>
#include <linux/kthread.h>
#include <linux/spinlock.h>
#include <linux/string.h>

#include "kwq.h"
#include "kwq_compat.h"
#include "kwq_fake_clock.h"
#include "kwq_pool.h"

#define NKEYS		256
/* Generous: the debug kernel runs under TCG with KASAN and lockdep. */
#define WAIT_MS		20000

/* Poll @cond every millisecond for up to WAIT_MS; true if it came true. */
#define wait_until(cond) ({						\
	unsigned long __end = jiffies + msecs_to_jiffies(WAIT_MS);	\
	bool __ok;							\
	while (!(__ok = (cond)) && time_before(jiffies, __end))		\
		usleep_range(1000, 2000);				\
	__ok;								\
})

struct pool_env {
	struct fake_clock *fc;
	struct kwq *q;
	struct kwq_pool *pool;
	/* A second pool on the same queue (kwq_pool_test_invalid). */
	struct kwq_pool *other;
	u32 workers;
	/* Handler script (see pool_handler()). */
	int fail_first;
	int err;
	unsigned int delay_us;
	/* What handlers did. */
	atomic_t calls;
	atomic_t busy;
	atomic_t peak;
	atomic_t late;
	atomic_t deadlk;
	atomic_t interrupted;
	u8 stopped;
	atomic_t seen[NKEYS];
	struct completion entered;
	struct completion all_in;
	struct completion release;
	/* A stop run by another thread (kwq_pool_test_stop_cancel). */
	struct kwq_pool_stats final;
	bool stopper;
	struct completion stop_done;
};

static int pool_test_init(struct kunit *test)
{
	struct pool_env *env = kunit_kzalloc(test, sizeof(*env), GFP_KERNEL);

	if (!env)
		return -ENOMEM;
	init_completion(&env->entered);
	init_completion(&env->all_in);
	init_completion(&env->release);
	init_completion(&env->stop_done);
	env->err = -EAGAIN;
	test->priv = env;
	return 0;
}

/* A test that stopped early must not leave threads or a blocked handler. */
static void pool_test_exit(struct kunit *test)
{
	struct pool_env *env = test->priv;

	complete_all(&env->release);
	if (env->stopper)
		wait_for_completion(&env->stop_done);
	if (env->pool)
		kwq_pool_stop(env->pool, KWQ_POOL_CANCEL, KWQ_NOWAIT, NULL);
	if (env->other)
		kwq_pool_stop(env->other, KWQ_POOL_CANCEL, KWQ_NOWAIT, NULL);
	if (env->q)
		kwq_destroy(env->q);
}

static void real_queue(struct kunit *test, struct pool_env *env)
{
	env->q = kwq_create(NULL, NULL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, env->q);
}

/* A queue on the fake clock; the env, not the clock, stays test->priv. */
static void fake_clock_queue(struct kunit *test, struct pool_env *env)
{
	env->fc = fake_queue(test, NULL);
	test->priv = env;
	env->q = env->fc->q;
}

static void start_pool(struct kunit *test, struct pool_env *env, u32 workers,
		       int (*handler)(void *ctx, const void *key, u32 len), u32 max_retries)
{
	struct kwq_pool_attr attr = {
		.handler = handler,
		.ctx = env,
		.workers = workers,
		.max_retries = max_retries,
	};
	struct kwq_pool *pool;

	env->workers = workers;
	/* Set only once started: the exit stops what it finds there. */
	pool = kwq_pool_start(env->q, &attr);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, pool);
	env->pool = pool;
}

static int stop_pool(struct pool_env *env, enum kwq_pool_stop_mode mode, ktime_t deadline,
		     struct kwq_pool_stats *final)
{
	struct kwq_pool *pool = env->pool;
	int ret;

	env->pool = NULL;
	ret = kwq_pool_stop(pool, mode, deadline, final);
	WRITE_ONCE(env->stopped, true);
	return ret;
}

/* How far ahead of the fake clock's now kwq asked to be woken. */
static s64 fc_programmed_in(struct fake_clock *fc)
{
	return ktime_to_ns(ktime_sub(fc->programmed, fc->now));
}

static struct kwq_pool_stats pool_stats(struct kwq_pool *pool)
{
	struct kwq_pool_stats st;

	kwq_pool_stats(pool, &st);
	return st;
}

static struct kwq_pool_stats pstats(struct pool_env *env)
{
	return pool_stats(env->pool);
}

static struct kwq_stats qstats(struct kwq *q)
{
	struct kwq_stats st;

	kwq_stats(q, &st);
	return st;
}

static int add(struct kwq *q, const char *key)
{
	return kwq_add(q, key, strlen(key));
}

static int requeues(struct kwq *q, const char *key)
{
	return kwq_num_requeues(q, key, strlen(key));
}

static void add_keys(struct kunit *test, struct kwq *q, u32 from, u32 n)
{
	char key[16];
	u32 i;

	for (i = from; i < from + n; i++) {
		snprintf(key, sizeof(key), "k%u", i);
		KUNIT_ASSERT_EQ(test, add(q, key), KWQ_ADD_QUEUED);
	}
}

/* Keys k0..k{n-1} were each handled successfully exactly once. */
static void expect_each_once(struct kunit *test, struct pool_env *env, u32 n)
{
	u32 i, bad = 0;

	for (i = 0; i < NKEYS; i++)
		bad += atomic_read(&env->seen[i]) != (i < n);
	KUNIT_EXPECT_EQ(test, bad, 0);
}

/* A string copy of a key for the handlers (keys are not NUL-terminated). */
static void key_str(char *buf, size_t size, const void *key, u32 len)
{
	len = min_t(u32, len, size - 1);
	memcpy(buf, key, len);
	buf[len] = '\0';
}

/*
 * The scripted handler; the first letter of the key says what it does:
 *  k<n>  success, counted in seen[n] (after delay_us if set)
 *  f...  env->err while the key has fewer than fail_first failures, then 0
 *  d...  env->err while fewer than fail_first failures, then KWQ_POOL_DROP
 *  o...  7, a reserved positive value (treated as KWQ_POOL_DROP)
 *  a...  always env->err
 *  s...  signal env->entered, wait (interruptibly) for env->release, then 0
 *  b...  signal env->entered, wait until the pool stops, KWQ_POOL_ABORT
 *  x...  try to stop its own pool, to drain its own queue and to
 *        stop the queue's other pool (env->other) with a drain (all
 *        must be refused), then 0
 */
static int pool_handler(void *ctx, const void *key, u32 len)
{
	struct pool_env *env = ctx;
	struct kwq_pool *other;
	unsigned long end;
	char buf[32];
	unsigned int n;
	int failures;

	atomic_inc(&env->calls);
	if (READ_ONCE(env->stopped))
		atomic_inc(&env->late);
	key_str(buf, sizeof(buf), key, len);
	failures = kwq_num_requeues(env->q, key, len);
	switch (buf[0]) {
	case 'k':
		if (env->delay_us)
			usleep_range(env->delay_us, env->delay_us + 50);
		if (!kstrtouint(buf + 1, 10, &n) && n < NKEYS)
			atomic_inc(&env->seen[n]);
		return 0;
	case 'f':
		return failures < env->fail_first ? env->err : 0;
	case 'd':
		return failures < env->fail_first ? env->err : KWQ_POOL_DROP;
	case 'o':
		return 7;
	case 'a':
		return env->err;
	case 's':
		complete(&env->entered);
		if (wait_for_completion_interruptible_timeout(&env->release,
							      msecs_to_jiffies(WAIT_MS)) < 0)
			atomic_inc(&env->interrupted);
		return 0;
	case 'b':
		complete(&env->entered);
		end = jiffies + msecs_to_jiffies(WAIT_MS);
		while (!kwq_pool_stopping(kwq_pool_current()) && time_before(jiffies, end))
			usleep_range(1000, 2000);
		return KWQ_POOL_ABORT;
	case 'x':
		if (kwq_pool_stop(kwq_pool_current(), KWQ_POOL_CANCEL, KWQ_NOWAIT,
				  NULL) == -EDEADLK)
			atomic_inc(&env->deadlk);
		/* The drain would wait for this handler's own key. */
		if (kwq_shutdown_drain(env->q, KWQ_NOWAIT, 0) == -EDEADLK)
			atomic_inc(&env->deadlk);
		/* So would a drain that stops another pool of the queue. */
		other = kwq_pool_current() == env->pool ? env->other : env->pool;
		if (other && kwq_pool_stop(other, KWQ_POOL_DRAIN, KWQ_NOWAIT, NULL) == -EDEADLK)
			atomic_inc(&env->deadlk);
		return 0;
	}
	return -EINVAL;
}

/* Success: each key handled once, forgotten and done; nothing left. */
static void kwq_pool_test_success(struct kunit *test)
{
	struct pool_env *env = test->priv;
	struct kwq_pool_stats ps;
	struct kwq_stats st;

	real_queue(test, env);
	start_pool(test, env, 4, pool_handler, 0);
	add_keys(test, env->q, 0, 200);
	KUNIT_ASSERT_TRUE(test, wait_until(pstats(env).handled == 200));
	expect_each_once(test, env, 200);
	ps = pstats(env);
	KUNIT_EXPECT_EQ(test, ps.retried + ps.failed + ps.dropped + ps.aborted, 0);
	KUNIT_EXPECT_EQ(test, ps.workers, 4);
	KUNIT_EXPECT_EQ(test, ps.running, 4);
	KUNIT_EXPECT_LE(test, ps.peak_busy, 4);
	KUNIT_EXPECT_GE(test, ps.peak_busy, 1);
	/* handled counts only after done: the queue is already empty. */
	st = qstats(env->q);
	KUNIT_EXPECT_EQ(test, st.gets, 200);
	KUNIT_EXPECT_EQ(test, st.dones, 200);
	KUNIT_EXPECT_EQ(test, st.items, 0);
	KUNIT_EXPECT_EQ(test, st.processing, 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&env->calls), 200);
}

/*
 * The queue is quiet: nothing queued or processing, @waiting waiting. Not
 * inlined: its struct kwq_stats would join the caller's stack frame.
 */
static noinline bool quiet(struct kwq *q, u64 waiting)
{
	struct kwq_stats st = qstats(q);

	return !st.queued && !st.processing && st.waiting == waiting;
}

/*
 * A retryable error re-adds the key with the limiter's backoff (5, 10,
 * 20 ms), not earlier; success then forgets the failures.
 */
static void kwq_pool_test_retry_backoff(struct kunit *test)
{
	struct pool_env *env = test->priv;
	static const s64 backoff_ms[] = { 5, 10, 20 };
	struct kwq_pool_stats ps;
	int i;

	fake_clock_queue(test, env);
	env->fail_first = 3;
	start_pool(test, env, 1, pool_handler, 0);
	KUNIT_ASSERT_EQ(test, add(env->q, "flaky"), KWQ_ADD_QUEUED);
	for (i = 0; i < ARRAY_SIZE(backoff_ms); i++) {
		KUNIT_ASSERT_TRUE(test, wait_until(pstats(env).retried == i + 1 &&
						   quiet(env->q, 1)));
		KUNIT_EXPECT_EQ(test, atomic_read(&env->calls), i + 1);
		KUNIT_EXPECT_EQ(test, requeues(env->q, "flaky"), i + 1);
		KUNIT_EXPECT_EQ(test, fc_programmed_in(env->fc), MS(backoff_ms[i]));
		/* One nanosecond early: still waiting, the handler not called. */
		step(env->fc, MS(backoff_ms[i]) - 1);
		KUNIT_EXPECT_TRUE(test, quiet(env->q, 1));
		KUNIT_EXPECT_EQ(test, atomic_read(&env->calls), i + 1);
		step(env->fc, 1);
	}
	KUNIT_ASSERT_TRUE(test, wait_until(pstats(env).handled == 1));
	ps = pstats(env);
	KUNIT_EXPECT_EQ(test, ps.retried, 3);
	KUNIT_EXPECT_EQ(test, ps.failed, 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&env->calls), 4);
	KUNIT_EXPECT_EQ(test, requeues(env->q, "flaky"), 0);
	KUNIT_EXPECT_EQ(test, qstats(env->q).items, 0);
	KUNIT_EXPECT_EQ(test, qstats(env->q).rate_limited, 3);
}

/*
 * KWQ_POOL_DROP after two retries: counted failed, forgotten, done, not
 * retried again. A reserved positive value is treated the same.
 */
static void kwq_pool_test_permanent(struct kunit *test)
{
	struct pool_env *env = test->priv;
	struct kwq_pool_stats ps;

	fake_clock_queue(test, env);
	env->fail_first = 2;
	env->err = -EIO;
	start_pool(test, env, 2, pool_handler, 0);
	KUNIT_ASSERT_EQ(test, add(env->q, "dies"), KWQ_ADD_QUEUED);
	KUNIT_ASSERT_EQ(test, add(env->q, "odd"), KWQ_ADD_QUEUED);
	KUNIT_ASSERT_TRUE(test, wait_until(pstats(env).retried == 1 && pstats(env).failed == 1 &&
					   quiet(env->q, 1)));
	step(env->fc, MS(5));
	KUNIT_ASSERT_TRUE(test, wait_until(pstats(env).retried == 2 && quiet(env->q, 1)));
	KUNIT_EXPECT_EQ(test, requeues(env->q, "dies"), 2);
	step(env->fc, MS(10));
	KUNIT_ASSERT_TRUE(test, wait_until(pstats(env).failed == 2 && quiet(env->q, 0)));
	ps = pstats(env);
	KUNIT_EXPECT_EQ(test, ps.handled, 0);
	KUNIT_EXPECT_EQ(test, ps.retried, 2);
	KUNIT_EXPECT_EQ(test, atomic_read(&env->calls), 4);
	KUNIT_EXPECT_EQ(test, requeues(env->q, "dies"), 0);
	KUNIT_EXPECT_EQ(test, qstats(env->q).items, 0);
	KUNIT_EXPECT_EQ(test, qstats(env->q).dones, 4);
	/* Nothing is left to fire: time passing calls nothing more. */
	step(env->fc, MS(10000));
	KUNIT_EXPECT_EQ(test, atomic_read(&env->calls), 4);
}

/* max_retries 2: the third failure is permanent (client-go's maxRetries). */
static void kwq_pool_test_max_retries(struct kunit *test)
{
	struct pool_env *env = test->priv;
	struct kwq_pool_stats ps;

	fake_clock_queue(test, env);
	start_pool(test, env, 1, pool_handler, 2);
	KUNIT_ASSERT_EQ(test, add(env->q, "always"), KWQ_ADD_QUEUED);
	KUNIT_ASSERT_TRUE(test, wait_until(pstats(env).retried == 1 && quiet(env->q, 1)));
	step(env->fc, MS(5));
	KUNIT_ASSERT_TRUE(test, wait_until(pstats(env).retried == 2 && quiet(env->q, 1)));
	step(env->fc, MS(10));
	KUNIT_ASSERT_TRUE(test, wait_until(pstats(env).failed == 1 && quiet(env->q, 0)));
	ps = pstats(env);
	KUNIT_EXPECT_EQ(test, ps.retried, 2);
	KUNIT_EXPECT_EQ(test, ps.handled, 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&env->calls), 3);
	KUNIT_EXPECT_EQ(test, requeues(env->q, "always"), 0);
	KUNIT_EXPECT_EQ(test, qstats(env->q).items, 0);
}

/* Token buckets only: no per-key failure count (kwq_num_requeues() is 0). */
static const struct kwq_ratelimit bucket_only = {
	.count = 1,
	.limiters = { { .type = KWQ_LIMITER_BUCKET, .rate_mhz = 10000, .burst = 2 } },
};

/*
 * max_retries on a queue that keeps no failure count could never fire:
 * the start is refused, and so is a limit above the count's saturation
 * (524287, KWQ_FAILURES_MAX). What such a queue does with a failing key
 * (retry it with backoff, never give up) shows why.
 */
static void kwq_pool_test_max_retries_bucket(struct kunit *test)
{
	struct pool_env *env = test->priv;
	struct kwq_attr *qattr = kunit_kzalloc(test, sizeof(*qattr), GFP_KERNEL);
	struct kwq_pool_attr attr = {
		.handler = pool_handler, .ctx = env, .workers = 1, .max_retries = 3,
	};
	struct kwq_pool *pool;
	struct kwq *dflt;
	struct kwq_pool_stats ps;

	/* Not on the stack, as in fake_queue(). */
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, qattr);
	qattr->ratelimit = &bucket_only;
	env->fc = fake_queue(test, qattr);
	test->priv = env;
	env->q = env->fc->q;
	pool = kwq_pool_start(env->q, &attr);
	if (!IS_ERR(pool))
		env->pool = pool;	/* stopped by the exit */
	KUNIT_ASSERT_EQ(test, PTR_ERR_OR_ZERO(pool), -EINVAL);

	/* The default limiter counts, up to its saturation. */
	dflt = kwq_create(NULL, NULL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, dflt);
	attr.max_retries = 524288;
	pool = kwq_pool_start(dflt, &attr);
	KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(pool), -EINVAL);
	if (!IS_ERR(pool))
		kwq_pool_stop(pool, KWQ_POOL_CANCEL, KWQ_NOWAIT, NULL);
	attr.max_retries = 524287;
	pool = kwq_pool_start(dflt, &attr);
	KUNIT_EXPECT_FALSE(test, IS_ERR(pool));
	if (!IS_ERR(pool))
		kwq_pool_stop(pool, KWQ_POOL_CANCEL, KWQ_NOWAIT, NULL);
	kwq_destroy(dflt);

	/*
	 * Without a limit the bucket-only queue retries a failing key past
	 * the fourth call that max_retries 3 promises, and never counts it.
	 * Burst 2: two retries at once, then one per 100 ms.
	 */
	start_pool(test, env, 1, pool_handler, 0);
	KUNIT_ASSERT_EQ(test, add(env->q, "always"), KWQ_ADD_QUEUED);
	KUNIT_ASSERT_TRUE(test, wait_until(atomic_read(&env->calls) == 3 && quiet(env->q, 1)));
	step(env->fc, MS(100));
	KUNIT_ASSERT_TRUE(test, wait_until(atomic_read(&env->calls) == 4 && quiet(env->q, 1)));
	step(env->fc, MS(100));
	KUNIT_ASSERT_TRUE(test, wait_until(atomic_read(&env->calls) == 5 && quiet(env->q, 1)));
	ps = pstats(env);
	KUNIT_EXPECT_EQ(test, ps.retried, 5);
	KUNIT_EXPECT_EQ(test, ps.failed, 0);
	KUNIT_EXPECT_EQ(test, requeues(env->q, "always"), 0);
}

/* Blocks the first @workers calls until all of them are in at once. */
static int gate_handler(void *ctx, const void *key, u32 len)
{
	struct pool_env *env = ctx;
	int n = atomic_inc_return(&env->busy);
	int peak = atomic_read(&env->peak);

	while (n > peak && !atomic_try_cmpxchg(&env->peak, &peak, n))
		;
	if (atomic_inc_return(&env->calls) <= env->workers) {
		if (n == env->workers)
			complete(&env->all_in);
		wait_for_completion_timeout(&env->release, msecs_to_jiffies(WAIT_MS));
	}
	atomic_dec(&env->busy);
	return 0;
}

/* N workers: N handlers run at once, never N + 1. */
static void kwq_pool_test_concurrency_limit(struct kunit *test)
{
	struct pool_env *env = test->priv;

	real_queue(test, env);
	start_pool(test, env, 3, gate_handler, 0);
	add_keys(test, env->q, 0, 12);
	KUNIT_ASSERT_NE(test, wait_for_completion_timeout(&env->all_in,
							  msecs_to_jiffies(WAIT_MS)), 0);
	/* All three threads are held: a fourth handler cannot start. */
	msleep(100);
	KUNIT_EXPECT_EQ(test, atomic_read(&env->calls), 3);
	KUNIT_EXPECT_EQ(test, pstats(env).busy, 3);
	KUNIT_EXPECT_EQ(test, qstats(env->q).processing, 3);
	KUNIT_EXPECT_EQ(test, qstats(env->q).queued, 9);
	complete_all(&env->release);
	KUNIT_ASSERT_TRUE(test, wait_until(pstats(env).handled == 12));
	KUNIT_EXPECT_EQ(test, atomic_read(&env->peak), 3);
	KUNIT_EXPECT_EQ(test, pstats(env).peak_busy, 3);
	KUNIT_EXPECT_EQ(test, pstats(env).busy, 0);
}

/*
 * Drain: everything queued, waiting for a deadline or for a backoff is
 * handled before the stop returns; a retry during the drain is refused
 * and counted dropped; the queue is left shut down.
 */
static void kwq_pool_test_stop_drain(struct kunit *test)
{
	struct pool_env *env = test->priv;
	struct kwq_pool_stats final;
	struct kwq_stats st;
	int calls;

	real_queue(test, env);
	env->delay_us = 200;
	start_pool(test, env, 2, pool_handler, 0);
	add_keys(test, env->q, 0, 100);
	/* An hour away: only the drain's flush brings it in. */
	KUNIT_ASSERT_EQ(test, kwq_add_after(env->q, "k100", 4, 3600LL * NSEC_PER_SEC, 0),
			KWQ_ADD_WAITING);
	KUNIT_ASSERT_EQ(test, add(env->q, "always"), KWQ_ADD_QUEUED);
	KUNIT_EXPECT_EQ(test, stop_pool(env, KWQ_POOL_DRAIN,
					kwq_deadline_after(WAIT_MS * NSEC_PER_MSEC), &final), 0);
	calls = atomic_read(&env->calls);
	expect_each_once(test, env, 101);
	KUNIT_EXPECT_EQ(test, final.handled, 101);
	KUNIT_EXPECT_EQ(test, final.dropped, 1);
	KUNIT_EXPECT_EQ(test, final.failed + final.aborted, 0);
	KUNIT_EXPECT_EQ(test, final.running, 0);
	KUNIT_EXPECT_EQ(test, final.busy, 0);
	KUNIT_EXPECT_EQ(test, calls, 102 + final.retried);
	st = qstats(env->q);
	KUNIT_EXPECT_EQ(test, st.queued + st.processing + st.waiting + st.dirty_processing, 0);
	KUNIT_EXPECT_TRUE(test, st.state & KWQ_STATE_SHUTTING_DOWN);
	KUNIT_EXPECT_EQ(test, add(env->q, "k200"), -ESHUTDOWN);
	msleep(20);
	KUNIT_EXPECT_EQ(test, atomic_read(&env->calls), calls);
	KUNIT_EXPECT_EQ(test, atomic_read(&env->late), 0);
}

static int stopper_fn(void *arg)
{
	struct pool_env *env = arg;

	stop_pool(env, KWQ_POOL_CANCEL, KWQ_NOWAIT, &env->final);
	complete_all(&env->stop_done);
	return 0;
}

/*
 * Cancel: the stop waits for the running handler, which finishes
 * normally (its interruptible sleep is not cut short: kthread_stop() on a
 * thread inside a handler would do that); the keys still queued stay
 * queued, in order, in a queue that keeps working; no handler runs after
 * the stop returns.
 */
static void kwq_pool_test_stop_cancel(struct kunit *test)
{
	struct pool_env *env = test->priv;
	struct kwq_pool_stats *final = &env->final;
	struct task_struct *stopper;
	struct kwq_stats st;
	char buf[16];
	u32 len = 0;

	real_queue(test, env);
	start_pool(test, env, 1, pool_handler, 0);
	KUNIT_ASSERT_EQ(test, add(env->q, "slow"), KWQ_ADD_QUEUED);
	KUNIT_ASSERT_NE(test, wait_for_completion_timeout(&env->entered,
							  msecs_to_jiffies(WAIT_MS)), 0);
	add_keys(test, env->q, 0, 10);
	stopper = kthread_run(stopper_fn, env, "kwq-pool-stopper");
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, stopper);
	env->stopper = true;
	/* The handler is still running: the stop must not return. */
	KUNIT_EXPECT_EQ(test, wait_for_completion_timeout(&env->stop_done,
							  msecs_to_jiffies(100)), 0);
	complete_all(&env->release);
	KUNIT_ASSERT_NE(test, wait_for_completion_timeout(&env->stop_done,
							  msecs_to_jiffies(WAIT_MS)), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&env->interrupted), 0);
	KUNIT_EXPECT_EQ(test, final->handled, 1);
	KUNIT_EXPECT_EQ(test, final->running, 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&env->calls), 1);
	st = qstats(env->q);
	KUNIT_EXPECT_EQ(test, st.queued, 10);
	KUNIT_EXPECT_EQ(test, st.processing, 0);
	KUNIT_EXPECT_EQ(test, st.dones, 1);
	KUNIT_EXPECT_FALSE(test, st.state & KWQ_STATE_SHUTTING_DOWN);
	KUNIT_EXPECT_EQ(test, add(env->q, "k10"), KWQ_ADD_QUEUED);
	msleep(50);
	KUNIT_EXPECT_EQ(test, atomic_read(&env->calls), 1);
	KUNIT_EXPECT_EQ(test, kwq_len(env->q), 11);
	KUNIT_EXPECT_EQ(test, kwq_get(env->q, buf, sizeof(buf), &len, KWQ_NOWAIT), 0);
	KUNIT_EXPECT_EQ(test, len, 2);
	KUNIT_EXPECT_EQ(test, memcmp(buf, "k0", 2), 0);
}

/* A handler that sees the stop gives its key back unprocessed, at the head. */
static void kwq_pool_test_stop_abort(struct kunit *test)
{
	struct pool_env *env = test->priv;
	struct kwq_pool_stats final;
	char buf[16];
	u32 len = 0;

	real_queue(test, env);
	start_pool(test, env, 1, pool_handler, 0);
	KUNIT_EXPECT_TRUE(test, !kwq_pool_current());
	KUNIT_EXPECT_FALSE(test, kwq_pool_stopping(env->pool));
	KUNIT_EXPECT_FALSE(test, kwq_pool_stopping(NULL));
	KUNIT_ASSERT_EQ(test, add(env->q, "busy"), KWQ_ADD_QUEUED);
	KUNIT_ASSERT_NE(test, wait_for_completion_timeout(&env->entered,
							  msecs_to_jiffies(WAIT_MS)), 0);
	KUNIT_ASSERT_EQ(test, add(env->q, "next"), KWQ_ADD_QUEUED);
	KUNIT_EXPECT_EQ(test, stop_pool(env, KWQ_POOL_CANCEL, KWQ_NOWAIT, &final), 0);
	KUNIT_EXPECT_EQ(test, final.aborted, 1);
	KUNIT_EXPECT_EQ(test, final.handled + final.retried + final.failed, 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&env->calls), 1);
	KUNIT_EXPECT_EQ(test, requeues(env->q, "busy"), 0);
	KUNIT_EXPECT_EQ(test, qstats(env->q).processing, 0);
	KUNIT_EXPECT_EQ(test, qstats(env->q).dones, 0);
	KUNIT_EXPECT_EQ(test, kwq_len(env->q), 2);
	KUNIT_EXPECT_EQ(test, kwq_get(env->q, buf, sizeof(buf), &len, KWQ_NOWAIT), 0);
	KUNIT_EXPECT_EQ(test, len, 4);
	KUNIT_EXPECT_EQ(test, memcmp(buf, "busy", 4), 0);
}

/* Outside a stop, KWQ_POOL_ABORT is a retryable error. */
static void kwq_pool_test_abort_not_stopping(struct kunit *test)
{
	struct pool_env *env = test->priv;

	fake_clock_queue(test, env);
	env->err = KWQ_POOL_ABORT;
	start_pool(test, env, 1, pool_handler, 0);
	KUNIT_ASSERT_EQ(test, add(env->q, "always"), KWQ_ADD_QUEUED);
	KUNIT_ASSERT_TRUE(test, wait_until(pstats(env).retried == 1 && quiet(env->q, 1)));
	KUNIT_EXPECT_EQ(test, pstats(env).aborted, 0);
	KUNIT_EXPECT_EQ(test, requeues(env->q, "always"), 1);
}

/* A queue shut down under the pool: queued keys are handled, then workers exit. */
static void kwq_pool_test_queue_shutdown(struct kunit *test)
{
	struct pool_env *env = test->priv;
	struct kwq_pool_stats ps;

	real_queue(test, env);
	env->delay_us = 500;
	start_pool(test, env, 3, pool_handler, 0);
	add_keys(test, env->q, 0, 30);
	kwq_shutdown(env->q);
	KUNIT_ASSERT_TRUE(test, wait_until(pstats(env).running == 0));
	ps = pstats(env);
	KUNIT_EXPECT_EQ(test, ps.handled, 30);
	expect_each_once(test, env, 30);
	KUNIT_EXPECT_EQ(test, stop_pool(env, KWQ_POOL_CANCEL, KWQ_NOWAIT, NULL), 0);
}

/* A queue destroyed under idle workers: they exit; the pool's reference keeps it valid. */
static void kwq_pool_test_queue_destroyed(struct kunit *test)
{
	struct pool_env *env = test->priv;
	struct kwq_pool_stats final;

	real_queue(test, env);
	start_pool(test, env, 4, pool_handler, 0);
	add_keys(test, env->q, 0, 8);
	KUNIT_ASSERT_TRUE(test, wait_until(pstats(env).handled == 8));
	kwq_destroy(env->q);
	env->q = NULL;
	KUNIT_ASSERT_TRUE(test, wait_until(pstats(env).running == 0));
	/* A drain of a destroyed queue reports it; the pool stops anyway. */
	KUNIT_EXPECT_EQ(test, stop_pool(env, KWQ_POOL_DRAIN, KWQ_FOREVER, &final), -EIDRM);
	KUNIT_EXPECT_EQ(test, final.handled, 8);
}

static void kwq_pool_test_invalid(struct kunit *test)
{
	struct pool_env *env = test->priv;
	struct kwq_pool_attr attr = { .handler = pool_handler, .ctx = env, .workers = 1 };
	struct kwq_pool *other;

	real_queue(test, env);
	KUNIT_EXPECT_EQ(test, PTR_ERR(kwq_pool_start(NULL, &attr)), -EINVAL);
	KUNIT_EXPECT_EQ(test, PTR_ERR(kwq_pool_start(env->q, NULL)), -EINVAL);
	attr.workers = 0;
	KUNIT_EXPECT_EQ(test, PTR_ERR(kwq_pool_start(env->q, &attr)), -EINVAL);
	attr.workers = KWQ_POOL_MAX_WORKERS + 1;
	KUNIT_EXPECT_EQ(test, PTR_ERR(kwq_pool_start(env->q, &attr)), -EINVAL);
	attr.workers = 1;
	attr.handler = NULL;
	KUNIT_EXPECT_EQ(test, PTR_ERR(kwq_pool_start(env->q, &attr)), -EINVAL);

	start_pool(test, env, 2, pool_handler, 0);
	attr.handler = pool_handler;
	other = kwq_pool_start(env->q, &attr);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, other);
	env->other = other;
	/* An unknown mode changes nothing: the pool still works. */
	KUNIT_EXPECT_EQ(test, kwq_pool_stop(env->pool, 7, KWQ_NOWAIT, NULL), -EINVAL);
	/*
	 * A handler can neither stop its pool nor drain its queue, nor stop
	 * the queue's other pool with a drain: each would wait for itself.
	 */
	KUNIT_ASSERT_EQ(test, add(env->q, "x"), KWQ_ADD_QUEUED);
	KUNIT_ASSERT_TRUE(test,
			  wait_until(pstats(env).handled + pool_stats(env->other).handled == 1));
	KUNIT_EXPECT_EQ(test, atomic_read(&env->deadlk), 3);
	KUNIT_EXPECT_FALSE(test, kwq_shutting_down(env->q));
	KUNIT_EXPECT_EQ(test, pstats(env).running, 2);
	KUNIT_EXPECT_EQ(test, pool_stats(env->other).running, 1);
}

#define ATOMIC_KEYS	32

static DEFINE_SPINLOCK(producer_lock);

struct atomic_producer {
	struct hrtimer timer;
	struct kwq *q;
	atomic_t n;
	atomic_t errors;
};

static enum hrtimer_restart produce_fn(struct hrtimer *timer)
{
	struct atomic_producer *p = container_of(timer, struct atomic_producer, timer);
	int n = atomic_inc_return(&p->n);
	char key[16];

	snprintf(key, sizeof(key), "k%d", n - 1);
	if (kwq_add_atomic(p->q, key, strlen(key)) != KWQ_ADD_QUEUED)
		atomic_inc(&p->errors);
	if (n >= ATOMIC_KEYS / 2)
		return HRTIMER_NORESTART;
	hrtimer_forward_now(timer, ms_to_ktime(1));
	return HRTIMER_RESTART;
}

/*
 * Producers in atomic context: a soft hrtimer (softirq) and a caller
 * holding a spinlock add with kwq_add_atomic() while the pool consumes.
 */
static void kwq_pool_test_atomic_producers(struct kunit *test)
{
	struct pool_env *env = test->priv;
	struct atomic_producer *p = kunit_kzalloc(test, sizeof(*p), GFP_KERNEL);
	char key[16];
	int i, ret;

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, p);
	real_queue(test, env);
	start_pool(test, env, 2, pool_handler, 0);
	p->q = env->q;
	kwq_hrtimer_setup(&p->timer, produce_fn, CLOCK_MONOTONIC, HRTIMER_MODE_REL_SOFT);
	hrtimer_start(&p->timer, ms_to_ktime(1), HRTIMER_MODE_REL_SOFT);
	for (i = ATOMIC_KEYS / 2; i < ATOMIC_KEYS; i++) {
		snprintf(key, sizeof(key), "k%d", i);
		spin_lock(&producer_lock);
		ret = kwq_add_atomic(env->q, key, strlen(key));
		spin_unlock(&producer_lock);
		KUNIT_EXPECT_EQ(test, ret, KWQ_ADD_QUEUED);
	}
	KUNIT_EXPECT_TRUE(test, wait_until(pstats(env).handled == ATOMIC_KEYS));
	hrtimer_cancel(&p->timer);
	KUNIT_EXPECT_EQ(test, atomic_read(&p->errors), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&p->n), ATOMIC_KEYS / 2);
	expect_each_once(test, env, ATOMIC_KEYS);
}

/* kwq_parallelize() */

struct par_env {
	atomic_t seen[1000];
	atomic_t calls;
	atomic_t busy;
	atomic_t peak;
	atomic_t entered;
	u32 gate;
	u32 fail_at;
};

/* A piece begins: count the call, and raise @peak to the pieces now running. */
static void par_enter(atomic_t *calls, atomic_t *busy, atomic_t *peak)
{
	int n = atomic_inc_return(busy);
	int old = atomic_read(peak);

	while (n > old && !atomic_try_cmpxchg(peak, &old, n))
		;
	atomic_inc(calls);
}

static int par_fn(void *ctx, u32 piece)
{
	struct par_env *pe = ctx;
	unsigned long end;

	par_enter(&pe->calls, &pe->busy, &pe->peak);
	if (piece < ARRAY_SIZE(pe->seen))
		atomic_inc(&pe->seen[piece]);
	/* The first @gate pieces wait until @gate of them are in at once. */
	if (atomic_inc_return(&pe->entered) <= pe->gate) {
		end = jiffies + msecs_to_jiffies(WAIT_MS);
		while (atomic_read(&pe->entered) < pe->gate && time_before(jiffies, end))
			usleep_range(1000, 2000);
	} else if (pe->gate) {
		/* Later pieces overlap a little, so more than @gate could show. */
		usleep_range(20, 40);
	}
	atomic_dec(&pe->busy);
	return pe->fail_at && piece == pe->fail_at ? -EIO : 0;
}

static u32 par_bad(struct par_env *pe, u32 pieces)
{
	u32 i, bad = 0;

	for (i = 0; i < ARRAY_SIZE(pe->seen); i++)
		bad += atomic_read(&pe->seen[i]) != (i < pieces);
	return bad;
}

/* Every piece runs exactly once, chunked or not, whatever the worker count. */
static void kwq_pool_test_parallelize_pieces(struct kunit *test)
{
	static const u32 cases[][3] = {
		/* workers, pieces, chunk */
		{ 4, 1000, 7 }, { 4, 1000, 0 }, { 1, 999, 1000 }, { 8, 3, 1 }, { 16, 1000, 64 },
	};
	struct par_env *pe;
	int i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		pe = kunit_kzalloc(test, sizeof(*pe), GFP_KERNEL);
		KUNIT_ASSERT_NOT_ERR_OR_NULL(test, pe);
		KUNIT_EXPECT_EQ(test, kwq_parallelize(cases[i][0], cases[i][1], cases[i][2],
						      par_fn, pe), 0);
		KUNIT_EXPECT_EQ_MSG(test, par_bad(pe, cases[i][1]), 0, "case %d", i);
		KUNIT_EXPECT_EQ(test, atomic_read(&pe->calls), cases[i][1]);
		KUNIT_EXPECT_LE(test, atomic_read(&pe->peak), cases[i][0]);
	}
}

/* @workers pieces run at once, never more. */
static void kwq_pool_test_parallelize_limit(struct kunit *test)
{
	struct par_env *pe = kunit_kzalloc(test, sizeof(*pe), GFP_KERNEL);

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, pe);
	pe->gate = 3;
	KUNIT_EXPECT_EQ(test, kwq_parallelize(3, 300, 1, par_fn, pe), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&pe->peak), 3);
	KUNIT_EXPECT_EQ(test, par_bad(pe, 300), 0);
}

/* A failing piece stops the pieces not started yet and is returned. */
static void kwq_pool_test_parallelize_error(struct kunit *test)
{
	struct par_env *pe = kunit_kzalloc(test, sizeof(*pe), GFP_KERNEL);
	int calls;

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, pe);
	pe->fail_at = 10;
	KUNIT_EXPECT_EQ(test, kwq_parallelize(1, 100, 1, par_fn, pe), -EIO);
	KUNIT_EXPECT_EQ(test, atomic_read(&pe->calls), 11);

	pe = kunit_kzalloc(test, sizeof(*pe), GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, pe);
	pe->fail_at = 10;
	KUNIT_EXPECT_EQ(test, kwq_parallelize(4, 1000, 1, par_fn, pe), -EIO);
	calls = atomic_read(&pe->calls);
	/* Each of the others finishes at most the piece it was running. */
	KUNIT_EXPECT_LE(test, calls, 1000 - 1);
	KUNIT_EXPECT_GE(test, calls, 11);

	pe = kunit_kzalloc(test, sizeof(*pe), GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, pe);
	KUNIT_EXPECT_EQ(test, kwq_parallelize(0, 10, 1, par_fn, pe), -EINVAL);
	KUNIT_EXPECT_EQ(test, kwq_parallelize(4, 0, 1, par_fn, pe), 0);
	KUNIT_EXPECT_EQ(test, kwq_parallelize(4, 10, 1, NULL, pe), -EINVAL);
	KUNIT_EXPECT_EQ(test, atomic_read(&pe->calls), 0);
}

/* More pieces than a helper array for each could fit in one allocation. */
#define HUGE_PIECES	262144	/* 2^18 */

struct par_huge {
	unsigned long *seen;
	struct task_struct *caller;
	bool caller_waited;
	struct completion helper_ran;
	atomic_t dup;
	atomic_t calls;
	atomic_t helped;
	atomic_t busy;
	atomic_t peak;
};

static int par_huge_fn(void *ctx, u32 piece)
{
	struct par_huge *ph = ctx;

	par_enter(&ph->calls, &ph->busy, &ph->peak);
	if (test_and_set_bit(piece, ph->seen))
		atomic_inc(&ph->dup);
	if (current != ph->caller) {
		atomic_inc(&ph->helped);
		complete_all(&ph->helper_ran);
	} else if (!ph->caller_waited) {
		/*
		 * The caller's first piece waits for a helper's, so that the
		 * caller cannot finish alone: without helpers this times out.
		 * Bounded, since a helper needs a free kworker.
		 */
		ph->caller_waited = true;
		wait_for_completion_timeout(&ph->helper_ran, msecs_to_jiffies(WAIT_MS));
	}
	atomic_dec(&ph->busy);
	return 0;
}

/*
 * workers of U32_MAX: clamped to KWQ_PARALLELIZE_MAX_WORKERS, so the
 * helpers are allocated and run, every piece runs once, and the helper
 * array is never sized for the worker count (which would fail, with a
 * page allocator warning unless __GFP_NOWARN, for 2^18 pieces).
 */
static void kwq_pool_test_parallelize_huge(struct kunit *test)
{
	struct par_huge *ph = kunit_kzalloc(test, sizeof(*ph), GFP_KERNEL);

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, ph);
	ph->seen = kunit_kzalloc(test, BITS_TO_LONGS(HUGE_PIECES) * sizeof(long), GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, ph->seen);
	ph->caller = current;
	init_completion(&ph->helper_ran);
	KUNIT_EXPECT_EQ(test, kwq_parallelize(U32_MAX, HUGE_PIECES, 1, par_huge_fn, ph), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&ph->calls), HUGE_PIECES);
	KUNIT_EXPECT_EQ(test, atomic_read(&ph->dup), 0);
	KUNIT_EXPECT_EQ(test, bitmap_weight(ph->seen, HUGE_PIECES), HUGE_PIECES);
	KUNIT_EXPECT_GT(test, atomic_read(&ph->helped), 0);
	KUNIT_EXPECT_LE(test, atomic_read(&ph->peak), KWQ_PARALLELIZE_MAX_WORKERS);
}

static struct kunit_case kwq_pool_test_cases[] = {
	KUNIT_CASE(kwq_pool_test_success),
	KUNIT_CASE(kwq_pool_test_retry_backoff),
	KUNIT_CASE(kwq_pool_test_permanent),
	KUNIT_CASE(kwq_pool_test_max_retries),
	KUNIT_CASE(kwq_pool_test_max_retries_bucket),
	KUNIT_CASE(kwq_pool_test_concurrency_limit),
	KUNIT_CASE(kwq_pool_test_stop_drain),
	KUNIT_CASE(kwq_pool_test_stop_cancel),
	KUNIT_CASE(kwq_pool_test_stop_abort),
	KUNIT_CASE(kwq_pool_test_abort_not_stopping),
	KUNIT_CASE(kwq_pool_test_queue_shutdown),
	KUNIT_CASE(kwq_pool_test_queue_destroyed),
	KUNIT_CASE(kwq_pool_test_invalid),
	KUNIT_CASE(kwq_pool_test_atomic_producers),
	KUNIT_CASE(kwq_pool_test_parallelize_pieces),
	KUNIT_CASE(kwq_pool_test_parallelize_limit),
	KUNIT_CASE(kwq_pool_test_parallelize_error),
	KUNIT_CASE(kwq_pool_test_parallelize_huge),
	{}
};

static struct kunit_suite kwq_pool_test_suite = {
	.name = "kwq_pool",
	.init = pool_test_init,
	.exit = pool_test_exit,
	.test_cases = kwq_pool_test_cases,
};

kunit_test_suite(kwq_pool_test_suite);
