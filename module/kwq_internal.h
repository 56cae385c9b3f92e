/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kwq internals shared by the core, the registry and the device.
 *
 * Locking (see Documentation/kwq-core.rst):
 *  - kwq.lock, a BH-safe spinlock, protects everything in struct kwq that
 *    is not constant after creation: the key table, the ready list, the
 *    counters and the state flags, and every kwq_item. It is taken with
 *    kwq_lock() (spin_lock_bh(), and a new instant for the cached clocks)
 *    from process context, from the resize worker (kwq_resize_work())
 *    and from softirq context (the soft hrtimers of delays). In hard
 *    interrupt context only the queue's hard timer takes it, and only
 *    with spin_trylock() (kwq_trylock_hardirq()).
 *  - kwq_registry_lock, a mutex, protects the list of named queues and
 *    kwq.registered. It is taken before kwq.lock, never inside it.
 *  - kwq.ref (kref) keeps the object alive; each sleeper holds one.
 *
 * A flag read without a lock (READ_ONCE()) is a u8, never a bool: with
 * UBSAN's bool check on, gcc 12 instruments a READ_ONCE() of a _Bool as
 * a plain read, so KCSAN takes every such read for a data race
 * (scripts/lint.sh refuses the pattern).
 */
#ifndef _KWQ_INTERNAL_H
#define _KWQ_INTERNAL_H

#include <linux/hrtimer.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/rbtree.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/timerqueue.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

#include "kwq.h"
#include "kwq_acct.h"
#include "kwq_compat.h"
#include "kwq_far.h"
#include "kwq_item.h"
#include "kwq_limiter.h"
#include "kwq_order.h"
#include "kwq_table.h"
#include "kwq_tenant.h"

struct kwq_scope;

/*
 * Without PREEMPT_RT a queue's timer runs in the timer interrupt, with a
 * soft timer for what it cannot do there (kwq_timer_hard_fn()); with it,
 * where kwq.lock sleeps, the timer is soft. It is never marked _HARD: its
 * callback takes spinlock_t locks (kwq.lock, tried; the wait queues it
 * wakes), which PREEMPT_RT's rules allow only in a timer that RT moves to
 * softirq, as timerfd's, and lockdep checks it so on every kernel.
 */
#define KWQ_TIMER_HARD	(!IS_ENABLED(CONFIG_PREEMPT_RT))
#define KWQ_TIMER_MODE	HRTIMER_MODE_ABS

struct kwq_side_chunk;

/*
 * Most unused small records a queue keeps for new keys (kwq.spare): a
 * 512-key batch's worth, so that batches up to that size, done and then
 * added again, take no trip through the slab allocator per key (64 kept
 * a 512-key batch 25 % dearer per key than a 64-key one). At most 40 KiB
 * per queue for 32-byte keys, still charged to their allocators' memcg.
 */
#define KWQ_SPARE_MAX		512

/*
 * Sides (struct kwq_side) come a page at a time (struct kwq_side_chunk,
 * kwq_record.c: a link, then the sides). Once none is in use, a queue
 * keeps the pages of KWQ_SPARE_MAX sides (10 pages, 40 KiB) for the
 * same reason it keeps spare records, and frees the rest.
 */
#define KWQ_SIDES_PER_CHUNK	((PAGE_SIZE - sizeof(void *)) / sizeof(struct kwq_side))
#define KWQ_SIDES_KEPT		(DIV_ROUND_UP(KWQ_SPARE_MAX, KWQ_SIDES_PER_CHUNK) * \
				 KWQ_SIDES_PER_CHUNK)

/**
 * struct kwq_busy - the processing keys of one holder, oldest first
 * @items: the items, linked through kwq_item.ready in the order they
 *	were taken, which is the order of their tickets.
 * @node: in kwq.busy while @items is not empty, ordered by the ticket of
 *	its first item; RB_EMPTY_NODE otherwise.
 *
 * Protected by the queue's kwq.lock. A key being processed is on exactly
 * one: its lease's, or the queue's kwq.unleased. The oldest key being
 * processed is the first of the leftmost in kwq.busy.
 */
struct kwq_busy {
	struct list_head items;
	struct rb_node node;
};

