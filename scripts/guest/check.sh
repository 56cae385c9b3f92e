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
[ -n "$out" ] && echo "$out" | sed 's/^/#   /'
tap_end

tap_program "abi-64bit" ./bin/kwq_abi_test
tap_program "abi-32bit" ./bin/kwq_abi_test32

if [ -f ./kwq_kunit.ko ]; then
	insmod ./kwq_kunit.ko
	for suite in /sys/kernel/debug/kunit/kwq_*; do
		echo "KWQ-TAP-BEGIN kunit-${suite##*/}"
		cat "$suite/results"
		echo "KWQ-TAP-END kunit-${suite##*/}"
	done
	rmmod kwq_kunit
fi

tap_begin "unload-$(uname -r)"
exec 3</dev/kwq
rmmod kwq 2>/dev/null; [ $? -ne 0 ]; tap $? "rmmod is refused while /dev/kwq is open"
exec 3<&-
rmmod kwq; tap $? "rmmod kwq after close"
[ ! -e /dev/kwq ]; tap $? "/dev/kwq is gone"
kmemleak_report; tap $? "kmemleak reports nothing"
tap_end
