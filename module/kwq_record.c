// SPDX-License-Identifier: GPL-2.0
/*
 * kwq records: the one record (struct kwq_item) of each key in a queue's
 * key table, how records are made, kept as spares, retired and freed, the
 * table's resize worker, and the transitions of kwq_state.h wrapped with
 * the stamps and counters that go with them. Everything here runs under
 * kwq.lock except allocation, freeing and the resize worker's unlocked
 * steps. Calls nothing above it, except the queue's reference count.
 */

#include <linux/bitops.h>
#include <linux/err.h>
#include <linux/module.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/workqueue.h>

#include "kwq_compat.h"
#include "kwq_core.h"
#include "kwq_state.h"
#include "kwq_key.h"
#include "kwq_payload.h"

/* Resizes of key tables (kwq_resize_work()). */
static struct workqueue_struct *kwq_resize_wq;

/*
 * Records of small keys, one cache per KWQ_REC_* kind: plain queues,
 * payload queues (a pointer longer), tenant queues (a flow longer), both.
 */
static struct kmem_cache *kwq_item_caches[KWQ_REC_KINDS];
static const char *const kwq_item_cache_names[KWQ_REC_KINDS] = {
	"kwq_item", "kwq_item_payload", "kwq_item_tenant", "kwq_item_payload_tenant",
};

static struct kmem_cache *kwq_rec_cache(u32 kind)
{
	return kwq_item_caches[kind];
}

/* @tail: bytes past the fixed part, kwq_rec_tail(). */
static size_t kwq_item_alloc_size(u32 tail)
{
	return struct_size((struct kwq_item *)NULL, key, tail);
}

/* What the queue's records carry past the key: KWQ_REC_* bits. */
static inline u32 kwq_rec_kind(const struct kwq *q)
{
	return q->acct.rec_kind;
}

static void kwq_caches_destroy(void)
{
	u32 i;

	for (i = 0; i < KWQ_REC_KINDS; i++) {
		kmem_cache_destroy(kwq_item_caches[i]);
		kwq_item_caches[i] = NULL;
	}
}

/**
 * kwq_core_init() - set up what all queues share
 *
 * Return: 0 or -ENOMEM.
 */
int kwq_core_init(void)
{
	u32 i;

	kwq_resize_wq = alloc_workqueue("kwq_resize", WQ_UNBOUND, 0);
	if (!kwq_resize_wq)
		return -ENOMEM;
	for (i = 0; i < KWQ_REC_KINDS; i++) {
		kwq_item_caches[i] =
			kmem_cache_create(kwq_item_cache_names[i],
					  kwq_item_alloc_size(kwq_rec_tail(i, KWQ_SMALL_KEY)),
					  0, 0, NULL);
		if (!kwq_item_caches[i]) {
			kwq_caches_destroy();
			destroy_workqueue(kwq_resize_wq);
			return -ENOMEM;
		}
	}
	return 0;
}

/**
 * kwq_core_exit() - tear down what kwq_core_init() set up
 *
 * Every queue must be gone.
 */
void kwq_core_exit(void)
{
	/* Pending resizes hold the last references of their queues. */
	destroy_workqueue(kwq_resize_wq);
	kwq_caches_destroy();
}

/**
 * kwq_item_bytes() - memory one key record takes
 * @key_len: key length in bytes.
 *
 * For capacity planning: the slab object size of a record holding a key
 * of @key_len bytes, excluding the key table's share (one pointer per
 * bucket: 1 to 8 buckets per key, 2 to 4 after a resize).
 *
 * Context: any.
 * Return: bytes.
 */
size_t kwq_item_bytes(u32 key_len)
{
	return kwq_rec_bytes(0, key_len);
}
EXPORT_SYMBOL_GPL(kwq_item_bytes);

/* kwq_item_bytes() of a record of a queue of record kind @kind (KWQ_REC_*). */
size_t kwq_rec_bytes(u32 kind, u32 key_len)
{
	if (key_len <= KWQ_SMALL_KEY)
		return kmem_cache_size(kwq_rec_cache(kind));
	return kmalloc_size_roundup(kwq_item_alloc_size(kwq_rec_tail(kind, key_len)));
}