/**
 * struct kwq_lease - keys taken by one consumer that must not be lost
 * @busy: the processing items the lease holds (kwq_item.holder), in the
 *	order they were taken; protected by the queue's kwq.lock, set up by
 *	kwq_lease_begin().
 *
 * An open /dev/kwq file holds one. When it closes, kwq_lease_end() puts
 * every key it still holds back at the head of the queue, visiting only
 * @busy, KWQ_LOCK_STEP keys per hold of the lock.
 */
struct kwq_lease {
	struct kwq_busy busy;
};

/**
 * struct kwq_handout - what a get tells its caller beside the key
 * @ticket: the hand-out's ticket (kwq_item.ticket).
 * @latency_ns: the queue latency the get recorded, so that a key that
 *	cannot be delivered goes back with its own (kwq_undeliverable()).
 * @payload_cap: in, with @payload_want: the size of the caller's payload
 *	buffer; a longer payload fails the get with -EMSGSIZE, the key
 *	left queued.
 * @payload_want: in: the caller copies the payload out: the get sets
 *	@payload. Without it the key is handed out and only @payload_len
 *	is reported.
 * @payload_len: out: the key's payload length, 0 for none (also on
 *	-EMSGSIZE).
 * @payload: out: a reference to the key's payload, or NULL; the caller
 *	copies it once unlocked and drops it with kwq_payload_put().
 *
 * Declare one zeroed (``= {}``): a get that does not ask for the payload
 * leaves it with the key's record.
 */
struct kwq_handout {
	u64 ticket;
	u64 latency_ns;
	u32 payload_cap;
	bool payload_want;
	u32 payload_len;
	struct kwq_payload *payload;
};

/* Histogram buckets: upper bounds 10 ns .. 10 s by factors of 10, then +Inf. */
#define KWQ_HIST_BUCKETS	KWQ_STATS_BUCKETS

/**
 * struct kwq_hist - a latency histogram (client-go's buckets)
 * @count: observations per bucket, not cumulative; the last is +Inf.
 * @sum_ns: sum of the observations.
 */
struct kwq_hist {
	u64 count[KWQ_HIST_BUCKETS];
	u64 sum_ns;
};

