// SPDX-License-Identifier: GPL-2.0
/*
 * kwq_bench: drive kwq's exported API from kernel threads and report keys
 * per second, the in-kernel half of kwq's benchmark suite.
 *
 * Write a command to /sys/kernel/debug/kwq_bench/run; the write returns
 * when the run is over, and a read of the same file gives its result:
 *
 *	cycle N		one kthread: kwq_add(), kwq_get(KWQ_NOWAIT), kwq_done()
 *			of N distinct keys in turn
 *	pc N P C	P producer kthreads add N distinct keys between them,
 *			C consumer kthreads kwq_get(KWQ_FOREVER) and kwq_done()
 *			them; the queue is shut down once the producers finish
 *	prio-cycle N, prio-pc N P C
 *			the same on a priority queue (kwq_attr.priority), the
 *			adds through kwq_add_ex(), key i at priority
 *			KWQ_PRIORITY_MIN + i % 16: every level in turn
 *
 *	hold N		one thread walks N keys through every path that visits
 *			many keys at once: N add-afters due at one instant (the
 *			timer), N gets, stats, N dones, N add-afters dropped by
 *			a shutdown. kwq's hold_max_keys and hold_max_ns module
 *			parameters then give the longest hold of the lock.
 *
 *	mode=pc keys=200000 producers=1 consumers=1 ns=123456 keys_per_s=1620000
 *
 * Keys are 32 bytes, as in the user-space benchmarks. Each run uses an
 * anonymous queue of its own. Uses nothing but kwq's exported API.
 */

#include <linux/completion.h>
#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/err.h>
#include <linux/fs.h>
#include <linux/kthread.h>
#include <linux/ktime.h>
#include <linux/math64.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>

#include "kwq.h"

#define KWQ_BENCH_KEY_LEN	32
#define KWQ_BENCH_MAX_THREADS	8
#define KWQ_BENCH_MAX_KEYS	10000000UL

/**
 * struct kwq_bench_run - one benchmark run
 * @q: its queue.
 * @keys: keys to push through the queue.
 * @producers: producer threads (pc mode).
 * @consumers: consumer threads (pc mode).
 * @left: threads still running; the last one completes @all_done.
 * @producing: producers still running; the last one shuts @q down.
 * @all_done: completed when every thread has finished its work.
 * @err: first error a thread met, or 0.
 * @consumed: keys done by the consumers.
 * @key: the keys, made before the clock starts: key i at @key[i].
 * @prio: a priority queue: adds through kwq_add_ex() at varied priorities.
 */
struct kwq_bench_run {
	struct kwq *q;
	unsigned long keys;
	unsigned int producers;
	unsigned int consumers;
	atomic_t left;
	atomic_t producing;
	struct completion all_done;
	atomic_t err;
	atomic_long_t consumed;
	char (*key)[KWQ_BENCH_KEY_LEN];
	bool prio;
};

/**
 * struct kwq_bench_thread - what one kthread does
 * @run: the run it belongs to.
 * @first: first key index (producers and the cycle thread).
 * @count: number of keys (producers and the cycle thread).
 */
struct kwq_bench_thread {
	struct kwq_bench_run *run;
	unsigned long first;
	unsigned long count;
};

static DEFINE_MUTEX(kwq_bench_lock);	/* one run at a time; guards the result */
static char kwq_bench_result[256] = "no run yet\n";
static struct dentry *kwq_bench_dir;

static void kwq_bench_key(char *buf, unsigned long i)
{
	char tmp[KWQ_BENCH_KEY_LEN + 1];

	snprintf(tmp, sizeof(tmp), "kbench/%025lu", i);
	memcpy(buf, tmp, KWQ_BENCH_KEY_LEN);
}

static void kwq_bench_fail(struct kwq_bench_run *run, int err)
{
	atomic_cmpxchg(&run->err, 0, err);
	kwq_shutdown(run->q);
}

