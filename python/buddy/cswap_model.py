# SPDX-License-Identifier: GPL-2.0 OR MIT
"""buddy.cswap_model - CSWAP's codec cost model, made on this machine when
a cswap policy has none, and kept in a cache file.

The model is buddyctl calibrate's (tools/buddyctl/calibrate.c): per codec,
compression time, decompression time and encoded bytes, each fitted by
least squares as c0 + c1*size + c2*sparsity + c3*size*sparsity, with the
relative absolute error of a fit on the first run of every point measured
on the second.  The file written is a calibrate model file, so
buddy.torch.load_calibration() reads either.

    calibrate_cpu(names)     libbuddy's codecs (buddy.Codec), thread CPU
                             time, fastest of three, as calibrate does
    calibrate_gpu(device)    the torch-op encoders of buddy.torch_codecs
                             on the GPU, timed with CUDA events
                             (calibrate_torch() on any device)
    cached(kind, make)       the model of this machine from the cache
                             ($BUDDY_CACHE_DIR, else $XDG_CACHE_HOME/buddy,
                             else ~/.cache/buddy), made and written once
    link_bandwidth(device)   pinned host <-> device copy speed, measured
"""
import hashlib
import json
import os
import platform
import time

import torch

SIZES = (256 << 10, 1 << 20, 4 << 20)
SPARSITIES = (0.0, 0.25, 0.5, 0.75, 0.95)
RUNS = 2                     # each point twice: a fit, and its error
FORMAT = "buddy-calibration"


def _activation(nbytes, sparsity, gen, device="cpu"):
    """float32 values as a ReLU leaves them: @sparsity of them zero."""
    n = nbytes // 4
    x = torch.randn(n, generator=gen).abs_() + 0.01
    x[torch.rand(n, generator=gen) < sparsity] = 0
    return x.to(device)


def _fit(rows):
    """(coef, rae) of y = c0 + c1*size + c2*sp + c3*size*sp over @rows of
    (size, sparsity, y), the runs of a point next to each other."""
    a = torch.tensor([[1.0, s, p, s * p] for s, p, _ in rows],
                     dtype=torch.float64)
    y = torch.tensor([[r[2]] for r in rows], dtype=torch.float64)
    # Scaled columns keep the normal equations well conditioned.
    scale = a.abs().amax(0).clamp_(min=1e-30)
    coef = torch.linalg.lstsq(a / scale, y).solution.squeeze(1) / scale
    first = torch.linalg.lstsq(a[0::RUNS] / scale, y[0::RUNS]).solution
    pred = (a[1::RUNS] / scale) @ first
    rest = y[1::RUNS]
    den = float((rest - rest.mean()).abs().sum())
    rae = float((pred - rest).abs().sum()) / den if den > 0 else None
    return [float(c) for c in coef], rae


def model_doc(samples, data):
    """A calibrate model file's document from @samples: {codec: [(size,
    sparsity, compress s, decompress s, bytes)]}."""
    codecs = []
    for name, rows in samples.items():
        entry = {"name": name, "samples": [list(r) for r in rows]}
        for k, what in ((2, "compress"), (3, "decompress"), (4, "bytes")):
            coef, rae = _fit([(r[0], r[1], r[k]) for r in rows])
            entry[what] = {"coef": coef, "rae": rae}
        codecs.append(entry)
    return {"format": FORMAT, "version": 1,
            "features": ["1", "size", "sparsity", "size*sparsity"],
            "samples_columns": ["size", "sparsity", "compress",
                                "decompress", "bytes"],
            "data": data, "codecs": codecs}


def calibrate_cpu(names, seed=14):
    """Time libbuddy's codecs @names on generated activations."""
    import buddy
    gen = torch.Generator().manual_seed(seed)
    samples = {n: [] for n in names}
    codecs = {n: buddy.Codec(n) for n in names}
    for size in SIZES:
        for sp in SPARSITIES:
            x = _activation(size, sp, gen)
            out = torch.empty_like(x)
            for name in names:
                c = codecs[name]
                for _ in range(RUNS):
                    te = td = None
                    for _ in range(3):
                        t0 = time.thread_time()
                        enc = c.encode(x)
                        t1 = time.thread_time()
                        c.decode(enc, out)
                        t2 = time.thread_time()
                        te = t1 - t0 if te is None else min(te, t1 - t0)
                        td = t2 - t1 if td is None else min(td, t2 - t1)
                    samples[name].append((size, sp, te, td, len(enc)))
    return model_doc(samples, "generated")


