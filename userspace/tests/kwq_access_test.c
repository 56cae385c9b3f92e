// SPDX-License-Identifier: GPL-2.0
/*
 * kwq_access_test: the access matrix of Documentation/kwq-security.rst,
 * walked as the queue's owner, as another user, as root of an
 * unprivileged user namespace and as root; plus the scopes (two
 * "containers" of user and IPC namespaces, and the kernel scope), the
 * opener's credentials (f_cred), the open mode that is neither read nor
 * write, LIST sizing and add-after flags; and kwqctl run as the owner and
 * as another user, which may use what the queue's mode lets it.
 *
 * Each identity runs in a forked child that reports through its exit
 * status and its own TAP lines; the parent counts the children's results.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tap.h"
#include "kwq_test_util.h"

#define OWNER_UID	1000
#define OTHER_UID	1001
#define USERNS_UID	1002

/* What a command needs (the matrix's columns). */
enum need { N_READ, N_WRITE, N_RW, N_OWNER };

enum ident { I_OWNER, I_OTHER, I_USERNS_ROOT, I_ROOT, I_COUNT };
static const char *const ident_name[] = { "owner", "other uid", "userns root", "root" };

/* The modes a file of /dev/kwq can be opened with; 3 is neither read nor write. */
static const int modes[] = { O_RDONLY, O_WRONLY, O_RDWR, 3 };
static const char *const mode_name[] = { "O_RDONLY", "O_WRONLY", "O_RDWR", "mode 3" };

/* Results of the children: each prints its own TAP lines, numbered from 1000 up. */
static int run_child(int (*fn)(void *), void *arg)
{
	int status = -1;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid == 0)
		_exit(fn(arg));
	if (pid < 0)
		return -errno;
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static int become(uid_t uid)
{
	return setresgid(uid, uid, uid) || setgroups(0, NULL) || setresuid(uid, uid, uid) ?
		-errno : 0;
}

static int write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), ret = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, s, strlen(s)) != (ssize_t)strlen(s))
		ret = -errno;
	close(fd);
	return ret;
}

/* As @uid, enter a new user namespace (and IPC namespace if @ipc) as its root. */
static int enter_userns(uid_t uid, bool ipc)
{
	char map[64];

	if (become(uid) || unshare(CLONE_NEWUSER | (ipc ? CLONE_NEWIPC : 0)))
		return -errno;
	/* A uid change made /proc/self root's; the maps are written there. */
	if (prctl(PR_SET_DUMPABLE, 1, 0, 0, 0))
		return -errno;
	snprintf(map, sizeof(map), "0 %u 1", uid);
	if (write_file("/proc/self/setgroups", "deny") ||
	    write_file("/proc/self/uid_map", map) || write_file("/proc/self/gid_map", map))
		return -EPERM;
	return 0;
}

static int enter(enum ident id)
{
	switch (id) {
	case I_OWNER:
		return become(OWNER_UID);
	case I_OTHER:
		return become(OTHER_UID);
	case I_USERNS_ROOT:
		return enter_userns(USERNS_UID, false);
	default:
		return 0;
	}
}

static int open_as(const char *name, int mode)
{
	struct kwq_ioc_open o;
	int fd = open(KWQ_DEFAULT_DEV, mode | O_CLOEXEC | O_NONBLOCK), ret;

	if (fd < 0)
		return -errno;
	memset(&o, 0, sizeof(o));
	snprintf((char *)o.name, sizeof(o.name), "%s", name);
	ret = raw_ioctl(fd, KWQ_IOC_OPEN, &o);
	if (ret) {
		close(fd);
		return ret;
	}
	return fd;
}

/* ---- one command each, with arguments that pass every other check -------- */

static int c_key(int fd, unsigned long cmd, const char *key)
{
	struct kwq_ioc_key k;

	memset(&k, 0, sizeof(k));
	k.key_ptr = (uintptr_t)key;
	k.key_len = strlen(key);
	return raw_ioctl(fd, cmd, &k);
}

static int c_add(int fd) { return c_key(fd, KWQ_IOC_ADD, "m/add"); }
static int c_cancel(int fd) { return c_key(fd, KWQ_IOC_CANCEL, "m/none"); }
static int c_add_rl(int fd) { return c_key(fd, KWQ_IOC_ADD_RATE_LIMITED, "m/rl"); }
static int c_done(int fd) { return c_key(fd, KWQ_IOC_DONE, "m/none"); }
static int c_forget(int fd) { return c_key(fd, KWQ_IOC_FORGET, "m/rl"); }
static int c_requeues(int fd) { return c_key(fd, KWQ_IOC_NUM_REQUEUES, "m/rl"); }

static int c_add_after(int fd)
{
	struct kwq_ioc_add_after a;

	memset(&a, 0, sizeof(a));
	a.key_ptr = (uintptr_t)"m/after";
	a.key_len = 7;
	a.delay_ns = 3600LL * 1000000000LL;
	return raw_ioctl(fd, KWQ_IOC_ADD_AFTER, &a);
}

