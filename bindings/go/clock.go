// SPDX-License-Identifier: GPL-2.0

package kwq

import (
	"syscall"
	"time"
	"unsafe"
)

// WithManualClock makes a new queue whose time moves only when a program
// calls Step, as client-go's testing clock (k8s.io/utils/clock/testing)
// moves only by its Step: for tests of controllers that must not wait in
// real time for backoffs and deadlines. Its clock starts at 0 when the
// queue is made. AddAfter and debounce deadlines, AddRateLimited's
// limiters (the bucket refills with steps, backoffs count from the
// step's time), the processing timeout, priority aging and the durations
// of Stats all follow it, and no timer runs for it; the deadlines of
// GetContext's and Drain's contexts stay real time.
// Needs FeatureManualClock.
func WithManualClock() Option { return func(c *config) { c.manualClock = true } }

// Step moves the queue's manual clock forward by d (0 only reads it) and
// returns once every key whose deadline the new time reaches is queued,
// earliest deadline first, and every key processing past the queue's
// processing timeout is put back, their getters woken: what a timer
// reaching that time would do. Only on a queue made WithManualClock
// (EOPNOTSUPP otherwise), through a handle of the queue's owner
// (EPERM otherwise); a negative d is EINVAL, a time past ClockMax
// EOVERFLOW, and either changes nothing.
func (q *Queue) Step(d time.Duration) error {
	_, err := q.step(d)
	return err
}

// ClockNow reads the queue's manual clock: the sum of its steps, the
// time since the queue was made on its own clock. Errors as for Step.
func (q *Queue) ClockNow() (time.Duration, error) {
	return q.step(0)
}

// step runs KWQ_IOC_CLOCK_STEP until the kernel has nothing due left (a
// call runs at most 1024 keys).
func (q *Queue) step(d time.Duration) (time.Duration, error) {
	if d < 0 {
		return 0, q.errf("clock step", "", syscall.EINVAL)
	}
	for {
		a := iocClockStep{StepNs: int64(d)}
		if err := q.callWait(iocClockStepCmd, unsafe.Pointer(&a)); err != nil {
			return 0, q.errf("clock step", "", err)
		}
		if a.Pending == 0 {
			return time.Duration(a.NowNs), nil
		}
		d = 0
	}
}
