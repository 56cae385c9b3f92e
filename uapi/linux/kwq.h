/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * kwq: deduplicating work queues in the kernel, the /dev/kwq ioctl ABI.
 *
 * Rules this header follows (Documentation/process/botching-up-ioctls.rst):
 * only fixed-size __u* / __s* types, natural alignment, explicit padding,
 * every struct a multiple of 8 bytes and identical for 32- and 64-bit
 * callers, user pointers carried as __u64, reserved fields and unknown
 * flags rejected with -EINVAL, timeouts as absolute CLOCK_MONOTONIC
 * nanoseconds so that a restarted ioctl never waits longer.
 */
#ifndef _UAPI_LINUX_KWQ_H
#define _UAPI_LINUX_KWQ_H

#include <linux/const.h>
#include <linux/ioctl.h>
#include <linux/types.h>

/* Bumped when an incompatible change is made; features grow compatibly. */
#define KWQ_ABI_VERSION		1

/* Longest key in bytes. Kubernetes "namespace/name" keys reach 317. */
#define KWQ_KEY_MAX		512
/* Size of a queue name buffer, including the terminating NUL. */
#define KWQ_NAME_MAX		64

/* Deadline values for struct kwq_ioc_get and struct kwq_ioc_drain. */
#define KWQ_DEADLINE_NOWAIT	0ULL		/* never block */
#define KWQ_DEADLINE_FOREVER	(~0ULL)		/* block without timeout */

/* Longest delay of an add-after; longer ones are clamped to it (7 days). */
#define KWQ_DELAY_MAX_NS	(7ULL * 24 * 3600 * 1000000000ULL)

/**
 * enum kwq_add_result - what an add or add-after did with the key
 * @KWQ_ADD_QUEUED: the key was not pending and is now queued.
 * @KWQ_ADD_DUPLICATE: the key was already queued; nothing more is queued.
 *	Under the promote policy a waiting entry the key also had is
 *	dropped (counted in waits_dropped), as for any waiting key.
 * @KWQ_ADD_DEFERRED: the key is being processed; it is marked dirty and
 *	queued again when the worker calls done.
 * @KWQ_ADD_WAITING: add-after: the key now waits for its deadline.
 * @KWQ_ADD_WAIT_KEPT: add-after: the key already waited for an earlier
 *	(or equal) deadline, which is kept.
 * @KWQ_ADD_WAIT_MOVED: add-after: the key's waiting deadline moved
 *	(earlier, or anywhere with KWQ_AFTER_REPLACE).
 * @KWQ_ADD_ABSORBED: add of a waiting key under the strict policy: it
 *	runs at its waiting deadline, not now.
 *
 * An add refused because the queue shuts down fails with -ESHUTDOWN.
 */
enum kwq_add_result {
	KWQ_ADD_QUEUED = 0,
	KWQ_ADD_DUPLICATE = 1,
	KWQ_ADD_DEFERRED = 2,
	KWQ_ADD_WAITING = 3,
	KWQ_ADD_WAIT_KEPT = 4,
	KWQ_ADD_WAIT_MOVED = 5,
	KWQ_ADD_ABSORBED = 6,
};

/**
 * enum kwq_wait_policy - what an add does to a key that waits for a deadline
 * @KWQ_POLICY_DEFAULT: in a call: use the queue's policy; in a queue: promote.
 * @KWQ_POLICY_KEEP: client-go: the key is queued now and its waiting entry
 *	stays and fires later, so it runs twice (for add-after as a reminder).
 * @KWQ_POLICY_PROMOTE: the key is queued now and its waiting entry is
 *	dropped: one run, as soon as possible.
 * @KWQ_POLICY_STRICT: the add is absorbed and the key runs at its waiting
 *	deadline, so an add cannot bypass a backoff.
 */
enum kwq_wait_policy {
	KWQ_POLICY_DEFAULT = 0,
	KWQ_POLICY_KEEP = 1,
	KWQ_POLICY_PROMOTE = 2,
	KWQ_POLICY_STRICT = 3,
};

/* Flags of struct kwq_ioc_key for add: the policy override, 2 bits. */
#define KWQ_ADD_POLICY_MASK	0x3U

/* Flags of struct kwq_ioc_add_after. */
#define KWQ_AFTER_REPLACE	_BITUL(2)	/* replace the deadline, even later */
/* move the deadline later on each add, up to .max_wait_ns after the first */
#define KWQ_AFTER_DEBOUNCE	_BITUL(3)

/* Flags of struct kwq_ioc_drain. */
#define KWQ_DRAIN_FLUSH_WAITING	_BITUL(0)	/* queue waiting keys now, not drop */

/* Limiter types for struct kwq_limiter. */
#define KWQ_LIMITER_EXPONENTIAL	1	/* base_ns * 2^failures, capped at max_ns */
#define KWQ_LIMITER_FAST_SLOW	2	/* fast_ns for max_fast attempts, then slow_ns */
#define KWQ_LIMITER_BUCKET	3	/* token bucket shared by all keys */

#define KWQ_LIMITERS_MAX	4
/* rate_mhz of a bucket that never limits. */
#define KWQ_RATE_INF		(~0ULL)

/**
 * struct kwq_limiter - one backoff limiter (client-go's RateLimiter)
 * @type: KWQ_LIMITER_*.
 * @max_fast: FAST_SLOW: the number of attempts that get @fast_ns, below
 *	524287 (where per-key failure counts saturate); 0 is valid: every
 *	attempt gets @slow_ns.
 * @base_ns: EXPONENTIAL: the first delay (1 ns .. KWQ_DELAY_MAX_NS).
 * @max_ns: EXPONENTIAL: the cap (>= @base_ns).
 * @fast_ns: FAST_SLOW: delay of the first @max_fast attempts.
 * @slow_ns: FAST_SLOW: delay of later attempts.
 * @rate_mhz: BUCKET: tokens added per 1000 s (10/s is 10000), or
 *	KWQ_RATE_INF; must not be 0. Delays are rounded up to whole ns.
 * @burst: BUCKET: bucket size in tokens; the bucket starts full. 0 with a
 *	finite rate never allows: the delay is the clamp (max_wait_ns, or
 *	KWQ_DELAY_MAX_NS).
 * @pad: must be 0.
 *
 * Fields a type does not use must be 0.
 */
struct kwq_limiter {
	__u32 type;
	__u32 max_fast;
	__u64 base_ns;
	__u64 max_ns;
	__u64 fast_ns;
	__u64 slow_ns;
	__u64 rate_mhz;
	__u32 burst;
	__u32 pad;
};

