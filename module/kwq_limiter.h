/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kwq limiter engine: client-go's workqueue rate limiters (exponential
 * failure backoff, fast/slow, the x/time/rate token bucket, MaxOf and
 * WithMaxWait) in integer arithmetic. Pure: no allocation, no locking, no
 * clock; the caller passes the time and serializes all calls on one
 * struct kwq_rl (it holds the queue's spinlock). The formulas, units and
 * overflow guards are in Documentation/kwq-limiters.rst.
 */
#ifndef _KWQ_LIMITER_H
#define _KWQ_LIMITER_H

#include <linux/types.h>
#include <linux/kwq.h>		/* uapi: struct kwq_ratelimit */

/*
 * Bucket arithmetic unit: one token is KWQ_RL_UNIT units and one
 * nanosecond at rate_mhz mHz brings rate_mhz units (1 mHz for 1 ns is
 * 1e-12 token), so refill and delay are exact integer operations.
 */
#define KWQ_RL_UNIT		1000000000000ULL

/**
 * struct kwq_rl_bucket - state of one BUCKET limiter (x/time/rate Limiter)
 * @credit: whole tokens in the bucket, at most the burst; negative when
 *	tokens were reserved ahead of time (x/time/rate "tokens < 0").
 *	Never below -S64_MAX.
 * @frac: the part of the next token that has accrued, in KWQ_RL_UNIT
 *	units (0 to KWQ_RL_UNIT - 1); 0 whenever the bucket is full. The
 *	token count is @credit + @frac / KWQ_RL_UNIT.
 * @last_ns: the latest time the bucket was brought up to date at.
 */
struct kwq_rl_bucket {
	s64 credit;
	u64 frac;
	u64 last_ns;
};

/**
 * struct kwq_rl - a queue's limiter state
 * @desc: the validated policy (see kwq_rl_validate()).
 * @bucket: state of @desc.limiters[i] if it is a BUCKET, unused otherwise.
 *
 * Per-key state (the failure count) lives in the key's record and is
 * passed to kwq_rl_when(); this holds only what all keys share. The
 * caller serializes all calls on one struct kwq_rl.
 */
struct kwq_rl {
	struct kwq_ratelimit desc;
	struct kwq_rl_bucket bucket[KWQ_LIMITERS_MAX];
};

extern const struct kwq_ratelimit kwq_rl_default_controller;
extern const struct kwq_ratelimit kwq_rl_default_item;

int kwq_rl_validate(const struct kwq_ratelimit *desc);
void kwq_rl_init(struct kwq_rl *rl, const struct kwq_ratelimit *desc, u64 now_ns);
u64 kwq_rl_when(struct kwq_rl *rl, u32 *failures, u64 now_ns, u32 *reserved);
void kwq_rl_unreserve(struct kwq_rl *rl, u32 reserved, u64 now_ns);
bool kwq_rl_tracks_items(const struct kwq_rl *rl);

#endif /* _KWQ_LIMITER_H */
