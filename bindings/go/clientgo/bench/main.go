// SPDX-License-Identifier: GPL-2.0

//go:build kwqclientgo

// Command kwq-cgo-bench measures client-go's work queue and kwq's Go
// package with the same code, for make bench: every figure is one loop
// written against client-go's workqueue.TypedRateLimitingInterface[string],
// run on the queue that IMPL names:
//
//	client-go  workqueue.NewTypedRateLimitingQueueWithConfig with
//	           DefaultTypedControllerRateLimiter (a controller's queue)
//	kwq        kwq.Create with kwq.DefaultControllerRateLimiter
//
// It prints the lines of bench/kwq_bench.c
//
//	KWQB <prefix>.<figure> <value> <unit>
//
// with prefix cg for client-go and cg.kwq for kwq, so scripts/bench.sh sets
// each kwq figure beside client-go's from the same boot. Keys are 32 bytes,
// "bench/" and 26 digits, as in kwq_bench.
//
//	kwq-cgo-bench IMPL cycle1 N                 Add; Get; Done of N keys, one goroutine
//	kwq-cgo-bench IMPL cycle P C N              P producer, C consumer goroutines, N keys
//	kwq-cgo-bench IMPL dedup HOT P C ADDS       P producers add ADDS random keys each out
//	                                            of HOT, C consumers drain
//	kwq-cgo-bench IMPL delay N MAX_MS SEED NAME add-after lateness of N keys
//	kwq-cgo-bench IMPL scale-queue MAXN         Add cost at growing queued sets, memory
//	kwq-cgo-bench IMPL scale-wait MAXN SEED     AddAfter cost at growing waiting sets, memory
//
// It builds only in a GOPATH holding client-go's source (scripts/client-go.sh
// build; the build tag kwqclientgo keeps it out of the module's builds).
package main

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/util/workqueue"
	"kwq.dev/kwq"
)

type queue = workqueue.TypedRateLimitingInterface[string]

var (
	impl   string
	prefix string
	// end shuts the queue down and frees it (kwq: destroys it).
	end func(q queue)
	seq int
)

func die(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "kwq-cgo-bench: "+format+"\n", a...)
	os.Exit(1)
}

func result(name string, v float64, unit string) {
	fmt.Printf("KWQB %s.%s %.6g %s\n", prefix, name, v, unit)
}

func key(i int) string { return fmt.Sprintf("bench/%026d", i) }

func keys(n int) []string {
	k := make([]string, n)
	for i := range k {
		k[i] = key(i)
	}
	return k
}

func keyidx(k string) int {
	i, err := strconv.Atoi(k[6:])
	if err != nil {
		die("bad key %q", k)
	}
	return i
}

func num(s string) int {
	v, err := strconv.Atoi(s)
	if err != nil || v <= 0 {
		die("not a positive number: %s", s)
	}
	return v
}

func newQueue(what string) queue {
	if impl == "client-go" {
		return workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{})
	}
	seq++
	q, err := kwq.Create(fmt.Sprintf("cgbench-%s-%d-%d", what, os.Getpid(), seq),
		kwq.WithRateLimiter(kwq.DefaultControllerRateLimiter()))
	if err != nil {
		die("%v", err)
	}
	return q
}

func xorshift(s *uint64) uint64 {
	x := *s
	x ^= x << 13
	x ^= x >> 7
	x ^= x << 17
	*s = x
	return x
}

func cycle1(n int) {
	ks := keys(n)
	q := newQueue("c1")
	runtime.LockOSThread()
	start := time.Now()
	for _, k := range ks {
		q.Add(k)
		got, quit := q.Get()
		if quit || got != k {
			die("cycle1: got %q, %v", got, quit)
		}
		q.Done(got)
	}
	el := time.Since(start)
	runtime.UnlockOSThread()
	end(q)
	result("cycle.1t", float64(el.Nanoseconds())/float64(n), "ns/key")
}

// consume gets and dones keys until the queue reports shutdown; it
// returns how many it did.
func consume(q queue) int {
	n := 0
	for {
		k, quit := q.Get()
		if quit {
			return n
		}
		q.Done(k)
		n++
	}
}

