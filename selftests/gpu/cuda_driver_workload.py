#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""A CUDA program for test_cuda_driver.py, run under `buddyctl profile
--cuda=driver`: it asks the preloaded interposer for snapshots
(buddy_cuda_snapshot()) at chosen points and, while it waits there
(nothing else runs on the device), recomputes what the snapshot should
hold by its own means.

    python3 cuda_driver_workload.py torch OUT.json
    python3 cuda_driver_workload.py cupy OUT.json

torch: a small convolutional model, 6 training iterations, a snapshot at
the start of backward of iterations 2 and 5; its own walk of the caching
allocator (torch.cuda.memory_snapshot(): each segment is one cudaMalloc,
one allocation the interposer must have seen, or the cuMemMap ranges of
an expandable one).  cupy: a few 2 MiB arrays of known content from
cupy's pool (each a whole chunk, one cudaMalloc), one snapshot.  Each region is copied by itself (cuda_verify.copy_block(),
one copy, pageable memory), sized per entry with BPC through
libbuddycodec and rounded to Fig. 3's sizes here (cuda_verify.fig3_bytes).
OUT.json: {"pid", "snaps": [{"id", "regions": [{"addr", "size",
"entries", "fig3"}]}]}.
"""
import ctypes
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from cuda_verify import copy_block, fig3_bytes  # noqa: E402

from buddy import _codec  # noqa: E402


class Recorder:
    def __init__(self, out):
        self.out = out
        self.snaps = []
        self.sizer = _codec.Sizer()
        self.lib = ctypes.CDLL(None)
        self.snap = getattr(self.lib, "buddy_cuda_snapshot", None)
        if self.snap is None:
            sys.exit("cuda_driver_workload: buddy_cuda_snapshot() not found: "
                     "run it under buddyctl profile --cuda=driver")
        self.snap.restype = ctypes.c_int

    def take(self, regions, torch):
        """A snapshot now, then each of @regions ((addr, size)) sized here."""
        sid = self.snap()
        if sid < 0:
            sys.exit("cuda_driver_workload: the interposer took no snapshot")
        rows = []
        for addr, size in regions:
            n = size // _codec.ENTRY * _codec.ENTRY
            buf, _ = copy_block(torch, addr, n)
            _, bits = self.sizer.entries(buf.ctypes.data, n, 0)
            rows.append({"addr": addr, "size": size, "entries": n // 128,
                         "fig3": fig3_bytes(np.array(bits, dtype=np.int64))})
        self.snaps.append({"id": sid, "regions": rows})

    def save(self):
        with open(self.out, "w") as f:
            json.dump({"pid": os.getpid(), "snaps": self.snaps}, f)


def segments(torch):
    return [(s["address"], s["total_size"])
            for s in torch.cuda.memory_snapshot()]


def run_torch(rec):
    import torch
    torch.manual_seed(0)
    dev = torch.device("cuda")
    model = torch.nn.Sequential(
        torch.nn.Conv2d(3, 32, 3, padding=1), torch.nn.ReLU(),
        torch.nn.Conv2d(32, 64, 3, padding=1), torch.nn.ReLU(),
        torch.nn.AdaptiveAvgPool2d(8), torch.nn.Flatten(),
        torch.nn.Linear(64 * 64, 10)).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(64, 3, 64, 64, device=dev)
    y = torch.randint(0, 10, (64,), device=dev)
    for it in range(6):
        loss = torch.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        if it in (2, 5):
            torch.cuda.synchronize()
            rec.take(segments(torch), torch)
        loss.backward()
        opt.step()
    torch.cuda.synchronize()


def run_cupy(rec):
    """Arrays of 2 MiB from cupy's pool, no temporary larger: each is a
    whole chunk of the pool, one cudaMalloc."""
    import cupy
    n = 1 << 19
    arrays = [cupy.zeros(n, dtype=cupy.float32),
              cupy.arange(n, dtype=cupy.float32),
              cupy.maximum(cupy.sin(cupy.arange(n, dtype=cupy.float32)
                                    / 50), 0),
              cupy.random.default_rng(1).random(n // 2, dtype=cupy.float64)]
    cupy.cuda.runtime.deviceSynchronize()
    rec.take([(a.data.ptr, a.nbytes) for a in arrays], None)


def main():
    kind, out = sys.argv[1], sys.argv[2]
    rec = Recorder(out)
    if kind == "torch":
        run_torch(rec)
    elif kind == "cupy":
        run_cupy(rec)
    else:
        sys.exit(f"cuda_driver_workload: {kind}: not torch or cupy")
    rec.save()


if __name__ == "__main__":
    main()
