/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Who pays for a queue made by a user program (kwq_attr.account): the
 * memory cgroup of its creator pays for the key table's bucket arrays,
 * also when a worker grows them later, and for the waiting set's far
 * slots (kwq_far.h); its owner's per-user total (kwq_user.h) counts the
 * bytes of its key records. Queues made by the kernel pay nothing here.
 * See Documentation/kwq-limits.rst.
 */
#ifndef _KWQ_ACCT_H
#define _KWQ_ACCT_H

#include <linux/bug.h>
#include <linux/gfp.h>
#include <linux/types.h>
#include <linux/uidgid.h>

#include "kwq_item.h"
#include "kwq_payload.h"
#include "kwq_user.h"

struct mem_cgroup;

/**
 * struct kwq_acct - what one queue is charged to
 * @memcg: the creator's memory cgroup (a reference), charged for the
 *	bucket arrays; NULL if the queue is not accounted.
 * @user: the owner's key-record total (a reference); NULL if the queue
 *	does not count.
 * @bytes: what this queue charged to @user; under kwq.lock.
 * @limited: adds past max_key_bytes_per_user fail, and so does the
 *	queue's create past max_queues_per_user (kwq_attr.exempt unset).
 *	Constant.
 * @rec_kind: KWQ_REC_* bits: what the queue's records carry past the key
 *	(kwq_rec_tail()), so what each key costs. Constant.
 * @small_bytes: kwq_rec_bytes() of a key of up to KWQ_SMALL_KEY bytes,
 *	taken once with @rec_kind: every add and drop of a small key
 *	charges it without a call. Constant.
 */
struct kwq_acct {
	struct mem_cgroup *memcg;
	struct kwq_user *user;
	u64 bytes;
	bool limited;
	u32 rec_kind;
	u32 small_bytes;
};

struct user_namespace;
int kwq_acct_init(struct kwq_acct *a, gfp_t gfp, kuid_t owner, struct user_namespace *ns,
		  bool exempt);
void kwq_acct_release(struct kwq_acct *a);
struct kwq_item **kwq_acct_table_alloc(const struct kwq_acct *a, u32 bits, gfp_t gfp);
void *kwq_acct_kmalloc(const struct kwq_acct *a, size_t size, gfp_t gfp);

/*
 * @bytes charged to, or given back by, a queue whose @user is set: inline,
 * as every add of a new key and every drop of a record runs one.
 */
static inline bool __kwq_acct_charge_bytes(struct kwq_acct *a, u64 bytes)
{
	if (!kwq_user_charge(a->user, bytes, a->limited))
		return false;
	a->bytes += bytes;
	return true;
}

static inline void __kwq_acct_uncharge_bytes(struct kwq_acct *a, u64 bytes)
{
	if (WARN_ON_ONCE(bytes > a->bytes))
		bytes = a->bytes;
	a->bytes -= bytes;
	kwq_user_uncharge(a->user, bytes);
}

/*
 * A record's size for a key of @key_len bytes (kwq_rec_bytes(): a pointer
 * more on a payload queue, kwq_payload.h); a small key's without a call.
 */
static inline u64 kwq_acct_rec_bytes(const struct kwq_acct *a, u32 key_len)
{
	return key_len <= KWQ_SMALL_KEY ? a->small_bytes : kwq_rec_bytes(a->rec_kind, key_len);
}

/**
 * kwq_acct_charge() - count a new key record against the queue's owner
 * @a: the queue's accounting.
 * @key_len: the key's length.
 *
 * Called under kwq.lock before the record goes into the key table.
 *
 * Return: true, or false (nothing changed) when the owner's total would
 * pass max_key_bytes_per_user: the add fails with -ENOSPC.
 */
static inline bool kwq_acct_charge(struct kwq_acct *a, u32 key_len)
{
	return !a->user || __kwq_acct_charge_bytes(a, kwq_acct_rec_bytes(a, key_len));
}

/**
 * kwq_acct_uncharge() - a record charged by kwq_acct_charge() left the table
 * @a: the queue's accounting.
 * @key_len: the key's length.
 */
static inline void kwq_acct_uncharge(struct kwq_acct *a, u32 key_len)
{
	if (a->user)
		__kwq_acct_uncharge_bytes(a, kwq_acct_rec_bytes(a, key_len));
}

/**
 * kwq_acct_charge_bytes() - count @bytes of a payload against the owner
 * @a: the queue's accounting.
 * @bytes: the payload's allocated size (kwq_payload_bytes()).
 *
 * Return: true, or false (nothing changed) past max_key_bytes_per_user.
 */
static inline bool kwq_acct_charge_bytes(struct kwq_acct *a, u64 bytes)
{
	return !a->user || __kwq_acct_charge_bytes(a, bytes);
}

/**
 * kwq_acct_uncharge_bytes() - a payload charged by kwq_acct_charge_bytes() left
 * @a: the queue's accounting.
 * @bytes: what was charged.
 */
static inline void kwq_acct_uncharge_bytes(struct kwq_acct *a, u64 bytes)
{
	if (a->user)
		__kwq_acct_uncharge_bytes(a, bytes);
}

#endif /* _KWQ_ACCT_H */
