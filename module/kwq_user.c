// SPDX-License-Identifier: GPL-2.0
/*
 * Per-user totals of key-record bytes; see kwq_user.h. A small hash table
 * of users under a mutex, taken only when a counted queue is made or
 * freed; charges and uncharges are atomic and run under any queue's lock
 * (inline in kwq_user.h: every add of a new key and every drop of a
 * record charges or uncharges).
 */

#include <linux/atomic.h>
#include <linux/bug.h>
#include <linux/hashtable.h>
#include <linux/mutex.h>
#include <linux/slab.h>

#include "kwq_user.h"

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
