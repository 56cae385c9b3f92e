/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Per-user totals of key-record bytes: what keeps one user from pinning
 * gigabytes of kernel memory in queues that outlive its processes, as
 * RLIMIT_MSGQUEUE does for POSIX message queues. Each user (the kuid that
 * owns a queue) has one struct kwq_user while it owns a queue that
 * counts; the queues' key tables charge and uncharge it
 * (kwq_table_charge()), and adds that would take the total past
 * max_key_bytes_per_user fail. See Documentation/kwq-limits.rst.
 */
#ifndef _KWQ_USER_H
#define _KWQ_USER_H

#include <linux/types.h>
#include <linux/uidgid.h>

struct kwq_user;

/* Module parameter (kwq_main.c): 0 means no limit. */
extern u64 kwq_max_key_bytes_per_user;

struct kwq_user *kwq_user_get(kuid_t uid);
void kwq_user_put(struct kwq_user *u);
bool kwq_user_charge(struct kwq_user *u, u64 bytes, bool limited);
void kwq_user_uncharge(struct kwq_user *u, u64 bytes);

#endif /* _KWQ_USER_H */
