// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/kwq: the queues for user programs.
 *
 * Each open file is attached to at most one queue, by KWQ_IOC_CREATE or
 * KWQ_IOC_OPEN, and holds a reference on it until close. Queues are
 * named and persist until KWQ_IOC_DESTROY (like POSIX message queues), so
 * producers and consumers in separate processes meet by name.
 *
 * Scope: names live in the IPC namespace of the process that opened
 * /dev/kwq (kwq_file.scope), or in the kernel scope with KWQ_SCOPE_KERNEL
 * (kwq_registry.c).
 *
 * Access (Documentation/kwq-security.rst has the whole matrix): the
 * credentials are the opener's (file->f_cred), as for any file, so a
 * descriptor passed to another process carries its rights and no more.
 * The open mode selects the rights, checked against the queue's owner and
 * mode like SysV IPC when the file attaches (a file opened for neither
 * reading nor writing cannot attach): read to consume and to look (get,
 * done, stats, num-requeues, poll), write to produce (add, cancel), both
 * to forget a key's failures. Shutdown, drain and destroy cannot be
 * undone and need the owner or CAP_SYS_ADMIN in the scope's user
 * namespace. Every command's needs are one line of kwq_cmds[], checked in
 * one place, kwq_cmd_allowed().
 *
 * Leases: keys a file takes are leased to it (struct kwq_lease); closing
 * the file, however the process ended, puts them back at the head of the
 * queue.
 */

#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/fs.h>
#include <linux/ipc_namespace.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/nospec.h>
#include <linux/poll.h>
#include <linux/proc_ns.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>

#include "kwq_add.h"
#include "kwq_internal.h"
#include "kwq_payload.h"
#include "kwq_scope.h"
#include "kwq_uaccess.h"

static struct kwq *kwq_file_queue(struct kwq_file *kf)
{
	/* Pairs with smp_store_release() in kwq_attach(). */
	return smp_load_acquire(&kf->q);
}

/* Where the capabilities of a file attached to a queue count. */
static struct user_namespace *kwq_file_user_ns(const struct kwq_file *kf)
{
	return kwq_scope_user_ns(kf->kernel_scope ? NULL : kf->scope);
}

/* Whether the opener of the file is in group @gid (in_egroup_p() for f_cred). */
static bool kwq_cred_in_group(const struct cred *cred, kgid_t gid)
{
	const struct group_info *gi = cred->group_info;
	int i;

	if (gid_eq(cred->egid, gid))
		return true;
	for (i = 0; gi && i < gi->ngroups; i++) {
		if (gid_eq(gi->gid[i], gid))
			return true;
	}
	return false;
}

/* ipcperms() for a file attaching to @q: its open mode against the queue's mode bits. */
static int kwq_check_access(const struct kwq *q, struct file *file, struct user_namespace *ns)
{
	fmode_t fmode = file->f_mode;
	int requested = (fmode & FMODE_READ ? 4 : 0) | (fmode & FMODE_WRITE ? 2 : 0);
	const struct cred *cred = file->f_cred;
	int granted = q->mode;

	if (uid_eq(cred->euid, q->uid))
		granted >>= 6;
	else if (kwq_cred_in_group(cred, q->gid))
		granted >>= 3;
	if ((requested & ~granted & 7) && !file_ns_capable(file, ns, CAP_IPC_OWNER))
		return -EACCES;
	return 0;
}

static bool kwq_is_owner(const struct kwq *q, struct file *file, struct kwq_file *kf)
{
	return uid_eq(file->f_cred->euid, q->uid) ||
	       file_ns_capable(file, kwq_file_user_ns(kf), CAP_SYS_ADMIN);
}

/* Copy a NUL-terminated name out of a fixed user buffer. */
static int kwq_name_from(const u8 *raw, char *name)
{
	if (!memchr(raw, 0, KWQ_NAME_MAX))
		return -EINVAL;
	memcpy(name, raw, KWQ_NAME_MAX);
	return kwq_name_valid(name) ? 0 : -EINVAL;
}

/* Pass a wake-up of the queue's consumers on to the file's early pollers. */
static int kwq_forward_wake(struct wait_queue_entry *wq, unsigned int mode, int sync, void *key)
{
	struct kwq_file *kf = container_of(wq, struct kwq_file, forward);

	wake_up_poll(&kf->attach_wait, key_to_poll(key));
	return 0;
}

static int kwq_attach(struct kwq_file *kf, struct kwq *q)
{
	if (kf->q)
		return -EBUSY;
	kwq_lease_begin(q, &kf->lease);
	/* Publish @q and the lease to lockless kwq_file_queue() readers. */
	smp_store_release(&kf->q, q);
	/*
	 * Pairs with the barrier in kwq_poll(): either an early poller sees
	 * @q and joins its wait queue itself, or we see it waiting here.
	 */
	smp_mb();
	/* waitqueue_active() is safe after that barrier, see kwq_poll(). */
	if (waitqueue_active(&kf->attach_wait)) {
		init_waitqueue_func_entry(&kf->forward, kwq_forward_wake);
		add_wait_queue(&q->get_wait, &kf->forward);
		kf->forwarding = true;
		wake_up_poll(&kf->attach_wait, EPOLLIN | EPOLLRDNORM);
	}
	return 0;
}

