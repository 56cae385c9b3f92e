// SPDX-License-Identifier: GPL-2.0

//go:build kwqclientgo

// This file takes the place of client-go's util/workqueue/queue.go,
// delaying_queue.go and rate_limiting_queue.go (scripts/client-go.sh
// copies the package without them and adds this file), so that
// client-go's own tests of the package run against kwq's kernel queue:
// every constructor of those files is here, with the same signature,
// returning a queue backed by a kwq queue of its own.
//
// What the shim adds to kwq, and what it leaves out:
//   - Items: client-go's queues hold any comparable value; kwq's keys are
//     strings. The shim gives each item a key of its own ("i1", "i2", ...)
//     and keeps the item under its key while the kernel may hand the key
//     out: until a Done finishes it, for an item never added with a delay
//     (such items are kept until the process ends).
//   - Queues are made with PolicyKeep (client-go's rule: an Add of an
//     item waiting for an AddAfter deadline queues it now and keeps the
//     deadline).
//   - A custom TypedQueueConfig.Queue is told of Touch (an item added
//     again while queued and not being processed, as client-go does); the
//     order of hand-outs is the kernel's FIFO, its Push and Pop are not
//     used. A custom delaying queue (TypedDelayingQueueConfig.Queue,
//     TypedRateLimitingQueueConfig.DelayingQueue) must be one of the
//     shim's.
//   - Clock: a queue made with a clock other than client-go's real one
//     (clock.RealClock), such as the fake clock of client-go's tests
//     (k8s.io/utils/clock/testing), is a kwq queue on a manual clock
//     (kwq.WithManualClock) that follows it: before each of its calls
//     (Add, AddAfter, Len, Get, Done) the shim steps the kernel's clock
//     to the fake clock's time since the queue was made, and each AddAfter
//     also waits on the fake clock (its After) for its deadline and then
//     steps, so that a Get blocked in the kernel wakes when the test steps
//     the fake clock past the deadline, as client-go's waiting loop does.
//     A fake clock set back in time is not followed (kwq's time never
//     goes back). Otherwise kwq's deadlines follow the kernel's
//     CLOCK_MONOTONIC.
//   - MetricsProvider: client-go's own metrics code (metrics.go, not
//     replaced) is called where client-go's queue calls it: add when an
//     Add queues an item or marks one being processed (not for a
//     duplicate), get for each item handed out, done for each Done, and
//     the unfinished-work gauges on a ticker of the queue's clock; it
//     reads the queue's clock itself. kwq's own counters are in Stats.
//   - A delaying queue built by hand from the fields of client-go's
//     delayingType (as rate_limiting_queue_test.go does) hands each
//     AddAfter to its waitingForAddCh, as client-go's does; no waiting
//     loop reads that channel: the item also goes to the kwq queue of its
//     TypedInterface (if it is one of the shim's) with a delay.
//   - Rate limiting is client-go's: AddRateLimited is AddAfter with the
//     TypedRateLimiter's When, as in client-go's rate_limiting_queue.go.
//
// Each queue is named "cgo-<pid>-<n>" in the IPC namespace of the test.
package workqueue

import (
	"fmt"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/utils/clock"
	"kwq.dev/kwq"
)

// TypedInterface, Queue and the config types are client-go's, verbatim.

// Deprecated: Interface is deprecated, use TypedInterface instead.
type Interface TypedInterface[any]

type TypedInterface[T comparable] interface {
	Add(item T)
	Len() int
	Get() (item T, shutdown bool)
	Done(item T)
	ShutDown()
	ShutDownWithDrain()
	ShuttingDown() bool
}

// Queue is the underlying storage for items in client-go; the shim calls
// only its Touch.
type Queue[T comparable] interface {
	Touch(item T)
	Push(item T)
	Len() int
	Pop() (item T)
}

// DefaultQueue is a slice based FIFO queue.
func DefaultQueue[T comparable]() Queue[T] {
	return new(queue[T])
}

type queue[T comparable] []T

func (q *queue[T]) Touch(item T) {}

func (q *queue[T]) Push(item T) {
	*q = append(*q, item)
}

func (q *queue[T]) Len() int {
	return len(*q)
}

func (q *queue[T]) Pop() (item T) {
	item = (*q)[0]
	(*q)[0] = *new(T)
	*q = (*q)[1:]
	return item
}

type QueueConfig = TypedQueueConfig[any]

type TypedQueueConfig[T comparable] struct {
	Name            string
	MetricsProvider MetricsProvider
	Clock           clock.WithTicker
	Queue           Queue[T]
}

type DelayingInterface TypedDelayingInterface[any]

type TypedDelayingInterface[T comparable] interface {
	TypedInterface[T]
	AddAfter(item T, duration time.Duration)
}

type DelayingQueueConfig = TypedDelayingQueueConfig[any]

