// SPDX-License-Identifier: GPL-2.0
/*
 * kwq manual clock: a queue's time that moves only when a caller steps it
 * (kwq_clock_step(), KWQ_IOC_CLOCK_STEP), for tests of the programs that
 * use the queue, as client-go's fake clock is for its queues.
 *
 * The clock reads CLOCK_MONOTONIC once, when the queue is made, and from
 * then on that instant plus the sum of the steps: inside the queue its
 * instants look like those of a queue on the real clock, and callers see
 * only the time since the start. The queue asks it for a run at its next
 * deadline (struct kwq_clock.program, under kwq.lock); a step moves the
 * time, then calls kwq_run_due() while the queue's request is at or
 * before the new time, a bounded number of times per call: each run
 * handles KWQ_LOCK_STEP keys under the lock and asks again at once if
 * more are due.
 */

#include <linux/atomic.h>
#include <linux/export.h>
#include <linux/ktime.h>
#include <linux/mutex.h>
#include <linux/slab.h>

#include "kwq_core.h"
#include "kwq_manual_clock.h"

/**
 * struct kwq_manual_clock - a queue's manual clock
 * @base: the struct kwq_clock the queue calls.
 * @start: CLOCK_MONOTONIC when the clock was made; its time 0.
 * @elapsed: nanoseconds of steps so far, 0 to KWQ_CLOCK_MAX_NS; read
 *	without a lock by now(), written under @step_lock.
 * @programmed: the instant the queue asked to be run at, KTIME_MAX for
 *	none; written under kwq.lock, read by steps without it.
 * @step_lock: orders steps, so that each one's check against
 *	KWQ_CLOCK_MAX_NS holds for its move.
 */
struct kwq_manual_clock {
	struct kwq_clock base;
	ktime_t start;
	atomic64_t elapsed;
	atomic64_t programmed;
	struct mutex step_lock;	/* orders steps (see above) */
};

static ktime_t kwq_manual_now(struct kwq_clock *clock)
{
	struct kwq_manual_clock *mc = container_of(clock, struct kwq_manual_clock, base);

	return ktime_add_ns(mc->start, atomic64_read(&mc->elapsed));
}

static void kwq_manual_program(struct kwq_clock *clock, struct kwq *q, ktime_t expires)
{
	struct kwq_manual_clock *mc = container_of(clock, struct kwq_manual_clock, base);

	atomic64_set(&mc->programmed, expires);
}

/* The manual clock behind @clock, or NULL if it is another kind. */
static struct kwq_manual_clock *kwq_manual_of(struct kwq_clock *clock)
{
	if (!clock || clock->now != kwq_manual_now)
		return NULL;
	return container_of(clock, struct kwq_manual_clock, base);
}

/**
 * kwq_manual_clock_new() - make a manual clock, at time 0
 * @gfp: allocation flags (the queue's).
 *
 * Return: the clock, or NULL without memory.
 */
struct kwq_clock *kwq_manual_clock_new(gfp_t gfp)
{
	struct kwq_manual_clock *mc = kzalloc(sizeof(*mc), gfp);

	if (!mc)
		return NULL;
	mc->base.now = kwq_manual_now;
	mc->base.program = kwq_manual_program;
	mc->start = ktime_get();
	atomic64_set(&mc->elapsed, 0);
	atomic64_set(&mc->programmed, KTIME_MAX);
	mutex_init(&mc->step_lock);
	return &mc->base;
}

/**
 * kwq_manual_clock_free() - free a queue's clock if it is a manual one
 * @clock: the queue's clock, or NULL; a clock of another kind is the
 *	caller's and is left alone.
 *
 * Called when nothing steps the clock any more: the queue is being freed
 * (no file holds it), or was never handed out.
 */
void kwq_manual_clock_free(struct kwq_clock *clock)
{
	struct kwq_manual_clock *mc = kwq_manual_of(clock);

	if (!mc)
		return;
	mutex_destroy(&mc->step_lock);
	kfree(mc);
}

/**
 * kwq_clock_step() - move a queue's manual clock and run what came due
 * @q: a queue made with &kwq_attr.manual_clock, held by the caller.
 * @step_ns: how far to move, 0 to KWQ_CLOCK_MAX_NS less the time so far.
 * @now_ns: out: the clock's time after the step, ns since the queue was
 *	made; set whenever the call returns 0.
 * @pending: out: whether keys that came due are left for another call
 *	(set whenever the call returns 0).
 *
 * Moves the clock, then queues the waiting keys whose deadline is at or
 * before the new time and puts back the keys processing past the
 * queue's timeout, as struct kwq_ioc_clock_step describes, at most
 * KWQ_CLOCK_STEP_KEYS of them; with more, *@pending is true and the
 * caller calls again with @step_ns 0. Concurrent steps apply one after
 * the other.
 *
 * Context: process context; may sleep.
 * Return: 0; -EOPNOTSUPP for a queue on another clock, -EIDRM for a
 * destroyed queue, -EINVAL for a negative @step_ns, -EOVERFLOW past
 * KWQ_CLOCK_MAX_NS. On error nothing changed.
 */
int kwq_clock_step(struct kwq *q, s64 step_ns, u64 *now_ns, bool *pending)
{
	struct kwq_manual_clock *mc = kwq_manual_of(q->clock);
	unsigned int runs;
	ktime_t now;
	bool dead;
	u64 t;

	BUILD_BUG_ON(KWQ_CLOCK_STEP_KEYS % KWQ_LOCK_STEP);
	might_sleep();
	if (!mc)
		return -EOPNOTSUPP;
	kwq_lock(q);
	dead = q->dead;
	kwq_unlock(q);
	if (dead)
		return -EIDRM;
	if (step_ns < 0)
		return -EINVAL;
	mutex_lock(&mc->step_lock);
	t = atomic64_read(&mc->elapsed);
	if ((u64)step_ns > KWQ_CLOCK_MAX_NS - t) {
		mutex_unlock(&mc->step_lock);
		return -EOVERFLOW;
	}
	t += step_ns;
	atomic64_set(&mc->elapsed, t);
	now = ktime_add_ns(mc->start, t);
	*pending = false;
	for (runs = 0; ktime_compare(atomic64_read(&mc->programmed), now) <= 0; runs++) {
		if (runs == KWQ_CLOCK_STEP_KEYS / KWQ_LOCK_STEP) {
			*pending = true;
			break;
		}
		kwq_run_due(q);
	}
	mutex_unlock(&mc->step_lock);
	*now_ns = t;
	return 0;
}
EXPORT_SYMBOL_GPL(kwq_clock_step);