static long kwq_ioc_version(struct file *file, struct kwq_file *kf, unsigned int cmd,
			    void __user *uarg)
{
	struct kwq_ioc_version v;

	if (copy_from_user(&v, uarg, sizeof(v)))
		return -EFAULT;
	if (v.flags || !kwq_is_zero(v.reserved, sizeof(v.reserved)))
		return -EINVAL;
	memset(&v, 0, sizeof(v));
	v.abi_version = KWQ_ABI_VERSION;
	v.key_max = KWQ_KEY_MAX;
	v.name_max = KWQ_NAME_MAX;
	v.features = KWQ_FEATURE_CORE | KWQ_FEATURE_DELAY | KWQ_FEATURE_LEASE |
		     KWQ_FEATURE_BATCH | KWQ_FEATURE_RATELIMIT | KWQ_FEATURE_METRICS |
		     KWQ_FEATURE_DONE_GET | KWQ_FEATURE_TICKET | KWQ_FEATURE_SCOPE |
		     KWQ_FEATURE_DEBOUNCE | KWQ_FEATURE_PRIORITY | KWQ_FEATURE_PAYLOAD |
		     KWQ_FEATURE_TENANT | KWQ_FEATURE_SCOPE_ADMIN | KWQ_FEATURE_MANUAL_CLOCK;
	return copy_to_user(uarg, &v, sizeof(v)) ? -EFAULT : 0;
}

static long kwq_ioc_create(struct file *file, struct kwq_file *kf, unsigned int cmd,
			   void __user *uarg)
{
	struct kwq_ioc_create c;
	char name[KWQ_NAME_MAX];
	struct kwq_attr attr = {};
	struct kwq *q;
	int ret;

	if (copy_from_user(&c, uarg, sizeof(c)))
		return -EFAULT;
	if ((c.flags & ~(KWQ_CREATE_RATELIMIT | KWQ_CREATE_PRIORITY | KWQ_CREATE_TENANT |
			 KWQ_CREATE_MANUAL_CLOCK)) ||
	    (c.mode & ~0777) || c.policy > KWQ_POLICY_STRICT || c.pad ||
	    c.pad3[0] || c.pad3[1] || c.pad3[2] ||
	    c.tenant_depth > ((c.flags & KWQ_CREATE_TENANT) ? KWQ_TENANT_DEPTH_MAX : 0) ||
	    !kwq_is_zero(c.reserved, sizeof(c.reserved)) ||
	    (!(c.flags & KWQ_CREATE_RATELIMIT) &&
	     !kwq_is_zero(&c.ratelimit, sizeof(c.ratelimit))))
		return -EINVAL;
	/* As for OPEN: before the name is looked at. */
	if (!(file->f_mode & (FMODE_READ | FMODE_WRITE)))
		return -EBADF;
	ret = kwq_name_from(c.name, name);
	if (ret)
		return ret;
	attr.max_items = c.max_items;
	attr.account = true;
	/* The per-user limits count every scope: only the host's root escapes them. */
	attr.exempt = file_ns_capable(file, &init_user_ns, CAP_SYS_RESOURCE);
	attr.mode = c.mode;
	attr.uid = file->f_cred->euid;
	attr.user_ns = file->f_cred->user_ns;
	attr.gid = file->f_cred->egid;
	attr.policy = c.policy;
	attr.max_backoff_keys = c.max_backoff_keys;
	attr.processing_timeout_ns = c.processing_timeout_ns;
	/* kwq_create_in() checks aging_ns (-EINVAL without a priority queue). */
	attr.priority = c.flags & KWQ_CREATE_PRIORITY;
	attr.aging_ns = c.aging_ns;
	attr.payload_max = c.payload_max;
	if (c.flags & KWQ_CREATE_TENANT)
		attr.tenant_depth = c.tenant_depth ?: 1;
	if (c.flags & KWQ_CREATE_RATELIMIT)
		attr.ratelimit = &c.ratelimit;
	attr.manual_clock = c.flags & KWQ_CREATE_MANUAL_CLOCK;

	mutex_lock(&kf->attach_lock);
	if (kf->q) {
		ret = -EBUSY;
		goto unlock;
	}
	q = kwq_create_in(name, &attr, kf->scope);
	if (IS_ERR(q)) {
		ret = PTR_ERR(q);
		goto unlock;
	}
	ret = kwq_attach(kf, q);
unlock:
	mutex_unlock(&kf->attach_lock);
	return ret;
}

static long kwq_ioc_open(struct file *file, struct kwq_file *kf, unsigned int cmd,
			 void __user *uarg)
{
	struct kwq_ioc_open o;
	char name[KWQ_NAME_MAX];
	const struct ipc_namespace *scope;
	bool kernel_scope;
	struct kwq *q;
	int ret;

	if (copy_from_user(&o, uarg, sizeof(o)))
		return -EFAULT;
	if ((o.flags & ~KWQ_SCOPE_KERNEL) || o.pad ||
	    !kwq_is_zero(o.reserved, sizeof(o.reserved)))
		return -EINVAL;
	/* Neither reading nor writing: nothing to attach for, whatever the name. */
	if (!(file->f_mode & (FMODE_READ | FMODE_WRITE)))
		return -EBADF;
	kernel_scope = o.flags & KWQ_SCOPE_KERNEL;
	scope = kernel_scope ? NULL : kf->scope;
	ret = kwq_name_from(o.name, name);
	if (ret)
		return ret;

	mutex_lock(&kf->attach_lock);
	if (kf->q) {
		ret = -EBUSY;
		goto unlock;
	}
	q = kwq_lookup_in(name, scope);
	if (IS_ERR(q)) {
		ret = PTR_ERR(q);
		goto unlock;
	}
	ret = kwq_check_access(q, file, kwq_scope_user_ns(scope));
	if (!ret) {
		kf->kernel_scope = kernel_scope;
		ret = kwq_attach(kf, q);
	}
	if (ret)
		kwq_put(q);
unlock:
	mutex_unlock(&kf->attach_lock);
	return ret;
}

enum kwq_key_cmd {
	KWQ_KEY_ADD, KWQ_KEY_DONE, KWQ_KEY_CANCEL,
	KWQ_KEY_ADD_RATE_LIMITED, KWQ_KEY_FORGET, KWQ_KEY_NUM_REQUEUES,
};

/*
 * The start of every command of struct kwq_ioc_key, inline in each
 * handler: read the struct and check it for @cmd, copy the key into @key
 * and zero the report, so that a report that cannot be written fails the
 * call before it changes anything.
 */
