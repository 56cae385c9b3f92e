// SPDX-License-Identifier: GPL-2.0
/*
 * kwq registry: the names of queues, one set of names per scope.
 *
 * Scopes work like POSIX message queues: a queue made through /dev/kwq
 * lives in the IPC namespace of the process that opened /dev/kwq, and only
 * files opened in that namespace see its name. Queues made by kernel
 * modules (kwq_create()) live in a scope of their own, the kernel scope
 * (a NULL namespace here), which kwq_lookup() searches and no user program
 * can create in: a user cannot squat a name a module will ask for, nor
 * hand a module a queue the user controls.
 *
 * The registry holds one reference on each named queue and one on its
 * scope's namespace; kwq_kill() drops both. It sits above the queue core:
 * kwq_create() makes a queue there and then names it, kwq_kill() takes the
 * name away and then ends the queue. Queue counts are small (max_queues),
 * so a list under a mutex is enough: lookups happen on open, not per key.
 */

#include <linux/err.h>
#include <linux/ipc_namespace.h>
#include <linux/proc_ns.h>
#include <linux/list.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/nsproxy.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "kwq_internal.h"

static LIST_HEAD(kwq_registry);
/* Protects kwq_registry, kwq_registry_count, kwq.registered and kwq.scope. */
static DEFINE_MUTEX(kwq_registry_lock);
static unsigned int kwq_registry_count;

static bool kwq_name_char_ok(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
}

/**
 * kwq_name_valid() - whether a string is an acceptable queue name
 * @name: NUL-terminated string.
 *
 * Return: true for 1 to KWQ_NAME_MAX - 1 characters from [A-Za-z0-9._-]
 * that do not start with '.'.
 */
bool kwq_name_valid(const char *name)
{
	size_t i;

	if (!name || !name[0] || name[0] == '.')
		return false;
	for (i = 0; name[i]; i++) {
		if (i >= KWQ_NAME_MAX - 1 || !kwq_name_char_ok(name[i]))
			return false;
	}
	return true;
}

/**
 * kwq_scope_current() - the scope of the calling process, with a reference
 *
 * Context: process context.
 * Return: its IPC namespace; drop it with kwq_scope_put().
 */
struct ipc_namespace *kwq_scope_current(void)
{
	return get_ipc_ns(current->nsproxy->ipc_ns);
}

/**
 * kwq_scope_put() - drop a reference kwq_scope_current() took
 * @ns: the namespace, or NULL (the kernel scope) for nothing.
 *
 * Context: process context (the last reference frees the namespace).
 */
void kwq_scope_put(struct ipc_namespace *ns)
{
#ifdef CONFIG_IPC_NS
	/*
	 * put_ipc_ns() is not exported on every kernel kwq supports; the
	 * namespace's own operations (what nsfs calls) drop the same count.
	 */
	if (ns)
		ns->ns.ops->put(&ns->ns);
#endif
}

/* The user namespace that owns @ns: where capabilities count for its queues. */
struct user_namespace *kwq_scope_user_ns(const struct ipc_namespace *ns)
{
	return ns ? ns->user_ns : &init_user_ns;
}

static struct kwq *kwq_registry_find_locked(const char *name, const struct ipc_namespace *scope)
{
	struct kwq *q;

	lockdep_assert_held(&kwq_registry_lock);
	list_for_each_entry(q, &kwq_registry, node) {
		if (q->scope == scope && !strcmp(q->name, name))
			return q;
	}
	return NULL;
}

/* Whether the owner of @q, a queue made by a user program, may have another. */
static bool kwq_user_may_add_locked(const struct kwq *q)
{
	const struct kwq *other;
	unsigned int owned = 0;

	if (!(q->gfp & __GFP_ACCOUNT) || !q->acct.limited)
		return true;
	list_for_each_entry(other, &kwq_registry, node)
		owned += uid_eq(other->uid, q->uid);
	return owned < kwq_max_queues_per_user;
}

/**
 * kwq_registry_add() - publish a new queue under its name
 * @q: queue with a valid name; the registry takes a reference.
 * @scope: the IPC namespace it is named in, or NULL for the kernel scope;
 *	the registry takes a reference on it.
 *
 * Queues made by user programs also count against max_queues_per_user
 * for their owner (in every scope together), unless made exempt
 * (kwq_attr.exempt: the opener of /dev/kwq had CAP_SYS_RESOURCE).
 *
 * Return: 0, -EEXIST or -ENOSPC.
 */
