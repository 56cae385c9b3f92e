/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kwq compatibility shims for kernel API changes after 6.1.
 */
#ifndef _KWQ_COMPAT_H
#define _KWQ_COMPAT_H

#include <linux/hrtimer.h>
#include <linux/version.h>

/* hrtimer_setup() arrived in 6.13; hrtimer_init() was removed in 6.15. */
static inline void kwq_hrtimer_setup(struct hrtimer *timer,
				     enum hrtimer_restart (*fn)(struct hrtimer *),
				     clockid_t clock, enum hrtimer_mode mode)
{
#if KERNEL_VERSION(6, 13, 0) <= LINUX_VERSION_CODE
	hrtimer_setup(timer, fn, clock, mode);
#else
	hrtimer_init(timer, clock, mode);
	timer->function = fn;
#endif
}

#endif /* _KWQ_COMPAT_H */
