#!/usr/bin/env bash
# `make check`: every test on seven kernels. Installs what is missing, runs
# the static checks, builds kwq for each kernel, boots each under QEMU and
# runs scripts/guest/check.sh there. A guest console with any kernel splat
# fails the run. The kernels (scripts/kernel.sh names them):
#   stock       Debian 12's default kernel (6.1)
#   stock-6.12  Debian's 6.12 LTS kernel for bookworm
#   rt-6.12     its PREEMPT_RT flavour
#   stock-sid   Debian sid's kernel, Linux's current stable series (7.x),
#   rt-sid      and its PREEMPT_RT flavour, kwq built in a sid root by the
#               kernel's own compiler (scripts/sid-root.sh)
#   debug       sid's 7.x built with KASAN, lockdep with raw-lock nesting,
#               kmemleak, KUnit, failslab
#   debug-rt    6.12 PREEMPT_RT built with KCSAN, lockdep with raw-lock
#               nesting, kmemleak, KUnit, failslab
# The debug kernels are built once and cached; a missing one is built in
# the background while the stock kernels' guests run. On debug-rt
# an expected-red check (scripts/plant.sh) must see a planted RT-only lock
# nesting caught, and on debug a call with interrupts off caught by
# kwq_lock()'s own assertion and the queue's timer planted back to a hard
# hrtimer caught by lockdep's raw-lock nesting check. Ends with one line:
# "N passed, N failed[, N skipped]".
# With two CPUs the debug kernels' guests run in a second lane beside the
# static checks and the stock kernels' guests.
# Environment: KWQ_KERNELS (default "stock stock-6.12 rt-6.12 stock-sid
# rt-sid debug debug-rt"; any subset, in any order), KWQ_VM_TIMEOUT (s), KWQ_LANES (1
# for one lane).
set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$top"
out=$top/build/check
mkdir -p "$out"

passed=0 failed=0 skipped=0
# Every failure, one line each (both lanes append), repeated at the end so
# that the last lines of a red run say what failed.
failed_list=$out/failed.list
: >"$failed_list"
# Each step's header says how long the run has taken so far.
step() { printf '\n=== %s (at %d s)\n' "$*" "$SECONDS"; }

