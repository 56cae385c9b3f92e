// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/kwq batches: KWQ_IOC_ADD_BATCH, _GET_BATCH and _DONE_BATCH.
 *
 * Entries are handled in chunks: the entries and keys of a chunk are
 * copied in first, then the core carries the chunk out with the queue's
 * lock taken once (kwq_add_batch(), kwq_get_batch_leased(),
 * kwq_done_batch_leased()), so a batch costs one lock round trip, one
 * clock read and one wake-up per chunk rather than per key. Entries are
 * still carried out in order and the batch stops at the first that fails.
 * The report fields of a chunk are written (results as 0, a get's key
 * lengths unchanged) before any of its work, so an unwritable entry stops
 * the batch while nothing of it has happened;
 * a get puts back, in order, every key it took but could not deliver.
 * Either way the count of carried-out entries is exact and no key is lost.
 */

#include <linux/bitops.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "kwq_internal.h"
#include "kwq_uaccess.h"

/* Entries per chunk: bounds the time the queue's lock is held. */
#define KWQ_CHUNK_ENTRIES	64
/* One allocation per batch call holds a chunk's entries and keys. */
#define KWQ_CHUNK_ALLOC		8192

/**
 * struct kwq_chunk - a chunk of a batch, in kernel memory
 * @e: copies of the user's entries.
 * @keys: the keys: copied in (add, done) or taken (get), in @bytes.
 * @vals: results (add, done) or buffer sizes (get) of the entries.
 * @latency: get: the queue latency of each key taken, for
 *	kwq_undeliverable().
 * @bytes: key bytes, packed.
 */
struct kwq_chunk {
	struct kwq_batch_entry e[KWQ_CHUNK_ENTRIES];
	struct kwq_key keys[KWQ_CHUNK_ENTRIES];
	u32 vals[KWQ_CHUNK_ENTRIES];
	u64 latency[KWQ_CHUNK_ENTRIES];
	u8 bytes[];
};

#define KWQ_CHUNK_BYTES		(KWQ_CHUNK_ALLOC - sizeof(struct kwq_chunk))
static_assert(KWQ_CHUNK_BYTES >= KWQ_KEY_MAX);

/*
 * The chunk buffer of a call: the file's own when no other call uses it,
 * so that repeated batches neither allocate nor clear 8 KiB each time
 * (init_on_alloc clears every allocation), else one for this call. As
 * for key records, a full memory cgroup fails the call with -ENOMEM
 * rather than calling its OOM killer.
 */
#define KWQ_CHUNK_GFP	(GFP_KERNEL_ACCOUNT | __GFP_RETRY_MAYFAIL)

static struct kwq_chunk *kwq_chunk_borrow(struct kwq_file *kf, bool *own)
{
	*own = !test_and_set_bit_lock(0, &kf->chunk_busy);
	if (!*own)
		return kmalloc(KWQ_CHUNK_ALLOC, KWQ_CHUNK_GFP);
	if (!kf->chunk)
		kf->chunk = kmalloc(KWQ_CHUNK_ALLOC, KWQ_CHUNK_GFP);
	if (!kf->chunk)
		clear_bit_unlock(0, &kf->chunk_busy);
	return kf->chunk;
}

static void kwq_chunk_return(struct kwq_file *kf, struct kwq_chunk *c, bool own)
{
	if (own)
		clear_bit_unlock(0, &kf->chunk_busy);
	else
		kfree(c);
}

/**
 * kwq_file_batch_release() - free what batch calls kept for a file
 * @kf: the file's state, which no call uses any more.
 */
void kwq_file_batch_release(struct kwq_file *kf)
{
	kfree(kf->chunk);
}

static __always_inline u32 __user *kwq_entry_field(struct kwq_batch_entry __user *ue, u32 i,
						   size_t off)
{
	return (u32 __user *)((u8 __user *)&ue[i] + off);
}

