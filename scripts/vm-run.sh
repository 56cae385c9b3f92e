#!/usr/bin/env bash
# Boot a kernel in QEMU with a busybox initramfs, run one guest script in
# it, and turn the console log into an exit status:
#   the guest script's status   when the console is clean
#   90                          kernel splat found (scripts/check-console.sh)
#   124                         no KWQ-EXIT marker (timeout or guest died),
#                               or no KWQ-DMESG-END after it (dump cut short)
#   125                         QEMU did not start / usage errors are 2
# A kernel that dies while it boots, before the guest script starts (so
# before any kwq code is loaded), is booted again, up to three boots in
# all; each failed boot is said on stderr and its log kept beside the log.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

usage() {
	cat >&2 <<'EOF'
usage: scripts/vm-run.sh [--kernel IMG] [--files DIR] [--mem MB] [--smp N]
                         [--timeout SEC] [--kvm | --icount | --one-thread]
                         [--log FILE] [--append "extra cmdline"] -- GUEST_SCRIPT

  --kernel IMG    kernel image (default: $KWQ_KERNEL, see scripts/kernel.sh)
  --files DIR     copied to /kwq in the guest; DIR/bin is on PATH
  --mem MB        guest memory (default 1024)       --smp N  vCPUs (default 2)
  --timeout SEC   hard limit for the whole VM run (default 600)
  --kvm           use -accel kvm instead of TCG (hangs on some hosts)
  --icount        TCG with -icount shift=0: guest time counts instructions
  --one-thread    TCG with every vCPU on one host thread (thread=single)
  --log FILE      full console log (default: a kept /tmp/kwq-console.*.log)
  --append STR    extra kernel command line

Prints what the guest script printed (everything between its start and
KWQ-EXIT; KWQ_VERBOSE=1 streams the whole console to stderr instead).
Exit: the guest script's status; 90 kernel splat in the log; 124 timeout or
guest died without KWQ-EXIT; 125 QEMU failed to start; 2 usage. A kernel
that dies before the guest script starts is booted again (three boots in
all), its log kept as LOG.boot-N.
EOF
	exit 2
}

say() { printf 'vm-run: %s\n' "$*" >&2; }

kernel=${KWQ_KERNEL:-} files="" mem=1024 smp=2 tmo=600 kvm=0 icount=0 one=0 log="" append=""
# Options taking a value must have one (an empty one only for --append).
need() { [[ $2 -ge 2 ]] || { say "$1 needs a value"; usage; }; }
while [[ $# -gt 0 ]]; do
	case $1 in
	--kernel) need "$1" $#; kernel=$2; shift 2 ;;
	--files) need "$1" $#; files=$2; shift 2 ;;
	--mem) need "$1" $#; mem=$2; shift 2 ;;
	--smp) need "$1" $#; smp=$2; shift 2 ;;
	--timeout) need "$1" $#; tmo=$2; shift 2 ;;
	--kvm) kvm=1; shift ;;
	--icount) icount=1; shift ;;
	--one-thread) one=1; shift ;;
	--log) need "$1" $#; log=$2; shift 2 ;;
	--append) need "$1" $#; append=$2; shift 2 ;;
	--) shift; break ;;
	-h | --help) usage ;;
	*) say "unknown argument: $1"; usage ;;
	esac
