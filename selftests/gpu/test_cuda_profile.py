#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""buddy.cuda on a real GPU: ResNet-50 and GPT-2 small, 30 training
iterations each, under `python3 -m buddy.cuda run`, checked against an
independent recomputation of the same snapshots (cuda_verify.py); then
two ranks under torchrun, one record file each; then, where a buddyctl
that takes --cuda-records is found ($BUDDYCTL, else the tree's
build/buddyctl), its report and profile file of the same records.

    python3 selftests/gpu/test_cuda_profile.py

TAP with a "# Totals:" line.  Without a CUDA device (or without torch) it
prints SKIP with the reason and exits 0.  Output under $OUT when set
(records, verification, recorded snapshot fixtures, the summaries), else
in a temporary directory.  About 2 minutes on one H100.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
PYDIR = os.path.join(ROOT, "python")
TRAIN = os.path.join(ROOT, "tools", "eval", "gpu_train.py")
VERIFY = os.path.join(HERE, "cuda_verify.py")
LIB = os.path.join(ROOT, "build", "lib", "libbuddycodec.so.1")
sys.path.insert(0, PYDIR)

WORKLOADS = [
    ("resnet50", ["--model", "resnet50", "--iters", "30", "--batch", "32"]),
    ("gpt2", ["--model", "gpt2", "--iters", "30", "--batch", "4"]),
]
AGREE = 0.01
RUN_TIMEOUT = 150


class Tap:
    def __init__(self):
        self.n = self.npass = self.nfail = self.nskip = 0

    def check(self, ok, desc, detail=""):
        self.n += 1
        if ok:
            self.npass += 1
            print(f"ok {self.n} {desc}", flush=True)
        else:
            self.nfail += 1
            print(f"not ok {self.n} {desc}", flush=True)
            for line in str(detail).splitlines()[-25:]:
                print(f"# {line}", flush=True)
        return ok

    def skip(self, desc, why):
        self.n += 1
        self.nskip += 1
        print(f"ok {self.n} {desc} # SKIP {why}", flush=True)

    def done(self):
        print(f"1..{self.n}")
        print(f"# Totals: pass:{self.npass} fail:{self.nfail} xfail:0 "
              f"xpass:0 skip:{self.nskip} error:0")
        return 1 if self.nfail else 0


def probe():
    try:
        import torch
    except ImportError as e:
        return None, f"torch does not import: {e}"
    if not torch.cuda.is_available():
        return None, f"no CUDA device (torch {torch.__version__})"
    return torch, f"torch {torch.__version__}, " \
        f"{torch.cuda.get_device_name(0)}"


def env():
    e = dict(os.environ)
    e["PYTHONPATH"] = os.pathsep.join([PYDIR] + ([e["PYTHONPATH"]] if
                                                 e.get("PYTHONPATH") else []))
    return e


def ensure_lib(tap):
    if not os.path.exists(LIB):
        r = subprocess.run(["make", "-C", ROOT, "-s", "codeclib"],
                           capture_output=True, text=True)
        tap.check(r.returncode == 0 and os.path.exists(LIB),
                  "libbuddycodec builds here (make codeclib)",
                  r.stdout + r.stderr)
    return os.path.exists(LIB)


def run(cmd, log, timeout=RUN_TIMEOUT):
    t = time.time()
    try:
        r = subprocess.run(cmd, env=env(), capture_output=True, text=True,
                           timeout=timeout)
        rc, out, err = r.returncode, r.stdout, r.stderr
    except subprocess.TimeoutExpired as e:
        rc, out, err = -1, str(e.stdout or ""), f"timed out after {timeout} s"
    with open(log, "w") as f:
        f.write(f"$ {' '.join(cmd)}\n# exit {rc}, {time.time() - t:.1f} s\n"
                f"{out}\n{err}")
    return rc, out, err


