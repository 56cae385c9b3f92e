// SPDX-License-Identifier: GPL-2.0
/*
 * kwq timer: the waiting set (add-after deadlines, kwq.waiting) and the
 * processing timeout, both served by one hrtimer per queue (or the
 * queue's own struct kwq_clock), armed for the earliest of the next
 * deadline and the oldest processing key's expiry; the end of processing,
 * which moves that expiry; and the sleep of the consumer that keeps the
 * timer: with PREEMPT_RT its own for the next deadline, without it the
 * queue's, pulled to the consumer's CPU.
 *
 * Without PREEMPT_RT the timer expires in the timer interrupt: it runs a
 * step of due keys there and wakes their consumers from there, as timerfd
 * and clock_nanosleep() wake their sleepers, and hands what it cannot do
 * there to a soft timer (kwq.rerun). With PREEMPT_RT, where kwq.lock
 * sleeps, the timer is soft and its callback runs in a kernel thread. It
 * is never marked _HARD (KWQ_TIMER_MODE), and its callback never sets the
 * expiry of a timer another CPU has queued meanwhile.
 */

#include <linux/delay.h>
#include <linux/hrtimer.h>
#include <linux/module.h>
#include <linux/sched.h>

#include "kwq_compat.h"
#include "kwq_core.h"
#include "kwq_state.h"
#include "kwq_trace.h"

/*
 * When the waiting set next needs the timer: its earliest deadline on
 * kwq.waiting, or the move of the first far slot's keys there if that
 * comes first; KTIME_MAX for never. Once the queue is shut down, its
 * waiting keys are only being dropped (or flushed by a drain), a step at
 * a time: none is due any more.
 */
static ktime_t kwq_waiting_next_locked(struct kwq *q)
{
	struct timerqueue_node *next;

	if (q->shutting_down)
		return KTIME_MAX;
	next = timerqueue_getnext(&q->waiting);
	return min(next ? next->expires : KTIME_MAX, kwq_far_move_at(q->far));
}

/*
 * Without PREEMPT_RT: note the CPU the hard timer was just (re)started
 * on, and whether a run of it found that CPU @idle. A hint for
 * kwq_timer_pull(), not a promise: a non-pinned start leaves the timer
 * on the caller's CPU only while that CPU is busy (else, and on an
 * isolated CPU, get_nohz_timer_target() picks another), and a start
 * while the callback runs on another CPU leaves it there until it fires.
 */
static void kwq_timer_note_cpu(struct kwq *q, bool idle)
{
	if (KWQ_TIMER_HARD) {
		WRITE_ONCE(q->timer_cpu, smp_processor_id());
		WRITE_ONCE(q->timer_cpu_idle, idle);
	}
}

/* Give the timer (or the test clock) @expires, if it changed or is @spent. */
static void kwq_arm_locked(struct kwq *q, ktime_t expires, bool spent)
{
	/* A destroyed queue runs no deadline; its clock may forget it. */
	if (q->dead)
		expires = KTIME_MAX;
	if (expires == q->armed && !spent)
		return;
	WRITE_ONCE(q->armed, expires);
	if (q->clock) {
		q->clock->program(q->clock, q, expires);
	} else if (q->hard_run && !hrtimer_is_queued(&q->timer)) {
		/*
		 * In the hard timer's own run: it restarts itself if armed.
		 * Never on a queued timer, whose expiry orders its CPU's
		 * timer tree: another CPU may have started it between the
		 * interrupt and the callback's trylock (kwq_timer_hard_fn()).
		 */
		if (expires != KTIME_MAX && !WARN_ON_ONCE(hrtimer_is_queued(&q->timer)))
			hrtimer_set_expires(&q->timer, expires);
	} else if (expires == KTIME_MAX) {
		hrtimer_try_to_cancel(&q->timer);
	} else {
		hrtimer_start(&q->timer, expires, KWQ_TIMER_MODE);
		kwq_timer_note_cpu(q, false);
	}
}

/* Without PREEMPT_RT: the soft timer, for a step the hard one leaves. */
static void kwq_rerun_soft(struct kwq *q, ktime_t at)
{
	hrtimer_start(&q->rerun, at, HRTIMER_MODE_ABS_SOFT);
}

