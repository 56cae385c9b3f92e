// SPDX-License-Identifier: GPL-2.0
/*
 * kwq_bench: the user-space half of kwq's benchmark suite.
 *
 * Each subcommand runs one measurement once and prints result lines
 *
 *	KWQB <name> <value> <unit>
 *
 * (plus KWQB-CDF and KWQB-SCALE lines for the plots). bench/guest-bench.sh
 * repeats the subcommands inside the test guest; scripts/bench.sh turns
 * the lines into the table, results.csv and the plots. Keys are 32 bytes.
 *
 *   floor ITERS [NAME]            no-op ioctl (KWQ_IOC_VERSION) and getppid(), as
 *                                 NAME.ioctl and NAME.getppid (default floor)
 *   cycle1 N                      add; get; done of N keys in one thread
 *   cycle1dg N                    add; done+get (KWQ_IOC_DONE_GET) of N keys, one thread
 *   ops ROUNDS K                  each operation alone, per call, K keys a round
 *   dup N                         N adds of one queued key (for a profile)
 *   payload ROUNDS K              add and get with a 64-byte payload against plain ones
 *   cycle P C N [dg]              P producer and C consumer threads, N keys
 *                                 (dg: consumers call done+get in one ioctl)
 *   batch1 B N                    add/get/done batches of B keys, one thread
 *   batch B N                     batches of B keys, 1 producer + 1 consumer
 *   mq1 N | mq P C N              POSIX mqueue send+receive of the same keys
 *   delay N MAX_MS SEED [NAME [LEAD_MS]]  add-after lateness, consumer concurrent;
 *                                 LEAD_MS later deadlines, so that the adds end first
 *   delay-base N MAX_MS SEED [NAME]  the same deadlines slept by clock_nanosleep
 *   scale-wait MAXN SEED          add-after cost at growing waiting sets, memory
 *   scale-queue MAXN              add cost at growing queued sets, memory
 *   dedup HOT P C ADDS [B]        P producers re-add HOT keys (in batches of B), C
 *                                 consumers drain
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <mqueue.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "libkwq.h"

#define KEY_LEN 32
#define NSEC 1000000000ULL

static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("kwq_bench: ", stderr);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NSEC + (uint64_t)ts.tv_nsec;
}

/* CPU time of the whole process, threads that exited included. */
static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * NSEC + (uint64_t)ts.tv_nsec;
}

static unsigned long num(const char *s)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || end == s)
		die("not a number: %s", s);
	return v;
}

static void result(const char *name, double value, const char *unit)
{
	printf("KWQB %s %.6g %s\n", name, value, unit);
}

/* Key i: exactly KEY_LEN bytes, "bench/" and 26 digits. */
static void mkkey(char *buf, unsigned long i)
{
	char tmp[KEY_LEN + 1];

	snprintf(tmp, sizeof(tmp), "bench/%026lu", i);
	memcpy(buf, tmp, KEY_LEN);
}

/* Keys [0, n) made before the clock starts: key i at keys + i * KEY_LEN. */
static char *mkkeys(unsigned long n)
{
	char *keys = malloc(n * KEY_LEN);
	unsigned long i;

	if (!keys)
		die("out of memory");
	for (i = 0; i < n; i++)
		mkkey(keys + i * KEY_LEN, i);
	return keys;
}

static unsigned long keyidx(const char *buf)
{
	char tmp[KEY_LEN + 1];

	memcpy(tmp, buf, KEY_LEN);
	tmp[KEY_LEN] = 0;
	return strtoul(tmp + 6, NULL, 10);
}

static uint64_t xorshift(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	*s = x;
	return x;
}

/* A fresh named queue per measurement; returns its creating fd. */
static char qname[KWQ_NAME_MAX];

static int new_queue(const char *what)
{
	static unsigned int seq;
	int fd;

	snprintf(qname, sizeof(qname), "bench-%s-%d-%u", what, (int)getpid(), seq++);
	fd = kwq_create(qname, 0600, 0);
	if (fd < 0)
		die("create %s: %s", qname, strerror(-fd));
	return fd;
}

static int open_queue(int oflags)
{
	int fd = kwq_open(qname, oflags);

	if (fd < 0)
		die("open %s: %s", qname, strerror(-fd));
	return fd;
}

static void end_queue(int fd)
{
	int ret = kwq_destroy(fd);

	if (ret)
		die("destroy: %s", strerror(-ret));
	close(fd);
}

/* Add, retrying while the queue is at its item limit. */
static void add_key(int fd, const char *key)
{
	int ret;

	while ((ret = kwq_add(fd, key, KEY_LEN)) == -ENOSPC)
		sched_yield();
	if (ret < 0)
		die("add: %s", strerror(-ret));
}

/* ---- 1. the syscall floor ---------------------------------------------- */

