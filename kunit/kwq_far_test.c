// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite kwq_far: the far slots of the waiting set (module/kwq_far.h)
 * on a fake clock. Deadlines that wait in slots must come exactly as if
 * they were on the timerqueue: none early, none late, earliest first,
 * equal deadlines in the order their entries were made; a slot's move to
 * the timerqueue is bounded per run; a drain flushes in deadline order.
 * The random case checks every step against a model of the waiting keys.
 */

#include <kunit/test.h>
#include <linux/prandom.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/string.h>

#include "kwq.h"
#include "kwq_core.h"
#include "kwq_fake_clock.h"

#define SEC(s)		((s64)(s) * NSEC_PER_SEC)
#define FAR_KEYS	1500	/* past KWQ_FAR_MIN_WAITING */

/* The model of one key: its waiting entry, if any. */
struct far_key {
	ktime_t deadline;
	u64 seq;		/* when the entry was made: ties go in this order */
	bool waiting;
};

struct far_model {
	struct far_key key[FAR_KEYS];
	u32 due[FAR_KEYS];	/* scratch: keys due at a step, in order */
	u64 seq;
	u32 n_waiting;
	u64 most_far;		/* the most keys seen in slots at once */
	bool shut;		/* the queue was shut down: empty means -ESHUTDOWN */
};

static int far_name(char *buf, u32 i)
{
	return snprintf(buf, 8, "k%04u", i);
}

static u64 far_in_slots(struct kwq *q)
{
	u64 n;

	kwq_lock(q);
	n = q->far ? q->far->n : 0;
	kwq_unlock(q);
	return n;
}

/* add-after of key @i as the model has it: WAITING, WAIT_KEPT or WAIT_MOVED. */
static int far_model_after(struct far_model *m, u32 i, ktime_t deadline, bool replace)
{
	struct far_key *k = &m->key[i];

	if (k->waiting && (deadline == k->deadline || (!replace && deadline > k->deadline)))
		return KWQ_ADD_WAIT_KEPT;
	if (!k->waiting)
		m->n_waiting++;
	k->deadline = deadline;
	k->seq = ++m->seq;
	if (k->waiting)
		return KWQ_ADD_WAIT_MOVED;
	k->waiting = true;
	return KWQ_ADD_WAITING;
}

static void far_after(struct kunit *test, struct fake_clock *fc, struct far_model *m, u32 i,
		      s64 delay, bool replace)
{
	char name[8];
	int len = far_name(name, i);
	int want = far_model_after(m, i, ktime_add_ns(fc->now, delay), replace);

	KUNIT_ASSERT_EQ(test, kwq_add_after(fc->q, name, len, delay,
					    replace ? KWQ_AFTER_REPLACE : 0), want);
}

static struct far_model *far_model_sorted;

