// SPDX-License-Identifier: GPL-2.0
/*
 * kwq limiter engine: client-go's workqueue rate limiters
 * (default_rate_limiters.go) and the golang.org/x/time/rate token bucket
 * behind its BucketRateLimiter, in integer arithmetic.
 *
 * Everything here is pure: no allocation, no lock, no clock, no global
 * state except the two constant default policies. The caller passes the
 * time and serializes the calls on one struct kwq_rl. Every result is
 * clamped to KWQ_DELAY_MAX_NS, so no input can make a delay overflow or
 * go negative (client-go returns a negative delay for base 1 ns at 63
 * failures). Documentation/kwq-limiters.rst has the formulas.
 */

#include <linux/bits.h>
#include <linux/errno.h>
#include <linux/kernel.h>
#include <linux/limits.h>
#include <linux/math64.h>
#include <linux/minmax.h>
#include <linux/string.h>
#include <linux/time64.h>

#include "kwq_limiter.h"

/* KWQ_RL_UNIT is 10^12 = 5^12 << 12; dividing by it goes 5^12 at a time. */
#define KWQ_RL_UNIT_SHIFT	12
#define KWQ_RL_UNIT_ODD		244140625U	/* 5^12 */

/* The lowest bucket credit: a debt that no sequence of calls can reach. */
#define KWQ_RL_CREDIT_MIN	(-S64_MAX)

const struct kwq_ratelimit kwq_rl_default_controller = {
	.count = 2,
	.limiters = {
		{
			.type = KWQ_LIMITER_EXPONENTIAL,
			.base_ns = 5ULL * NSEC_PER_MSEC,
			.max_ns = 1000ULL * NSEC_PER_SEC,
		},
		{
			.type = KWQ_LIMITER_BUCKET,
			.rate_mhz = 10ULL * 1000,
			.burst = 100,
		},
	},
};

const struct kwq_ratelimit kwq_rl_default_item = {
	.count = 1,
	.limiters = {
		{
			.type = KWQ_LIMITER_EXPONENTIAL,
			.base_ns = 1ULL * NSEC_PER_MSEC,
			.max_ns = 1000ULL * NSEC_PER_SEC,
		},
	},
};

/* An unsigned 128-bit number, for the bucket's products. */
struct kwq_rl_u128 {
	u64 hi;
	u64 lo;
};

/**
 * kwq_rl_mul() - full 64 x 64 -> 128-bit product
 * @a: factor.
 * @b: factor.
 *
 * Portable (no compiler 128-bit type): four 32 x 32 products.
 *
 * Return: @a * @b.
 */
static struct kwq_rl_u128 kwq_rl_mul(u64 a, u64 b)
{
	u64 a0 = lower_32_bits(a), a1 = upper_32_bits(a);
	u64 b0 = lower_32_bits(b), b1 = upper_32_bits(b);
	u64 p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
	u64 mid = (p00 >> 32) + lower_32_bits(p01) + lower_32_bits(p10);
	struct kwq_rl_u128 r;

	r.lo = (mid << 32) | lower_32_bits(p00);
	r.hi = p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
	return r;
}

/**
 * kwq_rl_div_unit() - divide a 128-bit number by KWQ_RL_UNIT
 * @n: dividend.
 * @rem: out: @n mod KWQ_RL_UNIT, or 0 when the quotient is saturated.
 *
 * Shifts out 2^12, then long-divides by 5^12 (< 2^28) in 32-bit digits, so
 * every step is a 64 / 32-bit division whose dividend cannot overflow.
 *
 * Return: @n / KWQ_RL_UNIT, or U64_MAX if that does not fit in 64 bits.
 */
