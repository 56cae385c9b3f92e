// SPDX-License-Identifier: GPL-2.0
/*
 * End-to-end tests of /dev/kwq, run inside the guest as root. Each error
 * case asserts the errno and that the queue did not change. Built both
 * 64-bit and -m32 (the 32-bit build goes through compat_ioctl).
 */

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
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

/* The ABI structs must have one layout for 32- and 64-bit callers. */
_Static_assert(sizeof(struct kwq_ioc_version) == 56, "kwq_ioc_version layout");
_Static_assert(sizeof(struct kwq_ioc_create) == 376, "kwq_ioc_create layout");
_Static_assert(sizeof(struct kwq_ioc_open) == 88, "kwq_ioc_open layout");
_Static_assert(sizeof(struct kwq_ioc_key) == 40, "kwq_ioc_key layout");
_Static_assert(sizeof(struct kwq_ioc_get) == 48, "kwq_ioc_get layout");
_Static_assert(sizeof(struct kwq_ioc_drain) == 16, "kwq_ioc_drain layout");
_Static_assert(sizeof(struct kwq_ioc_add_after) == 48, "kwq_ioc_add_after layout");
_Static_assert(sizeof(struct kwq_stats) == 440, "kwq_stats layout");
_Static_assert(sizeof(struct kwq_batch_entry) == 16, "kwq_batch_entry layout");
_Static_assert(sizeof(struct kwq_ioc_batch) == 48, "kwq_ioc_batch layout");
_Static_assert(sizeof(struct kwq_ioc_scope_limits) == 32, "kwq_ioc_scope_limits layout");
_Static_assert(sizeof(struct kwq_queue_info) == 96, "kwq_queue_info layout");
_Static_assert(sizeof(struct kwq_ioc_list_all) == 40, "kwq_ioc_list_all layout");
_Static_assert(sizeof(struct kwq_ioc_destroy_in) == 96, "kwq_ioc_destroy_in layout");
_Static_assert(sizeof(struct kwq_ioc_list) == 40, "kwq_ioc_list layout");
_Static_assert(sizeof(struct kwq_limiter) == 56, "kwq_limiter layout");
_Static_assert(sizeof(struct kwq_ratelimit) == 256, "kwq_ratelimit layout");
_Static_assert(__alignof__(struct kwq_ioc_key) == 8 || sizeof(void *) == 4,
	       "kwq_ioc_key alignment");

/* Queue counts as one comparable number set. */
static int same_counts(int fd, const struct kwq_stats *before)
{
	struct kwq_stats now = stats_of(fd);

	return now.queued == before->queued && now.processing == before->processing &&
	       now.items == before->items && now.adds == before->adds &&
	       now.gets == before->gets && now.dones == before->dones;
}

static void test_version(void)
{
	struct kwq_ioc_version v;
	int fd = dev_open(O_RDONLY);

	memset(&v, 0, sizeof(v));
	is(raw_ioctl(fd, KWQ_IOC_VERSION, &v), 0, "version succeeds");
	is(v.abi_version, KWQ_ABI_VERSION, "abi version");
	is(v.key_max, KWQ_KEY_MAX, "key_max");
	is(v.name_max, KWQ_NAME_MAX, "name_max");
	ok(v.features & KWQ_FEATURE_CORE, "core feature bit");
	memset(&v, 0, sizeof(v));
	v.flags = 1;
	is(raw_ioctl(fd, KWQ_IOC_VERSION, &v), -EINVAL, "version: unknown flag -> EINVAL");
	memset(&v, 0, sizeof(v));
	v.reserved[3] = 1;
	is(raw_ioctl(fd, KWQ_IOC_VERSION, &v), -EINVAL, "version: reserved != 0 -> EINVAL");
	is(raw_ioctl(fd, KWQ_IOC_VERSION, NULL), -EFAULT, "version: NULL -> EFAULT");
	close(fd);
}

static void test_unknown_and_detached(void)
{
	int fd = dev_open(O_RDWR);
	struct kwq_stats st = { .size = sizeof(st) };
	char junk[64] = { 0 };

	is(raw_ioctl(fd, _IOWR(KWQ_IOC_MAGIC, 0x7f, struct kwq_ioc_key), junk), -ENOTTY,
	   "unknown command number -> ENOTTY");
	is(raw_ioctl(fd, _IOWR('k', 0x10, struct kwq_ioc_key), junk), -ENOTTY,
	   "foreign magic -> ENOTTY");
	is(raw_ioctl(fd, _IOR(KWQ_IOC_MAGIC, 0x10, struct kwq_ioc_key), junk), -ENOTTY,
	   "right number, wrong direction -> ENOTTY");
	is(raw_ioctl(fd, KWQ_IOC_STATS, &st), -EBADFD, "queue op on detached fd -> EBADFD");
	is(kwq_add(fd, "a", 1), -EBADFD, "add on detached fd -> EBADFD");
	close(fd);
}

static void test_create_validation(void)
{
	struct kwq_ioc_create c;
	int fd = dev_open(O_RDWR), fd2;

#define CREATE_EXPECT(field_setup, want, what) do {		\
		memset(&c, 0, sizeof(c));			\
		strcpy((char *)c.name, "abi-create");		\
		c.mode = 0600;					\
		field_setup;					\
		is(raw_ioctl(fd, KWQ_IOC_CREATE, &c), want, what); \
	} while (0)

	CREATE_EXPECT(c.name[0] = 0, -EINVAL, "create: empty name -> EINVAL");
	CREATE_EXPECT(strcpy((char *)c.name, "a/b"), -EINVAL, "create: '/' in name -> EINVAL");
	CREATE_EXPECT(strcpy((char *)c.name, ".x"), -EINVAL, "create: leading dot -> EINVAL");
	CREATE_EXPECT(memset(c.name, 'x', KWQ_NAME_MAX), -EINVAL,
		      "create: unterminated name -> EINVAL");
	CREATE_EXPECT(c.flags = 1U << 7, -EINVAL, "create: unknown flag -> EINVAL");
	CREATE_EXPECT(c.policy = 4, -EINVAL, "create: unknown policy -> EINVAL");
	CREATE_EXPECT(c.mode = 01000, -EINVAL, "create: mode beyond 0777 -> EINVAL");
	CREATE_EXPECT(c.reserved[0] = 1, -EINVAL, "create: reserved != 0 -> EINVAL");
	is(raw_ioctl(fd, KWQ_IOC_CREATE, (void *)8), -EFAULT, "create: bad pointer -> EFAULT");
	is(kwq_open("abi-create", O_RDWR), -ENOENT, "nothing was created by the failures");
	CREATE_EXPECT((void)0, 0, "create: valid");
	CREATE_EXPECT((void)0, -EBUSY, "create on an attached fd -> EBUSY");
	fd2 = dev_open(O_RDWR);
	memset(&c, 0, sizeof(c));
	strcpy((char *)c.name, "abi-create");
	is(raw_ioctl(fd2, KWQ_IOC_CREATE, &c), -EEXIST, "create: name taken -> EEXIST");
	close(fd2);
	is(kwq_destroy(fd), 0, "destroy by owner");
	close(fd);
	is(kwq_open("abi-create", O_RDWR), -ENOENT, "destroyed queue cannot be opened");