type TypedDelayingQueueConfig[T comparable] struct {
	Name            string
	MetricsProvider MetricsProvider
	Clock           clock.WithTicker
	Queue           TypedInterface[T]
}

type RateLimitingInterface TypedRateLimitingInterface[any]

type TypedRateLimitingInterface[T comparable] interface {
	TypedDelayingInterface[T]
	AddRateLimited(item T)
	Forget(item T)
	NumRequeues(item T) int
}

type RateLimitingQueueConfig = TypedRateLimitingQueueConfig[any]

type TypedRateLimitingQueueConfig[T comparable] struct {
	Name            string
	MetricsProvider MetricsProvider
	Clock           clock.WithTicker
	DelayingQueue   TypedDelayingInterface[T]
}

// Type is a work queue (see the package comment).
// Deprecated: Use Typed instead.
type Type = Typed[any]

// Typed is a work queue on a kwq queue.
type Typed[t comparable] struct {
	q     *kwq.Queue
	touch Queue[t]

	// mu orders the kernel calls that change whether an item's key may
	// be handed out (add, done) with the table's updates.
	mu         sync.Mutex
	keys       map[t]string
	items      map[string]t
	keep       map[string]bool // added with a delay: kept
	processing map[string]bool
	next       uint64

	// A queue made with a fake clock follows it (see the package
	// comment): fake is that clock, base its time when the queue was
	// made, stepped how far the kernel's clock was moved (under
	// clockMu).
	fake    clock.WithTicker
	base    time.Time
	clockMu sync.Mutex
	stepped time.Duration

	// client-go's metrics of the queue (noMetrics without a provider).
	metrics queueMetrics[t]
}

var queues atomic.Uint64

func newTyped[T comparable](touch Queue[T], clk clock.WithTicker) *Typed[T] {
	name := fmt.Sprintf("cgo-%d-%d", os.Getpid(), queues.Add(1))
	opts := []kwq.Option{kwq.WithPolicy(kwq.PolicyKeep)}
	if _, isReal := clk.(clock.RealClock); clk == nil || isReal {
		clk = nil
	} else {
		opts = append(opts, kwq.WithManualClock())
	}
	q, err := kwq.Create(name, opts...)
	if err != nil {
		panic("kwq shim: " + err.Error())
	}
	t := &Typed[T]{q: q, touch: touch, keys: map[T]string{}, items: map[string]T{},
		keep: map[string]bool{}, processing: map[string]bool{}, fake: clk,
		metrics: noMetrics[T]{}}
	if clk != nil {
		t.base = clk.Now()
	}
	return t
}

// follow steps a manual-clock queue's kernel clock to its fake clock's
// time since the queue was made. A step that fails (a destroyed queue)
// is dropped, as client-go's methods drop errors, and tried again next
// time.
func (q *Typed[T]) follow() {
	if q.fake == nil {
		return
	}
	q.clockMu.Lock()
	defer q.clockMu.Unlock()
	if d := q.fake.Now().Sub(q.base); d > q.stepped {
		if q.q.Step(d-q.stepped) == nil {
			q.stepped = d
		}
	}
}

// New constructs a new work queue.
func New() *Type {
	return NewWithConfig(QueueConfig{Name: ""})
}

// NewTyped constructs a new work queue.
func NewTyped[T comparable]() *Typed[T] {
	return NewTypedWithConfig(TypedQueueConfig[T]{Name: ""})
}

// NewWithConfig constructs a new work queue.
func NewWithConfig(config QueueConfig) *Type {
	return NewTypedWithConfig(config)
}

// NewTypedWithConfig constructs a new work queue.
func NewTypedWithConfig[T comparable](config TypedQueueConfig[T]) *Typed[T] {
	return newQueueWithConfig(config, defaultUnfinishedWorkUpdatePeriod)
}

const defaultUnfinishedWorkUpdatePeriod = 500 * time.Millisecond

// newQueueWithConfig and newQueue are client-go's internal constructors,
// which its tests call.
func newQueueWithConfig[T comparable](config TypedQueueConfig[T], updatePeriod time.Duration) *Typed[T] {
	metricsProvider := globalMetricsProvider
	if config.MetricsProvider != nil {
		metricsProvider = config.MetricsProvider
	}
	if config.Clock == nil {
		config.Clock = clock.RealClock{}
	}
	return newQueue(config.Clock, config.Queue,
		newQueueMetrics[T](metricsProvider, config.Name, config.Clock), updatePeriod)
}

func newQueue[T comparable](c clock.WithTicker, queue Queue[T], metrics queueMetrics[T], updatePeriod time.Duration) *Typed[T] {
	t := newTyped[T](queue, c)
	t.metrics = metrics
	if _, ok := metrics.(noMetrics[T]); !ok {
		go t.updateUnfinishedWorkLoop(c, updatePeriod)
	}
	return t
}

