/* SPDX-License-Identifier: GPL-2.0 */
/*
 * KUnit helpers of the suites that check hand-out order (kwq_priority,
 * kwq_tenant): add at a priority, take and end the next key, and expect
 * a whole order.
 */
#ifndef _KWQ_TEST_ORDER_H
#define _KWQ_TEST_ORDER_H

#include <kunit/test.h>
#include <linux/string.h>

#include "kwq.h"

static inline int addp(struct kwq *q, const char *key, s32 prio)
{
	struct kwq_add_opts o = { .priority = prio };

	return kwq_add_ex(q, key, strlen(key), &o);
}

/* Take the next key and end it; "" when none is ready. */
static inline const char *take(struct kwq *q, char *buf, u32 cap)
{
	u32 len = 0;

	if (kwq_get(q, buf, cap - 1, &len, KWQ_NOWAIT))
		len = 0;
	buf[len] = '\0';
	if (len)
		kwq_done(q, buf, len);
	return buf;
}

/* The next @n keys are @want, in order, and then none. */
static inline void expect_order(struct kunit *test, struct kwq *q, const char *const *want,
				int n)
{
	char buf[32];
	int i;

	for (i = 0; i < n; i++)
		KUNIT_EXPECT_STREQ(test, take(q, buf, sizeof(buf)), want[i]);
	KUNIT_EXPECT_STREQ(test, take(q, buf, sizeof(buf)), "");
}

#endif /* _KWQ_TEST_ORDER_H */
