#!/bin/sh
# shellcheck source-path=SCRIPTDIR
# In the guest: load kwq, run every test that applies to this kernel,
# unload, and check for leaks. Runs from /kwq (see scripts/vm-run.sh).
. ./lib.sh

kmemleak_clear
tap_begin "module-$(uname -r)"
dmesg_mark
insmod ./kwq.ko; tap $? "insmod kwq.ko"
[ -c /dev/kwq ]; tap $? "/dev/kwq is a character device"
out=$(dmesg_since_mark)
[ -z "$out" ]; tap $? "loading logs nothing"
[ -n "$out" ] && printf '%s\n' "$out" | while IFS= read -r line; do echo "#   $line"; done
tap_end

. ./observe.sh

tap_program "abi-64bit" ./bin/kwq_abi_test
tap_program "abi-32bit" ./bin/kwq_abi_test32
tap_program "batch-64bit" ./bin/kwq_batch_test
tap_program "batch-32bit" ./bin/kwq_batch_test32
tap_program "done-get-64bit" ./bin/kwq_done_get_test
tap_program "done-get-32bit" ./bin/kwq_done_get_test32
tap_program "handout-64bit" ./bin/kwq_handout_test
tap_program "handout-32bit" ./bin/kwq_handout_test32
tap_program "access-64bit" ./bin/kwq_access_test
tap_program "access-32bit" ./bin/kwq_access_test32
tap_program "timens-64bit" ./bin/kwq_timens_test
tap_program "timens-32bit" ./bin/kwq_timens_test32
tap_program "limits-64bit" ./bin/kwq_limits_test
tap_program "limits-32bit" ./bin/kwq_limits_test32 --no-memcg
tap_program "scope-64bit" ./bin/kwq_scope_test
tap_program "scope-32bit" ./bin/kwq_scope_test32
tap_program "payload-64bit" ./bin/kwq_payload_test
tap_program "payload-32bit" ./bin/kwq_payload_test32
# The 64-bit run floods 100,000 keys of one tenant on the stock kernels;
# the debug kernels, where the flood and its destroy take 35-50 s, flood
# 20,000 (the size of KUnit's exact-bound flood on the same kernels). The
# 32-bit build floods 10,000: the compat path, not the count, is its part.
tenant_flood=100000
kernel_has lockdep && tenant_flood=20000
tap_program "tenant-64bit" ./bin/kwq_tenant_test --flood $tenant_flood
tap_program "tenant-32bit" ./bin/kwq_tenant_test32 --flood 10000
# KUnit (debug kernels) prints KTAP to the kernel log while its module
# loads; the log is read from dmesg, since 6.1's debugfs results keep only
# the last parameter of a parameterised case. Its suites keep one vCPU busy
# for a minute or more, so they run in the background while the sections
# up to the Go tests run on the other vCPU. None of those sets a module
# parameter (KUnit's queues read max_items_per_queue when they are made):
# the tests that do (limits, payload, tenant) all ran above.
# The model suite runs 200 seeds of 500 steps; under KCSAN (debug-rt) a
# step costs about nine times as much, so that kernel runs 24 of them.
kunit_run() {
	for m in kwq_kunit kwq_limiter_test; do
		[ -f ./$m.ko ] || continue
		params=""
		case "$m/$(uname -r)" in kwq_kunit/*-rt*) params="model_seeds=24" ;; esac
		dmesg_mark kunit
		kunit_t0=$(uptime_cs)
		# shellcheck disable=SC2086 # $params is empty or one word
		insmod ./$m.ko $params
		{
			echo "KWQ-TAP-BEGIN kunit-$m"
			dmesg_since_mark kunit
			took "$kunit_t0"
			echo "KWQ-TAP-END kunit-$m"
		} >/tmp/kunit-$m.out
		rmmod $m
	done
}
rm -f /tmp/kunit-*.out
kunit_run &
kunit_pid=$!

tap_program "debounce-64bit" ./bin/kwq_debounce_test
tap_program "debounce-32bit" ./bin/kwq_debounce_test32
tap_program "add-ex-64bit" ./bin/kwq_add_ex_test
tap_program "add-ex-32bit" ./bin/kwq_add_ex_test32
tap_program "priority-64bit" ./bin/kwq_priority_test
tap_program "priority-32bit" ./bin/kwq_priority_test32
tap_program "clock-64bit" ./bin/kwq_clock_test
tap_program "clock-32bit" ./bin/kwq_clock_test32
# 12 s of fuzzing where the sanitizers watch (debug kernels), 10 s elsewhere.
fuzz_s=10
kernel_has lockdep && fuzz_s=12
tap_program "fuzz-64bit" ./bin/kwq_fuzz --seconds $fuzz_s
tap_program "fuzz-32bit" ./bin/kwq_fuzz32 --seconds 8
. ./faults.sh

# User programs and the sample kernel module on the same queues.
. ./sample.sh

# The Go package's tests and example controller (scripts/guest/go.sh).
. ./go.sh

# KUnit's sections, once its modules are unloaded again.
wait $kunit_pid
for m in kwq_kunit kwq_limiter_test; do
	[ ! -f /tmp/kunit-$m.out ] || cat /tmp/kunit-$m.out
done

tap_begin "unload-$(uname -r)"
exec 3</dev/kwq
if rmmod kwq 2>/dev/null; then refused=1; else refused=0; fi
tap $refused "rmmod is refused while /dev/kwq is open"
exec 3<&-
rmmod kwq; tap $? "rmmod kwq after close"
[ ! -e /dev/kwq ]; tap $? "/dev/kwq is gone"
kmemleak_report; tap $? "kmemleak reports nothing"
checkers_still_on
tap_end
