# shellcheck shell=sh
# In the guest, with kwq loaded and lib.sh sourced: the three views of a
# queue's statistics agree, and a tracepoint records a key; kwqctl's
# drain keeps to its timeout and top refuses bad option values; kwqctl
# steps a manual clock.

tap_begin "observability-$(uname -r)"
# ns/k is taken and not done, then added again: dirty while processing,
# the one state in which depth (queued + dirty_processing, client-go's
# workqueue_depth) and queued differ. The other steps make most counters
# non-zero, so that a view printing one field under another's name shows.
kwqctl create obs --payload-max 64 >/dev/null
kwqctl add obs ns/k >/dev/null
kwqctl get obs >/dev/null
kwqctl add obs ns/k >/dev/null
kwqctl add obs ns/a ns/b ns/c ns/a >/dev/null
kwqctl get obs --done >/dev/null
kwqctl add obs ns/p --payload hello >/dev/null
kwqctl add obs ns/p --payload world >/dev/null
kwqctl add-after obs 600000 ns/w >/dev/null
kwqctl retry obs ns/r >/dev/null

f=/sys/kernel/debug/kwq/obs
[ -r $f ]; tap $? "debugfs file $f exists"
# ns/r's backoff (ms) ends: nothing changes after this but the clock.
wait_for 10 grep -qx "fired 1" $f; tap $? "the retried key's backoff ended"
grep -qx "queued 4" $f && grep -qx "dirty_processing 1" $f && grep -qx "depth 5" $f
tap $? "debugfs, ns/k dirty while processing: queued 4, dirty_processing 1, depth 5"
grep -qx "processing 1" $f && grep -qx "waiting 1" $f && grep -qx "dones 1" $f &&
	grep -qx "rate_limited 1" $f && grep -qx "payloads_replaced 1" $f &&
	grep -qx "payload_bytes 5" $f
