/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Scopes: the IPC namespaces queue names live in (kwq_registry.c).
 *
 * A queue made through /dev/kwq is named in the IPC namespace of the
 * process that opened /dev/kwq. kwq holds one reference on that namespace
 * per scope (struct kwq_scope), none per queue; the kernel gives modules
 * no hook for a namespace's end, so a worker looks once a second for
 * scopes whose namespace nobody else holds (kwq_scope_reap()): no task,
 * no nsfs file or bind mount, no open /dev/kwq descriptor opened in it.
 * It destroys their queues and drops the reference, and the kernel frees
 * the namespace as it would have without kwq. See
 * Documentation/kwq-security.rst.
 */
#ifndef _KWQ_SCOPE_H
#define _KWQ_SCOPE_H

#include <linux/ipc_namespace.h>
#include <linux/list.h>
#include <linux/refcount.h>
#include <linux/types.h>
#include <linux/version.h>

#include "kwq_compat.h"

/**
 * struct kwq_scope - the named queues of one IPC namespace
 * @node: link in kwq_scopes (hashed by @ns); unhashed once its namespace
 *	was found held by kwq alone, while its queues are destroyed.
 * @reap: link in the reaper's list of such scopes.
 * @queues: its named queues, by kwq.node.
 * @ns: the namespace (one reference), NULL for the kernel scope.
 * @count: named queues in @queues.
 * @queues_max: limit set by the namespace's owner (KWQ_IOC_SCOPE_LIMITS),
 *	0 for the module's max_queues_per_ns.
 *
 * All under kwq_registry_lock.
 */
struct kwq_scope {
	struct hlist_node node;
	struct list_head reap;
	struct list_head queues;
	struct ipc_namespace *ns;
	unsigned int count;
	unsigned int queues_max;
};

/* Module parameters (kwq_main.c). */
extern unsigned int kwq_max_queues_per_ns;
extern unsigned int kwq_kernel_reserve_queues;

/* How often kwq_scope_reap() looks for dead namespaces. */
#define KWQ_SCOPE_REAP_PERIOD	HZ

void kwq_scope_reap_start(void);
void kwq_scope_reap_stop(void);

#endif /* _KWQ_SCOPE_H */
