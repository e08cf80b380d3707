# SPDX-License-Identifier: GPL-2.0
"""Tests of buddy.cuda without a GPU: the snapshot parser on recorded
structures of both shapes (fixtures/cuda/: torch 2.x with block addresses
and frames, torch 1.13 with neither, frames under history), labelling, the
schedule, the record file, the launcher's refusal without CUDA and the
sitecustomize chain."""
import json
import os
import struct
import subprocess
import sys
import tempfile
import textwrap
import unittest

from buddy.cuda import records, schedule, snapshot

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
FIX = os.path.join(HERE, "fixtures", "cuda")
PYDIR = os.path.join(ROOT, "python")
MIB = 1 << 20


def fixture(name):
    with open(os.path.join(FIX, name)) as f:
        return json.load(f)


def labelled(name, from_start=True):
    d = fixture(name)
    snap = snapshot.parse(d["segments"])
    lab = snapshot.Labeller([d["torch_dir"], "/opt/buddy/python/buddy/cuda"],
                            from_start)
    lab.label_all(snap)
    return snap, lab


class Parse2x(unittest.TestCase):
    def setUp(self):
        self.snap, _ = labelled("snapshot-2x.json")

    def test_segments_blocks_and_states(self):
        s = self.snap
        self.assertEqual("2.x", s.fmt)
        self.assertEqual([4, 4, 2, 2, 2], [len(g.blocks) for g in s.segments])
        self.assertEqual(["active", "active", "pending", "inactive"],
                         [b.state for b in s.segments[0].blocks])
        # the block's own address and offset, not the running sum
        g = s.segments[4]
        self.assertEqual(g.addr + 4 * MIB, g.blocks[1].addr)
        self.assertEqual(4 * MIB, g.blocks[1].off)
        self.assertEqual(4194048, s.segments[2].blocks[0].requested)

    def test_kinds_of_segment(self):
        s = self.snap
        self.assertEqual([False, False, False, True, False],
                         [g.private_pool for g in s.segments])
        self.assertEqual([False, False, False, False, True],
                         [g.expandable for g in s.segments])
        self.assertEqual([True, False, True, True, True],
                         [g.large for g in s.segments])

    def test_bytes_by_state(self):
        s = self.snap
        self.assertEqual(2 * MIB, s.bytes(("pending",)))
        total = sum(b["size"] for g in fixture("snapshot-2x.json")["segments"]
                    for b in g["blocks"])
        self.assertEqual(total, s.bytes())


class Parse113(unittest.TestCase):
    def setUp(self):
        self.snap, _ = labelled("snapshot-1.13.json")

    def test_addresses_are_the_sums_of_the_sizes_before(self):
        g = self.snap.segments[0]
        self.assertEqual("1.13", self.snap.fmt)
        at = g.addr
        for b in g.blocks:
            self.assertEqual(at, b.addr)
            at += b.size
        self.assertEqual(g.addr + g.size, at)

    def test_the_history_entry_at_the_block_names_it(self):
        b0, b1 = self.snap.segments[0].blocks[:2]
        # newest first: block 0's newest entry is its own
        self.assertEqual("cnn.py:30 forward", b0.label.site)
        self.assertEqual(3211264, b0.requested)
        # block 1's newest entry lies elsewhere (stale): the one at its
        # address gives the size asked for
        self.assertEqual(1605000, b1.requested)

    def test_a_live_block_without_frames_was_made_in_backward(self):
        b = self.snap.segments[1].blocks[1]
        self.assertEqual("active", b.state)
        self.assertEqual("<backward>", b.label.site)


class Malformed(unittest.TestCase):
    def seg(self, blocks, total=4096, addr=0x10000):
        return [{"address": addr, "total_size": total, "blocks": blocks}]

    def refused(self, segs, words):
        with self.assertRaises(snapshot.SnapshotError) as cm:
            snapshot.parse(segs)
        for w in words:
            self.assertIn(w, str(cm.exception))

    def test_each_bad_structure_is_refused_by_name(self):
        a = {"state": "active_allocated"}
        self.refused({"segments": []}, ["not a list"])
        self.refused(self.seg([dict(a, size=100)]), ["block 0", "128"])
        self.refused(self.seg([dict(a, size=-128)]), ["block 0", "size"])
        self.refused(self.seg([dict(a, size=8192)]), ["runs past"])
        self.refused(self.seg([dict(a, size=1024, state="weird")]),
                     ["unknown state"])
        self.refused(self.seg([dict(a, size=2048, address=0x10000),
                               dict(a, size=1024, address=0x10400)]),
                     ["block 1", "overlaps"])
        self.refused(self.seg([], addr=None), ["segment 0", "address"])
        two = self.seg([]) + self.seg([], addr=0x10800)
        self.refused(two, ["segments 0 and 1 overlap"])

    def test_adjacent_segments_are_fine(self):
        two = self.seg([]) + self.seg([], addr=0x11000)
        self.assertEqual(2, len(snapshot.parse(two).segments))


