// SPDX-License-Identifier: GPL-2.0
/*
 * KWQ_IOC_DONE_GET: done of one key, then get of the next, in one call.
 * The contract under test (uapi/linux/kwq.h): if the done fails, the call
 * returns the done's error, nothing changed and done_result is
 * KWQ_DONE_NOT_RUN; once the done succeeded, done_result holds its enum
 * kwq_done_result and errors are the get's, with no key taken; a signal
 * while waiting gives -EINTR, never a restart (which would repeat the
 * done); a fault copying the key out gives -EFAULT and the key goes back
 * to the head of the queue. Raw ioctls for the ABI, libkwq's
 * kwq_done_get() for the wrapper. Run in the guest as root, 64- and
 * 32-bit (the 32-bit build goes through compat_ioctl).
 */

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "libkwq.h"
#include "kwq_test_util.h"
#include "tap.h"

/*
 * One layout for 32- and 64-bit callers: 8 + 4 + 4 + 8 + 4 + 4 + 8 + 4 +
 * 4 + 16 = 64 bytes, as uapi/linux/kwq.h declares it.
 */
#define DONE_GET_SIZE	64
_Static_assert(sizeof(struct kwq_ioc_done_get) == DONE_GET_SIZE, "kwq_ioc_done_get layout");
_Static_assert(offsetof(struct kwq_ioc_done_get, done_ptr) == 0, "done_ptr offset");
_Static_assert(offsetof(struct kwq_ioc_done_get, done_len) == 8, "done_len offset");
_Static_assert(offsetof(struct kwq_ioc_done_get, done_result) == 12, "done_result offset");
_Static_assert(offsetof(struct kwq_ioc_done_get, key_ptr) == 16, "key_ptr offset");
_Static_assert(offsetof(struct kwq_ioc_done_get, key_cap) == 24, "key_cap offset");
_Static_assert(offsetof(struct kwq_ioc_done_get, key_len) == 28, "key_len offset");
_Static_assert(offsetof(struct kwq_ioc_done_get, deadline_ns) == 32, "deadline_ns offset");
_Static_assert(offsetof(struct kwq_ioc_done_get, flags) == 40, "flags offset");
_Static_assert(offsetof(struct kwq_ioc_done_get, pad) == 44, "pad offset");
_Static_assert(offsetof(struct kwq_ioc_done_get, done_ticket) == 48, "done_ticket offset");
_Static_assert(offsetof(struct kwq_ioc_done_get, ticket) == 56, "ticket offset");

/*
 * What done_result and key_len hold before a call: neither a
 * kwq_done_result nor KWQ_DONE_NOT_RUN, so every check of them sees what
 * the kernel wrote, not what was there.
 */
#define JUNK	0x5a5a5a5aU

#define MS	1000000ULL

static int open_queue(const char *name, int oflags)
{
	int fd = kwq_open(name, oflags);

	if (fd < 0) {
		printf("Bail out! open %s: %s\n", name, strerror(-fd));
		exit(1);
	}
	return fd;
}

/* The queue's state and counters are as they were. */
static int same_counts(int fd, const struct kwq_stats *before)
{
	struct kwq_stats now = stats_of(fd);

	return now.queued == before->queued && now.processing == before->processing &&
	       now.dirty_processing == before->dirty_processing &&
	       now.items == before->items && now.adds == before->adds &&
	       now.gets == before->gets && now.dones == before->dones &&
	       now.requeues == before->requeues;
}

/* @got[0..len) is the string @want. */
static int key_is(const char *got, uint32_t len, const char *want)
{
	return len == strlen(want) && !memcmp(got, want, len);
}

/*
 * A valid request: done of @done_key, get into @buf (@cap bytes, filled
 * with junk) by @deadline; done_result and key_len hold JUNK.
 */
static void dg_init(struct kwq_ioc_done_get *d, const char *done_key, char *buf, uint32_t cap,
		    uint64_t deadline)
{
	memset(d, 0, sizeof(*d));
	d->done_ptr = (uintptr_t)done_key;
	d->done_len = strlen(done_key);
	d->done_result = JUNK;
	if (buf)
		memset(buf, 'X', cap);
	d->key_ptr = (uintptr_t)buf;
	d->key_cap = cap;
	d->key_len = JUNK;
	d->deadline_ns = deadline;
}