static u64 kwq_rl_div_unit(struct kwq_rl_u128 n, u64 *rem)
{
	u64 hi = n.hi >> KWQ_RL_UNIT_SHIFT;
	u64 lo = (n.lo >> KWQ_RL_UNIT_SHIFT) | (n.hi << (64 - KWQ_RL_UNIT_SHIFT));
	u64 q1, q0;
	u32 r;

	if (div_u64_rem(hi, KWQ_RL_UNIT_ODD, &r)) {
		*rem = 0;
		return U64_MAX;
	}
	/* r < 5^12 < 2^28: each partial dividend is below 2^60. */
	q1 = div_u64_rem(((u64)r << 32) | upper_32_bits(lo), KWQ_RL_UNIT_ODD, &r);
	q0 = div_u64_rem(((u64)r << 32) | lower_32_bits(lo), KWQ_RL_UNIT_ODD, &r);
	*rem = ((u64)r << KWQ_RL_UNIT_SHIFT) | (n.lo & GENMASK_ULL(KWQ_RL_UNIT_SHIFT - 1, 0));
	return (q1 << 32) | q0;
}

/**
 * kwq_rl_div128() - divide a 128-bit number by a 64-bit one
 * @n: dividend; @n.hi must be below @d, so that the quotient fits.
 * @d: divisor, not 0.
 * @rem: out: @n mod @d.
 *
 * Restoring shift-and-subtract division, one quotient bit per step. Only
 * bucket delays of more than about 2^64 / KWQ_RL_UNIT (18 million) tokens
 * of debt take this path.
 *
 * Return: @n / @d.
 */
static u64 kwq_rl_div128(struct kwq_rl_u128 n, u64 d, u64 *rem)
{
	u64 hi = n.hi, lo = n.lo, q = 0;
	int i;

	for (i = 0; i < 64; i++) {
		/* The running remainder is hi < d; shifted it is below 2d. */
		bool carry = hi >> 63;

		hi = (hi << 1) | (lo >> 63);
		lo <<= 1;
		q <<= 1;
		if (carry || hi >= d) {
			hi -= d;	/* wraps back below d if carry was set */
			q |= 1;
		}
	}
	*rem = hi;
	return q;
}

/**
 * kwq_rl_exponential() - client-go's ItemExponentialFailureRateLimiter
 * @l: an EXPONENTIAL limiter.
 * @failures: the key's failures before this one.
 *
 * base_ns * 2^@failures, or max_ns when that exceeds max_ns. The guard
 * comes before the shift, so there is no overflow and no shift by 64 or
 * more: base << f <= max exactly when base <= max >> f.
 *
 * Return: the delay in ns.
 */
static u64 kwq_rl_exponential(const struct kwq_limiter *l, u32 failures)
{
	if (failures >= 63 || l->base_ns > (l->max_ns >> failures))
		return l->max_ns;
	return l->base_ns << failures;
}

/**
 * kwq_rl_fast_slow() - client-go's ItemFastSlowRateLimiter
 * @l: a FAST_SLOW limiter.
 * @failures: the key's failures before this one.
 *
 * client-go increments first and then compares, so attempts 1 to
 * max_fast get fast_ns. The count is widened, so it still compares
 * correctly when @failures has saturated at U32_MAX.
 *
 * Return: the delay in ns.
 */
static u64 kwq_rl_fast_slow(const struct kwq_limiter *l, u32 failures)
{
	return (u64)failures + 1 <= l->max_fast ? l->fast_ns : l->slow_ns;
}

/**
 * kwq_rl_bucket_live() - whether a bucket limiter accounts tokens
 * @l: a BUCKET limiter.
 *
 * An infinite rate always allows and a burst of 0 never does (x/time/rate
 * refuses such a reservation); neither touches the bucket's state.
 *
 * Return: true for a finite rate and a non-zero burst.
 */
static bool kwq_rl_bucket_live(const struct kwq_limiter *l)
{
	return l->rate_mhz != KWQ_RATE_INF && l->burst;
}

/**
 * kwq_rl_advance() - bring a bucket up to date (x/time/rate advance())
 * @l: a live BUCKET limiter.
 * @b: its state.
 * @now_ns: the time; one earlier than @b->last_ns counts as @b->last_ns.
 *
 * Adds (now_ns - last_ns) * rate_mhz units and caps the bucket at burst
 * tokens. The product and the division are done in 128 bits and the
 * quotient saturates, so any idle gap just fills the bucket: (2^64 - 1) *
 * (2^64 - 2) + KWQ_RL_UNIT still fits in 128 bits.
 */
