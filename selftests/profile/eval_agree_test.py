#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""agree.py on synthetic results.json files.  TAP on stdout.

    eval_agree_test.py AGREE_PY
"""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                os.pardir, "lib"))
from tap import check, totals  # noqa: E402

agree = sys.argv[1]


def write(d, name, results):
    os.makedirs(os.path.join(d, name), exist_ok=True)
    p = os.path.join(d, name, "results.json")
    with open(p, "w") as f:
        json.dump({"results": [{"name": k, "final": v[0], "final_frac": v[1]}
                               for k, v in results.items()],
                   "skipped": [], "host": {}}, f)
    return p


def run(*args):
    r = subprocess.run([sys.executable, agree, *args], capture_output=True,
                       text=True)
    return r.returncode, r.stdout + r.stderr


with tempfile.TemporaryDirectory() as d:
    a = write(d, "alone", {"w1": (1.50, 0.010), "w2": (1.10, 0.005),
                           "only-a": (1.0, 0.0)})
    b = write(d, "loaded", {"w1": (1.53, 0.012), "w2": (1.10, 0.014)})
    c = write(d, "far", {"w1": (1.60, 0.010), "w2": (1.10, 0.005)})
    rc, out = run(a, b)
    check("within both bounds: exit 0", rc == 0)
    check("the table names the two runs", "final alone / loaded" in out)
    check("2.0% and 0.20 points are shown", "| 2.0% |" in out and "| 0.20 |" in out)
    check("a workload of one run only is listed", "only-a | only in alone" in out)
    check("the count line", "2 of 2 workloads within the bounds" in out)
    rc, out = run(a, c)
    check("6.2% apart on the ratio: exit 1", rc == 1 and "| NO |" in out)
    rc, out = run("--points", "0.5", a, write(d, "pts", {"w1": (1.5, 0.017)}))
    check("0.70 points over a 0.5-point bound: exit 1", rc == 1)
    rc, out = run("--ratio", "0.1", a, c)
    check("--ratio widens the bound", rc == 0)
    rc, out = run(a, write(d, "none", {"x": (1.0, 0.0)}))
    check("no workload in common: exit 2", rc == 2 and "no workload in common" in out)
    bad = os.path.join(d, "bad.json")
    with open(bad, "w") as f:
        f.write("[1, 2]")
    rc, out = run(a, bad)
    check("not a results.json: exit 2 naming the file",
          rc == 2 and "bad.json: not an eval results.json" in out)
    rc, out = run(a, os.path.join(d, "missing.json"))
    check("a missing file: exit 2", rc == 2 and "missing.json" in out)
sys.exit(totals())
