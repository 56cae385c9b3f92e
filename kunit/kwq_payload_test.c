// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite kwq_payload: the rules of Documentation/kwq-payloads.rst on
 * a fake clock: the latest payload wins while the key is queued, waiting
 * or processing; an add without one keeps it; a give-back keeps it; done
 * frees it unless the key runs again; bad payloads change nothing; calls
 * without room for a payload refuse payload queues.
 */

#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/err.h>
#include <linux/kthread.h>
#include <linux/random.h>
#include <linux/string.h>

#include "kwq.h"
#include "kwq_fake_clock.h"
#include "kwq_pool.h"

#define PMAX	64

static struct fake_clock *pqueue(struct kunit *test, u64 timeout)
{
	struct kwq_attr attr = { .payload_max = PMAX, .processing_timeout_ns = timeout };

	return fake_queue(test, &attr);
}

/* An add of @key with payload @p (NULL: none), now or after @delay. */
static int padd(struct kwq *q, const char *key, const char *p, s64 delay)
{
	struct kwq_add_opts o = {
		.delay_ns = delay, .payload = p, .payload_len = p ? strlen(p) : 0,
	};

	return kwq_add_ex(q, key, strlen(key), &o);
}

/* An add of @key with @len bytes of payload at @p. */
static int padd_raw(struct kwq *q, const char *key, u32 n, const void *p, u32 len)
{
	struct kwq_add_opts o = { .payload = p, .payload_len = len };

	return kwq_add_ex(q, key, n, &o);
}

/* Get @key with payload @want ("" for none); returns the ticket. */
static noinline u64 pget(struct kunit *test, struct kwq *q, const char *key, const char *want)
{
	char kb[32], pb[PMAX + 1];
	u32 len = 0, plen = 99;
	u64 ticket = 0;
	int ret;

	memset(pb, 0, sizeof(pb));
	ret = kwq_get_payload(q, kb, sizeof(kb) - 1, &len, pb, PMAX, &plen, &ticket, KWQ_NOWAIT);
	KUNIT_ASSERT_EQ(test, ret, 0);
	kb[len] = '\0';
	KUNIT_EXPECT_STREQ(test, kb, key);
	KUNIT_EXPECT_EQ(test, plen, (u32)strlen(want));
	KUNIT_EXPECT_STREQ(test, pb, want);
	return ticket;
}

/* One counter of kwq_stats(); its own frame keeps the callers' small under KASAN. */
static noinline u64 pstat(struct kwq *q, size_t off)
{
	struct kwq_stats st;

	kwq_stats(q, &st);
	return *(u64 *)((u8 *)&st + off);
}

#define PSTAT(q, f)	pstat(q, offsetof(struct kwq_stats, f))

static void kwq_payload_test_latest_wins_queued(struct kunit *test)
{
	struct kwq *q = pqueue(test, 0)->q;

	KUNIT_EXPECT_EQ(test, padd(q, "k", "one", 0), KWQ_ADD_QUEUED);
	KUNIT_EXPECT_EQ(test, padd(q, "k", "second", 0), KWQ_ADD_DUPLICATE);
	KUNIT_EXPECT_EQ(test, PSTAT(q, payloads_replaced), 1);
	KUNIT_EXPECT_EQ(test, PSTAT(q, payload_bytes), 6);
	/* An add without a payload keeps the stored one. */
	KUNIT_EXPECT_EQ(test, padd(q, "k", NULL, 0), KWQ_ADD_DUPLICATE);
	KUNIT_EXPECT_EQ(test, kwq_add(q, "k", 1), KWQ_ADD_DUPLICATE);
	pget(test, q, "k", "second");
	KUNIT_EXPECT_EQ(test, kwq_done(q, "k", 1), KWQ_DONE_FINISHED);
	KUNIT_EXPECT_EQ(test, PSTAT(q, payload_bytes), 0);
	KUNIT_EXPECT_EQ(test, PSTAT(q, items), 0);
	KUNIT_EXPECT_EQ(test, PSTAT(q, payloads_replaced), 1);
}

