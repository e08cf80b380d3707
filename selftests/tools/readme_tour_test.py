#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""readme_tour_test.py - the README's five-minute tour, pasted as written.

Every code block of the section "A five-minute tour" runs as one shell
script, in a scratch directory whose build/ and python/ are the tree's, so
the tour's relative paths hold and the pictures it writes land there.
Blocks that install packages, run make or boot the guest are the stage's
business, not this test's: they are listed as skipped.  Each block must
exit 0 and print what the README says it shows.  TAP ending in a
kselftest "# Totals:" line.

    selftests/tools/readme_tour_test.py [TREE]
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                os.pardir, "lib"))
from tap import check, skip, totals  # noqa: E402

SECTION = "## A five-minute tour"

# what each block shows: a word of its command -> text its output must hold
EXPECT = [
    ("analyze --per-file", ["per file, ratio-buddy of each codec:",
                            "files 2, bytes"]),
    ("heatmap --file", ["(bpc, as buddy.ko sizes it)"]),
    ("profile --", ["Fig. 7  design steps", "Fig. 10 Buddy Threshold sweep",
                    "<string>:1 <module>"]),
    ("run -t 4x", ["buddyctl run: /usr/bin/python3"]),
    ("import buddy.torch", ["loss ", "activations,"]),
]
# not run here: packages, the build, the guest (the stages do those)
NOT_HERE = ["install-deps.sh", "make ", "scripts/guest/run.sh"]
NEEDS = {"numpy": "import numpy", "torch": "import torch"}


def tour_blocks(readme):
    """The code blocks of the tour: lists of lines, dedented."""
    text = readme.split(SECTION, 1)[1].split("\n## ", 1)[0]
    blocks, cur, indent = [], [], None
    for line in text.splitlines() + [""]:
        ind = len(line) - len(line.lstrip(" "))
        if cur and (line.strip() == "" or ind >= indent):
            cur.append(line)
            continue
        if cur:
            while cur and not cur[-1].strip():
                cur.pop()
            blocks.append([ln[indent:] for ln in cur])
            cur = []
        # a code block: indented 4 more than its paragraph (0 or a list's 3)
        if line.strip() and ind in (4, 7) and not re.match(r"\s*\d+\.", line):
            cur, indent = [line], ind
    return blocks


def have(module):
    return subprocess.run(["/usr/bin/python3", "-c", f"import {module}"],
                          capture_output=True).returncode == 0


def main():
    tree = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ".")
    print("TAP version 13")
    with open(os.path.join(tree, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    blocks = tour_blocks(readme)
    check("the README has a tour of at least 6 code blocks", len(blocks) >= 6,
          [f"{len(blocks)} blocks"])
    if not os.access(os.path.join(tree, "build/buddyctl"), os.X_OK):
        skip("the tour", "build/buddyctl not built")
        return totals()
    scratch = tempfile.mkdtemp(prefix="readme-tour.")
    for d in ("build", "python"):
        os.symlink(os.path.join(tree, d), os.path.join(scratch, d))
    env = dict(os.environ, PATH="/usr/bin:/bin:/usr/sbin:/sbin")
    env.pop("BUDDY_DEVICE", None)
    seen = set()
    try:
        for b in blocks:
            script = "\n".join(b)
            first = b[0].strip()
            if any(w in script for w in NOT_HERE):
                skip(f"tour: {first[:60]}", "packages, make or the guest: "
                     "the stages do that")
                continue
            missing = [m for m, imp in NEEDS.items()
                       if (m in script) and not have(m)]
            if missing:
                skip(f"tour: {first[:60]}", f"no {', '.join(missing)}")
                continue
            try:
                r = subprocess.run(["bash", "-e", "-c", script], cwd=scratch,
                                   env=env, capture_output=True, text=True,
                                   timeout=600)
                out, rc = r.stdout + r.stderr, r.returncode
            except subprocess.TimeoutExpired:
                out, rc = "timed out after 600 s", -1
            check(f"tour: {first[:60]}: exit 0", rc == 0,
                  out.splitlines()[-15:])
            for word, wants in EXPECT:
                if word in script:
                    seen.add(word)
                    for w in wants:
                        check(f"tour: {word}: prints '{w}'", w in out,
                              out.splitlines()[-15:])
        for word, _ in EXPECT:
            if word not in seen and not any(word in "\n".join(b)
                                            for b in blocks):
                check(f"tour: a block with '{word}'", False)
        png = os.path.join(scratch, "python3.png")
        if os.path.exists(png):
            with open(png, "rb") as f:
                check("tour: heatmap -o wrote a PNG", f.read(4) == b"\x89PNG")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return totals()


if __name__ == "__main__":
    sys.exit(main())