static void kwq_rl_advance(const struct kwq_limiter *l, struct kwq_rl_bucket *b,
			   u64 now_ns)
{
	struct kwq_rl_u128 n;
	u64 room, tokens, rem;

	if (now_ns <= b->last_ns)
		return;
	n = kwq_rl_mul(now_ns - b->last_ns, l->rate_mhz);
	b->last_ns = now_ns;
	if (b->credit >= (s64)l->burst)
		return;
	n.lo += b->frac;
	n.hi += n.lo < b->frac;
	tokens = kwq_rl_div_unit(n, &rem);
	/* burst - credit, at most U32_MAX + S64_MAX: exact in u64. */
	room = (u64)l->burst - (u64)b->credit;
	if (tokens >= room) {
		b->credit = l->burst;
		b->frac = 0;
	} else {
		b->credit = (s64)((u64)b->credit + tokens);
		b->frac = rem;
	}
}

/**
 * kwq_rl_debt_ns() - time until a bucket in debt is back at 0 tokens
 * @l: a live BUCKET limiter.
 * @b: its state, with @b->credit < 0.
 * @limit: the largest delay to return.
 *
 * The bucket holds credit + frac / KWQ_RL_UNIT tokens, a debt of
 * -credit * KWQ_RL_UNIT - frac units, and gains rate_mhz units per ns:
 * the delay is that debt divided by the rate, rounded up to a whole ns so
 * that the rate is never exceeded (x/time/rate truncates). The rounding
 * is not carried into the state, so it never accumulates.
 *
 * Return: the delay in ns, at most @limit.
 */
static u64 kwq_rl_debt_ns(const struct kwq_limiter *l, const struct kwq_rl_bucket *b,
			  u64 limit)
{
	struct kwq_rl_u128 n = kwq_rl_mul(-(u64)b->credit, KWQ_RL_UNIT);
	u64 rate = l->rate_mhz, q, rem;

	if (!rate)	/* not valid; x/time/rate says InfDuration */
		return limit;
	/* n >= KWQ_RL_UNIT > frac: no underflow. */
	n.hi -= n.lo < b->frac;
	n.lo -= b->frac;
	if (n.hi >= rate)	/* the quotient has more than 64 bits */
		return limit;
	if (n.hi)
		q = kwq_rl_div128(n, rate, &rem);
	else
		q = div64_u64_rem(n.lo, rate, &rem);
	if (q >= limit)
		return limit;
	return q + !!rem;
}

/**
 * kwq_rl_bucket_when() - reserve one token (x/time/rate Reserve().Delay())
 * @l: a BUCKET limiter.
 * @b: its state.
 * @now_ns: the time.
 * @limit: the largest delay to return.
 * @reserved: out: whether a token was taken.
 *
 * Return: the delay in ns, at most @limit.
 */
static u64 kwq_rl_bucket_when(const struct kwq_limiter *l, struct kwq_rl_bucket *b,
			      u64 now_ns, u64 limit, bool *reserved)
{
	*reserved = false;
	if (l->rate_mhz == KWQ_RATE_INF)
		return 0;
	if (!l->burst)
		return limit;
	kwq_rl_advance(l, b, now_ns);
	if (b->credit > KWQ_RL_CREDIT_MIN)
		b->credit--;
	*reserved = true;
	if (b->credit >= 0)
		return 0;
	return kwq_rl_debt_ns(l, b, limit);
}

/**
 * kwq_rl_limit() - the largest delay a policy may return
 * @desc: the policy.
 *
 * Return: max_wait_ns if set, and never more than KWQ_DELAY_MAX_NS.
 */
static u64 kwq_rl_limit(const struct kwq_ratelimit *desc)
{
	if (desc->max_wait_ns && desc->max_wait_ns < KWQ_DELAY_MAX_NS)
		return desc->max_wait_ns;
	return KWQ_DELAY_MAX_NS;
}

/**
 * kwq_rl_validate_limiter() - check one used limiter
 * @l: the limiter.
 *
 * Return: 0, or -EINVAL for an unknown type, a non-zero field the type
 * does not use, a non-zero pad, or a value out of range.
 */
