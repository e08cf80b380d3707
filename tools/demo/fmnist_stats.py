# SPDX-License-Identifier: GPL-2.0
"""make demo's program for `buddyctl run`: statistics of the Fashion-MNIST
test images (Debian's dataset-fashion-mnist) in numpy, with a working set
several times the demo's device pool.  Prints the results and a SHA-256 of
them, which must be the same in ordinary memory and in buddy memory.

  fmnist_stats.py IDX3_GZ_FILE
"""
import hashlib
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                os.pardir, "eval"))
import datasets  # noqa: E402

imgs = datasets.idx(sys.argv[1], read_all=True)
n = len(imgs)
imgs = imgs.reshape(n, -1)
x = imgs.astype(np.float32) / 255.0          # 10000 x 784 floats: 30 MiB
mean = x.mean(axis=0)
xc = x - mean                                # another 30 MiB
cov = xc.T @ xc / (n - 1)                    # 784 x 784
w = np.linalg.eigvalsh(cov)[::-1]
proj = xc @ np.linalg.eigh(cov)[1][:, ::-1][:, :16]
hist = np.bincount(imgs.ravel(), minlength=256)
out = {
    "images": n,
    "mean_pixel": round(float(mean.mean()), 12),
    "top_eigenvalues": [round(float(v), 9) for v in w[:5]],
    "explained_16": round(float(w[:16].sum() / w.sum()), 12),
    "proj_norm": round(float(np.linalg.norm(proj)), 6),
    "zero_pixels": int(hist[0]),
}
for k, v in out.items():
    print(f"{k}: {v}")
print("sha256:", hashlib.sha256(repr(out).encode()).hexdigest())