// updateUnfinishedWorkLoop is client-go's: the gauges of work in progress
// on each tick of the queue's clock, until the queue shuts down.
func (q *Typed[T]) updateUnfinishedWorkLoop(c clock.WithTicker, period time.Duration) {
	t := c.NewTicker(period)
	defer t.Stop()
	for range t.C() {
		q.mu.Lock()
		down := q.q.ShuttingDown()
		if !down {
			q.metrics.updateUnfinishedWork()
		}
		q.mu.Unlock()
		if down {
			return
		}
	}
}

// NewNamed creates a new named queue.
func NewNamed(name string) *Type {
	return NewWithConfig(QueueConfig{Name: name})
}

// keyOf returns item's key, making one if it has none (fresh). Called
// with mu.
func (q *Typed[T]) keyOf(item T) (k string, fresh bool) {
	if k, ok := q.keys[item]; ok {
		return k, false
	}
	q.next++
	k = "i" + strconv.FormatUint(q.next, 10)
	q.keys[item] = k
	q.items[k] = item
	return k, true
}

func (q *Typed[T]) forget(k string) {
	if q.keep[k] {
		return
	}
	delete(q.keys, q.items[k])
	delete(q.items, k)
}

// Add marks item as needing processing.
func (q *Typed[T]) Add(item T) {
	q.follow()
	q.mu.Lock()
	defer q.mu.Unlock()
	k, fresh := q.keyOf(item)
	r, err := q.q.AddWithResult(k)
	switch {
	case err != nil:
		// Refused (a queue that shuts down): a new key is not queued.
		if fresh {
			q.forget(k)
		}
	case r == kwq.Duplicate:
		if !q.processing[k] && q.touch != nil {
			q.touch.Touch(item)
		}
	default:
		q.metrics.add(item)
	}
}

// Len returns the number of items ready for Get.
func (q *Typed[T]) Len() int {
	q.follow()
	return q.q.Len()
}