/*
 * Sides come in chunks of a page, each carved into KWQ_SIDES_PER_CHUNK
 * sides for the queue's spares (kwq.side_spare): a queue that takes
 * 65,536 keys at once makes 1,171 allocations, not 65,536, each a slab
 * round trip (and under KASAN and kmemleak a stack trace and a tracked
 * object). A queue keeps its chunks, linked on kwq.side_chunks, while any
 * side is in use: as many as its keys needed at once, at most one per
 * key. When the last side in use comes back, a worker frees all but
 * KWQ_SIDES_KEPT sides' worth (kwq_sides_work()), so a burst does not pin
 * its pages for the queue's life, and batches of up to KWQ_SPARE_MAX keys
 * going round do not allocate them again and again.
 */
struct kwq_side_chunk {
	struct kwq_side_chunk *next;
	struct kwq_side side[];
};

static_assert(sizeof(struct kwq_side_chunk) == sizeof(void *));

/*
 * Charged to the memory cgroup as records are: only for a queue made by a
 * user program (kwq.gfp has __GFP_ACCOUNT), whatever @gfp the caller has.
 */
static struct kwq_side_chunk *kwq_side_chunk_alloc(struct kwq *q, gfp_t gfp)
{
	return kmalloc(struct_size((struct kwq_side_chunk *)NULL, side, KWQ_SIDES_PER_CHUNK),
		       gfp | (q->gfp & __GFP_ACCOUNT));
}

/* Put a new chunk's sides with the spares (a constant number of them). */
static void kwq_side_chunk_add_locked(struct kwq *q, struct kwq_side_chunk *c)
{
	struct kwq_side *s;
	u32 i;

	c->next = q->side_chunks;
	q->side_chunks = c;
	q->n_sides += KWQ_SIDES_PER_CHUNK;
	for (i = 0; i < KWQ_SIDES_PER_CHUNK; i++) {
		s = &c->side[i];
		s->zero = 0;
		RB_CLEAR_NODE(&s->entry.wait.node);
		s->bound = 0;
		s->holder = NULL;
		s->ticket = 0;
		kwq_side_push(q, s);
	}
}

/* A chunk allocated with @gfp, which may sleep: the lock is let go of meanwhile. */
static struct kwq_side_chunk *kwq_side_chunk_alloc_unlocked(struct kwq *q, gfp_t gfp)
	__releases(&q->lock) __acquires(&q->lock)
{
	struct kwq_side_chunk *c;

	kwq_unlock(q);
	c = kwq_side_chunk_alloc(q, gfp);
	kwq_lock(q);
	return c;
}

/*
 * Have @want spare sides: new chunks allocated without sleeping, or, if
 * that fails and @gfp is not 0, with @gfp (which may sleep), the lock let
 * go of meanwhile; -ENOMEM if they cannot be had. Every allocation of
 * sides comes here or to kwq_side_refill_locked(): an add or get that
 * finds none spare, a get batch before each chunk, so that a chunk short
 * of memory takes nothing.
 */
int kwq_side_reserve_locked(struct kwq *q, u32 want, gfp_t gfp)
{
	struct kwq_side_chunk *c;

	while (q->n_side_spare < want) {
		c = kwq_side_chunk_alloc(q, (q->gfp & ~__GFP_DIRECT_RECLAIM) | __GFP_NOWARN);
		if (!c && gfp)
			c = kwq_side_chunk_alloc_unlocked(q, gfp);
		if (!c)
			return -ENOMEM;
		kwq_side_chunk_add_locked(q, c);
	}
	return 0;
}

/* kwq_side_ensure_locked() with no spare: a chunk without sleeping. */
bool kwq_side_ensure_slow_locked(struct kwq *q)
{
	return !kwq_side_reserve_locked(q, 1, 0);
}

/*
 * After kwq_side_ensure_locked() failed (its allocation without sleeping
 * is not tried again): a spare side, a chunk allocated with @gfp, which
 * may sleep, the lock let go of meanwhile, unless one came back before;
 * -ENOMEM.
 */
int kwq_side_refill_locked(struct kwq *q, gfp_t gfp)
{
	struct kwq_side_chunk *c;

	if (q->side_spare)
		return 0;
	c = kwq_side_chunk_alloc_unlocked(q, gfp);
	if (!c)
		return -ENOMEM;
	kwq_side_chunk_add_locked(q, c);
	return 0;
}