static int c_batch(int fd, unsigned long cmd)
{
	static char key[16] = "m/batch";
	struct kwq_batch_entry e = { .key_ptr = (uintptr_t)key, .key_len = 7 };
	struct kwq_ioc_batch b;

	if (cmd == KWQ_IOC_GET_BATCH)
		e.key_len = sizeof(key);
	memset(&b, 0, sizeof(b));
	b.entries_ptr = (uintptr_t)&e;
	b.count = 1;
	b.deadline_ns = KWQ_DEADLINE_NOWAIT;
	return raw_ioctl(fd, cmd, &b);
}

static int c_add_batch(int fd) { return c_batch(fd, KWQ_IOC_ADD_BATCH); }
static int c_get_batch(int fd) { return c_batch(fd, KWQ_IOC_GET_BATCH); }
static int c_done_batch(int fd) { return c_batch(fd, KWQ_IOC_DONE_BATCH); }

static int c_get(int fd)
{
	char buf[64];
	struct kwq_ioc_get g;

	memset(&g, 0, sizeof(g));
	g.key_ptr = (uintptr_t)buf;
	g.key_cap = sizeof(buf);
	g.deadline_ns = KWQ_DEADLINE_NOWAIT;
	return raw_ioctl(fd, KWQ_IOC_GET, &g);
}

static int c_done_get(int fd)
{
	char buf[64];
	struct kwq_ioc_done_get d;

	memset(&d, 0, sizeof(d));
	d.done_ptr = (uintptr_t)"m/none";
	d.done_len = 6;
	d.key_ptr = (uintptr_t)buf;
	d.key_cap = sizeof(buf);
	d.deadline_ns = KWQ_DEADLINE_NOWAIT;
	return raw_ioctl(fd, KWQ_IOC_DONE_GET, &d);
}

static int c_stats(int fd)
{
	struct kwq_stats st;

	memset(&st, 0, sizeof(st));
	return raw_ioctl(fd, KWQ_IOC_STATS, &st);
}

/* Poll: a reader's right; EPOLLERR (as -EBADF here) for other files. */
static int c_poll(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	if (poll(&p, 1, 0) < 0)
		return -errno;
	return p.revents & POLLERR ? -EBADF : 0;
}

static int c_shutdown(int fd) { return raw_ioctl(fd, KWQ_IOC_SHUTDOWN, NULL); }

static int c_drain(int fd)
{
	struct kwq_ioc_drain d;

	memset(&d, 0, sizeof(d));
	d.deadline_ns = KWQ_DEADLINE_NOWAIT;
	return raw_ioctl(fd, KWQ_IOC_DRAIN, &d);
}

static int c_destroy(int fd) { return raw_ioctl(fd, KWQ_IOC_DESTROY, NULL); }

/* The matrix; the last three end the queue, so they come last and in this order. */
static const struct cmd {
	const char *name;
	enum need need;
	int (*run)(int fd);
} cmds[] = {
	{ "ADD", N_WRITE, c_add },
	{ "ADD_AFTER", N_WRITE, c_add_after },
	{ "CANCEL", N_WRITE, c_cancel },
	{ "ADD_RATE_LIMITED", N_WRITE, c_add_rl },
	{ "ADD_BATCH", N_WRITE, c_add_batch },
	{ "GET", N_READ, c_get },
	{ "GET_BATCH", N_READ, c_get_batch },
	{ "DONE", N_READ, c_done },
	{ "DONE_BATCH", N_READ, c_done_batch },
	{ "DONE_GET", N_READ, c_done_get },
	{ "NUM_REQUEUES", N_READ, c_requeues },
	{ "STATS", N_READ, c_stats },
	{ "poll", N_READ, c_poll },
	{ "FORGET", N_RW, c_forget },
	{ "SHUTDOWN", N_OWNER, c_shutdown },
	{ "DRAIN", N_OWNER, c_drain },
	{ "DESTROY", N_OWNER, c_destroy },
};

static bool denied(int ret)
{
	return ret == -EBADF || ret == -EPERM || ret == -EACCES;
}

/* The errno the matrix gives @c on a file of @mode held by @id, or 0 for allowed. */
static int expected(const struct cmd *c, int mode, enum ident id)
{
	bool r = mode == O_RDONLY || mode == O_RDWR, w = mode == O_WRONLY || mode == O_RDWR;

	switch (c->need) {
	case N_READ:
		return r ? 0 : -EBADF;
	case N_WRITE:
		return w ? 0 : -EBADF;
	case N_RW:
		return r && w ? 0 : -EBADF;
	default:
		return id == I_OWNER || id == I_ROOT ? 0 : -EPERM;
	}
}

struct row {
	enum ident id;
	int mode;
	char q66[KWQ_NAME_MAX];	/* the owner's queue, mode 0666 */
	char q60[KWQ_NAME_MAX];	/* the owner's queue, mode 0600 */
};

