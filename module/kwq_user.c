// SPDX-License-Identifier: GPL-2.0
/*
 * Per-user totals of key-record bytes and named queues; see kwq_user.h.
 * A small hash table of (user namespace, uid) pairs under a mutex, taken
 * only when a counted queue is made or freed; charges and uncharges are
 * atomic and run under any queue's lock (inline in kwq_user.h: every add
 * of a new key and every drop of a record charges or uncharges).
 */

#include <linux/atomic.h>
#include <linux/bug.h>
#include <linux/hash.h>
#include <linux/hashtable.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/user_namespace.h>

#include "kwq_user.h"

static DEFINE_HASHTABLE(kwq_users, 6);
static DEFINE_MUTEX(kwq_users_lock);

static u32 kwq_user_key(const struct user_namespace *ns, kuid_t uid)
{
	return hash_ptr(ns, 32) ^ __kuid_val(uid);
}

/* Drop one reference on @u, and on each owner whose last one that was. */
static void kwq_user_put_locked(struct kwq_user *u)
{
	struct kwq_user *parent;

	lockdep_assert_held(&kwq_users_lock);
	while (u && !--u->refs) {
		parent = u->parent;
		WARN_ON_ONCE(atomic64_read(&u->bytes) || atomic_read(&u->queues));
		hash_del(&u->node);
		put_user_ns(u->ns);
		kfree(u);
		u = parent;
	}
}

/**
 * kwq_user_get() - the totals of a user, made on first use with its owners'
 * @ns: the user namespace of the queue's creator, where @uid is mapped.
 * @uid: the user.
 *
 * Makes the totals of @uid in @ns, and of the owner of @ns in its parent,
 * and so on up to the initial user namespace, where each is missing: at
 * most 33 levels (the kernel nests user namespaces 32 deep).
 *
 * Context: process context; may sleep.
 * Return: a reference for kwq_user_put(), or NULL (out of memory).
 */
struct kwq_user *kwq_user_get(struct user_namespace *ns, kuid_t uid)
{
	struct kwq_user *first = NULL, *prev = NULL, *u;
	bool found;
	u32 key;

	mutex_lock(&kwq_users_lock);
	for (;;) {
		key = kwq_user_key(ns, uid);
		found = false;
		hash_for_each_possible(kwq_users, u, node, key) {
			if (u->ns == ns && uid_eq(u->uid, uid)) {
				found = true;
				break;
			}
		}
		if (!found) {
			u = kzalloc(sizeof(*u), GFP_KERNEL);
			if (!u)
				goto fail;
			u->ns = get_user_ns(ns);
			u->uid = uid;
			atomic_set(&u->queues, 0);
			atomic64_set(&u->bytes, 0);
			hash_add(kwq_users, &u->node, key);
		}
		/* The caller's reference, or that of the child made last. */
		u->refs++;
		if (prev)
			prev->parent = u;
		if (!first)
			first = u;
		if (found || ns == &init_user_ns)
			break;
		prev = u;
		uid = ns->owner;
		ns = ns->parent;
	}
	mutex_unlock(&kwq_users_lock);
	return first;
fail:
	kwq_user_put_locked(first);
	mutex_unlock(&kwq_users_lock);
	return NULL;
}

/**
 * kwq_user_put() - drop a reference from kwq_user_get()
 * @u: the user's totals, or NULL.
 *
 * The last reference frees them, and drops theirs on the owner above;
 * by then every charge was given back.
 *
 * Context: process context; may sleep.
 */
void kwq_user_put(struct kwq_user *u)
{
	if (!u)
		return;
	mutex_lock(&kwq_users_lock);
	kwq_user_put_locked(u);
	mutex_unlock(&kwq_users_lock);
}

/**
 * kwq_user_queue_charge() - count a named queue against a user and its owners
 * @u: the owner's totals.
 * @limited: whether max_queues_per_user applies.
 *
 * Context: under kwq_registry_lock, which serializes every queue charge.
 * Return: true if counted; false, with nothing changed, if @limited and
 * @u or an owner above it has max_queues_per_user queues already.
 */
bool kwq_user_queue_charge(struct kwq_user *u, bool limited)
{
	unsigned int max = READ_ONCE(kwq_max_queues_per_user);
	struct kwq_user *it;

	if (limited)
		for (it = u; it; it = it->parent)
			if (atomic_read(&it->queues) >= max)
				return false;
	for (it = u; it; it = it->parent)
		atomic_inc(&it->queues);
	return true;
}

/**
 * kwq_user_queue_uncharge() - give back a queue from kwq_user_queue_charge()
 * @u: the owner's totals.
 *
 * Context: under kwq_registry_lock.
 */
void kwq_user_queue_uncharge(struct kwq_user *u)
{
	for (; u; u = u->parent)
		WARN_ON_ONCE(atomic_dec_return(&u->queues) < 0);
}
