# shellcheck shell=sh
# In the guest, sourced by check.sh once kwq.ko is loaded (lib.sh sourced,
# cwd /kwq): kwq_sample.ko and user programs on the same named queues,
# in both directions, with user programs killed half-way. Leaves kwq.ko
# loaded and no kwq_sample. Variables are s_*, functions sample_*.

sample_param() { cat "/sys/module/kwq_sample/parameters/$1"; }


sample_param_is() { [ "$(sample_param "$1")" = "$2" ]; }

# sample_progress: the number in /tmp/s-progress, 0 if there is none yet.
sample_progress() {
	s_n=$(sed 's/^0*\([0-9]\)/\1/' /tmp/s-progress 2>/dev/null)
	echo "${s_n:-0}"
}
sample_progressed() { [ "$(sample_progress)" -gt 0 ]; }


# Nothing queued, processing or waiting.
sample_idle() {
	[ "$(queue_stat "$1" queued)/$(queue_stat "$1" processing)/$(queue_stat "$1" waiting)" = 0/0/0 ]
}

# sample_threads QUEUE: how many worker threads of that queue exist.
sample_threads() { cat /proc/[0-9]*/comm 2>/dev/null | grep -c "^kwq[0-9]*/$1\$"; }
sample_no_threads() { [ "$(sample_threads "$1")" -eq 0 ]; }

sample_loaded() { grep -q '^kwq_sample ' /proc/modules; }

