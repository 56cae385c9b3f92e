// SPDX-License-Identifier: GPL-2.0

package kwq

import (
	"context"
	"syscall"
	"time"
	"unsafe"
)

type pollFd struct {
	fd      int32
	events  int16
	revents int16
}

const (
	pollIn  = 0x1
	pollErr = 0x8
)

// waitReadable waits until the descriptor is readable (a get would not
// block), until ctx is done (its error), or, with ctx nil, until the
// absolute monotonic deadline (ETIMEDOUT; deadlineForever: no limit).
func (q *Queue) waitReadable(ctx context.Context, deadline uint64) error {
	if !q.acquire() {
		return ErrClosed
	}
	defer q.release()
	var done <-chan struct{}
	if ctx != nil {
		done = ctx.Done()
		if d, ok := ctx.Deadline(); ok {
			deadline = monoDeadline(time.Until(d))
		} else {
			deadline = deadlineForever
		}
	}
	fds := [2]pollFd{{fd: int32(q.fd), events: pollIn}, {fd: -1}}
	n := 1
	if done != nil {
		// Cancellation wakes the poll through an eventfd.
		efd, _, e := syscall.RawSyscall(syscall.SYS_EVENTFD2, 0, syscall.O_CLOEXEC, 0)
		if e != 0 {
			return e
		}
		defer syscall.Close(int(efd))
		stop, finished := make(chan struct{}), make(chan struct{})
		go func() {
			defer close(finished)
			select {
			case <-done:
				one := uint64(1)
				syscall.Write(int(efd), (*[8]byte)(unsafe.Pointer(&one))[:])
			case <-stop:
			}
		}()
		defer func() { close(stop); <-finished }()
		fds[1] = pollFd{fd: int32(efd), events: pollIn}
		n = 2
	}
	for {
		var tsp unsafe.Pointer
		var ts syscall.Timespec
		if deadline != deadlineForever {
			left := int64(deadline) - int64(monoNow())
			if left <= 0 {
				if ctx != nil {
					if err := ctx.Err(); err != nil {
						return err
					}
					return context.DeadlineExceeded
				}
				return syscall.ETIMEDOUT
			}
			ts = syscall.NsecToTimespec(left)
			tsp = unsafe.Pointer(&ts)
		}
		fds[0].revents, fds[1].revents = 0, 0
		_, _, e := syscall.Syscall6(syscall.SYS_PPOLL, uintptr(unsafe.Pointer(&fds[0])),
			uintptr(n), uintptr(tsp), 0, 0, 0)
		if e != 0 && e != syscall.EINTR {
			return e
		}
		if fds[1].revents != 0 {
			return ctx.Err()
		}
		if fds[0].revents&pollErr != 0 {
			return syscall.EBADFD
		}
		if fds[0].revents != 0 {
			return nil
		}
	}
}

// wrapWait wraps an error of waitReadable, unless it is ctx's own.
func (q *Queue) wrapWait(ctx context.Context, op string, err error) error {
	if err == nil || (ctx != nil && err == ctx.Err()) {
		return err
	}
	return q.errf(op, "", err)
}

// WaitReady waits until a get would not block (a key is ready, or the
// queue has ended) or ctx is done, and returns ctx.Err() then. Another
// handle may take the key first: Get, TryGet or GetContext tell.
func (q *Queue) WaitReady(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return q.wrapWait(ctx, "poll", q.waitReadable(ctx, deadlineForever))
}

// Ready returns a channel that receives one value and is closed: nil when
// a get would not block, ctx.Err() when ctx ends first, or the poll's
// error. For select loops; each call starts one goroutine, which ends with
// the send.
func (q *Queue) Ready(ctx context.Context) <-chan error {
	ch := make(chan error, 1)
	go func() {
		ch <- q.WaitReady(ctx)
		close(ch)
	}()
	return ch
}