class Labels(unittest.TestCase):
    def test_first_frame_outside_torch_and_this_package(self):
        snap, _ = labelled("snapshot-2x.json")
        sites = [b.label.site for b in snap.segments[0].blocks[:2]]
        self.assertEqual(["train.py:41 forward", "train.py:42 forward"], sites)
        # the hook's own frame is skipped like torch's
        self.assertEqual("train.py:67 to_device",
                         snap.segments[2].blocks[1].label.site)

    def test_site_and_size_make_the_label(self):
        snap, lab = labelled("snapshot-2x.json")
        conv = snap.segments[0].blocks[0].label
        # same site, other size: another label
        self.assertNotEqual(conv.name, snap.segments[3].blocks[0].label.name)
        self.assertEqual(conv.site, snap.segments[3].blocks[0].label.site)
        # the same site and size asked for: one label, wherever it lives
        b = snapshot.Block(9, 0, 0x1000, 0, 8 * MIB, 6422528, "active",
                           [("/x/train.py", 41, "forward")])
        self.assertIs(conv, lab.label(b))

    def test_no_frames_and_no_storage(self):
        snap, _ = labelled("snapshot-2x.json", from_start=False)
        self.assertEqual("<no-stack>", snap.segments[1].blocks[2].label.site)
        self.assertEqual("nostack", snap.segments[1].blocks[2].label.kind)
        cached = {b.label.site for b in snap.blocks(("pending", "inactive"))}
        self.assertEqual({"<cached>"}, cached)

    def test_names_are_what_buddy_ko_takes(self):
        _, lab = labelled("snapshot-2x.json")
        self.assertGreater(len(lab.labels), 5)
        for name in lab.labels:
            self.assertRegex(name, r"^cu-[0-9a-f]{12}$")
            self.assertLess(len(name), 32)

    def test_the_hash_is_fnv1a_over_site_and_size(self):
        # FNV-1a 64 of "a": the published test vector
        self.assertEqual(0xaf63dc4c8601ec8c,
                         snapshot.fnv(snapshot.FNV_INIT, b"a"))
        _, lab = labelled("snapshot-2x.json")
        key = snapshot.fnv(snapshot.FNV_INIT, b"train.py:41 forward\0")
        key = snapshot.fnv(key, struct.pack("<Q", 6422528))
        self.assertIn(f"cu-{key >> 16:012x}", lab.labels)


class Schedule(unittest.TestCase):
    def run_schedule(self, sch, passes):
        taken, dropped = [], []
        for p in range(1, passes + 1):
            if sch.due(p):
                sid = len(taken)
                taken.append(p)
                dropped += sch.taken(sid, p)
        kept, last = sch.finish()
        return taken, dropped + last, [taken[k] for k in kept]

    def test_adaptive_doubles_and_thins_as_the_cpu_engine(self):
        taken, dropped, kept = self.run_schedule(schedule.Schedule(10), 30)
        # every pass up to 2N, then every other: the step doubled
        self.assertEqual(list(range(1, 21)) + [22, 24, 26, 28, 30], taken)
        # the first, third, ... of the 2N held are dropped
        self.assertEqual(list(range(0, 20, 2)), dropped[:10])
        # at the end, N evenly spaced of the 15 held (engine's rule)
        self.assertEqual([4, 6, 10, 12, 16, 18, 22, 24, 28, 30], kept)
        self.assertEqual(25, len(set(dropped)) + len(kept))

    def test_kept_points_are_multiples_of_the_last_step(self):
        sch = schedule.Schedule(4)
        taken, _, _ = self.run_schedule(sch, 100)
        # 8 held at 8, 16, 32 and 64 passes: the step doubled four times
        self.assertEqual(16, sch.step)
        self.assertEqual([16, 32, 48, 64, 80, 96],
                         [taken[k] for k in sch.held])

    def test_every_keeps_all(self):
        taken, dropped, kept = self.run_schedule(schedule.Schedule(10, every=5),
                                                 30)
        self.assertEqual([5, 10, 15, 20, 25, 30], taken)
        self.assertEqual([], dropped)
        self.assertEqual(taken, kept)

    def test_points_zero_keeps_all(self):
        taken, dropped, kept = self.run_schedule(schedule.Schedule(0), 40)
        self.assertEqual(list(range(1, 41)), taken)
        self.assertEqual(taken, kept)
        self.assertEqual([], dropped)

    def test_bad_parameters(self):
        for kw in ({"points": -1}, {"first": 0}, {"every": -2}):
            with self.assertRaises(ValueError):
                schedule.Schedule(**kw)


