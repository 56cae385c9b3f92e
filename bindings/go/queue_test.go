// SPDX-License-Identifier: GPL-2.0

package kwq

// The scenarios of client-go's util/workqueue/queue_test.go, on a kwq
// queue through the client-go interface, plus where kwq differs.

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"kwq.dev/kwq/internal/workqueue"
)

// client-go TestBasic: producers and consumers at once; no key is ever
// handed to two consumers at once, and every key added is processed.
func TestBasic(t *testing.T) {
	q := newQueue(t)
	var wq workqueue.TypedInterface[string] = q
	const producers, consumers, keys = 8, 6, 50

	var pw sync.WaitGroup
	for i := 0; i < producers; i++ {
		pw.Add(1)
		go func(i int) {
			defer pw.Done()
			for j := 0; j < keys; j++ {
				wq.Add(fmt.Sprintf("ns/obj-%d", j))
				if j%10 == i {
					time.Sleep(time.Millisecond)
				}
			}
		}(i)
	}
	var mu sync.Mutex
	processing := map[string]bool{}
	seen := map[string]int{}
	var cw sync.WaitGroup
	errs := make(chan string, consumers)
	for i := 0; i < consumers; i++ {
		cw.Add(1)
		go func() {
			defer cw.Done()
			for {
				k, quit := wq.Get()
				if quit {
					return
				}
				mu.Lock()
				if processing[k] {
					errs <- "key " + k + " handed out twice at once"
				}
				processing[k] = true
				seen[k]++
				mu.Unlock()
				time.Sleep(50 * time.Microsecond)
				mu.Lock()
				processing[k] = false
				mu.Unlock()
				wq.Done(k)
			}
		}()
	}
	pw.Wait()
	wq.ShutDownWithDrain()
	cw.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	if len(seen) != keys {
		t.Fatalf("%d distinct keys processed, want %d", len(seen), keys)
	}
	if k, quit := wq.Get(); !quit || k != "" {
		t.Fatalf("Get after drain = %q, %v; want \"\", true", k, quit)
	}
	st := mustStats(t, q)
	if st.Gets != st.Dones || st.Adds != st.Gets || st.Adds+st.Dedups != producers*keys {
		t.Fatalf("stats: adds %d dedups %d gets %d dones %d", st.Adds, st.Dedups, st.Gets, st.Dones)
	}
}

// client-go TestAddWhileProcessing: a key added while it is processed runs
// again after Done, never twice at once.
func TestAddWhileProcessing(t *testing.T) {
	q := newQueue(t)
	const keys, consumers = 50, 4
	for i := 0; i < keys; i++ {
		q.Add(fmt.Sprintf("k%d", i))
	}
	var mu sync.Mutex
	counts := map[string]int{}
	var wg sync.WaitGroup
	for i := 0; i < consumers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				k, quit := q.Get()
				if quit {
					return
				}
				mu.Lock()
				counts[k]++
				first := counts[k] == 1
				mu.Unlock()
				if first {
					if r, err := q.AddWithResult(k); err != nil || r != Deferred {
						t.Errorf("re-add of %s while processing: %v, %v", k, r, err)
					}
				}
				q.Done(k)
			}
		}()
	}
	eventually(t, "every key processed twice", func() bool {
		mu.Lock()
		defer mu.Unlock()
		for i := 0; i < keys; i++ {
			if counts[fmt.Sprintf("k%d", i)] < 2 {
				return false
			}
		}
		return true
	})
	q.ShutDown()
	wg.Wait()
	for k, n := range counts {
		if n != 2 {
			t.Errorf("%s processed %d times, want 2", k, n)
		}
	}
}

// client-go TestLen.
func TestLen(t *testing.T) {
	q := newQueue(t)
	q.Add("foo")
	expectLen(t, q, 1)
	q.Add("bar")
	expectLen(t, q, 2)
	q.Add("foo") // should not increase the queue length.
	expectLen(t, q, 2)
}

// client-go TestReinsert.
func TestReinsert(t *testing.T) {
	q := newQueue(t)
	q.Add("foo")
	expectGet(t, q, "foo")
	q.Add("foo") // add it back while processing
	expectLen(t, q, 0)
	q.Done("foo")
	expectLen(t, q, 1)
	expectGet(t, q, "foo")
	q.Done("foo")
	expectLen(t, q, 0)
}

