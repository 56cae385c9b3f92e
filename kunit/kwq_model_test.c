// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite kwq_model: the queue against a reference model.
 *
 * Random sequences of every operation of the kernel API (each add and
 * policy, add-after with and without replace, debounced adds, adds with a
 * priority (kwq_add_ex()) on plain and priority queues, tenant queues of
 * depth 1 and 2 (the keys belong to a few tenants), adds and gets with
 * payloads on half the queues, cancel, add-rate-limited,
 * forget, num-requeues, get with and without a ticket, done, requeue,
 * done-get, the three batches, shutdown, drain, destroy, clock steps that
 * fire deadlines and processing timeouts, invalid keys) run against a
 * real queue on a fake clock and against a small model written from the
 * contract (the uapi header, kwq.h and Documentation/), over a universe
 * of eight keys so that keys meet each other in every state. After every
 * step each return value, errno, length, key byte and ticket, kwq_len(),
 * every counter of kwq_stats() that the model can predict, the failure
 * count of every key and the time the queue's timer is armed for are
 * compared.
 *
 * A mismatch prints the seed, the step, the operation and both results,
 * then shrinks the run: the same operations are replayed on fresh queues
 * with chunks left out, as long as some mismatch remains, and the
 * shortest failing sequence found is printed with each step's result.
 *
 * The seeds are fixed (module parameters model_seed, model_seeds and
 * model_steps of kwq_kunit.ko; the defaults make 100,000 steps), so a
 * failure reproduces; a long run is the same module loaded with more
 * seeds or steps.
 */

#include <kunit/test.h>
#include <linux/kernel.h>
#include <linux/ktime.h>
#include <linux/minmax.h>
#include <linux/module.h>
#include <linux/mm.h>
#include <linux/moduleparam.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "kwq.h"
#include "kwq_compat.h"
#include "kwq_fake_clock.h"

static unsigned int model_seed = 1;
module_param(model_seed, uint, 0444);
MODULE_PARM_DESC(model_seed, "kwq_model: first seed of the random runs");
static unsigned int model_seeds = 200;
module_param(model_seeds, uint, 0444);
MODULE_PARM_DESC(model_seeds, "kwq_model: number of random runs (seeds)");
static unsigned int model_steps = 500;
module_param(model_steps, uint, 0444);
MODULE_PARM_DESC(model_steps, "kwq_model: operations per run");

/*
 * KUnit of 6.1 runs a module's suites when the module is COMING, before
 * its parameters are parsed; read them from the module's argument string
 * (later kernels run the suites after parsing: same values).
 */
static bool mparams_apply(void)
{
	static const struct {
		const char *name;
		unsigned int *val;
	} params[] = {
		{ "model_seed=", &model_seed },
		{ "model_seeds=", &model_seeds },
		{ "model_steps=", &model_steps },
	};
	char *args = NULL, *rest, *tok;
	bool bad = false;
	u32 i;

#ifdef MODULE
	args = kstrdup(THIS_MODULE->args ?: "", GFP_KERNEL);
#endif
	for (rest = args; rest && (tok = strsep(&rest, " \t\n")); )
		for (i = 0; i < ARRAY_SIZE(params); i++)
			if (str_has_prefix(tok, params[i].name) &&
			    kstrtouint(tok + strlen(params[i].name), 0, params[i].val))
				bad = true;
	kfree(args);
	return bad;
}

/*
 * The key universe: lengths 1 to KWQ_KEY_MAX, two of length 2 ("k\0",
 * "kX"). The five longer ones are "kT/U/...": tenants "ka" and "kb" at
 * depth 1, four at depth 2, two keys sharing one; the short ones have
 * none, the empty tenant.
 */
#define MKEYS		8
static const u32 mkey_len[MKEYS] = { 1, 2, 2, 7, 32, 33, 200, KWQ_KEY_MAX };
static u8 mkey_bytes[MKEYS][KWQ_KEY_MAX];
/* For invalid keys: longer than any key may be. */
static u8 mkey_long[KWQ_KEY_MAX + 8];

static void mkeys_init(void)
{
	u32 i, j;

	for (i = 0; i < MKEYS; i++)
		for (j = 0; j < mkey_len[i]; j++)
			mkey_bytes[i][j] = j == 0 ? 'k' : i == 1 ? 0 : 'a' + (i * 7 + j) % 26;
	for (i = 3; i < MKEYS; i++) {
		mkey_bytes[i][1] = 'a' + i % 2;
		mkey_bytes[i][2] = '/';
		mkey_bytes[i][3] = 'a' + (i / 2) % 2;
		mkey_bytes[i][4] = '/';
	}
	memset(mkey_long, 'x', sizeof(mkey_long));
}

