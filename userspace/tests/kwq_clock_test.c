// SPDX-License-Identifier: GPL-2.0
/*
 * Manual clocks (KWQ_CREATE_MANUAL_CLOCK, KWQ_IOC_CLOCK_STEP) through
 * /dev/kwq, run inside the guest as root and built both 64-bit and -m32
 * (compat_ioctl): the feature bit, the create flag, every refused input
 * (and that it changed nothing, the clock and the counters included),
 * who may step, and that add-after deadlines, the limiters of
 * add-rate-limited and the processing timeout follow the steps, not real
 * time: a key is ready after the step that reaches its deadline and not
 * after the one that stops a nanosecond short.
 *
 * No assertion depends on how fast the guest runs: real time only ever
 * has to pass at least some span for a key NOT to become ready.
 */

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "libkwq.h"
#include "kwq_test_util.h"
#include "tap.h"

#define MS(x)	((int64_t)(x) * 1000000)
#define OTHER_UID	65534

/* One raw KWQ_IOC_CLOCK_STEP; @c is in and out. */
static int raw_step(int fd, struct kwq_ioc_clock_step *c)
{
	return raw_ioctl(fd, KWQ_IOC_CLOCK_STEP, c);
}

/* The clock's time, or ~0 if it cannot be read. */
static uint64_t clock_of(int fd)
{
	uint64_t now = ~0ULL;

	if (kwq_clock_step(fd, 0, &now))
		return ~0ULL;
	return now;
}

static int step(int fd, int64_t ns)
{
	return kwq_clock_step(fd, ns, NULL);
}

/* A queue on a manual clock, with @flags and @timeout_ns more; bails out on failure. */
static int manual_queue(const char *name, uint32_t flags, uint64_t timeout_ns,
			const struct kwq_ratelimit *rl)
{
	struct kwq_ioc_create c;
	int fd;

	memset(&c, 0, sizeof(c));
	strcpy((char *)c.name, name);
	c.mode = 0666;
	c.flags = KWQ_CREATE_MANUAL_CLOCK | flags;
	c.processing_timeout_ns = timeout_ns;
	if (rl) {
		c.flags |= KWQ_CREATE_RATELIMIT;
		c.ratelimit = *rl;
	}
	fd = kwq_create_ex(&c);
	if (fd < 0) {
		printf("Bail out! create %s: %s\n", name, strerror(-fd));
		exit(1);
	}
	return fd;
}

static void test_version_and_create(void)
{
	struct kwq_ioc_version v;
	struct kwq_ioc_create c;
	int fd = dev_open(O_RDONLY);

	memset(&v, 0, sizeof(v));
	is(raw_ioctl(fd, KWQ_IOC_VERSION, &v), 0, "version");
	ok(v.features & KWQ_FEATURE_MANUAL_CLOCK, "KWQ_FEATURE_MANUAL_CLOCK is reported");
	close(fd);

	memset(&c, 0, sizeof(c));
	strcpy((char *)c.name, "clk-flag");
	c.mode = 0600;
	c.flags = KWQ_CREATE_MANUAL_CLOCK | (KWQ_CREATE_MANUAL_CLOCK << 1);
	is(kwq_create_ex(&c), -EINVAL, "an unknown create flag beside the manual clock -> EINVAL");
	is(kwq_open("clk-flag", O_RDWR), -ENOENT, "... and no queue was made");
	fd = manual_queue("clk-flag", KWQ_CREATE_PRIORITY | KWQ_CREATE_TENANT, 0, NULL);
	ok(fd >= 0, "a manual clock with priorities and tenants is accepted");
	is(clock_of(fd), 0, "a manual clock starts at 0");
	end_queue(fd);
}

static void test_not_manual(void)
{
	int fd = new_queue("clk-plain");
	struct kwq_ioc_clock_step c;
	struct kwq_stats st;

	is(kwq_add_after(fd, "k", 1, MS(60000), 0), KWQ_ADD_WAITING, "plain queue: a key waits");
	st = stats_of(fd);
	memset(&c, 0, sizeof(c));
	c.step_ns = MS(120000);
	is(raw_step(fd, &c), -EOPNOTSUPP, "a step on a queue without a manual clock -> EOPNOTSUPP");
	is(c.now_ns, 0, "... writes nothing back");
	c.step_ns = 0;
	is(raw_step(fd, &c), -EOPNOTSUPP, "a read of it too -> EOPNOTSUPP");
	ok(same_stats(fd, &st), "... and nothing changed, counters included");
	is(kwq_cancel(fd, "k", 1), 1, "the key still waits");
	end_queue(fd);
}

