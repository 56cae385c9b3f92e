#!/usr/bin/env bash
# Instruction counts of two or more versions of kwq in one boot: an A/B.
#   scripts/bench-ab.sh [--perf "ARGS"] REV... [-- FIGURE...]
# REV is a git revision, or "work" for the working tree. Each version's
# kwq.ko and kwq_bench.ko are built for Debian's stock kernel; one guest
# under -icount shift=0 (1 vCPU: its clock counts instructions) loads
# them in turn, twice over, and runs the same single-thread figures of
# kwq_bench (from the working tree) against each. FIGUREs (default: all)
# are floor ops cycle1 cycle1dg batch64 batch512 kernel. Prints a table of
# instructions per call or key, one column per version, and writes
# build/ab/table.txt. The two rounds agree to a few instructions; a
# difference larger than that is the change's. --perf "ARGS[;ARGS...]"
# then profiles `kwq_bench ARGS` (e.g. "dup 200000"), or with "kernel CMD"
# kwq_bench.ko's CMD (e.g. "kernel cycle 100000"), against each version,
# in instructions (build/ab/perf-vN.txt); it needs the host's perf.
set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$top"
say() { printf 'bench-ab: %s\n' "$*" >&2; }

revs=() figs=() perf=""
if [[ ${1:-} == --perf ]]; then
	perf=${2:?--perf needs kwq_bench arguments}
	shift 2
fi
while [[ $# -gt 0 && $1 != -- ]]; do revs+=("$1"); shift; done
[[ $# -eq 0 ]] || { shift; figs=("$@"); }
((${#revs[@]} >= 1)) || { echo "usage: scripts/bench-ab.sh REV... [-- FIGURE...]" >&2; exit 2; }
((${#figs[@]})) || figs=(floor ops cycle1 cycle1dg batch64 batch512 kernel)

scripts/deps.sh
eval "$(scripts/kernel.sh stock)"
out=$top/build/ab
rm -rf "$out"
mkdir -p "$out/files/bin" "$out/obj"

# build NAME TREE: kwq.ko and kwq_bench.ko of the sources in TREE.
build() {
	local name=$1 tree=$2 dst=$out/files/v$1
	mkdir -p "$dst"
	if ! { make -j"$(nproc)" -C "$KWQ_KDIR" M="$tree/module" modules &&
		make -C "$KWQ_KDIR" M="$tree/bench" \
			KBUILD_EXTRA_SYMBOLS="$tree/module/Module.symvers" modules; } \
		>"$out/build-$name.log" 2>&1; then
		tail -20 "$out/build-$name.log" >&2
		say "build of $name failed"
		exit 1
	fi
	cp "$tree/module/kwq.ko" "$tree/bench/kwq_bench.ko" "$dst/"
}

i=0
for rev in "${revs[@]}"; do
	tree=$out/src/$i
	mkdir -p "$tree"
	if [[ $rev == work ]]; then
		cp -r module uapi bench "$tree/"
	else
		git archive "$rev" module uapi bench | tar -x -C "$tree"
	fi
	say "building $rev"
	build "$i" "$tree"
	echo "$rev" >"$out/files/v$i/name"
	i=$((i + 1))
done
make -s -C bench O="$out/obj" >&2
cp "$out/obj/kwq_bench" "$out/files/bin/"
cp bench/guest-ab.sh bench/guest-lib.sh "$out/files/"
echo "${figs[*]}" >"$out/files/figures"
if [[ -n $perf ]]; then
	scripts/perf-pack.sh "$out/files/perf" || { say "--perf needs /usr/bin/perf on the host"; exit 1; }
	tr ';' '\n' <<<"$perf" >"$out/files/perf-args"
fi

say "booting with -icount: ${#revs[@]} versions, 2 rounds"
scripts/vm-run.sh --icount --kernel "$KWQ_KERNEL" --files "$out/files" --smp 1 --mem 1024 \
	--timeout 1500 --log "$out/console.log" -- "$out/files/guest-ab.sh" >"$out/guest.out" ||
	{ tail -20 "$out/guest.out" >&2; say "the guest failed; see $out/console.log"; exit 1; }

# KWQB-AB VERSION ROUND FIGURE VALUE UNIT -> one row per figure, the
# rounds' values side by side per version.
awk -v n="$i" '
	$1 == "KWQB-AB" { k = $4; if (!(k in seen)) { seen[k] = 1; order[++m] = k }
		v[k, $2] = v[k, $2] (v[k, $2] == "" ? "" : "/") sprintf("%.0f", $5); unit[k] = $6 }
	END {
		printf "%-28s %-10s", "figure (round 1/round 2)", "unit"
		for (j = 0; j < n; j++) printf " %18s", "v" j
		printf "\n"
		for (r = 1; r <= m; r++) {
			k = order[r]; printf "%-28s %-10s", k, unit[k]
			for (j = 0; j < n; j++) printf " %18s", v[k, j]
			printf "\n"
		}
	}' "$out/guest.out" >"$out/table.txt"
for ((j = 0; j < i; j++)); do
	r=${revs[j]}
	if [[ $r == work ]]; then
		echo "v$j: the working tree (on $(git rev-parse --short HEAD))"
	else
		echo "v$j: $r ($(git rev-parse --short "$r"))"
	fi
done >>"$out/table.txt"
for ((j = 0; j < i; j++)); do
	sed -n "/^KWQB-PERF-BEGIN v$j /,/^KWQB-PERF-END/p" "$out/guest.out" >"$out/perf-v$j.txt"
	[[ -s $out/perf-v$j.txt ]] || rm "$out/perf-v$j.txt"
done
cat "$out/table.txt"
ls "$out"/perf-v*.txt 2>/dev/null || true
