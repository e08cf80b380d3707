# SPDX-License-Identifier: GPL-2.0
"""buddy.live_bytes(): the whole process's live bytes as the profiler's
interposer (libbuddyprof.so, tools/profile/interposer/profile_table.c) tracks them, and
buddy.torch's accounting of them at every pack and unpack.

A child python3 runs under 'buddyctl profile --no-timer' (the interposer
preloaded), allocates tensors and arrays of known sizes and prints what
buddy.live_bytes() read around each; this process checks the readings move
by exactly those sizes.  buddyctl and libbuddyprof.so come from the tree's
build/ ($BUDDYCTL overrides); the test skips, saying so, without them.
"""
import json
import os
import subprocess
import sys
import textwrap
import unittest

try:
    import torch
except ImportError:
    torch = None

import buddy

HERE = os.path.dirname(os.path.abspath(__file__))
TREE = os.path.normpath(os.path.join(HERE, os.pardir, os.pardir))
BUDDYCTL = os.environ.get("BUDDYCTL", os.path.join(TREE, "build", "buddyctl"))
PROFLIB = os.path.join(os.path.dirname(BUDDYCTL), "libbuddyprof.so")

CHILD = textwrap.dedent("""
    import json, sys
    sys.path.insert(0, sys.argv[1])
    import numpy as np
    import torch
    import buddy
    import buddy.torch as bt

    torch.set_num_threads(1)
    out = {}

    def moved(make, size):
        # A Python arena (256 KiB) may be mapped between the two readings:
        # the exact size in one of three tries.
        got = []
        for _ in range(3):
            a = buddy.live_bytes()[0]
            x = make(size)
            b = buddy.live_bytes()[0]
            del x
            c = buddy.live_bytes()[0]
            got.append((b - a, c - a))
        return got

    out["torch"] = moved(lambda n: torch.empty(n, dtype=torch.uint8),
                         24 << 20)
    out["torch_f32"] = moved(lambda n: torch.zeros(n // 4), 40 << 20)
    out["numpy"] = moved(lambda n: np.ones(n, dtype=np.uint8), 5 << 20)
    out["small"] = moved(lambda n: torch.empty(n, dtype=torch.uint8), 1024)
    live, peak = buddy.live_bytes()
    out["peak_ge_live"] = peak >= live

    # offload()'s accounting: whole-process bytes at every pack and unpack.
    torch.manual_seed(1)
    model = torch.nn.Sequential(torch.nn.Conv2d(1, 8, 3, padding=1),
                                torch.nn.ReLU(), torch.nn.Flatten(),
                                torch.nn.Linear(8 * 32 * 32, 4))
    x = torch.randn(64, 1, 32, 32)
    off = bt.offload(policy="none")
    with off:
        loss = model(x).sum()
    loss.backward()
    st = off.stats
    out["timeline"] = [t[3] for t in st.timeline]
    out["peak_process"] = st.peak_process_bytes
    out["mean_process"] = st.mean_process()
    print("LIVE " + json.dumps(out))
""")


@unittest.skipIf(torch is None, "no torch for /usr/bin/python3 (python3-torch)")
class LiveBytes(unittest.TestCase):
    def test_none_without_interposer(self):
        if "libbuddyprof" in os.environ.get("LD_PRELOAD", ""):
            self.skipTest("this process runs under the interposer")
        self.assertIsNone(buddy.live_bytes())

    def test_live_bytes_move_by_the_allocation(self):
        if not (os.access(BUDDYCTL, os.X_OK) and os.path.exists(PROFLIB)):
            self.skipTest(f"no {BUDDYCTL} or {PROFLIB} (make tools)")
        # policy "none" stores nothing: the in-process device serves.
        env = dict(os.environ, BUDDY_DEVICE="inproc:device_mb=16")
        r = subprocess.run(
            [BUDDYCTL, "profile", "--no-timer", "--no-unwind", "-q",
             "-o", os.devnull, "--", sys.executable, "-c", CHILD,
             os.path.join(TREE, "python")],
            capture_output=True, text=True, timeout=300, env=env)
        self.assertEqual(0, r.returncode, r.stderr[-2000:])
        line = [ln for ln in r.stdout.splitlines() if ln.startswith("LIVE ")]
        self.assertEqual(1, len(line), r.stdout[-2000:] + r.stderr[-2000:])
        out = json.loads(line[0][5:])
        for key, size in (("torch", 24 << 20), ("torch_f32", 40 << 20),
                          ("numpy", 5 << 20)):
            with self.subTest(key):
                # torch's CPU allocator (posix_memalign) and numpy's
                # malloc are seen at their exact size, and freed again.
                self.assertIn([size, 0], out[key], out[key])
        # Below the profiler's --min-size (64K): not tracked.
        self.assertIn([0, 0], out["small"], out["small"])
        self.assertTrue(out["peak_ge_live"])
        tl = out["timeline"]
        self.assertTrue(tl)
        self.assertTrue(all(isinstance(v, int) and v > 0 for v in tl), tl)
        # The conv input (256 KiB) and the ReLU output (2 MiB) are alive
        # at the last pack: the process holds at least those.
        self.assertGreaterEqual(out["peak_process"],
                                (64 * 32 * 32 * 4) * (1 + 8))
        self.assertEqual(max(tl), out["peak_process"])
        self.assertAlmostEqual(sum(tl) / len(tl), out["mean_process"])


if __name__ == "__main__":
    unittest.main()
