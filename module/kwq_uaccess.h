/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copying keys between user memory and a kernel buffer of KWQ_KEY_MAX
 * bytes, the hottest copies of /dev/kwq: every add and done copies a key
 * in, every get copies one out.
 *
 * copy_from_user() and copy_to_user() with a length only known at run
 * time pass through hardened usercopy, which looks up what object the
 * kernel buffer belongs to (__check_object_size(), check_stack_object()):
 * the benchmarks counted about 100 instructions per copy, more than the
 * copy of a 32-byte key itself. Here the length is checked against the
 * buffer's size by the caller, so the copy runs as a short loop of
 * unsafe_get_user()/unsafe_put_user() between user_access_begin() and
 * user_access_end(), as strncpy_from_user() does. Where unaligned loads
 * are slow, or on kernels without these helpers, the plain copies are
 * used.
 */
#ifndef _KWQ_UACCESS_H
#define _KWQ_UACCESS_H

#include <linux/build_bug.h>
#include <linux/fs.h>
#include <linux/kernel.h>
#include <linux/ktime.h>
#include <linux/nsproxy.h>
#include <linux/sched.h>
#include <linux/time_namespace.h>
#include <linux/uaccess.h>
#include "kwq_compat.h"

#include "kwq.h"

#if defined(CONFIG_X86_64) || defined(CONFIG_ARM64)
#define KWQ_WORD_COPY	1
#else
#define KWQ_WORD_COPY	0
#endif

/*
 * The copies themselves. The caller bounds @len by its kernel buffer (a
 * key buffer of KWQ_KEY_MAX bytes, or an ioctl struct of constant size).
 * kwq_copy_in_open() is kwq_copy_in()'s loop, inside a user access window
 * its caller opened.
 */
static __always_inline int kwq_copy_in_open(void *dst, const void __user *src, size_t len)
{
	const u8 __user *s = src;
	u8 *d = dst;

	for (; len >= sizeof(u64); len -= sizeof(u64), s += sizeof(u64), d += sizeof(u64)) {
		u64 w;

		unsafe_get_user(w, (const u64 __user *)s, fault);
		put_unaligned(w, (u64 *)d);
	}
	for (; len; len--, s++, d++)
		unsafe_get_user(*d, s, fault);
	return 0;
fault:
	return -EFAULT;
}

static __always_inline int kwq_copy_in(void *dst, const void __user *src, size_t len)
{
	int ret;

	if (!KWQ_WORD_COPY)
		return copy_from_user(dst, src, len) ? -EFAULT : 0;
	if (!user_access_begin(src, len))
		return -EFAULT;
	ret = kwq_copy_in_open(dst, src, len);
	user_access_end();
	return ret;
}

/* The largest ioctl struct kwq_struct_in() reads, in words. */
#define KWQ_STRUCT_WORDS_MAX	10

/* Word @i of kwq_struct_in(), if the struct has it; false on a fault. */
static __always_inline bool kwq_struct_word(u64 *d, const u64 __user *s, size_t i, size_t n)
{
	u64 w;

	if (i >= n)
		return true;
	unsafe_get_user(w, &s[i], fault);
	put_unaligned(w, d + i);
	return true;
fault:
	return false;
}

/**
 * kwq_struct_in() - read an ioctl struct from user memory
 * @dst: the kernel's struct.
 * @src: the user address of the struct.
 * @size: sizeof the struct: a constant multiple of 8, up to
 *	KWQ_STRUCT_WORDS_MAX words.
 *
 * gcc kept kwq_copy_in()'s loop for such a copy (30 instructions for 40
 * bytes), and no compiler unrolls a loop of unsafe_get_user() (an asm
 * goto): the words are spelled out, those past @size dropped at compile
 * time.
 *
 * Return: 0, or -EFAULT.
 */
static __always_inline int kwq_struct_in(void *dst, const void __user *src, size_t size)
{
	const size_t n = size / sizeof(u64);
	const u64 __user *s = src;
	u64 *d = dst;
	bool ok;

	BUILD_BUG_ON(!__builtin_constant_p(size) || size % sizeof(u64) ||
		     n > KWQ_STRUCT_WORDS_MAX);
	might_fault();
	if (!KWQ_WORD_COPY)
		return copy_from_user(dst, src, size) ? -EFAULT : 0;
	if (!user_access_begin(src, size))
		return -EFAULT;
	ok = kwq_struct_word(d, s, 0, n) && kwq_struct_word(d, s, 1, n) &&
	     kwq_struct_word(d, s, 2, n) && kwq_struct_word(d, s, 3, n) &&
	     kwq_struct_word(d, s, 4, n) && kwq_struct_word(d, s, 5, n) &&
	     kwq_struct_word(d, s, 6, n) && kwq_struct_word(d, s, 7, n) &&
	     kwq_struct_word(d, s, 8, n) && kwq_struct_word(d, s, 9, n);
	user_access_end();
	return ok ? 0 : -EFAULT;
}

