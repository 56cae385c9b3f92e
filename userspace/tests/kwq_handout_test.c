// SPDX-License-Identifier: GPL-2.0
/*
 * The life of one hand-out through /dev/kwq, as the uapi header promises
 * it: a key is held by one worker at a time, a late done after a
 * processing timeout ends nothing (-ENOENT), tickets name hand-outs,
 * consumers stay after a shutdown while a processing key can still come
 * back, a get whose key cannot be delivered counts nothing, and a
 * descriptor put into an epoll set before it is attached still wakes.
 * TAP on stdout.
 */
#define _GNU_SOURCE
#include <poll.h>
#include <pthread.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "tap.h"
#include "kwq_test_util.h"

/* Long enough for a get and a done under TCG, short enough to wait out. */
#define TIMEOUT_NS	(200 * 1000000ULL)

static int timeout_queue(const char *name)
{
	struct kwq_ioc_create c;
	int fd;

	memset(&c, 0, sizeof(c));
	snprintf((char *)c.name, sizeof(c.name), "%s", name);
	c.mode = 0600;
	c.processing_timeout_ns = TIMEOUT_NS;
	fd = kwq_create_ex(&c);
	if (fd < 0) {
		printf("Bail out! create %s: %s\n", name, strerror(-fd));
		exit(1);
	}
	return fd;
}

static int open_q(const char *name)
{
	int fd = kwq_open(name, O_RDWR);

	if (fd < 0) {
		printf("Bail out! open %s: %s\n", name, strerror(-fd));
		exit(1);
	}
	return fd;
}

/* Get @want with its ticket, blocking up to 5 s (the timeout brings it back). */
static int get_ticket_is(int fd, const char *want, unsigned int flags, uint64_t *ticket)
{
	char buf[KWQ_KEY_MAX + 1];
	size_t len = 0;
	int ret = kwq_get_ticket(fd, buf, KWQ_KEY_MAX, &len, 5000000000LL, flags, ticket);

	if (ret)
		return ret;
	buf[len] = '\0';
	return strcmp(buf, want) ? -EBADMSG : 0;
}

static int done_ticket_s(int fd, const char *key, uint64_t ticket)
{
	return kwq_done_ticket(fd, key, strlen(key), ticket);
}

/*
 * 1. Unleased: A takes u, the timeout puts u back, B takes it. A's late
 * done names its ticket and ends nothing; B's does.
 */
static void test_two_holders_unleased(void)
{
	int fd = timeout_queue("ho-unleased"), b = open_q("ho-unleased");
	uint64_t ta = 0, tb = 0;
	struct kwq_stats st;

	add_s(fd, "u");
	is(get_ticket_is(fd, "u", KWQ_GET_UNLEASED, &ta), 0, "unleased: A gets u");
	ok(ta != 0, "unleased: the get returned a ticket");
	is(get_ticket_is(b, "u", KWQ_GET_UNLEASED, &tb), 0,
	   "unleased: after the processing timeout B gets u");
	ok(tb != 0 && tb != ta, "unleased: B's ticket is not A's");
	st = stats_of(fd);
	ok(st.processing == 1 && st.processing_expiries == 1, "unleased: u processing once, one expiry");
	is(done_ticket_s(fd, "u", ta), -ENOENT, "unleased: A's late done -> ENOENT");
	st = stats_of(fd);
	ok(st.processing == 1 && st.dones == 0, "unleased: A's late done changed nothing");
	is(add_s(fd, "u"), KWQ_ADD_DEFERRED, "unleased: an add of u while B holds it is deferred");
	is(get_is(fd, "u"), -EAGAIN, "unleased: nobody else can take u meanwhile");
	is(done_ticket_s(b, "u", tb), KWQ_DONE_REQUEUED, "unleased: B's done ends its hand-out");
	is(done_ticket_s(b, "u", tb), -ENOENT, "unleased: the same ticket twice -> ENOENT");
	close(b);
	end_queue(fd);
}

