# shellcheck shell=sh source-path=SCRIPTDIR
# In the guest (sourced by check.sh, kwq loaded): the Go package's tests.
# Runs every bin/kwq-go-test-<ver> and bin/kwq-go-race-<ver> that
# scripts/go.sh built (on kernels other than stock only the newest
# go-test), with -test.v, and turns the results into TAP, one
# section per binary (go-<ver>, go-race-<ver>); then the example
# controller as one more section. A binary that is missing, prints no
# result or exits non-zero fails.

# go_tap NAME COMMAND...: run a go test binary and print its results as TAP.
go_tap() {
	name=$1
	shift
	echo "KWQ-TAP-BEGIN $name"
	go_t0=$(uptime_cs)
	# The parallel tests mostly wait on timers: all of them at once, not
	# GOMAXPROCS (2) at a time.
	KWQ_GO_REQUIRE_DEVICE=1 "$@" -test.v -test.parallel 16 -test.timeout 900s >/tmp/go-test.out 2>&1
	rc=$?
	sed 's/^/# /' /tmp/go-test.out
	# Leaf results only: a test with subtests is counted through them,
	# unless it failed with none of them failing.
	awk -v rc="$rc" '
	/^ *--- (PASS|FAIL|SKIP): / {
		line = $0; sub(/^ *--- /, "", line)
		st = substr(line, 1, 4); sub(/^[A-Z]+: /, "", line); sub(/ \([0-9.]+s\)$/, "", line)
		n++; nm[n] = line; res[n] = st
		p = line
		while (sub(/\/[^\/]*$/, "", p)) parent[p] = 1
		if (st == "FAIL") { q = line; while (sub(/\/[^\/]*$/, "", q)) childfail[q] = 1 }
	}
	END {
		t = 0; failed = 0
		for (i = 1; i <= n; i++) {
			if ((nm[i] in parent) && (res[i] != "FAIL" || (nm[i] in childfail))) continue
			t++
			if (res[i] == "PASS") print "ok " t " - " nm[i]
			else if (res[i] == "SKIP") print "ok " t " - " nm[i] " # SKIP"
			else { print "not ok " t " - " nm[i]; failed++ }
		}
		t++
		if (rc == 0 && n > 0) print "ok " t " - the test binary exits 0 after " n " results"
		else print "not ok " t " - the test binary exits " rc " after " n " results"
		print "1.." t
	}' /tmp/go-test.out
	took "$go_t0"
	echo "KWQ-TAP-END $name"
}

# Debian's default kernel (flavour "stock", scripts/build.sh) runs every
# binary; the other kernels run the newest Go's tests only (the last in
# name order): what the older Go and the race detector add is about the
# Go program, which is the same on every kernel.
go_bins="./bin/kwq-go-test-* ./bin/kwq-go-race-*"
if [ "$(cat ./flavour 2>/dev/null)" != stock ]; then
	for b in ./bin/kwq-go-test-*; do go_bins=$b; done
fi
# A queue in the kernel scope for TestKernelScope, made by kwq_sample.ko
# without workers; the test fails if it is missing.
KWQ_GO_KERNEL_QUEUE=""
if insmod ./kwq_sample.ko queue=go-kernel-scope create=1 workers=0; then
	KWQ_GO_KERNEL_QUEUE=go-kernel-scope
fi
export KWQ_GO_KERNEL_QUEUE
go_found=0
# shellcheck disable=SC2086 # $go_bins is a list of paths and patterns
for b in $go_bins; do
	[ -x "$b" ] || continue
	go_found=1
	go_tap "go-${b#./bin/kwq-go-}" "$b"
done
[ -z "$KWQ_GO_KERNEL_QUEUE" ] || rmmod kwq_sample
KWQ_GO_KERNEL_QUEUE=""

tap_begin "go-example-$(uname -r)"
[ "$go_found" = 1 ]; tap $? "Go test binaries are in the guest (scripts/go.sh build)"
out=$(./bin/kwq-go-controller -workers 4 -keys 200 2>&1)
st=$?
echo "$out" | sed 's/^/# /'
tap $st "the example controller reconciles 200 keys with retries and backoff"
tap_end

# client-go's own tests and a controller on kwq (scripts/guest/client-go.sh).
. ./client-go.sh
