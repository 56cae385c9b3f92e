// SPDX-License-Identifier: GPL-2.0

package kwq

import (
	"bytes"
	"errors"
	"syscall"
	"testing"
)

func requirePayload(t *testing.T) {
	t.Helper()
	requireDevice(t)
	v, err := ReadVersion()
	if err != nil {
		t.Fatalf("ReadVersion: %v", err)
	}
	if v.Features&FeaturePayload == 0 {
		t.Fatalf("features %#x: FeaturePayload missing", v.Features)
	}
}

func mustGetPayload(t *testing.T, q *Queue, wantKey, want string) {
	t.Helper()
	k, p, err := q.TryGetPayload()
	if err != nil || k != wantKey || !bytes.Equal(p, []byte(want)) {
		t.Fatalf("TryGetPayload = %q, %q, %v; want %q, %q", k, p, err, wantKey, want)
	}
}

// The latest payload wins while queued; an add while processing keeps
// the new one for the next run; done frees it.
func TestPayloadRules(t *testing.T) {
	t.Parallel()
	requirePayload(t)
	q := newQueue(t, WithPayloadMax(64))
	if r, err := q.AddPayload("k", []byte("v1")); err != nil || r != Queued {
		t.Fatalf("AddPayload = %v, %v; want Queued", r, err)
	}
	if r, err := q.AddPayload("k", []byte("v2")); err != nil || r != Duplicate {
		t.Fatalf("second AddPayload = %v, %v; want Duplicate", r, err)
	}
	q.Add("k")
	mustGetPayload(t, q, "k", "v2")
	if r, err := q.AddPayload("k", []byte("v3")); err != nil || r != Deferred {
		t.Fatalf("AddPayload while processing = %v, %v; want Deferred", r, err)
	}
	if r, err := q.DoneWithResult("k"); err != nil || r != Requeued {
		t.Fatalf("Done = %v, %v; want Requeued", r, err)
	}
	mustGetPayload(t, q, "k", "v3")
	q.Done("k")
	st := mustStats(t, q)
	if st.PayloadsReplaced != 2 || st.PayloadBytes != 0 || st.Items != 0 {
		t.Fatalf("stats: replaced %d bytes %d items %d; want 2 0 0", st.PayloadsReplaced,
			st.PayloadBytes, st.Items)
	}
	q.Add("plain")
	mustGetPayload(t, q, "plain", "")
	q.Done("plain")
}

// Bad payloads are refused and change nothing.
func TestPayloadRefused(t *testing.T) {
	t.Parallel()
	requirePayload(t)
	q := newQueue(t, WithPayloadMax(4))
	if _, err := q.AddPayload("k", []byte("12345")); !errors.Is(err, syscall.E2BIG) {
		t.Fatalf("AddPayload past payload_max: %v; want E2BIG", err)
	}
	plain := newQueue(t)
	if _, err := plain.AddPayload("k", []byte("x")); !errors.Is(err, syscall.EINVAL) {
		t.Fatalf("AddPayload on a plain queue: %v; want EINVAL", err)
	}
	if st := mustStats(t, q); st.Items != 0 || st.Adds != 0 {
		t.Fatalf("refused adds changed the stats: %+v", st)
	}
	if _, err := Create(queueName(t), WithPayloadMax(1<<20)); !errors.Is(err, syscall.EINVAL) {
		t.Fatalf("Create with payload_max past max_payload: %v; want EINVAL", err)
	}
	// A payload larger than GetPayload's first buffer.
	big := newQueue(t, WithPayloadMax(4096))
	want := bytes.Repeat([]byte("p"), 3000)
	if _, err := big.AddPayload("b", want); err != nil {
		t.Fatalf("AddPayload of 3000 bytes: %v", err)
	}
	_, p, err := big.TryGetPayload()
	if err != nil || !bytes.Equal(p, want) {
		t.Fatalf("TryGetPayload of 3000 bytes: %d bytes, %v", len(p), err)
	}
}
