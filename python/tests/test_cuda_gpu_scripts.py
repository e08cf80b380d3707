# SPDX-License-Identifier: GPL-2.0
"""The GPU scripts where no GPU is: they must run in one command on the
GPU machine, so their CPU parts run here.  gpu_train.py's models on the
CPU, selftests/gpu/test_cuda_profile.py's SKIP, gpu_rows.py's section
without a GPU and from records, cuda_verify.py's Fig. 3 rounding."""
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import unittest

from buddy.cuda import records

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
TRAIN = os.path.join(ROOT, "tools", "eval", "gpu_train.py")
ROWS = os.path.join(ROOT, "tools", "eval", "gpu_rows.py")
GPU_TEST = os.path.join(ROOT, "selftests", "gpu", "test_cuda_profile.py")

try:
    import torch
except ImportError:
    torch = None
try:
    import numpy as np
except ImportError:
    np = None

NO_GPU = torch is None or not torch.cuda.is_available()


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def run(args):
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    return subprocess.run([sys.executable] + args, env=env,
                          capture_output=True, text=True, timeout=600)


@unittest.skipIf(torch is None, "torch is not importable here")
class Train(unittest.TestCase):
    def test_each_model_trains_on_the_cpu(self):
        for args in (["--model", "gpt2", "--seq", "32", "--batch", "1",
                      "--gpt-layers", "1", "--gpt-width", "64"],
                     ["--model", "tiny"]):
            r = run([TRAIN, "--device", "cpu", "--iters", "2"] + args)
            self.assertEqual(0, r.returncode, r.stderr)
            self.assertIn(f"gpu_train: done, {args[1]}, 2 iterations",
                          r.stdout)

    def test_gpt2_starts_at_the_uniform_loss(self):
        # GPT-2's initialisation: the first loss is about ln(vocabulary)
        r = run([TRAIN, "--device", "cpu", "--iters", "1", "--model", "gpt2",
                 "--seq", "32", "--batch", "1", "--gpt-layers", "1",
                 "--gpt-width", "64"])
        loss = float(r.stdout.split("iter 0: loss ")[1].split()[0])
        self.assertLess(abs(loss - 10.82), 0.5)    # ln(50257)

    def test_the_resnet50_without_torchvision(self):
        m = load(TRAIN, "gpu_train")
        net = m.ResNet50()
        self.assertEqual((2, 10), tuple(net(torch.zeros(2, 3, 64, 64)).shape))
        n = sum(p.numel() for p in net.parameters())
        self.assertLess(abs(n - 23528522), 1000)   # torchvision's, 10 classes


class GpuTestSkips(unittest.TestCase):
    @unittest.skipUnless(NO_GPU, "this machine has a GPU")
    def test_it_says_skip_and_passes(self):
        r = run([GPU_TEST])
        self.assertEqual(0, r.returncode, r.stderr)
        self.assertTrue(r.stdout.startswith("SKIP: "), r.stdout)
        self.assertIn("skip:1", r.stdout)


class Rows(unittest.TestCase):
    @unittest.skipUnless(NO_GPU, "this machine has a GPU")
    def test_without_a_gpu_the_section_says_so_once(self):
        with tempfile.TemporaryDirectory() as d:
            md = os.path.join(d, "results.md")
            with open(md, "w") as f:
                f.write("# results\n\n## Results per workload\n\n| x |\n")
            for _ in range(2):
                r = run([ROWS, "--out", d, "--merge", md])
                self.assertEqual(0, r.returncode, r.stderr)
            text = open(md).read()
            rows = json.load(open(os.path.join(d, "gpu-rows.json")))
        self.assertIn("no CUDA device", rows["not_run"])
        self.assertEqual(1, text.count("## On a GPU"))
        self.assertIn("Not run: no CUDA device", text)
        self.assertTrue(text.startswith("# results\n\n## Results per"))

    def test_rows_from_records_next_to_the_cpu_row(self):
        m = load(ROWS, "gpu_rows")
        sys.path.insert(0, HERE)
        from test_cuda_profile import Records
        with tempfile.TemporaryDirectory() as d:
            Records.write(Records(), d)        # two snapshots, one kept
            row = m.rows_of_records("resnet50", "w", d)
        # the test's stats: active blocks 32 B of Fig. 3 per 128 B entry
        self.assertAlmostEqual(4.0, row["fig3_blocks"])
        self.assertAlmostEqual(4.0 / 2, row["fig3_codecs"][1])
        self.assertAlmostEqual(4.0, row["fig3_best"])
        self.assertAlmostEqual(128 / 32, row["buddy_sizes"])
        self.assertEqual(1, row["snapshots"])
        res = {"host": {"gpu": "H100", "torch": "2.11", "cuda": "13.0",
                        "date": "-"}, "rows": [row]}
        text = m.section(res, {"resnet50": {"mib": 900, "fig3": 1.3,
                                            "fig3_best": 1.4, "final": 1.1,
                                            "final_frac": 0.02}})
        lines = [ln for ln in text.splitlines() if ln.startswith("| resnet50")]
        self.assertEqual(2, len(lines))
        self.assertIn("| GPU |", lines[0])
        self.assertIn("| CPU | 900 | 1.30 |", lines[1])


@unittest.skipIf(np is None, "numpy is not importable here")
class VerifyRounding(unittest.TestCase):
    def test_fig3_bytes_as_the_paper_rounds(self):
        sys.path.insert(0, os.path.join(ROOT, "selftests", "gpu"))
        v = load(os.path.join(ROOT, "selftests", "gpu", "cuda_verify.py"),
                 "cuda_verify")
        bits = np.array([0, 1, 64, 65, 128, 129, 512, 513, 640, 641, 768, 769,
                         1024, 1120], dtype=np.uint16)
        want = [0, 8, 8, 16, 16, 32, 64, 80, 80, 96, 96, 128, 128, 128]
        self.assertEqual(sum(want), v.fig3_bytes(bits))
        for b, w in zip(bits, want):
            self.assertEqual(w, v.fig3_bytes(np.array([b], dtype=np.uint16)))


if __name__ == "__main__":
    unittest.main()
