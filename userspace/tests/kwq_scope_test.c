// SPDX-License-Identifier: GPL-2.0
/*
 * Queues and their IPC namespaces (Documentation/kwq-security.rst and
 * kwq-limits.rst): a namespace's queues die with it and never keep it
 * alive, what a local user can hold per namespace and per user chain, the
 * kernel scope's reserve, and what root in the host sees and destroys.
 * Every user here is an unprivileged uid in a user and IPC namespace of
 * its own, as a local user can make one on Debian; root runs the test and
 * watches from the host. The 32-bit program runs the same tests.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/prctl.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <grp.h>

#include "tap.h"
#include "kwq_test_util.h"
#include "kwq_test_memcg.h"

#define PARAMS		"/sys/module/kwq/parameters/"
#define SHM_MB		64
#define REAP_MS		5000	/* what the test allows for a dead namespace's queues */

static long long param_read(const char *name)
{
	char path[128];

	snprintf(path, sizeof(path), PARAMS "%s", name);
	return read_num(path);
}

static void param_set(const char *name, long long v)
{
	char path[128], val[32];

	snprintf(path, sizeof(path), PARAMS "%s", name);
	snprintf(val, sizeof(val), "%lld", v);
	if (write_file(path, val))
		printf("# cannot set %s to %lld\n", name, v);
}

static uint64_t ms_now(void)
{
	return now_ns() / 1000000;
}

/* ---- children in namespaces of their own -------------------------------- */

/*
 * A child and its two pipes: @up (child to parent) and @down (parent to
 * child), one int per message.
 */
struct kid {
	pid_t pid;
	int up[2], down[2];
};

/* A peer that is gone reads as -9999 on the other side; nothing to do here. */
static void send_int(int fd, int v)
{
	if (write(fd, &v, sizeof(v)) != sizeof(v))
		return;
}

static int recv_int(int fd)
{
	int v;

	return read(fd, &v, sizeof(v)) == sizeof(v) ? v : -9999;
}

static int become(uid_t uid)
{
	return setresgid(uid, uid, uid) || setgroups(0, NULL) || setresuid(uid, uid, uid) ?
		-errno : 0;
}

/*
 * Run @fn(@arg) in a child as @uid: a uid of the host (@host: its groups
 * dropped too) or of the caller's user namespace. Its exit status.
 */