// FIFO order, and a duplicate keeps its first position.
func TestFIFO(t *testing.T) {
	q := newQueue(t)
	for _, k := range []string{"a", "b", "c", "a", "d", "b"} {
		q.Add(k)
	}
	for _, k := range []string{"a", "b", "c", "d"} {
		expectGet(t, q, k)
		q.Done(k)
	}
}

func waitDraining(t *testing.T, q *Queue) {
	t.Helper()
	eventually(t, "the drain to wait", func() bool { return mustStats(t, q).Draining })
}

// client-go TestQueueDrainageUsingShutDownWithDrain.
func TestQueueDrainageUsingShutDownWithDrain(t *testing.T) {
	q := newQueue(t)
	q.Add("foo")
	q.Add("bar")
	first, _ := q.Get()
	second, _ := q.Get()
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		q.ShutDownWithDrain()
	}()
	waitDraining(t, q)
	if !q.ShuttingDown() {
		t.Fatal("ShuttingDown() false while draining")
	}
	q.Done(first)
	select {
	case <-finished:
		t.Fatal("ShutDownWithDrain returned while a key was processing")
	default:
	}
	q.Done(second)
	select {
	case <-finished:
	case <-time.After(patience):
		t.Fatal("ShutDownWithDrain did not return after the last Done")
	}
}

// kwq: the drain also waits for keys still queued (client-go returns
// once nothing is processing, kubernetes PR #141079).
func TestDrainWaitsForQueuedKeys(t *testing.T) {
	q := newQueue(t)
	q.Add("a")
	q.Add("b")
	expectGet(t, q, "a")
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		q.ShutDownWithDrain()
	}()
	waitDraining(t, q)
	q.Done("a")
	select {
	case <-finished:
		t.Fatal("ShutDownWithDrain returned with b still queued")
	default:
	}
	expectGet(t, q, "b")
	q.Done("b")
	select {
	case <-finished:
	case <-time.After(patience):
		t.Fatal("ShutDownWithDrain did not return")
	}
}

// client-go TestNoQueueDrainageUsingShutDown: ShutDown does not wait.
func TestNoQueueDrainageUsingShutDown(t *testing.T) {
	q := newQueue(t)
	q.Add("foo")
	q.Add("bar")
	q.Get()
	q.Get()
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		q.ShutDown()
	}()
	select {
	case <-finished:
	case <-time.After(patience):
		t.Fatal("ShutDown waited for processing keys")
	}
}

// client-go TestForceQueueShutdownUsingShutDown: ShutDown cuts a drain short.
func TestForceQueueShutdownUsingShutDown(t *testing.T) {
	q := newQueue(t)
	q.Add("foo")
	q.Add("bar")
	q.Get()
	q.Get()
	finished := make(chan error, 1)
	go func() { finished <- q.Drain(context.Background(), false) }()
	waitDraining(t, q)
	q.ShutDown()
	select {
	case err := <-finished:
		expectErrno(t, "Drain cut short by ShutDown", err, ecanceled)
	case <-time.After(patience):
		t.Fatal("ShutDown did not end the drain")
	}
}

// client-go TestQueueDrainageUsingShutDownWithDrainWithDirtyItem: a key
// re-added before the shutdown is queued again by its Done and handed out.
func TestQueueDrainageUsingShutDownWithDrainWithDirtyItem(t *testing.T) {
	q := newQueue(t)
	q.Add("foo")
	expectGet(t, q, "foo")
	q.Add("foo")
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		q.ShutDownWithDrain()
	}()
	waitDraining(t, q)
	if r, err := q.DoneWithResult("foo"); err != nil || r != Requeued {
		t.Fatalf("Done of the dirty key = %v, %v; want requeued", r, err)
	}
	expectGet(t, q, "foo")
	select {
	case <-finished:
		t.Fatal("drain returned while foo was processing")
	default:
	}
	q.Done("foo")
	select {
	case <-finished:
	case <-time.After(patience):
		t.Fatal("drain did not return")
	}
	if _, quit := q.Get(); !quit {
		t.Fatal("Get after the drain did not report shutdown")
	}
}

