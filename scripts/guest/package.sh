# shellcheck shell=sh
# Guest half of scripts/package-check.sh (busybox sh, cwd /kwq): load the
# kwq.ko DKMS built in the throwaway root, drive it with the packaged
# (dynamically linked) kwqctl and libkwq(3)'s example, and print kwqctl's
# JSON between KWQ-JSON-BEGIN/END markers for the host to validate.
# shellcheck source=scripts/guest/lib.sh
. ./lib.sh

# The packaged programs run through the throwaway root's loader and libc.
run() { # PROGRAM ARGS...
	p=$1
	shift
	/kwq/lib/ld-linux-x86-64.so.2 --library-path /kwq/lib "/kwq/bin/$p" "$@"
}
# tap_cmd DESCRIPTION EXPECTED-OUTPUT COMMAND...: status 0 and that output.
tap_cmd() {
	desc=$1 want=$2
	shift 2
	got=$("$@" 2>&1)
	st=$?
	[ "$st" -eq 0 ] && [ "$got" = "$want" ]
	r=$?
	[ "$r" -eq 0 ] || echo "# status $st, output: $got (wanted: $want)"
	tap "$r" "$desc"
}

tap_begin package-guest
# The package's udev rule, applied by the root's own udevd: /etc/group
# gets the kwq group as the package's postinst created it.
mkdir -p /etc/udev/rules.d /run/udev
cp ./60-kwq.rules /etc/udev/rules.d/
echo "root:x:0:0:root:/root:/bin/sh" >/etc/passwd
{ echo "root:x:0:"; cat ./group; } >/etc/group
run systemd-udevd --daemon >/tmp/udevd.log 2>&1
tap $? "systemd-udevd (from the throwaway root) started"
insmod ./kwq.ko
tap $? "insmod of the DKMS-built kwq.ko on $(uname -r)"
# Its GNU build-id note, as the kernel shows it, against the file's.
loaded=$(od -An -tx1 -v /sys/module/kwq/notes/.note.gnu.build-id 2>/dev/null | tr -d ' \n')
[ -n "$loaded" ] && [ "$loaded" = "$(cat ./build-id)" ]
tap $? "the loaded module is the DKMS-built one (build-id note $loaded)"
[ -c /dev/kwq ]
tap $? "/dev/kwq exists"
run udevadm settle --timeout=30
perm=$(stat -c '%a %U:%G' /dev/kwq)
[ "$perm" = "660 root:kwq" ]
tap $? "udev made /dev/kwq 0660 root:kwq (got: $perm)"

v=$(run kwqctl version 2>&1)
case $v in "abi 1, key_max 512 bytes, name_max 64, features 0x"*) r=0 ;; *) r=1 ;; esac
[ "$r" -eq 0 ] || echo "# got: $v"
tap "$r" "kwqctl version"
tap_cmd "kwqctl create pkg" "" run kwqctl create pkg --mode 0660
tap_cmd "kwqctl add: queued, queued, duplicate" "default/web: queued
default/db: queued
default/web: duplicate" run kwqctl add pkg default/web default/db default/web
tap_cmd "kwqctl get --done takes the first key" "default/web" run kwqctl get pkg --done
tap_cmd "kwqctl len" "1" run kwqctl len pkg

# JSON_SECTION NAME COMMAND...: the output between markers, then its status.
json_section() {
	name=$1
	shift
	echo "KWQ-JSON-BEGIN $name"
	"$@"
	st=$?
	echo "KWQ-JSON-END $name"
	tap "$st" "kwqctl $name --json exits 0"
}
json_section list run kwqctl --json list
json_section stats run kwqctl stats pkg --json
json_section metrics run kwqctl metrics --json pkg

# libkwq(3)'s example, built with pkg-config in the root: shared and static.
tap_cmd "libkwq(3) example (shared libkwq.so.0)" "ns/web" run example
tap_cmd "libkwq(3) example (static libkwq.a)" "ns/web" ./bin/example-static
tap_cmd "kwqctl list after the example destroyed its queue" "pkg" run kwqctl list

tap_cmd "kwqctl destroy pkg" "" run kwqctl destroy pkg
rmmod kwq
tap $? "rmmod kwq"
tap_end
