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


def step(model, ctx=None):
    """One forward and backward on a fixed batch: (loss, grads)."""
    g = torch.Generator().manual_seed(3)
    x = torch.randn(8, 1, 28, 28, generator=g)
    y = torch.randint(0, 10, (8,), generator=g)
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
                    self.assertEqual(0, st.live_bytes)
                    self.assertGreater(st.peak_live_bytes, 0)

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
        # One sample per allocation made and per unpack.
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

    def test_unknown_policy_is_named(self):
        with self.assertRaisesRegex(ValueError, "unknown policy 'vdnn-none'"):
            bt.offload(policy="vdnn-none", device=MemDevice())


if __name__ == "__main__":
    unittest.main()
