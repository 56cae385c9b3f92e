// SPDX-License-Identifier: GPL-2.0
/*
 * kwq_fuzz: a seeded, time-bounded randomized ioctl fuzzer for /dev/kwq.
 *
 *   kwq_fuzz [--seed S] [--seconds T] [--threads N] [--trace]
 *
 * Worker threads share a few descriptors (so several threads hit the same
 * file at once) and throw random valid and invalid ioctls at them: every
 * KWQ_IOC_* command with random and boundary values (key lengths 0, 1,
 * 512, 513, huge; NULL, unmapped, read-only, misaligned and page-straddling
 * pointers; random flags, pad and reserved bits; past, zero and infinite
 * deadlines; batches of 0, 1, 1024 and 1025 entries with bad entries in
 * them; random limiter descriptors; clock steps; KWQ_IOC_SCOPE_LIMITS only
 * to read), random ioctl numbers, close and reopen. The main thread interrupts blocking calls with signals, forks
 * consumers that take leased keys and are SIGKILLed, and forks unprivileged
 * children that probe the access checks.
 *
 * Before the random part, a deterministic pass places each call's argument
 * (and batch entry arrays) so that it runs from a writable page into a
 * read-only one, at every field: the kernel reads it all and cannot write
 * its results back. A failed call must change nothing, a get must never
 * hand out a key it does not report, a batch must do what completed says.
 * --seconds counts from the start of that pass; the random part gets what
 * is left, but at least half of --seconds.
 *
 * Checked on the way: every call returns 0 or an errno documented for its
 * command (-ENOTTY for every unknown command); stats counters never go down
 * and stay consistent (gets >= dones + processing + lease requeues +
 * expiries, ...); every key handed out is one that was added; a killed
 * consumer's keys are requeued. After the run every queue is drained with a
 * fresh consumer (dones for unleased keys, a flushing drain, gets and
 * dones, forgets) and must end with no record left; no descriptor may leak.
 * Kernel reports (KASAN, lockdep, WARN, kmemleak) are caught by the harness
 * on the console.
 *
 * Each thread's stream of choices comes from the seed, which is printed, so
 * a failure can be replayed (--threads 1 makes the run deterministic up to
 * timing); on a failure the thread's last operations are printed.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/futex.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "libkwq.h"
#include "tap.h"

#define NSLOTS		6	/* descriptors shared by the workers */
#define NQNAMES		6	/* queue names fz-0 .. fz-5 */
#define NKEYS		64	/* pool of keys every valid add uses */
#define RING		24	/* operations kept per thread for reports */
#define LOGLEN		200
#define MAX_THREADS	16
#define KEYSLOT		528	/* per-entry get buffer in a batch */
#define RW_PAGES	4
#define MAX_REPORTS	12

/*
 * The read-only page: an ioctl argument at 0, a batch's entries at
 * RO_ENTRIES (96 of them), pool key 0 at RO_KEY. They must not overlap: a
 * batch whose argument and entries are both read-only would otherwise read
 * its own argument as entry 0.
 */
#define RO_ENTRIES	512
#define RO_KEY		2048
_Static_assert(sizeof(struct kwq_stats) <= RO_ENTRIES &&
	       sizeof(struct kwq_ioc_create) <= RO_ENTRIES, "arguments fit below RO_ENTRIES");

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/* ---- random numbers ---------------------------------------------------- */

struct rng {
	uint64_t s;
};

static uint64_t rnd(struct rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint32_t below(struct rng *r, uint32_t n)
{
	return n ? (uint32_t)(rnd(r) % n) : 0;
}

static bool chance(struct rng *r, unsigned int pct)
{
	return below(r, 100) < pct;
}

static uint64_t pick64(struct rng *r, const uint64_t *v, size_t n)
{
	return v[below(r, (uint32_t)n)];
}

#define PICK(r, arr) pick64(r, arr, ARRAY_SIZE(arr))

/* ---- global state ------------------------------------------------------- */

static struct {
	uint8_t b[KWQ_KEY_MAX];
	uint32_t len;
} pool[NKEYS];

static const char *const qnames[NQNAMES] = { "fz-0", "fz-1", "fz-2", "fz-3", "fz-4", "fz-5" };
/* A valid 63-character name, also one of ours (prefix "fz-"). */
static char long_name[KWQ_NAME_MAX];

struct slot {
	pthread_rwlock_t rw;	/* read: use fd; write: close and reopen */
	pthread_mutex_t mu;	/* last stats snapshot and held keys */
	int fd;
	bool have_last;
	struct kwq_stats last;
	uint64_t held;		/* pool keys leased through this fd (a hint) */
};

static struct slot slots[NSLOTS];

struct worker {
	pthread_t th;
	int id;
	struct rng r;
	char *rw;		/* RW_PAGES pages */
	char *guard;		/* PROT_NONE page after rw */
	char *ro;		/* read-only page, see RO_* */
	struct kwq_batch_entry *ents;	/* KWQ_BATCH_MAX + 1 entries */
	char *bufs;		/* get-batch key buffers */
	char log[RING][LOGLEN];
	unsigned int nlog;
	volatile const char *cur;
	volatile int finished;
	uint64_t ops;
};

static struct worker workers[MAX_THREADS];
static int nthreads = 4;
static volatile int stop;
static bool trace;
static long pagesz;
static char *reserved_none;	/* 64 KiB PROT_NONE, never mapped again */

static pthread_mutex_t report_mu = PTHREAD_MUTEX_INITIALIZER;

enum fail_kind { F_ERRNO, F_STATS, F_KEY, F_LEASE, F_PRIV, F_CLEANUP, F_FD, F_NKINDS };
static unsigned long fails[F_NKINDS];
static unsigned long nreports;

/* The inode number of the fuzzer's IPC namespace (KWQ_IOC_DESTROY_IN). */
static uint32_t own_ipc_inum;

static unsigned long long n_snapshots, n_lease_children, n_lease_keys, n_priv_children;
static unsigned long long n_gets_checked;

/* ---- errno bookkeeping -------------------------------------------------- */

static const int errlist[] = {
	EFAULT, EINVAL, EBUSY, EEXIST, ENOSPC, ENOMEM, ENOENT, EACCES, EPERM,
	EBADFD, EBADF, ESHUTDOWN, EIDRM, EAGAIN, ETIMEDOUT, EINTR, EMSGSIZE,
	ECANCELED, ENOTTY, EOPNOTSUPP, EOVERFLOW,
};

static uint32_t ebit(int e)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(errlist); i++)
		if (errlist[i] == e)
			return 1u << i;
	return 0;
}

#define E(x) ebit(x)

enum cmd_id {
	C_VERSION, C_CREATE, C_OPEN, C_DESTROY, C_LIST, C_ADD, C_GET, C_DONE,
	C_ADD_AFTER, C_CANCEL, C_ADD_BATCH, C_GET_BATCH, C_DONE_BATCH,
	C_ADD_RL, C_FORGET, C_NUM_REQUEUES, C_SHUTDOWN, C_DRAIN, C_STATS,
	C_ADD_EX, C_DONE_GET, C_SCOPE_LIMITS, C_LIST_ALL, C_DESTROY_IN,
	C_CLOCK_STEP, C_UNKNOWN, C_NCMDS
};

struct cmd_info {
	unsigned long cmd;
	const char *name;
	uint32_t allowed;	/* filled in at start */
	unsigned long long calls, okays, errs[ARRAY_SIZE(errlist)];
};

static struct cmd_info cmds[C_NCMDS] = {
	[C_VERSION] = { KWQ_IOC_VERSION, "VERSION" },
	[C_CREATE] = { KWQ_IOC_CREATE, "CREATE" },
	[C_OPEN] = { KWQ_IOC_OPEN, "OPEN" },
	[C_DESTROY] = { KWQ_IOC_DESTROY, "DESTROY" },
	[C_LIST] = { KWQ_IOC_LIST, "LIST" },
	[C_ADD] = { KWQ_IOC_ADD, "ADD" },
	[C_GET] = { KWQ_IOC_GET, "GET" },
	[C_DONE] = { KWQ_IOC_DONE, "DONE" },
	[C_ADD_AFTER] = { KWQ_IOC_ADD_AFTER, "ADD_AFTER" },
	[C_CANCEL] = { KWQ_IOC_CANCEL, "CANCEL" },
	[C_ADD_BATCH] = { KWQ_IOC_ADD_BATCH, "ADD_BATCH" },
	[C_GET_BATCH] = { KWQ_IOC_GET_BATCH, "GET_BATCH" },
	[C_DONE_BATCH] = { KWQ_IOC_DONE_BATCH, "DONE_BATCH" },
	[C_ADD_RL] = { KWQ_IOC_ADD_RATE_LIMITED, "ADD_RATE_LIMITED" },
	[C_FORGET] = { KWQ_IOC_FORGET, "FORGET" },
	[C_NUM_REQUEUES] = { KWQ_IOC_NUM_REQUEUES, "NUM_REQUEUES" },
	[C_SHUTDOWN] = { KWQ_IOC_SHUTDOWN, "SHUTDOWN" },
	[C_DRAIN] = { KWQ_IOC_DRAIN, "DRAIN" },
	[C_STATS] = { KWQ_IOC_STATS, "STATS" },
	[C_ADD_EX] = { KWQ_IOC_ADD_EX, "ADD_EX" },
	[C_DONE_GET] = { KWQ_IOC_DONE_GET, "DONE_GET" },
	[C_SCOPE_LIMITS] = { KWQ_IOC_SCOPE_LIMITS, "SCOPE_LIMITS" },
	[C_LIST_ALL] = { KWQ_IOC_LIST_ALL, "LIST_ALL" },
	[C_DESTROY_IN] = { KWQ_IOC_DESTROY_IN, "DESTROY_IN" },
	[C_CLOCK_STEP] = { KWQ_IOC_CLOCK_STEP, "CLOCK_STEP" },
	[C_UNKNOWN] = { 0, "unknown-cmd" },
};

/* The errnos the README and kernel-doc document for each command. */
static void init_allowed(void)
{
	uint32_t q = E(EBADFD);	/* queue command on a detached fd */
	uint32_t add = q | E(EBADF) | E(EFAULT) | E(EINVAL) | E(ESHUTDOWN) | E(EIDRM) |
		       E(ENOSPC) | E(ENOMEM);
	uint32_t get = q | E(EBADF) | E(EFAULT) | E(EINVAL) | E(EAGAIN) | E(ETIMEDOUT) |
		       E(EINTR) | E(ESHUTDOWN) | E(EIDRM) | E(EMSGSIZE);
	uint32_t done = q | E(EBADF) | E(EFAULT) | E(EINVAL) | E(ENOENT) | E(EIDRM);

	cmds[C_VERSION].allowed = E(EFAULT) | E(EINVAL);
	cmds[C_CREATE].allowed = E(EFAULT) | E(EINVAL) | E(EBUSY) | E(EEXIST) | E(ENOSPC) |
				 E(ENOMEM) | E(EBADF);
	cmds[C_OPEN].allowed = E(EFAULT) | E(EINVAL) | E(EBUSY) | E(ENOENT) | E(EACCES) |
			       E(EBADF);
	cmds[C_DESTROY].allowed = q | E(EPERM);
	cmds[C_LIST].allowed = E(EFAULT) | E(EINVAL) | E(ENOMEM);
	cmds[C_ADD].allowed = add;
	cmds[C_ADD_AFTER].allowed = add;
	cmds[C_ADD_EX].allowed = add;
	cmds[C_ADD_RL].allowed = add;
	cmds[C_ADD_BATCH].allowed = add;
	cmds[C_GET].allowed = get;
	cmds[C_GET_BATCH].allowed = get;
	cmds[C_DONE].allowed = done;
	cmds[C_DONE_BATCH].allowed = done;
	cmds[C_DONE_GET].allowed = done | get;
	cmds[C_CANCEL].allowed = q | E(EBADF) | E(EFAULT) | E(EINVAL) | E(EIDRM);
	cmds[C_FORGET].allowed = q | E(EBADF) | E(EFAULT) | E(EINVAL) | E(EIDRM);
	cmds[C_NUM_REQUEUES].allowed = q | E(EBADF) | E(EFAULT) | E(EINVAL) | E(EIDRM);
	cmds[C_SHUTDOWN].allowed = q | E(EPERM);
	cmds[C_DRAIN].allowed = q | E(EPERM) | E(EFAULT) | E(EINVAL) | E(ETIMEDOUT) |
				E(EINTR) | E(EIDRM) | E(ECANCELED);
	cmds[C_STATS].allowed = q | E(EBADF) | E(EFAULT) | E(EINVAL);
	/* The fuzzer reads its scope's limit, never sets it (see op_scope_limits). */
	cmds[C_SCOPE_LIMITS].allowed = E(EFAULT) | E(EINVAL) | E(ENOMEM);
	cmds[C_LIST_ALL].allowed = E(EFAULT) | E(EINVAL) | E(ENOMEM) | E(EPERM);
	cmds[C_DESTROY_IN].allowed = E(EFAULT) | E(EINVAL) | E(ENOENT) | E(EPERM);
	cmds[C_CLOCK_STEP].allowed = q | E(EBADF) | E(EFAULT) | E(EINVAL) | E(EOPNOTSUPP) |
				     E(EOVERFLOW) | E(EIDRM) | E(EPERM);
	cmds[C_UNKNOWN].allowed = E(ENOTTY);
}

/* ---- reporting ---------------------------------------------------------- */

