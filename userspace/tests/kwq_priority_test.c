// SPDX-License-Identifier: GPL-2.0
/*
 * Priority queues (KWQ_CREATE_PRIORITY, struct kwq_ioc_add.priority)
 * through /dev/kwq, built 64-bit and -m32 (compat_ioctl): the feature
 * bit, refused inputs (changing nothing), highest priority first and FIFO
 * within one, raise-never-lower, a delayed key that becomes ready going
 * before lower priorities, a given-back key at the head of its level,
 * plain calls at priority 0, and the starvation bound under a saturating
 * high-priority producer: a key of priority p ready at t goes before
 * every key that becomes ready after t + (KWQ_PRIORITY_MAX - p) * aging.
 *
 * The machine may be slow and shared: time is only asserted in the
 * direction the bound promises (what came out before the low key was
 * added no later than the bound allows, plus the skew local_clock() may
 * have across CPUs).
 */

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "libkwq.h"
#include "kwq_test_util.h"
#include "tap.h"

#define MS(x)	((int64_t)(x) * 1000000)

static int prio_queue(const char *name, uint64_t aging_ns)
{
	int fd = kwq_create_priority(name, 0600, 0, aging_ns);

	if (fd < 0) {
		printf("Bail out! create %s: %s\n", name, strerror(-fd));
		exit(1);
	}
	return fd;
}

static int addp(int fd, const char *key, int prio)
{
	return kwq_add_priority(fd, key, strlen(key), prio);
}

static int addp_after(int fd, const char *key, int prio, int64_t delay)
{
	struct kwq_ioc_add a;

	memset(&a, 0, sizeof(a));
	a.priority = prio;
	a.delay_ns = delay;
	return kwq_add_ex(fd, key, strlen(key), &a);
}

static void test_version_and_invalid(void)
{
	struct kwq_ioc_version v;
	struct kwq_ioc_create c;
	struct kwq_stats st;
	int fd = dev_open(O_RDONLY), plain;

	memset(&v, 0, sizeof(v));
	is(raw_ioctl(fd, KWQ_IOC_VERSION, &v), 0, "version");
	ok(v.features & KWQ_FEATURE_PRIORITY, "KWQ_FEATURE_PRIORITY is reported");
	close(fd);

	memset(&c, 0, sizeof(c));
	strcpy((char *)c.name, "prio-invalid-c");
	c.mode = 0600;
	c.aging_ns = 1;
	is(kwq_create_ex(&c), -EINVAL, "aging_ns without KWQ_CREATE_PRIORITY -> EINVAL");
	c.flags = KWQ_CREATE_PRIORITY;
	c.aging_ns = KWQ_AGING_MAX_NS + 1;
	is(kwq_create_ex(&c), -EINVAL, "aging_ns above KWQ_AGING_MAX_NS -> EINVAL");
	c.flags = KWQ_CREATE_PRIORITY | (1U << 5);
	c.aging_ns = 0;
	is(kwq_create_ex(&c), -EINVAL, "an unknown create flag beside it -> EINVAL");

	fd = prio_queue("prio-invalid", MS(10));
	is(addp(fd, "w", 0), KWQ_ADD_QUEUED, "a queued key");
	st = stats_of(fd);
	is(addp(fd, "x", KWQ_PRIORITY_MAX + 1), -EINVAL, "priority above KWQ_PRIORITY_MAX -> EINVAL");
	is(addp(fd, "x", KWQ_PRIORITY_MIN - 1), -EINVAL, "priority below KWQ_PRIORITY_MIN -> EINVAL");
	is(addp(fd, "w", 100), -EINVAL, "an out-of-range raise -> EINVAL");
	ok(same_stats(fd, &st), "refused adds changed nothing, counters included");
	is(addp(fd, "x", KWQ_PRIORITY_MIN), KWQ_ADD_QUEUED, "KWQ_PRIORITY_MIN is accepted");
	is(addp(fd, "y", KWQ_PRIORITY_MAX), KWQ_ADD_QUEUED, "KWQ_PRIORITY_MAX is accepted");
	end_queue(fd);

	plain = new_queue("prio-plain");
	is(addp(plain, "k", 1), -EINVAL, "a priority on a plain queue -> EINVAL");
	is(addp(plain, "k", 0), KWQ_ADD_QUEUED, "priority 0 on a plain queue is a plain add");
	end_queue(plain);
}

