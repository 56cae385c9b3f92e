# shellcheck shell=sh
# In a guest booted with -icount shift=0 (scripts/vm-run.sh --icount): the
# guest's clock advances one nanosecond per instruction, so every time
# kwq_bench measures is an instruction count, the same from run to run.
# Runs the single-thread measurements and prints them as KWQB ic.* lines
# in instructions per call or per key (rates are turned into per key).
# shellcheck source=/dev/null
. ./bench.conf
: "${REPS:=3}" "${N_FLOOR:=100000}" "${N_CYCLE:=20000}" "${N_BATCH:=40000}" "${PERF:=0}"
: "${N_KERNEL:=100000}"

failed=0
B=./bin/kwq_bench

# shellcheck source=bench/guest-lib.sh
. ./guest-lib.sh

# run COMMAND...: one measurement, its figures renamed ic.* in instructions.
run() {
	out=$("$@") || { echo "KWQB-FAIL ic.$2"; failed=1; return; }
	echo "$out" | as_insns "KWQB ic."
}

echo "KWQB-INFO icount_cpus $(grep -c '^processor' /proc/cpuinfo)"
insmod ./kwq.ko max_items_per_queue=2000000 || exit 1
insmod ./kwq_bench.ko || exit 1
r=1
while [ $r -le "$REPS" ]; do
	echo "KWQB-ROUND icount-$r"
	run $B floor "$N_FLOOR"
	run $B cycle1 "$N_CYCLE"
	run $B cycle1dg "$N_CYCLE"
	run $B ops $((N_CYCLE / 500)) 500
	for b in 1 8 64 512; do
		run $B batch1 $b "$N_BATCH"
	done
	run $B mq1 "$N_CYCLE"
	run ./bin/kwq-gobench cycle1 "$N_CYCLE"
	run ./bin/kwq-gobench cycle1dg "$N_CYCLE"
	run ./bin/kwq-gobench batch1 64 "$N_BATCH"
	# A plain queue's in-kernel cycle against a priority queue's (all 16 levels in turn).
	run kernel kernel.1t "cycle $N_KERNEL"
	run kernel kernel.1t.prio "prio-cycle $N_KERNEL"
	r=$((r + 1))
done

# Where the instructions go: with -icount the cpu-clock samples are spaced
# in instructions, so this flat profile counts instructions, not time.
if [ "$PERF" = 1 ] && [ -x ./perf/run ]; then
	echo 0 > /proc/sys/kernel/kptr_restrict
	echo -1 > /proc/sys/kernel/perf_event_paranoid
	echo "KWQB-PERF-BEGIN icount.cycle.1t (instructions)"
	./perf/run record -q -F 20000 -e cpu-clock -o /tmp/perf.data -- $B cycle1 "$N_CYCLE" \
		>/dev/null 2>&1
	./perf/run report -i /tmp/perf.data --stdio --no-children --sort sym \
		--percent-limit 0.5 2>/dev/null | grep -v -e '^#' -e '^$' | head -n 60
	echo "KWQB-PERF-END icount.cycle.1t"
	rm -f /tmp/perf.data
fi

rmmod kwq_bench || failed=1
rmmod kwq || failed=1
echo "KWQB-DONE failed=$failed"
exit $failed