static void wlog(struct worker *w, const char *fmt, ...)
{
	char *line = w->log[w->nlog++ % RING];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, LOGLEN, fmt, ap);
	va_end(ap);
	if (trace)
		fprintf(stderr, "t%d: %s\n", w->id, line);
}

static void dump_log(struct worker *w)
{
	unsigned int i, start = w->nlog > RING ? w->nlog - RING : 0;

	printf("#   last operations of thread %d (oldest first):\n", w->id);
	for (i = start; i < w->nlog; i++)
		printf("#     %s\n", w->log[i % RING]);
}

static void failf(struct worker *w, enum fail_kind kind, const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&report_mu);
	/* A few reports of each kind, at most MAX_REPORTS in all. */
	if (++fails[kind] <= 3 && nreports++ < MAX_REPORTS) {
		if (w)
			printf("# FAIL in thread %d: ", w->id);
		else
			printf("# FAIL in main: ");
		va_start(ap, fmt);
		vprintf(fmt, ap);
		va_end(ap);
		printf("\n");
		if (w)
			dump_log(w);
		fflush(stdout);
	}
	pthread_mutex_unlock(&report_mu);
}

/*
 * The one way the workers call ioctl: logs the call, checks the result
 * against the documented errnos and counts it. Returns 0 or -errno.
 */
static int fz_ioctl(struct worker *w, int fd, enum cmd_id id, unsigned long cmd, void *arg,
		    const char *what)
{
	struct cmd_info *ci = &cmds[id];
	unsigned int i;
	int ret, err;

	if (w) {
		wlog(w, "fd %d %s cmd %#lx arg %p %s", fd, ci->name, cmd, arg, what);
		w->cur = ci->name;
	}
	ret = ioctl(fd, cmd, arg);
	err = ret < 0 ? errno : 0;
	if (w)
		w->cur = "idle";
	__atomic_add_fetch(&ci->calls, 1, __ATOMIC_RELAXED);
	if (ret > 0) {
		failf(w, F_ERRNO, "%s returned %d, not 0 or -1", ci->name, ret);
		return 0;
	}
	if (!err) {
		__atomic_add_fetch(&ci->okays, 1, __ATOMIC_RELAXED);
		if (id == C_UNKNOWN)
			failf(w, F_ERRNO, "unknown command %#lx succeeded", cmd);
		return 0;
	}
	for (i = 0; i < ARRAY_SIZE(errlist); i++)
		if (errlist[i] == err)
			__atomic_add_fetch(&ci->errs[i], 1, __ATOMIC_RELAXED);
	if (!(ci->allowed & ebit(err)))
		failf(w, F_ERRNO, "%s (cmd %#lx, %s) failed with undocumented errno %d (%s)",
		      ci->name, cmd, what, err, strerror(err));
	return -err;
}

/* ---- memory the kernel may be pointed at -------------------------------- */

