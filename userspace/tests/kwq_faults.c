// SPDX-License-Identifier: GPL-2.0
/*
 * kwq_faults: fault-injection sweep of /dev/kwq.
 *
 *   kwq_faults [--max N] [--only NAME] [--verbose]
 *
 * For each operation of a scripted scenario, fail its 1st, 2nd, 3rd, ...
 * fault-injection point in turn, until the operation runs through without
 * reaching the N-th point; then again failing the N-th point and every
 * later one (memory runs out there, so the kernel's fallbacks fail too).
 * The N-th point is chosen with the per-task /proc/thread-self/fail-nth
 * (CONFIG_FAULT_INJECTION): writing N makes the N-th fault-injection point
 * this thread reaches fail, and it reads back 0 once that happened. The
 * later ones fail through failslab's probability path restricted to this
 * thread (task-filter, /proc/thread-self/make-it-fail). With failslab
 * (CONFIG_FAILSLAB) every slab allocation is a point once
 * /sys/kernel/debug/failslab/ignore-gfp-wait is N (the default, Y, exempts
 * sleeping allocations). This program sets the knobs it needs for the run
 * and restores them.
 *
 * Each run of an operation starts from the same queue state (keys queued,
 * processing and dirty, waiting, backoff-only) and must end in one of:
 *  - the call failed with -ENOMEM (or another errno documented for it):
 *    then the queue's stats, the list of queues and the descriptors are
 *    exactly as before, and the same call without fault injection succeeds;
 *  - a batch stopped early (completed < count): then exactly the completed
 *    entries took effect and resubmitting the rest succeeds;
 *  - the call succeeded although the fault was injected (the kernel fell
 *    back, e.g. kmemleak's own metadata comes from its pool): "absorbed";
 *    the outcome must be the normal one.
 * Whatever happened, draining the queue afterwards (dones, a flushing
 * drain, gets, dones) must hand out exactly the expected keys, each once,
 * and leave no key record: nothing lost, nothing duplicated. kmemleak and
 * KASAN reports are caught by the harness.
 *
 * An operation that allocates with no fallback once memory runs out (its
 * @nomem) must fail with -ENOMEM in the second pass at least once, and a
 * full sweep must see some run fail with -ENOMEM: a sweep no injected
 * fault reached proves nothing.
 *
 * Prints TAP, one test point per operation and one for the whole sweep.
 * Without fail-nth or failslab it prints a single skipped test point.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "libkwq.h"
#include "tap.h"

#define QNAME		"kwqflt"
#define XNAME		"kwqflt-x"
#define FAILSLAB	"/sys/kernel/debug/failslab"
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define __stringify_1(x)	#x
#define __stringify(x)		__stringify_1(x)

static int nth_fd = -1;
static int mif_fd = -1;		/* /proc/thread-self/make-it-fail */
/* Operations with more points than this are sampled, not swept through. */
static unsigned int max_points = 64;
/* Fault points a run may pass beyond the baseline's (see sweep()). */
static const unsigned int slack = 32;
static bool verbose;

/* ---- fail-nth ----------------------------------------------------------- */

static void arm(unsigned int n)
{
	char b[16];
	int len = snprintf(b, sizeof(b), "%u", n);

	if (pwrite(nth_fd, b, (size_t)len, 0) != len) {
		printf("Bail out! write fail-nth: %s\n", strerror(errno));
		exit(1);
	}
}

/* Returns what is left of the count (0: the fault was injected) and clears it. */
static unsigned int disarm(void)
{
	char b[16] = "";
	ssize_t len = pread(nth_fd, b, sizeof(b) - 1, 0);

	if (len <= 0 || pwrite(nth_fd, "0", 1, 0) != 1) {
		printf("Bail out! fail-nth: %s\n", strerror(errno));
		exit(1);
	}
	return (unsigned int)strtoul(b, NULL, 10);
}

/* ---- failslab knobs ----------------------------------------------------- */

/*
 * What the run sets: sleeping allocations may fail, no report per failure,
 * and the probability path (used by FAIL_FIRST) only for tasks with
 * make-it-fail set, and only "times" times (0 between runs).
 */
static struct {
	const char *name, *value;
	char saved[24];
} knobs[] = {
	{ .name = "ignore-gfp-wait", .value = "N" },
	{ .name = "verbose", .value = "0" },
	{ .name = "task-filter", .value = "Y" },
	{ .name = "times", .value = "0" },
	{ .name = "interval", .value = "1" },
	{ .name = "space", .value = "0" },
	{ .name = "probability", .value = "100" },
};

