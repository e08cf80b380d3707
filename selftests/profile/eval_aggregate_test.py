#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""eval.py's aggregation of repeated runs, on synthetic summaries (no
workload is run).  TAP on stdout.

    eval_aggregate_test.py EVAL_PY
"""
import importlib.util
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                os.pardir, "lib"))
from tap import check, totals  # noqa: E402

spec = importlib.util.spec_from_file_location("buddy_eval", sys.argv[1])
ev = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ev)


def run(final, frac, fig3, sweep_tag):
    s = {"name": "w", "group": "DL", "what": "x", "labels": 10,
         "naive_target": "2x", "sweep": [(sweep_tag, 0.1)], "fig9": [frac],
         "fig3": fig3, "fig3_best": fig3 + 0.1, "naive": 1.1, "naive_frac": 0.01,
         "per_alloc": 1.2, "per_alloc_frac": 0.02, "final": final,
         "final_frac": frac, "best_codec": 1.3, "best_codec_frac": 0.03,
         "per_label": 1.25, "per_label_frac": 0.02, "mib": 100.0}
    return s


runs = [run(1.82, 0.0614, 1.47, "b"), run(1.31, 0.0333, 1.29, "a"),
        run(1.50, 0.0400, 1.40, "c")]
a = ev.aggregate(runs)
check("final is the median ratio", a["final"] == 1.50)
check("final_frac is the median buddy fraction", a["final_frac"] == 0.0400)
check("fig3 is its own median", a["fig3"] == 1.40)
check("the range of final is [min, max]", a["spread"]["final"] == [1.31, 1.82])
check("the range of final_frac", a["spread"]["final_frac"] == [0.0333, 0.0614])
check("lists come from the median run", a["sweep"] == [("c", 0.1)])
check("repeats is the count", a["repeats"] == 3)
check("the inputs are left alone", runs[0]["final"] == 1.82)
check("the order of the runs does not matter",
      ev.aggregate(list(reversed(runs))) == a)
b = ev.aggregate(runs[:2])
check("two runs: the mean of the two middle values",
      abs(b["final"] - (1.82 + 1.31) / 2) < 1e-12)
one = ev.aggregate(runs[:1])
check("one run: its own figures, a range of width 0",
      one["final"] == 1.82 and one["spread"]["final"] == [1.82, 1.82])
check("one run: no range printed", ev.spread(one, "final", ev.rx) == "")
check("three runs: the range printed",
      ev.spread(a, "final", ev.rx) == f" ({ev.rx(1.31)}-{ev.rx(1.82)})")
for bad, why in (([], "no runs"), ([run(1, 0, 1, "a"), dict(run(1, 0, 1, "a"), name="v")],
                                   "different workloads")):
    try:
        ev.aggregate(bad)
        check(f"aggregate() refuses {why}", False)
    except ValueError:
        check(f"aggregate() refuses {why}", True)
mixed = [dict(run(1, 0, 1, "a"), name="resnet18"),
         dict(run(1, 0, 1, "a"), name="resnet18-large"),
         dict(run(1, 0, 1, "a"), name="vgg11-large")]
sets = ev.input_sets(mixed)
check("group means: large and small inputs in rows of their own",
      [(len(sel), kind) for sel, kind in sets] ==
      [(2, "large inputs"), (1, "small inputs")])
check("group means: one row when only small inputs ran",
      [(len(sel), kind) for sel, kind in ev.input_sets(mixed[:1])] ==
      [(1, "")])
check("group means: no row without programs", ev.input_sets([]) == [])
sys.exit(totals())
