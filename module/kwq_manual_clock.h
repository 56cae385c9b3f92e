/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kwq manual clock: the struct kwq_clock of a queue made with
 * kwq_attr.manual_clock (KWQ_CREATE_MANUAL_CLOCK), which its users step
 * with kwq_clock_step() (KWQ_IOC_CLOCK_STEP). The queue owns it: made by
 * kwq_queue_new(), freed with the queue.
 */
#ifndef _KWQ_MANUAL_CLOCK_H
#define _KWQ_MANUAL_CLOCK_H

#include <linux/gfp.h>

struct kwq;
struct kwq_clock;

struct kwq_clock *kwq_manual_clock_new(gfp_t gfp);
void kwq_manual_clock_free(struct kwq_clock *clock);

#endif /* _KWQ_MANUAL_CLOCK_H */
