// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite for the kwq limiter engine: client-go's
 * default_rate_limiters_test.go numbers, golang.org/x/time/rate's
 * reservation sequence, and the overflow edges client-go gets wrong.
 *
 * The engine is pure and exports nothing, so this file includes its own
 * copy of it. Time is always passed explicitly: nothing sleeps or reads a
 * clock, and every expectation is an exact number.
 */

#include <kunit/test.h>
#include <linux/stddef.h>

#include "../module/kwq_limiter.c"

#define MS(x)		((u64)(x) * NSEC_PER_MSEC)
#define SEC(x)		((u64)(x) * NSEC_PER_SEC)
#define DMAX		KWQ_DELAY_MAX_NS

#define EXP(b, m)	{ .type = KWQ_LIMITER_EXPONENTIAL, .base_ns = (b), .max_ns = (m) }
#define FAST_SLOW(f, s, n) \
	{ .type = KWQ_LIMITER_FAST_SLOW, .fast_ns = (f), .slow_ns = (s), .max_fast = (n) }
#define BUCKET(r, b)	{ .type = KWQ_LIMITER_BUCKET, .rate_mhz = (r), .burst = (b) }

static void setup(struct kunit *test, struct kwq_rl *rl,
		  const struct kwq_ratelimit *desc, u64 now)
{
	KUNIT_ASSERT_EQ(test, kwq_rl_validate(desc), 0);
	kwq_rl_init(rl, desc, now);
}

static u64 when(struct kwq_rl *rl, u32 *failures, u64 now)
{
	u32 reserved;

	return kwq_rl_when(rl, failures, now, &reserved);
}

/* @n calls for fresh keys at @now, each expected to return @want. */
static void expect_fresh(struct kunit *test, struct kwq_rl *rl, u64 now,
			 int n, u64 want)
{
	int i;

	for (i = 0; i < n; i++) {
		u32 f = 0;

		KUNIT_EXPECT_EQ_MSG(test, when(rl, &f, now), want, "call %d", i);
		KUNIT_EXPECT_EQ(test, f, 1);
	}
}

/* client-go TestItemExponentialFailureRateLimiter, then on to the cap. */
static void kwq_limiter_test_exponential(struct kunit *test)
{
	struct kwq_ratelimit d = { .count = 1, .limiters = { EXP(MS(1), SEC(1)) } };
	static const u64 more[] = { 32, 64, 128, 256, 512, 1000, 1000 };
	struct kwq_rl rl;
	u32 one = 0, two = 0, reserved = 7;
	int i;

	setup(test, &rl, &d, 0);
	KUNIT_EXPECT_EQ(test, kwq_rl_when(&rl, &one, 0, &reserved), MS(1));
	KUNIT_EXPECT_EQ(test, reserved, 0);
	KUNIT_EXPECT_EQ(test, when(&rl, &one, 0), MS(2));
	KUNIT_EXPECT_EQ(test, when(&rl, &one, 0), MS(4));
	KUNIT_EXPECT_EQ(test, when(&rl, &one, 0), MS(8));
	KUNIT_EXPECT_EQ(test, when(&rl, &one, 0), MS(16));
	KUNIT_EXPECT_EQ(test, one, 5);
	KUNIT_EXPECT_EQ(test, when(&rl, &two, 0), MS(1));
	KUNIT_EXPECT_EQ(test, when(&rl, &two, 0), MS(2));
	KUNIT_EXPECT_EQ(test, two, 2);
	for (i = 0; i < ARRAY_SIZE(more); i++)
		KUNIT_EXPECT_EQ(test, when(&rl, &one, 0), MS(more[i]));
	KUNIT_EXPECT_EQ(test, one, 12);
	/* Forget: the caller resets the count; the first delay is base again. */
	one = 0;
	KUNIT_EXPECT_EQ(test, when(&rl, &one, 0), MS(1));
	/* base == max is valid: always max. */
	d.limiters[0].base_ns = SEC(1);
	setup(test, &rl, &d, 0);
	one = 0;
	KUNIT_EXPECT_EQ(test, when(&rl, &one, 0), SEC(1));
	KUNIT_EXPECT_EQ(test, when(&rl, &one, 0), SEC(1));
}

static u64 exp_at(struct kunit *test, u64 base, u64 max, u32 failures)
{
	struct kwq_ratelimit d = { .count = 1, .limiters = { EXP(base, max) } };
	struct kwq_rl rl;
	u32 f = failures;
	u64 r;

	setup(test, &rl, &d, 0);
	r = when(&rl, &f, 0);
	KUNIT_EXPECT_EQ(test, f, failures == U32_MAX ? U32_MAX : failures + 1);
	return r;
}