if [ -f ./kwq_sample.ko ]; then
	tap_begin "sample-$(uname -r)"

	# --- A user program produces, the module consumes --------------------
	s_q=s-fwd
	./bin/kwqctl create $s_q --mode 0666 >/dev/null
	tap $? "a user program creates queue $s_q in its own scope"
	if insmod ./kwq_sample.ko queue=s-missing 2>/dev/null; then s_r=1; rmmod kwq_sample; else s_r=0; fi
	tap $s_r "insmod without create=1 fails for a queue that does not exist"
	if insmod ./kwq_sample.ko queue=$s_q 2>/dev/null; then s_r=1; rmmod kwq_sample; else s_r=0; fi
	tap $s_r "kwq_lookup() does not hand the module the user's $s_q (no squatting)"
	insmod ./kwq_sample.ko queue=$s_q create=1 workers=4 fail_every=5
	tap $? "kwq_sample makes its own $s_q in the kernel scope, 4 workers"
	[ "$(sample_threads $s_q)" -eq 4 ]
	tap $? "4 worker threads kwqN/$s_q run"
	if rmmod kwq 2>/dev/null; then s_r=1; else s_r=0; fi
	tap $s_r "rmmod kwq is refused while kwq_sample uses it"
	./bin/kwq_sample_test produce $s_q user 0 500 --kernel >/dev/null
	tap $? "a user program adds 500 keys"
	wait_for 60 sample_param_is handled 500
	tap $? "kwq_sample handles all 500 keys"
	# Every 5th handler call fails, and the last call of all succeeds, so
	# calls - calls/5 = 500 gives 624 calls, 124 of them failed and retried.
	[ "$(sample_param retried)" = 124 ]
	tap $? "every 5th call failed and was retried with backoff: 124 retries (got $(sample_param retried))"
	[ "$(sample_param failed)/$(sample_param dropped)" = 0/0 ]
	tap $? "nothing failed permanently or was dropped"
	wait_for 60 sample_idle $s_q
	tap $? "nothing is left queued, processing or waiting"
	s_st="$(queue_stat $s_q adds)/$(queue_stat $s_q gets)/$(queue_stat $s_q dones)"
	s_st="$s_st/$(queue_stat $s_q rate-limited)/$(queue_stat $s_q fired)/$(queue_stat $s_q items)"
	[ "$s_st" = 624/624/624/124/124/0 ]
	tap $? "kwqctl stats: adds/gets/dones 624, 124 rate-limited and fired, no key left ($s_st)"
	rmmod kwq_sample
	tap $? "rmmod kwq_sample"
	sample_no_threads $s_q && ! sample_loaded
	tap $? "its worker threads are gone"
	./bin/kwqctl --kernel stats $s_q >/dev/null
	tap $? "the module's queue outlives the module"
	[ "$(queue_stat $s_q adds --user)" = 0 ]
	tap $? "the user's $s_q, same name, was not touched"

	# --- The module produces, a user program consumes --------------------
	s_q=s-rev
	insmod ./kwq_sample.ko queue=$s_q create=1 workers=0 produce=300
	tap $? "kwq_sample creates $s_q and adds 300 keys"
	[ "$(queue_stat $s_q queued)" = 300 ]
	tap $? "300 keys are queued"
	./bin/kwq_sample_test consume --kernel $s_q kernel 0 300 >/dev/null
	tap $? "a user program gets kernel/0..299, each exactly once, and nothing more"
	if echo 200 > /sys/module/kwq_sample/parameters/produce; then s_r=0; else s_r=1; fi
	tap $s_r "writing 200 to the produce parameter adds 200 more"
	[ "$(sample_param produce)" = 500 ]
	tap $? "the module counts 500 keys produced"
	./bin/kwq_sample_test consume --kernel $s_q kernel 300 200 >/dev/null
	tap $? "a user program gets kernel/300..499, each exactly once"
	rmmod kwq_sample
	tap $? "rmmod kwq_sample (producer only)"

	# --- A user consumer is killed while holding leased keys -------------
	s_q=s-crash
	insmod ./kwq_sample.ko queue=$s_q create=1 workers=0 produce=100
	tap $? "kwq_sample creates $s_q with 100 keys"
	rm -f /tmp/s-ready
	./bin/kwq_sample_test consume --kernel $s_q kernel 0 100 --done 10 --hold 5 --ready /tmp/s-ready &
	s_pid=$!
	wait_for 60 test -e /tmp/s-ready
	tap $? "a user consumer finishes 10 keys and holds 5 more"
	[ "$(queue_stat $s_q processing)/$(queue_stat $s_q queued)" = 5/85 ]
	tap $? "5 keys are processing, 85 queued"
	kill -9 $s_pid
	wait $s_pid 2>/dev/null
	s_st="$(queue_stat $s_q processing)/$(queue_stat $s_q queued)/$(queue_stat $s_q lease-requeues)"
	[ "$s_st" = 0/90/5 ]
	tap $? "after SIGKILL its 5 keys are back in the queue ($s_st)"
	./bin/kwq_sample_test consume --kernel $s_q kernel 10 90 >/dev/null
	tap $? "the next consumer gets kernel/10..99 exactly once: nothing lost"
	rmmod kwq_sample
	tap $? "rmmod kwq_sample"

	# --- A user producer is killed half-way -------------------------------
	s_q=s-prod
	insmod ./kwq_sample.ko queue=$s_q create=1 workers=2
	tap $? "kwq_sample consumes $s_q"
	rm -f /tmp/s-progress
	./bin/kwq_sample_test produce --kernel $s_q p 0 1000000 --delay-us 2000 --progress /tmp/s-progress >/dev/null &
	s_pid=$!
	# A second, and on until it has added a key: a stalled guest is slow.
	sleep 1
	wait_for 60 sample_progressed
	kill -9 $s_pid
	wait $s_pid 2>/dev/null
	s_p=$(sample_progress)
	[ "$s_p" -gt 0 ]
	tap $? "the producer is killed after adding $s_p keys"
	s_adds=$(queue_stat $s_q adds)
	# It may have been killed between an add and writing its progress.
	[ "$s_adds" -eq "$s_p" ] || [ "$s_adds" -eq $((s_p + 1)) ]
	tap $? "the queue got every key it added ($s_adds)"
	wait_for 60 sample_param_is handled "$s_adds"
	tap $? "kwq_sample handles each of them"
	sample_idle $s_q && [ "$(queue_stat $s_q dones)" = "$s_adds" ]
	tap $? "each exactly once, nothing left"
	rmmod kwq_sample
	tap $? "rmmod kwq_sample"

	# --- Unload with drain=1: everything queued is handled first ----------
	s_q=s-drain
	insmod ./kwq_sample.ko queue=$s_q create=1 workers=2 work_us=2000 drain=1
	tap $? "kwq_sample on $s_q with drain=1"
	./bin/kwq_sample_test produce --kernel $s_q d 0 200 >/dev/null
	rmmod kwq_sample
	tap $? "rmmod kwq_sample drains"
	s_st="$(queue_stat $s_q dones)/$(queue_stat $s_q queued)/$(queue_stat $s_q processing)"
	[ "$s_st" = 200/0/0 ]
	tap $? "all 200 keys were handled before the module left ($s_st)"
	./bin/kwqctl --kernel stats $s_q | grep -q '^queue s-drain shutting-down'
	tap $? "the drained queue is shut down"

	# --- Unload without drain: the keys not yet taken stay queued ---------
	s_q=s-cancel
	# 200 ms a key, 20 s for all: a stalled guest still unloads it half-way.
	insmod ./kwq_sample.ko queue=$s_q create=1 workers=1 work_us=200000
	tap $? "kwq_sample on $s_q, one slow worker"
	./bin/kwq_sample_test produce --kernel $s_q c 0 100 >/dev/null
	sleep 0.3
	rmmod kwq_sample
	tap $? "rmmod kwq_sample cancels"
	s_done=$(queue_stat $s_q dones)
	s_left=$(queue_stat $s_q queued)
	[ "$(queue_stat $s_q processing)" = 0 ] && [ $((s_done + s_left)) -eq 100 ] && [ "$s_left" -gt 0 ]
	tap $? "the key in hand was finished ($s_done done), the other $s_left stay queued"
	./bin/kwq_sample_test consume --kernel $s_q c "$s_done" "$s_left" >/dev/null
	tap $? "a user program gets those $s_left, in order: nothing lost"
	./bin/kwqctl --kernel add $s_q more >/dev/null
	tap $? "the queue still takes keys"

	# --- A kernel module's queue charges no cgroup, whoever adds ----------
	# 40,000 records of about 80 bytes; a cgroup's per-CPU charge batches
	# (64 pages a CPU) may show up to 13 bytes a key that are not kwq's.
	s_q=s-charge
	insmod ./kwq_sample.ko queue=$s_q create=1 workers=0
	tap $? "kwq_sample makes $s_q, without workers"
	[ -r /sys/kernel/debug/kwq/kernel:$s_q ] && [ ! -e /sys/kernel/debug/kwq/$s_q ]
	tap $? "its debugfs file is kernel:$s_q"
	s_k=$(./bin/kwq_sample_test charge --kernel $s_q k 0 40000)
	tap $? "a program in a memory cgroup of its own adds 40,000 keys to it"
	[ "${s_k:-999}" -lt 20 ]
	tap $? "its cgroup is charged nothing for them (${s_k:-?} bytes a key)"
	rmmod kwq_sample
	./bin/kwqctl create s-charge-u --mode 0600 >/dev/null
	s_u=$(./bin/kwq_sample_test charge s-charge-u u 0 40000)
	[ "${s_u:-0}" -ge 60 ]
	tap $? "the same adds to a user's queue are charged to it (${s_u:-?} bytes a key)"
	./bin/kwqctl destroy s-charge-u >/dev/null
	./bin/kwqctl --kernel destroy $s_q >/dev/null
	tap $? "both queues are destroyed"

	# --- The queue is destroyed under the module -------------------------
	s_q=s-gone
	insmod ./kwq_sample.ko queue=$s_q create=1 workers=3
	tap $? "kwq_sample consumes $s_q"
	./bin/kwqctl --kernel destroy $s_q
	tap $? "a user program destroys the module's $s_q"
	wait_for 60 sample_no_threads $s_q
	tap $? "the workers exit"
	rmmod kwq_sample
	tap $? "rmmod kwq_sample after its queue is gone"
	! sample_loaded
	tap $? "kwq_sample is unloaded; kwq stays"

	s_r=0
	for s_q in s-fwd s-rev s-crash s-prod s-drain s-cancel; do
		./bin/kwqctl --kernel destroy $s_q || s_r=1
	done
	./bin/kwqctl destroy s-fwd || s_r=1
	tap $s_r "the queues are destroyed"
	rm -f /tmp/s-ready /tmp/s-progress
	tap_end
fi
