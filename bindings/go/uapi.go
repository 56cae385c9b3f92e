// SPDX-License-Identifier: GPL-2.0

package kwq

import "unsafe"

// The /dev/kwq ABI of uapi/linux/kwq.h, mirrored by hand. abi_test.go
// checks every size, offset and ioctl number below against
// testdata/abi.txt, which scripts/go.sh regenerates from the C header
// (abicheck/abicheck.c) and compares with the checked-in copy on every
// build, so a change of the header cannot go unnoticed.

// Limits and special values of the ABI.
const (
	abiVersion = 1
	// KeyMax is the longest key in bytes.
	KeyMax = 512
	// NameMax is the size of a queue name buffer, NUL included: names
	// have 1 to NameMax-1 characters.
	NameMax = 64
	// BatchMax is the most entries one batch call carries; the batch
	// methods split longer slices.
	BatchMax = 1024
	// DelayMax is the longest add-after delay; longer ones are clamped.
	DelayMax = 7 * 24 * 3600 * 1000000000

	deadlineNowait  = uint64(0)
	deadlineForever = ^uint64(0)
	// deadlinePast is a deadline already gone: a get that does not wait
	// for a key but may sleep to allocate its hand-out.
	deadlinePast = uint64(1)

	limitersMax  = 4
	rateInf      = ^uint64(0)
	statsBuckets = 11

	limiterExponential = 1
	limiterFastSlow    = 2
	limiterBucket      = 3

	createRatelimit   = 1 << 0
	createPriority    = 1 << 1
	createTenant      = 1 << 2
	createManualClock = 1 << 3
	clockStepKeys     = 1024
	afterReplace      = 1 << 2
	afterDebounce     = 1 << 3
	drainFlushWaiting = 1 << 0
	getUnleased       = 1 << 0
	scopeKernel       = 1 << 0

	doneNotRun = 0xffffffff

	stateShuttingDown = 1 << 0
	stateDraining     = 1 << 1
	stateDestroyed    = 1 << 2
)

// Feature bits of the running module (Version).
const (
	FeatureCore      = 1 << 0
	FeatureDelay     = 1 << 1
	FeatureLease     = 1 << 2
	FeatureBatch     = 1 << 3
	FeatureRatelimit = 1 << 4
	FeatureMetrics   = 1 << 5
	FeatureDoneGet   = 1 << 6
	FeatureTicket    = 1 << 7
	FeatureScope     = 1 << 8
	// FeatureDebounce: AddDebounced (KWQ_AFTER_DEBOUNCE) and the
	// Debounced and DebounceCapped counters.
	FeatureDebounce = 1 << 9
	// FeaturePriority: priority queues (WithPriority, AddWithPriority).
	FeaturePriority = 1 << 11
	// FeatureTenant: tenant queues (WithTenants): gets take turns across
	// tenants.
	FeatureTenant = 1 << 12
	// FeaturePayload: queues made WithPayloadMax, AddPayload, GetPayload,
	// and the PayloadsReplaced and PayloadBytes counters.
	FeaturePayload = 1 << 10
	// FeatureManualClock: queues made WithManualClock, stepped by Step.
	FeatureManualClock = 1 << 14
)

// ClockMax is the latest time a manual clock (WithManualClock) reaches,
// in ns since its queue was made (about 146 years).
const ClockMax = 1 << 62

// Priorities of a queue made WithPriority: higher first (AddWithPriority).
const (
	PriorityMin = -8
	PriorityMax = 7
	// AgingDefault is the aging of WithPriority(0), in ns; AgingMax the
	// longest.
	AgingDefault = 1000000000
	AgingMax     = 3600 * 1000000000
)

// TenantDepthMax is the deepest tenant rule of WithTenants.
const TenantDepthMax = 2

type limiter struct {
	Type    uint32
	MaxFast uint32
	BaseNs  uint64
	MaxNs   uint64
	FastNs  uint64
	SlowNs  uint64
	RateMhz uint64
	Burst   uint32
	Pad     uint32
}