def check_workload(tap, out, name, args):
    from buddy.cuda import records
    d = os.path.join(out, f"cuda-{name}")
    vj = os.path.join(out, f"verify-{name}.json")
    shutil.rmtree(d, ignore_errors=True)
    rc, so, se = run([sys.executable, "-m", "buddy.cuda", "run", "-o", d,
                      "--every", "10", "--", sys.executable, VERIFY, vj,
                      os.path.join(out, "fixtures"), "--", TRAIN] + args,
                     os.path.join(out, f"{name}.log"))
    if not tap.check(rc == 0, f"{name}: 30 iterations under buddy.cuda run",
                     se):
        return None
    files = records.files(d)
    if not tap.check(len(files) == 1, f"{name}: one record file",
                     str(files)):
        return None
    rec = records.read(files[0])
    pr = rec["proc"]
    tap.check(pr["backend"] == "native" and pr["from_start"] == 1 and
              pr["history"].startswith("python"),
              f"{name}: native allocator, stacks recorded from the start",
              json.dumps(pr))
    prog = [s["progress"] for s in rec["snaps"].values()]
    tap.check(prog == [10, 20, 30] and records.kept(rec) == [0, 1, 2],
              f"{name}: snapshots at backward 10, 20, 30, all kept",
              f"{prog}, kept {records.kept(rec)}")
    act = frame = 0
    sites = set()
    for s in rec["snaps"].values():
        for b in s["blks"]:
            if b["state"] == "active":
                act += b["size"]
                kind, site = rec["labels"][b["label"]]
                if kind == "frame":
                    frame += b["size"]
                    sites.add(site)
    tap.check(act and frame / act > 0.5 and
              any(x.startswith("gpu_train.py:") for x in sites),
              f"{name}: most live bytes named by a Python line outside torch",
              f"{frame} of {act} bytes; sites {sorted(sites)[:20]}")
    tap.check(all(s["stop_ms"] > 0 and s["unread"] == 0
                  for s in rec["snaps"].values()),
              f"{name}: every block read, the program's wait recorded",
              json.dumps([(s["stop_ms"], s["unread"])
                          for s in rec["snaps"].values()]))
    try:
        with open(vj) as f:
            ver = json.load(f)
    except (OSError, ValueError) as e:
        tap.check(False, f"{name}: the independent recomputation ran", e)
        return rec
    bad = []
    for v in ver:
        s = rec["snaps"].get(v["sid"])
        if s is None:
            bad.append(f"snapshot {v['sid']} missing from the records")
            continue
        fg = records.snap_figures(s)
        for u in ("blocks", "segments"):
            if abs(fg[u] - v[u]) > AGREE:
                bad.append(f"snapshot {v['sid']} {u}: hook {fg[u]:.4f}, "
                           f"recomputed {v[u]:.4f}")
        if v["nblocks"] != len(s["blks"]) or v["bytes"] != s["bytes"]:
            bad.append(f"snapshot {v['sid']}: {v['nblocks']} blocks, "
                       f"{v['bytes']} B recomputed; {len(s['blks'])}, "
                       f"{s['bytes']} B recorded")
    tap.check(len(ver) == 3 and not bad,
              f"{name}: Fig. 3 per block and per segment within {AGREE} of "
              f"an independent recomputation ({ver[0]['copy'] if ver else '-'}"
              " copies)", "\n".join(bad) or f"{len(ver)} snapshots verified")
    tap.check(all(v["model_checked"] > 0 and not v["model_mismatch"]
                  for v in ver),
              f"{name}: sampled entries' BPC bits match the spec's model",
              json.dumps(ver))
    tap.check("per storage block" in se and "per segment" in se,
              f"{name}: the summary of the run", se[-2000:])
    return rec


def check_ranks(tap, out):
    from buddy.cuda import records
    d = os.path.join(out, "cuda-ddp")
    shutil.rmtree(d, ignore_errors=True)
    rc, so, se = run([sys.executable, "-m", "buddy.cuda", "run", "-o", d,
                      "--every", "2", "--", sys.executable, "-m",
                      "torch.distributed.run", "--standalone",
                      "--nproc_per_node", "2", TRAIN, "--model", "tiny",
                      "--iters", "6", "--ddp"], os.path.join(out, "ddp.log"))
    files = records.files(d) if os.path.isdir(d) else []
    ranks = sorted(records.read(f)["proc"]["rank"] for f in files)
    tap.check(rc == 0 and ranks == [0, 1],
              "torchrun, 2 ranks: one record file per rank, each followed",
              f"exit {rc}, ranks {ranks}\n{se[-3000:]}")


