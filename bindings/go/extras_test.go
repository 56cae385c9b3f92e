// SPDX-License-Identifier: GPL-2.0

package kwq

// kwq's extras: results, contexts, done+get, batches, readiness, stats,
// errors, closed and destroyed queues.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"
)

func TestAddResults(t *testing.T) {
	q := newQueue(t)
	expectAdd(t, q, "k", Queued)
	expectAdd(t, q, "k", Duplicate)
	expectGet(t, q, "k")
	expectAdd(t, q, "k", Deferred)
	expectAdd(t, q, "k", Duplicate)
	st := mustStats(t, q)
	if st.DirtyProcessing != 1 || st.Processing != 1 || st.Queued != 0 || st.Dedups != 2 {
		t.Fatalf("stats %+v", st)
	}
	if r, err := q.DoneWithResult("k"); err != nil || r != Requeued {
		t.Fatalf("Done = %v, %v", r, err)
	}
	expectGet(t, q, "k")
	if r, err := q.DoneWithResult("k"); err != nil || r != Finished {
		t.Fatalf("Done = %v, %v", r, err)
	}
	for r, s := range map[fmt.Stringer]string{Queued: "queued", Absorbed: "absorbed",
		AddResult(99): "AddResult(99)", Requeued: "requeued", DoneNotRun: "not-run"} {
		if r.String() != s {
			t.Errorf("String() = %q, want %q", r.String(), s)
		}
	}
}

func TestGetContext(t *testing.T) {
	q := newQueue(t)
	// A deadline on an empty queue.
	start := time.Now() // before the context's clock starts
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	_, err := q.GetContext(ctx)
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) < 100*time.Millisecond {
		t.Fatalf("GetContext on an empty queue: %v after %v", err, time.Since(start))
	}
	// Cancellation while waiting.
	ctx, cancel = context.WithCancel(context.Background())
	res := make(chan error, 1)
	go func() {
		_, err := q.GetContext(ctx)
		res <- err
	}()
	time.Sleep(20 * time.Millisecond) // lets it wait; not needed for correctness
	cancel()
	select {
	case err := <-res:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled GetContext: %v", err)
		}
	case <-time.After(patience):
		t.Fatal("cancel did not end GetContext")
	}
	// Already cancelled: no key is taken.
	q.Add("k")
	if _, err := q.GetContext(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("GetContext(cancelled) = %v", err)
	}
	expectLen(t, q, 1)
	// A key added while waiting.
	go func() {
		time.Sleep(20 * time.Millisecond)
		q.Add("late")
	}()
	if k := getWithin(t, q); k != "k" {
		t.Fatalf("got %q", k)
	}
	if k := getWithin(t, q); k != "late" {
		t.Fatalf("got %q", k)
	}
	q.Done("k")
	q.Done("late")
	// Background: the blocking path.
	q.Add("bg")
	if k, err := q.GetContext(context.Background()); err != nil || k != "bg" {
		t.Fatalf("GetContext(Background) = %q, %v", k, err)
	}
	q.Done("bg")
	// TryGet.
	_, err = q.TryGet()
	expectErrno(t, "TryGet of an empty queue", err, syscall.EAGAIN)
	// Shutdown while waiting.
	go func() {
		time.Sleep(20 * time.Millisecond)
		q.ShutDown()
	}()
	ctx, cancel = context.WithTimeout(context.Background(), patience)
	defer cancel()
	_, err = q.GetContext(ctx)
	expectErrno(t, "GetContext when the queue shuts down", err, eshutdown)
}

// Many GetContext waiters, some cancelled: every key reaches one of the others.
func TestGetContextConcurrent(t *testing.T) {
	q := newQueue(t)
	const waiters, keys = 6, 40
	var wg sync.WaitGroup
	var mu sync.Mutex
	got := map[string]int{}
	ctx, cancel := context.WithCancel(context.Background())
	for i := 0; i < waiters; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			c := ctx
			if i%2 == 1 {
				var cc context.CancelFunc
				c, cc = context.WithTimeout(ctx, time.Duration(i)*time.Millisecond)
				defer cc()
			}
			for {
				k, err := q.GetContext(c)
				if err != nil {
					if errors.Is(err, context.DeadlineExceeded) {
						c = ctx
						continue
					}
					return
				}
				mu.Lock()
				got[k]++
				mu.Unlock()
				q.Done(k)
			}
		}(i)
	}
	for i := 0; i < keys; i++ {
		q.Add(fmt.Sprintf("k%d", i))
	}
	eventually(t, "all keys taken", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(got) == keys
	})
	cancel()
	wg.Wait()
	for k, n := range got {
		if n != 1 {
			t.Errorf("%s taken %d times", k, n)
		}
	}
}