/* Add, retrying while the queue is at its item limit. */
/* Add key @i: kwq_add(), or kwq_add_ex() at a priority of its own on a priority queue. */
static int kwq_bench_add(struct kwq_bench_run *run, unsigned long i)
{
	struct kwq_add_opts o = {
		.priority = KWQ_PRIORITY_MIN +
			    (s32)(i % (KWQ_PRIORITY_MAX - KWQ_PRIORITY_MIN + 1)),
	};
	const char *key = run->key[i];
	int ret;

	while ((ret = run->prio ? kwq_add_ex(run->q, key, KWQ_BENCH_KEY_LEN, &o) :
				  kwq_add(run->q, key, KWQ_BENCH_KEY_LEN)) == -ENOSPC)
		cond_resched();
	return ret < 0 ? ret : 0;
}

/* Work is over; the thread waits to be stopped so that its task stays valid. */
static int kwq_bench_finish(struct kwq_bench_run *run)
{
	if (atomic_dec_and_test(&run->left))
		complete(&run->all_done);
	while (!kthread_should_stop()) {
		set_current_state(TASK_INTERRUPTIBLE);
		if (kthread_should_stop()) {
			__set_current_state(TASK_RUNNING);
			break;
		}
		schedule();
	}
	return 0;
}

static int kwq_bench_cycle_fn(void *data)
{
	struct kwq_bench_thread *t = data;
	struct kwq_bench_run *run = t->run;
	char got[KWQ_BENCH_KEY_LEN];
	const char *key;
	unsigned long i;
	u32 len;
	int ret;

	for (i = 0; i < t->count; i++) {
		key = run->key[t->first + i];
		ret = kwq_bench_add(run, t->first + i);
		if (!ret)
			ret = kwq_get(run->q, got, sizeof(got), &len, KWQ_NOWAIT);
		if (!ret && (len != KWQ_BENCH_KEY_LEN || memcmp(got, key, len)))
			ret = -EILSEQ;
		if (!ret)
			ret = kwq_done(run->q, got, len);
		if (ret < 0) {
			kwq_bench_fail(run, ret);
			break;
		}
		atomic_long_inc(&run->consumed);
	}
	return kwq_bench_finish(run);
}

static int kwq_bench_producer_fn(void *data)
{
	struct kwq_bench_thread *t = data;
	struct kwq_bench_run *run = t->run;
	unsigned long i;
	int ret;

	for (i = 0; i < t->count; i++) {
		ret = kwq_bench_add(run, t->first + i);
		if (ret) {
			kwq_bench_fail(run, ret);
			break;
		}
	}
	/* The last producer lets the consumers stop once the queue is empty. */
	if (atomic_dec_and_test(&run->producing))
		kwq_shutdown(run->q);
	return kwq_bench_finish(run);
}

static int kwq_bench_consumer_fn(void *data)
{
	struct kwq_bench_thread *t = data;
	struct kwq_bench_run *run = t->run;
	char got[KWQ_BENCH_KEY_LEN];
	u32 len;
	int ret;

	for (;;) {
		ret = kwq_get(run->q, got, sizeof(got), &len, KWQ_FOREVER);
		if (ret == -ESHUTDOWN)
			break;
		if (!ret)
			ret = kwq_done(run->q, got, len);
		if (ret < 0) {
			/* A signal cannot reach a kthread; anything else is a failure. */
			kwq_bench_fail(run, ret);
			break;
		}
		atomic_long_inc(&run->consumed);
	}
	return kwq_bench_finish(run);
}

/*
 * Run one benchmark: @producers == 0 is the single-thread cycle; @prio
 * runs it on a priority queue.
 */
