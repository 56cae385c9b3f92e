#!/usr/bin/env bash
# A Debian sid root, made with debootstrap and cached, that gives make check
# and make package-check Linux's current stable series without touching the
# host: sid's kernel images (stock and PREEMPT_RT), their headers and the
# compiler those were built with (installed in the root, run through
# chroot), and the kernel's source tarball for the debug kernel.
#
#   scripts/sid-root.sh              make the root if it is not cached;
#                                    print its path
#   scripts/sid-root.sh kernel       print the kernel version sid's
#                                    linux-image-amd64 named when the root
#                                    was made, e.g. 7.2.13+deb14 (the images
#                                    are <ver>-amd64 and <ver>-rt-amd64)
#   scripts/sid-root.sh run CMD...   run CMD in the root (chroot, /proc and
#                                    /dev mounted for its duration)
#   scripts/sid-root.sh install PKG...
#                                    apt-get install PKG into the root
#
# The apt source is the machine's own bookworm URI with the suite "sid"
# (scripts/apt-suite.sh); versions are whatever sid has the day the root
# is made, read from the metapackages, never written here. The root lives
# in ${KWQ_CACHE:-/var/cache/kwq}/sid-root; it is rebuilt when the list of
# what it holds (below) changes. Needs root.
set -Eeuo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=scripts/apt-suite.sh
. "$top/scripts/apt-suite.sh"
say() { printf 'sid-root.sh: %s\n' "$*" >&2; }
die() { say "error: $*"; exit 1; }
((EUID == 0)) || die "needs root (debootstrap, chroot)"

cache=${KWQ_CACHE:-/var/cache/kwq}
root=$cache/sid-root
# What the root holds besides minbase: the kernel's build dependencies
# come with its headers (linux-kbuild, the gcc it was built with); make,
# sparse and libc headers build kwq as scripts/build.sh does on the host;
# gcc (cc), dkms, pkg-config, udev and adduser (kwq-dkms's dependency) for make
# package-check. Bump prep when the steps below change: the root is then
# made anew.
root_pkgs=(make gcc sparse libc6-dev kmod xz-utils dkms pkg-config udev adduser linux-headers-amd64
	linux-headers-rt-amd64 linux-source)
prep=1
key=$(printf '%s\n' "prep=$prep" "${root_pkgs[@]}" | sha256sum | cut -c1-12)

in_root() {
	chroot "$root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LC_ALL=C.UTF-8 \
		DEBIAN_FRONTEND=noninteractive HOME=/root "$@"
}
# Runs "$@" with /proc and /dev mounted in the root, unmounted after.
with_mounts() {
	local st=0
	mountpoint -q "$root/proc" || mount -t proc proc "$root/proc"
	mountpoint -q "$root/dev" || mount --bind /dev "$root/dev"
	"$@" || st=$?
	umount -l "$root/dev" 2>/dev/null || true
	umount -l "$root/proc" 2>/dev/null || true
	return "$st"
}