static int kwq_rl_validate_limiter(const struct kwq_limiter *l)
{
	if (l->pad)
		return -EINVAL;
	switch (l->type) {
	case KWQ_LIMITER_EXPONENTIAL:
		if (l->max_fast || l->fast_ns || l->slow_ns || l->rate_mhz || l->burst)
			return -EINVAL;
		if (!l->base_ns || l->base_ns > l->max_ns || l->max_ns > KWQ_DELAY_MAX_NS)
			return -EINVAL;
		return 0;
	case KWQ_LIMITER_FAST_SLOW:
		/* max_fast 0 is valid, as in client-go: every attempt is slow. */
		if (l->base_ns || l->max_ns || l->rate_mhz || l->burst)
			return -EINVAL;
		if (l->fast_ns > KWQ_DELAY_MAX_NS || l->slow_ns > KWQ_DELAY_MAX_NS)
			return -EINVAL;
		return 0;
	case KWQ_LIMITER_BUCKET:
		/* Any burst, 0 included (x/time/rate: never allows). */
		if (l->max_fast || l->base_ns || l->max_ns || l->fast_ns || l->slow_ns)
			return -EINVAL;
		if (!l->rate_mhz)
			return -EINVAL;
		return 0;
	default:
		return -EINVAL;
	}
}

/**
 * kwq_rl_validate() - check a policy from userspace
 * @desc: the policy.
 *
 * Rules: count at most KWQ_LIMITERS_MAX; flags, reserved and every
 * unused limiter slot all zero; for each used limiter, a known type, the
 * fields the type does not use and pad zero, and EXPONENTIAL 1 <= base_ns
 * <= max_ns <= KWQ_DELAY_MAX_NS, FAST_SLOW fast_ns and slow_ns at most
 * KWQ_DELAY_MAX_NS (max_fast 0 allowed), BUCKET rate_mhz not 0;
 * max_wait_ns at most KWQ_DELAY_MAX_NS.
 *
 * Context: any.
 * Return: 0 if @desc may be passed to kwq_rl_init(), else -EINVAL.
 */
int kwq_rl_validate(const struct kwq_ratelimit *desc)
{
	u32 i;

	if (desc->count > KWQ_LIMITERS_MAX || desc->flags ||
	    desc->max_wait_ns > KWQ_DELAY_MAX_NS ||
	    memchr_inv(desc->reserved, 0, sizeof(desc->reserved)))
		return -EINVAL;
	for (i = 0; i < desc->count; i++)
		if (kwq_rl_validate_limiter(&desc->limiters[i]))
			return -EINVAL;
	if (memchr_inv(&desc->limiters[desc->count], 0,
		       (KWQ_LIMITERS_MAX - desc->count) * sizeof(desc->limiters[0])))
		return -EINVAL;
	return 0;
}

/**
 * kwq_rl_init() - set up a queue's limiter state
 * @rl: the state to fill.
 * @desc: a policy that kwq_rl_validate() accepted.
 * @now_ns: the time; every bucket starts full at it.
 *
 * Context: any.
 */
void kwq_rl_init(struct kwq_rl *rl, const struct kwq_ratelimit *desc, u64 now_ns)
{
	u32 i;

	rl->desc = *desc;
	for (i = 0; i < KWQ_LIMITERS_MAX; i++) {
		const struct kwq_limiter *l = &desc->limiters[i];

		rl->bucket[i].credit = i < desc->count && l->type == KWQ_LIMITER_BUCKET ?
				       l->burst : 0;
		rl->bucket[i].frac = 0;
		rl->bucket[i].last_ns = now_ns;
	}
}

