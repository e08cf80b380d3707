# SPDX-License-Identifier: GPL-2.0
"""Tests of what a new user of buddy.torch.offload meets first: a context
that gives back what it took, a full device that never kills training,
arguments checked when given, tensors kept for a stated reason, and every
policy working when it is only named."""
import errno
import gc
import json
import os
import re
import tempfile
import threading
import time
import unittest
import warnings

try:
    import torch
except ImportError:
    torch = None

import buddy

if torch is not None:
    import buddy.torch as bt
    from test_torch import MemAllocation, MemDevice, fixed_batch, \
        identical, loss_of, small_cnn, step

from test_buddy import NO_DEVICE, ROOT


def open_fds():
    return len(os.listdir("/proc/self/fd"))


def settle_workers():
    """Let prefetch workers that were told to stop finish (one told by its
    own last handle is not joined by anyone); a worker that never stops
    stays and is counted."""
    deadline = time.monotonic() + 5
    for t in threading.enumerate():
        if t.name == "buddy-prefetch":
            t.join(max(deadline - time.monotonic(), 0))


class FullDevice(MemDevice if torch is not None else object):
    """A MemDevice that holds @cap bytes: beyond, alloc fails with ENOSPC,
    and a single allocation larger than @cap with E2BIG, as libbuddy's
    in-process device does."""

    def __init__(self, cap):
        super().__init__()
        self.cap, self.used = cap, 0

    def alloc(self, size, target="1x", codec="default", label=None):
        if size > self.cap:
            raise buddy.BuddyError(-errno.E2BIG, buddy._lib.OP_ALLOC, "full")
        if self.used + size > self.cap:
            raise buddy.BuddyError(-errno.ENOSPC, buddy._lib.OP_ALLOC,
                                   "full")
        self.used += size
        self.calls.append((size, target, codec))
        a = MemAllocation(self, size)
        dev = self

        def close(orig=a.close):
            if a.buf is not None:
                dev.used -= a.size
            orig()
        a.close = close
        return a


def cache_dir(test):
    d = tempfile.TemporaryDirectory()
    test.addCleanup(d.cleanup)
    old = os.environ.get("BUDDY_CACHE_DIR")
    os.environ["BUDDY_CACHE_DIR"] = d.name

    def restore():
        if old is None:
            os.environ.pop("BUDDY_CACHE_DIR", None)
        else:
            os.environ["BUDDY_CACHE_DIR"] = old
    test.addCleanup(restore)
    return d.name


class Base(unittest.TestCase):
    def setUp(self):
        torch.use_deterministic_algorithms(True)
        self.threads = torch.get_num_threads()
        torch.set_num_threads(1)
        bt._warned.clear()

    def tearDown(self):
        torch.set_num_threads(self.threads)
        torch.use_deterministic_algorithms(False)


@unittest.skipIf(torch is None, "no torch for /usr/bin/python3 (python3-torch)")
class Release(Base):
    @unittest.skipIf(NO_DEVICE, NO_DEVICE)
    def test_with_gives_back_its_worker_and_device(self):
        """1000 steps written the natural way, a new context each step on
        the default device: threads and descriptors stay where they were
        after the first, and the device can then be opened with other
        options (libbuddy refuses while one is open)."""
        torch.manual_seed(1)
        model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(),
                                    torch.nn.Linear(32, 4))
        x, y = torch.randn(8, 16), torch.randint(0, 4, (8,))
        counts = []
        for k in range(1000):
            with bt.offload(policy="cdma"):
                loss = torch.nn.functional.cross_entropy(model(x), y)
            loss.backward()
            if k in (1, 999):
                gc.collect()
                settle_workers()
                counts.append((threading.active_count(), open_fds()))
        self.assertEqual(counts[0], counts[1])
        self.assertEqual(0, len(bt._devices))
        if os.environ.get("BUDDY_DEVICE", "").startswith("inproc:"):
            old = os.environ["BUDDY_DEVICE"]
            os.environ["BUDDY_DEVICE"] = "inproc:device_mb=16,max_ratio=2"
            try:
                buddy.Device().close()
            finally:
                os.environ["BUDDY_DEVICE"] = old

    def test_release_waits_for_the_backward(self):
        """The worker still serves the backward after the with block; it
        goes when autograd drops the last handle."""
        model = small_cnn()
        batch = fixed_batch((8, 1, 28, 28), 10)
        base = step(model, batch=batch)
        dev = MemDevice()
        off = bt.offload("vdnn-all", device=dev, prefetch=2)
        model.zero_grad(set_to_none=True)
        with off:
            loss = torch.nn.functional.cross_entropy(model(batch[0]),
                                                     batch[1])
        worker = off._worker
        self.assertTrue(worker.is_alive())
        loss.backward()
        self.assertIsNone(off._worker)
        worker.join(5)          # joined, unless it dropped the last handle
        self.assertFalse(worker.is_alive())
        self.assertTrue(torch.equal(base[0], loss.detach()))
        self.assertGreater(off.stats.prefetch_hits + off.stats.prefetch_late,
                           0)
        # and the context can be entered again
        self.assertTrue(identical(base, step(model, off, batch)))
        self.assertIsNone(off._worker)