tap $? "debugfs shows processing 1, waiting 1, dones 1, rate_limited 1, one payload replaced, 5 payload bytes"
grep -qx 'queue_latency_count 2' $f && grep -qx 'work_duration_count 1' $f
tap $? "debugfs histograms counted two gets and one done"
# Another IPC namespace's queue has its own file name: ipc-INUM:NAME.
# shellcheck disable=SC2016 # expanded by the inner shell, in the namespace
inum=$(unshare -i sh -c 'kwqctl create obs-ns >/dev/null || exit 1
	i=$(stat -L -c %i /proc/self/ns/ipc)
	[ -r "/sys/kernel/debug/kwq/ipc-$i:obs-ns" ] && [ ! -e /sys/kernel/debug/kwq/obs-ns ] &&
		echo "$i"
	kwqctl destroy obs-ns >/dev/null')
[ -n "$inum" ]
tap $? "a queue made in a new IPC namespace is ipc-INUM:obs-ns in debugfs (inode ${inum:-?})"

# The three views, read in this order, each as "field value" lines under
# struct kwq_stats's names (the state bits as shutting_down, draining and
# destroyed; histograms as cumulative FIELD_le_BOUND and FIELD_count),
# plus depth.
cp $f /tmp/obs.debugfs
kwqctl stats obs --json > /tmp/obs.json
kwqctl metrics obs > /tmp/metrics.txt
awk '$1 != "name" { k = $1; sub(/_bucket_le_/, "_le_", k); print k, $2 }' /tmp/obs.debugfs |
	sort > /tmp/obs.v1
awk '
function arr(name) {
	if (!match($0, "\"" name "\":\\[[^]]*\\]"))
		return ""
	return substr($0, RSTART + length(name) + 4, RLENGTH - length(name) - 5)
}
{
	st = arr("state")
	print "shutting_down", st ~ /"shutting-down"/ ? 1 : 0
	print "draining", st ~ /"draining"/ ? 1 : 0
	print "destroyed", st ~ /"destroyed"/ ? 1 : 0
	nb = split(arr("bucket_le_seconds"), le, ",")
	for (h = 1; h <= 2; h++) {
		hn = h == 1 ? "queue_latency" : "work_duration"
		split(arr(hn), c, ",")
		cum = 0
		for (i = 1; i <= nb; i++) {
			cum += c[i]
			print hn "_le_" (le[i] == "null" ? "+Inf" : le[i]), cum
		}
		print hn "_count", cum
	}
	s = $0
	gsub(/"[a-z_]*":\[[^]]*\]/, "", s)
	n = split(s, kv, ",")
	for (i = 1; i <= n; i++) {
		if (!match(kv[i], /^"[a-z_]*":[0-9]+/))
			continue
		split(substr(kv[i], RSTART, RLENGTH), p, ":")
		gsub(/"/, "", p[1])
		print p[1], p[2]
		v[p[1]] = p[2]
	}
	# depth as the doc defines it (client-go workqueue_depth).
	print "depth", v["queued"] + v["dirty_processing"]
}' /tmp/obs.json | sort > /tmp/obs.v2
awk '
function ns(x) { sub(/\./, "", x); sub(/^0+/, "", x); return x == "" ? "0" : x }
/^#/ || $1 !~ /name="obs"/ { next }
{
	m = $1; sub(/\{.*/, "", m); v = $2
	le = ""
	if (match($1, /le="[^"]*"/))
		le = substr($1, RSTART + 4, RLENGTH - 5)
	h = ""
	if (m ~ /^workqueue_queue_duration_seconds_/) h = "queue_latency"
	if (m ~ /^workqueue_work_duration_seconds_/) h = "work_duration"
	if (h != "" && m ~ /_bucket$/) print h "_le_" le, v
	else if (h != "" && m ~ /_sum$/) print h "_sum_ns", ns(v)
	else if (h != "" && m ~ /_count$/) print h "_count", v
	else if (m == "workqueue_depth") print "depth", v
	else if (m == "workqueue_adds_total") print "adds", v
	else if (m == "workqueue_retries_total") print "retries", v
	else if (m == "workqueue_unfinished_work_seconds") print "unfinished_work_ns", ns(v)
	else if (m == "workqueue_longest_running_processor_seconds") print "longest_running_ns", ns(v)
	else if (m ~ /^kwq_/) { sub(/^kwq_/, "", m); sub(/_total$/, "", m); print m, v }
	else print "unknown:" m, v
}' /tmp/metrics.txt | sort > /tmp/obs.v3

# Every field of struct kwq_stats (size aside), and depth.
want="shutting_down draining destroyed queued depth processing dirty_processing waiting
items max_items adds dedups gets dones requeues refused fired cancels absorbed waits_dropped
lease_requeues backoff_keys rate_limited tokens_returned backoff_evictions retries forgets
processing_expiries debounced debounce_capped payloads_replaced payload_bytes
unfinished_work_ns longest_running_ns queue_latency_sum_ns work_duration_sum_ns
queue_latency_count work_duration_count"
for h in queue_latency work_duration; do
	for le in 1e-08 1e-07 1e-06 1e-05 0.0001 0.001 0.01 0.1 1 10 +Inf; do
		want="$want ${h}_le_$le"
	done
done
echo "$want" | tr ' ' '\n' | sort > /tmp/obs.want
for v in 1:debugfs 2:"kwqctl stats --json" 3:"kwqctl metrics"; do
	cut -d' ' -f1 "/tmp/obs.v${v%%:*}" | diff /tmp/obs.want - > /tmp/obs.diff
	tap $? "${v#*:} has every field of the snapshot, each once, and nothing else"
	sed 's/^/#   /' /tmp/obs.diff
done

# Field by field: equal in the three views, but for the two work gauges,
# which kwq_stats() computes from the clock at each read: not zero (ns/k
# is being processed), and never smaller in a later read.
bad=$(awk '
FILENAME == ARGV[1] { a[$1] = $2; next }
FILENAME == ARGV[2] { b[$1] = $2; next }
{
	if ($1 == "unfinished_work_ns" || $1 == "longest_running_ns") {
		if (a[$1] + 0 == 0 || a[$1] + 0 > b[$1] + 0 || b[$1] + 0 > $2 + 0)
			printf " %s(%s,%s,%s)", $1, a[$1], b[$1], $2
	} else if (!($1 in a) || !($1 in b) || a[$1] != $2 || b[$1] != $2) {
		printf " %s(%s,%s,%s)", $1, a[$1], b[$1], $2
	}
}' /tmp/obs.v1 /tmp/obs.v2 /tmp/obs.v3)
[ -z "$bad" ]
tap $? "debugfs, kwqctl stats --json and kwqctl metrics agree field by field${bad:+ (debugfs,json,metrics:$bad)}"

grep -q '"queued":4,' /tmp/obs.json && grep -q '"dirty_processing":1,' /tmp/obs.json
tap $? "kwqctl stats --json: queued 4, dirty_processing 1 (depth = their sum, 5)"

# The text form of kwqctl stats names every counter the JSON form has
# (the sums in ns and max_items, shown as items N/MAX, aside).
kwqctl stats obs > /tmp/stats.txt
missing=""
for c in $(tr ',' '\n' < /tmp/obs.json | tr '{' '\n' | sed -n 's/^"\([a-z_]*\)":[0-9]*$/\1/p' |
	grep -v -e '_ns$' -e '^max_items$' | tr _ -); do
	grep -q -- " $c [0-9]" /tmp/stats.txt || missing="$missing $c"
done
[ -z "$missing" ]
tap $? "kwqctl stats prints every counter of its --json form${missing:+ (missing:$missing)}"

grep -qx 'workqueue_depth{name="obs"} 5' /tmp/metrics.txt &&
	grep -qx 'kwq_queued{name="obs"} 4' /tmp/metrics.txt &&
	grep -qx 'kwq_dirty_processing{name="obs"} 1' /tmp/metrics.txt
tap $? "kwqctl metrics: workqueue_depth 5 = kwq_queued 4 + kwq_dirty_processing 1"
grep -qx 'workqueue_queue_duration_seconds_count{name="obs"} 2' /tmp/metrics.txt &&
	grep -qx 'workqueue_queue_duration_seconds_bucket{name="obs",le="+Inf"} 2' /tmp/metrics.txt &&
	grep -qx '# TYPE workqueue_work_duration_seconds histogram' /tmp/metrics.txt &&
	grep -q '^workqueue_longest_running_processor_seconds{name="obs"} ' /tmp/metrics.txt
tap $? "kwqctl metrics prints client-go's names in the Prometheus format"
kwqctl metrics | grep -q '^kwq_dedups_total{name="obs"} '
tap $? "kwqctl metrics without a name covers every queue"
d=$(kwqctl top --interval 100 --count 2 | awk '$1 == "obs" { d = $2 } END { print d }')
[ "$d" = 5 ]
tap $? "kwqctl top lists the queue with DEPTH 5 (queued + dirty_processing; got '$d')"
# A bad value is a usage error (exit status 2), with nothing on stdout.
for a in "--count abc" "--count 0" "--count -1" "--count 2x" "--interval abc" \
	"--interval 0" "--interval -5" "--count"; do
	# shellcheck disable=SC2086 # $a: an option and its value
	out=$(timeout 20 kwqctl top $a 2>/dev/null)
	rc=$?
	[ $rc -eq 2 ] && [ -z "$out" ]
	tap $? "kwqctl top $a is a usage error (exit status $rc)"
done

# drain --timeout 0 does not wait: with a key left it fails at once (exit
# status 1) and leaves the queue shut down; without --timeout it waits.
kwqctl create obs-drain >/dev/null
kwqctl add obs-drain ns/left >/dev/null
timeout 20 kwqctl drain obs-drain --timeout 0 2>/dev/null
rc=$?
[ $rc -eq 1 ]
tap $? "kwqctl drain --timeout 0 with a key left fails at once (exit status $rc)"
kwqctl stats obs-drain | grep -q '^queue obs-drain shutting-down' &&
	[ "$(kwqctl len obs-drain)" = 1 ]
tap $? "the failed drain left the queue shut down, its key queued"
rm -f /tmp/drain.rc
{
	timeout 30 kwqctl drain obs-drain
	echo $? >/tmp/drain.rc
} &
drain_pid=$!
sleep 1
[ ! -e /tmp/drain.rc ]
tap $? "kwqctl drain without --timeout is still waiting after 1 s"
kwqctl get obs-drain --done >/dev/null
wait $drain_pid
[ "$(cat /tmp/drain.rc)" = 0 ]
tap $? "it ends with exit status 0 once the key is done"
timeout 20 kwqctl drain obs-drain --timeout 0
tap $? "kwqctl drain --timeout 0 of a drained queue succeeds"
kwqctl destroy obs-drain

t=""
for d in /sys/kernel/tracing /sys/kernel/debug/tracing; do
	[ -d $d/events/kwq ] && t=$d && break
done
if [ -n "$t" ]; then
	echo > $t/trace
	echo 1 > $t/events/kwq/kwq_add/enable
	echo 1 > $t/events/kwq/kwq_get/enable
	kwqctl add obs traced/key >/dev/null
	echo 0 > $t/events/kwq/kwq_add/enable
	echo 0 > $t/events/kwq/kwq_get/enable
	grep -q 'kwq_add: queue=obs key=traced/key result=0' $t/trace
	tap $? "tracepoint kwq:kwq_add recorded the key"
else
	# Every kernel make check runs has event tracing: its absence is a failure.
	tap 1 "tracepoints: no tracefs with kwq's events"
fi
kwqctl destroy obs
[ ! -e $f ]; tap $? "debugfs file removed with the queue"

# kwqctl's manual clock: a key waits until the clock is stepped to its
# deadline, and a queue without one refuses the step.
kwqctl create clk --manual-clock >/dev/null
kwqctl add-after clk 5 k >/dev/null
[ "$(kwqctl clock clk 4999999)" = 4999999 ] && [ "$(kwqctl len clk)" = 0 ]
tap $? "kwqctl clock: 1 ns before the deadline, the key still waits"
[ "$(kwqctl clock clk 1)" = 5000000 ] && [ "$(kwqctl len clk)" = 1 ]
tap $? "kwqctl clock: at the deadline the key is queued"
kwqctl create noclk >/dev/null
if kwqctl clock noclk 1 2>/dev/null; then st=1; else st=0; fi
tap $st "kwqctl clock on a queue without a manual clock fails"
kwqctl destroy clk; kwqctl destroy noclk
tap_end
