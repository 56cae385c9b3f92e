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
 * The registry holds one reference on each named queue, and one on each
 * scope's namespace (struct kwq_scope, kwq_scope.h), not one per queue:
 * the reaper (kwq_scope_reap_fn()) finds namespaces nobody else holds,
 * destroys their queues and lets the namespace go, as POSIX message
 * queues go with theirs. It sits above the queue core: kwq_create() makes
 * a queue there and then names it, kwq_kill() takes the name away and then
 * ends the queue. Queue counts are small (max_queues), so lists under a
 * mutex are enough: lookups happen on open, not per key.
 *
 * Limits at each create (Documentation/kwq-limits.rst): max_queues for
 * all scopes together; for queues of user programs not exempt
 * (CAP_SYS_RESOURCE), max_queues - kernel_reserve_queues for every IPC
 * namespace together, the scope's own limit (max_queues_per_ns, or lower
 * as its owner set it) and max_queues_per_user for the owner and each
 * user-namespace owner above it (kwq_user.h).
 */

#include <linux/capability.h>
#include <linux/err.h>
#include <linux/hash.h>
#include <linux/hashtable.h>
#include <linux/ipc_namespace.h>
#include <linux/proc_ns.h>
#include <linux/list.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/nsproxy.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/user_namespace.h>
#include <linux/workqueue.h>

#include "kwq_internal.h"
#include "kwq_scope.h"
#include "kwq_user.h"

/* Protects the scopes, their queue lists and counts, kwq.registered and kwq.scope. */
static DEFINE_MUTEX(kwq_registry_lock);
static DEFINE_HASHTABLE(kwq_scopes, 6);
static struct kwq_scope kwq_kernel_scope = {
	.queues = LIST_HEAD_INIT(kwq_kernel_scope.queues),
};

/* Named queues in every scope, and in the IPC namespaces' only. */
static unsigned int kwq_registry_count;
static unsigned int kwq_registry_user_count;
/* Scopes of IPC namespaces other than the initial one: the reaper runs while there are any. */
static unsigned int kwq_foreign_scopes;
static bool kwq_reap_stopped;

static void kwq_scope_reap_fn(struct work_struct *work);
static DECLARE_DELAYED_WORK(kwq_reap_work, kwq_scope_reap_fn);

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

static bool kwq_scope_foreign(const struct ipc_namespace *ns)
{
	return ns && ns->ns.inum != PROC_IPC_INIT_INO;
}

/* The scope of @ns (NULL: the kernel scope), or NULL if it has none. */
static struct kwq_scope *kwq_scope_find_locked(const struct ipc_namespace *ns)
{
	struct kwq_scope *s;

	lockdep_assert_held(&kwq_registry_lock);
	if (!ns)
		return &kwq_kernel_scope;
	hash_for_each_possible(kwq_scopes, s, node, hash_ptr(ns, 32))
		if (s->ns == ns)
			return s;
	return NULL;
}

/* The scope of @ns, made if it has none; NULL when out of memory. */
static struct kwq_scope *kwq_scope_get_locked(struct ipc_namespace *ns)
{
	struct kwq_scope *s = kwq_scope_find_locked(ns);

	if (s)
		return s;
	s = kzalloc(sizeof(*s), GFP_KERNEL_ACCOUNT);
	if (!s)
		return NULL;
	INIT_LIST_HEAD(&s->queues);
	INIT_LIST_HEAD(&s->reap);
	s->ns = get_ipc_ns(ns);
	hash_add(kwq_scopes, &s->node, hash_ptr(ns, 32));
	if (kwq_scope_foreign(ns) && !kwq_foreign_scopes++ && !kwq_reap_stopped)
		schedule_delayed_work(&kwq_reap_work, KWQ_SCOPE_REAP_PERIOD);
	return s;
}

/*
 * Unhash @s; the caller frees it and drops its namespace outside the
 * lock (kwq_scope_free()).
 */
static void kwq_scope_unhash_locked(struct kwq_scope *s)
{
	lockdep_assert_held(&kwq_registry_lock);
	hash_del(&s->node);
	if (kwq_scope_foreign(s->ns))
		kwq_foreign_scopes--;
}

static void kwq_scope_free(struct kwq_scope *s)
{
	if (!s)
		return;
	WARN_ON_ONCE(s->count || !list_empty(&s->queues));
	kwq_scope_put(s->ns);
	kfree(s);
}

/* The limit of @s in force: its own, within the module's ceiling. */
static unsigned int kwq_scope_max(const struct kwq_scope *s)
{
	unsigned int ceiling = READ_ONCE(kwq_max_queues_per_ns);

	return s->queues_max ? min(s->queues_max, ceiling) : ceiling;
}

static struct kwq *kwq_registry_find_locked(const char *name, const struct kwq_scope *s)
{
	struct kwq *q;

