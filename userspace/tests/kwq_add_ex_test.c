// SPDX-License-Identifier: GPL-2.0
/*
 * KWQ_IOC_ADD_EX (struct kwq_ioc_add) through /dev/kwq, built 64-bit and
 * -m32 (compat_ioctl): the layout, that it equals KWQ_IOC_ADD,
 * KWQ_IOC_ADD_AFTER and a debounced add, and that every refused input
 * (nonzero pad, reserved, payload or priority where the queue has none,
 * unknown or misplaced flags) is -EINVAL and changes nothing, counters
 * included. The new fields of struct kwq_ioc_create and struct
 * kwq_ioc_get are checked the same way.
 */

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "libkwq.h"
#include "kwq_test_util.h"
#include "tap.h"

#define MS(x)	((int64_t)(x) * 1000000)

_Static_assert(sizeof(struct kwq_ioc_add) == 72, "kwq_ioc_add layout");
_Static_assert(offsetof(struct kwq_ioc_add, payload_ptr) == 32, "kwq_ioc_add.payload_ptr");
_Static_assert(offsetof(struct kwq_ioc_add, priority) == 44, "kwq_ioc_add.priority");
_Static_assert(offsetof(struct kwq_ioc_add, result) == 48, "kwq_ioc_add.result");
_Static_assert(offsetof(struct kwq_ioc_add, reserved) == 56, "kwq_ioc_add.reserved");
_Static_assert(sizeof(struct kwq_ioc_create) == 376, "kwq_ioc_create layout");
_Static_assert(offsetof(struct kwq_ioc_create, aging_ns) == 360, "kwq_ioc_create.aging_ns");
_Static_assert(sizeof(struct kwq_ioc_get) == 48, "kwq_ioc_get layout");
_Static_assert(offsetof(struct kwq_ioc_get, payload_len) == offsetof(struct kwq_ioc_get, pad),
	       "kwq_ioc_get.pad is payload_len");
_Static_assert(offsetof(struct kwq_ioc_get, payload_ptr) == 40, "kwq_ioc_get.payload_ptr");

/* A raw KWQ_IOC_ADD_EX: the ioctl's result, or a negative errno. */
static int add_ex(int fd, const char *key, struct kwq_ioc_add *a)
{
	int ret;

	a->key_ptr = (uintptr_t)key;
	a->key_len = (uint32_t)strlen(key);
	a->result = 0xdead;
	ret = raw_ioctl(fd, KWQ_IOC_ADD_EX, a);
	return ret ? ret : (int)a->result;
}

static int add_ex_plain(int fd, const char *key, uint32_t flags, int64_t delay, uint64_t max_wait)
{
	struct kwq_ioc_add a;

	memset(&a, 0, sizeof(a));
	a.flags = flags;
	a.delay_ns = delay;
	a.max_wait_ns = max_wait;
	return add_ex(fd, key, &a);
}