/*
 * Keys are left due after a run's step: run again at once, the lock let
 * go of in between, in softirq context (a soft hrtimer at an instant
 * after the one the run began at, so that other timers and softirqs go
 * first). A hard timer hands over to the soft one, whose runs arm the
 * hard timer again once nothing more is due: no hard interrupt runs
 * more than one step.
 */
static void kwq_rerun_locked(struct kwq *q, ktime_t now)
{
	if (q->clock || !KWQ_TIMER_HARD) {
		kwq_arm_locked(q, now, true);
		return;
	}
	kwq_arm_locked(q, KTIME_MAX, true);
	kwq_rerun_soft(q, now);
}

/*
 * Point the timer at the earliest waiting deadline, or at the moment the
 * oldest key being processed overstays the processing timeout, whichever
 * comes first, if that changed (or always, when the timer is @spent).
 */
void kwq_program_timer_locked(struct kwq *q, bool spent)
{
	ktime_t expires = kwq_waiting_next_locked(q);
	struct kwq_item *oldest;

	if (q->processing_timeout) {
		oldest = kwq_busy_oldest(q);
		if (oldest)
			expires = min(expires, ns_to_ktime(oldest->stamp + q->processing_timeout));
	}
	kwq_arm_locked(q, expires, spent);
}

void kwq_program_locked(struct kwq *q)
{
	kwq_program_timer_locked(q, false);
}

void kwq_unwait_locked(struct kwq *q, struct kwq_item *it)
{
	kwq_st_unwait(q, it);
}

/*
 * One step of emptying the waiting set, at most KWQ_LOCK_STEP keys in
 * @h, earliest deadline first: queue each now (@flush, on a live queue),
 * or drop the entry and retire a record left without state (to the
 * spares, or to @stale for the caller to free once unlocked, linked
 * through its unused ready link). Far keys move to kwq.waiting first,
 * each a key of the step. Returns whether keys are left.
 */
bool kwq_end_waiting_step_locked(struct kwq *q, bool flush, struct kwq_hold *h,
				 struct list_head *stale, unsigned int *ready)
{
	struct timerqueue_node *node;
	struct kwq_item *it;

	while (kwq_hold_room(h)) {
		node = timerqueue_getnext(&q->waiting);
		if (q->far && q->far->n && (!node || node->expires >= kwq_far_first(q->far))) {
			kwq_st_wait_near(q);
			h->keys++;
			continue;
		}
		if (!node)
			break;
		it = kwq_wait_owner(node);
		kwq_unwait_locked(q, it);
		if (flush && !q->dead) {
			q->fired++;
			kwq_mark_dirty_locked(q, it, ready);
		} else {
			q->waits_dropped++;
			kwq_item_settle_locked(q, it, stale);
		}
		h->keys++;
	}
	kwq_program_locked(q);
	return q->n_waiting;
}

/* now + @ns, @ns clamped to KWQ_DELAY_MAX_NS. */
static ktime_t kwq_after_locked(struct kwq *q, u64 ns)
{
	return ktime_add_safe(kwq_now(q), ns_to_ktime(min_t(u64, ns, KWQ_DELAY_MAX_NS)));
}

/*
 * Once KWQ_FAR_MIN_WAITING keys wait, give the queue its far slots
 * (kwq_far.h), charged like its bucket arrays. Under the lock, so without
 * sleeping: if that fails, deadlines stay on kwq.waiting, and the queue
 * tries again when the waiting keys next reach a multiple of
 * KWQ_FAR_MIN_WAITING.
 */
static void kwq_far_alloc_locked(struct kwq *q)
{
	struct kwq_far *f;
	u32 i;

	if (q->far || q->n_waiting < KWQ_FAR_MIN_WAITING ||
	    q->n_waiting % KWQ_FAR_MIN_WAITING)
		return;
	f = kwq_acct_kmalloc(&q->acct, sizeof(*f),
			     GFP_NOWAIT | __GFP_NOWARN | (q->gfp & __GFP_ACCOUNT));
	if (!f)
		return;
	f->from = 0;
	f->n = 0;
	bitmap_zero(f->nonempty, KWQ_FAR_SLOTS);
	for (i = 0; i < KWQ_FAR_SLOTS; i++)
		INIT_LIST_HEAD(&f->slot[i]);
	q->far = f;
}