/**
 * struct kwq - a work queue
 * @lock: protects all fields below up to @registered, and every item.
 * @items: key -> struct kwq_item (kwq_table.h).
 * @order: the items to hand out, in the order of the queue's policy
 *	(kwq_order.h: FIFO, priorities, tenants), chosen at creation.
 * @waiting: the entries (union kwq_entry) of the items waiting for a
 *	deadline, earliest first (ties in the order they were added), but for
 *	those in @far.
 * @far: NULL, or the slots of far deadlines (kwq_far.h), allocated once
 *	KWQ_FAR_MIN_WAITING keys wait, freed with the queue; under @lock.
 * @armed: the expiry last given to the timer, KTIME_MAX for none.
 * @busy: the struct kwq_busy lists that hold processing items, by the
 *	ticket of their oldest (so the longest running key is the first of
 *	the leftmost list).
 * @unleased: the processing items taken without a lease.
 * @backoff: backoff-only items (failures but no state), least recently
 *	active first; at most max_backoff_keys of them.
 * @n_backoff: length of @backoff.
 * @spare: unused records of small keys, kept for new keys instead of
 *	freeing and allocating, a stack linked through kwq_item.hnext; each
 *	stays charged to whoever allocated it.
 * @n_spare: length of @spare, at most KWQ_SPARE_MAX.
 * @side_spare: unused sides (struct kwq_side), a stack linked through
 *	kwq_side.next: an add or get that may need a side makes sure of one
 *	here before it changes anything (kwq_side_ensure_locked()), so the
 *	transitions that take one never fail. Each stays charged to whoever
 *	allocated it.
 * @n_side_spare: length of @side_spare.
 * @side_chunks: the pages the queue's sides were carved from
 *	(kwq_record.c), linked through their first word. Once no side is
 *	in use, @sides_work frees all but KWQ_SIDES_KEPT sides' worth;
 *	those go with the queue.
 * @n_sides: sides carved from @side_chunks, spare or in use.
 * @sides_trimming: @sides_work is queued and holds a reference.
 * @rl: the limiter of add-rate-limited; its buckets change under @lock.
 * @n_queued: keys ready to hand out (in @order). Also
 *	read without the lock, as a hint, by a get batch after its first
 *	key (kwq_get_batch_leased()), and by a /dev/kwq get batch to size
 *	its chunks and to end after its first key (kwq_dev_batch.c).
 * @n_processing: items with KWQ_ITEM_PROCESSING.
 * @n_dirty_processing: items with both KWQ_ITEM_PROCESSING and DIRTY.
 * @n_waiting: WAITING items, on @waiting or in @far.
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
 * @lease_requeues: counter, see struct kwq_stats.
 * @rate_limited: counter, see struct kwq_stats.
 * @tokens_returned: counter, see struct kwq_stats.
 * @backoff_evictions: counter, see struct kwq_stats.
 * @retries: counter, see struct kwq_stats.
 * @forgets: counter, see struct kwq_stats.
 * @queue_latency: time keys spent ready before a get.
 * @work_duration: time from get to done.
 * @processing_expiries: counter, see struct kwq_stats.
 * @debounced: counter, see struct kwq_stats.
 * @debounce_capped: counter, see struct kwq_stats.
 * @processing_timeout: 0, or ns a key may stay processing.
 * @payload_max: 0, or the longest payload an add may carry (kwq_payload.h);
 *	constant after creation.
 * @payloads_replaced: counter, see struct kwq_stats.
 * @payload_bytes: payload bytes the records hold, see struct kwq_stats.
 * @now: the instant of the current holder of @lock (kwq_now(), or an
 *	add's start, kwq_now_from()); between holds, the latest instant any
 *	hold used, which the next add's start may not go below.
 * @stamp_now: local_clock() read by the current holder of @lock
 *	(kwq_local_now(): the stamps, and the start of a step's hold).
 * @now_valid: @now is the current hold's (read or set since @lock was
 *	last taken).
 * @stamp_valid: @stamp_now was read since @lock was last taken.
 * @timer_cpu_idle: without PREEMPT_RT, @timer was last restarted by a
 *	run of it that found @timer_cpu idle; false after any other start
 *	(an add's, a pull's). Written under @lock; read without it by
 *	kwq_timer_pull() as a hint. A u8 (see the top of this file).
 * @next_ticket: the ticket the last hand-out got; 64-bit, never wraps.
 * @timer_keeper: 1 while one sleeping consumer keeps the timer
 *	(kwq_consumer_timer()): with PREEMPT_RT its own hrtimer for @armed,
 *	so that a deadline wakes one consumer, not all; without it @timer
 *	itself, pulled to the keeper's CPU. Atomic, no lock.
 * @timer_cpu: without PREEMPT_RT, the CPU @timer was last (re)started
 *	on, -1 before the first start; a hint (kwq_timer_note_cpu()). Like
 *	@timer_cpu_idle.
 * @consumer_wakes: times a consumer in kwq_get() woke up and found no
 *	key (for tests of the wake-up fan-out). Atomic, no lock.
 * @busy_stamps: sum of kwq_item.stamp over the processing items (mod
 *	2^64), so that kwq_stats() reports the unfinished work without a
 *	walk. Under @lock.
 * @expiring: the processing timeout's give-back while the timer expires
 *	keys over several runs; on kwq_order.give_backs only meanwhile.
 *	Under @lock.
 * @flushing: drains queueing the waiting keys, a step at a time
 *	(kwq_shutdown_drain() with KWQ_DRAIN_FLUSH_WAITING); consumers wait
 *	for those keys meanwhile. Under @lock.
 * @hold_max_keys: most keys one hold of @lock handled in a walk that
 *	works in steps (kwq_hold_end()); at most KWQ_LOCK_STEP. Under @lock.
 * @hold_max_ns: longest such hold, ns of local_clock(). Under @lock.
 * @registered: on the registry list; protected by kwq_registry_lock.
 * @get_wait: consumers blocked in kwq_get() (exclusive) and pollers.
 * @drain_wait: callers blocked in kwq_shutdown_drain().
 * @ref: references; the last kwq_put() frees the queue.
 * @resize_work: resizes @items (kwq_resize_work()).
 * @sides_work: frees the chunks of sides no key uses (kwq_sides_work()).
 * @timer: the hrtimer armed for @armed: the earliest waiting deadline,
 *	a far slot's move (kwq_far.h) or a processing timeout. It expires in
 *	the timer interrupt (kwq_timer_hard_fn()), or with PREEMPT_RT in
 *	softirq context (KWQ_TIMER_HARD).
 * @rerun: without PREEMPT_RT, the soft hrtimer that runs at once what
 *	@timer leaves: keys still due after its step, a step it found the
 *	lock held for, a queue shutting down.
 * @hard_run: @timer's callback is running its step, so kwq_arm_locked()
 *	sets @timer's expiry instead of starting it, and the callback
 *	restarts it if @armed is not KTIME_MAX; unless another CPU started
 *	@timer again before the callback took @lock: then it is queued, and
 *	kwq_arm_locked() starts it as anywhere else. Under @lock.
 * @clock: a test clock, or NULL for ktime_get() and @timer.
 * @policy: enum kwq_wait_policy used when an add names none.
 * @gfp: allocation flags for key records.
 * @max_items: limit on the records in @items (kwq_table.n).
 * @max_backoff: limit on @n_backoff.
 * @mode: permission bits for opens from user space.
 * @uid: owner.
 * @gid: owning group.
 * @node: link in its scope's list of queues; protected by
 *	kwq_registry_lock.
 * @scope: the scope the name lives in (kwq_scope.h), NULL once
 *	unregistered; protected by kwq_registry_lock.
 * @debugfs: the queue's file under /sys/kernel/debug/kwq, while registered.
 * @name: NUL-terminated name, empty for anonymous queues.
 * @acct: who pays for the queue (kwq_acct.h): the creator's memory cgroup
 *	for the bucket arrays, the owner's key-record bytes; set at
 *	creation, released when the queue is freed.
 */