/* 1. Done of the key just processed hands out the next one. */
static void test_happy_path(void)
{
	int fd = new_queue("dg-happy"), other, dr = JUNK;
	struct kwq_ioc_done_get d;
	struct kwq_stats st;
	char buf[32];
	size_t len = JUNK;

	add_s(fd, "a");
	add_s(fd, "b");
	is(get_is(fd, "a"), 0, "happy: get a");
	dg_init(&d, "a", buf, sizeof(buf), KWQ_DEADLINE_NOWAIT);
	is(raw_ioctl(fd, KWQ_IOC_DONE_GET, &d), 0, "happy: done_get(done a) succeeds");
	is(d.done_result, KWQ_DONE_FINISHED, "happy: done_result is KWQ_DONE_FINISHED");
	is(d.key_len, 1, "happy: key_len is 1");
	ok(key_is(buf, d.key_len, "b") && buf[1] == 'X',
	   "happy: the key is b, and nothing written past it");
	st = stats_of(fd);
	ok(st.queued == 0 && st.processing == 1 && st.items == 1 && st.gets == 2 &&
	   st.dones == 1, "happy: a finished, b processing (stats)");
	is(done_s(fd, "a"), -ENOENT, "happy: a is no longer processing");
	/* The key is leased to this file like a plain get's. */
	other = open_queue("dg-happy", O_RDWR);
	is(done_s(other, "b"), -ENOENT, "happy: b is leased to the calling file");
	close(other);

	/* The same through libkwq, with keys of different lengths. */
	add_s(fd, "ns/second-key");
	memset(buf, 'X', sizeof(buf));
	is(kwq_done_get(fd, "b", 1, &dr, buf, sizeof(buf), &len, 0), 0,
	   "happy: kwq_done_get(done b) succeeds");
	is(dr, KWQ_DONE_FINISHED, "happy: kwq_done_get reports KWQ_DONE_FINISHED");
	ok(len == strlen("ns/second-key") && key_is(buf, len, "ns/second-key"),
	   "happy: kwq_done_get hands out ns/second-key with its length");
	is(done_s(fd, "ns/second-key"), KWQ_DONE_FINISHED, "happy: and it is processing");
	st = stats_of(fd);
	ok(st.items == 0 && st.gets == 3 && st.dones == 3, "happy: nothing left, each counted once");
	end_queue(fd);
}

/* 2. A key added again while processing comes straight back. */
static void test_requeued(void)
{
	int fd = new_queue("dg-requeue");
	struct kwq_ioc_done_get d;
	struct kwq_stats st;
	char buf[16];

	add_s(fd, "k");
	is(get_is(fd, "k"), 0, "requeue: get k");
	is(add_s(fd, "k"), KWQ_ADD_DEFERRED, "requeue: add k while processing is deferred");
	dg_init(&d, "k", buf, sizeof(buf), KWQ_DEADLINE_NOWAIT);
	is(raw_ioctl(fd, KWQ_IOC_DONE_GET, &d), 0, "requeue: done_get(done k) succeeds");
	is(d.done_result, KWQ_DONE_REQUEUED, "requeue: done_result is KWQ_DONE_REQUEUED");
	ok(d.key_len == 1 && key_is(buf, d.key_len, "k"), "requeue: it hands out k again");
	st = stats_of(fd);
	ok(st.queued == 0 && st.processing == 1 && st.dirty_processing == 0 &&
	   st.requeues == 1 && st.gets == 2, "requeue: k processing once more (stats)");
	is(done_s(fd, "k"), KWQ_DONE_FINISHED, "requeue: then done of k finishes it");
	end_queue(fd);
}

/*
 * Runs a done_get that must fail in its done part: the errno, done_result
 * KWQ_DONE_NOT_RUN, and the queue unchanged with no key handed out.
 */
static void expect_done_fails(int fd, struct kwq_ioc_done_get *d, int want, const char *name,
			      const char *what)
{
	struct kwq_stats before = stats_of(fd);

	is(raw_ioctl(fd, KWQ_IOC_DONE_GET, d), want, "done errors: %s -> %s", what, name);
	is(d->done_result, KWQ_DONE_NOT_RUN, "done errors: %s: done_result is KWQ_DONE_NOT_RUN",
	   what);
	ok(same_counts(fd, &before) && d->key_len == JUNK,
	   "done errors: %s: queue unchanged, no key handed out", what);
}