/*
 * Give @it a waiting entry at @deadline, bounded by @bound (0: a plain
 * entry), or move its entry there; returns an enum kwq_add_result.
 */
static int kwq_wait_at_locked(struct kwq *q, struct kwq_item *it, ktime_t deadline,
			      ktime_t bound)
{
	int ret = KWQ_ADD_WAITING;

	if (it->state & KWQ_ITEM_WAITING) {
		if (deadline == kwq_item_deadline(it)) {
			/* The entry stays where it is; a bound needs a side. */
			if (bound && it->lone)
				kwq_st_unlone(q, it);
			if (!it->lone)
				it->side->bound = bound;
			return KWQ_ADD_WAIT_KEPT;
		}
		kwq_unwait_locked(q, it);
		ret = KWQ_ADD_WAIT_MOVED;
	}
	kwq_far_alloc_locked(q);
	kwq_st_wait(q, it, deadline, kwq_now(q), bound);
	kwq_program_locked(q);
	return ret;
}

/*
 * Give @it a waiting entry, or move it; returns an enum kwq_add_result.
 * The earliest deadline wins unless KWQ_AFTER_REPLACE. A debounced entry
 * that stays has its bound lowered to this deadline, so that no later
 * debounced add postpones the key past it; one that moves becomes plain.
 */
int kwq_wait_locked(struct kwq *q, struct kwq_item *it, s64 delay_ns, u32 flags)
{
	ktime_t deadline = kwq_after_locked(q, delay_ns);

	if ((it->state & KWQ_ITEM_WAITING) && deadline >= kwq_item_deadline(it) &&
	    !(flags & KWQ_AFTER_REPLACE)) {
		if (kwq_item_bound(it))
			it->side->bound = min(it->side->bound, deadline);
		return KWQ_ADD_WAIT_KEPT;
	}
	return kwq_wait_at_locked(q, it, deadline, 0);
}

/*
 * A debounced add (struct kwq_ioc_add_after has the rules): run the key
 * once it has been quiet for @delay_ns, but no later than @max_wait_ns
 * after the add that started the burst. The caller checked that
 * 0 < @delay_ns <= @max_wait_ns. Returns an enum kwq_add_result.
 */
int kwq_debounce_locked(struct kwq *q, struct kwq_item *it, s64 delay_ns, u64 max_wait_ns)
{
	ktime_t want = kwq_after_locked(q, delay_ns);
	ktime_t bound = kwq_after_locked(q, max_wait_ns);
	ktime_t old, deadline;

	/* A run that needs no deadline is pending: it covers this add. */
	if (it->state & KWQ_ITEM_DIRTY) {
		q->dedups++;
		return KWQ_ADD_DUPLICATE;
	}
	if (!(it->state & KWQ_ITEM_WAITING))
		return kwq_wait_at_locked(q, it, want, bound);
	old = kwq_item_deadline(it);
	if (!kwq_item_bound(it)) {
		/* A plain deadline: the earliest wins, and stays a bound. */
		if (want >= old)
			return KWQ_ADD_WAIT_KEPT;
		return kwq_wait_at_locked(q, it, want, min(bound, old));
	}
	bound = min(bound, kwq_item_bound(it));
	deadline = max(old, want);
	if (deadline > bound) {
		q->debounce_capped++;
		deadline = bound;
	}
	if (deadline > old)
		q->debounced++;
	return kwq_wait_at_locked(q, it, deadline, bound);
}

/*
 * Put keys that stayed processing longer than the processing timeout back
 * at the head of the queue, the oldest first (controller-runtime#798: a
 * worker that hangs must not hold its key forever), counting them in @ready
 * so that consumers are woken for them. At most what is left of @h; keys
 * left over go on in the next run, right behind these (kwq.expiring).
 * Returns whether overdue keys are left.
 */