/**
 * struct kwq_ratelimit - a queue's backoff policy for add-rate-limited
 * @count: number of limiters used, 0 to KWQ_LIMITERS_MAX. Every one is
 *	consulted on each call and the largest delay wins (client-go's
 *	MaxOf); 0 means no limiter (add-rate-limited adds at once).
 * @flags: must be 0.
 * @max_wait_ns: cap on the delay (client-go's WithMaxWait), 0 for none.
 * @limiters: the limiters.
 * @reserved: must be 0.
 *
 * client-go's DefaultControllerRateLimiter is {count 2: EXPONENTIAL
 * 5 ms..1000 s, BUCKET 10000 mHz burst 100}; DefaultItemBasedRateLimiter
 * is {count 1: EXPONENTIAL 1 ms..1000 s}.
 */
struct kwq_ratelimit {
	__u32 count;
	__u32 flags;
	__u64 max_wait_ns;
	struct kwq_limiter limiters[KWQ_LIMITERS_MAX];
	__u64 reserved[2];
};

/**
 * enum kwq_done_result - what done did with the key
 * @KWQ_DONE_FINISHED: processing ended; the key is no longer pending.
 * @KWQ_DONE_REQUEUED: the key was added while processing and is queued again.
 */
enum kwq_done_result {
	KWQ_DONE_FINISHED = 0,
	KWQ_DONE_REQUEUED = 1,
};

/* struct kwq_ioc_done_get.done_result of a call that failed before its done. */
#define KWQ_DONE_NOT_RUN	0xffffffffU

/* Feature bits reported by KWQ_IOC_VERSION. */
#define KWQ_FEATURE_CORE	_BITULL(0)	/* add/get/done/shutdown/drain */
#define KWQ_FEATURE_DELAY	_BITULL(1)	/* add-after, cancel, policies */
#define KWQ_FEATURE_LEASE	_BITULL(2)	/* keys return when their fd closes */
#define KWQ_FEATURE_BATCH	_BITULL(3)	/* add/get/done batches, list */
#define KWQ_FEATURE_RATELIMIT	_BITULL(4)	/* add-rate-limited, forget, num-requeues */
#define KWQ_FEATURE_METRICS	_BITULL(5)	/* histograms and work gauges in stats */
#define KWQ_FEATURE_DONE_GET	_BITULL(6)	/* KWQ_IOC_DONE_GET */
#define KWQ_FEATURE_TICKET	_BITULL(7)	/* gets return tickets, done takes one */
/* IPC-namespace scopes, the kernel scope, the access matrix, stats of any size */
#define KWQ_FEATURE_SCOPE	_BITULL(8)
/* KWQ_AFTER_DEBOUNCE, kwq_stats.debounced and .debounce_capped */
#define KWQ_FEATURE_DEBOUNCE	_BITULL(9)
/* Payloads: kwq_ioc_create.payload_max, payloads of add-ex and get, their stats */
#define KWQ_FEATURE_PAYLOAD	_BITULL(10)
/* KWQ_CREATE_PRIORITY, kwq_ioc_create.aging_ns, kwq_ioc_add.priority */
#define KWQ_FEATURE_PRIORITY	_BITULL(11)
/* KWQ_CREATE_TENANT, kwq_ioc_create.tenant_depth: gets rotate across tenants */
#define KWQ_FEATURE_TENANT	_BITULL(12)
/*
 * Queues die with their IPC namespace; KWQ_IOC_SCOPE_LIMITS, KWQ_IOC_LIST_ALL,
 * KWQ_IOC_DESTROY_IN; per-user limits charged up the user-namespace chain
 */
#define KWQ_FEATURE_SCOPE_ADMIN	_BITULL(13)
/* KWQ_CREATE_MANUAL_CLOCK and KWQ_IOC_CLOCK_STEP: queues on a clock a program steps */
#define KWQ_FEATURE_MANUAL_CLOCK _BITULL(14)

/* Flags of struct kwq_ioc_open and struct kwq_ioc_list. */
#define KWQ_SCOPE_KERNEL	_BITUL(0)	/* the queues kernel modules made */

/* Flags of struct kwq_ioc_create. */
#define KWQ_CREATE_RATELIMIT	_BITUL(0)	/* use .ratelimit, not the default */
#define KWQ_CREATE_PRIORITY	_BITUL(1)	/* a priority queue, see .aging_ns */
#define KWQ_CREATE_TENANT	_BITUL(2)	/* a tenant queue, see .tenant_depth */
/* the queue's time moves only by KWQ_IOC_CLOCK_STEP, see struct kwq_ioc_clock_step */
#define KWQ_CREATE_MANUAL_CLOCK	_BITUL(3)

/*
 * Tenants of a queue made with KWQ_CREATE_TENANT (Documentation/kwq-tenants.rst).
 * A key's tenant is its bytes before its n-th '/', n = min(tenant_depth,
 * the number of '/' in the key); n = 0 gives the empty tenant. Depth 1:
 * "ns/name" is tenant "ns", "name" is tenant "". Depth 2 (cluster, then
 * namespace): "c/ns/name" is "c/ns", "c/name" is "c", "name" is "".
 *
 * Within one priority level (the whole queue without KWQ_CREATE_PRIORITY)
 * each tenant's keys are FIFO and the tenants with queued keys take turns:
 * a get takes the first key of the first tenant of the level's rotation
 * and moves that tenant to the end; a tenant whose first key there is
 * queued joins at the end. A key given back (requeue, a failed copy, a
 * lease's end, a processing timeout) goes to the head of its tenant's
 * keys, and its tenant to the head of the rotation.
 *
 * Bound: while no key of the level is given back or raised, a key that is
 * k-th among its tenant's queued keys at its level is handed out within
 * k * T gets from that level, T being the most tenants with keys queued
 * there at any one time until then (later ones count). With
 * KWQ_CREATE_PRIORITY the level is chosen as on a priority queue, by the
 * rank of each level's next key; the priority bound then holds for that
 * next key (Documentation/kwq-tenants.rst).
 */
#define KWQ_TENANT_DEPTH_MAX	2

/*
 * Priorities of a queue made with KWQ_CREATE_PRIORITY (struct
 * kwq_ioc_add.priority): a higher one is handed out first, FIFO within
 * one; a key's priority rises by one for each aging_ns it waits ready
 * (Documentation/kwq-priorities.rst has the rules and the bound).
 */