def buddyctl():
    b = os.environ.get("BUDDYCTL") or os.path.join(ROOT, "build", "buddyctl")
    if not os.access(b, os.X_OK):
        return None, f"no buddyctl at {b}"
    try:
        r = subprocess.run([b, "profile", "--help"], capture_output=True,
                           text=True, timeout=30)
    except OSError as e:
        return None, f"{b}: {e}"
    if "--cuda-records" not in r.stdout + r.stderr:
        return None, f"{b} has no profile --cuda-records yet"
    return b, ""


def check_report(tap, out, name, rec):
    b, why = buddyctl()
    desc = f"{name}: buddyctl profile --cuda-records: report and profile file"
    if b is None:
        tap.skip(desc, why)
        return
    from buddy.cuda import records
    d = os.path.join(out, f"cuda-{name}")
    prof = os.path.join(out, f"{name}.prof")
    js = os.path.join(out, f"{name}.json")
    rc, so, se = run([b, "profile", "--cuda-records", d, "-p", prof,
                      "--json-out", js, "-o", os.path.join(out,
                                                           f"{name}.txt")],
                     os.path.join(out, f"{name}-report.log"))
    ok = rc == 0 and os.path.exists(prof) and os.path.exists(js)
    detail = se
    if ok:
        with open(prof) as f:
            lines = [ln for ln in f if ln.strip() and not ln.startswith("#")]
        with open(js) as f:
            rep = json.load(f)
        tot = sum(records.snap_figures(rec["snaps"][k])["blocks_entries"]
                  for k in records.kept(rec))
        f3 = sum(records.snap_figures(rec["snaps"][k])["blocks_fig3"]
                 for k in records.kept(rec))
        want = 128 * tot / f3
        got = rep.get("fig3", {}).get("bpc")
        ok = bool(lines) and all("\tcu-" in ln for ln in lines) and \
            isinstance(got, (int, float)) and abs(got - want) <= AGREE
        detail = f"{len(lines)} profiles, Fig. 3 bpc {got} vs {want:.4f}"
    tap.check(ok, desc, detail)


def check_cuda_cli(tap, out):
    """buddyctl profile --cuda runs a training script under the hook and
    reports it as it reports a CPU program."""
    b, why = buddyctl()
    desc = "buddyctl profile --cuda -- gpu_train.py: the report, from the program's own run"
    if b is None or "--cuda" not in subprocess.run(
            [b, "profile", "--help"], capture_output=True,
            text=True).stdout:
        tap.skip(desc, why or f"{b} has no --cuda")
        return
    js = os.path.join(out, "cli.json")
    os.environ["BUDDY_PYTHON"] = sys.executable   # the hook's Python
    rc, so, se = run([b, "profile", "--cuda", "--every-backward", "2", "-N",
                      "0", "--json-out", js, "-o",
                      os.path.join(out, "cli.txt"), "--", sys.executable,
                      TRAIN, "--model", "tiny", "--iters", "6"],
                     os.path.join(out, "cli.log"))
    ok, detail = rc == 0 and os.path.exists(js), se[-3000:]
    if ok:
        with open(js) as f:
            rep = json.load(f)
        kept = [s for s in rep["snapshots"] if s.get("kept")]
        ok = rep.get("cuda", {}).get("unit") == "block" and len(kept) >= 2 \
            and isinstance(rep["fig3"]["bpc"], (int, float))
        detail = f"{len(kept)} snapshots kept, Fig. 3 {rep['fig3']['bpc']}"
    tap.check(ok, desc, detail)


def main():
    torch, what = probe()
    if torch is None:
        print(f"SKIP: {what}")
        print("1..0 # SKIP " + what)
        print("# Totals: pass:0 fail:0 xfail:0 xpass:0 skip:1 error:0")
        return 0
    out = os.environ.get("OUT") or tempfile.mkdtemp(prefix="cuda-profile-")
    out = os.path.join(out, "cuda-profile")
    os.makedirs(out, exist_ok=True)
    print(f"# {what}; output in {out}", flush=True)
    tap = Tap()
    if not ensure_lib(tap):
        return tap.done()
    t0 = time.time()
    for name, args in WORKLOADS:
        rec = check_workload(tap, out, name, args)
        if rec is not None:
            check_report(tap, out, name, rec)
    check_ranks(tap, out)
    check_cuda_cli(tap, out)
    print(f"# {time.time() - t0:.0f} s", flush=True)
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