static bool kwq_expire_processing_locked(struct kwq *q, ktime_t now, struct kwq_hold *h,
					 unsigned int *ready)
{
	struct kwq_item *it;

	if (!q->processing_timeout)
		return false;
	while ((it = kwq_busy_oldest(q)) &&
	       it->stamp + q->processing_timeout <= ktime_to_ns(now)) {
		if (!kwq_hold_room(h))
			return true;
		if (list_empty(&q->expiring.node))
			kwq_give_back_begin_locked(q, &q->expiring);
		trace_kwq_processing_expire(q->name, it->key, it->len, 0,
					    ktime_to_ns(now) - it->stamp);
		q->processing_expiries++;
		kwq_give_back_at_locked(q, it, &q->expiring);
		(*ready)++;
		h->keys++;
	}
	if (!list_empty(&q->expiring.node))
		kwq_give_back_end_locked(q, &q->expiring);
	return false;
}

/*
 * One step of the queue's timer, kwq.lock held: due deadlines (far keys
 * to move first, then earliest first), then processing timeouts (oldest
 * first), at most KWQ_LOCK_STEP keys; then the timer for what comes
 * next, or a run again at once if keys are left. Adds the keys made
 * ready to *@ready.
 */
static void kwq_run_due_locked(struct kwq *q, unsigned int *ready)
{
	struct timerqueue_node *node;
	struct kwq_item *it;
	struct kwq_hold h;
	bool more;
	ktime_t now;

	now = kwq_now(q);
	kwq_hold_begin(q, &h);
	while (!q->shutting_down && kwq_hold_room(&h)) {
		u64 late;
		int ret;

		/* Far keys due to move go first: no deadline passes a slot. */
		if (kwq_far_move_at(q->far) <= now) {
			kwq_st_wait_near(q);
			h.keys++;
			continue;
		}
		node = timerqueue_getnext(&q->waiting);
		if (!node || node->expires > now)
			break;
		late = ktime_to_ns(ktime_sub(now, node->expires));
		it = kwq_wait_owner(node);
		kwq_unwait_locked(q, it);
		q->fired++;
		ret = kwq_mark_dirty_locked(q, it, ready);
		trace_kwq_fire(q->name, it->key, it->len, ret, late);
		h.keys++;
	}
	more = kwq_waiting_next_locked(q) <= now;
	more |= kwq_expire_processing_locked(q, now, &h, ready);
	/* The timer that brought us here may be spent: program the next one. */
	if (more)
		kwq_rerun_locked(q, now);
	else
		kwq_program_timer_locked(q, true);
	kwq_hold_end(q, &h);
}

/**
 * kwq_run_due() - add every waiting key whose deadline has come
 * @q: queue.
 *
 * The queue's own timer calls this. A queue made with its own struct
 * kwq_clock calls it when the clock reaches the time it was asked for.
 * On a destroyed queue it does nothing.
 *
 * One call handles at most KWQ_LOCK_STEP keys (deadlines first, earliest
 * first, then processing timeouts, oldest first). If more are due, it
 * asks for the timer again at the current time, so the rest follow at
 * once, in the same order, the lock let go of in between: a struct
 * kwq_clock must then call it again.
 *
 * Context: process or softirq context.
 */
void kwq_run_due(struct kwq *q)
{
	unsigned int ready = 0;
	bool slow;

	kwq_lock(q);
	if (q->dead) {
		kwq_unlock(q);
		return;
	}
	kwq_run_due_locked(q, &ready);
	slow = kwq_wake_slow_locked(q);
	kwq_unlock(q);
	kwq_wake_fast(q, ready, slow);
}
EXPORT_SYMBOL_GPL(kwq_run_due);

/* The soft timer: the queue's timer with PREEMPT_RT. */
enum hrtimer_restart kwq_timer_fn(struct hrtimer *timer)
{
	kwq_run_due(container_of(timer, struct kwq, timer));
	return HRTIMER_NORESTART;
}

/* The soft timer without PREEMPT_RT: what the hard one leaves to it. */
enum hrtimer_restart kwq_rerun_fn(struct hrtimer *timer)
{
	kwq_run_due(container_of(timer, struct kwq, rerun));
	return HRTIMER_NORESTART;
}