#define KWQ_PRIORITY_MIN	(-8)
#define KWQ_PRIORITY_MAX	7
/* kwq_ioc_create.aging_ns: 0 means this default; at most the maximum. */
#define KWQ_AGING_DEFAULT_NS	1000000000ULL		/* 1 s */
#define KWQ_AGING_MAX_NS	(3600ULL * 1000000000ULL)	/* 1 h */

/* Most entries in one batch. */
#define KWQ_BATCH_MAX		1024

/* Flags of struct kwq_ioc_get and of a get batch. */
#define KWQ_GET_UNLEASED	_BITUL(0)	/* key not tied to this fd */

/**
 * struct kwq_ioc_version - ABI handshake (KWQ_IOC_VERSION)
 * @abi_version: out: KWQ_ABI_VERSION of the running module.
 * @key_max: out: longest key accepted, in bytes.
 * @name_max: out: size of a queue name buffer including the NUL.
 * @flags: in: must be 0.
 * @features: out: KWQ_FEATURE_* bits this module implements.
 * @reserved: must be 0.
 */
struct kwq_ioc_version {
	__u32 abi_version;
	__u32 key_max;
	__u32 name_max;
	__u32 flags;
	__u64 features;
	__u64 reserved[4];
};

/**
 * struct kwq_ioc_create - create a named queue and attach the fd to it
 * @name: NUL-terminated name, 1 to KWQ_NAME_MAX - 1 characters out of
 *	[A-Za-z0-9._-], not starting with '.'.
 * @flags: KWQ_CREATE_RATELIMIT, or 0 for client-go's default controller
 *	limiter (exponential 5 ms..1000 s, bucket 10/s burst 100); and
 *	KWQ_CREATE_PRIORITY for a priority queue, KWQ_CREATE_TENANT for a
 *	tenant queue, KWQ_CREATE_MANUAL_CLOCK for a queue on a manual clock
 *	(struct kwq_ioc_clock_step); any of them may be set together.
 * @mode: permission bits (0 to 0777) checked by later opens, like SysV IPC.
 * @max_items: most keys the queue tracks at once; 0 means the module's
 *	default (module parameter max_items_per_queue), larger values are
 *	clamped to it.
 * @policy: enum kwq_wait_policy for adds of waiting keys.
 * @max_backoff_keys: most keys kept only for their failure count; the
 *	least recently active are forgotten first. 0 means the module's
 *	default (max_backoff_keys), larger values are clamped to it.
 * @pad: must be 0.
 * @ratelimit: with KWQ_CREATE_RATELIMIT, the limiter of add-rate-limited
 *	(-EINVAL if invalid); otherwise must be all 0.
 * @processing_timeout_ns: 0, or how long a key may stay processing: a key
 *	not done by then is put back at the head of the queue (its worker's
 *	later done gets -ENOENT), counted in kwq_stats.processing_expiries.
 *	At most KWQ_DELAY_MAX_NS.
 * @payload_max: 0, or the longest payload an add may carry, in bytes: a
 *	queue with payloads (Documentation/kwq-payloads.rst). At most the
 *	module parameter max_payload (-EINVAL otherwise).
 * @tenant_depth: with KWQ_CREATE_TENANT, the tenant rule: 1 (the bytes
 *	before the first '/') or 2 (before the second), 0 meaning 1; at most
 *	KWQ_TENANT_DEPTH_MAX (-EINVAL otherwise). Without KWQ_CREATE_TENANT:
 *	must be 0.
 * @pad3: must be 0.
 * @pad2: the name of @tenant_depth and @pad3 before KWQ_FEATURE_TENANT:
 *	a program that sets it to 0 makes a queue without tenants.
 * @aging_ns: with KWQ_CREATE_PRIORITY, how long a ready key waits for its
 *	priority to count as one higher when the next key is chosen: 1 to
 *	KWQ_AGING_MAX_NS, or 0 for KWQ_AGING_DEFAULT_NS (there is no queue
 *	without aging). Without KWQ_CREATE_PRIORITY: must be 0.
 * @reserved: must be 0.
 *
 * @payload_max, @pad2 and @aging_ns were reserved[0..1] before
 * KWQ_FEATURE_PAYLOAD and KWQ_FEATURE_PRIORITY.
 */
struct kwq_ioc_create {
	__u8 name[KWQ_NAME_MAX];
	__u32 flags;
	__u32 mode;
	__u32 max_items;
	__u32 policy;
	__u32 max_backoff_keys;
	__u32 pad;
	struct kwq_ratelimit ratelimit;
	__u64 processing_timeout_ns;
	__u32 payload_max;
	union {
		struct {
			__u8 tenant_depth;
			__u8 pad3[3];
		};
		__u32 pad2;
	};
	__u64 aging_ns;
	__u64 reserved[1];
};

/**
 * struct kwq_ioc_open - attach the fd to an existing named queue
 * @name: NUL-terminated queue name.
 * @flags: 0 to look in the scope of the fd (the IPC namespace of the
 *	process that opened /dev/kwq), KWQ_SCOPE_KERNEL to look among the
 *	queues kernel modules made (kwq_create()), from any namespace.
 * @pad: must be 0.
 * @reserved: must be 0.
 */
struct kwq_ioc_open {
	__u8 name[KWQ_NAME_MAX];
	__u32 flags;
	__u32 pad;
	__u64 reserved[2];
};

/**
 * struct kwq_ioc_key - one key for KWQ_IOC_ADD, KWQ_IOC_DONE, KWQ_IOC_CANCEL
 * @key_ptr: user address of the key bytes.
 * @key_len: key length, 1 to KWQ_KEY_MAX.
 * @flags: add: an enum kwq_wait_policy in KWQ_ADD_POLICY_MASK, overriding
 *	the queue's; other commands: must be 0.
 * @result: out: enum kwq_add_result (add, add-rate-limited), enum
 *	kwq_done_result (done), 1 if a waiting entry was removed or 0 (cancel),
 *	1 if the key had failures or 0 (forget), the failure count
 *	(num-requeues).
 * @pad: must be 0.
 * @ticket: done: 0, or the ticket the get of the key returned; then the
 *	done ends only that hand-out and fails with -ENOENT if it is no
 *	longer live (a processing timeout took the key back). Other
 *	commands: must be 0.
 * @reserved: must be 0.
 *
 * A done with @ticket 0 ends the key's live hand-out if this file's
 * lease holds it or if it was taken unleased; a key leased to another
 * file, or not being processed, gives -ENOENT. On a queue with a
 * processing timeout a key can be taken back and handed out again: a
 * worker that took it unleased, or that shares its file (and so its
 * lease) with other threads, must pass the ticket, or its late done may
 * end the new hand-out.
 */