#define EXPECT_DONE_FAILS(fd, d, err, what) expect_done_fails(fd, d, -(err), #err, what)

/* 3. Errors of the done part change nothing. */
static void test_done_errors(void)
{
	int fd = new_queue("dg-doneerr"), dr = JUNK;
	long page = sysconf(_SC_PAGESIZE);
	char big[KWQ_KEY_MAX + 1], buf[16];
	struct kwq_ioc_done_get d, *ro;
	struct kwq_stats st;
	size_t len = JUNK;
	void *map;

	memset(big, 'p', sizeof(big));
	add_s(fd, "p");
	add_s(fd, "ready");
	is(get_is(fd, "p"), 0, "done errors: get p (ready stays queued)");

	dg_init(&d, "zzz", buf, sizeof(buf), KWQ_DEADLINE_NOWAIT);
	EXPECT_DONE_FAILS(fd, &d, ENOENT, "unknown key");
	dg_init(&d, "ready", buf, sizeof(buf), KWQ_DEADLINE_NOWAIT);
	EXPECT_DONE_FAILS(fd, &d, ENOENT, "a queued, not processing key");
	dg_init(&d, "p", buf, sizeof(buf), KWQ_DEADLINE_NOWAIT);
	d.done_len = 0;
	EXPECT_DONE_FAILS(fd, &d, EINVAL, "done_len 0");
	dg_init(&d, "p", buf, sizeof(buf), KWQ_DEADLINE_NOWAIT);
	d.done_ptr = (uintptr_t)big;
	d.done_len = KWQ_KEY_MAX + 1;
	EXPECT_DONE_FAILS(fd, &d, EINVAL, "done_len KWQ_KEY_MAX + 1");
	dg_init(&d, "p", buf, sizeof(buf), KWQ_DEADLINE_NOWAIT);
	d.flags = KWQ_GET_UNLEASED << 1;
	EXPECT_DONE_FAILS(fd, &d, EINVAL, "unknown flag");
	dg_init(&d, "p", buf, sizeof(buf), KWQ_DEADLINE_NOWAIT);
	d.pad = 1;
	EXPECT_DONE_FAILS(fd, &d, EINVAL, "pad != 0");
	dg_init(&d, "p", buf, sizeof(buf), KWQ_DEADLINE_NOWAIT);
	d.done_ticket = ~0ULL;
	EXPECT_DONE_FAILS(fd, &d, ENOENT, "done_ticket of no live hand-out");
	dg_init(&d, "p", buf, sizeof(buf), KWQ_DEADLINE_NOWAIT);
	d.done_ptr = 16;
	EXPECT_DONE_FAILS(fd, &d, EFAULT, "bad done_ptr");

	/* The struct itself unreadable, or readable but not writable. */
	st = stats_of(fd);
	is(raw_ioctl(fd, KWQ_IOC_DONE_GET, (void *)8), -EFAULT,
	   "done errors: unreadable struct -> EFAULT");
	ok(same_counts(fd, &st), "done errors: unreadable struct: queue unchanged");
	map = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (map == MAP_FAILED) {
		printf("Bail out! mmap: %s\n", strerror(errno));
		exit(1);
	}
	ro = map;
	dg_init(ro, "p", buf, sizeof(buf), KWQ_DEADLINE_NOWAIT);
	mprotect(map, page, PROT_READ);
	is(raw_ioctl(fd, KWQ_IOC_DONE_GET, ro), -EFAULT,
	   "done errors: read-only struct -> EFAULT (done_result cannot be written)");
	ok(same_counts(fd, &st), "done errors: read-only struct: the done was not carried out");
	munmap(map, page);

	/* libkwq: *done_result is -1 when the done did not run. */
	is(kwq_done_get(fd, "p", 0, &dr, buf, sizeof(buf), &len, 0), -EINVAL,
	   "done errors: kwq_done_get with done_len 0 -> EINVAL");
	is(dr, -1, "done errors: kwq_done_get reports done_result -1 (not run)");
	dr = JUNK;
	is(kwq_done_get(fd, "nope", 4, &dr, buf, sizeof(buf), &len, 0), -ENOENT,
	   "done errors: kwq_done_get of an unknown key -> ENOENT");
	is(dr, -1, "done errors: kwq_done_get reports done_result -1 (not run) after ENOENT");

	/* p is still processing and ready still ready. */
	st = stats_of(fd);
	ok(st.queued == 1 && st.processing == 1 && st.dones == 0 && st.gets == 1,
	   "done errors: p processing, ready queued, no done counted (stats)");
	is(done_s(fd, "p"), KWQ_DONE_FINISHED, "done errors: a plain done of p then succeeds");
	is(get_is(fd, "ready"), 0, "done errors: and ready is still ready");
	end_queue(fd);
}

