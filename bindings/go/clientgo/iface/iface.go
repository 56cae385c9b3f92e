// SPDX-License-Identifier: GPL-2.0

//go:build kwqclientgo

// Package iface checks at compile time that *kwq.Queue satisfies
// client-go's own work queue interfaces, not a copy of them. It builds
// only in a GOPATH holding client-go's source (scripts/client-go.sh
// build; the build tag kwqclientgo keeps it out of the module's builds).
package iface

import (
	"k8s.io/client-go/util/workqueue"
	"kwq.dev/kwq"
)

var (
	_ workqueue.TypedRateLimitingInterface[string] = (*kwq.Queue)(nil)
	_ workqueue.TypedDelayingInterface[string]     = (*kwq.Queue)(nil)
	_ workqueue.TypedInterface[string]             = (*kwq.Queue)(nil)
)