struct kwq_ioc_key {
	__u64 key_ptr;
	__u32 key_len;
	__u32 flags;
	__u32 result;
	__u32 pad;
	__u64 ticket;
	__u64 reserved[1];
};

/**
 * struct kwq_ioc_add_after - add a key once a delay has passed
 * @key_ptr: user address of the key bytes.
 * @key_len: key length, 1 to KWQ_KEY_MAX.
 * @flags: for @delay_ns > 0, KWQ_AFTER_REPLACE, KWQ_AFTER_DEBOUNCE or 0
 *	(not both); for @delay_ns <= 0 (an add now), a policy as in struct
 *	kwq_ioc_key or 0. A flag that does not apply to the call's delay is
 *	-EINVAL.
 * @delay_ns: delay; <= 0 adds now; longer than KWQ_DELAY_MAX_NS is
 *	clamped to it. It counts from the add's start: CLOCK_MONOTONIC read
 *	once the call's arguments are read, before the queue's lock is
 *	taken (or, if later, the latest instant the queue used for an
 *	earlier lock hold); that instant is the "now" below. One waiting entry
 *	per key: the earliest deadline wins unless KWQ_AFTER_REPLACE or
 *	KWQ_AFTER_DEBOUNCE is set.
 * @result: out: enum kwq_add_result.
 * @pad: must be 0.
 * @max_wait_ns: with KWQ_AFTER_DEBOUNCE, the longest the key may wait,
 *	counted from the debounced add that gave it its waiting entry: at
 *	least @delay_ns (-EINVAL otherwise); longer than KWQ_DELAY_MAX_NS is
 *	clamped to it. Without KWQ_AFTER_DEBOUNCE: must be 0. (It was
 *	reserved[0] before KWQ_FEATURE_DEBOUNCE.)
 * @reserved: must be 0.
 *
 * A debounced add (KWQ_AFTER_DEBOUNCE) asks for one run once the key has
 * been quiet for @delay_ns, but no later than @max_wait_ns after the
 * first add of the burst. By the key's state:
 *
 * - queued, or processing and already marked to run again (dirty): that
 *   run covers the add: KWQ_ADD_DUPLICATE, nothing changes.
 * - no waiting entry (new, or processing): it waits for now + @delay_ns,
 *   bounded by now + @max_wait_ns: KWQ_ADD_WAITING. A processing key
 *   whose deadline comes while it is still processing runs again after
 *   its done, never twice at once.
 * - waiting from an earlier debounced add: the deadline moves to the
 *   later of itself and now + @delay_ns, but never past the entry's bound,
 *   which this add can only lower (to now + @max_wait_ns):
 *   KWQ_ADD_WAIT_MOVED, or KWQ_ADD_WAIT_KEPT if the deadline stays.
 * - waiting from a plain add-after (or add-rate-limited): the earliest
 *   deadline wins, as for a plain add-after; if now + @delay_ns is
 *   earlier, the entry becomes a debounced one bounded by the earlier of
 *   now + @max_wait_ns and the old deadline: KWQ_ADD_WAIT_MOVED, else
 *   KWQ_ADD_WAIT_KEPT.
 *
 * A plain add-after of a key waiting from a debounced add keeps its rule
 * (the earliest deadline wins) and lowers the entry's bound to its own
 * deadline, so later debounced adds never postpone the key past it;
 * with KWQ_AFTER_REPLACE the entry becomes a plain one. Adds now, cancel,
 * shutdown and drain treat a debounced entry like any waiting entry.
 */
struct kwq_ioc_add_after {
	__u64 key_ptr;
	__u32 key_len;
	__u32 flags;
	__s64 delay_ns;
	__u32 result;
	__u32 pad;
	__u64 max_wait_ns;
	__u64 reserved[1];
};

/**
 * struct kwq_ioc_get - take the next key (KWQ_IOC_GET)
 * @key_ptr: user address of a buffer for the key.
 * @key_cap: size of that buffer; if the next key does not fit, the call
 *	fails with -EMSGSIZE, sets @key_len to the size needed and leaves
 *	the key queued.
 * @key_len: out: length of the key handed out.
 * @deadline_ns: absolute CLOCK_MONOTONIC time to give up at (-ETIMEDOUT);
 *	KWQ_DEADLINE_NOWAIT fails with -EAGAIN instead of blocking,
 *	KWQ_DEADLINE_FOREVER waits until a key comes or the queue shuts down.
 *	A file opened with O_NONBLOCK never blocks.
 * @flags: KWQ_GET_UNLEASED, or 0. By default the key is leased to the
 *	file: only this file (or the kernel) may call done for it, and if the
 *	file is closed first the key goes back to the head of the queue. An
 *	unleased key stays processing until anyone calls done.
 * @payload_len: in: the size of the buffer at @payload_ptr, 0 if
 *	@payload_ptr is 0 (-EINVAL otherwise); out: the length of the key's
 *	payload, 0 for a key without one (and on a queue without payloads).
 *	If @payload_ptr is not 0 and the payload does not fit, the call fails
 *	with -EMSGSIZE, sets @key_len and @payload_len to the sizes needed
 *	and leaves the key queued.
 * @pad: the name of @payload_len before KWQ_FEATURE_PAYLOAD, kept for old
 *	sources.
 * @ticket: out: the hand-out's ticket, nonzero and never given to another
 *	hand-out of the queue; pass it to done (struct kwq_ioc_key.ticket).
 * @payload_ptr: user address of a buffer for the key's payload, or 0 to
 *	copy none (the length is still reported).
 * @reserved: the name of @payload_ptr before KWQ_FEATURE_PAYLOAD, kept for
 *	old sources.
 *
 * A key buffer, payload buffer, @key_len, @payload_len or @ticket that
 * cannot be written fails the call with -EFAULT before a key is taken:
 * nothing changes, counters included.
 * After a shutdown the call waits (or, with KWQ_DEADLINE_NOWAIT, fails with
 * -EAGAIN) while any key is being processed, since that key can still
 * come back; -ESHUTDOWN comes once nothing is queued or processing.
 * A hand-out needs 72 bytes of memory (its side, allocated a page at a
 * time and charged to the memory cgroup as key records are) unless its
 * key has one already (it also waits) or the queue has one spare: if
 * none can be had, even sleeping (with
 * KWQ_DEADLINE_NOWAIT or O_NONBLOCK, without sleeping), the call fails with
 * -ENOMEM and the key stays queued.
 */
