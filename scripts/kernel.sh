#!/usr/bin/env bash
# Locate (stock kernels) or build and cache (debug kernels) a kernel to test
# kwq on.
# Prints shell-evaluable KWQ_KERNEL=, KWQ_KDIR=, KWQ_KVER= lines on stdout;
# progress goes to stderr. Usage: eval "$(scripts/kernel.sh debug)"
set -Eeuo pipefail

usage() {
	cat >&2 <<'EOF'
usage: scripts/kernel.sh FLAVOUR

  stock       Debian 12's default kernel: the image the installed
              linux-image-amd64 metapackage depends on (6.1)
  stock-6.12  newest installed linux-image-6.12.<n>+deb12-amd64
  rt-6.12     newest installed linux-image-6.12.<n>+deb12-rt-amd64 (PREEMPT_RT)
              (stock kernels need their linux-headers-<ver> too:
              KWQ_KERNEL=/boot/vmlinuz-<ver>, KWQ_KDIR=/usr/src/linux-headers-<ver>)
  stock-sid   Debian sid's kernel (Linux's current stable series, 7.x),
  rt-sid      and its PREEMPT_RT flavour: images and headers in the sid
              root of scripts/sid-root.sh, where kwq is built with the
              compiler they were built with (KWQ_ROOT= names the root;
              KWQ_KDIR is a path inside it)
  debug       tinyconfig + kconfig/debug.config built from the sid root's
              /usr/src/linux-source-<series>.tar.xz (sid's kernel), cached in
              ${KWQ_CACHE:-/var/cache/kwq}/debug-kernel/<srcver>-<fragment sha256:12>/
  debug-rt    tinyconfig + kconfig/debug-rt.config built from
              /usr/src/linux-source-6.12.tar.xz, cached in
              ${KWQ_CACHE:-/var/cache/kwq}/debug-rt-kernel/<srcver>-<fragment sha256:12>/

Prints KWQ_KERNEL=..., KWQ_KDIR=..., KWQ_KVER=..., KWQ_ROOT=... for eval.
Environment: KWQ_CACHE (cache root), KWQ_JOBS (make -j, default nproc).
EOF
	exit 2
}

say() { printf 'kernel.sh: %s\n' "$*" >&2; }
die() { say "error: $*"; exit 1; }

# Values are quoted with %q so that eval is safe whatever the paths contain.
emit() {
	printf 'KWQ_KERNEL=%q\nKWQ_KDIR=%q\nKWQ_KVER=%q\nKWQ_ROOT=%q\n' "$1" "$2" "$3" "${4:-}"
}

# An installed image/headers pair: /boot/vmlinuz-VER and its build tree.
usable() { [[ -r /boot/vmlinuz-$1 && -f /usr/src/linux-headers-$1/Makefile ]]; }

stock() {
	local ver
	# Debian's default kernel is whatever linux-image-amd64 depends on, e.g.
	# "linux-image-6.1.0-56-amd64 (= 6.1.192-2)"; 6.12 packages installed
	# beside it are never picked here.
	ver=$(dpkg-query -W -f '${Depends}' linux-image-amd64 2>/dev/null |
		sed -n 's/^linux-image-\([^ ,]*-amd64\).*/\1/p') ||
		true
	[[ -n $ver ]] || die "linux-image-amd64 is not installed (run scripts/deps.sh)"
	usable "$ver" || die "no /boot/vmlinuz-$ver with /usr/src/linux-headers-$ver (run scripts/deps.sh)"
	emit "/boot/vmlinuz-$ver" "/usr/src/linux-headers-$ver" "$ver"
}

# Newest installed image whose version matches an ERE (anchored), that has
# its headers too. stock_series ERE DESCRIPTION
stock_series() {
	local ere=$1 what=$2 ver best=""
	for ver in $(dpkg-query -W -f '${Package} ${db:Status-Status}\n' 'linux-image-*' 2>/dev/null |
		awk '$2 == "installed" { print $1 }' | sed -n 's/^linux-image-//p' |
		grep -E "^($ere)\$" | sort -V); do
		if usable "$ver"; then
			best=$ver
		fi
	done
	[[ -n $best ]] || die "no installed $what image with its headers (run scripts/deps.sh)"
	emit "/boot/vmlinuz-$best" "/usr/src/linux-headers-$best" "$best"
}

