# shellcheck shell=bash
# Sourced by scripts/go.sh, scripts/client-go.sh, scripts/sid-root.sh and
# scripts/package-check.sh: apt sources of other Debian suites, made from
# this machine's own bookworm source.

# apt_suite_source SUITE BASE: writes BASE.sources (deb822) or BASE.list
# (one-line style), an apt source of SUITE with the URI and keyring of the
# machine's bookworm source; fails if there is none.
apt_suite_source() {
	local suite=$1 base=$2
	if [[ -f /etc/apt/sources.list.d/debian.sources ]]; then
		awk -v suite="$suite" 'BEGIN { RS = ""; FS = "\n" }
		{
			uris = ""; suites = ""; signed = ""; types = ""
			for (i = 1; i <= NF; i++) {
				if ($i ~ /^URIs:/) uris = $i
				if ($i ~ /^Suites:/) suites = $i
				if ($i ~ /^Signed-By:/) signed = $i
				if ($i ~ /^Types:/) types = $i
			}
			if (types ~ /[ \t]deb([ \t]|$)/ && suites ~ /[ \t]bookworm([ \t]|$)/ && !done) {
				print "Types: deb"; print uris; print "Suites: " suite
				print "Components: main"; if (signed != "") print signed
				done = 1
			}
		}' /etc/apt/sources.list.d/debian.sources >"$base.sources.tmp"
		[[ -s $base.sources.tmp ]] && mv "$base.sources.tmp" "$base.sources" && return 0
		rm -f "$base.sources.tmp"
	fi
	if [[ -f /etc/apt/sources.list ]]; then
		awk -v suite="$suite" '$1 == "deb" && $0 ~ /[ \t]bookworm[ \t]/ && !done {
			for (i = 1; i <= NF; i++) if ($i == "bookworm") $i = suite
			print; done = 1 }' /etc/apt/sources.list >"$base.list.tmp"
		[[ -s $base.list.tmp ]] && mv "$base.list.tmp" "$base.list" && return 0
		rm -f "$base.list.tmp"
	fi
	printf 'no bookworm apt source to derive %s from\n' "$suite" >&2
	return 1
}

# bookworm_uri prints the URI of the first apt source of this machine
# that serves Debian's "bookworm" suite (deb822 or one-line style), for a
# debootstrap of another suite. Other suites (sid, trixie, bookworm-backports) are fetched from
# the same URI, so no archive host name is ever written into the repo.
bookworm_uri() {
	local f
	for f in /etc/apt/sources.list.d/*.sources; do
		[[ -r $f ]] || continue
		awk 'BEGIN { RS = ""; FS = "\n" }
		     /(^|\n)Suites:[^\n]*[ \t]bookworm([ \t]|\n|$)/ && /(^|\n)Types:[^\n]*deb([ \t]|\n|$)/ {
			for (i = 1; i <= NF; i++) if ($i ~ /^URIs:/) { split($i, u, /[ \t]+/); print u[2]; exit }
		     }' "$f"
	done
	if [[ -r /etc/apt/sources.list ]]; then
		awk '$1 == "deb" && $3 == "bookworm" { print $2 }' /etc/apt/sources.list
	fi
}
