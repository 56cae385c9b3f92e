# shellcheck shell=sh
# In the test guest (busybox sh, cwd /kwq): every kwq benchmark, in one
# boot. Prints KWQB lines (see bench/kwq_bench.c) that scripts/bench.sh
# turns into the table, results.csv and the plots. Sizes and repetitions
# come from ./bench.conf, written by scripts/bench.sh.
# shellcheck source=/dev/null
. ./bench.conf
: "${REPS:=5}" "${SCALE_REPS:=3}" "${N_FLOOR:=100000}" "${N_CYCLE:=20000}"
: "${N_BATCH:=40000}" "${N_KERNEL:=100000}" "${N_DELAY:=10000}" "${DELAY_MAX_MS:=100}"
: "${N_SCALE:=1000000}" "${DEDUP_HOT:=1000}" "${DEDUP_ADDS:=50000}" "${PERF:=0}"
: "${N_HOLD:=65536}"

failed=0
B=./bin/kwq_bench
# shellcheck source=bench/guest-lib.sh
. ./guest-lib.sh

# step NAME COMMAND...: run one measurement, note its time and failure.
step() {
	name=$1
	shift
	t0=$(cut -d' ' -f1 /proc/uptime)
	if ! "$@"; then
		echo "KWQB-FAIL $name"
		failed=1
	fi
	t1=$(cut -d' ' -f1 /proc/uptime)
	echo "KWQB-TIME $name $(awk "BEGIN { printf \"%.2f\", $t1 - $t0 }")"
}

# cgo NAME ARGS...: kwq-cgo-bench's figure NAME (KWQB cg.* and cg.kwq.*)
# on client-go's queue and on kwq's, one after the other, client-go first
# in odd rounds and kwq first in even ones.
CG=./bin/kwq-cgo-bench
cgo() {
	cg_name=$1
	shift
	[ -x "$CG" ] || return 0
	if [ $((r % 2)) = 1 ]; then
		step "cg.$cg_name" "$CG" client-go "$@"
		step "cg.kwq.$cg_name" "$CG" kwq "$@"
	else
		step "cg.kwq.$cg_name" "$CG" kwq "$@"
		step "cg.$cg_name" "$CG" client-go "$@"
	fi
}

# paired KEY NAME COMMAND...: step NAME right after a floor of its own
# (KWQB pair.KEY.ioctl), for the targets judged in floor units: the ratio
# of KEY to the floor just before it moves less with the host's load than
# one to a floor a round apart (scripts/bench.sh, floors.KEY).
paired() {
	key=$1
	shift
	step "pair.$key" $B floor "$N_FLOOR" "pair.$key"
	step "$@"
}

echo "KWQB-INFO kernel $(uname -r)"
echo "KWQB-INFO cpus $(grep -c '^processor' /proc/cpuinfo)"
echo "KWQB-INFO cpu $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -n 1)"
echo "KWQB-INFO mem_kb $(sed -n 's/^MemTotal: *\([0-9]*\).*/\1/p' /proc/meminfo)"
echo "KWQB-INFO reps $REPS scale_reps $SCALE_REPS"
if [ -x "$CG" ]; then
	echo "KWQB-INFO client-go $(tr '\n' ' ' <./bin/kwq-cgo-versions)"
else
	echo "KWQB-INFO client-go-missing $(cat ./client-go-missing 2>/dev/null || echo "no $CG")"
fi

insmod ./kwq.ko max_items_per_queue=2000000 || exit 1
insmod ./kwq_bench.ko || exit 1
[ -w "$DBG" ] || { echo "no $DBG (debugfs not mounted?)"; exit 1; }
mkdir -p /dev/mqueue
mount -t mqueue none /dev/mqueue 2>/dev/null || true

