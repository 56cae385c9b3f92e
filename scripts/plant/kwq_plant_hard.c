// SPDX-License-Identifier: GPL-2.0
/*
 * kwq_plant_hard: drives the path a queue's timer takes when a deadline
 * comes with a consumer asleep, for scripts/plant.sh's "hard" plant only,
 * which loads it beside a kwq.ko whose timer was planted back to
 * HRTIMER_MODE_ABS_HARD. Its callback then wakes kwq.get_wait, a
 * spinlock_t, in hard interrupt context: lockdep with raw-lock nesting
 * must report "Invalid wait context". The module itself does nothing
 * wrong (with kwq's own timer mode it runs clean).
 */

#include <linux/err.h>
#include <linux/ktime.h>
#include <linux/module.h>

#include "kwq.h"

static int __init kwq_plant_init(void)
{
	char buf[16];
	struct kwq *q;
	u32 len = 0;
	int ret;

	q = kwq_create(NULL, NULL);
	if (IS_ERR(q))
		return PTR_ERR(q);
	/* Long enough for the consumer to be asleep, even under KASAN and TCG. */
	ret = kwq_add_after(q, "planted", 7, 500 * NSEC_PER_MSEC, 0);
	if (ret >= 0)
		ret = kwq_get(q, buf, sizeof(buf), &len, ktime_add_ms(ktime_get(), 5000));
	kwq_destroy(q);
	pr_info("kwq_plant_hard: a delayed key got by a sleeping consumer: %d\n", ret);
	return 0;
}

static void __exit kwq_plant_exit(void)
{
}

module_init(kwq_plant_init);
module_exit(kwq_plant_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("kwq test plant: a deadline that wakes a sleeping consumer");