static int kwq_registry_add(struct kwq *q, struct ipc_namespace *scope)
{
	int ret = 0;

	mutex_lock(&kwq_registry_lock);
	if (kwq_registry_find_locked(q->name, scope)) {
		ret = -EEXIST;
	} else if (kwq_registry_count >= kwq_max_queues || !kwq_user_may_add_locked(q)) {
		ret = -ENOSPC;
	} else {
		kwq_get_ref(q);
		q->scope = scope ? get_ipc_ns(scope) : NULL;
		list_add_tail(&q->node, &kwq_registry);
		q->registered = true;
		kwq_registry_count++;
		q->debugfs = kwq_debugfs_add(q, scope);
	}
	mutex_unlock(&kwq_registry_lock);
	return ret;
}

/**
 * kwq_registry_del() - remove a queue's name and the registry's reference
 * @q: queue; nothing happens if it is not registered.
 */
void kwq_registry_del(struct kwq *q)
{
	struct ipc_namespace *scope = NULL;
	bool was_registered;

	mutex_lock(&kwq_registry_lock);
	was_registered = q->registered;
	if (was_registered) {
		list_del_init(&q->node);
		q->registered = false;
		scope = q->scope;
		q->scope = NULL;
		kwq_registry_count--;
		/* Before the reference goes: waits for readers of the file. */
		kwq_debugfs_del(q->debugfs);
		q->debugfs = NULL;
	}
	mutex_unlock(&kwq_registry_lock);
	if (was_registered) {
		kwq_scope_put(scope);
		kwq_put(q);
	}
}

/**
 * kwq_create_in() - make a queue, named in a scope
 * @name: the name, or NULL for an anonymous queue.
 * @attr: settings, or NULL for the defaults.
 * @scope: an IPC namespace, or NULL for the kernel scope.
 *
 * Context: process context; may sleep.
 * Return: as kwq_create().
 */
struct kwq *kwq_create_in(const char *name, const struct kwq_attr *attr,
			  struct ipc_namespace *scope)
{
	struct kwq *q;
	int ret;

	might_sleep();
	if (name && !kwq_name_valid(name))
		return ERR_PTR(-EINVAL);
	q = kwq_queue_new(name, attr);
	if (IS_ERR(q) || !name)
		return q;
	ret = kwq_registry_add(q, scope);
	if (ret) {
		kwq_put(q);
		return ERR_PTR(ret);
	}
	return q;
}

/**
 * kwq_create() - make a queue
 * @name: name under which kwq_lookup() finds the queue, or NULL for an
 *	anonymous queue. 1 to KWQ_NAME_MAX - 1 characters from [A-Za-z0-9._-],
 *	not starting with '.'.
 * @attr: settings, or NULL for the defaults (root-owned, mode 0600).
 *
 * A named queue lives in the kernel scope: kwq_lookup() finds it, and user
 * programs open it by name with KWQ_SCOPE_KERNEL, if its mode lets them.
 * Queues user programs create are in other scopes, so their names never
 * collide with it. It stays registered until kwq_destroy() or until kwq
 * is unloaded, whoever made it.
 *
 * Context: process context; may sleep.
 * Return: the queue with one reference for the caller, or ERR_PTR():
 * -EINVAL (bad name, policy or limiter), -EEXIST (name taken), -ENOSPC (max_queues named
 * queues exist), -ENOMEM.
 */
struct kwq *kwq_create(const char *name, const struct kwq_attr *attr)
{
	return kwq_create_in(name, attr, NULL);
}
EXPORT_SYMBOL_GPL(kwq_create);

/**
 * kwq_lookup_in() - find a named queue in a scope
 * @name: queue name.
 * @scope: an IPC namespace, or NULL for the kernel scope.
 *
 * Context: process context; may sleep.
 * Return: as kwq_lookup().
 */
struct kwq *kwq_lookup_in(const char *name, const struct ipc_namespace *scope)
{
	struct kwq *q;

