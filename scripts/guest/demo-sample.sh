# shellcheck shell=sh
# In the guest, sourced by demo.sh (say, run, PATH with /kwq/bin) while
# kwq.ko is loaded: a kernel module makes a queue and consumes it with a
# worker pool while a user program produces, some keys fail on purpose and back off, and the
# reverse direction. Leaves kwq loaded and no queue behind.

demo_params=/sys/module/kwq_sample/parameters
demo_handled() { [ "$(cat $demo_params/handled)" = "$1" ]; }
# demo_set PARAM VALUE: show and do `echo VALUE > .../PARAM`.
demo_set() {
	echo "\$ echo $2 > $demo_params/$1"
	echo "$2" > "$demo_params/$1"
}
demo_forgotten() { kwqctl --kernel requeues orders order/flaky | grep -q ': 0$'; }

say "A kernel module makes a queue and consumes it (kwq_sample.ko); user programs reach it with --kernel"
run insmod ./kwq_sample.ko queue=orders create=1 workers=3 fail_every=4
echo '$ cat /proc/*/comm | grep kwq     # the worker pool: one kernel thread per worker'
cat /proc/[0-9]*/comm 2>/dev/null | grep '^kwq[0-9]'

say "The user program adds 20 keys; every 4th handler call fails (-EAGAIN), so that key is retried after its backoff"
run kwq_sample_test produce --kernel orders order 0 20
wait_for 30 demo_handled 20
echo "\$ cd $demo_params && grep . handled retried failed"
(cd $demo_params && grep . handled retried failed)
run kwqctl --kernel stats orders

say "Backoff is per key and doubles: make every call fail and watch one key's failure count"
demo_set fail_every 1
run kwqctl --kernel add orders order/flaky
sleep 1
run kwqctl --kernel requeues orders order/flaky
sleep 1
run kwqctl --kernel requeues orders order/flaky
echo "(retries after 5, 10, 20, 40 ... ms: one second more adds only one or two)"

say "Let it recover: the next retry succeeds and the key's failures are forgotten"
demo_set fail_every 0
wait_for 30 demo_forgotten
run kwqctl --kernel requeues orders order/flaky

say "kwq cannot be unloaded while a module uses it; the module can"
run rmmod kwq
echo "(refused: kwq_sample uses its symbols)"
run rmmod kwq_sample
run kwqctl --kernel stats orders

say "The reverse: the module makes a queue and produces, a user program consumes"
run insmod ./kwq_sample.ko queue=alerts create=1 workers=0 produce=5
run kwqctl --kernel len alerts
run kwq_sample_test consume --kernel alerts kernel 0 5 -v
demo_set produce 3
run kwqctl --kernel get alerts --done
run rmmod kwq_sample
run kwqctl --kernel destroy orders
run kwqctl --kernel destroy alerts
