#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Mask what varies between two captures of the same tree.

    mask-outputs.py RUN1 RUN2 IN OUT

RUN1 and RUN2 are two captures (selftests/tools/capture-outputs.sh) of the
same tree; IN is a capture to mask (one of them, or another tree's), written
to OUT.  A record (one buddyctl or buddyd invocation) that is the same in
RUN1 and RUN2 is kept byte for byte.  One that differs depends on the clock
or the scheduler: its numbers are replaced by N; if it still differs (a
line more or less), only its command line and exit status are kept.  So
`diff -r OUT-of-before OUT-of-after` compares every deterministic output
exactly and the others as far as they are deterministic.
"""
import os
import re
import sys

HEAD = re.compile(r"^### (\d+: |BEGIN )", re.M)
# a number with the blanks before it: a column's width varies with it
# (a fraction such as a 4/3x target is one number)
NUM = re.compile(r" *-?\d+(/\d+)?(\.\d+)?([eE][+-]?\d+)?")
# process ids differ from run to run wherever they appear
PID = re.compile(r'("\w*pid": )\d+')


def records(path):
    if not os.path.exists(path):
        return []
    text = open(path, encoding="utf-8", errors="replace").read()
    starts = [m.start() for m in HEAD.finditer(text)]
    if not starts:
        return [text] if text else []
    return [text[a:b] for a, b in zip(starts, starts[1:] + [len(text)])]


def header(rec):
    lines = rec.split("\n")
    return "\n".join(lines[:2]) + "\n### (output varies between runs)\n"


def mask(r1, r2, r):
    r1, r2, r = (PID.sub(r"\1PID", x) for x in (r1, r2, r))
    if r1 == r2:
        return r
    m1, m2 = NUM.sub(" N", r1), NUM.sub(" N", r2)
    if m1 == m2:
        return NUM.sub(" N", r)
    return header(r)


def main():
    run1, run2, src, dst = sys.argv[1:5]
    os.makedirs(dst, exist_ok=True)
    for name in sorted(os.listdir(src)):
        a = records(os.path.join(run1, name))
        b = records(os.path.join(run2, name))
        c = records(os.path.join(src, name))
        out = []
        for i, r in enumerate(c):
            if i < len(a) and i < len(b):
                out.append(mask(a[i], b[i], r))
            else:
                out.append(r)
        with open(os.path.join(dst, name), "w", encoding="utf-8") as f:
            f.write("".join(out) if out else
                    open(os.path.join(src, name), encoding="utf-8",
                         errors="replace").read())


if __name__ == "__main__":
    main()