static int knob_read(const char *name, char *buf, size_t n)
{
	char path[128];
	int fd, len;

	snprintf(path, sizeof(path), FAILSLAB "/%s", name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	len = (int)read(fd, buf, n - 1);
	close(fd);
	if (len < 0)
		return -errno;
	buf[len] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

static int knob_write(const char *name, const char *val)
{
	char path[128];
	int fd, ret = 0;

	snprintf(path, sizeof(path), FAILSLAB "/%s", name);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, val, strlen(val)) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

/* In reverse: probability goes back to its old value (0) first. */
static void knobs_restore(void)
{
	int i;

	for (i = (int)ARRAY_SIZE(knobs) - 1; i >= 0; i--)
		if (knobs[i].saved[0])
			knob_write(knobs[i].name, knobs[i].saved);
}

/* ---- small helpers (all outside fault injection) ----------------------- */

static int xioctl(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) < 0 ? -errno : 0;
}

static int dev_open(void)
{
	int fd = open(KWQ_DEFAULT_DEV, O_RDWR | O_CLOEXEC);

	if (fd < 0) {
		printf("Bail out! open %s: %s\n", KWQ_DEFAULT_DEV, strerror(errno));
		exit(1);
	}
	return fd;
}

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	int n = 0;

	if (!d)
		return -1;
	while ((de = readdir(d)))
		n += de->d_name[0] != '.';
	closedir(d);
	return n - 1;
}

static int count_queues(void)
{
	return kwq_list(NULL, 0);
}

static struct kwq_stats stats_of(int fd)
{
	struct kwq_stats st;

	memset(&st, 0, sizeof(st));
	st.size = sizeof(st);
	if (xioctl(fd, KWQ_IOC_STATS, &st))
		memset(&st, 0xff, sizeof(st));
	return st;
}

static int must(int ret, const char *what)
{
	if (ret < 0) {
		printf("Bail out! setup: %s: %s\n", what, strerror(-ret));
		exit(1);
	}
	return ret;
}

/* ---- the scenario ------------------------------------------------------- */

struct fx {
	int p;			/* owner and producer of QNAME */
	int c;			/* consumer: holds p/1 and p/2 (dirty) leased */
	int x;			/* a spare, detached descriptor */
	int newfd;		/* what open(2) returned */
	uint32_t result;	/* the call's reported outcome */
	char got[4][KWQ_KEY_MAX + 1];	/* keys the call took */
	struct kwq_batch_entry *e;	/* batch entries */
	unsigned int nent, from;
};

static const char *const batch_keys[] = { "n/1", "n/2", "n/3", "n/4", "q/1" };

/* A batch big enough to make the key table grow while it is added. */
#define BULK 100
static char bulk_keys[BULK][8];
static struct kwq_batch_entry entries[2 * BULK];

static int key_op(int fd, unsigned long cmd, const char *key, uint32_t flags, uint32_t *result)
{
	struct kwq_ioc_key k;
	int ret;

	memset(&k, 0, sizeof(k));
	k.key_ptr = (uintptr_t)key;
	k.key_len = (uint32_t)strlen(key);
	k.flags = flags;
	ret = xioctl(fd, cmd, &k);
	*result = k.result;
	return ret;
}

static int add_after(int fd, const char *key, int64_t delay, uint32_t flags, uint32_t *result)
{
	struct kwq_ioc_add_after a;
	int ret;

	memset(&a, 0, sizeof(a));
	a.key_ptr = (uintptr_t)key;
	a.key_len = (uint32_t)strlen(key);
	a.delay_ns = delay;
	a.flags = flags;
	ret = xioctl(fd, KWQ_IOC_ADD_AFTER, &a);
	*result = a.result;
	return ret;
}

/*
 * The starting state of every run:
 *   queued: q/1, q/2; processing (leased to c): p/1, and p/2 added again
 *   (dirty); waiting: w/1 (1 h); backoff-only: b/1 (one failure).
 * Nothing is due within the hour, so no timer changes it meanwhile.
 */
static void baseline(struct fx *fx)
{
	struct kwq_ioc_create c;
	char buf[KWQ_KEY_MAX];
	uint32_t r;
	size_t len;

	memset(fx, 0, sizeof(*fx));
	fx->newfd = -1;
	fx->e = entries;
	/*
	 * One exponential limiter starting at 1 h: rate-limited keys wait
	 * however slow the machine is, until the final drain flushes them.
	 */
	memset(&c, 0, sizeof(c));
	strcpy((char *)c.name, QNAME);
	c.mode = 0600;
	c.flags = KWQ_CREATE_RATELIMIT;
	c.ratelimit.count = 1;
	c.ratelimit.limiters[0].type = KWQ_LIMITER_EXPONENTIAL;
	c.ratelimit.limiters[0].base_ns = 3600000000000ULL;
	c.ratelimit.limiters[0].max_ns = KWQ_DELAY_MAX_NS;
	fx->p = must(kwq_create_ex(&c), "create " QNAME);
	fx->c = must(kwq_open(QNAME, O_RDWR), "open " QNAME);
	fx->x = dev_open();
	must(kwq_add(fx->p, "p/1", 3), "add p/1");
	must(kwq_add(fx->p, "p/2", 3), "add p/2");
	must(kwq_get(fx->c, buf, sizeof(buf), &len, 0), "get p/1");
	must(kwq_get(fx->c, buf, sizeof(buf), &len, 0), "get p/2");
	must(kwq_add(fx->p, "p/2", 3), "add p/2 again");
	must(kwq_add(fx->p, "q/1", 3), "add q/1");
	must(kwq_add(fx->p, "q/2", 3), "add q/2");
	must(add_after(fx->p, "w/1", 3600000000000LL, 0, &r), "add-after w/1");
	must(kwq_add_rate_limited(fx->p, "b/1", 3), "add-rate-limited b/1");
	must(kwq_cancel(fx->p, "b/1", 3), "cancel b/1");
}

