#!/usr/bin/env bash
# make package-check: build the Debian packages (make deb), lint them,
# install, upgrade and purge them in a throwaway bookworm root, let DKMS
# build kwq.ko there for the 6.1 and the 6.12 stock kernel (the second by
# the kernel-headers hook, as on a kernel update), then boot each kernel in
# QEMU with the DKMS-built module and the packaged kwqctl and libkwq; then
# the same install, DKMS build and boot in Debian sid, with sid's kernel
# (Linux's current stable series) and the compiler it was built with.
# Prints TAP per section and ends with "N passed, N failed".
#
# The throwaway root is debootstrap'd from the mirror of this machine's own
# apt sources (read at run time) and cached, with the packages it needs,
# in ${KWQ_CACHE:-/var/cache/kwq}/pkg-root/.
set -Eeuo pipefail

usage() {
	cat >&2 <<'EOF'
usage: scripts/package-check.sh [--keep]

  --keep   leave the throwaway root and the logs in build/package-check/
Environment: KWQ_CACHE (cache root, default /var/cache/kwq).
Exit: 0 if every test passed, 1 otherwise, 2 usage.
EOF
	exit 2
}

keep=0
while [[ $# -gt 0 ]]; do
	case $1 in
	--keep) keep=1; shift ;;
	*) usage ;;
	esac
done

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$top"
say() { printf 'package-check: %s\n' "$*" >&2; }
die() { say "error: $*"; exit 1; }
((EUID == 0)) || die "needs root (debootstrap, chroot, dpkg in the throwaway root)"

out=$top/build/package-check
root=$out/root
cache=${KWQ_CACHE:-/var/cache/kwq}/pkg-root
start=$SECONDS
mounted=()

cleanup() {
	local m i
	for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
		m=${mounted[i]}
		umount -l "$m" 2>/dev/null || true
	done
	mounted=()
	if ((keep == 0)) && [[ -d $root ]]; then
		rm -rf --one-file-system "$root" "$out/sid-upper" "$out/sid-work"
	fi
}
trap cleanup EXIT
# A signal ends the run through the EXIT trap, so that no mount of the host's
# /dev is left under build/ for a later rm -rf to walk into.
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM

# --- TAP ------------------------------------------------------------------
tap_file=$out/host.tap
tap_n=0
tap() { # STATUS DESCRIPTION [LOG]
	tap_n=$((tap_n + 1))
	if [[ $1 -eq 0 ]]; then
		echo "ok $tap_n - $2" >>"$tap_file"
		echo "ok $tap_n - $2"
	else
		echo "not ok $tap_n - $2" >>"$tap_file"
		echo "not ok $tap_n - $2"
		if [[ -n ${3:-} && -f ${3:-} ]]; then
			tail -n 30 "$3" | sed 's/^/#   /' | tee -a "$tap_file"
		fi
	fi
}
# Run a command, log its output, and record one result for it.
check() { # DESCRIPTION LOG COMMAND...
	local desc=$1 log=$2
	shift 2
	if "$@" >"$log" 2>&1; then tap 0 "$desc"; else tap 1 "$desc" "$log"; fi
}

