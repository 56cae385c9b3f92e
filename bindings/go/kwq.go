// SPDX-License-Identifier: GPL-2.0

// Package kwq is client-go's rate-limiting work queue for string keys,
// backed by kwq, the Linux kernel module behind /dev/kwq.
//
// A *Queue has the method set of client-go's
// workqueue.TypedRateLimitingInterface[string] (Add, Len, Get, Done,
// ShutDown, ShutDownWithDrain, ShuttingDown, AddAfter, AddRateLimited,
// Forget, NumRequeues), so a controller written against that interface
// takes a *Queue unchanged:
//
//	queue, err := kwq.NewRateLimitingQueue("my-controller",
//		kwq.WithRateLimiter(kwq.DefaultControllerRateLimiter()))
//
// The queue lives in the kernel: several processes can share it, the keys
// a worker holds go back to the head of the queue when its process dies,
// and failure counts outlive the process. Beside the interface, a Queue
// has kwq's extras: AddWithResult, DoneWithResult, GetContext, DoneGet,
// hand-out tickets (GetWithTicket, DoneTicket), priorities
// (AddWithPriority, PriorityLevel for controller-runtime's priorities),
// kernel-scope queues (WithKernelScope), batches, Cancel, Stats and
// readiness (Ready, WaitReady, Fd).
//
// Differences from client-go, all from the kernel's queue:
//   - Done of a key that is not being processed changes nothing (client-go
//     queues a duplicate, kubernetes#79934).
//   - ShutDownWithDrain waits until nothing is queued or processing, not
//     only until nothing is processing (kubernetes PR #141079).
//   - After ShutDown, Get waits while any key is being processed (a key
//     re-added meanwhile is queued again by its Done, a key whose worker
//     dies or overstays comes back) before it reports shutdown.
//   - An Add of a key that waits for an AddAfter deadline queues it and
//     drops the waiting entry (PolicyPromote), so it runs once; client-go
//     runs it twice (WithPolicy(PolicyKeep) restores that).
//   - ShutDown, ShutDownWithDrain and Destroy act on the kernel queue,
//     for every process that shares it, and a shut-down queue stays shut
//     down until destroyed: NewRateLimitingQueue of a shut-down queue
//     fails with ESHUTDOWN. A controller that is to find its keys after a
//     restart calls Close, not ShutDown, when it stops.
//
// Methods of the client-go interface cannot return errors: they ignore
// them (Add after shutdown is dropped, as in client-go), Get reports
// shutdown on any error, Len and NumRequeues return 0. The *WithResult,
// *Context and batch methods return them. No method panics on a bad key
// or a closed handle.
package kwq

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

// AddResult is what an add did with the key.
type AddResult uint32

const (
	// Queued: the key was not pending and is now queued.
	Queued AddResult = 0
	// Duplicate: the key was already queued; nothing changed.
	Duplicate AddResult = 1
	// Deferred: the key is being processed; it runs again after its Done.
	Deferred AddResult = 2
	// Waiting: AddAfter: the key now waits for its deadline.
	Waiting AddResult = 3
	// WaitKept: AddAfter: the key already waited for an earlier (or equal)
	// deadline, which is kept.
	WaitKept AddResult = 4
	// WaitMoved: AddAfter: the key's waiting deadline moved.
	WaitMoved AddResult = 5
	// Absorbed: Add of a waiting key under PolicyStrict: it runs at its
	// deadline, not now.
	Absorbed AddResult = 6
)

func (r AddResult) String() string {
	names := [...]string{"queued", "duplicate", "deferred", "waiting", "wait-kept", "wait-moved", "absorbed"}
	if int(r) < len(names) {
		return names[r]
	}
	return "AddResult(" + itoa(uint64(r)) + ")"
}

// DoneResult is what a done did with the key.
type DoneResult uint32

const (
	// Finished: processing ended; the key is no longer pending.
	Finished DoneResult = 0
	// Requeued: the key was added while processing and is queued again.
	Requeued DoneResult = 1
	// DoneNotRun: DoneGet failed before its done was carried out.
	DoneNotRun DoneResult = doneNotRun
)

func (r DoneResult) String() string {
	switch r {
	case Finished:
		return "finished"
	case Requeued:
		return "requeued"
	case DoneNotRun:
		return "not-run"
	}
	return "DoneResult(" + itoa(uint64(r)) + ")"
}

func itoa(v uint64) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + v%10)
		v /= 10
		if v == 0 {
			return string(b[i:])
		}
	}
}

