#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""compute.py OUT.json - numpy and torch computations for make check-hostroot.

Run once on the host and once in the QEMU guest through
`scripts/guest/run.sh --host-root` (chroot /host /usr/bin/python3 ...);
selftests/hostroot/check.py compares the two files.  Everything runs in one
process so torch is imported once per guest boot (30-50 s under TCG).

Inputs come from numpy's PCG64 generator as small integers scaled by powers
of two, so they are bit-identical everywhere; results whose exact value does
not depend on the BLAS kernel or SIMD path chosen for the CPU (integer-valued
float64 products and sums, integer ops) are compared exactly ("exact"), the
others within a relative tolerance ("close", with the tolerance written
here).  One thread everywhere: a reduction's order must not depend on the
number of CPUs.

OUT.json: {"meta": {...}, "results": {name: {"kind", "rtol", "dtype",
"shape", "values"}}, "timing": {step: seconds}}.
"""
import json
import os
import sys
import time

for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[v] = "1"

timing = {}
results = {}


def step(name, t0):
    timing[name] = round(time.monotonic() - t0, 3)


def put(name, arr, kind, rtol=0.0):
    """Record array-like ARR (numpy or torch) under NAME."""
    if hasattr(arr, "detach"):
        arr = arr.detach().cpu().numpy()
    a = np.asarray(arr)
    results[name] = {
        "kind": kind,
        "rtol": rtol,
        "dtype": str(a.dtype),
        "shape": list(a.shape),
        # float32 -> Python float is exact; json writes repr (round trip).
        "values": [x.item() for x in a.reshape(-1)],
    }


def ints(rng, shape, lo=-64, hi=64, scale=64.0):
    """Integers in [lo, hi) divided by SCALE (a power of two): exact."""
    return rng.integers(lo, hi, size=shape).astype(np.float64) / scale


t = time.monotonic()
import numpy as np  # noqa: E402
step("import numpy", t)

# --- numpy ---------------------------------------------------------------
t = time.monotonic()
rng = np.random.default_rng(20261125)
a = ints(rng, (64, 48))
b = ints(rng, (48, 32))
# |a_ij b_jk| < 1, multiples of 2^-12, 48 terms: exact in float64.
put("np.matmul_exact", a @ b, "exact")
k = rng.integers(-1000, 1000, size=4096)
put("np.int_sort_cumsum", np.cumsum(np.sort(k)), "exact")
put("np.int_unique_counts", np.unique(k % 97, return_counts=True)[1], "exact")
m = ints(rng, (32, 32)) + 32 * np.eye(32)
rhs = ints(rng, (32,))
put("np.linalg_solve", np.linalg.solve(m, rhs), "close", 1e-9)
put("np.svd_values", np.linalg.svd(ints(rng, (24, 16)), compute_uv=False),
    "close", 1e-9)
sig = ints(rng, (256,))
put("np.fft_abs", np.abs(np.fft.rfft(sig)), "close", 1e-9)
x = np.linspace(-4, 4, 1001)
put("np.exp_sin", np.exp(x) * np.sin(3 * x), "close", 1e-12)
put("np.float32_dot", ints(rng, (512,)).astype(np.float32) @
    ints(rng, (512, 8)).astype(np.float32), "close", 1e-5)
step("numpy computations", t)

# --- torch ---------------------------------------------------------------
t = time.monotonic()
import torch  # noqa: E402
step("import torch", t)

t = time.monotonic()
torch.set_num_threads(1)
ta = torch.from_numpy(ints(rng, (40, 56)))
tb = torch.from_numpy(ints(rng, (56, 24)))
put("torch.matmul_exact", ta @ tb, "exact")
ti = torch.from_numpy(rng.integers(0, 50, size=2000))
put("torch.bincount", torch.bincount(ti), "exact")
put("torch.argsort_stable", torch.sort(ti, stable=True).indices, "exact")
s = ints(rng, (20, 20))
put("torch.eigvalsh", torch.linalg.eigvalsh(torch.from_numpy(s + s.T)),
    "close", 1e-9)
img = torch.from_numpy(ints(rng, (4, 3, 16, 16)).astype(np.float32))
w = torch.from_numpy(ints(rng, (8, 3, 3, 3)).astype(np.float32))
put("torch.conv2d", torch.nn.functional.conv2d(img, w, padding=1),
    "close", 1e-5)
step("torch small ops", t)

# A 2-conv CNN (the shape of the Fashion-MNIST one of tools/eval), batch 64, on
# real Fashion-MNIST images (dataset-fashion-mnist, the first test images:
# bytes / 256, exact in float32) from fixed initial weights; a few SGD
# steps, a new batch each.
t = time.monotonic()
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                os.pardir, os.pardir, "tools", "eval"))
import datasets  # noqa: E402


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = torch.nn.Conv2d(1, 8, 3, padding=1)
        self.c2 = torch.nn.Conv2d(8, 16, 3, padding=1)
        self.fc = torch.nn.Linear(16 * 7 * 7, 10)

    def forward(self, v):
        v = torch.nn.functional.max_pool2d(torch.relu(self.c1(v)), 2)
        v = torch.nn.functional.max_pool2d(torch.relu(self.c2(v)), 2)
        return self.fc(v.flatten(1))


net = Net()
with torch.no_grad():
    for p in net.parameters():
        p.copy_(torch.from_numpy(ints(rng, tuple(p.shape), -16, 16, 256.0)))
steps = 8
images, labels = datasets.fashion_mnist("t10k", 64 * steps)
opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
losses = []
for k in range(steps):
    xb = torch.from_numpy(images[64 * k:64 * (k + 1)].astype(np.float32)
                          / 256.0).unsqueeze(1)
    yb = torch.from_numpy(labels[64 * k:64 * (k + 1)].astype(np.int64))
    opt.zero_grad()
    loss = torch.nn.functional.cross_entropy(net(xb), yb)
    loss.backward()
    opt.step()
    losses.append(loss.item())
put("torch.cnn_losses", np.array(losses), "close", 1e-4)
put("torch.cnn_fc_weight_sums", net.fc.weight.detach().sum(dim=1), "close", 1e-4)
with torch.no_grad():
    put("torch.cnn_logits", net(xb[:8]), "close", 1e-4)
step(f"torch cnn ({steps} iterations, batch 64)", t)

out = {
    "meta": {
        "python": sys.version.split()[0],
        "numpy": np.__version__,
        "torch": torch.__version__,
        "torch_threads": torch.get_num_threads(),
    },
    "results": results,
    "timing": timing,
}
with open(sys.argv[1], "w") as f:
    json.dump(out, f, indent=1)
    f.write("\n")