#undef CREATE_EXPECT
}

static void test_open_and_share(void)
{
	int prod = kwq_create("abi-share", 0660, 0);
	int cons = kwq_open("abi-share", O_RDWR);
	struct kwq_ioc_open o;
	int fd;

	ok(prod >= 0 && cons >= 0, "create and open by name");
	is(kwq_open("abi-missing", O_RDWR), -ENOENT, "open missing -> ENOENT");
	is(kwq_open("bad name", O_RDWR), -EINVAL, "open bad name -> EINVAL");
	fd = dev_open(O_RDWR);
	memset(&o, 0, sizeof(o));
	strcpy((char *)o.name, "abi-share");
	o.reserved[1] = 7;
	is(raw_ioctl(fd, KWQ_IOC_OPEN, &o), -EINVAL, "open: reserved != 0 -> EINVAL");
	o.reserved[1] = 0;
	is(raw_ioctl(fd, KWQ_IOC_OPEN, &o), 0, "open: valid");
	is(raw_ioctl(fd, KWQ_IOC_OPEN, &o), -EBUSY, "open on an attached fd -> EBUSY");
	close(fd);

	is(add_s(prod, "ns/a"), KWQ_ADD_QUEUED, "add on producer fd");
	is(kwq_len(cons), 1, "consumer fd sees the key");
	is(get_is(cons, "ns/a"), 0, "consumer gets it");
	is(done_s(prod, "ns/a"), -ENOENT, "the key is leased to the consumer's fd");
	is(done_s(cons, "ns/a"), KWQ_DONE_FINISHED, "done through the consumer's fd");
	kwq_destroy(prod);
	is(add_s(cons, "x"), -EIDRM, "other fd after destroy -> EIDRM");
	is(kwq_get(cons, NULL, 0, NULL, -1), -EIDRM, "blocking get after destroy -> EIDRM");
	is(done_s(cons, "x"), -EIDRM, "done after destroy -> EIDRM");
	is(kwq_shutdown_drain(cons, 0, 0), -EIDRM, "drain after destroy -> EIDRM");
	ok(stats_of(cons).state & KWQ_STATE_DESTROYED, "stats still answer: state destroyed");
	{
		struct pollfd p = { .fd = cons, .events = POLLIN };

		is(poll(&p, 1, 0), 1, "poll after destroy: readable, a get no longer blocks");
		ok(p.revents & POLLIN, "... with POLLIN");
	}
	is(kwq_shutdown(cons), 0, "shutdown after destroy does nothing: 0");
	is(kwq_destroy(cons), 0, "a second destroy does nothing: 0");
	close(prod);
	close(cons);
}

static void test_semantics(void)
{
	int fd = kwq_create("abi-sem", 0600, 0);
	struct kwq_stats st;

	is(add_s(fd, "a"), KWQ_ADD_QUEUED, "add: queued");
	is(add_s(fd, "a"), KWQ_ADD_DUPLICATE, "add again: duplicate");
	is(add_s(fd, "b"), KWQ_ADD_QUEUED, "add b");
	is(kwq_len(fd), 2, "len counts distinct keys");
	is(get_is(fd, "a"), 0, "FIFO: a first");
	is(add_s(fd, "a"), KWQ_ADD_DEFERRED, "add while processing: deferred");
	is(kwq_len(fd), 1, "deferred key is not in len");
	st = stats_of(fd);
	is(st.dirty_processing, 1, "stats: one dirty-while-processing");
	is(done_s(fd, "b"), -ENOENT, "done of a queued key -> ENOENT");
	is(done_s(fd, "zzz"), -ENOENT, "done of an unknown key -> ENOENT");
	ok(same_counts(fd, &st), "failed dones changed nothing");
	is(done_s(fd, "a"), KWQ_DONE_REQUEUED, "done requeues the dirty key");
	is(get_is(fd, "b"), 0, "then b");
	is(get_is(fd, "a"), 0, "then a again");
	is(done_s(fd, "a"), KWQ_DONE_FINISHED, "done a");
	is(done_s(fd, "b"), KWQ_DONE_FINISHED, "done b");
	st = stats_of(fd);
	is(st.items, 0, "no records left");
	is(st.adds, 3, "adds counted");
	is(st.dedups, 1, "dedups counted");
	kwq_destroy(fd);
	close(fd);
}