/* The same calls through ADD / ADD_AFTER and through ADD_EX give the same results. */
static void test_equals(void)
{
	int a = new_queue("addex-old"), b = new_queue("addex-new");
	struct kwq_stats sa, sb;
	char buf[16];
	size_t len;

	is(add_s(a, "k"), KWQ_ADD_QUEUED, "old: add");
	is(add_ex_plain(b, "k", 0, 0, 0), KWQ_ADD_QUEUED, "ADD_EX: add");
	is(add_s(a, "k"), KWQ_ADD_DUPLICATE, "old: add again");
	is(add_ex_plain(b, "k", 0, 0, 0), KWQ_ADD_DUPLICATE, "ADD_EX: add again is a duplicate");
	is(kwq_add_after(a, "w", 1, MS(60000), 0), KWQ_ADD_WAITING, "old: add-after");
	is(add_ex_plain(b, "w", 0, MS(60000), 0), KWQ_ADD_WAITING, "ADD_EX: a delay waits");
	is(kwq_add_after(a, "w", 1, MS(30000), 0), KWQ_ADD_WAIT_MOVED, "old: earlier deadline");
	is(add_ex_plain(b, "w", 0, MS(30000), 0), KWQ_ADD_WAIT_MOVED,
	   "ADD_EX: an earlier deadline moves");
	is(kwq_add_after(a, "w", 1, MS(50000), KWQ_AFTER_REPLACE), KWQ_ADD_WAIT_MOVED,
	   "old: replace");
	is(add_ex_plain(b, "w", KWQ_AFTER_REPLACE, MS(50000), 0), KWQ_ADD_WAIT_MOVED,
	   "ADD_EX: KWQ_AFTER_REPLACE moves it later");
	is(kwq_add_debounced(a, "d", 1, MS(60000), MS(90000)), KWQ_ADD_WAITING, "old: debounce");
	is(add_ex_plain(b, "d", KWQ_AFTER_DEBOUNCE, MS(60000), MS(90000)), KWQ_ADD_WAITING,
	   "ADD_EX: a debounced add waits");
	is(kwq_add_debounced(a, "d", 1, MS(70000), MS(90000)), KWQ_ADD_WAIT_MOVED,
	   "old: debounce again");
	is(add_ex_plain(b, "d", KWQ_AFTER_DEBOUNCE, MS(70000), MS(90000)), KWQ_ADD_WAIT_MOVED,
	   "ADD_EX: a debounced add moves the deadline later");
	is(kwq_add_policy(a, "d", 1, KWQ_POLICY_STRICT), KWQ_ADD_ABSORBED, "old: strict add");
	is(add_ex_plain(b, "d", KWQ_POLICY_STRICT, 0, 0), KWQ_ADD_ABSORBED,
	   "ADD_EX: a policy on an add now applies");
	is(kwq_add_ex(b, "n", 1, NULL), KWQ_ADD_QUEUED, "libkwq kwq_add_ex(NULL opts) adds");
	is(add_s(a, "n"), KWQ_ADD_QUEUED, "old: add n");
	len = 0;
	is(kwq_get(b, buf, sizeof(buf), &len, 0), 0, "ADD_EX: the key is handed out");
	is(kwq_add_ex(b, buf, len, NULL), KWQ_ADD_DEFERRED, "ADD_EX of a processing key: deferred");
	is(kwq_get(a, buf, sizeof(buf), &len, 0), 0, "old: get");
	is(add_s(a, "k"), KWQ_ADD_DEFERRED, "old: deferred");
	sa = stats_of(a);
	sb = stats_of(b);
	sb.unfinished_work_ns = sa.unfinished_work_ns;
	sb.longest_running_ns = sa.longest_running_ns;
	memcpy(sb.queue_latency, sa.queue_latency, sizeof(sa.queue_latency));
	sb.queue_latency_sum_ns = sa.queue_latency_sum_ns;
	ok(!memcmp(&sa, &sb, sizeof(sa)), "the two queues' counters agree");
	end_queue(a);
	end_queue(b);
}

static void test_invalid(void)
{
	int fd = new_queue("addex-invalid");
	struct kwq_ioc_add a;
	struct kwq_stats st;

	is(add_ex_plain(fd, "w", 0, MS(60000), 0), KWQ_ADD_WAITING, "a waiting key");
	add_s(fd, "q");
	st = stats_of(fd);
#define REFUSED(set, what) do {					\
		memset(&a, 0, sizeof(a));			\
		set;						\
		is(add_ex(fd, "w", &a), -EINVAL, what);		\
		is(a.result, 0xdead, what ": no result written");	\
	} while (0)
	REFUSED(a.pad = 1, "pad != 0 -> EINVAL");
	REFUSED(a.reserved[0] = 1, "reserved[0] != 0 -> EINVAL");
	REFUSED(a.reserved[1] = 1, "reserved[1] != 0 -> EINVAL");
	REFUSED(a.payload_ptr = (uintptr_t)&st, "a payload on a queue without payloads -> EINVAL");
	REFUSED(a.payload_len = 4, "a payload length on a queue without payloads -> EINVAL");
	REFUSED(a.priority = 1, "a priority on a queue without priorities -> EINVAL");
	REFUSED(a.priority = -1, "a negative priority on a plain queue -> EINVAL");
	REFUSED(a.flags = 1U << 4, "an unknown flag -> EINVAL");
	REFUSED(a.flags = 1U << 31, "the top flag bit -> EINVAL");
	REFUSED(a.flags = KWQ_AFTER_REPLACE, "KWQ_AFTER_REPLACE on an add now -> EINVAL");
	REFUSED((a.flags = KWQ_AFTER_DEBOUNCE, a.max_wait_ns = 1),
		"KWQ_AFTER_DEBOUNCE on an add now -> EINVAL");
	REFUSED(a.max_wait_ns = 1, "max_wait_ns on an add now -> EINVAL");
	REFUSED((a.delay_ns = MS(10), a.max_wait_ns = MS(20)),
		"max_wait_ns without KWQ_AFTER_DEBOUNCE -> EINVAL");
	REFUSED((a.delay_ns = MS(10), a.flags = KWQ_AFTER_DEBOUNCE, a.max_wait_ns = MS(5)),
		"max wait shorter than the delay -> EINVAL");
	REFUSED((a.delay_ns = MS(10), a.flags = KWQ_POLICY_STRICT),
		"a policy on a delayed add -> EINVAL");
	REFUSED((a.delay_ns = MS(10), a.flags = KWQ_AFTER_REPLACE | KWQ_AFTER_DEBOUNCE,
		 a.max_wait_ns = MS(20)), "replace and debounce together -> EINVAL");