@unittest.skipIf(torch is None, "no torch for /usr/bin/python3 (python3-torch)")
class FullDeviceKeeps(Base):
    def test_a_full_device_keeps_tensors_in_memory(self):
        model = small_cnn()
        batch = fixed_batch((8, 1, 28, 28), 10)
        base = step(model, batch=batch)
        # 100 KB: the 200 KB activations do not fit at all (E2BIG), the
        # smaller ones until it is full (ENOSPC)
        dev = FullDevice(100000)
        off = bt.offload("vdnn-all", device=dev)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            for _ in range(3):
                self.assertTrue(identical(base, step(model, off, batch)))
        st = off.stats
        self.assertGreater(st.kept_full, 0)
        self.assertGreater(st.offloaded, 0)
        self.assertEqual(st.kept_full_bytes, st.kept_reasons["device_full"][1])
        full = [x for x in w if "device is full" in str(x.message)]
        self.assertEqual(1, len(full))
        self.assertEqual(0, dev.live)

    def test_a_full_device_as_destination_keeps_the_host_copy(self):
        """CUDA tensors' destination="buddy" (here CPU tensors on the
        stream path): what does not fit stays in the pinned pool."""
        from buddy.torch_streams import HostStreams
        model = small_cnn()
        batch = fixed_batch((8, 1, 28, 28), 10)
        base = step(model, batch=batch)
        dev = FullDevice(300000)
        off = bt.offload("vdnn-all", device=dev, streams=HostStreams(),
                         destination="buddy", min_bytes=0)
        for _ in range(2):
            self.assertTrue(identical(base, step(model, off, batch)))
        self.assertGreater(off.stats.pinned_fallbacks, 0)
        self.assertGreater(len(dev.calls), 0)
        self.assertEqual(0, dev.live)

    @unittest.skipIf(NO_DEVICE, NO_DEVICE)
    def test_the_in_process_device_full(self):
        if not os.environ.get("BUDDY_DEVICE", "").startswith("inproc:"):
            self.skipTest("needs BUDDY_DEVICE=inproc:...")
        dev = buddy.Device()
        if dev.info()["device_bytes"] > 256 << 20:
            self.skipTest("the device is too large to fill here")
        # one activation larger than the whole device
        n = dev.info()["device_bytes"] * 5 // 4 // 4
        x = torch.randn(n, requires_grad=True)
        off = bt.offload("vdnn-all", device=dev)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with off:
                y = torch.exp(x)
            y.sum().backward()
        self.assertEqual(1, off.stats.kept_full)
        self.assertTrue(torch.equal(torch.exp(x.detach()), x.grad))
        dev.close()


