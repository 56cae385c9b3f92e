#!/usr/bin/env bash
# Expected-red check: prove that a kernel's checkers catch a call from a
# context kwq rules out. Boots FLAVOUR (default debug-rt) with kwq.ko and
# one plant module:
#   rt   scripts/plant/kwq_plant_rt.ko calls kwq_add_atomic() (the queue's
#        spinlock_t, a sleeping lock on RT) inside a raw_spinlock_t
#        section; passes only if scripts/check-console.sh flags the console
#        as [lock-nesting] ("Invalid wait context") or [sleep-in-atomic]
#        ("sleeping function called from invalid context").
#   irq  scripts/plant/kwq_plant_irq.ko calls kwq_add_atomic() with
#        interrupts disabled; passes only if the console shows the WARNING
#        of kwq_lock()'s lockdep_assert_irqs_enabled() (at kwq_internal.h).
#   hard kwq.ko rebuilt with its queue timer marked HRTIMER_MODE_ABS_HARD
#        (KWQ_TIMER_MODE), and scripts/plant/kwq_plant_hard.ko, which has a
#        deadline wake a sleeping consumer; passes only if the console
#        shows lockdep's "Invalid wait context" ([lock-nesting]) at a
#        wake-up from the timer (raw-lock nesting, as on the debug kernel).
# Prints one TAP line; exits 0 when the plant was caught, 1 when not.
# Reuses build/FLAVOUR/ from scripts/build.sh (runs it if missing).
# Usage: scripts/plant.sh [FLAVOUR [rt|irq|hard]]
set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
flavour=${1:-debug-rt}
plant=${2:-rt}
[[ $# -le 2 && $flavour != -* && $plant =~ ^(rt|irq|hard)$ ]] ||
	{ echo "usage: scripts/plant.sh [FLAVOUR [rt|irq|hard]]   (default debug-rt rt)" >&2; exit 2; }
out=$top/build/$flavour
if [[ ! -f $out/src/Module.symvers || ! -f $out/guest/kwq.ko ]]; then
	"$top/scripts/build.sh" "$flavour" >/dev/null
fi
eval "$("$top/scripts/kernel.sh" "$flavour")"

if [[ $plant == rt ]]; then
	desc="kwq_plant_rt (spinlock_t inside raw_spinlock_t) turns the $flavour console red"
	want='\[(lock-nesting|sleep-in-atomic)\] line'
elif [[ $plant == irq ]]; then
	desc="kwq_plant_irq (kwq_add_atomic() with interrupts off) trips kwq_lock()'s assertion on $flavour"
	want='WARNING: .*kwq_internal\.h'
else
	desc="kwq's timer planted back to HRTIMER_MODE_ABS_HARD turns the $flavour console red"
	want='\[lock-nesting\] line'
fi
fail() { echo "not ok 1 - $desc"; printf '#   %s\n' "$@"; echo "1..1"; exit 1; }

psrc=$out/plant-$plant-src
guest=$out/plant-$plant-guest
rm -rf "$psrc" "$guest"
mkdir -p "$psrc" "$guest"
cp -r "$top/scripts/plant" "$top/module" "$top/uapi" "$psrc/"
if ! make -C "$KWQ_KDIR" M="$psrc/plant" W=1 KBUILD_EXTRA_SYMBOLS="$out/src/Module.symvers" \
	modules >"$out/plant-build.log" 2>&1; then
	fail "the plant did not build against $KWQ_KDIR:" "$(tail -n 20 "$out/plant-build.log")"
fi
if [[ $plant == hard ]]; then
	# The plant: the line that gives the queue's timer its mode, marked hard.
	sed -i 's/^#define KWQ_TIMER_MODE\tHRTIMER_MODE_ABS$/#define KWQ_TIMER_MODE\tHRTIMER_MODE_ABS_HARD/' \
		"$psrc/module/kwq_internal.h"
	grep -q 'KWQ_TIMER_MODE.HRTIMER_MODE_ABS_HARD$' "$psrc/module/kwq_internal.h" ||
		fail "the plant did not apply: no '#define KWQ_TIMER_MODE<tab>HRTIMER_MODE_ABS' in module/kwq_internal.h"
	make -C "$KWQ_KDIR" M="$psrc/module" modules >"$out/plant-kwq-build.log" 2>&1 ||
		fail "the planted kwq.ko did not build:" "$(tail -n 20 "$out/plant-kwq-build.log")"
	cp "$psrc/module/kwq.ko" "$guest/"
else
	cp "$out/guest/kwq.ko" "$guest/"
fi
cp "$psrc/plant/kwq_plant_$plant.ko" "$guest/"

status=0
"$top/scripts/vm-run.sh" --kernel "$KWQ_KERNEL" --files "$guest" --timeout 600 \
	--log "$out/plant-$plant-console.log" -- "$top/scripts/plant/guest.sh" \
	>"$out/plant-$plant.out" 2>&1 || status=$?
caught=$(grep -h -o -m1 -E "$want" "$out/plant-$plant.out" "$out/plant-$plant-console.log" | head -n 1 || true)
if [[ $status -ne 90 || -z $caught ]]; then
	fail "expected exit 90 and /$want/, got exit $status" \
		"console log: $out/plant-$plant-console.log" \
		"$(grep KWQ-SPLAT: "$out/plant-$plant.out" | head -n 5)"
fi
echo "ok 1 - $desc: ${caught% line}"
grep -E '^KWQ-SPLAT: \[' "$out/plant-$plant.out" | head -n 5 | sed 's/^/#   /'
echo "1..1"