/* 4. Errors of the get part, after the done was carried out. */
static void test_get_errors(void)
{
	static const char long_key[] = "a-key-of-twenty-five-byte";
	int fd = new_queue("dg-geterr");
	struct kwq_ioc_done_get d;
	struct kwq_stats st;
	char buf[KWQ_KEY_MAX];
	uint64_t t0;

	/* Nothing ready, no waiting. */
	add_s(fd, "n");
	is(get_is(fd, "n"), 0, "get errors: get n");
	dg_init(&d, "n", buf, sizeof(buf), KWQ_DEADLINE_NOWAIT);
	is(raw_ioctl(fd, KWQ_IOC_DONE_GET, &d), -EAGAIN,
	   "get errors: empty queue, KWQ_DEADLINE_NOWAIT -> EAGAIN");
	is(d.done_result, KWQ_DONE_FINISHED, "get errors: EAGAIN: done_result is FINISHED");
	is(done_s(fd, "n"), -ENOENT, "get errors: EAGAIN: n was finished (second done -> ENOENT)");
	st = stats_of(fd);
	ok(st.items == 0 && st.processing == 0 && st.dones == 1 && st.gets == 1,
	   "get errors: EAGAIN: nothing left, nothing taken (stats)");

	/* A deadline that passes. */
	add_s(fd, "t");
	is(get_is(fd, "t"), 0, "get errors: get t");
	t0 = now_ns();
	dg_init(&d, "t", buf, sizeof(buf), t0 + 50 * MS);
	is(raw_ioctl(fd, KWQ_IOC_DONE_GET, &d), -ETIMEDOUT,
	   "get errors: empty queue, deadline in 50 ms -> ETIMEDOUT");
	ok(now_ns() - t0 >= 50 * MS, "get errors: ETIMEDOUT: waited until the deadline");
	is(d.done_result, KWQ_DONE_FINISHED, "get errors: ETIMEDOUT: done_result is FINISHED");
	is(done_s(fd, "t"), -ENOENT, "get errors: ETIMEDOUT: t was finished (second done -> ENOENT)");

	/* A buffer too small for the next key. */
	add_s(fd, "m");
	add_s(fd, long_key);
	is(get_is(fd, "m"), 0, "get errors: get m");
	dg_init(&d, "m", buf, 4, KWQ_DEADLINE_NOWAIT);
	is(raw_ioctl(fd, KWQ_IOC_DONE_GET, &d), -EMSGSIZE,
	   "get errors: key_cap 4 for a 25-byte key -> EMSGSIZE");
	is(d.key_len, strlen(long_key), "get errors: EMSGSIZE: key_len is the size needed");
	is(d.done_result, KWQ_DONE_FINISHED, "get errors: EMSGSIZE: done_result is FINISHED");
	ok(buf[0] == 'X', "get errors: EMSGSIZE: nothing written to the buffer");
	st = stats_of(fd);
	ok(st.queued == 1 && st.processing == 0 && st.dones == 3 && st.gets == 3,
	   "get errors: EMSGSIZE: m finished, the long key still queued (stats)");
	is(get_is(fd, long_key), 0, "get errors: EMSGSIZE: the long key comes out next");
	done_s(fd, long_key);
	end_queue(fd);
}