static int c_key(int fd, unsigned long cmd, const char *key, struct fx *fx)
{
	return key_op(fd, cmd, key, 0, &fx->result);
}

static int c_add_new(struct fx *fx) { return c_key(fx->p, KWQ_IOC_ADD, "n/1", fx); }
static int c_add_queued(struct fx *fx) { return c_key(fx->p, KWQ_IOC_ADD, "q/1", fx); }
static int c_add_processing(struct fx *fx) { return c_key(fx->p, KWQ_IOC_ADD, "p/1", fx); }
static int c_add_waiting(struct fx *fx) { return c_key(fx->p, KWQ_IOC_ADD, "w/1", fx); }
static int c_rl_new(struct fx *fx) { return c_key(fx->p, KWQ_IOC_ADD_RATE_LIMITED, "n/1", fx); }
static int c_rl_backoff(struct fx *fx)
{
	return c_key(fx->p, KWQ_IOC_ADD_RATE_LIMITED, "b/1", fx);
}
static int c_done(struct fx *fx) { return c_key(fx->c, KWQ_IOC_DONE, "p/2", fx); }
static int c_cancel(struct fx *fx) { return c_key(fx->p, KWQ_IOC_CANCEL, "w/1", fx); }
static int c_forget(struct fx *fx) { return c_key(fx->p, KWQ_IOC_FORGET, "b/1", fx); }
static int c_num_requeues(struct fx *fx)
{
	return c_key(fx->p, KWQ_IOC_NUM_REQUEUES, "b/1", fx);
}

static int c_after_new(struct fx *fx)
{
	return add_after(fx->p, "n/1", 3600000000000LL, 0, &fx->result);
}

static int c_after_new_now(struct fx *fx)
{
	return add_after(fx->p, "n/1", 0, 0, &fx->result);
}

static int c_after_replace(struct fx *fx)
{
	return add_after(fx->p, "w/1", 7200000000000LL, KWQ_AFTER_REPLACE, &fx->result);
}

/* Add entries from fx->from on; fx->result = how many were carried out. */
static int add_entries(struct fx *fx)
{
	struct kwq_ioc_batch b;
	int ret;

	memset(&b, 0, sizeof(b));
	b.entries_ptr = (uintptr_t)&fx->e[fx->from];
	b.count = fx->nent - fx->from;
	ret = xioctl(fx->p, KWQ_IOC_ADD_BATCH, &b);
	fx->result = b.completed;
	return ret;
}

static int c_add_batch(struct fx *fx)
{
	unsigned int i;

	if (!fx->nent) {
		fx->nent = ARRAY_SIZE(batch_keys);
		for (i = 0; i < fx->nent; i++) {
			fx->e[i].key_ptr = (uintptr_t)batch_keys[i];
			fx->e[i].key_len = (uint32_t)strlen(batch_keys[i]);
		}
	}
	return add_entries(fx);
}

static int c_add_bulk(struct fx *fx)
{
	unsigned int i;

	if (!fx->nent) {
		fx->nent = BULK;
		for (i = 0; i < BULK; i++) {
			fx->e[i].key_ptr = (uintptr_t)bulk_keys[i];
			fx->e[i].key_len = (uint32_t)strlen(bulk_keys[i]);
		}
	}
	return add_entries(fx);
}

static int c_get(struct fx *fx)
{
	struct kwq_ioc_get g;
	int ret;

	memset(&g, 0, sizeof(g));
	g.key_ptr = (uintptr_t)fx->got[0];
	g.key_cap = KWQ_KEY_MAX;
	ret = xioctl(fx->c, KWQ_IOC_GET, &g);
	if (!ret)
		fx->got[0][g.key_len] = '\0';
	fx->result = 0;
	return ret;
}

static int c_get_batch(struct fx *fx)
{
	struct kwq_ioc_batch b;
	unsigned int i;
	int ret;

	for (i = 0; i < 3; i++) {
		fx->e[i].key_ptr = (uintptr_t)fx->got[i];
		fx->e[i].key_len = KWQ_KEY_MAX;
	}
	memset(&b, 0, sizeof(b));
	b.entries_ptr = (uintptr_t)fx->e;
	b.count = 3;
	ret = xioctl(fx->c, KWQ_IOC_GET_BATCH, &b);
	for (i = 0; !ret && i < b.completed; i++)
		fx->got[i][fx->e[i].key_len] = '\0';
	fx->result = b.completed;
	return ret;
}

static int c_stats(struct fx *fx)
{
	struct kwq_stats st;
	int ret;

	memset(&st, 0, sizeof(st));
	st.size = sizeof(st);
	ret = xioctl(fx->p, KWQ_IOC_STATS, &st);
	fx->result = (uint32_t)st.queued;
	return ret;
}

static int create_x(struct fx *fx, bool limiter)
{
	struct kwq_ioc_create c;

	memset(&c, 0, sizeof(c));
	strcpy((char *)c.name, XNAME);
	c.mode = 0600;
	if (limiter) {
		c.flags = KWQ_CREATE_RATELIMIT;
		c.ratelimit.count = 2;
		c.ratelimit.limiters[0].type = KWQ_LIMITER_FAST_SLOW;
		c.ratelimit.limiters[0].fast_ns = 1000000;
		c.ratelimit.limiters[0].slow_ns = 1000000000;
		c.ratelimit.limiters[0].max_fast = 5;
		c.ratelimit.limiters[1].type = KWQ_LIMITER_BUCKET;
		c.ratelimit.limiters[1].rate_mhz = 10000;
		c.ratelimit.limiters[1].burst = 10;
	}
	fx->result = 0;
	return xioctl(fx->x, KWQ_IOC_CREATE, &c);
}

