#!/usr/bin/env bash
# The Go package in bindings/go, host side.
#
#   scripts/go.sh install        install Debian's Go toolchains if missing:
#                                golang-1.19-go (bookworm) and the newest
#                                golang-1.N-go of bookworm-backports, whose
#                                apt source is derived from the machine's
#                                bookworm source (KWQ_GO_NEWER=0: 1.19 only)
#   scripts/go.sh build DIR      check the uapi mirror, then build static
#                                (CGO_ENABLED=0) binaries into DIR/bin:
#                                kwq-go-test-<ver> (go test -c) with every
#                                toolchain, kwq-go-race-<ver> (-race, with
#                                the newest; cgo, static), kwq-go-controller
#                                (the example) and kwq-gobench; then
#                                scripts/client-go.sh build DIR (client-go's
#                                tests and a controller on kwq; KWQ_CLIENT_GO=0
#                                leaves them out)
#   scripts/go.sh vm [FLAVOUR]   the Go section alone in one guest (default
#                                stock): scripts/build.sh, then
#                                scripts/guest/go-only.sh under QEMU; prints
#                                the TAP and the sections' counts
#   scripts/go.sh lint           gofmt -l and go vet with every toolchain,
#                                as TAP lines
#   scripts/go.sh abi            the uapi check alone: abicheck.c's output
#                                for uapi/linux/kwq.h must equal
#                                bindings/go/testdata/abi.txt
# No network: GOPROXY=off, GOTOOLCHAIN=local, the module has no dependency.
set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
src=$top/bindings/go
say() { printf 'go.sh: %s\n' "$*" >&2; }
# shellcheck source=scripts/apt-suite.sh
. "$top/scripts/apt-suite.sh"

export GOPROXY=off GOTOOLCHAIN=local GOFLAGS='' GO111MODULE=on CGO_ENABLED=0
export GOCACHE=${GOCACHE:-${KWQ_CACHE:-/var/cache/kwq}/go-build}
export GOPATH=${GOPATH:-${KWQ_CACHE:-/var/cache/kwq}/gopath}

# The go binaries of the installed golang-1.N-go packages, oldest first.
toolchains() {
	local d
	for d in /usr/lib/go-1.*/bin/go; do
		[[ -x $d ]] && echo "$d"
	done | sort -V
}

apt_install() {
	DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq \
		--no-install-recommends "$@" >&2
}

# Writes an apt source for bookworm-backports next to the machine's own
# bookworm source (same URI and key), deb822 or one-line style.
add_backports() {
	if grep -rqs 'bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d/; then
		return 0
	fi
	apt_suite_source bookworm-backports /etc/apt/sources.list.d/kwq-bookworm-backports
}

install() {
	[[ -x /usr/lib/go-1.19/bin/go ]] || apt_install golang-1.19-go
	[[ ${KWQ_GO_NEWER:-1} != 0 ]] || return 0
	# A newer toolchain than 1.19 present already: enough.
	[[ $(toolchains | tail -n 1) != /usr/lib/go-1.19/bin/go ]] && return 0
	add_backports
	apt-get -o DPkg::Lock::Timeout=600 update -qq >&2
	local newest
	newest=$(apt-cache search --names-only '^golang-1\.[0-9]+-go$' | awk '{ print $1 }' | sort -V | tail -n 1)
	[[ -n $newest && $newest != golang-1.19-go ]] || { say "no Go newer than 1.19 in apt"; return 1; }
	apt_install "$newest"
}

# The version of a toolchain: 1.19 for /usr/lib/go-1.19/bin/go.
ver() { basename "$(dirname "$(dirname "$1")")" | sed 's/^go-//'; }

abi() {
	local tmp
	tmp=$(mktemp -d)
	gcc -Wall -Wextra -Werror -I"$top/uapi" -o "$tmp/abicheck" "$src/abicheck/abicheck.c"
	"$tmp/abicheck" >"$tmp/abi.txt"
	if ! diff -u "$src/testdata/abi.txt" "$tmp/abi.txt" >&2; then
		say "uapi/linux/kwq.h changed: update bindings/go/uapi.go, then"
		say "  gcc -I uapi bindings/go/abicheck/abicheck.c && ./a.out > bindings/go/testdata/abi.txt"
		rm -rf "$tmp"
		return 1
	fi
	rm -rf "$tmp"
}

