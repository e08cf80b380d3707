#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""make check-gpu: run every selftests/gpu/test_*.py, in name order.

    python3 selftests/gpu/run_gpu_tests.py [TIMEOUT_SECONDS]

The convention a test file here follows (test_NAME.py, one per subject:
test_offload_cuda.py, test_cuda_profile.py):
  - it is a program: "python3 test_NAME.py" prints TAP (python/tests/
    run.py's format) ending in a kselftest "# Totals:" line, and exits
    non-zero when a test failed;
  - without a CUDA device, or without torch, it prints its tests (or
    itself) as "ok N ... # SKIP reason" and exits 0: make check-gpu passes
    on a machine without a GPU;
  - the runner starts it with the Python that runs the runner
    (GPU_PYTHON), PYTHONPATH led by the tree's python/, and
    CUBLAS_WORKSPACE_CONFIG=:4096:8 set before torch starts CUDA; a file
    that compares results applies the rest of
    buddy.torch.deterministic_recipe() and checks first that the recipe
    repeats itself without the code under test;
  - the files share TIMEOUT_SECONDS (300: the stage gets 5 minutes on one
    H100), each getting what the ones before it left; one still running
    then is killed and counted as a failure: keep a file under 2 minutes;
  - what it writes goes under $OUT when that is set;
  - libbuddy may be missing on a GPU machine (buddy._lib.lib is None):
    compare against it where it is loaded, and say when it is not;
  - $BUDDYCTL is the buddyctl to run: the one given, else build/buddyctl
    when it runs here, else the static build/static/buddyctl (`make
    buddyctl-static` on a machine with the -dev packages; a GPU machine
    has no json-c, liblz4 or libnuma to run the dynamic one), else unset.

Each file's output is passed through after a "# FILE" line; a file that
ends without a "# Totals:" line (a crash, a kill) gets a failing one.
"""
import os
import signal
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, os.pardir, os.pardir))
FAILED = "# Totals: pass:0 fail:1 xfail:0 xpass:0 skip:0 error:0"


def run_one(path, env, deadline):
    """Run @path, passing its output through; 0 when it passed."""
    print(f"# {os.path.basename(path)}", flush=True)
    t0 = time.monotonic()
    p = subprocess.Popen([sys.executable, path], env=env, cwd=ROOT,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True, start_new_session=True)
    totals = False
    killed = False
    # A reader that cannot block past the deadline: the child is killed
    # when it passes, which ends its output.
    timer = None
    if deadline is not None:
        def kill():
            nonlocal killed
            killed = True
            os.killpg(p.pid, signal.SIGKILL)
        timer = threading.Timer(max(deadline - time.monotonic(), 0), kill)
        timer.start()
    for line in p.stdout:
        totals |= line.startswith("# Totals:")
        print(line, end="", flush=True)
    rc = p.wait()
    if timer is not None:
        timer.cancel()
    print(f"# {os.path.basename(path)}: {time.monotonic() - t0:.1f} s",
          flush=True)
    if killed:
        print(f"not ok - {os.path.basename(path)}: killed, out of the "
              "stage's time")
    if not totals or killed:
        print(f"# {os.path.basename(path)} exited {rc} without totals")
        print(FAILED, flush=True)
        return 1
    return rc != 0


def find_buddyctl():
    """The buddyctl the tests run (see the docstring), or None."""
    given = os.environ.get("BUDDYCTL")
    if given:
        return given
    for b in (os.path.join(ROOT, "build", "buddyctl"),
              os.path.join(ROOT, "build", "static", "buddyctl")):
        try:
            r = subprocess.run([b, "--version"], capture_output=True,
                               timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            continue
        if r.returncode == 0:
            return b
    return None


def main():
    limit = float(sys.argv[1]) if len(sys.argv) > 1 else None
    deadline = time.monotonic() + limit if limit else None
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [os.path.join(ROOT, "python")] +
        [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    env.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    b = find_buddyctl()
    if b:
        env["BUDDYCTL"] = b
    print(f"# buddyctl: {b or 'none that runs here (make buddyctl-static)'}",
          flush=True)
    files = sorted(f for f in os.listdir(HERE)
                   if f.startswith("test_") and f.endswith(".py"))
    print("TAP version 13")
    bad = 0
    for f in files:
        bad += run_one(os.path.join(HERE, f), env, deadline)
    if not files:
        print(FAILED)
        return 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
