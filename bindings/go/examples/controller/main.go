// SPDX-License-Identifier: GPL-2.0

// Command controller is a Kubernetes-style controller loop on a kwq queue,
// written as a client-go user writes it: several workers, each getting a
// key, reconciling it, and on failure retrying it with backoff
// (AddRateLimited) up to a limit, on success forgetting its failures
// (Forget), and always calling Done. Only the constructor differs from a
// client-go controller: the Controller type below takes client-go's
// interface, here kwq's local copy of it.
//
// It adds -keys keys, of which every -fail-every'th fails its first
// -failures attempts, runs -workers workers until every key succeeded,
// checks the queue's counters, shuts down and exits 0; any mismatch exits 1.
//
//	controller [-queue NAME] [-workers 4] [-keys 200] [-fail-every 5] [-failures 2]
package main

import (
	"flag"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"kwq.dev/kwq"
	"kwq.dev/kwq/internal/workqueue"
)

const maxRetries = 5

// Controller is unchanged from a client-go controller: it only knows
// workqueue.TypedRateLimitingInterface[string].
type Controller struct {
	queue     workqueue.TypedRateLimitingInterface[string]
	reconcile func(key string) error
	succeeded atomic.Int64
	dropped   atomic.Int64
}

// Run starts the workers and returns when the queue shuts down.
func (c *Controller) Run(workers int) {
	var wg sync.WaitGroup
	for i := 0; i < workers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c.processNextWorkItem() {
			}
		}()
	}
	wg.Wait()
}

func (c *Controller) processNextWorkItem() bool {
	key, quit := c.queue.Get()
	if quit {
		return false
	}
	defer c.queue.Done(key)

	if err := c.reconcile(key); err != nil {
		if c.queue.NumRequeues(key) < maxRetries {
			c.queue.AddRateLimited(key)
			return true
		}
		c.dropped.Add(1)
		c.queue.Forget(key)
		return true
	}
	c.queue.Forget(key)
	c.succeeded.Add(1)
	return true
}

func main() {
	name := flag.String("queue", fmt.Sprintf("example-controller-%d", os.Getpid()), "queue name")
	workers := flag.Int("workers", 4, "worker goroutines")
	keys := flag.Int("keys", 200, "keys to reconcile")
	failEvery := flag.Int("fail-every", 5, "every N-th key fails at first (0: none)")
	failures := flag.Int("failures", 2, "failed attempts of those keys before they succeed")
	flag.Parse()

	// client-go: workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]())
	queue, err := kwq.NewRateLimitingQueue(*name,
		kwq.WithRateLimiter(kwq.MaxOf(kwq.ExponentialLimiter(time.Millisecond, time.Second),
			kwq.BucketLimiter(10000, 1000))))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer queue.Close()
	defer queue.Destroy()

	var mu sync.Mutex
	var ok atomic.Int64
	attempts := map[string]int{}
	c := &Controller{queue: queue}
	c.reconcile = func(key string) error {
		mu.Lock()
		attempts[key]++
		n := attempts[key]
		mu.Unlock()
		var i int
		fmt.Sscanf(key, "default/object-%d", &i)
		if *failEvery > 0 && i%*failEvery == 0 && n <= *failures {
			return fmt.Errorf("%s: transient error %d", key, n)
		}
		if ok.Add(1) == int64(*keys) {
			// The last key: stop once it is done.
			go queue.ShutDownWithDrain()
		}
		return nil
	}
	for i := 0; i < *keys; i++ {
		queue.Add(fmt.Sprintf("default/object-%d", i))
	}
	start := time.Now()
	c.Run(*workers)
	st, err := queue.Stats()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	failing := 0
	if *failEvery > 0 {
		failing = (*keys + *failEvery - 1) / *failEvery
	}
	retries := uint64(failing * *failures)
	fmt.Printf("%d keys reconciled by %d workers in %v: %d retries with backoff, %d dropped\n",
		c.succeeded.Load(), *workers, time.Since(start).Round(time.Millisecond), st.RateLimited,
		c.dropped.Load())
	good := c.succeeded.Load() == int64(*keys) && c.dropped.Load() == 0 && st.RateLimited == retries &&
		st.Forgets == uint64(failing) && st.Items == 0 && st.BackoffKeys == 0
	if !good {
		fmt.Fprintf(os.Stderr, "unexpected: succeeded %d dropped %d rate_limited %d (want %d) forgets %d (want %d) items %d backoff_keys %d\n",
			c.succeeded.Load(), c.dropped.Load(), st.RateLimited, retries, st.Forgets, failing,
			st.Items, st.BackoffKeys)
		os.Exit(1)
	}
}
