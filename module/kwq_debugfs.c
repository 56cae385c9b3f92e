// SPDX-License-Identifier: GPL-2.0
/*
 * /sys/kernel/debug/kwq/<queue>: a read-only text view of each named
 * queue's statistics, one "name value" pair per line, from the same
 * kwq_stats() snapshot as the KWQ_IOC_STATS ioctl.
 *
 * debugfs rather than sysfs: sysfs wants one value per file and a stable
 * ABI, while this is a multi-line dump for people and scripts; the
 * stable interface is the stats ioctl.
 */

#include <linux/debugfs.h>
#include <linux/ipc_namespace.h>
#include <linux/proc_ns.h>
#include <linux/seq_file.h>

#include "kwq_internal.h"

static struct dentry *kwq_debugfs_root;

/* Bucket upper bounds in seconds, as Prometheus writes them. */
static const char *const kwq_bucket_le[KWQ_STATS_BUCKETS] = {
	"1e-08", "1e-07", "1e-06", "1e-05", "0.0001", "0.001", "0.01", "0.1",
	"1", "10", "+Inf",
};

static void kwq_show_hist(struct seq_file *m, const char *name, const u64 *count, u64 sum_ns)
{
	u64 cumulative = 0;
	int i;

	for (i = 0; i < KWQ_STATS_BUCKETS; i++) {
		cumulative += count[i];
		seq_printf(m, "%s_bucket_le_%s %llu\n", name, kwq_bucket_le[i], cumulative);
	}
	seq_printf(m, "%s_sum_ns %llu\n%s_count %llu\n", name, sum_ns, name, cumulative);
}

static int kwq_stats_show(struct seq_file *m, void *unused)
{
	struct kwq *q = m->private;
	struct kwq_stats st;

	kwq_stats(q, &st);
	seq_printf(m, "name %s\n", q->name);
	seq_printf(m, "shutting_down %u\ndraining %u\ndestroyed %u\n",
		   !!(st.state & KWQ_STATE_SHUTTING_DOWN), !!(st.state & KWQ_STATE_DRAINING),
		   !!(st.state & KWQ_STATE_DESTROYED));
	/*
	 * Every field of the snapshot under its struct kwq_stats name, and
	 * depth: client-go's workqueue_depth, which counts keys re-added while
	 * processing too (as kwqctl metrics and top do).
	 */
	seq_printf(m, "queued %llu\ndepth %llu\nprocessing %llu\ndirty_processing %llu\nwaiting %llu\n",
		   st.queued, st.queued + st.dirty_processing, st.processing, st.dirty_processing,
		   st.waiting);
	seq_printf(m, "items %llu\nmax_items %llu\nbackoff_keys %llu\n",
		   st.items, st.max_items, st.backoff_keys);
	seq_printf(m, "adds %llu\ndedups %llu\nrefused %llu\ngets %llu\ndones %llu\nrequeues %llu\n",
		   st.adds, st.dedups, st.refused, st.gets, st.dones, st.requeues);
	seq_printf(m, "retries %llu\nrate_limited %llu\ntokens_returned %llu\nforgets %llu\n",
		   st.retries, st.rate_limited, st.tokens_returned, st.forgets);
	seq_printf(m, "fired %llu\ncancels %llu\nabsorbed %llu\nwaits_dropped %llu\n",
		   st.fired, st.cancels, st.absorbed, st.waits_dropped);
	seq_printf(m, "lease_requeues %llu\nprocessing_expiries %llu\nbackoff_evictions %llu\n",
		   st.lease_requeues, st.processing_expiries, st.backoff_evictions);
	seq_printf(m, "debounced %llu\ndebounce_capped %llu\n", st.debounced, st.debounce_capped);
	seq_printf(m, "payloads_replaced %llu\npayload_bytes %llu\n",
		   st.payloads_replaced, st.payload_bytes);
	seq_printf(m, "unfinished_work_ns %llu\nlongest_running_ns %llu\n",
		   st.unfinished_work_ns, st.longest_running_ns);
	kwq_show_hist(m, "queue_latency", st.queue_latency, st.queue_latency_sum_ns);
	kwq_show_hist(m, "work_duration", st.work_duration, st.work_duration_sum_ns);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(kwq_stats);

/**
 * kwq_debugfs_add() - create the file of a named queue
 * @q: queue, just registered; the file is removed before the registry
 *	drops its reference, so readers never see a freed queue.
 * @scope: its scope: the file is NAME for the initial IPC namespace,
 *	kernel:NAME for the kernel scope and ipc-INUM:NAME for another IPC
 *	namespace (':' is never in a queue name, so files never collide).
 *
 * Context: process context, kwq_registry_lock held.
 * Return: the file's dentry (an error pointer when debugfs is absent,
 * which kwq_debugfs_del() accepts).
 */
struct dentry *kwq_debugfs_add(struct kwq *q, const struct ipc_namespace *scope)
{
	char file[KWQ_NAME_MAX + 24];

	if (!scope)
		snprintf(file, sizeof(file), "kernel:%s", q->name);
	else if (scope->ns.inum == PROC_IPC_INIT_INO)
		strscpy(file, q->name, sizeof(file));
	else
		snprintf(file, sizeof(file), "ipc-%u:%s", scope->ns.inum, q->name);
	return debugfs_create_file(file, 0444, kwq_debugfs_root, q, &kwq_stats_fops);
}

/**
 * kwq_debugfs_del() - remove a file made by kwq_debugfs_add()
 * @file: its dentry; waits for readers in progress.
 */
void kwq_debugfs_del(struct dentry *file)
{
	debugfs_remove(file);
}

/** kwq_debugfs_init() - create /sys/kernel/debug/kwq */
void kwq_debugfs_init(void)
{
	kwq_debugfs_root = debugfs_create_dir("kwq", NULL);
}

/** kwq_debugfs_exit() - remove /sys/kernel/debug/kwq */
void kwq_debugfs_exit(void)
{
	debugfs_remove(kwq_debugfs_root);
}