static int cmd_floor(int argc, char **argv)
{
	unsigned long n = argc > 0 ? num(argv[0]) : 200000, i;
	const char *prefix = argc > 1 ? argv[1] : "floor";
	struct kwq_ioc_version v;
	char name[64];
	uint64_t t0, t1;
	int fd = open(KWQ_DEFAULT_DEV, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		die("open %s: %s", KWQ_DEFAULT_DEV, strerror(errno));
	t0 = now_ns();
	for (i = 0; i < n; i++) {
		memset(&v, 0, sizeof(v));
		if (ioctl(fd, KWQ_IOC_VERSION, &v))
			die("KWQ_IOC_VERSION: %s", strerror(errno));
	}
	t1 = now_ns();
	snprintf(name, sizeof(name), "%s.ioctl", prefix);
	result(name, (double)(t1 - t0) / n, "ns/call");
	t0 = now_ns();
	for (i = 0; i < n; i++)
		syscall(SYS_getppid);
	t1 = now_ns();
	snprintf(name, sizeof(name), "%s.getppid", prefix);
	result(name, (double)(t1 - t0) / n, "ns/call");
	close(fd);
	return 0;
}

/* ---- 2. single-key cycles ---------------------------------------------- */

static int cmd_cycle1(int argc, char **argv)
{
	unsigned long n = argc > 0 ? num(argv[0]) : 50000, i;
	char *keys = mkkeys(n), *key, got[KWQ_KEY_MAX];
	uint64_t t0, t1, c0, c1;
	size_t len;
	int fd = new_queue("c1"), ret;

	t0 = now_ns();
	c0 = cpu_ns();
	for (i = 0; i < n; i++) {
		key = keys + i * KEY_LEN;
		add_key(fd, key);
		ret = kwq_get(fd, got, sizeof(got), &len, 0);
		if (ret || len != KEY_LEN || memcmp(got, key, KEY_LEN))
			die("cycle1 get: %s", ret ? strerror(-ret) : "wrong key");
		ret = kwq_done(fd, got, len);
		if (ret != KWQ_DONE_FINISHED)
			die("cycle1 done: %d", ret);
	}
	t1 = now_ns();
	c1 = cpu_ns();
	end_queue(fd);
	free(keys);
	result("cycle.1t", (double)(t1 - t0) / n, "ns/key");
	result("cycle.1t.cpu", (double)(c1 - c0) / n, "ns/key");
	result("cycle.1t.rate", (double)n * NSEC / (double)(t1 - t0), "keys/s");
	return 0;
}

/*
 * The same cycle as a worker loop with KWQ_IOC_DONE_GET: the done of one
 * key and the get of the next are one call, so a key costs two system
 * calls instead of three.
 */
static int cmd_cycle1dg(int argc, char **argv)
{
	unsigned long n = argc > 0 ? num(argv[0]) : 50000, i;
	char *keys = mkkeys(n), *key, got[KWQ_KEY_MAX];
	uint64_t t0, t1, c0, c1;
	int fd = new_queue("c1dg"), ret, done;
	size_t len = 0;

	t0 = now_ns();
	c0 = cpu_ns();
	for (i = 0; i < n; i++) {
		key = keys + i * KEY_LEN;
		add_key(fd, key);
		if (i == 0)
			ret = kwq_get(fd, got, sizeof(got), &len, 0);
		else
			ret = kwq_done_get(fd, got, len, &done, got, sizeof(got), &len, 0);
		if (ret || len != KEY_LEN || memcmp(got, key, KEY_LEN))
			die("cycle1dg: %s", ret ? strerror(-ret) : "wrong key");
		if (i && done != KWQ_DONE_FINISHED)
			die("cycle1dg done: %d", done);
	}
	if (n && kwq_done(fd, got, len) != KWQ_DONE_FINISHED)
		die("cycle1dg: last done");
	t1 = now_ns();
	c1 = cpu_ns();
	end_queue(fd);
	free(keys);
	result("cycle.1t.dg", (double)(t1 - t0) / n, "ns/key");
	result("cycle.1t.dg.cpu", (double)(c1 - c0) / n, "ns/key");
	return 0;
}

/*
 * Each operation of the cycle on its own, in rounds of K keys (few enough
 * that the key table never resizes): add of new keys, add of queued keys
 * (duplicates), get, done, and the no-op ioctl, per call.
 */
static int cmd_ops(int argc, char **argv)
{
	unsigned long rounds = argc > 0 ? num(argv[0]) : 40, k = argc > 1 ? num(argv[1]) : 500;
	uint64_t t[5] = { 0 }, t0;
	char *keys = mkkeys(k), got[KWQ_KEY_MAX];
	struct kwq_ioc_version v;
	unsigned long r, i;
	size_t len;
	int fd = new_queue("ops"), ret;

	for (r = 0; r < rounds; r++) {
		t0 = now_ns();
		for (i = 0; i < k; i++)
			add_key(fd, keys + i * KEY_LEN);
		t[0] += now_ns() - t0;
		t0 = now_ns();
		for (i = 0; i < k; i++)
			if (kwq_add(fd, keys + i * KEY_LEN, KEY_LEN) != KWQ_ADD_DUPLICATE)
				die("ops: re-add is not a duplicate");
		t[1] += now_ns() - t0;
		t0 = now_ns();
		for (i = 0; i < k; i++) {
			ret = kwq_get(fd, got, sizeof(got), &len, 0);
			if (ret || len != KEY_LEN || memcmp(got, keys + i * KEY_LEN, KEY_LEN))
				die("ops get: %s", ret ? strerror(-ret) : "wrong key");
		}
		t[2] += now_ns() - t0;
		t0 = now_ns();
		for (i = 0; i < k; i++)
			if (kwq_done(fd, keys + i * KEY_LEN, KEY_LEN) != KWQ_DONE_FINISHED)
				die("ops: done failed");
		t[3] += now_ns() - t0;
		t0 = now_ns();
		for (i = 0; i < k; i++) {
			memset(&v, 0, sizeof(v));
			if (ioctl(fd, KWQ_IOC_VERSION, &v))
				die("KWQ_IOC_VERSION: %s", strerror(errno));
		}
		t[4] += now_ns() - t0;
	}
	end_queue(fd);
	free(keys);
	result("op.add_new", (double)t[0] / (rounds * k), "ns/call");
	result("op.add_dup", (double)t[1] / (rounds * k), "ns/call");
	result("op.get", (double)t[2] / (rounds * k), "ns/call");
	result("op.done", (double)t[3] / (rounds * k), "ns/call");
	result("op.floor", (double)t[4] / (rounds * k), "ns/call");
	return 0;
}

/*
 * Adds of one queued key, over and over: the duplicate add alone, for a
 * profile (scripts/bench-ab.sh --perf dup).
 */
static int cmd_dup(int argc, char **argv)
{
	unsigned long n = argc > 0 ? num(argv[0]) : 100000, i;
	char *key = mkkeys(1);
	uint64_t t0;
	int fd = new_queue("dup");

	add_key(fd, key);
	t0 = now_ns();
	for (i = 0; i < n; i++)
		if (kwq_add(fd, key, KEY_LEN) != KWQ_ADD_DUPLICATE)
			die("dup: re-add is not a duplicate");
	result("op.add_dup_one", (double)(now_ns() - t0) / n, "ns/call");
	end_queue(fd);
	free(key);
	return 0;
}

/*
 * Payloads, in rounds of @k keys in the same loop: an add of a new key on
 * a plain queue (KWQ_IOC_ADD, and KWQ_IOC_ADD_EX without a payload)
 * against one with a 64-byte payload on a payload queue, an add that
 * replaces a queued key's payload, and the two gets.
 */
#define PAYLOAD_LEN	64

static int cmd_payload(int argc, char **argv)
{
	unsigned long rounds = argc > 0 ? num(argv[0]) : 40, k = argc > 1 ? num(argv[1]) : 500;
	char *keys = mkkeys(k), got[KWQ_KEY_MAX], pl[PAYLOAD_LEN], pgot[PAYLOAD_LEN];
	struct kwq_ioc_create c;
	uint64_t t[6] = { 0 }, t0;
	int plain = new_queue("plplain"), fd, ret;
	unsigned long r, i;
	size_t len, plen;

	memset(&c, 0, sizeof(c));
	snprintf((char *)c.name, sizeof(c.name), "bench-payload-%d", (int)getpid());
	c.mode = 0600;
	c.payload_max = PAYLOAD_LEN;
	fd = kwq_create_ex(&c);
	if (fd < 0)
		die("create a payload queue: %s", strerror(-fd));
	memset(pl, 'p', sizeof(pl));
	for (r = 0; r < rounds; r++) {
		t0 = now_ns();
		for (i = 0; i < k; i++)
			if (kwq_add(plain, keys + i * KEY_LEN, KEY_LEN) != KWQ_ADD_QUEUED)
				die("payload: plain add");
		t[0] += now_ns() - t0;
		t0 = now_ns();
		for (i = 0; i < k; i++)
			if (kwq_add_payload(fd, keys + i * KEY_LEN, KEY_LEN, pl, sizeof(pl)) !=
			    KWQ_ADD_QUEUED)
				die("payload: add with a payload");
		t[1] += now_ns() - t0;
		t0 = now_ns();
		for (i = 0; i < k; i++)
			if (kwq_add_payload(fd, keys + i * KEY_LEN, KEY_LEN, pl, sizeof(pl)) !=
			    KWQ_ADD_DUPLICATE)
				die("payload: replacing add");
		t[2] += now_ns() - t0;
		t0 = now_ns();
		for (i = 0; i < k; i++)
			if (kwq_get(plain, got, sizeof(got), &len, 0))
				die("payload: plain get");
		t[3] += now_ns() - t0;
		t0 = now_ns();
		for (i = 0; i < k; i++) {
			ret = kwq_get_payload(fd, got, sizeof(got), &len, pgot, sizeof(pgot), &plen,
					      0, 0, NULL);
			if (ret || plen != PAYLOAD_LEN)
				die("payload: get with the payload: %d", ret);
		}
		t[4] += now_ns() - t0;
		for (i = 0; i < k; i++)
			if (kwq_done(plain, keys + i * KEY_LEN, KEY_LEN) < 0 ||
			    kwq_done(fd, keys + i * KEY_LEN, KEY_LEN) < 0)
				die("payload: done");
		t0 = now_ns();
		for (i = 0; i < k; i++)
			if (kwq_add_ex(plain, keys + i * KEY_LEN, KEY_LEN, NULL) != KWQ_ADD_QUEUED)
				die("payload: add-ex without a payload");
		t[5] += now_ns() - t0;
		for (i = 0; i < k; i++)
			if (kwq_get(plain, got, sizeof(got), &len, 0) || kwq_done(plain, got, len) < 0)
				die("payload: get and done");
	}
	end_queue(fd);
	end_queue(plain);
	free(keys);
	result("payload.add_plain", (double)t[0] / (rounds * k), "ns/call");
	result("payload.add_ex", (double)t[5] / (rounds * k), "ns/call");
	result("payload.add_64", (double)t[1] / (rounds * k), "ns/call");
	result("payload.replace_64", (double)t[2] / (rounds * k), "ns/call");
	result("payload.get_plain", (double)t[3] / (rounds * k), "ns/call");
	result("payload.get_64", (double)t[4] / (rounds * k), "ns/call");
	return 0;
}

struct worker {
	pthread_t tid;
	pthread_barrier_t *go;
	unsigned long first, count;	/* producers: keys [first, first+count) */
	unsigned long batch;
	const char *keys;		/* all keys, made before the start */
	unsigned long hot;		/* dedup: number of hot keys */
	unsigned long done;		/* consumers: keys done */
	uint64_t start;			/* when it passed the start barrier */
	uint64_t seed;
	mqd_t mq;
	int fd;
};

/* Wait for the common start; note when this worker passed it. */
static void worker_start(struct worker *w)
{
	pthread_barrier_wait(w->go);
	w->start = now_ns();
}

/*
 * The start of a run of threads: the earliest start of @w[0..n), read once
 * they were joined. Not the main thread's clock after the barrier: that
 * read can come after the workers ran (a short run then reads as absurdly
 * fast: 3e9 adds/s in one round of make bench's hot keys).
 */
static uint64_t workers_start(const struct worker *w, unsigned long n)
{
	uint64_t t = UINT64_MAX;
	unsigned long i;

	for (i = 0; i < n; i++)
		if (w[i].start < t)
			t = w[i].start;
	return t;
}

static void *producer(void *arg)
{
	struct worker *w = arg;
	unsigned long i;

	worker_start(w);
	for (i = 0; i < w->count; i++)
		add_key(w->fd, w->keys + (w->first + i) * KEY_LEN);
	return NULL;
}

static void *consumer(void *arg)
{
	struct worker *w = arg;
	char got[KWQ_KEY_MAX];
	size_t len;
	int ret;

	worker_start(w);
	for (;;) {
		ret = kwq_get(w->fd, got, sizeof(got), &len, -1);
		if (ret == -ESHUTDOWN)
			break;
		if (ret)
			die("consumer get: %s", strerror(-ret));
		ret = kwq_done(w->fd, got, len);
		if (ret < 0)
			die("consumer done: %s", strerror(-ret));
		w->done++;
	}
	return NULL;
}

/* A consumer as a worker loop: each done and the next get in one call. */
static void *consumer_dg(void *arg)
{
	struct worker *w = arg;
	char got[KWQ_KEY_MAX];
	int ret, done;
	size_t len;

	worker_start(w);
	ret = kwq_get(w->fd, got, sizeof(got), &len, -1);
	while (!ret) {
		/* The done's key is read before the get writes the buffer. */
		ret = kwq_done_get(w->fd, got, len, &done, got, sizeof(got), &len, -1);
		if (done < 0)
			die("consumer done_get: %s", strerror(-ret));
		w->done++;
	}
	if (ret != -ESHUTDOWN)
		die("consumer done_get: %s", strerror(-ret));
	return NULL;
}

/*
 * w->count adds in batches of w->batch, key j of the batch from @pick
 * (NULL: the worker's keys in order, from w->first).
 */
static void add_batches(struct worker *w, const char *(*pick)(struct worker *w))
{
	struct kwq_batch_entry *e = calloc(w->batch, sizeof(*e));
	unsigned long i, j, n, off;
	int ret;

	if (!e)
		die("out of memory");
	worker_start(w);
	for (i = 0; i < w->count; i += n) {
		n = w->count - i < w->batch ? w->count - i : w->batch;
		for (j = 0; j < n; j++) {
			e[j].key_ptr = (uintptr_t)(pick ? pick(w) :
						   w->keys + (w->first + i + j) * KEY_LEN);
			e[j].key_len = KEY_LEN;
		}
		for (off = 0; off < n; off += ret) {
			ret = kwq_add_batch(w->fd, e + off, n - off, 0);
			if (ret == -ENOSPC) {
				sched_yield();
				ret = 0;
			} else if (ret < 0) {
				die("add batch: %s", strerror(-ret));
			}
		}
	}
	free(e);
}

static void *batch_producer(void *arg)
{
	add_batches(arg, NULL);
	return NULL;
}

static void *batch_consumer(void *arg)
{
	struct worker *w = arg;
	struct kwq_batch_entry *e = calloc(w->batch, sizeof(*e));
	char *bufs = malloc(w->batch * KWQ_KEY_MAX);
	unsigned long j;
	int n, ret, off;

	if (!e || !bufs)
		die("out of memory");
	for (j = 0; j < w->batch; j++)
		e[j].key_ptr = (uintptr_t)(bufs + j * KWQ_KEY_MAX);
	worker_start(w);
	for (;;) {
		for (j = 0; j < w->batch; j++)
			e[j].key_len = KWQ_KEY_MAX;
		n = kwq_get_batch(w->fd, e, w->batch, -1, 0);
		if (n == -ESHUTDOWN)
			break;
		if (n < 0)
			die("get batch: %s", strerror(-n));
		for (off = 0; off < n; off += ret) {
			ret = kwq_done_batch(w->fd, e + off, n - off);
			if (ret < 0)
				die("done batch: %s", strerror(-ret));
		}
		w->done += n;
	}
	free(e);
	free(bufs);
	return NULL;
}

/*
 * P producers add N distinct keys between them while C consumers get and
 * done them; once the producers finish, the queue is shut down and the
 * consumers stop when it is empty. Wall time from the common start to the
 * last done.
 */
static void run_pc(const char *name, unsigned long p, unsigned long c, unsigned long n,
		   unsigned long batch, bool done_get)
{
	struct worker *w = calloc(p + c, sizeof(*w));
	pthread_barrier_t go;
	unsigned long i, total = 0;
	uint64_t t0, t1, c0, c1;
	char label[96], *keys = mkkeys(n);
	int fd = new_queue("pc"), ret;

	if (!w || !p || !c)
		die("bad thread counts");
	pthread_barrier_init(&go, NULL, (unsigned int)(p + c + 1));
	for (i = 0; i < p + c; i++) {
		w[i].go = &go;
		w[i].batch = batch;
		w[i].keys = keys;
		w[i].fd = open_queue(i < p ? O_WRONLY : O_RDONLY);
		if (i < p) {
			w[i].first = n / p * i;
			w[i].count = i == p - 1 ? n - w[i].first : n / p;
		}
		if (pthread_create(&w[i].tid, NULL,
				   batch ? (i < p ? batch_producer : batch_consumer) :
				   i < p ? producer : done_get ? consumer_dg : consumer, &w[i]))
			die("pthread_create");
	}
	/* Before the barrier: no worker runs its loop until it opens. */
	c0 = cpu_ns();
	pthread_barrier_wait(&go);
	for (i = 0; i < p; i++)
		pthread_join(w[i].tid, NULL);
	ret = kwq_shutdown(fd);
	if (ret)
		die("shutdown: %s", strerror(-ret));
	for (i = p; i < p + c; i++) {
		pthread_join(w[i].tid, NULL);
		total += w[i].done;
	}
	t1 = now_ns();
	c1 = cpu_ns();
	t0 = workers_start(w, p + c);
	if (total != n)
		die("%s: %lu keys done, %lu added", name, total, n);
	for (i = 0; i < p + c; i++)
		close(w[i].fd);
	end_queue(fd);
	pthread_barrier_destroy(&go);
	free(w);
	free(keys);
	if (batch) {
		result(name, (double)n * NSEC / (double)(t1 - t0), "keys/s");
		return;
	}
	result(name, (double)(t1 - t0) / n, "ns/key");
	snprintf(label, sizeof(label), "%s.cpu", name);
	result(label, (double)(c1 - c0) / n, "ns/key");
	snprintf(label, sizeof(label), "%s.rate", name);
	result(label, (double)n * NSEC / (double)(t1 - t0), "keys/s");
}

static int cmd_cycle(int argc, char **argv)
{
	unsigned long p, c, n;
	char name[64];

	bool dg = argc > 3 && !strcmp(argv[3], "dg");

	if (argc < 3 || (argc > 3 && !dg))
		die("usage: cycle P C N [dg]");
	p = num(argv[0]);
	c = num(argv[1]);
	n = num(argv[2]);
	snprintf(name, sizeof(name), "cycle.%lup%luc%s", p, c, dg ? ".dg" : "");
	run_pc(name, p, c, n, 0, dg);
	return 0;
}

/* ---- 3. batches --------------------------------------------------------- */

static int cmd_batch(int argc, char **argv)
{
	unsigned long b, n;
	char name[64];

	if (argc < 2)
		die("usage: batch B N");
	b = num(argv[0]);
	n = num(argv[1]);
	if (!b || b > KWQ_BATCH_MAX)
		die("batch size 1..%d", KWQ_BATCH_MAX);
	snprintf(name, sizeof(name), "batch.1p1c.%lu", b);
	run_pc(name, 1, 1, n, b, false);
	return 0;
}

/* add B, get B, done B in one thread: the CPU cost per key of batches. */
static int cmd_batch1(int argc, char **argv)
{
	unsigned long b, n, i, j, m;
	struct kwq_batch_entry *e;
	char *keys, *bufs, name[64];
	uint64_t t0, t1;
	int fd, ret, off;

	if (argc < 2)
		die("usage: batch1 B N");
	b = num(argv[0]);
	n = num(argv[1]);
	if (!b || b > KWQ_BATCH_MAX)
		die("batch size 1..%d", KWQ_BATCH_MAX);
	e = calloc(b, sizeof(*e));
	keys = mkkeys(n);
	bufs = malloc(b * KWQ_KEY_MAX);
	if (!e || !bufs)
		die("out of memory");
	fd = new_queue("b1");
	t0 = now_ns();
	for (i = 0; i < n; i += m) {
		m = n - i < b ? n - i : b;
		for (j = 0; j < m; j++) {
			e[j].key_ptr = (uintptr_t)(keys + (i + j) * KEY_LEN);
			e[j].key_len = KEY_LEN;
		}
		for (off = 0; off < (int)m; off += ret) {
			ret = kwq_add_batch(fd, e + off, m - off, 0);
			if (ret < 0)
				die("add batch: %s", strerror(-ret));
		}
		for (j = 0; j < m; j++) {
			e[j].key_ptr = (uintptr_t)(bufs + j * KWQ_KEY_MAX);
			e[j].key_len = KWQ_KEY_MAX;
		}
		for (off = 0; off < (int)m; off += ret) {
			ret = kwq_get_batch(fd, e + off, m - off, 0, 0);
			if (ret < 0)
				die("get batch: %s", strerror(-ret));
		}
		for (off = 0; off < (int)m; off += ret) {
			ret = kwq_done_batch(fd, e + off, m - off);
			if (ret < 0)
				die("done batch: %s", strerror(-ret));
		}
	}
	t1 = now_ns();
	end_queue(fd);
	free(e);
	free(keys);
	free(bufs);
	snprintf(name, sizeof(name), "batch.1t.%lu", b);
	result(name, (double)n * NSEC / (double)(t1 - t0), "keys/s");
	return 0;
}

/* ---- 5. POSIX message queues ------------------------------------------- */

#define MQ_NAME "/kwq-bench"
#define MQ_DEPTH 1024

static mqd_t mq_new(void)
{
	struct mq_attr a = { .mq_maxmsg = MQ_DEPTH, .mq_msgsize = KEY_LEN };
	struct rlimit rl = { RLIM_INFINITY, RLIM_INFINITY };
	mqd_t mq;

	setrlimit(RLIMIT_MSGQUEUE, &rl);
	mq_unlink(MQ_NAME);
	mq = mq_open(MQ_NAME, O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600, &a);
	if (mq == (mqd_t)-1)
		die("mq_open: %s", strerror(errno));
	return mq;
}

static int cmd_mq1(int argc, char **argv)
{
	unsigned long n = argc > 0 ? num(argv[0]) : 50000, i;
	char *keys = mkkeys(n), got[KEY_LEN];
	uint64_t t0, t1;
	mqd_t mq = mq_new();

	t0 = now_ns();
	for (i = 0; i < n; i++) {
		if (mq_send(mq, keys + i * KEY_LEN, KEY_LEN, 0))
			die("mq_send: %s", strerror(errno));
		if (mq_receive(mq, got, KEY_LEN, NULL) != KEY_LEN)
			die("mq_receive: %s", strerror(errno));
	}
	t1 = now_ns();
	mq_close(mq);
	mq_unlink(MQ_NAME);
	free(keys);
	result("mq.1t", (double)(t1 - t0) / n, "ns/key");
	result("mq.1t.rate", (double)n * NSEC / (double)(t1 - t0), "keys/s");
	return 0;
}

static void *mq_producer(void *arg)
{
	struct worker *w = arg;
	unsigned long i;

	worker_start(w);
	for (i = 0; i < w->count; i++) {
		if (mq_send(w->mq, w->keys + (w->first + i) * KEY_LEN, KEY_LEN, 0))
			die("mq_send: %s", strerror(errno));
	}
	return NULL;
}

static void *mq_consumer(void *arg)
{
	struct worker *w = arg;
	char got[KEY_LEN];

	worker_start(w);
	for (;;) {
		if (mq_receive(w->mq, got, KEY_LEN, NULL) != KEY_LEN)
			die("mq_receive: %s", strerror(errno));
		if (got[0] == 'X')	/* the stop message */
			break;
		w->done++;
	}
	return NULL;
}

static int cmd_mq(int argc, char **argv)
{
	unsigned long p, c, n, i, total = 0;
	struct worker *w;
	pthread_barrier_t go;
	char stop[KEY_LEN], name[64], *keys;
	uint64_t t0, t1, c0, c1;
	mqd_t mq;

	if (argc == 1)
		return cmd_mq1(argc, argv);
	if (argc < 3)
		die("usage: mq P C N");
	p = num(argv[0]);
	c = num(argv[1]);
	n = num(argv[2]);
	w = calloc(p + c, sizeof(*w));
	if (!w || !p || !c)
		die("bad thread counts");
	mq = mq_new();
	keys = mkkeys(n);
	memset(stop, 'X', sizeof(stop));
	pthread_barrier_init(&go, NULL, (unsigned int)(p + c + 1));
	for (i = 0; i < p + c; i++) {
		w[i].go = &go;
		w[i].mq = mq;
		w[i].keys = keys;
		if (i < p) {
			w[i].first = n / p * i;
			w[i].count = i == p - 1 ? n - w[i].first : n / p;
		}
		if (pthread_create(&w[i].tid, NULL, i < p ? mq_producer : mq_consumer, &w[i]))
			die("pthread_create");
	}
	c0 = cpu_ns();
	pthread_barrier_wait(&go);
	for (i = 0; i < p; i++)
		pthread_join(w[i].tid, NULL);
	for (i = 0; i < c; i++)
		if (mq_send(mq, stop, KEY_LEN, 0))
			die("mq_send: %s", strerror(errno));
	for (i = p; i < p + c; i++) {
		pthread_join(w[i].tid, NULL);
		total += w[i].done;
	}
	t1 = now_ns();
	c1 = cpu_ns();
	t0 = workers_start(w, p + c);
	if (total != n)
		die("mq: %lu received, %lu sent", total, n);
	mq_close(mq);
	mq_unlink(MQ_NAME);
	pthread_barrier_destroy(&go);
	free(w);
	free(keys);
	snprintf(name, sizeof(name), "mq.%lup%luc", p, c);
	result(name, (double)(t1 - t0) / n, "ns/key");
	snprintf(name, sizeof(name), "mq.%lup%luc.cpu", p, c);
	result(name, (double)(c1 - c0) / n, "ns/key");
	snprintf(name, sizeof(name), "mq.%lup%luc.rate", p, c);
	result(name, (double)n * NSEC / (double)(t1 - t0), "keys/s");
	return 0;
}

/* ---- 6. delay precision ------------------------------------------------- */

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Nearest-rank percentile of sorted values. */
static int64_t pct(const int64_t *v, unsigned long n, double p)
{
	unsigned long k = (unsigned long)(p / 100.0 * (double)n + 0.999999);

	if (k < 1)
		k = 1;
	if (k > n)
		k = n;
	return v[k - 1];
}

/* Print p50/p99/max in µs, and the CDF (0..100 %) for the plot. */
static void lateness_report(const char *name, int64_t *late, unsigned long n)
{
	char label[64];
	unsigned long neg = 0, i;
	int p;

	for (i = 0; i < n; i++)
		neg += late[i] < 0;
	qsort(late, n, sizeof(*late), cmp_i64);
	snprintf(label, sizeof(label), "%s.p50", name);
	result(label, pct(late, n, 50) / 1e3, "us");
	snprintf(label, sizeof(label), "%s.p99", name);
	result(label, pct(late, n, 99) / 1e3, "us");
	snprintf(label, sizeof(label), "%s.max", name);
	result(label, late[n - 1] / 1e3, "us");
	snprintf(label, sizeof(label), "%s.early", name);
	result(label, (double)neg, "keys");
	for (p = 0; p <= 1000; p += 5)
		printf("KWQB-CDF %s %.1f %.3f\n", name, p / 10.0,
		       (p ? pct(late, n, p / 10.0) : late[0]) / 1e3);
}

struct delay_ctx {
	pthread_barrier_t *go;
	int fd;
	unsigned long n;
	uint64_t *got_at;
};

/*
 * The consumer takes whatever is ready in one get batch and stamps it with
 * one clock read, so that under emulation its own per-key cost does not
 * pile up into the lateness: what is measured is the timer path.
 */
#define DELAY_BATCH 256

static void *delay_consumer(void *arg)
{
	struct delay_ctx *d = arg;
	struct kwq_batch_entry e[DELAY_BATCH];
	static char bufs[DELAY_BATCH][KEY_LEN];
	unsigned long got = 0, k;
	uint64_t t;
	int m, j, off, ret;

	for (j = 0; j < DELAY_BATCH; j++) {
		e[j].key_ptr = (uintptr_t)bufs[j];
		e[j].key_len = KEY_LEN;
	}
	pthread_barrier_wait(d->go);
	while (got < d->n) {
		m = kwq_get_batch(d->fd, e, DELAY_BATCH, -1, 0);
		if (m < 0)
			die("delay get batch: %s", strerror(-m));
		t = now_ns();
		for (j = 0; j < m; j++) {
			k = keyidx(bufs[j]);
			if (k >= d->n)
				die("delay: bad key");
			d->got_at[k] = t;
		}
		for (off = 0; off < m; off += ret) {
			ret = kwq_done_batch(d->fd, e + off, m - off);
			if (ret < 0)
				die("delay done batch: %s", strerror(-ret));
		}
		got += m;
		/* A get writes the lengths of the entries it filled: give them room again. */
		for (j = 0; j < m; j++)
			e[j].key_len = KEY_LEN;
	}
	return NULL;
}

static const char *delay_name = "delay";
/* Added to every delay of `delay`: a run whose producer is done before the first deadline. */
static uint64_t delay_lead_ns;

static void delay_args(int argc, char **argv, unsigned long *n, unsigned long *max_ms,
		       uint64_t *seed)
{
	if (argc > 3)
		delay_name = argv[3];
	if (argc > 4)
		delay_lead_ns = num(argv[4]) * 1000000ULL;
	*n = argc > 0 ? num(argv[0]) : 10000;
	*max_ms = argc > 1 ? num(argv[1]) : 100;
	*seed = (argc > 2 ? num(argv[2]) : 1) * 0x9e3779b97f4a7c15ULL + 1;
	if (!*n || *max_ms < 2)
		die("delay: N >= 1, MAX_MS >= 2");
}

/* Delays uniform in [1 ms, max_ms], µs resolution. */
static uint64_t delay_of(uint64_t *seed, unsigned long max_ms)
{
	return 1000000ULL + xorshift(seed) % ((max_ms - 1) * 1000ULL + 1) * 1000ULL;
}

static int cmd_delay(int argc, char **argv)
{
	unsigned long n, max_ms, i;
	uint64_t seed, *due, d, t, t_add;
	int64_t *late;
	pthread_barrier_t go;
	struct delay_ctx ctx;
	pthread_t tid;
	char key[KEY_LEN], name[64];
	int fd, ret;

	delay_args(argc, argv, &n, &max_ms, &seed);
	due = calloc(n, sizeof(*due));
	late = calloc(n, sizeof(*late));
	ctx.got_at = calloc(n, sizeof(*ctx.got_at));
	if (!due || !late || !ctx.got_at)
		die("out of memory");
	fd = new_queue("delay");
	pthread_barrier_init(&go, NULL, 2);
	ctx.go = &go;
	ctx.n = n;
	ctx.fd = open_queue(O_RDONLY);
	if (pthread_create(&tid, NULL, delay_consumer, &ctx))
		die("pthread_create");
	pthread_barrier_wait(&go);
	t_add = now_ns();
	for (i = 0; i < n; i++) {
		mkkey(key, i);
		d = delay_lead_ns + delay_of(&seed, max_ms);
		/* The kernel's deadline is later than this: lateness >= 0. */
		due[i] = now_ns() + d;
		ret = kwq_add_after(fd, key, KEY_LEN, (int64_t)d, 0);
		if (ret != KWQ_ADD_WAITING)
			die("add_after: %d", ret);
	}
	t = now_ns();
	pthread_join(tid, NULL);
	for (i = 0; i < n; i++)
		late[i] = (int64_t)(ctx.got_at[i] - due[i]);
	snprintf(name, sizeof(name), "%s.addtime", delay_name);
	result(name, (double)(t - t_add) / 1e6, "ms");
	snprintf(name, sizeof(name), "%s.kwq", delay_name);
	lateness_report(name, late, n);
	close(ctx.fd);
	end_queue(fd);
	pthread_barrier_destroy(&go);
	free(due);
	free(late);
	free(ctx.got_at);
	return 0;
}

/*
 * Baseline: the same deadlines, sorted, slept to by clock_nanosleep
 * (TIMER_ABSTIME, 1 ns timer slack) as a user-space delaying queue's timer
 * thread would (client-go's waitingLoop): after each wake-up, every key
 * that is due is taken with one clock read.
 */
static int cmd_delay_base(int argc, char **argv)
{
	unsigned long n, max_ms, i;
	uint64_t seed, *due, t0, t;
	int64_t *late;
	struct timespec ts;
	char name[64];

	delay_args(argc, argv, &n, &max_ms, &seed);
	due = calloc(n, sizeof(*due));
	late = calloc(n, sizeof(*late));
	if (!due || !late)
		die("out of memory");
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	t0 = now_ns() + 1000000;
	for (i = 0; i < n; i++)
		due[i] = t0 + delay_of(&seed, max_ms);
	qsort(due, n, sizeof(*due), cmp_u64);
	for (i = 0; i < n;) {
		ts.tv_sec = (time_t)(due[i] / NSEC);
		ts.tv_nsec = (long)(due[i] % NSEC);
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
			;
		t = now_ns();
		for (; i < n && due[i] <= t; i++)
			late[i] = (int64_t)(t - due[i]);
	}
	snprintf(name, sizeof(name), "%s.base", delay_name);
	lateness_report(name, late, n);
	free(due);
	free(late);
	return 0;
}

/* ---- 7. scale and memory ------------------------------------------------ */

/* A /proc/meminfo field in kB. */
static long meminfo(const char *field)
{
	FILE *f = fopen("/proc/meminfo", "r");
	char line[256];
	size_t fl = strlen(field);
	long v = -1;

	if (!f)
		die("/proc/meminfo: %s", strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, field, fl) && line[fl] == ':') {
			v = strtol(line + fl + 1, NULL, 10);
			break;
		}
	}
	fclose(f);
	if (v < 0)
		die("/proc/meminfo has no %s", field);
	return v;
}