static void test_key_errors(void)
{
	int fd = kwq_create("abi-keys", 0600, 0);
	char big[KWQ_KEY_MAX + 1], out[8];
	struct kwq_ioc_key k;
	struct kwq_ioc_get g;
	struct kwq_stats st;
	size_t len = 0;

	memset(big, 'k', sizeof(big));
	add_s(fd, "seed");
	st = stats_of(fd);
	is(kwq_add(fd, big, 0), -EINVAL, "empty key -> EINVAL");
	is(kwq_add(fd, big, KWQ_KEY_MAX + 1), -EINVAL, "key too long -> EINVAL");
	memset(&k, 0, sizeof(k));
	k.key_ptr = 16;
	k.key_len = 4;
	is(raw_ioctl(fd, KWQ_IOC_ADD, &k), -EFAULT, "add: bad key pointer -> EFAULT");
	k.key_ptr = (uintptr_t)"abcd";
	k.flags = 4;
	is(raw_ioctl(fd, KWQ_IOC_ADD, &k), -EINVAL, "add: unknown flag -> EINVAL");
	k.flags = 0;
	k.reserved[0] = 1;
	is(raw_ioctl(fd, KWQ_IOC_ADD, &k), -EINVAL, "add: reserved != 0 -> EINVAL");
	ok(same_counts(fd, &st), "failed adds changed nothing");
	is(kwq_add(fd, big, KWQ_KEY_MAX), KWQ_ADD_QUEUED, "key of KWQ_KEY_MAX bytes");

	/* Get into a buffer that faults: the key goes back to the head. */
	st = stats_of(fd);
	memset(&g, 0, sizeof(g));
	g.key_ptr = 16;
	g.key_cap = 8;
	is(raw_ioctl(fd, KWQ_IOC_GET, &g), -EFAULT, "get: bad buffer -> EFAULT");
	ok(stats_of(fd).queued == st.queued && stats_of(fd).processing == 0,
	   "key given back after EFAULT");
	is(get_is(fd, "seed"), 0, "the given-back key comes out first");
	is(kwq_get(fd, out, sizeof(out), &len, 0), -EMSGSIZE, "small buffer -> EMSGSIZE");
	is(len, KWQ_KEY_MAX, "EMSGSIZE reports the size needed");
	is(kwq_len(fd), 1, "key still queued after EMSGSIZE");
	memset(&g, 0, sizeof(g));
	g.key_ptr = (uintptr_t)big;
	g.key_cap = sizeof(big);
	g.pad = 1;
	is(raw_ioctl(fd, KWQ_IOC_GET, &g), -EINVAL, "get: pad != 0 -> EINVAL");
	kwq_destroy(fd);
	close(fd);
}

static void on_alarm(int sig)
{
	(void)sig;
}

static void test_blocking(void)
{
	int fd = kwq_create("abi-block", 0600, 0), nb;
	/* Repeating: a stall may spend the first tick before the get blocks. */
	struct itimerval it = { .it_value = { 1, 0 }, .it_interval = { 1, 0 } };
	struct itimerval off = { .it_value = { 0, 0 } };
	struct sigaction sa;
	char buf[16];
	size_t len = 0;
	uint64_t t0;
	pid_t pid;
	int ret;

	is(kwq_get(fd, buf, sizeof(buf), NULL, 0), -EAGAIN, "empty, no wait -> EAGAIN");
	t0 = now_ns();
	is(kwq_get(fd, buf, sizeof(buf), NULL, 50000000), -ETIMEDOUT, "empty, 50 ms -> ETIMEDOUT");
	ok(now_ns() - t0 >= 50000000, "waited at least until the deadline");
	nb = kwq_open("abi-block", O_RDWR | O_NONBLOCK);
	is(kwq_get(nb, buf, sizeof(buf), NULL, -1), -EAGAIN, "O_NONBLOCK fd never blocks");
	close(nb);

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;	/* no SA_RESTART: the wait ends with EINTR */
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
	is(kwq_get(fd, buf, sizeof(buf), NULL, -1), -EINTR, "signal interrupts a blocking get");
	setitimer(ITIMER_REAL, &off, NULL);

	pid = fork();
	if (pid == 0) {
		int c = kwq_open("abi-block", O_WRONLY);

		usleep(100000);
		_exit(add_s(c, "late") == KWQ_ADD_QUEUED ? 0 : 1);
	}
	ret = kwq_get(fd, buf, sizeof(buf) - 1, &len, 5000000000LL);
	buf[ret ? 0 : len] = '\0';
	is(ret, 0, "blocking get returns the key another process adds");
	ok(!strcmp(buf, "late"), "and it is that key");
	waitpid(pid, NULL, 0);
	kwq_destroy(fd);
	close(fd);
}

static void test_poll(void)
{
	int fd = kwq_create("abi-poll", 0600, 0);
	struct pollfd p = { .fd = fd, .events = POLLIN };

	is(poll(&p, 1, 0), 0, "poll: empty queue is not readable");
	add_s(fd, "p");
	is(poll(&p, 1, 1000), 1, "poll: readable after an add");
	ok(p.revents & POLLIN, "poll: POLLIN set");
	is(get_is(fd, "p"), 0, "get after poll");
	kwq_shutdown(fd);
	is(poll(&p, 1, 0), 0, "poll: not readable after shutdown while p, which may come back, is processing");
	is(done_s(fd, "p"), KWQ_DONE_FINISHED, "poll: p done");
	is(poll(&p, 1, 1000), 1, "poll: readable once shut down and empty");
	kwq_destroy(fd);
	close(fd);
}

static void test_shutdown_and_drain(void)
{
	int fd = kwq_create("abi-drain", 0600, 0);
	char buf[16];
	pid_t pid;

	add_s(fd, "a");
	add_s(fd, "b");
	/* Unleased: the child process finishes it. */
	is(kwq_get_flags(fd, buf, sizeof(buf), NULL, 0, KWQ_GET_UNLEASED), 0,
	   "take a before draining");
	pid = fork();
	if (pid == 0) {
		int c = kwq_open("abi-drain", O_RDWR);

		usleep(100000);
		done_s(c, "a");
		if (get_is(c, "b"))
			_exit(1);
		usleep(50000);
		_exit(done_s(c, "b") == KWQ_DONE_FINISHED ? 0 : 1);
	}
	is(kwq_shutdown_drain(fd, 10000000000LL, 0), 0, "drain waits for processing and queued keys");
	waitpid(pid, NULL, 0);
	is(kwq_shutting_down(fd), 1, "shutting down after drain");
	is(add_s(fd, "c"), -ESHUTDOWN, "add after shutdown -> ESHUTDOWN");
	is(kwq_get(fd, buf, sizeof(buf), NULL, -1), -ESHUTDOWN, "get after shutdown, empty -> ESHUTDOWN");
	is(kwq_shutdown_drain(fd, 0, 0), 0, "drain of an idle queue returns at once");
	kwq_destroy(fd);
	close(fd);
}