// run starts p producers (prod(i)) and c consumers at once; once the
// producers are done it shuts the queue down, and the consumers stop when
// it has no key left. It returns the wall time from the earliest start to
// the producers' end and to the consumers' end, and the keys the consumers
// did. (The earliest start, not the main goroutine's clock after the gate:
// that read can come after the workers ran.)
func run(q queue, p, c int, prod func(i int)) (time.Duration, time.Duration, int) {
	var ready, prods, cons sync.WaitGroup
	starts := make([]time.Time, p+c)
	done := make([]int, c)
	gate := make(chan struct{})
	ready.Add(p + c)
	prods.Add(p)
	cons.Add(c)
	for i := 0; i < p+c; i++ {
		go func(i int) {
			ready.Done()
			<-gate
			starts[i] = time.Now()
			if i < p {
				prod(i)
				prods.Done()
			} else {
				done[i-p] = consume(q)
				cons.Done()
			}
		}(i)
	}
	ready.Wait()
	close(gate)
	prods.Wait()
	t1 := time.Now()
	q.ShutDown()
	cons.Wait()
	t2 := time.Now()
	t0 := starts[0]
	for _, s := range starts {
		if s.Before(t0) {
			t0 = s
		}
	}
	total := 0
	for _, d := range done {
		total += d
	}
	return t1.Sub(t0), t2.Sub(t0), total
}

func cycle(p, c, n int) {
	ks := keys(n)
	q := newQueue("pc")
	_, el, total := run(q, p, c, func(i int) {
		first, count := n/p*i, n/p
		if i == p-1 {
			count = n - first
		}
		for _, k := range ks[first : first+count] {
			q.Add(k)
		}
	})
	end(q)
	if total != n {
		die("cycle: %d keys done, %d added", total, n)
	}
	result(fmt.Sprintf("cycle.%dp%dc", p, c), float64(el.Nanoseconds())/float64(n), "ns/key")
}

// dedup: the producers' adds per second, from their start to their end.
func dedup(hot, p, c, adds int) {
	ks := keys(hot)
	q := newQueue("dedup")
	el, _, _ := run(q, p, c, func(i int) {
		seed := uint64(0x9e3779b97f4a7c15) * uint64(i+1)
		for j := 0; j < adds; j++ {
			q.Add(ks[xorshift(&seed)%uint64(hot)])
		}
	})
	end(q)
	result("dedup.adds", float64(p*adds)/el.Seconds(), "adds/s")
}

// pct is the nearest-rank percentile of sorted values.
func pct(v []int64, p float64) int64 {
	k := int(p/100*float64(len(v)) + 0.999999)
	if k < 1 {
		k = 1
	}
	if k > len(v) {
		k = len(v)
	}
	return v[k-1]
}

// delay: N keys added after delays uniform in [1 ms, MAX_MS] (µs
// resolution, kwq_bench's sequence for SEED), one consumer taking them as
// they become ready; a key's lateness is from its deadline (read before
// the AddAfter, so never later than the queue's own) to the clock read
// right after the Get that returned it.
func delay(n, maxMs int, seed uint64, name string) {
	ks := keys(n)
	due := make([]time.Time, n)
	gotAt := make([]time.Time, n)
	q := newQueue("delay")
	s := seed*0x9e3779b97f4a7c15 + 1
	dl := make([]time.Duration, n)
	for i := range dl {
		dl[i] = time.Millisecond + time.Duration(xorshift(&s)%uint64((maxMs-1)*1000+1))*time.Microsecond
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for got := 0; got < n; got++ {
			k, quit := q.Get()
			t := time.Now()
			if quit {
				die("delay: shutdown")
			}
			gotAt[keyidx(k)] = t
			q.Done(k)
		}
	}()
	for i, k := range ks {
		due[i] = time.Now().Add(dl[i])
		q.AddAfter(k, dl[i])
	}
	wg.Wait()
	end(q)
	late := make([]int64, n)
	for i := range late {
		if gotAt[i].IsZero() {
			die("delay: key %d never came", i)
		}
		late[i] = gotAt[i].Sub(due[i]).Nanoseconds()
	}
	sort.Slice(late, func(a, b int) bool { return late[a] < late[b] })
	result(name+".p50", float64(pct(late, 50))/1e3, "us")
	result(name+".p99", float64(pct(late, 99))/1e3, "us")
	result(name+".max", float64(late[n-1])/1e3, "us")
}

var scalePoints = []int{1000, 3000, 10000, 30000, 100000, 300000, 1000000}

const scaleWindow = 1000

// slabBytes is the bytes of the active objects of every slab cache
// (/proc/slabinfo), as kwq_bench's memory figures count them.
func slabBytes() int64 {
	f, err := os.Open("/proc/slabinfo")
	if err != nil {
		die("%v", err)
	}
	defer f.Close()
	var sum int64
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var name string
		var active, total, size int64
		if n, _ := fmt.Sscanf(sc.Text(), "%s %d %d %d", &name, &active, &total, &size); n == 4 {
			sum += active * size
		}
	}
	return sum
}

// heapBytes is the Go heap's live bytes after a full collection.
func heapBytes() int64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

type memMark struct{ heap, slab int64 }

func memBegin() memMark { return memMark{heapBytes(), slabBytes()} }

