// SPDX-License-Identifier: GPL-2.0
/*
 * kwqctl metrics and top: kwq statistics in the Prometheus text
 * exposition format, with client-go's metric names so that existing
 * workqueue dashboards work, plus kwq's own; and a live table.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kwqctl.h"
#include "libkwq.h"

struct sample {
	char name[KWQ_NAME_MAX];
	struct kwq_stats st;
};

/*
 * Statistics of the named queues, or of all queues if none is named, into
 * a malloc()ed *@sp (free() it); returns how many, or a negative errno.
 */
static int collect(int argc, char **argv, struct sample **sp)
{
	char (*names)[KWQ_NAME_MAX];
	struct sample *s;
	int i, n = 0, total;

	if (argc > 0) {
		names = calloc(argc, KWQ_NAME_MAX);
		if (!names)
			return -ENOMEM;
		for (i = 0; i < argc; i++)
			snprintf(names[i], KWQ_NAME_MAX, "%s", argv[i]);
		total = argc;
	} else {
		names = kwqctl_list_all(&total);
		if (!names)
			return total;
	}
	s = calloc(total ? total : 1, sizeof(*s));
	if (!s) {
		free(names);
		return -ENOMEM;
	}
	for (i = 0; i < total; i++) {
		int fd = kernel_scope ? kwq_open_kernel(names[i], O_RDONLY) :
				       kwq_open(names[i], O_RDONLY);

		if (fd < 0) {
			/* Destroyed since the list was taken, or not ours to read. */
			if (argc > 0) {
				fprintf(stderr, "kwqctl: %s: %s\n", names[i], strerror(-fd));
				free(names);
				free(s);
				return fd;
			}
			continue;
		}
		memcpy(s[n].name, names[i], KWQ_NAME_MAX);
		kwq_stats(fd, &s[n].st);
		close(fd);
		n++;
	}
	free(names);
	*sp = s;
	return n;
}

typedef unsigned long long (*getter)(const struct kwq_stats *st);

#define GETTER(field) \
	static unsigned long long get_##field(const struct kwq_stats *st) \
	{ return st->field; }
GETTER(adds)
GETTER(retries)
GETTER(queued)
GETTER(processing)
GETTER(dirty_processing)
GETTER(waiting)
GETTER(items)
GETTER(dedups)
GETTER(refused)
GETTER(gets)
GETTER(dones)
GETTER(requeues)
GETTER(fired)
GETTER(cancels)
GETTER(absorbed)
GETTER(lease_requeues)
GETTER(backoff_keys)
GETTER(backoff_evictions)
GETTER(tokens_returned)
GETTER(forgets)
GETTER(debounced)
GETTER(debounce_capped)
GETTER(payloads_replaced)
GETTER(payload_bytes)
GETTER(max_items)
GETTER(waits_dropped)
GETTER(rate_limited)
GETTER(processing_expiries)

#define STATE_GETTER(name, bit) \
	static unsigned long long get_##name(const struct kwq_stats *st) \
	{ return !!(st->state & (bit)); }
STATE_GETTER(shutting_down, KWQ_STATE_SHUTTING_DOWN)
STATE_GETTER(draining, KWQ_STATE_DRAINING)
STATE_GETTER(destroyed, KWQ_STATE_DESTROYED)

/*
 * client-go's workqueue_depth counts keys re-added while processing, too
 * (its Add raises the gauge for them, its Get lowers it); kwqctl top's
 * DEPTH and the debugfs file's depth are this sum as well.
 */
static unsigned long long get_depth(const struct kwq_stats *st)
{
	return st->queued + st->dirty_processing;
}