/*
 * Who may touch a field of struct kwq, tagged at each field (as
 * kernel/workqueue.c does); the kernel-doc above says what each one is:
 *
 * I: set by kwq_queue_new() before anyone else sees the queue, then
 *    constant: read without a lock.
 * L: kwq.lock. "read anywhere": written under kwq.lock with
 *    WRITE_ONCE(), also read without it, as a hint, with READ_ONCE().
 * R: kwq_registry_lock (a mutex, taken before kwq.lock, never inside).
 * A: atomic, or a kref: no lock.
 * S: has its own synchronization (a wait queue's lock, the workqueue's,
 *    the hrtimer's).
 */
struct kwq {
	spinlock_t lock;		/* the L of the tags below */
	struct kwq_table items;		/* L */
	struct kwq_order order;		/* L, its policy I */
	struct timerqueue_head waiting;	/* L */
	struct kwq_far *far;		/* L */
	ktime_t armed;			/* L, read anywhere */
	struct rb_root_cached busy;	/* L */
	struct kwq_busy unleased;	/* L */
	struct list_head backoff;	/* L */
	u64 n_backoff;			/* L */
	struct kwq_item *spare;		/* L */
	u32 n_spare;			/* L */
	struct kwq_side *side_spare;	/* L */
	u32 n_side_spare;		/* L */
	struct kwq_side_chunk *side_chunks; /* L */
	u32 n_sides;			/* L */
	bool sides_trimming;		/* L */
	struct kwq_rl rl;		/* L */
	u64 n_queued;			/* L, read anywhere */
	u64 n_processing;		/* L */
	u64 n_dirty_processing;		/* L */
	u64 n_waiting;			/* L */
	bool shutting_down;		/* L */
	bool dead;			/* L */
	bool hard_run;			/* L */
	u32 drainers;			/* L */
	u32 shutdown_seq;		/* L */
	u64 adds;			/* L */
	u64 dedups;			/* L */
	u64 gets;			/* L */
	u64 dones;			/* L */
	u64 requeues;			/* L */
	u64 refused;			/* L */
	u64 fired;			/* L */
	u64 cancels;			/* L */
	u64 absorbed;			/* L */
	u64 waits_dropped;		/* L */
	u64 lease_requeues;		/* L */
	u64 rate_limited;		/* L */
	u64 tokens_returned;		/* L */
	u64 backoff_evictions;		/* L */
	u64 retries;			/* L */
	u64 forgets;			/* L */
	struct kwq_hist queue_latency;	/* L */
	struct kwq_hist work_duration;	/* L */
	u64 processing_expiries;	/* L */
	u64 debounced;			/* L */
	u64 debounce_capped;		/* L */
	u64 processing_timeout;		/* I */
	u32 payload_max;		/* I */
	u64 payloads_replaced;		/* L */
	u64 payload_bytes;		/* L */
	ktime_t now;			/* L */
	u64 stamp_now;			/* L */
	bool now_valid;			/* L */
	bool stamp_valid;		/* L */
	u8 timer_cpu_idle;		/* L, read anywhere */
	u64 next_ticket;		/* L */
	atomic_t timer_keeper;		/* A */
	int timer_cpu;			/* L, read anywhere */
	atomic64_t consumer_wakes;	/* A */
	/* Bounded work under @lock (Documentation/kwq-core.rst). */
	u64 busy_stamps;		/* L */
	struct kwq_give_back expiring;	/* L */
	u32 flushing;			/* L */
	u32 hold_max_keys;		/* L */
	u64 hold_max_ns;		/* L */

