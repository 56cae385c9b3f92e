// SPDX-License-Identifier: GPL-2.0

package kwq

import (
	"context"
	"sync/atomic"
	"syscall"
	"testing"
	"unsafe"
)

// A get that may not sleep fails with ENOMEM, the key staying queued,
// when the kernel needs memory for the hand-out and cannot have it
// without sleeping (uapi/linux/kwq.h, struct kwq_ioc_get): in a memory
// cgroup near its limit, say. Nothing makes that happen on demand in a
// test machine, so these tests fake it through ioctlHook, on the test's
// queue only. They do not run in parallel: the hook is global, and the
// parallel tests wait until the sequential ones are over.

type enomemCounts struct {
	failed  atomic.Int64 // calls that may not sleep, failed with ENOMEM
	waiting atomic.Int64 // calls that may sleep, let through
}

// failNowaitGets makes every get, get batch and done-get on q's
// descriptor that may not sleep (deadline KWQ_DEADLINE_NOWAIT) fail with
// ENOMEM, as the kernel's does when no hand-out memory can be had without
// sleeping: nothing is taken, and a done-get's done is carried out first,
// as the kernel carries it out. With waitingToo, the calls that may sleep
// fail the same way (memory that cannot be had at all). before, if not
// nil, runs before each faked failure. Until the test ends.
func failNowaitGets(t *testing.T, q *Queue, waitingToo bool, before func()) *enomemCounts {
	t.Helper()
	c := &enomemCounts{}
	f := ioctlFunc(func(fd int, req uintptr, arg unsafe.Pointer, raw bool) syscall.Errno {
		var deadline uint64
		switch {
		case fd != q.fd:
			return sysIoctl(fd, req, arg, raw)
		case req == iocGetCmd:
			deadline = (*iocGet)(arg).DeadlineNs
		case req == iocGetBatchCmd:
			deadline = (*iocBatch)(arg).DeadlineNs
		case req == iocDoneGetCmd:
			deadline = (*iocDoneGet)(arg).DeadlineNs
		default:
			return sysIoctl(fd, req, arg, raw)
		}
		if deadline != deadlineNowait && !waitingToo {
			c.waiting.Add(1)
			return sysIoctl(fd, req, arg, raw)
		}
		if before != nil {
			before()
		}
		if req == iocDoneGetCmd {
			dg := (*iocDoneGet)(arg)
			k := iocKey{KeyPtr: dg.DonePtr, KeyLen: dg.DoneLen, Ticket: dg.DoneTicket}
			if e := sysIoctl(fd, iocDoneCmd, unsafe.Pointer(&k), raw); e != 0 {
				return e
			}
			dg.DoneResult = k.Result
		}
		c.failed.Add(1)
		return syscall.ENOMEM
	})
	ioctlHook.Store(&f)
	t.Cleanup(func() { ioctlHook.Store(nil) })
	return c
}

func expectCounts(t *testing.T, c *enomemCounts, failed, waiting int64) {
	t.Helper()
	if f, w := c.failed.Load(), c.waiting.Load(); f != failed || w != waiting {
		t.Fatalf("%d calls failed with ENOMEM and %d waiting calls went through; want %d and %d",
			f, w, failed, waiting)
	}
}

// The ENOMEM of a try that may not sleep is not final: each way of
// getting asks again, allowing the kernel to sleep for memory, and hands
// out the key. Get does not report shutdown for it.
func TestNowaitENOMEM(t *testing.T) {
	t.Run("Get", func(t *testing.T) {
		q := newQueue(t)
		q.Add("a")
		c := failNowaitGets(t, q, false, nil)
		expectGet(t, q, "a")
		expectCounts(t, c, 1, 1)
	})
	t.Run("TryGet", func(t *testing.T) {
		q := newQueue(t)
		q.Add("a")
		c := failNowaitGets(t, q, false, nil)
		if k, err := q.TryGet(); err != nil || k != "a" {
			t.Fatalf("TryGet() = %q, %v; want \"a\"", k, err)
		}
		expectCounts(t, c, 1, 1)
	})
	t.Run("TryGetKeyGone", func(t *testing.T) {
		// Another handle takes the key between the two tries: TryGet
		// says no key is ready (EAGAIN), as a try that found none does.
		q := newQueue(t)
		o, err := Open(q.Name())
		if err != nil {
			t.Fatal(err)
		}
		defer o.Close()
		q.Add("a")
		c := failNowaitGets(t, q, false, func() { expectGet(t, o, "a") })
		_, err = q.TryGet()
		expectErrno(t, "TryGet of a key taken meanwhile", err, syscall.EAGAIN)
		expectCounts(t, c, 1, 1)
	})
	t.Run("GetContext", func(t *testing.T) {
		q := newQueue(t)
		q.Add("a")
		c := failNowaitGets(t, q, false, nil)
		ctx, cancel := context.WithTimeout(context.Background(), patience)
		defer cancel()
		if k, err := q.GetContext(ctx); err != nil || k != "a" {
			t.Fatalf("GetContext() = %q, %v; want \"a\"", k, err)
		}
		expectCounts(t, c, 1, 1)
	})
	for _, withDone := range []bool{false, true} {
		name := "GetBatch"
		if withDone {
			name += "Cancellable"
		}
		t.Run(name, func(t *testing.T) {
			q := newQueue(t)
			q.AddBatch([]string{"a", "b", "c"})
			c := failNowaitGets(t, q, false, nil)
			ctx := context.Background()
			if withDone {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, patience)
				defer cancel()
			}
			keys, err := q.GetBatch(ctx, 10)
			if err != nil || len(keys) != 3 || keys[0] != "a" || keys[1] != "b" || keys[2] != "c" {
				t.Fatalf("GetBatch() = %q, %v; want [a b c]", keys, err)
			}
			expectCounts(t, c, 1, 1)
		})
	}
	t.Run("DoneGet", func(t *testing.T) {
		q := newQueue(t)
		q.Add("a")
		expectGet(t, q, "a")
		q.Add("b")
		c := failNowaitGets(t, q, false, nil)
		next, res, err := q.DoneGet("a")
		if err != nil || next != "b" || res != Finished {
			t.Fatalf("DoneGet(a) = %q, %v, %v; want \"b\", finished", next, res, err)
		}
		// The done-get's ENOMEM, then Get's first try's, then its wait.
		expectCounts(t, c, 2, 1)
		if st := mustStats(t, q); st.Processing != 1 || st.Queued != 0 || st.Dones != 1 {
			t.Fatalf("processing %d, queued %d, dones %d; want 1, 0, 1",
				st.Processing, st.Queued, st.Dones)
		}
	})
	// The ENOMEM of a get that may sleep is final: the key stays queued.
	t.Run("WaitingToo", func(t *testing.T) {
		q := newQueue(t)
		q.Add("a")
		failNowaitGets(t, q, true, nil)
		if k, shutdown := q.Get(); !shutdown || k != "" {
			t.Fatalf("Get() = %q, %v; want \"\", true", k, shutdown)
		}
		ctx, cancel := context.WithTimeout(context.Background(), patience)
		defer cancel()
		_, err := q.GetContext(ctx)
		expectErrno(t, "GetContext", err, syscall.ENOMEM)
		_, err = q.TryGet()
		expectErrno(t, "TryGet", err, syscall.ENOMEM)
		expectLen(t, q, 1)
	})
}
