#!/usr/bin/env bash
# client-go's source from Debian, for the Go package's checks against it.
#
#   scripts/client-go.sh fetch SUITE   download golang-k8s-client-go-dev of
#                                      SUITE (trixie, sid, ...) and the
#                                      golang-*-dev packages it depends on,
#                                      and unpack them into a private tree;
#                                      prints the tree's GOPATH root
#   scripts/client-go.sh build DIR     fetch (cached), then for each SUITE
#                                      of KWQ_CLIENT_GO_SUITES (default
#                                      "trixie sid"): compile the interface
#                                      checks (a failure fails the build)
#                                      and build into DIR/bin
#                                      kwq-cgo-shim-<suite> (client-go's
#                                      util/workqueue tests on kwq, through
#                                      bindings/go/clientgo/shim),
#                                      kwq-cgo-ctl-<suite> (the
#                                      informer-driven controller tests;
#                                      the last, newest suite only),
#                                      kwq-cgo-clock-tests-<suite> (the
#                                      tests left out, none today),
#                                      kwq-cgo-versions-<suite> and
#                                      kwq-cgo-bench-<suite> (make bench's
#                                      client-go column; the newest only)
#
# Nothing is installed on the host: the packages of SUITE are fetched with
# apt-get download under a private apt configuration (its own state,
# cache and sources, the sources derived at run time from this machine's
# bookworm source with the suite name replaced) and unpacked with dpkg-deb
# -x into ${KWQ_CACHE:-/var/cache/kwq}/client-go/SUITE/root. Versions are
# whatever SUITE has when the tree is first made; the tree is reused until
# removed. The Go build is in GOPATH mode (GO111MODULE=off GOPROXY=off)
# with the suite's own Go toolchain (unpacked beside its client-go), its
# build cache under ${KWQ_CACHE:-/var/cache/kwq}/go-build.
set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cache=${KWQ_CACHE:-/var/cache/kwq}
say() { printf 'client-go.sh: %s\n' "$*" >&2; }
# shellcheck source=scripts/apt-suite.sh
. "$top/scripts/apt-suite.sh"

# apt with the private configuration of directory $apt.
papt() { # COMMAND ARGS...
	local cmd=$1
	shift
	"$cmd" -o Dir::State="$apt/state" -o Dir::State::status="$apt/state/status" \
		-o Dir::Cache="$apt/cache" -o Dir::Etc::SourceList=/dev/null \
		-o Dir::Etc::SourceParts="$apt/sources.d" -o Dir::Etc::Preferences=/dev/null \
		-o Dir::Etc::PreferencesParts="$apt/prefs.d" -o APT::Architecture=amd64 \
		-o APT::Architectures::=amd64 -o Debug::NoLocking=1 -o Acquire::Languages=none \
		-o APT::Get::List-Cleanup=0 -o APT::Sandbox::User=root "$@"
}

# fetch SUITE: the unpacked tree of SUITE's client-go and its Go
# dependencies; prints its GOPATH (ROOT/usr/share/gocode).
fetch() { # SUITE
	local suite=$1 dir apt debs pkgs p
	dir=$cache/client-go/$suite
	if [[ -f $dir/.complete ]]; then
		echo "$dir/root/usr/share/gocode"
		return 0
	fi
	rm -rf "$dir"
	apt=$dir/apt debs=$dir/debs
	mkdir -p "$apt/state/lists/partial" "$apt/cache/archives/partial" "$apt/sources.d" \
		"$apt/prefs.d" "$debs" "$dir/root"
	: >"$apt/state/status"
	apt_suite_source "$suite" "$apt/sources.d/$suite"
	papt apt-get update -qq >&2
	# client-go and every golang-*-dev it needs, recursively, and the
	# suite's Go toolchain (golang-go's golang-1.N-go and -src: Debian's
	# Go binaries are static, they run on the host); nothing else.
	pkgs=$(papt apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts \
		--no-breaks --no-replaces --no-enhances golang-k8s-client-go-dev golang-go |
		awk '/^[a-z0-9]/ { print $1 }' | grep -E '^golang-.*-dev$|^golang-1\.[0-9]+-(go|src)$' | sort -u)
	[[ -n $pkgs ]] || { say "no golang-k8s-client-go-dev in $suite"; return 1; }
	# shellcheck disable=SC2086 # one word per package
	(cd "$debs" && papt apt-get download -qq $pkgs >&2)
	# Two packages ship github.com/golang/protobuf, 1.3 and 1.5, whose
	# files differ: only the 1.5 one (the API client-go builds with) is
	# unpacked.
	for p in "$debs"/*.deb; do
		[[ $p == */golang-github-golang-protobuf-1-3-dev_* ]] && continue
		dpkg-deb -x "$p" "$dir/root"
	done
	(cd "$debs" && ls) | sed 's/\.deb$//' >"$dir/packages"
	rm -rf "$debs" "$apt/cache/archives"
	touch "$dir/.complete"
	echo "$dir/root/usr/share/gocode"
}