/* 5. A fault on the copy out puts the key back at the head. */
static void test_get_fault(void)
{
	int fd = new_queue("dg-fault");
	struct kwq_ioc_done_get d;
	struct kwq_stats st;

	add_s(fd, "f1");
	add_s(fd, "f2");
	add_s(fd, "f3");
	is(get_is(fd, "f1"), 0, "get fault: get f1");
	dg_init(&d, "f1", NULL, 16, KWQ_DEADLINE_NOWAIT);
	d.key_ptr = 16;
	is(raw_ioctl(fd, KWQ_IOC_DONE_GET, &d), -EFAULT, "get fault: bad key_ptr -> EFAULT");
	is(d.done_result, KWQ_DONE_NOT_RUN,
	   "get fault: the buffer is checked first: done_result NOT_RUN, nothing changed");
	is(done_s(fd, "f1"), KWQ_DONE_FINISHED, "get fault: f1 was still processing");
	st = stats_of(fd);
	ok(st.queued == 2 && st.processing == 0 && st.items == 2,
	   "get fault: f2 and f3 still queued, nothing processing (stats)");
	is(get_is(fd, "f2"), 0, "get fault: a following get returns f2, at the head");
	is(get_is(fd, "f3"), 0, "get fault: then f3");
	done_s(fd, "f2");
	done_s(fd, "f3");
	is(stats_of(fd).items, 0, "get fault: nothing lost, nothing left");
	end_queue(fd);
}

/* 6. A key leased to another file of the same queue. */
static void test_other_lease(void)
{
	int fd = new_queue("dg-lease"), other = open_queue("dg-lease", O_RDWR);
	struct kwq_ioc_done_get d;
	struct kwq_stats st;
	char buf[16];

	add_s(fd, "mine");
	add_s(fd, "next");
	is(get_is(other, "mine"), 0, "lease: the other file gets mine");
	st = stats_of(fd);
	dg_init(&d, "mine", buf, sizeof(buf), KWQ_DEADLINE_NOWAIT);
	is(raw_ioctl(fd, KWQ_IOC_DONE_GET, &d), -ENOENT,
	   "lease: done_get of a key leased to another file -> ENOENT");
	is(d.done_result, KWQ_DONE_NOT_RUN, "lease: done_result is KWQ_DONE_NOT_RUN");
	ok(same_counts(fd, &st) && d.key_len == JUNK && buf[0] == 'X',
	   "lease: queue unchanged, no key handed out");
	is(done_s(other, "mine"), KWQ_DONE_FINISHED, "lease: the other file's done still works");
	is(get_is(fd, "next"), 0, "lease: next is still ready");
	done_s(fd, "next");
	close(other);
	end_queue(fd);
}

static volatile sig_atomic_t alarms;

static void on_alarm(int sig)
{
	(void)sig;
	alarms++;
}

/* 7. A signal while waiting ends the call with EINTR, even with SA_RESTART. */
static void test_signal(void)
{
	int fd = new_queue("dg-signal"), status;
	/* Repeating: a stall may spend the first tick before the wait. */
	struct itimerval it = { .it_value = { .tv_sec = 0, .tv_usec = 50000 },
				.it_interval = { .tv_sec = 0, .tv_usec = 50000 } };
	struct itimerval off = { .it_value = { 0, 0 } };
	struct kwq_ioc_done_get d;
	struct sigaction sa, old;
	struct kwq_stats st;
	char buf[16];
	uint64_t t0, waited;
	pid_t rescue;
	int ret;

	add_s(fd, "s");
	is(get_is(fd, "s"), 0, "signal: get s");
	/* If the signal does not end the wait, a key does, after 5 s. */
	rescue = fork();
	if (rescue < 0) {
		printf("Bail out! fork: %s\n", strerror(errno));
		exit(1);
	}
	if (rescue == 0) {
		int c;

		poll(NULL, 0, 5000);
		c = kwq_open("dg-signal", O_WRONLY);
		_exit(add_s(c, "rescue") == KWQ_ADD_QUEUED ? 0 : 1);
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sa.sa_flags = SA_RESTART;	/* a restartable error would restart */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, &old);
	alarms = 0;
	dg_init(&d, "s", buf, sizeof(buf), KWQ_DEADLINE_FOREVER);
	t0 = now_ns();
	setitimer(ITIMER_REAL, &it, NULL);
	ret = raw_ioctl(fd, KWQ_IOC_DONE_GET, &d);
	waited = now_ns() - t0;
	setitimer(ITIMER_REAL, &off, NULL);
	sigaction(SIGALRM, &old, NULL);
	kill(rescue, SIGKILL);
	waitpid(rescue, &status, 0);

	is(ret, -EINTR, "signal: blocking done_get with SA_RESTART -> EINTR, not restarted");
	if (ret == 0)
		printf("# took %.*s\n", (int)d.key_len, buf);
	ok(alarms >= 1 && waited >= 40 * MS,
	   "signal: it blocked until the signal (%llu ms, %d signal(s))",
	   (unsigned long long)(waited / MS), (int)alarms);
	is(d.done_result, KWQ_DONE_FINISHED, "signal: done_result shows the done happened");
	is(done_s(fd, "s"), -ENOENT, "signal: s was finished once");
	st = stats_of(fd);
	ok(st.items == 0 && st.processing == 0 && st.dones == 1 && st.gets == 1,
	   "signal: nothing taken, nothing left (stats)");
	end_queue(fd);
}

