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

unsigned int kwq_max_items_per_queue = 1U << 16;
module_param_named(max_items_per_queue, kwq_max_items_per_queue, uint, 0644);
MODULE_PARM_DESC(max_items_per_queue,
		 "Most keys one queue tracks at once (default 65536)");

static int __init kwq_init(void)
{
	return kwq_dev_init();
}

static void __exit kwq_exit(void)
{
	kwq_dev_exit();
	kwq_registry_kill_all();
}

module_init(kwq_init);
module_exit(kwq_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("kwq: deduplicating work queues with client-go semantics");
MODULE_AUTHOR("The kwq authors");
