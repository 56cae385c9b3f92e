// SPDX-License-Identifier: GPL-2.0
/*
 * Payloads through /dev/kwq (Documentation/kwq-payloads.rst), run inside
 * the guest as root and built both 64-bit and -m32 (compat_ioctl): the
 * feature bit and max_payload; the latest payload wins while the key is
 * queued or waiting; an add while processing keeps the new payload for
 * the next run; a give-back (lease end, processing timeout) keeps it;
 * done frees it; the get's buffer rules; bad inputs are refused and change
 * nothing; the calls without room for a payload refuse payload queues; and
 * the memory comes back: the stats, the owner's max_key_bytes_per_user
 * total, which a user fills, empties and fills again, and the memory
 * cgroup of the task that added the payloads.
 */

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "libkwq.h"
#include "kwq_test_util.h"
#include "kwq_test_memcg.h"
#include "tap.h"

#define MS(x)		((int64_t)(x) * 1000000)
#define PMAX		4096
#define PARAMS		"/sys/module/kwq/parameters/"

static long long param_read(const char *name)
{
	char path[128], buf[64] = "";
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), PARAMS "%s", name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	return n > 0 ? strtoll(buf, NULL, 10) : -1;
}

static int param_set(const char *name, long long v)
{
	char path[128], val[32];
	int fd, ret = 0;

	snprintf(path, sizeof(path), PARAMS "%s", name);
	snprintf(val, sizeof(val), "%lld", v);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, val, strlen(val)) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

/* A payload queue named @name (with @timeout_ns processing timeout), or -errno. */
static int pq_create(const char *name, uint32_t payload_max, uint64_t timeout_ns)
{
	struct kwq_ioc_create c;

	memset(&c, 0, sizeof(c));
	snprintf((char *)c.name, sizeof(c.name), "%s", name);
	c.mode = 0600;
	c.payload_max = payload_max;
	c.processing_timeout_ns = timeout_ns;
	return kwq_create_ex(&c);
}

static int pq_new(const char *name, uint64_t timeout_ns)
{
	int fd = pq_create(name, PMAX, timeout_ns);

	if (fd < 0) {
		printf("Bail out! create %s: %s\n", name, strerror(-fd));
		exit(1);
	}
	return fd;
}

static int padd(int fd, const char *key, const char *p)
{
	return kwq_add_payload(fd, key, strlen(key), p, p ? strlen(p) : 0);
}

static int padd_after(int fd, const char *key, const char *p, int64_t delay)
{
	struct kwq_ioc_add a;

	memset(&a, 0, sizeof(a));
	a.delay_ns = delay;
	a.payload_ptr = (uintptr_t)p;
	a.payload_len = (uint32_t)strlen(p);
	return kwq_add_ex(fd, key, strlen(key), &a);
}

/*
 * Get (waiting up to @timeout) and compare key and payload ("" for none):
 * 0, -EBADMSG on a mismatch, or the get's error.
 */
static int pget_to(int fd, const char *key, const char *want, int64_t timeout, uint64_t *ticket)
{
	char kb[KWQ_KEY_MAX + 1], pb[PMAX + 1];
	size_t len = 0, plen = 12345;
	int ret;

	memset(pb, 0, sizeof(pb));
	ret = kwq_get_payload(fd, kb, KWQ_KEY_MAX, &len, pb, PMAX, &plen, timeout, 0, ticket);
	if (ret)
		return ret;
	kb[len] = '\0';
	if (strcmp(kb, key) || plen != strlen(want) || memcmp(pb, want, plen)) {
		printf("# got key \"%s\" payload %zu bytes \"%.40s\"; want \"%s\" \"%.40s\"\n",
		       kb, plen, pb, key, want);
		return -EBADMSG;
	}
	return 0;
}

static int pget(int fd, const char *key, const char *want)
{
	return pget_to(fd, key, want, 0, NULL);
}

