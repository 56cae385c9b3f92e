#!/bin/sh
# shellcheck source-path=SCRIPTDIR
# In the guest: a narrated tour of kwq with kwqctl.
. ./lib.sh
export PATH="/kwq/bin:$PATH"

say() { printf '\n# %s\n' "$*"; }
run() { printf '$ %s\n' "$*"; "$@"; }

say "kwq on Linux $(uname -r): load the module"
run insmod ./kwq.ko
run ls -l /dev/kwq
run kwqctl version

say "A named queue; any program (or kernel module) can open it by name"
run kwqctl create demo --mode 0666

say "Dedup: a key added many times before a worker takes it runs once (one batch ioctl)"
run kwqctl add demo ns/web ns/db ns/web ns/web
run kwqctl len demo

say "FIFO; the key taken is now 'processing'"
run kwqctl get demo

say "Adding a key that is being processed defers it: it runs again after done"
run kwqctl add demo ns/web
run kwqctl stats demo
run kwqctl "done" demo ns/web

say "Done of a key that is not processing is refused (client-go would queue a duplicate)"
run kwqctl "done" demo ns/web
run kwqctl len demo

say "Workers take the keys in order; ns/web comes back once, after ns/db"
run kwqctl get demo --done
run kwqctl get demo --done
run kwqctl get demo
echo "(exit status $? means: nothing ready)"

say "A blocking get sleeps until another process adds a key"
(sleep 1; echo "  (another process adds ns/late)"; kwqctl add demo ns/late >/dev/null) &
run kwqctl get demo --timeout 5000 --done
wait

say "Delays: add-after parks a key until its deadline (one hrtimer, earliest first)"
run kwqctl add-after demo 300 ns/retry
run kwqctl add-after demo 900 ns/retry
run kwqctl len demo
t0=$(cut -d' ' -f1 /proc/uptime)
run kwqctl get demo --timeout 3000 --done
t1=$(cut -d' ' -f1 /proc/uptime)
echo "(the blocking get returned $(awk "BEGIN { printf \"%.2f\", $t1 - $t0 }") s later)"

say "A delay can be postponed (--replace) or cancelled; client-go can do neither"
run kwqctl add-after demo 100 ns/flaky
run kwqctl add-after demo 60000 ns/flaky --replace
run kwqctl cancel demo ns/flaky ns/flaky

say "An add of a waiting key runs it once, now (policy promote), not twice as in client-go"
run kwqctl add-after demo 60000 ns/cfg
run kwqctl add demo ns/cfg
run kwqctl stats demo
run kwqctl get demo --done
say "... or, with the strict policy, the add waits for the backoff"
run kwqctl add-after demo 200 ns/cfg
run kwqctl add demo ns/cfg --policy strict
run kwqctl len demo
run kwqctl get demo --timeout 3000 --done

say "Debounce: a burst of events runs a key once, 300 ms after the last (at most 2 s after the first)"
for _ in 1 2 3 4 5; do
	run kwqctl add-after demo 300 ns/burst --debounce 2000
done
t0=$(cut -d' ' -f1 /proc/uptime)
run kwqctl get demo --timeout 3000 --done
t1=$(cut -d' ' -f1 /proc/uptime)
echo "(the blocking get returned $(awk "BEGIN { printf \"%.2f\", $t1 - $t0 }") s later)"
run kwqctl len demo

say "Priorities: higher first, FIFO within one, and a low key ages (one level per 100 ms)"
run kwqctl create prio --priorities --aging 100
run kwqctl add prio ns/resync --priority -8
run kwqctl add prio ns/a ns/b
run kwqctl add prio ns/urgent --priority 7
run kwqctl add prio ns/b --priority 3
run kwqctl get prio --done
run kwqctl get prio --done
echo '$ sleep 2     # after 15 levels x 100 ms, ns/resync goes before any key added from now on'
sleep 2
run kwqctl add prio ns/new --priority 7
run kwqctl get prio --done
run kwqctl get prio --done
run kwqctl get prio --done
run kwqctl destroy prio
say "Tenants: a namespace that floods the queue delays another's key by one get"
run kwqctl create fair --tenant-depth 1
keys=""
i=0
while [ $i -lt 2000 ]; do keys="$keys noisy/k$i"; i=$((i + 1)); done
echo '$ kwqctl add fair noisy/k0 ... noisy/k1999     # 2000 keys of namespace "noisy"'
# shellcheck disable=SC2086 # one word per key
kwqctl add fair $keys >/dev/null
run kwqctl add fair quiet/a quiet/b
run kwqctl len fair
echo "(the rotation: noisy, quiet, noisy, quiet, noisy, noisy ...)"
run kwqctl get fair --done
run kwqctl get fair --done
run kwqctl get fair --done
run kwqctl get fair --done
run kwqctl get fair --done
run kwqctl destroy fair
say "Payloads: a value with the key; a newer add replaces it, a get returns the latest"
run kwqctl create objects --payload-max 256
run kwqctl add objects ns/web --payload 'replicas=1'
run kwqctl add objects ns/web --payload 'replicas=3'
run kwqctl get objects
run kwqctl add objects ns/web --payload 'replicas=5'
echo "(added while processing: done runs it again, with the new payload)"
run kwqctl "done" objects ns/web
run kwqctl get objects --done
run kwqctl stats objects
run kwqctl destroy objects

say "Leases: a worker killed while holding a key does not lose it"
run kwqctl add demo ns/payment
echo '$ kwqctl get demo --hold 60 &     # a worker takes the key, then hangs'
kwqctl get demo --hold 60 &
worker=$!
sleep 1
run kwqctl stats demo
echo '$ kill -9 <the worker>'
kill -9 $worker
wait $worker 2>/dev/null
run kwqctl stats demo
run kwqctl get demo --done

say "Backoff: each failure of a key doubles its wait (5 ms, 10 ms, 20 ms ...); forget resets it"
run kwqctl retry demo ns/flaky
run kwqctl get demo --timeout 1000 --done
run kwqctl retry demo ns/flaky
run kwqctl get demo --timeout 1000 --done
run kwqctl retry demo ns/flaky
run kwqctl requeues demo ns/flaky
run kwqctl get demo --timeout 1000 --done
run kwqctl forget demo ns/flaky

say "Every queue, by name, from any program (or kernel module)"
run kwqctl list

say "Shutdown: adds are refused, what is queued still comes out"
run kwqctl add demo ns/last
run kwqctl shutdown demo
run kwqctl add demo ns/refused
run kwqctl get demo --done
run kwqctl get demo
echo "(exit status $? means: nothing more to get)"

say "Drain returns once nothing is queued or processing"
run kwqctl drain demo --timeout 1000
run kwqctl stats demo

. ./demo-sample.sh

say "Destroy the queue and unload"
run kwqctl destroy demo
run rmmod kwq
echo
echo "demo finished"
