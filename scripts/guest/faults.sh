# shellcheck shell=sh
# Fault-injection sweep (issue 6), sourced by check.sh in /kwq with kwq.ko
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

# The failslab knobs kwq_faults sets for its run (and restores).
faults_dir=/sys/kernel/debug/failslab
faults_knobs="ignore-gfp-wait verbose task-filter times interval space probability"
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
	for faults_kv in $faults_saved; do
		echo "${faults_kv#*=}" > "$faults_dir/${faults_kv%%=*}"
	done
fi