@unittest.skipIf(torch is None, "no torch for /usr/bin/python3 (python3-torch)")
class Arguments(Base):
    def test_target_and_codec_checked_at_construction(self):
        if buddy._lib.lib is None:
            self.skipTest(str(buddy._lib.load_error))
        with self.assertRaisesRegex(ValueError, r"unknown target '3x' "
                                    r"\(known: 1x, 4/3x, 2x, 4x, 16x, auto"):
            bt.offload(policy="cdma", target="3x", device=MemDevice())
        with self.assertRaisesRegex(ValueError, r"unknown codec 'zstd' "
                                    r"\(known: default, bpc, zvc"):
            bt.offload(policy="cdma", codec="zstd", device=MemDevice())
        for kw in ({"budget": -1}, {"prefetch": -2}, {"dpr_bits": 12},
                   {"destination": "disk"}, {"budget_fraction": 0}):
            with self.subTest(**kw), self.assertRaises(ValueError):
                bt.offload(policy="vdnn-dyn", device=MemDevice(), **kw)
        bt.offload(policy="cdma", target="4x", codec="bpc",
                   device=MemDevice())

    def test_device_must_answer_get_info(self):
        if buddy._lib.lib is None:
            self.skipTest(str(buddy._lib.load_error))
        with self.assertRaisesRegex(buddy.BuddyError,
                                    "/dev/null: not a buddy device") as cm:
            buddy.Device("/dev/null")
        self.assertEqual(errno.ENOTTY, cm.exception.errno)

    @unittest.skipIf(NO_DEVICE, NO_DEVICE)
    def test_alloc_size_is_checked(self):
        with buddy.Device() as dev:
            for size in (-5, 0, 2.5, True):
                with self.subTest(size=size):
                    with self.assertRaisesRegex(ValueError,
                                                "allocation size"):
                        dev.alloc(size)

    def test_calibration_errors_name_the_file(self):
        with tempfile.TemporaryDirectory() as d:
            cases = {"notjson.json": "{nope", "list.json": "[1, 2]",
                     "nocodecs.json": json.dumps({"format":
                                                  "buddy-calibration"}),
                     "badcoef.json": json.dumps(
                         {"format": "buddy-calibration", "codecs": [
                             {"name": "zvc", "compress": {"coef": [1]},
                              "decompress": {"coef": [1, 2, 3, 4]},
                              "bytes": {"coef": [1, 2, 3, 4]}}]})}
            for name, text in cases.items():
                path = os.path.join(d, name)
                with open(path, "w") as f:
                    f.write(text)
                with self.subTest(file=name):
                    with self.assertRaisesRegex(ValueError,
                                                re.escape(path)):
                        bt.offload("cswap", device=MemDevice(),
                                   calibration=path)
            missing = os.path.join(d, "missing.json")
            with self.assertRaisesRegex(OSError, re.escape(missing)):
                bt.load_calibration(missing)

    def test_version(self):
        with open(os.path.join(ROOT, "dkms.conf")) as f:
            want = re.search(r'PACKAGE_VERSION="([^"]+)"', f.read()).group(1)
        self.assertEqual(want, buddy.__version__)


@unittest.skipIf(torch is None, "no torch for /usr/bin/python3 (python3-torch)")
class Reasons(Base):
    def test_kept_tensors_are_counted_per_reason_and_warned_once(self):
        torch.manual_seed(2)
        w = torch.randn(64, 64, requires_grad=True)
        x = torch.randn(64, 64)
        off = bt.offload("vdnn-all", device=MemDevice(), min_bytes=1000)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for _ in range(3):
                with off:
                    # mm saves its operands: x.t() is not contiguous
                    y = (x.t() @ w).relu()
                    z = y[:, ::2].exp()          # a strided view, saved
                    s = torch.ones(3, requires_grad=True).exp()   # small
                (z.sum() + s.sum()).backward()
            off._pack(torch.empty(4, device="meta"))
        r = off.stats.kept_reasons
        self.assertEqual(3, r["non_contiguous"][0])
        self.assertEqual(3, r["min_bytes"][0])
        self.assertEqual(1, r["device"][0])
        self.assertEqual(off.stats.kept, sum(v[0] for v in r.values()))
        msgs = [str(c.message) for c in caught]
        self.assertEqual(1, sum("not contiguous" in m for m in msgs))
        self.assertEqual(1, sum("other than the CPU" in m for m in msgs))
        self.assertFalse(any("min_bytes" in m for m in msgs))