static __always_inline int kwq_ioc_key_in(void __user *uarg, enum kwq_key_cmd cmd,
					  struct kwq_ioc_key *k, u8 *key)
{
	struct kwq_ioc_key __user *ukey = uarg;

	if (kwq_struct_in(k, uarg, sizeof(*k)))
		return -EFAULT;
	if (k->pad || !kwq_is_zero(k->reserved, sizeof(k->reserved)) ||
	    (k->flags & ~(cmd == KWQ_KEY_ADD ? KWQ_ADD_POLICY_MASK : 0)) ||
	    (k->ticket && cmd != KWQ_KEY_DONE))
		return -EINVAL;
	return kwq_key_from_report(key, k->key_ptr, k->key_len, &ukey->result);
}

/* The end of every command of struct kwq_ioc_key: its error, or its outcome. */
static __always_inline long kwq_ioc_key_out(void __user *uarg, int ret)
{
	struct kwq_ioc_key __user *ukey = uarg;

	if (ret < 0)
		return ret;
	/* The operation happened; only the report can fail now. */
	return kwq_put_report(&ukey->result, (u32)ret);
}

/*
 * Flags of an add-after that apply to it: KWQ_AFTER_REPLACE or
 * KWQ_AFTER_DEBOUNCE to a delayed add, a policy to an add now (it decides
 * what happens to a waiting entry); a max wait only to a debounced add,
 * and no shorter than its delay.
 */
static bool kwq_after_args_ok(const struct kwq_ioc_add_after *a)
{
	if (a->delay_ns <= 0)
		return !(a->flags & ~KWQ_ADD_POLICY_MASK) && !a->max_wait_ns;
	if (a->flags == KWQ_AFTER_DEBOUNCE)
		return a->max_wait_ns >= (u64)a->delay_ns;
	return !(a->flags & ~KWQ_AFTER_REPLACE) && !a->max_wait_ns;
}

static long kwq_ioc_add_after(struct file *file, struct kwq_file *kf, unsigned int cmd,
			      void __user *uarg)
{
	struct kwq_ioc_add_after __user *ua = uarg;
	struct kwq_ioc_add_after a __uninitialized;	/* read whole, or unused */
	u8 key[KWQ_KEY_MAX] __uninitialized;	/* written before read */
	int ret;

	if (kwq_struct_in(&a, uarg, sizeof(a)))
		return -EFAULT;
	if (a.pad || !kwq_is_zero(a.reserved, sizeof(a.reserved)) || !kwq_after_args_ok(&a))
		return -EINVAL;
	/* Fault on the report now, while nothing has changed. */
	ret = kwq_key_from_report(key, a.key_ptr, a.key_len, &ua->result);
	if (ret)
		return ret;
	if (a.flags & KWQ_AFTER_DEBOUNCE)
		ret = kwq_add_debounced(kf->q, key, a.key_len, a.delay_ns, a.max_wait_ns);
	else
		ret = kwq_add_after(kf->q, key, a.key_len, a.delay_ns, a.flags);
	if (ret < 0)
		return ret;
	return kwq_put_report(&ua->result, (u32)ret);
}

/*
 * A payload of KWQ_IOC_ADD_EX: both fields 0 (none) or both set, and no
 * longer than the queue allows.
 */
static int kwq_payload_ok(const struct kwq *q, u64 ptr, u32 len)
{
	if (!ptr != !len)
		return -EINVAL;
	return kwq_payload_check(q, len);
}

/* An add with a payload copied from user space straight into its allocation. */
static int kwq_add_payload_from(struct kwq *q, const void *key, u32 len,
				const struct kwq_add_opts *o, u64 ptr, u32 plen)
{
	struct kwq_payload *p = kwq_payload_alloc(plen, q->gfp | __GFP_NOWARN);

	if (!p)
		return -ENOMEM;
	if (copy_from_user(p->data, u64_to_user_ptr(ptr), plen)) {
		kwq_payload_put(p);
		return -EFAULT;
	}
	return kwq_add_ex_payload(q, key, len, o, p);
}

/* KWQ_IOC_ADD_EX: the options are checked as kwq_add_ex() checks a kernel caller's. */
static long kwq_ioc_add_ex(struct file *file, struct kwq_file *kf, unsigned int cmd,
			   void __user *uarg)
{
	struct kwq_ioc_add __user *ua = uarg;
	u8 key[KWQ_KEY_MAX] __uninitialized;	/* written before read */
	struct kwq_add_opts o = {};
	struct kwq_ioc_add a __uninitialized;	/* read whole, or unused */
	int ret;

	if (kwq_struct_in(&a, uarg, sizeof(a)))
		return -EFAULT;
	if (a.pad || !kwq_is_zero(a.reserved, sizeof(a.reserved)))
		return -EINVAL;
	ret = kwq_payload_ok(kf->q, a.payload_ptr, a.payload_len);
	if (ret)
		return ret;
	o.delay_ns = a.delay_ns;
	o.max_wait_ns = a.max_wait_ns;
	o.flags = a.flags;
	o.priority = a.priority;
	if (!kwq_add_opts_ok(kf->q, &o))
		return -EINVAL;
	/* Fault on the report now, while nothing has changed. */
	ret = kwq_key_from_report(key, a.key_ptr, a.key_len, &ua->result);
	if (ret)
		return ret;
	ret = a.payload_len ? kwq_add_payload_from(kf->q, key, a.key_len, &o, a.payload_ptr,
						   a.payload_len) :
			      kwq_add_ex(kf->q, key, a.key_len, &o);
	if (ret < 0)
		return ret;
	return kwq_put_report(&ua->result, (u32)ret);
}

/* The done of KWQ_IOC_DONE_GET: its key and ticket, and where its result goes. */
struct kwq_done_req {
	const u8 *key;
	u32 len;
	u64 ticket;
	u32 __user *uresult;
};