/* In the identity's child: attach to both queues, then every command. */
static int walk_row(void *arg)
{
	const struct row *row = arg;
	int mi = 0, fd, ret, bad = 0;
	size_t i;

	while (modes[mi] != row->mode)
		mi++;
	if (enter(row->id)) {
		printf("# %s: cannot become this identity: %s\n", ident_name[row->id],
		       strerror(errno));
		return 100;
	}
	ret = open_as(row->q60, row->mode);
	if (ret >= 0)
		close(ret);
	{
		int want = row->mode == 3 ? -EBADF :
			   row->id == I_OWNER || row->id == I_ROOT ? 0 : -EACCES;
		int got = ret >= 0 ? 0 : ret;

		if (got != want) {
			printf("# %s %s: OPEN of a 0600 queue: got %d want %d\n",
			       ident_name[row->id], mode_name[mi], got, want);
			bad++;
		}
	}
	fd = open_as(row->q66, row->mode);
	if (row->mode == 3) {
		if (fd != -EBADF) {
			printf("# %s mode 3: OPEN of a 0666 queue: got %d want -EBADF\n",
			       ident_name[row->id], fd);
			bad++;
		}
		return bad ? 1 : 0;
	}
	if (fd < 0) {
		printf("# %s %s: OPEN of a 0666 queue failed: %d\n", ident_name[row->id],
		       mode_name[mi], fd);
		return 1;
	}
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		int want = expected(&cmds[i], row->mode, row->id);

		ret = cmds[i].run(fd);
		if (want ? ret != want : denied(ret)) {
			printf("# %s %s: %s got %d (%s), want %s\n", ident_name[row->id],
			       mode_name[mi], cmds[i].name, ret, ret < 0 ? strerror(-ret) : "",
			       want ? strerror(-want) : "allowed");
			bad++;
		}
	}
	close(fd);
	return bad ? 1 : 0;
}

struct names {
	int n;
	char q[2][KWQ_NAME_MAX];
};

/* As the owner: make the queues of one row. */
static int make_queues(void *arg)
{
	const struct row *row = arg;
	int a, b;

	if (become(OWNER_UID))
		return 100;
	a = kwq_create(row->q66, 0666, 0);
	b = kwq_create(row->q60, 0600, 0);
	return a >= 0 && b >= 0 ? 0 : 1;
}

static void destroy_as_root(const char *name)
{
	int fd = kwq_open(name, O_RDWR);

	if (fd >= 0)
		end_queue(fd);
}

static void test_matrix(void)
{
	struct row row;
	size_t mi;
	int id;

	for (id = 0; id < I_COUNT; id++) {
		for (mi = 0; mi < sizeof(modes) / sizeof(modes[0]); mi++) {
			int ret;

			memset(&row, 0, sizeof(row));
			row.id = id;
			row.mode = modes[mi];
			snprintf(row.q66, sizeof(row.q66), "acc-%d-%zu-66", id, mi);
			snprintf(row.q60, sizeof(row.q60), "acc-%d-%zu-60", id, mi);
			if (run_child(make_queues, &row)) {
				ok(0, "matrix %s %s: the owner makes the queues", ident_name[id],
				   mode_name[mi]);
				continue;
			}
			/* Every kernel make check runs has user namespaces: no skip. */
			ret = run_child(walk_row, &row);
			is(ret, 0, "matrix %s %s: OPEN and all %zu commands as documented",
			   ident_name[id], mode_name[mi], sizeof(cmds) / sizeof(cmds[0]));
			destroy_as_root(row.q66);
			destroy_as_root(row.q60);
		}
	}
}

/* ---- the opener's credentials ------------------------------------------- */

static void test_f_cred(void)
{
	int q = kwq_create("acc-cred", 0600, 0), shared = kwq_create("acc-cred-66", 0666, 0);
	int fd, ret;
	struct kwq_ioc_open o;

	/* Open /dev/kwq as uid OTHER_UID, keeping root as the saved uid. */
	if (setresuid(OTHER_UID, OTHER_UID, 0)) {
		ok(0, "f_cred: setresuid");
		return;
	}
	fd = open(KWQ_DEFAULT_DEV, O_RDWR | O_CLOEXEC);
	ret = setresuid(0, 0, 0);
	ok(fd >= 0 && !ret, "f_cred: a file opened as uid %d, back to root", OTHER_UID);
	memset(&o, 0, sizeof(o));
	strcpy((char *)o.name, "acc-cred");
	is(raw_ioctl(fd, KWQ_IOC_OPEN, &o), -EACCES,
	   "f_cred: root using that file cannot open root's 0600 queue");
	strcpy((char *)o.name, "acc-cred-66");
	is(raw_ioctl(fd, KWQ_IOC_OPEN, &o), 0, "f_cred: it opens the 0666 queue");
	is(raw_ioctl(fd, KWQ_IOC_SHUTDOWN, NULL), -EPERM,
	   "f_cred: and cannot shut it down, though the caller is root now");
	is(raw_ioctl(fd, KWQ_IOC_DESTROY, NULL), -EPERM, "f_cred: nor destroy it");
	close(fd);
	end_queue(q);
	end_queue(shared);
}