/* client-go TestItemExponentialFailureRateLimiterOverFlow and the edges. */
static void kwq_limiter_test_exponential_overflow(struct kunit *test)
{
	struct kwq_ratelimit d = { .count = 1, .limiters = { EXP(MS(1), SEC(1000)) } };
	struct kwq_limiter raw = EXP(1, U64_MAX);
	struct kwq_rl rl;
	u32 f = 0;
	int i;

	setup(test, &rl, &d, 0);
	for (i = 0; i < 5; i++)
		when(&rl, &f, 0);
	KUNIT_EXPECT_EQ(test, when(&rl, &f, 0), MS(32));
	f = 0;
	for (i = 0; i < 1000; i++)
		when(&rl, &f, 0);
	KUNIT_EXPECT_EQ(test, when(&rl, &f, 0), SEC(1000));
	KUNIT_EXPECT_EQ(test, f, 1001);

	/* client-go uses 1 min .. 1000 h; 1000 h is beyond KWQ_DELAY_MAX_NS. */
	d.limiters[0].base_ns = SEC(60);
	d.limiters[0].max_ns = DMAX;
	setup(test, &rl, &d, 0);
	f = 0;
	for (i = 0; i < 2; i++)
		when(&rl, &f, 0);
	KUNIT_EXPECT_EQ(test, when(&rl, &f, 0), SEC(240));
	f = 0;
	for (i = 0; i < 1000; i++)
		when(&rl, &f, 0);
	KUNIT_EXPECT_EQ(test, when(&rl, &f, 0), DMAX);
	KUNIT_EXPECT_EQ(test, exp_at(test, SEC(60), DMAX, 13), SEC(60) << 13);
	KUNIT_EXPECT_EQ(test, exp_at(test, SEC(60), DMAX, 14), DMAX);

	/* base 1 ns: client-go returns -2^63 ns at 63 failures. */
	KUNIT_EXPECT_EQ(test, exp_at(test, 1, SEC(1000), 39), 1ULL << 39);
	KUNIT_EXPECT_EQ(test, exp_at(test, 1, SEC(1000), 40), SEC(1000));
	KUNIT_EXPECT_EQ(test, exp_at(test, 1, SEC(1000), 62), SEC(1000));
	KUNIT_EXPECT_EQ(test, exp_at(test, 1, SEC(1000), 63), SEC(1000));
	KUNIT_EXPECT_EQ(test, exp_at(test, 1, SEC(1000), 64), SEC(1000));
	KUNIT_EXPECT_EQ(test, exp_at(test, 1, SEC(1000), 1000), SEC(1000));
	KUNIT_EXPECT_EQ(test, exp_at(test, 1, SEC(1000), U32_MAX), SEC(1000));
	KUNIT_EXPECT_EQ(test, exp_at(test, 1, DMAX, 49), 1ULL << 49);
	KUNIT_EXPECT_EQ(test, exp_at(test, 1, DMAX, 50), DMAX);
	KUNIT_EXPECT_EQ(test, exp_at(test, 1, DMAX, 63), DMAX);
	KUNIT_EXPECT_EQ(test, exp_at(test, 1, 1, 0), 1);
	KUNIT_EXPECT_EQ(test, exp_at(test, 1, 1, 63), 1);

	/* base 5 ms: 5 ms << 26 fits under 7 days, << 27 does not. */
	KUNIT_EXPECT_EQ(test, exp_at(test, MS(5), DMAX, 26), 335544320000000ULL);
	KUNIT_EXPECT_EQ(test, exp_at(test, MS(5), DMAX, 27), DMAX);
	KUNIT_EXPECT_EQ(test, exp_at(test, MS(5), SEC(1000), 17), 655360000000ULL);
	KUNIT_EXPECT_EQ(test, exp_at(test, MS(5), SEC(1000), 18), SEC(1000));
	KUNIT_EXPECT_EQ(test, exp_at(test, MS(5), SEC(1000), 62), SEC(1000));
	KUNIT_EXPECT_EQ(test, exp_at(test, MS(5), SEC(1000), 63), SEC(1000));
	KUNIT_EXPECT_EQ(test, exp_at(test, MS(5), SEC(1000), 64), SEC(1000));
	KUNIT_EXPECT_EQ(test, exp_at(test, MS(5), SEC(1000), 1000), SEC(1000));
	KUNIT_EXPECT_EQ(test, exp_at(test, MS(5), SEC(1000), U32_MAX), SEC(1000));

	/* The formula itself, with a cap no valid policy has: no wrap. */
	KUNIT_EXPECT_EQ(test, kwq_rl_exponential(&raw, 62), 1ULL << 62);
	KUNIT_EXPECT_EQ(test, kwq_rl_exponential(&raw, 63), U64_MAX);
	KUNIT_EXPECT_EQ(test, kwq_rl_exponential(&raw, 64), U64_MAX);
	raw.base_ns = 5;
	KUNIT_EXPECT_EQ(test, kwq_rl_exponential(&raw, 61), 5ULL << 61);
	KUNIT_EXPECT_EQ(test, kwq_rl_exponential(&raw, 62), U64_MAX);
	/* ... and through kwq_rl_when() it is clamped to 7 days. */
	d.limiters[0] = (struct kwq_limiter)EXP(1, U64_MAX);
	kwq_rl_init(&rl, &d, 0);
	f = 63;
	KUNIT_EXPECT_EQ(test, when(&rl, &f, 0), DMAX);
	f = 62;
	KUNIT_EXPECT_EQ(test, when(&rl, &f, 0), DMAX);

	/* The failure count saturates. */
	f = U32_MAX - 1;
	when(&rl, &f, 0);
	KUNIT_EXPECT_EQ(test, f, U32_MAX);
	when(&rl, &f, 0);
	KUNIT_EXPECT_EQ(test, f, U32_MAX);
}

/* client-go TestItemFastSlowRateLimiter, max_fast 0 and saturation. */
static void kwq_limiter_test_fast_slow(struct kunit *test)
{
	struct kwq_ratelimit d = {
		.count = 1, .limiters = { FAST_SLOW(MS(5), SEC(10), 3) },
	};
	struct kwq_rl rl;
	u32 one = 0, two = 0;

	setup(test, &rl, &d, 0);
	KUNIT_EXPECT_EQ(test, when(&rl, &one, 0), MS(5));
	KUNIT_EXPECT_EQ(test, when(&rl, &one, 0), MS(5));
	KUNIT_EXPECT_EQ(test, when(&rl, &one, 0), MS(5));
	KUNIT_EXPECT_EQ(test, when(&rl, &one, 0), SEC(10));
	KUNIT_EXPECT_EQ(test, when(&rl, &one, 0), SEC(10));
	KUNIT_EXPECT_EQ(test, one, 5);
	KUNIT_EXPECT_EQ(test, when(&rl, &two, 0), MS(5));
	KUNIT_EXPECT_EQ(test, when(&rl, &two, 0), MS(5));
	KUNIT_EXPECT_EQ(test, two, 2);
	one = 0;
	KUNIT_EXPECT_EQ(test, when(&rl, &one, 0), MS(5));

	/* max_fast 0 (valid, as in client-go): every attempt is slow. */
	d.limiters[0].max_fast = 0;
	setup(test, &rl, &d, 0);
	one = 0;
	KUNIT_EXPECT_EQ(test, when(&rl, &one, 0), SEC(10));
	KUNIT_EXPECT_EQ(test, when(&rl, &one, 0), SEC(10));

	/* Attempt U32_MAX is fast; a saturated count is past it: slow. */
	d.limiters[0].max_fast = U32_MAX;
	setup(test, &rl, &d, 0);
	one = U32_MAX - 1;
	KUNIT_EXPECT_EQ(test, when(&rl, &one, 0), MS(5));
	KUNIT_EXPECT_EQ(test, one, U32_MAX);
	KUNIT_EXPECT_EQ(test, when(&rl, &one, 0), SEC(10));
	KUNIT_EXPECT_EQ(test, one, U32_MAX);

	/* fast > slow is allowed; the formula does not care. */
	d.limiters[0] = (struct kwq_limiter)FAST_SLOW(SEC(2), 0, 1);
	setup(test, &rl, &d, 0);
	one = 0;
	KUNIT_EXPECT_EQ(test, when(&rl, &one, 0), SEC(2));
	KUNIT_EXPECT_EQ(test, when(&rl, &one, 0), 0);
}