static int kwq_bench_run(unsigned long keys, unsigned int producers, unsigned int consumers,
			 bool prio)
{
	struct kwq_attr prio_attr = { .priority = true };
	unsigned int n = producers ? producers + consumers : 1;
	struct task_struct *tasks[KWQ_BENCH_MAX_THREADS];
	struct kwq_bench_thread *threads;
	struct kwq_bench_run *run;
	unsigned long i;
	ktime_t t0, t1;
	u64 ns, rate;
	int ret = 0;

	run = kzalloc(sizeof(*run), GFP_KERNEL);
	threads = kcalloc(n, sizeof(*threads), GFP_KERNEL);
	if (!run || !threads) {
		ret = -ENOMEM;
		goto out_free;
	}
	run->key = kvmalloc_array(keys, KWQ_BENCH_KEY_LEN, GFP_KERNEL);
	if (!run->key) {
		ret = -ENOMEM;
		goto out_free;
	}
	for (i = 0; i < keys; i++)
		kwq_bench_key(run->key[i], i);
	run->q = kwq_create(NULL, prio ? &prio_attr : NULL);
	run->prio = prio;
	if (IS_ERR(run->q)) {
		ret = PTR_ERR(run->q);
		goto out_free;
	}
	run->keys = keys;
	run->producers = producers;
	run->consumers = consumers;
	atomic_set(&run->left, n);
	atomic_set(&run->producing, producers);
	init_completion(&run->all_done);

	for (i = 0; i < n; i++) {
		int (*fn)(void *data);

		threads[i].run = run;
		if (!producers) {
			fn = kwq_bench_cycle_fn;
			threads[i].count = keys;
		} else if (i < producers) {
			fn = kwq_bench_producer_fn;
			threads[i].first = keys / producers * i;
			threads[i].count = i == producers - 1 ?
					   keys - threads[i].first : keys / producers;
		} else {
			fn = kwq_bench_consumer_fn;
		}
		tasks[i] = kthread_create(fn, &threads[i], "kwq_bench/%lu", i);
		if (IS_ERR(tasks[i])) {
			ret = PTR_ERR(tasks[i]);
			/* Never started: stopping them runs none of their work. */
			while (i--)
				kthread_stop(tasks[i]);
			goto out_queue;
		}
	}

	t0 = ktime_get();
	for (i = 0; i < n; i++)
		wake_up_process(tasks[i]);
	/* In slices, so that a long run never looks like a hung task. */
	while (!wait_for_completion_timeout(&run->all_done, 10 * HZ))
		;
	t1 = ktime_get();
	for (i = 0; i < n; i++)
		kthread_stop(tasks[i]);

	ret = atomic_read(&run->err);
	if (!ret && atomic_long_read(&run->consumed) != keys)
		ret = -EIO;
	ns = max_t(u64, ktime_to_ns(ktime_sub(t1, t0)), 1);
	rate = div64_u64((u64)keys * NSEC_PER_SEC, ns);
	if (ret)
		snprintf(kwq_bench_result, sizeof(kwq_bench_result), "error=%d\n", ret);
	else
		snprintf(kwq_bench_result, sizeof(kwq_bench_result),
			 "mode=%s%s keys=%lu producers=%u consumers=%u ns=%llu keys_per_s=%llu\n",
			 prio ? "priority-" : "", producers ? "pc" : "cycle", keys, producers,
			 consumers, ns, rate);
out_queue:
	kwq_destroy(run->q);
out_free:
	if (run)
		kvfree(run->key);
	kfree(threads);
	kfree(run);
	return ret;
}

/* The walks over every key of a queue of @keys keys, for kwq's longest hold. */
static int kwq_bench_hold_walks(struct kwq *q, char (*key)[KWQ_BENCH_KEY_LEN],
				unsigned long keys)
{
	char buf[KWQ_BENCH_KEY_LEN];
	struct kwq_stats st;
	unsigned long i;
	unsigned int ms;
	u32 len;
	int ret;

	for (i = 0; i < keys; i++) {
		ret = kwq_add_after(q, key[i], KWQ_BENCH_KEY_LEN, 50 * NSEC_PER_MSEC, 0);
		if (ret < 0)
			return ret;
	}
	for (ms = 0; kwq_len(q) < keys; ms += 20) {
		if (ms > 120000)
			return -ETIMEDOUT;
		msleep(20);
	}
	for (i = 0; i < keys; i++) {
		ret = kwq_get(q, buf, sizeof(buf), &len, KWQ_NOWAIT);
		if (ret)
			return ret;
	}
	kwq_stats(q, &st);
	if (st.processing != keys)
		return -EIO;
	for (i = 0; i < keys; i++) {
		ret = kwq_done(q, key[i], KWQ_BENCH_KEY_LEN);
		if (ret < 0)
			return ret;
	}
	for (i = 0; i < keys; i++) {
		ret = kwq_add_after(q, key[i], KWQ_BENCH_KEY_LEN, 3600 * NSEC_PER_SEC, 0);
		if (ret < 0)
			return ret;
	}
	kwq_shutdown(q);
	return 0;
}