static __always_inline int kwq_copy_out(void __user *dst, const void *src, size_t len)
{
	const u8 *s = src;
	u8 __user *d = dst;

	if (!KWQ_WORD_COPY)
		return copy_to_user(dst, src, len) ? -EFAULT : 0;
	if (!user_access_begin(d, len))
		return -EFAULT;
	for (; len >= sizeof(u64); len -= sizeof(u64), d += sizeof(u64), s += sizeof(u64))
		unsafe_put_user(get_unaligned((const u64 *)s), (u64 __user *)d, fault);
	for (; len; len--, d++, s++)
		unsafe_put_user(*s, d, fault);
	user_access_end();
	return 0;
fault:
	user_access_end();
	return -EFAULT;
}

/**
 * kwq_key_copy_in() - copy a key from user memory
 * @dst: a buffer of KWQ_KEY_MAX bytes.
 * @src: the user address of the key.
 * @len: the key's length, at most KWQ_KEY_MAX (checked by the caller).
 *
 * Return: 0, or -EFAULT (@dst then holds an unspecified part of the key).
 */
static __always_inline int kwq_key_copy_in(u8 *dst, const void __user *src, u32 len)
{
	if (WARN_ON_ONCE(len > KWQ_KEY_MAX))
		return -EINVAL;
	return kwq_copy_in(dst, src, len);
}

/**
 * kwq_key_copy_out() - copy a key to user memory
 * @dst: the user address to copy to.
 * @src: the key.
 * @len: the key's length, at most KWQ_KEY_MAX (checked by the caller).
 *
 * Return: 0, or -EFAULT.
 */
static __always_inline int kwq_key_copy_out(void __user *dst, const u8 *src, u32 len)
{
	if (WARN_ON_ONCE(len > KWQ_KEY_MAX))
		return -EINVAL;
	return kwq_copy_out(dst, src, len);
}

/**
 * kwq_put_report() - write a call's u32 report to user memory
 * @report: its user address.
 * @v: the value.
 *
 * put_user() without its call: the report of every single-key command.
 *
 * Return: 0, or -EFAULT.
 */
static __always_inline int kwq_put_report(u32 __user *report, u32 v)
{
	might_fault();
	if (!user_access_begin(report, sizeof(*report)))
		return -EFAULT;
	unsafe_put_user(v, report, fault);
	user_access_end();
	return 0;
fault:
	user_access_end();
	return -EFAULT;
}

/**
 * kwq_probe_writable() - whether user memory can be written, changing nothing
 * @p: the user address.
 * @len: bytes from @p; 0 checks nothing.
 *
 * Rewrites the first and the last byte unchanged, and past a page's
 * length one byte of each page between them, in one user access window
 * (a get_user() and a put_user() each took a call and a window of their
 * own): a call that must not fail after it acted probes its output this
 * way first. Every page counts: a buffer may have a read-only page in its
 * middle. Callers bound @len (a key, a payload of at most 64 KiB: at most
 * 17 pages).
 *
 * Return: 0, or -EFAULT.
 */
static __always_inline int kwq_probe_writable(void __user *p, size_t len)
{
	u8 __user *b = p;
	u8 __user *last;
	u8 v;

	if (!len)
		return 0;
	if (!user_access_begin(b, len))
		return -EFAULT;
	last = b + len - 1;
	unsafe_get_user(v, b, fault);
	unsafe_put_user(v, b, fault);
	/* Up to a page's length the two ends cover every page touched. */
	if (unlikely(len > PAGE_SIZE)) {
		for (b += PAGE_SIZE - ((__force unsigned long)b & ~PAGE_MASK); b < last;
		     b += PAGE_SIZE) {
			unsafe_get_user(v, b, fault);
			unsafe_put_user(v, b, fault);
		}
	}
	unsafe_get_user(v, last, fault);
	unsafe_put_user(v, last, fault);
	user_access_end();
	return 0;
fault:
	user_access_end();
	return -EFAULT;
}