static void worker_mem(struct worker *w)
{
	char *m = mmap(NULL, (RW_PAGES + 3) * pagesz, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (m == MAP_FAILED) {
		printf("Bail out! mmap: %s\n", strerror(errno));
		exit(1);
	}
	w->rw = m;
	w->guard = m + RW_PAGES * pagesz;
	w->ro = w->guard + pagesz;
	memcpy(w->ro + RO_KEY, pool[0].b, pool[0].len);
	if (mprotect(w->guard, pagesz, PROT_NONE) ||
	    mprotect(w->ro, pagesz, PROT_READ) ||
	    mprotect(w->ro + pagesz, pagesz, PROT_NONE)) {
		printf("Bail out! mprotect: %s\n", strerror(errno));
		exit(1);
	}
	w->ents = calloc(KWQ_BATCH_MAX + 2, sizeof(*w->ents));
	w->bufs = calloc(KWQ_BATCH_MAX + 2, KEYSLOT);
	if (!w->ents || !w->bufs) {
		printf("Bail out! out of memory\n");
		exit(1);
	}
}

enum pmode { P_OK, P_MISALIGNED, P_RO, P_STRADDLE, P_NULL, P_NONE, P_LOW, P_KERNEL, P_NMODES };
static const char *const pmode_name[] = {
	"ok", "misaligned", "read-only", "straddling", "NULL", "unmapped", "low", "kernel",
};

static enum pmode pick_pmode(struct rng *r, unsigned int bad_pct)
{
	if (!chance(r, bad_pct))
		return chance(r, 85) ? P_OK : P_MISALIGNED;
	return (enum pmode)(P_RO + below(r, P_NMODES - P_RO));
}

static void *bad_ptr(struct worker *w, enum pmode m)
{
	switch (m) {
	case P_NULL:
		return NULL;
	case P_NONE:
		return reserved_none + below(&w->r, 65536 - 64);
	case P_LOW:
		return (void *)(uintptr_t)(16 + below(&w->r, 4000));
	default:
		return (void *)(uintptr_t)(sizeof(void *) == 8 ? 0xffff888000001000ULL :
					   0xfffff000UL);
	}
}

static void ro_write(struct worker *w, size_t off, const void *src, size_t n)
{
	mprotect(w->ro, pagesz, PROT_READ | PROT_WRITE);
	memcpy(w->ro + off, src, n);
	mprotect(w->ro, pagesz, PROT_READ);
}

/*
 * Place an ioctl argument of @size bytes copied from @src as @m says.
 * Returns the pointer to hand to the kernel; in-place results (IOWR) can
 * be read back from it for P_OK and P_MISALIGNED.
 */
static void *place_arg(struct worker *w, const void *src, size_t size, enum pmode m)
{
	char *p;
	size_t k;

	switch (m) {
	case P_OK:
		memcpy(w->rw, src, size);
		return w->rw;
	case P_MISALIGNED:
		p = w->rw + 1 + below(&w->r, 7);
		memcpy(p, src, size);
		return p;
	case P_RO:
		ro_write(w, 0, src, size);
		return w->ro;
	case P_STRADDLE:
		k = size > 1 ? 1 + below(&w->r, (uint32_t)size - 1) : 0;
		p = w->guard - k;
		memcpy(p, src, k);
		return p;
	default:
		return bad_ptr(w, m);
	}
}

/* ---- keys --------------------------------------------------------------- */

static void init_pool(struct rng *r)
{
	unsigned int i, j;

	for (i = 0; i < NKEYS; i++) {
		uint32_t len;

		if (i == 0)
			len = 7;
		else if (i == 1)
			len = 1;
		else if (i == 2)
			len = KWQ_KEY_MAX;
		else if (i == 3)
			len = KWQ_KEY_MAX - 1;
		else if (i < 8)
			len = 1 + below(r, KWQ_KEY_MAX);
		else
			len = 2 + below(r, 40);
		pool[i].len = len;
		for (j = 0; j < len; j++)
			pool[i].b[j] = (uint8_t)rnd(r);	/* NULs and all */
		/* A readable, unique prefix when long enough. */
		if (len >= 4)
			snprintf((char *)pool[i].b, 4, "%02u", i);
	}
	memset(long_name, 'L', KWQ_NAME_MAX - 1);
	memcpy(long_name, "fz-", 3);
	long_name[KWQ_NAME_MAX - 1] = '\0';
}

static int pool_find(const void *b, uint32_t len)
{
	unsigned int i;

	for (i = 0; i < NKEYS; i++)
		if (pool[i].len == len && !memcmp(pool[i].b, b, len))
			return (int)i;
	return -1;
}

/* Whether a pool key has @len bytes. */
static bool pool_len(uint32_t len)
{
	unsigned int i;

	for (i = 0; i < NKEYS; i++)
		if (pool[i].len == len)
			return true;
	return false;
}

static const uint64_t bad_lens[] = { 0, KWQ_KEY_MAX + 1, 0xffffffffULL, 0x80000000ULL, 4096,
				     KWQ_KEY_MAX + 2 };

/*
 * Fill key_ptr/key_len: a pool key (index in *idx) placed sanely or badly.
 * Batch entries (@entry >= 0) get copies of their own, so that entries
 * never share bytes, and straddling keys that always fault.
 */
static bool pick_key(struct worker *w, __u64 *ptr, __u32 *len, int *idx, unsigned int bad_pct,
		     int entry)
{
	struct rng *r = &w->r;
	int i = (int)below(r, NKEYS);
	enum pmode m = pick_pmode(r, bad_pct);
	bool readable = m == P_OK || m == P_MISALIGNED || m == P_RO;
	char *p;
	uint32_t k;

	*idx = i;
	*len = pool[i].len;
	switch (m) {
	case P_OK:
		*ptr = (uintptr_t)pool[i].b;
		break;
	case P_MISALIGNED:
		p = entry >= 0 ? w->bufs + (size_t)entry * KEYSLOT : w->rw + pagesz;
		p += 1 + below(r, 7);
		memcpy(p, pool[i].b, pool[i].len);
		*ptr = (uintptr_t)p;
		break;
	case P_RO:
		*idx = 0;
		*len = pool[0].len;
		*ptr = (uintptr_t)(w->ro + RO_KEY);
		break;
	case P_STRADDLE:
		k = 1 + below(r, pool[i].len + 8);
		if (k > pool[i].len)
			k = pool[i].len;	/* fits: a valid key */
		if (entry >= 0)
			k = below(r, pool[i].len);
		p = w->guard - k;
		memcpy(p, pool[i].b, k);
		*ptr = (uintptr_t)p;
		readable = k == pool[i].len;
		break;
	default:
		*ptr = (uintptr_t)bad_ptr(w, m);
		if (m == P_KERNEL && chance(r, 50))
			*ptr = rnd(r) | (1ULL << 63);
		break;
	}
	if (chance(r, bad_pct / 2 + 1)) {
		*len = (uint32_t)PICK(r, bad_lens);
		readable = false;
	}
	return readable;
}

/*
 * Right before a call: a key the kernel can read must still be the pool
 * key (or this program overwrote it). Returns false if not.
 */
static bool key_intact(struct worker *w, __u64 ptr, __u32 len, int idx, const char *what)
{
	if (!memcmp((void *)(uintptr_t)ptr, pool[idx].b, len))
		return true;
	failf(w, F_KEY, "fuzzer bug: %s key %d at %#llx (%u bytes) no longer holds the key", what,
	      idx, (unsigned long long)ptr, len);
	return false;
}

/* After a call: an add that succeeded must have read a key we offered. */
static void check_added(struct worker *w, bool readable, __u64 ptr, __u32 len, const char *what)
{
	if (!readable)
		failf(w, F_KEY, "%s succeeded with key %#llx (%u bytes), which it cannot read",
		      what, (unsigned long long)ptr, len);
}

/* ---- slots -------------------------------------------------------------- */

static int dev_open(int oflags)
{
	return open(KWQ_DEFAULT_DEV, oflags | O_CLOEXEC);
}

static int attach_by_name(struct worker *w, int fd, const char *name, bool may_create)
{
	struct kwq_ioc_open o;
	struct kwq_ioc_create c;
	int ret;

	memset(&o, 0, sizeof(o));
	snprintf((char *)o.name, sizeof(o.name), "%s", name);
	ret = fz_ioctl(w, fd, C_OPEN, KWQ_IOC_OPEN, &o, name);
	if (ret != -ENOENT || !may_create)
		return ret;
	memset(&c, 0, sizeof(c));
	snprintf((char *)c.name, sizeof(c.name), "%s", name);
	c.mode = 0666;
	/* The last name is a queue on a manual clock, for KWQ_IOC_CLOCK_STEP. */
	if (!strcmp(name, qnames[NQNAMES - 1]))
		c.flags = KWQ_CREATE_MANUAL_CLOCK;
	return fz_ioctl(w, fd, C_CREATE, KWQ_IOC_CREATE, &c, name);
}

/* Close and reopen a slot; the caller holds its write lock. */
static void slot_reopen(struct worker *w, struct slot *s)
{
	static const int modes[] = { O_RDWR, O_RDWR, O_RDWR, O_RDWR, O_RDWR, O_RDWR, O_RDWR,
				     O_RDWR, O_RDONLY, O_WRONLY };
	struct rng *r = &w->r;
	int oflags = modes[below(r, ARRAY_SIZE(modes))];

	if (chance(r, 15))
		oflags |= O_NONBLOCK;
	if (s->fd >= 0)
		close(s->fd);
	s->fd = dev_open(oflags);
	wlog(w, "reopen slot %ld as fd %d oflags %#x", (long)(s - slots), s->fd, oflags);
	if (s->fd < 0) {
		failf(w, F_FD, "open %s: %s", KWQ_DEFAULT_DEV, strerror(errno));
		return;
	}
	pthread_mutex_lock(&s->mu);
	s->have_last = false;
	s->held = 0;
	pthread_mutex_unlock(&s->mu);
	if (chance(r, 85)) {
		const char *name = qnames[below(r, NQNAMES)];
		struct kwq_stats st;

		if (attach_by_name(w, s->fd, name, true))
			return;
		/* Queues that were shut down mostly make way for new ones. */
		memset(&st, 0, sizeof(st));
		st.size = sizeof(st);
		if (!fz_ioctl(w, s->fd, C_STATS, KWQ_IOC_STATS, &st, "reopen") &&
		    (st.state & KWQ_STATE_SHUTTING_DOWN) && (oflags & O_ACCMODE) == O_RDWR &&
		    chance(r, 70)) {
			fz_ioctl(w, s->fd, C_DESTROY, KWQ_IOC_DESTROY, NULL, "shut down");
			close(s->fd);
			s->fd = dev_open(oflags);
			if (s->fd >= 0)
				attach_by_name(w, s->fd, name, true);
		}
	}
}

/* ---- invariants on a stats snapshot ------------------------------------- */

#define MONO_FIELDS(X) X(adds) X(dedups) X(gets) X(dones) X(requeues) X(refused) \
	X(fired) X(cancels) X(absorbed) X(waits_dropped) X(lease_requeues) \
	X(rate_limited) X(tokens_returned) X(backoff_evictions) X(processing_expiries)

static int stats_consistent(struct worker *w, const struct kwq_stats *st, const char *where)
{
	const uint32_t known = KWQ_STATE_SHUTTING_DOWN | KWQ_STATE_DRAINING | KWQ_STATE_DESTROYED;
	const char *bad = NULL;

	if (st->size != sizeof(*st))
		bad = "size != sizeof(struct kwq_stats)";
	else if (st->state & ~known)
		bad = "unknown state bits";
	else if (st->processing + st->dones + st->lease_requeues + st->processing_expiries >
		 st->gets)
		bad = "processing + dones + lease_requeues + processing_expiries > gets";
	else if (st->dirty_processing > st->processing)
		bad = "dirty_processing > processing";
	else if (st->items > st->max_items)
		bad = "items > max_items";
	else if (st->queued > st->items || st->processing > st->items ||
		 st->waiting > st->items || st->backoff_keys > st->items)
		bad = "a count exceeds items";
	else if (st->items > st->queued + st->processing + st->waiting + st->backoff_keys)
		bad = "items > queued + processing + waiting + backoff_keys";
	else if (st->tokens_returned > st->rate_limited)
		bad = "tokens_returned > rate_limited";
	else if ((st->state & KWQ_STATE_DESTROYED) && !(st->state & KWQ_STATE_SHUTTING_DOWN))
		bad = "destroyed but not shutting down";
	if (bad)
		failf(w, F_STATS, "%s: %s (state %#x queued %llu processing %llu dirty %llu "
		      "waiting %llu items %llu/%llu backoff %llu gets %llu dones %llu "
		      "lease_requeues %llu)", where, bad, st->state,
		      (unsigned long long)st->queued, (unsigned long long)st->processing,
		      (unsigned long long)st->dirty_processing, (unsigned long long)st->waiting,
		      (unsigned long long)st->items, (unsigned long long)st->max_items,
		      (unsigned long long)st->backoff_keys, (unsigned long long)st->gets,
		      (unsigned long long)st->dones, (unsigned long long)st->lease_requeues);
	return bad ? -1 : 0;
}

/* Snapshot a slot's queue and compare it with the previous snapshot. */
static void slot_check(struct worker *w, struct slot *s)
{
	struct kwq_stats st;
	int ret;

	pthread_mutex_lock(&s->mu);
	memset(&st, 0, sizeof(st));
	st.size = sizeof(st);
	ret = fz_ioctl(w, s->fd, C_STATS, KWQ_IOC_STATS, &st, "invariant snapshot");
	if (!ret) {
		__atomic_add_fetch(&n_snapshots, 1, __ATOMIC_RELAXED);
		stats_consistent(w, &st, "snapshot");
		if (s->have_last) {
#define MONO(f) if (st.f < s->last.f) \
		failf(w, F_STATS, "counter " #f " went down: %llu -> %llu", \
		      (unsigned long long)s->last.f, (unsigned long long)st.f);
			MONO_FIELDS(MONO)
#undef MONO
			if ((s->last.state & KWQ_STATE_DESTROYED) &&
			    !(st.state & KWQ_STATE_DESTROYED))
				failf(w, F_STATS, "queue came back from destroyed");
			if ((s->last.state & KWQ_STATE_SHUTTING_DOWN) &&
			    !(st.state & KWQ_STATE_SHUTTING_DOWN))
				failf(w, F_STATS, "queue stopped shutting down");
		}
		s->last = st;
		s->have_last = true;
	}
	pthread_mutex_unlock(&s->mu);
}

static void slot_hold(struct slot *s, int idx, bool held)
{
	if (idx < 0)
		return;
	pthread_mutex_lock(&s->mu);
	if (held)
		s->held |= 1ULL << idx;
	else
		s->held &= ~(1ULL << idx);
	pthread_mutex_unlock(&s->mu);
}

static int slot_pick_held(struct worker *w, struct slot *s)
{
	uint64_t h;
	int i, start = (int)below(&w->r, NKEYS);

	pthread_mutex_lock(&s->mu);
	h = s->held;
	pthread_mutex_unlock(&s->mu);
	if (!h)
		return -1;
	for (i = 0; i < NKEYS; i++)
		if (h & (1ULL << ((start + i) % NKEYS)))
			return (start + i) % NKEYS;
	return -1;
}

/*
 * A done's key: with a chance of @pct %, one the slot holds (if it holds
 * any) replaces the key picked. True if it did.
 */
static bool pick_held_key(struct worker *w, struct slot *s, unsigned int pct, __u64 *ptr,
			  __u32 *len, int *idx)
{
	int h;

	if (!chance(&w->r, pct))
		return false;
	h = slot_pick_held(w, s);
	if (h < 0)
		return false;
	*idx = h;
	*ptr = (uintptr_t)pool[h].b;
	*len = pool[h].len;
	return true;
}

/* ---- random values ------------------------------------------------------ */

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* A deadline: mostly short, sometimes none, past, or infinite. */
static uint64_t pick_deadline(struct rng *r)
{
	switch (below(r, 10)) {
	case 0:
	case 1:
	case 2:
		return KWQ_DEADLINE_NOWAIT;
	case 3:
		return 1;	/* long past */
	case 4:
		return now_ns() - 1000;
	case 5:
		/* Blocks until a key comes or the main thread's signal. */
		return chance(r, 20) ? KWQ_DEADLINE_FOREVER : now_ns() + 2000000;
	case 6:
		return chance(r, 20) ? (1ULL << 63) + below(r, 1000) : now_ns() + 100000;
	default:
		return now_ns() + 1000 + below(r, 3000000);
	}
}

static int64_t pick_delay(struct rng *r)
{
	static const uint64_t v[] = {
		0, 1, 1000, 100000, 1000000, 5000000, 20000000, 3600000000000ULL,
		KWQ_DELAY_MAX_NS, KWQ_DELAY_MAX_NS + 1, INT64_MAX, (uint64_t)-1,
		(uint64_t)INT64_MIN, (uint64_t)-1000000,
	};

	if (chance(r, 30))
		return (int64_t)(below(r, 30000000));
	return (int64_t)PICK(r, v);
}

static uint32_t mutate32(struct rng *r, uint32_t v, unsigned int pct)
{
	static const uint64_t odd[] = { 1, 2, 4, 8, 0x80000000ULL, 0xffffffffULL, 0x100, 3 };

	if (!chance(r, pct))
		return v;
	return chance(r, 50) ? (uint32_t)PICK(r, odd) : v ^ (1u << below(r, 32));
}

static void mutate_reserved(struct rng *r, __u64 *res, size_t n, unsigned int pct)
{
	if (chance(r, pct))
		res[below(r, (uint32_t)n)] = chance(r, 50) ? 1 : rnd(r);
}

static void random_limiter(struct rng *r, struct kwq_limiter *l)
{
	static const uint64_t ns[] = {
		0, 1, 1000, 1000000, 5000000, 1000000000, 1000000000000ULL,
		KWQ_DELAY_MAX_NS, KWQ_DELAY_MAX_NS + 1, ~0ULL, 1ULL << 62,
	};
	static const uint64_t rates[] = { 0, 1, 10000, 1000000, KWQ_RATE_INF, ~0ULL - 1 };
	static const uint64_t counts[] = { 0, 1, 2, 100, 524286, 524287, 524288, ~0U };

	memset(l, 0, sizeof(*l));
	l->type = chance(r, 90) ? 1 + below(r, 3) : below(r, 8);
	switch (l->type) {
	case KWQ_LIMITER_EXPONENTIAL:
		l->base_ns = PICK(r, ns);
		l->max_ns = chance(r, 70) ? l->base_ns * (1 + below(r, 1000)) : PICK(r, ns);
		break;
	case KWQ_LIMITER_FAST_SLOW:
		l->fast_ns = PICK(r, ns);
		l->slow_ns = PICK(r, ns);
		l->max_fast = (uint32_t)PICK(r, counts);
		break;
	case KWQ_LIMITER_BUCKET:
		l->rate_mhz = PICK(r, rates);
		l->burst = (uint32_t)PICK(r, counts);
		break;
	}
	if (chance(r, 5))
		l->pad = 1;
	if (chance(r, 5))	/* a field the type does not use */
		l->slow_ns ^= 1;
}

static void random_ratelimit(struct rng *r, struct kwq_ratelimit *rl)
{
	static const uint64_t waits[] = { 0, 0, 1000000, 1000000000, KWQ_DELAY_MAX_NS, ~0ULL };
	uint32_t i;

	memset(rl, 0, sizeof(*rl));
	rl->count = chance(r, 90) ? below(r, KWQ_LIMITERS_MAX + 1) : (uint32_t)rnd(r);
	rl->max_wait_ns = PICK(r, waits);
	for (i = 0; i < KWQ_LIMITERS_MAX; i++)
		if (i < rl->count || chance(r, 3))
			random_limiter(r, &rl->limiters[i]);
	rl->flags = mutate32(r, 0, 3);
	mutate_reserved(r, rl->reserved, ARRAY_SIZE(rl->reserved), 3);
}

static const char *pick_name(struct rng *r, uint8_t *name)
{
	static const char *const bad[] = {
		"", "a/b", ".x", "has space", "x\x7f", "..", "\xc3\xa9",
	};

	memset(name, 0, KWQ_NAME_MAX);
	switch (below(r, 20)) {
	case 0:
		memset(name, 'x', KWQ_NAME_MAX);	/* unterminated */
		return "unterminated";
	case 1:
		snprintf((char *)name, KWQ_NAME_MAX, "%s", long_name);
		return "63 chars";
	case 2:
	case 3:
		snprintf((char *)name, KWQ_NAME_MAX, "%s", bad[below(r, ARRAY_SIZE(bad))]);
		return "bad name";
	default:
		snprintf((char *)name, KWQ_NAME_MAX, "%s", qnames[below(r, NQNAMES)]);
		return (const char *)name;
	}
}

/* ---- the operations ----------------------------------------------------- */

static void op_version(struct worker *w, int fd)
{
	struct kwq_ioc_version v;
	enum pmode m = pick_pmode(&w->r, 25);

	memset(&v, 0, sizeof(v));
	v.flags = mutate32(&w->r, 0, 15);
	mutate_reserved(&w->r, v.reserved, ARRAY_SIZE(v.reserved), 15);
	fz_ioctl(w, fd, C_VERSION, KWQ_IOC_VERSION, place_arg(w, &v, sizeof(v), m),
		 pmode_name[m]);
}

static void op_create(struct worker *w, struct slot *s)
{
	struct rng *r = &w->r;
	static const uint64_t items[] = { 0, 0, 0, 1, 2, 8, 65536, 65537, ~0U };
	static const uint64_t modes[] = { 0666, 0600, 0640, 0, 0777, 01000, ~0U };
	static const uint64_t timeouts[] = { 1, 1000, 1000000, 5000000, 50000000, 1000000000,
					     KWQ_DELAY_MAX_NS, KWQ_DELAY_MAX_NS + 1, ~0ULL };
	struct kwq_ioc_create c;
	enum pmode m = pick_pmode(r, 15);
	const char *what;
	int ret;

	memset(&c, 0, sizeof(c));
	what = pick_name(r, c.name);
	c.mode = (uint32_t)PICK(r, modes);
	c.max_items = (uint32_t)PICK(r, items);
	c.policy = chance(r, 90) ? below(r, 4) : (uint32_t)rnd(r);
	c.max_backoff_keys = chance(r, 70) ? 0 : below(r, 10);
	if (chance(r, 25))
		c.processing_timeout_ns = PICK(r, timeouts);
	if (chance(r, 40)) {
		c.flags = KWQ_CREATE_RATELIMIT;
		random_ratelimit(r, &c.ratelimit);
	} else if (chance(r, 3)) {
		random_ratelimit(r, &c.ratelimit);	/* without the flag */
	}
	/* Priority queues, their aging (0: the default), and aging without one. */
	if (chance(r, 40))
		c.flags |= KWQ_CREATE_PRIORITY;
	if (chance(r, 20))
		c.aging_ns = chance(r, 90) ? 1 + below(r, 100000000) : rnd(r);
	/* Tenant queues, their depth (0 to 3; 3 is refused), and a depth without one. */
	if (chance(r, 40))
		c.flags |= KWQ_CREATE_TENANT;
	/* Queues on a manual clock, which KWQ_IOC_CLOCK_STEP moves. */
	if (chance(r, 10))
		c.flags |= KWQ_CREATE_MANUAL_CLOCK;
	if (chance(r, 50))
		c.tenant_depth = chance(r, 90) ? (uint8_t)below(r, 4) : (uint8_t)rnd(r);
	if (chance(r, 3))
		c.pad3[below(r, 3)] = (uint8_t)(1 + below(r, 255));
	c.flags = mutate32(r, c.flags, 5);
	c.pad = mutate32(r, 0, 3);
	mutate_reserved(r, c.reserved, ARRAY_SIZE(c.reserved), 3);
	ret = fz_ioctl(w, s->fd, C_CREATE, KWQ_IOC_CREATE, place_arg(w, &c, sizeof(c), m), what);
	(void)ret;
}

static void op_open(struct worker *w, struct slot *s)
{
	struct rng *r = &w->r;
	struct kwq_ioc_open o;
	enum pmode m = pick_pmode(r, 15);
	const char *what;

	memset(&o, 0, sizeof(o));
	what = pick_name(r, o.name);
	o.flags = mutate32(r, 0, 5);
	o.pad = mutate32(r, 0, 3);
	mutate_reserved(r, o.reserved, ARRAY_SIZE(o.reserved), 3);
	fz_ioctl(w, s->fd, C_OPEN, KWQ_IOC_OPEN, place_arg(w, &o, sizeof(o), m), what);
}

/*
 * Where a list's entries go: the RW pages (@room entries of @size before
 * the guard page once @cap exceeds it), into the guard page, a read-only
 * page, or a bad address (@nm).
 */
static uintptr_t out_array(struct worker *w, enum pmode nm, uint32_t cap, size_t size,
			   uint32_t room)
{
	if (nm == P_OK || nm == P_MISALIGNED) {
		if (cap > room)
			return (uintptr_t)(w->guard - room * size);
		return (uintptr_t)(w->rw + pagesz + (nm == P_MISALIGNED));
	}
	if (nm == P_STRADDLE)
		return (uintptr_t)(w->guard - below(&w->r, 200));
	if (nm == P_RO)
		return (uintptr_t)w->ro;
	return (uintptr_t)bad_ptr(w, nm);
}

static void op_list(struct worker *w, int fd)
{
	struct rng *r = &w->r;
	static const uint64_t caps[] = { 0, 1, 2, 8, 64, 256, 257, ~0U };
	struct kwq_ioc_list l;
	enum pmode m = pick_pmode(r, 20);
	enum pmode nm = pick_pmode(r, 25);

	memset(&l, 0, sizeof(l));
	l.capacity = (uint32_t)PICK(r, caps);
	l.names_ptr = out_array(w, nm, l.capacity, KWQ_NAME_MAX, 40);
	l.count = (uint32_t)rnd(r);	/* out only */
	l.flags = mutate32(r, 0, 5);
	l.pad = mutate32(r, 0, 3);
	mutate_reserved(r, l.reserved, ARRAY_SIZE(l.reserved), 3);
	fz_ioctl(w, fd, C_LIST, KWQ_IOC_LIST, place_arg(w, &l, sizeof(l), m), pmode_name[nm]);
}

static const enum cmd_id key_cmds[] = { C_ADD, C_DONE, C_CANCEL, C_ADD_RL, C_FORGET,
					C_NUM_REQUEUES };

static void op_key(struct worker *w, struct slot *s, enum cmd_id id)
{
	struct rng *r = &w->r;
	struct kwq_ioc_key k, *kp;
	enum pmode m = pick_pmode(r, 10);
	char what[64];
	bool readable;
	int idx, ret;

	memset(&k, 0, sizeof(k));
	readable = pick_key(w, &k.key_ptr, &k.key_len, &idx, 12, -1);
	if (id == C_DONE && pick_held_key(w, s, 70, &k.key_ptr, &k.key_len, &idx))
		readable = true;
	if (id == C_ADD)
		k.flags = chance(r, 30) ? below(r, 4) : 0;
	k.flags = mutate32(r, k.flags, 5);
	k.result = (uint32_t)rnd(r);	/* out only */
	k.pad = mutate32(r, 0, 3);
	mutate_reserved(r, k.reserved, ARRAY_SIZE(k.reserved), 3);
	snprintf(what, sizeof(what), "key %d len %u flags %#x", idx, k.key_len, k.flags);
	if (readable && !key_intact(w, k.key_ptr, k.key_len, idx, cmds[id].name))
		return;
	/* A straddling argument may overwrite a straddling key: it faults anyway. */
	kp = place_arg(w, &k, sizeof(k), m);
	ret = fz_ioctl(w, s->fd, id, cmds[id].cmd, kp, what);
	if (!ret)
		check_added(w, readable, k.key_ptr, k.key_len, cmds[id].name);
	if (ret || (m != P_OK && m != P_MISALIGNED))
		return;
	switch (id) {
	case C_ADD:
	case C_ADD_RL:
		if (kp->result > KWQ_ADD_ABSORBED)
			failf(w, F_ERRNO, "%s result %u out of range", cmds[id].name, kp->result);
		break;
	case C_DONE:
		if (kp->result > KWQ_DONE_REQUEUED)
			failf(w, F_ERRNO, "DONE result %u out of range", kp->result);
		if (pool_find((void *)(uintptr_t)k.key_ptr, k.key_len) == idx)
			slot_hold(s, idx, false);
		break;
	case C_CANCEL:
	case C_FORGET:
		if (kp->result > 1)
			failf(w, F_ERRNO, "%s result %u out of range", cmds[id].name, kp->result);
		break;
	default:
		if (kp->result > 524287)
			failf(w, F_ERRNO, "NUM_REQUEUES result %u beyond saturation", kp->result);
		break;
	}
}

static void op_add_after(struct worker *w, struct slot *s)
{
	struct rng *r = &w->r;
	struct kwq_ioc_add_after a, *ap;
	enum pmode m = pick_pmode(r, 10);
	char what[80];
	bool readable;
	int idx;

	memset(&a, 0, sizeof(a));
	readable = pick_key(w, &a.key_ptr, &a.key_len, &idx, 12, -1);
	a.delay_ns = pick_delay(r);
	if (chance(r, 30))
		a.flags |= KWQ_AFTER_REPLACE;
	if (chance(r, 20))
		a.flags |= below(r, 4);
	a.flags = mutate32(r, a.flags, 5);
	a.result = (uint32_t)rnd(r);
	a.pad = mutate32(r, 0, 3);
	mutate_reserved(r, a.reserved, ARRAY_SIZE(a.reserved), 3);
	snprintf(what, sizeof(what), "key %d len %u delay %lld flags %#x", idx, a.key_len,
		 (long long)a.delay_ns, a.flags);
	if (readable && !key_intact(w, a.key_ptr, a.key_len, idx, "ADD_AFTER"))
		return;
	ap = place_arg(w, &a, sizeof(a), m);
	if (fz_ioctl(w, s->fd, C_ADD_AFTER, KWQ_IOC_ADD_AFTER, ap, what))
		return;
	check_added(w, readable, a.key_ptr, a.key_len, "ADD_AFTER");
	if ((m == P_OK || m == P_MISALIGNED) && ap->result > KWQ_ADD_ABSORBED)
		failf(w, F_ERRNO, "ADD_AFTER result %u out of range", ap->result);
}

/* KWQ_IOC_ADD_EX: an add now or after a delay, at a priority, mostly in range. */
static void op_add_ex(struct worker *w, struct slot *s)
{
	struct rng *r = &w->r;
	struct kwq_ioc_add a, *ap;
	enum pmode m = pick_pmode(r, 10);
	char what[96];
	bool readable;
	int idx;

	memset(&a, 0, sizeof(a));
	readable = pick_key(w, &a.key_ptr, &a.key_len, &idx, 12, -1);
	if (chance(r, 40))
		a.delay_ns = pick_delay(r);
	if (chance(r, 20))
		a.flags |= a.delay_ns > 0 ? KWQ_AFTER_REPLACE : below(r, 4);
	if (a.delay_ns > 0 && chance(r, 10)) {
		a.flags = KWQ_AFTER_DEBOUNCE;
		a.max_wait_ns = (uint64_t)a.delay_ns * (1 + below(r, 3));
	}
	a.flags = mutate32(r, a.flags, 5);
	/* 0 suits every queue; others only priority queues (the rest: -EINVAL). */
	if (chance(r, 45))
		a.priority = KWQ_PRIORITY_MIN + (int32_t)below(r, 16);
	else if (chance(r, 10))
		a.priority = (int32_t)rnd(r);
	a.result = (uint32_t)rnd(r);
	a.pad = mutate32(r, 0, 3);
	a.payload_len = mutate32(r, 0, 3);
	if (chance(r, 3))
		a.payload_ptr = rnd(r);
	mutate_reserved(r, a.reserved, ARRAY_SIZE(a.reserved), 3);
	snprintf(what, sizeof(what), "key %d len %u delay %lld flags %#x priority %d", idx,
		 a.key_len, (long long)a.delay_ns, a.flags, a.priority);
	if (readable && !key_intact(w, a.key_ptr, a.key_len, idx, "ADD_EX"))
		return;
	ap = place_arg(w, &a, sizeof(a), m);
	if (fz_ioctl(w, s->fd, C_ADD_EX, KWQ_IOC_ADD_EX, ap, what))
		return;
	check_added(w, readable, a.key_ptr, a.key_len, "ADD_EX");
	if ((m == P_OK || m == P_MISALIGNED) && ap->result > KWQ_ADD_ABSORBED)
		failf(w, F_ERRNO, "ADD_EX result %u out of range", ap->result);
}

/* A key came out of the queue: it must be one that went in. */
/* For a report: the key's first bytes and the pool key it resembles most. */
static void describe_key(const uint8_t *b, uint32_t len, char *out, size_t n)
{
	unsigned int i, j, best = 0, best_same = 0;
	int off;

	off = snprintf(out, n, "bytes");
	for (i = 0; i < len && i < 16 && off < (int)n; i++)
		off += snprintf(out + off, n - off, " %02x", b[i]);
	for (i = 0; i < NKEYS; i++) {
		unsigned int same = 0, m = pool[i].len < len ? pool[i].len : len;

		for (j = 0; j < m; j++)
			same += pool[i].b[j] == b[j];
		if (same > best_same) {
			best_same = same;
			best = i;
		}
	}
	if (off < (int)n)
		off += snprintf(out + off, n - off, "%s; closest pool key %u (%u bytes) shares %u "
				"bytes", len > 16 ? " ..." : "", best, pool[best].len, best_same);
	/* Keys that are really pointers: to which of our buffers? */
	for (i = 0; i < MAX_THREADS && off < (int)n; i++) {
		struct worker *w = &workers[i];
		const char *const rname[] = { "rw", "rw+1p", "rw+2p", "rw+3p", "guard", "ro",
					      "ents", "bufs" };
		uintptr_t base[8];
		unsigned int r;

		if (!w->rw)
			continue;
		base[0] = (uintptr_t)w->rw;
		base[1] = base[0] + pagesz;
		base[2] = base[1] + pagesz;
		base[3] = base[2] + pagesz;
		base[4] = (uintptr_t)w->guard;
		base[5] = (uintptr_t)w->ro;
		base[6] = (uintptr_t)w->ents;
		base[7] = (uintptr_t)w->bufs;
		for (r = 0; r < 8; r++) {
			uint64_t v = base[r];
			uint8_t le[8];

			for (j = 0; j < 8; j++)
				le[j] = (uint8_t)(v >> (8 * j));
			/* The low bytes of the pointer (a page base: low 12 bits 0). */
			if (!memcmp(le + 1, b + 1, len < 8 ? (len > 1 ? len - 1 : 0) : 7) &&
			    (b[0] & 0xf0) == 0 && len >= 2)
				off += snprintf(out + off, n - off,
						"; pointer into thread %u %s + %u", i, rname[r],
						b[0]);
		}
	}
}

static void got_key(struct worker *w, struct slot *s, const void *buf, uint32_t len,
		    bool leased, const char *how)
{
	int idx = len <= KWQ_KEY_MAX ? pool_find(buf, len) : -1;
	char desc[320];

	__atomic_add_fetch(&n_gets_checked, 1, __ATOMIC_RELAXED);
	if (idx < 0) {
		describe_key(buf, len, desc, sizeof(desc));
		failf(w, F_KEY, "%s on fd %d handed out a key of %u bytes that was never added: %s",
		      how, s->fd, len, desc);
		return;
	}
	if (leased)
		slot_hold(s, idx, true);
}

/*
 * Where a get's key goes, as @bm says: the worker's buffer at *@buf (one
 * byte on for P_MISALIGNED), its bytes set to a5 so that a key never
 * written shows; or running into the guard page, read-only, or bad.
 */
static __u64 place_key_buf(struct worker *w, enum pmode bm, char **buf)
{
	if (bm == P_OK || bm == P_MISALIGNED) {
		*buf += bm == P_MISALIGNED;
		memset(*buf, 0xa5, KWQ_KEY_MAX);
		return (uintptr_t)*buf;
	}
	if (bm == P_STRADDLE)
		return (uintptr_t)(w->guard - below(&w->r, 64));
	if (bm == P_RO)
		return (uintptr_t)w->ro;
	return (uintptr_t)bad_ptr(w, bm);
}

/*
 * A key a get (@how) reported: a length within its cap, and, if it went
 * to the worker's buffer (@bm), one that was added.
 */
static void check_taken(struct worker *w, struct slot *s, const char *how, enum pmode bm,
			const char *buf, uint32_t len, uint32_t cap, bool leased)
{
	if (len > cap || len > KWQ_KEY_MAX || len == 0) {
		failf(w, F_KEY, "%s key_len %u with cap %u", how, len, cap);
		return;
	}
	if (bm == P_OK || bm == P_MISALIGNED)
		got_key(w, s, buf, len, leased, how);
}

static void op_get(struct worker *w, struct slot *s)
{
	struct rng *r = &w->r;
	static const uint64_t caps[] = { 0, 1, 6, 7, 40, KWQ_KEY_MAX - 1, KWQ_KEY_MAX,
					 KWQ_KEY_MAX + 1, ~0U };
	struct kwq_ioc_get g, *gp;
	enum pmode m = pick_pmode(r, 8);
	enum pmode bm = pick_pmode(r, 10);
	char *buf = w->rw + 2 * pagesz;
	char what[96];
	int ret;

	memset(&g, 0, sizeof(g));
	g.key_cap = chance(r, 70) ? KWQ_KEY_MAX : (uint32_t)PICK(r, caps);
	g.key_ptr = place_key_buf(w, bm, &buf);
	g.key_len = (uint32_t)rnd(r);	/* out only */
	g.deadline_ns = pick_deadline(r);
	g.flags = chance(r, 15) ? KWQ_GET_UNLEASED : 0;
	g.flags = mutate32(r, g.flags, 4);
	g.pad = mutate32(r, 0, 3);
	mutate_reserved(r, g.reserved, ARRAY_SIZE(g.reserved), 3);
	snprintf(what, sizeof(what), "buf %s cap %u deadline %#llx flags %#x", pmode_name[bm],
		 g.key_cap, (unsigned long long)g.deadline_ns, g.flags);
	gp = place_arg(w, &g, sizeof(g), m);
	ret = fz_ioctl(w, s->fd, C_GET, KWQ_IOC_GET, gp, what);
	if (m != P_OK && m != P_MISALIGNED)
		return;
	if (ret == -EMSGSIZE && (gp->key_len <= g.key_cap || !pool_len(gp->key_len)))
		failf(w, F_KEY, "GET -EMSGSIZE with cap %u reports a key of %u bytes, and no key "
		      "of that length was added", g.key_cap, gp->key_len);
	if (!ret)
		check_taken(w, s, "GET", bm, buf, gp->key_len, g.key_cap,
			    !(g.flags & KWQ_GET_UNLEASED));
}

/*
 * Done-and-get: the done part as KWQ_IOC_DONE's (most often of a key this
 * slot holds), the get part as KWQ_IOC_GET's. done_result says whether
 * the done was carried out (KWQ_DONE_NOT_RUN if not), whatever the call
 * returned; a key handed out is checked as a get's.
 */
static void op_done_get(struct worker *w, struct slot *s)
{
	struct rng *r = &w->r;
	static const uint64_t caps[] = { 0, 1, 7, KWQ_KEY_MAX - 1, KWQ_KEY_MAX + 1, ~0U };
	struct kwq_ioc_done_get d, *dp;
	enum pmode m = pick_pmode(r, 8);
	enum pmode bm = pick_pmode(r, 10);
	char *buf = w->rw + 2 * pagesz;
	bool readable;
	char what[128];
	int idx, ret;

	memset(&d, 0, sizeof(d));
	readable = pick_key(w, &d.done_ptr, &d.done_len, &idx, 12, -1);
	if (pick_held_key(w, s, 70, &d.done_ptr, &d.done_len, &idx))
		readable = true;
	d.done_result = (uint32_t)rnd(r);	/* out only */
	d.key_ptr = place_key_buf(w, bm, &buf);
	d.key_cap = chance(r, 80) ? KWQ_KEY_MAX : (uint32_t)PICK(r, caps);
	d.key_len = (uint32_t)rnd(r);	/* out only */
	d.deadline_ns = pick_deadline(r);
	d.flags = chance(r, 15) ? KWQ_GET_UNLEASED : 0;
	d.flags = mutate32(r, d.flags, 4);
	d.pad = mutate32(r, 0, 3);
	d.done_ticket = chance(r, 5) ? rnd(r) : 0;
	d.ticket = rnd(r);	/* out only */
	snprintf(what, sizeof(what), "done key %d len %u, buf %s cap %u deadline %#llx flags %#x",
		 idx, d.done_len, pmode_name[bm], d.key_cap, (unsigned long long)d.deadline_ns,
		 d.flags);
	if (readable && !key_intact(w, d.done_ptr, d.done_len, idx, "DONE_GET"))
		return;
	dp = place_arg(w, &d, sizeof(d), m);
	ret = fz_ioctl(w, s->fd, C_DONE_GET, KWQ_IOC_DONE_GET, dp, what);
	if (m != P_OK && m != P_MISALIGNED)
		return;
	/* Refused before the call read its struct: nothing written. */
	if (ret == -EBADFD || ret == -EBADF) {
		if (dp->done_result != d.done_result)
			failf(w, F_ERRNO, "DONE_GET refused with %d wrote done_result %u", ret,
			      dp->done_result);
		return;
	}
	if (dp->done_result != KWQ_DONE_NOT_RUN) {
		if (dp->done_result > KWQ_DONE_REQUEUED)
			failf(w, F_ERRNO, "DONE_GET done_result %u out of range", dp->done_result);
		if (pool_find((void *)(uintptr_t)d.done_ptr, d.done_len) == idx)
			slot_hold(s, idx, false);
	} else if (!ret) {
		failf(w, F_ERRNO, "DONE_GET succeeded with done_result KWQ_DONE_NOT_RUN");
	}
	if (!ret)
		check_taken(w, s, "DONE_GET", bm, buf, dp->key_len, d.key_cap,
			    !(d.flags & KWQ_GET_UNLEASED));
}

static uint32_t pick_count(struct rng *r)
{
	static const uint64_t v[] = { 0, 1, 1, 2, 3, 8, 64, KWQ_BATCH_MAX, KWQ_BATCH_MAX + 1,
				      ~0U, 0x80000000ULL };

	return chance(r, 60) ? 1 + below(r, 16) : (uint32_t)PICK(r, v);
}

static void op_batch(struct worker *w, struct slot *s, enum cmd_id id)
{
	struct rng *r = &w->r;
	struct kwq_ioc_batch b, *bp;
	struct kwq_batch_entry *e = w->ents;
	enum pmode m = pick_pmode(r, 8);
	enum pmode em = pick_pmode(r, 10);
	uint32_t i, n, room = KWQ_BATCH_MAX + 1;
	unsigned int bad_pct = chance(r, 30) ? 10 : 0;
	static __thread bool readable[KWQ_BATCH_MAX + 2];
	static __thread int idxs[KWQ_BATCH_MAX + 2];
	char what[96];
	int idx;

	memset(&b, 0, sizeof(b));
	b.count = pick_count(r);
	n = b.count < room ? b.count : room;
	for (i = 0; i < n; i++) {
		if (id == C_GET_BATCH) {
			e[i].key_ptr = (uintptr_t)(w->bufs + (size_t)i * KEYSLOT);
			memset(w->bufs + (size_t)i * KEYSLOT, 0xa5, 16);
			e[i].key_len = KWQ_KEY_MAX;
			if (bad_pct && chance(r, bad_pct)) {
				if (chance(r, 50))
					e[i].key_len = below(r, 8);
				else
					e[i].key_ptr = (uintptr_t)bad_ptr(w, P_NONE);
			}
		} else {
			readable[i] = pick_key(w, &e[i].key_ptr, &e[i].key_len, &idx, bad_pct,
					       (int)i);
			idxs[i] = idx;
			if (id == C_DONE_BATCH &&
			    pick_held_key(w, s, 60, &e[i].key_ptr, &e[i].key_len, &idxs[i]))
				readable[i] = true;
		}
		e[i].result = (uint32_t)rnd(r);
	}
	/* Where the array lives: ours, read-only, running into a guard, or bad. */
	switch (em) {
	case P_OK:
		b.entries_ptr = (uintptr_t)e;
		break;
	case P_MISALIGNED: {
		/*
		 * Shifted by a few bytes into the RW pages (64 entries), zeros
		 * after them up to the guard: no stale entry may point a get
		 * at our own memory.
		 */
		char *p = w->rw + pagesz + 3;
		size_t sz = (n < 64 ? n : 64) * sizeof(*e);

		memcpy(p, e, sz);
		memset(p + sz, 0, (size_t)(w->guard - p) - sz);
		b.entries_ptr = (uintptr_t)p;
		break;
	}
	case P_RO:
		ro_write(w, RO_ENTRIES, e, (n < 96 ? n : 96) * sizeof(*e));
		b.entries_ptr = (uintptr_t)(w->ro + RO_ENTRIES);
		break;
	case P_STRADDLE: {
		uint32_t k = n < 32 ? n : 32;
		size_t off = k * sizeof(*e) + below(r, sizeof(*e));

		memcpy(w->guard - off, e, k * sizeof(*e));
		b.entries_ptr = (uintptr_t)(w->guard - off);
		break;
	}
	default:
		b.entries_ptr = (uintptr_t)bad_ptr(w, em);
		break;
	}
	b.completed = (uint32_t)rnd(r);
	if (id == C_GET_BATCH) {
		b.deadline_ns = pick_deadline(r);
		b.flags = chance(r, 15) ? KWQ_GET_UNLEASED : 0;
	} else if (id == C_ADD_BATCH) {
		b.flags = chance(r, 30) ? below(r, 4) : 0;
	}
	if (chance(r, 3))
		b.deadline_ns = rnd(r);
	b.flags = mutate32(r, b.flags, 4);
	b.pad = mutate32(r, 0, 3);
	mutate_reserved(r, b.reserved, ARRAY_SIZE(b.reserved), 3);
	snprintf(what, sizeof(what), "count %u entries %s flags %#x deadline %#llx", b.count,
		 pmode_name[em], b.flags, (unsigned long long)b.deadline_ns);
	bp = place_arg(w, &b, sizeof(b), m);
	for (i = 0; id != C_GET_BATCH && i < n && i < 64; i++)
		if (readable[i] && !key_intact(w, e[i].key_ptr, e[i].key_len, idxs[i],
					       cmds[id].name))
			return;
	if (fz_ioctl(w, s->fd, id, cmds[id].cmd, bp, what) || (m != P_OK && m != P_MISALIGNED))
		return;
	for (i = 0; id != C_GET_BATCH && em == P_OK && i < bp->completed && i < n; i++)
		check_added(w, readable[i], e[i].key_ptr, e[i].key_len, cmds[id].name);
	if (bp->completed < 1 || bp->completed > b.count) {
		failf(w, F_ERRNO, "%s succeeded with completed %u of %u", cmds[id].name,
		      bp->completed, b.count);
		return;
	}
	if (em != P_OK)
		return;
	for (i = 0; i < bp->completed; i++) {
		if (id == C_GET_BATCH) {
			if (e[i].key_len == 0 || e[i].key_len > KWQ_KEY_MAX)
				failf(w, F_KEY, "GET_BATCH entry %u key_len %u", i, e[i].key_len);
			else
				got_key(w, s, (void *)(uintptr_t)e[i].key_ptr, e[i].key_len,
					!(b.flags & KWQ_GET_UNLEASED), "GET_BATCH");
		} else if (e[i].result > (id == C_ADD_BATCH ? KWQ_ADD_ABSORBED :
					  KWQ_DONE_REQUEUED)) {
			failf(w, F_ERRNO, "%s entry %u result %u out of range", cmds[id].name, i,
			      e[i].result);
		} else if (id == C_DONE_BATCH) {
			slot_hold(s, pool_find((void *)(uintptr_t)e[i].key_ptr, e[i].key_len),
				  false);
		}
	}
}

static void op_drain(struct worker *w, struct slot *s)
{
	struct rng *r = &w->r;
	struct kwq_ioc_drain d;
	enum pmode m = pick_pmode(r, 15);
	char what[64];

	memset(&d, 0, sizeof(d));
	d.deadline_ns = chance(r, 50) ? KWQ_DEADLINE_NOWAIT : pick_deadline(r);
	d.flags = chance(r, 50) ? KWQ_DRAIN_FLUSH_WAITING : 0;
	d.flags = mutate32(r, d.flags, 5);
	d.pad = mutate32(r, 0, 5);
	snprintf(what, sizeof(what), "deadline %#llx flags %#x",
		 (unsigned long long)d.deadline_ns, d.flags);
	fz_ioctl(w, s->fd, C_DRAIN, KWQ_IOC_DRAIN, place_arg(w, &d, sizeof(d), m), what);
}

static void op_stats(struct worker *w, struct slot *s)
{
	struct rng *r = &w->r;
	/* The command's size is the struct's (in-field size is ignored). */
	static const uint64_t sizes[] = { 0, 1, 4, 7, 8, 9, 16, 100, sizeof(struct kwq_stats) };
	struct kwq_stats st;
	enum pmode m = pick_pmode(r, 20);
	uint32_t size = (uint32_t)PICK(r, sizes);
	char what[48];

	memset(&st, 0, sizeof(st));
	st.size = (uint32_t)rnd(r);
	snprintf(what, sizeof(what), "size %u", size);
	fz_ioctl(w, s->fd, C_STATS, KWQ_IOC_STATS_SIZE(size), place_arg(w, &st, sizeof(st), m),
		 what);
}

/*
 * KWQ_IOC_SCOPE_LIMITS, reading only: a limit set here would outlive the
 * run and refuse the creates of the tests after it.
 */
static void op_scope_limits(struct worker *w, int fd)
{
	struct rng *r = &w->r;
	struct kwq_ioc_scope_limits l;
	enum pmode m = pick_pmode(r, 20);

	memset(&l, 0, sizeof(l));
	l.flags = mutate32(r, 0, 5) & ~KWQ_SCOPE_LIMITS_SET;
	l.queues_max = (uint32_t)rnd(r);	/* in only with the flag: ignored */
	l.queues = mutate32(r, 0, 3);
	l.ceiling = mutate32(r, 0, 3);
	mutate_reserved(r, l.reserved, ARRAY_SIZE(l.reserved), 3);
	fz_ioctl(w, fd, C_SCOPE_LIMITS, KWQ_IOC_SCOPE_LIMITS, place_arg(w, &l, sizeof(l), m),
		 "read");
}

/* KWQ_IOC_LIST_ALL, as op_list: the entries land in the RW pages or astray. */
static void op_list_all(struct worker *w, int fd)
{
	struct rng *r = &w->r;
	static const uint64_t caps[] = { 0, 1, 2, 8, 32, 257, ~0U };
	struct kwq_ioc_list_all l;
	enum pmode m = pick_pmode(r, 20);
	enum pmode nm = pick_pmode(r, 25);

	memset(&l, 0, sizeof(l));
	l.capacity = (uint32_t)PICK(r, caps);
	l.info_ptr = out_array(w, nm, l.capacity, sizeof(struct kwq_queue_info), 32);
	l.count = (uint32_t)rnd(r);	/* out only */
	l.flags = mutate32(r, 0, 5);
	l.pad = mutate32(r, 0, 3);
	mutate_reserved(r, l.reserved, ARRAY_SIZE(l.reserved), 3);
	fz_ioctl(w, fd, C_LIST_ALL, KWQ_IOC_LIST_ALL, place_arg(w, &l, sizeof(l), m),
		 pmode_name[nm]);
}

/*
 * KWQ_IOC_DESTROY_IN of the fuzzer's own names (or bad ones), in its own
 * IPC namespace or the kernel scope, which hold none of its queues.
 */
static void op_destroy_in(struct worker *w, int fd)
{
	struct rng *r = &w->r;
	struct kwq_ioc_destroy_in d;
	enum pmode m = pick_pmode(r, 20);
	const char *what;

	memset(&d, 0, sizeof(d));
	what = pick_name(r, d.name);
	if (chance(r, 20)) {
		d.flags = KWQ_SCOPE_KERNEL;
	} else {
		d.ipc_inum = own_ipc_inum;
		if (chance(r, 10))
			d.ipc_inum = (uint32_t)rnd(r);
	}
	d.flags = mutate32(r, d.flags, 5);
	d.pad = mutate32(r, 0, 3);
	d.pad2 = mutate32(r, 0, 3);
	mutate_reserved(r, d.reserved, ARRAY_SIZE(d.reserved), 3);
	fz_ioctl(w, fd, C_DESTROY_IN, KWQ_IOC_DESTROY_IN, place_arg(w, &d, sizeof(d), m), what);
}

/* KWQ_IOC_CLOCK_STEP: most queues here have no manual clock (-EOPNOTSUPP). */
static void op_clock_step(struct worker *w, struct slot *s)
{
	struct rng *r = &w->r;
	static const uint64_t steps[] = { 0, 1, 1000, 1000000, 1000000000, ~0ULL,
					  INT64_MAX, 1ULL << 63, KWQ_CLOCK_MAX_NS };
	struct kwq_ioc_clock_step c;
	enum pmode m = pick_pmode(r, 20);

	memset(&c, 0, sizeof(c));
	c.step_ns = chance(r, 80) ? (int64_t)below(r, 20000000) : (int64_t)PICK(r, steps);
	c.now_ns = mutate32(r, 0, 3);
	c.flags = mutate32(r, 0, 5);
	c.pending = mutate32(r, 0, 3);
	mutate_reserved(r, c.reserved, ARRAY_SIZE(c.reserved), 3);
	fz_ioctl(w, s->fd, C_CLOCK_STEP, KWQ_IOC_CLOCK_STEP, place_arg(w, &c, sizeof(c), m), "");
}

/* An ioctl number the device does not know: must be -ENOTTY, always. */
static void op_unknown(struct worker *w, int fd)
{
	struct rng *r = &w->r;
	unsigned long cmd;
	unsigned int magic, nr, dir, size, i;
	char *arg = w->rw;

	for (;;) {
		cmd = 0;
		switch (below(r, 4)) {
		case 0:	/* a real command with the wrong direction or size */
			cmd = cmds[below(r, C_UNKNOWN)].cmd;
			/* Stats takes any size (KWQ_IOC_STATS_SIZE()): change its direction. */
			if (chance(r, 50) || cmd == KWQ_IOC_STATS)
				cmd ^= (unsigned long)(1 + below(r, 3)) << _IOC_DIRSHIFT;
			else
				cmd ^= (unsigned long)(1 + below(r, 0x3fff)) << _IOC_SIZESHIFT;
			break;
		case 1:	/* our magic, unused numbers */
			nr = below(r, 256);
			size = below(r, 512);
			dir = below(r, 4);
			cmd = _IOC(dir, KWQ_IOC_MAGIC, nr, size);
			break;
		case 2:	/* another driver's magic */
			magic = below(r, 256);
			cmd = _IOC(below(r, 4), magic, below(r, 256), below(r, 1024));
			break;
		default:
			cmd = (uint32_t)rnd(r);
			break;
		}
		cmd &= 0xffffffffUL;
		magic = _IOC_TYPE(cmd);
		/* VFS handles these before the driver (FIONBIO, FIOCLEX, FICLONE...). */
		if (magic == 'T' || magic == 'f' || magic == 'X' || magic == 0x94 || magic == 0)
			continue;
		for (i = 0; i < C_UNKNOWN; i++)
			if (cmds[i].cmd == cmd)
				break;
		/* KWQ_IOC_STATS_SIZE(n) is stats for any n: not unknown either. */
		if ((cmd & ~(unsigned long)(_IOC_SIZEMASK << _IOC_SIZESHIFT)) ==
		    (KWQ_IOC_STATS_SIZE(0) & ~(unsigned long)(_IOC_SIZEMASK << _IOC_SIZESHIFT)))
			continue;
		if (i == C_UNKNOWN)
			break;
	}
	memset(arg, 0, 512);
	fz_ioctl(w, fd, C_UNKNOWN, cmd, chance(r, 50) ? (void *)arg : bad_ptr(w, P_NONE), "random");
}

static void op_poll(struct worker *w, struct slot *s)
{
	struct pollfd p = { .fd = s->fd, .events = POLLIN };
	int ret;

	wlog(w, "fd %d poll", s->fd);
	ret = poll(&p, 1, 0);
	if (ret < 0 && errno != EINTR)
		failf(w, F_ERRNO, "poll: %s", strerror(errno));
	if (ret > 0 && (p.revents & ~(POLLIN | POLLRDNORM | POLLERR)))
		failf(w, F_ERRNO, "poll revents %#x", p.revents);
}

static void one_op(struct worker *w)
{
	struct rng *r = &w->r;
	struct slot *s = &slots[below(r, NSLOTS)];
	uint32_t dice = below(r, 1000);

	if (dice < 20) {
		pthread_rwlock_wrlock(&s->rw);
		slot_reopen(w, s);
		pthread_rwlock_unlock(&s->rw);
		return;
	}
	pthread_rwlock_rdlock(&s->rw);
	if (s->fd < 0) {
		pthread_rwlock_unlock(&s->rw);
		return;
	}
	if (dice < 22)
		op_create(w, s);
	else if (dice < 32)
		op_open(w, s);
	else if (dice < 35)
		fz_ioctl(w, s->fd, C_DESTROY, KWQ_IOC_DESTROY, chance(r, 50) ? NULL : w->rw, "");
	else if (dice < 36)
		fz_ioctl(w, s->fd, C_SHUTDOWN, KWQ_IOC_SHUTDOWN, NULL, "");
	else if (dice < 40)
		op_drain(w, s);
	else if (dice < 50)
		op_version(w, s->fd);
	else if (dice < 60)
		op_list(w, s->fd);
	else if (dice < 92)
		op_unknown(w, s->fd);
	else if (dice < 94)
		op_scope_limits(w, s->fd);
	else if (dice < 96)
		op_list_all(w, s->fd);
	else if (dice < 97)
		op_destroy_in(w, s->fd);
	else if (dice < 100)
		op_clock_step(w, s);
	else if (dice < 130)
		op_stats(w, s);
	else if (dice < 180)
		slot_check(w, s);
	else if (dice < 190)
		op_poll(w, s);
	else if (dice < 340)
		op_key(w, s, C_ADD);
	else if (dice < 395)
		op_add_after(w, s);
	else if (dice < 420)
		op_add_ex(w, s);
	else if (dice < 580)
		op_get(w, s);
	else if (dice < 660)
		op_key(w, s, C_DONE);
	else if (dice < 700)
		op_done_get(w, s);
	else if (dice < 740)
		op_batch(w, s, C_ADD_BATCH);
	else if (dice < 780)
		op_batch(w, s, C_GET_BATCH);
	else if (dice < 820)
		op_batch(w, s, C_DONE_BATCH);
	else
		op_key(w, s, key_cmds[2 + below(r, ARRAY_SIZE(key_cmds) - 2)]);
	pthread_rwlock_unlock(&s->rw);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;

	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		one_op(w);
		w->ops++;
	}
	w->finished = 1;
	return NULL;
}