#if IS_ENABLED(CONFIG_KUNIT)
/*
 * KUnit only: how long the hard timer's callback spins before it tries
 * kwq.lock, to hold open the window in which another CPU may start the
 * timer again (kwq_delay_test_timer_restarted_in_window).
 */
unsigned int kwq_test_hard_delay_ms;
EXPORT_SYMBOL_GPL(kwq_test_hard_delay_ms);

static void kwq_test_hard_delay(void)
{
	unsigned int ms = READ_ONCE(kwq_test_hard_delay_ms);

	if (ms)
		mdelay(ms);
}
#else
static inline void kwq_test_hard_delay(void)
{
}
#endif

/*
 * The hard timer (without PREEMPT_RT): one step in the timer interrupt
 * itself, so that the consumer it wakes runs next, with no softirq in
 * between. Elsewhere kwq.lock is taken with interrupts on, so here it is
 * only tried: if it is held, or the queue shuts down (kwq_wake() takes
 * the lock), the soft timer runs the step instead, at once. The step
 * restarts this timer for the next deadline itself (kwq_arm_locked()).
 */
enum hrtimer_restart kwq_timer_hard_fn(struct hrtimer *timer)
{
	struct kwq *q = container_of(timer, struct kwq, timer);
	unsigned int ready = 0;
	bool restart, dead;

	kwq_test_hard_delay();
	if (!kwq_trylock_hardirq(q))
		goto soft;
	if (q->dead || kwq_wake_slow_locked(q)) {
		dead = q->dead;
		kwq_unlock_hardirq(q);
		if (dead)
			return HRTIMER_NORESTART;
		goto soft;
	}
	q->hard_run = true;
	kwq_run_due_locked(q, &ready);
	q->hard_run = false;
	/*
	 * The step's last kwq_arm_locked() left @timer's expiry in kwq.armed,
	 * or started it again if another CPU had queued it meanwhile.
	 */
	restart = q->armed != KTIME_MAX && !hrtimer_is_queued(timer);
	if (restart)
		kwq_timer_note_cpu(q, is_idle_task(current));
	kwq_unlock_hardirq(q);
	kwq_wake_fast(q, ready, false);
	return restart ? HRTIMER_RESTART : HRTIMER_NORESTART;
soft:
	/* kwq_release() cancels this timer, then the soft one: no race with it. */
	kwq_rerun_soft(q, hrtimer_get_expires(timer));
	return HRTIMER_NORESTART;
}

/*
 * Sleep until woken, @deadline or @wake_at (the earliest waiting deadline,
 * KTIME_MAX for none), whichever comes first; the caller set the task
 * state. -ETIMEDOUT once @deadline has passed.
 */
int kwq_sleep_until(ktime_t deadline, ktime_t wake_at)
{
	ktime_t expires = min(deadline, wake_at);

	if (deadline != KWQ_FOREVER && ktime_compare(ktime_get(), deadline) >= 0) {
		__set_current_state(TASK_RUNNING);
		return -ETIMEDOUT;
	}
	if (expires == KTIME_MAX)
		schedule();
	else
		schedule_hrtimeout_range(&expires, 0, HRTIMER_MODE_ABS);
	return 0;
}

/*
 * Without PREEMPT_RT: start the armed hard timer again pinned to this
 * CPU, where the keeper is about to sleep, if its last run found its own
 * CPU idle. Its next interrupts then come on this CPU, as
 * clock_nanosleep()'s come where its sleeper sleeps, rather than on an
 * idle CPU that only sends this one a wake-up interrupt. The old CPU
 * keeps its programmed interrupt, once. A timer whose last run found its
 * CPU busy (a producer's) stays: add-after at 10,000 keys got later when
 * the timer's steps followed the consumer onto its busy CPU. So does one
 * that is not queued (its callback is running, or handed its step to
 * kwq.rerun). A pull counts as a start, not a run: the next keeper pulls
 * only after a run on an idle CPU again, so keepers on several CPUs do
 * not toss the timer between them.
 */