// Queue is one open handle on a kwq queue. Its methods are safe for
// concurrent use. Keys taken by Get are leased to the handle: only it can
// call Done for them, and if it is closed (or its process dies) first
// they go back to the head of the queue.
type Queue struct {
	fd       int
	name     string
	unleased bool
	// refs counts calls in flight; closedBit is set by Close, and the
	// descriptor is closed when both say so, never under a running call.
	refs atomic.Int64
}

const closedBit = int64(1) << 62

// scratch holds a call's argument struct and key buffers on the heap, so
// the pointers handed to the kernel never point into a goroutine stack.
type scratch struct {
	key   iocKey
	after iocAddAfter
	add   iocAdd
	get   iocGet
	dg    iocDoneGet
	in    [KeyMax]byte
	out   [KeyMax]byte
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

func ptr(b []byte) uint64 { return uint64(uintptr(unsafe.Pointer(&b[0]))) }

func (q *Queue) acquire() bool {
	for {
		s := q.refs.Load()
		if s&closedBit != 0 {
			return false
		}
		if q.refs.CompareAndSwap(s, s+1) {
			return true
		}
	}
}

func (q *Queue) release() {
	if q.refs.Add(-1) == closedBit {
		syscall.Close(q.fd)
	}
}

func (q *Queue) errf(op, key string, e error) error {
	return &Error{Op: op, Queue: q.name, Key: key, Err: e}
}

// ioctlFunc is an ioctl system call: raw for rawIoctl's, not for ioctl's.
type ioctlFunc func(fd int, req uintptr, arg unsafe.Pointer, raw bool) syscall.Errno

// ioctlHook, when set, is called instead of the system call by ioctl and
// rawIoctl. It is a seam for the package's tests, which make the kernel's
// rare failures (a get's ENOMEM) happen through it; nothing else sets it.
var ioctlHook atomic.Pointer[ioctlFunc]

// sysIoctl is the ioctl system call itself.
func sysIoctl(fd int, req uintptr, arg unsafe.Pointer, raw bool) syscall.Errno {
	var e syscall.Errno
	if raw {
		_, _, e = syscall.RawSyscall(syscall.SYS_IOCTL, uintptr(fd), req, uintptr(arg))
	} else {
		_, _, e = syscall.Syscall(syscall.SYS_IOCTL, uintptr(fd), req, uintptr(arg))
	}
	return e
}

// ioctl is for calls that may sleep for long (a get with a deadline, a
// drain): the runtime lets other goroutines run on the thread's P.
func ioctl(fd int, req uintptr, arg unsafe.Pointer) syscall.Errno {
	if h := ioctlHook.Load(); h != nil {
		return (*h)(fd, req, arg, false)
	}
	return sysIoctl(fd, req, arg, false)
}

// rawIoctl is for the calls that do not wait (add, done, stats, a get
// without waiting, ...): they take the queue's spinlock and return, so
// the runtime's entry and exit bookkeeping of a blocking system call is
// skipped. One of them can still sleep briefly to allocate a key record.
func rawIoctl(fd int, req uintptr, arg unsafe.Pointer) syscall.Errno {
	if h := ioctlHook.Load(); h != nil {
		return (*h)(fd, req, arg, true)
	}
	return sysIoctl(fd, req, arg, true)
}

// call runs one non-waiting ioctl on the handle's descriptor.
func (q *Queue) call(req uintptr, arg unsafe.Pointer) error {
	if !q.acquire() {
		return ErrClosed
	}
	defer q.release()
	for {
		e := rawIoctl(q.fd, req, arg)
		if e == syscall.EINTR {
			continue
		}
		if e != 0 {
			return e
		}
		return nil
	}
}

// callWait runs one ioctl that may wait, retrying on EINTR (every call
// that can wait takes an absolute deadline, so a retry never waits
// longer).
func (q *Queue) callWait(req uintptr, arg unsafe.Pointer) error {
	if !q.acquire() {
		return ErrClosed
	}
	defer q.release()
	for {
		e := ioctl(q.fd, req, arg)
		if e == syscall.EINTR {
			continue
		}
		if e != 0 {
			return e
		}
		return nil
	}
}

func openDevice(c *config) (int, error) {
	for {
		fd, err := syscall.Open(c.device, syscall.O_RDWR|syscall.O_CLOEXEC, 0)
		if err == syscall.EINTR {
			continue
		}
		return fd, err
	}
}

func setName(dst *[NameMax]byte, name string) error {
	if len(name) == 0 || len(name) >= NameMax {
		return syscall.EINVAL
	}
	for i := 0; i < len(name); i++ {
		if name[i] == 0 {
			return syscall.EINVAL
		}
	}
	copy(dst[:], name)
	return nil
}

func (c *config) createArg(name string) (*iocCreate, error) {
	a := &iocCreate{Mode: c.mode, MaxItems: c.maxItems, Policy: uint32(c.policy),
		MaxBackoffKeys: c.maxBackoffKeys}
	if err := setName(&a.Name, name); err != nil {
		return nil, err
	}
	if c.processingTimeout < 0 {
		return nil, syscall.EINVAL
	}
	a.ProcessingTimeoutNs = uint64(c.processingTimeout)
	if c.priority {
		if c.aging < 0 || c.aging > AgingMax {
			return nil, syscall.EINVAL
		}
		a.Flags |= createPriority
		a.AgingNs = uint64(c.aging)
	}
	a.PayloadMax = c.payloadMax
	if c.manualClock {
		a.Flags |= createManualClock
	}
	if c.tenants {
		if c.tenantDepth < 0 || c.tenantDepth > TenantDepthMax {
			return nil, syscall.EINVAL
		}
		a.Flags |= createTenant
		a.TenantDepth = uint8(c.tenantDepth)
	}
	if c.rl != nil {
		if len(c.rl.Limiters) > limitersMax || c.rl.MaxWait < 0 {
			return nil, syscall.EINVAL
		}
		a.Flags |= createRatelimit
		a.Ratelimit.Count = uint32(len(c.rl.Limiters))
		a.Ratelimit.MaxWaitNs = uint64(c.rl.MaxWait)
		for i, l := range c.rl.Limiters {
			if l.err {
				return nil, syscall.EINVAL
			}
			a.Ratelimit.Limiters[i] = l.raw
		}
	}
	return a, nil
}

// Create creates the named queue and returns a handle on it. It fails with
// EEXIST if the name is taken. name has 1 to 63 characters out of
// [A-Za-z0-9._-] and does not start with '.'.
func Create(name string, opts ...Option) (*Queue, error) {
	c := newConfig(opts)
	return create(name, &c)
}

func create(name string, c *config) (*Queue, error) {
	if c.kernelScope {
		return nil, &Error{Op: "create", Queue: name, Err: syscall.EINVAL}
	}
	a, err := c.createArg(name)
	if err != nil {
		return nil, &Error{Op: "create", Queue: name, Err: err}
	}
	fd, err := openDevice(c)
	if err != nil {
		return nil, &Error{Op: "open " + c.device, Queue: name, Err: err}
	}
	if e := ioctl(fd, iocCreateCmd, unsafe.Pointer(a)); e != 0 {
		syscall.Close(fd)
		return nil, &Error{Op: "create", Queue: name, Err: e}
	}
	return &Queue{fd: fd, name: name, unleased: c.unleased}, nil
}

// Open returns a handle on an existing queue (ENOENT if there is none;
// EACCES if its mode denies access). Only WithDevice, WithUnleasedGets
// and WithKernelScope apply.
func Open(name string, opts ...Option) (*Queue, error) {
	c := newConfig(opts)
	return open(name, &c)
}

func open(name string, c *config) (*Queue, error) {
	a := &iocOpen{}
	if c.kernelScope {
		a.Flags = scopeKernel
	}
	if err := setName(&a.Name, name); err != nil {
		return nil, &Error{Op: "open", Queue: name, Err: err}
	}
	fd, err := openDevice(c)
	if err != nil {
		return nil, &Error{Op: "open " + c.device, Queue: name, Err: err}
	}
	if e := ioctl(fd, iocOpenCmd, unsafe.Pointer(a)); e != 0 {
		syscall.Close(fd)
		return nil, &Error{Op: "open", Queue: name, Err: e}
	}
	return &Queue{fd: fd, name: name, unleased: c.unleased}, nil
}

// NewRateLimitingQueue opens the named queue, creating it with opts if it
// does not exist: the replacement for client-go's
// workqueue.NewTypedRateLimitingQueue. A restarted controller finds its
// queue, with its keys and failure counts, where it left it, unless the
// queue was shut down: a shut-down queue stays so until destroyed, so
// NewRateLimitingQueue fails with an error wrapping ESHUTDOWN rather than
// return a queue whose Get reports shutdown at once. A controller that
// means to find its keys after a restart closes its handle when it stops
// (Close) instead of calling ShutDown; to start afresh from a shut-down
// queue, Open it, Destroy it (its keys and failure counts go), and call
// NewRateLimitingQueue again.
func NewRateLimitingQueue(name string, opts ...Option) (*Queue, error) {
	c := newConfig(opts)
	for i := 0; ; i++ {
		q, err := open(name, &c)
		if err == nil {
			return q.refuseShutDown()
		}
		if !errors.Is(err, syscall.ENOENT) || i == 3 || c.kernelScope {
			return q, err
		}
		q, err = create(name, &c)
		if err == nil || !errors.Is(err, syscall.EEXIST) {
			return q, err
		}
	}
}

// refuseShutDown returns q if its queue is not shut down, and otherwise
// closes q and returns an error wrapping ESHUTDOWN (EIDRM if the queue
// was destroyed meanwhile).
func (q *Queue) refuseShutDown() (*Queue, error) {
	st, err := q.stats("open")
	if err == nil && st.State&stateDestroyed != 0 {
		err = q.errf("open", "", syscall.EIDRM)
	} else if err == nil && st.State&stateShuttingDown != 0 {
		err = q.errf("open", "", syscall.ESHUTDOWN)
	}
	if err != nil {
		q.Close()
		return nil, err
	}
	return q, nil
}

// Name returns the queue's name.
func (q *Queue) Name() string { return q.name }

// Fd returns the handle's descriptor, for poll or epoll: it is readable
// when a get would not block (a key is ready, or the queue has ended).
// It stays owned by the Queue: do not close it, and do not read from it.
func (q *Queue) Fd() int { return q.fd }

// Close closes the handle. Keys it holds go back to the head of the
// queue; the queue itself stays (see Destroy, ShutDown). A call blocked in
// the kernel is not woken by Close (ShutDown wakes getters); the
// descriptor is closed when the last call in flight returns. Close is
// idempotent.
func (q *Queue) Close() error {
	for {
		s := q.refs.Load()
		if s&closedBit != 0 {
			return nil
		}
		if q.refs.CompareAndSwap(s, s|closedBit) {
			if s == 0 {
				return syscall.Close(q.fd)
			}
			return nil
		}
	}
}

// Destroy removes the queue's name and ends the queue for every handle
// (their calls then fail with EIDRM, Get reports shutdown). Only the
// queue's owner (or CAP_SYS_ADMIN) may. The handle stays open: Close it.
func (q *Queue) Destroy() error {
	if err := q.callWait(iocDestroyCmd, nil); err != nil {
		return q.errf("destroy", "", err)
	}
	return nil
}

func (s *scratch) setKey(key string) error {
	if len(key) == 0 || len(key) > KeyMax {
		return syscall.EINVAL
	}
	copy(s.in[:], key)
	return nil
}

// keyCall is the common path of the calls that take one key in a struct
// kwq_ioc_key and return its result.
func (q *Queue) keyCall(op string, req uintptr, key string, flags uint32) (uint32, error) {
	s := scratchPool.Get().(*scratch)
	defer scratchPool.Put(s)
	if err := s.setKey(key); err != nil {
		return 0, q.errf(op, key, err)
	}
	s.key = iocKey{KeyPtr: ptr(s.in[:]), KeyLen: uint32(len(key)), Flags: flags}
	if err := q.call(req, unsafe.Pointer(&s.key)); err != nil {
		return 0, q.errf(op, key, err)
	}
	return s.key.Result, nil
}

// Add marks key as needing processing (client-go's Add). Errors, such as
// a queue that shuts down, are ignored: use AddWithResult to see them.
func (q *Queue) Add(key string) { q.AddWithResult(key) }

// AddWithResult adds key and says what happened: Queued, Duplicate,
// Deferred, or Absorbed. A queue that shuts down refuses with ESHUTDOWN.
func (q *Queue) AddWithResult(key string) (AddResult, error) {
	r, err := q.keyCall("add", iocAddCmd, key, 0)
	return AddResult(r), err
}

// AddWithPolicy is AddWithResult with this call's waiting policy.
func (q *Queue) AddWithPolicy(key string, p Policy) (AddResult, error) {
	if p > PolicyStrict {
		return 0, q.errf("add", key, syscall.EINVAL)
	}
	r, err := q.keyCall("add", iocAddCmd, key, uint32(p))
	return AddResult(r), err
}

// AddAfter adds key once d has passed (client-go's AddAfter); d <= 0 adds
// now. One waiting entry per key: the earliest deadline wins. Delays over
// 7 days are clamped to 7 days.
func (q *Queue) AddAfter(key string, d time.Duration) { q.AddAfterWithResult(key, d, false) }

// AddAfterWithResult is AddAfter with its outcome (Waiting, WaitKept,
// WaitMoved, or an add's result for d <= 0). With replace, the key's
// waiting deadline moves to now+d even if that is later (postpone).
func (q *Queue) AddAfterWithResult(key string, d time.Duration, replace bool) (AddResult, error) {
	s := scratchPool.Get().(*scratch)
	defer scratchPool.Put(s)
	if err := s.setKey(key); err != nil {
		return 0, q.errf("add-after", key, err)
	}
	s.after = iocAddAfter{KeyPtr: ptr(s.in[:]), KeyLen: uint32(len(key)), DelayNs: int64(d)}
	// The kernel refuses a flag that does not apply: replace is for delays.
	if replace && d > 0 {
		s.after.Flags = afterReplace
	}
	if err := q.call(iocAddAfterCmd, unsafe.Pointer(&s.after)); err != nil {
		return 0, q.errf("add-after", key, err)
	}
	return AddResult(s.after.Result), nil
}

// AddDebounced adds key once it has gone d without another debounced add,
// but no later than maxWait after the debounced add that began the burst
// (kube-rs's debounce, bounded so that a key that is never quiet still
// runs): a burst of events runs the key once, at its end. A key already
// queued, or being processed and already due to run again, is a
// Duplicate; a key with a waiting deadline from AddAfter or
// AddRateLimited keeps the earlier of the two. d must be > 0 and maxWait
// >= d (EINVAL otherwise); both are clamped to 7 days. Needs a module
// with FeatureDebounce (older ones refuse it with EINVAL). The rules in
// full are struct kwq_ioc_add_after's in uapi/linux/kwq.h.
func (q *Queue) AddDebounced(key string, d, maxWait time.Duration) (AddResult, error) {
	s := scratchPool.Get().(*scratch)
	defer scratchPool.Put(s)
	if err := s.setKey(key); err != nil {
		return 0, q.errf("add-debounced", key, err)
	}
	if d <= 0 || maxWait < d {
		return 0, q.errf("add-debounced", key, syscall.EINVAL)
	}
	s.after = iocAddAfter{KeyPtr: ptr(s.in[:]), KeyLen: uint32(len(key)), DelayNs: int64(d),
		Flags: afterDebounce, MaxWaitNs: uint64(maxWait)}
	if err := q.call(iocAddAfterCmd, unsafe.Pointer(&s.after)); err != nil {
		return 0, q.errf("add-debounced", key, err)
	}
	return AddResult(s.after.Result), nil
}

// AddWithPriority adds key now at priority (PriorityMin to PriorityMax) to
// a queue made WithPriority: a new key, or one not added since it was
// handed out, takes the priority; a later add only raises it, and a
// queued key moves up only if that hands it out sooner (Duplicate either
// way). Other queues take only priority 0 (EINVAL otherwise).
func (q *Queue) AddWithPriority(key string, priority int) (AddResult, error) {
	return q.addEx("add-priority", key, 0, priority)
}

// AddAfterWithPriority is AddAfterWithResult (no replace) at priority:
// the key becomes ready at its priority when d has passed.
func (q *Queue) AddAfterWithPriority(key string, d time.Duration, priority int) (AddResult, error) {
	return q.addEx("add-after-priority", key, d, priority)
}

func (q *Queue) addEx(op, key string, d time.Duration, priority int) (AddResult, error) {
	s := scratchPool.Get().(*scratch)
	defer scratchPool.Put(s)
	if err := s.setKey(key); err != nil {
		return 0, q.errf(op, key, err)
	}
	if priority < PriorityMin || priority > PriorityMax {
		return 0, q.errf(op, key, syscall.EINVAL)
	}
	s.add = iocAdd{KeyPtr: ptr(s.in[:]), KeyLen: uint32(len(key)), DelayNs: int64(d),
		Priority: int32(priority)}
	if err := q.call(iocAddExCmd, unsafe.Pointer(&s.add)); err != nil {
		return 0, q.errf(op, key, err)
	}
	return AddResult(s.add.Result), nil
}

// Cancel removes key's waiting entry, if it has one, and says so.
func (q *Queue) Cancel(key string) (bool, error) {
	r, err := q.keyCall("cancel", iocCancelCmd, key, 0)
	return r == 1, err
}

// AddRateLimited adds key after its backoff from the queue's limiter and
// counts a failure (client-go's AddRateLimited).
func (q *Queue) AddRateLimited(key string) { q.AddRateLimitedWithResult(key) }

// AddRateLimitedWithResult is AddRateLimited with its outcome.
func (q *Queue) AddRateLimitedWithResult(key string) (AddResult, error) {
	r, err := q.keyCall("add-rate-limited", iocAddRateLimCmd, key, 0)
	return AddResult(r), err
}

// Forget clears key's failure count (client-go's Forget); it does not
// remove the key from the queue, and Done is still needed.
func (q *Queue) Forget(key string) { q.ForgetWithResult(key) }

// ForgetWithResult is Forget; it reports whether the key had failures.
func (q *Queue) ForgetWithResult(key string) (bool, error) {
	r, err := q.keyCall("forget", iocForgetCmd, key, 0)
	return r == 1, err
}

// NumRequeues returns key's failure count: its AddRateLimited calls since
// the last Forget (client-go's NumRequeues). 0 on error.
func (q *Queue) NumRequeues(key string) int {
	r, err := q.keyCall("num-requeues", iocNumRequeuesCmd, key, 0)
	if err != nil {
		return 0
	}
	return int(r)
}

// Done ends the processing of key (client-go's Done): if it was added
// again meanwhile it is queued again. Done of a key this handle is not
// processing changes nothing.
func (q *Queue) Done(key string) { q.DoneWithResult(key) }

// Ticket names one hand-out of a key: GetWithTicket returns it, and
// DoneTicket ends that hand-out and no other. Tickets are nonzero and
// never given twice on one queue.
type Ticket uint64

// GetWithTicket waits for the next key like Get and returns it with its
// hand-out's ticket, for DoneTicket. It fails with an error wrapping
// ESHUTDOWN once the queue has shut down and has no key left, EIDRM if it
// was destroyed. Needs FeatureTicket (older modules return no ticket: 0).
func (q *Queue) GetWithTicket() (string, Ticket, error) {
	return q.getTicket(deadlineForever)
}

// DoneTicket ends the hand-out of key that t names: on a queue with a
// processing timeout, a worker that overstayed gets ENOENT instead of
// ending the key's next hand-out (which Done, naming only the key, would
// end if the same handle, or any handle for an unleased get, took it).
// Ticket 0 is Done's rule. It returns Finished or Requeued as
// DoneWithResult does.
func (q *Queue) DoneTicket(key string, t Ticket) (DoneResult, error) {
	s := scratchPool.Get().(*scratch)
	defer scratchPool.Put(s)
	if err := s.setKey(key); err != nil {
		return 0, q.errf("done", key, err)
	}
	s.key = iocKey{KeyPtr: ptr(s.in[:]), KeyLen: uint32(len(key)), Ticket: uint64(t)}
	if err := q.call(iocDoneCmd, unsafe.Pointer(&s.key)); err != nil {
		return 0, q.errf("done", key, err)
	}
	return DoneResult(s.key.Result), nil
}

// DoneWithResult is Done with its outcome, Finished or Requeued. It fails
// with ENOENT for a key that is not being processed, or that is leased to
// another handle. A key whose processing timeout expired is not being
// processed until it is handed out again (see WithProcessingTimeout).
func (q *Queue) DoneWithResult(key string) (DoneResult, error) {
	r, err := q.keyCall("done", iocDoneCmd, key, 0)
	return DoneResult(r), err
}

func (q *Queue) getFlags() uint32 {
	if q.unleased {
		return getUnleased
	}
	return 0
}

// nextGetTry is the retry rule of a get that tried with the kernel
// deadline try on its way to deadline. It returns the next call's
// deadline and whether to make it, or else the error to go on with:
//   - a try without waiting (deadlineNowait) that found no key ready
//     (EAGAIN), or no memory for the hand-out without sleeping (ENOMEM;
//     the key stays queued), leads to the waiting call, whose error alone
//     is final;
//   - for a get that must not wait for a key, that ENOMEM leads to a call
//     with a deadline already past (deadlinePast), which may sleep for
//     memory but not for a key, and whose ETIMEDOUT means what the first
//     try's EAGAIN would have: no key ready.
func nextGetTry(try, deadline uint64, err error) (uint64, bool, error) {
	switch {
	case try == deadlineNowait && deadline != deadlineNowait &&
		(err == syscall.EAGAIN || err == syscall.ENOMEM):
		return deadline, true, err
	case try == deadlineNowait && err == syscall.ENOMEM:
		return deadlinePast, true, err
	case try == deadlinePast && err == syscall.ETIMEDOUT:
		return try, false, syscall.EAGAIN
	}
	return try, false, err
}

// get takes one key with a kernel deadline.
func (q *Queue) get(deadline uint64) (string, error) {
	k, _, err := q.getTicket(deadline)
	return k, err
}

// getTicket takes one key with a kernel deadline and returns its
// hand-out's ticket too.
func (q *Queue) getTicket(deadline uint64) (string, Ticket, error) {
	s := scratchPool.Get().(*scratch)
	defer scratchPool.Put(s)
	buf := s.out[:]
	for try := deadlineNowait; ; {
		// A get that does not wait first: when a key is ready (a busy
		// queue) it is the cheaper call.
		s.get = iocGet{KeyPtr: ptr(buf), KeyCap: uint32(len(buf)), DeadlineNs: try,
			Flags: q.getFlags()}
		var err error
		if try == deadlineNowait {
			err = q.call(iocGetCmd, unsafe.Pointer(&s.get))
		} else {
			err = q.callWait(iocGetCmd, unsafe.Pointer(&s.get))
		}
		var again bool
		if try, again, err = nextGetTry(try, deadline, err); again {
			continue
		}
		if err == syscall.EMSGSIZE && int(s.get.KeyLen) > len(buf) {
			buf = make([]byte, s.get.KeyLen)
			continue
		}
		if err == syscall.EAGAIN && deadline != deadlineNowait {
			// The descriptor was made non-blocking behind our back.
			if err = q.waitReadable(nil, deadline); err == nil {
				continue
			}
		}
		if err != nil {
			return "", 0, q.errf("get", "", err)
		}
		return string(buf[:s.get.KeyLen]), Ticket(s.get.Ticket), nil
	}
}

// Get waits for the next key and returns it (client-go's Get). shutdown
// is true, and key empty, once the queue shuts down and has no key left
// to hand out, or on any error (a destroyed queue, a closed handle, or
// ENOMEM from a get that may sleep for memory: Get first tries without
// waiting, and that try's ENOMEM only makes it wait).
func (q *Queue) Get() (key string, shutdown bool) {
	k, err := q.get(deadlineForever)
	if err != nil {
		return "", true
	}
	return k, false
}

// TryGet takes the next key if one is ready, without waiting for one; it
// fails with EAGAIN if none is. When the kernel cannot allocate the
// hand-out's bookkeeping without sleeping, TryGet asks again allowing the
// allocation to sleep (never to wait for a key); ENOMEM comes only if
// that fails too.
func (q *Queue) TryGet() (string, error) { return q.get(deadlineNowait) }

// GetContext waits for the next key until ctx is done. It returns
// ctx.Err() when ctx ends first; an error wrapping ESHUTDOWN once the
// queue has shut down and has no key left, EIDRM if it was destroyed.
func (q *Queue) GetContext(ctx context.Context) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	if ctx.Done() == nil {
		return q.get(deadlineForever)
	}
	for {
		k, err := q.get(deadlineNowait)
		if !errors.Is(err, syscall.EAGAIN) {
			return k, err
		}
		if err := q.waitReadable(ctx, 0); err != nil {
			return "", q.wrapWait(ctx, "get", err)
		}
	}
}