func TestDoneGet(t *testing.T) {
	q := newQueue(t)
	q.Add("a")
	q.Add("b")
	expectGet(t, q, "a")
	next, res, err := q.DoneGet("a")
	if err != nil || next != "b" || res != Finished {
		t.Fatalf("DoneGet(a) = %q, %v, %v", next, res, err)
	}
	q.Add("b") // dirty while processing
	next, res, err = q.DoneGet("b")
	if err != nil || next != "b" || res != Requeued {
		t.Fatalf("DoneGet(b) = %q, %v, %v", next, res, err)
	}
	// A done that fails changes nothing and takes nothing.
	_, res, err = q.DoneGet("nope")
	if res != DoneNotRun {
		t.Fatalf("DoneGet(nope) result %v", res)
	}
	expectErrno(t, "DoneGet of a key not processing", err, enoent)
	// The done runs, the get finds a shut-down queue.
	q.ShutDown()
	next, res, err = q.DoneGet("b")
	if res != Finished || next != "" {
		t.Fatalf("DoneGet(b) at shutdown = %q, %v", next, res)
	}
	expectErrno(t, "DoneGet at shutdown", err, eshutdown)
	if st := mustStats(t, q); st.Processing != 0 || st.Items != 0 {
		t.Fatalf("stats %+v", st)
	}
}

func TestBatches(t *testing.T) {
	q := newQueue(t)
	keys := make([]string, 0, 2500)
	for i := 0; i < 2500; i++ {
		keys = append(keys, fmt.Sprintf("ns/batch-%04d", i))
	}
	res, err := q.AddBatch(append(keys, keys[0], keys[1]))
	if err != nil || len(res) != 2502 {
		t.Fatalf("AddBatch: %d results, %v", len(res), err)
	}
	if res[0] != Queued || res[2499] != Queued || res[2500] != Duplicate || res[2501] != Duplicate {
		t.Fatalf("AddBatch results %v %v %v %v", res[0], res[2499], res[2500], res[2501])
	}
	expectLen(t, q, 2500)
	var got []string
	for len(got) < len(keys) {
		ctx, cancel := context.WithTimeout(context.Background(), patience)
		b, err := q.GetBatch(ctx, 64)
		cancel()
		if err != nil || len(b) == 0 || len(b) > 64 {
			t.Fatalf("GetBatch: %d keys, %v", len(b), err)
		}
		got = append(got, b...)
	}
	for i := range keys {
		if got[i] != keys[i] {
			t.Fatalf("key %d: got %q, want %q (FIFO)", i, got[i], keys[i])
		}
	}
	// A done batch stops at the first key that is not processing.
	bad := append(append([]string{}, got[:10]...), "not-processing")
	bad = append(bad, got[10:20]...)
	dres, err := q.DoneBatch(bad)
	if len(dres) != 10 {
		t.Fatalf("DoneBatch with a bad key at 10: %d results", len(dres))
	}
	expectErrno(t, "DoneBatch", err, enoent)
	if !strings.Contains(err.Error(), "not-processing") {
		t.Fatalf("error %q does not name the key", err)
	}
	dres, err = q.DoneBatch(got[10:])
	if err != nil || len(dres) != len(got)-10 || dres[0] != Finished {
		t.Fatalf("DoneBatch: %d, %v", len(dres), err)
	}
	if st := mustStats(t, q); st.Items != 0 || st.Gets != 2500 || st.Dones != 2500 {
		t.Fatalf("stats %+v", st)
	}
	// Empty queue: a cancelled or timed-out get batch.
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	_, err = q.GetBatch(ctx, 8)
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("GetBatch on an empty queue: %v", err)
	}
	// Bad arguments.
	for _, n := range []int{0, -1, BatchMax + 1} {
		_, err = q.GetBatch(context.Background(), n)
		expectErrno(t, "GetBatch size", err, einval)
	}
	_, err = q.AddBatch([]string{"ok", ""})
	expectErrno(t, "AddBatch with an empty key", err, einval)
	_, err = q.DoneBatch([]string{strings.Repeat("x", KeyMax+1)})
	expectErrno(t, "DoneBatch with a long key", err, einval)
	if r, err := q.AddBatch(nil); r != nil || err != nil {
		t.Fatalf("AddBatch(nil) = %v, %v", r, err)
	}
	// After shutdown.
	q.ShutDown()
	_, err = q.AddBatch([]string{"x"})
	expectErrno(t, "AddBatch after shutdown", err, eshutdown)
	_, err = q.GetBatch(context.Background(), 4)
	expectErrno(t, "GetBatch after shutdown", err, eshutdown)
}