/* Where KWQ_IOC_GET puts the payload: @cap bytes at @ptr (0: none), its length in *@ulen. */
struct kwq_payload_out {
	u64 ptr;
	u32 cap;
	u32 __user *ulen;
};

/*
 * kwq_probe_out() for the payload's buffer (its length is a report field,
 * probed there); @po->cap is clamped.
 */
static int kwq_probe_payload(struct kwq_payload_out *po, u32 payload_max)
{
	/* No payload is longer: the rest of a larger buffer is never written. */
	po->cap = min(po->cap, payload_max);
	return po->ptr ? kwq_probe_writable(u64_to_user_ptr(po->ptr), po->cap) : 0;
}

/* Copy a hand-out's payload out, dropping the get's reference. */
static int kwq_payload_to_user(const struct kwq_payload_out *po, struct kwq_handout *h)
{
	int ret = 0;

	if (h->payload) {
		if (copy_to_user(u64_to_user_ptr(po->ptr), h->payload->data, h->payload->len))
			ret = -EFAULT;
		kwq_payload_put(h->payload);
		h->payload = NULL;
	}
	return ret;
}

/*
 * A get's report fields run from its key length to its ticket, in that
 * order in its ioctl struct, with the payload's length between them in
 * struct kwq_ioc_get (kwq_ioc_get() and kwq_ioc_done_get() check it): the
 * range holds them all and touches the pages they touch.
 */
static size_t kwq_reports_size(u32 __user *ulen, u64 __user *uticket)
{
	return (unsigned long)(uticket + 1) - (unsigned long)ulen;
}

/* A get's report fields, in one user access window (a put_user() each took a call). */
static int kwq_put_reports(u32 __user *ulen, u32 len, u64 __user *uticket, u64 ticket,
			   u32 __user *plen, u32 payload_len)
{
	if (!user_access_begin(ulen, kwq_reports_size(ulen, uticket)))
		return -EFAULT;
	unsafe_put_user(len, ulen, fault);
	unsafe_put_user(ticket, uticket, fault);
	if (plen)
		unsafe_put_user(payload_len, plen, fault);
	user_access_end();
	return 0;
fault:
	user_access_end();
	return -EFAULT;
}

/*
 * Whether a get can deliver: rewrite, unchanged, a byte of each page of
 * the key buffer (as far as a key can reach) and of the report fields, so
 * that a get into memory it cannot write fails before it takes a key, and
 * changes nothing.
 */
static int kwq_probe_out(u64 ptr, u32 cap, u32 __user *ulen, u64 __user *uticket)
{
	return kwq_probe_writable(ulen, kwq_reports_size(ulen, uticket)) ?:
	       kwq_probe_writable(u64_to_user_ptr(ptr), min_t(u32, cap, KWQ_KEY_MAX));
}

/*
 * Take one key into a user buffer (its ticket into *@uticket, its payload
 * as @po says if @po is not NULL), after ending @done's key if @done is
 * not NULL. The key is leased to @kf unless @unleased. Memory that cannot
 * be written fails the call before anything happens; if it stops being
 * writable during the call, the key goes back to the head of the queue
 * (kwq_undeliverable()).
 */
static int kwq_get_to_user(struct kwq_file *kf, u64 ptr, u32 cap, u32 __user *ulen,
			   u64 __user *uticket, ktime_t deadline, bool unleased,
			   const struct kwq_done_req *done, struct kwq_payload_out *po)
{
	struct kwq_lease *lease = unleased ? NULL : &kf->lease;
	u8 key[KWQ_KEY_MAX] __uninitialized;	/* written before read */
	int ret, done_result = -1;
	struct kwq_handout h = {};
	u32 len = 0;

	cap = min_t(u32, cap, KWQ_KEY_MAX);
	if (kwq_probe_out(ptr, cap, ulen, uticket))
		return -EFAULT;
	if (po && kwq_probe_payload(po, kf->q->payload_max))
		return -EFAULT;
	if (po) {
		h.payload_want = po->ptr;
		h.payload_cap = po->cap;
	}
	if (done)
		ret = kwq_done_get_leased(kf->q, done->key, done->len, done->ticket, &done_result,
					  key, cap, &len, deadline, &kf->lease, lease, &h);
	else
		ret = kwq_get_leased(kf->q, key, cap, &len, deadline, lease, &h);
	if (done && done_result >= 0 && put_user((u32)done_result, done->uresult))
		goto fault;
	if (ret == -EMSGSIZE)
		return put_user(len, ulen) || (po && put_user(h.payload_len, po->ulen)) ?
		       -EFAULT : -EMSGSIZE;
	if (ret)
		return ret;
	if (kwq_key_copy_out(u64_to_user_ptr(ptr), key, len) ||
	    (po && kwq_payload_to_user(po, &h)) ||
	    kwq_put_reports(ulen, len, uticket, h.ticket, po ? po->ulen : NULL, h.payload_len))
		goto fault;
	return 0;
fault:
	/* Never lose the key (nor its payload, which its record keeps). */
	kwq_payload_put(h.payload);
	if (!ret)
		kwq_undeliverable(kf->q, key, len, &h);
	return -EFAULT;
}