static void kwq_timer_pull(struct kwq *q)
{
	int cpu = raw_smp_processor_id();

	if (!READ_ONCE(q->timer_cpu_idle) || READ_ONCE(q->timer_cpu) == cpu)
		return;
	kwq_lock(q);
	cpu = smp_processor_id();
	if (q->armed != KTIME_MAX && !q->dead && q->timer_cpu_idle && q->timer_cpu != cpu &&
	    hrtimer_is_queued(&q->timer) && !hrtimer_callback_running(&q->timer)) {
		hrtimer_start(&q->timer, q->armed, KWQ_TIMER_MODE | HRTIMER_MODE_PINNED);
		kwq_timer_note_cpu(q, false);
	}
	kwq_unlock(q);
}

/*
 * With PREEMPT_RT, a consumer about to wait runs due deadlines itself and
 * sleeps no later than the next one: its own hrtimer wakes it, for an
 * RT or deadline task straight from the timer interrupt (RT expires other
 * tasks' sleep timers in softirq too), where the queue's soft timer would
 * first wait for softirq processing (which the benchmarks showed costing
 * milliseconds). Only one sleeping consumer at a time keeps such a
 * timer (*@keeper, claimed through kwq.timer_keeper): it runs the due
 * keys, which wakes one more consumer per key made ready, so a deadline
 * wakes one or two consumers, not every sleeper. The soft timer stays
 * armed for the rest. Without PREEMPT_RT the queue's hard timer wakes
 * consumers from the interrupt itself and the keeper keeps no timer of
 * its own: it only pulls the queue's to its CPU (kwq_timer_pull()).
 * Returns the time to wake at; queues on a test clock keep to their
 * clock.
 */
ktime_t kwq_consumer_timer(struct kwq *q, bool *keeper)
{
	ktime_t next = READ_ONCE(q->armed);

	if (q->clock || next == KTIME_MAX)
		return KTIME_MAX;
	if (!*keeper) {
		/* A look first: a failed cmpxchg still takes the line. */
		if (atomic_read(&q->timer_keeper) || atomic_cmpxchg(&q->timer_keeper, 0, 1))
			return KTIME_MAX;
		*keeper = true;
	}
	if (KWQ_TIMER_HARD) {
		kwq_timer_pull(q);
		return KTIME_MAX;
	}
	if (ktime_compare(ktime_get(), next) >= 0) {
		kwq_run_due(q);
		next = READ_ONCE(q->armed);
	}
	return next;
}

/*
 * End processing (processing -> fresh, see kwq_state.h); returns whether
 * the key was re-added meanwhile. The timer follows the oldest key being
 * processed, so it moves if that was this one. A done on a queue without
 * a processing timeout skips this for kwq_st_finish() (kwq_handout.h).
 */
bool kwq_end_processing_locked(struct kwq *q, struct kwq_item *it)
{
	bool was_oldest = q->processing_timeout && kwq_busy_oldest(q) == it;
	bool dirty;

	dirty = kwq_st_finish(q, it);
	if (was_oldest)
		kwq_program_locked(q);
	return dirty;
}

/* Put a processing key back at the head of the queue (of its level), unprocessed. */
void kwq_give_back_locked(struct kwq *q, struct kwq_item *it)
{
	kwq_end_processing_locked(q, it);
	kwq_ready_locked(q, it, true);
}

/* Start a give-back in steps: its first key goes to the head. */
void kwq_give_back_begin_locked(struct kwq *q, struct kwq_give_back *gb)
{
	kwq_order_give_back_begin(&q->order, gb);
}

void kwq_give_back_end_locked(struct kwq *q, struct kwq_give_back *gb)
{
	kwq_order_give_back_end(gb);
}

/*
 * Put a processing key back, unprocessed, right behind the key @gb gave
 * back last if that one is still queued, else at the head (of its level;
 * on a tenant queue every key goes to the head of its flow, its flow
 * first in the rotation, and kwq_lease_end() gives its keys back newest
 * first: kwq_order_ops.gives_back_at_head).
 */
void kwq_give_back_at_locked(struct kwq *q, struct kwq_item *it, struct kwq_give_back *gb)
{
	kwq_end_processing_locked(q, it);
	it->stamp = kwq_stamp_now(q);
	kwq_st_give_back(q, it, gb);
}