/* 8. The feature bit and the struct size. */
static void test_version(void)
{
	struct kwq_ioc_version v;
	int fd = dev_open(O_RDONLY);

	memset(&v, 0, sizeof(v));
	is(raw_ioctl(fd, KWQ_IOC_VERSION, &v), 0, "version: KWQ_IOC_VERSION succeeds");
	ok(v.features & KWQ_FEATURE_DONE_GET, "version: reports KWQ_FEATURE_DONE_GET");
	is(sizeof(struct kwq_ioc_done_get), DONE_GET_SIZE,
	   "version: sizeof(struct kwq_ioc_done_get) is %d", DONE_GET_SIZE);
	is(_IOC_SIZE(KWQ_IOC_DONE_GET), DONE_GET_SIZE,
	   "version: KWQ_IOC_DONE_GET encodes size %d", DONE_GET_SIZE);
	close(fd);
}

/* 9. Consuming needs a file opened for reading. */
static void test_write_only(void)
{
	int fd = new_queue("dg-wronly"), dr = JUNK, wfd, rfd;
	struct kwq_ioc_done_get d;
	struct kwq_stats st;
	char buf[16];
	size_t len = JUNK;

	add_s(fd, "w");
	add_s(fd, "x");
	is(get_is(fd, "w"), 0, "write-only: get w");
	wfd = open_queue("dg-wronly", O_WRONLY);
	st = stats_of(fd);
	dg_init(&d, "w", buf, sizeof(buf), KWQ_DEADLINE_NOWAIT);
	is(raw_ioctl(wfd, KWQ_IOC_DONE_GET, &d), -EBADF,
	   "write-only: done_get on an O_WRONLY fd -> EBADF");
	ok(same_counts(fd, &st) && d.key_len == JUNK, "write-only: queue unchanged");
	is(kwq_done_get(wfd, "w", 1, &dr, buf, sizeof(buf), &len, 0), -EBADF,
	   "write-only: kwq_done_get on an O_WRONLY fd -> EBADF");
	is(dr, -1, "write-only: kwq_done_get reports done_result -1 (not run)");
	ok(same_counts(fd, &st), "write-only: queue still unchanged");
	close(wfd);
	is(done_s(fd, "w"), KWQ_DONE_FINISHED, "write-only: w still processing, done succeeds");

	/* Reading is all it needs. */
	rfd = open_queue("dg-wronly", O_RDONLY);
	is(get_is(rfd, "x"), 0, "write-only: an O_RDONLY fd gets x");
	add_s(fd, "y");
	dg_init(&d, "x", buf, sizeof(buf), KWQ_DEADLINE_NOWAIT);
	is(raw_ioctl(rfd, KWQ_IOC_DONE_GET, &d), 0, "write-only: done_get on an O_RDONLY fd works");
	ok(d.done_result == KWQ_DONE_FINISHED && key_is(buf, d.key_len, "y"),
	   "write-only: it finished x and handed out y");
	close(rfd);
	end_queue(fd);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("# kwq done_get tests (%zu-bit)\n", sizeof(void *) * 8);
	test_version();
	test_happy_path();
	test_requeued();
	test_done_errors();
	test_get_errors();
	test_get_fault();
	test_other_lease();
	test_signal();
	test_write_only();
	return tap_done();
}
