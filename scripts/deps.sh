#!/usr/bin/env bash
# Install the Debian packages needed to build kwq and test it in QEMU.
# Idempotent: asks apt only for what dpkg says is missing, and runs
# apt-get update only when something is. Silent when all is present.
#   scripts/deps.sh        what make check, make bench and make package-check
#                          need. Besides Debian 12's default kernel (6.1) it
#                          installs the newest 6.12 LTS kernel the archive has
#                          for bookworm, stock and PREEMPT_RT, with headers
#                          (linux-image-6.12.<n>+deb12-amd64, -rt-amd64): the
#                          version is asked of apt-cache, never written here.
#   scripts/deps.sh demo   only what make demo needs: Debian's default kernel
#                          image and headers, QEMU, busybox, a compiler
set -euo pipefail

usage() {
	echo "usage: scripts/deps.sh [demo]   (installs missing build/test packages; needs root)" >&2
	exit 2
}
demo=0
if [[ $# -eq 1 && $1 == demo ]]; then
	demo=1
elif [[ $# -ne 0 ]]; then
	usage
fi

# make demo: build kwq.ko, the sample module, kwqctl and one static helper
# for the stock kernel, pack them with busybox into an initramfs (cpio) and
# boot that kernel in QEMU.
demo_pkgs=(
	qemu-system-x86 busybox-static linux-image-amd64 linux-headers-amd64
	gcc make libc6-dev cpio
)

pkgs=(
	"${demo_pkgs[@]}"
	# debug kernel: source and what its build needs
	linux-source-6.1 linux-source-6.12 bc bison flex libelf-dev libssl-dev dwarves kmod xz-utils
	# static -m32 test programs, sparse, the static checks
	gcc-multilib perl sparse shellcheck
	# benchmark plots
	gnuplot-nox
	# the documentation's reStructuredText, parsed by scripts/lint.sh
	python3-docutils
)

# "install ok installed" is the only state that counts as present.
installed() { [[ $(dpkg-query -W -f '${Status}' "$1" 2>/dev/null || true) == "install ok installed" ]]; }

((demo == 0)) || pkgs=("${demo_pkgs[@]}")
missing=()
for p in "${pkgs[@]}"; do
	installed "$p" || missing+=("$p")
done

# The 6.12 kernels, stock and RT: present if some version has image and
# headers installed for both flavours (scripts/kernel.sh picks the newest).
# The demo does without them.
re612='^linux-image-6\.12\.[0-9]+\+deb12-amd64$'
have612=""
((demo == 0)) || have612=none
for img in $(dpkg-query -W -f '${Package}\n' 'linux-image-6.12.*' 2>/dev/null | grep -E "$re612" || true); do
	v=${img#linux-image-}
	v=${v%-amd64}
	if installed "linux-image-$v-amd64" && installed "linux-headers-$v-amd64" &&
		installed "linux-image-$v-rt-amd64" && installed "linux-headers-$v-rt-amd64"; then
		have612=$v
	fi
done

((${#missing[@]})) || [[ -z $have612 ]] || exit 0

sudo=()
((EUID == 0)) || sudo=(sudo)
export DEBIAN_FRONTEND=noninteractive
# Another apt may be running (package-check's, .ci/run starts it beside
# make check): wait for its lock instead of failing.
"${sudo[@]}" apt-get -o DPkg::Lock::Timeout=1200 update -qq
if [[ -z $have612 ]]; then
	v=$(apt-cache pkgnames linux-image-6.12. | grep -E "$re612" | sed 's/^linux-image-//; s/-amd64$//' |
		sort -V | tail -n 1)
	if [[ -z $v ]]; then
		echo "deps.sh: apt knows no linux-image-6.12.<n>+deb12-amd64 (is bookworm-security in sources.list?)" >&2
		exit 1
	fi
	missing+=("linux-image-$v-amd64" "linux-headers-$v-amd64" "linux-image-$v-rt-amd64" "linux-headers-$v-rt-amd64")
fi
echo "deps.sh: installing ${missing[*]}" >&2
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=1200 install -y -qq \
	--no-install-recommends "${missing[@]}"
