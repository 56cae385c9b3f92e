/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A struct kwq_clock for KUnit: time moves only when the test steps it,
 * and a step fires the queue's timer if kwq asked for it, as the real
 * hrtimer would. Shared by the delay and backoff suites.
 */
#ifndef _KWQ_FAKE_CLOCK_H
#define _KWQ_FAKE_CLOCK_H

#include <kunit/test.h>
#include <linux/ktime.h>

#include "kwq.h"

#define MS(ms)	((s64)(ms) * NSEC_PER_MSEC)

struct fake_clock {
	struct kwq_clock base;
	ktime_t now;
	ktime_t programmed;	/* what kwq asked for, KTIME_MAX for nothing */
	struct kwq *q;
};

static inline ktime_t fake_now(struct kwq_clock *c)
{
	return container_of(c, struct fake_clock, base)->now;
}

static inline void fake_program(struct kwq_clock *c, struct kwq *q, ktime_t expires)
{
	container_of(c, struct fake_clock, base)->programmed = expires;
}

/*
 * A run handles at most 64 keys and, with more due, asks for the current
 * time again: keep running while the queue asks for a time that has come
 * (a live queue always answers with a new time).
 */
static inline void step(struct fake_clock *fc, s64 ns)
{
	unsigned int runs = 0;

	fc->now = ktime_add_ns(fc->now, ns);
	while (fc->programmed <= fc->now && runs++ < (1U << 20))
		kwq_run_due(fc->q);
}

/*
 * A queue on a fake clock, destroyed by fake_clock_exit() (use it as the
 * suite's .exit). The clock starts at 1 s, not 0, to catch code that
 * confuses a delay with a deadline.
 */
static inline struct fake_clock *fake_queue(struct kunit *test, struct kwq_attr *attr)
{
	struct fake_clock *fc = kunit_kzalloc(test, sizeof(*fc), GFP_KERNEL);

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, fc);
	fc->base.now = fake_now;
	fc->base.program = fake_program;
	fc->now = ms_to_ktime(1000);
	fc->programmed = KTIME_MAX;
	/* Not on the stack: this is inlined into tests near KASAN's frame limit. */
	if (!attr)
		attr = kunit_kzalloc(test, sizeof(*attr), GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, attr);
	attr->clock = &fc->base;
	fc->q = kwq_create(NULL, attr);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, fc->q);
	test->priv = fc;
	return fc;
}

static inline void fake_clock_exit(struct kunit *test)
{
	struct fake_clock *fc = test->priv;

	if (fc && !IS_ERR_OR_NULL(fc->q))
		kwq_destroy(fc->q);
}

#endif /* _KWQ_FAKE_CLOCK_H */