static const struct {
	const char *name, *type, *help;
	getter get;
} simple[] = {
	{ "workqueue_depth", "gauge", "Current depth of workqueue (queued plus re-added while processing)", get_depth },
	{ "workqueue_adds_total", "counter", "Total number of adds handled by workqueue", get_adds },
	{ "workqueue_retries_total", "counter", "Total number of retries handled by workqueue", get_retries },
	{ "kwq_queued", "gauge", "Keys ready for get (client-go Len)", get_queued },
	{ "kwq_processing", "gauge", "Keys handed out and not done", get_processing },
	{ "kwq_dirty_processing", "gauge", "Keys re-added while being processed", get_dirty_processing },
	{ "kwq_waiting", "gauge", "Keys waiting for an add-after deadline", get_waiting },
	{ "kwq_items", "gauge", "Key records held", get_items },
	{ "kwq_max_items", "gauge", "The queue's limit on key records", get_max_items },
	{ "kwq_backoff_keys", "gauge", "Keys kept only for their failure count", get_backoff_keys },
	{ "kwq_dedups_total", "counter", "Adds absorbed because the key was already pending", get_dedups },
	{ "kwq_refused_total", "counter", "Adds refused because the queue was shutting down", get_refused },
	{ "kwq_gets_total", "counter", "Keys handed out", get_gets },
	{ "kwq_dones_total", "counter", "Done calls", get_dones },
	{ "kwq_requeues_total", "counter", "Done calls that queued the key again", get_requeues },
	{ "kwq_fired_total", "counter", "Add-after deadlines reached", get_fired },
	{ "kwq_cancels_total", "counter", "Waiting entries cancelled", get_cancels },
	{ "kwq_absorbed_total", "counter", "Adds absorbed by a waiting entry (strict policy)", get_absorbed },
	{ "kwq_waits_dropped_total", "counter",
	  "Waiting entries dropped by shutdown or the promote policy", get_waits_dropped },
	{ "kwq_lease_requeues_total", "counter", "Keys returned because their consumer closed its descriptor", get_lease_requeues },
	{ "kwq_processing_expiries_total", "counter",
	  "Keys returned because they overstayed the processing timeout", get_processing_expiries },
	{ "kwq_backoff_evictions_total", "counter", "Backoff-only keys forgotten to bound memory", get_backoff_evictions },
	{ "kwq_rate_limited_total", "counter",
	  "Add-rate-limited calls that reached the limiter", get_rate_limited },
	{ "kwq_tokens_returned_total", "counter", "Rate-limited adds that gave their bucket tokens back", get_tokens_returned },
	{ "kwq_forgets_total", "counter", "Forget calls that cleared a failure count", get_forgets },
	{ "kwq_debounced_total", "counter", "Debounced adds that moved a waiting deadline later", get_debounced },
	{ "kwq_debounce_capped_total", "counter", "Debounced adds held at their max wait", get_debounce_capped },
	{ "kwq_payloads_replaced_total", "counter", "Payloads replaced by a later add of their key", get_payloads_replaced },
	{ "kwq_payload_bytes", "gauge", "Payload bytes the queue holds", get_payload_bytes },
	{ "kwq_shutting_down", "gauge", "1 once the queue refuses adds", get_shutting_down },
	{ "kwq_draining", "gauge", "1 while a drain waits for the queue's work", get_draining },
	{ "kwq_destroyed", "gauge", "1 once the queue was destroyed", get_destroyed },
};

static const char *const le[KWQ_STATS_BUCKETS] = {
	"1e-08", "1e-07", "1e-06", "1e-05", "0.0001", "0.001", "0.01", "0.1", "1", "10", "+Inf",
};

static void histogram(const struct sample *s, int n, const char *name, const char *help,
		      int work)
{
	int i, b;

	printf("# HELP %s %s\n# TYPE %s histogram\n", name, help, name);
	for (i = 0; i < n; i++) {
		const unsigned long long *c = work ? s[i].st.work_duration : s[i].st.queue_latency;
		unsigned long long sum = work ? s[i].st.work_duration_sum_ns :
					 s[i].st.queue_latency_sum_ns;
		unsigned long long cum = 0;

		for (b = 0; b < KWQ_STATS_BUCKETS; b++) {
			cum += c[b];
			printf("%s_bucket{name=\"%s\",le=\"%s\"} %llu\n", name, s[i].name, le[b], cum);
		}
		printf("%s_sum{name=\"%s\"} %.9f\n", name, s[i].name, sum / 1e9);
		printf("%s_count{name=\"%s\"} %llu\n", name, s[i].name, cum);
	}
}

static void seconds_gauge(const struct sample *s, int n, const char *name, const char *help,
			  int longest)
{
	int i;

	printf("# HELP %s %s\n# TYPE %s gauge\n", name, help, name);
	for (i = 0; i < n; i++)
		printf("%s{name=\"%s\"} %.9f\n", name, s[i].name,
		       (longest ? s[i].st.longest_running_ns : s[i].st.unfinished_work_ns) / 1e9);
}

/*
 * One object per queue: client-go's metric names as keys, histograms as
 * {"le": bounds in seconds (null for +Inf), "buckets": cumulative counts,
 * "sum": seconds, "count"}.
 */
static void json_histogram(const char *name, const unsigned long long *c,
			   unsigned long long sum_ns)
{
	unsigned long long cum = 0;
	int b;

	printf(",\"%s\":{\"le\":[", name);
	for (b = 0; b < KWQ_STATS_BUCKETS; b++)
		printf("%s%s", b ? "," : "", b == KWQ_STATS_BUCKETS - 1 ? "null" : le[b]);
	printf("],\"buckets\":[");
	for (b = 0; b < KWQ_STATS_BUCKETS; b++) {
		cum += c[b];
		printf("%s%llu", b ? "," : "", cum);
	}
	printf("],\"sum\":%.9f,\"count\":%llu}", sum_ns / 1e9, cum);
}

static void metrics_json(const struct sample *s, int n)
{
	size_t m;
	int i;

	printf("{\"queues\":[");
	for (i = 0; i < n; i++) {
		const struct kwq_stats *st = &s[i].st;

		printf("%s{\"name\":", i ? "," : "");
		json_string(s[i].name);
		for (m = 0; m < sizeof(simple) / sizeof(simple[0]); m++)
			printf(",\"%s\":%llu", simple[m].name, simple[m].get(st));
		json_histogram("workqueue_queue_duration_seconds", st->queue_latency,
			       st->queue_latency_sum_ns);
		json_histogram("workqueue_work_duration_seconds", st->work_duration,
			       st->work_duration_sum_ns);
		printf(",\"workqueue_unfinished_work_seconds\":%.9f",
		       st->unfinished_work_ns / 1e9);
		printf(",\"workqueue_longest_running_processor_seconds\":%.9f}",
		       st->longest_running_ns / 1e9);
	}
	printf("]}\n");
}