func TestReadiness(t *testing.T) {
	q := newQueue(t)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	err := q.WaitReady(ctx)
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("WaitReady on an empty queue: %v", err)
	}
	ready := q.Ready(context.Background())
	select {
	case err := <-ready:
		t.Fatalf("Ready fired on an empty queue: %v", err)
	default:
	}
	q.Add("k")
	select {
	case err := <-ready:
		if err != nil {
			t.Fatalf("Ready: %v", err)
		}
	case <-time.After(patience):
		t.Fatal("Ready did not fire after an add")
	}
	// The raw descriptor, for epoll users.
	fds := []pollFd{{fd: int32(q.Fd()), events: pollIn}}
	n, _, e := syscall.Syscall(syscall.SYS_POLL, uintptr(unsafe.Pointer(&fds[0])), 1, 0)
	if e != 0 || n != 1 || fds[0].revents&pollIn == 0 {
		t.Fatalf("poll(Fd()) = %d, %v, revents %#x", n, e, fds[0].revents)
	}
	expectGet(t, q, "k")
	fds[0].revents = 0
	n, _, _ = syscall.Syscall(syscall.SYS_POLL, uintptr(unsafe.Pointer(&fds[0])), 1, 0)
	if n != 0 {
		t.Fatalf("poll(Fd()) = %d with nothing queued", n)
	}
	q.Done("k")
	// A shut-down queue is readable: a get returns at once.
	q.ShutDown()
	ctx, cancel = context.WithTimeout(context.Background(), patience)
	defer cancel()
	if err := q.WaitReady(ctx); err != nil {
		t.Fatalf("WaitReady after shutdown: %v", err)
	}
}

func TestStatsAndVersion(t *testing.T) {
	q := newQueue(t, WithMaxItems(100))
	q.Add("a")
	q.Add("a")
	q.AddAfter("w", time.Hour)
	expectGet(t, q, "a")
	st := mustStats(t, q)
	if st.Adds != 1 || st.Dedups != 1 || st.Gets != 1 || st.Processing != 1 || st.Waiting != 1 ||
		st.Items != 2 || st.MaxItems != 100 || st.Retries != 1 || st.ShuttingDown {
		t.Fatalf("stats %+v", st)
	}
	q.Done("a")
	st = mustStats(t, q)
	var lat, work uint64
	for i := range st.QueueLatency {
		lat += st.QueueLatency[i]
		work += st.WorkDuration[i]
	}
	if st.Dones != 1 || lat != 1 || work != 1 {
		t.Fatalf("dones %d, latency observations %d, work observations %d", st.Dones, lat, work)
	}
	v, err := ReadVersion()
	if err != nil || v.ABI != abiVersion || v.KeyMax != KeyMax || v.NameMax != NameMax ||
		v.Features&FeatureCore == 0 {
		t.Fatalf("ReadVersion = %+v, %v", v, err)
	}
	names, err := List()
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, n := range names {
		found = found || n == q.Name()
	}
	if !found {
		t.Fatalf("List() = %v, missing %s", names, q.Name())
	}
}