static void test_invalid(void)
{
	int fd = manual_queue("clk-invalid", 0, 0, NULL);
	struct kwq_ioc_clock_step c;
	struct kwq_stats st;

	is(step(fd, MS(5)), 0, "a step of 5 ms");
	is(kwq_add_after(fd, "k", 1, MS(10), 0), KWQ_ADD_WAITING, "a key waits 10 ms");
	st = stats_of(fd);
	memset(&c, 0, sizeof(c));
	c.step_ns = MS(20);
	c.flags = 1;
	is(raw_step(fd, &c), -EINVAL, "flags != 0 -> EINVAL");
	c.flags = 0;
	c.reserved[1] = 1;
	is(raw_step(fd, &c), -EINVAL, "reserved != 0 -> EINVAL");
	c.reserved[1] = 0;
	c.pending = 1;
	is(raw_step(fd, &c), -EINVAL, "pending != 0 on input -> EINVAL");
	c.pending = 0;
	c.now_ns = 1;
	is(raw_step(fd, &c), -EINVAL, "now_ns != 0 on input -> EINVAL");
	c.now_ns = 0;
	c.step_ns = -1;
	is(raw_step(fd, &c), -EINVAL, "a negative step -> EINVAL");
	c.step_ns = INT64_MIN;
	is(raw_step(fd, &c), -EINVAL, "INT64_MIN -> EINVAL");
	c.step_ns = (int64_t)KWQ_CLOCK_MAX_NS;
	is(raw_step(fd, &c), -EOVERFLOW, "a step past KWQ_CLOCK_MAX_NS -> EOVERFLOW");
	c.step_ns = INT64_MAX;
	is(raw_step(fd, &c), -EOVERFLOW, "INT64_MAX -> EOVERFLOW");
	is(raw_ioctl(fd, KWQ_IOC_CLOCK_STEP, (void *)16), -EFAULT, "a bad pointer -> EFAULT");
	ok(same_stats(fd, &st), "refused steps changed nothing, counters included");
	is(clock_of(fd), MS(5), "... nor the clock");
	is(kwq_len(fd), 0, "... and the key still waits");
	/* Up to the limit exactly, then not a nanosecond more. */
	is(kwq_cancel(fd, "k", 1), 1, "cancel the key");
	is(step(fd, (int64_t)(KWQ_CLOCK_MAX_NS - MS(5))), 0, "a step to KWQ_CLOCK_MAX_NS");
	is(clock_of(fd), KWQ_CLOCK_MAX_NS, "the clock is at KWQ_CLOCK_MAX_NS");
	is(step(fd, 1), -EOVERFLOW, "one ns more -> EOVERFLOW");
	is(step(fd, 0), 0, "a step of 0 still works there");
	is(kwq_add_after(fd, "late", 4, (int64_t)KWQ_DELAY_MAX_NS, 0), KWQ_ADD_WAITING,
	   "an add-after of KWQ_DELAY_MAX_NS at the clock's end waits");
	end_queue(fd);
}

