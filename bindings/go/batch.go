// SPDX-License-Identifier: GPL-2.0

package kwq

import (
	"context"
	"errors"
	"sync"
	"syscall"
	"unsafe"
)

// batchScratch holds a batch's entries and key bytes on the heap.
type batchScratch struct {
	arg     iocBatch
	entries []batchEntry
	keys    []byte
}

var batchPool = sync.Pool{New: func() any { return new(batchScratch) }}

func (b *batchScratch) grow(n, bytes int) {
	if cap(b.entries) < n {
		b.entries = make([]batchEntry, n)
	}
	b.entries = b.entries[:n]
	if cap(b.keys) < bytes {
		b.keys = make([]byte, bytes)
	}
	b.keys = b.keys[:bytes]
}

// packKeys copies keys into b and points the entries at them.
func (b *batchScratch) packKeys(keys []string) {
	total := 0
	for _, k := range keys {
		total += len(k)
	}
	b.grow(len(keys), total+1)
	off := 0
	for i, k := range keys {
		copy(b.keys[off:], k)
		b.entries[i] = batchEntry{KeyPtr: ptr(b.keys[off:]), KeyLen: uint32(len(k))}
		off += len(k)
	}
}

// runBatch submits entries [0, n) in calls of at most BatchMax, each
// resubmitting what the last did not complete, until all are done or one
// fails. It returns how many were carried out and the error of the first
// that failed.
func (q *Queue) runBatch(b *batchScratch, req uintptr, flags uint32) (int, error) {
	done := 0
	for done < len(b.entries) {
		n := len(b.entries) - done
		if n > BatchMax {
			n = BatchMax
		}
		b.arg = iocBatch{EntriesPtr: uint64(uintptr(unsafe.Pointer(&b.entries[done]))),
			Count: uint32(n), Flags: flags}
		if err := q.call(req, unsafe.Pointer(&b.arg)); err != nil {
			return done, err
		}
		done += int(b.arg.Completed)
	}
	return done, nil
}

func validKeys(keys []string) (int, bool) {
	for i, k := range keys {
		if len(k) == 0 || len(k) > KeyMax {
			return i, false
		}
	}
	return 0, true
}

// AddBatch adds keys in as few system calls as possible (1024 keys per
// call), in order, and returns the result of each key carried out. It
// stops at the first key that fails: len(results) is its index, and err
// says why.
func (q *Queue) AddBatch(keys []string) (results []AddResult, err error) {
	return q.AddBatchWithPolicy(keys, PolicyDefault)
}

// AddBatchWithPolicy is AddBatch with a waiting policy for these adds.
func (q *Queue) AddBatchWithPolicy(keys []string, p Policy) ([]AddResult, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	if i, ok := validKeys(keys); !ok {
		return nil, q.errf("add batch", keys[i], syscall.EINVAL)
	}
	if p > PolicyStrict {
		return nil, q.errf("add batch", "", syscall.EINVAL)
	}
	b := batchPool.Get().(*batchScratch)
	defer batchPool.Put(b)
	b.packKeys(keys)
	n, err := q.runBatch(b, iocAddBatchCmd, uint32(p))
	res := make([]AddResult, n)
	for i := range res {
		res[i] = AddResult(b.entries[i].Result)
	}
	if err != nil {
		return res, q.errf("add batch", keys[n], err)
	}
	return res, nil
}

// DoneBatch ends the processing of keys, like Done of each in turn, in as
// few system calls as possible, and returns the result of each key
// carried out. It stops at the first key that fails (ENOENT for a key
// that is not processing): len(results) is its index.
func (q *Queue) DoneBatch(keys []string) ([]DoneResult, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	if i, ok := validKeys(keys); !ok {
		return nil, q.errf("done batch", keys[i], syscall.EINVAL)
	}
	b := batchPool.Get().(*batchScratch)
	defer batchPool.Put(b)
	b.packKeys(keys)
	n, err := q.runBatch(b, iocDoneBatchCmd, 0)
	res := make([]DoneResult, n)
	for i := range res {
		res[i] = DoneResult(b.entries[i].Result)
	}
	if err != nil {
		return res, q.errf("done batch", keys[n], err)
	}
	return res, nil
}

// GetBatch waits until at least one key is ready (or ctx is done), then
// takes up to max keys, as many as are ready, in one system call. Errors
// are GetContext's.
func (q *Queue) GetBatch(ctx context.Context, max int) ([]string, error) {
	if max <= 0 || max > BatchMax {
		return nil, q.errf("get batch", "", syscall.EINVAL)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	b := batchPool.Get().(*batchScratch)
	defer batchPool.Put(b)
	b.grow(max, max*KeyMax)
	// Without a Done channel the kernel waits (after a first try that
	// does not); with one, the wait is a poll that cancellation can end.
	deadline, try := deadlineNowait, deadlineNowait
	if ctx.Done() == nil {
		deadline = deadlineForever
	}
	for {
		for i := range b.entries {
			b.entries[i] = batchEntry{KeyPtr: ptr(b.keys[i*KeyMax:]), KeyLen: KeyMax}
		}
		b.arg = iocBatch{EntriesPtr: uint64(uintptr(unsafe.Pointer(&b.entries[0]))),
			Count: uint32(max), Flags: q.getFlags(), DeadlineNs: try}
		var err error
		if try == deadlineNowait {
			err = q.call(iocGetBatchCmd, unsafe.Pointer(&b.arg))
		} else {
			err = q.callWait(iocGetBatchCmd, unsafe.Pointer(&b.arg))
		}
		var again bool
		if try, again, err = nextGetTry(try, deadline, err); again {
			continue
		}
		if try == deadlinePast {
			try = deadlineNowait // the next round does not sleep for memory first
		}
		if errors.Is(err, syscall.EAGAIN) {
			if err = q.waitReadable(ctx, deadlineForever); err == nil {
				continue
			}
			return nil, q.wrapWait(ctx, "get batch", err)
		}
		if err != nil {
			return nil, q.errf("get batch", "", err)
		}
		out := make([]string, b.arg.Completed)
		for i := range out {
			out[i] = string(b.keys[i*KeyMax : i*KeyMax+int(b.entries[i].KeyLen)])
		}
		return out, nil
	}
}