# Rounds: each round runs every quick measurement once, so slow drift of
# the host hits all of them alike.
r=1
while [ $r -le "$REPS" ]; do
	echo "KWQB-ROUND $r"
	step floor $B floor "$N_FLOOR"
	step cycle.1t $B cycle1 "$N_CYCLE"
	step cycle.1t.dg $B cycle1dg "$N_CYCLE"
	step go.cycle.1t ./bin/kwq-gobench cycle1 "$N_CYCLE"
	step go.cycle.1t.dg ./bin/kwq-gobench cycle1dg "$N_CYCLE"
	step go.batch.1t.64 ./bin/kwq-gobench batch1 64 "$N_BATCH"
	step ops $B ops $((N_CYCLE / 500)) 500
	step payload $B payload $((N_CYCLE / 500)) 500
	step cycle.1p1c $B cycle 1 1 "$N_CYCLE"
	step cycle.2p2c $B cycle 2 2 "$N_CYCLE"
	step cycle.1p1c.dg $B cycle 1 1 "$N_CYCLE" dg
	step cycle.2p2c.dg $B cycle 2 2 "$N_CYCLE" dg
	for b in 1 8 64 512; do
		if [ "$b" = 64 ]; then
			paired batch.1t.64 batch.1t.64 $B batch1 64 "$N_BATCH"
		else
			step batch.1t.$b $B batch1 $b "$N_BATCH"
		fi
		step batch.1p1c.$b $B batch $b "$N_BATCH"
	done
	paired kernel.1t kernel.1t kernel kernel.1t "cycle $N_KERNEL"
	paired kernel.1p1c kernel.1p1c kernel kernel.1p1c "pc $N_KERNEL 1 1"
	step kernel.2p2c kernel kernel.2p2c "pc $N_KERNEL 2 2"
	# The same on a priority queue (adds at all 16 priorities in turn).
	step kernel.1t.prio kernel kernel.1t.prio "prio-cycle $N_KERNEL"
	step kernel.1p1c.prio kernel kernel.1p1c.prio "prio-pc $N_KERNEL 1 1"
	step mq.1t $B mq1 "$N_CYCLE"
	step mq.1p1c $B mq 1 1 "$N_CYCLE"
	step mq.2p2c $B mq 2 2 "$N_CYCLE"
	step dedup $B dedup "$DEDUP_HOT" 2 2 "$DEDUP_ADDS"
	paired dedup.b64.adds dedup.b64 $B dedup "$DEDUP_HOT" 2 2 "$DEDUP_ADDS" 64
	step delay $B delay "$N_DELAY" "$DELAY_MAX_MS" $r delay
	step delay-base $B delay-base "$N_DELAY" "$DELAY_MAX_MS" $r delay
	# A tenth of the keys: the consumer keeps up even under emulation.
	step delay.light $B delay $((N_DELAY / 10)) "$DELAY_MAX_MS" $r delay.light
	step delay-base.light $B delay-base $((N_DELAY / 10)) "$DELAY_MAX_MS" $r delay.light
	# The same 1/10 of the keys on a busy machine: a CPU-bound loop per
	# vCPU runs beside both, where a work queue usually lives.
	step delay.loaded loaded $B delay $((N_DELAY / 10)) "$DELAY_MAX_MS" $r delay.loaded
	step delay-base.loaded loaded $B delay-base $((N_DELAY / 10)) "$DELAY_MAX_MS" $r delay.loaded
	# client-go's queue beside kwq's, one Go program (kwq-cgo-bench).
	cgo cycle.1t cycle1 "$N_CYCLE"
	cgo cycle.1p1c cycle 1 1 "$N_CYCLE"
	cgo dedup dedup "$DEDUP_HOT" 2 2 "$DEDUP_ADDS"
	cgo delay delay "$N_DELAY" "$DELAY_MAX_MS" $r delay
	cgo delay.light delay $((N_DELAY / 10)) "$DELAY_MAX_MS" $r delay.light
	r=$((r + 1))
done