/**
 * kwq_rl_when() - delay before the next retry of a key (client-go's When)
 * @rl: the queue's limiter state.
 * @failures: in/out: the key's failure count; incremented, saturating at
 *	U32_MAX.
 * @now_ns: the time, from a clock that does not go backwards; a time
 *	earlier than one already seen counts as that one.
 * @reserved: out: bit i set if limiter i (a BUCKET) took a token, for
 *	kwq_rl_unreserve().
 *
 * Consults every limiter (client-go's MaxOf: all side effects happen) and
 * takes the largest delay: EXPONENTIAL base_ns * 2^@failures capped at
 * max_ns, FAST_SLOW fast_ns for the first max_fast calls and then slow_ns,
 * BUCKET x/time/rate's Reserve().Delay() rounded up to a whole ns. The
 * result is then capped at max_wait_ns (client-go's WithMaxWait) and at
 * KWQ_DELAY_MAX_NS, which is also what a BUCKET with burst 0 returns
 * (x/time/rate: InfDuration). With no limiter the delay is 0.
 *
 * Context: any; the caller serializes calls on @rl.
 * Return: the delay in ns, 0 to KWQ_DELAY_MAX_NS.
 */
u64 kwq_rl_when(struct kwq_rl *rl, u32 *failures, u64 now_ns, u32 *reserved)
{
	const struct kwq_ratelimit *desc = &rl->desc;
	u32 i, n = min_t(u32, desc->count, KWQ_LIMITERS_MAX), f = *failures;
	u64 limit = kwq_rl_limit(desc), delay = 0, d;
	bool took;

	*reserved = 0;
	for (i = 0; i < n; i++) {
		const struct kwq_limiter *l = &desc->limiters[i];

		switch (l->type) {
		case KWQ_LIMITER_EXPONENTIAL:
			d = kwq_rl_exponential(l, f);
			break;
		case KWQ_LIMITER_FAST_SLOW:
			d = kwq_rl_fast_slow(l, f);
			break;
		case KWQ_LIMITER_BUCKET:
			d = kwq_rl_bucket_when(l, &rl->bucket[i], now_ns, limit, &took);
			if (took)
				*reserved |= 1U << i;
			break;
		default:
			d = 0;
			break;
		}
		delay = max(delay, d);
	}
	if (f < U32_MAX)
		*failures = f + 1;
	return min(delay, limit);
}

/**
 * kwq_rl_unreserve() - give back the tokens of an unused kwq_rl_when()
 * @rl: the queue's limiter state.
 * @reserved: the mask that kwq_rl_when() returned.
 * @now_ns: the time.
 *
 * For a delay that was not used (the key already waited for an earlier
 * deadline), so that its tokens are not wasted: each bucket in @reserved
 * gets exactly one token back, never filling beyond its burst. Unlike
 * x/time/rate's Reservation.Cancel() this does not look at reservations
 * made since; the caller gives back a call's tokens right after it.
 *
 * Context: any; the caller serializes calls on @rl.
 */
void kwq_rl_unreserve(struct kwq_rl *rl, u32 reserved, u64 now_ns)
{
	u32 i, n = min_t(u32, rl->desc.count, KWQ_LIMITERS_MAX);

	for (i = 0; i < n; i++) {
		const struct kwq_limiter *l = &rl->desc.limiters[i];
		struct kwq_rl_bucket *b = &rl->bucket[i];

		if (!(reserved & (1U << i)) || l->type != KWQ_LIMITER_BUCKET ||
		    !kwq_rl_bucket_live(l))
			continue;
		kwq_rl_advance(l, b, now_ns);
		if (b->credit >= (s64)l->burst - 1) {
			b->credit = l->burst;
			b->frac = 0;
		} else {
			b->credit++;
		}
	}
}

/**
 * kwq_rl_tracks_items() - whether the policy keeps per-key state
 * @rl: the queue's limiter state.
 *
 * client-go's NumRequeues is the failure count for EXPONENTIAL and
 * FAST_SLOW limiters and 0 for a BUCKET-only (or empty) policy.
 *
 * Context: any.
 * Return: true if some used limiter is EXPONENTIAL or FAST_SLOW.
 */
bool kwq_rl_tracks_items(const struct kwq_rl *rl)
{
	u32 i, n = min_t(u32, rl->desc.count, KWQ_LIMITERS_MAX);

	for (i = 0; i < n; i++)
		if (rl->desc.limiters[i].type == KWQ_LIMITER_EXPONENTIAL ||
		    rl->desc.limiters[i].type == KWQ_LIMITER_FAST_SLOW)
			return true;
	return false;
}