/* ---- a file opened for neither reading nor writing ---------------------- */

static int list_count(int fd, unsigned int flags)
{
	struct kwq_ioc_list l;

	memset(&l, 0, sizeof(l));
	l.flags = flags;
	return raw_ioctl(fd, KWQ_IOC_LIST, &l) ?: (int)l.count;
}

static void test_mode3(void)
{
	int q = kwq_create("acc-m3", 0666, 0), fd = open(KWQ_DEFAULT_DEV, 3 | O_CLOEXEC);
	struct kwq_ioc_create c;
	struct kwq_ioc_open o;
	int before;

	ok(fd >= 0, "mode 3: /dev/kwq opens for ioctls only");
	before = list_count(fd, 0);
	memset(&o, 0, sizeof(o));
	strcpy((char *)o.name, "acc-m3");
	is(raw_ioctl(fd, KWQ_IOC_OPEN, &o), -EBADF, "mode 3: OPEN -> EBADF");
	is(c_stats(fd), -EBADFD, "mode 3: so STATS finds no queue (EBADFD)");
	is(c_requeues(fd), -EBADFD, "mode 3: nor NUM_REQUEUES");
	memset(&c, 0, sizeof(c));
	strcpy((char *)c.name, "acc-m3-new");
	c.mode = 0600;
	is(raw_ioctl(fd, KWQ_IOC_CREATE, &c), -EBADF, "mode 3: CREATE -> EBADF");
	is(list_count(fd, 0), before, "mode 3: and made no queue");
	/* Before the name is looked at: a bad name gets -EBADF too. */
	strcpy((char *)c.name, ".bad");
	is(raw_ioctl(fd, KWQ_IOC_CREATE, &c), -EBADF, "mode 3: CREATE of a bad name -> EBADF");
	memset(&o, 0, sizeof(o));
	is(raw_ioctl(fd, KWQ_IOC_OPEN, &o), -EBADF, "mode 3: OPEN of an empty name -> EBADF");
	end_queue(q);
	/* The destroyed queue's memory is not held by the mode-3 file. */
	close(fd);
}

/* ---- scopes: two containers and the kernel scope ------------------------ */

struct container {
	uid_t uid;
	const char *names[2];	/* queues it makes */
};

static int in_container(void *arg)
{
	const struct container *c = arg;
	char names[8][KWQ_NAME_MAX];
	int fds[2], n, i, fd;

	if (enter_userns(c->uid, true))
		return 100;
	for (i = 0; i < 2; i++) {
		fds[i] = kwq_create(c->names[i], 0600, 0);
		if (fds[i] < 0) {
			printf("# container %u: create %s: %s\n", c->uid, c->names[i],
			       strerror(-fds[i]));
			return 1;
		}
	}
	n = kwq_list(names, 8);
	if (n != 2 || strcmp(names[0], c->names[0]) || strcmp(names[1], c->names[1])) {
		printf("# container %u: LIST shows %d queues, not its own 2\n", c->uid, n);
		return 2;
	}
	fd = kwq_open("acc-host", O_RDWR);
	if (fd != -ENOENT) {
		printf("# container %u: the host's queue: %d, want -ENOENT\n", c->uid, fd);
		return 3;
	}
	fd = kwq_open_kernel("acc-host", O_RDWR);
	if (fd != -ENOENT) {
		printf("# container %u: the host's queue as kernel scope: %d\n", c->uid, fd);
		return 4;
	}
	/* Its root owns its queues: shut down and destroy work. */
	if (kwq_shutdown(fds[1]) || kwq_destroy(fds[1])) {
		printf("# container %u: its root cannot end its own queue\n", c->uid);
		return 5;
	}
	if (kwq_list(names, 8) != 1) {
		printf("# container %u: LIST after destroy\n", c->uid);
		return 6;
	}
	/* Leave the other queue: the test checks the host cannot see it. */
	return 0;
}

static void test_scopes(void)
{
	struct container a = { 1010, { "acc-same", "acc-a-only" } };
	struct container b = { 1011, { "acc-same", "acc-b-only" } };
	char names[256][KWQ_NAME_MAX];
	int host = kwq_create("acc-host", 0666, 0), n, i, seen = 0, ra, rb;

	ra = run_child(in_container, &a);
	rb = run_child(in_container, &b);
	/* 100: the namespaces could not be made, a failure too. */
	is(ra, 0, "scope: container A makes acc-same, sees only its own queues");
	is(rb, 0, "scope: container B makes its own acc-same beside A's, sees only its own");
	n = kwq_list(names, 256);
	for (i = 0; i < n && i < 256; i++)
		seen += !strcmp(names[i], "acc-same") || !strcmp(names[i], "acc-a-only") ||
			!strcmp(names[i], "acc-b-only");
	ok(n > 0 && !seen, "scope: the host's LIST shows none of the containers' queues");
	is(kwq_open("acc-same", O_RDWR), -ENOENT, "scope: nor can the host open them by name");
	is(kwq_open_kernel("acc-host", O_RDWR), -ENOENT,
	   "scope: a user's queue is not in the kernel scope");
	n = kwq_list_kernel(names, 256);
	seen = 0;
	for (i = 0; i < n && i < 256; i++)
		seen += !strcmp(names[i], "acc-host");
	ok(n >= 0 && !seen, "scope: LIST of the kernel scope does not show it");
	end_queue(host);
}

