// SPDX-License-Identifier: GPL-2.0

package kwq

import (
	"context"
	"fmt"
	"testing"
)

// go test -bench . in a machine with kwq loaded. make bench runs
// cmd/kwq-gobench instead, beside the C figures of the same boot.

func benchKeys(n int) []string {
	k := make([]string, n)
	for i := range k {
		k[i] = fmt.Sprintf("bench/%026d", i)
	}
	return k
}

// BenchmarkCycle: Add, Get, Done of one key.
func BenchmarkCycle(b *testing.B) {
	q := newQueue(b)
	ks := benchKeys(1024)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		k := ks[i%len(ks)]
		q.Add(k)
		if got, quit := q.Get(); quit || got != k {
			b.Fatalf("Get = %q, %v", got, quit)
		}
		q.Done(k)
	}
}

// BenchmarkBatch64: AddBatch, GetBatch, DoneBatch of 64 keys; per key.
func BenchmarkBatch64(b *testing.B) {
	q := newQueue(b)
	ks := benchKeys(64)
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; i < b.N; i += len(ks) {
		if _, err := q.AddBatch(ks); err != nil {
			b.Fatal(err)
		}
		got, err := q.GetBatch(ctx, len(ks))
		if err != nil || len(got) != len(ks) {
			b.Fatalf("GetBatch: %d, %v", len(got), err)
		}
		if _, err := q.DoneBatch(got); err != nil {
			b.Fatal(err)
		}
	}
}