// DoneGet ends the processing of done and waits for the next key, in one
// system call: a worker loop's Done and Get. res is Finished or Requeued
// once the done was carried out, DoneNotRun if the call failed before it
// (then nothing changed). Errors after the done are the get's (ESHUTDOWN
// once the queue has ended).
func (q *Queue) DoneGet(done string) (next string, res DoneResult, err error) {
	s := scratchPool.Get().(*scratch)
	defer scratchPool.Put(s)
	if err := s.setKey(done); err != nil {
		return "", DoneNotRun, q.errf("done-get", done, err)
	}
	buf := s.out[:]
	// DoneResult is output only: preset, so that a call failing before the
	// kernel writes it reads as not run.
	s.dg = iocDoneGet{DonePtr: ptr(s.in[:]), DoneLen: uint32(len(done)), DoneResult: doneNotRun,
		KeyPtr: ptr(buf), KeyCap: uint32(len(buf)), DeadlineNs: deadlineForever, Flags: q.getFlags()}
	// The get part does not wait: if no key is ready, the done is carried
	// out and a waiting get follows.
	s.dg.DeadlineNs = deadlineNowait
	if !q.acquire() {
		return "", DoneNotRun, q.errf("done-get", done, ErrClosed)
	}
	e := rawIoctl(q.fd, iocDoneGetCmd, unsafe.Pointer(&s.dg))
	for e == syscall.EINTR && s.dg.DoneResult == doneNotRun {
		e = rawIoctl(q.fd, iocDoneGetCmd, unsafe.Pointer(&s.dg))
	}
	q.release()
	res = DoneResult(s.dg.DoneResult)
	switch {
	case e == 0:
		return string(buf[:s.dg.KeyLen]), res, nil
	case res == DoneNotRun:
		return "", res, q.errf("done-get", done, e)
	case e == syscall.EINTR || e == syscall.EMSGSIZE || e == syscall.EAGAIN || e == syscall.ENOMEM:
		// The done was carried out; the get was not (no key ready, or
		// no memory for its hand-out without sleeping): get again,
		// waiting.
		next, err = q.get(deadlineForever)
		return next, res, err
	}
	return "", res, q.errf("done-get", "", e)
}