/* ---- LIST is sized by what exists, not by what the caller offers --------- */

static void test_list_sizing(void)
{
	char names[8][KWQ_NAME_MAX];
	int fd = dev_open(O_RDONLY), q = kwq_create("acc-list", 0600, 0);
	struct kwq_ioc_list l;

	memset(&l, 0, sizeof(l));
	l.names_ptr = (uintptr_t)names;
	l.capacity = list_count(fd, 0);
	ok(l.capacity >= 1 && l.capacity <= 8, "list: %u queues exist", l.capacity);
	l.capacity = 0xffffffffU;
	is(raw_ioctl(fd, KWQ_IOC_LIST, &l), 0,
	   "list: a capacity of 2^32-1 with room for what exists works");
	ok(l.count >= 1 && l.count <= 8, "list: count %u", l.count);
	memset(&l, 0, sizeof(l));
	l.flags = 2;
	is(raw_ioctl(fd, KWQ_IOC_LIST, &l), -EINVAL, "list: an unknown flag -> EINVAL");
	end_queue(q);
	close(fd);
}

/* ---- add-after refuses flags that do not apply -------------------------- */

static int after(int fd, const char *key, int64_t delay, uint32_t flags)
{
	struct kwq_ioc_add_after a;

	memset(&a, 0, sizeof(a));
	a.key_ptr = (uintptr_t)key;
	a.key_len = strlen(key);
	a.delay_ns = delay;
	a.flags = flags;
	return raw_ioctl(fd, KWQ_IOC_ADD_AFTER, &a) ?: (int)a.result;
}

static void test_after_flags(void)
{
	int fd = new_queue("acc-after");
	struct kwq_stats before = stats_of(fd), now;

	is(after(fd, "k", 1000000000, KWQ_POLICY_KEEP), -EINVAL,
	   "add-after: a policy with a delay -> EINVAL");
	is(after(fd, "k", 0, KWQ_AFTER_REPLACE), -EINVAL,
	   "add-after: replace without a delay -> EINVAL");
	is(after(fd, "k", -5, KWQ_AFTER_REPLACE | KWQ_POLICY_STRICT), -EINVAL,
	   "add-after: replace with a negative delay -> EINVAL");
	now = stats_of(fd);
	ok(now.adds == before.adds && now.waiting == 0 && now.queued == 0 &&
	   now.retries == before.retries, "add-after: the refused calls changed nothing");
	/* An hour: still waiting at the next call, however slow the guest. */
	is(after(fd, "k", 3600000000000LL, KWQ_AFTER_REPLACE), KWQ_ADD_WAITING,
	   "add-after: replace with a delay works");
	is(after(fd, "k", 0, KWQ_POLICY_KEEP), KWQ_ADD_QUEUED,
	   "add-after: a policy on an add now works");
	end_queue(fd);
}

/* ---- what write access tells about the keys a writer names --------------- */

#define PROBE_N 6

/* As another uid, write-only: the results of adds and cancels of root's keys. */
static int writer_probes(void *arg)
{
	int *res = arg, fd;

	if (become(OTHER_UID))
		return 100;
	fd = open_as("acc-probe", O_WRONLY);
	if (fd < 0)
		return 1;
	res[0] = kwq_add(fd, "p/queued", 8);
	res[1] = kwq_add(fd, "p/busy", 6);
	res[2] = kwq_cancel(fd, "p/waiting", 9);
	res[3] = kwq_cancel(fd, "p/none", 6);
	res[4] = c_stats(fd);
	res[5] = c_requeues(fd);
	close(fd);
	return 0;
}

static void test_writer_learns(void)
{
	int q = kwq_create("acc-probe", 0622, 0), i;
	int *res = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	char key[16];
	size_t len = 0;

	if (q < 0 || res == MAP_FAILED) {
		ok(0, "probe: a 0622 queue and a shared page");
		return;
	}
	for (i = 0; i < PROBE_N; i++)
		res[i] = 12345;
	kwq_add(q, "p/busy", 6);
	ok(!kwq_get(q, key, sizeof(key), &len, 0) && len == 6, "probe: root takes p/busy");
	kwq_add(q, "p/queued", 8);
	is(after(q, "p/waiting", 3600000000000LL, 0), KWQ_ADD_WAITING, "probe: p/waiting waits");
	is(run_child(writer_probes, res), 0, "probe: another uid opens the 0622 queue write-only");
	is(res[0], KWQ_ADD_DUPLICATE, "probe: its add of a queued key says so (DUPLICATE)");
	is(res[1], KWQ_ADD_DEFERRED, "probe: its add of a key being processed says so (DEFERRED)");
	is(res[2], 1, "probe: its cancel of a waiting key says it was waiting (1)");
	is(res[3], 0, "probe: and of an absent key says not (0)");
	is(res[4], -EBADF, "probe: but STATS needs read (-EBADF)");
	is(res[5], -EBADF, "probe: as does NUM_REQUEUES");
	munmap(res, 4096);
	end_queue(q);
}

