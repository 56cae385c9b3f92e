#!/usr/bin/env bash
# Expected-red check: prove that a kernel's checkers catch a lock nesting
# that is wrong only under PREEMPT_RT. Boots FLAVOUR (default debug-rt)
# with kwq.ko and scripts/plant/kwq_plant_rt.ko, which calls
# kwq_add_atomic() (the queue's spinlock_t, a sleeping lock on RT) inside a
# raw_spinlock_t section, and passes only if scripts/check-console.sh flags
# the console as [lock-nesting] ("Invalid wait context") or
# [sleep-in-atomic] ("sleeping function called from invalid context").
# Prints one TAP line; exits 0 when the plant was caught, 1 when not.
# Reuses build/FLAVOUR/ from scripts/build.sh (runs it if missing).
# Usage: scripts/plant.sh [FLAVOUR]
set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
flavour=${1:-debug-rt}
[[ $# -le 1 && $flavour != -* ]] || { echo "usage: scripts/plant.sh [FLAVOUR]   (default debug-rt)" >&2; exit 2; }
out=$top/build/$flavour
if [[ ! -f $out/src/Module.symvers || ! -f $out/guest/kwq.ko ]]; then
	"$top/scripts/build.sh" "$flavour" >/dev/null
fi
eval "$("$top/scripts/kernel.sh" "$flavour")"

desc="kwq_plant_rt (spinlock_t inside raw_spinlock_t) turns the $flavour console red"
fail() { echo "not ok 1 - $desc"; printf '#   %s\n' "$@"; echo "1..1"; exit 1; }

psrc=$out/plant-src
guest=$out/plant-guest
rm -rf "$psrc" "$guest"
mkdir -p "$psrc" "$guest"
cp -r "$top/scripts/plant" "$top/module" "$top/uapi" "$psrc/"
if ! make -C "$KWQ_KDIR" M="$psrc/plant" W=1 KBUILD_EXTRA_SYMBOLS="$out/src/Module.symvers" \
	modules >"$out/plant-build.log" 2>&1; then
	fail "the plant did not build against $KWQ_KDIR:" "$(tail -n 20 "$out/plant-build.log")"
fi
cp "$out/guest/kwq.ko" "$psrc/plant/kwq_plant_rt.ko" "$guest/"

status=0
"$top/scripts/vm-run.sh" --kernel "$KWQ_KERNEL" --files "$guest" --timeout 600 \
	--log "$out/plant-console.log" -- "$top/scripts/plant/guest.sh" \
	>"$out/plant.out" 2>&1 || status=$?
caught=$(grep -o -m1 -E '\[(lock-nesting|sleep-in-atomic)\] line' "$out/plant.out" || true)
if [[ $status -ne 90 || -z $caught ]]; then
	fail "expected exit 90 with [lock-nesting] or [sleep-in-atomic], got exit $status" \
		"console log: $out/plant-console.log" "$(grep KWQ-SPLAT: "$out/plant.out" | head -n 5)"
fi
echo "ok 1 - $desc: ${caught% line}"
grep -E '^KWQ-SPLAT: \[' "$out/plant.out" | head -n 5 | sed 's/^/#   /'
echo "1..1"