static void test_version_and_create(void)
{
	long long max = param_read("max_payload");
	struct kwq_ioc_version v;
	int fd;

	memset(&v, 0, sizeof(v));
	is(kwq_version(&v), 0, "version");
	ok(v.features & KWQ_FEATURE_PAYLOAD, "KWQ_FEATURE_PAYLOAD is reported");
	is(max, 4096, "max_payload defaults to 4096");
	is(pq_create("pl-create", (uint32_t)max + 1, 0), -EINVAL,
	   "create: payload_max above max_payload -> EINVAL");
	is(param_set("max_payload", 65537), -EINVAL, "max_payload takes nothing above 65536");
	is(param_set("max_payload", 65536), 0, "max_payload takes 65536");
	fd = pq_create("pl-create", 65536, 0);
	ok(fd >= 0, "... and then a queue of payload_max 65536 can be made");
	if (fd >= 0)
		end_queue(fd);
	is(param_set("max_payload", max), 0, "max_payload back at %lld", max);
}

static void test_latest_wins(void)
{
	int fd = pq_new("pl-latest", 0);
	struct kwq_stats st;

	is(padd(fd, "q", "first"), KWQ_ADD_QUEUED, "add with a payload queues the key");
	is(padd(fd, "q", "second!"), KWQ_ADD_DUPLICATE, "a second add is a duplicate...");
	st = stats_of(fd);
	is(st.payloads_replaced, 1, "... whose payload replaced the first (payloads_replaced 1)");
	is(st.payload_bytes, 7, "payload_bytes counts the one held (7)");
	is(add_s(fd, "q"), KWQ_ADD_DUPLICATE, "an add without a payload...");
	is(pget(fd, "q", "second!"), 0, "... keeps it: the get returns the latest payload");
	is(done_s(fd, "q"), KWQ_DONE_FINISHED, "done");
	st = stats_of(fd);
	is(st.payload_bytes, 0, "done freed the payload (payload_bytes 0)");
	is(st.items, 0, "... and the record");

	is(padd_after(fd, "w", "early", MS(100)), KWQ_ADD_WAITING, "a delayed add with a payload");
	is(padd_after(fd, "w", "later", MS(5000)), KWQ_ADD_WAIT_KEPT,
	   "a later deadline keeps the earlier one...");
	is(stats_of(fd).payloads_replaced, 2, "... and replaces the payload of the waiting key");
	is(pget_to(fd, "w", "later", MS(5000), NULL), 0, "the key runs with the latest payload");
	is(done_s(fd, "w"), KWQ_DONE_FINISHED, "done");
	is(stats_of(fd).payload_bytes, 0, "payload_bytes back to 0");
	end_queue(fd);
}

static void test_processing(void)
{
	int fd = pq_new("pl-proc", 0), fd2;
	struct kwq_stats st;

	padd(fd, "p", "run-1");
	is(pget(fd, "p", "run-1"), 0, "get hands out the payload");
	is(padd(fd, "p", "run-2"), KWQ_ADD_DEFERRED, "an add with a payload while processing");
	is(done_s(fd, "p"), KWQ_DONE_REQUEUED, "done queues the key again");
	is(pget(fd, "p", "run-2"), 0, "the next run gets the new payload");
	is(add_s(fd, "p"), KWQ_ADD_DEFERRED, "an add without a payload while processing");
	is(done_s(fd, "p"), KWQ_DONE_REQUEUED, "done queues it again");
	is(pget(fd, "p", "run-2"), 0, "the next run has the same payload");
	is(done_s(fd, "p"), KWQ_DONE_FINISHED, "done");
	is(stats_of(fd).payload_bytes, 0, "nothing held");

	/* A lease that ends gives the key back with its payload. */
	padd(fd, "l", "leased");
	fd2 = kwq_open("pl-proc", O_RDWR);
	ok(fd2 >= 0, "a second descriptor");
	is(pget(fd2, "l", "leased"), 0, "it takes the key");
	close(fd2);
	st = stats_of(fd);
	is(st.lease_requeues, 1, "closing it gives the key back");
	is(pget(fd, "l", "leased"), 0, "the key comes back with its payload");
	is(done_s(fd, "l"), KWQ_DONE_FINISHED, "done");
	end_queue(fd);

	/* So does the processing timeout. */
	fd = pq_new("pl-timeout", MS(100));
	padd(fd, "t", "timed");
	is(pget(fd, "t", "timed"), 0, "a key taken on a queue with a 100 ms processing timeout");
	is(pget_to(fd, "t", "timed", MS(5000), NULL), 0,
	   "it comes back after the timeout with its payload");
	is(stats_of(fd).processing_expiries, 1, "processing_expiries 1");
	end_queue(fd);
}