/*
 * Write @n u32 fields, the one at @off in each of the entries at @ue, from
 * @vals (zeros if NULL), in one user access window: a put_user() each
 * took a call and a window of its own, 15 instructions a key in a batch
 * cycle. Returns how many were written, from the first, before a fault.
 */
static u32 kwq_put_fields(struct kwq_batch_entry __user *ue, size_t off, const u32 *vals,
			  u32 n)
{
	u32 i = 0;

	if (!user_write_access_begin(ue, n * sizeof(*ue)))
		return 0;
	/* Two loops: one test of @vals per call, not per entry. */
	if (vals)
		for (; i < n; i++)
			unsafe_put_user(vals[i], kwq_entry_field(ue, i, off), fault);
	else
		for (; i < n; i++)
			unsafe_put_user(0U, kwq_entry_field(ue, i, off), fault);
fault:
	user_write_access_end();
	return i;
}

#define KWQ_RESULT	offsetof(struct kwq_batch_entry, result)
#define KWQ_KEY_LEN	offsetof(struct kwq_batch_entry, key_len)

/*
 * A get's probe of @n entries, in one write window: each result takes 0
 * and each key length is rewritten with the value just copied in (@e),
 * since a get reports there too. Nothing is read inside the window: on
 * architectures whose user-access protection opens reads and writes
 * separately, a read there would fault. Returns how many were written,
 * from the first, before a fault.
 */
static u32 kwq_probe_get_entries(struct kwq_batch_entry __user *ue,
				 const struct kwq_batch_entry *e, u32 n)
{
	u32 i = 0;

	if (!user_write_access_begin(ue, n * sizeof(*ue)))
		return 0;
	for (; i < n; i++) {
		unsafe_put_user(e[i].key_len, kwq_entry_field(ue, i, KWQ_KEY_LEN), fault);
		unsafe_put_user(0U, kwq_entry_field(ue, i, KWQ_RESULT), fault);
	}
fault:
	user_write_access_end();
	return i;
}

/*
 * Copy in up to @n entries and write their results (0) and, for a get
 * (@get), their key lengths (unchanged): work cannot be undone once
 * carried out, so its reports must be known to be writable before, and
 * an entry not carried out gets nothing but a 0 result. Returns how many
 * are usable; *@err says why fewer (-EFAULT), 0 if none was refused.
 */
static u32 kwq_chunk_entries(struct kwq_chunk *c, struct kwq_batch_entry __user *ue,
			     u32 n, bool get, int *err)
{
	size_t left = copy_from_user(c->e, ue, n * sizeof(*ue));
	u32 m = n - DIV_ROUND_UP(left, sizeof(*ue)), w;

	w = get ? kwq_probe_get_entries(ue, c->e, m) : kwq_put_fields(ue, KWQ_RESULT, NULL, m);
	*err = w < n ? -EFAULT : 0;
	return w;
}

/*
 * Copy in the keys of @n entries while they fit. Returns how many were
 * copied; *@err says why fewer: -EINVAL, -EFAULT, or 0 if @bytes is full.
 */
static u32 kwq_chunk_keys(struct kwq_chunk *c, u32 n, int *err)
{
	u32 i, off = 0;

	*err = 0;
	for (i = 0; i < n; i++) {
		u32 len = c->e[i].key_len;

		/*
		 * Any valid key fits an empty chunk, so the first is always
		 * copied (or refused); a bad length that does not fit after
		 * others is refused as the first of the next chunk.
		 */
		if (i && len > KWQ_CHUNK_BYTES - off)
			break;
		*err = kwq_key_from(c->bytes + off, c->e[i].key_ptr, len);
		if (*err)
			break;
		c->keys[i].key = c->bytes + off;
		c->keys[i].len = len;
		c->keys[i].ticket = 0;
		off += len;
	}
	return i;
}

