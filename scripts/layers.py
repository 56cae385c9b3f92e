#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Which file of module/ calls which: call loops and layers.

    scripts/layers.py [--dir DIR] [--refs] [--pairs] [--sites N]
    scripts/layers.py [--dir DIR] [--refs] --edges
    scripts/layers.py [--dir DIR] [--refs] [--pairs] --order FILE,FILE,...
    scripts/layers.py [--dir DIR] --loops
    scripts/layers.py [--dir DIR] --check BASELINE

Reads DIR/*.c and DIR/*.h (default: module/ beside this script), finds
every function definition (a header's static inline functions are the
header's) and every call of a function that another file of DIR defines,
and builds the file graph: file A calls file B when code in A calls a
function defined in B. An #include alone is no edge. A call resolves to
the caller's own definition first; else to a header's definition, or to
a definition in a .c file that is not static.

The report: the call loops (strongly connected components), each with
its edges and the calls that make them (file:line caller() -> callee()),
the fewest edges whose removal breaks the loop (exact over all orders of
the loop's files when it has at most 16, else greedy with a local
search) and the order of its files that leaves only those edges going
up; then the layers of the whole graph, a loop counting as one node, top
(calls most) to bottom. --pairs reads x.c and x.h as one node x.[ch] (a
concept), for reading only.

--edges prints every file edge with its calls. --order lists the calls
that go up in a proposed order of files (top first). --loops prints
every edge inside a loop, one `A -> B` a line: the format of
scripts/layers.baseline.
--check BASELINE fails (exit 1) when a loop edge is not in BASELINE (a
new call loop) or a BASELINE edge is no loop edge any more (a loop was
cut: take the line out, the baseline only shrinks), and when the parse
found no function in some .c file or a file whose braces do not balance,
so the check cannot pass on a broken parse.

What it does not see: calls through function pointers (ops tables,
callbacks: --refs lists where a function of another file is named
without a call), calls hidden in macros (a macro's body is skipped; the
tracepoints of kwq_trace.h are the exception: DEFINE_EVENT(class, NAME)
and TRACE_EVENT(NAME) define trace_NAME()), and uses of another file's
variables or types. Both branches of an #if are read.
"""

import argparse
import glob
import os
import re
import sys

KEYWORDS = {
    "if", "while", "for", "switch", "return", "sizeof", "typeof", "__typeof__",
    "_Generic", "do", "else", "case", "goto", "alignof", "_Alignof",
    "__alignof__", "offsetof", "__builtin_offsetof", "defined",
}
# Annotations that look like calls in a definition's head.
ATTRIBUTES = {
    "__attribute__", "__printf", "__scanf", "__aligned", "__section",
    "__acquires", "__releases", "__must_hold", "__cond_acquires",
    "kwq_cond_acquires", "__no_context_analysis", "__diagnose_as",
    "__malloc", "__alloc_size", "__realloc_size", "__counted_by",
}
EXACT_LIMIT = 16


def strip(text):
    """Comments, strings and character literals become spaces (newlines
    kept); preprocessor lines (with their continuations) become empty."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(c + re.sub(r"[^\n]", " ", text[i + 1:j - 1]) + c)
            i = j
        else:
            out.append(c)
            i += 1
    text = "".join(out)
    lines = text.split("\n")
    cont = False
    for k, line in enumerate(lines):
        if cont or line.lstrip().startswith("#"):
            cont = line.rstrip().endswith("\\")
            lines[k] = ""
        else:
            cont = False
    return "\n".join(lines)


TOKEN = re.compile(r"[A-Za-z_]\w*|\d[\w.]*|->|\S")


def tokens(text):
    line = 1
    pos = 0
    for m in TOKEN.finditer(text):
        line += text.count("\n", pos, m.start())
        pos = m.start()
        yield m.group(), line


class Source:
    def __init__(self, path):
        self.path = path
        self.name = os.path.basename(path)
        self.header = self.name.endswith(".h")
        # name -> (line, static)
        self.defs = {}
        # (line, in_function, name, is_call)
        self.uses = []
        self.error = None
        with open(path, encoding="utf-8") as f:
            raw = f.read()
        self.includes = re.findall(r'^\s*#\s*include\s+"([^"]+)"', raw, re.M)
        text = strip(raw)
        # Tracepoints: DEFINE_EVENT(class, NAME, ...), TRACE_EVENT(NAME, ...).
        for m in re.finditer(r"\b(?:DEFINE_EVENT\s*\(\s*\w+\s*,|TRACE_EVENT\s*\()\s*(\w+)",
                             text):
            self.defs.setdefault("trace_" + m.group(1),
                                 (text.count("\n", 0, m.start()) + 1, False))
        self.parse(list(tokens(text)))

    def parse(self, toks):
        depth = 0
        stmt = []       # tokens of the top-level statement so far
        lines = []      # and their lines
        func = None     # the function whose body we are in
        for k, (tok, line) in enumerate(toks):
            if depth == 0:
                if tok == "{":
                    func = self.head(stmt, lines)
                    depth = 1
                    stmt, lines = [], []
                    continue
                if tok == ";":
                    stmt, lines = [], []
                    continue
                stmt.append(tok)
                lines.append(line)
                # Names in top-level initializers (an ops table's members).
                if (tok[0].isalpha() or tok[0] == "_") and "=" in stmt:
                    self.use(toks, k, None)
                continue
            if tok == "{":
                depth += 1
            elif tok == "}":
                depth -= 1
                if depth < 0:
                    self.error = f"line {line}: unbalanced }}"
                    return
                if depth == 0:
                    func = None
            elif tok[0].isalpha() or tok[0] == "_":
                self.use(toks, k, func)
        if depth != 0:
            self.error = f"braces do not balance at the end ({depth} open)"

    def head(self, stmt, lines):
        """The name a definition's head declares, or None when the braces
        open a type (no parenthesis) or an initializer (an =)."""
        if "=" in stmt or "(" not in stmt:
            return None
        for i in range(1, len(stmt)):
            if stmt[i] == "(" and re.match(r"[A-Za-z_]\w*$", stmt[i - 1]) \
                    and stmt[i - 1] not in ATTRIBUTES:
                name = stmt[i - 1]
                self.defs.setdefault(name, (lines[i - 1], "static" in stmt))
                return name
        return None

    def use(self, toks, k, func):
        tok = toks[k][0]
        if tok in KEYWORDS:
            return
        prev = toks[k - 1][0] if k else ""
        if prev in (".", "->"):
            return
        nxt = toks[k + 1][0] if k + 1 < len(toks) else ""
        self.uses.append((toks[k][1], func, tok, nxt == "("))


def load(directory):
    files = {}
    for path in sorted(glob.glob(os.path.join(directory, "*.[ch]"))):
        if path.endswith(".mod.c"):
            continue
        files[os.path.basename(path)] = Source(path)
    return files


def include_closure(files):
    closure = {}

    def walk(name, seen):
        for inc in files[name].includes if name in files else ():
            if inc in files and inc not in seen:
                seen.add(inc)
                walk(inc, seen)
        return seen
    for name in files:
        closure[name] = walk(name, set())
    return closure


def graph(files, refs=False):
    """edges: (A, B) -> [(line, caller, callee)]; also refs and problems."""
    closure = include_closure(files)
    definers = {}
    for name, src in files.items():
        for fn, (_, static) in src.defs.items():
            if src.header or not static:
                definers.setdefault(fn, []).append(name)
    edges, ref_sites, problems = {}, {}, []
    for name, src in files.items():
        for line, func, fn, call in src.uses:
            if fn in src.defs or fn not in definers:
                continue
            cands = [d for d in definers[fn] if d != name]
            if len(cands) > 1:
                seen = [d for d in cands if d in closure[name]]
                cands = seen or cands
            if len(cands) > 1:
                problems.append(f"{name}:{line}: {fn}() is defined in {', '.join(cands)}")
            for d in cands:
                site = (line, func or "(file scope)", fn)
                if call and func is not None:
                    edges.setdefault((name, d), []).append(site)
                else:
                    ref_sites.setdefault((name, d), []).append(site)
    if refs:
        for e, sites in ref_sites.items():
            edges.setdefault(e, []).extend(sites)
    return edges, ref_sites, problems


def sccs(nodes, succ):
    """Tarjan's strongly connected components, iterative."""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]
    for root in nodes:
        if root in index:
            continue
        work = [(root, iter(sorted(succ.get(root, ()))))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(succ.get(w, ())))))
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    out.append(sorted(comp))
    return out


def sift(order, w):
    """Move single nodes to their best place while that lowers the weight
    of the edges going up (a local search after the greedy order)."""
    def cost(o):
        pos = {v: i for i, v in enumerate(o)}
        return sum(c for (a, b), c in w.items() if pos[b] < pos[a])
    best = cost(order)
    better = True
    while better:
        better = False
        for v in list(order):
            rest = [u for u in order if u != v]
            for i in range(len(order)):
                o = rest[:i] + [v] + rest[i:]
                c = cost(o)
                if c < best:
                    order, best, better = o, c, True
    return order


def order_loop(comp, edges):
    """An order of comp's files, top first, with the fewest edges going up
    (callee before caller), ties broken by fewer call sites; the edges
    that go up."""
    idx = {f: i for i, f in enumerate(comp)}
    n = len(comp)
    w = {}
    for (a, b), sites in edges.items():
        if a in idx and b in idx:
            w[(idx[a], idx[b])] = 10000 + len(sites)
    if n <= EXACT_LIMIT:
        # cost_in[v][S]: weight of edges v -> S (v placed after S: v calls
        # files above it). best[S]: the least cost of ordering S first.
        out_of = [[0] * n for _ in range(n)]
        for (a, b), c in w.items():
            out_of[a][b] = c
        full = (1 << n) - 1
        inf = float("inf")
        best = [inf] * (1 << n)
        choice = [-1] * (1 << n)
        best[0] = 0
        for s in range(1 << n):
            if best[s] == inf:
                continue
            for v in range(n):
                if s >> v & 1:
                    continue
                c = best[s] + sum(out_of[v][u] for u in range(n) if s >> u & 1)
                t = s | 1 << v
                if c < best[t]:
                    best[t], choice[t] = c, v
        order, s = [], full
        while s:
            v = choice[s]
            order.append(v)
            s &= ~(1 << v)
        order.reverse()
    else:
        # Eades, Lin and Smyth: sinks to the bottom, sources to the top,
        # else the node with the most weight out less weight in on top.
        left = set(range(n))
        top, bottom = [], []
        while left:
            changed = True
            while changed:
                changed = False
                for v in sorted(left):
                    if not any((v, u) in w for u in left if u != v):
                        bottom.append(v)
                        left.discard(v)
                        changed = True
                    elif not any((u, v) in w for u in left if u != v):
                        top.append(v)
                        left.discard(v)
                        changed = True
            if left:
                v = max(sorted(left), key=lambda v: sum(w.get((v, u), 0) for u in left)
                        - sum(w.get((u, v), 0) for u in left))
                top.append(v)
                left.discard(v)
        order = sift(top + bottom[::-1], w)
    files = [comp[v] for v in order]
    pos = {f: i for i, f in enumerate(files)}
    up = sorted((a, b) for (a, b) in edges if a in pos and b in pos and pos[b] < pos[a])
    return files, up


def pair_names(files):
    """x.c and x.h, when both exist, as one node x.[ch]."""
    stems = {}
    for name in files:
        stems.setdefault(name[:-2], []).append(name)
    return {name: (stem + ".[ch]" if len(names) == 2 else name)
            for stem, names in stems.items() for name in names}


def analyse(files, refs=False, pairs=False):
    edges, ref_sites, problems = graph(files, refs)
    nodes = sorted(files)
    if pairs:
        rename = pair_names(files)
        merged = {}
        for (a, b), sites in edges.items():
            if rename[a] != rename[b]:
                merged.setdefault((rename[a], rename[b]), []).extend(
                    (f"{ln} [{a}]", c, f) for ln, c, f in sites)
        edges = merged
        nodes = sorted(set(rename.values()))
    succ = {}
    for a, b in edges:
        succ.setdefault(a, set()).add(b)
    comps = sccs(nodes, succ)
    loops = [c for c in comps if len(c) > 1]
    return edges, ref_sites, problems, comps, loops


def loop_edges(edges, loops):
    member = {f: i for i, c in enumerate(loops) for f in c}
    return sorted((a, b) for (a, b) in edges
                  if a in member and member.get(b) == member[a])


def layers(edges, comps):
    """Longest path to the bottom in the graph of components."""
    comp_of = {f: i for i, c in enumerate(comps) for f in c}
    down = {}
    for a, b in edges:
        if comp_of[a] != comp_of[b]:
            down.setdefault(comp_of[a], set()).add(comp_of[b])
    level = {}

    def depth(c):
        if c not in level:
            level[c] = 1 + max((depth(d) for d in down.get(c, ())), default=-1)
        return level[c]
    for c in range(len(comps)):
        depth(c)
    return level, comp_of


def report(files, edges, ref_sites, problems, comps, loops, args):
    out = []
    nfun = sum(len(s.defs) for s in files.values())
    nsites = sum(len(s) for s in edges.values())
    out.append(f"{len(files)} files, {nfun} functions, {len(edges)} file edges "
               f"made by {nsites} calls")
    for p in problems:
        out.append(f"warning: {p}")
    for name, src in files.items():
        if src.error:
            out.append(f"error: {name}: {src.error}")
    for i, comp in enumerate(loops, 1):
        inner = [(a, b) for (a, b) in sorted(edges) if a in comp and b in comp]
        order, up = order_loop(comp, edges)
        out.append("")
        out.append(f"loop {i}: {len(comp)} files, {len(inner)} edges: {' '.join(comp)}")
        out.append(f"  fewest edges to cut ({len(up)}, "
                   f"{sum(len(edges[e]) for e in up)} calls): "
                   + ", ".join(f"{a} -> {b}" for a, b in up))
        out.append("  the order that leaves only those going up, top first:")
        for f in order:
            out.append(f"    {f}")
        out.append("  edges (calls up marked ^):")
        for a, b in inner:
            sites = edges[(a, b)]
            mark = "^" if (a, b) in up else " "
            out.append(f"  {mark} {a} -> {b} ({len(sites)} calls)")
            shown = sites if (a, b) in up else sites[:args.sites]
            for line, caller, callee in shown:
                out.append(f"      {a}:{line} {caller}() -> {callee}()")
            if len(shown) < len(sites):
                out.append(f"      ... {len(sites) - len(shown)} more")
    level, _ = layers(edges, comps)
    out.append("")
    out.append("layers, top first (a file calls only files of lower layers; "
               "[loop N] is one node):")
    loop_no = {tuple(c): i for i, c in enumerate(loops, 1)}
    for lv in sorted(set(level.values()), reverse=True):
        names = []
        for c in sorted(k for k, v in level.items() if v == lv):
            comp = comps[c]
            names.append(f"[loop {loop_no[tuple(comp)]}]" if len(comp) > 1 else comp[0])
        out.append(f"  {lv:2d}: {' '.join(names)}")
    if args.refs:
        out.append("")
        out.append("functions of another file named without a call "
                   "(pointers, ops tables; in the graph with --refs):")
        for (a, b), sites in sorted(ref_sites.items()):
            for line, caller, callee in sites:
                out.append(f"  {a}:{line} {caller} names {callee}() [{b}]")
    return "\n".join(out)


def read_baseline(path):
    edges = set()
    if not os.path.isfile(path):
        raise SystemExit(f"{path}: no such baseline (an empty one says: no loop)")
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            m = re.fullmatch(r"(\S+\.[ch])\s+->\s+(\S+\.[ch])", line)
            if not m:
                raise SystemExit(f"{path}:{n}: not `A.c -> B.h`: {line}")
            edges.add((m.group(1), m.group(2)))
    return edges


def check(files, edges, problems, loops, baseline):
    bad = []
    for name, src in files.items():
        if src.error:
            bad.append(f"{name}: cannot parse: {src.error}")
        if not src.header and not src.defs:
            bad.append(f"{name}: no function found (parse broken?)")
    bad.extend(f"ambiguous: {p}" for p in problems)
    if not files:
        bad.append("no source file found")
    now = set(loop_edges(edges, loops))
    want = read_baseline(baseline)
    for a, b in sorted(now - want):
        sites = edges[(a, b)]
        where = ", ".join(f"{a}:{ln} {c}() -> {f}()" for ln, c, f in sites[:3])
        bad.append(f"new call loop edge {a} -> {b}: {where}")
    for a, b in sorted(want - now):
        state = "is no loop edge any more" if (a, b) in edges else "no longer exists"
        bad.append(f"baseline edge {a} -> {b} {state}: take it out of "
                   f"{os.path.basename(baseline)}")
    return bad


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dir", default=os.path.join(here, "..", "module"))
    ap.add_argument("--refs", action="store_true",
                    help="count functions named without a call (pointers) as edges, and list them")
    ap.add_argument("--pairs", action="store_true",
                    help="report x.c and x.h as one node x.[ch] (not with --check or --loops)")
    ap.add_argument("--sites", type=int, default=3,
                    help="calls shown per edge that is not cut (default 3)")
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--loops", action="store_true", help="print the loop edges (baseline format)")
    mode.add_argument("--edges", action="store_true",
                      help="print every file edge and its calls, file:line caller() -> callee()")
    mode.add_argument("--check", metavar="BASELINE")
    mode.add_argument("--order", metavar="FILE,FILE,...",
                      help="the calls that go up in this order of files, top first "
                      "(edges between files it does not list are not counted)")
    args = ap.parse_args()
    files = load(args.dir)
    if args.pairs and (args.check or args.loops):
        ap.error("--pairs is for reading: the check is by file")
    edges, ref_sites, problems, comps, loops = analyse(files, args.refs, args.pairs)
    if args.loops:
        for a, b in loop_edges(edges, loops):
            print(f"{a} -> {b}")
        return 0
    if args.edges:
        for (a, b), sites in sorted(edges.items()):
            print(f"{a} -> {b} ({len(sites)} calls)")
            for line, caller, callee in sites:
                print(f"    {a}:{line} {caller}() -> {callee}()")
        return 0
    if args.order:
        order = [f.strip() for f in args.order.split(",") if f.strip()]
        pos = {f: i for i, f in enumerate(order)}
        unknown = [f for f in order if f not in files and not args.pairs]
        if unknown:
            ap.error(f"not in {args.dir}: {' '.join(unknown)}")
        up = sorted(e for e in edges if e[0] in pos and e[1] in pos and pos[e[1]] < pos[e[0]])
        print(f"{len(up)} edges, {sum(len(edges[e]) for e in up)} calls go up")
        for a, b in up:
            print(f"  {a} -> {b}")
            for line, caller, callee in edges[(a, b)]:
                print(f"      {a}:{line} {caller}() -> {callee}()")
        return 0
    if args.check:
        bad = check(files, edges, problems, loops, args.check)
        nfun = sum(len(s.defs) for s in files.values())
        print(f"{len(files)} files, {nfun} functions, {len(loops)} call loops, "
              f"{len(loop_edges(edges, loops))} loop edges")
        for b in bad:
            print(b)
        return 1 if bad else 0
    print(report(files, edges, ref_sites, problems, comps, loops, args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