	lockdep_assert_held(&kwq_registry_lock);
	list_for_each_entry(q, &s->queues, node) {
		if (!strcmp(q->name, name))
			return q;
	}
	return NULL;
}

/* Whether @q may be named in @s: every limit but the name's; charges its owner. */
static int kwq_registry_admit_locked(struct kwq *q, const struct kwq_scope *s)
{
	/* A queue of a user program, not made exempt by CAP_SYS_RESOURCE. */
	bool limited = (q->gfp & __GFP_ACCOUNT) && q->acct.limited;
	unsigned int max = READ_ONCE(kwq_max_queues);
	unsigned int reserve = min(READ_ONCE(kwq_kernel_reserve_queues), max);

	if (kwq_registry_count >= max)
		return -ENOSPC;
	if (s != &kwq_kernel_scope && limited &&
	    (kwq_registry_user_count >= max - reserve || s->count >= kwq_scope_max(s)))
		return -ENOSPC;
	if (q->acct.user && !kwq_user_queue_charge(q->acct.user, q->acct.limited))
		return -ENOSPC;
	return 0;
}

/**
 * kwq_registry_add() - publish a new queue under its name
 * @q: queue with a valid name; the registry takes a reference.
 * @ns: the IPC namespace it is named in, or NULL for the kernel scope;
 *	the registry takes a reference on it for its scope if it has none.
 *
 * Queues made by user programs also count against max_queues_per_user
 * for their owner and the owner of every user namespace above it (in
 * every scope together), and against the limits of IPC namespaces,
 * unless made exempt (kwq_attr.exempt: the opener of /dev/kwq had
 * CAP_SYS_RESOURCE).
 *
 * Return: 0, -EEXIST, -ENOSPC or -ENOMEM.
 */
static int kwq_registry_add(struct kwq *q, struct ipc_namespace *ns)
{
	struct kwq_scope *s;
	int ret;

	mutex_lock(&kwq_registry_lock);
	s = kwq_scope_get_locked(ns);
	if (!s)
		ret = -ENOMEM;
	else if (kwq_registry_find_locked(q->name, s))
		ret = -EEXIST;
	else
		ret = kwq_registry_admit_locked(q, s);
	if (!ret) {
		kwq_get_ref(q);
		q->scope = s;
		list_add_tail(&q->node, &s->queues);
		q->registered = true;
		s->count++;
		kwq_registry_count++;
		kwq_registry_user_count += s != &kwq_kernel_scope;
		q->debugfs = kwq_debugfs_add(q, ns);
	}
	mutex_unlock(&kwq_registry_lock);
	return ret;
}

/**
 * kwq_registry_del() - remove a queue's name and the registry's reference
 * @q: queue; nothing happens if it is not registered.
 *
 * The scope of an IPC namespace goes with its last queue, unless its
 * owner set its limit; the reaper frees it otherwise.
 */
void kwq_registry_del(struct kwq *q)
{
	struct kwq_scope *s, *gone = NULL;
	bool was_registered;

	mutex_lock(&kwq_registry_lock);
	was_registered = q->registered;
	if (was_registered) {
		s = q->scope;
		list_del_init(&q->node);
		q->registered = false;
		q->scope = NULL;
		s->count--;
		kwq_registry_count--;
		kwq_registry_user_count -= s != &kwq_kernel_scope;
		if (q->acct.user)
			kwq_user_queue_uncharge(q->acct.user);
		/* Before the reference goes: waits for readers of the file. */
		kwq_debugfs_del(q->debugfs);
		q->debugfs = NULL;
		if (s != &kwq_kernel_scope && !s->count && !s->queues_max &&
		    !hlist_unhashed(&s->node)) {
			kwq_scope_unhash_locked(s);
			gone = s;
		}
	}
	mutex_unlock(&kwq_registry_lock);
	if (was_registered) {
		kwq_scope_free(gone);
		kwq_put(q);
	}
}

/*
 * Destroy the queues of @s, one at a time with the lock dropped between,
 * each as by kwq_destroy(): descriptors attached to it see -EIDRM, and its
 * memory goes when the last of them closes.
 */
static void kwq_scope_destroy_queues(struct kwq_scope *s)
{
	struct kwq *q;

	for (;;) {
		mutex_lock(&kwq_registry_lock);
		q = list_first_entry_or_null(&s->queues, struct kwq, node);
		if (q)
			kwq_get_ref(q);
		mutex_unlock(&kwq_registry_lock);
		if (!q)
			break;
		kwq_destroy(q);
		cond_resched();
	}
}

/*
 * Destroy the queues of each scope on @dead, then free it, dropping the
 * last reference on its namespace.
 */