/*
 * One chunk of an add or done batch. Returns how many entries were carried
 * out; *@err is non-zero if the batch stops there: the error of the entry
 * that failed, when it is the chunk's first (an error after the first is
 * seen by resubmitting the rest), and 0 when the keys filled the chunk.
 */
static u32 kwq_chunk_add_done(struct kwq_file *kf, struct kwq_chunk *c, unsigned int cmd,
			      u32 flags, struct kwq_batch_entry __user *ue, u32 n, int *err)
{
	int entries_err, keys_err, ret;
	u32 m, k;

	m = kwq_chunk_entries(c, ue, n, false, &entries_err);
	k = m ? kwq_chunk_keys(c, m, &keys_err) : 0;
	if (k < m)
		entries_err = keys_err;
	if (!k) {
		*err = entries_err;
		return 0;
	}
	if (cmd == KWQ_IOC_ADD_BATCH)
		ret = kwq_add_batch(kf->q, c->keys, k, flags, c->vals);
	else
		ret = kwq_done_batch_leased(kf->q, c->keys, k, &kf->lease, c->vals);
	if (ret < 0) {
		*err = ret;
		return 0;
	}
	*err = ret < k ? -ECANCELED : entries_err;
	/*
	 * Carried out: counted even if a report faults now (its field took
	 * a zero before, so only a concurrent munmap gets here), but nothing
	 * more is done once a report is lost.
	 */
	if (kwq_put_fields(ue, KWQ_RESULT, c->vals, ret) < ret)
		*err = -EFAULT;
	return ret;
}

/*
 * Put back, the last first, keys taken but not delivered: order is kept,
 * and each acts on its own hand-out only.
 */
static void kwq_chunk_give_back(struct kwq_file *kf, struct kwq_chunk *c, u32 from, u32 to)
{
	struct kwq_handout h = {};

	while (to-- > from) {
		h.ticket = c->keys[to].ticket;
		h.latency_ns = c->latency[to];
		kwq_undeliverable(kf->q, c->keys[to].key, c->keys[to].len, &h);
	}
}

/*
 * One chunk of a get batch: waits (until @deadline) only if nothing is
 * ready and @deadline allows. Returns how many keys were delivered; *@err
 * says why fewer than @n (0: the keys filled the chunk, or the chunk took
 * every key that was ready when it looked: the caller's loop looks again).
 */
static u32 kwq_chunk_get(struct kwq_file *kf, struct kwq_chunk *c, struct kwq_lease *lease,
			 ktime_t deadline, struct kwq_batch_entry __user *ue, u32 n, int *err)
{
	int prep_err, ret;
	u32 m, i, taken;

	/*
	 * No more entries than keys could be taken: those ready now, or the
	 * one to wait for (a look without the lock, as the core's after a
	 * wait: keys readied after it come with the next chunk). A consumer
	 * that waits for each key then copies in and probes one entry per
	 * call, not 64.
	 */
	n = min_t(u64, n, max_t(u64, READ_ONCE(kf->q->n_queued), 1));
	m = kwq_chunk_entries(c, ue, n, true, &prep_err);
	/* Each key buffer too, as far as a key can reach: a key taken must have somewhere to go. */
	for (i = 0; i < m; i++) {
		if (kwq_probe_writable(u64_to_user_ptr(c->e[i].key_ptr),
				       min_t(u32, c->e[i].key_len, KWQ_KEY_MAX))) {
			m = i;
			prep_err = -EFAULT;
			break;
		}
	}
	if (!m) {
		*err = prep_err;
		return 0;
	}
	for (i = 0; i < m; i++)
		c->vals[i] = c->e[i].key_len;
	taken = kwq_get_batch_leased(kf->q, c->keys, c->vals, m, c->bytes, KWQ_CHUNK_BYTES,
				     deadline, lease, c->latency, &ret);
	for (i = 0; i < taken; i++) {
		if (kwq_key_copy_out(u64_to_user_ptr(c->e[i].key_ptr), c->keys[i].key,
				     c->keys[i].len))
			break;
		c->vals[i] = c->keys[i].len;
	}
	/*
	 * A key counts as delivered once its length is written too, which
	 * the probe showed possible: only memory changed during the call
	 * makes it fail now.
	 */
	i = kwq_put_fields(ue, KWQ_KEY_LEN, c->vals, i);
	if (i < taken) {
		/* Never lose a key. */
		kwq_chunk_give_back(kf, c, i, taken);
		*err = -EFAULT;
		return i;
	}
	if (ret == -EMSGSIZE && put_user(c->keys[taken].len, &ue[taken].key_len))
		ret = -EFAULT;
	*err = taken < m ? ret : prep_err;
	return taken;
}

