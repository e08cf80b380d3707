# SPDX-License-Identifier: GPL-2.0 OR MIT
"""Loads buddy.cuda's hook into every Python process of a profiled run.

`python3 -m buddy.cuda run` puts this directory first on PYTHONPATH, so
that Python imports this file as its sitecustomize; it first runs the
sitecustomize this one shadows (the distribution's, Debian's and
Ubuntu's /usr/lib/python3.X/sitecustomize.py, or a virtual
environment's), as if this file were not there, then installs the hook
when BUDDY_CUDA_DIR is set.  A failure never stops the program.
"""
import importlib.machinery
import importlib.util
import os
import sys


def _chain():
    here = os.path.dirname(os.path.abspath(__file__))
    rest = [p for p in sys.path
            if os.path.abspath(p or os.curdir) != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    if spec is None or spec.loader is None or \
       os.path.abspath(spec.origin or "") == os.path.abspath(__file__):
        return
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)


def _hook():
    if not os.environ.get("BUDDY_CUDA_DIR"):
        return
    from buddy.cuda import hook
    hook.install_from_env()


for _step in (_chain, _hook):
    try:
        _step()
    except Exception as _e:      # never the program's problem
        sys.stderr.write(f"buddy.cuda: sitecustomize: {_step.__name__}: "
                         f"{type(_e).__name__}: {_e}\n")
