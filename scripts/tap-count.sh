#!/usr/bin/env bash
# Count TAP / KTAP (KUnit) results: prints "PASS=<n> FAIL=<n> SKIP=<n>".
#
# Counting rules (nesting is by indentation, as KUnit prints it):
#  - Only leaf results count. A result line is a summary, not a leaf, when a
#    deeper-indented block of results ended just before it: a suite line
#    ("ok 1 suite" after its cases) or a parameterised case (its parameter
#    results nest one level deeper and are what is counted).
#  - "# SKIP" (and "# TODO") directives count as skipped.
#  - A block whose plan "1..N" announced more results than it printed counts
#    the missing ones as failed (the kernel died mid-suite); so does a subtest
#    that never got its own result line, unless something under it failed.
#  - A summary that says "not ok" although none of its children failed counts
#    as one failure of its own (e.g. a suite whose init failed).
#  - "Bail out!" counts as one failure (a program that gave up before its
#    plan, which it prints last, so no plan shows what is missing).
# Printk timestamps ("[  1.234567] ") are stripped, so dmesg/console works.
set -euo pipefail

usage() {
	cat >&2 <<'EOF'
usage: scripts/tap-count.sh [--from STR --to STR] [FILE|-]

Counts leaf TAP/KTAP results in FILE (default stdin) and prints one line
PASS=<n> FAIL=<n> SKIP=<n>; each failing (or missing) test goes to stderr.
--from/--to: only count lines between a line containing STR (fixed string)
and the next line containing the --to STR (may repeat).
Exit: 0 if no failures and at least one result, 1 otherwise, 2 usage.
EOF
	exit 2
}

from="" to="" file=-
while [[ $# -gt 0 ]]; do
	case $1 in
	--from) from=${2:?}; shift 2 ;;
	--to) to=${2:?}; shift 2 ;;
	-h | --help) usage ;;
	-) file=-; shift ;;
	-*) usage ;;
	*) file=$1; shift ;;
	esac
done
[[ (-z $from && -z $to) || (-n $from && -n $to) ]] || usage
[[ $file == - || -r $file ]] || { echo "tap-count.sh: cannot read $file" >&2; exit 2; }

awk -v from="$from" -v to="$to" '
function fail_msg(what) { printf "tap-count: %s\n", what > "/dev/stderr" }
function path(   k, s) {
	s = ""
	for (k = 1; k <= top; k++) if (bname[k] != "") s = s (s == "" ? "" : "/") bname[k]
	return s == "" ? "" : s ": "
}
function push(d) {
	top++; bind[top] = d; bplan[top] = -1; bres[top] = 0; bname[top] = ""
	bver[top] = 0; bsub[top] = 0; bfail[top] = 0; pend_n[top] = 0; pend_fail[top] = 0
	pend_name[top] = ""
}
# Make sure the bottom of the stack is no deeper than indent d (KTAP read
# from a suite results file starts one level in).
function ensure_root(d,   k) {
	if (top > 0 && bind[1] <= d) return
	for (k = top; k >= 1; k--) {
		bind[k+1] = bind[k]; bplan[k+1] = bplan[k]; bres[k+1] = bres[k]; bname[k+1] = bname[k]
		bver[k+1] = bver[k]; bsub[k+1] = bsub[k]; bfail[k+1] = bfail[k]
		pend_n[k+1] = pend_n[k]; pend_fail[k+1] = pend_fail[k]; pend_name[k+1] = pend_name[k]
	}
	top++; bind[1] = d; bplan[1] = -1; bres[1] = 0; bname[1] = ""
	bver[1] = 0; bsub[1] = 0; bfail[1] = 0; pend_n[1] = 0; pend_fail[1] = 0
	pend_name[1] = ""
}
# Pop the top block; missing results fail; report its size to the parent.
# A child block closed without its summary line stands for one missing
# result here. It is a failure (a crash cut the subtest short) unless that
# subtree already has one, so one crash counts once.
function pop(   missing, orphan) {
	orphan = pend_n[top] > 0
	if (orphan && pend_fail[top] == 0) {
		FAIL++; pend_fail[top]++
		fail_msg(sprintf("not ok: %s%s: ended without its result line (crash?)", path(), pend_name[top]))
	}
	missing = bplan[top] - bres[top] - orphan
	if (missing < 0) missing = 0
	if (missing > 0) {
		FAIL += missing
		fail_msg(sprintf("not ok: %s%d of %d planned results missing (crash?)", path(), missing, bplan[top]))
	}
	if (top > 1) {
		pend_n[top-1] += bres[top] + missing + pend_n[top]
		pend_name[top-1] = bname[top]
		pend_fail[top-1] += bfail[top] + missing + pend_fail[top]
	}
	top--
}
function close_deeper(d) { while (top > 0 && bind[top] > d) pop() }
function close_all() { while (top > 0) pop() }