// Stats is a consistent snapshot of the queue's counts and counters (see
// struct kwq_stats in uapi/linux/kwq.h).
type Stats struct {
	ShuttingDown, Draining, Destroyed bool

	Queued          uint64 // keys ready for Get (Len)
	Processing      uint64 // keys handed out and not yet done
	DirtyProcessing uint64 // keys being processed that were added again
	Waiting         uint64 // keys waiting for an AddAfter deadline
	Items           uint64 // key records held
	MaxItems        uint64 // the queue's limit on Items

	Adds, Dedups, Gets, Dones, Requeues, Refused          uint64
	Fired, Cancels, Absorbed, WaitsDropped, LeaseRequeues uint64
	BackoffKeys, RateLimited, TokensReturned              uint64
	BackoffEvictions, Retries, Forgets                    uint64
	ProcessingExpiries                                    uint64
	// Debounced adds that moved a waiting deadline later, and those
	// held at their max wait (a key that is never quiet).
	Debounced, DebounceCapped uint64
	// Payloads replaced by a later add of their key, and the payload
	// bytes the queue holds now.
	PayloadsReplaced, PayloadBytes uint64

	UnfinishedWork time.Duration // summed over the keys being processed
	LongestRunning time.Duration // of the oldest key being processed

	// Histograms: observations up to 10 ns, 100 ns, ... 10 s, and above.
	QueueLatency    [statsBuckets]uint64
	QueueLatencySum time.Duration
	WorkDuration    [statsBuckets]uint64
	WorkDurationSum time.Duration
}

// Stats reads the queue's counts and counters.
func (q *Queue) Stats() (Stats, error) {
	r, err := q.stats("stats")
	if err != nil {
		return Stats{}, err
	}
	return Stats{
		ShuttingDown: r.State&stateShuttingDown != 0, Draining: r.State&stateDraining != 0,
		Destroyed: r.State&stateDestroyed != 0,
		Queued:    r.Queued, Processing: r.Processing, DirtyProcessing: r.DirtyProcessing,
		Waiting: r.Waiting, Items: r.Items, MaxItems: r.MaxItems,
		Adds: r.Adds, Dedups: r.Dedups, Gets: r.Gets, Dones: r.Dones, Requeues: r.Requeues,
		Refused: r.Refused, Fired: r.Fired, Cancels: r.Cancels, Absorbed: r.Absorbed,
		WaitsDropped: r.WaitsDropped, LeaseRequeues: r.LeaseRequeues, BackoffKeys: r.BackoffKeys,
		RateLimited: r.RateLimited, TokensReturned: r.TokensReturned,
		BackoffEvictions: r.BackoffEvictions, Retries: r.Retries, Forgets: r.Forgets,
		ProcessingExpiries: r.ProcessingExpiries, Debounced: r.Debounced,
		DebounceCapped: r.DebounceCapped, PayloadsReplaced: r.PayloadsReplaced,
		PayloadBytes:   r.PayloadBytes,
		UnfinishedWork: time.Duration(r.UnfinishedWorkNs),
		LongestRunning: time.Duration(r.LongestRunningNs),
		QueueLatency:   r.QueueLatency, QueueLatencySum: time.Duration(r.QueueLatencySumNs),
		WorkDuration: r.WorkDuration, WorkDurationSum: time.Duration(r.WorkDurationSumNs),
	}, nil
}

// Version is the running module's ABI handshake.
type Version struct {
	ABI      uint32 // KWQ_ABI_VERSION of the module
	KeyMax   uint32 // longest key
	NameMax  uint32 // size of a name buffer, NUL included
	Features uint64 // Feature* bits
}

// ReadVersion asks the module behind /dev/kwq (or WithDevice) for its ABI.
func ReadVersion(opts ...Option) (Version, error) {
	c := newConfig(opts)
	fd, err := openDevice(&c)
	if err != nil {
		return Version{}, &Error{Op: "open " + c.device, Err: err}
	}
	defer syscall.Close(fd)
	v := &iocVersion{}
	if e := ioctl(fd, iocVersionCmd, unsafe.Pointer(v)); e != 0 {
		return Version{}, &Error{Op: "version", Err: e}
	}
	return Version{ABI: v.AbiVersion, KeyMax: v.KeyMax, NameMax: v.NameMax, Features: v.Features}, nil
}

// List returns the names of the named queues.
func List(opts ...Option) ([]string, error) {
	c := newConfig(opts)
	fd, err := openDevice(&c)
	if err != nil {
		return nil, &Error{Op: "open " + c.device, Err: err}
	}
	defer syscall.Close(fd)
	for capacity := 16; ; {
		names := make([]byte, capacity*NameMax)
		a := &iocList{NamesPtr: ptr(names), Capacity: uint32(capacity)}
		if e := ioctl(fd, iocListCmd, unsafe.Pointer(a)); e != 0 {
			return nil, &Error{Op: "list", Err: e}
		}
		if int(a.Count) > capacity {
			capacity = int(a.Count) + 8
			continue
		}
		out := make([]string, 0, a.Count)
		for i := 0; i < int(a.Count); i++ {
			n := names[i*NameMax : (i+1)*NameMax]
			l := 0
			for l < len(n) && n[l] != 0 {
				l++
			}
			out = append(out, string(n[:l]))
		}
		return out, nil
	}
}