	bool registered;		/* R */
	wait_queue_head_t get_wait;	/* S */
	wait_queue_head_t drain_wait;	/* S */
	struct kref ref;		/* A */
	struct work_struct resize_work;	/* S */
	struct work_struct sides_work;	/* S */
	struct hrtimer timer;		/* S */
	struct hrtimer rerun;		/* S */
	struct kwq_clock *clock;	/* I */
	u32 policy;			/* I */
	gfp_t gfp;			/* I */
	u32 max_items;			/* I */
	u32 max_backoff;		/* I */
	umode_t mode;			/* I */
	kuid_t uid;			/* I */
	kgid_t gid;			/* I */
	struct list_head node;		/* R */
	struct kwq_scope *scope;	/* R */
	struct dentry *debugfs;		/* R */
	char name[KWQ_NAME_MAX];	/* I */

	/* Accounting of queues made by user programs (kwq_acct.c). */
	struct kwq_acct acct;		/* I, its bytes L */
};

/* Module parameters (kwq_main.c). */
extern unsigned int kwq_max_payload;
extern unsigned int kwq_max_queues;
extern unsigned int kwq_max_queues_per_user;
extern unsigned int kwq_max_items_per_queue;
extern unsigned int kwq_max_backoff_keys;

/* The queue core (kwq_core.h lists its files) */
int kwq_core_init(void);
void kwq_core_exit(void);

/**
 * kwq_key_valid() - whether a key may be stored
 * @key: key bytes.
 * @len: key length.
 *
 * Return: true for a non-NULL key of 1 to KWQ_KEY_MAX bytes.
 */
static inline bool kwq_key_valid(const void *key, u32 len)
{
	return key && len >= 1 && len <= KWQ_KEY_MAX;
}

struct kwq *kwq_queue_new(const char *name, const struct kwq_attr *attr);
void kwq_queue_end(struct kwq *q);
void kwq_kill(struct kwq *q);
bool kwq_readable(struct kwq *q);
void kwq_lease_begin(struct kwq *q, struct kwq_lease *lease);
void kwq_lease_end(struct kwq *q, struct kwq_lease *lease);
void kwq_lease_end_ctx(struct kwq *q, struct kwq_lease *lease, bool may_sleep);
void kwq_shutdown_ctx(struct kwq *q, bool may_sleep);
bool kwq_pool_handles(const struct kwq *q);
int kwq_get_wait(struct kwq *q, void *buf, u32 cap, u32 *len, ktime_t deadline,
		 struct kwq_lease *lease, struct kwq_handout *h, const u8 *stop);
int kwq_get_leased(struct kwq *q, void *buf, u32 cap, u32 *len, ktime_t deadline,
		   struct kwq_lease *lease, struct kwq_handout *h);
int kwq_done_leased(struct kwq *q, const void *key, u32 len, struct kwq_lease *lease,
		    u64 ticket);
int kwq_done_get_leased(struct kwq *q, const void *dkey, u32 dlen, u64 dticket,
			int *done_result, void *buf, u32 cap, u32 *len, ktime_t deadline,
			struct kwq_lease *done_lease, struct kwq_lease *get_lease,
			struct kwq_handout *h);
