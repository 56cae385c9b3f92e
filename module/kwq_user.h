/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Per-user totals of key-record bytes and of named queues: what keeps one
 * user from pinning gigabytes of kernel memory in queues that outlive its
 * processes, as RLIMIT_MSGQUEUE does for POSIX message queues. Each user
 * (the kuid that owns a queue, as seen from the user namespace of the
 * queue's creator) has one struct kwq_user while it owns a queue that
 * counts; the queues' key tables charge and uncharge it
 * (kwq_table_charge()), and adds that would take the total past
 * max_key_bytes_per_user fail.
 *
 * As the kernel's ucounts charge RLIMIT_MSGQUEUE, every charge also goes
 * to the owner of each user namespace above the user's, up to the initial
 * one: a user who maps subordinate uids into a namespace of its own has
 * their queues and bytes counted against its own limits as well, so they
 * add nothing to what it may hold. See Documentation/kwq-limits.rst.
 */
#ifndef _KWQ_USER_H
#define _KWQ_USER_H

#include <linux/atomic.h>
#include <linux/bug.h>
#include <linux/types.h>
#include <linux/uidgid.h>

struct user_namespace;

/**
 * struct kwq_user - the key-record bytes and queues of one user
 * @node: link in kwq_users.
 * @ns: the user namespace @uid was charged in (a reference).
 * @uid: the user.
 * @parent: the owner of @ns, in the parent of @ns (a reference), who is
 *	charged whatever @uid is; NULL in the initial user namespace.
 * @refs: queues that count towards @bytes and children whose @parent
 *	this is; under kwq_users_lock.
 * @queues: named queues of this user and of every user below it.
 * @bytes: bytes charged by those queues' key tables.
 */
struct kwq_user {
	struct hlist_node node;
	struct user_namespace *ns;
	kuid_t uid;
	struct kwq_user *parent;
	unsigned int refs;
	atomic_t queues;
	atomic64_t bytes;
};

/* Module parameters (kwq_main.c): 0 means no limit for the bytes. */
extern u64 kwq_max_key_bytes_per_user;
extern unsigned int kwq_max_queues_per_user;

struct kwq_user *kwq_user_get(struct user_namespace *ns, kuid_t uid);
void kwq_user_put(struct kwq_user *u);
bool kwq_user_queue_charge(struct kwq_user *u, bool limited);
void kwq_user_queue_uncharge(struct kwq_user *u);

/* One level of kwq_user_charge(). */
static inline bool kwq_user_charge_one(struct kwq_user *u, u64 bytes, u64 max, bool limited)
{
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
	for (; u; u = u->parent)
		WARN_ON_ONCE(atomic64_sub_return(bytes, &u->bytes) < 0);
}

/**
 * kwq_user_charge() - count bytes against a user and its owners, if they fit
 * @u: the user's totals.
 * @bytes: bytes to add.
 * @limited: whether max_key_bytes_per_user applies.
 *
 * Charges @u and every @parent above it (at most 33 levels, the depth of
 * nested user namespaces); each must stay within max_key_bytes_per_user.
 *
 * Context: any.
 * Return: true if charged; false, with nothing changed, if a total
 * would pass max_key_bytes_per_user (non-zero) and @limited is set.
 */
static inline bool kwq_user_charge(struct kwq_user *u, u64 bytes, bool limited)
{
	u64 max = READ_ONCE(kwq_max_key_bytes_per_user);
	struct kwq_user *it, *undo;

	for (it = u; it; it = it->parent) {
		if (kwq_user_charge_one(it, bytes, max, limited))
			continue;
		for (undo = u; undo != it; undo = undo->parent)
			atomic64_sub(bytes, &undo->bytes);
		return false;
	}
	return true;
}

#endif /* _KWQ_USER_H */