/* x/time/rate with NewLimiter(10, 100): 100 free, then 100 ms apart. */
static void kwq_limiter_test_bucket_sequence(struct kunit *test)
{
	struct kwq_ratelimit d = { .count = 1, .limiters = { BUCKET(10000, 100) } };
	const u64 t0 = SEC(5000);
	struct kwq_rl rl;
	u32 f = 0, reserved;
	int i;

	setup(test, &rl, &d, t0);
	for (i = 0; i < 100; i++) {
		KUNIT_EXPECT_EQ(test, kwq_rl_when(&rl, &f, t0, &reserved), 0);
		KUNIT_EXPECT_EQ(test, reserved, 1);
	}
	for (i = 1; i <= 10; i++)
		KUNIT_EXPECT_EQ(test, when(&rl, &f, t0), MS(100) * i);
	KUNIT_EXPECT_EQ(test, rl.bucket[0].credit, -10);
	/* 1 s later the 10 borrowed tokens are paid back: tokens 0. */
	KUNIT_EXPECT_EQ(test, when(&rl, &f, t0 + SEC(1)), MS(100));
	/* 50 ms later: -1 + 0.5 - 1 = -1.5 tokens. */
	KUNIT_EXPECT_EQ(test, when(&rl, &f, t0 + MS(1050)), MS(150));
	KUNIT_EXPECT_EQ(test, rl.bucket[0].credit, -2);
	KUNIT_EXPECT_EQ(test, rl.bucket[0].frac, KWQ_RL_UNIT / 2);
	/* The bucket does not count failures; the caller's count goes up. */
	KUNIT_EXPECT_EQ(test, f, 112);
	KUNIT_EXPECT_EQ(test, kwq_rl_tracks_items(&rl), false);
}

/* An empty bucket refills by one token per 100 ms, up to the burst. */
static void kwq_limiter_test_bucket_refill(struct kunit *test)
{
	struct kwq_ratelimit d = { .count = 1, .limiters = { BUCKET(10000, 5) } };
	struct kwq_rl rl;
	u64 t = 0;
	u32 f = 0;
	int k;

	setup(test, &rl, &d, t);
	expect_fresh(test, &rl, t, 5, 0);
	for (k = 1; k <= 5; k++) {
		/* Empty at t; k intervals later, exactly k free calls. */
		t += MS(100) * k;
		expect_fresh(test, &rl, t, k, 0);
		KUNIT_EXPECT_EQ(test, when(&rl, &f, t), MS(100));
		/* Pay that one back so the bucket is empty at the next t. */
		t += MS(100);
	}
	/* 250 ms from empty: 2 free, then half a token short: 50 ms. */
	t += MS(250);
	expect_fresh(test, &rl, t, 2, 0);
	KUNIT_EXPECT_EQ(test, when(&rl, &f, t), MS(50));
	/* An hour idle fills the bucket to its burst, not beyond. */
	t += SEC(3600);
	expect_fresh(test, &rl, t, 5, 0);
	KUNIT_EXPECT_EQ(test, when(&rl, &f, t), MS(100));
	KUNIT_EXPECT_EQ(test, rl.bucket[0].frac, 0);
	/* A time before the last one seen counts as the last one. */
	KUNIT_EXPECT_EQ(test, when(&rl, &f, t - MS(50)), MS(200));
	KUNIT_EXPECT_EQ(test, rl.bucket[0].last_ns, t);
	KUNIT_EXPECT_EQ(test, when(&rl, &f, t + MS(100)), MS(200));
}

/* A token interval that is not a whole number of ns: delays round up. */
static void kwq_limiter_test_bucket_rounding(struct kunit *test)
{
	struct kwq_ratelimit d = { .count = 1, .limiters = { BUCKET(3000, 1) } };
	struct kwq_rl rl;
	u32 f = 0;

	setup(test, &rl, &d, 0);
	KUNIT_EXPECT_EQ(test, when(&rl, &f, 0), 0);
	KUNIT_EXPECT_EQ(test, when(&rl, &f, 0), 333333334);	/* 1/3 s */
	KUNIT_EXPECT_EQ(test, when(&rl, &f, 0), 666666667);
	KUNIT_EXPECT_EQ(test, when(&rl, &f, 0), 1000000000);	/* exact */
	KUNIT_EXPECT_EQ(test, when(&rl, &f, 0), 1333333334);
	/*
	 * The rounding is not kept in the state: at the rounded-up time the
	 * 4 tokens are paid back with 2000 units to spare, so the next call
	 * is one token minus those units away.
	 */
	KUNIT_EXPECT_EQ(test, when(&rl, &f, 1333333334), 333333333);
	KUNIT_EXPECT_EQ(test, rl.bucket[0].credit, -1);
	KUNIT_EXPECT_EQ(test, rl.bucket[0].frac, 2000);

	/* From empty, 333333333 ns is 1000 units short of a token: 1 ns. */
	setup(test, &rl, &d, 0);
	KUNIT_EXPECT_EQ(test, when(&rl, &f, 0), 0);
	KUNIT_EXPECT_EQ(test, when(&rl, &f, 333333333), 1);
	/* 1 mHz: one token per 1000 s. */
	d.limiters[0].rate_mhz = 1;
	setup(test, &rl, &d, 0);
	KUNIT_EXPECT_EQ(test, when(&rl, &f, 0), 0);
	KUNIT_EXPECT_EQ(test, when(&rl, &f, 0), SEC(1000));
	KUNIT_EXPECT_EQ(test, when(&rl, &f, SEC(1)), SEC(1999));
}

