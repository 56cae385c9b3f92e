/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kwq: deduplicating work queues, the API for other kernel modules.
 *
 * A queue holds keys (opaque byte strings). A key added many times before
 * a worker takes it is handed out once; a key is never handed to two
 * workers at once; a key added while being processed is handed out again
 * after kwq_done(). Queues made here and through /dev/kwq are the same
 * objects. See Documentation/kwq-core.rst for the state machine and the
 * lock rules.
 *
 * Every get stamps the hand-out with a ticket (64-bit, never reused in
 * a queue). kwq_done_ticket() and kwq_requeue_ticket() end only the
 * hand-out they name: after a processing timeout gave a key back and
 * another worker took it, the first worker's late done fails with
 * -ENOENT instead of ending the second's. kwq_done() and kwq_requeue()
 * name no hand-out; they are refused (-EINVAL) on a queue with a
 * processing timeout, where a hand-out can be taken back: there kernel
 * callers use the ticketed calls (and pass kwq_get_batch()'s tickets on
 * to kwq_done_batch()).
 *
 * Calling contexts, in short: kwq_create(), kwq_lookup(), kwq_destroy(),
 * kwq_add(), kwq_get(), their batch forms kwq_add_batch() and
 * kwq_get_batch(), and kwq_shutdown_drain() may sleep, and so may the
 * kwq_put() that drops the last reference. kwq_add_atomic(), kwq_done(),
 * kwq_done_batch(), kwq_requeue(), kwq_len(), kwq_stats(), kwq_shutdown() and
 * kwq_shutting_down() take the queue's lock with spin_lock_bh() and do not
 * sleep on a kernel without PREEMPT_RT: they may be called from process or
 * softirq context (including soft hrtimer callbacks) with interrupts
 * enabled, holding a spinlock_t or a mutex, never from hard interrupts,
 * with interrupts disabled (spin_lock_irqsave() held) or under a
 * raw_spinlock_t. On PREEMPT_RT the queue's lock is a sleeping lock: there
 * they also must not be called with preemption disabled. Lockdep checks
 * the interrupt rule at every entry.
 */
#ifndef _KWQ_H
#define _KWQ_H

#include <linux/ktime.h>
#include <linux/types.h>
#include <linux/uidgid.h>
#include <linux/kwq.h>		/* uapi: limits, results, struct kwq_stats */

struct kwq;
struct user_namespace;

/**
 * struct kwq_clock - where a queue reads the time and asks to be woken
 * @now: the current time, CLOCK_MONOTONIC-like. Called with the queue's
 *	lock held or not (an add that may wait reads its start before it
 *	takes the lock), so possibly from several CPUs at once: must not
 *	sleep or call into kwq.
 * @program: arrange for kwq_run_due(@q) to be called at @expires, or not
 *	at all for KTIME_MAX; replaces any earlier request. Called with the
 *	queue's lock held: must not sleep or call back into kwq. A destroyed
 *	queue asks for KTIME_MAX, and so does a queue before its memory is
 *	freed: after that call the clock must forget @q.
 *
 * Forgetting is not enough for a call of kwq_run_due(@q) the clock has
 * already begun (it may be waiting for the lock that the release holds):
 * a clock whose calls may overlap the last kwq_put() holds a reference
 * (kwq_get_ref()) across each call, or orders its calls before that put
 * itself, as a test that steps the clock in the thread that destroys the
 * queue does.
 *
 * Queues use the monotonic clock and their own hrtimer (expiring in the
 * timer interrupt, or in softirq context with PREEMPT_RT) unless made
 * with a clock of their own; tests use one to step time
 * deterministically.
 */
struct kwq_clock {
	ktime_t (*now)(struct kwq_clock *clock);
	void (*program)(struct kwq_clock *clock, struct kwq *q, ktime_t expires);
};

/* Deadlines for kwq_get() and kwq_shutdown_drain(), CLOCK_MONOTONIC. */
#define KWQ_NOWAIT	((ktime_t)0)
#define KWQ_FOREVER	KTIME_MAX