static const unsigned long scale_points[] = {
	1000, 3000, 10000, 30000, 100000, 300000, 1000000,
};
#define SCALE_WINDOW 1000

/* One /proc/slabinfo line: a cache and the bytes of its active objects. */
struct slab_ent {
	char name[64];
	long long bytes;
};
#define SLAB_MAX 1024

static int slab_read(struct slab_ent *s)
{
	FILE *f = fopen("/proc/slabinfo", "r");
	char line[512];
	long long active, total, size;
	int n = 0;

	if (!f)
		return 0;
	while (n < SLAB_MAX && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%63s %lld %lld %lld", s[n].name, &active, &total, &size) != 4)
			continue;
		s[n++].bytes = active * size;
	}
	fclose(f);
	return n;
}

static struct slab_ent slab_before[SLAB_MAX], slab_after[SLAB_MAX];
static int n_slab_before;

static void mem_begin(long *free0, long *slab0)
{
	*free0 = meminfo("MemFree");
	*slab0 = meminfo("Slab");
	n_slab_before = slab_read(slab_before);
}

/*
 * Memory per key three ways: the drop of MemFree (everything: slab
 * objects, the hash table's bucket array, page tables), the growth of
 * Slab in /proc/meminfo (slab pages), and the growth of the active objects
 * in /proc/slabinfo (object bytes), with the cache that grew most.
 */