static int c_create(struct fx *fx) { return create_x(fx, false); }
static int c_create_rl(struct fx *fx) { return create_x(fx, true); }

static int c_open(struct fx *fx)
{
	struct kwq_ioc_open o;

	memset(&o, 0, sizeof(o));
	strcpy((char *)o.name, QNAME);
	fx->result = 0;
	return xioctl(fx->x, KWQ_IOC_OPEN, &o);
}

static int c_list(struct fx *fx)
{
	char names[8][KWQ_NAME_MAX];
	struct kwq_ioc_list l;
	int ret;

	memset(&l, 0, sizeof(l));
	l.names_ptr = (uintptr_t)names;
	l.capacity = 8;
	ret = xioctl(fx->x, KWQ_IOC_LIST, &l);
	fx->result = l.count;
	return ret;
}

static int c_devopen(struct fx *fx)
{
	fx->newfd = open(KWQ_DEFAULT_DEV, O_RDWR | O_CLOEXEC);
	fx->result = 0;
	return fx->newfd < 0 ? -errno : 0;
}

#define BASE "p/2 q/1 q/2 w/1"

enum fkind { K_QUEUE, K_ATTACH, K_BATCH };

/**
 * struct fop - one operation of the scenario
 * @name: what the report calls it.
 * @call: the single system call under fault injection.
 * @want: the outcome it must report (fx->result), or -1.
 * @gets: every key the drain at the end must hand out, in any order.
 * @taken: how many keys the call itself takes (leased to c, in fx->got).
 * @kind: K_ATTACH: the call attaches fx->x, which must stay detached when
 *	it fails; K_BATCH: may stop early with fx->result entries done.
 * @errs: errnos allowed besides ENOMEM.
 * @bulk: the drain must also hand out the BULK keys k/000 ... k/099.
 * @nomem: the call allocates and has no fallback once memory runs out:
 *	the second pass (the n-th and every later point failing) must end
 *	with -ENOMEM at least once, else the injected faults never reached
 *	it (e.g. no fault point on its path) and the sweep proved nothing.
 */
struct fop {
	const char *name;
	int (*call)(struct fx *fx);
	long want;
	const char *gets;
	unsigned int taken;
	enum fkind kind;
	int errs[3];
	bool bulk;
	bool nomem;
};

#define OP(n, c, w, g, t, k) { .name = n, .call = c, .want = w, .gets = g, .taken = t, .kind = k }
/* An operation whose second pass must see -ENOMEM (@nomem). */
#define OPM(n, c, w, g, t, k) { .name = n, .call = c, .want = w, .gets = g, .taken = t, \
				 .kind = k, .nomem = true }

static const struct fop fops[] = {
	OPM("create", c_create, 0, BASE, 0, K_ATTACH),
	OPM("create with a limiter", c_create_rl, 0, BASE, 0, K_ATTACH),
	OP("open (attach by name)", c_open, 0, BASE, 0, K_ATTACH),
	{ .name = "open(2) of /dev/kwq", .call = c_devopen, .want = 0, .gets = BASE,
	  .kind = K_QUEUE, .errs = { ENFILE, EMFILE }, .nomem = true },
	OPM("list", c_list, -1, BASE, 0, K_QUEUE),
	OPM("add of a new key", c_add_new, KWQ_ADD_QUEUED, BASE " n/1", 0, K_QUEUE),
	OP("add of a queued key", c_add_queued, KWQ_ADD_DUPLICATE, BASE, 0, K_QUEUE),
	OP("add of a key being processed", c_add_processing, KWQ_ADD_DEFERRED, BASE " p/1", 0,
	   K_QUEUE),
	OP("add of a waiting key", c_add_waiting, KWQ_ADD_QUEUED, BASE, 0, K_QUEUE),
	OPM("add-after of a new key (1 h)", c_after_new, KWQ_ADD_WAITING, BASE " n/1", 0, K_QUEUE),
	OPM("add-after of a new key (no delay)", c_after_new_now, KWQ_ADD_QUEUED, BASE " n/1", 0,
	   K_QUEUE),
	OP("add-after replacing a deadline", c_after_replace, KWQ_ADD_WAIT_MOVED, BASE, 0,
	   K_QUEUE),
	OPM("add-rate-limited of a new key", c_rl_new, KWQ_ADD_WAITING, BASE " n/1", 0, K_QUEUE),
	OP("add-rate-limited of a backoff-only key", c_rl_backoff, KWQ_ADD_WAITING, BASE " b/1", 0,
	   K_QUEUE),
	OPM("add batch (4 new keys, 1 queued)", c_add_batch, 5, BASE " n/1 n/2 n/3 n/4", 0,
	   K_BATCH),
	{ .name = "add batch of " __stringify(BULK) " new keys (the table grows)",
	  .call = c_add_bulk, .want = BULK, .gets = BASE, .kind = K_BATCH, .bulk = true,
	  .nomem = true },
	OP("get", c_get, 0, "p/2 q/2 w/1", 1, K_QUEUE),
	OPM("get batch", c_get_batch, 2, "p/2 w/1", 2, K_QUEUE),
	OP("done of a dirty key", c_done, KWQ_DONE_REQUEUED, BASE, 0, K_QUEUE),
	OP("cancel", c_cancel, 1, "p/2 q/1 q/2", 0, K_QUEUE),
	OP("forget", c_forget, 1, BASE, 0, K_QUEUE),
	OP("num-requeues", c_num_requeues, 1, BASE, 0, K_QUEUE),
	OP("stats", c_stats, 2, BASE, 0, K_QUEUE),
};