// Get blocks until it can return an item to be processed.
func (q *Typed[T]) Get() (item T, shutdown bool) {
	q.follow()
	k, quit := q.q.Get()
	if quit {
		return item, true
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	q.processing[k] = true
	item = q.items[k]
	q.metrics.get(item)
	return item, false
}

// Done marks item as done processing.
func (q *Typed[T]) Done(item T) {
	q.follow()
	q.mu.Lock()
	defer q.mu.Unlock()
	k, ok := q.keys[item]
	if !ok {
		return
	}
	r, err := q.q.DoneWithResult(k)
	if err != nil {
		return
	}
	q.metrics.done(item)
	delete(q.processing, k)
	if r == kwq.Finished {
		q.forget(k)
	}
}

// ShutDown makes the queue ignore new items and its getters quit.
func (q *Typed[T]) ShutDown() { q.q.ShutDown() }

// ShutDownWithDrain shuts the queue down and waits for it to drain (kwq:
// nothing queued or processing).
func (q *Typed[T]) ShutDownWithDrain() { q.q.ShutDownWithDrain() }

// ShuttingDown reports whether the queue shuts down.
func (q *Typed[T]) ShuttingDown() bool { return q.q.ShuttingDown() }

// addAfter adds item once d has passed (kwq's AddAfter).
func (q *Typed[T]) addAfter(item T, d time.Duration) {
	q.follow()
	q.mu.Lock()
	k, _ := q.keyOf(item)
	if d > 0 {
		q.keep[k] = true
	}
	q.q.AddAfter(k, d)
	q.mu.Unlock()
	if q.fake != nil && d > 0 {
		// Step the kernel's clock once the fake clock reaches the
		// deadline, for a Get blocked in the kernel meanwhile.
		go func(c <-chan time.Time) {
			<-c
			q.follow()
		}(q.fake.After(d))
	}
}

// delayingType has the fields of client-go's, so that client-go's tests
// may build one by hand; a shim-made one has typed set and the others
// empty.
type delayingType[T comparable] struct {
	TypedInterface[T]

	typed *Typed[T]

	// The fields of client-go's delayingType: set only in a queue
	// built by hand (see the package comment).
	clock           clock.Clock
	stopCh          chan struct{}
	heartbeat       clock.Ticker
	waitingForAddCh chan *waitFor[T]
	metrics         retryMetrics
}

// waitFor is client-go's: an item and when it is to be added.
type waitFor[T any] struct {
	data    T
	readyAt time.Time
	index   int
}

// maxWait is client-go's heartbeat period (unused by the shim's queues).
const maxWait = 10 * time.Second

// AddAfter adds item once duration has passed.
func (q *delayingType[T]) AddAfter(item T, duration time.Duration) {
	if q.ShuttingDown() {
		return
	}
	if q.metrics != nil {
		q.metrics.retry()
	}
	if q.typed != nil {
		q.typed.addAfter(item, duration)
		return
	}
	// Built by hand: client-go's AddAfter, and the item to kwq.
	if t, ok := q.TypedInterface.(*Typed[T]); ok {
		t.addAfter(item, duration)
	} else if duration <= 0 {
		q.Add(item)
	}
	if duration <= 0 || q.waitingForAddCh == nil {
		return
	}
	select {
	case <-q.stopCh:
	case q.waitingForAddCh <- &waitFor[T]{data: item, readyAt: q.clock.Now().Add(duration)}:
	}
}

func NewDelayingQueue() DelayingInterface {
	return NewDelayingQueueWithConfig(DelayingQueueConfig{})
}

func NewTypedDelayingQueue[T comparable]() TypedDelayingInterface[T] {
	return NewTypedDelayingQueueWithConfig(TypedDelayingQueueConfig[T]{})
}

func NewDelayingQueueWithConfig(config DelayingQueueConfig) DelayingInterface {
	return NewTypedDelayingQueueWithConfig[any](config)
}

func TypedNewDelayingQueue[T comparable]() TypedDelayingInterface[T] {
	return NewTypedDelayingQueue[T]()
}

func NewTypedDelayingQueueWithConfig[T comparable](config TypedDelayingQueueConfig[T]) TypedDelayingInterface[T] {
	retries := newRetryMetrics(config.Name, config.MetricsProvider)
	if config.Queue == nil {
		t := NewTypedWithConfig(TypedQueueConfig[T]{Name: config.Name,
			MetricsProvider: config.MetricsProvider, Clock: config.Clock})
		return &delayingType[T]{TypedInterface: t, typed: t, metrics: retries}
	}
	if t, ok := config.Queue.(*Typed[T]); ok {
		return &delayingType[T]{TypedInterface: t, typed: t, metrics: retries}
	}
	panic("kwq shim: a delaying queue's Queue must be one of the shim's")
}

func NewDelayingQueueWithCustomQueue(q Interface, name string) DelayingInterface {
	return NewDelayingQueueWithConfig(DelayingQueueConfig{Name: name, Queue: q})
}

func NewNamedDelayingQueue(name string) DelayingInterface {
	return NewDelayingQueueWithConfig(DelayingQueueConfig{Name: name})
}

func NewDelayingQueueWithCustomClock(clock clock.WithTicker, name string) DelayingInterface {
	return NewDelayingQueueWithConfig(DelayingQueueConfig{Name: name, Clock: clock})
}

type rateLimitingType[T comparable] struct {
	TypedDelayingInterface[T]
	rateLimiter TypedRateLimiter[T]
}

func (q *rateLimitingType[T]) AddRateLimited(item T) {
	q.TypedDelayingInterface.AddAfter(item, q.rateLimiter.When(item))
}

func (q *rateLimitingType[T]) NumRequeues(item T) int {
	return q.rateLimiter.NumRequeues(item)
}

func (q *rateLimitingType[T]) Forget(item T) {
	q.rateLimiter.Forget(item)
}

func NewRateLimitingQueue(rateLimiter RateLimiter) RateLimitingInterface {
	return NewRateLimitingQueueWithConfig(rateLimiter, RateLimitingQueueConfig{})
}

func NewTypedRateLimitingQueue[T comparable](rateLimiter TypedRateLimiter[T]) TypedRateLimitingInterface[T] {
	return NewTypedRateLimitingQueueWithConfig(rateLimiter, TypedRateLimitingQueueConfig[T]{})
}

func NewRateLimitingQueueWithConfig(rateLimiter RateLimiter, config RateLimitingQueueConfig) RateLimitingInterface {
	return NewTypedRateLimitingQueueWithConfig(rateLimiter, config)
}

func NewTypedRateLimitingQueueWithConfig[T comparable](rateLimiter TypedRateLimiter[T], config TypedRateLimitingQueueConfig[T]) TypedRateLimitingInterface[T] {
	if config.DelayingQueue == nil {
		config.DelayingQueue = NewTypedDelayingQueueWithConfig(TypedDelayingQueueConfig[T]{
			Name: config.Name, MetricsProvider: config.MetricsProvider, Clock: config.Clock})
	}
	return &rateLimitingType[T]{TypedDelayingInterface: config.DelayingQueue, rateLimiter: rateLimiter}
}

func NewNamedRateLimitingQueue(rateLimiter RateLimiter, name string) RateLimitingInterface {
	return NewRateLimitingQueueWithConfig(rateLimiter, RateLimitingQueueConfig{Name: name})
}

func NewRateLimitingQueueWithDelayingInterface(di DelayingInterface, rateLimiter RateLimiter) RateLimitingInterface {
	return NewRateLimitingQueueWithConfig(rateLimiter, RateLimitingQueueConfig{DelayingQueue: di})
}