/* ---- the group triplet counts supplementary groups ----------------------- */

#define GROUP_GID	1000
#define MEMBER_UID	1020

static int make_group_queue(void *arg)
{
	(void)arg;
	if (become(OWNER_UID))
		return 100;
	return kwq_create("acc-group", 0640, 0) >= 0 ? 0 : 1;
}

/* A uid whose primary group is its own, in @arg's supplementary groups. */
static int open_as_member(void *arg)
{
	const gid_t *groups = arg;
	int r, w;

	if (setresgid(MEMBER_UID, MEMBER_UID, MEMBER_UID) ||
	    setgroups(groups[0] ? 1 : 0, groups) || setresuid(MEMBER_UID, MEMBER_UID, MEMBER_UID))
		return 100;
	r = open_as("acc-group", O_RDONLY);
	w = open_as("acc-group", O_WRONLY);
	if (r >= 0)
		close(r);
	if (w >= 0)
		close(w);
	/* 0: read allowed, write refused; 1: both refused; else something else. */
	if (r >= 0 && w == -EACCES)
		return 0;
	if (r == -EACCES && w == -EACCES)
		return 1;
	printf("# group: read %d, write %d\n", r, w);
	return 2;
}

static void test_group(void)
{
	gid_t member[1] = { GROUP_GID }, none[1] = { 0 };

	is(run_child(make_group_queue, NULL), 0, "group: uid %d makes a 0640 queue", OWNER_UID);
	is(run_child(open_as_member, member), 0,
	   "group: a uid with gid %d only as a supplementary group may read it, not write",
	   GROUP_GID);
	is(run_child(open_as_member, none), 1, "group: without that group, neither");
	destroy_as_root("acc-group");
}

/* ---- a descriptor's scope is fixed when it is opened --------------------- */

static int scope_after_unshare(void *arg)
{
	int old = *(int *)arg, fresh;

	if (unshare(CLONE_NEWIPC))
		return 100;
	fresh = dev_open(O_RDONLY);
	if (list_count(fresh, 0) != 0) {
		printf("# scope: a new descriptor in the new IPC namespace lists queues\n");
		return 1;
	}
	close(fresh);
	if (list_count(old, 0) < 1) {
		printf("# scope: the old descriptor lost the host's queues\n");
		return 2;
	}
	if (kwq_open("acc-fixed", O_RDWR) != -ENOENT) {
		printf("# scope: the host's queue is visible by name from the new namespace\n");
		return 3;
	}
	return 0;
}

static void test_scope_fixed(void)
{
	int q = kwq_create("acc-fixed", 0600, 0), old = dev_open(O_RDONLY);

	is(run_child(scope_after_unshare, &old), 0,
	   "scope: after unshare(CLONE_NEWIPC) a descriptor opened before still lists the host's queues, a new one none");
	close(old);
	end_queue(q);
}

/* ---- kwqctl asks only for the rights a command needs ------------------- */

/*
 * Run kwqctl (from PATH) as @uid with the NULL-terminated arguments after
 * @want_out; pass if it exits with @want and its output (stdout and stderr
 * together) contains @want_out.
 */
static void ctl_is(uid_t uid, int want, const char *want_out, ...)
{
	char out[4096], junk[4096], cmd[256] = "kwqctl", said[64], *line;
	const char *argv[16] = { "kwqctl" };
	int p[2], status = -1, argc = 1;
	size_t len = 0, i;
	ssize_t n;
	va_list ap;
	pid_t pid;

	va_start(ap, want_out);
	while (argc < 15 && (argv[argc] = va_arg(ap, const char *))) {
		snprintf(cmd + strlen(cmd), sizeof(cmd) - strlen(cmd), " %s", argv[argc]);
		argc++;
	}
	va_end(ap);
	argv[argc] = NULL;
	fflush(stdout);
	if (pipe(p)) {
		ok(0, "%s: pipe", cmd);
		return;
	}
	pid = fork();
	if (pid == 0) {
		close(p[0]);
		if (dup2(p[1], STDOUT_FILENO) < 0 || dup2(p[1], STDERR_FILENO) < 0 ||
		    (uid && become(uid)))
			_exit(126);
		execvp("kwqctl", (char *const *)argv);
		_exit(127);
	}
	close(p[1]);
	/* Read to the end, keeping the start: kwqctl must not die of SIGPIPE. */
	while (pid > 0) {
		bool full = len == sizeof(out) - 1;
		size_t room = full ? sizeof(junk) : sizeof(out) - 1 - len;

		n = read(p[0], full ? junk : out + len, room);
		if (n <= 0)
			break;
		if (!full)
			len += (size_t)n;
	}
	out[len] = '\0';
	close(p[0]);
	if (pid > 0)
		waitpid(pid, &status, 0);
	status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	/* The TAP line shows a newline of @want_out as \n. */
	for (len = 0, i = 0; want_out && want_out[i] && len + 3 < sizeof(said); i++) {
		if (want_out[i] == '\n') {
			said[len++] = '\\';
			said[len++] = 'n';
		} else {
			said[len++] = want_out[i];
		}
	}
	said[len] = '\0';
	ok(status == want && (!want_out || strstr(out, want_out)),
	   "kwqctl as uid %u: '%s' exits %d%s%s%s", uid, cmd, want,
	   want_out ? " and says '" : "", said, want_out ? "'" : "");
	if (status != want || (want_out && !strstr(out, want_out))) {
		printf("#   exit status %d, output:\n", status);
		line = strtok(out, "\n");
		for (i = 0; line && i < 10; i++, line = strtok(NULL, "\n"))
			printf("#   %s\n", line);
	}
}