static long kwq_ioc_get(struct file *file, struct kwq_file *kf, unsigned int cmd,
			void __user *uarg)
{
	struct kwq_ioc_get __user *uget = uarg;
	struct kwq_payload_out po;
	struct kwq_ioc_get g __uninitialized;	/* read whole, or unused */

	/* The report fields' order kwq_reports_size() counts on. */
	BUILD_BUG_ON(offsetof(struct kwq_ioc_get, key_len) >
		     offsetof(struct kwq_ioc_get, payload_len) ||
		     offsetof(struct kwq_ioc_get, payload_len) >
		     offsetof(struct kwq_ioc_get, ticket));
	if (kwq_struct_in(&g, uarg, sizeof(g)))
		return -EFAULT;
	/* A length without a buffer is what a nonzero pad was before payloads. */
	if ((g.flags & ~KWQ_GET_UNLEASED) || (!g.payload_ptr && g.payload_len))
		return -EINVAL;
	po.ptr = g.payload_ptr;
	po.cap = g.payload_len;
	po.ulen = &uget->payload_len;
	return kwq_get_to_user(kf, g.key_ptr, g.key_cap, &uget->key_len, &uget->ticket,
			       kwq_deadline_from(g.deadline_ns, file),
			       g.flags & KWQ_GET_UNLEASED, NULL, &po);
}

/*
 * Done, then get, in one call. The done's errors leave everything as it
 * was; after it, done_result says it happened and errors are the get's.
 */
static long kwq_ioc_done_get(struct file *file, struct kwq_file *kf, unsigned int cmd,
			     void __user *uarg)
{
	struct kwq_ioc_done_get __user *ud = uarg;
	u8 dkey[KWQ_KEY_MAX] __uninitialized;	/* written before read */
	struct kwq_done_req done = { .key = dkey, .uresult = &ud->done_result };
	struct kwq_ioc_done_get d __uninitialized;	/* read whole, or unused */
	int ret;

	BUILD_BUG_ON(offsetof(struct kwq_ioc_done_get, key_len) >
		     offsetof(struct kwq_ioc_done_get, ticket));
	if (kwq_struct_in(&d, uarg, sizeof(d)))
		return -EFAULT;
	/* Fault on the report now, while nothing has changed. */
	if (kwq_put_report(&ud->done_result, KWQ_DONE_NOT_RUN))
		return -EFAULT;
	if ((d.flags & ~KWQ_GET_UNLEASED) || d.pad)
		return -EINVAL;
	ret = kwq_key_from(dkey, d.done_ptr, d.done_len);
	if (ret)
		return ret;
	done.len = d.done_len;
	done.ticket = d.done_ticket;
	ret = kwq_get_to_user(kf, d.key_ptr, d.key_cap, &ud->key_len, &ud->ticket,
			      kwq_deadline_from(d.deadline_ns, file),
			      d.flags & KWQ_GET_UNLEASED, &done, NULL);
	/* Restarting the call would end the key a second time. */
	return ret == -ERESTARTSYS ? -EINTR : ret;
}

/*
 * The end of a listing: min(@cap, @count) entries of @size bytes from
 * @buf (kvfree()d here; NULL when there are none) to @ptr, then @count to
 * *@ucount. Returns 0 or -EFAULT.
 */
static long kwq_list_out(u64 ptr, void *buf, size_t size, u32 cap, long count,
			 u32 __user *ucount)
{
	long ret = 0;

	if (buf && copy_to_user(u64_to_user_ptr(ptr), buf, (size_t)min_t(u32, cap, count) * size))
		ret = -EFAULT;
	else if (put_user(count, ucount))
		ret = -EFAULT;
	kvfree(buf);
	return ret;
}

static long kwq_ioc_list(struct file *file, struct kwq_file *kf, unsigned int cmd,
			 void __user *uarg)
{
	struct kwq_ioc_list __user *ul = uarg;
	const struct ipc_namespace *scope;
	struct kwq_ioc_list l;
	char *names;
	long count;

	if (copy_from_user(&l, uarg, sizeof(l)))
		return -EFAULT;
	if ((l.flags & ~KWQ_SCOPE_KERNEL) || l.pad ||
	    !kwq_is_zero(l.reserved, sizeof(l.reserved)))
		return -EINVAL;
	scope = l.flags & KWQ_SCOPE_KERNEL ? NULL : kf->scope;
	/* Room for the names there are, not for what the caller offers. */
	count = kwq_registry_names(scope, l.capacity, &names);
	if (count < 0)
		return count;
	return kwq_list_out(l.names_ptr, names, KWQ_NAME_MAX, l.capacity, count, &ul->count);
}

static long kwq_ioc_scope_limits(struct file *file, struct kwq_file *kf, unsigned int cmd,
				 void __user *uarg)
{
	struct kwq_ioc_scope_limits l;
	bool set;
	int ret;

	if (copy_from_user(&l, uarg, sizeof(l)))
		return -EFAULT;
	if ((l.flags & ~KWQ_SCOPE_LIMITS_SET) || l.queues || l.ceiling ||
	    !kwq_is_zero(l.reserved, sizeof(l.reserved)))
		return -EINVAL;
	set = l.flags & KWQ_SCOPE_LIMITS_SET;
	/* As for the namespace's own fs.mqueue.queues_max: its owner's root. */
	if (set && !file_ns_capable(file, kwq_scope_user_ns(kf->scope), CAP_SYS_ADMIN))
		return -EPERM;
	ret = kwq_scope_limits(kf->scope, set, &l.queues_max, &l.queues);
	if (ret)
		return ret;
	l.ceiling = READ_ONCE(kwq_max_queues_per_ns);
	return copy_to_user(uarg, &l, sizeof(l)) ? -EFAULT : 0;
}

static long kwq_ioc_list_all(struct file *file, struct kwq_file *kf, unsigned int cmd,
			     void __user *uarg)
{
	struct kwq_ioc_list_all __user *ul = uarg;
	struct kwq_queue_info *info;
	struct kwq_ioc_list_all l;
	long count;

	if (copy_from_user(&l, uarg, sizeof(l)))
		return -EFAULT;
	if (l.flags || l.pad || !kwq_is_zero(l.reserved, sizeof(l.reserved)))
		return -EINVAL;
	count = kwq_registry_list_all(l.capacity, &info);
	if (count < 0)
		return count;
	return kwq_list_out(l.info_ptr, info, sizeof(*info), l.capacity, count, &ul->count);
}

