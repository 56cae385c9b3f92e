// SPDX-License-Identifier: GPL-2.0
/*
 * Per-user totals of key-record bytes; see kwq_user.h. A small hash table
 * of users under a mutex, taken only when a counted queue is made or
 * freed; charges and uncharges are atomic and run under any queue's lock.
 */

#include <linux/atomic.h>
#include <linux/bug.h>
#include <linux/hashtable.h>
#include <linux/mutex.h>
#include <linux/slab.h>

#include "kwq_user.h"

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

static DEFINE_HASHTABLE(kwq_users, 6);
static DEFINE_MUTEX(kwq_users_lock);

/**
 * kwq_user_get() - the totals of a user, made on first use
 * @uid: the user.
 *
 * Context: process context; may sleep.
 * Return: a reference for kwq_user_put(), or NULL (out of memory).
 */
struct kwq_user *kwq_user_get(kuid_t uid)
{
	u32 key = __kuid_val(uid);
	struct kwq_user *u;

	mutex_lock(&kwq_users_lock);
	hash_for_each_possible(kwq_users, u, node, key)
		if (uid_eq(u->uid, uid))
			goto found;
	u = kzalloc(sizeof(*u), GFP_KERNEL);
	if (!u)
		goto unlock;
	u->uid = uid;
	atomic64_set(&u->bytes, 0);
	hash_add(kwq_users, &u->node, key);
found:
	u->refs++;
unlock:
	mutex_unlock(&kwq_users_lock);
	return u;
}

/**
 * kwq_user_put() - drop a reference from kwq_user_get()
 * @u: the user's totals, or NULL.
 *
 * The last reference frees them; by then every charge was given back.
 *
 * Context: process context; may sleep.
 */
void kwq_user_put(struct kwq_user *u)
{
	if (!u)
		return;
	mutex_lock(&kwq_users_lock);
	if (!--u->refs) {
		WARN_ON_ONCE(atomic64_read(&u->bytes));
		hash_del(&u->node);
		kfree(u);
	}
	mutex_unlock(&kwq_users_lock);
}

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
bool kwq_user_charge(struct kwq_user *u, u64 bytes, bool limited)
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
void kwq_user_uncharge(struct kwq_user *u, u64 bytes)
{
	WARN_ON_ONCE(atomic64_sub_return(bytes, &u->bytes) < 0);
}