/* ---- checks ------------------------------------------------------------- */

struct snap {
	struct kwq_stats st;
	int queues;
	int fds;
	int x_state;	/* STATS on fx->x: -EBADFD while detached */
};

static void snapshot(struct fx *fx, struct snap *s)
{
	struct kwq_stats st;

	memset(s, 0, sizeof(*s));
	s->st = stats_of(fx->p);
	s->queues = count_queues();
	s->fds = count_fds();
	memset(&st, 0, sizeof(st));
	st.size = sizeof(st);
	s->x_state = xioctl(fx->x, KWQ_IOC_STATS, &st);
}

static int cmp_key(const void *a, const void *b)
{
	return strcmp(a, b);
}

#define MAXGOT (BULK + 32)
typedef char keyname[16];

/* Drain what is ready through c in batches; returns how many or -errno. */
static int drain_into(struct fx *fx, keyname *got, int have, int *last)
{
	static char bufs[MAXGOT][KWQ_KEY_MAX];
	struct kwq_batch_entry *e = entries;
	int n, i, total = have;

	for (;;) {
		for (i = 0; i < MAXGOT; i++) {
			e[i].key_ptr = (uintptr_t)bufs[i];
			e[i].key_len = KWQ_KEY_MAX;
		}
		n = kwq_get_batch(fx->c, e, MAXGOT, 0, 0);
		*last = n;
		if (n <= 0)
			return total;
		for (i = 0; i < n; i++) {
			if (total < MAXGOT)
				snprintf(got[total], sizeof(keyname), "%.*s",
					 (int)(e[i].key_len < 15 ? e[i].key_len : 15), bufs[i]);
			total++;
		}
		/* Done them all; a requeued key comes round again. */
		kwq_done_batch(fx->c, e, (unsigned int)n);
	}
}

/*
 * End a run: finish what the consumer holds, flush and drain the queue,
 * and check that exactly the expected keys came out, each once, and no
 * record is left. Then remove everything the run made.
 */
static int teardown(struct fx *fx, const struct fop *op, unsigned int nth, char *why, size_t n)
{
	static const char *const forget[] = { "b/1", "n/1", "n/2", "n/3", "n/4" };
	static keyname got[MAXGOT], want[MAXGOT];
	char tmp[128], *save = NULL, *t;
	struct kwq_ioc_drain d;
	struct kwq_stats st;
	int ngot, nwant = 0, last, i, bad = 0;

	kwq_done(fx->c, "p/1", 3);
	kwq_done(fx->c, "p/2", 3);
	for (i = 0; i < (int)op->taken; i++)
		if (fx->got[i][0])
			kwq_done(fx->c, fx->got[i], strlen(fx->got[i]));
	memset(&d, 0, sizeof(d));
	d.flags = KWQ_DRAIN_FLUSH_WAITING;
	xioctl(fx->p, KWQ_IOC_DRAIN, &d);
	ngot = drain_into(fx, got, 0, &last);
	for (i = 0; i < (int)ARRAY_SIZE(forget); i++)
		kwq_forget(fx->p, forget[i], strlen(forget[i]));

	snprintf(tmp, sizeof(tmp), "%s", op->gets);
	for (t = strtok_r(tmp, " ", &save); t; t = strtok_r(NULL, " ", &save))
		snprintf(want[nwant++], sizeof(keyname), "%.15s", t);
	for (i = 0; op->bulk && i < BULK; i++)
		memcpy(want[nwant++], bulk_keys[i], sizeof(bulk_keys[i]));
	if (ngot <= MAXGOT)
		qsort(got, (size_t)ngot, sizeof(keyname), cmp_key);
	qsort(want, (size_t)nwant, sizeof(keyname), cmp_key);
	for (i = 0; i < nwant && i < ngot && !strcmp(got[i], want[i]); i++)
		;
	st = stats_of(fx->p);
	if (ngot != nwant || i < nwant) {
		snprintf(why, n, "fail-nth %u: the drain handed out %d keys, expected %d; first "
			 "difference: got %s, expected %s", nth, ngot, nwant,
			 i < ngot ? got[i] : "nothing", i < nwant ? want[i] : "nothing");
		bad = 1;
	} else if (last != -ESHUTDOWN) {
		snprintf(why, n, "fail-nth %u: the drain ended with %s", nth,
			 last < 0 ? strerror(-last) : "a key");
		bad = 1;
	} else if (st.items || st.processing || st.waiting || st.backoff_keys) {
		snprintf(why, n, "fail-nth %u: records left after the drain: items %llu "
			 "processing %llu waiting %llu backoff %llu", nth,
			 (unsigned long long)st.items,
			 (unsigned long long)st.processing, (unsigned long long)st.waiting,
			 (unsigned long long)st.backoff_keys);
		bad = 1;
	}
	kwq_destroy(fx->p);
	close(fx->p);
	close(fx->c);
	if (fx->newfd >= 0)
		close(fx->newfd);
	/* x may have made XNAME. */
	kwq_destroy(fx->x);
	close(fx->x);
	i = kwq_open(XNAME, O_RDWR);
	if (i >= 0) {
		kwq_destroy(i);
		close(i);
	}
	return bad;
}