static void kwq_payload_test_latest_wins_waiting(struct kunit *test)
{
	struct fake_clock *fc = pqueue(test, 0);
	struct kwq *q = fc->q;

	KUNIT_EXPECT_EQ(test, padd(q, "w", "early", MS(10)), KWQ_ADD_WAITING);
	KUNIT_EXPECT_EQ(test, padd(q, "w", "late", MS(20)), KWQ_ADD_WAIT_KEPT);
	KUNIT_EXPECT_EQ(test, PSTAT(q, payloads_replaced), 1);
	step(fc, MS(10));
	pget(test, q, "w", "late");
	/* A fired deadline is an add without a payload: the key keeps its own. */
	KUNIT_EXPECT_EQ(test, kwq_done(q, "w", 1), KWQ_DONE_FINISHED);
	KUNIT_EXPECT_EQ(test, PSTAT(q, payload_bytes), 0);
}

static void kwq_payload_test_processing(struct kunit *test)
{
	struct kwq *q = pqueue(test, 0)->q;

	padd(q, "p", "v1", 0);
	pget(test, q, "p", "v1");
	/* An add while processing keeps the new payload for the next run. */
	KUNIT_EXPECT_EQ(test, padd(q, "p", "v2", 0), KWQ_ADD_DEFERRED);
	KUNIT_EXPECT_EQ(test, kwq_add(q, "p", 1), KWQ_ADD_DUPLICATE);
	KUNIT_EXPECT_EQ(test, PSTAT(q, payload_bytes), 2);
	KUNIT_EXPECT_EQ(test, kwq_done(q, "p", 1), KWQ_DONE_REQUEUED);
	pget(test, q, "p", "v2");
	/* An add without a payload while processing: the next run has the same. */
	KUNIT_EXPECT_EQ(test, kwq_add(q, "p", 1), KWQ_ADD_DEFERRED);
	KUNIT_EXPECT_EQ(test, kwq_done(q, "p", 1), KWQ_DONE_REQUEUED);
	pget(test, q, "p", "v2");
	KUNIT_EXPECT_EQ(test, kwq_done(q, "p", 1), KWQ_DONE_FINISHED);
	KUNIT_EXPECT_EQ(test, PSTAT(q, payload_bytes), 0);
	KUNIT_EXPECT_EQ(test, PSTAT(q, payloads_replaced), 1);
}

static void kwq_payload_test_give_back(struct kunit *test)
{
	struct fake_clock *fc = pqueue(test, MS(100));
	struct kwq *q = fc->q;
	u64 t;

	padd(q, "g", "kept", 0);
	t = pget(test, q, "g", "kept");
	KUNIT_EXPECT_EQ(test, kwq_requeue_ticket(q, "g", 1, t), 0);
	t = pget(test, q, "g", "kept");
	/* The processing timeout gives it back with its payload too. */
	step(fc, MS(100));
	KUNIT_EXPECT_EQ(test, PSTAT(q, processing_expiries), 1);
	KUNIT_EXPECT_EQ(test, kwq_done_ticket(q, "g", 1, t), -ENOENT);
	t = pget(test, q, "g", "kept");
	KUNIT_EXPECT_EQ(test, kwq_done_ticket(q, "g", 1, t), KWQ_DONE_FINISHED);
	KUNIT_EXPECT_EQ(test, PSTAT(q, payload_bytes), 0);
}

static void kwq_payload_test_done_keeps_waiting(struct kunit *test)
{
	struct fake_clock *fc = pqueue(test, 0);
	struct kwq *q = fc->q;

	padd(q, "d", "v", 0);
	pget(test, q, "d", "v");
	KUNIT_EXPECT_EQ(test, kwq_add_after(q, "d", 1, MS(5), 0), KWQ_ADD_WAITING);
	/* Done of a key still waiting: it runs again, with its payload. */
	KUNIT_EXPECT_EQ(test, kwq_done(q, "d", 1), KWQ_DONE_FINISHED);
	KUNIT_EXPECT_EQ(test, PSTAT(q, payload_bytes), 1);
	step(fc, MS(5));
	pget(test, q, "d", "v");
	KUNIT_EXPECT_EQ(test, kwq_done(q, "d", 1), KWQ_DONE_FINISHED);
	/* Back to no payload: a later plain add hands the key out without one. */
	KUNIT_EXPECT_EQ(test, kwq_add(q, "d", 1), KWQ_ADD_QUEUED);
	pget(test, q, "d", "");
}

