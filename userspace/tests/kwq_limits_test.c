// SPDX-License-Identifier: GPL-2.0
/*
 * The limits of Documentation/kwq-limits.rst: module parameters refuse
 * values out of range, the per-user limit on key-record bytes
 * (max_key_bytes_per_user), and memory cgroups: a queue's bucket arrays
 * are charged to its creator's cgroup, adds in a full cgroup fail
 * cleanly, and the host is untouched. Runs as root in the guest; other
 * users are forked children that drop to them. The 32-bit program runs
 * with --no-memcg (see main()).
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdbool.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "tap.h"
#include "kwq_test_util.h"
#include "kwq_test_memcg.h"

#define PARAMS		"/sys/module/kwq/parameters/"
#define LIMIT		65536	/* max_key_bytes_per_user during the test */
#define KEYLEN		200
#define BIGKEY		512

/* What children report back. */
struct shared {
	int n, err, again, len, items, adds, dup, other, after_done, batch, batch_adds;
	int gets, taken;
};

static struct shared *sh;
static char cg[128];

static int param_write(const char *name, const char *val)
{
	char path[128];

	snprintf(path, sizeof(path), PARAMS "%s", name);
	return write_file(path, val);
}

static long long param_read(const char *name)
{
	char path[128];

	snprintf(path, sizeof(path), PARAMS "%s", name);
	return read_num(path);
}

static void param_set(const char *name, long long v)
{
	char val[32];

	snprintf(val, sizeof(val), "%lld", v);
	if (param_write(name, val))
		printf("# cannot set %s to %lld\n", name, v);
}

/* Key @i of @len bytes: its number (as many digits as fit, up to 10), then filler. */
static void make_key(char *key, int i, int len)
{
	char num[16];
	int w = len < 10 ? len : 10;

	memset(key, 'k', len);
	snprintf(num, sizeof(num), "%0*d", w, i);
	memcpy(key, num, w);
}

static int add_n(int fd, int from, int count, int len)
{
	char key[KWQ_KEY_MAX];
	int i, ret;

	for (i = from; i < from + count; i++) {
		make_key(key, i, len);
		ret = kwq_add(fd, key, len);
		if (ret < 0)
			return ret;
	}
	return 0;
}

/* Add keys until one fails; returns how many went in, the error in *err. */
static int fill(int fd, int from, int len, int max, int *err)
{
	char key[KWQ_KEY_MAX];
	int i, ret = 0;

	for (i = 0; i < max; i++) {
		make_key(key, from + i, len);
		ret = kwq_add(fd, key, len);
		if (ret < 0)
			break;
	}
	*err = ret < 0 ? ret : 0;
	return i;
}