/* Extreme rates, bursts, debts and idle gaps: exact, no overflow. */
static void kwq_limiter_test_bucket_extremes(struct kunit *test)
{
	struct kwq_ratelimit d = { .count = 1, .limiters = { BUCKET(KWQ_RATE_INF - 1, 1) } };
	struct kwq_rl rl;
	u32 f = 0;

	/* The fastest finite rate: a token in 1/18446744 ns. */
	setup(test, &rl, &d, 0);
	KUNIT_EXPECT_EQ(test, when(&rl, &f, 0), 0);
	KUNIT_EXPECT_EQ(test, when(&rl, &f, 0), 1);
	KUNIT_EXPECT_EQ(test, when(&rl, &f, 1), 0);
	KUNIT_EXPECT_EQ(test, rl.bucket[0].credit, 0);
	KUNIT_EXPECT_EQ(test, when(&rl, &f, U64_MAX), 0);
	KUNIT_EXPECT_EQ(test, when(&rl, &f, U64_MAX), 1);
	/* 2^40 tokens owed at that rate: a 128-bit debt, 59605 ns. */
	rl.bucket[0].credit = -(1LL << 40) + 1;
	rl.bucket[0].frac = 0;
	KUNIT_EXPECT_EQ(test, when(&rl, &f, U64_MAX), 59605);

	/*
	 * Debts whose delay does not fit in 64 bits, at 5^12 mHz: 2^52
	 * tokens less 5^12 - 1 units is (2^64 - 1) * rate + 1 units, a
	 * quotient of U64_MAX rounded up; 2^52 tokens is 2^64 * rate units.
	 */
	d.limiters[0] = (struct kwq_limiter)BUCKET(244140625, 1);
	setup(test, &rl, &d, 0);
	rl.bucket[0].credit = -(1LL << 52) + 1;
	rl.bucket[0].frac = 244140624;
	KUNIT_EXPECT_EQ(test, when(&rl, &f, 0), DMAX);
	rl.bucket[0].credit = -(1LL << 52) + 1;
	rl.bucket[0].frac = 0;
	KUNIT_EXPECT_EQ(test, when(&rl, &f, 0), DMAX);

	/* Now jumping by 2^62 ns refills an empty 10/s bucket exactly. */
	d.limiters[0] = (struct kwq_limiter)BUCKET(10000, 100);
	setup(test, &rl, &d, SEC(1));
	expect_fresh(test, &rl, SEC(1), 100, 0);
	KUNIT_EXPECT_EQ(test, when(&rl, &f, SEC(1)), MS(100));
	expect_fresh(test, &rl, SEC(1) + (1ULL << 62), 100, 0);
	KUNIT_EXPECT_EQ(test, when(&rl, &f, SEC(1) + (1ULL << 62)), MS(100));
	KUNIT_EXPECT_EQ(test, when(&rl, &f, U64_MAX), 0);

	/* The largest burst starts full. */
	d.limiters[0] = (struct kwq_limiter)BUCKET(1, U32_MAX);
	setup(test, &rl, &d, 0);
	KUNIT_EXPECT_EQ(test, rl.bucket[0].credit, U32_MAX);
	KUNIT_EXPECT_EQ(test, when(&rl, &f, 0), 0);
	KUNIT_EXPECT_EQ(test, rl.bucket[0].credit, U32_MAX - 1);

	/* The deepest debt: the delay is clamped and the credit stays put. */
	rl.bucket[0].credit = KWQ_RL_CREDIT_MIN + 1;
	KUNIT_EXPECT_EQ(test, when(&rl, &f, 0), DMAX);
	KUNIT_EXPECT_EQ(test, rl.bucket[0].credit, KWQ_RL_CREDIT_MIN);
	KUNIT_EXPECT_EQ(test, when(&rl, &f, 0), DMAX);
	KUNIT_EXPECT_EQ(test, rl.bucket[0].credit, KWQ_RL_CREDIT_MIN);
	/* ... and the longest gap at 1 mHz pays back (2^64 - 1) / 10^12 tokens. */
	rl.bucket[0].credit = KWQ_RL_CREDIT_MIN + 1;
	KUNIT_EXPECT_EQ(test, when(&rl, &f, U64_MAX), DMAX);
	KUNIT_EXPECT_EQ(test, rl.bucket[0].credit, KWQ_RL_CREDIT_MIN + 18446744);
	KUNIT_EXPECT_EQ(test, rl.bucket[0].frac, 73709551615ULL);
}

/* The 128-bit helpers against values computed elsewhere. */
static void kwq_limiter_test_arith(struct kunit *test)
{
	struct kwq_rl_u128 n = kwq_rl_mul(U64_MAX, U64_MAX);
	u64 rem;

	KUNIT_EXPECT_EQ(test, n.hi, U64_MAX - 1);
	KUNIT_EXPECT_EQ(test, n.lo, 1);
	n = kwq_rl_mul(1ULL << 40, KWQ_RL_UNIT);
	KUNIT_EXPECT_EQ(test, n.hi, 59604);
	KUNIT_EXPECT_EQ(test, n.lo, 11894006615885479936ULL);
	n = kwq_rl_mul(0x123456789abcdefULL, 0);
	KUNIT_EXPECT_EQ(test, n.hi | n.lo, 0);

	n = (struct kwq_rl_u128){ .hi = 64, .lo = 12345 };	/* 2^70 + 12345 */
	KUNIT_EXPECT_EQ(test, kwq_rl_div_unit(n, &rem), 1180591620);
	KUNIT_EXPECT_EQ(test, rem, 717411315769ULL);
	/* The largest quotient that fits, and the smallest that does not. */
	n = (struct kwq_rl_u128){ .hi = 999999999999ULL, .lo = U64_MAX };
	KUNIT_EXPECT_EQ(test, kwq_rl_div_unit(n, &rem), U64_MAX);
	KUNIT_EXPECT_EQ(test, rem, 999999999999ULL);
	n = (struct kwq_rl_u128){ .hi = 1000000000000ULL, .lo = 0 };
	KUNIT_EXPECT_EQ(test, kwq_rl_div_unit(n, &rem), U64_MAX);
	KUNIT_EXPECT_EQ(test, rem, 0);

	n = (struct kwq_rl_u128){ .hi = U64_MAX - 2, .lo = 5 };
	KUNIT_EXPECT_EQ(test, kwq_rl_div128(n, U64_MAX - 1, &rem), U64_MAX);
	KUNIT_EXPECT_EQ(test, rem, 3);
	n = (struct kwq_rl_u128){ .hi = 123456789, .lo = 987654321 };
	KUNIT_EXPECT_EQ(test, kwq_rl_div128(n, 1000000000000007ULL, &rem), 2277375790844ULL);
	KUNIT_EXPECT_EQ(test, rem, 944620498239437ULL);
}

