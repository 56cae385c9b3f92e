# shellcheck shell=sh
# Fault-injection sweep, sourced by check.sh in /kwq with kwq.ko
# loaded and lib.sh sourced. bin/kwq_faults fails the allocations of each
# kwq operation in turn (/proc/thread-self/fail-nth, and failslab with
# make-it-fail) and checks that every failure leaves the queue as it was.
# Needs CONFIG_FAULT_INJECTION, CONFIG_FAILSLAB and
# CONFIG_FAULT_INJECTION_DEBUG_FS (the debug kernel); elsewhere, e.g. on
# Debian's kernel, the section is a single skipped test point. Leaks are
# caught by check.sh's final kmemleak scan and the console check.

faults_skip() { # REASON
	tap_begin faults
	tap_n=$((tap_n + 1))
	echo "ok $tap_n - fault-injection sweep # SKIP $1"
	tap_end
}

# faults_pool: a pool worker whose get finds no memory for its key's side
# tries again 100 ms later rather than leave its loop (kwq-pool.rst).
# Every add that queues a key makes sure of a spare side and a worker's
# done gives its side back, so the worker's get must first find none:
# while its handler sleeps on kernel/0, that key is also made to wait 60 s
# (it keeps its side past the done), keys u/0..59 are added (the first
# page's 55 spare sides suffice) and a user program takes and holds 55 of
# them. Then failslab, with its task filter, fails the worker thread's
# next 6 allocations. A get makes 3 back to back (the side chunk of its
# first look without sleeping, of the wait loop's, and of its sleeping
# refill) and the worker allocates nothing between its handler's return
# and its get, so two gets end with -ENOMEM. Checks that all 6 were
# injected (else the path was not reached), that the worker handled the
# 5 keys left and still runs. A worker that left its loop on -ENOMEM
# (planted) handles none of them.
fp_handled_is() { [ "$(cat /sys/module/kwq_sample/parameters/handled)" = "$1" ]; }
fp_processing_is() { [ "$(queue_stat f-pool processing)" = "$1" ]; }

faults_pool() {
	tap_begin faults-pool
	if ! insmod ./kwq_sample.ko queue=f-pool create=1 workers=1 work_us=10000000; then
		tap 1 "insmod kwq_sample.ko queue=f-pool create=1 workers=1"
		tap_end
		return
	fi
	fp_pid=""
	for fp_d in /proc/[0-9]*; do
		[ "$(cat "$fp_d/comm" 2>/dev/null)" = kwq0/f-pool ] && fp_pid=${fp_d#/proc/}
	done
	tap "$([ -n "$fp_pid" ]; echo $?)" "the pool's worker thread kwq0/f-pool runs"
	echo 1 > /sys/module/kwq_sample/parameters/produce
	wait_for 30 fp_processing_is 1
	tap $? "the worker takes kernel/0 and sleeps 10 s on it"
	echo 0 > /sys/module/kwq_sample/parameters/work_us
	./bin/kwqctl --kernel add-after f-pool 60000 kernel/0 >/dev/null &&
		./bin/kwq_sample_test produce --kernel f-pool u 0 60 >/dev/null
	tap $? "kernel/0 also waits 60 s; u/0..59 are added"
	rm -f /tmp/fp-ready
	./bin/kwq_sample_test consume --kernel f-pool u 0 60 --done 0 --hold 55 \
		--ready /tmp/fp-ready >/dev/null &
	fp_holder=$!
	wait_for 30 test -e /tmp/fp-ready
	tap $? "a user program holds u/0..54"
	# The task filter first, the count last: failures armed before the
	# filter would hit this shell's own writes instead of the worker.
	fp_ok=0
	for fp_kv in task-filter=Y ignore-gfp-wait=N space=0 verbose=0 interval=1 \
		probability=100; do
		echo "${fp_kv#*=}" > "$faults_dir/${fp_kv%%=*}" || fp_ok=1
	done
	echo 1 > "/proc/$fp_pid/make-it-fail" || fp_ok=1
	echo 6 > "$faults_dir/times" || fp_ok=1
	tap $fp_ok "failslab armed for the worker thread only"
	fp_handled_is 0
	tap $? "... while its handler still sleeps on kernel/0 (else raise work_us)"
	wait_for 30 fp_handled_is 6
	fp_r=$?
	fp_left=$(cat "$faults_dir/times")
	# Disarmed for everyone before the knobs are restored one by one.
	echo 0 > "$faults_dir/probability"
	{ echo 0 > "/proc/$fp_pid/make-it-fail"; } 2>/dev/null
	tap "$([ "$fp_left" = 0 ]; echo $?)" "failslab failed 6 allocations of the worker ($fp_left left)"
	tap $fp_r "the worker handled u/55..59 after its get failed with -ENOMEM"
	tap "$([ "$(cat "/proc/$fp_pid/comm" 2>/dev/null)" = kwq0/f-pool ]; echo $?)" \
		"the worker thread still runs"
	kill "$fp_holder"
	wait "$fp_holder" 2>/dev/null
	wait_for 30 fp_handled_is 61
	tap $? "u/0..54 come back when their holder dies and are handled"
	./bin/kwqctl --kernel cancel f-pool kernel/0 >/dev/null
	rmmod kwq_sample
	tap $? "rmmod kwq_sample"
	./bin/kwqctl --kernel destroy f-pool
	tap $? "destroy f-pool"
	rm -f /tmp/fp-ready
	tap_end
}

# The failslab knobs kwq_faults sets for its run (and restores),
# probability first: restored last, a test's probability of 100 would arm
# failslab for every task while the task filter and count go back.
faults_dir=/sys/kernel/debug/failslab
faults_knobs="probability ignore-gfp-wait verbose task-filter times interval space"
faults_missing=""
for faults_k in $faults_knobs; do
	[ -w "$faults_dir/$faults_k" ] || faults_missing="$faults_missing $faults_k"
done

if [ ! -e /proc/thread-self/fail-nth ]; then
	faults_skip "no /proc/thread-self/fail-nth: CONFIG_FAULT_INJECTION is off in $(uname -r)"
elif [ ! -d "$faults_dir" ]; then
	faults_skip "no $faults_dir: CONFIG_FAILSLAB or CONFIG_FAULT_INJECTION_DEBUG_FS is off in $(uname -r)"
elif [ -n "$faults_missing" ]; then
	faults_skip "$faults_dir lacks writable knobs:$faults_missing"
elif [ ! -x ./bin/kwq_faults ]; then
	faults_skip "bin/kwq_faults was not built"
else
	# kwq_faults restores the knobs itself; this covers a crash half-way.
	faults_saved=""
	for faults_k in $faults_knobs; do
		faults_saved="$faults_saved $faults_k=$(cat "$faults_dir/$faults_k")"
	done
	tap_program faults ./bin/kwq_faults
	faults_pool
	for faults_kv in $faults_saved; do
		echo "${faults_kv#*=}" > "$faults_dir/${faults_kv%%=*}"
	done
fi
