// SPDX-License-Identifier: GPL-2.0
/*
 * kwq: deduplicating work queues with client-go's semantics, in the
 * kernel, for kernel modules and for user programs through /dev/kwq.
 */

#include <linux/module.h>
#include <linux/moduleparam.h>

#include "kwq_internal.h"

unsigned int kwq_max_queues = 256;
module_param_named(max_queues, kwq_max_queues, uint, 0644);
MODULE_PARM_DESC(max_queues, "Most named queues at once (default 256)");

unsigned int kwq_max_queues_per_user = 64;
module_param_named(max_queues_per_user, kwq_max_queues_per_user, uint, 0644);
MODULE_PARM_DESC(max_queues_per_user,
		 "Most named queues one user may own without CAP_SYS_RESOURCE (default 64)");

unsigned int kwq_max_items_per_queue = 1U << 16;
module_param_named(max_items_per_queue, kwq_max_items_per_queue, uint, 0644);
MODULE_PARM_DESC(max_items_per_queue,
		 "Most keys one queue tracks at once (default 65536)");

unsigned int kwq_max_backoff_keys = 4096;
module_param_named(max_backoff_keys, kwq_max_backoff_keys, uint, 0644);
MODULE_PARM_DESC(max_backoff_keys,
		 "Most keys per queue kept only for their failure count; the least recently active are forgotten first (default 4096)");

static int __init kwq_init(void)
{
	int ret = kwq_core_init();

	if (ret)
		return ret;
	kwq_debugfs_init();
	ret = kwq_dev_init();
	if (ret) {
		kwq_debugfs_exit();
		kwq_core_exit();
	}
	return ret;
}

static void __exit kwq_exit(void)
{
	kwq_dev_exit();
	kwq_registry_kill_all();
	kwq_debugfs_exit();
	kwq_core_exit();
}

module_init(kwq_init);
module_exit(kwq_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("kwq: deduplicating work queues with client-go semantics");
MODULE_AUTHOR("The kwq authors");