static void kwq_payload_test_freed_on_cancel_and_shutdown(struct kunit *test)
{
	struct kwq *q = pqueue(test, 0)->q;

	padd(q, "c", "cancelled", MS(10));
	padd(q, "s", "dropped", MS(10));
	padd(q, "q", "queued", 0);
	KUNIT_EXPECT_EQ(test, kwq_cancel(q, "c", 1), 1);
	KUNIT_EXPECT_EQ(test, PSTAT(q, items), 2);
	KUNIT_EXPECT_EQ(test, PSTAT(q, payload_bytes), 13);
	kwq_shutdown(q);
	KUNIT_EXPECT_EQ(test, PSTAT(q, items), 1);
	KUNIT_EXPECT_EQ(test, PSTAT(q, payload_bytes), 6);
	/* The queued key is still handed out, with its payload. */
	pget(test, q, "q", "queued");
	/* Destroyed by the exit with the key processing: kmemleak's to check. */
}

static void kwq_payload_test_buffers(struct kunit *test)
{
	struct kwq *q = pqueue(test, 0)->q;
	char kb[8], pb[8];
	u32 len = 0, plen = 0;

	padd(q, "b", "0123456789", 0);
	/* Too small a buffer: both lengths, and the key stays queued. */
	KUNIT_EXPECT_EQ(test, kwq_get_payload(q, kb, sizeof(kb), &len, pb, sizeof(pb), &plen,
					      NULL, KWQ_NOWAIT), -EMSGSIZE);
	KUNIT_EXPECT_EQ(test, len, 1);
	KUNIT_EXPECT_EQ(test, plen, 10);
	plen = 0;
	KUNIT_EXPECT_EQ(test, kwq_get_payload(q, kb, 0, &len, pb, sizeof(pb), &plen,
					      NULL, KWQ_NOWAIT), -EMSGSIZE);
	KUNIT_EXPECT_EQ(test, plen, 10);
	KUNIT_EXPECT_EQ(test, kwq_len(q), 1);
	KUNIT_EXPECT_EQ(test, PSTAT(q, gets), 0);
	/* No buffer: the length only; the record keeps the payload. */
	plen = 0;
	KUNIT_EXPECT_EQ(test, kwq_get_payload(q, kb, sizeof(kb), &len, NULL, 0, &plen,
					      NULL, KWQ_NOWAIT), 0);
	KUNIT_EXPECT_EQ(test, plen, 10);
	KUNIT_EXPECT_EQ(test, kwq_requeue(q, "b", 1), 0);
	/* kwq_get() hands the key out without copying it. */
	KUNIT_EXPECT_EQ(test, kwq_get(q, kb, sizeof(kb), &len, KWQ_NOWAIT), 0);
	KUNIT_EXPECT_EQ(test, kwq_requeue(q, "b", 1), 0);
	pget(test, q, "b", "0123456789");
}

static void kwq_payload_test_bad_input(struct kunit *test)
{
	struct kwq *q = pqueue(test, 0)->q;
	struct kwq_attr attr = { .payload_max = 1 };
	struct kwq_add_opts o = { .payload = "x", .payload_len = PMAX + 1 };
	struct kwq_stats *before = kunit_kzalloc(test, 2 * sizeof(*before), GFP_KERNEL);
	struct kwq *plain;

	KUNIT_ASSERT_NOT_NULL(test, before);
	padd(q, "k", "stored", 0);
	kwq_stats(q, before);
	KUNIT_EXPECT_EQ(test, kwq_add_ex(q, "k", 1, &o), -E2BIG);
	KUNIT_EXPECT_EQ(test, kwq_add_ex(q, "n", 1, &o), -E2BIG);
	o.payload = NULL;
	o.payload_len = 1;
	KUNIT_EXPECT_EQ(test, kwq_add_ex(q, "k", 1, &o), -EINVAL);
	o.payload = "x";
	o.payload_len = 0;
	KUNIT_EXPECT_EQ(test, kwq_add_ex(q, "k", 1, &o), -EINVAL);
	o.payload_len = 1;
	KUNIT_EXPECT_EQ(test, kwq_add_ex(q, NULL, 1, &o), -EINVAL);
	kwq_stats(q, before + 1);
	KUNIT_EXPECT_EQ(test, memcmp(before, before + 1, sizeof(*before)), 0);
	pget(test, q, "k", "stored");

	plain = kwq_create(NULL, NULL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, plain);
	KUNIT_EXPECT_EQ(test, kwq_add_ex(plain, "k", 1, &o), -EINVAL);
	KUNIT_EXPECT_EQ(test, PSTAT(plain, items), 0);
	kwq_destroy(plain);

	attr.payload_max = 65537;
	KUNIT_EXPECT_EQ(test, PTR_ERR(kwq_create(NULL, &attr)), -EINVAL);
}