# The files of client-go's util/workqueue that the shim replaces (the
# shim has the internals their tests use).
replaced="queue.go delaying_queue.go rate_limiting_queue.go"
left_out=""

# The go binary for SUITE: KWQ_CLIENT_GO_GO, or the suite's own Go
# (unpacked with its client-go), or the newest installed golang-1.N-go.
gobin() { # SUITE
	if [[ -n ${KWQ_CLIENT_GO_GO:-} ]]; then
		echo "$KWQ_CLIENT_GO_GO"
		return
	fi
	local d
	for d in "$cache/client-go/$1"/root/usr/lib/go-1.*/bin/go /usr/lib/go-1.*/bin/go; do
		[[ -x $d ]] && echo "$d"
	done | head -n 1
}

# build_suite SUITE OUT NEWEST: one suite's binaries into OUT; the
# controller's and the bench's only if NEWEST is 1.
build_suite() {
	local suite=$1 out=$2 newest=$3 gp go w wq f
	gp=$(fetch "$suite")
	go=$(gobin "$suite")
	[[ -n $go ]] || { say "no Go toolchain (scripts/go.sh install)"; return 1; }
	# A fixed place per checkout, so that the build cache finds its
	# packages again.
	w=$top/build/client-go/$suite
	rm -rf "$w"
	mkdir -p "$w/main/src/kwq.dev" "$w/shim/src/kwq.dev" "$w/shim/src/k8s.io/client-go/util"
	cp -r "$top/bindings/go" "$w/main/src/kwq.dev/kwq"
	cp -r "$top/bindings/go" "$w/shim/src/kwq.dev/kwq"
	# client-go's util/workqueue with the shim in place of its queues.
	wq=$w/shim/src/k8s.io/client-go/util/workqueue
	cp -r "$gp/src/k8s.io/client-go/util/workqueue" "$wq"
	for f in $replaced $left_out; do
		[[ -f $wq/$f ]] || { say "$suite's client-go has no util/workqueue/$f"; return 1; }
		rm "$wq/$f"
	done
	cp "$top/bindings/go/clientgo/shim/kwq_shim.go" "$wq/"
	(
		export GO111MODULE=off GOPROXY=off GOFLAGS='' GOTOOLCHAIN=local CGO_ENABLED=0
		export GOCACHE=${GOCACHE:-$cache/go-build}
		cd "$w/main/src/kwq.dev/kwq"
		# The interface checks are compile-time: vet builds them.
		GOPATH=$w/main:$gp "$go" vet -tags kwqclientgo ./clientgo/iface
		# The controller (it compiles the fake clientset, most of a cold
		# build's time) and make bench's client-go column (client-go's
		# queue and kwq's, one program): against the newest suite only.
		if ((newest)); then
			GOPATH=$w/main:$gp "$go" vet -tags kwqclientgo ./clientgo/controller ./clientgo/bench
			GOPATH=$w/main:$gp "$go" test -c -tags kwqclientgo -ldflags='-s -w' -o "$out/kwq-cgo-ctl-$suite" ./clientgo/controller
			GOPATH=$w/main:$gp "$go" build -tags kwqclientgo -ldflags='-s -w' -o "$out/kwq-cgo-bench-$suite" ./clientgo/bench
		fi
		cd "$wq"
		GOPATH=$w/shim:$gp "$go" vet -tags kwqclientgo .
		GOPATH=$w/shim:$gp "$go" test -c -tags kwqclientgo -ldflags='-s -w' -o "$out/kwq-cgo-shim-$suite" .
	) >&2
	# The tests of the left-out files (none now), which the guest reports
	# as skipped.
	# shellcheck disable=SC2086 # a list of file names
	(cd "$gp/src/k8s.io/client-go/util/workqueue" && for f in $left_out; do
		sed -n 's/^func \(Test[A-Za-z0-9_]*\)(.*/\1/p' "$f"; done) >"$out/kwq-cgo-clock-tests-$suite"
	# The versions built against, for the guest's report.
	grep -E '^golang-k8s-(client-go|apimachinery|api)-dev_' "$cache/client-go/$suite/packages" |
		sed 's/_all$//' >"$out/kwq-cgo-versions-$suite"
	"$go" version >>"$out/kwq-cgo-versions-$suite"
}

build() { # DIR
	local out
	mkdir -p "$1/bin"
	out=$(cd "$1/bin" && pwd)
	local suites i
	read -ra suites <<<"${KWQ_CLIENT_GO_SUITES:-trixie sid}"
	for ((i = 0; i < ${#suites[@]}; i++)); do
		build_suite "${suites[i]}" "$out" $((i == ${#suites[@]} - 1))
	done
}

case ${1:-} in
build) [[ $# -eq 2 ]] || { echo "usage: scripts/client-go.sh build DIR" >&2; exit 2; }; build "$2" ;;
fetch) [[ $# -eq 2 ]] || { echo "usage: scripts/client-go.sh fetch SUITE" >&2; exit 2; }; fetch "$2" ;;
*) sed -n '2,/^set -e/p' "$0" | sed 's/^# \{0,1\}//; /^set -e/d' >&2; exit 2 ;;
esac