// Create, Open and NewRateLimitingQueue, and their errors.
func TestCreateOpen(t *testing.T) {
	q := newQueue(t)
	_, err := Create(q.Name())
	expectErrno(t, "Create of a taken name", err, syscall.EEXIST)
	_, err = Open(queueName(t) + "-missing")
	expectErrno(t, "Open of a missing queue", err, enoent)
	for _, name := range []string{"", strings.Repeat("n", NameMax), "a\x00b", ".dot", "sl/ash"} {
		_, err = Create(name)
		expectErrno(t, fmt.Sprintf("Create(%q)", name), err, einval)
	}
	_, err = Open("x", WithDevice("/nonexistent/kwq"))
	expectErrno(t, "Open of a missing device", err, enoent)

	o, err := Open(q.Name())
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	q.Add("shared")
	expectGet(t, o, "shared")
	// Leased to o: q cannot end it.
	_, err = q.DoneWithResult("shared")
	expectErrno(t, "Done of a key leased to another handle", err, syscall.ENOENT)
	o.Done("shared")

	name := queueName(t)
	n1, err := NewRateLimitingQueue(name, WithRateLimiter(DefaultItemBasedRateLimiter()))
	if err != nil {
		t.Fatal(err)
	}
	defer n1.Close()
	defer n1.Destroy()
	n1.AddRateLimited("fail")
	n2, err := NewRateLimitingQueue(name)
	if err != nil {
		t.Fatal(err)
	}
	defer n2.Close()
	if n := n2.NumRequeues("fail"); n != 1 {
		t.Fatalf("a second handle sees NumRequeues %d, want 1", n)
	}
}

// Nothing panics on a bad key, and every method reports it.
func TestBadKeys(t *testing.T) {
	q := newQueue(t)
	for _, key := range []string{"", strings.Repeat("k", KeyMax+1)} {
		q.Add(key)
		q.AddAfter(key, time.Second)
		q.AddRateLimited(key)
		q.Forget(key)
		q.Done(key)
		if n := q.NumRequeues(key); n != 0 {
			t.Fatalf("NumRequeues(bad) = %d", n)
		}
		calls := map[string]error{}
		_, calls["AddWithResult"] = q.AddWithResult(key)
		_, calls["AddWithPolicy"] = q.AddWithPolicy(key, PolicyKeep)
		_, calls["AddAfterWithResult"] = q.AddAfterWithResult(key, 0, false)
		_, calls["AddRateLimitedWithResult"] = q.AddRateLimitedWithResult(key)
		_, calls["ForgetWithResult"] = q.ForgetWithResult(key)
		_, calls["Cancel"] = q.Cancel(key)
		_, calls["DoneWithResult"] = q.DoneWithResult(key)
		_, _, calls["DoneGet"] = q.DoneGet(key)
		_, calls["AddBatch"] = q.AddBatch([]string{key})
		_, calls["DoneBatch"] = q.DoneBatch([]string{key})
		for name, err := range calls {
			expectErrno(t, name, err, einval)
		}
	}
	_, err := q.AddWithPolicy("k", Policy(7))
	expectErrno(t, "AddWithPolicy(7)", err, einval)
	// The longest key works.
	long := strings.Repeat("L", KeyMax)
	expectAdd(t, q, long, Queued)
	expectGet(t, q, long)
	q.Done(long)
	expectLen(t, q, 0)
	if st := mustStats(t, q); st.Items != 0 {
		t.Fatalf("items = %d", st.Items)
	}
}

