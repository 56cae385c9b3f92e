// SPDX-License-Identifier: GPL-2.0
/*
 * Debounced adds (KWQ_AFTER_DEBOUNCE) through /dev/kwq, run inside the
 * guest as root and built both 64-bit and -m32 (compat_ioctl): the
 * feature bit, every refused input (and that it changed nothing, counters
 * included), a burst that runs once at its end, a key that is never
 * quiet and still runs every max wait, and the rules for a key that is
 * queued, processing or waiting for a plain deadline.
 *
 * The machine may be slow and shared: time is only ever asserted as a
 * lower bound (never handed out early) or with seconds of slack.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "libkwq.h"
#include "kwq_test_util.h"
#include "tap.h"

#define MS(x)	((int64_t)(x) * 1000000)

static int raw_after(int fd, const char *key, int64_t delay, uint32_t flags, uint64_t max_wait,
		     uint64_t reserved, uint32_t pad)
{
	struct kwq_ioc_add_after a;

	memset(&a, 0, sizeof(a));
	a.key_ptr = (uintptr_t)key;
	a.key_len = (uint32_t)strlen(key);
	a.flags = flags;
	a.delay_ns = delay;
	a.max_wait_ns = max_wait;
	a.reserved[0] = reserved;
	a.pad = pad;
	return raw_ioctl(fd, KWQ_IOC_ADD_AFTER, &a);
}

static int deb(int fd, const char *key, int64_t delay, uint64_t max_wait)
{
	return kwq_add_debounced(fd, key, strlen(key), delay, max_wait);
}

static void test_version(void)
{
	struct kwq_ioc_version v;
	int fd = dev_open(O_RDONLY);

	memset(&v, 0, sizeof(v));
	is(raw_ioctl(fd, KWQ_IOC_VERSION, &v), 0, "version");
	ok(v.features & KWQ_FEATURE_DEBOUNCE, "KWQ_FEATURE_DEBOUNCE is reported");
	close(fd);
}

static void test_invalid(void)
{
	int fd = new_queue("deb-invalid");
	struct kwq_stats st;

	/* It must still be waiting at the end, however slow the guest. */
	is(deb(fd, "w", MS(60000), MS(60000)), KWQ_ADD_WAITING, "a debounced key waits");
	add_s(fd, "q");
	st = stats_of(fd);
	is(raw_after(fd, "w", MS(10), 0, MS(20), 0, 0), -EINVAL,
	   "max_wait_ns without KWQ_AFTER_DEBOUNCE -> EINVAL");
	is(raw_after(fd, "w", 0, 0, MS(20), 0, 0), -EINVAL, "max_wait_ns on an add now -> EINVAL");
	is(raw_after(fd, "w", 0, KWQ_AFTER_DEBOUNCE, MS(20), 0, 0), -EINVAL,
	   "debounce with delay 0 -> EINVAL");
	is(raw_after(fd, "w", -MS(1), KWQ_AFTER_DEBOUNCE, MS(20), 0, 0), -EINVAL,
	   "debounce with a negative delay -> EINVAL");
	is(raw_after(fd, "w", MS(10), KWQ_AFTER_DEBOUNCE, MS(10) - 1, 0, 0), -EINVAL,
	   "max wait shorter than the delay -> EINVAL");
	is(raw_after(fd, "w", MS(10), KWQ_AFTER_DEBOUNCE, 0, 0, 0), -EINVAL,
	   "debounce with max wait 0 -> EINVAL");
	is(raw_after(fd, "w", MS(10), KWQ_AFTER_DEBOUNCE | KWQ_AFTER_REPLACE, MS(20), 0, 0),
	   -EINVAL, "debounce and replace together -> EINVAL");
	is(raw_after(fd, "w", MS(10), KWQ_AFTER_DEBOUNCE, MS(20), 1, 0), -EINVAL,
	   "debounce with reserved != 0 -> EINVAL");
	is(raw_after(fd, "w", MS(10), KWQ_AFTER_DEBOUNCE, MS(20), 0, 1), -EINVAL,
	   "debounce with pad != 0 -> EINVAL");
	is(raw_after(fd, "w", MS(10), KWQ_AFTER_DEBOUNCE | (1U << 4), MS(20), 0, 0), -EINVAL,
	   "an unknown flag beside debounce -> EINVAL");
	is(raw_after(fd, "q", 0, KWQ_AFTER_DEBOUNCE, 0, 0, 0), -EINVAL,
	   "the debounce flag on an add now -> EINVAL");
	is(kwq_add_debounced(fd, "w", 0, MS(10), MS(20)), -EINVAL, "empty key -> EINVAL");
	ok(same_stats(fd, &st), "refused calls changed nothing, counters included");
	is(kwq_cancel(fd, "w", 1), 1, "the debounced entry is still there, and cancels");
	end_queue(fd);
}