static bool errno_ok(const struct fop *op, int err)
{
	unsigned int i;

	if (err == ENOMEM)
		return true;
	for (i = 0; i < ARRAY_SIZE(op->errs); i++)
		if (op->errs[i] && op->errs[i] == err)
			return true;
	return false;
}

static const char *diff_stats(const struct kwq_stats *a, const struct kwq_stats *b)
{
#define F(f) if (a->f != b->f) return #f;
	F(state) F(queued) F(processing) F(dirty_processing) F(waiting) F(items)
	F(adds) F(dedups) F(gets) F(dones) F(requeues) F(refused) F(fired)
	F(cancels) F(absorbed) F(waits_dropped) F(lease_requeues) F(backoff_keys)
	F(rate_limited) F(tokens_returned) F(backoff_evictions)
#undef F
	/*
	 * Fields after these (times, latency histograms) move with the clock
	 * or are added later; the state is all in this prefix.
	 */
	return memcmp(a, b, offsetof(struct kwq_stats, backoff_evictions) +
		      sizeof(a->backoff_evictions)) ? "(another field)" : NULL;
}

/*
 * How a run fails allocations: only the n-th point (FAIL_NTH), or the n-th
 * and every later one (FAIL_FROM: memory runs out there, so fallbacks
 * fail too).
 */
enum fmode { FAIL_NTH, FAIL_FROM };

static const char *const fmode_name[] = { "fail-nth", "fail-from" };

/*
 * Arm for one call. FAIL_FROM adds failslab's probability path for this
 * thread only (task-filter, make-it-fail) without limit; fail-nth keeps
 * the points before the n-th from reaching it.
 */
static void arm_mode(enum fmode mode, unsigned int n)
{
	if (mode == FAIL_FROM && knob_write("times", "-1")) {
		printf("Bail out! cannot arm failslab: %s\n", strerror(errno));
		exit(1);
	}
	arm(n);
	if (mode == FAIL_FROM && pwrite(mif_fd, "1", 1, 0) != 1) {
		printf("Bail out! cannot arm make-it-fail: %s\n", strerror(errno));
		exit(1);
	}
}

/* Returns what is left of the count: 0 if the n-th point was reached. */
static unsigned int disarm_mode(enum fmode mode)
{
	unsigned int left;

	if (mode == FAIL_FROM && pwrite(mif_fd, "0", 1, 0) != 1) {
		printf("Bail out! cannot disarm make-it-fail: %s\n", strerror(errno));
		exit(1);
	}
	left = disarm();
	if (mode == FAIL_FROM && knob_write("times", "0")) {
		printf("Bail out! cannot disarm failslab: %s\n", strerror(errno));
		exit(1);
	}
	return left;
}

struct tally {
	unsigned int points, runs, nomem, other, partial, absorbed;
};

#define WHY(...) snprintf(why, nwhy, __VA_ARGS__)

/*
 * One run with @n failures armed. Returns 1 when the call no longer
 * reached the n-th point (the sweep is complete), -1 on a failed check
 * (@why says what), 0 otherwise.
 */