/* Unlocked: kwq_side_refill_locked(). */
int kwq_side_refill(struct kwq *q, gfp_t gfp)
{
	int ret;

	kwq_lock(q);
	ret = kwq_side_refill_locked(q, gfp);
	kwq_unlock(q);
	return ret;
}

/*
 * Called by kwq_side_push() when no side is in use and the queue has more
 * than KWQ_SIDES_KEPT: free the rest in a worker, which holds a reference.
 * Context: under kwq.lock, any context that may take it.
 */
void kwq_sides_idle_locked(struct kwq *q)
{
	lockdep_assert_held(&q->lock);
	if (q->sides_trimming || q->dead)
		return;
	/*
	 * The timer runs without a reference of its own: on a queue whose
	 * last reference is being dropped, leave the sides to kwq_release().
	 */
	if (!kref_get_unless_zero(&q->ref))
		return;
	q->sides_trimming = true;
	queue_work(kwq_resize_wq, &q->sides_work);
}

/*
 * If no side is in use now (a key may have taken one since
 * kwq_sides_idle_locked()), keep the first chunks of KWQ_SIDES_KEPT
 * sides: their sides become the only spares, in one hold of a constant
 * length (KWQ_SIDES_KEPT sides); the other chunks are freed after it. A
 * queue that needs more again allocates them again.
 * Context: process context (the resize workqueue).
 */
void kwq_sides_work(struct work_struct *work)
{
	struct kwq *q = container_of(work, struct kwq, sides_work);
	struct kwq_side_chunk *c, *keep, *rest = NULL;
	u32 i;

	kwq_lock(q);
	if (!q->dead && q->n_side_spare == q->n_sides && q->n_sides > KWQ_SIDES_KEPT) {
		keep = q->side_chunks;
		c = keep;
		for (i = KWQ_SIDES_PER_CHUNK; i < KWQ_SIDES_KEPT; i += KWQ_SIDES_PER_CHUNK)
			c = c->next;
		rest = c->next;
		c->next = NULL;
		q->side_chunks = NULL;
		q->side_spare = NULL;
		q->n_side_spare = 0;
		q->n_sides = 0;
		while (keep) {
			c = keep;
			keep = keep->next;
			kwq_side_chunk_add_locked(q, c);
		}
	}
	q->sides_trimming = false;
	kwq_unlock(q);
	while (rest) {
		c = rest;
		rest = rest->next;
		kfree(c);
		cond_resched();
	}
	kwq_put(q);
}

static void kwq_rec_free(struct kwq_item *it, u32 kind)
{
	if (it->len <= KWQ_SMALL_KEY)
		kmem_cache_free(kwq_rec_cache(kind), it);
	else
		kfree(it);
}

/* Free a record of a plain queue, or one without a payload. */
static void kwq_item_free_plain(struct kwq_item *it)
{
	kwq_rec_free(it, 0);
}

static void kwq_item_free_tenant(struct kwq_item *it)
{
	kwq_rec_free(it, KWQ_REC_TENANT);
}

/* Free a record of a payload queue, and its payload (the queue is going away). */
static void kwq_item_free_payload(struct kwq_item *it)
{
	kwq_payload_put(*kwq_payload_slot(it));
	kwq_rec_free(it, KWQ_REC_PAYLOAD);
}

static void kwq_item_free_payload_tenant(struct kwq_item *it)
{
	kwq_payload_put(*kwq_payload_slot(it));
	kwq_rec_free(it, KWQ_REC_PAYLOAD | KWQ_REC_TENANT);
}

void kwq_item_free(struct kwq *q, struct kwq_item *it)
{
	kwq_rec_free(it, kwq_rec_kind(q));
}

static void kwq_item_init(struct kwq_item *it, const struct kwq_lookup_key *k, u32 kind)
{
	INIT_LIST_HEAD(&it->ready);
	it->stamp = 0;
	it->side = NULL;
	it->state = 0;
	it->lone = 0;
	it->failures = 0;
	it->len = k->len;
	it->hash = k->hash;
	it->far = 0;
	it->level = 0;
	kwq_key_copy(it->key, k->key, k->len);
	if (kind & KWQ_REC_PAYLOAD)
		*kwq_payload_slot(it) = NULL;
	if (kind & KWQ_REC_TENANT)
		kwq_ten_rec_init(it, kwq_rec_skip(kind));
}