// After ShutDown, Get hands out what is queued, then reports shutdown;
// adds are dropped (client-go), and AddWithResult says so.
func TestShutDownSemantics(t *testing.T) {
	q := newQueue(t)
	q.Add("a")
	q.Add("b")
	if q.ShuttingDown() {
		t.Fatal("ShuttingDown() before ShutDown")
	}
	q.ShutDown()
	q.ShutDown() // idempotent
	if !q.ShuttingDown() {
		t.Fatal("ShuttingDown() false after ShutDown")
	}
	q.Add("c")
	_, err := q.AddWithResult("c")
	expectErrno(t, "add after shutdown", err, eshutdown)
	q.AddAfter("d", time.Millisecond)
	q.AddRateLimited("e")
	expectLen(t, q, 2)
	expectGet(t, q, "a")
	q.Done("a")
	expectGet(t, q, "b")
	q.Done("b")
	if k, quit := q.Get(); !quit || k != "" {
		t.Fatalf("Get = %q, %v after the last key; want shutdown", k, quit)
	}
	_, err = q.GetContext(context.Background())
	expectErrno(t, "GetContext after shutdown", err, eshutdown)
	if st := mustStats(t, q); st.Refused < 2 {
		t.Fatalf("refused = %d, want >= 2", st.Refused)
	}
}

// A Get blocked on an empty queue is woken by ShutDown.
func TestShutDownWakesGetters(t *testing.T) {
	q := newQueue(t)
	const getters = 3
	done := make(chan bool, getters)
	for i := 0; i < getters; i++ {
		go func() {
			_, quit := q.Get()
			done <- quit
		}()
	}
	time.Sleep(10 * time.Millisecond) // not needed for correctness
	q.ShutDown()
	for i := 0; i < getters; i++ {
		select {
		case quit := <-done:
			if !quit {
				t.Fatal("Get returned a key from an empty queue")
			}
		case <-time.After(patience):
			t.Fatal("ShutDown did not wake a blocked Get")
		}
	}
}

// Done of a key that is not processing changes nothing (kubernetes#79934:
// client-go queues a duplicate).
func TestDoneNotProcessing(t *testing.T) {
	q := newQueue(t)
	q.Add("foo")
	_, err := q.DoneWithResult("foo")
	expectErrno(t, "Done of a queued key", err, enoent)
	q.Done("foo")
	q.Done("never-added")
	expectLen(t, q, 1)
	expectGet(t, q, "foo")
	if r, err := q.DoneWithResult("foo"); err != nil || r != Finished {
		t.Fatalf("Done = %v, %v", r, err)
	}
	_, err = q.DoneWithResult("foo")
	expectErrno(t, "second Done", err, enoent)
	expectLen(t, q, 0)
}

// A controller written against the interface runs on a *Queue unchanged.
func TestInterfaceWorkerLoop(t *testing.T) {
	q := newQueue(t, WithRateLimiter(MaxOf(ExponentialLimiter(time.Millisecond, 10*time.Millisecond))))
	var mu sync.Mutex
	attempts := map[string]int{}
	results := runController(q, 3, func(key string) error {
		mu.Lock()
		defer mu.Unlock()
		attempts[key]++
		if attempts[key] < 3 {
			return fmt.Errorf("transient failure %d", attempts[key])
		}
		return nil
	}, []string{"ns/a", "ns/b", "ns/c", "ns/d"})
	for k, n := range attempts {
		if n != 3 {
			t.Errorf("%s attempted %d times, want 3", k, n)
		}
	}
	if results != 4 {
		t.Fatalf("%d keys succeeded, want 4", results)
	}
}

// runController is the classic client-go loop: Get, reconcile, Forget or
// AddRateLimited, Done; it returns how many keys succeeded.
func runController(q workqueue.TypedRateLimitingInterface[string], workers int,
	reconcile func(string) error, keys []string) int {
	var mu sync.Mutex
	ok := 0
	var wg sync.WaitGroup
	for _, k := range keys {
		q.Add(k)
	}
	for i := 0; i < workers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				key, quit := q.Get()
				if quit {
					return
				}
				func() {
					defer q.Done(key)
					if err := reconcile(key); err != nil {
						if q.NumRequeues(key) < 5 {
							q.AddRateLimited(key)
						} else {
							q.Forget(key)
						}
						return
					}
					q.Forget(key)
					mu.Lock()
					ok++
					if ok == len(keys) {
						go q.ShutDown()
					}
					mu.Unlock()
				}()
			}
		}()
	}
	wg.Wait()
	return ok
}