/* Burst 0: x/time/rate refuses (InfDuration); kwq returns the clamp. */
static void kwq_limiter_test_bucket_burst0(struct kunit *test)
{
	struct kwq_ratelimit d = { .count = 1, .limiters = { BUCKET(10000, 0) } };
	struct kwq_rl rl;
	u32 f = 0, reserved = 7;

	setup(test, &rl, &d, 0);
	KUNIT_EXPECT_EQ(test, kwq_rl_when(&rl, &f, 0, &reserved), DMAX);
	KUNIT_EXPECT_EQ(test, reserved, 0);
	KUNIT_EXPECT_EQ(test, when(&rl, &f, SEC(3600)), DMAX);
	KUNIT_EXPECT_EQ(test, rl.bucket[0].credit, 0);
	d.max_wait_ns = SEC(500);
	setup(test, &rl, &d, 0);
	KUNIT_EXPECT_EQ(test, when(&rl, &f, 0), SEC(500));
	/* Infinite rate wins over burst 0, as in x/time/rate. */
	d.limiters[0].rate_mhz = KWQ_RATE_INF;
	setup(test, &rl, &d, 0);
	KUNIT_EXPECT_EQ(test, when(&rl, &f, 0), 0);
}

/* rate Inf: never a delay, no token accounting. */
static void kwq_limiter_test_bucket_inf(struct kunit *test)
{
	struct kwq_ratelimit d = { .count = 1, .limiters = { BUCKET(KWQ_RATE_INF, 1) } };
	struct kwq_rl rl;
	u32 f = 0, reserved;
	int i;

	setup(test, &rl, &d, 0);
	for (i = 0; i < 1000; i++) {
		reserved = 7;
		KUNIT_EXPECT_EQ(test, kwq_rl_when(&rl, &f, 0, &reserved), 0);
		KUNIT_EXPECT_EQ(test, reserved, 0);
	}
	KUNIT_EXPECT_EQ(test, rl.bucket[0].credit, 1);
}

/* client-go TestMaxOfRateLimiter. */
static void kwq_limiter_test_max_of(struct kunit *test)
{
	struct kwq_ratelimit d = {
		.count = 2,
		.limiters = { FAST_SLOW(MS(5), SEC(3), 3), EXP(MS(1), SEC(1)) },
	};
	struct kwq_rl rl;
	u32 one = 0, two = 0, reserved;

	setup(test, &rl, &d, 0);
	KUNIT_EXPECT_EQ(test, when(&rl, &one, 0), MS(5));
	KUNIT_EXPECT_EQ(test, when(&rl, &one, 0), MS(5));
	KUNIT_EXPECT_EQ(test, when(&rl, &one, 0), MS(5));
	KUNIT_EXPECT_EQ(test, when(&rl, &one, 0), SEC(3));
	KUNIT_EXPECT_EQ(test, when(&rl, &one, 0), SEC(3));
	KUNIT_EXPECT_EQ(test, one, 5);
	KUNIT_EXPECT_EQ(test, when(&rl, &two, 0), MS(5));
	KUNIT_EXPECT_EQ(test, when(&rl, &two, 0), MS(5));
	KUNIT_EXPECT_EQ(test, two, 2);
	one = 0;
	KUNIT_EXPECT_EQ(test, when(&rl, &one, 0), MS(5));

	/* Every limiter is consulted: both buckets pay, the larger wins. */
	d = (struct kwq_ratelimit){
		.count = 3,
		.limiters = { BUCKET(10000, 1), EXP(MS(1), SEC(1)), BUCKET(1000, 2) },
	};
	setup(test, &rl, &d, 0);
	one = 0;
	KUNIT_EXPECT_EQ(test, kwq_rl_when(&rl, &one, 0, &reserved), MS(1));
	KUNIT_EXPECT_EQ(test, reserved, BIT(0) | BIT(2));
	KUNIT_EXPECT_EQ(test, kwq_rl_when(&rl, &one, 0, &reserved), MS(100));
	KUNIT_EXPECT_EQ(test, kwq_rl_when(&rl, &one, 0, &reserved), SEC(1));
	KUNIT_EXPECT_EQ(test, rl.bucket[0].credit, -2);
	KUNIT_EXPECT_EQ(test, rl.bucket[2].credit, -1);
	KUNIT_EXPECT_EQ(test, one, 3);

	/* No limiter: no delay (the count still goes up). */
	d = (struct kwq_ratelimit){ .count = 0 };
	setup(test, &rl, &d, 0);
	one = 0;
	KUNIT_EXPECT_EQ(test, kwq_rl_when(&rl, &one, 0, &reserved), 0);
	KUNIT_EXPECT_EQ(test, reserved, 0);
	KUNIT_EXPECT_EQ(test, one, 1);
}

