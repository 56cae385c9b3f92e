#!/usr/bin/env bash
# Install the Debian packages needed to build kwq and test it in QEMU.
# Idempotent: asks apt only for what dpkg says is missing, and runs
# apt-get update only when something is. Silent when all is present.
set -euo pipefail

if [[ $# -ne 0 ]]; then
	echo "usage: scripts/deps.sh   (installs missing build/test packages; needs root)" >&2
	exit 2
fi

pkgs=(
	# test VM: emulator, initramfs userland, stock kernel + headers
	qemu-system-x86 busybox-static linux-image-amd64 linux-headers-amd64
	# debug kernel: source and what its build needs
	linux-source-6.1 bc bison flex libelf-dev libssl-dev dwarves cpio kmod xz-utils
	# compilers and tools: modules, static (-m32) test programs, sparse
	gcc gcc-multilib make perl sparse shellcheck
	# benchmark plots
	gnuplot-nox
)

missing=()
for p in "${pkgs[@]}"; do
	# "install ok installed" is the only state that counts as present.
	status=$(dpkg-query -W -f '${Status}' "$p" 2>/dev/null || true)
	[[ $status == "install ok installed" ]] || missing+=("$p")
done

((${#missing[@]})) || exit 0

echo "deps.sh: installing ${missing[*]}" >&2
sudo=()
((EUID == 0)) || sudo=(sudo)
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