/**
 * struct kwq_attr - how a queue is made
 * @max_items: most key records the queue holds at once; 0 means the
 *	module's default; larger values are clamped to it.
 * @account: charge key records to the memory cgroup of the task that
 *	adds them (GFP_KERNEL_ACCOUNT); set for queues made by user programs.
 *	Such a queue counts against its owner's max_queues_per_user and
 *	max_key_bytes_per_user.
 * @exempt: with @account, neither limit refuses the queue or its adds
 *	(/dev/kwq sets it when the descriptor's opener has CAP_SYS_RESOURCE).
 * @mode: permission bits checked when a user program opens the queue.
 * @uid: owner checked with @mode.
 * @user_ns: with @account, the user namespace of the creator: @uid is
 *	charged there and so is the owner of every user namespace above it
 *	(Documentation/kwq-limits.rst); NULL for the initial one. Only read
 *	while the queue is made.
 * @gid: group checked with @mode.
 * @policy: enum kwq_wait_policy for adds of waiting keys; 0 means
 *	KWQ_POLICY_PROMOTE.
 * @clock: NULL for the real clock, or a clock of the caller's that
 *	outlives the queue.
 * @max_backoff_keys: most keys kept only for their failure count (the
 *	least recently active are forgotten first); 0 means the module's
 *	default; larger values are clamped to it.
 * @ratelimit: the limiter of kwq_add_rate_limited(), copied; NULL for
 *	client-go's default controller limiter (exponential 5 ms..1000 s and
 *	a 10/s bucket of 100).
 * @processing_timeout_ns: 0, or how long a key may stay processing before
 *	it is put back at the head of the queue (at most KWQ_DELAY_MAX_NS).
 * @priority: a priority queue (KWQ_CREATE_PRIORITY): kwq_add_ex() takes
 *	struct kwq_add_opts.priority.
 * @aging_ns: with @priority, as struct kwq_ioc_create.aging_ns (0 for
 *	KWQ_AGING_DEFAULT_NS, at most KWQ_AGING_MAX_NS); otherwise must be 0.
 * @payload_max: 0, or the longest payload an add may carry, in bytes, at
 *	most the module parameter max_payload (-EINVAL otherwise); see
 *	kwq_get_payload() and Documentation/kwq-payloads.rst.
 * @tenant_depth: 0 for no tenants, or a tenant queue (KWQ_CREATE_TENANT)
 *	with this tenant rule, 1 to KWQ_TENANT_DEPTH_MAX (-EINVAL above):
 *	gets rotate across tenants, Documentation/kwq-tenants.rst.
 * @manual_clock: a queue on a manual clock of its own (KWQ_CREATE_MANUAL_CLOCK),
 *	which starts at 0 and moves only by kwq_clock_step(); -EINVAL with
 *	@clock. The deadlines of kwq_get() and kwq_shutdown_drain() stay
 *	CLOCK_MONOTONIC, as struct kwq_ioc_clock_step describes.
 */
struct kwq_attr {
	u32 max_items;
	bool account;
	bool exempt;
	umode_t mode;
	kuid_t uid;
	struct user_namespace *user_ns;
	kgid_t gid;
	u32 policy;
	struct kwq_clock *clock;
	u32 max_backoff_keys;
	const struct kwq_ratelimit *ratelimit;
	u64 processing_timeout_ns;
	bool priority;
	u64 aging_ns;
	u32 payload_max;
	u32 tenant_depth;
	bool manual_clock;
};

/**
 * kwq_deadline_after() - absolute deadline a relative time from now
 * @timeout_ns: nanoseconds from now; negative means no timeout.
 *
 * Return: a deadline for kwq_get() or kwq_shutdown_drain().
 */
static inline ktime_t kwq_deadline_after(s64 timeout_ns)
{
	if (timeout_ns < 0)
		return KWQ_FOREVER;
	return ktime_add_safe(ktime_get(), ns_to_ktime(timeout_ns));
}

/**
 * struct kwq_key - one key of a batch (kwq_add_batch() and friends)
 * @key: the key bytes.
 * @len: their length, 1 to KWQ_KEY_MAX.
 * @ticket: kwq_get_batch(): out, the hand-out's ticket; kwq_done_batch():
 *	in, as for kwq_done_ticket() (0 names no hand-out); add: ignored.
 */
struct kwq_key {
	const void *key;
	u32 len;
	u64 ticket;
};

