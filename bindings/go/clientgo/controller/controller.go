// SPDX-License-Identifier: GPL-2.0

//go:build kwqclientgo

// Package controller is client-go's examples/workqueue controller, with
// its business logic (Sync) passed in: shared informers feed it Pod keys,
// its workers reconcile them, retry a failing key with AddRateLimited up
// to five times and then drop it. It knows only client-go's
// workqueue.TypedRateLimitingInterface[string], so it runs unchanged on
// client-go's queue and on a *kwq.Queue. It builds in a GOPATH holding
// client-go's source (scripts/client-go.sh build).
package controller

import (
	"fmt"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
)

// MaxRetries is the example's limit: a key that failed this many times is
// dropped.
const MaxRetries = 5

// Sync is the business logic: pod is nil if the key's Pod no longer
// exists.
type Sync func(key string, pod *v1.Pod) error

// Controller is the example's controller.
type Controller struct {
	indexer cache.Indexer
	queue   workqueue.TypedRateLimitingInterface[string]
	sync    Sync

	mu      sync.Mutex
	dropped map[string]int
}

// New returns a controller on queue, reading Pods from indexer.
func New(queue workqueue.TypedRateLimitingInterface[string], indexer cache.Indexer, sync Sync) *Controller {
	return &Controller{indexer: indexer, queue: queue, sync: sync, dropped: map[string]int{}}
}

// Handler is the informer's event handler that feeds the controller's
// queue, as in the example.
func (c *Controller) Handler() cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj interface{}) {
			if key, err := cache.MetaNamespaceKeyFunc(obj); err == nil {
				c.queue.Add(key)
			}
		},
		UpdateFunc: func(old, new interface{}) {
			if key, err := cache.MetaNamespaceKeyFunc(new); err == nil {
				c.queue.Add(key)
			}
		},
		DeleteFunc: func(obj interface{}) {
			if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
				c.queue.Add(key)
			}
		},
	}
}

func (c *Controller) processNextItem() bool {
	key, quit := c.queue.Get()
	if quit {
		return false
	}
	defer c.queue.Done(key)
	err := c.syncKey(key)
	c.handleErr(err, key)
	return true
}

func (c *Controller) syncKey(key string) error {
	obj, exists, err := c.indexer.GetByKey(key)
	if err != nil {
		return err
	}
	if !exists {
		return c.sync(key, nil)
	}
	pod, ok := obj.(*v1.Pod)
	if !ok {
		return fmt.Errorf("%s is a %T, not a Pod", key, obj)
	}
	return c.sync(key, pod)
}

func (c *Controller) handleErr(err error, key string) {
	if err == nil {
		c.queue.Forget(key)
		return
	}
	if c.queue.NumRequeues(key) < MaxRetries {
		c.queue.AddRateLimited(key)
		return
	}
	c.queue.Forget(key)
	c.mu.Lock()
	c.dropped[key]++
	c.mu.Unlock()
	runtime.HandleError(fmt.Errorf("dropping pod %q out of the queue: %v", key, err))
}

// Dropped returns how often key was dropped after MaxRetries failures.
func (c *Controller) Dropped(key string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.dropped[key]
}

// RunWorkers runs workers workers until stopCh closes; the informer runs
// elsewhere (a shared informer factory).
func (c *Controller) RunWorkers(workers int, stopCh <-chan struct{}) {
	for i := 0; i < workers; i++ {
		go wait.Until(c.runWorker, time.Millisecond, stopCh)
	}
}

func (c *Controller) runWorker() {
	for c.processNextItem() {
	}
}