struct kwq_ioc_get {
	__u64 key_ptr;
	__u32 key_cap;
	__u32 key_len;
	__u64 deadline_ns;
	__u32 flags;
	union {
		__u32 payload_len;
		__u32 pad;		/* the name before payloads */
	};
	__u64 ticket;
	union {
		__u64 payload_ptr;
		__u64 reserved[1];	/* the name before payloads */
	};
};

/**
 * struct kwq_ioc_add - one add with every option (KWQ_IOC_ADD_EX)
 * @key_ptr: user address of the key bytes.
 * @key_len: key length, 1 to KWQ_KEY_MAX.
 * @flags: as struct kwq_ioc_add_after.flags: for @delay_ns > 0,
 *	KWQ_AFTER_REPLACE, KWQ_AFTER_DEBOUNCE or 0; for @delay_ns <= 0, a
 *	policy (enum kwq_wait_policy) or 0. Anything else is -EINVAL.
 * @delay_ns: as struct kwq_ioc_add_after.delay_ns; <= 0 adds now.
 * @max_wait_ns: as struct kwq_ioc_add_after.max_wait_ns: with
 *	KWQ_AFTER_DEBOUNCE at least @delay_ns, otherwise 0.
 * @payload_ptr: user address of the payload's bytes, or 0 for an add
 *	without a payload.
 * @payload_len: the payload's length: 0 with @payload_ptr 0, else 1 to
 *	the queue's payload_max (-E2BIG beyond it). A payload on a queue made
 *	without payload_max is -EINVAL, as is a @payload_ptr without a length
 *	or a length without one.
 * @priority: on a queue made with KWQ_CREATE_PRIORITY, the add's
 *	priority, KWQ_PRIORITY_MIN to KWQ_PRIORITY_MAX (higher first);
 *	elsewhere must be 0. The rules are below.
 * @result: out: enum kwq_add_result.
 * @pad: must be 0.
 * @reserved: must be 0.
 *
 * With every option 0 but the key, the same as KWQ_IOC_ADD; with a delay,
 * the same as KWQ_IOC_ADD_AFTER, with the same results and errors.
 *
 * Priorities (KWQ_CREATE_PRIORITY; every other add, batches included, has
 * priority 0). A key has one priority. An add of a key that has no run
 * pending (new, or being processed and not yet added again) gives the key
 * the add's priority; a later add before the key is handed out can only
 * raise it, never lower it. A queued key whose priority an add raises
 * moves to the tail of its new priority, ready from now, if that hands it
 * out sooner than its place (see aging); the result is KWQ_ADD_DUPLICATE
 * either way. A waiting key is queued at its priority when its deadline
 * comes; a key given back (lease end, processing timeout) goes to the head
 * of its priority.
 *
 * A get hands out, of the first keys of each priority, the one with the
 * least ready time minus priority times the queue's aging_ns (ties: the
 * higher priority): FIFO within a priority, and a key that became ready
 * at t with priority p goes before every key that becomes ready after
 * t + (KWQ_PRIORITY_MAX - p) * aging_ns, whatever its priority, so no key
 * starves. A key's ready time is when it was queued, or moved by a raise;
 * a key given back takes the ready time of the key it goes before when
 * that is earlier. On a queue that also has KWQ_CREATE_TENANT, "FIFO
 * within a priority" is per tenant, the bound holds for the key each
 * priority hands out next, and a raised key goes to the tail of its
 * tenant there and a given-back key is ready from now
 * (Documentation/kwq-tenants.rst).
 *
 * Payloads (KWQ_FEATURE_PAYLOAD; Documentation/kwq-payloads.rst): a
 * successful add with a payload makes it the key's, replacing the one the
 * key held whether queued, waiting or processing (the latest wins; counted
 * in kwq_stats.payloads_replaced); an add without one keeps the key's.
 * KWQ_IOC_GET hands the payload out with the key. A key given back
 * unprocessed (requeue, lease end, processing timeout) keeps it; a done
 * frees it unless the key is queued or waiting again; so does any other
 * end of the key's last state (cancel, shutdown, destroy). On a payload
 * queue KWQ_IOC_GET_BATCH and KWQ_IOC_DONE_GET fail with -EOPNOTSUPP and
 * change nothing. A payload is charged like a key record (the adder's
 * memory cgroup, the owner's max_key_bytes_per_user: -ENOSPC).
 */
struct kwq_ioc_add {
	__u64 key_ptr;
	__u32 key_len;
	__u32 flags;
	__s64 delay_ns;
	__u64 max_wait_ns;
	__u64 payload_ptr;
	__u32 payload_len;
	__s32 priority;
	__u32 result;
	__u32 pad;
	__u64 reserved[2];
};

/**
 * struct kwq_ioc_done_get - end one key and take the next (KWQ_IOC_DONE_GET)
 * @done_ptr: user address of the key to end, as for KWQ_IOC_DONE.
 * @done_len: its length, 1 to KWQ_KEY_MAX.
 * @done_result: out: enum kwq_done_result once the done was carried
 *	out; KWQ_DONE_NOT_RUN if the call failed before it, unless it was
 *	refused before reading this struct (-EBADFD, -EBADF, or -EFAULT
 *	for the struct itself), which writes nothing.
 * @key_ptr: as in struct kwq_ioc_get.
 * @key_cap: as in struct kwq_ioc_get.
 * @key_len: out: as in struct kwq_ioc_get.
 * @deadline_ns: as in struct kwq_ioc_get.
 * @flags: as in struct kwq_ioc_get; they apply to the get only.
 * @pad: must be 0.
 * @done_ticket: the ticket of the key to end, or 0, as in struct
 *	kwq_ioc_key.
 * @ticket: out: the new hand-out's ticket, as in struct kwq_ioc_get.
 *
 * The two calls of a worker loop in one system call: KWQ_IOC_DONE of the
 * key just processed, then KWQ_IOC_GET. If the done fails, the call
 * returns its error and nothing changed. Once it succeeded, errors are
 * the get's, and no key was taken; a signal while waiting then gives
 * -EINTR, never a restart, which would repeat the done. @done_result
 * tells the two apart (-EFAULT, for one, can come from either), unless
 * the struct itself stops being writable during the call.
 */
struct kwq_ioc_done_get {
	__u64 done_ptr;
	__u32 done_len;
	__u32 done_result;
	__u64 key_ptr;
	__u32 key_cap;
	__u32 key_len;
	__u64 deadline_ns;
	__u32 flags;
	__u32 pad;
	__u64 done_ticket;
	__u64 ticket;
};