type ratelimit struct {
	Count     uint32
	Flags     uint32
	MaxWaitNs uint64
	Limiters  [limitersMax]limiter
	Reserved  [2]uint64
}

type iocVersion struct {
	AbiVersion uint32
	KeyMax     uint32
	NameMax    uint32
	Flags      uint32
	Features   uint64
	Reserved   [4]uint64
}

type iocCreate struct {
	Name                [NameMax]byte
	Flags               uint32
	Mode                uint32
	MaxItems            uint32
	Policy              uint32
	MaxBackoffKeys      uint32
	Pad                 uint32
	Ratelimit           ratelimit
	ProcessingTimeoutNs uint64
	PayloadMax          uint32
	TenantDepth         uint8 // a union with pad2, its name before tenants
	Pad3                [3]uint8
	AgingNs             uint64
	Reserved            [1]uint64
}

type iocOpen struct {
	Name     [NameMax]byte
	Flags    uint32
	Pad      uint32
	Reserved [2]uint64
}

type iocKey struct {
	KeyPtr   uint64
	KeyLen   uint32
	Flags    uint32
	Result   uint32
	Pad      uint32
	Ticket   uint64
	Reserved [1]uint64
}

type iocAddAfter struct {
	KeyPtr    uint64
	KeyLen    uint32
	Flags     uint32
	DelayNs   int64
	Result    uint32
	Pad       uint32
	MaxWaitNs uint64
	Reserved  [1]uint64
}

type iocGet struct {
	KeyPtr     uint64
	KeyCap     uint32
	KeyLen     uint32
	DeadlineNs uint64
	Flags      uint32
	PayloadLen uint32
	Ticket     uint64
	PayloadPtr uint64
}

type iocAdd struct {
	KeyPtr     uint64
	KeyLen     uint32
	Flags      uint32
	DelayNs    int64
	MaxWaitNs  uint64
	PayloadPtr uint64
	PayloadLen uint32
	Priority   int32
	Result     uint32
	Pad        uint32
	Reserved   [2]uint64
}

type iocDoneGet struct {
	DonePtr    uint64
	DoneLen    uint32
	DoneResult uint32
	KeyPtr     uint64
	KeyCap     uint32
	KeyLen     uint32
	DeadlineNs uint64
	Flags      uint32
	Pad        uint32
	DoneTicket uint64
	Ticket     uint64
}

type batchEntry struct {
	KeyPtr uint64
	KeyLen uint32
	Result uint32
}

type iocBatch struct {
	EntriesPtr uint64
	Count      uint32
	Completed  uint32
	Flags      uint32
	Pad        uint32
	DeadlineNs uint64
	Reserved   [2]uint64
}

type iocList struct {
	NamesPtr uint64
	Capacity uint32
	Count    uint32
	Flags    uint32
	Pad      uint32
	Reserved [2]uint64
}

type iocDrain struct {
	DeadlineNs uint64
	Flags      uint32
	Pad        uint32
}

type iocClockStep struct {
	StepNs   int64
	NowNs    uint64
	Flags    uint32
	Pending  uint32
	Reserved [2]uint64
}

type rawStats struct {
	Size               uint32
	State              uint32
	Queued             uint64
	Processing         uint64
	DirtyProcessing    uint64
	Waiting            uint64
	Items              uint64
	MaxItems           uint64
	Adds               uint64
	Dedups             uint64
	Gets               uint64
	Dones              uint64
	Requeues           uint64
	Refused            uint64
	Fired              uint64
	Cancels            uint64
	Absorbed           uint64
	WaitsDropped       uint64
	LeaseRequeues      uint64
	BackoffKeys        uint64
	RateLimited        uint64
	TokensReturned     uint64
	BackoffEvictions   uint64
	Retries            uint64
	Forgets            uint64
	UnfinishedWorkNs   uint64
	LongestRunningNs   uint64
	QueueLatency       [statsBuckets]uint64
	QueueLatencySumNs  uint64
	WorkDuration       [statsBuckets]uint64
	WorkDurationSumNs  uint64
	ProcessingExpiries uint64
	Debounced          uint64
	DebounceCapped     uint64
	PayloadsReplaced   uint64
	PayloadBytes       uint64
}

