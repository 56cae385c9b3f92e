# shellcheck shell=sh
# Shared helpers for scripts run inside the test guest (busybox sh).
# Results are TAP, grouped in sections the host counts:
#   KWQ-TAP-BEGIN <name> ... KWQ-TAP-END <name>

tap_n=0
# Seconds since boot, to two decimals: each section ends with a comment
# saying how long it took, so a slow run shows where its time went.
uptime_cs() { sed 's/^\([0-9]*\)\.\([0-9]*\) .*/\1\2/; s/^0*\([0-9]\)/\1/' /proc/uptime; }
took() { # START (from uptime_cs)
	d=$(($(uptime_cs) - $1))
	printf '# took %d.%02d s\n' $((d / 100)) $((d % 100))
}
tap_begin() { tap_section=$1; tap_n=0; tap_t0=$(uptime_cs); echo "KWQ-TAP-BEGIN $1"; }
tap_end() { echo "1..$tap_n"; took "$tap_t0"; echo "KWQ-TAP-END $tap_section"; }
# tap STATUS DESCRIPTION
tap() {
	tap_n=$((tap_n + 1))
	if [ "$1" -eq 0 ]; then echo "ok $tap_n - $2"; else echo "not ok $tap_n - $2"; fi
}
# Run a program that prints TAP itself as its own section.
tap_program() { # NAME COMMAND...
	name=$1; shift
	echo "KWQ-TAP-BEGIN $name"
	tap_p0=$(uptime_cs)
	"$@"
	status=$?
	echo "# exit status $status"
	took "$tap_p0"
	# A program that died (a signal, an abort) or gave up (exit 1 after a
	# "Bail out!") may have printed only passes and no plan: any exit
	# status but 0 is a failure of its own, also of a program whose own
	# failures already show.
	[ "$status" -eq 0 ] || echo "not ok - $name exited with status $status"
	echo "KWQ-TAP-END $name"
}

# New dmesg lines since the mark, without the kernel's taint notices.
# MARK names the mark (default "main"): KUnit keeps its own while it runs
# in the background.
dmesg_mark() { dmesg | wc -l > "/tmp/dmesg.${1:-main}.mark"; }
# Not kwq's: the taint note of an out-of-tree module, and the kernel's
# one-time note that an hrtimer interrupt ran long and the clocksource
# watchdog's note that it skipped a check (an emulated CPU that the loaded
# host did not schedule for a while).
dmesg_since_mark() { # [MARK]
	dmesg | tail -n +$(($(cat "/tmp/dmesg.${1:-main}.mark") + 1)) |
		grep -v -e 'taints kernel' -e 'tainting kernel' \
			-e 'hrtimer: interrupt took [0-9]* ns$' \
			-e 'clocksource: Long readout interval, skipping watchdog check' || true
}

# What the kernel was built with: scripts/build.sh writes the words of the
# checkers enabled in the build tree's .config (lockdep kmemleak kasan
# kcsan kunit failslab) to ./kernel-checkers. kernel_has WORD
kernel_has() { grep -qw "$1" ./kernel-checkers 2>/dev/null; }

# wait_for SECONDS CMD...: run CMD every 0.1 s until it succeeds, up to
# SECONDS; fails if it never did.
wait_for() {
	wait_i=$(($1 * 10))
	shift
	until "$@"; do
		[ $wait_i -le 0 ] && return 1
		sleep 0.1
		wait_i=$((wait_i - 1))
	done
}

# queue_stat QUEUE FIELD [--user]: one number from `kwqctl stats` ("items
# 3/65536" -> 3) of the kernel's queue QUEUE, or of the user's with --user.
queue_stat() {
	if [ "${3:-}" = --user ]; then qs_scope=""; else qs_scope=--kernel; fi
	./bin/kwqctl $qs_scope stats "$1" | awk -v f="$2" '{
		for (i = 1; i < NF; i++)
			if ($i == f) { split($(i + 1), v, "/"); print v[1]; exit }
	}'
}

kmemleak_clear() {
	[ -w /sys/kernel/debug/kmemleak ] && echo clear > /sys/kernel/debug/kmemleak
	return 0
}
# Report leaks since kmemleak_clear; objects must be 5 s old to count.
# Fails when the kernel has kmemleak but it is gone or refuses to scan
# (it refuses with EPERM once it has disabled itself).
kmemleak_report() {
	if [ ! -w /sys/kernel/debug/kmemleak ]; then
		kernel_has kmemleak || return 0
		echo "# kmemleak is configured but /sys/kernel/debug/kmemleak is not there"
		return 1
	fi
	sleep 6
	if ! { echo scan > /sys/kernel/debug/kmemleak && echo scan > /sys/kernel/debug/kmemleak; }; then
		echo "# kmemleak refused to scan: it has disabled itself"
		return 1
	fi
	cat /sys/kernel/debug/kmemleak > /tmp/kmemleak.txt
	cat /tmp/kmemleak.txt
	[ ! -s /tmp/kmemleak.txt ]
}

# The checkers the kernel was built with must still be on at the end of a
# run: lockdep and kmemleak switch themselves off after an internal error
# or their first report, and everything after that runs unchecked. Prints
# TAP points into the current section.
checkers_still_on() {
	if kernel_has lockdep; then
		checkers_dl=$(sed -n 's/^ *debug_locks: *//p' /proc/lockdep_stats 2>/dev/null)
		[ "$checkers_dl" = 1 ]
		tap $? "lockdep is still on (/proc/lockdep_stats debug_locks: ${checkers_dl:-missing})"
	fi
	if kernel_has kmemleak; then
		# Writes other than "clear" fail with EPERM once kmemleak is off;
		# "scan=off" only stops the (already stopped) scan thread.
		checkers_st=0
		echo scan=off 2>/dev/null > /sys/kernel/debug/kmemleak || checkers_st=1
		tap $checkers_st "kmemleak is still on (/sys/kernel/debug/kmemleak accepts a command)"
	fi
}
