// SPDX-License-Identifier: GPL-2.0
/*
 * kwq_plant_irq: a call from a context kwq rules out, planted to prove
 * that kwq's own assertion catches it (see scripts/plant.sh). Never load
 * it anywhere else.
 *
 * kwq_add_atomic() may be called with a spinlock_t held but never with
 * interrupts disabled: it ends in spin_unlock_bh(). Here it runs under
 * spin_lock_irqsave(); kwq_lock() asserts lockdep_assert_irqs_enabled(),
 * so a kernel with lockdep prints a WARNING at kwq_internal.h.
 */

#include <linux/err.h>
#include <linux/module.h>
#include <linux/spinlock.h>

#include "kwq.h"

static DEFINE_SPINLOCK(kwq_plant_lock);

static int __init kwq_plant_init(void)
{
	unsigned long flags;
	struct kwq *q;
	int ret;

	q = kwq_create(NULL, NULL);
	if (IS_ERR(q))
		return PTR_ERR(q);
	spin_lock_irqsave(&kwq_plant_lock, flags);
	ret = kwq_add_atomic(q, "planted", 7);
	spin_unlock_irqrestore(&kwq_plant_lock, flags);
	kwq_destroy(q);
	pr_info("kwq_plant_irq: kwq_add_atomic() with interrupts off returned %d\n", ret);
	return 0;
}

static void __exit kwq_plant_exit(void)
{
}

module_init(kwq_plant_init);
module_exit(kwq_plant_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("kwq test plant: kwq_add_atomic() with interrupts disabled");
