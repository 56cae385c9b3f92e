#!/usr/bin/env bash
# Scan a guest console log (including its dmesg dump) for kernel splats:
# warnings, BUGs, sanitizer (KASAN, KCSAN, UBSAN) and lockdep reports
# (including PREEMPT_RT's "Invalid wait context" and sleeping in atomic
# context), kmemleak leaks, oopses, panics, hung tasks, RCU stalls, list and
# debugobjects corruption, any stack trace, and any checker that switched
# itself off (lockdep, kmemleak, KASAN, debugobjects), since everything
# after that would run unchecked.
# Exit 0 when clean, 1 when something was found (reported on stdout), 2 on
# usage errors.
set -euo pipefail

usage() {
	cat >&2 <<'EOF'
usage: scripts/check-console.sh LOG

Prints each kernel problem line of LOG with context, prefixed "KWQ-SPLAT",
and exits 1 if there is any; exits 0 on a clean log.
Kernel-log patterns only match after a printk timestamp "[  12.345678] "
(vm-run.sh boots with printk.time=1), so text a test prints itself cannot
trip them. Context after a hit runs to the end of the report, at most KWQ_SPLAT_CONTEXT
(default 40) lines.
EOF
	exit 2
}

[[ $# -eq 1 && $1 != -* ]] || usage
log=$1
[[ -r $log ]] || { echo "check-console.sh: cannot read $log" >&2; exit 2; }

# printk timestamp, optionally followed by a caller id ([T123] / [C1]).
ts='\[ *[0-9]+\.[0-9]+\]( \[ *[CT][0-9]+\])? '

# Each entry: "name|ERE". The ERE is matched anywhere in a line (a kernel
# line can start mid-line on the console when output interleaves). The first
# entry that matches names the hit, so specific reports come before the
# generic WARNING:/BUG: headlines they print.
patterns=(
	# A checker that turned itself off: the rest of the run is unchecked.
	# lockdep prints these at KERN_DEBUG/ERR (seen in the dmesg dump).
	"lockdep-off|${ts}.*(INFO: trying to register non-static key|turning off the locking correctness validator|INFO: lockdep is turned off|Disabling lock debugging due to kernel taint)"
	"kmemleak-off|${ts}kmemleak: .*(detector disabled|Kmemleak disabled)"
	"kasan-off|${ts}.*(KASAN|kasan).*[Dd]isabl"
	"debugobjects-off|${ts}ODEBUG: .*([Oo]ut of memory|disabled)"
	"kasan|${ts}(BUG: )?KASAN: "
	"kcsan|${ts}BUG: KCSAN: "
	"sleep-in-atomic|${ts}BUG: (sleeping function called from invalid context|scheduling while atomic)"
	"lock-nesting|${ts}\\[ BUG: Invalid wait context \\]"
	"ubsan|${ts}UBSAN: "
	"lockdep|${ts}.*(possible (recursive locking|circular locking dependency|irq lock inversion)|inconsistent lock state|possible .* deadlock|\\*\\*\\* DEADLOCK \\*\\*\\*|\\[ BUG: )"
	"kmemleak|${ts}kmemleak: .*(suspected memory leak|[Cc]annot|[Ff]ailed|disabled|[Ee]rror|pool empty)"
	"list-corruption|${ts}.*list_(add|del) corruption"
	"debugobjects|${ts}ODEBUG: "
	"hung-task|${ts}INFO: task .* blocked for more than "
	"rcu-stall|${ts}rcu: INFO: .*(detected stall|self-detected stall)"
	"kernel-bug|${ts}kernel BUG at "
	"slub|${ts}BUG [^ ]+ \\([^)]*\\): "
	"warning|${ts}WARNING: "
	"bug|${ts}BUG: "
	"oops|${ts}Oops: "
	"gpf|${ts}general protection fault"
	"panic|${ts}Kernel panic - "
	# Any stack dump not caught above (dump_stack(), sysrq, a report this
	# table does not know yet).
	"stack-trace|${ts}.*Call Trace:"
	# kmemleak's report format, also when a test cats /sys/kernel/debug/kmemleak
	"kmemleak-object|unreferenced object 0x[0-9a-f]+ \\(size [0-9]+\\)"
)

printf '%s\n' "${patterns[@]}" | awk -v logf="$log" -v after="${KWQ_SPLAT_CONTEXT:-40}" '
BEGIN { FS = "\n" }
# First input: the pattern table.
FNR == NR {
	i = index($0, "|")
	np++; pname[np] = substr($0, 1, i - 1); pre[np] = substr($0, i + 1)
	next
}
END {
	n = 0
	while ((getline line < logf) > 0) { sub(/\r$/, "", line); L[++n] = line }
	close(logf)
	hits = 0; shown = 0; hi = 0
	for (i = 1; i <= n; i++) {
		for (p = 1; p <= np; p++) {
			if (L[i] !~ pre[p]) continue
			# Report a message once even though the console and the
			# dmesg dump both carry it: key on the text after the stamp.
			key = L[i]; sub(/.*\[ *[0-9]+\.[0-9]+\]( \[ *[CT][0-9]+\])? /, "", key)
			hits++
			if (key in seen) break
			seen[key] = 1
			if (++shown > 20) break
			if (shown == 1) printf "KWQ-SPLAT: kernel problems in %s\n", logf
			printf "KWQ-SPLAT: [%s] line %d: %s\n", pname[p], i, L[i]
			# Already shown as context of the previous hit: say so only.
			if (i <= hi) break
			lo = i - 1; if (lo < 1) lo = 1
			# Context runs to the end of the report (WARN trailer, KASAN /
			# UBSAN / kmemleak separators, our markers), at most "after" lines.
			for (hi = i + 1; hi < n && hi < i + after; hi++)
				if (L[hi] ~ /---\[ end trace|^KWQ-|\] =====+$|^$/) break
			if (hi > n) hi = n
			for (j = lo; j <= hi; j++)
				# register dumps and opcode bytes are noise here
				if (j == i || L[j] !~ /\] +(R[A-HJ-Z0-9][A-Z0-9]*|FS|CS|CR2|DR[0-9]|Code): /)
					printf "KWQ-SPLAT| %s%6d | %s\n", (j == i ? ">" : " "), j, L[j]
			break
		}
	}
	if (hits) {
		printf "KWQ-SPLAT: %d problem line(s), %d distinct%s\n", hits, (shown > 20 ? 20 : shown), (shown > 20 ? " shown (more omitted)" : "")
		exit 1
	}
}' /dev/stdin