static void test_permissions(void)
{
	int fd = kwq_create("abi-perm", 0640, 0);
	int ro = kwq_open("abi-perm", O_RDONLY);
	int status = -1;
	pid_t pid;

	is(add_s(ro, "x"), -EBADF, "add on a read-only fd -> EBADF");
	pid = fork();
	if (pid == 0) {
		int c;

		if (setgid(65534) || setuid(65534))
			_exit(10);
		c = kwq_open("abi-perm", O_RDONLY);
		if (c != -EACCES)
			_exit(11);
		c = kwq_create("abi-perm-nobody", 0666, 0);
		if (c < 0)
			_exit(12);
		_exit(0);
	}
	waitpid(pid, &status, 0);
	is(WIFEXITED(status) ? WEXITSTATUS(status) : -1, 0,
	   "other user: no access to a 0640 queue, may create its own");
	close(ro);
	ro = kwq_open("abi-perm-nobody", O_RDWR);
	ok(ro >= 0, "root opens the other user's queue");
	pid = fork();
	if (pid == 0) {
		int c;

		if (setgid(65533) || setuid(65533))
			_exit(10);
		c = kwq_open("abi-perm-nobody", O_RDWR);
		_exit(c >= 0 && kwq_destroy(c) == -EPERM && kwq_shutdown(c) == -EPERM ? 0 : 11);
	}
	waitpid(pid, &status, 0);
	is(WIFEXITED(status) ? WEXITSTATUS(status) : -1, 0,
	   "non-owner destroy and shutdown -> EPERM");
	kwq_destroy(ro);
	close(ro);
	kwq_destroy(fd);
	close(fd);
}

static int all_zero(const void *p, size_t n)
{
	const unsigned char *b = p;

	while (n--)
		if (*b++)
			return 0;
	return 1;
}

static void test_stats_size(void)
{
	int fd = kwq_create("abi-stats", 0600, 0);
	struct kwq_stats st;

	struct {
		struct kwq_stats st;
		uint64_t future[8];
	} big;

	memset(&st, 0, sizeof(st));
	is(raw_ioctl(fd, KWQ_IOC_STATS_SIZE(4), &st), -EINVAL, "stats: size 4 -> EINVAL");
	is(raw_ioctl(fd, KWQ_IOC_STATS_SIZE(4097), &st), -EINVAL, "stats: size 4097 -> EINVAL");
	add_s(fd, "s");
	memset(&st, 0xaa, sizeof(st));
	is(raw_ioctl(fd, KWQ_IOC_STATS_SIZE(16), &st), 0, "stats: older, shorter struct");
	is(st.size, 16, "stats: kernel wrote only the prefix asked for");
	is(st.queued, 1, "stats: prefix is filled");
	ok(st.processing == 0xaaaaaaaaaaaaaaaaULL, "stats: bytes past the prefix untouched");
	memset(&big, 0xaa, sizeof(big));
	big.st.size = 3;	/* ignored: the command's size decides */
	is(raw_ioctl(fd, KWQ_IOC_STATS_SIZE(sizeof(big)), &big), 0, "stats: newer, longer struct");
	/*
	 * The kernel's struct: this header's, or the longer one of a later
	 * module (kwq_stats grows at its end); this program must keep
	 * passing against those.
	 */
	ok(big.st.size >= sizeof(st) && big.st.size <= sizeof(big) && big.st.size % 8 == 0,
	   "stats: kernel says how much it filled (%u bytes, this header's struct %zu)",
	   big.st.size, sizeof(st));
	is(big.st.queued, 1, "stats: longer struct is filled");
	ok(big.st.size <= sizeof(big) &&
	   all_zero((char *)&big + big.st.size, sizeof(big) - big.st.size),
	   "stats: the bytes past the kernel's struct are zeroed");
	memset(&st, 0, sizeof(st));
	st.size = 8;	/* ignored as well */
	is(raw_ioctl(fd, KWQ_IOC_STATS, &st), 0, "stats: today's struct");
	is(st.size, sizeof(st), "stats: filled whole whatever the size field said");
	kwq_destroy(fd);
	close(fd);
}

