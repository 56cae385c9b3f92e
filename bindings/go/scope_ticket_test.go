// SPDX-License-Identifier: GPL-2.0

package kwq

import (
	"errors"
	"os"
	"syscall"
	"testing"
	"time"
)

// WithKernelScope looks among the queues kernel modules made: a user
// queue of the name is not found there, NewRateLimitingQueue does not
// make one, Create refuses. The guest run names a queue kwq_sample.ko
// made in KWQ_GO_KERNEL_QUEUE: it opens there and only there, and carries
// a key from this process back to it.
func TestKernelScope(t *testing.T) {
	q := newQueue(t)
	if _, err := Open(q.Name(), WithKernelScope()); !errors.Is(err, syscall.ENOENT) {
		t.Fatalf("Open of a user queue in the kernel scope: %v, want ENOENT", err)
	}
	other := q.Name() + "x"
	if _, err := NewRateLimitingQueue(other, WithKernelScope()); !errors.Is(err, syscall.ENOENT) {
		t.Fatalf("NewRateLimitingQueue in the kernel scope: %v, want ENOENT", err)
	}
	if _, err := Open(other); !errors.Is(err, syscall.ENOENT) {
		t.Fatalf("NewRateLimitingQueue in the kernel scope made a user queue (Open: %v)", err)
	}
	if _, err := Create(other, WithKernelScope()); !errors.Is(err, syscall.EINVAL) {
		t.Fatalf("Create in the kernel scope: %v, want EINVAL", err)
	}
	name := os.Getenv("KWQ_GO_KERNEL_QUEUE")
	if name == "" {
		if os.Getenv("KWQ_GO_REQUIRE_DEVICE") != "" {
			t.Fatal("KWQ_GO_REQUIRE_DEVICE is set but KWQ_GO_KERNEL_QUEUE names no kernel queue")
		}
		t.Skip("no kernel queue (KWQ_GO_KERNEL_QUEUE)")
	}
	if _, err := Open(name); !errors.Is(err, syscall.ENOENT) {
		t.Fatalf("Open(%s) in the user scope: %v, want ENOENT", name, err)
	}
	kq, err := Open(name, WithKernelScope())
	if err != nil {
		t.Fatalf("Open(%s, WithKernelScope()): %v", name, err)
	}
	defer kq.Close()
	if r, err := kq.AddWithResult("go-kernel-scope"); err != nil || r != Queued {
		t.Fatalf("add to the kernel queue: %v %v", r, err)
	}
	k, err := kq.TryGet()
	if err != nil || k != "go-kernel-scope" {
		t.Fatalf("TryGet from the kernel queue: %q %v", k, err)
	}
	if r, err := kq.DoneWithResult(k); err != nil || r != Finished {
		t.Fatalf("Done: %v %v", r, err)
	}
}

// On a queue with a processing timeout a key is taken back from a worker
// that overstays and handed out again: the late worker's DoneTicket
// fails with ENOENT and leaves the new hand-out alone, which its own
// ticket ends. A plain Done on the same handle would have ended it.
func TestDoneTicket(t *testing.T) {
	q := newQueue(t, WithProcessingTimeout(100*time.Millisecond))
	q.Add("ns/slow")
	k, t1, err := q.GetWithTicket()
	if err != nil || k != "ns/slow" || t1 == 0 {
		t.Fatalf("GetWithTicket: %q %d %v", k, t1, err)
	}
	// The timeout takes it back to the head of the queue; the same handle
	// gets it again.
	k, t2, err := q.GetWithTicket()
	if err != nil || k != "ns/slow" || t2 == 0 || t2 == t1 {
		t.Fatalf("second GetWithTicket: %q %d (first %d) %v", k, t2, t1, err)
	}
	if _, err := q.DoneTicket(k, t1); !errors.Is(err, syscall.ENOENT) {
		t.Fatalf("DoneTicket with the overstayed hand-out's ticket: %v, want ENOENT", err)
	}
	if st := mustStats(t, q); st.Processing != 1 {
		t.Fatalf("the late DoneTicket ended the new hand-out: %d processing", st.Processing)
	}
	q.Add(k)
	if r, err := q.DoneTicket(k, t2); err != nil || r != Requeued {
		t.Fatalf("DoneTicket(%d): %v %v, want requeued", t2, r, err)
	}
	k, t3, err := q.GetWithTicket()
	if err != nil || t3 == t2 || t3 == t1 {
		t.Fatalf("third GetWithTicket: %q %d %v", k, t3, err)
	}
	if r, err := q.DoneTicket(k, t3); err != nil || r != Finished {
		t.Fatalf("DoneTicket(%d): %v %v, want finished", t3, r, err)
	}
	// Ticket 0 is Done's rule.
	q.Add(k)
	k, _, _ = q.GetWithTicket()
	if r, err := q.DoneTicket(k, 0); err != nil || r != Finished {
		t.Fatalf("DoneTicket(0): %v %v", r, err)
	}
}