/* Destroy what an earlier, failed run may have left. */
static void ctl_clean(void)
{
	destroy_as_root("acc-ctl-r");
	destroy_as_root("acc-ctl-w");
	destroy_as_root("acc-ctl-o");
}

/*
 * A user the queue's mode lets only read (0644) or only write (0622) runs
 * every kwqctl command that needs only that right, and gets EACCES's
 * "Permission denied" (exit status 1) for the others; the owner runs the
 * owner's commands on a queue whose mode denies it reading (0200).
 */
static void test_kwqctl(void)
{
	struct kwq_stats st;
	int fd;

	ctl_clean();
	ctl_is(OWNER_UID, 0, NULL, "create", "acc-ctl-r", "--mode", "0644", NULL);
	ctl_is(OWNER_UID, 0, NULL, "create", "acc-ctl-w", "--mode", "0622", NULL);
	ctl_is(OWNER_UID, 0, NULL, "create", "acc-ctl-o", "--mode", "0200", NULL);
	ctl_is(OWNER_UID, 0, "ns/b: queued", "add", "acc-ctl-r", "ns/a", "ns/b", NULL);

	/* Read only. */
	ctl_is(OTHER_UID, 0, "queue acc-ctl-r", "stats", "acc-ctl-r", NULL);
	ctl_is(OTHER_UID, 0, "\"adds\":2", "stats", "acc-ctl-r", "--json", NULL);
	ctl_is(OTHER_UID, 0, "2\n", "len", "acc-ctl-r", NULL);
	ctl_is(OTHER_UID, 0, "ns/a: 0", "requeues", "acc-ctl-r", "ns/a", NULL);
	ctl_is(OTHER_UID, 0, "ns/a\n", "get", "acc-ctl-r", NULL);
	ctl_is(OTHER_UID, 0, "ns/a: finished", "done", "acc-ctl-r", "ns/a", NULL);
	ctl_is(OTHER_UID, 0, "ns/b\n", "get", "acc-ctl-r", "--done", NULL);
	ctl_is(OTHER_UID, 0, "workqueue_adds_total{name=\"acc-ctl-r\"} 2", "metrics",
	       "acc-ctl-r", NULL);
	ctl_is(OTHER_UID, 1, "Permission denied", "add", "acc-ctl-r", "ns/x", NULL);
	ctl_is(OTHER_UID, 1, "Permission denied", "add-after", "acc-ctl-r", "1000", "ns/x",
	       NULL);
	ctl_is(OTHER_UID, 1, "Permission denied", "cancel", "acc-ctl-r", "ns/x", NULL);
	ctl_is(OTHER_UID, 1, "Permission denied", "forget", "acc-ctl-r", "ns/a", NULL);
	ctl_is(OTHER_UID, 1, "Permission denied", "retry", "acc-ctl-r", "ns/a", NULL);
	ctl_is(OTHER_UID, 1, "Operation not permitted", "shutdown", "acc-ctl-r", NULL);
	fd = kwq_open("acc-ctl-r", O_RDONLY);
	ok(fd >= 0 && !kwq_stats(fd, &st) && st.adds == 2 && st.dones == 2 && !st.queued &&
	   !st.waiting && !st.state, "kwqctl: the refused commands changed nothing");
	if (fd >= 0)
		close(fd);

	/* Write only. */
	ctl_is(OTHER_UID, 0, "ns/w: queued", "add", "acc-ctl-w", "ns/w", NULL);
	ctl_is(OTHER_UID, 0, "ns/d: waiting", "add-after", "acc-ctl-w", "3600000", "ns/d",
	       NULL);
	ctl_is(OTHER_UID, 0, "ns/d: cancelled", "cancel", "acc-ctl-w", "ns/d", NULL);
	ctl_is(OTHER_UID, 1, "Permission denied", "stats", "acc-ctl-w", NULL);
	ctl_is(OTHER_UID, 1, "Permission denied", "len", "acc-ctl-w", NULL);
	ctl_is(OTHER_UID, 1, "Permission denied", "get", "acc-ctl-w", NULL);
	ctl_is(OTHER_UID, 1, "Permission denied", "done", "acc-ctl-w", "ns/w", NULL);

	/* The owner's commands. */
	ctl_is(OWNER_UID, 0, NULL, "shutdown", "acc-ctl-o", NULL);
	ctl_is(OWNER_UID, 0, NULL, "drain", "acc-ctl-o", "--timeout", "0", NULL);
	ctl_is(OWNER_UID, 1, "Permission denied", "stats", "acc-ctl-o", NULL);
	ctl_is(OTHER_UID, 1, "Permission denied", "destroy", "acc-ctl-o", NULL);
	ctl_is(OWNER_UID, 0, NULL, "destroy", "acc-ctl-o", NULL);
	ctl_is(OWNER_UID, 0, NULL, "destroy", "acc-ctl-w", NULL);
	ctl_is(OWNER_UID, 0, NULL, "destroy", "acc-ctl-r", NULL);
	is(kwq_open("acc-ctl-r", O_RDONLY), -ENOENT, "kwqctl: the owner destroyed the queues");
}