static void test_delays(void)
{
	int fd = kwq_create("abi-delay", 0600, 0);
	struct kwq_ioc_add_after a;
	struct kwq_ioc_key k;
	struct kwq_stats st;
	char buf[16];
	size_t len = 0;
	uint64_t t0;

	/* Deadlines of 1 s and more: a loaded guest can stall between calls. */
	t0 = now_ns();
	is(kwq_add_after(fd, "d", 1, 1000000000, 0), KWQ_ADD_WAITING, "add-after: waiting");
	is(kwq_add_after(fd, "d", 1, 10000000000LL, 0), KWQ_ADD_WAIT_KEPT, "later deadline: kept");
	is(kwq_get(fd, buf, sizeof(buf), &len, 0), -EAGAIN, "not ready before its deadline");
	is(stats_of(fd).waiting, 1, "stats: one waiting");
	is(kwq_get(fd, buf, sizeof(buf), &len, 10000000000LL), 0, "ready after its deadline");
	ok(now_ns() - t0 >= 1000000000, "not handed out early");
	done_s(fd, "d");

	is(kwq_add_after(fd, "r", 1, 1000000000, 0), KWQ_ADD_WAITING, "add-after r");
	is(kwq_add_after(fd, "r", 1, 3600000000000LL, KWQ_AFTER_REPLACE), KWQ_ADD_WAIT_MOVED,
	   "replace postpones");
	is(kwq_get(fd, buf, sizeof(buf), &len, 1200000000), -ETIMEDOUT,
	   "postponed key not ready at the old deadline");
	is(kwq_cancel(fd, "r", 1), 1, "cancel: removed");
	is(kwq_cancel(fd, "r", 1), 0, "cancel again: nothing to remove");
	st = stats_of(fd);
	is(st.waiting, 0, "nothing waiting after cancel");
	is(st.items, 0, "no record left after cancel");

	is(kwq_add_after(fd, "n", 1, 0, 0), KWQ_ADD_QUEUED, "add-after 0 is an add");
	is(kwq_add_after(fd, "n", 1, -1, 0), KWQ_ADD_DUPLICATE, "negative delay is an add");
	is(get_is(fd, "n"), 0, "and it is ready");
	done_s(fd, "n");

	/* Policies: the default promotes, a call may ask for strict. */
	kwq_add_after(fd, "p", 1, 3600000000000LL, 0);
	is(kwq_add_policy(fd, "p", 1, KWQ_POLICY_STRICT), KWQ_ADD_ABSORBED, "strict add absorbed");
	is(kwq_len(fd), 0, "absorbed key not queued");
	is(add_s(fd, "p"), KWQ_ADD_QUEUED, "default policy promotes");
	is(stats_of(fd).waiting, 0, "promoted key no longer waits");
	is(get_is(fd, "p"), 0, "promoted key ready");
	done_s(fd, "p");

	/* A key both queued and waiting: a duplicate under every policy; promote drops the wait. */
	add_s(fd, "q");
	is(kwq_add_after(fd, "q", 1, 3600000000000LL, 0), KWQ_ADD_WAITING, "a queued key also waits");
	st = stats_of(fd);
	is(kwq_add_policy(fd, "q", 1, KWQ_POLICY_STRICT), KWQ_ADD_DUPLICATE, "strict: duplicate");
	is(kwq_add_policy(fd, "q", 1, KWQ_POLICY_KEEP), KWQ_ADD_DUPLICATE, "keep: duplicate");
	is(stats_of(fd).waiting, 1, "... and the key still waits");
	is(add_s(fd, "q"), KWQ_ADD_DUPLICATE, "promote: duplicate");
	is(stats_of(fd).waiting, 0, "... and its waiting entry is dropped");
	is(stats_of(fd).waits_dropped, st.waits_dropped + 1, "... counted in waits_dropped");
	is(stats_of(fd).dedups, st.dedups + 3, "three duplicates counted");
	is(get_is(fd, "q"), 0, "the key comes once");
	done_s(fd, "q");

	st = stats_of(fd);
	memset(&a, 0, sizeof(a));
	a.key_ptr = (uintptr_t)"e";
	a.key_len = 1;
	a.delay_ns = 1000;
	a.flags = 1U << 9;
	is(raw_ioctl(fd, KWQ_IOC_ADD_AFTER, &a), -EINVAL, "add-after: unknown flag -> EINVAL");
	a.flags = 0;
	a.pad = 1;
	is(raw_ioctl(fd, KWQ_IOC_ADD_AFTER, &a), -EINVAL, "add-after: pad != 0 -> EINVAL");
	a.pad = 0;
	a.key_len = 0;
	is(raw_ioctl(fd, KWQ_IOC_ADD_AFTER, &a), -EINVAL, "add-after: empty key -> EINVAL");
	memset(&k, 0, sizeof(k));
	k.key_ptr = (uintptr_t)"e";
	k.key_len = 1;
	k.flags = KWQ_AFTER_REPLACE;
	is(raw_ioctl(fd, KWQ_IOC_ADD, &k), -EINVAL, "add: add-after flag on add -> EINVAL");
	k.flags = 1;
	is(raw_ioctl(fd, KWQ_IOC_CANCEL, &k), -EINVAL, "cancel: flags != 0 -> EINVAL");
	ok(same_counts(fd, &st) && stats_of(fd).waiting == 0, "rejected calls changed nothing");

	/* Drain: by default waiting keys are dropped; with flush they run. */
	kwq_add_after(fd, "f", 1, 3600000000000LL, 0);
	st = stats_of(fd);
	is(kwq_shutdown_drain(fd, 0, KWQ_DRAIN_FLUSH_WAITING), -ETIMEDOUT,
	   "flush-drain queues the waiting key (and has work left)");
	is(stats_of(fd).fired, st.fired + 1, "the flushed entry counts in fired");
	is(get_is(fd, "f"), 0, "flushed key ready at once");
	/* An O_NONBLOCK file does not wait either: -ETIMEDOUT, never -EAGAIN. */
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	is(kwq_shutdown_drain(fd, -1, 0), -ETIMEDOUT,
	   "drain without a timeout on an O_NONBLOCK file, a key processing -> ETIMEDOUT at once");
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	done_s(fd, "f");
	is(kwq_shutdown_drain(fd, 1000000000, 0), 0, "drained");
	is(kwq_add_after(fd, "g", 1, 1000, 0), -ESHUTDOWN, "add-after after shutdown -> ESHUTDOWN");
	kwq_destroy(fd);
	close(fd);
}

/*
 * Many keys waiting (Documentation/kwq-delays.rst: past 1,024, deadlines
 * 17 s to 2.4 h ahead wait in far slots): they come in deadline order,
 * a cancel or an earlier deadline takes a key out of its slot, and the
 * timer still serves a near deadline among them.
 */
#define FAR_KEYS 1100

static void test_many_waiting(void)
{
	int fd = kwq_create("abi-far", 0600, 0), i, bad = 0, waiting = 0;
	char key[16], want[16], buf[16];
	size_t len = 0;

	/* Each key a second earlier than the one before: the reverse order. */
	for (i = 0; i < FAR_KEYS; i++) {
		snprintf(key, sizeof(key), "f%04d", i);
		bad += kwq_add_after(fd, key, strlen(key),
				     3600000000000LL - (int64_t)i * 1000000000LL, 0) != KWQ_ADD_WAITING;
	}
	is(bad, 0, "%d add-afters 1 h ahead: each waiting", FAR_KEYS);
	for (i = 0; i < FAR_KEYS; i += 10) {
		snprintf(key, sizeof(key), "f%04d", i);
		bad += kwq_cancel(fd, key, strlen(key)) != 1;
	}
	is(bad, 0, "every tenth cancelled");
	is(stats_of(fd).waiting, FAR_KEYS - FAR_KEYS / 10, "stats: the rest waiting");
	is(kwq_add_after(fd, "f0005", 5, 100000000, 0), KWQ_ADD_WAIT_MOVED,
	   "a key moved 100 ms ahead");
	is(kwq_add_after(fd, "near", 4, 200000000, 0), KWQ_ADD_WAITING, "a new key 200 ms ahead");
	is(kwq_get(fd, buf, sizeof(buf), &len, 10000000000LL), 0, "the moved key comes");
	ok(len == 5 && !memcmp(buf, "f0005", 5), "first the moved key");
	done_s(fd, "f0005");
	is(kwq_get(fd, buf, sizeof(buf), &len, 10000000000LL), 0, "the near key comes");
	ok(len == 4 && !memcmp(buf, "near", 4), "then the near key");
	done_s(fd, "near");
	is(kwq_get(fd, buf, sizeof(buf), &len, 0), -EAGAIN, "nothing else is due");
	is(kwq_shutdown_drain(fd, 0, KWQ_DRAIN_FLUSH_WAITING), -ETIMEDOUT,
	   "flush-drain queues the waiting keys");
	for (i = FAR_KEYS - 1; i >= 0; i--) {
		if (i % 10 == 0 || i == 5)
			continue;
		snprintf(want, sizeof(want), "f%04d", i);
		bad += get_is(fd, want) != 0;
		bad += done_s(fd, want) != KWQ_DONE_FINISHED;
		waiting++;
	}
	is(bad, 0, "the %d flushed keys come earliest deadline first", waiting);
	is(kwq_shutdown_drain(fd, 1000000000, 0), 0, "drained");
	kwq_destroy(fd);
	close(fd);
}

