#!/usr/bin/env bash
# Instruction counts of two or more versions of kwq in one boot: an A/B.
#   scripts/bench-ab.sh [--perf "ARGS"] [--wall ROUNDS] REV... [-- FIGURE...]
# REV is a git revision, or "work" for the working tree. Each version's
# kwq.ko and kwq_bench.ko are built for Debian's stock kernel; one guest
# under -icount shift=0 (1 vCPU: its clock counts instructions) loads
# them in turn, twice over, and runs the same single-thread figures of
# kwq_bench (from the working tree) against each. FIGUREs (default: all)
# are floor ops dup cycle1 cycle1dg batch64 batch512 kernel; delay1k and
# delay10k (add-after lateness, 1,000 or 10,000 keys over 100 ms) and
# delay1kbase and delay10kbase (the same deadlines slept by
# clock_nanosleep) are asked for by name: under -icount their lateness is
# the instructions run from the deadline to the consumer's clock read, in
# virtual µs (1,000 instructions each); hot64i (hot64's 1,000 hot keys
# with one producer adding 64-key batches and one consumer, in
# instructions per add) too, and kernelprio (kernel's cycle on a
# priority queue, its adds at all 16 priorities in turn). Prints a table of
# instructions per call or key, one column per version, and writes
# build/ab/table.txt. The two rounds agree to a few instructions; a
# difference larger than that is the change's. --perf "ARGS[;ARGS...]"
# then profiles `kwq_bench ARGS` (e.g. "dup 200000"), or with "kernel CMD"
# kwq_bench.ko's CMD (e.g. "kernel cycle 100000"), against each version,
# in instructions (build/ab/perf-vN.txt); it needs the host's perf.
# --wall ROUNDS boots 2 vCPUs without -icount instead and runs the
# versions in turn ROUNDS times, in wall time, with the median last: for
# figures of two or more threads (kernel1p1c kernel2p2c cycle1p1c hot64),
# which instructions do not measure, and scalew (add-after with 1k to 1M
# keys waiting); delay1kloaded and delay1kloadedbase are delay1k and
# delay1kbase with a CPU-bound loop per vCPU running beside them;
# delay1kquiet and delay10kquiet are delay1k and delay10k
# with every deadline 400 ms later, so that the producer's adds are over
# before the first one; hops1k and hops10k trace one run of delay1k or
# delay10k and one of its clock_nanosleep baseline each round, and split
# their lateness into hops (scripts/trace-hops.py; build/ab/hops-*.txt).
# Wall times under TCG move with the
# host's load; rounds of the versions alternate so that both see it.
set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$top"
say() { printf 'bench-ab: %s\n' "$*" >&2; }

revs=() figs=() perf="" wall=0
while [[ ${1:-} == --perf || ${1:-} == --wall ]]; do
	if [[ $1 == --perf ]]; then
		perf=${2:?--perf needs kwq_bench arguments}
	else
		wall=${2:?--wall needs a number of rounds}
	fi
	shift 2