/* ---- children ----------------------------------------------------------- */

static int raw_open_queue(const char *name, int oflags)
{
	struct kwq_ioc_open o;
	int fd = dev_open(oflags);

	if (fd < 0)
		return -errno;
	/* No stdio: forked children of a threaded process call this too. */
	memset(&o, 0, sizeof(o));
	memcpy(o.name, name, strnlen(name, KWQ_NAME_MAX - 1));
	if (ioctl(fd, KWQ_IOC_OPEN, &o)) {
		int err = errno;

		close(fd);
		return -err;
	}
	return fd;
}

static int raw_stats(int fd, struct kwq_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->size = sizeof(*st);
	return ioctl(fd, KWQ_IOC_STATS, st) ? -errno : 0;
}

/*
 * A consumer process takes leased keys and is SIGKILLed holding them: the
 * queue's lease_requeues must grow by at least as many keys (other
 * threads may requeue more meanwhile, never fewer).
 */
static void lease_child(struct rng *r)
{
	const char *name = qnames[below(r, NQNAMES)];
	int mon = raw_open_queue(name, O_RDWR), p[2], status, held = -1;
	struct kwq_stats before, after;
	struct pollfd pf;
	uint64_t end;
	pid_t pid;

	if (mon < 0)
		return;
	if (raw_stats(mon, &before) || pipe(p)) {
		close(mon);
		return;
	}
	pid = fork();
	if (pid == 0) {
		struct kwq_ioc_key k;
		struct kwq_ioc_get g;
		char buf[KWQ_KEY_MAX];
		int fd = raw_open_queue(name, O_RDWR), n = 0, i;

		close(p[0]);
		if (fd >= 0) {
			for (i = 0; i < 3; i++) {
				int idx = (int)below(r, NKEYS);

				memset(&k, 0, sizeof(k));
				k.key_ptr = (uintptr_t)pool[idx].b;
				k.key_len = pool[idx].len;
				ioctl(fd, KWQ_IOC_ADD, &k);
			}
			for (i = 0; i < 4; i++) {
				memset(&g, 0, sizeof(g));
				g.key_ptr = (uintptr_t)buf;
				g.key_cap = sizeof(buf);
				if (ioctl(fd, KWQ_IOC_GET, &g) == 0)
					n++;
			}
		}
		if (write(p[1], &n, sizeof(n)) != sizeof(n))
			_exit(1);
		for (;;)
			pause();
	}
	close(p[1]);
	if (pid < 0) {
		close(p[0]);
		close(mon);
		return;
	}
	pf.fd = p[0];
	pf.events = POLLIN;
	/* 30 s by the clock, signals or not: a stalled guest is slow to fork. */
	for (end = now_ns() + 30000000000ULL; now_ns() < end;) {
		int ret = poll(&pf, 1, 10);

		if (ret == 1) {
			if (read(p[0], &held, sizeof(held)) != sizeof(held))
				held = -1;
			break;
		}
	}
	kill(pid, SIGKILL);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	close(p[0]);
	if (held < 0) {
		failf(NULL, F_LEASE, "lease child on %s did not report", name);
	} else if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL) {
		failf(NULL, F_LEASE, "lease child on %s was not killed (status %#x)", name, status);
	} else if (!raw_stats(mon, &after) && !(after.state & KWQ_STATE_DESTROYED)) {
		/*
		 * Not destroyed: the name meant this queue all along, so the
		 * child attached to it too.
		 */
		n_lease_children++;
		n_lease_keys += (unsigned int)held;
		/* A processing timeout may have put some back before the kill. */
		uint64_t back = after.lease_requeues - before.lease_requeues +
				after.processing_expiries - before.processing_expiries;

		if (back < (uint64_t)held)
			failf(NULL, F_LEASE, "child held %d keys of %s; lease_requeues and "
			      "processing_expiries grew by only %llu", held, name,
			      (unsigned long long)back);
	}
	close(mon);
}