static long kwq_ioc_destroy_in(struct file *file, struct kwq_file *kf, unsigned int cmd,
			       void __user *uarg)
{
	struct kwq_ioc_destroy_in d;
	char name[KWQ_NAME_MAX];
	bool kernel_scope;
	int ret;

	if (copy_from_user(&d, uarg, sizeof(d)))
		return -EFAULT;
	kernel_scope = d.flags & KWQ_SCOPE_KERNEL;
	if ((d.flags & ~KWQ_SCOPE_KERNEL) || d.pad || d.pad2 ||
	    (kernel_scope && d.ipc_inum) || !kwq_is_zero(d.reserved, sizeof(d.reserved)))
		return -EINVAL;
	ret = kwq_name_from(d.name, name);
	if (ret)
		return ret;
	return kwq_registry_destroy_in(name, d.ipc_inum, kernel_scope);
}

static long kwq_ioc_drain(struct file *file, struct kwq_file *kf, unsigned int cmd,
			  void __user *uarg)
{
	struct kwq_ioc_drain d;

	if (copy_from_user(&d, uarg, sizeof(d)))
		return -EFAULT;
	if ((d.flags & ~KWQ_DRAIN_FLUSH_WAITING) || d.pad)
		return -EINVAL;
	return kwq_shutdown_drain(kf->q, kwq_deadline_from(d.deadline_ns, file), d.flags);
}

static long kwq_ioc_clock_step(struct file *file, struct kwq_file *kf, unsigned int cmd,
			       void __user *uarg)
{
	struct kwq_ioc_clock_step c;
	bool pending;
	int ret;

	if (copy_from_user(&c, uarg, sizeof(c)))
		return -EFAULT;
	if (c.now_ns || c.flags || c.pending || !kwq_is_zero(c.reserved, sizeof(c.reserved)))
		return -EINVAL;
	/* An answer that cannot be written fails before the clock moves. */
	if (copy_to_user(uarg, &c, sizeof(c)))
		return -EFAULT;
	ret = kwq_clock_step(kf->q, c.step_ns, &c.now_ns, &pending);
	if (ret)
		return ret;
	c.pending = pending;
	return copy_to_user(uarg, &c, sizeof(c)) ? -EFAULT : 0;
}

/*
 * The struct's size is the command's (KWQ_IOC_STATS_SIZE(n)): a smaller
 * struct gets a prefix, a larger one has the bytes past ours zeroed.
 */
static long kwq_ioc_stats(struct file *file, struct kwq_file *kf, unsigned int cmd,
			  void __user *uarg)
{
	u32 usize = _IOC_SIZE(cmd);
	struct kwq_stats st;

	if (usize < KWQ_STATS_SIZE_MIN || usize > KWQ_STATS_SIZE_MAX)
		return -EINVAL;
	kwq_stats(kf->q, &st);
	st.size = min_t(u32, usize, sizeof(st));
	if (copy_to_user(uarg, &st, st.size))
		return -EFAULT;
	if (usize > st.size && clear_user(uarg + st.size, usize - st.size))
		return -EFAULT;
	return 0;
}

static long kwq_ioc_destroy(struct file *file, struct kwq_file *kf, unsigned int cmd,
			    void __user *uarg)
{
	kwq_kill(kf->q);
	return 0;
}

/* The add and the done of every producer's and worker's loop have their own. */
static long kwq_ioc_add(struct file *file, struct kwq_file *kf, unsigned int cmd,
			void __user *uarg)
{
	struct kwq_ioc_key k __uninitialized;	/* read whole, or unused */
	u8 key[KWQ_KEY_MAX] __uninitialized;	/* written before read */
	struct kwq_add_opts o;
	int ret;

	ret = kwq_ioc_key_in(uarg, KWQ_KEY_ADD, &k, key);
	if (ret)
		return ret;
	/*
	 * kwq_add_policy() without its call: k.flags is a policy, checked.
	 * Set after the copy-in (whose user access clobbers memory) and
	 * masked, the options are constants the add's body is compiled
	 * with: it drops the paths of a delay and of the kernel's other
	 * flags (kwq_add_may_wait()).
	 */
	BUILD_BUG_ON(KWQ_ADD_POLICY_MASK != KWQ_POLICY_STRICT);
	o = (struct kwq_add_opts){ .flags = k.flags & KWQ_ADD_POLICY_MASK };
	return kwq_ioc_key_out(uarg, kwq_add_common(kf->q, key, k.key_len, &o, kf->q->gfp));
}

static long kwq_ioc_done(struct file *file, struct kwq_file *kf, unsigned int cmd,
			 void __user *uarg)
{
	struct kwq_ioc_key k __uninitialized;	/* read whole, or unused */
	u8 key[KWQ_KEY_MAX] __uninitialized;	/* written before read */
	int ret;

	ret = kwq_ioc_key_in(uarg, KWQ_KEY_DONE, &k, key);
	if (ret)
		return ret;
	return kwq_ioc_key_out(uarg, kwq_done_leased(kf->q, key, k.key_len, &kf->lease,
						     k.ticket));
}