/**
 * kwq_timens_to_host() - a CLOCK_MONOTONIC time of the caller's time
 *	namespace as the host's
 * @tim: the time as the caller reads its monotonic clock, 0..KTIME_MAX.
 *
 * What timens_ktime_to_host() does for timerfd and clock_nanosleep(),
 * which modules cannot call (do_timens_ktime_to_host() is not exported):
 * a namespace's clock reads the host's plus its offset, so the host's
 * time is @tim less the offset. A time before the offset (possible only
 * with a positive one) has passed already: 1 ns, not 0, which would be
 * KWQ_NOWAIT. A time beyond KTIME_MAX after the subtraction (a negative
 * offset) is never reached: KTIME_MAX, KWQ_FOREVER.
 *
 * Return: the host's CLOCK_MONOTONIC time.
 */
static inline ktime_t kwq_timens_to_host(ktime_t tim)
{
#ifdef CONFIG_TIME_NS
	ktime_t offset = timespec64_to_ktime(current->nsproxy->time_ns->offsets.monotonic);

	if (likely(!offset))
		return tim;
	if (offset > 0)
		return tim > offset ? tim - offset : 1;
	/* offset < 0: KTIME_MAX + offset cannot overflow, tim - offset can. */
	return tim >= KTIME_MAX + offset ? KTIME_MAX : tim - offset;
#else
	return tim;
#endif
}

/**
 * kwq_deadline_from() - the deadline of a call from user space
 * @deadline_ns: the call's absolute CLOCK_MONOTONIC deadline, as the
 *	caller's time namespace reads that clock, or KWQ_DEADLINE_NOWAIT.
 * @file: the /dev/kwq file (O_NONBLOCK never waits).
 *
 * Return: a deadline for kwq_get() or kwq_shutdown_drain(), in the host's
 * CLOCK_MONOTONIC (kwq_timens_to_host()).
 */
static inline ktime_t kwq_deadline_from(u64 deadline_ns, const struct file *file)
{
	if (deadline_ns == KWQ_DEADLINE_NOWAIT || (file->f_flags & O_NONBLOCK))
		return KWQ_NOWAIT;
	if (deadline_ns >= (u64)KTIME_MAX)
		return KWQ_FOREVER;
	return kwq_timens_to_host(ns_to_ktime(deadline_ns));
}

/**
 * kwq_key_from() - copy in a key from user memory
 * @key: a buffer with room for @len bytes (a key buffer, or a batch chunk).
 * @ptr: the user address of the key.
 * @len: its length.
 *
 * Return: 0, -EINVAL for a length out of 1..KWQ_KEY_MAX, -EFAULT.
 */
static inline int kwq_key_from(u8 *key, u64 ptr, u32 len)
{
	if (len < 1 || len > KWQ_KEY_MAX)
		return -EINVAL;
	return kwq_key_copy_in(key, u64_to_user_ptr(ptr), len);
}

/**
 * kwq_key_from_report() - copy in a key, then zero a call's report
 * @key: a buffer of KWQ_KEY_MAX bytes.
 * @ptr: the user address of the key.
 * @len: its length.
 * @report: the user address of the call's u32 report.
 *
 * kwq_key_from(), then a write of 0 to @report, so that the call faults
 * on its report before it changes anything: one user access window for
 * both (the two took a copy, a put_user() and two windows). The report
 * is written only once the key was read whole.
 *
 * Return: 0, -EINVAL for a length out of 1..KWQ_KEY_MAX, -EFAULT.
 */
static __always_inline int kwq_key_from_report(u8 *key, u64 ptr, u32 len, u32 __user *report)
{
	const void __user *src = u64_to_user_ptr(ptr);

	if (len < 1 || len > KWQ_KEY_MAX)
		return -EINVAL;
	if (!KWQ_WORD_COPY)
		return kwq_copy_in(key, src, len) ?: put_user(0U, report);
	might_fault();
	/*
	 * The window opened for the key also covers @report, checked alone:
	 * where KWQ_WORD_COPY is set (x86-64, arm64) a window is not tied to
	 * the range it was opened for.
	 */
	if (!access_ok(report, sizeof(*report)) || !user_access_begin(src, len))
		return -EFAULT;
	if (kwq_copy_in_open(key, src, len))
		goto fault;
	unsafe_put_user(0U, report, fault);
	user_access_end();
	return 0;
fault:
	user_access_end();
	return -EFAULT;
}

#endif /* _KWQ_UACCESS_H */
