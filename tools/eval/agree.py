#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Do two `make eval` runs agree?  Per workload both runs have, the final
ratio (the median of the run's repeats, results.json's "final") and its
buddy fraction ("final_frac"), their relative and absolute differences,
and whether they are within the bounds Documentation/profiler.rst states:
3% (relative) on the ratio, 1 point on the buddy fraction.

    agree.py [--ratio 0.03] [--points 1.0] A/results.json B/results.json

Prints a Markdown table (A and B named by their directories) and exits 0
when every workload both ran is within the bounds, 1 when one is not, 2 on
bad input (a file missing or not an eval result, no workload in common).
Workloads only one run has (capped, skipped) are listed and do not count.
"""
import argparse
import json
import os
import sys


def load(path):
    try:
        with open(path) as f:
            res = json.load(f)
        return {s["name"]: s for s in res["results"]}
    except OSError as e:
        print(f"agree: {path}: {e.strerror}", file=sys.stderr)
    except (ValueError, KeyError, TypeError) as e:
        print(f"agree: {path}: not an eval results.json ({e!r})",
              file=sys.stderr)
    sys.exit(2)


def compare(a, b, max_ratio, max_points):
    """Rows (name, final a, final b, rel. diff, frac a, frac b, diff in
    points, within) of the workloads both have, in a's order, and the names
    only one has."""
    rows = []
    for name, x in a.items():
        if name not in b:
            continue
        y = b[name]
        rel = abs(x["final"] - y["final"]) / max(x["final"], y["final"])
        pts = abs(x["final_frac"] - y["final_frac"]) * 100
        rows.append((name, x["final"], y["final"], rel, x["final_frac"],
                     y["final_frac"], pts,
                     rel <= max_ratio + 1e-12 and pts <= max_points + 1e-12))
    only = sorted(set(a) ^ set(b))
    return rows, only


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ratio", type=float, default=0.03,
                    help="largest relative difference of the final ratios")
    ap.add_argument("--points", type=float, default=1.0,
                    help="largest difference of the buddy fractions, points")
    ap.add_argument("a")
    ap.add_argument("b")
    o = ap.parse_args(argv)
    ra, rb = load(o.a), load(o.b)
    rows, only = compare(ra, rb, o.ratio, o.points)
    if not rows:
        print(f"agree: {o.a} and {o.b} have no workload in common",
              file=sys.stderr)
        return 2
    na = os.path.basename(os.path.dirname(os.path.abspath(o.a))) or "A"
    nb = os.path.basename(os.path.dirname(os.path.abspath(o.b))) or "B"
    print(f"| workload | final {na} / {nb} | diff | buddy % {na} / {nb} "
          f"| diff pt | within {o.ratio * 100:g}% / {o.points:g} pt |")
    print("|---|---|---:|---|---:|---|")
    for n, fa, fb, rel, qa, qb, pts, ok in rows:
        print(f"| {n} | {fa:.3f}x / {fb:.3f}x | {rel * 100:.1f}% "
              f"| {qa * 100:.2f} / {qb * 100:.2f} | {pts:.2f} "
              f"| {'yes' if ok else 'NO'} |")
    for n in only:
        print(f"| {n} | only in {na if n in ra else nb} | | | | |")
    bad = sum(not r[-1] for r in rows)
    print(f"\n{len(rows) - bad} of {len(rows)} workloads within the bounds")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
