#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The GPU rows of `make eval`: the DL workloads trained on a GPU under
buddy.cuda, their figures next to the CPU rows and the paper's.

    python3 gpu_rows.py --out DIR [--only NAME,...] [--rows FILE]
                        [--merge RESULTS_MD]

With a CUDA device (and no --rows) every workload of WORKLOADS runs
under `python3 -m buddy.cuda run` (30 iterations, a snapshot every 10th
backward pass, at its start), its records in DIR/gpu/cuda-NAME/, and the
rows go to DIR/gpu-rows.json and DIR/gpu.md; one command, about 2
minutes on one H100.  Without one, both say that the GPU rows were not
run and why.  --rows FILE takes the rows of a run made elsewhere (its
gpu-rows.json, records beside it).  --merge puts the section into
RESULTS_MD (make eval's results.md), replacing an earlier one, next to
the CPU rows of the same models from results.json beside it.

The Fig. 3 columns come from the records themselves (sums of their Fig.
3 bytes): per storage block (the live blocks, what a Buddy-aware
allocator would see) and per segment (every block of every cudaMalloc
region, cached free ones included: what Buddy's hardware would hold).
The Fig. 7 columns (targets, buddy accesses) need the report engine:
they are filled from `buddyctl profile --cuda-records` ($BUDDYCTL, else
the tree's build/buddyctl) where one takes that option, else left empty
with a note.
"""
import argparse
import json
import os
import platform
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "python"))
TRAIN = os.path.join(HERE, "gpu_train.py")

WORKLOADS = [
    ("resnet50", ["--model", "resnet50", "--iters", "30", "--batch", "32"],
     "ResNet-50, batch 32, 224x224 Fashion-MNIST, SGD, 30 iterations"),
    ("gpt2", ["--model", "gpt2", "--iters", "30", "--batch", "4"],
     "GPT-2 small, batch 4, context 1024, English text, AdamW, "
     "30 iterations"),
]
PAPER_DL = {"fig3": 1.85, "final": 1.5, "final_frac": 0.04}
CODE_BYTES = (0, 8, 32, 64, 96, 128)
SECTION = "## On a GPU: buddy.cuda"


def probe():
    try:
        import torch
    except ImportError as e:
        return None, f"torch does not import in {sys.executable}: {e}"
    if not torch.cuda.is_available():
        return None, f"no CUDA device (torch {torch.__version__})"
    return torch, ""


def ratio(logical, stored):
    return 128 * logical / stored if stored else float("inf")


def rows_of_records(name, what, d):
    """The figures of one workload's records (the first process's)."""
    from buddy.cuda import records
    files = records.files(d)
    if not files:
        return {"name": name, "what": what, "error": f"no records in {d}"}
    rec = records.read(files[0])
    kept = records.kept(rec)
    segs_addr = {}
    ent = {"blocks": 0, "segments": 0}
    f3 = {"blocks": [0] * 4, "segments": [0] * 4}
    code_bytes = pairs = 0
    best = {}
    live = []
    stops = []
    for sid in kept:
        s = rec["snaps"][sid]
        stops.append(s["stop_ms"])
        segs_addr = {g["seg"]: g["addr"] for g in s["segs"]}
        act = 0
        for b in s["blks"]:
            units = ["segments"] + (["blocks"] if b["state"] == "active"
                                    else [])
            for u in units:
                ent[u] += b["entries"]
                for c in range(4):
                    f3[u][c] += b["fig3"][c]
            if b["state"] != "active":
                continue
            act += b["size"]
            pairs += b["entries"]
            code_bytes += sum(n * CODE_BYTES[q]
                              for q, n in enumerate(b["hist"][0]))
            key = (segs_addr[b["seg"]] + b["off"], b["size"], b["label"])
            acc = best.setdefault(key, [0] * 4)
            for c in range(4):
                acc[c] += b["fig3"][c]
        live.append(act)
    return {
        "name": name, "what": what, "snapshots": len(kept),
        "live_mib": sum(live) / len(live) / 2**20 if live else 0,
        "labels": len({b["label"] for s in kept for b in rec["snaps"][s]["blks"]
                       if b["state"] == "active"}),
        "fig3_blocks": ratio(ent["blocks"], f3["blocks"][0]),
        "fig3_segments": ratio(ent["segments"], f3["segments"][0]),
        "fig3_codecs": [ratio(ent["blocks"], f3["blocks"][c])
                        for c in range(4)],
        "fig3_best": ratio(ent["blocks"], sum(min(v) for v in best.values())),
        "buddy_sizes": ratio(pairs, code_bytes),
        "stop_ms_mean": sum(stops) / len(stops) if stops else 0,
        "stop_ms_max": max(stops) if stops else 0,
        "record_s": (rec["end"] or {}).get("record_s"),
        "records": os.path.relpath(d, ROOT) if d.startswith(ROOT) else d,
    }


def engine_figures(row, d):
    """Fig. 7 from `buddyctl profile --cuda-records` of @d, when there is
    such a buddyctl; else the reason in row["fig7_note"]."""
    b = os.environ.get("BUDDYCTL") or os.path.join(ROOT, "build", "buddyctl")
    try:
        h = subprocess.run([b, "profile", "--help"], capture_output=True,
                           text=True, timeout=30)
        if "--cuda-records" not in h.stdout + h.stderr:
            raise OSError(f"{b} has no profile --cuda-records yet")
        r = subprocess.run([b, "profile", "--cuda-records", d, "--json", "-q"],
                           capture_output=True, text=True, timeout=300)
        if r.returncode:
            raise OSError(r.stderr.strip()[-300:])
        j = json.loads(r.stdout)
    except (OSError, ValueError, subprocess.SubprocessError) as e:
        row["fig7_note"] = str(e)
        return row
    f7 = j["fig7"]
    row.update({"naive": f7["naive"]["ratio"],
                "naive_frac": f7["naive"]["buddy_frac"],
                "per_alloc": f7["per_allocation"]["ratio"],
                "final": f7["plus16x"]["ratio"],
                "final_frac": f7["plus16x"]["buddy_frac"]})
    return row


def run_gpu(torch, out, only):
    host = {"gpu": torch.cuda.get_device_name(0), "torch": torch.__version__,
            "cuda": torch.version.cuda, "python": platform.python_version(),
            "cpus": os.cpu_count(), "date": time.strftime("%Y-%m-%d")}
    rows = []
    for name, args, what in WORKLOADS:
        if only and name not in only:
            continue
        d = os.path.join(out, "gpu", f"cuda-{name}")
        os.makedirs(os.path.dirname(d), exist_ok=True)
        if os.path.isdir(d):
            for f in os.listdir(d):
                os.unlink(os.path.join(d, f))
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(
            [os.path.join(ROOT, "python")] +
            ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
        cmd = [sys.executable, "-m", "buddy.cuda", "run", "-o", d, "--every",
               "10", "--", sys.executable, TRAIN] + args
        t = time.time()
        with open(os.path.join(out, "gpu", f"{name}.log"), "w") as log:
            r = subprocess.run(cmd, env=env, stdout=log,
                               stderr=subprocess.STDOUT, timeout=600)
        if r.returncode:
            rows.append({"name": name, "what": what,
                         "error": f"exit {r.returncode} (gpu/{name}.log)"})
            continue
        row = rows_of_records(name, what, d)
        row["wall_s"] = time.time() - t
        rows.append(engine_figures(row, d))
    return {"host": host, "rows": rows,
            "cmd": "python3 tools/eval/gpu_rows.py --out DIR"}


def fmt(x, pct=False):
    if x is None:
        return "-"
    if pct:
        return f"{x * 100:.2f}%"
    return "inf" if x == float("inf") else f"{x:.2f}"


def section(res, cpu):
    L = [SECTION, ""]
    if res.get("not_run"):
        L.append(f"Not run: {res['not_run']}. `python3 tools/eval/gpu_rows.py "
                 "--out DIR` on a machine with a CUDA device makes these rows "
                 "(`make eval EVAL_GPU_ROWS=DIR/gpu-rows.json` then puts "
                 "them here).")
        return "\n".join(L) + "\n"
    h = res["host"]
    L.append(f"The DL workloads trained on {h['gpu']} (torch {h['torch']}, "
             f"CUDA {h['cuda']}, {h['date']}) under `python3 -m buddy.cuda "
             "run`: every block of PyTorch's caching allocator copied to "
             "host and sized at the start of backward passes 10, 20 and 30. "
             "Fig. 3 per storage block counts the live blocks, per segment "
             "every block of every cudaMalloc region (cached free ones too: "
             "what Buddy's hardware would hold). Memory outside the caching "
             "allocator (CUDA context, cuDNN/cuBLAS workspaces and handles, "
             "NCCL) is not seen. The CPU row is the same model in the table "
             "above (`buddyctl profile`, CPU heap); the paper's is its DL "
             "mean on a Tesla P100.\n")
    L.append("| workload | where | live MiB | Fig. 3 BPC per block | per segment "
             "| Fig. 3 best codec | Buddy's sizes | final (Fig. 7) "
             "| program stopped per snapshot |")
    L.append("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    notes = set()
    for r in res["rows"]:
        if r.get("error"):
            L.append(f"| {r['name']} | GPU | - | {r['error']} | | | | | |")
            continue
        final = f"{fmt(r.get('final'))}x, {fmt(r.get('final_frac'), True)}" \
            if r.get("final") is not None else "-"
        if r.get("fig7_note"):
            notes.add(r["fig7_note"])
        L.append(f"| {r['name']} | GPU | {r['live_mib']:.0f} "
                 f"| {fmt(r['fig3_blocks'])} | {fmt(r['fig3_segments'])} "
                 f"| {fmt(r['fig3_best'])} | {fmt(r['buddy_sizes'])} | {final} "
                 f"| {r['stop_ms_mean']:.0f} ms (max {r['stop_ms_max']:.0f}) |")
        c = cpu.get(r["name"])
        if c:
            L.append(f"| {r['name']} | CPU | {c.get('mib', 0):.0f} "
                     f"| {fmt(c.get('fig3'))} | | {fmt(c.get('fig3_best'))} "
                     f"| | {fmt(c.get('final'))}x, "
                     f"{fmt(c.get('final_frac'), True)} | |")
    L.append(f"| DL mean | paper (GPU, Tesla P100) | | {PAPER_DL['fig3']:.2f} | "
             f"| | | {PAPER_DL['final']:.2f}x, "
             f"{fmt(PAPER_DL['final_frac'], True)} | |")
    for n in sorted(notes):
        L.append(f"\nFig. 7 not filled: {n}.")
    return "\n".join(L) + "\n"


def cpu_rows(results_md):
    p = os.path.join(os.path.dirname(results_md), "results.json")
    try:
        with open(p) as f:
            return {r["name"]: r for r in json.load(f)["results"]}
    except (OSError, ValueError, KeyError):
        return {}


def merge(results_md, text):
    try:
        with open(results_md) as f:
            md = f.read()
    except OSError:
        md = ""
    i = md.find(SECTION)
    if i >= 0:
        j = md.find("\n## ", i + len(SECTION))
        md = md[:i] + md[j + 1:] if j >= 0 else md[:i]
    md = md.rstrip("\n") + ("\n\n" if md.strip() else "") + text
    with open(results_md, "w") as f:
        f.write(md)


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--only", default="")
    ap.add_argument("--rows")
    ap.add_argument("--merge")
    a = ap.parse_args(argv)
    out = os.path.abspath(a.out)
    os.makedirs(out, exist_ok=True)
    only = {x for x in a.only.split(",") if x}
    if a.rows:
        with open(a.rows) as f:
            res = json.load(f)
    else:
        torch, why = probe()
        res = {"not_run": why} if torch is None else run_gpu(torch, out, only)
        with open(os.path.join(out, "gpu-rows.json"), "w") as f:
            json.dump(res, f, indent=1)
    text = section(res, cpu_rows(a.merge) if a.merge else {})
    with open(os.path.join(out, "gpu.md"), "w") as f:
        f.write(text)
    if a.merge:
        merge(a.merge, text)
    print(f"gpu_rows: wrote {out}/gpu.md" +
          (f" and the section of {a.merge}" if a.merge else "") +
          (f" (not run: {res['not_run']})" if res.get("not_run") else ""))
    return 1 if any(r.get("error") for r in res.get("rows", [])) else 0


if __name__ == "__main__":
    sys.exit(main())
