// SPDX-License-Identifier: GPL-2.0
/*
 * kwq: deduplicating work queues with client-go's semantics, in the
 * kernel, for kernel modules and for user programs through /dev/kwq.
 */

#include <linux/module.h>
#include <linux/kernel.h>
#include <linux/kstrtox.h>
#include <linux/moduleparam.h>

#include "kwq_internal.h"
#include "kwq_payload.h"
#include "kwq_scope.h"
#include "kwq_user.h"

/*
 * The limits, writable under /sys/module/kwq/parameters by root. Each
 * takes a decimal (or 0x hex) number in its range; anything else fails
 * the write (or the insmod) with -EINVAL and leaves the value as it was.
 * Documentation/kwq-limits.rst says when each applies: max_queues,
 * max_queues_per_ns, kernel_reserve_queues, max_queues_per_user and
 * max_key_bytes_per_user at every create or add,
 * max_items_per_queue and max_backoff_keys to queues created after.
 */
struct kwq_param_range {
	void *val;		/* unsigned int, or u64 for the byte limit */
	u64 min;
	u64 max;
};

static int kwq_param_parse(const char *s, const struct kwq_param_range *r, u64 *v)
{
	/* Not a number, or too big for u64: -EINVAL like out of range. */
	if (kstrtou64(s, 0, v) || *v < r->min || *v > r->max)
		return -EINVAL;
	return 0;
}

static int kwq_param_set_uint(const char *s, const struct kernel_param *kp)
{
	const struct kwq_param_range *r = kp->arg;
	u64 v;
	int ret = kwq_param_parse(s, r, &v);

	if (!ret)
		WRITE_ONCE(*(unsigned int *)r->val, v);
	return ret;
}

static int kwq_param_get_uint(char *buf, const struct kernel_param *kp)
{
	const struct kwq_param_range *r = kp->arg;

	return scnprintf(buf, PAGE_SIZE, "%u\n", READ_ONCE(*(unsigned int *)r->val));
}

static int kwq_param_set_u64(const char *s, const struct kernel_param *kp)
{
	const struct kwq_param_range *r = kp->arg;
	u64 v;
	int ret = kwq_param_parse(s, r, &v);

	if (!ret)
		WRITE_ONCE(*(u64 *)r->val, v);
	return ret;
}

static int kwq_param_get_u64(char *buf, const struct kernel_param *kp)
{
	const struct kwq_param_range *r = kp->arg;

	return scnprintf(buf, PAGE_SIZE, "%llu\n", READ_ONCE(*(u64 *)r->val));
}

static const struct kernel_param_ops kwq_param_uint_ops = {
	.set = kwq_param_set_uint,
	.get = kwq_param_get_uint,
};

static const struct kernel_param_ops kwq_param_u64_ops = {
	.set = kwq_param_set_u64,
	.get = kwq_param_get_u64,
};

#define KWQ_PARAM(name, var, ops, lo, hi)					\
	static struct kwq_param_range kwq_param_##name = { &(var), lo, hi };	\
	module_param_cb(name, &(ops), &kwq_param_##name, 0644)

unsigned int kwq_max_queues = 256;
KWQ_PARAM(max_queues, kwq_max_queues, kwq_param_uint_ops, 1, 65536);
MODULE_PARM_DESC(max_queues,
		 "Most named queues at once, 1..65536 (default 256); checked at each create");

unsigned int kwq_max_queues_per_user = 64;
KWQ_PARAM(max_queues_per_user, kwq_max_queues_per_user, kwq_param_uint_ops, 0, 65536);
MODULE_PARM_DESC(max_queues_per_user,
		 "Most named queues one user may own, unless created through a descriptor whose opener had CAP_SYS_RESOURCE, 0..65536 (default 64); checked at each create");

unsigned int kwq_max_queues_per_ns = 256;
KWQ_PARAM(max_queues_per_ns, kwq_max_queues_per_ns, kwq_param_uint_ops, 1, 65536);
MODULE_PARM_DESC(max_queues_per_ns,
		 "Most named queues one IPC namespace may hold, and the highest limit its owner may set (KWQ_IOC_SCOPE_LIMITS), 1..65536 (default 256); checked at each create, except through a descriptor whose opener had CAP_SYS_RESOURCE");

unsigned int kwq_kernel_reserve_queues = 32;
KWQ_PARAM(kernel_reserve_queues, kwq_kernel_reserve_queues, kwq_param_uint_ops, 0, 65536);
MODULE_PARM_DESC(kernel_reserve_queues,
		 "Named queues of max_queues that only kernel modules, and creates through a descriptor whose opener had CAP_SYS_RESOURCE, may take, 0..65536 (default 32); checked at each create");

unsigned int kwq_max_items_per_queue = 1U << 16;
KWQ_PARAM(max_items_per_queue, kwq_max_items_per_queue, kwq_param_uint_ops, 1, 1U << 24);
MODULE_PARM_DESC(max_items_per_queue,
		 "Most keys one queue tracks at once, 1..16777216 (default 65536); for queues created after a change");

unsigned int kwq_max_backoff_keys = 4096;
KWQ_PARAM(max_backoff_keys, kwq_max_backoff_keys, kwq_param_uint_ops, 0, 1U << 24);
MODULE_PARM_DESC(max_backoff_keys,
		 "Most keys per queue kept only for their failure count; the least recently active are forgotten first, 0..16777216 (default 4096); for queues created after a change");

u64 kwq_max_key_bytes_per_user = 64ULL << 20;
KWQ_PARAM(max_key_bytes_per_user, kwq_max_key_bytes_per_user, kwq_param_u64_ops, 0,
	  1ULL << 40);
MODULE_PARM_DESC(max_key_bytes_per_user,
		 "Most bytes the key records and payloads of one user's queues may take, each at its allocated size, 0 (no limit)..1099511627776 (default 67108864); checked at each add of a new key or a larger payload; queues created through a descriptor whose opener had CAP_SYS_RESOURCE are exempt");

unsigned int kwq_max_payload = 4096;
KWQ_PARAM(max_payload, kwq_max_payload, kwq_param_uint_ops, 0, KWQ_PAYLOAD_LIMIT);
MODULE_PARM_DESC(max_payload,
		 "Largest payload_max a queue may be created with, bytes, 0 (no payload queues)..65536 (default 4096); checked at each create");

static int __init kwq_init(void)
{
	int ret = kwq_core_init();

	if (ret)
		return ret;
	kwq_debugfs_init();
	kwq_scope_reap_start();
	ret = kwq_dev_init();
	if (ret) {
		kwq_scope_reap_stop();
		kwq_debugfs_exit();
		kwq_core_exit();
	}
	return ret;
}

static void __exit kwq_exit(void)
{
	kwq_dev_exit();
	kwq_scope_reap_stop();
	kwq_registry_kill_all();
	kwq_debugfs_exit();
	kwq_core_exit();
}

module_init(kwq_init);
module_exit(kwq_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("kwq: deduplicating work queues with client-go semantics");
MODULE_AUTHOR("The kwq authors");
