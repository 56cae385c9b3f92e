// SPDX-License-Identifier: GPL-2.0

// Package workqueue is a copy of the interfaces of client-go's
// k8s.io/client-go/util/workqueue (queue.go, delaying_queue.go,
// rate_limiting_queue.go, v0.31 and later), written from their
// documented signatures so that kwq can prove, without depending on
// client-go, that *kwq.Queue is a TypedRateLimitingInterface[string].
package workqueue

import "time"

// TypedInterface is client-go's base queue interface.
type TypedInterface[T comparable] interface {
	Add(item T)
	Len() int
	Get() (item T, shutdown bool)
	Done(item T)
	ShutDown()
	ShutDownWithDrain()
	ShuttingDown() bool
}

// TypedDelayingInterface is an Interface that can Add an item at a later time.
type TypedDelayingInterface[T comparable] interface {
	TypedInterface[T]
	// AddAfter adds an item to the workqueue after the indicated duration has passed
	AddAfter(item T, duration time.Duration)
}

// TypedRateLimitingInterface is an interface that rate limits items being
// added to the queue.
type TypedRateLimitingInterface[T comparable] interface {
	TypedDelayingInterface[T]

	// AddRateLimited adds an item to the workqueue after the rate limiter says it's ok
	AddRateLimited(item T)

	// Forget indicates that an item is finished being retried. Doesn't
	// matter whether it's for perm failing or for success, we'll stop the
	// rate limiter from tracking it. This only clears the `rateLimiter`, you
	// still have to call `Done` on the queue.
	Forget(item T)

	// NumRequeues returns back how many times the item was requeued
	NumRequeues(item T) int
}
