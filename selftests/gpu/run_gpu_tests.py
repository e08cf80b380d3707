#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""make check-gpu: every selftests/gpu/test_*.py on the CUDA device, as TAP
with a kselftest "# Totals:" line (python/tests/run.py's format).

    python3 selftests/gpu/run_gpu_tests.py [-k PATTERN]

Without a CUDA device (or without torch) nothing is imported: each test
file is one "ok N - FILE # SKIP reason" line and the run passes.

The convention for a test file here, test_NAME.py (one per subject, e.g.
test_offload_cuda.py, test_cuda_profile.py):
  - a unittest module; the runner puts the tree's python/ (the buddy
    package) and selftests/gpu/ (gpu_common.py) first on sys.path;
  - it does not look for a GPU itself: it only runs where one is;
  - CUBLAS_WORKSPACE_CONFIG=:4096:8 is set before torch starts CUDA;
    gpu_common.deterministic() applies the rest of the recipe under which
    cuDNN and cuBLAS repeat themselves bit for bit, and a test that
    compares results checks first that the recipe holds without the code
    under test;
  - the whole stage gets 5 minutes on one H100 (make check-gpu kills it
    after that): a file should take under 2 minutes; the runner prints
    each test's seconds as a TAP comment;
  - files it writes go under $OUT when that is set, else build/gpu/;
  - libbuddy may be missing on a GPU machine (buddy._lib.lib is None):
    compare against it where it is, and say when it is not.
"""
import os
import sys
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, os.pardir, os.pardir))
sys.path[:0] = [os.path.join(ROOT, "python"), HERE,
                os.path.join(ROOT, "python", "tests")]
os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")

from run import TapResult          # noqa: E402  (python/tests/run.py)


def no_gpu_reason():
    """Why the tests cannot run here, or None."""
    try:
        import torch
    except ImportError as e:
        return f"no torch for {sys.executable} ({e})"
    if not torch.cuda.is_available():
        built = torch.version.cuda
        return (f"no CUDA device (torch {torch.__version__}, " +
                (f"CUDA {built}: none visible)" if built else
                 "built without CUDA)"))
    return None


class TimedResult(TapResult):
    def startTest(self, test):
        super().startTest(test)
        self._t0 = time.monotonic()

    def stopTest(self, test):
        super().stopTest(test)
        print(f"# {test.id()}: {time.monotonic() - self._t0:.1f} s",
              flush=True)


def main():
    print("TAP version 13")
    files = sorted(f for f in os.listdir(HERE)
                   if f.startswith("test_") and f.endswith(".py"))
    why = no_gpu_reason()
    r = TimedResult()
    if why is not None:
        for f in files:
            r.nskip += 1
            r.n += 1
            print(f"ok {r.n} - {f} # SKIP {why}")
        r.finish()
        return 0
    import torch
    print(f"# {torch.cuda.get_device_name(0)}, torch {torch.__version__}, "
          f"CUDA {torch.version.cuda}", flush=True)
    loader = unittest.TestLoader()
    if len(sys.argv) > 2 and sys.argv[1] == "-k":
        loader.testNamePatterns = [f"*{sys.argv[2]}*"]
    for f in files:
        try:
            suite = loader.loadTestsFromName(f[:-3])
        except Exception as e:        # an import error is one failure
            r.n += 1
            r.nfail += 1
            print(f"not ok {r.n} - {f}: {type(e).__name__}: {e}")
            continue
        suite.run(r)
    return r.finish()


if __name__ == "__main__":
    sys.exit(main())