static void test_rate_limited(void)
{
	struct kwq_ioc_create c;
	char buf[8];
	int fd, bad;

	uint64_t t0;

	/*
	 * An exponential limiter from 1 s: the second add must come before
	 * the first deadline, and a loaded debug guest can stall 100 ms.
	 */
	memset(&c, 0, sizeof(c));
	strcpy((char *)c.name, "abi-rl");
	c.mode = 0600;
	c.flags = KWQ_CREATE_RATELIMIT;
	c.ratelimit.count = 1;
	c.ratelimit.limiters[0].type = KWQ_LIMITER_EXPONENTIAL;
	c.ratelimit.limiters[0].base_ns = 1000000000;
	c.ratelimit.limiters[0].max_ns = 10000000000ULL;
	fd = kwq_create_ex(&c);
	t0 = now_ns();
	is(kwq_add_rate_limited(fd, "k", 1), KWQ_ADD_WAITING, "add-rate-limited: waiting");
	is(kwq_add_rate_limited(fd, "k", 1), KWQ_ADD_WAIT_KEPT, "again: earlier deadline kept");
	is(kwq_num_requeues(fd, "k", 1), 2, "num-requeues counts both");
	is(kwq_num_requeues(fd, "zz", 2), 0, "num-requeues of an unknown key is 0");
	is(kwq_get(fd, buf, sizeof(buf), NULL, 10000000000LL), 0, "handed out after its backoff");
	ok(now_ns() - t0 >= 1000000000, "and not before it");
	is(done_s(fd, "k"), KWQ_DONE_FINISHED, "done keeps the failures");
	is(kwq_forget(fd, "k", 1), 1, "forget: it had failures");
	is(kwq_forget(fd, "k", 1), 0, "forget again: nothing to forget");
	is(kwq_num_requeues(fd, "k", 1), 0, "num-requeues after forget");
	kwq_destroy(fd);
	close(fd);

	/* A bucket of 2 at one token per 100 s: no refill during the test. */
	memset(&c, 0, sizeof(c));
	strcpy((char *)c.name, "abi-rl2");
	c.mode = 0600;
	c.flags = KWQ_CREATE_RATELIMIT;
	c.ratelimit.count = 1;
	c.ratelimit.limiters[0].type = KWQ_LIMITER_BUCKET;
	c.ratelimit.limiters[0].rate_mhz = 10;
	c.ratelimit.limiters[0].burst = 2;
	fd = kwq_create_ex(&c);
	ok(fd >= 0, "create with a token bucket limiter");
	bad = kwq_add_rate_limited(fd, "a", 1) != KWQ_ADD_QUEUED;
	bad |= kwq_add_rate_limited(fd, "b", 1) != KWQ_ADD_QUEUED;
	is(bad, 0, "the burst passes at once");
	is(kwq_add_rate_limited(fd, "c", 1), KWQ_ADD_WAITING, "then keys wait for tokens");
	is(stats_of(fd).rate_limited, 3, "stats: rate-limited calls");
	kwq_destroy(fd);
	close(fd);

	c.ratelimit.limiters[0].rate_mhz = 0;
	is(kwq_create_ex(&c), -EINVAL, "create: bucket with rate 0 -> EINVAL");
	c.ratelimit.limiters[0].rate_mhz = 10000;
	c.flags = 0;
	is(kwq_create_ex(&c), -EINVAL, "create: limiter given without the flag -> EINVAL");
	memset(&c.ratelimit, 0, sizeof(c.ratelimit));
	c.pad = 1;
	is(kwq_create_ex(&c), -EINVAL, "create: pad != 0 -> EINVAL");
	is(kwq_open("abi-rl2", O_RDWR), -ENOENT, "no queue left behind by the failures");
}

/* A key whose worker never calls done comes back after the timeout. */
static void test_processing_timeout(void)
{
	struct kwq_ioc_create c;
	char buf[8];
	int fd;

	memset(&c, 0, sizeof(c));
	strcpy((char *)c.name, "abi-ptmo");
	c.mode = 0600;
	/* 1 s: each hand-out must outlast the checks that follow it. */
	c.processing_timeout_ns = 1000000000;
	fd = kwq_create_ex(&c);
	ok(fd >= 0, "create with a 1 s processing timeout");
	add_s(fd, "stuck");
	is(get_is(fd, "stuck"), 0, "a worker takes the key and hangs");
	is(kwq_get(fd, buf, sizeof(buf), NULL, 5000000000LL), 0,
	   "the key is handed out again after the timeout");
	is(stats_of(fd).processing_expiries, 1, "stats: one processing expiry");
	is(done_s(fd, "stuck"), KWQ_DONE_FINISHED, "done of the second hand-out");
	/* A poller is woken when the timeout puts the key back. */
	add_s(fd, "polled");
	is(get_is(fd, "polled"), 0, "a worker takes another key and hangs");
	{
		struct pollfd p = { .fd = fd, .events = POLLIN };
		struct timespec t0, t1;
		double waited;

		is(poll(&p, 1, 0), 0, "not readable while the key is processing");
		clock_gettime(CLOCK_MONOTONIC, &t0);
		is(poll(&p, 1, 20000), 1, "readable once the timeout puts the key back");
		clock_gettime(CLOCK_MONOTONIC, &t1);
		waited = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
		/* Woken by the key's return, not found at poll's own timeout. */
		ok(waited < 10, "the poller was woken (%.3f s; poll gives up at 20 s)", waited);
	}
	is(get_is(fd, "polled"), 0, "and the key is there");
	is(done_s(fd, "polled"), KWQ_DONE_FINISHED, "done of it");
	kwq_destroy(fd);
	close(fd);
	c.processing_timeout_ns = KWQ_DELAY_MAX_NS + 1;
	is(kwq_create_ex(&c), -EINVAL, "create: processing timeout too long -> EINVAL");
}

