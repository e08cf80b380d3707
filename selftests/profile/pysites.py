# SPDX-License-Identifier: GPL-2.0
"""Two numpy arrays of one size, made on two lines of two functions, live
through a snapshot: `buddyctl profile` names each by its Python line."""
import ctypes

import numpy as np


def f():
    return np.ones(4 << 20)     # pysites: f


def g():
    return np.ones(4 << 20)     # pysites: g


def main():
    a = f()
    b = g()
    snap = ctypes.CDLL(None).buddyprof_snapshot
    print("pysites: snapshot", snap(), int(a.sum() + b.sum()))


main()