// Every method on a closed handle: no panic, errors wrap ErrClosed and
// EBADF, Get reports shutdown.
func TestClosedHandle(t *testing.T) {
	q := newQueue(t)
	o, err := Open(q.Name())
	if err != nil {
		t.Fatal(err)
	}
	if err := o.Close(); err != nil {
		t.Fatal(err)
	}
	if err := o.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	o.Add("k")
	o.AddAfter("k", time.Second)
	o.AddRateLimited("k")
	o.Forget("k")
	o.Done("k")
	o.ShutDown()
	o.ShutDownWithDrain()
	if n := o.Len(); n != 0 {
		t.Fatalf("Len = %d", n)
	}
	if n := o.NumRequeues("k"); n != 0 {
		t.Fatalf("NumRequeues = %d", n)
	}
	if !o.ShuttingDown() {
		t.Fatal("ShuttingDown() false on a closed handle")
	}
	if k, quit := o.Get(); !quit || k != "" {
		t.Fatalf("Get = %q, %v", k, quit)
	}
	calls := map[string]error{}
	_, calls["AddWithResult"] = o.AddWithResult("k")
	_, calls["DoneWithResult"] = o.DoneWithResult("k")
	_, calls["TryGet"] = o.TryGet()
	_, calls["GetContext"] = o.GetContext(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_, calls["GetContext with a deadline"] = o.GetContext(ctx)
	_, _, calls["DoneGet"] = o.DoneGet("k")
	_, calls["AddBatch"] = o.AddBatch([]string{"k"})
	_, calls["GetBatch"] = o.GetBatch(ctx, 2)
	_, calls["DoneBatch"] = o.DoneBatch([]string{"k"})
	_, calls["Stats"] = o.Stats()
	_, calls["Cancel"] = o.Cancel("k")
	calls["WaitReady"] = o.WaitReady(ctx)
	calls["Ready"] = <-o.Ready(ctx)
	calls["Drain"] = o.Drain(ctx, false)
	calls["Destroy"] = o.Destroy()
	calls["ShutDownWithError"] = o.ShutDownWithError()
	for name, err := range calls {
		if !errors.Is(err, ErrClosed) || !errors.Is(err, syscall.EBADF) {
			t.Errorf("%s on a closed handle: %v", name, err)
		}
	}
	// The queue itself is untouched.
	if q.ShuttingDown() {
		t.Fatal("closing a handle shut the queue down")
	}
}

// A destroyed queue: every handle's calls fail with EIDRM, Get reports
// shutdown, a blocked Get wakes.
func TestDestroyed(t *testing.T) {
	requireDevice(t)
	q, err := Create(queueName(t))
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	o, err := Open(q.Name())
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	blocked := make(chan bool, 1)
	go func() {
		_, quit := o.Get()
		blocked <- quit
	}()
	time.Sleep(10 * time.Millisecond) // not needed for correctness
	if err := q.Destroy(); err != nil {
		t.Fatal(err)
	}
	select {
	case quit := <-blocked:
		if !quit {
			t.Fatal("Get on a destroyed queue returned a key")
		}
	case <-time.After(patience):
		t.Fatal("Destroy did not wake a blocked Get")
	}
	_, err = o.AddWithResult("k")
	expectErrno(t, "add to a destroyed queue", err, syscall.EIDRM)
	if !o.ShuttingDown() {
		t.Fatal("ShuttingDown() false on a destroyed queue")
	}
	if _, quit := o.Get(); !quit {
		t.Fatal("Get did not report shutdown")
	}
	_, err = Open(q.Name())
	expectErrno(t, "Open of a destroyed queue", err, enoent)
}

// Drain with a deadline, and with waiting keys flushed.
func TestDrain(t *testing.T) {
	q := newQueue(t)
	q.Add("held")
	expectGet(t, q, "held")
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	err := q.Drain(ctx, false)
	cancel()
	expectErrno(t, "Drain with a key held", err, syscall.ETIMEDOUT)
	q.Done("held")

	q2 := newQueue(t)
	q2.AddAfter("w", time.Hour)
	done := make(chan error, 1)
	go func() { done <- q2.Drain(context.Background(), true) }()
	if k := getWithin(t, q2); k != "w" {
		t.Fatalf("flushed key %q", k)
	}
	q2.Done("w")
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Drain: %v", err)
		}
	case <-time.After(patience):
		t.Fatal("Drain did not return")
	}
}