int kwq_requeue_leased(struct kwq *q, const void *key, u32 len, struct kwq_lease *lease,
		       u64 ticket);
void kwq_undeliverable(struct kwq *q, const void *key, u32 len, const struct kwq_handout *h);

/* The hold's instant is over: its next holder reads the clocks anew. */
static inline void kwq_instant_end(struct kwq *q)
{
	q->now_valid = false;
	q->stamp_valid = false;
}

/*
 * Take and release kwq.lock. Each clock is read at most once while the
 * lock is held (kwq_now(), kwq_stamp_now()): everything a critical section
 * does happens at one instant, and a batch of keys costs one clock read,
 * not one per key.
 */
static inline void kwq_lock(struct kwq *q)
	__acquires(&q->lock)
{
	/*
	 * Every entry point comes through here. spin_unlock_bh() must not
	 * run with interrupts off, and on PREEMPT_RT this lock sleeps: no
	 * caller may hold a raw spinlock or have interrupts disabled.
	 */
	lockdep_assert_irqs_enabled();
	spin_lock_bh(&q->lock);
	kwq_instant_end(q);
}

static inline void kwq_unlock(struct kwq *q)
	__releases(&q->lock)
{
	/* Whoever takes the lock next reads the clocks again. */
	kwq_instant_end(q);
	spin_unlock_bh(&q->lock);
}

/*
 * kwq_lock() and kwq_unlock() for the hard timer's callback
 * (kwq_timer_hard_fn()), in hard interrupt context: the lock is only
 * tried, since everywhere else it is taken with interrupts on. Lockdep
 * does not count a trylock as a use in interrupt context, and with the
 * lock held no caller of kwq_lock() can run on this CPU until it is
 * dropped. Never with PREEMPT_RT, where the lock sleeps.
 */
static inline bool kwq_trylock_hardirq(struct kwq *q)
	kwq_cond_acquires(&q->lock)
{
	lockdep_assert_in_irq();
	if (!spin_trylock(&q->lock))
		return false;
	kwq_instant_end(q);
	return true;
}

static inline void kwq_unlock_hardirq(struct kwq *q)
	__releases(&q->lock)
{
	kwq_instant_end(q);
	spin_unlock(&q->lock);
}

/**
 * struct kwq_unlocked_work - what a change under kwq.lock leaves for after
 *	the unlock
 * @stale: records to free (linked through kwq_item.ready).
 * @ready: keys made ready: consumers to wake.
 * @payload: the payload of the add under way (kwq_add_ex()), or NULL;
 *	the add stores it and sets NULL. One left here (the add failed) is
 *	dropped after the unlock.
 */
struct kwq_unlocked_work {
	struct list_head stale;
	unsigned int ready;
	struct kwq_payload *payload;
};

static inline void kwq_unlocked_work_init(struct kwq_unlocked_work *w)
{
	INIT_LIST_HEAD(&w->stale);
	w->ready = 0;
	w->payload = NULL;
}

/* kwq_record.c: sides (struct kwq_side), which kwq_state.h takes and returns. */
bool kwq_side_ensure_slow_locked(struct kwq *q);
int kwq_side_reserve_locked(struct kwq *q, u32 want, gfp_t gfp);
int kwq_side_refill_locked(struct kwq *q, gfp_t gfp);
int kwq_side_refill(struct kwq *q, gfp_t gfp);
void kwq_sides_idle_locked(struct kwq *q);

/*
 * Before an add or a get that may take a side changes anything: make sure
 * the queue has a spare one. False if none could be had without sleeping.
 */
static inline bool kwq_side_ensure_locked(struct kwq *q)
{
	return likely(q->side_spare) || kwq_side_ensure_slow_locked(q);
}

/*
 * The steps of single-key calls, for batches (kwq_batch.c; its adds are in
 * kwq_add.h, its takes and dones in kwq_handout.h).
 */
bool kwq_add_opts_ok(const struct kwq *q, const struct kwq_add_opts *o);
struct kwq_payload;
int kwq_add_ex_payload(struct kwq *q, const void *key, u32 len, const struct kwq_add_opts *o,
		       struct kwq_payload *p);

/* kwq_batch.c */
int kwq_done_batch_leased(struct kwq *q, const struct kwq_key *keys, u32 n,
			  struct kwq_lease *lease, u32 *results);