/*
 * Two queues of root's that no worker touches, so their modes stay as made:
 * an unprivileged opener must be refused the first and let into the second.
 */
#define PRIV_CLOSED	"fz-priv-0600"
#define PRIV_OPEN	"fz-priv-0666"

/* An unprivileged process: may open only what the mode allows, never destroy. */
static void priv_child(void)
{
	int status, i, fd;
	pid_t pid = fork();

	if (pid == 0) {
		if (setgid(65534) || setuid(65534))
			_exit(2);
		fd = raw_open_queue(PRIV_CLOSED, O_RDWR);
		if (fd >= 0)
			_exit(3);
		if (fd != -EACCES)
			_exit(4);
		fd = raw_open_queue(PRIV_OPEN, O_RDWR);
		if (fd < 0)
			_exit(5);
		if (ioctl(fd, KWQ_IOC_DESTROY, NULL) == 0 || errno != EPERM)
			_exit(6);
		close(fd);
		for (i = 0; i < NQNAMES; i++) {
			int fd = raw_open_queue(qnames[i], O_RDWR);

			if (fd == -ENOENT || fd == -EACCES)
				continue;
			if (fd < 0)
				_exit(10 + i);
			if (ioctl(fd, KWQ_IOC_DESTROY, NULL) == 0 || errno != EPERM)
				_exit(20 + i);
			close(fd);
		}
		_exit(0);
	}
	if (pid < 0)
		return;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	n_priv_children++;
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		failf(NULL, F_PRIV, "unprivileged child: status %#x (3: opened " PRIV_CLOSED
		      ", 4: its open not EACCES, 5: open of " PRIV_OPEN " failed, 6: its "
		      "destroy not EPERM, 10+i: open of fz-i failed oddly, 20+i: destroy of "
		      "fz-i not EPERM)", status);
}

