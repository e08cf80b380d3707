# SPDX-License-Identifier: GPL-2.0
"""Tests of buddy.cuda's copy and sizing without a GPU: a fake device
whose segments are host memory (two of them adjacent, where one copy
across both would fail as cudaMemcpy does), the copy plan, the pipeline,
libbuddycodec's sizes against the independent codec model written from
the spec (selftests/tools/codec_model.py), and the hook's glue on a fake
torch: schedule, labels and records of a run of backward passes."""
import contextlib
import copy
import ctypes
import io
import os
import random
import sys
import tempfile
import types
import unittest

from buddy import _codec
from buddy.cuda import hook, records, snapshot, staging

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "selftests", "tools"))
import codec_model  # noqa: E402

KIB = 1024
FIG3_STEPS = (8, 16, 32, 64, 80, 96, 128)


def model_entry(e, codec):
    """(size code, Fig. 3 bytes) of entry @e by the spec's model."""
    if not any(e):
        return 0, 0
    bits = codec_model.SIZE[codec](e)
    n = (bits + 7) // 8
    code = 1 if n <= 8 else 2 if n <= 32 else 3 if n <= 64 else \
        4 if n <= 96 else 5
    f3 = next((s for s in FIG3_STEPS if n <= s), 128)
    return code, f3


def model_block(data):
    """entries, hist, fig3 of @data by the model, every codec."""
    hist = [[0] * 6 for _ in range(4)]
    fig3 = [0] * 4
    for i in range(0, len(data), 128):
        e = data[i:i + 128]
        for c, name in enumerate(_codec.CODECS):
            code, f3 = model_entry(e, name)
            hist[c][code] += 1
            fig3[c] += f3
    return len(data) // 128, hist, fig3