static int as_uid(uid_t uid, bool host, int (*fn)(void *), void *arg)
{
	int status = -1;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		if (host ? become(uid) != 0 : setresgid(uid, uid, uid) || setresuid(uid, uid, uid))
			_exit(210);
		_exit(fn(arg));
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/*
 * Fork a child that becomes @uid and enters a new user and IPC namespace.
 * With @map NULL it maps its namespace's root to @uid itself, as any
 * user can; otherwise root in the host writes @map (uids and gids, e.g.
 * several subordinate ids) and the child becomes the namespace's root.
 * The child then runs @fn and exits with its result.
 */
static int kid_start(struct kid *k, uid_t uid, const char *map, int (*fn)(struct kid *, void *),
		     void *arg)
{
	char path[64], self[64];

	if (pipe(k->up) || pipe(k->down))
		return -errno;
	fflush(stdout);
	k->pid = fork();
	if (k->pid < 0)
		return -errno;
	if (k->pid == 0) {
		close(k->up[0]);
		close(k->down[1]);
		if (become(uid) || unshare(CLONE_NEWUSER | CLONE_NEWIPC))
			_exit(100);
		if (!map) {
			if (prctl(PR_SET_DUMPABLE, 1, 0, 0, 0))
				_exit(101);
			snprintf(self, sizeof(self), "0 %u 1", uid);
			if (write_file("/proc/self/setgroups", "deny") ||
			    write_file("/proc/self/uid_map", self) ||
			    write_file("/proc/self/gid_map", self))
				_exit(102);
		} else {
			send_int(k->up[1], 0);
			if (recv_int(k->down[0]) != 0)
				_exit(103);
			if (setresgid(0, 0, 0) || setresuid(0, 0, 0))
				_exit(104);
		}
		_exit(fn(k, arg));
	}
	close(k->up[1]);
	close(k->down[0]);
	if (map) {
		if (recv_int(k->up[0]) != 0)
			return -EIO;
		snprintf(path, sizeof(path), "/proc/%d/uid_map", k->pid);
		if (write_file(path, map))
			return -EPERM;
		snprintf(path, sizeof(path), "/proc/%d/gid_map", k->pid);
		if (write_file(path, map))
			return -EPERM;
		send_int(k->down[1], 0);
	}
	return 0;
}

static int kid_wait(struct kid *k)
{
	int status = -1;

	close(k->down[1]);
	waitpid(k->pid, &status, 0);
	close(k->up[0]);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* The inode number of the caller's IPC namespace. */
static unsigned int my_ipc_inum(void)
{
	struct stat st;

	return stat("/proc/self/ns/ipc", &st) ? 0 : (unsigned int)st.st_ino;
}

/* ---- what root in the host sees --------------------------------------- */

/* KWQ_IOC_LIST_ALL through @fd: the count, entries into @info (up to @cap). */
static int list_all(int fd, struct kwq_queue_info *info, unsigned int cap)
{
	struct kwq_ioc_list_all l = { .info_ptr = (uintptr_t)info, .capacity = cap };
	int ret = raw_ioctl(fd, KWQ_IOC_LIST_ALL, &l);

	return ret ? ret : (int)l.count;
}

/* The entry of queue @name of namespace @inum, into *@out: 1 if listed, 0 if not. */
static int find_queue(const char *name, unsigned int inum, struct kwq_queue_info *out)
{
	static struct kwq_queue_info info[4096];
	int fd = dev_open(O_RDONLY), n, i, found = 0;

	n = list_all(fd, info, 4096);
	close(fd);
	for (i = 0; i < n && i < 4096; i++) {
		if (info[i].ipc_inum == inum && !strcmp((char *)info[i].name, name)) {
			if (out)
				*out = info[i];
			found = 1;
		}
	}
	return n < 0 ? n : found;
}

static int destroy_in(const char *name, unsigned int inum, unsigned int flags)
{
	struct kwq_ioc_destroy_in d = { .ipc_inum = inum, .flags = flags };
	int fd = dev_open(O_RDONLY), ret;

	snprintf((char *)d.name, sizeof(d.name), "%s", name);
	ret = raw_ioctl(fd, KWQ_IOC_DESTROY_IN, &d);
	close(fd);
	return ret;
}

/* Wait up to REAP_MS for queue @name of namespace @inum to go; the ms it took, or -1. */
static long wait_gone(const char *name, unsigned int inum)
{
	uint64_t t0 = ms_now();

	while (ms_now() - t0 <= REAP_MS) {
		if (find_queue(name, inum, NULL) == 0)
			return (long)(ms_now() - t0);
		usleep(50000);
	}
	return -1;
}

/* Shmem of /proc/meminfo, kB. */
static long long shmem_kb(void)
{
	char line[128];
	long long kb = -1;
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Shmem: %lld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

/* ---- a queue does not keep its namespace alive -------------------------- */

/* Send @fd over the socket @sock. */
static int send_fd(int sock, int fd)
{
	char buf[CMSG_SPACE(sizeof(int))] = { 0 }, c = 'f';
	struct iovec iov = { .iov_base = &c, .iov_len = 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1,
			    .msg_control = buf, .msg_controllen = sizeof(buf) };
	struct cmsghdr *cm = CMSG_FIRSTHDR(&m);

	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	return sendmsg(sock, &m, 0) == 1 ? 0 : -errno;
}

static int recv_fd(int sock)
{
	char buf[CMSG_SPACE(sizeof(int))] = { 0 }, c;
	struct iovec iov = { .iov_base = &c, .iov_len = 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1,
			    .msg_control = buf, .msg_controllen = sizeof(buf) };
	struct cmsghdr *cm;
	int fd;

	if (recvmsg(sock, &m, 0) != 1)
		return -1;
	cm = CMSG_FIRSTHDR(&m);
	if (!cm || cm->cmsg_type != SCM_RIGHTS)
		return -1;
	memcpy(&fd, CMSG_DATA(cm), sizeof(int));
	return fd;
}

static int sock_pair[2];

/*
 * In its namespace: a SysV segment of SHM_MB, touched, left for the
 * namespace to free, and queue "doomed" with a key; reports the
 * namespace's inode, waits for the go. With @arg, sends the queue's
 * descriptor to the parent first.
 */
static int doomed(struct kid *k, void *arg)
{
	size_t size = (size_t)SHM_MB << 20;
	int id = shmget(IPC_PRIVATE, size, IPC_CREAT | 0600), fd;
	char *p;

	if (id < 0)
		return 10;
	p = shmat(id, NULL, 0);
	if (p == (void *)-1)
		return 11;
	memset(p, 1, size);
	shmdt(p);
	fd = kwq_create("doomed", 0600, 0);
	if (fd < 0)
		return 12;
	if (kwq_add(fd, "k", 1) < 0)
		return 13;
	if (arg && send_fd(sock_pair[1], fd))
		return 14;
	send_int(k->up[1], (int)my_ipc_inum());
	return recv_int(k->down[0]) == 0 ? 0 : 15;
}

static void test_lifetime(void)
{
	struct kwq_queue_info info;
	long long base = shmem_kb(), t;
	unsigned int inum;
	struct kid k;
	uint64_t t0;
	int qfd;

	ok(base >= 0, "lifetime: /proc/meminfo has Shmem (%lld kB)", base);
	is(kid_start(&k, 1000, NULL, doomed, NULL), 0,
	   "lifetime: uid 1000 enters a user and IPC namespace of its own");
	inum = (unsigned int)recv_int(k.up[0]);
	ok(inum && inum != (unsigned int)-9999, "lifetime: it made a %d MB SysV segment and queue \"doomed\" there", SHM_MB);
	is(find_queue("doomed", inum, &info), 1,
	   "lifetime: root in the host lists the queue (KWQ_IOC_LIST_ALL)");
	is(info.uid, 1000, "lifetime: ... owned by uid 1000");
	ok(shmem_kb() >= base + (SHM_MB << 10) * 3 / 4, "lifetime: Shmem rose by about %d MB",
	   SHM_MB);
	send_int(k.down[1], 0);
	is(kid_wait(&k), 0, "lifetime: the namespace's last task exits");
	t = wait_gone("doomed", inum);
	ok(t >= 0, "lifetime: its queue is gone %ld ms later (at most %d allowed)", (long)t,
	   REAP_MS);
	t0 = ms_now();
	while (shmem_kb() > base + (SHM_MB << 10) / 4 && ms_now() - t0 < REAP_MS)
		usleep(50000);
	ok(shmem_kb() <= base + (SHM_MB << 10) / 4,
	   "lifetime: and the namespace with its %d MB segment is freed (Shmem %lld kB, was %lld)",
	   SHM_MB, shmem_kb(), base);

	/* An open descriptor opened in the namespace keeps it, like a task. */
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sock_pair)) {
		ok(0, "lifetime: socketpair");
		return;
	}
	base = shmem_kb();
	is(kid_start(&k, 1000, NULL, doomed, (void *)1), 0,
	   "lifetime: again, the child sends its queue's descriptor to root");
	qfd = recv_fd(sock_pair[0]);
	inum = (unsigned int)recv_int(k.up[0]);
	ok(qfd >= 0 && inum && inum != (unsigned int)-9999, "lifetime: root holds the descriptor");
	send_int(k.down[1], 0);
	is(kid_wait(&k), 0, "lifetime: the namespace's last task exits");
	usleep(2500 * 1000);
	is(find_queue("doomed", inum, NULL), 1,
	   "lifetime: 2.5 s later the queue is there: a descriptor opened in the namespace holds it");
	is(kwq_add(qfd, "k2", 2), 0, "lifetime: and the descriptor adds to it");
	is(stats_of(qfd).queued, 2, "lifetime: and reads its stats (2 keys)");
	close(qfd);
	ok(wait_gone("doomed", inum) >= 0, "lifetime: once it is closed the queue goes");
	t0 = ms_now();
	while (shmem_kb() > base + (SHM_MB << 10) / 4 && ms_now() - t0 < REAP_MS)
		usleep(50000);
	ok(shmem_kb() <= base + (SHM_MB << 10) / 4, "lifetime: and the namespace is freed");
	close(sock_pair[0]);
	close(sock_pair[1]);
}

/* ---- the queue limit of a namespace ---------------------------------- */

static int scope_limits(int fd, unsigned int flags, unsigned int max, struct kwq_ioc_scope_limits *out)
{
	struct kwq_ioc_scope_limits l = { .flags = flags, .queues_max = max };
	int ret = raw_ioctl(fd, KWQ_IOC_SCOPE_LIMITS, &l);

	if (out)
		*out = l;
	return ret;
}

/* In its own namespace, as its root: read, set and meet the namespace's limit. */
static int ns_limit(struct kid *k __attribute__((unused)), void *arg)
{
	unsigned int ceiling = (unsigned int)(uintptr_t)arg;
	struct kwq_ioc_scope_limits l;
	int fd = dev_open(O_RDWR), q[4], i, ret;
	char name[16];

	if (scope_limits(fd, 0, 0, &l) || l.queues_max != ceiling || l.queues || l.ceiling != ceiling)
		return 10;
	l = (struct kwq_ioc_scope_limits){ .flags = 2 };
	if (raw_ioctl(fd, KWQ_IOC_SCOPE_LIMITS, &l) != -EINVAL)
		return 20;
	l = (struct kwq_ioc_scope_limits){ .queues = 1 };
	if (raw_ioctl(fd, KWQ_IOC_SCOPE_LIMITS, &l) != -EINVAL)
		return 21;
	l = (struct kwq_ioc_scope_limits){ .ceiling = 1 };
	if (raw_ioctl(fd, KWQ_IOC_SCOPE_LIMITS, &l) != -EINVAL)
		return 22;
	l = (struct kwq_ioc_scope_limits){ .reserved = { 0, 1 } };
	if (raw_ioctl(fd, KWQ_IOC_SCOPE_LIMITS, &l) != -EINVAL)
		return 23;
	if (scope_limits(fd, KWQ_SCOPE_LIMITS_SET, 0, NULL) != -EINVAL ||
	    scope_limits(fd, KWQ_SCOPE_LIMITS_SET, ceiling + 1, NULL) != -EINVAL)
		return 11;
	if (scope_limits(fd, KWQ_SCOPE_LIMITS_SET, 3, &l) || l.queues_max != 3)
		return 12;
	for (i = 0; i < 4; i++) {
		snprintf(name, sizeof(name), "lim%d", i);
		q[i] = kwq_create(name, 0600, 0);
	}
	if (q[0] < 0 || q[1] < 0 || q[2] < 0)
		return 13;
	if (q[3] != -ENOSPC)
		return 14;
	if (scope_limits(fd, 0, 0, &l) || l.queues != 3 || l.queues_max != 3)
		return 15;
	end_queue(q[0]);
	ret = kwq_create("lim3", 0600, 0);
	if (ret < 0)
		return 16;
	close(fd);
	return 0;
}

/* Uid 65534 in the host, not the owner of its namespace's user namespace. */
static int host_set_limit(void *arg __attribute__((unused)))
{
	int fd = dev_open(O_RDWR);

	return scope_limits(fd, KWQ_SCOPE_LIMITS_SET, 5, NULL) == -EPERM ? 0 : 1;
}

static void test_ns_limit(void)
{
	long long ceiling = param_read("max_queues_per_ns");
	struct kid k;

	is(kid_start(&k, 1000, NULL, ns_limit, (void *)(uintptr_t)ceiling), 0,
	   "ns limit: uid 1000 in a user and IPC namespace of its own");
	is(kid_wait(&k), 0,
	   "ns limit: its root reads %lld (max_queues_per_ns), gets -EINVAL for an unknown flag, non-zero queues, ceiling or reserved, cannot set 0 or %lld, sets 3, makes 3 queues and is refused a 4th with -ENOSPC, and one more after a destroy",
	   ceiling, ceiling + 1);
	is(as_uid(65534, true, host_set_limit, NULL), 0,
	   "ns limit: uid 65534 cannot set the host namespace's limit (-EPERM)");
}

/* ---- the kernel scope's reserve --------------------------------------- */

/* Make queues until refused; report how many, then wait for the go. */
static int fill_queues(struct kid *k, void *arg __attribute__((unused)))
{
	char name[32];
	int n = 0, fd;

	for (;;) {
		snprintf(name, sizeof(name), "fill%d", n);
		fd = kwq_create(name, 0600, 0);
		if (fd < 0)
			break;
		close(fd);
		n++;
	}
	send_int(k->up[1], fd == -ENOSPC ? n : fd);
	return recv_int(k->down[0]) == 0 ? 0 : 1;
}

/*
 * The named queues outside the kernel scope; with @settle, after waiting
 * up to REAP_MS for those of other namespaces to go. -1 if some stay.
 */
static int count_user_queues(bool settle)
{
	static struct kwq_queue_info info[4096];
	uint64_t t0 = ms_now();
	unsigned int host = my_ipc_inum();
	int fd = dev_open(O_RDONLY), n, i, user, foreign;

	for (;;) {
		n = list_all(fd, info, 4096);
		user = foreign = 0;
		for (i = 0; i < n && i < 4096; i++) {
			user += info[i].ipc_inum != 0;
			foreign += info[i].ipc_inum != 0 && info[i].ipc_inum != host;
		}
		if (n < 0 || !settle || !foreign || ms_now() - t0 > REAP_MS)
			break;
		usleep(50000);
	}
	close(fd);
	return n < 0 || foreign ? -1 : user;
}

static int create_refused(void *arg __attribute__((unused)))
{
	return kwq_create("plain-user", 0600, 0) == -ENOSPC ? 0 : 1;
}

static void test_reserve(void)
{
	long long old_max = param_read("max_queues"), old_res = param_read("kernel_reserve_queues");
	long long old_user = param_read("max_queues_per_user");
	struct kid k[4];
	int i, n, total = 0, fd, ret;
	int others = count_user_queues(true);

	/* Room for 24 named queues, 8 of them the kernel's. */
	ok(others >= 0, "reserve: the earlier tests' namespaces are gone with their queues; %d queues of the host remain",
	   others);
	param_set("max_queues", 24);
	param_set("kernel_reserve_queues", 8);
	param_set("max_queues_per_user", 64);
	for (i = 0; i < 4; i++) {
		if (kid_start(&k[i], 2001 + i, NULL, fill_queues, NULL)) {
			ok(0, "reserve: start uid %d", 2001 + i);
			continue;
		}
		n = recv_int(k[i].up[0]);
		ok(n >= 0, "reserve: uid %d in its own namespaces makes %d queues, then -ENOSPC",
		   2001 + i, n);
		total += n > 0 ? n : 0;
	}
	is(total + others, 16,
	   "reserve: together with the host's they hold max_queues - kernel_reserve_queues (24 - 8)");
	is(as_uid(2005, true, create_refused, NULL), 0,
	   "reserve: uid 2005 in the host is refused too (-ENOSPC)");
	fd = kwq_create("root-res", 0600, 0);
	ok(fd >= 0, "reserve: root (CAP_SYS_RESOURCE) in the host still makes a queue");
	if (access("./kwq_sample.ko", R_OK) == 0) {
		ret = system("insmod ./kwq_sample.ko queue=res-sample create=1 workers=0 2>/dev/null");
		is(ret, 0, "reserve: a kernel module still makes a queue (insmod kwq_sample.ko create=1)");
		if (!ret && system("rmmod kwq_sample"))
			printf("# rmmod kwq_sample failed\n");
	} else {
		ok(1, "reserve: # SKIP no kwq_sample.ko here");
	}
	if (fd >= 0)
		end_queue(fd);
	for (i = 0; i < 4; i++) {
		send_int(k[i].down[1], 0);
		kid_wait(&k[i]);
	}
	param_set("max_queues", old_max);
	param_set("kernel_reserve_queues", old_res);
	param_set("max_queues_per_user", old_user);
	/* The namespaces are gone; so are their 16 queues. */
	fd = kwq_create("after-res", 0600, 0);
	ok(fd >= 0, "reserve: the parameters are back and a queue can be made");
	if (fd >= 0)
		end_queue(fd);
}

/* ---- per-user limits up the user-namespace chain -------------------------- */

/* As ns uid @arg (a grandchild): queues until refused, or keys until refused. */
static int chain_queues(void *arg)
{
	char name[32];
	int n = 0, fd;

	for (;;) {
		snprintf(name, sizeof(name), "chain-%d-%d", (int)(uintptr_t)arg, n);
		fd = kwq_create(name, 0600, 0);
		if (fd < 0)
			break;
		close(fd);
		n++;
	}
	return fd == -ENOSPC ? n : 200;
}

static int chain_keys(void *arg)
{
	char name[32], key[200];
	int n = 0, fd, ret;

	snprintf(name, sizeof(name), "chain-keys-%d", (int)(uintptr_t)arg);
	fd = kwq_create(name, 0600, 0);
	if (fd < 0)
		return 201;
	memset(key, 'k', sizeof(key));
	for (;;) {
		snprintf(key, 11, "%010d", n);
		key[10] = 'k';
		ret = kwq_add(fd, key, sizeof(key));
		if (ret < 0)
			break;
		n++;
		if (n >= 199)
			break;
	}
	return ret == -ENOSPC || n >= 199 ? n : 202;
}

/* The namespace's root, with ns uids 0..3 mapped to subordinate host uids. */
static int chain(struct kid *k, void *arg __attribute__((unused)))
{
	int u, n;

	char name[32];
	int fd, i;

	for (u = 0; u < 4; u++)
		send_int(k->up[1], as_uid(u, false, chain_queues, (void *)(uintptr_t)u));
	/* The namespace's root may destroy its uids' queues. */
	for (u = 0; u < 4; u++) {
		for (i = 0; i < 4; i++) {
			snprintf(name, sizeof(name), "chain-%d-%d", u, i);
			fd = kwq_open(name, O_RDWR);
			if (fd >= 0)
				end_queue(fd);
		}
	}
	for (u = 1; u < 3; u++) {
		n = as_uid(u, false, chain_keys, (void *)(uintptr_t)u);
		send_int(k->up[1], n);
	}
	return 0;
}

static void test_user_chain(void)
{
	long long old_q = param_read("max_queues_per_user");
	long long old_b = param_read("max_key_bytes_per_user");
	int u, n, total = 0, n1, n2;
	struct kid k;

	param_set("max_queues_per_user", 4);
	param_set("max_key_bytes_per_user", 16384);
	is(kid_start(&k, 3000, "0 300000 4", chain, NULL), 0,
	   "user chain: uid 3000 makes a user namespace; root maps ns uids 0..3 to 300000..300003");
	for (u = 0; u < 4; u++) {
		n = recv_int(k.up[0]);
		printf("# ns uid %d made %d queues\n", u, n);
		total += n >= 0 && n < 200 ? n : 100;
	}
	is(total, 4,
	   "user chain: ns uids 0..3 together make max_queues_per_user (4) queues: each counts against uid 3000");
	n1 = recv_int(k.up[0]);
	n2 = recv_int(k.up[0]);
	printf("# ns uid 1 added %d keys of 200 bytes, ns uid 2 %d\n", n1, n2);
	ok(n1 >= 16 && n1 < 199,
	   "user chain: ns uid 1 adds keys of 200 bytes until max_key_bytes_per_user (16384) refuses one");
	is(n2, 0, "user chain: then ns uid 2 cannot add one: the bytes count against uid 3000 too");
	is(kid_wait(&k), 0, "user chain: the namespace's root is done");
	param_set("max_queues_per_user", old_q);
	param_set("max_key_bytes_per_user", old_b);
}

/* ---- root in the host lists and destroys any namespace's queue ------------- */

static int victim(struct kid *k, void *arg __attribute__((unused)))
{
	int fd = kwq_create("victim", 0600, 0), lfd, fd2 = kwq_create("victim2", 0640, 0);
	struct kwq_queue_info info;

	if (fd < 0 || fd2 < 0 || kwq_add(fd, "k", 1) < 0)
		return 10;
	/* Its own root (of a user namespace) may not list every scope. */
	lfd = dev_open(O_RDONLY);
	if (list_all(lfd, &info, 1) != -EPERM)
		return 11;
	close(lfd);
	send_int(k->up[1], (int)my_ipc_inum());
	if (recv_int(k->down[0]) != 0)
		return 12;
	if (kwq_add(fd, "k2", 2) != -EIDRM)
		return 13;
	if (stats_of(fd).queued == ~0ULL)
		return 14;
	if (kwq_open("victim", O_RDWR) != -ENOENT || kwq_open("victim2", O_RDWR) != -ENOENT)
		return 15;
	return 0;
}

static int admin_refused(void *arg)
{
	struct kwq_queue_info info;
	int fd = dev_open(O_RDONLY);

	return list_all(fd, &info, 1) == -EPERM &&
	       destroy_in("victim", *(unsigned int *)arg, 0) == -EPERM ? 0 : 1;
}

static void test_admin(void)
{
	struct kwq_queue_info info;
	unsigned int inum;
	char cmd[160];
	struct kid k;
	int fd;

	is(kid_start(&k, 1000, NULL, victim, NULL), 0,
	   "admin: uid 1000 makes queue \"victim\" in its own namespaces");
	inum = (unsigned int)recv_int(k.up[0]);
	is(find_queue("victim", inum, &info), 1,
	   "admin: root in the host lists it with its namespace's inode number");
	ok(info.uid == 1000 && info.gid == 1000 && info.mode == 0600,
	   "admin: ... its owner uid 1000, gid 1000, mode 0600");
	is(destroy_in(".bad", inum, 0), -EINVAL, "admin: a bad name: -EINVAL");
	is(destroy_in("victim", inum, 2), -EINVAL, "admin: an unknown flag: -EINVAL");
	fd = dev_open(O_RDONLY);
	{
		struct kwq_ioc_list_all l = { .flags = 1 };

		is(raw_ioctl(fd, KWQ_IOC_LIST_ALL, &l), -EINVAL, "admin: list-all with a flag: -EINVAL");
		l = (struct kwq_ioc_list_all){ .pad = 1 };
		is(raw_ioctl(fd, KWQ_IOC_LIST_ALL, &l), -EINVAL, "admin: list-all with pad set: -EINVAL");
		l = (struct kwq_ioc_list_all){ .reserved = { 1, 0 } };
		is(raw_ioctl(fd, KWQ_IOC_LIST_ALL, &l), -EINVAL,
		   "admin: list-all with reserved set: -EINVAL");
		l = (struct kwq_ioc_list_all){ .info_ptr = 8, .capacity = 4 };
		is(raw_ioctl(fd, KWQ_IOC_LIST_ALL, &l), -EFAULT,
		   "admin: list-all into a bad address: -EFAULT");
	}
	close(fd);
	snprintf(cmd, sizeof(cmd), "kwqctl list --all-scopes | grep -qx 'ipc:%u\tvictim2\t1000\t1000\t0640'",
		 inum);
	is(system(cmd), 0, "admin: kwqctl list --all-scopes prints ipc:%u, victim2, 1000, 1000, 0640",
	   inum);
	snprintf(cmd, sizeof(cmd), "kwqctl destroy-in ipc:%u victim2", inum);
	is(system(cmd), 0, "admin: kwqctl destroy-in ipc:%u victim2 destroys it", inum);
	is(find_queue("victim2", inum, NULL), 0, "admin: ... and it is not listed any more");
	is(destroy_in("victim", inum, 0), 0, "admin: root destroys it (KWQ_IOC_DESTROY_IN)");
	is(destroy_in("victim", inum, 0), -ENOENT, "admin: a second time: -ENOENT");
	is(destroy_in("victim", inum, KWQ_SCOPE_KERNEL), -EINVAL,
	   "admin: the kernel scope with an inode number: -EINVAL");
	send_int(k.down[1], 0);
	is(kid_wait(&k), 0,
	   "admin: the owner's descriptor gets -EIDRM from an add, still reads stats, and the name is gone; its root was refused LIST_ALL (-EPERM)");
	is(as_uid(65534, true, admin_refused, &inum), 0,
	   "admin: uid 65534 in the host may neither list every scope nor destroy in one (-EPERM)");
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	/* A child that failed early has closed its pipe: go on to the next test. */
	signal(SIGPIPE, SIG_IGN);
	if (geteuid()) {
		printf("1..0 # SKIP needs root\n");
		return 0;
	}
	test_admin();
	test_lifetime();
	test_ns_limit();
	test_reserve();
	test_user_chain();
	return tap_done();
}
