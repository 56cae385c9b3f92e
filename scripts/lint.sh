#!/usr/bin/env bash
# Static checks of kwq's sources, printed as TAP (one line per check):
# checkpatch --strict on every kernel source, a W=1 build with sparse
# (C=2) and no warning, kernel-doc -v with no warning on every
# header and exported function, and the userspace build with -Werror;
# no call loop among module/'s files beyond scripts/layers.baseline.
# (The branches of module/kwq_compat.h for kernels after 6.12 are built
# against sid's 7.x headers by make check, with W=1 and sparse.)
# Usage: scripts/lint.sh [KDIR]   (default: the stock headers)
set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cache=${KWQ_CACHE:-/var/cache/kwq}
kdir=${1:-}
if [[ -z $kdir ]]; then
	eval "$("$top/scripts/kernel.sh" stock)"
	kdir=$KWQ_KDIR
fi

n=0 failed=0
result() { # result STATUS DESCRIPTION [DETAILS-FILE]
	n=$((n + 1))
	if [[ $1 -eq 0 ]]; then
		echo "ok $n - $2"
	else
		failed=$((failed + 1))
		echo "not ok $n - $2"
		[[ -n ${3:-} && -s $3 ]] && sed 's/^/#   /' "$3" | head -40
	fi
	return 0
}

# checkpatch.pl needs its data files beside it; take them from the
# Debian source tarball once (the headers package does not ship them).
checkpatch_dir() {
	local tarball=/usr/src/linux-source-6.1.tar.xz ver dir
	ver=$(dpkg-query -W -f '${Version}' linux-source-6.1)
	dir=$cache/checkpatch-$ver
	if [[ ! -x $dir/scripts/checkpatch.pl ]]; then
		mkdir -p "$dir.tmp"
		tar -xJf "$tarball" -C "$dir.tmp" --strip-components=1 \
			linux-source-6.1/scripts/checkpatch.pl \
			linux-source-6.1/scripts/spelling.txt \
			linux-source-6.1/scripts/const_structs.checkpatch \
			linux-source-6.1/scripts/kernel-doc
		rm -rf "$dir" && mv "$dir.tmp" "$dir"
	fi
	echo "$dir"
}