done
while [[ $# -gt 0 && $1 != -- ]]; do revs+=("$1"); shift; done
[[ $# -eq 0 ]] || { shift; figs=("$@"); }
((${#revs[@]} >= 1)) || { echo "usage: scripts/bench-ab.sh REV... [-- FIGURE...]" >&2; exit 2; }
((${#figs[@]})) || figs=(floor ops dup cycle1 cycle1dg batch64 batch512 kernel)

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
if ((wall)); then
	echo "$wall" >"$out/files/rounds"
	touch "$out/files/wall"
else
	echo 2 >"$out/files/rounds"
fi
if [[ -n $perf ]]; then
	scripts/perf-pack.sh "$out/files/perf" || { say "--perf needs /usr/bin/perf on the host"; exit 1; }
	tr ';' '\n' <<<"$perf" >"$out/files/perf-args"
fi

if ((wall)); then
	say "booting 2 vCPUs: ${#revs[@]} versions, $wall rounds in wall time"
	vm=(--smp 2 --mem 2048)
	# The hops figures' events, on from the boot (bench/guest-ab.sh says why).
	if [[ " ${figs[*]} " == *" hops"* ]]; then
		vm+=(--append "trace_event=irq_vectors:local_timer_entry,irq_vectors:local_timer_exit,irq_vectors:call_function_single_entry,timer:hrtimer_expire_entry,timer:hrtimer_start,sched:sched_waking,sched:sched_wakeup,sched:sched_switch,raw_syscalls:sys_enter,raw_syscalls:sys_exit")
	fi
else
	say "booting with -icount: ${#revs[@]} versions, 2 rounds"
	vm=(--icount --smp 1 --mem 1024)
fi
scripts/vm-run.sh "${vm[@]}" --kernel "$KWQ_KERNEL" --files "$out/files" \
	--timeout 3000 --log "$out/console.log" -- "$out/files/guest-ab.sh" >"$out/guest.out" ||
	{ tail -20 "$out/guest.out" >&2; say "the guest failed; see $out/console.log"; exit 1; }

# KWQB-AB VERSION ROUND FIGURE VALUE UNIT -> one row per figure, the
# rounds' values side by side per version.
awk -v n="$i" '
	$1 == "KWQB-AB" { k = $4; if (!(k in seen)) { seen[k] = 1; order[++m] = k }
		v[k, $2] = v[k, $2] (v[k, $2] == "" ? "" : "/") sprintf($6 == "us" ? "%.3f" : "%.0f", $5); unit[k] = $6
		c = ++cnt[k, $2]; x[k, $2, c] = $5 }
	# The median of a version'"'"'s rounds (insertion sort: a few values).
	function median(k, j,   c, a, b, t) {
		c = cnt[k, j]
		for (a = 1; a <= c; a++) s[a] = x[k, j, a]
		for (a = 2; a <= c; a++)
			for (b = a; b > 1 && s[b - 1] > s[b]; b--) { t = s[b]; s[b] = s[b - 1]; s[b - 1] = t }
		return c % 2 ? s[(c + 1) / 2] : (s[c / 2] + s[c / 2 + 1]) / 2
	}
	END {
		printf "%-28s %-10s", "figure (rounds)", "unit"
		for (j = 0; j < n; j++) printf " %18s", "v" j
		if (wall) for (j = 0; j < n; j++) printf " %12s", "median v" j
		printf "\n"
		for (r = 1; r <= m; r++) {
			k = order[r]; printf "%-28s %-10s", k, unit[k]
			for (j = 0; j < n; j++) printf " %18s", v[k, j]
			if (wall) for (j = 0; j < n; j++) printf " %12.0f", median(k, j)
			printf "\n"
		}
	}' wall="$wall" "$out/guest.out" >"$out/table.txt"
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
# The hops figures' traces: decoded, and split into hops (trace-hops.py).
awk '$1 == "KWQB-TRACE-BEGIN" { print $2, $3, $4 }' "$out/guest.out" | sort -u |
	while read -r v r f; do
		ok=1
		for w in kwq base; do
			# Only base64 lines: kernel messages may come between them.
			awk -v k="KWQB-TRACE-BEGIN $v $r $f $w" '$0 == "KWQB-TRACE-END" { p = 0 }
				p && /^[A-Za-z0-9+\/=]+$/ { print } $0 == k { p = 1 }' "$out/guest.out" |
				base64 -d 2>/dev/null | gunzip >"$out/trace-v$v-$r-$f-$w.txt" 2>/dev/null || ok=0
		done
		echo "v$v round $r, $f: add-after lateness hop by hop (traced)"
		if ((ok)); then
			scripts/trace-hops.py "$out/trace-v$v-$r-$f-kwq.txt" \
				"$out/trace-v$v-$r-$f-base.txt" | tee "$out/hops-v$v-$r-$f.txt" ||
				echo "  (trace-hops.py failed on these traces)"
		else
			echo "  (a trace could not be decoded; see $out/guest.out)"
		fi
	done
ls "$out"/perf-v*.txt 2>/dev/null || true