/**
 * struct kwq_batch_entry - one key of a batch
 * @key_ptr: user address of the key (add, done) or of a buffer (get).
 * @key_len: add, done: the key length; get: in: the buffer size, out: the
 *	key length.
 * @result: out: add: enum kwq_add_result; done: enum kwq_done_result;
 *	get: 0. Only entries carried out have a meaningful result; a
 *	batch may write 0 into the result of later entries (up to 64 on).
 */
struct kwq_batch_entry {
	__u64 key_ptr;
	__u32 key_len;
	__u32 result;
};

/**
 * struct kwq_ioc_batch - many keys in one call
 * @entries_ptr: user address of an array of struct kwq_batch_entry.
 * @count: entries in the array, 1 to KWQ_BATCH_MAX.
 * @completed: out: how many entries, from the first, were carried out.
 *	Entries are handled in order and the batch stops at the first that
 *	fails: if none was carried out the call fails with that entry's
 *	error; otherwise it succeeds with @completed < @count, and the caller
 *	resubmits the rest to see the error. A get batch also stops when no
 *	key is ready. Nothing is lost: a key whose copy to user space fails
 *	is put back at the head of the queue.
 * @flags: get: KWQ_GET_UNLEASED or 0; add: a policy as in struct
 *	kwq_ioc_key; done: 0.
 * @pad: must be 0.
 * @deadline_ns: get: how long to wait for the first key, as in struct
 *	kwq_ioc_get; the others are taken only if ready. Add, done: 0.
 * @reserved: must be 0.
 */
struct kwq_ioc_batch {
	__u64 entries_ptr;
	__u32 count;
	__u32 completed;
	__u32 flags;
	__u32 pad;
	__u64 deadline_ns;
	__u64 reserved[2];
};

/**
 * struct kwq_ioc_list - names of the named queues (KWQ_IOC_LIST)
 * @names_ptr: user address of @capacity names of KWQ_NAME_MAX bytes each.
 * @capacity: names the array holds (0 to ask for the count only).
 * @count: out: named queues that exist in the scope; min(@count,
 *	@capacity) names were written, NUL-padded.
 * @flags: 0 for the queues of the fd's scope (the IPC namespace of the
 *	process that opened /dev/kwq), KWQ_SCOPE_KERNEL for the queues
 *	kernel modules made.
 * @pad: must be 0.
 * @reserved: must be 0.
 */
struct kwq_ioc_list {
	__u64 names_ptr;
	__u32 capacity;
	__u32 count;
	__u32 flags;
	__u32 pad;
	__u64 reserved[2];
};

/* Flags of struct kwq_ioc_scope_limits. */
#define KWQ_SCOPE_LIMITS_SET	_BITUL(0)	/* set .queues_max */

/**
 * struct kwq_ioc_scope_limits - the queue limit of an IPC namespace
 *	(KWQ_IOC_SCOPE_LIMITS)
 * @flags: 0 to read, KWQ_SCOPE_LIMITS_SET to set @queues_max first; that
 *	needs CAP_SYS_ADMIN, in the user namespace that owns the fd's scope,
 *	for the process that opened /dev/kwq (-EPERM otherwise).
 * @queues_max: in, with KWQ_SCOPE_LIMITS_SET: the most named queues the
 *	scope may hold, 1 to @ceiling (-EINVAL otherwise); out: the limit in
 *	force.
 * @queues: out: named queues the scope holds; must be 0 on input.
 * @ceiling: out: the module's max_queues_per_ns, the highest limit a
 *	scope may have; a scope's limit above a lowered ceiling counts as the
 *	ceiling. Must be 0 on input.
 * @reserved: must be 0.
 *
 * The scope is the fd's (the IPC namespace of the process that opened
 * /dev/kwq). Creates through descriptors whose opener had CAP_SYS_RESOURCE
 * in the initial user namespace are not held to it.
 */
struct kwq_ioc_scope_limits {
	__u32 flags;
	__u32 queues_max;
	__u32 queues;
	__u32 ceiling;
	__u64 reserved[2];
};

/**
 * struct kwq_queue_info - one named queue of any scope (KWQ_IOC_LIST_ALL)
 * @name: the queue's name, NUL-padded.
 * @ipc_inum: the inode number of its IPC namespace (as in
 *	/proc/PID/ns/ipc), 0 for the kernel scope.
 * @uid: its owner, in the initial user namespace.
 * @gid: its group, in the initial user namespace.
 * @mode: its permission bits.
 * @reserved: 0.
 */
struct kwq_queue_info {
	__u8 name[KWQ_NAME_MAX];
	__u32 ipc_inum;
	__u32 uid;
	__u32 gid;
	__u32 mode;
	__u64 reserved[2];
};

/**
 * struct kwq_ioc_list_all - every named queue of every scope (KWQ_IOC_LIST_ALL)
 * @info_ptr: user address of @capacity struct kwq_queue_info.
 * @capacity: entries the array holds (0 to ask for the count only).
 * @count: out: named queues that exist; min(@count, @capacity) entries
 *	were written.
 * @flags: must be 0.
 * @pad: must be 0.
 * @reserved: must be 0.
 *
 * Only for a descriptor opened in the initial IPC namespace by a process
 * with CAP_SYS_ADMIN in the initial user namespace (-EPERM otherwise).
 */
struct kwq_ioc_list_all {
	__u64 info_ptr;
	__u32 capacity;
	__u32 count;
	__u32 flags;
	__u32 pad;
	__u64 reserved[2];
};

/**
 * struct kwq_ioc_destroy_in - destroy a named queue of any scope
 *	(KWQ_IOC_DESTROY_IN)
 * @name: NUL-terminated name, as in struct kwq_ioc_create.
 * @ipc_inum: the inode number of the queue's IPC namespace, as
 *	KWQ_IOC_LIST_ALL reports it; 0 with KWQ_SCOPE_KERNEL.
 * @flags: 0, or KWQ_SCOPE_KERNEL for a queue of the kernel scope.
 * @pad: must be 0.
 * @pad2: must be 0.
 * @reserved: must be 0.
 *
 * The same privilege as KWQ_IOC_LIST_ALL. Destroys the queue as
 * KWQ_IOC_DESTROY does (descriptors attached to it see -EIDRM); -ENOENT
 * if no such queue exists.
 */