/* add-after: ready after the step that reaches the deadline, not before. */
static void test_after(void)
{
	int fd = manual_queue("clk-after", 0, 0, NULL);
	struct kwq_stats st;

	is(kwq_add_after(fd, "a", 1, MS(100), 0), KWQ_ADD_WAITING, "a waits 100 ms");
	is(kwq_add_after(fd, "b", 1, MS(50), 0), KWQ_ADD_WAITING, "b waits 50 ms");
	is(kwq_add_after(fd, "c", 1, 1, 0), KWQ_ADD_WAITING, "c waits 1 ns");
	wait_ns(MS(150));
	is(kwq_len(fd), 0, "150 ms of real time made nothing ready");
	is(get_is(fd, "c"), -EAGAIN, "... a get finds nothing");
	is(step(fd, 1), 0, "step 1 ns");
	is(get_is(fd, "c"), 0, "c is ready at its deadline");
	is(done_s(fd, "c"), KWQ_DONE_FINISHED, "c done");
	is(step(fd, MS(50) - 2), 0, "step to 1 ns before b's deadline");
	is(kwq_len(fd), 0, "b is not ready 1 ns early");
	is(step(fd, 1), 0, "step 1 ns");
	is(kwq_len(fd), 1, "b is ready at its deadline");
	is(step(fd, MS(200)), 0, "step past a's deadline");
	is(get_is(fd, "b"), 0, "b first (earlier deadline)");
	is(get_is(fd, "a"), 0, "then a");
	st = stats_of(fd);
	is(st.fired, 3, "three deadlines fired");
	is(st.waiting, 0, "nothing waits");
	is(st.queue_latency_sum_ns, MS(200), "queue latency counts manual time (b: 200 ms)");
	is(clock_of(fd), MS(250), "the clock reads the sum of the steps");
	end_queue(fd);
}

/* The get deadline is real time; a blocked get wakes on a step. */
static void test_get(void)
{
	int fd = manual_queue("clk-get", 0, 0, NULL);
	char buf[16];
	size_t len = 0;
	int status = -1;
	pid_t pid;

	is(kwq_get(fd, buf, sizeof(buf), &len, MS(20)), -ETIMEDOUT,
	   "a get with a 20 ms timeout times out in real time without a step");
	is(kwq_add_after(fd, "w", 1, MS(1000), 0), KWQ_ADD_WAITING, "w waits 1 s");
	pid = fork();
	if (pid == 0) {
		int cfd = kwq_open("clk-get", O_RDONLY);

		if (cfd < 0)
			_exit(2);
		_exit(kwq_get(cfd, buf, sizeof(buf), &len, MS(30000)) == 0 && len == 1 ? 0 : 1);
	}
	wait_ns(MS(50));
	is(step(fd, MS(1000)), 0, "step 1 s");
	waitpid(pid, &status, 0);
	ok(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	   "a get blocked in another process took w once the step reached its deadline");
	end_queue(fd);
}

/* The limiters of add-rate-limited count manual time. */
static void test_limiters(void)
{
	struct kwq_ratelimit rl;
	int fd = manual_queue("clk-rl", 0, 0, NULL);

	/* client-go's default: exponential 5 ms..1000 s and a 10/s bucket of 100. */
	is(kwq_add_rate_limited(fd, "r", 1), KWQ_ADD_WAITING, "r backs off");
	is(step(fd, MS(5) - 1), 0, "step 5 ms - 1 ns");
	is(kwq_len(fd), 0, "r is not ready before its 5 ms backoff");
	is(step(fd, 1), 0, "step 1 ns");
	is(get_is(fd, "r"), 0, "r is ready after exactly 5 ms");
	is(done_s(fd, "r"), KWQ_DONE_FINISHED, "r done");
	is(kwq_add_rate_limited(fd, "r", 1), KWQ_ADD_WAITING, "r backs off again");
	is(step(fd, MS(10) - 1), 0, "step 10 ms - 1 ns");
	is(kwq_len(fd), 0, "the second backoff is not over");
	is(step(fd, 1), 0, "step 1 ns");
	is(kwq_len(fd), 1, "r is ready after exactly 10 ms");
	end_queue(fd);

	/* A bucket of 1 token refilling at 1/s. */
	memset(&rl, 0, sizeof(rl));
	rl.count = 1;
	rl.limiters[0].type = KWQ_LIMITER_BUCKET;
	rl.limiters[0].rate_mhz = 1000;
	rl.limiters[0].burst = 1;
	fd = manual_queue("clk-bucket", 0, 0, &rl);
	wait_ns(MS(50));
	is(kwq_add_rate_limited(fd, "x", 1), KWQ_ADD_QUEUED, "the bucket's one token: x now");
	is(kwq_add_rate_limited(fd, "y", 1), KWQ_ADD_WAITING, "y waits for the next token");
	is(step(fd, MS(1000) - 1), 0, "step 1 s - 1 ns");
	is(kwq_len(fd), 1, "y is not ready before the token");
	is(step(fd, 1), 0, "step 1 ns");
	is(kwq_len(fd), 2, "y is ready after exactly 1 s of steps");
	is(step(fd, MS(1000)), 0, "a step of 1 s refills the bucket");
	is(kwq_add_rate_limited(fd, "z", 1), KWQ_ADD_QUEUED, "z takes the refilled token at once");
	end_queue(fd);
}