class HostMemory:
    """Segments laid out in one host buffer (so that adjacent ones are
    really adjacent), filled with the model's varied entries."""

    # (offset, size, expandable, [(offset in segment, size, state, frames)])
    LAYOUT = [
        (0, 64 * KIB, False, [
            (0, 16 * KIB, "active_allocated", [("/x/train.py", 10, "fwd")]),
            (16 * KIB, 24 * KIB, "active_allocated",
             [("/fake/torch/nn/f.py", 3, "relu"), ("/x/train.py", 11, "fwd")]),
            (40 * KIB, 8 * KIB, "active_pending_free", []),
            (48 * KIB, 16 * KIB, "inactive", [])]),
        (64 * KIB, 32 * KIB, False, [          # adjacent to the first
            (0, 8 * KIB, "active_allocated", []),
            (8 * KIB, 24 * KIB, "inactive", [])]),
        (128 * KIB, 32 * KIB, True, [          # expandable, a gap inside
            (0, 8 * KIB, "active_allocated",
             [(os.path.join(hook.HERE, "hook.py"), 120, "copy"),
              ("/x/train.py", 12, "fwd")]),
            (16 * KIB, 8 * KIB, "active_allocated",
             [("/x/train.py", 12, "fwd")])]),
    ]

    def __init__(self, seed=1):
        self.size = 160 * KIB
        self.buf = (ctypes.c_uint8 * self.size)()
        self.base = ctypes.addressof(self.buf)
        r = random.Random(seed)
        data = b"".join(codec_model.varied_entry(r)
                        for _ in range(self.size // 128))
        ctypes.memmove(self.base, data, self.size)

    def segments(self):
        out = []
        for off, size, exp, blocks in self.LAYOUT:
            out.append({
                "device": 0, "address": self.base + off, "total_size": size,
                "stream": 0, "segment_type": "large",
                "segment_pool_id": (0, 0), "is_expandable": exp,
                "blocks": [{"address": self.base + off + bo, "size": bs,
                            "requested_size": bs, "state": st,
                            "frames": [{"filename": f, "line": ln, "name": n}
                                       for f, ln, n in fr]}
                           for bo, bs, st, fr in blocks]})
        return out

    def bytes_at(self, addr, n):
        return ctypes.string_at(addr, n)

    def segment_ranges(self):
        return [(self.base + off, self.base + off + size)
                for off, size, _, _ in self.LAYOUT]


class FakeDevice:
    """staging.py's device over host memory: refuses a copy that is not
    inside one segment (as cudaMemcpy refuses one across two cudaMalloc
    regions), logs what it is asked."""

    def __init__(self, mem, nbytes, fail_on=()):
        self.mem = mem
        self.bufs = [(ctypes.c_uint8 * nbytes)() for _ in range(2)]
        self.log = []
        self.copied = []
        self.fail_on = set(fail_on)
        self.ncopy = 0

    def buffer(self, i):
        return ctypes.addressof(self.bufs[i])

    def copy(self, i, piece):
        k = self.ncopy
        self.ncopy += 1
        self.log.append(("copy", i))
        lo, hi = piece.addr, piece.addr + piece.nbytes
        if not any(a <= lo and hi <= b for a, b in self.mem.segment_ranges()):
            raise RuntimeError(f"cudaErrorInvalidValue: 0x{lo:x}..0x{hi:x} "
                               "is not inside one segment")
        if k in self.fail_on:
            raise RuntimeError("injected copy failure")
        ctypes.memmove(self.buffer(i), lo, piece.nbytes)
        self.copied.append((lo, hi))

    def wait(self, i):
        self.log.append(("wait", i))


class LoggingSizer:
    def __init__(self, dev):
        self.s = _codec.Sizer(2)
        self.dev = dev

    def ranges(self, addr, lens, codecs=_codec.ALL):
        self.dev.log.append(("size", 0 if addr == self.dev.buffer(0) else 1))
        return self.s.ranges(addr, lens, codecs)


def parsed(mem):
    snap = snapshot.parse(mem.segments())
    snapshot.Labeller(["/fake/torch"], True).label_all(snap)
    return snap, list(snap.blocks())


class Sizing(unittest.TestCase):
    def test_ranges_agree_with_the_spec_model(self):
        mem = HostMemory(seed=7)
        s = _codec.Sizer(2)
        lens = [4096, 128, 0, 8192, 3968]
        got = s.ranges(mem.base, lens)
        off = 0
        for i, n in enumerate(lens):
            ent, hist, fig3 = model_block(mem.bytes_at(mem.base + off, n))
            self.assertEqual(ent, got[i].entries)
            for c in range(4):
                self.assertEqual(hist[c], list(got[i].hist[c]),
                                 f"range {i}, {_codec.CODECS[c]}")
                self.assertEqual(fig3[c], got[i].fig3_bytes[c])
            off += n

    def test_entries_agree_with_the_spec_model(self):
        mem = HostMemory(seed=8)
        s = _codec.Sizer(1)
        n = 256 * 128
        data = mem.bytes_at(mem.base, n)
        for c, name in enumerate(_codec.CODECS):
            codes, bits = s.entries(mem.base, n, c)
            for k in range(256):
                e = data[k * 128:(k + 1) * 128]
                want = 0 if not any(e) else codec_model.SIZE[name](e)
                self.assertEqual(want, bits[k], f"{name} entry {k}")
                self.assertEqual(model_entry(e, name)[0], codes[k])

    def test_bad_lengths_are_refused(self):
        with self.assertRaises(OSError):
            _codec.Sizer(1).ranges(1, [100])


class Plan(unittest.TestCase):
    def test_pieces_stay_inside_segments(self):
        mem = HostMemory()
        snap, blocks = parsed(mem)
        # 12 KiB: no multiple of it falls on the segments' boundary
        pieces = staging.plan(blocks, 12 * KIB)
        ranges = mem.segment_ranges()
        for pc in pieces:
            self.assertTrue(any(a <= pc.addr and pc.addr + pc.nbytes <= b
                                for a, b in ranges), pc)
            self.assertLessEqual(pc.nbytes, 12 * KIB)
        # the first segment ends where the second begins: two pieces there
        ends = {pc.addr + pc.nbytes for pc in pieces}
        self.assertIn(ranges[1][0], ends)

    def test_runs_of_blocks_make_one_piece_gaps_two(self):
        mem = HostMemory()
        snap, blocks = parsed(mem)
        pieces = staging.plan(blocks, 1 << 20)
        # segment 0 whole, segment 1 whole, segment 2 in two (a gap)
        self.assertEqual([64 * KIB, 32 * KIB, 8 * KIB, 8 * KIB],
                         [pc.nbytes for pc in pieces])
        self.assertEqual([[0, 1, 2, 3], [4, 5], [6], [7]],
                         [[bi for bi, _ in pc.parts] for pc in pieces])

    def test_a_large_block_is_cut(self):
        mem = HostMemory()
        snap, blocks = parsed(mem)
        pieces = staging.plan(blocks, 4 * KIB)
        parts = {}
        for pc in pieces:
            for bi, n in pc.parts:
                parts[bi] = parts.get(bi, 0) + n
        self.assertEqual([b.size for b in blocks],
                         [parts[i] for i in range(len(blocks))])
        self.assertEqual(6, sum(1 for pc in pieces
                                if pc.parts[0][0] == 1))   # 24 KiB / 4 KiB
        with self.assertRaises(ValueError):
            staging.plan(blocks, 1000)


class Pipeline(unittest.TestCase):
    def check_stats(self, mem, blocks, stats, unread=()):
        for bi, (b, st) in enumerate(zip(blocks, stats)):
            if bi in unread:
                self.assertEqual(b.size, st.unread)
                self.assertEqual(0, st.entries)
                continue
            ent, hist, fig3 = model_block(mem.bytes_at(b.addr, b.size))
            self.assertEqual(0, st.unread)
            self.assertEqual(ent, st.entries, f"block {bi}")
            self.assertEqual(hist, st.hist, f"block {bi}")
            self.assertEqual(fig3, st.fig3, f"block {bi}")

    def test_every_byte_once_sized_right_next_copy_in_flight(self):
        mem = HostMemory(seed=3)
        snap, blocks = parsed(mem)
        dev = FakeDevice(mem, 12 * KIB)
        pieces = staging.plan(blocks, 12 * KIB)
        stats, tm = staging.run(pieces, len(blocks), dev, LoggingSizer(dev))
        self.assertEqual([], tm.failed)
        self.assertEqual(len(pieces), tm.pieces)
        copied = sorted(dev.copied)
        for (a0, a1), (b0, b1) in zip(copied, copied[1:]):
            self.assertLessEqual(a1, b0)        # no byte twice
        self.assertEqual(sum(b.size for b in blocks),
                         sum(b - a for a, b in copied))
        self.check_stats(mem, blocks, stats)
        # piece k + 1 is on its way before piece k is sized
        log = dev.log
        for k in range(len(pieces) - 1):
            self.assertLess(log.index(("copy", (k + 1) % 2), 2 * k),
                            [i for i, e in enumerate(log)
                             if e[0] == "size"][k])

    def test_a_failed_copy_leaves_its_blocks_unread_only(self):
        mem = HostMemory(seed=4)
        snap, blocks = parsed(mem)
        dev = FakeDevice(mem, 1 << 20, fail_on={1})
        pieces = staging.plan(blocks, 1 << 20)
        stats, tm = staging.run(pieces, len(blocks), dev, _codec.Sizer(2))
        self.assertEqual(1, len(tm.failed))
        self.assertIn("injected", tm.failed[0][1])
        self.check_stats(mem, blocks, stats, unread={4, 5})

    def test_the_fake_device_refuses_a_copy_across_segments(self):
        # the guard the other tests rely on: one piece over the adjacent
        # segments 0 and 1 is refused
        mem = HostMemory()
        dev = FakeDevice(mem, 1 << 20)
        pc = staging.Piece(0, 0, mem.base + 60 * KIB)
        pc.nbytes = 8 * KIB
        with self.assertRaises(RuntimeError):
            dev.copy(0, pc)


class FakeCuda:
    def __init__(self, mem):
        self.mem = mem
        self.initialized = False
        self.queued = []
        self.history = []
        self.memory = types.SimpleNamespace(
            _record_memory_history=self._record_memory_history)

    def _record_memory_history(self, enabled="all", context="all",
                               stacks="all", max_entries=0, device=None):
        self.history.append((enabled, context, stacks))

    def _lazy_call(self, fn):
        self.queued.append(fn)

    def init(self):
        self.initialized = True
        for fn in self.queued:
            fn()

    def is_initialized(self):
        return self.initialized

    def memory_snapshot(self):
        return copy.deepcopy(self.mem.segments())

    def synchronize(self, d=None):
        pass

    def device_count(self):
        return 1

    def current_device(self):
        return 0

    def memory_stats(self):
        return {"allocation.all.allocated": 99}

    def get_allocator_backend(self):
        return "native"


def fake_torch(mem):
    calls = []
    t = types.SimpleNamespace(
        __file__="/fake/torch/__init__.py", __version__="2.11.0+fake",
        _C=types.SimpleNamespace(), cuda=FakeCuda(mem),
        autograd=types.SimpleNamespace(
            backward=lambda *a, **k: calls.append("backward"),
            grad=lambda *a, **k: calls.append("grad")))
    t.calls = calls
    return t


def fake_hook(d, seed=5, **kw):
    """A hook on a fake torch over host memory: (memory, torch, hook)."""
    mem = HostMemory(seed=seed)
    torch = fake_torch(mem)
    h = hook.Hook(d, piece_bytes=16 * KIB, threads=2, **kw)
    h.staging = FakeDevice(mem, 16 * KIB)
    return mem, torch, h


class HookGlue(unittest.TestCase):
    def run_hook(self, d, passes, **kw):
        mem, torch, h = fake_hook(d, **kw)
        h.on_torch(torch)
        self.assertEqual([], torch.cuda.history)   # not before CUDA starts
        torch.cuda.init()
        for _ in range(passes):
            torch.autograd.backward()
        h.history = "off"       # the fake has no allocations to time
        h.at_exit()
        return mem, torch, h

    def test_a_run_of_backward_passes_leaves_its_records(self):
        with tempfile.TemporaryDirectory() as d:
            mem, torch, h = self.run_hook(d, 9, points=2)
            self.assertEqual(["backward"] * 9, torch.calls)
            self.assertEqual([("state", "state", "python")],
                             torch.cuda.history)
            (path,) = records.files(d)
            rec = records.read(path)
        self.assertEqual(f"cuda-{os.getpid()}.tsv", os.path.basename(path))
        # passes 1-4, then the step doubles: 6, 8; two kept at the end
        self.assertEqual([1, 2, 3, 4, 6, 8],
                         [s["progress"] for s in rec["snaps"].values()])
        self.assertEqual([3, 5], records.kept(rec))
        self.assertEqual(1, rec["proc"]["from_start"])
        self.assertEqual(99, rec["end"]["allocations"])
        s = rec["snaps"][5]
        snap, blocks = parsed(mem)
        self.assertEqual(len(blocks), len(s["blks"]))
        sites = {rec["labels"][b["label"]][1] for b in s["blks"]}
        self.assertEqual({"train.py:10 fwd", "train.py:11 fwd",
                          "train.py:12 fwd", "<backward>", "<cached>"}, sites)
        for b, rb in zip(blocks, s["blks"]):
            ent, hist, fig3 = model_block(mem.bytes_at(b.addr, b.size))
            self.assertEqual(hist, rb["hist"])
            self.assertEqual(fig3, rb["fig3"])

    def test_codecs_not_sized_are_marked(self):
        with tempfile.TemporaryDirectory() as d:
            mem, torch, h = self.run_hook(d, 1, points=2,
                                          codecs=hook.codec_mask("bpc,bdi"))
            rec = records.read(records.files(d)[0])
        self.assertEqual(["bpc", "-", "bdi", "-"], rec["codecs"])
        b = rec["snaps"][0]["blks"][0]
        self.assertEqual(b["entries"], sum(b["hist"][0]))
        self.assertEqual([0] * 6, b["hist"][1])
        self.assertEqual(0, b["fig3"][3])

    def test_a_backward_inside_a_backward_is_not_a_pass(self):
        with tempfile.TemporaryDirectory() as d:
            mem, torch, h = fake_hook(d, every=1)
            inner = []
            torch.autograd.backward = lambda: inner.append(
                torch.autograd.grad())
            h.on_torch(torch)
            torch.cuda.init()
            torch.autograd.backward()
            torch.autograd.backward()
            self.assertEqual(2, h.progress)
            self.assertEqual(2, h.nsnap)
            self.assertEqual(["grad", "grad"], torch.calls)

    def test_no_snapshot_before_cuda_and_a_fork_starts_afresh(self):
        with tempfile.TemporaryDirectory() as d:
            mem, torch, h = fake_hook(d, every=1)
            h.on_torch(torch)
            torch.autograd.backward()           # CPU only so far
            self.assertEqual(0, h.progress)
            self.assertEqual([], records.files(d))
            torch.cuda.init()
            torch.autograd.backward()
            self.assertEqual(1, h.nsnap)
            h._forked()
            self.assertEqual((0, 0, None), (h.progress, h.nsnap, h.writer))

    def test_a_failure_stops_the_hook_not_the_program(self):
        with tempfile.TemporaryDirectory() as d:
            mem, torch, h = fake_hook(d, every=1)
            torch.cuda.memory_snapshot = lambda: [{"address": 1}]
            h.on_torch(torch)
            torch.cuda.init()
            err = io.StringIO()
            with contextlib.redirect_stderr(err):
                torch.autograd.backward()
                torch.autograd.backward()
            self.assertIn("profiling stops here", err.getvalue())
            self.assertEqual(["backward", "backward"], torch.calls)
            self.assertTrue(h.stopped)
            rec = records.read(records.files(d)[0])
        self.assertIn("total_size", rec["notes"][-1])


if __name__ == "__main__":
    unittest.main()