/* client-go TestWithMaxWaitRateLimiter, with exact numbers. */
static void kwq_limiter_test_max_wait(struct kunit *test)
{
	struct kwq_ratelimit d = kwq_rl_default_controller;
	struct kwq_rl rl;
	u32 f = 0;
	int i;

	d.max_wait_ns = SEC(500);
	setup(test, &rl, &d, 0);
	expect_fresh(test, &rl, 0, 100, MS(5));
	for (i = 1; i <= 10; i++)
		expect_fresh(test, &rl, 0, 1, MS(100) * i);
	/* An hour later the bucket is full; the exponential hits the cap. */
	for (i = 0; i <= 16; i++)
		KUNIT_EXPECT_EQ(test, when(&rl, &f, SEC(3600)), MS(5) << i);
	KUNIT_EXPECT_EQ(test, when(&rl, &f, SEC(3600)), SEC(500));	/* not 655.36 s */
	KUNIT_EXPECT_EQ(test, when(&rl, &f, SEC(3600)), SEC(500));	/* not 1000 s */
	/* The cap applies to bucket delays too. */
	d = (struct kwq_ratelimit){ .count = 1, .max_wait_ns = MS(250),
				    .limiters = { BUCKET(10000, 1) } };
	setup(test, &rl, &d, 0);
	expect_fresh(test, &rl, 0, 1, 0);
	expect_fresh(test, &rl, 0, 1, MS(100));
	expect_fresh(test, &rl, 0, 1, MS(200));
	expect_fresh(test, &rl, 0, 1, MS(250));
	expect_fresh(test, &rl, 0, 1, MS(250));
	/* max_wait == KWQ_DELAY_MAX_NS is valid and the same as none. */
	d.max_wait_ns = DMAX;
	d.limiters[0].burst = 0;
	setup(test, &rl, &d, 0);
	expect_fresh(test, &rl, 0, 1, DMAX);
}

/* The two defaults reproduce client-go's numbers. */
static void kwq_limiter_test_defaults(struct kunit *test)
{
	struct kwq_rl rl;
	u32 f = 0;
	int i;

	/* DefaultItemBasedRateLimiter: 1 ms .. 1000 s. */
	setup(test, &rl, &kwq_rl_default_item, 0);
	KUNIT_EXPECT_TRUE(test, kwq_rl_tracks_items(&rl));
	for (i = 0; i <= 19; i++)
		KUNIT_EXPECT_EQ(test, when(&rl, &f, 0), MS(1) << i);	/* up to 524.288 s */
	KUNIT_EXPECT_EQ(test, when(&rl, &f, 0), SEC(1000));
	KUNIT_EXPECT_EQ(test, when(&rl, &f, 0), SEC(1000));

	/* DefaultControllerRateLimiter: MaxOf(5 ms .. 1000 s, 10/s burst 100). */
	setup(test, &rl, &kwq_rl_default_controller, 0);
	KUNIT_EXPECT_TRUE(test, kwq_rl_tracks_items(&rl));
	expect_fresh(test, &rl, 0, 100, MS(5));
	expect_fresh(test, &rl, 0, 1, MS(100));
	expect_fresh(test, &rl, 0, 1, MS(200));
	/* One key failing over and over, with tokens to spare. */
	f = 0;
	for (i = 0; i <= 17; i++)
		KUNIT_EXPECT_EQ(test, when(&rl, &f, SEC(3600)), MS(5) << i);	/* 655.36 s */
	KUNIT_EXPECT_EQ(test, when(&rl, &f, SEC(3600)), SEC(1000));
	KUNIT_EXPECT_EQ(test, f, 19);
	/* The bucket is shared: 19 of its 100 tokens are gone. */
	KUNIT_EXPECT_EQ(test, rl.bucket[1].credit, 81);
}

/* Unreserve gives back exactly one token and never over-fills. */
static void kwq_limiter_test_unreserve(struct kunit *test)
{
	struct kwq_ratelimit d = { .count = 1, .limiters = { BUCKET(10000, 100) } };
	struct kwq_rl rl;
	u32 f = 0, reserved;
	int i;

	setup(test, &rl, &d, 0);
	expect_fresh(test, &rl, 0, 100, 0);
	KUNIT_EXPECT_EQ(test, kwq_rl_when(&rl, &f, 0, &reserved), MS(100));
	KUNIT_EXPECT_EQ(test, reserved, 1);
	kwq_rl_unreserve(&rl, reserved, 0);
	KUNIT_EXPECT_EQ(test, rl.bucket[0].credit, 0);
	/* The next caller gets the slot the unused delay had. */
	KUNIT_EXPECT_EQ(test, kwq_rl_when(&rl, &f, 0, &reserved), MS(100));
	kwq_rl_unreserve(&rl, reserved, 0);
	kwq_rl_unreserve(&rl, reserved, 0);
	KUNIT_EXPECT_EQ(test, rl.bucket[0].credit, 1);
	expect_fresh(test, &rl, 0, 1, 0);
	expect_fresh(test, &rl, 0, 1, MS(100));
	/* A mask of 0 changes nothing. */
	kwq_rl_unreserve(&rl, 0, 0);
	KUNIT_EXPECT_EQ(test, rl.bucket[0].credit, -1);

	/* A full bucket stays at its burst however often tokens come back. */
	setup(test, &rl, &d, 0);
	KUNIT_EXPECT_EQ(test, kwq_rl_when(&rl, &f, 0, &reserved), 0);
	for (i = 0; i < 5; i++)
		kwq_rl_unreserve(&rl, reserved, 0);
	KUNIT_EXPECT_EQ(test, rl.bucket[0].credit, 100);
	expect_fresh(test, &rl, 0, 100, 0);
	expect_fresh(test, &rl, 0, 1, MS(100));

	/* 1.5 tokens + 1 is capped at a burst of 2, the fraction dropped. */
	d.limiters[0].burst = 2;
	setup(test, &rl, &d, 0);
	expect_fresh(test, &rl, 0, 1, 0);
	KUNIT_EXPECT_EQ(test, kwq_rl_when(&rl, &f, 0, &reserved), 0);
	kwq_rl_unreserve(&rl, reserved, MS(150));
	KUNIT_EXPECT_EQ(test, rl.bucket[0].credit, 2);
	KUNIT_EXPECT_EQ(test, rl.bucket[0].frac, 0);
	expect_fresh(test, &rl, MS(150), 2, 0);
	expect_fresh(test, &rl, MS(150), 1, MS(100));

	/* Bits for limiters that are not live buckets are ignored. */
	d = (struct kwq_ratelimit){
		.count = 3,
		.limiters = { EXP(MS(1), SEC(1)), BUCKET(KWQ_RATE_INF, 1), BUCKET(10000, 1) },
	};
	setup(test, &rl, &d, 0);
	f = 0;
	KUNIT_EXPECT_EQ(test, kwq_rl_when(&rl, &f, 0, &reserved), MS(1));
	KUNIT_EXPECT_EQ(test, reserved, BIT(2));
	kwq_rl_unreserve(&rl, 0xf, 0);
	KUNIT_EXPECT_EQ(test, rl.bucket[0].credit, 0);
	KUNIT_EXPECT_EQ(test, rl.bucket[1].credit, 1);
	KUNIT_EXPECT_EQ(test, rl.bucket[2].credit, 1);
}