/**
 * struct kwq_add_opts - every option of one add (kwq_add_ex())
 * @delay_ns: <= 0: add now; otherwise add after this delay, as
 *	kwq_add_after() (clamped to KWQ_DELAY_MAX_NS).
 * @max_wait_ns: with KWQ_AFTER_DEBOUNCE, the bound of kwq_add_debounced()
 *	(>= @delay_ns); otherwise 0.
 * @flags: for @delay_ns <= 0 an enum kwq_wait_policy or 0; otherwise
 *	KWQ_AFTER_REPLACE, KWQ_AFTER_DEBOUNCE or 0.
 * @priority: on a queue made with &kwq_attr.priority, KWQ_PRIORITY_MIN
 *	to KWQ_PRIORITY_MAX; elsewhere must be 0.
 * @payload: NULL, or the add's payload (@payload_len bytes, copied) on a
 *	queue made with &kwq_attr.payload_max.
 * @payload_len: 0 with @payload NULL, else 1 to the queue's payload_max
 *	(-E2BIG beyond it).
 *
 * The rules are struct kwq_ioc_add's in the uapi header.
 */
struct kwq_add_opts {
	s64 delay_ns;
	u64 max_wait_ns;
	u32 flags;
	s32 priority;
	const void *payload;
	u32 payload_len;
};

struct kwq *kwq_create(const char *name, const struct kwq_attr *attr);
struct kwq *kwq_lookup(const char *name);
void kwq_get_ref(struct kwq *q);
void kwq_put(struct kwq *q);
void kwq_destroy(struct kwq *q);
const char *kwq_name(const struct kwq *q);
size_t kwq_item_bytes(u32 key_len);

int kwq_add(struct kwq *q, const void *key, u32 len);
int kwq_add_atomic(struct kwq *q, const void *key, u32 len);
int kwq_add_policy(struct kwq *q, const void *key, u32 len, u32 policy);
int kwq_add_after(struct kwq *q, const void *key, u32 len, s64 delay_ns, u32 flags);
int kwq_add_debounced(struct kwq *q, const void *key, u32 len, s64 delay_ns,
		      u64 max_wait_ns);
int kwq_add_ex(struct kwq *q, const void *key, u32 len, const struct kwq_add_opts *o);
int kwq_cancel(struct kwq *q, const void *key, u32 len);
int kwq_add_rate_limited(struct kwq *q, const void *key, u32 len);
int kwq_forget(struct kwq *q, const void *key, u32 len);
int kwq_num_requeues(struct kwq *q, const void *key, u32 len);
void kwq_run_due(struct kwq *q);
int kwq_clock_step(struct kwq *q, s64 step_ns, u64 *now_ns, bool *pending);
int kwq_get(struct kwq *q, void *buf, u32 cap, u32 *len, ktime_t deadline);
int kwq_get_ticket(struct kwq *q, void *buf, u32 cap, u32 *len, u64 *ticket,
		   ktime_t deadline);
int kwq_get_payload(struct kwq *q, void *buf, u32 cap, u32 *len, void *pbuf, u32 pcap,
		    u32 *plen, u64 *ticket, ktime_t deadline);
int kwq_done(struct kwq *q, const void *key, u32 len);
int kwq_done_ticket(struct kwq *q, const void *key, u32 len, u64 ticket);
int kwq_requeue_ticket(struct kwq *q, const void *key, u32 len, u64 ticket);
int kwq_done_get(struct kwq *q, const void *dkey, u32 dlen, int *done_result,
		 void *buf, u32 cap, u32 *len, ktime_t deadline);
int kwq_requeue(struct kwq *q, const void *key, u32 len);
int kwq_add_batch(struct kwq *q, const struct kwq_key *keys, u32 n, u32 policy,
		  u32 *results);
int kwq_get_batch(struct kwq *q, struct kwq_key *out, u32 n, void *buf, u32 size,
		  ktime_t deadline);
int kwq_done_batch(struct kwq *q, const struct kwq_key *keys, u32 n, u32 *results);

u64 kwq_len(struct kwq *q);
void kwq_stats(struct kwq *q, struct kwq_stats *st);
void kwq_shutdown(struct kwq *q);
int kwq_shutdown_drain(struct kwq *q, ktime_t deadline, u32 flags);
bool kwq_shutting_down(struct kwq *q);

#endif /* _KWQ_H */
