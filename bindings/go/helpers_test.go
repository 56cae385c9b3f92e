// SPDX-License-Identifier: GPL-2.0

package kwq

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"kwq.dev/kwq/internal/workqueue"
)

// A *Queue is client-go's rate-limiting queue of strings, and so its
// delaying and base queues: checked by the compiler.
var (
	_ workqueue.TypedRateLimitingInterface[string] = (*Queue)(nil)
	_ workqueue.TypedDelayingInterface[string]     = (*Queue)(nil)
	_ workqueue.TypedInterface[string]             = (*Queue)(nil)
)

// Long enough never to be reached by a test that works, even under
// emulation; only a hang reaches it.
const patience = 120 * time.Second

var queueSeq atomic.Int64

// requireDevice skips without /dev/kwq, unless KWQ_GO_REQUIRE_DEVICE is
// set (the guest run sets it), where a missing device is a failure.
func requireDevice(t testing.TB) {
	t.Helper()
	if _, err := os.Stat("/dev/kwq"); err != nil {
		if os.Getenv("KWQ_GO_REQUIRE_DEVICE") != "" {
			t.Fatalf("KWQ_GO_REQUIRE_DEVICE is set but: %v", err)
		}
		t.Skip("no /dev/kwq (load kwq.ko)")
	}
}

// queueName is unique to this process and test.
func queueName(t testing.TB) string {
	n := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '-'
	}, t.Name())
	s := fmt.Sprintf("go%d-%d-%s", os.Getpid(), queueSeq.Add(1), n)
	if len(s) > NameMax-1 {
		s = s[:NameMax-1]
	}
	return s
}

// newQueue creates a fresh queue, destroyed and closed when the test ends.
func newQueue(t testing.TB, opts ...Option) *Queue {
	t.Helper()
	requireDevice(t)
	q, err := Create(queueName(t), opts...)
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	t.Cleanup(func() {
		q.Destroy()
		q.Close()
	})
	return q
}

func mustStats(t testing.TB, q *Queue) Stats {
	t.Helper()
	st, err := q.Stats()
	if err != nil {
		t.Fatalf("Stats: %v", err)
	}
	return st
}

// eventually polls cond until it holds (no bound on how fast).
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	end := time.Now().Add(patience)
	for !cond() {
		if time.Now().After(end) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// getWithin takes a key, failing the test if none comes before patience.
func getWithin(t testing.TB, q *Queue) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	k, err := q.GetContext(ctx)
	if err != nil {
		t.Fatalf("GetContext: %v", err)
	}
	return k
}

func expectErrno(t testing.TB, what string, err error, want syscall.Errno) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Fatalf("%s: error %v, want %v", what, err, want)
	}
	var ke *Error
	if !errors.As(err, &ke) {
		t.Fatalf("%s: error %T is not a *kwq.Error", what, err)
	}
}

func expectLen(t testing.TB, q *Queue, want int) {
	t.Helper()
	if n := q.Len(); n != want {
		t.Fatalf("Len() = %d, want %d", n, want)
	}
}

func expectGet(t testing.TB, q *Queue, want string) {
	t.Helper()
	k, shutdown := q.Get()
	if shutdown || k != want {
		t.Fatalf("Get() = %q, %v; want %q, false", k, shutdown, want)
	}
}

func expectAdd(t testing.TB, q *Queue, key string, want AddResult) {
	t.Helper()
	r, err := q.AddWithResult(key)
	if err != nil || r != want {
		t.Fatalf("AddWithResult(%q) = %v, %v; want %v", key, r, err, want)
	}
}
