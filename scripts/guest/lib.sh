# shellcheck shell=sh
# Shared helpers for scripts run inside the test guest (busybox sh).
# Results are TAP, grouped in sections the host counts:
#   KWQ-TAP-BEGIN <name> ... KWQ-TAP-END <name>

tap_n=0
tap_begin() { tap_section=$1; tap_n=0; echo "KWQ-TAP-BEGIN $1"; }
tap_end() { echo "1..$tap_n"; echo "KWQ-TAP-END $tap_section"; }
# tap STATUS DESCRIPTION
tap() {
	tap_n=$((tap_n + 1))
	if [ "$1" -eq 0 ]; then echo "ok $tap_n - $2"; else echo "not ok $tap_n - $2"; fi
}
# Run a program that prints TAP itself as its own section.
tap_program() { # NAME COMMAND...
	name=$1; shift
	echo "KWQ-TAP-BEGIN $name"
	"$@"
	echo "# exit status $?"
	echo "KWQ-TAP-END $name"
}

# New dmesg lines since the mark, without the kernel's taint notices.
dmesg_mark() { dmesg | wc -l > /tmp/dmesg.mark; }
dmesg_since_mark() {
	dmesg | tail -n +$(($(cat /tmp/dmesg.mark) + 1)) |
		grep -v -e 'taints kernel' -e 'tainting kernel' || true
}

kmemleak_clear() {
	[ -w /sys/kernel/debug/kmemleak ] && echo clear > /sys/kernel/debug/kmemleak
	return 0
}
# Report leaks since kmemleak_clear; objects must be 5 s old to count.
kmemleak_report() {
	[ -w /sys/kernel/debug/kmemleak ] || return 0
	sleep 6
	echo scan > /sys/kernel/debug/kmemleak
	echo scan > /sys/kernel/debug/kmemleak
	cat /sys/kernel/debug/kmemleak > /tmp/kmemleak.txt
	cat /tmp/kmemleak.txt
	[ ! -s /tmp/kmemleak.txt ]
}