/* The other commands of struct kwq_ioc_key share one. */
static long kwq_ioc_key(struct file *file, struct kwq_file *kf, unsigned int cmd,
			void __user *uarg)
{
	static const enum kwq_key_cmd ops[] = {
		[_IOC_NR(KWQ_IOC_CANCEL)] = KWQ_KEY_CANCEL,
		[_IOC_NR(KWQ_IOC_ADD_RATE_LIMITED)] = KWQ_KEY_ADD_RATE_LIMITED,
		[_IOC_NR(KWQ_IOC_FORGET)] = KWQ_KEY_FORGET,
		[_IOC_NR(KWQ_IOC_NUM_REQUEUES)] = KWQ_KEY_NUM_REQUEUES,
	};
	enum kwq_key_cmd op = ops[_IOC_NR(cmd)];
	struct kwq_ioc_key k __uninitialized;	/* read whole, or unused */
	u8 key[KWQ_KEY_MAX] __uninitialized;	/* written before read */
	struct kwq *q = kf->q;
	int ret;

	ret = kwq_ioc_key_in(uarg, op, &k, key);
	if (ret)
		return ret;
	switch (op) {
	case KWQ_KEY_CANCEL:
		ret = kwq_cancel(q, key, k.key_len);
		break;
	case KWQ_KEY_ADD_RATE_LIMITED:
		ret = kwq_add_rate_limited(q, key, k.key_len);
		break;
	case KWQ_KEY_FORGET:
		ret = kwq_forget(q, key, k.key_len);
		break;
	default:
		ret = kwq_num_requeues(q, key, k.key_len);
		break;
	}
	return kwq_ioc_key_out(uarg, ret);
}

static long kwq_ioc_shutdown(struct file *file, struct kwq_file *kf, unsigned int cmd,
			     void __user *uarg)
{
	kwq_shutdown_ctx(kf->q, true);
	return 0;
}

/* What a command needs before it runs (kwq_cmd.need), checked in this order. */
#define KWQ_NEED_QUEUE	BIT(0)	/* the file is attached to a queue, else -EBADFD */
#define KWQ_NEED_READ	BIT(1)	/* the file was opened for reading, else -EBADF */
#define KWQ_NEED_WRITE	BIT(2)	/* the file was opened for writing, else -EBADF */
/* The opener owns the queue or has CAP_SYS_ADMIN in its scope's user namespace, else -EPERM. */
#define KWQ_NEED_OWNER	BIT(3)
#define KWQ_ANY_SIZE	BIT(4)	/* the command's size field may differ (stats) */
/*
 * The opener was in the initial IPC namespace with CAP_SYS_ADMIN in the
 * initial user namespace (every scope's queues), else -EPERM.
 */
#define KWQ_NEED_HOST_ADMIN	BIT(5)

/**
 * struct kwq_cmd - one ioctl of /dev/kwq: the access matrix and the handler
 * @cmd: the full command number; another size or direction is -ENOTTY
 *	(another size is the handler's to judge with KWQ_ANY_SIZE).
 * @need: KWQ_NEED_* rights, checked in kwq_cmd_allowed() and nowhere else.
 * @run: the handler; kwq_file.q is set when @need has KWQ_NEED_QUEUE.
 */
struct kwq_cmd {
	unsigned int cmd;
	unsigned int need;
	long (*run)(struct file *file, struct kwq_file *kf, unsigned int cmd, void __user *uarg);
};

#define KWQ_Q	KWQ_NEED_QUEUE
#define KWQ_QR	(KWQ_NEED_QUEUE | KWQ_NEED_READ)
#define KWQ_QW	(KWQ_NEED_QUEUE | KWQ_NEED_WRITE)
#define KWQ_QRW	(KWQ_NEED_QUEUE | KWQ_NEED_READ | KWQ_NEED_WRITE)
#define KWQ_QO	(KWQ_NEED_QUEUE | KWQ_NEED_OWNER)

/* The access matrix; Documentation/kwq-security.rst explains each line. */
static const struct kwq_cmd kwq_cmds[] = {
	[_IOC_NR(KWQ_IOC_VERSION)] = { KWQ_IOC_VERSION, 0, kwq_ioc_version },
	[_IOC_NR(KWQ_IOC_CREATE)] = { KWQ_IOC_CREATE, 0, kwq_ioc_create },
	[_IOC_NR(KWQ_IOC_OPEN)] = { KWQ_IOC_OPEN, 0, kwq_ioc_open },
	[_IOC_NR(KWQ_IOC_LIST)] = { KWQ_IOC_LIST, 0, kwq_ioc_list },
	[_IOC_NR(KWQ_IOC_SCOPE_LIMITS)] = { KWQ_IOC_SCOPE_LIMITS, 0, kwq_ioc_scope_limits },
	[_IOC_NR(KWQ_IOC_LIST_ALL)] = { KWQ_IOC_LIST_ALL, KWQ_NEED_HOST_ADMIN, kwq_ioc_list_all },
	[_IOC_NR(KWQ_IOC_DESTROY_IN)] = { KWQ_IOC_DESTROY_IN, KWQ_NEED_HOST_ADMIN,
					  kwq_ioc_destroy_in },
	[_IOC_NR(KWQ_IOC_DESTROY)] = { KWQ_IOC_DESTROY, KWQ_QO, kwq_ioc_destroy },
	[_IOC_NR(KWQ_IOC_ADD)] = { KWQ_IOC_ADD, KWQ_QW, kwq_ioc_add },
	[_IOC_NR(KWQ_IOC_ADD_AFTER)] = { KWQ_IOC_ADD_AFTER, KWQ_QW, kwq_ioc_add_after },
	[_IOC_NR(KWQ_IOC_CANCEL)] = { KWQ_IOC_CANCEL, KWQ_QW, kwq_ioc_key },
	[_IOC_NR(KWQ_IOC_ADD_RATE_LIMITED)] = { KWQ_IOC_ADD_RATE_LIMITED, KWQ_QW, kwq_ioc_key },
	[_IOC_NR(KWQ_IOC_ADD_BATCH)] = { KWQ_IOC_ADD_BATCH, KWQ_QW, kwq_ioc_batch },
	[_IOC_NR(KWQ_IOC_GET)] = { KWQ_IOC_GET, KWQ_QR, kwq_ioc_get },
	[_IOC_NR(KWQ_IOC_DONE)] = { KWQ_IOC_DONE, KWQ_QR, kwq_ioc_done },
	[_IOC_NR(KWQ_IOC_ADD_EX)] = { KWQ_IOC_ADD_EX, KWQ_QW, kwq_ioc_add_ex },
	[_IOC_NR(KWQ_IOC_DONE_GET)] = { KWQ_IOC_DONE_GET, KWQ_QR, kwq_ioc_done_get },
	[_IOC_NR(KWQ_IOC_GET_BATCH)] = { KWQ_IOC_GET_BATCH, KWQ_QR, kwq_ioc_batch },
	[_IOC_NR(KWQ_IOC_DONE_BATCH)] = { KWQ_IOC_DONE_BATCH, KWQ_QR, kwq_ioc_batch },
	[_IOC_NR(KWQ_IOC_FORGET)] = { KWQ_IOC_FORGET, KWQ_QRW, kwq_ioc_key },
	[_IOC_NR(KWQ_IOC_NUM_REQUEUES)] = { KWQ_IOC_NUM_REQUEUES, KWQ_QR, kwq_ioc_key },
	[_IOC_NR(KWQ_IOC_SHUTDOWN)] = { KWQ_IOC_SHUTDOWN, KWQ_QO, kwq_ioc_shutdown },
	[_IOC_NR(KWQ_IOC_DRAIN)] = { KWQ_IOC_DRAIN, KWQ_QO, kwq_ioc_drain },
	[_IOC_NR(KWQ_IOC_CLOCK_STEP)] = { KWQ_IOC_CLOCK_STEP, KWQ_QO | KWQ_NEED_WRITE,
					  kwq_ioc_clock_step },
	[_IOC_NR(KWQ_IOC_STATS)] = { KWQ_IOC_STATS, KWQ_QR | KWQ_ANY_SIZE, kwq_ioc_stats },
};

