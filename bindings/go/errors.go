// SPDX-License-Identifier: GPL-2.0

package kwq

import (
	"strconv"
	"syscall"
)

// Error is the error of a failed kwq call. It wraps the errno the kernel
// returned, so errors.Is(err, syscall.ESHUTDOWN) (or unix.ESHUTDOWN, the
// same value) tells a queue that shuts down from other failures.
type Error struct {
	Op    string // the call: "add", "get", "create", ...
	Queue string // the queue's name
	Key   string // the key concerned, if any
	Err   error  // a syscall.Errno, or ErrClosed
}

func (e *Error) Error() string {
	s := "kwq: " + e.Op
	if e.Queue != "" {
		s += " " + strconv.Quote(e.Queue)
	}
	if e.Key != "" {
		s += " key " + strconv.Quote(e.Key)
	}
	return s + ": " + e.Err.Error()
}

// Unwrap returns the errno (or ErrClosed).
func (e *Error) Unwrap() error { return e.Err }

type closedError struct{}

func (closedError) Error() string { return "use of a closed queue handle" }

// Is makes errors.Is(ErrClosed, syscall.EBADF) true: a closed handle is a
// bad descriptor.
func (closedError) Is(target error) bool { return target == syscall.EBADF }

// ErrClosed is wrapped by the error of any call on a Queue after Close.
// errors.Is(err, syscall.EBADF) is true for it as well.
var ErrClosed error = closedError{}