static int nop_handler(void *ctx, const void *key, u32 len)
{
	return 0;
}

static void kwq_payload_test_no_room(struct kunit *test)
{
	struct kwq *q = pqueue(test, 0)->q;
	struct kwq_pool_attr pattr = { .handler = nop_handler, .workers = 1 };
	u8 *buf = kunit_kzalloc(test, KWQ_KEY_MAX, GFP_KERNEL);
	struct kwq_key out[2];
	int dr = -1;
	u32 len;

	KUNIT_ASSERT_NOT_NULL(test, buf);
	padd(q, "a", "pa", 0);
	padd(q, "b", "pb", 0);
	pget(test, q, "a", "pa");
	KUNIT_EXPECT_EQ(test, kwq_get_batch(q, out, 2, buf, KWQ_KEY_MAX, KWQ_NOWAIT),
			-EOPNOTSUPP);
	KUNIT_EXPECT_EQ(test, kwq_done_get(q, "a", 1, &dr, buf, KWQ_KEY_MAX, &len, KWQ_NOWAIT),
			-EOPNOTSUPP);
	KUNIT_EXPECT_EQ(test, dr, -1);
	KUNIT_EXPECT_EQ(test, PTR_ERR(kwq_pool_start(q, &pattr)), -EOPNOTSUPP);
	KUNIT_EXPECT_EQ(test, PSTAT(q, processing), 1);
	KUNIT_EXPECT_EQ(test, PSTAT(q, dones), 0);
	KUNIT_EXPECT_EQ(test, kwq_len(q), 1);
	/* Done batches work: a done frees the payload. */
	out[0].key = "a";
	out[0].len = 1;
	out[0].ticket = 0;
	KUNIT_EXPECT_EQ(test, kwq_done_batch(q, out, 1, &len), 1);
	KUNIT_EXPECT_EQ(test, PSTAT(q, payload_bytes), 2);
}

/*
 * Stress on the real clock: producers replace the payloads of a few keys
 * (each key has one producer, so its adds are ordered) while consumers
 * take them with kwq_get_payload() and end or give them back. Every
 * payload handed out must be whole (its bytes follow its first) and, once
 * drained, the last payload of each key must have been handed out; then
 * nothing is held. KASAN and kmemleak watch the references a get holds
 * while an add frees the record's.
 */
#define PSTRESS_KEYS	16
#define PSTRESS_MS	400

struct pstress {
	struct kwq *q;
	u8 stop;
	atomic64_t gen[PSTRESS_KEYS];	/* the sequence number of the key's last payload */
	atomic64_t seen[PSTRESS_KEYS];	/* the highest one handed out */
	atomic_t errors;
	struct completion finished[4];
};

struct pstress_worker {
	struct pstress *s;
	int index;
};

static int pstress_producer(void *data)
{
	struct pstress_worker *w = data;
	struct pstress *s = w->s;
	u8 p[PMAX];
	char key[8];
	u32 k, len, j;
	u64 seq;
	int n;

	while (!READ_ONCE(s->stop)) {
		k = (get_random_u32() % (PSTRESS_KEYS / 2)) * 2 + w->index;
		n = scnprintf(key, sizeof(key), "s%u", k);
		if (get_random_u32() % 8 == 0) {
			if (kwq_add(s->q, key, n) < 0)
				atomic_inc(&s->errors);
			continue;
		}
		len = sizeof(seq) + 1 + get_random_u32() % (PMAX - sizeof(seq));
		seq = atomic64_read(&s->gen[k]) + 1;
		memcpy(p, &seq, sizeof(seq));
		for (j = sizeof(seq); j < len; j++)
			p[j] = (u8)(seq + j);
		if (padd_raw(s->q, key, n, p, len) < 0)
			atomic_inc(&s->errors);
		atomic64_set(&s->gen[k], seq);
		cond_resched();
	}
	complete(&s->finished[w->index]);
	return 0;
}