@unittest.skipIf(torch is None, "no torch for /usr/bin/python3 (python3-torch)")
class PolicyAlone(Base):
    """offload(policy=NAME) and nothing else: every policy runs, lossless
    ones bit-identical over several steps."""

    def devices(self):
        out = [("mem", MemDevice)]
        if not NO_DEVICE:
            out.append(("default", lambda: None))
        return out

    def test_every_policy_works_alone(self):
        cache_dir(self)
        model = small_cnn()
        batch = fixed_batch((8, 1, 28, 28), 10)
        base = step(model, batch=batch)
        for dname, make in self.devices():
            for policy in bt.POLICIES:
                with self.subTest(device=dname, policy=policy):
                    dev = make()
                    off = bt.offload(policy) if dev is None else \
                        bt.offload(policy, device=dev)
                    for k in range(3):
                        res = step(model, off, batch)
                        if policy in bt.LOSSLESS:
                            self.assertTrue(identical(base, res), k)
                        else:
                            self.assertLess(abs(float(res[0] - base[0])),
                                            1e-2 * abs(float(base[0])))
                    if policy != "none":
                        self.assertGreater(off.stats.offloaded, 0)

    def test_the_plan_is_learnt_in_the_first_step(self):
        model = small_cnn()
        batch = fixed_batch((8, 1, 28, 28), 10)
        want = bt.probe(lambda: loss_of(model, batch))
        off = bt.offload("gist", device=MemDevice())
        step(model, off, batch)
        self.assertNotIn("binarize", off.stats.by_codec)   # first step
        self.assertEqual(want.shapes, off.plan.shapes)
        self.assertEqual([want.binarizable(i) for i in range(len(want))],
                         [off.plan.binarizable(i) for i in range(len(want))])
        step(model, off, batch)
        self.assertEqual(2, off.stats.by_codec["binarize"][0])
        conv = bt.offload("vdnn-conv", device=MemDevice())
        step(model, conv, batch)
        first = conv.stats.offloaded
        step(model, conv, batch)
        self.assertEqual(2, conv.stats.offloaded - first)

    def test_learning_touches_no_state(self):
        """A model with batch norm: the first step of a plan-learning policy
        moves the running statistics exactly as a plain step does, and a
        top node nobody's output saved leaves its inputs unknown, never
        binarized."""
        def bn_model():
            torch.manual_seed(5)
            return torch.nn.Sequential(
                torch.nn.Conv2d(1, 4, 3), torch.nn.BatchNorm2d(4),
                torch.nn.ReLU(), torch.nn.Flatten(),
                torch.nn.Linear(4 * 26 * 26, 10))
        batch = fixed_batch((4, 1, 28, 28), 10)
        a, b = bn_model(), bn_model()
        runs = [step(a, batch=batch) for _ in range(3)]
        off = bt.offload("gist", device=MemDevice())
        ours = [step(b, off, batch) for _ in range(3)]
        for x, y in zip(runs, ours):
            self.assertTrue(identical(x, y))
        self.assertTrue(torch.equal(a[1].running_mean, b[1].running_mean))
        self.assertTrue(torch.equal(a[1].running_var, b[1].running_var))
        # relu(x)**2's input is read by pow's backward, which no saved
        # tensor leads to: not binarized
        x = torch.randn(100, requires_grad=True)
        off = bt.offload("gist", device=MemDevice())
        for _ in range(2):
            with off:
                y = x.relu().pow(2).sum()
            y.backward()
        self.assertNotIn("binarize", off.stats.by_codec)

    def test_vdnn_dyn_default_budget(self):
        model = small_cnn()
        batch = fixed_batch((8, 1, 28, 28), 10)
        off = bt.offload("vdnn-dyn", device=MemDevice())
        step(model, off, batch)
        self.assertEqual(0, off.stats.kept)            # the first step
        saved = off.plan.saved_bytes()
        self.assertEqual(saved // 2, off.budget)
        off.stats = bt.OffloadStats()
        step(model, off, batch)
        self.assertLessEqual(off.stats.kept_bytes, saved // 2)
        self.assertGreater(off.stats.kept_bytes, 0)
        self.assertGreater(off.stats.offloaded, 0)

    def test_cswap_calibrates_once_per_machine(self):
        d = cache_dir(self)
        model = small_cnn()
        batch = fixed_batch((8, 1, 28, 28), 10)
        off = bt.offload("cswap", device=MemDevice())
        step(model, off, batch)
        files = os.listdir(d)
        self.assertEqual(1, len(files))
        self.assertTrue(files[0].startswith("cswap-cpu-"))
        model_doc = bt.load_calibration(os.path.join(d, files[0]))
        self.assertEqual(set(bt.CSWAP_CODECS), set(model_doc))
        mtime = os.stat(os.path.join(d, files[0])).st_mtime_ns
        calls = []
        old = bt.cswap_model.calibrate_cpu
        bt.cswap_model.calibrate_cpu = lambda *a: calls.append(a)
        try:
            off = bt.offload("cswap", device=MemDevice())
            step(model, off, batch)
        finally:
            bt.cswap_model.calibrate_cpu = old
        self.assertEqual([], calls)
        self.assertEqual(mtime, os.stat(os.path.join(d, files[0])).st_mtime_ns)
        self.assertEqual(model_doc, off.calib)


if __name__ == "__main__":
    unittest.main()
