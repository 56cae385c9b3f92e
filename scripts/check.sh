#!/usr/bin/env bash
# `make check`: every test on both kernels. Installs what is missing,
# runs the static checks, builds kwq for the stock Debian kernel and for
# the debug kernel (built once and cached), boots each under QEMU and runs
# scripts/guest/check.sh there. A guest console with any kernel splat
# fails the run. Ends with one line: "N passed, N failed[, N skipped]".
# Environment: KWQ_KERNELS (default "stock debug"), KWQ_VM_TIMEOUT (s).
set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$top"
out=$top/build/check
mkdir -p "$out"

passed=0 failed=0 skipped=0
step() { printf '\n=== %s\n' "$*"; }

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
	fi
}

step "dependencies"
scripts/deps.sh

step "static checks"
scripts/lint.sh >"$out/lint.tap" || true
count lint "$out/lint.tap"
scripts/selftest.sh >"$out/selftest.tap" 2>&1 || true
count checker-selftest "$out/selftest.tap"

for flavour in ${KWQ_KERNELS:-stock debug}; do
	step "$flavour kernel"
	if ! guest=$(scripts/build.sh "$flavour"); then
		verdict "$flavour-build" 1
		continue
	fi
	verdict "$flavour-build" 0
	eval "$(scripts/kernel.sh "$flavour")"
	echo "kernel $KWQ_KVER ($KWQ_KERNEL)"
	status=0
	scripts/vm-run.sh --kernel "$KWQ_KERNEL" --files "$guest" \
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
	sed -n 's/^KWQ-TAP-BEGIN \([^ ]*\).*/\1/p' "$out/$flavour.out" >"$out/$flavour.sections"
	while read -r section; do
		awk -v s="$section" '$0 == "KWQ-TAP-BEGIN " s {on=1; next}
			$0 == "KWQ-TAP-END " s {on=0} on' "$out/$flavour.out" \
			>"$out/$flavour-$section.tap"
		count "$flavour/$section" "$out/$flavour-$section.tap"
	done <"$out/$flavour.sections"
	echo "console log: $out/$flavour-console.log"
done

echo
if [[ $skipped -gt 0 ]]; then
	echo "$passed passed, $failed failed, $skipped skipped"
else
	echo "$passed passed, $failed failed"
fi
[[ $failed -eq 0 ]]
