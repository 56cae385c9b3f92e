// SPDX-License-Identifier: GPL-2.0
/*
 * kwqctl --json: JSON output for list, stats and metrics. One JSON
 * document per command on stdout; numbers are integers (counts, ns)
 * except seconds, which are printed with 9 decimals.
 */

#include <stdio.h>

#include "kwqctl.h"

void json_string(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	putchar('"');
	for (; *p; p++) {
		if (*p == '"' || *p == '\\')
			printf("\\%c", *p);
		else if (*p < 0x20 || *p == 0x7f)
			printf("\\u%04x", *p);
		else
			putchar(*p);
	}
	putchar('"');
}

static void json_buckets(const char *field, const unsigned long long *c)
{
	int b;

	printf(",\"%s\":[", field);
	for (b = 0; b < KWQ_STATS_BUCKETS; b++)
		printf("%s%llu", b ? "," : "", c[b]);
	putchar(']');
}

void json_stats(const char *name, const struct kwq_stats *st)
{
	/* The bucket bounds are those of kwq_stats: 10 ns ... 10 s, then +Inf. */
	static const char *const le =
		"[1e-08,1e-07,1e-06,1e-05,0.0001,0.001,0.01,0.1,1,10,null]";
	unsigned long long ql[KWQ_STATS_BUCKETS], wd[KWQ_STATS_BUCKETS];
	int b, first = 1;

	printf("{\"name\":");
	json_string(name);
	printf(",\"state\":[");
	if (st->state & KWQ_STATE_SHUTTING_DOWN) {
		printf("\"shutting-down\"");
		first = 0;
	}
	if (st->state & KWQ_STATE_DRAINING) {
		printf("%s\"draining\"", first ? "" : ",");
		first = 0;
	}
	if (st->state & KWQ_STATE_DESTROYED)
		printf("%s\"destroyed\"", first ? "" : ",");
	putchar(']');
#define F(f) printf(",\"" #f "\":%llu", (unsigned long long)st->f)
	F(queued); F(processing); F(dirty_processing); F(waiting); F(items);
	F(max_items); F(adds); F(dedups); F(gets); F(dones); F(requeues);
	F(refused); F(fired); F(cancels); F(absorbed); F(waits_dropped);
	F(lease_requeues); F(backoff_keys); F(rate_limited); F(tokens_returned);
	F(backoff_evictions); F(retries); F(forgets); F(processing_expiries);
	F(debounced); F(debounce_capped); F(payloads_replaced); F(payload_bytes);
	F(unfinished_work_ns); F(longest_running_ns); F(queue_latency_sum_ns);
	F(work_duration_sum_ns);
#undef F
	for (b = 0; b < KWQ_STATS_BUCKETS; b++) {
		ql[b] = st->queue_latency[b];
		wd[b] = st->work_duration[b];
	}
	printf(",\"bucket_le_seconds\":%s", le);
	json_buckets("queue_latency", ql);
	json_buckets("work_duration", wd);
	putchar('}');
}
