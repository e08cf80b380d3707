# SPDX-License-Identifier: GPL-2.0
"""make eval-dnn-gpu's script (tools/eval/dnn_gpu.py) in its dry run on
CPU tensors, tiny models: every part runs, the report has a row per model
and policy and judges every goal; without a GPU the CUDA run says SKIP."""
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", ".."))
SCRIPT = os.path.join(ROOT, "tools", "eval", "dnn_gpu.py")

try:
    import torch
except ImportError:
    torch = None


@unittest.skipIf(torch is None, "no torch for /usr/bin/python3 (python3-torch)")
class EvalDnnGpu(unittest.TestCase):
    def run_part(self, out, *args):
        env = dict(os.environ, BUDDY_CACHE_DIR=os.path.join(out, "cache"))
        r = subprocess.run([sys.executable, SCRIPT, "--out", out] +
                           list(args), env=env, capture_output=True,
                           text=True, timeout=600)
        self.assertEqual(0, r.returncode, r.stdout + r.stderr)
        return r.stdout

    def test_dry_run_on_cpu(self):
        with tempfile.TemporaryDirectory() as out:
            tiny = ["--device", "cpu", "--tiny", "--warmup", "1", "--steps",
                    "1"]
            self.run_part(out, "--part", "measure", *tiny)
            self.run_part(out, "--part", "capacity", "--models",
                          "gpt2,vgg16bn", "--policies", "none,vdnn-dyn",
                          "--max-factor", "2", *tiny)
            text = self.run_part(out, "--part", "report", *tiny)
            with open(os.path.join(out, "dnn-gpu.md")) as f:
                md = f.read()
            for model in ("resnet50", "resnet50-bf16", "vgg16bn", "gpt2"):
                self.assertIn(f"## {model} ", md)
            for policy in ("none", "save_on_cpu", "vdnn-all", "vdnn-dyn",
                           "cdma", "gist", "cswap", "cdma-sync"):
                self.assertEqual(4, md.count(f"| {policy} | "), policy)
            # every goal judged, from this run's figures
            for goal in ("vdnn-all step time", "gist: >= 1.3x",
                         "vdnn-dyn: largest batch", "cswap: decision"):
                self.assertRegex(text, goal + r".*: (met|NOT met) \(")
            self.assertRegex(text, r"the size read on gpt2 \(reported\).*"
                             r"cdma-sync [0-9.]+ ms, [1-9][0-9]* waits")
            self.assertIn("Fashion-MNIST", md)
            self.assertIn("as UTF-8 bytes", md)
            self.assertTrue(os.path.exists(os.path.join(out, "dnn-gpu.png"))
                            or os.path.exists(os.path.join(out,
                                                           "dnn-gpu.svg")))

    @unittest.skipIf(torch is not None and torch.cuda.is_available(),
                     "a CUDA device is present")
    def test_without_a_gpu_it_says_skip(self):
        with tempfile.TemporaryDirectory() as out:
            text = self.run_part(out, "--part", "measure")
            self.assertRegex(text, r"^SKIP: no CUDA device")
            self.assertEqual([], os.listdir(out))


if __name__ == "__main__":
    unittest.main()