/* Take every ready key, comparing with @want in order. */
static void expect_order(int fd, const char *const *want, int n, const char *what)
{
	char buf[64];
	size_t len;
	int i, good = 1;

	for (i = 0; i < n; i++) {
		len = 0;
		if (kwq_get(fd, buf, sizeof(buf) - 1, &len, 0)) {
			printf("# %s: get %d failed\n", what, i);
			good = 0;
			break;
		}
		buf[len] = '\0';
		if (strcmp(buf, want[i])) {
			printf("# %s: #%d is %s, want %s\n", what, i, buf, want[i]);
			good = 0;
		}
		kwq_done(fd, buf, len);
	}
	ok(good, "%s", what);
	len = 0;
	is(kwq_get(fd, buf, sizeof(buf), &len, 0), -EAGAIN, "%s: nothing else", what);
}

static void test_order(void)
{
	/* An hour per level: no aging within the test. */
	int fd = prio_queue("prio-order", 3600ULL * 1000000000ULL);
	static const char *const want[] = { "h1", "h2", "h3", "m1", "p1", "m2", "p2", "l1" };

	addp(fd, "m1", 0);
	addp(fd, "l1", -3);
	addp(fd, "h1", 5);
	add_s(fd, "p1");	/* a plain add is priority 0... */
	addp(fd, "h2", 5);
	addp(fd, "m2", 0);
	kwq_add_policy(fd, "p2", 2, 0);	/* ...after m2: FIFO within 0 */
	addp(fd, "h3", 5);
	expect_order(fd, want, 8, "highest priority first, FIFO within one (plain adds at 0)");
	end_queue(fd);
}

static void test_raise(void)
{
	int fd = prio_queue("prio-raise", 3600ULL * 1000000000ULL);
	static const char *const want[] = { "c", "a", "b", "d" };
	struct kwq_stats st;

	addp(fd, "a", 0);
	addp(fd, "b", 0);
	addp(fd, "c", 0);
	addp(fd, "d", -2);
	is(addp(fd, "c", 3), KWQ_ADD_DUPLICATE, "raise: a duplicate");
	is(addp(fd, "a", -5), KWQ_ADD_DUPLICATE, "lower: a duplicate");
	is(addp(fd, "b", 0), KWQ_ADD_DUPLICATE, "same priority: a duplicate");
	st = stats_of(fd);
	is(st.queued, 4, "four keys queued");
	is(st.dedups, 3, "each re-add counted as a dedup");
	expect_order(fd, want, 4, "a raise moves the key up, a lower priority never moves it down");
	end_queue(fd);
}

/* A key added again while processing runs next at that add's priority. */
static void test_processing(void)
{
	int fd = prio_queue("prio-proc", 3600ULL * 1000000000ULL);
	static const char *const want[] = { "k", "m" };
	char buf[16];
	size_t len = 0;

	addp(fd, "k", 6);
	is(kwq_get(fd, buf, sizeof(buf), &len, 0), 0, "processing: k taken");
	is(addp(fd, "k", -4), KWQ_ADD_DEFERRED, "processing: re-added at -4");
	is(addp(fd, "k", -2), KWQ_ADD_DUPLICATE, "processing: raised to -2 while dirty");
	addp(fd, "m", -3);
	is(kwq_done(fd, "k", 1), KWQ_DONE_REQUEUED, "processing: requeued");
	expect_order(fd, want, 2, "the requeued key runs at its raised priority (-2 before -3)");
	end_queue(fd);
}

