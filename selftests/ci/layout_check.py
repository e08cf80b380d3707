#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""The tree's layout rules, as TAP (the "ci" stage of make check).

    layout_check.py [--graph]

1. The include graph: which folder's C files include which folder's
   headers.  Folders are layered, lowest first:

       uapi < core < kmod, lib < tools/common < tools/policy
       < tools/profile/interposer, tools/codeclib < tools/profile/engine
       < tools/buddyctl, daemon, tools/bench, tools/demo < examples, selftests

   A file may include headers of its own folder and of lower layers only;
   folders of the same layer not each other's.  "x.h" is looked up next
   to the including file first, then from the tree's root (-I.).
   --graph prints the graph (folder -> folders it includes) and stops.
2. No source file outside selftests/ is over 1000 lines: C, headers,
   shell, make and Python (python/buddy/**/*.py, tools/**/*.py).
3. No C function outside selftests/ is over 150 lines.
"""
import os
import re
import subprocess
import sys

LAYERS = [
    ["uapi"],
    ["core"],
    ["kmod", "lib"],
    ["tools/common"],
    ["tools/policy"],
    ["tools/profile/interposer", "tools/codeclib"],
    ["tools/profile/engine"],
    ["tools/buddyctl", "daemon", "tools/bench", "tools/demo"],
    ["examples", "selftests", "scripts"],
]
RANK = {f: i for i, layer in enumerate(LAYERS) for f in layer}
# a layer that may include each other: the tests and the examples
OPEN = {"selftests", "examples", "scripts"}
MAX_FILE = 1000
MAX_FUNC = 150
# Over a limit, being split in a change of its own: named here until it
# lands (a name that is no longer over the limit is reported, to be removed)
SPLIT_PENDING = set()
SOURCE = (".c", ".h", ".py", ".sh", ".mk")

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                os.pardir, "lib"))
from tap import check, totals  # noqa: E402


def tracked():
    out = subprocess.run(["git", "ls-files"], capture_output=True, text=True)
    if out.returncode == 0 and out.stdout.strip():
        return out.stdout.split()
    files = []
    for d, dirs, fs in os.walk("."):
        dirs[:] = [x for x in dirs if x not in (".git", "build")]
        files += [os.path.relpath(os.path.join(d, f)) for f in fs]
    return files


def folder(path):
    """The layered folder holding @path, or None."""
    best = None
    for f in RANK:
        if path.startswith(f + "/") and (not best or len(f) > len(best)):
            best = f
    return best


def resolve(src, name):
    here = os.path.normpath(os.path.join(os.path.dirname(src), name))
    if os.path.exists(here):
        return here
    root = os.path.normpath(name)
    return root if os.path.exists(root) else None


def graph(files):
    edges, bad = {}, []
    for src in files:
        if not src.endswith((".c", ".h")):
            continue
        a = folder(src)
        if not a:
            continue
        with open(src, encoding="utf-8", errors="replace") as f:
            text = f.read()
        for name in INCLUDE.findall(text):
            dst = resolve(src, name)
            b = folder(dst) if dst else None
            if not b or b == a:
                continue
            edges.setdefault(a, set()).add(b)
            if a in OPEN and RANK[a] == RANK[b]:
                continue
            if RANK[b] >= RANK[a]:
                bad.append(f"{src} includes {dst}: {a} -> {b}")
    return edges, bad


def func_lengths(path):
    """(name, first line, lines) of each top-level C function of @path."""
    lines = open(path, encoding="utf-8", errors="replace").read().split("\n")
    res, i = [], 0
    while i < len(lines):
        if lines[i] == "{" and i > 0:
            # the definition's head: back to the line starting the name
            j = i - 1
            while j > 0 and not re.match(r"^[A-Za-z_]", lines[j]):
                j -= 1
            m = re.search(r"(\w+)\s*\(", " ".join(lines[j:i]))
            k = i + 1
            while k < len(lines) and lines[k] != "}":
                k += 1
            if m:
                res.append((m.group(1), j + 1, k - j + 1))
            i = k
        i += 1
    return res


def main():
    files = [f for f in tracked() if os.path.isfile(f)]
    edges, bad = graph(files)
    if "--graph" in sys.argv:
        for a in sorted(edges, key=lambda x: (RANK[x], x)):
            print(f"{a} -> {', '.join(sorted(edges[a], key=lambda x: (RANK[x], x)))}")
        return 0
    print("TAP version 13")
    check("the include graph has no arrow from a lower layer up, "
          "nor across a layer", not bad, bad[:40])
    for a in sorted(edges, key=lambda x: (RANK[x], x)):
        print(f"#   {a} -> {', '.join(sorted(edges[a]))}")

    big, pending = [], set()
    for f in files:
        if f.startswith("selftests/") or not f.endswith(SOURCE):
            continue
        with open(f, encoding="utf-8", errors="replace") as fh:
            nl = sum(1 for _ in fh)
        if nl > MAX_FILE and f in SPLIT_PENDING:
            pending.add(f)
            print(f"# {f}: {nl} lines (its split is pending)")
        elif nl > MAX_FILE:
            big.append(f"{f}: {nl} lines")
    check(f"no source file outside selftests/ is over {MAX_FILE} lines",
          not big, big)

    long_funcs = []
    for f in files:
        if f.startswith("selftests/") or not f.endswith(".c"):
            continue
        for name, line, length in func_lengths(f):
            if length <= MAX_FUNC:
                continue
            if f"{f}:{name}" in SPLIT_PENDING:
                pending.add(f"{f}:{name}")
                print(f"# {f}:{line}: {name}() is {length} lines "
                      "(its split is pending)")
            else:
                long_funcs.append(f"{f}:{line}: {name}() is {length} lines")
    for gone in sorted(SPLIT_PENDING - pending):
        print(f"# {gone} is split now: drop it from SPLIT_PENDING")
    check(f"no C function outside selftests/ is over {MAX_FUNC} lines",
          not long_funcs, long_funcs)
    return totals()


if __name__ == "__main__":
    sys.exit(main())