static int kwq_bench_hold(unsigned long keys)
{
	char (*key)[KWQ_BENCH_KEY_LEN];
	unsigned long i;
	struct kwq *q;
	ktime_t t0;
	u64 ns;
	int ret;

	key = kvmalloc_array(keys, KWQ_BENCH_KEY_LEN, GFP_KERNEL);
	if (!key)
		return -ENOMEM;
	for (i = 0; i < keys; i++)
		kwq_bench_key(key[i], i);
	q = kwq_create(NULL, NULL);
	if (IS_ERR(q)) {
		kvfree(key);
		return PTR_ERR(q);
	}
	t0 = ktime_get();
	ret = kwq_bench_hold_walks(q, key, keys);
	ns = max_t(u64, ktime_to_ns(ktime_sub(ktime_get(), t0)), 1);
	if (ret)
		snprintf(kwq_bench_result, sizeof(kwq_bench_result), "error=%d\n", ret);
	else
		snprintf(kwq_bench_result, sizeof(kwq_bench_result),
			 "mode=hold keys=%lu ns=%llu keys_per_s=%llu\n", keys, ns,
			 div64_u64((u64)keys * NSEC_PER_SEC, ns));
	kwq_destroy(q);
	kvfree(key);
	return ret;
}

static ssize_t kwq_bench_write(struct file *file, const char __user *ubuf,
			       size_t count, loff_t *ppos)
{
	unsigned int p = 0, c = 0;
	unsigned long keys;
	size_t prio;
	char cmd[64];
	int ret;

	if (count >= sizeof(cmd))
		return -EINVAL;
	if (copy_from_user(cmd, ubuf, count))
		return -EFAULT;
	cmd[count] = '\0';
	if (sscanf(cmd, "hold %lu", &keys) == 1) {
		if (!keys || keys > KWQ_BENCH_MAX_KEYS)
			return -EINVAL;
		ret = mutex_lock_interruptible(&kwq_bench_lock);
		if (ret)
			return ret;
		ret = kwq_bench_hold(keys);
		mutex_unlock(&kwq_bench_lock);
		return ret ? ret : count;
	}
	prio = str_has_prefix(cmd, "prio-");
	if (sscanf(cmd + prio, "cycle %lu", &keys) == 1) {
		p = 0;
		c = 0;
	} else if (sscanf(cmd + prio, "pc %lu %u %u", &keys, &p, &c) != 3 || !p || !c ||
		   p + c > KWQ_BENCH_MAX_THREADS) {
		return -EINVAL;
	}
	if (!keys || keys > KWQ_BENCH_MAX_KEYS)
		return -EINVAL;

	ret = mutex_lock_interruptible(&kwq_bench_lock);
	if (ret)
		return ret;
	ret = kwq_bench_run(keys, p, c, prio != 0);
	mutex_unlock(&kwq_bench_lock);
	return ret ? ret : count;
}

static ssize_t kwq_bench_read(struct file *file, char __user *ubuf, size_t count,
			      loff_t *ppos)
{
	char buf[sizeof(kwq_bench_result)];
	ssize_t ret;

	mutex_lock(&kwq_bench_lock);
	strscpy(buf, kwq_bench_result, sizeof(buf));
	mutex_unlock(&kwq_bench_lock);
	ret = simple_read_from_buffer(ubuf, count, ppos, buf, strlen(buf));
	return ret;
}

static const struct file_operations kwq_bench_fops = {
	.owner = THIS_MODULE,
	.read = kwq_bench_read,
	.write = kwq_bench_write,
	.llseek = default_llseek,
};

static int __init kwq_bench_init(void)
{
	kwq_bench_dir = debugfs_create_dir("kwq_bench", NULL);
	debugfs_create_file("run", 0600, kwq_bench_dir, NULL, &kwq_bench_fops);
	return 0;
}

static void __exit kwq_bench_exit(void)
{
	debugfs_remove_recursive(kwq_bench_dir);
}

module_init(kwq_bench_init);
module_exit(kwq_bench_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("kwq benchmark: the exported API driven from kernel threads");
MODULE_AUTHOR("The kwq authors");