class Stat:
    """A staging.BlockStat stand-in with chosen numbers."""

    def __init__(self, entries, code, fig3):
        self.entries = entries
        self.hist = [[0] * 6 for _ in range(4)]
        for c in range(4):
            self.hist[c][code] = entries
        self.fig3 = [fig3 * (c + 1) for c in range(4)]
        self.unread = 0


class Records(unittest.TestCase):
    def write(self, d):
        snap, _ = labelled("snapshot-2x.json")
        blocks = list(snap.blocks())
        stats = [Stat(b.size // 128, 2 if b.state == "active" else 0,
                      b.size // 4 if b.state == "active" else 0)
                 for b in blocks]
        proc = {"pid": 4242, "ppid": 1, "rank": 3, "local_rank": 1,
                "world": 8, "t0": 1700000000.5, "torch": "2.11.0+cu130",
                "backend": "native", "exe": "python3",
                "argv": ["train.py", "--name", "a\tb"]}
        path = os.path.join(d, "cuda-4242.tsv")
        w = records.Writer(path, proc, "python", True)
        w.note("expandable_segments\tnew line\n")
        w.snapshot(0, 1.25, 1, 12.5, 3.0, 8.0, snap, blocks, stats)
        w.snapshot(1, 2.5, 2, 10.0, 2.0, 7.0, snap, blocks, stats)
        w.drop(0)
        w.end(3.0, 2, 1234, 0.042, [1])
        w.close()
        return path, snap, blocks

    def test_round_trip(self):
        with tempfile.TemporaryDirectory() as d:
            path, snap, blocks = self.write(d)
            rec = records.read(path)
        self.assertEqual(3, rec["proc"]["rank"])
        self.assertEqual("train.py --name a\tb", rec["proc"]["argv"])
        self.assertEqual(["expandable_segments\tnew line\n"], rec["notes"])
        self.assertEqual([1], records.kept(rec))
        s = rec["snaps"][1]
        self.assertEqual(len(blocks), len(s["blks"]))
        self.assertEqual(len(snap.segments), len(s["segs"]))
        self.assertEqual((1, 0), s["segs"][3]["pool"])
        self.assertEqual(1, s["segs"][4]["expandable"])
        b = s["blks"][0]
        self.assertEqual(blocks[0].size // 128, b["entries"])
        self.assertEqual(blocks[0].size // 4 * 3, b["fig3"][2])
        self.assertEqual(("frame", "train.py:41 forward"),
                         rec["labels"][b["label"]])

    def test_figures_in_both_units(self):
        with tempfile.TemporaryDirectory() as d:
            path, snap, blocks = self.write(d)
            rec = records.read(path)
            text = records.summary([path])
        fg = records.snap_figures(rec["snaps"][1])
        # active blocks: 128 B of logical per 32 B of Fig. 3 bytes
        self.assertAlmostEqual(4.0, fg["blocks"])
        act = snap.bytes(("active",))
        self.assertAlmostEqual(snap.bytes() / (act / 4), fg["segments"])
        self.assertEqual(2 * MIB, fg["bytes"]["pending"])
        self.assertEqual(4 * MIB, fg["private_pool_bytes"])
        self.assertEqual(1, fg["expandable"])
        self.assertIn("Fig. 3 bpc 4.00 per storage block", text)
        self.assertIn("5, 1 expandable, 4.0 MiB in private pools", text)
        self.assertIn("rank 3", text)

    def test_bad_records_name_file_and_line(self):
        with tempfile.TemporaryDirectory() as d:
            path, _, _ = self.write(d)
            lines = open(path).read().splitlines()
            blk = next(i for i, l in enumerate(lines) if l.startswith("blk"))
            cases = {
                0: ("buddy-cuda-profile\t9", "not a buddy-cuda-profile 1"),
                blk: (lines[blk] + "\t7", "fields"),
                blk + 1: (lines[blk].replace("\tcu-", "\tcx-", 1),
                          "before its label"),
            }
            f = lines[blk].split("\t")
            f[10] = str(int(f[10]) + 1)       # bpc's zero count
            cases[blk + 2] = ("\t".join(f), "histogram sums")
            f = lines[blk].split("\t")
            f[4] = str(int(f[4]) + 128)       # size
            cases[blk + 3] = ("\t".join(f), "do not make size")
            for n, (line, why) in cases.items():
                bad = list(lines)
                bad[n] = line
                p = os.path.join(d, f"bad-{n}.tsv")
                with open(p, "w") as fo:
                    fo.write("\n".join(bad) + "\n")
                with self.assertRaises(records.RecordError) as cm:
                    records.read(p)
                self.assertIn(f"{p}:{n + 1}:", str(cm.exception))
                self.assertIn(why, str(cm.exception))

    def test_escapes_round_trip(self):
        s = "a\\b\tc\nd\re\x01f\x7fg é"
        e = records.escape(s)
        self.assertNotIn("\t", e)
        self.assertNotIn("\n", e)
        self.assertEqual(s, records.unescape(e))
        with self.assertRaises(ValueError):
            records.unescape("a\\q")


def run_py(args, env=None, cwd=None):
    e = dict(os.environ)
    e.update(env or {})
    return subprocess.run([sys.executable] + args, env=e, cwd=cwd,
                          capture_output=True, text=True, timeout=300)


class Launcher(unittest.TestCase):
    def test_without_cuda_it_says_so_and_exits_2(self):
        try:
            import torch
        except ImportError:
            self.skipTest("torch is not importable here")
        if torch.cuda.is_available():
            self.skipTest("this machine has CUDA")
        with tempfile.TemporaryDirectory() as d:
            r = run_py(["-m", "buddy.cuda", "run", "-o", d, "--",
                        sys.executable, "-c", "open('ran', 'w')"],
                       env={"PYTHONPATH": PYDIR}, cwd=d)
            self.assertFalse(os.path.exists(os.path.join(d, "ran")))
        self.assertEqual(2, r.returncode, r.stderr)
        self.assertIn("no CUDA device", r.stderr)
        self.assertIn(f"torch {torch.__version__}", r.stderr)
        r = run_py(["-m", "buddy.cuda", "probe"], env={"PYTHONPATH": PYDIR})
        self.assertEqual(2, r.returncode)

    def test_bad_options_and_an_old_run(self):
        with tempfile.TemporaryDirectory() as d:
            r = run_py(["-m", "buddy.cuda", "run", "--no-probe", "--codecs",
                        "bpc,lz4", "--", "true"], env={"PYTHONPATH": PYDIR})
            self.assertEqual(1, r.returncode)
            self.assertIn("'lz4'", r.stderr)
            open(os.path.join(d, "cuda-17.tsv"), "w").close()
            r = run_py(["-m", "buddy.cuda", "run", "--no-probe", "-o", d,
                        "--", "true"], env={"PYTHONPATH": PYDIR})
            self.assertEqual(1, r.returncode)
            self.assertIn("cuda-17.tsv", r.stderr)

    def test_the_program_runs_with_the_hook_and_its_status_is_kept(self):
        prog = textwrap.dedent("""
            import sys, torch
            print(type(torch.autograd.backward.__wrapped__).__name__)
            x = torch.ones(3, requires_grad=True)
            (x * 2).sum().backward()
            print(x.grad.tolist())
            sys.exit(7)
        """)
        try:
            import torch  # noqa: F401
        except ImportError:
            self.skipTest("torch is not importable here")
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "out")
            r = run_py(["-m", "buddy.cuda", "run", "--no-probe", "-o", out,
                        "--", sys.executable, "-c", prog],
                       env={"PYTHONPATH": PYDIR})
            self.assertEqual(7, r.returncode, r.stderr)
            self.assertEqual(["function", "[2.0, 2.0, 2.0]"],
                             r.stdout.split("\n")[:2])
            # CPU tensors: no CUDA, no snapshot, no record
            self.assertEqual([], records.files(out))
            self.assertIn("no records", r.stderr)


class SiteChain(unittest.TestCase):
    def test_the_distributions_sitecustomize_still_runs(self):
        site = os.path.join(PYDIR, "buddy", "cuda", "site")
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "sitecustomize.py"), "w") as f:
                f.write("import os\nos.environ['DIST_SITE'] = 'ran'\n")
            prog = ("import os, sys; print(os.environ.get('DIST_SITE')); "
                    "print(sys.modules['sitecustomize'].__file__)")
            r = run_py(["-c", prog],
                       env={"PYTHONPATH": os.pathsep.join([site, d, PYDIR]),
                            "BUDDY_CUDA_DIR": ""})
        self.assertEqual(0, r.returncode, r.stderr)
        out = r.stdout.split("\n")
        self.assertEqual("ran", out[0])
        self.assertEqual(os.path.join(site, "sitecustomize.py"), out[1])

    def test_the_hook_wraps_backward_when_torch_is_imported(self):
        try:
            import torch  # noqa: F401
        except ImportError:
            self.skipTest("torch is not importable here")
        site = os.path.join(PYDIR, "buddy", "cuda", "site")
        prog = ("import sys; assert 'torch' not in sys.modules; import torch; "
                "print(torch.autograd.backward.__wrapped__.__module__, "
                "torch.autograd.grad.__wrapped__.__name__)")
        with tempfile.TemporaryDirectory() as d:
            r = run_py(["-c", prog],
                       env={"PYTHONPATH": os.pathsep.join([site, PYDIR]),
                            "BUDDY_CUDA_DIR": d})
        self.assertEqual(0, r.returncode, r.stderr)
        self.assertEqual("torch.autograd grad", r.stdout.strip())


if __name__ == "__main__":
    unittest.main()