static void test_get_buffers(void)
{
	int fd = pq_new("pl-buf", 0);
	struct kwq_ioc_get g;
	char kb[16], pb[8];
	size_t len = 0, plen = 0;
	struct kwq_stats st;
	void *ro;

	padd(fd, "b", "0123456789");
	st = stats_of(fd);
	is(kwq_get_payload(fd, kb, sizeof(kb), &len, pb, sizeof(pb), &plen, 0, 0, NULL), -EMSGSIZE,
	   "a payload longer than the buffer -> EMSGSIZE");
	is(plen, 10, "... payload_len says the size needed");
	is(len, 1, "... key_len the key's");
	ok(same_stats(fd, &st), "... and the key stays queued, nothing counted");
	memset(&g, 0, sizeof(g));
	g.key_ptr = (uintptr_t)kb;
	g.key_cap = sizeof(kb);
	g.payload_len = 4;
	is(raw_ioctl(fd, KWQ_IOC_GET, &g), -EINVAL, "payload_len without payload_ptr -> EINVAL");
	ro = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	g.payload_ptr = (uintptr_t)ro;
	g.payload_len = 64;
	is(raw_ioctl(fd, KWQ_IOC_GET, &g), -EFAULT, "a payload buffer it cannot write -> EFAULT");
	ok(same_stats(fd, &st), "... before the key was taken");
	munmap(ro, 4096);
	/* Today's programs: no payload buffer; the length is still reported. */
	memset(&g, 0, sizeof(g));
	g.key_ptr = (uintptr_t)kb;
	g.key_cap = sizeof(kb);
	is(raw_ioctl(fd, KWQ_IOC_GET, &g), 0, "a get without a payload buffer works");
	is(g.payload_len, 10, "... and reports the payload's length");
	is(done_s(fd, "b"), KWQ_DONE_FINISHED, "done");
	end_queue(fd);

	fd = new_queue("pl-plain");
	add_s(fd, "k");
	plen = 7;
	is(kwq_get_payload(fd, kb, sizeof(kb), &len, pb, sizeof(pb), &plen, 0, 0, NULL), 0,
	   "a get with a payload buffer on a plain queue works");
	is(plen, 0, "... and reports no payload");
	end_queue(fd);
}

/*
 * A payload buffer writable at both ends but not in the middle: the get
 * fails with -EFAULT before it takes the key (every page is probed), so
 * nothing is counted and the key stays queued.
 */