kernel_sources() {
	# Not the *.mod.c files kbuild generates beside an in-tree build.
	(cd "$top" && for f in module/*.[ch] kunit/*.[ch] uapi/linux/*.h samples/*.c bench/*.c \
		scripts/plant/*.c; do
		# Kernel sources only: the benchmark's user program is not one.
		[[ $f == *.mod.c || $f == bench/kwq_bench.c ]] || echo "$f"
	done)
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp_dir=$(checkpatch_dir)

# One checkpatch run over every file (a run per file costs twice the
# time, mostly perl starting up); each file's result is the lines of
# --terse output that name it.
sources=$(kernel_sources)
status=0
# shellcheck disable=SC2086 # $sources: file names without spaces
(cd "$top" && perl "$cp_dir/scripts/checkpatch.pl" --no-tree --strict --terse \
	--show-types -f $sources) >"$tmp/cp-all" 2>&1 || status=$?
for f in $sources; do
	awk -v f="$f:" 'index($0, f) == 1' "$tmp/cp-all" >"$tmp/out"
	result "$([[ -s $tmp/out ]] && echo 1 || echo 0)" "checkpatch --strict $f" "$tmp/out"
done
# What names no file (checkpatch dying, say) or a failure with nothing
# said fails on its own.
awk -v files="$sources" 'BEGIN { n = split(files, f, /[ \n]+/) }
	/^total: / { next }
	{ for (i = 1; i <= n; i++) if (f[i] != "" && index($0, f[i] ":") == 1) next; print }' \
	"$tmp/cp-all" >"$tmp/out"
((status == 0)) || grep -q -v '^total: ' "$tmp/cp-all" || echo "checkpatch exited $status" >>"$tmp/out"
result "$([[ -s $tmp/out ]] && echo 1 || echo 0)" "checkpatch ran over all $(wc -w <<<"$sources") files" "$tmp/out"

# Every header and every file that exports symbols: full kernel-doc.
for f in module/kwq.h module/kwq_internal.h module/kwq_pool.h uapi/linux/kwq.h \
	 $(cd "$top" && grep -l EXPORT_SYMBOL module/*.c); do
	status=0
	(cd "$top" && perl "$cp_dir/scripts/kernel-doc" -v -none -Werror "$f") \
		>"$tmp/out" 2>&1 || status=1
	result $status "kernel-doc -v $f" "$tmp/out"
done

# User access windows: no read of user memory inside a window opened for
# writing only (user_write_access_begin()), no write inside one opened for
# reading only. x86 opens both directions at once, so no x86 test can see
# it; architectures whose protection opens each direction on its own
# (powerpc's KUAP) fault there. A window runs from its begin to the next
# end, in source order, which is how kwq writes them.
awk '
	FNR == 1 { mode = "" }
	/user_write_access_begin\(/ { mode = "w" }
	/user_read_access_begin\(/ { mode = "r" }
	/[^_]user_access_begin\(/ { mode = "rw" }
	mode == "w" && /unsafe_(get_user|copy_from_user)\(/ { print FILENAME ":" FNR ": read in a write window: " $0 }
	mode == "r" && /unsafe_(put_user|copy_to_user)\(/ { print FILENAME ":" FNR ": write in a read window: " $0 }
	/user_(write_|read_)?access_end\(/ { mode = "" }
' "$top"/module/*.[ch] >"$tmp/out"
result "$([[ -s $tmp/out ]] && echo 1 || echo 0)" "user access windows: reads in read windows, writes in write windows" "$tmp/out"

# Builds in a scratch copy so they never disturb a build in the tree.
build_copy() {
	rm -rf "$tmp/src" && mkdir -p "$tmp/src"
	cp -r "$top/Kbuild" "$top/module" "$top/kunit" "$top/uapi" "$top/samples" "$tmp/src/"
}

# One build with W=1 and sparse (C=2), as scripts/build.sh makes for each
# kernel; any warning fails. make check sets KWQ_LINT_BUILD_IN_CHECK=1
# when scripts/build.sh makes this same build against the stock headers,
# so that it is not done twice.
if [[ ${KWQ_LINT_BUILD_IN_CHECK:-0} != 1 ]]; then
	build_copy
	status=0
	make -j"$(nproc)" -C "$kdir" M="$tmp/src" W=1 C=2 modules >"$tmp/build" 2>&1 || status=1
	grep -E 'warning:|error:' "$tmp/build" >"$tmp/out" || true
	[[ -s $tmp/out ]] && status=1
	[[ $status -ne 0 && ! -s $tmp/out ]] && tail -20 "$tmp/build" >"$tmp/out"
	result $status "W=1 and sparse (C=2) build against $(basename "$kdir") has no warning" "$tmp/out"
fi

status=0
# Into build/user, where make check's guests take the programs from: one
# build serves both (the Makefile's flags always include -Werror).
make -j"$(nproc)" -C "$top/userspace" O="$top/build/user" >"$tmp/out" 2>&1 || status=1
result $status "userspace builds with -Wall -Wextra -Werror" "$tmp/out"

# Go bindings: go vet and gofmt -l with every toolchain, the uapi mirror.
status=0
"$top/scripts/go.sh" lint >"$tmp/out" 2>&1 || status=1
result $status "Go bindings: go vet, gofmt, uapi mirror (scripts/go.sh lint)" "$tmp/out"

# Documentation: every page parses as reStructuredText without a warning
# (a table with text in a column's margin renders as an error, not a
# table). index.rst's toctree is Sphinx's: read as a comment here.
status=0
python3 - "$top"/Documentation/*.rst >"$tmp/out" 2>&1 <<'EOF' || status=1
import io
import re
import sys

import docutils.core

bad = 0
for path in sys.argv[1:]:
    with open(path, encoding="utf-8") as f:
        text = re.sub(r"^\.\. toctree::", ".. (toctree)", f.read(), flags=re.M)
    err = io.StringIO()
    docutils.core.publish_doctree(text, source_path=path, settings_overrides={
        "warning_stream": err, "report_level": 2, "halt_level": 5})
    if err.getvalue():
        bad = 1
        print(err.getvalue(), end="")
sys.exit(bad)
EOF
result $status "Documentation/*.rst parse without warnings (docutils)" "$tmp/out"

# No bool read or written with READ_ONCE()/WRITE_ONCE() (or the acquire/
# release pair): with UBSAN's bool check on, gcc 12 instruments a
# READ_ONCE() of a _Bool as a plain read, and KCSAN on the debug kernels
# reports each such lockless read as a data race (kwq_internal.h). Fields
# are matched by name against every `bool NAME;` in the same sources.
status=0
python3 - "$top" >"$tmp/out" 2>&1 <<'EOF' || status=1
import glob
import re
import sys

top = sys.argv[1]
files = [f for d in ("module", "kunit", "samples", "bench") for f in
         glob.glob(f"{top}/{d}/*.[ch]")]
bools = set()
for f in files:
    with open(f, encoding="utf-8") as src:
        bools.update(re.findall(r"^\s*bool\s+(\w+)\s*;", src.read(), re.M))
marked = re.compile(r"\b(READ_ONCE|WRITE_ONCE|smp_load_acquire|smp_store_release)"
                    r"\(\s*([^,()]*(?:\([^()]*\))?[^,()]*)")
bad = 0
for f in files:
    with open(f, encoding="utf-8") as src:
        for n, line in enumerate(src, 1):
            for m in marked.finditer(line):
                name = re.split(r"->|\.|\*", m.group(2))[-1].strip()
                if name in bools:
                    bad = 1
                    print(f"{f[len(top) + 1:]}:{n}: {m.group(1)}() of the bool {name}: make it a u8")
sys.exit(bad)
EOF
result $status "no bool behind READ_ONCE()/WRITE_ONCE() (KCSAN reads it as plain)" "$tmp/out"

# Call loops: no file of module/ calls a file that calls it back (a call
# through a header's inline function counts), beyond the loops that
# scripts/layers.baseline lists; a line there that is no loop edge any
# more fails too, so the list only shrinks (scripts/layers.py).
status=0
python3 "$top/scripts/layers.py" --check "$top/scripts/layers.baseline" >"$tmp/out" 2>&1 || status=1
result $status "module/ has no call loop beyond scripts/layers.baseline, which lists only loops" "$tmp/out"

status=0
(cd "$top" && shellcheck -x scripts/*.sh scripts/guest/*.sh scripts/plant/*.sh bench/*.sh .ci/run) >"$tmp/out" 2>&1 || status=1
result $status "shellcheck on every script" "$tmp/out"

echo "1..$n"
[[ $failed -eq 0 ]]