static void mem_report(const char *what, long free0, long slab0, unsigned long n)
{
	long free1 = meminfo("MemFree"), slab1 = meminfo("Slab");
	int n_after = slab_read(slab_after), i, j;
	long long sum = 0, best = 0, d;
	const char *best_name = "-";
	char label[64];

	for (i = 0; i < n_after; i++) {
		d = slab_after[i].bytes;
		for (j = 0; j < n_slab_before; j++) {
			if (!strcmp(slab_before[j].name, slab_after[i].name)) {
				d -= slab_before[j].bytes;
				break;
			}
		}
		sum += d;
		if (d > best) {
			best = d;
			best_name = slab_after[i].name;
		}
	}
	snprintf(label, sizeof(label), "mem.%s.total", what);
	result(label, (double)(free0 - free1) * 1024.0 / n, "bytes/key");
	snprintf(label, sizeof(label), "mem.%s.slab", what);
	result(label, (double)(slab1 - slab0) * 1024.0 / n, "bytes/key");
	if (n_after) {
		snprintf(label, sizeof(label), "mem.%s.objects", what);
		result(label, (double)sum / n, "bytes/key");
		printf("KWQB-INFO mem.%s.cache %s %.1f bytes/key\n", what, best_name,
		       (double)best / n);
	}
}