done
[[ $# -eq 1 ]] || usage
script=$1
[[ -f $script ]] || { say "no such guest script: $script"; exit 2; }
[[ -z $files || -d $files ]] || { say "not a directory: $files"; exit 2; }
[[ -n $kernel ]] || { say "no kernel: pass --kernel or eval \"\$(scripts/kernel.sh stock|debug)\""; exit 2; }
[[ -r $kernel ]] || { say "cannot read kernel image $kernel"; exit 2; }
for n in "$mem" "$smp" "$tmo"; do
	[[ $n =~ ^[1-9][0-9]*$ ]] || { say "not a positive number: $n"; exit 2; }
done

work=$(mktemp -d "${TMPDIR:-/tmp}/kwq-vm.XXXXXX")
trap 'rm -rf "$work"' EXIT
if [[ -z $files ]]; then
	files=$work/empty
	mkdir "$files"
fi
[[ -n $log ]] || log=$(mktemp "${TMPDIR:-/tmp}/kwq-console.XXXXXX.log")
: >"$log"

"$here/mkinitramfs.sh" "$work/initramfs.cpio" "$files" "$script"

if ((kvm)); then
	accel=(-accel kvm -cpu host)
elif ((icount)); then
	# The guest's clock counts instructions: 1 ns per instruction, no
	# sleeping when idle. Timings become instruction counts, the same
	# from run to run whatever else the host is doing.
	accel=(-accel tcg -icount "shift=0,sleep=off")
elif ((one)); then
	# Every vCPU on one host thread, taking turns. QEMU 7.2's multi-threaded
	# TCG can run a stale copy of code another vCPU is patching: Debian's
	# 6.12 kernels then die at an int3 they did not plant (seen while they
	# boot). One thread cannot race with itself, and it spends less host
	# CPU; but the vCPUs no longer run at the same instant, which KCSAN
	# needs, so the debug kernels keep one thread per vCPU.
	accel=(-accel 'tcg,thread=single')
else
	accel=(-accel tcg)
fi
# Oopses stay non-fatal so the run reaches the dmesg dump; panics reboot at
# once, and -no-reboot turns that into QEMU exiting. printk.time=1 is what
# check-console.sh keys kernel lines on; a big log buffer keeps boot messages
# in the dmesg dump; kmemleak.verbose prints leaks found by a scan.
# no_timer_check: on a loaded host TCG can miss the IO-APIC timer check at
# boot, and Debian's 6.1 then panics ("IO-APIC + timer doesn't work!").
cmdline="console=ttyS0 panic=-1 loglevel=5 printk.time=1 log_buf_len=8M kmemleak.verbose=1 no_timer_check${append:+ $append}"

# Console filter: writes every line to the log and prints the guest script's
# lines live. A bash read loop, because awk may buffer a pipe's input.
console_filter() {
	local line inguest=0 begun=0 up
	while IFS= read -r line || [[ -n $line ]]; do
		line=${line%$'\r'}
		printf '%s\n' "$line" >>"$log"
		[[ ${KWQ_VERBOSE:-0} != 1 ]] || printf '%s\n' "$line" >&2
		[[ $line != *KWQ-EXIT=[0-9]* ]] || inguest=0
		if ((inguest)) && [[ ${KWQ_VERBOSE:-0} != 1 ]]; then
			printf '%s\n' "$line"
		fi
		if ((!begun)) && [[ $line == KWQ-GUEST-BEGIN* ]]; then
			begun=1 inguest=1 up=${line##*uptime=}
			say "guest script started after $(elapsed) s wall ($up s guest uptime)"
		fi
	done
}
elapsed() { awk -v s="$start" -v e="$EPOCHREALTIME" 'BEGIN { printf "%.1f", e - s }'; }

start=$EPOCHREALTIME
boot=1
while :; do
	set +e
	timeout --kill-after=10 "$tmo" qemu-system-x86_64 "${accel[@]}" \
		-nographic -no-reboot -nic none -m "$mem" -smp "$smp" \
		-kernel "$kernel" -initrd "$work/initramfs.cpio" -append "$cmdline" \
		</dev/null 2>&1 | console_filter
	qrc=${PIPESTATUS[0]}
	set -e
	# The kernel printed something and stopped (not a timeout) before the
	# guest script began, so before kwq.ko could be loaded: boot again.
	if ((boot < 3)) && ! grep -q 'KWQ-GUEST-BEGIN' "$log" &&
		grep -qE '\[ *[0-9]+\.[0-9]+\] ' "$log" && ((qrc != 124 && qrc != 137)); then
		cp "$log" "$log.boot-$boot"
		say "the kernel stopped while booting (QEMU status $qrc), before the guest script started; booting again ($((boot + 1)) of 3); that boot's log: $log.boot-$boot"
		grep -m 3 -E 'Oops|Kernel panic|BUG' "$log" | sed 's/^/vm-run:   /' >&2 || true
		: >"$log"
		boot=$((boot + 1))
		continue
	fi
	break
done
elapsed=$(elapsed)

marker=$(grep -o -m1 -E 'KWQ-EXIT=[0-9]+' "$log" || true)

# The kernel ran if it printed anything (loglevel=5 hides its banner).
if [[ -z $marker ]] && ! grep -qE '\[ *[0-9]+\.[0-9]+\] |KWQ-GUEST-BEGIN' "$log" &&
	((qrc != 124 && qrc != 137)); then
	say "QEMU failed to start (status $qrc); console log $log:"
	tail -n 20 "$log" >&2
	exit 125
fi

if ! "$here/check-console.sh" "$log" >&2; then
	say "FAIL: kernel splat in the console log (exit 90); ${marker:-no KWQ-EXIT}; ${elapsed}s; log: $log"
	exit 90
fi

if [[ -z $marker ]]; then
	if ((qrc == 124 || qrc == 137)); then
		say "FAIL: timed out after ${tmo}s without KWQ-EXIT (exit 124); log: $log"
		tail -n 20 "$log" >&2
	else
		say "FAIL: guest stopped without KWQ-EXIT (QEMU status $qrc; crash or reboot?) (exit 124); log: $log"
		tail -n 20 "$log" >&2
	fi
	exit 124
fi

# The console scan above needs the whole kernel log, which the guest dumps
# after KWQ-EXIT (some checkers report only at KERN_DEBUG, below the
# console's loglevel): a dump cut short is a failure, not a clean console.
if ! grep -q '^KWQ-DMESG-END' "$log"; then
	say "FAIL: KWQ-EXIT but no KWQ-DMESG-END: the kernel log dump was cut short (QEMU status $qrc) (exit 124); log: $log"
	tail -n 5 "$log" >&2
	exit 124
fi

rc=${marker#KWQ-EXIT=}
say "guest script exit status $rc; ${elapsed}s total; log: $log"
exit "$rc"
