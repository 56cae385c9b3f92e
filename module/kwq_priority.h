/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The order of a priority queue (KWQ_CREATE_PRIORITY without tenants):
 * kwq_priority.c. Plain queues use the FIFO (kwq_fifo.h), tenant queues
 * with priorities kwq_tenant.c.
 */
#ifndef _KWQ_PRIORITY_H
#define _KWQ_PRIORITY_H

#include "kwq_order.h"

extern const struct kwq_order_ops kwq_prio_ops;

#endif /* _KWQ_PRIORITY_H */
