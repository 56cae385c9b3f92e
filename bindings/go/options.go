// SPDX-License-Identifier: GPL-2.0

package kwq

import (
	"math"
	"os"
	"time"
)

// Policy says what an Add does to a key that waits for an AddAfter or
// AddRateLimited deadline.
type Policy uint32

const (
	// PolicyDefault: the queue's policy in a call; in a queue, PolicyPromote.
	PolicyDefault Policy = 0
	// PolicyKeep is client-go's behaviour: the key is queued now and its
	// waiting entry stays and fires later, so it runs twice.
	PolicyKeep Policy = 1
	// PolicyPromote: the key is queued now and its waiting entry is
	// dropped: one run, as soon as possible.
	PolicyPromote Policy = 2
	// PolicyStrict: the add is absorbed and the key runs at its waiting
	// deadline, so an Add cannot bypass a backoff.
	PolicyStrict Policy = 3
)

// Limiter is one backoff limiter of a RateLimiter (client-go's
// TypedRateLimiter implementations), made by ExponentialLimiter,
// FastSlowLimiter or BucketLimiter.
type Limiter struct {
	raw limiter
	err bool
}

// ExponentialLimiter delays the n-th failure of a key by base*2^n, capped
// at max (client-go's NewTypedItemExponentialFailureRateLimiter).
func ExponentialLimiter(base, max time.Duration) Limiter {
	return Limiter{raw: limiter{Type: limiterExponential, BaseNs: nsec(base), MaxNs: nsec(max)},
		err: base <= 0 || max < base}
}

// FastSlowLimiter delays the first maxFast failures of a key by fast and
// later ones by slow (client-go's NewTypedItemFastSlowRateLimiter).
func FastSlowLimiter(fast, slow time.Duration, maxFast int) Limiter {
	return Limiter{raw: limiter{Type: limiterFastSlow, FastNs: nsec(fast), SlowNs: nsec(slow),
		MaxFast: uint32(maxFast)}, err: maxFast < 0 || maxFast >= 524287 || fast < 0 || slow < 0}
}

// BucketLimiter is a token bucket shared by all keys: qps tokens per
// second (math.Inf(1) never limits), burst tokens, starting full
// (client-go's TypedBucketRateLimiter with rate.NewLimiter(qps, burst)).
func BucketLimiter(qps float64, burst int) Limiter {
	l := Limiter{raw: limiter{Type: limiterBucket, Burst: uint32(burst)}}
	switch {
	case math.IsInf(qps, 1):
		l.raw.RateMhz = rateInf
	case qps*1000 >= 1 && qps*1000 < math.MaxInt64:
		l.raw.RateMhz = uint64(math.Round(qps * 1000))
	default:
		l.err = true
	}
	l.err = l.err || burst < 0 || int64(burst) > math.MaxUint32
	return l
}

// RateLimiter is a queue's backoff policy for AddRateLimited: every
// limiter is consulted and the longest delay wins (client-go's
// MaxOfRateLimiter), capped at MaxWait if it is not 0 (client-go's
// WithMaxWaitRateLimiter). At most 4 limiters.
type RateLimiter struct {
	Limiters []Limiter
	MaxWait  time.Duration
}

// MaxOf is client-go's NewTypedMaxOfRateLimiter.
func MaxOf(limiters ...Limiter) RateLimiter { return RateLimiter{Limiters: limiters} }

// WithMaxWait caps the delay, like client-go's NewTypedWithMaxWaitRateLimiter.
func (r RateLimiter) WithMaxWait(d time.Duration) RateLimiter {
	r.MaxWait = d
	return r
}

// DefaultControllerRateLimiter is client-go's DefaultTypedControllerRateLimiter:
// exponential 5 ms .. 1000 s per key, and 10 qps with a burst of 100 overall.
func DefaultControllerRateLimiter() RateLimiter {
	return MaxOf(ExponentialLimiter(5*time.Millisecond, 1000*time.Second), BucketLimiter(10, 100))
}

// DefaultItemBasedRateLimiter is client-go's DefaultTypedItemBasedRateLimiter:
// exponential 1 ms .. 1000 s per key.
func DefaultItemBasedRateLimiter() RateLimiter {
	return MaxOf(ExponentialLimiter(time.Millisecond, 1000*time.Second))
}

func nsec(d time.Duration) uint64 {
	if d < 0 {
		return 0
	}
	return uint64(d)
}

// Option configures Create, Open and NewRateLimitingQueue. Options that
// describe a new queue (mode, policy, limiter, limits, processing
// timeout) apply only when the call creates it; an existing queue keeps
// its own.
type Option func(*config)

type config struct {
	device            string
	mode              uint32
	policy            Policy
	rl                *RateLimiter
	maxItems          uint32
	maxBackoffKeys    uint32
	processingTimeout time.Duration
	unleased          bool
	priority          bool
	aging             time.Duration
	payloadMax        uint32
	tenants           bool
	tenantDepth       int
	kernelScope       bool
	manualClock       bool
}

