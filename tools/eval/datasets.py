# SPDX-License-Identifier: GPL-2.0
"""The data sets the evaluation, the demo and the host-root tests read: one
loader of the IDX files of Fashion-MNIST (Debian's dataset-fashion-mnist:
28x28 grey photographs of clothes, 10 classes; 60000 training and 10000
test images).

    import datasets
    images, labels = datasets.fashion_mnist("train", count=6000)

Arrays are numpy uint8, read-only views of the file's bytes; only the
items asked for are read, unless @read_all (the whole file is read, as a
program that holds it does).
"""
import gzip

import numpy as np

FASHION = "/usr/share/datasets/fashion-mnist"


def idx(path, count=None, read_all=False):
    """The items of the gzip'ed IDX file @path (images or labels) as a
    uint8 array of its dimensions; only the first @count when given."""
    with gzip.open(path, "rb") as f:
        if read_all:
            raw = f.read()
            f = None
        else:
            raw = f.read(4)
        ndims = raw[3]
        if not read_all:
            raw += f.read(4 * ndims)
        dims = [int.from_bytes(raw[4 + 4 * i:8 + 4 * i], "big")
                for i in range(ndims)]
        if count is not None:
            dims[0] = count
        per = int(np.prod(dims[1:])) if len(dims) > 1 else 1
        if read_all:
            data = np.frombuffer(raw, np.uint8, dims[0] * per, 4 + 4 * ndims)
        else:
            data = np.frombuffer(f.read(dims[0] * per), dtype=np.uint8)
    return data.reshape(dims)


def fashion_mnist(kind, count=None, read_all=False):
    """(images N x 28 x 28, labels N) of the "train" or "t10k" set."""
    return (idx(f"{FASHION}/{kind}-images-idx3-ubyte.gz", count, read_all),
            idx(f"{FASHION}/{kind}-labels-idx1-ubyte.gz", count, read_all))