# --- host packages ----------------------------------------------------------
apt_get() {
	# One apt at a time on this machine: wait for the lock, do not fight it.
	DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=1200 "$@"
}
missing_pkgs() {
	local p status
	for p in "$@"; do
		status=$(dpkg-query -W -f '${Status}' "$p" 2>/dev/null || true)
		[[ $status == "install ok installed" ]] || echo "$p"
	done
}
updated=0
ensure_pkgs() {
	local -a miss
	mapfile -t miss < <(missing_pkgs "$@")
	((${#miss[@]})) || return 0
	say "installing ${miss[*]}"
	if ((updated == 0)); then
		apt_get update -qq
		updated=1
	fi
	apt_get install -y -qq --no-install-recommends "${miss[@]}" >&2
}

# Newest installable version of the 6.12 stock kernel (never hard-coded):
# linux-image-6.12.<n>+deb12-amd64 that has linux-headers of the same name.
kver_612() {
	local re='s/^linux-\(image\|headers\)-\(6\.12\.[0-9]*+deb12-amd64\)$/\2/p'
	# Versions with both names known to apt, the newest.
	comm -12 <(apt-cache pkgnames linux-image-6.12. 2>/dev/null | sed -n "$re" | sort) \
		<(apt-cache pkgnames linux-headers-6.12. 2>/dev/null | sed -n "$re" | sort) |
		sort -V | tail -n 1
}

mkdir -p "$out"
: >"$tap_file"
echo "KWQ-TAP-BEGIN package-host"

"$top/scripts/deps.sh"
ensure_pkgs debhelper dh-dkms dpkg-dev fakeroot lintian debootstrap man-db groff-base \
	pkg-config python3 xz-utils shellcheck
k612=$(kver_612)
if [[ -z $k612 ]]; then
	apt_get update -qq
	updated=1
	k612=$(kver_612)
fi
[[ -n $k612 ]] || die "no linux-image-6.12.*+deb12-amd64 with its headers in the apt sources"
ensure_pkgs "linux-image-$k612" "linux-headers-$k612"
# The 6.1 stock kernel: the newest linux-image-6.1.* that has its headers.
k61=""
for v in $(dpkg-query -W -f '${Package} ${db:Status-Status}\n' 'linux-image-6.1.*-amd64' 2>/dev/null |
	awk '$2 == "installed" { print $1 }' | sed 's/^linux-image-//' | sort -V); do
	[[ -r /boot/vmlinuz-$v && -f /usr/src/linux-headers-$v/Makefile ]] && k61=$v
done
[[ -n $k61 ]] || die "no installed linux-image-6.1.*-amd64 with its headers (scripts/deps.sh)"
[[ -r /boot/vmlinuz-$k612 ]] || die "/boot/vmlinuz-$k612 missing"
say "kernels: $k61 and $k612"

# --- static checks of what the packages ship ---------------------------------
for page in man/kwqctl.1 man/libkwq.3 man/kwq.4; do
	# man --warnings prints groff's warnings; any output is a failure.
	log=$out/man-$(basename "$page").log
	LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -E UTF-8 -l "$page" 2>"$log" >/dev/null || echo "man failed" >>"$log"
	if [[ -s $log ]]; then tap 1 "man --warnings $page" "$log"; else tap 0 "man --warnings $page"; fi
	check "lexgrog finds the NAME section of $page" "$out/lexgrog.log" lexgrog "$page"
done
check "shellcheck: bash completion, maintainer scripts" "$out/shellcheck.log" \
	shellcheck userspace/kwqctl/kwqctl.bash-completion debian/kwq-dkms.postinst

# --- make deb --------------------------------------------------------------
version=$(dpkg-parsechangelog -l debian/changelog -S Version)
check "make deb builds kwq $version" "$out/deb.log" make deb
debs=$top/build/deb
for p in kwq-dkms libkwq0 libkwq-dev kwq-tools; do
	if compgen -G "$debs/${p}_${version}_*.deb" >/dev/null; then tap 0 "package $p built"; else tap 1 "package $p built"; fi
done
changes=$(compgen -G "$debs/kwq_${version}_*.changes" | head -n 1 || true)
if [[ -n $changes ]]; then
	# Errors and warnings fail (overrides, each with its reason, are in
	# debian/*.lintian-overrides); info tags are printed to the log.
	check "lintian: no error or warning" "$out/lintian.log" \
		lintian --fail-on error,warning --info --display-info "$changes"
else
	tap 1 "lintian: no .changes file to check"
fi

# --- the throwaway root --------------------------------------------------
# The mirror that serves "bookworm" in this machine's apt sources.
# shellcheck source=scripts/apt-suite.sh
. "$top/scripts/apt-suite.sh"
uri=$(bookworm_uri | head -n 1)
[[ -n $uri ]] || die "no bookworm mirror in /etc/apt/sources.list{,.d}"

in_root() { chroot "$root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LC_ALL=C.UTF-8 \
	DEBIAN_FRONTEND=noninteractive HOME=/root "$@"; }
mount_root() {
	mount -t proc proc "$root/proc" && mounted+=("$root/proc")
	mount --bind /dev "$root/dev" && mounted+=("$root/dev")
	mount -t tmpfs tmpfs "$root/run" && mounted+=("$root/run")
}
unmount_root() {
	local m
	for m in "$root/run" "$root/dev" "$root/proc"; do umount -l "$m" 2>/dev/null || true; done
	mounted=()
}

# What the root needs besides minbase: DKMS and its compiler, pkg-config
# for the library test, bash-completion, udev (its udevd applies the
# package's rule in the guest), and the 6.1 headers. The 6.12
# headers are only downloaded: installing them is part of the test.
root_pkgs=(dkms gcc make libc6-dev pkg-config bash-completion kmod man-db udev "linux-headers-$k61")
# Bump prep= when the preparation below changes.
key=$(printf '%s\n' prep=2 "$uri" "${root_pkgs[@]}" "linux-headers-$k612" | sha256sum | cut -c1-12)
tarball=$cache/bookworm-$key.tar
mkdir -p "$cache"
rm -rf --one-file-system "$root"
if [[ ! -f $tarball ]]; then
	say "debootstrap bookworm from the configured mirror into $root (cached afterwards)"
	log=$out/debootstrap.log
	debootstrap --variant=minbase bookworm "$root" "$uri" >"$log" 2>&1 ||
		{ tail -n 20 "$log" >&2; die "debootstrap failed"; }
	rm -f "$root"/etc/apt/sources.list
	cp /etc/apt/sources.list.d/*.sources "$root/etc/apt/sources.list.d/" 2>/dev/null || true
	[[ ! -r /etc/apt/sources.list ]] || cp /etc/apt/sources.list "$root/etc/apt/"
	printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
	chmod 755 "$root/usr/sbin/policy-rc.d"
	# The 6.12 headers pull in the 6.12 image, whose hook would build an
	# initramfs nobody boots (the guests use a busybox one): skip that.
	in_root dpkg-divert --local --rename --divert /usr/sbin/update-initramfs.kwq-test \
		--add /usr/sbin/update-initramfs >>"$log" 2>&1
	ln -sf /bin/true "$root/usr/sbin/update-initramfs"
	mount_root
	{
		in_root apt-get update -qq
		in_root apt-get install -y -qq --no-install-recommends "${root_pkgs[@]}"
		in_root apt-get install -y -qq --no-install-recommends --download-only "linux-headers-$k612"
	} >>"$log" 2>&1 || { tail -n 20 "$log" >&2; die "preparing the throwaway root failed"; }
	unmount_root
	tar -C "$root" -cf "$tarball.tmp" . && mv "$tarball.tmp" "$tarball"
	# Older roots of other keys are stale.
	find "$cache" -maxdepth 1 -name 'bookworm-*.tar' ! -name "bookworm-$key.tar" -delete
else
	mkdir -p "$root"
	tar -C "$root" -xf "$tarball"
fi
# A throwaway root needs no fsync per unpacked file (the 6.12 image is big).
echo force-unsafe-io >"$root/etc/dpkg/dpkg.cfg.d/kwq-test-unsafe-io"
mount_root
tap 0 "throwaway bookworm root ready ($(du -sh --one-file-system "$root" | cut -f1))"

# Files of the root before our packages, to compare after the purge.
snapshot() {
	(cd "$root" && find . -xdev \( -path ./proc -o -path ./dev -o -path ./run -o -path ./tmp \
		-o -path ./var/lib/dpkg -o -path ./var/lib/apt -o -path ./var/cache -o -path ./var/log \
		-o -path ./var/lib/dkms \) -prune -o -print | sort)
}
snapshot >"$out/files.before"

ko_path() { # KVER -> the DKMS-installed module (compressed or not), if any
	local f
	for f in "$root/lib/modules/$1/updates/dkms/kwq.ko" "$root/lib/modules/$1/updates/dkms/kwq.ko.xz" \
		"$root/lib/modules/$1/updates/dkms/kwq.ko.zst" "$root/lib/modules/$1/updates/dkms/kwq.ko.gz"; do
		[[ -f $f ]] && { echo "$f"; return 0; }
	done
	return 1
}
dkms_has() { # VERSION KVER: dkms status says installed
	in_root dkms status -m kwq -v "$1" -k "$2" 2>/dev/null | grep -q ': installed'
}

copy_debs() { # DIR VERSION: the four packages into the root's /tmp/debs
	local p
	rm -rf "$root/tmp/debs"
	mkdir -p "$root/tmp/debs"
	for p in kwq-dkms libkwq0 libkwq-dev kwq-tools; do
		cp "$1/${p}_${2}_"*.deb "$root/tmp/debs/" || return 1
	done
}
copy_debs "$debs" "$version" || true
check "dpkg -i of the four packages ($version)" "$out/install.log" \
	in_root sh -c 'dpkg -i /tmp/debs/*.deb'
check "dkms built and installed kwq $version for $k61" "$out/dkms-61.log" dkms_has "$version" "$k61"
check "kwq.ko is in /lib/modules/$k61/updates/dkms" "$out/ko-61.log" ko_path "$k61"
check "the kwq system group exists" "$out/group.log" in_root getent group kwq
check "the udev rule makes /dev/kwq 0660 root:kwq" "$out/udev.log" \
	grep -qx 'KERNEL=="kwq", SUBSYSTEM=="misc", OWNER="root", GROUP="kwq", MODE="0660"' \
	"$root/lib/udev/rules.d/60-kwq.rules"
check "no modules-load.d entry (off by default)" "$out/modload.log" \
	test ! -e "$root/etc/modules-load.d/kwq.conf"
check "man pages installed: kwqctl(1) libkwq(3) kwq(4)" "$out/man-inst.log" \
	in_root sh -c 'man -w 1 kwqctl && man -w 3 libkwq && man -w 4 kwq'

# The 6.12 headers arrive as on a kernel update: DKMS's hook builds kwq.
check "installing linux-headers-$k612 in the root" "$out/headers-612.log" \
	in_root apt-get install -y -qq --no-install-recommends --no-download "linux-headers-$k612"
check "the kernel hook built and installed kwq $version for $k612" "$out/dkms-612.log" \
	dkms_has "$version" "$k612"

# libkwq through pkg-config: the example of libkwq(3), built in the root,
# dynamic and static. build_example DESCRIPTION-PREFIX LOG
build_example() {
	sed -n '/^\.EX/,/^\.EE/p' man/libkwq.3 | sed -e '1d;$d' -e 's/\\e/\\/g' >"$root/tmp/example.c"
	# shellcheck disable=SC2016 # expanded in the root's shell
	check "$1pkg-config --cflags --libs kwq builds libkwq(3)'s example" "$2" \
		in_root sh -c 'cc -Wall -Werror -o /tmp/example /tmp/example.c $(pkg-config --cflags --libs kwq) &&
			cc -static -o /tmp/example-static /tmp/example.c $(pkg-config --cflags --static kwq) \
				$(pkg-config --variable=libdir kwq)/libkwq.a'
}
build_example "" "$out/example.log"
check "pkg-config reports version $version" "$out/pcver.log" \
	test "$(in_root pkg-config --modversion kwq)" = "${version%%-*}"

# bash completion, in the root's bash with bash-completion loaded.
complete_words() { # WORDS... (the last one is being completed)
	# shellcheck disable=SC2016 # expanded by the root's bash
	in_root bash -c 'source /usr/share/bash-completion/bash_completion
		source /usr/share/bash-completion/completions/kwqctl
		COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
		_kwqctl; printf "%s\n" "${COMPREPLY[@]}"' _ "$@"
}
check "bash completion: kwqctl cr<TAB> -> create" "$out/comp1.log" \
	test "$(complete_words kwqctl cr)" = create
check "bash completion: kwqctl stats q --j<TAB> -> --json" "$out/comp2.log" \
	test "$(complete_words kwqctl stats q --j)" = --json
check "bash completion: kwqctl add q k --policy s<TAB> -> strict" "$out/comp3.log" \
	test "$(complete_words kwqctl add q k --policy s)" = strict

# --- guests: the DKMS-built module on each kernel ----------------------------
guest_files() { # KVER DIR
	local k=$1 d=$2 ko
	rm -rf "$d"
	mkdir -p "$d/bin" "$d/lib"
	ko=$(ko_path "$k") || return 1
	case $ko in
	*.xz) xz -dc "$ko" >"$d/kwq.ko" ;;
	*.zst) zstd -dc "$ko" >"$d/kwq.ko" ;;
	*.gz) gzip -dc "$ko" >"$d/kwq.ko" ;;
	*) cp "$ko" "$d/kwq.ko" ;;
	esac
	# The module's GNU build-id note, raw, as /sys/module/kwq/notes shows it.
	objcopy -O binary --only-section=.note.gnu.build-id "$d/kwq.ko" "$d/build-id.bin"
	od -An -tx1 -v "$d/build-id.bin" | tr -d ' \n' >"$d/build-id"
	[[ -s $d/build-id ]]
	# The packaged, dynamically linked programs run through the root's
	# loader with its libraries (the guest is a bare busybox initramfs).
	cp "$root/usr/bin/kwqctl" "$root/tmp/example" "$root/tmp/example-static" "$d/bin/"
	cp -L "$root"/lib64/ld-linux-x86-64.so.2 "$root"/lib/x86_64-linux-gnu/libc.so.6 \
		"$root"/usr/lib/x86_64-linux-gnu/libkwq.so.0 "$d/lib/"
	# udevd (systemd-udevd is udevadm under another name) and its libraries.
	cp "$root/bin/udevadm" "$d/bin/udevadm"
	cp "$root/bin/udevadm" "$d/bin/systemd-udevd"
	in_root ldd /bin/udevadm | awk '$3 ~ /^\// { print $3 }' | while read -r lib; do
		cp -L "$root$lib" "$d/lib/"
	done
	cp "$root/lib/udev/rules.d/60-kwq.rules" "$d/"
	in_root getent group kwq >"$d/group"
	cp "$top/scripts/guest/lib.sh" "$d/"
}
guest_ok=()
for k in "$k61" "$k612"; do
	d=$out/guest-$k
	log=$out/console-$k.log
	if ! guest_files "$k" "$d" >"$out/files-$k.log" 2>&1; then
		tap 1 "guest files for $k" "$out/files-$k.log"
		continue
	fi
	say "booting $k with the DKMS-built kwq.ko"
	st=0
	# Stock kernels: every vCPU on one host thread (see vm-run.sh --one-thread).
	"$top/scripts/vm-run.sh" --one-thread --kernel "/boot/vmlinuz-$k" --files "$d" --timeout 300 \
		--log "$log" -- "$top/scripts/guest/package.sh" >"$out/guest-$k.out" 2>&1 || st=$?
	tap "$st" "guest on $k: the package test script exited 0 and the console is clean" "$out/guest-$k.out"
	guest_ok+=("$k")
	# The JSON kwqctl printed in the guest, validated here.
	for what in list stats metrics; do
		sed -n "/^KWQ-JSON-BEGIN $what\$/,/^KWQ-JSON-END $what\$/p" "$log" | sed '1d;$d' | tr -d '\r' >"$d/$what.json"
		if [[ -s $d/$what.json ]] && python3 -m json.tool "$d/$what.json" >"$d/$what.pretty" 2>&1; then
			tap 0 "kwqctl --json $what on $k is valid JSON"
		else
			tap 1 "kwqctl --json $what on $k is valid JSON" "$d/$what.json"
		fi
	done
	check "JSON on $k holds what the guest did" "$d/json-content.log" python3 - "$d" <<'EOF'
import json, sys
d = sys.argv[1]
lst = json.load(open(d + "/list.json"))
st = json.load(open(d + "/stats.json"))
m = json.load(open(d + "/metrics.json"))
assert lst["queues"] == ["pkg"], lst
assert st["name"] == "pkg" and st["adds"] == 2 and st["dedups"] == 1, st
assert st["dones"] == 1 and st["queued"] == 1 and st["state"] == [], st
assert len(st["queue_latency"]) == 11 and sum(st["queue_latency"]) == 1, st
q = [x for x in m["queues"] if x["name"] == "pkg"][0]
assert q["workqueue_adds_total"] == 2 and q["workqueue_depth"] == 1, q
h = q["workqueue_work_duration_seconds"]
assert h["count"] == 1 and h["buckets"][-1] == 1 and h["le"][-1] is None, h
print("ok")
EOF
done

# --- upgrade to a rebuilt N+1, then purge ----------------------------------
next=${version}+pkgcheck1
check "make deb of the upgrade $next (scripts/deb.sh --next)" "$out/deb-next.log" \
	"$top/scripts/deb.sh" --next "$next" "$out/next"
copy_debs "$out/next" "$next" || true
check "upgrade: dpkg -i of $next over $version" "$out/upgrade.log" \
	in_root sh -c 'dpkg -i /tmp/debs/*.deb'
for k in "$k61" "$k612"; do
	check "upgrade: kwq $next installed for $k" "$out/dkms-next-$k.log" dkms_has "$next" "$k"
done
check "upgrade: kwq $version is gone from DKMS and /usr/src" "$out/old-gone.log" \
	sh -c "! chroot '$root' dkms status -m kwq -v '$version' | grep -q . && test ! -e '$root/usr/src/kwq-$version'"
check "upgrade: kwqctl runs" "$out/kwqctl-next.log" in_root kwqctl --help

check "purge: dpkg --purge of the four packages" "$out/purge.log" \
	in_root dpkg --purge kwq-tools libkwq-dev libkwq0 kwq-dkms
check "purge: no kwq module left in /lib/modules" "$out/purge-ko.log" \
	sh -c "! find '$root/lib/modules' -name 'kwq.ko*' | grep ."
check "purge: DKMS knows no kwq" "$out/purge-dkms.log" \
	sh -c "! chroot '$root' dkms status -m kwq | grep ."
snapshot >"$out/files.after"
# New files that no installed package owns, besides what depmod and
# ldconfig generate. (/lib, /bin, /sbin are /usr's: one name for each.)
# Those of kwq (its name, DKMS's updates/ directories) are leftovers; the
# others come from the 6.12 image the headers pulled in (alternatives,
# /vmlinuz links) and are listed as comments.
usrmerge() { sed -e 's|^\./lib/|./usr/lib/|' -e 's|^\./lib64/|./usr/lib64/|' \
	-e 's|^\./bin/|./usr/bin/|' -e 's|^\./sbin/|./usr/sbin/|' | sort -u; }
sed 's|^|.|' "$root"/var/lib/dpkg/info/*.list | usrmerge >"$out/files.owned"
comm -13 <(usrmerge <"$out/files.before") <(usrmerge <"$out/files.after") |
	comm -23 - "$out/files.owned" |
	grep -v -e '^\./usr/lib/modules/[^/]*/modules\.' -e '^\./etc/ld\.so\.cache$' \
		>"$out/unowned.log" || true
grep -i -e kwq -e '/updates/' "$out/unowned.log" |
	grep -v -x -F ./usr/sbin/update-initramfs.kwq-test >"$out/leftovers.log" || true
sed 's/^/# not kwq, unowned: /' "$out/unowned.log" | grep -v -F -f "$out/leftovers.log" |
	grep -v -F 'update-initramfs.kwq-test' || true
if [[ -s $out/leftovers.log ]]; then
	tap 1 "purge: nothing of kwq left in the root" "$out/leftovers.log"
else
	tap 0 "purge: nothing of kwq left in the root"
fi
check "purge: the kwq group stays (Debian keeps system groups)" "$out/group2.log" in_root getent group kwq

# --- Debian sid: the packages on Linux's current stable kernel ---------------
# What a user of Debian testing or sid does: install the same packages in
# a sid system (an overlay over scripts/sid-root.sh's cached root, which
# stays untouched), where DKMS builds kwq for sid's kernel through its
# headers with the compiler that kernel was built with; then that kernel
# boots the DKMS-built module and runs the packaged kwqctl and libkwq.
unmount_root
((keep)) || rm -rf --one-file-system "$root"
sid_lower=$("$top/scripts/sid-root.sh")
ksid=$(cat "$sid_lower/.kwq-kernel")-amd64
root=$out/sid-root
rm -rf --one-file-system "$root" "$out/sid-upper" "$out/sid-work"
mkdir -p "$root" "$out/sid-upper" "$out/sid-work"
mount -t overlay overlay -o "lowerdir=$sid_lower,upperdir=$out/sid-upper,workdir=$out/sid-work" "$root" &&
	mounted+=("$root")
mount_root
copy_debs "$debs" "$version" || true
check "sid: dpkg -i of the four packages ($version)" "$out/sid-install.log" \
	in_root sh -c 'dpkg -i /tmp/debs/*.deb'
check "sid: dkms built and installed kwq $version for $ksid" "$out/sid-dkms.log" \
	dkms_has "$version" "$ksid"
build_example "sid: " "$out/sid-example.log"
d=$out/guest-$ksid
if guest_files "$ksid" "$d" >"$out/files-$ksid.log" 2>&1; then
	say "booting sid's $ksid with the DKMS-built kwq.ko"
	st=0
	"$top/scripts/vm-run.sh" --one-thread --kernel "$sid_lower/boot/vmlinuz-$ksid" --files "$d" \
		--timeout 300 --log "$out/console-$ksid.log" -- "$top/scripts/guest/package.sh" \
		>"$out/guest-$ksid.out" 2>&1 || st=$?
	tap "$st" "guest on sid's $ksid: the package test script exited 0 and the console is clean" \
		"$out/guest-$ksid.out"
	guest_ok+=("$ksid")
else
	tap 1 "guest files for $ksid" "$out/files-$ksid.log"
fi

echo "1..$tap_n" >>"$tap_file"
echo "1..$tap_n"
echo "KWQ-TAP-END package-host"

# --- count ----------------------------------------------------------------
pass=0 fail=0 skip=0
count() { # FILE [--from --to]
	local r
	r=$("$top/scripts/tap-count.sh" "$@" 2>/dev/null || true)
	[[ $r =~ PASS=([0-9]+)\ FAIL=([0-9]+)\ SKIP=([0-9]+) ]] || { fail=$((fail + 1)); return; }
	pass=$((pass + BASH_REMATCH[1]))
	fail=$((fail + BASH_REMATCH[2]))
	skip=$((skip + BASH_REMATCH[3]))
}
count "$tap_file"
for k in "${guest_ok[@]}"; do
	count --from "KWQ-TAP-BEGIN package-guest" --to "KWQ-TAP-END package-guest" "$out/console-$k.log"
done
# Each of the three kernels must have run its guest section.
((${#guest_ok[@]} == 3)) || fail=$((fail + 3 - ${#guest_ok[@]}))
say "took $((SECONDS - start)) s"
echo "$pass passed, $fail failed, $skip skipped"
[[ $fail -eq 0 && $pass -gt 0 ]]
