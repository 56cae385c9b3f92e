// SPDX-License-Identifier: GPL-2.0

package kwq

// The scenarios of client-go's delaying_queue_test.go and
// rate_limiting_queue_test.go on real time: deadlines are checked as lower
// bounds (the kernel never fires early), never as upper bounds.

import (
	"math"
	"syscall"
	"testing"
	"time"
)

const (
	eshutdown = syscall.ESHUTDOWN
	enoent    = syscall.ENOENT
	ecanceled = syscall.ECANCELED
	einval    = syscall.EINVAL
)

// client-go TestSimpleQueue: an AddAfter key is not there before its
// deadline, then is, once.
func TestSimpleQueue(t *testing.T) {
	t.Parallel()
	q := newQueue(t)
	const d = 4 * time.Second // the checks before it must come first
	start := time.Now()
	q.AddAfter("foo", d)
	expectLen(t, q, 0)
	if st := mustStats(t, q); st.Waiting != 1 {
		t.Fatalf("waiting = %d, want 1", st.Waiting)
	}
	if k := getWithin(t, q); k != "foo" {
		t.Fatalf("got %q", k)
	}
	if el := time.Since(start); el < d {
		t.Fatalf("foo came after %v, before its %v delay", el, d)
	}
	q.Done("foo")
	expectLen(t, q, 0)
	if st := mustStats(t, q); st.Waiting != 0 || st.Fired != 1 {
		t.Fatalf("waiting %d fired %d, want 0 and 1", st.Waiting, st.Fired)
	}
}

// client-go TestDeduping: one waiting entry per key, the earliest deadline
// wins; kwq reports which.
func TestDeduping(t *testing.T) {
	t.Parallel()
	q := newQueue(t)
	start := time.Now()
	expectAfter := func(key string, d time.Duration, replace bool, want AddResult) {
		t.Helper()
		r, err := q.AddAfterWithResult(key, d, replace)
		if err != nil || r != want {
			t.Fatalf("AddAfter(%s, %v, %v) = %v, %v; want %v", key, d, replace, r, err, want)
		}
	}
	expectAfter("foo", 50*time.Second, false, Waiting)
	expectAfter("foo", 100*time.Second, false, WaitKept)
	if st := mustStats(t, q); st.Waiting != 1 {
		t.Fatalf("waiting = %d, want 1", st.Waiting)
	}
	expectAfter("foo", time.Second, false, WaitMoved)
	if k := getWithin(t, q); k != "foo" || time.Since(start) < time.Second {
		t.Fatalf("got %q after %v", k, time.Since(start))
	}
	q.Done("foo")
	if st := mustStats(t, q); st.Waiting != 0 || st.Queued != 0 {
		t.Fatalf("after foo fired: waiting %d queued %d", st.Waiting, st.Queued)
	}

	// kwq extras: postpone with replace, cancel.
	expectAfter("bar", 30*time.Second, false, Waiting)
	expectAfter("bar", time.Hour, true, WaitMoved)
	if ok, err := q.Cancel("bar"); err != nil || !ok {
		t.Fatalf("Cancel(bar) = %v, %v", ok, err)
	}
	if ok, err := q.Cancel("bar"); err != nil || ok {
		t.Fatalf("second Cancel(bar) = %v, %v", ok, err)
	}
	if st := mustStats(t, q); st.Waiting != 0 || st.Cancels != 1 {
		t.Fatalf("waiting %d cancels %d", st.Waiting, st.Cancels)
	}
}