static int pstress_consumer(void *data)
{
	struct pstress_worker *w = data;
	struct pstress *s = w->s;
	u32 len, plen, k, j;
	u8 p[PMAX];
	char key[8];
	u64 seq;
	int ret;

	for (;;) {
		ret = kwq_get_payload(s->q, key, sizeof(key) - 1, &len, p, sizeof(p), &plen, NULL,
				      KWQ_FOREVER);
		if (ret == -ESHUTDOWN)
			break;
		if (ret) {
			atomic_inc(&s->errors);
			break;
		}
		key[len] = '\0';
		if (kstrtou32(key + 1, 10, &k) || k >= PSTRESS_KEYS) {
			atomic_inc(&s->errors);
			continue;
		}
		if (plen) {
			memcpy(&seq, p, sizeof(seq));
			for (j = sizeof(seq); j < plen; j++)
				if (p[j] != (u8)(seq + j))
					break;
			if (plen < sizeof(seq) || j < plen)
				atomic_inc(&s->errors);
			else if (seq > atomic64_read(&s->seen[k]))
				atomic64_set(&s->seen[k], seq);
		}
		ret = get_random_u32() % 8 ? kwq_done(s->q, key, len) : kwq_requeue(s->q, key, len);
		if (ret < 0)
			atomic_inc(&s->errors);
		cond_resched();
	}
	complete(&s->finished[w->index + 2]);
	return 0;
}

static void kwq_payload_test_stress(struct kunit *test)
{
	struct kwq_attr attr = { .payload_max = PMAX };
	struct pstress *s = kunit_kzalloc(test, sizeof(*s), GFP_KERNEL);
	struct pstress_worker *w = kunit_kcalloc(test, 4, sizeof(*w), GFP_KERNEL);
	struct task_struct *t;
	int i, late = 0;

	KUNIT_ASSERT_NOT_NULL(test, s);
	KUNIT_ASSERT_NOT_NULL(test, w);
	s->q = kwq_create(NULL, &attr);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, s->q);
	for (i = 0; i < 4; i++) {
		w[i].s = s;
		w[i].index = i % 2;
		init_completion(&s->finished[i]);
		t = kthread_run(i < 2 ? pstress_producer : pstress_consumer, &w[i],
				"kwq-pstress-%d", i);
		KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	}
	msleep(PSTRESS_MS);
	WRITE_ONCE(s->stop, true);
	wait_for_completion(&s->finished[0]);
	wait_for_completion(&s->finished[1]);
	KUNIT_EXPECT_EQ(test, kwq_shutdown_drain(s->q, kwq_deadline_after(30LL * NSEC_PER_SEC),
						 0), 0);
	kwq_shutdown(s->q);
	wait_for_completion(&s->finished[2]);
	wait_for_completion(&s->finished[3]);
	KUNIT_EXPECT_EQ(test, atomic_read(&s->errors), 0);
	for (i = 0; i < PSTRESS_KEYS; i++)
		late += atomic64_read(&s->seen[i]) != atomic64_read(&s->gen[i]);
	KUNIT_EXPECT_EQ_MSG(test, late, 0, "keys whose last payload was never handed out");
	KUNIT_EXPECT_EQ(test, PSTAT(s->q, payload_bytes), 0);
	KUNIT_EXPECT_EQ(test, PSTAT(s->q, items), 0);
	kunit_info(test, "payload stress: %llu gets, %llu payloads replaced\n",
		   PSTAT(s->q, gets), PSTAT(s->q, payloads_replaced));
	kwq_destroy(s->q);
}

static struct kunit_case kwq_payload_cases[] = {
	KUNIT_CASE(kwq_payload_test_latest_wins_queued),
	KUNIT_CASE(kwq_payload_test_latest_wins_waiting),
	KUNIT_CASE(kwq_payload_test_processing),
	KUNIT_CASE(kwq_payload_test_give_back),
	KUNIT_CASE(kwq_payload_test_done_keeps_waiting),
	KUNIT_CASE(kwq_payload_test_freed_on_cancel_and_shutdown),
	KUNIT_CASE(kwq_payload_test_buffers),
	KUNIT_CASE(kwq_payload_test_bad_input),
	KUNIT_CASE(kwq_payload_test_no_room),
	KUNIT_CASE(kwq_payload_test_stress),
	{}
};

static struct kunit_suite kwq_payload_suite = {
	.name = "kwq_payload",
	.exit = fake_clock_exit,
	.test_cases = kwq_payload_cases,
};

kunit_test_suite(kwq_payload_suite);