	if (!kwq_name_valid(name))
		return ERR_PTR(-EINVAL);
	mutex_lock(&kwq_registry_lock);
	q = kwq_registry_find_locked(name, scope);
	if (q)
		kwq_get_ref(q);
	mutex_unlock(&kwq_registry_lock);
	return q ?: ERR_PTR(-ENOENT);
}

/**
 * kwq_lookup() - find a queue a kernel module made
 * @name: queue name.
 *
 * Only the kernel scope is searched (queues made with kwq_create()): a
 * queue a user program made through /dev/kwq is never returned, whatever
 * its name.
 *
 * Context: process context; may sleep.
 * Return: the queue with a reference for the caller (drop it with
 * kwq_put()), or ERR_PTR(-EINVAL) for a bad name, ERR_PTR(-ENOENT).
 */
struct kwq *kwq_lookup(const char *name)
{
	return kwq_lookup_in(name, NULL);
}
EXPORT_SYMBOL_GPL(kwq_lookup);

/**
 * kwq_registry_names() - the names of one scope's queues, at one instant
 * @scope: an IPC namespace, or NULL for the kernel scope.
 * @cap: most names wanted.
 * @names: set to min(@cap, the count) names of KWQ_NAME_MAX bytes each,
 *	NUL-padded (kvfree() them), or NULL if that is 0.
 *
 * Counts, allocates (charged to the caller's memory cgroup) and copies
 * under one hold of kwq_registry_lock, so a queue made or destroyed
 * meanwhile cannot make the names fewer than the count says.
 *
 * Context: process context; may sleep.
 * Return: the number of named queues in @scope (it may exceed @cap), or
 * -ENOMEM.
 */
long kwq_registry_names(const struct ipc_namespace *scope, u32 cap, char **names)
{
	struct kwq *q;
	u32 count = 0, want, n = 0;

	*names = NULL;
	mutex_lock(&kwq_registry_lock);
	list_for_each_entry(q, &kwq_registry, node)
		count += q->scope == scope;
	want = min(cap, count);
	if (want) {
		*names = kvcalloc(want, KWQ_NAME_MAX, GFP_KERNEL_ACCOUNT);
		if (!*names) {
			mutex_unlock(&kwq_registry_lock);
			return -ENOMEM;
		}
	}
	list_for_each_entry(q, &kwq_registry, node) {
		if (q->scope != scope || n >= want)
			continue;
		strscpy_pad(*names + (size_t)n * KWQ_NAME_MAX, q->name, KWQ_NAME_MAX);
		n++;
	}
	mutex_unlock(&kwq_registry_lock);
	return count;
}

/**
 * kwq_registry_kill_all() - destroy every named queue (module unload)
 *
 * Only queues nobody holds remain at unload: open descriptors pin the
 * module, and modules using the API depend on it.
 */
void kwq_registry_kill_all(void)
{
	struct kwq *q;

	for (;;) {
		mutex_lock(&kwq_registry_lock);
		q = list_first_entry_or_null(&kwq_registry, struct kwq, node);
		if (q)
			kwq_get_ref(q);
		mutex_unlock(&kwq_registry_lock);
		if (!q)
			break;
		kwq_destroy(q);
	}
}

/**
 * kwq_kill() - destroy a queue but keep the caller's reference
 * @q: queue.
 *
 * Removes the name, marks the queue destroyed (every call on a key and
 * every drain then fails with -EIDRM) and wakes all waiters; they hold
 * their own references, so the memory outlives them. Idempotent.
 *
 * Context: process context.
 */
void kwq_kill(struct kwq *q)
{
	kwq_registry_del(q);
	kwq_queue_end(q);
}

/**
 * kwq_destroy() - destroy a queue and drop the caller's reference
 * @q: queue.
 *
 * Waiters in kwq_get() and kwq_shutdown_drain() return -EIDRM; later calls
 * on keys and drains through other references fail with -EIDRM (stats and
 * shutdown still work); the name is free for reuse.
 * Keys still queued or processing are discarded.
 *
 * Context: process context; may sleep.
 */
void kwq_destroy(struct kwq *q)
{
	kwq_kill(q);
	kwq_put(q);
}
EXPORT_SYMBOL_GPL(kwq_destroy);