/* ---- cleanup ------------------------------------------------------------ */

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
	return n - 1;	/* the directory's own descriptor */
}

/*
 * Drain one queue with a fresh consumer. Returns keys drained or -1.
 * @quiet: leftovers of another run; their keys are not ours to check.
 */
static long drain_queue(const char *name, bool quiet)
{
	struct kwq_ioc_drain d;
	struct kwq_stats st;
	char buf[KWQ_KEY_MAX];
	size_t len;
	long n = 0;
	int fd, i, ret, loops;

	fd = raw_open_queue(name, O_RDWR);
	if (fd == -ENOENT)
		return 0;
	if (quiet) {
		/* Destroying drops whatever another run left behind. */
		ioctl(fd, KWQ_IOC_DESTROY, NULL);
		close(fd);
		return 0;
	}
	if (fd < 0) {
		failf(NULL, F_CLEANUP, "open %s for cleanup: %s", name, strerror(-fd));
		return -1;
	}
	/*
	 * Unleased keys stay processing after their fd closed: done them.
	 * A key still leased would give -ENOENT here and show as processing
	 * in the stats below.
	 */
	for (i = 0; i < NKEYS; i++)
		kwq_done(fd, pool[i].b, pool[i].len);
	memset(&d, 0, sizeof(d));
	d.flags = KWQ_DRAIN_FLUSH_WAITING;
	ret = ioctl(fd, KWQ_IOC_DRAIN, &d) ? -errno : 0;
	if (ret && ret != -ETIMEDOUT && ret != -EIDRM)
		failf(NULL, F_CLEANUP, "%s: flushing drain: %s", name, strerror(-ret));
	for (loops = 0; loops < 100000; loops++) {
		ret = kwq_get(fd, buf, sizeof(buf), &len, 0);
		if (ret)
			break;
		if (pool_find(buf, (uint32_t)len) < 0)
			failf(NULL, F_KEY, "%s: cleanup got a key that was never added", name);
		ret = kwq_done(fd, buf, len);
		/*
		 * A queue with a processing timeout of a few nanoseconds may
		 * put the key back before the done (-ENOENT): a later get
		 * hands it out again.
		 */
		if (ret < 0 && ret != -ENOENT)
			failf(NULL, F_CLEANUP, "%s: done after get: %s", name, strerror(-ret));
		n += ret >= 0;
	}
	if (ret != -ESHUTDOWN && ret != -EAGAIN && ret != -EIDRM)
		failf(NULL, F_CLEANUP, "%s: get ended with %s", name, strerror(-ret));
	for (i = 0; i < NKEYS; i++)
		kwq_forget(fd, pool[i].b, pool[i].len);
	if (raw_stats(fd, &st)) {
		failf(NULL, F_CLEANUP, "%s: stats: %s", name, strerror(errno));
	} else {
		stats_consistent(NULL, &st, name);
		if (st.items || st.queued || st.processing || st.waiting || st.backoff_keys ||
		    st.dirty_processing)
			failf(NULL, F_CLEANUP, "%s: after the drain items %llu queued %llu "
			      "processing %llu dirty %llu waiting %llu backoff %llu", name,
			      (unsigned long long)st.items, (unsigned long long)st.queued,
			      (unsigned long long)st.processing,
			      (unsigned long long)st.dirty_processing,
			      (unsigned long long)st.waiting, (unsigned long long)st.backoff_keys);
	}
	if (ioctl(fd, KWQ_IOC_DESTROY, NULL))
		failf(NULL, F_CLEANUP, "%s: destroy: %s", name, strerror(errno));
	close(fd);
	return n;
}

