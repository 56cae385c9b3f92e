// SPDX-License-Identifier: GPL-2.0
/*
 * kwq_sample: a kernel module that consumes a named kwq queue with the
 * worker pool, and can produce keys into it for user programs.
 *
 *   insmod kwq_sample.ko queue=jobs workers=4 fail_every=5
 *	attach to the queue "jobs" (made by a user program with kwqctl
 *	create, or by this module with create=1) and handle its keys in 4
 *	kernel threads; every 5th handler call fails with -EAGAIN, so that
 *	key is retried after its backoff.
 *   insmod kwq_sample.ko queue=jobs create=1 workers=0 produce=100
 *	make the queue and add keys "kernel/0" .. "kernel/99" for a user
 *	program to consume; `echo N > .../parameters/produce` adds N more.
 *
 * The counters are read-only parameters under
 * /sys/module/kwq_sample/parameters/; nothing is logged per key. The
 * module uses kwq's exported symbols, so kwq.ko cannot be unloaded while
 * it is loaded. Documentation/kwq-pool.rst describes it.
 */

#include <linux/delay.h>
#include <linux/err.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/stddef.h>
#include <linux/string.h>
#include <linux/sysfs.h>

#include "kwq.h"
#include "kwq_pool.h"

static char *queue = "kwq-sample";
module_param(queue, charp, 0444);
MODULE_PARM_DESC(queue, "Name of the queue to attach to (default kwq-sample)");

static bool create;
module_param(create, bool, 0444);
MODULE_PARM_DESC(create, "Create the queue if it does not exist (default 0: it must exist)");

static unsigned int workers = 2;
module_param(workers, uint, 0444);
MODULE_PARM_DESC(workers, "Worker threads; 0 only produces (default 2)");

static unsigned int fail_every;
module_param(fail_every, uint, 0644);
MODULE_PARM_DESC(fail_every,
		 "Every K-th handler call fails with -EAGAIN and its key is retried with backoff (default 0: never)");

static unsigned int max_retries;
module_param(max_retries, uint, 0444);
MODULE_PARM_DESC(max_retries, "Drop a key after this many retries (default 0: retry forever)");

static unsigned int work_us;
module_param(work_us, uint, 0644);
MODULE_PARM_DESC(work_us, "Microseconds each handler call sleeps, as if working (default 0)");

static bool drain;
module_param(drain, bool, 0644);
MODULE_PARM_DESC(drain,
		 "At unload, drain the queue (shutting it down for everyone) instead of leaving its keys (default 0)");

static char *prefix = "kernel";
module_param(prefix, charp, 0444);
MODULE_PARM_DESC(prefix, "Keys produced are <prefix>/<n> (default kernel)");

/*
 * sample_lock protects the attachment and the produce counters against
 * parameter reads and writes from sysfs, which may run before init has
 * attached and until the module's files are removed after exit. It nests
 * inside the kernel's parameter lock.
 */
static DEFINE_MUTEX(sample_lock);
static struct kwq *sample_q;
static struct kwq_pool *sample_pool;
static struct kwq_pool_stats sample_final;
static unsigned int sample_pending;	/* produce= given at load */
static unsigned int sample_produced;
static atomic_t sample_calls = ATOMIC_INIT(0);

/* The "work": count the call, maybe sleep, fail every fail_every-th call. */
static int sample_handle(void *ctx, const void *key, u32 len)
{
	unsigned int every = READ_ONCE(fail_every);
	unsigned int us = READ_ONCE(work_us);
	unsigned int n = atomic_inc_return(&sample_calls);

	if (us)
		fsleep(us);
	if (every && n % every == 0)
		return -EAGAIN;
	return 0;
}

/* Add <prefix>/<n> for the next @count values of n. */
static int sample_produce_locked(unsigned int count)
{
	char key[KWQ_KEY_MAX];
	int len, ret;

	lockdep_assert_held(&sample_lock);
	while (count--) {
		len = snprintf(key, sizeof(key), "%s/%u", prefix, sample_produced);
		if (len >= sizeof(key))
			return -EINVAL;
		ret = kwq_add(sample_q, key, len);
		if (ret < 0)
			return ret;
		sample_produced++;
	}
	return 0;
}

/* produce=N: before init, remembered; afterwards, N keys added at once. */
static int sample_produce_set(const char *val, const struct kernel_param *kp)
{
	unsigned int count;
	int ret = kstrtouint(val, 0, &count);

	if (ret)
		return ret;
	mutex_lock(&sample_lock);
	if (sample_q)
		ret = sample_produce_locked(count);
	else
		sample_pending = count;
	mutex_unlock(&sample_lock);
	return ret;
}

static int sample_produce_get(char *buf, const struct kernel_param *kp)
{
	unsigned int n;

	mutex_lock(&sample_lock);
	n = sample_produced;
	mutex_unlock(&sample_lock);
	return sysfs_emit(buf, "%u\n", n);
}

