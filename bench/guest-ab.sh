# shellcheck shell=sh
# In a guest booted by scripts/bench-ab.sh: each version's kwq.ko (./vN/)
# in turn, ./rounds times over, the same figures against each. Prints
# KWQB-AB VERSION ROUND FIGURE VALUE UNIT: instructions under -icount
# shift=0, else (./wall) wall-time figures as kwq_bench prints them.
B=./bin/kwq_bench
# shellcheck source=bench/guest-lib.sh
. ./guest-lib.sh
failed=0
FIGURES=$(cat ./figures)
ROUNDS=$(cat ./rounds)

# ab V R FIGURE COMMAND...: kwq_bench's KWQB lines, as instructions.
ab() {
	v=$1 r=$2 f=$3
	shift 3
	out=$("$@") || { echo "KWQB-FAIL $f v$v"; failed=1; return; }
	if [ -f ./wall ]; then
		echo "$out" | awk -v p="KWQB-AB $v $r " '$1 == "KWQB" && $2 !~ /\.cpu$/ {
			print p $2, $3, $4 }'
	else
		echo "$out" | as_insns "KWQB-AB $v $r "
	fi
}

# hops V R FIGURE N: kwq's add-after run of N keys and clock_nanosleep's
# of the same deadlines, each with the scheduler's, the timers' and kwq's
# events traced; prints each trace gzipped in base64 between KWQB-TRACE
# lines, for scripts/trace-hops.py on the host. The kernel's events come
# enabled from the boot (bench-ab.sh's trace_event=): enabling one at run
# time patches hot kernel text (the scheduler's) under the other vCPU's
# feet, which once left a TCG guest with a vCPU stuck in __schedule().
# Only kwq_fire, in the freshly loaded kwq.ko, is enabled here, and runs
# switch the ring buffer on and off.
T=/sys/kernel/tracing
case " $FIGURES " in
*" hops"*)
	# The boot's events record nothing until a hops run.
	if ! { { [ -d $T/events ] || mount -t tracefs none $T; } &&
		echo 0 > $T/tracing_on && echo 65536 > $T/buffer_size_kb; }; then
		echo "KWQB-FAIL tracefs"
		failed=1
	fi ;;
esac
hops() {
	if ! echo 1 > $T/events/kwq/kwq_fire/enable; then
		echo "KWQB-FAIL $3 v$1"
		failed=1
		return
	fi
	for w in kwq base; do
		echo > $T/trace
		echo 1 > $T/tracing_on
		cmd=delay
		[ $w = kwq ] || cmd=delay-base
		$B $cmd "$4" 100 "$2" > /dev/null || { echo "KWQB-FAIL $3 v$1"; failed=1; }
		echo 0 > $T/tracing_on
		echo "KWQB-TRACE-BEGIN $1 $2 $3 $w"
		gzip -c $T/trace | base64
		echo "KWQB-TRACE-END"
	done
	echo > $T/trace
}

r=0
while [ "$r" -lt "$ROUNDS" ]; do
	r=$((r + 1))
	for d in ./v*; do
		v=${d#./v}
		insmod "$d/kwq.ko" max_items_per_queue=2000000 || exit 1
		insmod "$d/kwq_bench.ko" || exit 1
		for f in $FIGURES; do
			case $f in
			floor) ab "$v" "$r" floor $B floor 100000 ;;
			ops) ab "$v" "$r" ops $B ops 40 500 ;;
			dup) ab "$v" "$r" dup $B dup 100000 ;;
			cycle1) ab "$v" "$r" cycle1 $B cycle1 20000 ;;
			cycle1dg) ab "$v" "$r" cycle1dg $B cycle1dg 20000 ;;
			batch64) ab "$v" "$r" batch64 $B batch1 64 40960 ;;
			batch512) ab "$v" "$r" batch512 $B batch1 512 40960 ;;
			hot64i) ab "$v" "$r" hot64i $B dedup 1000 1 1 40960 64 ;;
			kernel) ab "$v" "$r" kernel kernel kernel.1t "cycle 100000" ;;
			kernelprio) ab "$v" "$r" kernelprio kernel kernel.1t.prio "prio-cycle 100000" ;;
			kernel1p1c) ab "$v" "$r" kernel1p1c kernel kernel.1p1c "pc 100000 1 1" ;;
			kernel2p2c) ab "$v" "$r" kernel2p2c kernel kernel.2p2c "pc 100000 2 2" ;;
			cycle1p1c) ab "$v" "$r" cycle1p1c $B cycle 1 1 20000 ;;
			hot64) ab "$v" "$r" hot64 $B dedup 1000 2 2 50000 64 ;;
			scalew) ab "$v" "$r" scalew $B scale-wait 1000000 "$r" ;;
			delay1k) ab "$v" "$r" delay1k $B delay 1000 100 "$r" light ;;
			delay1kbase) ab "$v" "$r" delay1kbase $B delay-base 1000 100 "$r" light ;;
			delay10k) ab "$v" "$r" delay10k $B delay 10000 100 "$r" ;;
			delay10kbase) ab "$v" "$r" delay10kbase $B delay-base 10000 100 "$r" ;;
			delay1kloaded) ab "$v" "$r" delay1kloaded loaded $B delay 1000 100 "$r" loaded ;;
			delay1kloadedbase) ab "$v" "$r" delay1kloadedbase loaded $B delay-base 1000 100 "$r" loaded ;;
			delay1kquiet) ab "$v" "$r" delay1kquiet $B delay 1000 100 "$r" quiet1k 400 ;;
			delay10kquiet) ab "$v" "$r" delay10kquiet $B delay 10000 100 "$r" quiet10k 400 ;;
			hops1k) hops "$v" "$r" hops1k 1000 ;;
			hops10k) hops "$v" "$r" hops10k 10000 ;;
			*) echo "KWQB-FAIL unknown figure $f"; failed=1 ;;
			esac
		done
		# With --perf, profiles in instructions, in the first round.
		if [ "$r" = 1 ] && [ -f ./perf-args ]; then
			echo 0 > /proc/sys/kernel/kptr_restrict
			while read -r args; do
				echo "KWQB-PERF-BEGIN v$v $args"
				# shellcheck disable=SC2086 # the arguments are words
				case $args in
				"kernel "*) set -- sh -c "echo '${args#kernel }' > $DBG" ;;
				*) set -- $B $args ;;
				esac
				./perf/run record -a -q -F 20000 -e cpu-clock -o /tmp/perf.data -- "$@" \
					>/dev/null 2>&1
				./perf/run report -i /tmp/perf.data --stdio --no-children --sort sym \
					--percent-limit 0.05 2>/dev/null | grep -v -e "^#" -e "^$" | head -n 200
				echo "KWQB-PERF-END"
				rm -f /tmp/perf.data
			done < ./perf-args
		fi
		rmmod kwq_bench && rmmod kwq || failed=1
	done
done
echo "KWQB-DONE failed=$failed"
exit $failed