static int our_queues(char (*names)[KWQ_NAME_MAX], int cap)
{
	int n = kwq_list(names, (unsigned int)cap), i, k = 0;

	if (n < 0)
		return n;
	if (n > cap)
		n = cap;
	for (i = 0; i < n; i++)
		if (!strncmp(names[i], "fz-", 3))
			memmove(names[k++], names[i], KWQ_NAME_MAX);
	return k;
}

/* ---- out-parameters on a read-only page --------------------------------- */

/*
 * Deterministic, before the random part. Each call's argument, or a batch's
 * entry array, is placed so that it runs from a writable page into a
 * read-only one, split at every 4 bytes (every field is 4-byte aligned):
 * the kernel reads it all and then fails to write a result back. The README says that errors change
 * nothing and that a key whose copy to user space fails is put back; the
 * ABI says a batch's completed counts the entries carried out. So a call
 * that fails must leave the queue as it was, and one that succeeds must
 * have done exactly what it reports.
 */
#define EQ "fz-efault"

static char *ef_ro;	/* read-only page, a writable one before it */
static unsigned long ef_cases, ef_lost, ef_effect;

static void *ef_place(const void *obj, size_t size, size_t k)
{
	char *p = ef_ro - k;	/* k bytes writable, the rest read-only */

	mprotect(ef_ro, pagesz, PROT_READ | PROT_WRITE);
	memcpy(p, obj, size);
	mprotect(ef_ro, pagesz, PROT_READ);
	return p;
}

struct ef_q {
	int p, c;
	struct kwq_stats before;
};

/* A fresh queue with e/1, e/2, e/3 queued, e/4 processing on c. */
static int ef_begin(struct ef_q *q)
{
	char buf[16];
	size_t len;

	q->p = kwq_create(EQ, 0600, 0);
	if (q->p < 0)
		return q->p;
	q->c = kwq_open(EQ, O_RDWR);
	kwq_add(q->p, "e/4", 3);
	kwq_get(q->c, buf, sizeof(buf), &len, 0);
	kwq_add(q->p, "e/1", 3);
	kwq_add(q->p, "e/2", 3);
	kwq_add(q->p, "e/3", 3);
	kwq_add_after(q->p, "e/5", 3, 3600000000000LL, 0);
	raw_stats(q->p, &q->before);
	return 0;
}

static void ef_end(struct ef_q *q)
{
	close(q->c);
	kwq_destroy(q->p);
	close(q->p);
}

/* Counts a failure; prints the first of each kind of call. */
static bool ef_first(const char *what)
{
	static const char *seen[32];
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(seen) && seen[i]; i++)
		if (!strcmp(seen[i], what))
			return false;
	if (i < ARRAY_SIZE(seen))
		seen[i] = what;
	return true;
}

#define EF_REPORT(kind, what, fmt, ...) do {				\
		(kind)++;						\
		if (ef_first(what))					\
			printf("# FAIL: %s, " fmt "\n", what, __VA_ARGS__); \
	} while (0)

/* Gets: what the caller was told it got must be what is processing. */
static void ef_check_taken(struct ef_q *q, int ret, uint32_t told, const char *what, size_t k)
{
	struct kwq_stats st;

	raw_stats(q->p, &st);
	ef_cases++;
	if (ret && ret != -EFAULT)
		EF_REPORT(ef_lost, what, "%zu bytes writable: %s", k, strerror(-ret));
	else if (st.processing != q->before.processing + (ret ? 0 : told))
		EF_REPORT(ef_lost, what, "%zu bytes writable: returned %s, completed %u, but "
			  "processing went %llu -> %llu: a key was handed out and not reported",
			  k, ret ? strerror(-ret) : "0", ret ? 0 : told,
			  (unsigned long long)q->before.processing,
			  (unsigned long long)st.processing);
}

/* Everything else: a failure changes nothing, a success does what it says. */
static void ef_check_changed(struct ef_q *q, int ret, uint64_t told, const char *what, size_t k)
{
	struct kwq_stats st;
	uint64_t did;

	raw_stats(q->p, &st);
	ef_cases++;
	/* Adds, dones and new waiting entries: what the calls here do. */
	did = (st.adds - q->before.adds) + (st.dones - q->before.dones) +
	      (st.waiting > q->before.waiting ? st.waiting - q->before.waiting : 0);
	if (ret && ret != -EFAULT)
		EF_REPORT(ef_effect, what, "%zu bytes writable: %s", k, strerror(-ret));
	else if (did != (ret ? 0 : told))
		EF_REPORT(ef_effect, what, "%zu bytes writable: returned %s, reported %llu done, "
			  "but %llu took effect (adds %llu -> %llu, dones %llu -> %llu, waiting "
			  "%llu -> %llu)", k, ret ? strerror(-ret) : "0",
			  (unsigned long long)(ret ? 0 : told),
			  (unsigned long long)did, (unsigned long long)q->before.adds,
			  (unsigned long long)st.adds, (unsigned long long)q->before.dones,
			  (unsigned long long)st.dones, (unsigned long long)q->before.waiting,
			  (unsigned long long)st.waiting);
}

static int ef_ioctl(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) ? -errno : 0;
}