// memReport prints the bytes per key the queue holds, n keys in it: the
// growth of the Go heap (live bytes) plus that of the slab caches' active
// objects. Each queue's memory is in one of them: client-go's in the heap,
// kwq's in the kernel's slab caches.
func memReport(what string, m memMark, n int) {
	h, s := heapBytes()-m.heap, slabBytes()-m.slab
	result("mem."+what+".heap", float64(h)/float64(n), "bytes/key")
	result("mem."+what+".slab", float64(s)/float64(n), "bytes/key")
	result("mem."+what, float64(h+s)/float64(n), "bytes/key")
}

func scaleQueue(maxn int) {
	m := memBegin()
	q := newQueue("scaleq")
	n := 0
	for _, p := range scalePoints {
		if p > maxn {
			break
		}
		// The keys are made here, so the queue alone holds them (client-go
		// keeps the string; kwq a copy in the kernel).
		for ; n < p; n++ {
			q.Add(key(n))
		}
		win := make([]string, scaleWindow)
		for j := range win {
			win[j] = key(n + j)
		}
		t0 := time.Now()
		for _, k := range win {
			q.Add(k)
		}
		el := time.Since(t0)
		n += scaleWindow
		result(fmt.Sprintf("scale.add@%d", p), float64(el.Nanoseconds())/scaleWindow, "ns/key")
	}
	if q.Len() != n {
		die("scale-queue: %d keys queued, %d added", q.Len(), n)
	}
	memReport("queued", m, n)
	end(q)
}

// Windows timed at each size of scale-wait; the median is reported.
const scaleWaitTries = 5

// scaleWait fills a queue with AddAfter keys due in 1-2 h, and times a
// window of scaleWindow more at each size: until the queue holds them.
// client-go's AddAfter hands the key to its waiting loop through a
// channel; the loop files it later. So each window ends with a marker key
// due in 1 ns, handed over behind the window's keys, and is timed until a
// Get returns the marker: every key of the window is filed by then. kwq's
// AddAfter files the key before it returns; its windows end the same way.
func scaleWait(maxn int, seed uint64) {
	m := memBegin()
	q := newQueue("scalew")
	s := seed*0x9e3779b97f4a7c15 + 7
	after := func() time.Duration {
		return time.Hour + time.Duration(xorshift(&s)%uint64(time.Hour))
	}
	n := 0
	marker := "bench/marker-of-the-window-00000"
	for _, p := range scalePoints {
		if p > maxn {
			break
		}
		for ; n < p; n++ {
			q.AddAfter(key(n), after())
		}
		var took [scaleWaitTries]time.Duration
		for t := range took {
			win := make([]string, scaleWindow)
			d := make([]time.Duration, scaleWindow)
			for j := range win {
				win[j] = key(n + j)
				d[j] = after()
			}
			t0 := time.Now()
			for j, k := range win {
				q.AddAfter(k, d[j])
			}
			q.AddAfter(marker, time.Nanosecond)
			k, quit := q.Get()
			took[t] = time.Since(t0)
			if quit || k != marker {
				die("scale-wait: got %q, %v", k, quit)
			}
			q.Done(k)
			n += scaleWindow
		}
		sort.Slice(took[:], func(a, b int) bool { return took[a] < took[b] })
		result(fmt.Sprintf("scale.add_after@%d", p),
			float64(took[scaleWaitTries/2].Nanoseconds())/scaleWindow, "ns/key")
	}
	memReport("waiting", m, n)
	end(q)
}

func main() {
	a := os.Args[1:]
	if len(a) < 3 || (a[0] != "client-go" && a[0] != "kwq") {
		die("usage: kwq-cgo-bench client-go|kwq COMMAND ARGS... (see its source)")
	}
	impl = a[0]
	if impl == "client-go" {
		prefix = "cg"
		end = func(q queue) { q.ShutDown() }
	} else {
		prefix = "cg.kwq"
		end = func(q queue) {
			kq := q.(*kwq.Queue)
			if err := kq.Destroy(); err != nil {
				die("%v", err)
			}
			kq.Close()
		}
	}
	c, a := a[1], a[2:]
	switch {
	case c == "cycle1" && len(a) == 1:
		cycle1(num(a[0]))
	case c == "cycle" && len(a) == 3:
		cycle(num(a[0]), num(a[1]), num(a[2]))
	case c == "dedup" && len(a) == 4:
		dedup(num(a[0]), num(a[1]), num(a[2]), num(a[3]))
	case c == "delay" && len(a) == 4:
		ms := num(a[1])
		if ms < 2 {
			die("delay: MAX_MS >= 2")
		}
		delay(num(a[0]), ms, uint64(num(a[2])), a[3])
	case c == "scale-queue" && len(a) == 1:
		scaleQueue(num(a[0]))
	case c == "scale-wait" && len(a) == 2:
		scaleWait(num(a[0]), uint64(num(a[1])))
	default:
		die("unknown command or wrong arguments: %s", strings.Join(os.Args[1:], " "))
	}
}