build() {
	local out go v n=0
	mkdir -p "$1/bin"
	out=$(cd "$1/bin" && pwd)
	install
	abi
	for go in $(toolchains); do
		v=$(ver "$go")
		(cd "$src" && "$go" test -c -o "$out/kwq-go-test-$v" .) >&2
		n=$((n + 1))
	done
	((n > 0)) || { say "no Go toolchain"; return 1; }
	# -race needs cgo on linux/amd64 (go 1.19 and 1.23 both say "-race
	# requires cgo"): the race runtime calls libc. Linked statically with
	# glibc it runs in the busybox guest; only this binary uses cgo.
	v=$(ver "$go")
	(cd "$src" && CGO_ENABLED=1 "$go" test -race -c -o "$out/kwq-go-race-$v" \
		-ldflags='-linkmode=external -extldflags=-static' .) >&2
	(cd "$src" && "$go" build -o "$out/kwq-go-controller" ./examples/controller) >&2
	(cd "$src" && "$go" build -o "$out/kwq-gobench" ./cmd/kwq-gobench) >&2
	# client-go's interface checks, tests and controller on kwq
	# (scripts/client-go.sh): a failure is the guest's to report, so that
	# the package's own tests still run.
	rm -f "$out"/kwq-cgo-*
	if [[ ${KWQ_CLIENT_GO:-1} != 0 ]] && ! "$top/scripts/client-go.sh" build "$1" 2>"$out/kwq-cgo-build.log"; then
		tail -n 40 "$out/kwq-cgo-build.log" >&2
		mv "$out/kwq-cgo-build.log" "$out/kwq-cgo-build-failed"
	fi
	rm -f "$out/kwq-cgo-build.log"
	for b in "$out"/kwq-go-* "$out/kwq-gobench" "$out"/kwq-cgo-shim-* "$out"/kwq-cgo-ctl-* "$out"/kwq-cgo-bench-*; do
		[[ -e $b ]] || continue
		if readelf -l "$b" | grep -q 'program interpreter'; then
			say "$b is dynamically linked"
			return 1
		fi
	done
}

lint() {
	local go v n=0 status out
	install
	for go in $(toolchains); do
		v=$(ver "$go")
		n=$((n + 1))
		status=0
		out=$(cd "$src" && "$go" vet ./... 2>&1) || status=1
		tap_line $status "go vet ./... in bindings/go (go $v)" "$out"
	done
	status=0
	out=$("$(dirname "$(toolchains | tail -n 1)")/gofmt" -l "$src" 2>&1) || status=1
	[[ -z $out ]] || status=1
	tap_line $status "gofmt -l bindings/go lists nothing" "$out"
	status=0
	out=$(abi 2>&1) || status=1
	tap_line $status "bindings/go/testdata/abi.txt matches uapi/linux/kwq.h" "$out"
	((n > 0))
}

tap_n=0 tap_failed=0
tap_line() { # STATUS DESCRIPTION DETAILS
	tap_n=$((tap_n + 1))
	if [[ $1 -eq 0 ]]; then
		echo "ok - $2"
	else
		tap_failed=1
		echo "not ok - $2"
		[[ -z $3 ]] || printf '%s\n' "$3" | sed 's/^/#   /' | head -40
	fi
}

vm() { # [FLAVOUR]
	local flavour=${1:-stock} guest out st=0
	out=$top/build/go-vm
	mkdir -p "$out"
	guest=$("$top/scripts/build.sh" "$flavour")
	eval "$("$top/scripts/kernel.sh" "$flavour")"
	local one=()
	[[ $flavour == debug* ]] || one=(--one-thread)
	"$top/scripts/vm-run.sh" "${one[@]}" --kernel "$KWQ_KERNEL" --files "$guest" \
		--timeout "${KWQ_VM_TIMEOUT:-1200}" --log "$out/console.log" \
		-- "$guest/go-only.sh" >"$out/guest.out" 2>"$out/guest.err" || st=$?
	cat "$out/guest.out"
	local section
	for section in $("$top/scripts/tap-sections.sh" "$out/guest.out"); do
		printf '%-28s %s\n' "$section" "$("$top/scripts/tap-sections.sh" "$out/guest.out" "$section" |
			"$top/scripts/tap-count.sh" 2>/dev/null)"
	done
	say "guest exit status $st; console: $out/console.log"
	return $st
}

case ${1:-} in
vm) vm "${2:-}" ;;
install) install ;;
build) [[ $# -eq 2 ]] || { echo "usage: scripts/go.sh build DIR" >&2; exit 2; }; build "$2" ;;
lint) lint; exit $tap_failed ;;
abi) abi ;;
*) sed -n '2,/^set -e/p' "$0" | sed 's/^# \{0,1\}//; /^set -e/d' >&2; exit 2 ;;
esac
