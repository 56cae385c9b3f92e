// SPDX-License-Identifier: GPL-2.0
/*
 * Prints the layout of every struct of uapi/linux/kwq.h, its ioctl
 * numbers and constants, one per line, in the format of
 * bindings/go/testdata/abi.txt. scripts/go.sh builds and runs it and
 * fails if the output differs from that file; abi_test.go checks the Go
 * mirror (uapi.go) against the same file.
 */
#include <stddef.h>
#include <stdio.h>
#include <linux/kwq.h>

#define S(t) printf("size %s %zu\n", #t, sizeof(struct t))
#define F(t, f) printf("field %s %s %zu %zu\n", #t, #f, offsetof(struct t, f), \
		       sizeof(((struct t *)0)->f))
#define I(c) printf("ioctl %s %lu\n", #c, (unsigned long)(c))
#define C(c) printf("const %s %llu\n", #c, (unsigned long long)(c))

int main(void)
{
	S(kwq_limiter);
	F(kwq_limiter, type); F(kwq_limiter, max_fast); F(kwq_limiter, base_ns);
	F(kwq_limiter, max_ns); F(kwq_limiter, fast_ns); F(kwq_limiter, slow_ns);
	F(kwq_limiter, rate_mhz); F(kwq_limiter, burst); F(kwq_limiter, pad);
	S(kwq_ratelimit);
	F(kwq_ratelimit, count); F(kwq_ratelimit, flags); F(kwq_ratelimit, max_wait_ns);
	F(kwq_ratelimit, limiters); F(kwq_ratelimit, reserved);
	S(kwq_ioc_version);
	F(kwq_ioc_version, abi_version); F(kwq_ioc_version, key_max);
	F(kwq_ioc_version, name_max); F(kwq_ioc_version, flags);
	F(kwq_ioc_version, features); F(kwq_ioc_version, reserved);
	S(kwq_ioc_create);
	F(kwq_ioc_create, name); F(kwq_ioc_create, flags); F(kwq_ioc_create, mode);
	F(kwq_ioc_create, max_items); F(kwq_ioc_create, policy);
	F(kwq_ioc_create, max_backoff_keys); F(kwq_ioc_create, pad);
	F(kwq_ioc_create, ratelimit); F(kwq_ioc_create, processing_timeout_ns);
	F(kwq_ioc_create, payload_max); F(kwq_ioc_create, tenant_depth);
	F(kwq_ioc_create, pad3);
	F(kwq_ioc_create, aging_ns); F(kwq_ioc_create, reserved);
	S(kwq_ioc_open);
	F(kwq_ioc_open, name); F(kwq_ioc_open, flags); F(kwq_ioc_open, pad);
	F(kwq_ioc_open, reserved);
	S(kwq_ioc_key);
	F(kwq_ioc_key, key_ptr); F(kwq_ioc_key, key_len); F(kwq_ioc_key, flags);
	F(kwq_ioc_key, result); F(kwq_ioc_key, pad); F(kwq_ioc_key, ticket);
	F(kwq_ioc_key, reserved);
	S(kwq_ioc_add_after);
	F(kwq_ioc_add_after, key_ptr); F(kwq_ioc_add_after, key_len);
	F(kwq_ioc_add_after, flags); F(kwq_ioc_add_after, delay_ns);
	F(kwq_ioc_add_after, result); F(kwq_ioc_add_after, pad);
	F(kwq_ioc_add_after, max_wait_ns); F(kwq_ioc_add_after, reserved);
	S(kwq_ioc_get);
	F(kwq_ioc_get, key_ptr); F(kwq_ioc_get, key_cap); F(kwq_ioc_get, key_len);
	F(kwq_ioc_get, deadline_ns); F(kwq_ioc_get, flags); F(kwq_ioc_get, payload_len);
	F(kwq_ioc_get, ticket); F(kwq_ioc_get, payload_ptr);
	S(kwq_ioc_add);
	F(kwq_ioc_add, key_ptr); F(kwq_ioc_add, key_len); F(kwq_ioc_add, flags);
	F(kwq_ioc_add, delay_ns); F(kwq_ioc_add, max_wait_ns); F(kwq_ioc_add, payload_ptr);
	F(kwq_ioc_add, payload_len); F(kwq_ioc_add, priority); F(kwq_ioc_add, result);
	F(kwq_ioc_add, pad); F(kwq_ioc_add, reserved);
	S(kwq_ioc_done_get);
	F(kwq_ioc_done_get, done_ptr); F(kwq_ioc_done_get, done_len);
	F(kwq_ioc_done_get, done_result); F(kwq_ioc_done_get, key_ptr);
	F(kwq_ioc_done_get, key_cap); F(kwq_ioc_done_get, key_len);
	F(kwq_ioc_done_get, deadline_ns); F(kwq_ioc_done_get, flags);
	F(kwq_ioc_done_get, pad); F(kwq_ioc_done_get, done_ticket);
	F(kwq_ioc_done_get, ticket);
	S(kwq_batch_entry);
	F(kwq_batch_entry, key_ptr); F(kwq_batch_entry, key_len); F(kwq_batch_entry, result);
	S(kwq_ioc_batch);
	F(kwq_ioc_batch, entries_ptr); F(kwq_ioc_batch, count); F(kwq_ioc_batch, completed);
	F(kwq_ioc_batch, flags); F(kwq_ioc_batch, pad); F(kwq_ioc_batch, deadline_ns);
	F(kwq_ioc_batch, reserved);
	S(kwq_ioc_list);
	F(kwq_ioc_list, names_ptr); F(kwq_ioc_list, capacity); F(kwq_ioc_list, count);
	F(kwq_ioc_list, flags); F(kwq_ioc_list, pad); F(kwq_ioc_list, reserved);
	S(kwq_ioc_drain);
	F(kwq_ioc_drain, deadline_ns); F(kwq_ioc_drain, flags); F(kwq_ioc_drain, pad);
	S(kwq_ioc_clock_step);
	F(kwq_ioc_clock_step, step_ns); F(kwq_ioc_clock_step, now_ns);
	F(kwq_ioc_clock_step, flags); F(kwq_ioc_clock_step, pending);
	F(kwq_ioc_clock_step, reserved);
	S(kwq_stats);
	F(kwq_stats, size); F(kwq_stats, state); F(kwq_stats, queued);
	F(kwq_stats, processing); F(kwq_stats, dirty_processing); F(kwq_stats, waiting);
	F(kwq_stats, items); F(kwq_stats, max_items); F(kwq_stats, adds);
	F(kwq_stats, dedups); F(kwq_stats, gets); F(kwq_stats, dones);
	F(kwq_stats, requeues); F(kwq_stats, refused); F(kwq_stats, fired);
	F(kwq_stats, cancels); F(kwq_stats, absorbed); F(kwq_stats, waits_dropped);
	F(kwq_stats, lease_requeues); F(kwq_stats, backoff_keys);
	F(kwq_stats, rate_limited); F(kwq_stats, tokens_returned);
	F(kwq_stats, backoff_evictions); F(kwq_stats, retries); F(kwq_stats, forgets);
	F(kwq_stats, unfinished_work_ns); F(kwq_stats, longest_running_ns);
	F(kwq_stats, queue_latency); F(kwq_stats, queue_latency_sum_ns);
	F(kwq_stats, work_duration); F(kwq_stats, work_duration_sum_ns);
	F(kwq_stats, processing_expiries); F(kwq_stats, debounced);
	F(kwq_stats, debounce_capped); F(kwq_stats, payloads_replaced);
	F(kwq_stats, payload_bytes);

	I(KWQ_IOC_VERSION); I(KWQ_IOC_CREATE); I(KWQ_IOC_OPEN); I(KWQ_IOC_DESTROY);
	I(KWQ_IOC_LIST); I(KWQ_IOC_ADD); I(KWQ_IOC_GET); I(KWQ_IOC_DONE);
	I(KWQ_IOC_ADD_AFTER); I(KWQ_IOC_CANCEL); I(KWQ_IOC_ADD_BATCH);
	I(KWQ_IOC_GET_BATCH); I(KWQ_IOC_DONE_BATCH); I(KWQ_IOC_DONE_GET); I(KWQ_IOC_ADD_EX);
	I(KWQ_IOC_ADD_RATE_LIMITED); I(KWQ_IOC_FORGET); I(KWQ_IOC_NUM_REQUEUES);
	I(KWQ_IOC_SHUTDOWN); I(KWQ_IOC_DRAIN); I(KWQ_IOC_STATS); I(KWQ_IOC_CLOCK_STEP);

	C(KWQ_ABI_VERSION); C(KWQ_KEY_MAX); C(KWQ_NAME_MAX); C(KWQ_BATCH_MAX);
	C(KWQ_DELAY_MAX_NS); C(KWQ_DEADLINE_NOWAIT); C(KWQ_DEADLINE_FOREVER);
	C(KWQ_LIMITERS_MAX); C(KWQ_RATE_INF); C(KWQ_STATS_BUCKETS);
	C(KWQ_LIMITER_EXPONENTIAL); C(KWQ_LIMITER_FAST_SLOW); C(KWQ_LIMITER_BUCKET);
	C(KWQ_CREATE_RATELIMIT); C(KWQ_CREATE_PRIORITY); C(KWQ_AFTER_REPLACE);
	C(KWQ_AFTER_DEBOUNCE); C(KWQ_PRIORITY_MIN); C(KWQ_PRIORITY_MAX);
	C(KWQ_AGING_DEFAULT_NS); C(KWQ_AGING_MAX_NS);
	C(KWQ_CREATE_TENANT); C(KWQ_TENANT_DEPTH_MAX);
	C(KWQ_DRAIN_FLUSH_WAITING);
	C(KWQ_GET_UNLEASED); C(KWQ_SCOPE_KERNEL); C(KWQ_DONE_NOT_RUN); C(KWQ_STATE_SHUTTING_DOWN);
	C(KWQ_STATE_DRAINING); C(KWQ_STATE_DESTROYED);
	C(KWQ_ADD_QUEUED); C(KWQ_ADD_DUPLICATE); C(KWQ_ADD_DEFERRED); C(KWQ_ADD_WAITING);
	C(KWQ_ADD_WAIT_KEPT); C(KWQ_ADD_WAIT_MOVED); C(KWQ_ADD_ABSORBED);
	C(KWQ_DONE_FINISHED); C(KWQ_DONE_REQUEUED);
	C(KWQ_POLICY_DEFAULT); C(KWQ_POLICY_KEEP); C(KWQ_POLICY_PROMOTE); C(KWQ_POLICY_STRICT);
	C(KWQ_FEATURE_CORE); C(KWQ_FEATURE_DELAY); C(KWQ_FEATURE_LEASE); C(KWQ_FEATURE_BATCH);
	C(KWQ_FEATURE_RATELIMIT); C(KWQ_FEATURE_METRICS); C(KWQ_FEATURE_DONE_GET);
	C(KWQ_FEATURE_TICKET); C(KWQ_FEATURE_SCOPE); C(KWQ_FEATURE_DEBOUNCE);
	C(KWQ_FEATURE_PRIORITY); C(KWQ_FEATURE_TENANT);
	C(KWQ_FEATURE_PAYLOAD);
	C(KWQ_CREATE_MANUAL_CLOCK); C(KWQ_FEATURE_MANUAL_CLOCK); C(KWQ_CLOCK_MAX_NS);
	C(KWQ_CLOCK_STEP_KEYS);
	return 0;
}