# Add a TAP stream's counts to the totals. count NAME FILE
count() {
	local line p f s fails=$out/${1//\//-}.failures
	line=$(scripts/tap-count.sh "$2" 2>"$fails" || true)
	p=$(sed -n 's/.*PASS=\([0-9]*\).*/\1/p' <<<"$line")
	f=$(sed -n 's/.*FAIL=\([0-9]*\).*/\1/p' <<<"$line")
	s=$(sed -n 's/.*SKIP=\([0-9]*\).*/\1/p' <<<"$line")
	p=${p:-0} f=${f:-0} s=${s:-0}
	# A stream with no result at all is a failure, not a pass.
	if [[ $((p + f + s)) -eq 0 ]]; then
		f=1
		echo "no test results" >"$fails"
	fi
	passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
	printf '%-28s %4d passed %4d failed %4d skipped\n' "$1" "$p" "$f" "$s"
	if [[ $f -gt 0 ]]; then
		sed 's/^/    /' "$fails"
		sed "s|^|$1: |" "$fails" >>"$failed_list"
	fi
	return 0
}

# One pass/fail that is not TAP. verdict NAME STATUS
verdict() {
	if [[ $2 -eq 0 ]]; then
		passed=$((passed + 1))
		printf '%-28s ok\n' "$1"
	else
		failed=$((failed + 1))
		printf '%-28s FAILED\n' "$1"
		echo "$1: FAILED" >>"$failed_list"
	fi
}

all_flavours="stock stock-6.12 rt-6.12 stock-sid rt-sid debug debug-rt"
flavours=${KWQ_KERNELS:-$all_flavours}
for flavour in $flavours; do
	[[ " $all_flavours " == *" $flavour "* ]] || {
		echo "check.sh: unknown kernel '$flavour' in KWQ_KERNELS (known: $all_flavours)" >&2
		exit 2
	}
done

step "dependencies"
scripts/deps.sh
# sid's kernels and the debug kernel's source come from the sid root.
if [[ " $flavours " == *" stock-sid "* || " $flavours " == *" rt-sid "* || " $flavours " == *" debug "* ]]; then
	scripts/sid-root.sh >/dev/null
fi

# Debug kernels that are not cached yet are built in the background, one
# after the other, while the Go build, the static checks and the stock
# kernels' guests run (at the same priority: the debug kernels' lane is
# the longer one); scripts/kernel.sh's lock makes build.sh wait for them
# below.
debug_kernels=""
for flavour in $flavours; do
	[[ $flavour != debug* ]] || debug_kernels+=" $flavour"
done
bg=""
if [[ -n $debug_kernels ]]; then
	(
		for k in $debug_kernels; do
			scripts/kernel.sh "$k" >/dev/null || true
		done
	) 2>"$out/kernels.log" &
	bg=$!
	echo "debug kernels:$debug_kernels (built in the background if not cached; log: $out/kernels.log)"
fi

# The Go binaries are the same for every kernel: built once here, copied
# by scripts/build.sh. If this fails, each kernel's build tries again and
# fails on its own.
rm -rf "$top/build/go"
if scripts/go.sh build "$top/build/go" >"$out/go-build.log" 2>&1; then
	export KWQ_GO_BUILT=$top/build/go/bin
fi

# The five sections of a guest's output that took longest ("# took N s",
# scripts/guest/lib.sh).
slowest() { # FILE
	"$top/scripts/tap-sections.sh" --took "$1" | sort -k1,1 -rn | head -n 5 |
		awk '{ print "  " $1 " s " $2 }'
}

# run_flavour FLAVOUR: build kwq for one kernel, boot it, count its tests.
# Runs in a subshell with its output in a file: the report, then a line
# "COUNTS passed failed skipped" that the caller adds up.
run_flavour() {
	local flavour=$1 guest status bad need section one
	passed=0 failed=0 skipped=0
	step "$flavour kernel"
	t0=$SECONDS
	if ! guest=$(scripts/build.sh "$flavour"); then
		verdict "$flavour-build" 1
		echo failed >"$out/$flavour.built"
		echo "COUNTS $passed $failed $skipped"
		return
	fi
	verdict "$flavour-build" 0
	# The plants (run_plant) build against this flavour's build.
	echo ok >"$out/$flavour.built"
	eval "$(scripts/kernel.sh "$flavour")"
	echo "kernel $flavour: $KWQ_KVER ($KWQ_KERNEL)"
	echo "built for $flavour in $((SECONDS - t0)) s"
	t0=$SECONDS
	status=0
	# The stock kernels run every vCPU on one host thread: Debian's 6.12
	# kernels die under QEMU 7.2's multi-threaded TCG when they patch their
	# own code, and one thread costs less host CPU for the same wall time.
	# The debug kernels keep a thread per vCPU, which KCSAN needs
	# (scripts/vm-run.sh --one-thread).
	one=()
	[[ $flavour == debug* ]] || one=(--one-thread)
	scripts/vm-run.sh "${one[@]}" --kernel "$KWQ_KERNEL" --files "$guest" \
		--timeout "${KWQ_VM_TIMEOUT:-1200}" --log "$out/$flavour-console.log" \
		-- "$guest/check.sh" >"$out/$flavour.out" 2>"$out/$flavour.err" || status=$?
	# 90: kernel splat on the console; 124: timeout; others: guest failed.
	case $status in
	0) ;;
	90) echo "kernel problems on the $flavour console:"; cat "$out/$flavour.out" "$out/$flavour.err" | grep -A40 KWQ-SPLAT | head -80 ;;
	124) echo "the $flavour guest timed out" ;;
	*) echo "the $flavour guest exited with $status" ;;
	esac
	bad=0
	case $status in 90 | 124 | 125) bad=1 ;; esac
	verdict "$flavour-console-clean" $bad
	# The failure list (repeated at the very end of the run) carries the
	# first problem lines and the console's last lines, so a log's tail
	# alone says what went wrong.
	if ((bad)); then
		{
			# None for a timeout: not a reason to stop the run (set -e).
			grep -h '^KWQ-SPLAT: \[' "$out/$flavour.out" "$out/$flavour.err" | head -n 5 || true
			echo "last console lines:"
			tail -n 12 "$out/$flavour-console.log"
		} | sed "s|^|$flavour-console-clean:   |" >>"$failed_list"
	fi
	# The guest script ends with status 0 once it has run to its end; any
	# other status (a sourced script that aborted, a missing file) means
	# sections after it never ran, whatever the sections that did say.
	bad=0
	case $status in 0 | 90) ;; *) bad=1 ;; esac
	verdict "$flavour-guest-ran-to-its-end" $bad
	"$top/scripts/tap-sections.sh" "$out/$flavour.out" >"$out/$flavour.sections"
	while read -r section; do
		"$top/scripts/tap-sections.sh" "$out/$flavour.out" "$section" \
			>"$out/$flavour-$section.tap"
		count "$flavour/$section" "$out/$flavour-$section.tap"
	done <"$out/$flavour.sections"
	# A kernel with KUnit or failslab must have run the KUnit suites and the
	# fault sweep: a skipped or missing section is a failure.
	bad=0 need=0
	if grep -qx kunit "$guest/kernel-checkers"; then
		need=1
		for m in kwq_kunit kwq_limiter_test; do
			grep -qx "kunit-$m" "$out/$flavour.sections" ||
				{ echo "no KUnit results from $m.ko on $flavour"; bad=1; }
		done
	fi
	if grep -qx failslab "$guest/kernel-checkers"; then
		need=1
		for section in faults faults-pool; do
			if ! grep -qx "$section" "$out/$flavour.sections" ||
				grep -q '# SKIP' "$out/$flavour-$section.tap"; then
				echo "the fault section $section did not run on $flavour"
				bad=1
			fi
		done
	fi
	((need == 0)) || verdict "$flavour-kunit-and-faults-ran" $bad
	echo "the $flavour guest ran $((SECONDS - t0)) s; its slowest sections:"
	slowest "$out/$flavour.out"
	echo "console log: $out/$flavour-console.log"
	echo "COUNTS $passed $failed $skipped"
}