u32 kwq_get_batch_leased(struct kwq *q, struct kwq_key *out, const u32 *caps, u32 n,
			 void *buf, u32 size, ktime_t deadline, struct kwq_lease *lease,
			 u64 *latency, int *err);

/* kwq_registry.c */
struct ipc_namespace;
struct user_namespace;
bool kwq_name_valid(const char *name);
struct ipc_namespace *kwq_scope_current(void);
void kwq_scope_put(struct ipc_namespace *ns);
struct user_namespace *kwq_scope_user_ns(const struct ipc_namespace *ns);
struct kwq *kwq_create_in(const char *name, const struct kwq_attr *attr,
			  struct ipc_namespace *scope);
struct kwq *kwq_lookup_in(const char *name, const struct ipc_namespace *scope);
void kwq_registry_del(struct kwq *q);
void kwq_registry_kill_all(void);
long kwq_registry_names(const struct ipc_namespace *scope, u32 cap, char **names);
struct kwq_queue_info;
long kwq_registry_list_all(u32 cap, struct kwq_queue_info **info);
int kwq_registry_destroy_in(const char *name, u32 ipc_inum, bool kernel_scope);
int kwq_scope_limits(struct ipc_namespace *scope, bool set, u32 *queues_max, u32 *queues);

/* kwq_debugfs.c */
struct dentry *kwq_debugfs_add(struct kwq *q, const struct ipc_namespace *scope);
void kwq_debugfs_del(struct dentry *file);
void kwq_debugfs_init(void);
void kwq_debugfs_exit(void);

/**
 * struct kwq_file - one open file of /dev/kwq
 * @attach_lock: serializes KWQ_IOC_CREATE and KWQ_IOC_OPEN on this file.
 * @q: the attached queue; written once under @attach_lock with release
 *	semantics, read without a lock with acquire semantics.
 * @lease: the keys this file holds; set up before @q is published.
 * @attach_wait: pollers of a file not attached yet. An epoll set joins
 *	the wait queues poll names when the file is added to it, not later:
 *	if it came before the attach, @forward carries the queue's wake-ups
 *	here.
 * @forward: an entry in kwq.get_wait that wakes @attach_wait; used only
 *	if someone polled the file before the attach (@forwarding).
 * @forwarding: @forward is on the queue's wait queue; set at the attach.
 * @scope: the IPC namespace of the process that opened the file (a
 *	reference): where its CREATE, OPEN and LIST look. Constant.
 * @kernel_scope: @q was opened with KWQ_SCOPE_KERNEL; capabilities then
 *	count in the initial user namespace, else in @scope's. Written
 *	before @q is published.
 * @chunk: buffer of batch calls, allocated by the first; one call at a
 *	time uses it, the others allocate their own.
 * @chunk_busy: bit 0 is set while a call uses @chunk; only that call
 *	writes @chunk.
 */
struct kwq_file {
	struct mutex attach_lock;	/* serializes CREATE and OPEN */
	struct kwq *q;
	struct kwq_lease lease;
	wait_queue_head_t attach_wait;
	struct wait_queue_entry forward;
	bool forwarding;
	struct ipc_namespace *scope;
	bool kernel_scope;
	struct kwq_chunk *chunk;
	unsigned long chunk_busy;
};

/* Whether @n bytes at @p are all zero; reserved fields are small u64 arrays. */
static inline bool kwq_is_zero(const void *p, size_t n)
{
	const u64 *w = p;
	u64 acc = 0;
	size_t i;

	if (!__builtin_constant_p(n) || n % sizeof(u64) || n > 8 * sizeof(u64))
		return !memchr_inv(p, 0, n);
	for (i = 0; i < n / sizeof(u64); i++)
		acc |= w[i];
	return !acc;
}

struct file;
struct kwq_chunk;

/* kwq_dev.c */
int kwq_dev_init(void);
void kwq_dev_exit(void);

/* kwq_dev_batch.c */
long kwq_ioc_batch(struct file *file, struct kwq_file *kf, unsigned int cmd,
		   void __user *uarg);
void kwq_file_batch_release(struct kwq_file *kf);

#endif /* _KWQ_INTERNAL_H */