/* The one place that decides whether the caller may run @c on @file. */
static long kwq_cmd_allowed(const struct kwq_cmd *c, struct file *file, struct kwq_file *kf)
{
	struct kwq *q;

	if ((c->need & KWQ_NEED_HOST_ADMIN) &&
	    (kf->scope->ns.inum != PROC_IPC_INIT_INO ||
	     !file_ns_capable(file, &init_user_ns, CAP_SYS_ADMIN)))
		return -EPERM;
	if (!(c->need & KWQ_NEED_QUEUE))
		return 0;
	q = kwq_file_queue(kf);
	if (!q)
		return -EBADFD;
	if ((c->need & KWQ_NEED_READ) && !(file->f_mode & FMODE_READ))
		return -EBADF;
	if ((c->need & KWQ_NEED_WRITE) && !(file->f_mode & FMODE_WRITE))
		return -EBADF;
	if ((c->need & KWQ_NEED_OWNER) && !kwq_is_owner(q, file, kf))
		return -EPERM;
	return 0;
}

static long kwq_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct kwq_file *kf = file->private_data;
	unsigned int size_mask = _IOC_SIZEMASK << _IOC_SIZESHIFT;
	const struct kwq_cmd *c;
	long ret;

	if (_IOC_TYPE(cmd) != KWQ_IOC_MAGIC || _IOC_NR(cmd) >= ARRAY_SIZE(kwq_cmds))
		return -ENOTTY;
	c = &kwq_cmds[array_index_nospec(_IOC_NR(cmd), ARRAY_SIZE(kwq_cmds))];
	if (!c->run)
		return -ENOTTY;
	if (c->need & KWQ_ANY_SIZE ? (c->cmd ^ cmd) & ~size_mask : c->cmd != cmd)
		return -ENOTTY;
	ret = kwq_cmd_allowed(c, file, kf);
	if (ret)
		return ret;
	return c->run(file, kf, cmd, (void __user *)arg);
}

static __poll_t kwq_poll(struct file *file, poll_table *wait)
{
	struct kwq_file *kf = file->private_data;
	struct kwq *q = kwq_file_queue(kf);

	if (!q) {
		/* Join a wait queue even now: the attach wakes it (kwq_attach()). */
		poll_wait(file, &kf->attach_wait, wait);
		/* Pairs with the one in kwq_attach() (waitqueue_active()). */
		smp_mb();
		q = kwq_file_queue(kf);
		if (!q)
			return EPOLLERR;
	}
	/* Readiness tells whether keys are there: a reader's right. */
	if (!(file->f_mode & FMODE_READ))
		return EPOLLERR;
	poll_wait(file, &q->get_wait, wait);
	/* Pairs with wq_has_sleeper() in the core's wake-up of consumers. */
	smp_mb();
	return kwq_readable(q) ? EPOLLIN | EPOLLRDNORM : 0;
}

static int kwq_open(struct inode *inode, struct file *file)
{
	struct kwq_file *kf = kzalloc(sizeof(*kf), GFP_KERNEL_ACCOUNT);

	if (!kf)
		return -ENOMEM;
	mutex_init(&kf->attach_lock);
	init_waitqueue_head(&kf->attach_wait);
	kf->scope = kwq_scope_current();
	file->private_data = kf;
	return stream_open(inode, file);
}

static int kwq_release(struct inode *inode, struct file *file)
{
	struct kwq_file *kf = file->private_data;

	if (kf->q) {
		if (kf->forwarding)
			remove_wait_queue(&kf->q->get_wait, &kf->forward);
		kwq_lease_end_ctx(kf->q, &kf->lease, true);
		kwq_put(kf->q);
	}
	kwq_file_batch_release(kf);
	kwq_scope_put(kf->scope);
	mutex_destroy(&kf->attach_lock);
	kfree(kf);
	return 0;
}

static const struct file_operations kwq_fops = {
	.owner = THIS_MODULE,
	.open = kwq_open,
	.release = kwq_release,
	.unlocked_ioctl = kwq_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.poll = kwq_poll,
};

static struct miscdevice kwq_miscdev = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "kwq",
	.fops = &kwq_fops,
	.mode = 0666,
};

int kwq_dev_init(void)
{
	return misc_register(&kwq_miscdev);
}

void kwq_dev_exit(void)
{
	misc_deregister(&kwq_miscdev);
}
