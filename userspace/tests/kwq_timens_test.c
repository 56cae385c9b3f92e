// SPDX-License-Identifier: GPL-2.0
/*
 * Deadlines of gets, batch gets and drains are CLOCK_MONOTONIC as the
 * caller's time namespace reads it: a 50 ms wait lasts 50 ms in a
 * namespace whose clock runs 100,000 s ahead of the host's, or behind it.
 *
 * For each offset, a child unshares a time namespace, sets its monotonic
 * offset and forks a grandchild, which is in the namespace and runs the
 * probes; the results come back through a pipe and are checked here.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>

#include "tap.h"
#include "kwq_test_util.h"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

#define MS		1000000LL
#define KTIME_MAX_NS	0x7fffffffffffffffULL

struct probe {
	int ret;
	int64_t elapsed;
};

struct results {
	int unshared;		/* 0, or the errno of unshare/offsets */
	uint64_t now;		/* the grandchild's CLOCK_MONOTONIC */
	struct probe get, batch, past, before_offset, far, drain;
};

static int64_t since(uint64_t t0)
{
	return (int64_t)(now_ns() - t0);
}

/* A get with an absolute deadline, as the ioctl takes it. */
static struct probe get_until(int fd, uint64_t deadline)
{
	struct kwq_ioc_get g;
	char buf[KWQ_KEY_MAX];
	uint64_t t0 = now_ns();
	struct probe p;

	memset(&g, 0, sizeof(g));
	g.key_ptr = (uintptr_t)buf;
	g.key_cap = sizeof(buf);
	g.deadline_ns = deadline;
	p.ret = raw_ioctl(fd, KWQ_IOC_GET, &g);
	p.elapsed = since(t0);
	return p;
}

static void probes(struct results *r, int64_t offset)
{
	char name[KWQ_NAME_MAX], buf[KWQ_KEY_MAX];
	struct kwq_batch_entry e;
	uint64_t t0, forked;
	size_t len;
	pid_t adder;
	int fd;

	r->now = now_ns();
	snprintf(name, sizeof(name), "tn-%d", getpid());
	fd = kwq_create(name, 0600, 0);
	if (fd < 0) {
		r->get.ret = fd;
		return;
	}
	/* 50 ms from now, by this namespace's clock (libkwq reads it). */
	t0 = now_ns();
	r->get.ret = kwq_get(fd, buf, sizeof(buf), &len, 50 * MS);
	r->get.elapsed = since(t0);

	memset(&e, 0, sizeof(e));
	e.key_ptr = (uintptr_t)buf;
	e.key_len = sizeof(buf);
	t0 = now_ns();
	r->batch.ret = kwq_get_batch(fd, &e, 1, 50 * MS, 0);
	r->batch.elapsed = since(t0);

	/* Half a second ago: expired at once (-ETIMEDOUT, not -EAGAIN). */
	r->past = get_until(fd, now_ns() - 500 * MS);
	/* A time before a positive offset: long past on the host's clock. */
	if (offset > 0)
		r->before_offset = get_until(fd, 1000 * MS);

	/*
	 * Just short of KTIME_MAX: beyond it on the host's clock with a
	 * negative offset; it waits until another process adds a key.
	 */
	forked = now_ns();	/* before fork(): the adder may run first */
	adder = fork();
	if (adder == 0) {
		wait_ns(100 * MS);
		_exit(add_s(fd, "late") < 0);
	}
	r->far = get_until(fd, KTIME_MAX_NS - 1);
	r->far.elapsed = since(forked);
	waitpid(adder, NULL, 0);
	done_s(fd, "late");

	/* A drain waits for a key being processed, 50 ms at most. */
	add_s(fd, "busy");
	get_is(fd, "busy");
	t0 = now_ns();
	r->drain.ret = kwq_shutdown_drain(fd, 50 * MS, 0);
	r->drain.elapsed = since(t0);
	done_s(fd, "busy");
	end_queue(fd);
}

/* Run the probes in a time namespace @offset seconds off (0: none). */
static struct results run_in(int64_t offset)
{
	struct results r;
	int p[2];
	pid_t pid;

	memset(&r, 0, sizeof(r));
	if (pipe(p))
		return r;
	pid = fork();
	if (pid == 0) {
		char line[64];
		int fd, n;

		close(p[0]);
		if (offset) {
			if (unshare(CLONE_NEWTIME)) {
				r.unshared = errno;
				goto out;
			}
			fd = open("/proc/self/timens_offsets", O_WRONLY);
			n = snprintf(line, sizeof(line), "monotonic %lld 0\n", (long long)offset);
			if (fd < 0 || write(fd, line, n) != n) {
				r.unshared = errno;
				goto out;
			}
			close(fd);
		}
		/* The grandchild is the first task in the namespace. */
		pid = fork();
		if (pid == 0) {
			probes(&r, offset);
			if (write(p[1], &r, sizeof(r)) != sizeof(r))
				_exit(1);
			_exit(0);
		}
		waitpid(pid, NULL, 0);
		_exit(0);
out:
		if (write(p[1], &r, sizeof(r)) != sizeof(r))
			_exit(1);
		_exit(0);
	}
	close(p[1]);
	if (read(p[0], &r, sizeof(r)) != sizeof(r))
		r.get.ret = -EPIPE;
	close(p[0]);
	waitpid(pid, NULL, 0);
	return r;
}

static void waited(struct probe p, int64_t min, const char *what, const char *ns)
{
	is(p.ret, -ETIMEDOUT, "%s: %s fails with -ETIMEDOUT", ns, what);
	ok(p.elapsed >= min && p.elapsed < 5000 * MS, "%s: %s gave up after %lld ms (want %lld..5000)",
	   ns, what, (long long)(p.elapsed / MS), (long long)(min / MS));
}

static void check(int64_t offset, const char *ns)
{
	uint64_t before = now_ns();
	struct results r = run_in(offset);
	int64_t skew;

	if (r.unshared) {
		/* Every kernel make check runs has time namespaces: not a skip. */
		ok(0, "%s: no time namespace: %s", ns, strerror(r.unshared));
		return;
	}
	skew = (int64_t)(r.now - before) - offset * 1000 * MS;
	ok(skew > -5000 * MS && skew < 5000 * MS,
	   "%s: the prober's clock is %lld s off ours", ns, (long long)offset);
	waited(r.get, 45 * MS, "a get 50 ms ahead", ns);
	waited(r.batch, 45 * MS, "a batch get 50 ms ahead", ns);
	waited(r.drain, 45 * MS, "a drain 50 ms ahead", ns);
	/* At once: waited()'s 5 s bound, as a stalled guest needs. */
	waited(r.past, 0, "a get with a deadline 500 ms ago", ns);
	if (offset > 0)
		waited(r.before_offset, 0, "a get with a deadline before the offset", ns);
	is(r.far.ret, 0, "%s: a get with a deadline near KTIME_MAX waits for a key", ns);
	ok(r.far.elapsed >= 100 * MS && r.far.elapsed < 5000 * MS,
	   "%s: ... which came after %lld ms (want 100..5000)", ns, (long long)(r.far.elapsed / MS));
}

int main(void)
{
	struct timespec ts;
	int64_t back;

	setvbuf(stdout, NULL, _IOLBF, 0);
	check(0, "no time namespace");
	check(100000, "monotonic +100000 s");
	/* A namespace's clock cannot be made negative: one second is left. */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	back = ts.tv_sec > 2 ? ts.tv_sec - 1 : 1;
	check(-back, "monotonic -(uptime - 1) s");
	return tap_done();
}