static void kwq_limiter_test_tracks_items(struct kunit *test)
{
	struct kwq_ratelimit d = { .count = 1, .limiters = { BUCKET(10000, 100) } };
	struct kwq_rl rl;

	setup(test, &rl, &d, 0);
	KUNIT_EXPECT_FALSE(test, kwq_rl_tracks_items(&rl));
	d = (struct kwq_ratelimit){ .count = 0 };
	setup(test, &rl, &d, 0);
	KUNIT_EXPECT_FALSE(test, kwq_rl_tracks_items(&rl));
	d = (struct kwq_ratelimit){ .count = 1, .limiters = { FAST_SLOW(1, 2, 3) } };
	setup(test, &rl, &d, 0);
	KUNIT_EXPECT_TRUE(test, kwq_rl_tracks_items(&rl));
	d = (struct kwq_ratelimit){
		.count = 2, .limiters = { BUCKET(1, 1), EXP(1, 1) },
	};
	setup(test, &rl, &d, 0);
	KUNIT_EXPECT_TRUE(test, kwq_rl_tracks_items(&rl));
	/* Only used limiters count. */
	rl.desc.count = 1;
	KUNIT_EXPECT_FALSE(test, kwq_rl_tracks_items(&rl));
}

/*
 * Validation: one field at a time is set on an otherwise valid policy
 * with one limiter of each type (slot 3 unused).
 */
enum kwq_limiter_field_id {
	F_count, F_flags, F_max_wait_ns, F_reserved,
	F_type, F_max_fast, F_base_ns, F_max_ns, F_fast_ns, F_slow_ns,
	F_rate_mhz, F_burst, F_pad,
};

struct kwq_limiter_field {
	const char *name;
	enum kwq_limiter_field_id field;
	u32 idx;		/* limiters[idx] or reserved[idx] */
	u64 value;
	int want;
};