static void test_get_buffer_hole(void)
{
	long long max = param_read("max_payload");
	long page = sysconf(_SC_PAGESIZE);
	size_t big = 3 * page - 100, len = 0, plen = 0;
	char kb[16], *p = malloc(big), *map;
	struct kwq_stats st;
	int fd;

	is(param_set("max_payload", 3 * page), 0, "max_payload=%ld", 3 * page);
	fd = pq_create("pl-hole", 3 * page, 0);
	map = mmap(NULL, 3 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (fd < 0 || !p || map == MAP_FAILED) {
		printf("Bail out! pl-hole setup\n");
		exit(1);
	}
	memset(p, 'p', big);
	ok(kwq_add_payload(fd, "h", 1, p, big) >= 0, "add a payload of %zu bytes", big);
	mprotect(map + page, page, PROT_READ);
	st = stats_of(fd);
	is(kwq_get_payload(fd, kb, sizeof(kb), &len, map, 3 * page, &plen, 0, 0, NULL), -EFAULT,
	   "a payload buffer with a read-only middle page -> EFAULT");
	ok(same_stats(fd, &st), "... before the key was taken: nothing counted");
	mprotect(map + page, page, PROT_READ | PROT_WRITE);
	is(kwq_get_payload(fd, kb, sizeof(kb), &len, map, 3 * page, &plen, 0, 0, NULL), 0,
	   "with the page writable the get works");
	ok(plen == big && !memcmp(map, p, big), "... and delivers all %zu bytes", plen);
	is(done_s(fd, "h"), KWQ_DONE_FINISHED, "done");
	end_queue(fd);
	munmap(map, 3 * page);
	free(p);
	is(param_set("max_payload", max), 0, "max_payload back at %lld", max);
}

static void test_bad_input(void)
{
	static char big[PMAX + 2];
	int fd = pq_new("pl-bad", 0), plain = new_queue("pl-bad-plain");
	struct kwq_ioc_add a;
	struct kwq_stats st, pst;

	padd(fd, "k", "stored");
	st = stats_of(fd);
	pst = stats_of(plain);
	memset(big, 'b', sizeof(big));
	is(kwq_add_payload(fd, "k", 1, big, PMAX + 1), -E2BIG, "a payload past payload_max -> E2BIG");
	is(kwq_add_payload(fd, "n", 1, big, PMAX + 1), -E2BIG, "... for a new key too");
	is(kwq_add_payload(plain, "k", 1, "x", 1), -EINVAL,
	   "a payload on a queue without payloads -> EINVAL");
	memset(&a, 0, sizeof(a));
	a.payload_ptr = (uintptr_t)"x";
	is(kwq_add_ex(fd, "k", 1, &a), -EINVAL, "payload_ptr without payload_len -> EINVAL");
	a.payload_ptr = 0;
	a.payload_len = 1;
	is(kwq_add_ex(fd, "k", 1, &a), -EINVAL, "payload_len without payload_ptr -> EINVAL");
	a.payload_ptr = (uintptr_t)"x";
	a.reserved[1] = 1;
	is(kwq_add_ex(fd, "k", 1, &a), -EINVAL, "a payload with nonzero reserved -> EINVAL");
	a.reserved[1] = 0;
	a.pad = 1;
	is(kwq_add_ex(fd, "k", 1, &a), -EINVAL, "a payload with nonzero pad -> EINVAL");
	a.pad = 0;
	a.payload_ptr = 8;
	is(kwq_add_ex(fd, "k", 1, &a), -EFAULT, "a payload it cannot read -> EFAULT");
	is(kwq_add_ex(fd, "n", 1, &a), -EFAULT, "... for a new key too");
	ok(same_stats(fd, &st), "refused adds changed nothing, counters included");
	ok(same_stats(plain, &pst), "... on the plain queue too");
	is(pget(fd, "k", "stored"), 0, "the stored payload is untouched");
	end_queue(plain);
	end_queue(fd);
}

static void test_no_room(void)
{
	int fd = pq_new("pl-noroom", 0);
	struct kwq_batch_entry e[2];
	char kb[8], b0[8], b1[8];
	struct kwq_stats st;
	size_t len;
	int dr = 7;

	padd(fd, "a", "pa");
	padd(fd, "b", "pb");
	is(pget(fd, "a", "pa"), 0, "get a");
	st = stats_of(fd);
	memset(e, 0, sizeof(e));
	e[0].key_ptr = (uintptr_t)b0;
	e[0].key_len = sizeof(b0);
	e[1].key_ptr = (uintptr_t)b1;
	e[1].key_len = sizeof(b1);
	is(kwq_get_batch(fd, e, 2, 0, 0), -EOPNOTSUPP, "GET_BATCH on a payload queue -> EOPNOTSUPP");
	is(kwq_done_get(fd, "a", 1, &dr, kb, sizeof(kb), &len, 0), -EOPNOTSUPP,
	   "DONE_GET on a payload queue -> EOPNOTSUPP");
	is(dr, -1, "... before its done");
	ok(same_stats(fd, &st), "... and neither changed anything");
	e[0].key_ptr = (uintptr_t)"a";
	e[0].key_len = 1;
	is(kwq_done_batch(fd, e, 1), 1, "a done batch works");
	e[0].key_ptr = (uintptr_t)"c";
	is(kwq_add_batch(fd, e, 1, 0), 1, "an add batch works (without a payload)");
	is(pget(fd, "b", "pb"), 0, "b with its payload");
	is(pget(fd, "c", ""), 0, "c without one");
	/* The queue's kind refuses them whatever its state: after destroy too. */
	is(kwq_destroy(fd), 0, "destroy it");
	e[0].key_ptr = (uintptr_t)b0;
	e[0].key_len = sizeof(b0);
	is(kwq_get_batch(fd, e, 2, 0, 0), -EOPNOTSUPP, "after destroy GET_BATCH -> EOPNOTSUPP");
	is(kwq_done_get(fd, "a", 1, &dr, kb, sizeof(kb), &len, 0), -EOPNOTSUPP,
	   "... and DONE_GET -> EOPNOTSUPP");
	is(kwq_add(fd, "d", 1), -EIDRM, "... while an add -> EIDRM");
	close(fd);
}

/* What the child (another user) reports. */
struct mem_report {
	int n, full, same, grow, grow_kept, after_done, refill, bytes_after_done;
	int items_after_done, after_destroy;
	int cg_added, cg_done;
	long long cg0, cg1, cg2;
};

static struct mem_report *rep;
static char mem_name[KWQ_NAME_MAX];

#define PLEN	2000

/* Adds "m<i>" with a PLEN-byte payload; returns the first error, 0 if all went in. */
static int fill_n(int fd, int from, int n)
{
	static char p[PLEN];
	char key[16];
	int i, ret;

	for (i = from; i < from + n; i++) {
		snprintf(key, sizeof(key), "m%d", i);
		memset(p, 'a' + i % 26, sizeof(p));
		ret = kwq_add_payload(fd, key, strlen(key), p, sizeof(p));
		if (ret < 0)
			return ret;
	}
	return 0;
}

static int mem_child(void)
{
	static char p[PMAX];
	char key[16];
	struct kwq_stats st;
	size_t len, plen;
	int fd = pq_create(mem_name, PMAX, 0), i;

	if (fd < 0)
		return 1;
	for (rep->n = 0; rep->n < 1000 && !fill_n(fd, rep->n, 1); rep->n++)
		;
	rep->full = fill_n(fd, rep->n, 1);
	/* At the limit a payload no larger than the one it replaces still fits. */
	memset(p, 'z', sizeof(p));
	rep->same = kwq_add_payload(fd, "m0", 2, p, PLEN);
	st = stats_of(fd);
	/* 4096 bytes take an 8 KiB allocation: more than the room one key left. */
	rep->grow = kwq_add_payload(fd, "m0", 2, p, PMAX);
	rep->grow_kept = same_stats(fd, &st);
	/* Every key run and done: the memory comes back. */
	for (i = 0; i < rep->n; i++)
		if (kwq_get_payload(fd, key, sizeof(key), &len, p, sizeof(p), &plen, 0, 0, NULL) ||
		    kwq_done(fd, key, len) < 0)
			return 2;
	st = stats_of(fd);
	rep->bytes_after_done = (int)st.payload_bytes;
	rep->items_after_done = (int)st.items;
	rep->refill = fill_n(fd, 0, rep->n);
	/* Destroyed with every payload held: the memory comes back too. */
	kwq_destroy(fd);
	close(fd);
	return 0;
}

static int mem_child_again(void)
{
	int fd = pq_create(mem_name, PMAX, 0);

	if (fd < 0)
		return 1;
	rep->after_destroy = fill_n(fd, 0, rep->n);
	kwq_destroy(fd);
	close(fd);
	return 0;
}

static int as_user(uid_t uid, int (*fn)(void))
{
	pid_t pid = fork();
	int status;

	if (pid == 0) {
		if (setresgid(uid, uid, uid) || setresuid(uid, uid, uid))
			_exit(100);
		_exit(fn());
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

#define CG_KEYS		512

static char cg[128];

/* In the cgroup: CG_KEYS payloads of PMAX bytes (8 KiB allocations each), then all done. */
static int payloads_in_cg(void)
{
	static char p[PMAX];
	char key[16];
	size_t len, plen;
	int fd, i;

	if (memcg_join(cg))
		return 1;
	memset(p, 'c', sizeof(p));
	fd = pq_create(mem_name, PMAX, 0);
	if (fd < 0)
		return 2;
	rep->cg0 = memcg_current(cg);
	for (i = 0; i < CG_KEYS; i++) {
		snprintf(key, sizeof(key), "c%d", i);
		rep->cg_added += kwq_add_payload(fd, key, strlen(key), p, sizeof(p)) >= 0;
	}
	rep->cg1 = memcg_current(cg);
	while (!kwq_get_payload(fd, key, sizeof(key), &len, p, sizeof(p), &plen, 0, 0, NULL) &&
	       kwq_done(fd, key, len) >= 0)
		rep->cg_done++;
	rep->cg2 = memcg_current(cg);
	end_queue(fd);
	return 0;
}

static void test_memory(void)
{
	long long old = param_read("max_key_bytes_per_user");
	const int limit = 65536;

	rep = mmap(NULL, sizeof(*rep), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (rep == MAP_FAILED) {
		printf("Bail out! mmap\n");
		exit(1);
	}
	memset(rep, 0, sizeof(*rep));
	snprintf(mem_name, sizeof(mem_name), "pl-mem-%d", getpid());
	is(param_set("max_key_bytes_per_user", limit), 0, "max_key_bytes_per_user=%d", limit);
	is(as_user(65532, mem_child), 0, "uid 65532 fills a payload queue");
	is(rep->full, -ENOSPC, "an add past the limit fails with -ENOSPC");
	ok(rep->n >= limit / 4096 && rep->n <= limit / 2048,
	   "... after %d keys with %d-byte payloads (each counts its allocation)", rep->n, PLEN);
	ok(rep->same >= 0, "at the limit, replacing a payload with one of the same size works");
	is(rep->grow, -ENOSPC, "a larger one that does not fit -> ENOSPC");
	ok(rep->grow_kept, "... and changes nothing");
	is(rep->bytes_after_done, 0, "every key done: payload_bytes 0");
	is(rep->items_after_done, 0, "... no records left");
	is(rep->refill, 0, "the user adds as many payloads again: the memory came back");
	snprintf(mem_name, sizeof(mem_name), "pl-mem2-%d", getpid());
	is(as_user(65532, mem_child_again), 0, "after a destroy with every payload held...");
	is(rep->after_destroy, 0, "... the user adds as many again");

	/* The adder's memory cgroup pays for the payloads, and gets it back. */
	if (memcg_setup(cg, sizeof(cg), "payload")) {
		ok(0, "memory cgroup: cannot set one up");
	} else {
		snprintf(mem_name, sizeof(mem_name), "pl-cg-%d", getpid());
		is(as_user(0, payloads_in_cg), 0, "a child in a cgroup adds %d payloads of %d bytes",
		   CG_KEYS, PMAX);
		is(rep->cg_added, CG_KEYS, "... all of them");
		ok(rep->cg1 - rep->cg0 >= (3LL << 20),
		   "... its memory.current grew by %lld KiB (8 KiB a payload)",
		   (rep->cg1 - rep->cg0) >> 10);
		is(rep->cg_done, CG_KEYS, "... every key done");
		ok(rep->cg1 - rep->cg2 >= (3LL << 20),
		   "... and memory.current fell by %lld KiB", (rep->cg1 - rep->cg2) >> 10);
		rmdir(cg);
	}
	is(param_set("max_key_bytes_per_user", old), 0, "max_key_bytes_per_user back at %lld", old);
	munmap(rep, sizeof(*rep));
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	test_version_and_create();
	test_latest_wins();
	test_processing();
	test_get_buffers();
	test_get_buffer_hole();
	test_bad_input();
	test_no_room();
	test_memory();
	return tap_done();
}
