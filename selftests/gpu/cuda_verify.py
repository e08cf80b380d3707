#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""An independent recomputation of each snapshot buddy.cuda takes, inside
the profiled program, while it still waits at the start of backward.

    python3 cuda_verify.py OUT.json FIXTURE_DIR -- SCRIPT [ARG]...

runs SCRIPT (as __main__) in this process, which `python3 -m buddy.cuda
run` started with the hook; at every snapshot, after the hook sized it
and before it returns to the program, this module enumerates the
allocator again (torch.cuda.memory_snapshot(), its own walk, not
snapshot.py), copies every block by itself to pageable host memory
(cupy's cudaMemcpy when cupy is installed, else torch's .cpu() of a view,
one block at a time, no pinned staging, no pieces), sizes each entry with
BPC through libbuddycodec's per-entry call, rounds to Fig. 3's sizes here
(numpy), and checks 200 random non-zero entries against the spec's model
(selftests/tools/codec_model.py, no code shared with core/).  Per
snapshot it appends to OUT.json: the snapshot id, the backward pass, the
Fig. 3 BPC ratio of the active blocks (storage unit) and of every block
(segment unit), the blocks and bytes, the model mismatches.  The first
snapshot is also saved, frames and all, as FIXTURE_DIR/snapshot-TORCH-
SCRIPTARGS.json: a recorded fixture for the tests without a GPU.
"""
import ctypes
import json
import os
import random
import runpy
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "selftests", "tools"))
import codec_model  # noqa: E402

from buddy import _codec  # noqa: E402
from buddy.cuda import hook as cuda_hook  # noqa: E402

STEPS = np.array([8, 16, 32, 64, 80, 96, 128])
SAMPLE = 200


def copy_block(torch, addr, n):
    """The @n bytes at device address @addr, in a new numpy array."""
    out = np.empty(n, dtype=np.uint8)
    try:
        import cupy
        cupy.cuda.runtime.memcpy(out.ctypes.data, addr, n,
                                 cupy.cuda.runtime.memcpyDeviceToHost)
        return out, "cupy"
    except ImportError:
        pass
    view = torch.as_tensor(cuda_hook._CudaArray(addr, n))
    out[:] = view.cpu().numpy()
    return out, "torch"


def fig3_bytes(bits):
    nbytes = (bits.astype(np.int64) + 7) // 8
    f3 = STEPS[np.minimum(np.searchsorted(STEPS, nbytes), len(STEPS) - 1)]
    return int(np.where(bits == 0, 0, f3).sum())


class Verifier:
    def __init__(self, out, fixdir, tag):
        self.out, self.fixdir, self.tag = out, fixdir, tag
        self.sizer = None
        self.rng = random.Random(1)
        self.results = []

    def __call__(self, hook, snap, blocks, stats):
        torch = hook.torch
        if self.sizer is None:
            self.sizer = _codec.Sizer(0)
        segs = torch.cuda.memory_snapshot()
        if not self.results and self.fixdir:
            self.save_fixture(torch, segs)
        units = {"blocks": [0, 0], "segments": [0, 0]}
        nblk = total = mismatch = checked = 0
        how = "-"
        samples = []
        for seg in segs:
            at = seg["address"]
            for b in seg["blocks"]:
                addr = b.get("address", at)
                size = b["size"]
                at = addr + size
                nblk += 1
                total += size
                data, how = copy_block(torch, addr, size)
                n = size // 128
                bits = np.empty(n, dtype=np.uint16)
                self.sizer.entries_into(data.ctypes.data, size, 0, 0,
                                        bits.ctypes.data)
                f3 = fig3_bytes(bits)
                for u in ("segments",) + (("blocks",) if b["state"] ==
                                          "active_allocated" else ()):
                    units[u][0] += n
                    units[u][1] += f3
                nz = np.nonzero(bits)[0]
                if len(nz):
                    for k in self.rng.sample(list(nz[:4096]), min(2, len(nz))):
                        samples.append((bytes(data[k * 128:(k + 1) * 128]),
                                        int(bits[k])))
        for e, got in self.rng.sample(samples, min(SAMPLE, len(samples))):
            checked += 1
            if codec_model.bpc_bits(e) != got:
                mismatch += 1
        ratio = {u: (128 * v[0] / v[1] if v[1] else float("inf"))
                 for u, v in units.items()}
        self.results.append({
            "sid": hook.nsnap, "progress": hook.progress, "blocks": ratio[
                "blocks"], "segments": ratio["segments"], "nblocks": nblk,
            "bytes": total, "model_checked": checked,
            "model_mismatch": mismatch, "copy": how,
            "hook_blocks": len(blocks)})
        with open(self.out, "w") as f:
            json.dump(self.results, f, indent=1)

    def save_fixture(self, torch, segs):
        trimmed = []
        for s in segs:
            s = dict(s)
            s["blocks"] = [dict(b, frames=b.get("frames", [])[:12])
                           for b in s["blocks"]]
            trimmed.append(s)
        os.makedirs(self.fixdir, exist_ok=True)
        name = f"snapshot-{torch.__version__}-{self.tag}.json"
        with open(os.path.join(self.fixdir, name), "w") as f:
            json.dump({"torch": torch.__version__,
                       "torch_dir": os.path.dirname(torch.__file__),
                       "note": "recorded by selftests/gpu/cuda_verify.py",
                       "segments": trimmed}, f, default=list)


def main():
    if len(sys.argv) < 5 or sys.argv[3] != "--":
        sys.exit("usage: cuda_verify.py OUT.json FIXTURE_DIR -- SCRIPT [ARG]...")
    out, fixdir, script = sys.argv[1], sys.argv[2], sys.argv[4]
    h = cuda_hook.current()
    if h is None:
        sys.exit("cuda_verify.py: the buddy.cuda hook is not installed "
                 "(run under python3 -m buddy.cuda run)")
    tag = "-".join(a.lstrip("-") for a in sys.argv[5:7]) or "run"
    h.callbacks.append(Verifier(out, fixdir, tag))
    sys.argv = [script] + sys.argv[5:]
    runpy.run_path(script, run_name="__main__")


if __name__ == "__main__":
    main()