func (q *Queue) stats(op string) (*rawStats, error) {
	st := &rawStats{Size: uint32(sizeofStats)}
	if err := q.call(iocStatsCmd, unsafe.Pointer(st)); err != nil {
		return nil, q.errf(op, "", err)
	}
	return st, nil
}

// Len returns the number of keys ready for Get (client-go's Len): keys
// re-added while being processed and keys waiting for a deadline are not
// counted. 0 on error.
func (q *Queue) Len() int {
	st, err := q.stats("len")
	if err != nil {
		return 0
	}
	return int(st.Queued)
}

// ShutDown makes the queue refuse further adds and wakes every getter
// (client-go's ShutDown). Getters still receive the keys already queued,
// and wait while any key is being processed, then report shutdown. It acts on the kernel queue, for every process
// that shares it.
func (q *Queue) ShutDown() { q.ShutDownWithError() }

// ShutDownWithError is ShutDown, returning its error.
func (q *Queue) ShutDownWithError() error {
	if err := q.call(iocShutdownCmd, nil); err != nil {
		return q.errf("shutdown", "", err)
	}
	return nil
}

// ShutDownWithDrain shuts the queue down and waits until nothing is
// queued or processing (client-go's ShutDownWithDrain; client-go waits
// only for the keys being processed). Workers must call Done, or it
// waits forever; a later ShutDown cuts it short.
func (q *Queue) ShutDownWithDrain() { q.Drain(context.Background(), false) }

