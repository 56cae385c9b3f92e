// SPDX-License-Identifier: GPL-2.0

package kwq

import (
	"runtime"
	"syscall"
	"unsafe"
)

// AddPayload adds key with payload, on a queue made WithPayloadMax: a
// later add with a payload replaces it while the key is queued, waiting
// or processing (the latest wins; Stats counts PayloadsReplaced), an add
// without one keeps it, and GetPayload hands it out with the key. An
// empty payload is a plain Add. It fails with E2BIG past the queue's
// limit and EINVAL on a queue without payloads. The rules in full are in
// Documentation/kwq-payloads.rst.
func (q *Queue) AddPayload(key string, payload []byte) (AddResult, error) {
	s := scratchPool.Get().(*scratch)
	defer scratchPool.Put(s)
	if err := s.setKey(key); err != nil {
		return 0, q.errf("add-payload", key, err)
	}
	if uint64(len(payload)) > 1<<32-1 {
		return 0, q.errf("add-payload", key, syscall.E2BIG)
	}
	a := iocAdd{KeyPtr: ptr(s.in[:]), KeyLen: uint32(len(key))}
	if len(payload) > 0 {
		a.PayloadPtr = ptr(payload)
		a.PayloadLen = uint32(len(payload))
	}
	err := q.call(iocAddExCmd, unsafe.Pointer(&a))
	runtime.KeepAlive(payload)
	if err != nil {
		return 0, q.errf("add-payload", key, err)
	}
	return AddResult(a.Result), nil
}

// GetPayload is Get with the key's payload (nil for a key without one).
func (q *Queue) GetPayload() (key string, payload []byte, shutdown bool) {
	k, p, err := q.getPayload(deadlineForever)
	if err != nil {
		return "", nil, true
	}
	return k, p, false
}

// TryGetPayload is TryGet with the key's payload; like TryGet, it may
// sleep to allocate the hand-out, never for a key.
func (q *Queue) TryGetPayload() (string, []byte, error) { return q.getPayload(deadlineNowait) }

// getPayload takes one key and its payload with a kernel deadline; a
// buffer too small for either grows to what the kernel reports.
func (q *Queue) getPayload(deadline uint64) (string, []byte, error) {
	kbuf := make([]byte, KeyMax)
	pbuf := make([]byte, 256)
	try := deadline
	for {
		g := iocGet{KeyPtr: ptr(kbuf), KeyCap: uint32(len(kbuf)), DeadlineNs: try,
			Flags: q.getFlags(), PayloadPtr: ptr(pbuf), PayloadLen: uint32(len(pbuf))}
		err := q.callWait(iocGetCmd, unsafe.Pointer(&g))
		runtime.KeepAlive(kbuf)
		runtime.KeepAlive(pbuf)
		var again bool
		if try, again, err = nextGetTry(try, deadline, err); again {
			continue
		}
		if err == syscall.EMSGSIZE && int(g.PayloadLen) > len(pbuf) {
			pbuf = make([]byte, g.PayloadLen)
			continue
		}
		if err == syscall.EAGAIN && deadline != deadlineNowait {
			// The descriptor was made non-blocking behind our back.
			if err = q.waitReadable(nil, deadline); err == nil {
				continue
			}
		}
		if err != nil {
			return "", nil, q.errf("get-payload", "", err)
		}
		if g.PayloadLen == 0 {
			return string(kbuf[:g.KeyLen]), nil, nil
		}
		return string(kbuf[:g.KeyLen]), pbuf[:g.PayloadLen:g.PayloadLen], nil
	}
}
