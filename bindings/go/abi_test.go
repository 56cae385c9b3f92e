// SPDX-License-Identifier: GPL-2.0

package kwq

import (
	"bufio"
	_ "embed"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// abiTxt is embedded so that the test binary runs anywhere (the guest).
//
//go:embed testdata/abi.txt
var abiTxt string

// The Go mirror of every struct, ioctl number and constant of
// uapi/linux/kwq.h against testdata/abi.txt, which abicheck/abicheck.c
// prints from the C header (scripts/go.sh checks it is current).
func TestABILayout(t *testing.T) {
	types := map[string]reflect.Type{
		"kwq_limiter":        reflect.TypeOf(limiter{}),
		"kwq_ratelimit":      reflect.TypeOf(ratelimit{}),
		"kwq_ioc_version":    reflect.TypeOf(iocVersion{}),
		"kwq_ioc_create":     reflect.TypeOf(iocCreate{}),
		"kwq_ioc_open":       reflect.TypeOf(iocOpen{}),
		"kwq_ioc_key":        reflect.TypeOf(iocKey{}),
		"kwq_ioc_add_after":  reflect.TypeOf(iocAddAfter{}),
		"kwq_ioc_add":        reflect.TypeOf(iocAdd{}),
		"kwq_ioc_get":        reflect.TypeOf(iocGet{}),
		"kwq_ioc_done_get":   reflect.TypeOf(iocDoneGet{}),
		"kwq_batch_entry":    reflect.TypeOf(batchEntry{}),
		"kwq_ioc_batch":      reflect.TypeOf(iocBatch{}),
		"kwq_ioc_list":       reflect.TypeOf(iocList{}),
		"kwq_ioc_drain":      reflect.TypeOf(iocDrain{}),
		"kwq_stats":          reflect.TypeOf(rawStats{}),
		"kwq_ioc_clock_step": reflect.TypeOf(iocClockStep{}),
	}
	ioctls := map[string]uintptr{
		"KWQ_IOC_VERSION": iocVersionCmd, "KWQ_IOC_CREATE": iocCreateCmd,
		"KWQ_IOC_OPEN": iocOpenCmd, "KWQ_IOC_DESTROY": iocDestroyCmd,
		"KWQ_IOC_LIST": iocListCmd, "KWQ_IOC_ADD": iocAddCmd, "KWQ_IOC_GET": iocGetCmd,
		"KWQ_IOC_DONE": iocDoneCmd, "KWQ_IOC_ADD_AFTER": iocAddAfterCmd,
		"KWQ_IOC_CANCEL": iocCancelCmd, "KWQ_IOC_ADD_BATCH": iocAddBatchCmd,
		"KWQ_IOC_GET_BATCH": iocGetBatchCmd, "KWQ_IOC_DONE_BATCH": iocDoneBatchCmd,
		"KWQ_IOC_DONE_GET": iocDoneGetCmd, "KWQ_IOC_ADD_RATE_LIMITED": iocAddRateLimCmd,
		"KWQ_IOC_FORGET": iocForgetCmd, "KWQ_IOC_NUM_REQUEUES": iocNumRequeuesCmd,
		"KWQ_IOC_SHUTDOWN": iocShutdownCmd, "KWQ_IOC_DRAIN": iocDrainCmd,
		"KWQ_IOC_STATS": iocStatsCmd, "KWQ_IOC_ADD_EX": iocAddExCmd,
		"KWQ_IOC_CLOCK_STEP": iocClockStepCmd,
	}
	consts := map[string]uint64{
		"KWQ_ABI_VERSION": abiVersion, "KWQ_KEY_MAX": KeyMax, "KWQ_NAME_MAX": NameMax,
		"KWQ_BATCH_MAX": BatchMax, "KWQ_DELAY_MAX_NS": DelayMax,
		"KWQ_DEADLINE_NOWAIT": deadlineNowait, "KWQ_DEADLINE_FOREVER": deadlineForever,
		"KWQ_LIMITERS_MAX": limitersMax, "KWQ_RATE_INF": rateInf,
		"KWQ_STATS_BUCKETS": statsBuckets, "KWQ_LIMITER_EXPONENTIAL": limiterExponential,
		"KWQ_LIMITER_FAST_SLOW": limiterFastSlow, "KWQ_LIMITER_BUCKET": limiterBucket,
		"KWQ_CREATE_RATELIMIT": createRatelimit, "KWQ_AFTER_REPLACE": afterReplace,
		"KWQ_AFTER_DEBOUNCE": afterDebounce, "KWQ_GET_UNLEASED": getUnleased,
		"KWQ_SCOPE_KERNEL":        scopeKernel,
		"KWQ_DRAIN_FLUSH_WAITING": drainFlushWaiting,
		"KWQ_DONE_NOT_RUN":        doneNotRun, "KWQ_STATE_SHUTTING_DOWN": stateShuttingDown,
		"KWQ_STATE_DRAINING": stateDraining, "KWQ_STATE_DESTROYED": stateDestroyed,
		"KWQ_ADD_QUEUED": uint64(Queued), "KWQ_ADD_DUPLICATE": uint64(Duplicate),
		"KWQ_ADD_DEFERRED": uint64(Deferred), "KWQ_ADD_WAITING": uint64(Waiting),
		"KWQ_ADD_WAIT_KEPT": uint64(WaitKept), "KWQ_ADD_WAIT_MOVED": uint64(WaitMoved),
		"KWQ_ADD_ABSORBED": uint64(Absorbed), "KWQ_DONE_FINISHED": uint64(Finished),
		"KWQ_DONE_REQUEUED": uint64(Requeued), "KWQ_POLICY_DEFAULT": uint64(PolicyDefault),
		"KWQ_POLICY_KEEP": uint64(PolicyKeep), "KWQ_POLICY_PROMOTE": uint64(PolicyPromote),
		"KWQ_POLICY_STRICT": uint64(PolicyStrict), "KWQ_FEATURE_CORE": FeatureCore,
		"KWQ_FEATURE_DELAY": FeatureDelay, "KWQ_FEATURE_LEASE": FeatureLease,
		"KWQ_FEATURE_BATCH": FeatureBatch, "KWQ_FEATURE_RATELIMIT": FeatureRatelimit,
		"KWQ_FEATURE_METRICS": FeatureMetrics, "KWQ_FEATURE_DONE_GET": FeatureDoneGet,
		"KWQ_FEATURE_TICKET": FeatureTicket, "KWQ_FEATURE_SCOPE": FeatureScope,
		"KWQ_FEATURE_DEBOUNCE": FeatureDebounce, "KWQ_FEATURE_PRIORITY": FeaturePriority,
		"KWQ_CREATE_PRIORITY": createPriority, "KWQ_PRIORITY_MIN": u64(PriorityMin),
		"KWQ_PRIORITY_MAX": PriorityMax, "KWQ_AGING_DEFAULT_NS": AgingDefault,
		"KWQ_AGING_MAX_NS": AgingMax, "KWQ_FEATURE_PAYLOAD": FeaturePayload,
		"KWQ_CREATE_TENANT": createTenant, "KWQ_TENANT_DEPTH_MAX": TenantDepthMax,
		"KWQ_FEATURE_TENANT": FeatureTenant, "KWQ_CREATE_MANUAL_CLOCK": createManualClock,
		"KWQ_FEATURE_MANUAL_CLOCK": FeatureManualClock, "KWQ_CLOCK_MAX_NS": ClockMax,
		"KWQ_CLOCK_STEP_KEYS": clockStepKeys,
	}

	seen := map[string]int{}
	fields := map[reflect.Type]int{}
	sc := bufio.NewScanner(strings.NewReader(abiTxt))
	for sc.Scan() {
		w := strings.Fields(sc.Text())
		num := func(s string) uint64 {
			v, err := strconv.ParseUint(s, 10, 64)
			if err != nil {
				t.Fatalf("bad line %q", sc.Text())
			}
			return v
		}
		seen[w[0]]++
		switch w[0] {
		case "size":
			typ, ok := types[w[1]]
			if !ok {
				t.Errorf("struct %s has no Go mirror", w[1])
			} else if uint64(typ.Size()) != num(w[2]) {
				t.Errorf("sizeof(struct %s) = %s, Go %s is %d", w[1], w[2], typ, typ.Size())
			}
		case "field":
			typ, ok := types[w[1]]
			if !ok {
				t.Errorf("struct %s has no Go mirror", w[1])
				continue
			}
			name := camel(w[2])
			sf, ok := typ.FieldByName(name)
			if !ok {
				t.Errorf("%s.%s: Go %s has no field %s", w[1], w[2], typ, name)
				continue
			}
			fields[typ]++
			if uint64(sf.Offset) != num(w[3]) || uint64(sf.Type.Size()) != num(w[4]) {
				t.Errorf("%s.%s at %s size %s; Go %s.%s at %d size %d", w[1], w[2], w[3], w[4],
					typ, name, sf.Offset, sf.Type.Size())
			}
		case "ioctl":
			v, ok := ioctls[w[1]]
			if !ok {
				t.Errorf("ioctl %s has no Go mirror", w[1])
			} else if uint64(v) != num(w[2]) {
				t.Errorf("%s = %s, Go has %d", w[1], w[2], v)
			}
		case "const":
			v, ok := consts[w[1]]
			if !ok {
				t.Errorf("constant %s has no Go mirror", w[1])
			} else if v != num(w[2]) {
				t.Errorf("%s = %s, Go has %d", w[1], w[2], v)
			}
		default:
			t.Errorf("bad line %q", sc.Text())
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	// Every Go field is in the C struct, and the file is not truncated.
	for name, typ := range types {
		if fields[typ] != typ.NumField() {
			t.Errorf("struct %s: %d C fields, Go %s has %d", name, fields[typ], typ, typ.NumField())
		}
	}
	if seen["size"] != len(types) || seen["ioctl"] != len(ioctls) || seen["const"] != len(consts) {
		t.Errorf("abi.txt has %d structs, %d ioctls, %d constants; Go mirrors %d, %d, %d",
			seen["size"], seen["ioctl"], seen["const"], len(types), len(ioctls), len(consts))
	}
}

func camel(s string) string {
	parts := strings.Split(s, "_")
	for i, p := range parts {
		parts[i] = strings.ToUpper(p[:1]) + p[1:]
	}
	return strings.Join(parts, "")
}

// u64 is the C header's view of a negative constant (abicheck prints it as
// unsigned long long).
func u64(v int64) uint64 { return uint64(v) }