make_root() {
	local uri log=$cache/sid-root.log ver k
	uri=$(bookworm_uri | head -n 1)
	[[ -n $uri ]] || die "no bookworm apt source to derive sid's from"
	if ! command -v debootstrap >/dev/null; then
		DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=1200 install -y -qq \
			--no-install-recommends debootstrap >&2
	fi
	# A root debootstrap'd by this preparation (prep= of the key) is kept:
	# only the packages it lacks are added (with sid's lists of the day;
	# the kernel and what is installed already stay as they are).
	if [[ -f $root/.kwq-base-$prep ]]; then
		with_mounts in_root sh -c 'apt-get update -qq &&
			apt-get install -y -qq --no-install-recommends "$@"' sh "${root_pkgs[@]}" >>"$log" 2>&1 || { tail -n 20 "$log" >&2; die "adding ${root_pkgs[*]} to the sid root failed"; }
		echo "key=$key" >"$root/.kwq-packages"
	fi
	if ! grep -qs "^key=$key\$" "$root/.kwq-packages"; then
		rm -rf --one-file-system "$root" "$root.tmp"
		say "debootstrap sid from $uri into $root (a few minutes; log: $log)"
		debootstrap --variant=minbase sid "$root.tmp" "$uri" >"$log" 2>&1 ||
			{ tail -n 20 "$log" >&2; die "debootstrap failed"; }
		mv -T "$root.tmp" "$root"
		printf 'deb %s sid main\n' "$uri" >"$root/etc/apt/sources.list"
		# The host's apt settings (e.g. a snapshot mirror's Check-Valid-Until).
		cp /etc/apt/apt.conf.d/* "$root/etc/apt/apt.conf.d/" 2>/dev/null || true
		printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
		chmod 755 "$root/usr/sbin/policy-rc.d"
		echo force-unsafe-io >"$root/etc/dpkg/dpkg.cfg.d/kwq-unsafe-io"
		with_mounts in_root sh -c 'apt-get update -qq &&
			apt-get install -y -qq --no-install-recommends "$@"' sh "${root_pkgs[@]}" >>"$log" 2>&1 ||
			{ tail -n 20 "$log" >&2; die "installing ${root_pkgs[*]} in the sid root failed"; }
		echo "key=$key" >"$root/.kwq-packages"
		: >"$root/.kwq-base-$prep"
	fi
	# The images are only unpacked (into /boot of the root): installing one
	# would build an initramfs that nobody boots (the guests use busybox).
	# shellcheck disable=SC2016 # a dpkg-query format
	ver=$(in_root dpkg-query -W -f '${Depends}' linux-headers-amd64 | tr ',' '\n' |
		sed -n 's/^ *linux-headers-\([^ ]*\)-amd64 .*/\1/p' | head -n 1)
	[[ -n $ver ]] || die "cannot read the kernel version from sid's linux-headers-amd64"
	for k in "$ver-amd64" "$ver-rt-amd64"; do
		# The image package, and the linux-binary-* it depends on where
		# the kernel is split (its vmlinuz in /usr/lib/modules/<ver>/).
		# Each is unpacked, whichever holds vmlinuz. (apt-get download
		# escapes the '+' of the file name: hence the directory.)
		# shellcheck disable=SC2016 # expanded by the root's shell
		with_mounts in_root sh -c 'rm -rf /tmp/kwq-img && mkdir /tmp/kwq-img && cd /tmp/kwq-img &&
			apt-get download -qq "linux-image-$1" &&
			{ ! apt-cache show "linux-binary-$1" >/dev/null 2>&1 ||
			  apt-get download -qq "linux-binary-$1"; } &&
			for d in ./*.deb; do dpkg-deb -x "$d" / || exit 1; done &&
			rm -rf /tmp/kwq-img' sh "$k" >>"$log" 2>&1 ||
			die "could not unpack linux-image-$k into the sid root"
		if [[ ! -r $root/boot/vmlinuz-$k && -r $root/usr/lib/modules/$k/vmlinuz ]]; then
			cp "$root/usr/lib/modules/$k/vmlinuz" "$root/boot/vmlinuz-$k"
		fi
		[[ -r $root/boot/vmlinuz-$k ]] || die "linux-image-$k brought no vmlinuz"
	done
	echo "$ver" >"$root/.kwq-kernel"
	printf 'key=%s made %s\n' "$key" "$(date -u +%FT%TZ)" >"$root/.kwq-complete"
	say "sid root ready: kernel $ver ($(du -sh --one-file-system "$root" | cut -f1))"
}

ensure() {
	mkdir -p "$cache"
	exec 9>"$cache/sid-root.lock"
	flock 9
	if ! grep -qs "^key=$key " "$root/.kwq-complete"; then
		make_root
	fi
}

case ${1:-} in
"") ensure; echo "$root" ;;
kernel) ensure; cat "$root/.kwq-kernel" ;;
run) shift; ensure; with_mounts in_root "$@" ;;
install)
	shift
	ensure
	with_mounts in_root apt-get install -y -qq --no-install-recommends "$@" >&2
	;;
*)
	sed -n '2,/^set -E/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
	exit 2
	;;
esac
