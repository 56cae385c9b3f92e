/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kwq on every kernel from 6.1 on: one branch per upstream API change,
 * each naming the release that made it. make check compiles both sides
 * of every branch: 6.1 and 6.12 take the old ones, the current stable
 * kernel (Debian sid's) the new ones.
 */
#ifndef _KWQ_COMPAT_H
#define _KWQ_COMPAT_H

#include <linux/hrtimer.h>
#include <linux/ipc_namespace.h>
#include <linux/refcount.h>
#include <linux/version.h>
#include <linux/workqueue.h>

/*
 * 6.12 moved <asm/unaligned.h> to <linux/unaligned.h> ("move
 * asm/unaligned.h to linux/unaligned.h") and removed the old header.
 */
#if KERNEL_VERSION(6, 12, 0) <= LINUX_VERSION_CODE
#include <linux/unaligned.h>
#else
#include <asm/unaligned.h>
#endif

/*
 * 6.13 added hrtimer_setup() ("hrtimers: Introduce hrtimer_setup() to
 * replace hrtimer_init()"); 6.15 removed hrtimer_init().
 */
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

/*
 * 6.17 named the unbound system workqueue system_dfl_wq ("workqueue: Add
 * system_percpu_wq and system_dfl_wq"); system_unbound_wq is deprecated.
 */
#if KERNEL_VERSION(6, 17, 0) <= LINUX_VERSION_CODE
#define kwq_unbound_wq	system_dfl_wq
#else
#define kwq_unbound_wq	system_unbound_wq
#endif

/**
 * kwq_ipc_ns_refs() - the references an IPC namespace has now
 * @ns: the namespace.
 *
 * 6.18 renamed struct ns_common's count to __ns_ref, read through
 * ns_ref_read() ("ns: rename to __ns_ref"); 6.1 to 6.17 keep refcount_t
 * ns.count.
 *
 * Context: any; the caller holds a reference.
 * Return: the count, the caller's reference included.
 */
static inline unsigned int kwq_ipc_ns_refs(struct ipc_namespace *ns)
{
#if KERNEL_VERSION(6, 18, 0) <= LINUX_VERSION_CODE
	return ns_ref_read(ns);
#else
	return refcount_read(&ns->ns.count);
#endif
}

/*
 * 6.18 passes the test to a parameterised case's generator ("kunit: Pass
 * parameterized test context to generate_params()"). Declares one.
 */
struct kunit;
#if KERNEL_VERSION(6, 18, 0) <= LINUX_VERSION_CODE
#define KWQ_KUNIT_PARAMS_GEN(name) \
	const void *(name)(struct kunit *test, const void *prev, char *desc)
#else
#define KWQ_KUNIT_PARAMS_GEN(name) const void *(name)(const void *prev, char *desc)
#endif

/*
 * 7.0 replaced sparse's lock contexts with the compiler's context
 * analysis ("compiler-context-analysis: Add infrastructure for Context
 * Analysis with Clang"): __cond_acquires() takes first the return value
 * that means the lock was taken.
 */
#if KERNEL_VERSION(7, 0, 0) <= LINUX_VERSION_CODE
#define kwq_cond_acquires(lock)	__cond_acquires(true, lock)
#else
#define kwq_cond_acquires(lock)	__cond_acquires(lock)
#endif

#endif /* _KWQ_COMPAT_H */
