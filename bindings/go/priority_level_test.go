// SPDX-License-Identifier: GPL-2.0

package kwq

import (
	"math"
	"sort"
	"testing"
)

func TestPriorityLevel(t *testing.T) {
	for _, c := range []struct{ p, level int }{
		{0, 0}, {1, 1}, {2, 2}, {3, 2}, {4, 3}, {7, 3}, {8, 4}, {10, 4}, {15, 4}, {16, 5},
		{31, 5}, {32, 6}, {63, 6}, {64, 7}, {100, 7}, {1000, 7}, {math.MaxInt, 7},
		{-1, -1}, {-2, -2}, {-3, -2}, {-4, -3}, {-7, -3}, {-8, -4}, {-10, -4}, {-16, -5},
		{-32, -6}, {-64, -7}, {-100, -7}, {-127, -7}, {-128, -8}, {-1000, -8},
		{math.MinInt, -8},
	} {
		if got := PriorityLevel(c.p); got != c.level {
			t.Errorf("PriorityLevel(%d) = %d, want %d", c.p, got, c.level)
		}
	}
	// In range, sign kept, never lower for a higher priority.
	prev := PriorityMin
	for p := -1000; p <= 1000; p++ {
		l := PriorityLevel(p)
		if l < PriorityMin || l > PriorityMax {
			t.Fatalf("PriorityLevel(%d) = %d, out of %d..%d", p, l, PriorityMin, PriorityMax)
		}
		if (p > 0) != (l > 0) || (p < 0) != (l < 0) {
			t.Fatalf("PriorityLevel(%d) = %d: the sign changed", p, l)
		}
		if l < prev {
			t.Fatalf("PriorityLevel(%d) = %d, below PriorityLevel(%d) = %d", p, l, p-1, prev)
		}
		prev = l
	}
}

// Keys added with controller-runtime's priorities through PriorityLevel
// come out of a priority queue in controller-runtime's order: higher
// priorities first, FIFO among priorities that share a level.
func TestPriorityLevelOrder(t *testing.T) {
	q := newQueue(t, WithPriority(AgingMax))
	type add struct {
		key string
		p   int
	}
	adds := []add{{"low", -100}, {"default", 0}, {"ten", 10}, {"high", 100},
		{"minus-five", -5}, {"one", 1}, {"twelve", 12}, {"thousand", 1000}, {"default-2", 0}}
	for _, a := range adds {
		if _, err := q.AddWithPriority(a.key, PriorityLevel(a.p)); err != nil {
			t.Fatalf("AddWithPriority(%s, PriorityLevel(%d)): %v", a.key, a.p, err)
		}
	}
	want := append([]add(nil), adds...)
	// Stable: FIFO within a level.
	sort.SliceStable(want, func(i, j int) bool { return PriorityLevel(want[i].p) > PriorityLevel(want[j].p) })
	for _, w := range want {
		k, err := q.TryGet()
		if err != nil {
			t.Fatalf("TryGet: %v", err)
		}
		if k != w.key {
			t.Fatalf("got %s, want %s (priority %d, level %d)", k, w.key, w.p, PriorityLevel(w.p))
		}
		q.Done(k)
	}
	// The levels kept controller-runtime's order of distinct levels.
	for i := 1; i < len(want); i++ {
		if want[i].p > want[i-1].p && PriorityLevel(want[i].p) != PriorityLevel(want[i-1].p) {
			t.Fatalf("%s (%d) came after %s (%d)", want[i].key, want[i].p, want[i-1].key, want[i-1].p)
		}
	}
}