struct kwq_ioc_destroy_in {
	__u8 name[KWQ_NAME_MAX];
	__u32 ipc_inum;
	__u32 flags;
	__u32 pad;
	__u32 pad2;
	__u64 reserved[2];
};

/**
 * struct kwq_ioc_drain - shut down and wait until all work is done
 * @deadline_ns: absolute CLOCK_MONOTONIC time to give up at (-ETIMEDOUT);
 *	KWQ_DEADLINE_FOREVER waits without a timeout. KWQ_DEADLINE_NOWAIT,
 *	or any deadline on an O_NONBLOCK file, does not wait: a drain that
 *	finds keys queued or processing fails with -ETIMEDOUT at once (not
 *	-EAGAIN), the queue shut down all the same.
 * @flags: KWQ_DRAIN_FLUSH_WAITING to queue waiting keys at once and wait
 *	for them too; without it they are dropped, as by shutdown.
 * @pad: must be 0.
 */
struct kwq_ioc_drain {
	__u64 deadline_ns;
	__u32 flags;
	__u32 pad;
};

/* The latest time a manual clock may reach: about 146 years after its start. */
#define KWQ_CLOCK_MAX_NS	_BITULL(62)
/* Most waiting keys and processing timeouts one KWQ_IOC_CLOCK_STEP runs. */
#define KWQ_CLOCK_STEP_KEYS	1024

/**
 * struct kwq_ioc_clock_step - move a manual clock forward (KWQ_IOC_CLOCK_STEP)
 * @step_ns: in: how far to move the clock, 0 (read it, and finish the
 *	work an earlier step left, see @pending) to KWQ_CLOCK_MAX_NS minus
 *	the clock's time less its start. Negative: -EINVAL (time never goes
 *	back); past KWQ_CLOCK_MAX_NS: -EOVERFLOW. Either changes nothing.
 * @now_ns: out: the clock's time after the step, in nanoseconds since it
 *	started (0 at the queue's creation). Must be 0 on input.
 * @flags: must be 0.
 * @pending: out: 1 if keys whose time has come are left for another call
 *	(a call runs at most KWQ_CLOCK_STEP_KEYS of them), else 0. Must be
 *	0 on input.
 * @reserved: must be 0.
 *
 * Only on a queue made with KWQ_CREATE_MANUAL_CLOCK: elsewhere -EOPNOTSUPP,
 * and nothing changes. The caller must own the queue (or have
 * CAP_SYS_ADMIN in its scope's user namespace, -EPERM otherwise) and have
 * opened the file for writing (-EBADF otherwise): moving the queue's time
 * acts for every user of the queue, as shutdown does.
 *
 * Such a queue reads no other clock for its own time: it starts at 0 when
 * the queue is made and moves only by this call. Add-after and debounce
 * deadlines, add-rate-limited's limiters (the bucket refills with steps,
 * the exponential backoffs count from the step's time), the processing
 * timeout, priority aging and the stats' durations (queue latency, work
 * duration, unfinished work) all follow it; no timer runs for it. A step
 * moves the clock, then queues every waiting key whose deadline is at or
 * before the new time, earliest first, and puts back every key processing
 * past the timeout, as a timer reaching that time would: when the call
 * returns with @pending 0 those keys are queued and their consumers
 * woken. A step with more than KWQ_CLOCK_STEP_KEYS keys to run runs at
 * most that many and returns @pending 1: the clock has moved, and the caller
 * calls again (with @step_ns 0) until @pending is 0; meanwhile the keys
 * left wait as though their timer were late.
 *
 * The deadlines of get and drain (struct kwq_ioc_get.deadline_ns, struct
 * kwq_ioc_drain.deadline_ns) stay CLOCK_MONOTONIC: they bound how long a
 * caller blocks in real time, whatever the queue's clock does. Steps of
 * several callers are applied one after the other.
 */
struct kwq_ioc_clock_step {
	__s64 step_ns;
	__u64 now_ns;
	__u32 flags;
	__u32 pending;
	__u64 reserved[2];
};

/*
 * Histogram buckets of struct kwq_stats: counts of observations up to
 * 10 ns, 100 ns, ... 10 s (client-go's ExponentialBuckets(10e-9, 10, 10)),
 * and above 10 s. Not cumulative.
 */
#define KWQ_STATS_BUCKETS	11

/* Bits of kwq_stats.state. */
#define KWQ_STATE_SHUTTING_DOWN	_BITUL(0)
#define KWQ_STATE_DRAINING	_BITUL(1)
#define KWQ_STATE_DESTROYED	_BITUL(2)

/**
 * struct kwq_stats - a consistent snapshot of a queue (KWQ_IOC_STATS)
 * @size: out: the number of bytes the kernel filled. The size of the
 *	struct the caller passes is the one its command number encodes
 *	(KWQ_IOC_STATS_SIZE(n), 8 to 4096 bytes; the value of @size on input
 *	is ignored): an older, smaller struct gets a prefix, a newer, larger
 *	one gets every byte past the kernel's struct zeroed. Other sizes:
 *	-EINVAL.
 * @state: out: KWQ_STATE_* bits.
 * @queued: keys ready for get, in FIFO order (what client-go's Len counts).
 * @processing: keys handed out by get and not yet done.
 * @dirty_processing: keys being processed that were added again; each
 *	runs again after its done. Not included in @queued.
 * @waiting: keys waiting for an add-after deadline.
 * @items: key records held (a key queued, processing or waiting, or
 *	several of those, has one record).
 * @max_items: the queue's limit on @items.
 * @adds: adds that queued a key or marked a processing key dirty.
 * @dedups: adds absorbed because the key was already queued or dirty.
 * @gets: keys handed out.
 * @dones: successful done calls.
 * @requeues: done calls that queued the key again.
 * @refused: adds refused because the queue was shutting down.
 * @fired: waiting entries run: their deadline came, or a drain with
 *	KWQ_DRAIN_FLUSH_WAITING ran them early.
 * @cancels: waiting entries removed by cancel.
 * @absorbed: adds absorbed by a waiting entry (strict policy).
 * @waits_dropped: waiting entries dropped by shutdown or the promote policy.
 * @lease_requeues: keys put back because the file holding them closed.
 * @backoff_keys: keys kept only for their failure count (no other state).
 * @rate_limited: add-rate-limited calls that reached the limiter.
 * @tokens_returned: add-rate-limited calls that scheduled nothing new and
 *	gave their bucket tokens back.
 * @backoff_evictions: backoff-only keys forgotten to respect the
 *	max_backoff_keys bound or to make room for new keys.
 * @retries: add-after calls with a delay and add-rate-limited calls
 *	(client-go's retries).
 * @forgets: forget calls that cleared a failure count.
 * @unfinished_work_ns: sum over the keys being processed of how long each
 *	has been (client-go's unfinished_work_seconds), computed now.
 * @longest_running_ns: how long the oldest key being processed has been.
 * @queue_latency: how long keys were ready before a get handed them out,
 *	per bucket (see KWQ_STATS_BUCKETS). Time a key spends waiting for a
 *	deadline or being processed while dirty is not included.
 * @queue_latency_sum_ns: sum of those times.
 * @work_duration: time from get to done, per bucket.
 * @work_duration_sum_ns: sum of those times.
 * @processing_expiries: keys put back because they stayed processing
 *	longer than the queue's processing timeout.
 * @debounced: debounced adds (KWQ_AFTER_DEBOUNCE) that moved a waiting
 *	key's deadline later.
 * @debounce_capped: debounced adds that asked for a deadline past the
 *	entry's bound (its max wait) and were held at it: the sign of a key
 *	that is never quiet.
 * @payloads_replaced: adds whose payload replaced the one the key held,
 *	queued, waiting or processing (the latest payload wins).
 * @payload_bytes: payload bytes the queue holds now (their lengths, not
 *	their allocations); 0 once no key has a payload.
 */