/* The processing timeout counts manual time. */
static void test_processing_timeout(void)
{
	int fd = manual_queue("clk-pt", 0, MS(1000), NULL);
	uint64_t ticket = 0;
	char buf[16];
	size_t len = 0;

	is(add_s(fd, "p"), KWQ_ADD_QUEUED, "p queued");
	is(kwq_get_ticket(fd, buf, sizeof(buf), &len, 0, 0, &ticket), 0, "p taken");
	wait_ns(MS(50));
	is(step(fd, MS(1000) - 1), 0, "step 1 s - 1 ns");
	is(stats_of(fd).processing, 1, "p still processing before the timeout");
	is(step(fd, 1), 0, "step 1 ns");
	is(stats_of(fd).processing_expiries, 1, "p expired at the timeout");
	is(kwq_len(fd), 1, "p is queued again");
	is(kwq_done_ticket(fd, "p", 1, ticket), -ENOENT, "the late done of the old hand-out fails");
	end_queue(fd);
}

/* More due keys than one call runs: pending, and the next call finishes. */
static void test_pending(void)
{
	int fd = manual_queue("clk-pending", 0, 0, NULL);
	struct kwq_ioc_clock_step c;
	const int n = KWQ_CLOCK_STEP_KEYS + 500;
	char key[16];
	int i, bad = 0;

	for (i = 0; i < n; i++) {
		snprintf(key, sizeof(key), "k%d", i);
		bad += kwq_add_after(fd, key, strlen(key), MS(1) + i, 0) != KWQ_ADD_WAITING;
	}
	is(bad, 0, "%d keys wait", n);
	memset(&c, 0, sizeof(c));
	c.step_ns = MS(10);
	is(raw_step(fd, &c), 0, "one step past every deadline");
	is(c.pending, 1, "... leaves work pending");
	is(c.now_ns, MS(10), "... and moved the clock");
	ok(kwq_len(fd) > 0 && kwq_len(fd) <= KWQ_CLOCK_STEP_KEYS,
	   "... after queueing at most KWQ_CLOCK_STEP_KEYS keys (%lld)", (long long)kwq_len(fd));
	memset(&c, 0, sizeof(c));
	is(raw_step(fd, &c), 0, "a step of 0");
	is(c.pending, 0, "... finishes");
	is(kwq_len(fd), n, "every key is queued");
	is(get_is(fd, "k0"), 0, "earliest deadline first");
	end_queue(fd);
}

/* Who may step: a writer that owns the queue. */
static void test_access(void)
{
	int fd = manual_queue("clk-access", 0, 0, NULL);
	int rd = kwq_open("clk-access", O_RDONLY);
	int status = -1;
	pid_t pid;

	is(step(rd, MS(1)), -EBADF, "a step on a file opened read-only -> EBADF");
	close(rd);
	pid = fork();
	if (pid == 0) {
		int wfd;

		if (setresuid(OTHER_UID, OTHER_UID, OTHER_UID))
			_exit(3);
		wfd = kwq_open("clk-access", O_WRONLY);
		if (wfd < 0)
			_exit(2);
		_exit(step(wfd, MS(1)) == -EPERM ? 0 : 1);
	}
	waitpid(pid, &status, 0);
	ok(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	   "a writer that does not own the queue -> EPERM");
	is(clock_of(fd), 0, "the clock did not move");
	kwq_destroy(fd);
	is(step(fd, MS(1)), -EIDRM, "a step on a destroyed queue -> EIDRM");
	close(fd);
}

int main(void)
{
	test_version_and_create();
	test_not_manual();
	test_invalid();
	test_after();
	test_get();
	test_limiters();
	test_processing_timeout();
	test_pending();
	test_access();
	return tap_done();
}