/* controller-runtime#3330: a key ready after its delay still goes before lower priorities. */
static void test_delayed(void)
{
	int fd = prio_queue("prio-delay", 3600ULL * 1000000000ULL);
	static const char *const want[] = { "d", "a", "b" };

	is(addp_after(fd, "d", 4, MS(200)), KWQ_ADD_WAITING, "delayed: waits");
	addp(fd, "a", 0);
	addp(fd, "b", 0);
	wait_ns(MS(400));
	{
		char buf[16];
		size_t len = 0;

		is(kwq_get(fd, buf, sizeof(buf), &len, MS(5000)), 0, "delayed: a get");
		buf[len] = '\0';
		ok(!strcmp(buf, "d"), "delayed: the high-priority key that became ready comes first (%s)",
		   buf);
		kwq_done(fd, buf, len);
	}
	expect_order(fd, want + 1, 2, "delayed: then the others in order");
	end_queue(fd);
}

/* A key given back by a closed file goes to the head of its level. */
static void test_give_back(void)
{
	int fd = prio_queue("prio-giveback", 3600ULL * 1000000000ULL), w;
	static const char *const want[] = { "h", "g", "x", "y" };
	char buf[16];
	size_t len = 0;

	addp(fd, "g", 1);
	w = kwq_open("prio-giveback", O_RDWR);
	ok(w >= 0, "give-back: a second file");
	is(kwq_get(w, buf, sizeof(buf), &len, 0), 0, "give-back: g taken by it");
	addp(fd, "x", 1);
	addp(fd, "y", 1);
	addp(fd, "h", 2);
	close(w);
	expect_order(fd, want, 4, "give-back: g at the head of its level, behind higher ones");
	end_queue(fd);
}

/*
 * The starvation bound: a producer adds two priority-MAX keys for every
 * key taken; a MIN key must still come out, and every key handed out
 * before it must have been added no later than (MAX - MIN) * aging after
 * it.
 */
static void test_starvation(void)
{
	const uint64_t aging = MS(1);
	const uint64_t window = (uint64_t)(KWQ_PRIORITY_MAX - KWQ_PRIORITY_MIN) * aging;
	int fd = prio_queue("prio-starve", aging);
	static uint64_t added[400000];
	uint64_t low_end, worst = 0;
	unsigned int n = 0, taken = 0, late = 0;
	char key[32], buf[32];
	size_t len;
	int found = 0, i;

	for (i = 0; i < 20; i++) {
		snprintf(key, sizeof(key), "h%u", n);
		added[n++] = now_ns();
		addp(fd, key, KWQ_PRIORITY_MAX);
	}
	is(addp(fd, "low", KWQ_PRIORITY_MIN), KWQ_ADD_QUEUED, "starvation: the low key");
	low_end = now_ns();
	while (n + 2 < sizeof(added) / sizeof(added[0])) {
		for (i = 0; i < 2; i++) {
			snprintf(key, sizeof(key), "h%u", n);
			added[n++] = now_ns();
			if (addp(fd, key, KWQ_PRIORITY_MAX) != KWQ_ADD_QUEUED)
				break;
		}
		len = 0;
		if (kwq_get(fd, buf, sizeof(buf) - 1, &len, 0))
			break;
		buf[len] = '\0';
		kwq_done(fd, buf, len);
		if (!strcmp(buf, "low")) {
			found = 1;
			break;
		}
		taken++;
		i = atoi(buf + 1);
		/*
		 * Ready times come from local_clock(), whose CPUs may differ
		 * by up to a scheduler tick where the TSC is unstable (virtual
		 * machines): 5 ms of slack.
		 */
		if (added[i] > low_end + window + MS(5)) {
			late++;
			if (added[i] - low_end > worst)
				worst = added[i] - low_end;
		}
	}
	ok(found, "starvation: the low key came out under a saturating producer (%u before it)",
	   taken);
	is(late, 0, "starvation: no key added later than the bound went before it");
	if (late)
		printf("# worst: added %llu ns after the low key, bound %llu ns\n",
		       (unsigned long long)worst, (unsigned long long)window);
	ok(n > taken + 2, "starvation: the producer outran the consumer (%u added, %u taken)",
	   n, taken);
	end_queue(fd);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	test_version_and_invalid();
	test_order();
	test_raise();
	test_processing();
	test_delayed();
	test_give_back();
	test_starvation();
	return tap_done();
}
