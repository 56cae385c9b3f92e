// SPDX-License-Identifier: GPL-2.0

package kwq

// Tenant queues: the rotation, FIFO within a tenant, depth 2, with
// priorities, and refusals.

import (
	"errors"
	"syscall"
	"testing"
	"time"
)

func requireTenant(t *testing.T) {
	t.Helper()
	requireDevice(t)
	v, err := ReadVersion()
	if err != nil {
		t.Fatalf("ReadVersion: %v", err)
	}
	if v.Features&FeatureTenant == 0 {
		t.Fatalf("features %#x: FeatureTenant missing", v.Features)
	}
}

func TestTenantRotation(t *testing.T) {
	t.Parallel()
	requireTenant(t)
	q := newQueue(t, WithTenants(0)) // 0 means 1
	for _, k := range []string{"a/1", "a/2", "a/3", "b/1", "c/1", "x", "c/2", "/y"} {
		if r, err := q.AddWithResult(k); err != nil || r != Queued {
			t.Fatalf("Add(%s) = %v, %v", k, r, err)
		}
	}
	if r, err := q.AddWithResult("a/1"); err != nil || r != Duplicate {
		t.Fatalf("Add(a/1) again = %v, %v; want Duplicate", r, err)
	}
	expectOrder(t, q, "a/1", "b/1", "c/1", "x", "a/2", "c/2", "/y", "a/3")
}

func TestTenantDepth2(t *testing.T) {
	t.Parallel()
	requireTenant(t)
	q := newQueue(t, WithTenants(2))
	for _, k := range []string{"c1/n1/a", "c1/n1/b", "c1/n2/a", "c1/x", "c2/n1/a"} {
		q.Add(k)
	}
	expectOrder(t, q, "c1/n1/a", "c1/n2/a", "c1/x", "c2/n1/a", "c1/n1/b")
}

func TestTenantFlood(t *testing.T) {
	t.Parallel()
	requireTenant(t)
	q := newQueue(t, WithTenants(1))
	for i := 0; i < 2000; i++ {
		q.Add("noisy/" + string(rune('a'+i%26)) + string(rune('a'+i/26%26)) +
			string(rune('a'+i/676)))
	}
	q.Add("quiet/k")
	for i := 1; i <= 2; i++ {
		k, err := q.TryGet()
		if err != nil {
			t.Fatalf("get %d: %v", i, err)
		}
		q.Done(k)
		if k == "quiet/k" {
			return
		}
	}
	t.Fatalf("quiet/k not within k * T = 2 gets behind 2000 noisy keys")
}

func TestTenantPriority(t *testing.T) {
	t.Parallel()
	requireTenant(t)
	requirePriority(t)
	q := newQueue(t, WithTenants(1), WithPriority(time.Hour))
	q.AddWithPriority("a/1", 7)
	q.AddWithPriority("a/2", 7)
	q.AddWithPriority("a/3", 0)
	q.AddWithPriority("b/1", 7)
	q.AddWithPriority("c/1", 0)
	expectOrder(t, q, "a/1", "b/1", "a/2", "a/3", "c/1")
}

func TestTenantRefused(t *testing.T) {
	t.Parallel()
	requireTenant(t)
	for _, d := range []int{-1, TenantDepthMax + 1, 255} {
		if _, err := Create(queueName(t), WithTenants(d)); !errors.Is(err, syscall.EINVAL) {
			t.Errorf("WithTenants(%d): %v; want EINVAL", d, err)
		}
	}
}
