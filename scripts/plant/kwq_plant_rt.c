// SPDX-License-Identifier: GPL-2.0
/*
 * kwq_plant_rt: a lock nesting that is wrong only under PREEMPT_RT, planted
 * to prove that the PREEMPT_RT debug kernel's checkers catch it (see
 * scripts/plant.sh). Never load it anywhere else.
 *
 * kwq_add_atomic() takes the queue's spinlock_t. On PREEMPT_RT a spinlock_t
 * is a sleeping lock, so taking it inside a raw_spinlock_t section is a
 * bug: lockdep with PROVE_RAW_LOCK_NESTING reports "Invalid wait context"
 * (on any kernel with that option) and DEBUG_ATOMIC_SLEEP reports
 * "sleeping function called from invalid context" (on PREEMPT_RT). On a
 * kernel without those checks the module loads silently.
 */

#include <linux/err.h>
#include <linux/module.h>
#include <linux/spinlock.h>

#include "kwq.h"

static DEFINE_RAW_SPINLOCK(kwq_plant_lock);

static int __init kwq_plant_init(void)
{
	struct kwq *q;
	int ret;

	q = kwq_create(NULL, NULL);
	if (IS_ERR(q))
		return PTR_ERR(q);
	raw_spin_lock(&kwq_plant_lock);
	ret = kwq_add_atomic(q, "planted", 7);
	raw_spin_unlock(&kwq_plant_lock);
	kwq_destroy(q);
	pr_info("kwq_plant_rt: kwq_add_atomic() under a raw spinlock returned %d\n", ret);
	return 0;
}

static void __exit kwq_plant_exit(void)
{
}

module_init(kwq_plant_init);
module_exit(kwq_plant_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("kwq test plant: spinlock_t inside raw_spinlock_t (wrong on PREEMPT_RT)");