/* Windows timed at each size of scale-wait; the median is reported. */
#define SCALE_WAIT_TRIES 5

/*
 * Fill a queue with add-after keys (deadlines 1-2 h away, random order)
 * and time a window of SCALE_WINDOW more at each size in scale_points:
 * SCALE_WAIT_TRIES windows, all but the last cancelled again (untimed),
 * and the median reported, since one window lasts a few ms and one
 * hiccup of an emulated vCPU doubles it.
 */
static int cmd_scale_wait(int argc, char **argv)
{
	unsigned long maxn = argc > 0 ? num(argv[0]) : 1000000, n = 0, p, j;
	uint64_t seed = (argc > 1 ? num(argv[1]) : 1) * 0x9e3779b97f4a7c15ULL + 7, t0, t1;
	static char win[SCALE_WINDOW][KEY_LEN];
	int64_t delay[SCALE_WINDOW];
	uint64_t took[SCALE_WAIT_TRIES];
	long free0, slab0;
	char key[KEY_LEN], name[64];
	int fd, ret, t;

	mem_begin(&free0, &slab0);
	fd = new_queue("scalew");
	for (p = 0; p < sizeof(scale_points) / sizeof(scale_points[0]); p++) {
		if (scale_points[p] > maxn)
			break;
		for (; n < scale_points[p]; n++) {
			mkkey(key, n);
			ret = kwq_add_after(fd, key, KEY_LEN,
					    (int64_t)(3600 * NSEC + xorshift(&seed) % (3600 * NSEC)), 0);
			if (ret != KWQ_ADD_WAITING)
				die("fill add_after at %lu: %d", n, ret);
		}
		for (t = 0; t < SCALE_WAIT_TRIES; t++) {
			for (j = 0; j < SCALE_WINDOW; j++) {
				mkkey(win[j], n + j);
				delay[j] = (int64_t)(3600 * NSEC + xorshift(&seed) % (3600 * NSEC));
			}
			t0 = now_ns();
			for (j = 0; j < SCALE_WINDOW; j++) {
				ret = kwq_add_after(fd, win[j], KEY_LEN, delay[j], 0);
				if (ret != KWQ_ADD_WAITING)
					die("add_after at %lu: %d", n + j, ret);
			}
			t1 = now_ns();
			took[t] = t1 - t0;
			for (j = 0; t + 1 < SCALE_WAIT_TRIES && j < SCALE_WINDOW; j++) {
				if (kwq_cancel(fd, win[j], KEY_LEN) != 1)
					die("cancel at %lu", n + j);
			}
		}
		n += SCALE_WINDOW;
		qsort(took, SCALE_WAIT_TRIES, sizeof(took[0]), cmp_u64);
		snprintf(name, sizeof(name), "scale.add_after@%lu", scale_points[p]);
		result(name, (double)took[SCALE_WAIT_TRIES / 2] / SCALE_WINDOW, "ns/key");
		printf("KWQB-SCALE add_after %lu %.1f\n", scale_points[p],
		       (double)took[SCALE_WAIT_TRIES / 2] / SCALE_WINDOW);
	}
	mem_report("waiting", free0, slab0, n);
	end_queue(fd);
	return 0;
}