/* A consumer's keys come back when its fd closes, however it ended. */
static void test_leases(void)
{
	int fd = kwq_create("abi-lease", 0600, 0), other, status;
	uint64_t ticket = 0;
	char buf[16];
	size_t len;
	pid_t pid;
	int pipefd[2];

	add_s(fd, "l1");
	add_s(fd, "l2");
	add_s(fd, "l3");
	/* A consumer takes two keys and is killed while holding them. */
	if (pipe(pipefd))
		pipefd[0] = pipefd[1] = -1;
	pid = fork();
	if (pid == 0) {
		int c = kwq_open("abi-lease", O_RDWR);

		kwq_get(c, buf, sizeof(buf), &len, 0);
		kwq_get(c, buf, sizeof(buf), &len, 0);
		if (write(pipefd[1], "x", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	ok(read(pipefd[0], buf, 1) == 1, "consumer took two keys");
	is(stats_of(fd).processing, 2, "two keys processing while it runs");
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	ok(WIFSIGNALED(status), "consumer was killed");
	is(stats_of(fd).processing, 0, "its keys are no longer processing");
	is(stats_of(fd).lease_requeues, 2, "stats: two lease requeues");
	is(get_is(fd, "l1"), 0, "first returned key comes out first");
	is(get_is(fd, "l2"), 0, "then the second");
	is(get_is(fd, "l3"), 0, "then the rest");
	close(pipefd[0]);
	close(pipefd[1]);

	/* Another fd may not finish a key leased to this one. */
	other = kwq_open("abi-lease", O_RDWR);
	is(done_s(other, "l1"), -ENOENT, "done from another fd -> ENOENT");
	is(done_s(fd, "l1"), KWQ_DONE_FINISHED, "done from the owner");
	/* Nor with the hand-out's ticket: a ticket narrows a done, never widens it. */
	add_s(fd, "t");
	is(kwq_get_ticket(fd, buf, sizeof(buf), &len, 0, 0, &ticket), 0, "leased get with a ticket");
	is(kwq_done_ticket(other, "t", 1, ticket), -ENOENT,
	   "done with the right ticket from another fd -> ENOENT");
	is(stats_of(fd).processing, 3, "the key is still processing (and l2, l3)");
	is(kwq_done_ticket(fd, "t", 1, ticket), KWQ_DONE_FINISHED, "done with the ticket from the owner");
	/* An unleased key may be finished by anyone and survives close. */
	add_s(fd, "u");
	is(kwq_get_flags(other, buf, sizeof(buf), &len, 0, KWQ_GET_UNLEASED), 0,
	   "unleased get");
	close(other);
	is(stats_of(fd).processing, 3, "unleased key still processing after close");
	is(done_s(fd, "u"), KWQ_DONE_FINISHED, "unleased key done from another fd");
	done_s(fd, "l2");
	done_s(fd, "l3");

	/* A consumer that exits normally without done returns its key too. */
	add_s(fd, "e");
	pid = fork();
	if (pid == 0) {
		int c = kwq_open("abi-lease", O_RDWR);

		_exit(kwq_get(c, buf, sizeof(buf), &len, 0) == 0 ? 0 : 1);
	}
	waitpid(pid, &status, 0);
	is(WIFEXITED(status) ? WEXITSTATUS(status) : -1, 0, "child took a key and exited");
	is(get_is(fd, "e"), 0, "key of an exited consumer handed out again");
	done_s(fd, "e");
	is(stats_of(fd).items, 0, "nothing left");
	kwq_destroy(fd);
	close(fd);
}

static void test_batches(void)
{
	enum { N = 100 };
	int fd = kwq_create("abi-batch", 0600, 0);
	struct kwq_batch_entry e[N + 1];
	char keys[N][16], bufs[N][16];
	struct kwq_ioc_batch b;
	struct kwq_stats st;
	int i, bad;

	for (i = 0; i < N; i++) {
		snprintf(keys[i], sizeof(keys[i]), "b%d", i);
		e[i].key_ptr = (uintptr_t)keys[i];
		e[i].key_len = strlen(keys[i]);
		e[i].result = 99;
	}
	is(kwq_add_batch(fd, e, N, 0), N, "add batch: all carried out");
	for (bad = 0, i = 0; i < N; i++)
		bad += e[i].result != KWQ_ADD_QUEUED;
	is(bad, 0, "add batch: every result is queued");
	is(kwq_add_batch(fd, e, 2, 0), 2, "add batch again");
	ok(e[0].result == KWQ_ADD_DUPLICATE && e[1].result == KWQ_ADD_DUPLICATE,
	   "add batch: duplicates reported");
	is(kwq_len(fd), N, "len after batch");

	for (i = 0; i < N; i++) {
		e[i].key_ptr = (uintptr_t)bufs[i];
		e[i].key_len = sizeof(bufs[i]);
	}
	is(kwq_get_batch(fd, e, 10, 0, 0), 10, "get batch of 10");
	for (bad = 0, i = 0; i < 10; i++)
		bad += e[i].key_len != strlen(keys[i]) || memcmp(bufs[i], keys[i], e[i].key_len);
	is(bad, 0, "get batch: keys in FIFO order");
	/* One entry more than keys are left: e has N + 1. */
	is(kwq_get_batch(fd, e + 10, N - 9, 0, 0), N - 10, "get batch stops when nothing is ready");
	is(kwq_get_batch(fd, e, 5, 0, 0), -EAGAIN, "get batch on an empty queue -> EAGAIN");

	for (i = 0; i < N; i++)
		e[i].key_ptr = (uintptr_t)keys[i];
	for (i = 0; i < N; i++)
		e[i].key_len = strlen(keys[i]);
	/* A bad key pointer in the middle: the entries before it are done. */
	e[50].key_ptr = 8;
	is(kwq_done_batch(fd, e, N), 50, "done batch stops at the bad entry");
	is(kwq_done_batch(fd, e + 50, N - 50), -EFAULT, "resubmitting it shows the error");
	e[50].key_ptr = (uintptr_t)keys[50];
	is(kwq_done_batch(fd, e + 50, N - 50), N - 50, "the rest after fixing it");
	st = stats_of(fd);
	is(st.dones, N, "every key done exactly once");
	is(st.items, 0, "nothing left");

	/* Get batch into a bad buffer: the key goes back, nothing lost. */
	add_s(fd, "g1");
	add_s(fd, "g2");
	e[0].key_ptr = (uintptr_t)bufs[0];
	e[0].key_len = sizeof(bufs[0]);
	e[1].key_ptr = 8;
	e[1].key_len = sizeof(bufs[1]);
	is(kwq_get_batch(fd, e, 2, 0, 0), 1, "get batch: second buffer faults");
	st = stats_of(fd);
	ok(st.queued == 1 && st.processing == 1, "the faulted key is queued again");
	is(get_is(fd, "g2"), 0, "and comes out next");

	memset(&b, 0, sizeof(b));
	b.entries_ptr = (uintptr_t)e;
	b.count = 0;
	is(raw_ioctl(fd, KWQ_IOC_ADD_BATCH, &b), -EINVAL, "batch of 0 -> EINVAL");
	b.count = KWQ_BATCH_MAX + 1;
	is(raw_ioctl(fd, KWQ_IOC_ADD_BATCH, &b), -EINVAL, "batch too large -> EINVAL");
	b.count = 1;
	b.deadline_ns = 5;
	is(raw_ioctl(fd, KWQ_IOC_ADD_BATCH, &b), -EINVAL, "add batch with a deadline -> EINVAL");
	b.deadline_ns = 0;
	b.flags = KWQ_GET_UNLEASED << 4;
	is(raw_ioctl(fd, KWQ_IOC_GET_BATCH, &b), -EINVAL, "get batch unknown flag -> EINVAL");
	b.flags = 0;
	b.reserved[1] = 1;
	is(raw_ioctl(fd, KWQ_IOC_DONE_BATCH, &b), -EINVAL, "batch reserved != 0 -> EINVAL");
	b.reserved[1] = 0;
	b.entries_ptr = 8;
	is(raw_ioctl(fd, KWQ_IOC_ADD_BATCH, &b), -EFAULT, "batch bad array -> EFAULT");
	kwq_destroy(fd);
	close(fd);
}

static void test_list_and_limits(void)
{
	char names[8][KWQ_NAME_MAX];
	int a = kwq_create("abi-list-a", 0600, 0), b = kwq_create("abi-list-b", 0600, 0);
	int i, n, found = 0, status = -1;
	pid_t pid;

	n = kwq_list(names, 8);
	for (i = 0; i < n && i < 8; i++)
		found += !strcmp(names[i], "abi-list-a") || !strcmp(names[i], "abi-list-b");
	is(found, 2, "list shows both queues");
	is(kwq_list(NULL, 0), n, "list with no room reports the count");
	kwq_destroy(a);
	kwq_destroy(b);
	close(a);
	close(b);

	/* An unprivileged user may own max_queues_per_user (64) queues. */
	pid = fork();
	if (pid == 0) {
		char name[32];
		int k, fdk;

		if (setgid(65534) || setuid(65534))
			_exit(10);
		for (k = 0; k < 64; k++) {
			snprintf(name, sizeof(name), "abi-quota-%d", k);
			fdk = kwq_create(name, 0600, 0);
			if (fdk < 0)
				_exit(11);
			close(fdk);
		}
		fdk = kwq_create("abi-quota-over", 0600, 0);
		if (fdk != -ENOSPC)
			_exit(12);
		for (k = 0; k < 64; k++) {
			snprintf(name, sizeof(name), "abi-quota-%d", k);
			fdk = kwq_open(name, O_RDWR);
			if (fdk < 0 || kwq_destroy(fdk))
				_exit(13);
			close(fdk);
		}
		_exit(0);
	}
	waitpid(pid, &status, 0);
	is(WIFEXITED(status) ? WEXITSTATUS(status) : -1, 0,
	   "per-user queue limit: 64 made, the 65th -> ENOSPC");
}

/* Producers and consumers in separate processes; nothing lost. */
static void test_multiprocess(void)
{
	enum { PRODUCERS = 2, CONSUMERS = 2, KEYS = 300 };
	int fd = kwq_create("abi-mp", 0600, 0);
	pid_t pids[PRODUCERS + CONSUMERS];
	int i, status, failures = 0;
	struct kwq_stats st;

	for (i = 0; i < PRODUCERS + CONSUMERS; i++) {
		pids[i] = fork();
		if (pids[i] == 0) {
			int c = kwq_open("abi-mp", O_RDWR), j, bad = 0;
			char key[32];
			size_t len;

			if (i < PRODUCERS) {
				for (j = 0; j < KEYS; j++) {
					snprintf(key, sizeof(key), "p%d/k%d", i, j);
					bad |= add_s(c, key) != KWQ_ADD_QUEUED;
				}
				_exit(bad);
			}
			while (kwq_get(c, key, sizeof(key), &len, -1) == 0)
				bad |= kwq_done(c, key, len) != KWQ_DONE_FINISHED;
			_exit(bad);
		}
	}
	for (i = 0; i < PRODUCERS; i++) {
		waitpid(pids[i], &status, 0);
		failures += !WIFEXITED(status) || WEXITSTATUS(status);
	}
	is(kwq_shutdown_drain(fd, 30000000000LL, 0), 0, "drain after all producers finished");
	for (i = PRODUCERS; i < PRODUCERS + CONSUMERS; i++) {
		waitpid(pids[i], &status, 0);
		failures += !WIFEXITED(status) || WEXITSTATUS(status);
	}
	is(failures, 0, "all producer and consumer processes succeeded");
	st = stats_of(fd);
	is(st.gets, PRODUCERS * KEYS, "every key handed out exactly once");
	is(st.dones, st.gets, "every get done");
	is(st.items, 0, "nothing left");
	kwq_destroy(fd);
	close(fd);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("# kwq ABI tests (%zu-bit)\n", sizeof(void *) * 8);
	test_version();
	test_unknown_and_detached();
	test_create_validation();
	test_open_and_share();
	test_semantics();
	test_key_errors();
	test_blocking();
	test_poll();
	test_shutdown_and_drain();
	test_permissions();
	test_stats_size();
	test_delays();
	test_many_waiting();
	test_leases();
	test_rate_limited();
	test_processing_timeout();
	test_batches();
	test_list_and_limits();
	test_multiprocess();
	return tap_done();
}
