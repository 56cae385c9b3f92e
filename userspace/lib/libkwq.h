/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libkwq: a thin C library over /dev/kwq. Names mirror the in-kernel API
 * (kwq_add, kwq_get, kwq_done, ...). A queue handle is a file descriptor,
 * so it works with poll/epoll and is closed with close(2) (or
 * kwq_close()). Every function returns a negative errno on failure
 * (errno is then also set, by the system call that failed).
 */
#ifndef LIBKWQ_H
#define LIBKWQ_H

#include <stddef.h>
#include <stdint.h>
#include <linux/kwq.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Device path; the KWQ_DEV environment variable overrides it. */
#define KWQ_DEFAULT_DEV "/dev/kwq"

/* Create a named queue, owned by the caller, and return a fd on it. */
int kwq_create(const char *name, unsigned int mode, unsigned int max_items);
/* The same with every creation setting (see struct kwq_ioc_create). */
int kwq_create_ex(const struct kwq_ioc_create *c);
/* Create a priority queue (KWQ_CREATE_PRIORITY): a ready key's priority
 * rises by one per @aging_ns it waits (0: KWQ_AGING_DEFAULT_NS). */
int kwq_create_priority(const char *name, unsigned int mode, unsigned int max_items,
			uint64_t aging_ns);
/* Create a tenant queue (KWQ_CREATE_TENANT, KWQ_FEATURE_TENANT): gets
 * rotate across tenants, a key's tenant being its bytes before its
 * @tenant_depth-th '/' (1 or 2; 0 means 1). Older modules give -EINVAL. */
int kwq_create_tenant(const char *name, unsigned int mode, unsigned int max_items,
		      unsigned int tenant_depth);
/* Move the manual clock of a queue made with KWQ_CREATE_MANUAL_CLOCK
 * (KWQ_FEATURE_MANUAL_CLOCK) forward by @step_ns (0 to read it) and run
 * every deadline it reaches, calling KWQ_IOC_CLOCK_STEP until nothing due
 * is left; *@now_ns (if not NULL) gets the clock's time since the queue
 * was made. Owner, on a fd open for writing. */
int kwq_clock_step(int fd, int64_t step_ns, uint64_t *now_ns);
/* Open an existing queue. @oflags: O_RDONLY (consume), O_WRONLY
 * (produce) or O_RDWR, optionally O_NONBLOCK. Returns a fd. */
int kwq_open(const char *name, int oflags);
/* Open a queue a kernel module made (kwq_create() in the kernel): those
 * live in a scope of their own, apart from the queues of kwq_create(). */
int kwq_open_kernel(const char *name, int oflags);
int kwq_close(int fd);
/* Remove the queue's name and end it for every user (owner only). */
int kwq_destroy(int fd);

/* Returns an enum kwq_add_result (>= 0). */
int kwq_add(int fd, const void *key, size_t len);
/* Add with an enum kwq_wait_policy for a key that waits for a deadline. */
int kwq_add_policy(int fd, const void *key, size_t len, unsigned int policy);
/* Add once @delay_ns has passed (<= 0: now). @flags: KWQ_AFTER_REPLACE.
 * Returns an enum kwq_add_result (>= 0). */
int kwq_add_after(int fd, const void *key, size_t len, int64_t delay_ns, unsigned int flags);
/* Add once the key has been quiet for @delay_ns (> 0), but no later than
 * @max_wait_ns (>= @delay_ns) after the debounced add that began the
 * burst (KWQ_AFTER_DEBOUNCE; needs KWQ_FEATURE_DEBOUNCE, older modules
 * give -EINVAL). Returns an enum kwq_add_result (>= 0). */
int kwq_add_debounced(int fd, const void *key, size_t len, int64_t delay_ns,
		      uint64_t max_wait_ns);
/* One add with every option of struct kwq_ioc_add (KWQ_IOC_ADD_EX): the
 * key is @key and @len, the rest comes from *@opts (NULL: all 0, a plain
 * add); opts->key_ptr, key_len and result are ignored. Returns an enum
 * kwq_add_result (>= 0). Modules without KWQ_IOC_ADD_EX give -ENOTTY. */
int kwq_add_ex(int fd, const void *key, size_t len, const struct kwq_ioc_add *opts);
/* Add at @priority (KWQ_PRIORITY_MIN..KWQ_PRIORITY_MAX, higher first) to
 * a priority queue (kwq_create_priority()); other queues take only 0.
 * Returns an enum kwq_add_result (>= 0). */
int kwq_add_priority(int fd, const void *key, size_t len, int priority);
/* Add with a payload of @plen bytes (KWQ_IOC_ADD_EX, a queue created with
 * payload_max; KWQ_FEATURE_PAYLOAD): it replaces the key's payload, the
 * latest wins. @plen 0 is a plain add. Returns an enum kwq_add_result
 * (>= 0); -E2BIG past the queue's payload_max, -EINVAL on a queue without
 * payloads. */