#undef REFUSED
	memset(&a, 0, sizeof(a));
	a.key_len = 0;
	a.result = 0xdead;
	is(raw_ioctl(fd, KWQ_IOC_ADD_EX, &a), -EINVAL, "an empty key -> EINVAL");
	a.key_ptr = 8;
	a.key_len = 3;
	is(raw_ioctl(fd, KWQ_IOC_ADD_EX, &a), -EFAULT, "an unreadable key -> EFAULT");
	ok(same_stats(fd, &st), "refused calls changed nothing, counters included");
	is(kwq_cancel(fd, "w", 1), 1, "the waiting entry is still there");
	end_queue(fd);
}

/* The fields struct kwq_ioc_create and struct kwq_ioc_get gained are still reserved here. */
static void test_new_fields(void)
{
	struct kwq_ioc_create c;
	struct kwq_ioc_get g;
	struct kwq_stats st;
	char buf[16];
	int fd;

	memset(&c, 0, sizeof(c));
	strcpy((char *)c.name, "addex-create");
	c.mode = 0600;
	c.pad2 = 1;
	is(kwq_create_ex(&c), -EINVAL, "create: pad2 != 0 -> EINVAL");
	c.pad2 = 0;
	c.aging_ns = 1;
	is(kwq_create_ex(&c), -EINVAL, "create: aging_ns without KWQ_CREATE_PRIORITY -> EINVAL");
	c.aging_ns = 0;
	c.reserved[0] = 1;
	is(kwq_create_ex(&c), -EINVAL, "create: reserved != 0 -> EINVAL");
	c.reserved[0] = 0;
	fd = kwq_create_ex(&c);
	ok(fd >= 0, "create with the new fields 0 works");
	if (fd < 0)
		return;
	add_s(fd, "k");
	st = stats_of(fd);
	memset(&g, 0, sizeof(g));
	g.key_ptr = (uintptr_t)buf;
	g.key_cap = sizeof(buf);
	g.payload_len = 1;
	is(raw_ioctl(fd, KWQ_IOC_GET, &g), -EINVAL, "get: payload_len without payload_ptr -> EINVAL");
	ok(same_stats(fd, &st), "refused gets changed nothing");
	g.payload_len = 0;
	is(raw_ioctl(fd, KWQ_IOC_GET, &g), 0, "get with the new fields 0 works");
	end_queue(fd);
}

static void test_access(void)
{
	int fd = new_queue("addex-access"), ro;

	ro = kwq_open("addex-access", O_RDONLY);
	ok(ro >= 0, "open read-only");
	is(add_ex_plain(ro, "k", 0, 0, 0), -EBADF, "ADD_EX needs the write right");
	is(stats_of(fd).adds, 0, "nothing was added");
	close(ro);
	end_queue(fd);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	test_equals();
	test_invalid();
	test_new_fields();
	test_access();
	return tap_done();
}