# Where add-after lateness comes from: the same runs once more with the
# kwq_fire and kwq_get events traced. kwq_fire's ns is how late the key's
# deadline was run (the timer path: the queue's hard hrtimer in the timer
# interrupt, its soft one in softirq, or with PREEMPT_RT a consumer's own
# hrtimer in its get); kwq_get's, how long the key then waited ready for
# the consumer's get. The shares run in hard and soft interrupt context
# say which timer ran them. Tracing slows both, so these rows say where, not
# how much.
T=/sys/kernel/tracing
# shellcheck disable=SC2317 # called through split
# pctl P FILE: the P-th percentile (nearest rank) of FILE's sorted numbers, in us.
pctl() {
	awk -v p="$1" 'NR == FNR { n++; next } FNR == int(p / 100 * n + 0.999999) || (FNR == 1 && n == 1) {
		printf "%.1f\n", $1 / 1000; exit }' "$2" "$2"
}
# shellcheck disable=SC2317 # called through step
split() {
	[ -d "$T"/events ] || mount -t tracefs none "$T" 2>/dev/null || return 1
	echo 16384 > "$T"/buffer_size_kb && echo > "$T"/trace || return 1
	echo 1 > "$T"/events/kwq/kwq_fire/enable && echo 1 > "$T"/events/kwq/kwq_get/enable || return 1
	$B delay "$1" "$DELAY_MAX_MS" 1 "delay.traced.$2" > /dev/null || return 1
	echo 0 > "$T"/events/kwq/enable
	sed -n 's/.* \[[0-9]*\] \([^ ]*\) .* kwq_fire: .* ns=\([0-9]*\)$/\1 \2/p' "$T"/trace > /tmp/fire
	sed -n 's/.* kwq_get: .* ns=\([0-9]*\)$/\1/p' "$T"/trace | sort -n > /tmp/ready
	cut -d' ' -f2 /tmp/fire | sort -n > /tmp/fire.ns
	if [ ! -s /tmp/fire.ns ] || [ ! -s /tmp/ready ]; then
		echo "split: nothing traced" >&2
		return 1
	fi
	echo "KWQB delay.split.$2.fire.p50 $(pctl 50 /tmp/fire.ns) us"
	echo "KWQB delay.split.$2.fire.p99 $(pctl 99 /tmp/fire.ns) us"
	echo "KWQB delay.split.$2.ready.p50 $(pctl 50 /tmp/ready) us"
	echo "KWQB delay.split.$2.ready.p99 $(pctl 99 /tmp/ready) us"
	echo "KWQB delay.split.$2.hardirq_pct $(awk '{ n++; if ($1 ~ /[hH]/) h++ } END { printf "%.1f", 100 * h / n }' /tmp/fire) %"
	echo "KWQB delay.split.$2.softirq_pct $(awk '{ n++; if ($1 !~ /[hH]/ && $1 ~ /s/) s++ } END { printf "%.1f", 100 * s / n }' /tmp/fire) %"
	echo > "$T"/trace
}
step delay-split.10k split "$N_DELAY" 10k
step delay-split.1k split $((N_DELAY / 10)) 1k

# The longest hold of a queue's lock by a walk over keys (at most 64
# keys), at the default item limit: timer, stats, shutdown.
# hold_max_keys/hold_max_ns are kwq's; 0 starts them over.
# shellcheck disable=SC2317 # called through step
hold() {
	echo 0 > /sys/module/kwq/parameters/hold_max_keys &&
		echo 0 > /sys/module/kwq/parameters/hold_max_ns || return 1
	echo "hold $N_HOLD" > "$DBG" || return 1
	out=$(cat "$DBG")
	case $out in mode=hold*) ;; *) echo "kwq_bench.ko: $out" >&2; return 1 ;; esac
	echo "KWQB-HOLD keys=$N_HOLD max_keys=$(cat /sys/module/kwq/parameters/hold_max_keys)" \
		"max_ns=$(cat /sys/module/kwq/parameters/hold_max_ns)"
}
step hold hold

r=1
while [ $r -le "$SCALE_REPS" ]; do
	echo "KWQB-ROUND scale-$r"
	step scale-wait $B scale-wait "$N_SCALE" $r
	step scale-queue $B scale-queue "$N_SCALE"
	cgo scale-wait scale-wait "$N_SCALE" $r
	cgo scale-queue scale-queue "$N_SCALE"
	r=$((r + 1))
done

# Where the time goes: flat system-wide profiles of some workloads, if
# scripts/bench.sh could bring perf along (software cpu-clock: TCG has no PMU).
# profile NAME COMMAND...
profile() {
	name=$1
	shift
	echo "KWQB-PERF-BEGIN $name"
	./perf/run record -q -a -e cpu-clock -o /tmp/perf.data -- "$@" >/dev/null 2>&1
	# Percentages of all samples, the idle loop (swapper) included.
	./perf/run report -i /tmp/perf.data --stdio --no-children --sort comm,sym \
		--percent-limit 1 2>/dev/null | grep -v -e '^#' -e '^$' | head -n 40
	echo "KWQB-PERF-END $name"
	rm -f /tmp/perf.data
}
if [ "$PERF" = 1 ] && [ -x ./perf/run ]; then
	echo 0 > /proc/sys/kernel/kptr_restrict
	echo -1 > /proc/sys/kernel/perf_event_paranoid
	profile cycle.1t $B cycle1 "$N_CYCLE"
	profile cycle.1p1c $B cycle 1 1 "$N_CYCLE"
	profile batch.1t.512 $B batch1 512 "$N_BATCH"
	profile kernel.1p1c sh -c "echo 'pc $N_KERNEL 1 1' > $DBG"
	profile delay.light $B delay $((N_DELAY / 10)) "$DELAY_MAX_MS" 1 delay.profiled
fi

rmmod kwq_bench || failed=1
rmmod kwq || failed=1
echo "KWQB-DONE failed=$failed"
exit $failed
