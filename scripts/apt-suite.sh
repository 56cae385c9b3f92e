# shellcheck shell=bash
# Sourced by scripts/go.sh and scripts/client-go.sh: apt sources of other
# Debian suites, made from this machine's own bookworm source.

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
