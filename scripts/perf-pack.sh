#!/usr/bin/env bash
# scripts/perf-pack.sh DIR: copy the host's perf (linux-perf, the same 6.1
# series as the guest kernel) and its libraries into DIR, with DIR/run
# starting it through their dynamic loader in the busybox guest. Fails
# (status 1) if the host has no usable /usr/bin/perf.
set -euo pipefail
dir=${1:?usage: scripts/perf-pack.sh DIR}
[[ -x /usr/bin/perf && $(head -c 4 /usr/bin/perf | tail -c 3) == ELF ]] || exit 1
mkdir -p "$dir/lib"
cp /usr/bin/perf "$dir/perf"
ldd /usr/bin/perf | awk '/=> \// { print $3 } /^\t\/.*ld-linux/ { print $1 }' |
	while read -r lib; do cp -L "$lib" "$dir/lib/"; done
loader=$(basename "$(ldd /usr/bin/perf | awk '/ld-linux/ { print $1 }')")
cat >"$dir/run" <<EOS
#!/bin/sh
d=\$(dirname "\$0")
exec "\$d/lib/$loader" --library-path "\$d/lib" "\$d/perf" "\$@"
EOS
chmod 755 "$dir/run"