# Debian sid's kernel, in the sid root: FLAVOUR "" or "rt-".
sid() {
	local root ver
	root=$("$(dirname "${BASH_SOURCE[0]}")/sid-root.sh") || die "no sid root (scripts/sid-root.sh)"
	ver=$(cat "$root/.kwq-kernel")-${1}amd64
	[[ -r $root/boot/vmlinuz-$ver && -f $root/usr/src/linux-headers-$ver/Makefile ]] ||
		die "the sid root has no vmlinuz-$ver with its headers"
	emit "$root/boot/vmlinuz-$ver" "/usr/src/linux-headers-$ver" "$ver" "$root"
}

# Every assignment in the fragment must be in the final .config: merge_config
# and olddefconfig silently drop options whose dependencies are unmet.
verify_config() {
	local frag=$1 cfg=$2 line name bad=()
	while IFS= read -r line; do
		if [[ $line =~ ^(CONFIG_[A-Za-z0-9_]+)= ]]; then
			grep -qxF -- "$line" "$cfg" || bad+=("$line (got: $(grep -m1 -E "^(# )?${BASH_REMATCH[1]}[= ]" "$cfg" || echo 'absent'))")
		elif [[ $line =~ ^#\ (CONFIG_[A-Za-z0-9_]+)\ is\ not\ set ]]; then
			name=${BASH_REMATCH[1]}
			if grep -q -- "^$name=" "$cfg"; then
				bad+=("$line (got: $(grep -m1 -- "^$name=" "$cfg"))")
			fi
		fi
	done <"$frag"
	if ((${#bad[@]})); then
		say "error: ${#bad[@]} option(s) of $frag did not survive into .config (unmet dependencies?):"
		printf '  %s\n' "${bad[@]}" >&2
		return 1
	fi
}

# debug NAME FRAGMENT SERIES [ROOT]: build tinyconfig + kconfig/FRAGMENT from
# linux-source-SERIES (installed on the host, or in ROOT) once, cached in
# $KWQ_CACHE/NAME-kernel/<key>/. The host's compiler builds it.
debug() {
	local name=$1 series=$3 root=${4:-} repo frag tarball srcver fhash key cache base final tmp log jobs start
	hb=""
	repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
	frag=$repo/kconfig/$2
	tarball=$root/usr/src/linux-source-$series.tar.xz
	[[ -r $frag ]] || die "missing $frag"
	[[ -r $tarball ]] || die "missing $tarball (run scripts/deps.sh)"
	srcver=$(dpkg-query --admindir="$root/var/lib/dpkg" -W -f '${Version}' "linux-source-$series" 2>/dev/null) ||
		die "package linux-source-$series is not installed${root:+ in $root}"
	fhash=$(sha256sum "$frag" | cut -c1-12)
	key=$srcver-$fhash
	cache=${KWQ_CACHE:-/var/cache/kwq}
	base=$cache/$name-kernel
	final=$base/$key
	mkdir -p "$base"

	# One builder per cache: a second caller waits, then reuses the result.
	exec 9>"$base/.lock"
	if ! flock -n 9; then
		say "another build holds $base/.lock; waiting"
		flock 9
	fi

	if [[ ! -f $final/.kwq-complete ]]; then
		# We hold the lock, so temp dirs left here are from killed builds.
		rm -rf "$base"/.tmp-*
		[[ ! -e $final ]] || die "$final exists without its completion stamp; remove it"
		tmp=$(mktemp -d "$base/.tmp-$key.XXXXXX")
		chmod 755 "$tmp"
		log=$tmp/build.log
		trap 'on_fail "$tmp" "$log" "$base/$key"' ERR
		jobs=${KWQ_JOBS:-$(nproc)}
		start=$SECONDS
		say "building $name kernel $key in $tmp (log: $log)"
		step=unpack
		say "unpacking $tarball"
		tar -C "$tmp" -xJf "$tarball"
		mv "$tmp/linux-source-$series" "$tmp/linux"
		cp "$frag" "$tmp/fragment.config"
		step=configure
		say "configuring: tinyconfig + $(basename "$frag")"
		{
			make -C "$tmp/linux" tinyconfig
			(cd "$tmp/linux" && scripts/kconfig/merge_config.sh -m .config "$tmp/fragment.config")
			make -C "$tmp/linux" olddefconfig
		} >>"$log" 2>&1
		step=verify
		verify_config "$frag" "$tmp/linux/.config"
		step=compile
		say "compiling bzImage + modules_prepare with -j$jobs (several minutes)"
		# `modules` is needed for Module.symvers (there are no in-tree modules);
		# modules_prepare makes the tree usable for `make M=...`.
		heartbeat "$log" &
		hb=$!
		make -C "$tmp/linux" -j"$jobs" bzImage modules >>"$log" 2>&1
		kill "$hb" 2>/dev/null || true
		make -C "$tmp/linux" modules_prepare >>"$log" 2>&1
		[[ -f $tmp/linux/Module.symvers ]] || { say "error: no Module.symvers"; false; }
		make -C "$tmp/linux" -s kernelrelease >"$tmp/kernelrelease" 2>>"$log"
		printf 'built %s in %ss\n' "$(date -u +%FT%TZ)" "$((SECONDS - start))" >"$tmp/.kwq-complete"
		trap - ERR
		mv -T "$tmp" "$final"
		say "built $(cat "$final/kernelrelease") in $((SECONDS - start))s"
	fi
	emit "$final/linux/arch/x86/boot/bzImage" "$final/linux" "$(cat "$final/kernelrelease")"
}

# A progress line a minute while make runs silently into the log.
# Runs in a background subshell: it must not inherit the ERR trap (which
# would delete the build), and it stops when this script ($$) is gone.
heartbeat() {
	local log=$1 t0=$SECONDS last
	trap - ERR
	set +e
	while sleep 60 && kill -0 $$ 2>/dev/null; do
		last=$(grep -E '^  [A-Z]+ ' "$log" | tail -n1 | sed 's/^ *//')
		say "  ...compiling, $((SECONDS - t0))s, last: $last"
	done
}

# Keep the log and .config of a failed build next to the cache, drop the rest.
on_fail() {
	local tmp=$1 log=$2 dest=$3
	trap - ERR
	[[ -z ${hb:-} ]] || kill "$hb" 2>/dev/null || true
	say "error: kernel build failed at step '$step'"
	if [[ $step != verify ]]; then
		say "last lines of $log:"
		tail -n 40 "$log" >&2 || true
	fi
	mkdir -p "$dest.failed"
	cp -f "$log" "$dest.failed/build.log" 2>/dev/null || true
	cp -f "$tmp/linux/.config" "$dest.failed/config" 2>/dev/null || true
	rm -rf "$tmp"
	say "kept log and .config in $dest.failed/"
	exit 1
}

step=""
[[ $# -eq 1 ]] || usage
case $1 in
stock) stock ;;
stock-6.12) stock_series '6\.12\.[0-9]+\+deb12-amd64' 'linux-image-6.12.<n>+deb12-amd64' ;;
rt-6.12) stock_series '6\.12\.[0-9]+\+deb12-rt-amd64' 'linux-image-6.12.<n>+deb12-rt-amd64' ;;
stock-sid) sid "" ;;
rt-sid) sid rt- ;;
debug)
	root=$("$(dirname "${BASH_SOURCE[0]}")/sid-root.sh") || die "no sid root (scripts/sid-root.sh)"
	series=$(cut -d. -f1,2 "$root/.kwq-kernel")
	debug debug debug.config "$series" "$root"
	;;
debug-rt) debug debug-rt debug-rt.config 6.12 ;;
*) usage ;;
esac