# A header line (version, subtest, plan) at indent d of kind k.
function header(d, k, arg,   fresh) {
	ensure_root(d)
	close_deeper(d)
	if (bind[top] < d) { push(d) }
	else {
		fresh = bres[top] == 0 && !(k == "ver" && bver[top]) && \
			!(k == "sub" && bsub[top]) && !(k == "plan" && bplan[top] >= 0)
		# A plan after results with none before it is a trailing plan.
		if (k == "plan" && bres[top] > 0 && bplan[top] < 0) fresh = 1
		if (!fresh) { pop(); push(d) }
	}
	if (k == "ver") bver[top] = 1
	if (k == "sub") { bsub[top] = 1; bname[top] = arg }
	if (k == "plan") bplan[top] = arg + 0
}

function result(d, body, line,   isok, lb, skip, summary, nfail) {
	ensure_root(d)
	close_deeper(d)
	if (bind[top] < d) push(d)
	bres[top]++
	isok = body !~ /^not ok/
	lb = tolower(body)
	skip = lb ~ /[ \t]#[ \t]*(skip|todo)([ \t:]|$)/
	summary = pend_n[top] > 0
	nfail = pend_fail[top]
	pend_n[top] = 0; pend_fail[top] = 0
	if (summary) {
		bfail[top] += nfail
		if (!isok && !skip && nfail == 0) {
			FAIL++; bfail[top]++
			fail_msg("not ok (no failing child): " path() line)
		}
		return
	}
	if (skip) SKIP++
	else if (isok) PASS++
	else { FAIL++; bfail[top]++; fail_msg("not ok: " path() line) }
}

BEGIN { inside = (from == ""); PASS = FAIL = SKIP = 0; top = 0 }
{
	sub(/\r$/, "")
	if (from != "") {
		if (!inside) { if (index($0, from)) inside = 1; next }
		if (index($0, to)) { close_all(); inside = 0; next }
	}
	line = $0
	sub(/^\[ *[0-9]+\.[0-9]+\]( \[ *[CT][0-9]+\])? /, "", line)
	s = line; gsub(/\t/, "        ", s)
	match(s, /^ */); d = RLENGTH
	body = substr(s, d + 1)
	if (body ~ /^K?TAP version [0-9]+/) header(d, "ver", "")
	else if (body ~ /^# Subtest: /) header(d, "sub", substr(body, 12))
	else if (body ~ /^1\.\.[0-9]+([ \t]|$)/) { split(substr(body, 4), a, /[^0-9]/); header(d, "plan", a[1]) }
	else if (body ~ /^(not )?ok([ \t]+[0-9]+)?([ \t]|$)/) result(d, body, body)
	# A program that gave up before its plan: the rest of it never ran.
	else if (body ~ /^Bail out!/) { FAIL++; fail_msg("bail out: " path() body) }
}
END {
	close_all()
	printf "PASS=%d FAIL=%d SKIP=%d\n", PASS, FAIL, SKIP
	exit (FAIL == 0 && PASS + SKIP > 0) ? 0 : 1
}' "$file"
