# SPDX-License-Identifier: GPL-2.0
"""Tests of buddy.torch.offload: for a small seeded CNN, loss and every
gradient are bit-identical to the baseline under each lossless policy; pack
skips parameters, deduplicates, copies synchronously; allocations are freed
after backward.

Each test runs on the real device when there is one (/dev/buddy or
$BUDDY_DEVICE); the hook logic also runs on MemDevice, an in-memory double
of buddy.Device written here, so that it is tested without a device.
"""
import ctypes
import unittest

try:
    import torch
except ImportError:
    torch = None
try:
    import torchvision as tv
except ImportError:
    tv = None

import buddy

if torch is not None:
    import buddy.torch as bt

from test_buddy import NO_DEVICE


class MemAllocation:
    """Test double of buddy.Allocation: a bytearray."""

    def __init__(self, dev, size):
        self.dev, self.size, self.buf = dev, size, bytearray(size)
        dev.live += 1

    def write(self, obj, offset=0):
        ptr, n, keep = buddy.buffer_pointer(obj, writable=False)
        self.buf[offset:offset + n] = ctypes.string_at(ptr, n)
        return n

    def read_into(self, obj, offset=0):
        ptr, n, keep = buddy.buffer_pointer(obj, writable=True)
        ctypes.memmove(ptr, bytes(self.buf[offset:offset + n]), n)
        return n

    def close(self):
        if self.buf is not None:
            self.buf = None
            self.dev.live -= 1


class MemDevice:
    """Test double of buddy.Device: counts live allocations."""

    def __init__(self):
        self.live = 0
        self.calls = []

    def alloc(self, size, target="1x", codec="default", label=None):
        self.calls.append((size, target, codec))
        return MemAllocation(self, size)

    def close(self):
        pass


def small_cnn():
    torch.manual_seed(14)
    return torch.nn.Sequential(
        torch.nn.Conv2d(1, 8, 3, padding=1), torch.nn.ReLU(),
        torch.nn.MaxPool2d(2),
        torch.nn.Conv2d(8, 16, 3, padding=1), torch.nn.ReLU(),
        torch.nn.MaxPool2d(2),
        torch.nn.Flatten(), torch.nn.Linear(16 * 7 * 7, 10))


def resnet18():
    torch.manual_seed(14)
    return tv.models.resnet18(num_classes=10)


def fixed_batch(shape, ncls):
    g = torch.Generator().manual_seed(3)
    return (torch.randn(*shape, generator=g),
            torch.randint(0, ncls, (shape[0],), generator=g))


def loss_of(model, batch):
    return torch.nn.functional.cross_entropy(model(batch[0]), batch[1])


def fake_calibration(zvc_cheap):
    """A cswap model in which ZVC costs nothing (or everything) and the
    other codecs cost a second."""
    dear = {"compress": (1.0, 0, 0, 0), "decompress": (1.0, 0, 0, 0),
            "bytes": (0, 1.0, 0, 0)}
    zvc = {"compress": (0, 0, 0, 0), "decompress": (0, 0, 0, 0),
           "bytes": (0, 0.1, 0, 0)} if zvc_cheap else dear
    return {"zvc": zvc, "rle": dear, "csr": dear, "lz4": dear}


def policy_args(policy, plan):
    return {"vdnn-dyn": {"plan": plan, "budget": 50000},
            "cswap": {"calibration": fake_calibration(True)}}.get(
                policy, {"plan": plan})


def step(model, ctx=None, batch=None):
    """One forward and backward on a fixed batch: (loss, grads)."""
    if batch is None:
        batch = fixed_batch((8, 1, 28, 28), 10)
    x, y = batch
    model.zero_grad(set_to_none=True)
    if ctx is None:
        loss = torch.nn.functional.cross_entropy(model(x), y)
    else:
        with ctx:
            loss = torch.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    return loss.detach().clone(), [p.grad.clone() for p in model.parameters()]


def identical(a, b):
    la, ga = a
    lb, gb = b
    return torch.equal(la, lb) and len(ga) == len(gb) and \
        all(torch.equal(x, y) for x, y in zip(ga, gb))