int kwqctl_metrics(int argc, char **argv, int json)
{
	struct sample *s;
	char **names;
	size_t m;
	int i, n, nnames = 0;

	names = calloc(argc ? argc : 1, sizeof(*names));
	if (!names)
		return 1;
	/* --json may stand anywhere among the queue names. */
	for (i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--json")) {
			json = 1;
		} else if (argv[i][0] == '-') {
			free(names);
			return 2;
		} else {
			names[nnames++] = argv[i];
		}
	}
	n = collect(nnames, names, &s);
	free(names);
	if (n < 0)
		return 1;
	if (json) {
		metrics_json(s, n);
		free(s);
		return 0;
	}
	for (m = 0; m < sizeof(simple) / sizeof(simple[0]); m++) {
		printf("# HELP %s %s\n# TYPE %s %s\n", simple[m].name, simple[m].help,
		       simple[m].name, simple[m].type);
		for (i = 0; i < n; i++)
			printf("%s{name=\"%s\"} %llu\n", simple[m].name, s[i].name,
			       simple[m].get(&s[i].st));
	}
	histogram(s, n, "workqueue_queue_duration_seconds",
		  "How long in seconds an item stays in workqueue before being requested", 0);
	histogram(s, n, "workqueue_work_duration_seconds",
		  "How long in seconds processing an item from workqueue takes", 1);
	seconds_gauge(s, n, "workqueue_unfinished_work_seconds",
		      "How many seconds of work has been done that is in progress and hasn't been observed by work_duration. Large values indicate stuck threads", 0);
	seconds_gauge(s, n, "workqueue_longest_running_processor_seconds",
		      "How many seconds has the longest running processor for workqueue been running", 1);
	free(s);
	return 0;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static const struct sample *find(const struct sample *s, int n, const char *name)
{
	int i;

	for (i = 0; i < n; i++)
		if (!strcmp(s[i].name, name))
			return &s[i];
	return NULL;
}

int kwqctl_top(int argc, char **argv)
{
	struct sample *prev = NULL, *cur;
	long interval_ms = 1000, count = -1, frame;
	int i, n, np = 0;
	double t, tp = now_s();

	for (i = 0; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--interval")) {
			if (parse_long(argv[i + 1], &interval_ms) || interval_ms < 1)
				return 2;
		} else if (!strcmp(argv[i], "--count")) {
			if (parse_long(argv[i + 1], &count) || count < 1)
				return 2;
		} else {
			return 2;
		}
	}
	if (i != argc)
		return 2;
	for (frame = 0; count < 0 || frame < count; frame++) {
		struct timespec nap = {
			.tv_sec = interval_ms / 1000,
			.tv_nsec = interval_ms % 1000 * 1000000,
		};

		nanosleep(&nap, NULL);
		n = collect(0, NULL, &cur);
		if (n < 0) {
			free(prev);
			return 1;
		}
		t = now_s();
		if (isatty(STDOUT_FILENO))
			printf("\033[H\033[2J");
		printf("%-24s %8s %6s %8s %8s %10s %10s %12s %12s\n", "QUEUE", "DEPTH", "PROC",
		       "WAITING", "BACKOFF", "ADDS/s", "DONES/s", "AVG-LAT-ms", "AVG-WORK-ms");
		for (i = 0; i < n; i++) {
			const struct kwq_stats *c = &cur[i].st;
			const struct sample *p = find(prev, np, cur[i].name);
			double dt = t - tp, adds = 0, dones = 0, lat = 0, work = 0;
			unsigned long long dl = 0, dw = 0;
			int b;

			if (p && dt > 0) {
				adds = (c->adds - p->st.adds) / dt;
				dones = (c->dones - p->st.dones) / dt;
				for (b = 0; b < KWQ_STATS_BUCKETS; b++) {
					dl += c->queue_latency[b] - p->st.queue_latency[b];
					dw += c->work_duration[b] - p->st.work_duration[b];
				}
				if (dl)
					lat = (c->queue_latency_sum_ns - p->st.queue_latency_sum_ns) / 1e6 / dl;
				if (dw)
					work = (c->work_duration_sum_ns - p->st.work_duration_sum_ns) / 1e6 / dw;
			}
			printf("%-24s %8llu %6llu %8llu %8llu %10.1f %10.1f %12.3f %12.3f\n",
			       cur[i].name, get_depth(c),
			       (unsigned long long)c->processing, (unsigned long long)c->waiting,
			       (unsigned long long)c->backoff_keys, adds, dones, lat, work);
		}
		fflush(stdout);
		free(prev);
		prev = cur;
		np = n;
		tp = t;
	}
	free(prev);
	return 0;
}
