# shellcheck shell=bash
# SPDX-License-Identifier: GPL-2.0
# Sourced, not run. bookworm_uri prints the URI of the first apt source of
# this machine that serves Debian's "bookworm" suite (deb822 or one-line
# style). Other suites (sid, trixie, bookworm-backports) are fetched from
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