#define TOP(field, v, want)	{ #field " = " #v, F_##field, 0, (v), (want) }
#define RES(i, v, want)		{ "reserved[" #i "] = " #v, F_reserved, (i), (v), (want) }
#define LIM(i, field, v, want) \
	{ "limiters[" #i "]." #field " = " #v, F_##field, (i), (v), (want) }

static const struct kwq_limiter_field kwq_limiter_fields[] = {
	TOP(flags, 0, 0),
	TOP(count, KWQ_LIMITERS_MAX + 1, -EINVAL),
	TOP(count, U32_MAX, -EINVAL),
	TOP(count, 2, -EINVAL),		/* slot 2 now unused and not zero */
	TOP(flags, 1, -EINVAL),
	TOP(flags, 0x80000000, -EINVAL),
	RES(0, 1, -EINVAL),
	RES(1, 1ULL << 63, -EINVAL),
	TOP(max_wait_ns, KWQ_DELAY_MAX_NS + 1, -EINVAL),
	TOP(max_wait_ns, U64_MAX, -EINVAL),
	TOP(max_wait_ns, KWQ_DELAY_MAX_NS, 0),
	TOP(max_wait_ns, 1, 0),
	/* The unused slot must be all zero, every field of it. */
	LIM(3, type, KWQ_LIMITER_EXPONENTIAL, -EINVAL),
	LIM(3, max_fast, 1, -EINVAL),
	LIM(3, base_ns, 1, -EINVAL),
	LIM(3, max_ns, 1, -EINVAL),
	LIM(3, fast_ns, 1, -EINVAL),
	LIM(3, slow_ns, 1, -EINVAL),
	LIM(3, rate_mhz, 1, -EINVAL),
	LIM(3, burst, 1, -EINVAL),
	LIM(3, pad, 1, -EINVAL),
	/* Types. */
	LIM(0, type, 0, -EINVAL),
	LIM(0, type, 4, -EINVAL),
	LIM(0, type, U32_MAX, -EINVAL),
	/* EXPONENTIAL (slot 0: 5 ms .. 1000 s). */
	LIM(0, max_fast, 1, -EINVAL),
	LIM(0, fast_ns, 1, -EINVAL),
	LIM(0, slow_ns, 1, -EINVAL),
	LIM(0, rate_mhz, 1, -EINVAL),
	LIM(0, burst, 1, -EINVAL),
	LIM(0, pad, 1, -EINVAL),
	LIM(0, base_ns, 0, -EINVAL),
	LIM(0, base_ns, 1000000000001ULL, -EINVAL),	/* > max_ns */
	LIM(0, base_ns, 1000000000000ULL, 0),		/* == max_ns */
	LIM(0, base_ns, 1, 0),
	LIM(0, max_ns, 4999999, -EINVAL),			/* < base_ns */
	LIM(0, max_ns, 5000000, 0),
	LIM(0, max_ns, KWQ_DELAY_MAX_NS, 0),
	LIM(0, max_ns, KWQ_DELAY_MAX_NS + 1, -EINVAL),
	LIM(0, max_ns, U64_MAX, -EINVAL),
	/* FAST_SLOW (slot 1: 5 ms x 3, then 10 s). */
	LIM(1, base_ns, 1, -EINVAL),
	LIM(1, max_ns, 1, -EINVAL),
	LIM(1, rate_mhz, 1, -EINVAL),
	LIM(1, burst, 1, -EINVAL),
	LIM(1, pad, 1, -EINVAL),
	LIM(1, max_fast, 0, 0),
	LIM(1, max_fast, U32_MAX, 0),
	LIM(1, fast_ns, 0, 0),
	LIM(1, fast_ns, KWQ_DELAY_MAX_NS, 0),
	LIM(1, fast_ns, KWQ_DELAY_MAX_NS + 1, -EINVAL),
	LIM(1, slow_ns, 0, 0),
	LIM(1, slow_ns, KWQ_DELAY_MAX_NS, 0),
	LIM(1, slow_ns, KWQ_DELAY_MAX_NS + 1, -EINVAL),
	LIM(1, slow_ns, U64_MAX, -EINVAL),
	/* BUCKET (slot 2: 10/s burst 100). */
	LIM(2, max_fast, 1, -EINVAL),
	LIM(2, base_ns, 1, -EINVAL),
	LIM(2, max_ns, 1, -EINVAL),
	LIM(2, fast_ns, 1, -EINVAL),
	LIM(2, slow_ns, 1, -EINVAL),
	LIM(2, pad, 1, -EINVAL),
	LIM(2, rate_mhz, 0, -EINVAL),
	LIM(2, rate_mhz, 1, 0),
	LIM(2, rate_mhz, KWQ_RATE_INF - 1, 0),
	LIM(2, rate_mhz, KWQ_RATE_INF, 0),
	LIM(2, burst, 0, 0),
	LIM(2, burst, U32_MAX, 0),
};

static void kwq_limiter_field_desc(const struct kwq_limiter_field *t, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s %s", t->want ? "reject" : "accept", t->name);
}

KUNIT_ARRAY_PARAM(kwq_limiter_field, kwq_limiter_fields, kwq_limiter_field_desc);

static const struct kwq_ratelimit kwq_limiter_valid = {
	.count = 3,
	.limiters = {
		EXP(5000000, 1000000000000ULL),
		FAST_SLOW(5000000, 10000000000ULL, 3),
		BUCKET(10000, 100),
	},
};

static void kwq_limiter_test_validate(struct kunit *test)
{
	const struct kwq_limiter_field *t = test->param_value;
	struct kwq_ratelimit d = kwq_limiter_valid;
	struct kwq_limiter *l;

	KUNIT_ASSERT_EQ(test, kwq_rl_validate(&kwq_limiter_valid), 0);
	KUNIT_ASSERT_LT(test, t->idx, t->field == F_reserved ?
			ARRAY_SIZE(d.reserved) : ARRAY_SIZE(d.limiters));
	l = &d.limiters[t->idx];
	switch (t->field) {
	case F_count:
		d.count = t->value;
		break;
	case F_flags:
		d.flags = t->value;
		break;
	case F_max_wait_ns:
		d.max_wait_ns = t->value;
		break;
	case F_reserved:
		d.reserved[t->idx] = t->value;
		break;
	case F_type:
		l->type = t->value;
		break;
	case F_max_fast:
		l->max_fast = t->value;
		break;
	case F_base_ns:
		l->base_ns = t->value;
		break;
	case F_max_ns:
		l->max_ns = t->value;
		break;
	case F_fast_ns:
		l->fast_ns = t->value;
		break;
	case F_slow_ns:
		l->slow_ns = t->value;
		break;
	case F_rate_mhz:
		l->rate_mhz = t->value;
		break;
	case F_burst:
		l->burst = t->value;
		break;
	case F_pad:
		l->pad = t->value;
		break;
	}
	/* A rejection must come from a real change. */
	if (t->want)
		KUNIT_ASSERT_NE(test, memcmp(&d, &kwq_limiter_valid, sizeof(d)), 0);
	KUNIT_EXPECT_EQ(test, kwq_rl_validate(&d), t->want);
}

/* Policies accepted as a whole, including the defaults and the extremes. */
static void kwq_limiter_test_validate_whole(struct kunit *test)
{
	struct kwq_ratelimit d = {
		.count = KWQ_LIMITERS_MAX,
		.limiters = {
			EXP(1, KWQ_DELAY_MAX_NS), FAST_SLOW(0, 0, 0),
			BUCKET(KWQ_RATE_INF, 0), BUCKET(1, U32_MAX),
		},
	};

	KUNIT_EXPECT_EQ(test, kwq_rl_validate(&kwq_rl_default_controller), 0);
	KUNIT_EXPECT_EQ(test, kwq_rl_validate(&kwq_rl_default_item), 0);
	KUNIT_EXPECT_EQ(test, kwq_rl_validate(&d), 0);
	d = (struct kwq_ratelimit){ .count = 0 };
	KUNIT_EXPECT_EQ(test, kwq_rl_validate(&d), 0);
	d.limiters[0].type = KWQ_LIMITER_BUCKET;
	KUNIT_EXPECT_EQ(test, kwq_rl_validate(&d), -EINVAL);
	d.limiters[0].rate_mhz = 1;
	KUNIT_EXPECT_EQ(test, kwq_rl_validate(&d), -EINVAL);
	d.count = 1;
	KUNIT_EXPECT_EQ(test, kwq_rl_validate(&d), 0);
}

static struct kunit_case kwq_limiter_cases[] = {
	KUNIT_CASE(kwq_limiter_test_exponential),
	KUNIT_CASE(kwq_limiter_test_exponential_overflow),
	KUNIT_CASE(kwq_limiter_test_fast_slow),
	KUNIT_CASE(kwq_limiter_test_bucket_sequence),
	KUNIT_CASE(kwq_limiter_test_bucket_refill),
	KUNIT_CASE(kwq_limiter_test_bucket_rounding),
	KUNIT_CASE(kwq_limiter_test_bucket_extremes),
	KUNIT_CASE(kwq_limiter_test_arith),
	KUNIT_CASE(kwq_limiter_test_bucket_burst0),
	KUNIT_CASE(kwq_limiter_test_bucket_inf),
	KUNIT_CASE(kwq_limiter_test_max_of),
	KUNIT_CASE(kwq_limiter_test_max_wait),
	KUNIT_CASE(kwq_limiter_test_defaults),
	KUNIT_CASE(kwq_limiter_test_unreserve),
	KUNIT_CASE(kwq_limiter_test_tracks_items),
	KUNIT_CASE_PARAM(kwq_limiter_test_validate, kwq_limiter_field_gen_params),
	KUNIT_CASE(kwq_limiter_test_validate_whole),
	{}
};

static struct kunit_suite kwq_limiter_suite = {
	.name = "kwq_limiter",
	.test_cases = kwq_limiter_cases,
};

kunit_test_suite(kwq_limiter_suite);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("KUnit tests for the kwq limiter engine");
