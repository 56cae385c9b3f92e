// SPDX-License-Identifier: GPL-2.0

package kwq

// Priority queues: order, FIFO, raise-never-lower, refusals. The aging is
// an hour per level, so that time on a slow machine cannot reorder keys.

import (
	"syscall"
	"testing"
	"time"
)

func requirePriority(t *testing.T) {
	t.Helper()
	requireDevice(t)
	v, err := ReadVersion()
	if err != nil {
		t.Fatalf("ReadVersion: %v", err)
	}
	if v.Features&FeaturePriority == 0 {
		t.Fatalf("features %#x: FeaturePriority missing", v.Features)
	}
}

func expectOrder(t *testing.T, q *Queue, want ...string) {
	t.Helper()
	for i, w := range want {
		k, err := q.TryGet()
		if err != nil || k != w {
			t.Fatalf("get #%d = %q, %v; want %q", i, k, err, w)
		}
		q.Done(k)
	}
	if k, err := q.TryGet(); err == nil {
		t.Fatalf("get after the last = %q; want nothing", k)
	}
}

func TestPriorityOrder(t *testing.T) {
	t.Parallel()
	requirePriority(t)
	q := newQueue(t, WithPriority(time.Hour))
	for _, a := range []struct {
		key string
		p   int
	}{{"m1", 0}, {"l", PriorityMin}, {"h1", PriorityMax}, {"m2", 0}, {"h2", PriorityMax}} {
		if r, err := q.AddWithPriority(a.key, a.p); err != nil || r != Queued {
			t.Fatalf("AddWithPriority(%s, %d) = %v, %v", a.key, a.p, r, err)
		}
	}
	q.Add("p") // priority 0, after m2
	expectOrder(t, q, "h1", "h2", "m1", "m2", "p", "l")
}

func TestPriorityRaise(t *testing.T) {
	t.Parallel()
	requirePriority(t)
	q := newQueue(t, WithPriority(time.Hour))
	for _, k := range []string{"a", "b", "c"} {
		q.AddWithPriority(k, 0)
	}
	if r, err := q.AddWithPriority("c", 3); err != nil || r != Duplicate {
		t.Fatalf("raise = %v, %v; want Duplicate", r, err)
	}
	if r, err := q.AddWithPriority("a", -3); err != nil || r != Duplicate {
		t.Fatalf("lower = %v, %v; want Duplicate", r, err)
	}
	expectOrder(t, q, "c", "a", "b")
}

func TestPriorityDelayed(t *testing.T) {
	t.Parallel()
	requirePriority(t)
	q := newQueue(t, WithPriority(time.Hour))
	if r, err := q.AddAfterWithPriority("d", 50*time.Millisecond, 4); err != nil || r != Waiting {
		t.Fatalf("AddAfterWithPriority = %v, %v; want Waiting", r, err)
	}
	q.Add("a")
	eventually(t, "the delayed key is ready", func() bool { return mustStats(t, q).Queued == 2 })
	expectOrder(t, q, "d", "a")
}

func TestPriorityRefused(t *testing.T) {
	t.Parallel()
	requirePriority(t)
	q := newQueue(t, WithPriority(0))
	_, err := q.AddWithPriority("k", PriorityMax+1)
	expectErrno(t, "priority above the maximum", err, syscall.EINVAL)
	_, err = q.AddWithPriority("k", PriorityMin-1)
	expectErrno(t, "priority below the minimum", err, syscall.EINVAL)
	plain := newQueue(t)
	_, err = plain.AddWithPriority("k", 1)
	expectErrno(t, "priority on a plain queue", err, syscall.EINVAL)
	if r, err := plain.AddWithPriority("k", 0); err != nil || r != Queued {
		t.Fatalf("priority 0 on a plain queue = %v, %v; want Queued", r, err)
	}
	if _, err := Create(queueName(t)+"-aging", WithPriority(AgingMax+1)); err == nil {
		t.Fatalf("WithPriority(AgingMax+1) created a queue")
	}
	if st := mustStats(t, q); st.Adds != 0 || st.Items != 0 {
		t.Fatalf("refused adds changed the queue: adds %d items %d", st.Adds, st.Items)
	}
}
