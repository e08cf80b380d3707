# SPDX-License-Identifier: GPL-2.0 OR MIT
"""Where the package finds its shared libraries: the environment variable
that names one, else the source tree's build/lib/, else the dynamic
loader's path."""
import ctypes
import os


def candidates(env, soname):
    """The paths to try for @soname: $@env alone when set."""
    named = os.environ.get(env)
    if named:
        return [named]
    here = os.path.dirname(os.path.abspath(__file__))
    tree = os.path.join(here, os.pardir, os.pardir, "build", "lib", soname)
    out = []
    if os.path.exists(tree):
        out.append(os.path.normpath(tree))
    out.append(soname)
    return out


def load(env, soname, what, make):
    """(ctypes.CDLL, path) of the first candidate that loads, else an
    ImportError naming every path tried, why each failed and how to get
    the library (@make: the make target that builds it)."""
    errors = []
    for path in candidates(env, soname):
        try:
            return ctypes.CDLL(path, use_errno=True), path
        except OSError as e:
            errors.append(f"{path}: {e}")
    raise ImportError(f"buddy: cannot load {what} (" + "; ".join(errors) +
                      f"); run '{make}' in the source tree, or "
                      f"'make install' and ldconfig, or set {env}")
