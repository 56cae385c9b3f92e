#!/usr/bin/env bash
# make deb: build kwq's Debian packages (kwq-dkms, libkwq0, libkwq-dev,
# kwq-tools) with dpkg-buildpackage from a copy of the tree, so that the
# tree itself stays clean and the .deb files land in OUTDIR.
# Installs the build dependencies (debhelper, dh-dkms, ...) when missing.
set -euo pipefail

usage() {
	cat >&2 <<'EOF'
usage: scripts/deb.sh [--next VERSION] [OUTDIR]

Builds the binary packages into OUTDIR (default build/deb): the tree's
tracked and untracked, not ignored files are copied to OUTDIR/src and
built there with dpkg-buildpackage (source and binaries).
  --next VERSION  put a changelog entry for VERSION on top first (used by
                  scripts/package-check.sh to test an upgrade)
EOF
	exit 2
}

next=""
while [[ $# -gt 0 ]]; do
	case $1 in
	--next) [[ $# -ge 2 ]] || usage; next=$2; shift 2 ;;
	-h | --help) usage ;;
	-*) usage ;;
	*) break ;;
	esac
done
[[ $# -le 1 ]] || usage
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=$(mkdir -p "${1:-$top/build/deb}" && cd "${1:-$top/build/deb}" && pwd)
say() { printf 'deb.sh: %s\n' "$*" >&2; }

# Build dependencies (debian/control's Build-Depends and the tools;
# dpkg-buildpackage also checks for build-essential itself).
pkgs=(build-essential debhelper dh-dkms dpkg-dev fakeroot make gcc)
missing=()
for p in "${pkgs[@]}"; do
	status=$(dpkg-query -W -f '${Status}' "$p" 2>/dev/null || true)
	[[ $status == "install ok installed" ]] || missing+=("$p")
done
if ((${#missing[@]})); then
	((EUID == 0)) || { say "missing ${missing[*]}: apt-get install them (as root)"; exit 1; }
	say "installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get -o DPkg::Lock::Timeout=1200 update -qq
	apt-get -o DPkg::Lock::Timeout=1200 install -y -qq --no-install-recommends "${missing[@]}" >&2
fi

# The source: what git tracks plus untracked files it does not ignore (a
# tarball without .git: everything but build/).
src=$out/src
rm -rf "$src"
mkdir -p "$src"
cd "$top"
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	git ls-files -z --cached --others --exclude-standard
else
	find . -path ./build -prune -o -type f -print0
fi | while IFS= read -r -d '' f; do
	[[ -f $f ]] && printf '%s\0' "$f"
done | xargs -0 cp --parents -t "$src"

if [[ -n $next ]]; then
	{
		printf 'kwq (%s) unstable; urgency=medium\n\n  * Rebuild for an upgrade test.\n\n' "$next"
		printf ' -- %s  %s\n\n' "$(dpkg-parsechangelog -l debian/changelog -S Maintainer)" "$(date -R)"
		cat debian/changelog
	} >"$src/debian/changelog"
fi

version=$(dpkg-parsechangelog -l "$src/debian/changelog" -S Version)
rm -f "$out"/*.deb "$out"/*.changes "$out"/*.buildinfo "$out"/*.dsc "$out"/*.tar.*
say "building kwq $version in $src"
(cd "$src" && dpkg-buildpackage -us -uc -j2)
# dpkg-buildpackage writes next to the source directory.
ls "$out"/*_"$version"_*.deb