@unittest.skipIf(torch is None, "no torch for /usr/bin/python3 (python3-torch)")
class Offload(unittest.TestCase):
    def setUp(self):
        torch.use_deterministic_algorithms(True)
        self.threads = torch.get_num_threads()
        torch.set_num_threads(1)

    def tearDown(self):
        torch.set_num_threads(self.threads)
        torch.use_deterministic_algorithms(False)

    def devices(self):
        out = [("mem", MemDevice())]
        if not NO_DEVICE:
            out.append(("buddy", buddy.Device()))
        return out

    def test_lossless_policies_are_bit_identical(self):
        model = small_cnn()
        base = step(model)
        self.assertTrue(identical(base, step(model)),
                        "the baseline does not reproduce itself")
        for name, dev in self.devices():
            for policy in ("vdnn-all", "cdma"):
                with self.subTest(device=name, policy=policy):
                    off = bt.offload(policy=policy, device=dev)
                    res = step(model, off)
                    self.assertTrue(identical(base, res))
                    st = off.stats
                    self.assertGreater(st.offloaded, 0)
                    # Every handle pack returned is unpacked once.
                    self.assertEqual(st.offloaded + st.duplicates, st.unpacks)
                    # Freed after backward.
                    self.assertEqual(0, st.device_live_bytes)
                    self.assertGreater(st.peak_device_bytes, 0)

    def test_pack_skips_parameters_and_deduplicates(self):
        dev = MemDevice()
        model = small_cnn()
        off = bt.offload(policy="cdma", device=dev)
        step(model, off)
        st = off.stats
        # Conv weights twice, the Linear's transposed weight once.
        self.assertEqual(3, st.params)
        # Each ReLU output is saved by the ReLU and by the max-pool, the
        # log-softmax output by log_softmax and by nll_loss.
        self.assertEqual(3, st.duplicates)
        self.assertEqual(st.packs, st.params + st.duplicates + st.kept +
                         st.offloaded)
        self.assertEqual(0, st.kept)
        self.assertTrue(all(c[1:] == ("2x", "zvc") for c in dev.calls))
        self.assertEqual(st.offloaded_bytes, sum(c[0] for c in dev.calls))
        self.assertEqual(0, dev.live)
        # One sample per allocation made and per unpack (nothing kept).
        self.assertEqual(st.offloaded + st.unpacks, len(st.timeline))

    def test_vdnn_all_stores_uncompressed(self):
        dev = MemDevice()
        off = bt.offload(policy="vdnn-all", device=dev)
        step(small_cnn(), off)
        self.assertTrue(dev.calls)
        self.assertTrue(all(c[1:] == ("1x", "none") for c in dev.calls))

    def test_pack_copies_synchronously(self):
        """exp saves its result; modifying it in place after the forward
        must not change the gradient (hooks bypass autograd's check)."""
        for name, dev in self.devices():
            with self.subTest(device=name):
                x = torch.linspace(-2, 2, 1000, requires_grad=True)
                with bt.offload(policy="vdnn-all", device=dev):
                    y = torch.exp(x)
                want = y.detach().clone()
                with torch.no_grad():
                    y.add_(1.0)
                y.backward(torch.ones_like(y))
                self.assertTrue(torch.equal(want, x.grad))

    def test_min_bytes_keeps_small_tensors(self):
        dev = MemDevice()
        off = bt.offload(policy="vdnn-all", device=dev, min_bytes=1 << 30)
        res = step(small_cnn(), off)
        self.assertEqual(0, off.stats.offloaded)
        self.assertGreater(off.stats.kept, 0)
        self.assertTrue(identical(step(small_cnn()), res))

    def test_every_lossless_policy_is_bit_identical(self):
        """CNN and a small ResNet-18, two iterations each, every policy of
        LOSSLESS on every device; the lossy gist-dpr is not identical."""
        models = [("cnn", small_cnn, (8, 1, 28, 28), 10)]
        if tv is not None:
            models.append(("resnet18", resnet18, (2, 3, 32, 32), 10))
        for mname, make, shape, ncls in models:
            model = make()
            batch = fixed_batch(shape, ncls)
            base = [step(model, batch=batch) for _ in range(2)]
            self.assertTrue(identical(base[0], base[1]),
                            f"{mname}: the baseline does not reproduce")
            plan = bt.probe(lambda: loss_of(model, batch))
            for name, dev in self.devices():
                for policy in bt.POLICIES:
                    with self.subTest(model=mname, device=name,
                                      policy=policy):
                        off = bt.offload(policy, device=dev,
                                         **policy_args(policy, plan))
                        res = step(model, off, batch)
                        off.close()
                        st = off.stats
                        if policy in bt.LOSSLESS:
                            self.assertTrue(identical(base[0], res))
                        else:
                            self.assertFalse(identical(base[0], res))
                            self.assertLess(abs(float(res[0] - base[0][0])),
                                            1e-2 * abs(float(base[0][0])))
                        if policy != "none":
                            self.assertGreater(st.offloaded, 0)
                        else:
                            self.assertEqual(0, st.offloaded)
                        self.assertEqual(0, st.device_live_bytes)
                        self.assertEqual(st.offloaded_bytes,
                                         sum(r[1] for r in
                                             st.by_codec.values()))

    def test_vdnn_conv_offloads_only_convolution_inputs(self):
        dev = MemDevice()
        model = small_cnn()
        batch = fixed_batch((8, 1, 28, 28), 10)
        plan = bt.probe(lambda: loss_of(model, batch))
        off = bt.offload("vdnn-conv", device=dev, plan=plan)
        step(model, off, batch)
        # The image and the first max-pool's output: two conv inputs.
        self.assertEqual(2, off.stats.offloaded)
        self.assertEqual({"Convolution"}, set(off.stats.by_layer))
        self.assertEqual((8 * 1 * 28 * 28 + 8 * 8 * 14 * 14) * 4,
                         off.stats.offloaded_bytes)

    def test_vdnn_dyn_keeps_what_fits_the_budget(self):
        model = small_cnn()
        batch = fixed_batch((8, 1, 28, 28), 10)
        plan = bt.probe(lambda: loss_of(model, batch))
        for budget in (0, 100000, 1 << 30):
            with self.subTest(budget=budget):
                off = bt.offload("vdnn-dyn", device=MemDevice(), plan=plan,
                                 budget=budget)
                step(model, off, batch)
                st = off.stats
                self.assertLessEqual(st.kept_bytes, budget)
                if budget == 1 << 30:
                    self.assertEqual(0, st.offloaded)
                else:
                    self.assertGreater(st.offloaded, 0)
                # The earliest saved go first: the image is offloaded.
                if budget < 1 << 30:
                    self.assertIn("Convolution", st.by_layer)

    def test_gist_binarizes_relu_outputs_read_by_maxpool(self):
        model = small_cnn()
        batch = fixed_batch((8, 1, 28, 28), 10)
        plan = bt.probe(lambda: loss_of(model, batch))
        off = bt.offload("gist", device=MemDevice(), plan=plan)
        step(model, off, batch)
        rows = off.stats.by_codec
        n1, n2 = 8 * 8 * 28 * 28, 8 * 16 * 14 * 14
        self.assertEqual([2, 4 * (n1 + n2), (n1 + n2) // 8],
                         rows["binarize"])
        self.assertNotIn("dpr16", rows)

    def test_cswap_follows_its_model(self):
        model = small_cnn()
        batch = fixed_batch((8, 1, 28, 28), 10)
        for cheap, want in ((True, {"zvc"}), (False, {"none"})):
            with self.subTest(zvc_cheap=cheap):
                off = bt.offload("cswap", device=MemDevice(),
                                 calibration=fake_calibration(cheap))
                step(model, off, batch)
                self.assertEqual(want, set(off.stats.by_codec) - {"none"}
                                 if cheap else set(off.stats.by_codec))

    def test_cswap_model_is_a_rate_per_byte(self):
        """A fit whose intercepts are negative makes a codec free and its
        output empty for small tensors: cswap evaluates the fit at the
        largest size it saw and scales it, clamping sparsity to the
        range seen, so it does not choose that codec there."""
        lin = {"compress": (-1e-3, 2e-9, 0, 0),
               "decompress": (-1e-3, 2e-9, 0, 0),
               "bytes": (-1e6, 1.0, 0.5e6, 0),
               "domain": (16 << 20, 0.0, 0.5)}
        m = dict(fake_calibration(False), zvc=lin)
        off = bt.offload("cswap", device=MemDevice(), calibration=m)
        top = 16 << 20

        def cost(size, sp):
            t = 2 * max(-1e-3 + 2e-9 * top, 0) * size / top
            b = max(-1e6 + top + 0.5e6 * min(sp, 0.5), 0) * size / top
            return t + 2 * b / off.link_bps
        for size in (64 << 10, 4 << 20, 64 << 20):
            for sp in (0.0, 0.3, 0.9):
                with self.subTest(size=size, sparsity=sp):
                    self.assertAlmostEqual(cost(size, sp),
                                           off._cswap_cost("zvc", size, sp))
        self.assertGreater(off._cswap_cost("zvc", 64 << 10, 0.5),
                           off._cswap_cost("none", 64 << 10, 0.5))
        # without a domain (a model file without samples) it is as fitted
        del lin["domain"]
        self.assertLess(off._cswap_cost("zvc", 64 << 10, 0.0),
                        off._cswap_cost("none", 64 << 10, 0.0))

    def test_prefetch_runs_ahead_in_reverse_pack_order(self):
        model = small_cnn()
        batch = fixed_batch((8, 1, 28, 28), 10)
        off = bt.offload("vdnn-all", device=MemDevice(), prefetch=2)
        step(model, off, batch)
        off.close()
        st = off.stats
        fetched = st.prefetch_hits + st.prefetch_late + st.prefetch_misses \
            + st.rereads
        # Every unpack either fetched or shared a live earlier fetch; a
        # handle is fetched once at least, again when a duplicate's first
        # tensor was freed before its second unpack.
        self.assertEqual(st.unpacks, fetched + st.unpacks_shared)
        self.assertEqual(st.offloaded, fetched - st.rereads)
        self.assertGreater(st.prefetch_hits + st.prefetch_late, 0)
        off = bt.offload("vdnn-all", device=MemDevice(), prefetch=0)
        step(model, off, batch)
        self.assertEqual(0, off.stats.prefetch_hits + off.stats.prefetch_late)

    @unittest.skipIf(NO_DEVICE, f"no device: {NO_DEVICE}")
    def test_prefetch_through_io_uring(self):
        """The io_uring worker (forced here; by default only on
        /dev/buddy) reads every prefetch on libbuddy's ring, gradients
        still bit-identical, hits and late ones all its reads."""
        model = small_cnn()
        batch = fixed_batch((8, 1, 28, 28), 10)
        base = step(model, None, batch)
        dev = buddy.Device()
        plan = bt.probe(lambda: loss_of(model, batch))
        for policy in ("vdnn-all", "gist", "cdma-rle"):
            with self.subTest(policy=policy):
                figs = []
                for uring in (False, True):
                    off = bt.offload(policy, device=dev, prefetch=3,
                                     uring=uring, plan=plan)
                    for _ in range(2):
                        self.assertTrue(identical(base,
                                                  step(model, off, batch)))
                    off.close()
                    st = off.stats
                    figs.append((st.unpacked_bytes, st.rereads,
                                 st.unpacks_shared))
                # The ring's worker holds no tensor longer than the
                # thread: the same reads, rereads and shared unpacks (the
                # guest compares them between /dev/buddy and inproc).
                self.assertEqual(figs[0], figs[1])
                self.assertGreater(st.prefetch_uring, 0)
                self.assertEqual(st.prefetch_uring,
                                 st.prefetch_hits + st.prefetch_late)
                self.assertEqual(st.offloaded, st.prefetch_uring +
                                 st.prefetch_misses)
        # The default on the in-process device is the thread.
        if dev.in_process:
            off = bt.offload("vdnn-all", device=dev, prefetch=2)
            step(model, off, batch)
            off.close()
            self.assertEqual(0, off.stats.prefetch_uring)
            self.assertGreater(off.stats.prefetch_hits +
                               off.stats.prefetch_late, 0)

    def test_unknown_policy_is_named(self):
        with self.assertRaisesRegex(ValueError, "unknown policy 'vdnn-none'"):
            bt.offload(policy="vdnn-none", device=MemDevice())


if __name__ == "__main__":
    unittest.main()