/* The same for plain adds: the queue holds N queued keys (filled by batches). */
static int cmd_scale_queue(int argc, char **argv)
{
	unsigned long maxn = argc > 0 ? num(argv[0]) : 1000000, n = 0, p, j, m;
	struct kwq_batch_entry e[512];
	static char keys[512][KEY_LEN], win[SCALE_WINDOW][KEY_LEN];
	char name[64];
	long free0, slab0;
	uint64_t t0, t1;
	int fd, ret, off;

	mem_begin(&free0, &slab0);
	fd = new_queue("scaleq");
	for (p = 0; p < sizeof(scale_points) / sizeof(scale_points[0]); p++) {
		if (scale_points[p] > maxn)
			break;
		while (n < scale_points[p]) {
			m = scale_points[p] - n < 512 ? scale_points[p] - n : 512;
			for (j = 0; j < m; j++) {
				mkkey(keys[j], n + j);
				e[j].key_ptr = (uintptr_t)keys[j];
				e[j].key_len = KEY_LEN;
			}
			for (off = 0; off < (int)m; off += ret) {
				ret = kwq_add_batch(fd, e + off, m - off, 0);
				if (ret < 0)
					die("fill add batch at %lu: %s", n, strerror(-ret));
			}
			n += m;
		}
		for (j = 0; j < SCALE_WINDOW; j++)
			mkkey(win[j], n + j);
		t0 = now_ns();
		for (j = 0; j < SCALE_WINDOW; j++) {
			ret = kwq_add(fd, win[j], KEY_LEN);
			if (ret != KWQ_ADD_QUEUED)
				die("add at %lu: %d", n + j, ret);
		}
		t1 = now_ns();
		n += SCALE_WINDOW;
		snprintf(name, sizeof(name), "scale.add@%lu", scale_points[p]);
		result(name, (double)(t1 - t0) / SCALE_WINDOW, "ns/key");
		printf("KWQB-SCALE add %lu %.1f\n", scale_points[p],
		       (double)(t1 - t0) / SCALE_WINDOW);
	}
	mem_report("queued", free0, slab0, n);
	end_queue(fd);
	return 0;
}