// A worker that hangs: its key comes back after the processing timeout.
// Its late Done fails with ENOENT while the key waits to be handed out
// again and while another handle holds it, and ends the new hand-out when
// that went through the same handle.
func TestProcessingTimeout(t *testing.T) {
	t.Parallel()
	// 1 s: the second hand-out must outlast the checks that follow it.
	q := newQueue(t, WithProcessingTimeout(time.Second))
	other, err := Open(q.Name())
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	expired := func(n uint64) {
		t.Helper()
		eventually(t, "the hand-out to expire", func() bool {
			st := mustStats(t, q)
			return st.ProcessingExpiries == n && st.Processing == 0 && st.Queued == 1
		})
	}

	// Back in the queue, not handed out yet: ENOENT.
	q.Add("slow")
	start := time.Now()
	expectGet(t, q, "slow")
	expired(1)
	if d := time.Since(start); d < time.Second {
		t.Fatalf("the key came back after %v", d)
	}
	_, err = q.DoneWithResult("slow")
	expectErrno(t, "late Done of a key back in the queue", err, enoent)

	// Handed out again through the same handle: the late Done ends that
	// hand-out, and the second worker's Done finds nothing.
	expectGet(t, q, "slow")
	if r, err := q.DoneWithResult("slow"); err != nil || r != Finished {
		t.Fatalf("late Done on the same handle = %v, %v; want finished", r, err)
	}
	if st := mustStats(t, q); st.Processing != 0 || st.Queued != 0 {
		t.Fatalf("processing %d, queued %d after the late Done; want 0, 0", st.Processing, st.Queued)
	}
	_, err = q.DoneWithResult("slow")
	expectErrno(t, "the second worker's Done", err, enoent)

	// Handed out again through another handle: the late Done fails and
	// the new hand-out stays.
	q.Add("slow")
	expectGet(t, q, "slow")
	expired(2)
	expectGet(t, other, "slow")
	_, err = q.DoneWithResult("slow")
	expectErrno(t, "late Done of a key another handle holds", err, enoent)
	if st := mustStats(t, q); st.Processing != 1 {
		t.Fatalf("processing %d after a refused late Done; want 1", st.Processing)
	}
	if r, err := other.DoneWithResult("slow"); err != nil || r != Finished {
		t.Fatalf("the second worker's Done = %v, %v; want finished", r, err)
	}
}

// A controller that shut its queue down finds it shut down after a
// restart: NewRateLimitingQueue says so (ESHUTDOWN) rather than return a
// queue whose Get reports shutdown at once. One that closed its handle
// finds its keys; a shut-down queue destroyed starts afresh.
func TestRestartAfterShutDown(t *testing.T) {
	t.Parallel()
	requireDevice(t)
	name := queueName(t)
	q, err := NewRateLimitingQueue(name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if o, err := Open(name); err == nil {
			o.Destroy()
			o.Close()
		}
	})
	q.Add("kept")
	q.Close()
	q, err = NewRateLimitingQueue(name)
	if err != nil {
		t.Fatalf("NewRateLimitingQueue after Close: %v", err)
	}
	expectGet(t, q, "kept")
	q.Done("kept")
	q.Add("left")
	q.ShutDown()
	q.Close()

	_, err = NewRateLimitingQueue(name)
	expectErrno(t, "NewRateLimitingQueue of a shut-down queue", err, syscall.ESHUTDOWN)
	// Open still reaches it, to destroy it.
	o, err := Open(name)
	if err != nil {
		t.Fatalf("Open of a shut-down queue: %v", err)
	}
	if !o.ShuttingDown() || o.Len() != 1 {
		t.Fatalf("ShuttingDown %v, Len %d; want true, 1", o.ShuttingDown(), o.Len())
	}
	if err := o.Destroy(); err != nil {
		t.Fatal(err)
	}
	o.Close()
	q, err = NewRateLimitingQueue(name)
	if err != nil {
		t.Fatalf("NewRateLimitingQueue after Destroy: %v", err)
	}
	defer q.Close()
	expectLen(t, q, 0)
	expectAdd(t, q, "new", Queued)
}

// Errors print what failed.
func TestErrorText(t *testing.T) {
	e := &Error{Op: "add", Queue: "q", Key: "k", Err: syscall.ESHUTDOWN}
	if s := e.Error(); s != `kwq: add "q" key "k": `+syscall.ESHUTDOWN.Error() {
		t.Fatalf("Error() = %q", s)
	}
	if !errors.Is(e, syscall.ESHUTDOWN) || errors.Is(e, syscall.EIDRM) {
		t.Fatal("errors.Is on *Error")
	}
}
