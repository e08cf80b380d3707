#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""buddyctl profile --cuda=driver on a real GPU: the driver API
interposer (libbuddycudaprof.so) under a small torch training run and,
where cupy imports, a cupy program (cuda_driver_workload.py), each
checked against the program's own recomputation of the same snapshots:
every region it knows of (the caching allocator's segments, cupy's
arrays) is in the records, and the Fig. 3 BPC ratio of those regions per
snapshot agrees within 0.01; no copy failed; the report is made and its
per-snapshot Fig. 3 is the records'.

    python3 selftests/gpu/test_cuda_driver.py

TAP with a "# Totals:" line.  Without a CUDA device (or torch), without a
buddyctl that takes --cuda=driver ($BUDDYCTL, else build/buddyctl) or
without build/libbuddycudaprof.so (make cuda-driver) it prints SKIP with
the reason and exits 0.  Output under $OUT/cuda-driver when $OUT is set.
Under a minute on one H100.
"""
import json
import os
import subprocess
import sys
import tempfile

from test_cuda_profile import Tap, env, probe

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
LIB = os.path.join(ROOT, "build", "libbuddycudaprof.so")
WORKLOAD = os.path.join(HERE, "cuda_driver_workload.py")
AGREE = 0.01
TIMEOUT = 90


def find_buddyctl():
    b = os.environ.get("BUDDYCTL") or os.path.join(ROOT, "build", "buddyctl")
    try:
        r = subprocess.run([b, "profile", "--help"], capture_output=True,
                           text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as e:
        return None, f"no buddyctl that runs here ({b}: {e})"
    if "--cuda=driver" not in r.stdout + r.stderr:
        return None, f"{b} has no profile --cuda=driver"
    return b, ""


def read_records(path):
    """{snap id: [(addr, size, entries, fig3 bpc)]}, notes."""
    snaps, notes, segs = {}, [], {}
    for line in open(path):
        f = line.rstrip("\n").split("\t")
        if f[0] == "snap":
            snaps[int(f[1])] = []
            segs = {}
        elif f[0] == "seg":
            segs[int(f[2])] = (int(f[4], 16), int(f[5]))
        elif f[0] == "blk":
            snaps[int(f[1])].append(segs[int(f[2])] + (int(f[8]),
                                                         int(f[-4])))
        elif f[0] == "note":
            notes.append(f[1])
    return snaps, notes


def match(rec, addr, size):
    """The recorded allocations that make up [addr, addr + size) exactly
    (a caching-allocator segment: one cudaMalloc, or the cuMemMap ranges
    of an expandable one), [] when it lies inside one larger allocation
    (a pool's chunk split for a smaller array: seen, not comparable),
    None when the records do not hold it."""
    inside = [r for r in rec if r[0] >= addr and r[0] + r[1] <= addr + size]
    if inside and sum(r[1] for r in inside) == size:
        return inside
    if any(r[0] <= addr and addr + size <= r[0] + r[1] for r in rec):
        return []
    return None


def ratio(entries, fig3):
    return 128 * entries / fig3 if fig3 else float("inf")


def check_run(tap, b, out, kind):
    d = os.path.join(out, kind)
    os.makedirs(d, exist_ok=True)
    indep = os.path.join(d, "independent.json")
    cmd = [b, "profile", "-q", "--cuda=driver", "--no-timer",
           "--cuda-records", os.path.join(d, "rec"), "-j", "-o",
           os.path.join(d, "report.json"), "--", sys.executable, WORKLOAD,
           kind, indep]
    e = env()
    e["BUDDYCUDA_LIB"] = LIB
    try:
        r = subprocess.run(cmd, env=e, capture_output=True, text=True,
                           timeout=TIMEOUT)
        rc, log = r.returncode, r.stdout + r.stderr
    except subprocess.TimeoutExpired:
        rc, log = -1, f"timed out after {TIMEOUT} s"
    with open(os.path.join(d, "log.txt"), "w") as f:
        f.write(" ".join(cmd) + "\n" + log)
    if not tap.check(rc == 0 and os.path.exists(indep),
                     f"{kind}: runs under --cuda=driver, exit 0", log):
        return
    ind = json.load(open(indep))
    path = os.path.join(d, "rec", f"cuda-{ind['pid']}.tsv")
    if not tap.check(os.path.exists(path), f"{kind}: its record file", path):
        return
    snaps, notes = read_records(path)
    tap.check(not any("copy failed" in n or "synchronising" in n
                      for n in notes), f"{kind}: no copy failed", notes)
    missing, worst, rows, compared = [], 0.0, [], 0
    for s in ind["snaps"]:
        rec = snaps.get(s["id"], [])
        e_r = f_r = e_i = f_i = 0
        for g in s["regions"]:
            got = match(rec, g["addr"], g["size"])
            if got is None:
                missing.append((s["id"], hex(g["addr"]), g["size"]))
            elif got:
                compared += 1
                e_r += sum(r[2] for r in got)
                f_r += sum(r[3] for r in got)
                e_i += g["entries"]
                f_i += g["fig3"]
        diff = abs(ratio(e_r, f_r) - ratio(e_i, f_i)) if f_r and f_i else 0
        worst = max(worst, diff)
        rows.append(f"snapshot {s['id']}: records {ratio(e_r, f_r):.4f}, "
                    f"independent {ratio(e_i, f_i):.4f}")
    print("# " + "; ".join(rows), flush=True)
    tap.check(ind["snaps"] and not missing,
              f"{kind}: every region the program knows of is in the records",
              missing)
    tap.check(compared > 0 and worst <= AGREE,
              f"{kind}: Fig. 3 per snapshot agrees with the independent "
              f"recomputation within {AGREE} (worst {worst:.4f})", rows)
    try:
        rep = json.load(open(os.path.join(d, "report.json")))
        p = [p for p in rep["processes"] if p["pid"] == ind["pid"]][0]
        ok = True
        for s in p["snapshots"]:
            if s["index"] < 0:
                continue
            blks = snaps[s["index"]]
            want = ratio(sum(x[2] for x in blks), sum(x[3] for x in blks))
            ok &= abs(s["fig3"] - want) <= AGREE
        tap.check(ok and rep["cuda"]["source"] == "driver",
                  f"{kind}: the report's Fig. 3 per snapshot is the records'")
    except (OSError, ValueError, KeyError, IndexError) as e:
        tap.check(False, f"{kind}: the report", repr(e))


def main():
    tap = Tap()
    print("TAP version 13", flush=True)
    torch, why = probe()
    b, bwhy = find_buddyctl()
    if torch is None or b is None or not os.path.exists(LIB):
        reason = why if torch is None else bwhy if b is None else \
            f"no {LIB} (make cuda-driver)"
        tap.skip("buddyctl profile --cuda=driver on torch and cupy", reason)
        return tap.done()
    print(f"# {why}; {b}; {LIB}", flush=True)
    out = os.path.join(os.environ["OUT"], "cuda-driver") \
        if os.environ.get("OUT") else tempfile.mkdtemp(prefix="cuda-driver-")
    check_run(tap, b, out, "torch")
    r = subprocess.run([sys.executable, "-c", "import cupy"],
                       capture_output=True, text=True)
    if r.returncode:
        tap.skip("cupy under --cuda=driver", "cupy does not import")
    else:
        check_run(tap, b, out, "cupy")
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