static int run_one(const struct fop *op, enum fmode mode, unsigned int n, struct tally *t,
		   char *why, size_t nwhy)
{
	const char *mn = fmode_name[mode];
	struct snap before, after;
	unsigned int left;
	char scratch[512];
	struct fx fx;
	int ret, res = 0;

	baseline(&fx);
	snapshot(&fx, &before);
	arm_mode(mode, n);
	ret = op->call(&fx);
	left = disarm_mode(mode);
	t->runs++;
	if (verbose)
		printf("#   %s: %s %u: %s, %u left\n", op->name, mn, n,
		       ret ? strerror(-ret) : "ok", left);
	if (left) {
		/* Fewer than n points on this path. */
		t->points = n - left;
		res = 1;
		if (ret) {
			WHY("%s %u: failed with %s without an injected fault", mn, n,
			    strerror(-ret));
			res = -1;
		}
	} else if (!ret && op->kind == K_BATCH && fx.result < fx.nent) {
		/* Stopped early: the first fx.result entries, and only they. */
		snapshot(&fx, &after);
		t->partial++;
		if (after.st.adds != before.st.adds + fx.result ||
		    after.st.items != before.st.items + fx.result) {
			WHY("%s %u: batch completed %u of %u but adds went %llu -> %llu, items "
			    "%llu -> %llu", mn, n, fx.result, fx.nent,
			    (unsigned long long)before.st.adds, (unsigned long long)after.st.adds,
			    (unsigned long long)before.st.items,
			    (unsigned long long)after.st.items);
			res = -1;
		}
		fx.from = fx.result;
		ret = op->call(&fx);
		if (!res && (ret || fx.result != fx.nent - fx.from)) {
			WHY("%s %u: resubmitting the rest: %s, %u done", mn, n,
			    ret ? strerror(-ret) : "ok", fx.result);
			res = -1;
		}
	} else if (!ret) {
		t->absorbed++;
		if (op->want >= 0 && fx.result != (uint32_t)op->want) {
			WHY("%s %u: succeeded with outcome %u, expected %ld", mn, n, fx.result,
			    op->want);
			res = -1;
		}
	} else {
		const char *field;

		if (ret == -ENOMEM)
			t->nomem++;
		else
			t->other++;
		snapshot(&fx, &after);
		field = diff_stats(&before.st, &after.st);
		if (!errno_ok(op, -ret))
			WHY("%s %u: failed with %s", mn, n, strerror(-ret));
		else if (field)
			WHY("%s %u: failed with %s but the queue's %s changed", mn, n,
			    strerror(-ret), field);
		else if (after.queues != before.queues)
			WHY("%s %u: failed with %s but the number of queues went %d -> %d", mn,
			    n, strerror(-ret), before.queues, after.queues);
		else if (after.fds != before.fds)
			WHY("%s %u: failed with %s but open descriptors went %d -> %d", mn, n,
			    strerror(-ret), before.fds, after.fds);
		else if (op->kind == K_ATTACH && after.x_state != -EBADFD)
			WHY("%s %u: failed with %s but the descriptor is attached", mn, n,
			    strerror(-ret));
		else
			why[0] = '\0';
		if (why[0])
			res = -1;
		/* The same call without fault injection must work. */
		ret = op->call(&fx);
		if (!res && ret) {
			WHY("%s %u: the retry without fault injection failed with %s", mn, n,
			    strerror(-ret));
			res = -1;
		}
		if (!res && op->want >= 0 && fx.result != (uint32_t)op->want) {
			WHY("%s %u: the retry reported %u, expected %ld", mn, n, fx.result,
			    op->want);
			res = -1;
		}
	}
	if (res < 0)
		teardown(&fx, op, n, scratch, sizeof(scratch));
	else if (teardown(&fx, op, n, why, nwhy))
		res = -1;
	return res;
}

static void tally_text(char *out, size_t n, const char *label, const struct tally *t)
{
	size_t off = strlen(out);

	off += snprintf(out + off, n - off, "; %s", label);
	if (t->nomem)
		off += snprintf(out + off, n - off, " %u -ENOMEM,", t->nomem);
	if (t->other)
		off += snprintf(out + off, n - off, " %u other errno,", t->other);
	if (t->partial)
		off += snprintf(out + off, n - off, " %u stopped early,", t->partial);
	if (t->absorbed)
		off += snprintf(out + off, n - off, " %u absorbed,", t->absorbed);
	if (out[off - 1] == ',')
		out[off - 1] = '\0';
	else
		snprintf(out + off, n - off, " nothing to fail");
}

/* Runs of the whole sweep that ended in -ENOMEM, in either pass. */
static unsigned int nomem_total;

/*
 * Sweep one operation twice: failing its n-th fault point (n = 1, 2, ...),
 * then its n-th and all later ones. Prints one TAP line.
 */
static void sweep(const struct fop *op)
{
	unsigned int n, left, total, k, ntries = 0, tries[64];
	struct tally nth = { 0 }, from = { 0 };
	char why[512] = "", detail[512];
	bool bad = false, done = false, unreached;
	struct fx fx;
	int res = 0;

	/* How many points the call passes when nothing fails. */
	baseline(&fx);
	arm(1000000);
	op->call(&fx);
	left = disarm();
	teardown(&fx, op, 0, detail, sizeof(detail));
	total = 1000000 - left;
	if (verbose)
		printf("#   %s: %u fault points on the way to success\n", op->name, total);
	/*
	 * Fail every point, then run once more past the last. A long
	 * operation (a batch of hundreds of keys, two points each) gets its
	 * first and last points and evenly spread ones in between.
	 */
	if (total <= max_points) {
		for (n = 1; n <= total + 1; n++)
			tries[ntries++] = n;
	} else {
		for (n = 1; n <= 4; n++)
			tries[ntries++] = n;
		for (k = 1; k <= 8; k++)
			tries[ntries++] = 4 + k * (total - 8) / 9;
		for (n = total - 3; n <= total + 1; n++)
			tries[ntries++] = n;
	}
	for (k = 0; k < ntries && !res; k++)
		res = run_one(op, FAIL_NTH, tries[k], &nth, why, sizeof(why));
	/*
	 * The count of points varies a little between runs: with memory
	 * cgroups, a charged allocation that starts a new slab also allocates
	 * the slab's cgroup vector. Go on past the baseline until the call
	 * completes, within a bound.
	 */
	for (n = tries[ntries - 1] + 1; !res && n <= total + 1 + slack; n++)
		res = run_one(op, FAIL_NTH, n, &nth, why, sizeof(why));
	done = res > 0;
	bad = res < 0;
	for (res = 0, k = 0; k < ntries && !res && !bad; k++)
		res = run_one(op, FAIL_FROM, tries[k], &from, why, sizeof(why));
	for (n = tries[ntries - 1] + 1; !res && !bad && n <= total + 1 + slack; n++)
		res = run_one(op, FAIL_FROM, n, &from, why, sizeof(why));
	done = done && res > 0;
	bad = bad || res < 0;
	if (!bad && !done)
		snprintf(why, sizeof(why), "still reaching fault points after %u",
			 total + 1 + slack);
	nomem_total += nth.nomem + from.nomem;
	/* Passing vacuously: no injected fault reached the call. */
	unreached = op->nomem && !from.nomem;
	if (!bad && done && unreached)
		snprintf(why, sizeof(why), "memory ran out from each of its %u points on and the "
			 "call never failed with -ENOMEM: the injected faults did not reach it",
			 nth.points);

	snprintf(detail, sizeof(detail), "%u fault point%s", nth.points,
		 nth.points == 1 ? "" : "s");
	if (ntries < nth.points + 1)
		snprintf(detail + strlen(detail), sizeof(detail) - strlen(detail),
			 " (%u sampled)", ntries - 1);
	if (nth.points) {
		tally_text(detail, sizeof(detail), "n-th failing:", &nth);
		tally_text(detail, sizeof(detail), "n-th and later failing:", &from);
	}
	ok(done && !bad && !unreached, "%s: %s%s", op->name, detail,
	   nth.nomem + nth.other + nth.partial + from.nomem + from.other + from.partial ?
	   "; queue unchanged by each failure, retry succeeded, nothing lost" :
	   "; nothing lost");
	if (why[0])
		printf("#   %s\n", why);
}

