#!/usr/bin/env bash
# Build kwq's modules against one test kernel and gather what the guest
# needs into build/<flavour>/guest: the .ko files and static binaries in
# bin/, and kernel-checkers: the checkers the kernel's .config enables
# (lockdep kmemleak kasan kcsan kunit failslab), which the guest asserts are
# still on at the end. Prints that directory's path on stdout.
# Usage: scripts/build.sh [--demo] FLAVOUR   (see scripts/kernel.sh)
# --demo (make demo): only what scripts/guest/demo.sh runs (the modules,
# kwqctl, kwq_sample_test), without sparse, the tests or Go, so that it
# needs only scripts/deps.sh demo's packages.
set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
demo=0
if [[ ${1:-} == --demo ]]; then
	demo=1
	shift
fi
flavour=${1:?usage: scripts/build.sh [--demo] stock|stock-6.12|rt-6.12|stock-sid|rt-sid|debug|debug-rt}
eval "$("$top/scripts/kernel.sh" "$flavour")"

out=$top/build/$flavour
src=$out/src
guest=$out/guest
# Kbuild writes objects beside the sources, so each kernel gets its copy.
rm -rf "$src" "$guest"
mkdir -p "$src" "$guest/bin"
cp -r "$top/Kbuild" "$top/module" "$top/kunit" "$top/uapi" "$top/samples" "$src/"
# W=1 and sparse (C=2), and any warning fails: against the debug kernels
# this also covers the KUnit modules, KASAN's larger stack frames, and
# sparse's lock-context checks with lockdep's and PREEMPT_RT's locks.
# A kernel of the sid root is built there, by its own compiler, on a copy
# of the sources inside the root.
sparse=(C=2)
((demo == 0)) || sparse=()
kbuild() { make -j"$(nproc)" -C "$KWQ_KDIR" M="$src" W=1 "${sparse[@]}" modules; }
if [[ -n $KWQ_ROOT ]]; then
	kbuild() {
		local in=/tmp/kwq-build-$flavour
		rm -rf "$KWQ_ROOT$in" && cp -r "$src" "$KWQ_ROOT$in" &&
			"$top/scripts/sid-root.sh" run make -j"$(nproc)" -C "$KWQ_KDIR" M="$in" W=1 C=2 modules &&
			rm -rf "$src" && cp -r "$KWQ_ROOT$in" "$src" && rm -rf "${KWQ_ROOT:?}$in"
	}
fi
if ! kbuild >"$out/build.log" 2>&1 || grep -E 'warning:' "$out/build.log" >&2; then
	tail -40 "$out/build.log" >&2
	echo "build.sh: module build against $KWQ_ROOT$KWQ_KDIR failed or warned" >&2
	exit 1
fi
find "$src" -name '*.ko' -exec cp {} "$guest/" \;

if ((demo)); then
	make -s -j"$(nproc)" -C "$top/userspace" O="$top/build/user" \
		"$top/build/user/kwqctl" "$top/build/user/kwq_sample_test" >&2
	cp "$top/build/user/kwqctl" "$top/build/user/kwq_sample_test" "$guest/bin/"
	cp "$top/scripts/guest/"*.sh "$guest/"
	echo "$guest"
	exit 0
fi
make -s -j"$(nproc)" -C "$top/userspace" O="$top/build/user" >&2
for b in kwqctl kwq_abi_test kwq_abi_test32 kwq_batch_test kwq_batch_test32 kwq_done_get_test \
	kwq_done_get_test32 kwq_handout_test kwq_handout_test32 kwq_access_test kwq_access_test32 \
	kwq_fuzz kwq_fuzz32 kwq_faults kwq_sample_test \
	kwq_timens_test kwq_timens_test32 kwq_limits_test kwq_limits_test32 \
	kwq_debounce_test kwq_debounce_test32 kwq_add_ex_test kwq_add_ex_test32 \
	kwq_priority_test kwq_priority_test32 kwq_payload_test kwq_payload_test32 \
	kwq_tenant_test kwq_tenant_test32 kwq_scope_test kwq_scope_test32 kwq_clock_test kwq_clock_test32; do
	cp "$top/build/user/$b" "$guest/bin/"
done
# Go bindings: static test, example and benchmark binaries (scripts/go.sh);
# the same for every kernel, so make check builds them once and names
# the directory in KWQ_GO_BUILT.
if [[ -n ${KWQ_GO_BUILT:-} ]]; then
	cp "$KWQ_GO_BUILT"/* "$guest/bin/"
else
	"$top/scripts/go.sh" build "$guest" >&2
fi
cp "$top/scripts/guest/"*.sh "$guest/"
for c in PROVE_LOCKING:lockdep DEBUG_KMEMLEAK:kmemleak KASAN:kasan KCSAN:kcsan KUNIT:kunit FAILSLAB:failslab; do
	if grep -qx "CONFIG_${c%%:*}=y" "$KWQ_ROOT$KWQ_KDIR/.config"; then
		echo "${c#*:}"
	fi
done >"$guest/kernel-checkers"
# Which of make check's kernels this is (scripts/guest/go.sh reads it).
echo "$flavour" >"$guest/flavour"
echo "$guest"
