# shellcheck shell=sh
# Sourced by the benchmark guests (guest-bench.sh, guest-icount.sh,
# guest-ab.sh), which run from /kwq: kwq_bench.ko's runs, and kwq_bench's
# result lines read as instruction counts under -icount.
DBG=/sys/kernel/debug/kwq_bench/run

# loaded COMMAND...: run COMMAND with a CPU-bound busy loop per vCPU
# beside it (plain SCHED_OTHER processes), stopped when it ends.
# shellcheck disable=SC2317 # called through the guests' wrappers
loaded() {
	pids=""
	i=0
	ncpu=$(grep -c '^processor' /proc/cpuinfo)
	while [ "$i" -lt "$ncpu" ]; do
		sh -c 'while :; do :; done' &
		pids="$pids $!"
		i=$((i + 1))
	done
	st=0
	"$@" || st=$?
	# shellcheck disable=SC2086 # a list of pids
	kill $pids
	# shellcheck disable=SC2086
	wait $pids 2>/dev/null
	return "$st"
}

# kernel NAME COMMAND: one run of kwq_bench.ko, reported like kwq_bench's
# figures (KWQB NAME RATE keys/s).
# shellcheck disable=SC2317 # called through the guests' wrappers
kernel() {
	echo "$2" > "$DBG" || return 1
	out=$(cat "$DBG")
	rate=$(echo "$out" | sed -n 's/.*keys_per_s=\([0-9]*\).*/\1/p')
	[ -n "$rate" ] || { echo "kwq_bench.ko: $out" >&2; return 1; }
	echo "KWQB $1 $rate keys/s"
}

# as_insns PREFIX: the KWQB NAME VALUE UNIT lines on stdin as
# "PREFIXNAME INSTRUCTIONS UNIT". Under -icount shift=0 a nanosecond is an
# instruction; a rate becomes instructions per key; CPU times and rates
# kept beside a time are left out.
as_insns() {
	awk -v p="$1" '$1 == "KWQB" && $2 !~ /\.(cpu|rate)$/ {
		v = $3; u = $4
		if (u == "keys/s") { v = 1e9 / v; u = "insn/key" }
		else if (u == "adds/s") { v = 1e9 / v; u = "insn/add" }
		else sub(/^ns/, "insn", u)
		printf "%s%s %.6g %s\n", p, $2, v, u
	}'
}
