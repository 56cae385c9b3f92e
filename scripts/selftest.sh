#!/usr/bin/env bash
# Self-test of the log parsers on the sample logs in scripts/testdata/, and
# of vm-run.sh's boot retry with a fake QEMU. Prints TAP; exits non-zero if
# any check fails. No VM or kernel needed.
set -euo pipefail

if [[ $# -ne 0 ]]; then
	echo "usage: scripts/selftest.sh   (checks check-console.sh and tap-count.sh on scripts/testdata/)" >&2
	exit 2
fi

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
data=$here/testdata
n=0 failed=0

ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() {
	n=$((n + 1)) failed=$((failed + 1))
	echo "not ok $n - $1"
	shift
	printf '#   %s\n' "$@"
}

# check-console.sh LOG must exit WANT and, for splats, name CATEGORY.
console() {
	local log=$1 want=$2 category=${3:-} out rc=0
	out=$("$here/check-console.sh" "$data/$log" 2>&1) || rc=$?
	if [[ $rc -ne $want ]]; then
		not_ok "check-console $log exits $want" "got exit $rc" "${out:0:600}"
	elif [[ -n $category && $out != *"[$category] line "* ]]; then
		not_ok "check-console $log reports [$category]" "${out:0:600}"
	else
		ok "check-console $log exits $want${category:+ [$category]}"
	fi
}

# tap-count.sh [ARGS...] FILE must print WANT (and exit WANT_RC).
tap() {
	local want=$1 want_rc=$2 out rc=0
	shift 2
	out=$("$here/tap-count.sh" "$@" 2>/dev/null) || rc=$?
	if [[ $out == "$want" && $rc -eq $want_rc ]]; then
		ok "tap-count ${*##*/} -> $want"
	else
		not_ok "tap-count ${*##*/} -> $want (exit $want_rc)" "got: $out (exit $rc)"
	fi
}

echo "TAP version 13"

# Real console logs from scripts/vm-run.sh (console + KWQ-DMESG dump), from
# throwaway modules on the debug kernel unless named -stock.
console console-clean-debug.log 0
console console-clean-stock.log 0
console console-kunit.log 0          # failing KUnit cases are not splats
console console-own-strings.log 0    # the guest echoing "WARNING: ", "BUG: "...
console console-warning.log 1 warning
console console-warning-stock.log 1 warning
console console-kasan.log 1 kasan
console console-lockdep.log 1 lockdep
console console-kmemleak.log 1 kmemleak-object
console console-kmemleak.log 1 kmemleak
console console-ubsan.log 1 ubsan   # module built with UBSAN_SANITIZE := y
console console-oops.log 1 gpf
console console-panic.log 1 panic  # panic_on_warn: no KWQ-EXIT, no dmesg dump
# A checker that switched itself off fails the run.
# Real: a module locking a spinlock whose lockdep key is on its stack.
console console-lockdep-nonstatic.log 1 lockdep-off
console console-lockdep-nonstatic.log 1 stack-trace
# Real: `echo off > /sys/kernel/debug/kmemleak` in the guest.
console console-kmemleak-off.log 1 kmemleak-off
# Real: scripts/plant.sh on the PREEMPT_RT debug kernel.
console console-rt-plant.log 1 lock-nesting
console console-rt-plant.log 1 sleep-in-atomic
# Hand-made from the kernel's message texts (6.1 sources).
console console-off-lockdep.log 1 lockdep-off
console console-off-taint.log 1 lockdep-off
console console-off-kmemleak.log 1 kmemleak-off
console console-off-kasan.log 1 kasan-off
console console-off-debugobjects.log 1 debugobjects-off
console console-call-trace.log 1 stack-trace

# KTAP from the debug kernel's KUnit: a module suite with a pass, a fail, a
# skip and a parameterised case (params 1 and 3 pass, 2 fails); leaves count.
tap "PASS=3 FAIL=2 SKIP=1" 1 "$data/ktap-kunit-dmesg.txt"
tap "PASS=3 FAIL=2 SKIP=1" 1 --from KWQ-DMESG-BEGIN --to KWQ-DMESG-END "$data/console-kunit.log"
# 6.1's debugfs results file keeps only part of a parameterised case's log:
# the lost failing param still counts through its case's "not ok".
tap "PASS=2 FAIL=2 SKIP=1" 1 "$data/ktap-kunit-results.txt"
tap "PASS=6 FAIL=4 SKIP=2" 1 "$data/ktap-two-suites-dmesg.txt"
# Cut inside the parameterised case: the crash counts as one failure.
tap "PASS=2 FAIL=2 SKIP=1" 1 "$data/ktap-truncated.txt"
# Hand-made: nested params, skips, failures, and a suite cut short of its
# plan (2 of 3 results missing) with no suite result line.
tap "PASS=2 FAIL=4 SKIP=2" 1 "$data/ktap-nested.txt"
tap "PASS=2 FAIL=0 SKIP=2" 0 "$data/tap-plain.txt"   # TODO counts as skip
# A program that bailed out after two passes, with no plan: a failure.
tap "PASS=2 FAIL=1 SKIP=0" 1 "$data/tap-bail-out.txt"
tap "PASS=0 FAIL=0 SKIP=0" 1 "$data/console-clean-stock.log"

# Failing, missing and cut-short tests are listed on stderr.
err=$("$here/tap-count.sh" "$data/ktap-nested.txt" 2>&1 >/dev/null || true)
err+=$("$here/tap-count.sh" "$data/ktap-truncated.txt" 2>&1 >/dev/null || true)
if [[ $err == *"not ok: example: not ok 4 example_fail"* &&
	$err == *"crashy: 2 of 3 planned results missing"* &&
	$err == *"kt_param: ended without its result line"* ]]; then
	ok "tap-count lists failing, missing and cut-short tests on stderr"
else
	not_ok "tap-count lists failing, missing and cut-short tests on stderr" "$err"
fi

# Real (debug-rt, CI on 0688c5c): the kernel printed a message on the
# same console line, right after a section's opening marker. The section
# keeps its name and its 35 results; the next one is not swallowed.
names=$("$here/tap-sections.sh" "$data/sections-interleaved.out" | tr '\n' ' ')
if [[ $names == "timens-32bit limits-64bit " ]]; then
	ok "tap-sections: a kernel message after a marker is not part of the name"
else
	not_ok "tap-sections: a kernel message after a marker is not part of the name" "got: $names"
fi
sect() { # NAME WANT
	local out
	out=$("$here/tap-sections.sh" "$data/sections-interleaved.out" "$1" |
		"$here/tap-count.sh" 2>/dev/null || true)
	if [[ $out == "$2" ]]; then
		ok "tap-sections: section $1 -> $2"
	else
		not_ok "tap-sections: section $1 -> $2" "got: $out"
	fi
}
sect timens-32bit "PASS=35 FAIL=0 SKIP=0"
sect limits-64bit "PASS=1 FAIL=0 SKIP=0"
# check.sh's list of the slowest sections reads the same names.
took=$("$here/tap-sections.sh" --took "$data/sections-interleaved.out" | tr '\n' ' ')
if [[ $took == "1.87 timens-32bit " ]]; then
	ok "tap-sections --took: each section's time, by the same name rule"
else
	not_ok "tap-sections --took: each section's time, by the same name rule" "got: $took"
fi

# trace-hops.py on excerpts of traces of a hops10k round (kwq: the
# producer on CPU 1, the consumer on CPU 0) and a hops1k round (the
# baseline), from bench-ab.sh. One wake-up checked by hand: the soft
# timer's run on CPU 1 (its hrtimer_start at 13.235653 gave it the expiry
# 13218890798, its hrtimer_expire_entry at 13.235667 says now=13219010278:
# 119.48 us late) wakes the consumer 9 us later (sched_waking), which is
# on CPU 0 51 us after that (another CPU), its get returns 5 us later and
# its clock read 6 us after that: 190.48 us.
hops=$(python3 "$here/trace-hops.py" "$data/hops-kwq.trace" "$data/hops-base.trace" 2>&1) || true
if [[ $hops == "$(cat "$data/hops-expected.txt")" ]]; then
	ok "trace-hops: the hops of a traced run"
else
	not_ok "trace-hops: the hops of a traced run" "$(diff <(echo "$hops") "$data/hops-expected.txt" | head -20)"
fi
hops=$(python3 "$here/trace-hops.py" --wakes "$data/hops-kwq.trace" "$data/hops-base.trace" 2>&1) || true
if grep -qx 'kwq 1 s 1 119.48 9.00 51.00 5.00 6.00 190.48' <<<"$hops"; then
	ok "trace-hops: a soft timer's wake-up of a consumer on another CPU, hop by hop"
else
	not_ok "trace-hops: a soft timer's wake-up of a consumer on another CPU, hop by hop" "${hops:0:600}"
fi
rc=0
hops=$(python3 "$here/trace-hops.py" "$data/hops-base.trace" "$data/hops-base.trace" 2>&1) || rc=$?
if [[ $rc -ne 0 && $hops == *"no timer wake-up"* ]]; then
	ok "trace-hops: fails on a trace of no kwq run"
else
	not_ok "trace-hops: fails on a trace of no kwq run" "exit $rc: $hops"
fi

# layers.py --check (scripts/lint.sh) on a copy of module/ with today's
# baseline: green as it is; red on a planted call from the key table (the
# bottom of the core) up to kwq_put() (the top), which makes a new loop,
# also when the call is in a header's inline function; green when the
# call is only in a comment or a string; red on a baseline line that is
# no loop edge, a loop edge the baseline lacks, and braces that do not
# balance (a broken parse passes nothing).
mod=$(mktemp -d)
layers() { # WANT (0|1) WHAT [PATTERN] -- run on $mod with $mod/baseline
	local want=$1 what=$2 pattern=${3:-} out rc=0
	out=$(python3 "$here/layers.py" --dir "$mod" --check "$mod/baseline" 2>&1) || rc=$?
	if [[ $rc -ne $want ]]; then
		not_ok "layers: $what: exit $want" "got exit $rc" "${out:0:600}"
	elif [[ -n $pattern && $out != *"$pattern"* ]]; then
		not_ok "layers: $what: says '$pattern'" "${out:0:600}"
	else
		ok "layers: $what: exit $want"
	fi
}
layers_reset() {
	rm -f "$mod"/*
	cp "$here"/../module/*.[ch] "$mod/"
	cp "$here/layers.baseline" "$mod/baseline"
}
layers_reset
layers 0 "module/ with scripts/layers.baseline"
printf '\nvoid kwq_plant(struct kwq *q)\n{\n\tkwq_put(q);\n}\n' >>"$mod/kwq_table.c"
layers 1 "a planted call up from kwq_table.c" "new call loop edge kwq_table.c -> kwq_queue.c"
layers_reset
sed -i 's|^#endif.*|static inline void kwq_plant(struct kwq *q)\n{\n\tkwq_put(q);\n}\n&|' "$mod/kwq_table.h"
layers 1 "a planted call up in a header's inline function" "new call loop edge kwq_table.h -> kwq_queue.c"
layers_reset
printf '\n/* kwq_put(q); */\nvoid kwq_plant(void)\n{\n\tpr_info("kwq_put(q)");\n}\n' >>"$mod/kwq_table.c"
layers 0 "a call up only in a comment and a string"
layers_reset
echo 'kwq_table.c -> kwq_queue.c' >>"$mod/baseline"
layers 1 "a baseline edge that is no loop edge" "baseline edge kwq_table.c -> kwq_queue.c no longer exists"
layers_reset
edge=$(grep -m1 -- '^kwq.* -> ' "$mod/baseline")
grep -vxF -- "$edge" "$here/layers.baseline" >"$mod/baseline"
layers 1 "a loop edge the baseline lacks" "new call loop edge $edge"
layers_reset
printf '\nvoid kwq_plant(void)\n{\n' >>"$mod/kwq_table.c"
layers 1 "braces that do not balance" "kwq_table.c: cannot parse"
rm -rf "$mod"

# vm-run.sh boots again when the kernel stops before the guest script
# starts, never once the script has begun. A fake qemu-system-x86_64 on
# PATH prints a console: a panic before KWQ-GUEST-BEGIN, or after it.
fake=$(mktemp -d)
trap 'rm -rf "$fake"' EXIT
: >"$fake/vmlinuz"
echo 'echo guest' >"$fake/guest.sh"
vm_retry() { # WHEN (early|late) WANT_BOOTS
	local when=$1 want=$2 rc=0 boots
	cat >"$fake/qemu-system-x86_64" <<-EOF2
		#!/bin/sh
		echo x >>"$fake/boots"
		echo '[    1.000000] booting'
		[ $when = late ] && echo 'KWQ-GUEST-BEGIN uptime=1.00'
		echo '[    1.500000] Kernel panic - not syncing: planted by selftest.sh'
		exit 0
	EOF2
	chmod +x "$fake/qemu-system-x86_64"
	rm -f "$fake/boots" "$fake/log"*
	PATH=$fake:$PATH "$here/vm-run.sh" --kernel "$fake/vmlinuz" --timeout 30 \
		--log "$fake/log" -- "$fake/guest.sh" >/dev/null 2>&1 || rc=$?
	boots=$(wc -l <"$fake/boots")
	if [[ $rc -eq 90 && $boots -eq $want && $(find "$fake" -name 'log.boot-*' | wc -l) -eq $((want - 1)) ]]; then
		ok "vm-run: a panic $when in the boot: $want boot(s), exit 90"
	else
		not_ok "vm-run: a panic $when in the boot: $want boot(s), exit 90" "got $boots boot(s), exit $rc"
	fi
}
vm_retry early 3
vm_retry late 1

# A guest that exited but whose kernel log dump was cut short (QEMU killed
# during it) is no clean console: 124, not the guest's 0.
vm_dump() { # END (yes|no) WANT_RC
	local end=$1 want=$2 rc=0
	cat >"$fake/qemu-system-x86_64" <<-EOF2
		#!/bin/sh
		echo '[    1.000000] booting'
		echo 'KWQ-GUEST-BEGIN uptime=1.00'
		echo 'KWQ-EXIT=0'
		echo 'KWQ-DMESG-BEGIN'
		echo '[    1.000000] booting'
		[ $end = yes ] && echo 'KWQ-DMESG-END'
		exit 0
	EOF2
	chmod +x "$fake/qemu-system-x86_64"
	rm -f "$fake/log"*
	PATH=$fake:$PATH "$here/vm-run.sh" --kernel "$fake/vmlinuz" --timeout 30 \
		--log "$fake/log" -- "$fake/guest.sh" >/dev/null 2>&1 || rc=$?
	local what="with its end"
	[[ $end == yes ]] || what="cut before its end"
	if ((rc == want)); then
		ok "vm-run: a kernel log dump $what: exit $want"
	else
		not_ok "vm-run: a kernel log dump $what: exit $want" "got exit $rc"
	fi
}
vm_dump yes 0
vm_dump no 124

echo "1..$n"
((failed == 0)) || { echo "# $failed of $n failed"; exit 1; }