/* Many adds, each within the delay of the last: one run, a delay after the last. */
static void test_burst(void)
{
	int fd = new_queue("deb-burst");
	const int n = 40;
	int i, ret, moved = 0, sure = 0, missed = 0;
	uint64_t t, prev, last;
	struct kwq_stats st;
	char buf[16];
	size_t len = 0;

	/*
	 * A 2 s quiet time against adds every 5 ms. A stalled guest may let
	 * the deadline pass between two adds, so an add must have moved it
	 * only if it ended before the deadline the add before it set (which
	 * is at least 2 s after that add began); without a stall, all do.
	 */
	prev = now_ns();
	is(deb(fd, "k", MS(2000), MS(60000)), KWQ_ADD_WAITING, "burst: the first add waits");
	last = prev;
	for (i = 1; i < n; i++) {
		wait_ns(MS(5));
		t = now_ns();
		ret = deb(fd, "k", MS(2000), MS(60000));
		if (now_ns() < prev + MS(2000)) {
			sure++;
			missed += ret != KWQ_ADD_WAIT_MOVED;
		}
		if (ret == KWQ_ADD_WAIT_MOVED) {
			moved++;
			last = t;
		}
		prev = t;
	}
	is(missed, 0, "burst: each later add moved the deadline (%d moved, %d had to)",
	   moved, sure);
	/* Early only if the quiet time since the last move had not passed. */
	ret = kwq_get(fd, buf, sizeof(buf), &len, 0);
	ok(ret == -EAGAIN || (ret == 0 && now_ns() >= last + MS(2000)),
	   "burst: nothing ready meanwhile");
	if (ret)
		ret = kwq_get(fd, buf, sizeof(buf), &len, MS(30000));
	is(ret, 0, "burst: the key comes");
	ok(now_ns() - last >= (uint64_t)MS(2000),
	   "burst: not before the quiet time after the last add");
	is(kwq_done(fd, buf, len), KWQ_DONE_FINISHED, "burst: done");
	is(kwq_get(fd, buf, sizeof(buf), &len, MS(300)), -ETIMEDOUT, "burst: it ran once");
	st = stats_of(fd);
	is(st.gets, 1, "burst: one hand-out");
	is(st.fired, 1, "burst: one deadline fired");
	is(st.debounced, moved, "burst: stats.debounced counts the moves");
	is(st.debounce_capped, 0, "burst: nothing held at the max wait");
	is(st.retries, n, "burst: each debounced add is a retry (an add-after with a delay)");
	end_queue(fd);
}

/*
 * A key added every 20 ms with a 300 ms quiet time is never quiet; with a
 * 1 s max wait it still runs, about every second, never early: not before
 * the max wait after the add that began its burst, nor before the quiet
 * time after its last add (which a stall of the machine may make the
 * earlier of the two).
 */
static void test_never_quiet(void)
{
	int fd = new_queue("deb-noisy");
	uint64_t t, first = 0, last = 0, start = now_ns();
	uint64_t end = start + MS(4000), cap = start + MS(30000);
	int runs = 0, early = 0, refused = 0, ret;
	struct kwq_stats st;
	char buf[16];
	size_t len = 0;

	/*
	 * 4 s, and on until both checks below can hold: a stall of 300 ms
	 * ends a burst, and the guest can stall that long again and again.
	 */
	for (;;) {
		t = now_ns();
		if (t >= cap ||
		    (t >= end && runs >= 2 && stats_of(fd).debounce_capped > 0))
			break;
		ret = deb(fd, "k", MS(300), MS(1000));
		if (ret == KWQ_ADD_WAITING)
			first = t;
		if (ret == KWQ_ADD_WAITING || ret == KWQ_ADD_WAIT_MOVED || ret == KWQ_ADD_WAIT_KEPT)
			last = t;
		refused += ret < 0;
		if (kwq_get(fd, buf, sizeof(buf), &len, 0) == 0) {
			t = first + MS(1000) < last + MS(300) ? first + MS(1000) : last + MS(300);
			runs++;
			early += now_ns() < t;
			kwq_done(fd, buf, len);
		}
		wait_ns(MS(20));
	}
	is(refused, 0, "never quiet: no add refused");
	ok(runs >= 2, "never quiet: the key still ran (%d times in %llu ms, max wait 1 s)", runs,
	   (unsigned long long)((now_ns() - start) / MS(1)));
	is(early, 0, "never quiet: never before the max wait");
	st = stats_of(fd);
	ok(st.debounce_capped > 0, "never quiet: stats.debounce_capped counts held adds (%llu)",
	   (unsigned long long)st.debounce_capped);
	end_queue(fd);
}