/* splitmix64: a tiny PRNG whose sequence is the same on every kernel. */
static u64 mrand(u64 *s)
{
	u64 z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static u32 mrand_below(u64 *s, u32 n)
{
	return n ? (u32)(mrand(s) % n) : 0;
}

/* One queue configuration, drawn from the seed. */
struct mcfg {
	u32 policy;		/* kwq_attr.policy, 0 for the default */
	u64 timeout;		/* kwq_attr.processing_timeout_ns */
	u32 max_items;
	u32 max_idle;		/* kwq_attr.max_backoff_keys */
	struct kwq_ratelimit rl;
	bool prio;		/* kwq_attr.priority */
	u64 aging;		/* kwq_attr.aging_ns, 0 for the default */
	u32 payload_max;	/* kwq_attr.payload_max, 0: no payloads */
	u32 tenant;		/* kwq_attr.tenant_depth, 0: no tenants */
};

enum mop_type {
	MOP_ADD, MOP_ADD_ATOMIC, MOP_ADD_POLICY, MOP_ADD_AFTER, MOP_CANCEL,
	MOP_ADD_RL, MOP_FORGET, MOP_NUM_REQUEUES, MOP_GET, MOP_DONE, MOP_REQUEUE,
	MOP_DONE_GET, MOP_STEP, MOP_BAD_KEY, MOP_SHUTDOWN, MOP_DRAIN, MOP_ADD_BATCH,
	MOP_GET_BATCH, MOP_DONE_BATCH, MOP_DESTROY, MOP_ADD_DEBOUNCED, MOP_ADD_EX,
	MOP_ADD_PAYLOAD, MOP_GET_PAYLOAD, MOP_NR
};

static const char * const mop_name[MOP_NR] = {
	"add", "add_atomic", "add_policy", "add_after", "cancel", "add_rate_limited",
	"forget", "num_requeues", "get", "done", "requeue", "done_get", "step",
	"bad_key", "shutdown", "drain", "add_batch", "get_batch", "done_batch", "destroy",
	"add_debounced", "add_ex", "add_payload", "get_payload",
};

/* Per mille, roughly; shutdown and drain are rare so runs live a while. */
static const u16 mop_weight[MOP_NR] = {
	[MOP_ADD] = 100, [MOP_ADD_ATOMIC] = 30, [MOP_ADD_POLICY] = 80,
	[MOP_ADD_AFTER] = 120, [MOP_CANCEL] = 40, [MOP_ADD_RL] = 80,
	[MOP_FORGET] = 40, [MOP_NUM_REQUEUES] = 20, [MOP_GET] = 160,
	[MOP_DONE] = 120, [MOP_REQUEUE] = 40, [MOP_DONE_GET] = 30,
	[MOP_STEP] = 100, [MOP_BAD_KEY] = 10, [MOP_SHUTDOWN] = 2, [MOP_DRAIN] = 2,
	[MOP_ADD_BATCH] = 20, [MOP_GET_BATCH] = 20, [MOP_DONE_BATCH] = 20,
	[MOP_ADD_DEBOUNCED] = 80, [MOP_ADD_EX] = 100, [MOP_ADD_PAYLOAD] = 90,
	[MOP_GET_PAYLOAD] = 80,
};

/* The number of priorities of a priority queue. */
#define MPRIOS		(KWQ_PRIORITY_MAX - KWQ_PRIORITY_MIN + 1)

/* Batches: up to MBATCH entries, 4 bits of key (MKEYS: an invalid key) each. */
#define MBATCH		4
#define MB_KEY(v, e)	((u32)((v) >> (4 * (e))) & 0xf)
#define MB_MODE(v, e)	((u32)((v) >> (16 + 4 * (e))) & 0xf)

/* Which ticket a done or requeue names; resolved when it runs. */
enum { TK_ZERO, TK_LIVE, TK_STALE, TK_OTHER, TK_FUTURE };
/* How an add-after's delay is chosen; resolved when it runs. */
enum { DL_FIXED, DL_SAME, DL_BEFORE, DL_AFTER };

/*
 * One operation. Everything that depends on the state (which ticket, a
 * delay relative to the key's deadline) is resolved when it runs, so a
 * shrunk sequence stays meaningful.
 */
struct mop {
	u8 type;
	u8 key;
	u8 mode;	/* TK_*, DL_*, or the call of a bad key */
	u8 api;		/* 1: the ticket call (get, done, requeue); bad key: kind */
	u32 arg;	/* policy, flags, or get capacity */
	s64 val;	/* delay or step, ns */
	u64 max_wait;	/* debounced add: its max wait, ns */
};

/* The model of one key. */
struct mkey {
	bool dirty;		/* needs processing */
	bool processing;	/* handed out, not yet ended */
	bool waiting;		/* has an add-after deadline */
	bool idle;		/* backoff-only: a failure count and nothing else */
	u32 failures;
	s64 deadline;		/* waiting */
	s64 bound;		/* waiting: debounced adds stop here; 0: plain */
	u64 wseq;		/* waiting: order among equal deadlines */
	u64 bseq;		/* processing: order of the hand-outs */
	s64 taken;		/* processing: time of the get */
	s64 readied;		/* queued: time it became ready */
	u64 iseq;		/* idle: least recently active first */
	u64 ticket;		/* processing: its ticket, 0 if not known */
	u64 dead_ticket;	/* ticket of its last ended hand-out, 0 for none */
	int prio;		/* priority queue: the key's priority */
	u32 pval;		/* its payload's value (its bytes: mpayload_fill()) */
	u32 plen;		/* its payload's length, 0 for none */
};

/* Coverage: outcomes per operation, summed over a test case. */
#define MSLOTS		19
static const int mslot_errno[] = {
	EINVAL, ENOENT, ENOSPC, ESHUTDOWN, EAGAIN, EMSGSIZE, ETIMEDOUT, EIDRM, E2BIG,
	EOPNOTSUPP,
};

struct mcov {
	u64 outcome[MOP_NR][MSLOTS];
	u64 get_eagain_shut;	/* get: -EAGAIN after shutdown (a key may return) */
	u64 stale_enoent;	/* done/requeue of a dead ticket: -ENOENT */
	u64 prio_moved;		/* raises that moved a queued key */
	u64 prio_kept;		/* raises of a queued key its age already beat */
	u64 prio_jumped;	/* gets that took a key not first in add order */
	u64 ten_rotated;	/* gets that moved a tenant behind another */
	u64 steps;
	struct kwq_stats sum;	/* counters of the model, summed */
};

/* A token bucket of kwq-limiters.rst, its level kept in ns of refill. */
struct mbucket {
	s64 level;	/* tokens * tick, at most burst * tick */
	s64 last;
	s64 tick;	/* ns per token */
};

/* The longest payload_max of a run; adds try a little more. */
#define MPAYLOAD_MAX	40

#define MLOG_LINES	48
#define MLOG_LEN	200

struct mrun {
	struct mcfg cfg;
	struct fake_clock fc;
	struct kwq *q;
	struct mkey k[MKEYS];
	u8 ready[MKEYS];	/* the ready list, head first */
	u32 nready;
	/* Tenant queues: each level's rotation, tenants by m_tenant(). */
	u8 rot[MPRIOS][MKEYS];
	u8 nrot[MPRIOS];
	bool shut;
	bool dead;		/* destroyed, through a reference of our own */
	u32 gen_left;		/* steps left to generate */
	u32 gen_steps;		/* steps of the run */
	s64 now;
	u64 seq;
	u32 pseq;		/* payload values handed to adds */
	u64 last_ticket;	/* highest ticket seen */
	u64 lat_sum, work_sum;
	struct mbucket b[KWQ_LIMITERS_MAX];
	u32 mutant;		/* a planted model bug, for the self-test */
	int add_prio;		/* the priority of the add being modelled */
	struct kwq_stats want;	/* the model's counters */
	struct kwq_stats got;
	u8 buf[KWQ_KEY_MAX];
	u8 bbuf[KWQ_KEY_MAX + 600];
	u8 pbuf[MPAYLOAD_MAX + 8];
	u8 pwant[MPAYLOAD_MAX + 8];
	/* The first mismatch of the run. */
	bool failed;
	char why[MLOG_LEN];
	/* The operation log of a replay, the last MLOG_LINES steps. */
	bool logging;
	u32 nlog;
	char log[MLOG_LINES][MLOG_LEN];
	char line[MLOG_LEN];
	struct mcov *cov;
};

static const char *merr(int ret)
{
	switch (ret) {
	case -EINVAL: return "-EINVAL";
	case -ENOENT: return "-ENOENT";
	case -ENOSPC: return "-ENOSPC";
	case -ESHUTDOWN: return "-ESHUTDOWN";
	case -EAGAIN: return "-EAGAIN";
	case -EMSGSIZE: return "-EMSGSIZE";
	case -ETIMEDOUT: return "-ETIMEDOUT";
	case -EIDRM: return "-EIDRM";
	case -ENOMEM: return "-ENOMEM";
	case -EPERM: return "-EPERM";
	case -E2BIG: return "-E2BIG";
	case -EOPNOTSUPP: return "-EOPNOTSUPP";
	default: return NULL;
	}
}

/* "3" or "-ENOENT" into @buf. */
static const char *mret(char *buf, size_t n, s64 ret)
{
	const char *e = ret < 0 && ret > -4096 ? merr((int)ret) : NULL;

	if (e)
		return e;
	scnprintf(buf, n, "%lld", ret);
	return buf;
}

/* Record the first mismatch of the run. */
static __printf(2, 3) void mfail(struct mrun *r, const char *fmt, ...)
{
	va_list ap;

	if (r->failed)
		return;
	r->failed = true;
	va_start(ap, fmt);
	vsnprintf(r->why, sizeof(r->why), fmt, ap);
	va_end(ap);
}

static void mexpect(struct mrun *r, const char *what, s64 want, s64 got)
{
	char a[24], b[24];

	if (want != got)
		mfail(r, "%s: model %s, queue %s", what, mret(a, sizeof(a), want),
		      mret(b, sizeof(b), got));
}

/* ---------------------------------------------------------------------
 * The model. Every function here follows a sentence of the contract.
 */

static bool m_rec(const struct mkey *k)
{
	return k->dirty || k->processing || k->waiting || k->idle;
}

static bool m_state(const struct mkey *k)
{
	return k->dirty || k->processing || k->waiting;
}

static u32 m_policy(const struct mrun *r, u32 policy)
{
	if (policy)
		return policy;
	return r->cfg.policy ? r->cfg.policy : KWQ_POLICY_PROMOTE;
}

static bool m_processing(const struct mkey *k)
{
	return k->processing;
}

static bool m_dirty_processing(const struct mkey *k)
{
	return k->processing && k->dirty;
}

static bool m_waiting(const struct mkey *k)
{
	return k->waiting;
}

static bool m_idle(const struct mkey *k)
{
	return k->idle;
}

static u32 m_count(const struct mrun *r, bool (*pred)(const struct mkey *k))
{
	u32 i, n = 0;

	for (i = 0; i < MKEYS; i++)
		n += pred(&r->k[i]);
	return n;
}

#define M_ITEMS(r)		m_count(r, m_rec)
#define M_PROCESSING(r)		m_count(r, m_processing)
#define M_DIRTY_PROC(r)		m_count(r, m_dirty_processing)
#define M_WAITING(r)		m_count(r, m_waiting)
#define M_IDLE(r)		m_count(r, m_idle)

/* The position in the ready list of the first key of priority @prio, or -1. */
static int m_level_first(const struct mrun *r, int prio)
{
	u32 j;

	for (j = 0; j < r->nready; j++)
		if (r->k[r->ready[j]].prio == prio)
			return j;
	return -1;
}

static u64 m_aging(const struct mrun *r)
{
	return r->cfg.aging ?: KWQ_AGING_DEFAULT_NS;
}

/*
 * Tenant queues (kwq-tenants.rst). A key's tenant is its bytes before its
 * n-th '/', n = min(depth, its number of '/'); named here by the first
 * key of the universe with the same tenant.
 */
static u32 m_tenant_len(u32 i, u32 depth)
{
	u32 j, n = 0, end = 0;

	for (j = 0; j < mkey_len[i]; j++) {
		if (mkey_bytes[i][j] == '/' && n < depth) {
			n++;
			end = j;
		}
	}
	return end;
}

static u32 m_tenant(const struct mrun *r, u32 i)
{
	u32 len = m_tenant_len(i, r->cfg.tenant), t;

	for (t = 0; t < i; t++)
		if (m_tenant_len(t, r->cfg.tenant) == len &&
		    !memcmp(mkey_bytes[t], mkey_bytes[i], len))
			break;
	return t;
}

/* A key's level: its priority's on a priority queue, else one level. */
static u32 m_level(const struct mrun *r, u32 i)
{
	return r->cfg.prio ? r->k[i].prio - KWQ_PRIORITY_MIN : 0;
}

/* The position in the rotation of level @l of tenant @t, or -1. */
static int m_rot_find(const struct mrun *r, u32 l, u32 t)
{
	u32 j;

	for (j = 0; j < r->nrot[l]; j++)
		if (r->rot[l][j] == t)
			return j;
	return -1;
}

static void m_rot_del(struct mrun *r, u32 l, u32 j)
{
	memmove(&r->rot[l][j], &r->rot[l][j + 1], r->nrot[l] - j - 1);
	r->nrot[l]--;
}

static void m_rot_add(struct mrun *r, u32 l, u32 t, bool head)
{
	if (head) {
		memmove(&r->rot[l][1], &r->rot[l][0], r->nrot[l]);
		r->rot[l][0] = t;
	} else {
		r->rot[l][r->nrot[l]] = t;
	}
	r->nrot[l]++;
}

/* The ready position of the first key of tenant @t at level @l, or -1. */
static int m_flow_first(const struct mrun *r, u32 l, u32 t)
{
	u32 j;

	for (j = 0; j < r->nready; j++)
		if (m_level(r, r->ready[j]) == l && m_tenant(r, r->ready[j]) == t)
			return j;
	return -1;
}

/*
 * A tenant queue's next key: each level's is the first key of the first
 * tenant of its rotation; among levels, the least rank (priority queues).
 */
static u32 m_next_tenant(const struct mrun *r)
{
	s64 rank, best_rank = 0;
	int best = -1, j;
	u32 l;

	for (l = 0; l < MPRIOS; l++) {
		if (!r->nrot[l])
			continue;
		j = m_flow_first(r, l, r->rot[l][0]);
		if (j < 0)
			return 0;	/* the model is broken: mexec finds out */
		rank = r->k[r->ready[j]].readied +
		       (s64)(MPRIOS - 1 - l) * (s64)m_aging(r);
		if (best < 0 || rank < best_rank ||
		    (rank == best_rank && m_level(r, r->ready[j]) > m_level(r, r->ready[best]))) {
			best = j;
			best_rank = rank;
		}
	}
	return best < 0 ? 0 : best;
}

/*
 * The position of the key a get takes: the head, or on a priority queue
 * (kwq-priorities.rst) of the first keys of each priority the one with
 * the least ready time + (KWQ_PRIORITY_MAX - priority) * aging, the
 * higher priority on a tie.
 */
static u32 m_next(const struct mrun *r)
{
	bool seen[MPRIOS] = {};
	s64 rank, best_rank = 0;
	int best = -1;
	u32 j;

	if (r->cfg.tenant)
		return m_next_tenant(r);
	if (!r->cfg.prio)
		return 0;
	for (j = 0; j < r->nready; j++) {
		const struct mkey *k = &r->k[r->ready[j]];

		if (seen[k->prio - KWQ_PRIORITY_MIN])
			continue;
		seen[k->prio - KWQ_PRIORITY_MIN] = true;
		rank = k->readied + (s64)(KWQ_PRIORITY_MAX - k->prio) * (s64)m_aging(r);
		if (best < 0 || rank < best_rank ||
		    (rank == best_rank && k->prio > r->k[r->ready[best]].prio)) {
			best = j;
			best_rank = rank;
		}
	}
	return best < 0 ? 0 : best;
}

/*
 * The key at @pos leaves the ready list; on a tenant queue, a tenant left
 * with no key at its level leaves the rotation, and a get (@taken) moves
 * one that has keys left to the end.
 */
static void m_unready_how(struct mrun *r, u32 pos, bool taken)
{
	u32 i = r->ready[pos], l, t;
	int j;

	memmove(&r->ready[pos], &r->ready[pos + 1], r->nready - pos - 1);
	r->nready--;
	if (!r->cfg.tenant)
		return;
	l = m_level(r, i);
	t = m_tenant(r, i);
	j = m_rot_find(r, l, t);
	if (j < 0)
		return;
	if (m_flow_first(r, l, t) < 0) {
		m_rot_del(r, l, j);
	} else if (taken && r->mutant != 5) {
		m_rot_del(r, l, j);
		m_rot_add(r, l, t, false);
		if (r->nrot[l] > 1 && r->cov)
			r->cov->ten_rotated++;
	}
}

static void m_unready(struct mrun *r, u32 pos)
{
	m_unready_how(r, pos, false);
}

static void m_push(struct mrun *r, u32 i, bool head)
{
	int f;

	r->k[i].readied = r->now;
	if (r->cfg.tenant) {
		u32 l = m_level(r, i), t = m_tenant(r, i);
		int j = m_rot_find(r, l, t);

		/* Its tenant joins the end, or goes to the head with a give-back. */
		if (j >= 0 && head)
			m_rot_del(r, l, j);
		if (j < 0 || head)
			m_rot_add(r, l, t, head);
	}
	/* A key given back keeps the ready time of the key it goes before, if earlier. */
	if (head && r->cfg.prio && !r->cfg.tenant) {
		f = m_level_first(r, r->k[i].prio);
		if (f >= 0)
			r->k[i].readied = min(r->now, r->k[r->ready[f]].readied);
	}
	if (head) {
		memmove(&r->ready[1], &r->ready[0], r->nready);
		r->ready[0] = i;
	} else {
		r->ready[r->nready] = i;
	}
	r->nready++;
}

/* The least recently active backoff-only key is forgotten. */
static bool m_evict(struct mrun *r)
{
	int i, best = -1;

	for (i = 0; i < MKEYS; i++)
		if (r->k[i].idle && (best < 0 || r->k[i].iseq < r->k[best].iseq))
			best = i;
	if (best < 0)
		return false;
	r->k[best].idle = false;
	r->k[best].failures = 0;
	r->want.backoff_evictions++;
	return true;
}

/*
 * A key lost a state: with none left it is forgotten, unless it has a
 * failure count; then it is backoff-only, the most recently active, and
 * at most max_backoff_keys such keys are kept.
 */
static void m_settle(struct mrun *r, u32 i)
{
	struct mkey *k = &r->k[i];

	if (m_state(k) || k->idle)
		return;
	/* Nothing will run the key: its payload goes. */
	k->plen = 0;
	if (!k->failures)
		return;
	k->idle = true;
	k->iseq = ++r->seq;
	while (M_IDLE(r) > r->cfg.max_idle && m_evict(r))
		;
}

/*
 * The priority of an add (r->add_prio) on a priority queue: a key with no
 * run pending takes it; otherwise it can only rise, and a queued key moves
 * to the tail of its new priority, ready from now, only if that hands it
 * out sooner.
 */
static void m_note(struct mrun *r, u32 i)
{
	struct mkey *k = &r->k[i];
	int p = r->add_prio;
	u32 j;

	if (!r->cfg.prio)
		return;
	if (!k->dirty && !k->waiting) {
		k->prio = p;
		return;
	}
	if (p <= k->prio)
		return;
	if (!k->dirty || k->processing) {
		k->prio = p;
		return;
	}
	if (r->now - k->readied >= (s64)(p - k->prio) * (s64)m_aging(r) && r->mutant != 4) {
		if (r->cov)
			r->cov->prio_kept++;
		return;
	}
	if (r->cov)
		r->cov->prio_moved++;
	for (j = 0; j < r->nready && r->ready[j] != i; j++)
		;
	m_unready(r, j);
	k->prio = p;
	m_push(r, i, false);
}

/* What every add checks first; 0 when the key has a record to work on. */
static int m_prepare(struct mrun *r, u32 i)
{
	struct mkey *k = &r->k[i];

	if (r->shut) {
		r->want.refused++;
		return -ESHUTDOWN;
	}
	if (!m_rec(k)) {
		/* At the limit a backoff-only key gives way to real work. */
		if (M_ITEMS(r) >= r->cfg.max_items && !M_IDLE(r))
			return -ENOSPC;
		if (M_ITEMS(r) >= r->cfg.max_items)
			m_evict(r);
	}
	k->idle = false;
	m_note(r, i);
	return 0;
}

static int m_mark_dirty(struct mrun *r, u32 i)
{
	struct mkey *k = &r->k[i];

	if (k->dirty) {
		if (r->mutant != 1)
			r->want.dedups++;
		return KWQ_ADD_DUPLICATE;
	}
	k->dirty = true;
	r->want.adds++;
	if (k->processing)
		return KWQ_ADD_DEFERRED;
	m_push(r, i, false);
	return KWQ_ADD_QUEUED;
}

/* An add now of a key with a record, under @policy (kwq-delays.rst). */
static int m_add_now(struct mrun *r, u32 i, u32 policy)
{
	struct mkey *k = &r->k[i];

	if (k->waiting) {
		if (policy == KWQ_POLICY_STRICT && !k->dirty) {
			r->want.absorbed++;
			return KWQ_ADD_ABSORBED;
		}
		if (policy == KWQ_POLICY_PROMOTE) {
			k->waiting = false;
			r->want.waits_dropped++;
		}
	}
	return m_mark_dirty(r, i);
}

static int m_add(struct mrun *r, u32 i, u32 policy)
{
	int ret = m_prepare(r, i);

	return ret ? ret : m_add_now(r, i, m_policy(r, policy));
}

/* now + @ns, at most KWQ_DELAY_MAX_NS from now. */
static s64 m_after(const struct mrun *r, u64 ns)
{
	return r->now + (s64)min_t(u64, ns, KWQ_DELAY_MAX_NS);
}

/* The key's one waiting entry, at @deadline, debounced up to @bound (or 0). */
static int m_wait_at(struct mrun *r, u32 i, s64 deadline, s64 bound)
{
	struct mkey *k = &r->k[i];
	int ret = KWQ_ADD_WAITING;

	k->bound = bound;
	if (k->waiting) {
		if (deadline == k->deadline)
			return KWQ_ADD_WAIT_KEPT;
		ret = KWQ_ADD_WAIT_MOVED;
	}
	k->waiting = true;
	k->deadline = deadline;
	k->wseq = ++r->seq;
	return ret;
}

/*
 * One waiting entry per key: the earliest deadline wins unless replaced.
 * A debounced entry that stays is bounded by this deadline from now on;
 * one that moves is a plain entry.
 */
static int m_wait(struct mrun *r, u32 i, u64 delay, bool replace)
{
	struct mkey *k = &r->k[i];
	s64 deadline = m_after(r, delay);

	if (k->waiting && !replace && deadline >= k->deadline) {
		if (k->bound)
			k->bound = min(k->bound, deadline);
		return KWQ_ADD_WAIT_KEPT;
	}
	return m_wait_at(r, i, deadline, 0);
}

/*
 * A debounced add (struct kwq_ioc_add_after): a pending run covers it; a
 * key without an entry waits now + delay, bounded by now + max wait; a
 * debounced entry moves later, to now + delay, never past its bound
 * (which this add may lower); a plain entry keeps the earliest deadline
 * and, if the add's is earlier, becomes debounced up to the old one.
 */
static int m_debounce(struct mrun *r, u32 i, u64 delay, u64 max_wait)
{
	struct mkey *k = &r->k[i];
	s64 want = m_after(r, delay), bound = m_after(r, max_wait), d;

	if (k->dirty) {
		r->want.dedups++;
		return KWQ_ADD_DUPLICATE;
	}
	if (!k->waiting)
		return m_wait_at(r, i, want, bound);
	if (!k->bound)
		return want >= k->deadline ? KWQ_ADD_WAIT_KEPT :
		       m_wait_at(r, i, want, min(bound, k->deadline));
	bound = min(bound, k->bound);
	d = max(k->deadline, want);
	if (d > bound && r->mutant != 3) {
		r->want.debounce_capped++;
		d = bound;
	}
	if (d > k->deadline)
		r->want.debounced++;
	return m_wait_at(r, i, d, bound);
}

static u64 m_limit(const struct kwq_ratelimit *rl)
{
	if (rl->max_wait_ns && rl->max_wait_ns < KWQ_DELAY_MAX_NS)
		return rl->max_wait_ns;
	return KWQ_DELAY_MAX_NS;
}

static void m_refill(struct mrun *r, const struct kwq_limiter *l, struct mbucket *b)
{
	if (r->now <= b->last)
		return;
	b->level = min_t(s64, b->level + (r->now - b->last), (s64)l->burst * b->tick);
	b->last = r->now;
}

static u64 m_when(struct mrun *r, u32 f, u32 *reserved)
{
	const struct kwq_ratelimit *rl = &r->cfg.rl;
	u64 limit = m_limit(rl), delay = 0, d;
	u32 l;

	*reserved = 0;
	for (l = 0; l < rl->count; l++) {
		const struct kwq_limiter *lim = &rl->limiters[l];
		struct mbucket *b;

		switch (lim->type) {
		case KWQ_LIMITER_EXPONENTIAL:
			d = f >= 63 || lim->base_ns > (lim->max_ns >> f) ? lim->max_ns :
			    lim->base_ns << f;
			break;
		case KWQ_LIMITER_FAST_SLOW:
			d = (u64)f + 1 <= lim->max_fast ? lim->fast_ns : lim->slow_ns;
			break;
		default:
			if (lim->rate_mhz == KWQ_RATE_INF) {
				d = 0;
				break;
			}
			if (!lim->burst) {
				d = limit;
				break;
			}
			b = &r->b[l];
			m_refill(r, lim, b);
			b->level -= b->tick;
			*reserved |= 1U << l;
			d = b->level < 0 ? min_t(u64, -b->level, limit) : 0;
			break;
		}
		delay = max(delay, d);
	}
	return min(delay, limit);
}

static void m_unreserve(struct mrun *r, u32 reserved)
{
	const struct kwq_ratelimit *rl = &r->cfg.rl;
	u32 l;

	for (l = 0; l < rl->count; l++) {
		const struct kwq_limiter *lim = &rl->limiters[l];
		struct mbucket *b = &r->b[l];

		if (!(reserved & (1U << l)))
			continue;
		m_refill(r, lim, b);
		b->level = min_t(s64, b->level + b->tick, (s64)lim->burst * b->tick);
	}
}

static bool m_tracks(const struct mrun *r)
{
	u32 l;

	for (l = 0; l < r->cfg.rl.count; l++)
		if (r->cfg.rl.limiters[l].type != KWQ_LIMITER_BUCKET)
			return true;
	return false;
}

#define M_FAILURES_MAX	((1U << 19) - 1)

static int m_add_rate_limited(struct mrun *r, u32 i)
{
	struct mkey *k = &r->k[i];
	u32 reserved;
	u64 delay;
	int ret = m_prepare(r, i);

	if (ret)
		return ret;
	delay = m_when(r, k->failures, &reserved);
	k->failures = m_tracks(r) ? min(k->failures + 1, M_FAILURES_MAX) : 0;
	r->want.rate_limited++;
	r->want.retries++;
	ret = delay ? m_wait(r, i, delay, false) : m_add_now(r, i, m_policy(r, 0));
	/* An add that schedules nothing new gives its tokens back. */
	if (reserved && (ret == KWQ_ADD_WAIT_KEPT || ret == KWQ_ADD_DUPLICATE ||
			 ret == KWQ_ADD_ABSORBED)) {
		m_unreserve(r, reserved);
		r->want.tokens_returned++;
	}
	return ret;
}

static int m_cancel(struct mrun *r, u32 i)
{
	struct mkey *k = &r->k[i];

	if (!k->waiting)
		return 0;
	k->waiting = false;
	r->want.cancels++;
	m_settle(r, i);
	return 1;
}

static int m_forget(struct mrun *r, u32 i)
{
	struct mkey *k = &r->k[i];

	if (!k->failures)
		return 0;
	k->failures = 0;
	k->idle = false;
	r->want.forgets++;
	return 1;
}

/* The bytes of payload value @v, @len of them. */
static void mpayload_fill(u8 *p, u32 v, u32 len)
{
	u32 j;

	for (j = 0; j < len; j++)
		p[j] = (u8)(v * 131 + j * 7 + 1);
}

/* What kwq_add_ex() checks of a payload before anything else. */
static int m_payload_check(const struct mrun *r, u32 len)
{
	if (!len)
		return 0;
	if (!r->cfg.payload_max)
		return -EINVAL;
	return len > r->cfg.payload_max ? -E2BIG : 0;
}

/* A successful add with a payload: the latest wins, whatever the key's state. */
static void m_payload_store(struct mrun *r, u32 i, u32 len)
{
	struct mkey *k = &r->k[i];

	if (!len || (r->mutant == 4 && k->processing))
		return;
	if (k->plen)
		r->want.payloads_replaced++;
	k->pval = ++r->pseq;
	k->plen = len;
}

/* A get that hands out @i (the head) stamps a new hand-out. */
static int m_get(struct mrun *r, u32 cap, u32 *len)
{
	struct mkey *k;
	u32 i, pos;

	if (!r->nready)
		return r->shut && !M_PROCESSING(r) ? -ESHUTDOWN : -EAGAIN;
	pos = m_next(r);
	i = r->ready[pos];
	*len = mkey_len[i];
	if (mkey_len[i] > cap)
		return -EMSGSIZE;
	if (pos && r->cov)
		r->cov->prio_jumped++;
	k = &r->k[i];
	m_unready_how(r, pos, true);
	k->dirty = false;
	k->processing = true;
	k->taken = r->now;
	k->bseq = ++r->seq;
	k->ticket = 0;
	r->lat_sum += r->now - k->readied;
	r->want.gets++;
	return 0;
}

/* End the hand-out of @i; its ticket is dead from now on. */
static void m_end(struct mrun *r, u32 i)
{
	struct mkey *k = &r->k[i];

	k->processing = false;
	if (k->ticket)
		k->dead_ticket = k->ticket;
	k->ticket = 0;
}

/* Whether @ticket may end @i's hand-out; 0 or the error. */
static int m_holder(struct mrun *r, u32 i, u64 ticket)
{
	struct mkey *k = &r->k[i];

	/* A hand-out that can be revoked must be named. */
	if (r->cfg.timeout && !ticket)
		return -EINVAL;
	if (!k->processing)
		return -ENOENT;
	if (ticket && ticket != k->ticket)
		return -ENOENT;
	return 0;
}

static int m_done(struct mrun *r, u32 i, u64 ticket)
{
	struct mkey *k = &r->k[i];
	int ret = m_holder(r, i, ticket);

	if (ret)
		return ret;
	r->want.dones++;
	r->work_sum += r->now - k->taken;
	m_end(r, i);
	if (k->dirty) {
		r->want.requeues++;
		m_push(r, i, false);
		return KWQ_DONE_REQUEUED;
	}
	m_settle(r, i);
	return KWQ_DONE_FINISHED;
}

static void m_give_back(struct mrun *r, u32 i)
{
	m_end(r, i);
	r->k[i].dirty = true;
	m_push(r, i, r->mutant != 2);
}

static int m_requeue(struct mrun *r, u32 i, u64 ticket)
{
	int ret = m_holder(r, i, ticket);

	if (ret)
		return ret;
	m_give_back(r, i);
	return 0;
}

/* The waiting key with the earliest deadline (ties: first added), or -1. */
static int m_first_waiting(const struct mrun *r)
{
	int i, best = -1;

	for (i = 0; i < MKEYS; i++) {
		const struct mkey *k = &r->k[i];

		if (k->waiting && (best < 0 || k->deadline < r->k[best].deadline ||
				   (k->deadline == r->k[best].deadline &&
				    k->wseq < r->k[best].wseq)))
			best = i;
	}
	return best;
}

/* The next time something is due: a deadline or a processing expiry. */
static s64 m_next_event(const struct mrun *r)
{
	s64 next = KTIME_MAX;
	int i = m_first_waiting(r);

	if (i >= 0)
		next = r->k[i].deadline;
	for (i = 0; r->cfg.timeout && i < MKEYS; i++)
		if (r->k[i].processing)
			next = min_t(s64, next, r->k[i].taken + (s64)r->cfg.timeout);
	return next;
}

/*
 * At r->now: every due deadline fires as an add, in deadline order; then
 * every overdue hand-out goes back to the head of the queue, the oldest
 * first.
 */
static void m_run_due(struct mrun *r)
{
	u8 overdue[MKEYS];
	u32 n = 0, j;
	int i;

	while ((i = m_first_waiting(r)) >= 0 && r->k[i].deadline <= r->now) {
		r->k[i].waiting = false;
		r->want.fired++;
		m_mark_dirty(r, i);
	}
	if (!r->cfg.timeout)
		return;
	for (i = 0; i < MKEYS; i++)
		if (r->k[i].processing && r->k[i].taken + (s64)r->cfg.timeout <= r->now)
			overdue[n++] = i;
	/*
	 * Sort by hand-out order, then give back from the newest; on a tenant
	 * queue, where each goes to the head, from the oldest.
	 */
	for (j = 1; j < n; j++) {
		u8 x = overdue[j];
		u32 m = j;

		for (; m > 0 && r->k[overdue[m - 1]].bseq > r->k[x].bseq; m--)
			overdue[m] = overdue[m - 1];
		overdue[m] = x;
	}
	for (j = 0; j < n; j++) {
		r->want.processing_expiries++;
		m_give_back(r, overdue[r->cfg.tenant ? j : n - 1 - j]);
	}
}

/* Shutdown and drain: waiting entries are dropped, or fired (flush). */
static void m_end_waiting(struct mrun *r, bool flush)
{
	int i;

	r->shut = true;
	while ((i = m_first_waiting(r)) >= 0) {
		r->k[i].waiting = false;
		if (flush) {
			r->want.fired++;
			m_mark_dirty(r, i);
		} else {
			r->want.waits_dropped++;
			m_settle(r, i);
		}
	}
}

/* ---------------------------------------------------------------------
 * Driving the queue.
 */

static int mrun_begin(struct mrun *r)
{
	struct kwq_attr attr = {
		.policy = r->cfg.policy,
		.processing_timeout_ns = r->cfg.timeout,
		.max_items = r->cfg.max_items,
		.max_backoff_keys = r->cfg.max_idle,
		.ratelimit = &r->cfg.rl,
		.clock = &r->fc.base,
		.priority = r->cfg.prio,
		.aging_ns = r->cfg.aging,
		.payload_max = r->cfg.payload_max,
		.tenant_depth = r->cfg.tenant,
	};
	u32 l;

	memset(r->k, 0, sizeof(r->k));
	memset(r->nrot, 0, sizeof(r->nrot));
	r->add_prio = 0;
	r->nready = 0;
	r->shut = false;
	r->dead = false;
	r->seq = 0;
	r->pseq = 0;
	r->last_ticket = 0;
	r->lat_sum = 0;
	r->work_sum = 0;
	memset(&r->want, 0, sizeof(r->want));
	r->failed = false;
	r->why[0] = '\0';
	r->nlog = 0;
	r->fc.base.now = fake_now;
	r->fc.base.program = fake_program;
	r->fc.now = ms_to_ktime(1000);
	r->fc.programmed = KTIME_MAX;
	r->now = ktime_to_ns(r->fc.now);
	for (l = 0; l < KWQ_LIMITERS_MAX; l++) {
		const struct kwq_limiter *lim = &r->cfg.rl.limiters[l];

		r->b[l].tick = lim->rate_mhz && lim->rate_mhz != KWQ_RATE_INF ?
			       (s64)div64_u64(1000000000000ULL, lim->rate_mhz) : 0;
		r->b[l].level = (s64)lim->burst * r->b[l].tick;
		r->b[l].last = r->now;
	}
	r->q = kwq_create(NULL, &attr);
	r->fc.q = r->q;
	if (IS_ERR(r->q)) {
		mfail(r, "kwq_create: %ld", PTR_ERR(r->q));
		r->q = NULL;
		return -1;
	}
	return 0;
}

static void mrun_end(struct mrun *r)
{
	if (r->q && r->dead)
		kwq_put(r->q);
	else if (r->q)
		kwq_destroy(r->q);
	r->q = NULL;
}

static u64 hist_count(const u64 *h)
{
	u64 n = 0;
	u32 b;

	for (b = 0; b < KWQ_STATS_BUCKETS; b++)
		n += h[b];
	return n;
}

#define MFIELD(f)	{ #f, offsetof(struct kwq_stats, f) }
static const struct {
	const char *name;
	size_t off;
} mfields[] = {
	MFIELD(queued), MFIELD(processing), MFIELD(dirty_processing), MFIELD(waiting),
	MFIELD(items), MFIELD(max_items), MFIELD(adds), MFIELD(dedups), MFIELD(gets),
	MFIELD(dones), MFIELD(requeues), MFIELD(refused), MFIELD(fired), MFIELD(cancels),
	MFIELD(absorbed), MFIELD(waits_dropped), MFIELD(lease_requeues),
	MFIELD(backoff_keys), MFIELD(rate_limited), MFIELD(tokens_returned),
	MFIELD(backoff_evictions), MFIELD(retries), MFIELD(forgets),
	MFIELD(unfinished_work_ns), MFIELD(longest_running_ns),
	MFIELD(queue_latency_sum_ns), MFIELD(work_duration_sum_ns),
	MFIELD(processing_expiries), MFIELD(debounced), MFIELD(debounce_capped),
	MFIELD(payloads_replaced), MFIELD(payload_bytes),
};

static u64 mfield(const struct kwq_stats *st, u32 f)
{
	return *(const u64 *)((const u8 *)st + mfields[f].off);
}

/* After every step: everything the queue shows against the model. */
static void mcompare(struct mrun *r)
{
	struct kwq_stats *w = &r->want, *g = &r->got;
	s64 next, oldest = KTIME_MAX;
	u32 i, f;
	char what[48];

	w->queued = r->nready;
	w->processing = M_PROCESSING(r);
	w->dirty_processing = M_DIRTY_PROC(r);
	w->waiting = M_WAITING(r);
	w->items = M_ITEMS(r);
	w->max_items = r->cfg.max_items;
	w->backoff_keys = M_IDLE(r);
	w->state = r->shut ? KWQ_STATE_SHUTTING_DOWN : 0;
	w->unfinished_work_ns = 0;
	for (i = 0; i < MKEYS; i++) {
		if (!r->k[i].processing)
			continue;
		w->unfinished_work_ns += r->now - r->k[i].taken;
		oldest = min(oldest, r->k[i].taken);
	}
	w->longest_running_ns = oldest == KTIME_MAX ? 0 : r->now - oldest;
	w->queue_latency_sum_ns = r->lat_sum;
	w->work_duration_sum_ns = r->work_sum;
	w->payload_bytes = 0;
	for (i = 0; i < MKEYS; i++)
		w->payload_bytes += r->k[i].plen;

	mexpect(r, "kwq_len", r->nready, kwq_len(r->q));
	mexpect(r, "kwq_shutting_down", r->shut, kwq_shutting_down(r->q));
	kwq_stats(r->q, g);
	mexpect(r, "stats.state", w->state, g->state);
	for (f = 0; f < ARRAY_SIZE(mfields); f++) {
		scnprintf(what, sizeof(what), "stats.%s", mfields[f].name);
		mexpect(r, what, mfield(w, f), mfield(g, f));
	}
	mexpect(r, "queue_latency observations", w->gets, hist_count(g->queue_latency));
	mexpect(r, "work_duration observations", w->dones, hist_count(g->work_duration));
	for (i = 0; i < MKEYS; i++) {
		scnprintf(what, sizeof(what), "num_requeues(k%u)", i);
		mexpect(r, what, r->k[i].failures,
			kwq_num_requeues(r->q, mkey_bytes[i], mkey_len[i]));
	}
	/* The queue's timer must be armed no later than the next event. */
	next = m_next_event(r);
	if (r->fc.programmed > next)
		mfail(r, "timer armed for %lld, model's next event at %lld",
		      (long long)r->fc.programmed, (long long)next);
}

/* The ticket a done or requeue names. */
static u64 mticket(const struct mrun *r, const struct mop *op)
{
	const struct mkey *k = &r->k[op->key];
	u32 j;

	switch (op->mode) {
	case TK_ZERO:
		return 0;
	case TK_LIVE:
		if (k->processing)
			return k->ticket;	/* 0 if taken by kwq_get() */
		fallthrough;
	case TK_STALE:
		return k->dead_ticket ?: U64_MAX - op->key;
	case TK_OTHER:
		for (j = 0; j < MKEYS; j++)
			if (j != op->key && r->k[j].processing && r->k[j].ticket)
				return r->k[j].ticket;
		if (r->last_ticket && r->last_ticket != k->ticket)
			return r->last_ticket;
		fallthrough;
	default:
		return U64_MAX - 16 - op->key;
	}
}

static void mticket_check(struct mrun *r, u32 i, u64 ticket)
{
	if (!ticket || ticket <= r->last_ticket)
		mfail(r, "get: ticket %llu after %llu (must be non-zero and increasing)",
		      ticket, r->last_ticket);
	r->last_ticket = ticket;
	r->k[i].ticket = ticket;
}

/* A get through the API the op names; compares len, bytes and ticket. */
static int mdo_get(struct mrun *r, const struct mop *op, u32 i, int want, u32 wlen,
		   int *got)
{
	u32 len = 0, cap = op->arg;
	u64 ticket = 0;
	int ret;

	memset(r->buf, 0xa5, sizeof(r->buf));
	if (op->api)
		ret = kwq_get_ticket(r->q, r->buf, cap, &len, &ticket, KWQ_NOWAIT);
	else
		ret = kwq_get(r->q, r->buf, cap, &len, KWQ_NOWAIT);
	*got = ret;
	mexpect(r, "get", want, ret);
	if (want == ret && (ret == 0 || ret == -EMSGSIZE))
		mexpect(r, "get: length", wlen, len);
	if (want == ret && ret == 0) {
		if (memcmp(r->buf, mkey_bytes[i], wlen))
			mfail(r, "get: bytes of k%u differ", i);
		if (op->api)
			mticket_check(r, i, ticket);
	}
	return ret;
}

static const u8 *mbad_ptr(u32 kind, u32 *len)
{
	switch (kind) {
	case 0:
		*len = 1;
		return NULL;
	case 1:
		*len = 0;
		return mkey_bytes[0];
	default:
		*len = KWQ_KEY_MAX + 1;
		return mkey_long;
	}
}

/* An entry of a batch: a key of the universe, or MKEYS for an invalid one. */
static void mbatch_key(struct kwq_key *e, u32 k)
{
	e->key = k < MKEYS ? mkey_bytes[k] : NULL;
	e->len = k < MKEYS ? mkey_len[k] : 1;
	e->ticket = 0;
}

/* As kwq_add_policy() for each key in turn, stopping at the first error. */
static int madd_batch(struct mrun *r, const struct mop *op, int *got)
{
	struct kwq_key keys[MBATCH];
	u32 res[MBATCH], wres[MBATCH], e, n = op->arg;
	int ret = 0;

	for (e = 0; e < n; e++)
		mbatch_key(&keys[e], MB_KEY(op->val, e));
	if (op->mode > KWQ_POLICY_STRICT) {
		ret = -EINVAL;
		e = 0;
	} else {
		for (e = 0; e < n; e++) {
			ret = MB_KEY(op->val, e) < MKEYS ? m_add(r, MB_KEY(op->val, e), op->mode) :
			      -EINVAL;
			if (ret < 0)
				break;
			wres[e] = ret;
		}
	}
	memset(res, 0xff, sizeof(res));
	*got = kwq_add_batch(r->q, keys, n, op->mode, res);
	ret = e ? e : ret;
	for (n = 0; ret == *got && n < e; n++)
		mexpect(r, "add_batch: result", wres[n], res[n]);
	return ret;
}

/* As kwq_done_ticket() with each entry's ticket, stopping at the first error. */
static int mdone_batch(struct mrun *r, const struct mop *op, int *got)
{
	struct kwq_key keys[MBATCH];
	u32 res[MBATCH], wres[MBATCH], e, n = op->arg;
	struct mop t = {};
	int ret = 0;

	for (e = 0; e < n; e++) {
		mbatch_key(&keys[e], MB_KEY(op->val, e));
		t.key = MB_KEY(op->val, e);
		t.mode = MB_MODE(op->val, e);
		if (t.key < MKEYS)
			keys[e].ticket = mticket(r, &t);
	}
	for (e = 0; e < n; e++) {
		ret = MB_KEY(op->val, e) < MKEYS ?
		      m_done(r, MB_KEY(op->val, e), keys[e].ticket) : -EINVAL;
		if (ret < 0)
			break;
		wres[e] = ret;
	}
	memset(res, 0xff, sizeof(res));
	*got = kwq_done_batch(r->q, keys, n, res);
	ret = e ? e : ret;
	for (n = 0; ret == *got && n < e; n++)
		mexpect(r, "done_batch: result", wres[n], res[n]);
	return ret;
}

/*
 * Ready keys in FIFO order, up to n or as many as fit in the buffer; the
 * first waits like a get (here: KWQ_NOWAIT).
 */
static int mget_batch(struct mrun *r, const struct mop *op, int *got)
{
	struct kwq_key out[MBATCH + 1];
	u32 e, n = op->arg, size = op->val, off = 0, len, head[MBATCH + 1];
	int ret = 0;

	if (!n || size < KWQ_KEY_MAX) {
		ret = -EINVAL;
		e = 0;
	} else if (r->cfg.payload_max) {
		/* No room for payloads: refused, nothing taken. */
		ret = -EOPNOTSUPP;
		e = 0;
	} else {
		for (e = 0; e < n; e++) {
			head[e] = r->ready[m_next(r)];
			if (r->nready && mkey_len[head[e]] > size - off)
				break;
			ret = m_get(r, size - off, &len);
			if (ret)
				break;
			off += len;
		}
		ret = e ? e : ret;
	}
	memset(out, 0, sizeof(out));
	memset(r->bbuf, 0xa5, sizeof(r->bbuf));
	*got = kwq_get_batch(r->q, out, n, r->bbuf, size, KWQ_NOWAIT);
	for (n = 0; ret > 0 && ret == *got && n < e; n++) {
		mexpect(r, "get_batch: length", mkey_len[head[n]], out[n].len);
		if (out[n].len == mkey_len[head[n]] &&
		    (!out[n].key || memcmp(out[n].key, mkey_bytes[head[n]], out[n].len)))
			mfail(r, "get_batch: entry %u: bytes of k%u differ", n, head[n]);
		mticket_check(r, head[n], out[n].ticket);
	}
	return ret;
}

/* An add with a payload (kwq_add_ex()): now, after a delay or debounced. */
static int madd_payload(struct mrun *r, const struct mop *op, u32 i, int *got)
{
	struct kwq_add_opts o = { .payload_len = op->arg, .payload = op->arg ? r->pbuf : NULL };
	int want = m_payload_check(r, op->arg);

	/* The bytes of the value the model gives the key if it stores them. */
	mpayload_fill(r->pbuf, r->pseq + 1, op->arg);
	if (op->mode == 0) {
		o.flags = op->api;
		if (!want && !r->dead)
			want = m_add(r, i, op->api);
	} else {
		o.delay_ns = op->val;
		if (op->mode == 2) {
			o.flags = KWQ_AFTER_DEBOUNCE;
			o.max_wait_ns = op->max_wait;
		}
		if (!want && !r->dead)
			want = m_prepare(r, i);
		if (!want && !r->dead) {
			r->want.retries++;
			want = op->mode == 2 ? m_debounce(r, i, op->val, op->max_wait) :
			       m_wait(r, i, op->val, false);
		}
	}
	if (!want && r->dead)
		want = -EIDRM;
	if (want >= 0)
		m_payload_store(r, i, op->arg);
	*got = kwq_add_ex(r->q, mkey_bytes[i], mkey_len[i], &o);
	return want;
}

/* A get of the key with its payload: a too small payload buffer is -EMSGSIZE too. */
static int mget_payload(struct mrun *r, const struct mop *op, u32 *head, int *got)
{
	u32 cap = op->arg, pcap = (u32)op->val, len = 0, plen = U32_MAX, wlen = 0, wplen = 0;
	u32 i = r->ready[m_next(r)], pval = 0;
	u8 *pb = op->mode ? r->pbuf : NULL;
	u64 ticket = 0;
	int want;

	if (r->nready) {
		wplen = r->k[i].plen;
		pval = r->k[i].pval;
	}
	if (r->nready && pb && wplen > pcap) {
		wlen = mkey_len[i];
		want = -EMSGSIZE;
	} else {
		want = m_get(r, cap, &wlen);
	}
	memset(r->buf, 0xa5, sizeof(r->buf));
	memset(r->pbuf, 0xa5, sizeof(r->pbuf));
	*got = kwq_get_payload(r->q, r->buf, cap, &len, pb, pcap, &plen, &ticket, KWQ_NOWAIT);
	*head = i;
	mexpect(r, "get_payload", want, *got);
	if (want != *got || (want && want != -EMSGSIZE))
		return want;
	mexpect(r, "get_payload: length", wlen, len);
	mexpect(r, "get_payload: payload length", wplen, plen);
	if (want)
		return want;
	if (memcmp(r->buf, mkey_bytes[i], wlen))
		mfail(r, "get_payload: bytes of k%u differ", i);
	mpayload_fill(r->pwant, pval, wplen);
	if (pb && memcmp(r->pbuf, r->pwant, wplen))
		mfail(r, "get_payload: payload of k%u differs (value %u, %u bytes)", i, pval,
		      wplen);
	mticket_check(r, i, ticket);
	return want;
}

/*
 * After kwq_destroy(), through another reference: every call with valid
 * arguments fails with -EIDRM (kwq-core.rst), the queue reports itself
 * destroyed and shutting down, and it wants no timer any more (kwq.h).
 */
static bool mexec_dead(struct mrun *r, const struct mop *op, u32 step)
{
	const u8 *key = mkey_bytes[op->key];
	u32 len = mkey_len[op->key], glen, e, n = max_t(u32, op->arg, 1);
	struct kwq_key keys[MBATCH + 1];
	u32 res[MBATCH + 1];
	int got = -EIDRM, dr = -1, want = -EIDRM;
	u64 ticket = 0;
	char a[24];

	for (e = 0; e <= MBATCH; e++)
		mbatch_key(&keys[e], op->key);
	n = min_t(u32, n, MBATCH);
	switch (op->type) {
	case MOP_ADD:
		got = kwq_add(r->q, key, len);
		break;
	case MOP_ADD_ATOMIC:
		got = kwq_add_atomic(r->q, key, len);
		break;
	case MOP_ADD_POLICY:
		got = kwq_add_policy(r->q, key, len, op->arg & KWQ_ADD_POLICY_MASK);
		break;
	case MOP_ADD_AFTER:
		got = kwq_add_after(r->q, key, len, op->val,
				    op->arg & (KWQ_ADD_POLICY_MASK | KWQ_AFTER_REPLACE));
		break;
	case MOP_ADD_DEBOUNCED:
		got = kwq_add_debounced(r->q, key, len, MS(1), MS(2));
		break;
	case MOP_ADD_EX: {
		/* Valid options: a destroyed queue answers -EIDRM. */
		struct kwq_add_opts o = {
			.priority = r->cfg.prio ? clamp_t(s32, (s32)op->arg, KWQ_PRIORITY_MIN,
							  KWQ_PRIORITY_MAX) : 0,
		};

		got = kwq_add_ex(r->q, key, len, &o);
		break;
	}
	case MOP_CANCEL:
		got = kwq_cancel(r->q, key, len);
		break;
	case MOP_ADD_RL:
		got = kwq_add_rate_limited(r->q, key, len);
		break;
	case MOP_FORGET:
		got = kwq_forget(r->q, key, len);
		break;
	case MOP_NUM_REQUEUES:
		got = kwq_num_requeues(r->q, key, len);
		break;
	case MOP_GET:
		got = op->api ? kwq_get_ticket(r->q, r->buf, KWQ_KEY_MAX, &glen, &ticket,
					       KWQ_NOWAIT) :
				kwq_get(r->q, r->buf, KWQ_KEY_MAX, &glen, KWQ_NOWAIT);
		break;
	case MOP_DONE:
	case MOP_REQUEUE:
		ticket = op->api ? mticket(r, op) : 0;
		if (op->type == MOP_DONE)
			got = op->api ? kwq_done_ticket(r->q, key, len, ticket) :
					kwq_done(r->q, key, len);
		else
			got = op->api ? kwq_requeue_ticket(r->q, key, len, ticket) :
					kwq_requeue(r->q, key, len);
		break;
	case MOP_DONE_GET:
		got = kwq_done_get(r->q, key, len, &dr, r->buf, KWQ_KEY_MAX, &glen, KWQ_NOWAIT);
		if (dr != -1)
			mfail(r, "done_get after destroy: done_result %d", dr);
		if (r->cfg.payload_max)
			want = -EOPNOTSUPP;
		break;
	case MOP_ADD_PAYLOAD:
		want = madd_payload(r, op, op->key, &got);
		break;
	case MOP_GET_PAYLOAD:
		got = kwq_get_payload(r->q, r->buf, KWQ_KEY_MAX, &glen, r->pbuf, MPAYLOAD_MAX,
				      &glen, &ticket, KWQ_NOWAIT);
		break;
	case MOP_STEP:
		r->now += op->val;
		r->fc.now = ns_to_ktime(r->now);
		if (r->fc.programmed <= r->fc.now)
			kwq_run_due(r->q);
		got = -EIDRM;
		break;
	case MOP_SHUTDOWN:
		kwq_shutdown(r->q);
		break;
	case MOP_DRAIN:
		got = kwq_shutdown_drain(r->q, KWQ_NOWAIT, op->arg & KWQ_DRAIN_FLUSH_WAITING);
		break;
	case MOP_ADD_BATCH:
		got = kwq_add_batch(r->q, keys, n, op->mode & KWQ_ADD_POLICY_MASK, res);
		break;
	case MOP_GET_BATCH:
		got = kwq_get_batch(r->q, keys, n, r->bbuf, KWQ_KEY_MAX, KWQ_NOWAIT);
		if (r->cfg.payload_max)
			want = -EOPNOTSUPP;
		break;
	case MOP_DONE_BATCH:
		got = kwq_done_batch(r->q, keys, n, res);
		break;
	default:	/* bad keys and a second destroy: nothing to call */
		break;
	}
	/* Refusals that do not look at the queue's state come first. */
	mexpect(r, mop_name[op->type], want, got);
	kwq_stats(r->q, &r->got);
	mexpect(r, "stats.state after destroy", KWQ_STATE_DESTROYED | KWQ_STATE_SHUTTING_DOWN,
		r->got.state);
	mexpect(r, "kwq_shutting_down after destroy", 1, kwq_shutting_down(r->q));
	mexpect(r, "num_requeues after destroy", -EIDRM,
		kwq_num_requeues(r->q, mkey_bytes[0], mkey_len[0]));
	if (r->fc.programmed != KTIME_MAX)
		mfail(r, "destroyed queue keeps its timer armed for %lld",
		      (long long)r->fc.programmed);
	if (r->cov && !r->failed)
		r->cov->outcome[MOP_DESTROY][8 + 7]++;
	if (r->logging) {
		scnprintf(r->log[r->nlog % MLOG_LINES], MLOG_LEN, "%u: %s (destroyed) = %s%s%s",
			  step + 1, mop_name[op->type], mret(a, sizeof(a), got),
			 r->failed ? "  <-- " : "", r->failed ? r->why : "");
		r->nlog++;
	}
	return !r->failed;
}

/* Run one operation on both; false on the first mismatch. */
static bool mexec(struct mrun *r, const struct mop *op, u32 step)
{
	const u8 *key = mkey_bytes[op->key];
	u32 len = mkey_len[op->key], i = op->key, wlen = 0;
	int want = 0, got = 0, dr = -1;	/* -1: KWQ_DONE_NOT_RUN */
	u64 ticket = 0;
	s64 delay = op->val;
	char a[24], b[24];
	int n = 0;

	if (r->dead)
		return mexec_dead(r, op, step);
	switch (op->type) {
	case MOP_ADD:
		want = m_add(r, i, 0);
		got = kwq_add(r->q, key, len);
		break;
	case MOP_ADD_PAYLOAD:
		want = madd_payload(r, op, i, &got);
		break;
	case MOP_GET_PAYLOAD:
		want = mget_payload(r, op, &i, &got);
		break;
	case MOP_ADD_ATOMIC:
		want = m_add(r, i, 0);
		got = kwq_add_atomic(r->q, key, len);
		break;
	case MOP_ADD_POLICY:
		want = op->arg > KWQ_POLICY_STRICT ? -EINVAL : m_add(r, i, op->arg);
		got = kwq_add_policy(r->q, key, len, op->arg);
		break;
	case MOP_ADD_AFTER:
		if (op->mode != DL_FIXED && r->k[i].waiting) {
			delay = r->k[i].deadline - r->now;
			delay += op->mode == DL_BEFORE ? -1 : op->mode == DL_AFTER ? 1 : 0;
		}
		if (op->arg & ~(KWQ_ADD_POLICY_MASK | KWQ_AFTER_REPLACE)) {
			want = -EINVAL;
		} else if (delay <= 0) {
			want = m_add(r, i, op->arg & KWQ_ADD_POLICY_MASK);
		} else {
			want = m_prepare(r, i);
			if (!want) {
				r->want.retries++;
				want = m_wait(r, i, delay, op->arg & KWQ_AFTER_REPLACE);
			}
		}
		got = kwq_add_after(r->q, key, len, delay, op->arg);
		break;
	case MOP_ADD_EX: {
		struct kwq_add_opts o = { .priority = (s32)op->arg, .delay_ns = delay };

		if (r->cfg.prio ? o.priority < KWQ_PRIORITY_MIN || o.priority > KWQ_PRIORITY_MAX :
				  o.priority) {
			want = -EINVAL;
		} else {
			r->add_prio = o.priority;
			if (delay <= 0) {
				want = m_add(r, i, 0);
			} else {
				want = m_prepare(r, i);
				if (!want) {
					r->want.retries++;
					want = m_wait(r, i, delay, false);
				}
			}
			r->add_prio = 0;
		}
		got = kwq_add_ex(r->q, key, len, &o);
		break;
	}
	case MOP_ADD_DEBOUNCED:
		if (delay <= 0 || op->max_wait < (u64)delay) {
			want = -EINVAL;
		} else {
			want = m_prepare(r, i);
			if (!want) {
				r->want.retries++;
				want = m_debounce(r, i, delay, op->max_wait);
			}
		}
		got = kwq_add_debounced(r->q, key, len, delay, op->max_wait);
		break;
	case MOP_CANCEL:
		want = m_cancel(r, i);
		got = kwq_cancel(r->q, key, len);
		break;
	case MOP_ADD_RL:
		want = m_add_rate_limited(r, i);
		got = kwq_add_rate_limited(r->q, key, len);
		break;
	case MOP_FORGET:
		want = m_forget(r, i);
		got = kwq_forget(r->q, key, len);
		break;
	case MOP_NUM_REQUEUES:
		want = r->k[i].failures;
		got = kwq_num_requeues(r->q, key, len);
		break;
	case MOP_GET:
		i = r->ready[m_next(r)];
		want = m_get(r, op->arg, &wlen);
		mdo_get(r, op, i, want, wlen, &got);
		break;
	case MOP_DONE:
		ticket = op->api ? mticket(r, op) : 0;
		want = m_done(r, i, ticket);
		got = op->api ? kwq_done_ticket(r->q, key, len, ticket) : kwq_done(r->q, key, len);
		break;
	case MOP_REQUEUE:
		ticket = op->api ? mticket(r, op) : 0;
		want = m_requeue(r, i, ticket);
		got = op->api ? kwq_requeue_ticket(r->q, key, len, ticket) :
				kwq_requeue(r->q, key, len);
		break;
	case MOP_DONE_GET: {
		/* No room for the next key's payload: refused before the done. */
		int wdr = r->cfg.payload_max ? -EOPNOTSUPP : m_done(r, i, 0);
		u32 glen = 0, head = r->ready[m_next(r)];

		want = wdr < 0 ? wdr : m_get(r, op->arg, &wlen);
		if (wdr == -EOPNOTSUPP)
			head = i;
		memset(r->buf, 0xa5, sizeof(r->buf));
		got = kwq_done_get(r->q, key, len, &dr, r->buf, op->arg, &glen, KWQ_NOWAIT);
		if ((wdr < 0 ? -1 : wdr) != dr)
			mfail(r, "done_get: done_result: model %d, queue %d (-1: KWQ_DONE_NOT_RUN)",
			      wdr < 0 ? -1 : wdr, dr);
		if (want == got && (got == 0 || got == -EMSGSIZE))
			mexpect(r, "done_get: length", wlen, glen);
		if (want == 0 && got == 0 && memcmp(r->buf, mkey_bytes[head], wlen))
			mfail(r, "done_get: bytes of k%u differ", head);
		i = head;
		break;
	}
	case MOP_STEP: {
		s64 target = r->now + op->val, next, when;
		u32 guard = 0;

		for (;;) {
			next = m_next_event(r);
			when = min_t(s64, next, r->fc.programmed);
			if (when > target)
				break;
			if (++guard > 4 * MKEYS + 8) {
				mfail(r, "step: the timer keeps firing at %lld", (long long)when);
				break;
			}
			r->now = max(r->now, when);
			r->fc.now = ns_to_ktime(r->now);
			if (next <= r->now && r->fc.programmed > r->now) {
				mfail(r, "step: due at %lld, timer armed for %lld", (long long)next,
				      (long long)r->fc.programmed);
				break;
			}
			if (r->fc.programmed <= r->now)
				kwq_run_due(r->q);
			m_run_due(r);
		}
		r->now = target;
		r->fc.now = ns_to_ktime(target);
		break;
	}
	case MOP_BAD_KEY: {
		const u8 *p = mbad_ptr(op->api, &len);

		want = -EINVAL;
		switch (op->mode) {
		case 0:
			got = kwq_add(r->q, p, len);
			break;
		case 1:
			got = kwq_add_after(r->q, p, len, MS(1), 0);
			break;
		case 2:
			got = kwq_add_rate_limited(r->q, p, len);
			break;
		case 3:
			got = kwq_cancel(r->q, p, len);
			break;
		case 4:
			got = kwq_forget(r->q, p, len);
			break;
		case 5:
			got = kwq_num_requeues(r->q, p, len);
			break;
		case 6:
			got = kwq_done(r->q, p, len);
			break;
		case 7:
			got = kwq_requeue(r->q, p, len);
			break;
		case 8:
			got = kwq_add_debounced(r->q, p, len, MS(1), MS(2));
			break;
		default:
			got = kwq_done_ticket(r->q, p, len, 1);
			break;
		}
		break;
	}
	case MOP_SHUTDOWN:
		m_end_waiting(r, false);
		kwq_shutdown(r->q);
		break;
	case MOP_ADD_BATCH:
		want = madd_batch(r, op, &got);
		break;
	case MOP_GET_BATCH:
		want = mget_batch(r, op, &got);
		break;
	case MOP_DONE_BATCH:
		want = mdone_batch(r, op, &got);
		break;
	case MOP_DESTROY:
		/* Our own reference keeps the memory; the queue is gone. */
		kwq_get_ref(r->q);
		kwq_destroy(r->q);
		r->dead = true;
		return mexec_dead(r, op, step);
	case MOP_DRAIN:
		if (op->arg & ~KWQ_DRAIN_FLUSH_WAITING) {
			want = -EINVAL;
		} else {
			m_end_waiting(r, op->arg & KWQ_DRAIN_FLUSH_WAITING);
			want = !r->nready && !M_PROCESSING(r) ? 0 : -ETIMEDOUT;
		}
		got = kwq_shutdown_drain(r->q, KWQ_NOWAIT, op->arg);
		break;
	}
	if (op->type != MOP_GET && op->type != MOP_GET_PAYLOAD)
		mexpect(r, mop_name[op->type], want, got);
	if (!r->failed)
		mcompare(r);

	if (r->cov && !r->failed) {
		u32 s = MSLOTS - 1, e;

		if (want >= 0 && want < 8)
			s = want;
		for (e = 0; e < ARRAY_SIZE(mslot_errno); e++)
			if (want == -mslot_errno[e])
				s = 8 + e;
		r->cov->outcome[op->type][s]++;
		if (op->type == MOP_GET && want == -EAGAIN && r->shut)
			r->cov->get_eagain_shut++;
		if ((op->type == MOP_DONE || op->type == MOP_REQUEUE) && want == -ENOENT &&
		    ticket && ticket == r->k[i].dead_ticket)
			r->cov->stale_enoent++;
	}

	if (!r->logging)
		return !r->failed;
	switch (op->type) {
	case MOP_ADD_POLICY:
		n = scnprintf(r->line, sizeof(r->line), "add_policy k%u policy=%u", op->key,
			      op->arg);
		break;
	case MOP_DRAIN:
		n = scnprintf(r->line, sizeof(r->line), "drain flags=%#x", op->arg);
		break;
	case MOP_ADD_AFTER:
		n = scnprintf(r->line, sizeof(r->line), "add_after k%u delay=%lld flags=%#x",
			      op->key, (long long)delay, op->arg);
		break;
	case MOP_ADD_DEBOUNCED:
		n = scnprintf(r->line, sizeof(r->line),
			      "add_debounced k%u delay=%lld max_wait=%llu", op->key,
			      (long long)delay, op->max_wait);
		break;
	case MOP_ADD_EX:
		n = scnprintf(r->line, sizeof(r->line), "add_ex k%u priority=%d delay=%lld",
			      op->key, (s32)op->arg, (long long)delay);
		break;
	case MOP_GET:
		n = scnprintf(r->line, sizeof(r->line), "%s cap=%u", op->api ? "get_ticket" : "get",
			      op->arg);
		if (want == 0)
			n += scnprintf(r->line + n, sizeof(r->line) - n, " -> k%u", i);
		break;
	case MOP_DONE:
	case MOP_REQUEUE:
		n = scnprintf(r->line, sizeof(r->line), "%s%s k%u ticket=%llu", mop_name[op->type],
			      op->api ? "_ticket" : "", op->key, ticket);
		break;
	case MOP_DONE_GET:
		n = scnprintf(r->line, sizeof(r->line), "done_get k%u cap=%u", op->key, op->arg);
		break;
	case MOP_ADD_PAYLOAD:
		n = scnprintf(r->line, sizeof(r->line),
			      "add_payload k%u len=%u mode=%u policy=%u delay=%lld max_wait=%llu",
			      op->key, op->arg, op->mode, op->api, (long long)op->val,
			      op->max_wait);
		break;
	case MOP_GET_PAYLOAD:
		n = scnprintf(r->line, sizeof(r->line), "get_payload cap=%u pbuf=%u pcap=%llu",
			      op->arg, op->mode, (u64)op->val);
		if (want == 0)
			n += scnprintf(r->line + n, sizeof(r->line) - n, " -> k%u (%u bytes)", i,
				       r->k[i].plen);
		break;
	case MOP_STEP:
		n = scnprintf(r->line, sizeof(r->line), "step %lld ns (now %lld)",
			      (long long)op->val, (long long)r->now);
		break;
	case MOP_BAD_KEY:
		n = scnprintf(r->line, sizeof(r->line), "bad key (call %u, kind %u)", op->mode,
			      op->api);
		break;
	case MOP_SHUTDOWN:
		n = scnprintf(r->line, sizeof(r->line), "shutdown");
		break;
	case MOP_ADD_BATCH:
	case MOP_DONE_BATCH:
	case MOP_GET_BATCH:
		n = scnprintf(r->line, sizeof(r->line), "%s n=%u val=%#llx mode=%u",
			      mop_name[op->type], op->arg, (u64)op->val, op->mode);
		break;
	default:
		n = scnprintf(r->line, sizeof(r->line), "%s k%u", mop_name[op->type], op->key);
		break;
	}
	n = min_t(int, n, sizeof(r->line) - 1);
	if (op->type != MOP_STEP && op->type != MOP_SHUTDOWN)
		scnprintf(r->line + n, sizeof(r->line) - n, " = %s%s%s",
			  mret(a, sizeof(a), want), want == got ? "" : ", queue ",
			  want == got ? "" : mret(b, sizeof(b), got));
	scnprintf(r->log[r->nlog % MLOG_LINES], MLOG_LEN, "%u: %s%s%s", step + 1, r->line,
		  r->failed ? "  <-- " : "", r->failed ? r->why : "");
	r->nlog++;
	return !r->failed;
}

/* ---------------------------------------------------------------------
 * Random runs.
 */

static void mcfg_gen(struct mcfg *c, u64 *s)
{
	struct kwq_limiter *l = c->rl.limiters;
	u32 kind = mrand_below(s, 6), n = 0;

	memset(c, 0, sizeof(*c));
	c->policy = mrand_below(s, 4);
	c->timeout = mrand_below(s, 2) ? MS(5 + mrand_below(s, 36)) : 0;
	c->max_items = 3 + mrand_below(s, 8);
	c->max_idle = 1 + mrand_below(s, 4);
	if (kind == 0 || kind == 1) {
		l[n].type = KWQ_LIMITER_EXPONENTIAL;
		l[n].base_ns = MS(1 + mrand_below(s, 4));
		l[n].max_ns = l[n].base_ns << mrand_below(s, 6);
		n++;
	}
	if (kind == 2 || kind == 3) {
		l[n].type = KWQ_LIMITER_FAST_SLOW;
		l[n].max_fast = mrand_below(s, 4);
		l[n].fast_ns = mrand_below(s, 2) ? MS(1) : 0;
		l[n].slow_ns = MS(5 + mrand_below(s, 26));
		n++;
	}
	if (kind == 1 || kind == 3 || kind == 4) {
		static const u64 rates[] = { 1000000, 200000, 100000, KWQ_RATE_INF };

		l[n].type = KWQ_LIMITER_BUCKET;
		l[n].rate_mhz = rates[mrand_below(s, ARRAY_SIZE(rates))];
		l[n].burst = mrand_below(s, 4);
		n++;
	}
	c->rl.count = n;	/* kind 5: no limiter */
	if (mrand_below(s, 3) == 0)
		c->rl.max_wait_ns = MS(2 + mrand_below(s, 39));
	/* Drawn last: the other settings of a seed stay as they were. */
	c->prio = mrand_below(s, 2);
	if (c->prio)
		c->aging = mrand_below(s, 4) ? MS(1 + mrand_below(s, 10)) : 0;
	if (mrand_below(s, 2))
		c->payload_max = 1 + mrand_below(s, MPAYLOAD_MAX);
	c->tenant = mrand_below(s, 4);
	c->tenant = c->tenant > 2 ? 0 : c->tenant;
}

static void mcfg_str(char *buf, size_t n, const struct mcfg *c)
{
	static const char * const pol[] = { "default", "keep", "promote", "strict" };
	size_t len = scnprintf(buf, n, "policy=%s timeout=%llu max_items=%u max_backoff=%u",
			       pol[c->policy], c->timeout, c->max_items, c->max_idle);
	u32 l;

	len += scnprintf(buf + len, n - len, " limiters=");
	for (l = 0; l < c->rl.count; l++) {
		const struct kwq_limiter *x = &c->rl.limiters[l];

		if (x->type == KWQ_LIMITER_EXPONENTIAL)
			len += scnprintf(buf + len, n - len, "exp(%llu..%llu)", x->base_ns,
					 x->max_ns);
		else if (x->type == KWQ_LIMITER_FAST_SLOW)
			len += scnprintf(buf + len, n - len, "fastslow(%u,%llu,%llu)",
					 x->max_fast, x->fast_ns, x->slow_ns);
		else
			len += scnprintf(buf + len, n - len, "bucket(%llumHz,%u)", x->rate_mhz,
					 x->burst);
	}
	if (c->rl.max_wait_ns)
		len += scnprintf(buf + len, n - len, " max_wait=%llu", c->rl.max_wait_ns);
	if (c->prio)
		len += scnprintf(buf + len, n - len, " priority aging=%llu", c->aging);
	if (c->payload_max)
		len += scnprintf(buf + len, n - len, " payload_max=%u", c->payload_max);
	if (c->tenant)
		scnprintf(buf + len, n - len, " tenant_depth=%u", c->tenant);
}

static u32 mop_weight_sum(void)
{
	u32 t, sum = 0;

	for (t = 0; t < MOP_NR; t++)
		sum += mop_weight[t];
	return sum;
}

/* A processing key (most of the time, if any), else any key. */
static u32 mkey_gen(struct mrun *r, u64 *s)
{
	u32 nproc = M_PROCESSING(r), x, k;

	if (!nproc || !mrand_below(s, 4))
		return mrand_below(s, MKEYS);
	x = mrand_below(s, nproc);
	for (k = 0; k < MKEYS; k++)
		if (r->k[k].processing && !x--)
			break;
	return k;
}

static u32 mticket_mode_gen(u64 *s)
{
	u32 x = mrand_below(s, 20);

	return x < 13 ? TK_LIVE : x < 16 ? TK_STALE : x < 18 ? TK_OTHER : x < 19 ? TK_FUTURE :
	       TK_ZERO;
}

static void mop_gen(struct mrun *r, struct mop *op, u64 *s)
{
	u32 w = mrand_below(s, mop_weight_sum()), t = 0, x, e;

	memset(op, 0, sizeof(*op));
	while (t < MOP_NR - 1 && w >= mop_weight[t]) {
		w -= mop_weight[t];
		t++;
	}
	/* Runs longer than 500 steps shut down as late, in proportion. */
	if ((t == MOP_SHUTDOWN || t == MOP_DRAIN) && r->gen_steps > 500 &&
	    mrand_below(s, r->gen_steps) >= 500)
		t = MOP_STEP;
	if (r->gen_left == 20 && !mrand_below(s, 4))
		t = MOP_DESTROY;
	op->type = t;
	op->key = mrand_below(s, MKEYS);
	if (t == MOP_DONE || t == MOP_REQUEUE || t == MOP_DONE_GET)
		op->key = mkey_gen(r, s);
	switch (t) {
	case MOP_ADD_POLICY:
		op->arg = mrand_below(s, 32) ? mrand_below(s, 4) : KWQ_POLICY_STRICT + 1;
		break;
	case MOP_ADD_AFTER:
		x = mrand_below(s, 20);
		if (x < 2)
			op->val = x ? -1 - (s64)mrand_below(s, 1000) : S64_MIN;
		else if (x < 4)
			op->val = 0;
		else if (x < 5)
			op->val = 1;
		else if (x < 15)
			op->val = MS(1 + mrand_below(s, 50));
		else if (x < 16)
			op->val = KWQ_DELAY_MAX_NS + mrand_below(s, 3);
		else if (x < 17)
			op->val = S64_MAX;
		else
			op->mode = DL_SAME + (x - 17);
		if (op->mode)
			op->val = MS(1 + mrand_below(s, 50));
		if (mrand_below(s, 3) == 0)
			op->arg |= KWQ_AFTER_REPLACE;
		if (mrand_below(s, 2))
			op->arg |= mrand_below(s, 4);
		if (mrand_below(s, 50) == 0)
			op->arg |= BIT(3 + mrand_below(s, 29));
		break;
	case MOP_ADD_DEBOUNCED:
		/*
		 * Bursts: short delays against steps of 1 to 60 ms, often
		 * capped, half of them to a key that waits (if one does).
		 */
		x = M_WAITING(r);
		if (x && mrand_below(s, 2)) {
			x = mrand_below(s, x);
			for (e = 0; e < MKEYS; e++)
				if (r->k[e].waiting && !x--)
					break;
			op->key = e;
		}
		x = mrand_below(s, 40);
		op->val = x == 0 ? -(s64)mrand_below(s, 2) : x == 1 ? KWQ_DELAY_MAX_NS + 1 :
			  MS(1 + mrand_below(s, 20));
		x = mrand_below(s, 40);
		op->max_wait = x == 0 ? (u64)op->val - 1 : x == 1 ? U64_MAX :
			       x < 20 ? (u64)op->val : (u64)op->val * (2 + mrand_below(s, 4));
		break;
	case MOP_ADD_EX:
		/* Mostly in range; a plain queue mostly gets 0. */
		x = mrand_below(s, 40);
		if (x == 0)
			op->arg = (u32)(mrand_below(s, 2) ? KWQ_PRIORITY_MAX + 1 :
					KWQ_PRIORITY_MIN - 1);
		else if (!r->cfg.prio && x < 30)
			op->arg = 0;
		else
			op->arg = (u32)(KWQ_PRIORITY_MIN + (s32)mrand_below(s, MPRIOS));
		if (!mrand_below(s, 4))
			op->val = MS(1 + mrand_below(s, 30));
		break;
	case MOP_GET:
	case MOP_DONE_GET:
		op->api = mrand_below(s, 5) != 0;
		op->arg = mrand_below(s, 10) ? KWQ_KEY_MAX : mrand_below(s, 40);
		break;
	case MOP_ADD_PAYLOAD:
		/* Lengths in the limit, mostly; none; or past it (-E2BIG, -EINVAL). */
		x = mrand_below(s, 20);
		op->arg = x == 0 ? 0 : x == 1 ? r->cfg.payload_max + 1 + mrand_below(s, 3) :
			  1 + mrand_below(s, max(r->cfg.payload_max, 1U));
		x = mrand_below(s, 4);
		op->mode = x == 3 ? 0 : x;	/* now, after a delay, debounced */
		op->api = mrand_below(s, 4);
		op->val = MS(1 + mrand_below(s, 20));
		op->max_wait = (u64)op->val * (1 + mrand_below(s, 4));
		break;
	case MOP_GET_PAYLOAD:
		op->arg = mrand_below(s, 10) ? KWQ_KEY_MAX : mrand_below(s, 40);
		op->mode = mrand_below(s, 5) != 0;	/* a payload buffer */
		op->val = mrand_below(s, 4) ? MPAYLOAD_MAX : mrand_below(s, MPAYLOAD_MAX);
		break;
	case MOP_DONE:
	case MOP_REQUEUE:
		op->api = mrand_below(s, 5) != 0;
		op->mode = mticket_mode_gen(s);
		break;
	case MOP_ADD_BATCH:
	case MOP_DONE_BATCH:
		op->arg = mrand_below(s, 16) ? 1 + mrand_below(s, MBATCH) : 0;
		for (e = 0; e < op->arg; e++) {
			x = t == MOP_ADD_BATCH ? mrand_below(s, MKEYS) : mkey_gen(r, s);
			if (mrand_below(s, 40) == 0)
				x = MKEYS;
			op->val |= (s64)x << (4 * e);
			if (t == MOP_DONE_BATCH)
				op->val |= (s64)mticket_mode_gen(s) << (16 + 4 * e);
		}
		op->mode = mrand_below(s, 40) ? mrand_below(s, 4) : KWQ_POLICY_STRICT + 1;
		break;
	case MOP_GET_BATCH:
		op->arg = mrand_below(s, 16) ? 1 + mrand_below(s, MBATCH + 1) : 0;
		op->val = KWQ_KEY_MAX + (mrand_below(s, 2) ? mrand_below(s, 600) : 0);
		if (mrand_below(s, 40) == 0)
			op->val = mrand_below(s, KWQ_KEY_MAX);
		break;
	case MOP_STEP:
		x = mrand_below(s, 20);
		if (x < 4)
			op->val = 0;
		else if (x < 10)
			op->val = 1 + mrand_below(s, (u32)MS(5));
		else if (x < 17)
			op->val = MS(1 + mrand_below(s, 60));
		else if (x < 19)
			op->val = MS(100 + mrand_below(s, 900));
		else
			op->val = KWQ_DELAY_MAX_NS + 1;
		break;
	case MOP_BAD_KEY:
		op->mode = mrand_below(s, 10);
		op->api = mrand_below(s, 3);
		break;
	case MOP_DRAIN:
		x = mrand_below(s, 10);
		op->arg = x < 5 ? 0 : x < 9 ? KWQ_DRAIN_FLUSH_WAITING : BIT(1);
		break;
	}
}

/*
 * Replay @ops[0..@n) on a fresh queue. Returns the index of the first
 * mismatch, or -1.
 */
static int mreplay(struct mrun *r, const struct mop *ops, u32 n)
{
	int fail = -1;
	u32 i;

	if (mrun_begin(r))
		return 0;
	for (i = 0; i < n; i++) {
		if (!mexec(r, &ops[i], i)) {
			fail = i;
			break;
		}
	}
	mrun_end(r);
	return fail;
}

/*
 * Shrink a failing sequence (it fails at its last op): leave out chunks,
 * halving their size, while some mismatch remains. @budget bounds the
 * steps replayed. Returns the new length.
 */
static u32 mshrink(struct mrun *r, struct mop *ops, u32 n, struct mop *tmp, u64 budget)
{
	u32 chunk = max(n / 2, 1U), start, len;
	bool removed;
	int fail;

	for (;;) {
		removed = false;
		for (start = 0; start < n && budget > n; ) {
			len = min(chunk, n - start);
			if (len == n)
				break;
			memcpy(tmp, ops, start * sizeof(*ops));
			memcpy(tmp + start, ops + start + len, (n - start - len) * sizeof(*ops));
			budget -= n;
			fail = mreplay(r, tmp, n - len);
			if (fail >= 0) {
				n = fail + 1;
				memcpy(ops, tmp, n * sizeof(*ops));
				removed = true;
			} else {
				start += len;
			}
		}
		if (budget <= n || (chunk == 1 && !removed))
			break;
		if (chunk > 1)
			chunk /= 2;
	}
	return n;
}

struct mcase {
	struct kunit *test;
	struct mrun *r;
	struct mop *ops, *tmp;
	u32 steps;
	u32 failed;
	u32 shrunk;	/* failures shrunk and printed in full */
	bool quiet;	/* the self-test: no details */
	u32 last_shrunk_len;
};

/* One seed: a random run; on a mismatch, report and shrink. Returns true if it passed. */
static bool mseed(struct mcase *c, u64 seed, u32 mutant)
{
	struct mrun *r = c->r;
	u64 s = seed;
	char cfg[200];
	u32 i, n, prefix;
	int fail = -1;

	mcfg_gen(&r->cfg, &s);
	r->mutant = mutant;
	r->logging = false;
	if (mrun_begin(r)) {
		KUNIT_FAIL(c->test, "seed %llu: %s", seed, r->why);
		return false;
	}
	for (i = 0; i < c->steps; i++) {
		r->gen_left = c->steps - i;
		r->gen_steps = c->steps;
		mop_gen(r, &c->ops[i], &s);
		if (!mexec(r, &c->ops[i], i)) {
			fail = i;
			break;
		}
	}
	if (r->cov)
		r->cov->steps += fail < 0 ? c->steps : fail;
	if (r->cov && fail < 0)
		for (n = 0; n < ARRAY_SIZE(mfields); n++)
			*(u64 *)((u8 *)&r->cov->sum + mfields[n].off) += mfield(&r->want, n);
	mrun_end(r);
	if (fail < 0)
		return true;
	c->failed++;
	mcfg_str(cfg, sizeof(cfg), &r->cfg);
	if (!c->quiet)
		KUNIT_FAIL(c->test, "seed %llu (%s): mismatch at step %d of %u, %s: %s", seed,
			   cfg, fail + 1, c->steps, mop_name[c->ops[fail].type], r->why);
	if (c->shrunk >= 3)
		return false;
	c->shrunk++;
	prefix = fail + 1;
	n = mshrink(r, c->ops, prefix, c->tmp, 100000);
	c->last_shrunk_len = n;
	r->logging = true;
	fail = mreplay(r, c->ops, n);
	r->logging = false;
	if (c->quiet)
		return false;
	kunit_info(c->test, "seed %llu: shortest failing prefix %u steps, shrunk to %u operations that fail%s:",
		   seed, prefix, n, fail + 1 == n ? "" : " (NOT reproduced on replay)");
	for (i = r->nlog > MLOG_LINES ? r->nlog - MLOG_LINES : 0; i < r->nlog; i++)
		kunit_info(c->test, "  %s", r->log[i % MLOG_LINES]);
	return false;
}

static int mcase_init(struct mcase *c, struct kunit *test, u32 steps)
{
	memset(c, 0, sizeof(*c));
	mkeys_init();
	c->test = test;
	c->steps = steps;
	c->r = kzalloc(sizeof(*c->r), GFP_KERNEL);
	c->ops = kvmalloc_array(steps, sizeof(*c->ops), GFP_KERNEL);
	c->tmp = kvmalloc_array(steps, sizeof(*c->tmp), GFP_KERNEL);
	return c->r && c->ops && c->tmp ? 0 : -ENOMEM;
}

static void mcase_exit(struct mcase *c)
{
	kfree(c->r);
	kvfree(c->ops);
	kvfree(c->tmp);
}

#define MCOV(t, slot)	(cov->outcome[t][slot])

/* The coverage slot of an errno (see mexec()). */
static u32 merrslot(int e)
{
	u32 s;

	for (s = 0; s < ARRAY_SIZE(mslot_errno) && mslot_errno[s] != e; s++)
		;
	return 8 + s;
}

static void mcoverage(struct kunit *test, const struct mcov *cov)
{
	static const u32 debounce_results[] = {
		KWQ_ADD_DUPLICATE, KWQ_ADD_WAITING, KWQ_ADD_WAIT_KEPT, KWQ_ADD_WAIT_MOVED,
	};
	u64 adds[8] = {}, refused = 0, enospc = 0;
	u32 t, s;

	for (t = MOP_ADD; t <= MOP_ADD_RL; t++) {
		if (t == MOP_CANCEL)
			continue;
		for (s = 0; s < 8; s++)
			adds[s] += MCOV(t, s);
		refused += MCOV(t, merrslot(ESHUTDOWN));
		enospc += MCOV(t, merrslot(ENOSPC));
	}
	kunit_info(test, "coverage: add results %llu/%llu/%llu/%llu/%llu/%llu/%llu, -ENOSPC %llu, -ESHUTDOWN %llu, fired %llu, expiries %llu, evictions %llu, tokens back %llu, stale tickets %llu, get -EAGAIN after shutdown %llu",
		   adds[0], adds[1], adds[2], adds[3], adds[4], adds[5], adds[6], enospc, refused,
		   cov->sum.fired, cov->sum.processing_expiries, cov->sum.backoff_evictions,
		   cov->sum.tokens_returned, cov->stale_enoent, cov->get_eagain_shut);
	kunit_info(test, "coverage: tenants: gets that rotated a tenant behind another %llu",
		   cov->ten_rotated);
	KUNIT_EXPECT_GT(test, cov->ten_rotated, 0);
	kunit_info(test, "coverage: priorities: raises moved %llu, kept by age %llu, gets out of add order %llu, add_ex -EINVAL %llu",
		   cov->prio_moved, cov->prio_kept, cov->prio_jumped,
		   MCOV(MOP_ADD_EX, merrslot(EINVAL)));
	KUNIT_EXPECT_GT(test, cov->prio_moved, 0);
	KUNIT_EXPECT_GT(test, cov->prio_kept, 0);
	KUNIT_EXPECT_GT(test, cov->prio_jumped, 0);
	KUNIT_EXPECT_GT(test, MCOV(MOP_ADD_EX, merrslot(EINVAL)), 0);
	/* The runs must reach every outcome, or they prove less than they claim. */
	for (s = KWQ_ADD_QUEUED; s <= KWQ_ADD_ABSORBED; s++)
		KUNIT_EXPECT_GT_MSG(test, adds[s], 0, "add result %u never seen", s);
	KUNIT_EXPECT_GT(test, enospc, 0);
	KUNIT_EXPECT_GT(test, refused, 0);
	KUNIT_EXPECT_GT(test, MCOV(MOP_GET, 0), 0);
	KUNIT_EXPECT_GT(test, MCOV(MOP_GET, merrslot(EMSGSIZE)), 0);
	KUNIT_EXPECT_GT(test, MCOV(MOP_GET, merrslot(ESHUTDOWN)), 0);
	KUNIT_EXPECT_GT(test, cov->get_eagain_shut, 0);
	KUNIT_EXPECT_GT(test, MCOV(MOP_DONE, KWQ_DONE_FINISHED), 0);
	KUNIT_EXPECT_GT(test, MCOV(MOP_DONE, KWQ_DONE_REQUEUED), 0);
	KUNIT_EXPECT_GT(test, MCOV(MOP_DONE, merrslot(ENOENT)), 0);
	KUNIT_EXPECT_GT(test, MCOV(MOP_DONE, merrslot(EINVAL)), 0);
	KUNIT_EXPECT_GT(test, MCOV(MOP_REQUEUE, 0), 0);
	KUNIT_EXPECT_GT(test, MCOV(MOP_DONE_GET, 0), 0);
	KUNIT_EXPECT_GT(test, MCOV(MOP_CANCEL, 1), 0);
	KUNIT_EXPECT_GT(test, MCOV(MOP_FORGET, 1), 0);
	KUNIT_EXPECT_GT(test, MCOV(MOP_DRAIN, 0), 0);
	KUNIT_EXPECT_GT(test, MCOV(MOP_DRAIN, merrslot(ETIMEDOUT)), 0);
	KUNIT_EXPECT_GT(test, cov->stale_enoent, 0);
	KUNIT_EXPECT_GT(test, cov->sum.fired, 0);
	KUNIT_EXPECT_GT(test, cov->sum.processing_expiries, 0);
	KUNIT_EXPECT_GT(test, cov->sum.backoff_evictions, 0);
	KUNIT_EXPECT_GT(test, cov->sum.tokens_returned, 0);
	KUNIT_EXPECT_GT(test, cov->sum.absorbed, 0);
	KUNIT_EXPECT_GT(test, cov->sum.waits_dropped, 0);
	KUNIT_EXPECT_GT(test, MCOV(MOP_DESTROY, merrslot(EIDRM)), 0);
	kunit_info(test, "coverage: debounced adds waiting/kept/moved/duplicate/-EINVAL %llu/%llu/%llu/%llu/%llu, moved later %llu, capped %llu",
		   MCOV(MOP_ADD_DEBOUNCED, KWQ_ADD_WAITING),
		   MCOV(MOP_ADD_DEBOUNCED, KWQ_ADD_WAIT_KEPT),
		   MCOV(MOP_ADD_DEBOUNCED, KWQ_ADD_WAIT_MOVED),
		   MCOV(MOP_ADD_DEBOUNCED, KWQ_ADD_DUPLICATE),
		   MCOV(MOP_ADD_DEBOUNCED, merrslot(EINVAL)), cov->sum.debounced,
		   cov->sum.debounce_capped);
	for (s = 0; s < ARRAY_SIZE(debounce_results); s++)
		KUNIT_EXPECT_GT_MSG(test, MCOV(MOP_ADD_DEBOUNCED, debounce_results[s]), 0,
				    "debounced add result %u never seen", debounce_results[s]);
	KUNIT_EXPECT_GT(test, MCOV(MOP_ADD_DEBOUNCED, merrslot(EINVAL)), 0);
	KUNIT_EXPECT_GT(test, MCOV(MOP_ADD_DEBOUNCED, merrslot(ESHUTDOWN)), 0);
	KUNIT_EXPECT_GT(test, cov->sum.debounced, 0);
	KUNIT_EXPECT_GT(test, cov->sum.debounce_capped, 0);
	kunit_info(test, "coverage: payload adds queued/duplicate/deferred/waiting %llu/%llu/%llu/%llu, -E2BIG %llu, -EINVAL %llu, replaced %llu; payload gets %llu, -EMSGSIZE %llu; refused batch gets %llu, done-gets %llu",
		   MCOV(MOP_ADD_PAYLOAD, KWQ_ADD_QUEUED), MCOV(MOP_ADD_PAYLOAD, KWQ_ADD_DUPLICATE),
		   MCOV(MOP_ADD_PAYLOAD, KWQ_ADD_DEFERRED), MCOV(MOP_ADD_PAYLOAD, KWQ_ADD_WAITING),
		   MCOV(MOP_ADD_PAYLOAD, merrslot(E2BIG)), MCOV(MOP_ADD_PAYLOAD, merrslot(EINVAL)),
		   cov->sum.payloads_replaced, MCOV(MOP_GET_PAYLOAD, 0),
		   MCOV(MOP_GET_PAYLOAD, merrslot(EMSGSIZE)),
		   MCOV(MOP_GET_BATCH, merrslot(EOPNOTSUPP)),
		   MCOV(MOP_DONE_GET, merrslot(EOPNOTSUPP)));
	for (s = KWQ_ADD_QUEUED; s <= KWQ_ADD_WAIT_MOVED; s++)
		KUNIT_EXPECT_GT_MSG(test, MCOV(MOP_ADD_PAYLOAD, s), 0,
				    "payload add result %u never seen", s);
	KUNIT_EXPECT_GT(test, MCOV(MOP_ADD_PAYLOAD, merrslot(E2BIG)), 0);
	KUNIT_EXPECT_GT(test, MCOV(MOP_ADD_PAYLOAD, merrslot(EINVAL)), 0);
	KUNIT_EXPECT_GT(test, cov->sum.payloads_replaced, 0);
	KUNIT_EXPECT_GT(test, MCOV(MOP_GET_PAYLOAD, 0), 0);
	KUNIT_EXPECT_GT(test, MCOV(MOP_GET_PAYLOAD, merrslot(EMSGSIZE)), 0);
	KUNIT_EXPECT_GT(test, MCOV(MOP_GET_BATCH, merrslot(EOPNOTSUPP)), 0);
	KUNIT_EXPECT_GT(test, MCOV(MOP_DONE_GET, merrslot(EOPNOTSUPP)), 0);
}

/*
 * The random runs: model_seeds seeds of model_steps steps each, cut into
 * parameters of about MCHUNK_STEPS steps, since each parameter has its
 * own KUnit timeout (5 minutes on 6.1) and a long run would exceed one.
 * The parameter value is the chunk's number plus one.
 */
#define MCHUNK_STEPS	25000

static struct {
	bool bad_params;
	u32 per_chunk;		/* seeds per parameter */
	u32 failed;
	u32 shrunk;
	ktime_t start;
	struct mcov cov;
} mstate;

static KWQ_KUNIT_PARAMS_GEN(mchunks)
{
	uintptr_t i = (uintptr_t)prev;
	u32 first, end;

	if (!i) {
		memset(&mstate, 0, sizeof(mstate));
		mstate.bad_params = mparams_apply();
		mstate.per_chunk = max(MCHUNK_STEPS / max(model_steps, 1U), 1U);
		mstate.start = ktime_get();
	}
	first = i * mstate.per_chunk;
	if (first >= model_seeds)
		return NULL;
	end = min(first + mstate.per_chunk, model_seeds);
	scnprintf(desc, KUNIT_PARAM_DESC_SIZE, "seeds %u..%u x %u steps", model_seed + first,
		  model_seed + end - 1, model_steps);
	return (const void *)(i + 1);
}

static void kwq_model_test_random(struct kunit *test)
{
	u32 chunk = (uintptr_t)test->param_value - 1, s;
	u32 first = chunk * mstate.per_chunk;
	u32 end = min(first + mstate.per_chunk, model_seeds);
	struct mcase c;

	KUNIT_EXPECT_FALSE_MSG(test, mstate.bad_params, "bad module parameter");
	if (mcase_init(&c, test, max(model_steps, 1U))) {
		mcase_exit(&c);
		KUNIT_FAIL(test, "out of memory");
		return;
	}
	c.r->cov = &mstate.cov;
	c.shrunk = mstate.shrunk;
	for (s = first; s < end; s++) {
		mseed(&c, (u64)model_seed + s, 0);
		cond_resched();
	}
	mstate.shrunk = c.shrunk;
	mstate.failed += c.failed;
	mcase_exit(&c);
	if (end < model_seeds)
		return;
	kunit_info(test, "%u seeds (%u..%u) x %u steps: %llu steps run, %u runs failed, %lld ms",
		   model_seeds, model_seed, model_seed + model_seeds - 1, model_steps,
		   mstate.cov.steps, mstate.failed, ktime_ms_delta(ktime_get(), mstate.start));
	if (!mstate.failed)
		mcoverage(test, &mstate.cov);
}

/*
 * The oracle can fail: with a bug planted in the model (a dedup not
 * counted, a requeue to the tail instead of the head, a debounced add
 * not held at its bound, a raise that moves a key it should leave, a
 * payload not replaced while its key is processing, a tenant not moved to
 * the end of the rotation by a get), the same runs must
 * report a mismatch and shrink it to a handful of operations.
 */
static void kwq_model_test_oracle_can_fail(struct kunit *test)
{
	static const u32 mutants[] = { 1, 2, 3, 4, 5 };
	struct mcase c;
	u32 m, s;

	if (mcase_init(&c, test, 500)) {
		mcase_exit(&c);
		KUNIT_FAIL(test, "out of memory");
		return;
	}
	c.quiet = true;
	for (m = 0; m < ARRAY_SIZE(mutants); m++) {
		c.failed = 0;
		c.shrunk = 0;
		for (s = 1; s <= 20 && !c.failed; s++)
			mseed(&c, s, mutants[m]);
		KUNIT_EXPECT_EQ_MSG(test, c.failed, 1, "planted model bug %u not caught",
				    mutants[m]);
		KUNIT_EXPECT_LE_MSG(test, c.last_shrunk_len, 12,
				    "planted model bug %u: shrunk only to %u ops", mutants[m],
				    c.last_shrunk_len);
		kunit_info(test, "planted model bug %u: caught by seed %u, shrunk to %u operations",
			   mutants[m], s - 1, c.last_shrunk_len);
	}
	mcase_exit(&c);
}

static struct kunit_case kwq_model_cases[] = {
	KUNIT_CASE(kwq_model_test_oracle_can_fail),
	KUNIT_CASE_PARAM(kwq_model_test_random, mchunks),
	{}
};

static struct kunit_suite kwq_model_suite = {
	.name = "kwq_model",
	.test_cases = kwq_model_cases,
};

kunit_test_suite(kwq_model_suite);