/* 1b. Leased, two files: A's late done without a ticket is ENOENT (not EPERM). */
static void test_two_holders_leased(void)
{
	int fd = timeout_queue("ho-leased"), b = open_q("ho-leased");
	struct kwq_stats st;
	uint64_t tb = 0;

	add_s(fd, "u");
	is(get_is(fd, "u"), 0, "leased: A gets u");
	is(get_ticket_is(b, "u", 0, &tb), 0, "leased: after the processing timeout B gets u");
	is(done_s(fd, "u"), -ENOENT, "leased: A's late done (no ticket) -> ENOENT");
	st = stats_of(fd);
	ok(st.processing == 1 && st.dones == 0, "leased: A's late done changed nothing");
	is(done_s(b, "u"), KWQ_DONE_FINISHED, "leased: B's done (no ticket) ends its hand-out");
	close(b);
	end_queue(fd);
}

struct late_worker {
	int fd;
	uint64_t ticket;
	int ret;
};

static void *late_get(void *arg)
{
	struct late_worker *w = arg;

	w->ret = get_ticket_is(w->fd, "u", 0, &w->ticket);
	return NULL;
}

/* 1c. Two threads on one file share its lease: the ticket tells them apart. */
static void test_two_holders_one_file(void)
{
	int fd = timeout_queue("ho-threads");
	struct late_worker w = { .fd = fd };
	uint64_t ta = 0;
	pthread_t th;

	add_s(fd, "u");
	is(get_ticket_is(fd, "u", 0, &ta), 0, "threads: thread A gets u");
	pthread_create(&th, NULL, late_get, &w);
	pthread_join(th, NULL);
	is(w.ret, 0, "threads: after the timeout thread B (same file) gets u");
	is(done_ticket_s(fd, "u", ta), -ENOENT, "threads: A's late done with its ticket -> ENOENT");
	is(stats_of(fd).processing, 1, "threads: B still holds u");
	is(done_ticket_s(fd, "u", w.ticket), KWQ_DONE_FINISHED, "threads: B's done ends it");
	end_queue(fd);
}

/* Tickets are rejected where they mean nothing. */
static void test_ticket_fields(void)
{
	int fd = new_queue("ho-fields");
	struct kwq_ioc_key k;
	struct kwq_ioc_version v;

	memset(&v, 0, sizeof(v));
	is(raw_ioctl(fd, KWQ_IOC_VERSION, &v), 0, "fields: version");
	ok(v.features & KWQ_FEATURE_TICKET, "fields: KWQ_FEATURE_TICKET is reported");
	memset(&k, 0, sizeof(k));
	k.key_ptr = (uintptr_t)"x";
	k.key_len = 1;
	k.ticket = 1;
	is(raw_ioctl(fd, KWQ_IOC_ADD, &k), -EINVAL, "fields: add with a ticket -> EINVAL");
	is(stats_of(fd).adds, 0, "fields: and nothing was added");
	is(done_ticket_s(fd, "x", 0), -ENOENT, "fields: done of a key never taken -> ENOENT");
	end_queue(fd);
}

/*
 * 3. After shutdown a consumer stays while a processing key can come back:
 * the key of a file that closes goes back, and the waiting consumer gets it.
 */
static void test_shutdown_keeps_consumers(void)
{
	int fd = new_queue("ho-shutdown"), holder = open_q("ho-shutdown");
	struct kwq_stats st;
	int status = -1;
	pid_t pid;

	add_s(fd, "k");
	is(get_is(holder, "k"), 0, "shutdown: a worker holds k");
	is(kwq_shutdown(fd), 0, "shutdown: shut down");
	is(get_is(fd, "k"), -EAGAIN, "shutdown: a non-blocking get says 'not now', not ESHUTDOWN");
	pid = fork();
	if (pid == 0) {
		char buf[16];
		size_t len = 0;
		int ret;

		close(holder);	/* the parent's close must end the lease */
		ret = kwq_get(fd, buf, sizeof(buf), &len, 10000000000LL);
		if (ret == 0 && len == 1 && buf[0] == 'k' && kwq_done(fd, "k", 1) == 0 &&
		    kwq_get(fd, buf, sizeof(buf), &len, 10000000000LL) == -ESHUTDOWN)
			_exit(0);
		_exit(ret == -ESHUTDOWN ? 2 : 1);
	}
	usleep(100000);
	close(holder);		/* the lease ends: k goes back */
	waitpid(pid, &status, 0);
	is(WIFEXITED(status) ? WEXITSTATUS(status) : -1, 0,
	   "shutdown: the waiting consumer got k back, did it, then got ESHUTDOWN");
	st = stats_of(fd);
	ok(st.items == 0 && st.lease_requeues == 1, "shutdown: nothing left, one lease requeue");
	is(kwq_shutdown_drain(fd, 0, 0), 0, "shutdown: a drain finds the queue empty");
	end_queue(fd);
}