// client-go TestAddTwoFireEarly and TestCopyShifting: keys come out in
// deadline order, whatever the order of the AddAfter calls.
func TestFireOrder(t *testing.T) {
	t.Parallel()
	q := newQueue(t)
	// Each deadline lies between the times around its call plus the
	// delay; two keys must come in order only where those ranges do not
	// overlap, which without a stall of 2 s is every pair.
	keys := []string{"foo", "bar", "baz"}
	delays := []time.Duration{5 * time.Second, 3 * time.Second, time.Second}
	lo, hi := map[string]time.Time{}, map[string]time.Time{}
	for i, k := range keys {
		lo[k] = time.Now().Add(delays[i])
		q.AddAfter(k, delays[i])
		hi[k] = time.Now().Add(delays[i])
	}
	var got []string
	seen := map[string]bool{}
	for range keys {
		k := getWithin(t, q)
		if _, ok := lo[k]; !ok || seen[k] {
			t.Fatalf("got %q after %v", k, got)
		}
		seen[k] = true
		got = append(got, k)
		q.Done(k)
	}
	checked := 0
	for i, a := range got {
		for _, b := range got[i+1:] {
			if hi[b].Before(lo[a]) {
				t.Fatalf("got %v: %s (due by %v) after %s (due from %v)",
					got, b, hi[b].Format(time.StampMilli), a, lo[a].Format(time.StampMilli))
			}
			if hi[a].Before(lo[b]) {
				checked++
			}
		}
	}
	if checked < 3 {
		t.Logf("a stalled machine: the order of only %d of 3 pairs was certain", checked)
	}
}

// AddAfter with d <= 0 adds now, like client-go.
func TestAddAfterNow(t *testing.T) {
	q := newQueue(t)
	for _, d := range []time.Duration{0, -time.Second} {
		r, err := q.AddAfterWithResult("now", d, false)
		if err != nil || r != Queued {
			t.Fatalf("AddAfter(now, %v) = %v, %v", d, r, err)
		}
		expectLen(t, q, 1)
		expectGet(t, q, "now")
		q.Done("now")
	}
}

// Policies: an Add of a waiting key runs it once now (promote, the
// default), now and again later (keep, client-go), or only at the deadline
// (strict).
func TestAddOfWaitingKey(t *testing.T) {
	t.Run("promote", func(t *testing.T) {
		q := newQueue(t)
		q.AddAfter("k", time.Hour)
		expectAdd(t, q, "k", Queued)
		if st := mustStats(t, q); st.Waiting != 0 || st.Queued != 1 {
			t.Fatalf("waiting %d queued %d, want 0 1", st.Waiting, st.Queued)
		}
	})
	t.Run("keep", func(t *testing.T) {
		t.Parallel()
		q := newQueue(t, WithPolicy(PolicyKeep))
		start := time.Now()
		q.AddAfter("k", 3*time.Second)
		expectAdd(t, q, "k", Queued)
		expectGet(t, q, "k")
		q.Done("k")
		if k := getWithin(t, q); k != "k" || time.Since(start) < 3*time.Second {
			t.Fatalf("second run %q after %v", k, time.Since(start))
		}
		q.Done("k")
	})
	t.Run("strict", func(t *testing.T) {
		q := newQueue(t, WithPolicy(PolicyStrict))
		q.AddAfter("k", time.Hour)
		expectAdd(t, q, "k", Absorbed)
		expectLen(t, q, 0)
		if r, err := q.AddWithPolicy("k", PolicyPromote); err != nil || r != Queued {
			t.Fatalf("AddWithPolicy(promote) = %v, %v", r, err)
		}
		expectLen(t, q, 1)
	})
}

