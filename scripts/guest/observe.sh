# shellcheck shell=sh
# In the guest, with kwq loaded and lib.sh sourced: the three views of a
# queue's statistics agree, and a tracepoint records a key; kwqctl's
# drain keeps to its timeout and top refuses bad option values.

tap_begin "observability-$(uname -r)"
kwqctl create obs >/dev/null
kwqctl add obs ns/a ns/b ns/c ns/a >/dev/null
kwqctl get obs --done >/dev/null

f=/sys/kernel/debug/kwq/obs
[ -r $f ]; tap $? "debugfs file $f exists"
grep -qx "depth 2" $f && grep -qx "adds 3" $f && grep -qx "dedups 1" $f && grep -qx "dones 1" $f
tap $? "debugfs shows depth 2, adds 3, dedups 1, dones 1"
grep -qx 'queue_latency_count 1' $f && grep -qx 'work_duration_count 1' $f
tap $? "debugfs histograms counted one get and one done"

# The text form of kwqctl stats names every counter the JSON form has
# (the sums in ns and max_items, shown as items N/MAX, aside).
kwqctl stats obs > /tmp/stats.txt
missing=""
for c in $(kwqctl stats obs --json | tr ',' '\n' | tr '{' '\n' | sed -n 's/^"\([a-z_]*\)":[0-9]*$/\1/p' |
	grep -v -e '_ns$' -e '^max_items$' | tr _ -); do
	grep -q -- " $c [0-9]" /tmp/stats.txt || missing="$missing $c"
done
[ -z "$missing" ]
tap $? "kwqctl stats prints every counter of its --json form${missing:+ (missing:$missing)}"

kwqctl metrics obs > /tmp/metrics.txt
grep -qx 'workqueue_adds_total{name="obs"} 3' /tmp/metrics.txt &&
	grep -qx 'workqueue_depth{name="obs"} 2' /tmp/metrics.txt &&
	grep -qx 'workqueue_queue_duration_seconds_count{name="obs"} 1' /tmp/metrics.txt &&
	grep -qx 'workqueue_queue_duration_seconds_bucket{name="obs",le="+Inf"} 1' /tmp/metrics.txt &&
	grep -qx '# TYPE workqueue_work_duration_seconds histogram' /tmp/metrics.txt &&
	grep -q '^workqueue_longest_running_processor_seconds{name="obs"} ' /tmp/metrics.txt
tap $? "kwqctl metrics prints client-go's names in the Prometheus format"
kwqctl metrics | grep -q '^kwq_dedups_total{name="obs"} 1$'
tap $? "kwqctl metrics without a name covers every queue"
kwqctl top --interval 100 --count 2 | grep -q '^obs '
tap $? "kwqctl top lists the queue"
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
	echo "ok $((tap_n + 1)) - tracepoints # SKIP no tracefs with kwq events"
	tap_n=$((tap_n + 1))
fi
kwqctl destroy obs
[ ! -e $f ]; tap $? "debugfs file removed with the queue"
tap_end
