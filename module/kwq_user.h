/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Per-user totals of key-record bytes: what keeps one user from pinning
 * gigabytes of kernel memory in queues that outlive its processes, as
 * RLIMIT_MSGQUEUE does for POSIX message queues. Each user (the kuid that
 * owns a queue) has one struct kwq_user while it owns a queue that
 * counts; the queues' key tables charge and uncharge it
 * (kwq_table_charge()), and adds that would take the total past
 * max_key_bytes_per_user fail. See Documentation/kwq-limits.rst.
 */
#ifndef _KWQ_USER_H
#define _KWQ_USER_H

#include <linux/atomic.h>
#include <linux/bug.h>
#include <linux/types.h>
#include <linux/uidgid.h>

/**
 * struct kwq_user - the key-record bytes of one user's queues
 * @node: link in kwq_users.
 * @uid: the user.
 * @refs: queues that count towards @bytes; under kwq_users_lock.
 * @bytes: bytes charged by those queues' key tables.
 */
struct kwq_user {
	struct hlist_node node;
	kuid_t uid;
	unsigned int refs;
	atomic64_t bytes;
};

/* Module parameter (kwq_main.c): 0 means no limit. */
extern u64 kwq_max_key_bytes_per_user;

struct kwq_user *kwq_user_get(kuid_t uid);
void kwq_user_put(struct kwq_user *u);

/**
 * kwq_user_charge() - count bytes against a user, if they fit
 * @u: the user's totals.
 * @bytes: bytes to add.
 * @limited: whether max_key_bytes_per_user applies.
 *
 * Context: any.
 * Return: true if charged; false, with nothing changed, if the total
 * would pass max_key_bytes_per_user (non-zero) and @limited is set.
 */
static inline bool kwq_user_charge(struct kwq_user *u, u64 bytes, bool limited)
{
	u64 max = READ_ONCE(kwq_max_key_bytes_per_user);
	s64 old = atomic64_read(&u->bytes);

	do {
		if (limited && max && (u64)old + bytes > max)
			return false;
	} while (!atomic64_try_cmpxchg(&u->bytes, &old, old + bytes));
	return true;
}

/**
 * kwq_user_uncharge() - give back bytes from kwq_user_charge()
 * @u: the user's totals.
 * @bytes: bytes charged before.
 *
 * Context: any.
 */
static inline void kwq_user_uncharge(struct kwq_user *u, u64 bytes)
{
	WARN_ON_ONCE(atomic64_sub_return(bytes, &u->bytes) < 0);
}

#endif /* _KWQ_USER_H */