def time_codec(name, b, out):
    """(encode seconds, decode seconds, stream bytes) of the torch-op
    encoder @name on the bytes @b where they are (CUDA events on a GPU,
    the wall clock on the CPU); @out receives the decoded bytes."""
    from . import torch_codecs as tc
    if b.device.type == "cuda":
        e = [torch.cuda.Event(enable_timing=True) for _ in range(3)]
        e[0].record()
        enc, index = tc.encode(name, b)
        e[1].record()
        tc.decode(name, enc, out, index)
        e[2].record()
        e[2].synchronize()
        return (e[0].elapsed_time(e[1]) / 1e3,
                e[1].elapsed_time(e[2]) / 1e3, enc.numel())
    t0 = time.perf_counter()
    enc, index = tc.encode(name, b)
    t1 = time.perf_counter()
    tc.decode(name, enc, out, index)
    return t1 - t0, time.perf_counter() - t1, enc.numel()


def calibrate_torch(device, names=("zvc", "csr"), seed=14):
    """Time the torch-op encoders @names on @device (on a GPU up to 64 MiB,
    where they run at memory speed; the first run of a point warms up)."""
    from . import torch_codecs as tc
    gen = torch.Generator().manual_seed(seed)
    samples = {n: [] for n in names}
    device = torch.device(device)
    sizes = SIZES + (16 << 20, 64 << 20) if device.type == "cuda" else \
        tuple(s // 4 for s in SIZES)
    for size in sizes:
        for sp in SPARSITIES:
            b = tc.as_bytes(_activation(size, sp, gen, device))
            out = torch.empty_like(b)
            for name in names:
                for run in range(RUNS + 1):
                    te, td, n = time_codec(name, b, out)
                    if run:
                        samples[name].append((size, sp, te, td, n))
    where = torch.cuda.get_device_name(device) \
        if device.type == "cuda" else "the CPU"
    return model_doc(samples, f"generated, torch encoders on {where}")


def calibrate_gpu(device):
    """The GPU encoders' model on the CUDA device @device."""
    return calibrate_torch(device)


def link_bandwidth(device, nbytes=64 << 20):
    """(device-to-host, host-to-device) bytes per second of pinned copies
    on @device, the faster of three each."""
    dev = torch.empty(nbytes, dtype=torch.uint8, device=device)
    host = torch.empty(nbytes, dtype=torch.uint8, pin_memory=True)
    out = []
    for dst, src in ((host, dev), (dev, host)):
        best = None
        for _ in range(3):
            e0 = torch.cuda.Event(enable_timing=True)
            e1 = torch.cuda.Event(enable_timing=True)
            e0.record()
            dst.copy_(src, non_blocking=True)
            e1.record()
            e1.synchronize()
            dt = e0.elapsed_time(e1) / 1e3
            best = dt if best is None else min(best, dt)
        out.append(nbytes / best)
    return tuple(out)


def cache_dir():
    d = os.environ.get("BUDDY_CACHE_DIR")
    if d:
        return d
    base = os.environ.get("XDG_CACHE_HOME") or \
        os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "buddy")


def machine_key(kind, device=None):
    """What the model of @kind ("cpu": libbuddy's codecs; "gpu", "torch-cpu":
    the torch encoders) depends on: the processor or GPU, torch, and for
    libbuddy's codecs the library that runs them."""
    parts = [kind, platform.machine(), platform.node(), torch.__version__]
    if kind == "gpu":
        parts.append(torch.cuda.get_device_name(device))
    else:
        try:
            with open("/proc/cpuinfo") as f:
                parts += [ln for ln in f if ln.startswith("model name")][:1]
        except OSError:
            pass
    if kind == "cpu":
        from . import _lib
        parts.append(str(_lib.path))
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


def cached(kind, make, device=None):
    """(path, made): the cached model file of this machine for @kind
    ("cpu" or "gpu"), made with make() and written when there is none."""
    path = os.path.join(cache_dir(),
                        f"cswap-{kind}-{machine_key(kind, device)}.json")
    if os.path.exists(path):
        return path, False
    doc = make()
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "w") as f:
        json.dump(doc, f)
    os.replace(tmp, path)
    return path, True