// ioctl request numbers: _IOC(dir, 0xE8, nr, size) as in <asm-generic/ioctl.h>.
const (
	iocNone  = 0
	iocWrite = 1
	iocRead  = 2
	iocMagic = 0xE8
)

func ioc(dir, nr, size uintptr) uintptr {
	return dir<<30 | size<<16 | iocMagic<<8 | nr
}

var (
	iocVersionCmd     = ioc(iocRead|iocWrite, 0x00, sizeofIocVersion)
	iocCreateCmd      = ioc(iocWrite, 0x01, sizeofIocCreate)
	iocOpenCmd        = ioc(iocWrite, 0x02, sizeofIocOpen)
	iocDestroyCmd     = ioc(iocNone, 0x03, 0)
	iocListCmd        = ioc(iocRead|iocWrite, 0x04, sizeofIocList)
	iocAddCmd         = ioc(iocRead|iocWrite, 0x10, sizeofIocKey)
	iocGetCmd         = ioc(iocRead|iocWrite, 0x11, sizeofIocGet)
	iocDoneCmd        = ioc(iocRead|iocWrite, 0x12, sizeofIocKey)
	iocAddAfterCmd    = ioc(iocRead|iocWrite, 0x13, sizeofIocAddAfter)
	iocCancelCmd      = ioc(iocRead|iocWrite, 0x14, sizeofIocKey)
	iocAddRateLimCmd  = ioc(iocRead|iocWrite, 0x15, sizeofIocKey)
	iocForgetCmd      = ioc(iocRead|iocWrite, 0x16, sizeofIocKey)
	iocNumRequeuesCmd = ioc(iocRead|iocWrite, 0x17, sizeofIocKey)
	iocAddBatchCmd    = ioc(iocRead|iocWrite, 0x18, sizeofIocBatch)
	iocGetBatchCmd    = ioc(iocRead|iocWrite, 0x19, sizeofIocBatch)
	iocDoneBatchCmd   = ioc(iocRead|iocWrite, 0x1a, sizeofIocBatch)
	iocDoneGetCmd     = ioc(iocRead|iocWrite, 0x1b, sizeofIocDoneGet)
	iocAddExCmd       = ioc(iocRead|iocWrite, 0x1c, sizeofIocAdd)
	iocShutdownCmd    = ioc(iocNone, 0x20, 0)
	iocDrainCmd       = ioc(iocWrite, 0x21, sizeofIocDrain)
	iocStatsCmd       = ioc(iocRead|iocWrite, 0x30, sizeofStats)
	iocClockStepCmd   = ioc(iocRead|iocWrite, 0x22, sizeofIocClockStep)
)

const (
	sizeofIocVersion   = unsafe.Sizeof(iocVersion{})
	sizeofIocCreate    = unsafe.Sizeof(iocCreate{})
	sizeofIocOpen      = unsafe.Sizeof(iocOpen{})
	sizeofIocList      = unsafe.Sizeof(iocList{})
	sizeofIocKey       = unsafe.Sizeof(iocKey{})
	sizeofIocGet       = unsafe.Sizeof(iocGet{})
	sizeofIocAddAfter  = unsafe.Sizeof(iocAddAfter{})
	sizeofIocBatch     = unsafe.Sizeof(iocBatch{})
	sizeofIocDoneGet   = unsafe.Sizeof(iocDoneGet{})
	sizeofIocAdd       = unsafe.Sizeof(iocAdd{})
	sizeofIocDrain     = unsafe.Sizeof(iocDrain{})
	sizeofStats        = unsafe.Sizeof(rawStats{})
	sizeofIocClockStep = unsafe.Sizeof(iocClockStep{})
)