struct kwq_item *kwq_item_new(struct kwq *q, const struct kwq_lookup_key *k, gfp_t gfp)
{
	u32 kind = kwq_rec_kind(q);
	struct kwq_item *it;

	/*
	 * The caches are not SLAB_ACCOUNT: a queue made by a user program
	 * charges its records (kwq.gfp), a kernel module's queue charges none,
	 * whoever adds (Documentation/kwq-limits.rst).
	 */
	gfp |= q->gfp & __GFP_ACCOUNT;
	it = k->len <= KWQ_SMALL_KEY ? kmem_cache_alloc(kwq_rec_cache(kind), gfp) :
	     kmalloc(kwq_item_alloc_size(kwq_rec_tail(kind, k->len)), gfp);
	if (it)
		kwq_item_init(it, k, kind);
	return it;
}

/*
 * A record for a new key: one of the queue's spare records if the key is
 * small, else a new one (allocated with @gfp, which must not sleep here).
 */
struct kwq_item *kwq_item_new_locked(struct kwq *q, const struct kwq_lookup_key *k,
				     gfp_t gfp)
{
	struct kwq_item *it;

	if (k->len > KWQ_SMALL_KEY || !q->spare)
		return kwq_item_new(q, k, gfp);
	it = q->spare;
	q->spare = it->hnext;
	q->n_spare--;
	kwq_item_init(it, k, kwq_rec_kind(q));
	return it;
}

/*
 * Schedule a resize (kwq_table_check_locked() found the load off); the
 * worker holds a reference on the queue till done.
 */
void kwq_table_resize_locked(struct kwq *q)
{
	if (q->items.resizing || q->dead)
		return;
	q->items.resizing = true;
	kwq_get_ref(q);
	queue_work(kwq_resize_wq, &q->resize_work);
}

/*
 * Resize the key table: allocate the new buckets unlocked, then move the
 * old ones a step at a time, letting go of the lock in between so that a
 * table of millions of keys never stops the queue for long.
 */
void kwq_resize_work(struct work_struct *work)
{
	struct kwq *q = container_of(work, struct kwq, resize_work);
	struct kwq_item **buckets = NULL, **old = NULL;
	bool again;
	u32 bits;

	kwq_lock(q);
	bits = q->dead ? 0 : kwq_table_want_resize(&q->items);
	kwq_unlock(q);
	if (bits)
		buckets = kwq_acct_table_alloc(&q->acct, bits, q->gfp);

	kwq_lock(q);
	if (buckets && !q->dead) {
		kwq_table_begin_resize(&q->items, buckets, bits);
		buckets = NULL;
		while (!kwq_table_move_step(&q->items)) {
			kwq_unlock(q);
			cond_resched();
			kwq_lock(q);
		}
		old = kwq_table_end_resize(&q->items);
	}
	/*
	 * The size was chosen before the allocation; if the keys outran it
	 * meanwhile, go again, keeping the flag and the reference.
	 */
	again = bits && old && !q->dead && kwq_table_want_resize(&q->items);
	if (!again)
		q->items.resizing = false;
	kwq_unlock(q);
	kwq_table_free(buckets);
	kwq_table_free(old);
	if (again)
		queue_work(kwq_resize_wq, &q->resize_work);
	else
		kwq_put(q);
}

/* Unhash a record and retire it. */
void kwq_item_drop_locked(struct kwq *q, struct kwq_item *it, struct list_head *stale)
{
	kwq_table_remove(&q->items, it);
	kwq_acct_uncharge(&q->acct, it->len);
	kwq_table_check_locked(q);
	kwq_item_retire_locked(q, it, stale);
}

/* Forget the least recently active backoff-only record, if there is one. */
bool kwq_evict_backoff_locked(struct kwq *q, struct list_head *stale)
{
	struct kwq_item *it = list_first_entry_or_null(&q->backoff, struct kwq_item, ready);

	if (!it)
		return false;
	kwq_st_unbackoff(q, it);
	q->backoff_evictions++;
	kwq_item_drop_locked(q, it, stale);
	return true;
}

