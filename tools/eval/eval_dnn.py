#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""make eval-dnn: real PyTorch training under every buddy.torch policy.

    /usr/bin/python3 tools/eval/eval_dnn.py --calibration CAL.json --out DIR
        [--iters-cnn N] [--iters N] [--models cnn,resnet18,vgg11,mobilenet_v2]

Every model trains from the same seed under every policy of
buddy.torch.POLICIES on libbuddy's in-process device ($BUDDY_DEVICE), on
Fashion-MNIST (dataset-fashion-mnist; the torchvision models get it
upsampled to 3x64x64).  Writes DIR/dnn.md (one table per model, the codec
and layer ratios, the paper anchors) and DIR/dnn.png (saved activations in
process memory over the last iteration, at every pack and unpack).
"""
import argparse
import os
import random
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, os.pardir, os.pardir, "python"))
sys.path.insert(0, HERE)

import torch                                   # noqa: E402
import torch.nn.functional as F                # noqa: E402

import buddy                                   # noqa: E402
import buddy.torch as bt                       # noqa: E402
import datasets                                # noqa: E402
import train                                   # noqa: E402

MiB = 1 << 20


def fashion_mnist():
    def load(kind):
        x, y = datasets.fashion_mnist(kind)
        x = torch.from_numpy(x.copy()).float() / 255.0
        return (x.unsqueeze(1) - 0.2860) / 0.3530, torch.from_numpy(y.copy()).long()
    return load("train"), load("t10k")


def tvmodel(name):
    return train.make_model(name, vgg_one_linear=True)


MODELS = {
    # name: (constructor, batch, input size: None for 1x28x28)
    "cnn": (train.cnn, 64, None),
    # ResNet-18 at batch 16 saves 28 MiB of activations against 43 MiB of
    # weights; at 64 activations dominate.
    "resnet18": (lambda: tvmodel("resnet18"), 64, 64),
    "vgg11": (lambda: tvmodel("vgg11"), 16, 64),
    "mobilenet_v2": (lambda: tvmodel("mobilenet_v2"), 16, 64),
}


def prep(x, size):
    if size is None:
        return x
    return train.to_rgb(train.upsample(x, size))


def policy_args(policy, plan, calib, base_peak):
    kw = {"plan": plan}
    if policy == "vdnn-dyn":
        kw["budget"] = base_peak // 2       # half the baseline's peak
    if policy == "cswap":
        kw.update(calibration=calib)
    return kw


def run(mname, policy, data, test, iters, calib, dev, base_peak):
    make, batch, size = MODELS[mname]
    torch.manual_seed(14)
    model = make()
    opt = torch.optim.SGD(model.parameters(), lr=0.05 if mname == "cnn"
                          else 0.01, momentum=0.9)
    x_all, y_all = data
    g = torch.Generator().manual_seed(5)
    order = torch.randperm(len(y_all), generator=g)
    first = (prep(x_all[order[:batch]], size), y_all[order[:batch]])
    plan = bt.probe(lambda: F.cross_entropy(model(first[0]), first[1]))
    model.zero_grad(set_to_none=True)
    losses, times, last = [], [], None
    for it in range(iters):
        sel = order[it * batch:(it + 1) * batch]
        x, y = prep(x_all[sel], size), y_all[sel]
        kw = policy_args(policy, plan, calib, base_peak)
        if policy == "cswap" and it == iters - 1:
            kw["measure_decisions"] = True
        off = bt.offload(policy, device=dev, **kw)
        t0 = time.perf_counter()
        _, loss = train.sgd_step(model, opt, x, y, ctx=off, set_to_none=True)
        dt = time.perf_counter() - t0
        off.close()
        if policy == "cswap" and it == iters - 1:
            # The decision timing is measurement, not policy: not timed.
            dt = None
        times.append(dt)
        losses.append(float(loss))
        last = off
    tx, ty = test
    correct = None
    if mname == "cnn":          # the others train too few iterations
        with torch.no_grad():
            model.eval()
            correct = 0
            for i in range(0, len(ty), 250):
                correct += int((model(prep(tx[i:i + 250], size)).argmax(1)
                                == ty[i:i + 250]).sum())
    params = sum(p.numel() * p.element_size() for p in model.parameters())
    t = [d for d in times[1:] if d is not None] or [d for d in times if d]
    return {"stats": last.stats, "losses": losses,
            "time": sorted(t)[len(t) // 2],
            "acc": None if correct is None else correct / len(ty),
            "params": params}


def dump_activations(mname, data, out, cap=40, batches=4):
    """The float32 activations the forwards of the first @batches batches
    save (64 KiB or more, parameters and duplicates left out), at most
    @cap of them drawn by a seeded sample,
    as out/NNN.f32 (raw, numpy's tofile()): buddyctl calibrate --tensors
    fits cswap's model on them."""
    make, batch, size = MODELS[mname]
    torch.manual_seed(14)
    model = make()
    x_all, y_all = data
    g = torch.Generator().manual_seed(5)
    order = torch.randperm(len(y_all), generator=g)
    saved = []

    def pack(t):
        if t.dtype == torch.float32 and t.is_contiguous() and \
                not bt._is_param(t) and t.numel() * 4 >= 65536 and \
                t.data_ptr() not in seen:
            seen.add(t.data_ptr())
            saved.append(t.detach().clone())
        return t
    for b in range(batches):
        sel = order[b * batch:(b + 1) * batch]
        x, y = prep(x_all[sel], size), y_all[sel]
        seen = set()
        with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            F.cross_entropy(model(x), y)
    # A seeded sample, not every n-th: a stride that divides the tensors
    # per forward picks the same layers in every batch (ResNet-18 at batch
    # 64: 10 layers, its sparse ones all of one size, which leaves the
    # model's size x sparsity term undetermined).
    pick = sorted(random.Random(7).sample(range(len(saved)),
                                          min(cap, len(saved))))
    os.makedirs(out, exist_ok=True)
    for k, i in enumerate(pick):
        saved[i].numpy().tofile(os.path.join(out, f"{k:03d}.f32"))
    return len(pick)


def fmt_mib(b):
    return f"{b / MiB:.2f}"


FLOOR = 0       # live tracked bytes before any model: device store, data


def process_cell(v, base):
    """Whole-process live bytes above FLOOR, and against the baseline's."""
    if v is None:
        return "-"
    v -= FLOOR
    base = base - FLOOR if base is not None else None
    if not base:
        return fmt_mib(v)
    return f"{fmt_mib(v)} ({100 * v / base:.0f}%)"


def table(mname, res, iters):
    base = res["none"]
    bs = base["stats"]
    out = [f"## {mname}", "",
           f"Batch {MODELS[mname][1]}, input "
           f"{'1x28x28' if MODELS[mname][2] is None else '3x64x64'}, "
           f"{iters} iterations of SGD from one seed per policy; weights "
           f"{fmt_mib(base['params'])} MiB against "
           f"{fmt_mib(bs.peak_resident_bytes)} MiB of saved activations at "
           "the baseline's peak.", "",
           "| policy | peak process MiB (vs base) | mean process MiB (vs base) "
           "| peak act. mem MiB (vs base) | mean act. mem | "
           "link logical MiB (off+pre) | stored MiB | device/buddy sectors "
           "x32 B MiB | ratio stored | ratio link | time/iter (vs base) | "
           "prefetch hit/late/miss/reread | final loss / test acc |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for pol, r in res.items():
        st = r["stats"]
        ratio = f"{st.offloaded_bytes / st.stored_bytes:.2f}x" \
            if st.stored_bytes else "-"
        acc = "-" if r["acc"] is None else f"{100 * r['acc']:.1f}%"
        sect = st.device_sector_bytes + st.buddy_sector_bytes
        lratio = f"{(st.offloaded_bytes + st.unpacked_bytes) / sect:.2f}x" \
            if sect else "-"
        peak = st.peak_resident_bytes
        out.append(
            f"| {pol} | "
            f"{process_cell(st.peak_process_bytes, bs.peak_process_bytes)} | "
            f"{process_cell(st.mean_process(), bs.mean_process())} | "
            f"{fmt_mib(peak)} "
            f"({100 * peak / max(bs.peak_resident_bytes, 1):.0f}%) | "
            f"{fmt_mib(st.mean_resident())} | "
            f"{fmt_mib(st.offloaded_bytes)}+{fmt_mib(st.unpacked_bytes)} | "
            f"{fmt_mib(st.stored_bytes)} | "
            f"{fmt_mib(st.device_sector_bytes)}/"
            f"{fmt_mib(st.buddy_sector_bytes)} | "
            f"{ratio} | {lratio} | {r['time'] * 1000:.0f} ms "
            f"({r['time'] / base['time']:.2f}x) | "
            f"{st.prefetch_hits}/{st.prefetch_late}/{st.prefetch_misses}/"
            f"{st.rereads} | "
            f"{sum(r['losses'][-3:]) / len(r['losses'][-3:]):.4f} / "
            f"{acc} |")
    out += ["", "Ratio (logical/stored) per codec and per layer type "
            "(the backward node that reads the tensor), last iteration:", ""]
    for pol, r in res.items():
        st = r["stats"]
        if not st.by_codec:
            continue
        codec = ", ".join(f"{c} {v[1] / max(v[2], 1):.2f}x ({v[0]})"
                          for c, v in sorted(st.by_codec.items()))
        layer = ", ".join(f"{c} {v[1] / max(v[2], 1):.2f}x"
                          for c, v in sorted(st.by_layer.items()))
        extra = ""
        if st.cswap_decisions:
            extra = (f"; decision accuracy {st.cswap_correct}/"
                     f"{st.cswap_decisions} = "
                     f"{100 * st.cswap_correct / st.cswap_decisions:.1f}%")
        out.append(f"- {pol}: codecs {codec}; layers {layer}{extra}")
    lossy = [p for p in res if p not in bt.LOSSLESS]
    if lossy:
        out += ["", "Loss curves (every iteration) of the lossy policies "
                "against the baseline:", ""]
        for pol in ["none"] + lossy:
            out.append(f"- {pol}: " + " ".join(f"{v:.3f}"
                                                for v in res[pol]["losses"]))
    return out + [""]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--calibration", required=True,
                    help="cswap's model; {model} in the path is the model's "
                    "name (one fitted on its own activations)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--dump-activations", action="store_true",
                    help="only write each model's saved activations to "
                    "OUT/MODEL/NNN.f32 for buddyctl calibrate --tensors")
    ap.add_argument("--models", default="cnn,resnet18,vgg11,mobilenet_v2")
    ap.add_argument("--iters-cnn", type=int, default=40)
    ap.add_argument("--iters", type=int, default=2)
    ap.add_argument("--policies", default=",".join(bt.POLICIES))
    a = ap.parse_args()
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    data, test = fashion_mnist()
    if a.dump_activations:
        for mname in a.models.split(","):
            n = dump_activations(mname, data, os.path.join(a.out, mname))
            print(f"{mname}: {n} activations", file=sys.stderr)
        return
    calibs = {m: bt.load_calibration(a.calibration.format(model=m))
              for m in a.models.split(",")}
    test = (test[0][:2000], test[1][:2000])
    os.makedirs(a.out, exist_ok=True)
    dev = buddy.Device()
    info = dev.info()
    global FLOOR
    live = buddy.live_bytes()
    FLOOR = live[0] if live else 0
    md = ["# DNN activations in buddy memory (make eval-dnn)", "",
          f"Device: {os.environ.get('BUDDY_DEVICE', '/dev/buddy')} "
          f"(max ratio {info['max_ratio']}); torch {torch.__version__}, one "
          "thread; data: Fashion-MNIST from dataset-fashion-mnist.", "",
          "Process memory is the whole process's live bytes as the "
          "profiler's interposer tracks them (libbuddyprof.so preloaded by "
          "`buddyctl profile --no-timer`; every malloc-family and anonymous "
          "mmap allocation of at least 64 KiB, torch's CPU allocator "
          "included: weights, gradients, optimizer state, activations, "
          "temporaries), read with buddy.live_bytes() at every pack and "
          "unpack of the last iteration: peak and mean of those samples, "
          "above the floor measured before any model was built "
          f"({fmt_mib(FLOOR)} MiB: the in-process device's backing store, "
          "which stands for the device's memory, and the data set).  "
          f"{'' if live else 'NOT UNDER THE INTERPOSER HERE: those columns are empty.  '}"
          "Act. mem is the bytes of saved activations in process memory that "
          "the saved-tensor hooks track (kept ones, and prefetched or "
          "unpacked ones until freed), peak and mean over the samples taken "
          "at every pack and unpack of the last iteration; the baseline "
          "(`none`) keeps every saved activation, as PyTorch does.  Link "
          "logical = tensor bytes offloaded + fetched back (vDNN's PCIe "
          "traffic); stored = bytes written to allocations (the userspace "
          "codec's output, or the tensor for device-compressed policies); "
          "sectors = 32-byte sectors the device moved (Buddy's link: the "
          "buddy ones).  Ratio stored = logical offloaded / stored; ratio "
          "link = logical link bytes / sector bytes.  Time is the median "
          "iteration (first excluded), wall clock on 2 cores shared with "
          "other jobs: noisy.  "
          "cswap's link is " "2 GB/s (offload.link_gbps).", ""]
    curves, acc = {}, {}
    for mname in a.models.split(","):
        iters = a.iters_cnn if mname == "cnn" else a.iters
        res, base_peak = {}, 0
        for pol in a.policies.split(","):
            t0 = time.time()
            r = run(mname, pol, data, test, iters, calibs[mname], dev,
                    base_peak)
            if pol == "none":
                base_peak = r["stats"].peak_resident_bytes
            res[pol] = r
            print(f"{mname} {pol}: {time.time() - t0:.1f}s", file=sys.stderr,
                  flush=True)
        md += table(mname, res, iters)
        cs = res.get("cswap", {}).get("stats")
        if cs is not None and cs.cswap_decisions:
            acc[mname] = (cs.cswap_correct, cs.cswap_decisions)
        curves[mname] = {p: r["stats"].timeline for p, r in res.items()}
    md += anchors(calibs, acc)
    with open(os.path.join(a.out, "dnn.md"), "w") as f:
        f.write("\n".join(md) + "\n")
    plot(curves, os.path.join(a.out, "dnn.png"))
    dev.close()


def rae_cell(v):
    return "-" if v is None else f"{v:.3f}"


def anchors(calibs, acc):
    rae = "; ".join(
        f"{mname} " + ", ".join(
            f"{c} {rae_cell(m['rae']['compress'])}/"
            f"{rae_cell(m['rae']['decompress'])}/"
            f"{rae_cell(m['rae']['bytes'])}"
            for c, m in sorted(calib.items()))
        + (f" (accuracy {acc[mname][0]}/{acc[mname][1]} = "
           f"{100 * acc[mname][0] / acc[mname][1]:.1f}%)"
           if mname in acc else "")
        for mname, calib in calibs.items())
    right = sum(a for a, _ in acc.values())
    made = sum(n for _, n in acc.values())
    pooled = (f"; pooled, {right}/{made} = {100 * right / made:.1f}%"
              if made else "")
    # this run's figures, not a past run's: how far one miss moves a model
    few = ", ".join(f"{m} makes {n}, so one miss moves it by "
                    f"{100 / n:.0f} points"
                    for m, (_, n) in acc.items() if n < 30)
    return ["## Paper anchors", "",
            "- vDNN: 89-95% less average GPU memory, against Torch7's "
            "network-wide allocation.  Our baseline is PyTorch's eager "
            "freeing of saved activations (stated above), so our cut is "
            "peak/mean act. mem of vdnn-all against `none`; what stays is "
            "what backward has fetched and not yet freed, plus the prefetch "
            "window.",
            "- cDMA: ZVC averages 2.6x on activations (32-element windows, "
            "unquantised).  Our `cdma` is the device's ZVC quantised to "
            "Buddy's 0/8/32/64/96/128-byte entries at target 2x (sectors "
            "column); `cdma-rle`/`cdma-zlib` are cDMA's comparison codecs "
            "in userspace (ratio column).",
            "- CSWAP: decision accuracy 94.2% (RLE, CSR, LZ4, ZVC on a GPU). "
            "Ours: the cswap line above, CPU codecs timed natively on 2 "
            f"shared cores.  Calibration RAE (compress/decompress/bytes): "
            f"{rae}{pooled}.  Each model's codec model is fitted on its own "
            "activations (buddyctl calibrate --tensors); fitted on "
            "generated data the accuracy was 42-65%.  Where it still "
            "differs from 94.2%: the judge is the natively timed best of "
            "the last iteration on shared cores (scheduling noise on both "
            "sides); many tensors sit near a tie, where noise decides; "
            + (f"few decisions ({few}); " if few else "") +
            "and CSWAP's GPU codecs are fast next "
            "to its link, ours (~1 GB/s on a CPU) are not next to a 2 GB/s "
            "link, so fewer decisions are clear-cut (Documentation/dnn.rst).",
            "- Gist: lossless encodings 1.4x, with DPR 1.8x: our `gist` and "
            "`gist-dpr` ratio columns (Binarize, CSR and DPR16).", ""]


def plot(curves, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    n = len(curves)
    fig, axes = plt.subplots(n, 1, figsize=(10, 3.2 * n), squeeze=False)
    for ax, (mname, pols) in zip(axes[:, 0], curves.items()):
        whole = all(t[3] is not None for tl in pols.values() for t in tl)
        for pol, tl in pols.items():
            ax.plot([(t[3] - FLOOR if whole else t[1]) / MiB for t in tl],
                    label=pol, lw=1)
        ax.set_title(f"{mname}: " + ("whole-process live tracked memory "
                                      "above the floor"
                                      if whole else
                                      "saved activations in process memory")
                     + ", one iteration (vDNN Fig. 2)")
        ax.set_xlabel("pack / unpack event")
        ax.set_ylabel("MiB")
        ax.legend(fontsize=7, ncol=5)
    fig.tight_layout()
    fig.savefig(path, dpi=90)


if __name__ == "__main__":
    main()
