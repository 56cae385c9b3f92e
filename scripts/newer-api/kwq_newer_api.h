/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Compile-only stand-ins for kernel APIs newer than the 6.12 tree that
 * kwq's LINUX_VERSION_CODE >= 6.13 branches use, force-included by
 * scripts/lint.sh with linux/version.h beside this file claiming 6.18.0.
 * Each declaration copies the newer kernel's signature, so a call that
 * type-checks here type-checks there; what these do at run time is not
 * tested (no module built with them is ever loaded). The old names the
 * newer kernels removed are poisoned, so the old branches cannot compile.
 */
#ifndef _KWQ_NEWER_API_H
#define _KWQ_NEWER_API_H

#include <linux/version.h>
#include <linux/hrtimer.h>
#include <linux/workqueue.h>

#if KERNEL_VERSION(6, 18, 0) != LINUX_VERSION_CODE
#error "scripts/newer-api/linux/version.h was not the one included"
#endif

/* 6.13, include/linux/hrtimer.h (hrtimer_init() was removed in 6.15) */
static inline void hrtimer_setup(struct hrtimer *timer,
				 enum hrtimer_restart (*function)(struct hrtimer *),
				 clockid_t clock_id, enum hrtimer_mode mode)
{
	hrtimer_init(timer, clock_id, mode);
	timer->function = function;
}

/*
 * 6.17, include/linux/workqueue.h: extern struct workqueue_struct
 * *system_dfl_wq, the new name of system_unbound_wq.
 */
#define system_dfl_wq system_unbound_wq

/*
 * 6.18, include/linux/ns_common.h: struct ns_common's count became
 * __ns_ref, read through ns_ref_read().
 */
#define ns_ref_read(__ns) refcount_read(&(__ns)->ns.count)

#pragma GCC poison hrtimer_init system_unbound_wq

#endif /* _KWQ_NEWER_API_H */
