/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kwq tracepoints: follow a key through a queue with perf, trace-cmd or
 * bpftrace (events kwq:kwq_add, kwq_get, kwq_done, kwq_fire,
 * kwq_rate_limit, kwq_lease_return). Free when disabled (static keys).
 * The queue name is a fixed-size field so the events build unchanged on
 * kernels before and after the 6.10 __assign_str() change.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM kwq

#if !defined(_KWQ_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _KWQ_TRACE_H

#include <linux/string.h>
#include <linux/tracepoint.h>

DECLARE_EVENT_CLASS(kwq_key_event,
		    TP_PROTO(const char *queue, const void *key, u32 len, int result, u64 ns),
		    TP_ARGS(queue, key, len, result, ns),
		    TP_STRUCT__entry(__array(char, queue, 64)
				     __dynamic_array(char, key, len)
				     __field(u32, len)
				     __field(int, result)
				     __field(u64, ns)),
		    TP_fast_assign(strscpy(__entry->queue, queue, sizeof(__entry->queue));
				   memcpy(__get_dynamic_array(key), key, len);
				   __entry->len = len;
				   __entry->result = result;
				   __entry->ns = ns;),
		    TP_printk("queue=%s key=%.*s result=%d ns=%llu", __entry->queue,
			      (int)__entry->len, (char *)__get_dynamic_array(key),
			      __entry->result, __entry->ns)
);

/* result: enum kwq_add_result; ns: the delay asked for (0 for an add now). */
DEFINE_EVENT(kwq_key_event, kwq_add,
	     TP_PROTO(const char *queue, const void *key, u32 len, int result, u64 ns),
	     TP_ARGS(queue, key, len, result, ns));

/* ns: how long the key was ready before this get. */
DEFINE_EVENT(kwq_key_event, kwq_get,
	     TP_PROTO(const char *queue, const void *key, u32 len, int result, u64 ns),
	     TP_ARGS(queue, key, len, result, ns));

/* result: enum kwq_done_result; ns: time since the get. */
DEFINE_EVENT(kwq_key_event, kwq_done,
	     TP_PROTO(const char *queue, const void *key, u32 len, int result, u64 ns),
	     TP_ARGS(queue, key, len, result, ns));

/* result: enum kwq_add_result of the add; ns: how late the timer was. */
DEFINE_EVENT(kwq_key_event, kwq_fire,
	     TP_PROTO(const char *queue, const void *key, u32 len, int result, u64 ns),
	     TP_ARGS(queue, key, len, result, ns));

/* result: the key's failure count; ns: the delay the limiter chose. */
DEFINE_EVENT(kwq_key_event, kwq_rate_limit,
	     TP_PROTO(const char *queue, const void *key, u32 len, int result, u64 ns),
	     TP_ARGS(queue, key, len, result, ns));

/* A key overstayed the processing timeout; ns: time since the get. */
DEFINE_EVENT(kwq_key_event, kwq_processing_expire,
	     TP_PROTO(const char *queue, const void *key, u32 len, int result, u64 ns),
	     TP_ARGS(queue, key, len, result, ns));

/* A closed file's key went back to the queue; ns: time since the get. */
DEFINE_EVENT(kwq_key_event, kwq_lease_return,
	     TP_PROTO(const char *queue, const void *key, u32 len, int result, u64 ns),
	     TP_ARGS(queue, key, len, result, ns));

#endif /* _KWQ_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE kwq_trace
#include <trace/define_trace.h>