func newConfig(opts []Option) config {
	c := config{device: "/dev/kwq", mode: 0o600}
	for _, o := range opts {
		o(&c)
	}
	return c
}

// WithMode sets the permission bits of a new queue (default 0600), checked
// by later opens like SysV IPC.
func WithMode(perm os.FileMode) Option { return func(c *config) { c.mode = uint32(perm.Perm()) } }

// WithPolicy sets what an Add of a waiting key does (default PolicyPromote;
// PolicyKeep is client-go's behaviour).
func WithPolicy(p Policy) Option { return func(c *config) { c.policy = p } }

// WithRateLimiter sets the backoff of AddRateLimited. Without it a new
// queue gets DefaultControllerRateLimiter.
func WithRateLimiter(r RateLimiter) Option { return func(c *config) { c.rl = &r } }

// WithMaxItems bounds the keys the queue tracks at once (0: the module's
// default; larger values are clamped to it).
func WithMaxItems(n uint32) Option { return func(c *config) { c.maxItems = n } }

// WithMaxBackoffKeys bounds the keys kept only for their failure count.
func WithMaxBackoffKeys(n uint32) Option { return func(c *config) { c.maxBackoffKeys = n } }

// WithProcessingTimeout puts a key back at the head of the queue when it
// stays processing longer than d. Done names the key, not its hand-out,
// so the overstaying worker's late Done ends whatever hand-out of the key
// its handle may end: it fails with ENOENT (DoneWithResult reports it)
// while the key is not being processed or is processing under another
// handle's lease, but once the key is handed out again through the same
// *Queue, or unleased (WithUnleasedGets) through any handle, the late
// Done ends that new hand-out. Workers that must not end each other's
// hand-outs take keys through handles of their own (Open, one per
// worker), leased, or take them with GetWithTicket and end them with
// DoneTicket, which ends only the hand-out its ticket names.
func WithProcessingTimeout(d time.Duration) Option {
	return func(c *config) { c.processingTimeout = d }
}

// WithPayloadMax makes a new queue whose keys carry payloads of up to n
// bytes (AddPayload, GetPayload): at most the module parameter
// max_payload (EINVAL otherwise). Needs a module with FeaturePayload.
func WithPayloadMax(n uint32) Option { return func(c *config) { c.payloadMax = n } }

// WithUnleasedGets makes this handle's gets unleased: keys it takes stay
// processing if it is closed or its process dies, until anyone calls Done
// (for a key taken by one process and finished by another).
func WithUnleasedGets() Option { return func(c *config) { c.unleased = true } }

// WithPriority makes a new queue a priority queue: AddWithPriority and
// AddAfterWithPriority hand out higher priorities (PriorityMin to
// PriorityMax) first, FIFO within one, and a ready key rises one priority
// per aging it waits (0: AgingDefault, 1 s; at most AgingMax), so that a
// key of priority p ready at t goes before every key ready after
// t + (PriorityMax - p) * aging. Every other add is priority 0.
// Documentation/kwq-priorities.rst has the rules. Needs FeaturePriority.
func WithPriority(aging time.Duration) Option {
	return func(c *config) {
		c.priority = true
		c.aging = aging
	}
}

// WithTenants makes a new queue a tenant queue: a key's tenant is its
// bytes before its depth-th '/' (1: Kubernetes' namespace; 2: cluster then
// namespace; a key with fewer '/' has the shorter prefix, "" for none),
// and within one priority gets take turns across the tenants with queued
// keys, each tenant's keys FIFO. A key k-th among its tenant's keys at its
// priority is handed out within k * T gets from that priority, T being the
// most tenants queued there at any one time until then (no key of that
// priority given back or raised meanwhile). Documentation/kwq-tenants.rst has the rules. Depth 0
// means 1; others give EINVAL. Needs FeatureTenant; combines with
// WithPriority.
func WithTenants(depth int) Option {
	return func(c *config) {
		c.tenants = true
		c.tenantDepth = depth
	}
}

// WithKernelScope makes Open and NewRateLimitingQueue look among the
// queues kernel modules made (kwq_create(), the kernel scope) instead of
// the queues of the caller's IPC namespace: a user program's workers on a
// kernel module's queue. NewRateLimitingQueue then only opens: a user
// program cannot make a queue in the kernel scope, and Create refuses the
// option (EINVAL). The queue's mode decides access, as for any queue
// (Documentation/kwq-security.rst). Needs FeatureScope.
func WithKernelScope() Option { return func(c *config) { c.kernelScope = true } }

// WithDevice opens another device node than /dev/kwq.
func WithDevice(path string) Option { return func(c *config) { c.device = path } }