struct kwq_stats {
	__u32 size;
	__u32 state;
	__u64 queued;
	__u64 processing;
	__u64 dirty_processing;
	__u64 waiting;
	__u64 items;
	__u64 max_items;
	__u64 adds;
	__u64 dedups;
	__u64 gets;
	__u64 dones;
	__u64 requeues;
	__u64 refused;
	__u64 fired;
	__u64 cancels;
	__u64 absorbed;
	__u64 waits_dropped;
	__u64 lease_requeues;
	__u64 backoff_keys;
	__u64 rate_limited;
	__u64 tokens_returned;
	__u64 backoff_evictions;
	__u64 retries;
	__u64 forgets;
	__u64 unfinished_work_ns;
	__u64 longest_running_ns;
	__u64 queue_latency[KWQ_STATS_BUCKETS];
	__u64 queue_latency_sum_ns;
	__u64 work_duration[KWQ_STATS_BUCKETS];
	__u64 work_duration_sum_ns;
	__u64 processing_expiries;
	__u64 debounced;
	__u64 debounce_capped;
	__u64 payloads_replaced;
	__u64 payload_bytes;
};

#define KWQ_IOC_MAGIC		0xE8

#define KWQ_IOC_VERSION		_IOWR(KWQ_IOC_MAGIC, 0x00, struct kwq_ioc_version)
#define KWQ_IOC_CREATE		_IOW(KWQ_IOC_MAGIC, 0x01, struct kwq_ioc_create)
#define KWQ_IOC_OPEN		_IOW(KWQ_IOC_MAGIC, 0x02, struct kwq_ioc_open)
#define KWQ_IOC_DESTROY		_IO(KWQ_IOC_MAGIC, 0x03)
#define KWQ_IOC_LIST		_IOWR(KWQ_IOC_MAGIC, 0x04, struct kwq_ioc_list)
#define KWQ_IOC_SCOPE_LIMITS	_IOWR(KWQ_IOC_MAGIC, 0x05, struct kwq_ioc_scope_limits)
#define KWQ_IOC_LIST_ALL	_IOWR(KWQ_IOC_MAGIC, 0x06, struct kwq_ioc_list_all)
#define KWQ_IOC_DESTROY_IN	_IOW(KWQ_IOC_MAGIC, 0x07, struct kwq_ioc_destroy_in)
#define KWQ_IOC_ADD		_IOWR(KWQ_IOC_MAGIC, 0x10, struct kwq_ioc_key)
#define KWQ_IOC_GET		_IOWR(KWQ_IOC_MAGIC, 0x11, struct kwq_ioc_get)
#define KWQ_IOC_DONE		_IOWR(KWQ_IOC_MAGIC, 0x12, struct kwq_ioc_key)
#define KWQ_IOC_ADD_AFTER	_IOWR(KWQ_IOC_MAGIC, 0x13, struct kwq_ioc_add_after)
#define KWQ_IOC_CANCEL		_IOWR(KWQ_IOC_MAGIC, 0x14, struct kwq_ioc_key)
#define KWQ_IOC_ADD_BATCH	_IOWR(KWQ_IOC_MAGIC, 0x18, struct kwq_ioc_batch)
#define KWQ_IOC_GET_BATCH	_IOWR(KWQ_IOC_MAGIC, 0x19, struct kwq_ioc_batch)
#define KWQ_IOC_DONE_BATCH	_IOWR(KWQ_IOC_MAGIC, 0x1a, struct kwq_ioc_batch)
#define KWQ_IOC_DONE_GET	_IOWR(KWQ_IOC_MAGIC, 0x1b, struct kwq_ioc_done_get)
#define KWQ_IOC_ADD_EX		_IOWR(KWQ_IOC_MAGIC, 0x1c, struct kwq_ioc_add)
#define KWQ_IOC_ADD_RATE_LIMITED _IOWR(KWQ_IOC_MAGIC, 0x15, struct kwq_ioc_key)
#define KWQ_IOC_FORGET		_IOWR(KWQ_IOC_MAGIC, 0x16, struct kwq_ioc_key)
#define KWQ_IOC_NUM_REQUEUES	_IOWR(KWQ_IOC_MAGIC, 0x17, struct kwq_ioc_key)
#define KWQ_IOC_SHUTDOWN	_IO(KWQ_IOC_MAGIC, 0x20)
#define KWQ_IOC_DRAIN		_IOW(KWQ_IOC_MAGIC, 0x21, struct kwq_ioc_drain)
#define KWQ_IOC_CLOCK_STEP	_IOWR(KWQ_IOC_MAGIC, 0x22, struct kwq_ioc_clock_step)
#define KWQ_IOC_STATS		_IOWR(KWQ_IOC_MAGIC, 0x30, struct kwq_stats)
/* KWQ_IOC_STATS for a struct kwq_stats of @n bytes (8 to 4096). */
#define KWQ_IOC_STATS_SIZE(n)	_IOC(_IOC_READ | _IOC_WRITE, KWQ_IOC_MAGIC, 0x30, (n))
#define KWQ_STATS_SIZE_MIN	8
#define KWQ_STATS_SIZE_MAX	4096

#endif /* _UAPI_LINUX_KWQ_H */