static void efault_phase(void)
{
	static char buf[8][KWQ_KEY_MAX];
	struct kwq_batch_entry e[3], *ep;
	struct kwq_ioc_batch b, *bp;
	struct kwq_ioc_key key, *kp;
	struct kwq_ioc_get g, *gp;
	struct kwq_ioc_add_after a, *ap;
	struct ef_q q;
	char *m;
	size_t k;
	int ret, i, batch;

	m = mmap(NULL, 2 * pagesz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return;
	ef_ro = m + pagesz;
	mprotect(ef_ro, pagesz, PROT_READ);

	/* get: key_len (bytes 12..15) is written back. */
	for (k = 0; k < sizeof(g); k += 4) {
		if (ef_begin(&q))
			return;
		memset(&g, 0, sizeof(g));
		g.key_ptr = (uintptr_t)buf[0];
		g.key_cap = KWQ_KEY_MAX;
		gp = ef_place(&g, sizeof(g), k);
		ret = ef_ioctl(q.c, KWQ_IOC_GET, gp);
		ef_check_taken(&q, ret, 1, "GET, struct kwq_ioc_get", k);
		ef_end(&q);
	}
	/* get into a key buffer that ends in the read-only page */
	for (k = 0; k < 3; k++) {
		if (ef_begin(&q))
			return;
		memset(&g, 0, sizeof(g));
		g.key_ptr = (uintptr_t)(ef_ro - k);
		g.key_cap = KWQ_KEY_MAX;
		ret = ef_ioctl(q.c, KWQ_IOC_GET, &g);
		ef_check_taken(&q, ret, 1, "GET, key buffer", k);
		ef_end(&q);
	}
	/* get batch: entries (key_len, result written back), then the struct (completed) */
	for (i = 0; i < 2; i++) {
		for (k = 0; k < sizeof(e[0]); k += 4) {
			if (ef_begin(&q))
				return;
			for (batch = 0; batch < 3; batch++) {
				e[batch].key_ptr = (uintptr_t)buf[batch];
				e[batch].key_len = KWQ_KEY_MAX;
				e[batch].result = 0;
			}
			ep = ef_place(e, sizeof(e), i * sizeof(e[0]) + k);
			memset(&b, 0, sizeof(b));
			b.entries_ptr = (uintptr_t)ep;
			b.count = 3;
			ret = ef_ioctl(q.c, KWQ_IOC_GET_BATCH, &b);
			ef_check_taken(&q, ret, b.completed, i ? "GET_BATCH, entry 1 of 3" :
				       "GET_BATCH, entry 0 of 3", k);
			ef_end(&q);
		}
	}
	for (k = 0; k < sizeof(b); k += 4) {
		if (ef_begin(&q))
			return;
		for (batch = 0; batch < 3; batch++) {
			e[batch].key_ptr = (uintptr_t)buf[batch];
			e[batch].key_len = KWQ_KEY_MAX;
		}
		memset(&b, 0, sizeof(b));
		b.entries_ptr = (uintptr_t)e;
		b.count = 3;
		bp = ef_place(&b, sizeof(b), k);
		ret = ef_ioctl(q.c, KWQ_IOC_GET_BATCH, bp);
		ef_check_taken(&q, ret, bp->completed, "GET_BATCH, struct kwq_ioc_batch", k);
		ef_end(&q);
	}

	/* add, done: result (bytes 16..19) is written back */
	for (k = 0; k < sizeof(key); k += 4) {
		if (ef_begin(&q))
			return;
		memset(&key, 0, sizeof(key));
		key.key_ptr = (uintptr_t)"e/9";
		key.key_len = 3;
		kp = ef_place(&key, sizeof(key), k);
		ret = ef_ioctl(q.p, KWQ_IOC_ADD, kp);
		ef_check_changed(&q, ret, 1, "ADD of a new key, struct kwq_ioc_key", k);
		ef_end(&q);

		if (ef_begin(&q))
			return;
		key.key_ptr = (uintptr_t)"e/4";
		kp = ef_place(&key, sizeof(key), k);
		ret = ef_ioctl(q.c, KWQ_IOC_DONE, kp);
		ef_check_changed(&q, ret, 1, "DONE, struct kwq_ioc_key", k);
		ef_end(&q);
	}
	for (k = 0; k < sizeof(a); k += 4) {
		if (ef_begin(&q))
			return;
		memset(&a, 0, sizeof(a));
		a.key_ptr = (uintptr_t)"e/9";
		a.key_len = 3;
		a.delay_ns = 3600000000000LL;
		ap = ef_place(&a, sizeof(a), k);
		ret = ef_ioctl(q.p, KWQ_IOC_ADD_AFTER, ap);
		ef_check_changed(&q, ret, 1, "ADD_AFTER of a new key, struct kwq_ioc_add_after", k);
		ef_end(&q);
	}
	/* add batch: entry results, then completed */
	for (i = 0; i < 2; i++) {
		for (k = 0; k < sizeof(e[0]); k += 4) {
			static const char *const nk[] = { "e/7", "e/8", "e/9" };

			if (ef_begin(&q))
				return;
			for (batch = 0; batch < 3; batch++) {
				e[batch].key_ptr = (uintptr_t)nk[batch];
				e[batch].key_len = 3;
			}
			ep = ef_place(e, sizeof(e), i * sizeof(e[0]) + k);
			memset(&b, 0, sizeof(b));
			b.entries_ptr = (uintptr_t)ep;
			b.count = 3;
			ret = ef_ioctl(q.p, KWQ_IOC_ADD_BATCH, &b);
			ef_check_changed(&q, ret, b.completed, i ? "ADD_BATCH, entry 1 of 3" :
					 "ADD_BATCH, entry 0 of 3", k);
			ef_end(&q);
		}
	}
	for (k = 0; k < sizeof(b); k += 4) {
		if (ef_begin(&q))
			return;
		e[0].key_ptr = (uintptr_t)"e/7";
		e[0].key_len = 3;
		memset(&b, 0, sizeof(b));
		b.entries_ptr = (uintptr_t)e;
		b.count = 1;
		bp = ef_place(&b, sizeof(b), k);
		ret = ef_ioctl(q.p, KWQ_IOC_ADD_BATCH, bp);
		ef_check_changed(&q, ret, bp->completed, "ADD_BATCH, struct kwq_ioc_batch", k);
		ef_end(&q);
	}
	munmap(m, 2 * pagesz);
}

/* ---- main --------------------------------------------------------------- */

static void on_signal(int sig)
{
	(void)sig;
}

static void usage(const char *argv0)
{
	fprintf(stderr, "usage: %s [--seed S] [--seconds T] [--threads N] [--trace]\n"
		"  --threads 0: no worker threads, the main thread does everything\n", argv0);
	exit(2);
}

int main(int argc, char **argv)
{
	static char names[256][KWQ_NAME_MAX];
	uint64_t seed, t_end, t0, t_rand, next_lease, next_priv;
	unsigned long long total = 0;
	double seconds = 20;
	struct sigaction sa;
	struct rng mr;
	int i, fds0, fds1, nq, stuck = 0;
	long drained = 0, dn;
	bool have_seed = false;

	setvbuf(stdout, NULL, _IOLBF, 0);
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--seed") && i + 1 < argc) {
			seed = strtoull(argv[++i], NULL, 0);
			have_seed = true;
		} else if (!strcmp(argv[i], "--seconds") && i + 1 < argc) {
			seconds = strtod(argv[++i], NULL);
		} else if (!strcmp(argv[i], "--threads") && i + 1 < argc) {
			nthreads = atoi(argv[++i]);
			if (nthreads < 0 || nthreads > MAX_THREADS)
				usage(argv[0]);
		} else if (!strcmp(argv[i], "--trace")) {
			trace = true;
		} else {
			usage(argv[0]);
		}
	}
	if (!have_seed) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		seed = ((uint64_t)ts.tv_sec * 1000000007ULL) ^ (uint64_t)ts.tv_nsec ^
		       ((uint64_t)getpid() << 32);
	}
	/*
	 * Threads block in futex(2). A 32-bit program's futex is the time32
	 * one, which every kernel make check boots has (the debug kernels set
	 * CONFIG_COMPAT_32BIT_TIME): without it glibc aborts on ENOSYS, and
	 * the compat paths would go untested under the checkers.
	 */
	if (nthreads && sizeof(long) == 4) {
		int word = 0;

		if (syscall(SYS_futex, &word, FUTEX_WAKE, 1, NULL, NULL, 0) < 0 &&
		    errno == ENOSYS) {
			printf("Bail out! no 32-bit-time futex(2) (CONFIG_COMPAT_32BIT_TIME off)\n");
			return 1;
		}
	}
	printf("# kwq_fuzz %zu-bit: seed %" PRIu64 ", %g s, %d threads "
	       "(reproduce with --seed %" PRIu64 ")\n", sizeof(void *) * 8, seed, seconds,
	       nthreads, seed);

	pagesz = sysconf(_SC_PAGESIZE);
	{
		struct stat ns;

		if (!stat("/proc/self/ns/ipc", &ns))
			own_ipc_inum = (uint32_t)ns.st_ino;
	}
	init_allowed();
	mr.s = seed;
	init_pool(&mr);
	reserved_none = mmap(NULL, 65536, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (reserved_none == MAP_FAILED) {
		printf("Bail out! mmap: %s\n", strerror(errno));
		return 1;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;	/* no SA_RESTART: blocking calls see EINTR */
	sigaction(SIGUSR1, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	fds0 = count_fds();
	{
		int fd = dev_open(O_RDWR);

		if (fd < 0) {
			printf("Bail out! cannot open %s: %s\n", KWQ_DEFAULT_DEV, strerror(errno));
			return 1;
		}
		close(fd);
	}
	/* Leftovers of an earlier run would skew the cleanup check. */
	nq = our_queues(names, 256);
	for (i = 0; i < nq; i++)
		drain_queue(names[i], true);
	for (i = 0; i < 2; i++) {
		const char *pn = i ? PRIV_OPEN : PRIV_CLOSED;
		int pfd = kwq_create(pn, i ? 0666 : 0600, 0);

		if (pfd < 0) {
			printf("Bail out! create %s: %s\n", pn, strerror(-pfd));
			return 1;
		}
		close(pfd);
	}
	/* --seconds counts from here: the deterministic pass is part of it. */
	t0 = now_ns();
	efault_phase();

	for (i = 0; i < NSLOTS; i++) {
		pthread_rwlockattr_t ra;

		pthread_rwlockattr_init(&ra);
		pthread_rwlockattr_setkind_np(&ra, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
		pthread_rwlock_init(&slots[i].rw, &ra);
		pthread_mutex_init(&slots[i].mu, NULL);
		slots[i].fd = -1;
	}
	for (i = 0; i < (nthreads ? nthreads : 1); i++) {
		struct worker *w = &workers[i];

		w->id = i;
		w->r.s = seed ^ (0x5851f42d4c957f2dULL * (uint64_t)(i + 1));
		w->cur = "idle";
		worker_mem(w);
	}
	/* Every slot starts open and attached. */
	for (i = 0; i < NSLOTS; i++) {
		slots[i].fd = dev_open(O_RDWR);
		if (slots[i].fd < 0) {
			printf("Bail out! open: %s\n", strerror(errno));
			return 1;
		}
		attach_by_name(&workers[0], slots[i].fd, qnames[i % NQNAMES], true);
	}

	/*
	 * The random phase gets what --seconds leaves after the deterministic
	 * pass, but never less than half of it: on a slow guest the pass alone
	 * can take the whole budget, and a run of zero operations tests nothing.
	 */
	t_rand = now_ns();
	t_end = t0 + (uint64_t)(seconds * 1e9);
	if (t_end < t_rand + (uint64_t)(seconds * 0.5e9))
		t_end = t_rand + (uint64_t)(seconds * 0.5e9);
	printf("# deterministic pass and setup: %.2f s; random phase: %.2f s\n",
	       (t_rand - t0) / 1e9, (t_end - t_rand) / 1e9);
	next_lease = t_rand + 100000000;
	next_priv = t_rand + 500000000;
	if (!nthreads) {
		/* One thread does everything; a 10 ms timer interrupts sleeps. */
		struct itimerval it = { { 0, 10000 }, { 0, 10000 } };

		sigaction(SIGALRM, &sa, NULL);
		setitimer(ITIMER_REAL, &it, NULL);
		while (now_ns() < t_end) {
			one_op(&workers[0]);
			workers[0].ops++;
			if (now_ns() >= next_lease) {
				lease_child(&mr);
				next_lease = now_ns() + 200000000;
			}
			if (now_ns() >= next_priv) {
				priv_child();
				next_priv = now_ns() + 1000000000;
			}
		}
		memset(&it, 0, sizeof(it));
		setitimer(ITIMER_REAL, &it, NULL);
		total = workers[0].ops;
	}
	for (i = 0; i < nthreads; i++)
		if (pthread_create(&workers[i].th, NULL, worker_main, &workers[i])) {
			printf("Bail out! pthread_create failed\n");
			return 1;
		}

	/* The main thread interrupts sleepers and runs the child scenarios. */
	while (nthreads && now_ns() < t_end) {
		struct timespec ts = { 0, 5000000 };

		nanosleep(&ts, NULL);
		pthread_kill(workers[below(&mr, (uint32_t)nthreads)].th, SIGUSR1);
		if (now_ns() >= next_lease) {
			lease_child(&mr);
			next_lease = now_ns() + 200000000;
		}
		if (now_ns() >= next_priv) {
			priv_child();
			next_priv = now_ns() + 1000000000;
		}
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	/* Keep interrupting until every worker is out; give up after 30 s. */
	for (;;) {
		struct timespec ts = { 0, 2000000 };
		int running = 0;

		for (i = 0; i < nthreads; i++)
			if (!workers[i].finished) {
				running++;
				pthread_kill(workers[i].th, SIGUSR1);
			}
		if (!running)
			break;
		if (now_ns() > t_end + 30000000000ULL) {
			stuck = 1;
			break;
		}
		nanosleep(&ts, NULL);
	}
	if (stuck) {
		for (i = 0; i < nthreads; i++)
			if (!workers[i].finished) {
				printf("# thread %d stuck in %s\n", i,
				       (const char *)workers[i].cur);
				dump_log(&workers[i]);
			}
		printf("Bail out! workers did not stop within 30 s of the deadline (seed %"
		       PRIu64 ")\n", seed);
		fflush(stdout);
		_exit(1);
	}
	for (i = 0; i < nthreads; i++) {
		pthread_join(workers[i].th, NULL);
		total += workers[i].ops;
	}

	/* Last snapshots, then every descriptor goes. */
	for (i = 0; i < NSLOTS; i++) {
		if (slots[i].fd >= 0)
			slot_check(&workers[0], &slots[i]);
		if (slots[i].fd >= 0)
			close(slots[i].fd);
		slots[i].fd = -1;
	}
	nq = our_queues(names, 256);
	for (i = 0; i < nq; i++) {
		dn = drain_queue(names[i], false);
		if (dn > 0)
			drained += dn;
	}
	{
		int left = our_queues(names, 256);

		if (left)
			failf(NULL, F_CLEANUP, "%d queues left after cleanup (%s...)", left,
			      names[0]);
	}
	fds1 = count_fds();

	for (i = 0; i < C_NCMDS; i++) {
		struct cmd_info *ci = &cmds[i];
		unsigned int j;
		char line[512];
		int off;

		off = snprintf(line, sizeof(line), "#   %-16s %8llu calls, %8llu ok", ci->name,
			       ci->calls, ci->okays);
		for (j = 0; j < ARRAY_SIZE(errlist); j++)
			if (ci->errs[j] && off < (int)sizeof(line))
				off += snprintf(line + off, sizeof(line) - off, ", %s %llu",
						strerror(errlist[j]), ci->errs[j]);
		printf("%s\n", line);
	}
	ok(total > 0, "ran %llu operations in a %.2f s random phase with seed %" PRIu64
	   " on %d threads", total, (t_end - t_rand) / 1e9, seed, nthreads);
	ok(!fails[F_ERRNO], "every call returned 0 or an errno documented for its command, "
	   "unknown commands -ENOTTY (%lu violations)", fails[F_ERRNO]);
	ok(!fails[F_STATS], "stats invariants held in %llu snapshots (counters never decrease, "
	   "gets >= dones + processing + lease_requeues + expiries, counts within items) "
	   "(%lu violations)", n_snapshots, fails[F_STATS]);
	ok(!fails[F_KEY], "all %llu keys handed out were keys that had been added (%lu bad)",
	   n_gets_checked, fails[F_KEY]);
	ok(!fails[F_LEASE] && n_lease_children > 0, "%llu consumers SIGKILLed holding %llu "
	   "leased keys: every key requeued (%lu violations)", n_lease_children, n_lease_keys,
	   fails[F_LEASE]);
	ok(!fails[F_PRIV] && n_priv_children > 0, "%llu unprivileged children: opens only as "
	   "the mode allows (" PRIV_CLOSED " -EACCES, " PRIV_OPEN " opened), destroy -EPERM "
	   "(%lu violations)", n_priv_children, fails[F_PRIV]);
	ok(!fails[F_CLEANUP], "final cleanup: %d queues drained (%ld keys) to items == 0, no key "
	   "left leased, no queue left (%lu problems)", nq, drained, fails[F_CLEANUP]);
	ok(fds1 == fds0 && !fails[F_FD], "no descriptor leaked (%d open before, %d after)", fds0,
	   fds1);
	ok(ef_cases && !ef_lost, "out-parameters on a read-only page: no get hands out a key it "
	   "does not report (%lu of %lu cases did)", ef_lost, ef_cases);
	ok(ef_cases && !ef_effect, "out-parameters on a read-only page: a failed call changes "
	   "nothing, a batch does what completed says (%lu of %lu cases did not)", ef_effect,
	   ef_cases);
	if (tap_failed)
		printf("# reproduce with: kwq_fuzz --seed %" PRIu64 " --seconds %g --threads %d\n",
		       seed, seconds, nthreads);
	return tap_done();
}