/*
 * 3b. A drain ends once the key that came back is done, not before, and
 * not never (a consumer that left early would strand it: the drain's
 * deadline here only keeps a broken module from hanging the run).
 */
static void test_drain_waits_for_return(void)
{
	int fd = new_queue("ho-drain"), holder = open_q("ho-drain");
	int status = -1;
	pid_t pid;

	add_s(fd, "k");
	is(get_is(holder, "k"), 0, "drain: a worker holds k");
	is(kwq_shutdown(fd), 0, "drain: shut down");
	pid = fork();
	if (pid == 0) {
		char buf[16];
		size_t len = 0;

		/* The consumer waits through the shutdown for k to come back. */
		close(holder);
		if (kwq_get(fd, buf, sizeof(buf), &len, 10000000000LL) || kwq_done(fd, buf, len))
			_exit(1);
		_exit(kwq_get(fd, buf, sizeof(buf), &len, 10000000000LL) == -ESHUTDOWN ? 0 : 2);
	}
	usleep(150000);
	close(holder);
	is(kwq_shutdown_drain(fd, 20000000000LL, 0), 0, "drain: ends after the returned key is done");
	waitpid(pid, &status, 0);
	is(WIFEXITED(status) ? WEXITSTATUS(status) : -1, 0, "drain: the consumer saw k, then ESHUTDOWN");
	end_queue(fd);
}

/* 7. A get whose copy to user space fails counts nothing and keeps the order. */
static void test_failed_get_counts_nothing(void)
{
	int fd = new_queue("ho-fault");
	long page = sysconf(_SC_PAGESIZE);
	struct kwq_stats before, after;
	struct kwq_ioc_get g;
	uint64_t hist = 0;
	void *ro;
	int i;

	add_s(fd, "f1");
	add_s(fd, "f2");
	before = stats_of(fd);
	ro = mmap(NULL, page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	memset(&g, 0, sizeof(g));
	g.key_ptr = (uintptr_t)ro;
	g.key_cap = 16;
	is(raw_ioctl(fd, KWQ_IOC_GET, &g), -EFAULT, "fault: get into a read-only page -> EFAULT");
	after = stats_of(fd);
	ok(after.gets == before.gets, "fault: gets not counted (%llu -> %llu)",
	   (unsigned long long)before.gets, (unsigned long long)after.gets);
	for (i = 0; i < KWQ_STATS_BUCKETS; i++)
		hist += after.queue_latency[i] - before.queue_latency[i];
	is(hist, 0, "fault: nothing observed in the queue latency histogram");
	ok(after.queued == 2 && after.processing == 0, "fault: both keys still queued");
	is(get_is(fd, "f1"), 0, "fault: f1 still first");
	done_s(fd, "f1");
	munmap(ro, page);
	end_queue(fd);
}

/* 6. An epoll set that holds the descriptor before the attach still wakes. */
static void test_epoll_before_attach(void)
{
	int prod = new_queue("ho-epoll"), fd = dev_open(O_RDWR), ep = epoll_create1(0);
	struct epoll_event ev = { .events = EPOLLIN }, out;
	struct kwq_ioc_open o;
	int n;

	is(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev), 0, "epoll: add an unattached descriptor");
	memset(&o, 0, sizeof(o));
	snprintf((char *)o.name, sizeof(o.name), "ho-epoll");
	is(raw_ioctl(fd, KWQ_IOC_OPEN, &o), 0, "epoll: then attach it");
	n = epoll_wait(ep, &out, 1, 0);
	is(n, 0, "epoll: nothing ready yet");
	add_s(prod, "e");
	n = epoll_wait(ep, &out, 1, 5000);
	ok(n == 1 && (out.events & EPOLLIN), "epoll: an add wakes it (n=%d events=%#x)", n,
	   n == 1 ? out.events : 0);
	is(get_is(fd, "e"), 0, "epoll: and the key is there");
	done_s(fd, "e");
	close(ep);
	close(fd);
	end_queue(prod);
}