static const struct kernel_param_ops sample_produce_ops = {
	.set = sample_produce_set,
	.get = sample_produce_get,
};
module_param_cb(produce, &sample_produce_ops, NULL, 0644);
MODULE_PARM_DESC(produce, "Keys to add: at load, or later by writing; reads the total added");

/* Read-only counters: the pool's, or its final ones once it stopped. */
static int sample_stat_set(const char *val, const struct kernel_param *kp)
{
	return -EPERM;
}

static int sample_stat_get(char *buf, const struct kernel_param *kp)
{
	struct kwq_pool_stats st;
	size_t off = (uintptr_t)kp->arg;

	mutex_lock(&sample_lock);
	if (sample_pool)
		kwq_pool_stats(sample_pool, &st);
	else
		st = sample_final;
	mutex_unlock(&sample_lock);
	return sysfs_emit(buf, "%llu\n", *(u64 *)((char *)&st + off));
}

static const struct kernel_param_ops sample_stat_ops = {
	.set = sample_stat_set,
	.get = sample_stat_get,
};

#define SAMPLE_STAT(field)	((void *)offsetof(struct kwq_pool_stats, field))

module_param_cb(handled, &sample_stat_ops, SAMPLE_STAT(handled), 0444);
MODULE_PARM_DESC(handled, "Keys handled successfully (read-only)");
module_param_cb(retried, &sample_stat_ops, SAMPLE_STAT(retried), 0444);
MODULE_PARM_DESC(retried, "Failures retried with backoff (read-only)");
module_param_cb(failed, &sample_stat_ops, SAMPLE_STAT(failed), 0444);
MODULE_PARM_DESC(failed, "Keys given up after max_retries (read-only)");
module_param_cb(dropped, &sample_stat_ops, SAMPLE_STAT(dropped), 0444);
MODULE_PARM_DESC(dropped,
		 "Retries the queue refused: shutting down, or the hand-out had ended (read-only)");

static struct kwq *sample_attach(void)
{
	struct kwq *q = kwq_lookup(queue);

	if (IS_ERR(q) && PTR_ERR(q) == -ENOENT && create) {
		q = kwq_create(queue, NULL);
		/* Someone else made it first: use theirs. */
		if (IS_ERR(q) && PTR_ERR(q) == -EEXIST)
			q = kwq_lookup(queue);
	}
	return q;
}

static int __init sample_init(void)
{
	struct kwq_pool_attr attr = {
		.handler = sample_handle,
		.workers = workers,
		.max_retries = max_retries,
	};
	struct kwq_pool *pool = NULL;
	struct kwq *q;
	int ret;

	if (workers > KWQ_POOL_MAX_WORKERS)
		return -EINVAL;
	q = sample_attach();
	if (IS_ERR(q)) {
		pr_err("kwq_sample: queue %s: error %ld\n", queue, PTR_ERR(q));
		return PTR_ERR(q);
	}
	if (workers) {
		pool = kwq_pool_start(q, &attr);
		if (IS_ERR(pool)) {
			kwq_put(q);
			return PTR_ERR(pool);
		}
	}
	mutex_lock(&sample_lock);
	sample_q = q;
	sample_pool = pool;
	ret = sample_produce_locked(sample_pending);
	if (ret) {
		sample_q = NULL;
		sample_pool = NULL;
	}
	mutex_unlock(&sample_lock);
	if (ret) {
		if (pool)
			kwq_pool_stop(pool, KWQ_POOL_CANCEL, KWQ_NOWAIT, NULL);
		kwq_put(q);
		pr_err("kwq_sample: producing into %s: error %d\n", queue, ret);
		return ret;
	}
	pr_info("kwq_sample: attached to %s with %u workers\n", queue, workers);
	return 0;
}

static void __exit sample_exit(void)
{
	int ret = 0;

	mutex_lock(&sample_lock);
	if (sample_pool)
		ret = kwq_pool_stop(sample_pool, drain ? KWQ_POOL_DRAIN : KWQ_POOL_CANCEL,
				    kwq_deadline_after(60LL * NSEC_PER_SEC), &sample_final);
	sample_pool = NULL;
	/* The queue outlives us, like any named queue, until destroyed. */
	kwq_put(sample_q);
	sample_q = NULL;
	mutex_unlock(&sample_lock);
	pr_info("kwq_sample: %s: handled %llu, retried %llu, failed %llu, dropped %llu, produced %u%s\n",
		queue, sample_final.handled, sample_final.retried, sample_final.failed,
		sample_final.dropped, sample_produced, ret ? " (drain did not finish)" : "");
}

module_init(sample_init);
module_exit(sample_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("kwq sample consumer: a worker pool on a named queue");
MODULE_AUTHOR("The kwq authors");