/* ---- root of a user namespace over its IPC namespace's queues ------------ */

#define NS_OWNER_UID	1030	/* ns uid 1 */
#define NS_OTHER_UID	1031	/* ns uid 2 */

/* As ns uid @arg: make the 0600 queue (1) or try to open it (2). */
static int ns_user(void *arg)
{
	uid_t uid = (uid_t)(uintptr_t)arg;
	int fd;

	if (setresgid(uid, uid, uid) || setgroups(0, NULL) || setresuid(uid, uid, uid))
		return 100;
	if (uid == 1)
		return kwq_create("acc-nsown", 0600, 0) >= 0 ? 0 : 1;
	fd = kwq_open("acc-nsown", O_RDWR);
	return fd == -EACCES ? 0 : 2;
}

/*
 * In a user and IPC namespace whose maps the parent wrote (ns uids 0-2):
 * ns uid 1 makes a 0600 queue, ns uid 2 is refused it, and ns root, which
 * owns none of it, opens it and destroys it with its capabilities there.
 */
static int ns_root(void *arg)
{
	int *sync = arg, fd, r;
	char c;

	if (become(USERNS_UID) || unshare(CLONE_NEWUSER | CLONE_NEWIPC))
		return 100;
	if (write(sync[1], "u", 1) != 1 || read(sync[2], &c, 1) != 1)
		return 101;
	if (setresgid(0, 0, 0) || setresuid(0, 0, 0))
		return 102;
	r = run_child(ns_user, (void *)(uintptr_t)1);
	if (r)
		return 10 + r;
	r = run_child(ns_user, (void *)(uintptr_t)2);
	if (r)
		return 20 + r;
	fd = kwq_open("acc-nsown", O_RDWR);
	if (fd < 0)
		return 30;
	return kwq_destroy(fd) ? 40 : 0;
}

static void test_userns_root(void)
{
	int up[2], go[2], sync[3], status = -1;
	char path[64], map[64], c;
	pid_t pid;

	if (pipe(up) || pipe(go)) {
		ok(0, "userns root: pipes");
		return;
	}
	sync[1] = up[1];
	sync[2] = go[0];
	fflush(stdout);
	pid = fork();
	if (pid == 0)
		_exit(ns_root(sync));
	/* The child is in its namespaces: map ns uids 0, 1, 2 (root may). */
	if (read(up[0], &c, 1) == 1) {
		snprintf(map, sizeof(map), "0 %d 1\n1 %d 1\n2 %d 1\n", USERNS_UID, NS_OWNER_UID,
			 NS_OTHER_UID);
		snprintf(path, sizeof(path), "/proc/%d/uid_map", pid);
		ok(!write_file(path, map), "userns root: root writes a three-uid map");
		snprintf(path, sizeof(path), "/proc/%d/gid_map", pid);
		ok(!write_file(path, map), "userns root: and the same gid map");
	}
	if (write(go[1], "g", 1) != 1)
		ok(0, "userns root: go");
	waitpid(pid, &status, 0);
	is(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), 0,
	   "userns root: ns uid 2 is refused ns uid 1's 0600 queue, ns root opens and destroys it");
	close(up[0]);
	close(up[1]);
	close(go[0]);
	close(go[1]);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	/* Debian's kernels gate unprivileged user namespaces behind this. */
	write_file("/proc/sys/kernel/unprivileged_userns_clone", "1");
	test_matrix();
	test_f_cred();
	test_mode3();
	test_scopes();
	test_list_sizing();
	test_after_flags();
	test_writer_learns();
	test_group();
	test_scope_fixed();
	test_userns_root();
	test_kwqctl();
	return tap_done();
}
