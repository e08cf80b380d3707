# SPDX-License-Identifier: GPL-2.0
"""buddyctl profile --cuda and --cuda-records: the hook's records in the
engine's report (tools/profile/engine/profile_cuda.c).

Records are written by buddy.cuda.records.Writer from a recorded
torch.cuda.memory_snapshot() (fixtures/cuda/snapshot-2x.json), each block
filled on the host with content of its own compressibility and sized with
libbuddycodec, as the hook sizes device memory; two processes, one with
a snapshot the schedule dropped.  The report's figures are checked
against records.snap_figures(), an independent recomputation.
"""
import ctypes
import json
import os
import random
import subprocess
import sys
import tempfile
import unittest

from buddy import _codec
from buddy.cuda import records, snapshot, staging

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
FIX = os.path.join(HERE, "fixtures", "cuda")
PYDIR = os.path.join(ROOT, "python")
BUDDYCTL = os.environ.get("BUDDYCTL", os.path.join(ROOT, "build", "buddyctl"))
AGREE = 0.01


def content(i, size):
    """Block @i's bytes: zeros, a ramp, half random, or random."""
    kind = i % 4
    if kind == 0:
        return bytes(size)
    if kind == 1:
        return (bytes(range(256)) * (size // 256 + 1))[:size]
    rnd = random.Random(i)
    if kind == 2:
        half = rnd.randbytes(size // 2)
        return half + bytes(size - len(half))
    return rnd.randbytes(size)


def sized_blocks(snap, sizer, seed):
    blocks = list(snap.blocks())
    stats = []
    for i, b in enumerate(blocks):
        data = content(i + seed, b.size)
        buf = (ctypes.c_char * len(data)).from_buffer_copy(data)
        st = staging.BlockStat()
        for s in sizer.ranges(ctypes.addressof(buf), [b.size]):
            st.add(s)
        stats.append(st)
    return blocks, stats


def write_records(d):
    with open(os.path.join(FIX, "snapshot-2x.json")) as f:
        fx = json.load(f)
    snap = snapshot.parse(fx["segments"])
    lab = snapshot.Labeller([fx["torch_dir"], "/opt/buddy/python/buddy/cuda"],
                            True)
    lab.label_all(snap)
    sizer = _codec.Sizer(1)
    paths = []
    for pid, rank, seeds in ((4242, 0, (0, 1, 2)), (4250, 1, (3, 5))):
        proc = {"pid": pid, "ppid": 1, "rank": rank, "local_rank": rank,
                "world": 2, "t0": 1700000000.5 + rank, "torch": "2.11.0+cu130",
                "backend": "native", "exe": "python3",
                "argv": ["train.py"]}
        path = os.path.join(d, f"cuda-{pid}.tsv")
        w = records.Writer(path, proc, "python", True)
        w.note("a note for the report")
        for sid, seed in enumerate(seeds):
            blocks, stats = sized_blocks(snap, sizer, seed)
            w.snapshot(sid, 1.0 + sid, sid + 1, 10.0 + sid, 2.0, 5.0, snap,
                       blocks, stats)
        if len(seeds) == 3:
            w.drop(1)
            w.end(4.0, 3, 99, 0.01, [0, 2])
        w.close()       # the second: no end record (killed)
        paths.append(path)
    sizer.close()
    return paths


def expected(path, unit):
    """Fig. 3 BPC over the kept snapshots of one process, and per kept
    snapshot, from records.py alone."""
    ent = f3 = 0
    per = []
    rec = records.read(path)
    for k in records.kept(rec):
        fg = records.snap_figures(rec["snaps"][k])
        ent += fg[unit + "_entries"]
        f3 += fg[unit + "_fig3"]
        per.append(records.fig3_ratio(fg[unit + "_entries"],
                                      fg[unit + "_fig3"]))
    return records.fig3_ratio(ent, f3), per


def buddyctl(*args):
    return subprocess.run([BUDDYCTL, "profile", "-q"] + list(args),
                          capture_output=True, text=True, timeout=120)


@unittest.skipUnless(os.access(BUDDYCTL, os.X_OK),
                     f"no {BUDDYCTL} (make tools)")
@unittest.skipIf(_codec.lib is None, "no libbuddycodec (make codeclib)")
class Records(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.d = os.path.join(cls.tmp.name, "rec")
        os.mkdir(cls.d)
        cls.paths = write_records(cls.d)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def report(self, *args):
        js = os.path.join(self.tmp.name, "r.json")
        r = buddyctl("--cuda-records", self.d, "--json-out", js, *args)
        self.assertEqual(0, r.returncode, r.stderr)
        with open(js) as f:
            return json.load(f), r

    def agree(self, d, unit):
        """Each process's table (rank 0's at the top) against its records:
        Fig. 3 over its kept snapshots and per kept snapshot."""
        procs = {p["pid"]: p for p in d["processes"]}
        self.assertEqual({4242, 4250}, set(procs))
        for path, pid, nkept in ((self.paths[0], 4242, 2),
                                 (self.paths[1], 4250, 2)):
            want, per = expected(path, unit)
            p = procs[pid]
            self.assertAlmostEqual(want, p["fig3"]["bpc"], delta=AGREE)
            kept = [s for s in p["snapshots"] if s.get("kept")]
            self.assertEqual(nkept, len(kept), p["snapshots"])
            for s, w in zip(kept, per):
                self.assertAlmostEqual(w, s["fig3"], delta=AGREE)
        want, _ = expected(self.paths[0], unit)
        self.assertTrue(procs[4242]["main"])
        self.assertAlmostEqual(want, d["fig3"]["bpc"], delta=AGREE)

    def test_fig3_agrees_with_the_records_per_block(self):
        d, _ = self.report("-o", os.devnull)
        self.agree(d, "blocks")
        self.assertEqual("block", d["cuda"]["unit"])

    def test_fig3_per_segment(self):
        d, _ = self.report("--cuda-unit", "segment", "-o", os.devnull)
        self.agree(d, "segments")
        self.assertEqual("segment", d["cuda"]["unit"])

    def test_the_same_report_as_for_a_cpu_program(self):
        prof = os.path.join(self.tmp.name, "r.prof")
        txt = os.path.join(self.tmp.name, "r.txt")
        d, _ = self.report("-p", prof, "-o", txt, "--labels", "0")
        with open(txt) as f:
            text = f.read()
        for want in ("Fig. 3", "Fig. 7", "Fig. 10", "Labels (",
                     "train.py:41 forward", "cuda: pid 4242, rank 0: torch "
                     "2.11.0+cu130", "cuda note: pid 4242: a note",
                     "program stopped"):
            self.assertIn(want, text)
        self.assertGreater(d["stopped_s"], 0)
        self.assertEqual([4242, 4250],
                         [p["pid"] for p in d["cuda"]["processes"]])
        with open(prof) as f:
            lines = [ln for ln in f if ln.strip() and not ln.startswith("#")]
        self.assertTrue(lines)
        self.assertTrue(all("\tcu-" in ln for ln in lines), lines)
        labs = {l["label"]: l for l in d["labels"]}
        self.assertTrue(any(l["site"] == "train.py:41 forward"
                            for l in labs.values()), labs)

    def test_json_alone_on_stdout(self):
        r = buddyctl("--cuda-records", self.d, "-j")
        self.assertEqual(0, r.returncode, r.stderr)
        self.assertIn("cuda", json.loads(r.stdout))

    def test_a_bad_record_is_named_by_file_and_line(self):
        with tempfile.TemporaryDirectory() as d:
            with open(self.paths[0]) as f:
                src = f.read().splitlines()
            blk = next(i for i, l in enumerate(src) if l.startswith("blk"))
            src[blk] = src[blk].replace("\tcu-", "\tcx-", 1)
            with open(os.path.join(d, "cuda-1.tsv"), "w") as f:
                f.write("\n".join(src) + "\n")
            r = buddyctl("--cuda-records", d)
        self.assertEqual(1, r.returncode)
        self.assertIn(f"cuda-1.tsv:{blk + 1}: label cx-", r.stderr)

    def test_each_bad_structure_is_refused_by_file_and_line(self):
        with open(self.paths[0]) as f:
            src = f.read().splitlines()
        snap = next(i for i, l in enumerate(src) if l.startswith("snap"))
        cases = [
            ([src[0]], "cuda-1.tsv:1: no proc record"),
            ([src[0], src[snap]], "cuda-1.tsv:2: snap before the proc"),
            (src[:2], "cuda-1.tsv:2: no codecs record"),
            ([src[0], src[1].replace("\t4242\t", "\t0\t", 1)],
             "cuda-1.tsv:2: pid 0 is not a process id"),
            (src[:snap + 1] + [src[snap + 1] + "\t1"], "seg: 10 fields"),
            (["buddy-cuda-profile\t2"], "cuda-1.tsv:1: not a "),
        ]
        for lines, want in cases:
            with tempfile.TemporaryDirectory() as d:
                with open(os.path.join(d, "cuda-1.tsv"), "w") as f:
                    f.write("\n".join(lines) + "\n")
                r = buddyctl("--cuda-records", d, "-o", os.devnull)
            self.assertEqual(1, r.returncode, (want, r.stderr))
            self.assertIn(want, r.stderr)

    def test_options_of_the_interposer_are_refused(self):
        for opt in (["--min-size", "1M"], ["--every-allocs", "2"],
                    ["--match", "x"], ["-k", self.tmp.name]):
            r = buddyctl("--cuda-records", self.d, *opt)
            self.assertEqual(2, r.returncode, opt)
            self.assertIn(opt[0], r.stderr)
        r = buddyctl("--cuda-unit", "segment", "--", "true")
        self.assertEqual(2, r.returncode)
        r = buddyctl("--cuda-records", self.d, "--", "true")
        self.assertEqual(2, r.returncode)
        self.assertIn("no COMMAND", r.stderr)

    def test_an_empty_directory_says_why(self):
        with tempfile.TemporaryDirectory() as d:
            r = buddyctl("--cuda-records", d, "-o", os.devnull)
        self.assertEqual(0, r.returncode, r.stderr)
        self.assertIn("no record", r.stderr)


def cpu_torch():
    """Why torch cannot stand for a CPU-only torch here, or None."""
    try:
        import torch
    except ImportError:
        return "torch is not importable here"
    return "this machine has CUDA" if torch.cuda.is_available() else None


@unittest.skipUnless(os.access(BUDDYCTL, os.X_OK),
                     f"no {BUDDYCTL} (make tools)")
class Cuda(unittest.TestCase):
    def setUp(self):
        why = cpu_torch()
        if why:
            self.skipTest(why)

    def test_without_cuda_it_says_so_exits_2_and_runs_nothing(self):
        with tempfile.TemporaryDirectory() as d:
            env = dict(os.environ, BUDDY_PYTHON=sys.executable)
            r = subprocess.run([BUDDYCTL, "profile", "--cuda", "--",
                                sys.executable, "-c", "open('ran', 'w')"],
                               capture_output=True, text=True, cwd=d,
                               env=env, timeout=120)
            self.assertFalse(os.path.exists(os.path.join(d, "ran")))
        self.assertEqual(2, r.returncode, r.stderr)
        self.assertIn("no CUDA device", r.stderr)

    def test_a_cpu_torch_program_runs_under_the_hook(self):
        """The hook runs (backward wrapped) in the program buddyctl starts;
        with CPU tensors there is nothing to record, and the report says
        why.  The probe is skipped by naming a Python that says yes."""
        prog = ("import torch; x = torch.ones(3, requires_grad=True); "
                "(x * 2).sum().backward(); "
                "print(type(torch.autograd.backward.__wrapped__).__name__)")
        with tempfile.TemporaryDirectory() as d:
            fake = os.path.join(d, "py")
            with open(fake, "w") as f:
                f.write("#!/bin/sh\n[ \"$3\" = probe ] && exit 0\n"
                        f"exec {sys.executable} \"$@\"\n")
            os.chmod(fake, 0o755)
            rec = os.path.join(d, "rec")
            r = subprocess.run([BUDDYCTL, "profile", "--cuda",
                                "--cuda-records", rec, "-o", os.devnull,
                                "--", sys.executable, "-c", prog],
                               capture_output=True, text=True, cwd=d,
                               env=dict(os.environ, BUDDY_PYTHON=fake),
                               timeout=300)
        self.assertEqual(0, r.returncode, r.stderr)
        self.assertEqual("function", r.stdout.strip())
        self.assertIn("no record", r.stderr)


if __name__ == "__main__":
    unittest.main()