/* Run @fn in a child as @uid (0: stay root); its exit status. */
static int as_user(uid_t uid, int (*fn)(void))
{
	pid_t pid = fork();
	int status;

	if (pid == 0) {
		if (uid && (setresgid(uid, uid, uid) || setresuid(uid, uid, uid)))
			_exit(100);
		_exit(fn());
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static char qa[KWQ_NAME_MAX], qb[KWQ_NAME_MAX];

/* ---- module parameters ---- */

struct bad_values {
	const char *name;
	const char *bad[6];
	const char *edge;	/* the largest value in range */
};

static const struct bad_values params[] = {
	{ "max_queues", { "0", "65537", "-1", "abc", "12abc", "99999999999999999999999" },
	  "65536" },
	{ "max_queues_per_user", { "65537", "-1", "4294967296", "x", NULL }, "65536" },
	{ "max_queues_per_ns", { "0", "65537", "-1", "4294967296", "x", NULL }, "65536" },
	{ "kernel_reserve_queues", { "65537", "-1", "4294967296", "1.5", NULL }, "65536" },
	{ "max_items_per_queue", { "0", "16777217", "4294967296", "-1", NULL }, "16777216" },
	{ "max_backoff_keys", { "16777217", "-5", "0x1000001", NULL }, "16777216" },
	{ "max_key_bytes_per_user", { "1099511627777", "-1", "18446744073709551616", "1e6", NULL },
	  "1099511627776" },
};

static void test_params(void)
{
	unsigned int i, j;
	int old_q, new_q;
	long long items;

	for (i = 0; i < sizeof(params) / sizeof(params[0]); i++) {
		const struct bad_values *p = &params[i];
		long long old = param_read(p->name);

		ok(old >= 0, "%s reads %lld", p->name, old);
		for (j = 0; j < 6 && p->bad[j]; j++) {
			is(param_write(p->name, p->bad[j]), -EINVAL, "writing \"%s\" to %s fails with -EINVAL",
			   p->bad[j], p->name);
			is(param_read(p->name), old, "... and leaves it at %lld", old);
		}
		is(param_write(p->name, p->edge), 0, "%s takes %s, the top of its range", p->name,
		   p->edge);
		param_set(p->name, old);
		is(param_read(p->name), old, "%s is back at %lld", p->name, old);
	}

	/* The measurements take only 0, a reset; anything else is -EINVAL. */
	for (i = 0; i < 2; i++) {
		static const char *const hold[] = { "hold_max_keys", "hold_max_ns" };
		static const char *const bad[] = { "1", "-1", "abc", "18446744073709551616" };

		ok(param_read(hold[i]) >= 0, "%s reads a number", hold[i]);
		for (j = 0; j < 4; j++)
			is(param_write(hold[i], bad[j]), -EINVAL,
			   "writing \"%s\" to %s fails with -EINVAL", bad[j], hold[i]);
		is(param_write(hold[i], "0"), 0, "%s takes 0", hold[i]);
	}

	/* max_items_per_queue applies to queues created after a change. */
	items = param_read("max_items_per_queue");
	snprintf(qa, sizeof(qa), "lp-old-%d", getpid());
	snprintf(qb, sizeof(qb), "lp-new-%d", getpid());
	old_q = new_queue(qa);
	param_set("max_items_per_queue", 100);
	new_q = new_queue(qb);
	is(add_n(new_q, 0, 100, 8), 0, "a queue made after max_items_per_queue=100 takes 100 keys");
	is(add_n(new_q, 100, 1, 8), -ENOSPC, "... and not a 101st");
	is(add_n(old_q, 0, 101, 8), 0, "a queue made before takes 101");
	param_set("max_items_per_queue", items);
	end_queue(old_q);
	end_queue(new_q);
}

/* ---- the per-user limit on key bytes ---- */

static int nobody_fills(void)
{
	char key[KWQ_KEY_MAX];
	struct kwq_batch_entry e;
	struct kwq_stats st;
	int a = kwq_create(qa, 0600, 0), b = kwq_create(qb, 0600, 0);
	size_t len;

	if (a < 0 || b < 0)
		return 1;
	sh->n = fill(a, 0, KEYLEN, 65536, &sh->err);
	sh->again = add_n(a, 100000, 1, KEYLEN);
	st = stats_of(a);
	sh->len = (int)kwq_len(a);
	sh->items = (int)st.items;
	sh->adds = (int)st.adds;
	make_key(key, 0, KEYLEN);
	sh->dup = kwq_add(a, key, KEYLEN);
	/* The same user's other queue shares the total. */
	sh->other = add_n(b, 0, 1, KEYLEN);
	/* A batch add past the limit fails and counts nothing. */
	make_key(key, 200000, KEYLEN);
	memset(&e, 0, sizeof(e));
	e.key_ptr = (uintptr_t)key;
	e.key_len = KEYLEN;
	sh->batch = kwq_add_batch(a, &e, 1, 0);
	st = stats_of(a);
	sh->batch_adds = (int)st.adds;
	/* A key that leaves its table gives its bytes back. */
	if (kwq_get(a, key, sizeof(key), &len, 0) || kwq_done(a, key, len) < 0)
		return 2;
	sh->after_done = add_n(b, 1, 1, KEYLEN);
	return 0;
}

/* A fresh user's queue takes as many keys as the first user's did. */
static int user_takes_n(void)
{
	int fd = kwq_create(qa, 0600, 0), ret;

	if (fd < 0)
		return 1;
	ret = add_n(fd, 0, sh->n, KEYLEN);
	kwq_destroy(fd);
	return ret ? 3 : 0;
}

static int nobody_takes_more(void)
{
	int fd = kwq_create(qa, 0600, 0), ret;

	if (fd < 0)
		return 1;
	ret = add_n(fd, 0, sh->n + 20, KEYLEN);
	kwq_destroy(fd);
	return ret ? 3 : 0;
}

static void destroy_named(const char *name)
{
	int fd = kwq_open(name, O_RDWR);

	if (fd >= 0)
		end_queue(fd);
}

static void test_user_limit(void)
{
	long long old = param_read("max_key_bytes_per_user");
	uint64_t t0;
	int root, ret;

	snprintf(qa, sizeof(qa), "lu-a-%d", getpid());
	snprintf(qb, sizeof(qb), "lu-b-%d", getpid());
	param_set("max_key_bytes_per_user", LIMIT);
	is(as_user(65534, nobody_fills), 0, "uid 65534 fills two queues");
	is(sh->err, -ENOSPC, "an add past max_key_bytes_per_user=%d fails with -ENOSPC", LIMIT);
	ok(sh->n >= LIMIT / 1024 && sh->n <= LIMIT / KEYLEN,
	   "... after %d keys of %d bytes (%d..%d: each counts its record)", sh->n, KEYLEN,
	   LIMIT / 1024, LIMIT / KEYLEN);
	is(sh->again, -ENOSPC, "... and so does the next");
	is(sh->len, sh->n, "the queue holds exactly the keys taken");
	is(sh->items, sh->n, "... records too");
	is(sh->adds, sh->n, "... and counted those adds only");
	ok(sh->dup >= 0, "an add of a key already queued still works (%d)", sh->dup);
	is(sh->other, -ENOSPC, "the user's other queue is at the limit too");
	is(sh->batch, -ENOSPC, "a batch add past the limit fails with -ENOSPC");
	is(sh->batch_adds, sh->n, "... and counts nothing");
	is(sh->after_done, 0, "a key done and gone makes room for one more");

	snprintf(qa, sizeof(qa), "lu-c-%d", getpid());
	is(as_user(65533, user_takes_n), 0, "uid 65533 has its own total: %d keys go in", sh->n);

	snprintf(qa, sizeof(qa), "lu-r-%d", getpid());
	root = new_queue(qa);
	is(add_n(root, 0, sh->n + 50, KEYLEN), 0,
	   "root (CAP_SYS_RESOURCE) is exempt: %d keys go in", sh->n + 50);
	end_queue(root);

	/* Destroying the queues gives their bytes back. */
	snprintf(qa, sizeof(qa), "lu-a-%d", getpid());
	destroy_named(qa);
	destroy_named(qb);
	snprintf(qa, sizeof(qa), "lu-d-%d", getpid());
	/* The bytes come back once the queues are freed: try for 10 s. */
	for (t0 = now_ns(); ; usleep(100000)) {
		ret = as_user(65534, user_takes_n);
		if (!ret || now_ns() - t0 > 10000000000ULL)
			break;
	}
	is(ret, 0, "after its queues are destroyed uid 65534 adds %d again", sh->n);

	param_set("max_key_bytes_per_user", 0);
	snprintf(qa, sizeof(qa), "lu-e-%d", getpid());
	is(as_user(65534, nobody_takes_more), 0, "max_key_bytes_per_user=0: no limit");
	param_set("max_key_bytes_per_user", old);
	is(param_read("max_key_bytes_per_user"), old, "max_key_bytes_per_user is back at %lld", old);
}

/*
 * Both limits' exemption is the opener's CAP_SYS_RESOURCE (f_cred), not
 * the ioctl caller's: a descriptor opened by uid 65534 and used by root
 * makes a limited queue owned by 65534, and one opened by root and used by
 * uid 65534 an exempt queue owned by root.
 */
static uid_t opener, caller;

/* In a child of root: open /dev/kwq as @opener, create qa as @caller, fill it. */
static int open_as_create_as(void)
{
	struct kwq_ioc_create c = { .mode = 0600 };
	int fd, ret;

	if (setresuid(-1, opener, -1))
		return 100;
	fd = open(KWQ_DEFAULT_DEV, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return 101;
	if (setresuid(-1, 0, -1) || setresuid(-1, caller, -1))
		return 102;
	snprintf((char *)c.name, sizeof(c.name), "%s", qa);
	sh->err = raw_ioctl(fd, KWQ_IOC_CREATE, &c);
	if (sh->err)
		return 0;
	sh->n = fill(fd, 0, KEYLEN, LIMIT / KEYLEN + 50, &sh->again);
	ret = kwq_destroy(fd);
	return ret ? 103 : 0;
}

static void test_exempt_is_openers(void)
{
	long long old_q = param_read("max_queues_per_user");
	long long old_b = param_read("max_key_bytes_per_user");

	snprintf(qa, sizeof(qa), "lx-%d", getpid());
	param_set("max_queues_per_user", 0);
	opener = 65534;
	caller = 0;
	is(as_user(0, open_as_create_as), 0, "opened by uid 65534, used by root");
	is(sh->err, -ENOSPC, "... the create counts against max_queues_per_user=0: -ENOSPC");
	opener = 0;
	caller = 65534;
	is(as_user(0, open_as_create_as), 0, "opened by root, used by uid 65534");
	is(sh->err, 0, "... the create is exempt");

	param_set("max_queues_per_user", old_q);
	param_set("max_key_bytes_per_user", LIMIT);
	opener = 65534;
	caller = 0;
	is(as_user(0, open_as_create_as), 0, "opened by uid 65534, used by root");
	is(sh->again, -ENOSPC, "... an add past max_key_bytes_per_user=%d: -ENOSPC", LIMIT);
	ok(sh->n < LIMIT / KEYLEN, "... after %d keys", sh->n);
	opener = 0;
	caller = 65534;
	is(as_user(0, open_as_create_as), 0, "opened by root, used by uid 65534");
	is(sh->n, LIMIT / KEYLEN + 50, "... every add goes in: the queue is exempt");
	param_set("max_key_bytes_per_user", old_b);
}

/* How many lines of @cmd's output (run by sh) start with @prefix; -1 on error. */
static int count_lines(const char *cmd, const char *prefix)
{
	char line[256];
	int n = 0;
	FILE *p = popen(cmd, "r");

	if (!p)
		return -1;
	while (fgets(line, sizeof(line), p))
		n += !strncmp(line, prefix, strlen(prefix));
	return pclose(p) ? -1 : n;
}

/*
 * max_queues goes to 65,536: kwqctl list and metrics name every queue,
 * past the 1,024 they once stopped at.
 */
#define MANY_QUEUES	1030

static void test_kwqctl_many_queues(void)
{
	long long old = param_read("max_queues");
	char name[KWQ_NAME_MAX], prefix[64];
	int i, fd, made = 0;

	param_set("max_queues", 2048);
	for (i = 0; i < MANY_QUEUES; i++) {
		snprintf(name, sizeof(name), "lk-%d-%d", getpid(), i);
		fd = kwq_create(name, 0600, 0);
		if (fd < 0)
			break;
		close(fd);
		made++;
	}
	is(made, MANY_QUEUES, "root makes %d named queues (max_queues=2048)", MANY_QUEUES);
	snprintf(prefix, sizeof(prefix), "lk-%d-", getpid());
	is(count_lines("kwqctl list", prefix), MANY_QUEUES, "kwqctl list names all %d",
	   MANY_QUEUES);
	snprintf(prefix, sizeof(prefix), "workqueue_depth{name=\"lk-%d-", getpid());
	is(count_lines("kwqctl metrics", prefix), MANY_QUEUES,
	   "kwqctl metrics has a depth for each of them");
	for (i = 0; i < made; i++) {
		snprintf(name, sizeof(name), "lk-%d-%d", getpid(), i);
		destroy_named(name);
	}
	param_set("max_queues", old);
	is(param_read("max_queues"), old, "max_queues is back at %lld", old);
}

/* ---- memory cgroups ---- */

static int cg_setup(void)
{
	char path[160];
	int ret = memcg_setup(cg, sizeof(cg), "limits");

	if (ret)
		return ret;
	snprintf(path, sizeof(path), "%s/memory.max", cg);
	return write_file(path, "8M");
}

/* Make the named queue qa from inside the cgroup. */
/* Queues whose bucket arrays the memcg test measures, made in the cgroup. */
#define CG_QUEUES	4

static void cg_queue_name(char *name, int i)
{
	/* qa is "lm-a-PID", far shorter than a name. */
	snprintf(name, KWQ_NAME_MAX, "%.40s-%d", qa, i);
}

static int create_in_cg(void)
{
	char name[KWQ_NAME_MAX];
	int i;

	if (memcg_join(cg))
		return 1;
	for (i = 0; i < CG_QUEUES; i++) {
		cg_queue_name(name, i);
		if (kwq_create(name, 0600, 0) < 0)
			return 2;
	}
	return 0;
}

/*
 * Fill a queue from inside the cgroup until the cgroup is full. Whatever
 * this process touches afterwards is touched first: a page fault in a
 * full cgroup would call its OOM killer on us.
 */
static int fill_in_cg(void)
{
	char key[KWQ_KEY_MAX];
	volatile char stack[65536];
	struct kwq_batch_entry e;
	struct kwq_stats st;
	int fd, i;
	size_t len;

	memset((char *)stack, 0, sizeof(stack));
	memset(sh, 0, sizeof(*sh));
	memset(&st, 0, sizeof(st));
	memset(&e, 0, sizeof(e));
	memset(key, 0, sizeof(key));
	if (memcg_join(cg))
		return 1;
	fd = kwq_create(qb, 0600, 0);
	if (fd < 0)
		return 2;
	sh->n = fill(fd, 0, BIGKEY, 60000, &sh->err);
	/* Memory may come free meanwhile: the next adds may or may not fit. */
	sh->taken = sh->n;
	for (i = 1; i <= 3; i++) {
		int ret = add_n(fd, 100000 + i, 1, BIGKEY);

		if (!ret)
			sh->taken++;
		else if (ret == -ENOMEM || ret == -ENOSPC)
			sh->again++;
	}
	/*
	 * The descriptor's first batch allocates its 8 KiB work buffer in the
	 * full cgroup: the batch may fail, but not by the OOM killer.
	 */
	make_key(key, 100010, BIGKEY);
	e.key_ptr = (uintptr_t)key;
	e.key_len = BIGKEY;
	sh->batch = kwq_add_batch(fd, &e, 1, 0);
	sh->taken += sh->batch == 1;
	st = stats_of(fd);
	sh->len = (int)kwq_len(fd);
	sh->items = (int)st.items;
	sh->adds = (int)st.adds;
	for (sh->gets = 0; !kwq_get(fd, key, sizeof(key), &len, 0); sh->gets++)
		kwq_done(fd, key, len);
	end_queue(fd);
	return 0;
}

static void test_memcg(void)
{
	long long m0, m1 = 0, m2 = 0, cached = (256LL << 10) * sysconf(_SC_NPROCESSORS_ONLN);
	int ret = cg_setup(), fds[CG_QUEUES], fd, i, status, added = 0, opened = 0;
	char name[KWQ_NAME_MAX];

	if (ret) {
		/* Every kernel make check runs has memory cgroups: not a skip. */
		ok(0, "memory cgroup: cannot set one up: %s", strerror(-ret));
		return;
	}
	/* The bucket arrays of a queue go to its creator's cgroup. */
	snprintf(qa, sizeof(qa), "lm-a-%d", getpid());
	is(as_user(0, create_in_cg), 0, "a child in a cgroup (memory.max 8M) makes %d queues",
	   CG_QUEUES);
	m0 = memcg_current(cg);
	/*
	 * 17,000 keys in each: past 16,384 a table grows to 2^16 buckets,
	 * 512 KiB, so 2 MiB in all, well above the charges a cgroup keeps
	 * cached per CPU (64 pages, 256 KiB, each), which memory.current
	 * counts and which may stay after the arrays are freed.
	 */
	for (i = 0; i < CG_QUEUES; i++) {
		cg_queue_name(name, i);
		fds[i] = kwq_open(name, O_RDWR);
		opened += fds[i] >= 0;
		added += fds[i] >= 0 && !add_n(fds[i], 0, 17000, 8);
	}
	ok(opened == CG_QUEUES && added == CG_QUEUES,
	   "the root cgroup opens them and adds 17,000 keys to each");
	for (i = 0; i < 100; i++) {
		m1 = memcg_current(cg);
		if (m1 - m0 >= 1024 << 10)
			break;
		usleep(100000);
	}
	ok(m1 - m0 >= 1024 << 10 && m1 - m0 < 6144 << 10,
	   "the creator's memory.current grew by %lld KiB as the tables grew to 4 x 512 KiB (records are the adder's)",
	   (m1 - m0) >> 10);
	for (i = 0; i < CG_QUEUES; i++)
		if (fds[i] >= 0)
			end_queue(fds[i]);
	for (i = 0; i < 100; i++) {
		m2 = memcg_current(cg);
		if (m2 < m0 + cached)
			break;
		usleep(100000);
	}
	ok(m2 < m0 + cached,
	   "... and shrank back (%lld KiB above the start, less than the %lld KiB of per-CPU cached charges) once destroyed",
	   (m2 - m0) >> 10, cached >> 10);

	/* Adds in a full cgroup fail cleanly. */
	snprintf(qb, sizeof(qb), "lm-b-%d", getpid());
	memset(sh, 0, sizeof(*sh));
	status = as_user(0, fill_in_cg);
	is(status, 0, "a child fills a queue inside the cgroup and is not killed");
	ok(sh->err == -ENOMEM || sh->err == -ENOSPC,
	   "an add fails with -ENOMEM or -ENOSPC after %d keys of %d bytes (%d)", sh->n, BIGKEY,
	   sh->err);
	ok(sh->n > 1000, "... not before the cgroup was nearly full");
	is(sh->again + sh->taken - sh->n - (sh->batch == 1), 3,
	   "the next three adds fit or fail the same way (%d failed)", sh->again);
	ok(sh->batch == 1 || sh->batch == -ENOMEM || sh->batch == -ENOSPC,
	   "the descriptor's first batch, in the full cgroup, adds or fails cleanly (%d)", sh->batch);
	is(sh->len, sh->taken, "the queue holds exactly the keys taken");
	is(sh->items, sh->taken, "... records too");
	is(sh->adds, sh->taken, "... and counted those adds only");
	is(sh->gets, sh->taken, "every key taken comes out");

	/* The host is untouched. */
	snprintf(qa, sizeof(qa), "lm-c-%d", getpid());
	fd = new_queue(qa);
	is(add_n(fd, 0, 10000, BIGKEY), 0, "the root cgroup still makes a queue and adds 10,000 keys of 512 bytes (10 MB of records)");
	end_queue(fd);
	if (rmdir(cg))
		printf("# rmdir %s: %s\n", cg, strerror(errno));
}

int main(int argc, char **argv)
{
	/*
	 * --no-memcg: the memcg checks fill queues with tens of thousands of
	 * keys and measure charges the same way whatever the caller's word
	 * size, so the 32-bit program leaves them to the 64-bit one.
	 */
	bool memcg = !(argc > 1 && !strcmp(argv[1], "--no-memcg"));

	setvbuf(stdout, NULL, _IOLBF, 0);
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED) {
		printf("Bail out! mmap\n");
		return 1;
	}
	if (getuid()) {
		printf("1..0 # SKIP needs root\n");
		return 0;
	}
	test_params();
	test_user_limit();
	test_exempt_is_openers();
	test_kwqctl_many_queues();
	if (memcg)
		test_memcg();
	else
		printf("# --no-memcg: the memcg checks run in the 64-bit program\n");
	return tap_done();
}