// Drain is ShutDownWithDrain with a deadline from ctx (its Done channel
// is not watched: only its deadline) and, with flushWaiting, keys waiting
// for a deadline queued now and waited for too (otherwise they are
// dropped). It fails with ETIMEDOUT at the deadline, ECANCELED if a
// ShutDown cut it short.
func (q *Queue) Drain(ctx context.Context, flushWaiting bool) error {
	a := &iocDrain{DeadlineNs: deadlineForever}
	if d, ok := ctx.Deadline(); ok {
		a.DeadlineNs = monoDeadline(time.Until(d))
	}
	if flushWaiting {
		a.Flags = drainFlushWaiting
	}
	if err := q.callWait(iocDrainCmd, unsafe.Pointer(a)); err != nil {
		return q.errf("drain", "", err)
	}
	return nil
}

// ShuttingDown reports whether the queue shuts down (client-go's
// ShuttingDown); true also for a destroyed queue or a closed handle.
func (q *Queue) ShuttingDown() bool {
	st, err := q.stats("shutting-down")
	if err != nil {
		return true
	}
	return st.State&(stateShuttingDown|stateDestroyed) != 0
}

// monoDeadline turns a timeout into an absolute CLOCK_MONOTONIC deadline.
func monoDeadline(d time.Duration) uint64 {
	if d <= 0 {
		return deadlinePast // not KWQ_DEADLINE_NOWAIT
	}
	now := monoNow()
	if uint64(d) > deadlineForever-1-now {
		return deadlineForever - 1
	}
	return now + uint64(d)
}

// monoNow reads CLOCK_MONOTONIC, the clock of kwq's deadlines, in ns.
func monoNow() uint64 {
	var ts syscall.Timespec
	// CLOCK_MONOTONIC is 1; through the vDSO would be faster, but the
	// syscall package has no vDSO access.
	syscall.RawSyscall(syscall.SYS_CLOCK_GETTIME, 1, uintptr(unsafe.Pointer(&ts)), 0)
	return uint64(ts.Sec)*1e9 + uint64(ts.Nsec)
}