// client-go TestRateLimitingQueue (a fake clock there; here delays of
// an hour that never fire during the test).
func TestRateLimitingQueue(t *testing.T) {
	q := newQueue(t, WithRateLimiter(MaxOf(ExponentialLimiter(time.Hour, 2*time.Hour))))
	q.AddRateLimited("one")
	if st := mustStats(t, q); st.Waiting != 1 || st.Queued != 0 {
		t.Fatalf("waiting %d queued %d after AddRateLimited, want 1 0", st.Waiting, st.Queued)
	}
	q.AddRateLimited("one")
	if n := q.NumRequeues("one"); n != 2 {
		t.Fatalf("NumRequeues(one) = %d, want 2", n)
	}
	q.AddRateLimited("two")
	if n := q.NumRequeues("two"); n != 1 {
		t.Fatalf("NumRequeues(two) = %d, want 1", n)
	}
	q.Forget("one")
	if n := q.NumRequeues("one"); n != 0 {
		t.Fatalf("NumRequeues(one) = %d after Forget, want 0", n)
	}
	if n := q.NumRequeues("two"); n != 1 {
		t.Fatalf("NumRequeues(two) = %d, want 1", n)
	}
	if had, err := q.ForgetWithResult("two"); err != nil || !had {
		t.Fatalf("ForgetWithResult(two) = %v, %v", had, err)
	}
	if had, err := q.ForgetWithResult("two"); err != nil || had {
		t.Fatalf("second ForgetWithResult(two) = %v, %v", had, err)
	}
	// Forget does not remove what waits.
	if st := mustStats(t, q); st.Waiting != 2 || st.Forgets != 2 || st.RateLimited != 3 {
		t.Fatalf("waiting %d forgets %d rate_limited %d, want 2 2 3", st.Waiting, st.Forgets, st.RateLimited)
	}
	if n := q.NumRequeues("unknown"); n != 0 {
		t.Fatalf("NumRequeues(unknown) = %d", n)
	}
	// A retry of a key that failed before comes (lower bound only).
	r := newQueue(t, WithRateLimiter(MaxOf(ExponentialLimiter(10*time.Millisecond, time.Second))))
	start := time.Now()
	r.AddRateLimited("k")
	if k := getWithin(t, r); k != "k" || time.Since(start) < 10*time.Millisecond {
		t.Fatalf("got %q after %v", k, time.Since(start))
	}
	r.Done("k")
}

// The slow tests of real delays run in parallel (t.Parallel), each on its
// own queue.

// The backoff grows exponentially: the second retry waits at least twice
// the base (lower bounds only).
func TestBackoffGrows(t *testing.T) {
	t.Parallel()
	const base = 200 * time.Millisecond
	q := newQueue(t, WithRateLimiter(MaxOf(ExponentialLimiter(base, time.Minute))))
	for i, min := range []time.Duration{base, 2 * base, 4 * base} {
		start := time.Now()
		if r, err := q.AddRateLimitedWithResult("k"); err != nil || r != Waiting {
			t.Fatalf("AddRateLimited #%d = %v, %v", i, r, err)
		}
		k := getWithin(t, q)
		if el := time.Since(start); k != "k" || el < min {
			t.Fatalf("retry %d: %q after %v, want >= %v", i, k, el, min)
		}
		q.Done(k)
	}
	if st := mustStats(t, q); st.Retries != 3 || st.RateLimited != 3 {
		t.Fatalf("retries %d rate_limited %d, want 3 3", st.Retries, st.RateLimited)
	}
}

// Limiters the kernel must refuse, and the ones client-go ships.
func TestRateLimiterOptions(t *testing.T) {
	requireDevice(t)
	good := []RateLimiter{
		DefaultControllerRateLimiter(),
		DefaultItemBasedRateLimiter(),
		MaxOf(FastSlowLimiter(time.Millisecond, time.Second, 3)),
		MaxOf(BucketLimiter(math.Inf(1), 0)).WithMaxWait(time.Minute),
		{},
	}
	for i, rl := range good {
		q, err := Create(queueName(t), WithRateLimiter(rl))
		if err != nil {
			t.Fatalf("limiter %d: %v", i, err)
		}
		q.Destroy()
		q.Close()
	}
	bad := []RateLimiter{
		MaxOf(ExponentialLimiter(0, time.Second)),
		MaxOf(ExponentialLimiter(time.Second, time.Millisecond)),
		MaxOf(BucketLimiter(0, 10)),
		MaxOf(FastSlowLimiter(time.Millisecond, time.Second, -1)),
		MaxOf(DefaultItemBasedRateLimiter().Limiters[0], DefaultItemBasedRateLimiter().Limiters[0],
			DefaultItemBasedRateLimiter().Limiters[0], DefaultItemBasedRateLimiter().Limiters[0],
			DefaultItemBasedRateLimiter().Limiters[0]),
		DefaultItemBasedRateLimiter().WithMaxWait(-1),
	}
	for i, rl := range bad {
		q, err := Create(queueName(t), WithRateLimiter(rl))
		if err == nil {
			q.Destroy()
			q.Close()
			t.Fatalf("bad limiter %d was accepted", i)
		}
		expectErrno(t, "bad limiter", err, einval)
	}
}