/*
 * A record just lost a state bit. With no state left it is dropped, or,
 * if it still counts failures, kept as backoff-only at the tail of the
 * backoff list, whose length is bounded (client-go's failure maps grow until
 * Forget, kubernetes PR #138743).
 */
void kwq_item_settle_locked(struct kwq *q, struct kwq_item *it,
			    struct list_head *stale)
{
	if (it->state)
		return;
	/* Nothing will run the key: its payload goes (kwq_payload.h). */
	if (q->payload_max)
		kwq_payload_clear_locked(q, it);
	if (!it->failures) {
		kwq_item_drop_locked(q, it, stale);
		return;
	}
	kwq_st_backoff(q, it);
	while (q->n_backoff > q->max_backoff && kwq_evict_backoff_locked(q, stale))
		;
}

/* kwq_item_activate_locked() of a backoff-only record. */
void kwq_item_unbackoff_locked(struct kwq *q, struct kwq_item *it)
{
	kwq_st_unbackoff(q, it);
}

void kwq_free_stale(struct kwq *q, struct list_head *stale)
{
	struct kwq_item *it, *next;

	list_for_each_entry_safe(it, next, stale, ready)
		kwq_item_free(q, it);
}

/* Upper bounds of the histogram buckets, in ns (the last is +Inf). */
const u64 kwq_hist_bounds[KWQ_HIST_BUCKETS - 1] = {
	10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000,
	1000000000, 10000000000ULL,
};

/*
 * For fls64(ns): how many bounds lie below 2^(fls64(ns) - 1), so below
 * @ns. The next bound is at least that power of two and the one after it
 * ten times more, above @ns: one compare finds the bucket
 * (kwq_hist_observe()), where a walk up the bounds took one per power of
 * ten.
 */
const u8 kwq_hist_below[65] = {
	0, 0, 0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 5, 5, 5, 6,
	6, 6, 6, 7, 7, 7, 8, 8, 8, 9, 9, 9, 9, 10, 10, 10, 10, 10, 10, 10,
	10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10,
	10, 10, 10, 10, 10, 10,
};

/* Queue a fresh (or only waiting) record; its queue latency starts now. */
void kwq_ready_locked(struct kwq *q, struct kwq_item *it, bool at_head)
{
	/* A key that waits on while queued keeps its entry in a side. */
	if (it->lone)
		kwq_st_unlone(q, it);
	it->stamp = kwq_stamp_now(q);
	kwq_st_queue(q, it, at_head);
}

/* Mark an existing record dirty; returns an enum kwq_add_result. */
int kwq_mark_dirty_locked(struct kwq *q, struct kwq_item *it, unsigned int *ready)
{
	if (it->state & KWQ_ITEM_DIRTY) {
		q->dedups++;
		return KWQ_ADD_DUPLICATE;
	}
	q->adds++;
	if (it->state & KWQ_ITEM_PROCESSING) {
		kwq_st_defer(q, it);
		return KWQ_ADD_DEFERRED;
	}
	kwq_ready_locked(q, it, false);
	(*ready)++;
	return KWQ_ADD_QUEUED;
}

/* Free every record of a queue nobody uses any more, the spares too. */
void kwq_records_free(struct kwq *q)
{
	static void (*const free_item[KWQ_REC_KINDS])(struct kwq_item *) = {
		kwq_item_free_plain, kwq_item_free_payload,
		kwq_item_free_tenant, kwq_item_free_payload_tenant,
	};

	u32 kind = kwq_rec_kind(q);

	kwq_table_destroy(&q->items, free_item[kind]);
	/* kwq_acct_release() clears the record kind: free by the one read before. */
	kwq_acct_release(&q->acct);
	while (q->spare) {
		struct kwq_item *it = q->spare;

		q->spare = it->hnext;
		kwq_rec_free(it, kind);
	}
	/* Every side, spare or not, lies in a chunk. */
	while (q->side_chunks) {
		struct kwq_side_chunk *c = q->side_chunks;

		q->side_chunks = c->next;
		kfree(c);
	}
	q->side_spare = NULL;
	q->n_side_spare = 0;
	q->n_sides = 0;
}