static int far_cmp(const void *a, const void *b)
{
	const struct far_key *x = &far_model_sorted->key[*(const u32 *)a];
	const struct far_key *y = &far_model_sorted->key[*(const u32 *)b];

	if (x->deadline != y->deadline)
		return x->deadline < y->deadline ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/*
 * After the clock moved: exactly the keys due by now must have come, in
 * (deadline, entry) order; take and finish each. Then check what waits.
 */
static void far_check(struct kunit *test, struct fake_clock *fc, struct far_model *m)
{
	struct kwq_stats st;
	char name[8], buf[8];
	u32 i, n = 0, len;
	ktime_t first = KTIME_MAX;

	for (i = 0; i < FAR_KEYS; i++) {
		if (m->key[i].waiting && m->key[i].deadline <= fc->now)
			m->due[n++] = i;
	}
	far_model_sorted = m;
	sort(m->due, n, sizeof(m->due[0]), far_cmp, NULL);
	for (i = 0; i < n; i++) {
		far_name(name, m->due[i]);
		KUNIT_ASSERT_EQ(test, kwq_get(fc->q, buf, sizeof(buf) - 1, &len, KWQ_NOWAIT), 0);
		buf[len] = '\0';
		KUNIT_ASSERT_STREQ_MSG(test, buf, name, "key %u of %u due at %lld", i, n,
				       ktime_to_ns(fc->now));
		KUNIT_ASSERT_EQ(test, kwq_done(fc->q, buf, len), KWQ_DONE_FINISHED);
		m->key[m->due[i]].waiting = false;
		m->n_waiting--;
	}
	KUNIT_ASSERT_EQ(test, kwq_get(fc->q, buf, sizeof(buf), &len, KWQ_NOWAIT),
			m->shut ? -ESHUTDOWN : -EAGAIN);
	kwq_stats(fc->q, &st);
	KUNIT_ASSERT_EQ(test, st.waiting, (u64)m->n_waiting);
	for (i = 0; i < FAR_KEYS; i++) {
		if (m->key[i].waiting)
			first = min(first, m->key[i].deadline);
	}
	/* The timer never comes after the earliest deadline. */
	KUNIT_ASSERT_LE(test, fc->programmed, first);
	m->most_far = max(m->most_far, far_in_slots(fc->q));
}

/* 20 s to about 2.2 h: a deadline for the slots. */
static s64 far_window_delay(struct rnd_state *r)
{
	return SEC(20) + (s64)(prandom_u32_state(r) % 8000) * SEC(1) +
	       prandom_u32_state(r) % NSEC_PER_SEC;
}

/* A random delay: near, in the slots' window, past it, or a tie. */
static s64 far_delay(struct rnd_state *r, struct fake_clock *fc, struct far_model *m)
{
	u32 pick = prandom_u32_state(r) % 8, j = prandom_u32_state(r) % FAR_KEYS;

	switch (pick) {
	case 0:
		/* Up to 20 s, which a u32 of nanoseconds cannot hold: ms, then ns. */
		return 1 + (s64)(prandom_u32_state(r) % 20000) * NSEC_PER_MSEC +
		       prandom_u32_state(r) % NSEC_PER_MSEC;
	case 1:
		return SEC(2 * 3600) + (s64)(prandom_u32_state(r) % 36000) * SEC(1);
	case 2:
		if (m->key[j].waiting)
			return ktime_to_ns(ktime_sub(m->key[j].deadline, fc->now));
		fallthrough;
	default:
		return far_window_delay(r);
	}
}

static void far_step_to(struct fake_clock *fc, ktime_t t)
{
	step(fc, ktime_to_ns(ktime_sub(t, fc->now)));
}

/* Random add-afters, replaces, cancels and clock steps against the model. */
static void kwq_far_test_random(struct kunit *test)
{
	struct far_model *m = kunit_kzalloc(test, sizeof(*m), GFP_KERNEL);
	struct fake_clock *fc = fake_queue(test, NULL);
	struct rnd_state r;
	u32 i, op, seed;
	char name[8];

	KUNIT_ASSERT_NOT_NULL(test, m);
	for (seed = 1; seed <= 3; seed++) {
		prandom_seed_state(&r, seed);
		for (i = 0; i < FAR_KEYS; i++)
			far_after(test, fc, m, i, far_window_delay(&r), false);
		far_check(test, fc, m);
		for (op = 0; op < 2000; op++) {
			u32 pick = prandom_u32_state(&r) % 10, k = prandom_u32_state(&r) % FAR_KEYS;

			if (pick < 5) {
				far_after(test, fc, m, k, far_delay(&r, fc, m), pick == 0);
				far_check(test, fc, m);
				continue;
			}
			if (pick == 5) {
				far_name(name, k);
				KUNIT_ASSERT_EQ(test, kwq_cancel(fc->q, name, strlen(name)),
						m->key[k].waiting ? 1 : 0);
				if (m->key[k].waiting)
					m->n_waiting--;
				m->key[k].waiting = false;
			} else if (pick < 8 && fc->programmed != KTIME_MAX) {
				/* Exactly to what the queue asked for. */
				far_step_to(fc, fc->programmed);
			} else if (pick == 8 && m->key[k].waiting) {
				far_step_to(fc, m->key[k].deadline);
			} else {
				step(fc, SEC(prandom_u32_state(&r) % 600) +
					 prandom_u32_state(&r) % NSEC_PER_SEC);
			}
			far_check(test, fc, m);
		}
		/* Run out every deadline. */
		while (m->n_waiting) {
			KUNIT_ASSERT_NE(test, fc->programmed, KTIME_MAX);
			far_step_to(fc, fc->programmed);
			far_check(test, fc, m);
		}
	}
	/* The slots were used, or this tested nothing new. */
	KUNIT_EXPECT_GT(test, m->most_far, 1000ULL);
}

/* A slot of 300 keys moves 64 keys per run, then they come in order. */
static void kwq_far_test_bounded_move(struct kunit *test)
{
	struct far_model *m = kunit_kzalloc(test, sizeof(*m), GFP_KERNEL);
	struct fake_clock *fc = fake_queue(test, NULL);
	struct kwq *q = fc->q;
	ktime_t move;
	u32 i;

	KUNIT_ASSERT_NOT_NULL(test, m);
	/* Two days ahead: past the window, so on the timerqueue. */
	for (i = 0; i < KWQ_FAR_MIN_WAITING; i++)
		far_after(test, fc, m, i, SEC(2 * 86400) + i, false);
	KUNIT_EXPECT_EQ(test, far_in_slots(q), 0ULL);
	for (i = KWQ_FAR_MIN_WAITING; i < KWQ_FAR_MIN_WAITING + 300; i++)
		far_after(test, fc, m, i, SEC(3600), false);
	KUNIT_ASSERT_NOT_NULL(test, q->far);
	KUNIT_EXPECT_EQ(test, far_in_slots(q), 300ULL);
	move = kwq_far_move_at(q->far);
	KUNIT_EXPECT_EQ(test, fc->programmed, move);
	KUNIT_EXPECT_LE(test, move, ktime_add_ns(fc->now, SEC(3600) - KWQ_FAR_SPAN));
	far_step_to(fc, move - 1);
	KUNIT_EXPECT_EQ(test, far_in_slots(q), 300ULL);
	fc->now = move;
	kwq_run_due(q);
	KUNIT_EXPECT_EQ(test, far_in_slots(q), 300ULL - KWQ_LOCK_STEP);
	KUNIT_EXPECT_EQ(test, fc->programmed, move);	/* asks again at once */
	step(fc, 0);
	KUNIT_EXPECT_EQ(test, far_in_slots(q), 0ULL);
	KUNIT_EXPECT_EQ(test, fc->programmed, m->key[KWQ_FAR_MIN_WAITING].deadline);
	far_check(test, fc, m);
	far_step_to(fc, fc->programmed);
	far_check(test, fc, m);
	KUNIT_EXPECT_EQ(test, m->n_waiting, (u32)KWQ_FAR_MIN_WAITING);
}

/* Which deadlines go to the slots, as kwq-delays.rst says. */
static void kwq_far_test_placement(struct kunit *test)
{
	struct far_model *m = kunit_kzalloc(test, sizeof(*m), GFP_KERNEL);
	struct fake_clock *fc = fake_queue(test, NULL);
	u32 i;
	char name[8];

	KUNIT_ASSERT_NOT_NULL(test, m);
	for (i = 0; i < KWQ_FAR_MIN_WAITING; i++)
		far_after(test, fc, m, i, SEC(2 * 86400) + i, false);
	KUNIT_EXPECT_NULL(test, fc->q->far);
	/* Under 8.6 s ahead: the timerqueue (the slots come with this add). */
	far_after(test, fc, m, i++, KWQ_FAR_SPAN - 1, false);
	KUNIT_ASSERT_NOT_NULL(test, fc->q->far);
	KUNIT_EXPECT_EQ(test, far_in_slots(fc->q), 0ULL);
	/* Two spans (17.2 s) ahead: a slot. */
	far_after(test, fc, m, i++, 2 * KWQ_FAR_SPAN, false);
	KUNIT_EXPECT_EQ(test, far_in_slots(fc->q), 1ULL);
	/* 2.4 hours ahead and more: past the window, the timerqueue. */
	far_after(test, fc, m, i++, (KWQ_FAR_SLOTS + 2) * KWQ_FAR_SPAN, false);
	KUNIT_EXPECT_EQ(test, far_in_slots(fc->q), 1ULL);
	/* About 2.3 hours: a slot. */
	far_after(test, fc, m, i++, (KWQ_FAR_SLOTS - 20) * KWQ_FAR_SPAN, false);
	KUNIT_EXPECT_EQ(test, far_in_slots(fc->q), 2ULL);
	/* A cancel takes a key out of its slot. */
	far_name(name, i - 1);
	KUNIT_EXPECT_EQ(test, kwq_cancel(fc->q, name, strlen(name)), 1);
	m->key[i - 1].waiting = false;
	m->n_waiting--;
	KUNIT_EXPECT_EQ(test, far_in_slots(fc->q), 1ULL);
	while (m->n_waiting > KWQ_FAR_MIN_WAITING) {
		far_step_to(fc, fc->programmed);
		far_check(test, fc, m);
	}
	KUNIT_EXPECT_EQ(test, far_in_slots(fc->q), 0ULL);
}

/* A debounced key in a slot moves later in its slots, then comes on time. */
static void kwq_far_test_debounce(struct kunit *test)
{
	struct far_model *m = kunit_kzalloc(test, sizeof(*m), GFP_KERNEL);
	struct fake_clock *fc = fake_queue(test, NULL);
	ktime_t want;
	u32 i;

	KUNIT_ASSERT_NOT_NULL(test, m);
	for (i = 0; i < KWQ_FAR_MIN_WAITING; i++)
		far_after(test, fc, m, i, SEC(2 * 86400) + i, false);
	KUNIT_EXPECT_EQ(test, kwq_add_debounced(fc->q, "deb", 3, SEC(3600), SEC(7200)),
			KWQ_ADD_WAITING);
	KUNIT_EXPECT_EQ(test, far_in_slots(fc->q), 1ULL);
	step(fc, SEC(600));
	want = ktime_add_ns(fc->now, SEC(3600));
	KUNIT_EXPECT_EQ(test, kwq_add_debounced(fc->q, "deb", 3, SEC(3600), SEC(7200)),
			KWQ_ADD_WAIT_MOVED);
	KUNIT_EXPECT_EQ(test, far_in_slots(fc->q), 1ULL);
	while (fc->programmed < want)
		far_step_to(fc, fc->programmed);
	KUNIT_EXPECT_EQ(test, far_in_slots(fc->q), 0ULL);
	KUNIT_EXPECT_EQ(test, fc->programmed, want);
	far_step_to(fc, want - 1);
	KUNIT_EXPECT_EQ(test, kwq_len(fc->q), 0);
	step(fc, 1);
	KUNIT_EXPECT_EQ(test, kwq_len(fc->q), 1);
}

/* A drain that flushes the waiting keys queues far ones in deadline order too. */
static void kwq_far_test_drain_flush(struct kunit *test)
{
	struct far_model *m = kunit_kzalloc(test, sizeof(*m), GFP_KERNEL);
	struct fake_clock *fc = fake_queue(test, NULL);
	struct rnd_state r;
	u32 i;

	KUNIT_ASSERT_NOT_NULL(test, m);
	prandom_seed_state(&r, 7);
	for (i = 0; i < FAR_KEYS; i++)
		far_after(test, fc, m, i, far_delay(&r, fc, m), false);
	KUNIT_EXPECT_GT(test, far_in_slots(fc->q), 100ULL);
	KUNIT_EXPECT_EQ(test, kwq_shutdown_drain(fc->q, KWQ_NOWAIT, KWQ_DRAIN_FLUSH_WAITING),
			-ETIMEDOUT);
	/* Everything is due now: the same order as the clock would give. */
	fc->now = KTIME_MAX - 1;
	m->shut = true;
	far_check(test, fc, m);
	KUNIT_EXPECT_EQ(test, m->n_waiting, 0U);
}

static struct kunit_case kwq_far_cases[] = {
	KUNIT_CASE(kwq_far_test_random),
	KUNIT_CASE(kwq_far_test_placement),
	KUNIT_CASE(kwq_far_test_bounded_move),
	KUNIT_CASE(kwq_far_test_debounce),
	KUNIT_CASE(kwq_far_test_drain_flush),
	{}
};

static struct kunit_suite kwq_far_suite = {
	.name = "kwq_far",
	.test_cases = kwq_far_cases,
	.exit = fake_clock_exit,
};

kunit_test_suite(kwq_far_suite);
