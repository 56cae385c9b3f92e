#!/usr/bin/env bash
# `make demo`: install what is missing of the demo's packages (only
# those: scripts/deps.sh demo), build kwq for Debian's stock kernel, boot
# it under QEMU and run the narrated demo in scripts/guest/demo.sh with
# kwqctl.
set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$top"
scripts/deps.sh demo
echo "building kwq for the stock kernel..." >&2
guest=$(scripts/build.sh --demo stock)
eval "$(scripts/kernel.sh stock)"
echo "booting $KWQ_KVER under QEMU (TCG); this takes about 10 s..." >&2
mkdir -p build/demo
exec scripts/vm-run.sh --one-thread --kernel "$KWQ_KERNEL" --files "$guest" --timeout 300 \
	--log build/demo/console.log -- "$guest/demo.sh"