static void kwq_scope_reap_list(struct list_head *dead)
{
	struct kwq_scope *s, *next;

	list_for_each_entry_safe(s, next, dead, reap) {
		kwq_scope_destroy_queues(s);
		list_del(&s->reap);
		kwq_scope_free(s);
	}
}

/*
 * Once a second while scopes of other IPC namespaces than the initial one
 * exist: a namespace whose one reference is its scope's has no task, no
 * nsfs file or mount and no /dev/kwq descriptor left to reach it, so its
 * queues go and the namespace with them. Looks at each scope once (a few
 * loads each) under the lock; the queues are destroyed outside it, one at
 * a time. A reference taken meanwhile through a path that needs none of
 * those (a mount of its mqueue file system opening a message queue) may
 * keep the namespace for its own holder; its kwq queues go all the same,
 * as they would have had that come a moment later.
 */
static void kwq_scope_reap_fn(struct work_struct *work)
{
	struct kwq_scope *s;
	struct hlist_node *tmp;
	LIST_HEAD(dead);
	bool again;
	int bkt;

	mutex_lock(&kwq_registry_lock);
	hash_for_each_safe(kwq_scopes, bkt, tmp, s, node) {
		if (!kwq_scope_foreign(s->ns) || kwq_ipc_ns_refs(s->ns) > 1)
			continue;
		kwq_scope_unhash_locked(s);
		list_add_tail(&s->reap, &dead);
	}
	mutex_unlock(&kwq_registry_lock);

	kwq_scope_reap_list(&dead);

	mutex_lock(&kwq_registry_lock);
	again = kwq_foreign_scopes && !kwq_reap_stopped;
	mutex_unlock(&kwq_registry_lock);
	if (again)
		schedule_delayed_work(&kwq_reap_work, KWQ_SCOPE_REAP_PERIOD);
}

/** kwq_scope_reap_start() - let the reaper run (module load) */
void kwq_scope_reap_start(void)
{
	mutex_lock(&kwq_registry_lock);
	kwq_reap_stopped = false;
	mutex_unlock(&kwq_registry_lock);
}

/** kwq_scope_reap_stop() - stop the reaper and wait for it (module unload) */
void kwq_scope_reap_stop(void)
{
	mutex_lock(&kwq_registry_lock);
	kwq_reap_stopped = true;
	mutex_unlock(&kwq_registry_lock);
	cancel_delayed_work_sync(&kwq_reap_work);
}

/**
 * kwq_scope_limits() - read, or set and read, the queue limit of a scope
 * @ns: the IPC namespace (the caller checked the right to set).
 * @set: set the scope's limit to *@queues_max first (1 to
 *	max_queues_per_ns, else -EINVAL).
 * @queues_max: in: the new limit; out: the limit in force.
 * @queues: out: the named queues of the scope.
 *
 * A scope whose limit was set stays, holding its namespace, until the
 * reaper finds the namespace held by kwq alone.
 *
 * Context: process context; may sleep.
 * Return: 0, -EINVAL or -ENOMEM; nothing changed on error.
 */
int kwq_scope_limits(struct ipc_namespace *ns, bool set, u32 *queues_max, u32 *queues)
{
	struct kwq_scope *s;
	int ret = 0;

	mutex_lock(&kwq_registry_lock);
	if (set) {
		if (!*queues_max || *queues_max > READ_ONCE(kwq_max_queues_per_ns)) {
			ret = -EINVAL;
			goto unlock;
		}
		s = kwq_scope_get_locked(ns);
		if (!s) {
			ret = -ENOMEM;
			goto unlock;
		}
		s->queues_max = *queues_max;
	} else {
		s = kwq_scope_find_locked(ns);
	}
	if (s) {
		*queues_max = kwq_scope_max(s);
		*queues = s->count;
	} else {
		*queues_max = READ_ONCE(kwq_max_queues_per_ns);
		*queues = 0;
	}
unlock:
	mutex_unlock(&kwq_registry_lock);
	return ret;
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
	const struct kwq_scope *s;
	struct kwq *q = NULL;

	if (!kwq_name_valid(name))
		return ERR_PTR(-EINVAL);
	mutex_lock(&kwq_registry_lock);
	s = kwq_scope_find_locked(scope);
	if (s)
		q = kwq_registry_find_locked(name, s);
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
	const struct kwq_scope *s;
	struct kwq *q;
	u32 count, want, n = 0;

	*names = NULL;
	mutex_lock(&kwq_registry_lock);
	s = kwq_scope_find_locked(scope);
	count = s ? s->count : 0;
	want = min(cap, count);
	if (want) {
		*names = kvcalloc(want, KWQ_NAME_MAX, GFP_KERNEL_ACCOUNT);
		if (!*names) {
			mutex_unlock(&kwq_registry_lock);
			return -ENOMEM;
		}
		list_for_each_entry(q, &s->queues, node) {
			if (n >= want)
				break;
			strscpy_pad(*names + (size_t)n * KWQ_NAME_MAX, q->name, KWQ_NAME_MAX);
			n++;
		}
	}
	mutex_unlock(&kwq_registry_lock);
	return count;
}