/* ---- 8. dedup-heavy ----------------------------------------------------- */

static void *dedup_producer(void *arg)
{
	struct worker *w = arg;
	unsigned long i;

	worker_start(w);
	for (i = 0; i < w->count; i++)
		add_key(w->fd, w->keys + xorshift(&w->seed) % w->hot * KEY_LEN);
	return NULL;
}

static const char *pick_hot(struct worker *w)
{
	return w->keys + xorshift(&w->seed) % w->hot * KEY_LEN;
}

/* The same adds, w->batch random hot keys per KWQ_IOC_ADD_BATCH. */
static void *dedup_batch_producer(void *arg)
{
	add_batches(arg, pick_hot);
	return NULL;
}

static int cmd_dedup(int argc, char **argv)
{
	unsigned long hot, p, c, adds, i, gets = 0, b = 1;
	char name[64], *end;
	struct kwq_stats st;
	struct worker *w;
	pthread_barrier_t go;
	uint64_t t0, t1;
	char *keys;
	int fd, ret;

	if (argc < 4)
		die("usage: dedup HOT P C ADDS [B]");
	hot = num(argv[0]);
	p = num(argv[1]);
	c = num(argv[2]);
	adds = num(argv[3]);
	if (argc > 4)
		b = num(argv[4]);
	w = calloc(p + c, sizeof(*w));
	if (!w || !p || !c || !hot)
		die("bad arguments");
	keys = mkkeys(hot);
	fd = new_queue("dedup");
	pthread_barrier_init(&go, NULL, (unsigned int)(p + c + 1));
	for (i = 0; i < p + c; i++) {
		w[i].go = &go;
		w[i].fd = open_queue(i < p ? O_WRONLY : O_RDONLY);
		w[i].count = adds;
		w[i].hot = hot;
		w[i].keys = keys;
		w[i].seed = 0x9e3779b97f4a7c15ULL * (i + 1);
		w[i].batch = b;
		if (pthread_create(&w[i].tid, NULL, i >= p ? consumer :
				   b > 1 ? dedup_batch_producer : dedup_producer, &w[i]))
			die("pthread_create");
	}
	pthread_barrier_wait(&go);
	for (i = 0; i < p; i++)
		pthread_join(w[i].tid, NULL);
	t1 = now_ns();
	/* The producers' run: the consumers' starts may not be written yet. */
	t0 = workers_start(w, p);
	ret = kwq_stats(fd, &st);
	if (ret)
		die("stats: %s", strerror(-ret));
	ret = kwq_shutdown(fd);
	if (ret)
		die("shutdown: %s", strerror(-ret));
	for (i = p; i < p + c; i++) {
		pthread_join(w[i].tid, NULL);
		gets += w[i].done;
		close(w[i].fd);
	}
	for (i = 0; i < p; i++)
		close(w[i].fd);
	end_queue(fd);
	pthread_barrier_destroy(&go);
	free(w);
	free(keys);
	/* dedup.* for single adds, dedup.bB.* for batches of B. */
	end = name + snprintf(name, sizeof(name), b > 1 ? "dedup.b%lu." : "dedup.", b);
	strcpy(end, "adds");
	result(name, (double)(p * adds) * NSEC / (double)(t1 - t0), "adds/s");
	strcpy(end, "dedup_pct");
	result(name, 100.0 * (double)st.dedups / (double)(st.adds + st.dedups), "%");
	strcpy(end, "runs_per_add");
	result(name, (double)gets / (double)(p * adds), "gets/add");
	return 0;
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*fn)(int argc, char **argv);
	} cmds[] = {
		{ "floor", cmd_floor }, { "cycle1", cmd_cycle1 }, { "ops", cmd_ops },
		{ "cycle1dg", cmd_cycle1dg },
		{ "cycle", cmd_cycle },
		{ "batch", cmd_batch }, { "batch1", cmd_batch1 }, { "mq1", cmd_mq1 },
		{ "mq", cmd_mq }, { "delay", cmd_delay }, { "delay-base", cmd_delay_base },
		{ "scale-wait", cmd_scale_wait }, { "scale-queue", cmd_scale_queue },
		{ "dedup", cmd_dedup }, { "payload", cmd_payload }, { "dup", cmd_dup },
	};
	size_t i;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 2)
		die("usage: kwq_bench COMMAND [ARGS] (see the comment at the top of kwq_bench.c)");
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(argv[1], cmds[i].name))
			return cmds[i].fn(argc - 2, argv + 2);
	die("unknown command %s", argv[1]);
	return 2;
}