static void usage(const char *argv0)
{
	fprintf(stderr, "usage: %s [--max N] [--only NAME-SUBSTRING] [--verbose]\n"
		"  --max N  fail every point of operations with up to N (64), sample longer ones\n",
		argv0);
	exit(2);
}

int main(int argc, char **argv)
{
	const char *only = NULL;
	unsigned int i;
	uint64_t t0;
	struct timespec ts;
	int fd;

	setvbuf(stdout, NULL, _IOLBF, 0);
	for (i = 1; i < (unsigned int)argc; i++) {
		if (!strcmp(argv[i], "--max") && i + 1 < (unsigned int)argc)
			max_points = (unsigned int)strtoul(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--only") && i + 1 < (unsigned int)argc)
			only = argv[++i];
		else if (!strcmp(argv[i], "--verbose"))
			verbose = true;
		else
			usage(argv[0]);
	}
	printf("# kwq fault-injection sweep (%zu-bit)\n", sizeof(void *) * 8);
	for (i = 0; i < BULK; i++)
		snprintf(bulk_keys[i], sizeof(bulk_keys[i]), "k/%03u", i);
	nth_fd = open("/proc/thread-self/fail-nth", O_RDWR | O_CLOEXEC);
	if (nth_fd < 0) {
		printf("ok 1 - fault-injection sweep # SKIP no /proc/thread-self/fail-nth "
		       "(CONFIG_FAULT_INJECTION off)\n1..1\n");
		return 0;
	}
	mif_fd = open("/proc/thread-self/make-it-fail", O_RDWR | O_CLOEXEC);
	for (i = 0; i < ARRAY_SIZE(knobs); i++)
		if (knob_read(knobs[i].name, knobs[i].saved, sizeof(knobs[i].saved)))
			break;
	if (i < ARRAY_SIZE(knobs) || mif_fd < 0) {
		printf("ok 1 - fault-injection sweep # SKIP no " FAILSLAB "/%s or make-it-fail "
		       "(CONFIG_FAILSLAB or CONFIG_FAULT_INJECTION_DEBUG_FS off, or debugfs not "
		       "mounted)\n1..1\n", i < ARRAY_SIZE(knobs) ? knobs[i].name : "");
		return 0;
	}
	atexit(knobs_restore);
	printf("# failslab for the run:");
	for (i = 0; i < ARRAY_SIZE(knobs); i++) {
		if (knob_write(knobs[i].name, knobs[i].value)) {
			printf("\nBail out! cannot set " FAILSLAB "/%s: %s\n", knobs[i].name,
			       strerror(errno));
			return 1;
		}
		printf(" %s %s (was %s)", knobs[i].name, knobs[i].value, knobs[i].saved);
	}
	printf("\n");
	fd = dev_open();
	close(fd);
	/* A leftover of an interrupted run. */
	fd = kwq_open(QNAME, O_RDWR);
	if (fd >= 0) {
		kwq_destroy(fd);
		close(fd);
	}
	clock_gettime(CLOCK_MONOTONIC, &ts);
	t0 = (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
	for (i = 0; i < ARRAY_SIZE(fops); i++)
		if (!only || strstr(fops[i].name, only))
			sweep(&fops[i]);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	printf("# sweep took %llu ms\n", (unsigned long long)((uint64_t)ts.tv_sec * 1000 +
						       (uint64_t)ts.tv_nsec / 1000000 - t0));
	/* With --only, the operations chosen may have nothing to fail. */
	if (!only)
		ok(nomem_total > 0, "injected faults reached user space: %u runs failed with "
		   "-ENOMEM", nomem_total);
	return tap_done();
}
