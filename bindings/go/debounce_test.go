// SPDX-License-Identifier: GPL-2.0

package kwq

// AddDebounced on real time: deadlines are checked as lower bounds (the
// kernel never fires early), never as upper bounds.

import (
	"testing"
	"time"
)

func requireDebounce(t *testing.T) {
	t.Helper()
	requireDevice(t)
	v, err := ReadVersion()
	if err != nil {
		t.Fatalf("ReadVersion: %v", err)
	}
	if v.Features&FeatureDebounce == 0 {
		t.Fatalf("features %#x: FeatureDebounce missing", v.Features)
	}
}

// A burst of debounced adds runs the key once, at least d after the last.
func TestDebounceBurst(t *testing.T) {
	t.Parallel()
	requireDebounce(t)
	q := newQueue(t)
	// 4 s: a stall of the guest between two adds must not end the burst.
	const d, maxWait, n = 4 * time.Second, time.Minute, 20
	if r, err := q.AddDebounced("k", d, maxWait); err != nil || r != Waiting {
		t.Fatalf("first AddDebounced = %v, %v; want Waiting", r, err)
	}
	// last is read before each add: the kernel's quiet time starts inside
	// the add, after it, however long the thread stalls on the way back.
	var last time.Time
	for i := 1; i < n; i++ {
		time.Sleep(5 * time.Millisecond)
		last = time.Now()
		if r, err := q.AddDebounced("k", d, maxWait); err != nil || r != WaitMoved {
			t.Fatalf("AddDebounced #%d = %v, %v; want WaitMoved", i, r, err)
		}
	}
	expectLen(t, q, 0)
	if k := getWithin(t, q); k != "k" {
		t.Fatalf("got %q", k)
	}
	if el := time.Since(last); el < d-5*time.Millisecond {
		t.Fatalf("k came %v after the last add, before its %v quiet time", el, d)
	}
	q.Done("k")
	st := mustStats(t, q)
	if st.Gets != 1 || st.Fired != 1 || st.Debounced != n-1 || st.DebounceCapped != 0 {
		t.Fatalf("gets %d fired %d debounced %d capped %d; want 1 1 %d 0",
			st.Gets, st.Fired, st.Debounced, st.DebounceCapped, n-1)
	}
}

// A key that is never quiet still runs, no earlier than its max wait.
func TestDebounceNeverQuiet(t *testing.T) {
	t.Parallel()
	requireDebounce(t)
	q := newQueue(t)
	const d, maxWait = 300 * time.Millisecond, time.Second
	var first, last time.Time
	runs := 0
	// 4 s, and on (up to 30 s) until both checks below can hold: a stall
	// of 300 ms ends a burst, and the guest can stall that long often.
	start := time.Now()
	end, limit := start.Add(4*time.Second), start.Add(30*time.Second)
	for {
		now := time.Now()
		if !now.Before(limit) ||
			!now.Before(end) && runs >= 2 && mustStats(t, q).DebounceCapped > 0 {
			break
		}
		r, err := q.AddDebounced("k", d, maxWait)
		if err != nil {
			t.Fatalf("AddDebounced: %v", err)
		}
		if r == Waiting {
			first = now
		}
		if r == Waiting || r == WaitMoved || r == WaitKept {
			last = now
		}
		if k, err := q.TryGet(); err == nil {
			runs++
			due := first.Add(maxWait)
			if l := last.Add(d); l.Before(due) {
				due = l
			}
			if time.Now().Before(due) {
				t.Fatalf("%s ran before %v", k, due)
			}
			q.Done(k)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if runs < 2 {
		t.Fatalf("a key added every 20 ms ran %d times in %v with a max wait of 1 s",
			runs, time.Since(start))
	}
	if st := mustStats(t, q); st.DebounceCapped == 0 {
		t.Fatalf("DebounceCapped = 0")
	}
}

// A queued key is a duplicate; bad durations are refused, changing nothing.
func TestDebounceRules(t *testing.T) {
	t.Parallel()
	requireDebounce(t)
	q := newQueue(t)
	q.Add("k")
	if r, err := q.AddDebounced("k", time.Second, time.Second); err != nil || r != Duplicate {
		t.Fatalf("AddDebounced of a queued key = %v, %v; want Duplicate", r, err)
	}
	for _, c := range []struct{ d, maxWait time.Duration }{
		{0, time.Second}, {-time.Second, time.Second}, {time.Second, time.Second - 1},
		{time.Second, -time.Second},
	} {
		_, err := q.AddDebounced("w", c.d, c.maxWait)
		expectErrno(t, "AddDebounced(w, bad durations)", err, einval)
	}
	if st := mustStats(t, q); st.Waiting != 0 || st.Items != 1 || st.Retries != 1 {
		t.Fatalf("waiting %d items %d retries %d; want 0 1 1", st.Waiting, st.Items,
			st.Retries)
	}
	if r, err := q.AddDebounced("w", time.Hour, time.Hour); err != nil || r != Waiting {
		t.Fatalf("AddDebounced(w) = %v, %v; want Waiting", r, err)
	}
	if ok, err := q.Cancel("w"); !ok || err != nil {
		t.Fatalf("Cancel(w) = %v, %v", ok, err)
	}
}