# run_plant FLAVOUR: a debug flavour's expected-red check, once run_flavour
# has built kwq for it (it may run in the other lane); output as
# run_flavour's.
run_plant() {
	local flavour=$1 i
	passed=0 failed=0 skipped=0
	for ((i = 0; i < 720; i++)); do
		[[ -s $out/$flavour.built ]] && break
		sleep 5
	done
	if [[ $(cat "$out/$flavour.built" 2>/dev/null) != ok ]]; then
		verdict "$flavour-plant-had-a-build" 1
	elif [[ $flavour == debug-rt ]]; then
		scripts/plant.sh "$flavour" rt >"$out/$flavour-plant.tap" 2>&1 || true
		count "$flavour/plant-expected-red" "$out/$flavour-plant.tap"
	else
		scripts/plant.sh "$flavour" irq >"$out/$flavour-plant-irq.tap" 2>&1 || true
		count "$flavour/plant-irq-expected-red" "$out/$flavour-plant-irq.tap"
		scripts/plant.sh "$flavour" hard >"$out/$flavour-plant-hard.tap" 2>&1 || true
		count "$flavour/plant-hard-expected-red" "$out/$flavour-plant-hard.tap"
	fi
	echo "COUNTS $passed $failed $skipped"
}

# Show a flavour's report and add its counts to the totals.
report() { # FLAVOUR
	local c
	grep -v '^COUNTS ' "$out/$1.report" || true
	c=$(sed -n 's/^COUNTS //p' "$out/$1.report")
	if [[ -z $c ]]; then
		verdict "$1-report" 1
		return
	fi
	read -r p f k <<<"$c"
	passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + k))
}

# Two lanes on a machine with two CPUs or more (KWQ_LANES=1 for one): the
# debug kernels' guests in the background while the static checks and the
# stock kernels' guests run here. A guest is mostly one busy vCPU and
# waits, so the lanes share two CPUs well; each flavour writes its report
# to a file, printed in the usual order when its lane is done.
stock_flavours="" debug_flavours=""
for flavour in $flavours; do
	if [[ $flavour == debug* ]]; then debug_flavours+=" $flavour"; else stock_flavours+=" $flavour"; fi
done
lanes=${KWQ_LANES:-$(($(nproc) >= 2 ? 2 : 1))}
lane=""
for flavour in $debug_flavours; do
	rm -f "$out/$flavour.built"
done
if [[ $lanes -ge 2 && -n $debug_flavours ]]; then
	# The lanes' builds share build/user and the Go cache: build them once first.
	make -s -j"$(nproc)" -C userspace O="$top/build/user" >/dev/null
	(
		for flavour in $debug_flavours; do
			(run_flavour "$flavour") >"$out/$flavour.report" 2>&1
		done
	) &
	lane=$!
	echo "debug kernels' guests run in a second lane:$debug_flavours"
fi

step "static checks"
# A script that dies half-way (no "not ok" yet) must not pass: its exit
# status becomes a failing test point.
tap_script() { # FILE COMMAND...
	local file=$1 st=0
	shift
	"$@" >"$file" 2>"$file.err" || st=$?
	if [[ $st -ne 0 ]] && ! grep -q '^not ok' "$file"; then
		echo "not ok - $* exited with status $st" >>"$file"
		tail -n 5 "$file.err" | sed 's/^/#   /' >>"$file"
	fi
}
# The stock kernel's build below is lint's W=1 and sparse build (build.sh
# fails on any warning): lint skips its own copy of it then.
build_in_check=0
[[ " $flavours " != *" stock "* ]] || build_in_check=1
KWQ_LINT_BUILD_IN_CHECK=$build_in_check tap_script "$out/lint.tap" scripts/lint.sh
count lint "$out/lint.tap"
tap_script "$out/selftest.tap" scripts/selftest.sh
count checker-selftest "$out/selftest.tap"

for flavour in $stock_flavours; do
	(run_flavour "$flavour") >"$out/$flavour.report" 2>&1
	report "$flavour"
done
# The plants run in this lane once its stock guests are done, while the
# other runs the debug guests (the longer share).
if [[ -n $lane ]]; then
	for flavour in $debug_flavours; do
		(run_plant "$flavour") >"$out/$flavour-plant.report" 2>&1
	done
	wait "$lane" || true
else
	for flavour in $debug_flavours; do
		(run_flavour "$flavour") >"$out/$flavour.report" 2>&1
		(run_plant "$flavour") >"$out/$flavour-plant.report" 2>&1
	done
fi
for flavour in $debug_flavours; do
	report "$flavour"
	report "$flavour-plant"
done
[[ -z $bg ]] || wait "$bg" || true

echo
if [[ $failed -gt 0 ]]; then
	echo "what failed:"
	head -n 80 "$failed_list" | sed 's/^/  /'
fi
echo "make check took $SECONDS s"
if [[ $skipped -gt 0 ]]; then
	echo "$passed passed, $failed failed, $skipped skipped"
else
	echo "$passed passed, $failed failed"
fi
[[ $failed -eq 0 ]]