/**
 * kwq_ioc_batch() - add, get or done for each entry of a batch
 * @file: the /dev/kwq file.
 * @kf: its state, attached to a queue.
 * @cmd: KWQ_IOC_ADD_BATCH, KWQ_IOC_GET_BATCH or KWQ_IOC_DONE_BATCH.
 * @uarg: the struct kwq_ioc_batch.
 *
 * Entries are handled in order, stopping at the first that fails; a get
 * waits for the first key only and then takes what is ready.
 *
 * Return: 0 with kwq_ioc_batch.completed set if any entry was carried
 * out, else the first entry's error.
 */
long kwq_ioc_batch(struct file *file, struct kwq_file *kf, unsigned int cmd,
		   void __user *uarg)
{
	struct kwq_ioc_batch __user *ub = uarg;
	struct kwq_batch_entry __user *ue;
	u32 known = cmd == KWQ_IOC_GET_BATCH ? KWQ_GET_UNLEASED :
		    cmd == KWQ_IOC_ADD_BATCH ? KWQ_ADD_POLICY_MASK : 0;
	struct kwq_lease *lease;
	struct kwq_ioc_batch b __uninitialized;	/* read whole, or unused */
	struct kwq_chunk *c;
	ktime_t deadline;
	u32 done = 0, n;
	int err = 0;
	bool own;

	if (kwq_struct_in(&b, uarg, sizeof(b)))
		return -EFAULT;
	if ((b.flags & ~known) || b.pad || !kwq_is_zero(b.reserved, sizeof(b.reserved)) ||
	    b.count < 1 || b.count > KWQ_BATCH_MAX ||
	    (cmd != KWQ_IOC_GET_BATCH && b.deadline_ns))
		return -EINVAL;
	deadline = kwq_deadline_from(b.deadline_ns, file);
	lease = cmd == KWQ_IOC_GET_BATCH && (b.flags & KWQ_GET_UNLEASED) ? NULL : &kf->lease;
	ue = u64_to_user_ptr(b.entries_ptr);
	if (kwq_put_report(&ub->completed, 0))
		return -EFAULT;
	c = kwq_chunk_borrow(kf, &own);
	if (!c)
		return -ENOMEM;
	while (!err && done < b.count) {
		u32 m = min_t(u32, b.count - done, KWQ_CHUNK_ENTRIES);

		/* After its first key a get takes only what is ready: none, it ends. */
		if (cmd == KWQ_IOC_GET_BATCH && done && !READ_ONCE(kf->q->n_queued))
			break;
		if (cmd == KWQ_IOC_GET_BATCH)
			/* Wait for the first key only; then take what is ready. */
			n = kwq_chunk_get(kf, c, lease, done ? KWQ_NOWAIT : deadline,
					  ue + done, m, &err);
		else
			n = kwq_chunk_add_done(kf, c, cmd, b.flags, ue + done, m, &err);
		done += n;
		/* A chunk cut short by its keys' bytes or the ready count goes on. */
		if (WARN_ON_ONCE(!n && !err))
			err = -EIO;	/* a key always fits: cannot happen */
	}
	kwq_chunk_return(kf, c, own);
	if (kwq_put_report(&ub->completed, done))
		return -EFAULT;
	return done ? 0 : err;
}
