// SPDX-License-Identifier: GPL-2.0
/*
 * Who pays for a queue made by a user program; see kwq_acct.h.
 */

#include <linux/bug.h>
#include <linux/memcontrol.h>
#include <linux/sched.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/user_namespace.h>

#include "kwq.h"
#include "kwq_acct.h"
#include "kwq_item.h"
#include "kwq_payload.h"
#include "kwq_table.h"
#include "kwq_user.h"

/**
 * kwq_acct_init() - settle who pays for a new queue
 * @a: zeroed accounting of the queue.
 * @gfp: the queue's allocation flags: only with __GFP_ACCOUNT (a queue
 *	made by a user program) is anything charged.
 * @owner: the queue's owner, whose total counts its key records.
 * @ns: the user namespace of the creator, where @owner is charged (with
 *	the owner of each namespace above it); NULL for the initial one.
 * @exempt: the queue's adds are never refused by max_key_bytes_per_user,
 *	though they still count (kwq_attr.exempt).
 *
 * Remembers the memory cgroup of the calling task, the creator.
 *
 * Context: process context, the creator's; may sleep.
 * Return: 0, or -ENOMEM (kwq_acct_release() then frees what was taken).
 */
int kwq_acct_init(struct kwq_acct *a, gfp_t gfp, kuid_t owner, struct user_namespace *ns,
		  bool exempt)
{
	if (!(gfp & __GFP_ACCOUNT))
		return 0;
	a->memcg = get_mem_cgroup_from_mm(current->mm);
	a->limited = !exempt;
	a->user = kwq_user_get(ns ?: &init_user_ns, owner);
	return a->user ? 0 : -ENOMEM;
}

/**
 * kwq_acct_release() - give back everything a queue was charged
 * @a: the accounting of a queue being freed, its records freed too.
 *
 * Context: process context; may sleep.
 */
void kwq_acct_release(struct kwq_acct *a)
{
	if (a->user) {
		if (a->bytes)
			kwq_user_uncharge(a->user, a->bytes);
		kwq_user_put(a->user);
	}
	mem_cgroup_put(a->memcg);
	*a = (struct kwq_acct){};
}

/*
 * Allocations charged to the queue's creator run between these two: the
 * creator's cgroup is the active one (nothing changes for a queue that
 * is not accounted).
 */
static struct mem_cgroup *kwq_acct_enter(const struct kwq_acct *a)
{
	return a->memcg ? set_active_memcg(a->memcg) : NULL;
}

static void kwq_acct_leave(const struct kwq_acct *a, struct mem_cgroup *old)
{
	if (a->memcg)
		set_active_memcg(old);
}

/**
 * kwq_acct_table_alloc() - kwq_table_alloc() charged to the creator
 * @a: the queue's accounting.
 * @bits: log2 of the number of buckets.
 * @gfp: the queue's allocation flags.
 *
 * The resize worker allocates bucket arrays in a kworker, whose memory
 * would be charged to no cgroup: charge the creator's instead.
 *
 * Context: process context; may sleep.
 * Return: the array, or NULL.
 */
struct kwq_item **kwq_acct_table_alloc(const struct kwq_acct *a, u32 bits, gfp_t gfp)
{
	struct mem_cgroup *old = kwq_acct_enter(a);
	struct kwq_item **buckets = kwq_table_alloc(bits, gfp);

	kwq_acct_leave(a, old);
	return buckets;
}

/**
 * kwq_acct_kmalloc() - kmalloc() charged to the creator, like the bucket
 *	arrays (for the far slots of the waiting set, kwq_far.h)
 * @a: the queue's accounting.
 * @size: bytes.
 * @gfp: allocation flags; charged only with __GFP_ACCOUNT.
 *
 * Context: any context @gfp allows.
 * Return: the memory, or NULL.
 */
void *kwq_acct_kmalloc(const struct kwq_acct *a, size_t size, gfp_t gfp)
{
	struct mem_cgroup *old = kwq_acct_enter(a);
	void *p = kmalloc(size, gfp);

	kwq_acct_leave(a, old);
	return p;
}