/* Fill @info from @q of scope @s, for KWQ_IOC_LIST_ALL. */
static void kwq_queue_info_fill(struct kwq_queue_info *info, const struct kwq *q,
				const struct kwq_scope *s)
{
	strscpy_pad(info->name, q->name, sizeof(info->name));
	info->ipc_inum = s->ns ? s->ns->ns.inum : 0;
	info->uid = from_kuid_munged(&init_user_ns, q->uid);
	info->gid = from_kgid_munged(&init_user_ns, q->gid);
	info->mode = q->mode;
}

/**
 * kwq_registry_list_all() - every named queue of every scope, at one instant
 * @cap: most entries wanted.
 * @info: set to min(@cap, the count) entries (kvfree() them), or NULL if
 *	that is 0: the kernel scope's queues first, then each namespace's.
 *
 * As kwq_registry_names(), under one hold of kwq_registry_lock; the work
 * is bounded by max_queues (65,536 at most) and the scopes. The queues of
 * a namespace the reaper is destroying are left out.
 *
 * Context: process context; may sleep.
 * Return: the number of named queues (it may exceed @cap), or -ENOMEM.
 */
long kwq_registry_list_all(u32 cap, struct kwq_queue_info **info)
{
	const struct kwq_scope *s;
	const struct kwq *q;
	u32 count, want, n = 0;
	int bkt;

	*info = NULL;
	mutex_lock(&kwq_registry_lock);
	count = kwq_kernel_scope.count;
	hash_for_each(kwq_scopes, bkt, s, node)
		count += s->count;
	want = min(cap, count);
	if (want) {
		*info = kvcalloc(want, sizeof(**info), GFP_KERNEL_ACCOUNT);
		if (!*info) {
			mutex_unlock(&kwq_registry_lock);
			return -ENOMEM;
		}
		list_for_each_entry(q, &kwq_kernel_scope.queues, node) {
			if (n >= want)
				break;
			kwq_queue_info_fill(&(*info)[n++], q, &kwq_kernel_scope);
		}
		hash_for_each(kwq_scopes, bkt, s, node) {
			list_for_each_entry(q, &s->queues, node) {
				if (n >= want)
					break;
				kwq_queue_info_fill(&(*info)[n++], q, s);
			}
		}
	}
	mutex_unlock(&kwq_registry_lock);
	return count;
}

/**
 * kwq_registry_destroy_in() - destroy a named queue of any scope
 * @name: its name.
 * @ipc_inum: the inode number of its IPC namespace (ignored with
 *	@kernel_scope).
 * @kernel_scope: the queue is in the kernel scope.
 *
 * Inode numbers of live namespaces are unique, and every scope holds its
 * namespace, so @ipc_inum names one scope at most.
 *
 * Context: process context; may sleep.
 * Return: 0, -EINVAL (bad name) or -ENOENT.
 */
int kwq_registry_destroy_in(const char *name, u32 ipc_inum, bool kernel_scope)
{
	struct kwq_scope *s, *found = NULL;
	struct kwq *q = NULL;
	int bkt;

	if (!kwq_name_valid(name))
		return -EINVAL;
	mutex_lock(&kwq_registry_lock);
	if (kernel_scope) {
		found = &kwq_kernel_scope;
	} else {
		hash_for_each(kwq_scopes, bkt, s, node) {
			if (s->ns->ns.inum == ipc_inum) {
				found = s;
				break;
			}
		}
	}
	if (found)
		q = kwq_registry_find_locked(name, found);
	if (q)
		kwq_get_ref(q);
	mutex_unlock(&kwq_registry_lock);
	if (!q)
		return -ENOENT;
	kwq_destroy(q);
	return 0;
}

/**
 * kwq_registry_kill_all() - destroy every named queue (module unload)
 *
 * Only queues nobody holds remain at unload: open descriptors pin the
 * module, and modules using the API depend on it. The scopes go too,
 * dropping their references on their namespaces; the reaper must be
 * stopped (kwq_scope_reap_stop()).
 */
void kwq_registry_kill_all(void)
{
	struct kwq_scope *s;
	struct hlist_node *tmp;
	LIST_HEAD(all);
	int bkt;

	mutex_lock(&kwq_registry_lock);
	hash_for_each_safe(kwq_scopes, bkt, tmp, s, node) {
		kwq_scope_unhash_locked(s);
		list_add_tail(&s->reap, &all);
	}
	mutex_unlock(&kwq_registry_lock);
	kwq_scope_reap_list(&all);
	kwq_scope_destroy_queues(&kwq_kernel_scope);
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
