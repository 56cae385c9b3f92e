/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kwq internals shared by the core, the registry and the device.
 *
 * Locking (see Documentation/kwq-core.rst):
 *  - kwq.lock, a BH-safe spinlock, protects everything in struct kwq that
 *    is not constant after creation: the key table, the ready list, the
 *    counters and the state flags, and every kwq_item. It is taken with
 *    spin_lock_bh() from process and softirq context. It is never taken in
 *    hard interrupt context: on 6.1 rhashtable bucket locks use
 *    local_bh_disable(), which must not run with interrupts off.
 *  - kwq_registry_lock, a mutex, protects the list of named queues and
 *    kwq.registered. It is taken before kwq.lock, never inside it.
 *  - kwq.ref (kref) keeps the object alive; each sleeper holds one.
 */
#ifndef _KWQ_INTERNAL_H
#define _KWQ_INTERNAL_H

#include <linux/hrtimer.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/rhashtable-types.h>
#include <linux/spinlock.h>
#include <linux/timerqueue.h>
#include <linux/wait.h>

#include "kwq.h"

/* kwq_item.state bits; an item with no bit set is freed. */
#define KWQ_ITEM_DIRTY		BIT(0)	/* needs processing */
#define KWQ_ITEM_PROCESSING	BIT(1)	/* handed out, no done yet */
#define KWQ_ITEM_WAITING	BIT(2)	/* on kwq.waiting until its deadline */

/**
 * struct kwq_item - the one record of a key and all of its state
 * @hnode: link in kwq.items, keyed by the key bytes.
 * @ready: link in kwq.ready; linked exactly when the item is DIRTY and
 *	not PROCESSING, so "queued" is derived, never stored.
 * @wait: node in kwq.waiting, keyed by deadline; queued exactly when
 *	the item is WAITING.
 * @state: KWQ_ITEM_* bits.
 * @len: key length in bytes.
 * @key: the key bytes.
 */
struct kwq_item {
	struct rhash_head hnode;
	struct list_head ready;
	struct timerqueue_node wait;
	u16 state;
	u16 len;
	u8 key[];
};

/**
 * struct kwq - a work queue
 * @lock: protects all fields below up to @registered, and every item.
 * @items: key -> struct kwq_item.
 * @ready: items to hand out, oldest first.
 * @waiting: items waiting for a deadline, earliest first (ties in the
 *	order they were added).
 * @armed: the expiry last given to the timer, KTIME_MAX for none.
 * @n_queued: length of @ready.
 * @n_processing: items with KWQ_ITEM_PROCESSING.
 * @n_dirty_processing: items with both KWQ_ITEM_PROCESSING and DIRTY.
 * @n_waiting: items on @waiting.
 * @n_items: records in @items.
 * @shutting_down: adds are refused.
 * @drainers: callers waiting in kwq_shutdown_drain().
 * @shutdown_seq: bumped by kwq_shutdown(); a drainer that sees it change
 *	was cut short.
 * @dead: destroyed; every operation fails with -EIDRM.
 * @adds: counter, see struct kwq_stats.
 * @dedups: counter, see struct kwq_stats.
 * @gets: counter, see struct kwq_stats.
 * @dones: counter, see struct kwq_stats.
 * @requeues: counter, see struct kwq_stats.
 * @refused: counter, see struct kwq_stats.
 * @fired: counter, see struct kwq_stats.
 * @cancels: counter, see struct kwq_stats.
 * @absorbed: counter, see struct kwq_stats.
 * @waits_dropped: counter, see struct kwq_stats.
 * @registered: on the registry list; protected by kwq_registry_lock.
 * @get_wait: consumers blocked in kwq_get() (exclusive) and pollers.
 * @drain_wait: callers blocked in kwq_shutdown_drain().
 * @ref: references; the last kwq_put() frees the queue.
 * @timer: the soft hrtimer armed for the earliest waiting deadline.
 * @clock: a test clock, or NULL for ktime_get() and @timer.
 * @policy: enum kwq_wait_policy used when an add names none.
 * @gfp: allocation flags for key records.
 * @max_items: limit on @n_items.
 * @mode: permission bits for opens from user space.
 * @uid: owner.
 * @gid: owning group.
 * @node: link in the registry list; protected by kwq_registry_lock.
 * @name: NUL-terminated name, empty for anonymous queues.
 */
struct kwq {
	spinlock_t lock;		/* see the comment at the top */
	struct rhashtable items;
	struct list_head ready;
	struct timerqueue_head waiting;
	ktime_t armed;
	u64 n_queued;
	u64 n_processing;
	u64 n_dirty_processing;
	u64 n_waiting;
	u64 n_items;
	bool shutting_down;
	bool dead;
	u32 drainers;
	u32 shutdown_seq;
	u64 adds;
	u64 dedups;
	u64 gets;
	u64 dones;
	u64 requeues;
	u64 refused;
	u64 fired;
	u64 cancels;
	u64 absorbed;
	u64 waits_dropped;

	bool registered;
	wait_queue_head_t get_wait;
	wait_queue_head_t drain_wait;
	struct kref ref;
	struct hrtimer timer;
	struct kwq_clock *clock;
	u32 policy;
	gfp_t gfp;
	u32 max_items;
	umode_t mode;
	kuid_t uid;
	kgid_t gid;
	struct list_head node;
	char name[KWQ_NAME_MAX];
};

/* Module parameters (kwq_main.c). */
extern unsigned int kwq_max_queues;
extern unsigned int kwq_max_items_per_queue;

/* kwq_core.c */
bool kwq_key_valid(const void *key, u32 len);
void kwq_kill(struct kwq *q);
bool kwq_readable(struct kwq *q);

/* kwq_registry.c */
bool kwq_name_valid(const char *name);
int kwq_registry_add(struct kwq *q);
void kwq_registry_del(struct kwq *q);
void kwq_registry_kill_all(void);

/* kwq_dev.c */
int kwq_dev_init(void);
void kwq_dev_exit(void);

#endif /* _KWQ_INTERNAL_H */