/*
 * The exclusive-hold oracle under concurrency: four threads (two sharing
 * one file, two taking keys unleased on their own) hold keys for random
 * times on a queue with a 2 ms processing timeout, so hand-outs are taken
 * back while their workers still run. Every get records the key's newest
 * ticket; a done is checked against what was newest before it was sent:
 * a done of a ticket that had already been superseded must fail. A done
 * that succeeds there would end someone else's hand-out.
 */
#define RACE_KEYS	8
#define RACE_THREADS	4

static uint64_t newest[RACE_KEYS];
static long race_violations, race_stale_refused, race_dones;
static volatile int race_stop;

struct racer {
	int fd;
	unsigned int flags;
	unsigned int seed;
};

static void *racer_fn(void *arg)
{
	struct racer *r = arg;
	char buf[8];

	while (!race_stop) {
		uint64_t t = 0, before;
		size_t len = 0;
		int k = rand_r(&r->seed) % RACE_KEYS, ret;

		snprintf(buf, sizeof(buf), "r%d", k);
		kwq_add(r->fd, buf, strlen(buf));
		if (kwq_get_ticket(r->fd, buf, sizeof(buf) - 1, &len, 20000000, r->flags, &t))
			continue;
		buf[len] = '\0';
		k = atoi(buf + 1);
		/* Tickets of one queue only grow: keep the largest seen. */
		before = __atomic_load_n(&newest[k], __ATOMIC_SEQ_CST);
		while (before < t && !__atomic_compare_exchange_n(&newest[k], &before, t, 0,
								  __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
			;
		usleep(rand_r(&r->seed) % 4000);
		before = __atomic_load_n(&newest[k], __ATOMIC_SEQ_CST);
		ret = kwq_done_ticket(r->fd, buf, len, t);
		if (ret >= 0 && before > t)
			__atomic_add_fetch(&race_violations, 1, __ATOMIC_RELAXED);
		if (ret == -ENOENT && before > t)
			__atomic_add_fetch(&race_stale_refused, 1, __ATOMIC_RELAXED);
		if (ret >= 0)
			__atomic_add_fetch(&race_dones, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

static void test_exclusive_hold_race(void)
{
	int fd = -1, shared;
	struct racer r[RACE_THREADS];
	pthread_t th[RACE_THREADS];
	struct kwq_ioc_create c;
	struct kwq_stats st;
	int i;

	memset(&c, 0, sizeof(c));
	snprintf((char *)c.name, sizeof(c.name), "ho-race");
	c.mode = 0600;
	c.processing_timeout_ns = 2000000;
	fd = kwq_create_ex(&c);
	if (fd < 0) {
		printf("Bail out! create ho-race: %s\n", strerror(-fd));
		exit(1);
	}
	shared = open_q("ho-race");
	for (i = 0; i < RACE_THREADS; i++) {
		r[i].fd = i < 2 ? shared : open_q("ho-race");
		r[i].flags = i < 2 ? 0 : KWQ_GET_UNLEASED;
		r[i].seed = 1234 + i;
		pthread_create(&th[i], NULL, racer_fn, &r[i]);
	}
	sleep(3);
	race_stop = 1;
	for (i = 0; i < RACE_THREADS; i++)
		pthread_join(th[i], NULL);
	st = stats_of(fd);
	printf("# race: %ld dones, %ld late dones refused, %llu expiries\n", race_dones,
	       race_stale_refused, (unsigned long long)st.processing_expiries);
	is(race_violations, 0, "race: no done of a superseded hand-out succeeded");
	ok(race_dones > 0 && st.processing_expiries > 0 && race_stale_refused > 0,
	   "race: keys were done, some taken back, late dones refused (the oracle had work)");
	for (i = 2; i < RACE_THREADS; i++)
		close(r[i].fd);
	close(shared);
	end_queue(fd);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("# kwq hand-out tests (%zu-bit)\n", sizeof(void *) * 8);
	test_ticket_fields();
	test_two_holders_unleased();
	test_two_holders_leased();
	test_two_holders_one_file();
	test_shutdown_keeps_consumers();
	test_drain_waits_for_return();
	test_failed_get_counts_nothing();
	test_epoll_before_attach();
	test_exclusive_hold_race();
	return tap_done();
}
