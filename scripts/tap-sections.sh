#!/usr/bin/env bash
# The KWQ-TAP-BEGIN/END sections of a guest's output (scripts/guest/lib.sh).
#   scripts/tap-sections.sh FILE            the sections' names, in order
#   scripts/tap-sections.sh FILE NAME       the lines of section NAME
#   scripts/tap-sections.sh --took FILE     "SECONDS NAME" of each section's
#                                           "# took N s" line (scripts/guest/lib.sh)
# A name is [A-Za-z0-9._+-] only. The guest's lines share the console with
# the kernel's, which can print a message right after a marker, on the same
# line ("KWQ-TAP-BEGIN timens-32bit[   77.711167] hrtimer: ..."): that text
# is not part of the name, and the marker still counts.
set -euo pipefail

# What a name is made of: the one rule every mode below reads names by.
chars='A-Za-z0-9._+-'

if [[ $# -lt 1 || $# -gt 2 ]]; then
	echo "usage: scripts/tap-sections.sh FILE [NAME] | --took FILE" >&2
	exit 2
fi
if [[ $1 == --took ]]; then
	[[ $# -eq 2 ]] || { echo "usage: scripts/tap-sections.sh --took FILE" >&2; exit 2; }
	awk -v c="$chars" '
		/^KWQ-TAP-BEGIN / { name = substr($0, 15); sub("[^" c "].*", "", name) }
		/^# took [0-9.]+ s$/ { print $3, name }' "$2"
	exit 0
fi
if [[ $# -eq 1 ]]; then
	sed -n "s/^KWQ-TAP-BEGIN \([$chars]*\).*/\1/p" "$1"
	exit 0
fi
awk -v s="$2" -v c="$chars" '
	function marks(line, m) {
		return substr(line, 1, length(m)) == m &&
		       substr(line, length(m) + 1, 1) !~ ("[" c "]")
	}
	marks($0, "KWQ-TAP-BEGIN " s) { on = 1; next }
	marks($0, "KWQ-TAP-END " s) { on = 0 }
	on' "$1"