int kwq_add_payload(int fd, const void *key, size_t len, const void *payload, size_t plen);
/* Remove the key's waiting entry: 1 if there was one, 0 if not. */
int kwq_cancel(int fd, const void *key, size_t len);
/* Add after the delay the queue's limiter gives (client-go AddRateLimited). */
int kwq_add_rate_limited(int fd, const void *key, size_t len);
/* Clear the key's failure count: 1 if it had one, 0 if not. */
int kwq_forget(int fd, const void *key, size_t len);
/* The key's failure count (client-go NumRequeues). */
int kwq_num_requeues(int fd, const void *key, size_t len);
/* Waits up to @timeout_ns (< 0: forever, 0: not at all). On success the
 * key is in @buf and its length in *@len. -EMSGSIZE sets *@len to the
 * size needed. */
int kwq_get(int fd, void *buf, size_t cap, size_t *len, int64_t timeout_ns);
/* kwq_get with KWQ_GET_* @flags: KWQ_GET_UNLEASED leaves the key
 * processing when this fd closes, instead of putting it back. */
int kwq_get_flags(int fd, void *buf, size_t cap, size_t *len, int64_t timeout_ns,
		  unsigned int flags);
/* kwq_get_flags, and the hand-out's ticket in *@ticket (if not NULL). */
int kwq_get_ticket(int fd, void *buf, size_t cap, size_t *len, int64_t timeout_ns,
		   unsigned int flags, uint64_t *ticket);
/* kwq_get_ticket, and the key's payload into @pbuf (@pcap bytes; NULL:
 * copy none), its length in *@plen (0 for none; also on -EMSGSIZE, which
 * a payload longer than @pcap gives too, the key left queued). */
int kwq_get_payload(int fd, void *buf, size_t cap, size_t *len, void *pbuf, size_t pcap,
		    size_t *plen, int64_t timeout_ns, unsigned int flags, uint64_t *ticket);
/* Returns an enum kwq_done_result (>= 0). -ENOENT if the key is not being
 * processed or is leased to another fd. */
int kwq_done(int fd, const void *key, size_t len);
/* kwq_done of one hand-out only: @ticket from kwq_get_ticket(); -ENOENT if
 * it is no longer live (a processing timeout took the key back). */
int kwq_done_ticket(int fd, const void *key, size_t len, uint64_t ticket);
/* kwq_done of @done_key, then kwq_get, in one system call (two on modules
 * without KWQ_IOC_DONE_GET). *@done_result is set to the done's enum
 * kwq_done_result, or to -1 if the call failed before the done; returns
 * as kwq_get, or the done's error. */
int kwq_done_get(int fd, const void *done_key, size_t done_len, int *done_result,
		 void *buf, size_t cap, size_t *len, int64_t timeout_ns);

/* Batches of up to KWQ_BATCH_MAX entries (struct kwq_batch_entry). Each
 * returns the number of entries carried out (>= 1), stopping at the first
 * that fails, or a negative errno if the first one failed. The get batch
 * waits up to @timeout_ns for the first key only; key_len is the buffer
 * size in and the key length out. */
int kwq_add_batch(int fd, struct kwq_batch_entry *e, unsigned int n, unsigned int policy);
int kwq_get_batch(int fd, struct kwq_batch_entry *e, unsigned int n, int64_t timeout_ns,
		  unsigned int flags);
int kwq_done_batch(int fd, struct kwq_batch_entry *e, unsigned int n);
/* Names of the queues of the caller's IPC namespace into @names (@cap of
 * them); returns how many exist. */
int kwq_list(char (*names)[KWQ_NAME_MAX], unsigned int cap);
/* The same for the queues kernel modules made. */
int kwq_list_kernel(char (*names)[KWQ_NAME_MAX], unsigned int cap);

/* Keys ready for get (client-go's Len), or a negative errno. */
int64_t kwq_len(int fd);
int kwq_stats(int fd, struct kwq_stats *st);
int kwq_shutdown(int fd);
/* Shut down and wait until nothing is queued or processing. @flags:
 * KWQ_DRAIN_FLUSH_WAITING to run waiting keys now instead of dropping them. */
int kwq_shutdown_drain(int fd, int64_t timeout_ns, unsigned int flags);
/* 1 if shutting down, 0 if not, or a negative errno. */
int kwq_shutting_down(int fd);
int kwq_version(struct kwq_ioc_version *v);

/* "queued", "duplicate", "deferred", "waiting", ... for an enum kwq_add_result. */
const char *kwq_add_result_name(int result);
/* Absolute CLOCK_MONOTONIC deadline @timeout_ns from now, as the ABI
 * wants it (< 0: KWQ_DEADLINE_FOREVER, 0: KWQ_DEADLINE_NOWAIT). */
uint64_t kwq_deadline(int64_t timeout_ns);

#ifdef __cplusplus
}
#endif

#endif /* LIBKWQ_H */