static void test_states(void)
{
	int fd = new_queue("deb-states");
	struct kwq_stats st;
	char buf[16];
	size_t len = 0;
	uint64_t t0;

	add_s(fd, "k");
	is(deb(fd, "k", MS(50), MS(100)), KWQ_ADD_DUPLICATE, "queued: a duplicate");
	is(stats_of(fd).waiting, 0, "queued: no waiting entry");
	is(get_is(fd, "k"), 0, "queued: get");
	is(deb(fd, "k", MS(50), MS(100)), KWQ_ADD_WAITING, "processing: it waits");
	for (t0 = now_ns(); now_ns() - t0 < (uint64_t)MS(10000); wait_ns(MS(10)))
		if (stats_of(fd).dirty_processing)
			break;
	st = stats_of(fd);
	is(st.dirty_processing, 1, "processing: the deadline marked it to run again");
	is(st.waiting, 0, "processing: its entry fired");
	is(kwq_get(fd, buf, sizeof(buf), &len, 0), -EAGAIN, "processing: not handed out twice");
	is(deb(fd, "k", MS(50), MS(100)), KWQ_ADD_DUPLICATE, "processing and dirty: a duplicate");
	is(done_s(fd, "k"), KWQ_DONE_REQUEUED, "processing: done requeues it");
	is(get_is(fd, "k"), 0, "processing: then it runs again");
	is(done_s(fd, "k"), KWQ_DONE_FINISHED, "done");

	t0 = now_ns();
	/* 1 s: the debounced add must come before the plain deadline. */
	is(kwq_add_after(fd, "p", 1, MS(1000), 0), KWQ_ADD_WAITING, "plain: add-after 1 s");
	is(deb(fd, "p", MS(30000), MS(60000)), KWQ_ADD_WAIT_KEPT,
	   "plain: a later debounced deadline is not taken");
	is(kwq_get(fd, buf, sizeof(buf), &len, MS(10000)), 0,
	   "plain: the key runs at its plain deadline, long before the debounced one");
	ok(now_ns() - t0 >= (uint64_t)MS(1000), "plain: not early");
	is(done_s(fd, "p"), KWQ_DONE_FINISHED, "done");

	is(kwq_add_after(fd, "c", 1, MS(60000), 0), KWQ_ADD_WAITING, "plain: add-after 60 s");
	is(deb(fd, "c", MS(50), MS(100)), KWQ_ADD_WAIT_MOVED, "plain: brought forward");
	is(kwq_get(fd, buf, sizeof(buf), &len, MS(30000)), 0, "plain: runs at the debounced time");
	is(done_s(fd, "c"), KWQ_DONE_FINISHED, "done");

	is(deb(fd, "x", MS(60000), MS(60000)), KWQ_ADD_WAITING, "cancel: a debounced entry");
	is(kwq_cancel(fd, "x", 1), 1, "cancel removes it");
	st = stats_of(fd);
	is(st.waiting, 0, "cancel: nothing waiting");
	is(st.items, 0, "cancel: no record left");
	end_queue(fd);
}

/* Shutdown drops debounced entries like any waiting entry; adds are refused. */
static void test_shutdown(void)
{
	int fd = new_queue("deb-shutdown");
	struct kwq_stats st;

	is(deb(fd, "k", MS(60000), MS(60000)), KWQ_ADD_WAITING, "shutdown: a debounced entry");
	is(kwq_shutdown(fd), 0, "shutdown");
	st = stats_of(fd);
	is(st.waiting, 0, "shutdown: the entry is dropped");
	is(st.waits_dropped, 1, "shutdown: counted in waits_dropped");
	is(deb(fd, "k", MS(10), MS(10)), -ESHUTDOWN, "shutdown: debounced adds are refused");
	end_queue(fd);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	test_version();
	test_invalid();
	test_states();
	test_shutdown();
	test_burst();
	test_never_quiet();
	return tap_done();
}
