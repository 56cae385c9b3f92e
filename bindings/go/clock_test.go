// SPDX-License-Identifier: GPL-2.0

package kwq

// Queues on a manual clock (WithManualClock, Step): client-go's
// delaying-queue scenarios with its fake clock's exact steps, the
// default limiter's backoffs, and the errors. Real time only ever has to
// pass for a key NOT to become ready.

import (
	"context"
	"errors"
	"syscall"
	"testing"
	"time"
)

func mustStep(t *testing.T, q *Queue, d time.Duration) {
	t.Helper()
	if err := q.Step(d); err != nil {
		t.Fatalf("Step(%v): %v", d, err)
	}
}

// client-go TestAddTwoFireEarly with its fake clock's steps: each key is
// ready after the step that reaches its deadline, and not a nanosecond
// before.
func TestManualClockAddAfter(t *testing.T) {
	t.Parallel()
	q := newQueue(t, WithManualClock())
	if now, err := q.ClockNow(); err != nil || now != 0 {
		t.Fatalf("ClockNow = %v, %v; want 0", now, err)
	}
	q.AddAfter("foo", time.Second)
	q.AddAfter("bar", 50*time.Millisecond)
	time.Sleep(100 * time.Millisecond)
	expectLen(t, q, 0)
	mustStep(t, q, 50*time.Millisecond-1)
	expectLen(t, q, 0)
	mustStep(t, q, 1)
	expectLen(t, q, 1)
	if k, err := q.TryGet(); err != nil || k != "bar" {
		t.Fatalf("TryGet = %q, %v; want bar", k, err)
	}
	q.Done("bar")
	q.AddAfter("baz", 2*time.Second)
	mustStep(t, q, time.Second)
	if k, err := q.TryGet(); err != nil || k != "foo" {
		t.Fatalf("TryGet = %q, %v; want foo", k, err)
	}
	q.Done("foo")
	mustStep(t, q, 2*time.Second)
	if k, err := q.TryGet(); err != nil || k != "baz" {
		t.Fatalf("TryGet = %q, %v; want baz", k, err)
	}
	q.Done("baz")
	if now, err := q.ClockNow(); err != nil || now != 3050*time.Millisecond {
		t.Fatalf("ClockNow = %v, %v; want 3.05s", now, err)
	}
}

// A Get blocked in another goroutine takes the key the step makes ready.
func TestManualClockWakesGet(t *testing.T) {
	t.Parallel()
	q := newQueue(t, WithManualClock())
	q.AddAfter("k", time.Hour)
	got := make(chan string, 1)
	go func() {
		k, _ := q.Get()
		got <- k
	}()
	time.Sleep(50 * time.Millisecond)
	select {
	case k := <-got:
		t.Fatalf("Get returned %q before the step", k)
	default:
	}
	mustStep(t, q, time.Hour)
	select {
	case k := <-got:
		if k != "k" {
			t.Fatalf("Get = %q", k)
		}
	case <-time.After(patience):
		t.Fatal("Get did not return after the step")
	}
}

// The default controller limiter: 5 ms, 10 ms, ... of manual time.
func TestManualClockRateLimited(t *testing.T) {
	t.Parallel()
	q := newQueue(t, WithManualClock())
	for i, d := range []time.Duration{5 * time.Millisecond, 10 * time.Millisecond, 20 * time.Millisecond} {
		q.AddRateLimited("r")
		mustStep(t, q, d-1)
		expectLen(t, q, 0)
		mustStep(t, q, 1)
		expectLen(t, q, 1)
		if k, err := q.TryGet(); err != nil || k != "r" {
			t.Fatalf("retry %d: TryGet = %q, %v", i, k, err)
		}
		q.Done("r")
	}
	if n := q.NumRequeues("r"); n != 3 {
		t.Fatalf("NumRequeues = %d, want 3", n)
	}
}

// A Get's context deadline is real time: it expires without a step.
func TestManualClockGetDeadlineIsRealTime(t *testing.T) {
	t.Parallel()
	q := newQueue(t, WithManualClock())
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := q.GetContext(ctx); err == nil {
		t.Fatal("GetContext returned a key from an empty queue")
	}
}

func TestManualClockErrors(t *testing.T) {
	t.Parallel()
	plain := newQueue(t)
	if err := plain.Step(time.Second); !errors.Is(err, syscall.EOPNOTSUPP) {
		t.Fatalf("Step on a queue without a manual clock: %v, want EOPNOTSUPP", err)
	}
	q := newQueue(t, WithManualClock())
	mustStep(t, q, time.Second)
	if err := q.Step(-1); !errors.Is(err, syscall.EINVAL) {
		t.Fatalf("Step(-1): %v, want EINVAL", err)
	}
	if err := q.Step(ClockMax); !errors.Is(err, syscall.EOVERFLOW) {
		t.Fatalf("Step(ClockMax) after 1s: %v, want EOVERFLOW", err)
	}
	if now, err := q.ClockNow(); err != nil || now != time.Second {
		t.Fatalf("ClockNow = %v, %v; want 1s (refused steps change nothing)", now, err)
	}
}
